"""Quaternion helpers of the trajectories (vectorised over leading axes, ``[qx, qy, qz, qw]``, float64), and the
renormalisation policy: a norm within ``QUAT_SILENT_LIMIT`` of 1 is renormalised silently, within
``QUAT_WARN_LIMIT`` with a ``UserWarning``, further off it is a ``ConfigError``."""

from __future__ import annotations

import warnings

import numpy as np

from oceansim_py.errors import ConfigError

#: Quaternion norms further than this from 1 are refused; closer ones are renormalised (with a warning
#: above ``QUAT_SILENT_LIMIT``).
QUAT_WARN_LIMIT = 0.05
QUAT_SILENT_LIMIT = 1e-6


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


def normalise_quats(q: np.ndarray, where: str) -> np.ndarray:
    """Unit quaternions (N, 4) of ``q`` under the module's renormalisation policy; errors name ``where``."""
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
