"""``oceansim-py export DATASET --format rosbag2|mcap --out PATH``: a dataset as a ROS 2 bag (needs the ``ros``
extra). See :mod:`oceansim_py.export.bag` for the format and :mod:`oceansim_py.export.ros_messages` for topics,
message types and frames."""

from __future__ import annotations

import argparse
import sys
import warnings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a dataset as a ROS 2 bag (rosbag2 folder or MCAP file)")
    p.add_argument("dataset", help="dataset folder written by `oceansim-py generate`")
    p.add_argument("--format", choices=["rosbag2", "mcap"], default="rosbag2",
                   help="rosbag2: a bag folder (sqlite3 storage); mcap: one .mcap file (default: rosbag2)")
    p.add_argument("--out", required=True, help="the bag folder (rosbag2) or .mcap file to write")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--gps-datum", nargs=3, type=float, default=(0.0, 0.0, 0.0), metavar=("LAT", "LON", "ALT"),
                   help="WGS84 latitude, longitude (deg) and altitude (m) of the world origin, for NavSatFix")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.commands.render_common import flagged
    from oceansim_py.export.bag import ExportWarning, check_gps_datum, export_dataset

    flagged("--gps-datum", " ".join(f"{v:g}" for v in args.gps_datum), lambda: check_gps_datum(args.gps_datum))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ExportWarning)
        summary = export_dataset(args.dataset, args.out, format=args.format, overwrite=args.overwrite,
                                 gps_datum=tuple(args.gps_datum))
    for w in caught:
        print(f"oceansim-py: warning: {w.message}", file=sys.stderr)
    print(f"wrote {summary.path} ({summary.format}): {summary.total_messages} messages on {len(summary.messages)} "
          f"topics, {summary.bytes / 1e6:.2f} MB in {summary.seconds:.2f} s")
    for topic, n in summary.messages.items():
        print(f"  {topic:32s} {n}")
    return 0
