"""Specular multipath of the acoustic device models (issue 16 item 1; sensors/acoustic/multipath.py), against
numbers computed by hand: the ghost of a small sphere mirrored in the flat pressure-release surface and in a tank
wall (range, bearing, level), the second seafloor echo of a single-beam and a multibeam, byte-identical output
with 0 bounces, one cast per bounce, and the config errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import trimesh

from conftest import make_scene, quad
from multipath_golden import GOLDEN, render_hashes
from oceansim_py.errors import ConfigError
from oceansim_py.scene import Material, Node, Scene, TriangleMesh
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.msis import MsisConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

#: Sea water of the impedance formula (scene/materials.py).
RHO_W, C_W = 1026.0, 1500.0
ALPHA = 0.1  # dB/m, one way
PITCH_DOWN_90 = [0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)]


def sphere(center, radius: float) -> TriangleMesh:
    ico = trimesh.creation.icosphere(subdivisions=4, radius=radius)
    return TriangleMesh(np.asarray(ico.vertices) + np.asarray(center, dtype=np.float64), np.asarray(ico.faces))


def fls(bounces: int, **kw) -> ImagingSonarConfig:
    """A noise-free, gain-free device imaging sonar: the clean image is the sum of the rays' echo intensities."""
    values = dict(model="device", absorption=ALPHA, noise_level=None, volume_scattering=None, tvg="none",
                  normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0, multipath_bounces=bounces)
    values.update(kw)
    return ImagingSonarConfig(**values)


def window(profile: np.ndarray, ranges: np.ndarray, lo: float, hi: float) -> float:
    return float(profile[(ranges >= lo) & (ranges < hi)].sum())


def onset(profile: np.ndarray, ranges: np.ndarray, lo: float, hi: float) -> float:
    """Lower edge of the first bin in [lo, hi) holding more than 1 % of the window's largest bin (a sphere's or a
    floor's echo is strongest at its leading edge)."""
    inside = (ranges >= lo) & (ranges < hi)
    idx = np.nonzero((profile > 0.01 * profile[inside].max()) & inside)[0]
    step = ranges[1] - ranges[0]
    return float(ranges[idx[0]] - step / 2)


def test_ghost_in_the_flat_surface_at_the_image_range_and_level():
    # Sensor at depth s = 1.5 m looking along +x; a sphere (radius a = 0.2 m) at depth d = 1.5 m, R = 8 m ahead.
    # The surface z = 0 (no wave geometry: the analytic plane, R = -1) mirrors the sphere to height +d: the ghost's
    # one-way path to the image centre is sqrt(R^2 + (d + s)^2) = sqrt(64 + 9) = 8.5440 m, its nearest point 8.3440 m
    # (direct: 7.8000 m). A sphere's echo is SL mu int cos(psi) dOmega / D^2 = SL mu (2/3) pi a^2 / D^4 for centre
    # distance D, so ghost / direct = R^4 (D_d / D_g)^4 10^(-2 alpha (D_g - D_d) / 10)
    # = 1 x (8 / 8.5440)^4 x 10^(-0.02 x 0.5440) = -1.1428 - 0.1088 = -1.2517 dB.
    s, d, R, a = 1.5, 1.5, 8.0, 0.2
    scene = make_scene(("ball", sphere([R, 0.0, -d], a), 0.5))
    cfg = dict(horizontal_fov=6.0, vertical_fov=50.0, n_beams=6, rays_per_beam=20, elevation_rays=1000,
               min_range=5.0, max_range=12.0, range_bins=700)
    pose = np.array([0.0, 0.0, -s, 0.0, 0.0, 0.0, 1.0])
    ranges = 5.0 + (np.arange(700) + 0.5) * 0.01
    direct = ImagingSonar(fls(0, **cfg), device="cpu").render(scene, pose).numpy()["clean_intensity"][0].sum(1)
    both = ImagingSonar(fls(1, multipath_mixed_paths=False, **cfg), device="cpu").render(scene, pose).numpy()["clean_intensity"][0].sum(1)
    d_g = math.hypot(R, d + s)
    assert d_g == pytest.approx(8.5440037, abs=1e-6)
    assert window(direct, ranges, 8.2, 9.0) == 0.0  # no ghost without bounces
    assert onset(both, ranges, 7.0, 8.2) == pytest.approx(R - a, abs=0.011)
    assert onset(both, ranges, 8.2, 9.0) == pytest.approx(d_g - a, abs=0.011)
    # the direct echo is unchanged by the bounce (within float rounding of the two kernels)
    assert window(both, ranges, 7.0, 8.2) == pytest.approx(window(direct, ranges, 7.0, 8.2), rel=1e-5)
    ratio_db = 10 * math.log10(window(both, ranges, 8.2, 9.0) / window(both, ranges, 7.0, 8.2))
    assert ratio_db == pytest.approx(-1.2517, abs=0.5)


def test_ghost_in_a_tank_wall_at_the_mirrored_position():
    # A concrete wall (rho 2400 kg/m^3, c 3700 m/s) facing -x at x = 8 m; a sphere (a = 0.2 m) at (6, 1, 0), the
    # sensor at the origin looking along +x. The wall mirrors the sphere to (10, 1, 0): bearing -atan(1 / 10)
    # = -5.711 deg (port: negative), centre distance sqrt(101) = 10.0499 m (direct: sqrt(37) = 6.0828 m at
    # -9.462 deg). The path meets the wall at incidence cos t1 = 10 / sqrt(101) = 0.99504; Snell:
    # sin t2 = (3700 / 1500) sin t1 = 2.46667 x 0.09950 = 0.24544, cos t2 = 0.96941; Z2 / Z1 = 2400 x 3700 /
    # (1026 x 1500) = 5.76998; R = (5.76998 x 0.99504 - 0.96941) / (5.76998 x 0.99504 + 0.96941) = 0.71109.
    # ghost / direct = R^4 (6.0828 / 10.0499)^4 10^(-0.2 (10.0499 - 6.0828) / 10) = -5.9231 - 8.7224 - 0.7934
    # = -15.439 dB.
    nodes = [Node("/World")]
    concrete = Material.from_properties("concrete", (0.4, 0.4, 0.4), density=2400.0, sound_speed=3700.0)
    plain = Material.from_properties("ball", (0.5, 0.5, 0.5), reflectivity=0.5)
    nodes.append(Node("/World/wall", mesh=quad([8.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), material=concrete,
                      label="wall", parent=nodes[0]))
    nodes.append(Node("/World/ball", mesh=sphere([6.0, 1.0, 0.0], 0.2), material=plain, label="ball",
                      parent=nodes[0]))
    scene = Scene(nodes, device="cpu")
    scene.metadata["surface_z"] = 100.0  # the flat surface far above: only the wall mirrors
    cfg = fls(1, horizontal_fov=24.0, vertical_fov=6.0, n_beams=48, rays_per_beam=5, elevation_rays=60,
              min_range=4.0, max_range=12.0, range_bins=800, multipath_mixed_paths=False)
    out = ImagingSonar(cfg, device="cpu").render(scene, np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
    clean = out["clean_intensity"][0].astype(np.float64)
    ranges = 4.0 + (np.arange(800) + 0.5) * 0.01
    bearings = -12.0 + (np.arange(48) + 0.5) * 0.5  # beam centres (deg), +starboard
    near = (ranges >= 5.5) & (ranges < 6.5)
    far = (ranges >= 9.5) & (ranges < 10.5)
    b_direct, b_ghost = -math.degrees(math.atan2(1, 6)), -math.degrees(math.atan2(1, 10))
    # the wall itself lies at 8 .. 8 / cos(12 deg) = 8.18 m; between 9.5 and 10.5 m there is the ghost, and, at the
    # fan's edge, the wall seen via grazing reflections off the ball's limb (beyond rubber's critical angle)
    assert bearings[clean[near].sum(0).argmax()] == pytest.approx(b_direct, abs=0.5)
    assert bearings[clean[far].sum(0).argmax()] == pytest.approx(b_ghost, abs=0.5)
    direct = clean[:, np.abs(bearings - b_direct) < 2.0].sum(1)
    ghost = clean[:, np.abs(bearings - b_ghost) < 2.0].sum(1)
    assert onset(direct, ranges, 5.5, 6.5) == pytest.approx(math.sqrt(37) - 0.2, abs=0.011)
    assert onset(ghost, ranges, 9.5, 10.5) == pytest.approx(math.sqrt(101) - 0.2, abs=0.011)
    z = 2400 * 3700 / (RHO_W * C_W)
    c1 = 10 / math.sqrt(101)
    c2 = math.sqrt(1 - (3700 / 1500) ** 2 * (1 - c1 * c1))
    r = (z * c1 - c2) / (z * c1 + c2)
    assert r == pytest.approx(0.71109, abs=1e-4)
    hand = 40 * math.log10(r) + 40 * math.log10(math.sqrt(37) / math.sqrt(101)) - 2 * ALPHA * (
        math.sqrt(101) - math.sqrt(37))
    assert hand == pytest.approx(-15.439, abs=0.01)
    ratio_db = 10 * math.log10(window(ghost, ranges, 9.5, 10.5) / window(direct, ranges, 5.5, 6.5))
    assert ratio_db == pytest.approx(hand, abs=0.5)


def seafloor(material: Material, depth: float) -> Scene:
    root = Node("/World")
    floor = Node("/World/floor", mesh=quad([0.0, 0.0, -depth], [0.0, 0.0, 1.0], 200.0), material=material,
                 label="floor", parent=root)
    return Scene([root, floor], device="cpu")


SAND = Material.from_properties("sand", (0.45, 0.4, 0.3), density=1990.0, sound_speed=1750.0)


def test_second_seafloor_echo_of_a_single_beam():
    # Single-beam pointing straight down at depth s = 2 m, altitude A = 3 m over sand (rho 1990, c 1750). Two
    # bounces: down A, floor, up A + s to the surface, down A + s to the floor again: the echo comes back the same
    # way, at the one-way path L = A + 2 (A + s) = 13 m. (Bounce 1 ends on the surface, which returns nothing
    # without surface reverberation.) Near normal incidence R_floor = (Z2 - Z1) / (Z2 + Z1),
    # Z2 / Z1 = 1990 x 1750 / (1026 x 1500) = 2.26283, R = 0.38704; the surface R = -1. A narrow beam on a flat
    # floor returns SL mu w / r^2 summed over its rays (r the distance to the floor's image), so
    # second / first = R^4 (A / L)^2 10^(-2 alpha (L - A) / 10) = -16.4900 - 12.7364 - 2.0 = -31.226 dB.
    A, s = 3.0, 2.0
    scene = seafloor(SAND, s + A)
    cfg = SinglebeamSonarConfig(model="device", opening_angle=4.0, cone_rings=8, rays_per_ring=32, min_range=1.0,
                                max_range=20.0, range_bins=1900, absorption=ALPHA, noise_level=None,
                                volume_scattering=None, tvg="none", multipath_bounces=2, multipath_mixed_paths=False)
    out = SinglebeamSonar(cfg, device="cpu").render(scene, np.array([0, 0, -s, *PITCH_DOWN_90])).numpy()
    profile = out["clean_intensity"].reshape(-1).astype(np.float64)
    ranges = 1.0 + (np.arange(1900) + 0.5) * 0.01
    L = A + 2 * (A + s)
    assert onset(profile, ranges, 2.0, 4.0) == pytest.approx(A, abs=0.011)
    assert onset(profile, ranges, 12.0, 14.0) == pytest.approx(L, abs=0.011)
    assert window(profile, ranges, 4.0, 12.0) == 0.0  # nothing between: the surface bounce gives no echo
    z = 1990 * 1750 / (RHO_W * C_W)
    r = (z - 1) / (z + 1)
    hand = 40 * math.log10(r) + 20 * math.log10(A / L) - 2 * ALPHA * (L - A)
    assert hand == pytest.approx(-31.226, abs=0.01)
    ratio = 10 * math.log10(window(profile, ranges, 12.0, 14.0) / window(profile, ranges, 2.0, 4.0))
    assert ratio == pytest.approx(hand, abs=0.5)


def test_second_seafloor_echo_of_the_fan_peer_model():
    # The single-beam's peer model (spreading on: s = mu cos(psi) w 10^(-2 alpha r / 10) / r^2, the device law in
    # its own units) with two bounces, as the device test above: the same hand ratio -31.226 dB at L = 13 m. Its
    # first return stays the direct one (3 m).
    A, s = 3.0, 2.0
    scene = seafloor(SAND, s + A)
    cfg = SinglebeamSonarConfig(model="peer", opening_angle=4.0, cone_rings=8, rays_per_ring=32, min_range=1.0,
                                max_range=20.0, range_bins=1900, absorption=ALPHA, spreading=True, multipath_bounces=2)
    out = SinglebeamSonar(cfg, device="cpu").render(scene, np.array([0, 0, -s, *PITCH_DOWN_90])).numpy()
    profile = out["clean_intensity"].reshape(-1).astype(np.float64)
    ranges = 1.0 + (np.arange(1900) + 0.5) * 0.01
    assert onset(profile, ranges, 12.0, 14.0) == pytest.approx(13.0, abs=0.011)
    ratio = 10 * math.log10(window(profile, ranges, 12.0, 14.0) / window(profile, ranges, 2.0, 4.0))
    assert ratio == pytest.approx(-31.226, abs=0.5)
    assert float(out["first_return_range"][0]) == pytest.approx(A, abs=1e-3)


def test_second_seafloor_line_of_a_multibeam():
    # Multibeam (device model) pointing down at depth s = 2 m over sand at altitude A = 3 m: beam j at angle theta_j
    # from nadir sees the floor at A / cos(theta) and its second echo (floor, surface, floor, same way back) at
    # (A + 2 (A + s)) / cos(theta) = 13 / cos(theta) (the unfolded path to the floor's image 13 m below).
    A, s = 3.0, 2.0
    scene = seafloor(SAND, s + A)
    cfg = MultibeamSonarConfig.preset("blueview_p900", max_range=20.0, n_beams=64, noise_level=None,
                                      volume_scattering=None, tvg="none", absorption_model="fixed",
                                      absorption=ALPHA, multipath_bounces=2, multipath_mixed_paths=False)
    mb = MultibeamSonar(cfg, device="cpu")
    out = mb.render(scene, np.array([0, 0, -s, *PITCH_DOWN_90])).numpy()
    clean = out["clean_intensity"][0].astype(np.float64)
    ranges, bearings = out["ranges"], out["bearings"]
    L = A + 2 * (A + s)
    step = float(ranges[1] - ranges[0])
    resolution = 1500.0 / (2.0 * cfg.bandwidth)
    spacing = float(bearings[1] - bearings[0])
    for j in (len(bearings) // 2, len(bearings) // 4):
        theta = abs(float(bearings[j]))
        first = clean[(ranges > A - 1) & (ranges < A / math.cos(theta) + 1), j]
        second_window = (ranges > L - 1) & (ranges < L / math.cos(theta) + 1)
        second = clean[second_window, j]
        assert second.max() > 0
        # the second line's leading edge (half its peak) at 13 / cos(theta'), theta' within one beam spacing of the
        # beam's centre (the beam pattern mixes the neighbours in), within a range resolution and a bin
        edge = ranges[second_window][np.argmax(second > 0.5 * second.max())]
        tol = resolution + 2 * step
        assert L / math.cos(max(theta - spacing, 0.0)) - tol <= edge <= L / math.cos(theta) + tol
        assert second.max() < first.max()
    assert clean[(ranges > A / math.cos(0.8) + 1) & (ranges < L - 1)].max() < 1e-6 * clean.max()


def test_bounces_zero_is_byte_identical_to_the_code_before_multipath():
    # Every acoustic preset (device and peer) on the tank, both ray-cast backends, hashed before multipath existed
    # (tests/multipath_golden.py); the default config and an explicit multipath_bounces = 0 must give those bytes.
    golden = json.loads(GOLDEN.read_text())["hashes"]
    assert render_hashes("embree") == golden["embree"]
    assert render_hashes("warp", multipath_bounces=0, surface_reverberation=False) == golden["warp"]


def test_cast_calls_scale_with_bounces(monkeypatch):
    scene = make_scene(("wall", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    calls: list[int] = []
    cast = scene.raycast_into

    def counting(origins, directions, max_range, out, threads=None, backend=None):
        calls.append(int(origins.shape[0]))
        return cast(origins, directions, max_range, out, threads, backend)

    monkeypatch.setattr(scene, "raycast_into", counting)
    small = dict(horizontal_fov=20.0, n_beams=8, rays_per_beam=2, elevation_rays=8, min_range=0.5, max_range=10.0,
                 range_bins=50)
    for bounces in range(0, 5):
        calls.clear()
        ImagingSonar(fls(bounces, multipath_mixed_paths=False, **small), device="cpu").render(
            scene, np.array([0, 0, -2, 0, 0, 0, 1.0]))
        assert calls == [8 * 2 * 8] * (1 + bounces)
        calls.clear()
        SinglebeamSonar(SinglebeamSonarConfig(model="device", cone_rings=2, rays_per_ring=8, multipath_mixed_paths=False,
                                              multipath_bounces=bounces), device="cpu").render(
            scene, np.array([0, 0, -2, 0, 0, 0, 1.0]))
        assert calls == [2 * 8] * (1 + bounces)
        # mixed paths (the default): one visibility cast more per bounce
        calls.clear()
        ImagingSonar(fls(bounces, **small), device="cpu").render(scene, np.array([0, 0, -2, 0, 0, 0, 1.0]))
        assert calls == [8 * 2 * 8] * (1 + 2 * bounces)


ALL_CONFIGS = [ImagingSonarConfig, MultibeamSonarConfig, SidescanSonarConfig, ProfilingSonarConfig,
               SinglebeamSonarConfig, MsisConfig]


@pytest.mark.parametrize("cls", ALL_CONFIGS, ids=[c.__name__ for c in ALL_CONFIGS])
def test_config_errors_name_the_field(cls):
    base = dict(model="device") if cls is not MsisConfig else {}
    for bad in (-1, 5, 1.5, True, "2"):
        with pytest.raises(ConfigError, match="multipath_bounces"):
            cls(**base, multipath_bounces=bad).validate()
    for bad in (0.0, -3.0, math.nan, 61.0, "calm"):
        with pytest.raises(ConfigError, match="surface_wind_speed"):
            cls(**base, surface_wind_speed=bad).validate()
    with pytest.raises(ConfigError, match="surface_reverberation"):
        cls(**base, surface_reverberation="yes").validate()
    for ok in range(0, 5):
        cls(**base, multipath_bounces=ok).validate()


@pytest.mark.parametrize("cls", [c for c in ALL_CONFIGS if c is not MsisConfig])
def test_peer_models_refuse_what_they_cannot_render_naming_the_model_that_has_it(cls):
    # the fan sonars' peer (side-scan, profiling, single-beam) renders bounces; the imaging sonar's and the
    # multibeam's peers (their own kernels: HoloOcean/OceanSim, DAVE) do not; no peer has surface reverberation
    if cls in (ImagingSonarConfig, MultibeamSonarConfig):
        with pytest.raises(ConfigError, match="multipath_bounces.*model 'device'"):
            cls(model="peer", multipath_bounces=1).validate()
    else:
        cls(model="peer", multipath_bounces=2).validate()
    with pytest.raises(ConfigError, match="surface_reverberation.*model 'device'"):
        cls(model="peer", surface_reverberation=True, surface_wind_speed=5.0).validate()


def test_surface_reverberation_without_a_wind_speed_is_refused_at_render():
    scene = make_scene(("wall", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    sonar = ImagingSonar(fls(0, surface_reverberation=True, horizontal_fov=20.0, n_beams=8, rays_per_beam=2,
                             elevation_rays=8, min_range=0.5, max_range=10.0, range_bins=50), device="cpu")
    with pytest.raises(ConfigError, match="surface_wind_speed"):
        sonar.render(scene, np.array([0, 0, -2, 0, 0, 0, 1.0]))


def _holoocean_scene(mu_plate: float) -> Scene:
    root = Node("/World")
    plate = Material.from_properties("plate", (0.5, 0.5, 0.5), reflectivity=mu_plate)
    ball = Material.from_properties("ball", (0.5, 0.5, 0.5), reflectivity=0.5)
    return Scene([root, Node("/World/plate", mesh=quad([0.0, 0.0, 0.0], [0.0, 0.0, -1.0], 60.0), material=plate,
                             label="plate", parent=root),
                  Node("/World/ball", mesh=sphere([8.0, 0.0, -1.5], 0.2), material=ball, label="ball", parent=root)],
                 device="cpu")


def test_holoocean_multipath_of_the_peer_imaging_sonar():
    # HoloOcean's MultiPath (peer model): the first hit m reflects once; a second hit B in view adds
    # mu_m mu_B cos(return) w at B's bearing and range (|S - m| + |m - B| + |B - S|) / 2. A plate (mu_m) at z = 0
    # above the sensor (depth 1.5 m) mirrors a sphere (a = 0.2 m) 8 m ahead at the sensor's depth: the path via the
    # plate to the sphere's centre is sqrt(8^2 + 3^2) = 8.5440 m, the way back 8 m: (8.5440 + 8) / 2 = 8.2720 m for
    # the centre; the nearest B (on the bisector of the two directions, 10.28 deg apart at the sphere) is
    # a cos(10.28 deg) = 0.1968 m closer: 8.0752 m, in the centre beams. (Rays reflected by the sphere onto the plate
    # add weaker contributions from ~8.08 m on, at the bearings of their plate points.) Every contribution scales
    # with mu_m (R1^2) exactly.
    cfg = ImagingSonarConfig(model="peer", horizontal_fov=8.0, vertical_fov=50.0, n_beams=8, rays_per_beam=8,
                             elevation_rays=500, min_range=2.0, max_range=14.0, range_bins=1200, absorption=0.0,
                             aggregation="sum", normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
                             additive_range_scaled=False)
    pose = np.array([0.0, 0.0, -1.5, 0.0, 0.0, 0.0, 1.0])
    ranges = 2.0 + (np.arange(1200) + 0.5) * 0.01
    images = {}
    for mu in (0.2, 0.4):
        scene = _holoocean_scene(mu)
        plain = ImagingSonar(cfg, device="cpu").render(scene, pose).numpy()
        multi = ImagingSonar(cfg.replace(multipath=True), device="cpu").render(scene, pose).numpy()
        images[mu] = multi["clean_intensity"][0].astype(np.float64) - plain["clean_intensity"][0]
        added = multi["hit_count"][0] - plain["hit_count"][0]
        assert added.sum() > 0 and (images[mu][added == 0] == 0).all()
    diff = images[0.2]
    rows, cols = np.nonzero(diff > 1e-6 * diff.max())
    centre = (math.hypot(8.0, 3.0) + 8.0) / 2
    assert centre == pytest.approx(8.2720, abs=1e-4)
    nearest = centre - 0.2 * math.cos(math.atan2(3.0, 8.0) / 2)
    assert nearest == pytest.approx(8.0752, abs=1e-4)
    assert ranges[rows].min() - 0.005 == pytest.approx(nearest, abs=0.011)
    assert diff[:, 3:5].sum() > 0.8 * diff.sum()  # mostly in the centre beams (bearings within +-1 deg)
    np.testing.assert_allclose(images[0.4], 2.0 * images[0.2], rtol=1e-5, atol=1e-12 * diff.max())
    # the device model refuses HoloOcean's switch, the peer refuses multipath_bounces, naming the alternative
    with pytest.raises(ConfigError, match="multipath: is HoloOcean's one-bounce MultiPath"):
        ImagingSonarConfig(model="device", multipath=True).validate()
    with pytest.raises(ConfigError, match="multipath_bounces.*multipath: true"):
        ImagingSonarConfig(model="peer", multipath_bounces=1).validate()
