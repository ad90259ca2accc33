"""Shard folders on disk: temporary names, checksums, atomic completion, and the shard plan.

A shard is a folder ``shard_NNNNN`` holding every product of the ticks it covers, plus ``shard.json`` (its
frame range, per-sensor sample indices and the SHA-256 of each file). It is written under
``.shard_NNNNN.partial`` and renamed when complete, so a shard folder that exists is complete; a partial one
left by a killed run is deleted and redone by ``--resume`` — file by file, only the files its journal says an
oceansim_py writer made (:class:`PartialShard`, :func:`remove_written`).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from oceansim_py.errors import DatasetError
from oceansim_py.io.atomic import atomic_path, cannot_write

SHARD_META = "shard.json"
#: The fields of a shard's manifest record that its ``shard.json`` holds too (and must hold the same).
SHARD_RECORD_KEYS = ("index", "name", "frames", "ticks", "samples", "files", "checksum")


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


JOURNAL = ".written"


class PartialShard:
    """A shard being written under ``.shard_NNNNN.partial``. Every file is recorded in the folder's journal
    (``.written``, one relative path a line) *before* it is created, so that a later run deletes exactly the
    files an oceansim_py writer made there and nothing else, and so that the shard's checksums cover exactly
    the files this shard wrote (never whatever else happens to be in the folder)."""

    def __init__(self, out: Path, index: int) -> None:
        self.out = out
        self.index = index
        self.path = out / partial_name(index)
        self.files: list[str] = []
        if self.path.exists() or self.path.is_symlink():
            remove_written(self.path)
        try:
            self.path.mkdir(parents=True)
            self._journal = open(self.path / JOURNAL, "a", encoding="utf-8")
        except OSError as exc:
            raise DatasetError(f"{self.path}: cannot create the shard folder ({exc.strerror}); check permissions "
                               f"and free space") from exc

    def file(self, rel: str) -> Path:
        """The path of a new file ``rel`` (posix, relative to the shard) after recording it in the journal."""
        target = self.path / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._journal.write(rel + "\n")
            self._journal.flush()
        except OSError as exc:
            raise DatasetError(f"{target}: cannot record the file ({exc.strerror}); check permissions and free "
                               f"space, then rerun with --resume") from exc
        self.files.append(rel)
        return target

    def close(self) -> None:
        self._journal.close()


def _journal_entries(folder: Path) -> list[str]:
    journal = folder / JOURNAL
    if journal.is_symlink() or not journal.is_file():
        return []
    try:
        return [line for line in journal.read_text(encoding="utf-8").splitlines() if line]
    except (OSError, UnicodeDecodeError):
        return []


def _shard_json_entries(folder: Path) -> list[str]:
    meta = folder / SHARD_META
    if meta.is_symlink() or not meta.is_file():
        return []
    try:
        files = json.loads(meta.read_text(encoding="utf-8")).get("file_sha256", {})
        return [str(k) for k in files] if isinstance(files, dict) else []
    except (OSError, ValueError, AttributeError):
        return []


def remove_written(folder: Path) -> None:
    """Delete a shard folder (partial or complete) that an oceansim_py writer made, file by file: only the files
    its journal or ``shard.json`` lists (and their ``.tmp`` siblings), then the emptied folders. Anything else
    there (a file someone put in, a symlink) is left in place and reported as a ``DatasetError``."""
    if folder.is_symlink():
        raise DatasetError(f"{folder}: is a symlink, not a folder this run wrote; remove it yourself, then rerun "
                           f"with --resume")
    root = folder.resolve()
    ours = set(_journal_entries(folder)) | set(_shard_json_entries(folder))
    names = ours | {rel + ".tmp" for rel in ours} | {JOURNAL, SHARD_META}
    for rel in sorted(names):
        target = folder / rel
        if not target.is_file() or target.is_symlink() or not target.resolve().is_relative_to(root):
            continue
        try:
            target.unlink()
        except OSError as exc:
            raise DatasetError(f"{target}: cannot delete ({exc.strerror})") from exc
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir() and not p.is_symlink()),
                      key=lambda p: len(p.parts), reverse=True):
        if not any(sub.iterdir()):
            sub.rmdir()
    left = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
    if left:
        raise DatasetError(f"{folder}: holds files this dataset's writers did not write ({', '.join(left[:5])}"
                           f"{', ...' if len(left) > 5 else ''}); move them out of the dataset folder, then rerun "
                           f"with --resume")
    folder.rmdir()


def finish_shard(out: Path, plan: ShardPlan, shard: PartialShard, extra: dict[str, Any]) -> dict[str, Any]:
    """Hash the files this shard wrote (its journal), write ``shard.json``, fsync, and rename the partial
    folder into place. Returns the shard's manifest record: the deterministic fields of ``shard.json`` plus
    ``extra`` (e.g. timings, which are kept out of the shard itself so that shards are byte-identical between
    runs). A file in the folder that this shard did not write, or one of its files gone, is a ``DatasetError``."""
    tmp = shard.path
    shard.close()
    wanted = set(shard.files)
    present = {p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if not p.is_dir() or p.is_symlink()}
    foreign = sorted(present - wanted - {JOURNAL})
    missing = sorted(wanted - present)
    if foreign or missing:
        raise DatasetError(f"{tmp}: changed while this run wrote it (files not written by this run: {foreign[:5]}; "
                           f"written but gone: {missing[:5]}); is another process writing into {out}?")
    files = {}
    for rel in sorted(wanted):
        if (tmp / rel).is_symlink():
            raise DatasetError(f"{tmp / rel}: became a symlink while this run wrote it; is another process "
                               f"writing into {out}?")
        files[rel] = file_sha256(tmp / rel)
    record = {"index": plan.index, "name": shard_name(plan.index), "frames": plan.frames,
              "ticks": [plan.tick_start, plan.tick_stop],
              "samples": {k: list(v) for k, v in plan.samples.items()},
              "files": len(files), "checksum": shard_checksum(files)}
    meta = dict(record, file_sha256=files)
    final = out / shard_name(plan.index)
    try:
        with open(tmp / SHARD_META, "w", encoding="utf-8") as fh:
            json.dump(meta, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        (tmp / JOURNAL).unlink()
        if final.exists() or final.is_symlink():
            remove_written(final)
        os.replace(tmp, final)
    except OSError as exc:
        raise DatasetError(f"{tmp}: could not complete the shard ({exc.strerror}); the shards already complete "
                           f"are intact, fix the problem and rerun with --resume") from exc
    return {**record, **extra}


def check_shard(folder: Path, root: Path | None = None) -> tuple[dict[str, Any] | None, list[str]]:
    """Check a complete shard folder against its ``shard.json``: (its record, or ``None`` when the folder is
    unusable, and every problem found). Problems: a missing or unreadable ``shard.json``, files missing, files
    whose SHA-256 differs, files it does not list, symlinks (refused: a dataset holds its own files) and a
    folder outside ``root``. Every file is read in full."""
    problems: list[str] = []
    if folder.is_symlink() or (root is not None and not folder.resolve().is_relative_to(root.resolve())):
        return None, [f"{folder}: is a symlink (a dataset holds its own files); replace it with the real folder"]
    if not folder.is_dir():
        return None, [f"{folder}: missing"]
    meta_path = folder / SHARD_META
    try:
        if meta_path.is_symlink():
            raise ValueError("is a symlink")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        files = meta.pop("file_sha256")
        if not isinstance(files, dict) or not isinstance(meta.get("checksum"), str):
            raise ValueError("no file list or checksum")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return None, [f"{meta_path}: missing or unreadable ({getattr(exc, 'strerror', None) or exc})"]
    present = set()
    for p in folder.rglob("*"):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            problems.append(f"{p}: is a symlink (a dataset holds its own files)")
        elif p.is_file() and rel != SHARD_META:
            present.add(rel)
    for rel in sorted(set(files) - present):
        if not (folder / rel).is_symlink():
            problems.append(f"{folder / rel}: missing")
    for rel in sorted(present - set(files)):
        problems.append(f"{folder / rel}: not listed in {SHARD_META}")
    for rel in sorted(present & set(files)):
        try:
            digest = file_sha256(folder / rel)
        except OSError as exc:
            problems.append(f"{folder / rel}: unreadable ({exc.strerror})")
            continue
        if digest != files[rel]:
            problems.append(f"{folder / rel}: corrupted (SHA-256 differs from {SHARD_META})")
    if shard_checksum(files) != meta["checksum"]:
        problems.append(f"{meta_path}: its checksum does not match its file list")
    return (None if problems else meta), problems


def verify_shard(folder: Path) -> dict[str, Any] | None:
    """The manifest record of a complete shard folder whose files match its ``shard.json``, else ``None``."""
    return check_shard(folder)[0]


def save_npz(path: Path, name: str, array: np.ndarray) -> None:
    """Write one array as a deflate-compressed ``.npz`` (``np.load(path)[name]``), atomically and with fixed zip
    timestamps so that the same array always gives the same bytes (``np.savez_compressed`` stamps the time)."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
    info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    try:
        with atomic_path(path, unique=False, fsync=False) as tmp, zipfile.ZipFile(tmp, "w") as zf:
            zf.writestr(info, buf.getvalue(), compresslevel=6)
    except OSError as exc:
        raise cannot_write(path, "the array", exc) from exc


def float_cell(value: float | np.floating) -> str:
    """A float as a CSV cell that reads back as the same value: 9 significant digits (enough for any float32,
    and for a float64 whose 9 digits read back as itself), else the shortest exact form of the float64
    (``repr``); NaN as ``nan``."""
    x = float(value)
    text = f"{x:.9g}"
    if isinstance(value, np.floating) and value.dtype.itemsize <= 4:
        return text
    return text if x != x or float(text) == x else repr(x)


def write_table(path: Path, columns: dict[str, np.ndarray]) -> None:
    """Write equal-length columns as CSV (header row; floats exact, see :func:`float_cell`; NaN as ``nan``)."""
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
                cells.append(float_cell(v))
            else:
                cells.append(str(v.item() if hasattr(v, "item") else v))
        lines.append(",".join(cells))
    try:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: could not write the table ({exc.strerror or exc}); the shards already "
                           f"complete are intact, fix the problem (free space, inodes, permissions) and rerun with "
                           f"--resume") from exc


def read_table(path: Path) -> dict[str, np.ndarray]:
    """Read a table written by :func:`write_table` into float64 columns (integers stay exact). A malformed
    file (not UTF-8, ragged rows, cells that are not numbers) is a ``DatasetError`` naming it."""
    try:
        text = path.read_text(encoding="utf-8").strip().splitlines()
        if not text:
            raise ValueError("empty file")
        names = text[0].split(",")
        rows = [line.split(",") for line in text[1:]]
        for k, r in enumerate(rows):
            if len(r) != len(names):
                raise ValueError(f"row {k + 2} has {len(r)} cells, the header {len(names)}")
        return {n: np.array([float(r[i]) for r in rows], dtype=np.float64) for i, n in enumerate(names)}
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: unreadable table ({getattr(exc, 'strerror', None) or exc}); run "
                           f"'oceansim-py verify' on the dataset") from exc
