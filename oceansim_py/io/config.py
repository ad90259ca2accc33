"""Frozen-dataclass configs loaded from dicts and YAML, with strict keys and named presets.

Every sensor config derives from :class:`ConfigBase`. It gives:

- ``from_dict(data, source=...)``: unknown keys are a :class:`~oceansim_py.errors.ConfigError` naming the key
  and listing the valid ones; values are coerced to the field's annotated type (``float``, ``int``, ``bool``,
  ``str``, tuples of those); ``preset: NAME`` inside the dict starts from that preset and overrides it.
- ``from_yaml(path)``: the same from a YAML file; malformed YAML names the file and line.
- ``preset(name, **overrides)``: a named preset (class attribute ``PRESETS``: name -> dict of values).
- ``to_dict()`` and ``replace(**changes)``; ``validate()`` is called by ``__post_init__`` so that a config that
  exists is a valid one.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from pathlib import Path
from typing import Any, ClassVar, Mapping, TypeVar

import yaml

from oceansim_py.errors import ConfigError

C = TypeVar("C", bound="ConfigBase")


def load_yaml(path: str | Path) -> Any:
    """Parse a YAML file; a missing file or a syntax error is a ``ConfigError`` naming the file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such YAML file; check the path")
    try:
        with p.open("r", encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise ConfigError(f"{p}{where}: malformed YAML: {exc}; fix the syntax") from exc


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, where)
            except ConfigError:
                continue
        raise ConfigError(f"{where}: {value!r} is not a valid {hint}")
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"{where}: {value!r} is not one of {list(args)}")
        return value
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(args) != len(value):
                raise ConfigError(f"{where}: expected {len(args)} values, got {len(value)}")
            return tuple(_coerce(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
        inner = args[0] if args else Any
        return tuple(_coerce(v, inner, f"{where}[{i}]") for i, v in enumerate(value))
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not value.is_integer()
        ):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return int(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    return value


@dataclasses.dataclass(frozen=True)
class ConfigBase:
    """Base of every frozen config dataclass (see the module docstring)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the field and the fix if a value is invalid."""

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
        if "preset" in data:
            name = data.pop("preset")
            base = dict(cls._preset_values(name, where))
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ConfigError(
                f"{where}: unknown key(s) {unknown} for {cls.__name__}; valid keys are {sorted(fields)} "
                f"(and 'preset')"
            )
        values = {}
        for key, value in {**base, **data}.items():
            values[key] = _coerce(value, hints[key], f"{where}: field '{key}'")
        return cls(**values)

    @classmethod
    def from_yaml(cls: type[C], path: str | Path) -> C:
        """Load from a YAML file holding a mapping of fields (optionally with ``preset``)."""
        return cls.from_dict(load_yaml(path), source=str(path))

    @classmethod
    def _preset_values(cls, name: Any, where: str) -> Mapping[str, Any]:
        if name not in cls.PRESETS:
            raise ConfigError(
                f"{where}: unknown {cls.__name__} preset {name!r}; choose one of {sorted(cls.PRESETS)}"
            )
        return {k: v for k, v in cls.PRESETS[name].items() if not k.startswith("_")}

    @classmethod
    def preset(cls: type[C], name: str, **overrides: Any) -> C:
        """The named preset, with optional field overrides."""
        values = dict(cls._preset_values(name, cls.__name__))
        values.update(overrides)
        return cls.from_dict(values, source=f"{cls.__name__} preset {name!r}")

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
