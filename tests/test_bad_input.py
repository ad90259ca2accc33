"""Bad input (issue 12, items 8-11): memory estimated before allocating, bounded sizes, YAML limits, one-line
ConfigErrors naming the file and field, frame-index and float32 ranges, YAML 1.2 numbers."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pytest

from oceansim_py.dataset.rig import load_rig, parse_rig
from oceansim_py.errors import ConfigError
from oceansim_py.io.config import load_yaml, parse_yaml
from oceansim_py.limits import MAX_FRAME_INDEX, MAX_FRAMES, MAX_YAML_DEPTH
from oceansim_py.poses import as_poses
from oceansim_py.sensors.camera import UnderwaterCameraConfig
from oceansim_py.sensors.dvl import DVL, DVLConfig
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig
from oceansim_py.trajectory import Trajectory

GIB = 2**30
RIG = """\
name: t
scene: pier
frames: 4
tick_rate_hz: 2.0
shard_size: 2
batch_size: 2
trajectory: {type: transect, start: [0.0, 0.0, -2.0], end: [10.0, 0.0, -2.0], speed: 1.0}
sensors:
  - {name: fls, type: imaging_sonar, preset: oculus_m750d, rate_hz: 2.0}
"""


def rig_text(**changes: str) -> str:
    """RIG with top-level lines replaced (key -> new YAML value text)."""
    lines = []
    for line in RIG.splitlines():
        key = line.split(":")[0]
        lines.append(f"{key}: {changes[key]}" if key in changes else line)
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, text: str, name: str = "rig.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and "Traceback" not in msg
    msg.encode("utf-8")  # printable whatever the file name
    return msg


# -- item 8: memory --------------------------------------------------------------------------------------------
def test_memory_estimates_by_hand():
    c = ImagingSonarConfig(n_beams=10, rays_per_beam=2, elevation_rays=3, range_bins=5)
    # tables: 64 B x 20 bearing rays + 80 B x 3 elevation rays + 4 B x (5 + 10); per pose 40 + (12 + 48) x 60 rays
    # (return; origin, direction and hit for the ray-cast backend) + 5 bins x (4 + 20 x 10 beams)
    assert c.memory_bytes(0) == 1280 + 240 + 60
    assert c.memory_bytes(2) == 1580 + 2 * (40 + 3600 + 1020)
    cam = UnderwaterCameraConfig(width=4, height=3)
    assert cam.memory_bytes(2) == 2 * (28 + 12 * 55)
    assert DVLConfig().memory_bytes(3) == 3 * DVL.BYTES_PER_SAMPLE == 3 * (108 + 4 * 48)
    sb = SinglebeamSonarConfig()
    rays = sb.rays_per_pose
    # per ray: 160 B of table; 12 B of return, bin and label and 48 B of ray and hit for the ray-cast backend
    assert sb.memory_bytes(1) == 160 * rays + 4 * sb.range_bins + 40 + (12 + 48) * rays + sb.range_bins * 24 + 4


@pytest.mark.parametrize("cls, sensor, change", [
    (ImagingSonarConfig, ImagingSonar, {"n_beams": 10**9}),
    (ImagingSonarConfig, ImagingSonar, {"elevation_rays": 10**9}),
    (SidescanSonarConfig, SidescanSonar, {"across_track_rays": 10**9}),
    # range_bins: 10**9 is now refused by the config itself (limits.MAX_RANGE_BINS; tests/test_runtime_audit.py)
    (ProfilingSonarConfig, ProfilingSonar, {"n_beams": 10**9}),
    (SinglebeamSonarConfig, SinglebeamSonar, {"cone_rings": 10**9}),
])
def test_huge_sensor_configs_are_refused_before_allocating(cls, sensor, change, monkeypatch):
    monkeypatch.setattr("oceansim_py.runtime.available_memory_bytes", lambda device: 4 * GIB)
    config = cls(**change)
    with pytest.raises(ConfigError, match=r"would need [0-9.]+ GiB on cpu but only 4.00 GiB is free") as exc:
        sensor(config, device="cpu")
    one_line(exc)


def test_huge_camera_is_refused_at_render(monkeypatch, wall_scene):
    from oceansim_py.sensors.camera import UnderwaterCamera

    monkeypatch.setattr("oceansim_py.runtime.available_memory_bytes", lambda device: 4 * GIB)
    cam = UnderwaterCamera(UnderwaterCameraConfig(width=10**6, height=10**6), device="cpu")
    with pytest.raises(ConfigError, match="GiB"):
        cam.render(wall_scene, [0, 0, 0, 0, 0, 0, 1])


def test_huge_multibeam_is_refused_at_render(monkeypatch, wall_scene):
    # beam mixing is a Toeplitz kernel (no n_beams^2 table), so construction is cheap; one ping is 6.2 GiB
    monkeypatch.setattr("oceansim_py.runtime.available_memory_bytes", lambda device: 4 * GIB)
    sonar = MultibeamSonar(MultibeamSonarConfig(n_beams=60_000, max_range=100.0), device="cpu")
    with pytest.raises(ConfigError, match=r"would need [0-9.]+ GiB on cpu but only 4.00 GiB is free") as exc:
        sonar.render(wall_scene, [0, 0, 0, 0, 0, 0, 1])
    one_line(exc)


def test_rig_batch_memory_is_checked(tmp_path, monkeypatch):
    # oculus_m750d at batch 2 needs tens of MB: offer 1 MiB of host memory
    monkeypatch.setattr("oceansim_py.runtime.available_memory_bytes", lambda device: 2**20)
    with pytest.raises(ConfigError, match=r"rig.yaml: batch_size: rendering 2 poses per call needs .*'fls'") as exc:
        load_rig(write(tmp_path, RIG))
    one_line(exc)


def test_rig_sensor_rate_of_1e9_hz_is_bounded(tmp_path):
    text = RIG.replace("rate_hz: 2.0}", "rate_hz: 1.0e9}").replace("tick_rate_hz: 2.0", "tick_rate_hz: 2")
    with pytest.raises(ConfigError, match=r"samples of sensor 'fls'.*limit of 10,000,000"):
        load_rig(write(tmp_path, text))


# -- item 9: sizes and YAML limits -----------------------------------------------------------------------------
@pytest.mark.parametrize("change, message", [
    ({"frames": "1e12"}, r"rig.yaml: frames: 1,000,000,000,000 is more than the limit of 10,000,000"),
    ({"frames": str(MAX_FRAMES + 1)}, "frames"),
    ({"frames": "1000000", "shard_size": "1"}, r"shards .* raise shard_size"),
])
def test_rig_sizes_are_bounded(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message):
        load_rig(write(tmp_path, rig_text(**change)))


def test_rig_duration_1e15_is_bounded(tmp_path):
    text = rig_text(frames="x").replace("frames: x", "duration: 1e15")
    with pytest.raises(ConfigError, match=r"rig.yaml: duration: frames at 2 Hz: 2e\+15 is more than the limit"):
        load_rig(write(tmp_path, text))


def test_trajectory_sample_and_leg_counts_are_bounded():
    with pytest.raises(ConfigError, match="Trajectory.lawnmower.spacing"):
        Trajectory.lawnmower(bounds=((0, 0, 0), (100, 100, 1)), spacing=1e-9)
    with pytest.raises(ConfigError, match=r"Trajectory.transect: samples .* limit of 10,000,000"):
        Trajectory.transect([0, 0, 0], [10, 0, 0], 1.0, rate_hz=1e12)
    with pytest.raises(ConfigError, match="resample"):
        Trajectory.transect([0, 0, 0], [10, 0, 0], 1.0).resample(1e13)


def test_rig_transect_rate_1e12_is_refused_when_loaded(tmp_path):
    text = RIG.replace("speed: 1.0}", "speed: 1.0, rate_hz: 1e12}")
    with pytest.raises(ConfigError, match=r"rig.yaml: trajectory: Trajectory.transect: samples"):
        load_rig(write(tmp_path, text))


def test_yaml_alias_bomb_is_refused(tmp_path):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):  # 10^10 values once expanded
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(ConfigError, match=r"bomb.yaml \(line \d+\): the YAML expands to more than 1,000,000"):
        load_yaml(write(tmp_path, "\n".join(lines), "bomb.yaml"))
    with pytest.raises(ConfigError, match="refers to a node that contains it"):
        parse_yaml("a: &a [1, *a]", "self.yaml")


@pytest.mark.parametrize("text", ["[" * 100_000, "- " * 5_000 + "1", "a:\n" + "".join(
    " " * (i + 1) + f"k{i}:\n" for i in range(200)) + " " * 201 + "1"])
def test_deep_yaml_is_refused(tmp_path, text):
    with pytest.raises(ConfigError, match=f"deep.yaml .*nested more than {MAX_YAML_DEPTH} levels") as exc:
        load_rig(write(tmp_path, text, "deep.yaml"))
    one_line(exc)


def test_moderate_yaml_nesting_and_aliases_still_load():
    nested = "[" * 30 + "1" + "]" * 30
    assert parse_yaml(nested, "x") is not None
    assert parse_yaml("a: &a {k: 1}\nb: *a\n", "x") == {"a": {"k": 1}, "b": {"k": 1}}


# -- item 10: one-line errors naming file and field ------------------------------------------------------------
def test_non_utf8_yaml(tmp_path):
    p = tmp_path / "rig.yaml"
    p.write_bytes(RIG.encode() + b"# caf\xe9\n")
    with pytest.raises(ConfigError, match=r"rig.yaml \(line 10, byte \d+\): not UTF-8 text") as exc:
        load_rig(p)
    one_line(exc)


def test_non_utf8_file_name(tmp_path):
    name = os.fsdecode(b"rig\xff.yaml")
    p = tmp_path / name
    p.write_text("scene: [")
    with pytest.raises(ConfigError, match=r"rig\\xff.yaml \(line \d+, column \d+\): malformed YAML") as exc:
        load_rig(p)
    one_line(exc)
    with pytest.raises(ConfigError, match=r"missing\\xff.yaml: no such YAML file") as exc:
        ImagingSonarConfig.from_yaml(tmp_path / os.fsdecode(b"missing\xff.yaml"))
    one_line(exc)


@pytest.mark.parametrize("trajectory, field", [
    ("{type: transect, start: abc, end: [10.0, 0.0, -2.0], speed: 1.0}", "trajectory.start"),
    ("{type: transect, start: [0, 0, x], end: [10.0, 0.0, -2.0], speed: 1.0}", r"trajectory.start\[2\]"),
    ("{type: transect, start: [0, 0, 0], end: [10.0, 0.0, -2.0], speed: fast}", "trajectory.speed"),
    ("{type: orbit, center: [0, 0], radius: 2, speed: 1, look_at_center: 3}", "trajectory.look_at_center"),
    ("{type: [transect], start: [0, 0, 0]}", "trajectory.type"),
])
def test_wrong_types_in_rig_fields(tmp_path, trajectory, field):
    with pytest.raises(ConfigError, match=f"rig.yaml: {field}") as exc:
        load_rig(write(tmp_path, rig_text(trajectory=trajectory)))
    one_line(exc)


@pytest.mark.parametrize("sensor, field", [
    ("{name: fls, type: [imaging_sonar], rate_hz: 2.0}", r"sensors\[0\].type"),
    ("{name: fls, type: imaging_sonar, preset: [oculus_m750d], rate_hz: 2.0}", "preset"),
    ("{name: fls, type: imaging_sonar, rate_hz: 2.0, products: [[intensity]]}", r"sensors\[0\].products"),
    ("{name: fls, type: imaging_sonar, rate_hz: 2.0, config: [1, 2]}", r"sensors\[0\].config"),
    ("{name: fls, type: imaging_sonar, rate_hz: 2.0, config: {1: 2, max_range: 3}}", "unknown key"),
])
def test_wrong_types_in_sensor_fields(tmp_path, sensor, field):
    text = RIG.replace("  - {name: fls, type: imaging_sonar, preset: oculus_m750d, rate_hz: 2.0}", "  - " + sensor)
    with pytest.raises(ConfigError, match=field) as exc:
        load_rig(write(tmp_path, text))
    one_line(exc)


def test_mixed_key_types_are_named(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \[1, 'x'\]"):
        parse_rig({**load_yaml(write(tmp_path, RIG)), 1: 2, "x": 3}, "rig.yaml")


def test_presets():
    with pytest.raises(ConfigError, match="unknown ImagingSonarConfig preset 'nope'; choose one of"):
        ImagingSonarConfig.preset("nope")
    with pytest.raises(ConfigError, match="preset"):
        ImagingSonarConfig.from_dict({"preset": ["oculus_m750d"]})
    assert "oculus_m750d" in ImagingSonarConfig.preset_names()


# -- item 11: numbers ------------------------------------------------------------------------------------------
def test_frame_index_past_the_counter_is_refused(wall_scene):
    scene = wall_scene
    sonar = SinglebeamSonar(device="cpu")
    pose = [0, 0, 0, 0, 0, 0, 1]
    with pytest.raises(ConfigError, match=r"frame_index 4294967296 .*2\^31 - 1"):
        sonar.render(scene, pose, frame_index=2**32)  # used to wrap to frame 0's noise
    with pytest.raises(ConfigError, match="reaches frame 2147483648"):
        sonar.render(scene, np.stack([pose, pose]), frame_index=MAX_FRAME_INDEX)
    sonar.render(scene, pose, frame_index=MAX_FRAME_INDEX)  # the last frame is fine
    with pytest.raises(ConfigError, match="frame_index"):
        ImagingSonar(ImagingSonarConfig(n_beams=4, rays_per_beam=1, elevation_rays=2, range_bins=8),
                     device="cpu").render(scene, pose, frame_index=2**32 + 5)


def test_poses_beyond_float32_are_refused():
    poses = [[0, 0, 0, 0, 0, 0, 1], [0, 0, 1e39, 0, 0, 0, 1]]
    with pytest.raises(ConfigError, match="pose 1 holds .* beyond the float32 range"):
        as_poses(poses)
    with pytest.raises(ConfigError, match="pose 1 holds"):
        Trajectory([0.0, 1.0], poses)
    with pytest.raises(ConfigError, match="pose 0 holds a non-finite"):
        as_poses([[float("inf"), 0, 0, 0, 0, 0, 1]])
    assert as_poses([[3e38, 0, 0, 0, 0, 0, 1]])[0, 0] == np.float32(3e38)


def test_yaml_exponent_numbers_are_numbers(tmp_path):
    assert parse_yaml("a: 2e1\nb: -1E-3\nc: +5e+0\nd: 1.5\ne: 3\nf: '2e1'\n", "x") == \
        {"a": 20.0, "b": -0.001, "c": 5.0, "d": 1.5, "e": 3, "f": "2e1"}
    p = write(tmp_path, "max_range: 2e1\nrange_bins: 5e2\n", "fls.yaml")
    c = ImagingSonarConfig.from_yaml(p)
    assert c.max_range == 20.0 and c.range_bins == 500
    # numbers written as text (e.g. from JSON or a quoted YAML value) are coerced too
    assert ImagingSonarConfig.from_dict({"max_range": "2e1"}).max_range == 20.0
    text = textwrap.dedent(rig_text(frames="1e1", tick_rate_hz="2e0")).replace("speed: 1.0}", "speed: 1e0}")
    rig = load_rig(write(tmp_path, text))
    assert rig.frames == 10 and rig.tick_rate_hz == 2.0 and rig.trajectory["speed"] == 1.0


def test_trajectory_csv_bad_bytes(tmp_path):
    p = tmp_path / os.fsdecode(b"nav\xff.csv")
    p.write_bytes(b"t,px,py,pz,qx,qy,qz,qw\n0,0,0,0,0,0,0,1\n1,0,0,\xe9,0,0,0,1\n")
    with pytest.raises(ConfigError, match=r"nav\\xff.csv: not UTF-8 text") as exc:
        Trajectory.from_csv(p)
    one_line(exc)
    p.write_bytes(b"t,px,py,pz,qx,qy,qz,qw\n0,0,0,0,0,0,0,1\n1,0,0,\"" + b"9" * 200_000 + b"\",0,0,0,1\n")
    with pytest.raises(ConfigError, match="nav"):
        Trajectory.from_csv(p)


@pytest.mark.parametrize("text", ["v 0 0\nv 1 0\nv 0 1\nf 1 2 3\n", "v 0 0 0 1 2\nv 1 0 0 1 2\nv 0 1 0 1 2\nf 1 2\n"])
def test_mesh_file_with_malformed_vertices_is_a_scene_error(tmp_path, text):
    from oceansim_py import load_scene
    from oceansim_py.errors import SceneError

    path = tmp_path / "bad.obj"
    path.write_text(text)
    try:
        scene = load_scene(path)
    except SceneError as exc:
        assert "bad.obj" in str(exc)
    else:  # trimesh may read a malformed line as something valid; then the scene must be consistent
        for node in scene.mesh_nodes():
            assert node.mesh.vertices.shape[1] == 3 and node.mesh.triangles.shape[1] == 3


def test_render_out_below_a_regular_file_is_a_clear_error(tmp_path, capsys):
    from oceansim_py.cli import main

    (tmp_path / "afile").write_text("x")
    code = main(["render", "sonar", "--set", "range_bins=16", "--set", "n_beams=8",
                 "--out", str(tmp_path / "afile" / "sub")])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "--out" in err and "afile" in err and "not a folder" in err      # refused before rendering
