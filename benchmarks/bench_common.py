"""Helpers shared by the benchmark scripts (run as ``python benchmarks/<name>.py``; this folder is on the path)."""

from __future__ import annotations

import json
import os
import platform
import re
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


def config_for(kind: str, preset: str | None = None, **fields: Any) -> Any:
    """The config of the registry's sensor ``kind`` (oceansim_py/sensors/registry.py): ``preset`` (or the
    defaults) with ``fields`` on top."""
    from oceansim_py.sensors.registry import get

    return get(kind).make_config({**({"preset": preset} if preset else {}), **fields}, f"benchmark {kind}")


def sensor_for(kind: str, device: Any, preset: str | None = None, **fields: Any) -> tuple[Any, Any]:
    """(config, sensor) of the registry's sensor ``kind``: :func:`config_for`, and the sensor built on ``device``
    as the dataset writer builds it."""
    from oceansim_py.sensors.registry import get

    config = config_for(kind, preset, **fields)
    return config, get(kind).make_sensor(config, device)


def preset_names(kind: str) -> list[str]:
    """The presets of the registry's sensor ``kind``."""
    from oceansim_py.sensors.registry import get

    return get(kind).preset_names()


def add_common_arguments(parser: Any, report: str, scenes: bool = True, quick_help: str = "fewer repeats") -> None:
    """``--quick``, ``--out`` (default ``results/<report>.json`` next to the scripts), ``--device`` and, with
    ``scenes``, ``--scenes`` (default: every built-in scene)."""
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / f"{report}.json"))
    parser.add_argument("--device", default=None, help="Warp device (default: cuda:0 if present, else cpu)")
    if scenes:
        parser.add_argument("--scenes", nargs="*", default=None, help="scenes (default: every built-in scene)")


def add_rig_arguments(parser: Any, report: str, several: bool, repeats: int, timed: str) -> None:
    """``--rig`` (one, or ``several``; default the built-in ``pier_survey``), ``--frames``, ``--repeats`` (``timed``
    says what one repeat is), ``--quick`` (one timed run, 8 frames) and ``--out`` (``results/<report>.json``)."""
    if several:
        parser.add_argument("--rig", nargs="*", default=["pier_survey"], help="rig files or built-in rig names")
    else:
        parser.add_argument("--rig", default="pier_survey",
                            help="rig file or built-in rig name (default: the default rig)")
    parser.add_argument("--frames", type=int, default=None,
                        help="override the rigs' frame counts" if several else "override the rig's frame count")
    parser.add_argument("--repeats", type=int, default=repeats, help=f"{timed} (the fastest is reported)")
    parser.add_argument("--quick", action="store_true", help=f"one timed run per {timed.split(' per ')[-1]}, 8 frames")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / f"{report}.json"))


def frames_and_repeats(args: Any) -> tuple[int | None, int]:
    """(frames, repeats) of :func:`add_rig_arguments`' options: ``--quick`` means 8 frames and one repeat."""
    frames = 8 if args.quick and args.frames is None else args.frames
    return frames, 1 if args.quick else args.repeats


def _width(spec: str) -> int:
    """The width of a format spec (``>9.4f`` -> 9)."""
    return int(re.match(r"[<>^]?(\d+)", spec).group(1))


def table_header(columns: list[tuple[str, str, str]]) -> str:
    """The header line of a table of ``columns`` (title, row key, format spec such as ``8s`` or ``9.4f``): text
    columns left-aligned, the others right-aligned, each as wide as its spec."""
    return " ".join(f"{title:{'<' if spec.endswith('s') else '>'}{_width(spec)}}" for title, _, spec in columns)


def table_row(columns: list[tuple[str, str, str]], row: dict[str, Any]) -> str:
    """One row of the table of :func:`table_header` (``None`` is printed as ``-``)."""
    return " ".join(f"{'-':>{_width(spec)}}" if row[key] is None else format(row[key], spec)
                    for _, key, spec in columns)


def first_call(fn: Callable[[], Any], device: Any) -> tuple[Any, float]:
    """(result, seconds) of the first call of ``fn`` (kernel compilation included), synchronised."""
    t0 = time.perf_counter()
    result = fn()
    wp.synchronize_device(device)
    return result, time.perf_counter() - t0


def scene_columns(scene_name: str, scene: Any) -> dict[str, Any]:
    """The columns every per-scene row starts with: scene, triangles, device, launch threads (None on a GPU)."""
    from oceansim_py.runtime import cpu_threads

    return {"scene": scene_name, "triangles": scene.num_triangles, "device": str(scene.device),
            "threads": cpu_threads() if scene.device.is_cpu else None}


def each_thread_count(thread_counts: list[int], device: Any) -> Any:
    """Yield each of ``thread_counts`` (a single ``None`` on a GPU) with the CPU launch threads set to it; all
    threads again afterwards."""
    from oceansim_py.runtime import set_cpu_threads

    try:
        for threads in thread_counts if device.is_cpu else [None]:
            set_cpu_threads(threads)
            yield threads
    finally:
        set_cpu_threads(None)


def add_row(rows: list[dict[str, Any]], row: dict[str, Any], columns: list[tuple[str, str, str]]) -> None:
    """Append ``row`` and print it as a line of the table of ``columns``."""
    rows.append(row)
    print(table_row(columns, row), flush=True)
