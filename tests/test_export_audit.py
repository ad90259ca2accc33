"""Exported ROS messages against geometry known by hand: an imaging sonar's echo of a box 15 deg to starboard
lands, after a CDR round trip, in a beam whose ProjectedSonarImage direction points 15 deg to starboard once
rotated by the exported sonar -> FLU transform, at the box's range; RawSonarImage and NavSatFix fields of
known values."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rosbags")

from oceansim_py import ImagingSonar, ImagingSonarConfig  # noqa: E402
from oceansim_py.export.marine_msgs import msgtype, ros_typestore  # noqa: E402
from oceansim_py.export.ros_messages import RosMessageFactory, static_transforms  # noqa: E402
from oceansim_py.poses import pose_from_euler, quat_to_matrix  # noqa: E402

from conftest import make_scene, quad  # noqa: E402


@pytest.fixture(scope="module")
def factory() -> RosMessageFactory:
    return RosMessageFactory(ros_typestore(), gps_datum=(45.0, 10.0, 0.0))


def round_trip(factory: RosMessageFactory, typename: str, msg):
    """The message after CDR serialisation and back, as a reader sees it."""
    ts = factory.ts
    return ts.deserialize_cdr(ts.serialize_cdr(msg, typename), typename)


def test_projected_sonar_image_of_a_starboard_target(factory):
    # A 0.6 m plate facing the sonar at bearing 15 deg to starboard, 6 m away: centre (6 cos 15, -6 sin 15, 0)
    # = (5.796, -1.553, 0) in FLU (y port). 12 beams over 60 deg (5 deg each): beam centres -27.5 .. 27.5 deg,
    # so the echo is in beam 8 (centre 12.5 deg) or 9 (17.5 deg), both right of centre; range 6 m +- 0.3 m.
    b = math.radians(15.0)
    centre = [6.0 * math.cos(b), -6.0 * math.sin(b), 0.0]
    scene = make_scene(("plate", quad(centre, [-math.cos(b), math.sin(b), 0.0], 0.6), 0.5))
    cfg = ImagingSonarConfig(horizontal_fov=60.0, vertical_fov=10.0, min_range=1.0, max_range=11.0, n_beams=12,
                             range_bins=100, rays_per_beam=8, elevation_rays=16, absorption=0.0,
                             normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
                             additive_range_scaled=False)
    out = ImagingSonar(cfg, device="cpu").render(scene, pose_from_euler(0.0, 0.0, 0.0)).numpy()
    image = np.asarray(out["clean_intensity"][0], dtype=np.float32)
    meta = {"type": "imaging_sonar", "config": cfg.to_dict(), "bearings_rad": cfg.bearings().tolist(),
            "ranges_m": cfg.ranges().tolist(), "mount": [0, 0, 0, 0, 0, 0]}
    (topic, typename, msg), = factory.polar_sonar("fls", meta, {"sample": 0, "time": 12.25, "intensity": image})
    msg = round_trip(factory, typename, msg)
    assert topic == "/fls/image" and msg.header.frame_id == "fls_sonar"
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (12, 250_000_000)
    assert msg.image.dtype == 8 and msg.image.beam_count == 12 and not msg.image.is_bigendian
    data = np.frombuffer(bytes(msg.image.data), dtype="<f4").reshape(len(msg.ranges), msg.image.beam_count)
    assert np.array_equal(data, image)
    # range-bin centres: 1 + (k + 1/2) 0.1 m
    assert msg.ranges[0] == pytest.approx(1.05) and msg.ranges[-1] == pytest.approx(10.95)
    k, beam = np.unravel_index(np.argmax(data), data.shape)
    assert beam in (8, 9)
    assert abs(msg.ranges[k] - 6.0) < 0.3
    d = msg.beam_directions[beam]
    # sonar frame (x up, y starboard, z forward) -> FLU by the exported /tf_static rotation
    (_, sub), = [(t.header.frame_id, t) for t in static_transforms(factory, {"fls": meta}, 0.0, {"fls": np.eye(4)})
                 if t.child_frame_id == "fls_sonar"]
    q = sub.transform.rotation
    flu = quat_to_matrix(np.array([q.x, q.y, q.z, q.w])) @ np.array([d.x, d.y, d.z])
    bearing = math.degrees(math.atan2(-flu[1], flu[0]))       # + starboard
    assert bearing == pytest.approx(12.5 if beam == 8 else 17.5, abs=1e-4)
    assert flu[2] == pytest.approx(0.0, abs=1e-7)
    # rx beam width: 60 deg / 12 beams; tx: the 10 deg vertical fan
    assert msg.ping_info.rx_beamwidths[beam] == pytest.approx(math.radians(5.0))
    assert msg.ping_info.tx_beamwidths[beam] == pytest.approx(math.radians(10.0))


def test_navsatfix_at_a_45_degree_datum(factory):
    # 1 km east and 2 km north of (45 N, 10 E, alt 0), 3 m up. WGS84 at 45 deg: M = 6367381.8 m, N = 6388838.3 m
    # -> dlat = 2000 / M = 0.0179965 deg, dlon = 1000 / (N cos 45) = 0.0126835 deg.
    sample = {"sample": 0, "time": 1.5, "position": np.array([1000.0, 2000.0, 3.0]), "fix": np.int8(1)}
    (_, typename, msg), = factory.gps("gps", {"type": "gps"}, sample)
    msg = round_trip(factory, typename, msg)
    assert msg.latitude == pytest.approx(45.0 + math.degrees(2000.0 / 6367381.8), abs=1e-8)
    assert msg.longitude == pytest.approx(10.0 + math.degrees(1000.0 / (6388838.3 * math.cos(math.radians(45)))),
                                          abs=1e-8)
    assert msg.altitude == pytest.approx(3.0)
    assert msg.status.status == 0 and msg.position_covariance_type == 0
    no_fix = {**sample, "fix": np.int8(0)}
    (_, _, lost), = factory.gps("gps", {"type": "gps"}, no_fix)
    assert lost.status.status == -1 and math.isnan(lost.latitude)


def test_msis_raw_image_fields(factory):
    # 0.5 .. 20.5 m in 200 bins: dr = 0.1 m; c = 1500 m/s -> sample_rate c / (2 dr) = 7500 Hz; head at 30 deg
    cfg = {"frequency": 700_000.0, "sound_speed": 1500.0, "horizontal_beamwidth": 3.0, "vertical_beamwidth": 35.0,
           "min_range": 0.5, "max_range": 20.5}
    ranges = 0.5 + (np.arange(200) + 0.5) * 0.1
    series = np.linspace(0.0, 1.0, 200, dtype=np.float32)
    meta = {"type": "msis", "config": cfg, "ranges_m": ranges.tolist()}
    (_, typename, msg), = factory.msis("head", meta, {"sample": 3, "time": 0.75, "intensity": series,
                                                      "head_angle_deg": np.float32(30.0)})
    msg = round_trip(factory, typename, msg)
    assert msg.sample_rate == pytest.approx(7500.0) and msg.samples_per_beam == 200 and msg.sample0 == 5
    assert msg.rx_angles[0] == pytest.approx(math.radians(30.0))
    assert msg.ping_info.frequency == pytest.approx(700_000.0)
    assert np.array_equal(np.frombuffer(bytes(msg.image.data), dtype="<f4"), series)


@pytest.mark.parametrize("datum", [(95.0, 0.0, 0.0), (90.0, 0.0, 0.0), (10.0, 200.0, 0.0),
                                   (float("nan"), 0.0, 0.0), (1.0, 2.0)])
def test_a_gps_datum_off_the_globe_is_a_config_error_before_anything_is_written(tmp_path, datum, capsys):
    # at latitude 90 the longitude scale 1 / (N cos 90) is infinite; 95 deg is no latitude at all
    from oceansim_py import ConfigError
    from oceansim_py.cli import main
    from oceansim_py.export import export_dataset

    out = tmp_path / "bag"
    with pytest.raises(ConfigError, match="gps_datum"):
        export_dataset(tmp_path / "ds", out, gps_datum=datum)
    assert not out.exists()
    if len(datum) == 3:
        args = ["export", str(tmp_path / "ds"), "--out", str(out), "--gps-datum", *map(str, datum)]
        assert main(args) == 2
        assert "gps_datum" in capsys.readouterr().err


def test_device_imaging_sonar_ping_info_carries_carrier_and_steered_beam_widths(factory):
    # Oculus M750d (device chain): 750 kHz, c 1500 m/s, 512 beams over 130 deg, 1 deg broadside receive beam from
    # one flat array. The most-port beam sits at -65 + 130 / 1024 = -64.873 deg: half-power points at
    # sin b +- sin 0.5 deg = -0.896643, -0.914096 -> arcsin difference 2.3574 deg (~ 1 deg / cos 64.873 deg = 2.355);
    # the beam next to broadside (0.127 deg) is 1.000 deg wide. Exported before as 0 Hz, 0 m/s and 130 / 512 =
    # 0.254 deg for every beam.
    from oceansim_py.export.ros_messages import polar_ping_info

    cfg = ImagingSonarConfig.preset("oculus_m750d_750khz")
    assert (cfg.model, cfg.beam_steering, cfg.beam_width, cfg.n_beams) == ("device", "flat_array", 1.0, 512)
    bearings = cfg.bearings().astype(np.float64)
    freq, c, rx, tx = polar_ping_info("imaging_sonar", cfg.to_dict(), bearings)
    assert (freq, c) == (750e3, cfg.sound_speed)
    assert math.degrees(bearings[0]) == pytest.approx(-64.873, abs=1e-3)
    assert math.degrees(rx[0]) == pytest.approx(2.3574, abs=1e-4)
    assert math.degrees(rx[256]) == pytest.approx(1.000, abs=1e-3)
    assert rx[0] == pytest.approx(rx[-1])                      # symmetric fan
    assert tx == pytest.approx(math.radians(cfg.vertical_fov))


def _pose_dataset(folder, names):
    """A 2-frame tank dataset with one pose sensor per name."""
    from oceansim_py.dataset.generate import generate
    from oceansim_py.dataset.rig import load_rig
    from test_dataset import write_rig

    rig = {"name": "names", "scene": "tank", "seed": 1, "frames": 2, "tick_rate_hz": 2.0, "shard_size": 2,
           "batch_size": 2,
           "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
           "sensors": [{"name": n, "type": "pose", "rate_hz": 2.0} for n in names]}
    out = folder / "ds"
    generate(load_rig(write_rig(folder, rig)), out, progress=False)
    return out


def test_sensor_names_become_valid_ros2_topics(tmp_path):
    # Rig names may hold '-' and start with a digit; a ROS 2 topic token may not ([A-Za-z_][A-Za-z0-9_]*), so
    # 'front-cam' -> /front_cam/pose and '2nd' -> /_2nd/pose (they were written as /front-cam/pose, /2nd/pose).
    import re

    from mcap.reader import make_reader

    from oceansim_py.export import export_dataset

    out = tmp_path / "run.mcap"
    summary = export_dataset(_pose_dataset(tmp_path, ["front-cam", "2nd"]), out, format="mcap")
    assert {"/front_cam/pose", "/_2nd/pose"} <= set(summary.messages)
    token = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
    with open(out, "rb") as fh:
        topics = {c.topic for c in make_reader(fh).get_summary().channels.values()}
    assert "/front_cam/pose" in topics
    assert all(token.match(t) for topic in topics for t in topic.split("/")[1:])


def test_sensor_names_sharing_a_ros_topic_are_refused(tmp_path):
    from oceansim_py import DatasetError
    from oceansim_py.export import export_dataset

    out = tmp_path / "bag"
    with pytest.raises(DatasetError, match=r"sensors 'a-b' and 'a_b' would share the ROS topic prefix '/a_b'"):
        export_dataset(_pose_dataset(tmp_path, ["a-b", "a_b"]), out)
    assert not out.exists()


def test_sidescan_raw_image_of_a_device_chain_carries_its_carrier_and_sound_speed(factory):
    # EdgeTech 4125 (device chain) at c = 1480 m/s: 4096 bins over 0.5 .. 75 m, dr = 74.5 / 4096 = 0.0181885 m,
    # so sample_rate = 1480 / (2 dr) = 40685.2 Hz and sample0 = round(0.5 / dr) = round(27.49) = 27; carrier
    # 900 kHz. (Exported before as 0 Hz and c = 1500 m/s, 41239.5 Hz.) A peer side-scan keeps the nominal 1500.
    from oceansim_py.sensors.sidescan import SidescanSonarConfig

    for cfg, freq, c in ((SidescanSonarConfig.preset("edgetech_4125_900khz", sound_speed=1480.0), 900e3, 1480.0),
                         (SidescanSonarConfig.preset("sidescan_900khz"), 0.0, 1500.0)):
        series = np.zeros((cfg.range_bins, 2), dtype=np.float32)
        meta = {"type": "sidescan", "config": cfg.to_dict(), "ranges_m": cfg.ranges().tolist()}
        (_, typename, msg), = factory.sidescan("sss", meta, {"sample": 0, "time": 2.0, "intensity": series})
        msg = round_trip(factory, typename, msg)
        dr = (cfg.max_range - cfg.min_range) / cfg.range_bins
        assert msg.ping_info.frequency == pytest.approx(freq)
        assert msg.ping_info.sound_speed == pytest.approx(c)
        assert msg.sample_rate == pytest.approx(c / (2.0 * dr), rel=1e-5)
        assert msg.sample0 == round(cfg.min_range / dr)
        assert list(msg.rx_angles) == pytest.approx([-math.pi / 2, math.pi / 2])
    assert 1480.0 / (2.0 * 74.5 / 4096) == pytest.approx(40685.2, abs=0.1)
