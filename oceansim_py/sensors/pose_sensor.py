"""Pose sensor (docs/PHYSICS.md §6, holoocean-2022 eq. 8): the sensor's world pose as a 4x4 SE(3) matrix
``[[R, t], [0, 1]]`` (R rotates sensor-frame FLU vectors into the world, t in metres), for ground truth, with
optional noise: ``t + N(0, position_sigma^2 I)`` and ``R exp([N(0, rotation_sigma^2 I)]x)`` (a small rotation
about a random sensor-frame axis).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from oceansim_py.io.config import ConfigBase, require_non_negative, require_positive, require_seed
from oceansim_py.poses import matmul_fixed, pose_to_matrix, quat_to_matrix
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.nav_common import HostResult, NavSensor
from oceansim_py.trajectory import rotvec_to_quat

_OWNER = "PoseSensorConfig"
_POSITION, _ROTATION = 0, 1


@dataclasses.dataclass(frozen=True)
class PoseSensorConfig(ConfigBase):
    """rate: Hz (when measuring a Trajectory without explicit times). position_sigma: m. rotation_sigma: deg.
    noise: False gives the exact pose. seed: run seed. Default: noise-free ground truth."""

    rate: float = 30.0
    position_sigma: float = 0.0
    rotation_sigma: float = 0.0
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "ground_truth": {},
        # A motion-capture-like reference: 1 mm and 0.1 deg.
        "mocap": {"rate": 100.0, "position_sigma": 0.001, "rotation_sigma": 0.1},
    }

    def validate(self) -> None:
        require_positive(self.rate, _OWNER, "rate", "Hz")
        require_non_negative(self.position_sigma, _OWNER, "position_sigma", "m")
        require_non_negative(self.rotation_sigma, _OWNER, "rotation_sigma", "deg")
        require_seed(self.seed, _OWNER)


@dataclasses.dataclass
class PoseSensorResult(HostResult):
    """matrix: (N, 4, 4) measured SE(3) poses. true_matrix: (N, 4, 4) exact. times: (N,) s or ``None``."""

    matrix: np.ndarray
    true_matrix: np.ndarray
    times: np.ndarray | None
    frame_index: int


class PoseSensor(NavSensor):
    """Ground-truth pose as SE(3) matrices. ``sensor_id`` separates the noise of several sensors."""

    config_class = PoseSensorConfig

    def measure(self, source: Any, times: Any = None, frame_index: int = 0) -> PoseSensorResult:
        """Poses of a Trajectory's samples (at ``times`` or every 1 / rate) or of poses (7,) / (B, 7)."""
        fi, s = self.samples(source, times, frame_index)
        c = self.config
        true = pose_to_matrix(s.poses)
        m = true.copy()
        if c.noise and (c.position_sigma > 0 or c.rotation_sigma > 0):
            frames = fi + np.arange(m.shape[0])
            m[:, :3, 3] += c.position_sigma * host_noise.gaussian(c.seed, self.sensor_id, _POSITION, frames, 3)
            rv = math.radians(c.rotation_sigma) * host_noise.gaussian(c.seed, self.sensor_id, _ROTATION, frames, 3)
            m[:, :3, :3] = matmul_fixed(m[:, :3, :3], quat_to_matrix(rotvec_to_quat(rv)))
        return PoseSensorResult(m, true, s.times, fi)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

SENSOR_KIND = _reg.SensorKind(
    name="pose", description="pose sensor: the sensor-to-world transform with noise (ground truth + error)",
    config_class=PoseSensorConfig, sensor_class=PoseSensor,
    build=lambda config, device, sensor_id: PoseSensor(config, sensor_id=sensor_id),
    render=lambda sensor, batch: sensor.measure(batch.poses, frame_index=batch.frame_index),
    schema=(
        _reg.Product("matrix", _reg.TABLE, "float64", "SE(3) sensor-to-world matrix, translation in m", (4, 4),
                     frame="world"),
        _reg.Product("true_matrix", _reg.TABLE, "float64", "SE(3) sensor-to-world matrix (exact), m", (4, 4),
                     frame="world"),
    ),
    default_products=("matrix",),
)
