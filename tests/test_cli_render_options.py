"""``oceansim-py render`` options are checked when parsed, before any scene is loaded or rendered: a bad number
is an argparse error naming the option (exit 2), not a traceback or a wasted render, and ``--out`` that is a
file is a ``ConfigError`` naming ``--out``. Before: ``--fan-width 100000`` rendered, then died with a 43 GiB
NumPy MemoryError traceback; ``--fan-width 0`` rendered, then failed without naming the option; ``--db-range
nan`` / ``-5`` wrote meaningless PNGs; ``--speed nan`` failed with a pose error; ``--out FILE`` rendered, then
failed with "could not write the PNG (File exists)".
"""

from __future__ import annotations

import numpy as np
import pytest

from oceansim_py import cli
from oceansim_py.errors import ConfigError
from oceansim_py.io import images


@pytest.mark.parametrize("argv, message", [
    (["render", "sonar", "--fan-width", "0"], "argument --fan-width: '0': must be between 2 and 16,384 pixels"),
    (["render", "sonar", "--fan-width", "100000"], "argument --fan-width: '100000': must be between 2 and 16,384"),
    (["render", "multibeam", "--fan-width", "1.5"], "argument --fan-width: '1.5' is not a whole number"),
    (["render", "multibeam", "--db-range", "nan"], "argument --db-range: 'nan': must be between 1 and 200 dB"),
    (["render", "multibeam", "--db-range", "-5"], "argument --db-range: '-5': must be between 1 and 200 dB"),
    (["render", "msis", "--speed", "nan"], "argument --speed: 'nan': must be between -100 and 100 m/s"),
    (["render", "sonar", "--frame-index", "-1"], "argument --frame-index: '-1': must be between 0 and 2,147,483,647"),
])
def test_bad_numbers_are_refused_when_parsed(argv, message, capsys, monkeypatch):
    monkeypatch.setattr("oceansim_py.commands.render.run", lambda *a: pytest.fail("rendered despite bad input"))
    with pytest.raises(SystemExit) as exc:
        cli.main(argv + ["--out", "unused"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("sub", ["", "/inner"])
def test_out_that_is_a_file_is_refused_before_rendering(sub, tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("keep me")
    monkeypatch.setattr("oceansim_py.commands.render.build_config",
                        lambda *a, **k: pytest.fail("work started despite a bad --out"))
    assert cli.main(["render", "sonar", "--out", f"{blocker}{sub}"]) == 2
    err = capsys.readouterr().err
    assert f"--out {blocker}{sub}:" in err and "not a folder" in err
    assert blocker.read_text() == "keep me"


def test_image_helpers_refuse_bad_widths_and_db_ranges():
    # A 2 x 2 polar image, ranges 1 and 2 m, bearings +-0.1 rad: fine at width 4, refused outside [2, 16384].
    polar = np.ones((2, 2), np.float32)
    ranges, bearings = np.array([1.0, 2.0]), np.array([-0.1, 0.1])
    assert images.polar_to_cartesian(polar, ranges, bearings, 4).shape[-1] == 4
    for width in (1, 16385, 4.0, True):
        with pytest.raises(ConfigError, match="width must be a whole number of pixels in"):
            images.polar_to_cartesian(polar, ranges, bearings, width)
    # db mode: 0.1 of the maximum is -10 dB, on a 20 dB window 255 * (20 - 10) / 20 = 127.5 -> 128.
    assert images.to_uint8(np.array([1.0, 0.1]), mode="db", db_range=20.0).tolist() == [255, 128]
    for db_range in (0.0, -5.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="db_range must be a finite number of dB > 0"):
            images.to_uint8(np.array([1.0, 0.1]), mode="db", db_range=db_range)


def test_describe_unknown_name_lists_scenes_and_sensor_kinds(capsys):
    # `describe` takes a scene or a sensor kind; a name that is neither says both lists (was: scenes only).
    assert cli.main(["describe", "sonr"]) == 2
    err = capsys.readouterr().err
    assert "sonr: neither a file, a built-in scene (['harbour', 'pier', 'tank', 'wreck']) nor a sensor kind" in err
    assert "'imaging_sonar'" in err and "'dvl'" in err


def test_modem_without_messages_warns_how_to_schedule_them(tmp_path, capsys):
    # The modems' default configs schedule no message, so `render acoustic_modem` wrote only empty event lists
    # without a word; now it says so and how to schedule one (the suggested --set gives one event, checked too).
    assert cli.main(["render", "acoustic_modem", "--pings", "3", "--out", str(tmp_path / "none")]) == 0
    captured = capsys.readouterr()
    assert "warning: acoustic_modem: the config schedules no messages" in captured.err
    assert "--set 'messages=[[2.0, vehicle, topside, hello]]'" in captured.err
    assert "of the acoustic_modem along a straight run" in captured.out
    out = tmp_path / "one"
    assert cli.main(["render", "acoustic_modem", "--pings", "5", "--set", "messages=[[2.0, vehicle, topside, hello]]",
                     "--out", str(out)]) == 0
    assert "schedules no messages" not in capsys.readouterr().err
    import json

    events = json.loads((out / "acoustic_modem_events.json").read_text())
    assert sum(len(e) for e in events) == 1


def test_set_with_a_misspelt_field_suggests_the_field(capsys, monkeypatch):
    # README's example error: `--set max_rang=5` names the flag and the nearest field.
    monkeypatch.setattr("oceansim_py.commands.render.scene_and_pose", lambda *a: pytest.fail("loaded a scene"))
    assert cli.main(["render", "sonar", "--set", "max_rang=5", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert "--set max_rang=5: ImagingSonarConfig has no field 'max_rang'; did you mean 'max_range'?" in err


def test_unknown_config_and_rig_keys_suggest_the_nearest_valid_key(tmp_path):
    from oceansim_py.dataset.rig import parse_rig
    from oceansim_py.io.config import did_you_mean
    from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig

    assert did_you_mean(["max_rang", 3, "zzzz"], ["max_range", "min_range"]) == \
        "; did you mean 'max_range' for 'max_rang'?"
    assert did_you_mean(["zzzz"], ["max_range"]) == ""
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['max_rang'\] .*did you mean 'max_range' for"):
        ImagingSonarConfig.from_dict({"max_rang": 5.0})
    rig = {"scene": "tank", "trajectory": {"type": "transect", "start": [0, 0, -1], "end": [1, 0, -1], "sped": 1.0},
           "sensors": [{"name": "p", "type": "pose", "rat_hz": 1.0}]}
    with pytest.raises(ConfigError, match=r"did you mean 'rate_hz' for 'rat_hz'\?"):
        parse_rig(rig, source="rig.yaml")
    rig["sensors"][0]["rate_hz"] = rig["sensors"][0].pop("rat_hz")
    with pytest.raises(ConfigError, match=r"trajectory: unknown key\(s\) \['sped'\].*did you mean 'speed' for"):
        parse_rig(rig, source="rig.yaml")


def test_rig_sensor_config_that_fails_validation_names_the_sensor():
    # Two imaging sonars in a rig: a bad max_range must say which one (was: only "ImagingSonarConfig.max_range").
    from oceansim_py.dataset.rig import parse_rig

    rig = {"scene": "tank", "trajectory": {"type": "transect", "start": [0, 0, -1], "end": [1, 0, -1], "speed": 1.0},
           "sensors": [{"name": "a", "type": "imaging_sonar", "rate_hz": 1.0},
                       {"name": "b", "type": "imaging_sonar", "rate_hz": 1.0, "config": {"max_range": -4.0}}]}
    with pytest.raises(ConfigError, match=r"^rig.yaml: sensors\[1\].config: ImagingSonarConfig.max_range: must be"):
        parse_rig(rig, source="rig.yaml")
