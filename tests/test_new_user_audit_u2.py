"""Audit U2 (a new user's first hour, a third pass): names that ``describe`` shows work everywhere, and a warning
raised per batch is said once per command."""

from __future__ import annotations

from pathlib import Path

import yaml

from oceansim_py.cli import main


def _msis_rig(tmp_path: Path, sensor_type: str) -> Path:
    """4 ticks at 2 Hz (2 batches of 2) of a Ping360 in the tank: the rig rate, 2 Hz, is not the head's step rate
    (1 / step_period = 1 / 0.025 s = 40 Hz here), which the MSIS warns about."""
    rig = {"name": "scan", "scene": "tank", "seed": 1, "frames": 4, "tick_rate_hz": 2.0, "shard_size": 4,
           "batch_size": 2,
           "trajectory": {"type": "transect", "start": [-0.5, 0.0, -1.5], "end": [0.5, 0.0, -1.5], "speed": 0.1},
           "sensors": [{"name": "scan", "type": sensor_type, "preset": "ping360", "rate_hz": 2.0,
                        "config": {"max_range": 4.0, "range_bins": 40, "ping_period": 0.025}}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    return path


def test_a_rig_may_name_a_sensor_by_the_alias_describe_shows(tmp_path: Path, capsys) -> None:
    # `oceansim-py describe msis` says "aliases: scanning_sonar" and registry.get accepts it; a rig refused it
    # ("unknown sensor type 'scanning_sonar'"). The manifest records the kind's own name.
    import json

    rig = _msis_rig(tmp_path, "scanning_sonar")
    assert main(["generate", "--rig", str(rig), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["sensors"]["scan"]["type"] == "msis"


def test_a_warning_raised_per_batch_is_printed_once_per_command(tmp_path: Path, capsys) -> None:
    # 4 samples in 2 batches: the MSIS rate warning was printed once per batch (8 times for the 8 frames of a
    # user's rig); the same line once is enough
    rig = _msis_rig(tmp_path, "msis")
    assert main(["generate", "--rig", str(rig), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count("is not the head's step rate") == 1, err
    # and a second command in the same process says it again
    assert main(["generate", "--rig", str(rig), "--out", str(tmp_path / "out2"), "--no-progress"]) == 0
    assert capsys.readouterr().err.count("is not the head's step rate") == 1


def test_render_takes_every_name_of_a_kind(tmp_path: Path, capsys) -> None:
    # `describe msis` lists the alias scanning_sonar; `render scanning_sonar` was an argparse "invalid choice"
    out = tmp_path / "scan"
    assert main(["render", "scanning_sonar", "--scene", "tank", "--pose", "0,0,-1.5,0,0,0", "--set", "max_range=4",
                 "--set", "range_bins=40", "--out", str(out)]) == 0
    assert (out / "msis_polar.npy").is_file()

