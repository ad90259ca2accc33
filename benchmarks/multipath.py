"""Cost of specular multipath (``multipath_bounces``, sensors/acoustic/multipath.py): the render time of every acoustic
preset that has it (every device preset, and the fan sonars' peer presets) with 1 and 2 bounces relative to 0, per
ray-cast backend, on a scene where the sensor sees geometry
(default: the tank; the sensors look at its floor and walls from its suggested pose, 1.5 m deep, so that bounces
meet the floor, the walls and the flat surface).

Each row renders one ping of the preset as it is (full size) at each bounce count; the time is the median of
7 renders (1 with ``--quick``) after a first (compiling) one, the bounce counts rendered in turn. Bounces add, per
bounce, one ray cast of every ray that is still alive (a hit within the range left) and one echo kernel; the binning
gathers (1 + bounces) echoes per ray. With mixed paths (``multipath_mixed_paths``, the default; the device models),
each bounce also casts one visibility ray per echoing hit and adds one mixed echo block (and the cross-channel
arrivals, binned per pose in ray order); the columns ``x1 same`` / ``x2 same`` time the same-path returns alone
(mixed paths off). Peer presets render same-path returns only: their two columns measure the same thing.

Usage: python benchmarks/multipath.py [--quick] [--out PATH] [--device DEV] [--scenes NAME ...] [--kinds KIND ...]
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from bench_common import (add_common_arguments, add_row, machine, preset_names, sensor_for, table_header,
                          time_call, write_report)
from oceansim_py.raycast import rtcore
from oceansim_py.scene import load_scene

_S = math.sin(math.pi / 8)
_C = math.cos(math.pi / 8)
#: kind -> sensor orientation (quaternion xyzw, FLU): forward-looking sonars pitched 45 deg down, the down-looking
#: profiler, single-beam and side-scan level or straight down, the MSIS level.
ORIENTATION = {
    "imaging_sonar": [0.0, _S, 0.0, _C],
    "multibeam": [0.0, _S, 0.0, _C],
    "sidescan": [0.0, 0.0, 0.0, 1.0],
    "profiling": [0.0, 0.0, 0.0, 1.0],
    "singlebeam": [0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)],
    "msis": [0.0, 0.0, 0.0, 1.0],
}

COLUMNS = [("kind", "kind", "14s"), ("preset", "preset", "22s"), ("backend", "backend", "7s"),
           ("rays", "rays", "8d"), ("0 bounce ms", "ms_0", "12.2f"), ("1 bounce ms", "ms_1", "12.2f"),
           ("2 bounces ms", "ms_2", "13.2f"), ("x1", "ratio_1", "6.2f"), ("x2", "ratio_2", "6.2f"),
           ("x1 same", "ratio_1s", "8.2f"), ("x2 same", "ratio_2s", "8.2f")]


def bounce_presets(kind: str) -> list[str]:
    """The presets of ``kind`` that render ``multipath_bounces`` (every device preset; the fan sonars' peers)."""
    from oceansim_py.errors import ConfigError
    from oceansim_py.sensors.registry import get

    k = get(kind)
    names = []
    for p in preset_names(kind):
        try:
            k.make_config({"preset": p, "multipath_bounces": 1}, "benchmark")
        except ConfigError:
            continue
        names.append(p)
    return names


def bench(kind: str, preset: str, scene: Any, pose: np.ndarray, device: Any, repeats: int) -> dict[str, Any]:
    """One row: the preset at 0, 1 and 2 bounces (with mixed paths, the default, and without: keys "1s", "2s"),
    each rendered once to compile and allocate, then ``repeats`` rounds rendering each in turn (interleaved, so
    that a shared machine's load drifts into all alike); the median per setting."""
    row: dict[str, Any] = {"kind": kind, "preset": preset, "backend": scene.raycast_backend}
    sensors = {}
    for key, bounces, mixed in (("0", 0, True), ("1", 1, True), ("2", 2, True), ("1s", 1, False), ("2s", 2, False)):
        config, sensor = sensor_for(kind, device, preset, multipath_bounces=bounces, multipath_mixed_paths=mixed)
        row["rays"] = int(getattr(config, "rays_per_pose"))
        sensor.render(scene, pose, 0)  # compile and allocate
        sensors[key] = sensor
    samples: dict[str, list[float]] = {b: [] for b in sensors}
    for _ in range(repeats):
        for key, sensor in sensors.items():
            samples[key].append(time_call(lambda: sensor.render(scene, pose, 0), scene.device, 0.0, 1))
    for key in sensors:
        row[f"ms_{key}"] = 1e3 * float(np.median(samples[key]))
    for key in ("1", "2", "1s", "2s"):
        row[f"ratio_{key}"] = row[f"ms_{key}"] / row["ms_0"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser, "multipath", quick_help="one timed render per point")
    parser.add_argument("--kinds", nargs="*", default=list(ORIENTATION), help="sensor kinds (default: all acoustic)")
    args = parser.parse_args()
    import warp as wp

    wp.init()
    device = args.device or ("cuda:0" if wp.is_cuda_available() else "cpu")
    reps = 1 if args.quick else 7
    backends = ["warp"] + (["embree"] if wp.get_device(device).is_cpu and rtcore.embree_available() else [])
    rows: list[dict[str, Any]] = []
    print(table_header(COLUMNS))
    for scene_name in args.scenes or ["tank"]:
        for backend in backends:
            scene = load_scene(scene_name, device=device, raycast_backend=backend)
            start = scene.suggested_pose if scene.suggested_pose is not None else np.array([0, 0, -1.5, 0, 0, 0, 1])
            for kind in args.kinds:
                pose = np.concatenate([start[:3], ORIENTATION[kind]])
                for preset in bounce_presets(kind):
                    row = bench(kind, preset, scene, pose, device, reps)
                    row["scene"] = scene_name
                    add_row(rows, row, COLUMNS)
    write_report(args.out, {"machine": machine(), "rows": rows})


if __name__ == "__main__":
    main()
