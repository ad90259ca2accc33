"""Underwater camera throughput: 640x480 frames/s on each built-in scene and ray-cast backend, batch 1 and 8, one
thread and all.

Poses: the scene's suggested pose, panned in yaw by -14..+14 degrees across the batch (2 degrees per frame,
batch 1 uses the suggested pose). One frame is the whole ``UnderwaterCamera.render`` into reused result
arrays (``out=``): pose upload, the primary rays cast through the scene's ray-cast backend, their shadow rays cast
as a second batch, the shading, synchronised; the host copy is not included. Backends (``--backends``; default on
CPU: warp and, when installed, embree; on CUDA: warp): the scene is loaded once per backend (its structure built
before timing) and the backends of one (config, batch, threads) are timed one after the other;
``embree_over_warp`` is the frames/s ratio of that pair.
Default camera config (jerlov_IB water, sun with shadow rays, no vehicle lights) and a second config with two
vehicle lights (``coastal_with_lights`` preset: two more shadow rays per pixel).

Then DVL samples/s in a batch of 10,000 on the same scenes (the rows of ``dvl_throughput.py``).

Usage: python benchmarks/camera_throughput.py [--quick] [--out PATH] [--device DEV] [--scenes ...]
       [--backends warp,embree] [--no-dvl]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import dvl_throughput
from bench_common import (add_common_arguments, add_row, config_for, each_thread_count, first_call, machine,
                          scene_columns, sensor_for, table_header, time_call, write_report)
import oceansim_py as osp
from oceansim_py.poses import compose_poses, pose_from_euler
from oceansim_py.raycast.rtcore import embree_available
from oceansim_py.runtime import cpu_threads

WIDTH, HEIGHT = 640, 480
BATCHES = (1, 8)
DVL_BATCH = 10_000



def batch_poses(scene: Any, batch: int) -> np.ndarray:
    base = scene.suggested_pose
    if base is None:
        lo, hi = scene.bounds
        base = pose_from_euler(float(lo[0]) - 2.0, 0.5 * float(lo[1] + hi[1]), 0.5 * float(lo[2] + hi[2]))
    yaws = [0.0] if batch == 1 else np.linspace(-14.0, 14.0, batch)
    return np.stack([compose_poses(base, pose_from_euler(0, 0, 0, 0, 0, float(y))) for y in yaws])


#: benchmark config name -> camera preset (None: the defaults), all at WIDTH x HEIGHT
CONFIGS = {"default": None, "two_lights": "coastal_with_lights"}


def configs() -> dict[str, Any]:
    return {name: config_for("camera", preset, width=WIDTH, height=HEIGHT) for name, preset in CONFIGS.items()}


def bench(scene_name: str, device: Any, thread_counts: list[int], min_seconds: float,
          max_repeats: int, backends: list[str] | None = None) -> list[dict[str, Any]]:
    scenes = {b: osp.load_scene(scene_name, device=device, raycast_backend=b) for b in backends or ["auto"]}
    for scene in scenes.values():
        if hasattr(scene.backend, "build"):
            scene.backend.build()   # the Embree scene (else casts below 4096 rays would go to Warp)
    rows = []
    for cfg_name, preset in CONFIGS.items():
        for batch in BATCHES:
            runs = {}
            for b, scene in scenes.items():
                _, cam = sensor_for("camera", scene.device, preset, width=WIDTH, height=HEIGHT)
                poses = batch_poses(scene, batch)
                out, first = first_call(lambda: cam.render(scene, poses), scene.device)
                runs[b] = (scene, cam, poses, out, first, float((out.label.numpy() >= 0).mean()))
            for _ in each_thread_count(thread_counts, next(iter(scenes.values())).device):
                fps = {}
                for b, (scene, cam, poses, out, first, hit) in runs.items():
                    seconds = time_call(lambda: cam.render(scene, poses, out=out), scene.device, min_seconds,
                                        max_repeats)
                    fps[b] = batch / seconds
                    row = {**scene_columns(scene_name, scene), "backend": scene.raycast_backend, "config": cfg_name,
                           "batch": batch, "width": WIDTH, "height": HEIGHT, "seconds_per_batch": seconds,
                           "frames_per_s": batch / seconds, "megapixels_per_s": batch * WIDTH * HEIGHT / seconds / 1e6,
                           "hit_fraction": hit, "first_call_seconds": first}
                    row["embree_over_warp"] = fps["embree"] / fps["warp"] if b == "embree" and "warp" in fps else None
                    add_row(rows, row, COLUMNS)
    return rows


#: the printed table: (title, row key, format)
COLUMNS = [("scene", "scene", "8s"), ("triangles", "triangles", "9d"), ("config", "config", "10s"),
           ("device", "device", "7s"), ("backend", "backend", "7s"), ("threads", "threads", ">7"),
           ("batch", "batch", "5d"),
           ("s/batch", "seconds_per_batch", "9.4f"), ("frames/s", "frames_per_s", "9.2f"),
           ("Mpix/s", "megapixels_per_s", "7.2f"), ("hit", "hit_fraction", "5.2f"),
           ("emb/warp", "embree_over_warp", "8.2f")]
HEADER = table_header(COLUMNS)



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser, "camera_throughput")
    parser.add_argument("--backends", default=None,
                        help="comma-separated ray-cast backends (default on CPU: warp, and embree when installed; "
                             "on CUDA: warp)")
    parser.add_argument("--no-dvl", action="store_true", help="skip the DVL rows")
    args = parser.parse_args(argv)
    device = osp.resolve_device(args.device)
    backends = (args.backends.split(",") if args.backends
                else ["warp", "embree"] if device.is_cpu and embree_available() else ["warp"])
    min_seconds, max_repeats = (0.3, 3) if args.quick else (2.0, 30)
    thread_counts = sorted({1, cpu_threads()})
    print(HEADER)
    rows: list[dict[str, Any]] = []
    scenes = args.scenes or osp.builtin_scene_names()
    for name in scenes:
        rows += bench(name, args.device, thread_counts, min_seconds, max_repeats, backends)
    # The DVL in a batch of 10,000 samples (benchmarks/dvl_throughput.py measures it alone, with more options).
    print()
    print(dvl_throughput.HEADER)
    dvl_rows: list[dict[str, Any]] = []
    for name in [] if args.no_dvl else scenes:
        dvl_rows += dvl_throughput.bench(name, args.device, DVL_BATCH, thread_counts, min_seconds, max_repeats)
    write_report(args.out, {
        "benchmark": "camera_throughput", "quick": args.quick, "width": WIDTH, "height": HEIGHT, "backends": backends,
        "configs": {name: cfg.to_dict() for name, cfg in configs().items()}, "machine": machine(),
        "rows": rows, "dvl_batch": DVL_BATCH, "dvl_rows": dvl_rows,
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
