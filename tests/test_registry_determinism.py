"""Determinism of every registered sensor kind, through the registry's own render path (``SensorKind.render`` with
a :class:`~oceansim_py.sensors.registry.Batch`, as ``generate`` calls it): a batch of 3 poses on 2 threads gives
the same bytes as each pose alone on 1 thread (frame index first + i), a different frame index at the same pose
changes the noisy products, and the warp and embree backends give the same bytes on the tank scene. The configs
are the small ones of the golden, navigation and MSIS dataset tests."""

from __future__ import annotations

import dataclasses
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import oceansim_py as osp
from oceansim_py.errors import ConfigError
from oceansim_py.poses import compose_poses, pose_from_euler
from oceansim_py.runtime import set_cpu_threads
from oceansim_py.sensors import registry
from oceansim_py.sensors.registry import Batch
from oceansim_py.trajectory import Trajectory

sys.path.insert(0, str(Path(__file__).parent))
from test_golden_outputs import RIG as GOLDEN_RIG  # noqa: E402
from test_msis import DATASET_CONFIG as MSIS_CONFIG  # noqa: E402
from test_navsensors_dataset import RIG as NAV_RIG  # noqa: E402

SPECS = [*GOLDEN_RIG["sensors"], *[s for s in NAV_RIG["sensors"] if s["type"] != "dvl"],
         {"name": "head", "type": "msis", "rate_hz": 20.0, "config": MSIS_CONFIG}]

#: Products a frame index must change at a fixed pose (their noise is on in these configs; their 8-bit views, the
#: MSIS head angle and step change too). Clean / true products, labels and hit counts must not change; the camera
#: (clear_ocean_sunlit), profiling (holoocean_default) and pose configs have their noise off; gps is underwater
#: here (no fix, NaN).
NOISY = {"imaging_sonar": {"intensity"}, "multibeam": {"time_series", "intensity", "db"},
         "sidescan": {"intensity", "ground_intensity"}, "singlebeam": {"intensity", "first_return_range"},
         "dvl": {"velocity", "altitude", "beam_range", "beam_velocity"}, "imu": {"accel", "gyro"},
         "barometer": {"pressure", "depth"}, "magnetometer": {"field"},
         "usbl": {"slant_range", "bearing", "elevation", "position"}, "lbl": {"range"}, "msis": {"intensity"}}

TIMES = np.array([0.5, 1.0, 1.5])
POSES = np.stack([compose_poses(np.array([-0.5 + 0.3 * b, 0.1 * b, -1.5, 0, 0, 0, 1.0]),
                                pose_from_euler(0, 0, 0, 5.0 * b, 20.0, 10.0 * b)) for b in range(3)])


@pytest.fixture(scope="module")
def tank():
    return osp.load_scene("tank", device="cpu")


def render(kind, sensor, config, spec, scene, rows: slice, frame_index: int) -> dict[str, np.ndarray]:
    own = Trajectory.transect([-1, 0, -1.5], [1.5, 0, -1.5], 0.5).mounted(np.array([0, 0, 0, 0, 0, 0, 1.0])) \
        if kind.uses_trajectory else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = kind.render(sensor, Batch(scene, POSES[rows], TIMES[rows], frame_index, own, rate_hz=spec["rate_hz"]))
    return kind.products_of(result, config, list(spec.get("products", kind.default_products)))


def as_bytes(value) -> bytes:
    return b"".join(np.asarray(v).tobytes() for v in value) if value.dtype == object else value.tobytes()


@pytest.mark.parametrize("spec", SPECS, ids=[s["type"] for s in SPECS])
def test_batch_threads_frame_index_and_backends(spec, tank) -> None:
    kind = registry.get(spec["type"])
    config = kind.make_config({**({"preset": spec["preset"]} if "preset" in spec else {}), **spec.get("config", {})},
                              spec["name"])
    sensor = kind.make_sensor(config, device="cpu")
    try:
        set_cpu_threads(2)
        batch = render(kind, sensor, config, spec, tank, slice(0, 3), 7)
        set_cpu_threads(1)
        singles = [render(kind, sensor, config, spec, tank, slice(b, b + 1), 7 + b) for b in range(3)]
    finally:
        set_cpu_threads(None)
    assert batch
    differ = [(name, b) for name, arr in batch.items() for b in range(3)
              if as_bytes(arr[b:b + 1]) != as_bytes(singles[b][name])]
    assert differ == []

    later = render(kind, sensor, config, spec, tank, slice(1, 2), 9)   # singles[1] is frame 8
    changed = {name for name, arr in singles[1].items() if as_bytes(arr) != as_bytes(later[name])}
    assert NOISY.get(kind.name, set()) & set(batch) <= changed
    assert {name for name in changed if name.startswith(("clean", "true", "label", "hit_count"))} == set()

    if "raycast_backend" in {f.name for f in dataclasses.fields(config)}:
        try:
            embree = config.replace(raycast_backend="embree")
        except ConfigError:
            pytest.skip("embree is not available")
        warp = config.replace(raycast_backend="warp")
        a = render(kind, kind.make_sensor(warp, device="cpu"), warp, spec, tank, slice(0, 3), 7)
        b = render(kind, kind.make_sensor(embree, device="cpu"), embree, spec, tank, slice(0, 3), 7)
        assert [name for name in a if as_bytes(a[name]) != as_bytes(b[name])] == []


BAD_POSES = {"nan position": [np.nan, 0, -1.5, 0, 0, 0, 1], "inf position": [0, np.inf, -1.5, 0, 0, 0, 1],
             "nan quaternion": [0, 0, -1.5, 0, np.nan, 0, 1], "zero quaternion": [0, 0, -1.5, 0, 0, 0, 0]}


@pytest.mark.parametrize("spec", SPECS, ids=[s["type"] for s in SPECS])
def test_non_finite_poses_and_zero_quaternions_are_refused(spec, tank) -> None:
    """Kinds rendering the batch's poses refuse a bad one; kinds rendering their own trajectory (IMU, positioning,
    modems) get it from a Trajectory, which refuses the same poses."""
    kind = registry.get(spec["type"])
    for label, pose in BAD_POSES.items():
        message = "non-finite" if "nan" in label or "inf" in label else "quaternion of norm 0"
        if kind.uses_trajectory:
            with pytest.raises(ConfigError, match=message):
                Trajectory(np.array([0.0, 1.0]), np.array([pose, pose], dtype=float))
            continue
        config = kind.make_config({**({"preset": spec["preset"]} if "preset" in spec else {}),
                                   **spec.get("config", {})}, spec["name"])
        sensor = kind.make_sensor(config, device="cpu")
        with pytest.raises(ConfigError, match=message):
            kind.render(sensor, Batch(tank, np.array([pose], dtype=float), TIMES[:1], 0, None, rate_hz=spec["rate_hz"]))
