"""Forward-looking imaging sonar (docs/PHYSICS.md §1): every check against a number computed by hand.

Scenes are built in memory. The sonar sits at the origin looking along +x (identity pose) unless stated;
+y is port, so a starboard object has y < 0 and must appear right of centre (positive bearing).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from oceansim_py import ConfigError, ImagingSonar, ImagingSonarConfig, set_cpu_threads
from oceansim_py.cli import main as cli_main
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh

MU = 0.5
MATERIAL = Material.from_properties("test", (0.5, 0.5, 0.5), reflectivity=MU)
IDENTITY = pose_from_euler(0.0, 0.0, 0.0)


def quiet(**kw) -> ImagingSonarConfig:
    """A small noise-free config in physical units (no absorption, no normalisation)."""
    base = dict(horizontal_fov=2.0, vertical_fov=2.0, min_range=1.0, max_range=11.0, n_beams=8, range_bins=100,
                rays_per_beam=4, elevation_rays=16, absorption=0.0, normalisation="none",
                multiplicative_sigma=0.0, additive_sigma=0.0, additive_range_scaled=False)
    base.update(kw)
    return ImagingSonarConfig(**base)


def wall(x: float, half: float = 50.0, tilt_deg: float = 0.0) -> TriangleMesh:
    """A square plane facing -x through (x, 0, 0), turned by ``tilt_deg`` about the vertical axis there."""
    v = np.array([[0, -half, -half], [0, half, -half], [0, half, half], [0, -half, half]], dtype=float)
    t = math.radians(tilt_deg)
    rot = np.array([[math.cos(t), -math.sin(t), 0], [math.sin(t), math.cos(t), 0], [0, 0, 1]])
    return TriangleMesh(v @ rot.T + [x, 0, 0], [[0, 1, 2], [0, 2, 3]])


def box(center, size) -> TriangleMesh:
    m = trimesh.creation.box(extents=[size] * 3)
    return TriangleMesh(np.asarray(m.vertices) + np.asarray(center, dtype=float), m.faces)


def scene_of(**meshes: TriangleMesh) -> Scene:
    return Scene([Node("/W")] + [Node(f"/W/{name}", mesh=m, material=MATERIAL, label=name)
                                 for name, m in meshes.items()], device="cpu")


def render(config: ImagingSonarConfig, scene: Scene, poses=IDENTITY, frame_index: int = 0) -> dict:
    return ImagingSonar(config, device="cpu").render(scene, poses, frame_index=frame_index).numpy()


def test_plane_lands_in_expected_range_bin_with_expected_energy():
    cfg = quiet()
    s = scene_of(wall=wall(5.05))
    out = render(cfg, s)
    img = out["clean_intensity"][0]
    # r = 5.05 / (cos e cos b) in [5.05, 5.0515] for |b|, |e| <= 1 deg: bin floor((5.05 - 1) / 0.1) = 40.
    rows = np.nonzero(img.sum(axis=1))[0]
    assert rows.tolist() == [40]
    assert out["hit_count"][0].sum() == cfg.rays_per_pose == 8 * 4 * 16
    # Energy: mu * sum cos(psi) dOmega ~ mu * Theta * Phi (small angles) = 0.5 * (2 pi / 180)^2.
    assert img.sum() == pytest.approx(MU * math.radians(2.0) ** 2, rel=1e-3)
    # Every hit bin names the wall; empty bins hold -1.
    assert np.all(out["label_id"][0][40] == s.labels.index("wall"))
    assert np.all(out["label_id"][0][:40] == -1)
    # Bin centres: row 40 is centred at 1 + 40.5 * 0.1 = 5.05 m.
    assert out["ranges"][40] == pytest.approx(5.05)


def test_wide_fan_energy_matches_the_solid_angle_integral():
    # Wall facing the sonar: cos(psi) = cos e cos b and dOmega = cos e db de, so the total return is
    # mu * int cos b db * int cos^2 e de = mu * 2 sin(Theta / 2) * (Phi / 2 + sin(Phi) / 2).
    cfg = quiet(horizontal_fov=60.0, vertical_fov=40.0, n_beams=30, rays_per_beam=4, elevation_rays=80,
                range_bins=20)
    total = render(cfg, scene_of(wall=wall(3.0)))["clean_intensity"].sum()
    phi = math.radians(40.0)
    assert total == pytest.approx(MU * 2 * math.sin(math.radians(30.0)) * (phi / 2 + math.sin(phi) / 2), rel=1e-3)


def test_label_is_that_of_the_strongest_return_in_the_bin():
    # One beam, one range bin: the port half of the fan sees a mu = 0.1 wall, the starboard half a
    # mu = 0.9 wall, both at 5.05 m. The bin sums both and is labelled with the stronger.
    weak_m = Material.from_properties("weak", (0.5, 0.5, 0.5), reflectivity=0.1)
    strong_m = Material.from_properties("strong", (0.5, 0.5, 0.5), reflectivity=0.9)
    port_half = TriangleMesh(np.array([[5.05, 0, -5], [5.05, 5, -5], [5.05, 5, 5], [5.05, 0, 5]]),
                             [[0, 1, 2], [0, 2, 3]])
    star_half = TriangleMesh(np.array([[5.05, -5, -5], [5.05, 0, -5], [5.05, 0, 5], [5.05, -5, 5]]),
                             [[0, 1, 2], [0, 2, 3]])
    s = Scene([Node("/W"), Node("/W/a", mesh=port_half, material=weak_m, label="weak"),
               Node("/W/b", mesh=star_half, material=strong_m, label="strong")], device="cpu")
    out = render(quiet(n_beams=1, range_bins=1, min_range=5.0, max_range=5.1), s)
    assert out["hit_count"][0, 0, 0] == 4 * 16
    assert out["label_id"][0, 0, 0] == s.labels.index("strong")
    # Energy: half the fan at mu 0.1, half at 0.9 -> as if mu = 0.5 everywhere.
    assert out["clean_intensity"][0, 0, 0] == pytest.approx(0.5 * math.radians(2.0) ** 2, rel=1e-3)


def test_mean_aggregation_divides_by_the_hit_count():
    s = scene_of(wall=wall(5.05))
    total = render(quiet(), s)
    mean = render(quiet(aggregation="mean"), s)
    n = total["hit_count"][0][40]
    assert n.tolist() == [64] * 8   # 4 bearing rays x 16 elevation rays per beam
    np.testing.assert_allclose(mean["clean_intensity"][0][40], total["clean_intensity"][0][40] / 64, rtol=1e-6)


def test_cosine_law():
    cfg = quiet(horizontal_fov=10.0, vertical_fov=10.0)
    flat = render(cfg, scene_of(wall=wall(5.0)))["clean_intensity"].sum()
    tilted = render(cfg, scene_of(wall=wall(5.0, tilt_deg=60.0)))["clean_intensity"].sum()
    assert tilted / flat == pytest.approx(math.cos(math.radians(60.0)), rel=0.02)


def test_absorption_ratio():
    alpha = 0.5
    cfg = quiet(absorption=alpha)
    near = render(cfg, scene_of(wall=wall(2.0)))["clean_intensity"].sum()
    far = render(cfg, scene_of(wall=wall(6.0)))["clean_intensity"].sum()
    assert far / near == pytest.approx(10 ** (-2 * alpha * (6.0 - 2.0) / 10), rel=0.01)   # 10^-0.4 = 0.398


def test_spreading_scales_by_inverse_square_range():
    cfg = quiet(spreading=True)
    near = render(cfg, scene_of(wall=wall(2.0)))["clean_intensity"].sum()
    far = render(cfg, scene_of(wall=wall(4.0)))["clean_intensity"].sum()
    assert far / near == pytest.approx(0.25, rel=0.005)


def test_box_behind_box_is_in_acoustic_shadow():
    cfg = quiet(horizontal_fov=60.0, vertical_fov=20.0, min_range=1.0, max_range=10.0, range_bins=90,
                n_beams=30, rays_per_beam=2, elevation_rays=32)
    back = box((6.0, 0.0, 0.0), 0.5)       # front face at x = 5.75 m
    alone = render(cfg, scene_of(back=back))
    # The back box alone shows up around 5.75 m: rows floor((5.75 - 1) / 0.1) = 47 and beyond.
    assert alone["hit_count"][0][47:53].sum() > 0
    both = scene_of(back=back, front=box((3.0, 0.0, 0.0), 1.0))
    shadowed = render(cfg, both)
    counts = shadowed["hit_count"][0]
    assert counts[15:25].sum() > 0           # the front box's face at 2.5 m: row 15
    assert counts[35:].sum() == 0            # nothing beyond 4.5 m: the back box is hidden
    labels = shadowed["label_id"][0]
    assert set(np.unique(labels)) == {-1, both.labels.index("front")}


def test_starboard_object_appears_right_of_centre():
    cfg = quiet(horizontal_fov=90.0, vertical_fov=20.0, n_beams=90, rays_per_beam=1, elevation_rays=32,
                range_bins=50)
    out = render(cfg, scene_of(target=box((4.0, -1.5, 0.0), 0.4)))
    cols = np.nonzero(out["hit_count"][0].sum(axis=0))[0]
    # Bearing atan2(1.5, 4) = +20.56 deg to starboard -> column (20.56 + 45) / 1 = 65.
    assert cols.min() > 45
    assert 65 in cols.tolist()
    weights = out["clean_intensity"][0].sum(axis=0)
    mean_bearing = math.degrees(float((weights * out["bearings"]).sum() / weights.sum()))
    assert mean_bearing == pytest.approx(math.degrees(math.atan2(1.5, 4.0)), abs=1.5)
    # Sonar turned to look along -y (yaw -90 deg): its port side is +x, so a target at x = +1.5 is left.
    port = render(cfg, scene_of(target=box((1.5, -4.0, 0.0), 0.4)), pose_from_euler(0, 0, 0, 0, 0, -90.0))
    assert np.nonzero(port["hit_count"][0].sum(axis=0))[0].max() < 45


def test_ray_density_does_not_change_the_clean_image():
    # A floor 1 m below, seen at 30 deg down: returns spread over many range bins.
    floor = TriangleMesh(np.array([[-1, -20, -1], [30, -20, -1], [30, 20, -1], [-1, 20, -1]], dtype=float),
                         [[0, 1, 2], [0, 2, 3]])
    s = scene_of(floor=floor)
    pose = pose_from_euler(0, 0, 0, 0, 30.0, 0)
    kw = dict(horizontal_fov=60.0, vertical_fov=20.0, min_range=1.0, max_range=4.0, n_beams=16, range_bins=12)
    coarse = render(quiet(rays_per_beam=4, elevation_rays=64, **kw), s, pose)["clean_intensity"]
    fine = render(quiet(rays_per_beam=8, elevation_rays=128, **kw), s, pose)["clean_intensity"]
    assert coarse.sum() > 0
    assert fine.sum() == pytest.approx(coarse.sum(), rel=0.005)
    assert np.abs(fine - coarse).sum() / coarse.sum() < 0.02


def noise_scene() -> tuple[Scene, np.ndarray]:
    floor = TriangleMesh(np.array([[-1, -30, -1], [40, -30, -1], [40, 30, -1], [-1, 30, -1]], dtype=float),
                         [[0, 1, 2], [0, 2, 3]])
    return scene_of(floor=floor), pose_from_euler(0, 0, 0, 0, 20.0, 0)


NOISE_GRID = dict(horizontal_fov=90.0, vertical_fov=20.0, min_range=1.0, max_range=6.0, n_beams=64, range_bins=100,
                  rays_per_beam=1, elevation_rays=64)


def test_additive_noise_on_empty_bins_is_rayleigh():
    sigma = 0.1
    s = scene_of(behind=wall(-5.0))          # nothing in view: every bin is empty
    out = render(quiet(additive_sigma=sigma, **NOISE_GRID), s, np.stack([IDENTITY] * 4))
    assert out["hit_count"].sum() == 0
    z = out["intensity"]
    assert z.mean() == pytest.approx(sigma * math.sqrt(math.pi / 2), rel=0.03)
    assert z.std() == pytest.approx(sigma * math.sqrt((4 - math.pi) / 2), rel=0.05)


def test_multiplicative_noise_has_the_set_sigma_and_streams_are_independent():
    s, pose = noise_scene()
    mult = render(quiet(multiplicative_sigma=0.2, **NOISE_GRID), s, pose)
    add = render(quiet(additive_sigma=0.2, **NOISE_GRID), s, pose)
    lit = mult["clean_intensity"][0] > 0
    assert lit.sum() > 2000
    w_m = mult["intensity"][0][lit] / mult["clean_intensity"][0][lit] - 1.0
    assert w_m.mean() == pytest.approx(0.0, abs=0.02)
    assert w_m.std() == pytest.approx(0.2, rel=0.05)
    w_a = (add["intensity"][0] - add["clean_intensity"][0])[lit]     # same seed, frame and bins
    rho = np.corrcoef(w_m, w_a)[0, 1]
    assert abs(rho) < 4.0 / math.sqrt(lit.sum())


def test_range_scaled_additive_noise_grows_with_range():
    s = scene_of(behind=wall(-5.0))
    cfg = quiet(additive_sigma=0.1, additive_range_scaled=True, additive_beam_gain=0.0, **NOISE_GRID)
    z = render(cfg, s, np.stack([IDENTITY] * 4))["intensity"]
    # h = (r / r_max)^2 with beam gain 0: the far fifth of the rows against the near fifth.
    r = cfg.ranges()
    near, far = z[:, :20].mean(), z[:, 80:].mean()
    expected = (r[80:] ** 2).mean() / (r[:20] ** 2).mean()
    assert far / near == pytest.approx(expected, rel=0.05)


def test_normalisation_modes():
    s, pose = noise_scene()
    row = render(quiet(normalisation="row", **NOISE_GRID), s, pose)["clean_intensity"][0]
    peaks = row.max(axis=1)
    np.testing.assert_allclose(peaks[peaks > 0], 1.0, rtol=1e-6)
    glob = render(quiet(normalisation="global", **NOISE_GRID), s, pose)["clean_intensity"][0]
    raw = render(quiet(**NOISE_GRID), s, pose)["clean_intensity"][0]
    np.testing.assert_allclose(glob, raw / raw.max(), rtol=1e-6)


def noisy_config() -> ImagingSonarConfig:
    return ImagingSonarConfig(horizontal_fov=90.0, vertical_fov=20.0, min_range=0.5, max_range=8.0, n_beams=48,
                              range_bins=64, rays_per_beam=3, elevation_rays=48, seed=7)


def four_poses() -> np.ndarray:
    return np.stack([pose_from_euler(0.3 * i, 0.1 * i, 0, 0, 15.0 + 3 * i, 5.0 * i) for i in range(4)])


def test_batch_of_four_equals_four_single_renders_bit_for_bit():
    s, _ = noise_scene()
    sonar = ImagingSonar(noisy_config(), device="cpu")
    poses = four_poses()
    batch = sonar.render(s, poses, frame_index=10).numpy()
    for b in range(4):
        one = sonar.render(s, poses[b], frame_index=10 + b).numpy()
        for key in ("intensity", "clean_intensity", "hit_count", "label_id"):
            assert np.array_equal(batch[key][b], one[key][0]), (key, b)
    assert batch["intensity"][0].tobytes() != batch["intensity"][1].tobytes()


def test_same_seed_same_image_other_seed_other_image():
    s, pose = noise_scene()
    a = render(noisy_config(), s, pose)["intensity"]
    b = render(noisy_config(), s, pose)["intensity"]
    c = render(noisy_config().replace(seed=8), s, pose)["intensity"]
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_threaded_equals_single_threaded_bit_for_bit():
    s, _ = noise_scene()
    poses = four_poses()
    try:
        set_cpu_threads(1)
        one = render(noisy_config(), s, poses)
        set_cpu_threads(2)
        two = render(noisy_config(), s, poses)
        single_pose = render(noisy_config(), s, poses[0])
    finally:
        set_cpu_threads(None)
    for key in ("intensity", "clean_intensity", "hit_count", "label_id"):
        assert np.array_equal(one[key], two[key]), key
    assert np.array_equal(single_pose["intensity"][0], one["intensity"][0])


def test_buffers_are_reused_and_out_is_written_in_place():
    s, pose = noise_scene()
    sonar = ImagingSonar(noisy_config(), device="cpu")
    first = sonar.render(s, pose)
    kept = first.numpy()["intensity"].copy()
    again = sonar.render(s, pose, out=first)
    assert again is first
    assert len(sonar._buffers) == 1
    assert np.array_equal(again.numpy()["intensity"], kept)
    with pytest.raises(ConfigError, match="batch of 2"):
        sonar.render(s, np.stack([pose, pose]), out=first)


def test_hits_outside_the_range_window_are_dropped():
    # A wall at 0.98 m, 60 x 20 deg fan: r = 0.98 / (cos e cos b) runs 0.98 .. 1.15 m. Only rays with
    # r >= min_range = 1 are binned; with max_range = 1.1 those beyond are cut too.
    cfg = quiet(horizontal_fov=60.0, vertical_fov=20.0, min_range=1.0, max_range=1.1, range_bins=10, n_beams=12,
                rays_per_beam=2, elevation_rays=16)
    out = render(cfg, scene_of(wall=wall(0.98)))
    b, e = np.meshgrid(cfg.ray_bearings(), cfg.ray_elevations())
    r = 0.98 / (np.cos(b) * np.cos(e))
    assert np.abs(r - 1.0).min() > 1e-4 and np.abs(r - 1.1).min() > 1e-4   # no ray on a boundary
    assert out["hit_count"].sum() == int(((r >= 1.0) & (r < 1.1)).sum())
    too_near = render(cfg, scene_of(wall=wall(0.5)))
    assert too_near["hit_count"].sum() == 0 and too_near["clean_intensity"].sum() == 0


def test_presets_are_valid_and_sized_as_documented():
    from oceansim_py.sensors.acoustic.presets import IMAGING_SONAR_DEVICE_PRESETS

    # The presets named after real devices are the device model; the peer model of those fans is "<name>_peer".
    assert ImagingSonarConfig.preset_names() == sorted(["blueview_p900_peer", "holoocean_default", "holoocean_paper",
                                                        "oceansim_default", "oculus_m750d_peer",
                                                        *IMAGING_SONAR_DEVICE_PRESETS])
    o = ImagingSonarConfig.preset("oceansim_default")
    assert (o.range_bins, o.n_beams) == (350, 260)
    assert o.range_resolution == pytest.approx(0.008)
    assert math.degrees(o.bearings()[1] - o.bearings()[0]) == pytest.approx(0.5, rel=1e-5)
    p = ImagingSonarConfig.preset("holoocean_paper")
    assert (p.horizontal_fov, p.min_range, p.max_range, p.range_bins, p.n_beams) == (120.0, 1.0, 50.0, 1024, 512)
    assert ImagingSonarConfig.from_dict({"preset": "blueview_p900", "n_beams": 256}).n_beams == 256


@pytest.mark.parametrize("field,value,match", [
    ("horizontal_fov", 0.0, "horizontal_fov"),
    ("horizontal_fov", 360.0, "horizontal_fov"),
    ("vertical_fov", -1.0, "vertical_fov"),
    ("max_range", 0.2, "max_range"),
    ("n_beams", 0, "n_beams"),
    ("range_bins", 0, "range_bins"),
    ("rays_per_beam", 0, "rays_per_beam"),
    ("elevation_rays", 0, "elevation_rays"),
    ("multiplicative_sigma", -0.1, "multiplicative_sigma"),
    ("additive_sigma", -0.1, "additive_sigma"),
    ("absorption", float("nan"), "absorption"),
    ("aggregation", "median", "aggregation"),
    ("normalisation", "max", "normalisation"),
])
def test_bad_configs_are_refused_naming_the_field(field, value, match):
    with pytest.raises(ConfigError, match=match):
        ImagingSonarConfig.preset("oceansim_default", **{field: value})


def test_unknown_key_and_oversized_render_and_bad_pose_are_config_errors(monkeypatch):
    with pytest.raises(ConfigError, match="n_beam"):
        ImagingSonarConfig.from_dict({"n_beam": 4})
    s = scene_of(wall=wall(2.0))
    huge = ImagingSonar(ImagingSonarConfig(rays_per_beam=4000, elevation_rays=4000, n_beams=512), device="cpu")
    with pytest.raises(ConfigError, match="2\\^31"):          # 8.2e9 rays cannot be indexed by one launch
        huge.render(s, IDENTITY)
    # oceansim_default needs 1,438,320 rays x (12 B return + 48 B ray and hit for the ray-cast backend) + 91,000
    # bins x 20 B + ... = 88.1 MB per pose; offer 10 MB.
    monkeypatch.setattr("oceansim_py.runtime.available_memory_bytes", lambda device: 10 * 2**20)
    assert ImagingSonar(device="cpu").memory_bytes(1) == 40 + (12 + 48) * 1438320 + 350 * (4 + 20 * 260)
    with pytest.raises(ConfigError, match="0.08 GiB"):
        ImagingSonar(device="cpu").render(s, IDENTITY)
    with pytest.raises(ConfigError, match="non-finite"):
        ImagingSonar(quiet(), device="cpu").render(s, [0, 0, float("nan"), 0, 0, 0, 1])


def test_result_helpers(tmp_path):
    s, pose = noise_scene()
    res = ImagingSonar(noisy_config(), device="cpu").render(s, np.stack([pose, pose]))
    u8 = res.to_uint8()
    assert u8.shape == (2, 64, 48) and u8.dtype == np.uint8
    expected = np.clip(np.rint(255 * res.numpy()["intensity"].astype(np.float64)), 0, 255)
    assert np.array_equal(u8, expected.astype(np.uint8))
    fan = res.to_cartesian(100)
    assert fan.shape[0] == 2 and fan.shape[2] == 100
    assert res.save_png(tmp_path / "p.png").stat().st_size > 0
    assert res.save_png(tmp_path / "f.png", frame=1, fan_width=100).stat().st_size > 0
    with pytest.raises(ConfigError, match="frame 2"):
        res.save_png(tmp_path / "x.png", frame=2)


def test_torch_is_zero_copy():
    torch = pytest.importorskip("torch")
    s, pose = noise_scene()
    res = ImagingSonar(noisy_config(), device="cpu").render(s, pose)
    t = res.torch()["intensity"]
    assert isinstance(t, torch.Tensor) and tuple(t.shape) == (1, 64, 48)
    res.intensity.fill_(3.0)
    assert float(t[0, 0, 0]) == 3.0


def test_cli_render_sonar_writes_polar_fan_and_npy(tmp_path):
    mesh = trimesh.creation.box(extents=[1.0, 1.0, 1.0])
    mesh.apply_translation([3.0, 0.0, 0.0])
    path = tmp_path / "box.obj"
    mesh.export(path)
    cfg = tmp_path / "sonar.yaml"
    cfg.write_text("preset: blueview_p900\nn_beams: 32\nrange_bins: 40\nrays_per_beam: 1\nelevation_rays: 16\n")
    out = tmp_path / "out"
    rc = cli_main(["render", "sonar", "--scene", str(path), "--config", str(cfg), "--pose", "0,0,0,0,0,0",
                   "--out", str(out), "--device", "cpu", "--fan-width", "64"])
    assert rc == 0
    img = np.load(out / "sonar.npy")
    assert img.shape == (40, 32)
    # The box face at 2.5 m: row floor((2.5 - 0.2) / 0.245) = 9, centre columns.
    assert img[9, 12:20].min() > 0
    assert (out / "sonar_polar.png").stat().st_size > 0 and (out / "sonar_fan.png").stat().st_size > 0
    # A mesh file suggests no pose: the CLI frames its subject (issue 13 item 6) instead of refusing.
    assert cli_main(["render", "sonar", "--scene", str(path), "--out", str(out), "--device", "cpu"]) == 0
    assert np.load(out / "sonar.npy").max() > 0
