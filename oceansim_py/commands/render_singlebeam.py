"""``oceansim-py render singlebeam``: a run of single-beam / altimeter pings, written into a folder.

Writes ``singlebeam_echogram.png`` (rows = pings, first at the top; columns = range, nearest left),
``singlebeam.npy`` ((pings, n_range) intensity), ``singlebeam_first_return_range.npy`` ((pings,) range of the
nearest hit of the cone, m, NaN without one; an altitude only when looking straight down) and
``singlebeam_ranges.npy``. Mount pitched 90 degrees down (``--pose x,y,z,0,90,0``) for an
altimeter.
"""

from __future__ import annotations

import argparse
import time

from oceansim_py.commands.acoustic_render import add_arguments, load_inputs
from oceansim_py.commands.render_common import output_folder, warn_if_blind


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.singlebeam import SinglebeamSonarConfig

    p = sub.add_parser("singlebeam",
                       help="single-beam sonar / altimeter: echogram PNG, series and first-return range .npy")
    add_arguments(p, SinglebeamSonarConfig, "holoocean_default")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.io.images import save_npy
    from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

    config, scene, poses = load_inputs(args, SinglebeamSonarConfig, "singlebeam")
    sonar = SinglebeamSonar(config, device=scene.device)
    t0 = time.perf_counter()
    result = sonar.render(scene, poses, frame_index=args.frame_index)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    out = output_folder(args, "singlebeam")
    warn_if_blind("single-beam sonar", float((data["hit_count"] > 0).mean()), scene, poses, config.max_range)
    result.save_png(out / "singlebeam_echogram.png")
    save_npy(out / "singlebeam.npy", data["intensity"])
    save_npy(out / "singlebeam_first_return_range.npy", data["first_return_range"])
    save_npy(out / "singlebeam_ranges.npy", data["ranges"])
    print(f"rendered {len(poses)} single-beam ping(s) of {config.range_bins} bins ({config.rays_per_pose} rays "
          f"each) of {scene.source} in {seconds:.3f} s (first call includes kernel compilation); first-return "
          f"range of the first ping {data['first_return_range'][0]:.3f} m")
    print(f"wrote {out / 'singlebeam_echogram.png'}, {out / 'singlebeam.npy'}, "
          f"{out / 'singlebeam_first_return_range.npy'}")
    return 0
