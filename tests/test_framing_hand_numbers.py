"""scene/framing.py against poses computed by hand: a 4 m x 2 m x 2 m box standing on a 100 m seafloor."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from conftest import make_scene, quad
from oceansim_py.poses import quat_to_matrix
from oceansim_py.scene import framing
from oceansim_py.scene.graph import TriangleMesh


@pytest.fixture(scope="module")
def box_scene():
    # the box spans x 8..12, y 4..6, z -20..-18 (centre (10, 5, -19)); the floor (z = -20, 100 m square) is ground
    box = trimesh.creation.box(extents=(4, 2, 2))
    box.apply_translation((10, 5, -19))
    return make_scene(("floor", quad([0, 0, -20], [0, 0, 1], 100.0), 0.3),
                      ("box", TriangleMesh(np.asarray(box.vertices), np.asarray(box.faces)), 0.5))


def test_subject_is_the_box_not_the_floor(box_scene):
    lo, hi = framing.subject_bounds(box_scene)
    np.testing.assert_allclose(lo, [8, 4, -20])
    np.testing.assert_allclose(hi, [12, 6, -18])


@pytest.mark.parametrize("kind, pitch, eye, front", [
    # Looking kinds: the eye lies along outward = (-cos p cos 30, -cos p sin 30, sin p) from the centre. The line
    # leaves the box through its y face at 1 / (cos p sin 30) m (2.12836 for p = 20, 2.20676 for 25, 2.07055 for 15).
    # Sonars (fov 90): standoff from the centre r / tan 45 + r = 2 sqrt(6) = 4.8990 (half-diagonal r = sqrt(6)),
    # so the eye is at (10, 5, -19) + 4.899 outward and the boresight meets the box 4.899 - exit m ahead.
    ("imaging_sonar", 20.0, [6.0132, 2.6982, -17.3245], 4.89898 - 2.12836),
    ("multibeam", 25.0, [6.1549, 2.7800, -16.9296], 4.89898 - 2.20676),
    # camera: max(horizontal half-diagonal sqrt(5) / tan 45 = 2.236, exit + CAMERA_MIN_STANDOFF = 3.0706) = 3.0706
    ("camera", 15.0, [7.4314, 3.5170, -18.2053], 1.0),
])
def test_framing_pose_by_hand(box_scene, kind, pitch, eye, front):
    pose = framing.framing_pose(box_scene, kind, 50.0, 90.0)
    np.testing.assert_allclose(pose[:3], eye, atol=2e-4)
    x = quat_to_matrix(pose[3:])[:, 0]
    assert math.degrees(math.atan2(x[1], x[0])) == pytest.approx(30.0, abs=1e-6)
    assert math.degrees(math.asin(-x[2])) == pytest.approx(pitch, abs=1e-6)
    assert framing.boresight_range(box_scene, pose, 100.0) == pytest.approx(front, abs=1e-4)


@pytest.mark.parametrize("kind, start, boresight", [
    # margin max(2, 0.25 * 4) = 2 m: the run starts at x = 8 - 2 = 6 and covers 4 + 2 * 2 = 8 m in 0.2 m steps:
    # 41 pings. Side-scan: altitude min(max(2 + 2, 3), 0.4 * 50) = 4 m above the box's foot (z = -16), offset
    # min(max(4, 2), 0.3 * 50) = 4 m to the box's starboard side (y = 4 - 4 = 0), so the box lies to port (+y, left
    # when heading +x). Profiling / single-beam: 2 m over the top (z = -18 + 2), on the centre line y = 5; the
    # single-beam pitched 90 degrees down.
    ("sidescan", [6, 0, -16], [1, 0, 0]),
    ("profiling", [6, 5, -16], [1, 0, 0]),
    ("singlebeam", [6, 5, -16], [0, 0, -1]),
])
def test_survey_run_by_hand(box_scene, kind, start, boresight):
    run = framing.survey_run(box_scene, kind, 50.0)
    np.testing.assert_allclose(run.start[:3], start, atol=1e-9)
    np.testing.assert_allclose(run.step, [0.2, 0, 0])
    assert run.pings == 41
    np.testing.assert_allclose(quat_to_matrix(run.start[3:])[:, 0], boresight, atol=1e-9)
    np.testing.assert_allclose(run.poses()[-1, :3], np.add(start, [8, 0, 0]), atol=1e-9)
