"""A user's data path end to end, checked by hand (audit X2): a USD scene made with pxr, a rig with sensors at
rates that do not divide the tick rate, shards of uneven size, and every number read back with numpy against
the geometry: sample counts and times per sensor and shard, the poses of the transect, the DVL's altitude and
beam ranges, the camera's planar depth and labels through its intrinsics and mount, and the MCAP export's stamps.

Scene: a floor z = -10 (100 m square, sand) and a 2 m steel cube centred at (10, 0, -9) (x 9..11, y -1..1,
z -10..-8). Vehicle: transect from (0, 0, -5) along +x at 1 m/s, level. Ticks at 4 Hz for 3 s (12 frames), shards
of 5 ticks: [0, 5), [5, 10), [10, 12).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

pxr = pytest.importorskip("pxr")

from oceansim_py import load_dataset  # noqa: E402
from oceansim_py.cli import main  # noqa: E402

RIG = {
    "name": "box_survey", "scene": "box.usda", "seed": 5, "duration": 3.0, "tick_rate_hz": 4.0, "shard_size": 5,
    "batch_size": 4,
    "trajectory": {"type": "transect", "start": [0.0, 0.0, -5.0], "end": [20.0, 0.0, -5.0], "speed": 1.0},
    "sensors": [
        {"name": "pose", "type": "pose", "rate_hz": 4.0},
        {"name": "dvl", "type": "dvl", "preset": "dvl_30deg", "rate_hz": 3.0, "mount": [0, 0, -0.3, 0, 0, 0],
         "config": {"noise": False}},
        {"name": "imu", "type": "imu", "preset": "tactical", "rate_hz": 10.0, "config": {"noise": False}},
        {"name": "cam", "type": "camera", "preset": "clear_ocean_sunlit", "rate_hz": 1.0,
         "mount": [0.7, 0, 0.1, 0, 30.0, 0], "config": {"width": 32, "height": 24, "horizontal_fov": 90.0},
         "products": ["depth", "label"]},
    ],
}


def make_box_scene(path: Path) -> None:
    from pxr import Gf, Sdf, Usd, UsdGeom

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, "/World").GetPrim())
    floor = UsdGeom.Mesh.Define(stage, "/World/Floor")
    floor.CreatePointsAttr([(-50, -50, -10), (50, -50, -10), (50, 50, -10), (-50, 50, -10)])
    floor.CreateFaceVertexCountsAttr([4])
    floor.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
    floor.GetPrim().CreateAttribute("oceansim:material", Sdf.ValueTypeNames.String).Set("sand")
    box = UsdGeom.Cube.Define(stage, "/World/Box")
    box.CreateSizeAttr(2.0)
    UsdGeom.XformCommonAPI(box).SetTranslate(Gf.Vec3d(10, 0, -9))
    box.GetPrim().CreateAttribute("oceansim:material", Sdf.ValueTypeNames.String).Set("steel")
    stage.GetRootLayer().Save()


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("user_path")
    make_box_scene(folder / "box.usda")
    (folder / "rig.yaml").write_text(yaml.safe_dump(RIG))
    out = folder / "out"
    assert main(["generate", "--rig", str(folder / "rig.yaml"), "--out", str(out), "--no-progress"]) == 0
    return out


def test_samples_per_sensor_and_shard_and_their_times(run):
    # sensor at r Hz, shard of ticks [a, b) at 4 Hz: samples ceil(a r / 4) .. ceil(b r / 4) - 1
    reader = load_dataset(run, verify=True)
    assert len(reader) == 12
    spans = {rec["name"]: rec["samples"] for rec in reader.manifest["shards"]}
    assert spans == {"shard_00000": {"pose": [0, 5], "dvl": [0, 4], "imu": [0, 13], "cam": [0, 2]},
                     "shard_00001": {"pose": [5, 10], "dvl": [4, 8], "imu": [13, 25], "cam": [2, 3]},
                     "shard_00002": {"pose": [10, 12], "dvl": [8, 9], "imu": [25, 30], "cam": [3, 3]}}
    for name, rate, n in (("pose", 4.0, 12), ("dvl", 3.0, 9), ("imu", 10.0, 30), ("cam", 1.0, 3)):
        times = [s["time"] for s in reader.samples(name)]
        assert len(times) == n and times == pytest.approx(np.arange(n) / rate, abs=1e-12)
    # the table's own time column (written to CSV) reads back exactly: dvl sample 4 at 4/3 s
    table = np.genfromtxt(run / "shard_00001" / "dvl" / "samples.csv", delimiter=",", names=True)
    assert table["sample"][0] == 4 and table["time"][0] == 4.0 / 3.0
    # frame k (t = k / 4) holds each sensor's latest sample: dvl floor(3 k / 4), cam floor(k / 4)
    frame = reader[7]
    assert (frame["time"], frame["dvl"]["sample"], frame["cam"]["sample"], frame["imu"]["sample"]) == (1.75, 5, 1, 17)


def test_poses_dvl_and_imu_of_the_level_transect(run):
    reader = load_dataset(run)
    for s in reader.samples("pose"):
        expected = np.eye(4)
        expected[:3, 3] = (s["time"] * 1.0, 0.0, -5.0)               # x = v t
        assert np.allclose(s["matrix"], expected, atol=1e-12)
    beams = np.asarray(reader.sensors["dvl"]["beam_directions_sensor_frame"])
    for s in reader.samples("dvl"):
        # the DVL 0.3 m below the vehicle: 4.7 m above the floor; a 30 deg Janus beam: 4.7 / cos 30 = 5.4271 m;
        # velocity (1, 0, 0) along beam k: its x component
        assert s["altitude"] == pytest.approx(4.7, abs=1e-4)
        assert s["beam_range"] == pytest.approx([4.7 / math.cos(math.radians(30.0))] * 4, abs=1e-4)
        assert s["velocity"] == pytest.approx([1.0, 0.0, 0.0], abs=1e-5)
        assert s["beam_velocity"] == pytest.approx(beams[:, 0], abs=1e-5)
    for s in reader.samples("imu"):
        assert s["accel"] == pytest.approx([0.0, 0.0, 9.80665], abs=1e-9)       # at rest in the level frame
        assert s["gyro"] == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)


def expected_depth_and_label(x_vehicle: float, u: float, v: float) -> tuple[float, str]:
    """Planar depth (m) and what pixel (u, v) sees (OpenCV: pixel u's centre at u, so cx = (32 - 1) / 2): camera
    at vehicle + (0.7, 0, 0.1), pitched 30 deg down; fx = fy = 16 (90 deg over 32 px), cx = 15.5, cy = 11.5;
    optical z = forward, x = right (-y), y = down. E.g. pixel (15, 11) at x_vehicle 0 sees the face x = 9, 8.3 m
    ahead, along a ray 0.5 / 16 above the axis: depth 8.3 / (cos 30 + sin 30 / 32) = 9.4137 m."""
    pitch = math.radians(30.0)
    forward = np.array([math.cos(pitch), 0.0, -math.sin(pitch)])
    down = np.array([-math.sin(pitch), 0.0, -math.cos(pitch)])      # the camera's -z (up) turned by the pitch
    right = np.array([0.0, -1.0, 0.0])
    ray = forward + (u - 15.5) / 16.0 * right + (v - 11.5) / 16.0 * down   # optical z = 1: t is the planar depth
    cam = np.array([x_vehicle + 0.7, 0.0, -4.9])
    t_face = (9.0 - cam[0]) / ray[0]                                  # the cube's face x = 9
    hit = cam + t_face * ray
    if -1.0 <= hit[1] <= 1.0 and -10.0 <= hit[2] <= -8.0:
        return t_face, "Box"
    t_top = (-8.0 - cam[2]) / ray[2]                                  # its top z = -8
    hit = cam + t_top * ray
    if -1.0 <= hit[1] <= 1.0 and 9.0 <= hit[0] <= 11.0:
        return t_top, "Box"
    return (-10.0 - cam[2]) / ray[2], "Floor"


def test_camera_depth_and_labels_through_intrinsics_and_mount(run):
    reader = load_dataset(run)
    meta = reader.sensors["cam"]
    assert meta["intrinsics"] == {"fx": pytest.approx(16.0), "fy": pytest.approx(16.0), "cx": 15.5, "cy": 11.5,
                                  "width": 32, "height": 24}
    labels = reader.manifest["scene"]["labels"]
    seen = set()
    for s in reader.samples("cam"):
        for v in (8, 11, 12, 16, 23):
            for u in (3, 15, 16, 28):
                depth, what = expected_depth_and_label(s["time"] * 1.0, u, v)
                assert s["depth"][v, u] == pytest.approx(depth, rel=1e-4), (s["sample"], v, u)
                assert labels[s["label"][v, u]] == what, (s["sample"], v, u)
                seen.add(what)
    assert seen == {"Box", "Floor"}


def test_mcap_export_stamps_and_values(run, tmp_path):
    pytest.importorskip("rosbags")
    pytest.importorskip("mcap")
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    assert main(["export", str(run), "--format", "mcap", "--out", str(tmp_path / "run.mcap")]) == 0
    stamps: dict[str, list[int]] = {}
    with AnyReader([tmp_path / "run.mcap"], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as bag:
        for conn, ns, raw in bag.messages():
            stamps.setdefault(conn.topic, []).append(ns)
            msg = bag.deserialize(raw, conn.msgtype)
            if conn.topic == "/tf":
                assert msg.transforms[0].transform.translation.x == pytest.approx(ns * 1e-9, abs=1e-9)
            if conn.topic == "/cam/depth":
                assert (msg.header.frame_id, msg.encoding, msg.height, msg.width) == ("cam_optical", "32FC1", 24, 32)
    # dvl sample m at m / 3 s, rounded to the nanosecond: 333333333, 666666667, ...
    assert stamps["/dvl/dvl"] == [round(m * 1e9 / 3) for m in range(9)]
    assert stamps["/imu/data"] == [m * 100_000_000 for m in range(30)]
    assert stamps["/tf"] == stamps["/pose/pose"] == [k * 250_000_000 for k in range(12)]
    assert stamps["/cam/depth"] == stamps["/cam/label"] == [0, 1_000_000_000, 2_000_000_000]
