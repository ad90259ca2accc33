"""HoloOcean's ImagingSonar options by their meanings (AddSigma, MultSigma, RangeSigma, ScaleNoise, AzimuthStreaks,
MultiPath placeholder), on the imaging sonar's peer model, against numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.errors import ConfigError
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig

LEVEL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def wall(x: float = 5.0, normal=(-1.0, 0.0, 0.0)):
    return make_scene(("wall", quad([x, 0.0, 0.0], list(normal), 40.0), 0.5))


def far_quad():
    return make_scene(("far", quad([-50.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1), 0.5))


def test_holoocean_keys_map_to_their_meanings():
    # The HoloOcean docs' example configuration (ProfilingSonar/ImagingSonar page).
    c = ImagingSonarConfig.from_holoocean({
        "Azimuth": 120, "Elevation": 20, "RangeMin": 1, "RangeMax": 60, "RangeBins": 512, "AzimuthBins": 512,
        "AddSigma": 0.15, "MultSigma": 0.2, "MultiPath": False, "ClusterSize": 5, "ScaleNoise": True,
        "AzimuthStreaks": -1, "RangeSigma": 0.1, "ShowWarning": True, "InitOctreeRange": 70, "ViewRegion": False,
        "ViewOctree": -10})
    assert (c.horizontal_fov, c.vertical_fov, c.min_range, c.max_range, c.range_bins, c.n_beams) == (
        120, 20, 1, 60, 512, 512)
    assert (c.additive_sigma, c.multiplicative_sigma, c.range_sigma, c.azimuth_streaks) == (0.15, 0.2, 0.1, -1)
    # ScaleNoise: h = (r / r_max)^2 (1 + 0.5 exp(-a^2 / (Azimuth / 64))): width sqrt(120 / 64) = 1.3693 deg.
    assert c.additive_range_scaled and c.additive_beam_gain == 0.5
    assert c.additive_beam_width == pytest.approx(1.3693, abs=1e-4)
    assert c.model == "peer" and c.aggregation == "mean" and c.normalisation == "global"   # holoocean_default
    assert ImagingSonarConfig.from_holoocean({"AddCov": 0.04, "MultCov": 0.09}).additive_sigma == pytest.approx(0.2)
    assert ImagingSonarConfig.from_holoocean({"MultCov": 0.09}).multiplicative_sigma == pytest.approx(0.3)


@pytest.mark.parametrize("configuration, match", [
    ({"MultiPath": "yes"}, "multipath.*true or false"), ({"AzimuthStreaks": 2}, "azimuth_streaks"),
    ({"RangeSigma": -0.1}, "range_sigma"), ({"AddCov": -1.0}, "AddCov"), ({"Octree": 3}, "unknown HoloOcean")])
def test_bad_holoocean_options_are_refused_by_name(configuration, match):
    with pytest.raises(ConfigError, match=match):
        ImagingSonarConfig.from_holoocean(configuration)


def test_multipath_and_peer_only_options():
    # HoloOcean's MultiPath is the peer model's (issue 16 made it real; tests/test_multipath.py); the device model
    # has multipath_bounces instead
    assert ImagingSonarConfig.from_holoocean({"MultiPath": True}).multipath is True
    with pytest.raises(ConfigError, match=r"ImagingSonarConfig.multipath: is HoloOcean's one-bounce MultiPath"):
        ImagingSonarConfig.preset("gemini_720i", multipath=True)
    with pytest.raises(ConfigError, match=r"ImagingSonarConfig.range_sigma: must be 0 with model 'device'"):
        ImagingSonarConfig.preset("gemini_720i", range_sigma=0.1)
    with pytest.raises(ConfigError, match=r"ImagingSonarConfig.azimuth_streaks"):
        ImagingSonarConfig.preset("gemini_720i", azimuth_streaks=1)


def test_range_sigma_spreads_returns_exponentially_and_scales_them_by_the_pdf():
    # A wall square to a 4 x 4 deg fan at 5 m: every return at r0 = 5.000-5.006 m. With RangeSigma s = 0.5 m each
    # return is binned at r0 + x, x ~ Exp(mean s): bin k of [e_k, e_k + dr) gets
    # P_k = exp(-(e_k - r0) / s) - exp(-(e_k + dr - r0) / s) of the returns (the last bin also the tail), and each
    # is scaled by exp(-x / s), whose mean is 1/2: the image's total halves.
    base = dict(horizontal_fov=4.0, vertical_fov=4.0, n_beams=16, rays_per_beam=8, elevation_rays=96, min_range=4.0,
                max_range=12.0, range_bins=128, absorption=0.0, aggregation="sum", normalisation="none",
                multiplicative_sigma=0.0, additive_sigma=0.0)
    sonar = ImagingSonar(ImagingSonarConfig(**base, range_sigma=0.5), device="cpu")
    res = sonar.render(wall(), LEVEL).numpy()
    plain = ImagingSonar(ImagingSonarConfig(**base), device="cpu").render(wall(), LEVEL).numpy()
    n = plain["hit_count"].sum()
    assert res["hit_count"].sum() == n == 16 * 8 * 96
    counts = res["hit_count"][0].sum(axis=1) / n
    edges = 4.0 + np.arange(128) * 0.0625
    r0 = 5.002
    p = np.exp(-np.maximum(edges - r0, 0.0) / 0.5) - np.exp(-np.maximum(edges + 0.0625 - r0, 0.0) / 0.5)
    p[-1] += math.exp(-(12.0 - r0) / 0.5)
    assert np.abs(counts - p).max() < 0.012
    assert res["clean_intensity"].sum() / plain["clean_intensity"].sum() == pytest.approx(0.5, abs=0.02)
    # Keyed by (seed, frame): another frame draws other offsets, the same frame the same.
    again = sonar.render(wall(), LEVEL).numpy()
    np.testing.assert_array_equal(again["hit_count"], res["hit_count"])
    assert not np.array_equal(sonar.render(wall(), LEVEL, frame_index=1).numpy()["hit_count"], res["hit_count"])


def test_scale_noise_scales_the_additive_noise_with_range_and_azimuth():
    # Empty water, AddSigma s = 0.1, ScaleNoise: the additive noise is Rayleigh(s) h, mean s sqrt(pi / 2) h with
    # h = (r / r_max)^2 (1 + 0.5 exp(-a^2 / (120 / 64))) (a in degrees; r the bin centre here). Centre beams
    # (a = +-0.117 deg): 1 + 0.5 exp(-0.0073) = 1.4964; edge beams: 1.
    cfg = ImagingSonarConfig.from_holoocean({"Azimuth": 120, "Elevation": 10, "RangeMin": 1, "RangeMax": 10,
                                             "RangeBins": 64, "AzimuthBins": 512, "AddSigma": 0.1, "MultSigma": 0.0,
                                             "ScaleNoise": True}, rays_per_beam=1, elevation_rays=2)
    res = ImagingSonar(cfg, device="cpu").render(far_quad(), np.stack([LEVEL] * 16)).numpy()["intensity"]
    r = cfg.ranges().astype(np.float64)
    range_term = (r / 10.0) ** 2
    centre = res[:, :, 255:257].astype(np.float64).mean(axis=(0, 2))
    edge = res[:, :, np.r_[0:64, 448:512]].astype(np.float64).mean(axis=(0, 2))
    rayleigh_mean = 0.1 * math.sqrt(math.pi / 2)
    assert (edge / range_term).mean() == pytest.approx(rayleigh_mean, rel=0.02)
    assert (centre / range_term).mean() == pytest.approx(rayleigh_mean * 1.4964, rel=0.03)
    # Range law: the far half's edge-beam noise over the near half's is the ratio of (r / r_max)^2.
    near, far = slice(0, 32), slice(32, 64)
    assert edge[far].sum() / edge[near].sum() == pytest.approx(range_term[far].sum() / range_term[near].sum(),
                                                               rel=0.03)


@pytest.mark.parametrize("mode", [-1, 1])
def test_azimuth_streaks_remap_rows_of_near_normal_returns(mode):
    # A wall square to the fan (every return within 8 deg of the normal) streaks the rows it fills: z -> z^2
    # (mode -1) or 1 - (1 - z)^2 (mode 1), after the noise, with the noise of the same seed and frame. Rows without
    # returns, and a wall met 30 deg off its normal, are unchanged.
    base = ImagingSonarConfig.from_holoocean({"Azimuth": 10, "Elevation": 6, "RangeMin": 3, "RangeMax": 7,
                                              "RangeBins": 64, "AzimuthBins": 32, "AddSigma": 0.05, "MultSigma": 0.1},
                                             rays_per_beam=4, elevation_rays=32)
    streaked = base.replace(azimuth_streaks=mode)
    for scene, expect_rows in ((wall(), True), (wall(normal=(-math.cos(math.radians(30)), math.sin(math.radians(30)),
                                                             0.0)), False)):
        plain = ImagingSonar(base, device="cpu").render(scene, LEVEL).numpy()
        got = ImagingSonar(streaked, device="cpu").render(scene, LEVEL).numpy()
        z = plain["intensity"][0].astype(np.float64)
        remapped = z * z if mode == -1 else 1.0 - (1.0 - z) ** 2
        rows = plain["hit_count"][0].sum(axis=1) > 0
        assert rows.any()
        if expect_rows:
            np.testing.assert_allclose(got["intensity"][0][rows], remapped[rows], rtol=1e-6)
        else:
            np.testing.assert_array_equal(got["intensity"][0][rows], plain["intensity"][0][rows])
        np.testing.assert_array_equal(got["intensity"][0][~rows], plain["intensity"][0][~rows])
