"""The receiver's post-TVG noise (``post_tvg_noise_level``) and the device presets' display of their noise floor,
against numbers computed by hand (docs/PHYSICS_ACOUSTIC_CHAIN.md §4 and §5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.errors import ConfigError
from oceansim_py.sensors.acoustic import presets as dp
from oceansim_py.sensors.acoustic.chain import row_noise_intensity, tvg_db
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

SL = 200.0
BARE = dict(model="device", multiplicative_sigma=0.0, additive_sigma=0.0, normalisation="none", source_level=SL,
            noise_level=None, volume_scattering=None, bandwidth=0.0, beam_width=0.0, tvg="none")
LEVEL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def pitched(deg: float, position=(0.0, 0.0, 0.0)) -> np.ndarray:
    t = math.radians(deg)
    return np.array([*position, 0.0, math.sin(t / 2), 0.0, math.cos(t / 2)])


def empty_water():
    """A small quad behind the sensor: the fan sees nothing."""
    return make_scene(("far", quad([-50.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1), 0.5))


def ks_exponential(x: np.ndarray, mean: np.ndarray) -> float:
    """Kolmogorov-Smirnov distance of x / mean (each sample over its own expected value) to the unit exponential."""
    u = np.sort((x / mean).astype(np.float64).ravel())
    n = u.size
    cdf = 1.0 - np.exp(-u)
    return float(max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n)))


def test_row_noise_is_input_noise_plus_post_tvg_noise_over_the_gain():
    # NL = 60 dB (1e6), N_post = 90 dB (1e9), 30 log r TVG without absorption: at r = 10 m G = 1000, so the input
    # noise referred to the input is 1e6 + 1e9 / 1e3 = 2e6; at 1 m 1e6 + 1e9 = 1.001e9; with no post-TVG noise 1e6.
    gain = 10.0 ** (tvg_db(np.array([1.0, 10.0, 100.0]), "30log", 0.0, 0.0) / 10.0)
    np.testing.assert_allclose(row_noise_intensity(gain, 60.0, 90.0), [1.001e9, 2e6, 1.001e6], rtol=1e-6)
    np.testing.assert_array_equal(row_noise_intensity(gain, 60.0, None), np.float32(1e6))
    np.testing.assert_allclose(row_noise_intensity(gain, None, 90.0), [1e9, 1e6, 1e3], rtol=1e-6)
    assert row_noise_intensity(gain, None, None).tolist() == [0.0, 0.0, 0.0]


def test_empty_water_after_tvg_is_input_noise_times_gain_plus_the_post_tvg_noise():
    # Empty water, NL = 60 dB, N_post = 100 dB, 30 log r TVG, absorption 0.1 dB/m: the image's mean in row r is
    # 1e6 G(r) + 1e10 with G(r) = r^3 10^(0.02 r), exponential around it. Rows of 256 beams; 16 blocks of 16 rows
    # (4096 samples each: 1.6 % standard error) against the hand value, and the whole image's KS distance.
    cfg = ImagingSonarConfig(**{**BARE, "noise_level": 60.0, "post_tvg_noise_level": 100.0, "tvg": "30log"},
                             horizontal_fov=60.0, vertical_fov=10.0, n_beams=256, rays_per_beam=1, elevation_rays=4,
                             min_range=1.0, max_range=41.0, range_bins=256, absorption=0.1)
    img = ImagingSonar(cfg, device="cpu").render(empty_water(), pitched(0.0)).numpy()["intensity"][0]
    r = cfg.ranges().astype(np.float64)
    expect = 1e6 * r**3 * 10.0 ** (0.02 * r) + 1e10
    # near 1 m the post-TVG noise dominates (1e6 vs 1e10), past the crossover 1e6 r^3 10^(0.02 r) = 1e10 at
    # r = 17.3 m the input noise does
    assert expect[0] / 1e10 == pytest.approx(1.0, abs=2e-4) and expect[-1] > 10 * 1e10
    got = img.astype(np.float64).reshape(16, 16, -1).mean(axis=(1, 2))
    want = np.broadcast_to(expect[:, None], img.shape).reshape(16, 16, -1).mean(axis=(1, 2))
    assert np.abs(got / want - 1.0).max() < 0.06
    assert ks_exponential(img, expect[:, None]) < 1.36 / math.sqrt(img.size)
    # the clean image is the echoes and reverberation only: none here
    res = ImagingSonar(cfg, device="cpu").render(empty_water(), pitched(0.0)).numpy()
    assert (res["clean_intensity"] == 0).all()


def test_post_tvg_noise_is_refused_out_of_range_or_not_finite():
    for bad in (float("nan"), float("inf"), -200.0, 500.0, "loud"):
        with pytest.raises(ConfigError, match="post_tvg_noise_level"):
            ImagingSonarConfig(model="device", post_tvg_noise_level=bad)
    with pytest.raises(ConfigError, match="post_tvg_noise_level"):
        MultibeamSonarConfig(model="device", post_tvg_noise_level=float("nan"))
    assert ImagingSonarConfig(model="device", post_tvg_noise_level=None).post_tvg_noise_level is None


def test_multibeam_empty_water_holds_the_post_tvg_noise():
    # The multibeam device model: no reverberation, NL = 50 dB, N_post = 80 dB, 20 log r TVG, no absorption:
    # intensity mean per sample 1e5 r^2 + 1e8 (exponential), the time series' power (before gain) 1e5 + 1e8 / r^2.
    cfg = MultibeamSonarConfig(model="device", source_level=SL, noise_level=50.0, post_tvg_noise_level=80.0,
                               volume_scattering=None, tvg="20log", absorption_model="fixed", absorption=0.0,
                               n_beams=64, max_range=20.0)
    out = MultibeamSonar(cfg, device="cpu").render(empty_water(), LEVEL).numpy()
    r = out["ranges"].astype(np.float64)
    assert r[0] > 0
    expect = 1e5 * r**2 + 1e8
    inten = out["intensity"][0].astype(np.float64)
    n = inten.shape[0] // 8 * 8
    got = inten[:n].reshape(8, -1).mean(axis=1)
    want = np.broadcast_to(expect[:n, None], inten[:n].shape).reshape(8, -1).mean(axis=1)
    assert np.abs(got / want - 1.0).max() < 0.08
    power = np.abs(out["time_series"][0].astype(np.complex128)) ** 2
    assert power[:n].mean() == pytest.approx(np.mean(1e5 + 1e8 / r[:n] ** 2), rel=0.08)


def test_presets_post_tvg_noise_and_display_floor_by_hand():
    # Every device preset: N_post = NL + 30 dB (the input noise after the TVG's 30 dB at 10 m) and, where it has a
    # dB display, its floor 27 dB under it: a pure-noise pixel is black with probability 1 - exp(-10^-2.7) = 0.2 %.
    assert 1.0 - math.exp(-10.0 ** -2.7) == pytest.approx(0.002, abs=5e-5)
    tables = {"imaging_sonar": dp.IMAGING_SONAR_DEVICE_PRESETS, "sidescan": dp.SIDESCAN_DEVICE_PRESETS,
              "singlebeam": dp.SINGLEBEAM_DEVICE_PRESETS, "profiling": dp.PROFILING_DEVICE_PRESETS,
              "multibeam": dp.MULTIBEAM_DEVICE_PRESETS, "msis": dp.MSIS_DEVICE_PRESETS}
    aris = ("aris1800_1800khz", "aris1800_1100khz", "aris3000_3000khz", "aris3000_1800khz")
    for kind, table in tables.items():
        for name, (values, _summary) in table.items():
            if "display_floor" in values:
                assert values["display_floor"] == pytest.approx(values["post_tvg_noise_level"] - 27.0, abs=0.051)
            if name in aris:
                continue
            assert values["post_tvg_noise_level"] == pytest.approx(values["noise_level"] + 30.0, abs=0.051), name
            assert dp.field_sources(kind, name)["post_tvg_noise_level"].startswith("estimate: ")
    # The ARIS's 8-bit samples span 0-80 dB (Sound Metrics aris-file-sdk, understanding-aris-data.md): under the
    # imaging presets' white, NL + 100 dB, its floor is NL + 20 dB and its post-TVG noise 27 dB over that, NL + 47.
    for name in aris:
        cfg = ImagingSonarConfig.preset(name)
        assert cfg.dynamic_range == 80.0 and "0-80 dB" in dp.field_sources("imaging_sonar", name)["dynamic_range"]
        assert cfg.display_floor == pytest.approx(cfg.noise_level + 20.0, abs=0.051)
        assert cfg.post_tvg_noise_level == pytest.approx(cfg.noise_level + 47.0, abs=0.051)
        assert dp.field_sources("imaging_sonar", name)["post_tvg_noise_level"].startswith("derived: ")


@pytest.fixture(scope="module")
def floor_with_a_box():
    """A sediment floor 2 m under the sensor and a 0.4 m box standing on it 4 m ahead: a shadow behind it."""
    import trimesh

    box = trimesh.creation.box(extents=(0.4, 0.4, 0.4))
    box.apply_translation((4.0, 0.0, -1.8))
    from oceansim_py.scene import TriangleMesh

    return make_scene(("floor", quad([6.0, 0.0, -2.0], [0.0, 0.0, 1.0], 30.0), 0.01),
                      ("box", TriangleMesh(np.asarray(box.vertices, np.float32), np.asarray(box.faces, np.int32)),
                       0.3))


@pytest.mark.parametrize("name", ["aris3000_3000khz", "oculus_m1200d_2100khz", "gemini_720i"])
def test_a_preset_image_has_almost_no_black_pixels_and_a_grey_shadow(floor_with_a_box, name):
    # A real FLS recording has under 0.2 % exactly black pixels and grey, not black, shadows. In the box's shadow
    # no ray reaches the floor: each bin is noise and reverberation, exponential about its mean
    # m(r) = 10^(NL / 10) G(r) + 10^(N_post / 10) + clean (the reverberation after gain), G(r) = r^3 10^(2 alpha r / 10)
    # (30 log r TVG, Francois-Garrison alpha), so its median is m ln 2 (-1.6 dB), shown at
    # 255 (10 log10(m ln 2) - display_floor) / dynamic_range: at least 255 (27 - 1.6) / dynamic_range, the post-TVG
    # noise's grain; the lit floor around it is brighter.
    cfg = ImagingSonarConfig.preset(name, max_range=8.0)
    res = ImagingSonar(cfg, device="cpu").render(floor_with_a_box, pitched(25.0))
    u = res.to_uint8()[0]
    assert np.mean(u == 0) < 0.002
    out = res.numpy()
    hits, ranges, bearings = out["hit_count"][0], res.ranges.astype(np.float64), res.bearings
    rows = (ranges > 4.9) & (ranges < 5.3)
    cols = np.abs(np.degrees(bearings)) < 1.0
    in_shadow = hits[np.ix_(rows, cols)] == 0
    assert in_shadow.sum() > 20
    alpha = cfg.absorption_db_per_m(cfg.absorption)
    gain = 10.0 ** (tvg_db(ranges[rows], "30log", alpha, 0.0) / 10.0)
    mean = (10.0 ** (cfg.noise_level / 10.0) * gain[:, None] + 10.0 ** (cfg.post_tvg_noise_level / 10.0)
            + out["clean_intensity"][0][np.ix_(rows, cols)])
    x = (out["intensity"][0][np.ix_(rows, cols)] / mean)[in_shadow]
    assert np.median(x) == pytest.approx(math.log(2.0), rel=0.2)
    gray = 255.0 * (10.0 * np.log10(np.median(mean[in_shadow]) * math.log(2.0)) - cfg.display_floor) / cfg.dynamic_range
    shadow = u[np.ix_(rows, cols)][in_shadow]
    assert np.median(shadow) == pytest.approx(gray, abs=8.0)
    assert np.median(shadow) >= 255.0 * (27.0 - 1.6) / cfg.dynamic_range - 8.0
    lit = u[np.ix_((ranges > 5.5) & (ranges < 6.5), np.abs(np.degrees(bearings)) > 4.0)]
    assert np.median(lit) > np.median(shadow) + 20


def test_post_tvg_noise_that_would_overflow_float32_is_refused_naming_the_field():
    # float32's largest value is 3.4e38 = 385.3 dB. A post-TVG noise of 400 dB (1e40, inside the old 420 dB ceiling)
    # filled every sample of the image with inf. The ceiling is now 300 dB (SL's 260 dB ceiling + 40 dB, above any
    # echo after a TVG), 85 dB under float32's: the exponential tail (+13.5 dB at a 2^-32 draw) and a megapixel
    # frame's sum for AGC / normalisation (+60 dB) still fit.
    for bad in (301.0, 400.0, 420.0):
        with pytest.raises(ConfigError, match="post_tvg_noise_level"):
            ImagingSonarConfig(model="device", post_tvg_noise_level=bad)
    # At the ceiling, with AGC or global normalisation, every sample is finite.
    for extra in ({"agc_level": 0.0}, {"normalisation": "global"}, {}):
        cfg = ImagingSonarConfig(**{**BARE, "noise_level": 60.0, "post_tvg_noise_level": 300.0, **extra},
                                 horizontal_fov=30.0, vertical_fov=10.0, n_beams=64, rays_per_beam=1,
                                 elevation_rays=2, min_range=1.0, max_range=11.0, range_bins=64)
        img = ImagingSonar(cfg, device="cpu").render(empty_water(), pitched(0.0)).numpy()["intensity"][0]
        assert np.isfinite(img).all() and img.max() > 0
    # Referred to the input the noise is 10^(N_post / 10) / G(r): 300 dB under a 40 log r TVG less 100 dB at the
    # first row (r = 0.1 + 0.05 = 0.15 m: 40 log10(0.15) - 100 = -133 dB, so 10^(300 / 10) / G = 10^43.3 = 2e43 re
    # 1 uPa^2, past float32) is refused at construction, naming the field, not rendered as inf.
    cfg = ImagingSonarConfig(**{**BARE, "post_tvg_noise_level": 300.0, "tvg": "40log", "tvg_gain": -100.0},
                             horizontal_fov=30.0, vertical_fov=10.0, n_beams=16, rays_per_beam=1, elevation_rays=2,
                             min_range=0.1, max_range=10.1, range_bins=100)
    with pytest.raises(ConfigError, match="post_tvg_noise_level"):
        ImagingSonar(cfg, device="cpu")
    mb = MultibeamSonarConfig(model="device", post_tvg_noise_level=300.0, tvg="40log", tvg_gain=-100.0,
                              n_beams=16, max_range=20.0)
    with pytest.raises(ConfigError, match="post_tvg_noise_level"):
        MultibeamSonar(mb, device="cpu")


def _fan_sensor(kind: str, **chain):
    """A fan sensor in empty water with the receiver settings ``chain``; its (B, n_range, n_channels) image key."""
    from oceansim_py import (ProfilingSonar, ProfilingSonarConfig, SidescanSonar, SidescanSonarConfig,
                             SinglebeamSonar, SinglebeamSonarConfig)
    from oceansim_py.sensors.msis import Msis, MsisConfig

    window = dict(min_range=1.0, max_range=41.0, range_bins=200)
    if kind == "sidescan":
        cfg = SidescanSonarConfig(**chain, **window, along_track_beamwidth=0.25, vertical_beamwidth=85.0,
                                  depression=47.5, along_track_rays=1, across_track_rays=16)
        return SidescanSonar(cfg, device="cpu"), "intensity", cfg.ranges()
    if kind == "profiling":
        cfg = ProfilingSonarConfig(**chain, **window, swath_width=90.0, along_track_beamwidth=1.0, n_beams=16,
                                   across_rays_per_beam=1, along_track_rays=1)
        return ProfilingSonar(cfg, device="cpu"), "image", cfg.ranges()
    if kind == "singlebeam":
        cfg = SinglebeamSonarConfig(**chain, **window)
        return SinglebeamSonar(cfg, device="cpu"), "intensity", cfg.ranges()
    cfg = MsisConfig(**chain, **window, frequency=750e3, horizontal_beamwidth=2.0, vertical_beamwidth=10.0,
                     horizontal_rays=3, vertical_rays=4, step_angle=9.0)
    return Msis(cfg, device="cpu"), "intensity", cfg.ranges()


@pytest.mark.parametrize("kind", ["sidescan", "profiling", "singlebeam", "msis"])
@pytest.mark.parametrize("tvg, tvg_gain, bounces", [("30log", 0.0, 0), ("none", 20.0, 1)])
def test_every_fan_sensor_holds_the_post_tvg_noise_in_empty_water(kind, tvg, tvg_gain, bounces):
    # Empty water, NL = 60 dB (1e6), N_post = 100 dB (1e10), no absorption, 40 poses in one batch: each sample's
    # intensity is exponential of mean 1e6 G(r) + 1e10, G(r) = r^3 (30 log r) or 10^(20 / 10) = 100 (no TVG, 20 dB
    # fixed gain; then the post-TVG noise is 1e10 / 100 = 1e8 re 1 uPa^2 referred to the input, 100 times the input
    # noise). Over >= 8000 samples the mean of intensity / expectation is 1 within 4 standard errors, and so is each
    # half of the range window (1-21 m, where N_post dominates under 30 log r up to 21.5 m, and 21-41 m).
    chain = dict(model="device", source_level=SL, noise_level=60.0, post_tvg_noise_level=100.0,
                 volume_scattering=None, tvg=tvg, tvg_gain=tvg_gain, absorption=0.0, normalisation="none",
                 bandwidth=0.0, beam_width=0.0, multipath_bounces=bounces)
    sensor, key, ranges = _fan_sensor(kind, **chain)
    out = np.asarray(sensor.render(empty_water(), np.tile(LEVEL, (40, 1))).numpy()[key], dtype=np.float64)
    r = np.asarray(ranges, dtype=np.float64)
    gain = r**3 if tvg == "30log" else np.full_like(r, 100.0)
    x = out.reshape(40, r.size, -1) / (1e6 * gain + 1e10)[None, :, None]
    assert x.size >= 8000
    for part in (x, x[:, :100], x[:, 100:]):
        assert part.mean() == pytest.approx(1.0, abs=4.0 / math.sqrt(part.size))


def test_a_preset_post_tvg_noise_follows_an_overridden_noise_level(tmp_path):
    # Oculus M750d: NL 68.1 dB, N_post 98.1 dB (NL + 30). Overriding NL on the preset moves N_post by the same step;
    # a null NL (a receiver without noise) nulls it; a given N_post wins; the ARIS keeps its NL + 47 dB step; a
    # YAML config with `preset:` behaves the same; a peer preset has no post-TVG noise to move.
    base = ImagingSonarConfig.preset("oculus_m750d")
    assert (base.noise_level, base.post_tvg_noise_level) == (68.1, 98.1)
    assert ImagingSonarConfig.preset("oculus_m750d", noise_level=50.0).post_tvg_noise_level == pytest.approx(80.0)
    assert ImagingSonarConfig.preset("oculus_m750d", noise_level=None).post_tvg_noise_level is None
    assert ImagingSonarConfig.preset("oculus_m750d", noise_level=None,
                                     post_tvg_noise_level=90.0).post_tvg_noise_level == 90.0
    assert ImagingSonarConfig.preset("aris1800_1800khz", noise_level=60.0).post_tvg_noise_level == pytest.approx(107.0)
    path = tmp_path / "fls.yaml"
    path.write_text("preset: gemini_720i\nnoise_level: 70\n")
    cfg = ImagingSonarConfig.from_yaml(path)
    assert cfg.post_tvg_noise_level == pytest.approx(70.0 + 30.0)
    assert ImagingSonarConfig.preset("oculus_m750d_peer", noise_level=None).post_tvg_noise_level is None
    assert MultibeamSonarConfig.preset("seabat_f50", noise_level=None).post_tvg_noise_level is None
    # tvg: none on a preset: no gain stage, no post-TVG noise; empty water's mean is the set level 1e6 (8192
    # exponential samples: standard error 1.1 %, tolerance 4 of them)
    flat = ImagingSonarConfig.preset("oculus_m750d", tvg="none", noise_level=60.0, volume_scattering=None,
                                     n_beams=64, range_bins=128, rays_per_beam=1, elevation_rays=4)
    assert flat.post_tvg_noise_level is None
    img = ImagingSonar(flat, device="cpu").render(empty_water(), pitched(0.0)).numpy()["intensity"]
    assert img.mean() == pytest.approx(1e6, rel=4.0 / math.sqrt(img.size))
    assert ImagingSonarConfig.preset("oculus_m750d", tvg="none",
                                     post_tvg_noise_level=90.0).post_tvg_noise_level == 90.0
    assert ImagingSonarConfig.preset("oculus_m750d", tvg="20log").post_tvg_noise_level == 98.1
    # A noise-free preset render is noise-free: empty water gives exactly zero intensity.
    quiet = ImagingSonarConfig.preset("gemini_720i", noise_level=None, volume_scattering=None, n_beams=32,
                                      range_bins=64, rays_per_beam=1, elevation_rays=4)
    assert (ImagingSonar(quiet, device="cpu").render(empty_water(), pitched(0.0)).numpy()["intensity"] == 0).all()
