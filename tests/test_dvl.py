"""DVL: beam geometry, least squares vs HoloOcean's Janus matrix, dropouts, noise statistics, adaptive rate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh
from oceansim_py.sensors.dvl import DVL, DVLConfig, adaptive_rate_hz
from oceansim_py.trajectory import Trajectory

ALTITUDE = 10.0


def floor_scene(holes: list[tuple[float, float]] = (), half: float = 30.0, z: float = -ALTITUDE) -> Scene:
    """A floor of 1 m cells over [-half, half]^2 at height z, minus the cells containing the points ``holes``."""
    verts, tris = [], []
    for i in range(int(-half), int(half)):
        for j in range(int(-half), int(half)):
            if any(i <= hx < i + 1 and j <= hy < j + 1 for hx, hy in holes):
                continue
            k = len(verts)
            verts += [(i, j, z), (i + 1, j, z), (i + 1, j + 1, z), (i, j + 1, z)]
            tris += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
    mat = Material.from_properties("sand", (0.5, 0.5, 0.5), reflectivity=0.3)
    return Scene([Node("/W"), Node("/W/floor", mesh=TriangleMesh(np.array(verts), np.array(tris)), material=mat)],
                 device="cpu")


@pytest.fixture(scope="module")
def flat() -> Scene:
    return floor_scene()


def footprint(config: DVLConfig, beam: int, altitude: float = ALTITUDE) -> tuple[float, float]:
    """Where beam ``beam`` of a level, unrotated sensor at the origin meets a floor ``altitude`` below."""
    a = math.radians(config.beam_angle)
    phi = math.radians((45.0 if config.layout == "X" else 0.0) + 90.0 * beam)
    return altitude * math.tan(a) * math.cos(phi), altitude * math.tan(a) * math.sin(phi)


def level(n: int = 1, yaw: float = 0.0) -> np.ndarray:
    return np.tile(pose_from_euler(0.0, 0.0, 0.0, 0.0, 0.0, yaw), (n, 1))


def test_ranges_equal_altitude_over_cos_angle_for_a_level_vehicle(flat: Scene) -> None:
    for angle in (22.5, 30.0):
        cfg = DVLConfig(beam_angle=angle, noise=False)
        r = DVL(cfg, device="cpu").render(flat, level(3), velocities=[0.0, 0.0, 0.0]).numpy()
        np.testing.assert_allclose(r["beam_range"], ALTITUDE / math.cos(math.radians(angle)), rtol=1e-5)
        np.testing.assert_allclose(r["altitude"], ALTITUDE, rtol=1e-5)
        assert r["valid"].all() and r["beam_valid"].all()


def test_noise_free_velocity_is_exact_and_world_velocity_is_rotated_into_the_sensor(flat: Scene) -> None:
    cfg = DVLConfig(noise=False)
    v_world = np.array([0.8, -0.3, 0.05])
    r = DVL(cfg, device="cpu").render(flat, level(2, yaw=90.0), velocities=v_world).numpy()
    # yaw 90 deg: sensor x = world y, sensor y = world -x
    np.testing.assert_allclose(r["velocity"], [[-0.3, -0.8, 0.05]] * 2, atol=1e-5)
    d = cfg.beam_directions()
    np.testing.assert_allclose(r["beam_velocity"][0], d @ np.array([-0.3, -0.8, 0.05]), atol=1e-6)
    r2 = DVL(cfg, device="cpu").render(flat, level(1), velocities=[1.0, 2.0, 3.0], velocity_frame="sensor").numpy()
    np.testing.assert_allclose(r2["velocity"][0], [1.0, 2.0, 3.0], atol=1e-5)


def test_constant_velocity_is_recovered_within_3_sigma(flat: Scene) -> None:
    sigma_v, sigma_r, n = 0.02, 0.05, 400
    cfg = DVLConfig(beam_angle=30.0, velocity_sigma=sigma_v, range_sigma=sigma_r, seed=3)
    v = np.array([0.5, -0.2, 0.1])
    r = DVL(cfg, device="cpu").render(flat, level(n), velocities=v).numpy()
    assert r["valid"].all()
    a = math.radians(30.0)
    # X layout: D^T D = diag(2 sin^2 a, 2 sin^2 a, 4 cos^2 a), so per-axis sigma = sigma_v / sqrt(diag).
    per_axis = np.array([sigma_v / (math.sqrt(2) * math.sin(a))] * 2 + [sigma_v / (2 * math.cos(a))])
    err = r["velocity"] - v
    assert np.all(np.abs(err.mean(axis=0)) < 3 * per_axis / math.sqrt(n))
    np.testing.assert_allclose(err.std(axis=0), per_axis, rtol=0.15)
    rng_err = r["beam_range"] - ALTITUDE / math.cos(a)
    assert abs(rng_err.mean()) < 3 * sigma_r / math.sqrt(rng_err.size)
    assert rng_err.std() == pytest.approx(sigma_r, rel=0.1)


def test_four_beam_solution_equals_holoocean_janus_matrix(flat: Scene) -> None:
    alpha = math.radians(22.5)
    s, c = 1 / (2 * math.sin(alpha)), 1 / (4 * math.cos(alpha))
    janus = np.array([[s, 0, -s, 0], [0, s, 0, -s], [c, c, c, c]])  # holoocean-2022 eq. 4
    cfg = DVLConfig.preset("holoocean", velocity_sigma=0.05, seed=11)
    # HoloOcean's beam j measures along (sin a cos phi_j, sin a sin phi_j, +cos a), phi_j = j * 90 deg: that is
    # -d of our beam j + 2, so its beam vector is -(ours)[[2, 3, 0, 1]].
    to_holo = -np.eye(4)[[2, 3, 0, 1]]
    np.testing.assert_allclose(np.linalg.pinv(cfg.beam_directions()), janus @ to_holo, atol=1e-12)
    r = DVL(cfg, device="cpu").render(flat, level(50), velocities=[0.3, 0.1, -0.2]).numpy()
    expected = (janus @ to_holo @ r["beam_velocity"].T).T
    np.testing.assert_allclose(r["velocity"], expected, atol=2e-6)


def test_one_beam_over_a_hole_still_gives_a_valid_three_beam_solution() -> None:
    cfg = DVLConfig(noise=False)
    scene = floor_scene(holes=[footprint(cfg, 0)])
    r = DVL(cfg, device="cpu").render(scene, level(1), velocities=[0.4, 0.2, -0.1]).numpy()
    assert r["beam_valid"][0].tolist() == [False, True, True, True]
    assert math.isnan(r["beam_range"][0, 0]) and math.isnan(r["beam_velocity"][0, 0])
    assert r["valid"][0]
    np.testing.assert_allclose(r["velocity"][0], [0.4, 0.2, -0.1], atol=1e-5)
    assert r["altitude"][0] == pytest.approx(ALTITUDE, rel=1e-5)


def test_two_beams_lost_is_a_dropout_with_nan_velocity() -> None:
    cfg = DVLConfig(noise=False)
    scene = floor_scene(holes=[footprint(cfg, 0), footprint(cfg, 1)])
    r = DVL(cfg, device="cpu").render(scene, level(1), velocities=[0.4, 0.2, -0.1]).numpy()
    assert r["beam_valid"][0].tolist() == [False, False, True, True]
    assert not r["valid"][0]
    assert np.isnan(r["velocity"][0]).all()
    assert r["altitude"][0] == pytest.approx(ALTITUDE, rel=1e-5)  # the two remaining beams still range
    assert r["rate_hz"][0] == pytest.approx(1500.0 / (2 * ALTITUDE))


def test_out_of_range_beams_are_invalid(flat: Scene) -> None:
    far = DVL(DVLConfig(max_range=5.0, noise=False), device="cpu").render(flat, level(1), velocities=[1, 0, 0])
    near = DVL(DVLConfig(min_range=11.0, max_range=50.0, noise=False), device="cpu").render(
        flat, level(1), velocities=[1, 0, 0])
    for r in (far.numpy(), near.numpy()):
        assert not r["beam_valid"].any() and not r["valid"][0]
        assert np.isnan(r["altitude"][0]) and np.isnan(r["velocity"][0]).all()
        assert r["rate_hz"][0] == 5.0


def test_noise_is_independent_of_batch_size(flat: Scene) -> None:
    dvl = DVL(DVLConfig(seed=5), device="cpu", sensor_id=2)
    poses = level(10)
    vel = np.tile([0.3, 0.0, 0.0], (10, 1))
    batch = dvl.render(flat, poses, velocities=vel).numpy()
    single = dvl.render(flat, poses[6], velocities=vel[6], frame_index=6).numpy()
    np.testing.assert_array_equal(single["beam_range"][0], batch["beam_range"][6])
    np.testing.assert_array_equal(single["velocity"][0], batch["velocity"][6])
    other = DVL(DVLConfig(seed=5), device="cpu", sensor_id=3).render(flat, poses, velocities=vel).numpy()
    assert not np.array_equal(other["beam_range"], batch["beam_range"])
    # range and velocity noise come from different streams: the draws are not the same numbers
    dr = batch["beam_range"] - ALTITUDE / math.cos(math.radians(22.5))
    dv = batch["beam_velocity"] - DVLConfig().beam_directions() @ [0.3, 0.0, 0.0]
    assert abs(np.corrcoef((dr / 0.02).ravel(), (dv / 0.01).ravel())[0, 1]) < 0.5


def test_trajectory_gives_times_and_velocity_over_the_bottom(flat: Scene) -> None:
    traj = Trajectory.transect((-5.0, 2.0, 0.0), (5.0, 2.0, 0.0), speed=2.0, rate_hz=4.0)
    r = DVL(DVLConfig(noise=False), device="cpu").render(flat, traj).numpy()
    np.testing.assert_allclose(r["times"], np.arange(21) * 0.25)
    np.testing.assert_allclose(r["velocity"], np.tile([2.0, 0.0, 0.0], (21, 1)), atol=1e-5)
    with pytest.raises(ConfigError, match="velocities"):
        DVL(device="cpu").render(flat, level(2))


def test_adaptive_rate_is_continuous_with_the_documented_values() -> None:
    h = np.array([0.0, 5.0, 7.5, 10.0, 50.0, 55.0, 60.0, 100.0, np.nan])
    np.testing.assert_allclose(adaptive_rate_hz(h), [100, 100, 100, 75, 15, 10, 5, 5, 5])
    cfg = DVLConfig()
    for knee in (7.5, 50.0, 60.0):
        lo, hi = adaptive_rate_hz([knee - 1e-9, knee + 1e-9], cfg)
        assert abs(lo - hi) < 1e-6
    grid = np.linspace(0.0, 80.0, 8001)
    assert np.all(np.diff(adaptive_rate_hz(grid)) <= 1e-12)


def test_bad_configs_raise_config_error_naming_the_field() -> None:
    with pytest.raises(ConfigError, match="DVLConfig.velocity_sigma"):
        DVLConfig(velocity_sigma=-0.1)
    with pytest.raises(ConfigError, match="DVLConfig.range_sigma"):
        DVLConfig(range_sigma=-1.0)
    with pytest.raises(ConfigError, match="DVLConfig.beam_angle"):
        DVLConfig(beam_angle=90.0)
    with pytest.raises(ConfigError, match="DVLConfig.layout"):
        DVLConfig(layout="Y")
    with pytest.raises(ConfigError, match="DVLConfig.max_range"):
        DVLConfig(min_range=10.0, max_range=5.0)
    with pytest.raises(ConfigError, match="rate_knee"):
        DVLConfig(rate_knee=5.0)
    with pytest.raises(ConfigError, match="unknown key"):
        DVLConfig.from_dict({"beam_angel": 30.0})
    assert DVLConfig.preset("dvl_30deg").beam_angle == 30.0
    assert DVLConfig.preset("dvl_22_5deg").beam_angle == 22.5


def test_yaml_round_trip(tmp_path) -> None:  # noqa: ANN001 - pytest fixture
    p = tmp_path / "dvl.yaml"
    p.write_text("preset: dvl_30deg\nlayout: '+'\nvelocity_sigma: 0.003\n", encoding="utf-8")
    cfg = DVLConfig.from_yaml(p)
    assert (cfg.beam_angle, cfg.layout, cfg.velocity_sigma) == (30.0, "+", 0.003)


def test_torch_views_share_the_device_arrays(flat: Scene) -> None:
    pytest.importorskip("torch")
    r = DVL(DVLConfig(noise=False), device="cpu").render(flat, level(2), velocities=[1, 0, 0])
    t = r.torch()
    assert tuple(t["beam_range"].shape) == (2, 4)
    assert float(t["velocity"][0, 0]) == pytest.approx(1.0, abs=1e-5)


def test_adaptive_pinging_follows_the_altitude() -> None:
    # flat floor 10 m below for x < 5, 40 m below for x >= 5 (a drop-off): 75 Hz, then 1500 / 80 = 18.75 Hz
    verts = np.array([[-10, -40, -10], [5, -40, -10], [5, 40, -10], [-10, 40, -10],
                      [5, -40, -40], [60, -40, -40], [60, 40, -40], [5, 40, -40]], dtype=float)
    tris = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])
    scene = Scene([Node("/W"), Node("/W/floor", mesh=TriangleMesh(verts, tris))], device="cpu")
    traj = Trajectory.transect((-2.0, 0.0, 0.0), (20.0, 0.0, 0.0), speed=2.0, rate_hz=10.0)
    r = DVL(DVLConfig(noise=False), device="cpu").render_adaptive(scene, traj).numpy()
    dt = np.diff(r["times"])
    # X layout: beams reach h tan(22.5) cos(45) ahead and behind: 2.93 m at 10 m, 11.7 m at 40 m
    shallow = r["times"][:-1] < 1.9  # x < 1.8: all beams on the 10 m floor
    deep = r["times"][:-1] > 9.4  # x > 16.8: all beams on the 40 m floor
    mixed = (r["times"][:-1] > 1.3) & (r["times"][:-1] < 3.5)  # 2 beams each: mean altitude 25 m, 30 Hz
    np.testing.assert_allclose(dt[shallow], 1.0 / 75.0, rtol=1e-5)
    np.testing.assert_allclose(dt[deep], 1.0 / 18.75, rtol=1e-4)
    assert np.isclose(dt[mixed], 1.0 / 30.0, rtol=1e-4).any()
    np.testing.assert_allclose(r["rate_hz"][r["times"] > 9.4], 18.75, rtol=1e-4)
    assert r["times"][0] == 0.0 and r["times"][-1] <= traj.end_time


def test_a_scene_on_another_device_is_refused_before_any_launch(flat: Scene) -> None:
    """The DVL checks the scene's device like every other ray-casting sensor (sensors/batching.py); before, a
    scene on another device failed inside the launch with Warp's error instead of naming the fix."""
    from types import SimpleNamespace

    elsewhere = SimpleNamespace(device="cuda:7", geometry=flat.geometry)
    with pytest.raises(ConfigError, match=r"DVL: the scene is on cuda:7 but the sensor on cpu; load the scene with "
                                          r"device='cpu'"):
        DVL(DVLConfig(), device="cpu").render(elsewhere, pose_from_euler(0, 0, 5, 0, 0, 0), velocities=[1, 0, 0])
