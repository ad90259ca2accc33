"""Trajectory: construction checks, interpolation, generators and their analytic derivatives, CSV and USD."""

from __future__ import annotations

import math
import textwrap
import warnings

import numpy as np
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.poses import as_poses, pose_from_euler
from oceansim_py.trajectory import Trajectory


def yaw_of(q: np.ndarray) -> np.ndarray:
    """Yaw (rad) of level quaternions [0, 0, sin(y/2), cos(y/2)]."""
    return 2.0 * np.arctan2(q[..., 2], q[..., 3])


def same_rotation(a: np.ndarray, b: np.ndarray, atol: float = 1e-9) -> bool:
    return bool(np.all(np.abs(np.abs(np.sum(a * b, axis=-1)) - 1.0) < atol))


@pytest.fixture
def keyed() -> Trajectory:
    times = [0.0, 1.0, 3.0]
    poses = [pose_from_euler(0, 0, -5, 0, 0, 0), pose_from_euler(2, 0, -5, 0, 0, 90),
             pose_from_euler(2, 4, -7, 10, 0, 90)]
    return Trajectory(times, poses)


def test_interpolation_hits_the_key_poses(keyed: Trajectory) -> None:
    at = keyed.at(keyed.times)
    np.testing.assert_allclose(at[:, :3], keyed.positions, atol=1e-12)
    assert same_rotation(at[:, 3:], keyed.quaternions)


def test_between_keys_position_is_linear_and_rotation_is_slerp(keyed: Trajectory) -> None:
    p = keyed.at([0.5, 2.0])
    np.testing.assert_allclose(p[0, :3], [1.0, 0.0, -5.0], atol=1e-12)
    assert yaw_of(p[0, 3:]) == pytest.approx(math.radians(45.0))
    np.testing.assert_allclose(p[1, :3], [2.0, 2.0, -6.0], atol=1e-12)  # halfway through the 1..3 s segment
    np.testing.assert_allclose(p[1, 3:], pose_from_euler(0, 0, 0, 5, 0, 90)[3:], atol=1e-12)


def test_key_trajectory_velocities_are_finite_differences(keyed: Trajectory) -> None:
    # np.gradient, second order on a non-uniform grid: interior v_1 = (h1^2 (p1-p0) + h0^2 (p2-p1)) / (h0 h1 (h0+h1))
    h0, h1 = 1.0, 2.0
    p0, p1, p2 = keyed.positions
    v1 = (h1**2 * (p1 - p0) + h0**2 * (p2 - p1)) / (h0 * h1 * (h0 + h1))
    np.testing.assert_allclose(keyed.velocity()[1], v1, atol=1e-12)
    # angular velocity on the first segment: 90 deg of yaw in 1 s; at key 1 the weighted mean of the two
    # segments (h1 * w01 + h0 * w12) / (h0 + h1), with w12 = 10 deg of roll about the body x = world y in 2 s
    w01 = np.array([0.0, 0.0, math.pi / 2])
    w12 = np.array([0.0, math.radians(10.0) / 2.0, 0.0])
    np.testing.assert_allclose(keyed.angular_velocity()[0], w01, atol=1e-12)
    np.testing.assert_allclose(keyed.angular_velocity()[1], (h1 * w01 + h0 * w12) / (h0 + h1), atol=1e-12)
    # between keys, linear interpolation of the key derivatives
    np.testing.assert_allclose(keyed.velocity([2.0])[0], 0.5 * (keyed.velocity()[1] + keyed.velocity()[2]))


def test_velocities_of_an_analytic_circle_match() -> None:
    r, speed = 4.0, 2.0
    omega = speed / r
    orb = Trajectory.orbit((1.0, 2.0, -10.0), r, height=3.0, speed=speed, rate_hz=20.0)
    assert orb.duration == pytest.approx(2 * math.pi / omega)
    t = np.array([0.0, math.pi / (2 * omega)])  # start (angle 0) and a quarter turn (angle 90 deg)
    np.testing.assert_allclose(orb.at(t)[:, :3], [[5.0, 2.0, -7.0], [1.0, 6.0, -7.0]], atol=1e-12)
    np.testing.assert_allclose(orb.velocity(t), [[0.0, speed, 0.0], [-speed, 0.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(orb.angular_velocity(t), [[0.0, 0.0, omega]] * 2, atol=1e-12)
    np.testing.assert_allclose(orb.acceleration(t), [[-omega**2 * r, 0, 0], [0, -omega**2 * r, 0]], atol=1e-12)
    # looking at the centre: nose towards it, pitched down by atan(3 / 4); moving counter-clockwise seen from
    # above, the vehicle slides to its starboard (-y), and the yaw rate splits between body z and body -x
    pitch = math.atan2(3.0, 4.0)
    vb = orb.velocity(t[:1], frame="body")[0]
    np.testing.assert_allclose(vb, [0.0, -speed, 0.0], atol=1e-12)
    wb = orb.angular_velocity(t[:1], frame="body")[0]
    np.testing.assert_allclose(wb, [-omega * math.sin(pitch), 0.0, omega * math.cos(pitch)], atol=1e-12)
    # the same circle given as keys: finite differences agree to O((omega dt)^2)
    keys = Trajectory(orb.times, orb.poses)
    dt = 1 / 20.0
    np.testing.assert_allclose(keys.velocity()[1:-1], orb.velocity()[1:-1], atol=speed * (omega * dt) ** 2)
    np.testing.assert_allclose(keys.angular_velocity()[1:-1], orb.angular_velocity()[1:-1], atol=1e-9)
    # (the gradient of the gradient: relative error ~ (omega dt)^2 / 3; the last key closes the circle after a
    # shorter step, so skip the samples whose stencils reach it)
    np.testing.assert_allclose(keys.acceleration()[3:-3], orb.acceleration()[3:-3],
                               atol=omega**2 * r * (omega * dt) ** 2)


def test_transect_is_a_constant_velocity_line() -> None:
    tr = Trajectory.transect((0.0, 0.0, -5.0), (30.0, 40.0, -5.0), speed=2.0, rate_hz=2.0)
    assert tr.duration == pytest.approx(25.0)
    np.testing.assert_allclose(tr.positions[-1], [30.0, 40.0, -5.0])
    np.testing.assert_allclose(tr.velocity(), np.tile([1.2, 1.6, 0.0], (len(tr), 1)))
    assert yaw_of(tr.quaternions[0]) == pytest.approx(math.atan2(4, 3))
    np.testing.assert_allclose(tr.velocity(frame="body")[0], [2.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(tr.acceleration(), 0.0)


def test_lawnmower_covers_the_bounds_at_the_altitude() -> None:
    bounds = ((0.0, 0.0, -20.0), (20.0, 10.0, 0.0))
    lm = Trajectory.lawnmower(bounds=bounds, altitude=4.0, spacing=5.0, speed=1.0, rate_hz=5.0)
    pos = lm.positions
    np.testing.assert_allclose(pos[:, 2], -16.0)
    # three legs at y = 0, 5, 10 joined by two semicircles of radius 2.5: length 3 * 20 + 2 * pi * 2.5
    assert lm.duration == pytest.approx(60.0 + 5.0 * math.pi)
    np.testing.assert_allclose(pos[0], [0.0, 0.0, -16.0])
    np.testing.assert_allclose(pos[-1], [20.0, 10.0, -16.0], atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(lm.velocity(), axis=1), 1.0)
    steps = np.linalg.norm(np.diff(pos, axis=0), axis=1)
    assert steps.max() <= 1.0 / 5.0 + 1e-9  # continuous path
    legs = np.isclose(pos[:, 0], np.clip(pos[:, 0], 0.0, 20.0)) & np.isin(np.round(pos[:, 1], 9), [0, 5, 10])
    assert legs.mean() == pytest.approx(60.0 / (60.0 + 5.0 * math.pi), abs=0.01)  # time share of the legs
    turn = lm.angular_velocity([22.0])[0]  # inside the first turn: yaw rate speed / radius
    np.testing.assert_allclose(turn, [0.0, 0.0, 1.0 / 2.5], atol=1e-12)
    assert np.linalg.norm(lm.acceleration([22.0])[0]) == pytest.approx(1.0 / 2.5)
    mid_turn = 20.0 + 2.5 * math.pi / 2.0  # half-way round the first turn: heading +y, at (22.5, 2.5)
    assert yaw_of(lm.at([mid_turn])[0, 3:]) == pytest.approx(math.pi / 2, abs=1e-9)
    np.testing.assert_allclose(lm.at([mid_turn])[0, :3], [22.5, 2.5, -16.0], atol=1e-9)


def test_slicing_resampling_and_as_poses(keyed: Trajectory) -> None:
    part = keyed[1:]
    assert isinstance(part, Trajectory) and part.times.tolist() == [1.0, 3.0]
    assert keyed[-1].times.tolist() == [3.0]
    assert as_poses(keyed).shape == (3, 7)
    rs = keyed.resample(2.0)
    np.testing.assert_allclose(rs.times, np.arange(7) * 0.5)
    np.testing.assert_allclose(rs.positions[1], [1.0, 0.0, -5.0])
    with pytest.raises(ConfigError, match="outside the trajectory's span"):
        keyed.at([3.5])


def test_bad_times_and_quaternions() -> None:
    pose = pose_from_euler(0, 0, 0)
    with pytest.raises(ConfigError, match="time 2"):
        Trajectory([0.0, 1.0, 1.0], [pose] * 3)
    with pytest.raises(ConfigError, match="time 1"):
        Trajectory([0.0, -1.0], [pose] * 2)
    bad = pose.copy()
    bad[3:] *= 2.0
    with pytest.raises(ConfigError, match="pose 1 has a quaternion of norm 2"):
        Trajectory([0.0, 1.0], [pose, bad])
    zero = pose.copy()
    zero[3:] = 0.0
    with pytest.raises(ConfigError, match="pose 0"):
        Trajectory([0.0], [zero])
    near = pose.copy()
    near[3:] *= 1.01
    with pytest.warns(UserWarning, match="pose 1"):
        tr = Trajectory([0.0, 1.0], [pose, near])
    assert np.linalg.norm(tr.quaternions[1]) == pytest.approx(1.0, abs=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Trajectory([0.0], [pose])
    with pytest.raises(ConfigError, match="3 times but 2 poses"):
        Trajectory([0.0, 1.0, 2.0], [pose] * 2)


def test_generator_arguments_are_checked() -> None:
    with pytest.raises(ConfigError, match="speed"):
        Trajectory.transect((0, 0, 0), (1, 0, 0), speed=-1.0)
    with pytest.raises(ConfigError, match="exactly one of speed"):
        Trajectory.orbit((0, 0), 5.0, speed=1.0, period=10.0)
    with pytest.raises(ConfigError, match="spacing"):
        Trajectory.lawnmower(bounds=((0, 0, 0), (1, 1, 1)), altitude=1.0, spacing=0.0, speed=1.0)
    with pytest.raises(ConfigError, match="scene or bounds"):
        Trajectory.lawnmower(altitude=1.0)


def test_csv_round_trip_and_errors(tmp_path, keyed: Trajectory) -> None:  # noqa: ANN001 - pytest fixture
    path = keyed.to_csv(tmp_path / "traj.csv")
    back = Trajectory.from_csv(path)
    np.testing.assert_array_equal(back.times, keyed.times)
    np.testing.assert_allclose(back.poses, keyed.poses, atol=1e-15)
    cases = {
        "t,x,y,z,qx,qy,qz,qw\n0,0,0,0,0,0,0,1\n": "line 1: the header",
        "t,px,py,pz,qx,qy,qz,qw\n0,0,0,0,0,0,0,1\n1,0,0\n": "line 3: expected 8 values",
        "t,px,py,pz,qx,qy,qz,qw\n0,0,0,0,0,0,0,1\n1,0,abc,0,0,0,0,1\n": "line 3: .* not a number",
        "t,px,py,pz,qx,qy,qz,qw\n0,0,0,0,0,0,0,1\n0,1,0,0,0,0,0,1\n": "sample 1 .* strictly increasing",
        "t,px,py,pz,qx,qy,qz,qw\n": "no samples",
    }
    for i, (text, message) in enumerate(cases.items()):
        p = tmp_path / f"bad{i}.csv"
        p.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=f"bad{i}.csv.*{message}"):
            Trajectory.from_csv(p)


def test_from_usd_prim(tmp_path) -> None:  # noqa: ANN001 - pytest fixture
    pytest.importorskip("pxr")
    stage = tmp_path / "anim.usda"
    stage.write_text(textwrap.dedent("""\
        #usda 1.0
        (
            upAxis = "Z"
            metersPerUnit = 1
            timeCodesPerSecond = 10
        )
        def Xform "World"
        {
            def Mesh "Rov"
            {
                int[] faceVertexCounts = [3]
                int[] faceVertexIndices = [0, 1, 2]
                point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
                double3 xformOp:translate.timeSamples = {0: (0, 0, -5), 10: (2, 0, -5), 20: (2, 4, -5)}
                float xformOp:rotateZ.timeSamples = {0: 0, 20: 90}
                uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateZ"]
            }
            def Mesh "Rock"
            {
                int[] faceVertexCounts = [3]
                int[] faceVertexIndices = [0, 1, 2]
                point3f[] points = [(0, 0, -10), (1, 0, -10), (0, 1, -10)]
            }
        }
        """), encoding="utf-8")
    tr = Trajectory.from_usd_prim(stage, "/World/Rov")
    np.testing.assert_allclose(tr.times, [0.0, 1.0, 2.0])  # time codes / 10 per second
    np.testing.assert_allclose(tr.positions, [[0, 0, -5], [2, 0, -5], [2, 4, -5]], atol=1e-6)
    np.testing.assert_allclose(yaw_of(tr.quaternions), np.radians([0.0, 45.0, 90.0]), atol=1e-6)
    # second-order np.gradient: v0 = (-3 p0 + 4 p1 - p2) / 2 = (3, -2, 0), v1 = (p2 - p0) / 2 = (1, 2, 0);
    # half-way between the keys their mean
    np.testing.assert_allclose(tr.velocity([0.5])[0], [2.0, 0.0, 0.0], atol=1e-6)
    with pytest.raises(ConfigError, match="not animated"):
        Trajectory.from_usd_prim(stage, "/World/Rock")


def test_lawnmower_follows_terrain_by_ray_casting() -> None:
    from oceansim_py.scene import Node, Scene, TriangleMesh

    # a floor at z = -10 for x < 10 and a shelf at z = -6 for x >= 10; the sea surface at z = 0
    verts = np.array([[0, 0, -10], [10, 0, -10], [10, 10, -10], [0, 10, -10],
                      [10, 0, -6], [20, 0, -6], [20, 10, -6], [10, 10, -6]], dtype=float)
    tris = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])
    scene = Scene([Node("/W"), Node("/W/floor", mesh=TriangleMesh(verts, tris))], device="cpu")
    lm = Trajectory.lawnmower(scene, altitude=2.0, spacing=4.0, speed=1.0, margin=2.0, rate_hz=2.0,
                              follow_terrain=True)
    x, z = lm.positions[:, 0], lm.positions[:, 2]
    np.testing.assert_allclose(z[x < 9.9], -8.0, atol=1e-5)
    np.testing.assert_allclose(z[x > 10.1], -4.0, atol=1e-5)
    assert not lm.is_analytic
    with pytest.raises(ConfigError, match="follow_terrain=True needs a scene"):
        Trajectory.lawnmower(bounds=((0, 0, -1), (1, 1, 0)), altitude=1.0, spacing=1.0, follow_terrain=True)


def test_mounted_sensor_has_the_lever_arm_velocity() -> None:
    r, omega = 5.0, 0.2
    orb = Trajectory.orbit((0.0, 0.0, -10.0), r, speed=r * omega, look_at_center=False, rate_hz=10.0)
    # a sensor 1 m to port (+y, towards the centre) and 0.5 m above the vehicle origin, pitched 90 deg down
    mount = pose_from_euler(0.0, 1.0, 0.5, 0.0, 90.0, 0.0)
    s = orb.mounted(mount)
    np.testing.assert_allclose(s.positions[0], [4.0, 0.0, -9.5], atol=1e-12)  # start at (5, 0), nose along +y
    # it moves on a circle of radius 4: speed 4 omega, centripetal 16 omega^2 / 4 = 4 omega^2
    np.testing.assert_allclose(s.velocity()[0], [0.0, 4.0 * omega, 0.0], atol=1e-12)
    np.testing.assert_allclose(s.acceleration()[0], [-4.0 * omega**2, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(s.angular_velocity()[0], [0.0, 0.0, omega], atol=1e-12)
    keyed = Trajectory(orb.times, orb.poses).mounted(mount)  # the same from keys, by finite differences
    np.testing.assert_allclose(keyed.velocity()[5], s.velocity()[5], atol=1e-3)
    np.testing.assert_allclose(keyed.poses, s.poses, atol=1e-12)
