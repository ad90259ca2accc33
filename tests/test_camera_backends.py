"""The camera casts through the scene's ray-cast backend (issue 18 item 1): primary rays, then the shadow rays of
their hits as a second batch. Under ``warp`` the images are the bytes of the camera that cast inside its own kernel
(hashes recorded with that code); under ``embree`` they differ only at edge ties, counted here."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import oceansim_py as osp
from oceansim_py.poses import compose_poses, pose_from_euler
from oceansim_py.raycast import rtcore
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig

from conftest import make_scene, quad

needs_embree = pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")

#: SHA-256 of every result array (rgb, linear, in_air, range, depth, label, instance, normal, raw) of each preset at
#: 96 x 72 on each built-in scene, pose 0 the scene's suggested pose and pose 1 it turned 40 deg down and 10 deg
#: left (blur presets with 0.02 m / 0.3 deg steps between sub-samples), rendered under ``warp`` by the camera as it
#: was before it cast through the backend (commit 04b9de7, the kernel that called ``wp.mesh_query_ray`` inline).
#: Re-recorded once since, for the water presets' veiling light b_b / (2 (a + b_b)) (audit CR, commit 675d72d;
#: docs/PHYSICS.md §4), which changed B_inf and beta^B of every preset: kernel inputs only, no kernel code, and the
#: former hashes equalled the inline kernel's up to that commit.
BEFORE = {
    "pier/default/0": "c896065a6abd0e4d622c6a7fdb39d70917eb351bee0fe832ada8600ddd410eb3",
    "pier/default/1": "eba247dd0818645f8acbd21060ee520030b6bacdf8d842f47eeabf99f9022a0a",
    "pier/clear_ocean_sunlit/0": "c896065a6abd0e4d622c6a7fdb39d70917eb351bee0fe832ada8600ddd410eb3",
    "pier/clear_ocean_sunlit/1": "eba247dd0818645f8acbd21060ee520030b6bacdf8d842f47eeabf99f9022a0a",
    "pier/coastal_with_lights/0": "632620b54942ad4b1624563fc3ff1ff9774bfdd9e56d231ee8a24f6d877d28ed",
    "pier/coastal_with_lights/1": "d741a56ee8fd5f85fd032a2c4946cdeae3e457e3a6263b11e6f1c963564692b1",
    "pier/night_with_lights/0": "d2bf12bf2612af36085b878ce90c9df5297e6f6c1f882ccbd0d76c3e8e821893",
    "pier/night_with_lights/1": "536740d11899cb5bb1d3b0658cd2c691d7c536fd2fa1a411af60fbe123ec7fca",
    "pier/gopro_flat_port/0": "1ad0b471a2c4f59da4be856acbb6b5ad0538ec1b5e9eb0a295d5685c2f638973",
    "pier/gopro_flat_port/1": "263f52034f81debf41e5968390f7d05aa8898fa74e81269500e573b1579ada80",
    "pier/blackfly_s_machine_vision/0": "5774279fc32dac8ae408a0a06afa6108f2be94910788622ed45fb7ae5185befe",
    "pier/blackfly_s_machine_vision/1": "6031e98b5035b303ba77a3ad01d0118da14ff49530f78513153957a4ec9976e2",
    "tank/default/0": "8ebf59dd6a9eae0916a1631fd2b8266d86bbc1e19d388e7c5c66f288c569882d",
    "tank/default/1": "9c8855ebd8d9e9dfcaace3439a7fd482a5df3c4ce6b3f6ff0732f702f1ca58f8",
    "tank/clear_ocean_sunlit/0": "8ebf59dd6a9eae0916a1631fd2b8266d86bbc1e19d388e7c5c66f288c569882d",
    "tank/clear_ocean_sunlit/1": "9c8855ebd8d9e9dfcaace3439a7fd482a5df3c4ce6b3f6ff0732f702f1ca58f8",
    "tank/coastal_with_lights/0": "87a23968b3d8b1ec5d5c5b330ba0815eb75843ce1cc94a8ab784ae30fac8f1ca",
    "tank/coastal_with_lights/1": "40fba864d44eb9d2d6ed32c4d24b1ced62326deede8b8ff825415b942639139b",
    "tank/night_with_lights/0": "8bea907ce24e9a40deaee00c596184417f2ae00dfdce2f89ccf755d4c0ba19e3",
    "tank/night_with_lights/1": "af973f98ea4dc81e1fd2f0d8f4e75f455db028d28353fb86ff65bf89ac63b134",
    "tank/gopro_flat_port/0": "cba438142f8e491e3709b40f3d9f07d2cafd56f2eae2ace8809426f2b8edea20",
    "tank/gopro_flat_port/1": "5408a30da18e7bd0b4b2a4653fee703b26d59047ef6b46f9dbd830b34a272d8a",
    "tank/blackfly_s_machine_vision/0": "856d9e24157f06f1c1a61894564b8f7ff47ea4e245688f0e9440030184ce1f1b",
    "tank/blackfly_s_machine_vision/1": "5cc6c72c23bdfc9886e2db81019f5e1d275da7f73399af220f491bce836e5679",
    "wreck/default/0": "0d6a72e5c2cf88582c7270fb4002632684e5673dceb41de456cfcc42b94f110e",
    "wreck/default/1": "17dbc22bd99790fbedc64a0962cccdad9f1856f768c40895a741409c4057cf2e",
    "wreck/clear_ocean_sunlit/0": "0d6a72e5c2cf88582c7270fb4002632684e5673dceb41de456cfcc42b94f110e",
    "wreck/clear_ocean_sunlit/1": "17dbc22bd99790fbedc64a0962cccdad9f1856f768c40895a741409c4057cf2e",
    "wreck/coastal_with_lights/0": "c10f73f56230ec0d65e96ec8c8412695b7b11ed196b26d1a941ea88ef0f0f4e6",
    "wreck/coastal_with_lights/1": "7c779a0df89b9b3df28ed1c469848949c2a7be592becf9354ffc70bb17f02780",
    "wreck/night_with_lights/0": "22bda2fac111d0ae9f2b110455a368290eff7ba3e78c737354c89fa0d56ff64b",
    "wreck/night_with_lights/1": "26ece76a2758361abfecd93d8fdf27e67c19eb667dd0b8da4888313e1e275081",
    "wreck/gopro_flat_port/0": "23aea265858c702326391a880a3058b24a075646ba37775822462314a9d74c99",
    "wreck/gopro_flat_port/1": "e4b19dd4b7395ffb2c427d0e3d0ada3631821a97576c081b3ae554d9a7247c11",
    "wreck/blackfly_s_machine_vision/0": "5e207fdad3eb4c29f2c6a7cf74aad8a32dd1c85c17217314d345388487cd5fb9",
    "wreck/blackfly_s_machine_vision/1": "f20fff38f92092e18bf42ac7ca741118842065a453bbacdf402dad2d25c0c231",
}


def config(preset: str) -> UnderwaterCameraConfig:
    fields = UnderwaterCameraConfig.preset(preset).to_dict() if preset != "default" else {}
    return UnderwaterCameraConfig.from_dict({**fields, "width": 96, "height": 72})


def digest(res) -> str:
    h = hashlib.sha256()
    for name in ("rgb", "linear", "in_air", "range", "depth", "label", "instance", "normal", "raw"):
        a = getattr(res, name)
        if a is not None:
            h.update(np.ascontiguousarray(a.numpy()).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("scene_name", ["pier", "tank", "wreck"])
def test_warp_images_are_the_bytes_of_the_inline_kernel(scene_name: str) -> None:
    scene = osp.load_scene(scene_name, device="cpu", raycast_backend="warp")
    base = scene.suggested_pose
    poses = [base, compose_poses(base, pose_from_euler(0, 0, 0, 0, 40, 10))]
    for preset in ["default", *UnderwaterCameraConfig.PRESETS]:
        cfg = config(preset)
        cam = UnderwaterCamera(cfg, device="cpu")
        for i, pose in enumerate(poses):
            exposure = None
            if cfg.blurs:
                exposure = np.stack([compose_poses(pose, pose_from_euler(0.02 * s, 0, 0, 0, 0, 0.3 * s))
                                     for s in range(cfg.motion_blur_samples)])[None]
            got = digest(cam.render(scene, pose[None], exposure_poses=exposure))
            assert got == BEFORE[f"{scene_name}/{preset}/{i}"], f"{scene_name} {preset} pose {i}"


def tie_free_scene():
    """A floor at z = -15 m and a wall facing -x at x = 12 m (tilted 10 deg so that no ray meets a diagonal)."""
    return make_scene(("floor", quad([0.0, 0.0, -15.0], [0.0, 0.0, 1.0], 200.0), 0.5),
                      ("wall", quad([12.0, 0.0, -10.0], [-1.0, 0.0, np.tan(np.radians(10.0))], 100.0), 0.8))


#: 30 deg nose-down, 10 m above the floor, and a second pose beside it
POSES = np.array([[0.0, 0.0, -5.0, 0.0, 0.25881905, 0.0, 0.96592583],
                  [0.3, 0.2, -5.0, 0.0, 0.25881905, 0.0, 0.96592583]])


def test_camera_casts_primary_then_shadow_rays_through_the_backend() -> None:
    s = tie_free_scene()
    s.set_raycast_backend("warp")
    casts: list[int] = []
    inner = s.backend.cast

    def counted(origins, directions, max_range, out, threads=None):
        casts.append(origins.shape[0])
        inner(origins, directions, max_range, out, threads)

    s.backend.cast = counted
    cfg = UnderwaterCameraConfig.preset("coastal_with_lights", width=16, height=12)
    UnderwaterCamera(cfg, device="cpu").render(s, POSES)
    pixels = 2 * 16 * 12
    assert casts == [pixels, pixels * 3]  # primary; sun + 2 lights per pixel
    casts.clear()
    UnderwaterCamera(UnderwaterCameraConfig(width=16, height=12, shadows=False), device="cpu").render(s, POSES)
    assert casts == [pixels]


def test_tiles_and_sub_samples_cast_separately_with_the_same_bytes(monkeypatch) -> None:
    s = tie_free_scene()
    s.set_raycast_backend("warp")
    cfg = UnderwaterCameraConfig.preset("coastal_with_lights", width=16, height=12)
    exposure = np.stack([np.stack([p, p + [0.05, 0, 0, 0, 0, 0, 0]]) for p in POSES])
    whole = UnderwaterCamera(cfg, device="cpu").render(s, POSES, exposure_poses=exposure).numpy()
    monkeypatch.setattr(UnderwaterCamera, "TILE_PIXELS", 100)
    tiled = UnderwaterCamera(cfg, device="cpu").render(s, POSES, exposure_poses=exposure).numpy()
    for key in ("rgb", "linear", "in_air", "range", "depth", "label", "normal"):
        assert whole[key].tobytes() == tiled[key].tobytes(), key


@needs_embree
def test_same_bytes_under_both_backends_without_edge_ties() -> None:
    s = tie_free_scene()
    out = {}
    for backend in ("warp", "embree"):
        s.set_raycast_backend(backend)
        if backend == "embree":
            s.backend.build()
        cfg = UnderwaterCameraConfig.preset("coastal_with_lights", width=64, height=48)
        out[backend] = UnderwaterCamera(cfg, device="cpu").render(s, POSES).numpy()
    assert (out["warp"]["label"] >= 0).mean() > 0.9
    for key in ("rgb", "linear", "in_air", "range", "depth", "label", "instance", "normal"):
        assert out["warp"][key].tobytes() == out["embree"][key].tobytes(), key


@needs_embree
@pytest.mark.parametrize("scene_name", ["pier", "tank", "wreck"])
def test_built_in_scenes_differ_only_at_edge_ties(scene_name: str) -> None:
    """Pixels whose primary ray meets a shared edge may see either triangle (another node, or another normal);
    with shadows, a shadow ray through an edge may pass or not. Everything else is the same bytes."""
    out = {}
    for backend in ("warp", "embree"):
        scene = osp.load_scene(scene_name, device="cpu", raycast_backend=backend)
        base = scene.suggested_pose
        poses = np.stack([base, compose_poses(base, pose_from_euler(0, 0, 0, 0, -25, 10))])
        for shadows in (False, True):
            cfg = UnderwaterCameraConfig.preset("coastal_with_lights", width=320, height=240, shadows=shadows)
            out[backend, shadows] = UnderwaterCamera(cfg, device="cpu").render(scene, poses).numpy()
    n = out["warp", False]["label"].size
    for shadows in (False, True):
        a, b = out["warp", shadows], out["embree", shadows]
        tie = (a["instance"] != b["instance"]) | (a["normal"] != b["normal"]).any(-1)
        differ = (a["rgb"] != b["rgb"]).any(-1)
        assert tie.sum() <= 2e-4 * n, (shadows, int(tie.sum()))
        same = ~tie & (a["instance"] >= 0)
        assert np.abs(a["range"][same] - b["range"][same]).max() < 1e-5
        if not shadows:
            assert not (differ & ~tie).any()  # without shadow rays only the primary ties differ
        else:
            assert (differ & ~tie).sum() <= 2e-4 * n, int((differ & ~tie).sum())
