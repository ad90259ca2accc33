"""The sensor registry: one self-describing :class:`SensorKind` per sensor, from which the CLI (``oceansim-py
render KIND``), the rig format of ``generate``, the dataset writer and reader, the manifest's units,
``oceansim-py describe KIND`` and the benchmarks are derived.

A sensor module declares, at its end, ``SENSOR_KIND = SensorKind(...)``: its config class, the sensor class and
how to build it, how it renders a batch of poses (:class:`Batch`), the schema of what it writes
(:class:`Product`: array names, storage, dtype, per-sample shape in terms of the config, unit, frame), the
products a rig writes by default, the manifest metadata a reader needs, and (optionally) its ``oceansim-py
render`` target (:class:`CliTarget`: subcommand name, default preset, how the pose is chosen, extra options,
what it writes). Presets are the config class's ``PRESETS``.

Where kinds come from, in this order:

1. the built-in kinds (:data:`BUILTIN_MODULES`: kind name -> module), imported on first use;
2. kinds added at run time with :func:`register` (a test, a notebook);
3. third-party packages, through the entry-point group :data:`ENTRY_POINT_GROUP` (``oceansim_py.sensors``):
   ``my_kind = my_package.my_module:SENSOR_KIND`` (a :class:`SensorKind`, or a callable returning one). Entry
   points are listed without importing anything and loaded when their kind is first asked for; one that fails
   to import or does not hold a :class:`SensorKind` is a :class:`~oceansim_py.errors.ConfigError` naming the
   entry point and its package.

Names: :func:`get` accepts a kind's name or one of its ``aliases`` (``sonar`` for ``imaging_sonar``, the
``oceansim-py render`` target of old). See docs/ARCHITECTURE.md, "How to add a sensor".
"""

from __future__ import annotations

import dataclasses
import importlib
import threading
import warnings
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from oceansim_py.errors import ConfigError

#: The entry-point group third-party sensors register under.
ENTRY_POINT_GROUP = "oceansim_py.sensors"

#: Built-in kinds: name -> module declaring ``SENSOR_KIND`` (imported when the kind is first used).
BUILTIN_MODULES: dict[str, str] = {
    "imaging_sonar": "oceansim_py.sensors.imaging_sonar",
    "multibeam": "oceansim_py.sensors.multibeam",
    "camera": "oceansim_py.sensors.camera",
    "dvl": "oceansim_py.sensors.dvl",
    "imu": "oceansim_py.sensors.imu",
    "barometer": "oceansim_py.sensors.barometer",
    "gps": "oceansim_py.sensors.gps",
    "pose": "oceansim_py.sensors.pose_sensor",
    "sidescan": "oceansim_py.sensors.sidescan",
    "profiling": "oceansim_py.sensors.profiling_sonar",
    "singlebeam": "oceansim_py.sensors.singlebeam",
    "magnetometer": "oceansim_py.sensors.magnetometer",
    "usbl": "oceansim_py.sensors.usbl",
    "lbl": "oceansim_py.sensors.lbl",
    "acoustic_modem": "oceansim_py.sensors.acoustic_modem",
    "optical_modem": "oceansim_py.sensors.optical_modem",
    "msis": "oceansim_py.sensors.msis",
}

#: How a product is stored in a dataset: one ``.npy`` (``.npz`` with ``--compress``) per sample, one 8-bit
#: ``.png`` per sample, or columns of the shard's ``samples.csv``.
ARRAY, IMAGE, TABLE = "npy", "png", "table"
_STORAGE = (ARRAY, IMAGE, TABLE)

#: ``CliTarget.poses``: one pose (looking sensors) or a straight run of pings (survey sensors).
SINGLE, RUN = "single", "run"

Dim = int | str


@dataclasses.dataclass(frozen=True)
class Product:
    """One array a sensor writes per sample.

    ``shape`` is the per-sample shape: each entry an int, the name of a config attribute (``"range_bins"``,
    ``"n_beams"``), or ``"*"`` for a size the config alone does not fix (a display view). ``unit`` goes into the
    manifest (``arrays.<name>.unit``); ``frame`` names the coordinate frame of vectors and points (empty when
    the product has none). ``view`` makes the product from the render result and the config when it is not an
    entry of the result's arrays (8-bit display views). ``aliases`` are former names: a rig may still list
    them (with a ``DeprecationWarning``) and the dataset reader returns the product under them too.
    """

    name: str
    storage: str
    dtype: str
    unit: str
    shape: tuple[Dim, ...] = ()
    frame: str = ""
    view: Callable[[Any, Any], np.ndarray] | None = None
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.storage not in _STORAGE:
            raise ConfigError(f"Product {self.name!r}: storage must be one of {_STORAGE}, got {self.storage!r}")
        np.dtype(self.dtype)

    def shape_for(self, config: Any) -> tuple[int | None, ...]:
        """The per-sample shape for ``config`` (``None`` for ``"*"`` dimensions)."""
        return tuple(None if d == "*" else int(getattr(config, d)) if isinstance(d, str) else int(d)
                     for d in self.shape)

    def shape_text(self) -> str:
        """The shape as written in the schema, e.g. ``(range_bins, n_beams)``; ``()`` for a scalar."""
        inner = ", ".join(str(d) for d in self.shape)
        return f"({inner},)" if len(self.shape) == 1 else f"({inner})"


@dataclasses.dataclass(frozen=True)
class Batch:
    """What a sensor renders: ``poses`` (B, 7) world sensor poses ``[px, py, pz, qx, qy, qz, qw]``, their
    ``times`` (B,) in s, the first sample's ``frame_index`` (keys the noise; sample i is frame_index + i), the
    ``scene``, and ``trajectory``, the sensor's own trajectory (vehicle * mount) for kinds that need velocities
    or accelerations (``SensorKind.uses_trajectory``), else ``None``. ``rate_hz``: the sensor's sample rate in
    the rig (Hz; sample m at ``start_time + m / rate_hz``), for kinds that report what happened between samples
    (modem events), else ``None``."""

    scene: Any
    poses: np.ndarray
    times: np.ndarray
    frame_index: int
    trajectory: Any = None
    rate_hz: float | None = None


@dataclasses.dataclass(frozen=True)
class CliOption:
    """An extra option of the kind's ``oceansim-py render`` target: ``argparse`` ``add_argument(*flags,
    **kwargs)``. ``config_field`` names the config field the option sets (``--water`` -> ``water``); without
    one the option is read by the target's ``render`` / ``write`` from ``args``."""

    flags: tuple[str, ...]
    kwargs: Mapping[str, Any]
    config_field: str | None = None


def cli_number(kind: type, lo: float, hi: float, unit: str) -> Callable[[str], Any]:
    """An ``argparse`` ``type`` for a :class:`CliOption`: the text as ``kind`` (``int`` or ``float``), finite and
    within [lo, hi] ``unit``, else an ``argparse`` error naming the option, before any work starts."""
    import argparse
    import math

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'a whole' if kind is int else 'a'} number") from exc
        if not (math.isfinite(value) and lo <= value <= hi):
            bounds = f"{lo:,} and {hi:,}" if kind is int else f"{lo:g} and {hi:g}"
            raise argparse.ArgumentTypeError(f"{text!r}: must be between {bounds}{' ' + unit if unit else ''}")
        return value

    return parse


@dataclasses.dataclass(frozen=True)
class CliOutput:
    """What a target's ``write`` gets: the ``kind``, the parsed ``args``, the ``config``, the ``sensor``, the ``scene``, the
    (N, 7) ``poses``, the render ``result`` and its arrays (``data``, from ``result.numpy()``), the output folder ``out`` (created
    on demand by the writers), the target name as typed on the command line, and the render ``seconds``."""

    kind: "SensorKind"
    args: Any
    config: Any
    sensor: Any
    scene: Any
    poses: np.ndarray
    result: Any
    data: dict[str, np.ndarray]
    out: Any
    target: str
    seconds: float


@dataclasses.dataclass(frozen=True)
class CliTarget:
    """How ``oceansim-py render TARGET`` renders the kind (commands/render.py does the rest).

    ``name``: the subcommand (the kind's name when empty); ``poses``: :data:`SINGLE` (``--pose`` or a pose that
    frames the scene's subject) or :data:`RUN` (a straight run of ``--pings`` poses ``--step`` apart);
    ``framing``: the framing kind of :mod:`oceansim_py.scene.framing` used without ``--pose`` (a looking kind
    for SINGLE, a survey kind for RUN); ``reach``: ``config -> (reach m, horizontal field of view deg)`` for
    the framing; ``render``: ``(sensor, scene, poses, frame_index, args) -> result`` when the plain
    ``sensor.render(scene, poses, frame_index=...)`` is not enough; ``write``: ``CliOutput -> lines to print``
    (default: every array product of the schema as ``TARGET_<product>.npy``).
    """

    help: str
    default_preset: str | None = None
    name: str = ""
    poses: str = SINGLE
    framing: str = "camera"
    reach: Callable[[Any], tuple[float, float]] = lambda c: (float(c.max_range), 90.0)
    options: tuple[CliOption, ...] = ()
    render: Callable[..., Any] | None = None
    write: Callable[[CliOutput], list[str]] | None = None


def _default_build(kind: "SensorKind", config: Any, device: Any, sensor_id: int) -> Any:
    return kind.sensor_class(config, device=device, sensor_id=sensor_id)


def _default_render(sensor: Any, batch: Batch) -> Any:
    return sensor.render(batch.scene, batch.poses, frame_index=batch.frame_index)


def _default_arrays(result: Any, wanted: Sequence[str]) -> dict[str, np.ndarray]:
    return result.numpy()


@dataclasses.dataclass(frozen=True)
class SensorKind:
    """A sensor as the rest of the package sees it (module docstring).

    ``build(config, device, sensor_id) -> sensor`` (default ``sensor_class(config, device=, sensor_id=)``);
    ``render(sensor, batch) -> result`` (default ``sensor.render(scene, poses, frame_index=)``);
    ``arrays(result, wanted) -> {name: array}`` the result's arrays with the batch axis first (default
    ``result.numpy()``); ``metadata(config) -> dict`` what the manifest records for a reader (ranges,
    intrinsics, ...); ``check(config, products, where)`` refuses a product list the config cannot make.
    ``rate_field``: the config field (Hz) that a dataset rig sets from the sensor's ``rate_hz`` (a sensor whose
    per-sample noise depends on its output rate, :func:`~oceansim_py.sensors.nav_common.follow_density_rate`),
    or ``None``.
    """

    name: str
    description: str
    config_class: type
    sensor_class: type
    schema: tuple[Product, ...]
    default_products: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    uses_trajectory: bool = False
    build: Callable[..., Any] | None = None
    render: Callable[[Any, Batch], Any] = _default_render
    arrays: Callable[[Any, Sequence[str]], dict[str, np.ndarray]] = _default_arrays
    metadata: Callable[[Any], dict[str, Any]] = lambda config: {}
    check: Callable[[Any, tuple[str, ...], str], None] | None = None
    cli: CliTarget | None = None
    rate_field: str | None = None

    def __post_init__(self) -> None:
        names = [p.name for p in self.schema]
        if len(set(names)) != len(names):
            raise ConfigError(f"sensor kind {self.name!r}: duplicate product names in {names}")
        missing = sorted(set(self.default_products) - set(names))
        if missing or not self.default_products:
            raise ConfigError(f"sensor kind {self.name!r}: default_products {missing or '(none)'} are not in its "
                              f"schema {names}")

    # --- views of the schema -------------------------------------------------------------------------------
    @property
    def type_name(self) -> str:
        """The kind's name as a rig's ``type`` and the manifest's sensor ``type`` write it."""
        return self.name

    @property
    def products(self) -> dict[str, str]:
        """Product name -> storage (:data:`ARRAY`, :data:`IMAGE` or :data:`TABLE`)."""
        return {p.name: p.storage for p in self.schema}

    @property
    def units(self) -> dict[str, str]:
        """Product name -> unit (and frame), as the manifest records it."""
        return {p.name: p.unit for p in self.schema}

    def product(self, name: str) -> Product:
        for p in self.schema:
            if p.name == name:
                return p
        raise ConfigError(f"sensor kind {self.name!r} has no product {name!r}; products are {list(self.products)}")

    def renamed_products(self) -> dict[str, str]:
        """Former product name -> current name."""
        return {alias: p.name for p in self.schema for alias in p.aliases}

    def preset_names(self) -> list[str]:
        return list(self.config_class.preset_names())

    # --- behaviour ----------------------------------------------------------------------------------------------
    def make_config(self, values: Mapping[str, Any], source: str) -> Any:
        """The validated config from a mapping (``preset: NAME`` allowed); errors name ``source``."""
        return self.config_class.from_dict(dict(values), source)

    def make_sensor(self, config: Any, device: Any = None, sensor_id: int = 0) -> Any:
        return (self.build or (lambda c, d, i: _default_build(self, c, d, i)))(config, device, sensor_id)

    def products_of(self, result: Any, config: Any, wanted: Sequence[str]) -> dict[str, np.ndarray]:
        """The ``wanted`` products of a render result, batch axis first, each in its schema dtype. A product whose
        per-sample size varies (``"*"`` in its shape, e.g. a modem's events) comes as an object array holding one
        array per sample."""
        arrays = self.arrays(result, wanted)
        out: dict[str, np.ndarray] = {}
        for name in wanted:
            p = self.product(name)
            value = p.view(result, config) if p.view is not None else arrays.get(name)
            if isinstance(value, np.ndarray) and value.dtype == object:   # ragged: one array per sample (events)
                out[name] = np.empty(len(value), dtype=object)
                out[name][:] = [np.asarray(v).astype(p.dtype, copy=False) for v in value]
            elif value is not None:
                out[name] = np.asarray(value).astype(p.dtype, copy=False)
        return out

    def describe(self) -> str:
        """The kind's schema as text (``oceansim-py describe KIND``)."""
        lines = [f"{self.name}: {self.description}"]
        if self.aliases:
            lines.append(f"  aliases: {', '.join(self.aliases)}")
        lines.append(f"  config: {self.config_class.__name__}; presets: {', '.join(self.preset_names()) or '-'}")
        if self.cli is not None:
            lines.append(f"  render: oceansim-py render {self.cli.name or self.name}"
                         + (f" (default preset {self.cli.default_preset})" if self.cli.default_preset
                            else f" (default: {self.config_class.__name__}() without a preset)"))
        lines.append(f"  products (default: {', '.join(self.default_products)}):")
        for p in self.schema:
            frame = f"; frame: {p.frame}" if p.frame else ""
            lines.append(f"    {p.name:<18} {p.storage:<5} {p.dtype:<9} {p.shape_text():<22} {p.unit}{frame}")
        return "\n".join(lines)


# --- the registry ------------------------------------------------------------------------------------------------
_lock = threading.RLock()
_loaded: dict[str, SensorKind] = {}      # name -> kind (built-ins and entry points once loaded, and registered)
_registered: set[str] = set()            # names added with register()


def _entry_points() -> dict[str, Any]:
    """The group's entry points by name (nothing imported)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _load_entry_point(ep: Any) -> SensorKind:
    dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
    where = f"sensor plugin {ep.name!r} (entry point '{ep.name} = {ep.value}' in group {ENTRY_POINT_GROUP!r} of " \
            f"{dist})"
    try:
        obj = ep.load()
        kind = obj if isinstance(obj, SensorKind) else obj() if callable(obj) else obj
    except Exception as exc:  # any failure of third-party code is reported as the plugin's
        raise ConfigError(f"{where}: failed to load ({type(exc).__name__}: {exc}); fix or uninstall {dist}") \
            from exc
    if not isinstance(kind, SensorKind):
        raise ConfigError(f"{where}: holds {type(kind).__name__}, not an oceansim_py.sensors.registry.SensorKind; "
                          f"fix or uninstall {dist}")
    if kind.name != ep.name:
        raise ConfigError(f"{where}: declares the kind {kind.name!r}; the entry point's name must be the kind's "
                          f"name")
    return kind


def _load(name: str) -> SensorKind | None:
    """The kind ``name`` (loading a built-in module or an entry point on first use), or ``None``."""
    with _lock:
        if name in _loaded:
            return _loaded[name]
        if name in BUILTIN_MODULES:
            kind = importlib.import_module(BUILTIN_MODULES[name]).SENSOR_KIND
        else:
            ep = _entry_points().get(name)
            if ep is None:
                return None
            kind = _load_entry_point(ep)
        _loaded[name] = kind
        return kind


def kind_names() -> list[str]:
    """Every kind's name: the built-ins, then registered kinds and entry points, sorted (nothing imported)."""
    extra = (set(_registered) | set(_entry_points())) - set(BUILTIN_MODULES)
    return [*BUILTIN_MODULES, *sorted(extra)]


def get(name: str) -> SensorKind:
    """The kind called ``name`` (or with that alias); ``ConfigError`` listing the kinds when there is none."""
    kind = _load(name)
    if kind is not None:
        return kind
    for candidate in all_kinds(on_error="skip"):
        if name in candidate.aliases:
            return candidate
    raise ConfigError(f"unknown sensor type {name!r}; types are {sorted(kind_names())}")


def all_kinds(on_error: str = "raise") -> list[SensorKind]:
    """Every kind, loaded, in :func:`kind_names` order. A plugin that fails to load raises (``"raise"``), is
    left out with an :class:`~oceansim_py.diagnostics.OceanSimWarning` (``"warn"``), or silently (``"skip"``)."""
    out = []
    for name in kind_names():
        try:
            kind = _load(name)
        except ConfigError as exc:
            if on_error == "raise":
                raise
            if on_error == "warn":
                from oceansim_py.diagnostics import OceanSimWarning

                warnings.warn(f"{exc}; left out", OceanSimWarning, stacklevel=2)
            continue
        if kind is not None:
            out.append(kind)
    return out


def builtin_kinds() -> dict[str, SensorKind]:
    """The built-in kinds by name."""
    return {name: get(name) for name in BUILTIN_MODULES}


def register(kind: SensorKind, replace: bool = False) -> SensorKind:
    """Add ``kind`` for this process (``ConfigError`` when a kind of that name exists, unless ``replace``).
    Returns ``kind``, so a module may end with ``register(SensorKind(...))``."""
    if not isinstance(kind, SensorKind):
        raise ConfigError(f"register: expected a SensorKind, got {type(kind).__name__}")
    with _lock:
        taken = {kind.name} & (set(BUILTIN_MODULES) | set(_loaded) | set(_entry_points()))
        if taken and not replace:
            raise ConfigError(f"register: a sensor kind {kind.name!r} exists already; choose another name or pass "
                              f"replace=True")
        _loaded[kind.name] = kind
        _registered.add(kind.name)
    return kind


def unregister(name: str) -> None:
    """Remove a kind added with :func:`register`."""
    with _lock:
        if name not in _registered:
            raise ConfigError(f"unregister: {name!r} was not added with register()")
        _registered.discard(name)
        _loaded.pop(name, None)


class registered:
    """``with registered(kind): ...``: :func:`register` for the block only (tests, notebooks)."""

    def __init__(self, kind: SensorKind) -> None:
        self.kind = kind

    def __enter__(self) -> SensorKind:
        return register(self.kind)

    def __exit__(self, *exc: Any) -> None:
        unregister(self.kind.name)


def reset_plugins() -> None:
    """Forget the entry points loaded so far (they are listed and loaded again on next use)."""
    with _lock:
        for name in [n for n in _loaded if n not in BUILTIN_MODULES and n not in _registered]:
            del _loaded[name]


def iter_cli_targets(on_error: str = "warn") -> Iterator[tuple[str, SensorKind]]:
    """(render target name, kind) of every kind with a :class:`CliTarget`, in :func:`kind_names` order."""
    for kind in all_kinds(on_error=on_error):
        if kind.cli is not None:
            yield kind.cli.name or kind.name, kind


def first_ping_text(what: str, values: np.ndarray, digits: int) -> str:
    """``"<what> of the first ping 9.36 m"`` for a run's per-ping values (m, NaN where the ping saw nothing); when
    the first ping saw nothing (a run that starts beyond the scene), the first ping that did, or that none did."""
    seen = np.flatnonzero(np.isfinite(np.asarray(values, dtype=np.float64)))
    if seen.size == 0:
        return f"no {what} at any ping (nothing within range)"
    if seen[0] == 0:
        return f"{what} of the first ping {values[0]:.{digits}f} m"
    return f"{what} {values[seen[0]]:.{digits}f} m from ping {seen[0]} (the pings before it see nothing)"


def warn_if_blind(sensor: str, hit_fraction: float, output: CliOutput, max_range: float) -> None:
    """:func:`oceansim_py.diagnostics.warn_if_blind` for a ``render`` target's output (its poses' positions), and
    :func:`~oceansim_py.diagnostics.warn_if_above_surface` for a pose above the sea surface: an acoustic sensor
    there renders the air as water; a camera does so unless it renders the sea surface (``surface_optics``)."""
    from oceansim_py.diagnostics import warn_if_above_surface
    from oceansim_py.diagnostics import warn_if_blind as warn

    positions = np.asarray(output.poses).reshape(-1, 7)[:, :3]
    sees_surface = getattr(output.sensor, "sees_surface", None)
    if sees_surface is None:
        warn_if_above_surface(sensor, output.scene, positions, "an acoustic sensor works in the water; this render "
                              "treats the air as water (check --pose: z is up, the surface at the scene's surface_z)")
    elif not sees_surface(output.scene):
        warn_if_above_surface(sensor, output.scene, positions, "without the sea surface's optics the camera sees the "
                              "world as if filled with water; set surface_optics: always to look through the flat "
                              "surface from above")
    warn(sensor, hit_fraction, output.scene, positions, max_range)
