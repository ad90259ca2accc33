"""Water current fields: the velocity of the water (m/s, world frame, Z up) at world points, for the DVL's
water-track (velocity relative to the water) and anything else that needs the water's motion.

Three kinds (:func:`current_field`):

- ``uniform``: one vector everywhere;
- ``profile``: a function of depth below the surface (``surface_z - z``), rows ``(depth m, vx, vy, vz)`` in
  increasing depth, linearly interpolated, held constant above the first and below the last row;
- ``grid``: a regular grid from a file, trilinear inside and clamped to the nearest face outside:

  * ``.npz`` with 1-D axes ``x`` (nx,), ``y`` (ny,), ``z`` (nz,) (m, world, strictly increasing) and components
    ``u``, ``v``, ``w`` (m/s along x, y, z), each of shape (nx, ny, nz);
  * ``.csv`` with a header ``x,y,z,u,v,w`` and one row per grid node (every combination of the axes once, any
    order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from oceansim_py.errors import ConfigError

KINDS = ("none", "uniform", "profile", "grid")


class CurrentField:
    """The water's velocity at world points: ``at(points (N, 3), surface_z) -> (N, 3)`` m/s, world frame."""

    def __init__(self, kind: str, velocity: Any = (0.0, 0.0, 0.0), profile: Any = (),
                 grid: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        self.kind = kind
        self.velocity = np.asarray(velocity, dtype=np.float64).reshape(3)
        self.profile = np.asarray(profile, dtype=np.float64).reshape(-1, 4)
        self.grid = grid

    def at(self, points: Any, surface_z: float = 0.0) -> np.ndarray:
        p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if self.kind in ("none", "uniform"):
            return np.broadcast_to(self.velocity if self.kind == "uniform" else np.zeros(3), p.shape).copy()
        if self.kind == "profile":
            depth = surface_z - p[:, 2]
            d = self.profile[:, 0]
            return np.column_stack([np.interp(depth, d, self.profile[:, 1 + k]) for k in range(3)])
        return _trilinear(self.grid, p)


def _trilinear(grid: Any, p: np.ndarray) -> np.ndarray:
    axes, values = grid[:3], grid[3]                      # values (nx, ny, nz, 3)
    idx, frac = [], []
    for a, coord in zip(axes, p.T):
        if a.size == 1:
            idx.append(np.zeros(coord.size, dtype=np.int64))
            frac.append(np.zeros(coord.size))
            continue
        c = np.clip(coord, a[0], a[-1])
        i = np.clip(np.searchsorted(a, c, side="right") - 1, 0, a.size - 2)
        idx.append(i)
        frac.append((c - a[i]) / (a[i + 1] - a[i]))
    out = np.zeros((p.shape[0], 3))
    for corner in range(8):
        w = np.ones(p.shape[0])
        ijk = []
        for axis in range(3):
            upper = (corner >> axis) & 1
            size = axes[axis].size
            ijk.append(np.minimum(idx[axis] + upper, size - 1))
            w = w * (frac[axis] if upper else 1.0 - frac[axis])
        out += w[:, None] * values[ijk[0], ijk[1], ijk[2]]
    return out


def load_grid(path: str | Path, where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, z, values (nx, ny, nz, 3)) of a current grid file (module docstring); ``ConfigError`` naming
    ``where`` and the file for anything wrong with it."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{where}: current file {p} does not exist")
    try:
        if p.suffix == ".npz":
            with np.load(p, allow_pickle=False) as f:
                missing = [k for k in ("x", "y", "z", "u", "v", "w") if k not in f.files]
                if missing:
                    raise ValueError(f"lacks the array(s) {missing}; it needs x, y, z, u, v, w")
                axes = [np.asarray(f[k], dtype=np.float64).reshape(-1) for k in ("x", "y", "z")]
                comps = [np.asarray(f[k], dtype=np.float64) for k in ("u", "v", "w")]
        elif p.suffix == ".csv":
            if not p.read_text().strip():
                raise ValueError("is empty; it needs the header x,y,z,u,v,w and one row per grid node")
            data = np.genfromtxt(p, delimiter=",", names=True)
            if data.dtype.names is None or set("xyzuvw") - set(data.dtype.names):
                raise ValueError("needs the header x,y,z,u,v,w")
            data = np.atleast_1d(data)
            for k in "xyzuvw":
                bad = np.flatnonzero(~np.isfinite(data[k]))
                if bad.size:
                    raise ValueError(f"data row {int(bad[0]) + 1}: {k} is not a finite number")
            axes = [np.unique(data[k]) for k in "xyz"]
            shape = tuple(a.size for a in axes)
            if data.size != int(np.prod(shape)):
                raise ValueError(f"{data.size} rows do not fill the {shape[0]} x {shape[1]} x {shape[2]} grid of its "
                                 f"distinct x, y, z values; give every node once")
            ijk = [np.searchsorted(a, data[k]) for a, k in zip(axes, "xyz")]
            comps = []
            for k in "uvw":
                c = np.full(shape, np.nan)
                c[ijk[0], ijk[1], ijk[2]] = data[k]
                comps.append(c)
            if any(np.isnan(c).any() for c in comps):
                raise ValueError("a grid node appears twice and another is missing")
        else:
            raise ValueError("is neither .npz nor .csv")
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"{where}: current file {p}: {exc}") from None
    shape = tuple(a.size for a in axes)
    for name, a in zip("xyz", axes):
        if a.size == 0 or not np.isfinite(a).all() or (a.size > 1 and not (np.diff(a) > 0).all()):
            raise ConfigError(f"{where}: current file {p}: axis {name} must be finite and strictly increasing")
    for name, c in zip("uvw", comps):
        if c.shape != shape or not np.isfinite(c).all():
            raise ConfigError(f"{where}: current file {p}: {name} must be finite with shape {shape} (nx, ny, nz), "
                              f"got {c.shape}")
    return axes[0], axes[1], axes[2], np.stack(comps, axis=-1)


def check_profile(profile: Any, where: str) -> None:
    """A depth profile must have rows (depth, vx, vy, vz) in strictly increasing depth."""
    rows = np.asarray(profile, dtype=np.float64).reshape(-1, 4) if len(profile) else np.zeros((0, 4))
    if rows.shape[0] == 0:
        raise ConfigError(f"{where}: give at least one row [depth m, vx, vy, vz m/s]")
    if not np.isfinite(rows).all() or (rows.shape[0] > 1 and not (np.diff(rows[:, 0]) > 0).all()):
        raise ConfigError(f"{where}: rows must be finite with strictly increasing depth, got {profile!r}")


def current_field(kind: str, velocity: Any, profile: Any, path: str, where: str) -> CurrentField:
    """The :class:`CurrentField` of a config's ``current`` fields (``where`` names them in errors)."""
    if kind not in KINDS:
        raise ConfigError(f"{where}.current: must be one of {list(KINDS)}, got {kind!r}")
    if kind == "profile":
        check_profile(profile, f"{where}.current_profile")
    grid = load_grid(path, f"{where}.current_file") if kind == "grid" else None
    return CurrentField(kind, velocity, profile if kind == "profile" else (), grid)
