"""BVH build time and ray-cast throughput on the built-in scenes, one thread and all threads.

For each scene: the BVH build time (SAH on CPU; median of several builds of the scene's world triangles), and
Mrays/s for 1M rays (half in a 130 x 20 deg fan from the suggested pose, half in random directions from points
around it) cast with ``Scene.raycast_into`` into preallocated arrays, kernels warm, median of repeats. The
threaded result is compared with the single-threaded one bit for bit.

    python benchmarks/raycast.py [--rays N] [--repeats K] [--quick] [--out results.json]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import warp as wp

from bench_common import write_report
from oceansim_py import load_scene
from oceansim_py.poses import quat_to_matrix
from oceansim_py.runtime import cpu_threads, set_cpu_threads
from oceansim_py.scene import RaycastResult, builtin_scene_names


def make_rays(scene, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    pose = scene.suggested_pose
    rot = quat_to_matrix(pose[3:])
    half = n // 2
    b = rng.uniform(-np.radians(65), np.radians(65), half)
    e = rng.uniform(-np.radians(10), np.radians(10), half)
    fan = np.stack([np.cos(e) * np.cos(b), -np.cos(e) * np.sin(b), np.sin(e)], axis=1) @ rot.T
    rand = rng.normal(size=(n - half, 3))
    rand /= np.linalg.norm(rand, axis=1, keepdims=True)
    origins = np.concatenate([np.tile(pose[:3], (half, 1)), pose[:3] + rng.uniform(-1, 1, size=(n - half, 3))])
    return origins.astype(np.float32), np.concatenate([fan, rand]).astype(np.float32)


def time_cast(scene, o, d, r, out, threads: int, repeats: int) -> float:
    set_cpu_threads(threads)
    scene.raycast_into(o, d, r, out)  # warm: compile/load the kernel, touch the arrays
    wp.synchronize_device(scene.device)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        scene.raycast_into(o, d, r, out)
        wp.synchronize_device(scene.device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_scene(name: str, n: int, repeats: int) -> dict:
    set_cpu_threads(None)
    scene = load_scene(name)
    g = scene.geometry
    builds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        wp.Mesh(points=g.points, indices=g.indices, bvh_constructor="sah" if scene.device.is_cpu else "lbvh")
        wp.synchronize_device(scene.device)
        builds.append(time.perf_counter() - t0)
    o_np, d_np = make_rays(scene, n)
    with wp.ScopedDevice(scene.device):
        o = wp.array(o_np, dtype=wp.vec3)
        d = wp.array(d_np, dtype=wp.vec3)
        r = wp.array([1000.0], dtype=wp.float32)

        def result() -> RaycastResult:
            return RaycastResult(wp.empty(n, dtype=wp.float32), wp.empty(n, dtype=wp.vec3),
                                 wp.empty(n, dtype=wp.int32), wp.empty(n, dtype=wp.int32))

        one, many = result(), result()
    all_threads = cpu_threads()
    t1 = time_cast(scene, o, d, r, one, 1, repeats)
    tn = time_cast(scene, o, d, r, many, all_threads, repeats)
    set_cpu_threads(None)
    identical = all(a.numpy().tobytes() == b.numpy().tobytes()
                    for a, b in zip((one.distance, one.normal, one.face, one.obj),
                                    (many.distance, many.normal, many.face, many.obj)))
    return {"scene": name, "triangles": scene.num_triangles, "bvh_build_s": statistics.median(builds),
            "rays": n, "hit_fraction": float((one.face.numpy() >= 0).mean()),
            "mrays_per_s_1_thread": n / t1 / 1e6, "mrays_per_s_all_threads": n / tn / 1e6,
            "threads": all_threads, "speedup": t1 / tn, "threaded_equals_single_bitwise": identical}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rays", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="100k rays, 2 repeats")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "raycast.json"))
    args = ap.parse_args()
    n, repeats = (100_000, 2) if args.quick else (args.rays, args.repeats)
    rows = [bench_scene(name, n, repeats) for name in builtin_scene_names()]
    print(f"{'scene':8s} {'triangles':>9s} {'BVH ms':>8s} {'hit %':>6s} {'Mrays/s 1 thr':>14s} "
          f"{'Mrays/s all':>12s} {'threads':>7s} {'speed-up':>8s} {'bitwise':>8s}")
    for r in rows:
        print(f"{r['scene']:8s} {r['triangles']:9d} {1e3 * r['bvh_build_s']:8.2f} {100 * r['hit_fraction']:6.1f} "
              f"{r['mrays_per_s_1_thread']:14.2f} {r['mrays_per_s_all_threads']:12.2f} {r['threads']:7d} "
              f"{r['speedup']:8.2f} {str(r['threaded_equals_single_bitwise']):>8s}")
    result = {"benchmark": "raycast", "device": str(load_scene('tank').device), "machine": platform.machine(),
              "python": platform.python_version(), "warp": wp.config.version, "rows": rows}
    write_report(args.out, result)


if __name__ == "__main__":
    main()
