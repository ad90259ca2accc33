"""Profiling (swath bathymetry) sonar (docs/PHYSICS.md §3): every check against a number computed by hand.

Scenes are built in memory; the sonar is level at height H over the floor, x along track, beams across track
(beam angle from nadir, positive to starboard = -y).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh
from PIL import Image

from oceansim_py import ConfigError, OceanSimError, ProfilingSonar, ProfilingSonarConfig, set_cpu_threads
from oceansim_py.cli import main as cli_main
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh

H = 10.0


def quiet(**kw) -> ProfilingSonarConfig:
    base = dict(swath_width=120.0, along_track_beamwidth=1.0, n_beams=60, across_rays_per_beam=4,
                along_track_rays=3, min_range=0.5, max_range=40.5, range_bins=400)
    base.update(kw)
    return ProfilingSonarConfig(**base)


def plane(slope_x: float = 0.0, slope_y: float = 0.0, half: float = 200.0) -> TriangleMesh:
    """The plane z = slope_x x + slope_y y over |x|, |y| <= half."""
    xy = np.array([[-half, -half], [half, -half], [half, half], [-half, half]], dtype=float)
    v = np.column_stack([xy, xy @ [slope_x, slope_y]])
    return TriangleMesh(v, [[0, 1, 2], [0, 2, 3]])


def scene_of(*parts: tuple[str, TriangleMesh, float]) -> Scene:
    nodes = [Node("/W")]
    for name, mesh, mu in parts:
        nodes.append(Node(f"/W/{name}", mesh=mesh, label=name,
                          material=Material.from_properties(name, (0.5, 0.5, 0.5), reflectivity=mu)))
    return Scene(nodes, device="cpu")


def render(cfg: ProfilingSonarConfig, scene: Scene, poses, frame_index: int = 0) -> dict:
    return ProfilingSonar(cfg, device="cpu").render(scene, poses, frame_index).numpy()


def run_of(n: int, z: float = H, spacing: float = 1.0) -> np.ndarray:
    return np.stack([pose_from_euler(spacing * (k - (n - 1) / 2), 0.0, z, 0.0, 0.0, 0.0) for k in range(n)])


def test_noise_free_soundings_lie_on_a_flat_floor_at_the_expected_ranges():
    out = render(quiet(), scene_of(("floor", plane(), 0.5)), run_of(1))
    assert out["valid"].all()
    theta = out["beam_angles"]
    # Beam j centred at -60 + (j + 1/2) * 2 deg; over a flat floor its range is H / cos(theta_j).
    assert math.degrees(theta[0]) == pytest.approx(-59.0) and math.degrees(theta[-1]) == pytest.approx(59.0)
    np.testing.assert_allclose(out["bottom_range"][0], H / np.cos(theta), rtol=2e-4)
    pw = out["point_world"][0]
    assert np.abs(pw[:, 2]).max() < 5e-3
    # Starboard beams (theta > 0) land at y = -H tan(theta); the sensor frame is the world shifted by H here.
    np.testing.assert_allclose(pw[:, 1], -H * np.tan(theta), atol=0.02)
    np.testing.assert_allclose(out["point_sensor"][0] + [0, 0, H], pw, atol=1e-4)
    # Beam intensity: mu * sum cos(psi) dOmega = mu * cos(theta) * (2 deg) * (1 deg) (small beam, flat floor).
    np.testing.assert_allclose(out["intensity"][0], 0.5 * np.cos(theta) * math.radians(2.0) * math.radians(1.0),
                               rtol=2e-3)


def test_range_noise_soundings_stay_within_the_noise_of_the_plane():
    sigma = 0.05
    out = render(quiet(range_noise=sigma, seed=3), scene_of(("floor", plane(), 0.5)), run_of(8))
    z = out["point_world"][..., 2][out["valid"].astype(bool)]
    assert z.size == 8 * 60
    # Vertical residual = range error * cos(theta): RMS below sigma, none past 4.5 sigma.
    assert np.sqrt(np.mean(z ** 2)) < sigma
    assert np.abs(z).max() < 4.5 * sigma
    assert np.sqrt(np.mean(z ** 2)) > 0.3 * sigma          # the noise is really there
    resid = out["bottom_range"] - H / np.cos(out["beam_angles"])
    assert np.std(resid) == pytest.approx(sigma, rel=0.15)


def test_fitted_slope_of_a_known_slope_matches():
    # Floor z = 0.1 x + 0.2 y (slopes 5.7 and 11.3 deg); the sonar at 10 m over (x, 0, 0) runs along x.
    s = scene_of(("seabed", plane(0.1, 0.2), 0.5))
    res = ProfilingSonar(quiet(range_noise=0.02, angle_noise=0.05, seed=1), device="cpu").render(s, run_of(9))
    pts, inten = res.point_cloud("world")
    assert pts.shape == (9 * 60, 3) and inten.shape == (9 * 60,)
    a = np.column_stack([pts[:, 0], pts[:, 1], np.ones(len(pts))])
    coef, *_ = np.linalg.lstsq(a, pts[:, 2], rcond=None)
    assert coef[0] == pytest.approx(0.1, abs=0.005)
    assert coef[1] == pytest.approx(0.2, abs=0.005)
    assert coef[2] == pytest.approx(0.0, abs=0.02)


def test_an_object_shows_in_its_beams_and_outside_the_range_window_is_invalid():
    # A 2 m cube on the floor straight below: beams within atan(1 / 8) = 7.1 deg of nadir see its top at 8 m.
    box = trimesh.creation.box(extents=[2.0, 2.0, 2.0])
    box.apply_translation([0.0, 0.0, 1.0])
    s = scene_of(("floor", plane(), 0.5), ("cube", TriangleMesh(box.vertices, box.faces), 0.9))
    out = render(quiet(max_range=15.5, range_bins=150), s, run_of(1))
    theta = np.degrees(out["beam_angles"])
    top = np.abs(theta) < 6.0
    np.testing.assert_allclose(out["bottom_range"][0][top], 8.0 / np.cos(np.radians(theta[top])), rtol=1e-3)
    assert set(out["label_id"][0][top].tolist()) == {s.labels.index("cube")}
    # Beams past acos(10 / 15.5) = 49.8 deg reach the floor beyond max_range: no detection.
    far = np.abs(theta) > 51.0
    assert not out["valid"][0][far].any() and np.isnan(out["bottom_range"][0][far]).all()
    assert out["valid"][0][np.abs(theta) < 48.0].all()
    # The range x beam image: the nadir beams' top echo in row floor((8 - 0.5) / 0.1) = 75.
    j = int(np.argmin(np.abs(theta)))
    assert np.nonzero(out["clean_image"][0][:, j])[0][0] == 75


def test_batch_and_thread_chunking_render_bit_for_bit():
    cfg = quiet(range_noise=0.05, angle_noise=0.1, multiplicative_sigma=0.2, additive_sigma=1e-6, seed=9)
    s = scene_of(("seabed", plane(0.05, -0.1), 0.5))
    poses = run_of(5)
    batch = render(cfg, s, poses, frame_index=4)
    keys = ("bottom_range", "intensity", "valid", "point_world", "image")
    for b in range(5):
        one = render(cfg, s, poses[b], frame_index=4 + b)
        for k in keys:
            np.testing.assert_array_equal(one[k][0], batch[k][b], err_msg=k)
    set_cpu_threads(1)
    try:
        single = render(cfg, s, poses, frame_index=4)
    finally:
        set_cpu_threads(None)
    for k in keys:
        np.testing.assert_array_equal(single[k], batch[k], err_msg=k)
    assert not np.array_equal(render(cfg, s, poses, frame_index=5)["bottom_range"][0], batch["bottom_range"][0])


def test_ply_export_round_trips_the_point_cloud(tmp_path):
    res = ProfilingSonar(quiet(), device="cpu").render(scene_of(("floor", plane(), 0.5)), run_of(3))
    path = res.save_ply(tmp_path / "swath.ply")
    cloud = trimesh.load(path)
    pts, _ = res.point_cloud()
    np.testing.assert_allclose(np.asarray(cloud.vertices), pts, atol=1e-5)
    assert np.asarray(Image.open(res.save_png(tmp_path / "img.png"))).shape == (400, 60)
    with pytest.raises(ConfigError, match="frame"):
        res.point_cloud("body")
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(OceanSimError, match="PyTorch"):
            res.torch()
    else:
        assert tuple(res.torch()["point_world"].shape) == (3, 60, 3)


def test_presets_are_valid_and_follow_the_em2040_table():
    hol = ProfilingSonarConfig.preset("holoocean_default")
    assert (hol.swath_width, hol.along_track_beamwidth, hol.min_range, hol.max_range) == (120.0, 1.0, 0.5, 75.0)
    em = ProfilingSonarConfig.preset("em2040_600khz_peer")
    # 95 m depth with 130 m coverage: the outer beam reaches (65, -95) m.
    assert math.tan(math.radians(em.swath_width / 2)) * 95.0 == pytest.approx(65.0, abs=0.1)
    assert em.max_range == pytest.approx(math.hypot(65.0, 95.0), abs=0.2)
    em7 = ProfilingSonarConfig.preset("em2040_700khz_peer")
    assert math.tan(math.radians(em7.swath_width / 2)) * 55.0 == pytest.approx(13.5, abs=0.1)
    assert em.range_resolution == pytest.approx(0.05) and em7.range_resolution == pytest.approx(0.05, abs=1e-4)


@pytest.mark.parametrize("field,kw", [
    ("swath_width", dict(swath_width=180.0)),
    ("n_beams", dict(n_beams=0)),
    ("range_noise", dict(range_noise=-1.0)),
    ("angle_noise", dict(angle_noise=float("inf"))),
    ("min_range", dict(min_range=-0.5)),
    ("seed", dict(seed=-1)),
    ("spreading", dict(spreading=1)),
])
def test_bad_configs_raise_config_error_naming_the_field(field, kw):
    with pytest.raises(ConfigError, match=field):
        quiet(**kw)


def test_cli_render_profiling_writes_ply_image_and_points(tmp_path):
    floor = trimesh.Trimesh([[-80, -80, -10], [80, -80, -10], [80, 80, -10], [-80, 80, -10]], [[0, 1, 2], [0, 2, 3]])
    path = tmp_path / "floor.obj"
    floor.export(path)
    out = tmp_path / "out"
    rc = cli_main(["render", "profiling", "--scene", str(path), "--pose", "0,0,0,0,0,0", "--pings", "4",
                   "--step", "0.5,0,0", "--out", str(out), "--device", "cpu"])
    assert rc == 0
    pts = np.load(out / "profiling_points.npy")
    assert pts.shape == (4, 120, 3)
    np.testing.assert_allclose(pts[..., 2], -10.0, atol=0.02)
    np.testing.assert_allclose(pts[:, 60, 0], [0.0, 0.5, 1.0, 1.5], atol=1e-3)
    assert len(trimesh.load(out / "profiling.ply").vertices) == 4 * 120


def test_soundings_only_render_matches_the_full_render():
    cfg = quiet(range_noise=0.03, angle_noise=0.05, multiplicative_sigma=0.2, seed=4)
    s = scene_of(("seabed", plane(0.05, -0.1), 0.5))
    full = ProfilingSonar(cfg, device="cpu").render(s, run_of(3))
    lean = ProfilingSonar(cfg.replace(image=False), device="cpu").render(s, run_of(3))
    a, b = full.numpy(), lean.numpy()
    assert "image" not in b and lean.image is None
    for k in ("bottom_range", "intensity", "valid", "point_world", "point_sensor", "label_id"):
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    with pytest.raises(ConfigError, match="image"):
        lean.save_png("/nonexistent/never_written.png")
