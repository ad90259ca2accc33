"""``oceansim-py render profiling``: a run of profiling-sonar swaths, written into a folder.

Writes ``profiling.ply`` (the valid soundings of every ping as a world-frame point cloud, grey = intensity),
``profiling_image.png`` (the first ping's range x beam image, row 0 nearest, column 0 most port; when the
config renders an image),
``profiling_points.npy`` ((pings, n_beams, 3) world soundings, NaN where no bottom), ``profiling_range.npy``
((pings, n_beams) detected ranges) and ``profiling_beam_angles.npy``.
"""

from __future__ import annotations

import argparse
import time

from oceansim_py.commands.acoustic_render import add_arguments, load_inputs
from oceansim_py.commands.render_common import output_folder, warn_if_blind


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig

    p = sub.add_parser("profiling", help="profiling (swath bathymetry) sonar: PLY point cloud, image and .npy")
    add_arguments(p, ProfilingSonarConfig, "holoocean_default")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.errors import ConfigError
    from oceansim_py.io.images import save_npy
    from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig

    config, scene, poses = load_inputs(args, ProfilingSonarConfig, "profiling")
    sonar = ProfilingSonar(config, device=scene.device)
    t0 = time.perf_counter()
    result = sonar.render(scene, poses, frame_index=args.frame_index)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    n_valid = int(data["valid"].sum())
    out = output_folder(args, "profiling")
    warn_if_blind("profiling sonar", float(data["valid"].mean()), scene, poses, config.max_range)
    if result.image is not None:
        result.save_png(out / "profiling_image.png")
    save_npy(out / "profiling_points.npy", data["point_world"])
    save_npy(out / "profiling_range.npy", data["bottom_range"])
    save_npy(out / "profiling_beam_angles.npy", data["beam_angles"])
    if n_valid == 0:
        raise ConfigError(f"no beam saw the bottom within {config.max_range} m of the pose; wrote the arrays to "
                          f"{out} but no profiling.ply; move the sensor closer or raise max_range")
    result.save_ply(out / "profiling.ply")
    print(f"rendered {len(poses)} swath(s) of {config.n_beams} beams ({config.rays_per_pose} rays each) of "
          f"{scene.source} in {seconds:.3f} s (first call includes kernel compilation); {n_valid} soundings")
    print(f"wrote {out / 'profiling.ply'}, {out / 'profiling_points.npy'}, {out / 'profiling_range.npy'}")
    return 0
