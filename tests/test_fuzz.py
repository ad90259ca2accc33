"""Property-based fuzzing of every loader (issue 12, item 13): USD text, OBJ/PLY/STL bytes, YAML configs and
rigs, dataset manifests. Property: an input gives a result or an ``OceanSimError``, never another exception,
and never hangs (hypothesis deadlines).

CI runs ``OCEANSIM_FUZZ_EXAMPLES`` examples per property (default 25, the whole file in well under 30 s). A
long run: ``OCEANSIM_FUZZ_EXAMPLES=5000 python -m pytest -q -p no:cacheprovider tests/test_fuzz.py`` (or
``python tools/fuzz.py 5000``). A failure prints the shrunk input; hypothesis replays it from its database
on the next run.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oceansim_py.errors import OceanSimError

EXAMPLES = int(os.environ.get("OCEANSIM_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=5000, derandomize=EXAMPLES <= 25, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])

USDA = b"""#usda 1.0
(
    defaultPrim = "World"
    metersPerUnit = 1
    upAxis = "Z"
)

def Xform "World"
{
    def Mesh "Plate" (
        prepend apiSchemas = ["SemanticsLabelsAPI:class"]
    )
    {
        int[] faceVertexCounts = [4, 3]
        int[] faceVertexIndices = [0, 1, 2, 3, 0, 2, 4]
        point3f[] points = [(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0), (1, 3, 1)]
        double3 xformOp:translate = (1, 0, -3)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        custom string oceansim:material = "rock"
        token[] semantics:labels:class = ["plate"]
    }
}
"""
OBJ = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1\nf 1 3 4\n"
PLY = b"""ply
format ascii 1.0
element vertex 4
property float x
property float y
property float z
element face 2
property list uchar int vertex_indices
end_header
0 0 0
1 0 0
1 1 0
0 1 0
3 0 1 2
3 0 2 3
"""
STL = b"""solid t
facet normal 0 0 1
outer loop
vertex 0 0 0
vertex 1 0 0
vertex 1 1 0
endloop
endfacet
endsolid t
"""
CONFIG_YAML = b"preset: oculus_m750d_peer\nmax_range: 2e1\nn_beams: 64\nrange_bins: 128\naggregation: mean\n"
RIG_YAML = b"""name: fuzz
scene: tank
frames: 4
tick_rate_hz: 2.0
shard_size: 2
batch_size: 2
trajectory: {type: transect, start: [-1.0, 0.0, -1.5], end: [1.5, 0.0, -1.5], speed: 0.5}
sensors:
  - {name: fls, type: imaging_sonar, preset: oceansim_default, rate_hz: 2.0, config: {n_beams: 16, range_bins: 32}}
  - {name: dvl, type: dvl, preset: dvl_30deg, rate_hz: 4.0, mount: [0, 0, 0, 0, 0, 0]}
"""
#: Tokens spliced into mutated text: syntax, numbers at the edges of their types, YAML/USD keywords.
TOKENS = [b"[", b"]", b"{", b"}", b"(", b")", b",", b":", b"=", b"\"", b"'", b"\n", b"  ", b"-", b"&a ", b"*a",
          b"1e39", b"-1", b"0", b"nan", b"inf", b"2e1", b"1e400", b"4294967296", b"9" * 30, b"\xff", b"\x00",
          b"def Mesh \"M\" {", b"}", b"upAxis = \"X\"", b"prepend references = @missing.usda@", b"float3",
          b"int[]", b"~", b"null", b"true", b"!!python/object:os.system", b"<<: *a", b"? ", b"%YAML 1.2\n---\n"]


@st.composite
def mutated(draw: Callable[..., Any], seed: bytes) -> bytes:
    """``seed`` with a few random edits: byte flips, deletions, duplicated slices, inserted tokens, truncation."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "delete", "duplicate", "insert", "truncate"]))
        n = len(data)
        i = draw(st.integers(0, max(n - 1, 0)))
        if op == "flip" and n:
            data[i] = draw(st.integers(0, 255))
        elif op == "delete" and n:
            del data[i:i + draw(st.integers(1, 16))]
        elif op == "duplicate" and n:
            j = min(n, i + draw(st.integers(1, 64)))
            data[i:i] = data[i:j] * draw(st.integers(1, 4))
        elif op == "insert":
            data[i:i] = draw(st.sampled_from(TOKENS))
        elif op == "truncate":
            del data[i:]
    return bytes(data)


def inputs(seed: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(mutated(seed), st.binary(max_size=256))


@pytest.fixture(scope="module")
def work() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="oceansim_fuzz_"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def result_or_oceansim_error(fn: Callable[[], Any]) -> None:
    """Run ``fn``; an ``OceanSimError`` is an accepted answer to bad input, anything else fails the test."""
    try:
        fn()
    except OceanSimError:
        pass


def load_file(folder: Path, name: str, data: bytes) -> None:
    from oceansim_py.scene import load_scene

    p = folder / name
    p.write_bytes(data)
    result_or_oceansim_error(lambda: load_scene(p, device="cpu"))


@FUZZ
@given(data=inputs(USDA))
def test_usd_text(work, data):
    load_file(work, "fuzz.usda", data)


@FUZZ
@given(data=inputs(OBJ))
def test_obj_bytes(work, data):
    load_file(work, "fuzz.obj", data)


@FUZZ
@given(data=inputs(PLY))
def test_ply_bytes(work, data):
    load_file(work, "fuzz.ply", data)


@FUZZ
@given(data=inputs(STL))
def test_stl_bytes(work, data):
    load_file(work, "fuzz.stl", data)


def config_classes() -> list[type]:
    from oceansim_py.sensors.camera import UnderwaterCameraConfig
    from oceansim_py.sensors.dvl import DVLConfig
    from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig
    from oceansim_py.sensors.multibeam import MultibeamSonarConfig
    from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig
    from oceansim_py.sensors.sidescan import SidescanSonarConfig
    from oceansim_py.sensors.singlebeam import SinglebeamSonarConfig

    return [ImagingSonarConfig, MultibeamSonarConfig, SidescanSonarConfig, ProfilingSonarConfig,
            SinglebeamSonarConfig, UnderwaterCameraConfig, DVLConfig]


@FUZZ
@given(data=inputs(CONFIG_YAML), which=st.integers(0, 6))
def test_yaml_configs(work, data, which):
    cls = config_classes()[which]
    p = work / "config.yaml"
    p.write_bytes(data)
    result_or_oceansim_error(lambda: cls.from_yaml(p))


#: JSON-like values, including the numbers and types that break naive coercion.
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
              st.sampled_from(["2e1", "1e400", "oculus_m750d", "sum", "mean", "gaussian", "X", "world"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12)


@FUZZ
@given(which=st.integers(0, 6), changes=st.data())
def test_config_dicts(which, changes):
    cls = config_classes()[which]
    import dataclasses

    names = [f.name for f in dataclasses.fields(cls)] + ["preset"]
    data = changes.draw(st.dictionaries(st.sampled_from(names), VALUES, max_size=4))
    result_or_oceansim_error(lambda: cls.from_dict(data))


@FUZZ
@given(data=inputs(RIG_YAML))
def test_rig_yaml(work, data):
    from oceansim_py.dataset.rig import load_rig

    p = work / "rig.yaml"
    p.write_bytes(data)
    result_or_oceansim_error(lambda: load_rig(p))


def set_at(doc: Any, path: tuple, value: Any) -> None:
    """Set ``doc[path[0]][path[1]]...`` to ``value`` where that path still exists (earlier edits may have
    replaced a container by a scalar)."""
    target = doc
    for key in path[:-1]:
        if isinstance(target, dict) and key in target:
            target = target[key]
        elif isinstance(target, list) and isinstance(key, int) and key < len(target):
            target = target[key]
        else:
            return
    if isinstance(target, dict) or (isinstance(target, list) and isinstance(path[-1], int) and path[-1] < len(target)):
        target[path[-1]] = value


@FUZZ
@given(changes=st.data())
def test_rig_dicts(work, changes):
    from oceansim_py.dataset.rig import parse_rig

    rig = yaml.safe_load(RIG_YAML)
    for _ in range(changes.draw(st.integers(1, 4))):
        path = changes.draw(st.sampled_from(
            [("frames",), ("duration",), ("tick_rate_hz",), ("shard_size",), ("batch_size",), ("seed",),
             ("scene",), ("trajectory", "start"), ("trajectory", "speed"), ("trajectory", "type"),
             ("trajectory", "rate_hz"), ("sensors",), ("sensors", 0, "rate_hz"), ("sensors", 0, "mount"),
             ("sensors", 0, "config"), ("sensors", 0, "products"), ("sensors", 0, "type"), ("sensors", 1, "preset")]))
        set_at(rig, path, changes.draw(VALUES))
    result_or_oceansim_error(lambda: parse_rig(rig, "rig.yaml", work))


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    from oceansim_py.cli import main

    folder = tmp_path_factory.mktemp("fuzz_dataset")
    rig = folder / "rig.yaml"
    rig.write_bytes(RIG_YAML)
    out = folder / "out"
    assert main(["generate", "--rig", str(rig), "--out", str(out), "--no-progress"]) == 0
    return out


class ManifestEdit:
    """Replace or delete the value reached from the manifest's root by ``steps`` (each picks a key of a mapping,
    in sorted order, or an item of a list, modulo its length); its repr is the failing input hypothesis prints."""

    def __init__(self, steps: list[int], op: str, value: Any) -> None:
        self.steps, self.op, self.value = steps, op, value

    def __repr__(self) -> str:
        return f"ManifestEdit(steps={self.steps}, op={self.op!r}, value={self.value!r})"

    def path(self, doc: Any) -> list[Any]:
        keys, node = [], doc
        for s in self.steps:
            if isinstance(node, dict) and node:
                k = sorted(node, key=str)[s % len(node)]
            elif isinstance(node, list) and node:
                k = s % len(node)
            else:
                break
            keys.append(k)
            node = node[k]
        return keys

    def __call__(self, doc: Any) -> Any:
        keys = self.path(doc)
        if not keys:
            return self.value
        parent = doc
        for k in keys[:-1]:
            parent = parent[k]
        if self.op == "delete":
            del parent[keys[-1]]
        else:
            parent[keys[-1]] = self.value
        return doc


MANIFEST_EDITS = st.builds(ManifestEdit, st.lists(st.integers(0, 50), min_size=1, max_size=5),
                           st.sampled_from(["replace", "delete"]), VALUES)


@FUZZ
@given(edits=st.lists(MANIFEST_EDITS, min_size=1, max_size=3), raw=st.one_of(st.none(), mutated(b"{}")))
def test_dataset_manifests(dataset, edits, raw):
    from oceansim_py.dataset import load

    manifest = dataset / "manifest.json"
    original = manifest.read_bytes()
    try:
        if raw is not None:
            manifest.write_bytes(raw)
        else:
            doc = json.loads(original)
            for edit in edits:
                doc = edit(doc)
            manifest.write_text(json.dumps(doc))

        def read() -> None:
            reader = load(dataset)
            for sensor in ("fls", "dvl"):
                for i in range(min(reader.num_samples(sensor), 2)):
                    reader.sample(sensor, i)

        result_or_oceansim_error(read)
    finally:
        manifest.write_bytes(original)
