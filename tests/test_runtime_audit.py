"""Runtime audit (oceansim_py/runtime.py and the sensors' memory checks): bad thread counts and device names are
ConfigErrors; impossible range-bin counts and batches are refused by name before anything is allocated; the same
bytes for any thread count and chunking (imaging sonar device preset, camera, DVL)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import warp as wp

import oceansim_py.runtime as rt
from conftest import make_scene, quad
from oceansim_py import (DVL, ConfigError, DVLConfig, ImagingSonar, ImagingSonarConfig, MultibeamSonar,
                         MultibeamSonarConfig, ProfilingSonar,
                         ProfilingSonarConfig, SidescanSonar, SidescanSonarConfig, SinglebeamSonar,
                         SinglebeamSonarConfig, UnderwaterCamera, UnderwaterCameraConfig, pose_from_euler)
from oceansim_py.limits import MAX_RANGE_BINS
from oceansim_py.sensors.acoustic.presets import IMAGING_SONAR_DEVICE_PRESETS
from oceansim_py.sensors.msis import Msis, MsisConfig

GIB = 2**30
IDENTITY = pose_from_euler(0.0, 0.0, 0.0)


@pytest.mark.parametrize("n", [0, -1, 10**6, 2.5, "2", True])
def test_set_cpu_threads_refuses_what_is_not_a_sane_thread_count(n):
    # 10**6 threads would start one persistent thread per chunk of every large launch; 2.5 used to be accepted
    # and fail later inside chunk_bounds with a TypeError, True was taken as 1
    before = rt.cpu_threads()
    with pytest.raises(ConfigError, match=r"set_cpu_threads: n must be an integer in \[1, 1024\]"):
        rt.set_cpu_threads(n)
    assert rt.cpu_threads() == before


def test_oceansim_threads_beyond_the_limit_is_refused(monkeypatch):
    monkeypatch.setenv("OCEANSIM_THREADS", str(10**6))
    rt.set_cpu_threads(None)
    with pytest.raises(ConfigError, match="OCEANSIM_THREADS"):
        rt.cpu_threads()


@pytest.mark.parametrize("device", ["cuda:7", "tpu", "cpu:1", ""])
def test_a_device_that_does_not_exist_is_a_config_error_naming_it(device):
    with pytest.raises(ConfigError, match=f"device {device!r} is not available") as exc:
        ImagingSonar(ImagingSonarConfig(), device=device)
    assert "'cpu'" in str(exc.value)  # lists the devices that exist


@pytest.mark.parametrize("make", [
    lambda n: ImagingSonarConfig(range_bins=n),
    lambda n: ProfilingSonarConfig(range_bins=n),
    lambda n: SidescanSonarConfig(range_bins=n),
    lambda n: SinglebeamSonarConfig(range_bins=n),
    lambda n: MsisConfig(range_bins=n),
])
def test_range_bins_of_1e9_are_refused_by_name(make):
    # were accepted: the sensor then built its range tables on the host (np.arange(1e9) + 0.5: 8 GB of int64
    # and 8 GB of float64, some 20 GB at the peak), a MemoryError or an OOM kill instead of a ConfigError
    with pytest.raises(ConfigError, match=r"range_bins: must be .*16,777,216"):
        make(10**9)
    make(MAX_RANGE_BINS)  # the limit itself is a valid config (nothing is built)


def _refuse_allocation(*args, **kwargs):
    raise AssertionError("allocated before the memory check")


@pytest.mark.parametrize("sensor, batch", [
    # result arrays alone, by hand: profiling 40 B per beam + 16 B per image cell (4 arrays of 4 B):
    # 4096 pings x 192 beams x (40 + 16 x 600 bins) B = 7.6 GB > 0.8 GiB
    (lambda: ProfilingSonar(ProfilingSonarConfig(), device="cpu"), 4096),
    (lambda: SidescanSonar(SidescanSonarConfig(), device="cpu"), 4096),
    (lambda: SinglebeamSonar(SinglebeamSonarConfig(), device="cpu"), 65536),
    # MSIS: 600 bins x 16 B x 2**17 steps = 1.26 GB of results alone
    (lambda: Msis(MsisConfig(), device="cpu"), 2**17),
])
def test_a_huge_batch_is_refused_before_the_result_arrays_are_allocated(sensor, batch, monkeypatch, wall_scene):
    # the profiling sonar and the MSIS allocated their result arrays before the fan / chain checked its scratch
    # (a profiling batch of 100 000 pings was a RuntimeError "Failed to allocate 35760000000 bytes")
    s = sensor()
    monkeypatch.setattr("oceansim_py.runtime.available_memory_bytes", lambda device: GIB)
    for name in ("empty", "zeros", "full", "array"):
        monkeypatch.setattr(wp, name, _refuse_allocation)
    poses = np.tile(np.asarray(IDENTITY, dtype=np.float32), (batch, 1))
    with pytest.raises(ConfigError, match=rf"render of {batch} (pose|step).* would need [0-9.]+ GiB on cpu but only "
                                          r"1.00 GiB is free"):
        s.render(wall_scene, poses)


def _digest(result) -> str:
    h = hashlib.sha256()
    for key, value in sorted(result.numpy().items()):
        if isinstance(value, np.ndarray):
            h.update(key.encode())
            h.update(np.ascontiguousarray(value).tobytes())
    return h.hexdigest()


SENSORS = {
    "imaging_device": lambda: ImagingSonar(ImagingSonarConfig(**IMAGING_SONAR_DEVICE_PRESETS["oculus_m750d"][0]),
                                           device="cpu"),
    "camera": lambda: UnderwaterCamera(UnderwaterCameraConfig(width=96, height=64), device="cpu"),
    "dvl": lambda: DVL(DVLConfig(), device="cpu"),
}


@pytest.mark.parametrize("name", sorted(SENSORS))
def test_same_bytes_for_any_thread_count_and_chunking(name, monkeypatch):
    scene = make_scene(("floor", quad([0.0, 0.0, -3.0], [0.0, 0.0, 1.0], 60.0), 0.3),
                       ("wall", quad([8.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 30.0), 0.6))
    poses = np.array([pose_from_euler(0.0, 15.0 + 3 * k, 5.0 * k) for k in range(2)])
    kwargs = {"velocities": np.tile([0.5, 0.1, 0.0], (2, 1))} if name == "dvl" else {}
    digests = set()
    try:
        for threads, chunks_per_thread in [(1, 4), (2, 4), (2, 1), (3, 4)]:
            rt.set_cpu_threads(threads)
            monkeypatch.setattr(rt, "CHUNKS_PER_THREAD", chunks_per_thread)
            digests.add(_digest(SENSORS[name]().render(scene, poses, frame_index=5, **kwargs)))
    finally:
        rt.set_cpu_threads(None)
    assert len(digests) == 1


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_cpu_free_memory_is_capped_by_the_cgroup_limit(version, tmp_path, monkeypatch):
    # a container limited to 2 GiB on a large host: /proc/meminfo shows the host's memory, so a render of 3 GiB
    # passed the check and was then OOM-killed. By hand: limit 2 GiB - usage 1.5 GiB + inactive cache 0.25 GiB
    # = 0.75 GiB may still be allocated
    limit, usage, cache = 2 * GIB, 3 * GIB // 2, GIB // 4
    files = (tmp_path / "limit", tmp_path / "usage", tmp_path / "stat")
    files[0].write_text(f"{limit}\n")
    files[1].write_text(f"{usage}\n")
    key = "inactive_file" if version == "v2" else "total_inactive_file"
    files[2].write_text(f"active_file 5\n{key} {cache}\nunevictable 0\n")
    entry = (*map(str, files), key)
    monkeypatch.setattr(rt, "CGROUP_MEMORY_FILES", (entry,) if version == "v2" else
                        (("/nonexistent/memory.max", "/nonexistent/memory.current", "/nonexistent/stat", "x"), entry))
    assert rt.available_memory_bytes("cpu") == 3 * GIB // 4  # (the host running the test has more available)
    with pytest.raises(ConfigError, match=r"would need 1.00 GiB on cpu but only 0.75 GiB is free"):
        rt.check_memory(GIB, "cpu", "a render", "render less")
    files[0].write_text("max\n" if version == "v2" else f"{2**63 - 4096}\n")  # no limit: the host's memory
    assert rt.available_memory_bytes("cpu") > 3 * GIB // 4


def test_one_ping_past_the_launch_index_limit_says_what_to_lower(wall_scene):
    # 10**6 range bins x 4096 beams = 4 096 000 000 cells >= 2^31 = 2 147 483 648 for a single pose: "render fewer
    # poses at once" (the old advice) cannot help
    sonar = ImagingSonar(ImagingSonarConfig(range_bins=10**6, n_beams=4096), device="cpu")
    with pytest.raises(ConfigError, match=r"would index 4096000000 rays or bins, past the 2\^31 limit of a launch; "
                                          r"lower rays_per_beam, elevation_rays, n_beams or range_bins$"):
        sonar.render(wall_scene, IDENTITY)


@pytest.mark.parametrize("make", [
    lambda: UnderwaterCamera(UnderwaterCameraConfig(width=8, height=8), device="cpu"),
    lambda: ImagingSonar(ImagingSonarConfig(), device="cpu"),
    lambda: MultibeamSonar(MultibeamSonarConfig(max_range=10.0), device="cpu"),
])
def test_out_of_another_type_is_a_config_error(make, wall_scene):
    # was AttributeError ('ImagingSonarResult' object has no attribute 'rgb') for the camera; a dict the same
    sensor = make()
    for wrong in ({"intensity": None}, DVL(DVLConfig(), device="cpu").render(wall_scene, IDENTITY,
                                                                             velocities=[0.0, 0.0, 0.0])):
        with pytest.raises(ConfigError, match=r"\.render: out must be a \w+Result returned by an earlier render"):
            sensor.render(wall_scene, IDENTITY, out=wrong)
