"""Poses as (B, 7) float32 arrays ``[px, py, pz, qx, qy, qz, qw]`` (Warp's ``wp.transform`` layout).

Positions in metres in the world frame (Z up); the quaternion rotates sensor-frame (FLU) vectors into the
world frame. Every sensor's ``render`` accepts one pose (7,), a batch (B, 7), or any object with a ``poses``
attribute holding such an array (a Trajectory or a slice of one).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.limits import FLOAT32_MAX

#: A quaternion whose norm differs from 1 by more than this is refused rather than silently normalised.
QUAT_NORM_TOLERANCE = 1e-3


def as_poses(poses: Any, what: str = "poses") -> np.ndarray:
    """Validate and return poses as a C-contiguous (B, 7) float32 array with unit quaternions.

    Non-finite values, values beyond float32's range, wrong shapes, empty batches and quaternions whose norm is
    not 1 (within ``QUAT_NORM_TOLERANCE``) raise :class:`ConfigError` naming the row. Quaternions within the tolerance
    are renormalised exactly.
    """
    if hasattr(poses, "poses") and not isinstance(poses, np.ndarray):
        poses = poses.poses
    try:
        arr = np.asarray(poses, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: expected numbers of shape (B, 7) as [px, py, pz, qx, qy, qz, qw], got "
                          f"{type(poses).__name__} ({exc})") from exc
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 7:
        raise ConfigError(f"{what}: expected shape (B, 7) as [px, py, pz, qx, qy, qz, qw], got {arr.shape}")
    if arr.shape[0] == 0:
        raise ConfigError(f"{what}: the batch is empty; pass at least one pose")
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        raise ConfigError(f"{what}: pose {row} holds a non-finite value {arr[row].tolist()}; poses must be finite")
    check_float32_range(arr, what)
    norms = np.linalg.norm(arr[:, 3:], axis=1)
    off = np.abs(norms - 1.0) > QUAT_NORM_TOLERANCE
    if off.any():
        row = int(np.argmax(off))
        raise ConfigError(
            f"{what}: pose {row} has a quaternion of norm {norms[row]:.6f}; quaternions must be unit "
            f"[qx, qy, qz, qw] (normalise it, or build poses with pose_from_euler)"
        )
    arr[:, 3:] /= norms[:, None]
    return np.ascontiguousarray(arr, dtype=np.float32)


def check_float32_range(poses: np.ndarray, what: str) -> None:
    """Refuse (``ConfigError`` naming the first pose) a (N, 7) array holding a value beyond float32's range
    (``oceansim_py.limits.FLOAT32_MAX``, about 3.4e38): the device stores poses as float32, where it would
    become infinite."""
    big = (np.abs(poses) > FLOAT32_MAX).any(axis=1)
    if big.any():
        row = int(np.argmax(big))
        raise ConfigError(f"{what}: pose {row} holds {poses[row].tolist()}, beyond the float32 range "
                          f"(|value| <= {FLOAT32_MAX:.4g}) the device stores poses in; use metres within range")


def quat_from_euler(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Unit quaternion [qx, qy, qz, qw] of intrinsic Z-Y-X (yaw, then pitch, then roll) angles in radians."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return np.array([
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    ])


def pose_from_euler(x: float, y: float, z: float, roll_deg: float = 0.0, pitch_deg: float = 0.0,
                    yaw_deg: float = 0.0) -> np.ndarray:
    """A (7,) pose from a position (m) and roll/pitch/yaw in degrees (Z-Y-X, FLU body frame).

    A positive pitch rotates about +y (port), which tips the nose *down* in the Z-up FLU frame: use a
    positive pitch to look at the seafloor. A positive yaw turns the nose to port (counter-clockwise seen
    from above).
    """
    q = quat_from_euler(math.radians(roll_deg), math.radians(pitch_deg), math.radians(yaw_deg))
    return np.array([x, y, z, *q], dtype=np.float64)


def parse_pose_string(text: str, what: str = "--pose") -> np.ndarray:
    """Parse ``"x,y,z,roll,pitch,yaw"`` (m and degrees) or ``"px,py,pz,qx,qy,qz,qw"`` into a (7,) pose."""
    try:
        vals = [float(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError as exc:
        raise ConfigError(f"{what}: {text!r} is not a comma-separated list of numbers") from exc
    if len(vals) == 6:
        pose = pose_from_euler(*vals)
    elif len(vals) == 7:
        pose = np.array(vals, dtype=np.float64)
    else:
        raise ConfigError(f"{what}: expected x,y,z,roll,pitch,yaw (6 values) or x,y,z,qx,qy,qz,qw (7), "
                          f"got {len(vals)} values")
    return as_poses(pose, what)[0].astype(np.float64)


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) ``[qx, qy, qz, qw]``."""
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    r = np.empty(q.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1 - 2 * (y * y + z * z)
    r[..., 0, 1] = 2 * (x * y - z * w)
    r[..., 0, 2] = 2 * (x * z + y * w)
    r[..., 1, 0] = 2 * (x * y + z * w)
    r[..., 1, 1] = 1 - 2 * (x * x + z * z)
    r[..., 1, 2] = 2 * (y * z - x * w)
    r[..., 2, 0] = 2 * (x * z - y * w)
    r[..., 2, 1] = 2 * (y * z + x * w)
    r[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def matrix_to_quat(m: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4) ``[qx, qy, qz, qw]`` of rotation matrices (..., 3, 3) (Shepperd's method)."""
    m = np.asarray(m, dtype=np.float64)
    flat = m.reshape(-1, 3, 3)
    out = np.empty((flat.shape[0], 4))
    for i, r in enumerate(flat):
        tr = r[0, 0] + r[1, 1] + r[2, 2]
        if tr > 0:
            s = math.sqrt(tr + 1.0) * 2
            out[i] = [(r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s]
        elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
            s = math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2]) * 2
            out[i] = [0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s]
        elif r[1, 1] > r[2, 2]:
            s = math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2]) * 2
            out[i] = [(r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s]
        else:
            s = math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1]) * 2
            out[i] = [(r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s, (r[1, 0] - r[0, 1]) / s]
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out.reshape(m.shape[:-2] + (4,))


def pose_to_matrix(poses: np.ndarray) -> np.ndarray:
    """Homogeneous 4x4 matrices (..., 4, 4) of poses (..., 7)."""
    p = np.asarray(poses, dtype=np.float64)
    m = np.zeros(p.shape[:-1] + (4, 4))
    m[..., :3, :3] = quat_to_matrix(p[..., 3:])
    m[..., :3, 3] = p[..., :3]
    m[..., 3, 3] = 1.0
    return m


def compose_poses(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Poses of ``a * b`` (apply ``b`` then ``a``), e.g. world_T_vehicle * vehicle_T_sensor, shape (..., 7)."""
    ma, mb = pose_to_matrix(a), pose_to_matrix(b)
    m = matmul_fixed(ma, mb)
    out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)))
    out[..., :3] = m[..., :3, 3]
    out[..., 3:] = matrix_to_quat(m[..., :3, :3])
    return out


def matmul_fixed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for (stacks of) small float64 matrices, (..., n, k) x (..., k, m), summed over k = 0, 1, ...
    in that order with element-wise operations.

    ``@``, ``np.dot`` and ``np.einsum`` hand the sum to BLAS or to SIMD kernels chosen per machine and thread
    count, so their last bits vary between runs on different machines or with different ``OPENBLAS_NUM_THREADS``;
    this product is the same bit for bit everywhere (every step is one correctly rounded IEEE operation).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    out = a[..., :, 0:1] * b[..., 0:1, :]
    for k in range(1, a.shape[-1]):
        out = out + a[..., :, k:k + 1] * b[..., k:k + 1, :]
    return out


def rotate_fixed(m: np.ndarray, v: np.ndarray, transpose: bool = False) -> np.ndarray:
    """``m v`` (``m^T v`` when ``transpose``) for matrices (..., 3, 3) and vectors (..., 3), in the fixed order
    of :func:`matmul_fixed` (e.g. world-to-body with a body-to-world rotation and ``transpose=True``)."""
    mat = np.swapaxes(np.asarray(m, dtype=np.float64), -1, -2) if transpose else m
    return matmul_fixed(mat, np.asarray(v, dtype=np.float64)[..., :, None])[..., 0]
