"""``oceansim-py render sonar``: one imaging-sonar frame of a scene at one pose, written into a folder.

Writes ``sonar_polar.png`` (rows = range, nearest at the top; columns = beams, port on the left),
``sonar_fan.png`` (the Cartesian fan, sonar at the bottom centre, starboard right) and ``sonar.npy``
(the (n_range, n_beams) float32 intensity), plus ``sonar_ranges.npy`` and ``sonar_bearings.npy``.
"""

from __future__ import annotations

import argparse
import time

from oceansim_py.commands.render_common import (add_render_arguments, build_config, output_folder, scene_and_pose,
                                                warn_if_blind)

#: Default preset: 1-50 m, so it reaches every built-in scene's subject from the pose it renders at.
DEFAULT_PRESET = "holoocean_paper"


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig

    p = sub.add_parser("sonar", help="forward-looking imaging sonar: polar PNG, fan PNG and raw .npy")
    add_render_arguments(p, ImagingSonarConfig, DEFAULT_PRESET)
    p.add_argument("--fan-width", type=int, default=800, help="width of the fan image in pixels (default 800)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.io.images import save_npy
    from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig

    config = build_config(args, ImagingSonarConfig)
    scene, pose = scene_and_pose(args, "imaging_sonar", config.max_range, config.horizontal_fov)
    sonar = ImagingSonar(config, device=scene.device)
    t0 = time.perf_counter()
    result = sonar.render(scene, pose, frame_index=args.frame_index)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    out = output_folder(args, "sonar")
    result.save_png(out / "sonar_polar.png")
    result.save_png(out / "sonar_fan.png", fan_width=args.fan_width)
    save_npy(out / "sonar.npy", data["intensity"][0])
    save_npy(out / "sonar_ranges.npy", data["ranges"])
    save_npy(out / "sonar_bearings.npy", data["bearings"])
    hits = int(data["hit_count"][0].sum())
    warn_if_blind("imaging sonar", float(hits > 0), scene, pose, config.max_range)
    print(f"rendered {config.range_bins} x {config.n_beams} sonar image ({config.rays_per_pose} rays, {hits} "
          f"binned) of {scene.source} in {seconds:.3f} s (first call includes kernel compilation)")
    print(f"wrote {out / 'sonar_polar.png'}, {out / 'sonar_fan.png'}, {out / 'sonar.npy'}")
    return 0
