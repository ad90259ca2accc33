"""``oceansim-py render sidescan``: a run of side-scan pings, written into a folder.

Writes ``sidescan_waterfall.png`` (rows = pings, first at the top; port on the left, starboard on the right,
nadir in the middle), ``sidescan_ground_waterfall.png`` (after the flat-bottom correction), ``sidescan.npy``
((pings, n_range, 2) slant-range intensity, column 0 port), ``sidescan_ground.npy``, ``sidescan_altitude.npy``
and ``sidescan_ranges.npy``.
"""

from __future__ import annotations

import argparse
import time

from oceansim_py.commands.acoustic_render import add_arguments, load_inputs
from oceansim_py.commands.render_common import output_folder, warn_if_blind


def register(sub: argparse._SubParsersAction) -> None:
    from oceansim_py.sensors.sidescan import SidescanSonarConfig

    p = sub.add_parser("sidescan", help="side-scan sonar: waterfall PNGs (slant and ground range) and raw .npy")
    add_arguments(p, SidescanSonarConfig, "holoocean_default")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.io.images import save_npy
    from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig

    config, scene, poses = load_inputs(args, SidescanSonarConfig, "sidescan")
    sonar = SidescanSonar(config, device=scene.device)
    t0 = time.perf_counter()
    result = sonar.render(scene, poses, frame_index=args.frame_index)
    data = result.numpy()
    seconds = time.perf_counter() - t0
    out = output_folder(args, "sidescan")
    warn_if_blind("side-scan sonar", float((data["hit_count"] > 0).mean()), scene, poses, config.max_range)
    result.save_png(out / "sidescan_waterfall.png")
    result.save_png(out / "sidescan_ground_waterfall.png", ground=True)
    save_npy(out / "sidescan.npy", data["intensity"])
    save_npy(out / "sidescan_ground.npy", data["ground_intensity"])
    save_npy(out / "sidescan_altitude.npy", data["altitude"])
    save_npy(out / "sidescan_ranges.npy", data["ranges"])
    print(f"rendered {len(poses)} side-scan ping(s) of {config.range_bins} bins per side ({config.rays_per_pose} "
          f"rays each) of {scene.source} in {seconds:.3f} s (first call includes kernel compilation); "
          f"altitude of the first ping {data['altitude'][0]:.2f} m")
    print(f"wrote {out / 'sidescan_waterfall.png'}, {out / 'sidescan_ground_waterfall.png'}, {out / 'sidescan.npy'}")
    return 0
