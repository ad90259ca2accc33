"""Underwater camera: pixel values, depth, labels and lights against numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import trimesh
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig, VehicleLight
from oceansim_py.sensors.water import WaterType

ALBEDO = (0.6, 0.45, 0.3)
WATER = {"water": "jerlov_II", "water_attenuation": (0.30, 0.08, 0.06), "water_backscatter": (0.25, 0.07, 0.05),
         "water_veiling_light": (0.05, 0.30, 0.40), "water_diffuse_attenuation": (0.20, 0.06, 0.04)}


def quad(x: float, y0: float, y1: float, z0: float, z1: float) -> TriangleMesh:
    """A rectangle in the plane x = const."""
    v = np.array([[x, y0, z0], [x, y1, z0], [x, y1, z1], [x, y0, z1]], dtype=float)
    return TriangleMesh(v, np.array([[0, 1, 2], [0, 2, 3]]))


def wall_scene(x: float = 5.0, half: float = 50.0, z_centre: float = -10.0, extra: list[Node] | None = None) -> Scene:
    mat = Material.from_properties("paint", ALBEDO, reflectivity=0.5)
    nodes = [Node("/W"), Node("/W/wall", mesh=quad(x, -half, half, z_centre - half, min(z_centre + half, -0.5)),
                                 material=mat, label="wall")]
    return Scene(nodes + (extra or []), device="cpu")


def srgb(x: float) -> float:
    x = min(max(x, 0.0), 1.0)
    return 12.92 * x if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055


def code(x: float) -> int:
    return int(math.floor(255.0 * srgb(x) + 0.5))


def centre(arr: np.ndarray, cfg: UnderwaterCameraConfig) -> np.ndarray:
    return arr[0, cfg.height // 2, cfg.width // 2]


def test_wall_pixel_equals_formula() -> None:
    # odd image: the centre pixel's ray is the optical axis; camera 10 m deep, wall 5 m ahead
    cfg = UnderwaterCameraConfig(width=5, height=3, horizontal_fov=60.0, ambient=(0.1, 0.12, 0.14),
                                 sun_irradiance=(1.0, 0.9, 0.8), sun_zenith=60.0, sun_azimuth=180.0,
                                 exposure=1.3, **WATER)
    r = UnderwaterCamera(cfg).render(wall_scene(), pose_from_euler(0, 0, -10)).numpy()
    amb = np.array(cfg.ambient)
    sun = np.array(cfg.sun_irradiance)
    kd = np.array(WATER["water_diffuse_attenuation"])
    bd = np.array(WATER["water_attenuation"])
    bb = np.array(WATER["water_backscatter"])
    binf = np.array(WATER["water_veiling_light"])
    cos_sun = math.sin(math.radians(60.0))            # normal (-1, 0, 0), sun towards (-sin60, 0, cos60)
    e_hit = amb + sun * np.exp(-kd * 10.0) * cos_sun  # hit point at 10 m depth
    j = np.array(ALBEDO) * e_hit
    e_cam = amb + sun * np.exp(-kd * 10.0)            # veiling light scaled by the light at the camera
    i = j * np.exp(-bd * 5.0) + binf * e_cam * (1 - np.exp(-bb * 5.0))
    np.testing.assert_allclose(centre(r["in_air"], cfg), j, rtol=1e-5)
    np.testing.assert_allclose(centre(r["linear"], cfg), i, rtol=1e-5)
    assert centre(r["rgb"], cfg).tolist() == [code(1.3 * v) for v in i]
    np.testing.assert_allclose(centre(r["normal"], cfg), [-1.0, 0.0, 0.0], atol=1e-6)


def test_misses_see_the_veiling_light() -> None:
    cfg = UnderwaterCameraConfig(width=7, height=5, horizontal_fov=90.0, veiling_scales_with_light=False, **WATER)
    scene = wall_scene(x=5.0, half=1.0)              # a 2 m wall: the image border misses
    r = UnderwaterCamera(cfg).render(scene, pose_from_euler(0, 0, -10)).numpy()
    miss = r["label"][0] < 0
    assert miss.sum() > 0 and (~miss).sum() > 0
    np.testing.assert_array_equal(r["linear"][0][miss], np.tile(WATER["water_veiling_light"], (miss.sum(), 1))
                                  .astype(np.float32))
    assert (r["rgb"][0][miss] == [code(v) for v in WATER["water_veiling_light"]]).all()
    assert np.isinf(r["range"][0][miss]).all() and np.isinf(r["depth"][0][miss]).all()
    assert (r["in_air"][0][miss] == 0).all() and (r["instance"][0][miss] == -1).all()
    # and with the light-scaled veiling light: B_inf * (ambient + sun * exp(-K_d * camera depth))
    cfg2 = cfg.replace(veiling_scales_with_light=True)
    r2 = UnderwaterCamera(cfg2).render(scene, pose_from_euler(0, 0, -10)).numpy()
    expected = np.array(WATER["water_veiling_light"]) * (np.array(cfg.ambient) + np.array(cfg.sun_irradiance)
                                                         * np.exp(-np.array(WATER["water_diffuse_attenuation"]) * 10))
    np.testing.assert_allclose(r2["linear"][0, 0, 0], expected, rtol=1e-5)


def test_depth_maps_equal_the_plane_distance() -> None:
    cfg = UnderwaterCameraConfig(width=12, height=8, horizontal_fov=70.0, fx=None, cy=3.0, **WATER)
    r = UnderwaterCamera(cfg).render(wall_scene(x=7.5), pose_from_euler(0, 0, -10)).numpy()
    fx, fy, cx, cy = cfg.intrinsics()
    assert fx == pytest.approx(6.0 / math.tan(math.radians(35.0)))
    u = np.arange(12.0)  # OpenCV pixel centres: (u, v) = (col, row)
    v = np.arange(8.0)
    xu, yv = np.meshgrid((u - cx) / fx, (v - cy) / fy)
    np.testing.assert_allclose(r["range"][0], 7.5 * np.sqrt(1 + xu ** 2 + yv ** 2), rtol=1e-5)
    np.testing.assert_allclose(r["depth"][0], 7.5, rtol=1e-5)


def test_depth_of_a_floor_seen_pitched_down() -> None:
    # camera 4 m above a floor, nose down 90 deg: planar depth is 4 m everywhere, range 4 / cos(off-axis angle)
    floor = TriangleMesh(np.array([[-50, -50, -14], [50, -50, -14], [50, 50, -14], [-50, 50, -14]], float),
                         np.array([[0, 1, 2], [0, 2, 3]]))
    scene = Scene([Node("/F", mesh=floor, material=Material.from_properties("sand", ALBEDO, reflectivity=0.3),
                        label="floor")], device="cpu")
    cfg = UnderwaterCameraConfig(width=6, height=4, horizontal_fov=80.0, **WATER)
    r = UnderwaterCamera(cfg).render(scene, pose_from_euler(0, 0, -10, pitch_deg=90.0)).numpy()
    np.testing.assert_allclose(r["depth"][0], 4.0, rtol=1e-5)
    np.testing.assert_allclose(r["normal"][0, ..., 2], 1.0, atol=1e-6)


def test_labels_follow_the_image_orientation() -> None:
    # port half (y > 0) and starboard half (y < 0) of the wall; above (z > -10) a third object
    mat = Material.from_properties("paint", ALBEDO, reflectivity=0.5)
    nodes = [Node("/W"),
             Node("/W/port", mesh=quad(5.0, 0.0, 20.0, -30.0, -10.0), material=mat, label="port"),
             Node("/W/starboard", mesh=quad(5.0, -20.0, 0.0, -30.0, -10.0), material=mat, label="starboard"),
             Node("/W/top", mesh=quad(5.0, -20.0, 20.0, -10.0, -1.0), material=mat, label="top")]
    scene = Scene(nodes, device="cpu")
    cfg = UnderwaterCameraConfig(width=8, height=6, horizontal_fov=60.0, **WATER)
    res = UnderwaterCamera(cfg).render(scene, pose_from_euler(0, 0, -10))
    lab = res.label.numpy()[0]
    names = res.label_names
    assert [names[i] for i in (lab[5, 0], lab[5, 7], lab[0, 0], lab[0, 7])] == ["port", "starboard", "top", "top"]
    inst = res.instance.numpy()[0]
    assert scene.node(int(inst[5, 0])).path == "/W/port"


def test_light_follows_inverse_square_and_attenuation() -> None:
    light = VehicleLight(position=(0.0, 0.0, 0.0), direction=(1.0, 0.0, 0.0), half_angle=80.0, edge=0.0,
                         intensity=(2.0, 3.0, 4.0))
    cfg = UnderwaterCameraConfig(width=3, height=3, horizontal_fov=40.0, ambient=(0.0, 0.0, 0.0), sun=False,
                                 lights=(light,), **WATER)
    cam = UnderwaterCamera(cfg)
    bd = np.array(WATER["water_attenuation"])
    js = []
    for d in (2.0, 4.0):
        r = cam.render(wall_scene(x=d), pose_from_euler(0, 0, -10)).numpy()
        j = centre(r["in_air"], cfg)
        np.testing.assert_allclose(j, np.array(ALBEDO) * np.array(light.intensity) / d ** 2 * np.exp(-bd * d),
                                   rtol=1e-5)
        js.append(j)
    np.testing.assert_allclose(js[1] / js[0], 0.25 * np.exp(-bd * 2.0), rtol=1e-5)


def test_light_cone_and_sun_shadow() -> None:
    # a 10 deg spot lights only the centre pixel of a 60 deg image
    spot = VehicleLight(direction=(1.0, 0.0, 0.0), half_angle=10.0, edge=0.0, intensity=(1.0, 1.0, 1.0))
    cfg = UnderwaterCameraConfig(width=3, height=3, horizontal_fov=60.0, ambient=(0.0, 0.0, 0.0), sun=False,
                                 lights=(spot,), **WATER)
    j = UnderwaterCamera(cfg).render(wall_scene(x=3.0), pose_from_euler(0, 0, -10)).numpy()["in_air"][0]
    assert (j[1, 1] > 0).all()
    j[1, 1] = 0
    assert (j == 0).all()
    # a roof between the wall and the sun leaves only the ambient term
    roof = Node("/W/roof", mesh=TriangleMesh(np.array([[-20, -20, -5], [20, -20, -5], [20, 20, -5], [-20, 20, -5]],
                                                      float), np.array([[0, 1, 2], [0, 2, 3]])), label="roof")
    cfg = UnderwaterCameraConfig(width=3, height=3, horizontal_fov=30.0, ambient=(0.1, 0.1, 0.1), sun_zenith=45.0,
                                 sun_azimuth=180.0, **WATER)
    shaded = UnderwaterCamera(cfg).render(wall_scene(x=3.0, extra=[roof]), pose_from_euler(0, 0, -10)).numpy()
    np.testing.assert_allclose(shaded["in_air"][0, 1, 1], np.array(ALBEDO) * 0.1, rtol=1e-6)
    lit = UnderwaterCamera(cfg.replace(shadows=False)).render(wall_scene(x=3.0, extra=[roof]),
                                                              pose_from_euler(0, 0, -10)).numpy()
    assert (lit["in_air"][0, 1, 1] > shaded["in_air"][0, 1, 1]).all()


def test_batch_equals_single_renders_bit_for_bit() -> None:
    light = VehicleLight(position=(0.0, 0.2, 0.0), direction=(1.0, 0.0, -0.1), half_angle=35.0, edge=10.0)
    cfg = UnderwaterCameraConfig(width=40, height=30, horizontal_fov=75.0, lights=(light,), **WATER)
    scene = wall_scene(x=6.0, half=3.0)
    cam = UnderwaterCamera(cfg)
    poses = np.stack([pose_from_euler(0.1 * b, -0.2 * b, -10 + 0.3 * b, 5 * b, -4 * b, 7 * b)
                      for b in range(3)])
    batch = cam.render(scene, poses, threads=2).numpy()
    for b in range(3):
        single = cam.render(scene, poses[b], threads=1).numpy()
        for name, arr in single.items():
            np.testing.assert_array_equal(batch[name][b], arr[0], err_msg=name)
    # reusing the result arrays gives the same images
    res = cam.render(scene, poses)
    again = cam.render(scene, poses, out=res).numpy()
    np.testing.assert_array_equal(again["rgb"], batch["rgb"])


def test_water_presets_are_coefficients_from_the_table() -> None:
    w = WaterType.preset("jerlov_I")
    # blue = mean of c = a + b at 450 and 475 nm (Solonenko & Mobley 2015)
    assert w.attenuation[2] == pytest.approx(((0.018 + 0.00381) + (0.019 + 0.00306)) / 2, abs=1e-6)
    assert w.diffuse_attenuation[1] == pytest.approx((0.049 + 0.065 + 0.085) / 3, abs=1e-6)
    clear, turbid = WaterType.preset("jerlov_IA"), WaterType.preset("jerlov_9C")
    assert all(t > c for t, c in zip(turbid.attenuation, clear.attenuation))
    assert all(0 <= v < 0.25 for v in turbid.veiling_light)
    cfg = UnderwaterCameraConfig(water="jerlov_3C", water_backscatter=(1.0, 1.0, 1.0))
    assert cfg.water_type.backscatter == (1.0, 1.0, 1.0)
    assert cfg.water_type.attenuation == WaterType.preset("jerlov_3C").attenuation


@pytest.mark.parametrize("changes, field", [
    ({"width": 0}, "width"),
    ({"height": 0}, "height"),
    ({"horizontal_fov": 180.0}, "horizontal_fov"),
    ({"horizontal_fov": 0.0}, "horizontal_fov"),
    ({"fx": -1.0}, "fx"),
    ({"max_range": 0.0}, "max_range"),
    ({"water": "jerlov_99"}, "water"),
    ({"water_attenuation": (0.1, -0.1, 0.1)}, "water_attenuation[G]"),
    ({"ambient": (-1.0, 0.0, 0.0)}, "ambient[R]"),
    ({"sun_zenith": 95.0}, "sun_zenith"),
    ({"exposure": 0.0}, "exposure"),
    ({"lights": [{"half_angle": 0.0}]}, "half_angle"),
    ({"lights": [{"direction": [0, 0, 0]}]}, "direction"),
    ({"lights": [{"intensity": [1, -1, 1]}]}, "intensity[G]"),
])
def test_bad_configs_name_the_field(changes: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field.replace("[", r"\[")):
        UnderwaterCameraConfig.from_dict(changes)
    with pytest.raises(ConfigError, match="unknown key"):
        UnderwaterCameraConfig.from_dict({"fov": 90})


def test_config_round_trip_and_memory_refusal() -> None:
    cfg = UnderwaterCameraConfig.preset("coastal_with_lights")
    assert UnderwaterCameraConfig.from_dict(cfg.to_dict()) == cfg
    assert len(cfg.lights) == 2 and cfg.lights[0].half_angle == 40.0
    huge = UnderwaterCamera(UnderwaterCameraConfig(width=200_000, height=200_000), device="cpu")
    with pytest.raises(ConfigError, match="GiB"):
        huge.allocate(1)


def test_torch_views_match_numpy() -> None:
    torch = pytest.importorskip("torch")
    cfg = UnderwaterCameraConfig(width=4, height=3, **WATER)
    res = UnderwaterCamera(cfg).render(wall_scene(), pose_from_euler(0, 0, -10))
    t = res.torch()
    assert isinstance(t["rgb"], torch.Tensor)
    np.testing.assert_array_equal(t["depth"].cpu().numpy(), res.depth.numpy())


def test_torch_missing_is_a_clear_error() -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("PyTorch is installed")
    from oceansim_py.errors import OceanSimError

    res = UnderwaterCamera(UnderwaterCameraConfig(width=2, height=2, **WATER)).render(wall_scene(),
                                                                                        pose_from_euler(0, 0, -10))
    with pytest.raises(OceanSimError, match="needs PyTorch"):
        res.torch()


def test_cli_writes_images_and_arrays(tmp_path) -> None:
    import json

    import imageio.v3 as iio

    from oceansim_py.cli import main

    wall = quad(5.0, -50.0, 50.0, -60.0, -1.0)
    obj = tmp_path / "wall.obj"
    obj.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in wall.vertices)
                   + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in wall.triangles))
    out = tmp_path / "render"
    assert main(["render", "camera", "--scene", str(obj), "--water", "jerlov_IA", "--pose", "0,0,-10,0,0,0",
                 "--set", "width=9", "--set", "height=5", "--out", str(out)]) == 0
    assert iio.imread(out / "camera_rgb.png").shape == (5, 9, 3)
    assert iio.imread(out / "camera_depth.png").shape == (5, 9)
    assert iio.imread(out / "camera_label.png").shape == (5, 9, 3)
    np.testing.assert_allclose(np.load(out / "camera_depth.npy"), 5.0, rtol=1e-5)
    labels = np.load(out / "camera_label.npy")
    assert json.loads((out / "camera_labels.json").read_text())[labels[2, 4]] == "wall.obj"
    assert main(["render", "camera", "--scene", str(obj), "--water", "jerlov_X", "--pose", "0,0,-10,0,0,0",
                 "--out", str(out)]) == 2


def test_cli_label_names_write_failing_keeps_the_old_file(tmp_path, monkeypatch, capsys) -> None:
    """camera_labels.json goes through the atomic writer: a disk that fills while it is replaced leaves the
    previous render's label names whole and no temporary, and the command reports the file."""
    import errno
    import json

    from oceansim_py.cli import main
    from oceansim_py.io import atomic

    wall = quad(5.0, -50.0, 50.0, -60.0, -1.0)
    obj = tmp_path / "wall.obj"
    obj.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in wall.vertices)
                   + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in wall.triangles))
    out = tmp_path / "render"
    args = ["render", "camera", "--scene", str(obj), "--water", "jerlov_IA", "--pose", "0,0,-10,0,0,0",
            "--set", "width=9", "--set", "height=5", "--out", str(out)]
    assert main(args) == 0
    before = (out / "camera_labels.json").read_bytes()
    real_replace = atomic.os.replace

    def full_for_labels(src, dst, *a, **kw):
        if str(dst).endswith("camera_labels.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_replace(src, dst, *a, **kw)

    monkeypatch.setattr(atomic.os, "replace", full_for_labels)
    capsys.readouterr()
    assert main(args) != 0
    assert "camera_labels.json: could not write the label names (No space left on device)" in capsys.readouterr().err
    assert (out / "camera_labels.json").read_bytes() == before
    assert "wall.obj" in json.loads(before)
    assert not [p.name for p in out.iterdir() if "camera_labels" in p.name and p.name != "camera_labels.json"]


@pytest.mark.parametrize("principal", [None, (2.0, 4.5)])
def test_camera_matrix_projects_a_seen_point_onto_its_pixel(principal) -> None:
    """OpenCV convention: a small sphere placed on the ray of pixel (row 2, col 6) is seen by that pixel alone,
    and K (from ``camera_matrix()``) projects its centre onto (u, v) = (6, 2), integer pixel coordinates."""
    extra = {} if principal is None else {"cx": principal[0], "cy": principal[1]}
    cfg = UnderwaterCameraConfig(width=9, height=7, horizontal_fov=60.0, sun=False, **extra, **WATER)
    k = cfg.camera_matrix()
    fx, fy, cx, cy = k[0, 0], k[1, 1], k[0, 2], k[1, 2]
    if principal is None:
        assert (cx, cy) == (4.0, 3.0)  # (w - 1) / 2, (h - 1) / 2
    col, row, dist = 6, 2, 10.0
    # OpenCV camera frame (x right, y down, z forward) -> FLU sensor frame (forward, left, up); camera at the origin
    x_cv, y_cv = (col - cx) / fx * dist, (row - cy) / fy * dist
    target = np.array([dist, -x_cv, -y_cv - 10.0])
    ball = trimesh.creation.icosphere(subdivisions=2, radius=0.25)  # well inside one pixel's 1.3 m footprint
    mat = Material.from_properties("paint", ALBEDO, reflectivity=0.5)
    scene = Scene([Node("/B", mesh=TriangleMesh(np.asarray(ball.vertices) + target, np.asarray(ball.faces)),
                        material=mat, label="ball")], device="cpu")
    res = UnderwaterCamera(cfg).render(scene, pose_from_euler(0, 0, -10)).numpy()
    seen = np.argwhere(np.isfinite(res["range"][0]))
    assert seen.tolist() == [[row, col]]
    uvw = k @ np.array([x_cv, y_cv, dist])
    assert uvw[:2] / uvw[2] == pytest.approx([col, row], abs=1e-9)
    assert res["range"][0, row, col] == pytest.approx(dist * math.sqrt(1 + (x_cv / dist) ** 2 + (y_cv / dist) ** 2)
                                                       - 0.25, abs=0.01)
