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


def test_scatterer_table_keeps_the_phase_code_and_draws_rayleigh_amplitudes():
    # Entry n: phase 2 pi n / 4096 exactly as the unit phasor table's (the echo's own phase code indexes it), |z|^2
    # the unit exponential's mid-quantiles -ln(1 - (m + 1/2) / 4096) in a shuffled order, scaled to mean 1.
    n = 2 ** int(kc.PHASOR_BITS)
    z = scatterer_phasor_table(int(kc.PHASOR_BITS)).astype(np.float64)
    assert z.shape == (n, 2)
    angle = np.arctan2(z[:, 1], z[:, 0]) % (2.0 * math.pi)
    err = np.abs((angle - 2.0 * math.pi * np.arange(n) / n + math.pi) % (2.0 * math.pi) - math.pi)
    assert err.max() < 1e-6
    power = (z**2).sum(axis=1)
    assert power.mean() == pytest.approx(1.0, abs=1e-6)
    quantiles = -np.log1p(-(np.arange(n) + 0.5) / n)
    np.testing.assert_allclose(np.sort(power), quantiles / quantiles.mean(), rtol=1e-5)
    # the amplitude does not follow the phase: the power's mean over each quarter of the phases is 1 within the
    # standard error of 1024 exponential draws (3 sigma = 0.094), and its correlation with n is ~0 (3 / sqrt(n))
    quarters = power.reshape(4, -1).mean(axis=1)
    assert np.abs(quarters - 1.0).max() < 0.094
    assert abs(np.corrcoef(power, np.arange(n))[0, 1]) < 3.0 / math.sqrt(n)
    # the complex mean is ~0 (a circular Gaussian): |mean z| < 3 / sqrt(2 n)
    assert np.hypot(*z.mean(axis=0)) < 3.0 / math.sqrt(2 * n)


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
