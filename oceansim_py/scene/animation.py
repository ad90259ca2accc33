"""Time-sampled rigid transforms: a node's world transform as a function of time (seconds).

Between key times the translation and scale are interpolated linearly and the rotation by slerp; before the
first key and after the last the end keys hold (USD's behaviour for time samples).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from oceansim_py.errors import SceneError
from oceansim_py.poses import matrix_to_quat, quat_to_matrix


def slerp(q0: np.ndarray, q1: np.ndarray, u: float) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions [qx, qy, qz, qw] (shortest arc), u in [0, 1]."""
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    d = float(np.dot(q0, q1))
    if d < 0.0:
        q1, d = -q1, -d
    if d > 0.9995:
        q = q0 + u * (q1 - q0)
        return q / np.linalg.norm(q)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    return (np.sin((1 - u) * theta) * q0 + np.sin(u * theta) * q1) / s


def decompose(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split a 4x4 affine (column-vector convention) into translation, unit quaternion and signed scale.

    A negative determinant is carried by negating the x scale, so that the rotation stays proper.
    """
    t = m[:3, 3].copy()
    a = m[:3, :3]
    s = np.linalg.norm(a, axis=0)
    if np.any(s <= 0):
        raise SceneError("a transform with a zero scale cannot be animated")
    r = a / s
    if np.linalg.det(r) < 0:
        s[0] = -s[0]
        r[:, 0] = -r[:, 0]
    return t, matrix_to_quat(r), s


@dataclasses.dataclass
class TransformTrack:
    """Key times (s, increasing) and the 4x4 world transforms at those times (metres, Z up)."""

    times: np.ndarray
    matrices: np.ndarray

    def __post_init__(self) -> None:
        self.times = np.asarray(self.times, dtype=np.float64)
        self.matrices = np.asarray(self.matrices, dtype=np.float64)
        if self.times.ndim != 1 or self.matrices.shape != (self.times.size, 4, 4) or self.times.size == 0:
            raise SceneError("TransformTrack: times (K,) and matrices (K, 4, 4) must match and be non-empty")
        if np.any(np.diff(self.times) <= 0):
            raise SceneError("TransformTrack: key times must be strictly increasing")
        parts = [decompose(m) for m in self.matrices]
        self._t = np.array([p[0] for p in parts])
        self._q = np.array([p[1] for p in parts])
        self._s = np.array([p[2] for p in parts])

    def at(self, time: float) -> np.ndarray:
        """The 4x4 world transform at ``time`` seconds."""
        k = int(np.searchsorted(self.times, time, side="right")) - 1
        if k < 0:
            return self.matrices[0].copy()
        if k >= self.times.size - 1:
            return self.matrices[-1].copy()
        u = (time - self.times[k]) / (self.times[k + 1] - self.times[k])
        t = (1 - u) * self._t[k] + u * self._t[k + 1]
        s = (1 - u) * self._s[k] + u * self._s[k + 1]
        q = slerp(self._q[k], self._q[k + 1], u)
        m = np.eye(4)
        m[:3, :3] = quat_to_matrix(q) * s[None, :]
        m[:3, 3] = t
        return m
