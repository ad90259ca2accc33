"""CUDA runs of the same kernels give the CPU's results (skipped without a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import oceansim_py as osp

pytestmark = pytest.mark.cuda


def test_raycast_on_cuda_matches_cpu():
    cpu = osp.load_scene("tank", device="cpu")
    gpu = osp.load_scene("tank", device="cuda:0")
    rng = np.random.default_rng(0)
    d = rng.normal(size=(20000, 3))
    o = np.tile(cpu.suggested_pose[:3], (d.shape[0], 1))
    a = cpu.raycast(o, d, 50.0).numpy()
    b = gpu.raycast(o, d, 50.0).numpy()
    same = a["face"] == b["face"]
    assert same.mean() > 0.999
    np.testing.assert_allclose(a["distance"][same], b["distance"][same], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("preset", ["blueview_p900_peer", "holoocean_paper"])
def test_imaging_sonar_on_cuda_matches_cpu(preset):
    config = osp.ImagingSonarConfig.preset(preset, multiplicative_sigma=0.0, additive_sigma=0.0)
    pose = osp.load_scene("tank", device="cpu").suggested_pose
    images = []
    for device in ("cpu", "cuda:0"):
        scene = osp.load_scene("tank", device=device)
        images.append(osp.ImagingSonar(config, device=device).render(scene, pose).numpy()["clean_intensity"])
    np.testing.assert_allclose(images[0], images[1], rtol=1e-3, atol=1e-6 * float(images[0].max()))


def test_camera_and_multibeam_run_on_cuda():
    scene = osp.load_scene("tank", device="cuda:0")
    rgb = osp.UnderwaterCamera(osp.UnderwaterCameraConfig(width=64, height=48), device="cuda:0").render(
        scene, scene.suggested_pose).numpy()["rgb"]
    assert rgb.shape == (1, 48, 64, 3) and rgb.max() > 0
    ping = osp.MultibeamSonar(osp.MultibeamSonarConfig.preset("blueview_p900_peer"), device="cuda:0").render(
        scene, scene.suggested_pose).numpy()["intensity"]
    assert np.isfinite(ping).all() and ping.max() > 0


@pytest.mark.parametrize("method", ["time", "spectral"])
def test_multibeam_mixing_on_cuda_matches_cpu(method):
    """The fixed-order mixing kernel gives the CPU's ping on CUDA (to float32 rounding of ranges and phases)."""
    config = osp.MultibeamSonarConfig.preset("blueview_p900_peer", max_range=10.0, rays_per_beam=5, method=method)
    pings = []
    for device in ("cpu", "cuda:0"):
        scene = osp.load_scene("tank", device=device)
        pings.append(osp.MultibeamSonar(config, device=device).render(scene, scene.suggested_pose, frame_index=3)
                     .numpy()["time_series"][0].astype(np.complex128))
    rel = np.linalg.norm(pings[0] - pings[1]) / np.linalg.norm(pings[0])
    assert rel < 1e-2
