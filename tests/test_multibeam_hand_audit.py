"""Multibeam audit: hand numbers on scenes the other multibeam tests do not use (a flat floor below a sensor
looking straight down), and render-time input the config cannot see."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.errors import ConfigError
from oceansim_py.sensors.acoustic.bandwidth import sinc_power_integral, sinc_rate_per_bandwidth
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

#: Sensor at the origin pitched 90 deg down: boresight -z, bearing axis across track (starboard = -y world).
DOWN = np.array([0.0, 0.0, 0.0, 0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])

#: A bare device model: no noise, reverberation, jitter or beam pattern; each test sets the rest.
BARE = dict(model="device", noise_level=None, volume_scattering=None, absorption_model="fixed", jitter=False,
            beam_pattern=False, elevation_directivity=False)


def floor(depth: float, mu: float = 0.01):
    return make_scene(("floor", quad([0.0, 0.0, -depth], [0.0, 0.0, 1.0], 200.0), mu))


def test_device_render_refuses_the_spectral_method_naming_it():
    # The config refuses method 'spectral' with model 'device'; render(method="spectral") used to run the time
    # method anyway and label the result "spectral" (and allocate the spectral buffers).
    sonar = MultibeamSonar(MultibeamSonarConfig(**BARE, fov=30.0, n_beams=8, rays_per_beam=2, max_range=6.0),
                           device="cpu")
    with pytest.raises(ConfigError, match="MultibeamSonar.render: method must be 'time' with model 'device'"):
        sonar.render(floor(5.0), DOWN, method="spectral")
    assert sonar.render(floor(5.0), DOWN, method="time").method == "time"


# 121 beams 1 deg apart over 121 deg (beam 60 at bearing 0); B = 30 kHz, fs = 2 B = 60 kHz, so the samples lie
# c / (2 fs) = 12.5 mm apart from min_range = 1 m and a 10 m deep floor falls exactly on sample 720.
SWATH = dict(fov=121.0, n_beams=121, beam_width=1.0, elevation_fov=1.0, rays_per_beam=4, azimuth_rays_per_beam=4,
             bandwidth=30000.0, min_range=1.0, max_range=25.0)


@pytest.mark.parametrize("model", ["peer", "device"])
def test_flat_floor_lies_at_depth_over_cos_bearing_in_every_beam_port_to_starboard(model):
    # Sensor looking straight down at a floor D = 10 m below: beam j at bearing theta_j sees it at r = D / cos theta_j
    # (the echo-weighted mean range of the beam; a 1 deg beam spans D tan theta dtheta, 0.3 m at 60 deg, around it).
    # Bearings increase from port (column 0) to starboard, and starboard is -y world for this pose: a floor that
    # covers only y < 0 shows in the beams of positive bearing only.
    extra = dict(BARE, tvg="none", absorption=0.0) if model == "device" else dict(absorption=0.0,
                                                                                 beam_pattern=False)
    cfg = MultibeamSonarConfig(**SWATH, **extra)
    res = MultibeamSonar(cfg, device="cpu").render(floor(10.0), DOWN).numpy()
    theta = res["bearings"].astype(np.float64)
    assert np.all(np.diff(theta) > 0) and theta[60] == pytest.approx(0.0, abs=1e-7)
    assert theta[0] == pytest.approx(math.radians(-60.0), abs=1e-6)
    image = res["clean_intensity" if model == "device" else "intensity"][0].astype(np.float64)
    r = res["ranges"].astype(np.float64)
    mean_range = (image * r[:, None]).sum(axis=0) / image.sum(axis=0)
    hand = 10.0 / np.cos(theta)
    inside = np.abs(theta) < math.radians(55.0)
    error = np.abs(mean_range - hand)[inside]
    if model == "device":   # the expected (speckle-free) image: within a quarter sample
        assert error.max() < 0.25 * cfg.range_resolution
    else:                   # one speckle draw of 16 scatterers: within the half footprint plus 2 samples
        spread = 10.0 * np.tan(np.abs(theta)) / np.cos(theta) * math.radians(0.5) + 2 * cfg.range_resolution
        assert (error / spread[inside]).max() < 1.0
    assert r[int(np.argmax(image[:, 60]))] == pytest.approx(10.0, abs=1e-4)
    half = make_scene(("starboard_half", quad([0.0, -50.0, -10.0], [0.0, 0.0, 1.0], 100.0), 0.01))
    seen = MultibeamSonar(cfg, device="cpu").render(half, DOWN).numpy()
    energy = seen["clean_intensity" if model == "device" else "intensity"][0].sum(axis=0)
    assert energy[theta > math.radians(0.9)].min() > 0.0
    assert energy[theta < math.radians(-0.9)].max() == 0.0


@pytest.mark.parametrize("tvg, gain, k", [("none", 0.0, 0.0), ("20log", 0.0, 20.0), ("30log", -5.0, 30.0),
                                          ("40log", 0.0, 40.0)])
def test_nadir_floor_echo_level_is_the_sonar_equation_then_the_tvg(tvg, gain, k):
    # Nadir beam (beam 5 of 11, 1 deg apart) over the 10 m floor: the beam's 1 deg x 1 deg footprint lies within
    # 0.06 samples of r = D, so the sample at r = D holds the whole echo (h(0) = 1). Sonar equation (Lambert,
    # mu cos^2 psi per unit area, area r^2 Omega / cos psi, cos psi = 1):
    # EL = SL - 40 log r - 2 alpha r + 10 log mu + 10 log(r^2 Omega) = 210 - 40 - 2 + (-20) + 10 log(100 * 3.0462e-4)
    # = 132.84 dB (alpha = 0.1 dB/m, Omega = (pi / 180)^2 sr).
    # TVG: + k log r + 2 alpha r + gain = + k + 2 + gain.
    cfg = MultibeamSonarConfig(**{**SWATH, "fov": 11.0, "n_beams": 11, "max_range": 12.0},
                               **dict(BARE, tvg=tvg, tvg_gain=gain, absorption=0.1, source_level=210.0))
    res = MultibeamSonar(cfg, device="cpu").render(floor(10.0), DOWN).numpy()
    omega = math.radians(1.0) ** 2
    el = 210.0 - 40.0 - 2.0 + 10 * math.log10(0.01) + 10 * math.log10(100.0 * omega)
    assert el == pytest.approx(132.84, abs=0.01)
    expected = el + (k + 2.0 + gain if tvg != "none" else gain)
    level = 10 * math.log10(float(res["clean_intensity"][0][720, 5]))
    assert level == pytest.approx(expected, abs=0.1)
    # without noise the detected intensity is |p|^2 times the TVG of its row, k log r_n + 2 alpha r_n + gain
    ts = res["time_series"][0].astype(np.complex128)
    r = res["ranges"].astype(np.float64)
    g = 10 ** ((k * np.log10(r) + (0.2 * r if tvg != "none" else 0.0) + gain) / 10)[:, None]
    np.testing.assert_allclose(res["intensity"][0], np.abs(ts) ** 2 * g, rtol=1e-4, atol=0.0)
    assert res["db"][0][720, 5] == pytest.approx(10 * math.log10(float(res["intensity"][0][720, 5])), abs=1e-3)


def test_tilted_plate_echo_level_is_the_sonar_equation():
    # A 10 cm square plate (A = 0.01 m^2, mu = 0.1) 5 m ahead on boresight, turned 30 deg about z: the rays that hit
    # it cover Omega = A cos psi / r^2, each returning SL mu cos psi w / r^2, so the echo is
    # EL = SL - 40 log r + 10 log mu + 20 log cos psi + 10 log A = 200 - 27.96 - 10 - 1.25 - 20 = 140.79 dB
    # (Lambert: TS = 10 log(mu cos^2 psi) + 10 log A). The clean series holds EL times the sum over the samples of
    # the range response h^2 = sinc^2(a u), a = kappa B / fs, truncated at psf_extent resolutions: that sum is
    # (1 / a) times the integral of sinc^2 over +-a psf_extent fs / B. Its range extent is L sin psi = 5 cm.
    psi = math.radians(30.0)
    scene = make_scene(("plate", quad([5.0, 0.0, 0.0], [-math.cos(psi), math.sin(psi), 0.0], 0.1), 0.1))
    cfg = MultibeamSonarConfig(**dict(BARE, tvg="none", absorption=0.0, source_level=200.0), fov=4.0, n_beams=1,
                               elevation_fov=4.0, rays_per_beam=128, azimuth_rays_per_beam=128, bandwidth=30000.0,
                               min_range=4.0, max_range=6.0, psf_extent=6.0)
    clean = MultibeamSonar(cfg, device="cpu").render(scene, np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
    series = clean["clean_intensity"][0][:, 0].astype(np.float64)
    a = sinc_rate_per_bandwidth() * cfg.bandwidth / cfg.fs
    per_echo = sinc_power_integral(a * cfg.psf_extent * cfg.fs / cfg.bandwidth) / a
    hand = 200 - 40 * math.log10(5) + 10 * math.log10(0.1) + 20 * math.log10(math.cos(psi)) + 10 * math.log10(0.01)
    assert hand == pytest.approx(140.79, abs=0.01)
    assert 10 * math.log10(series.sum() / per_echo) == pytest.approx(hand, abs=0.15)
    peak = clean["ranges"][int(np.argmax(series))]
    assert peak == pytest.approx(5.0, abs=0.05 / 2 + cfg.range_resolution)


def test_peer_nadir_floor_mean_intensity_is_the_point_scatterer_sum():
    # Peer model (docs/PHYSICS.md §2), nadir beam over the 10 m floor, no beam mixing, alpha = 0.05 dB/m. Ray (a, k)
    # of beam 5 at bearing t_a and elevation e_k (cell centres) meets the floor at r = D / (cos e cos t) with
    # cos psi = cos e cos t, so E|p(t_n)|^2 = sum over rays of mu cos^2 psi r^2 dtheta dphi exp(-4 alpha_Np r) / r^4
    # (S0 b / sqrt pi)^2 exp(-2 b^2 (t_n - 2 r / c)^2): averaged over 300 independent speckle draws (frames), the
    # sample at r = D lies within 3 standard errors of it (each frame's value is exponential: std = mean).
    frames, depth, mu = 300, 10.0, 0.01
    cfg = MultibeamSonarConfig(fov=11.0, n_beams=11, beam_width=1.0, elevation_fov=1.0, rays_per_beam=4,
                               azimuth_rays_per_beam=4, bandwidth=30000.0, min_range=1.0, max_range=12.0,
                               absorption=0.05, beam_pattern=False, source_level=200.0)
    res = MultibeamSonar(cfg, device="cpu").render(floor(depth, mu), np.tile(DOWN, (frames, 1))).numpy()
    r_n = res["ranges"].astype(np.float64)
    n = int(np.argmin(np.abs(r_n - depth)))
    assert r_n[n] == pytest.approx(depth, abs=1e-5)     # fs = b: samples 25 mm apart from 1 m
    step = math.radians(1.0) / 4
    t = (np.arange(4) + 0.5 - 2) * step
    e = (np.arange(4) + 0.5 - 2) * step
    cos_psi = np.cos(e)[None, :] * np.cos(t)[:, None]
    r = depth / cos_psi
    alpha_np = 0.05 * math.log(10) / 20
    s0 = 10 ** (200 / 20) * cfg.bandwidth / math.sqrt(math.pi)
    t_n = 2 * r_n[n] / cfg.sound_speed
    hand = (mu * cos_psi**2 * r**2 * step * step * np.exp(-4 * alpha_np * r) / r**4 * s0**2
            * np.exp(-2 * cfg.bandwidth**2 * (t_n - 2 * r / cfg.sound_speed) ** 2)).sum()
    values = res["intensity"][:, n, 5].astype(np.float64)
    assert values.mean() == pytest.approx(hand, rel=3 / math.sqrt(frames))


def test_too_low_sample_rate_names_the_field_and_the_default_of_each_model():
    # The default sample rate is b (peer) and 2 B (device: two samples per resolution cell c / (2 B)).
    assert MultibeamSonarConfig(bandwidth=30000.0).fs == 30000.0
    assert MultibeamSonarConfig(**BARE, bandwidth=30000.0).fs == 60000.0
    with pytest.raises(ConfigError, match=r"MultibeamSonarConfig.sample_rate: .*twice it with model 'device'"):
        MultibeamSonarConfig(**BARE, bandwidth=30000.0, sample_rate=20000.0)


@pytest.mark.parametrize("width", [1.0, 5.0])
def test_a_wide_footprint_fills_its_range_extent_evenly(width):
    # One ray per beam (no jitter), the last beam centred at 65 deg over the 10 m floor: the ray returns
    # I = SL mu cos psi w / r^2 (cos psi = cos 65 deg, r = D / cos 65 deg = 23.66 m, w = dtheta de) spread evenly over
    # its footprint's range extent E = r tan(theta) dtheta: 0.89 m = 71 samples for a 1 deg beam, 4.4 m = 354 samples
    # for 5 deg (samples 12.5 mm apart). The clean series must hold I times the sum of h^2 in all (the range
    # response's energy, as the plate test), be flat (0.5 dB) between its half-power points and put those at
    # r -+ E / 2 (within 2 samples). Before, the extent was capped at 32 samples (0.4 m): the echo filled 32 of the
    # 71 samples (the 1 deg beam) or of the 354 (5 deg), 2.5 and 10 dB too high there, and a floor seen by such rays
    # was banded with empty samples between them.
    depth, theta = 10.0, math.radians(65.0)
    fov = 2 * (65.0 + width / 2)
    cfg = MultibeamSonarConfig(**dict(BARE, tvg="none", absorption=0.0, source_level=200.0), fov=fov,
                               n_beams=int(round(fov / width)), elevation_fov=1.0, rays_per_beam=1,
                               bandwidth=30000.0, min_range=19.0, max_range=28.0, psf_extent=6.0)
    res = MultibeamSonar(cfg, device="cpu").render(floor(depth, 0.01), DOWN).numpy()
    assert float(res["bearings"][-1]) == pytest.approx(theta, abs=1e-6)
    series = res["clean_intensity"][0][:, -1].astype(np.float64)
    r = res["ranges"].astype(np.float64)
    r0, d_theta = depth / math.cos(theta), math.radians(width)
    intensity = 10 ** 20 * 0.01 * math.cos(theta) * d_theta * math.radians(1.0) / r0**2
    a = sinc_rate_per_bandwidth() * cfg.bandwidth / cfg.fs
    per_echo = sinc_power_integral(a * cfg.psf_extent * cfg.fs / cfg.bandwidth) / a
    assert 10 * math.log10(series.sum() / (intensity * per_echo)) == pytest.approx(0.0, abs=0.1)
    extent = r0 * math.tan(theta) * d_theta
    above = r[series > 0.5 * series.max()]
    assert above.min() == pytest.approx(r0 - extent / 2, abs=2 * cfg.range_resolution)
    assert above.max() == pytest.approx(r0 + extent / 2, abs=2 * cfg.range_resolution)
    inner = series[(r > above.min() + 0.05) & (r < above.max() - 0.05)]
    assert 10 * math.log10(inner.min() / inner.max()) > -0.5


def test_peer_point_target_range_width_is_the_gaussian_pulse_of_parameter_b():
    # Peer model: the pulse envelope exp(-b^2 t^2) has intensity exp(-2 b^2 t^2), -3 dB full width in delay
    # 2 sqrt(ln 2 / 2) / b, in range c / 2 times that = 0.5887 c / b = 2.944 cm at b = 30 kHz (the paper's b, not a
    # -3 dB bandwidth: that of its spectrum is bandwidth_3db = 0.37478 b = 11.24 kHz, a time-bandwidth product of
    # 2 ln 2 / pi = 0.441). A 1 cm facet at 5 m on the centre beam, sampled at 16 b.
    b, c = 30000.0, 1500.0
    cfg = MultibeamSonarConfig(fov=60.25, n_beams=241, beam_width=4.0, elevation_fov=0.5, rays_per_beam=1,
                               min_range=4.9, max_range=5.1, bandwidth=b, absorption=0.0, beam_pattern=False,
                               sample_rate=16 * b)
    assert cfg.bandwidth_3db == pytest.approx(0.37478 * b, rel=1e-4)
    dot = make_scene(("dot", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 0.01), 0.5))
    res = MultibeamSonar(cfg, device="cpu").render(dot, np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
    series = res["intensity"][0][:, 120].astype(np.float64)
    r = res["ranges"].astype(np.float64)
    above = r[series >= 0.5 * series.max()]
    width = above.max() - above.min() + cfg.range_resolution   # the samples at or above half power span ~the width
    expected = c / 2 * 2 * math.sqrt(math.log(2) / 2) / b
    assert expected == pytest.approx(0.02944, abs=1e-5)
    assert width == pytest.approx(expected, abs=cfg.range_resolution)
    assert r[int(np.argmax(series))] == pytest.approx(5.0, abs=cfg.range_resolution)
    assert expected * 2 / c * cfg.bandwidth_3db == pytest.approx(2 * math.log(2) / math.pi, rel=1e-4)
