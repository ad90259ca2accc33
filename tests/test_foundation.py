"""Config base, poses, animation tracks and image helpers."""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np
import pytest

from oceansim_py import ConfigError
from oceansim_py.io.config import ConfigBase, require_positive
from oceansim_py.io.images import polar_to_cartesian, save_npy, save_png, to_uint8
from oceansim_py.poses import as_poses, compose_poses, matrix_to_quat, parse_pose_string, pose_from_euler, quat_to_matrix
from oceansim_py.scene.animation import TransformTrack


@dataclasses.dataclass(frozen=True)
class DemoConfig(ConfigBase):
    range_m: float = 10.0
    beams: int = 16
    noise: bool = True
    fov_deg: tuple[float, float] = (90.0, 20.0)
    PRESETS: ClassVar[dict] = {"short": {"range_m": 2.0, "beams": 8}}

    def validate(self) -> None:
        require_positive(self.range_m, "DemoConfig", "range_m", "m")


def test_config_from_dict_preset_and_coercion():
    c = DemoConfig.from_dict({"preset": "short", "beams": 32.0, "fov_deg": [60, 10]})
    assert (c.range_m, c.beams, c.fov_deg) == (2.0, 32, (60.0, 10.0))
    assert DemoConfig.preset("short").to_dict()["beams"] == 8


def test_config_errors_name_the_field():
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['rnage_m'\]"):
        DemoConfig.from_dict({"rnage_m": 3})
    with pytest.raises(ConfigError, match="range_m: must be > 0"):
        DemoConfig(range_m=-1.0)
    with pytest.raises(ConfigError, match="'beams'.*integer"):
        DemoConfig.from_dict({"beams": 2.5})
    with pytest.raises(ConfigError, match="'noise'.*true or false"):
        DemoConfig.from_dict({"noise": "yes"})
    with pytest.raises(ConfigError, match="unknown DemoConfig preset 'long'"):
        DemoConfig.preset("long")


def test_config_yaml(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("preset: short\nrange_m: 4.5\n")
    assert DemoConfig.from_yaml(p).range_m == 4.5
    p.write_text("range_m: [1, 2\n")
    with pytest.raises(ConfigError, match=r"c\.yaml.*malformed YAML"):
        DemoConfig.from_yaml(p)
    with pytest.raises(ConfigError, match="no such YAML file"):
        DemoConfig.from_yaml(tmp_path / "missing.yaml")


def test_as_poses_validation():
    p = as_poses([0, 0, 0, 0, 0, 0, 1])
    assert p.shape == (1, 7) and p.dtype == np.float32
    with pytest.raises(ConfigError, match="pose 1 holds a non-finite"):
        as_poses([[0, 0, 0, 0, 0, 0, 1], [np.inf, 0, 0, 0, 0, 0, 1]])
    with pytest.raises(ConfigError, match="norm 2"):
        as_poses([0, 0, 0, 0, 0, 0, 2])
    with pytest.raises(ConfigError, match=r"\(B, 7\)"):
        as_poses(np.zeros((2, 6)))


def test_euler_conventions():
    # positive yaw turns the boresight (+x) to port (+y); positive pitch tips it down (-z)
    r = quat_to_matrix(pose_from_euler(0, 0, 0, yaw_deg=90)[3:])
    np.testing.assert_allclose(r @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    r = quat_to_matrix(pose_from_euler(0, 0, 0, pitch_deg=90)[3:])
    np.testing.assert_allclose(r @ [1, 0, 0], [0, 0, -1], atol=1e-12)
    r = quat_to_matrix(pose_from_euler(0, 0, 0, roll_deg=90)[3:])
    np.testing.assert_allclose(r @ [0, 1, 0], [0, 0, 1], atol=1e-12)
    pose = parse_pose_string("1,2,3,0,0,90")
    np.testing.assert_allclose(pose[:3], [1, 2, 3])
    with pytest.raises(ConfigError, match="6 values"):
        parse_pose_string("1,2,3")


def test_quaternion_round_trip_and_compose():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(50, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q2 = matrix_to_quat(quat_to_matrix(q))
    assert np.allclose(np.abs(np.einsum("ij,ij->i", q, q2)), 1.0)
    a = pose_from_euler(1, 0, 0, yaw_deg=90)
    b = pose_from_euler(2, 0, 0)
    c = compose_poses(a, b)  # 2 m ahead of a vehicle at x=1 facing +y
    np.testing.assert_allclose(c[:3], [1, 2, 0], atol=1e-12)


def test_transform_track_interpolates_and_holds():
    m0 = np.eye(4)
    m1 = np.eye(4)
    m1[:3, 3] = [2, 0, 0]
    m1[:3, :3] = quat_to_matrix(pose_from_euler(0, 0, 0, yaw_deg=90)[3:])
    tr = TransformTrack([1.0, 3.0], [m0, m1])
    np.testing.assert_allclose(tr.at(0.0), m0)
    np.testing.assert_allclose(tr.at(5.0), m1)
    mid = tr.at(2.0)
    np.testing.assert_allclose(mid[:3, 3], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(mid[:3, :3] @ [1, 0, 0], [math.cos(math.pi / 4), math.sin(math.pi / 4), 0], atol=1e-12)


def test_to_uint8_modes():
    v = np.array([0.0, 0.25, 1.0, 4.0])
    assert list(to_uint8(v)) == [0, 64, 255, 255]
    assert list(to_uint8(v, gamma=0.5)) == [0, 128, 255, 255]
    db = to_uint8(np.array([1.0, 1e-3, 1e-9]), mode="db", db_range=60.0)
    assert list(db) == [255, 128, 0]


def test_polar_to_cartesian_places_a_bin():
    ranges = np.linspace(0.5, 9.5, 10)
    bearings = np.radians(np.linspace(-44.5, 44.5, 90))
    polar = np.zeros((10, 90), dtype=np.float32)
    j = int(np.argmin(np.abs(bearings - np.radians(30.0))))
    polar[6, j] = 1.0  # r = 6.5 m, 30 deg to starboard
    fan = polar_to_cartesian(polar, ranges, bearings, width=400)
    h, w = fan.shape
    row, col = np.unravel_index(np.argmax(fan), fan.shape)
    px = 2 * 10.0 * math.sin(math.radians(45)) / w
    x_ahead = (h - row - 0.5) * px + min(0.0, 10 * math.cos(math.radians(45)))
    y_star = -10.0 * math.sin(math.radians(45)) + (col + 0.5) * px
    assert math.hypot(x_ahead, y_star) == pytest.approx(6.5, abs=0.6)
    assert math.degrees(math.atan2(y_star, x_ahead)) == pytest.approx(30.0, abs=1.5)
    assert col > w // 2  # starboard is right of centre


def test_atomic_writers(tmp_path):
    p = save_png(tmp_path / "a" / "img.png", np.zeros((4, 5), dtype=np.uint8))
    assert p.is_file() and not (tmp_path / "a" / "img.png.tmp").exists()
    with pytest.raises(ConfigError, match="uint8"):
        save_png(tmp_path / "b.png", np.zeros((2, 2)))
    q = save_npy(tmp_path / "x.npy", np.arange(3))
    assert np.load(q).tolist() == [0, 1, 2]
