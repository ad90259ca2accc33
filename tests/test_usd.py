"""USD loading: triangulation, frames and units, instancing, animation, implicit prims, bad input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, Usd, UsdGeom, Vt

from oceansim_py import ConfigError, SceneError, load_scene
from oceansim_py.scene.materials import MaterialTable
from oceansim_py.scene.usd import read_usd, triangulate_polygons


# -- helpers -----------------------------------------------------------------------------------------------

def new_stage(tmp_path: Path, name: str = "s.usda", up: str = "Z", mpu: float = 1.0) -> tuple[Usd.Stage, Path]:
    path = tmp_path / name
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y if up == "Y" else UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    return stage, path


def add_mesh(stage: Usd.Stage, path: str, points, counts, indices) -> UsdGeom.Mesh:
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(*map(float, p)) for p in points]))
    mesh.CreateFaceVertexCountsAttr(Vt.IntArray([int(c) for c in counts]))
    mesh.CreateFaceVertexIndicesAttr(Vt.IntArray([int(i) for i in indices]))
    return mesh


def add_square(stage: Usd.Stage, path: str, size: float = 2.0, x: float = 0.0) -> UsdGeom.Mesh:
    """A square in the plane x = ``x`` (local), facing -x, side ``size``."""
    h = size / 2
    pts = [(x, -h, -h), (x, -h, h), (x, h, h), (x, h, -h)]
    return add_mesh(stage, path, pts, [4], [0, 1, 2, 3])


def textured_material(stage: Usd.Stage, looks: str, image: str, inputs: dict | None = None):
    """A UsdPreviewSurface material at ``looks`` whose diffuse colour is the texture ``image`` read through the
    ``st`` primvar; ``inputs``: more UsdUVTexture inputs (name -> (Sdf value type name, value))."""
    from pxr import Sdf, UsdShade

    mat = UsdShade.Material.Define(stage, looks)
    surface = UsdShade.Shader.Define(stage, f"{looks}/surface")
    surface.CreateIdAttr("UsdPreviewSurface")
    tex = UsdShade.Shader.Define(stage, f"{looks}/texture")
    tex.CreateIdAttr("UsdUVTexture")
    tex.CreateInput("file", Sdf.ValueTypeNames.Asset).Set(image)
    for name, (kind, value) in (inputs or {}).items():
        tex.CreateInput(name, getattr(Sdf.ValueTypeNames, kind)).Set(value)
    reader = UsdShade.Shader.Define(stage, f"{looks}/st")
    reader.CreateIdAttr("UsdPrimvarReader_float2")
    reader.CreateInput("varname", Sdf.ValueTypeNames.Token).Set("st")
    tex.CreateInput("st", Sdf.ValueTypeNames.Float2).ConnectToSource(reader.ConnectableAPI(), "result")
    tex.CreateOutput("rgb", Sdf.ValueTypeNames.Float3)
    surface.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f).ConnectToSource(tex.ConnectableAPI(), "rgb")
    mat.CreateSurfaceOutput().ConnectToSource(surface.ConnectableAPI(), "surface")
    return mat


def load(stage: Usd.Stage, path: Path):
    stage.GetRootLayer().Save()
    return load_scene(path, device="cpu")


def cast(scene, origin, direction, max_range=100.0) -> float:
    return float(scene.raycast([origin], [direction], max_range).numpy()["distance"][0])


def world_triangles(scene) -> np.ndarray:
    """(F, 3, 3) world-space triangles of the scene's BVH."""
    pts = scene.geometry.points.numpy().astype(np.float64)
    return pts[scene.geometry.indices.numpy().reshape(-1, 3)]


def shoelace(xy: np.ndarray) -> float:
    x, y = xy[:, 0], xy[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def tri_areas(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    a, b, c = (points[tris[:, k]] for k in range(3))
    return 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)


# -- triangulation -----------------------------------------------------------------------------------------

# A concave "comb" decagon (counter-clockwise in xy). Area by hand: base strip x 0..5, y 0..1 = 5; tooth
# x 4..5, y 1..3 = 2; block x 1..3, y 1..3 = 4; total 11.
COMB = np.array([[0, 0], [5, 0], [5, 3], [4, 3], [4, 1], [3, 1], [3, 3], [1, 3], [1, 1], [0, 1]], dtype=float)
COMB_AREA = 11.0
# A dart (concave quad) whose reflex vertex is the last one, so a fan from vertex 0 would cover 5 instead of 1.
DART = np.array([[0, 3], [1, 0], [2, 3], [1, 1]], dtype=float)


def test_shoelace_values_by_hand():
    assert shoelace(COMB) == COMB_AREA
    # dart: triangle (0,3),(1,0),(2,3) has area 3; the notch triangle (0,3),(1,1),(2,3) has area 2 -> 1
    assert shoelace(DART) == pytest.approx(1.0)


@pytest.mark.parametrize("poly", [
    np.array([[0, 0], [2, 0], [2, 1], [0, 1]], dtype=float),                                   # quad
    np.array([[math.cos(a), math.sin(a)] for a in np.arange(5) * 2 * math.pi / 5]),            # pentagon
    DART,
    COMB,
    np.array([[(1 + (k % 2)) * math.cos(k * math.pi / 6), (1 + (k % 2)) * math.sin(k * math.pi / 6)]
              for k in range(12)]),                                                             # star
])
def test_triangulation_keeps_count_area_and_winding(poly):
    n = poly.shape[0]
    # put the polygon on a tilted plane in 3D to exercise the projection
    rot = np.array([[1, 0, 0], [0, math.cos(0.7), -math.sin(0.7)], [0, math.sin(0.7), math.cos(0.7)]])
    pts = np.c_[poly, np.zeros(n)] @ rot.T + [3.0, -1.0, 2.0]
    tris = triangulate_polygons(pts, [n], np.arange(n))
    assert tris.shape == (n - 2, 3)
    areas = tri_areas(pts, tris)
    assert areas.sum() == pytest.approx(shoelace(poly), rel=1e-9)
    # every triangle keeps the polygon's (counter-clockwise) winding: normal along the rotated +z
    a, b, c = (pts[tris[:, k]] for k in range(3))
    normals = np.cross(b - a, c - a)
    assert np.all(normals @ (rot @ [0, 0, 1.0]) > 0)


def test_triangulation_of_a_batch_of_random_concave_polygons():
    # star-shaped around the origin (angles jittered within their sector, random radii): simple, mostly concave
    rng = np.random.default_rng(7)
    p_count, n = 60, 48
    ang = (np.arange(n) + rng.uniform(0, 0.9, (p_count, n))) * 2 * math.pi / n
    r = rng.uniform(0.1, 1.0, (p_count, n))
    xy = np.stack([r * np.cos(ang), r * np.sin(ang)], axis=-1)
    pts = np.c_[xy.reshape(-1, 2), np.zeros(p_count * n)]
    tris = triangulate_polygons(pts, np.full(p_count, n), np.arange(p_count * n))
    assert tris.shape == (p_count * (n - 2), 3)
    # each triangle stays within its polygon's vertex range, areas add up per polygon, winding kept
    owner = tris // n
    assert np.all(owner == owner[:, :1])
    areas = np.bincount(owner[:, 0], weights=tri_areas(pts, tris), minlength=p_count)
    np.testing.assert_allclose(areas, [shoelace(p) for p in xy], rtol=1e-9)
    a, b, c = (pts[tris[:, k]] for k in range(3))
    assert np.all(np.cross(b - a, c - a)[:, 2] > 0)


def test_triangulation_of_mixed_polygons_is_grouped_and_complete():
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    pts2 = np.concatenate([square, square + [2, 0], DART + [5, 0], COMB + [0, 5], np.array([[9, 9], [10, 9], [9, 10]])])
    pts = np.c_[pts2, np.zeros(len(pts2))]
    counts = [4, 4, 4, 10, 3]
    tris = triangulate_polygons(pts, counts, np.arange(len(pts2)))
    assert tris.shape == (2 + 2 + 2 + 8 + 1, 3)
    assert tri_areas(pts, tris).sum() == pytest.approx(1 + 1 + 1 + COMB_AREA + 0.5)


def test_ngon_mesh_from_usd_keeps_area(tmp_path):
    stage, path = new_stage(tmp_path)
    pts = np.c_[COMB, np.full(10, 1.0)]
    pent = np.c_[[[math.cos(a), math.sin(a)] for a in np.arange(5) * 2 * math.pi / 5], np.zeros(5)] + [10, 0, 0]
    add_mesh(stage, "/World/Floor", np.concatenate([pts, pent]), [10, 5], list(range(15)))
    scene = load(stage, path)
    assert scene.num_triangles == 8 + 3
    tri = world_triangles(scene)
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1).sum()
    assert area == pytest.approx(COMB_AREA + 2.5 * math.sin(2 * math.pi / 5), rel=1e-6)
    # a ray straight down onto the comb's notch (x = 3.5, y = 2) misses; onto its block (2, 2) hits at 1 m
    assert cast(scene, [3.5, 2.0, 2.0], [0, 0, -1]) == math.inf
    assert cast(scene, [2.0, 2.0, 2.0], [0, 0, -1]) == pytest.approx(1.0, abs=1e-5)


# -- frames and units --------------------------------------------------------------------------------------

def test_y_up_stage_lands_z_up(tmp_path):
    stage, path = new_stage(tmp_path, up="Y")
    xf = UsdGeom.Xform.Define(stage, "/World/Marker")
    xf.AddTranslateOp().Set(Gf.Vec3d(1.0, 2.0, 3.0))
    # a 2 m square in the Y-up ground plane (normal +y), centred on the Xform's origin
    add_mesh(stage, "/World/Marker/Pad", [(-1, 0, -1), (-1, 0, 1), (1, 0, 1), (1, 0, -1)], [4], [0, 1, 2, 3])
    scene = load(stage, path)
    assert scene.metadata["up_axis"] == "Y"
    node = scene.node("/World/Marker")
    # Y-up (1, 2, 3) -> Z-up (x, -z, y) = (1, -3, 2)
    np.testing.assert_allclose(node.transform[:3, 3], [1.0, -3.0, 2.0], atol=1e-12)
    lo, hi = scene.bounds
    np.testing.assert_allclose(lo, [0.0, -4.0, 2.0], atol=1e-6)
    np.testing.assert_allclose(hi, [2.0, -2.0, 2.0], atol=1e-6)
    # the pad is horizontal at z = 2 in the world: a ray straight up from (1, -3, 0) hits it at 2 m
    assert cast(scene, [1.0, -3.0, 0.0], [0, 0, 1]) == pytest.approx(2.0, abs=1e-5)


def test_meters_per_unit_centimetres(tmp_path):
    stage, path = new_stage(tmp_path, mpu=0.01)
    cube = UsdGeom.Cube.Define(stage, "/World/Box")
    cube.CreateSizeAttr(100.0)                                # 1 m
    cube.AddTranslateOp().Set(Gf.Vec3d(500.0, 0.0, 0.0))     # 5 m ahead
    scene = load(stage, path)
    assert scene.metadata["meters_per_unit"] == pytest.approx(0.01)
    assert cast(scene, [0.0, 0.0, 0.0], [1, 0, 0]) == pytest.approx(4.5, abs=1e-5)
    np.testing.assert_allclose(scene.node("/World/Box").transform[:3, 3], [5.0, 0.0, 0.0], atol=1e-12)
    v = scene.node("/World/Box").mesh.vertices
    np.testing.assert_allclose(v.max(axis=0) - v.min(axis=0), [1.0, 1.0, 1.0], atol=1e-12)


def test_y_up_centimetres_together(tmp_path):
    stage, path = new_stage(tmp_path, up="Y", mpu=0.01)
    sq = add_square(stage, "/World/Wall", size=200.0, x=0.0)
    UsdGeom.Xformable(sq).AddTranslateOp().Set(Gf.Vec3d(300.0, 0.0, -100.0))   # x 3 m, Y-up z -1 m -> world y +1
    scene = load(stage, path)
    assert cast(scene, [0.0, 1.0, 0.0], [1, 0, 0]) == pytest.approx(3.0, abs=1e-5)
    assert cast(scene, [0.0, 2.5, 0.0], [1, 0, 0]) == math.inf


# -- instancing ----------------------------------------------------------------------------------------------

def test_instance_proxies_are_placed(tmp_path):
    stage, path = new_stage(tmp_path)
    stage.CreateClassPrim("/Protos")
    UsdGeom.Xform.Define(stage, "/Protos/Tile")
    add_square(stage, "/Protos/Tile/Geom", size=1.0, x=0.0)
    for k, y in enumerate([0.0, 3.0, 6.0]):
        xf = UsdGeom.Xform.Define(stage, f"/World/Tile_{k}")
        xf.AddTranslateOp().Set(Gf.Vec3d(4.0 + k, y, 0.0))
        xf.GetPrim().GetReferences().AddInternalReference("/Protos/Tile")
        xf.GetPrim().SetInstanceable(True)
    scene = load(stage, path)
    assert stage.GetPrimAtPath("/World/Tile_1/Geom").IsInstanceProxy()
    assert scene.num_triangles == 3 * 2
    assert [n.path for n in scene.mesh_nodes()] == [f"/World/Tile_{k}/Geom" for k in range(3)]
    for k, y in enumerate([0.0, 3.0, 6.0]):
        assert cast(scene, [0.0, y, 0.0], [1, 0, 0]) == pytest.approx(4.0 + k, abs=1e-5)


def test_point_instancer_places_each_prototype(tmp_path):
    stage, path = new_stage(tmp_path)
    inst = UsdGeom.PointInstancer.Define(stage, "/World/Inst")
    UsdGeom.Xformable(inst).AddTranslateOp().Set(Gf.Vec3d(0.0, 0.0, 1.0))
    box = UsdGeom.Cube.Define(stage, "/World/Inst/Protos/Box")
    box.CreateSizeAttr(1.0)
    ball = UsdGeom.Sphere.Define(stage, "/World/Inst/Protos/Ball")
    ball.CreateRadiusAttr(0.5)
    inst.CreatePrototypesRel().SetTargets([box.GetPath(), ball.GetPath()])
    inst.CreateProtoIndicesAttr(Vt.IntArray([0, 1, 0, 0]))
    inst.CreatePositionsAttr(Vt.Vec3fArray([Gf.Vec3f(5, 0, 0), Gf.Vec3f(10, 0, 0), Gf.Vec3f(5, 4, 0),
                                            Gf.Vec3f(5, -4, 0)]))
    inst.CreateScalesAttr(Vt.Vec3fArray([Gf.Vec3f(1, 1, 1), Gf.Vec3f(1, 1, 1), Gf.Vec3f(2, 2, 2),
                                         Gf.Vec3f(1, 1, 1)]))
    inst.CreateInvisibleIdsAttr(Vt.Int64Array([3]))
    scene = load(stage, path)
    assert scene.num_triangles == 2 * 12 + 1280
    paths = {n.path for n in scene.mesh_nodes()}
    assert paths == {"/World/Inst/instance_0/Box", "/World/Inst/instance_1/Ball", "/World/Inst/instance_2/Box"}
    assert scene.node("/World/Inst/instance_1/Ball").parent.path == "/World/Inst/instance_1"
    # instancer at z = 1; box 0 at x = 5 (front face 4.5), ball at x = 10 (front 9.5), box 2 scaled 2 at y = 4
    assert cast(scene, [0.0, 0.0, 1.0], [1, 0, 0], 7.0) == pytest.approx(4.5, abs=1e-5)
    assert cast(scene, [7.0, 0.0, 1.0], [1, 0, 0]) == pytest.approx(2.5, abs=0.005)
    assert cast(scene, [0.0, 4.0, 1.0], [1, 0, 0]) == pytest.approx(4.0, abs=1e-5)
    assert cast(scene, [0.0, -4.0, 1.0], [1, 0, 0]) == math.inf          # invisible id 3


def test_animated_point_instancer_moves_its_instances(tmp_path):
    stage, path = new_stage(tmp_path)
    stage.SetTimeCodesPerSecond(1.0)
    inst = UsdGeom.PointInstancer.Define(stage, "/World/Inst")
    op = UsdGeom.Xformable(inst).AddTranslateOp()
    op.Set(Gf.Vec3d(0, 0, 0), 0.0)
    op.Set(Gf.Vec3d(3, 0, 0), 2.0)
    box = UsdGeom.Cube.Define(stage, "/World/Inst/Protos/Box")
    inst.CreatePrototypesRel().SetTargets([box.GetPath()])
    inst.CreateProtoIndicesAttr(Vt.IntArray([0, 0]))
    inst.CreatePositionsAttr(Vt.Vec3fArray([Gf.Vec3f(5, 0, 0), Gf.Vec3f(5, 10, 0)]))
    scene = load(stage, path)
    assert cast(scene, [0, 10, 0], [1, 0, 0]) == pytest.approx(4.0, abs=1e-5)      # cube size 2: face at x = 4
    scene.set_time(2.0)
    assert cast(scene, [0, 10, 0], [1, 0, 0]) == pytest.approx(7.0, abs=1e-5)
    assert cast(scene, [0, 0, 0], [1, 0, 0]) == pytest.approx(7.0, abs=1e-5)


# -- animation -----------------------------------------------------------------------------------------------

def test_animated_parent_moves_child_and_set_time_refits(tmp_path):
    stage, path = new_stage(tmp_path)
    stage.SetTimeCodesPerSecond(24.0)
    stage.SetStartTimeCode(0.0)
    stage.SetEndTimeCode(48.0)
    rig = UsdGeom.Xform.Define(stage, "/World/Rig")
    op = rig.AddTranslateOp()
    op.Set(Gf.Vec3d(0, 0, 0), 0.0)
    op.Set(Gf.Vec3d(2, 0, 0), 24.0)
    add_square(stage, "/World/Rig/Wall", size=4.0, x=5.0)
    add_square(stage, "/World/Fixed", size=4.0, x=20.0)
    scene = load(stage, path)
    assert scene.is_animated and scene.metadata["start_time"] == 0.0
    wall = scene.node("/World/Rig/Wall")
    assert wall.track is not None and scene.node("/World/Fixed").track is None
    np.testing.assert_allclose(wall.track.times, [0.0, 1.0])        # time codes 0, 24 at 24 per second
    assert cast(scene, [0, 0, 0], [1, 0, 0]) == pytest.approx(5.0, abs=1e-5)
    scene.set_time(1.0)
    assert cast(scene, [0, 0, 0], [1, 0, 0]) == pytest.approx(7.0, abs=1e-5)
    scene.set_time(0.5)
    assert cast(scene, [0, 0, 0], [1, 0, 0]) == pytest.approx(6.0, abs=1e-5)
    assert cast(scene, [0, 0, 0.5], [1, 0, 0], 30.0) == pytest.approx(6.0, abs=1e-5)


def test_start_time_code_sets_initial_pose(tmp_path):
    stage, path = new_stage(tmp_path)
    stage.SetTimeCodesPerSecond(10.0)
    stage.SetStartTimeCode(10.0)
    stage.SetEndTimeCode(20.0)
    wall = add_square(stage, "/World/Wall", size=4.0, x=0.0)
    op = UsdGeom.Xformable(wall).AddTranslateOp()
    op.Set(Gf.Vec3d(3, 0, 0), 0.0)
    op.Set(Gf.Vec3d(5, 0, 0), 20.0)
    scene = load(stage, path)
    assert scene.metadata["start_time"] == pytest.approx(1.0)
    assert scene.time == pytest.approx(1.0)
    assert cast(scene, [0, 0, 0], [1, 0, 0]) == pytest.approx(4.0, abs=1e-5)


# -- winding ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("orientation,scale_z,expected_z", [
    ("rightHanded", 1.0, 1.0), ("leftHanded", 1.0, -1.0), ("rightHanded", -1.0, -1.0), ("leftHanded", -1.0, 1.0)])
def test_left_handed_and_mirrored_winding(tmp_path, orientation, scale_z, expected_z):
    stage, path = new_stage(tmp_path)
    mesh = add_mesh(stage, "/World/Tri", [(0, 0, 0), (1, 0, 0), (0, 1, 0)], [3], [0, 1, 2])
    mesh.CreateOrientationAttr(orientation)
    UsdGeom.Xformable(mesh).AddScaleOp().Set(Gf.Vec3f(1.0, 1.0, scale_z))
    scene = load(stage, path)
    node = scene.node("/World/Tri")
    a, b, c = node.mesh.vertices[node.mesh.triangles[0]]
    assert np.sign(np.cross(b - a, c - a)[2]) == (1.0 if orientation == "rightHanded" else -1.0)
    tri = world_triangles(scene)[0]
    normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
    assert np.sign(normal[2]) == expected_z


# -- visibility, purpose, implicit prims ------------------------------------------------------------------

def test_invisible_and_guide_prims_are_skipped(tmp_path):
    stage, path = new_stage(tmp_path)
    hidden = UsdGeom.Xform.Define(stage, "/World/Hidden")
    hidden.CreateVisibilityAttr(UsdGeom.Tokens.invisible)
    add_square(stage, "/World/Hidden/Wall", x=3.0)
    guide = add_square(stage, "/World/Guide", x=4.0)
    guide.CreatePurposeAttr(UsdGeom.Tokens.guide)
    render = add_square(stage, "/World/Render", x=5.0)
    render.CreatePurposeAttr(UsdGeom.Tokens.render)
    scene = load(stage, path)
    assert [n.path for n in scene] == ["/World", "/World/Render"]
    assert cast(scene, [0, 0, 0], [1, 0, 0]) == pytest.approx(5.0, abs=1e-5)


def test_implicit_primitives_have_their_size(tmp_path):
    stage, path = new_stage(tmp_path)
    sphere = UsdGeom.Sphere.Define(stage, "/World/Sphere")
    sphere.CreateRadiusAttr(2.0)
    sphere.AddTranslateOp().Set(Gf.Vec3d(10.0, 0.0, 0.0))
    cyl = UsdGeom.Cylinder.Define(stage, "/World/Cylinder")
    cyl.CreateRadiusAttr(0.5)
    cyl.CreateHeightAttr(4.0)
    cyl.CreateAxisAttr(UsdGeom.Tokens.x)
    cyl.AddTranslateOp().Set(Gf.Vec3d(0.0, 20.0, 0.0))
    cone = UsdGeom.Cone.Define(stage, "/World/Cone")
    cone.CreateRadiusAttr(1.0)
    cone.CreateHeightAttr(3.0)
    cone.AddTranslateOp().Set(Gf.Vec3d(0.0, -20.0, 0.0))
    cap = UsdGeom.Capsule.Define(stage, "/World/Capsule")
    cap.CreateRadiusAttr(0.5)
    cap.CreateHeightAttr(2.0)
    cap.CreateAxisAttr(UsdGeom.Tokens.y)
    cap.AddTranslateOp().Set(Gf.Vec3d(0.0, 0.0, 20.0))
    scene = load(stage, path)
    # sphere of radius 2 at x = 10: hit at 8 m, the tessellation lies within 0.5 % of the radius inside it
    d = cast(scene, [0, 0, 0], [1, 0, 0], 15.0)
    assert 8.0 <= d <= 8.0 + 0.01
    # cylinder along x: its end cap at x = -2 is flat, its side at distance 0.5 from the axis
    assert cast(scene, [-5.0, 20.0, 0.0], [1, 0, 0]) == pytest.approx(3.0, abs=1e-5)
    sagitta = 0.5 * (1 - math.cos(math.pi / 32))      # the 32-gon's flats lie this far inside the circle
    assert cast(scene, [0.0, 20.0, 5.0], [0, 0, -1]) == pytest.approx(4.5, abs=sagitta + 1e-6)

    def extent(name):
        v = scene.node(name).mesh.vertices
        return v.max(axis=0) - v.min(axis=0)

    np.testing.assert_allclose(extent("/World/Cone"), [2.0, 2.0, 3.0], atol=1e-9)
    np.testing.assert_allclose(extent("/World/Capsule"), [1.0, 3.0, 1.0], atol=1e-9)   # 2 + two 0.5 caps on y
    # cone base at z = -1.5 (flat), apex at +1.5
    assert cast(scene, [0.0, -20.0, -5.0], [0, 0, 1]) == pytest.approx(3.5, abs=1e-5)


def test_hole_faces_are_dropped(tmp_path):
    stage, path = new_stage(tmp_path)
    pts = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (2, 0, 0), (2, 1, 0)]
    mesh = add_mesh(stage, "/World/Strip", pts, [4, 4], [0, 1, 2, 3, 1, 4, 5, 2])
    mesh.CreateHoleIndicesAttr(Vt.IntArray([1]))
    scene = load(stage, path)
    assert scene.num_triangles == 2
    assert cast(scene, [1.5, 0.5, 1.0], [0, 0, -1]) == math.inf
    assert cast(scene, [0.5, 0.5, 1.0], [0, 0, -1]) == pytest.approx(1.0, abs=1e-6)


# -- metadata ------------------------------------------------------------------------------------------------

def test_custom_layer_data_metadata(tmp_path):
    stage, path = new_stage(tmp_path)
    add_square(stage, "/World/Wall", x=5.0)
    stage.GetRootLayer().customLayerData = {"oceansim": {
        "description": "a wall", "suggested_pose": Vt.DoubleArray([1, 2, -3, 0, 0, 0, 1]), "surface_z": 2.5}}
    scene = load(stage, path)
    assert scene.description == "a wall"
    assert scene.surface_z == 2.5
    np.testing.assert_allclose(scene.suggested_pose, [1, 2, -3, 0, 0, 0, 1])
    assert scene.metadata["time_codes_per_second"] == 24.0


# -- bad input -----------------------------------------------------------------------------------------------

def test_missing_and_non_usd_files(tmp_path):
    with pytest.raises(SceneError, match="nothere.usda: no such file"):
        load_scene(tmp_path / "nothere.usda", device="cpu")
    with pytest.raises(SceneError, match="nothere.usd: no such file"):
        read_usd(tmp_path / "nothere.usd", MaterialTable())
    bad = tmp_path / "garbage.usda"
    bad.write_text("this is { not usd at all\n")
    with pytest.raises(SceneError, match="garbage.usda: not a readable USD file"):
        load_scene(bad, device="cpu")
    binary = tmp_path / "noise.usdc"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(SceneError, match="noise.usdc: not a readable USD file"):
        load_scene(binary, device="cpu")


def test_stage_without_geometry(tmp_path):
    stage, path = new_stage(tmp_path, "empty.usda")
    UsdGeom.Xform.Define(stage, "/World")
    hidden = add_square(stage, "/World/Hidden")
    hidden.CreateVisibilityAttr(UsdGeom.Tokens.invisible)
    with pytest.raises(SceneError, match="empty.usda: no geometry"):
        load(stage, path)


@pytest.mark.parametrize("points,counts,indices,message", [
    ([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [3], [0, 1, 3], r"faceVertexIndices out of range: values 0..3 but the mesh "
                                                         r"has 3 points"),
    ([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [3], [0, -1, 2], r"faceVertexIndices out of range"),
    ([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [4], [0, 1, 2], r"faceVertexCounts sum to 4 but faceVertexIndices has 3"),
    ([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [3, 2], [0, 1, 2, 0, 1], r"faceVertexCounts\[1\] = 2"),
    ([(0, 0, 0), (1, math.nan, 0), (0, 1, 0)], [3], [0, 1, 2],
     r"points hold non-finite coordinates \(first at point 1\)"),
    ([(0, 0, 0), (1, 0, math.inf), (0, 1, 0)], [3], [0, 1, 2], r"points hold non-finite"),
])
def test_bad_mesh_names_file_and_prim(tmp_path, points, counts, indices, message):
    stage, path = new_stage(tmp_path, "broken.usda")
    add_square(stage, "/World/Good", x=5.0)
    add_mesh(stage, "/World/Bad", points, counts, indices)
    with pytest.raises(SceneError, match=r"broken\.usda: prim /World/Bad: " + message):
        load(stage, path)


@pytest.mark.parametrize("mpu", [0.0, -1.0, math.inf])
def test_bad_meters_per_unit(tmp_path, mpu):
    stage, path = new_stage(tmp_path, "units.usda")
    add_square(stage, "/World/Wall", x=5.0)
    stage.SetMetadata("metersPerUnit", mpu)
    with pytest.raises(SceneError, match="units.usda: stage metersPerUnit must be a finite number > 0"):
        load(stage, path)


def test_bad_point_instancer_indices(tmp_path):
    stage, path = new_stage(tmp_path, "inst.usda")
    inst = UsdGeom.PointInstancer.Define(stage, "/World/Inst")
    box = UsdGeom.Cube.Define(stage, "/World/Inst/Protos/Box")
    inst.CreatePrototypesRel().SetTargets([box.GetPath()])
    inst.CreateProtoIndicesAttr(Vt.IntArray([0, 1]))
    inst.CreatePositionsAttr(Vt.Vec3fArray([Gf.Vec3f(0, 0, 0), Gf.Vec3f(1, 0, 0)]))
    with pytest.raises(SceneError, match=r"inst\.usda: prim /World/Inst: protoIndices hold values 0..1 but there "
                                         r"are 1 prototypes"):
        load(stage, path)


def test_usd_text_file_with_usd_suffix_loads(tmp_path):
    path = tmp_path / "plain.usd"
    path.write_text('#usda 1.0\n(\n    upAxis = "Z"\n    metersPerUnit = 1\n)\n'
                    'def Cube "Box"\n{\n    double size = 2\n    double3 xformOp:translate = (4, 0, 0)\n'
                    '    uniform token[] xformOpOrder = ["xformOp:translate"]\n}\n')
    scene = load_scene(path, device="cpu")
    assert cast(scene, [0, 0, 0], [1, 0, 0]) == pytest.approx(3.0, abs=1e-5)


def test_bad_implicit_size(tmp_path):
    stage, path = new_stage(tmp_path, "shape.usda")
    add_square(stage, "/World/Wall", x=5.0)
    UsdGeom.Sphere.Define(stage, "/World/Ball").CreateRadiusAttr(-1.0)
    with pytest.raises(SceneError, match=r"shape\.usda: prim /World/Ball: Sphere needs a finite size/radius > 0"):
        load(stage, path)


def test_animation_through_zero_scale_names_prim(tmp_path):
    stage, path = new_stage(tmp_path, "squash.usda")
    wall = add_square(stage, "/World/Wall", x=5.0)
    op = UsdGeom.Xformable(wall).AddScaleOp()
    op.Set(Gf.Vec3f(1, 1, 1), 0.0)
    op.Set(Gf.Vec3f(0, 1, 1), 10.0)
    with pytest.raises(SceneError, match=r"squash\.usda: prim /World/Wall: time-sampled transform: .*zero scale"):
        load(stage, path)


# -- stage metadata and composition errors -------------------------------------------------------------------

CUBE_LAYER = """#usda 1.0
(
    upAxis = "{up}"
    metersPerUnit = 1
)
def Cube "Box"
{{
}}
"""


def test_up_axis_x_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "xup.usda"
    path.write_text(CUBE_LAYER.format(up="X"))
    with pytest.raises(SceneError, match=r"xup\.usda: stage upAxis is 'X', but USD allows only \"Y\" or \"Z\""):
        load_scene(path, device="cpu")
    path.write_text(CUBE_LAYER.format(up="Z"))
    assert load_scene(path, device="cpu").num_triangles == 12


def write_stage_with_missing_assets(tmp_path: Path) -> Path:
    """A stage with a Cube of its own, a reference and a payload whose files do not exist, and a reference to
    a prim that its (existing) file does not hold."""
    (tmp_path / "parts.usda").write_text(CUBE_LAYER.format(up="Z"))
    path = tmp_path / "harbour.usda"
    path.write_text("""#usda 1.0
(
    upAxis = "Z"
    metersPerUnit = 1
)
def Xform "World"
{
    def Xform "Rock" (
        prepend references = @./missing_rock.usda@
    )
    {
    }
    def Xform "Hull" (
        prepend payload = @./gone/hull.usdc@</Hull>
    )
    {
    }
    def Xform "Crate" (
        prepend references = @./parts.usda@</NoSuchPrim>
    )
    {
    }
    def Cube "Pier"
    {
    }
}
""")
    return path


def test_missing_references_are_an_error_naming_prim_and_asset(tmp_path):
    path = write_stage_with_missing_assets(tmp_path)
    with pytest.raises(SceneError) as info:
        load_scene(path, device="cpu")
    msg = str(info.value)
    assert msg.startswith(f"{path}: 3 missing reference(s)")
    assert "prim /World/Rock: " in msg and "missing_rock.usda" in msg
    assert "prim /World/Hull: " in msg and "hull.usdc" in msg
    assert "prim /World/Crate: " in msg and "/NoSuchPrim" in msg
    assert 'missing_references="warn"' in msg


def test_missing_references_opt_out_warns_and_loads_the_rest(tmp_path, caplog):
    path = write_stage_with_missing_assets(tmp_path)
    with caplog.at_level("WARNING", logger="oceansim_py.scene.usd"):
        scene = load_scene(path, device="cpu", missing_references="warn")
    assert scene.num_triangles == 12                                    # the Pier cube only
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "/World/Rock" in warned and "/World/Hull" in warned and "/World/Crate" in warned
    with pytest.raises(ConfigError, match="missing_references must be one of"):
        load_scene(path, device="cpu", missing_references="ignore")
