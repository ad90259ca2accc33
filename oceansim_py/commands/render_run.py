"""What the ``run`` targets of ``oceansim-py render`` (side-scan, profiling, single-beam; see
commands/render.py) add to the shared render arguments (commands/render_common.py): a straight run of pings from
the start pose, each moved by a fixed world step.

Without ``--pose`` the run is :func:`oceansim_py.scene.framing.survey_run`: level along +x past the scene's
subject, long enough to cover it (a waterfall of many pings). With ``--pose`` it starts there and has
``DEFAULT_PINGS`` pings unless ``--pings`` says otherwise.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

import numpy as np

from oceansim_py.commands.render_common import add_render_arguments, build_config, flagged, load_cli_scene

#: Pings of a run that starts at ``--pose`` when ``--pings`` is not given.
DEFAULT_PINGS = 100
#: Most pings one CLI run may render (memory and time stay bounded; a dataset rig renders longer runs).
MAX_PINGS = 10_000


def add_arguments(p: argparse.ArgumentParser, config_cls: Any, default_preset: str | None) -> None:
    """The shared render arguments plus --pings and --step."""
    add_render_arguments(p, config_cls, default_preset)
    p.add_argument("--pings", type=_count, default=None,
                   help=f"pings in the straight run, 1..{MAX_PINGS} (default: enough to pass the scene's subject "
                        f"without --pose, {DEFAULT_PINGS} with it)")
    p.add_argument("--step", default=None,
                   help="world-frame move between pings dx,dy,dz (m, default 0.2,0,0); the attitude is kept")


def _count(text: str) -> int:
    """A count as typed: ``200`` or ``1e3`` (a whole number in any float notation); bounds are checked later."""
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from exc
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(value)


def _parse_step(text: str) -> np.ndarray:
    from oceansim_py.errors import ConfigError

    try:
        step = np.array([float(v) for v in text.split(",")], dtype=np.float64)
    except ValueError as exc:
        raise ConfigError(f"--step {text}: not three comma-separated numbers dx,dy,dz (m)") from exc
    if step.shape != (3,) or not np.isfinite(step).all():
        raise ConfigError(f"--step {text}: expected three finite numbers dx,dy,dz (m)")
    return step


def load_inputs(args: argparse.Namespace, config_cls: Any, kind: str, reach: Callable[[Any], float] | None = None,
                **fields: Any) -> tuple[Any, Any, np.ndarray]:
    """(config, scene, (pings, 7) poses) from the parsed arguments; ``ConfigError`` on bad input. ``kind`` is the
    survey kind of :func:`~oceansim_py.scene.framing.survey_run`, ``reach(config)`` its reach in m (default
    ``config.max_range``); ``fields`` are config fields set by the target's own options."""
    from oceansim_py.errors import ConfigError
    from oceansim_py.poses import parse_pose_string
    from oceansim_py.scene.framing import survey_run

    if args.pings is not None and not 1 <= args.pings <= MAX_PINGS:
        raise ConfigError(f"--pings {args.pings}: must be between 1 and {MAX_PINGS}")
    step = _parse_step(args.step) if args.step is not None else None
    config = build_config(args, config_cls, **fields)
    scene = load_cli_scene(args)
    if args.pose is not None:
        start = flagged("--pose", args.pose, lambda: parse_pose_string(args.pose))
        pings = args.pings or DEFAULT_PINGS
        step = step if step is not None else np.array([0.2, 0.0, 0.0])
    else:
        run = survey_run(scene, kind, reach(config) if reach is not None else config.max_range)
        start = run.start
        pings = args.pings or run.pings
        step = step if step is not None else run.step
    poses = np.repeat(np.asarray(start, dtype=np.float64).reshape(1, 7), pings, axis=0)
    poses[:, :3] += np.arange(pings)[:, None] * step
    return config, scene, poses.astype(np.float32)
