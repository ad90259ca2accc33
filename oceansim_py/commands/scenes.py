"""``oceansim-py scenes``: list the built-in scenes, or rewrite them from ``oceansim_py.scene.procedural``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scenes", help="list the built-in scenes (or --regenerate them)")
    p.add_argument("--regenerate", action="store_true", help="rewrite the scenes from their procedural builders")
    p.add_argument("--out", default=None, help="with --regenerate: folder to write into (default: the built-in "
                                               "scenes folder)")
    p.add_argument("--count", action="store_true", help="also load each scene and count its triangles")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.errors import ConfigError
    from oceansim_py.scene import builtin_scene_names, scenes_dir
    from oceansim_py.scene.procedural import BUILTIN_SCENES, write_builtin_scenes

    if args.out is not None and not args.regenerate:   # it was ignored: the list printed, nothing written there
        raise ConfigError(f"--out {args.out}: only with --regenerate (oceansim-py scenes --regenerate --out DIR "
                          f"writes the built-in scenes there)")
    if args.regenerate:
        folder = Path(args.out) if args.out else scenes_dir()
        if folder.exists() and not os.access(folder, os.W_OK):
            raise ConfigError(f"{folder}: not writable; pass --out DIR to write the scenes elsewhere")
        try:
            written = write_builtin_scenes(folder)
        except OSError as exc:
            raise ConfigError(f"{folder}: could not write the scenes ({exc.strerror}); pass --out DIR to write "
                              f"them elsewhere") from exc
        for path in written:
            print(f"wrote {path}")
        return 0
    folder = scenes_dir()
    names = builtin_scene_names()
    print(f"built-in scenes in {folder}:")
    for name in names:
        path = folder / f"{name}.usda"
        description = _description(path)
        line = f"  {name:8s} {description}"
        if args.count:
            from oceansim_py.scene import load_scene

            line += f" [{load_scene(path, device='cpu').num_triangles} triangles]"
        print(line)
    missing = sorted(set(BUILTIN_SCENES) - set(names))
    if missing:
        print(f"missing: {', '.join(missing)} (run `oceansim-py scenes --regenerate`)")
    return 0


def _description(path: Path) -> str:
    """The one-line description from the stage's ``customLayerData`` (read from the text header, without
    loading the stage)."""
    with open(path, encoding="utf-8") as fh:
        for _, line in zip(range(60), fh):
            stripped = line.strip()
            if stripped.startswith("string description"):
                return stripped.split("=", 1)[1].strip().strip('"')
    return ""
