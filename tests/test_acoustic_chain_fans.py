"""The device chain on the table fans (side-scan, single-beam, profiling, MSIS) and the imaging sonar's point spread
on distributed scatterers, against numbers computed by hand on scenes the other acoustic-chain tests do not use
(docs/PHYSICS_ACOUSTIC_CHAIN.md §1-§4). Every render is noise-free unless the test is about noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import quad
from oceansim_py.scene import Material, Node, Scene
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.msis import Msis, MsisConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

SL = 200.0

#: Device model, no noise, reverberation, point spread or TVG (each test switches on what it checks).
QUIET = dict(model="device", source_level=SL, noise_level=None, volume_scattering=None, bandwidth=0.0, tvg="none",
             normalisation="none")

LEVEL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def db(x):
    return 10.0 * np.log10(x)


def scene_of(*parts: tuple[str, object, dict]) -> Scene:
    """Scene of (name, mesh, material keywords) parts (``scattering_strength`` in dB or ``reflectivity``)."""
    nodes = [Node("/World")]
    for name, mesh, material in parts:
        mat = Material.from_properties(name, (0.5, 0.5, 0.5), **material)
        nodes.append(Node(f"/World/{name}", mesh=mesh, material=mat, label=name, parent=nodes[0]))
    return Scene(nodes, device="cpu")


def far_quad() -> Scene:
    """A small quad behind every fan here: empty water."""
    return scene_of(("far", quad([-50.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1), dict(reflectivity=0.5)))


def minus_3db_width(profile: np.ndarray, step: float) -> float:
    """Full width (in units of ``step``) where ``profile`` stays above half its peak, interpolated."""
    p = profile / profile.max()
    c = int(np.argmax(p))

    def half(q: np.ndarray) -> float:
        k = int(np.nonzero(q < 0.5)[0][0])
        return k - 1 + (q[k - 1] - 0.5) / (q[k - 1] - q[k])

    return (half(p[c::-1]) + half(p[c:])) * step


def test_sidescan_flat_floor_level_per_slant_range_bin():
    # Flat floor h = 6 m below a level side-scan, S = -25 dB (mu = 10^-2.5), alpha = 0.2 dB/m, flat 70 deg fan over
    # depressions 10-80 deg, 0.5 deg along track. A slant-range bin [r - dr/2, r + dr/2] holds the rays of
    # depressions d with sin d = h / r: the solid angle 2 sin(0.25 deg) dd, dd = h dr / (r sqrt(r^2 - h^2)), each
    # at cos psi = h / r, so I(r) = SL mu (h / r) 2 sin(0.25 deg) h dr / (r^3 sqrt(r^2 - h^2)) 10^(-2 alpha r / 10)
    # re 1 uPa^2 per bin, on both sides.
    h, alpha = 6.0, 0.2
    floor = scene_of(("floor", quad([0.0, 0.0, -h], [0.0, 0.0, 1.0], 300.0), dict(scattering_strength=-25.0)))
    cfg = SidescanSonarConfig(**QUIET, along_track_beamwidth=0.5, vertical_beamwidth=70.0, depression=45.0,
                              min_range=1.0, max_range=41.0, range_bins=800, along_track_rays=8,
                              across_track_rays=4096, absorption=alpha, beam_pattern="flat")
    res = SidescanSonar(cfg, device="cpu").render(floor, LEVEL).numpy()
    r = cfg.ranges().astype(np.float64)
    dr = cfg.range_resolution
    hand = (10 ** (SL / 10) * 10 ** -2.5 * (h / r) * 2 * math.sin(math.radians(0.25)) * h * dr
            / (r**3 * np.sqrt(np.maximum(r * r - h * h, 1e-9))) * 10 ** (-0.2 * alpha * r))
    inside = (r > h / math.sin(math.radians(80.0)) + 0.3) & (r < h / math.sin(math.radians(10.0)) - 0.3)
    n = inside.sum() // 10 * 10
    for side in (0, 1):
        got = res["clean_intensity"][0][:, side].astype(np.float64)[inside][:n].reshape(-1, 10).sum(axis=1)
        want = hand[inside][:n].reshape(-1, 10).sum(axis=1)
        assert np.abs(db(got / want)).max() < 0.15          # 10-bin blocks: ray-sampling noise only
        assert np.median(db(got / want)) == pytest.approx(0.0, abs=0.02)


def test_sidescan_point_target_range_response_and_volume_reverberation():
    # A 2 cm plate facing the starboard side at 20 m (a normal-incidence footprint a few float32 ulps deep), pulse
    # B = 30 kHz: starboard only, peak at 20 m, range -3 dB width c / (2B) = 2.5 cm (5 %).
    plate = scene_of(("plate", quad([0.0, -20.0, 0.0], [0.0, 1.0, 0.0], 0.02), dict(reflectivity=0.5)))
    cfg = SidescanSonarConfig(**{**QUIET, "bandwidth": 30000.0, "psf_extent": 4.0}, along_track_beamwidth=0.5,
                              vertical_beamwidth=10.0, depression=0.0, min_range=19.0, max_range=21.0, range_bins=400,
                              along_track_rays=64, across_track_rays=1024, absorption=0.0)
    img = SidescanSonar(cfg, device="cpu").render(plate, LEVEL).numpy()["clean_intensity"][0].astype(np.float64)
    assert img[:, 0].max() == 0.0 < img[:, 1].max()
    assert cfg.ranges()[np.argmax(img[:, 1])] == pytest.approx(20.0, abs=cfg.range_resolution)
    assert minus_3db_width(img[:, 1], cfg.range_resolution) == pytest.approx(0.025, rel=0.05)
    # Volume reverberation S_v = -60 dB: per bin SL - 40 log r - 2 alpha r + S_v + 10 log10(r^2 Omega dr), Omega the
    # side's solid angle 2 sin(wa / 2) wd (rays at (sin a, cos a cos d, -cos a sin d): dOmega = cos a da dd).
    sv, alpha = -60.0, 0.1
    cfg = SidescanSonarConfig(**{**QUIET, "volume_scattering": sv}, along_track_beamwidth=1.0, vertical_beamwidth=60.0,
                              depression=40.0, min_range=1.0, max_range=21.0, range_bins=200, along_track_rays=4,
                              across_track_rays=256, absorption=alpha)
    res = SidescanSonar(cfg, device="cpu").render(far_quad(), LEVEL).numpy()
    r = cfg.ranges().astype(np.float64)
    omega = 2 * math.sin(math.radians(0.5)) * math.radians(60.0)
    want = SL - 40 * np.log10(r) - 2 * alpha * r + sv + db(r * r * omega * cfg.range_resolution)
    for side in (0, 1):
        assert db(res["clean_intensity"][0][:, side].astype(np.float64)) == pytest.approx(want, abs=0.01)


def test_singlebeam_floor_echo_energy_in_closed_form():
    # A 20 deg cone straight down at a floor 7 m below, S = -20 dB, alpha = 0: a ray at polar angle t meets it at
    # r = h / cos t with cos psi = cos t, so the echo's energy is SL mu Int cos t dOmega / r^2 = SL mu 2 pi / h^2
    # Int_0^10deg cos^3 t sin t dt = SL mu 2 pi (1 - cos^4 10 deg) / (4 h^2) = 152.80 dB re 1 uPa^2, all of it
    # between 7 m and 7 / cos 10 deg = 7.108 m.
    h = 7.0
    floor = scene_of(("floor", quad([0.0, 0.0, -h], [0.0, 0.0, 1.0], 100.0), dict(scattering_strength=-20.0)))
    cfg = SinglebeamSonarConfig(**QUIET, opening_angle=20.0, cone_rings=64, rays_per_ring=128, min_range=1.0,
                                max_range=10.0, range_bins=900, absorption=0.0)
    down = np.array([0.0, 0.0, 0.0, 0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])
    res = SinglebeamSonar(cfg, device="cpu").render(floor, down).numpy()
    series = res["clean_intensity"][0].astype(np.float64)
    hand = 10 ** (SL / 10) * 0.01 * 2 * math.pi * (1 - math.cos(math.radians(10.0)) ** 4) / (4 * h * h)
    assert db(series.sum()) == pytest.approx(db(hand), abs=0.02)
    held = cfg.ranges()[series > 0]
    assert held.min() > h - cfg.range_resolution and held.max() < h / math.cos(math.radians(10.0)) + cfg.range_resolution


def test_profiling_beam_energy_and_centre_of_gravity_on_a_flat_floor():
    # 50 beams of 2 deg over a 100 deg swath, 1.5 deg along track, floor 10 m down, S = -30 dB, alpha = 0: beam j
    # (angles t from nadir in [t0, t1]) holds SL mu / h^2 Int cos^3 t dt Int cos^3 a da (r = h / (cos t cos a),
    # cos psi = cos t cos a, dOmega = cos a dt da), Int cos^3 = sin - sin^3 / 3; its sounding is the echoes' centre
    # of gravity in range, Int cos^3 t (h / cos t) dt / Int cos^3 t dt (along-track spread: < 0.1 mm).
    h = 10.0
    floor = scene_of(("floor", quad([0.0, 0.0, -h], [0.0, 0.0, 1.0], 200.0), dict(scattering_strength=-30.0)))
    cfg = ProfilingSonarConfig(**QUIET, swath_width=100.0, along_track_beamwidth=1.5, n_beams=50,
                               across_rays_per_beam=64, along_track_rays=16, min_range=5.0, max_range=25.0,
                               range_bins=2000, absorption=0.0)
    res = ProfilingSonar(cfg, device="cpu").render(floor, LEVEL).numpy()
    edges = np.radians(-50.0 + 2.0 * np.arange(51))

    def int_cos3(a, b):
        return np.sin(b) - np.sin(b) ** 3 / 3 - np.sin(a) + np.sin(a) ** 3 / 3

    wa = math.radians(1.5)
    hand = 10 ** (SL / 10) * 1e-3 / h**2 * int_cos3(edges[:-1], edges[1:]) * int_cos3(-wa / 2, wa / 2)
    assert db(res["clean_image"][0].astype(np.float64).sum(axis=0) / hand) == pytest.approx(np.zeros(50), abs=0.01)
    # the beams' intensity output is that energy too (the sum of the rays' echoes, before TVG, point spread and
    # noise), whatever the receiver does to the image
    loud = cfg.replace(noise_level=70.0, tvg="20log", bandwidth=30000.0)
    beams = ProfilingSonar(loud, device="cpu").render(floor, LEVEL).numpy()["intensity"][0].astype(np.float64)
    assert db(beams / hand) == pytest.approx(np.zeros(50), abs=0.01)
    t = np.linspace(edges[:-1], edges[1:], 2001)
    cog = np.trapezoid(np.cos(t) ** 2 * h, t, axis=0) / np.trapezoid(np.cos(t) ** 3, t, axis=0)
    np.testing.assert_allclose(res["bottom_range"][0], cog, atol=0.003)
    assert res["point_sensor"][0][0][1] > 0 > res["point_sensor"][0][-1][1]      # beam 0 is the most port (+y)


def test_msis_wall_energy_and_head_angle_sign():
    # A wall 8 m ahead (S = -15 dB, alpha = 0) in the beam of head angle 0: a ray at (a, e) meets it at
    # r = x / (cos a cos e) with cos psi = cos a cos e, so the energy is SL mu / x^2 sum (cos a cos e)^3 cos e da de
    # over the beam's rays (2 x 20 deg, 64 x 256 rays). Head angles are + starboard: step 30 (head +30 deg) sees a
    # post at bearing 30 deg to starboard (-y), step 330 (head -30 deg) does not.
    x = 8.0
    cfg = MsisConfig(**{k: v for k, v in QUIET.items() if k != "model"}, horizontal_beamwidth=2.0,
                     vertical_beamwidth=20.0, horizontal_rays=64, vertical_rays=256, step_angle=1.0, min_range=1.0,
                     max_range=12.0, range_bins=1100, absorption=0.0)
    sonar = Msis(cfg, device="cpu")
    wall = scene_of(("wall", quad([x, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), dict(scattering_strength=-15.0)))
    total = sonar.render(wall, LEVEL, frame_index=0).clean_intensity[0].astype(np.float64).sum()
    a, e = np.meshgrid(*cfg.ray_angles(), indexing="ij")
    hand = (10 ** (SL / 10) * 10 ** -1.5 / x**2 * np.sum((np.cos(a) * np.cos(e)) ** 3 * np.cos(e))
            * math.radians(2.0) / 64 * math.radians(20.0) / 256)
    assert db(total) == pytest.approx(db(hand), abs=0.01)
    b = math.radians(30.0)
    post = scene_of(("post", quad([5 * math.cos(b), -5 * math.sin(b), 0.0], [-math.cos(b), math.sin(b), 0.0], 0.3),
                     dict(reflectivity=0.5)))
    assert sonar.render(post, LEVEL, frame_index=30).hit_count.sum() > 0
    assert sonar.render(post, LEVEL, frame_index=330).hit_count.sum() == 0


def test_volume_reverberation_through_the_point_spread_by_hand():
    # Imaging sonar, S_v = -55 dB, B = 20 kHz (7.5 cm), 3 deg uniform beams on 0.5 deg spacing, psf_extent 12. A
    # sample gathers the volume of its resolution cell: r^2 (Int D^2 dtheta) (2 sin 6 deg) (Int h^2 dr), with the
    # continuous integrals of the uniform patterns truncated at +-12 resolutions (beam widths):
    # Int h^2 dr = c / (2B) / 0.88589 * Int_-X^X sinc^2 (X = 12 x 0.88589) = 4.193 cm (not the 2.5 cm bin), and
    # Int D^2 dtheta = 3.358 deg (not the 0.5 deg beam spacing); level SL - 40 log r - 2 alpha r + S_v + 10 log10 V.
    sv, alpha, ext = -55.0, 0.15, 12.0
    cfg = ImagingSonarConfig(**{**QUIET, "volume_scattering": sv, "bandwidth": 20000.0, "beam_width": 3.0,
                                "psf_extent": ext}, multiplicative_sigma=0.0, additive_sigma=0.0,
                             horizontal_fov=60.0, vertical_fov=12.0, n_beams=120, rays_per_beam=1, elevation_rays=32,
                             min_range=2.0, max_range=10.0, range_bins=400, absorption=alpha)
    res = ImagingSonar(cfg, device="cpu").render(far_quad(), np.array([0.0, 0, 0, 0, 0, 0, 1])).numpy()
    xs = np.linspace(-ext * 0.885893, ext * 0.885893, 400001)
    range_cell = 1500.0 / (2 * 20000.0) / 0.885893 * np.trapezoid(np.sinc(xs) ** 2, xs)
    aperture = 0.442946 / math.sin(math.radians(1.5))
    th = np.linspace(-ext * math.radians(3.0), ext * math.radians(3.0), 400001)
    bearing_cell = np.trapezoid(np.sinc(aperture * np.sin(th)) ** 2, th)
    assert range_cell == pytest.approx(0.04193, rel=1e-3) and math.degrees(bearing_cell) == pytest.approx(3.358, rel=1e-3)
    r = cfg.ranges().astype(np.float64)
    want = (SL - 40 * np.log10(r) - 2 * alpha * r + sv
            + db(r * r * bearing_cell * 2 * math.sin(math.radians(6.0)) * range_cell))
    centre = res["clean_intensity"][0][:, 40:80].astype(np.float64).mean(axis=1)   # beams away from the fan's edges
    assert db(centre) == pytest.approx(want, abs=0.05)


def lambert_sphere_sums(a: float, r: float, alpha: float) -> tuple[float, float]:
    """(Int mu-less cos^2 psi dA, Int cos^2 psi 10^(-2 alpha R / 10) dA / R^4) over the part of a sphere of radius a
    (m) that a point sensor at distance r (m) from its centre sees: psi is the angle between the surface normal and
    the line of sight to the sensor, R the distance to it (the hemisphere formula 2 pi a^2 / 3 is its r -> inf
    limit)."""
    th = np.linspace(0.0, math.pi / 2, 200001)          # polar angle on the sphere from the axis to the sensor
    px, py = r - a * np.cos(th), a * np.sin(th)
    big_r = np.hypot(px, py)
    cos_psi = np.clip((np.cos(th) * px - np.sin(th) * py) / big_r, 0.0, None)
    area = 2.0 * math.pi * a * a * np.sin(th)
    cos2 = cos_psi**2 * area
    return float(np.trapezoid(cos2, th)), float(np.trapezoid(cos2 * 10 ** (-0.2 * alpha * big_r) / big_r**4, th))


def test_lambert_sphere_echo_level_to_a_tenth_of_a_db_with_francois_garrison_absorption():
    # Sphere a = 0.15 m, S = -8 dB, 1.2 MHz Francois-Garrison absorption (10 C, 35 PSU, 0 m, pH 8: 0.4954 dB/m =
    # 0.116 + 47.75 + 447.6 dB/km) at 3 and 8 m. At finite range the sensor sees less than the lit hemisphere and at
    # other angles: Int cos^2 psi dA = 0.334 dB (3 m) and 0.123 dB (8 m) under 2 pi a^2 / 3 (lambert_sphere_sums).
    # The echo's total is SL mu Int cos^2 psi 10^(-2 alpha R / 10) / R^4 dA; after 40 log r + 2 alpha r TVG it is
    # SL mu Int cos^2 psi dA at any range (the 1 dB allowance covers the hemisphere formula; the chain is
    # within 0.002 dB of the exact integral here; allowed 0.05 dB).
    from oceansim_py.sensors.acoustic.absorption import francois_garrison

    a, mu = 0.15, 10 ** -0.8
    alpha = francois_garrison(1.2e6, 10.0, 35.0, 0.0, 8.0)
    assert alpha == pytest.approx(0.4954, abs=2e-4)
    for r in (3.0, 8.0):
        cfg = ImagingSonarConfig(**QUIET, multiplicative_sigma=0.0, additive_sigma=0.0, frequency=1.2e6,
                                 absorption_model="francois_garrison", depth=0.0, horizontal_fov=8.0,
                                 vertical_fov=8.0, n_beams=32, rays_per_beam=12, elevation_rays=384, min_range=1.0,
                                 max_range=10.0, range_bins=600)
        scene = scene_of(("sphere", sphere_mesh(a, [r, 0.0, 0.0]), dict(scattering_strength=-8.0)))
        seen, echo = lambert_sphere_sums(a, r, alpha)
        raw = ImagingSonar(cfg, device="cpu").render(scene, LEVEL).numpy()["clean_intensity"].astype(np.float64)
        assert db(raw.sum()) == pytest.approx(SL + db(mu * echo), abs=0.05)
        tvg = ImagingSonar(cfg.replace(tvg="40log"), device="cpu").render(scene, LEVEL).numpy()["clean_intensity"]
        assert db(tvg.astype(np.float64).sum()) == pytest.approx(SL + db(mu * seen), abs=0.05)


def sphere_mesh(radius: float, centre):
    import trimesh

    from oceansim_py.scene import TriangleMesh

    s = trimesh.creation.icosphere(subdivisions=5, radius=radius)
    return TriangleMesh(np.asarray(s.vertices) + np.asarray(centre), np.asarray(s.faces))
