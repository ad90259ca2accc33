"""The sensor registry (oceansim_py/sensors/registry.py): the built-in kinds describe what they write, a sensor
added at run time (tests/example_sensor.py) is rendered by ``oceansim-py render``, written by ``generate`` and
read back by the loader with no other change, and third-party sensors arrive through entry points."""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import trimesh
import yaml

from oceansim_py.cli import main
from oceansim_py.dataset import load
from oceansim_py.errors import ConfigError
from oceansim_py.sensors import registry

sys.path.insert(0, str(Path(__file__).parent))
from example_sensor import SENSOR_KIND as RANGEFINDER  # noqa: E402

BUILTIN = ["imaging_sonar", "multibeam", "camera", "dvl", "imu", "barometer", "gps", "pose", "sidescan", "profiling",
           "singlebeam"]


@pytest.fixture
def rangefinder():
    with registry.registered(RANGEFINDER) as kind:
        yield kind


def wall_file(tmp_path: Path) -> Path:
    """A 40 m square wall in the plane x = 5 m (an OBJ, Z up)."""
    wall = trimesh.Trimesh([[5, -20, -20], [5, 20, -20], [5, 20, 20], [5, -20, 20]], [[0, 2, 1], [0, 3, 2]])
    path = tmp_path / "wall.obj"
    wall.export(path)
    return path


def test_builtin_kinds_and_aliases() -> None:
    assert registry.kind_names()[:len(BUILTIN)] == BUILTIN
    assert registry.get("sonar") is registry.get("imaging_sonar")
    assert [target for target, _ in registry.iter_cli_targets()] == ["sonar", "multibeam", "camera", "sidescan",
                                                                       "profiling", "singlebeam", "magnetometer", "usbl",
                                                                       "lbl", "acoustic_modem", "optical_modem",
                                                                       "msis"]
    with pytest.raises(ConfigError, match=r"unknown sensor type 'sonr'; types are \["):
        registry.get("sonr")


def test_schema_shapes_are_what_the_sensors_write(tmp_path: Path) -> None:
    """Every array product's shape in terms of the config is the shape the golden dataset wrote."""
    from test_golden_outputs import RIG

    rig = tmp_path / "rig.yaml"
    rig.write_text(yaml.safe_dump({**RIG, "frames": 1}))
    assert main(["generate", "--rig", str(rig), "--out", str(tmp_path / "ds"), "--no-progress"]) == 0
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    checked = 0
    for meta in manifest["sensors"].values():
        kind = registry.get(meta["type"])
        config = kind.make_config(meta["config"], "manifest")
        for name, spec in meta["arrays"].items():
            product = kind.product(name)
            expected = list(product.shape_for(config))          # None: a size the config does not fix
            assert [None if e is None else s for s, e in zip(spec["shape"], expected)] == expected, (kind.name, name)
            if "dtype" in spec:
                assert spec["dtype"] == product.dtype, (kind.name, name)
            assert spec["unit"] == product.unit
            checked += 1
    assert checked == sum(len(m["products"]) for m in manifest["sensors"].values()) > 40
    assert {m["type"] for m in manifest["sensors"].values()} == set(BUILTIN)


def test_a_sensor_added_in_a_test_is_rendered_by_the_cli(tmp_path: Path, rangefinder) -> None:
    out = tmp_path / "out"
    assert main(["render", "rangefinder", "--scene", str(wall_file(tmp_path)), "--pose", "0,0,0,0,0,0",
                 "--set", "n_rays=5", "--set", "fov=60", "--out", str(out), "--device", "cpu"]) == 0
    ranges = np.load(out / "rangefinder_range.npy")
    # a ray at bearing b from the origin meets the plane x = 5 m at 5 / cos(b): b = -30, -15, 0, 15, 30 degrees
    expected = [5.0 / math.cos(math.radians(b)) for b in (-30, -15, 0, 15, 30)]
    np.testing.assert_allclose(ranges, expected, rtol=1e-5)
    from oceansim_py.scene import load_scene

    labels = load_scene(str(wall_file(tmp_path)), device="cpu").labels
    assert [labels[i] for i in np.load(out / "rangefinder_label.npy")] == ["wall.obj"] * 5   # a mesh file is labelled by its name
    assert main(["render", "rangefinder", "--preset", "nope", "--scene", str(wall_file(tmp_path)),
                 "--pose", "0,0,0,0,0,0", "--out", str(out)]) == 2


def test_a_sensor_added_in_a_test_is_generated_and_read_back(tmp_path: Path, rangefinder) -> None:
    rig = {"name": "ranger", "scene": str(wall_file(tmp_path)), "seed": 1, "frames": 3, "tick_rate_hz": 1.0,
           "shard_size": 2, "batch_size": 2,
           "trajectory": {"type": "transect", "start": [0.0, 0.0, -1.0], "end": [3.0, 0.0, -1.0], "speed": 1.0},
           "sensors": [{"name": "rf", "type": "rangefinder", "preset": "narrow", "rate_hz": 1.0,
                        "config": {"n_rays": 3}, "products": ["range", "label", "hit_count"]}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    out = tmp_path / "ds"
    assert main(["generate", "--rig", str(path), "--out", str(out), "--no-progress"]) == 0
    reader = load(out, verify=True)
    assert len(reader) == 3
    half = math.radians(10.0)                        # the narrow preset: 20 degrees wide; rays at -10, 0, 10
    for k in range(3):
        sample = reader[k]["rf"]
        x = float(k)                                 # 1 m/s along +x from x = 0
        np.testing.assert_allclose(sample["range"], [(5 - x) / math.cos(half), 5 - x, (5 - x) / math.cos(half)],
                                   rtol=1e-5)
        assert (sample["label"] >= 0).all() and int(sample["hit_count"]) == 3
    meta = reader.sensors["rf"]
    assert meta["type"] == "rangefinder" and meta["arrays"]["range"]["unit"].startswith("m along")
    assert meta["bearings_rad"] == pytest.approx([-half, 0.0, half])


def test_rig_refuses_unknown_products_and_types_of_a_registered_kind(tmp_path: Path, rangefinder) -> None:
    from oceansim_py.dataset.rig import parse_rig

    base = {"scene": "tank", "trajectory": {"type": "transect", "start": [0, 0, -1], "end": [1, 0, -1], "speed": 1}}
    with pytest.raises(ConfigError, match=r"unknown product\(s\) \['depth'\] for rangefinder"):
        parse_rig({**base, "sensors": [{"type": "rangefinder", "rate_hz": 1, "products": ["depth"]}]}, "r.yaml")
    with pytest.raises(ConfigError, match=r"unknown sensor type 'ranger'.*'rangefinder'"):
        parse_rig({**base, "sensors": [{"type": "ranger", "rate_hz": 1}]}, "r.yaml")


def test_register_refuses_a_taken_name_and_unregister_forgets(rangefinder) -> None:
    with pytest.raises(ConfigError, match="exists already"):
        registry.register(RANGEFINDER)
    with pytest.raises(ConfigError, match="exists already"):
        registry.register(registry.SensorKind(**{**RANGEFINDER.__dict__, "name": "camera"}))
    assert "rangefinder" in registry.kind_names()


def test_a_kind_must_default_to_products_it_has() -> None:
    with pytest.raises(ConfigError, match=r"default_products \['depth'\] are not in its schema"):
        registry.SensorKind(**{**RANGEFINDER.__dict__, "default_products": ("range", "depth")})


def _install_plugin(tmp_path: Path, monkeypatch, value: str, module_text: str) -> None:
    """A fake installed distribution ``demo-sensors`` whose entry point ``rangefinder`` is ``value``."""
    dist = tmp_path / "demo_sensors-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-sensors\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\nrangefinder = {value}\n")
    (tmp_path / "demo_sensors_plugin.py").write_text(module_text)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    importlib.invalidate_caches()
    registry.reset_plugins()


@pytest.fixture
def plugin_cleanup():
    yield
    sys.modules.pop("demo_sensors_plugin", None)
    registry.reset_plugins()


def test_an_entry_point_adds_a_sensor_without_editing_the_package(tmp_path: Path, monkeypatch,
                                                                  plugin_cleanup) -> None:
    _install_plugin(tmp_path, monkeypatch, "demo_sensors_plugin:SENSOR_KIND",
                    "from example_sensor import SENSOR_KIND\n")
    assert "rangefinder" in registry.kind_names()
    assert "demo_sensors_plugin" not in sys.modules            # listed, not yet imported
    assert registry.get("rangefinder") is RANGEFINDER
    out = tmp_path / "out"
    assert main(["render", "rangefinder", "--scene", str(wall_file(tmp_path)), "--pose", "0,0,0,0,0,0",
                 "--set", "n_rays=1", "--out", str(out)]) == 0
    assert np.load(out / "rangefinder_range.npy") == pytest.approx([5.0])


def test_a_broken_plugin_is_named_and_does_not_break_the_cli(tmp_path: Path, monkeypatch, plugin_cleanup,
                                                             capsys) -> None:
    _install_plugin(tmp_path, monkeypatch, "demo_sensors_plugin:SENSOR_KIND", "import no_such_module_here\n")
    with pytest.raises(ConfigError, match=r"sensor plugin 'rangefinder' \(entry point 'rangefinder = "
                                          r"demo_sensors_plugin:SENSOR_KIND'.* of demo-sensors\): failed to load "
                                          r"\(ModuleNotFoundError.*fix or uninstall demo-sensors"):
        registry.get("rangefinder")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        targets = [t for t, _ in registry.iter_cli_targets()]
    assert "rangefinder" not in targets and "sonar" in targets
    assert any("sensor plugin 'rangefinder'" in str(w.message) for w in caught)
    from oceansim_py.diagnostics import OceanSimWarning

    with pytest.raises(SystemExit) as exc, pytest.warns(OceanSimWarning, match="left out"):
        main(["render", "rangefinder"])                  # the CLI still builds; the plugin is not a target
    assert exc.value.code == 2 and "invalid choice: 'rangefinder'" in capsys.readouterr().err


def test_a_plugin_holding_the_wrong_thing_is_named(tmp_path: Path, monkeypatch, plugin_cleanup) -> None:
    _install_plugin(tmp_path, monkeypatch, "demo_sensors_plugin:SENSOR_KIND", "SENSOR_KIND = 42\n")
    with pytest.raises(ConfigError, match=r"holds int, not an oceansim_py.sensors.registry.SensorKind"):
        registry.get("rangefinder")


def test_describe_prints_a_kinds_schema(capsys) -> None:
    assert main(["describe", "sonar"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("imaging_sonar: forward-looking imaging sonar")
    assert "intensity" in text and "(range_bins, n_beams)" in text and "holoocean_paper" in text


def test_single_beam_first_return_range_product_and_the_former_altitude(tmp_path: Path) -> None:
    """The single-beam product is ``first_return_range``; a rig naming ``altitude`` still works (with a
    DeprecationWarning), and a dataset written before the rename (column ``altitude``) reads under both names."""
    rig = {"name": "alt", "scene": str(wall_file(tmp_path)), "frames": 2, "tick_rate_hz": 1.0,
           "trajectory": {"type": "transect", "start": [0.0, 0.0, -1.0], "end": [2.0, 0.0, -1.0], "speed": 1.0},
           "sensors": [{"name": "sb", "type": "singlebeam", "rate_hz": 1.0, "products": ["altitude"],
                        "config": {"cone_rings": 1, "rays_per_ring": 4, "opening_angle": 2.0}}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    out = tmp_path / "ds"
    from oceansim_py.dataset.generate import generate
    from oceansim_py.dataset.rig import load_rig

    with pytest.warns(DeprecationWarning, match="'altitude' of singlebeam is now called 'first_return_range'"):
        loaded = load_rig(path)
    generate(loaded, out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sensors"]["sb"]["products"] == ["first_return_range"]
    new = [load(out)[k]["sb"] for k in range(2)]
    # looking along +x at the wall x = 5 m from x = 0 and 1 m: first returns near 5 and 4 m (cone 1 deg wide)
    assert [round(float(s["first_return_range"]), 1) for s in new] == [5.0, 4.0]
    assert all(s["altitude"] == s["first_return_range"] for s in new)
    # the same dataset as an older version wrote it: column and product called "altitude"
    csv = out / "shard_00000" / "sb" / "samples.csv"
    csv.write_text(csv.read_text().replace("first_return_range", "altitude"))
    meta = manifest["sensors"]["sb"]
    for key in ("products_format", "arrays"):
        meta[key] = {"altitude": meta[key]["first_return_range"]}
    meta["products"] = ["altitude"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    old = [load(out)[k]["sb"] for k in range(2)]
    assert [float(s["first_return_range"]) for s in old] == [float(s["first_return_range"]) for s in new]
    assert [float(s["altitude"]) for s in old] == [float(s["first_return_range"]) for s in new]


def test_render_by_kind_name_is_the_render_target(tmp_path: Path) -> None:
    """``render imaging_sonar`` (the kind's name) is ``render sonar`` (the target's): the same files, bytes."""
    from test_golden_outputs import RENDER_HASHES, RENDERS, sha256_files

    out = tmp_path / "by_kind"
    assert main(["render", "imaging_sonar", "--scene", "tank", "--device", "cpu", "--out", str(out),
                 *RENDERS["sonar"]]) == 0
    assert sha256_files(out) == RENDER_HASHES["sonar"]


def test_describe_names_a_broken_plugin(tmp_path: Path, monkeypatch, plugin_cleanup, capsys) -> None:
    from oceansim_py.diagnostics import OceanSimWarning

    _install_plugin(tmp_path, monkeypatch, "demo_sensors_plugin:SENSOR_KIND", "raise RuntimeError('boom')\n")
    with pytest.warns(OceanSimWarning, match="left out"):      # building the CLI leaves the plugin out
        assert main(["describe", "rangefinder"]) == 2
    assert "sensor plugin 'rangefinder'" in capsys.readouterr().err
