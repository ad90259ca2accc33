"""Helpers shared by the benchmark scripts (run as ``python benchmarks/<name>.py``; this folder is on the path)."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import warp as wp


def time_call(fn: Callable[[], None], device: Any, min_seconds: float, max_repeats: int) -> float:
    """Median seconds of ``fn`` (synchronised), repeated until ``min_seconds`` total or ``max_repeats``."""
    samples: list[float] = []
    total = 0.0
    while len(samples) < max_repeats and (total < min_seconds or not samples):
        t0 = time.perf_counter()
        fn()
        wp.synchronize_device(device)
        dt = time.perf_counter() - t0
        samples.append(dt)
        total += dt
    return float(np.median(samples))


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(), "warp": wp.config.version}


def write_report(path: str | Path, report: dict[str, Any]) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out}")
    return out
