"""Display mapping of acoustic images, as sonar devices show them (docs/PHYSICS.md §1b, Display).

Devices (ARIS, Oculus, Gemini) show 10 log10(I) inside a window [gain, gain + dynamic range] (dB) mapped to
0-255, optionally through a gamma curve, often with a colour map. :func:`db_window_to_uint8` does that;
:func:`apply_colormap` turns 8-bit images into RGB with a small set of analytic colour maps.
"""

from __future__ import annotations

import numpy as np

from oceansim_py.errors import ConfigError

COLORMAPS: tuple[str, ...] = ("gray", "copper", "hot", "amber")


def db_window_to_uint8(values: np.ndarray, floor_db: float, dynamic_range_db: float,
                       gamma: float = 1.0) -> np.ndarray:
    """uint8 = round(255 * clip((10 log10 I - floor_db) / dynamic_range_db, 0, 1) ^ gamma).

    ``values``: intensities (linear, e.g. re 1 uPa^2 after TVG); ``floor_db``: the level shown black (the
    device's gain control: lower it to brighten); ``dynamic_range_db``: the span from black to white.
    Zero, negative and non-finite values are black.
    """
    if not dynamic_range_db > 0:
        raise ConfigError(f"db_window_to_uint8: dynamic_range_db must be > 0 dB, got {dynamic_range_db}")
    if not gamma > 0:
        raise ConfigError(f"db_window_to_uint8: gamma must be > 0, got {gamma}")
    v = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(v) & (v > 0)
    db = np.where(ok, 10.0 * np.log10(np.where(ok, v, 1.0)), -np.inf)
    x = np.clip((db - floor_db) / dynamic_range_db, 0.0, 1.0)
    return np.rint(255.0 * x**gamma).astype(np.uint8)


def apply_colormap(image: np.ndarray, name: str) -> np.ndarray:
    """(..., 3) uint8 RGB of a uint8 image through colour map ``name`` (one of :data:`COLORMAPS`).

    gray: r = g = b = x; copper (matplotlib's): (min(1, 1.25 x), 0.7812 x, 0.4975 x); hot: black-red-yellow-white
    ramps of 3/8, 3/8, 1/4 of the range; amber (the orange-on-black of many FLS viewers): (x, 0.65 x, 0.15 x).
    """
    if name not in COLORMAPS:
        raise ConfigError(f"apply_colormap: colormap must be one of {list(COLORMAPS)}, got {name!r}")
    x = np.asarray(image, dtype=np.float64) / 255.0
    if name == "gray":
        rgb = np.stack([x, x, x], -1)
    elif name == "copper":
        rgb = np.stack([np.minimum(1.0, 1.25 * x), 0.7812 * x, 0.4975 * x], -1)
    elif name == "hot":
        rgb = np.stack([np.clip(x / 0.375, 0, 1), np.clip((x - 0.375) / 0.375, 0, 1), np.clip((x - 0.75) / 0.25, 0, 1)],
                       -1)
    else:
        rgb = np.stack([x, 0.65 * x, 0.15 * x], -1)
    return np.rint(255.0 * rgb).astype(np.uint8)
