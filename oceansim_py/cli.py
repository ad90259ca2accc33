"""The ``oceansim-py`` command line.

Each subcommand lives in its own module under ``oceansim_py.commands`` and exposes
``register(subparsers) -> None`` (adds its parser and sets ``func``). ``render`` (commands/render.py) has one
subcommand per sensor kind of the registry (oceansim_py/sensors/registry.py) that declares a render target.

Values that are comma lists of numbers may start with a minus sign as typed (``--pose -15,0,-5,0,0,0``):
:func:`join_negative_values` glues such a value to its option before argparse sees it. Warnings raised while
a command runs (:mod:`oceansim_py.diagnostics`) are printed as ``oceansim-py: warning: ...``.

A SIGTERM (``kill PID``, a job scheduler's time limit, ``timeout``) ends a command the way Ctrl-C does
(:class:`Terminated`, exit status 143): the clean-up of the running command happens, so ``generate`` leaves no
manifest temporary and releases its lock, and ``export`` removes its staging folder. Only SIGKILL skips it
(``generate --resume`` then removes what was left). A SIGTERM handler that a program calling :func:`main` set
itself is kept.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import re
import signal
import sys
import threading
import warnings
from typing import Any

from oceansim_py.errors import ConfigError, OceanSimError

#: Top-level subcommand modules, in help order.
COMMANDS = ["generate", "scenes", "scene_tools", "describe", "info", "verify", "export", "view", "render"]

#: A value that argparse would mistake for an option: a minus sign, then numbers separated by commas
#: (``-15,0,-5``, ``-0.5``, ``-1e3,2``).
_NEGATIVE_NUMBER_LIST = re.compile(r"^-(\d|\.\d)[\d.eE+\-]*(,\s*[+\-]?[\d.eE+\-]+)*$")


def join_negative_values(argv: list[str]) -> list[str]:
    """``["--pose", "-15,0,-5,0,0,0"]`` -> ``["--pose=-15,0,-5,0,0,0"]``: a long option without ``=`` followed
    by a number list that starts with ``-`` takes it as its value (argparse alone reads it as an option)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if (token.startswith("--") and "=" not in token and token != "--" and i + 1 < len(argv)
                and _NEGATIVE_NUMBER_LIST.match(argv[i + 1])):
            out.append(f"{token}={argv[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


#: Integer options with an upper bound (option dest -> (flag, lowest, highest)), checked before any work so a
#: slip such as ``--frames 1e8`` is an error, not hours of rendering or an out-of-memory crash.
BOUNDED_OPTIONS = {"frames": ("--frames", 1, 1_000_000)}


def check_bounds(args: argparse.Namespace) -> None:
    """``ConfigError`` naming the flag when a bounded option is out of its range."""
    for dest, (flag, lo, hi) in BOUNDED_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is not None and not lo <= value <= hi:
            raise ConfigError(f"{flag} {value}: must be between {lo} and {hi:,}")


def build_parser() -> argparse.ArgumentParser:
    from oceansim_py.version import __version__

    parser = argparse.ArgumentParser(prog="oceansim-py", description="GPU-accelerated underwater sensor rendering")
    parser.add_argument("--version", action="version", version=f"oceansim-py {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress and Warp messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"oceansim_py.commands.{name}").register(sub)
    return parser


def _show_warning(message: warnings.WarningMessage | Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: object = None, line: str | None = None) -> None:
    """Print a warning the way the CLI prints errors (no file and line of the library code)."""
    print(f"oceansim-py: warning: {message}", file=sys.stderr)


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by a SIGTERM while a command runs (see the module docstring)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(join_negative_values(list(sys.argv[1:] if argv is None else argv)))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.verbose:
        import warp as wp

        wp.config.quiet = False
        if hasattr(wp, "LOG_INFO"):
            wp.config.log_level = wp.LOG_INFO
    previous_show = warnings.showwarning
    warnings.showwarning = _show_warning
    # only the default action (die on the spot) is replaced: a handler the embedding program set is left alone
    handle_term = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    if handle_term:
        signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with warnings.catch_warnings():
            from oceansim_py.diagnostics import OceanSimWarning

            # each distinct warning once per command: a warning raised per batch or per sample (an MSIS rig rate
            # that is not the head's step rate) said the same line once per batch, 8 times for 8 frames
            warnings.simplefilter("default", OceanSimWarning)
            check_bounds(args)
            if args.command == "generate":   # name the flag of a rig that does not load
                from oceansim_py.commands.render_common import flagged
                from oceansim_py.dataset.rig import load_rig

                flagged("--rig", args.rig, lambda: load_rig(args.rig))
            if args.command in ("render", "generate"):
                from oceansim_py.commands.render_common import flagged
                from oceansim_py.runtime import compile_kernels_once

                device = getattr(args, "device", None)
                flagged("--device", device,
                        lambda: compile_kernels_once(device, notify=lambda m: print(m, file=sys.stderr)))
            return int(args.func(args) or 0)
    except OceanSimError as exc:
        print(f"oceansim-py: error: {exc}", file=sys.stderr)
        return 2
    except Terminated:
        print("oceansim-py: terminated (SIGTERM)", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("oceansim-py: interrupted", file=sys.stderr)
        return 130
    finally:
        warnings.showwarning = previous_show
        if handle_term:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


if __name__ == "__main__":
    sys.exit(main())
