"""Outside audit (second round) of the DVL, IMU, camera and navigation sensors on a moving, rotating vehicle with
sensors mounted off the body origin and rotated: every output compared with a number worked out by hand in the
test's comments (lever arms, centripetal and tangential terms, mount rotations, a rig's sample clocks)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from conftest import generate_from_rig, make_scene, quad
from oceansim_py.poses import compose_poses, pose_from_euler, quat_to_matrix
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig
from oceansim_py.sensors.dvl import DVL, DVLConfig
from oceansim_py.sensors.imu import IMU, IMUConfig
from oceansim_py.trajectory import Trajectory, quat_from_yaw_pitch

G = 9.80665


def floor(z: float = -15.0) -> object:
    return make_scene(("floor", quad([0.0, 0.0, z], [0.0, 0.0, 1.0], 400.0), 0.5))


def test_a_sample_of_a_keyed_path_moves_at_the_path_velocity() -> None:
    # Keys every 1 s along +x at 0.5 m/s (a waypoint path). One sample of it (traj[3], or the path interpolated at
    # 2.5 s) is still moving at 0.5 m/s: a DVL rendered there reads (0.5, 0, 0). Before the fix such a one-sample
    # Trajectory had its own single key, "at rest", and the DVL read 0.
    t = np.arange(0.0, 10.001, 1.0)
    poses = np.tile([0.0, 0.0, -5.0, 0.0, 0.0, 0.0, 1.0], (t.size, 1))
    poses[:, 0] = 0.5 * t
    path = Trajectory(t, poses)
    dvl = DVL(DVLConfig(noise=False), device="cpu")
    for sample in (path[3], path.interpolate([2.5]), path[4:6]):
        np.testing.assert_allclose(dvl.render(floor(), sample).numpy()["velocity"], [[0.5, 0.0, 0.0]] * len(sample),
                                   atol=1e-6)
    # A circle of radius 5 m at 1 m/s keyed every 0.1 s: centripetal w^2 R = 0.2 m/s^2 towards the centre, nose
    # along the track (the centre to port, body +y). An IMU measuring two keys of it (a slice) reads
    # (0, 0.2, g) (to the keys' second-order differences: 0.2 cos-chord ~ 1e-4 relative), not the (0, 0, g)
    # of a two-key path differenced on its own; mounted 1 m forward it also reads the centripetal term of the
    # lever, w^2 * 1 m = 0.04 backwards: (-0.04, 0.2, g).
    k = np.arange(0.0, 2 * math.pi * 5.0 + 1e-9, 0.1)
    th = k / 5.0
    circle = Trajectory(k, np.column_stack([5.0 * np.cos(th), 5.0 * np.sin(th), np.full(k.size, -5.0),
                                            quat_from_yaw_pitch(th + math.pi / 2)]))
    imu = IMU(IMUConfig(noise=False))
    part = circle[20:22]
    np.testing.assert_allclose(imu.measure(part, times=part.times).accel, [[0.0, 0.2, G]] * 2, atol=2e-4)
    lever = part.mounted(pose_from_euler(1.0, 0.0, 0.0))
    np.testing.assert_allclose(imu.measure(lever, times=lever.times).accel, [[-0.04, 0.2, G]] * 2, atol=2e-4)
    np.testing.assert_allclose(imu.measure(lever, times=lever.times).gyro, [[0.0, 0.0, 0.2]] * 2, atol=1e-9)


def test_dvl_at_a_lever_arm_rotated_45_deg_on_a_turning_vehicle() -> None:
    # Vehicle on a counter-clockwise orbit of radius 10 m at 1 m/s around (0, 0, -5), level, nose along the track:
    # body velocity (1, 0, 0), yaw rate w = 0.1 rad/s. DVL at r = (1, 0.5, -0.3) in the body, yawed 45 deg (the
    # common mounting). Head velocity = v + w x r = (1, 0, 0) + 0.1 (-0.5, 1, 0) = (0.95, 0.1, 0) in the body;
    # in the DVL frame (x = (1, 1)/sqrt2, y = (-1, 1)/sqrt2): ((0.95 + 0.1)/sqrt2, (0.1 - 0.95)/sqrt2, 0)
    # = (0.742462, -0.601041, 0). X beams at 30 deg, azimuths 45 + k 90 in the DVL frame: beam velocities
    # d_k . v = sin30 (v_x cos phi + v_y sin phi): (0.05, -0.475, -0.05, 0.475). Head at z = -5.3 over a floor
    # at -15: altitude 9.7 m, slant ranges 9.7 / cos30 = 11.200596 m.
    orbit = Trajectory.orbit((0.0, 0.0, -5.0), radius=10.0, speed=1.0, look_at_center=False, rate_hz=10.0)
    head = orbit.mounted(pose_from_euler(1.0, 0.5, -0.3, 0.0, 0.0, 45.0))
    r = DVL(DVLConfig(beam_angle=30.0, noise=False), device="cpu").render(
        floor(), head.interpolate([0.0, 7.3])).numpy()
    np.testing.assert_allclose(r["velocity"], [[0.742462, -0.601041, 0.0]] * 2, atol=2e-6)
    np.testing.assert_allclose(r["beam_velocity"], [[0.05, -0.475, -0.05, 0.475]] * 2, atol=2e-6)
    np.testing.assert_allclose(r["beam_range"], 9.7 / math.cos(math.radians(30.0)), rtol=2e-6)
    np.testing.assert_allclose(r["altitude"], 9.7, rtol=2e-6)


def test_imu_pitched_down_at_a_lever_arm_in_a_lawnmower_turn() -> None:
    # First turn of a lawnmower (legs along +x, spacing 4 m: a left turn of radius 2 m at 1 m/s, w = 0.5 rad/s,
    # centre 2 m to port). IMU at r = (1, 0.5, 0) in the body, pitched 90 deg (its x looks down, y = body y,
    # z = body x). The IMU sits at body (1, 0.5 - 2) = (1, -1.5) from the turn centre: centripetal
    # -w^2 (1, -1.5) = (-0.25, 0.375) in the body; plus gravity's reaction (0, 0, g). In the IMU frame:
    # (-g, 0.375, -0.25). Gyro: body (0, 0, 0.5) -> IMU (-0.5, 0, 0). The same from the analytic path and
    # from its keys (finite differences).
    path = Trajectory.lawnmower(bounds=((0.0, 0.0, -20.0), (20.0, 10.0, -5.0)), altitude=5.0, spacing=4.0,
                                speed=1.0, rate_hz=20.0)
    mount = pose_from_euler(1.0, 0.5, 0.0, 0.0, 90.0, 0.0)
    imu = IMU(IMUConfig(noise=False))
    for source, tol in ((path, 1e-12), (Trajectory(path.times, path.poses), 2e-4)):
        r = imu.measure(source.mounted(mount), times=[21.0, 22.0])
        np.testing.assert_allclose(r.accel, [[-G, 0.375, -0.25]] * 2, atol=tol)
        np.testing.assert_allclose(r.gyro, [[-0.5, 0.0, 0.0]] * 2, atol=1e-9)


def test_imu_tangential_term_of_a_spinning_up_keyed_path() -> None:
    # Vehicle at the origin yawing as theta = 0.1 t^2 (w = 0.2 t, alpha = 0.2 rad/s^2), keys every 0.01 s; a level
    # IMU 2 m forward. At t = 3 s: w = 0.6, centripetal -w^2 2 = -0.72 along body x, tangential alpha 2 = 0.4
    # along body y: accel (-0.72, 0.4, g), gyro (0, 0, 0.6).
    t = np.arange(0.0, 6.0001, 0.01)
    path = Trajectory(t, np.column_stack([np.zeros((t.size, 3)), quat_from_yaw_pitch(0.1 * t * t)]))
    r = IMU(IMUConfig(noise=False)).measure(path.mounted(pose_from_euler(2.0, 0.0, 0.0)), times=[3.0])
    np.testing.assert_allclose(r.accel, [[-0.72, 0.4, G]], atol=1e-4)
    np.testing.assert_allclose(r.gyro, [[0.0, 0.0, 0.6]], atol=1e-9)


def test_rig_clocks_and_mounted_dvl_imu_barometer_magnetometer(tmp_path: Path) -> None:
    # The orbit of the DVL test, 1 s of it; a 10 Hz DVL and a 100 Hz IMU: the tick is 100 Hz, 100 ticks; the DVL
    # has 10 samples at 0, 0.1, ..., 0.9 s, the IMU 100 at 0, ..., 0.99 s (k / rate, the ticks within 1 s).
    h = 100
    (tmp_path / "floor.obj").write_text(f"v {-h} {-h} -15\nv {h} {-h} -15\nv {h} {h} -15\nv {-h} {h} -15\n"
                                        f"f 1 2 3\nf 1 3 4\n")
    rig = {"name": "c2", "scene": "floor.obj", "seed": 1, "duration": 1.0, "shard_size": 50, "batch_size": 16,
           "trajectory": {"type": "orbit", "center": [0, 0, -5], "radius": 10.0, "speed": 1.0,
                          "look_at_center": False},
           "sensors": [
               {"name": "dvl", "type": "dvl", "rate_hz": 10.0, "mount": [1.0, 0.5, -0.3, 0, 0, 45],
                "config": {"noise": False, "beam_angle": 30.0}},
               {"name": "imu", "type": "imu", "rate_hz": 100.0, "mount": [1.0, 0.5, -0.3, 0, 90, 0],
                "config": {"noise": False}},
               {"name": "baro", "type": "barometer", "rate_hz": 10.0, "mount": [0, 0, -0.5, 0, 0, 0],
                "config": {"noise": False}},
               {"name": "mag", "type": "magnetometer", "rate_hz": 10.0, "mount": [0, 0, 0, 0, 0, 90],
                "config": {"noise": False, "declination": 0.0, "inclination": 60.0, "intensity": 50.0}}]}
    ds = generate_from_rig(tmp_path, rig)
    assert len(ds) == 100
    assert {s: ds.num_samples(s) for s in ("dvl", "imu", "baro", "mag")} == {"dvl": 10, "imu": 100, "baro": 10,
                                                                             "mag": 10}
    assert [s["time"] for s in ds.samples("dvl")] == [k / 10.0 for k in range(10)]
    imu_times = [s["time"] for s in ds.samples("imu")]
    assert imu_times[0] == 0.0 and imu_times[-1] == 0.99
    # DVL: the hand numbers of test_dvl_at_a_lever_arm_rotated_45_deg_on_a_turning_vehicle, at any sample
    dvl = ds.sample("dvl", 5)
    np.testing.assert_allclose(dvl["velocity"], [0.742462, -0.601041, 0.0], atol=2e-6)
    np.testing.assert_allclose(dvl["altitude"], 9.7, rtol=2e-6)
    # IMU at the same lever arm pitched 90 deg: from the centre (0, -10 body), the IMU is at body (1, -9.5):
    # centripetal -0.01 (1, -9.5) = (-0.01, 0.095); IMU frame (x down, y = body y, z = body x):
    # (-g, 0.095, -0.01); gyro (-0.1, 0, 0).
    imu = ds.sample("imu", 37)
    np.testing.assert_allclose(imu["accel"], [-G, 0.095, -0.01], atol=1e-9)
    np.testing.assert_allclose(imu["gyro"], [-0.1, 0.0, 0.0], atol=1e-12)
    # Barometer 0.5 m below the body origin: depth 5.5 m, P = 101325 + 1025 g 5.5 = 156609.989375 Pa.
    np.testing.assert_allclose(ds.sample("baro", 3)["pressure"], 156609.989375, atol=1e-6)
    # Magnetometer yawed 90 on a vehicle heading north (yaw 90 at the orbit's start angle 0): it faces west.
    # Field (0, 25, -43.30127) uT (D = 0, I = 60, F = 50, ENU); west-facing x = (-1, 0, 0), y = (0, -1, 0):
    # (0, -25, -43.30127). 0.3 s later the heading has turned 0.03 rad to port: m_x = -25 sin 0.03 = -0.749888.
    np.testing.assert_allclose(ds.sample("mag", 0)["field"], [0.0, -25.0, -43.30127], atol=1e-5)
    np.testing.assert_allclose(ds.sample("mag", 3)["field"][0], -25.0 * math.sin(0.03), atol=1e-9)


def test_downward_camera_mounted_on_a_yawed_vehicle() -> None:
    # Vehicle at (2, 3, -5) yawed 90 (nose north); camera 0.5 m forward and 0.2 m down, pitched 90 (looking down):
    # at (2, 3.5, -5.2), optical axis -z, image up (sensor +z) = the vehicle's nose = north, sensor y = body y =
    # world -x, so image right (sensor -y) = world +x (east). A floor at -15 (9.8 m below)
    # with a 0.2 m marker at (1, 0.6): sensor frame (9.8, 1.0, -2.9) -> col = cx - fx (1.0 / 9.8),
    # row = cy + fy (2.9 / 9.8): with 64 x 48 at 60 deg (fx = 55.4256) (25.84, 39.90): the marker's pixels centre
    # on (row 40, col 26). Planar depth 9.8 everywhere; range of pixel (0, 0) = 9.8 |(1, -(0 - cx)/fx,
    # -(0 - cy)/fy)| = 12.01356 m. Sun at the zenith, K_d: J = 0.5 (0.1 + e^{-15 K_d}); veiling scaled by the
    # light at the camera's 5.2 m: B = veil (0.1 + e^{-5.2 K_d}); I = J e^{-beta_D r} + B (1 - e^{-beta_B r}).
    scene = make_scene(("floor", quad([0.0, 0.0, -15.0], [0.0, 0.0, 1.0], 200.0), 0.5),
                       ("mark", quad([1.0, 0.6, -14.99], [0.0, 0.0, 1.0], 0.2), 0.5))
    kd, bd, bb = np.array([0.3, 0.1, 0.05]), np.array([0.4, 0.2, 0.1]), np.array([0.3, 0.15, 0.1])
    veil = np.array([0.05, 0.2, 0.3])
    cfg = UnderwaterCameraConfig(width=64, height=48, horizontal_fov=60.0, sun_zenith=0.0, sun_irradiance=(1, 1, 1),
                                 ambient=(0.1, 0.1, 0.1), water_diffuse_attenuation=tuple(kd),
                                 water_attenuation=tuple(bd), water_backscatter=tuple(bb),
                                 water_veiling_light=tuple(veil), veiling_scales_with_light=True, shadows=False)
    pose = compose_poses(pose_from_euler(2.0, 3.0, -5.0, 0.0, 0.0, 90.0)[None],
                         pose_from_euler(0.5, 0.0, -0.2, 0.0, 90.0, 0.0)[None])[0]
    np.testing.assert_allclose(pose[:3], [2.0, 3.5, -5.2], atol=1e-12)
    np.testing.assert_allclose(quat_to_matrix(pose[3:]).T, [[0, 0, -1], [-1, 0, 0], [0, 1, 0]], atol=1e-12)
    r = UnderwaterCamera(cfg).render(scene, pose).numpy()
    fx, fy, cx, cy = cfg.intrinsics()
    np.testing.assert_allclose((cx - fx * 1.0 / 9.8, cy + fy * 2.9 / 9.8), (25.844324, 39.901461), atol=1e-5)
    label = r["label"][0]
    np.testing.assert_allclose(np.argwhere(label == label.max()).mean(axis=0), [40.0, 26.0])
    np.testing.assert_allclose(r["depth"][0][label != label.max()], 9.8, rtol=2e-6)
    j = 0.5 * (0.1 + np.exp(-15.0 * kd))
    b = veil * (0.1 + np.exp(-5.2 * kd))
    for row, col in ((0, 0), (24, 31), (10, 50)):
        rng = 9.8 * np.linalg.norm([1.0, -(col - cx) / fx, -(row - cy) / fy])
        np.testing.assert_allclose(r["range"][0, row, col], rng, rtol=2e-6)
        np.testing.assert_allclose(r["linear"][0, row, col], j * np.exp(-bd * rng) + b * (1 - np.exp(-bb * rng)),
                                   rtol=1e-5)
    np.testing.assert_allclose(r["range"][0, 0, 0], 12.013565, rtol=1e-6)


def test_dvl_adaptive_ping_counts_over_one_second() -> None:
    # A level DVL 1 s along a straight line at altitude h: 100 Hz at 5 m (101 pings at 0, 0.01, ..., 1 s);
    # c / (2 h) = 37.5 Hz at 20 m (38 pings, the last at 37 / 37.5 = 0.98667 s); on the ramp at 55 m
    # f = 15 + (5 - 15) 5 / 10 = 10 Hz (11 pings); 5 Hz beyond 60 m (6 pings).
    line = Trajectory.transect((0.0, 0.0, -1.0), (1.0, 0.0, -1.0), speed=1.0, rate_hz=100.0)
    dvl = DVL(DVLConfig(noise=False, max_range=100.0), device="cpu")
    for altitude, count, last in ((5.0, 101, 1.0), (20.0, 38, 37 / 37.5), (55.0, 11, 1.0), (70.0, 6, 1.0)):
        times = dvl.render_adaptive(floor(-altitude - 1.0), line).times
        assert times.size == count and times[0] == 0.0
        np.testing.assert_allclose(times[-1], last, atol=1e-5)


def test_gps_antenna_above_and_below_the_water_and_usbl_bearing_from_a_yawed_vehicle() -> None:
    # Vehicle running north (yaw 90) along x = 0 at z = -0.3 m, 1 m/s. A GPS antenna on a 0.5 m mast (mount
    # z = +0.5) is at z = +0.2, depth -0.2 <= 0.5: a fix at the antenna's position (0.2 m forward of the body:
    # y + 0.2); one 0.5 m under the hull (z = -0.8, depth 0.8 > 0.5): no fix.
    from oceansim_py.sensors.gps import GPS, GPSConfig
    from oceansim_py.sensors.usbl import USBL, USBLConfig

    run = Trajectory.transect((0.0, 0.0, -0.3), (0.0, 20.0, -0.3), speed=1.0, rate_hz=5.0)
    gps = GPS(GPSConfig(noise=False, depth_threshold=0.5))
    up = gps.measure(run.mounted(pose_from_euler(0.2, 0.0, 0.5)), times=[4.0])
    np.testing.assert_allclose(up.position, [[0.0, 4.2, 0.2]], atol=1e-12)
    assert up.fix.all()
    np.testing.assert_allclose(up.depth, [-0.2], atol=1e-12)
    down = gps.measure(run.mounted(pose_from_euler(0.2, 0.0, -0.5)), times=[4.0])
    assert not down.fix.any() and np.isnan(down.position).all()
    # USBL head 1 m to starboard (mount y = -1), level, boresight forward (north), at t = 0 at (1, 0, -0.3) in
    # the world (starboard of a north-facing vehicle is east, +x). Beacon at (1 + 30 sin 20deg, 30 cos 20deg,
    # -0.3): 30 m away, 20 deg to starboard of the boresight -> bearing +20 deg, elevation 0. The head moves
    # north during the 40 ms exchange; at 1500 m/s and no turn-around the reply meets it 0.04 m further on:
    # bearing atan2(10.2606, 28.1908 - 0.04) = 20.0261 deg (20 deg from where it pinged).
    beacon = (1.0 + 30.0 * math.sin(math.radians(20.0)), 30.0 * math.cos(math.radians(20.0)), -0.3)
    usbl = USBL(USBLConfig(beacon_ids=(1,), beacon_positions=(beacon,), noise=False))
    head = Trajectory.transect((0.0, 0.0, -0.3), (0.0, 20.0, -0.3), speed=1.0, rate_hz=5.0).mounted(
        pose_from_euler(0.0, -1.0, 0.0))
    r = usbl.measure(head, times=[0.0])
    t_rx = 0.04
    for _ in range(10):
        t_rx = (30.0 + math.hypot(beacon[0] - 1.0, beacon[1] - t_rx)) / 1500.0
    np.testing.assert_allclose(r.bearing, [[math.atan2(beacon[0] - 1.0, beacon[1] - t_rx)]], atol=1e-9)
    np.testing.assert_allclose(np.degrees(r.bearing), [[20.0261]], atol=1e-3)
    np.testing.assert_allclose(r.elevation, [[0.0]], atol=1e-12)


def test_dvl_yawed_45_at_a_lever_arm_on_a_pitched_vehicle_over_a_flat_floor() -> None:
    # Vehicle at (0, 0, -5) pitched 10 deg nose down; DVL mounted at (0.5, 0, -0.4), yawed 45 deg. Head at
    # x = 0.5 cos10 - 0.4 sin10 = 0.422945, z = -5 - 0.5 sin10 - 0.4 cos10 = -5.480747: 14.519253 m above a floor at
    # -20. The X beams (azimuths 45 + k 90 in the DVL) point at body azimuths 90, 180, 270, 0 (a "+" in the
    # body). Pitched 10 deg, the forward beam is 30 - 10 = 20 deg off the vertical, the aft one 40 deg, the side
    # ones have cos = cos30 cos10: ranges 14.519253 / (0.852869, 0.766044, 0.852869, 0.939693) = (17.02402,
    # 18.95354, 17.02402, 15.45107) m; altitude = mean r cos30 = 14.82043 m (the DVL frame's vertical, not the
    # 14.519 m to the floor). Velocity 1 m/s along world x: beam velocities d_k . R^T v.
    pose = compose_poses(pose_from_euler(0.0, 0.0, -5.0, 0.0, 10.0, 0.0)[None],
                         pose_from_euler(0.5, 0.0, -0.4, 0.0, 0.0, 45.0)[None])[0]
    np.testing.assert_allclose(pose[:3], [0.422945, 0.0, -5.480747], atol=1e-6)
    cfg = DVLConfig(beam_angle=30.0, noise=False)
    r = DVL(cfg, device="cpu").render(floor(-20.0), pose, velocities=[1.0, 0.0, 0.0]).numpy()
    np.testing.assert_allclose(r["beam_range"], [[17.02402, 18.95354, 17.02402, 15.45107]], rtol=2e-6)
    np.testing.assert_allclose(r["altitude"], [14.82043], rtol=2e-6)
    v_dvl = quat_to_matrix(pose[3:]).T @ [1.0, 0.0, 0.0]
    np.testing.assert_allclose(r["beam_velocity"][0], cfg.beam_directions() @ v_dvl, atol=2e-6)
    np.testing.assert_allclose(r["velocity"][0], v_dvl, atol=2e-6)
