"""Hand-computed checks of the rig clock, the keyed-trajectory interpolation and derivatives, the mount order, and
the sample times and poses a generated dataset holds (audit T: every expected number below is worked out in the
comment next to it, not taken from the code)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import generate_from_rig
from oceansim_py.dataset.rig import load_rig
from oceansim_py.dataset.shards import plan_shards, sample_range
from oceansim_py.dataset.worker import sample_times
from oceansim_py.poses import compose_poses, pose_from_euler, quat_to_matrix
from oceansim_py.trajectory import Trajectory


def test_keyed_midpoint_is_linear_in_position_and_slerp_in_rotation() -> None:
    # keys: t=0 at the origin, yaw 0; t=2 at (2, 4, -6), yaw 90 deg. At t=0.5 (u = 1/4): position u * (2, 4, -6)
    # = (0.5, 1, -1.5); slerp about z turns u * 90 = 22.5 deg, q = (0, 0, sin 11.25, cos 11.25)
    # = (0, 0, 0.195090322, 0.980785280).
    tr = Trajectory.from_arrays([0.0, 2.0], [pose_from_euler(0, 0, 0), pose_from_euler(2, 4, -6, 0, 0, 90)])
    p = tr.at([0.5])[0]
    np.testing.assert_allclose(p[:3], [0.5, 1.0, -1.5], atol=1e-12)
    np.testing.assert_allclose(p[3:], [0.0, 0.0, 0.19509032201612825, 0.9807852804032304], atol=1e-12)
    # yaw 170 -> yaw -170 (given as -q, the other hemisphere): the short way is through yaw 180, q = (0, 0, +-1, 0),
    # not the long way through yaw 0
    a, b = pose_from_euler(0, 0, 0, 0, 0, 170), pose_from_euler(0, 0, 0, 0, 0, -170)
    b[3:] *= -1.0
    q = Trajectory.from_arrays([0.0, 1.0], [a, b]).at([0.5])[0, 3:]
    np.testing.assert_allclose(np.abs(q), [0.0, 0.0, 1.0, 0.0], atol=1e-12)


def test_circle_keys_give_the_finite_difference_numbers() -> None:
    # A circle of r = 5 m at omega = 0.2 rad/s (speed 1 m/s), nose along the track (yaw = omega t + 90 deg), keyed
    # every h = 0.1 s. At an interior key np.gradient is the central difference: |v| = r omega sin(omega h) /
    # (omega h) = sin(0.02) / 0.02 = 0.999933335 along the nose (body +x); the second gradient spans 2h:
    # |a| = r omega^2 (sin(omega h) / (omega h))^2 = 0.2 * 0.999866673 = 0.199973335 towards the centre, i.e. to
    # port (body +y) for a counter-clockwise turn. The slerp rate is exact: omega = 0.2 rad/s about z.
    r, w, h = 5.0, 0.2, 0.1
    t = np.arange(101) * h
    yaw = w * t + math.pi / 2
    poses = np.zeros((t.size, 7))
    poses[:, 0], poses[:, 1] = r * np.cos(w * t), r * np.sin(w * t)
    poses[:, 5], poses[:, 6] = np.sin(yaw / 2), np.cos(yaw / 2)
    tr = Trajectory.from_arrays(t, poses)
    at = np.array([3.0, 5.0])
    sinc = math.sin(w * h) / (w * h)
    np.testing.assert_allclose(tr.velocity(at, "body"), [[sinc, 0, 0]] * 2, atol=1e-12)
    np.testing.assert_allclose(tr.acceleration(at, "body"), [[0, r * w * w * sinc**2, 0]] * 2, atol=1e-12)
    np.testing.assert_allclose(tr.angular_velocity(at), [[0, 0, w]] * 2, atol=1e-12)
    # the analytic orbit (same circle, level, nose along the track): exactly 1 m/s forward, 0.2 m/s^2 to port
    o = Trajectory.orbit((0, 0, 0), r, speed=1.0, look_at_center=False)
    np.testing.assert_allclose(o.velocity([1.0], "body"), [[1.0, 0, 0]], atol=1e-12)
    np.testing.assert_allclose(o.acceleration([1.0], "body"), [[0, 0.2, 0]], atol=1e-12)


def test_mount_is_applied_in_the_body_frame_then_rotated() -> None:
    # vehicle at (1, 2, 3) with yaw 90 (body +x = world +y); mount (1, 0, 0.5) with pitch 30 (nose down).
    # Lever arm R_vehicle (1, 0, 0.5) = (0, 1, 0.5): sensor at (1, 3, 3.5). Sensor forward = Rz(90) Ry(30) e_x
    # = Rz(90) (cos 30, 0, -sin 30) = (0, 0.866025, -0.5).
    veh, mount = pose_from_euler(1, 2, 3, 0, 0, 90), pose_from_euler(1, 0, 0.5, 0, 30, 0)
    for sensor in (compose_poses(veh[None], mount[None])[0],
                   Trajectory.from_arrays([0.0, 1.0], [veh, veh]).mounted(mount).poses[0]):
        np.testing.assert_allclose(sensor[:3], [1.0, 3.0, 3.5], atol=1e-12)
        np.testing.assert_allclose(quat_to_matrix(sensor[3:])[:, 0], [0.0, math.sqrt(3) / 2, -0.5], atol=1e-12)


def test_sensor_sample_times_and_shards_at_10_5_3_hz() -> None:
    # 20 ticks at 10 Hz (2 s), shards of 7 ticks: [0, 0.7), [0.7, 1.4), [1.4, 2.0) s. 10 Hz: 7, 7, 6 samples;
    # 5 Hz (0, .2, ...): 0-0.6 -> 4, 0.8-1.2 -> 3, 1.4-1.8 -> 3; 3 Hz (k/3): 0, 1/3, 2/3 | 1, 4/3 | 5/3.
    plans = plan_shards(20, 7, 10.0, {"a": 10.0, "b": 5.0, "c": 3.0})
    assert [p.samples for p in plans] == [{"a": (0, 7), "b": (0, 4), "c": (0, 3)},
                                          {"a": (7, 14), "b": (4, 7), "c": (3, 5)},
                                          {"a": (14, 20), "b": (7, 10), "c": (5, 6)}]
    # no drift over a long run: 1e5 ticks at 30 Hz; a 10 Hz sensor's last sample is 33333 (t = 3333.3 s) and a
    # 7 Hz one has ceil(1e5 * 7 / 30) = ceil(23333.33) = 23334 samples; times are k / rate, not a running sum.
    assert sample_range(0, 100_000, 30.0, 30.0) == (0, 100_000)
    assert sample_range(99_999, 100_000, 30.0, 10.0) == (33_333, 33_334)
    assert sample_range(0, 100_000, 30.0, 7.0) == (0, 23_334)

    class _Rig:
        start_time = 5.0

    t = sample_times(_Rig(), 30.0, 99_998, 100_000)   # type: ignore[arg-type]
    assert t.tolist() == [5.0 + 99_998 / 30.0, 5.0 + 99_999 / 30.0]


def test_generated_dataset_times_frames_and_mounted_poses(tmp_path: Path) -> None:
    # transect from (-1, 0, -1.5) along +x at 1 m/s, duration 2 s; the highest rate (10 Hz) sets the tick.
    rig = {"name": "clock", "scene": "tank", "seed": 1, "duration": 2.0, "shard_size": 7, "batch_size": 4,
           "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [2.0, 0.0, -1.5], "speed": 1.0},
           "sensors": [
               {"name": "p10", "type": "pose", "rate_hz": 10.0, "mount": [0.5, 0.0, -0.2, 0, 30, 90],
                "config": {"noise": False}, "products": ["matrix"]},
               {"name": "p5", "type": "pose", "rate_hz": 5.0, "config": {"noise": False}, "products": ["matrix"]},
               {"name": "p3", "type": "pose", "rate_hz": 3.0, "config": {"noise": False}, "products": ["matrix"]}]}
    ds = generate_from_rig(tmp_path, rig)
    assert len(ds) == 20
    assert {s: ds.num_samples(s) for s in ("p10", "p5", "p3")} == {"p10": 20, "p5": 10, "p3": 6}
    for name, rate in (("p10", 10.0), ("p5", 5.0), ("p3", 3.0)):
        assert [s["time"] for s in ds.samples(name)] == [k / rate for k in range(ds.num_samples(name))]
    # p10 sample 7 (t = 0.7): vehicle at (-0.3, 0, -1.5), yaw 0; mount (0.5, 0, -0.2) -> (0.2, 0, -1.7);
    # rotation Rz(90) Ry(30) = [[0, -1, 0], [cos 30, 0, sin 30], [-sin 30, 0, cos 30]].
    c, s = math.sqrt(3) / 2, 0.5
    np.testing.assert_allclose(ds.sample("p10", 7)["matrix"],
                               [[0, -1, 0, 0.2], [c, 0, s, 0.0], [-s, 0, c, -1.7], [0, 0, 0, 1]], atol=1e-9)
    # p3 sample 5 (t = 5/3 s): x = -1 + 5/3 = 2/3, level
    np.testing.assert_allclose(ds.sample("p3", 5)["matrix"][:3, 3], [2.0 / 3.0, 0.0, -1.5], atol=1e-12)
    # frame 7 (t = 0.7 s) shows the latest sample of each sensor at or before it: p10 #7, p5 #3 (0.6 s),
    # p3 #2 (2/3 s)
    f = ds.frame(7)
    assert f["time"] == 0.7
    assert (f["p10"]["sample"], f["p5"]["sample"], f["p3"]["sample"]) == (7, 3, 2)


def test_lawnmower_turn_and_uneven_keys_by_hand() -> None:
    # Bounds 10 x 10 m, spacing 5, 1 m/s: legs y = 0, 5, 10 (3 x 10 m) joined by two half-turns of r = 2.5 m
    # (pi r = 7.854 m each): 45.708 s. At t = 12 s the vehicle is 2 m into the first (counter-clockwise) turn
    # about (10, 2.5): angle 2 / 2.5 = 0.8 rad from -90 deg, at (10 + 2.5 sin 0.8, 2.5 - 2.5 cos 0.8, -10 + 3)
    # = (11.79339, 0.75823, -7), yaw 0.8 rad, yaw rate 1 / 2.5 = 0.4 rad/s, 1^2 / 2.5 = 0.4 m/s^2 to port.
    lm = Trajectory.lawnmower(bounds=((0, 0, -10), (10, 10, 0)), altitude=3, spacing=5, speed=1.0)
    assert math.isclose(lm.end_time, 30 + 2 * math.pi * 2.5, rel_tol=1e-12)
    p = lm.at([12.0])[0]
    np.testing.assert_allclose(p[:3], [10 + 2.5 * math.sin(0.8), 2.5 - 2.5 * math.cos(0.8), -7.0], atol=1e-12)
    np.testing.assert_allclose(p[3:], [0, 0, math.sin(0.4), math.cos(0.4)], atol=1e-12)
    np.testing.assert_allclose(lm.angular_velocity([12.0]), [[0, 0, 0.4]], atol=1e-12)
    np.testing.assert_allclose(lm.acceleration([12.0], "body"), [[0, 0.4, 0]], atol=1e-12)
    # Uneven keys t = 0, 1, 3 with x = t^2 and yaw 0, 10, 40 deg: at t = 1 the second-order gradient is exact
    # for a quadratic, dx/dt = 2 m/s; the key's yaw rate is the spacing-weighted mean of the segments' slerp
    # rates (10 and 15 deg/s): (2 * 10 + 1 * 15) / 3 = 11.667 deg/s (also the quadratic's slope).
    keys = [pose_from_euler(t * t, 0, 0, 0, 0, yaw) for t, yaw in ((0, 0), (1, 10), (3, 40))]
    tr = Trajectory.from_arrays([0.0, 1.0, 3.0], keys)
    np.testing.assert_allclose(tr.velocity([1.0]), [[2.0, 0, 0]], atol=1e-12)
    np.testing.assert_allclose(tr.angular_velocity([1.0]), [[0, 0, math.radians(35.0 / 3.0)]], atol=1e-12)


@pytest.mark.parametrize("duration, tick, frames", [(2.5, 1.0, 3), (3.5, 1.0, 4), (2.0, 10.0, 20), (0.05, 10.0, 1),
                                                    (1.0, 3.0, 3), (0.7, 3.0, 3)])
def test_duration_gives_the_ticks_that_start_within_it(tmp_path, duration, tick, frames):
    # ticks at t = k / tick_rate; those with t < duration: ceil(duration x rate) -- 2.5 s at 1 Hz: t = 0, 1, 2 (3
    # frames; a round half to even gave 2), 3.5 s: 4; 2 s at 10 Hz: exactly 20; 0.7 s at 3 Hz: 0, 1/3, 2/3 (3)
    rig = {"name": "d", "scene": "tank", "duration": duration, "tick_rate_hz": tick,
           "trajectory": {"type": "transect", "start": [0.0, 0.0, -1.5], "end": [5.0, 0.0, -1.5], "speed": 0.5},
           "sensors": [{"name": "pose", "type": "pose", "rate_hz": tick, "products": ["matrix"]}]}
    path = tmp_path / "rig.yaml"
    path.write_text(yaml.safe_dump(rig))
    assert load_rig(path).frames == frames
