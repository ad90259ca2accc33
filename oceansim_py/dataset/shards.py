"""Shard folders on disk: temporary names, checksums, atomic completion, and the shard plan.

A shard is a folder ``shard_NNNNN`` holding every product of the ticks it covers, plus ``shard.json`` (its
frame range, per-sensor sample indices and the SHA-256 of each file). It is written under
``.shard_NNNNN.partial`` and renamed when complete, so a shard folder that exists is complete; a partial one
left by a killed run is deleted and redone by ``--resume``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from oceansim_py.errors import DatasetError

SHARD_META = "shard.json"


def shard_name(index: int) -> str:
    return f"shard_{index:05d}"


def partial_name(index: int) -> str:
    return f".{shard_name(index)}.partial"


@dataclass(frozen=True)
class ShardPlan:
    """Ticks ``[tick_start, tick_stop)`` of shard ``index`` and, per sensor name, its sample indices there."""

    index: int
    tick_start: int
    tick_stop: int
    samples: dict[str, tuple[int, int]]

    @property
    def frames(self) -> int:
        return self.tick_stop - self.tick_start


def sample_range(tick_start: int, tick_stop: int, tick_rate: float, rate: float) -> tuple[int, int]:
    """Sample indices m of a sensor at ``rate`` Hz whose times m / rate fall in [tick_start, tick_stop) / tick_rate.

    Exact for rational rates to 1e-9 of a sample: a sample on a shard boundary belongs to the later shard.
    """
    lo = math.ceil(tick_start * rate / tick_rate - 1e-9)
    hi = math.ceil(tick_stop * rate / tick_rate - 1e-9)
    return lo, hi


def plan_shards(frames: int, shard_size: int, tick_rate: float, rates: dict[str, float]) -> list[ShardPlan]:
    plans = []
    for index, start in enumerate(range(0, frames, shard_size)):
        stop = min(frames, start + shard_size)
        plans.append(ShardPlan(index, start, stop,
                               {name: sample_range(start, stop, tick_rate, r) for name, r in rates.items()}))
    return plans


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def shard_checksum(files: dict[str, str]) -> str:
    """One SHA-256 over the sorted (relative path, file hash) pairs of a shard."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode())
        h.update(b"\0")
        h.update(files[rel].encode())
        h.update(b"\n")
    return h.hexdigest()


def begin_shard(out: Path, index: int) -> Path:
    """A fresh, empty partial folder for shard ``index`` (a stale one from a killed run is removed)."""
    tmp = out / partial_name(index)
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        tmp.mkdir(parents=True)
    except OSError as exc:
        raise DatasetError(f"{tmp}: cannot create the shard folder ({exc.strerror}); check permissions and "
                           f"free space") from exc
    return tmp


def finish_shard(out: Path, plan: ShardPlan, tmp: Path, extra: dict[str, Any]) -> dict[str, Any]:
    """Hash every file, write ``shard.json``, fsync, and rename the partial folder into place. Returns the
    shard's manifest record: the deterministic fields of ``shard.json`` plus ``extra`` (e.g. timings, which are
    kept out of the shard itself so that shards are byte-identical between runs)."""
    files = {}
    for p in sorted(tmp.rglob("*")):
        if p.is_file():
            files[p.relative_to(tmp).as_posix()] = file_sha256(p)
    record = {"index": plan.index, "name": shard_name(plan.index), "frames": plan.frames,
              "ticks": [plan.tick_start, plan.tick_stop],
              "samples": {k: list(v) for k, v in plan.samples.items()},
              "files": len(files), "checksum": shard_checksum(files)}
    meta = dict(record, file_sha256=files)
    try:
        with open(tmp / SHARD_META, "w", encoding="utf-8") as fh:
            json.dump(meta, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        final = out / shard_name(plan.index)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except OSError as exc:
        raise DatasetError(f"{tmp}: could not complete the shard ({exc.strerror}); the shards already complete "
                           f"are intact, fix the problem and rerun with --resume") from exc
    return {**record, **extra}


def verify_shard(folder: Path) -> dict[str, Any] | None:
    """The manifest record of a complete shard folder whose files match its ``shard.json``, else ``None``."""
    meta_path = folder / SHARD_META
    if not meta_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        files = meta.pop("file_sha256")
        present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {SHARD_META}
        if present != set(files):
            return None
        if any(file_sha256(folder / rel) != digest for rel, digest in files.items()):
            return None
        if shard_checksum(files) != meta["checksum"]:
            return None
    except (OSError, ValueError, KeyError):
        return None
    return meta


def write_table(path: Path, columns: dict[str, np.ndarray]) -> None:
    """Write equal-length columns as CSV (header row; floats with 9 significant digits, NaN as ``nan``)."""
    names = list(columns)
    arrays = [np.asarray(columns[n]) for n in names]
    n = len(arrays[0]) if arrays else 0
    if any(len(a) != n for a in arrays):
        raise DatasetError(f"{path}: table columns differ in length")
    lines = [",".join(names)]
    for i in range(n):
        cells = []
        for a in arrays:
            v = a[i]
            if isinstance(v, (np.floating, float)):
                cells.append(f"{float(v):.9g}")
            else:
                cells.append(str(v.item() if hasattr(v, "item") else v))
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_table(path: Path) -> dict[str, np.ndarray]:
    """Read a table written by :func:`write_table` into float64 columns (integers stay exact)."""
    text = path.read_text(encoding="utf-8").strip().splitlines()
    names = text[0].split(",")
    rows = [line.split(",") for line in text[1:]]
    return {n: np.array([float(r[i]) for r in rows], dtype=np.float64) for i, n in enumerate(names)}
