"""Outside audit of the camera, DVL and navigation sensors: scenes and poses the other tests do not use (rotated
sensors, sloped floors, off-centre principal points, moving heads), each output compared with a number worked out
by hand in the test's comments."""

from __future__ import annotations

import math

import numpy as np

from conftest import make_scene, quad
from oceansim_py.poses import pose_from_euler, quat_to_matrix
from oceansim_py.scene import Material, Node, Scene
from oceansim_py.sensors.barometer import Barometer, BarometerConfig
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig, VehicleLight
from oceansim_py.sensors.dvl import DVL, DVLConfig
from oceansim_py.sensors.imu import IMU, IMUConfig
from oceansim_py.sensors.lbl import LBL, LBLConfig
from oceansim_py.sensors.magnetometer import Magnetometer, MagnetometerConfig
from oceansim_py.sensors.usbl import USBL, USBLConfig
from oceansim_py.trajectory import Trajectory, quat_multiply, rotvec_to_quat

G = 9.80665


def rotation(pose: np.ndarray) -> np.ndarray:
    return quat_to_matrix(np.asarray(pose[3:], dtype=np.float64))


def test_camera_off_axis_pixels_of_a_rotated_camera_with_an_off_centre_principal_point() -> None:
    # Camera at (1, 2, -8), yaw 30 deg, pitch 10 deg nose down; fx = 30, fy = 25, (cx, cy) = (18.3, 12.7).
    # A plane normal to the optical axis 4 m ahead. Pixel (row, col) looks along FLU (1, -(col - cx)/fx,
    # -(row - cy)/fy), normalised; it meets the plane at range 4 / d_x and planar depth 4. Ambient 1, no sun, so
    # J = albedo 0.5 and I = 0.5 exp(-beta_D r) + B_inf (1 - exp(-beta_B r)). E.g. pixel (5, 30): x = 0.39,
    # y = -0.308, |(1, -x, -y)| = 1.11668, r = 4.46670 m; red: 0.5 e^(-1.34001) + 0.05 (1 - e^(-1.11668)) = 0.16455.
    pose = pose_from_euler(1.0, 2.0, -8.0, 0.0, 10.0, 30.0)
    forward = rotation(pose)[:, 0]
    np.testing.assert_allclose(forward[2], -math.sin(math.radians(10.0)), atol=1e-12)   # pitch + is nose down
    scene = make_scene(("plane", quad(np.asarray(pose[:3]) + 4.0 * forward, -forward, 30.0), 0.5))
    bd, bb, veil = np.array([0.3, 0.1, 0.05]), np.array([0.25, 0.08, 0.04]), np.array([0.05, 0.2, 0.3])
    cfg = UnderwaterCameraConfig(width=41, height=31, fx=30.0, fy=25.0, cx=18.3, cy=12.7, sun=False,
                                 ambient=(1.0, 1.0, 1.0), water_attenuation=tuple(bd), water_backscatter=tuple(bb),
                                 water_veiling_light=tuple(veil), veiling_scales_with_light=False, shadows=False)
    r = UnderwaterCamera(cfg).render(scene, pose).numpy()
    for row, col in ((5, 30), (12, 18), (0, 0), (30, 40)):
        d = np.array([1.0, -(col - 18.3) / 30.0, -(row - 12.7) / 25.0])
        rng = 4.0 * np.linalg.norm(d)
        np.testing.assert_allclose(r["range"][0, row, col], rng, rtol=2e-6)
        np.testing.assert_allclose(r["depth"][0, row, col], 4.0, rtol=2e-6)
        np.testing.assert_allclose(r["in_air"][0, row, col], [0.5, 0.5, 0.5], rtol=1e-6)
        np.testing.assert_allclose(r["linear"][0, row, col], 0.5 * np.exp(-bd * rng) + veil * (1 - np.exp(-bb * rng)),
                                   rtol=1e-5)
    np.testing.assert_allclose(r["range"][0, 5, 30], 4.46670, rtol=1e-5)
    np.testing.assert_allclose(r["linear"][0, 5, 30, 0], 0.164553, rtol=1e-5)


def test_camera_sun_shadow_of_a_plate_falls_away_from_the_sun() -> None:
    # Sun at zenith 30 deg, azimuth 90 deg (towards +y); a 1 m plate 2 m above a floor at z = -15. Its shadow
    # is the plate moved by 2 tan 30 = 1.155 m towards -y: y in [-1.655, -0.655]. The camera 5 m above the
    # floor, looking straight down, sees the floor behind the plate where |y| > 0.5 * 5 / 3 = 0.833 m.
    # Lit floor: J = 0.5 (0.05 + cos 30 * sun * exp(-K_d 15)), red 0.5 (0.05 + 0.8660 * 1.0 * e^-4.5) = 0.029810;
    # in the shadow only the ambient: 0.025.
    scene = make_scene(("floor", quad([0, 0, -15.0], [0, 0, 1], 60.0), 0.5),
                       ("plate", quad([0, 0, -13.0], [0, 0, 1], 1.0), 0.5))
    kd = np.array([0.3, 0.1, 0.05])
    sun = np.array([1.0, 0.9, 0.8])
    cfg = UnderwaterCameraConfig(width=101, height=101, horizontal_fov=60.0, sun_zenith=30.0, sun_azimuth=90.0,
                                 sun_irradiance=tuple(sun), ambient=(0.05, 0.05, 0.05),
                                 water_diffuse_attenuation=tuple(kd), water_attenuation=(0.2, 0.1, 0.05),
                                 water_backscatter=(0.1, 0.1, 0.1), water_veiling_light=(0.0, 0.0, 0.0))
    pose = pose_from_euler(0.0, 0.0, -10.0, 0.0, 90.0, 0.0)
    r = UnderwaterCamera(cfg).render(scene, pose).numpy()
    fx, fy, cx, cy = cfg.intrinsics()
    lit = 0.5 * (0.05 + math.cos(math.radians(30.0)) * sun * np.exp(-kd * 15.0))
    np.testing.assert_allclose(lit[0], 0.029810, rtol=1e-4)
    for point, shadowed in (((0.0, -1.3), True), ((0.3, -1.0), True), ((0.0, -1.8), False), ((0.0, 1.3), False)):
        s = rotation(pose).T @ (np.array([*point, -15.0]) - pose[:3])
        row, col = round(cy - fy * s[2] / s[0]), round(cx - fx * s[1] / s[0])
        np.testing.assert_allclose(r["in_air"][0, row, col], 0.025 if shadowed else lit, rtol=1e-5)


def test_camera_vehicle_light_cone_edge_inverse_square_and_path_attenuation() -> None:
    # A light at (0, 0.5, 0.2) (sensor frame) along +x, half angle 15 deg with a 10 deg smooth edge (fully lit
    # inside 5 deg), intensity (2, 3, 4); a wall 3 m ahead; no other light. A wall point P seen by pixel (row, col)
    # gets E = cone * cos_n / d^2 * I * exp(-beta_D d), d = |L - P|, cone = smoothstep(cos 15, cos 5, cos angle).
    # Pixel (20, 24) of 61 x 41 at 90 deg: P = (3, 0.6, 0), d = 3.0017, angle 4.18 deg (cone 1), cos_n = 0.99943;
    # J_red = 0.5 * 0.99943 / 9.0100 * 2 * e^(-0.60033) = 0.060396.
    scene = make_scene(("wall", quad([3.0, 0.0, -20.0], [-1.0, 0.0, 0.0], 60.0), 0.5))
    light = VehicleLight(position=(0.0, 0.5, 0.2), direction=(1.0, 0.0, 0.0), half_angle=15.0, edge=10.0,
                         intensity=(2.0, 3.0, 4.0))
    bd = np.array([0.2, 0.1, 0.05])
    cfg = UnderwaterCameraConfig(width=61, height=41, horizontal_fov=90.0, sun=False, ambient=(0.0, 0.0, 0.0),
                                 lights=(light,), water_attenuation=tuple(bd), water_backscatter=(0.1, 0.1, 0.1),
                                 water_veiling_light=(0.0, 0.0, 0.0), veiling_scales_with_light=False)
    r = UnderwaterCamera(cfg).render(scene, pose_from_euler(0.0, 0.0, -20.0, 0.0, 0.0, 0.0)).numpy()
    fx, fy, cx, cy = cfg.intrinsics()
    lamp = np.array([0.0, 0.5, 0.2])
    co, ci = math.cos(math.radians(15.0)), math.cos(math.radians(5.0))
    for row, col in ((20, 24), (15, 26), (20, 30), (20, 10)):
        p = np.array([3.0, -3.0 * (col - cx) / fx, -3.0 * (row - cy) / fy])
        to_light = lamp - p
        d = np.linalg.norm(to_light)
        t = min(max((-to_light[0] / d - co) / (ci - co), 0.0), 1.0)
        e = t * t * (3 - 2 * t) * (-to_light[0] / d) / d**2 * np.array([2.0, 3.0, 4.0]) * np.exp(-bd * d)
        np.testing.assert_allclose(r["in_air"][0, row, col], 0.5 * e, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(r["in_air"][0, 20, 24, 0], 0.060396, rtol=1e-4)
    assert 0.0 < r["in_air"][0, 20, 30, 0] < 0.5 * 2.0 * 0.99 / 9.0   # 10.2 deg off the axis: inside the edge
    assert (r["in_air"][0, 20, 10] == 0).all()                          # 26 deg off the axis: outside the cone


def test_camera_photon_transfer_at_low_and_high_signal_with_dark_current() -> None:
    # Flat field: albedo 0.5 under ambient 1 in water that neither attenuates nor scatters: I = 0.5 everywhere.
    # QE 0.5, 1000 photons per unit, exposure chosen for a signal of S e-; dark current 100 e-/s over 0.05 s adds
    # 5 e-. Mean DN = (S + 5) / gain; variance = (S + 5) / gain^2 + read^2 / gain^2 + 1/12.
    # S = 20 e-, gain 0.5 (the exact Poisson branch, < 64 e-): mean 50 DN, variance 100 + 36 + 0.083 = 136.08.
    # S = 500 e-, gain 2 (the Gaussian branch): mean 252.5 DN, variance 126.25 + 2.25 + 0.083 = 128.58.
    scene = make_scene(("wall", quad([3.0, 0.0, -5.0], [-1.0, 0.0, 0.0], 200.0), 0.5))
    for signal, gain, mean, var in ((20.0, 0.5, 50.0, 136.083), (500.0, 2.0, 252.5, 128.583)):
        cfg = UnderwaterCameraConfig(width=200, height=150, sun=False, ambient=(1.0, 1.0, 1.0), shadows=False,
                                     water_attenuation=(0.0, 0.0, 0.0), water_backscatter=(0.0, 0.0, 0.0),
                                     water_veiling_light=(0.0, 0.0, 0.0), exposure=signal / (0.5 * 1000.0 * 0.5),
                                     noise=True, quantum_efficiency=0.5, photons_per_unit=1000.0, read_noise=3.0,
                                     dark_current=100.0, exposure_time=0.05, gain=gain, full_well=1e5, bit_depth=16)
        raw = UnderwaterCamera(cfg).render(scene, pose_from_euler(0.0, 0.0, -5.0, 0.0, 0.0, 0.0)).numpy()["raw"]
        raw = raw[0].astype(np.float64)
        np.testing.assert_allclose(raw.mean(), mean, rtol=2e-3)        # 90 000 draws: sigma of the mean ~0.04 DN
        np.testing.assert_allclose(raw.var(), var, rtol=0.03)          # sigma of the variance ~0.5 %


def test_dvl_rotated_sensor_over_a_sloped_floor() -> None:
    # Floor through (0, 0, -10) rising 15 deg towards +x (normal n = (-sin 15, 0, cos 15)); DVL at the origin
    # rolled 5, pitched -8 (nose up), yawed 33 deg; X layout at 30 deg. Beam k in the world is w_k = R d_k and
    # meets the floor at r_k = ((p0 - o) . n) / (w_k . n); its velocity is d_k . (R^T v). Altitude = mean
    # r_k cos 30. The 4-beam least squares gives back R^T v exactly.
    s = math.radians(15.0)
    n = np.array([-math.sin(s), 0.0, math.cos(s)])
    p0 = np.array([0.0, 0.0, -10.0])
    scene = make_scene(("floor", quad(p0, n, 200.0), 0.5))
    pose = pose_from_euler(0.0, 0.0, 0.0, 5.0, -8.0, 33.0)
    rot = rotation(pose)
    cfg = DVLConfig(beam_angle=30.0, layout="X", noise=False, max_range=80.0)
    v_world = np.array([1.2, -0.4, 0.1])
    r = DVL(cfg, device="cpu").render(scene, pose, velocities=v_world).numpy()
    dirs = cfg.beam_directions()
    ranges = np.array([(p0 @ n) / ((rot @ d) @ n) for d in dirs])
    v_sensor = rot.T @ v_world
    np.testing.assert_allclose(r["beam_range"][0], ranges, rtol=2e-6)
    np.testing.assert_allclose(r["beam_velocity"][0], dirs @ v_sensor, atol=2e-6)
    np.testing.assert_allclose(r["velocity"][0], v_sensor, atol=2e-6)
    np.testing.assert_allclose(r["altitude"][0], ranges.mean() * math.cos(math.radians(30.0)), rtol=2e-6)
    # level over the same slope with max_range 11 m: the up-slope beams (azimuth +-45 deg) reach the floor at
    # 10 / (cos 30 + sin 30 cos 45 tan 15) = 10.408 m, the down-slope ones at 12.95 m are beyond: a dropout
    level = DVL(DVLConfig(beam_angle=30.0, noise=False, max_range=11.0), device="cpu").render(
        scene, pose_from_euler(0.0, 0.0, 0.0, 0.0, 0.0, 0.0), velocities=v_world).numpy()
    up = 10.0 / (math.cos(math.radians(30.0)) + math.sin(math.radians(30.0)) * math.cos(math.pi / 4) * math.tan(s))
    np.testing.assert_allclose(level["beam_range"][0, [0, 3]], up, rtol=2e-6)
    assert np.isnan(level["beam_range"][0, [1, 2]]).all() and not level["valid"][0]
    assert np.isnan(level["velocity"][0]).all()


def test_dvl_velocity_noise_of_the_four_beam_solution() -> None:
    # X layout at alpha = 30 deg: sum d d^T = diag(2 sin^2 a, 2 sin^2 a, 4 cos^2 a), so per-beam noise sigma
    # gives sigma_x = sigma_y = sigma / (sqrt(2) sin a) = 0.028284 and sigma_z = sigma / (2 cos a) = 0.011547 m/s
    # (sigma = 0.02); altitude = mean of 4 r cos a: sigma_r cos a / 2 = 0.021651 m (sigma_r = 0.05).
    scene = make_scene(("floor", quad([0.0, 0.0, -10.0], [0.0, 0.0, 1.0], 200.0), 0.5))
    cfg = DVLConfig(beam_angle=30.0, velocity_sigma=0.02, range_sigma=0.05, seed=3)
    n = 6000
    r = DVL(cfg, device="cpu").render(scene, np.tile(pose_from_euler(0, 0, 0, 0, 0, 0), (n, 1)),
                                      velocities=[0.5, 0.2, -0.1]).numpy()
    np.testing.assert_allclose(r["velocity"].mean(axis=0), [0.5, 0.2, -0.1], atol=4 * 0.0283 / math.sqrt(n))
    np.testing.assert_allclose(r["velocity"].std(axis=0), [0.028284, 0.028284, 0.011547], rtol=0.05)
    np.testing.assert_allclose(r["altitude"].std(), 0.021651, rtol=0.05)


def test_imu_on_a_pitched_orbit_and_a_keyed_rolling_accelerating_path() -> None:
    # Orbit of radius 5 m at 1 m/s, 2 m above its centre, nose on the centre: pitch p = atan(2/5) = 21.8 deg down,
    # yaw rate w = 0.2 rad/s about world z. Body gyro = Ry(p)^T (0, 0, w) = (-w sin p, 0, w cos p)
    # = (-0.074278, 0, 0.185695). Specific force: centripetal w^2 R = 0.2 m/s^2 horizontal towards the centre
    # (along the nose's horizontal part) plus g up: f_x = 0.2 cos p - g sin p = -3.456403, f_z = 0.2 sin p
    # + g cos p = 9.179524.
    imu = IMU(IMUConfig(noise=False))
    orbit = Trajectory.orbit((0.0, 0.0, -10.0), radius=5.0, height=2.0, speed=1.0, rate_hz=20.0)
    r = imu.measure(orbit, times=np.array([0.0, 3.0]))
    p = math.atan2(2.0, 5.0)
    np.testing.assert_allclose(r.gyro, [[-0.2 * math.sin(p), 0.0, 0.2 * math.cos(p)]] * 2, atol=1e-12)
    np.testing.assert_allclose(r.accel, [[-3.456403, 0.0, 9.179524]] * 2, atol=1e-6)
    # Keys every 0.05 s: constant body roll rate 0.3 rad/s from (pitch 20, yaw 40 deg), constant world
    # acceleration a = (0.1, -0.2, 0.05) m/s^2 (quadratic positions, exact under the second-order differences).
    # Gyro = (0.3, 0, 0) at any time; accel = R(t)^T (a + (0, 0, g)).
    t = np.arange(0.0, 5.0001, 0.05)
    q0 = pose_from_euler(0, 0, 0, 0, 20, 40)[3:]
    q = quat_multiply(np.tile(q0, (t.size, 1)), rotvec_to_quat(np.outer(t, [0.3, 0.0, 0.0])))
    acc = np.array([0.1, -0.2, 0.05])
    keyed = Trajectory(t, np.column_stack([0.5 * np.outer(t * t, acc) + np.outer(t, [1.0, 0.0, 0.0]), q]))
    times = np.array([1.0, 2.525, 4.0])
    r = imu.measure(keyed, times=times)
    np.testing.assert_allclose(r.gyro, [[0.3, 0.0, 0.0]] * 3, atol=1e-9)
    for i, ti in enumerate(times):
        rot = quat_to_matrix(keyed.at(np.array([ti]))[0, 3:])
        np.testing.assert_allclose(r.accel[i], rot.T @ (acc + [0.0, 0.0, G]), atol=1e-9)


def test_imu_allan_deviation_of_white_noise() -> None:
    # White accelerometer noise sigma = 0.02 m/s^2 per sample at 100 Hz is a density N = sigma / sqrt(100 Hz)
    # = 0.002 m/s^2/rtHz; the Allan deviation of white noise is N / sqrt(tau): 0.0063246 at tau = 0.1 s
    # (10-sample clusters), 0.002 at tau = 1 s. No bias walk.
    cfg = IMUConfig(rate=100.0, accel_noise_sigma=0.02, accel_bias_walk=0.0, gyro_bias_walk=0.0, seed=11)
    still = Trajectory(np.array([0.0, 300.0]), np.tile(pose_from_euler(0, 0, 0, 0, 0, 0), (2, 1)))
    a = IMU(cfg).measure(still).accel[:30000, 0]
    for m, expect in ((10, 0.0063246), (100, 0.002)):
        means = a[: a.size // m * m].reshape(-1, m).mean(axis=1)
        adev = math.sqrt(0.5 * np.mean(np.diff(means) ** 2))
        np.testing.assert_allclose(adev, expect, rtol=0.05 if m == 10 else 0.12)


def test_barometer_fresh_water_and_magnetometer_heading() -> None:
    # Fresh water (997 kg/m^3) at 12.5 m: P = 101325 + 997 * 9.80665 * 12.5 = 101325 + 122215.3756 = 223540.3756 Pa.
    b = Barometer(BarometerConfig.preset("freshwater").replace(noise=False)).measure(
        pose_from_euler(3.0, -2.0, -12.5, 10.0, 5.0, 70.0))
    np.testing.assert_allclose(b.pressure, [223540.3756], atol=1e-3)
    np.testing.assert_allclose(b.depth, [12.5], atol=1e-9)
    # D = 10, I = 60, F = 50 uT; level sensor at yaw 30 deg (from east, counter-clockwise). Horizontal
    # H = 25 uT: m_x = H sin(D + yaw) = 16.06969, m_y = H cos(D + yaw) = 19.15111, m_z = -F sin I = -43.30127.
    m = Magnetometer(MagnetometerConfig(noise=False, declination=10.0, inclination=60.0, intensity=50.0)).measure(
        pose_from_euler(0.0, 0.0, 0.0, 0.0, 0.0, 30.0))
    np.testing.assert_allclose(m.field, [[16.06969, 19.15111, -43.30127]], atol=1e-5)


def test_usbl_looking_down_and_lbl_with_a_moving_head() -> None:
    # USBL head at (0, 0, -5) pitched 90 deg (boresight down): sensor x = world -z, y = world y, z = world x.
    # Beacon at (3, 4, -50): sensor-frame (45, 4, 3), range 45.27693 m; bearing atan2(-4, 45) = -0.088656 rad
    # (4 m to port), elevation asin(3 / 45.277) = 0.066307 rad; two-way time 2 * 45.277 / 1500 = 0.0603692 s.
    cfg = USBLConfig(beacon_ids=(7,), beacon_positions=((3.0, 4.0, -50.0),), noise=False, turnaround_delay=0.3)
    r = USBL(cfg).measure(pose_from_euler(0.0, 0.0, -5.0, 0.0, 90.0, 0.0))
    np.testing.assert_allclose(r.slant_range, [[45.276926]], atol=1e-6)
    np.testing.assert_allclose(r.bearing, [[-0.0886559]], atol=1e-7)
    np.testing.assert_allclose(r.elevation, [[0.0663075]], atol=1e-7)
    np.testing.assert_allclose(r.position, [[[45.0, 4.0, 3.0]]], atol=1e-9)
    np.testing.assert_allclose(r.travel_time, [[0.0603692]], atol=1e-7)
    # LBL transceiver on a 2 m/s transect along +x from the origin, beacon at (0, 300, -5) level with it,
    # turn-around 0.1 s: the ping reaches the beacon at 0.2 s, the reply leaves at 0.3 s and meets the head at
    # t = 0.3 + sqrt((2t)^2 + 300^2) / 1500 = 0.5000011 s, 300.0017 m away; range = (300 + 300.0017) / 2.
    tr = Trajectory.transect((0.0, 0.0, -5.0), (100.0, 0.0, -5.0), speed=2.0, rate_hz=1.0)
    lbl = LBL(LBLConfig(beacon_ids=(1,), beacon_positions=((0.0, 300.0, -5.0),), noise=False,
                        turnaround_delay=0.1)).measure(tr, times=np.array([0.0]))
    t_rx = 0.5
    for _ in range(20):
        t_rx = 0.3 + math.hypot(2.0 * t_rx, 300.0) / 1500.0
    np.testing.assert_allclose(lbl.reply_time, [[t_rx]], atol=1e-12)
    np.testing.assert_allclose(lbl.true_range, [[math.hypot(2.0 * t_rx, 300.0)]], atol=1e-9)
    np.testing.assert_allclose(lbl.range, [[(300.0 + math.hypot(2.0 * t_rx, 300.0)) / 2.0]], atol=1e-9)
    np.testing.assert_allclose(lbl.reply_time, [[0.5000011]], atol=1e-7)


def test_camera_water_path_past_the_sea_surface_starts_at_the_surface() -> None:
    # PHYSICS.md section 4.2, from above: at normal incidence a seafloor of radiance J at depth z is seen as
    # R0 L_sky + (1 - R0) / n^2 (J e^(-beta_D z) + B_inf (1 - e^(-beta_B z))). Coastal-like water beta_D = 1.1,
    # beta_B = 0.9 /m, B_inf = 0.05, floor 2 m deep of albedo 0.6 under unit ambient (J = 0.6), sky 0.3, n = 1.333
    # (R0 = 0.020373, T / n^2 = 0.551316): water term 0.6 e^-2.2 + 0.05 (1 - e^-1.8) = 0.066482 + 0.041735
    # = 0.108217; I = 0.0061120 + 0.0596617 = 0.065774. The whole 2 m of water counts: the in-water ray is cast
    # from just below the surface (1 mm), but its path is measured from the surface.
    n = 1.333
    r0 = ((n - 1) / (n + 1)) ** 2
    sand = Material.from_properties("sand", (0.6, 0.6, 0.6), reflectivity=0.5)
    floor = Scene([Node("/F", mesh=quad([0.0, 0.0, -2.0], [0.0, 0.0, 1.0], 100.0), material=sand)], device="cpu")
    common = dict(surface_optics="always", sun=False, ambient=(1.0, 1.0, 1.0), width=3, height=3,
                  water_attenuation=(1.1, 1.1, 1.1), water_backscatter=(0.9, 0.9, 0.9),
                  water_veiling_light=(0.05, 0.05, 0.05), veiling_scales_with_light=False)
    above = UnderwaterCamera(UnderwaterCameraConfig(sky_zenith=(0.3,) * 3, sky_horizon=(0.3,) * 3, **common)).render(
        floor, pose_from_euler(0.0, 0.0, 1.5, 0.0, 90.0, 0.0)).numpy()
    water = 0.6 * math.exp(-1.1 * 2.0) + 0.05 * (1 - math.exp(-0.9 * 2.0))
    np.testing.assert_allclose(r0 * 0.3 + (1 - r0) / n**2 * water, 0.065774, rtol=1e-5)
    np.testing.assert_allclose(above["linear"][0, 1, 1, 0], r0 * 0.3 + (1 - r0) / n**2 * water, rtol=1e-5)
    # From below, looking straight up from 0.5 m deep, black sky: I = R0 L_w e^(-beta_D 0.5) + B_inf (1 -
    # e^(-beta_B 0.5)), L_w the floor 2 m below the surface seen by the mirror ray, 0.108217 as above:
    # 0.020373 * 0.108217 * e^-0.55 + 0.05 (1 - e^-0.45) = 0.0012720 + 0.0181186 = 0.0193906.
    below = UnderwaterCamera(UnderwaterCameraConfig(sky_zenith=(0.0,) * 3, sky_horizon=(0.0,) * 3, **common)).render(
        floor, pose_from_euler(0.0, 0.0, -0.5, 0.0, -90.0, 0.0)).numpy()
    expect = r0 * water * math.exp(-1.1 * 0.5) + 0.05 * (1 - math.exp(-0.9 * 0.5))
    np.testing.assert_allclose(expect, 0.0193906, rtol=1e-5)
    np.testing.assert_allclose(below["linear"][0, 1, 1, 0], expect, rtol=1e-5)
