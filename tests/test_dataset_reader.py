"""Reading datasets: indexing and slicing, checksum verification (``verify``), and damaged or hostile folders
that must give a ``DatasetError`` (never a numpy/json exception or a sample without its arrays)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from oceansim_py import DatasetError
from oceansim_py.errors import DatasetIndexError
from oceansim_py.cli import main
from oceansim_py.dataset import load
from oceansim_py.dataset.generate import generate
from oceansim_py.dataset.rig import load_rig
from oceansim_py.dataset.verify import verify_dataset
from test_dataset import RIG, write_rig  # noqa: E402 (tests/ is on sys.path under pytest)

SMALL = {**RIG, "frames": 4, "shard_size": 2,
         "sensors": [{**RIG["sensors"][0], "config": {**RIG["sensors"][0]["config"], "range_bins": 16,
                                                      "n_beams": 8, "elevation_rays": 4}},
                     RIG["sensors"][2]]}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("reader")
    out = folder / "out"
    generate(load_rig(write_rig(folder, SMALL)), out, progress=False)
    return out


@pytest.fixture
def copy(dataset, tmp_path) -> Path:
    out = tmp_path / "ds"
    shutil.copytree(dataset, out)
    return out


def test_len_index_negative_and_slices(dataset):
    ds = load(dataset)
    assert len(ds) == 4
    assert ds[0]["frame"] == 0 and ds[-1]["frame"] == 3 and ds[-4]["frame"] == 0
    assert [f["frame"] for f in ds[1:3]] == [1, 2]
    assert [f["frame"] for f in ds[::-2]] == [3, 1]
    assert ds[10:] == []
    for bad in (4, -5, 100):
        with pytest.raises(IndexError):
            ds[bad]
    np.testing.assert_array_equal(ds[-1]["fls"]["intensity"], ds.frame(3)["fls"]["intensity"])


def test_a_frame_out_of_range_is_a_dataset_error_naming_the_dataset_frame_and_range(dataset):
    ds = load(dataset)
    path = re.escape(str(dataset))
    for asked in (4, -1, 100):
        with pytest.raises(DatasetIndexError, match=rf"^{path}: no frame {asked}; the dataset has frames 0\.\.3$"):
            ds.frame(asked)
    with pytest.raises(DatasetError, match=rf"^{path}: no frame -5; the dataset has frames 0\.\.3 \(or -4\.\.-1 "
                                           rf"from the end\)$") as info:
        ds[-5]
    assert isinstance(info.value, IndexError)
    assert [f["frame"] for f in ds] == [0, 1, 2, 3]  # iteration still ends at the last frame


def test_frame_and_sample_take_integers_and_an_absent_sample_is_an_index_error(dataset):
    # frame(1.5) used to return a frame between two ticks ("frame": 1.5, samples of tick 1) and sample(name, 1.0)
    # a ValueError from a format string; a sample past the end was a DatasetError but no IndexError.
    ds = load(dataset)
    path = re.escape(str(dataset))
    for bad in (1.5, 2.0, "1"):
        with pytest.raises(TypeError, match=rf"^frame indices must be integers, not {type(bad).__name__}$"):
            ds.frame(bad)
        with pytest.raises(TypeError, match=rf"^sample indices must be integers, not {type(bad).__name__}$"):
            ds.sample("fls", bad)
    with pytest.raises(TypeError, match=r"^dataset indices must be integers or slices, not float$"):
        ds[1.0]
    assert ds.frame(np.int64(2))["frame"] == 2 and ds.sample("fls", np.int32(1))["sample"] == 1
    n = ds.num_samples("fls")
    for asked in (n, -1):
        with pytest.raises(DatasetIndexError, match=rf"^{path}: sensor 'fls' has no sample {asked} in the complete "
                                                    rf"shards \({n} sample\(s\), 0\.\.{n - 1}\)$"):
            ds.sample("fls", asked)


def test_verify_reports_every_missing_and_corrupted_file(copy, capsys):
    assert verify_dataset(copy) == []
    assert main(["verify", str(copy)]) == 0
    (copy / "shard_00000" / "fls" / "intensity_000000.npy").unlink()
    (copy / "shard_00000" / "fls" / "intensity_000001.npy").unlink()
    with open(copy / "shard_00001" / "baro" / "samples.csv", "a") as fh:
        fh.write("9,9,9,9,9\n")
    problems = verify_dataset(copy)
    assert len(problems) == 3
    assert sum("intensity_000000.npy: missing" in p for p in problems) == 1
    assert sum("intensity_000001.npy: missing" in p for p in problems) == 1
    assert sum("samples.csv: corrupted" in p for p in problems) == 1
    assert main(["verify", str(copy)]) == 1
    assert "3 problem(s)" in capsys.readouterr().err
    with pytest.raises(DatasetError, match="3 problem"):
        load(copy, verify=True)


def test_missing_shard_folder_is_an_error_not_a_sample_without_arrays(copy):
    shutil.rmtree(copy / "shard_00001")
    with pytest.raises(DatasetError, match=r"shard_00001: listed in the manifest but missing"):
        load(copy)


def test_missing_array_file_is_an_error(copy):
    (copy / "shard_00000" / "fls" / "label_id_000001.npy").unlink()
    ds = load(copy)
    with pytest.raises(DatasetError, match=r"label_id_000001\.npy: missing"):
        ds[1]


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[:100]), "unreadable"),
    (lambda p: p.write_bytes(b"not an npy file at all"), "unreadable"),
])
def test_damaged_arrays_are_dataset_errors(copy, damage, message):
    damage(copy / "shard_00000" / "fls" / "intensity_000000.npy")
    with pytest.raises(DatasetError, match=message):
        load(copy)[0]


def test_damaged_table_and_manifest_are_dataset_errors(copy):
    (copy / "shard_00000" / "baro" / "samples.csv").write_bytes(b"sample,time,pressure\n0,0.0,abc\n")
    with pytest.raises(DatasetError, match=r"samples\.csv: unreadable table"):
        load(copy)[0]
    (copy / "manifest.json").write_text("{\"format\": \"oceansim_py-dataset\", \"shards\": [")
    with pytest.raises(DatasetError, match="unreadable manifest"):
        load(copy)
    (copy / "manifest.json").write_text(json.dumps({"format": "oceansim_py-dataset", "format_version": 1, "rig": {},
                                                    "fingerprint": "", "versions": {}, "seed": 0, "sensors": [],
                                                    "shards": 3, "frames": 1, "status": "complete"}))
    with pytest.raises(DatasetError, match="invalid manifest"):
        load(copy)


def test_manifest_shard_names_cannot_leave_the_folder(copy):
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["shards"][0]["name"] = "../../etc"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match="is not shard_NNNNN"):
        load(copy)


def test_symlinks_out_of_the_dataset_are_refused(copy, tmp_path):
    target = copy / "shard_00000" / "fls" / "intensity_000000.npy"
    outside = tmp_path / "elsewhere.npy"
    shutil.copy(target, outside)
    target.unlink()
    target.symlink_to(outside)
    with pytest.raises(DatasetError, match="symlink out of the dataset"):
        load(copy)[0]
    assert any("symlink" in p for p in verify_dataset(copy))


def test_table_streams_read_back_as_arrays_and_every_array_states_its_unit(tmp_path):
    rig = {**RIG, "frames": 4, "shard_size": 2, "sensors": [
        {"name": "pose", "type": "pose", "rate_hz": 4.0},
        {"name": "imu", "type": "imu", "preset": "consumer_mems", "rate_hz": 4.0},
        {"name": "baro", "type": "barometer", "preset": "bar30", "rate_hz": 4.0},
        {**SMALL["sensors"][0]}]}
    out = tmp_path / "out"
    generate(load_rig(write_rig(tmp_path, rig)), out, progress=False)
    ds = load(out)
    frame = ds[1]
    m = frame["pose"]["matrix"]
    assert m.shape == (4, 4)
    # transect along +x at 0.5 m/s from x = -1.0, 1.5 m deep: t = 0.25 s -> x = -0.875 (pose noise is small)
    np.testing.assert_allclose(m[:3, 3], [-0.875, 0.0, -1.5], atol=0.05)
    np.testing.assert_allclose(m[3], [0, 0, 0, 1])
    assert frame["imu"]["accel"].shape == (3,) and frame["imu"]["accel"][2] == pytest.approx(9.81, abs=0.5)
    assert np.ndim(frame["baro"]["true_depth"]) == 0 and frame["baro"]["true_depth"] == pytest.approx(1.5)
    manifest = json.loads((out / "manifest.json").read_text())
    for name, sensor in manifest["sensors"].items():
        for product in sensor["products"]:
            assert sensor["arrays"][product]["unit"], (name, product)
    assert manifest["sensors"]["pose"]["arrays"]["matrix"]["shape"] == [4, 4]
    assert manifest["sensors"]["fls"]["arrays"]["intensity"] == {
        "unit": manifest["sensors"]["fls"]["arrays"]["intensity"]["unit"], "format": "npy", "shape": [16, 8],
        "dtype": "float32"}
    from oceansim_py.sensors.registry import builtin_kinds

    SENSOR_TYPES = builtin_kinds()      # the per-sensor adapters became registry kinds (issue 15)

    for adapter in SENSOR_TYPES.values():
        assert set(adapter.units) == set(adapter.products), adapter.type_name


def test_compressed_run_reads_back_identical_and_is_deterministic(dataset, tmp_path):
    rig = load_rig(write_rig(tmp_path, SMALL))
    out = tmp_path / "zip"
    generate(rig, out, progress=False, compress=True)
    plain, packed = load(dataset), load(out)
    assert list((out / "shard_00000" / "fls").glob("*.npy")) == []
    for k in range(len(plain)):
        np.testing.assert_array_equal(plain[k]["fls"]["intensity"], packed[k]["fls"]["intensity"])
        np.testing.assert_array_equal(plain[k]["fls"]["label_id"], packed[k]["fls"]["label_id"])
    assert verify_dataset(out) == []
    again = tmp_path / "zip2"
    generate(rig, again, progress=False, compress=True)
    assert (again / "shard_00001" / "shard.json").read_bytes() == (out / "shard_00001" / "shard.json").read_bytes()
    with pytest.raises(DatasetError, match="begun with --compress"):
        generate(rig, out, progress=False, resume=True)
