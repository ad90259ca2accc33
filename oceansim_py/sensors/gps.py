"""GPS near the surface (docs/PHYSICS.md §6, holoocean-2022 eq. 7): ``z = p + N(0, diag(sh^2, sh^2, sv^2))`` in the
world frame (metres; this library's world is a local metric frame, not latitude/longitude), received only when
the antenna's depth ``z_s - z`` is at most ``d``, where ``d ~ N(depth_threshold, depth_threshold_sigma^2)`` is
drawn per sample (``depth_threshold_sigma = 0``: fixed). Without a fix the position is NaN and ``fix`` false.

``z_s`` is the instantaneous sea surface above the antenna: ``scene.surface_height(xy, t)`` (the moving sea
surface's elevation at the sample's time when the scene has one, else the flat ``surface_z``), or the flat
``surface_z`` argument when given. A GPS antenna washed over by a wave crest loses the fix (L-band does not
penetrate sea water), so with a moving sea ``depth_threshold`` can be 0.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from oceansim_py.io.config import ConfigBase, require_non_negative, require_positive, require_seed
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.nav_common import HostResult, NavSensor, instantaneous_surface, measure_poses

_OWNER = "GPSConfig"
_POSITION, _THRESHOLD = 0, 1


@dataclasses.dataclass(frozen=True)
class GPSConfig(ConfigBase):
    """GPS parameters.

    rate: Hz (when measuring a Trajectory without explicit times). horizontal_sigma / vertical_sigma: m per
    sample. depth_threshold: m, deepest antenna depth with a fix. depth_threshold_sigma: m, per-sample spread of
    that threshold. noise: False turns all randomness off (fixed threshold, exact positions). seed: run seed.
    """

    rate: float = 5.0
    horizontal_sigma: float = 2.0
    vertical_sigma: float = 3.0
    depth_threshold: float = 0.5
    depth_threshold_sigma: float = 0.0
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Stand-alone receiver: 2.5 m CEP horizontal (u-blox NEO-M8 class) ~ 2.1 m 1-sigma per axis.
        "standalone": {"horizontal_sigma": 2.1, "vertical_sigma": 3.5},
        # RTK fix: 0.01 m + 1 ppm CEP (u-blox ZED-F9P class), vertical about twice the horizontal.
        "rtk": {"horizontal_sigma": 0.01, "vertical_sigma": 0.02},
        # HoloOcean's "within a depth d of the surface, d random": a 0.5 m mast with 0.1 m spread.
        "wave_washed": {"depth_threshold": 0.5, "depth_threshold_sigma": 0.1},
    }

    def validate(self) -> None:
        require_positive(self.rate, _OWNER, "rate", "Hz")
        for name in ("horizontal_sigma", "vertical_sigma", "depth_threshold", "depth_threshold_sigma"):
            require_non_negative(getattr(self, name), _OWNER, name, "m")
        require_seed(self.seed, _OWNER)


@dataclasses.dataclass
class GPSResult(HostResult):
    """position: (N, 3) world metres, NaN without a fix. fix: (N,) bool. depth: (N,) true antenna depth (m,
    negative above the surface). threshold: (N,) the depth threshold used per sample (m). times: (N,) s or
    ``None``."""

    position: np.ndarray
    fix: np.ndarray
    depth: np.ndarray
    threshold: np.ndarray
    times: np.ndarray | None
    frame_index: int


class GPS(NavSensor):
    """A GPS receiver that only has a fix near the surface. ``sensor_id`` separates the noise of several
    receivers sharing a seed."""

    config_class = GPSConfig

    def measure(self, source: Any, times: Any = None, scene: Any = None, surface_z: float | None = None,
                frame_index: int = 0) -> GPSResult:
        """Fixes at a Trajectory's samples (at ``times`` or every 1 / rate) or at poses (7,) / (B, 7)."""
        fi, s = self.samples(source, times, frame_index)
        c = self.config
        pos = s.poses[:, :3].copy()
        depth = instantaneous_surface(surface_z, scene, pos[:, :2], s.times) - pos[:, 2]
        n = pos.shape[0]
        frames = fi + np.arange(n)
        threshold = np.full(n, c.depth_threshold)
        if c.noise:
            threshold = threshold + c.depth_threshold_sigma * host_noise.gaussian(
                c.seed, self.sensor_id, _THRESHOLD, frames, 1)[:, 0]
            sig = np.array([c.horizontal_sigma, c.horizontal_sigma, c.vertical_sigma])
            pos = pos + sig * host_noise.gaussian(c.seed, self.sensor_id, _POSITION, frames, 3)
        fix = depth <= threshold
        pos[~fix] = np.nan
        return GPSResult(pos, fix, depth, threshold, s.times, fi)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

SENSOR_KIND = _reg.SensorKind(
    name="gps", description="GPS receiver: a fix only near the surface",
    config_class=GPSConfig, sensor_class=GPS,
    build=lambda config, device, sensor_id: GPS(config, sensor_id=sensor_id), render=measure_poses,
    schema=(
        _reg.Product("position", _reg.TABLE, "float64", "m, world frame Z up (NaN without a fix)", (3,),
                     frame="world"),
        _reg.Product("fix", _reg.TABLE, "int8", "flag 1/0"),
        _reg.Product("depth", _reg.TABLE, "float64", "m, true antenna depth (negative above the surface)"),
        _reg.Product("threshold", _reg.TABLE, "float64", "m, fix depth threshold"),
    ),
    default_products=("position", "fix"),
)
