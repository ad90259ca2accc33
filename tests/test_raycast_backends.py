"""Ray-cast backends (oceansim_py.raycast): the embree backend gives the warp backend's hits, faces, objects,
distances and normals on every built-in scene, on animated and instanced scenes and at the edge cases; backend
choice (argument, environment, auto) and its errors."""

from __future__ import annotations

import logging
import tracemalloc

import numpy as np
import pytest
import warp as wp

from oceansim_py import ConfigError, SceneError, load_scene
from oceansim_py.poses import quat_to_matrix
from oceansim_py.raycast import ENV_VAR, resolve_backend_name, rtcore
from oceansim_py.runtime import set_cpu_threads
from oceansim_py.scene import Node, RaycastResult, Scene, TriangleMesh
from oceansim_py.scene.animation import TransformTrack

from conftest import quad

embree = pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")


def fan_and_random_rays(scene: Scene, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Half a 130 x 20 deg sonar fan from the scene's suggested pose, half random directions from points near it."""
    rng = np.random.default_rng(seed)
    pose = scene.suggested_pose
    half = n // 2
    b = rng.uniform(-np.radians(65), np.radians(65), half)
    e = rng.uniform(-np.radians(10), np.radians(10), half)
    fan = np.stack([np.cos(e) * np.cos(b), -np.cos(e) * np.sin(b), np.sin(e)], axis=1) @ quat_to_matrix(pose[3:]).T
    rand = rng.normal(size=(n - half, 3))
    origins = np.concatenate([np.tile(pose[:3], (half, 1)), pose[:3] + rng.uniform(-2, 2, size=(n - half, 3))])
    return origins, np.concatenate([fan, rand])


def edge_tie(scene: Scene, origin: np.ndarray, direction: np.ndarray, t: float, faces: tuple[int, int]) -> bool:
    """Whether the hit point lies (within 1e-4 m) on both triangles: a ray through their shared edge or corner."""
    p = scene.geometry.points.numpy().astype(np.float64)
    idx = scene.geometry.indices.numpy().reshape(-1, 3)
    x = origin + t * direction / np.linalg.norm(direction)
    for f in faces:
        a, b, c = p[idx[f]]
        n = np.cross(b - a, c - a)
        area2 = np.linalg.norm(n)
        if abs(np.dot(x - a, n)) / area2 > 1e-4:
            return False
        # distance from x to the triangle's boundary, inside or out: barycentric coordinates scaled to metres
        bary = [np.dot(np.cross(v1 - v0, x - v0), n) / area2 / np.linalg.norm(v1 - v0)
                for v0, v1 in ((a, b), (b, c), (c, a))]
        if min(bary) < -1e-4:
            return False
    return True


def compare(scene_w: Scene, scene_e: Scene, origins: np.ndarray, dirs: np.ndarray, max_range=100.0) -> int:
    """Assert embree == warp (hits, distances, faces up to edge ties, objects, normals); return the edge ties."""
    scene_e.backend.build()
    a = scene_w.raycast(origins, dirs, max_range).numpy()
    b = scene_e.raycast(origins, dirs, max_range).numpy()
    hit = a["face"] >= 0
    assert np.array_equal(hit, b["face"] >= 0)
    assert np.all(np.isinf(b["distance"][~hit])) and np.all(b["object"][~hit] == -1)
    np.testing.assert_array_equal(b["normal"][~hit], 0.0)
    same = a["face"] == b["face"]
    ties = np.flatnonzero(hit & ~same)
    for i in ties:
        assert edge_tie(scene_w, origins[i], dirs[i], float(a["distance"][i]), (a["face"][i], b["face"][i])), i
    assert len(ties) <= max(2, hit.sum() // 5000)
    # the same face gives the same distance, bit for bit (Warp's triangle test re-evaluates Embree's face)
    np.testing.assert_array_equal(a["distance"][same], b["distance"][same])
    assert np.abs(a["distance"][hit] - b["distance"][hit]).max(initial=0.0) < 1e-4
    np.testing.assert_array_equal(a["object"][same], b["object"][same])
    np.testing.assert_allclose(a["normal"][same], b["normal"][same], atol=1e-6)
    # and the same normal, bit for bit (a sensor's cos(psi) and so its images are then the same bytes)
    np.testing.assert_array_equal(a["normal"][same], b["normal"][same])
    return len(ties)


@embree
@pytest.mark.parametrize("name", ["tank", "pier", "wreck"])
def test_builtin_scenes_match_warp(name: str) -> None:
    w = load_scene(name, raycast_backend="warp")
    e = load_scene(name, raycast_backend="embree")
    assert (w.raycast_backend, e.raycast_backend) == ("warp", "embree")
    origins, dirs = fan_and_random_rays(w, 40_000, seed=len(name))
    ties = compare(w, e, origins, dirs, 200.0)
    a = w.raycast(origins, dirs, 200.0).numpy()
    assert (a["face"] >= 0).mean() > 0.3
    print(f"{name}: {ties} edge tie(s) in 40000 rays")


def _moving_scene(backend: str) -> Scene:
    """A static 40 m wall at x = 5 (flattened), two boxes sharing one mesh (instanced) and a 2 m quad moving
    along +y from y = -4 (t = 0) to y = 4 (t = 8 s), facing -x at x = 3 (instanced, animated)."""
    box = TriangleMesh(*_box())
    shifted = [np.eye(4), np.eye(4)]
    shifted[0][:3, 3] = [2.0, 6.0, 0.0]
    shifted[1][:3, 3] = [2.0, -6.0, 0.0]
    shifted[1][:3, :3] = np.diag([2.0, 2.0, 2.0])
    keys = np.tile(np.eye(4), (2, 1, 1))
    keys[0, :3, 3] = [3.0, -4.0, 0.0]
    keys[1, :3, 3] = [3.0, 4.0, 0.0]
    nodes = [Node("/World"),
             Node("/World/wall", mesh=quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0)),
             Node("/World/boxA", mesh=box, transform=shifted[0]),
             Node("/World/boxB", mesh=box, transform=shifted[1]),
             Node("/World/door", mesh=quad([0.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 2.0),
                  track=TransformTrack([0.0, 8.0], keys))]
    return Scene(nodes, raycast_backend=backend)


def _box() -> tuple[np.ndarray, np.ndarray]:
    v = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    f = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6],
         [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    return v, np.array(f)


@embree
def test_animated_and_instanced_scene_matches_warp_after_set_time() -> None:
    w, e = _moving_scene("warp"), _moving_scene("embree")
    e.backend.build()
    assert "3 instance(s) of 2 mesh(es)" in e.backend.describe()
    rng = np.random.default_rng(5)
    origins = np.column_stack([np.zeros(4000), rng.uniform(-8, 8, 4000), rng.uniform(-1.5, 1.5, 4000)])
    dirs = np.tile([1.0, 0.0, 0.0], (4000, 1)) + rng.normal(scale=0.05, size=(4000, 3))
    for t in (0.0, 2.5, 4.0, 7.75, 9.0):
        w.set_time(t)
        e.set_time(t)
        compare(w, e, origins, dirs)
        # by hand: at time t the door spans y in y0 +- 1, z in +-1 at x = 3, y0 = -4 + t (held after 8 s)
        y0 = -4.0 + min(t, 8.0)
        res = e.raycast([[0.0, y0 + 0.5, 0.2], [0.0, y0 + 1.2, 0.0]], [[1.0, 0, 0], [1.0, 0, 0]], 50.0).numpy()
        assert res["distance"][0] == pytest.approx(3.0, abs=1e-6)
        assert e.node(int(res["object"][0])).path == "/World/door"
        np.testing.assert_allclose(res["normal"][0], [-1.0, 0.0, 0.0], atol=1e-6)
        assert e.node(int(res["object"][1])).path != "/World/door"
    # the scaled box (side 2 m centred at (2, -6, 0)) is hit at x = 1, the unit one at x = 1.5
    res = e.raycast([[0.0, -6.0, 0.0], [0.0, 6.0, 0.3]], [[1.0, 0, 0], [1.0, 0, 0]], 50.0).numpy()
    np.testing.assert_allclose(res["distance"], [1.0, 1.5], atol=1e-6)
    assert [e.node(int(k)).path for k in res["object"]] == ["/World/boxB", "/World/boxA"]


def _placed(xyz, quat, scale) -> np.ndarray:
    """A 4x4 node transform: rotation ``quat`` [qx, qy, qz, qw] times the per-axis ``scale``, then ``xyz``."""
    m = np.eye(4)
    m[:3, :3] = quat_to_matrix(np.asarray(quat, dtype=np.float64)) @ np.diag(scale)
    m[:3, 3] = xyz
    return m


@embree
def test_rotated_scaled_mirrored_and_spinning_instances_match_warp() -> None:
    """One box mesh placed four times with rotations, non-uniform scales and mirrors (a negative determinant flips
    the world winding), and once more spinning about a tilted axis while it slides (animated): Embree instances of
    the shared mesh carrying the node transforms. Rays from outside and from inside the boxes, before and after
    set_time, give warp's hits, faces, objects and bits; a per-ray range equal to warp's hit distance is a miss in
    both. (A transposed or mis-ordered instance matrix, which a translation and a uniform scale cannot show, moves
    every rotated box.)"""
    box = TriangleMesh(*_box())
    c, s = np.cos(np.radians(20.0)), np.sin(np.radians(20.0))
    tilted = [0.0, s / np.sqrt(2.0), s / np.sqrt(2.0), c]  # 40 deg about (0, 1, 1)
    spin = TransformTrack([0.0, 2.0], np.stack([_placed([0.0, -3.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0, 2.0, 0.5]),
                                                _placed([0.0, 3.0, 1.0], tilted, [1.0, 2.0, 0.5])]))

    def scene(backend: str) -> Scene:
        nodes = [Node("/World"),
                 Node("/World/a", mesh=box, transform=_placed([4.0, 0.0, 0.0], [0.0, 0.0, s, c], [2.0, 1.0, 0.5])),
                 Node("/World/b", mesh=box, transform=_placed([4.0, 4.0, 0.0], [s, 0.0, 0.0, c], [-1.0, 3.0, 1.0])),
                 Node("/World/c", mesh=box, transform=_placed([4.0, -4.0, 1.0], [0.0, s, 0.0, c], [-1.5, -1.0, 1.0])),
                 Node("/World/d", mesh=box, transform=_placed([8.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5], [1.0, 1.0, -4.0])),
                 Node("/World/spin", mesh=box, track=spin)]
        return Scene(nodes, raycast_backend=backend)

    w, e = scene("warp"), scene("embree")
    e.backend.build()
    assert "5 instance(s)" in e.backend.describe()
    rng = np.random.default_rng(4)
    n = 6000
    centres = np.array([[4.0, 0.0, 0.0], [4.0, 4.0, 0.0], [4.0, -4.0, 1.0], [8.0, 0.0, 0.0], [0.0, 0.0, 0.5]])
    outside = np.column_stack([np.full(n, -3.0), rng.uniform(-6, 6, n), rng.uniform(-3, 3, n)])
    toward = centres[rng.integers(0, 5, n)] + rng.uniform(-1.5, 1.5, (n, 3)) - outside
    inside = centres[rng.integers(0, 4, n)] + rng.uniform(-0.2, 0.2, (n, 3))
    origins, dirs = np.concatenate([outside, inside]), np.concatenate([toward, rng.normal(size=(n, 3))])
    for t in (0.0, 0.7, 2.0):
        w.set_time(t)
        e.set_time(t)
        compare(w, e, origins, dirs)
        hit = w.raycast(origins, dirs, 100.0).numpy()
        got = hit["face"] >= 0
        assert got[n:].all() and got[:n].mean() > 0.25
        at = [s_.raycast(origins[got], dirs[got], hit["distance"][got]).numpy()["face"] for s_ in (w, e)]
        assert (at[0] == -1).all() and (at[1] == -1).all()


@embree
def test_edge_cases_match_warp(wall_scene: Scene) -> None:
    e = Scene(list(wall_scene.nodes), raycast_backend="embree")
    w = Scene(list(wall_scene.nodes), raycast_backend="warp")
    e.backend.build()
    # a ray starting on the wall (x = 5), leaving it or going through it; one starting 1 um in front of it
    origins = np.array([[5.0, 1.0, 1.0], [5.0, 1.0, 1.0], [5.0 - 1e-6, 0.0, 0.0]])
    dirs = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    a = w.raycast(origins, dirs, 10.0).numpy()
    b = e.raycast(origins, dirs, 10.0).numpy()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert b["face"][2] >= 0 and b["distance"][2] == pytest.approx(1e-6, abs=1e-7)
    # the hit exactly at max_range is outside the range (0 < t < max_range) in both; just beyond it is inside
    five = np.float32(5.0)
    for r, hit in ((five, False), (np.nextafter(five, np.float32(6)), True), (np.float32(4.9999995), False)):
        res = [s.raycast([[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]], float(r)).numpy() for s in (w, e)]
        assert [bool(x["face"][0] >= 0) for x in res] == [hit, hit], r
        assert res[0]["distance"][0] == res[1]["distance"][0]
    # zero, NaN and infinite inputs in device arrays (Scene.raycast refuses them on the host) are misses
    o = np.array([[0, 0, 0], [np.nan, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [np.inf, 0, 0]], np.float32)
    d = np.array([[0, 0, 0], [1, 0, 0], [np.nan, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]], np.float32)
    r = np.array([10, 10, 10, np.nan, np.inf, 10], np.float32)
    for s in (w, e):
        with wp.ScopedDevice("cpu"):
            out = RaycastResult(wp.empty(6, dtype=wp.float32), wp.empty(6, dtype=wp.vec3),
                                wp.empty(6, dtype=wp.int32), wp.empty(6, dtype=wp.int32))
            s.raycast_into(wp.array(o, dtype=wp.vec3), wp.array(d, dtype=wp.vec3), wp.array(r, dtype=wp.float32), out)
        res = out.numpy()
        assert list(res["face"] >= 0) == [False, False, False, False, True, False], s.raycast_backend
        assert res["distance"][4] == pytest.approx(5.0)


@pytest.mark.parametrize("backend", ["warp", pytest.param("embree", marks=embree)])
def test_directions_too_short_to_normalise_are_misses(backend: str, wall_scene: Scene) -> None:
    """A direction shorter than 2^-63 has a subnormal (or zero) float32 squared length: its length, and so the unit
    direction, came out wrong (a (1e-22, 0, 0) ray met the wall 5 m away at 4.95 m; (3e-23, 0, 0) at 6.24 m). It is
    a miss, like a zero direction; from 2^-63 up the ray is cast along its true direction."""
    s = Scene(list(wall_scene.nodes), raycast_backend=backend)
    if backend == "embree":
        s.backend.build()
    lengths = [3e-23, 1e-22, 1e-19, 2.0 ** -63, 1e-18, 1.0, 1e19]
    res = s.raycast(np.zeros((len(lengths), 3)), [[x, 0.0, 0.0] for x in lengths], 10.0).numpy()
    np.testing.assert_array_equal(res["distance"], [np.inf, np.inf, np.inf, 5.0, 5.0, 5.0, 5.0])
    np.testing.assert_array_equal(res["face"] >= 0, [False, False, False, True, True, True, True])


@embree
def test_packets_with_edge_hits_and_invalid_lanes_match_warp(wall_scene: Scene) -> None:
    """4099 rays (packets of 8 and a partial one): rays along +x onto the wall's diagonal (y = -z at x = 5), where an
    edge function of Warp's triangle test is exactly 0 and it takes its double-precision path, every fifth ray with
    a NaN origin, the rest random. Same hits, same bits of distance and normal as warp; the diagonal rays hit at
    exactly 5 m (on either triangle: an edge tie)."""
    w = Scene(list(wall_scene.nodes), raycast_backend="warp")
    e = Scene(list(wall_scene.nodes), raycast_backend="embree")
    e.backend.build()
    rng = np.random.default_rng(3)
    n = 4099
    origins = rng.uniform(-1.0, 1.0, (n, 3))
    dirs = rng.normal(size=(n, 3))
    diagonal = np.arange(0, n, 97)
    ys = np.round(np.linspace(-19.0, 19.0, len(diagonal)))  # the wall spans -20 .. 20 m
    origins[diagonal] = np.column_stack([np.zeros_like(ys), ys, -ys])
    dirs[diagonal] = [1.0, 0.0, 0.0]
    invalid = np.setdiff1d(np.arange(1, n, 5), diagonal)
    origins[invalid] = np.nan
    with wp.ScopedDevice("cpu"):
        o = wp.array(origins.astype(np.float32), dtype=wp.vec3)
        d = wp.array(dirs.astype(np.float32), dtype=wp.vec3)
        r = wp.array([100.0], dtype=wp.float32)
        outs = [RaycastResult(wp.empty(n, dtype=wp.float32), wp.empty(n, dtype=wp.vec3), wp.empty(n, dtype=wp.int32),
                              wp.empty(n, dtype=wp.int32)) for _ in range(2)]
    w.raycast_into(o, d, r, outs[0])
    e.raycast_into(o, d, r, outs[1])
    a, b = outs[0].numpy(), outs[1].numpy()
    assert np.array_equal(a["face"] >= 0, b["face"] >= 0)
    assert np.all(b["face"][invalid] == -1) and np.all(np.isinf(b["distance"][invalid]))
    np.testing.assert_array_equal(b["distance"][diagonal], 5.0)
    off = np.setdiff1d(np.arange(n), diagonal)
    assert (a["face"][off] >= 0).sum() > n // 4
    for k in a:
        np.testing.assert_array_equal(a[k][off], b[k][off], err_msg=k)
    np.testing.assert_array_equal(a["normal"][diagonal], b["normal"][diagonal])


@embree
def test_embree_threads_bitwise_and_no_host_copies(wall_scene: Scene) -> None:
    e = Scene(list(wall_scene.nodes), raycast_backend="embree")
    assert not e.backend.built
    rng = np.random.default_rng(9)
    n = 100_000
    with wp.ScopedDevice("cpu"):
        o = wp.array(rng.uniform(-1, 1, (n, 3)).astype(np.float32), dtype=wp.vec3)
        d = wp.array(rng.normal(size=(n, 3)).astype(np.float32), dtype=wp.vec3)
        r = wp.array([100.0], dtype=wp.float32)
        outs = [RaycastResult(wp.empty(n, dtype=wp.float32), wp.empty(n, dtype=wp.vec3), wp.empty(n, dtype=wp.int32),
                              wp.empty(n, dtype=wp.int32)) for _ in range(2)]
    try:
        set_cpu_threads(1)
        e.raycast_into(o, d, r, outs[0])
        assert e.backend.built  # the first cast of >= BUILD_AT_RAYS rays builds the Embree scene
        set_cpu_threads(2)
        e.raycast_into(o, d, r, outs[1])  # warm
        tracemalloc.start()
        e.raycast_into(o, d, r, outs[1])
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        set_cpu_threads(None)
    # a copy of the rays or results would be >= 1.2 MB of numpy memory; the cast reads and writes in place
    assert peak < 64 * 1024
    one, two = outs[0].numpy(), outs[1].numpy()
    assert (one["face"] >= 0).sum() > n // 4
    for k in one:
        assert one[k].tobytes() == two[k].tobytes(), k


@embree
def test_degenerate_and_nan_triangles_same_as_warp(caplog: pytest.LogCaptureFixture) -> None:
    verts = np.array([[5, -1, -1], [5, 1, -1], [5, 1, 1], [5, 3, 1], [5, np.nan, 0], [5, 0, 0]], dtype=float)
    tris = np.array([[0, 1, 2], [1, 2, 3], [2, 3, 3], [0, 4, 5], [1, 2, 2]])  # 1 good, 1 good, 2 zero-area, 1 NaN
    scenes = {}
    for backend in ("warp", "embree"):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            scenes[backend] = Scene([Node("/m", mesh=TriangleMesh(verts, tris))], raycast_backend=backend)
        assert "dropped 3 degenerate" in caplog.text
        assert scenes[backend].num_triangles == 2
    origins = np.column_stack([np.zeros(200), np.linspace(-2, 4, 200), np.linspace(-1.5, 1.5, 200)])
    compare(scenes["warp"], scenes["embree"], origins, np.tile([1.0, 0.0, 0.0], (200, 1)))
    bad = TriangleMesh(np.full((3, 3), np.nan), [[0, 1, 2]])
    for backend in ("warp", "embree"):
        with pytest.raises(SceneError, match="no triangles"):
            Scene([Node("/m", mesh=bad)], raycast_backend=backend)


@pytest.mark.parametrize("backend", ["warp", pytest.param("embree", marks=embree)])
def test_vertices_beyond_float32_are_dropped_like_nan(backend: str, caplog: pytest.LogCaptureFixture) -> None:
    """A vertex finite in float64 but beyond float32's range (1e39 m) would be an infinite world point on the device
    (Embree's input must be finite): its triangle is dropped with the degenerate ones, under both backends."""
    verts = np.array([[5, -1, -1], [5, 1, -1], [5, 1, 1], [1e39, 0, 0], [5, -1, 1]], dtype=float)
    with caplog.at_level(logging.WARNING):
        s = Scene([Node("/m", mesh=TriangleMesh(verts, [[0, 1, 2], [0, 2, 3], [0, 2, 4]]))], raycast_backend=backend)
    assert "dropped 1 degenerate" in caplog.text
    assert s.num_triangles == 2
    assert np.isfinite(s.geometry.points.numpy()[s.geometry.indices.numpy()]).all()
    np.testing.assert_array_equal(s.bounds[0], [5, -1, -1])  # the scene's extent leaves the dropped vertex out
    np.testing.assert_array_equal(s.bounds[1], [5, 1, 1])
    res = s.raycast([[0.0, 0.5, -0.5], [0.0, -0.5, 0.5]], [[1.0, 0, 0], [1.0, 0, 0]], 10.0).numpy()
    np.testing.assert_array_equal(res["distance"], [5.0, 5.0])


class _FakeCuda:
    is_cpu = False

    def __str__(self) -> str:
        return "cuda:0"


def test_backend_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = wp.get_device("cpu")
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert resolve_backend_name(_FakeCuda()) == "warp"
    assert resolve_backend_name(cpu) == ("embree" if rtcore.embree_available() else "warp")
    assert resolve_backend_name(cpu, "warp") == "warp"
    monkeypatch.setenv(ENV_VAR, "warp")
    assert resolve_backend_name(cpu) == "warp"
    assert resolve_backend_name(cpu, "auto") == ("embree" if rtcore.embree_available() else "warp")
    monkeypatch.setenv(ENV_VAR, "Embree")
    assert resolve_backend_name(_FakeCuda()) == "warp"  # the environment's choice applies to CPU scenes
    with pytest.raises(ConfigError, match="casts on the CPU"):
        resolve_backend_name(_FakeCuda(), "embree")
    monkeypatch.setenv(ENV_VAR, "optix")
    with pytest.raises(ConfigError, match="OCEANSIM_RAYCAST_BACKEND='optix' is not a ray-cast backend"):
        resolve_backend_name(cpu)
    with pytest.raises(ConfigError, match="raycast_backend='bvh' is not a ray-cast backend; choose one of auto"):
        resolve_backend_name(cpu, "bvh")


@embree
def test_scene_backend_follows_argument_and_environment(monkeypatch: pytest.MonkeyPatch, wall_scene: Scene) -> None:
    monkeypatch.setenv(ENV_VAR, "warp")
    s = Scene(list(wall_scene.nodes))
    assert s.raycast_backend == "warp"
    s.set_raycast_backend("embree")
    assert s.raycast_backend == "embree" and "embree" in s.summary()
    # a small cast on an unbuilt Embree scene goes through Warp's BVH and builds nothing (a one-ray probe of a
    # large scene never pays for an Embree build); once built, every cast goes through Embree
    assert s.raycast([[0, 0, 0]], [[1, 0, 0]], 10.0).numpy()["distance"][0] == pytest.approx(5.0)
    assert not s.backend.built and "not built" in s.backend.describe()
    s.backend.build()
    assert s.raycast([[0, 0, 0]], [[1, 0, 0]], 10.0).numpy()["distance"][0] == pytest.approx(5.0)
    assert "2 flattened triangles, 0 instance(s)" in s.backend.describe()
    monkeypatch.setenv(ENV_VAR, "auto")
    assert load_scene("tank", raycast_backend="warp").raycast_backend == "warp"
    assert load_scene("tank").raycast_backend == "embree"


def test_embree_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch, wall_scene: Scene) -> None:
    def no_embreex() -> list[str]:
        raise ImportError("No module named 'embreex'")

    monkeypatch.setattr(rtcore, "_library", None)
    monkeypatch.setattr(rtcore, "_load_error", None)
    monkeypatch.setattr(rtcore, "_candidate_paths", no_embreex)
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert not rtcore.embree_available()
    assert Scene(list(wall_scene.nodes)).raycast_backend == "warp"  # auto falls back
    with pytest.raises(ConfigError, match=r"raycast_backend='embree'.*pip install 'oceansim_py\[embree\]'"):
        Scene(list(wall_scene.nodes), raycast_backend="embree")
    monkeypatch.setenv(ENV_VAR, "embree")
    with pytest.raises(ConfigError, match=r"OCEANSIM_RAYCAST_BACKEND='embree'.*pip install 'oceansim_py\[embree\]'"):
        load_scene("tank")


def test_info_names_the_backend(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from oceansim_py.cli import main

    monkeypatch.setenv(ENV_VAR, "warp")
    assert main(["info"]) == 0
    assert "ray casts: cpu -> warp (OCEANSIM_RAYCAST_BACKEND=warp;" in capsys.readouterr().out
    monkeypatch.delenv(ENV_VAR)
    assert main(["info"]) == 0
    expected = "embree" if rtcore.embree_available() else "warp"
    assert f"ray casts: cpu -> {expected} (OCEANSIM_RAYCAST_BACKEND=auto;" in capsys.readouterr().out
    monkeypatch.setenv(ENV_VAR, "x")
    assert main(["info"]) == 0
    assert "OCEANSIM_RAYCAST_BACKEND='x' is not a ray-cast backend" in capsys.readouterr().out


@embree
def test_ray_through_a_shared_edge_does_not_slip_through() -> None:
    """A sonar-fan ray of the pier that meets a surface on the shared edge of two triangles: Warp's
    watertight test hits it, and so must Embree (robust mode; the default mode let this ray through to a miss)."""
    w = load_scene("pier", raycast_backend="warp")
    e = load_scene("pier", raycast_backend="embree")
    e.backend.build()
    origin = np.array([[-3.0, 0.0, -2.0]], np.float32)
    direction = np.array([[0.9289392828941345, -0.331594318151474, -0.16467240452766418]], np.float32)
    a = w.raycast(origin, direction, 1000.0).numpy()
    b = e.raycast(origin, direction, 1000.0).numpy()
    assert a["face"][0] >= 0 and b["face"][0] >= 0
    assert b["distance"][0] == pytest.approx(a["distance"][0], abs=1e-5)
    assert b["object"][0] == a["object"][0]


@embree
def test_flat_records_hold_the_world_triangles_warp_normals_faces_and_objects() -> None:
    """The moving scene flattens only the wall (the boxes share a mesh, the door is animated): two 64-byte records,
    by hand: the wall quad's corners (5, +-20, +-20), its unit normal (-1, 0, 0) (cross(b - a, c - a) =
    (-1600, 0, 0)), the wall's two world faces and its node id, then two zero words."""
    e = _moving_scene("embree")
    e.backend.build()
    assert e.backend.flat_triangles == 2
    rec = e.backend.flat_records.numpy().reshape(-1, 16)
    assert rec.shape == (2, 16)
    wall = [n.path for n in e.nodes].index("/World/wall")
    first = next(s.face_offset for s in e.geometry.slots if s.node.path == "/World/wall")
    np.testing.assert_array_equal(rec[0, :9], [5, 20, -20, 5, -20, -20, 5, -20, 20])
    np.testing.assert_array_equal(rec[1, :9], [5, 20, -20, 5, -20, 20, 5, 20, 20])
    np.testing.assert_array_equal(rec[:, 9:12], [[-1, 0, 0], [-1, 0, 0]])
    np.testing.assert_array_equal(rec[:, 12:14].view(np.int32), [[first, wall], [first + 1, wall]])
    np.testing.assert_array_equal(rec[:, 14:], 0.0)


def _vm_flags(address: int) -> list[str]:
    """The VmFlags of the mapping of this process holding ``address`` (Linux /proc/self/smaps)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                inside = lo <= address < hi
            elif inside and head[0] == "VmFlags:":
                return head[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


@embree
def test_large_record_tables_start_on_a_huge_page() -> None:
    """A 200 x 200 grid (80 000 triangles, 5.1 MB of records, more than one 2 MiB page): the table starts on a
    2 MiB boundary, in memory advised for transparent huge pages where Linux offers them on request ('hg' in its
    VmFlags), and holds each face's record: record q is world face q (the grid is flattened whole, in order), its
    vertices are that face's corners, its object the grid's node; rays cast through it give warp's results."""
    import mmap
    import os

    k = 200
    x, y = np.meshgrid(np.arange(k + 1, dtype=np.float64), np.arange(k + 1, dtype=np.float64), indexing="ij")
    v = np.column_stack([x.ravel(), y.ravel(), 0.01 * np.sin(x.ravel()) - 5.0])
    a = (np.arange(k)[:, None] * (k + 1) + np.arange(k)[None, :]).ravel()
    tris = np.concatenate([np.column_stack([a, a + k + 1, a + k + 2]), np.column_stack([a, a + k + 2, a + 1])])
    nodes = [Node("/Grid", mesh=TriangleMesh(v, tris))]
    e = Scene(nodes, device="cpu", raycast_backend="embree")
    e.backend.build()
    records = e.backend.flat_records
    assert e.backend.flat_triangles == 2 * k * k and records.shape == (16 * 2 * k * k,)
    assert records.ptr % (1 << 21) == 0
    thp = "/sys/kernel/mm/transparent_hugepage/enabled"
    if hasattr(mmap, "MADV_HUGEPAGE") and os.path.exists(thp) and "[never]" not in open(thp).read():
        assert "hg" in _vm_flags(records.ptr)
    rec = records.numpy().reshape(-1, 16)
    points = e.geometry.points.numpy()
    indices = e.geometry.indices.numpy().reshape(-1, 3)
    np.testing.assert_array_equal(rec[:, 12].view(np.int32), np.arange(2 * k * k))
    np.testing.assert_array_equal(rec[:, 13].view(np.int32), 0)
    np.testing.assert_array_equal(rec[:, :9], points[indices].reshape(-1, 9))
    w = Scene(nodes, device="cpu", raycast_backend="warp")
    rng = np.random.default_rng(2)
    origins = np.column_stack([rng.uniform(0, k, (6000, 2)), np.zeros(6000)])
    compare(w, e, origins, rng.normal(size=(6000, 3)) - [0.0, 0.0, 1.0])


@embree
def test_traverse_only_finds_the_casts_hits(wall_scene: Scene) -> None:
    """The benchmark's traversal-only path (no post-pass) hits what the cast hits: rays along +x from x = 0 meet the
    wall at exactly 5 m, random rays at the cast's distance within float rounding, on the same triangle (the wall
    is flattened whole, so Embree's primitive id is the world face)."""
    e = Scene(list(wall_scene.nodes), raycast_backend="embree")
    rng = np.random.default_rng(5)
    n = 5003
    origins = rng.uniform(-1.0, 1.0, (n, 3))
    dirs = rng.normal(size=(n, 3))
    origins[::7] = np.column_stack([np.zeros(len(origins[::7])), rng.uniform(-15, 15, (len(origins[::7]), 2))])
    dirs[::7] = [1.0, 0.0, 0.0]
    with wp.ScopedDevice("cpu"):
        o = wp.array(origins.astype(np.float32), dtype=wp.vec3)
        d = wp.array(dirs.astype(np.float32), dtype=wp.vec3)
        r = wp.array([100.0], dtype=wp.float32)
        out = RaycastResult(wp.empty(n, dtype=wp.float32), wp.empty(n, dtype=wp.vec3), wp.empty(n, dtype=wp.int32),
                            wp.empty(n, dtype=wp.int32))
        distance, prim = wp.empty(n, dtype=wp.float32), wp.empty(n, dtype=wp.int32)
    e.raycast_into(o, d, r, out)
    e.backend.traverse_only(o, d, r, distance, prim)
    cast, t, p = out.numpy(), distance.numpy(), prim.numpy()
    hit = cast["face"] >= 0
    assert hit.sum() > n // 4
    np.testing.assert_array_equal(p >= 0, hit)
    assert np.all(np.isinf(t[~hit]))
    np.testing.assert_array_equal(t[::7], 5.0)
    np.testing.assert_allclose(t[hit], cast["distance"][hit], rtol=1e-5)
    same = p[hit] == cast["face"][hit]
    assert same.sum() >= hit.sum() - 2  # edge ties on the diagonal aside


@embree
def test_hit_records_refused_when_memory_is_short(monkeypatch: pytest.MonkeyPatch, wall_scene: Scene) -> None:
    """The flattened wall's two 64-byte records (128 bytes) do not fit in 100 bytes of free memory: a ConfigError
    naming the records and the way out, before Embree builds anything."""
    import oceansim_py.runtime as runtime

    e = Scene(list(wall_scene.nodes), raycast_backend="embree")
    monkeypatch.setattr(runtime, "available_memory_bytes", lambda device: 100)
    with pytest.raises(ConfigError, match="Embree hit records.*raycast_backend='warp'"):
        e.backend.build()
    assert not e.backend.built
    monkeypatch.setattr(runtime, "available_memory_bytes", lambda device: 1 << 30)
    e.backend.build()
    assert e.backend.flat_records.shape == (32,)


@pytest.mark.parametrize("backend", ["warp", pytest.param("embree", marks=embree)])
def test_strided_or_short_cast_arrays_are_refused(backend: str, wall_scene: Scene) -> None:
    # The embree backend reads and writes the arrays through raw pointers: every other ray of a (2N,) array read as
    # if it were N contiguous rays (wrong hits, no error), and an output shorter than the rays written past its
    # end. Scene.raycast_into refuses both, for every backend, before casting.
    s = Scene(list(wall_scene.nodes), raycast_backend=backend)
    n = 4100  # past BUILD_AT_RAYS: the embree backend casts through Embree
    with wp.ScopedDevice("cpu"):
        o2 = wp.zeros(2 * n, dtype=wp.vec3)
        d2 = wp.array(np.tile([1.0, 0.0, 0.0], (2 * n, 1)).astype(np.float32), dtype=wp.vec3)
        o, d, r = wp.zeros(n, dtype=wp.vec3), d2[:n], wp.array([100.0], dtype=wp.float32)

        def out(m: int = n) -> RaycastResult:
            return RaycastResult(wp.full(m, 7.0, dtype=wp.float32), wp.empty(m, dtype=wp.vec3),
                                 wp.empty(m, dtype=wp.int32), wp.empty(m, dtype=wp.int32))

        with pytest.raises(SceneError, match="origins must be a contiguous 1-D array .* a strided view"):
            s.raycast_into(o2[::2], d, r, out())
        with pytest.raises(SceneError, match="directions must be a contiguous"):
            s.raycast_into(o, d2[::2], r, out())
        with pytest.raises(SceneError, match=r"max_range must be a contiguous 1-D array of 1 or 4100 entries"):
            s.raycast_into(o, d, wp.array([100.0, 100.0], dtype=wp.float32), out())
        short = out(n - 5)
        with pytest.raises(SceneError, match=r"distance must be a contiguous 1-D array of 4100 entries .* \(4095,\)"):
            s.raycast_into(o, d, r, short)
        assert (short.distance.numpy() == 7.0).all()
        good = out()
        s.raycast_into(o, d, r, good)  # contiguous slices of larger arrays are fine
    np.testing.assert_array_equal(good.distance.numpy(), 5.0)


@embree
def test_concurrent_first_casts_build_the_embree_scene_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four threads whose first casts (>= BUILD_AT_RAYS rays) on an unbuilt Embree scene start together: one builds,
    the others wait for it, and every thread gets warp's results. Without the build lock each thread built its own
    Embree scene into the same backend at once (an Embree 'invalid operation' error, or a cast against the other's
    half-built scene). The build's memory check is slowed so that the threads overlap inside the build."""
    import time

    from conftest import run_in_threads
    from oceansim_py.raycast import embree_backend

    builds: list[int] = []
    check = embree_backend.check_memory

    def slow_check(*args, **kwargs) -> None:  # noqa: ANN002, ANN003 - check_memory's signature
        builds.append(1)
        time.sleep(0.05)
        check(*args, **kwargs)

    monkeypatch.setattr(embree_backend, "check_memory", slow_check)
    w, e = _moving_scene("warp"), _moving_scene("embree")
    rng = np.random.default_rng(11)
    n = 5000
    origins = np.column_stack([np.zeros(n), rng.uniform(-8, 8, n), rng.uniform(-1.5, 1.5, n)])
    dirs = np.tile([1.0, 0.0, 0.0], (n, 1)) + rng.normal(scale=0.05, size=(n, 3))
    expected = w.raycast(origins, dirs, 100.0).numpy()
    results: dict[int, dict[str, np.ndarray]] = {}

    def first_cast(k: int) -> None:
        results[k] = e.raycast(origins, dirs, 100.0).numpy()

    run_in_threads(first_cast, 4)
    assert len(builds) == 1 and e.backend.built
    for res in results.values():
        for key in expected:
            np.testing.assert_array_equal(res[key], expected[key], err_msg=key)
