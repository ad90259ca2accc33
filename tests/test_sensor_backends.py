"""Every ray-casting acoustic sensor and the DVL cast through the scene's ray-cast backend (issue 18 item 1): one
backend cast per render, and the same output bytes under ``warp`` and ``embree`` on a scene without edge ties."""

from __future__ import annotations

import numpy as np
import pytest

from oceansim_py.raycast import rtcore
from oceansim_py.sensors.dvl import DVL, DVLConfig
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

from conftest import make_scene, quad

#: Pitched 30 deg nose-down (quaternion about +y), 10 m above the floor and 12 m from the wall, two poses.
POSES = np.array([[0.0, 0.0, -5.0, 0.0, 0.25881905, 0.0, 0.96592583],
                  [0.3, 0.2, -5.0, 0.0, 0.25881905, 0.0, 0.96592583]])
LEVEL = np.array([[0.0, 0.0, -5.0, 0.0, 0.0, 0.0, 1.0], [0.3, 0.2, -5.0, 0.0, 0.0, 0.0, 1.0]])


def scene():
    """A floor at z = -15 m and a wall facing -x at x = 12 m (tilted 10 deg so no ray meets a diagonal exactly)."""
    return make_scene(("floor", quad([0.0, 0.0, -15.0], [0.0, 0.0, 1.0], 200.0), 0.5),
                      ("wall", quad([12.0, 0.0, -10.0], [-1.0, 0.0, np.tan(np.radians(10.0))], 100.0), 0.8))


SENSORS = {
    "imaging_sonar_peer": lambda: (ImagingSonar(ImagingSonarConfig.preset(
        "oceansim_default", max_range=20.0, n_beams=32, range_bins=64, rays_per_beam=2, elevation_rays=40),
        device="cpu"), POSES),
    "imaging_sonar_device": lambda: (ImagingSonar(ImagingSonarConfig.preset(
        "blueview_p900", max_range=20.0, n_beams=32, range_bins=64, rays_per_beam=2, elevation_rays=40),
        device="cpu"), POSES),
    "multibeam_peer": lambda: (MultibeamSonar(MultibeamSonarConfig.preset(
        "blueview_p900_peer", n_beams=32, max_range=20.0, rays_per_beam=40), device="cpu"), POSES),
    "multibeam_device": lambda: (MultibeamSonar(MultibeamSonarConfig.preset(
        "blueview_p900", n_beams=32, max_range=20.0, rays_per_beam=40), device="cpu"), POSES),
    "sidescan": lambda: (SidescanSonar(SidescanSonarConfig.preset("sidescan_900khz"), device="cpu"), LEVEL),
    "sidescan_device": lambda: (SidescanSonar(SidescanSonarConfig.preset("edgetech_4125_900khz"), device="cpu"),
                                LEVEL),
    "profiling": lambda: (ProfilingSonar(ProfilingSonarConfig.preset("holoocean_default"), device="cpu"), LEVEL),
    "profiling_device": lambda: (ProfilingSonar(ProfilingSonarConfig.preset("em2040_600khz"), device="cpu"), LEVEL),
    "singlebeam_device": lambda: (SinglebeamSonar(SinglebeamSonarConfig.preset("tritech_pa500"), device="cpu"),
                                  LEVEL),
}


def render(sensor, s, poses):
    if isinstance(sensor, DVL):
        return sensor.render(s, poses, velocities=[0.5, 0.1, 0.0])
    return sensor.render(s, poses, frame_index=3)


def arrays(result) -> dict[str, np.ndarray]:
    return {k: v for k, v in result.numpy().items() if isinstance(v, np.ndarray)}


@pytest.mark.parametrize("name", [*SENSORS, "dvl"])
def test_sensor_casts_once_through_the_scene_backend(name: str) -> None:
    s = scene()
    s.set_raycast_backend("warp")
    sensor, poses = (DVL(DVLConfig(), device="cpu"), LEVEL) if name == "dvl" else SENSORS[name]()
    casts: list[int] = []
    backend = s.backend
    inner = backend.cast

    def counted(origins, directions, max_range, out, threads=None):
        casts.append(origins.shape[0])
        inner(origins, directions, max_range, out, threads)

    backend.cast = counted
    render(sensor, s, poses)
    rays_per_pose = 4 if name == "dvl" else sensor.config.rays_per_pose
    assert casts == [len(poses) * rays_per_pose]


@pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")
@pytest.mark.parametrize("name", [*SENSORS, "dvl"])
def test_sensor_outputs_are_the_same_bytes_under_both_backends(name: str) -> None:
    s = scene()
    out = {}
    for backend in ("warp", "embree"):
        s.set_raycast_backend(backend)
        if backend == "embree":
            s.backend.build()
        sensor, poses = (DVL(DVLConfig(), device="cpu"), LEVEL) if name == "dvl" else SENSORS[name]()
        out[backend] = arrays(render(sensor, s, poses))
    assert out["warp"].keys() == out["embree"].keys()
    for key, value in out["warp"].items():
        assert value.tobytes() == out["embree"][key].tobytes(), key
    hits = out["warp"].get("hit_count", out["warp"].get("valid", out["warp"].get("intensity")))
    assert np.count_nonzero(hits) > 0
