"""What every ``oceansim-py render <sensor>`` command shares: its arguments, the config built from a preset or
YAML plus ``--set`` overrides, the scene (with ``--scale`` / ``--up-axis`` for mesh files) and the sensor pose.

Defaults make ``oceansim-py render KIND`` work with no argument: the built-in :data:`DEFAULT_SCENE`, the folder
``./oceansim_render/KIND`` and the pose from :func:`oceansim_py.scene.framing.suggested_pose_for` (the scene's own
suggestion when the sensor reaches its subject from there, else a pose that frames the subject,
:mod:`oceansim_py.scene.framing`). Errors name the flag as typed (``--pose``, ``--set``, ``--scene`` ...).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import re
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np

from oceansim_py.errors import ConfigError, OceanSimError
from oceansim_py.limits import MAX_FRAME_INDEX
from oceansim_py.sensors.registry import cli_number

POSE_HELP = ("sensor pose x,y,z,roll,pitch,yaw (m, degrees; positive pitch looks down) or x,y,z,qx,qy,qz,qw; "
             "negative values as typed, e.g. --pose -15,0,-5,0,0,0; default: a pose that shows the scene's subject")

#: The scene of ``oceansim-py render KIND`` without ``--scene``.
DEFAULT_SCENE = "wreck"
#: Parent folder of ``oceansim-py render KIND`` without ``--out`` (the kind's name is appended).
DEFAULT_OUT = "oceansim_render"
#: Largest mesh scale accepted per axis (and 1 / the smallest), to catch unit slips such as 1e6.
MAX_SCALE = 1.0e6

T = TypeVar("T")


def add_missing_references_argument(p: argparse.ArgumentParser) -> None:
    """``--missing-references error|warn``: :func:`oceansim_py.load_scene`'s ``missing_references`` (USD)."""
    p.add_argument("--missing-references", default="error", choices=["error", "warn"],
                   help="USD only: a reference, payload or sublayer that does not resolve is an error (default), or "
                        "with 'warn' logged and left out")


def add_render_arguments(p: argparse.ArgumentParser, config_cls: Any, default_preset: str | None) -> None:
    """--scene, --scale, --up-axis, --missing-references, --sea-state, --preset, --config, --set, --pose,
    --frame-index, --device, --out."""
    name = config_cls.__name__
    p.add_argument("--scene", default=DEFAULT_SCENE,
                   help=f"a USD or mesh file, or a built-in scene name (default {DEFAULT_SCENE})")
    p.add_argument("--scale", default=None, metavar="S or SX,SY,SZ",
                   help="mesh files only: metres per file unit, one factor or one per world axis x,y,z (after "
                        "the up-axis conversion), e.g. --scale 0.001 for millimetres (default 1)")
    p.add_argument("--up-axis", default=None, choices=["Y", "Z", "y", "z"],
                   help="mesh files only: the file's up axis (default: Y for glTF/GLB, as its specification says; "
                        "Z for OBJ/STL/PLY/OFF, which have no convention)")
    add_missing_references_argument(p)
    p.add_argument("--sea-state", default=None, metavar="NAME",
                   help="the moving sea surface: a sea-state preset (calm, moderate, rough, harbour_chop) or 'flat' "
                        "for none (default: the scene's own, e.g. the harbour's wind sea; else flat)")
    p.add_argument("--preset", default=default_preset,
                   help=f"{name} preset, one of {', '.join(config_cls.preset_names())} "
                        f"(default: {default_preset or 'the config defaults'})")
    p.add_argument("--config", default=None, help=f"YAML file of {name} fields (overrides --preset)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override one config field, e.g. --set max_range=20 (repeatable)")
    p.add_argument("--pose", default=None, help=POSE_HELP)
    p.add_argument("--frame-index", type=cli_number(int, 0, MAX_FRAME_INDEX, ""), default=0,
                   help="frame number keying the noise (default 0)")
    p.add_argument("--device", default=None, help="Warp device (default: cuda:0 if present, else cpu)")
    p.add_argument("--out", default=None, help=f"output folder, created if missing (default ./{DEFAULT_OUT}/SENSOR)")


def flagged(flag: str, value: Any, action: Callable[[], T]) -> T:
    """``action()``, with an :class:`OceanSimError` re-raised (same class) as ``"FLAG VALUE: message"``."""
    try:
        return action()
    except OceanSimError as exc:
        text = str(exc)
        if text.startswith(flag):
            raise
        if text.startswith(f"{value}: "):            # the message already starts with the value
            text = text[len(f"{value}: "):]
        raise type(exc)(f"{flag} {value}: {text}") from exc


def output_folder(args: argparse.Namespace, kind: str) -> Path:
    """``--out``, else ``./oceansim_render/<kind>``."""
    return Path(args.out) if args.out else Path(DEFAULT_OUT) / kind


def check_output_folder(folder: Path) -> None:
    """``ConfigError`` naming ``--out`` when ``folder`` cannot become the output folder (it, or the nearest of its
    parents that exists, is a file, or that parent is not writable), checked before any rendering."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is a file" if existing == folder else f"lies under {existing}, which is a file"
        raise ConfigError(f"--out {folder}: {what}, not a folder; give a folder path (created if missing)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {folder}: {existing} is not writable; choose another folder")


def build_config(args: argparse.Namespace, config_cls: Any, **extra: Any) -> Any:
    """The config from ``--config`` YAML, else ``--preset``, else the defaults; then ``--set`` and ``extra``
    (fields given by the command's own options, ``None`` values ignored; keys are field names, the error names
    the option ``--field``) on top. Each error names the flag whose value is at fault."""
    from oceansim_py.io.config import load_yaml, parse_yaml

    if args.config:
        base = flagged("--config", args.config, lambda: load_yaml(args.config))
        if not isinstance(base, dict):
            raise ConfigError(f"--config {args.config}: expected a mapping of {config_cls.__name__} fields")
        flag, value = "--config", args.config
    elif args.preset:
        base, flag, value = {"preset": args.preset}, "--preset", args.preset
    else:
        base, flag, value = {}, None, None
    if base:
        flagged(flag, value, lambda: config_cls.from_dict(dict(base), source=f"{flag} {value}"))
    values = dict(base)
    fields = {f.name for f in dataclasses.fields(config_cls)} | set(getattr(config_cls, "DERIVED_KEYS", ()))
    typed: list[tuple[str, str, str]] = []            # (field, flag, value as typed)
    for item in args.set:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set {item}: expected FIELD=VALUE, e.g. --set max_range=20")
        if key not in fields:
            close = difflib.get_close_matches(key, sorted(fields), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"--set {item}: {config_cls.__name__} has no field {key!r}; {hint}valid fields are "
                              f"{sorted(fields)}")
        before = next((t for k, _, t in typed if k == key), None)
        if before is not None:                              # the last one won, silently
            raise ConfigError(f"--set {before} and --set {item}: {key} given twice; give it once")
        values[key] = parse_yaml(text, f"--set {item}")     # malformed YAML: a ConfigError naming the flag
        typed.append((key, "--set", item))
    for key, v in extra.items():
        if v is not None:
            before = next((t for k, _, t in typed if k == key), None)
            if before is not None:                          # the option won over --set, silently
                raise ConfigError(f"--{key.replace('_', '-')} {v} and --set {before}: {key} given twice; give it "
                                  f"once")
            values[key] = v
            typed.append((key, f"--{key.replace('_', '-')}", str(v)))
    try:
        return config_cls.from_dict(values, source=config_cls.__name__)
    except OceanSimError as exc:
        # Blame the options whose field the message names (all the typed ones when it names none of them).
        named = [(flag_, text) for key, flag_, text in typed if re.search(rf"\b{re.escape(key)}\b", str(exc))]
        blamed = " ".join(f"{flag_} {text}" for flag_, text in (named or [(f, t) for _, f, t in typed]))
        if not blamed:
            raise
        raise type(exc)(f"{blamed}: {exc}") from exc


def parse_scale(text: str | None) -> float | tuple[float, float, float]:
    """``--scale``: one factor or three (x, y, z); each finite, in [1/MAX_SCALE, MAX_SCALE]."""
    if text is None:
        return 1.0
    try:
        vals = [float(v) for v in text.split(",")]
    except ValueError as exc:
        raise ConfigError(f"--scale {text}: expected one number or three x,y,z (metres per file unit)") from exc
    if len(vals) not in (1, 3) or not all(np.isfinite(vals)) or not all(1 / MAX_SCALE <= v <= MAX_SCALE
                                                                           for v in vals):
        raise ConfigError(f"--scale {text}: expected one or three finite factors in [{1 / MAX_SCALE:g}, "
                          f"{MAX_SCALE:g}] (metres per file unit)")
    return vals[0] if len(vals) == 1 else (vals[0], vals[1], vals[2])


def load_cli_scene(args: argparse.Namespace) -> Any:
    """The scene of ``--scene`` on ``--device``, with ``--scale`` / ``--up-axis`` for mesh files; warns
    (:class:`~oceansim_py.diagnostics.EmptyViewWarning`) when every triangle lies above the sea surface."""
    import warnings

    from oceansim_py.diagnostics import EmptyViewWarning
    from oceansim_py.runtime import resolve_device
    from oceansim_py.scene import load_scene
    from oceansim_py.scene.sea_surface import FLAT_SEA, sea_state_or_flat

    device = flagged("--device", args.device, lambda: resolve_device(args.device))
    options: dict[str, Any] = {}
    scale = parse_scale(getattr(args, "scale", None))
    if scale != 1.0:
        options["scale"] = scale
    if getattr(args, "up_axis", None):
        options["up_axis"] = args.up_axis.upper()
    if getattr(args, "missing_references", "error") != "error":
        options["missing_references"] = args.missing_references
    if getattr(args, "sea_state", None) is not None:
        sea_state = args.sea_state
        flagged("--sea-state", sea_state, lambda: None if sea_state == FLAT_SEA else sea_state_or_flat(sea_state))
        options["sea_state"] = sea_state
    scene = flagged("--scene", args.scene, lambda: load_scene(args.scene, device=device, **options))
    lo, _ = scene.bounds
    if lo[2] >= scene.surface_z:
        warnings.warn(f"{scene.source}: all geometry lies above the sea surface (lowest point z = {lo[2]:.3g} m, "
                      f"surface z = {scene.surface_z:.3g} m): underwater sensors see nothing of it; check the "
                      f"up axis (--up-axis) and the model's placement", EmptyViewWarning, stacklevel=2)
    return scene


def scene_and_pose(args: argparse.Namespace, kind: str, reach: float,
                   fov_deg: float = 90.0) -> tuple[Any, np.ndarray]:
    """The scene (:func:`load_cli_scene`) and the sensor pose: ``--pose``, else the framing module's
    :func:`~oceansim_py.scene.framing.suggested_pose_for` this kind and ``reach`` (m)."""
    from oceansim_py.poses import parse_pose_string
    from oceansim_py.scene import framing

    scene = load_cli_scene(args)
    if args.pose is not None:
        return scene, flagged("--pose", args.pose, lambda: parse_pose_string(args.pose))
    return scene, framing.suggested_pose_for(scene, kind, reach, fov_deg)


def warn_if_blind(sensor: str, hit_fraction: float, scene: Any, poses: np.ndarray, max_range: float) -> None:
    """:func:`oceansim_py.diagnostics.warn_if_blind` for the CLI (positions from (N, 7) or (7,) poses)."""
    from oceansim_py.diagnostics import warn_if_blind as warn

    warn(sensor, hit_fraction, scene, np.asarray(poses).reshape(-1, 7)[:, :3], max_range)
