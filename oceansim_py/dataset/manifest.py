"""``manifest.json``: what a dataset folder holds — the full rig, versions, seeds, sensor metadata, shards.

It is rewritten atomically (temporary file, then rename) after every shard, so it always describes the shards
that are complete.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

from oceansim_py.errors import DatasetError

MANIFEST = "manifest.json"
FORMAT = "oceansim_py-dataset"
FORMAT_VERSION = 1


def versions() -> dict[str, str]:
    import numpy
    import warp

    import oceansim_py

    return {"oceansim_py": oceansim_py.__version__, "warp": warp.config.version, "numpy": numpy.__version__,
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


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest.json`` atomically: a temporary file of a unique name in the same folder, then rename."""
    p = out / MANIFEST
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{MANIFEST}.", suffix=".tmp", dir=out)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except OSError as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise DatasetError(f"{p}: could not write the manifest ({exc.strerror}); check permissions and free "
                           f"space, then rerun with --resume") from exc


def validate_manifest(manifest: dict[str, Any]) -> list[str]:
    """Problems with a manifest's structure (empty when it is valid); never raises on a malformed one."""
    try:
        return _manifest_problems(manifest)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return [f"malformed ({type(exc).__name__}: {exc})"]


def _manifest_problems(manifest: dict[str, Any]) -> list[str]:
    problems = []
    for key in ("format", "format_version", "rig", "fingerprint", "versions", "seed", "sensors", "shards",
                "frames", "status"):
        if key not in manifest:
            problems.append(f"missing key '{key}'")
    if problems:
        return problems
    indices = [s["index"] for s in manifest["shards"]]
    if indices != sorted(set(indices)):
        problems.append("shard indices are not unique and increasing")
    for s in manifest["shards"]:
        for key in ("index", "name", "frames", "ticks", "samples", "checksum", "files"):
            if key not in s:
                problems.append(f"shard {s.get('index')}: missing '{key}'")
        if not isinstance(s.get("index"), int) or s.get("name") != f"shard_{s['index']:05d}":
            problems.append(f"shard {s.get('index')!r}: name {s.get('name')!r} is not shard_NNNNN of its index")
    if manifest["status"] == "complete":
        total = sum(s["frames"] for s in manifest["shards"])
        if total != manifest["frames"]:
            problems.append(f"complete run: shards hold {total} frames, manifest says {manifest['frames']}")
    for name, sensor in manifest["sensors"].items():
        for key in ("type", "config", "rate_hz", "mount", "products"):
            if key not in sensor:
                problems.append(f"sensor {name}: missing '{key}'")
    return problems
