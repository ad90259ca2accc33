"""Audit U2 (a new user's first hour, a third pass): names that ``describe`` shows work everywhere, a warning raised
per batch is said once per command, a USBL's default products export, run summaries and trajectory errors say what
a user needs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
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


def test_usbl_with_its_default_products_exports_its_beacon_points() -> None:
    # A rig's USBL writes slant_range, bearing, elevation, fix, reply_time by default, not position; the export
    # skipped the whole stream ("no 'position' product"). It now rebuilds the point as USBL.measure does:
    # r (cos e cos b, -cos e sin b, sin e), bearing b + starboard, elevation e + up, FLU.
    # Hand: r = 10 m, b = 30 deg, e = -10 deg -> (8.5287, -4.9240, -1.7365) m; beacon 7 without a fix: no message.
    import math

    pytest.importorskip("rosbags")
    from oceansim_py.export.marine_msgs import ros_typestore
    from oceansim_py.export.ros_messages import RosMessageFactory

    factory = RosMessageFactory(ros_typestore())
    meta = {"beacon_ids": [3, 7]}
    sample = {"time": 1.0, "sample": 0, "slant_range": np.array([10.0, np.nan]),
              "bearing": np.radians([30.0, np.nan]), "elevation": np.radians([-10.0, np.nan])}
    out = factory.usbl("usbl", meta, sample)
    assert [topic for topic, _, _ in out] == ["/usbl/beacon_3"]
    p = out[0][2].point
    c = math.cos(math.radians(10.0))
    assert [p.x, p.y, p.z] == pytest.approx([10 * c * math.cos(math.radians(30)), -10 * c * 0.5,
                                             -10 * math.sin(math.radians(10))], abs=1e-12)
    assert [p.x, p.y, p.z] == pytest.approx([8.5287, -4.9240, -1.7365], abs=1e-4)


def test_usbl_points_from_angles_equal_the_position_product() -> None:
    # the same point as the measured position of USBL.measure (noisy head, three beacons around it)
    pytest.importorskip("rosbags")
    from oceansim_py.export.marine_msgs import ros_typestore
    from oceansim_py.export.ros_messages import RosMessageFactory
    from oceansim_py.sensors.usbl import USBL, USBLConfig

    cfg = USBLConfig.preset("seatrac_x150", beacon_ids=(1, 2, 3),
                            beacon_positions=((20.0, 5.0, -12.0), (15.0, -8.0, -3.0), (30.0, 1.0, -20.0)))
    r = USBL(cfg).measure(np.array([[0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0]]))
    assert r.fix.all()
    factory = RosMessageFactory(ros_typestore())
    meta = {"beacon_ids": [1, 2, 3]}
    angles = {"time": 0.0, "sample": 0, "slant_range": r.slant_range[0], "bearing": r.bearing[0],
              "elevation": r.elevation[0]}
    got = [[m.point.x, m.point.y, m.point.z] for _, _, m in factory.usbl("usbl", meta, angles)]
    assert np.allclose(got, r.position[0], rtol=0, atol=1e-9)


def test_a_run_that_starts_beyond_the_scene_reports_the_first_ping_that_sees_ground() -> None:
    # render sidescan/singlebeam on a mesh file: the framed run starts a margin (max(2 m, 25 % of the subject's
    # length)) before the subject, so for a mesh whose floor is the subject the first pings see nothing and the
    # summary said "altitude of the first ping nan m"

    from oceansim_py.sensors.registry import first_ping_text

    nan = float("nan")
    assert first_ping_text("altitude", np.array([9.3612, nan]), 2) == "altitude of the first ping 9.36 m"
    assert first_ping_text("altitude", np.array([nan, nan, 6.4031, 6.5]), 2) == \
        "altitude 6.40 m from ping 2 (the pings before it see nothing)"
    assert first_ping_text("first-return range", np.full(3, nan), 3) == \
        "no first-return range at any ping (nothing within range)"


def test_render_singlebeam_summary_names_the_first_ping_over_ground(tmp_path: Path, capsys) -> None:
    # a 10 x 10 m floor (x, y in [-5, 5] m, top at z = -10 m); the holoocean_default altimeter (30 deg cone, 15 deg
    # half-angle) 5 m above it looking down, pings 1 m apart from x = -20 m. Its footprint reaches 5 tan 15 deg =
    # 1.34 m around the nadir, so ping 14 (x = -6 m, the edge 1 m away) is the first to see the floor, at a range
    # between sqrt(5^2 + 1^2) = 5.099 m and 5 / cos 15 deg = 5.176 m; ping 13 (2 m from the edge) sees nothing
    import trimesh

    floor = trimesh.creation.box(bounds=[(-5.0, -5.0, -10.5), (5.0, 5.0, -10.0)])
    path = tmp_path / "floor.obj"
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in floor.vertices)
                    + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in floor.faces))
    assert main(["render", "singlebeam", "--scene", str(path), "--pose", "-20,0,-5,0,90,0", "--step", "1,0,0",
                 "--pings", "30", "--set", "max_range=8", "--out", str(tmp_path / "sb")]) == 0
    out = capsys.readouterr().out
    m = re.search(r"first-return range ([0-9.]+) m from ping (\d+) \(the pings before it see nothing\)", out)
    assert m is not None, out
    assert int(m.group(2)) == 14 and 5.099 <= float(m.group(1)) <= 5.176
    assert "nan" not in out


def test_trajectory_time_errors_print_plain_numbers(tmp_path: Path) -> None:
    # numpy 2 reprs leaked into the messages: "sample 2 (t = np.float64(0.5) s) is not after sample 1
    # (t = np.float64(1.0) s)"; the times are now printed as Python floats (shortest round trip)
    from oceansim_py import ConfigError
    from oceansim_py.trajectory import Trajectory

    path = tmp_path / "nonmono.csv"
    path.write_text("t,px,py,pz,qx,qy,qz,qw\n0,0,0,-5,0,0,0,1\n1,1,0,-5,0,0,0,1\n0.5,2,0,-5,0,0,0,1\n")
    with pytest.raises(ConfigError, match=r"sample 2 \(t = 0\.5 s\) is not after sample 1 \(t = 1\.0 s\)"):
        Trajectory.from_csv(path)
    poses = np.tile([0.0, 0, -5, 0, 0, 0, 1], (2, 1))
    with pytest.raises(ConfigError, match=r"time 1 \(1\.0 s\) is not after time 0 \(1\.0 s\)"):
        Trajectory.from_arrays([1.0, 1.0], poses)
    traj = Trajectory.from_arrays([0.0, 2.5], poses)
    with pytest.raises(ConfigError, match=r"time 3\.0 s \(index 1\) is outside the trajectory's span \[0\.0, 2\.5\] s"):
        traj.at([1.0, 3.0])


@pytest.mark.parametrize("trajectory, missing", [({"type": "csv"}, "['path']"),
                                                 ({"type": "transect", "start": [0, 0, -5], "speed": 1}, "['end']"),
                                                 ({"type": "usd_prim", "path": "x.usda"}, "['prim_path']")])
def test_a_rig_trajectory_without_a_required_key_is_refused_when_loaded(tmp_path: Path, trajectory, missing) -> None:
    # {type: csv} without path loaded, then failed at render time with Python's words: "TimedPoses.from_csv()
    # missing 1 required positional argument: 'path'"
    from oceansim_py import ConfigError
    from oceansim_py.dataset.rig import load_rig

    rig = {"name": "r", "scene": "tank", "frames": 2, "trajectory": trajectory,
           "sensors": [{"name": "pose", "type": "pose", "rate_hz": 1.0}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    with pytest.raises(ConfigError, match=rf"trajectory: type '{trajectory['type']}' needs the key\(s\) "
                                          rf"{re.escape(missing)}"):
        load_rig(path)


def test_a_product_listed_under_its_current_and_former_names_says_so(tmp_path: Path) -> None:
    # [first_return_range, altitude] (altitude: the single-beam's former name) said only "['first_return_range']
    # listed more than once", a name the user had listed once
    from oceansim_py import ConfigError
    from oceansim_py.dataset.rig import load_rig

    rig = {"name": "r", "scene": "tank", "frames": 2,
           "trajectory": {"type": "transect", "start": [0, 0, -1.5], "end": [1, 0, -1.5], "speed": 0.5},
           "sensors": [{"name": "alt", "type": "singlebeam", "rate_hz": 1.0,
                        "products": ["first_return_range", "altitude"]}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    with pytest.warns(DeprecationWarning), pytest.raises(
            ConfigError, match=re.escape("['first_return_range'] listed more than once (['altitude'] the former "
                                         "name(s) of the same product)")):
        load_rig(path)


def test_render_modem_writes_its_events_as_named_records(tmp_path: Path) -> None:
    # acoustic_modem_events.json held rows of 11 unnamed codes ([0.0, 2.0, 2.0007, ..., 1.0, 0.0, 0.0, 1.0, ...]):
    # now records. Hand: the modem 1 m down at (0, 0, -1) m, topside at the origin: 1 m apart; sent at 2 s, it
    # arrives 1 / 1500 s later; pings 1 s apart, so the event is in a sample after t = 2 s
    import json

    out = tmp_path / "modem"
    assert main(["render", "acoustic_modem", "--scene", "tank", "--pose", "0,0,-1,0,0,0", "--step", "0,0,0",
                 "--pings", "5", "--set", "messages=[[2.0, vehicle, topside, hello]]", "--out", str(out)]) == 0
    pings = json.loads((out / "acoustic_modem_events.json").read_text())
    assert len(pings) == 5
    events = [e for ping in pings for e in ping]
    assert len(events) == 1 and not pings[0] and not pings[1]
    e = events[0]
    assert (e["sender"], e["receiver"], e["reason"], e["delivered"]) == ("vehicle", "topside", "delivered", True)
    assert e["payload_hex"] == b"hello".hex() and e["send_time"] == 2.0
    assert e["distance"] == pytest.approx(1.0, abs=1e-9)
    assert e["arrival_time"] - e["send_time"] == pytest.approx(1.0 / 1500.0, rel=1e-6)


def test_scenes_out_without_regenerate_is_refused(tmp_path: Path, capsys) -> None:
    # `oceansim-py scenes --out DIR` printed the list and wrote nothing into DIR, silently
    assert main(["scenes", "--out", str(tmp_path / "s")]) == 2
    assert "only with --regenerate" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_render_multibeam_spectral_with_the_default_preset_says_which_presets_take_it(tmp_path: Path,
                                                                                      capsys) -> None:
    # README: `multibeam` takes `--method time|spectral`; with the default preset (blueview_p900, the device model)
    # spectral failed with a message that named neither the flag nor a way out
    assert main(["render", "multibeam", "--scene", "tank", "--method", "spectral", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "--method spectral:" in err and "blueview_p900_peer" in err and "model 'peer'" in err


def test_describe_a_kind_without_a_default_preset_says_what_render_uses(capsys) -> None:
    # `describe camera` said "(default preset none)", which reads as a preset called none
    assert main(["describe", "camera"]) == 0
    out = capsys.readouterr().out
    assert "render: oceansim-py render camera (default: UnderwaterCameraConfig() without a preset)" in out
    assert "preset none" not in out


def test_a_stage_with_a_missing_reference_loads_from_the_cli_with_missing_references_warn(tmp_path: Path,
                                                                                          capsys) -> None:
    # the error said to load with missing_references="warn", a Python argument no command took; a 2 m cube 5 m
    # ahead and 5 m down loads without the missing reference (bounds 4..6, -1..1, -6..-4 m)
    stage = tmp_path / "ref.usda"
    stage.write_text('#usda 1.0\n(\n    upAxis = "Z"\n    metersPerUnit = 1\n)\ndef Xform "World"\n{\n'
                     '    def Xform "Missing" (\n        references = @./does_not_exist.usda@\n    )\n    {\n    }\n'
                     '    def Cube "Box"\n    {\n        double size = 2\n'
                     '        double3 xformOp:translate = (5, 0, -5)\n'
                     '        uniform token[] xformOpOrder = ["xformOp:translate"]\n    }\n}\n')
    assert main(["describe", str(stage)]) == 2
    assert "--missing-references warn" in capsys.readouterr().err
    assert main(["describe", str(stage), "--missing-references", "warn"]) == 0
    assert "bounds min [4.0, -1.0, -6.0] max [6.0, 1.0, -4.0] (m)" in capsys.readouterr().out
    assert main(["render", "sonar", "--scene", str(stage), "--missing-references", "warn", "--pose", "0,0,-5,0,0,0",
                 "--set", "max_range=10", "--out", str(tmp_path / "s")]) == 0
    assert (tmp_path / "s" / "sonar.npy").is_file()


def test_export_bad_gps_datum_names_the_flag(tmp_path: Path, capsys) -> None:
    # "gps_datum (lat, lon, alt) = (100.0, 0.0, 0.0): ..." named the Python argument, not the flag typed; it is
    # checked before the dataset is read (an empty folder would otherwise be the first error)
    (tmp_path / "ds").mkdir()
    assert main(["export", str(tmp_path / "ds"), "--out", str(tmp_path / "b"), "--gps-datum", "100", "0", "0"]) == 2
    assert "--gps-datum 100 0 0: gps_datum" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_a_rig_starting_before_its_trajectory_says_to_move_start_time(tmp_path: Path) -> None:
    # start_time -5 s on a trajectory from 0 s: the advice was "lower 'frames' (at most 48)", which cannot help
    from oceansim_py import ConfigError
    from oceansim_py.dataset.generate import generate
    from oceansim_py.dataset.rig import load_rig

    rig = {"name": "r", "scene": "tank", "frames": 2, "tick_rate_hz": 2.0, "start_time": -5.0,
           "trajectory": {"type": "transect", "start": [0, 0, -1.5], "end": [1, 0, -1.5], "speed": 0.5},
           "sensors": [{"name": "pose", "type": "pose", "rate_hz": 2.0}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    with pytest.raises(ConfigError, match=r"start_time -5 s is before the trajectory's start \(0 s\); set start_time "
                                          r"within the trajectory's span 0 \.\. 2 s"):
        generate(load_rig(path), tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "manifest.json").exists()


@pytest.mark.parametrize("key, value, message", [("seed", -1, "seed: must be >= 0, got -1"),
                                                 ("shard_size", 0, "shard_size: must be > 0, got 0"),
                                                 ("tick_rate_hz", -2, "tick_rate_hz: must be > 0, got -2.0")])
def test_rig_integer_fields_are_quoted_as_integers(tmp_path: Path, key, value, message) -> None:
    # "seed: must be >= 0, got -1.0" for a seed the user wrote as -1
    from oceansim_py import ConfigError
    from oceansim_py.dataset.rig import load_rig

    rig = {"name": "r", "scene": "tank", "frames": 2, key: value,
           "trajectory": {"type": "transect", "start": [0, 0, -1.5], "end": [1, 0, -1.5], "speed": 0.5},
           "sensors": [{"name": "pose", "type": "pose", "rate_hz": 2.0}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    with pytest.raises(ConfigError, match=re.escape(message) + "$"):
        load_rig(path)


@pytest.mark.parametrize("argv, message", [
    (["camera", "--water", "jerlov_3C", "--set", "water=jerlov_IB"],
     "--water jerlov_3C and --set water=jerlov_IB: water given twice; give it once"),
    (["sonar", "--set", "max_range=5", "--set", "max_range=6"],
     "--set max_range=5 and --set max_range=6: max_range given twice; give it once")])
def test_a_field_given_twice_on_the_command_line_is_refused(tmp_path: Path, capsys, argv, message) -> None:
    # one of the two won silently (--water over --set water=..., the last --set over the first)
    assert main(["render", *argv, "--out", str(tmp_path / "r")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_view_without_a_viewer_executable_says_to_save_a_recording(tmp_path: Path, capsys, monkeypatch) -> None:
    # `oceansim-py view DATASET` on a machine without the Rerun viewer binary: a RuntimeError traceback
    rr = pytest.importorskip("rerun")
    rig = {"name": "r", "scene": "tank", "frames": 2, "tick_rate_hz": 2.0,
           "trajectory": {"type": "transect", "start": [0, 0, -1.5], "end": [1, 0, -1.5], "speed": 0.5},
           "sensors": [{"name": "pose", "type": "pose", "rate_hz": 2.0}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    assert main(["generate", "--rig", str(path), "--out", str(tmp_path / "ds"), "--no-progress"]) == 0

    def no_viewer(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003 - RecordingStream.spawn's signature
        raise RuntimeError("Failed to find Rerun Viewer executable in PATH.\n\n    You can install ...")

    monkeypatch.setattr(rr.RecordingStream, "spawn", no_viewer)
    capsys.readouterr()
    assert main(["view", str(tmp_path / "ds")]) == 2
    err = capsys.readouterr().err
    assert "could not start the Rerun viewer (Failed to find Rerun Viewer executable in PATH.)" in err
    assert "--save run.rrd" in err and "Traceback" not in err
