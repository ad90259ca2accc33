"""``manifest.json``: what a dataset folder holds — the full rig, versions, seeds, sensor metadata, shards.

It is rewritten atomically (temporary file, then rename) after every shard, so it always describes the shards
that are complete.
"""

from __future__ import annotations

import json
import math
import platform
from pathlib import Path
from typing import Any

from oceansim_py.errors import DatasetError
from oceansim_py.io.atomic import atomic_open

MANIFEST = "manifest.json"
FORMAT = "oceansim_py-dataset"
FORMAT_VERSION = 1


def versions() -> dict[str, str]:
    import numpy
    import warp

    from oceansim_py.version import __version__

    return {"oceansim_py": __version__, "warp": warp.config.version, "numpy": numpy.__version__,
            "python": platform.python_version()}


def read_manifest(out: Path) -> dict[str, Any] | None:
    p = out / MANIFEST
    if not p.is_file():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{p}: unreadable manifest ({exc}); move the folder aside or choose another --out") \
            from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DatasetError(f"{p}: not an oceansim_py dataset manifest")
    return data


def require_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the dataset folder ``path``; a ``DatasetError`` saying whether the folder is missing, not a
    folder, or holds no ``manifest.json``."""
    if not path.is_dir():
        raise DatasetError(f"{path}: {'not a folder' if path.exists() else 'no such folder'}; give the folder "
                           f"'oceansim-py generate --out' wrote")
    manifest = read_manifest(path)
    if manifest is None:
        raise DatasetError(f"{path}: no manifest.json; not an oceansim_py dataset")
    return manifest


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest.json`` atomically: a temporary file of a unique name in the same folder, then rename."""
    p = out / MANIFEST
    try:
        with atomic_open(p, "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=1, sort_keys=True)
    except OSError as exc:
        raise DatasetError(f"{p}: could not write the manifest ({exc.strerror}); check permissions and free "
                           f"space, then rerun with --resume") from exc


def stale_temporaries(out: Path) -> list[Path]:
    """Temporaries of ``manifest.json`` in ``out`` (``.manifest.json.<random>.tmp``, :func:`write_manifest`) that a
    writer killed mid-write left behind: :func:`~oceansim_py.io.atomic.atomic_path` removes its temporary on any
    exception, but a SIGKILL (or a SIGTERM outside the CLI) ends the process before it can."""
    return sorted(p for p in out.glob(f".{MANIFEST}.*.tmp") if p.is_file() or p.is_symlink())


def validate_manifest(manifest: dict[str, Any]) -> list[str]:
    """Problems with a manifest's structure (empty when it is valid); never raises on a malformed one."""
    try:
        return _manifest_problems(manifest)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return [f"malformed ({type(exc).__name__}: {exc})"]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _manifest_problems(manifest: dict[str, Any]) -> list[str]:
    if not isinstance(manifest, dict):
        return [f"the top level is a {type(manifest).__name__}, not an object"]
    problems = []
    for key in ("format", "format_version", "rig", "fingerprint", "versions", "seed", "sensors", "shards",
                "frames", "status", "tick_rate_hz", "start_time"):
        if key not in manifest:
            problems.append(f"missing key '{key}'")
    if problems:
        return problems
    if not isinstance(manifest["sensors"], dict) or not manifest["sensors"]:
        problems.append("'sensors' is not a non-empty object")
    if not isinstance(manifest["shards"], list):
        problems.append("'shards' is not a list")
    if not _is_number(manifest["tick_rate_hz"]) or manifest["tick_rate_hz"] <= 0:
        problems.append(f"'tick_rate_hz' is {manifest['tick_rate_hz']!r}, not a positive number")
    if not _is_number(manifest["start_time"]):
        problems.append(f"'start_time' is {manifest['start_time']!r}, not a finite number")
    if not isinstance(manifest["frames"], int) or manifest["frames"] < 0:
        problems.append(f"'frames' is {manifest['frames']!r}, not a count")
    if problems:
        return problems
    for name, sensor in manifest["sensors"].items():
        if not isinstance(sensor, dict):
            problems.append(f"sensor {name}: not an object")
            continue
        for key in ("type", "config", "rate_hz", "mount", "products"):
            if key not in sensor:
                problems.append(f"sensor {name}: missing '{key}'")
        if "rate_hz" in sensor and (not _is_number(sensor["rate_hz"]) or sensor["rate_hz"] <= 0):
            problems.append(f"sensor {name}: 'rate_hz' is {sensor['rate_hz']!r}, not a positive number")
        formats = sensor.get("products_format", {})
        if not isinstance(formats, dict) or not all(isinstance(v, str) for v in formats.values()):
            problems.append(f"sensor {name}: 'products_format' is not an object of product -> format")
        arrays = sensor.get("arrays", {})
        if not isinstance(arrays, dict) or not all(isinstance(v, dict) for v in arrays.values()):
            problems.append(f"sensor {name}: 'arrays' is not an object of product -> description")
    for s in manifest["shards"]:
        if not isinstance(s, dict):
            problems.append(f"shard entry {s!r} is not an object")
            continue
        for key in ("index", "name", "frames", "ticks", "samples", "checksum", "files"):
            if key not in s:
                problems.append(f"shard {s.get('index')}: missing '{key}'")
        if not isinstance(s.get("index"), int) or s.get("name") != f"shard_{s['index']:05d}":
            problems.append(f"shard {s.get('index')!r}: name {s.get('name')!r} is not shard_NNNNN of its index")
        if not isinstance(s.get("frames"), int) or s["frames"] < 0:
            problems.append(f"shard {s.get('index')!r}: 'frames' is {s.get('frames')!r}, not a count")
        samples = s.get("samples")
        if not isinstance(samples, dict):
            problems.append(f"shard {s.get('index')!r}: 'samples' is not an object")
            continue
        for name, span in samples.items():
            if name not in manifest["sensors"]:
                problems.append(f"shard {s.get('index')!r}: samples of sensor {name!r}, which the manifest does not list")
            elif (not isinstance(span, list) or len(span) != 2 or not all(isinstance(v, int) for v in span)
                  or not 0 <= span[0] <= span[1]):
                problems.append(f"shard {s.get('index')!r}: samples of {name!r} are {span!r}, not [first, end)")
    if problems:
        return problems
    indices = [s["index"] for s in manifest["shards"]]
    if indices != sorted(set(indices)):
        problems.append("shard indices are not unique and increasing")
    if manifest["status"] == "complete":
        total = sum(s["frames"] for s in manifest["shards"])
        if total != manifest["frames"]:
            problems.append(f"complete run: shards hold {total} frames, manifest says {manifest['frames']}")
    return problems or _span_problems(manifest)


def _span_problems(manifest: dict[str, Any]) -> list[str]:
    """Shards whose tick or sample spans overlap (a frame or sample held twice), or, in a complete run, leave
    a gap (one missing); a shard whose frame count is not its tick span."""
    problems = []
    shards = manifest["shards"]
    for s in shards:
        ticks = s["ticks"]
        if (not isinstance(ticks, list) or len(ticks) != 2 or not all(isinstance(v, int) for v in ticks)
                or not 0 <= ticks[0] <= ticks[1]):
            problems.append(f"shard {s['index']}: ticks {ticks!r} are not [first, end)")
        elif ticks[1] - ticks[0] != s["frames"]:
            problems.append(f"shard {s['index']}: holds {s['frames']} frames but ticks {ticks}")
    if problems:
        return problems
    complete = manifest["status"] == "complete"
    spans = {"ticks": [s["ticks"] for s in shards]}
    for name in manifest["sensors"]:
        spans[f"samples of {name!r}"] = [s["samples"].get(name, [0, 0]) for s in shards]
    for what, seq in spans.items():
        end = 0
        for s, (lo, hi) in zip(shards, seq):
            if lo < end or (complete and lo != end and hi > lo):
                problems.append(f"shard {s['index']}: {what} {[lo, hi]} "
                                f"{'overlap the previous shard' if lo < end else 'leave a gap after the previous shard'} "
                                f"(which ends at {end})")
            end = max(end, hi)
    if complete and shards and shards[-1]["ticks"][1] != manifest["frames"]:
        problems.append(f"complete run: the last shard ends at tick {shards[-1]['ticks'][1]}, manifest says "
                        f"{manifest['frames']} frames")
    return problems
