"""``oceansim-py view DATASET [--save file.rrd]``: stream a dataset to the Rerun viewer (needs the ``viewer``
extra). See :mod:`oceansim_py.io.rerun_view` for what is shown."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="show a dataset in Rerun (trajectory, scene, sonar, camera, DVL)")
    p.add_argument("dataset", help="dataset folder written by `oceansim-py generate`")
    p.add_argument("--save", default=None, metavar="FILE.rrd",
                   help="write a Rerun recording to this file instead of opening the viewer")
    p.add_argument("--no-scene", action="store_true", help="leave the scene mesh out")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.io.rerun_view import view_dataset

    view_dataset(args.dataset, save=args.save, spawn=args.save is None, scene=not args.no_scene)
    if args.save:
        print(f"wrote {args.save}")
    return 0
