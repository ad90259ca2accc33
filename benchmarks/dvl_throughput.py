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
from typing import Any

import numpy as np

from bench_common import (add_common_arguments, add_row, config_for, each_thread_count, first_call, machine,
                          scene_columns, sensor_for, table_header, time_call, write_report)
import oceansim_py as osp
from oceansim_py.runtime import cpu_threads
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
    _, dvl = sensor_for("dvl", scene.device)
    result, first = first_call(lambda: dvl.render(scene, traj), scene.device)
    valid = float(result.numpy()["valid"].mean())
    poses = traj.poses.astype(np.float32)
    velocities = traj.velocity(frame="body").astype(np.float32)
    calls = {"arrays": lambda: dvl.render(scene, poses, velocities, velocity_frame="sensor"),
             "trajectory": lambda: dvl.render(scene, traj)}
    rows = []
    for _ in each_thread_count(thread_counts, scene.device):
        for source, call in calls.items():
            seconds = time_call(call, scene.device, min_seconds, max_repeats)
            add_row(rows, {**scene_columns(scene_name, scene), "input": source, "batch": batch,
                           "seconds_per_batch": seconds, "samples_per_s": batch / seconds, "valid_fraction": valid,
                           "first_call_seconds": first}, COLUMNS)
    return rows


#: the printed table: (title, row key, format)
COLUMNS = [("scene", "scene", "8s"), ("triangles", "triangles", "9d"), ("device", "device", "7s"),
           ("threads", "threads", ">7"), ("input", "input", "10s"), ("batch", "batch", "6d"),
           ("s/batch", "seconds_per_batch", "9.4f"), ("samples/s", "samples_per_s", "11.0f"),
           ("valid", "valid_fraction", "6.2f")]
HEADER = table_header(COLUMNS)



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser, "dvl_throughput")
    parser.add_argument("--batch", type=int, default=10_000, help="samples per render (default 10000)")
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
        "config": config_for("dvl").to_dict(), "machine": machine(), "rows": rows,
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
