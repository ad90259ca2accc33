"""``oceansim-py describe SCENE``: load a scene (file or built-in name), build its BVH and print what it holds.
``oceansim-py describe KIND`` (a sensor kind of the registry, e.g. ``imaging_sonar`` or ``sonar``, when no file
of that name exists) prints the sensor's config, presets and the schema of what it writes."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from oceansim_py.commands.render_common import add_missing_references_argument
from oceansim_py.errors import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("describe", help="load a scene and print its nodes, materials, labels and a test ray cast")
    p.add_argument("scene", help="a USD or mesh file, or a built-in scene name (see `oceansim-py scenes`); or a "
                                 "sensor kind (imaging_sonar, dvl, ...) to print what it writes")
    p.add_argument("--device", default=None, help="Warp device (default: cuda:0 if present, else cpu)")
    p.add_argument("--nodes", action="store_true", help="list every node")
    add_missing_references_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.poses import quat_to_matrix
    from oceansim_py.scene import builtin_scene_names, load_scene
    from oceansim_py.sensors import registry

    if not Path(args.scene).exists() and args.scene not in builtin_scene_names():
        if args.scene in registry.kind_names():          # a broken sensor plugin raises its error here
            print(registry.get(args.scene).describe())
            return 0
        aliases = {alias: kind for kind in registry.all_kinds(on_error="warn") for alias in kind.aliases}
        if args.scene in aliases:
            print(aliases[args.scene].describe())
            return 0

        if not Path(args.scene).suffix:
            raise ConfigError(f"{args.scene}: neither a file, a built-in scene ({builtin_scene_names()}) nor a "
                              f"sensor kind ({registry.kind_names()}); check the name or the path")

    t0 = time.perf_counter()
    scene = load_scene(args.scene, device=args.device, missing_references=args.missing_references)
    t1 = time.perf_counter()
    print(scene.summary())
    print(f"  loaded in {t1 - t0:.2f} s (BVH build {scene.geometry.build_seconds:.3f} s)")
    if args.nodes:
        for node in scene.nodes:
            print(f"    {node!r}")
    pose = scene.suggested_pose
    if pose is not None:
        boresight = quat_to_matrix(pose[3:]) @ np.array([1.0, 0.0, 0.0])
        hit = scene.raycast(pose[None, :3], boresight[None, :], 1000.0).numpy()
        if hit["face"][0] >= 0:
            node = scene.node(int(hit["object"][0]))
            print(f"  boresight from the suggested pose hits {node.path} ({node.label}, {node.material.name}) "
                  f"at {hit['distance'][0]:.3f} m")
        else:
            print("  boresight from the suggested pose hits nothing within 1000 m")
    return 0
