"""Sea-water sound absorption, Francois & Garrison (1982).

R. E. Francois and G. R. Garrison, "Sound absorption based on ocean measurements. Part II: Boric acid
contribution and equation for total absorption", J. Acoust. Soc. Am. 72(6):1879-1890 (1982), eq. (2)-(4)
(the form reproduced in Kaye & Laby, "Attenuation of sound in sea water", and in Lurton, "An Introduction
to Underwater Acoustics", 2nd ed., §2.3.4). Three relaxation terms, f in kHz, depth D in m, T in °C,
salinity S in PSU (ppt):

    c  = 1412 + 3.21 T + 1.19 S + 0.0167 D                      (m/s, the formula's own sound speed)
    boric acid:  A1 = 8.86 / c * 10^(0.78 pH - 5)                   dB/(km kHz)
                 P1 = 1
                 f1 = 2.8 sqrt(S / 35) 10^(4 - 1245 / (T + 273))   kHz
    MgSO4:       A2 = 21.44 S / c (1 + 0.025 T)                    dB/(km kHz)
                 P2 = 1 - 1.37e-4 D + 6.2e-9 D^2
                 f2 = 8.17 10^(8 - 1990 / (T + 273)) / (1 + 0.0018 (S - 35))   kHz
    pure water:  A3 = 4.937e-4 - 2.59e-5 T + 9.11e-7 T^2 - 1.50e-8 T^3     (T <= 20 °C)
                 A3 = 3.964e-4 - 1.146e-5 T + 1.45e-7 T^2 - 6.5e-10 T^3     (T > 20 °C)   dB/(km kHz^2)
                 P3 = 1 - 3.83e-5 D + 4.9e-10 D^2

    alpha = A1 P1 f1 f^2 / (f1^2 + f^2) + A2 P2 f2 f^2 / (f2^2 + f^2) + A3 P3 f^2      dB/km

The paper states validity for -2 < T < 22 °C, 30 < S < 35, 0.4 < f < 1000 kHz; it is used here up to a few MHz
(the pure-water term dominates there and is the classic f^2 law). Returned values are one-way dB per metre.
"""

from __future__ import annotations

import math

from oceansim_py.errors import ConfigError


def francois_garrison_terms(frequency_hz: float, temperature_c: float, salinity_psu: float, depth_m: float,
                            ph: float) -> tuple[float, float, float]:
    """The boric acid, MgSO4 and pure-water absorption terms (dB/km, one way) at ``frequency_hz``."""
    for name, value in (("frequency", frequency_hz), ("temperature", temperature_c), ("salinity", salinity_psu),
                        ("depth", depth_m), ("ph", ph)):
        if not (isinstance(value, (int, float)) and math.isfinite(value)):
            raise ConfigError(f"francois_garrison: {name} must be a finite number, got {value!r}")
    if frequency_hz <= 0:
        raise ConfigError(f"francois_garrison: frequency must be > 0 Hz, got {frequency_hz}")
    if not -2.0 <= temperature_c <= 40.0:
        raise ConfigError(f"francois_garrison: temperature must lie in [-2, 40] °C, got {temperature_c}")
    if not 0.0 <= salinity_psu <= 45.0:
        raise ConfigError(f"francois_garrison: salinity must lie in [0, 45] PSU, got {salinity_psu}")
    if not 0.0 <= depth_m <= 11000.0:
        raise ConfigError(f"francois_garrison: depth must lie in [0, 11000] m, got {depth_m}")
    if not 6.0 <= ph <= 9.0:
        raise ConfigError(f"francois_garrison: ph must lie in [6, 9], got {ph}")
    f = frequency_hz / 1000.0
    t, s, d = temperature_c, salinity_psu, depth_m
    c = 1412.0 + 3.21 * t + 1.19 * s + 0.0167 * d
    tk = t + 273.0
    a1 = 8.86 / c * 10.0 ** (0.78 * ph - 5.0)
    f1 = 2.8 * math.sqrt(s / 35.0) * 10.0 ** (4.0 - 1245.0 / tk)
    a2 = 21.44 * s / c * (1.0 + 0.025 * t)
    p2 = 1.0 - 1.37e-4 * d + 6.2e-9 * d * d
    f2 = 8.17 * 10.0 ** (8.0 - 1990.0 / tk) / (1.0 + 0.0018 * (s - 35.0))
    if t <= 20.0:
        a3 = 4.937e-4 - 2.59e-5 * t + 9.11e-7 * t**2 - 1.50e-8 * t**3
    else:
        a3 = 3.964e-4 - 1.146e-5 * t + 1.45e-7 * t**2 - 6.5e-10 * t**3
    p3 = 1.0 - 3.83e-5 * d + 4.9e-10 * d * d
    boric = a1 * f1 * f * f / (f1 * f1 + f * f)
    mgso4 = a2 * p2 * f2 * f * f / (f2 * f2 + f * f)
    water = a3 * p3 * f * f
    return boric, mgso4, water


def francois_garrison(frequency_hz: float, temperature_c: float = 10.0, salinity_psu: float = 35.0,
                      depth_m: float = 0.0, ph: float = 8.0) -> float:
    """One-way absorption alpha (dB/m) of sea water at ``frequency_hz`` (Francois & Garrison 1982)."""
    return sum(francois_garrison_terms(frequency_hz, temperature_c, salinity_psu, depth_m, ph)) / 1000.0
