"""A run interrupted the ways a user interrupts one (SIGTERM from a scheduler or `kill`, SIGKILL), then resumed,
verified and exported; rig keys that were accepted and ignored (audit X2).

SIGKILL is simulated by the files it leaves (a manifest temporary, an unlisted shard folder): a writer killed
inside ``write_manifest`` leaves ``.manifest.json.<random>.tmp``, one killed between a shard's rename and the
manifest update leaves a complete ``shard_NNNNN`` the manifest does not list. Each was seen on a real run of a
6-sensor rig killed from a subprocess (scratch script): the temporary outlived ``--resume`` and ``verify`` said
"every file matches its checksum".
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from oceansim_py import ConfigError, DatasetError
from oceansim_py.cli import main
from oceansim_py.dataset.generate import generate
from oceansim_py.dataset.lock import LOCK_FILE
from oceansim_py.dataset.rig import load_rig, parse_rig
from oceansim_py.dataset.verify import verify_dataset
from test_dataset import RIG, write_rig  # noqa: E402 (tests/ is on sys.path under pytest)

#: 4 ticks at 4 Hz in 2 shards of 2; one barometer at 2 Hz: samples [0, 1) and [1, 2). Renders in milliseconds.
SMALL = {**RIG, "frames": 4, "shard_size": 2, "sensors": [RIG["sensors"][2]]}


def shard_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.glob("shard_*/**/*")) if p.is_file()}


def test_resume_and_verify_deal_with_what_a_sigkill_leaves(tmp_path):
    rig = load_rig(write_rig(tmp_path, SMALL))
    clean = tmp_path / "clean"
    generate(rig, clean, progress=False)
    out = tmp_path / "out"
    generate(rig, out, progress=False)
    # killed inside the last write_manifest, between shard_00001's rename and the manifest listing it
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["shards"], manifest["status"] = manifest["shards"][:1], "running"
    (out / "manifest.json").write_text(json.dumps(manifest))
    stale = out / ".manifest.json.k1ll3d00.tmp"
    stale.write_text('{"format": "oceansim_py-dataset", "shar')
    problems = verify_dataset(out)
    assert any(p.startswith(f"{stale}: a manifest temporary") for p in problems), problems
    assert any(p.startswith(f"{out / 'shard_00001'}: a shard folder manifest.json does not list") for p in problems)
    generate(rig, out, resume=True, progress=False)
    assert not stale.exists()
    assert verify_dataset(out) == []
    assert shard_bytes(out) == shard_bytes(clean)          # the unlisted complete shard was kept, nothing lost


def test_verify_reports_a_partial_shard_but_not_a_users_own_file(tmp_path):
    rig = load_rig(write_rig(tmp_path, SMALL))
    out = tmp_path / "out"
    generate(rig, out, progress=False)
    (out / "notes.txt").write_text("survey of 28 Nov")               # the user's: not the dataset's business
    (out / ".shard_00007.partial").mkdir()
    assert verify_dataset(out) == [f"{out / '.shard_00007.partial'}: a partial shard left by a killed run (not part "
                                   f"of the dataset); rerun generate with --resume"]


def test_sigterm_during_a_manifest_write_cleans_up_like_ctrl_c_and_resume_completes_the_run(tmp_path, monkeypatch,
                                                                                           capsys):
    import oceansim_py.dataset.manifest as manifest_module

    rig_file = write_rig(tmp_path, SMALL)
    clean = tmp_path / "clean"
    generate(load_rig(rig_file), clean, progress=False)
    out = tmp_path / "out"
    real_dump, calls = json.dump, []

    class TermOnSecondDump:
        """``json`` whose second ``dump`` (the manifest after shard 0) gets a SIGTERM half-way: the file is written,
        the temporary not yet renamed."""

        def __getattr__(self, name):
            return getattr(json, name)

        def dump(self, obj, fh, **kw):
            real_dump(obj, fh, **kw)
            calls.append(1)
            if len(calls) == 2:
                # before the fix the CLI left SIGTERM at its default (the process died on the spot: the temporary and
                # the lock file stayed); do not kill pytest to show it
                assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None), "SIGTERM not handled"
                os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(manifest_module, "json", TermOnSecondDump())
    argv = ["generate", "--rig", str(rig_file), "--out", str(out), "--no-progress"]
    assert main(argv) == 128 + signal.SIGTERM
    assert "terminated (SIGTERM)" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL        # restored after the command
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "shard_00000"]   # no temporary, no lock
    assert not (out / LOCK_FILE).exists()
    monkeypatch.undo()
    assert main(argv + ["--resume"]) == 0
    assert shard_bytes(out) == shard_bytes(clean)


def test_main_keeps_a_sigterm_handler_its_caller_set(tmp_path, monkeypatch):
    seen = []

    def mine(signum, frame):
        seen.append(signum)

    monkeypatch.setattr("oceansim_py.commands.info.run", lambda args: os.kill(os.getpid(), signal.SIGTERM) or 0)
    previous = signal.signal(signal.SIGTERM, mine)
    try:
        assert main(["info"]) == 0
        assert seen == [signal.SIGTERM] and signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_rig_device_key_is_refused_naming_the_flag_that_chooses_it(tmp_path):
    # it was in the valid keys but never read: 'device: cpu' rendered on cuda:0 where a GPU was present
    with pytest.raises(ConfigError, match=r"rig\.yaml: device: a rig does not choose the device.*--device"):
        load_rig(write_rig(tmp_path, {**SMALL, "device": "cpu"}))


@pytest.mark.parametrize("key, value", [("name", 5), ("name", ["a", "b"]), ("description", {"a": 1})])
def test_rig_name_and_description_must_be_text(key, value):
    # were str()-ed into the manifest: name 5 -> '5', description ['a'] -> "['a']"
    with pytest.raises(ConfigError, match=rf"my\.yaml: {key}: expected text, got"):
        parse_rig({**SMALL, key: value}, "my.yaml")


def test_a_sensor_preset_given_twice_is_refused_and_products_listed_twice_too():
    fls = {**RIG["sensors"][0], "preset": "oculus_m750d"}
    # the config's preset won without a word: this sonar rendered as a BlueView P900, not an Oculus M750d
    twice = {**fls, "config": {**fls["config"], "preset": "blueview_p900"}}
    with pytest.raises(ConfigError, match=r"sensors\[0\]\.config\.preset: 'blueview_p900', but sensors\[0\]\.preset "
                                          r"is 'oculus_m750d'; give the preset once"):
        parse_rig({**SMALL, "sensors": [twice]}, "my.yaml")
    same = {**fls, "config": {**fls["config"], "preset": "oculus_m750d"}}            # the same one twice is fine
    assert parse_rig({**SMALL, "sensors": [same]}, "my.yaml").sensors[0].config["preset"] == "oculus_m750d"
    with pytest.raises(ConfigError, match=r"sensors\[0\]\.products: \['intensity'\] listed more than once"):
        parse_rig({**SMALL, "sensors": [{**fls, "products": ["intensity", "fan_png", "intensity"]}]}, "my.yaml")


def test_export_of_an_unfinished_run_says_how_much_of_it_it_exports(tmp_path):
    pytest.importorskip("rosbags")
    pytest.importorskip("mcap")
    from oceansim_py.export import ExportWarning, export_dataset

    class Killed(Exception):
        pass

    def stop(record):
        raise Killed

    out = tmp_path / "out"
    with pytest.raises(Killed):
        generate(load_rig(write_rig(tmp_path, SMALL)), out, progress=False, on_shard=stop)
    # shard 0 of 2 is complete: ticks 0, 1 (2 of 4 frames); the bag held them without a word
    with pytest.warns(ExportWarning, match=r"did not finish \(status 'running'\): exporting the 2 of 4 frames"):
        summary = export_dataset(out, tmp_path / "run.mcap", format="mcap")
    assert summary.messages["/tf"] == 2


def test_export_warnings_go_to_stderr(tmp_path, capsys):
    pytest.importorskip("rosbags")
    pytest.importorskip("mcap")
    out = tmp_path / "out"
    with pytest.raises(DatasetError):        # any error after shard 0 leaves a run that did not finish
        generate(load_rig(write_rig(tmp_path, SMALL)), out, progress=False,
                 on_shard=lambda record: (_ for _ in ()).throw(DatasetError("stop")))
    assert main(["export", str(out), "--format", "mcap", "--out", str(tmp_path / "run.mcap")]) == 0
    captured = capsys.readouterr()
    assert "oceansim-py: warning:" in captured.err and "oceansim-py: warning" not in captured.out


@pytest.mark.parametrize("preset, frequency, sound_speed", [("em2040_600khz", 600e3, 1500.0),
                                                            ("holoocean_default", 0.0, 0.0)])
def test_profiling_sonar_ranges_carry_the_ping_info_of_the_config(preset, frequency, sound_speed):
    # SonarRanges' PingInfo was all zeros and empty widths, also for the EM 2040 device chain at 600 kHz.
    # em2040_600khz: swath 68.8 deg in 172 beams (0.4 deg apart), beam_width 0.4 deg on a flat array, along-track
    # 0.4 deg. Receive width of the beam at theta: arcsin(sin theta + sin 0.2 deg) - arcsin(sin theta - sin 0.2 deg)
    # ~ 0.4 deg / cos theta: broadside 0.4000 deg, the outer beam (theta = 34.4 - 0.2 = 34.2 deg) 0.4836 deg.
    # holoocean_default (peer, no carrier): frequency and sound speed 0 (unknown), every beam one spacing wide.
    pytest.importorskip("rosbags")
    import math

    import numpy as np

    from oceansim_py.export.marine_msgs import ros_typestore
    from oceansim_py.export.ros_messages import RosMessageFactory
    from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig

    cfg = ProfilingSonarConfig.preset(preset)
    angles = cfg.beam_angles()
    meta = {"type": "profiling", "config": cfg.to_dict(), "beam_angles_rad": angles.tolist()}
    sample = {"time": 0.5, "bottom_range": np.full(angles.size, 5.0, dtype=np.float32)}
    factory = RosMessageFactory(ros_typestore())
    [(topic, _, msg)] = [m for m in factory.profiling("swath", meta, sample) if m[0].endswith("ranges")]
    info = msg.ping_info
    assert (info.frequency, info.sound_speed) == (frequency, sound_speed)
    assert len(info.tx_beamwidths) == len(info.rx_beamwidths) == angles.size
    assert np.degrees(info.tx_beamwidths) == pytest.approx(cfg.along_track_beamwidth, rel=1e-6)
    if preset == "em2040_600khz":
        assert abs(math.degrees(angles[-1])) == pytest.approx(34.2, abs=1e-6)
        assert math.degrees(info.rx_beamwidths[86]) == pytest.approx(0.4000, abs=1e-4)
        assert math.degrees(info.rx_beamwidths[-1]) == pytest.approx(0.4836, abs=1e-4)
        assert math.degrees(info.rx_beamwidths[0]) == pytest.approx(0.4836, abs=1e-4)
    else:
        assert np.degrees(info.rx_beamwidths) == pytest.approx(cfg.swath_width / cfg.n_beams, rel=1e-6)


def test_resume_with_another_rig_names_what_differs(tmp_path):
    # it said only "holds a different run (rig 'tank_test', other settings)": a --frames 48 on a 40-frame run, or an
    # edited max_range, left the user to diff two rigs by eye
    out = tmp_path / "out"
    generate(load_rig(write_rig(tmp_path, SMALL)), out, progress=False)
    with pytest.raises(ConfigError, match=r"a different run \(rig 'tank_test'; differs in frames 4 then, 6 now\)"):
        generate(load_rig(write_rig(tmp_path, SMALL)).with_overrides(frames=6), out, resume=True, progress=False)
    baro = {**SMALL["sensors"][0], "rate_hz": 4.0, "config": {"noise": False}}
    with pytest.raises(ConfigError, match=r"differs in sensors\.baro\.config\.noise None then, False now, "
                                          r"sensors\.baro\.rate_hz 2\.0 then, 4\.0 now\)"):
        generate(load_rig(write_rig(tmp_path, {**SMALL, "sensors": [baro]})), out, resume=True, progress=False)


def test_a_dataset_path_that_is_no_folder_says_so(tmp_path):
    from oceansim_py import load_dataset

    # both said "no manifest.json; not an oceansim_py dataset", also for a mistyped path
    with pytest.raises(DatasetError, match=r"oceansim_outptu: no such folder; give the folder 'oceansim-py generate "
                                           r"--out' wrote"):
        verify_dataset(tmp_path / "oceansim_outptu")
    (tmp_path / "run.mcap").write_bytes(b"")
    with pytest.raises(DatasetError, match=r"run\.mcap: not a folder"):
        load_dataset(tmp_path / "run.mcap")
    with pytest.raises(DatasetError, match=r"no manifest\.json; not an oceansim_py dataset"):
        load_dataset(tmp_path)


def test_view_save_leaves_no_partial_recording_when_the_dataset_fails_part_way(tmp_path):
    pytest.importorskip("rerun")
    from oceansim_py.io.rerun_view import view_dataset

    out = tmp_path / "out"
    generate(load_rig(write_rig(tmp_path, SMALL)), out, progress=False)
    (out / "shard_00001" / "baro" / "samples.csv").unlink()      # shard 0 logs, then the reader fails
    saved = tmp_path / "run.rrd"
    saved.write_bytes(b"an older recording")
    # the .rrd was written in place: a 2-frame dataset with its second table gone left a partial run.rrd (and
    # overwrote the older one)
    with pytest.raises(DatasetError, match=r"samples\.csv: missing"):
        view_dataset(out, save=saved, spawn=False, scene=False)
    assert saved.read_bytes() == b"an older recording"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "rig.yaml", "run.rrd"]


def test_a_run_refused_before_writing_leaves_no_empty_out_folder(tmp_path):
    # SMALL's transect: 2.5 m at 0.5 m/s = 5 s; 40 ticks at 4 Hz need 10 s. The refusal comes after --out was
    # created (the trajectory is checked once the scene is loaded): new/out and new stayed behind, empty.
    rig = load_rig(write_rig(tmp_path, SMALL)).with_overrides(frames=40)
    with pytest.raises(ConfigError, match=r"the trajectory spans 0 \.\. 5 s"):
        generate(rig, tmp_path / "new" / "out", progress=False)
    assert not (tmp_path / "new").exists()
    (tmp_path / "mine").mkdir()                                     # a folder the user made is left alone
    with pytest.raises(ConfigError):
        generate(rig, tmp_path / "mine", progress=False)
    assert (tmp_path / "mine").is_dir()


def test_frames_of_an_interrupted_run_with_a_gap_are_the_ticks_of_its_shards(tmp_path):
    # A Ray run completes shards out of order; killed, its manifest lists e.g. shards 0 and 2 of 3. The reader took
    # frames 0..3 as ticks 0..3: frames 2, 3 (ticks of the missing shard 1) came back empty and shard 2's ticks 4, 5
    # could not be reached; the export stamped /tf at 0.5 and 0.75 s. Now frame k is the k-th tick present.
    rig = {**SMALL, "frames": 6}                 # shards of 2 ticks at 4 Hz; baro at 2 Hz: samples [0,1) [1,2) [2,3)
    out = tmp_path / "out"
    with pytest.raises(DatasetError):
        generate(load_rig(write_rig(tmp_path, rig)), out, progress=False,
                 on_shard=lambda record: (_ for _ in ()).throw(DatasetError("stop")) if record["index"] == 2 else None)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["shards"] = [s for s in manifest["shards"] if s["index"] != 1]
    (out / "manifest.json").write_text(json.dumps(manifest))
    from oceansim_py import load_dataset

    reader = load_dataset(out)
    assert len(reader) == 4 and reader.ticks().tolist() == [0, 1, 4, 5]
    frame = reader[2]                                            # tick 4: t = 1.0 s, baro sample floor(4 * 2 / 4) = 2
    assert (frame["frame"], frame["time"], frame["baro"]["sample"], frame["baro"]["time"]) == (2, 1.0, 2, 1.0)
    assert reader[1]["baro"]["sample"] == 0 and reader[-1]["time"] == 1.25
    pytest.importorskip("rosbags")
    pytest.importorskip("mcap")
    from oceansim_py.export import ExportWarning, export_dataset
    from oceansim_py.export.bag import _dataset_messages
    from oceansim_py.export.marine_msgs import ros_typestore
    from oceansim_py.export.ros_messages import RosMessageFactory

    with pytest.warns(ExportWarning):
        export_dataset(out, tmp_path / "run.mcap", format="mcap")
    stamps = [ns for ns, (topic, _, _) in _dataset_messages(reader, RosMessageFactory(ros_typestore()), {})
              if topic == "/tf"]
    assert stamps == [0, 250_000_000, 1_000_000_000, 1_250_000_000]


def test_a_key_given_twice_in_a_yaml_mapping_is_refused_naming_both_lines(tmp_path):
    # PyYAML keeps the last of two equal keys without a word: this sensor's max_range vanished from the rig
    text = ("name: dup\nscene: tank\ntrajectory: {type: transect, start: [0, 0, -1], end: [1, 0, -1], speed: 0.5}\n"
            "sensors:\n  - name: fls\n    type: imaging_sonar\n    config: {max_range: 4.0}\n    rate_hz: 2.0\n"
            "    config: {range_bins: 64}\n")
    (tmp_path / "dup.yaml").write_text(text)
    with pytest.raises(ConfigError, match=r"dup\.yaml \(line 9\): key 'config' given twice in one mapping \(first at "
                                          r"line 7\)"):
        load_rig(tmp_path / "dup.yaml")
    from oceansim_py.io.config import parse_yaml

    # a key merged in with << may still be overridden, and equal keys in different mappings are fine
    assert parse_yaml("b: &b {a: 1, c: 2}\nx: {<<: *b, a: 3}\n", "m.yaml") == {"b": {"a": 1, "c": 2},
                                                                               "x": {"a": 3, "c": 2}}


def test_render_set_with_malformed_yaml_names_the_flag(capsys):
    # was a yaml.parser.ParserError traceback
    assert main(["render", "sonar", "--set", "max_range=[1", "--out", "unused"]) == 2
    assert "oceansim-py: error: --set max_range=[1 (line 1, column 3): malformed YAML" in capsys.readouterr().err


def test_a_run_whose_last_sample_is_the_trajectory_end_is_accepted(tmp_path):
    # SMALL's transect lasts 5 s (2.5 m at 0.5 m/s); the run records the pose at every tick (4 Hz) and its barometer
    # samples at m / 2 s. 21 ticks (0 .. 5.0 s, the barometer's last sample at 5.0 s) lie inside it: they were
    # refused because the check took the run to end at frames / tick rate = 5.25 s (audit X2: '21 frames at 1 Hz on
    # a 20 s transect is refused one frame early'). 22 ticks need the pose at 5.25 s: refused, naming 21 as the most.
    base = load_rig(write_rig(tmp_path, SMALL))
    out = tmp_path / "ok"
    generate(base.with_overrides(frames=21), out, progress=False)
    assert verify_dataset(out) == []
    with pytest.raises(ConfigError, match=r"poses of t = 0 \.\. 5\.25 s .*at most 21\)"):
        generate(base.with_overrides(frames=22), tmp_path / "too_long", progress=False)
