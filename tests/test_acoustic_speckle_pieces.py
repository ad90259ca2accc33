"""Fully developed speckle at any ray density: each footprint piece is a circular complex Gaussian scatterer
(chain.scatterer_phasor_table; docs/PHYSICS_ACOUSTIC_CHAIN.md §2), checked against numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.kernels import acoustic_chain as kc
from oceansim_py.sensors.acoustic.chain import scatterer_phasor_table
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig


def test_scatterer_table_holds_the_unit_phasors_and_rayleigh_amplitudes():
    # Rows n < 4096: exp(i 2 pi n / 4096), the phase codes' phasors. Rows 4096 + m: (a_m, 0), a_m^2 the unit
    # exponential's mid-quantiles -ln(1 - (k + 1/2) / 4096) in a shuffled order, scaled to mean 1.
    n = 2 ** int(kc.PHASOR_BITS)
    z = scatterer_phasor_table(int(kc.PHASOR_BITS)).astype(np.float64)
    assert z.shape == (2 * n, 2)
    angle = 2.0 * math.pi * np.arange(n) / n
    np.testing.assert_allclose(z[:n], np.stack([np.cos(angle), np.sin(angle)], 1), atol=1e-7)
    assert (z[n:, 1] == 0).all() and (z[n:, 0] > 0).all()
    power = z[n:, 0] ** 2
    assert power.mean() == pytest.approx(1.0, abs=1e-6)
    quantiles = -np.log1p(-(np.arange(n) + 0.5) / n)
    np.testing.assert_allclose(np.sort(power), quantiles / quantiles.mean(), rtol=1e-5)
    # shuffled: the power's mean over each quarter of the rows is 1 within the standard error of 1024 exponential
    # draws (3 sigma = 0.094), and its correlation with m is ~0 (3 / sqrt(n))
    quarters = power.reshape(4, -1).mean(axis=1)
    assert np.abs(quarters - 1.0).max() < 0.094
    assert abs(np.corrcoef(power, np.arange(n))[0, 1]) < 3.0 / math.sqrt(n)


@pytest.mark.parametrize("rays_per_beam", [1, 2])
def test_a_floor_at_one_or_two_rays_per_beam_has_fully_developed_speckle(rays_per_beam):
    # A rough floor 2 m down, seen 25 deg down with one or two rays per beam and 32 elevation rays: a cell holds a
    # few footprint pieces. With unit-amplitude pieces a sum of N of them has scintillation index 1 - 1/N (0.32-0.36
    # measured at one ray per beam, 0.45-0.57 at two); with complex Gaussian pieces the sum is complex Gaussian for any
    # N: intensity / its expectation (the clean image) is a unit exponential, index 1.
    floor = make_scene(("floor", quad([10.0, 0.0, -2.0], [0.0, 0.0, 1.0], 60.0), 0.01))
    t = math.radians(25.0)
    pose = np.array([0.0, 0.0, 0.0, 0.0, math.sin(t / 2), 0.0, math.cos(t / 2)])
    cfg = ImagingSonarConfig(model="device", multiplicative_sigma=0.0, additive_sigma=0.0, normalisation="none",
                             source_level=200.0, noise_level=None, volume_scattering=None, tvg="none",
                             horizontal_fov=30.0, vertical_fov=20.0, n_beams=96, beam_width=0.3,
                             beam_steering="constant", rays_per_beam=rays_per_beam, elevation_rays=32,
                             min_range=3.0, max_range=9.0, range_bins=400, bandwidth=50000.0, absorption=0.0)
    out = ImagingSonar(cfg, device="cpu").render(floor, pose).numpy()
    i, c = out["intensity"][0].astype(np.float64), out["clean_intensity"][0].astype(np.float64)
    region = np.s_[60:280, 16:80]   # 3.9-7.2 m, inside the floor the 15-35 deg fan reaches (3.5-7.7 m)
    assert (c[region] > 0).all()
    x = i[region] / c[region]
    assert x.mean() == pytest.approx(1.0, abs=0.1)
    assert x.var() / x.mean() ** 2 == pytest.approx(1.0, abs=0.15)
    # exponential: the fraction under the median of a unit exponential (ln 2) is one half
    assert np.mean(x < math.log(2.0)) == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize("elevation_rays", [1, 8])
def test_a_sub_wavelength_move_keeps_each_scatterers_amplitude(elevation_rays):
    # A wall 10 m ahead, one ray per beam and no point spread (bandwidth and beam width 0): with one elevation ray
    # a cell holds one footprint piece, of intensity I a^2 (a the scatterer's Rayleigh amplitude); with 8, 8 pieces.
    # Moving the sensor delta = lambda / 64 (lambda = c / f = 2 mm) toward the wall turns every echo's phase by
    # 2 pi / 32 (all of a cell's pieces alike, their path differences change by ~delta (1 - cos 0.5 deg), nothing)
    # and I by (r / r')^4 - 1 ~ 4 delta / r ~ 1e-5; a hit point moves delta tan(theta) <= lambda / 110 along the
    # wall, so ~4 % of them at most cross a lambda / 4 cell of the scatterer grid. Each patch keeps its amplitude
    # and the pieces their phase differences: >= 85 % of the cells keep their intensity within 0.5 dB. (Amplitudes
    # drawn from the whole phase code, carrier included, were redrawn at any move: 3 % / 9 % of the cells within
    # 0.5 dB; phases of the footprint's pieces in other bins too.)
    # (The wall at x = 10.0002, not 10: 10 m is a whole number of lambda / 4 = 0.5 mm grid cells, and a hit point on
    # a cell boundary falls on either side by float32 rounding.)
    wall = make_scene(("wall", quad([10.0002, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    cfg = ImagingSonarConfig(model="device", multiplicative_sigma=0.0, additive_sigma=0.0, normalisation="none",
                             source_level=200.0, noise_level=None, volume_scattering=None, tvg="none", bandwidth=0.0,
                             beam_width=0.0, horizontal_fov=60.0, vertical_fov=0.5, n_beams=256,
                             rays_per_beam=1, elevation_rays=elevation_rays, min_range=5.0, max_range=15.0,
                             range_bins=20, jitter=False)
    delta = cfg.sound_speed / cfg.frequency / 64.0
    sonar = ImagingSonar(cfg, device="cpu")
    before, after = (sonar.render(wall, np.array([x, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])).numpy()["intensity"][0]
                     .astype(np.float64) for x in (0.0, delta))
    lit = (before > 0) & (after > 0)
    assert lit.sum() >= 250
    change_db = np.abs(10.0 * np.log10(after[lit] / before[lit]))
    assert np.mean(change_db < 0.5) >= 0.85


@pytest.mark.parametrize("elevation_rays", [1, 3, 8])
def test_cells_of_one_to_eight_pieces_hold_exponential_intensity_around_the_clean_image(elevation_rays):
    # A wall 10 m ahead, one ray per beam, no point spread: a cell holds the pieces of its beam's elevation rays
    # (0.98, 2.9, 7.8 hits per lit cell). Whatever their number, intensity / clean is a unit exponential: mean 1
    # within 3 standard errors (3 / sqrt(n)), Kolmogorov-Smirnov distance under its 1 % critical value 1.63 / sqrt(n).
    wall = make_scene(("wall", quad([10.0002, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    ratios = []
    for seed in range(4):
        cfg = ImagingSonarConfig(model="device", multiplicative_sigma=0.0, additive_sigma=0.0, normalisation="none",
                                 source_level=200.0, noise_level=None, volume_scattering=None, tvg="none",
                                 bandwidth=0.0, beam_width=0.0, horizontal_fov=60.0, vertical_fov=0.5, n_beams=256,
                                 rays_per_beam=1, elevation_rays=elevation_rays, min_range=5.0, max_range=15.0,
                                 range_bins=20, jitter=False, seed=seed)
        out = ImagingSonar(cfg, device="cpu").render(wall, np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])).numpy()
        i, c = out["intensity"][0].astype(np.float64), out["clean_intensity"][0].astype(np.float64)
        ratios.append(i[c > 0] / c[c > 0])
    x = np.sort(np.concatenate(ratios))
    n = x.size
    assert n >= 1000
    assert x.mean() == pytest.approx(1.0, abs=3.0 / math.sqrt(n))
    cdf = 1.0 - np.exp(-x)
    assert max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n)) < 1.63 / math.sqrt(n)
