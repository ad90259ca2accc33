"""Full check of a dataset folder: every shard the manifest lists, every file of it, against its SHA-256.

Used by ``oceansim-py verify DIR`` and ``load(DIR, verify=True)``. Reports every problem found (not the first):
a shard folder missing, a file missing or corrupted, a file no ``shard.json`` lists, a symlink (a dataset holds
its own files; resume and the reader refuse them too), shards whose checksum differs from the manifest's, and
manifest records whose frames, ticks or sample spans differ from their shard's ``shard.json`` (the reader looks
samples up by the manifest's spans), and what a killed writer left in the dataset folder that no manifest lists: a
manifest temporary (``.manifest.json.*.tmp``), a partial shard (``.shard_NNNNN.partial``) or a shard folder the
manifest does not list. Other files a user put beside the dataset are not its business and are not reported.
"""

from __future__ import annotations

from pathlib import Path

from oceansim_py.dataset.manifest import require_manifest, stale_temporaries, validate_manifest
from oceansim_py.dataset.shards import SHARD_META, SHARD_RECORD_KEYS, check_shard, partial_name, shard_name


def verify_dataset(path: str | Path) -> list[str]:
    """Every problem of the dataset at ``path`` (empty when every file matches its checksum)."""
    root = Path(path)
    manifest = require_manifest(root)
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
    return problems + _leftovers(root, {rec["name"] for rec in manifest["shards"]})


def _leftovers(root: Path, listed: set[str]) -> list[str]:
    """What a killed writer left in ``root`` outside the dataset: manifest temporaries, partial shards, and shard
    folders the manifest does not list (``--resume`` removes the first two and redoes or keeps the third)."""
    found = [f"{tmp}: a manifest temporary left by a killed run (not part of the dataset); rerun generate with "
             f"--resume, or delete it" for tmp in stale_temporaries(root)]
    for p in sorted(root.iterdir()):
        index = p.name.removeprefix(".").removeprefix("shard_").removesuffix(".partial")
        if not index.isdigit() or p.name not in (shard_name(int(index)), partial_name(int(index))):
            continue
        if p.name.endswith(".partial"):
            found.append(f"{p}: a partial shard left by a killed run (not part of the dataset); rerun generate "
                         f"with --resume")
        elif p.name not in listed:
            found.append(f"{p}: a shard folder manifest.json does not list (not part of the dataset); rerun "
                         f"generate with --resume")
    return found
