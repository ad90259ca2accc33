"""Warnings for results that are empty for a reason the user can fix.

A sensor that sees nothing returns arrays of misses, which is valid data but almost never what was meant.
:func:`warn_if_blind` raises an :class:`EmptyViewWarning` (a :class:`OceanSimWarning`, itself a
``UserWarning``) that says why: every triangle lies above the sea surface, the pose is outside the scene's
bounding box, or nothing lies within the sensor's range. The CLI prints these as ``oceansim-py: warning: ...``;
in Python, ``warnings.simplefilter("error", EmptyViewWarning)`` turns them into exceptions.
:func:`warn_if_above_surface` raises an :class:`OutOfWaterWarning` for a sensor that works under water posed above
the sea surface (``oceansim-py render`` checks its sonars, and its camera when it does not render the surface).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


class OceanSimWarning(UserWarning):
    """Base class of the warnings oceansim_py raises on purpose."""


class EmptyViewWarning(OceanSimWarning):
    """A sensor's output holds no return at all (hit fraction 0)."""


class OutOfWaterWarning(OceanSimWarning):
    """A sensor that works under water is posed above the sea surface (its output treats the air as water)."""


def warn_if_above_surface(sensor: str, scene: Any, positions: np.ndarray, consequence: str) -> bool:
    """Raise an :class:`OutOfWaterWarning` when any of ``positions`` ((N, 3) world, m) lies above the scene's sea
    surface (the instantaneous wave height there, else ``surface_z``); ``consequence`` says what the output then
    is. True when it warned."""
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    height = scene.surface_height(pos[:, :2])
    above = np.nonzero(pos[:, 2] > height)[0]
    if not above.size:
        return False
    k = above[0]
    count = "" if pos.shape[0] == 1 else f" at {above.size} of {pos.shape[0]} poses (first: pose {k})"
    warnings.warn(f"{sensor} is above the sea surface{count}: z = {pos[k, 2]:.3g} m, surface {height[k]:.3g} m; "
                  f"{consequence}", OutOfWaterWarning, stacklevel=2)
    return True


def empty_view_reason(scene: Any, positions: np.ndarray, max_range: float) -> str:
    """Why a sensor at ``positions`` ((N, 3) world, m) with range ``max_range`` (m) sees nothing in ``scene``."""
    lo, hi = (np.asarray(b, dtype=np.float64) for b in scene.bounds)
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    if lo[2] >= scene.surface_z:
        return (f"all geometry lies above the sea surface (lowest point z = {lo[2]:.3g} m, surface z = "
                f"{scene.surface_z:.3g} m); check the mesh's up axis (--up-axis) and placement")
    nearest = np.linalg.norm(np.clip(pos, lo, hi) - pos, axis=1)
    if (nearest > 0).all():
        return (f"the pose lies outside the scene bounds (min {np.round(lo, 2).tolist()}, max "
                f"{np.round(hi, 2).tolist()} m), {nearest.min():.3g} m from the nearest box face; check --pose, "
                f"the rig's trajectory or its scene")
    return (f"no surface lies within {max_range:g} m in the sensor's field of view; point it at the scene or raise "
            f"max_range")


def warn_if_blind(sensor: str, hit_fraction: float, scene: Any, positions: np.ndarray, max_range: float) -> bool:
    """Raise an :class:`EmptyViewWarning` when ``hit_fraction`` (share of rays or pixels that hit, [0, 1]) is 0;
    True when it warned."""
    if hit_fraction > 0:
        return False
    reason = empty_view_reason(scene, positions, max_range)
    warnings.warn(f"{sensor} saw nothing in {scene.source}: {reason}", EmptyViewWarning, stacklevel=2)
    return True


#: Directions of the all-round probe of :func:`probe_hit_fraction` (a Fibonacci sphere).
PROBE_DIRECTIONS = 256


def _fibonacci_sphere(n: int) -> np.ndarray:
    """``n`` unit vectors spread evenly over the sphere (golden-angle spiral), (n, 3)."""
    k = np.arange(n, dtype=np.float64) + 0.5
    z = 1.0 - 2.0 * k / n
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = np.pi * (3.0 - np.sqrt(5.0)) * k
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def probe_hit_fraction(scene: Any, positions: np.ndarray, max_range: float, surface_z: float | None = None) -> float:
    """Share of all-round probe rays (:data:`PROBE_DIRECTIONS` per position, every direction) from
    ``positions`` ((N, 3) world, m) that hit ``scene`` within ``max_range`` (m). 0 means a sensor there cannot
    see anything whatever its field of view: the cheap check a run makes before it renders.

    ``surface_z``: the height (m) of a flat sea surface the sensor sees although it is no geometry (a DVL tracking
    the surface, a camera with ``surface_optics: always``, a sonar with surface reverberation); a ray from below
    that reaches it within ``max_range`` counts as a hit. ``None``: geometry only."""
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    dirs = _fibonacci_sphere(PROBE_DIRECTIONS)
    origins = np.repeat(pos, PROBE_DIRECTIONS, axis=0)
    directions = np.tile(dirs, (pos.shape[0], 1))
    hits = np.asarray(scene.raycast(origins, directions, max_range=float(max_range)).hit, dtype=bool)
    if surface_z is not None:
        rise = surface_z - origins[:, 2]   # the plane at distance rise / d_z along an upward ray
        hits |= (directions[:, 2] > 0.0) & (rise >= 0.0) & (rise <= max_range * directions[:, 2])
    return float(np.mean(hits)) if hits.size else 0.0


def sees_flat_surface(config: Any) -> bool:
    """Whether a sensor with ``config`` sees the flat sea surface z = ``surface_z`` as a target although it is no
    geometry: a DVL tracking the surface, a camera with ``surface_optics: always``, an acoustic sensor with
    ``surface_reverberation``."""
    return (getattr(config, "tracking", None) == "surface" or getattr(config, "surface_optics", None) == "always"
            or getattr(config, "surface_reverberation", False) is True)
