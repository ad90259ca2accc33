"""Frozen-dataclass configs loaded from dicts and YAML, with strict keys and named presets.

Every sensor config derives from :class:`ConfigBase`. It gives:

- ``from_dict(data, source=...)``: unknown keys are a :class:`~oceansim_py.errors.ConfigError` naming the key
  and listing the valid ones; values are coerced to the field's annotated type (``float``, ``int``, ``bool``,
  ``str``, tuples of those); ``preset: NAME`` inside the dict starts from that preset and overrides it.
- ``from_yaml(path)``: the same from a YAML file; malformed YAML names the file and line.
- ``preset(name, **overrides)``: a named preset (class attribute ``PRESETS``: name -> dict of values).
- ``to_dict()`` and ``replace(**changes)``; ``__post_init__`` calls ``validate()`` and checks every field's value
  against its annotation (``check_field_types``: a config built in Python is held to the types ``from_dict``
  coerces to), so that a config that exists is a valid one.
- ``memory_bytes(batch)``: the bytes a sensor built from the config needs to render ``batch`` poses (its tables
  plus per-batch scratch and results), estimated from the config alone so that the sensor refuses an
  impossible config (:func:`oceansim_py.limits.check_config_memory`) before allocating anything.

YAML is parsed by :func:`parse_yaml` / :func:`load_yaml` with YAML 1.2 numbers (``2e1`` is 20.0, not a string)
and the size, nesting and alias-expansion limits of :mod:`oceansim_py.limits`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import typing
from pathlib import Path
from typing import Any, ClassVar, Mapping, TypeVar

import numpy as np
import yaml

from oceansim_py.errors import ConfigError

C = TypeVar("C", bound="ConfigBase")


#: YAML 1.2 numbers: PyYAML follows YAML 1.1, where ``2e1`` and ``1e-3`` (no dot) are strings; they are numbers here.
_YAML12_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+$")


class _LimitedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 exponent floats and the limits of :mod:`oceansim_py.limits`: nesting
    deeper than ``MAX_YAML_DEPTH`` is refused while composing (before Python's recursion limit), and a document
    whose alias-expanded node count exceeds ``MAX_YAML_NODES`` (or that refers to itself) is refused before it
    is constructed."""

    yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}

    def __init__(self, stream: str, source: str) -> None:
        super().__init__(stream)
        self._source = source
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        from oceansim_py.limits import MAX_YAML_DEPTH

        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            mark = self.peek_event().start_mark
            raise ConfigError(f"{self._source} (line {mark.line + 1}): YAML nested more than {MAX_YAML_DEPTH} levels "
                              f"deep; flatten the file")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_document(self, node: Any) -> Any:
        _check_expanded_size(node, self._source)
        return super().construct_document(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """A mapping whose explicit keys are unique (YAML requires it; PyYAML keeps the last silently, so a second
        ``config:`` of one rig sensor dropped the first); keys merged in with ``<<`` may still be overridden."""
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, Any], int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = (key_node.tag, key_node.value)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise ConfigError(f"{self._source} (line {line}): key {key_node.value!r} given twice in one "
                                      f"mapping (first at line {seen[key]}); the second would silently replace the "
                                      f"first, keep one")
                seen[key] = line
        return super().construct_mapping(node, deep)


_LimitedLoader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML12_FLOAT, list("-+0123456789."))


def did_you_mean(unknown: typing.Iterable[Any], valid: typing.Iterable[str]) -> str:
    """``"; did you mean 'max_range' for 'max_rang'?"`` for each unknown key with a close valid one (difflib),
    else ``""``: the end of an unknown-key error."""
    names = sorted(valid)
    pairs = [(k, difflib.get_close_matches(k, names, n=1)) for k in unknown if isinstance(k, str)]
    hints = [f"{close[0]!r} for {k!r}" for k, close in pairs if close]
    return f"; did you mean {', '.join(hints)}?" if hints else ""

def _check_expanded_size(root: Any, source: str) -> None:
    """Count the nodes of ``root`` with every alias expanded (memoised per node, so an alias bomb costs one visit
    per distinct node); refuse more than ``MAX_YAML_NODES`` and self-references."""
    from oceansim_py.limits import MAX_YAML_NODES

    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > MAX_YAML_NODES:
                mark = node.start_mark
                raise ConfigError(f"{source} (line {mark.line + 1}): the YAML expands to more than "
                                  f"{MAX_YAML_NODES:,} values (aliases repeat their anchor's content); "
                                  f"write the values out or use fewer aliases")
            continue
        if key in sizes:
            continue
        if key in on_path:
            mark = node.start_mark
            raise ConfigError(f"{source} (line {mark.line + 1}): a YAML alias refers to a node that contains it; "
                              f"remove the recursive alias")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def display_path(path: str | Path) -> str:
    """``path`` as printable text: bytes of a non-UTF-8 file name appear as ``\\xNN`` escapes, so that an error
    message naming the file can always be printed."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def parse_yaml(text: str | bytes, source: str) -> Any:
    """Parse YAML text with the limits of :mod:`oceansim_py.limits`; every failure (bad UTF-8, syntax, size,
    depth, alias expansion) is a one-line ``ConfigError`` naming ``source``."""
    from oceansim_py.limits import MAX_YAML_BYTES

    if isinstance(text, bytes):
        if len(text) > MAX_YAML_BYTES:
            raise ConfigError(f"{source}: {len(text):,} bytes is more than the {MAX_YAML_BYTES:,}-byte limit of a "
                              f"YAML config")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = text[: exc.start].count(b"\n") + 1
            raise ConfigError(f"{source} (line {line}, byte {exc.start}): not UTF-8 text ({exc.reason}); save the "
                              f"file as UTF-8") from None
    loader = None
    try:
        loader = _LimitedLoader(text, source)
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{source}{where}: malformed YAML: {problem}; fix the syntax") from None
    except RecursionError:
        raise ConfigError(f"{source}: YAML nested too deeply; flatten the file") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml(path: str | Path) -> Any:
    """Parse a YAML file (see :func:`parse_yaml`); a missing or unreadable file is a ``ConfigError`` naming it."""
    from oceansim_py.limits import MAX_YAML_BYTES

    p = Path(path)
    name = display_path(p)
    if not p.is_file():
        raise ConfigError(f"{name}: no such YAML file; check the path")
    try:
        with p.open("rb") as fh:
            data = fh.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read the file ({exc.strerror or exc})") from None
    return parse_yaml(data, name)


#: A number written as text: YAML 1.2 decimal, exponent and special floats (``2e1``, ``-1.5E-3``, ``.inf``).
_NUMBER_TEXT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$")


def _number_from_text(value: Any) -> Any:
    """A string holding a YAML 1.2 number (e.g. ``"2e1"``, which PyYAML's YAML 1.1 rules leave a string) as an int
    or float; anything else unchanged."""
    if isinstance(value, str) and _NUMBER_TEXT.match(value.strip()):
        text = value.strip().lower().replace(".inf", "inf").replace(".nan", "nan")
        try:
            return int(text)
        except ValueError:
            return float(text)
    return value


def coerce_value(value: Any, hint: Any, where: str) -> Any:
    """``value`` converted to the type ``hint`` (``float``, ``int``, ``bool``, ``str``, tuples, unions,
    literals), or a ``ConfigError`` naming ``where``. Numbers written as text (``"2e1"``) are accepted."""
    return _coerce(value, hint, where)


def _is_union(origin: Any) -> bool:
    return origin is typing.Union or (origin is not None and str(origin) == "<class 'types.UnionType'>")


def _first_member(value: Any, hint: Any, where: str, apply: Any) -> Any:
    """``apply(value, member, where)`` for the first non-None member of the union ``hint`` that takes ``value``
    (``None`` for ``None`` where the union allows it), else a ``ConfigError`` naming ``where``."""
    args = typing.get_args(hint)
    if value is None and type(None) in args:
        return None
    for arg in (a for a in args if a is not type(None)):
        try:
            return apply(value, arg, where)
        except ConfigError:
            continue
    raise ConfigError(f"{where}: {value!r} is not a valid {hint}")


def _sequence_items(value: Any, origin: Any, args: tuple[Any, ...], where: str) -> list[tuple[Any, Any, str]]:
    """(item, its hint, where) of a list or tuple ``value`` for a ``tuple[...]`` / ``list[...]`` hint, or a
    ``ConfigError`` naming ``where`` for a value that is not a sequence or has the wrong length."""
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{where}: expected a list, got {value!r}")
    if origin is tuple and args and args[-1] is not Ellipsis:
        if len(args) != len(value):
            raise ConfigError(f"{where}: expected {len(args)} values, got {len(value)}")
        return [(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args))]
    inner = args[0] if args else Any
    return [(v, inner, f"{where}[{i}]") for i, v in enumerate(value)]


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if _is_union(origin):
        return _first_member(value, hint, where, _coerce)
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"{where}: {value!r} is not one of {list(args)}")
        return value
    if origin in (tuple, list):
        return tuple(_coerce(v, a, w) for v, a, w in _sequence_items(value, origin, args, where))
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if hint is int:
        value = _number_from_text(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not value.is_integer()
        ):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return int(value)
    if hint is float:
        value = _number_from_text(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    return value


@functools.lru_cache(maxsize=None)
def _field_hints(cls: type) -> dict[str, Any]:
    """The resolved annotation of every dataclass field of ``cls``."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _check_kind(value: Any, hint: Any, where: str) -> None:
    """``ConfigError`` naming ``where`` unless ``value`` is of the kind ``hint`` names (see
    :meth:`ConfigBase.check_field_types`); hints other than numbers, ``bool``, ``str``, tuples, unions and
    literals (nested configs) are left to ``validate``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if _is_union(origin):
        _first_member(value, hint, where, _check_kind)
        return
    if origin is typing.Literal:
        if not any(value == a and type(value) is type(a) for a in args):
            raise ConfigError(f"{where}: {value!r} is not one of {list(args)}")
        return
    if origin in (tuple, list):
        for v, a, w in _sequence_items(value, origin, args, where):
            _check_kind(v, a, w)
        return
    if hint is bool and not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where}: expected an integer, got {value!r}")
    if hint is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ConfigError(f"{where}: expected a number, got {value!r}")
    if hint is str and not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {value!r}")


def plain_value(value: Any) -> Any:
    """``value`` with numpy scalars (``np.int64``, ``np.float32``, ``np.bool_``...) replaced by the Python ``int``,
    ``float`` or ``bool`` they hold, in tuples and lists element by element; anything else unchanged (the same
    object)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list)) and any(isinstance(v, (np.generic, tuple, list)) for v in value):
        items = [plain_value(v) for v in value]
        if any(a is not b for a, b in zip(items, value)):
            return type(value)(items)
    return value


@dataclasses.dataclass(frozen=True)
class ConfigBase:
    """Base of every frozen config dataclass (see the module docstring). Numpy scalars given for fields (research
    code sweeping ``n_beams`` over ``np.arange``) are stored as the Python numbers they hold before validation."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            plain = plain_value(value)
            if plain is not value:
                object.__setattr__(self, f.name, plain)
        try:
            self.validate()
        except Exception as exc:
            wrong = self._wrong_type()
            # validate()'s own message when it names the mistyped field (or none is); else the type error, since a
            # value of the wrong kind (True for a speed) can trip a check of another field first
            if wrong is not None and not str(exc).startswith(f"{type(self).__name__}.{wrong[0]}:"):
                raise wrong[1] from exc
            raise
        self.check_field_types()

    def check_field_types(self) -> None:
        """Raise ``ConfigError('<Config>.<field>: expected ..., got ...')`` for a value that is not of its field's
        annotated kind: a config built in Python (``Config(n_beams=True)``, ``replace(tvg="40Log")``) is held to
        the types :meth:`from_dict` coerces to, including fields that only some models read: ``int`` for an integer
        field, ``int`` or ``float`` for a real one (never ``bool``). Values are not converted."""
        wrong = self._wrong_type()
        if wrong is not None:
            raise wrong[1]

    def _wrong_type(self) -> tuple[str, ConfigError] | None:
        """(field, error) of the first field whose value is not of its annotated kind, or ``None``."""
        owner = type(self).__name__
        for name, hint in _field_hints(type(self)).items():
            try:
                _check_kind(getattr(self, name), hint, f"{owner}.{name}")
            except ConfigError as exc:
                return name, exc
        return None

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the field and the fix if a value is invalid."""

    #: What to lower when :meth:`memory_bytes` is more than the device has (ends a sentence).
    MEMORY_FIX: ClassVar[str] = "lower the sensor's resolution"

    def memory_bytes(self, batch: int = 1) -> int:
        """Bytes (device and host temporaries) a sensor with this config needs to render ``batch`` poses; 0 for
        configs of sensors that allocate nothing in proportion to their settings."""
        return 0

    # -- construction -------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls: type[C], data: Mapping[str, Any] | None, source: str | None = None) -> C:
        """Build from a mapping; ``preset`` picks a starting preset; unknown keys are errors."""
        where = source or cls.__name__
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected a mapping of {cls.__name__} fields, got {type(data).__name__}")
        data = dict(data)
        base: dict[str, Any] = {}
        entry: Mapping[str, Any] = {}
        if "preset" in data:
            name = data.pop("preset")
            base = dict(cls._preset_values(name, where))
            entry = cls.PRESETS[name]
        data = cls.derived_keys(base, data, where)
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted((k for k in data if k not in fields), key=str)
        if unknown:
            raise ConfigError(
                f"{where}: unknown key(s) {unknown} for {cls.__name__}; valid keys are {sorted(fields)} "
                f"(and 'preset'){did_you_mean(unknown, fields)}"
            )
        values = {}
        for key, value in {**base, **data}.items():
            values[key] = _coerce(value, hints[key], f"{where}: field '{key}'")
        if base:
            cls.follow_preset(entry, data, values)
        return cls(**values)

    #: Keys :meth:`derived_keys` accepts besides the fields (also valid for the CLI's ``--set``).
    DERIVED_KEYS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def derived_keys(cls, preset: Mapping[str, Any], given: dict[str, Any], where: str) -> dict[str, Any]:
        """Hook of :meth:`from_dict`: ``given`` (the keys set over the ``preset`` values) with any key a config
        class accepts in place of its fields (e.g. a bin size for a bin count) replaced by those fields; errors name
        ``where``. The default returns ``given`` unchanged."""
        return given

    @classmethod
    def follow_preset(cls, preset: Mapping[str, Any], given: Mapping[str, Any], values: dict[str, Any]) -> None:
        """Hook of :meth:`from_dict` for a config built from a preset: ``preset`` its ``PRESETS`` entry (its values,
        and notes for this hook under keys starting with ``_``, which are not fields), ``given`` the fields set
        over them, ``values`` the merged, coerced fields (changed in place). A config class whose presets derive
        one field from another updates the derived field here when only its source was given; the default does
        nothing."""

    @classmethod
    def from_yaml(cls: type[C], path: str | Path) -> C:
        """Load from a YAML file holding a mapping of fields (optionally with ``preset``)."""
        return cls.from_dict(load_yaml(path), source=display_path(path))

    @classmethod
    def _preset_values(cls, name: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(name, str) or name not in cls.PRESETS:
            raise ConfigError(
                f"{where}: unknown {cls.__name__} preset {name!r}; choose one of {sorted(cls.PRESETS)}"
            )
        return {k: v for k, v in cls.PRESETS[name].items() if not k.startswith("_")}

    @classmethod
    def preset(cls: type[C], name: str, **overrides: Any) -> C:
        """The named preset, with optional field overrides."""
        return cls.from_dict({"preset": name, **overrides}, source=f"{cls.__name__} preset {name!r}")

    @classmethod
    def preset_names(cls) -> list[str]:
        return sorted(cls.PRESETS)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python dict of every field (tuples as lists), suitable for YAML/JSON."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    def replace(self: C, **changes: Any) -> C:
        return dataclasses.replace(self, **changes)


# -- validation helpers used by the configs' validate() ------------------------------------------------------
def require(cond: bool, owner: str, field: str, message: str) -> None:
    """Raise ``ConfigError('<owner>.<field>: <message>')`` unless ``cond``."""
    if not cond:
        raise ConfigError(f"{owner}.{field}: {message}")


def require_finite(value: float, owner: str, field: str) -> None:
    require(isinstance(value, (int, float)) and math.isfinite(value), owner, field,
            f"must be a finite number, got {value!r}")


def require_positive(value: float, owner: str, field: str, unit: str = "") -> None:
    require_finite(value, owner, field)
    require(value > 0, owner, field, f"must be > 0{(' ' + unit) if unit else ''}, got {value!r}")


def require_non_negative(value: float, owner: str, field: str, unit: str = "") -> None:
    require_finite(value, owner, field)
    require(value >= 0, owner, field, f"must be >= 0{(' ' + unit) if unit else ''}, got {value!r}")


#: Speed of sound in sea and fresh water at any temperature, salinity and depth a sensor meets (m/s): about 1400-1560
#: in the ocean, with margin.
WATER_SOUND_SPEED_RANGE = (1300.0, 1700.0)


def require_water_sound_speed(value: float, owner: str, field: str = "sound_speed") -> None:
    """A speed of sound in water (m/s) within :data:`WATER_SOUND_SPEED_RANGE`."""
    require_finite(value, owner, field)
    lo, hi = WATER_SOUND_SPEED_RANGE
    require(lo <= value <= hi, owner, field, f"must lie in [{lo:g}, {hi:g}] m/s (sea and fresh water), got {value!r}")


def require_zero(value: float, owner: str, field: str, unused_by: str) -> None:
    """A field the config has but does not use: it must stay 0. ``unused_by`` names the sensor and why, e.g.
    ``"a side-scan (the fan is vertical_beamwidth wide)"``."""
    require(value == 0.0, owner, field, f"must be 0 for {unused_by}, got {value}")


def require_seed(value: Any, owner: str, field: str = "seed") -> None:
    """A noise seed: an integer in [0, 2^31) (``limits.MAX_SEED``; the counter-based noise keys are 31-bit)."""
    require(isinstance(value, int) and 0 <= value < 2**31, owner, field,
            f"must be an integer in [0, 2^31), got {value!r}")
