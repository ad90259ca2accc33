"""What ``oceansim-py render sidescan | profiling | singlebeam`` add to the shared render arguments
(commands/render_common.py): a straight run of pings from the start pose, each moved by a fixed world step."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from oceansim_py.commands.render_common import add_render_arguments, build_config, scene_and_pose


def add_arguments(p: argparse.ArgumentParser, config_cls: Any, default_preset: str) -> None:
    """The shared render arguments plus --pings and --step."""
    add_render_arguments(p, config_cls, default_preset)
    p.add_argument("--pings", type=int, default=1, help="pings in a straight run from --pose (default 1)")
    p.add_argument("--step", default="0.2,0,0",
                   help="world-frame move between pings dx,dy,dz (m, default 0.2,0,0); the attitude is kept")


def load_inputs(args: argparse.Namespace, config_cls: Any) -> tuple[Any, Any, np.ndarray]:
    """(config, scene, (pings, 7) poses) from the parsed arguments; ``ConfigError`` on bad input."""
    from oceansim_py.errors import ConfigError

    if args.pings < 1:
        raise ConfigError(f"--pings must be >= 1, got {args.pings}")
    try:
        step = np.array([float(v) for v in args.step.split(",")], dtype=np.float64)
    except ValueError as exc:
        raise ConfigError(f"--step: {args.step!r} is not three comma-separated numbers dx,dy,dz (m)") from exc
    if step.shape != (3,) or not np.isfinite(step).all():
        raise ConfigError(f"--step: expected three finite numbers dx,dy,dz (m), got {args.step!r}")
    config = build_config(args, config_cls)
    scene, pose = scene_and_pose(args)
    poses = np.repeat(np.asarray(pose, dtype=np.float64).reshape(1, 7), args.pings, axis=0)
    poses[:, :3] += np.arange(args.pings)[:, None] * step
    return config, scene, poses.astype(np.float32)
