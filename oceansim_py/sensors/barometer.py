"""Barometer / depth sensor (docs/PHYSICS.md §6; OceanSim's barometer, holoocean-2022 eq. 6):

    P = P_atm + rho g max(0, z_s - z) + N(0, sigma^2)      (Pa)

with ``z_s`` the sea-surface height (``scene.surface_z``, default 0) and ``z`` the sensor's world height.
The depth it reports is the noisy pressure converted back, ``(P - P_atm) / (rho g)`` (m, may be slightly
negative at the surface from noise); the true depth is returned as ground truth.

Under a scene's moving sea surface (``Scene.add_sea_surface``) the pressure is what a real sensor measures under
waves, linear wave theory's (Dean & Dalrymple 1991, eq. 4.26; ``SeaSurface.pressure_head``):

    P = P_atm + rho g [ (z_0 - z) + sum_i A_i K_i(z) cos(k_i . x - omega_i t + phi_i) ],   K_i = exp(-k_i (z_0 - z))

(deep water; ``cosh`` ratio in finite depth), z_0 the mean surface: each wave's pressure is attenuated with
depth, so a sensor well below the surface reads its depth below the *mean* surface, one at the surface the wave
above it. ``true_depth`` is then the geometric depth below the instantaneous surface,
``max(0, eta(x, t) - z)``, and the reported depth (from pressure) differs from it by the attenuated waves.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from oceansim_py.io.config import ConfigBase, require_non_negative, require_positive, require_seed
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.imu import STANDARD_GRAVITY
from oceansim_py.sensors.nav_common import HostResult, NavSensor, instantaneous_surface, measure_poses, pressure_head

_OWNER = "BarometerConfig"


@dataclasses.dataclass(frozen=True)
class BarometerConfig(ConfigBase):
    """Barometer parameters.

    rate: Hz (when measuring a Trajectory without explicit times). atmospheric_pressure: Pa. water_density:
    kg/m^3. gravity: m/s^2. noise_sigma: Pa per sample. noise: False turns the noise off. seed: run seed.
    """

    rate: float = 10.0
    atmospheric_pressure: float = 101325.0
    water_density: float = 1025.0
    gravity: float = STANDARD_GRAVITY
    noise_sigma: float = 20.0
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Sea water (1025 kg/m^3); 20 Pa = 0.2 mbar, the resolution of the MS5837-30BA sensor of the Blue
        # Robotics Bar30 (about 2 mm of water).
        "bar30": {"rate": 10.0, "water_density": 1025.0, "noise_sigma": 20.0},
        # Fresh water (tanks, lakes).
        "freshwater": {"water_density": 997.0},
    }

    def validate(self) -> None:
        require_positive(self.rate, _OWNER, "rate", "Hz")
        require_non_negative(self.atmospheric_pressure, _OWNER, "atmospheric_pressure", "Pa")
        require_positive(self.water_density, _OWNER, "water_density", "kg/m^3")
        require_positive(self.gravity, _OWNER, "gravity", "m/s^2")
        require_non_negative(self.noise_sigma, _OWNER, "noise_sigma", "Pa")
        require_seed(self.seed, _OWNER)


@dataclasses.dataclass
class BarometerResult(HostResult):
    """pressure: (N,) Pa. depth: (N,) m from the measured pressure. true_depth: (N,) m, ``max(0, z_s - z)`` (z_s the
    instantaneous surface above the sensor).
    times: (N,) s or ``None`` for bare poses."""

    pressure: np.ndarray
    depth: np.ndarray
    true_depth: np.ndarray
    times: np.ndarray | None
    frame_index: int


class Barometer(NavSensor):
    """A pressure / depth sensor. ``sensor_id`` separates the noise of several sensors sharing a seed."""

    config_class = BarometerConfig

    def measure(self, source: Any, times: Any = None, scene: Any = None, surface_z: float | None = None,
                frame_index: int = 0) -> BarometerResult:
        """Pressure at a Trajectory's samples (at ``times`` or every 1 / rate) or at poses (7,) / (B, 7).
        The surface is ``surface_z`` if given, else ``scene.surface_z``, else 0."""
        fi, s = self.samples(source, times, frame_index)
        c = self.config
        xyz = s.poses[:, :3]
        depth = np.maximum(0.0, instantaneous_surface(surface_z, scene, xyz[:, :2], s.times) - xyz[:, 2])
        rho_g = c.water_density * c.gravity
        p = c.atmospheric_pressure + rho_g * pressure_head(surface_z, scene, xyz, s.times)
        if c.noise and c.noise_sigma > 0:
            p = p + c.noise_sigma * host_noise.gaussian(c.seed, self.sensor_id, 0, fi + np.arange(p.size), 1)[:, 0]
        return BarometerResult(p, (p - c.atmospheric_pressure) / rho_g, depth, s.times, fi)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

SENSOR_KIND = _reg.SensorKind(
    name="barometer", description="pressure / depth sensor",
    config_class=BarometerConfig, sensor_class=Barometer,
    build=lambda config, device, sensor_id: Barometer(config, sensor_id=sensor_id), render=measure_poses,
    schema=(
        _reg.Product("pressure", _reg.TABLE, "float64", "Pa (absolute)"),
        _reg.Product("depth", _reg.TABLE, "float64", "m below the surface, from the measured pressure"),
        _reg.Product("true_depth", _reg.TABLE, "float64", "m below the surface (exact)"),
    ),
    default_products=("pressure", "depth", "true_depth"),
)
