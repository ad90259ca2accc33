"""``oceansim-py render KIND``: one sensor of the registry (oceansim_py/sensors/registry.py) rendered into a
folder. Every kind with a :class:`~oceansim_py.sensors.registry.CliTarget` gets a subcommand, named by the
target (``sonar``) with the kind's name and its registry aliases as aliases where they differ (``imaging_sonar``;
``scanning_sonar`` for ``msis``), so every name ``describe`` and a rig accept also renders.

The shared options come from :mod:`oceansim_py.commands.render_common`; a ``run`` target (side-scan,
profiling, single-beam) adds ``--pings`` and ``--step`` (:mod:`oceansim_py.commands.render_run`); the kind's own
options come from its target. Without its own ``write`` a target writes every array product of the kind's
schema as ``TARGET_<product>.npy`` (first pose of a single-pose target; all pings of a run).
"""

from __future__ import annotations

import argparse
import time
import numpy as np

from oceansim_py.commands.render_common import (add_render_arguments, build_config, check_output_folder, output_folder,
                                                scene_and_pose)
from oceansim_py.commands.render_run import add_arguments as add_run_arguments
from oceansim_py.commands.render_run import load_inputs
from oceansim_py.sensors import registry


def register(sub: argparse._SubParsersAction) -> None:
    """The ``render`` group with one subcommand per renderable kind (a broken sensor plugin is left out with a
    warning naming it and its package)."""
    render = sub.add_parser("render", help="render one sensor at one pose into a folder")
    rsub = render.add_subparsers(dest="target", metavar="SENSOR")
    rsub.required = True
    for target, kind in registry.iter_cli_targets():
        cli = kind.cli
        assert cli is not None
        aliases = [name for name in (kind.name, *kind.aliases) if name != target]
        p = rsub.add_parser(target, aliases=aliases, help=cli.help)
        if cli.poses == registry.RUN:
            add_run_arguments(p, kind.config_class, cli.default_preset)
        else:
            add_render_arguments(p, kind.config_class, cli.default_preset)
        for option in cli.options:
            p.add_argument(*option.flags, **dict(option.kwargs))
        p.set_defaults(func=lambda args, _kind=kind, _target=target: run(args, _kind, _target))


def run(args: argparse.Namespace, kind: registry.SensorKind, target: str) -> int:
    cli = kind.cli
    assert cli is not None
    check_output_folder(output_folder(args, target))
    fields = {o.config_field: getattr(args, o.flags[0].lstrip("-").replace("-", "_"))
              for o in cli.options if o.config_field}
    if cli.poses == registry.RUN:
        config, scene, poses = load_inputs(args, kind.config_class, cli.framing, lambda c: cli.reach(c)[0],
                                           **fields)
    else:
        config = build_config(args, kind.config_class, **fields)
        reach, fov = cli.reach(config)
        scene, poses = scene_and_pose(args, cli.framing, reach, fov)
    sensor = kind.make_sensor(config, scene.device, 0)
    t0 = time.perf_counter()
    if cli.render is not None:
        result = cli.render(sensor, scene, poses, args.frame_index, args)
    else:
        result = sensor.render(scene, poses, frame_index=args.frame_index)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    output = registry.CliOutput(kind, args, config, sensor, scene, np.asarray(poses).reshape(-1, 7), result, data,
                                output_folder(args, target), target, seconds)
    for line in (cli.write or write_arrays)(output):
        print(line)
    return 0


def write_arrays(o: registry.CliOutput) -> list[str]:
    """The default output of a target: each array product of the kind's schema that the result holds, as
    ``TARGET_<product>.npy`` (the first pose's for a single-pose target, every ping's for a run)."""
    from oceansim_py.io.images import save_npy

    single = o.kind.cli is not None and o.kind.cli.poses == registry.SINGLE
    written = [save_npy(o.out / f"{o.target}_{p.name}.npy", o.data[p.name][0] if single else o.data[p.name])
               for p in o.kind.schema if p.storage == registry.ARRAY and p.name in o.data]
    return [f"rendered {len(o.poses)} pose(s) of a {o.kind.name} of {o.scene.source} in {o.seconds:.3f} s",
            f"wrote {', '.join(str(w) for w in written) or 'nothing (the result holds no array product)'}"]
