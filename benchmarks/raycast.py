"""Ray-cast throughput per backend (warp, embree) on the built-in scenes and a 1 M-triangle seabed, one thread and
all threads, coherent and incoherent rays.

For each scene: the acceleration-structure build time of each backend (Warp's SAH BVH on CPU, Embree's scene;
median of several builds), then Mrays/s of ``Scene.raycast_into`` into preallocated arrays (kernels warm) for

- ``fan``: coherent rays, a 130 x 20 deg sonar fan from the scene's suggested pose;
- ``random``: incoherent rays, uniformly random directions from points within 1 m of that pose;

with one launch thread and with all of them. The backends are timed interleaved (warp, embree, warp, ...) and the
median of the repeats is kept, so that a neighbour's load on a shared machine hits both alike; ``embree/warp`` is
the ratio of the two medians in the same run; ``per cpu s`` is the one-thread throughput per second of the casting
thread's own CPU time (``time.thread_time``: the time it was descheduled by other load does not count, so it is the
steadiest per-thread figure on a shared machine); ``best 1->all`` is the thread speed-up from the fastest repeat of
each (the least disturbed by other load). ``trav x warp`` (embree rows) is the ceiling: the same rays through Embree's
traversal alone (``EmbreeBackend.traverse_only``: the same ray set-up and ``rtcIntersect8`` calls, no post-pass),
one thread, per CPU second, over warp's per-CPU-second figure; ``post %`` is the share of the embree cast spent
outside that traversal (the post-pass that gives warp's distances, normals, faces and objects bit for bit).
``paired``: the same three figures repeat by repeat (warp's and embree's one-thread casts and the traversal of one
repeat run back to back), then the median: on a machine shared with other load these are the steadier ones. The
all-threads result is compared with the one-thread result bit for bit, and the embree hits with warp's: same
hit/miss, same face except edge ties (``faces!=``), and on the same face the largest distance difference
(``max|dt|``; 0: bit for bit) and whether the normals are the same bits.

    python benchmarks/raycast.py [--rays N] [--repeats K] [--quick] [--scenes tank,pier,...] [--out results.json]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import warp as wp

from bench_common import machine, write_report
from oceansim_py import load_scene
from oceansim_py.poses import quat_to_matrix
from oceansim_py.raycast import make_backend
from oceansim_py.raycast.rtcore import embree_available
from oceansim_py.runtime import cpu_threads, set_cpu_threads
from oceansim_py.scene import Node, RaycastResult, Scene, TriangleMesh, builtin_scene_names

SEABED = "seabed_1M"


def seabed_scene(backend: str, cells: int = 707) -> Scene:
    """A 200 m x 200 m rippled, sloping seabed of ``2 * cells**2`` triangles (999 698 for 707), in 16 tiles,
    with a sensor 7.3 m above it (at x = -60 m, y = 0 the floor is at -22.27 m) looking 20 deg down."""
    nodes = [Node("/Seabed")]
    tile = cells // 4 + 1
    edges = np.linspace(-100.0, 100.0, cells + 1)
    for k, (i0, j0) in enumerate((i, j) for i in range(0, cells, tile) for j in range(0, cells, tile)):
        xs, ys = edges[i0:min(i0 + tile, cells) + 1], edges[j0:min(j0 + tile, cells) + 1]
        x, y = np.meshgrid(xs, ys, indexing="ij")
        z = -20.0 + 0.05 * x + 0.6 * np.sin(0.7 * x) * np.cos(0.5 * y) + 0.2 * np.sin(2.3 * y + 0.4 * x)
        nx, ny = x.shape
        v = np.column_stack([x.ravel(), y.ravel(), z.ravel()])
        a = (np.arange(nx - 1)[:, None] * ny + np.arange(ny - 1)[None, :]).ravel()
        tris = np.concatenate([np.column_stack([a, a + ny, a + ny + 1]), np.column_stack([a, a + ny + 1, a + 1])])
        nodes.append(Node(f"/Seabed/Tile_{k:02d}", mesh=TriangleMesh(v, tris), parent=nodes[0]))
    pitch = np.radians(20.0) / 2  # quaternion of a 20 deg pitch down (positive about +y tilts x down)
    pose = [-60.0, 0.0, -15.0, 0.0, np.sin(pitch), 0.0, np.cos(pitch)]
    return Scene(nodes, source=SEABED, device="cpu", metadata={"suggested_pose": pose},
                 raycast_backend=backend)


def make_rays(scene: Scene, n: int, kind: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rays of ``kind`` ``fan`` or ``random`` (module docstring) as float32 origins and unit directions."""
    rng = np.random.default_rng(seed)
    pose = scene.suggested_pose
    if kind == "fan":
        b = rng.uniform(-np.radians(65), np.radians(65), n)
        e = rng.uniform(-np.radians(10), np.radians(10), n)
        order = np.lexsort((e, b))  # a sonar's ray generator walks the fan beam by beam
        d = np.stack([np.cos(e) * np.cos(b), -np.cos(e) * np.sin(b), np.sin(e)], axis=1)[order]
        d = d @ quat_to_matrix(pose[3:]).T
        o = np.tile(pose[:3], (n, 1))
    else:
        d = rng.normal(size=(n, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        o = pose[:3] + rng.uniform(-1, 1, size=(n, 3))
    return o.astype(np.float32), d.astype(np.float32)


def result_arrays(n: int) -> RaycastResult:
    with wp.ScopedDevice("cpu"):
        return RaycastResult(wp.empty(n, dtype=wp.float32), wp.empty(n, dtype=wp.vec3),
                             wp.empty(n, dtype=wp.int32), wp.empty(n, dtype=wp.int32))


def load(name: str, backend: str) -> Scene:
    return seabed_scene(backend) if name == SEABED else load_scene(name, device="cpu", raycast_backend=backend)


def build_seconds(scene: Scene, repeats: int) -> dict[str, float]:
    g = scene.geometry
    times: dict[str, list[float]] = {"warp": [], "embree": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        wp.Mesh(points=g.points, indices=g.indices, bvh_constructor="sah")
        times["warp"].append(time.perf_counter() - t0)
        if embree_available():
            t0 = time.perf_counter()
            make_backend("embree", g, scene.source).build()
            times["embree"].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items() if v}


def bench_scene(name: str, n: int, repeats: int, backends: list[str]) -> list[dict]:
    scenes = {b: load(name, b) for b in backends}
    first = scenes[backends[0]]
    builds = build_seconds(first, max(1, repeats // 2))
    all_threads = cpu_threads()
    rows = []
    for kind in ("fan", "random"):
        o_np, d_np = make_rays(first, n, kind)
        with wp.ScopedDevice("cpu"):
            o, d = wp.array(o_np, dtype=wp.vec3), wp.array(d_np, dtype=wp.vec3)
            r = wp.array([1000.0], dtype=wp.float32)
        configs = [(b, t) for b in backends for t in sorted({1, all_threads})]
        outs = {c: result_arrays(n) for c in configs}
        samples: dict[tuple[str, int], list[float]] = {c: [] for c in configs}
        cpu: dict[str, list[float]] = {b: [] for b in backends}
        traversal = {"distance": wp.empty(n, dtype=wp.float32, device="cpu"),
                     "prim": wp.empty(n, dtype=wp.int32, device="cpu")}
        traversal_cpu: list[float] = []
        for c in configs:  # warm: compile/load the kernels, build the backend, touch the arrays
            set_cpu_threads(c[1])
            scenes[c[0]].raycast_into(o, d, r, outs[c])
        if "embree" in scenes:
            scenes["embree"].backend.traverse_only(o, d, r, **traversal, threads=1)
        for _ in range(repeats):
            for c in configs:
                set_cpu_threads(c[1])
                t0, c0 = time.perf_counter(), time.thread_time()
                scenes[c[0]].raycast_into(o, d, r, outs[c])
                samples[c].append(time.perf_counter() - t0)
                if c[1] == 1:  # one thread: the calling thread casts, so its CPU time is the cast's
                    cpu[c[0]].append(time.thread_time() - c0)
            if "embree" in scenes:
                c0 = time.thread_time()
                scenes["embree"].backend.traverse_only(o, d, r, **traversal, threads=1)
                traversal_cpu.append(time.thread_time() - c0)
        set_cpu_threads(None)
        ref = outs[(backends[0], 1)].numpy()
        for b in backends:
            one, many = outs[(b, 1)].numpy(), outs[(b, all_threads)].numpy()
            t1, tn = statistics.median(samples[(b, 1)]), statistics.median(samples[(b, all_threads)])
            hit = one["face"] >= 0
            same = hit & (one["face"] == ref["face"])
            dt = np.abs(one["distance"][same].astype(np.float64) - ref["distance"][same])
            rows.append({"scene": name, "triangles": first.num_triangles, "rays": kind, "backend": b, "n_rays": n,
                         "build_s": builds.get(b), "hit_fraction": float(hit.mean()),
                         "mrays_per_s_1_thread": n / t1 / 1e6, "mrays_per_s_all_threads": n / tn / 1e6,
                         "threads": all_threads, "thread_speedup": t1 / tn,
                         "best_mrays_per_s_1_thread": n / min(samples[(b, 1)]) / 1e6,
                         "mrays_per_cpu_s_1_thread": n / statistics.median(cpu[b]) / 1e6,
                         "best_mrays_per_s_all_threads": n / min(samples[(b, all_threads)]) / 1e6,
                         "best_thread_speedup": min(samples[(b, 1)]) / min(samples[(b, all_threads)]),
                         "threaded_equals_single_bitwise": all(one[k].tobytes() == many[k].tobytes() for k in one),
                         "hits_differing_from_" + backends[0]: int((hit != (ref["face"] >= 0)).sum()),
                         "faces_differing_from_" + backends[0]: int((hit & (one["face"] != ref["face"])).sum()),
                         "max_abs_distance_difference_same_face_m": float(dt.max(initial=0.0)),
                         "normals_bitwise_same_face": bool(np.array_equal(one["normal"][same], ref["normal"][same]))})
        base = rows[-len(backends)]
        for row in rows[-len(backends):]:
            row["ratio_1_thread"] = row["mrays_per_s_1_thread"] / base["mrays_per_s_1_thread"]
            row["ratio_all_threads"] = row["mrays_per_s_all_threads"] / base["mrays_per_s_all_threads"]
            row["ratio_cpu_1_thread"] = row["mrays_per_cpu_s_1_thread"] / base["mrays_per_cpu_s_1_thread"]
            # the same ratio repeat by repeat (each backend's cast of that repeat, back to back), then the median: a
            # neighbour's load that slows one repeat slows both of its casts alike
            row["ratio_cpu_1_thread_paired"] = statistics.median(
                w / e for w, e in zip(cpu[base["backend"]], cpu[row["backend"]]))
            if row["backend"] == "embree":
                row["traversal_mrays_per_cpu_s_1_thread"] = n / statistics.median(traversal_cpu) / 1e6
                row["traversal_ratio_cpu_1_thread"] = (row["traversal_mrays_per_cpu_s_1_thread"]
                                                       / base["mrays_per_cpu_s_1_thread"])
                row["post_pass_share"] = 1.0 - (row["mrays_per_cpu_s_1_thread"]
                                                / row["traversal_mrays_per_cpu_s_1_thread"])
                row["traversal_ratio_cpu_1_thread_paired"] = statistics.median(
                    w / t for w, t in zip(cpu[base["backend"]], traversal_cpu))
                row["post_pass_share_paired"] = statistics.median(
                    1.0 - t / e for t, e in zip(traversal_cpu, cpu[row["backend"]]))
    return rows


def bench_animation(repeats: int) -> dict:
    """``Scene.set_time`` on the pier with four animated 20 480-triangle spheres beside it: Warp moves their
    vertices and refits its BVH (always done: the sensors cast on it); the embree backend then sets the four
    instance transforms and recommits its top level (``embree_update_ms``)."""
    import trimesh

    from oceansim_py.scene.animation import TransformTrack

    pier = load_scene("pier", device="cpu", raycast_backend="warp")
    ball = trimesh.creation.icosphere(subdivisions=5)
    keys = np.tile(np.eye(4), (2, 1, 1))
    keys[1, :3, 3] = [5.0, 0.0, 0.0]
    nodes = [Node(n.path, transform=n.transform, mesh=n.mesh, material=n.material, label=n.label)
             for n in pier.nodes]
    nodes += [Node(f"/Rov{k}", mesh=TriangleMesh(ball.vertices, ball.faces), track=TransformTrack([0.0, 10.0], keys))
              for k in range(4)]
    scene = Scene(nodes, device="cpu", raycast_backend="embree" if embree_available() else "warp")
    row = {"triangles": scene.num_triangles, "animated_nodes": 4}
    if scene.raycast_backend == "embree":
        scene.backend.build()
    set_time, update = [], []
    for k in range(4 * repeats):
        t0 = time.perf_counter()
        scene.set_time(0.25 * k)
        set_time.append(time.perf_counter() - t0)
        if scene.raycast_backend == "embree":
            t0 = time.perf_counter()
            scene.backend.update()
            update.append(time.perf_counter() - t0)
    row["set_time_ms"] = 1e3 * statistics.median(set_time)
    if update:
        row["embree_update_ms"] = 1e3 * statistics.median(update)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rays", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="100k rays, 3 repeats")
    ap.add_argument("--scenes", default=",".join([*builtin_scene_names(), SEABED]))
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "raycast.json"))
    args = ap.parse_args()
    n, repeats = (100_000, 3) if args.quick else (args.rays, args.repeats)
    backends = ["warp", "embree"] if embree_available() else ["warp"]
    if len(backends) == 1:
        print("embree backend not installed (pip install 'oceansim_py[embree]'): warp only")
    rows = [row for name in args.scenes.split(",") for row in bench_scene(name, n, repeats, backends)]
    print(f"{'scene':10s} {'triangles':>9s} {'rays':6s} {'backend':7s} {'build ms':>8s} {'hit %':>6s} "
          f"{'Mrays/s 1 thr':>13s} {'x warp':>6s} {'per cpu s':>9s} {'x warp':>6s} {'Mrays/s all':>11s} "
          f"{'x warp':>6s} {'thr':>3s} {'1->all':>6s} {'best':>5s} {'bitwise':>7s} {'faces!=':>7s} {'max|dt| m':>9s} "
          f"{'trav x warp':>11s} {'post %':>6s} {'paired: x warp':>14s} {'trav':>5s} {'post %':>6s}")
    for r in rows:
        build = f"{1e3 * r['build_s']:8.1f}" if r["build_s"] is not None else "       -"
        print(f"{r['scene']:10s} {r['triangles']:9d} {r['rays']:6s} {r['backend']:7s} {build} "
              f"{100 * r['hit_fraction']:6.1f} {r['mrays_per_s_1_thread']:13.2f} {r['ratio_1_thread']:6.2f} "
              f"{r['mrays_per_cpu_s_1_thread']:9.2f} {r['ratio_cpu_1_thread']:6.2f} "
              f"{r['mrays_per_s_all_threads']:11.2f} {r['ratio_all_threads']:6.2f} {r['threads']:3d} "
              f"{r['thread_speedup']:6.2f} {r['best_thread_speedup']:5.2f} "
              f"{str(r['threaded_equals_single_bitwise']):>7s} "
              f"{r['faces_differing_from_warp']:7d} {r['max_abs_distance_difference_same_face_m']:9.1e} "
              + (f"{r['traversal_ratio_cpu_1_thread']:11.2f} {100 * r['post_pass_share']:6.1f}"
                 if "traversal_ratio_cpu_1_thread" in r else f"{'-':>11s} {'-':>6s}")
              + f" {r['ratio_cpu_1_thread_paired']:14.2f} "
              + (f"{r['traversal_ratio_cpu_1_thread_paired']:5.2f} {100 * r['post_pass_share_paired']:6.1f}"
                 if "traversal_ratio_cpu_1_thread_paired" in r else f"{'-':>5s} {'-':>6s}"))
    anim = bench_animation(repeats)
    print(f"set_time, pier + 4 animated spheres ({anim['triangles']} triangles): {anim['set_time_ms']:.2f} ms, of "
          f"which the embree update {anim.get('embree_update_ms', float('nan')):.3f} ms")
    write_report(args.out, {"benchmark": "raycast", "device": "cpu", "machine": machine(), "rows": rows,
                            "animation": anim})


if __name__ == "__main__":
    main()
