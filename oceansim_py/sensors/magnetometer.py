"""Three-axis magnetometer (HoloOcean's magnetometer; the Earth's field rotated into the sensor frame).

Frames and units: the world frame is Z up with **x east, y north** (ENU, as the bathymetry scenes and the GPS
export read it); the sensor frame is FLU. Fields are in **microtesla (uT)** everywhere here (the ROS export
converts to tesla).

Earth field in the world frame, from declination D (deg, east of true north), inclination I (deg, positive
pointing down, as in the northern hemisphere) and intensity F (uT)::

    m_w = F (cos I sin D, cos I cos D, -sin I)

or (``earth_model: dipole``) from a centred geomagnetic dipole at geomagnetic latitude lambda: horizontal
``B0 cos(lambda)``, vertical ``2 B0 sin(lambda)`` down, so ``F = B0 sqrt(1 + 3 sin^2 lambda)`` and
``tan I = 2 tan lambda`` (B0 = 29.8 uT, the equatorial field of IGRF-13's dipole terms); D still applies.

Measured, per sample::

    m = S (R^T m_w) + h + N(0, sigma^2 I)

with R the sensor-to-world rotation, S the soft-iron matrix (3x3, dimensionless, identity = none), h the
hard-iron offset (uT, sensor frame) and sigma the white noise (uT), counter-based: a function of (seed, sensor
id, sample index, axis). The heading of a level sensor follows from the horizontal components:
``yaw = 90 deg - D - atan2(m_y, m_x)`` (yaw from world +x, counter-clockwise) -- :func:`heading_from_field`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Mapping

import numpy as np

from oceansim_py.io.config import ConfigBase, require, require_finite, require_non_negative, require_positive, require_seed
from oceansim_py.poses import quat_to_matrix, rotate_fixed
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.nav_common import DENSITY_SIGMAS, HostResult, NavSensor, follow_density_rate, timed_run_target

_OWNER = "MagnetometerConfig"
#: equatorial field of the centred dipole (uT): sqrt(g10^2 + g11^2 + h11^2) of IGRF-13 at 2020.0
#: (g10 = -29404.8, g11 = -1450.9, h11 = 4652.5 nT)
DIPOLE_EQUATOR_UT = 29.8


@dataclasses.dataclass(frozen=True)
class MagnetometerConfig(ConfigBase):
    """Magnetometer parameters (see the module docstring for the model and frames).

    rate: Hz, the output rate (when measuring a Trajectory without explicit times; a dataset rig sets it from the
    sensor's ``rate_hz``). earth_model: "declination" (D, I, F given) or
    "dipole" (F and I from ``geomagnetic_latitude`` and ``dipole_equator``). declination: deg east of north.
    inclination: deg, positive down. intensity: uT. geomagnetic_latitude: deg. dipole_equator: uT.
    hard_iron: uT, sensor frame (3 values). soft_iron: 3x3 matrix row by row (9 values, dimensionless).
    noise_sigma: uT per axis per sample. noise: False turns the noise off. seed: run seed.

    The ``fluxgate`` preset derives its ``noise_sigma`` from a noise density at its 100 Hz: a ``rate`` set over it
    scales the sigma by sqrt(rate / 100 Hz), keeping the density, unless ``noise_sigma`` is given too
    (:func:`~oceansim_py.sensors.nav_common.follow_density_rate`). The MEMS presets give a data-sheet RMS noise
    in a fixed mode, not a density: their sigma stays as it is at any rate.
    """

    rate: float = 50.0
    earth_model: str = "declination"
    declination: float = 0.0
    inclination: float = 60.0
    intensity: float = 50.0
    geomagnetic_latitude: float = 45.0
    dipole_equator: float = DIPOLE_EQUATOR_UT
    hard_iron: tuple[float, float, float] = (0.0, 0.0, 0.0)
    soft_iron: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    noise_sigma: float = 0.3
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # MEMS magnetometer of the ST LIS3MDL class: datasheet RMS noise 3.2 mgauss (0.32 uT) on x/y in its
        # ultra-high-performance mode; 80 Hz output rate.
        "mems": {"rate": 80.0, "noise_sigma": 0.32},
        # Three-axis fluxgate (Bartington Mag-03 class: noise density of order 10 pT/rtHz): 0.001 uT per sample at
        # 100 Hz is this library's estimate (10 pT/rtHz x sqrt(100 Hz) = 0.0001 uT, rounded up for electronics),
        # i.e. a density of 100 pT/rtHz = 1e-4 uT/rtHz, kept at another rate.
        "fluxgate": {"rate": 100.0, "noise_sigma": 0.001, DENSITY_SIGMAS: ("noise_sigma",)},
        # A MEMS unit inside a vehicle's hull: the hard-iron offset and soft-iron scaling of its electronics
        # and battery (illustrative values of the size a calibration typically removes, not a device's).
        "mems_uncalibrated": {"rate": 80.0, "noise_sigma": 0.32, "hard_iron": (12.0, -7.5, 20.0),
                              "soft_iron": (1.05, 0.02, 0.0, 0.02, 0.97, 0.01, 0.0, 0.01, 1.01)},
        "ideal": {"noise": False},
    }

    @classmethod
    def follow_preset(cls, preset: Mapping[str, Any], given: Mapping[str, Any], values: dict[str, Any]) -> None:
        """A ``rate`` set over the fluxgate preset keeps its noise density (:func:`follow_density_rate`)."""
        super().follow_preset(preset, given, values)
        follow_density_rate(preset, given, values)

    def validate(self) -> None:
        require_positive(self.rate, _OWNER, "rate", "Hz")
        require(self.earth_model in ("declination", "dipole"), _OWNER, "earth_model",
                f"must be 'declination' or 'dipole', got {self.earth_model!r}")
        require_finite(self.declination, _OWNER, "declination")
        require_finite(self.inclination, _OWNER, "inclination")
        require(-90.0 <= self.inclination <= 90.0, _OWNER, "inclination",
                f"must be in [-90, 90] deg, got {self.inclination!r}")
        require_non_negative(self.intensity, _OWNER, "intensity", "uT")
        require_finite(self.geomagnetic_latitude, _OWNER, "geomagnetic_latitude")
        require(-90.0 <= self.geomagnetic_latitude <= 90.0, _OWNER, "geomagnetic_latitude",
                f"must be in [-90, 90] deg, got {self.geomagnetic_latitude!r}")
        require_positive(self.dipole_equator, _OWNER, "dipole_equator", "uT")
        require(len(self.hard_iron) == 3 and all(math.isfinite(v) for v in self.hard_iron), _OWNER, "hard_iron",
                f"must be 3 finite numbers (uT), got {self.hard_iron!r}")
        require(len(self.soft_iron) == 9 and all(math.isfinite(v) for v in self.soft_iron), _OWNER, "soft_iron",
                f"must be 9 finite numbers (a 3x3 matrix row by row), got {self.soft_iron!r}")
        require(abs(float(np.linalg.det(self.soft_iron_matrix()))) > 1e-6, _OWNER, "soft_iron",
                "must be invertible (a singular matrix would flatten the field)")
        require_non_negative(self.noise_sigma, _OWNER, "noise_sigma", "uT")
        require_seed(self.seed, _OWNER)

    def soft_iron_matrix(self) -> np.ndarray:
        return np.asarray(self.soft_iron, dtype=np.float64).reshape(3, 3)

    def earth_field(self) -> np.ndarray:
        """(3,) the Earth field in the world frame (ENU), uT."""
        d = math.radians(self.declination)
        if self.earth_model == "dipole":
            lat = math.radians(self.geomagnetic_latitude)
            horizontal, down = self.dipole_equator * math.cos(lat), 2.0 * self.dipole_equator * math.sin(lat)
        else:
            inc = math.radians(self.inclination)
            horizontal, down = self.intensity * math.cos(inc), self.intensity * math.sin(inc)
        return np.array([horizontal * math.sin(d), horizontal * math.cos(d), -down])


def heading_from_field(field: Any, declination_deg: float = 0.0) -> np.ndarray:
    """Yaw (rad, from world +x = east, counter-clockwise) of a level sensor from its measured field (N, 3):
    ``pi/2 - D - atan2(m_y, m_x)``, wrapped to (-pi, pi]."""
    m = np.asarray(field, dtype=np.float64).reshape(-1, 3)
    yaw = math.pi / 2 - math.radians(declination_deg) - np.arctan2(m[:, 1], m[:, 0])
    return np.angle(np.exp(1j * yaw))


@dataclasses.dataclass
class MagnetometerResult(HostResult):
    """field: (N, 3) measured, uT, sensor frame FLU. true_field: (N, 3) the undistorted, noise-free field in the
    sensor frame (uT). times: (N,) s or ``None``."""

    field: np.ndarray
    true_field: np.ndarray
    times: np.ndarray | None
    frame_index: int


class Magnetometer(NavSensor):
    """A three-axis magnetometer. ``sensor_id`` separates the noise of several sensors sharing a seed."""

    config_class = MagnetometerConfig

    def measure(self, source: Any, times: Any = None, frame_index: int = 0) -> MagnetometerResult:
        """The field at a Trajectory's samples (at ``times`` or every 1 / rate) or at poses (7,) / (B, 7)."""
        fi, s = self.samples(source, times, frame_index)
        c = self.config
        true = rotate_fixed(quat_to_matrix(s.poses[:, 3:]), np.broadcast_to(c.earth_field(), (len(s.poses), 3)),
                            transpose=True)
        field = true @ c.soft_iron_matrix().T + np.asarray(c.hard_iron)
        if c.noise and c.noise_sigma > 0:
            field = field + c.noise_sigma * host_noise.gaussian(c.seed, self.sensor_id, 0,
                                                                fi + np.arange(len(field)), 3)
        return MagnetometerResult(field, true, s.times, fi)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

SENSOR_KIND = _reg.SensorKind(
    name="magnetometer", description="three-axis magnetometer: the Earth's field in the sensor frame, hard/soft "
                                     "iron, noise",
    config_class=MagnetometerConfig, sensor_class=Magnetometer,
    build=lambda config, device, sensor_id: Magnetometer(config, sensor_id=sensor_id),
    render=lambda sensor, batch: sensor.measure(batch.poses, frame_index=batch.frame_index),
    schema=(
        _reg.Product("field", _reg.TABLE, "float64", "uT, sensor frame FLU (hard/soft iron and noise)", (3,),
                     frame="sensor FLU"),
        _reg.Product("true_field", _reg.TABLE, "float64", "uT, sensor frame FLU (undistorted, noise-free)", (3,),
                     frame="sensor FLU"),
    ),
    default_products=("field",),
    metadata=lambda c: {"earth_field_world_uT": c.earth_field().tolist(),
                        "frame": "world ENU (x east, y north, z up); field in uT, sensor frame FLU"},
    cli=timed_run_target("magnetometer: the field in the sensor frame at each ping of a straight run (.npy)", uses_scene=False),
    rate_field="rate",
)
