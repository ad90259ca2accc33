"""Polygon triangulation on hard polygons: keyholes (a slit into a hole and back), stars, collinear and repeated
vertices, zero-area spikes, and a 20,000-vertex comb in bounded memory."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, Usd, UsdGeom, Vt

from oceansim_py import load_scene
from oceansim_py.scene.usd import triangulate_polygons

# A 4 m x 3 m plate with a 1 m x 1 m hole at x 1..2, y 1..2, as one keyhole boundary: the outer rectangle
# counter-clockwise, a slit along y = 1.5 from the left edge to the hole, the hole clockwise, back along the
# slit. Area by hand: 12 - 1 = 11 m^2. The slit's two sides share coordinates but not vertex indices.
KEYHOLE = np.array([[0, 0], [4, 0], [4, 3], [0, 3], [0, 1.5], [1, 1.5], [1, 2], [2, 2], [2, 1], [1, 1],
                    [1, 1.5], [0, 1.5]], dtype=float)
KEYHOLE_AREA = 11.0
HOLE_CENTRE = (1.5, 1.5)

# A 5-pointed star: outer radius 2, inner radius 1, alternating every 36 degrees. Area by hand: 10 triangles
# (centre, outer, inner) with sides 2 and 1 at 36 degrees: 10 * 0.5 * 2 * 1 * sin(36 deg).
STAR = np.array([[(2 - k % 2) * math.cos(k * math.pi / 5 + math.pi / 2),
                  (2 - k % 2) * math.sin(k * math.pi / 5 + math.pi / 2)] for k in range(10)])
STAR_AREA = 10 * math.sin(math.pi / 5)

# An L-shape (area 3: a 2 x 2 square minus the unit square x 1..2, y 1..2) with degenerate extras: collinear
# vertices on its edges, a repeated vertex, and a zero-area spike out of the bottom edge (x = 0.5, down to -1).
L_DEGENERATE = np.array([[0, 0], [0.5, 0], [0.5, -1], [0.5, 0], [1, 0], [2, 0], [2, 0], [2, 0.5], [2, 1],
                         [1, 1], [1, 1.5], [1, 2], [0, 2], [0, 1]], dtype=float)
L_AREA = 3.0


def shoelace(xy: np.ndarray) -> float:
    x, y = xy[:, 0], xy[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def signed_areas(xy: np.ndarray, tris: np.ndarray) -> np.ndarray:
    a, b, c = (xy[tris[:, k]] for k in range(3))
    return 0.5 * ((b - a)[:, 0] * (c - a)[:, 1] - (b - a)[:, 1] * (c - a)[:, 0])


def cover_count(xy: np.ndarray, tris: np.ndarray, q: np.ndarray) -> np.ndarray:
    """How many triangles contain each query point (strictly; queries are chosen off every edge)."""
    a, b, c = (xy[tris[:, k]][:, None, :] for k in range(3))
    q = q[None, :, :]

    def side(p0, p1):
        return (p1 - p0)[..., 0] * (q - p0)[..., 1] - (p1 - p0)[..., 1] * (q - p0)[..., 0]

    inside = (side(a, b) > 0) & (side(b, c) > 0) & (side(c, a) > 0)
    return inside.sum(axis=0)


def winding(xy: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Winding number of the closed boundary xy around each query point q (M, 2)."""
    d = xy[None, :, :] - q[:, None, :]
    ang = np.arctan2(d[..., 1], d[..., 0])
    step = np.diff(np.concatenate([ang, ang[:, :1]], axis=1), axis=1)
    return np.rint(((step + math.pi) % (2 * math.pi) - math.pi).sum(axis=1) / (2 * math.pi)).astype(int)


def on_tilted_plane(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The polygon rotated 0.7 rad about x and moved off the origin; returns (points (n, 3), the plane's normal)."""
    rot = np.array([[1, 0, 0], [0, math.cos(0.7), -math.sin(0.7)], [0, math.sin(0.7), math.cos(0.7)]])
    return np.c_[xy, np.zeros(len(xy))] @ rot.T + [3.0, -1.0, 2.0], rot @ [0.0, 0.0, 1.0]


@pytest.mark.parametrize("poly, area", [(KEYHOLE, KEYHOLE_AREA), (STAR, STAR_AREA), (L_DEGENERATE, L_AREA)],
                         ids=["keyhole", "star", "collinear-duplicate-spike"])
def test_hard_polygons_are_covered_exactly_once(poly, area):
    assert shoelace(poly) == pytest.approx(area, rel=1e-12)
    n = poly.shape[0]
    pts, normal = on_tilted_plane(poly)
    tris = triangulate_polygons(pts, [n], np.arange(n))
    assert tris.shape[0] <= n - 2
    a, b, c = (pts[tris[:, k]] for k in range(3))
    cross = np.cross(b - a, c - a)
    assert np.linalg.norm(cross, axis=1).sum() / 2 == pytest.approx(area, rel=1e-9)
    assert np.all(cross @ normal >= -1e-12)  # the polygon's (counter-clockwise) winding is kept
    # every point of a grid (offset off all edges) is covered by one triangle inside the polygon, none outside
    lo, hi = poly.min(axis=0) - 0.25, poly.max(axis=0) + 0.25
    g = np.stack(np.meshgrid(np.arange(lo[0], hi[0], 0.0531) + 1e-3 * math.pi,
                             np.arange(lo[1], hi[1], 0.0497) + 1e-3 * math.e), axis=-1).reshape(-1, 2)
    np.testing.assert_array_equal(cover_count(poly, tris, g), winding(poly, g))


def test_keyhole_hole_stays_open():
    n = KEYHOLE.shape[0]
    tris = triangulate_polygons(np.c_[KEYHOLE, np.zeros(n)], [n], np.arange(n))
    assert signed_areas(KEYHOLE, tris).sum() == pytest.approx(KEYHOLE_AREA, rel=1e-9)
    assert cover_count(KEYHOLE, tris, np.array([HOLE_CENTRE]))[0] == 0
    assert cover_count(KEYHOLE, tris, np.array([[3.1, 1.4], [0.4, 0.3]])).tolist() == [1, 1]


def test_keyhole_plate_from_usd_lets_a_ray_through_its_hole(tmp_path: Path):
    path = tmp_path / "plate.usda"
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    mesh = UsdGeom.Mesh.Define(stage, "/World/Plate")
    mesh.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(float(x), float(y), 0.0) for x, y in KEYHOLE]))
    mesh.CreateFaceVertexCountsAttr(Vt.IntArray([len(KEYHOLE)]))
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray(list(range(len(KEYHOLE)))))
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    hits = scene.raycast([[*HOLE_CENTRE, 5.0], [3.0, 1.5, 5.0]], [[0, 0, -1.0]] * 2, 100.0).numpy()["distance"]
    assert np.isinf(hits[0])  # through the hole: a miss
    assert hits[1] == pytest.approx(5.0)


def comb(teeth: int) -> np.ndarray:
    """A comb, counter-clockwise: base strip x 0..2T-1, y 0..1, and T teeth x 2k..2k+1 up to y = 3; 4T vertices.
    Area by hand: (2T - 1) * 1 + T * (1 * 2) = 4T - 1."""
    pts = [(0.0, 0.0), (2.0 * teeth - 1, 0.0)]
    for k in range(teeth - 1, -1, -1):
        pts += [(2.0 * k + 1, 3.0), (2.0 * k, 3.0)]
        if k > 0:
            pts += [(2.0 * k, 1.0), (2.0 * k - 1, 1.0)]
    return np.array(pts)


def test_many_small_concave_polygons_match_their_areas():
    # 500 combs of 12 vertices (T = 3: area 11) on the vectorised path, and 500 keyholes alongside
    xy = np.concatenate([comb(3) + [20.0 * i, 0.0] for i in range(500)] + [KEYHOLE + [20.0 * i, 50.0]
                                                                           for i in range(500)])
    counts = [12] * 1000
    tris = triangulate_polygons(np.c_[xy, np.zeros(len(xy))], counts, np.arange(len(xy)))
    areas = signed_areas(xy, tris)
    assert np.all(areas >= 0)
    per_polygon = np.bincount(tris[:, 0] // 12, weights=areas, minlength=1000)
    np.testing.assert_allclose(per_polygon, [11.0] * 500 + [KEYHOLE_AREA] * 500, rtol=1e-9)


def test_a_20000_vertex_comb_in_bounded_memory():
    xy = comb(5000)
    n = xy.shape[0]
    assert n == 20_000
    pts = np.c_[xy, np.full(n, 7.0)]
    tracemalloc.start()
    try:
        tris = triangulate_polygons(pts, [n], np.arange(n))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200e6, f"peak {peak / 1e6:.0f} MB"
    assert tris.shape == (n - 2, 3)
    areas = signed_areas(xy, tris)
    assert np.all(areas > 0)
    assert areas.sum() == pytest.approx(4 * 5000 - 1, rel=1e-9)


def test_every_path_in_one_call():
    # a dart (vectorised ear clipping), a quad with a repeated vertex (fan), a keyhole (ear clipping gives a
    # clockwise triangle -> earcut) and a hexagon (fan) in one mesh; each polygon's triangles stay within its
    # own vertices
    dart = np.array([[0, 3], [1, 0], [2, 3], [1, 1]], dtype=float)              # area 1
    tri_quad = np.array([[0, 0], [1, 0], [1, 0], [0, 1]], dtype=float)           # area 0.5
    hexagon = np.array([[math.cos(a), math.sin(a)] for a in np.arange(6) * math.pi / 3])
    polys = [dart, tri_quad, KEYHOLE, hexagon]
    offsets = np.cumsum([0] + [len(p) for p in polys])
    xy = np.concatenate([p + [10.0 * i, 0.0] for i, p in enumerate(polys)])
    tris = triangulate_polygons(np.c_[xy, np.zeros(len(xy))], [len(p) for p in polys], np.arange(len(xy)))
    owner = np.searchsorted(offsets, tris, side="right") - 1
    assert np.all(owner == owner[:, :1])
    areas = np.bincount(owner[:, 0], weights=signed_areas(xy, tris), minlength=len(polys))
    np.testing.assert_allclose(areas, [1.0, 0.5, KEYHOLE_AREA, 3 * math.sqrt(3) / 2], rtol=1e-9)
