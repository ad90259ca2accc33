"""Side-scan, profiling and single-beam device presets on scenes built here, against numbers computed by hand: the
8-bit display of their post-TVG noise (docs/PHYSICS_ACOUSTIC_CHAIN.md §4-5), the altitude, the flat-floor level
after TVG, a target's shadow and the soundings on a flat and a sloping floor."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.errors import ConfigError
from oceansim_py.sensors.acoustic import presets as dp
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

LEVEL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
#: Pitched 90 degrees down (boresight +x to -z): a single-beam altimeter's mount.
DOWN = np.array([0.0, 0.0, 0.0, 0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])


def floor_at(depth: float, size: float = 400.0):
    return ("floor", quad([0.0, 0.0, -depth], [0.0, 0.0, 1.0], size), 0.5)


def noise_median_gray(cfg) -> float:
    """8-bit gray of the median of near-field noise of mean 10^(N_post/10) (the input noise, NL + 30 log r, is over
    20 dB under it within 2 m; the volume reverberation is switched off where this is used: at S_v = -80 dB it lies
    over N_post within a few metres, -10 log r after 30 log TVG): the median of an exponential is ln 2 of its mean,
    -1.59 dB; the window maps [display_floor, display_floor + db_range] to 0..255."""
    return 255.0 * (cfg.post_tvg_noise_level + 10.0 * math.log10(math.log(2.0)) - cfg.display_floor) / cfg.db_range


def test_sidescan_device_waterfall_shows_the_water_column_noise_not_black():
    # EdgeTech 4125 preset 10 m over a flat floor. Before the fix the waterfall was dB relative to its maximum over
    # 50 dB: the floor echoes after TVG (~178 dB near nadir) put the post-TVG noise (NL + 30 = 94.4 dB) 80 dB under
    # the white, and the whole water column was exactly 0 (measured: 100 % of its pixels; 15 % of the image).
    # Now the preset's window is [NL + 3, NL + 100] dB: a noise sample of mean NL + 30 dB is black with probability
    # 1 - exp(-10^-2.7) = 0.2 %, and its median gray is 255 (30 - 1.59 - 3) / 97 = 66.8.
    cfg = SidescanSonarConfig.preset("edgetech_4125_900khz")
    assert cfg.display_floor == pytest.approx(cfg.noise_level + 3.0, abs=0.11)
    assert cfg.display_floor + cfg.db_range == pytest.approx(cfg.noise_level + 100.0, abs=0.11)
    poses = np.tile(LEVEL, (8, 1))
    poses[:, 0] = np.arange(8) * 0.05
    res = SidescanSonar(cfg, device="cpu").render(make_scene(floor_at(10.0)), poses)
    u8, r, n = res.to_uint8(), res.ranges, cfg.range_bins
    water = np.concatenate([u8[:, n - 1 - np.flatnonzero(r < 9.9)], u8[:, n + np.flatnonzero(r < 9.9)]], axis=1)
    assert (water == 0).mean() < 0.005
    # the floor is brighter than the water column, and the altitude is the first return: 10 m (a bin is 1.8 cm)
    floor = np.concatenate([u8[:, n - 1 - np.flatnonzero((r > 11) & (r < 30))],
                            u8[:, n + np.flatnonzero((r > 11) & (r < 30))]], axis=1)
    assert np.median(floor) > np.median(water) + 40
    np.testing.assert_allclose(res.numpy()["altitude"], 10.0, atol=cfg.range_resolution)
    quiet = cfg.replace(volume_scattering=None)
    u8 = SidescanSonar(quiet, device="cpu").render(make_scene(floor_at(10.0)), poses).to_uint8()
    near = np.concatenate([u8[:, n - 1 - np.flatnonzero(r < 2.0)], u8[:, n + np.flatnonzero(r < 2.0)]], axis=1)
    assert np.median(near) == pytest.approx(noise_median_gray(cfg), abs=8.0)


def test_sidescan_display_floor_none_keeps_the_relative_window_and_bad_values_are_refused():
    # display_floor None (the peer presets): dB under the image's maximum over db_range, as before.
    cfg = SidescanSonarConfig.preset("holoocean_default")
    assert cfg.display_floor is None
    for bad in (float("nan"), float("inf"), "loud"):
        with pytest.raises(ConfigError, match="display_floor"):
            SidescanSonarConfig(display_floor=bad)
        with pytest.raises(ConfigError, match="display_floor"):
            ProfilingSonarConfig(display_floor=bad)
        with pytest.raises(ConfigError, match="display_floor"):
            SinglebeamSonarConfig(display_floor=bad)


def test_sidescan_device_flat_floor_level_after_tvg_is_lamberts_law():
    # Clean starboard series over a flat floor at H = 10 m (no volume reverberation). A bin of slant range r sees the
    # floor at depression t, sin t = H / r, over the along-track width w_a = 0.28 deg and dt = dr H / (r^2 cos t);
    # Lambert: I = 10^(SL/10) mu cos(psi) dOmega g(t) / r^2 10^(-2 alpha r / 10), cos psi = H / r, and the 30 log r +
    # 2 alpha r TVG multiplies by r^3 10^(2 alpha r / 10):  I_bin = 10^(SL/10) mu H^2 w_a dr g(t) / (r^2 cos t),
    # g the gaussian fan pattern exp(-ln 2 (2 (t - 50 deg) / 80 deg)^2). After TVG a Lambert floor still falls as
    # -20 log r (measured 178.3 dB at 10.3-11 m, 157.7 dB at 50-55 m, each 0.08 dB over the hand value).
    cfg = SidescanSonarConfig.preset("edgetech_4125_900khz", volume_scattering=None)
    d = SidescanSonar(cfg, device="cpu").render(make_scene(floor_at(10.0)), LEVEL).numpy()
    r = d["ranges"].astype(np.float64)
    clean = d["clean_intensity"][0, :, 1].astype(np.float64)
    t = np.arcsin(np.clip(10.0 / r, 0.0, 1.0))
    g = np.exp(-math.log(2.0) * (2.0 * (t - math.radians(50.0)) / math.radians(80.0)) ** 2)
    hand = 10.0 ** (cfg.source_level / 10.0) * 0.5 * 100.0 * math.radians(0.28) * cfg.range_resolution * g / (
        r**2 * np.cos(t))
    for lo, hi in ((10.3, 11.0), (12.0, 15.0), (20.0, 30.0), (40.0, 50.0)):
        m = (r >= lo) & (r < hi)
        assert 10.0 * math.log10(clean[m].mean() / hand[m].mean()) == pytest.approx(0.0, abs=0.3)


def test_sidescan_device_shadow_of_a_wall_on_the_floor_has_the_hand_length_on_the_port_side():
    # A 1 m high, 1 m wide wall on the floor (H = 10 m) at ground range 20 m to port (+y, FLU). The ray grazing its
    # top meets the floor at ground range 20 H / (H - h) = 22.22 m: shadow h R / (H - h) = 2.22 m, in slant range
    # from the wall's foot sqrt(20^2 + 10^2) = 22.36 m to sqrt(22.22^2 + 10^2) = 24.37 m. Starboard: no shadow.
    cfg = SidescanSonarConfig.preset("edgetech_4125_900khz")
    wall = ("wall", quad([0.0, 20.0, -9.5], [0.0, -1.0, 0.0], 1.0), 0.5)
    d = SidescanSonar(cfg, device="cpu").render(make_scene(floor_at(10.0), wall), LEVEL).numpy()
    r, clean = d["ranges"], d["clean_intensity"][0]
    lit = clean[(r > 18.0) & (r < 21.0), 0].mean()
    dark = r[(r > 21.0) & (r < 26.0) & (clean[:, 0] < 1e-3 * lit)]
    assert dark.min() == pytest.approx(22.36, abs=0.08) and dark.max() == pytest.approx(24.37, abs=0.08)
    assert (clean[(r > 21.0) & (r < 26.0), 1] > 0.1 * lit).all()


@pytest.mark.parametrize("name", ["em2040_700khz", "norbit_wbms_400khz"])
def test_profiling_device_image_shows_the_noise_and_soundings_sit_on_the_floor(name):
    # Flat floor 20 m below: beam j at theta_j from nadir sounds 20 / cos theta_j (centre of gravity of its echoes;
    # measured within 6 mm for the EM 2040's 0.4 deg beams, 5.5 cm for the NORBIT's 0.9 deg at +-70 deg). Before the
    # fix the image was dB under its maximum over 50 dB: 96-100 % black, the water column all black.
    cfg = ProfilingSonarConfig.preset(name)
    res = ProfilingSonar(cfg, device="cpu").render(make_scene(floor_at(20.0, 600.0)), LEVEL)
    d = res.numpy()
    theta = d["beam_angles"]
    assert d["valid"][0].all()
    np.testing.assert_allclose(d["bottom_range"][0], 20.0 / np.cos(theta), atol=0.01 if name.startswith("em") else 0.08)
    u8, r = res.to_uint8()[0], res.ranges
    assert (u8[r < 19.5] == 0).mean() < 0.005
    quiet = ProfilingSonar(cfg.replace(volume_scattering=None), device="cpu")
    u8 = quiet.render(make_scene(floor_at(20.0, 600.0)), LEVEL).to_uint8()[0]
    assert np.median(u8[r < 2.0]) == pytest.approx(noise_median_gray(cfg), abs=8.0)


def test_profiling_device_soundings_on_a_slope_and_none_in_empty_water():
    # Floor through (0, 0, -20) tilted 15 deg, normal (0, -sin 15, cos 15): beam theta (ray (0, -sin th, -cos th))
    # meets it at t = 20 cos 15 / (cos 15 cos th - sin 15 sin th) = 20 cos 15 / cos(th + 15 deg). Measured within
    # 1.3 mm on the EM 2040 700 kHz preset. Empty water: the receiver and post-TVG noise make no sounding.
    cfg = ProfilingSonarConfig.preset("em2040_700khz")
    sonar = ProfilingSonar(cfg, device="cpu")
    s, c = math.sin(math.radians(15.0)), math.cos(math.radians(15.0))
    d = sonar.render(make_scene(("floor", quad([0.0, 0.0, -20.0], [0.0, -s, c], 600.0), 0.5)), LEVEL).numpy()
    theta = d["beam_angles"]
    assert d["valid"][0].all()
    np.testing.assert_allclose(d["bottom_range"][0], 20.0 * c / np.cos(theta + math.radians(15.0)), atol=0.01)
    empty = sonar.render(make_scene(("far", quad([0.0, 0.0, 500.0], [0.0, 0.0, -1.0], 0.1), 0.5)), LEVEL).numpy()
    assert not empty["valid"].any()


@pytest.mark.parametrize("altitude", [0.3, 5.0, 49.8])
def test_singlebeam_device_altitude_and_echogram_noise(altitude):
    # PA500 pointed down over a flat floor: the first return is the altitude (within a 2 cm bin), also at 0.3 m where
    # the post-TVG noise is 94 dB over the input noise's gain; the echogram's water column shows the noise (before
    # the fix: dB under the ping's maximum over 50 dB, 100 % black).
    cfg = SinglebeamSonarConfig.preset("tritech_pa500")
    sonar = SinglebeamSonar(cfg, device="cpu")
    res = sonar.render(make_scene(floor_at(altitude, 200.0)), np.tile(DOWN, (16, 1)))
    np.testing.assert_allclose(res.numpy()["first_return_range"], altitude, atol=cfg.range_resolution)
    u8, r = res.to_uint8(), res.ranges
    water = u8[:, r < altitude - 0.1]
    if water.size:
        assert (water == 0).mean() < 0.01
    water_only = make_scene(("far", quad([0.0, 0.0, 500.0], [0.0, 0.0, -1.0], 0.1), 0.5))
    assert np.isnan(sonar.render(water_only, np.tile(DOWN, (16, 1))).numpy()["first_return_range"]).all()
    quiet = SinglebeamSonar(cfg.replace(volume_scattering=None), device="cpu")
    empty = quiet.render(water_only, np.tile(DOWN, (16, 1)))
    assert np.median(empty.to_uint8()[:, r < 2.0]) == pytest.approx(noise_median_gray(cfg), abs=8.0)


def test_display_window_presets_follow_the_imaging_rule():
    # Every side-scan, profiling and single-beam device preset: black at NL + 3 dB, white at NL + 100 dB.
    for cls, table in ((SidescanSonarConfig, dp.SIDESCAN_DEVICE_PRESETS), (ProfilingSonarConfig,
                                                                          dp.PROFILING_DEVICE_PRESETS),
                       (SinglebeamSonarConfig, dp.SINGLEBEAM_DEVICE_PRESETS)):
        for name in table:
            cfg = cls.preset(name)
            assert cfg.display_floor == pytest.approx(cfg.post_tvg_noise_level - 27.0, abs=0.11), name
            assert cfg.display_floor + cfg.db_range == pytest.approx(cfg.noise_level + 100.0, abs=0.11), name
