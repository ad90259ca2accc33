"""Rig files: a vehicle with sensors, a trajectory, a scene, and how to cut the run into shards.

A rig is YAML (see ``scenes/rigs/*.yaml``)::

    name: pier_survey                 # used in the manifest
    description: one line
    scene: pier                       # built-in scene name, or a path relative to the rig file
    seed: 7                           # run seed of every counter-based noise stream
    frames: 24                        # ticks of the rig clock (or duration: seconds, the ticks starting in it)
    tick_rate_hz: 2.0                 # rig clock; default: the highest sensor rate
    shard_size: 8                     # ticks per shard
    batch_size: 8                     # poses per render call
    trajectory: {type: lawnmower, altitude: 4.0, spacing: 6.0, speed: 1.0}
    sea_state: {preset: moderate}     # optional moving sea surface (SeaStateConfig fields or a preset name;
                                      # flat: none, even where the scene declares one, as the harbour does)
    sea_surface_size: 200.0           # its square patch, m on a side (default 200)
    sea_surface_resolution: 1.0       # its grid spacing, m (default 1)
    sensors:
      - {name: fls, type: imaging_sonar, preset: oceansim_default, rate_hz: 2.0,
         mount: [0.5, 0, 0, 0, 20, 0], config: {max_range: 20.0}, products: [intensity, fan_png]}

``mount`` is the sensor's pose on the vehicle: ``[x, y, z, roll, pitch, yaw]`` (m, degrees, FLU body frame).
A sensor whose per-sample noise depends on its output rate (IMU, magnetometer: ``SensorKind.rate_field``) gets
``rate_hz`` as its config ``rate``, so that a preset keeps its noise density (a 400 Hz IMU on the ``tactical``
preset has twice the preset's 100 Hz per-sample sigma); a config ``rate`` that differs from ``rate_hz`` is
refused.
Every key is checked before rendering starts: an unknown key, a sensor type that does not exist, a rate of 0,
a missing scene, a value of the wrong type: :class:`ConfigError` naming the file and the key. Numbers may be
written as YAML 1.2 exponents (``2e1``). Sizes are bounded (:mod:`oceansim_py.limits`): at most
``MAX_FRAMES`` (10 million) ticks, and samples of each sensor, per run, at most ``MAX_SHARDS`` shards, and the
sensors' memory for one batch (every sensor's ``config.memory_bytes(batch_size)`` summed) must fit in 80 % of
the host's available memory.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import hashlib
import inspect
import json
import math
import typing
import warnings
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from oceansim_py.errors import ConfigError, OceanSimError
from oceansim_py.io.config import coerce_value, did_you_mean, display_path, load_yaml
from oceansim_py.limits import FLOAT32_MAX, MAX_FRAMES, MAX_SEED, MAX_SHARDS, check_count
from oceansim_py.poses import pose_from_euler

_RIG_KEYS = {"sea_state", "sea_surface_size", "sea_surface_resolution",
             "name", "description", "scene", "seed", "frames", "duration", "tick_rate_hz", "shard_size",
             "batch_size", "trajectory", "sensors", "start_time"}
_SENSOR_KEYS = {"name", "type", "preset", "config", "rate_hz", "mount", "products"}


def rigs_dir() -> Path:
    """Folder of the built-in rigs (``scenes/rigs``)."""
    from oceansim_py.scene import scenes_dir

    return scenes_dir() / "rigs"


def builtin_rig_names() -> list[str]:
    return sorted(p.stem for p in rigs_dir().glob("*.yaml"))


@dataclasses.dataclass(frozen=True)
class SensorSpec:
    """One sensor on the rig: its type name, config mapping (validated by the sensor's config class), rate (Hz),
    mount pose (7,) on the vehicle, and the products to write."""

    name: str
    type: str
    config: dict[str, Any]
    rate_hz: float
    mount: tuple[float, ...]
    products: tuple[str, ...]
    sensor_id: int


@dataclasses.dataclass(frozen=True)
class Rig:
    """A validated rig (see the module docstring). ``source`` is the rig file; ``scene`` is resolved to a path
    or a built-in scene name."""

    name: str
    description: str
    source: str
    scene: str
    seed: int
    frames: int
    tick_rate_hz: float
    shard_size: int
    batch_size: int
    start_time: float
    trajectory: dict[str, Any]
    sensors: tuple[SensorSpec, ...]
    #: the moving sea surface: ``{"sea_state": mapping of SeaStateConfig fields, "size": m, "resolution": m}``,
    #: or ``None`` for the flat surface (then absent from ``to_dict``, so flat rigs keep their fingerprints)
    sea_surface: dict[str, Any] | None = None

    @property
    def num_shards(self) -> int:
        return -(-self.frames // self.shard_size)

    def scene_options(self) -> dict[str, Any]:
        """Keyword arguments of ``load_scene`` for this rig's sea surface (none for a flat surface)."""
        from oceansim_py.scene.sea_surface import FLAT_SEA

        if self.sea_surface is None:
            return {}
        if self.sea_surface["sea_state"] == FLAT_SEA:
            return {"sea_state": FLAT_SEA}
        return {"sea_state": dict(self.sea_surface["sea_state"]), "sea_surface_size": self.sea_surface["size"],
                "sea_surface_resolution": self.sea_surface["resolution"]}

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if d["sea_surface"] is None:
            del d["sea_surface"]
        d["sensors"] = [dataclasses.asdict(s) for s in self.sensors]
        return json.loads(json.dumps(d, default=list))

    def fingerprint(self) -> str:
        """SHA-256 of everything that determines the output (not the source path)."""
        d = self.to_dict()
        d.pop("source", None)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()

    def with_overrides(self, frames: int | None = None, scene: str | None = None) -> "Rig":
        out = self
        if frames is not None:
            frames = _number(frames, "--frames", kind=int)
            _check_sizes(frames, out.shard_size, out.tick_rate_hz, out.sensors, "--frames")
            out = dataclasses.replace(out, frames=frames)
        if scene is not None:
            out = dataclasses.replace(out, scene=_resolve_scene(scene, Path.cwd(), "--scene"))
        return out


def _where(source: str, key: str) -> str:
    return f"{source}: {key}"


def _number(value: Any, where: str, kind: type = float, positive: bool = True, allow_zero: bool = False) -> Any:
    """``value`` as a finite ``kind`` (numbers written as text, e.g. ``"2e1"``, accepted), ``> 0`` when
    ``positive`` (``>= 0`` with ``allow_zero``); else a ``ConfigError`` naming ``where``."""
    try:
        value = coerce_value(value, float, where)
    except ConfigError:
        pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}: expected a finite number, got {value!r}")
    if kind is int and not float(value).is_integer():
        raise ConfigError(f"{where}: expected an integer, got {value!r}")
    if positive and (value < 0 or (value == 0 and not allow_zero)):
        raise ConfigError(f"{where}: must be {'>= 0' if allow_zero else '> 0'}, got {kind(value)!r}")
    return kind(value)


def _check_sizes(frames: int, shard_size: int, tick: float, sensors: Any, where: str) -> None:
    """Bound the run (``oceansim_py.limits``): ticks, shards, and the samples of every sensor."""
    check_count(frames, MAX_FRAMES, f"{where}: frames", "split the run into several rigs or lower the rate")
    check_count(-(-frames // shard_size), MAX_SHARDS, f"{where}: shards ({frames} frames / shard_size "
                f"{shard_size})", "raise shard_size")
    for s in sensors:
        samples = math.ceil(frames * (s.rate_hz / tick) - 1e-9)
        check_count(samples, MAX_FRAMES, f"{where}: samples of sensor {s.name!r} ({frames} ticks at "
                    f"{tick:g} Hz, sensor at {s.rate_hz:g} Hz)", "lower its rate_hz or the run's length")


def _check_memory(configs: list[tuple[str, Any]], batch_size: int, source: str) -> None:
    """Refuse a rig whose sensors need more than 80 % of the host's available memory for one batch."""
    from oceansim_py.runtime import available_memory_bytes

    need = {name: int(cfg.memory_bytes(batch_size)) for name, cfg in configs}
    total, free = sum(need.values()), available_memory_bytes("cpu")
    if total > 0.8 * free:
        worst = max(need, key=need.__getitem__)
        raise ConfigError(f"{source}: batch_size: rendering {batch_size} poses per call needs {total / 2**30:.2f} GiB "
                          f"for the sensors (largest: {worst!r}, {need[worst] / 2**30:.2f} GiB) but only "
                          f"{free / 2**30:.2f} GiB of memory is available; lower batch_size or the sensors' "
                          f"resolution")


def _resolve_scene(scene: Any, base: Path, where: str) -> str:
    from oceansim_py.scene import builtin_scene_names

    if not isinstance(scene, str) or not scene:
        raise ConfigError(f"{where}: expected a scene file or a built-in scene name, got {scene!r}")
    p = Path(scene)
    if p.suffix == "" and p.parent == Path(".") and scene in builtin_scene_names():
        return scene
    path = p if p.is_absolute() else (base / p)
    if not path.is_file():
        if p.suffix == "":
            raise ConfigError(f"{where}: {scene!r} is not a built-in scene ({builtin_scene_names()}) or a file")
        raise ConfigError(f"{where}: scene file {path} does not exist")
    return str(path.resolve())


def _mount(value: Any, where: str) -> tuple[float, ...]:
    if value is None:
        return tuple(float(v) for v in pose_from_euler(0, 0, 0))
    if not isinstance(value, (list, tuple)) or len(value) not in (6, 7):
        raise ConfigError(f"{where}: expected [x, y, z, roll, pitch, yaw] (m, deg) or [x, y, z, qx, qy, qz, qw]")
    vals = [_number(v, where, positive=False) for v in value]
    if any(abs(v) > FLOAT32_MAX for v in vals[:3]):
        raise ConfigError(f"{where}: the position {vals[:3]} lies beyond the float32 range (|value| <= "
                          f"{FLOAT32_MAX:.4g} m) the sensors' poses are stored in; give the offset in metres")
    pose = pose_from_euler(*vals) if len(vals) == 6 else np.asarray(vals, dtype=np.float64)
    n = float(np.linalg.norm(pose[3:]))
    if abs(n - 1.0) > 1e-3:
        raise ConfigError(f"{where}: the mount quaternion must be unit (norm {n:.4f})")
    pose[3:] /= n
    return tuple(float(v) for v in pose)


def parse_rig(data: Any, source: str, base: Path | None = None) -> Rig:
    """Validate a rig mapping (from YAML) into a :class:`Rig`; ``base`` resolves relative scene/CSV paths."""
    from oceansim_py.sensors import registry

    base = base or Path.cwd()
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: a rig file must hold a mapping of {sorted(_RIG_KEYS)}")
    if "device" in data:     # was accepted and ignored: a rig's 'device: cpu' rendered on the GPU
        raise ConfigError(f"{_where(source, 'device')}: a rig does not choose the device, the run does; remove it "
                          f"and pass --device to oceansim-py generate (generate(device=...))")
    unknown = sorted((k for k in data if k not in _RIG_KEYS), key=str)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {unknown}; valid keys are {sorted(_RIG_KEYS)}"
                          f"{did_you_mean(unknown, _RIG_KEYS)}")
    for key in ("name", "description"):
        if key in data and not isinstance(data[key], str):
            raise ConfigError(f"{_where(source, key)}: expected text, got {data[key]!r}")
    for required in ("scene", "trajectory", "sensors"):
        if required not in data:
            raise ConfigError(f"{source}: missing key '{required}'")
    if "frames" in data and "duration" in data:
        raise ConfigError(f"{source}: give 'frames' or 'duration', not both")
    sensors_raw = data["sensors"]
    if not isinstance(sensors_raw, list) or not sensors_raw:
        raise ConfigError(f"{_where(source, 'sensors')}: expected a non-empty list of sensors")
    sensors = []
    configs: list[tuple[str, Any]] = []
    names: set[str] = set()
    for i, s in enumerate(sensors_raw):
        key = f"sensors[{i}]"
        if not isinstance(s, Mapping):
            raise ConfigError(f"{_where(source, key)}: expected a mapping of {sorted(_SENSOR_KEYS)}")
        unknown = sorted((k for k in s if k not in _SENSOR_KEYS), key=str)
        if unknown:
            raise ConfigError(f"{_where(source, key)}: unknown key(s) {unknown}; valid keys are "
                              f"{sorted(_SENSOR_KEYS)}{did_you_mean(unknown, _SENSOR_KEYS)}")
        stype = s.get("type")
        if isinstance(stype, str) and stype not in registry.kind_names():   # an alias: the kind's own name
            stype = next((k.name for k in registry.all_kinds(on_error="skip") if stype in k.aliases), stype)
        if not isinstance(stype, str) or stype not in registry.kind_names():
            raise ConfigError(f"{_where(source, key + '.type')}: unknown sensor type {stype!r}; types are "
                              f"{sorted(registry.kind_names())}")
        kind = registry.get(stype)
        name = s.get("name", f"{stype}{i}")
        if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(f"{_where(source, key + '.name')}: use letters, digits, '_' or '-', got {name!r}")
        if name in names:
            raise ConfigError(f"{_where(source, key + '.name')}: duplicate sensor name {name!r}")
        names.add(name)
        if "rate_hz" not in s:
            raise ConfigError(f"{_where(source, key)}: missing key 'rate_hz' (samples per second)")
        rate = _number(s["rate_hz"], _where(source, key + ".rate_hz"))
        if not isinstance(s.get("config", {}) or {}, Mapping):
            raise ConfigError(f"{_where(source, key + '.config')}: expected a mapping of config fields")
        cfg = dict(s.get("config") or {})
        if "preset" in s and "preset" in cfg and cfg["preset"] != s["preset"]:   # the config's won, silently
            raise ConfigError(f"{_where(source, key + '.config.preset')}: {cfg['preset']!r}, but {key}.preset is "
                              f"{s['preset']!r}; give the preset once")
        cfg = _rate_from_rig(kind, cfg, rate, name, _where(source, key + ".config"))
        if "preset" in s:
            cfg = {"preset": s["preset"], **cfg}
        try:
            configs.append((name, kind.make_config(cfg, f"{source}: {key}.config")))
        except OceanSimError as exc:      # a validate() error names the field, not where the config came from
            text = str(exc)
            raise ConfigError(text if text.startswith(source) else f"{_where(source, key + '.config')}: {text}") \
                from exc
        products = s.get("products", kind.default_products)
        if isinstance(products, str) or not isinstance(products, (list, tuple)) \
                or not all(isinstance(p, str) for p in products):
            raise ConfigError(f"{_where(source, key + '.products')}: expected a list, e.g. "
                              f"{list(kind.products)}")
        listed, products = products, _current_products(kind, products, _where(source, key + ".products"))
        if twice := sorted({p for p in products if products.count(p) > 1}):
            former = sorted({old for old in listed if old not in twice and kind.renamed_products().get(old) in twice})
            raise ConfigError(f"{_where(source, key + '.products')}: {twice} listed more than once"
                              + (f" ({former} the former name(s) of the same product)" if former else ""))
        bad = sorted(set(products) - set(kind.products))
        if bad or not products:
            raise ConfigError(f"{_where(source, key + '.products')}: unknown product(s) {bad or '(none given)'} "
                              f"for {stype}; choose from {list(kind.products)}")
        sensors.append(SensorSpec(name, stype, cfg, rate, _mount(s.get("mount"), _where(source, key + ".mount")),
                                  tuple(products), sensor_id=i))
    max_rate = max(s.rate_hz for s in sensors)
    tick = _number(data.get("tick_rate_hz", max_rate), _where(source, "tick_rate_hz"))
    if "duration" in data:
        ticks = _number(data["duration"], _where(source, "duration")) * tick
        check_count(ticks, MAX_FRAMES, _where(source, "duration") + f": frames at {tick:g} Hz",
                    "shorten the duration, lower the rates or split the run")
        # the ticks that start within the duration, t = k / tick < duration: ceil (a round half to even made 2.5 s at
        # 1 Hz two frames and 3.5 s four); the tolerance keeps a whole count (2 s at 10 Hz: 20) whole
        frames = max(1, math.ceil(ticks - 1e-9 * max(1.0, ticks)))
    else:
        frames = _number(data.get("frames", 16), _where(source, "frames"), kind=int)
    shard_size = _number(data.get("shard_size", 16), _where(source, "shard_size"), kind=int)
    batch_size = _number(data.get("batch_size", 8), _where(source, "batch_size"), kind=int)
    check_count(batch_size, MAX_FRAMES, _where(source, "batch_size"), "lower batch_size")
    seed = _number(data.get("seed", 0), _where(source, "seed"), kind=int, allow_zero=True)
    check_count(seed, MAX_SEED, _where(source, "seed"), f"use a seed in [0, {MAX_SEED}]")
    _check_sizes(frames, shard_size, tick, sensors, source)
    _check_memory(configs, batch_size, source)
    traj = data["trajectory"]
    if not isinstance(traj, Mapping) or "type" not in traj:
        raise ConfigError(f"{_where(source, 'trajectory')}: expected a mapping with 'type' "
                          f"(one of {sorted(TRAJECTORY_TYPES)})")
    traj = dict(traj)
    _check_trajectory(traj, source, base)
    name = data.get("name", Path(source).stem)
    return Rig(
        name=str(name), description=str(data.get("description", "")), source=source,
        scene=_resolve_scene(data["scene"], base, _where(source, "scene")),
        seed=seed, frames=frames, tick_rate_hz=tick, shard_size=shard_size, batch_size=batch_size,
        start_time=_number(data.get("start_time", 0.0), _where(source, "start_time"), positive=False),
        trajectory=traj, sensors=tuple(sensors), sea_surface=_sea_surface(data, source))


def _rate_from_rig(kind: Any, cfg: dict[str, Any], rate_hz: float, name: str, where: str) -> dict[str, Any]:
    """``cfg`` with the sensor kind's ``rate_field`` (an IMU's ``rate``, Hz) set to the rig's ``rate_hz`` when the
    config does not set it, so that a preset's per-sample noise follows the rate the rig samples at
    (:func:`oceansim_py.sensors.nav_common.follow_density_rate`); a different rate set in the config is a
    ``ConfigError`` naming both values and the sensor."""
    field = kind.rate_field
    if field is None:
        return cfg
    if field not in cfg:
        return {**cfg, field: rate_hz}
    own = _number(cfg[field], f"{where}.{field}")
    if own != rate_hz:
        raise ConfigError(f"{where}.{field}: sensor {name!r} has {field} {own:g} Hz in its config but rate_hz "
                          f"{rate_hz:g} Hz; the rig samples it at rate_hz, so remove '{field}' from its config "
                          f"(rate_hz sets it) or make the two equal")
    return cfg


def _sea_surface(data: Mapping[str, Any], source: str) -> dict[str, Any] | None:
    """The rig's ``sea_state`` / ``sea_surface_size`` / ``sea_surface_resolution``, validated (``None``: the scene's
    own, flat unless its stage declares a sea state; ``{"sea_state": "flat"}``: flat even then)."""
    from oceansim_py.scene.sea_surface import FLAT_SEA, check_patch, sea_state_or_flat

    if "sea_state" not in data:
        extra = sorted(k for k in ("sea_surface_size", "sea_surface_resolution") if k in data)
        if extra:
            raise ConfigError(f"{_where(source, extra[0])}: applies to a moving sea surface; add 'sea_state' "
                              f"(e.g. {{preset: moderate}}) or remove it")
        return None
    raw = data["sea_state"]
    if raw == FLAT_SEA:
        if extra := sorted(k for k in ("sea_surface_size", "sea_surface_resolution") if k in data):
            raise ConfigError(f"{_where(source, extra[0])}: applies to a moving sea surface, not sea_state: flat; "
                              f"remove it")
        return {"sea_state": FLAT_SEA}
    sea_state_or_flat(raw, _where(source, "sea_state"))
    spec = {"preset": raw} if isinstance(raw, str) else raw
    size = _number(data.get("sea_surface_size", 200.0), _where(source, "sea_surface_size"))
    resolution = _number(data.get("sea_surface_resolution", 1.0), _where(source, "sea_surface_resolution"))
    check_patch(size, resolution, _where(source, "sea_surface_size"), _where(source, "sea_surface_resolution"))
    return {"sea_state": dict(spec), "size": size, "resolution": resolution}


def _current_products(kind: Any, products: Any, where: str) -> list[str]:
    """``products`` with former product names replaced by the current ones (a ``DeprecationWarning`` each)."""
    renamed = kind.renamed_products()
    for old in (p for p in products if p in renamed):
        warnings.warn(f"{where}: product {old!r} of {kind.name} is now called {renamed[old]!r}; rename it in the "
                      f"rig", DeprecationWarning, stacklevel=3)
    return [renamed.get(p, p) for p in products]


def load_rig(path: str | Path) -> Rig:
    """Load and validate a rig file, or a built-in rig by name (``oceansim-py generate --rig pier_survey``)."""
    p = Path(path)
    if not p.is_file() and p.suffix == "" and p.parent == Path("."):
        candidate = rigs_dir() / f"{p.name}.yaml"
        if not candidate.is_file():
            raise ConfigError(f"{display_path(path)}: neither a rig file nor a built-in rig ({builtin_rig_names()})")
        p = candidate
    return parse_rig(load_yaml(p), display_path(p), p.resolve().parent)


#: trajectory type -> Trajectory constructor name; its keyword arguments are the rig's keys.
TRAJECTORY_TYPES = {"lawnmower": "lawnmower", "orbit": "orbit", "transect": "transect", "csv": "from_csv",
                    "usd_prim": "from_usd_prim"}


#: Trajectory types built (and so fully validated) when the rig is loaded: they need no scene or file.
_SCENE_FREE_TYPES = ("orbit", "transect")


def _check_trajectory(traj: dict[str, Any], source: str, base: Path) -> None:
    from oceansim_py.trajectory import Trajectory

    kind = traj["type"]
    if not isinstance(kind, str) or kind not in TRAJECTORY_TYPES:
        raise ConfigError(f"{source}: trajectory.type: unknown type {kind!r}; choose one of "
                          f"{sorted(TRAJECTORY_TYPES)}")
    ctor = getattr(Trajectory, TRAJECTORY_TYPES[kind])
    params = inspect.signature(ctor).parameters
    allowed = {k for k in params if k not in ("cls", "self", "scene", "bounds")}
    unknown = sorted((k for k in traj if k != "type" and k not in allowed), key=str)
    if unknown:
        raise ConfigError(f"{source}: trajectory: unknown key(s) {unknown} for type {kind!r}; valid keys are "
                          f"{sorted(allowed)}{did_you_mean(unknown, allowed)}")
    missing = [k for k in allowed if params[k].default is inspect.Parameter.empty and k not in traj]
    if missing:   # else a TypeError's words ("from_csv() missing 1 required positional argument") at render time
        raise ConfigError(f"{source}: trajectory: type {kind!r} needs the key(s) {sorted(missing)}; valid keys are "
                          f"{sorted(allowed)}")
    hints = typing.get_type_hints(ctor)
    for k in list(traj):
        if k != "type":
            traj[k] = coerce_value(traj[k], _rig_hint(hints.get(k, Any)), f"{source}: trajectory.{k}")
    if kind in _SCENE_FREE_TYPES:
        # these need no scene: build them now so that a bad value or size is refused before any rendering
        try:
            ctor(**{k: v for k, v in traj.items() if k != "type"})
        except ConfigError as exc:
            raise ConfigError(f"{source}: trajectory: {exc}") from None
        except TypeError as exc:
            raise ConfigError(f"{source}: trajectory: {exc}") from None
    for key in ("path",):
        if key in traj and kind in ("csv", "usd_prim"):
            p = Path(traj[key])
            p = p if p.is_absolute() else base / p
            if not p.is_file():
                raise ConfigError(f"{source}: trajectory.{key}: file {p} does not exist")
            traj[key] = str(p.resolve())


def _rig_hint(hint: Any) -> Any:
    """The type a rig value is coerced to for a trajectory argument annotated ``hint``: a ``Sequence[float]``
    (a point) is a tuple of floats, ``Any`` (a scene) is left alone."""
    if typing.get_origin(hint) is collections.abc.Sequence:
        return tuple[typing.get_args(hint) + (...,)] if typing.get_args(hint) else tuple
    return hint
