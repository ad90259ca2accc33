"""Counter-based random streams (docs/DESIGN.md, Randomness).

Every draw is a pure function of (run seed, frame index, sensor id, stream id, element index): the same seed
gives the same frame whatever the batch size, the chunking or the order frames are rendered in. Independent
noise terms use different ``stream`` ids, which hash to unrelated PCG states.
"""

from __future__ import annotations

import warp as wp


@wp.func
def pcg_hash(x: wp.uint32) -> wp.uint32:
    """PCG-RXS-M-XS 32-bit hash (Jarzynski & Olano 2020): a well-mixed bijection of uint32.

    Constants above 2^31 are written as the int32 with the same bits (Warp types integer literals as int32).
    """
    state = x * wp.uint32(747796405) + wp.uint32(-1403630843)  # 2891336453
    word = ((state >> ((state >> wp.uint32(28)) + wp.uint32(4))) ^ state) * wp.uint32(277803737)
    return (word >> wp.uint32(22)) ^ word


@wp.func
def stream_key(seed: int, frame: int, sensor: int, stream: int) -> int:
    """A 32-bit key naming one noise stream of one frame of one sensor."""
    h = pcg_hash(wp.uint32(seed))
    h = pcg_hash(h ^ wp.uint32(frame))
    h = pcg_hash(h ^ wp.uint32(sensor) * wp.uint32(-1640531527))  # 0x9E3779B9
    h = pcg_hash(h ^ wp.uint32(stream) * wp.uint32(-2048144789))  # 0x85EBCA6B
    return wp.int32(h >> wp.uint32(1))


@wp.func
def stream_state(seed: int, frame: int, sensor: int, stream: int, element: int) -> wp.uint32:
    """The Warp RNG state for ``element`` of a stream; draw with ``wp.randf``/``wp.randn``."""
    return wp.rand_init(stream_key(seed, frame, sensor, stream), element)


@wp.func
def rayleigh(state: wp.uint32, sigma: float) -> float:
    """One Rayleigh(sigma) draw: sigma * sqrt(-2 ln U), U uniform in (0, 1]. Advances nothing (use a fresh
    state per element)."""
    u = 1.0 - wp.randf(state)
    return sigma * wp.sqrt(-2.0 * wp.log(u))
