"""``oceansim-py render camera``: one underwater camera image of a scene at one pose, into a folder.

Writes ``camera_rgb.png`` (sRGB), ``camera_depth.png`` (planar depth, bright = near, dark = the farthest hit,
black = nothing hit), ``camera_label.png`` (a fixed colour per label) and raw arrays: ``camera_rgb.npy``
((H, W, 3) uint8),
``camera_linear.npy`` and ``camera_in_air.npy`` ((H, W, 3) float32 linear underwater and in-air images),
``camera_range.npy`` and ``camera_depth.npy`` ((H, W) float32 m, inf = miss), ``camera_label.npy`` ((H, W) int32,
-1 = miss; names in ``camera_labels.json``), ``camera_normal.npy`` ((H, W, 3) world-frame normals).
"""

from __future__ import annotations

import argparse
import json
import time

from oceansim_py.commands.render_common import (add_render_arguments, build_config, output_folder, scene_and_pose,
                                                warn_if_blind)


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.camera import UnderwaterCameraConfig
    from oceansim_py.sensors.water import WaterType

    p = sub.add_parser("camera", help="underwater RGB camera: RGB, depth and label PNGs plus raw .npy")
    add_render_arguments(p, UnderwaterCameraConfig, None)
    p.add_argument("--water", default=None,
                   help=f"water preset, one of {', '.join(WaterType.preset_names())} (default: the config's)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.io.images import save_npy
    from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig

    config = build_config(args, UnderwaterCameraConfig, water=args.water)
    reach = min(config.max_range, config.water_type.visibility())
    scene, pose = scene_and_pose(args, "camera", reach, config.horizontal_fov)
    camera = UnderwaterCamera(config, device=scene.device)
    t0 = time.perf_counter()
    result = camera.render(scene, pose, frame_index=args.frame_index)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    out = output_folder(args, "camera")
    written = result.save_png(out, prefix="camera_")
    for name in ("rgb", "linear", "in_air", "range", "depth", "label", "normal"):
        save_npy(out / f"camera_{name}.npy", data[name][0])
    (out / "camera_labels.json").write_text(json.dumps(result.label_names, indent=1) + "\n", encoding="utf-8")
    hit = data["label"][0] >= 0
    warn_if_blind("camera", float(hit.mean()), scene, pose, config.max_range)
    print(f"rendered a {config.width} x {config.height} camera image of {scene.source} in {camera.water.name} "
          f"water in {seconds:.3f} s ({100.0 * hit.mean():.1f} % of pixels hit geometry)")
    print(f"wrote {', '.join(str(p) for p in written.values())} and camera_*.npy")
    return 0
