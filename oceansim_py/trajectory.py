"""Timed poses: a vehicle's (or a sensor's) path, its interpolation and its derivatives.

A :class:`Trajectory` holds strictly increasing times (s) and poses (N, 7) ``[px, py, pz, qx, qy, qz, qw]``
(world frame, Z up, metres; the quaternion rotates body-frame FLU vectors into the world). Its ``poses``
attribute makes it acceptable wherever poses are (``as_poses(trajectory)``), and slicing gives a Trajectory.

Between keys, positions are interpolated linearly and rotations by slerp (shortest arc). Times outside
``[start_time, end_time]`` are refused rather than extrapolated.

Derivatives (world or body frame; body = FLU of the pose at that time):

- generators (:meth:`lawnmower`, :meth:`orbit`, :meth:`transect`) know their motion in closed form: poses,
  linear velocity, angular velocity and linear acceleration are evaluated analytically at any time, and the
  keys are samples of that motion;
- trajectories built from arrays, CSV files or USD prims use finite differences of the keys: velocity at a
  key is ``np.gradient`` of the positions (second order, non-uniform spacing), acceleration the gradient of
  those velocities; the angular velocity of a segment is the exact rate of its slerp
  (``log(q_k^-1 q_k+1) / dt``), at a key the spacing-weighted mean of its two segments (the same weights as
  ``np.gradient``). Between keys the key derivatives are interpolated linearly. A one-key trajectory is at rest.

Sizes are bounded (:mod:`oceansim_py.limits`): a generator, ``resample`` or CSV file gives at most
``MAX_TRAJECTORY_SAMPLES`` samples and a lawnmower at most ``MAX_TRAJECTORY_SEGMENTS`` legs; the count is
checked before anything is allocated. Poses must be finite and within float32's range.

Quaternions: a norm within ``1e-6`` of 1 is renormalised silently; within ``QUAT_WARN_LIMIT`` (5 %) it is
renormalised with a ``UserWarning`` naming the first such row; further off (or zero) is a ``ConfigError``.
"""

from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import display_path
from oceansim_py.limits import MAX_TRAJECTORY_SAMPLES, MAX_TRAJECTORY_SEGMENTS, check_count
from oceansim_py.poses import check_float32_range, matrix_to_quat, quat_to_matrix, rotate_fixed

#: Quaternion norms further than this from 1 are refused; closer ones are renormalised (with a warning
#: above ``QUAT_SILENT_LIMIT``).
QUAT_WARN_LIMIT = 0.05
QUAT_SILENT_LIMIT = 1e-6
#: Times within this many seconds outside the key span are treated as the end keys (rounding of t0 + k/rate).
TIME_TOLERANCE = 1e-9
CSV_HEADER = ("t", "px", "py", "pz", "qx", "qy", "qz", "qw")

#: (times) -> (positions (N,3), quaternions (N,4), velocity_w (N,3), angular_velocity_w (N,3), accel_w (N,3)).
Motion = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


# -- quaternion helpers (vectorised, [qx, qy, qz, qw]) -----------------------------------------------------------
def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products ``a * b`` of quaternions (..., 4)."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a, dtype=np.float64), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b, dtype=np.float64), -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([-q[..., :3], q[..., 3:]], axis=-1)


def quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    """Rotation vectors (axis * angle, rad, angle in [0, pi]) of unit quaternions (..., 4)."""
    q = np.asarray(q, dtype=np.float64)
    q = np.where(q[..., 3:4] < 0, -q, q)
    s = np.linalg.norm(q[..., :3], axis=-1)
    angle = 2.0 * np.arctan2(s, q[..., 3])
    scale = np.where(s > 1e-12, angle / np.maximum(s, 1e-300), 2.0)
    return q[..., :3] * scale[..., None]


def rotvec_to_quat(v: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4) of rotation vectors (..., 3) (rad)."""
    v = np.asarray(v, dtype=np.float64)
    angle = np.linalg.norm(v, axis=-1)
    half = 0.5 * angle
    k = np.where(angle > 1e-12, np.sin(half) / np.maximum(angle, 1e-300), 0.5)
    return np.concatenate([v * k[..., None], np.cos(half)[..., None]], axis=-1)


def slerp_batch(q0: np.ndarray, q1: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Slerp (shortest arc) between unit quaternions q0, q1 (N, 4) at fractions u (N,) in [0, 1]."""
    rel = quat_multiply(quat_conjugate(q0), q1)
    return quat_multiply(q0, rotvec_to_quat(quat_to_rotvec(rel) * np.asarray(u, dtype=np.float64)[:, None]))


def quat_from_yaw_pitch(yaw: np.ndarray, pitch: np.ndarray | float = 0.0) -> np.ndarray:
    """Quaternions of yaw (about world z, nose to port positive) then pitch (about body y, nose down), rad."""
    yaw = np.asarray(yaw, dtype=np.float64)
    pitch = np.broadcast_to(np.asarray(pitch, dtype=np.float64), yaw.shape)
    qz = np.stack([np.zeros_like(yaw), np.zeros_like(yaw), np.sin(yaw / 2), np.cos(yaw / 2)], axis=-1)
    qy = np.stack([np.zeros_like(yaw), np.sin(pitch / 2), np.zeros_like(yaw), np.cos(pitch / 2)], axis=-1)
    return quat_multiply(qz, qy)


def _normalise_quats(q: np.ndarray, where: str) -> np.ndarray:
    norms = np.linalg.norm(q, axis=1)
    err = np.abs(norms - 1.0)
    bad = err > QUAT_WARN_LIMIT
    if bad.any():
        row = int(np.argmax(bad))
        raise ConfigError(f"{where}: pose {row} has a quaternion of norm {norms[row]:.6f}, too far from 1 to be a "
                          f"rotation; quaternions must be unit [qx, qy, qz, qw]")
    loud = err > QUAT_SILENT_LIMIT
    if loud.any():
        row = int(np.argmax(loud))
        warnings.warn(f"{where}: {int(loud.sum())} quaternion(s) were not unit (first: pose {row}, norm "
                      f"{norms[row]:.6f}); they were normalised", UserWarning, stacklevel=3)
    return q / norms[:, None]


class Trajectory:
    """Strictly increasing times (s) and poses (N, 7); see the module docstring for interpolation, derivatives
    and quaternion handling.

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
            raise ConfigError(f"{source}: times must be strictly increasing, but time {i} ({t[i]!r} s) is not "
                              f"after time {i - 1} ({t[i - 1]!r} s); sort the samples and drop duplicates")
        p[:, 3:] = _normalise_quats(p[:, 3:], source)
        self.times = t
        self.poses = p
        self.source = source
        self._motion = motion
        self._key_derivs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    # -- basics -------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.times.size)

    def __getitem__(self, index: int | slice | Sequence[int] | np.ndarray) -> "Trajectory":
        """A Trajectory of the selected samples (an integer gives a one-sample Trajectory)."""
        if isinstance(index, (int, np.integer)):
            n = len(self)
            if not -n <= int(index) < n:
                raise IndexError(f"trajectory index {index} out of range for {n} samples")
            index = slice(int(index) % n, int(index) % n + 1)
        return Trajectory(self.times[index], self.poses[index], self._motion, self.source)

    def __repr__(self) -> str:
        kind = "analytic" if self._motion is not None else "keys"
        return (f"Trajectory({len(self)} samples, t = {self.start_time:g}..{self.end_time:g} s, {kind}, "
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
    def from_arrays(cls, times: Any, poses: Any) -> "Trajectory":
        return cls(times, poses, source="Trajectory.from_arrays")

    @classmethod
    def from_csv(cls, path: str | Path) -> "Trajectory":
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
            raise ConfigError(f"{name}: sample {i} (t = {times[i]!r} s) is not after sample {i - 1} "
                              f"(t = {times[i - 1]!r} s); times must be strictly increasing")
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
    def from_usd_prim(cls, path: str | Path, prim_path: str, rate_hz: float | None = None) -> "Trajectory":
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

    # -- generators ---------------------------------------------------------------------------------------------
    @classmethod
    def transect(cls, start: Sequence[float], end: Sequence[float], speed: float, rate_hz: float = 10.0,
                 start_time: float = 0.0) -> "Trajectory":
        """A straight line from ``start`` to ``end`` (m, world) at ``speed`` (m/s), level (roll = pitch = 0)
        with the nose along the horizontal direction of travel (yaw 0 for a vertical line). Sampled at
        ``rate_hz`` (plus the end point); analytic."""
        a = _vec3(start, "Trajectory.transect: start")
        b = _vec3(end, "Trajectory.transect: end")
        _positive(speed, "Trajectory.transect", "speed", "m/s")
        _positive(rate_hz, "Trajectory.transect", "rate_hz", "Hz")
        length = float(np.linalg.norm(b - a))
        if length <= 0:
            raise ConfigError("Trajectory.transect: start and end are the same point; give two different points")
        u = (b - a) / length
        yaw = math.atan2(u[1], u[0]) if math.hypot(u[0], u[1]) > 1e-12 else 0.0
        q = quat_from_yaw_pitch(np.array([yaw]))[0]
        vel = u * speed
        t0 = _finite(start_time, "Trajectory.transect", "start_time", "s")

        def motion(t: np.ndarray):
            n = t.size
            pos = a[None, :] + (t - t0)[:, None] * vel[None, :]
            zeros = np.zeros((n, 3))
            return pos, np.tile(q, (n, 1)), np.tile(vel, (n, 1)), zeros, zeros.copy()

        return cls._sampled(motion, t0, t0 + length / speed, rate_hz, "Trajectory.transect")

    @classmethod
    def orbit(cls, center: Sequence[float], radius: float, height: float = 0.0, speed: float | None = None,
              period: float | None = None, look_at_center: bool = True, clockwise: bool = False,
              revolutions: float = 1.0, start_angle_deg: float = 0.0, rate_hz: float = 10.0,
              start_time: float = 0.0) -> "Trajectory":
        """A horizontal circle of ``radius`` (m) around ``center`` ((x, y) or (x, y, z), m), in the plane
        ``z = center_z + height``, at ``speed`` (m/s) or with ``period`` (s per revolution), counter-clockwise
        seen from above unless ``clockwise``. ``look_at_center``: the nose points at the centre point (pitched
        down by ``atan2(height, radius)`` when above it); otherwise level, nose along the direction of travel.
        Analytic: angular rate ``omega = speed / radius``, centripetal acceleration ``omega^2 radius``."""
        try:
            c = np.asarray(center, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            c = np.full(1, np.nan)
        if c.size == 2:
            c = np.array([c[0], c[1], 0.0])
        c = _vec3(c, "Trajectory.orbit: center")
        _positive(radius, "Trajectory.orbit", "radius", "m")
        _positive(revolutions, "Trajectory.orbit", "revolutions")
        _positive(rate_hz, "Trajectory.orbit", "rate_hz", "Hz")
        if (speed is None) == (period is None):
            raise ConfigError("Trajectory.orbit: give exactly one of speed (m/s) or period (s)")
        if speed is not None:
            _positive(speed, "Trajectory.orbit", "speed", "m/s")
            omega = speed / radius
        else:
            _positive(period, "Trajectory.orbit", "period", "s")
            omega = 2 * math.pi / float(period)
        if clockwise:
            omega = -omega
        theta0 = math.radians(_finite(start_angle_deg, "Trajectory.orbit", "start_angle_deg", "degrees"))
        height = _finite(height, "Trajectory.orbit", "height", "m")
        z = c[2] + height
        pitch = math.atan2(height, radius) if look_at_center else 0.0
        t0 = _finite(start_time, "Trajectory.orbit", "start_time", "s")

        def motion(t: np.ndarray):
            th = theta0 + omega * (t - t0)
            ct, st = np.cos(th), np.sin(th)
            pos = np.column_stack([c[0] + radius * ct, c[1] + radius * st, np.full_like(th, z)])
            yaw = th + math.pi if look_at_center else th + math.copysign(math.pi / 2, omega)
            q = quat_from_yaw_pitch(yaw, pitch)
            vel = np.column_stack([-radius * omega * st, radius * omega * ct, np.zeros_like(th)])
            ang = np.tile([0.0, 0.0, omega], (t.size, 1))
            acc = np.column_stack([-radius * omega**2 * ct, -radius * omega**2 * st, np.zeros_like(th)])
            return pos, q, vel, ang, acc

        duration = float(revolutions) * 2 * math.pi / abs(omega)
        return cls._sampled(motion, t0, t0 + duration, rate_hz, "Trajectory.orbit")

    @classmethod
    def lawnmower(cls, scene: Any = None, altitude: float = 5.0, spacing: float = 5.0, speed: float = 1.0,
                  bounds: Any = None, margin: float = 0.0, along: str = "x", rate_hz: float = 10.0,
                  start_time: float = 0.0, follow_terrain: bool = False) -> "Trajectory":
        """A lawnmower survey over a scene's (or explicit ``bounds``') horizontal extent at a set altitude.

        Legs run along ``along`` ("x" or "y"), ``spacing`` (m) apart, inset by ``margin`` (m) from the bounds;
        legs are joined by semicircular turns of radius ``spacing / 2`` (which reach ``spacing / 2`` beyond the
        legs' ends: use ``margin`` to keep them inside), so the path, heading and velocity are continuous
        (acceleration is ``speed^2 / (spacing / 2)`` in the turns). Level attitude, nose along the track.

        Height: by default the bottom is the minimum z of the bounds, a constant-depth survey at
        ``bottom + altitude`` (over uneven ground the true altitude varies; the DVL reports it); analytic,
        sampled at ``rate_hz``. ``follow_terrain=True`` (needs a scene) casts a ray straight down at each sample
        from the sea surface (or 1 m above the bounds' top if lower) and flies ``altitude`` above the first hit (a miss
        keeps the bounds' bottom); the path is then given by its samples, with finite-difference derivatives.
        """
        if bounds is None:
            if scene is None:
                raise ConfigError("Trajectory.lawnmower: give a scene or bounds ((xmin, ymin, zmin), "
                                  "(xmax, ymax, zmax))")
            bounds = scene.bounds if hasattr(scene, "bounds") else scene
        try:
            lo, hi = (np.asarray(b, dtype=np.float64).reshape(3) for b in bounds)
        except (TypeError, ValueError):
            raise ConfigError(f"Trajectory.lawnmower.bounds: expected ((xmin, ymin, zmin), (xmax, ymax, zmax)) in "
                              f"metres, got {bounds!r}") from None
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
            raise ConfigError(f"Trajectory.lawnmower.bounds: must be finite, got {lo.tolist()}..{hi.tolist()}")
        for name, v in (("altitude", altitude), ("spacing", spacing), ("speed", speed), ("rate_hz", rate_hz)):
            _positive(v, "Trajectory.lawnmower", name)
        t0 = _finite(start_time, "Trajectory.lawnmower", "start_time", "s")
        if not (isinstance(margin, (int, float)) and not isinstance(margin, bool) and margin >= 0
                and math.isfinite(margin)):
            raise ConfigError(f"Trajectory.lawnmower.margin: must be >= 0 m, got {margin!r}")
        if along not in ("x", "y"):
            raise ConfigError(f"Trajectory.lawnmower.along: must be 'x' or 'y', got {along!r}")
        ax, cx = (0, 1) if along == "x" else (1, 0)
        a0, a1 = lo[ax] + margin, hi[ax] - margin
        c0, c1 = lo[cx] + margin, hi[cx] - margin
        if a1 - a0 <= 0 or c1 - c0 < 0:
            raise ConfigError(f"Trajectory.lawnmower: the area {lo.tolist()}..{hi.tolist()} minus a margin of "
                              f"{margin} m is empty; reduce margin")
        n_legs = check_count(math.floor((c1 - c0) / spacing + 1e-9) + 1, MAX_TRAJECTORY_SEGMENTS,
                             f"Trajectory.lawnmower.spacing: legs ({c1 - c0:g} m across at {spacing:g} m spacing)",
                             "widen spacing")
        z = lo[2] + float(altitude)
        r = spacing / 2.0
        # ("line", start (2,), direction (2,), length) or ("arc", centre (2,), start angle, turn sign, heading)
        segs: list[tuple] = []
        for k in range(n_legs):
            c = c0 + k * spacing
            fwd = k % 2 == 0
            s, e = (a0, a1) if fwd else (a1, a0)
            p0 = np.zeros(2)
            p0[ax], p0[cx] = s, c
            d = np.zeros(2)
            d[ax] = 1.0 if fwd else -1.0
            segs.append(("line", p0, d, a1 - a0))
            if k < n_legs - 1:
                centre = np.zeros(2)
                centre[ax], centre[cx] = e, c + r
                rel = np.zeros(2)
                rel[cx] = -r  # the leg's end point seen from the turn centre
                theta_start = math.atan2(rel[1], rel[0])
                heading0 = math.atan2(d[1], d[0])
                # the turn direction whose tangent at the start is the leg's direction
                tangent_ccw = np.array([-math.sin(theta_start), math.cos(theta_start)])
                sign = 1.0 if np.dot(tangent_ccw, d) > 0 else -1.0
                segs.append(("arc", centre, theta_start, sign, heading0))
        lengths = np.array([sg[3] if sg[0] == "line" else math.pi * r for sg in segs])
        ends = np.cumsum(lengths)

        def motion(t: np.ndarray):
            s = np.clip((t - t0) * speed, 0.0, ends[-1])
            idx = np.minimum(np.searchsorted(ends, s, side="right"), len(segs) - 1)
            local = s - (ends[idx] - lengths[idx])
            n = t.size
            pos = np.empty((n, 3))
            pos[:, 2] = z
            yaw = np.empty(n)
            vel = np.zeros((n, 3))
            ang = np.zeros((n, 3))
            acc = np.zeros((n, 3))
            for i, sg in enumerate(segs):
                m = idx == i
                if not m.any():
                    continue
                if sg[0] == "line":
                    _, p0, d, _len = sg
                    pos[m, :2] = p0[None, :] + local[m, None] * d[None, :]
                    yaw[m] = math.atan2(d[1], d[0])
                    vel[m, :2] = speed * d
                else:
                    _, centre, th0, sign, heading0 = sg
                    th = th0 + sign * local[m] / r
                    pos[m, 0] = centre[0] + r * np.cos(th)
                    pos[m, 1] = centre[1] + r * np.sin(th)
                    yaw[m] = heading0 + sign * local[m] / r
                    vel[m, 0] = -sign * speed * np.sin(th)
                    vel[m, 1] = sign * speed * np.cos(th)
                    ang[m, 2] = sign * speed / r
                    acc[m, 0] = -speed**2 / r * np.cos(th)
                    acc[m, 1] = -speed**2 / r * np.sin(th)
            return pos, quat_from_yaw_pitch(yaw), vel, ang, acc

        traj = cls._sampled(motion, t0, t0 + float(ends[-1]) / speed, rate_hz, "Trajectory.lawnmower")
        if not follow_terrain:
            return traj
        if not hasattr(scene, "raycast"):
            raise ConfigError("Trajectory.lawnmower: follow_terrain=True needs a scene to ray-cast, not bounds")
        top = min(float(scene.surface_z), float(hi[2]) + 1.0)  # above everything, or at the sea surface
        origins = np.column_stack([traj.positions[:, :2], np.full(len(traj), top)])
        down = np.tile([0.0, 0.0, -1.0], (len(traj), 1))
        dist = scene.raycast(origins, down, max_range=max(top - float(lo[2]), 1e-3) + 1e-3).distance.numpy()
        bottom = np.where(np.isfinite(dist), top - dist.astype(np.float64), lo[2])
        poses = traj.poses.copy()
        poses[:, 2] = bottom + float(altitude)
        return cls(traj.times, poses, source="Trajectory.lawnmower(follow_terrain)")

    @classmethod
    def _sampled(cls, motion: Motion, t0: float, t1: float, rate_hz: float, source: str) -> "Trajectory":
        times = _grid(t0, t1, rate_hz, source)
        pos, q, _, _, _ = motion(times)
        return cls(times, np.column_stack([pos, q]), motion=motion, source=source)

    # -- sensors mounted on the vehicle ----------------------------------------------------------------------
    def mounted(self, mount: Any) -> "Trajectory":
        """The trajectory of a sensor rigidly mounted on this (vehicle) trajectory.

        ``mount``: the sensor's pose in the vehicle's body frame, (7,) ``[x, y, z, qx, qy, qz, qw]`` (e.g.
        ``pose_from_euler(x, y, z, roll, pitch, yaw)``). Sensor pose = vehicle pose * mount. For a generator the
        derivatives stay analytic: with the lever arm ``d = R r``, ``v_s = v + omega x d``, ``omega_s = omega``,
        ``a_s = a + omega x (omega x d)`` (the generators' angular velocity is piecewise constant, so the
        angular-acceleration term is zero). Otherwise the composed keys are differentiated as usual.
        """
        m = np.asarray(mount, dtype=np.float64).reshape(-1)
        if m.size != 7 or not np.isfinite(m).all():
            raise ConfigError(f"{self.source}: mount must be a (7,) pose [x, y, z, qx, qy, qz, qw], got {mount!r}")
        m = m.copy()
        m[3:] = _normalise_quats(m[None, 3:], f"{self.source} mount")[0]

        def compose(pos: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            lever = rotate_fixed(quat_to_matrix(q), m[:3])
            return pos + lever, quat_multiply(q, np.broadcast_to(m[3:], q.shape)), lever

        pos, q, _ = compose(self.positions, self.quaternions)
        source = f"{self.source} (mounted)"
        if self._motion is None:
            return Trajectory(self.times, np.column_stack([pos, q]), source=source)
        vehicle = self._motion

        def motion(t: np.ndarray):
            p, qv, v, w, a = vehicle(t)
            ps, qs, lever = compose(p, qv)
            return ps, qs, v + np.cross(w, lever), w, a + np.cross(w, np.cross(w, lever))

        return Trajectory(self.times, np.column_stack([pos, q]), motion=motion, source=source)

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
            raise ConfigError(f"{self.source}: time {t[i]!r} s (index {i}) is outside the trajectory's span "
                              f"[{self.start_time!r}, {self.end_time!r}] s; trajectories are not extrapolated")
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

    def interpolate(self, times: Any) -> "Trajectory":
        """A Trajectory sampled at ``times`` (strictly increasing, within the span)."""
        t = self._check_times(times)
        return Trajectory(t, self.at(t), self._motion, self.source)

    def resample(self, rate_hz: float, start_time: float | None = None) -> "Trajectory":
        """Samples every ``1 / rate_hz`` s from ``start_time`` (default the first key) to the end (the last
        sample is the last grid time within the span). Use one per sensor rate."""
        _positive(rate_hz, "Trajectory.resample", "rate_hz", "Hz")
        t0 = self.start_time if start_time is None else _finite(start_time, "Trajectory.resample", "start_time")
        if t0 > self.end_time:
            raise ConfigError(f"{self.source}: resample start_time {t0} s is after the end {self.end_time} s")
        n = _sample_count(t0, self.end_time, rate_hz, f"{self.source}: resample")
        return self.interpolate(t0 + np.arange(n) / float(rate_hz))

    # -- derivatives --------------------------------------------------------------------------------------------
    def _derivs_at_keys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._key_derivs is None:
            n = len(self)
            if n == 1:
                z = np.zeros((1, 3))
                self._key_derivs = (z, z.copy(), z.copy())
            else:
                t = self.times
                edge = 2 if n >= 3 else 1
                vel = np.gradient(self.positions, t, axis=0, edge_order=edge)
                acc = np.gradient(vel, t, axis=0, edge_order=edge)
                q = self.quaternions
                dt = np.diff(t)
                rel = quat_multiply(quat_conjugate(q[:-1]), q[1:])
                seg_body = quat_to_rotvec(rel) / dt[:, None]
                seg_world = rotate_fixed(quat_to_matrix(q[:-1]), seg_body)
                ang = np.empty((n, 3))
                ang[0], ang[-1] = seg_world[0], seg_world[-1]
                if n > 2:
                    h0, h1 = dt[:-1, None], dt[1:, None]
                    ang[1:-1] = (h1 * seg_world[:-1] + h0 * seg_world[1:]) / (h0 + h1)
                self._key_derivs = (vel, ang, acc)
        return self._key_derivs

    def _world_derivs(self, times: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        t = self.times if times is None else self._check_times(times)
        if self._motion is not None:
            pos, q, vel, ang, acc = self._motion(t)
            return q, vel, ang, acc
        q = self.at(t)[:, 3:]
        vel_k, ang_k, acc_k = self._derivs_at_keys()
        if len(self) == 1:
            z = np.zeros((t.size, 3))
            return q, z, z.copy(), z.copy()
        k, u = self._segments(t)
        lerp = lambda a: a[k] + u[:, None] * (a[k + 1] - a[k])  # noqa: E731
        return q, lerp(vel_k), lerp(ang_k), lerp(acc_k)

    @staticmethod
    def _frame(q: np.ndarray, v: np.ndarray, frame: str) -> np.ndarray:
        if frame == "world":
            return v
        if frame == "body":
            return rotate_fixed(quat_to_matrix(q), v, transpose=True)
        raise ConfigError(f"frame must be 'world' or 'body', got {frame!r}")

    def velocity(self, times: Any = None, frame: str = "world") -> np.ndarray:
        """Linear velocity (M, 3) in m/s at ``times`` (default: the keys), world or body (FLU) frame."""
        q, vel, _, _ = self._world_derivs(times)
        return self._frame(q, vel, frame)

    def angular_velocity(self, times: Any = None, frame: str = "world") -> np.ndarray:
        """Angular velocity (M, 3) in rad/s at ``times`` (default: the keys), world or body (FLU) frame."""
        q, _, ang, _ = self._world_derivs(times)
        return self._frame(q, ang, frame)

    def acceleration(self, times: Any = None, frame: str = "world") -> np.ndarray:
        """Linear acceleration (M, 3) in m/s^2 (kinematic, without gravity) at ``times`` (default: the keys),
        world or body (FLU) frame (the world vector rotated into the body; no Coriolis terms)."""
        q, _, _, acc = self._world_derivs(times)
        return self._frame(q, acc, frame)


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
