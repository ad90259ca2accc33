"""The ``oceansim-py`` command line.

Each subcommand lives in its own module under ``oceansim_py.commands`` and exposes
``register(subparsers) -> None`` (adds its parser and sets ``func``). ``render`` has one module per sensor
registered under the ``render`` group the same way.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from oceansim_py.errors import OceanSimError

#: Top-level subcommand modules, in help order.
COMMANDS = ["generate", "scenes", "describe", "info", "scene_tools"]

#: ``oceansim-py render <target>`` modules, in help order.
RENDER_TARGETS: list[str] = ["sonar", "multibeam", "camera", "sidescan", "profiling", "singlebeam"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="oceansim-py", description="GPU-accelerated underwater sensor rendering")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress and Warp messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"oceansim_py.commands.{name}").register(sub)
    if RENDER_TARGETS:
        render = sub.add_parser("render", help="render one sensor at one pose into a folder")
        rsub = render.add_subparsers(dest="target", metavar="SENSOR")
        rsub.required = True
        for name in RENDER_TARGETS:
            importlib.import_module(f"oceansim_py.commands.render_{name}").register(rsub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.verbose:
        import warp as wp

        wp.config.quiet = False
        if hasattr(wp, "LOG_INFO"):
            wp.config.log_level = wp.LOG_INFO
    try:
        return int(args.func(args) or 0)
    except OceanSimError as exc:
        print(f"oceansim-py: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("oceansim-py: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
