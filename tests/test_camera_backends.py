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
BEFORE = {
    "pier/default/0": "dba85bd13cca7e687471767a2634016fdb5293fbe5c56c41709786172344c453",
    "pier/default/1": "e40c4fed3f1ade63a48e7d2570b13a4b7d0488f37f827deb272d6bab7f2ba518",
    "pier/clear_ocean_sunlit/0": "dba85bd13cca7e687471767a2634016fdb5293fbe5c56c41709786172344c453",
    "pier/clear_ocean_sunlit/1": "e40c4fed3f1ade63a48e7d2570b13a4b7d0488f37f827deb272d6bab7f2ba518",
    "pier/coastal_with_lights/0": "65ae033680b7dda9513bd256c879d5f1cda6bc7cd211cbb6cabded012857cc86",
    "pier/coastal_with_lights/1": "9d076df4435b77bc6a99f1f63db7ce3a75d1d51d3b958a839a2d29c4708b9f5d",
    "pier/night_with_lights/0": "71b0ac7a8610948f7d471aadac8f1be843a4a9c439ad436607df59765203915d",
    "pier/night_with_lights/1": "cda1748ae914ebc571f0dfa6abd36b409546d9d302954a036074065cb32a43dd",
    "pier/gopro_flat_port/0": "ea9288b83274514ff99790be52514e7c45735f0549aa344ce1092faf0c5df7df",
    "pier/gopro_flat_port/1": "2ac3346c65fd031887c3e49a3e9d62d4a39618c4ee8c5d6fd464b088d034c828",
    "pier/blackfly_s_machine_vision/0": "052e07985af6e18e0dbab8885b3817b1e9e81992afe1d8ef806cb17ddef5ce8a",
    "pier/blackfly_s_machine_vision/1": "6c30951f6cd0e04b22a79527169af5821d87abfd7e65d759b0c3ea48836dad53",
    "tank/default/0": "ee024ff55aecdbd297927fe223cb46ddff20ba61b59afabf93cf43ea86dd39be",
    "tank/default/1": "447033715577802ca792ecf90b227237f7a80b2307eaaf30c4754c15e2e77f85",
    "tank/clear_ocean_sunlit/0": "ee024ff55aecdbd297927fe223cb46ddff20ba61b59afabf93cf43ea86dd39be",
    "tank/clear_ocean_sunlit/1": "447033715577802ca792ecf90b227237f7a80b2307eaaf30c4754c15e2e77f85",
    "tank/coastal_with_lights/0": "e0170f805e33324dc2221168d360511a659c33698e771814cc5c20f37cd930db",
    "tank/coastal_with_lights/1": "e488ced129ef6b672ba546a7da81a484d8bc8cc317cf1e86fa9649ba7cf0817a",
    "tank/night_with_lights/0": "fad3201c4e2f635bf6751bfa9ea9b345e524cb9ad91a1ddd9e144fad77603dab",
    "tank/night_with_lights/1": "74804bda1d8b3871db9e5260ad9341ae3cda148ae634ed86cbb5ffd0378dcf6f",
    "tank/gopro_flat_port/0": "4ef140765aed67cd25e12ba8fb5bc6eeba3b585e1fadc0e81114d463a52d7b4c",
    "tank/gopro_flat_port/1": "b17fd29671c40688d41b1e60d01c26b055d6da338ad346ec80683128bbccdacf",
    "tank/blackfly_s_machine_vision/0": "26a3e78469da784a3299ff23b73752063389bb865c628a17ad994ef67b155aec",
    "tank/blackfly_s_machine_vision/1": "4140476da35ed8e986afc4215133b219a584580d7251e3d76c840e14de15e7c1",
    "wreck/default/0": "c3468d94e54cee93b0fef35b833409a9b7c6f0f5c213562c03cc7dbbec209bec",
    "wreck/default/1": "296b44e4181c738f0c417ac6df01a654046d891fa35ce41d2c176e425ce88c0c",
    "wreck/clear_ocean_sunlit/0": "c3468d94e54cee93b0fef35b833409a9b7c6f0f5c213562c03cc7dbbec209bec",
    "wreck/clear_ocean_sunlit/1": "296b44e4181c738f0c417ac6df01a654046d891fa35ce41d2c176e425ce88c0c",
    "wreck/coastal_with_lights/0": "bac93c419d8e7306b6ad60175fef7ad6fedf3a8c841570018efb38e49d4a41a6",
    "wreck/coastal_with_lights/1": "c60870e8e5ff1a50c66d32f574e3cd5c3a61c34e7c86b867cc2fe7bc45d959e4",
    "wreck/night_with_lights/0": "587bc8349596ac48eab3422e46caaca784f68af88d1a3f2cdaa996ac2ddb8c8d",
    "wreck/night_with_lights/1": "bd6a1e33b24e4382e6b9322a0a5d33f26ee5d59ecad7adc94cc087308d216c45",
    "wreck/gopro_flat_port/0": "27728d68981126918a4530aa93c5a66633be16f953ec5dd13fcaed54363b977e",
    "wreck/gopro_flat_port/1": "0ca8e94cd02bca7dc2368e20d362b45e635c7f44e5e80625cb79a724ca2ebe39",
    "wreck/blackfly_s_machine_vision/0": "675af95d19eeb11dec83d06aad186afde4e5d5a0b046c6a52c7a71929844a168",
    "wreck/blackfly_s_machine_vision/1": "c42616f0d52e02827dc6787e4779b2bb103cc17d3190f3fda726fba87983fda2",
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
