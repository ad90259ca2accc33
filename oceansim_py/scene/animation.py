"""Time-varying rigid transforms: a node's world transform as a function of time (seconds). Pure numpy.

A :class:`TransformTrack` evaluates one of two ways:

- **USD xformOps** (what the USD reader builds): the world transform is a product of *factors*, each a constant
  4x4 matrix or an animated :class:`XformOp`. Each op interpolates its own authored value between its time
  samples (translations, scales, angles and matrices linearly, component by component; ``orient`` quaternions
  by slerp; every value held before the first and after the last sample; values rounded to the attribute's
  precision) and is then turned into a matrix, exactly as ``UsdGeom.Xformable.ComputeLocalToWorldTransform(time)``
  does (a ``float`` quaternion within about a degree of the identity is the exception: pxr's ``2 acos(w)`` of a
  float-rounded ``w`` is only good to ~1e-3 rad there, and the two can differ by that much). A 270 degree
  ``rotateZ`` step turns 270 degrees, and an orbiting child stays on its circle.
- **Keyed matrices** (``TransformTrack(times, matrices)``): between keys the translation and scale are
  interpolated linearly and the rotation by slerp (shortest arc); the end keys hold outside.

Matrices are 4x4 affine, column-vector convention (``p' = M @ p``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from oceansim_py.errors import SceneError
from oceansim_py.poses import matmul_fixed, matrix_to_quat, quat_to_matrix

#: Op kinds :class:`XformOp` evaluates (USD xformOp type tokens).
ROTATION_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
OP_KINDS = (("translate", "translateX", "translateY", "translateZ", "scale", "scaleX", "scaleY", "scaleZ",
             "rotateX", "rotateY", "rotateZ", "orient", "transform") + tuple(f"rotate{o}" for o in ROTATION_ORDERS))


_DTYPES = {"half": np.float16, "float": np.float32, "double": np.float64}


def slerp(q0: np.ndarray, q1: np.ndarray, u: float) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions [qx, qy, qz, qw] (shortest arc), u in [0, 1]."""
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    d = float(q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3])
    if d < 0.0:
        q1, d = -q1, -d
    if d > 0.9995:
        q = q0 + u * (q1 - q0)
        return q / np.linalg.norm(q)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    return (np.sin((1 - u) * theta) * q0 + np.sin(u * theta) * q1) / s


def usd_lerp(v0: np.ndarray, v1: np.ndarray, u: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """``GfLerp`` of values (T, d) at fractions u (T,): ``(1 - u) * v0 + u * v1``, each product rounded to the
    attribute's precision ``dtype`` and summed in it, as USD interpolates a ``float3``, ``double3``, ... value."""
    u = u[:, None]
    return (((1.0 - u) * v0).astype(dtype) + (u * v1).astype(dtype)).astype(np.float64)


def usd_slerp(q0: np.ndarray, q1: np.ndarray, u: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """``GfSlerp`` of quaternions (T, 4) [qw, qx, qy, qz] (USD's order) of precision ``dtype`` at fractions u
    (T,): shortest arc, a linear blend when the two are within 1e-5 of parallel, no renormalisation; the cosine
    and the result are computed in the quaternions' precision as ``GfQuatf``/``GfQuatd`` do."""
    a, b = q0.astype(dtype), q1.astype(dtype)
    cos = (a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2] + a[:, 3] * b[:, 3] + a[:, 0] * b[:, 0]).astype(np.float64)
    sign = np.where(cos < 0.0, -1.0, 1.0)
    cos = np.minimum(np.abs(cos), 1.0)
    arc = 1.0 - cos > 1e-5
    theta = np.arccos(cos)
    sin = np.where(arc, np.sin(theta), 1.0)
    s0 = np.where(arc, np.sin((1 - u) * theta) / sin, 1.0 - u)
    s1 = np.where(arc, np.sin(u * theta) / sin, u) * sign
    return ((s0[:, None] * q0).astype(dtype) + (s1[:, None] * q1).astype(dtype)).astype(np.float64)


def _axis_rotations(axis: int, degrees: np.ndarray) -> np.ndarray:
    """Right-handed rotations (T, 3, 3) by ``degrees`` (T,) about coordinate axis 0, 1 or 2."""
    a = np.radians(degrees)
    c, s = np.cos(a), np.sin(a)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    r = np.tile(np.eye(3), (a.size, 1, 1))
    r[:, i, i], r[:, i, j], r[:, j, i], r[:, j, j] = c, -s, s, c
    return r


def op_matrices(kind: str, values: np.ndarray) -> np.ndarray:
    """4x4 matrices (T, 4, 4) of one xformOp of type token ``kind`` with values (T, d): vec3 for translate,
    scale and rotate orders, a scalar for single-axis ops, [qw, qx, qy, qz] for orient (turned into a rotation
    as ``GfRotation`` does: angle ``2 acos(w)`` about the imaginary part's direction), a column-convention 4x4
    flattened to 16 for transform; angles in degrees."""
    n = values.shape[0]
    if kind == "transform":
        return values.reshape(n, 4, 4).copy()
    m = np.tile(np.eye(4), (n, 1, 1))
    if kind.startswith("translate"):
        if kind == "translate":
            m[:, :3, 3] = values
        else:
            m[:, "XYZ".index(kind[-1]), 3] = values[:, 0]
    elif kind.startswith("scale"):
        if kind == "scale":
            m[:, [0, 1, 2], [0, 1, 2]] = values
        else:
            k = "XYZ".index(kind[-1])
            m[:, k, k] = values[:, 0]
    elif kind == "orient":
        length = np.linalg.norm(values[:, 1:], axis=1)
        turn = length > 1e-10
        half = np.arccos(np.clip(values[:, 0], -1.0, 1.0))
        axis = values[:, 1:] / np.where(turn, length, 1.0)[:, None]
        quat = np.column_stack([np.sin(half)[:, None] * axis, np.cos(half)])
        m[turn, :3, :3] = quat_to_matrix(quat[turn])
    elif kind in ("rotateX", "rotateY", "rotateZ"):
        m[:, :3, :3] = _axis_rotations("XYZ".index(kind[-1]), values[:, 0])
    else:  # rotateABC: the values hold (x, y, z) angles; A is applied first, so it stands rightmost
        r = np.tile(np.eye(3), (n, 1, 1))
        for axis in kind[len("rotate"):]:
            k = "XYZ".index(axis)
            r = matmul_fixed(_axis_rotations(k, values[:, k]), r)
        m[:, :3, :3] = r
    return m


@dataclasses.dataclass
class XformOp:
    """One animated USD xformOp: type token ``kind`` (one of :data:`OP_KINDS`), ``inverse`` for an
    ``!invert!`` op, sample ``times`` (K,) in seconds (increasing, K >= 2) and ``values`` (K, d) in the op's
    layout (see :func:`op_matrices`), ``precision`` the attribute's ("half", "float" or "double"; interpolated
    values are rounded to it, as in USD)."""

    kind: str
    inverse: bool
    times: np.ndarray
    values: np.ndarray
    precision: str = "double"

    def __post_init__(self) -> None:
        self.times = np.asarray(self.times, dtype=np.float64)
        self.values = np.asarray(self.values, dtype=np.float64).reshape(self.times.size, -1)
        if self.kind not in OP_KINDS:
            raise SceneError(f"xformOp type {self.kind!r} cannot be animated (known: {', '.join(OP_KINDS)})")
        if self.times.ndim != 1 or self.times.size < 2 or np.any(np.diff(self.times) <= 0):
            raise SceneError("XformOp: times must be strictly increasing, at least two")
        if self.precision not in _DTYPES:
            raise SceneError(f"XformOp: precision must be one of {sorted(_DTYPES)}, got {self.precision!r}")

    def values_at(self, times: np.ndarray) -> np.ndarray:
        """The op's values (T, d) at ``times`` (T,) seconds, interpolated as USD does."""
        k = np.clip(np.searchsorted(self.times, times, side="right") - 1, 0, self.times.size - 2)
        u = np.clip((times - self.times[k]) / (self.times[k + 1] - self.times[k]), 0.0, 1.0)
        interpolate = usd_slerp if self.kind == "orient" else usd_lerp
        return interpolate(self.values[k], self.values[k + 1], u, _DTYPES[self.precision])

    def matrices(self, times: np.ndarray) -> np.ndarray:
        """The op's 4x4 matrices (T, 4, 4) at ``times`` (T,) seconds (inverted for an ``!invert!`` op)."""
        m = op_matrices(self.kind, self.values_at(times))
        return np.linalg.inv(m) if self.inverse else m


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
    """Key times (s, increasing) and the 4x4 world transforms at those times (metres, Z up); ``factors``, when
    given (see :meth:`from_factors`), define the transform between keys exactly (module docstring)."""

    times: np.ndarray
    matrices: np.ndarray
    factors: tuple[np.ndarray | XformOp, ...] | None = None

    def __post_init__(self) -> None:
        self.times = np.asarray(self.times, dtype=np.float64)
        self.matrices = np.asarray(self.matrices, dtype=np.float64)
        if self.times.ndim != 1 or self.matrices.shape != (self.times.size, 4, 4) or self.times.size == 0:
            raise SceneError("TransformTrack: times (K,) and matrices (K, 4, 4) must match and be non-empty")
        if np.any(np.diff(self.times) <= 0):
            raise SceneError("TransformTrack: key times must be strictly increasing")
        if self.factors is not None:
            if np.any(np.linalg.norm(self.matrices[:, :3, :3], axis=1) <= 0):
                raise SceneError("a transform with a zero scale cannot be animated")
            return
        parts = [decompose(m) for m in self.matrices]
        self._t = np.array([p[0] for p in parts])
        self._q = np.array([p[1] for p in parts])
        self._s = np.array([p[2] for p in parts])

    @classmethod
    def from_factors(cls, factors: list[np.ndarray | XformOp]) -> "TransformTrack":
        """The track of the product ``factors[0] @ factors[1] @ ...`` of constant 4x4 matrices and animated
        ops; its keys are the union of the ops' sample times. ``SceneError`` when no factor is animated."""
        merged: list[np.ndarray | XformOp] = []
        for f in factors:
            if isinstance(f, XformOp) or not merged or isinstance(merged[-1], XformOp):
                merged.append(f if isinstance(f, XformOp) else np.asarray(f, dtype=np.float64))
            else:
                merged[-1] = matmul_fixed(merged[-1], f)
        ops = [f for f in merged if isinstance(f, XformOp)]
        if not ops:
            raise SceneError("TransformTrack.from_factors: no animated factor")
        times = np.unique(np.concatenate([op.times for op in ops]))
        return cls(times, _compose(merged, times), tuple(merged))

    def at(self, time: float) -> np.ndarray:
        """The 4x4 world transform at ``time`` seconds."""
        if self.factors is not None:
            return _compose(self.factors, np.array([float(time)]))[0]
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


def _compose(factors: tuple[np.ndarray | XformOp, ...] | list[np.ndarray | XformOp],
             times: np.ndarray) -> np.ndarray:
    """The products (T, 4, 4) of ``factors`` at ``times`` (T,) seconds."""
    m = np.tile(np.eye(4), (times.size, 1, 1))
    for f in factors:
        m = matmul_fixed(m, f.matrices(times) if isinstance(f, XformOp) else f)
    return m
