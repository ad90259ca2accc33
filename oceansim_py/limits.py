"""Documented size limits that keep bad input from hanging the engine or exhausting memory.

Every limit is checked before the work it bounds starts, and exceeding one is a
:class:`~oceansim_py.errors.ConfigError` naming the file or field, the value and the limit.

- ``MAX_FRAMES``: frames (rig ticks) in one run (10 million: a month of a 4 Hz sensor; split larger runs).
- ``MAX_SHARDS``: shards of one run (each is a folder; 100,000).
- ``MAX_SEED``: run seeds are 31-bit, like every sensor config's ``seed`` (``[0, 2^31 - 1]``).
- ``MAX_TRAJECTORY_SAMPLES``: samples of one trajectory (generators, resampling; 10 million).
- ``MAX_TRAJECTORY_SEGMENTS``: legs of a lawnmower survey (100,000).
- ``MAX_FRAME_INDEX``: the largest frame index a render accepts. Frame indices key the counter-based noise
  (``kernels/random.py``) as 32-bit signed kernel arguments, so ``frame_index + batch - 1`` must stay below
  ``2^31``; a larger one would wrap and silently repeat the noise of an earlier frame.
- ``MAX_RANGE_BINS``: range bins of one ping of an imaging, profiling, side-scan, single-beam or mechanically
  scanned sonar (2^24 = 16,777,216: 24 um bins over 400 m). A sensor builds its range tables on the host at
  construction (some 24 B a bin with the temporaries), so a mistyped ``range_bins: 1e9`` is refused by name
  instead of exhausting the host's memory before any render estimate runs.
- ``FLOAT32_MAX``: poses are float32 on the device; larger magnitudes would become infinite.
- YAML (``oceansim_py.io.config.load_yaml``): files up to ``MAX_YAML_BYTES`` (16 MiB), at most
  ``MAX_YAML_NODES`` nodes once aliases are expanded (a "billion laughs" alias bomb is refused before it is
  walked), nesting at most ``MAX_YAML_DEPTH`` levels deep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oceansim_py.errors import ConfigError

MAX_FRAMES = 10_000_000
MAX_SHARDS = 100_000
MAX_SEED = 2**31 - 1
MAX_TRAJECTORY_SAMPLES = 10_000_000
MAX_TRAJECTORY_SEGMENTS = 100_000
MAX_FRAME_INDEX = 2**31 - 1
#: Widest fan image (pixels) that ``to_cartesian`` / ``--fan-width`` make: 16384 x ~16384 float64 is 2 GiB.
MAX_FAN_WIDTH = 16_384
MAX_RANGE_BINS = 1 << 24
FLOAT32_MAX = float(np.finfo(np.float32).max)
MAX_YAML_BYTES = 16 * 2**20
MAX_YAML_NODES = 1_000_000
MAX_YAML_DEPTH = 64


def check_frame_index(frame_index: Any, what: str, batch: int = 1) -> int:
    """``frame_index`` as an int, or a ``ConfigError``: it must be an integer with ``0 <= frame_index`` and
    ``frame_index + batch - 1 <= MAX_FRAME_INDEX`` (the frames of a batch of ``batch`` poses)."""
    if isinstance(frame_index, bool) or not isinstance(frame_index, (int, np.integer)) or frame_index < 0:
        raise ConfigError(f"{what}: frame_index must be an integer >= 0, got {frame_index!r}")
    last = int(frame_index) + max(int(batch), 1) - 1
    if last > MAX_FRAME_INDEX:
        raise ConfigError(f"{what}: frame_index {int(frame_index)} with {batch} pose(s) reaches frame {last}, past "
                          f"the noise counter's last frame {MAX_FRAME_INDEX} (2^31 - 1); number frames from 0 "
                          f"within each run")
    return int(frame_index)


def check_count(n: float, limit: int, what: str, fix: str) -> int:
    """``n`` as an int, or a ``ConfigError`` when it exceeds ``limit`` (named ``what``; ``fix`` says what to do)."""
    if not n <= limit:
        shown = f"{n:,}" if isinstance(n, int) and n < 10**15 else f"{float(n):.4g}"
        raise ConfigError(f"{what}: {shown} is more than the limit of {limit:,}; {fix}")
    return int(n)


def check_config_memory(config: Any, batch: int, device: Any, what: str) -> None:
    """Refuse (``ConfigError`` with the estimate and the free memory) a sensor whose config would need more than
    80 % of ``device``'s free memory to render ``batch`` poses. ``config.memory_bytes(batch)`` is the estimate
    (tables built at construction plus per-batch scratch and results; ``batch=0``: the tables alone, which is
    what a sensor checks before building them); ``config.MEMORY_FIX`` says what to lower."""
    from oceansim_py.runtime import check_memory

    fix = getattr(config, "MEMORY_FIX", "lower the sensor's resolution")
    if batch > 1:
        what, fix = f"{what} ({batch} poses per render)", f"{fix}, or render fewer poses at once"
    check_memory(int(config.memory_bytes(batch)), device, what, fix)
