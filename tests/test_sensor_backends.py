"""Every ray-casting acoustic sensor and the DVL cast through the scene's ray-cast backend (issue 18 item 1): one
backend cast per render, and the same output bytes under ``warp`` and ``embree`` on a scene without edge ties. A
sensor config's ``raycast_backend`` overrides the scene's choice for every cast that sensor makes."""

from __future__ import annotations

import numpy as np
import pytest

from oceansim_py import ConfigError
from oceansim_py.raycast import rtcore
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig
from oceansim_py.sensors.dvl import DVL, DVLConfig
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.lbl import LBLConfig
from oceansim_py.sensors.msis import Msis, MsisConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.optical_modem import OpticalModemConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig
from oceansim_py.sensors.usbl import USBL, USBLConfig

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


# -- per-sensor override: the config's raycast_backend -----------------------------------------------------------

#: Every ray-casting sensor's config class (the field and its validation).
CONFIGS = [ImagingSonarConfig, MultibeamSonarConfig, SidescanSonarConfig, ProfilingSonarConfig, SinglebeamSonarConfig,
           MsisConfig, DVLConfig, UnderwaterCameraConfig, USBLConfig, LBLConfig, OpticalModemConfig]

#: (scene's backend, sensor's override)
SWAPS = [("embree", "warp"), ("warp", "embree")]

OVERRIDABLE = {
    **SENSORS,
    "imaging_sonar_peer_multipath": lambda: (ImagingSonar(ImagingSonarConfig.preset(
        "oceansim_default", max_range=20.0, n_beams=32, range_bins=64, rays_per_beam=2, elevation_rays=40,
        multipath=True), device="cpu"), POSES),
    "imaging_sonar_device_multipath": lambda: (ImagingSonar(ImagingSonarConfig.preset(
        "blueview_p900", max_range=20.0, n_beams=32, range_bins=64, rays_per_beam=2, elevation_rays=40,
        multipath_bounces=2), device="cpu"), POSES),
    "multibeam_device_multipath": lambda: (MultibeamSonar(MultibeamSonarConfig.preset(
        "blueview_p900", n_beams=32, max_range=20.0, rays_per_beam=40, multipath_bounces=1), device="cpu"), POSES),
    "sidescan_peer_multipath": lambda: (SidescanSonar(SidescanSonarConfig.preset(
        "sidescan_900khz", multipath_bounces=1), device="cpu"), LEVEL),
    "msis": lambda: (Msis(MsisConfig.preset("ping360", max_range=20.0), device="cpu"), LEVEL),
    "dvl": lambda: (DVL(DVLConfig(), device="cpu"), LEVEL),
    "camera": lambda: (UnderwaterCamera(UnderwaterCameraConfig.preset("coastal_with_lights", width=16, height=12),
                                        device="cpu"), POSES),
}


def with_backend(sensor, name: str | None):
    """The same sensor with ``raycast_backend=name``."""
    return type(sensor)(sensor.config.replace(raycast_backend=name), device="cpu")


def spy_casts(s) -> dict[str, list[int]]:
    """Make the scene's warp and embree backend objects (Embree built) and count the rays each casts."""
    casts: dict[str, list[int]] = {}
    for name in ("warp", "embree"):
        backend = s.backend_for(name)
        if name == "embree":
            backend.build()
        log = casts[name] = []

        def counted(origins, directions, max_range, out, threads=None, inner=backend.cast, log=log):
            log.append(origins.shape[0])
            inner(origins, directions, max_range, out, threads)

        backend.cast = counted
    return casts


def render_any(sensor, s, poses):
    if isinstance(sensor, UnderwaterCamera):
        return sensor.render(s, poses)
    return render(sensor, s, poses)


@pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")
@pytest.mark.parametrize("scene_backend, override", SWAPS)
@pytest.mark.parametrize("name", OVERRIDABLE)
def test_sensor_override_casts_through_its_backend(name: str, scene_backend: str, override: str) -> None:
    """Every cast of a sensor with ``raycast_backend`` (primary, bounce, visibility, shadow) goes through that
    backend, none through the scene's; the output is the bytes of the same sensor on a scene whose own choice is
    that backend."""
    sensor, poses = OVERRIDABLE[name]()
    s = scene()
    s.set_raycast_backend(scene_backend)
    casts = spy_casts(s)
    got = arrays(render_any(with_backend(sensor, override), s, poses))
    assert casts[scene_backend] == [] and casts[override], casts
    s.set_raycast_backend(override)
    expected = arrays(render_any(sensor, s, poses))
    assert casts[scene_backend] == []
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert value.tobytes() == got[key].tobytes(), key


@pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")
@pytest.mark.parametrize("scene_backend, override", SWAPS)
def test_positioning_override_casts_through_its_backend(scene_backend: str, override: str) -> None:
    """The USBL's occlusion casts (:func:`~oceansim_py.sensors.acoustic_positioning.blocked`, which the LBL and the
    optical modem share) go through the override: the direct path out and back, and both legs of the surface
    bounce out and back."""
    from test_positioning_multipath import BEACON, HEAD, wall_scene

    s = wall_scene(top=-6.0)
    s.set_raycast_backend(scene_backend)
    casts = spy_casts(s)
    u = USBL(USBLConfig(beacon_positions=(BEACON,), noise=False, surface_multipath=True,
                        raycast_backend=override)).measure(HEAD, scene=s)
    assert u.fix[0, 0] and u.occluded[0, 0]
    assert casts[scene_backend] == [] and len(casts[override]) == 6
    s.set_raycast_backend(override)
    same = USBL(USBLConfig(beacon_positions=(BEACON,), noise=False, surface_multipath=True)).measure(HEAD, scene=s)
    np.testing.assert_array_equal(u.slant_range, same.slant_range)
    assert casts[scene_backend] == []


@pytest.mark.parametrize("config_class", CONFIGS)
def test_bad_backend_names_are_config_errors_naming_the_field(config_class, monkeypatch: pytest.MonkeyPatch) -> None:
    owner = config_class.__name__
    assert config_class().raycast_backend is None
    assert config_class(raycast_backend="warp").raycast_backend == "warp"
    with pytest.raises(ConfigError, match=rf"{owner}\.raycast_backend='optix' is not a ray-cast backend; choose one "
                                          r"of auto, warp, embree"):
        config_class(raycast_backend="optix")

    def no_embreex() -> list[str]:
        raise ImportError("No module named 'embreex'")

    monkeypatch.setattr(rtcore, "_library", None)
    monkeypatch.setattr(rtcore, "_load_error", None)
    monkeypatch.setattr(rtcore, "_candidate_paths", no_embreex)
    with pytest.raises(ConfigError, match=rf"{owner}\.raycast_backend='embree' asks for the embree ray-cast backend: "
                                          r".*pip install 'oceansim_py\[embree\]'"):
        config_class(raycast_backend="embree")
    assert config_class(raycast_backend="auto").raycast_backend == "auto"


@pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")
def test_embree_override_on_a_cuda_scene_is_the_scenes_config_error() -> None:
    class FakeCuda:
        is_cpu = False

        def __str__(self) -> str:
            return "cuda:0"

    s = scene()
    s.device = FakeCuda()
    with pytest.raises(ConfigError, match=r"raycast_backend='embree' casts on the CPU, but the scene is on cuda:0"):
        s.backend_for("embree")


@pytest.mark.skipif(not rtcore.embree_available(), reason="needs the embree extra (embreex)")
def test_scene_keeps_one_backend_per_name_and_set_time_moves_them_all() -> None:
    """``backend_for`` makes one object per backend (the same one from threads asking at once); ``set_time`` refits
    every one made, so both see the door that slides 1 m/s along y (tests/test_raycast_backends.py)."""
    from conftest import run_in_threads
    from test_raycast_backends import _moving_scene

    s = _moving_scene("embree")
    got: dict[int, object] = {}
    run_in_threads(lambda k: got.__setitem__(k, s.backend_for("warp")), 4)
    warp_backend = s.backend_for("warp")
    assert all(b is warp_backend for b in got.values())
    assert s.backend_for(None) is s.backend is s.backend_for("embree") is s.backend_for("auto")
    s.backend.build()
    for t in (0.0, 2.5, 7.75):
        s.set_time(t)
        y0 = -4.0 + t
        for backend in ("warp", "embree"):
            res = s.raycast([[0.0, y0 + 0.5, 0.2], [0.0, y0 + 1.2, 0.0]], [[1.0, 0, 0], [1.0, 0, 0]], 50.0,
                            backend=backend).numpy()
            assert res["distance"][0] == pytest.approx(3.0, abs=1e-6), (backend, t)
            assert s.node(int(res["object"][0])).path == "/World/door"
            assert s.node(int(res["object"][1])).path != "/World/door"
    assert s.backend_for("warp") is warp_backend
