"""Bandwidth conventions: the -3 dB bandwidth of datasheets and the Gaussian spectrum parameter b.

Every bandwidth field of the device chain means the -3 dB full bandwidth B (the span where the pulse's power
spectrum is within 3 dB of its peak), as datasheets give it. The multibeam's coherent model (docs/PHYSICS.md §2) uses
the parameter b of S(f) = S0 exp(-pi^2 (f - fc)^2 / b^2): its power spectrum |S|^2 = exp(-2 pi^2 df^2 / b^2)
is at -3 dB (one half) where |df| = b sqrt(ln 2 / 2) / pi = 0.18739 b, so B = 0.37478 b and b = 2.6683 B.

Range resolution. The device chain's convention (issue 11, item 4) is that a -3 dB bandwidth B gives a point
target a range response whose intensity -3 dB full width is c / (2 B), i.e. a delay width of 1 / B. The
imaging sonar's range kernel is scaled so (beam_pattern.range_kernel); the multibeam's device model uses the
matched-filter response of a flat band, h(t) = sinc(kappa B t) = sin(pi x) / (pi x), x = kappa B t, with
kappa = 2 x_half = 0.88589 (sinc^2 is 1/2 at x_half = 0.44295): its intensity -3 dB full width is 1 / B, its first
side lobe -13.26 dB, and its intensity autocorrelation (a speckle grain) is the same sinc^2, one resolution cell.
"""

from __future__ import annotations

import math

import numpy as np

#: B_-3dB / b for the Gaussian spectrum S(f) = exp(-pi^2 (f - fc)^2 / b^2).
MINUS_3DB_PER_GAUSSIAN_B = 2.0 * math.sqrt(math.log(2.0) / 2.0) / math.pi


def gaussian_b_from_minus_3db(bandwidth_3db_hz: float) -> float:
    """The Gaussian parameter b (Hz) whose power spectrum has -3 dB full width ``bandwidth_3db_hz``."""
    return bandwidth_3db_hz / MINUS_3DB_PER_GAUSSIAN_B


def minus_3db_from_gaussian_b(b_hz: float) -> float:
    """The -3 dB full bandwidth (Hz) of the Gaussian spectrum with parameter ``b_hz``."""
    return b_hz * MINUS_3DB_PER_GAUSSIAN_B


#: x where sinc(x)^2 = sin(pi x)^2 / (pi x)^2 falls to 1/2.
SINC_HALF_POWER_X = 0.44294647


def sinc_rate_per_bandwidth() -> float:
    """kappa = 2 x_half: the range response sinc(kappa B t) has intensity -3 dB full width 1 / B in delay."""
    return 2.0 * SINC_HALF_POWER_X


def sinc_power_integral(z: float, steps: int = 200001) -> float:
    """The integral of sinc(y)^2 over [-z, z] (trapezoid on ``steps`` points; 1 for z -> infinity)."""
    y = np.linspace(-z, z, steps)
    f = np.sinc(y) ** 2
    return float(np.sum((f[1:] + f[:-1]) * 0.5) * (y[1] - y[0]))
