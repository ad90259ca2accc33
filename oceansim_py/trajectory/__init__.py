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
  ``np.gradient``). Between keys the key derivatives are interpolated linearly. A one-key trajectory is at rest,
  but a sample, slice, interpolation or resampling of a keyed trajectory keeps the derivatives of the keys it came
  from (``traj[3]`` or ``traj.interpolate([2.5])`` moves at the path's velocity; mounting it mounts those keys).

Sizes are bounded (:mod:`oceansim_py.limits`): a generator, ``resample`` or CSV file gives at most
``MAX_TRAJECTORY_SAMPLES`` samples and a lawnmower at most ``MAX_TRAJECTORY_SEGMENTS`` legs; the count is
checked before anything is allocated. Poses must be finite and within float32's range.

The concerns live in their own modules: :mod:`~oceansim_py.trajectory.sampling` (timed poses, their sources
and interpolation), :mod:`~oceansim_py.trajectory.shapes` (the generators), :mod:`~oceansim_py.trajectory.kinematics`
(mounting and derivatives) and :mod:`~oceansim_py.trajectory.quaternions`; this package puts them together and
exports the same names as the single module did.

Quaternions: a norm within ``1e-6`` of 1 is renormalised silently; within ``QUAT_WARN_LIMIT`` (5 %) it is
renormalised with a ``UserWarning`` naming the first such row; further off (or zero) is a ``ConfigError``.
"""

from __future__ import annotations

from oceansim_py.trajectory.kinematics import TrajectoryKinematics
from oceansim_py.trajectory.quaternions import (QUAT_SILENT_LIMIT, QUAT_WARN_LIMIT, normalise_quats, quat_conjugate,
                                                quat_from_yaw_pitch, quat_multiply, quat_to_rotvec, rotvec_to_quat,
                                                slerp_batch)
from oceansim_py.trajectory.sampling import CSV_HEADER, TIME_TOLERANCE, Motion, TimedPoses
from oceansim_py.trajectory.shapes import TrajectoryShapes

class Trajectory(TrajectoryKinematics, TrajectoryShapes):
    """Strictly increasing times (s) and poses (N, 7); see the module docstring for interpolation, derivatives
    and quaternion handling.

    Args:
        times: (N,) seconds, strictly increasing (else ``ConfigError`` naming the first bad index).
        poses: (N, 7) ``[px, py, pz, qx, qy, qz, qw]``, world frame.
        motion: closed-form motion used by the generators (leave ``None``).
        source: a name used in error messages.
    """


__all__ = ["CSV_HEADER", "Motion", "QUAT_SILENT_LIMIT", "QUAT_WARN_LIMIT", "TIME_TOLERANCE", "TimedPoses", "Trajectory",
           "TrajectoryKinematics", "TrajectoryShapes", "normalise_quats", "quat_conjugate", "quat_from_yaw_pitch",
           "quat_multiply", "quat_to_rotvec", "rotvec_to_quat", "slerp_batch"]
