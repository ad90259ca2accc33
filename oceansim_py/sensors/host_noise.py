"""Counter-based Gaussian noise on the host (numpy), for the trajectory-based sensors that launch no kernel.

Each draw is a pure function of (seed, sensor id, stream id, frame index, component): a SplitMix64 hash
(Steele, Lea & Flood 2014) of those integers gives two uniform 53-bit numbers per draw, turned into one
standard normal by Box-Muller. So sample ``i`` of a sensor gets the same noise whatever batch it is computed
in, and independent noise terms (white noise, bias walk, ...) use different ``stream`` ids.
"""

from __future__ import annotations

import numpy as np

from oceansim_py.errors import ConfigError

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK = (1 << 64) - 1


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of uint64 values (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _key(seed: int, sensor: int, stream: int) -> np.uint64:
    k = np.uint64(int(seed) & _MASK)
    for part in (sensor, stream):
        k = _splitmix64(np.array([k ^ np.uint64(int(part) & _MASK)], dtype=np.uint64))[0]
    return k


def _uniform(key: np.uint64, counters: np.ndarray) -> np.ndarray:
    bits = _splitmix64(_splitmix64(counters) ^ key)
    return ((bits >> np.uint64(11)).astype(np.float64) + 1.0) * (1.0 / 2.0**53)  # in (0, 1]


def gaussian(seed: int, sensor: int, stream: int, frames: np.ndarray, dims: int) -> np.ndarray:
    """Standard normal draws of shape (len(frames), dims) for the given frame indices (integers >= 0)."""
    f = np.asarray(frames, dtype=np.uint64).reshape(-1, 1)
    j = np.arange(dims, dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        base = f * np.uint64(2 * dims) + np.uint64(2) * j
    key = _key(seed, sensor, stream)
    u1 = _uniform(key, base)
    u2 = _uniform(key, base + np.uint64(1))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def uniform(seed: int, sensor: int, stream: int, frames: np.ndarray, dims: int) -> np.ndarray:
    """Uniform draws in (0, 1], shape (len(frames), dims), keyed like :func:`gaussian` (same counters: use a
    stream of its own)."""
    f = np.asarray(frames, dtype=np.uint64).reshape(-1, 1)
    j = np.arange(dims, dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        base = f * np.uint64(dims) + j
    return _uniform(_key(seed, sensor, stream), base)


#: Brownian-motion grid: a dyadic bridge of BRIDGE_LEVELS levels over cells of BRIDGE_RESOLUTION seconds
#: (2^42 cells of 2^-16 s, about 15 us: 777 days on each side of t = 0).
BRIDGE_RESOLUTION = 2.0**-16
BRIDGE_LEVELS = 42
#: Brownian paths use stream keys from here up, so they never share draws with ``gaussian`` streams below it.
BRIDGE_STREAM_BASE = 1 << 20


def _bridge(seed: int, sensor: int, stream: int, k: np.ndarray, dims: int) -> np.ndarray:
    """A standard random walk B at integer points k in [0, 2^L] (B(0) = 0, B(k) ~ N(0, k)), built by the
    Levy-Ciesielski midpoint construction: node n of the heap-numbered dyadic tree draws the midpoint of its
    interval given its ends, so B(k) costs L draws and is a pure function of (seed, sensor, stream, k)."""
    n = k.size
    top = np.uint64(1) << np.uint64(BRIDGE_LEVELS)
    lo = np.zeros(n, dtype=np.uint64)
    hi = np.full(n, top, dtype=np.uint64)
    root = gaussian(seed, sensor, stream, np.zeros(1, dtype=np.uint64), dims)[0]
    blo = np.zeros((n, dims))
    bhi = np.tile(root * 2.0 ** (BRIDGE_LEVELS / 2.0), (n, 1))
    node = np.ones(n, dtype=np.uint64)
    for _ in range(BRIDGE_LEVELS):
        mid = (lo + hi) >> np.uint64(1)
        length = (hi - lo).astype(np.float64)
        bmid = 0.5 * (blo + bhi) + np.sqrt(length / 4.0)[:, None] * gaussian(seed, sensor, stream, node, dims)
        left = k < mid
        hi = np.where(left, mid, hi)
        lo = np.where(left, lo, mid)
        bhi = np.where(left[:, None], bmid, bhi)
        blo = np.where(left[:, None], blo, bmid)
        node = node * np.uint64(2) + (~left).astype(np.uint64)
    return np.where((k == lo)[:, None], blo, bhi)


def brownian(seed: int, sensor: int, stream: int, times: np.ndarray, dims: int) -> np.ndarray:
    """A standard Brownian motion W(t) (W(0) = 0, Var W(t) = |t|, t in seconds) at ``times``, shape
    (len(times), dims): a pure function of (seed, sensor, stream, t), so any batch of times sees the same path.
    Exact at multiples of ``BRIDGE_RESOLUTION`` s, linearly interpolated between them; the two sides of
    t = 0 are independent walks (stream keys ``BRIDGE_STREAM_BASE + 2 stream (+ 1)``)."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    limit = BRIDGE_RESOLUTION * 2.0**BRIDGE_LEVELS
    if not np.isfinite(t).all() or np.abs(t).max(initial=0.0) >= limit:
        raise ConfigError(f"brownian: times must be finite and within +-{limit:.4g} s of 0; give the trajectory "
                          f"times relative to a nearer epoch")
    out = np.zeros((t.size, dims))
    for side, sel in ((0, t >= 0), (1, t < 0)):
        if not sel.any():
            continue
        x = np.abs(t[sel]) / BRIDGE_RESOLUTION
        k = np.floor(x)
        u = (x - k)[:, None]
        k = k.astype(np.uint64)
        ends = _bridge(seed, sensor, BRIDGE_STREAM_BASE + 2 * stream + side,
                       np.concatenate([k, k + np.uint64(1)]), dims)
        m = k.size
        out[sel] = np.sqrt(BRIDGE_RESOLUTION) * ((1.0 - u) * ends[:m] + u * ends[m:])
    return out
