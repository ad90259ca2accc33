"""Scene loaders checked by hand: small USD stages and SDF worlds written here, each hit by rays whose distances and
hit nodes are computed by hand in the comments; bad inputs (include cycles, non-finite transforms) give SceneErrors
naming the file and the element."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pxr import Gf, Sdf, Usd, UsdGeom, UsdShade, Vt

from oceansim_py import SceneError, load_scene


def _stage(path, up: str = "Z", mpu: float = 1.0) -> Usd.Stage:
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, up)
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    return stage


def _quad_x(stage: Usd.Stage, path: str, x: float, half_y: float, half_z: float) -> UsdGeom.Mesh:
    """A quad in the plane x = const, spanning y in [-half_y, half_y], z in [-half_z, half_z] (stage units)."""
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr([(x, -half_y, -half_z), (x, half_y, -half_z), (x, half_y, half_z), (x, -half_y, half_z)])
    mesh.CreateFaceVertexCountsAttr([4])
    mesh.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
    return mesh


def _cast(scene, origins, directions) -> dict[str, np.ndarray]:
    return scene.raycast(np.asarray(origins, dtype=float), np.asarray(directions, dtype=float)).numpy()


def assert_l_and_quad_hit_and_notch_missed(scene) -> None:
    """Rays down from z = 1 over the L-hexagon (0, 0)-(2, 0)-(2, 1)-(1, 1)-(1, 2)-(0, 2) and the quad x in [5, 6],
    y in [0, 1], both at z = 0: hits at 1 m in the L at (0.5, 0.5), (1.5, 0.5), (0.5, 1.5) and the quad at (5.5, 0.5);
    misses in the L's notch at (1.5, 1.5) and (1.2, 1.2)."""
    xy = [(0.5, 0.5), (1.5, 0.5), (0.5, 1.5), (5.5, 0.5), (1.5, 1.5), (1.2, 1.2)]
    r = _cast(scene, [[x, y, 1] for x, y in xy], [[0, 0, -1]] * 6)
    np.testing.assert_allclose(r["distance"][:4], 1.0, atol=1e-6)
    assert np.isinf(r["distance"][4:]).all()


def test_centimetre_y_up_stage_with_translate_rotate_scale_lands_where_computed(tmp_path):
    # Y-up stage in cm. /W/A: xformOpOrder [translate (0, -1000, 0), rotateXYZ (0, 90, 0), scale (2, 1, 1)], so a
    # local point p goes to T Ry(90) S p. The quad: x = 100, y in +-50, z in +-20 (cm).
    # S: (200, y, z); Ry(90): (x, y, z) -> (z, y, -x) gives (z, y, -200); T: (z, y - 1000, -200).
    # Stage -> world: 0.01 * (x, -z, y) = (0.01 z, 2, 0.01 y - 10): the quad is the plane y = 2 m,
    # x in +-0.2 m, z in [-10.5, -9.5] m. (A rotation of the wrong sign would put it at y = -2.)
    path = tmp_path / "cm.usda"
    stage = _stage(path, "Y", 0.01)
    xf = UsdGeom.Xform.Define(stage, "/W/A")
    xf.AddTranslateOp().Set(Gf.Vec3d(0, -1000, 0))
    xf.AddRotateXYZOp().Set(Gf.Vec3f(0, 90, 0))
    xf.AddScaleOp().Set(Gf.Vec3f(2, 1, 1))
    _quad_x(stage, "/W/A/quad", 100, 50, 20)
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    origins = [[0, 0, -10], [0.18, 0, -10], [0.22, 0, -10], [0, 0, -10.45], [0, 0, -10.55], [0, 0, -10]]
    dirs = [[0, 1, 0]] * 5 + [[0, -1, 0]]
    r = _cast(scene, origins, dirs)
    np.testing.assert_allclose(r["distance"][[0, 1, 3]], 2.0, atol=1e-5)
    assert np.isinf(r["distance"][[2, 4, 5]]).all()
    np.testing.assert_allclose(r["normal"][0], [0, -1, 0], atol=1e-6)  # facing the ray


def test_rotation_orders_and_orient_quaternion_by_hand(tmp_path):
    # Z-up metres. Each Xform holds a quad in the plane x = 5 (y, z in +-0.5) rotated by one op:
    # rotateXYZ (90, 0, 90): X first ((5,0,0) stays), then Z 90: (5,0,0) -> (0,5,0): a ray +y hits at 5.
    # rotateZYX (90, 0, 90): Z first: (0,5,0), then X 90 ((x,y,z) -> (x,-z,y)): (0,0,5): a ray +z hits at 5.
    # orient q = (w, x, y, z) = (cos -45deg, 0, 0, sin -45deg), -90 deg about z: (5,0,0) -> (0,-5,0): ray -y at 5.
    path = tmp_path / "orders.usda"
    stage = _stage(path)
    UsdGeom.Xform.Define(stage, "/W/xyz").AddRotateXYZOp().Set(Gf.Vec3f(90, 0, 90))
    UsdGeom.Xform.Define(stage, "/W/zyx").AddRotateZYXOp().Set(Gf.Vec3f(90, 0, 90))
    half = math.sqrt(0.5)
    UsdGeom.Xform.Define(stage, "/W/quat").AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(
        Gf.Quatd(half, 0, 0, -half))
    for name in ("xyz", "zyx", "quat"):
        _quad_x(stage, f"/W/{name}/quad", 5, 0.5, 0.5)
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0, 0, 0]] * 4, [[0, 1, 0], [0, 0, 1], [0, -1, 0], [1, 0, 0]])
    np.testing.assert_allclose(r["distance"][:3], 5.0, atol=1e-5)
    assert [scene.node(int(o)).path for o in r["object"][:3]] == ["/W/xyz/quad", "/W/zyx/quad", "/W/quat/quad"]
    assert np.isinf(r["distance"][3])  # no quad is left at +x


def test_direct_binding_beats_an_ancestors_material_and_a_collection_binding_reaches_its_mesh(tmp_path):
    # /W/P is bound to "rock", its child /W/P/C names oceansim:material "steel", and the mesh /W/P/C/G under it
    # has its own direct binding to "rock": the nearest value is the mesh's own binding, so G is rock (it was
    # steel: a binding to the same material as an ancestor's was taken as inherited). /W/Q/H gets "sand" through
    # a collection binding on /W naming it; its sibling /W/Q/K, not in the collection, keeps the default.
    path = tmp_path / "bindings.usda"
    stage = _stage(path)
    rock = UsdShade.Material.Define(stage, "/Looks/rock")
    sand = UsdShade.Material.Define(stage, "/Looks/sand")
    UsdShade.MaterialBindingAPI.Apply(UsdGeom.Xform.Define(stage, "/W/P").GetPrim()).Bind(rock)
    UsdGeom.Xform.Define(stage, "/W/P/C").GetPrim().CreateAttribute(
        "oceansim:material", Sdf.ValueTypeNames.String).Set("steel")
    UsdShade.MaterialBindingAPI.Apply(_quad_x(stage, "/W/P/C/G", 5, 1, 1).GetPrim()).Bind(rock)
    _quad_x(stage, "/W/P/C/Sib", 7, 1, 1)  # no binding of its own: inherits C's steel
    _quad_x(stage, "/W/Q/H", -5, 1, 1)
    _quad_x(stage, "/W/Q/K", -7, 1, 3)
    coll = Usd.CollectionAPI.Apply(stage.GetPrimAtPath("/W"), "sandy")
    coll.CreateIncludesRel().AddTarget("/W/Q/H")
    UsdShade.MaterialBindingAPI.Apply(stage.GetPrimAtPath("/W")).Bind(coll, sand, "sandy")
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    # rays: +x hits G at 5; -x hits H at 5; -x at z = 2 passes over H (|z| <= 1) and hits K at 7; +x at z = -1.5
    # passes G and hits nothing (Sib spans |z| <= 1 too), so Sib is checked from its node.
    r = _cast(scene, [[0, 0, 0], [0, 0, 0], [0, 0, 2]], [[1, 0, 0], [-1, 0, 0], [-1, 0, 0]])
    np.testing.assert_allclose(r["distance"], [5.0, 5.0, 7.0], atol=1e-5)
    hit = [scene.node(int(o)) for o in r["object"]]
    assert [n.path for n in hit] == ["/W/P/C/G", "/W/Q/H", "/W/Q/K"]
    assert [n.material.name for n in hit] == ["rock", "sand", "default"]
    assert scene.node("/W/P/C/Sib").material.name == "steel"


@pytest.mark.parametrize("case", ["translate", "instancer"])
def test_non_finite_transform_names_the_file_and_prim(tmp_path, case):
    # A NaN translate (or a NaN PointInstancer position) used to load with a warning that its triangles were
    # dropped as degenerate; it is bad input, refused naming the prim.
    path = tmp_path / "nan.usda"
    stage = _stage(path)
    _quad_x(stage, "/W/ok", 5, 1, 1)
    if case == "translate":
        xf = UsdGeom.Xform.Define(stage, "/W/X")
        xf.AddTranslateOp().Set(Gf.Vec3d(float("nan"), 0, 0))
        UsdGeom.Cube.Define(stage, "/W/X/c")
        prim = "/W/X"
    else:
        inst = UsdGeom.PointInstancer.Define(stage, "/W/I")
        UsdGeom.Cube.Define(stage, "/W/I/Protos/c")
        inst.CreatePrototypesRel().AddTarget("/W/I/Protos/c")
        inst.CreateProtoIndicesAttr([0, 0])
        inst.CreatePositionsAttr([(0, 0, -3), (float("nan"), 0, 0)])
        prim = "/W/I/instance_1"
    stage.GetRootLayer().Save()
    with pytest.raises(SceneError, match=f"nan.usda: prim {prim}: .*non-finite"):
        load_scene(path, device="cpu")


_BOX = '<link name="l"><visual name="v"><geometry><box><size>{}</size></box></geometry></visual></link>'


def test_sdf_degrees_relative_to_frames_and_quaternions_by_hand(tmp_path):
    # m: pose (1, 2, 3), yaw 90 degrees (degrees="true"); its link at (1, 0, 0) in m's frame: Rz(90) (1,0,0) =
    #    (0,1,0), so the link and its 0.2 m box are at (1, 3, 3). A ray down from (1, 3, 10) meets the top z = 3.1
    #    at 6.9 m. (Read as 90 radians the link would be at (1 + cos 90, 2 + sin 90, 3) = (0.55, 2.89, 3): a miss.)
    # f: a world frame relative_to m at (0, 0, -1) in m's frame: (1, 2, 2). n: relative_to f at (0, 1, 0): f has m's
    #    yaw, so (0,1,0) -> (-1,0,0): n is at (0, 2, 2); a ray up from (0, 2, -2) meets its bottom z = 1.9 at 3.9.
    # q: quat_xyzw (0, 0, sin 45, cos 45) = yaw 90 at (0, 0, -5): its 2 x 0.2 x 0.2 box is long along world y,
    #    so a ray +x at y = 0.9, z = -5 meets its face x = -0.1 at 4.9 m from x = -5.
    s = math.sqrt(0.5)
    world = f"""<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <model name="m"><pose degrees="true">1 2 3 0 0 90</pose>
    <link name="l"><pose>1 0 0 0 0 0</pose><visual name="v"><geometry><box><size>0.2 0.2 0.2</size></box>
    </geometry></visual></link></model>
  <frame name="f"><pose relative_to="m">0 0 -1 0 0 0</pose></frame>
  <model name="n"><pose relative_to="f">0 1 0 0 0 0</pose>{_BOX.format("0.2 0.2 0.2")}</model>
  <model name="q"><pose rotation_format="quat_xyzw">0 0 -5 0 0 {s} {s}</pose>{_BOX.format("2 0.2 0.2")}</model>
</world></sdf>"""
    path = tmp_path / "w.sdf"
    path.write_text(world)
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[1, 3, 10], [0, 2, -2], [-5, 0.9, -5], [-5, -0.9, -5]],
              [[0, 0, -1], [0, 0, 1], [1, 0, 0], [1, 0, 0]])
    np.testing.assert_allclose(r["distance"], [6.9, 3.9, 4.9, 4.9], atol=1e-5)
    assert [scene.node(int(o)).label for o in r["object"]] == ["m", "n", "q", "q"]


def test_sdf_include_cycle_is_a_scene_error(tmp_path):
    # a.sdf includes itself: the include-depth guard used to be undone before the nested include was read, so the
    # load ended in a RecursionError instead of a SceneError naming the file.
    (tmp_path / "a.sdf").write_text(f'<sdf version="1.9"><model name="a"><include><uri>a.sdf</uri><name>b</name>'
                                    f'</include>{_BOX.format("1 1 1")}</model></sdf>')
    (tmp_path / "w.sdf").write_text('<sdf version="1.9"><world name="w"><include><uri>a.sdf</uri></include>'
                                    '</world></sdf>')
    with pytest.raises(SceneError, match="a.sdf includes itself"):
        load_scene(tmp_path / "w.sdf", device="cpu")


def test_sdf_the_same_model_included_twice_side_by_side_is_no_cycle(tmp_path):
    # two includes of one model file (x = -2 and x = +2; the box is 1 m): rays down from z = 5 meet the top z = 0.5
    # at 4.5 m above both.
    (tmp_path / "a.sdf").write_text(f'<sdf version="1.9"><model name="a">{_BOX.format("1 1 1")}</model></sdf>')
    (tmp_path / "w.sdf").write_text(
        '<sdf version="1.9"><world name="w">'
        '<include><uri>a.sdf</uri><name>left</name><pose>-2 0 0 0 0 0</pose></include>'
        '<include><uri>a.sdf</uri><name>right</name><pose>2 0 0 0 0 0</pose></include></world></sdf>')
    scene = load_scene(tmp_path / "w.sdf", device="cpu")
    r = _cast(scene, [[-2, 0, 5], [2, 0, 5], [0, 0, 5]], [[0, 0, -1]] * 3)
    np.testing.assert_allclose(r["distance"][:2], 4.5, atol=1e-5)
    assert np.isinf(r["distance"][2])
    assert [scene.node(int(o)).label for o in r["object"][:2]] == ["left", "right"]


@pytest.mark.parametrize("specifier", ["over", "class"])
def test_point_instancer_prototypes_under_an_over_or_class_prim_keep_their_meshes(tmp_path, specifier):
    # The recommended layout hides prototypes from the stage traversal under an `over` (or `class`) prim. Each
    # instance of /W/I/Protos/tree (a 2 m quad at z = 0 under its Xform) sits at (0, 0, -5) and (10, 0, -5): rays
    # down from z = 0 at x = 0 and x = 10 meet the quads at 5 m, one at x = 5 meets nothing. (The prototype's
    # children were dropped as undefined/abstract prims, so both rays missed.)
    path = tmp_path / "protos.usda"
    path.write_text(f"""#usda 1.0
(
    upAxis = "Z"
    metersPerUnit = 1
)
def Xform "W"
{{
    def PointInstancer "I"
    {{
        rel prototypes = [</W/I/Protos/tree>]
        int[] protoIndices = [0, 0]
        point3f[] positions = [(0, 0, -5), (10, 0, -5)]
        {specifier} "Protos"
        {{
            def Xform "tree"
            {{
                def Mesh "trunk"
                {{
                    point3f[] points = [(-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0)]
                    int[] faceVertexCounts = [4]
                    int[] faceVertexIndices = [0, 1, 2, 3]
                }}
            }}
        }}
    }}
}}
""")
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0, 0, 0], [10, 0, 0], [5, 0, 0]], [[0, 0, -1]] * 3)
    np.testing.assert_allclose(r["distance"][:2], 5.0, atol=1e-6)
    assert np.isinf(r["distance"][2])
    assert [scene.node(int(o)).path for o in r["object"][:2]] == ["/W/I/instance_0/tree/trunk",
                                                                  "/W/I/instance_1/tree/trunk"]


def test_a_render_prim_under_a_guide_parent_is_read_and_guide_geometry_is_not(tmp_path):
    # /W/G has purpose guide: its own child mesh G/a (no purpose of its own: computed guide) is not rendered, but
    # G/b authors purpose render, which USD's ComputePurpose keeps (render), so it is read. Quads at x = 5 (a)
    # and x = -5 (b): a ray +x meets nothing, a ray -x meets b at 5 m. No node is left for the empty guide parts.
    path = tmp_path / "purpose.usda"
    stage = _stage(path)
    UsdGeom.Xform.Define(stage, "/W/G").CreatePurposeAttr(UsdGeom.Tokens.guide)
    _quad_x(stage, "/W/G/a", 5, 1, 1)
    _quad_x(stage, "/W/G/b", -5, 1, 1).CreatePurposeAttr(UsdGeom.Tokens.render)
    UsdGeom.Xform.Define(stage, "/W/H").CreatePurposeAttr(UsdGeom.Tokens.proxy)
    _quad_x(stage, "/W/H/c", 0, 3, 3)  # proxy: would block both rays from the origin if it were read
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0, 0, 0], [0, 0, 0]], [[1, 0, 0], [-1, 0, 0]])
    assert np.isinf(r["distance"][0])
    np.testing.assert_allclose(r["distance"][1], 5.0, atol=1e-6)
    assert scene.node(int(r["object"][1])).path == "/W/G/b"
    assert sorted(n.path for n in scene) == ["/W", "/W/G", "/W/G/b"]


def test_sdf_names_that_sanitise_to_one_path_get_distinct_nodes(tmp_path):
    # "rock-1" and "rock_1" are distinct SDF model names that both sanitise to /w/rock_1 (the world was refused for
    # duplicate node paths); the second becomes /w/rock_1_2. Boxes of 1 m at z = -5 under x = 0 and x = 5: rays down
    # from z = 0 meet their tops z = -4.5 at 4.5 m, each labelled with its own model name.
    path = tmp_path / "w.sdf"
    path.write_text('<sdf version="1.9"><world name="w">'
                    f'<model name="rock-1"><pose>0 0 -5 0 0 0</pose>{_BOX.format("1 1 1")}</model>'
                    f'<model name="rock_1"><pose>5 0 -5 0 0 0</pose>{_BOX.format("1 1 1")}</model></world></sdf>')
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0, 0, 0], [5, 0, 0]], [[0, 0, -1]] * 2)
    np.testing.assert_allclose(r["distance"], 4.5, atol=1e-6)
    assert [scene.label_of(int(o)) for o in r["object"]] == ["rock-1", "rock_1"]
    assert [scene.node(int(o)).path for o in r["object"]] == ["/w/rock_1/l/v", "/w/rock_1_2/l/v"]


def test_plane_and_cylinder_1_prims_are_read(tmp_path):
    # UsdGeom.Plane and Cylinder_1 (USD 24+) were skipped silently, losing e.g. a seafloor plane.
    # Plane width 4, length 2, axis Y, translated to y = 3: width along x (+-2), length along z (+-1), facing +y.
    # A ray +y from the origin meets it at 3 m; from (1.9, 0, 0.9) too; from x = 2.1 or z = 1.1 it misses.
    # Cylinder_1 at x = 10: radiusBottom 1 (z = -1), radiusTop 0.5 (z = +1), so r(z) = 0.75 - 0.25 z. A ray +x at
    # z = 0 from x = 5 meets the side at radius 0.75 (the 32-gon's radius is between r cos(pi/32) and r): 4.25 to
    # 4.2537 m. A ray down at x = 10.6 from z = 5 passes the top (r 0.5) and meets the side where r(z) = 0.6 (0.6 /
    # cos(pi/32) = 0.6029 on a face centre): z in [0.588, 0.6], distance in [4.4, 4.412].
    path = tmp_path / "shapes.usda"
    stage = _stage(path)
    plane = UsdGeom.Plane.Define(stage, "/W/plane")
    plane.CreateWidthAttr(4.0)
    plane.CreateLengthAttr(2.0)
    plane.CreateAxisAttr("Y")
    plane.AddTranslateOp().Set(Gf.Vec3d(0, 3, 0))
    cyl = UsdGeom.Cylinder_1.Define(stage, "/W/cyl")
    cyl.CreateRadiusBottomAttr(1.0)
    cyl.CreateRadiusTopAttr(0.5)
    cyl.CreateHeightAttr(2.0)
    cyl.CreateAxisAttr("Z")
    cyl.AddTranslateOp().Set(Gf.Vec3d(10, 0, 0))
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0, 0, 0], [1.9, 0, 0.9], [2.1, 0, 0], [0, 0, 1.1], [5, 0, 0], [10.6, 0, 5]],
              [[0, 1, 0]] * 4 + [[1, 0, 0], [0, 0, -1]])
    np.testing.assert_allclose(r["distance"][:2], 3.0, atol=1e-6)
    assert np.isinf(r["distance"][2:4]).all()
    assert 4.25 - 1e-5 <= r["distance"][4] <= 4.2537 and 4.4 - 1e-5 <= r["distance"][5] <= 4.412
    mesh = scene.node("/W/plane").mesh
    a, b, c = mesh.vertices[mesh.triangles[0]]
    normal = np.cross(b - a, c - a)
    np.testing.assert_allclose(normal / np.linalg.norm(normal), [0, 1, 0], atol=1e-12)  # faces +axis


def test_capsule_1_with_two_radii_is_refused_naming_the_prim(tmp_path):
    path = tmp_path / "caps.usda"
    stage = _stage(path)
    _quad_x(stage, "/W/wall", 5, 1, 1)
    caps = UsdGeom.Capsule_1.Define(stage, "/W/caps")
    caps.CreateRadiusBottomAttr(1.0)
    caps.CreateRadiusTopAttr(0.5)
    stage.GetRootLayer().Save()
    with pytest.raises(SceneError, match=r"caps\.usda: prim /W/caps: Capsule_1 with radiusBottom 1.0 != radiusTop"):
        load_scene(path, device="cpu")


def test_full_purpose_material_binding_is_the_one_rendered(tmp_path):
    # Quad A (x = 5) is bound to "rock" for purpose full only; quad B (x = -5) to "steel" for all purposes and to
    # "sand" for purpose full; quad C (x = 7, |z| <= 3) to "wood" for purpose preview only. A renderer takes the full
    # binding, else the all-purpose one (preview bindings are for previews): A rock, B sand, C default. (The
    # all-purpose lookup gave A default and B steel.) Rays from the origin: +x meets A at 5, -x meets B at 5, +x at
    # z = 2 passes over A (|z| <= 1) and meets C at 7.
    path = tmp_path / "purposes.usda"
    stage = _stage(path)
    mats = {n: UsdShade.Material.Define(stage, f"/Looks/{n}") for n in ("rock", "steel", "sand", "wood")}
    a = UsdShade.MaterialBindingAPI.Apply(_quad_x(stage, "/W/A", 5, 1, 1).GetPrim())
    a.Bind(mats["rock"], materialPurpose=UsdShade.Tokens.full)
    b = UsdShade.MaterialBindingAPI.Apply(_quad_x(stage, "/W/B", -5, 1, 1).GetPrim())
    b.Bind(mats["steel"])
    b.Bind(mats["sand"], materialPurpose=UsdShade.Tokens.full)
    c = UsdShade.MaterialBindingAPI.Apply(_quad_x(stage, "/W/C", 7, 1, 3).GetPrim())
    c.Bind(mats["wood"], materialPurpose=UsdShade.Tokens.preview)
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0, 0, 0], [0, 0, 0], [0, 0, 2]], [[1, 0, 0], [-1, 0, 0], [1, 0, 0]])
    np.testing.assert_allclose(r["distance"], [5.0, 5.0, 7.0], atol=1e-6)
    assert [scene.node(int(o)).material.name for o in r["object"]] == ["rock", "sand", "default"]


def test_a_nurbs_patch_is_named_in_a_warning(tmp_path, caplog):
    path = tmp_path / "nurbs.usda"
    stage = _stage(path)
    _quad_x(stage, "/W/wall", 5, 1, 1)
    UsdGeom.NurbsPatch.Define(stage, "/W/patch")
    stage.GetRootLayer().Save()
    with caplog.at_level("WARNING", logger="oceansim_py.scene.usd"):
        load_scene(path, device="cpu")
    assert "prim /W/patch: NurbsPatch surfaces are not read" in caplog.text


def _strip_mesh(stage: Usd.Stage, path: str) -> UsdGeom.Mesh:
    """Three 1 m x 2 m quads side by side at z = -5: face k spans x in [k, k + 1], y in [-1, 1]."""
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr([(x, y, -5) for x in range(4) for y in (-1, 1)])
    mesh.CreateFaceVertexCountsAttr([4, 4, 4])
    mesh.CreateFaceVertexIndicesAttr([0, 2, 3, 1, 2, 4, 5, 3, 4, 6, 7, 5])
    return mesh


def test_a_geom_subset_material_reaches_its_faces_with_its_label(tmp_path):
    # The mesh is bound to "rock"; its materialBind subset "metal" (face 1) to "steel", labelled "plate". Rays down
    # from z = 0 at x = 0.5, 1.5, 2.5 meet faces 0, 1, 2 at 5 m: rock/floor, steel/plate, rock/floor. (Subsets were
    # not read: all three were rock.) Face 1's two triangles move to the node /W/floor/metal.
    path = tmp_path / "subset.usda"
    stage = _stage(path)
    rock = UsdShade.Material.Define(stage, "/Looks/rock")
    steel = UsdShade.Material.Define(stage, "/Looks/steel")
    mesh = _strip_mesh(stage, "/W/floor")
    api = UsdShade.MaterialBindingAPI.Apply(mesh.GetPrim())
    api.Bind(rock)
    subset = api.CreateMaterialBindSubset("metal", Vt.IntArray([1]), UsdGeom.Tokens.face)
    UsdShade.MaterialBindingAPI.Apply(subset.GetPrim()).Bind(steel)
    subset.GetPrim().CreateAttribute("semantics:labels:class", Sdf.ValueTypeNames.TokenArray).Set(["plate"])
    stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0.5, 0, 0], [1.5, 0, 0], [2.5, 0, 0]], [[0, 0, -1]] * 3)
    np.testing.assert_allclose(r["distance"], 5.0, atol=1e-6)
    hit = [scene.node(int(o)) for o in r["object"]]
    assert [(n.path, n.material.name, scene.label_of(n.id)) for n in hit] == [
        ("/W/floor", "rock", "floor"), ("/W/floor/metal", "steel", "plate"), ("/W/floor", "rock", "floor")]
    assert scene.node("/W/floor").mesh.num_triangles == 4 and scene.node("/W/floor/metal").mesh.num_triangles == 2


def test_geom_subset_faces_out_of_range_name_the_subset(tmp_path):
    path = tmp_path / "subset.usda"
    stage = _stage(path)
    mesh = _strip_mesh(stage, "/W/floor")
    subset = UsdShade.MaterialBindingAPI.Apply(mesh.GetPrim()).CreateMaterialBindSubset(
        "metal", Vt.IntArray([1, 3]), UsdGeom.Tokens.face)
    UsdShade.MaterialBindingAPI.Apply(subset.GetPrim()).Bind(UsdShade.Material.Define(stage, "/Looks/steel"))
    stage.GetRootLayer().Save()
    with pytest.raises(SceneError, match=r"subset\.usda: prim /W/floor/metal: indices hold faces 1\.\.3 but the mesh "
                                         r"has 3 faces"):
        load_scene(path, device="cpu")


_L_DAE = """<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="cm" meter="0.01"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="18">100 100 0 100 200 0 0 200 0 0 0 0 200 0 0 200 100 0</float_array>
      <technique_common><accessor source="#pa" count="6" stride="3"><param name="X" type="float"/>
      <param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <polylist count="1"><input semantic="VERTEX" source="#v" offset="0"/><vcount>6</vcount><p>{order}</p></polylist>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="S"><node id="n"><instance_geometry url="#g"/></node></visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#S"/></scene>
</COLLADA>
"""


@pytest.mark.parametrize("order", ["1 2 3 4 5 0", "0 1 2 3 4 5"])
def test_a_concave_collada_polygon_keeps_its_notch(tmp_path, order):
    # An L-shaped hexagon in cm, Z up: the 2 m x 2 m square z = 0 minus its notch x, y in (1, 2) m. Starting at the
    # corner (1, 2) a fan from vertex 0 also covered the notch (pycollada's triangleset() fans polygons). Rays down
    # from z = 1 m: inside the L (0.5, 0.5), (1.5, 0.5), (0.5, 1.5) hit at 1 m; in the notch (1.5, 1.5), (1.2, 1.2)
    # they miss.
    path = tmp_path / "l.dae"
    path.write_text(_L_DAE.format(order=order))
    scene = load_scene(path, device="cpu")
    xy = [(0.5, 0.5), (1.5, 0.5), (0.5, 1.5), (1.5, 1.5), (1.2, 1.2)]
    r = _cast(scene, [[x, y, 1] for x, y in xy], [[0, 0, -1]] * 5)
    np.testing.assert_allclose(r["distance"][:3], 1.0, atol=1e-6)
    assert np.isinf(r["distance"][3:]).all()


def test_a_concave_obj_face_keeps_its_notch(tmp_path):
    # The same L-hexagon as an OBJ face started at the corner (1, 2) (with v/vt/vn references), and a convex quad
    # at x in [5, 6] named by negative (relative) indices. trimesh fans every face, so the L covered its notch;
    # now rays down from z = 1 hit the L at (0.5, 0.5), (1.5, 0.5), (0.5, 1.5) and the quad at (5.5, 0.5), all at
    # 1 m, and miss in the notch at (1.5, 1.5) and (1.2, 1.2).
    path = tmp_path / "l.obj"
    path.write_text("v 1 1 0\nv 1 2 0\nv 0 2 0\nv 0 0 0\nv 2 0 0\nv 2 1 0\nvt 0 0\nvn 0 0 1\n"
                    "f 2/1/1 3/1/1 4/1/1 5/1/1 6/1/1 1/1/1\n"
                    "v 5 0 0\nv 6 0 0\nv 6 1 0\nv 5 1 0\nf -4 -3 -2 -1\n")
    scene = load_scene(path, device="cpu")
    assert_l_and_quad_hit_and_notch_missed(scene)


_L_POINTS = "1 1 0\n1 2 0\n0 2 0\n0 0 0\n2 0 0\n2 1 0\n5 0 0\n6 0 0\n6 1 0\n5 1 0\n"


@pytest.mark.parametrize("suffix", ["ply", "off"])
def test_a_concave_ply_or_off_face_keeps_its_notch(tmp_path, suffix):
    # The L-hexagon of the OBJ test started at the corner (1, 2) (points 1..5, 0), then a convex quad at x in [5, 6]:
    # trimesh fans every PLY / OFF polygon, so the L covered its notch. Rays down from z = 1 hit the L at (0.5, 0.5),
    # (1.5, 0.5), (0.5, 1.5) and the quad at (5.5, 0.5), all at 1 m, and miss in the notch at (1.5, 1.5), (1.2, 1.2).
    path = tmp_path / f"l.{suffix}"
    if suffix == "ply":
        path.write_text("ply\nformat ascii 1.0\nelement vertex 10\nproperty float x\nproperty float y\n"
                        "property float z\nelement face 2\nproperty list uchar int vertex_indices\nend_header\n"
                        + _L_POINTS + "6 1 2 3 4 5 0\n4 6 7 8 9\n")
    else:
        path.write_text("OFF\n# an L and a quad\n10 2 0\n" + _L_POINTS + "6 1 2 3 4 5 0\n4 6 7 8 9\n")
    scene = load_scene(path, device="cpu")
    assert_l_and_quad_hit_and_notch_missed(scene)


def test_an_off_file_mixing_a_pentagon_and_a_triangle_is_read(tmp_path):
    # trimesh's OFF reader fails (TypeError) on polygons of more than 4 corners mixed with other sizes. Here the
    # unit square with a roof point (0.5, 1.5) as a pentagon, and the triangle (1, 0), (3, 3), (1, 1): rays down
    # from z = 1 hit the pentagon at (0.5, 0.5) and its roof at (0.5, 1.4), the triangle at (1.5, 1.2) (inside:
    # right of x = 1, above y = 1.5 (x - 1) = 0.75 and below y = x), all at 1 m; (2, 0.5) misses.
    path = tmp_path / "m.off"
    path.write_text("OFF\n6 2 0\n0 0 0\n1 0 0\n1 1 0\n0.5 1.5 0\n0 1 0\n3 3 0\n5 0 1 2 3 4\n3 1 5 2\n")
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0.5, 0.5, 1], [0.5, 1.4, 1], [1.5, 1.2, 1], [2, 0.5, 1]], [[0, 0, -1]] * 4)
    np.testing.assert_allclose(r["distance"][:3], 1.0, atol=1e-6)
    assert np.isinf(r["distance"][3])


def _gltf_two_primitive_scene() -> dict:
    """glTF (Y-up, m): mesh "two" with two primitives, the quads (x, y) in +-0.5 and x in [2, 3], y in +-0.5, both
    z = 0; node "parent" (translation (0, -10, 0)) holds "child" (TRS: rotation 90 degrees about +x, scale 2) and
    "mat" (column-major matrix: translation (0, 0, 5)), each placing the mesh."""
    import base64

    pos = np.array([[-.5, -.5, 0], [.5, -.5, 0], [.5, .5, 0], [-.5, .5, 0],
                    [2, -.5, 0], [3, -.5, 0], [3, .5, 0], [2, .5, 0]], np.float32)
    buf = pos.tobytes() + np.array([0, 1, 2, 0, 2, 3], np.uint16).tobytes()
    quad = {"componentType": 5126, "count": 4, "type": "VEC3"}
    s = math.sqrt(0.5)
    return {
        "asset": {"version": "2.0"},
        "buffers": [{"byteLength": len(buf),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(buf).decode()}],
        "bufferViews": [{"buffer": 0, "byteLength": 96}, {"buffer": 0, "byteOffset": 96, "byteLength": 12}],
        "accessors": [{"bufferView": 0, **quad, "min": [-.5, -.5, 0], "max": [.5, .5, 0]},
                      {"bufferView": 0, "byteOffset": 48, **quad, "min": [2, -.5, 0], "max": [3, .5, 0]},
                      {"bufferView": 1, "componentType": 5123, "count": 6, "type": "SCALAR"}],
        "materials": [{"name": "steel"}, {"name": "rock"}],
        "meshes": [{"name": "two", "primitives": [{"attributes": {"POSITION": 0}, "indices": 2, "material": 0},
                                                  {"attributes": {"POSITION": 1}, "indices": 2, "material": 1}]}],
        "nodes": [{"name": "parent", "translation": [0, -10, 0], "children": [1, 2]},
                  {"name": "child", "mesh": 0, "rotation": [s, 0, 0, s], "scale": [2, 2, 2]},
                  {"name": "mat", "mesh": 0, "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 5, 1]}],
        "scenes": [{"nodes": [0]}], "scene": 0}


def test_gltf_trs_matrix_parent_chain_and_primitives_by_hand(tmp_path):
    # glTF -> world (Z up): (x, y, z) -> (x, -z, y). "child": a mesh point (x, y, 0) scaled (2x, 2y, 0), turned 90
    # degrees about +x ((x, y, z) -> (x, -z, y)) to (2x, 0, 2y), moved by the parent to (2x, -10, 2y); world
    # (2x, -2y, -10): the level plane z = -10 m, x in [-1, 1] (primitive 0) and [4, 6] (primitive 1). "mat": (x, y, 0)
    # -> (x, y, 5) -> (x, y - 10, 5); world (x, -5, y - 10): the plane y = -5 m, x in +-0.5 and [2, 3], z in
    # [-10.5, -9.5]. Rays down from z = 0 at x = 0, 5, 0.9 hit at 10 m, at x = 1.1 miss; rays along -y from
    # y = 0 at (0, -10) and (2.5, -10) hit at 5 m.
    import json

    path = tmp_path / "t.gltf"
    path.write_text(json.dumps(_gltf_two_primitive_scene()))
    scene = load_scene(path, device="cpu")
    r = _cast(scene, [[0, 0, 0], [5, 0, 0], [0.9, 0.9, 0], [1.1, 0, 0], [0, 0, -10], [2.5, 0, -10]],
              [[0, 0, -1]] * 4 + [[0, -1, 0]] * 2)
    np.testing.assert_allclose(r["distance"][[0, 1, 2, 4, 5]], [10, 10, 10, 5, 5], atol=1e-5)
    assert np.isinf(r["distance"][3])


def test_gltf_primitive_nodes_have_stable_paths_and_the_gltf_node_label(tmp_path):
    # trimesh names each primitive of a several-primitive node '<node>_<6 random hex digits>', so the node paths
    # and labels changed from one load to the next (a dataset's label map was not reproducible). Now the label is
    # the glTF node's name and the path is the same on every load.
    import json

    import trimesh

    path = tmp_path / "t.gltf"
    path.write_text(json.dumps(_gltf_two_primitive_scene()))
    first = load_scene(path, device="cpu")
    trimesh.util.random.seed(12345)   # trimesh's ids come from the random module: another state, other names
    second = load_scene(path, device="cpu")
    paths = [n.path for n in first.mesh_nodes()]
    assert paths == [n.path for n in second.mesh_nodes()]
    assert sorted(n.label for n in first.mesh_nodes()) == ["child", "child", "mat", "mat"]


@pytest.mark.parametrize("kind", ["obj", "gltf", "dae", "sdf", "usda"])
def test_a_materials_file_that_redefines_default_reaches_geometry_without_a_material(tmp_path, kind):
    # The loaders promise geometry without a material the table's 'default' entry; they gave the built-in one
    # (reflectivity 0.5), ignoring a YAML 'default: {reflectivity: 0.9}'.
    import json

    table = tmp_path / "m.yaml"
    table.write_text("materials:\n  default: {albedo: [0.1, 0.2, 0.3], reflectivity: 0.9}\n")
    path = tmp_path / f"s.{kind}"
    if kind == "obj":
        path.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\n")
    elif kind == "gltf":
        gltf = _gltf_two_primitive_scene()
        for primitive in gltf["meshes"][0]["primitives"]:
            del primitive["material"]
        path.write_text(json.dumps(gltf))
    elif kind == "dae":
        path.write_text(_L_DAE.format(order="0 1 2 3 4 5"))
    elif kind == "sdf":
        path.write_text("<sdf version='1.9'><world name='w'><model name='m'><link name='l'><visual name='v'>"
                        "<geometry><box><size>1 1 1</size></box></geometry></visual></link></model></world></sdf>")
    else:
        stage = _stage(path)
        _quad_x(stage, "/W/q", 1.0, 0.5, 0.5)
        stage.GetRootLayer().Save()
    scene = load_scene(path, device="cpu", materials=table)
    mats = {(n.material.name, round(n.material.reflectivity, 9), tuple(np.round(n.material.albedo, 9)))
            for n in scene.mesh_nodes()}
    assert mats == {("default", 0.9, (0.1, 0.2, 0.3))}


@pytest.mark.parametrize("endian", ["<", ">"])
def test_a_binary_ply_with_faces_of_different_sizes_is_read(tmp_path, endian):
    # Binary PLY (as Blender writes it) holding the L-hexagon and the quad of the PLY test, with a red/green/blue
    # uchar colour per vertex and a flags int after each face's list. trimesh's reader refused it ('PLY is unexpected
    # length': it takes every list to be as long as the first). Rays down from z = 1 hit at (0.5, 0.5), (1.5, 0.5),
    # (0.5, 1.5), (5.5, 0.5) at 1 m and miss in the notch at (1.5, 1.5), (1.2, 1.2).
    import struct

    name = "little" if endian == "<" else "big"
    head = (f"ply\nformat binary_{name}_endian 1.0\nelement vertex 10\nproperty float x\nproperty float y\n"
            "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nelement face 2\n"
            "property list uchar int vertex_indices\nproperty int flags\nend_header\n").encode()
    points = np.array([row.split() for row in _L_POINTS.splitlines()], dtype=float)
    body = b"".join(struct.pack(f"{endian}3f3B", *p, 1, 2, 3) for p in points)
    body += struct.pack(f"{endian}B6ii", 6, 1, 2, 3, 4, 5, 0, 7) + struct.pack(f"{endian}B4ii", 4, 6, 7, 8, 9, 7)
    path = tmp_path / "l.ply"
    path.write_bytes(head + body)
    scene = load_scene(path, device="cpu")
    assert_l_and_quad_hit_and_notch_missed(scene)


def test_mesh_file_material_names_that_are_table_entries_are_used(tmp_path):
    # As a USD stage's bound material and an SDF visual's material script: the glTF primitives' materials 'steel'
    # and 'rock', and the OBJ usemtl 'Steel' (case-insensitive), are table entries; the OBJ's 'foo' is not (the table's
    # default). A given material overrides them all.
    import json

    from oceansim_py.scene.materials import BUILTIN_MATERIALS

    gltf = tmp_path / "t.gltf"
    gltf.write_text(json.dumps(_gltf_two_primitive_scene()))
    (tmp_path / "m.mtl").write_text("newmtl Steel\nKd 0.5 0.5 0.5\nnewmtl foo\nKd 1 0 0\n")
    obj = tmp_path / "m.obj"
    obj.write_text("mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nusemtl Steel\nf 1 2 3\nusemtl foo\nf 1 3 4\n")
    for path, expected in ((gltf, ["rock", "rock", "steel", "steel"]), (obj, ["default", "steel"])):
        nodes = load_scene(path, device="cpu").mesh_nodes()
        assert sorted(n.material.name for n in nodes) == expected
        for n in nodes:
            assert n.material.reflectivity == BUILTIN_MATERIALS[n.material.name].reflectivity
        given = load_scene(path, device="cpu", material="sand").mesh_nodes()
        assert {n.material.name for n in given} == {"sand"}


def test_gltf_trs_is_applied_translation_rotation_scale(tmp_path):
    # One node: translation (0, 1, 0), rotation 90 degrees about +y, scale (3, 1, 1). T R S (x, y, 0) = T R (3x, y, 0)
    # = T (0, y, -3x) = (0, y + 1, -3x) (glTF); world (x, -z, y) = (0, 3x, y + 1): the plane x = 0 with world y in
    # +-1.5 (primitive 0) and [6, 9] (primitive 1), z in [0.5, 1.5]. (Scaling after the rotation would give y in
    # +-0.5.) Rays along +x from x = -5 hit at 5 m at (y, z) = (1.4, 1.0), (8, 1.4) and miss at (1.6, 1.0), (0, 0.4).
    import json

    gltf = _gltf_two_primitive_scene()
    s = math.sqrt(0.5)
    gltf["nodes"] = [{"name": "n", "mesh": 0, "translation": [0, 1, 0], "rotation": [0, s, 0, s], "scale": [3, 1, 1]}]
    path = tmp_path / "trs.gltf"
    path.write_text(json.dumps(gltf))
    r = _cast(load_scene(path, device="cpu"), [[-5, 1.4, 1.0], [-5, 8, 1.4], [-5, 1.6, 1.0], [-5, 0, 0.4]],
              [[1, 0, 0]] * 4)
    np.testing.assert_allclose(r["distance"][:2], 5.0, atol=1e-5)
    assert np.isinf(r["distance"][2:]).all()
