"""``oceansim-py verify DIR``: check every file of a dataset against its checksum."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="check every file of a dataset folder against its SHA-256",
                       description="Read every file of a dataset written by 'generate' and report every missing, "
                                   "corrupted, unlisted or symlinked file. Exits 1 when there is any problem.")
    p.add_argument("folder", help="dataset folder (holds manifest.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.dataset.verify import verify_dataset

    problems = verify_dataset(args.folder)
    for line in problems:
        print(line, file=sys.stderr)
    if problems:
        print(f"oceansim-py verify: {args.folder}: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"{args.folder}: every file matches its checksum")
    return 0
