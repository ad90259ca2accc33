"""Bandwidth conventions: the -3 dB bandwidth of datasheets and the Gaussian spectrum parameter b.

Every bandwidth field of the device chain means the -3 dB full bandwidth B (the span where the pulse's power
spectrum is within 3 dB of its peak), as datasheets give it. The multibeam's coherent model (docs/PHYSICS.md §2) uses
the parameter b of S(f) = S0 exp(-pi^2 (f - fc)^2 / b^2): its power spectrum |S|^2 = exp(-2 pi^2 df^2 / b^2)
is at -3 dB (one half) where |df| = b sqrt(ln 2 / 2) / pi = 0.18739 b, so B = 0.37478 b and b = 2.6683 B.
"""

from __future__ import annotations

import math

#: B_-3dB / b for the Gaussian spectrum S(f) = exp(-pi^2 (f - fc)^2 / b^2).
MINUS_3DB_PER_GAUSSIAN_B = 2.0 * math.sqrt(math.log(2.0) / 2.0) / math.pi


def gaussian_b_from_minus_3db(bandwidth_3db_hz: float) -> float:
    """The Gaussian parameter b (Hz) whose power spectrum has -3 dB full width ``bandwidth_3db_hz``."""
    return bandwidth_3db_hz / MINUS_3DB_PER_GAUSSIAN_B


def minus_3db_from_gaussian_b(b_hz: float) -> float:
    """The -3 dB full bandwidth (Hz) of the Gaussian spectrum with parameter ``b_hz``."""
    return b_hz * MINUS_3DB_PER_GAUSSIAN_B
