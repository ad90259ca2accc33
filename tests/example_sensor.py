"""A small sensor that is not part of the package: a horizontal fan of range-finder rays. It is the worked example
of docs/ARCHITECTURE.md ("How to add a sensor"): this one module (config, sensor, result, and the
``SENSOR_KIND`` declaration at its end) is all it takes for ``oceansim-py render rangefinder`` to render it,
``generate`` to write it and the dataset loader to read it back (tests/test_sensor_registry.py).

Geometry: ``n_rays`` rays in the sensor's x-y plane (FLU), evenly spread over ``fov`` degrees centred on the +x
boresight, ray 0 the most port (bearing ``-fov/2``, positive to starboard as every sonar here). Each returns the
distance (m) to its first hit within ``max_range`` (NaN for a miss) and the hit's label index (-1 for a miss).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from oceansim_py.io.config import ConfigBase, require, require_positive
from oceansim_py.poses import as_poses, quat_to_matrix, rotate_fixed
from oceansim_py.sensors import registry


@dataclasses.dataclass(frozen=True)
class RangefinderConfig(ConfigBase):
    """n_rays: rays in the fan; fov: fan width (degrees); max_range: farthest hit reported (m)."""

    n_rays: int = 16
    fov: float = 60.0
    max_range: float = 20.0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"narrow": {"n_rays": 8, "fov": 20.0}}

    def validate(self) -> None:
        require(isinstance(self.n_rays, int) and self.n_rays >= 1, "RangefinderConfig", "n_rays", "must be >= 1")
        require(0.0 < self.fov < 180.0, "RangefinderConfig", "fov", "must be in (0, 180) degrees")
        require_positive(self.max_range, "RangefinderConfig", "max_range", "m")

    def bearings(self) -> np.ndarray:
        """(n_rays,) ray bearings (rad), most port first, positive to starboard."""
        half = math.radians(self.fov) / 2
        return np.linspace(-half, half, self.n_rays) if self.n_rays > 1 else np.zeros(1)

    def memory_bytes(self, batch: int = 1) -> int:
        return 64 * self.n_rays * batch


@dataclasses.dataclass
class RangefinderResult:
    """range (B, n_rays) m (NaN miss), label (B, n_rays) int32 (-1 miss), hit_count (B,) int32."""

    range: np.ndarray
    label: np.ndarray

    def numpy(self) -> dict[str, np.ndarray]:
        return {"range": self.range.copy(), "label": self.label.copy(),
                "hit_count": np.isfinite(self.range).sum(axis=1).astype(np.int32)}


class Rangefinder:
    """Renders a batch of (B, 7) world poses with one ray cast through ``scene.raycast``."""

    def __init__(self, config: RangefinderConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        self.config = config or RangefinderConfig()

    def render(self, scene: Any, poses: Any, frame_index: int = 0) -> RangefinderResult:
        p = as_poses(poses).astype(np.float64)
        b = self.config.bearings()
        local = np.stack([np.cos(b), -np.sin(b), np.zeros_like(b)], axis=1)        # starboard = -y (FLU)
        dirs = rotate_fixed(quat_to_matrix(p[:, None, 3:]), local[None, :, :])       # (B, n, 3) world
        origins = np.repeat(p[:, None, :3], b.size, axis=1)
        hit = scene.raycast(origins.reshape(-1, 3), dirs.reshape(-1, 3), self.config.max_range).numpy()
        shape = (p.shape[0], b.size)
        found = hit["face"].reshape(shape) >= 0
        distance = np.where(found, hit["distance"].reshape(shape), np.nan).astype(np.float32)
        node = np.maximum(hit["object"].reshape(shape), 0)
        labels = np.where(found, scene.node_label_ids[node], -1).astype(np.int32)
        return RangefinderResult(distance, labels)


# --- the registry declaration: everything else is derived from it -------------------------------------------------
SENSOR_KIND = registry.SensorKind(
    name="rangefinder", description="a horizontal fan of range-finder rays (the worked example of ARCHITECTURE.md)",
    config_class=RangefinderConfig, sensor_class=Rangefinder,
    schema=(
        registry.Product("range", registry.ARRAY, "float32", "m along each ray (NaN without a hit)", ("n_rays",)),
        registry.Product("label", registry.ARRAY, "int32", "index into the scene's labels (-1 without a hit)",
                         ("n_rays",)),
        registry.Product("hit_count", registry.TABLE, "int32", "count of rays that hit"),
    ),
    default_products=("range", "hit_count"),
    metadata=lambda c: {"bearings_rad": c.bearings().tolist()},
    cli=registry.CliTarget(help="a fan of range-finder rays: ranges and labels as .npy", framing="camera",
                           reach=lambda c: (c.max_range, c.fov)),
)
