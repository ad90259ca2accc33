"""Dataset data-loss checks with numbers known by hand: float64 table products read back to the last bit, and
manifests whose shard records disagree with their shards (a sample held twice, one missing, spans that differ
from ``shard.json``) caught by the reader and by ``verify``, and a resume refused when the scene file changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from oceansim_py import ConfigError, DatasetError
from oceansim_py.dataset import load
from oceansim_py.dataset.generate import generate
from oceansim_py.dataset.rig import load_rig
from oceansim_py.dataset.shards import read_table, write_table
from oceansim_py.dataset.verify import verify_dataset
from test_dataset import write_rig  # noqa: E402 (tests/ is on sys.path under pytest)

#: The vehicle starts 4 km east of the tank (far from the origin, as in a survey's local frame) and runs east
#: at 0.5 m/s; a noise-free pose sensor at 3 Hz samples it at t = m / 3 s.
X0 = 4321.123456789
RIG = {
    "name": "far_pose", "scene": "tank", "seed": 1, "frames": 4, "tick_rate_hz": 3.0, "shard_size": 2,
    "batch_size": 2,
    "trajectory": {"type": "transect", "start": [X0, 0.0, -1.5], "end": [X0 + 10.0, 0.0, -1.5], "speed": 0.5},
    "sensors": [{"name": "pose", "type": "pose", "rate_hz": 3.0, "products": ["matrix"]}],
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    out = folder / "out"
    generate(load_rig(write_rig(folder, RIG)), out, progress=False)
    return out


@pytest.fixture
def copy(dataset, tmp_path) -> Path:
    out = tmp_path / "ds"
    shutil.copytree(dataset, out)
    return out


def test_float64_table_products_read_back_exactly(dataset):
    # x(t) = X0 + 0.5 t at t = m / 3: 4321.123456789, 4321.28978..., 4321.45645..., 4321.62312... Written with
    # 9 significant digits (as before) x read back as 4321.12346 etc., 1e-6 m off; now to the bit (1e-9 covers
    # the trajectory's own float64 rounding, ~1e-12 m).
    ds = load(dataset)
    assert ds.num_samples("pose") == 4
    for m, sample in enumerate(ds.samples("pose")):
        x = sample["matrix"].reshape(4, 4)[0, 3]
        assert abs(x - (X0 + 0.5 * m / 3.0)) < 1e-9
        assert sample["matrix"].reshape(4, 4)[2, 3] == -1.5


def test_table_cells_keep_float64_values_and_float32_cells_stay_short(tmp_path):
    # An epoch time stamp: 1.7e9 + 0.1 s was written "1.7e+09" with 9 significant digits (0.1 s lost); a float32
    # keeps its 9-digit form (enough to round-trip any float32), a short float64 its short form.
    t = np.array([1_700_000_000.1, 1_700_000_000.2, 0.5])
    f32 = np.array([0.1, 1.0 / 3.0, 12345.678], dtype=np.float32)
    p = tmp_path / "samples.csv"
    write_table(p, {"sample": np.arange(3), "time": t, "value": f32})
    lines = p.read_text().splitlines()
    assert lines[1] == "0,1700000000.1,0.100000001"
    assert lines[3] == "2,0.5,12345.6777"
    back = read_table(p)
    assert np.array_equal(back["time"], t)
    assert np.array_equal(back["value"].astype(np.float32), f32)
    assert np.array_equal(back["sample"], [0, 1, 2])


def _edit_manifest(folder: Path, edit) -> None:
    p = folder / "manifest.json"
    m = json.loads(p.read_text())
    edit(m)
    p.write_text(json.dumps(m))


def test_manifest_spans_differing_from_shard_json_are_reported_by_verify(copy):
    # shard 0 holds pose samples 0, 1 and shard 1 samples 2, 3 (2 ticks each at 3 Hz); a manifest that moves
    # sample 2 to shard 0 still chains (0..3, 3..4) so it opens, but sample 2 is not in shard 0's files
    assert verify_dataset(copy) == []

    def move(m):
        m["shards"][0]["samples"]["pose"] = [0, 3]
        m["shards"][1]["samples"]["pose"] = [3, 4]

    _edit_manifest(copy, move)
    problems = verify_dataset(copy)
    assert len(problems) == 2
    assert all("the manifest's 'samples'" in p and "differs from shard.json's" in p for p in problems)
    with pytest.raises(DatasetError, match="2 problem"):
        load(copy, verify=True)


@pytest.mark.parametrize("spans, message", [
    (([0, 2], [1, 4]), r"samples of 'pose' \[1, 4\] overlap the previous shard \(which ends at 2\)"),
    (([0, 2], [3, 4]), r"samples of 'pose' \[3, 4\] leave a gap after the previous shard \(which ends at 2\)"),
])
def test_a_sample_held_twice_or_missing_is_refused_at_open(copy, spans, message):
    def edit(m):
        for shard, span in zip(m["shards"], spans):
            shard["samples"]["pose"] = list(span)

    _edit_manifest(copy, edit)
    with pytest.raises(DatasetError, match=message):
        load(copy)


def test_ticks_that_disagree_with_the_frame_count_are_refused(copy):
    def edit(m):
        m["shards"][1]["ticks"] = [1, 3]      # 2 frames, but tick 1 is shard 0's

    _edit_manifest(copy, edit)
    with pytest.raises(DatasetError, match=r"ticks \[1, 3\] overlap the previous shard"):
        load(copy)


def _floor_obj(path: Path, z: float) -> None:
    """A 20 m square floor at height ``z`` (m) as an OBJ (Z up, metres)."""
    path.write_text(f"v -10 -10 {z}\nv 10 -10 {z}\nv 10 10 {z}\nv -10 10 {z}\nf 1 2 3\nf 1 3 4\n")


def test_resume_after_the_scene_file_changed_is_refused(tmp_path):
    # The run renders an altimeter over a floor 3 m below it (first return 3.0 m, scene bounds z = -4.5); the
    # floor is then moved to 4 m below (bounds z = -5.5). Resumed, shard 1 would read 4.0 m next to shard 0's
    # 3.0 m in one dataset: refused, naming the bounds, with the kept shard untouched.
    scene = tmp_path / "floor.obj"
    _floor_obj(scene, -4.5)
    rig = {"name": "floor", "scene": str(scene), "seed": 1, "frames": 4, "tick_rate_hz": 2.0, "shard_size": 2,
           "batch_size": 2,
           "trajectory": {"type": "transect", "start": [0.0, 0.0, -1.5], "end": [5.0, 0.0, -1.5], "speed": 0.5},
           "sensors": [{"name": "alt", "type": "singlebeam", "preset": "altimeter_200khz", "rate_hz": 2.0,
                        "mount": [0, 0, 0, 0, 90, 0], "config": {"cone_rings": 2, "rays_per_ring": 8}}]}
    out = tmp_path / "out"
    generate(load_rig(write_rig(tmp_path, rig)), out, progress=False)
    assert float(load(out).sample("alt", 0)["first_return_range"]) == pytest.approx(3.0, abs=0.05)
    shutil.rmtree(out / "shard_00001")                     # as if killed before shard 1 completed

    def running(m):
        m["shards"] = m["shards"][:1]
        m["status"] = "running"

    _edit_manifest(out, running)
    kept = (out / "shard_00000" / "shard.json").read_bytes()
    _floor_obj(scene, -5.5)
    with pytest.raises(ConfigError, match=r"changed since this run began \(bounds .* then, .* now\)"):
        generate(load_rig(write_rig(tmp_path, rig)), out, progress=False, resume=True)
    assert (out / "shard_00000" / "shard.json").read_bytes() == kept
    _floor_obj(scene, -4.5)                                # restored: the run resumes and completes
    generate(load_rig(write_rig(tmp_path, rig)), out, progress=False, resume=True)
    ds = load(out, verify=True)
    assert [float(s["first_return_range"]) for s in ds.samples("alt")] == pytest.approx([3.0] * 4, abs=0.05)
