"""Time to turn an N x N bathymetry GeoTIFF (written here; default 4096 x 4096) into a scene and into a .usda.

Phases, each in a fresh subprocess so its peak resident memory (ru_maxrss) is its own:

- ``scene``: read the GeoTIFF (``read_bathymetry``), mesh it into tile nodes (``bathymetry_nodes``) and build
  the BVH (``Scene``) on ``--device``; times per step and the triangle count.
- ``usda``: ``scene_from_bathymetry(..., out, build_scene=False)``: read and stream the tiles to a .usda text
  file (temporary name, then rename); time and file size.

The grid: a slope plus sinusoidal relief, 1 m spacing, EPSG:32631, a 64 x 64 nodata patch.

    python benchmarks/bathymetry.py [--size 4096] [--device cpu] [--out benchmarks/results/bathymetry.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_common import machine, write_report


def write_grid(path: Path, n: int) -> None:
    import rasterio
    from rasterio.transform import from_origin

    y, x = np.mgrid[0:n, 0:n].astype(np.float32)
    z = -40.0 + 0.005 * x - 0.003 * y + 2.0 * np.sin(x / 37.0) * np.cos(y / 23.0)
    z[:64, :64] = -9999.0
    with rasterio.open(path, "w", driver="GTiff", width=n, height=n, count=1, dtype="float32", crs="EPSG:32631",
                       nodata=-9999.0, transform=from_origin(500000.0, 4100000.0, 1.0, 1.0), tiled=True) as ds:
        ds.write(z, 1)


def phase_scene(grid: str, device: str) -> dict:
    import warp as wp

    from oceansim_py.scene.bathymetry import bathymetry_nodes, read_bathymetry
    from oceansim_py.scene.graph import Scene

    t0 = time.perf_counter()
    g = read_bathymetry(grid)
    t1 = time.perf_counter()
    nodes = bathymetry_nodes(g)
    t2 = time.perf_counter()
    scene = Scene(nodes, source=grid, device=device)
    wp.synchronize_device(scene.device)
    t3 = time.perf_counter()
    hit = scene.raycast([[0.0, 0.0, 0.0]], [[0.0, 0.0, -1.0]]).numpy()["distance"][0]
    return {"read_s": t1 - t0, "mesh_s": t2 - t1, "bvh_s": t3 - t2, "total_s": t3 - t0,
            "triangles": scene.num_triangles, "tiles": len(scene.mesh_nodes()), "centre_depth_m": float(hit),
            "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def phase_usda(grid: str, out: str) -> dict:
    from oceansim_py.scene.bathymetry import scene_from_bathymetry

    t0 = time.perf_counter()
    scene_from_bathymetry(grid, out, build_scene=False)
    dt = time.perf_counter() - t0
    return {"total_s": dt, "file_gib": Path(out).stat().st_size / 2**30,
            "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bathymetry.json"))
    ap.add_argument("--phase", choices=["scene", "usda"], help=argparse.SUPPRESS)
    ap.add_argument("--grid", help=argparse.SUPPRESS)
    ap.add_argument("--usda", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase == "scene":
        print(json.dumps(phase_scene(args.grid, args.device)))
        return
    if args.phase == "usda":
        print(json.dumps(phase_usda(args.grid, args.usda)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        grid = Path(tmp) / f"grid_{args.size}.tif"
        t0 = time.perf_counter()
        write_grid(grid, args.size)
        print(f"wrote a {args.size} x {args.size} GeoTIFF in {time.perf_counter() - t0:.1f} s")
        results = {}
        for phase in ("scene", "usda"):
            cmd = [sys.executable, __file__, "--phase", phase, "--grid", str(grid), "--device", args.device,
                   "--usda", str(Path(tmp) / "seafloor.usda")]
            done = subprocess.run(cmd, check=True, capture_output=True, text=True)
            results[phase] = json.loads(done.stdout.strip().splitlines()[-1])
    s, u = results["scene"], results["usda"]
    print(f"\n{args.size} x {args.size} grid, {s['triangles']:,} triangles in {s['tiles']} tiles, device {args.device}")
    print(f"{'step':28s} {'seconds':>9s} {'peak RSS GiB':>13s}")
    print(f"{'read GeoTIFF':28s} {s['read_s']:9.2f}")
    print(f"{'mesh tiles':28s} {s['mesh_s']:9.2f}")
    print(f"{'BVH (Scene)':28s} {s['bvh_s']:9.2f}")
    print(f"{'scene total':28s} {s['total_s']:9.2f} {s['peak_rss_gib']:13.2f}")
    print(f"{'.usda (read + stream)':28s} {u['total_s']:9.2f} {u['peak_rss_gib']:13.2f}   "
          f"({u['file_gib']:.2f} GiB file)")
    write_report(args.out, {"benchmark": "bathymetry", "size": args.size, "device": args.device,
                            "machine": machine(), **results})


if __name__ == "__main__":
    main()
