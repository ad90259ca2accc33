"""Multibeam echosounder throughput: DAVE's three BlueView P900 cases, time-domain vs spectral method.

Cases (Choi et al. 2021, Table 2; 512 beams): 60 m range with 114 elevation rays per beam, 60 m with 11 rays,
10 m with 11 rays. DAVE's CUDA plugin ran them at 0.5, 3 and 10 pings/s on an Intel i9-9900K with an NVIDIA
RTX 2080 Ti. Each case renders the built-in ``tank`` scene at its suggested pose with the ``blueview_p900``
preset (its range and ray count overridden), with both methods: ``time`` (each scatterer deposits its pulse)
and ``spectral`` (the paper's per-frequency sums, then an inverse FFT on the host). A ping is the whole
render: ray cast, scatterers, time series, beam-pattern mixing, intensity and dB, synchronised. Rows at
batch 1 give pings/s for one ping at a time; a batch-8 row of the time method shows the batched throughput.

Usage: python benchmarks/multibeam_throughput.py [--quick] [--out PATH] [--scene tank] [--threads N]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from bench_common import add_common_arguments, machine, sensor_for, time_call, write_report
import oceansim_py as osp
from oceansim_py.poses import compose_poses, pose_from_euler
from oceansim_py.runtime import cpu_threads, set_cpu_threads

#: DAVE's cases and published rates (Choi et al. 2021, Table 2; i9-9900K + RTX 2080 Ti).
DAVE_CASES = [
    {"max_range": 60.0, "rays_per_beam": 114, "dave_pings_per_s": 0.5},
    {"max_range": 60.0, "rays_per_beam": 11, "dave_pings_per_s": 3.0},
    {"max_range": 10.0, "rays_per_beam": 11, "dave_pings_per_s": 10.0},
]
DAVE_HARDWARE = "Intel i9-9900K + NVIDIA RTX 2080 Ti (CUDA)"



def batch_poses(base: np.ndarray, batch: int) -> np.ndarray:
    """``batch`` poses near ``base``: 2 cm forward and 0.5 deg of yaw per frame."""
    deltas = np.stack([pose_from_euler(0.02 * b, 0.0, 0.0, 0.0, 0.0, 0.5 * b) for b in range(batch)])
    return np.stack([compose_poses(base, d) for d in deltas]).astype(np.float32)


def bench(scene_name: str, device: Any, min_seconds: float, max_repeats: int,
          time_batch: int) -> list[dict[str, Any]]:
    scene = osp.load_scene(scene_name, device=device)
    base = scene.suggested_pose if scene.suggested_pose is not None else pose_from_euler(0.0, 0.0, 0.0)
    rows: list[dict[str, Any]] = []
    for case in DAVE_CASES:
        config, sonar = sensor_for("multibeam", scene.device, "blueview_p900", max_range=case["max_range"],
                                   rays_per_beam=case["rays_per_beam"])
        per_method: dict[str, float] = {}
        for method, batch in (("time", 1), ("spectral", 1), ("time", time_batch)):
            if batch < 1:
                continue
            poses = batch_poses(base, batch)
            result = sonar.render(scene, poses, method=method)  # allocates, compiles on first use
            seconds = time_call(lambda: sonar.render(scene, poses, method=method, out=result), scene.device,
                                min_seconds, max_repeats)
            pings = batch / seconds
            if batch == 1:
                per_method[method] = seconds
            row = {
                "case": f"{case['max_range']:g} m, {case['rays_per_beam']} rays/beam", "method": method,
                "batch": batch, "device": str(scene.device),
                "threads": cpu_threads() if scene.device.is_cpu else None,
                "max_range_m": case["max_range"], "rays_per_beam": case["rays_per_beam"],
                "n_beams": config.n_beams, "rays_per_ping": config.rays_per_pose, "n_samples": config.n_samples,
                "n_frequencies": config.n_frequencies if method == "spectral" else None,
                "seconds_per_batch": seconds, "pings_per_s": pings,
                "dave_pings_per_s": case["dave_pings_per_s"], "speedup_vs_dave": pings / case["dave_pings_per_s"],
            }
            rows.append(row)
            print(format_row(row), flush=True)
        ratio = per_method["spectral"] / per_method["time"]
        for row in rows:
            if row["max_range_m"] == case["max_range"] and row["rays_per_beam"] == case["rays_per_beam"]:
                row["spectral_over_time"] = ratio
    return rows


HEADER = (f"{'case':24s} {'method':9s} {'batch':>5s} {'samples':>7s} {'s/batch':>9s} {'pings/s':>9s} "
          f"{'DAVE':>6s} {'x DAVE':>8s}")


def format_row(r: dict[str, Any]) -> str:
    return (f"{r['case']:24s} {r['method']:9s} {r['batch']:5d} {r['n_samples']:7d} {r['seconds_per_batch']:9.4f} "
            f"{r['pings_per_s']:9.2f} {r['dave_pings_per_s']:6.1f} {r['speedup_vs_dave']:8.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser, "multibeam_throughput", scenes=False, quick_help="fewer repeats, no batched row")
    parser.add_argument("--scene", default="tank", help="built-in scene or scene file (default: tank)")
    parser.add_argument("--threads", type=int, default=None, help="CPU launch threads (default: all cores)")
    args = parser.parse_args(argv)
    set_cpu_threads(args.threads)
    min_seconds, max_repeats = (0.5, 3) if args.quick else (3.0, 20)
    print(HEADER)
    rows = bench(args.scene, args.device, min_seconds, max_repeats, 0 if args.quick else 8)
    print()
    print(f"{'case':24s} {'time pings/s':>12s} {'spectral pings/s':>16s} {'spectral/time':>13s} {'DAVE':>6s}")
    summary = []
    for case in DAVE_CASES:
        sel = [r for r in rows if r["max_range_m"] == case["max_range"] and r["rays_per_beam"] == case["rays_per_beam"]
               and r["batch"] == 1]
        t = next(r for r in sel if r["method"] == "time")
        s = next(r for r in sel if r["method"] == "spectral")
        summary.append({"case": t["case"], "time_pings_per_s": t["pings_per_s"],
                        "spectral_pings_per_s": s["pings_per_s"], "spectral_over_time": t["spectral_over_time"],
                        "dave_pings_per_s": case["dave_pings_per_s"],
                        "time_beats_dave": t["pings_per_s"] > case["dave_pings_per_s"]})
        print(f"{t['case']:24s} {t['pings_per_s']:12.2f} {s['pings_per_s']:16.2f} {t['spectral_over_time']:13.1f} "
              f"{case['dave_pings_per_s']:6.1f}")
    write_report(args.out, {
        "benchmark": "multibeam_throughput", "quick": args.quick, "scene": args.scene, "machine": machine(),
        "dave": {"hardware": DAVE_HARDWARE, "source": "Choi et al. 2021, Frontiers in Robotics and AI, Table 2",
                 "cases": DAVE_CASES},
        "rows": rows, "summary": summary,
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
