"""Where a device-chain imaging-sonar frame spends its CPU time, stage by stage, against the bare ray cast.

For every device preset of the imaging sonar (or ``--presets``), aimed at the floor of a built-in scene as in
``sonar_throughput.py``, one CPU thread, ``--frames`` frames rendered into the same arrays: the thread CPU time
(``time.thread_time``: steady on a shared machine, where wall time is not) of each kernel launch of the frame (ray
generation, the cast, echoes + binning + range pass, bearing pass + receiver), and of the rest (Python, argument
packing, launch bookkeeping); medians over the frames. ``chain / cast`` is the chain's kernels' CPU time over the
cast's: with perfect two-thread scaling and no Python, a frame would take (1 + chain / cast) times the bare cast,
the lower bound of the ratio ``sonar_throughput.py`` measures.

    python benchmarks/device_chain_stages.py [--scene tank] [--backend embree] [--presets a,b] [--frames 40]
        [--out results.json]
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path
from typing import Any

import numpy as np

import sonar_throughput as st
from bench_common import machine, write_report
import oceansim_py.raycast.embree_backend as embree_backend
import oceansim_py.raycast.warp_backend as warp_backend
import oceansim_py.sensors.acoustic.chain as chain
from oceansim_py.runtime import set_cpu_threads
from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig

#: The modules whose ``launch_1d`` a device frame goes through (the chain's kernels and both backends' casts).
TIMED_MODULES = (chain, embree_backend, warp_backend)
CAST_KERNELS = ("embree_raycast_kernel", "raycast_kernel")


def stage_times(scene: Any, preset: str, frames: int) -> dict[str, float]:
    """Median thread CPU ms per launched kernel of one frame of ``preset``, the cast's under ``cast``, and the
    frame's rest under ``python``."""
    config, sonar = st.sensor_for("imaging_sonar", scene.device, preset)
    pitch = st.aimed_pitch(scene, scene.suggested_pose, config)
    poses = st.batch_poses(st.compose_poses(scene.suggested_pose, st.pose_from_euler(0, 0, 0, 0, pitch, 0)), 1)
    out = sonar.render(scene, poses)
    spent: dict[str, list[float]] = collections.defaultdict(list)
    originals = {m: m.launch_1d for m in TIMED_MODULES}

    def timed(launch: Any) -> Any:
        def run(kernel: Any, *args: Any, **kwargs: Any) -> None:
            t0 = time.thread_time()
            launch(kernel, *args, **kwargs)
            spent[kernel.key].append(time.thread_time() - t0)
        return run

    whole = []
    try:
        for module, launch in originals.items():
            module.launch_1d = timed(launch)
        sonar.render(scene, poses, out=out)
        spent.clear()
        for _ in range(frames):
            t0 = time.thread_time()
            sonar.render(scene, poses, out=out)
            whole.append(time.thread_time() - t0)
    finally:
        for module, launch in originals.items():
            module.launch_1d = launch
    ms = {key: 1e3 * float(np.median(v)) * len(v) / frames for key, v in spent.items()}
    cast = sum(ms.pop(k) for k in CAST_KERNELS if k in ms)
    frame = 1e3 * float(np.median(whole))
    return {"frame": frame, "cast": cast, **ms, "python": frame - cast - sum(ms.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene", default="tank")
    parser.add_argument("--backend", default="embree", choices=("embree", "warp"))
    parser.add_argument("--presets", default=None, help="comma-separated device presets (default: all)")
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "device_chain_stages.json"))
    args = parser.parse_args()
    presets = (args.presets.split(",") if args.presets else
               [p for p in ImagingSonarConfig.preset_names() if ImagingSonarConfig.preset(p).model == "device"])
    scene = st.load_per_backend(args.scene, "cpu", [args.backend])[args.backend]
    set_cpu_threads(1)
    rows = []
    try:
        for preset in presets:
            t = stage_times(scene, preset, args.frames)
            chain_ms = t["frame"] - t["cast"] - t["python"]
            rows.append({"preset": preset, **t, "chain": chain_ms, "chain_over_cast": chain_ms / t["cast"],
                         "frame_over_cast": t["frame"] / t["cast"]})
    finally:
        set_cpu_threads(None)
    stages = sorted({k for r in rows for k in r} - {"preset", "frame", "cast", "python", "chain", "chain_over_cast",
                                                     "frame_over_cast"})
    print(f"one thread, thread CPU ms per frame ({args.scene}, {args.backend} cast, {args.frames} frames, medians)")
    print(f"  {'preset':24s} {'cast':>7s} " + " ".join(f"{s.replace('_kernel', ''):>16s}" for s in stages)
          + f" {'python':>7s} {'chain/cast':>10s} {'frame/cast':>10s}")
    for r in rows:
        print(f"  {r['preset']:24s} {r['cast']:7.2f} " + " ".join(f"{r.get(s, 0.0):16.2f}" for s in stages)
              + f" {r['python']:7.2f} {r['chain_over_cast']:10.2f} {r['frame_over_cast']:10.2f}")
    write_report(args.out, {"benchmark": "device_chain_stages", "machine": machine(), "scene": args.scene,
                            "backend": args.backend, "frames": args.frames, "rows": rows})


if __name__ == "__main__":
    main()
