"""End-to-end dataset generation against render-only time: the I/O and orchestration overhead.

For each rig: one warm-up run (kernel compile, imports) into a scratch folder; then, in the same process,
``render``: every shard's batches rendered through the sensors with nothing written (the render-only time of
the same frames), and ``wall``: the whole ``generate`` call into a fresh folder (scene load, BVH, sensors,
rendering, PNG/npy writing on the writer thread, checksums, manifest). Overhead = wall / render - 1.
Target: <= 15 % on the default rig.

    python benchmarks/generate.py [--rig pier_survey ...] [--frames N] [--quick] [--out results.json]
"""

from __future__ import annotations

import argparse
import platform
import shutil
import tempfile
import time
from pathlib import Path

from bench_common import add_rig_arguments, frames_and_repeats, write_report
from oceansim_py.dataset.generate import generate
from oceansim_py.dataset.rig import load_rig
from oceansim_py.dataset.shards import plan_shards
from oceansim_py.dataset.worker import ShardWorker
from oceansim_py.runtime import cpu_threads, resolve_device


def run_rig(name: str, frames: int | None, repeats: int) -> dict:
    rig = load_rig(name).with_overrides(frames=frames)
    scratch = Path(tempfile.mkdtemp(prefix="oceansim-bench-"))
    try:
        generate(rig.with_overrides(frames=min(rig.frames, rig.shard_size)), scratch / "warmup", progress=False)
        worker = ShardWorker(rig, scratch / "render-only")
        plans = plan_shards(rig.frames, rig.shard_size, rig.tick_rate_hz, {s.name: s.rate_hz for s in rig.sensors})
        best = None
        for r in range(repeats):
            t0 = time.perf_counter()
            for plan in plans:
                for _ in worker.render_batches(plan):
                    pass
            render = time.perf_counter() - t0
            out = scratch / f"run{r}"
            t0 = time.perf_counter()
            manifest = generate(rig, out, progress=False)
            wall = time.perf_counter() - t0
            row = {"rig": rig.name, "scene": rig.scene, "frames": rig.frames, "shards": len(manifest["shards"]),
                   "sensors": len(rig.sensors), "wall_s": wall, "render_s": render,
                   "fps_end_to_end": rig.frames / wall, "fps_render_only": rig.frames / render,
                   "overhead_pct": 100.0 * (wall / render - 1.0),
                   "bytes_written": sum(p.stat().st_size for p in out.rglob("*") if p.is_file())}
            if best is None or row["wall_s"] < best["wall_s"]:
                best = row
        return best  # type: ignore[return-value]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rig_arguments(ap, "generate", several=True, repeats=2, timed="timed runs per rig")
    args = ap.parse_args()
    frames, repeats = frames_and_repeats(args)
    rows = [run_rig(name, frames, repeats) for name in args.rig]
    print(f"{'rig':16s} {'frames':>6s} {'wall s':>8s} {'render s':>9s} {'e2e fps':>8s} {'render fps':>10s} "
          f"{'overhead':>9s} {'MB':>7s}")
    for r in rows:
        print(f"{r['rig']:16s} {r['frames']:6d} {r['wall_s']:8.2f} {r['render_s']:9.2f} {r['fps_end_to_end']:8.2f} "
              f"{r['fps_render_only']:10.2f} {r['overhead_pct']:8.1f}% {r['bytes_written'] / 1e6:7.1f}")
    result = {"benchmark": "generate", "device": str(resolve_device(None)), "cpu_threads": cpu_threads(),
              "machine": platform.machine(), "python": platform.python_version(), "target_overhead_pct": 15.0,
              "rows": rows}
    write_report(args.out, result)


if __name__ == "__main__":
    main()
