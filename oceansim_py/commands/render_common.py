"""What every ``oceansim-py render <sensor>`` command shares: its arguments, the config built from a preset or
YAML plus ``--set`` overrides, and the scene and sensor pose."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

POSE_HELP = ("sensor pose x,y,z,roll,pitch,yaw (m, degrees; positive pitch looks down) or x,y,z,qx,qy,qz,qw; "
             "default: the scene's suggested pose")


def add_render_arguments(p: argparse.ArgumentParser, config_cls: Any, default_preset: str | None) -> None:
    """--scene, --preset, --config, --set, --pose, --frame-index, --device, --out."""
    name = config_cls.__name__
    p.add_argument("--scene", required=True, help="a USD or mesh file, or a built-in scene name")
    p.add_argument("--preset", default=default_preset,
                   help=f"{name} preset, one of {', '.join(config_cls.preset_names())} "
                        f"(default: {default_preset or 'the config defaults'})")
    p.add_argument("--config", default=None, help=f"YAML file of {name} fields (overrides --preset)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override one config field, e.g. --set max_range=20 (repeatable)")
    p.add_argument("--pose", default=None, help=POSE_HELP)
    p.add_argument("--frame-index", type=int, default=0, help="frame number keying the noise (default 0)")
    p.add_argument("--device", default=None, help="Warp device (default: cuda:0 if present, else cpu)")
    p.add_argument("--out", required=True, help="output folder (created if missing)")


def build_config(args: argparse.Namespace, config_cls: Any, **extra: Any) -> Any:
    """The config from ``--config`` YAML, else ``--preset``, else the defaults; then ``--set`` and ``extra``
    (fields given by the command's own options, ``None`` values ignored) on top."""
    import yaml

    from oceansim_py.errors import ConfigError
    from oceansim_py.io.config import load_yaml

    if args.config:
        base = load_yaml(args.config)
        if not isinstance(base, dict):
            raise ConfigError(f"{args.config}: expected a mapping of {config_cls.__name__} fields")
        source = args.config
    elif args.preset:
        base, source = {"preset": args.preset}, f"--preset {args.preset}"
    else:
        base, source = {}, f"{config_cls.__name__} defaults"
    values = dict(base)
    for item in args.set:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set max_range=20")
        values[key.strip()] = yaml.safe_load(text)
    values.update({k: v for k, v in extra.items() if v is not None})
    return config_cls.from_dict(values, source=source)


def scene_and_pose(args: argparse.Namespace) -> tuple[Any, np.ndarray]:
    """The scene (``--scene`` on ``--device``) and the sensor pose (``--pose`` or the scene's suggestion)."""
    from oceansim_py.errors import ConfigError
    from oceansim_py.poses import parse_pose_string
    from oceansim_py.scene import load_scene

    scene = load_scene(args.scene, device=args.device)
    if args.pose is not None:
        return scene, parse_pose_string(args.pose)
    if scene.suggested_pose is not None:
        return scene, scene.suggested_pose
    raise ConfigError(f"{scene.source}: the scene suggests no sensor pose; pass --pose x,y,z,roll,pitch,yaw")
