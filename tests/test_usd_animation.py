"""Animated USD transforms: between time samples each xformOp's value is interpolated and then the ops are
composed, exactly as pxr's ``ComputeLocalToWorldTransform(time)``; compared with pxr at in-between times."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, Usd, UsdGeom

from oceansim_py import SceneError, load_scene
from oceansim_py.scene.animation import XformOp
from oceansim_py.scene.meshes import Y_UP_TO_Z_UP

ORBIT_RADIUS = 4.75


def new_stage(tmp_path: Path, name: str = "anim.usda", up: str = "Z", mpu: float = 1.0, tcps: float = 1.0):
    path = tmp_path / name
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y if up == "Y" else UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    stage.SetTimeCodesPerSecond(tcps)
    stage.SetStartTimeCode(0.0)
    return stage, path


def keyed(op: UsdGeom.XformOp, samples: dict[float, object]) -> None:
    for code, value in samples.items():
        op.Set(value, code)


def pxr_world(stage: Usd.Stage, path: str, code: float) -> np.ndarray:
    """pxr's world transform, column-vector convention, in stage units and axes."""
    xf = UsdGeom.Xformable(stage.GetPrimAtPath(path))
    return np.array(xf.ComputeLocalToWorldTransform(Usd.TimeCode(code)), dtype=np.float64).T


def assert_matches_pxr(stage: Usd.Stage, path: Path, prims: list[str], codes: np.ndarray,
                       conv: np.ndarray | None = None) -> object:
    """Load the saved stage and compare every prim's world transform after ``set_time`` with pxr's."""
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    conv = np.eye(4) if conv is None else conv
    tcps = stage.GetTimeCodesPerSecond()
    for code in codes:
        scene.set_time(code / tcps)
        for prim in prims:
            want = conv @ pxr_world(stage, prim, code) @ np.linalg.inv(conv)
            np.testing.assert_allclose(scene.node(prim).transform, want, atol=1e-5,
                                       err_msg=f"{prim} at time code {code}")
    return scene


def in_between(first: float, last: float) -> np.ndarray:
    """Time codes off the sample grid (and a few before and after the samples)."""
    return np.concatenate([[first - 1.0], np.linspace(first, last, 37) + 0.013, [last + 2.0]])


def orbit_stage(tmp_path: Path):
    """A 1 m cube orbiting the origin at radius 4.75 m: parent rotateZ 0, 90, 180, 270, 360 degrees at time
    codes 0..4 (1 per second), child translated (4.75, 0, 0)."""
    stage, path = new_stage(tmp_path, "orbit.usda")
    arm = UsdGeom.Xform.Define(stage, "/World/Arm")
    keyed(arm.AddRotateZOp(), {float(k): 90.0 * k for k in range(5)})
    cube = UsdGeom.Cube.Define(stage, "/World/Arm/Buoy")
    cube.CreateSizeAttr(1.0)
    cube.AddTranslateOp().Set(Gf.Vec3d(ORBIT_RADIUS, 0, 0))
    return stage, path


def test_orbiting_child_stays_on_its_circle(tmp_path):
    stage, path = orbit_stage(tmp_path)
    scene = assert_matches_pxr(stage, path, ["/World/Arm/Buoy"], in_between(0.0, 4.0))
    for t in (0.5, 1.25, 3.7):
        scene.set_time(t)
        centre = scene.node("/World/Arm/Buoy").transform[:3, 3]
        assert np.linalg.norm(centre) == pytest.approx(ORBIT_RADIUS, abs=1e-9)     # not the 3.36 m chord
        angle = math.radians(90.0 * t)
        np.testing.assert_allclose(centre[:2], ORBIT_RADIUS * np.array([math.cos(angle), math.sin(angle)]),
                                   atol=1e-9)


def test_orbiting_child_is_hit_where_pxr_puts_it(tmp_path):
    stage, path = orbit_stage(tmp_path)
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    scene.set_time(0.5)                                       # 45 degrees: cube centre at 4.75 (cos 45, sin 45)
    centre = pxr_world(stage, "/World/Arm/Buoy", 0.5)[:3, 3]
    direction = centre / np.linalg.norm(centre)
    # the cube is rotated 45 degrees with its centre, so the ray along the arm meets a face 0.5 m before it
    hit = float(scene.raycast([[0, 0, 0]], [direction], 20.0).numpy()["distance"][0])
    assert hit == pytest.approx(ORBIT_RADIUS - 0.5, abs=1e-4)
    # the straight-line (chord) position between the 0 and 90 degree keys is empty space
    chord = np.array([ORBIT_RADIUS / 2, ORBIT_RADIUS / 2, 0.0])
    down = scene.raycast([chord + [0, 0, 5.0]], [[0, 0, -1.0]], 20.0).numpy()["distance"][0]
    assert np.isinf(down)


def test_a_270_degree_step_turns_the_long_way(tmp_path):
    stage, path = new_stage(tmp_path, "step.usda")
    arm = UsdGeom.Xform.Define(stage, "/World/Arm")
    keyed(arm.AddRotateZOp(), {0.0: 0.0, 1.0: 270.0})
    cube = UsdGeom.Cube.Define(stage, "/World/Arm/Box")
    cube.AddTranslateOp().Set(Gf.Vec3d(3, 0, 0))
    scene = assert_matches_pxr(stage, path, ["/World/Arm/Box"], in_between(0.0, 1.0))
    scene.set_time(0.5)                                      # 135 degrees, not -45
    np.testing.assert_allclose(scene.node("/World/Arm/Box").transform[:3, 3],
                               [3 * math.cos(math.radians(135)), 3 * math.sin(math.radians(135)), 0], atol=1e-9)


@pytest.mark.parametrize("precision", ["double", "float"])
def test_orient_quaternion_track_is_slerped_like_pxr(tmp_path, precision):
    # keys: identity, 120 deg about (1, 1, 1), 180 deg about z, then a key on the far side (shortest arc flips)
    stage, path = new_stage(tmp_path, f"orient_{precision}.usda", tcps=24.0)
    body = UsdGeom.Xform.Define(stage, "/World/Body")
    quat = Gf.Quatd if precision == "double" else Gf.Quatf
    q = [quat(1, 0, 0, 0), quat(0.5, 0.5, 0.5, 0.5), quat(0, 0, 0, 1), quat(-0.6, 0, 0.8, 0)]
    op = body.AddOrientOp(UsdGeom.XformOp.PrecisionDouble if precision == "double" else
                          UsdGeom.XformOp.PrecisionFloat)
    keyed(op, {0.0: q[0], 24.0: q[1], 48.0: q[2], 60.0: q[3]})
    keyed(body.AddTranslateOp(opSuffix="after"), {0.0: Gf.Vec3d(0, 0, 0), 60.0: Gf.Vec3d(2, -1, 3)})
    cube = UsdGeom.Cube.Define(stage, "/World/Body/Hull")
    cube.AddTranslateOp().Set(Gf.Vec3d(1, 2, 0.5))
    codes = in_between(0.0, 60.0)
    if precision == "float":
        # pxr turns a float quaternion into a rotation by 2 acos(w) with w rounded to float: within ~1 degree of
        # the identity one float step of w moves the angle by up to 1e-3 rad, so compare away from it there
        codes = codes[codes > 0.5]
    assert_matches_pxr(stage, path, ["/World/Body", "/World/Body/Hull"], codes)


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_nested_animated_parents_with_pivots_and_all_rotation_orders(tmp_path, order):
    # grandparent: animated translate; parent: animated rotate<order> about an inverse-op pivot and a
    # uniform scale; child: animated non-uniform scale, rotateX and translateY, under an animated transform op
    stage, path = new_stage(tmp_path, f"nested_{order}.usda", up="Y", mpu=0.01, tcps=10.0)
    rig = UsdGeom.Xform.Define(stage, "/World/Rig")
    keyed(rig.AddTranslateOp(), {0.0: Gf.Vec3d(0, 0, 0), 10.0: Gf.Vec3d(100, 50, -20), 30.0: Gf.Vec3d(0, 0, 300)})
    arm = UsdGeom.Xform.Define(stage, f"/World/Rig/Arm")
    pivot = arm.AddTranslateOp(opSuffix="pivot")
    pivot.Set(Gf.Vec3d(10, 20, 30))
    rot = getattr(arm, f"AddRotate{order}Op")()
    keyed(rot, {0.0: Gf.Vec3f(0, 0, 0), 20.0: Gf.Vec3f(200, -120, 330), 25.0: Gf.Vec3f(10, 370, -45)})
    arm.AddScaleOp().Set(Gf.Vec3f(2, 2, 2))
    arm.AddTranslateOp(opSuffix="pivot", isInverseOp=True)
    frame = UsdGeom.Xform.Define(stage, "/World/Rig/Arm/Frame")
    m0, m1 = Gf.Matrix4d(1.0), Gf.Matrix4d(1.0)
    m1.SetRotate(Gf.Rotation(Gf.Vec3d(0, 1, 0), 90.0))
    m1.SetTranslateOnly(Gf.Vec3d(5, 0, 0))
    keyed(frame.AddTransformOp(), {5.0: m0, 15.0: m1})
    cube = UsdGeom.Cube.Define(stage, "/World/Rig/Arm/Frame/Box")
    keyed(cube.AddScaleOp(), {0.0: Gf.Vec3f(1, 1, 1), 30.0: Gf.Vec3f(3, 0.5, 2)})
    keyed(cube.AddRotateXOp(), {0.0: 0.0, 30.0: -400.0})
    keyed(cube.AddTranslateYOp(), {10.0: 0.0, 20.0: 40.0})
    conv = np.diag([0.01, 0.01, 0.01, 1.0]) @ Y_UP_TO_Z_UP
    assert_matches_pxr(stage, path, ["/World/Rig", "/World/Rig/Arm", "/World/Rig/Arm/Frame",
                                     "/World/Rig/Arm/Frame/Box"], in_between(0.0, 30.0), conv)


def test_reset_xform_stack_ignores_the_animated_parent(tmp_path):
    stage, path = new_stage(tmp_path, "reset.usda")
    rig = UsdGeom.Xform.Define(stage, "/World/Rig")
    keyed(rig.AddTranslateOp(), {0.0: Gf.Vec3d(0, 0, 0), 4.0: Gf.Vec3d(8, 0, 0)})
    fixed = UsdGeom.Cube.Define(stage, "/World/Rig/Fixed")
    fixed.SetResetXformStack(True)
    fixed.AddTranslateOp().Set(Gf.Vec3d(0, 5, 0))
    spun = UsdGeom.Cube.Define(stage, "/World/Rig/Spun")
    spun.SetResetXformStack(True)
    keyed(spun.AddRotateYOp(), {1.0: 0.0, 3.0: 180.0})
    spun.AddTranslateOp().Set(Gf.Vec3d(0, 0, 2))
    scene = assert_matches_pxr(stage, path, ["/World/Rig/Fixed", "/World/Rig/Spun"], in_between(0.0, 4.0))
    assert scene.node("/World/Rig/Fixed").track is None
    np.testing.assert_allclose(scene.node("/World/Rig/Spun").track.times, [1.0, 3.0])


def test_xform_op_values_by_hand():
    # rotateZ 0 -> 270 degrees over 1 s: at 0.5 s the value is 135 degrees
    op = XformOp("rotateZ", False, [0.0, 1.0], [[0.0], [270.0]])
    np.testing.assert_allclose(op.values_at(np.array([-3.0, 0.5, 9.0]))[:, 0], [0.0, 135.0, 270.0])
    np.testing.assert_allclose(op.matrices(np.array([0.5]))[0, :3, :3] @ [1, 0, 0],
                               [-math.sqrt(0.5), math.sqrt(0.5), 0], atol=1e-12)
    inv = XformOp("translate", True, [0.0, 2.0], [[0, 0, 0], [2, 4, 6]])
    np.testing.assert_allclose(inv.matrices(np.array([1.0]))[0, :3, 3], [-1, -2, -3])
    # orient: 90 degrees about z half-way between the identity and 180 degrees about z
    turn = XformOp("orient", False, [0.0, 1.0], [[1, 0, 0, 0], [0, 0, 0, 1.0]])
    np.testing.assert_allclose(turn.matrices(np.array([0.5]))[0, :3, :3] @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    with pytest.raises(SceneError, match="cannot be animated"):
        XformOp("shear", False, [0.0, 1.0], [[0.0], [1.0]])
