"""``oceansim-py info``: package and Warp versions, devices, kernel cache, built-in scenes."""

from __future__ import annotations

import argparse
import platform


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="versions, Warp devices and kernel cache")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import warp as wp

    from oceansim_py.runtime import cpu_threads, init_warp
    from oceansim_py.scene import builtin_scene_names, scenes_dir
    from oceansim_py.version import __version__

    init_warp()
    print(f"oceansim_py {__version__}  (Python {platform.python_version()}, {platform.machine()})")
    print(f"warp-lang   {wp.config.version}")
    print("devices:")
    for d in wp.get_devices():
        extra = f", {d.total_memory / 2**30:.1f} GiB" if d.is_cuda else f", {cpu_threads()} launch thread(s)"
        print(f"  {d.alias:8s} {d.name}{extra}")
    print(f"kernel cache: {wp.config.kernel_cache_dir}")
    print(_raycast_line())
    print(f"built-in scenes ({scenes_dir()}): {', '.join(builtin_scene_names()) or '(none)'}")
    return 0


def _raycast_line() -> str:
    """Which ray-cast backend a scene on each device gets (``OCEANSIM_RAYCAST_BACKEND``, auto), and Embree's state."""
    import warp as wp

    from oceansim_py.errors import ConfigError
    from oceansim_py.raycast import ENV_VAR, requested_backend, resolve_backend_name
    from oceansim_py.raycast.rtcore import embree_library

    try:
        embree = f"Embree {embree_library().version}"
    except ConfigError as exc:
        embree = f"embree unavailable: {exc}"
    try:
        env = requested_backend()
        chosen = ", ".join(f"{d.alias} -> {resolve_backend_name(d)}" for d in wp.get_devices())
    except ConfigError as exc:
        return f"ray casts: {exc} ({embree})"
    return f"ray casts: {chosen} ({ENV_VAR}={env}; {embree})"
