"""Every registered sensor kind's config, checked field by field from its dataclass (no hand-kept list to forget a
field or a sensor): a wrong type, a non-finite number or an unknown key is a ConfigError naming the field; every
preset round-trips through to_dict, JSON (as a manifest holds it) and from_dict; every field is named in the
config's docstrings (where its unit is given). Also: the multibeam's peer model still refuses non-finite
device-chain fields it ignores (they are written to manifests and become live with ``replace(model="device")``)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import typing

import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.sensors import registry
from oceansim_py.sensors.multibeam import MultibeamSonarConfig

KINDS = registry.all_kinds()


def base_values(cls: type) -> dict:
    """The default config's values, or the first preset's where the defaults alone are not a valid config."""
    try:
        return cls().to_dict()
    except ConfigError:
        return cls.preset(cls.preset_names()[0]).to_dict()


def wrong_values(hint: typing.Any, current: typing.Any) -> list[tuple[str, typing.Any]]:
    """Values of the wrong kind for a field annotated ``hint`` (``current``: its valid value)."""
    origin = typing.get_origin(hint)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if hint is float or (origin is typing.Union and args == [float]):
        return [("text", "abc"), ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("bool", True)]
    if hint is int:
        return [("fraction", 1.5), ("bool", True), ("text", "abc"), ("nan", math.nan)]
    if hint is bool:
        return [("int", 1), ("text", "yes")]
    if hint is str:
        return [("int", 3)]
    if origin in (tuple, list):
        n = len(current) if current else 1
        return [("text", "abc"), ("nan element", [math.nan] * n)]
    return [("nan", math.nan)]


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_every_field_refuses_values_of_the_wrong_kind_naming_the_field(kind) -> None:
    cls = kind.config_class
    base = base_values(cls)
    hints = typing.get_type_hints(cls)
    accepted, unnamed = [], []
    for field in dataclasses.fields(cls):
        for label, value in wrong_values(hints[field.name], base.get(field.name)):
            try:
                cls.from_dict({**base, field.name: value})
                accepted.append(f"{field.name} = {label}")
            except ConfigError as exc:
                if field.name not in str(exc):
                    unnamed.append(f"{field.name} = {label}: {exc}")
    assert accepted == [] and unnamed == []


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_presets_round_trip_and_unknown_keys_are_named(kind) -> None:
    cls = kind.config_class
    for name in cls.preset_names():
        config = cls.preset(name)
        text = json.dumps(config.to_dict(), allow_nan=False)          # what a manifest holds
        assert cls.from_dict(json.loads(text)) == config, name
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['speling_error'\]"):
        cls.from_dict({**base_values(cls), "speling_error": 1})


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_every_config_field_is_documented(kind) -> None:
    cls = kind.config_class
    docs = "\n".join(c.__doc__ or "" for c in cls.__mro__)
    missing = [f.name for f in dataclasses.fields(cls) if not re.search(rf"\b{re.escape(f.name)}\b", docs)]
    assert missing == []


@pytest.mark.parametrize("field, value", [("temperature", math.nan), ("depth", math.inf), ("tvg_gain", -math.inf),
                                          ("psf_extent", math.nan), ("noise_level", math.nan),
                                          ("agc_level", math.inf), ("display_floor", math.nan),
                                          ("dynamic_range", math.inf)])
def test_multibeam_peer_model_refuses_non_finite_device_fields(field, value) -> None:
    # Before the fix the peer model (the default) skipped the device-chain checks altogether, so
    # MultibeamSonarConfig(temperature=nan) existed, was written to manifests as NaN, and replace(model="device")
    # then failed far from where the NaN was set.
    with pytest.raises(ConfigError, match=rf"MultibeamSonarConfig\.{field}: must be a finite number"):
        MultibeamSonarConfig(**{field: value})
    assert MultibeamSonarConfig().model == "peer"


#: Integer fields where a negative value means something (HoloOcean's AzimuthStreaks: -1 is "removal").
NEGATIVE_INTS_ALLOWED = {("imaging_sonar", "azimuth_streaks")}


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_negative_counts_and_sizes_are_refused(kind) -> None:
    cls = kind.config_class
    base = base_values(cls)
    hints = typing.get_type_hints(cls)
    accepted = []
    for field in dataclasses.fields(cls):
        if hints[field.name] is not int or (kind.name, field.name) in NEGATIVE_INTS_ALLOWED:
            continue
        try:
            cls.from_dict({**base, field.name: -1})
            accepted.append(field.name)
        except ConfigError as exc:
            assert field.name in str(exc)
    assert accepted == []


def direct(cls: type, base: dict, field: str, value: typing.Any) -> typing.Any:
    """``cls(**base, field=value)`` built in Python (no from_dict coercion), lists as tuples as a config holds."""
    as_tuple = lambda v: tuple(as_tuple(x) for x in v) if isinstance(v, list) else v  # noqa: E731
    return cls(**{k: as_tuple(v) for k, v in {**base, field: value}.items()})


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_configs_built_in_python_are_type_checked_too(kind) -> None:
    # Before: ConfigBase only coerced in from_dict, so ImagingSonarConfig(n_beams=True) rendered 1 beam,
    # MultibeamSonarConfig(tvg="40Log") (peer model) existed, and jitter="yes" was truthy.
    cls = kind.config_class
    base = base_values(cls)
    hints = typing.get_type_hints(cls)
    accepted, unnamed = [], []
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        bad = wrong_values(hint, base.get(field.name))
        if typing.get_origin(hint) is typing.Literal:
            bad = [("text", "not_a_choice"), ("int", 3)]
        for label, value in bad:
            try:
                direct(cls, base, field.name, value)
                accepted.append(f"{field.name} = {label}")
            except ConfigError as exc:
                if field.name not in str(exc):
                    unnamed.append(f"{field.name} = {label}: {exc}")
    assert accepted == [] and unnamed == []



def test_numpy_scalars_are_taken_as_the_python_numbers_they_hold():
    # Research code sweeps sizes over np.arange and reads ranges from arrays: np.int64(64) beams, a np.float32 range,
    # a np.bool_ switch and numpy elements of a tuple are stored as int, float, bool (the config's JSON and YAML
    # stay plain); a fractional numpy value for an integer field is still refused, naming the field.
    import numpy as np

    from oceansim_py.errors import ConfigError
    from oceansim_py.sensors.dvl import DVLConfig
    from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig

    cfg = ImagingSonarConfig(n_beams=np.int64(64), max_range=np.float32(20.5), jitter=np.bool_(False))
    assert type(cfg.n_beams) is int and cfg.n_beams == 64
    assert type(cfg.max_range) is float and cfg.max_range == 20.5
    assert cfg.jitter is False
    assert cfg == ImagingSonarConfig(n_beams=64, max_range=20.5, jitter=False)
    import dataclasses
    tuples = [f.name for f in dataclasses.fields(DVLConfig) if isinstance(getattr(DVLConfig(), f.name), tuple)
              and getattr(DVLConfig(), f.name) and all(isinstance(v, float) for v in getattr(DVLConfig(), f.name))]
    if tuples:
        name = tuples[0]
        value = tuple(np.float32(v) for v in getattr(DVLConfig(), name))
        held = getattr(DVLConfig(**{name: value}), name)
        assert all(type(v) is float for v in held)
    with pytest.raises(ConfigError, match="n_beams"):
        ImagingSonarConfig(n_beams=np.float64(2.5))
