"""Dataset generation end to end: CLI, manifest, shards, resume after a real kill, loaders, bad rigs (Ray vs local:
tests/test_determinism.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from oceansim_py import ConfigError, DatasetError
from oceansim_py.cli import main
from oceansim_py.dataset import load
from oceansim_py.dataset.manifest import validate_manifest
from oceansim_py.dataset.rig import builtin_rig_names, load_rig
from oceansim_py.dataset.shards import verify_shard

RIG = {
    "name": "tank_test",
    "scene": "tank",
    "seed": 11,
    "frames": 12,
    "tick_rate_hz": 4.0,
    "shard_size": 4,
    "batch_size": 3,
    "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
    "sensors": [
        {"name": "fls", "type": "imaging_sonar", "preset": "oceansim_default", "rate_hz": 4.0,
         "config": {"max_range": 6.0, "n_beams": 64, "range_bins": 96, "rays_per_beam": 2, "elevation_rays": 24},
         "products": ["intensity", "label_id", "fan_png"]},
        {"name": "dvl", "type": "dvl", "preset": "dvl_30deg", "rate_hz": 8.0, "mount": [0, 0, 0, 0, 0, 0]},
        {"name": "baro", "type": "barometer", "preset": "bar30", "rate_hz": 2.0},
        {"name": "imu", "type": "imu", "preset": "consumer_mems", "rate_hz": 20.0},
    ],
}


def write_rig(folder: Path, rig: dict, name: str = "rig.yaml") -> Path:
    p = folder / name
    p.write_text(yaml.safe_dump(rig))
    return p


def checksums(out: Path) -> dict[int, str]:
    manifest = json.loads((out / "manifest.json").read_text())
    return {s["index"]: s["checksum"] for s in manifest["shards"]}


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("clean")
    rig = write_rig(folder, RIG)
    out = folder / "out"
    assert main(["generate", "--rig", str(rig), "--out", str(out), "--no-progress"]) == 0
    return out


def test_end_to_end_manifest_and_shards(clean_run):
    manifest = json.loads((clean_run / "manifest.json").read_text())
    assert validate_manifest(manifest) == []
    assert manifest["status"] == "complete"
    assert [s["frames"] for s in manifest["shards"]] == [4, 4, 4]
    assert manifest["versions"]["warp"] and manifest["seed"] == 11
    fls = manifest["sensors"]["fls"]
    assert len(fls["ranges_m"]) == 96 and len(fls["bearings_rad"]) == 64
    assert fls["config"]["n_beams"] == 64 and fls["config"]["seed"] == 11
    for s in manifest["shards"]:
        meta = verify_shard(clean_run / s["name"])
        assert meta is not None and meta["checksum"] == s["checksum"]
    # per-sensor rates: 12 ticks at 4 Hz = 3 s -> fls 12, dvl 24, baro 6, imu 60 samples
    counts = {name: sum(s["samples"][name][1] - s["samples"][name][0] for s in manifest["shards"])
              for name in manifest["sensors"]}
    assert counts == {"fls": 12, "dvl": 24, "baro": 6, "imu": 60}
    assert not list(clean_run.glob(".shard_*"))


def test_loader_returns_what_was_written(clean_run):
    ds = load(clean_run)
    assert len(ds) == 12
    frame = ds.frame(5)
    assert frame["fls"]["sample"] == 5
    raw = np.load(clean_run / "shard_00001" / "fls" / "intensity_000005.npy")
    np.testing.assert_array_equal(frame["fls"]["intensity"], raw)
    assert frame["fls"]["intensity"].shape == (96, 64) and frame["fls"]["intensity"].dtype == np.float32
    assert frame["fls"]["fan_png"].dtype == np.uint8
    # dvl at 8 Hz: tick 5 (t = 1.25 s) holds sample 10; the vehicle moves at 0.5 m/s along +x (sensor x)
    assert frame["dvl"]["sample"] == 10
    assert frame["dvl"]["velocity"][0] == pytest.approx(0.5, abs=0.05)
    # barometer at 2 Hz: 1.5 m deep -> 101325 + 1026 * 9.80665 * 1.5 Pa within noise
    assert frame["baro"]["sample"] == 2
    assert frame["baro"]["true_depth"] == pytest.approx(1.5, abs=1e-6)
    imu = list(ds.samples("imu"))
    assert len(imu) == 60 and [s["sample"] for s in imu] == list(range(60))
    assert np.mean([s["accel"][2] for s in imu]) == pytest.approx(9.81, abs=0.1)


def test_killed_run_resumes_to_identical_checksums(clean_run, tmp_path):
    rig = write_rig(tmp_path, RIG)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "oceansim_py.cli", "generate", "--rig", str(rig), "--out",
                             str(out), "--no-progress"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while not (out / "shard_00000").is_dir():
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "no shard appeared"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "running"
    # complete shards on disk (the manifest may not list the newest yet if the kill fell between the two)
    done_before = sum(verify_shard(out / f"shard_{i:05d}") is not None for i in range(3))
    assert 1 <= done_before < 3
    assert main(["generate", "--rig", str(rig), "--out", str(out), "--resume", "--no-progress"]) == 0
    final = json.loads((out / "manifest.json").read_text())
    assert final["timing"]["shards_kept"] == done_before
    assert checksums(out) == checksums(clean_run)
    for s in final["shards"]:
        a = (out / s["name"] / "shard.json").read_bytes()
        b = (clean_run / s["name"] / "shard.json").read_bytes()
        assert a == b


def test_write_failure_keeps_complete_shards(clean_run, tmp_path, monkeypatch):
    from oceansim_py.dataset import generate as gen_module
    from oceansim_py.io import images

    rig = load_rig(write_rig(tmp_path, RIG))
    out = tmp_path / "out"
    real_save = np.save
    calls = {"shards": 0}

    def on_shard(record):
        calls["shards"] += 1

        def disk_full(*args, **kwargs):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(images.np, "save", disk_full)

    with pytest.raises(DatasetError, match="No space left on device"):
        gen_module.generate(rig, out, progress=False, on_shard=on_shard)
    monkeypatch.setattr(images.np, "save", real_save)
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["index"] for s in manifest["shards"]] == [0]
    assert verify_shard(out / "shard_00000") is not None
    gen_module.generate(rig, out, resume=True, progress=False)
    assert checksums(out) == checksums(clean_run)


def test_torch_dataset(clean_run):
    torch = pytest.importorskip("torch")
    from oceansim_py.dataset import TorchDataset

    ds = TorchDataset(clean_run, sensors=["fls", "dvl"])
    item = ds[3]
    assert isinstance(item["fls"]["intensity"], torch.Tensor)
    assert tuple(item["fls"]["intensity"].shape) == (96, 64)
    assert len(ds) == 12 and "ranges_m" in ds.metadata["fls"]


@pytest.mark.parametrize("change, message", [
    ({"sensorz": []}, r"unknown key\(s\) \['sensorz'\]"),
    ({"sensors": [{"name": "x", "type": "lidar", "rate_hz": 1.0}]}, r"sensors\[0\]\.type: unknown sensor type 'lidar'"),
    ({"sensors": [{"name": "x", "type": "barometer", "rate_hz": 0}]}, r"sensors\[0\]\.rate_hz: must be > 0"),
    ({"sensors": [{"name": "x", "type": "barometer", "rate_hz": 1, "confg": {}}]}, r"unknown key\(s\) \['confg'\]"),
    ({"sensors": [{"name": "x", "type": "barometer", "rate_hz": 1, "config": {"noise_sgima": 1}}]},
     r"unknown key\(s\) \['noise_sgima'\]"),
    ({"sensors": [{"name": "x", "type": "dvl", "rate_hz": 1, "config": {"raycast_backnd": "warp"}}]},
     r"unknown key\(s\) \['raycast_backnd'\] for DVLConfig; valid keys are .*'raycast_backend'"),
    ({"scene": "atlantis"}, r"scene: 'atlantis' is not a built-in scene"),
    ({"scene": "missing.usda"}, r"scene: scene file .*missing\.usda does not exist"),
    ({"trajectory": {"type": "transect", "start": [0, 0, 0], "end": [1, 0, 0], "sped": 1}},
     r"trajectory: unknown key\(s\) \['sped'\]"),
    ({"frames": 1000}, r"lower 'frames'"),
])
def test_bad_rigs_are_config_errors(tmp_path, change, message):
    rig = write_rig(tmp_path, {**RIG, **change})
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match=message) as info:
        main_args = ["generate", "--rig", str(rig), "--out", str(out), "--no-progress"]
        from oceansim_py.commands.generate import run
        from oceansim_py.cli import build_parser

        run(build_parser().parse_args(main_args))
    assert "rig.yaml" in str(info.value) or "frames" in str(info.value)
    assert not list(out.glob("shard_*")) if out.exists() else True


def test_rig_sensor_chooses_its_raycast_backend(tmp_path, monkeypatch):
    """A sensor's ``config: {raycast_backend: warp}`` in a rig renders through Warp whatever the scene's choice: the
    images are those of the same rig with the scene on Warp (OCEANSIM_RAYCAST_BACKEND), the manifest records the
    field, and a bad name is a ConfigError naming the field."""
    fls = dict(RIG["sensors"][0], config={**RIG["sensors"][0]["config"], "raycast_backend": "warp"})
    small = {**RIG, "frames": 4, "sensors": [fls]}
    monkeypatch.setenv("OCEANSIM_RAYCAST_BACKEND", "auto")
    main(["generate", "--rig", str(write_rig(tmp_path, small)), "--out", str(tmp_path / "chosen"), "--no-progress"])
    manifest = json.loads((tmp_path / "chosen" / "manifest.json").read_text())
    assert manifest["sensors"]["fls"]["config"]["raycast_backend"] == "warp"
    monkeypatch.setenv("OCEANSIM_RAYCAST_BACKEND", "warp")
    plain = {**small, "sensors": [RIG["sensors"][0]]}
    main(["generate", "--rig", str(write_rig(tmp_path, plain, "plain.yaml")), "--out", str(tmp_path / "plain"),
          "--no-progress"])
    chosen, warp = load(tmp_path / "chosen"), load(tmp_path / "plain")
    for i in range(4):
        np.testing.assert_array_equal(chosen.frame(i)["fls"]["intensity"], warp.frame(i)["fls"]["intensity"])
    bad = {**small, "sensors": [dict(fls, config={"raycast_backend": "optix"})]}
    with pytest.raises(ConfigError, match=r"ImagingSonarConfig\.raycast_backend='optix' is not a ray-cast backend"):
        load_rig(write_rig(tmp_path, bad, "bad.yaml"))


def test_output_holding_a_different_run_is_refused(clean_run, tmp_path):
    other = dict(RIG, seed=12)
    rig = write_rig(tmp_path, other)
    with pytest.raises(ConfigError, match="holds a different run"):
        from oceansim_py.dataset.generate import generate

        generate(load_rig(rig), clean_run, progress=False)


def test_builtin_rigs_validate():
    names = builtin_rig_names()
    assert "pier_survey" in names
    types = set()
    for name in names:
        rig = load_rig(name)
        types |= {s.type for s in rig.sensors}
    from oceansim_py.sensors.registry import builtin_kinds

    SENSOR_TYPES = builtin_kinds()      # the per-sensor adapters became registry kinds (issue 15)

    assert types == set(SENSOR_TYPES), "the built-in rigs together use every sensor type"
