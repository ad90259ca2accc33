"""Ray casting against analytic geometry: distances, normals, misses, threading."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from oceansim_py import ConfigError, SceneError
from oceansim_py.runtime import chunk_bounds, chunk_launches, set_cpu_threads
from oceansim_py.scene import Node, Scene, TriangleMesh

from conftest import make_scene, quad


@pytest.fixture(scope="module")
def sphere_scene() -> Scene:
    ico = trimesh.creation.icosphere(subdivisions=6, radius=0.5)
    t = np.eye(4)
    t[:3, 3] = [3.0, 0.0, 0.0]
    return Scene([Node("/S", mesh=TriangleMesh(ico.vertices, ico.faces), transform=t, label="ball")])


def test_plane_distance_exact(wall_scene):
    rng = np.random.default_rng(1)
    n = 2000
    # directions in the forward hemisphere toward the wall at x = 5
    d = rng.normal(size=(n, 3))
    d[:, 0] = np.abs(d[:, 0]) + 0.5
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    o = rng.uniform(-1, 1, size=(n, 3))
    res = wall_scene.raycast(o, d, 100.0).numpy()
    expected = (5.0 - o[:, 0]) / d[:, 0]
    inside = np.abs(o[:, 1:] + expected[:, None] * d[:, 1:]).max(axis=1) < 19.9
    assert inside.sum() > 1500
    assert np.all(res["face"][inside] >= 0)
    np.testing.assert_allclose(res["distance"][inside], expected[inside], atol=1e-4)
    # normals are unit and face the ray
    nrm = res["normal"][inside]
    np.testing.assert_allclose(np.linalg.norm(nrm, axis=1), 1.0, atol=1e-6)
    assert np.all(np.einsum("ij,ij->i", nrm, d[inside]) < 0)
    np.testing.assert_allclose(nrm, np.tile([-1.0, 0, 0], (inside.sum(), 1)), atol=1e-6)


def test_plane_from_behind_normal_still_faces_ray(wall_scene):
    res = wall_scene.raycast([[10.0, 0.0, 0.0]], [[-1.0, 0.0, 0.0]], 100.0).numpy()
    assert res["distance"][0] == pytest.approx(5.0, abs=1e-5)
    np.testing.assert_allclose(res["normal"][0], [1.0, 0.0, 0.0], atol=1e-6)


def test_sphere_distance_and_normal(sphere_scene):
    rng = np.random.default_rng(2)
    n = 4000
    # rays from the origin aimed at points on the sphere's visible cap
    target = rng.normal(size=(n, 3))
    target /= np.linalg.norm(target, axis=1, keepdims=True)
    target[:, 0] = -np.abs(target[:, 0])
    aim = np.array([3.0, 0.0, 0.0]) + 0.45 * target
    d = aim / np.linalg.norm(aim, axis=1, keepdims=True)
    res = sphere_scene.raycast(np.zeros((n, 3)), d, 100.0).numpy()
    # analytic first intersection with |p - c| = 0.5, p = t d (tessellation error < 1e-4 m at this size)
    c = np.array([3.0, 0.0, 0.0])
    b = d @ c
    t = b - np.sqrt(b * b - (c @ c - 0.25))
    assert np.all(res["face"] >= 0)
    np.testing.assert_allclose(res["distance"], t, atol=1e-4)
    outward = (t[:, None] * d - c) / 0.5
    cos = np.einsum("ij,ij->i", res["normal"], -d)
    assert np.all(cos >= 0)
    # facet normals are within the tessellation angle of the true normal
    ang = np.degrees(np.arccos(np.clip(np.einsum("ij,ij->i", res["normal"], outward), -1, 1)))
    assert ang.max() < 2.0


def test_misses_are_marked(wall_scene):
    res = wall_scene.raycast([[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[-1, 0, 0], [1, 0, 0], [0, 0, 0]], 4.0).numpy()
    assert list(res["face"]) == [-1, -1, -1]
    assert list(res["object"]) == [-1, -1, -1]
    assert np.all(np.isinf(res["distance"]))


def test_per_ray_max_range(wall_scene):
    res = wall_scene.raycast(np.zeros((2, 3)), [[1, 0, 0], [1, 0, 0]], [4.9, 5.1]).numpy()
    assert list(res["face"] >= 0) == [False, True]


def test_object_ids_and_labels():
    scene = make_scene(("near", quad([2, 0, 0], [-1, 0, 0], 1.0), 0.2), ("far", quad([6, 0, 0], [-1, 0, 0], 10.0), 0.9))
    res = scene.raycast([[0, 0, 0], [0, 2, 0]], [[1, 0, 0], [1, 0, 0]], 50.0).numpy()
    assert scene.node(int(res["object"][0])).path == "/World/near"
    assert scene.node(int(res["object"][1])).path == "/World/far"
    assert scene.label_of(int(res["object"][1])) == "far"
    refl = scene.geometry.object_reflectivity.numpy()
    assert refl[res["object"][1]] == pytest.approx(0.9)


def test_threaded_equals_single_thread(sphere_scene):
    rng = np.random.default_rng(3)
    n = 200_000
    d = rng.normal(size=(n, 3))
    o = rng.uniform(-0.5, 0.5, size=(n, 3))
    try:
        set_cpu_threads(1)
        one = sphere_scene.raycast(o, d, 10.0).numpy()
        set_cpu_threads(4)
        many = sphere_scene.raycast(o, d, 10.0).numpy()
    finally:
        set_cpu_threads(None)
    assert (one["face"] >= 0).sum() > 1000
    for k in one:
        assert one[k].tobytes() == many[k].tobytes(), k


def test_chunk_bounds_cover_and_align():
    b = chunk_bounds(1000, 3, align=64)
    assert b[0][0] == 0 and b[-1][1] == 1000
    assert all(a % 64 == 0 for a, _ in b)
    assert all(b[i][1] == b[i + 1][0] for i in range(len(b) - 1))
    assert sum(y - x for x, y in chunk_bounds(10, 4)) == 10
    assert chunk_bounds(0, 4) == []


def test_chunk_launches_cover_each_chunk_once():
    """Recorded chunk launches (one argument packing, then a copy per chunk with its own bounds and start) write
    every element exactly once, with uneven chunk sizes, and leave nothing outside ``n`` touched."""
    import warp as wp

    from oceansim_py.kernels.acoustic_chain import table_directions_kernel

    n = 1000
    rng = np.random.default_rng(3)
    table = rng.normal(size=(n, 3)).astype(np.float32)
    dev = wp.get_device("cpu")
    edges = wp.zeros(n, dtype=wp.vec3, device=dev)
    out = wp.full(n + 1, wp.vec3(-7.0, -7.0, -7.0), dtype=wp.vec3, device=dev)
    # jitter 0: element i copies table[i] into out[i]
    args = [wp.array(table, dtype=wp.vec3, device=dev), edges, edges, 0, 0, out]
    bounds = [(0, 1), (1, 400), (400, 401), (401, 1000)]
    commands = chunk_launches(table_directions_kernel, args, dev, bounds)
    assert len(commands) == len(bounds)
    for c in reversed(commands):
        c.launch()
    d = out.numpy()
    assert np.array_equal(d[:n], table)
    assert np.array_equal(d[n], [-7.0, -7.0, -7.0])


def test_bad_raycast_input(wall_scene):
    with pytest.raises(ConfigError, match="non-finite"):
        wall_scene.raycast([[np.nan, 0, 0]], [[1, 0, 0]])
    with pytest.raises(SceneError, match="same shape"):
        wall_scene.raycast(np.zeros((2, 3)), np.zeros((3, 3)))
    with pytest.raises(SceneError, match="max_range"):
        wall_scene.raycast(np.zeros((1, 3)), [[1, 0, 0]], -1.0)


def test_degenerate_faces_dropped_with_warning(caplog):
    verts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0]], dtype=float)
    tris = np.array([[0, 1, 2], [0, 1, 3]])  # the second is collinear: zero area
    with caplog.at_level("WARNING"):
        scene = Scene([Node("/m", mesh=TriangleMesh(verts, tris))])
    assert scene.num_triangles == 1
    assert "1 degenerate" in caplog.text


def test_bad_triangle_indices_are_scene_errors():
    """Indices past the vertices, negative ones (numpy would wrap them to other vertices: a silent wrong triangle)
    and fractional ones (silently truncated) are refused when the mesh is made, whatever the backend."""
    verts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0]], dtype=float)
    for tris, match in (([[0, 1, 4]], r"out of range: values 0\.\.4 for 4 vertices"),
                        ([[0, 1, -1]], r"out of range: values -1\.\.1"),
                        ([[0, 1, 2.5]], "integer vertex indices, got 2.5"),
                        ([[0, 1, np.nan]], "integer vertex indices, got nan")):
        with pytest.raises(SceneError, match=match):
            TriangleMesh(verts, tris)
    with pytest.raises(SceneError, match=r"vertices must have shape \(V, 3\), got \(4, 2\)"):
        TriangleMesh(verts[:, :2], [[0, 1, 2]])
    with pytest.raises(SceneError, match=r"triangles must have shape \(F, 3\), got \(1, 4\)"):
        TriangleMesh(verts, [[0, 1, 2, 3]])
    assert TriangleMesh(verts, np.array([[0.0, 1.0, 3.0]])).triangles.dtype == np.int64


def test_negative_determinant_flips_winding():
    verts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=float)
    mirror = np.diag([1.0, 1.0, -1.0, 1.0])
    scene = Scene([Node("/m", mesh=TriangleMesh(verts, [[0, 1, 2]]), transform=mirror)])
    idx = scene.geometry.indices.numpy().reshape(-1, 3)[0]
    p = scene.geometry.points.numpy()
    n = np.cross(p[idx[1]] - p[idx[0]], p[idx[2]] - p[idx[0]])
    # the mirrored triangle's outward normal is the mirror image of +z: -z
    assert n[2] < 0


def test_empty_scene_is_an_error():
    with pytest.raises(SceneError, match="no triangles"):
        Scene([Node("/only_xform")])
