"""Trajectory shapes in closed form: a straight transect, a circular orbit and a lawnmower survey (optionally
following the terrain). Each knows its motion analytically (poses, velocity, angular velocity, acceleration at
any time) and is sampled at its ``rate_hz``; :class:`oceansim_py.trajectory.Trajectory` inherits them."""

from __future__ import annotations

import math
from typing import Any, Sequence, TypeVar

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.limits import MAX_TRAJECTORY_SEGMENTS, check_count
from oceansim_py.trajectory.quaternions import quat_from_yaw_pitch
from oceansim_py.trajectory.sampling import Motion, TimedPoses, _finite, _grid, _positive, _vec3

_T = TypeVar("_T", bound="TrajectoryShapes")


class TrajectoryShapes(TimedPoses):
    """The generators (module docstring) as class methods."""

    # -- generators ---------------------------------------------------------------------------------------------
    @classmethod
    def transect(cls: type[_T], start: Sequence[float], end: Sequence[float], speed: float, rate_hz: float = 10.0,
                 start_time: float = 0.0) -> _T:
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
    def orbit(cls: type[_T], center: Sequence[float], radius: float, height: float = 0.0, speed: float | None = None,
              period: float | None = None, look_at_center: bool = True, clockwise: bool = False,
              revolutions: float = 1.0, start_angle_deg: float = 0.0, rate_hz: float = 10.0,
              start_time: float = 0.0) -> _T:
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
    def lawnmower(cls: type[_T], scene: Any = None, altitude: float = 5.0, spacing: float = 5.0, speed: float = 1.0,
                  bounds: Any = None, margin: float = 0.0, along: str = "x", rate_hz: float = 10.0,
                  start_time: float = 0.0, follow_terrain: bool = False) -> _T:
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
        cast = getattr(scene, "raycast_through_surface", scene.raycast)  # waves in a trough must not stop the rays
        dist = cast(origins, down, max_range=max(top - float(lo[2]), 1e-3) + 1e-3).distance.numpy()
        bottom = np.where(np.isfinite(dist), top - dist.astype(np.float64), lo[2])
        poses = traj.poses.copy()
        poses[:, 2] = bottom + float(altitude)
        return cls(traj.times, poses, source="Trajectory.lawnmower(follow_terrain)")

    @classmethod
    def _sampled(cls: type[_T], motion: Motion, t0: float, t1: float, rate_hz: float, source: str) -> _T:
        times = _grid(t0, t1, rate_hz, source)
        pos, q, _, _, _ = motion(times)
        return cls(times, np.column_stack([pos, q]), motion=motion, source=source)
