"""DVL throughput: samples/s for a batch of 10,000 samples on each built-in scene, one thread and all threads.

Each scene gets a terrain-following lawnmower survey over its bounds (2 m above the first surface below the
sea surface, legs a sixth of the smaller extent apart, inset by one spacing), evaluated at
10,000 evenly spaced times (poses and velocities from the Trajectory). One sample is the whole
``DVL.render``: pose and velocity upload, the 4-beam ray-cast launch, the least-squares launch, synchronised
(the host copy of the result is not included). Default DVL config (22.5°, "X", noise on). Two inputs:
``arrays`` (poses and sensor-frame velocities already computed: the engine's throughput) and ``trajectory``
(the Trajectory itself, so each call also evaluates its poses and body-frame velocities on the host).

Usage: python benchmarks/dvl_throughput.py [--quick] [--out PATH] [--batch N] [--device DEV]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import warp as wp

from bench_common import machine, time_call, write_report
import oceansim_py as osp
from oceansim_py.runtime import cpu_threads, set_cpu_threads
from oceansim_py.sensors.dvl import DVL, DVLConfig
from oceansim_py.trajectory import Trajectory



def survey(scene: Any, batch: int) -> Trajectory:
    lo, hi = scene.bounds
    spacing = max(0.5, float(min(hi[0] - lo[0], hi[1] - lo[1])) / 6.0)
    traj = Trajectory.lawnmower(scene, altitude=2.0, spacing=spacing, speed=1.0, margin=spacing, rate_hz=2.0,
                                follow_terrain=True)
    return traj.interpolate(np.linspace(traj.start_time, traj.end_time, batch))


def bench(scene_name: str, device: Any, batch: int, thread_counts: list[int], min_seconds: float,
          max_repeats: int) -> list[dict[str, Any]]:
    scene = osp.load_scene(scene_name, device=device)
    traj = survey(scene, batch)
    dvl = DVL(DVLConfig(), device=scene.device)
    first = time.perf_counter()
    result = dvl.render(scene, traj)  # compiles on first use
    wp.synchronize_device(scene.device)
    first = time.perf_counter() - first
    valid = float(result.numpy()["valid"].mean())
    poses = traj.poses.astype(np.float32)
    velocities = traj.velocity(frame="body").astype(np.float32)
    calls = {"arrays": lambda: dvl.render(scene, poses, velocities, velocity_frame="sensor"),
             "trajectory": lambda: dvl.render(scene, traj)}
    rows = []
    for threads in thread_counts if scene.device.is_cpu else [None]:
        set_cpu_threads(threads)
        for source, call in calls.items():
            seconds = time_call(call, scene.device, min_seconds, max_repeats)
            row = {"scene": scene_name, "triangles": scene.num_triangles, "device": str(scene.device),
                   "threads": cpu_threads() if scene.device.is_cpu else None, "input": source, "batch": batch,
                   "seconds_per_batch": seconds, "samples_per_s": batch / seconds, "valid_fraction": valid,
                   "first_call_seconds": first}
            rows.append(row)
            print(format_row(row), flush=True)
    set_cpu_threads(None)
    return rows


HEADER = f"{'scene':8s} {'triangles':>9s} {'device':7s} {'threads':>7s} {'input':10s} {'batch':>6s} " \
         f"{'s/batch':>9s} {'samples/s':>11s} {'valid':>6s}"


def format_row(r: dict[str, Any]) -> str:
    threads = "-" if r["threads"] is None else str(r["threads"])
    return (f"{r['scene']:8s} {r['triangles']:9d} {r['device']:7s} {threads:>7s} {r['input']:10s} {r['batch']:6d} "
            f"{r['seconds_per_batch']:9.4f} {r['samples_per_s']:11.0f} {r['valid_fraction']:6.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "dvl_throughput.json"))
    parser.add_argument("--batch", type=int, default=10_000, help="samples per render (default 10000)")
    parser.add_argument("--device", default=None, help="Warp device (default: cuda:0 if present, else cpu)")
    parser.add_argument("--scenes", nargs="*", default=None, help="scenes (default: every built-in scene)")
    args = parser.parse_args(argv)
    min_seconds, max_repeats = (0.3, 3) if args.quick else (2.0, 30)
    all_threads = cpu_threads()
    thread_counts = sorted({1, all_threads})
    print(HEADER)
    rows: list[dict[str, Any]] = []
    for name in args.scenes or osp.builtin_scene_names():
        rows += bench(name, args.device, args.batch, thread_counts, min_seconds, max_repeats)
    write_report(args.out, {
        "benchmark": "dvl_throughput", "quick": args.quick, "batch": args.batch,
        "config": DVLConfig().to_dict(), "machine": machine(), "rows": rows,
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
