"""``oceansim-py generate``: render a dataset from a rig (the main job)."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_RIG = "pier_survey"
DEFAULT_OUT = "oceansim_output"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="render a dataset of sensor frames along a trajectory (the main job)",
                       description="Render every sensor of a rig along its trajectory into shards with a "
                                   "manifest. With no arguments: the built-in survey rig over the pier scene "
                                   f"into ./{DEFAULT_OUT}.")
    p.add_argument("scene", nargs="?", default=None, help="scene file or built-in name (default: the rig's)")
    p.add_argument("--rig", default=DEFAULT_RIG, help=f"rig YAML file or built-in rig name (default {DEFAULT_RIG})")
    p.add_argument("--frames", type=int, default=None, help="number of frames (ticks of the rig clock)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default ./{DEFAULT_OUT})")
    p.add_argument("--executor", choices=["local", "ray"], default="local", help="where shards render")
    p.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local Ray)")
    p.add_argument("--device", default=None, help="Warp device (default: cuda:0 if present, else cpu)")
    p.add_argument("--resume", action="store_true", help="keep complete shards of this run and redo the rest")
    p.add_argument("--compress", action="store_true",
                   help="write array products as compressed .npz (lossless, about 2-3x smaller; loaders read both)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.dataset.generate import generate, summarize
    from oceansim_py.dataset.rig import load_rig

    rig = load_rig(args.rig).with_overrides(frames=args.frames, scene=args.scene)
    out = Path(args.out)
    manifest = generate(rig, out, executor=args.executor, device=args.device, resume=args.resume,
                        ray_address=args.ray_address, progress=not args.no_progress,
                        compress=args.compress)
    print(summarize(manifest, out))
    return 0
