"""Every preset of every acoustic sensor kind (device presets and the peers' holoocean_* / oceansim_default / *_peer
presets) validates and renders through a dataset on the tank scene: one rig holds all of them, each writes its
default products, every array is finite, and the imaging sonars and multibeams see the tank."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from oceansim_py.cli import main
from oceansim_py.dataset import load
from oceansim_py.sensors import registry

KINDS = ("imaging_sonar", "multibeam", "sidescan", "singlebeam", "profiling", "msis")
#: Forward-looking kinds pitched 30 deg down at the tank floor; the single-beam straight down.
MOUNTS = {"imaging_sonar": [0, 0, 0, 0, 30, 0], "multibeam": [0, 0, 0, 0, 30, 0], "msis": [0, 0, 0, 0, 30, 0],
          "singlebeam": [0, 0, 0, 0, 90, 0]}


def test_every_acoustic_preset_validates_and_renders(tmp_path: Path):
    sensors = []
    for kind_name in KINDS:
        kind = registry.get(kind_name)
        for preset in kind.preset_names():
            assert kind.config_class.preset(preset).validate() is None, (kind_name, preset)
            sensor = {"name": f"{kind_name}__{preset}", "type": kind_name, "preset": preset, "rate_hz": 1.0,
                      "mount": MOUNTS.get(kind_name, [0, 0, 0, 0, 0, 0])}
            if kind_name == "profiling":
                sensor["config"] = {"image": True}      # the em2040 presets have none; image_png is a default
            sensors.append(sensor)
    assert {"holoocean_default", "oceansim_default", "oculus_m750d_peer"} <= {s["preset"] for s in sensors}
    rig = {"name": "presets", "scene": "tank", "seed": 5, "frames": 1, "tick_rate_hz": 1.0, "shard_size": 1,
           "batch_size": 1,
           "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
           "sensors": sensors}
    (tmp_path / "rig.yaml").write_text(yaml.safe_dump(rig))
    assert main(["generate", "--rig", str(tmp_path / "rig.yaml"), "--out", str(tmp_path / "out"),
                 "--no-progress"]) == 0
    frame = load(tmp_path / "out").frame(0)
    for sensor in sensors:
        sample = frame[sensor["name"]]
        assert sample is not None, sensor["name"]
        arrays = {k: v for k, v in sample.items() if isinstance(v, np.ndarray) and v.dtype.kind in "fc"}
        assert arrays, sensor["name"]
        for name, values in arrays.items():
            assert np.isfinite(values).all(), (sensor["name"], name)
        if sensor["type"] in ("imaging_sonar", "multibeam"):
            assert sample["fan_png"].max() > 0, sensor["name"]
