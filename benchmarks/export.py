"""Bag export throughput: messages/s and MB/s of ``export_dataset`` for the default dataset, in both formats.

The dataset is the default rig of ``oceansim-py generate`` (``pier_survey``; ``--frames`` shortens it), generated
once into a scratch folder (not timed). Each format is exported ``--repeats`` times into fresh targets and the
fastest run is reported: messages/s = messages written / wall s; MB/s (out) = bag bytes / wall s; MB/s (in) =
dataset bytes / wall s. The wall time includes reading the dataset (npy/PNG decode), CDR serialisation and
writing (rosbag2: sqlite3 uncompressed; MCAP: zstd chunks).

The same run times a 4096 x 4096 bathymetry GeoTIFF into a scene (read, tiled meshes, BVH; peak RSS) and into a
.usda, each phase in a fresh process (benchmarks/bathymetry.py's phases; `--bathymetry-size 0` skips it).

    python benchmarks/export.py [--rig pier_survey] [--frames N] [--repeats K] [--quick] [--bathymetry-size N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
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


def bathymetry_rows(size: int, scratch: Path) -> list[dict[str, Any]]:
    """Time turning a ``size`` x ``size`` GeoTIFF into a scene (read, tile meshes, BVH) and into a .usda, each in
    a fresh process (peak RSS per phase), with benchmarks/bathymetry.py's phases; no rows for ``size`` 0."""
    if size <= 0:
        return []
    import bathymetry

    grid = scratch / f"grid_{size}.tif"
    bathymetry.write_grid(grid, size)
    row: dict[str, Any] = {"grid": f"{size}x{size}"}
    for phase in ("scene", "usda"):
        cmd = [sys.executable, bathymetry.__file__, "--phase", phase, "--grid", str(grid), "--device", "cpu",
               "--usda", str(scratch / "seafloor.usda")]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        row[phase] = json.loads(done.stdout.strip().splitlines()[-1])
    return [row]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rig_arguments(ap, "export", several=False, repeats=3, timed="timed exports per format")
    ap.add_argument("--bathymetry-size", type=int, default=None,
                    help="also time a N x N bathymetry grid into a scene (default 4096, 512 with --quick; 0: skip)")
    args = ap.parse_args()
    frames, repeats = frames_and_repeats(args)
    if args.bathymetry_size is None:
        args.bathymetry_size = 512 if args.quick else 4096
    scratch = Path(tempfile.mkdtemp(prefix="oceansim-bench-export-"))
    try:
        rows = bag_rows(args.rig, frames, repeats, scratch)
        bathy = bathymetry_rows(args.bathymetry_size, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{'rig':14s} {'frames':>6s} {'format':8s} {'messages':>8s} {'wall s':>7s} {'msg/s':>8s} {'bag MB':>7s} "
          f"{'MB/s out':>8s} {'MB/s in':>8s}")
    for r in rows:
        print(f"{r['rig']:14s} {r['frames']:6d} {r['format']:8s} {r['messages']:8d} {r['wall_s']:7.2f} "
              f"{r['messages_per_s']:8.0f} {r['bag_bytes'] / 1e6:7.1f} {r['mb_per_s_out']:8.1f} "
              f"{r['mb_per_s_in']:8.1f}")
    for r in bathy:
        sc, us = r["scene"], r["usda"]
        print(f"\nbathymetry {r['grid']} GeoTIFF -> scene: read {sc['read_s']:.2f} s, mesh {sc['mesh_s']:.2f} s, "
              f"BVH {sc['bvh_s']:.2f} s, total {sc['total_s']:.2f} s ({sc['triangles']:,} triangles, peak RSS "
              f"{sc['peak_rss_gib']:.2f} GiB); -> .usda {us['total_s']:.2f} s ({us['file_gib']:.2f} GiB)")
    write_report(args.out, {"benchmark": "export", "machine": machine(), "rows": rows, "bathymetry": bathy})


if __name__ == "__main__":
    main()
