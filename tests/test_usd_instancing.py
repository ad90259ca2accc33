"""USD instancing kept as instancing: a PointInstancer's instances and the instance proxies of instanceable
references share one ``TriangleMesh`` per source mesh, which the embree backend builds once and instances per node
(mirrored instances included), with the warp backend's hits, faces, objects, distances and normals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pxr import Gf, UsdGeom, Vt

from oceansim_py import load_scene
from oceansim_py.raycast import rtcore

from test_raycast_backends import compare
from test_usd import add_mesh, add_square, new_stage, textured_material

embree = pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")

#: A unit box's corners and its 6 quad faces (outward, right-handed).
BOX_POINTS = [(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
BOX_FACES = [0, 1, 3, 2, 4, 6, 7, 5, 0, 4, 5, 1, 2, 3, 7, 6, 0, 2, 6, 4, 1, 5, 7, 3]


def _loaded(path: Path, backend: str):
    return load_scene(path, device="cpu", raycast_backend=backend)


def _rays(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rays from x = -3 towards the region x in 2..9, |y| < 7, |z| < 2 where the test boxes stand."""
    rng = np.random.default_rng(seed)
    origins = np.column_stack([np.full(n, -3.0), rng.uniform(-7, 7, n), rng.uniform(-2, 2, n)])
    targets = np.column_stack([rng.uniform(2, 9, n), rng.uniform(-7, 7, n), rng.uniform(-2, 2, n)])
    return origins, targets - origins


def _point_instancer_stage(tmp_path: Path) -> Path:
    """A PointInstancer placing one box-mesh prototype 6 times (rotated, scaled, one mirrored by a negative scale)
    in a Y-up centimetre stage (so the unit and axis conversion applies to the shared mesh)."""
    stage, path = new_stage(tmp_path, "instancer.usda", up="Y", mpu=0.01)
    inst = UsdGeom.PointInstancer.Define(stage, "/World/Inst")
    add_mesh(stage, "/World/Inst/Protos/Box", [(100 * x, 100 * y, 100 * z) for x, y, z in BOX_POINTS],
             [4] * 6, BOX_FACES)
    inst.CreatePrototypesRel().SetTargets(["/World/Inst/Protos/Box"])
    inst.CreateProtoIndicesAttr(Vt.IntArray([0] * 6))
    # Y-up centimetres: world (x, y, z) m is stage (100 x, 100 z, -100 y)
    world = [(4, -5, 0), (4, -2.5, 0), (4, 0, 0), (4, 2.5, 0), (6, 5, 0), (8, -5, 1)]
    inst.CreatePositionsAttr(Vt.Vec3fArray([Gf.Vec3f(100 * x, 100 * z, -100 * y) for x, y, z in world]))
    inst.CreateScalesAttr(Vt.Vec3fArray([Gf.Vec3f(1, 1, 1), Gf.Vec3f(1.5, 0.5, 1), Gf.Vec3f(-1, 1, 1),
                                         Gf.Vec3f(1, 2, 1), Gf.Vec3f(2, 2, 2), Gf.Vec3f(1, 1, -3)]))
    half = np.sqrt(0.5)
    inst.CreateOrientationsAttr(Vt.QuathArray([Gf.Quath(1, 0, 0, 0), Gf.Quath(half, 0, half, 0),
                                               Gf.Quath(1, 0, 0, 0), Gf.Quath(0.9, 0.1, 0.3, 0.2).GetNormalized(),
                                               Gf.Quath(1, 0, 0, 0), Gf.Quath(half, half, 0, 0)]))
    stage.GetRootLayer().Save()
    return path


def _instanceable_stage(tmp_path: Path) -> Path:
    """Four instanceable references to one prototype (a square mesh and a cube), one mirrored, and a fifth
    reference that is not instanceable (its own prims)."""
    stage, path = new_stage(tmp_path, "instanceable.usda")
    stage.CreateClassPrim("/Protos")
    UsdGeom.Xform.Define(stage, "/Protos/Post")
    add_square(stage, "/Protos/Post/Plate", size=1.0, x=-0.6)
    UsdGeom.Cube.Define(stage, "/Protos/Post/Block").CreateSizeAttr(1.0)
    for k, (x, y, sy) in enumerate([(4.0, -5.0, 1.0), (4.0, -2.0, 1.0), (5.0, 1.0, -1.0), (6.0, 4.0, 2.0),
                                    (7.0, 6.0, 1.0)]):
        xf = UsdGeom.Xform.Define(stage, f"/World/Post_{k}")
        xf.AddTranslateOp().Set(Gf.Vec3d(x, y, 0.0))
        xf.AddScaleOp().Set(Gf.Vec3f(1.0, sy, 1.0))
        xf.GetPrim().GetReferences().AddInternalReference("/Protos/Post")
        xf.GetPrim().SetInstanceable(k < 4)
    stage.GetRootLayer().Save()
    return path


def test_point_instancer_instances_share_one_mesh(tmp_path):
    scene = _loaded(_point_instancer_stage(tmp_path), "warp")
    nodes = scene.mesh_nodes()
    assert [n.path for n in nodes] == [f"/World/Inst/instance_{k}/Box" for k in range(6)]
    assert len({id(n.mesh) for n in nodes}) == 1
    # the shared mesh is in metres, Z up: the unit box (100 cm) of the stage
    np.testing.assert_allclose(np.ptp(nodes[0].mesh.vertices, axis=0), [1.0, 1.0, 1.0], atol=1e-12)
    # by hand: box 0 at (4, -5, 0) front face x = 3.5; box 2 mirrored in x at (4, 0, 0) front face x = 3.5
    res = scene.raycast([[0.0, -5.0, 0.1], [0.0, 0.1, 0.2]], [[1.0, 0, 0], [1.0, 0, 0]], 50.0).numpy()
    np.testing.assert_allclose(res["distance"], [3.5, 3.5], atol=1e-5)
    np.testing.assert_allclose(res["normal"], [[-1.0, 0, 0], [-1.0, 0, 0]], atol=1e-6)
    assert scene.node(int(res["object"][1])).path == "/World/Inst/instance_2/Box"


def test_instance_proxies_share_one_mesh_per_prototype_prim(tmp_path):
    scene = _loaded(_instanceable_stage(tmp_path), "warp")
    plates = [scene.node(f"/World/Post_{k}/Plate").mesh for k in range(5)]
    blocks = [scene.node(f"/World/Post_{k}/Block").mesh for k in range(5)]
    assert len({id(m) for m in plates[:4]}) == 1 and len({id(m) for m in blocks[:4]}) == 1
    assert plates[0] is not blocks[0]
    # the fifth reference is not instanceable: its mesh prim is its own source; implicit prims of one shape share
    # their tessellation wherever they are
    assert plates[4] is not plates[0] and blocks[4] is blocks[0]
    np.testing.assert_array_equal(plates[4].vertices, plates[0].vertices)


@embree
def test_embree_instances_one_prototype_for_a_point_instancer(tmp_path):
    path = _point_instancer_stage(tmp_path)
    w, e = _loaded(path, "warp"), _loaded(path, "embree")
    e.backend.build()
    assert e.backend.flat_triangles == 0
    assert len(e.backend.instanced) == 6 and e.backend.prototypes == 1
    assert "6 instance(s) of 1 mesh(es)" in e.backend.describe()
    origins, dirs = _rays(8000, 1)
    compare(w, e, origins, dirs)
    assert (w.raycast(origins, dirs, 100.0).numpy()["face"] >= 0).mean() > 0.2


@embree
def test_embree_instances_instanceable_references_per_prototype_prim(tmp_path):
    path = _instanceable_stage(tmp_path)
    w, e = _loaded(path, "warp"), _loaded(path, "embree")
    e.backend.build()
    # 4 instanceable posts' plates and all 5 blocks are instances of 2 meshes; the fifth plate's 2 triangles are
    # flattened
    assert len(e.backend.instanced) == 9 and e.backend.prototypes == 2
    assert e.backend.flat_triangles == 2
    origins, dirs = _rays(8000, 2)
    compare(w, e, origins, dirs)
    assert (w.raycast(origins, dirs, 100.0).numpy()["face"] >= 0).mean() > 0.1


def test_instances_whose_texture_differs_keep_their_own_mesh(tmp_path):
    """A texture bound on one instanceable prim (outside the prototype) gives its proxy mesh uvs: that mesh is not
    shared with the untextured instances of the same prototype, which share theirs."""
    from PIL import Image
    from pxr import Sdf, UsdShade

    Image.fromarray(np.full((2, 2, 3), 128, dtype=np.uint8)).save(tmp_path / "tex.png")
    stage, path = new_stage(tmp_path, "textured.usda")
    stage.CreateClassPrim("/Protos")
    UsdGeom.Xform.Define(stage, "/Protos/Tile")
    plate = add_square(stage, "/Protos/Tile/Plate", size=1.0)
    UsdGeom.PrimvarsAPI(plate).CreatePrimvar("st", Sdf.ValueTypeNames.TexCoord2fArray,
                                             UsdGeom.Tokens.faceVarying).Set([(0, 0), (1, 0), (1, 1), (0, 1)])
    mat = textured_material(stage, "/World/Looks/tex", "tex.png")
    for k in range(3):
        xf = UsdGeom.Xform.Define(stage, f"/World/Tile_{k}")
        xf.AddTranslateOp().Set(Gf.Vec3d(4.0, 2.0 * k, 0.0))
        xf.GetPrim().GetReferences().AddInternalReference("/Protos/Tile")
        xf.GetPrim().SetInstanceable(True)
        if k == 0:
            UsdShade.MaterialBindingAPI.Apply(xf.GetPrim()).Bind(mat)
    stage.GetRootLayer().Save()
    scene = _loaded(path, "warp")
    meshes = [scene.node(f"/World/Tile_{k}/Plate").mesh for k in range(3)]
    assert meshes[0].uvs is not None and meshes[1].uvs is None
    assert meshes[0] is not meshes[1] and meshes[1] is meshes[2]
    assert scene.node("/World/Tile_0/Plate").material.texture is not None
