"""The acoustic device chain (PHYSICS.md §1b, docs/PHYSICS_ACOUSTIC_CHAIN.md), on the imaging sonar, against
numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh
import warp as wp

from conftest import make_scene, quad
from oceansim_py.errors import ConfigError
from oceansim_py.kernels import acoustic_chain as kc
from oceansim_py.kernels.random import stream_key
from oceansim_py.scene import TriangleMesh
from oceansim_py.sensors.acoustic.absorption import francois_garrison, francois_garrison_terms
from oceansim_py.sensors.acoustic.beam_pattern import (LineArray, first_sidelobe_db, half_power_x, range_kernel,
                                                       taper_weights)
from oceansim_py.sensors.acoustic.chain import _host_key
from oceansim_py.sensors.acoustic.display import apply_colormap, db_window_to_uint8
from oceansim_py.sensors.acoustic.presets import IMAGING_SONAR_DEVICE_PRESETS, receiver_noise_level
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig

SL = 200.0

#: A bare device chain: no point spread, noise, reverberation or TVG (each test switches on what it checks).
BARE = dict(model="device", multiplicative_sigma=0.0, additive_sigma=0.0, normalisation="none", source_level=SL,
            noise_level=None, volume_scattering=None, bandwidth=0.0, beam_width=0.0, tvg="none")


def pitched(deg: float, position=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Pose [p, q] of a sensor pitched down by ``deg`` (rotation +deg about y: boresight towards -z)."""
    t = math.radians(deg)
    return np.array([*position, 0.0, math.sin(t / 2), 0.0, math.cos(t / 2)])


def db(x):
    return 10.0 * np.log10(x)


# -- absorption ----------------------------------------------------------------------------------------------

def test_francois_garrison_terms_by_hand():
    # f = 1000 kHz, T = 10, S = 35, D = 0, pH = 8.  c = 1412 + 32.1 + 41.65 = 1485.75 m/s.
    # Boric: A1 = 8.86 / 1485.75 * 10^(6.24 - 5) = 0.10364; f1 = 2.8 * 10^(4 - 1245/283) = 1.1166 kHz;
    #        A1 f1 f^2 / (f1^2 + f^2) = 0.11572 dB/km.
    # MgSO4: A2 = 21.44 * 35 / 1485.75 * 1.25 = 0.63131; f2 = 8.17 * 10^(8 - 1990/283) = 75.937 kHz;
    #        A2 f2 f^2 / (f2^2 + f^2) = 47.663 dB/km.
    # Water: A3 = 4.937e-4 - 2.59e-4 + 9.11e-5 - 1.5e-5 = 3.108e-4; A3 f^2 = 310.8 dB/km.
    boric, mgso4, water = francois_garrison_terms(1e6, 10.0, 35.0, 0.0, 8.0)
    assert boric == pytest.approx(0.11572, rel=1e-3)
    assert mgso4 == pytest.approx(47.663, rel=1e-3)
    assert water == pytest.approx(310.8, rel=1e-6)
    assert francois_garrison(1e6, 10.0, 35.0, 0.0, 8.0) == pytest.approx(0.35858, rel=1e-3)


def test_francois_garrison_depth_salinity_ph_and_warm_water_terms_by_hand():
    # The pressure factors P2, P3, the T > 20 deg C water branch, pH and salinity, which the 10 deg C surface case
    # above leaves at 1 or unused. f = 50 kHz, T = 24, S = 31, D = 2500 m, pH = 7.8 (theta = 297 K):
    # c = 1412 + 77.04 + 36.89 + 41.75 = 1567.68 m/s.
    # Boric: A1 = 8.86 / 1567.68 * 10^(6.084 - 5) = 0.068577; f1 = 2.8 sqrt(31/35) 10^(4 - 1245/297) = 1.69389 kHz;
    #        A1 f1 f^2 / (f1^2 + f^2) = 0.116028 dB/km.
    # MgSO4: A2 = 21.44 * 31 / 1567.68 * 1.6 = 0.678343; P2 = 1 - 0.3425 + 0.03875 = 0.69625;
    #        f2 = 8.17 10^(8 - 1990/297) / (1 - 0.0072) = 164.068 kHz; A2 P2 f2 f^2 / (f2^2 + f^2) = 6.58507 dB/km.
    # Water (T > 20): A3 = 3.964e-4 - 2.7504e-4 + 8.352e-5 - 8.9856e-6 = 1.95894e-4; P3 = 1 - 0.09575 + 0.0030625
    #        = 0.9073125; A3 P3 f^2 = 0.444344 dB/km.
    boric, mgso4, water = francois_garrison_terms(50e3, 24.0, 31.0, 2500.0, 7.8)
    assert boric == pytest.approx(0.116028, rel=1e-5)
    assert mgso4 == pytest.approx(6.58507, rel=1e-5)
    assert water == pytest.approx(0.444344, rel=1e-5)
    # Cold and deep, T <= 20 branch: f = 200 kHz, T = 2, S = 34, D = 3000 m, pH = 7.9: c = 1508.98 m/s,
    # f1 = 0.819579 kHz, f2 = 47.4942 kHz, P2 = 0.6448, A3 = 4.45424e-4, P3 = 0.88951; terms 0.0698769 (boric),
    # 14.7045 (MgSO4) and 15.8484 (water) dB/km: 30.6227 dB/km = 0.0306227 dB/m.
    assert francois_garrison(200e3, 2.0, 34.0, 3000.0, 7.9) == pytest.approx(0.0306227, rel=1e-5)


def test_francois_garrison_agrees_with_ainslie_mccolm():
    # Ainslie & McColm (1998) simplified fit, T = 10 deg C, S = 35, z = 0, pH = 8 (dB/km, f in kHz):
    # 0.106 f1 f^2/(f1^2+f^2) e^((pH-8)/0.56) + 0.52 (1+T/43)(S/35) f2 f^2/(f2^2+f^2) + 0.00049 f^2 e^(-T/27),
    # f1 = 0.78 sqrt(S/35) e^(T/26), f2 = 42 e^(T/17). The two agree within ~10 % from 10 kHz to 1 MHz.
    for f in (10.0, 100.0, 300.0, 1000.0):
        f1, f2 = 0.78 * math.exp(10 / 26), 42.0 * math.exp(10 / 17)
        am = (0.106 * f1 * f * f / (f1 * f1 + f * f) + 0.52 * (1 + 10 / 43) * f2 * f * f / (f2 * f2 + f * f)
              + 0.00049 * f * f * math.exp(-10 / 27)) / 1000.0
        assert francois_garrison(f * 1e3, 10.0, 35.0, 0.0, 8.0) == pytest.approx(am, rel=0.12)


def test_francois_garrison_rejects_out_of_range_water():
    with pytest.raises(ConfigError, match="ph"):
        francois_garrison(1e6, ph=12.0)


# -- beam patterns and point-spread kernels --------------------------------------------------------------------

def test_taper_side_lobes_and_beam_width():
    # Uniform aperture: |sin(pi x)/(pi x)|^2, first side lobe -13.26 dB, -3 dB at x = 0.443 (0.886 lambda / L).
    assert first_sidelobe_db(taper_weights("uniform")) == pytest.approx(-13.26, abs=0.05)
    assert half_power_x(taper_weights("uniform")) == pytest.approx(0.443, abs=0.002)
    assert first_sidelobe_db(taper_weights("hann")) == pytest.approx(-31.5, abs=0.2)
    assert first_sidelobe_db(taper_weights("chebyshev", -40.0)) == pytest.approx(-40.0, abs=0.05)
    a = LineArray(math.radians(1.0), "uniform")
    assert a.aperture_wavelengths == pytest.approx(0.886 / math.radians(1.0), rel=2e-3)
    assert a.amplitude(np.radians([0.5]))[0] ** 2 == pytest.approx(0.5, rel=1e-6)


def test_range_kernel_half_power_width():
    # delta_r = 1500 / (2 * 50 kHz) = 1.5 cm; taps every 1 mm: |h|^2 crosses 1/2 at +-7.5 taps.
    h = range_kernel(0.015, 0.001)
    p = h.astype(np.float64) ** 2
    c = p.size // 2
    assert p[c] == 1.0
    assert p[c + 7] > 0.5 > p[c + 8]


# -- the chain on rendered scenes ------------------------------------------------------------------------------

def sphere_scene(radius: float, centre, reflectivity: float):
    s = trimesh.creation.icosphere(subdivisions=5, radius=radius)
    mesh = TriangleMesh(np.asarray(s.vertices) + np.asarray(centre), np.asarray(s.faces))
    return make_scene(("sphere", mesh, reflectivity))


def test_sphere_echo_level_follows_the_sonar_equation():
    # Lambert sphere, mu = 0.5, a = 0.1 m at r = 5 m, alpha = 0.1 dB/m: TS = 10 log10(mu * 2 pi a^2 / 3)
    # (integral of mu cos^2 psi over the lit hemisphere, dA = 2 pi a^2 sin psi dpsi) = -19.80 dB;
    # EL = SL - 40 log10 r - 2 alpha r + TS = 200 - 27.96 - 1.0 - 19.80 = 151.24 dB (r of the echo ~ 4.95 m).
    a, mu, alpha = 0.1, 0.5, 0.1
    levels = []
    for r in (5.0, 10.0):
        cfg = ImagingSonarConfig(**{**BARE, "tvg": "40log"}, horizontal_fov=6.0, vertical_fov=6.0, n_beams=24,
                                 rays_per_beam=16, elevation_rays=384, min_range=1.0, max_range=12.0,
                                 range_bins=440, absorption=alpha)
        scene = sphere_scene(a, [r, 0.0, 0.0], mu)
        res = ImagingSonar(cfg, device="cpu").render(scene, pitched(0.0)).numpy()
        ts = db(mu * 2.0 * math.pi * a * a / 3.0)
        r_echo = r - a / 2
        raw = ImagingSonar(cfg.replace(tvg="none"), device="cpu").render(scene, pitched(0.0)).numpy()
        el = db(raw["clean_intensity"].sum())
        assert el == pytest.approx(SL - 40 * math.log10(r_echo) - 2 * alpha * r_echo + ts, abs=1.0)
        levels.append(db(res["clean_intensity"].sum()))
    # After 40 log r + 2 alpha r TVG the sphere has the same level at 5 m and 10 m.
    assert levels[0] == pytest.approx(levels[1], abs=0.3)


def test_extended_target_level_after_20log_tvg_is_range_independent():
    # A wall filling the beam at normal incidence: each ray returns SL mu cos(psi) dOmega r^-2 10^(-2 alpha r / 10),
    # so after 20 log r + 2 alpha r the image's total is SL mu sum(cos psi dOmega) at any range.
    cfg = ImagingSonarConfig(**{**BARE, "tvg": "20log"}, horizontal_fov=20.0, vertical_fov=10.0, n_beams=40,
                             rays_per_beam=4, elevation_rays=64, min_range=1.0, max_range=10.0, range_bins=300,
                             absorption=0.2)
    totals = []
    for x in (3.0, 7.0):
        scene = make_scene(("wall", quad([x, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.3))
        totals.append(db(ImagingSonar(cfg, device="cpu").render(scene, pitched(0.0)).numpy()["clean_intensity"].sum()))
    assert totals[0] == pytest.approx(totals[1], abs=0.3)


def far_quad():
    """A small quad behind the sensor: a scene the fan never sees (empty water)."""
    return make_scene(("far", quad([-50.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1), 0.5))


def test_empty_water_receiver_noise_is_exponential_at_the_set_level():
    cfg = ImagingSonarConfig(**{**BARE, "noise_level": 60.0}, horizontal_fov=60.0, vertical_fov=10.0, n_beams=128,
                             rays_per_beam=1, elevation_rays=4, min_range=1.0, max_range=10.0, range_bins=256)
    img = ImagingSonar(cfg, device="cpu").render(far_quad(), pitched(0.0)).numpy()["intensity"].ravel()
    assert img.mean() == pytest.approx(1e6, rel=0.03)
    assert (img > 0).all()
    # Kolmogorov-Smirnov distance to the exponential CDF 1 - exp(-x / 1e6); 5 % critical value 1.36 / sqrt(n).
    x = np.sort(img.astype(np.float64))
    n = x.size
    cdf = 1.0 - np.exp(-x / 1e6)
    d = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert d < 1.36 / math.sqrt(n)


def test_volume_reverberation_follows_the_sonar_equation():
    # RL_v = SL - 40 log r - 2 alpha r + S_v + 10 log10(r^2 Omega dr): per bin, Omega = beam width in bearing x
    # sum over elevation rays of cos e de (= 2 sin(Phi / 2) to 1e-4), dr the range bin.
    sv, alpha = -60.0, 0.3
    cfg = ImagingSonarConfig(**{**BARE, "volume_scattering": sv}, horizontal_fov=40.0, vertical_fov=10.0,
                             n_beams=200, rays_per_beam=1, elevation_rays=64, min_range=1.0, max_range=9.0,
                             range_bins=64, absorption=alpha)
    res = ImagingSonar(cfg, device="cpu").render(far_quad(), pitched(0.0)).numpy()
    r = cfg.ranges().astype(np.float64)
    omega = math.radians(40.0) / 200 * 2.0 * math.sin(math.radians(5.0))
    expect = SL - 40 * np.log10(r) - 2 * alpha * r + sv + db(r * r * omega * cfg.range_resolution)
    assert db(res["clean_intensity"][0].mean(axis=1)) == pytest.approx(expect, abs=1e-3)
    # The speckled intensity averages to it: 8-row blocks of 1600 exponential samples, 2.5 % standard error.
    got = res["intensity"][0].reshape(8, -1).mean(axis=1)
    want = res["clean_intensity"][0].reshape(8, -1).mean(axis=1)
    assert np.abs(db(got / want)).max() < 0.5


FLOOR_CFG = dict(horizontal_fov=40.0, vertical_fov=30.0, n_beams=96, rays_per_beam=4, elevation_rays=192,
                 min_range=2.5, max_range=7.0, range_bins=200, absorption=0.2, bandwidth=25000.0, beam_width=1.2)


@pytest.fixture(scope="module")
def floor_scene():
    return make_scene(("floor", quad([10.0, 0.0, -2.0], [0.0, 0.0, 1.0], 80.0), 0.01))


def speckle(res, rows=slice(30, 190), cols=slice(20, 76)):
    """Intensity over its expectation in a region well inside the floor's footprint."""
    return (res["intensity"][0][rows, cols] / res["clean_intensity"][0][rows, cols]).astype(np.float64)


def test_coherent_speckle_scintillation_is_one(floor_scene):
    cfg = ImagingSonarConfig(**BARE | FLOOR_CFG | dict(bandwidth=25000.0, beam_width=1.2))
    x = speckle(ImagingSonar(cfg, device="cpu").render(floor_scene, pitched(25.0)).numpy())
    assert x.var() / x.mean() ** 2 == pytest.approx(1.0, abs=0.15)
    assert x.mean() == pytest.approx(1.0, abs=0.1)


def half_width(acf: np.ndarray) -> float:
    """Lag (in samples, interpolated) where a normalised autocorrelation first falls to 1/2."""
    k = int(np.nonzero(acf < 0.5)[0][0])
    return k - 1 + (acf[k - 1] - 0.5) / (acf[k - 1] - acf[k])


def test_speckle_grain_is_one_resolution_cell(floor_scene):
    # Intensity autocorrelation |rho|^2 of a uniform-taper point spread is the point spread's intensity: its
    # full width at half maximum is the resolution: c / (2B) = 3 cm = 1.333 range bins (2.25 cm), and the beam
    # width 1.2 deg = 2.88 beams (0.4167 deg).
    cfg = ImagingSonarConfig(**BARE | FLOOR_CFG)
    x = speckle(ImagingSonar(cfg, device="cpu").render(floor_scene, pitched(25.0)).numpy()) - 1.0
    def acf(a, axis):
        n = a.shape[axis]
        a = np.moveaxis(a, axis, -1)
        out = np.array([np.mean(a[..., : n - k] * a[..., k:]) for k in range(6)])
        return out / out[0]
    range_fwhm = 2 * half_width(acf(x, 0)) * cfg.range_resolution
    bearing_fwhm = 2 * half_width(acf(x, 1)) * cfg.horizontal_fov / cfg.n_beams
    assert range_fwhm == pytest.approx(1500.0 / (2 * 25000.0), rel=0.3)
    assert bearing_fwhm == pytest.approx(1.2, rel=0.3)


def test_speckle_is_static_for_a_static_pose_and_decorrelates_when_the_sensor_moves(floor_scene):
    cfg = ImagingSonarConfig(**BARE | FLOOR_CFG)
    sonar = ImagingSonar(cfg, device="cpu")
    a = sonar.render(floor_scene, pitched(25.0), frame_index=0).numpy()
    b = sonar.render(floor_scene, pitched(25.0), frame_index=7).numpy()
    np.testing.assert_array_equal(a["intensity"], b["intensity"])   # no noise: the pattern is the surface's
    # The same pose inside a batch: bit-identical.
    both = sonar.render(floor_scene, np.stack([pitched(25.0, (0.3, 0.0, 0.0)), pitched(25.0)])).numpy()
    np.testing.assert_array_equal(both["intensity"][1], a["intensity"][0])
    # 4 wavelengths (lambda = 2 mm at 750 kHz) sideways: the speckle decorrelates.
    moved = sonar.render(floor_scene, pitched(25.0, (0.0, 0.008, 0.0))).numpy()
    sa, sm = speckle(a).ravel(), speckle(moved).ravel()
    assert abs(np.corrcoef(sa, sm)[0, 1]) < 0.3


def test_point_target_range_and_bearing_response():
    # A 6 mm plate at 5 m, centred in beam 80 of 160 over 20 deg (beam centre +0.0625 deg): its clean image is the
    # point spread sampled at the bin centres. Range: -3 dB width c / (2B) = 1500 / (2 * 20 kHz) = 3.75 cm.
    # Bearing: -3 dB width = beam width 1.5 deg, first side lobe -13.26 dB (uniform aperture).
    y = -5.0 * math.tan(math.radians(0.0625))
    scene = make_scene(("plate", quad([5.0, y, 0.0], [-1.0, 0.0, 0.0], 0.006), 0.5))
    cfg = ImagingSonarConfig(**BARE | dict(bandwidth=20000.0, beam_width=1.5, psf_extent=4.0), horizontal_fov=20.0,
                             vertical_fov=4.0, n_beams=160, rays_per_beam=4, elevation_rays=512, min_range=4.5,
                             max_range=5.5, range_bins=200)
    img = ImagingSonar(cfg, device="cpu").render(scene, pitched(0.0)).numpy()["clean_intensity"][0].astype(np.float64)
    r0, b0 = np.unravel_index(np.argmax(img), img.shape)
    assert b0 == 80
    def width(profile, step):
        p = profile / profile.max()
        c = int(np.argmax(p))
        lo = c - half_width(p[c::-1])
        hi = c + half_width(p[c:])
        return (hi - lo) * step
    assert width(img[:, b0], cfg.range_resolution) == pytest.approx(0.0375, rel=0.05)
    row = img[r0]
    assert width(row, 20.0 / 160) == pytest.approx(1.5, rel=0.05)
    p = db(np.maximum(row / row.max(), 1e-30))
    # First side lobe: the largest value beyond the first null (the first rise after the main lobe).
    right = p[b0:]
    null = int(np.nonzero(np.diff(right) > 0)[0][0])
    assert right[null:].max() == pytest.approx(-13.26, abs=0.5)


def test_flat_floor_rows_are_smooth_after_tvg_at_the_preset_ray_count(floor_scene):
    # The ARIS 1800 preset's fan on a flat floor 2 m down, pitched 20 deg, noise-free expected image after its
    # 30 log TVG. Inside the vertical main lobe (14 deg: elevations 13-27 deg down, ranges 4.4-8.9 m) row means
    # vary smoothly (no row-to-row step over 0.5 dB) and the steps' spectrum has no peak above the trend
    # (largest bin beyond the 2 lowest < 12 x the mean: white steps). The peer model's point binning of the same
    # fan bands the floor by several dB from row to row (the artefact this removes).
    cfg = ImagingSonarConfig.preset("aris1800_1800khz", noise_level=None, volume_scattering=None, max_range=10.0,
                                    range_bins=512)
    inside = (cfg.ranges() > 4.6) & (cfg.ranges() < 8.7)
    def steps(c):
        res = ImagingSonar(c, device="cpu").render(floor_scene, pitched(20.0)).numpy()
        return np.diff(db(res["clean_intensity"][0].mean(axis=1)[inside].astype(np.float64)))
    d = steps(cfg)
    assert np.abs(d).max() < 0.5
    spec = np.abs(np.fft.rfft(d - d.mean()))[3:] ** 2
    assert spec.max() < 12.0 * spec.mean()
    peer = ImagingSonarConfig(horizontal_fov=28.0, vertical_fov=42.0, n_beams=96, rays_per_beam=8, elevation_rays=128,
                              min_range=0.7, max_range=10.0, range_bins=512, normalisation="none", spreading=True,
                              multiplicative_sigma=0.0, additive_sigma=0.0)
    assert np.abs(steps(peer)).max() > 3.0


def test_receiver_noise_and_tvg_laws():
    # Noise 60 dB re 1 uPa^2 with 20 log r TVG and +6 dB gain: expected level 60 + 20 log r + 2 alpha r + 6 per row
    # (row means of 2048 exponential samples: 2.2 % = 0.1 dB standard error).
    alpha = 0.5
    cfg = ImagingSonarConfig(**{**BARE, "noise_level": 60.0, "tvg": "20log", "tvg_gain": 6.0}, horizontal_fov=60.0,
                             vertical_fov=10.0, n_beams=2048, rays_per_beam=1, elevation_rays=2, min_range=1.0,
                             max_range=9.0, range_bins=8, absorption=alpha)
    img = ImagingSonar(cfg, device="cpu").render(far_quad(), pitched(0.0)).numpy()["intensity"][0]
    r = cfg.ranges()
    assert db(img.mean(axis=1)) == pytest.approx(60.0 + 20 * np.log10(r) + 2 * alpha * r + 6.0, abs=0.4)


def test_automatic_gain_sets_the_frame_mean():
    cfg = ImagingSonarConfig(**{**BARE, "noise_level": 60.0, "agc_level": 20.0}, horizontal_fov=60.0,
                             vertical_fov=10.0, n_beams=64, rays_per_beam=1, elevation_rays=2, min_range=1.0,
                             max_range=9.0, range_bins=64)
    img = ImagingSonar(cfg, device="cpu").render(far_quad(), pitched(0.0)).numpy()["intensity"][0]
    assert img.mean() == pytest.approx(100.0, rel=1e-4)


def test_host_stream_key_matches_the_kernel():
    @wp.kernel
    def keys(out: wp.array(dtype=wp.int32)):
        out[0] = stream_key(5, 0, 3, kc.STREAM_JITTER)

    out = wp.zeros(1, dtype=wp.int32, device="cpu")
    wp.launch(keys, dim=1, inputs=[out], device="cpu")
    assert _host_key(5, 0, 3, int(kc.STREAM_JITTER)) == int(out.numpy()[0])


# -- display ---------------------------------------------------------------------------------------------------

def test_db_window_display():
    # 10 log10 of 1e6, 1e7, 1e9 = 60, 70, 90 dB; window [60, 90]: 0, 85, 255; gamma 0.5: 255 sqrt(1/3) = 147.
    v = np.array([0.0, 1e6, 1e7, 1e9])
    np.testing.assert_array_equal(db_window_to_uint8(v, 60.0, 30.0), [0, 0, 85, 255])
    assert db_window_to_uint8(v, 60.0, 30.0, gamma=0.5)[2] == 147
    rgb = apply_colormap(np.array([0, 255], dtype=np.uint8), "copper")
    np.testing.assert_array_equal(rgb, [[0, 0, 0], [255, 199, 127]])


# -- presets and bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(IMAGING_SONAR_DEVICE_PRESETS))
def test_device_presets_validate_render_and_state_their_source(name, floor_scene):
    values, source = IMAGING_SONAR_DEVICE_PRESETS[name]
    assert "datasheet" in source and "chosen here" in source.lower() + " chosen here"
    cfg = ImagingSonarConfig.preset(name)
    assert cfg.model == "device" and cfg.normalisation == "none"
    res = ImagingSonar(cfg, device="cpu").render(floor_scene, pitched(20.0))
    out = res.numpy()
    assert out["hit_count"].sum() > 0
    assert (out["intensity"] > 0).all()            # a noise floor: nothing is exactly zero
    assert res.to_rgb().shape == (1, cfg.range_bins, cfg.n_beams, 3)


def test_preset_noise_level_by_hand():
    # 750 kHz, B = 187.5 kHz, 1 x 20 deg beam: -15 + 57.50 + 52.73 - 10 log10(4 pi / (0.017453 * 0.34907)) + 6
    # = -15 + 57.50 + 52.73 - 33.14 + 6 = 68.09 dB re 1 uPa^2.
    assert receiver_noise_level(750e3, 187500.0, 1.0, 20.0) == pytest.approx(68.09, abs=0.01)


@pytest.mark.parametrize("field, value, match", [
    ("bandwidth", -1.0, "bandwidth"),
    ("noise_level", 250.0, "noise_level"),
    ("noise_level", -1e9, r"noise_level.*\[-100, source_level"),
    ("tvg", "50log", "tvg"),
    ("beam_taper", "kaiser", "beam_taper"),
    ("sidelobe_level", 0.0, "sidelobe_level"),
    ("frequency", 0.0, "frequency"),
    ("elevation_span", 5.0, "elevation_span"),
    ("beam_width", 125.0, r"beam_width: must lie in \(0, 124.74\] degrees for a uniform line array"),
    ("multiplicative_sigma", 0.3, "multiplicative_sigma"),
    ("additive_sigma", 0.1, "additive_sigma"),
])
def test_bad_device_input_names_the_field(field, value, match):
    with pytest.raises(ConfigError, match=match):
        ImagingSonarConfig(**{**BARE, field: value})


def test_device_model_ignores_the_peer_noise_left_at_its_default():
    cfg = ImagingSonarConfig(model="device")
    assert cfg.multiplicative_sigma == 0.2 and cfg.additive_sigma == 0.05  # the peer defaults, unused by the chain


def test_point_spread_kernel_too_large_is_refused_before_allocating():
    # 1 kHz bandwidth: delta_r = 0.75 m over 0.1 mm bins = 7500 bins: a 90001-tap kernel.
    cfg = ImagingSonarConfig(**{**BARE, "bandwidth": 1000.0}, min_range=1.0, max_range=3.0, range_bins=20000,
                             n_beams=4, rays_per_beam=1, elevation_rays=2)
    with pytest.raises(ConfigError, match="taps"):
        ImagingSonar(cfg, device="cpu")


def test_peer_presets_are_unchanged_by_the_device_fields():
    cfg = ImagingSonarConfig.preset("oceansim_default")
    assert cfg.model == "peer" and cfg.normalisation == "row"


def test_bandwidth_conventions():
    # |S|^2 = exp(-2 pi^2 df^2 / b^2) = 1/2 at df = b sqrt(ln2 / 2) / pi = 0.18739 b: B_-3dB = 0.37478 b.
    from oceansim_py.sensors.acoustic.bandwidth import gaussian_b_from_minus_3db, minus_3db_from_gaussian_b
    from oceansim_py.sensors.multibeam import MultibeamSonarConfig

    assert minus_3db_from_gaussian_b(1.0) == pytest.approx(0.37478, abs=1e-5)
    assert gaussian_b_from_minus_3db(minus_3db_from_gaussian_b(29.9e3)) == pytest.approx(29.9e3)
    b = MultibeamSonarConfig(bandwidth=100e3)
    df = b.bandwidth_3db / 2
    assert math.exp(-2 * math.pi**2 * df**2 / b.bandwidth**2) == pytest.approx(0.5, rel=1e-9)


def test_material_scattering_strength_in_db():
    # S = -27 dB (Lambert parameter of sand): mu = 10^(-2.7) = 0.0019953; impedance route unchanged.
    from oceansim_py.scene import Material
    from oceansim_py.scene.materials import MaterialTable

    m = Material.from_properties("sand_s", (0.5, 0.5, 0.5), scattering_strength=-27.0)
    assert m.reflectivity == pytest.approx(0.0019953, rel=1e-4)
    table = MaterialTable()
    table.update_from_mapping({"materials": {"mud_s": {"scattering_strength": -40}}}, "test.yaml")
    assert table["mud_s"].reflectivity == pytest.approx(1e-4)
    with pytest.raises(ConfigError, match="scattering_strength"):
        Material.from_properties("bad", (0.5, 0.5, 0.5), scattering_strength=3.0)
    with pytest.raises(ConfigError, match="not both"):
        Material.from_properties("bad", (0.5, 0.5, 0.5), reflectivity=0.1, scattering_strength=-20.0)


# -- side-scan on the device chain ----------------------------------------------------------------------------

def test_sidescan_device_preset_speckle_altitude_and_noise_floor():
    from oceansim_py.sensors.acoustic.presets import SIDESCAN_DEVICE_PRESETS
    from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig

    values, source = SIDESCAN_DEVICE_PRESETS["edgetech_4125_900khz"]
    assert "datasheet" in source
    floor = make_scene(("floor", quad([0.0, 0.0, -10.0], [0.0, 0.0, 1.0], 400.0), 0.01))
    level = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    cfg = SidescanSonarConfig.preset("edgetech_4125_900khz")
    full = SidescanSonar(cfg, device="cpu").render(floor, level).numpy()
    assert full["altitude"][0] == pytest.approx(10.0, abs=1e-3)
    assert (full["intensity"] > 0).all()                        # receiver noise: nothing exactly zero
    quiet = SidescanSonar(cfg.replace(noise_level=None, post_tvg_noise_level=None, volume_scattering=None), device="cpu")
    res = quiet.render(floor, level).numpy()
    # Slant ranges 11-44 m (bins 600-2400): fully developed speckle on both sides.
    x = (res["intensity"][0][600:2400] / res["clean_intensity"][0][600:2400]).astype(np.float64)
    assert x.var() / x.mean() ** 2 == pytest.approx(1.0, abs=0.15)
    again = quiet.render(floor, level).numpy()
    np.testing.assert_array_equal(again["intensity"], res["intensity"])


def test_sidescan_rejects_a_bearing_point_spread():
    from oceansim_py.sensors.sidescan import SidescanSonarConfig

    with pytest.raises(ConfigError, match="beam_width"):
        SidescanSonarConfig(model="device", beam_width=1.0)


def test_singlebeam_device_preset_altitude_and_echo():
    from oceansim_py.sensors.acoustic.presets import SINGLEBEAM_DEVICE_PRESETS
    from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

    assert "datasheet" in SINGLEBEAM_DEVICE_PRESETS["tritech_pa500"][1]
    floor = make_scene(("floor", quad([0.0, 0.0, -8.0], [0.0, 0.0, 1.0], 100.0), 0.01))
    cfg = SinglebeamSonarConfig.preset("tritech_pa500")
    res = SinglebeamSonar(cfg, device="cpu").render(floor, pitched(90.0)).numpy()
    assert res["altitude"][0] == pytest.approx(8.0, abs=1e-3)
    assert (res["intensity"] > 0).all()
    # The bottom echo is the strongest bin, within the range resolution (2 cm) plus the cone's spread of the
    # footprint (8 m / cos 3 deg - 8 m = 1.1 cm) of the altitude.
    peak = cfg.ranges()[np.argmax(res["clean_intensity"][0])]
    assert peak == pytest.approx(8.0, abs=0.04)


def test_the_default_device_model_gives_physical_units():
    # ImagingSonarConfig(model="device") with every other field at its default (no preset): its intensities are
    # re 1 uPa^2 (the chain's stated unit), not the peer's row-normalised image. Empty water with the default
    # receiver noise (60 dB re 1 uPa^2) and no reverberation: the frame's mean is 10^6 (3 %), its rows' maxima
    # are not 1; the peer model's default stays the row normalisation.
    cfg = ImagingSonarConfig(model="device", volume_scattering=None)
    assert cfg.normalisation_mode == "none" and ImagingSonarConfig().normalisation_mode == "row"
    img = ImagingSonar(cfg, device="cpu").render(far_quad(), pitched(0.0)).numpy()["intensity"][0]
    assert img.astype(np.float64).mean() == pytest.approx(1e6, rel=0.03)


def test_device_chain_row_normalisation_stays_available():
    cfg = ImagingSonarConfig(**{**BARE, "noise_level": 60.0, "normalisation": "row"}, horizontal_fov=60.0,
                             vertical_fov=10.0, n_beams=64, rays_per_beam=1, elevation_rays=2, min_range=1.0,
                             max_range=9.0, range_bins=16)
    img = ImagingSonar(cfg, device="cpu").render(far_quad(), pitched(0.0)).numpy()["intensity"][0]
    np.testing.assert_allclose(img.max(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("name", ["em2040_600khz", "em2040_700khz", "norbit_wbms_400khz"])
def test_profiling_device_presets_sound_the_floor(name):
    from oceansim_py.sensors.acoustic.presets import PROFILING_DEVICE_PRESETS
    from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig

    assert "datasheet" in PROFILING_DEVICE_PRESETS[name][1] or "§V" in PROFILING_DEVICE_PRESETS[name][1]
    floor = make_scene(("floor", quad([0.0, 0.0, -20.0], [0.0, 0.0, 1.0], 400.0), 0.01))
    level = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    cfg = ProfilingSonarConfig.preset(name)
    res = ProfilingSonar(cfg, device="cpu").render(floor, level).numpy()
    # Soundings on the floor 20 m down: world z = -20 within the footprint's spread (centre of gravity).
    z = res["point_world"][0][res["valid"][0] == 1][:, 2]
    assert z.size == cfg.n_beams
    np.testing.assert_allclose(z, -20.0, atol=0.05)
    assert (res["image"] > 0).all()
    quiet = ProfilingSonar(cfg.replace(noise_level=None, post_tvg_noise_level=None, volume_scattering=None),
                           device="cpu")
    img = quiet.render(floor, level).numpy()
    i, c = img["image"][0], img["clean_image"][0]
    x = (i[c > 0] / c[c > 0]).astype(np.float64)
    assert x.mean() == pytest.approx(1.0, abs=0.15)


@pytest.mark.parametrize("r", [5.0, 20.0, 40.0])
def test_plate_facing_the_sensor_keeps_its_echo_energy_at_long_range(r):
    # A 3 cm plate at normal incidence: each ray that hits it returns SL mu cos(psi) dOmega / r^2 (alpha = 0,
    # cos psi = 1 to 1e-6), dOmega = cos e db de with db = 20 deg / 640, de = 4 deg / 512 (cos e = 1 to 3e-4):
    # the image's total is hits x SL mu db de / r^2. The rays' footprints here are a few float32 ulps of r deep;
    # their overlap weights must still sum to 1 (they gave +0.5 dB at 20 m, +1.0 dB at 40 m; a 1 cm plate at
    # 20 m in a side-scan fan lost all of its echo).
    scene = make_scene(("plate", quad([r, 0.0, 0.0], [-1.0, 0.0, 0.0], 0.03), 0.5))
    cfg = ImagingSonarConfig(**BARE, horizontal_fov=20.0, vertical_fov=4.0, n_beams=160, rays_per_beam=4,
                             elevation_rays=512, min_range=r - 0.5, max_range=r + 0.5, range_bins=200, absorption=0.0)
    res = ImagingSonar(cfg, device="cpu").render(scene, pitched(0.0)).numpy()
    hits = int(res["hit_count"].sum())
    assert hits > 5
    hand = 10.0 ** (SL / 10.0) * 0.5 * hits * math.radians(20.0) / 640 * math.radians(4.0) / 512 / r**2
    assert db(res["clean_intensity"].astype(np.float64).sum()) == pytest.approx(db(hand), abs=0.01)
