"""The camera sees the sea surface (issue 16 item 2): Snell's window and total internal reflection from below,
Fresnel reflection of the sky and refraction into the water from above, against numbers computed by hand.

Hand numbers: n = 1.333; critical angle asin(1 / n) = 48.6066 deg; normal-incidence reflectance
R0 = ((n - 1) / (n + 1))^2 = 0.020374; radiance crossing the interface scales by n^2 (L / n^2 conserved)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig

N = 1.333
R0 = ((N - 1) / (N + 1)) ** 2
CRITICAL = math.asin(1 / N)
UP = (0.0, -90.0, 0.0)      # roll, pitch, yaw (deg): optical axis straight up
DOWN = (0.0, 90.0, 0.0)

#: clear water without backscatter or veiling light, lit by a unit ambient irradiance only
OPTICS = dict(surface_optics="always", sun=False, ambient=(1.0, 1.0, 1.0), water="jerlov_IB",
              water_attenuation=(0.05, 0.05, 0.05), water_backscatter=(0.0, 0.0, 0.0),
              water_veiling_light=(0.0, 0.0, 0.0), veiling_scales_with_light=False)


def fresnel(cos_i: float, n1: float, n2: float) -> float:
    sin_t = n1 / n2 * math.sqrt(max(0.0, 1 - cos_i ** 2))
    if sin_t >= 1:
        return 1.0
    cos_t = math.sqrt(1 - sin_t ** 2)
    rs = (n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t)
    rp = (n1 * cos_t - n2 * cos_i) / (n1 * cos_t + n2 * cos_i)
    return 0.5 * (rs ** 2 + rp ** 2)


def floor_scene(z: float = -10.0, albedo: float = 0.5) -> Scene:
    v = np.array([[-500, -500, z], [500, -500, z], [500, 500, z], [-500, 500, z]], dtype=float)
    mat = Material.from_properties("sand", (albedo, albedo, albedo), reflectivity=0.3)
    return Scene([Node("/F", mesh=TriangleMesh(v, np.array([[0, 1, 2], [0, 2, 3]])), material=mat, label="floor")],
                 device="cpu")


def empty_scene() -> Scene:
    """A scene whose only triangle is far away (nothing in view)."""
    v = np.array([[1000, 1000, -900], [1001, 1000, -900], [1000, 1001, -900]], dtype=float)
    return Scene([Node("/far", mesh=TriangleMesh(v, np.array([[0, 1, 2]])), label="far")], device="cpu")


def render(scene: Scene, z: float, angles: tuple[float, float, float], **fields) -> dict[str, np.ndarray]:
    cfg = UnderwaterCameraConfig(**{**OPTICS, **fields})
    return UnderwaterCamera(cfg, device="cpu").render(scene, pose_from_euler(0, 0, z, *angles)).numpy()


def test_snells_window_edge_is_the_critical_angle_and_tir_beyond() -> None:
    # 401 x 3 pixels, 140 deg across: fx = 200.5 / tan(70 deg) = 72.98 px; the window's edge on the centre row
    # at |u - cx| = fx tan(48.6066 deg) = 82.80 px
    sky = 0.4
    r = render(empty_scene(), -2.0, UP, width=401, height=3, horizontal_fov=140.0, sky_zenith=(sky,) * 3,
               sky_horizon=(sky,) * 3)
    cfg = UnderwaterCameraConfig(width=401, height=3, horizontal_fov=140.0)
    fx, _, cx, _ = cfg.intrinsics()
    row = r["linear"][0, 1, :, 0]
    lit = np.flatnonzero(row > 0)
    edge = fx * math.tan(CRITICAL)
    assert abs(edge - 82.80) < 0.01
    assert abs((cx - lit[0]) - edge) <= 1.0 and abs((lit[-1] - cx) - edge) <= 1.0
    assert np.all(row[lit[0]:lit[-1] + 1] > 0)       # one window, sky throughout
    # inside: (1 - R(theta)) n^2 L_sky exp(-beta h / cos theta), h = 2 m
    for off in (0, 30, 60, 80):
        theta = math.atan(off / fx)
        expect = (1 - fresnel(math.cos(theta), N, 1.0)) * N ** 2 * sky * math.exp(-0.05 * 2.0 / math.cos(theta))
        assert row[int(cx) + off] == pytest.approx(expect, rel=1e-4), off
    # beyond: total internal reflection into empty water without veiling light -> black
    assert np.all(row[:lit[0]] == 0) and np.all(row[lit[-1] + 1:] == 0)
    # range and normal of the surface; the flat surface is no scene node
    assert r["range"][0, 1, 200] == pytest.approx(2.0, rel=1e-6)
    assert r["label"][0, 1, 200] == -1 and r["normal"][0, 1, 200].tolist() == [0.0, 0.0, -1.0]


def test_beyond_the_window_the_reflected_seafloor_attenuated_along_the_whole_path() -> None:
    # camera 2 m deep looking up, floor 10 m deep (albedo 0.5 under unit ambient: J = 0.5); a centre-row pixel at
    # theta > 48.6 deg sees the floor in the mirror: path h / cos + 10 / cos (the in-water ray is cast from 1 mm
    # below the surface, but its water path counts from the surface)
    r = render(floor_scene(-10.0, 0.5), -2.0, UP, width=401, height=3, horizontal_fov=140.0,
               sky_zenith=(0.0,) * 3, sky_horizon=(0.0,) * 3)
    fx, _, cx, _ = UnderwaterCameraConfig(width=401, height=3, horizontal_fov=140.0).intrinsics()
    for off in (100, 150, 190):
        theta = math.atan(off / fx)
        assert theta > CRITICAL
        path = (2.0 + 10.0) / math.cos(theta)
        assert r["linear"][0, 1, int(cx) + off, 0] == pytest.approx(0.5 * math.exp(-0.05 * path), rel=2e-5), off
        assert r["in_air"][0, 1, int(cx) + off, 0] == pytest.approx(0.5, rel=1e-6)


def test_fresnel_reflectance_at_normal_incidence() -> None:
    assert R0 == pytest.approx(0.0204, abs=5e-5)
    # no attenuation: looking straight up, a black sky and a floor of albedo 0.5 below -> R0 * 0.5
    water = dict(water_attenuation=(0.0, 0.0, 0.0), width=3, height=3, sky_zenith=(0.0,) * 3,
                 sky_horizon=(0.0,) * 3)
    r = render(floor_scene(-10.0, 0.5), -2.0, UP, **water)
    assert r["linear"][0, 1, 1, 0] == pytest.approx(R0 * 0.5, rel=1e-5)
    # a sky of radiance 0.4 and nothing below -> (1 - R0) n^2 0.4
    r = render(empty_scene(), -2.0, UP, **{**water, "sky_zenith": (0.4,) * 3, "sky_horizon": (0.4,) * 3})
    assert r["linear"][0, 1, 1, 0] == pytest.approx((1 - R0) * N ** 2 * 0.4, rel=1e-5)


def test_camera_above_water_sees_the_seafloor_through_the_surface() -> None:
    # camera 2 m above the surface looking down at a floor 3 m deep (albedo 0.6, J = 0.6), beta^D = 0.1,
    # beta^B = 0.2, B_inf = 0.05, sky 0.3: I = R0 0.3 + (1 - R0) / n^2 (J e^(-0.1 z) + B_inf (1 - e^(-0.2 z))),
    # z = 3 m of water
    sky, j, binf, z = 0.3, 0.6, 0.05, 3.0
    r = render(floor_scene(-3.0, j), 2.0, DOWN, width=3, height=3, sky_zenith=(sky,) * 3, sky_horizon=(sky,) * 3,
               water_attenuation=(0.1, 0.1, 0.1), water_backscatter=(0.2, 0.2, 0.2),
               water_veiling_light=(binf,) * 3)
    water = j * math.exp(-0.1 * z) + binf * (1 - math.exp(-0.2 * z))
    assert r["linear"][0, 1, 1, 0] == pytest.approx(R0 * sky + (1 - R0) / N ** 2 * water, rel=1e-5)
    assert r["in_air"][0, 1, 1, 0] == pytest.approx(R0 * sky + (1 - R0) / N ** 2 * j, rel=1e-5)
    assert r["range"][0, 1, 1] == pytest.approx(2.0, rel=1e-6) and r["label"][0, 1, 1] == -1
    # darker than the floor seen from inside the water at the same distance: T / n^2 = 0.551
    assert (1 - R0) / N ** 2 == pytest.approx(0.5513, abs=1e-4)


def test_camera_above_water_sees_the_sky_and_unattenuated_objects_in_the_air() -> None:
    # looking up from the air: the sky's zenith radiance; a wall above the water: J without water
    r = render(empty_scene(), 2.0, UP, width=3, height=3, sky_zenith=(0.7,) * 3, sky_horizon=(0.1,) * 3)
    assert r["linear"][0, 1, 1, 0] == pytest.approx(0.7, rel=1e-6)
    v = np.array([[5, -50, 0.5], [5, 50, 0.5], [5, 50, 50], [5, -50, 50]], dtype=float)
    wall = Scene([Node("/W", mesh=TriangleMesh(v, np.array([[0, 1, 2], [0, 2, 3]])),
                       material=Material.from_properties("paint", (0.4, 0.4, 0.4), reflectivity=0.5))], device="cpu")
    r = render(wall, 3.0, (0.0, 0.0, 0.0), width=3, height=3)
    assert r["linear"][0, 1, 1, 0] == pytest.approx(0.4, rel=1e-6)     # ambient 1, no sun, no water


def test_default_and_cameras_that_never_see_the_surface_keep_their_bytes() -> None:
    scene = floor_scene(-10.0, 0.5)
    base = dict(width=64, height=48, water="jerlov_II", shadows=True)
    down = pose_from_euler(0, 0, -4, 0, 60, 0)       # 73.7 deg tall image, 60 deg down: never above the horizon
    up = pose_from_euler(0, 0, -4, 0, -30, 0)
    off = {p: UnderwaterCamera(UnderwaterCameraConfig(**base, surface_optics="never"), device="cpu").render(scene, q)
           .numpy() for p, q in (("down", down), ("up", up))}
    always = UnderwaterCamera(UnderwaterCameraConfig(**base, surface_optics="always"), device="cpu")
    on_down = always.render(scene, down)
    auto_up = UnderwaterCamera(UnderwaterCameraConfig(**base), device="cpu").render(scene, up)  # flat scene: no optics
    for key in ("rgb", "linear", "in_air", "range", "depth", "label", "instance", "normal"):
        assert on_down.numpy()[key].tobytes() == off["down"][key].tobytes(), key
        assert auto_up.numpy()[key].tobytes() == off["up"][key].tobytes(), key
    on_up = UnderwaterCamera(UnderwaterCameraConfig(**base, surface_optics="always"), device="cpu").render(scene, up)
    assert on_up.numpy()["rgb"].tobytes() != off["up"]["rgb"].tobytes()


def test_moving_sea_surface_is_seen_from_below() -> None:
    scene = floor_scene(-10.0, 0.5)
    scene.add_sea_surface("calm", size=60.0, resolution=0.5, center=(0.0, 0.0))
    sky = 0.4
    fields = dict(width=41, height=41, horizontal_fov=60.0, sky_zenith=(sky,) * 3, sky_horizon=(sky,) * 3)
    auto = render(scene, -4.0, UP, **{**fields, "surface_optics": "auto"})
    flat = render(floor_scene(-10.0, 0.5), -4.0, UP, **{**fields, "surface_optics": "always"})
    sea_label = scene.labels.index("sea_surface")
    assert np.all(auto["label"][0] == sea_label)
    # gentle waves: near the zenith the window's radiance is that of the flat surface within a few per cent
    c = auto["linear"][0, 18:23, 18:23, 0]
    assert np.allclose(c, flat["linear"][0, 18:23, 18:23, 0], rtol=0.05)
    # and not the mesh shaded as a Lambertian object of albedo 0.02 (surface_optics never)
    off = render(scene, -4.0, UP, **{**fields, "surface_optics": "never"})
    assert off["linear"][0, 20, 20, 0] < 0.05 < auto["linear"][0, 20, 20, 0]


def test_the_sea_surface_mesh_never_shadows_the_sun_whatever_the_optics() -> None:
    # The sun's irradiance is given just below the surface, so the wave mesh lets it through (PHYSICS.md 4.2), also
    # with surface_optics "never", where the mesh is only shaded like an object. Camera 3 m deep looking down at a
    # floor 6 m deep (albedo 0.5) under a moderate sea whose troughs lie below the mean surface there; sun at the
    # zenith, no ambient, no water in the line of sight: J = 0.5 e^(-K_d 6) = 0.5 e^(-0.3 * 6) = 0.082649 (red).
    scene = floor_scene(-6.0, 0.5)
    scene.add_sea_surface("moderate", size=60.0, resolution=0.5, center=(0.0, 0.0))
    scene.set_time(2.0)
    assert (scene.surface_height(np.array([[0.0, 0.0], [1.0, 2.0]])) < 0).all()      # a trough above the view
    for mode in ("never", "auto"):
        cfg = UnderwaterCameraConfig(**{**OPTICS, "surface_optics": mode, "sun": True, "sun_zenith": 0.0,
                                        "ambient": (0.0, 0.0, 0.0), "water_attenuation": (0.0, 0.0, 0.0),
                                        "water_diffuse_attenuation": (0.3, 0.3, 0.3), "width": 16, "height": 12,
                                        "horizontal_fov": 30.0})
        j = UnderwaterCamera(cfg, device="cpu").render(scene, pose_from_euler(0, 0, -3, *DOWN)).numpy()["in_air"]
        np.testing.assert_allclose(j[0, ..., 0], 0.5 * math.exp(-0.3 * 6.0), rtol=1e-5, err_msg=mode)


def test_bad_surface_fields_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="surface_optics"):
        UnderwaterCameraConfig(surface_optics="yes")
    with pytest.raises(ConfigError, match="water_refractive_index"):
        UnderwaterCameraConfig(water_refractive_index=0.9)
    with pytest.raises(ConfigError, match="sky_zenith"):
        UnderwaterCameraConfig(sky_zenith=(-1.0, 0.0, 0.0))
    assert "sky_zenith" not in UnderwaterCameraConfig().to_dict()


def test_camera_in_the_air_or_water_follows_the_instantaneous_wave_surface() -> None:
    scene = floor_scene(-10.0, 0.5)
    scene.add_sea_surface("calm", size=40.0, resolution=0.25, center=(0.0, 0.0))
    scene.set_time(3.0)
    x, y = 1.3, -0.7
    h = float(scene.surface_height([x, y])[0])
    fields = dict(surface_optics="auto", width=3, height=3, horizontal_fov=10.0, sky_zenith=(0.7,) * 3,
                  sky_horizon=(0.1,) * 3)
    cam = UnderwaterCamera(UnderwaterCameraConfig(**{**OPTICS, **fields}), device="cpu")
    above = cam.render(scene, pose_from_euler(x, y, h + 0.2, *UP)).numpy()
    assert above["linear"][0, 1, 1, 0] == pytest.approx(0.7, rel=1e-6)      # the sky's zenith, in the air
    below = cam.render(scene, pose_from_euler(x, y, h - 0.2, *UP)).numpy()
    assert below["label"][0, 1, 1] == scene.labels.index("sea_surface")
    assert below["range"][0, 1, 1] == pytest.approx(0.2, abs=0.02)


@pytest.mark.parametrize("pose", ["0,0,1,0,90,0", "0,0,-0.5,0,-90,0"], ids=["above, looking down", "below, looking up"])
def test_render_cli_counts_the_flat_surface_as_seen_and_does_not_warn_of_an_empty_view(pose, tmp_path, capsys):
    # With surface_optics: always every pixel of these views sees the flat plane (label -1, finite range): through it
    # the tank's floor from above, Snell's window and the reflected tank from below. The CLI counted only labels
    # >= 0, said "0.0 % of pixels hit geometry" and warned that the camera saw nothing.
    import warnings

    from oceansim_py.cli import main
    from oceansim_py.diagnostics import EmptyViewWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", EmptyViewWarning)
        assert main(["render", "camera", "--scene", "tank", "--device", "cpu", "--set", "surface_optics=always",
                     "--set", "width=32", "--set", "height=24", "--pose", pose, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "(100.0 % of pixels see geometry or the sea surface)" in out.out and "saw nothing" not in out.err
    assert np.isfinite(np.load(tmp_path / "camera_range.npy")).all()
    assert (np.load(tmp_path / "camera_label.npy") == -1).any()
