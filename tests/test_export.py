"""ROS 2 export (rosbag2 and MCAP) read back with independent readers, field by field; bad targets and missing
streams; the GPS datum conversion against textbook degree lengths."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rosbags")
pytest.importorskip("mcap")

from oceansim_py import DatasetError, load_dataset  # noqa: E402
from oceansim_py.cli import main  # noqa: E402
from oceansim_py.export import ExportWarning, export_dataset  # noqa: E402
from oceansim_py.export.ros_messages import local_to_geodetic  # noqa: E402
from oceansim_py.export.streams import product  # noqa: E402
from oceansim_py.poses import quat_to_matrix  # noqa: E402

from all_streams_rig import make_dataset  # noqa: E402

TOPIC_TYPES = {
    "/tf_static": "tf2_msgs/msg/TFMessage", "/tf": "tf2_msgs/msg/TFMessage",
    "/cam/image": "sensor_msgs/msg/Image", "/cam/depth": "sensor_msgs/msg/Image",
    "/cam/label": "sensor_msgs/msg/Image", "/cam/camera_info": "sensor_msgs/msg/CameraInfo",
    "/fls/image": "marine_acoustic_msgs/msg/ProjectedSonarImage",
    "/mbes/image": "marine_acoustic_msgs/msg/ProjectedSonarImage", "/mbes/points": "sensor_msgs/msg/PointCloud2",
    "/sss/raw_image": "marine_acoustic_msgs/msg/RawSonarImage",
    "/swath/points": "sensor_msgs/msg/PointCloud2", "/swath/ranges": "marine_acoustic_msgs/msg/SonarRanges",
    "/alt/altitude": "sensor_msgs/msg/Range", "/dvl/dvl": "marine_acoustic_msgs/msg/Dvl",
    "/imu/data": "sensor_msgs/msg/Imu", "/baro/pressure": "sensor_msgs/msg/FluidPressure",
    "/gps/fix": "sensor_msgs/msg/NavSatFix", "/pose/pose": "geometry_msgs/msg/PoseStamped",
}
#: samples per stream: 3 ticks at 2 Hz = 1.5 s
COUNTS = {"cam": 3, "fls": 3, "mbes": 3, "sss": 3, "swath": 3, "alt": 3, "dvl": 6, "imu": 15, "baro": 3, "gps": 2,
          "pose": 3}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return make_dataset(tmp_path_factory.mktemp("export"))


def read_rosbag2(path: Path) -> list[tuple[str, str, int, object]]:
    """(topic, type, log time ns, message) with rosbags' AnyReader, whose default typestore lacks
    marine_acoustic_msgs: those decode only from the definitions stored in the bag."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    out = []
    with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as reader:
        for conn, ns, raw in reader.messages():
            out.append((conn.topic, conn.msgtype, ns, reader.deserialize(raw, conn.msgtype)))
    return out


def _typestore_from_schema(name: str, text: str):
    """A typestore built only from an MCAP ros2msg schema (the main definition + its ``MSG:`` sections)."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.EMPTY)
    sections = [(name, text.split("\n" + "=" * 80 + "\n")[0])]
    for part in text.split("=" * 80 + "\n")[1:]:
        head, _, body = part.partition("\n")
        assert head.startswith("MSG: ")
        sections.append(("/msg/".join(head[5:].strip().split("/", 1)), body))
    types = {}
    for typename, body in sections:
        types.update(get_types_from_msg(body, typename))
    store.register(types)
    return store


def read_mcap(path: Path) -> list[tuple[str, str, int, object]]:
    """(topic, type, log time ns, message) with the ``mcap`` reader, each decoded by a typestore built from the
    schema stored in the file."""
    from mcap.reader import make_reader

    out, stores = [], {}
    with open(path, "rb") as fh:
        reader = make_reader(fh)
        assert reader.get_header().profile == "ros2"
        for schema, channel, message in reader.iter_messages(log_time_order=True):
            assert schema.encoding == "ros2msg" and channel.message_encoding == "cdr"
            if schema.id not in stores:
                stores[schema.id] = _typestore_from_schema(schema.name, schema.data.decode())
            typename = schema.name
            assert typename == "/".join(typename.split("/")[:1] + ["msg"] + typename.split("/")[-1:])
            out.append((channel.topic, typename, message.log_time,
                        stores[schema.id].deserialize_cdr(message.data, typename)))
    return out


@pytest.fixture(scope="module", params=["rosbag2", "mcap"])
def exported(request, dataset, tmp_path_factory):
    fmt = request.param
    out = tmp_path_factory.mktemp(f"bag_{fmt}") / ("bag" if fmt == "rosbag2" else "run.mcap")
    summary = export_dataset(dataset, out, format=fmt)
    assert summary.skipped == {} and summary.bytes > 0
    messages = read_rosbag2(out) if fmt == "rosbag2" else read_mcap(out)
    return summary, messages


def by_topic(messages, topic):
    return [(ns, m) for t, _, ns, m in messages if t == topic]


def stamp(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def test_topics_types_and_counts(exported):
    summary, messages = exported
    assert {t: ty for t, ty, _, _ in messages} == TOPIC_TYPES
    for topic in TOPIC_TYPES:
        sensor = topic.split("/")[1]
        expected = COUNTS.get(sensor, {"tf_static": 1, "tf": 3}.get(sensor))
        assert len(by_topic(messages, topic)) == expected == summary.messages[topic], topic


def test_every_header_stamped_with_dataset_time(exported, dataset):
    _, messages = exported
    reader = load_dataset(dataset)
    for topic in TOPIC_TYPES:
        sensor = topic.split("/")[1]
        if sensor not in reader.sensors:
            continue
        times = [s["time"] for s in reader.samples(sensor)]
        got = by_topic(messages, topic)
        assert [ns for ns, _ in got] == [round(t * 1e9) for t in times], topic
        assert [stamp(m) for _, m in got] == pytest.approx(times, abs=1e-9), topic


def test_camera_images_and_info(exported, dataset):
    _, messages = exported
    reader = load_dataset(dataset)
    samples = list(reader.samples("cam"))
    for (_, img), (_, depth), (_, label), (_, info), s in zip(
            by_topic(messages, "/cam/image"), by_topic(messages, "/cam/depth"), by_topic(messages, "/cam/label"),
            by_topic(messages, "/cam/camera_info"), samples):
        assert (img.encoding, img.height, img.width, img.step, img.header.frame_id) == ("rgb8", 24, 32, 96,
                                                                                         "cam_optical")
        assert bytes(img.data) == s["rgb_png"].tobytes()
        assert (depth.encoding, depth.step) == ("32FC1", 128)
        assert np.array_equal(np.frombuffer(bytes(depth.data), "<f4").reshape(24, 32), s["depth"], equal_nan=True)
        assert label.encoding == "32SC1"
        assert np.array_equal(np.frombuffer(bytes(label.data), "<i4").reshape(24, 32), s["label"])
        k = reader.sensors["cam"]["intrinsics"]
        assert np.allclose(np.asarray(info.k).reshape(3, 3), [[k["fx"], 0, k["cx"]], [0, k["fy"], k["cy"]], [0, 0, 1]])
        assert (info.width, info.height, info.header.frame_id) == (32, 24, "cam_optical")


@pytest.mark.parametrize("sensor", ["fls", "mbes"])
def test_projected_sonar_image(exported, dataset, sensor):
    _, messages = exported
    reader = load_dataset(dataset)
    meta = reader.sensors[sensor]
    bearings = np.asarray(meta["bearings_rad"])
    for (_, msg), s in zip(by_topic(messages, f"/{sensor}/image"), reader.samples(sensor)):
        assert msg.header.frame_id == f"{sensor}_sonar"
        assert np.array_equal(np.asarray(msg.ranges), np.asarray(meta["ranges_m"], dtype=np.float32))
        dirs = np.array([[v.x, v.y, v.z] for v in msg.beam_directions])
        assert np.allclose(dirs, np.stack([np.zeros_like(bearings), np.sin(bearings), np.cos(bearings)], 1))
        assert (msg.image.dtype, msg.image.beam_count, msg.image.is_bigendian) == (8, len(bearings), False)
        data = np.frombuffer(bytes(msg.image.data), "<f4").reshape(len(meta["ranges_m"]), len(bearings))
        assert np.array_equal(data, s["intensity"])
        assert len(msg.ping_info.rx_beamwidths) == len(bearings)
    if sensor == "mbes":
        ping = by_topic(messages, "/mbes/image")[0][1].ping_info
        assert (ping.frequency, ping.sound_speed) == (meta["config"]["frequency"], meta["config"]["sound_speed"])
        # the device-chain P900 forms its beams by steering one flat array: the 1 deg broadside beam is
        # arcsin(sin b + sin 0.5 deg) - arcsin(sin b - sin 0.5 deg) wide at bearing b, ~1 deg / cos b: 1.350 deg for
        # the most-port beam at -42.19 deg, 1.001 deg for the beam nearest broadside (-2.81 deg)
        assert meta["config"]["beam_width"] == 1.0 and meta["config"]["beam_steering"] == "flat_array"
        b, s = bearings[0], math.sin(math.radians(0.5))
        assert math.degrees(b) == pytest.approx(-42.1875, abs=1e-4)
        assert ping.rx_beamwidths[0] == pytest.approx(math.asin(math.sin(b) + s) - math.asin(math.sin(b) - s))
        assert math.degrees(ping.rx_beamwidths[0]) == pytest.approx(1.350, abs=1e-3)
        assert math.degrees(ping.rx_beamwidths[7]) == pytest.approx(1.001, abs=1e-3)


def test_multibeam_soundings(exported, dataset):
    _, messages = exported
    reader = load_dataset(dataset)
    meta = reader.sensors["mbes"]
    ranges, bearings = np.asarray(meta["ranges_m"]), np.asarray(meta["bearings_rad"])
    for (_, cloud), s in zip(by_topic(messages, "/mbes/points"), reader.samples("mbes")):
        assert cloud.header.frame_id == "mbes" and cloud.width == len(bearings)
        pts = np.frombuffer(bytes(cloud.data), "<f4").reshape(-1, 4)
        img = s["intensity"]
        assert np.count_nonzero(img.max(axis=0) > 0) >= len(bearings) // 2     # pitched 40 deg down at the floor
        for j in range(len(bearings)):          # the strongest bin of each beam, on the fan plane
            k = int(np.argmax(img[:, j]))
            if img[k, j] > 0:
                r = ranges[k]
                assert pts[j, :3] == pytest.approx([r * np.cos(bearings[j]), -r * np.sin(bearings[j]), 0.0],
                                                   rel=1e-5, abs=1e-5)
                assert pts[j, 3] == img[k, j]
            else:
                assert np.isnan(pts[j, 0]) and pts[j, 3] == 0


def test_sidescan_raw_image(exported, dataset):
    _, messages = exported
    reader = load_dataset(dataset)
    ranges = np.asarray(reader.sensors["sss"]["ranges_m"])
    dr = ranges[1] - ranges[0]                       # 4.5 m over 40 bins = 0.1125 m
    for (_, msg), s in zip(by_topic(messages, "/sss/raw_image"), reader.samples("sss")):
        assert (msg.samples_per_beam, msg.image.beam_count, msg.image.dtype) == (40, 2, 8)
        assert msg.sample_rate == pytest.approx(1500.0 / (2 * dr), rel=1e-6)
        assert list(msg.rx_angles) == pytest.approx([-math.pi / 2, math.pi / 2])
        assert np.array_equal(np.frombuffer(bytes(msg.image.data), "<f4").reshape(40, 2), s["intensity"])


def test_profiling_points_and_ranges(exported, dataset):
    _, messages = exported
    reader = load_dataset(dataset)
    for (_, cloud), (_, rng), s in zip(by_topic(messages, "/swath/points"), by_topic(messages, "/swath/ranges"),
                                       reader.samples("swath")):
        assert cloud.header.frame_id == "map" and cloud.width == 8 and cloud.point_step == 16
        assert [f.name for f in cloud.fields] == ["x", "y", "z", "intensity"]
        pts = np.frombuffer(bytes(cloud.data), "<f4").reshape(8, 4)
        assert np.array_equal(pts[:, :3], s["point_world"], equal_nan=True)
        assert np.array_equal(pts[:, 3], s["intensity"], equal_nan=True)
        assert np.array_equal(np.asarray(rng.ranges), s["bottom_range"], equal_nan=True)
        assert [f.flag for f in rng.flags] == [0 if np.isfinite(r) else 1 for r in s["bottom_range"]]


def test_navigation_messages(exported, dataset):
    _, messages = exported
    reader = load_dataset(dataset)
    for (_, msg), s in zip(by_topic(messages, "/dvl/dvl"), reader.samples("dvl")):
        v = product(s, "velocity") * [1, -1, -1]           # FLU -> the Dvl frame (x forward, z down)
        assert msg.header.frame_id == "dvl_dvl"
        assert [msg.velocity.x, msg.velocity.y, msg.velocity.z] == pytest.approx(v.tolist(), nan_ok=True)
        assert np.allclose(msg.range, product(s, "beam_range"), equal_nan=True)
        assert np.allclose(msg.beam_velocity, product(s, "beam_velocity"), equal_nan=True)
        assert msg.altitude == pytest.approx(float(s["altitude"]), nan_ok=True)
        assert msg.num_good_beams == int(np.isfinite(product(s, "beam_range")).sum())
        assert msg.speed_gnd == pytest.approx(math.hypot(v[0], v[1]))
        beams = np.array([[d.x, d.y, d.z] for d in msg.beam_unit_vec])
        assert np.allclose(beams, np.asarray(reader.sensors["dvl"]["beam_directions_sensor_frame"]) * [1, -1, -1])
        assert np.all(beams[:, 2] > 0)                      # the beams look down: +z of the Dvl frame
    for (_, msg), s in zip(by_topic(messages, "/imu/data"), reader.samples("imu")):
        assert [msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z] == pytest.approx(
            product(s, "accel").tolist())
        assert [msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z] == pytest.approx(
            product(s, "gyro").tolist())
        assert msg.orientation_covariance[0] == -1 and msg.header.frame_id == "imu"
    for (_, msg), s in zip(by_topic(messages, "/baro/pressure"), reader.samples("baro")):
        assert msg.fluid_pressure == pytest.approx(float(s["pressure"]))
    for (_, msg), s in zip(by_topic(messages, "/alt/altitude"), reader.samples("alt")):
        assert msg.range == pytest.approx(float(s["altitude"]), nan_ok=True)
    # GPS at the default datum (0, 0, 0): lat = y / M(0), lon = x / a with M(0) = a (1 - e^2) = 6335439.327 m
    for (_, msg), s in zip(by_topic(messages, "/gps/fix"), reader.samples("gps")):
        x, y, z = product(s, "position")
        if bool(product(s, "fix")):
            assert msg.status.status == 0
            assert msg.latitude == pytest.approx(math.degrees(y / 6335439.327), abs=1e-9)
            assert msg.longitude == pytest.approx(math.degrees(x / 6378137.0), abs=1e-9)
            assert msg.altitude == pytest.approx(z)
        else:
            assert msg.status.status == -1 and math.isnan(msg.latitude)
    for (_, msg), s in zip(by_topic(messages, "/pose/pose"), reader.samples("pose")):
        m = product(s, "matrix").reshape(4, 4)
        p, q = msg.pose.position, msg.pose.orientation
        assert [p.x, p.y, p.z] == pytest.approx(m[:3, 3].tolist())
        assert np.allclose(quat_to_matrix(np.array([q.x, q.y, q.z, q.w])), m[:3, :3], atol=1e-9)
        assert msg.header.frame_id == "map"


def test_transforms(exported):
    _, messages = exported
    # vehicle on the transect: x = -1 + 0.5 t at t = 0, 0.5, 1.0 s; y = 0, z = -1.5
    tf = by_topic(messages, "/tf")
    for k, (_, msg) in enumerate(tf):
        (tr,) = msg.transforms
        assert (tr.header.frame_id, tr.child_frame_id) == ("map", "base_link")
        t = tr.transform.translation
        assert [t.x, t.y, t.z] == pytest.approx([-1.0 + 0.25 * k, 0.0, -1.5], abs=1e-9)
    (_, static), = by_topic(messages, "/tf_static")
    frames = {(t.header.frame_id, t.child_frame_id): t.transform for t in static.transforms}
    cam = frames[("base_link", "cam")]
    assert [cam.translation.x, cam.translation.y, cam.translation.z] == pytest.approx([0.3, 0.0, 0.1])
    # 10 deg pitch about y: q = (0, sin 5deg, 0, cos 5deg)
    assert [cam.rotation.y, cam.rotation.w] == pytest.approx([math.sin(math.radians(5)), math.cos(math.radians(5))])
    # optical frame: its z (forward) is the camera's x, its x (right) the camera's -y
    opt = frames[("cam", "cam_optical")].rotation
    r = quat_to_matrix(np.array([opt.x, opt.y, opt.z, opt.w]))
    assert np.allclose(r[:, 2], [1, 0, 0]) and np.allclose(r[:, 0], [0, -1, 0])
    son = frames[("fls", "fls_sonar")].rotation
    r = quat_to_matrix(np.array([son.x, son.y, son.z, son.w]))
    assert np.allclose(r[:, 0], [0, 0, 1]) and np.allclose(r[:, 2], [1, 0, 0])   # x up, z forward
    dvl = frames[("dvl", "dvl_dvl")].rotation
    assert np.allclose(quat_to_matrix(np.array([dvl.x, dvl.y, dvl.z, dvl.w])), np.diag([1, -1, -1]))


def test_geodetic_degree_lengths():
    # textbook WGS84 lengths of one degree: 110574 m of latitude and 111320 m of longitude at the equator,
    # 111132 m of latitude and 78847 m of longitude at 45 deg
    lat, lon, alt = local_to_geodetic(np.array([111319.49, 110574.27, 5.0]), (0.0, 0.0, 0.0))
    assert (lat, lon, alt) == pytest.approx((1.0, 1.0, 5.0), abs=1e-6)
    lat, lon, _ = local_to_geodetic(np.array([78846.81, 111131.75, 0.0]), (45.0, 10.0, 0.0))
    assert (lat, lon) == pytest.approx((46.0, 11.0), abs=1e-6)


def test_existing_target_refused_then_overwritten(dataset, tmp_path):
    out = tmp_path / "run.mcap"
    out.write_bytes(b"keep me")
    with pytest.raises(DatasetError, match="already exists.*--overwrite"):
        export_dataset(dataset, out, format="mcap")
    assert out.read_bytes() == b"keep me"
    assert main(["export", str(dataset), "--format", "mcap", "--out", str(out)]) == 2
    assert out.read_bytes() == b"keep me"
    assert main(["export", str(dataset), "--format", "mcap", "--out", str(out), "--overwrite"]) == 0
    # one message per sample and stream, + 3 more camera topics, 1 more profiling and 1 more multibeam topic per
    # sample, /tf, /tf_static
    assert len(read_mcap(out)) == sum(COUNTS.values()) + 3 * 3 + 3 + 3 + 3 + 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.mcap"]


def test_missing_stream_exports_the_rest(dataset, tmp_path):
    ds = tmp_path / "ds"
    shutil.copytree(dataset, ds)
    for folder in ds.glob("shard_*/fls"):
        shutil.rmtree(folder)
    with pytest.warns(ExportWarning, match="'fls'"):
        summary = export_dataset(ds, tmp_path / "bag", format="rosbag2")
    assert "fls" in summary.skipped and "/fls/image" not in summary.messages
    topics = {t for t, *_ in read_rosbag2(tmp_path / "bag")}
    assert topics == set(TOPIC_TYPES) - {"/fls/image"}


def test_stream_failing_part_way_keeps_earlier_samples(dataset, tmp_path):
    ds = tmp_path / "ds"
    shutil.copytree(dataset, ds)
    (ds / "shard_00001" / "sss" / "intensity_000002.npy").unlink()          # the third (last) ping
    with pytest.warns(ExportWarning, match="'sss'.*only its first 2 sample"):
        summary = export_dataset(ds, tmp_path / "run.mcap", format="mcap")
    assert summary.messages["/sss/raw_image"] == 2
    assert len(by_topic(read_mcap(tmp_path / "run.mcap"), "/sss/raw_image")) == 2


def test_failed_export_leaves_nothing(dataset, tmp_path, monkeypatch):
    # the writer fails part-way (a full disk): no half-written bag and no scratch folder stay behind
    import oceansim_py.export.bag as bag

    real = bag._dataset_messages

    def failing(*args):
        for k, message in enumerate(real(*args)):
            if k == 5:
                raise OSError(28, "No space left on device")
            yield message

    monkeypatch.setattr(bag, "_dataset_messages", failing)
    for fmt, name in (("rosbag2", "bag"), ("mcap", "run.mcap")):
        with pytest.raises(DatasetError, match="No space left on device.*nothing was written"):
            export_dataset(dataset, tmp_path / "out" / name, format=fmt)
        assert list((tmp_path / "out").iterdir()) == []


def test_corrupt_sample_is_skipped_with_a_warning(dataset, tmp_path):
    ds = tmp_path / "ds"
    shutil.copytree(dataset, ds)
    sorted(ds.glob("shard_00000/mbes/intensity_*.npy"))[-1].write_bytes(b"not an npy file")
    with pytest.warns(ExportWarning, match="'mbes'.*unreadable"):
        summary = export_dataset(ds, tmp_path / "run.mcap", format="mcap")
    assert "mbes" in summary.skipped


def test_unknown_format(dataset, tmp_path):
    with pytest.raises(DatasetError, match="rosbag2, mcap"):
        export_dataset(dataset, tmp_path / "x", format="bag1")


def test_product_accepts_both_table_layouts():
    cols = {"sample": 0, "position_0": 1.0, "position_2": 3.0, "position_1": 2.0, "position_10": 11.0}
    assert product(cols, "position").tolist() == [1.0, 2.0, 3.0, 11.0]
    assert product({"position": np.array([1.0, 2.0])}, "position").tolist() == [1.0, 2.0]
    assert product(cols, "velocity") is None


def test_export_with_tables_as_arrays(dataset, tmp_path, monkeypatch):
    """A reader that returns table streams as arrays (``position`` (3,)) exports the same messages."""
    from oceansim_py.dataset.loader import DatasetReader

    original = DatasetReader.sample

    def as_arrays(self, sensor, index):
        s = original(self, sensor, index)
        names = {k.rsplit("_", 1)[0] for k in s if k.rsplit("_", 1)[-1].isdigit()}
        for name in names:
            s[name] = product(s, name)
            for k in [k for k in s if k.startswith(name + "_") and k.rsplit("_", 1)[-1].isdigit()]:
                del s[k]
        return s

    export_dataset(dataset, tmp_path / "columns.mcap", format="mcap")
    monkeypatch.setattr(DatasetReader, "sample", as_arrays)
    export_dataset(dataset, tmp_path / "arrays.mcap", format="mcap")
    a, b = read_mcap(tmp_path / "columns.mcap"), read_mcap(tmp_path / "arrays.mcap")
    assert [(t, ns) for t, _, ns, _ in a] == [(t, ns) for t, _, ns, _ in b]
    assert [repr(m) for *_, m in a] == [repr(m) for *_, m in b]


def test_mcap_decodes_with_mcap_ros2(dataset, tmp_path):
    """A second, independent CDR decoder (mcap_ros2, the MCAP project's own) reads every message of the file."""
    decoder = pytest.importorskip("mcap_ros2.decoder")
    from mcap.reader import make_reader

    out = tmp_path / "run.mcap"
    export_dataset(dataset, out, format="mcap")
    reader = load_dataset(dataset)
    decoded: dict[str, list] = {}
    with open(out, "rb") as fh:
        for _, channel, _, msg in make_reader(fh, decoder_factories=[decoder.DecoderFactory()]).iter_decoded_messages(
                log_time_order=True):
            decoded.setdefault(channel.topic, []).append(msg)
    assert set(decoded) == set(TOPIC_TYPES)
    for msg, s in zip(decoded["/fls/image"], reader.samples("fls")):
        assert (msg.header.frame_id, msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9) == ("fls_sonar",
                                                                                               s["time"])
        assert np.array_equal(np.frombuffer(bytes(msg.image.data), "<f4").reshape(s["intensity"].shape),
                              s["intensity"])
    for msg, s in zip(decoded["/dvl/dvl"], reader.samples("dvl")):
        assert [msg.velocity.x, msg.velocity.y, msg.velocity.z] == pytest.approx(
            (product(s, "velocity") * [1, -1, -1]).tolist())
    for msg, s in zip(decoded["/cam/image"], reader.samples("cam")):
        assert bytes(msg.data) == s["rgb_png"].tobytes()


def test_camera_info_carries_the_lens_distortion():
    from oceansim_py.export.marine_msgs import ros_typestore
    from oceansim_py.export.ros_messages import RosMessageFactory

    factory = RosMessageFactory(ros_typestore())
    meta = {"intrinsics": {"fx": 20.0, "fy": 20.0, "cx": 15.5, "cy": 11.5, "width": 32, "height": 24},
            "distortion_coefficients": {"model": "OpenCV (k1, k2, p1, p2, k3)",
                                        "values": [-0.2, 0.05, 0.001, -0.002, 0.01]}}
    sample = {"time": 0.0, "sample": 0, "depth": np.zeros((24, 32), np.float32)}
    info = dict((topic, msg) for topic, _, msg in factory.camera("cam", meta, sample))["/cam/camera_info"]
    assert info.distortion_model == "plumb_bob"
    assert np.allclose(info.d, [-0.2, 0.05, 0.001, -0.002, 0.01])
    del meta["distortion_coefficients"]
    info = dict((topic, msg) for topic, _, msg in factory.camera("cam", meta, sample))["/cam/camera_info"]
    assert np.allclose(info.d, 0.0)


def test_navigation_covariances_from_the_configured_noise(exported, dataset):
    # The rig's presets: IMU consumer_mems, barometer bar30 (20 Pa), GPS standalone (2.1 m horizontal, 3.5 m
    # vertical per axis), DVL dvl_30deg. Hand values: gyro variance (sigma deg/s * pi / 180)^2 on the diagonal,
    # accel sigma^2; pressure 20^2 = 400 Pa^2; fix diag(2.1^2, 2.1^2, 3.5^2) = (4.41, 4.41, 12.25) m^2, type
    # DIAGONAL_KNOWN (2); DVL: four beams 30 deg off the vertical, each sigma_b: the least-squares velocity has
    # variance sigma_b^2 (D^T D)^-1 = sigma_b^2 diag(1 / (4 sin^2 30 / 2), same, 1 / (4 cos^2 30)) for a "+"/"x"
    # Janus layout (D^T D = diag(2 sin^2, 2 sin^2, 4 cos^2)): sigma_b^2 (2, 2, 1/3); its beams' range and velocity
    # covariances sigma^2.
    _, messages = exported
    reader = load_dataset(dataset)
    cfg = {name: reader.sensors[name]["config"] for name in ("imu", "baro", "gps", "dvl")}
    for _, msg in by_topic(messages, "/imu/data"):
        g = math.radians(cfg["imu"]["gyro_noise_sigma"]) ** 2
        a = cfg["imu"]["accel_noise_sigma"] ** 2
        assert np.allclose(msg.angular_velocity_covariance, [g, 0, 0, 0, g, 0, 0, 0, g], rtol=1e-12)
        assert np.allclose(msg.linear_acceleration_covariance, [a, 0, 0, 0, a, 0, 0, 0, a], rtol=1e-12)
        assert msg.orientation_covariance[0] == -1
    for _, msg in by_topic(messages, "/baro/pressure"):
        assert msg.variance == pytest.approx(400.0)
    fixes = 0
    for (_, msg), s in zip(by_topic(messages, "/gps/fix"), reader.samples("gps")):
        if bool(product(s, "fix")):
            fixes += 1
            assert np.allclose(msg.position_covariance, [4.41, 0, 0, 0, 4.41, 0, 0, 0, 12.25])
            assert msg.position_covariance_type == 2
        else:
            assert msg.position_covariance_type == 0
    assert fixes > 0
    var = cfg["dvl"]["velocity_sigma"] ** 2
    solved = 0
    for (_, msg), s in zip(by_topic(messages, "/dvl/dvl"), reader.samples("dvl")):
        valid = np.isfinite(product(s, "beam_range"))
        assert np.allclose(msg.beam_velocity_covar, np.where(valid, var, -1.0))
        assert np.allclose(msg.range_covar, np.where(valid, cfg["dvl"]["range_sigma"] ** 2, -1.0))
        if valid.all():
            solved += 1
            cov = np.asarray(msg.velocity_covar).reshape(3, 3)
            assert np.allclose(cov, np.diag([2.0, 2.0, 1.0 / 3.0]) * var, atol=1e-12 * var + 1e-15)
        elif valid.sum() < 3:
            assert np.all(np.asarray(msg.velocity_covar) == -1.0)
    assert solved > 0
