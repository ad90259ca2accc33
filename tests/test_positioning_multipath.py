"""Surface multipath of the acoustic positioning sensors (USBL, LBL), by the image-source method."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.scene import Material, Node, Scene, TriangleMesh
from oceansim_py.sensors.lbl import LBL, LBLConfig
from oceansim_py.sensors.usbl import USBL, USBLConfig

HEAD = np.array([0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0])      # looking along +x, 10 m deep
BEACON = (10.0, 0.0, -10.0)                                 # 10 m ahead at the same depth


def wall_scene(top: float) -> Scene:
    """A wall across x = 3 m from z = -20 m up to ``top`` (the surface is z = 0). The surface-reflected path from
    the head to the beacon rises from z = -10 at x = 0 to the surface at x = 5: it crosses x = 3 at z = -4."""
    verts = np.array([[3, -50, -20], [3, 50, -20], [3, 50, top], [3, -50, top]], dtype=float)
    wall = TriangleMesh(verts, np.array([[0, 1, 2], [0, 2, 3]]))
    return Scene([Node(path="/wall", mesh=wall, material=Material("rock", 0.3, (0.5, 0.5, 0.5)), label="wall")],
                 device="cpu")


def test_usbl_hears_a_blocked_beacon_by_its_surface_reflection():
    scene = wall_scene(top=-6.0)
    direct = USBL(USBLConfig(beacon_positions=(BEACON,), noise=False)).measure(HEAD, scene=scene)
    assert not direct.fix[0, 0] and direct.occluded[0, 0]
    u = USBL(USBLConfig(beacon_positions=(BEACON,), noise=False, surface_multipath=True)).measure(HEAD, scene=scene)
    # image beacon at (10, 0, +10): path length sqrt(10^2 + 20^2), seen 63.43 deg up (a ghost above the beacon)
    assert u.fix[0, 0] and u.outlier[0, 0] and u.occluded[0, 0]
    assert u.slant_range[0, 0] == pytest.approx(math.hypot(10.0, 20.0), abs=1e-9)
    assert math.degrees(u.elevation[0, 0]) == pytest.approx(math.degrees(math.atan2(20.0, 10.0)), abs=1e-9)
    assert u.travel_time[0, 0] == pytest.approx(2 * math.hypot(10.0, 20.0) / 1500.0, rel=1e-12)
    assert u.true_range[0, 0] == pytest.approx(10.0)                # ground truth stays the direct distance
    # and the true direction and position are the beacon's, 10 m dead ahead, not the ghost's (10, 0, 20)
    assert u.true_bearing[0, 0] == pytest.approx(0.0, abs=1e-12)
    assert u.true_elevation[0, 0] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(u.true_position[0, 0], [10.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(u.position[0, 0], [10.0, 0.0, 20.0], atol=1e-9)    # what the head measures


def test_no_bounce_when_the_wall_cuts_the_reflected_path_and_none_when_the_direct_path_is_clear():
    blocked = USBL(USBLConfig(beacon_positions=(BEACON,), noise=False, surface_multipath=True))
    assert not blocked.measure(HEAD, scene=wall_scene(top=-3.0)).fix[0, 0]    # the wall cuts the bounce too
    clear = blocked.measure(HEAD, scene=None)                           # nothing in the way
    assert clear.fix[0, 0] and not clear.outlier[0, 0]
    assert clear.slant_range[0, 0] == pytest.approx(10.0, abs=1e-9)    # the direct arrival comes first


def test_lbl_range_by_the_surface_reflection():
    lbl = LBL(LBLConfig(beacon_ids=(1,), beacon_positions=(BEACON,), noise=False, surface_multipath=True))
    r = lbl.measure(HEAD, scene=wall_scene(top=-6.0))
    assert r.fix[0, 0] and r.outlier[0, 0]
    assert r.range[0, 0] == pytest.approx(math.hypot(10.0, 20.0), abs=1e-9)


def test_surface_multipath_must_be_a_flag():
    with pytest.raises(ConfigError, match="USBLConfig.surface_multipath"):
        USBLConfig(surface_multipath="yes")
