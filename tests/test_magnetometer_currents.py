"""Magnetometer (issue 17 item 4) and water currents in the DVL (item 5), against hand numbers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh

from oceansim_py.errors import ConfigError
from oceansim_py.poses import pose_from_euler
from oceansim_py.sensors.currents import current_field
from oceansim_py.sensors.dvl import DVL, DVLConfig
from oceansim_py.sensors.magnetometer import Magnetometer, MagnetometerConfig, heading_from_field


def level_poses(yaws_deg) -> np.ndarray:
    return np.array([pose_from_euler(0, 0, -5, 0, 0, y) for y in yaws_deg])


def test_earth_field_from_declination_inclination_intensity() -> None:
    # D = 0, I = 60 deg, F = 50 uT: north 25 uT, down 43.30 uT -> ENU (0, 25, -43.30)
    np.testing.assert_allclose(MagnetometerConfig().earth_field(), [0.0, 25.0, -50 * math.sin(math.radians(60))],
                               atol=1e-12)
    # D = 90 deg (field points east), I = 0: (50, 0, 0)
    np.testing.assert_allclose(MagnetometerConfig(declination=90, inclination=0).earth_field(), [50, 0, 0],
                               atol=1e-12)


def test_dipole_earth_model() -> None:
    # geomagnetic latitude 30 deg, B0 = 30 uT: horizontal 30 cos 30 = 25.98, down 2 * 30 sin 30 = 30
    f = MagnetometerConfig(earth_model="dipole", geomagnetic_latitude=30, dipole_equator=30.0).earth_field()
    np.testing.assert_allclose(f, [0.0, 30 * math.cos(math.radians(30)), -30.0], atol=1e-12)
    assert math.degrees(math.atan2(-f[2], f[1])) == pytest.approx(math.degrees(math.atan(2 * math.tan(math.radians(30)))))


def test_heading_from_the_field_equals_the_yaw() -> None:
    yaws = [-170.0, -90.0, -30.0, 0.0, 45.0, 90.0, 135.0, 179.0]
    for decl in (0.0, 12.5):
        mag = Magnetometer(MagnetometerConfig(declination=decl, noise=False))
        heading = np.degrees(heading_from_field(mag.measure(level_poses(yaws)).field, decl))
        np.testing.assert_allclose(heading, yaws, atol=1e-9)
    # level sensor facing north (yaw 90 deg): the horizontal field lies along +x, the vertical along -z
    r = Magnetometer(MagnetometerConfig(noise=False)).measure(level_poses([90.0]))
    np.testing.assert_allclose(r.field[0], [25.0, 0.0, -43.30127], atol=1e-4)


def test_hard_and_soft_iron_and_noise() -> None:
    soft = (1.1, 0.0, 0.0, 0.0, 0.9, 0.0, 0.0, 0.0, 1.0)
    cfg = MagnetometerConfig(hard_iron=(5.0, -3.0, 2.0), soft_iron=soft, noise=False)
    r = Magnetometer(cfg).measure(level_poses([90.0]))
    # true (25, 0, -43.30) -> S m + h = (27.5 + 5, 0 - 3, -43.30 + 2)
    np.testing.assert_allclose(r.field[0], [32.5, -3.0, -41.30127], atol=1e-4)
    noisy = Magnetometer(MagnetometerConfig(noise_sigma=0.5, seed=4)).measure(level_poses([0.0] * 4000))
    err = noisy.field - noisy.true_field
    assert err.std() == pytest.approx(0.5, rel=0.05) and abs(err.mean()) < 0.03
    # counter-based: sample 2000.. measured alone equals the same samples of the long run
    part = Magnetometer(MagnetometerConfig(noise_sigma=0.5, seed=4)).measure(level_poses([0.0] * 10), frame_index=2000)
    np.testing.assert_array_equal(part.field, noisy.field[2000:2010])


@pytest.mark.parametrize("values, field", [
    ({"inclination": 95.0}, "inclination"), ({"soft_iron": (1.0, 0.0, 0.0)}, "soft_iron"),
    ({"soft_iron": (1, 0, 0, 0, 1, 0, 0, 0, 0)}, "soft_iron"), ({"earth_model": "igrf"}, "earth_model"),
    ({"noise_sigma": -1.0}, "noise_sigma"), ({"hard_iron": (0.0, float("nan"), 0.0)}, "hard_iron"),
])
def test_bad_magnetometer_config_names_the_field(values, field) -> None:
    with pytest.raises(ConfigError, match=rf"MagnetometerConfig\.{field}"):
        MagnetometerConfig(**values)


# --- DVL with a water current ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def floor_scene(tmp_path_factory):
    from oceansim_py.scene import load_scene

    path = tmp_path_factory.mktemp("floor") / "floor.obj"
    trimesh.Trimesh([[-80, -80, -20], [80, -80, -20], [80, 80, -20], [-80, 80, -20]], [[0, 1, 2], [0, 2, 3]]).export(path)
    return load_scene(str(path), device="cpu")


def test_bottom_track_is_ground_velocity_and_water_track_is_ground_minus_current(floor_scene) -> None:
    ground = np.array([1.0, 0.5, 0.0])
    current = np.array([0.3, -0.2, 0.05])
    cfg = DVLConfig(noise=False, water_track=True, current="uniform", current_velocity=tuple(current))
    # level, and yawed 90 deg (sensor x = world y): velocities given in the world frame
    poses = np.array([[0, 0, -10, 0, 0, 0, 1.0], pose_from_euler(0, 0, -10, 0, 0, 90)])
    r = DVL(cfg, device="cpu").render(floor_scene, poses, velocities=np.tile(ground, (2, 1))).numpy()
    np.testing.assert_allclose(r["velocity"][0], ground, atol=1e-5)
    np.testing.assert_allclose(r["water_velocity"][0], ground - current, atol=1e-5)
    # yawed 90 deg: world (vx, vy) is sensor (vy, -vx)
    rel = ground - current
    np.testing.assert_allclose(r["velocity"][1], [ground[1], -ground[0], 0.0], atol=1e-5)
    np.testing.assert_allclose(r["water_velocity"][1], [rel[1], -rel[0], rel[2]], atol=1e-5)
    assert r["water_valid"].all()
    # without a current, water-track reads the ground velocity too
    still = DVL(DVLConfig(noise=False, water_track=True), device="cpu").render(floor_scene, poses[:1], velocities=ground).numpy()
    np.testing.assert_allclose(still["water_velocity"][0], ground, atol=1e-5)


def test_water_track_needs_water_beyond_the_layer(floor_scene) -> None:
    # 1 m above the floor at 22.5 deg: beams reach the bottom at 1.08 m, before the layer's end (0.5 + 2 m)
    cfg = DVLConfig(noise=False, water_track=True, current="uniform", current_velocity=(0.2, 0.0, 0.0))
    r = DVL(cfg, device="cpu").render(floor_scene, [0, 0, -19, 0, 0, 0, 1.0], velocities=[1.0, 0, 0]).numpy()
    assert r["valid"][0] and not r["water_valid"][0] and np.isnan(r["water_velocity"][0]).all()
    short = cfg.replace(blanking_distance=0.1, water_layer=0.5)
    r = DVL(short, device="cpu").render(floor_scene, [0, 0, -19, 0, 0, 0, 1.0], velocities=[1.0, 0, 0]).numpy()
    np.testing.assert_allclose(r["water_velocity"][0], [0.8, 0.0, 0.0], atol=1e-5)


def test_depth_profile_current_is_taken_at_the_layer(floor_scene) -> None:
    # current 0 at 0 m depth, 1 m/s east at 20 m: the layer centre of every beam is 1.5 m along a 22.5 deg beam,
    # 1.5 cos(22.5) = 1.386 m below the sensor at 10 m depth -> 11.386 m -> 0.5693 m/s
    cfg = DVLConfig(noise=False, water_track=True, current="profile", current_profile=((0.0, 0.0, 0.0, 0.0), (20.0, 1.0, 0.0, 0.0)))
    r = DVL(cfg, device="cpu").render(floor_scene, [0, 0, -10, 0, 0, 0, 1.0], velocities=[0.0, 0, 0]).numpy()
    expected = (10 + 1.5 * math.cos(math.radians(22.5))) / 20
    np.testing.assert_allclose(r["water_velocity"][0], [-expected, 0.0, 0.0], atol=1e-5)


def test_grid_current_from_npz_and_csv_is_trilinear(tmp_path: Path) -> None:
    x, y, z = np.array([0.0, 10.0]), np.array([0.0, 10.0, 20.0]), np.array([-20.0, 0.0])
    gx, gy, gz = np.meshgrid(x, y, z, indexing="ij")
    u, v, w = 0.1 * gx, 0.01 * gy + 0.02 * gz, np.zeros_like(gx)      # linear fields: trilinear is exact
    np.savez(tmp_path / "c.npz", x=x, y=y, z=z, u=u, v=v, w=w)
    rows = np.column_stack([gx.ravel(), gy.ravel(), gz.ravel(), u.ravel(), v.ravel(), w.ravel()])[::-1]
    np.savetxt(tmp_path / "c.csv", rows, delimiter=",", header="x,y,z,u,v,w", comments="")
    pts = np.array([[2.5, 7.0, -5.0], [9.0, 15.0, -19.0], [30.0, -5.0, 5.0]])     # the last outside: clamped
    expected = np.column_stack([0.1 * np.clip(pts[:, 0], 0, 10), 0.01 * np.clip(pts[:, 1], 0, 20)
                                + 0.02 * np.clip(pts[:, 2], -20, 0), np.zeros(3)])
    for name in ("c.npz", "c.csv"):
        field = current_field("grid", (0, 0, 0), (), str(tmp_path / name), "DVLConfig")
        np.testing.assert_allclose(field.at(pts), expected, atol=1e-12)
    cfg = DVLConfig(current="grid", current_file=str(tmp_path / "c.npz"))
    assert cfg.current_field().kind == "grid"


def test_bad_current_configs_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"DVLConfig\.current: must be one of"):
        DVLConfig(current="tidal")
    with pytest.raises(ConfigError, match=r"DVLConfig\.current_file: name a \.npz or \.csv"):
        DVLConfig(current="grid")
    with pytest.raises(ConfigError, match=r"DVLConfig\.current_file: current file .*nope\.npz does not exist"):
        DVLConfig(current="grid", current_file=str(tmp_path / "nope.npz"))
    np.savez(tmp_path / "bad.npz", x=[0.0, 1.0], y=[0.0], z=[0.0], u=np.zeros((2, 1, 1)), v=np.zeros((2, 1, 1)))
    with pytest.raises(ConfigError, match=r"current_file: .*bad\.npz: lacks the array\(s\) \['w'\]"):
        DVLConfig(current="grid", current_file=str(tmp_path / "bad.npz"))
    with pytest.raises(ConfigError, match=r"DVLConfig\.current_profile: rows must be finite with strictly increasing"):
        DVLConfig(current="profile", current_profile=((10.0, 0, 0, 0), (5.0, 1, 0, 0)))
    with pytest.raises(ConfigError, match=r"DVLConfig\.water_layer: must be > 0"):
        DVLConfig(water_layer=0.0)


def test_water_track_is_a_mode_its_products_need(tmp_path: Path) -> None:
    from oceansim_py.dataset.rig import parse_rig
    from oceansim_py.dataset.sensor_writer import SensorWriter

    assert DVLConfig(water_track=True).memory_bytes(2) == 2 * (DVL.BYTES_PER_SAMPLE + DVL.WATER_BYTES_PER_SAMPLE)
    base = {"scene": "tank", "trajectory": {"type": "transect", "start": [0, 0, -1], "end": [1, 0, -1], "speed": 1}}
    rig = parse_rig({**base, "sensors": [{"name": "dvl", "type": "dvl", "rate_hz": 1,
                                          "products": ["velocity", "water_velocity"]}]}, "r.yaml")
    with pytest.raises(ConfigError, match=r"sensor dvl: products \['water_velocity'\] need water-track; add "
                                          r"water_track: true"):
        SensorWriter(rig.sensors[0], 0, "cpu")
