"""Bag export throughput: messages/s and MB/s of ``export_dataset`` for the default dataset, in both formats.

The dataset is the default rig of ``oceansim-py generate`` (``pier_survey``; ``--frames`` shortens it), generated
once into a scratch folder (not timed). Each format is exported ``--repeats`` times into fresh targets and the
fastest run is reported: messages/s = messages written / wall s; MB/s (out) = bag bytes / wall s; MB/s (in) =
dataset bytes / wall s. The wall time includes reading the dataset (npy/PNG decode), CDR serialisation and
writing (rosbag2: sqlite3 uncompressed; MCAP: zstd chunks).

    python benchmarks/export.py [--rig pier_survey] [--frames N] [--repeats K] [--quick] [--out results.json]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from bench_common import add_rig_arguments, frames_and_repeats, machine, write_report

from oceansim_py.dataset.generate import generate
from oceansim_py.dataset.rig import load_rig
from oceansim_py.export import export_dataset


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def bag_rows(rig_name: str, frames: int | None, repeats: int, scratch: Path) -> list[dict[str, Any]]:
    """One row per format: the fastest of ``repeats`` exports of the rig's dataset."""
    rig = load_rig(rig_name).with_overrides(frames=frames)
    dataset = scratch / "dataset"
    generate(rig, dataset, progress=False)
    dataset_bytes = _size(dataset)
    rows = []
    for fmt in ("rosbag2", "mcap"):
        best = None
        for r in range(repeats):
            target = scratch / f"{fmt}_{r}" / ("bag" if fmt == "rosbag2" else "run.mcap")
            with warnings.catch_warnings():
                warnings.simplefilter("error")        # a skipped stream would make the figures meaningless
                t0 = time.perf_counter()
                summary = export_dataset(dataset, target, format=fmt)
                wall = time.perf_counter() - t0
            row = {"rig": rig.name, "frames": rig.frames, "format": fmt, "messages": summary.total_messages,
                   "topics": len(summary.messages), "wall_s": wall, "messages_per_s": summary.total_messages / wall,
                   "bag_bytes": summary.bytes, "dataset_bytes": dataset_bytes,
                   "mb_per_s_out": summary.bytes / 1e6 / wall, "mb_per_s_in": dataset_bytes / 1e6 / wall}
            if best is None or wall < best["wall_s"]:
                best = row
        rows.append(best)
    return rows


# ----------------------------------------------------------------------------------------------------------
# Bathymetry hook (issue 14, item 3): the time to turn a 4096 x 4096 grid into a scene is added here by the
# bathymetry work. It returns rows {"grid": ..., "cells": ..., "wall_s": ..., ...} for the report's
# "bathymetry" section; until then there is no bathymetry importer to time and it returns no rows.
def bathymetry_rows(args: argparse.Namespace, scratch: Path) -> list[dict[str, Any]]:
    return []
# ----------------------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rig_arguments(ap, "export", several=False, repeats=3, timed="timed exports per format")
    args = ap.parse_args()
    frames, repeats = frames_and_repeats(args)
    scratch = Path(tempfile.mkdtemp(prefix="oceansim-bench-export-"))
    try:
        rows = bag_rows(args.rig, frames, repeats, scratch)
        bathy = bathymetry_rows(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{'rig':14s} {'frames':>6s} {'format':8s} {'messages':>8s} {'wall s':>7s} {'msg/s':>8s} {'bag MB':>7s} "
          f"{'MB/s out':>8s} {'MB/s in':>8s}")
    for r in rows:
        print(f"{r['rig']:14s} {r['frames']:6d} {r['format']:8s} {r['messages']:8d} {r['wall_s']:7.2f} "
              f"{r['messages_per_s']:8.0f} {r['bag_bytes'] / 1e6:7.1f} {r['mb_per_s_out']:8.1f} "
              f"{r['mb_per_s_in']:8.1f}")
    for r in bathy:
        print("bathymetry:", ", ".join(f"{k}={v}" for k, v in r.items()))
    write_report(args.out, {"benchmark": "export", "machine": machine(), "rows": rows, "bathymetry": bathy})


if __name__ == "__main__":
    main()
