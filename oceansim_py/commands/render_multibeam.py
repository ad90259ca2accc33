"""``oceansim-py render multibeam``: one multibeam echosounder ping of a scene at one pose, into a folder.

Writes ``multibeam_polar.png`` (dB image; rows = range, nearest at the top; columns = beams, port on the
left), ``multibeam_fan.png`` (the Cartesian fan, sonar at the bottom centre, starboard right),
``multibeam_time_series.npy`` ((n_samples, n_beams) complex64 baseband pressure), ``multibeam_intensity.npy``
(|p|^2, float32), ``multibeam_ranges.npy`` and ``multibeam_bearings.npy``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.multibeam import MultibeamSonarConfig

    p = sub.add_parser("multibeam", help="multibeam echosounder: complex time series (.npy), polar and fan PNGs")
    p.add_argument("--scene", required=True, help="a USD or mesh file, or a built-in scene name")
    p.add_argument("--preset", default="blueview_p900",
                   help=f"sonar preset, one of {', '.join(MultibeamSonarConfig.preset_names())} "
                        f"(default: blueview_p900)")
    p.add_argument("--config", default=None, help="YAML file of MultibeamSonarConfig fields (overrides --preset)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override one config field, e.g. --set max_range=20 (repeatable)")
    p.add_argument("--method", default=None, choices=["time", "spectral"],
                   help="time-series method (default: the config's, normally 'time')")
    p.add_argument("--pose", default=None,
                   help="sensor pose x,y,z,roll,pitch,yaw (m, degrees; positive pitch looks down) or "
                        "x,y,z,qx,qy,qz,qw; default: the scene's suggested pose")
    p.add_argument("--frame-index", type=int, default=0, help="frame number keying the speckle (default 0)")
    p.add_argument("--fan-width", type=int, default=800, help="width of the fan image in pixels (default 800)")
    p.add_argument("--db-range", type=float, default=60.0, help="dynamic range of the PNGs in dB (default 60)")
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
            raise ConfigError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set max_range=20")
        values[key.strip()] = yaml.safe_load(text)
    return values


def run(args: argparse.Namespace) -> int:
    from oceansim_py.errors import ConfigError
    from oceansim_py.io.config import load_yaml
    from oceansim_py.io.images import save_npy
    from oceansim_py.poses import parse_pose_string
    from oceansim_py.scene import load_scene
    from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

    if args.config:
        base = load_yaml(args.config)
        if not isinstance(base, dict):
            raise ConfigError(f"{args.config}: expected a mapping of MultibeamSonarConfig fields")
        source = args.config
    else:
        base = {"preset": args.preset}
        source = f"--preset {args.preset}"
    config = MultibeamSonarConfig.from_dict({**base, **_overrides(args.set)}, source=source)
    scene = load_scene(args.scene, device=args.device)
    if args.pose is not None:
        pose = parse_pose_string(args.pose)
    elif scene.suggested_pose is not None:
        pose = scene.suggested_pose
    else:
        raise ConfigError(f"{scene.source}: the scene suggests no sensor pose; pass --pose x,y,z,roll,pitch,yaw")
    sonar = MultibeamSonar(config, device=scene.device)
    t0 = time.perf_counter()
    result = sonar.render(scene, pose, frame_index=args.frame_index, method=args.method)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    out = Path(args.out)
    result.save_png(out / "multibeam_polar.png", db_range=args.db_range)
    result.save_png(out / "multibeam_fan.png", fan_width=args.fan_width, db_range=args.db_range)
    save_npy(out / "multibeam_time_series.npy", data["time_series"][0])
    save_npy(out / "multibeam_intensity.npy", data["intensity"][0])
    save_npy(out / "multibeam_ranges.npy", data["ranges"])
    save_npy(out / "multibeam_bearings.npy", data["bearings"])
    print(f"rendered a {config.n_samples} x {config.n_beams} multibeam ping ({result.method} method, "
          f"{config.rays_per_pose} rays) of {scene.source} in {seconds:.3f} s")
    print(f"wrote {out / 'multibeam_polar.png'}, {out / 'multibeam_fan.png'}, {out / 'multibeam_time_series.npy'}")
    return 0
