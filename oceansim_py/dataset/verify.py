"""Full check of a dataset folder: every shard the manifest lists, every file of it, against its SHA-256.

Used by ``oceansim-py verify DIR`` and ``load(DIR, verify=True)``. Reports every problem found (not the first):
a shard folder missing, a file missing or corrupted, a file no ``shard.json`` lists, a symlink (a dataset holds
its own files; resume and the reader refuse them too), shards whose checksum differs from the manifest's, and
manifest records whose frames, ticks or sample spans differ from their shard's ``shard.json`` (the reader looks
samples up by the manifest's spans).
"""

from __future__ import annotations

from pathlib import Path

from oceansim_py.dataset.manifest import read_manifest, validate_manifest
from oceansim_py.dataset.shards import SHARD_META, SHARD_RECORD_KEYS, check_shard
from oceansim_py.errors import DatasetError


def verify_dataset(path: str | Path) -> list[str]:
    """Every problem of the dataset at ``path`` (empty when every file matches its checksum)."""
    root = Path(path)
    manifest = read_manifest(root)
    if manifest is None:
        raise DatasetError(f"{root}: no manifest.json; not an oceansim_py dataset")
    problems = validate_manifest(manifest)
    if problems:
        return [f"{root / 'manifest.json'}: {p}" for p in problems]
    if manifest["status"] != "complete":
        problems.append(f"{root / 'manifest.json'}: status {manifest['status']!r}: the run did not finish; "
                        f"rerun generate with --resume")
    for rec in manifest["shards"]:
        folder = root / rec["name"]
        meta, shard_problems = check_shard(folder, root)
        problems.extend(shard_problems)
        if meta is not None and meta.get("checksum") != rec["checksum"]:
            problems.append(f"{folder}: its checksum differs from the manifest's")
        elif meta is not None:
            problems.extend(f"{folder}: the manifest's {key!r} {rec.get(key)!r} differs from {SHARD_META}'s "
                            f"{meta.get(key)!r}" for key in SHARD_RECORD_KEYS if meta.get(key) != rec.get(key))
    return problems
