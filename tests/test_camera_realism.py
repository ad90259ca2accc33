"""Camera realism (issue 17 item 6): textures, lens distortion, vignetting, motion blur and the photon-transfer
noise model, each against numbers computed by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from oceansim_py.errors import ConfigError, SceneError
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh, load_scene
from oceansim_py.scene.textures import Texture
from oceansim_py.sensors import registry
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig
from oceansim_py.trajectory import Trajectory

#: water that neither attenuates nor scatters, and only a unit ambient light: in_air = linear = the albedo
CLEAR = {"sun": False, "ambient": (1.0, 1.0, 1.0), "water_attenuation": (0.0, 0.0, 0.0),
         "water_backscatter": (0.0, 0.0, 0.0), "water_veiling_light": (0.0, 0.0, 0.0)}


def srgb_decode(code: float) -> float:
    c = code / 255.0
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def srgb_code(x: float) -> int:
    x = min(max(x, 0.0), 1.0)
    s = 12.92 * x if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055
    return int(math.floor(255.0 * s + 0.5))


def texel_codes() -> np.ndarray:
    """A 5 x 5 sRGB image, texel (r, c) = (40 r + 10, 50 c + 5, 200 - 30 r)."""
    r, c = np.mgrid[0:5, 0:5]
    return np.stack([40 * r + 10, 50 * c + 5, 200 - 30 * r], axis=-1).astype(np.uint8)


def write_textured_usd(folder: Path, image: str = "tex.png", vertex_st: bool = False, **inputs) -> Path:
    """A 4 m square board in the plane x = 5 facing -x, centred on (5, 0, -10), its UsdPreviewSurface
    diffuseColor read from ``image`` with face-varying st (or ``vertex_st``: vertex-interpolated and indexed): u
    along -y (image left = +y), v up. ``inputs``: more UsdUVTexture inputs (name -> (type, value))."""
    from PIL import Image
    from pxr import Sdf, Usd, UsdGeom, UsdShade
    from test_usd import textured_material

    if image == "tex.png":
        Image.fromarray(texel_codes()).save(folder / image)
    stage = Usd.Stage.CreateNew(str(folder / "board.usda"))
    UsdGeom.SetStageUpAxis(stage, "Z")
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    mesh = UsdGeom.Mesh.Define(stage, "/World/board")
    mesh.CreatePointsAttr([(5, 2, -12), (5, -2, -12), (5, -2, -8), (5, 2, -8)])
    mesh.CreateFaceVertexCountsAttr([4])
    mesh.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
    if vertex_st:
        st = UsdGeom.PrimvarsAPI(mesh).CreatePrimvar("st", Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.vertex)
        st.Set([(1, 1), (0, 1), (1, 0), (0, 0)])
        st.SetIndices([3, 2, 0, 1])
    else:
        UsdGeom.PrimvarsAPI(mesh).CreatePrimvar("st", Sdf.ValueTypeNames.TexCoord2fArray,
                                                UsdGeom.Tokens.faceVarying).Set([(0, 0), (1, 0), (1, 1), (0, 1)])
    mat = textured_material(stage, "/World/Looks/board", image, inputs)
    UsdShade.MaterialBindingAPI.Apply(mesh.GetPrim()).Bind(mat)
    stage.Save()
    return folder / "board.usda"


def board_camera(**changes) -> UnderwaterCameraConfig:
    """5 x 5 pixels over the 4 m board 5 m away: fx = 6.25 px/m * 5 m / 1 = 6.25, one pixel per 0.8 m texel."""
    return UnderwaterCameraConfig(width=5, height=5, fx=6.25, **{**CLEAR, **changes})


# --- textures ----------------------------------------------------------------------------------------------------

def test_textured_usd_board_shows_each_texel(tmp_path: Path) -> None:
    scene = load_scene(write_textured_usd(tmp_path), device="cpu")
    r = UnderwaterCamera(board_camera(), device="cpu").render(scene, pose_from_euler(0, 0, -10)).numpy()
    # pixel (row 1, col 3) looks at the centre of texel (1, 3) = codes (50, 155, 170)
    np.testing.assert_allclose(r["in_air"][0, 1, 3], [srgb_decode(50), srgb_decode(155), srgb_decode(170)],
                               rtol=1e-5, atol=1e-6)
    expected = np.vectorize(srgb_decode)(texel_codes().astype(float))
    np.testing.assert_allclose(r["in_air"][0], expected, rtol=1e-5, atol=1e-6)
    # half a texel to the left (+y 0.4 m): pixel (2, 2) sees the midpoint of texels (2, 1) and (2, 2)
    shifted = UnderwaterCamera(board_camera(), device="cpu").render(scene, pose_from_euler(0, 0.4, -10)).numpy()
    mid = 0.5 * (srgb_decode(55) + srgb_decode(105))
    assert shifted["in_air"][0, 2, 2, 1] == pytest.approx(mid, rel=1e-5)


def test_usd_texture_inputs_and_vertex_uvs(tmp_path: Path) -> None:
    # raw colour space: texel = code / 255, then * scale + bias; indexed vertex st gives the same board
    path = write_textured_usd(tmp_path, vertex_st=True, sourceColorSpace=("Token", "raw"),
                              scale=("Float4", (0.5, 1.0, 1.0, 1.0)), bias=("Float4", (0.1, 0.0, 0.0, 0.0)))
    r = UnderwaterCamera(board_camera(), device="cpu").render(load_scene(path, device="cpu"),
                                                              pose_from_euler(0, 0, -10)).numpy()
    np.testing.assert_allclose(r["in_air"][0, 1, 3], [0.5 * 50 / 255 + 0.1, 155 / 255, 170 / 255], rtol=1e-5)


def test_obj_and_glb_textures_match_the_usd_texture(tmp_path: Path) -> None:
    import trimesh

    usd = load_scene(write_textured_usd(tmp_path), device="cpu")
    (tmp_path / "q.obj").write_text("mtllib q.mtl\nv 5 2 -12\nv 5 -2 -12\nv 5 -2 -8\nv 5 2 -8\nvt 0 0\nvt 1 0\n"
                                    "vt 1 1\nvt 0 1\nusemtl board\nf 1/1 2/2 3/3\nf 1/1 3/3 4/4\n")
    (tmp_path / "q.mtl").write_text("newmtl board\nKd 1 1 1\nmap_Kd tex.png\n")
    trimesh.load(str(tmp_path / "q.obj"), force="mesh", process=False).export(str(tmp_path / "q.glb"))
    cam = UnderwaterCamera(board_camera(), device="cpu")
    want = cam.render(usd, pose_from_euler(0, 0, -10)).numpy()["in_air"]
    for scene in (load_scene(tmp_path / "q.obj", device="cpu"), load_scene(tmp_path / "q.glb", device="cpu",
                                                                             up_axis="Z")):
        np.testing.assert_allclose(cam.render(scene, pose_from_euler(0, 0, -10)).numpy()["in_air"], want,
                                   rtol=1e-5, atol=1e-6)


def test_missing_texture_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(SceneError, match="nowhere.png.*does not exist"):
        load_scene(write_textured_usd(tmp_path, image="nowhere.png"), device="cpu")
    (tmp_path / "m.obj").write_text("mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\n"
                                    "usemtl a\nf 1/1 2/2 3/3\n")
    (tmp_path / "m.mtl").write_text("newmtl a\nmap_Kd -bm 1 missing_diffuse.jpg\n")
    with pytest.raises(SceneError, match="missing_diffuse.jpg"):
        load_scene(tmp_path / "m.obj", device="cpu")


def test_a_scene_without_textures_has_an_empty_atlas() -> None:
    scene = load_scene("tank", device="cpu")
    assert scene.geometry.num_textures == 0
    assert (scene.geometry.object_texture.numpy() == -1).all()


# --- lens distortion -------------------------------------------------------------------------------------------------

K = (-0.22, 0.06, 0.0015, -0.002, -0.01)   # OpenCV order (k1, k2, p1, p2, k3)


def opencv_distort(x: np.ndarray, y: np.ndarray, k) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's projectPoints distortion (docs.opencv.org, calib3d), written out here independently."""
    k1, k2, p1, p2, k3 = k
    r2 = x * x + y * y
    radial = 1 + k1 * r2 + k2 * r2 ** 2 + k3 * r2 ** 3
    return (x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x),
            y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y)


def opencv_undistort(xd: np.ndarray, yd: np.ndarray, k, iterations: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """cv2.undistortPoints' iteration (cvUndistortPointsInternal), run to convergence."""
    k1, k2, p1, p2, k3 = k
    x, y = xd.copy(), yd.copy()
    for _ in range(iterations):
        r2 = x * x + y * y
        icdist = 1 / (1 + k1 * r2 + k2 * r2 ** 2 + k3 * r2 ** 3)
        x = (xd - (2 * p1 * x * y + p2 * (r2 + 2 * x * x))) * icdist
        y = (yd - (p1 * (r2 + 2 * y * y) + 2 * p2 * x * y)) * icdist
    return x, y


def coordinate_board() -> Scene:
    """A 20 m square in the plane x = 4 whose texture encodes the hit point: R = (10 - y) / 20, G = (z + 20) / 20
    (a 2 x 2 clamped texture with uvs over its texel centres is exactly bilinear, i.e. linear here)."""
    texels = np.array([[[0, 1, 0], [1, 1, 0]], [[0, 0, 0], [1, 0, 0]]], dtype=np.float32)
    tex = Texture(texels, "coordinates", "clamp", "clamp")
    v = np.array([[4, 10, -20], [4, -10, -20], [4, -10, 0], [4, 10, 0]], dtype=float)
    tris = np.array([[0, 1, 2], [0, 2, 3]])
    corner_uv = np.array([[0.25, 0.25], [0.75, 0.25], [0.75, 0.75], [0.25, 0.75]])
    mesh = TriangleMesh(v, tris, corner_uv[tris])
    mat = Material("coords", 0.5, (0.5, 0.5, 0.5), texture=tex)
    return Scene([Node("/B", mesh=mesh, material=mat)], device="cpu")


def test_distorted_pixels_see_what_opencv_projects_onto_them() -> None:
    cfg = UnderwaterCameraConfig(width=64, height=48, horizontal_fov=80.0, distortion=K, **CLEAR)
    j = UnderwaterCamera(cfg, device="cpu").render(coordinate_board(), pose_from_euler(0, 0, -10)).numpy()["in_air"][0]
    y_world = 10 - 20 * j[..., 0].astype(np.float64)
    z_world = 20 * j[..., 1].astype(np.float64) - 20
    # OpenCV camera frame: x right = -y, y down = -(z - z_camera), z forward = 4 m
    fx, fy, cx, cy = cfg.intrinsics()
    xd, yd = opencv_distort(-y_world / 4.0, -(z_world + 10.0) / 4.0, K)
    rows, cols = np.mgrid[0:48, 0:64]
    assert np.abs(fx * xd + cx - cols).max() < 0.01
    assert np.abs(fy * yd + cy - rows).max() < 0.01


def test_a_straight_line_is_curved_by_the_lens_and_straight_once_undistorted() -> None:
    cfg = UnderwaterCameraConfig(width=64, height=48, horizontal_fov=80.0, distortion=K, **CLEAR)
    j = UnderwaterCamera(cfg, device="cpu").render(coordinate_board(), pose_from_euler(0, 0, -10)).numpy()["in_air"][0]
    fx, fy, cx, cy = cfg.intrinsics()
    # the world's vertical line y = 2.2 m: R = (10 - 2.2) / 20; find where each row crosses it (sub-pixel)
    level = (10 - 2.2) / 20
    us = []
    for row in range(48):
        r = j[row, :, 0].astype(np.float64)
        c = int(np.nonzero(r >= level)[0][0])
        us.append(c - 1 + (level - r[c - 1]) / (r[c] - r[c - 1]))
    u, v = np.array(us), np.arange(48.0)
    # drawn curved: several pixels off the chord through its ends
    chord = u[0] + (u[-1] - u[0]) * v / 47
    assert np.abs(u - chord).max() > 1.5
    # undistorted by OpenCV's equations: on a straight line within 0.1 px
    x, y = opencv_undistort((u - cx) / fx, (v - cy) / fy, K)
    a, b = np.polyfit(y, x, 1)
    assert np.abs(fx * (x - (a * y + b))).max() < 0.1


# --- vignetting -------------------------------------------------------------------------------------------------------

def flat_field_scene() -> Scene:
    """Nothing in front of the camera (a small plate behind it): every pixel sees the veiling light."""
    plate = TriangleMesh(np.array([[-5, -1, -11], [-5, 1, -11], [-5, 1, -9]], float), np.array([[0, 1, 2]]))
    return Scene([Node("/plate", mesh=plate)], device="cpu")


def flat_camera(level: float, **changes) -> UnderwaterCameraConfig:
    return UnderwaterCameraConfig(**{**CLEAR, "water_veiling_light": (level, level, level),
                                     "veiling_scales_with_light": False, **changes})


def test_vignetting_at_the_corner_is_cos4_of_its_field_angle() -> None:
    cfg = flat_camera(0.5, width=33, height=25, horizontal_fov=90.0, vignetting_cos4=True)
    cam = UnderwaterCamera(cfg, device="cpu")
    fx, fy, cx, cy = cfg.intrinsics()
    theta = math.atan(math.hypot(cx / fx, cy / fy))      # corner pixel (0, 0) is (cx, cy) px off the axis
    assert cam.vignetting()[0, 0] == pytest.approx(math.cos(theta) ** 4, rel=1e-6)
    assert cam.vignetting()[12, 16] == pytest.approx(1.0)
    r = cam.render(flat_field_scene(), pose_from_euler(0, 0, -10)).numpy()
    assert r["rgb"][0, 0, 0].tolist() == [srgb_code(0.5 * math.cos(theta) ** 4)] * 3
    assert r["rgb"][0, 12, 16].tolist() == [srgb_code(0.5)] * 3
    np.testing.assert_allclose(r["linear"][0], 0.5)               # the radiance itself is not vignetted
    # the polynomial on the radius over the half diagonal: 1 - 0.3 rho^2 at the corner pixel
    poly = UnderwaterCamera(flat_camera(0.5, width=33, height=25, vignetting_polynomial=(-0.3, 0.0, 0.0)),
                            device="cpu")
    rho2 = (cx ** 2 + cy ** 2) / (0.25 * (33 ** 2 + 25 ** 2))
    assert poly.vignetting()[0, 0] == pytest.approx(1 - 0.3 * rho2, rel=1e-6)


# --- photon transfer -------------------------------------------------------------------------------------------------

def test_photon_transfer_curve_gives_the_gain_and_read_noise() -> None:
    gain, read = 2.0, 6.0                       # e-/DN, e- rms
    base = dict(width=64, height=64, noise=True, full_well=30000.0, bit_depth=14, gain=gain, read_noise=read,
                quantum_efficiency=0.5, photons_per_unit=40000.0, seed=7)
    means, variances = [], []
    scene = flat_field_scene()
    for exposure in (0.05, 0.1, 0.2, 0.4, 0.6):                       # 1000 .. 12000 e-
        cam = UnderwaterCamera(flat_camera(1.0, exposure=exposure, **base), device="cpu")
        dn = cam.render(scene, pose_from_euler(0, 0, -10)).numpy()["raw"][0].astype(np.float64)
        assert dn.mean() == pytest.approx(0.5 * 40000 * exposure / gain, rel=0.005)
        means.append(dn.mean())
        variances.append(dn.var())
    slope, _ = np.polyfit(means, variances, 1)
    assert slope == pytest.approx(1 / gain, rel=0.03)                 # the photon transfer curve: 1 / gain
    # read noise from a dim flat field (100 e-): var = mu / g + read^2 / g^2 + 1/12
    cam = UnderwaterCamera(flat_camera(1.0, exposure=0.005, **base), device="cpu")
    dn = cam.render(scene, pose_from_euler(0, 0, -10)).numpy()["raw"][0].astype(np.float64)
    assert gain * math.sqrt(dn.var() - dn.mean() / gain - 1 / 12) == pytest.approx(read, rel=0.05)
    # Poisson counts below the Gaussian approximation: 10 e-, no read noise, gain 1: mean = variance = 10
    cam = UnderwaterCamera(flat_camera(1.0, exposure=0.0005, **{**base, "gain": 1.0, "read_noise": 0.0}),
                           device="cpu")
    dn = cam.render(scene, pose_from_euler(0, 0, -10)).numpy()["raw"][0].astype(np.float64)
    assert dn.mean() == pytest.approx(10.0, rel=0.03) and dn.var() == pytest.approx(10.0 + 1 / 12, rel=0.06)


def test_saturation_bit_depth_and_counter_based_noise() -> None:
    scene = flat_field_scene()
    cfg = flat_camera(1.0, width=16, height=12, noise=True, exposure=3.0, full_well=8000.0, bit_depth=10,
                      read_noise=0.0)
    r = UnderwaterCamera(cfg, device="cpu").render(scene, pose_from_euler(0, 0, -10)).numpy()
    assert (r["raw"] == 1023).all() and (r["rgb"] == 255).all()       # full well -> the top code
    # the same frames whatever the batch: draws keyed by (seed, frame, sensor id, pixel)
    cfg = flat_camera(0.3, width=16, height=12, noise=True, seed=3)
    cam = UnderwaterCamera(cfg, device="cpu", sensor_id=2)
    poses = np.stack([pose_from_euler(0, 0, -10)] * 2)
    batch = cam.render(scene, poses, frame_index=5).numpy()["raw"]
    for b in range(2):
        np.testing.assert_array_equal(cam.render(scene, poses[b], frame_index=5 + b).numpy()["raw"][0], batch[b])
    assert not np.array_equal(batch[0], batch[1])
    other = UnderwaterCamera(cfg, device="cpu", sensor_id=3).render(scene, poses[0], frame_index=5).numpy()["raw"]
    assert not np.array_equal(other[0], batch[0])


# --- exposure and motion blur -----------------------------------------------------------------------------------------

def edge_scene() -> Scene:
    """A wall at x = 5: white where y < 0, black where y > 0."""
    white = Material("white", 0.5, (1.0, 1.0, 1.0))
    black = Material("black", 0.5, (0.0, 0.0, 0.0))
    def quad(y0: float, y1: float) -> TriangleMesh:
        return TriangleMesh(np.array([[5, y0, -20], [5, y1, -20], [5, y1, 0], [5, y0, 0]], float),
                            np.array([[0, 1, 2], [0, 2, 3]]))
    return Scene([Node("/white", mesh=quad(-20, 0), material=white), Node("/black", mesh=quad(0, 20), material=black)],
                 device="cpu")


def test_motion_blur_spreads_an_edge_over_speed_times_exposure() -> None:
    # camera sliding along +y at 1 m/s, 0.5 s exposure, fx = 50 px at 5 m: 1 * 0.5 * 50 / 5 = 5 pixels of blur
    q = pose_from_euler(0, 0, 0)[3:]
    traj = Trajectory([0.0, 10.0], [[0, -5, -10, *q], [0, 5, -10, *q]])
    cfg = UnderwaterCameraConfig(width=41, height=3, fx=50.0, exposure_time=0.5, motion_blur_samples=50, **CLEAR)
    cam = UnderwaterCamera(cfg, device="cpu")
    kind = registry.get("camera")
    times = np.array([5.0])
    result = kind.render(cam, registry.Batch(edge_scene(), traj.at(times), times, 0, traj)).numpy()
    white = result["in_air"][0, 1, :, 0].astype(np.float64)
    # pixel col sees y = y_camera - (col - 20) * 0.1 m; y_camera uniform over [-0.25, 0.25] m
    expected = np.clip((np.arange(41) - 20) * 0.2 + 0.5, 0.0, 1.0)
    np.testing.assert_allclose(white, expected, atol=1e-6)
    assert ((white > 0) & (white < 1)).sum() == 5
    # mid-exposure geometry: the label edge sits where the still camera puts it
    still = UnderwaterCamera(cfg.replace(motion_blur_samples=1), device="cpu")
    sharp = still.render(edge_scene(), traj.at(times)).numpy()
    assert ((sharp["in_air"][0, 1, :, 0] > 0) & (sharp["in_air"][0, 1, :, 0] < 1)).sum() == 0
    np.testing.assert_array_equal(result["label"][0, 1, :19], sharp["label"][0, 1, :19])


def test_exposure_sub_samples_are_centred_on_the_frame_time() -> None:
    cfg = UnderwaterCameraConfig(exposure_time=0.04, motion_blur_samples=4)
    np.testing.assert_allclose(cfg.exposure_offsets(), [-0.015, -0.005, 0.005, 0.015])
    assert UnderwaterCameraConfig(exposure_time=0.04).exposure_offsets().tolist() == [0.0]


# --- configs ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, field", [
    ({"distortion": (-5.0, 0.0, 0.0, 0.0, 0.0)}, "distortion"),
    ({"distortion": (0.0, 0.0, 0.0, 0.0)}, "distortion"),
    ({"distortion": (float("nan"), 0.0, 0.0, 0.0, 0.0)}, r"distortion\[k1\]"),
    ({"exposure_time": -0.01}, "exposure_time"),
    ({"exposure": -1.0}, "exposure"),
    ({"bit_depth": 0}, "bit_depth"),
    ({"bit_depth": 17}, "bit_depth"),
    ({"motion_blur_samples": 0}, "motion_blur_samples"),
    ({"quantum_efficiency": 1.5}, "quantum_efficiency"),
    ({"full_well": 0.0}, "full_well"),
    ({"read_noise": -1.0}, "read_noise"),
    ({"gain": 0.0}, "gain"),
    ({"vignetting_polynomial": (-2.0, 0.0, 0.0)}, "vignetting_polynomial"),
])
def test_bad_realism_configs_name_the_field(changes: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        UnderwaterCameraConfig.from_dict(changes)


def test_realism_fields_stay_out_of_the_config_dict_until_set() -> None:
    plain = UnderwaterCameraConfig().to_dict()
    assert not set(UnderwaterCameraConfig.REALISM_FIELDS) & set(plain)
    assert "seed" not in UnderwaterCameraConfig(seed=4).to_dict()   # no noise: the seed changes nothing
    noisy = UnderwaterCameraConfig(noise=True, seed=4, distortion=(0.1, 0.0, 0.0, 0.0, 0.0))
    d = noisy.to_dict()
    assert d["noise"] is True and d["seed"] == 4 and d["distortion"] == [0.1, 0.0, 0.0, 0.0, 0.0]
    assert UnderwaterCameraConfig.from_dict(d) == noisy
    for name in ("gopro_flat_port", "blackfly_s_machine_vision"):
        cfg = UnderwaterCameraConfig.preset(name)
        assert cfg.noise and UnderwaterCameraConfig.from_dict(cfg.to_dict()) == cfg


def test_raw_product_needs_the_noise_model() -> None:
    kind = registry.get("camera")
    with pytest.raises(ConfigError, match="noise: true"):
        kind.check(UnderwaterCameraConfig(), ("rgb_png", "raw"), "sensor cam")
    kind.check(UnderwaterCameraConfig(noise=True), ("rgb_png", "raw"), "sensor cam")


# --- the colour-board benchmark ------------------------------------------------------------------------------------------

def test_colour_board_benchmark_renders_eq1_and_measures_angles() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import camera_colour_board as board

    assert board.angle_deg(np.array([1.0, 0.0, 0.0]), np.array([1.0, 1.0, 0.0])) == pytest.approx(45.0)
    assert board.angle_deg(np.array([0.2, 0.2, 0.2]), np.array([0.9, 0.9, 0.9])) == pytest.approx(0.0, abs=1e-6)
    scene = board.board_scene("cpu")
    row = board.run_case(scene, "jerlov_II", 1.0, (96, 72), None, scene.device)
    assert row["model_deg"] < 0.02                 # the renderer's patches equal eq. 1 by hand
    assert row["raw_deg"] > 5.0                    # 10 m of water tints the board
    assert row["white_balanced_deg"] < row["raw_deg"]


# --- in a dataset -----------------------------------------------------------------------------------------------------

def camera_rig(batch_size: int) -> dict:
    return {"name": "realism", "scene": "tank", "seed": 11, "frames": 3, "tick_rate_hz": 2.0, "shard_size": 3,
            "batch_size": batch_size,
            "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
            "sensors": [{"name": "cam", "type": "camera", "rate_hz": 2.0, "mount": [0.3, 0, 0.1, 0, 10, 0],
                         "config": {"width": 24, "height": 16, "noise": True, "exposure_time": 0.2,
                                    "motion_blur_samples": 3, "distortion": [-0.1, 0.01, 0.0, 0.0, 0.0],
                                    "vignetting_cos4": True},
                         "products": ["rgb_png", "raw", "linear", "depth"]}]}


def test_a_realistic_camera_writes_the_same_bytes_whatever_the_batch(tmp_path: Path) -> None:
    import yaml

    from oceansim_py import load_dataset
    from oceansim_py.cli import main

    outs = []
    for batch in (1, 3):
        rig = tmp_path / f"rig{batch}.yaml"
        rig.write_text(yaml.safe_dump(camera_rig(batch)))
        out = tmp_path / f"ds{batch}"
        assert main(["generate", "--rig", str(rig), "--out", str(out), "--no-progress", "--device", "cpu"]) == 0
        outs.append(out)
    files = sorted(p.relative_to(outs[0]) for p in (outs[0] / "shard_00000" / "cam").iterdir())
    assert len(files) == 12                     # 4 products x 3 frames
    for f in files:
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
    reader = load_dataset(outs[0])
    raw = reader[1]["cam"]["raw"]
    assert raw.dtype == np.uint16 and raw.shape == (16, 24, 3) and 0 < raw.mean() < 4095
    manifest = reader.manifest["sensors"]["cam"]
    assert manifest["config"]["seed"] == 11 and manifest["distortion_coefficients"]["values"][0] == -0.1


def test_textured_material_on_a_mesh_without_uvs_keeps_its_albedo(tmp_path: Path, caplog) -> None:
    from pxr import Usd, UsdGeom

    path = write_textured_usd(tmp_path)
    stage = Usd.Stage.Open(str(path))
    UsdGeom.PrimvarsAPI(stage.GetPrimAtPath("/World/board")).RemovePrimvar("st")
    stage.Save()
    with caplog.at_level("WARNING"):
        scene = load_scene(path, device="cpu")
    assert "no primvar 'primvars:st'" in caplog.text
    assert scene.node("/World/board").material.texture is None and scene.geometry.num_textures == 0
