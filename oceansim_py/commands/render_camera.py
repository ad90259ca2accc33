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
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.camera import UnderwaterCameraConfig
    from oceansim_py.sensors.water import WaterType

    p = sub.add_parser("camera", help="underwater RGB camera: RGB, depth and label PNGs plus raw .npy")
    p.add_argument("--scene", required=True, help="a USD or mesh file, or a built-in scene name")
    p.add_argument("--preset", default=None,
                   help=f"camera preset, one of {', '.join(UnderwaterCameraConfig.preset_names())} "
                        f"(default: the UnderwaterCameraConfig defaults)")
    p.add_argument("--config", default=None, help="YAML file of UnderwaterCameraConfig fields (overrides --preset)")
    p.add_argument("--water", default=None,
                   help=f"water preset, one of {', '.join(WaterType.preset_names())} (default: the config's)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override one config field, e.g. --set width=1280 (repeatable)")
    p.add_argument("--pose", default=None,
                   help="camera pose x,y,z,roll,pitch,yaw (m, degrees; positive pitch looks down) or "
                        "x,y,z,qx,qy,qz,qw; default: the scene's suggested pose")
    p.add_argument("--device", default=None, help="Warp device (default: cuda:0 if present, else cpu)")
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    p.set_defaults(func=run)


def _overrides(items: list[str]) -> dict:
    import yaml

    from oceansim_py.errors import ConfigError

    values = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set width=1280")
        values[key.strip()] = yaml.safe_load(text)
    return values


def run(args: argparse.Namespace) -> int:
    from oceansim_py.errors import ConfigError
    from oceansim_py.io.config import load_yaml
    from oceansim_py.io.images import save_npy
    from oceansim_py.poses import parse_pose_string
    from oceansim_py.scene import load_scene
    from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig

    if args.config:
        base = load_yaml(args.config)
        if not isinstance(base, dict):
            raise ConfigError(f"{args.config}: expected a mapping of UnderwaterCameraConfig fields")
        source = args.config
    elif args.preset:
        base = {"preset": args.preset}
        source = f"--preset {args.preset}"
    else:
        base, source = {}, "camera defaults"
    values = {**base, **_overrides(args.set)}
    if args.water is not None:
        values["water"] = args.water
    config = UnderwaterCameraConfig.from_dict(values, source=source)
    scene = load_scene(args.scene, device=args.device)
    if args.pose is not None:
        pose = parse_pose_string(args.pose)
    elif scene.suggested_pose is not None:
        pose = scene.suggested_pose
    else:
        raise ConfigError(f"{scene.source}: the scene suggests no camera pose; pass --pose x,y,z,roll,pitch,yaw")
    camera = UnderwaterCamera(config, device=scene.device)
    t0 = time.perf_counter()
    result = camera.render(scene, pose)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    out = Path(args.out)
    written = result.save_png(out, prefix="camera_")
    for name in ("rgb", "linear", "in_air", "range", "depth", "label", "normal"):
        save_npy(out / f"camera_{name}.npy", data[name][0])
    (out / "camera_labels.json").write_text(json.dumps(result.label_names, indent=1) + "\n", encoding="utf-8")
    hit = data["label"][0] >= 0
    print(f"rendered a {config.width} x {config.height} camera image of {scene.source} in {camera.water.name} "
          f"water in {seconds:.3f} s ({100.0 * hit.mean():.1f} % of pixels hit geometry)")
    print(f"wrote {', '.join(str(p) for p in written.values())} and camera_*.npy")
    return 0
