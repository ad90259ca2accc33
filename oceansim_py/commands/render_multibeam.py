"""``oceansim-py render multibeam``: one multibeam echosounder ping of a scene at one pose, into a folder.

Writes ``multibeam_polar.png`` (dB image; rows = range, nearest at the top; columns = beams, port on the
left), ``multibeam_fan.png`` (the Cartesian fan, sonar at the bottom centre, starboard right),
``multibeam_time_series.npy`` ((n_samples, n_beams) complex64 baseband pressure), ``multibeam_intensity.npy``
(|p|^2, float32), ``multibeam_ranges.npy`` and ``multibeam_bearings.npy``.
"""

from __future__ import annotations

import argparse
import time

from oceansim_py.commands.render_common import (add_render_arguments, build_config, output_folder, scene_and_pose,
                                                warn_if_blind)


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.multibeam import MultibeamSonarConfig

    p = sub.add_parser("multibeam", help="multibeam echosounder: complex time series (.npy), polar and fan PNGs")
    add_render_arguments(p, MultibeamSonarConfig, "blueview_p900")
    p.add_argument("--method", default=None, choices=["time", "spectral"],
                   help="time-series method (default: the config's, normally 'time')")
    p.add_argument("--fan-width", type=int, default=800, help="width of the fan image in pixels (default 800)")
    p.add_argument("--db-range", type=float, default=60.0, help="dynamic range of the PNGs in dB (default 60)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.io.images import save_npy
    from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

    config = build_config(args, MultibeamSonarConfig)
    scene, pose = scene_and_pose(args, "multibeam", config.max_range, config.fov)
    sonar = MultibeamSonar(config, device=scene.device)
    t0 = time.perf_counter()
    result = sonar.render(scene, pose, frame_index=args.frame_index, method=args.method)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    out = output_folder(args, "multibeam")
    warn_if_blind("multibeam echosounder", float(data["intensity"][0].max() > 0), scene, pose, config.max_range)
    result.save_png(out / "multibeam_polar.png", db_range=args.db_range)
    result.save_png(out / "multibeam_fan.png", fan_width=args.fan_width, db_range=args.db_range)
    save_npy(out / "multibeam_time_series.npy", data["time_series"][0])
    save_npy(out / "multibeam_intensity.npy", data["intensity"][0])
    save_npy(out / "multibeam_ranges.npy", data["ranges"])
    save_npy(out / "multibeam_bearings.npy", data["bearings"])
    print(f"rendered a {config.n_samples} x {config.n_beams} multibeam ping ({result.method} method, "
          f"{config.rays_per_pose} rays) of {scene.source} in {seconds:.3f} s")
    print(f"wrote {out / 'multibeam_polar.png'}, {out / 'multibeam_fan.png'}, {out / 'multibeam_time_series.npy'}")
    return 0
