"""Imaging sonar (peer and device models) and multibeam (peer model) geometry and levels against numbers computed by
hand (docs/PHYSICS.md §1, §2): the range bin and beam a target at a known position lands in (odd and even beam
counts, a min_range offset, the window's edges, a yawed and a pitched sensor), the return integrated over a
pitched seafloor, the device model's absolute level and absorption slope, row and global normalisation values, the
multibeam's per-beam normalised mixing at the fan's edge, and bad input refused by field name.

The sensor sits at the origin looking along +x (FLU: +y port) unless stated; bearing is positive to starboard
(-y), so a target at bearing b is at (r cos b, -r sin b, 0)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py import ConfigError, ImagingSonar, ImagingSonarConfig
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
QUIET_DEVICE = dict(model="device", noise_level=None, volume_scattering=None, jitter=False)


def plate(r: float, bearing_deg: float, size: float, mu: float = 0.9) -> Scene:
    """A square plate of side ``size`` (m) facing the sensor at range ``r`` (m) and bearing ``bearing_deg``."""
    b = math.radians(bearing_deg)
    c = [r * math.cos(b), -r * math.sin(b), 0.0]
    return make_scene(("t", quad(c, [-c[0], -c[1], 0.0], size), mu))


def sonar(**kw) -> ImagingSonarConfig:
    """30 x 10 deg fan, 0.37-5.37 m in 100 bins of 5 cm, noise-free, physical units."""
    base = dict(horizontal_fov=30.0, vertical_fov=10.0, min_range=0.37, max_range=5.37, n_beams=5, range_bins=100,
                rays_per_beam=8, elevation_rays=16, absorption=0.0, normalisation="none", multiplicative_sigma=0.0,
                additive_sigma=0.0, additive_range_scaled=False)
    base.update(kw)
    return ImagingSonarConfig(**base)


def peak(image: np.ndarray) -> tuple[int, int]:
    return tuple(int(i) for i in np.unravel_index(np.argmax(image), image.shape))


MODELS = [pytest.param({}, id="peer"), pytest.param(QUIET_DEVICE, id="device"),
          pytest.param({**QUIET_DEVICE, "bandwidth": 15000.0, "beam_width": 5.0}, id="device-psf")]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("n_beams, bearing, beam", [(5, 0.0, 2), (5, -12.0, 0), (5, 12.0, 4), (4, 3.75, 2),
                                                    (4, -3.75, 1), (4, 11.25, 3)])
def test_target_lands_in_its_range_bin_and_beam(model, n_beams, bearing, beam):
    # Beam j covers bearings [-15 + j * 30 / n, -15 + (j + 1) * 30 / n) deg: 5 beams of 6 deg put 0 deg in beam 2,
    # -12 in beam 0 and +12 (starboard) in beam 4 (beam centres); 4 beams of 7.5 deg put +-3.75 in beams 2 / 1 and
    # 11.25 in 3.
    # Range bin floor((r - min_range) / dr) = floor((3.02 - 0.37) / 0.05) = 53 (the 0.2 m plate's ranges span
    # 3.020-3.022 m). With the device's point spread (15 kHz: c / 2B = 5 cm, 5 deg beams) the peak stays there.
    cfg = sonar(n_beams=n_beams, **model)
    out = ImagingSonar(cfg, device="cpu").render(plate(3.02, bearing, 0.2), IDENTITY).numpy()
    assert peak(out["clean_intensity"][0]) == (53, beam)
    assert out["ranges"][53] == pytest.approx(0.37 + 53.5 * 0.05)
    assert out["bearings"][beam] == pytest.approx(math.radians(-15.0 + (beam + 0.5) * 30.0 / n_beams))


@pytest.mark.parametrize("model", MODELS[:2])
@pytest.mark.parametrize("r, row", [(0.39, 0), (5.345, 99), (5.36, 99), (5.38, None), (0.36, None)])
def test_bins_at_the_window_edges(model, r, row):
    # Bins cover [0.37, 5.37) m: a 0.02 m plate at 0.39 m is in bin 0, at 5.345 and 5.36 m in the last bin (99);
    # at 5.38 m (past max_range) and 0.36 m (short of min_range) nothing is binned.
    cfg = sonar(rays_per_beam=16, elevation_rays=32, **model)
    out = ImagingSonar(cfg, device="cpu").render(plate(r, 0.0, 0.02 * r), IDENTITY).numpy()
    if row is None:
        assert out["hit_count"][0].sum() == 0 and out["clean_intensity"][0].max() == 0.0
    else:
        assert out["hit_count"][0].sum() > 0
        assert peak(out["clean_intensity"][0]) == (row, 2)


def test_yawed_sensor_puts_a_port_target_left_in_all_three_models():
    # Yaw +90 deg: the sensor looks along world +y, its port (+y_s) is world -x. The plate at world (-1, 5, 0) is
    # 5 m ahead and 1 m to port: bearing atan2(-1, 5) = -11.31 deg -> beam 0 of 5 x 6 deg; range sqrt(26) = 5.099 m.
    # Imaging sonar, 1-11 m in 5 cm bins: the 0.3 m plate spans 5.099-5.106 m, mostly bin floor(4.10 / 0.05) = 82.
    # Multibeam peer, samples every c / (2 fs) = 1500 / 60 kHz = 2.5 cm from 0.7 m: sample (5.099 - 0.7) / 0.025
    # = 175.96 -> 176.
    c = np.array([-1.0, 5.0, 0.0])
    scene = make_scene(("t", quad(c, -c, 0.3), 0.9))
    pose = pose_from_euler(0.0, 0.0, 0.0, yaw_deg=90.0)
    for model in ({}, QUIET_DEVICE):
        cfg = sonar(min_range=1.0, max_range=11.0, range_bins=200, **model)
        assert peak(ImagingSonar(cfg, device="cpu").render(scene, pose).numpy()["clean_intensity"][0]) == (82, 0)
    mb = MultibeamSonarConfig(fov=30.0, n_beams=5, beam_width=6.0, elevation_fov=10.0, rays_per_beam=16,
                              azimuth_rays_per_beam=8, bandwidth=30e3, min_range=0.7, max_range=11.0,
                              beam_pattern=False, absorption=0.0)
    assert peak(MultibeamSonar(mb, device="cpu").render(scene, pose).numpy()["intensity"][0]) == (176, 0)


def test_pitched_sensor_over_a_floor_rows_and_integrated_return():
    # Sensor at z = 0 pitched 30 deg down over a mu = 0.5 floor at z = -3 m. A ray at bearing b, elevation e has
    # world dz = sin e cos 30 - cos e cos b sin 30, so its range is 3 / -dz and cos(psi) = -dz: the boresight
    # plane's rays (b = 0) span 3 / sin 35 = 5.230 m (e = +5) to 3 / sin 25 = 7.099 m (e = -5), i.e. the first
    # lit row is floor((5.230 - 1) / 0.05) = 84. The total return is mu * sum(-dz cos e db de) over the fan,
    # summed here on a 40 x 400 grid: 0.0225291.
    cfg = sonar(min_range=1.0, max_range=11.0, range_bins=200, elevation_rays=40)
    floor = make_scene(("floor", quad([0.0, 0.0, -3.0], [0.0, 0.0, 1.0], 200.0), 0.5))
    img = ImagingSonar(cfg, device="cpu").render(floor, pose_from_euler(0.0, 0.0, 0.0, pitch_deg=30.0)).numpy()[
        "clean_intensity"][0]
    assert np.flatnonzero(img.sum(axis=1))[0] == 84
    b = np.radians(-15.0 + (np.arange(40) + 0.5) * 0.75)[None, :]
    e = np.radians(-5.0 + (np.arange(400) + 0.5) * 0.025)[:, None]
    dz = np.sin(e) * math.cos(math.radians(30.0)) - np.cos(e) * np.cos(b) * math.sin(math.radians(30.0))
    hand = 0.5 * float(np.sum(-dz * np.cos(e))) * math.radians(0.75) * math.radians(0.025)
    assert hand == pytest.approx(0.0225291, rel=1e-5)
    assert img.sum() == pytest.approx(hand, rel=2e-4)


def test_device_model_absolute_level_and_absorption_slope():
    # Device model, no point spread, no noise: I = SL mu cos(psi) dOmega / r^2 10^(-2 alpha r / 10). A 2 x 2 deg fan
    # square to a mu = 0.5 wall at 5 m: total = 10^(200 / 10) * 0.5 * (2 pi / 180)^2 / 25 = 2.4369e15 re 1 uPa^2
    # (cos(psi) dOmega summed over the fan ~ Theta Phi for small angles), all in row floor((5 - 0.37) / 0.05) = 92.
    # With alpha = 0.5 dB/m the total drops by 10^(-2 * 0.5 * 5 / 10) = 0.31623 (less 1.2e-4: the fan's edge rays
    # travel up to 5 / cos(1.4 deg) = 5.0015 m).
    wall = make_scene(("w", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    cfg = sonar(horizontal_fov=2.0, vertical_fov=2.0, n_beams=8, source_level=200.0, **QUIET_DEVICE)
    img = ImagingSonar(cfg, device="cpu").render(wall, IDENTITY).numpy()["clean_intensity"][0]
    assert np.flatnonzero(img.sum(axis=1)).tolist() == [92]
    assert img.sum() == pytest.approx(1e20 * 0.5 * math.radians(2.0) ** 2 / 25.0, rel=1e-3)
    absorbed = ImagingSonar(sonar(horizontal_fov=2.0, vertical_fov=2.0, n_beams=8, source_level=200.0, absorption=0.5,
                                  **QUIET_DEVICE), device="cpu").render(wall, IDENTITY).numpy()["clean_intensity"][0]
    assert absorbed.sum() / img.sum() == pytest.approx(10 ** -0.5, rel=3e-4)


def two_plates(r_port: float, r_star: float) -> Scene:
    """mu = 0.9 plate at +8 deg (starboard, r_star) and mu = 0.3 plate at -8 deg (port, r_port), 0.5 m each."""
    nodes = [Node("/W")]
    for name, r, b, mu in (("star", r_star, 8.0, 0.9), ("port", r_port, -8.0, 0.3)):
        c = [r * math.cos(math.radians(b)), -r * math.sin(math.radians(b)), 0.0]
        nodes.append(Node(f"/W/{name}", mesh=quad(c, [-c[0], -c[1], 0.0], 0.5),
                          material=Material.from_properties(name, (0.5, 0.5, 0.5), reflectivity=mu), label=name,
                          parent=nodes[0]))
    return Scene(nodes, device="cpu")


def test_row_and_global_normalisation_values():
    # 3 beams of 10 deg over 1-11 m in 10 cm bins. Two mirror-image plates at +-8 deg and 6.33 m (row 53) see the
    # same rays, so the bins hold mu cos(psi) dOmega in the ratio 0.9 : 0.3: row and global normalisation both give
    # 1 (starboard beam 2) and 1/3 (port beam 0). With the port plate moved to 8.47 m (row 74) each row's own
    # maximum is 1 under row normalisation; under global normalisation row 74 keeps its ratio to the frame maximum.
    cfg = dict(horizontal_fov=30.0, min_range=1.0, max_range=11.0, n_beams=3, range_bins=100)
    render = lambda norm, scene: ImagingSonar(sonar(normalisation=norm, **cfg), device="cpu").render(
        scene, IDENTITY).numpy()["clean_intensity"][0]
    none = render("none", two_plates(6.33, 6.33))
    for norm in ("row", "global"):
        img = render(norm, two_plates(6.33, 6.33))
        np.testing.assert_allclose(img[53], [1.0 / 3.0, 0.0, 1.0], rtol=1e-5)
        np.testing.assert_allclose(img, none / none.max(), rtol=1e-5)
    row = render("row", two_plates(8.47, 6.33))
    glob = render("global", two_plates(8.47, 6.33))
    raw = render("none", two_plates(8.47, 6.33))
    assert row[53].tolist() == [0.0, 0.0, 1.0] and row[74].tolist() == [1.0, 0.0, 0.0]
    assert glob[74, 0] == pytest.approx(raw[74, 0] / raw[53, 2], rel=1e-5) and 0.0 < glob[74, 0] < 0.5


def test_multibeam_mixing_normalises_each_beam_by_its_own_weights_at_the_fan_edge():
    # 3 beams 10 deg apart, beam width 10 deg: B(k) = sin x / x, x = pi 0.884 / theta_bw sin(k 10 deg):
    # B(1) = 0.1337, B(2) = -0.1369. A point target in beam 0 (bearing -10 deg) fills only raw beam 0, so the
    # mixed beams are W[k, 0] p_0 with W[k, i] = B(|i - k|) / sqrt(sum_i B(|i - k|)^2): beam 0 keeps
    # 1 / (1 + B1^2 + B2^2) of its intensity, beam 1 (normalised by 1 + 2 B1^2) gets B1^2 / (1 + 2 B1^2) and beam 2
    # B2^2 / (1 + B1^2 + B2^2) of it. The speckle draw is the same with and without mixing (same seed and rays).
    def pattern(k: int) -> float:
        x = math.pi * 0.884 / math.radians(10.0) * math.sin(math.radians(10.0 * k))
        return math.sin(x) / x if k else 1.0

    b1, b2 = pattern(1), pattern(2)
    assert (b1, b2) == (pytest.approx(0.1337, abs=1e-4), pytest.approx(-0.1369, abs=1e-4))
    base = dict(fov=30.0, n_beams=3, beam_width=10.0, elevation_fov=10.0, rays_per_beam=16, azimuth_rays_per_beam=8,
                bandwidth=30e3, min_range=0.7, max_range=8.0, absorption=0.0)
    scene = plate(6.33, -10.0, 0.4)
    raw = MultibeamSonar(MultibeamSonarConfig(**base, beam_pattern=False), device="cpu").render(
        scene, IDENTITY).numpy()["intensity"][0]
    mixed = MultibeamSonar(MultibeamSonarConfig(**base, beam_pattern=True), device="cpu").render(
        scene, IDENTITY).numpy()["intensity"][0]
    n = int(np.argmax(raw[:, 0]))
    assert n == 225 and raw[n, 1:].tolist() == [0.0, 0.0]   # (6.33 - 0.7) / 0.025 = 225.2
    expected = raw[n, 0] * np.array([1.0 / (1 + b1**2 + b2**2), b1**2 / (1 + 2 * b1**2), b2**2 / (1 + b1**2 + b2**2)])
    np.testing.assert_allclose(mixed[n], expected, rtol=1e-4)


@pytest.mark.parametrize("field, value", [("n_beams", 2.5), ("n_beams", "4"), ("rays_per_beam", 2.5),
                                          ("azimuth_rays_per_beam", 1.5), ("seed", 1.5), ("beam_pattern", "no"),
                                          ("elevation_directivity", 2)])
def test_multibeam_counts_flags_and_seed_of_the_wrong_type_are_refused_by_name(field, value):
    # Before: n_beams 2.5 or rays_per_beam 2.5 were accepted and crashed the render (IndexError / TypeError),
    # n_beams "4" raised a TypeError, seed 1.5 and beam_pattern "no" were accepted.
    with pytest.raises(ConfigError, match=rf"MultibeamSonarConfig\.{field}"):
        MultibeamSonarConfig(**{field: value})


@pytest.mark.parametrize("field", ["spreading", "additive_range_scaled"])
def test_imaging_sonar_flags_of_the_wrong_type_are_refused_by_name(field):
    with pytest.raises(ConfigError, match=rf"ImagingSonarConfig\.{field}: must be true or false"):
        ImagingSonarConfig(**{field: "yes"})


def test_holoocean_bin_sizes_give_the_bin_counts():
    # HoloOcean's RangeRes / AzimuthRes (ImagingSonar.cpp) set the counts where RangeBins / AzimuthBins are absent:
    # (30 - 0.5) / 0.05 = 590 range bins, 130 / 0.25 = 520 beams; 9 / 0.07 = 128.57 truncates to 128; a count given
    # with its bin size wins. Before, RangeRes and AzimuthRes were refused as unknown keys.
    c = ImagingSonarConfig.from_holoocean({"Azimuth": 130, "RangeMin": 0.5, "RangeMax": 30, "RangeRes": 0.05,
                                           "AzimuthRes": 0.25})
    assert (c.range_bins, c.n_beams) == (590, 520)
    assert ImagingSonarConfig.from_holoocean({"RangeMin": 1, "RangeMax": 10, "RangeRes": 0.07}).range_bins == 128
    assert ImagingSonarConfig.from_holoocean({"RangeMin": 1, "RangeMax": 10, "RangeBins": 100,
                                              "RangeRes": 0.05}).range_bins == 100
    for bad in ({"RangeRes": 0}, {"AzimuthRes": -1.0}, {"RangeRes": "0.1"}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            ImagingSonarConfig.from_holoocean(bad)


@pytest.mark.parametrize("n_beams, range_bins", [(1, 1), (1, 100), (8, 1)])
def test_fan_image_of_a_single_beam_or_range_bin(n_beams, range_bins):
    # A 20 deg fan over 1-11 m, 64 px wide: px = 2 * 11 sin(10 deg) / 64 = 0.05969 m, H = ceil(11 / px) = 185 rows.
    # A wall at 5 m fills every beam, so with one range bin (1-11 m) the whole annular sector is lit:
    # (20 deg / 2)(11^2 - 1^2) = 20.944 m^2 = 5878 px, each at the bin's value; with 100 bins only the 5 m arc.
    # Before, a single beam crashed (OverflowError: zero bin width) and a single range bin drew the fan only out to
    # the bin's centre (6 m) and lit pixels short of min_range.
    cfg = ImagingSonarConfig(horizontal_fov=20.0, vertical_fov=10.0, min_range=1.0, max_range=11.0, n_beams=n_beams,
                             range_bins=range_bins, rays_per_beam=2, elevation_rays=4, normalisation="none",
                             multiplicative_sigma=0.0, additive_sigma=0.0, additive_range_scaled=False)
    res = ImagingSonar(cfg, device="cpu").render(make_scene(("w", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0),
                                                                 0.5)), IDENTITY)
    fan = res.to_cartesian(64, clean=True)[0]
    assert fan.shape == (185, 64)
    px = 22.0 * math.sin(math.radians(10.0)) / 64
    pixel = lambda r: fan[185 - 1 - int(r / px), 32]     # boresight pixel at range r
    if range_bins == 1:
        assert (fan > 0).sum() == pytest.approx(math.radians(10.0) * 120.0 / px**2, rel=0.01)
        assert pixel(10.9) == pytest.approx(res.clean_intensity.numpy()[0, 0, n_beams // 2], rel=1e-5)
        assert pixel(0.9) == 0.0
    else:
        assert pixel(5.0) > 0.0 and pixel(4.5) == 0.0 and pixel(5.5) == 0.0
    assert res.fan_uint8(64).shape == (1, 185, 64)


def test_multibeam_fan_image_of_a_single_beam():
    # One 20 deg beam, samples every 2.5 cm from 0.1 m to 6 m (237 samples: r_max = 6.0125 m), 64 px wide:
    # px = 2 * 6.0125 sin(10 deg) / 64 = 0.03263 m, H = ceil(6.0125 / px) = 185. Before: OverflowError.
    cfg = MultibeamSonarConfig(fov=20.0, n_beams=1, beam_width=20.0, min_range=0.1, max_range=6.0)
    wall = make_scene(("w", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    assert MultibeamSonar(cfg, device="cpu").render(wall, IDENTITY).to_cartesian(64).shape == (1, 185, 64)


@pytest.mark.parametrize("make", [lambda: ImagingSonar(sonar(), device="cpu"),
                                  lambda: MultibeamSonar(MultibeamSonarConfig(fov=20.0, n_beams=4, max_range=6.0),
                                                         device="cpu")])
def test_render_refuses_a_non_scene_and_non_numeric_poses_by_name(make):
    # Before: scene=None raised AttributeError ('NoneType' has no attribute 'device'), poses "abc" a ValueError.
    sensor = make()
    scene = make_scene(("w", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    with pytest.raises(ConfigError, match="scene must be an oceansim_py Scene"):
        sensor.render(None, IDENTITY)
    with pytest.raises(ConfigError, match=r"poses: expected numbers of shape \(B, 7\)"):
        sensor.render(scene, "abc")
