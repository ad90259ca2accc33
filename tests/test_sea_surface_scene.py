"""The moving sea surface as scene geometry: ray casts against it (both backends), refit per frame, determinism,
GPS fix and barometer pressure under waves, load_scene / rig plumbing, bad input. Hand numbers: one long-crested
linear wave z = A cos(k x + phi - omega t), whose A, k, omega, phi the test reads from the sampled component."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py.errors import ConfigError, SceneError
from oceansim_py.raycast import rtcore
from oceansim_py.scene import load_scene
from oceansim_py.scene.graph import Node, Scene, TriangleMesh
from oceansim_py.scene.sea_surface import SeaStateConfig
from oceansim_py.sensors.barometer import Barometer, BarometerConfig
from oceansim_py.sensors.gps import GPS, GPSConfig

BACKENDS = ["warp", pytest.param("embree", marks=pytest.mark.skipif(not rtcore.embree_available(),
                                                                   reason="needs the embree extra (embreex)"))]

#: one long-crested linear wave travelling along +x: Hs 1 m (A = 0.354 m), Tp 5 s (wavelength 39 m)
ONE_WAVE = SeaStateConfig(spectrum="bretschneider", significant_wave_height=1.0, peak_period=5.0, n_frequencies=1,
                          spreading="none", steepness=0.0, seed=3)


def floor_scene(backend: str = "warp") -> Scene:
    floor = Node("/Floor", mesh=TriangleMesh(np.array([[-60, -60, -20], [60, -60, -20], [60, 60, -20],
                                                       [-60, 60, -20.0]]), np.array([[0, 1, 2], [0, 2, 3]])))
    return Scene([floor], device="cpu", raycast_backend=backend)


def wave(scene: Scene) -> tuple[float, float, float, float]:
    c = scene.sea_surface.components
    assert c.count == 1 and c.wave_vector[0, 1] == 0.0
    return float(c.amplitude[0]), float(c.wave_vector[0, 0]), float(c.omega[0]), float(c.phase[0])


def cast_up(scene: Scene, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hit heights (m) and node ids of rays cast straight up from z = -5 m; enough copies of each ray that the
    Embree backend casts with its own scene (it hands smaller casts to Warp's BVH until built)."""
    reps = 4096
    o = np.repeat(np.c_[xy, np.full(len(xy), -5.0)], reps, axis=0)
    r = scene.raycast(o, np.tile([0.0, 0.0, 1.0], (o.shape[0], 1)), 100.0)
    return (-5.0 + r.distance.numpy())[::reps], r.obj.numpy()[::reps]


@pytest.mark.parametrize("backend", BACKENDS)
def test_ray_up_hits_the_surface_where_the_wave_is(backend):
    scene = floor_scene(backend)
    node = scene.add_sea_surface(ONE_WAVE, size=60.0, resolution=1.0, center=(0.0, 0.0))
    assert node.label == "sea_surface" and node.material.name == "sea_surface" and node.material.reflectivity == 1.0
    assert scene.is_animated and scene.raycast_backend == backend
    a, k, w, phi = wave(scene)
    assert a == pytest.approx(math.sqrt(2) / 4, rel=2e-3) and k == pytest.approx(w**2 / 9.80665)
    xy = np.array([[3.0, -2.0], [7.0, 5.0], [-11.0, 12.0], [20.0, 0.0]])  # rest-grid vertices: exact heights
    for t in (0.0, 1.3, 4.1):
        scene.set_time(t)
        z, obj = cast_up(scene, xy)
        by_hand = a * np.cos(k * xy[:, 0] + phi - w * t)
        np.testing.assert_allclose(z, by_hand, atol=1e-4)
        np.testing.assert_allclose(scene.surface_height(xy), by_hand, atol=1e-9)
        assert np.all(obj == node.id) and scene.label_of(node.id) == "sea_surface"
    # the hit moved between the times as the wave predicts (not a fixed surface)
    assert np.ptp(a * np.cos(k * xy[0, 0] + phi - w * np.array([0.0, 1.3, 4.1]))) > 0.3


@pytest.mark.parametrize("backend", BACKENDS)
def test_trochoidal_surface_hit_matches_the_elevation_between_vertices(backend):
    scene = floor_scene(backend)
    scene.add_sea_surface(ONE_WAVE.replace(steepness=0.8), size=60.0, resolution=0.5, center=(0.0, 0.0))
    a, k, _, _ = wave(scene)
    h = 0.5 * math.sqrt(2.0)  # longest triangle edge (the diagonal); a chord of A cos(k s) sags by <= A k^2 h^2 / 8
    xy = np.array([[0.37, 0.81], [-8.13, 3.3], [14.61, -9.9]])
    scene.set_time(2.7)
    z, _ = cast_up(scene, xy)
    np.testing.assert_allclose(z, scene.surface_height(xy, 2.7), atol=a * k**2 * h**2 / 8 + 1e-5)


def test_set_time_refits_the_same_bvh_and_the_same_seed_gives_the_same_surface():
    one, two, other = floor_scene(), floor_scene(), floor_scene()
    for s, seed in ((one, 5), (two, 5), (other, 6)):
        s.add_sea_surface({"preset": "moderate", "n_frequencies": 8, "n_directions": 4, "seed": seed},
                          size=30.0, resolution=1.0)
    mesh, mesh_id = one.geometry.mesh, one.geometry.mesh.id
    before = one.geometry.points.numpy().copy()
    for s in (one, two, other):
        s.set_time(3.25)
    assert one.geometry.mesh is mesh and one.geometry.mesh.id == mesh_id  # refitted, not rebuilt
    after = one.geometry.points.numpy()
    assert not np.array_equal(after, before)
    np.testing.assert_array_equal(after[:4], before[:4])  # the floor's vertices did not move
    assert after.tobytes() == two.geometry.points.numpy().tobytes()
    assert not np.array_equal(after, other.geometry.points.numpy())
    # time is the only state: going back gives the first frame's vertices again, bit for bit
    one.set_time(one.metadata.get("start_time", 0.0))
    assert one.geometry.points.numpy().tobytes() == before.tobytes()


@pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")
def test_embree_updates_the_patch_geometry_without_a_new_scene():
    scene = floor_scene("embree")
    scene.add_sea_surface(ONE_WAVE, size=40.0, resolution=1.0, center=(0.0, 0.0))
    backend = scene.backend
    backend.build()
    handles = (backend.scene, list(backend._owned_scenes), list(backend._owned_geometries))
    scene.set_time(2.0)
    assert scene.backend is backend and (backend.scene, backend._owned_scenes, backend._owned_geometries) == handles
    (_, _, _, vertices, sea), = backend._seas
    np.testing.assert_array_equal(vertices, scene.geometry.sea_points(sea).numpy())
    assert "1 instance(s)" in backend.describe()


def test_gps_fix_only_while_the_antenna_is_above_the_wave():
    scene = floor_scene()
    scene.add_sea_surface(ONE_WAVE, size=60.0, resolution=1.0, center=(0.0, 0.0))
    a, k, w, phi = wave(scene)
    gps = GPS(GPSConfig(noise=False, depth_threshold=0.0))
    t = 1.0
    crest_x = (w * t - phi) / k  # k x + phi - w t = 0
    crest_x -= round(crest_x * k / (2 * math.pi)) * 2 * math.pi / k  # the crest nearest the origin
    z = 0.5 * a  # antenna half an amplitude above the mean surface
    poses = np.array([[crest_x, 0.0, z, 0, 0, 0, 1], [crest_x + math.pi / k, 0.0, z, 0, 0, 0, 1]])
    scene.set_time(t)
    r = gps.measure(poses, scene=scene)
    np.testing.assert_array_equal(r.fix, [False, True])  # under the crest no fix, over the trough a fix
    np.testing.assert_allclose(r.depth, [a - z, -a - z], atol=1e-9)
    # one antenna, fixed in place, through a wave period: a fix exactly while A cos(k x + phi - w t) < z
    times = np.linspace(0.0, 2 * math.pi / w, 41)
    fixed = np.tile([2.0, 0.0, z, 0, 0, 0, 1], (times.size, 1))
    r = gps.measure(fixed, times=times, scene=scene)
    by_hand = a * np.cos(k * 2.0 + phi - w * times) < z
    np.testing.assert_array_equal(r.fix, by_hand)
    assert 0 < by_hand.sum() < times.size
    # a flat surface_z given explicitly still wins (the caller's choice)
    assert gps.measure(poses, scene=scene, surface_z=0.0).fix.all()


def test_barometer_feels_the_wave_pressure_attenuated_with_depth():
    scene = floor_scene()
    scene.add_sea_surface(ONE_WAVE, size=60.0, resolution=1.0, center=(0.0, 0.0))
    a, k, w, phi = wave(scene)
    baro = Barometer(BarometerConfig(noise=False))
    c = baro.config
    rho_g = c.water_density * c.gravity
    t, x = 0.7, 4.0
    arg = k * x + phi - w * t
    depths = np.array([0.5, 3.0, 30.0])
    poses = np.c_[np.full(3, x), np.zeros(3), -depths, np.zeros((3, 3)), np.ones(3)]
    scene.set_time(t)
    r = baro.measure(poses, scene=scene)
    head = depths + a * np.exp(-k * depths) * math.cos(arg)  # linear theory, deep water
    np.testing.assert_allclose(r.pressure, c.atmospheric_pressure + rho_g * head, rtol=1e-12)
    np.testing.assert_allclose(r.depth, head, atol=1e-9)
    np.testing.assert_allclose(r.true_depth, depths + a * math.cos(arg), atol=1e-9)  # below the wave above it
    assert abs(r.depth[2] - 30.0) < 1e-3 * a  # deep down the wave is not felt: the mean depth
    # in a crest, above the mean surface: hydrostatic below the instantaneous surface
    crest_t = (k * x + phi) / w
    top = baro.measure(np.array([[x, 0.0, 0.5 * a, 0, 0, 0, 1]]), times=[crest_t], scene=scene)
    assert top.depth[0] == pytest.approx(0.5 * a, abs=1e-6)


def test_flat_scene_has_no_sea_node_and_answers_surface_z():
    scene = load_scene("tank", device="cpu")
    assert scene.sea_surface is None and "sea_surface" not in scene.labels
    np.testing.assert_array_equal(scene.surface_height([[1.0, 2.0], [3.0, 4.0]]), [scene.surface_z] * 2)
    np.testing.assert_array_equal(scene.pressure_head([[0, 0, scene.surface_z - 2.0]]), [2.0])


def test_load_scene_with_a_sea_state_preset():
    flat = load_scene("tank", device="cpu")
    scene = load_scene("tank", device="cpu", sea_state="calm", sea_surface_size=20.0, sea_surface_resolution=2.0)
    assert scene.sea_surface is not None and scene.sea_surface.config == SeaStateConfig.preset("calm")
    assert scene.sea_surface.num_vertices == 11 * 11
    assert scene.num_triangles == flat.num_triangles + 2 * 10 * 10
    lo, hi = flat.bounds
    np.testing.assert_allclose(scene.sea_surface.rest.mean(axis=0), [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2])
    assert "sea surface: pierson_moskowitz" in scene.summary()
    np.testing.assert_array_equal(scene.bounds, flat.bounds)  # the patch does not count in the scene's extent
    with pytest.raises(SceneError, match="already has a sea surface"):
        scene.add_sea_surface("calm")


@pytest.mark.parametrize("kwargs, message", [
    ({"sea_state": "tsunami"}, r"load_scene: sea_state: unknown SeaStateConfig preset 'tsunami'"),
    ({"sea_state": {"wind_speed": -1.0}}, r"SeaStateConfig\.wind_speed"),
    ({"sea_state": 3}, r"load_scene: sea_state: expected a SeaStateConfig"),
    ({"sea_state": "calm", "sea_surface_size": 1000.0, "sea_surface_resolution": 0.1},
     r"load_scene: sea_surface_resolution: a 1000.0 m patch at 0.1 m makes 10001 x 10001 vertices"),
    ({"sea_state": "calm", "sea_surface_size": -5.0}, r"load_scene: sea_surface_size: must be a positive"),
])
def test_bad_sea_surface_input_names_the_field(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        load_scene("tank", device="cpu", **kwargs)


def test_rig_sea_state_keys(tmp_path):
    from oceansim_py.dataset.rig import parse_rig

    base = {"scene": "tank", "trajectory": {"type": "transect", "start": [0, 0, -1], "end": [1, 0, -1], "speed": 1},
            "sensors": [{"name": "gps", "type": "gps", "rate_hz": 1}]}
    flat = parse_rig(base, "r.yaml")
    assert flat.sea_surface is None and flat.scene_options() == {} and "sea_surface" not in flat.to_dict()
    rig = parse_rig({**base, "sea_state": "moderate", "sea_surface_resolution": 2}, "r.yaml")
    assert rig.scene_options() == {"sea_state": {"preset": "moderate"}, "sea_surface_size": 200.0,
                                   "sea_surface_resolution": 2.0}
    assert rig.fingerprint() != flat.fingerprint()
    with pytest.raises(ConfigError, match=r"r.yaml: sea_state: unknown SeaStateConfig preset 'storm'"):
        parse_rig({**base, "sea_state": {"preset": "storm"}}, "r.yaml")
    with pytest.raises(ConfigError, match=r"r.yaml: sea_surface_size: applies to a moving sea surface"):
        parse_rig({**base, "sea_surface_size": 50}, "r.yaml")
    with pytest.raises(ConfigError, match=r"r.yaml: sea_surface_resolution: a 200.0 m patch at 0.01 m"):
        parse_rig({**base, "sea_state": "calm", "sea_surface_resolution": 0.01}, "r.yaml")


def test_dataset_rig_with_a_sea_state_renders_gps_and_barometer_against_the_waves(tmp_path):
    import yaml

    from oceansim_py.cli import main
    from oceansim_py.dataset import load

    rig = {"name": "sea", "scene": "tank", "seed": 2, "frames": 8, "tick_rate_hz": 2.0, "shard_size": 4,
           "sea_state": {"preset": "moderate", "n_frequencies": 8, "n_directions": 4, "seed": 1},
           "sea_surface_size": 20.0, "sea_surface_resolution": 1.0,
           "trajectory": {"type": "transect", "start": [-1.0, 0.0, -0.1], "end": [1.0, 0.0, -0.1], "speed": 0.5},
           "sensors": [{"name": "gps", "type": "gps", "rate_hz": 2.0,
                        "config": {"noise": False, "depth_threshold": 0.0}, "products": ["position", "fix", "depth"]},
                       {"name": "baro", "type": "barometer", "rate_hz": 2.0, "config": {"noise": False}}]}
    (tmp_path / "rig.yaml").write_text(yaml.safe_dump(rig))
    out = tmp_path / "out"
    assert main(["generate", "--rig", str(tmp_path / "rig.yaml"), "--out", str(out), "--no-progress",
                 "--device", "cpu"]) == 0
    scene = load_scene("tank", device="cpu", sea_state=rig["sea_state"], sea_surface_size=20.0)
    gps, baro = list(load(out).samples("gps")), list(load(out).samples("baro"))
    assert len(gps) == len(baro) == 8
    times = np.arange(8) / 2.0
    xy = np.c_[-1.0 + 0.5 * times, np.zeros(8)]
    eta = np.array([scene.surface_height(xy[i:i + 1], t)[0] for i, t in enumerate(times)])
    np.testing.assert_allclose([g["depth"] for g in gps], eta + 0.1, atol=1e-6)  # the antenna rides at z = -0.1
    np.testing.assert_array_equal([bool(g["fix"]) for g in gps], eta + 0.1 <= 0.0)
    np.testing.assert_allclose([b["true_depth"] for b in baro], np.maximum(eta + 0.1, 0.0), atol=1e-6)
    assert len(set(np.round(eta, 6))) == 8  # the surface moved from frame to frame


def test_an_upward_altimeter_sees_the_surface_return_move_with_the_wave():
    from oceansim_py.poses import pose_from_euler
    from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

    scene = floor_scene()
    node = scene.add_sea_surface(ONE_WAVE, size=60.0, resolution=1.0, center=(0.0, 0.0))
    a, k, w, phi = wave(scene)
    sonar = SinglebeamSonar(SinglebeamSonarConfig(opening_angle=1.0, cone_rings=2, rays_per_ring=8, min_range=0.5,
                                                  max_range=10.0, range_bins=200), device="cpu")
    x, depth = 6.0, 5.0
    up = pose_from_euler(x, 0.0, -depth, 0.0, -90.0, 0.0)
    # the nearest hit in a 1 degree cone is off the boresight's by at most depth (sin(0.5 deg) k A + 1 - cos 0.5 deg)
    tol = depth * (math.sin(math.radians(0.5)) * k * a + 1 - math.cos(math.radians(0.5))) + 1e-4
    for t in (0.0, 2.0):
        scene.set_time(t)
        r = sonar.render(scene, up).numpy()
        assert r["first_return_range"][0] == pytest.approx(depth + a * math.cos(k * x + phi - w * t), abs=tol)
        assert int(np.max(r["label_id"])) == scene.labels.index("sea_surface") == scene.node_label_ids[node.id]


def test_a_sea_node_must_match_its_patch():
    from oceansim_py.scene.sea_surface import SeaSurface

    sea = SeaSurface(ONE_WAVE, size=10.0, resolution=1.0, device="cpu")
    small = SeaSurface(ONE_WAVE, size=8.0, resolution=1.0, device="cpu")
    bad = Node("/SeaSurface", mesh=TriangleMesh(small.displace(small.rest, 0.0), small.triangles), sea_surface=sea)
    with pytest.raises(SceneError, match="must hold its patch's 121 vertices"):
        Scene([bad], device="cpu")
    shifted = np.eye(4)
    shifted[0, 3] = 5.0
    moved = Node("/SeaSurface", mesh=TriangleMesh(sea.displace(sea.rest, 0.0), sea.triangles), sea_surface=sea,
                 transform=shifted)
    with pytest.raises(SceneError, match="identity transform"):
        Scene([moved], device="cpu")
    with pytest.raises(SceneError, match="at most one sea surface"):
        Scene([Node("/A", mesh=TriangleMesh(sea.displace(sea.rest, 0.0), sea.triangles), sea_surface=sea),
               Node("/B", mesh=TriangleMesh(sea.displace(sea.rest, 0.0), sea.triangles), sea_surface=sea)],
              device="cpu")


def test_terrain_following_looks_through_the_waves():
    from oceansim_py.trajectory import Trajectory

    flat, scene = floor_scene(), floor_scene()
    scene.add_sea_surface(ONE_WAVE.replace(significant_wave_height=4.0), size=120.0, resolution=1.0,
                          center=(0.0, 0.0))
    xy = np.array([[float(x), 0.0] for x in range(-20, 21)])
    down = np.tile([0.0, 0.0, -1.0], (len(xy), 1))
    o = np.c_[xy, np.zeros(len(xy))]
    assert np.any(scene.raycast(o, down, 50.0).numpy()["object"] == scene.node("/SeaSurface").id)  # troughs
    r = scene.raycast_through_surface(o, down, 50.0).numpy()
    np.testing.assert_allclose(r["distance"], 20.0, atol=1e-4)  # the floor at z = -20 from z = 0
    assert np.all(r["object"] == scene.node("/Floor").id)
    kw = dict(altitude=3.0, spacing=10.0, speed=1.0, rate_hz=1.0, follow_terrain=True)
    np.testing.assert_allclose(Trajectory.lawnmower(scene, **kw).poses[:, 2], -17.0, atol=1e-4)
    np.testing.assert_allclose(Trajectory.lawnmower(flat, **kw).poses, Trajectory.lawnmower(scene, **kw).poses,
                               atol=1e-4)


def test_framing_ignores_the_sea_surface():
    from oceansim_py.scene.framing import framing_pose, subject_bounds

    box = np.array([[x, y, z] for z in (-2.5, -0.5) for y in (-1.0, 1.0) for x in (-1.0, 1.0)])
    faces = [[0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4], [2, 6, 3], [3, 6, 7], [0, 4, 2],
             [2, 4, 6], [1, 3, 5], [3, 7, 5]]

    def scene_with_rock() -> Scene:
        s = floor_scene()
        return Scene([*s.nodes, Node("/Rock", mesh=TriangleMesh(box, faces))], device="cpu")

    flat, scene = scene_with_rock(), scene_with_rock()
    scene.add_sea_surface(ONE_WAVE.replace(significant_wave_height=3.0), size=60.0, resolution=1.0,
                          center=(0.0, 0.0))
    for a, b in zip(subject_bounds(scene), subject_bounds(flat)):
        np.testing.assert_array_equal(a, b)
    for kind in ("imaging_sonar", "camera"):
        np.testing.assert_allclose(framing_pose(scene, kind, 20.0), framing_pose(flat, kind, 20.0), atol=1e-6)


@pytest.mark.parametrize("scene, kwargs, why", [
    ("harbour", {"sea_state": "flat", "sea_surface_size": 50.0}, "sea_state 'flat' has no wave patch"),
    ("harbour", {"sea_state": "flat", "sea_surface_resolution": -1.0}, "sea_state 'flat' has no wave patch"),
    ("tank", {"sea_surface_size": 50.0}, "declares no sea state and none was given"),
])
def test_patch_dimensions_without_a_sea_surface_are_refused_as_in_a_rig(scene, kwargs, why):
    # The size or resolution of a wave patch that is not made would be ignored without a word (a rig refuses it):
    # the load names the field and says why there is no patch.
    field = "sea_surface_size" if "sea_surface_size" in kwargs else "sea_surface_resolution"
    with pytest.raises(ConfigError, match=rf"^load_scene: {field}: applies to a moving sea surface, but .*{why}"):
        load_scene(scene, device="cpu", **kwargs)
    # without the dimension the same loads are flat, and a declared sea state takes them
    assert load_scene(scene, device="cpu", sea_state=kwargs.get("sea_state")).sea_surface is None
    rest = load_scene("harbour", device="cpu", sea_surface_size=40.0, sea_surface_resolution=2.0).sea_surface.rest
    assert np.ptp(rest[:, 0]) == pytest.approx(40.0) and len(rest) == 21 * 21


@pytest.mark.parametrize("value", ["none", "Flat", None])
def test_a_sea_state_that_is_no_preset_names_flat_as_the_other_choice(value):
    # 'flat' is the other valid sea_state of a load or a rig, but the error listed only the wave presets, so a user
    # who wrote "none" or "Flat" (or a null in a rig) was not told how to ask for no waves.
    from oceansim_py.dataset.rig import parse_rig

    base = {"scene": "tank", "trajectory": {"type": "transect", "start": [0, 0, -1], "end": [1, 0, -1], "speed": 1},
            "sensors": [{"name": "gps", "type": "gps", "rate_hz": 1}]}
    tail = r"\['calm', 'harbour_chop', 'moderate', 'rough'\].*; or 'flat' for the flat surface without waves$"
    with pytest.raises(ConfigError, match=rf"^r\.yaml: sea_state: .*{tail}"):
        parse_rig({**base, "sea_state": value}, "r.yaml")
    if value is not None:   # None is load_scene's default (the scene's own sea)
        with pytest.raises(ConfigError, match=rf"^load_scene: sea_state: unknown SeaStateConfig preset .*{tail}"):
            load_scene("tank", device="cpu", sea_state=value)
    # a field error of a mapping is left as it is
    with pytest.raises(ConfigError, match=r"SeaStateConfig\.wind_speed: must be > 0 m/s, got -1\.0$"):
        parse_rig({**base, "sea_state": {"wind_speed": -1.0}}, "r.yaml")
