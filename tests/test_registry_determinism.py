"""Determinism of every registered sensor kind, through the registry's own render path (``SensorKind.render`` with
a :class:`~oceansim_py.sensors.registry.Batch`, as ``generate`` calls it): a batch of 3 poses on 2 threads gives
the same bytes as each pose alone on 1 thread (frame index first + i); a different frame index at the same pose
changes the noisy products, and so does another sensor id (two sensors of one rig sharing a seed); the warp and
embree backends give the same bytes on the tank scene. The configs are the small ones of the golden, navigation
and MSIS dataset tests, plus noise-on and device-chain variants (:data:`NOISE_ON`)."""

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

#: Noise on where the dataset tests' presets have it off, and the device chain where they run the peer model;
#: ``noisy``: the products a frame index must change.
NOISE_ON = [
    {"name": "cam_noise", "type": "camera", "preset": "clear_ocean_sunlit", "rate_hz": 2.0,
     "config": {"width": 16, "height": 12, "noise": True}, "products": ["rgb_png", "raw", "linear"],
     "noisy": {"rgb_png", "raw"}},
    {"name": "mocap", "type": "pose", "preset": "mocap", "rate_hz": 2.0, "products": ["matrix", "true_matrix"],
     "noisy": {"matrix"}},
    {"name": "swath_noise", "type": "profiling", "preset": "holoocean_default", "rate_hz": 2.0,
     "config": {"n_beams": 8, "max_range": 5.0, "range_bins": 50, "range_noise": 0.05, "angle_noise": 0.5,
                "multiplicative_sigma": 0.1, "additive_sigma": 0.01},
     "noisy": {"bottom_range", "point_world", "intensity"}},
    {"name": "mbes_device", "type": "multibeam", "preset": "blueview_p900", "rate_hz": 2.0,
     "config": {"n_beams": 16, "max_range": 4.0, "rays_per_beam": 3}, "products": ["time_series", "intensity", "db"],
     "noisy": {"time_series", "intensity", "db"}},
    {"name": "fls_device", "type": "imaging_sonar", "preset": "oculus_m750d", "rate_hz": 2.0,
     "config": {"max_range": 6.0, "n_beams": 32, "range_bins": 48}, "products": ["intensity", "clean_intensity"],
     "noisy": {"intensity"}},
]
SPECS = [*GOLDEN_RIG["sensors"], *[s for s in NAV_RIG["sensors"] if s["type"] != "dvl"],
         {"name": "head", "type": "msis", "rate_hz": 20.0, "config": MSIS_CONFIG}, *NOISE_ON]
IDS = [s["name"] if "noisy" in s else s["type"] for s in SPECS]

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


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
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
    assert spec.get("noisy", NOISY.get(kind.name, set())) & set(batch) <= changed
    assert {name for name in changed if name.startswith(("clean", "true", "label", "hit_count"))} == set()
    other = render(kind, kind.make_sensor(config, device="cpu", sensor_id=1), config, spec, tank, slice(1, 2), 8)
    assert spec.get("noisy", NOISY.get(kind.name, set())) & set(batch) <= \
        {name for name, arr in singles[1].items() if as_bytes(arr) != as_bytes(other[name])}   # the sensor id keys it

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


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
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
