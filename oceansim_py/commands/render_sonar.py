"""``oceansim-py render sonar``: one imaging-sonar frame of a scene at one pose, written into a folder.

Writes ``sonar_polar.png`` (rows = range, nearest at the top; columns = beams, port on the left),
``sonar_fan.png`` (the Cartesian fan, sonar at the bottom centre, starboard right) and ``sonar.npy``
(the (n_range, n_beams) float32 intensity), plus ``sonar_ranges.npy`` and ``sonar_bearings.npy``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from oceansim_py.commands.render_common import add_render_arguments, build_config, scene_and_pose


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig

    p = sub.add_parser("sonar", help="forward-looking imaging sonar: polar PNG, fan PNG and raw .npy")
    add_render_arguments(p, ImagingSonarConfig, "blueview_p900")
    p.add_argument("--fan-width", type=int, default=800, help="width of the fan image in pixels (default 800)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.io.images import save_npy
    from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig

    config = build_config(args, ImagingSonarConfig)
    scene, pose = scene_and_pose(args)
    sonar = ImagingSonar(config, device=scene.device)
    t0 = time.perf_counter()
    result = sonar.render(scene, pose, frame_index=args.frame_index)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    out = Path(args.out)
    result.save_png(out / "sonar_polar.png")
    result.save_png(out / "sonar_fan.png", fan_width=args.fan_width)
    save_npy(out / "sonar.npy", data["intensity"][0])
    save_npy(out / "sonar_ranges.npy", data["ranges"])
    save_npy(out / "sonar_bearings.npy", data["bearings"])
    hits = int(data["hit_count"][0].sum())
    if hits == 0:
        print(f"note: no surface lies within {config.min_range:g}-{config.max_range:g} m of this pose; try a "
              f"longer-range preset or --set max_range=...")
    print(f"rendered {config.range_bins} x {config.n_beams} sonar image ({config.rays_per_pose} rays, {hits} "
          f"binned) of {scene.source} in {seconds:.3f} s (first call includes kernel compilation)")
    print(f"wrote {out / 'sonar_polar.png'}, {out / 'sonar_fan.png'}, {out / 'sonar.npy'}")
    return 0
