"""Per-frame cost of a moving sea surface: ``Scene.set_time`` on a scene holding only a flat floor and the patch.

One frame is: the patch's vertices evaluated on the device (``gerstner_vertices_kernel``, every vertex summing
every component), the world BVH refitted (``wp.Mesh.refit``), and for the ``embree`` backend the patch's vertex
buffer copied into its Embree geometry and its BVH refitted (refit build quality) with the top level recommitted.
Each is also timed alone. Default sea: SeaStateConfig() (Pierson-Moskowitz 8 m/s, 32 x 16 = 512 components).
Patches: 200 m at 1 m (201^2 vertices) and the issue's 128^2 and 512^2 vertices (1 m spacing).

Usage: python benchmarks/sea_surface.py [--quick] [--out PATH] [--device DEV] [--components N]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from bench_common import add_common_arguments, machine, time_call, write_report
from oceansim_py.raycast import rtcore
from oceansim_py.scene.graph import Node, Scene, TriangleMesh
from oceansim_py.scene.sea_surface import SeaStateConfig

#: (label, size m, resolution m)
PATCHES = [("201^2 (200 m at 1 m)", 200.0, 1.0), ("128^2", 127.0, 1.0), ("512^2", 511.0, 1.0)]


def floor(size: float) -> Node:
    h = size
    return Node("/Floor", mesh=TriangleMesh(np.array([[-h, -h, -30], [h, -h, -30], [h, h, -30], [-h, h, -30.0]]),
                                            np.array([[0, 1, 2], [0, 2, 3]])))


def bench(device: Any, backend: str, label: str, size: float, resolution: float, sea: SeaStateConfig,
          min_seconds: float, max_repeats: int) -> dict[str, Any]:
    scene = Scene([floor(size)], device=device, raycast_backend=backend)
    scene.add_sea_surface(sea, size=size, resolution=resolution, center=(0.0, 0.0))
    if backend == "embree":
        scene.backend.build()
    g = scene.geometry
    (slot,) = g.sea_surfaces
    clock = iter(np.arange(1, 100_000) * 0.1)
    frame = time_call(lambda: scene.set_time(float(next(clock))), scene.device, min_seconds, max_repeats)
    vertices = time_call(lambda: slot.surface.vertices_at(float(next(clock)), out=g.sea_points(slot)),
                         scene.device, min_seconds, max_repeats)
    refit = time_call(g.mesh.refit, scene.device, min_seconds, max_repeats)
    row = {"device": str(scene.device), "backend": backend, "patch": label, "vertices": slot.count,
           "triangles": len(slot.slot.triangles), "components": slot.surface.components.count,
           "frame_ms": frame * 1e3, "vertices_ms": vertices * 1e3, "warp_refit_ms": refit * 1e3}
    if backend == "embree":
        update = time_call(scene.backend.update, scene.device, min_seconds, max_repeats)
        row["embree_update_ms"] = update * 1e3
    print(f"{row['device']:7s} {backend:6s} {label:22s} {slot.count:7d} verts {row['components']:4d} comps: "
          f"frame {row['frame_ms']:9.2f} ms = vertices {row['vertices_ms']:9.2f} + warp refit "
          f"{row['warp_refit_ms']:7.2f}" + (f" + embree update {row['embree_update_ms']:7.2f}"
                                           if backend == "embree" else ""))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser, "sea_surface", scenes=False)
    parser.add_argument("--components", type=int, default=512, help="wave components (32 frequencies x N / 32)")
    args = parser.parse_args()
    import warp as wp

    wp.init()
    device = args.device or ("cuda:0" if wp.is_cuda_available() else "cpu")
    sea = SeaStateConfig(n_frequencies=32, n_directions=max(1, args.components // 32))
    min_s, reps = (0.2, 3) if args.quick else (1.0, 20)
    backends = ["warp"] + (["embree"] if wp.get_device(device).is_cpu and rtcore.embree_available() else [])
    rows = [bench(device, b, label, size, res, sea, min_s, reps) for label, size, res in PATCHES for b in backends]
    write_report(args.out, {"machine": machine(), "rows": rows})


if __name__ == "__main__":
    main()
