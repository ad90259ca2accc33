"""Issue 13: what a new user runs into in the first hour (CLI parsing, defaults, framing, warnings, docs)."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from oceansim_py.cli import join_negative_values, main
from oceansim_py.diagnostics import EmptyViewWarning, empty_view_reason
from oceansim_py.scene import framing, load_scene
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig
from oceansim_py.sensors.water import WaterType

from conftest import make_scene, quad

ROOT = Path(__file__).resolve().parent.parent


def write_obj(path: Path, mesh) -> Path:  # noqa: ANN001 - a TriangleMesh
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in mesh.vertices)
                    + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in mesh.triangles))
    return path


def box_obj(path: Path, lo=(-1.0, -1.0, -11.0), hi=(1.0, 1.0, -9.0)) -> Path:
    """An axis-aligned box from ``lo`` to ``hi`` (m) as an OBJ (outward counter-clockwise faces)."""
    import trimesh

    mesh = trimesh.creation.box(bounds=[lo, hi])
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in mesh.vertices)
                    + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in mesh.faces))
    return path


# --- item 1: negative number lists -------------------------------------------------------------------------

def test_negative_number_lists_are_joined_to_their_option() -> None:
    argv = ["render", "sonar", "--pose", "-15,0,-5,0,0,0", "--step", "-0.2,0,0", "--set", "gain=-3", "-v"]
    assert join_negative_values(argv) == ["render", "sonar", "--pose=-15,0,-5,0,0,0", "--step=-0.2,0,0",
                                          "--set", "gain=-3", "-v"]
    assert join_negative_values(["--scale", "-1e-3"]) == ["--scale=-1e-3"]
    assert join_negative_values(["--pose", "--out", "x"]) == ["--pose", "--out", "x"]


def test_cli_accepts_a_negative_pose_as_typed(tmp_path: Path) -> None:
    obj = box_obj(tmp_path / "box.obj", lo=(-10.0, -1.0, -6.0), hi=(-8.0, 1.0, -4.0))
    out = tmp_path / "cam"
    assert main(["render", "camera", "--scene", str(obj), "--pose", "-15,0,-5,0,0,0", "--set", "width=8",
                 "--set", "height=6", "--out", str(out)]) == 0
    assert (np.load(out / "camera_label.npy") >= 0).any()


# --- item 10: version, flag names in errors, bounds --------------------------------------------------------

def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import oceansim_py

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"oceansim-py {oceansim_py.__version__}"


@pytest.mark.parametrize("args, flag", [
    (["render", "sonar", "--set", "max_rang=5"], "--set max_rang=5"),
    (["render", "camera", "--water", "foo"], "--water foo"),
    (["render", "sonar", "--pose", "1,2"], "--pose"),
    (["render", "sonar", "--scene", "wrek"], "--scene wrek"),
    (["render", "sonar", "--device", "cuda:9"], "--device cuda:9"),
    (["render", "sidescan", "--pings", "100000000"], "--pings 100000000"),
    (["render", "sonar", "--scale", "0,1,1"], "--scale 0,1,1"),
    (["generate", "--frames", "100000000"], "--frames 100000000"),
    (["render", "singlebeam", "--pings", "1e8"], "--pings 100000000"),
    (["generate", "--rig", "nope"], "--rig nope: neither"),
])
def test_errors_name_the_flag_as_typed(args: list[str], flag: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"oceansim-py: error: {flag}" in err, err
    assert "--preset" not in err.split("\n")[0] or flag.startswith("--preset")


def test_set_overrides_are_validated_together() -> None:
    import argparse

    from oceansim_py.commands.render_common import build_config
    from oceansim_py.errors import ConfigError
    from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig

    args = argparse.Namespace(config=None, preset="blueview_p900", set=["min_range=20", "max_range=30"])
    config = build_config(args, ImagingSonarConfig)          # min 20 > the preset's max 10 only in between
    assert (config.min_range, config.max_range) == (20.0, 30.0)
    args.set = ["min_range=20"]
    with pytest.raises(ConfigError, match=r"^--set min_range=20: "):
        build_config(args, ImagingSonarConfig)


def test_no_cuda_driver_banner_on_cpu(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "oceansim_py.cli", "info"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0
    assert "Could not find or load the NVIDIA CUDA driver" not in proc.stderr
    assert "cpu" in proc.stdout
    # the main job too (its rig check asks for the free memory before any sensor exists)
    proc = subprocess.run([sys.executable, "-m", "oceansim_py.cli", "generate", "--frames", "1", "--no-progress",
                           "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Could not find or load the NVIDIA CUDA driver" not in proc.stderr


# --- item 11: compile notice -------------------------------------------------------------------------------

def test_cold_kernel_cache_is_detected_and_announced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import warp as wp

    from oceansim_py import runtime

    runtime.init_warp()
    assert runtime.compile_kernels_once("cpu", notify=pytest.fail) == 0.0 or True  # warm or cold: no crash
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    cold = {m.name for m in runtime.cold_kernel_modules("cpu")}
    assert {"oceansim_py.kernels.camera", "oceansim_py.kernels.imaging_sonar",
            "oceansim_py.kernels.raycast"} <= cold
    assert "oceansim_py.kernels.random" not in cold                 # functions only: nothing to compile
    said: list[str] = []
    geometry = wp.get_module("oceansim_py.kernels.geometry")
    geometry.unload()  # an earlier test may hold it in memory, where load() would not compile it again
    monkeypatch.setattr(runtime, "_kernel_modules", lambda: [geometry])
    seconds = runtime.compile_kernels_once("cpu", notify=said.append)
    assert seconds > 0 and len(said) == 2 and "first run only" in said[0]
    assert runtime.cold_kernel_modules("cpu") == []               # now cached in tmp_path
    assert runtime.compile_kernels_once("cpu", notify=pytest.fail) == 0.0


# --- items 2, 3, 6, 8: defaults and framing ----------------------------------------------------------------

@pytest.mark.parametrize("scene_name", ["tank", "pier", "wreck"])
@pytest.mark.parametrize("preset", UnderwaterCameraConfig.preset_names())
def test_every_camera_preset_shows_every_builtin_scene(scene_name: str, preset: str) -> None:
    scene = load_scene(scene_name, device="cpu")
    config = UnderwaterCameraConfig.from_dict({"preset": preset, "width": 64, "height": 48})
    reach = min(config.max_range, config.water_type.visibility())
    pose = framing.suggested_pose_for(scene, "camera", reach, config.horizontal_fov)
    rgb = UnderwaterCamera(config, device="cpu").render(scene, pose).numpy()["rgb"][0].astype(np.float64) / 255
    lum = rgb @ np.array([0.2126, 0.7152, 0.0722])
    assert lum.std() > 0.012, f"{preset} on {scene_name}: flat image (std {lum.std():.4f})"
    assert 0.03 < lum.mean() < 0.9 and (rgb >= 1.0).mean() < 0.05


def test_water_visibility_is_three_over_the_smallest_attenuation() -> None:
    w = WaterType(attenuation=(0.5, 0.2, 0.3))
    assert w.visibility() == pytest.approx(math.log(20.0) / 0.2)
    assert WaterType.preset("jerlov_3C").visibility() < 3.0 < 20.0 < WaterType.preset("jerlov_IB").visibility()


def test_wreck_orbit_camera_sees_the_wreck() -> None:
    from oceansim_py.dataset.rig import load_rig
    from oceansim_py.dataset.worker import build_trajectory
    from oceansim_py.poses import compose_poses

    rig = load_rig("wreck_orbit")
    scene = load_scene(rig.scene, device="cpu")
    spec = next(s for s in rig.sensors if s.type == "camera")
    config = UnderwaterCameraConfig.from_dict({**spec.config, "width": 48, "height": 36})
    vehicle = build_trajectory(rig, scene).at(np.array([0.0, 6.0, 12.0]))
    poses = compose_poses(vehicle, np.asarray(spec.mount)[None, :])
    result = UnderwaterCamera(config, device="cpu").render(scene, poses).numpy()
    labels = {scene.label_of(i) for i in np.unique(result["instance"]) if i >= 0}
    assert "hull" in labels
    for k in range(len(poses)):
        lum = (result["rgb"][k].astype(np.float64) / 255) @ np.array([0.2126, 0.7152, 0.0722])
        assert lum.std() > 0.012


def test_default_sonar_on_the_wreck_sees_the_wreck_more_than_the_floor(tmp_path: Path) -> None:
    out = tmp_path / "sonar"
    assert main(["render", "sonar", "--set", "range_bins=128", "--set", "n_beams=64", "--out", str(out)]) == 0
    scene = load_scene("wreck", device="cpu")
    from oceansim_py.sensors.registry import get as sensor_kind
    from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig

    DEFAULT_PRESET = sensor_kind("imaging_sonar").cli.default_preset                 # `render sonar`'s default
    config = ImagingSonarConfig.from_dict({"preset": DEFAULT_PRESET, "range_bins": 128, "n_beams": 64})
    pose = framing.suggested_pose_for(scene, "imaging_sonar", config.max_range, config.horizontal_fov)
    assert framing.boresight_range(scene, pose, config.max_range) < config.max_range
    labels = ImagingSonar(config, device="cpu").render(scene, pose).numpy()["label_id"][0]
    names = np.array(list(scene.labels) + [""])[labels]              # -1 (empty bin) -> ""
    wreck = np.isin(names, ["hull", "deck", "wheelhouse", "mast"]).sum()
    assert wreck > 0.15 * (labels >= 0).sum()
    assert np.load(out / "sonar.npy").max() > 0


@pytest.mark.parametrize("kind, image", [("sidescan", "sidescan.npy"), ("singlebeam", "singlebeam.npy"),
                                         ("profiling", "profiling_range.npy")])
def test_survey_kinds_default_to_a_waterfall_along_a_run(kind: str, image: str, tmp_path: Path) -> None:
    out = tmp_path / kind
    assert main(["render", kind, "--out", str(out)]) == 0
    data = np.load(out / image)
    assert data.shape[0] > 50                                     # many pings, not one row
    lo, hi = framing.subject_bounds(load_scene("wreck", device="cpu"))
    run = framing.survey_run(load_scene("wreck", device="cpu"), kind, 35.0)
    first, last = run.poses()[0, 0], run.poses()[-1, 0]
    assert first < lo[0] and last > hi[0]                         # the run passes the whole subject
    assert np.isfinite(data).any() and np.nanmax(data) > 0


def test_render_with_no_arguments_uses_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["render", "multibeam", "--set", "n_beams=32", "--set", "rays_per_beam=3"]) == 0
    intensity = np.load(tmp_path / "oceansim_render" / "multibeam" / "multibeam_intensity.npy")
    assert intensity.max() > 0


def test_external_mesh_gets_a_pose_per_sensor_kind(tmp_path: Path) -> None:
    obj = box_obj(tmp_path / "box.obj", lo=(10.0, -2.0, -22.0), hi=(14.0, 2.0, -18.0))
    scene = load_scene(obj, device="cpu")
    assert scene.suggested_pose is None
    lo, hi = framing.subject_bounds(scene)
    np.testing.assert_allclose(lo, [10, -2, -22]), np.testing.assert_allclose(hi, [14, 2, -18])
    for kind, reach in (("imaging_sonar", 10.0), ("multibeam", 10.0), ("camera", 20.0)):
        pose = framing.suggested_pose_for(scene, kind, reach)
        d = framing.boresight_range(scene, pose, 100.0)
        assert d < framing.REACH_FRACTION * reach + 1e-6, kind        # the boresight meets the box within reach
        assert pose[2] <= scene.surface_z - framing.SURFACE_CLEARANCE
    out = tmp_path / "o"
    assert main(["render", "sonar", "--scene", str(obj), "--set", "range_bins=64", "--set", "n_beams=32",
                 "--out", str(out)]) == 0
    assert np.load(out / "sonar.npy").max() > 0


# --- item 7: scale and up axis -----------------------------------------------------------------------------

def test_per_axis_scale_and_up_axis(tmp_path: Path) -> None:
    obj = box_obj(tmp_path / "b.obj", lo=(0.0, 0.0, 0.0), hi=(1.0, 2.0, 3.0))
    lo, hi = load_scene(obj, device="cpu", scale=(2.0, 3.0, 0.5)).bounds
    np.testing.assert_allclose(hi - lo, [2.0, 6.0, 1.5], rtol=1e-6)
    lo, hi = load_scene(obj, device="cpu", up_axis="Y").bounds           # file y -> world z, file z -> -y
    np.testing.assert_allclose(hi - lo, [1.0, 3.0, 2.0], rtol=1e-6)
    out = tmp_path / "o"
    assert main(["render", "camera", "--scene", str(obj), "--scale", "0.5", "--up-axis", "y", "--pose",
                 "-3,0,0.5,0,0,0", "--set", "width=8", "--set", "height=6", "--out", str(out)]) == 0


# --- item 5: warnings --------------------------------------------------------------------------------------

def test_empty_view_reasons() -> None:
    above = make_scene(("roof", quad((0, 0, 5), (0, 0, -1), 4.0), 0.5))
    assert "above the sea surface" in empty_view_reason(above, np.zeros((1, 3)), 10.0)
    below = make_scene(("floor", quad((0, 0, -10), (0, 0, 1), 4.0), 0.5))
    assert "outside the scene bounds" in empty_view_reason(below, np.array([[100.0, 0, -5]]), 10.0)
    assert "within 10 m" in empty_view_reason(below, np.array([[0.0, 0, -10]]), 10.0)


def test_cli_warns_when_the_sensor_sees_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    obj = box_obj(tmp_path / "air.obj", lo=(-1.0, -1.0, 1.0), hi=(1.0, 1.0, 3.0))
    assert main(["render", "sonar", "--scene", str(obj), "--pose", "-5,0,-1,0,0,0", "--set", "range_bins=32",
                 "--set", "n_beams=16", "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "oceansim-py: warning:" in err and "above the sea surface" in err
    from oceansim_py.diagnostics import warn_if_blind

    scene = load_scene(obj, device="cpu")
    with pytest.warns(EmptyViewWarning, match="above the sea surface"):
        warn_if_blind("sonar", 0.0, scene, np.zeros((1, 3)), 10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_blind("sonar", 0.5, scene, np.zeros((1, 3)), 10.0) is False


def test_cli_warns_when_a_sensor_is_posed_above_the_sea_surface(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # A sonar at z = +0.2 m in the tank (walls to z = 0.5 m) rendered the walls in the air as if under water, and a
    # camera above the flat surface (surface_optics: auto) saw the world filled with water, without a word.
    from oceansim_py.diagnostics import OutOfWaterWarning, warn_if_above_surface

    small = ["--set", "range_bins=16", "--set", "n_beams=8"]
    assert main(["render", "sonar", "--scene", "tank", "--pose", "0,0,0.2,0,0,0", *small,
                 "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert ("oceansim-py: warning: imaging sonar is above the sea surface: z = 0.2 m, surface 0 m; an acoustic "
            "sensor works in the water") in err
    cam = ["--set", "width=8", "--set", "height=6", "--pose", "0,0,1,0,30,0"]
    assert main(["render", "camera", "--scene", "tank", *cam, "--out", str(tmp_path / "c")]) == 0
    assert "camera is above the sea surface: z = 1 m, surface 0 m; without the sea surface's optics" \
        in capsys.readouterr().err
    # the camera that renders the surface from above, and a sonar under water, are silent
    for args in (["camera", *cam, "--set", "surface_optics=always"], ["sonar", "--pose", "0,0,-1.5,0,0,0", *small]):
        assert main(["render", args[0], "--scene", "tank", *args[1:], "--out", str(tmp_path / "q")]) == 0
        assert "warning" not in capsys.readouterr().err
    # by hand: the moving surface's instantaneous height decides; the count says how many poses are out
    scene = load_scene("tank", device="cpu")
    with pytest.warns(OutOfWaterWarning, match=r"^probe is above the sea surface at 1 of 2 poses \(first: pose 1\): "
                                               r"z = 0\.01 m, surface 0 m; why$"):
        assert warn_if_above_surface("probe", scene, np.array([[0.0, 0, -0.01], [0.0, 0, 0.01]]), "why")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_above_surface("probe", scene, np.array([[0.0, 0, 0.0], [1.0, 0, -3.0]]), "why") is False


def test_generate_warns_for_a_rig_that_does_not_match_its_scene(tmp_path: Path) -> None:
    import yaml

    from oceansim_py.dataset.generate import generate
    from oceansim_py.dataset.rig import load_rig

    rig = {"name": "lost", "scene": "tank", "seed": 1, "frames": 2, "tick_rate_hz": 1.0,
           "trajectory": {"type": "transect", "start": [200.0, 0.0, -1.5], "end": [203.0, 0.0, -1.5],
                          "speed": 1.0},
           "sensors": [{"name": "fls", "type": "imaging_sonar", "preset": "oceansim_default", "rate_hz": 1.0,
                        "config": {"max_range": 6.0, "n_beams": 16, "range_bins": 16, "elevation_rays": 4}},
                       {"name": "imu", "type": "imu", "preset": "consumer_mems", "rate_hz": 1.0}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    with pytest.warns(EmptyViewWarning, match=r"sensor 'fls' \(imaging_sonar\).*outside the scene bounds") as got:
        generate(load_rig(path), tmp_path / "out", progress=False)
    assert len(got) == 1  # the IMU has no range and is not probed
    rig["trajectory"].update(start=[-1.0, 0.0, -1.5], end=[2.0, 0.0, -1.5])  # inside the tank: silent
    path.write_text(yaml.safe_dump(rig))
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmptyViewWarning)
        generate(load_rig(path), tmp_path / "out2", progress=False)


def test_sensors_that_see_the_flat_surface_are_not_reported_blind(tmp_path: Path) -> None:
    # 3 m under the flat surface of the wreck scene (bottom about 20 m down, out of a 10 m reach): a DVL tracking
    # the surface, a camera with surface_optics: always and a sonar with surface reverberation all see the plane
    # z = 0 (every DVL sample is valid), but the pre-run probe cast against geometry only and warned that each
    # "saw nothing". A bottom-tracking DVL there does see nothing and is still reported.
    from oceansim_py.dataset.generate import warn_blind_sensors
    from oceansim_py.dataset.rig import parse_rig
    from oceansim_py.dataset.worker import ShardWorker
    from oceansim_py.diagnostics import probe_hit_fraction

    sensors = [{"name": "dvl_up", "type": "dvl", "rate_hz": 1.0, "config": {"tracking": "surface", "max_range": 10.0}},
               {"name": "cam", "type": "camera", "rate_hz": 1.0,
                "config": {"surface_optics": "always", "max_range": 10.0, "width": 8, "height": 6}},
               {"name": "fls", "type": "imaging_sonar", "preset": "oculus_m750d", "rate_hz": 1.0,
                "config": {"surface_reverberation": True, "surface_wind_speed": 5.0, "max_range": 10.0}},
               {"name": "dvl_down", "type": "dvl", "rate_hz": 1.0, "config": {"max_range": 10.0}}]
    rig = parse_rig({"name": "up", "scene": "wreck", "frames": 2, "tick_rate_hz": 1.0, "sensors": sensors,
                     "trajectory": {"type": "transect", "start": [-30.0, 0.0, -3.0], "end": [-28.0, 0.0, -3.0],
                                    "speed": 1.0}}, source="up.yaml")
    worker = ShardWorker(rig, tmp_path / "out", "cpu")
    with pytest.warns(EmptyViewWarning) as got:
        assert warn_blind_sensors(worker) == ["dvl_down"]
    assert len(got) == 1
    # the probe by hand: from 3 m down, an upward ray reaches the plane within 10 m where d_z >= 0.3, i.e. on the cap
    # of the sphere above z = 0.3: (1 - 0.3) / 2 = 35 % of evenly spread directions
    fraction = probe_hit_fraction(worker.scene, [[-30.0, 0.0, -3.0]], 10.0, surface_z=0.0)
    assert fraction == pytest.approx(0.35, abs=2 / 256)
    assert probe_hit_fraction(worker.scene, [[-30.0, 0.0, -3.0]], 10.0) == 0.0


def test_no_builtin_rig_has_a_blind_sensor(tmp_path: Path) -> None:
    from oceansim_py.dataset.generate import warn_blind_sensors
    from oceansim_py.dataset.rig import builtin_rig_names, load_rig
    from oceansim_py.dataset.worker import ShardWorker

    with warnings.catch_warnings():
        warnings.simplefilter("error", EmptyViewWarning)
        for name in builtin_rig_names():
            assert warn_blind_sensors(ShardWorker(load_rig(name), tmp_path / name, "cpu")) == []


# --- item 15: GPS ------------------------------------------------------------------------------------------

def test_no_builtin_rig_carries_a_gps_that_never_gets_a_fix() -> None:
    from oceansim_py.dataset.rig import builtin_rig_names, load_rig
    from oceansim_py.dataset.worker import build_trajectory
    from oceansim_py.poses import compose_poses
    from oceansim_py.sensors.gps import GPSConfig

    for name in builtin_rig_names():
        rig = load_rig(name)
        for spec in (s for s in rig.sensors if s.type == "gps"):
            scene = load_scene(rig.scene, device="cpu")
            times = rig.start_time + np.arange(rig.frames) / rig.tick_rate_hz
            antenna = compose_poses(build_trajectory(rig, scene).at(times), np.asarray(spec.mount)[None, :])
            limit = GPSConfig.from_dict(spec.config).depth_threshold
            assert (scene.surface_z - antenna[:, 2] <= limit).any(), f"{name}: {spec.name} never surfaces"


# --- item 14: docs -----------------------------------------------------------------------------------------

def test_docs_cited_by_the_code_exist_and_citations_point_into_docs() -> None:
    assert (ROOT / "docs" / "PHYSICS.md").is_file() and (ROOT / "docs" / "DESIGN.md").is_file()
    bare = []
    for path in [*ROOT.joinpath("oceansim_py").rglob("*.py"), *ROOT.joinpath("benchmarks").rglob("*.py")]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search(r"(?<!docs/)(PHYSICS|DESIGN)\.md", line):
                bare.append(f"{path.name}: {line.strip()}")
    assert not bare, bare
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/PHYSICS.md" in readme and "docs/DESIGN.md" in readme
    for image in re.findall(r"\]\((docs/gallery/[^)]+\.png)\)", readme):
        assert (ROOT / image).stat().st_size < 200_000
    assert len(re.findall(r"\]\((docs/gallery/[^)]+\.png)\)", readme)) >= 6


# --- item 4: single-beam first-return range ----------------------------------------------------------------

def test_singlebeam_first_return_is_a_slant_range_with_a_deprecated_altitude_alias() -> None:
    from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

    wall = make_scene(("wall", quad((6.0, 0, -5), (-1, 0, 0), 20.0), 0.5))
    sonar = SinglebeamSonar(SinglebeamSonarConfig(opening_angle=4.0), device="cpu")
    result = sonar.render(wall, np.array([0.0, 0.0, -5.0, 0.0, 0.0, 0.0, 1.0]))
    first = result.numpy()["first_return_range"][0]
    assert first == pytest.approx(6.0, abs=0.02)        # forward range to the wall, 5 m above nothing
    with pytest.warns(DeprecationWarning, match="first_return_range"):
        assert result.altitude.numpy()[0] == first


def test_surface_transit_rig_gets_a_gps_fix_on_every_sample(tmp_path: Path) -> None:
    import csv

    out = tmp_path / "run"
    assert main(["generate", "--rig", "surface_transit", "--frames", "4", "--out", str(out), "--no-progress"]) == 0
    rows = [row for path in sorted(out.glob("shard_*/gps/*.csv")) for row in csv.DictReader(path.open())]
    assert rows, "no GPS samples written"
    assert all(row["fix"].strip().lower() in ("1", "true") for row in rows), rows
