"""The multibeam's device model (model "device", docs/PHYSICS.md §1b) against numbers computed by hand: sonar
equation, receiver noise, volume reverberation, TVG, range and bearing point spread, speckle, presets."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from conftest import make_scene, quad
from oceansim_py.errors import ConfigError
from oceansim_py.scene import TriangleMesh
from oceansim_py.sensors.acoustic.presets import MULTIBEAM_DEVICE_PRESETS
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

SL = 200.0

#: A bare device model: no noise, reverberation or TVG (each test switches on what it checks).
BARE = dict(model="device", source_level=SL, noise_level=None, volume_scattering=None, tvg="none",
            absorption_model="fixed", absorption=0.0, elevation_directivity=False, psf_extent=6.0)

#: kappa: the range response sinc(kappa B t) has intensity -3 dB width 1 / B (sinc^2(0.44295) = 1/2).
KAPPA = 2 * 0.44294647


def pitched(deg: float, position=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Pose [p, q] of a sensor pitched down by ``deg`` (rotation +deg about y: boresight towards -z)."""
    t = math.radians(deg)
    return np.array([*position, 0.0, math.sin(t / 2), 0.0, math.cos(t / 2)])


def db(x):
    return 10.0 * np.log10(x)


def render(cfg: MultibeamSonarConfig, scene, pose, **kw) -> dict[str, np.ndarray]:
    return MultibeamSonar(cfg, device="cpu").render(scene, pose, **kw).numpy()


def half_width(p: np.ndarray) -> float:
    """Lag (samples, interpolated) where a profile normalised to 1 at index 0 first falls to 1/2."""
    k = int(np.nonzero(p < 0.5)[0][0])
    return k - 1 + (p[k - 1] - 0.5) / (p[k - 1] - p[k])


def width(profile: np.ndarray) -> float:
    """-3 dB full width (samples) of a profile around its peak."""
    p = profile / profile.max()
    c = int(np.argmax(p))
    return half_width(p[c::-1]) + half_width(p[c:])


def far_quad():
    """A small quad behind the sensor: a scene the fan never sees (empty water)."""
    return make_scene(("far", quad([-50.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1), 0.5))


# -- point spread ----------------------------------------------------------------------------------------------

def test_preset_point_target_range_width_is_c_over_2b():
    # The P900 preset: datasheet range resolution 2.5 cm -> B = 30 kHz (the -3 dB bandwidth, not DAVE's Gaussian
    # b = 29.9 kHz, whose -3 dB bandwidth is 11.2 kHz). A 10 cm plate square to the beam at 5 m (all its points
    # within 0.25 mm in range), sampled at 20 B: the range response's -3 dB width is c / (2B) = 2.5 cm.
    cfg = MultibeamSonarConfig.preset("blueview_p900", noise_level=None, volume_scattering=None, tvg="none",
                                      sample_rate=600e3, min_range=4.8, max_range=5.2)
    assert cfg.bandwidth == 30000.0
    scene = make_scene(("plate", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 0.1), 0.5))
    img = render(cfg, scene, pitched(0.0))["clean_intensity"][0].astype(np.float64)
    beam = int(np.argmax(img.max(axis=0)))
    step = cfg.sound_speed / (2 * cfg.fs)
    assert width(img[:, beam]) * step == pytest.approx(0.025, rel=0.05)


def test_point_target_bearing_response_is_the_beam_pattern():
    # A 6 mm plate at 5 m on the centre of beam 80 of 160 over 20 deg (beams 0.125 deg apart: the next beams' rays
    # pass 1.1 cm away): only beam 80 holds it before the beam pattern. Its row across beams is the uniform line
    # array's |D|^2: -3 dB width = the 1.5 deg beam width, first side lobe -13.26 dB.
    y = -5.0 * math.tan(math.radians(0.0625))
    scene = make_scene(("plate", quad([5.0, y, 0.0], [-1.0, 0.0, 0.0], 0.006), 0.5))
    cfg = MultibeamSonarConfig(**BARE, fov=20.0, n_beams=160, beam_width=1.5, elevation_fov=4.0, rays_per_beam=512,
                               jitter=False, min_range=4.5, max_range=5.5, bandwidth=20000.0)
    img = render(cfg, scene, pitched(0.0))["clean_intensity"][0].astype(np.float64)
    r0, b0 = np.unravel_index(np.argmax(img), img.shape)
    assert b0 == 80
    row = img[r0]
    assert width(row) * 20.0 / 160 == pytest.approx(1.5, rel=0.05)
    right = db(np.maximum(row[b0:] / row.max(), 1e-30))
    null = int(np.nonzero(np.diff(right) > 0)[0][0])
    assert right[null:].max() == pytest.approx(-13.26, abs=0.5)


@pytest.mark.parametrize("taper, sidelobe_level, beam_width, first_lobe", [
    ("hann", -30.0, 2.0, -31.47), ("chebyshev", -25.0, 2.0, -25.0), ("chebyshev", -40.0, 1.5, -40.0)])
def test_tapered_receive_array_keeps_its_beam_width_and_side_lobe_level(taper, sidelobe_level, beam_width, first_lobe):
    # As the uniform case above, beams 0.1 deg apart: the row across beams through a 6 mm plate on beam 100 is the
    # tapered array's |D|^2, whose -3 dB width is the beam width whatever the taper, with the taper's first side
    # lobe (Hann -31.5 dB; Dolph-Chebyshev: every side lobe at sidelobe_level).
    y = -5.0 * math.tan(math.radians(0.05))
    scene = make_scene(("plate", quad([5.0, y, 0.0], [-1.0, 0.0, 0.0], 0.006), 0.5))
    cfg = MultibeamSonarConfig(**{**BARE, "beam_taper": taper, "sidelobe_level": sidelobe_level, "psf_extent": 10.0},
                               fov=20.0, n_beams=200, beam_width=beam_width, elevation_fov=4.0, rays_per_beam=256,
                               jitter=False, min_range=4.5, max_range=5.5, bandwidth=20000.0)
    img = render(cfg, scene, pitched(0.0))["clean_intensity"][0].astype(np.float64)
    r0, b0 = np.unravel_index(np.argmax(img), img.shape)
    assert b0 == 100
    row = img[r0]
    assert width(row) * 20.0 / 200 == pytest.approx(beam_width, rel=0.01)
    right = db(np.maximum(row[b0:] / row.max(), 1e-30))
    null = int(np.nonzero(np.diff(right) > 0)[0][0])
    assert right[null:].max() == pytest.approx(first_lobe, abs=0.3)


def test_point_target_peaks_at_its_range_on_the_sample_times():
    # Samples at r_n = min_range + n c / (2 fs): c = 1480 m/s, fs = 10 B = 500 kHz -> 1.48 mm steps from 3.0 m. A 4 cm
    # plate square to the beam at 3.3 m: its range response peaks at 3.3 m (parabolic interpolation of the three
    # samples around the peak, within 0.05 c / (2B) = 0.74 mm) with -3 dB width c / (2 B) = 1.48 cm.
    c, b = 1480.0, 50000.0
    cfg = MultibeamSonarConfig(**{**BARE, "sound_speed": c}, fov=10.0, n_beams=20, beam_width=1.0, elevation_fov=4.0,
                               rays_per_beam=64, min_range=3.0, max_range=3.6, bandwidth=b, sample_rate=10 * b,
                               jitter=False, beam_pattern=False)
    scene = make_scene(("plate", quad([3.3, 0.0, 0.0], [-1.0, 0.0, 0.0], 0.04), 0.5))
    res = render(cfg, scene, pitched(0.0))
    np.testing.assert_allclose(res["ranges"], 3.0 + np.arange(406) * 0.00148, rtol=1e-6)
    profile = res["clean_intensity"][0].astype(np.float64)
    profile = profile[:, int(np.argmax(profile.max(axis=0)))]
    k = int(np.argmax(profile))
    p0, p1, p2 = profile[k - 1:k + 2]
    peak = res["ranges"][k] + 0.5 * (p0 - p2) / (p0 - 2 * p1 + p2) * 0.00148
    assert peak == pytest.approx(3.3, abs=0.05 * c / (2 * b))
    assert width(profile) * 0.00148 == pytest.approx(c / (2 * b), rel=0.01)


# -- sonar equation and TVG ------------------------------------------------------------------------------------

def sphere_scene(radius: float, centre, reflectivity: float):
    s = trimesh.creation.icosphere(subdivisions=5, radius=radius)
    return make_scene(("sphere", TriangleMesh(np.asarray(s.vertices) + np.asarray(centre), np.asarray(s.faces)),
                       reflectivity))


def test_sphere_echo_level_follows_the_sonar_equation_and_40log_tvg_levels_it():
    # Lambert sphere mu = 0.5, a = 0.1 m, alpha = 0.1 dB/m: TS = 10 log10(mu 2 pi a^2 / 3) = -19.80 dB (the integral
    # of mu cos^2 psi over the lit hemisphere). Without the beam pattern, the expected intensity summed over the
    # image is sum_i I_i * sum_n h^2, and sum_n sinc^2(s (n - c)) = 1 / s for a band-limited sinc (s < 1) less the
    # truncation's tail at +-psf_extent = 6 resolutions (integral of sinc^2 over +-5.315: 0.981), so
    # EL = 10 log10(total * s / 0.981) = SL - 40 log10 r - 2 alpha r + TS, r = r_sphere - a / 2.
    a, mu, alpha = 0.1, 0.5, 0.1
    base = dict(BARE, absorption=alpha, fov=6.0, n_beams=24, azimuth_rays_per_beam=16, elevation_fov=6.0,
                rays_per_beam=384, beam_pattern=False, min_range=1.0, max_range=12.0, bandwidth=20000.0)
    levels = []
    for r in (5.0, 10.0):
        scene = sphere_scene(a, [r, 0.0, 0.0], mu)
        cfg = MultibeamSonarConfig(**base)
        total = render(cfg, scene, pitched(0.0))["clean_intensity"].astype(np.float64).sum()
        r_echo = r - a / 2
        ts = db(mu * 2.0 * math.pi * a * a / 3.0)
        assert db(total * cfg.sinc_rate / 0.981) == pytest.approx(
            SL - 40 * math.log10(r_echo) - 2 * alpha * r_echo + ts, abs=1.0)
        tvg = render(cfg.replace(tvg="40log"), scene, pitched(0.0))["clean_intensity"].astype(np.float64).sum()
        levels.append(db(tvg))
    assert levels[0] == pytest.approx(levels[1], abs=0.3)


def test_floor_is_level_in_range_after_30log_tvg():
    # A flat floor 1 m below a sensor pitched down 30 deg, centre beam (bearing 0), no beam pattern, alpha = 0.
    # A ray at sensor elevation e meets the floor at depression d = 30 deg - e, range r = h / sin d, incidence
    # cos psi = sin d, and |dr / dd| = r / tan d. Rays of solid angle cos e de dtheta spread their echoes
    # SL mu cos psi (cos e de dtheta) / r^2 over dr, so the expected intensity per metre is
    # SL mu sin d tan d cos e dtheta / r^3, and a sample sees it times L_eff (the integral of h^2 over range):
    # after 30 log r TVG, clean / (sin d tan d cos e) = SL mu dtheta L_eff at every range (the peer image of the
    # same floor falls by ~30 log r).
    mu, h = 0.01, 1.0
    scene = make_scene(("floor", quad([10.0, 0.0, -h], [0.0, 0.0, 1.0], 80.0), mu))
    cfg = MultibeamSonarConfig(**{**BARE, "tvg": "30log"}, fov=9.0, n_beams=9, beam_width=1.0, elevation_fov=50.0,
                               rays_per_beam=2048, beam_pattern=False, jitter=False, min_range=1.5, max_range=8.0,
                               bandwidth=20000.0)
    res = render(cfg, scene, pitched(30.0))
    r = res["ranges"].astype(np.float64)
    d = np.arcsin(h / r)
    e = math.radians(30.0) - d
    level = db(res["clean_intensity"][0][:, 4] / (np.sin(d) * np.tan(d) * np.cos(e)))
    inside = (r > 2.0) & (r < 7.0)
    l_eff = cfg.sound_speed / (2 * cfg.bandwidth * KAPPA) * 0.981   # +-6 resolutions of sinc^2
    expect = SL + db(mu * math.radians(1.0) * l_eff)
    assert level[inside] == pytest.approx(np.full(inside.sum(), expect), abs=0.25)
    peer = MultibeamSonar(MultibeamSonarConfig(fov=9.0, n_beams=9, elevation_fov=50.0, rays_per_beam=2048,
                                               beam_pattern=False, min_range=1.5, max_range=8.0), device="cpu")
    ping = peer.render(scene, pitched(30.0)).numpy()
    rows = db(ping["intensity"][0][:, 4] + 1e-30)
    near, far = (ping["ranges"] > 2.0) & (ping["ranges"] < 3.0), (ping["ranges"] > 6.0) & (ping["ranges"] < 7.0)
    assert rows[near].mean() - rows[far].mean() > 10.0   # the peer's floor falls without a TVG


# -- receiver ------------------------------------------------------------------------------------------------

def test_empty_water_receiver_noise_is_exponential_at_the_set_level():
    cfg = MultibeamSonarConfig(**{**BARE, "noise_level": 60.0}, fov=60.0, n_beams=64, elevation_fov=10.0,
                               rays_per_beam=2, min_range=1.0, max_range=9.0, bandwidth=10000.0)
    img = render(cfg, far_quad(), pitched(0.0))["intensity"].ravel()
    assert img.size > 10000
    assert img.mean() == pytest.approx(1e6, rel=0.03)
    x = np.sort(img.astype(np.float64))
    n = x.size
    cdf = 1.0 - np.exp(-x / 1e6)
    ks = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert ks < 1.36 / math.sqrt(n)


def test_volume_reverberation_follows_the_sonar_equation():
    # RL_v = SL - 20 log r - 2 alpha r + S_v + 10 log10(Omega L_eff): Omega = dtheta * 2 sin(Phi / 2) (the beam's
    # solid angle), L_eff = c / (2 B kappa) * 0.981 (the range integral of h^2). With the beam pattern, the centre
    # beam gathers sum_k D(k dtheta)^2 beams = (theta_3dB / 0.886) / dtheta (the uniform array's equivalent
    # beam width lambda / L), less the pattern's tail beyond the fan (~1 %).
    sv, alpha = -60.0, 0.3
    cfg = MultibeamSonarConfig(**{**BARE, "volume_scattering": sv, "absorption": alpha}, fov=40.0, n_beams=200,
                               beam_width=2.0, elevation_fov=10.0, rays_per_beam=64, beam_pattern=False,
                               min_range=1.0, max_range=9.0, bandwidth=5000.0)
    res = render(cfg, far_quad(), pitched(0.0))
    r = res["ranges"].astype(np.float64)
    omega = math.radians(40.0) / 200 * 2.0 * math.sin(math.radians(5.0))
    l_eff = 1500.0 / (2 * 5000.0 * KAPPA) * 0.981
    expect = SL - 20 * np.log10(r) - 2 * alpha * r + sv + db(omega * l_eff)
    assert db(res["clean_intensity"][0].mean(axis=1)) == pytest.approx(expect, abs=0.02)
    got = res["intensity"][0][:100].reshape(10, -1).mean(axis=1)   # blocks of 10 rows: 2000 exponential samples
    want = res["clean_intensity"][0][:100].reshape(10, -1).mean(axis=1)
    assert np.abs(db(got / want)).max() < 0.5
    mixed = render(cfg.replace(beam_pattern=True), far_quad(), pitched(0.0))["clean_intensity"][0]
    gathered = (2.0 / 0.886) / (40.0 / 200)
    assert (mixed[:, 100] / res["clean_intensity"][0][:, 100]).mean() == pytest.approx(gathered, rel=0.03)


# -- speckle ---------------------------------------------------------------------------------------------------

FLOOR = dict(fov=40.0, n_beams=96, beam_width=1.2, elevation_fov=30.0, rays_per_beam=192, azimuth_rays_per_beam=4,
             min_range=2.5, max_range=7.0, bandwidth=25000.0, absorption=0.2)


@pytest.fixture(scope="module")
def floor_scene():
    return make_scene(("floor", quad([10.0, 0.0, -2.0], [0.0, 0.0, 1.0], 80.0), 0.01))


@pytest.fixture(scope="module")
def floor_ping(floor_scene):
    cfg = MultibeamSonarConfig(**BARE | FLOOR)
    return cfg, render(cfg, floor_scene, pitched(25.0))


def speckle(res, rows=slice(60, 280), cols=slice(20, 76)):
    """Intensity over its expectation, well inside the floor's footprint."""
    return (res["intensity"][0][rows, cols] / res["clean_intensity"][0][rows, cols]).astype(np.float64)


def test_floor_speckle_scintillation_is_one(floor_ping):
    x = speckle(floor_ping[1])
    assert x.var() / x.mean() ** 2 == pytest.approx(1.0, abs=0.15)
    assert x.mean() == pytest.approx(1.0, abs=0.1)


def test_speckle_grain_is_one_resolution_cell(floor_ping):
    # The intensity autocorrelation of speckle through a flat band's sinc and a uniform array's pattern is the
    # point spread's intensity: full width at half maximum = c / (2B) = 3 cm (2 samples at fs = 2B) in range and
    # the 1.2 deg beam width (2.88 beams of 0.4167 deg) in bearing.
    cfg, res = floor_ping
    x = speckle(res) - 1.0

    def acf(a, axis):
        n = a.shape[axis]
        a = np.moveaxis(a, axis, -1)
        out = np.array([np.mean(a[..., : n - k] * a[..., k:]) for k in range(6)])
        return out / out[0]

    step = cfg.sound_speed / (2 * cfg.fs)
    assert 2 * half_width(acf(x, 0)) * step == pytest.approx(1500.0 / (2 * 25000.0), rel=0.3)
    assert 2 * half_width(acf(x, 1)) * 40.0 / 96 == pytest.approx(1.2, rel=0.3)


def test_speckle_is_static_for_a_static_pose_and_decorrelates_when_the_sensor_moves(floor_scene, floor_ping):
    cfg, a = floor_ping
    sonar = MultibeamSonar(cfg, device="cpu")
    b = sonar.render(floor_scene, pitched(25.0), frame_index=7).numpy()
    np.testing.assert_array_equal(a["intensity"], b["intensity"])   # no noise: the pattern is the surface's
    both = sonar.render(floor_scene, np.stack([pitched(25.0, (0.3, 0.0, 0.0)), pitched(25.0)])).numpy()
    np.testing.assert_array_equal(both["intensity"][1], a["intensity"][0])
    # 4 wavelengths (lambda = 2 mm at 750 kHz) sideways: the speckle decorrelates.
    moved = sonar.render(floor_scene, pitched(25.0, (0.0, 0.008, 0.0))).numpy()
    assert abs(np.corrcoef(speckle(a).ravel(), speckle(moved).ravel())[0, 1]) < 0.3


def test_noise_changes_with_the_frame_and_not_with_the_batch(floor_scene):
    cfg = MultibeamSonarConfig(**{**BARE, "noise_level": 120.0} | FLOOR)
    sonar = MultibeamSonar(cfg, device="cpu")
    one = sonar.render(floor_scene, pitched(25.0), frame_index=3).numpy()["intensity"]
    two = sonar.render(floor_scene, np.stack([pitched(25.0)] * 2), frame_index=2).numpy()["intensity"]
    np.testing.assert_array_equal(two[1], one[0])
    assert not np.array_equal(two[0], one[0])


# -- gain, display, presets, bad input -------------------------------------------------------------------------

def test_tvg_fixed_gain_and_automatic_gain():
    # Noise 60 dB re 1 uPa^2, 20 log r + 2 alpha r TVG and +6 dB: row means 60 + 20 log r + 2 alpha r + 6 (0.4 dB).
    alpha = 0.5
    cfg = MultibeamSonarConfig(**{**BARE, "noise_level": 60.0, "tvg": "20log", "tvg_gain": 6.0, "absorption": alpha},
                               fov=60.0, n_beams=1024, elevation_fov=10.0, rays_per_beam=1, min_range=1.0,
                               max_range=9.0, bandwidth=1000.0)
    res = render(cfg, far_quad(), pitched(0.0))
    r = res["ranges"]
    rows = db(res["intensity"][0].mean(axis=1))
    assert rows[r > 1.5] == pytest.approx((60.0 + 20 * np.log10(r) + 2 * alpha * r + 6.0)[r > 1.5], abs=0.4)
    assert res["db"][0] == pytest.approx(db(res["intensity"][0]), abs=1e-4)
    agc = render(cfg.replace(agc_level=20.0), far_quad(), pitched(0.0))
    assert agc["intensity"][0].mean() == pytest.approx(100.0, rel=1e-4)
    assert agc["db"][0] == pytest.approx(db(agc["intensity"][0]), abs=1e-4)


def test_tvg_laws_scale_the_same_noise_by_k_log_r_plus_2_alpha_r():
    # The receiver noise does not depend on the gain, so each law's image over the law-"none", 0 dB image is its
    # gain exactly, sample by sample: 10^((k log10 r_n + 2 alpha r_n + g) / 10) at the sample ranges r_n, alpha
    # one way in dB/m; law "none" is the fixed gain alone (no absorption term).
    alpha, g = 0.35, -12.0
    base = MultibeamSonarConfig(**{**BARE, "noise_level": 50.0, "absorption": alpha}, fov=30.0, n_beams=32,
                                elevation_fov=10.0, rays_per_beam=1, min_range=0.7, max_range=6.0, bandwidth=1500.0)
    ref = render(base, far_quad(), pitched(0.0))
    r = ref["ranges"].astype(np.float64)
    for law, k in (("none", 0.0), ("20log", 20.0), ("30log", 30.0), ("40log", 40.0)):
        img = render(base.replace(tvg=law, tvg_gain=g), far_quad(), pitched(0.0))["intensity"][0].astype(np.float64)
        want = k * np.log10(r) + (2 * alpha * r if k else 0.0) + g
        np.testing.assert_allclose(db(img / ref["intensity"][0]), np.broadcast_to(want[:, None], img.shape),
                                   atol=1e-4)


def test_francois_garrison_absorption_reaches_the_echo_and_the_tvg():
    # 2.1 MHz in water at 16 deg C, 34 PSU, 30 m, pH 8: alpha = 1.1779 dB/m one way (Francois-Garrison: 0.139
    # boric + 71.74 MgSO4 + 1105.97 pure water dB/km). A 1 cm plate on the beam axis at 2 m and at 6 m: without
    # TVG its echo falls by 40 log10 3 + 2 alpha 4 = 19.08 + 9.42 = 28.51 dB; after 40 log r + 2 alpha r it is level.
    water = dict(absorption_model="francois_garrison", frequency=2.1e6, temperature=16.0, salinity=34.0, depth=30.0,
                 ph=8.0)
    levels = {}
    for law in ("none", "40log"):
        for r in (2.0, 6.0):
            scene = make_scene(("plate", quad([r, 0.0, 0.0], [-1.0, 0.0, 0.0], 0.01), 0.5))
            cfg = MultibeamSonarConfig(**{**BARE, **water, "tvg": law}, fov=6.0, n_beams=21, azimuth_rays_per_beam=48,
                                       beam_width=0.5, elevation_fov=1.5, rays_per_beam=384, min_range=r - 0.2,
                                       max_range=r + 0.2, bandwidth=60e3, sample_rate=600e3, jitter=False)
            levels[law, r] = db(render(cfg, scene, pitched(0.0))["clean_intensity"][0].astype(np.float64).max())
    assert cfg.absorption_db_per_m(0.0) == pytest.approx(1.1779, rel=1e-4)
    assert levels["none", 2.0] - levels["none", 6.0] == pytest.approx(28.51, abs=0.3)
    assert levels["40log", 2.0] == pytest.approx(levels["40log", 6.0], abs=0.3)


def test_device_display_is_the_db_window(floor_scene):
    cfg = MultibeamSonarConfig(**{**BARE, "display_floor": 100.0, "dynamic_range": 50.0} | FLOOR)
    res = MultibeamSonar(cfg, device="cpu").render(floor_scene, pitched(25.0))
    img = res.to_uint8()[0]
    v = res.intensity.numpy()[0].astype(np.float64)
    want = np.rint(255 * np.clip((db(np.maximum(v, 1e-30)) - 100.0) / 50.0, 0, 1)).astype(np.uint8)
    np.testing.assert_array_equal(img, want)
    assert res.to_rgb()[0].shape == img.shape + (3,)


@pytest.mark.parametrize("name", sorted(MULTIBEAM_DEVICE_PRESETS))
def test_multibeam_device_presets_validate_render_and_state_their_source(name, floor_scene):
    values, source = MULTIBEAM_DEVICE_PRESETS[name]
    assert "datasheet" in source or "DAVE" in source
    cfg = MultibeamSonarConfig.preset(name, max_range=6.0)
    assert cfg.model == "device" and cfg.tvg == "30log"
    # The -3 dB bandwidth of the datasheet's range resolution: B = c / (2 delta_r).
    assert cfg.bandwidth == pytest.approx(1500.0 / (2 * cfg.sound_speed / (2 * cfg.bandwidth)))
    res = render(cfg, floor_scene, pitched(25.0))
    assert np.isfinite(res["intensity"]).all() and (res["intensity"] > 0).all()
    assert (res["clean_intensity"] > 0).any()
    assert MultibeamSonarConfig.preset(name + "_peer").model == "peer"


@pytest.mark.parametrize("field, value, match", [
    ("method", "spectral", "method"), ("min_range", 0.0, "min_range"), ("pulse_taper", "hann", "pulse_taper"),
    ("tvg", "35log", "tvg"), ("beam_taper", "kaiser", "beam_taper"), ("sidelobe_level", 3.0, "sidelobe_level"),
    ("noise_level", 400.0, "noise_level"), ("bandwidth", -1.0, "bandwidth"), ("display", "linear", "display")])
def test_bad_device_input_names_the_field(field, value, match):
    with pytest.raises(ConfigError, match=f"MultibeamSonarConfig.{match}"):
        MultibeamSonarConfig(**{**BARE, field: value})


@pytest.mark.parametrize("field, value, valid", [
    ("temperature", 45.0, r"\[-2, 40\] deg C"), ("temperature", -3.0, r"\[-2, 40\] deg C"),
    ("salinity", -0.5, r"\[0, 45\] PSU"), ("depth", 12000.0, r"\[0, 11000\] m"), ("ph", 5.5, r"\[6, 9\]"),
    ("sidelobe_level", 1e-9, r"\[-120, 0\) dB"), ("noise_level", -300.0, r"\[-100, source_level")])
def test_water_outside_the_absorption_formula_and_bad_levels_name_the_field_and_range(field, value, valid):
    with pytest.raises(ConfigError, match=f"MultibeamSonarConfig.{field}: must lie in {valid}"):
        MultibeamSonarConfig(**{**BARE, "absorption_model": "francois_garrison", field: value})


@pytest.mark.parametrize("field, extra", [("beam_width", dict(beam_width=170.0, fov=175.0)),
                                          ("elevation_fov", dict(elevation_fov=170.0, elevation_directivity=True))])
def test_a_beam_wider_than_a_half_wavelength_array_forms_is_refused_naming_the_field(field, extra):
    # A uniform line array's -3 dB width is 2 asin(x_half / (L / lambda)), x_half = 0.44295: at L = lambda / 2 it is
    # 2 asin(0.88589) = 124.74 deg, the widest it forms (wider, the sensor failed to build, naming no field); the
    # Hann taper's wider main lobe reaches 180 deg.
    with pytest.raises(ConfigError, match=rf"MultibeamSonarConfig.{field}: must lie in \(0, 124.74\] degrees"):
        MultibeamSonarConfig(**{**BARE, **extra})
    MultibeamSonar(MultibeamSonarConfig(**{**BARE, **extra, "beam_taper": "hann", "elevation_taper": "hann"}),
                   device="cpu")
