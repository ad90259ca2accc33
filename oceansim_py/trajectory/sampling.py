"""Timed poses: strictly increasing times and (N, 7) poses, where they come from (arrays, CSV files, USD prims)
and how they are sampled in between (linear position, slerp rotation; times outside the span are refused).
:class:`oceansim_py.trajectory.Trajectory` adds the shapes (trajectory/shapes.py) and the kinematics
(trajectory/kinematics.py) to this."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import display_path
from oceansim_py.limits import MAX_TRAJECTORY_SAMPLES, check_count
from oceansim_py.poses import check_float32_range, matrix_to_quat
from oceansim_py.trajectory.quaternions import normalise_quats, slerp_batch

#: Times within this many seconds outside the key span are treated as the end keys (rounding of t0 + k/rate).
TIME_TOLERANCE = 1e-9
CSV_HEADER = ("t", "px", "py", "pz", "qx", "qy", "qz", "qw")

#: (times) -> (positions (N,3), quaternions (N,4), velocity_w (N,3), angular_velocity_w (N,3), accel_w (N,3)).
Motion = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]

_T = TypeVar("_T", bound="TimedPoses")


class TimedPoses:
    """Strictly increasing times (s) and poses (N, 7), with their sources and interpolation (module docstring).

    Args:
        times: (N,) seconds, strictly increasing (else ``ConfigError`` naming the first bad index).
        poses: (N, 7) ``[px, py, pz, qx, qy, qz, qw]``, world frame.
        motion: closed-form motion used by the generators (leave ``None``).
        source: a name used in error messages.
    """

    def __init__(self, times: Any, poses: Any, motion: Motion | None = None, source: str = "trajectory") -> None:
        t = np.asarray(times, dtype=np.float64).reshape(-1)
        p = np.array(poses, dtype=np.float64)
        if p.ndim == 1 and p.size == 7:
            p = p[None, :]
        if p.ndim != 2 or p.shape[1] != 7:
            raise ConfigError(f"{source}: poses must have shape (N, 7) as [px, py, pz, qx, qy, qz, qw], got "
                              f"{p.shape}")
        if t.size == 0:
            raise ConfigError(f"{source}: a trajectory needs at least one time and pose")
        if t.size != p.shape[0]:
            raise ConfigError(f"{source}: {t.size} times but {p.shape[0]} poses; give one time per pose")
        if not np.isfinite(t).all():
            raise ConfigError(f"{source}: time {int(np.argmin(np.isfinite(t)))} is not finite")
        finite = np.isfinite(p).all(axis=1)
        if not finite.all():
            raise ConfigError(f"{source}: pose {int(np.argmin(finite))} holds a non-finite value")
        check_float32_range(p, source)
        steps = np.diff(t)
        if (steps <= 0).any():
            i = int(np.argmax(steps <= 0)) + 1
            raise ConfigError(f"{source}: times must be strictly increasing, but time {i} ({float(t[i])!r} s) is not "
                              f"after time {i - 1} ({float(t[i - 1])!r} s); sort the samples and drop duplicates")
        p[:, 3:] = normalise_quats(p[:, 3:], source)
        self.times = t
        self.poses = p
        self.source = source
        self._motion = motion
        self._key_derivs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        #: the keyed trajectory this one samples (a sample, slice, interpolation or resampling of it), whose keys
        #: give its derivatives; ``None`` for keys of its own and for generators (their motion is closed-form)
        self._keys: TimedPoses | None = None
    # -- basics -------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.times.size)

    def __getitem__(self, index: int | slice | Sequence[int] | np.ndarray) -> "TimedPoses":
        """A Trajectory of the selected samples (an integer gives a one-sample Trajectory)."""
        if isinstance(index, (int, np.integer)):
            n = len(self)
            if not -n <= int(index) < n:
                raise IndexError(f"trajectory index {index} out of range for {n} samples")
            index = slice(int(index) % n, int(index) % n + 1)
        return self._samples_of_path(self.times[index], self.poses[index])

    def _samples_of_path(self, times: np.ndarray, poses: np.ndarray) -> "TimedPoses":
        """A Trajectory of ``poses`` at ``times`` taken from this path that keeps the path's derivatives: a
        generator's closed-form motion, or the derivatives of the keys it was sampled from (a single sample of a
        keyed path is not at rest, and the ends of a slice are not one-sided differences of its own samples)."""
        view = type(self)(times, poses, self._motion, self.source)
        if self._motion is None:
            view._keys = self._keys if self._keys is not None else self
        return view

    def __repr__(self) -> str:
        kind = "analytic" if self._motion is not None else "keys"
        return (f"{type(self).__name__}({len(self)} samples, t = {self.start_time:g}..{self.end_time:g} s, {kind}, "
                f"source={self.source!r})")

    @property
    def start_time(self) -> float:
        return float(self.times[0])

    @property
    def end_time(self) -> float:
        return float(self.times[-1])

    @property
    def duration(self) -> float:
        return self.end_time - self.start_time

    @property
    def positions(self) -> np.ndarray:
        """(N, 3) world positions (m)."""
        return self.poses[:, :3]

    @property
    def quaternions(self) -> np.ndarray:
        """(N, 4) unit quaternions [qx, qy, qz, qw], body (FLU) to world."""
        return self.poses[:, 3:]

    @property
    def is_analytic(self) -> bool:
        return self._motion is not None
    # -- constructors -------------------------------------------------------------------------------------------
    @classmethod
    def from_arrays(cls: type[_T], times: Any, poses: Any) -> _T:
        return cls(times, poses, source="Trajectory.from_arrays")

    @classmethod
    def from_csv(cls: type[_T], path: str | Path) -> _T:
        """Read a CSV with the header ``t,px,py,pz,qx,qy,qz,qw`` (s, m, unit quaternion); a malformed header or
        row is a ``ConfigError`` naming the file and line."""
        p = Path(path)
        name = display_path(p)
        if not p.is_file():
            raise ConfigError(f"{name}: no such trajectory CSV file")
        try:
            rows = cls._read_csv_rows(p, name)
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start}); save the file as "
                              f"UTF-8") from None
        except OSError as exc:
            raise ConfigError(f"{name}: cannot read the file ({exc.strerror or exc})") from None
        except csv.Error as exc:
            raise ConfigError(f"{name}: malformed CSV ({exc})") from None
        if not rows:
            raise ConfigError(f"{name}: the file has a header but no samples")
        arr = np.array(rows)
        times = arr[:, 0]
        steps = np.diff(times)
        if (steps <= 0).any():
            i = int(np.argmax(steps <= 0)) + 1
            raise ConfigError(f"{name}: sample {i} (t = {float(times[i])!r} s) is not after sample {i - 1} "
                              f"(t = {float(times[i - 1])!r} s); times must be strictly increasing")
        return cls(times, arr[:, 1:], source=name)

    @staticmethod
    def _read_csv_rows(p: Path, name: str) -> list[list[float]]:
        """The numeric rows of a trajectory CSV (header checked; at most ``MAX_TRAJECTORY_SAMPLES``)."""
        rows: list[list[float]] = []
        with p.open("r", encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None or tuple(h.strip() for h in header) != CSV_HEADER:
                raise ConfigError(f"{name}, line 1: the header must be {','.join(CSV_HEADER)}, got "
                                  f"{','.join(header) if header else '(empty file)'}")
            for row in reader:
                line = reader.line_num
                if not row or all(not c.strip() for c in row):
                    continue
                if len(row) != len(CSV_HEADER):
                    raise ConfigError(f"{name}, line {line}: expected {len(CSV_HEADER)} values "
                                      f"({','.join(CSV_HEADER)}), got {len(row)}")
                try:
                    vals = [float(c) for c in row]
                except ValueError:
                    raise ConfigError(f"{name}, line {line}: {','.join(row)!r} holds a value that is not a "
                                      f"number") from None
                if not all(math.isfinite(v) for v in vals):
                    raise ConfigError(f"{name}, line {line}: non-finite value in {','.join(row)!r}")
                rows.append(vals)
                check_count(len(rows), MAX_TRAJECTORY_SAMPLES, f"{name}: samples", "split the trajectory")
        return rows

    def to_csv(self, path: str | Path) -> Path:
        """Write ``t,px,py,pz,qx,qy,qz,qw`` rows (readable by :meth:`from_csv`)."""
        p = Path(path)
        data = np.column_stack([self.times, self.poses])
        np.savetxt(p, data, delimiter=",", header=",".join(CSV_HEADER), comments="", fmt="%.17g")
        return p

    @classmethod
    def from_usd_prim(cls: type[_T], path: str | Path, prim_path: str, rate_hz: float | None = None) -> _T:
        """The time samples of an animated prim's world transform in a USD stage (loaded with
        :func:`oceansim_py.load_scene`; times in seconds, scale removed). ``rate_hz`` resamples the keys."""
        from oceansim_py.scene import load_scene

        scene = load_scene(path, device="cpu")
        node = scene.node(prim_path)
        if node.track is None:
            raise ConfigError(f"{path}: prim {prim_path!r} is not animated (its transform has no time samples); "
                              f"pick an animated prim or build the trajectory from a CSV file")
        m = node.track.matrices
        rot = m[:, :3, :3] / np.linalg.norm(m[:, :3, :3], axis=1, keepdims=True)
        poses = np.column_stack([m[:, :3, 3], matrix_to_quat(rot)])
        traj = cls(node.track.times, poses, source=f"{path}:{prim_path}")
        return traj.resample(rate_hz) if rate_hz is not None else traj
    # -- interpolation ------------------------------------------------------------------------------------------
    def _check_times(self, times: Any) -> np.ndarray:
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        if t.ndim != 1:
            raise ConfigError(f"{self.source}: times must be a 1-D array of seconds, got shape {t.shape}")
        if not np.isfinite(t).all():
            raise ConfigError(f"{self.source}: time {int(np.argmin(np.isfinite(t)))} is not finite")
        out = (t < self.start_time - TIME_TOLERANCE) | (t > self.end_time + TIME_TOLERANCE)
        if out.any():
            i = int(np.argmax(out))
            raise ConfigError(f"{self.source}: time {float(t[i])!r} s (index {i}) is outside the trajectory's span "
                              f"[{float(self.start_time)!r}, {float(self.end_time)!r}] s; trajectories are not "
                              f"extrapolated")
        return np.clip(t, self.start_time, self.end_time)

    def _segments(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, max(len(self) - 2, 0))
        if len(self) == 1:
            return k, np.zeros_like(t)
        u = (t - self.times[k]) / (self.times[k + 1] - self.times[k])
        return k, np.clip(u, 0.0, 1.0)

    def at(self, times: Any) -> np.ndarray:
        """Poses (M, 7) at ``times`` (s): analytic for generators, else linear position and slerp rotation."""
        t = self._check_times(times)
        if self._motion is not None:
            pos, q, _, _, _ = self._motion(t)
            return np.column_stack([pos, q])
        if len(self) == 1:
            return np.repeat(self.poses, t.size, axis=0)
        k, u = self._segments(t)
        p0, p1 = self.poses[k], self.poses[k + 1]
        pos = p0[:, :3] + u[:, None] * (p1[:, :3] - p0[:, :3])
        q = slerp_batch(p0[:, 3:], p1[:, 3:], u)
        return np.column_stack([pos, q])

    def interpolate(self, times: Any) -> "TimedPoses":
        """A Trajectory sampled at ``times`` (strictly increasing, within the span); its velocities, rates and
        accelerations are this path's at those times."""
        t = self._check_times(times)
        return self._samples_of_path(t, self.at(t))

    def resample(self, rate_hz: float, start_time: float | None = None) -> "TimedPoses":
        """Samples every ``1 / rate_hz`` s from ``start_time`` (default the first key) to the end (the last
        sample is the last grid time within the span). Use one per sensor rate."""
        _positive(rate_hz, "Trajectory.resample", "rate_hz", "Hz")
        t0 = self.start_time if start_time is None else _finite(start_time, "Trajectory.resample", "start_time")
        if t0 > self.end_time:
            raise ConfigError(f"{self.source}: resample start_time {t0} s is after the end {self.end_time} s")
        n = _sample_count(t0, self.end_time, rate_hz, f"{self.source}: resample")
        return self.interpolate(t0 + np.arange(n) / float(rate_hz))


def _vec3(v: Any, what: str) -> np.ndarray:
    try:
        a = np.asarray(v, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        a = np.full(1, np.nan)
    if a.size != 3 or not np.isfinite(a).all():
        raise ConfigError(f"{what}: expected 3 finite numbers (x, y, z in metres), got {v!r}")
    return a


def _finite(v: Any, owner: str, field: str, unit: str = "") -> float:
    """``v`` as a float, or a ``ConfigError`` naming ``owner.field`` if it is not a finite number."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not math.isfinite(v):
        raise ConfigError(f"{owner}.{field}: must be a finite number{(' in ' + unit) if unit else ''}, got {v!r}")
    return float(v)


def _positive(v: Any, owner: str, field: str, unit: str = "") -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not math.isfinite(v) \
            or v <= 0:
        raise ConfigError(f"{owner}.{field}: must be a finite number > 0{(' ' + unit) if unit else ''}, got {v!r}")


def _sample_count(t0: float, t1: float, rate_hz: float, what: str) -> int:
    """Grid samples ``t0 + k / rate`` within ``[t0, t1]``; more than ``MAX_TRAJECTORY_SAMPLES`` (or a span too
    long to count) is a ``ConfigError`` naming ``what``, raised before anything is allocated."""
    n = (t1 - t0) * rate_hz
    if not math.isfinite(n):
        raise ConfigError(f"{what}: a span of {t1 - t0:g} s at {rate_hz:g} Hz cannot be sampled; use a finite "
                          f"duration and rate")
    return check_count(math.floor(n + 1e-9) + 1, MAX_TRAJECTORY_SAMPLES,
                       f"{what}: samples ({t1 - t0:g} s at {rate_hz:g} Hz)",
                       "lower rate_hz or shorten the path (or split the run)")


def _grid(t0: float, t1: float, rate_hz: float, what: str) -> np.ndarray:
    """``t0 + k / rate`` up to ``t1``, with ``t1`` appended when the grid does not land on it."""
    n = _sample_count(t0, t1, rate_hz, what)
    t = t0 + np.arange(n) / float(rate_hz)
    if t1 - t[-1] > 1e-9:
        t = np.append(t, t1)
    return t
