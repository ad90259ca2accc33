"""One sensor object rendering from several threads at once gives exactly what sequential renders give."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable

import numpy as np
import pytest
import warp as wp

import oceansim_py as osp
from oceansim_py.poses import compose_poses, pose_from_euler
from oceansim_py.sensors.barometer import Barometer, BarometerConfig
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig
from oceansim_py.sensors.dvl import DVL, DVLConfig
from oceansim_py.sensors.gps import GPS, GPSConfig
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.imu import IMU, IMUConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.pose_sensor import PoseSensor, PoseSensorConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig
from oceansim_py.trajectory import Trajectory

THREADS = 4
RENDERS_PER_THREAD = 3
BATCH = 2


@pytest.fixture(scope="module")
def tank() -> Any:
    return osp.load_scene("tank", device="cpu")


def arrays(result: Any) -> dict[str, np.ndarray]:
    """Host copies of every array field of a sensor result (Warp arrays and numpy arrays)."""
    out = {}
    for f in dataclasses.fields(result):
        v = getattr(result, f.name)
        if isinstance(v, wp.array):
            out[f.name] = v.numpy().copy()
        elif isinstance(v, np.ndarray):
            out[f.name] = v.copy()
    assert out, f"{type(result).__name__} holds no arrays"
    return out


def job_poses(base: np.ndarray, job: int) -> np.ndarray:
    """BATCH poses for job ``job``: each job looks from its own place (2 cm and 3 deg of yaw apart)."""
    return np.stack([compose_poses(base, pose_from_euler(0.02 * (job * BATCH + b), 0.0, 0.0, 0.0, 0.0,
                                                         3.0 * (job * BATCH + b))) for b in range(BATCH)])


def trajectory_for(base: np.ndarray, job: int) -> Trajectory:
    start = job_poses(base, job)[0]
    end = compose_poses(start, pose_from_euler(1.0, 0.2, -0.1, 0.0, 0.0, 20.0))
    return Trajectory([0.0, 0.5 + 0.1 * job], [start, end])


def render_fn(kind: str, scene: Any) -> Callable[[int], Any]:
    """A function of the job number that renders one batch with ONE shared sensor object of ``kind``."""
    base = scene.suggested_pose
    if kind == "imaging_sonar":
        s = ImagingSonar(ImagingSonarConfig(max_range=6.0, n_beams=48, range_bins=64, rays_per_beam=2,
                                            elevation_rays=16), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), frame_index=10 * j)
    if kind == "imaging_sonar_device":
        s = ImagingSonar(ImagingSonarConfig(model="device", max_range=6.0, n_beams=48, range_bins=64,
                                            rays_per_beam=2, elevation_rays=16), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), frame_index=10 * j)
    if kind == "sidescan_device":
        s = SidescanSonar(SidescanSonarConfig(model="device", range_bins=64, max_range=10.0), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), frame_index=10 * j)
    if kind == "multibeam":
        s = MultibeamSonar(MultibeamSonarConfig(n_beams=48, fov=60.0, beam_width=2.0, rays_per_beam=4,
                                                bandwidth=30e3, max_range=6.0), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), frame_index=10 * j)
    if kind == "sidescan":
        s = SidescanSonar(SidescanSonarConfig(range_bins=64, max_range=10.0), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), frame_index=10 * j)
    if kind == "profiling":
        s = ProfilingSonar(ProfilingSonarConfig(n_beams=32, range_bins=64, max_range=10.0), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), frame_index=10 * j)
    if kind == "singlebeam":
        s = SinglebeamSonar(SinglebeamSonarConfig(range_bins=64, max_range=10.0), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), frame_index=10 * j)
    if kind == "camera":
        s = UnderwaterCamera(UnderwaterCameraConfig(width=24, height=16), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), frame_index=10 * j)
    if kind == "dvl":
        s = DVL(DVLConfig(), device="cpu")
        return lambda j: s.render(scene, job_poses(base, j), velocities=[0.5, 0.1 * j, 0.0], frame_index=10 * j)
    if kind == "imu":
        s = IMU(IMUConfig())
        return lambda j: s.measure(trajectory_for(base, j), frame_index=10 * j)
    if kind == "barometer":
        s = Barometer(BarometerConfig())
        return lambda j: s.measure(job_poses(base, j), scene=scene, frame_index=10 * j)
    if kind == "gps":
        s = GPS(GPSConfig(depth_threshold=100.0))
        return lambda j: s.measure(job_poses(base, j), scene=scene, frame_index=10 * j)
    if kind == "pose":
        s = PoseSensor(PoseSensorConfig())
        return lambda j: s.measure(job_poses(base, j), frame_index=10 * j)
    raise AssertionError(kind)


KINDS = ["imaging_sonar", "imaging_sonar_device", "sidescan_device", "multibeam", "sidescan", "profiling", "singlebeam", "camera", "dvl", "imu", "barometer",
         "gps", "pose"]


@pytest.mark.parametrize("kind", KINDS)
def test_concurrent_renders_with_one_sensor_equal_sequential_renders(kind: str, tank: Any) -> None:
    render = render_fn(kind, tank)
    jobs = THREADS * RENDERS_PER_THREAD
    expected = [arrays(render(j)) for j in range(jobs)]  # sequential, one at a time
    assert any(not np.array_equal(a, b) for a, b in zip(expected[0].values(), expected[1].values())), \
        "the jobs must differ, or a mix-up could not be seen"
    results: dict[int, Any] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def worker(t: int) -> None:
        try:
            start.wait()
            for r in range(RENDERS_PER_THREAD):
                j = r * THREADS + t
                results[j] = render(j)  # kept: a later render must not overwrite what this one returned
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for j in range(jobs):
        got = arrays(results[j])
        assert got.keys() == expected[j].keys()
        for name, want in expected[j].items():
            np.testing.assert_array_equal(got[name], want, err_msg=f"{kind} job {j}: {name}")


def test_scratch_cache_is_per_thread_and_bounded() -> None:
    from oceansim_py.sensors.scratch import ScratchCache

    cache: ScratchCache[list] = ScratchCache(2)
    mine = cache.get_or_make(4, list)
    assert cache.get_or_make(4, list) is mine and len(cache) == 1
    seen: list[Any] = []
    th = threading.Thread(target=lambda: seen.extend([cache.get(4), cache.get_or_make(4, list), len(cache)]))
    th.start()
    th.join()
    assert seen[0] is None and seen[1] is not mine and seen[2] == 1  # another thread gets its own
    cache.put(1, [])
    cache.put(2, [])  # the oldest entry (4) is dropped
    assert cache.get(4) is None and len(cache) == 2
