"""Plain mesh files through trimesh: OBJ/STL/PLY as Z-up, glTF as Y-up, units, graph transforms, bad files."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from oceansim_py import SceneError, load_scene


def _box_at(x: float) -> trimesh.Trimesh:
    return trimesh.creation.box(extents=(1.0, 2.0, 4.0), transform=trimesh.transformations.translation_matrix([x, 0, 0]))


@pytest.mark.parametrize("suffix", [".obj", ".stl", ".ply"])
def test_z_up_mesh_files_keep_their_coordinates(tmp_path, suffix):
    path = tmp_path / f"box{suffix}"
    _box_at(5.0).export(path)
    scene = load_scene(path, device="cpu")
    assert scene.num_triangles == 12
    hit = scene.raycast([[0, 0, 0], [5, 0, 10]], [[1, 0, 0], [0, 0, -1]], 50.0).numpy()
    assert hit["distance"][0] == pytest.approx(4.5, abs=1e-5)     # the box's near face at x = 5 - 0.5
    assert hit["distance"][1] == pytest.approx(8.0, abs=1e-5)     # its top at z = +2 (Z up kept)


def test_meters_per_unit_and_material(tmp_path):
    path = tmp_path / "box_cm.obj"
    _box_at(500.0).export(path)                                   # centimetres
    scene = load_scene(path, device="cpu", meters_per_unit=0.01, material="steel")
    hit = scene.raycast([[0, 0, 0]], [[1, 0, 0]], 50.0).numpy()
    assert hit["distance"][0] == pytest.approx(4.995, abs=1e-5)
    assert scene.node(int(hit["object"][0])).material.name == "steel"


def test_gltf_is_y_up_and_scene_graph_transforms_apply(tmp_path):
    s = trimesh.Scene()
    s.add_geometry(_box_at(0.0), node_name="a", transform=trimesh.transformations.translation_matrix([0, 3, 0]))
    s.add_geometry(_box_at(0.0), node_name="b", transform=trimesh.transformations.translation_matrix([7, 0, 0]))
    path = tmp_path / "two.glb"
    s.export(path)
    scene = load_scene(path, device="cpu")
    assert len(scene.mesh_nodes()) == 2 and scene.num_triangles == 24
    # node "a" sits 3 units up in glTF's Y-up frame: in the world (Z up) its centre is at z = +3
    hit = scene.raycast([[0, 0, 10]], [[0, 0, -1]], 50.0).numpy()
    assert hit["distance"][0] == pytest.approx(10 - (3 + 1.0), abs=1e-5)   # glTF y-extent 2 -> half 1 on z
    hit = scene.raycast([[0, 0, 0]], [[1, 0, 0]], 50.0).numpy()
    assert hit["distance"][0] == pytest.approx(6.5, abs=1e-5)


def test_a_geometry_placed_by_several_graph_nodes_is_one_mesh(tmp_path):
    s = trimesh.Scene()
    s.add_geometry(_box_at(0.0), geom_name="box", node_name="n0",
                   transform=trimesh.transformations.translation_matrix([4.0, 0, 0]))
    for k, x in ((1, 7.0), (2, 10.0)):  # more glTF nodes naming the same mesh
        s.graph.update(frame_to=f"n{k}", geometry="box",
                       matrix=trimesh.transformations.translation_matrix([x, 2.0 * k, 0]))
    path = tmp_path / "three.glb"
    s.export(path)
    scene = load_scene(path, device="cpu")
    nodes = scene.mesh_nodes()
    assert len(nodes) == 3 and len({id(n.mesh) for n in nodes}) == 1
    hit = scene.raycast([[0, 0, 2]], [[1, 0, 0]], 50.0).numpy()    # the second node's box (glTF y 2 -> world z 2)
    assert hit["distance"][0] == pytest.approx(6.5, abs=1e-5)


def test_bad_mesh_files(tmp_path):
    junk = tmp_path / "junk.obj"
    junk.write_bytes(b"\x00\x01 not a mesh")
    with pytest.raises(SceneError, match="junk.obj"):
        load_scene(junk, device="cpu")
    with pytest.raises(SceneError, match="no such file"):
        load_scene(tmp_path / "missing.stl", device="cpu")
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(SceneError, match="unsupported file type"):
        load_scene(other, device="cpu")
    with pytest.raises(SceneError, match="unknown material"):
        path = tmp_path / "box.obj"
        _box_at(5.0).export(path)
        load_scene(path, device="cpu", material="unobtainium")
