"""IMU, barometer / depth, GPS and pose sensor against hand-computed numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.poses import pose_from_euler, pose_to_matrix
from oceansim_py.scene import Node, Scene, TriangleMesh
from oceansim_py.sensors.barometer import Barometer, BarometerConfig
from oceansim_py.sensors.gps import GPS, GPSConfig
from oceansim_py.sensors.imu import IMU, STANDARD_GRAVITY, IMUConfig
from oceansim_py.sensors.pose_sensor import PoseSensor, PoseSensorConfig
from oceansim_py.trajectory import Trajectory

G = STANDARD_GRAVITY


def at_rest(z: float = -10.0, duration: float = 10.0, yaw: float = 0.0) -> Trajectory:
    return Trajectory([0.0, duration], [pose_from_euler(0.0, 0.0, z, 0.0, 0.0, yaw)] * 2)


# -- IMU -------------------------------------------------------------------------------------------------------
def test_imu_level_at_rest_reads_plus_g_up_and_zero_rates() -> None:
    r = IMU(IMUConfig(noise=False)).measure(at_rest(yaw=37.0))
    assert r.accel.shape == (1001, 3)  # 10 s at 100 Hz, both ends
    np.testing.assert_allclose(r.accel, np.tile([0.0, 0.0, G], (1001, 1)), atol=1e-12)
    np.testing.assert_allclose(r.gyro, 0.0, atol=1e-12)
    np.testing.assert_allclose(r.accel_bias, 0.0)


def test_imu_at_rest_reads_gravity_plus_bias_and_rates_equal_the_bias() -> None:
    cfg = IMUConfig(accel_noise_sigma=0.0, gyro_noise_sigma=0.0, accel_bias_walk=0.01, gyro_bias_walk=0.1,
                    accel_bias_initial=0.05, gyro_bias_initial=0.2, seed=4)
    r = IMU(cfg).measure(at_rest())
    np.testing.assert_allclose(r.accel, np.array([0.0, 0.0, G]) + r.accel_bias, atol=1e-12)
    np.testing.assert_allclose(r.gyro, r.gyro_bias, atol=1e-15)
    assert np.abs(r.accel_bias[0]).max() > 0.0  # the turn-on bias at t = 0
    assert not np.allclose(r.gyro_bias[0], r.gyro_bias[-1])  # and it walks


def test_imu_on_a_circle_reads_centripetal_force_and_yaw_rate() -> None:
    r_m, speed = 5.0, 1.0
    omega = speed / r_m
    orbit = Trajectory.orbit((0.0, 0.0, -10.0), r_m, speed=speed, look_at_center=False, rate_hz=10.0)
    res = IMU(IMUConfig(noise=False, rate=10.0)).measure(orbit)
    # counter-clockwise, nose along the track: the centre is to port (+y); specific force = centripetal + g up
    np.testing.assert_allclose(res.accel, np.tile([0.0, omega**2 * r_m, G], (len(res.times), 1)), atol=1e-12)
    np.testing.assert_allclose(res.gyro, np.tile([0.0, 0.0, omega], (len(res.times), 1)), atol=1e-12)


def test_imu_bias_variance_grows_linearly_in_time() -> None:
    sigma_b = 0.1  # deg/s/sqrt(s)
    cfg = IMUConfig(rate=10.0, accel_noise_sigma=0.0, gyro_noise_sigma=0.0, accel_bias_walk=0.05,
                    gyro_bias_walk=sigma_b)
    traj = at_rest(duration=10.0)
    accel, gyro = [], []
    for seed in range(400):
        r = IMU(cfg.replace(seed=seed)).measure(traj)
        accel.append(r.accel_bias)
        gyro.append(r.gyro_bias)
    accel, gyro = np.array(accel), np.array(gyro)  # (seeds, 101 samples, 3)
    t = r.times
    for idx in (25, 50, 100):  # 2.5 s, 5 s, 10 s
        var_a = accel[:, idx, :].var()
        var_g = gyro[:, idx, :].var()
        # 1200 values: the variance estimate has a relative sd of sqrt(2 / 1200) ~ 4 %; allow 4 of those
        assert var_a == pytest.approx(0.05**2 * t[idx], rel=0.16)
        assert var_g == pytest.approx(math.radians(sigma_b) ** 2 * t[idx], rel=0.16)
    assert np.abs(accel[:, 100, :].mean()) < 4 * 0.05 * math.sqrt(10.0) / math.sqrt(1200)


def test_imu_white_noise_sigma_and_counter_based_draws() -> None:
    cfg = IMUConfig(accel_noise_sigma=0.3, gyro_noise_sigma=2.0, accel_bias_walk=0.0, gyro_bias_walk=0.0, seed=9)
    imu = IMU(cfg, sensor_id=1)
    traj = at_rest()
    full = imu.measure(traj)
    assert (full.accel - full.true_accel).std() == pytest.approx(0.3, rel=0.05)
    assert (full.gyro - full.true_gyro).std() == pytest.approx(math.radians(2.0), rel=0.05)
    part = imu.measure(traj, times=full.times[500:], frame_index=500)
    np.testing.assert_array_equal(part.accel, full.accel[500:])


def test_imu_chunks_equal_one_call_including_the_bias_walk() -> None:
    cfg = IMUConfig(accel_bias_walk=0.01, gyro_bias_walk=0.1, accel_bias_initial=0.02, gyro_bias_initial=0.1,
                    seed=6)
    imu = IMU(cfg)
    traj = at_rest(duration=2.0)
    full = imu.measure(traj)
    for lo, hi in ((0, 8), (8, 16), (150, 201)):
        part = imu.measure(traj, times=full.times[lo:hi], frame_index=lo)
        np.testing.assert_array_equal(part.gyro_bias, full.gyro_bias[lo:hi])
        np.testing.assert_array_equal(part.accel, full.accel[lo:hi])
    steps = np.diff(full.gyro_bias, axis=0)
    assert steps.std() == pytest.approx(math.radians(0.1) * math.sqrt(0.01), rel=0.1)  # N(0, sigma_b^2 dt)
    assert abs(np.corrcoef(steps[:-1].ravel(), steps[1:].ravel())[0, 1]) < 0.1  # independent increments
    other = IMU(cfg, sensor_id=2).measure(traj)
    assert not np.array_equal(other.accel, full.accel)
    with pytest.raises(ConfigError, match="needs a Trajectory"):
        imu.measure(pose_from_euler(0, 0, 0))


def test_imu_presets_follow_their_documented_derivation() -> None:
    tac = IMUConfig.preset("tactical")
    assert tac.gyro_noise_sigma == pytest.approx(0.1 / 60.0 * 10.0)  # 0.1 deg/rt(h) at 100 Hz
    assert tac.gyro_bias_walk == pytest.approx(1.0 / 3600.0 / 60.0)  # 1 deg/h after one hour
    con = IMUConfig.preset("consumer_mems")
    assert con.accel_noise_sigma == pytest.approx(300e-6 * G * 10.0)
    assert con.gyro_noise_sigma > tac.gyro_noise_sigma and con.gyro_bias_walk > tac.gyro_bias_walk


# -- barometer ---------------------------------------------------------------------------------------------------
def test_barometer_at_10_m_depth() -> None:
    cfg = BarometerConfig(noise_sigma=50.0, water_density=1025.0, seed=1)
    res = Barometer(cfg).measure(at_rest(z=-10.0))
    expected = 101325.0 + 1025.0 * G * 10.0
    assert abs(res.pressure[0] - expected) < 3 * 50.0
    assert abs(res.pressure.mean() - expected) < 3 * 50.0 / math.sqrt(res.pressure.size)
    assert res.pressure.std() == pytest.approx(50.0, rel=0.2)
    exact = Barometer(cfg.replace(noise=False)).measure(at_rest(z=-10.0))
    np.testing.assert_allclose(exact.pressure, expected, rtol=1e-15)
    np.testing.assert_allclose(exact.depth, 10.0, rtol=1e-12)
    assert exact.times.size == 101  # 10 Hz default rate


def test_barometer_surface_and_scene_surface_height() -> None:
    cfg = BarometerConfig(noise=False)
    above = Barometer(cfg).measure(pose_from_euler(0, 0, 2.0))
    assert above.pressure[0] == 101325.0 and above.true_depth[0] == 0.0
    floor = TriangleMesh(np.array([[0, 0, -20], [1, 0, -20], [0, 1, -20]]), np.array([[0, 1, 2]]))
    scene = Scene([Node("/W"), Node("/W/f", mesh=floor)], device="cpu", metadata={"surface_z": 5.0})
    res = Barometer(cfg).measure(pose_from_euler(0, 0, -1.0), scene=scene)
    assert res.true_depth[0] == 6.0
    assert res.pressure[0] == pytest.approx(101325.0 + 1025.0 * G * 6.0)


# -- GPS ---------------------------------------------------------------------------------------------------------
def test_no_gps_fix_below_the_depth_threshold() -> None:
    rise = Trajectory.transect((0.0, 0.0, -3.0), (0.0, 0.0, 1.0), speed=1.0, rate_hz=10.0)
    res = GPS(GPSConfig(depth_threshold=0.5, horizontal_sigma=1.0, vertical_sigma=1.0)).measure(rise, times=rise.times)
    depth = -rise.positions[:, 2]
    np.testing.assert_array_equal(res.fix, depth <= 0.5)
    assert np.isnan(res.position[depth > 0.5]).all()
    assert np.isfinite(res.position[depth <= 0.5]).all()
    assert res.fix.sum() == 16  # z = -0.5 .. 1.0 in 0.1 m steps


def test_gps_random_threshold_and_noise() -> None:
    n = 2000
    poses = np.tile(pose_from_euler(3.0, 4.0, -0.5), (n, 1))
    res = GPS(GPSConfig(depth_threshold=0.5, depth_threshold_sigma=0.2, horizontal_sigma=2.0,
                        vertical_sigma=3.0, seed=2)).measure(poses)
    np.testing.assert_array_equal(res.fix, 0.5 <= res.threshold)
    assert res.fix.mean() == pytest.approx(0.5, abs=0.05)  # depth equals the mean threshold
    assert res.threshold.std() == pytest.approx(0.2, rel=0.1)
    err = res.position[res.fix] - [3.0, 4.0, -0.5]
    np.testing.assert_allclose(err.std(axis=0), [2.0, 2.0, 3.0], rtol=0.1)
    exact = GPS(GPSConfig(noise=False)).measure(pose_from_euler(3.0, 4.0, -0.2))
    np.testing.assert_array_equal(exact.position, [[3.0, 4.0, -0.2]])


# -- pose sensor ---------------------------------------------------------------------------------------------------
def test_pose_sensor_returns_se3_matrices() -> None:
    traj = Trajectory([0.0, 1.0], [pose_from_euler(1, 2, -3, 10, 20, 30), pose_from_euler(2, 2, -3, 10, 20, 60)])
    res = PoseSensor(PoseSensorConfig(rate=4.0)).measure(traj)
    assert res.matrix.shape == (5, 4, 4)
    np.testing.assert_allclose(res.matrix, pose_to_matrix(traj.at(res.times)), atol=1e-12)
    np.testing.assert_allclose(res.matrix[:, 3], np.tile([0, 0, 0, 1], (5, 1)))
    noisy = PoseSensor(PoseSensorConfig(position_sigma=0.1, rotation_sigma=1.0, seed=3)).measure(
        np.tile(pose_from_euler(0, 0, 0), (1000, 1)))
    rot = noisy.matrix[:, :3, :3]
    np.testing.assert_allclose(rot @ rot.transpose(0, 2, 1), np.tile(np.eye(3), (1000, 1, 1)), atol=1e-12)
    assert noisy.matrix[:, :3, 3].std() == pytest.approx(0.1, rel=0.1)
    angle = np.degrees(np.arccos(np.clip((np.trace(rot, axis1=1, axis2=2) - 1) / 2, -1, 1)))
    # the angle of a 3-D isotropic N(0, s^2) rotation vector is Maxwell: rms = sqrt(3) s
    assert math.sqrt((angle**2).mean()) == pytest.approx(math.sqrt(3.0), rel=0.1)


# -- configs -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, field", [
    (IMUConfig, "accel_noise_sigma"), (IMUConfig, "gyro_bias_walk"), (BarometerConfig, "noise_sigma"),
    (GPSConfig, "horizontal_sigma"), (GPSConfig, "depth_threshold_sigma"), (PoseSensorConfig, "rotation_sigma"),
])
def test_negative_sigmas_raise_config_error_naming_the_field(cls, field) -> None:  # noqa: ANN001 - parametrised
    with pytest.raises(ConfigError, match=f"{cls.__name__}.{field}"):
        cls(**{field: -1.0})


def test_other_bad_configs() -> None:
    with pytest.raises(ConfigError, match="IMUConfig.rate"):
        IMUConfig(rate=0.0)
    with pytest.raises(ConfigError, match="BarometerConfig.water_density"):
        BarometerConfig(water_density=0.0)
    with pytest.raises(ConfigError, match="unknown key"):
        GPSConfig.from_dict({"sigma": 1.0})
    assert GPSConfig.preset("rtk").horizontal_sigma == 0.01
    assert BarometerConfig.preset("bar30").noise_sigma == 20.0


def test_brownian_path_is_zero_at_the_origin_with_variance_t_on_both_sides() -> None:
    from oceansim_py.sensors.host_noise import brownian

    t = np.array([-4.0, -1.0, 0.0, 1.0, 4.0])
    paths = np.array([brownian(seed, 0, 0, t, 1)[:, 0] for seed in range(600)])
    np.testing.assert_array_equal(paths[:, 2], 0.0)
    # 600 values: relative sd of a variance estimate sqrt(2 / 600) ~ 6 %; allow 4 of those
    np.testing.assert_allclose(paths.var(axis=0)[[0, 1, 3, 4]], [4.0, 1.0, 1.0, 4.0], rtol=0.24)
    assert abs(np.corrcoef(paths[:, 1], paths[:, 3])[0, 1]) < 0.15  # the two sides are independent
