"""Kinematics of timed poses: the trajectory of a sensor mounted on a vehicle, and linear velocity, angular
velocity and acceleration (world or body frame) — analytic for the shapes, finite differences of the keys
otherwise (see :mod:`oceansim_py.trajectory`). The navigation sensors (IMU, DVL) read these."""

from __future__ import annotations

from typing import Any

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.poses import quat_to_matrix, rotate_fixed
from oceansim_py.trajectory.quaternions import normalise_quats, quat_conjugate, quat_multiply, quat_to_rotvec
from oceansim_py.trajectory.sampling import TimedPoses


class TrajectoryKinematics(TimedPoses):
    """Mounting and derivatives (module docstring)."""

    # -- sensors mounted on the vehicle ----------------------------------------------------------------------
    def mounted(self, mount: Any) -> "TrajectoryKinematics":
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
        m[3:] = normalise_quats(m[None, 3:], f"{self.source} mount")[0]

        def compose(pos: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            lever = rotate_fixed(quat_to_matrix(q), m[:3])
            return pos + lever, quat_multiply(q, np.broadcast_to(m[3:], q.shape)), lever

        pos, q, _ = compose(self.positions, self.quaternions)
        source = f"{self.source} (mounted)"
        if self._motion is None:
            mounted = type(self)(self.times, np.column_stack([pos, q]), source=source)
            if self._keys is not None:      # samples of a keyed path: the derivatives of the mounted keys
                mounted._keys = self._keys.mounted(m)
            return mounted
        vehicle = self._motion

        def motion(t: np.ndarray):
            p, qv, v, w, a = vehicle(t)
            ps, qs, lever = compose(p, qv)
            return ps, qs, v + np.cross(w, lever), w, a + np.cross(w, np.cross(w, lever))

        return type(self)(self.times, np.column_stack([pos, q]), motion=motion, source=source)
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
        if self._keys is not None:
            return self._keys._world_derivs(t)
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
