"""Inertial measurement unit: specific force and angular rate from a trajectory (docs/PHYSICS.md §6,
holoocean-2022 eq. 5).

Body frame FLU; world Z up with gravity ``g_w = (0, 0, -gravity)``. Per sample i at time t_i:

    f_i = R_i^T (a_w - g_w) + b^a_i + w^a_i        (m/s^2; level at rest reads (0, 0, +gravity))
    w_i = R_i^T omega_w     + b^w_i + w^w_i        (rad/s)
    b(t) = b_0 + sigma_b W(t)                      (each of the 3 axes; b_0 ~ N(0, sigma_0^2))

with white noise w ~ N(0, sigma^2) per sample and W a standard Brownian motion of the trajectory clock (s), so
between any two samples the bias random-walks by N(0, sigma_b^2 dt) (holoocean-2022 eq. 5 with the step
scaled by the time step). The biases are returned as ground truth.

A random walk depends on the sample's history by construction. To keep every sample a pure function of (seed,
sensor id, stream, frame index or time) whatever the batch, W(t) is built by a dyadic Brownian bridge
(:func:`oceansim_py.sensors.host_noise.brownian`): the bias at time t costs about 42 draws and is the same
whether the series is measured in one call or in chunks (b_0 is the bias at t = 0 of the clock). White noise of
sample i is keyed by its frame index ``frame_index + i``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Mapping

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import ConfigBase, require_non_negative, require_positive, require_seed
from oceansim_py.poses import quat_to_matrix, rotate_fixed
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.nav_common import DENSITY_SIGMAS, HostResult, NavSensor, follow_density_rate

_OWNER = "IMUConfig"
STANDARD_GRAVITY = 9.80665
_ACCEL_WHITE, _GYRO_WHITE, _ACCEL_WALK, _GYRO_WALK, _ACCEL_INIT, _GYRO_INIT = range(6)

# Preset derivations (at the presets' 100 Hz; another ``rate`` over a preset rescales the white sigmas, see
# IMUConfig): white sigma = noise density * sqrt(rate); bias walk sigma_b chosen so that the 1-sigma drift after one
# hour equals the class's bias stability, sigma_b = stability / sqrt(3600 s).
_RATE = 100.0
_HOUR = 3600.0


def _preset(gyro_density_dps_rthz: float, accel_density_ms2_rthz: float, gyro_stability_dph: float,
            accel_stability_mg: float) -> dict[str, Any]:
    return {"rate": _RATE,
            "gyro_noise_sigma": gyro_density_dps_rthz * math.sqrt(_RATE),
            "accel_noise_sigma": accel_density_ms2_rthz * math.sqrt(_RATE),
            "gyro_bias_walk": gyro_stability_dph / _HOUR / math.sqrt(_HOUR),
            "accel_bias_walk": accel_stability_mg * 1e-3 * STANDARD_GRAVITY / math.sqrt(_HOUR),
            DENSITY_SIGMAS: ("gyro_noise_sigma", "accel_noise_sigma")}


@dataclasses.dataclass(frozen=True)
class IMUConfig(ConfigBase):
    """IMU parameters.

    rate: Hz, the output rate: samples per second when measuring a Trajectory without explicit times (a dataset
    rig sets it from the sensor's ``rate_hz``). accel_noise_sigma: m/s^2 per sample. gyro_noise_sigma: deg/s per
    sample. accel_bias_walk: m/s^2/sqrt(s). gyro_bias_walk: deg/s/sqrt(s). accel_bias_initial /
    gyro_bias_initial: 1-sigma turn-on bias (m/s^2, deg/s). gravity: m/s^2. noise: False turns all noise and bias
    off. seed: run seed of the noise.

    The white-noise sigmas are per sample, so they hold a noise density N (m/s^2/sqrt(Hz), deg/s/sqrt(Hz)) only at
    one rate: sigma = N sqrt(rate). The presets give their data-sheet densities at 100 Hz; a ``rate`` set over a
    preset (``IMUConfig.preset("tactical", rate=400.0)``, ``{preset: tactical, rate: 400}`` in YAML, ``--set
    rate=400``, a rig's ``rate_hz``) scales their sigmas by sqrt(rate / 100 Hz), keeping the density, unless the
    sigmas are given too (then those win). The bias walks are per sqrt(s) and do not depend on the rate. A config
    without a preset keeps its sigmas per sample at any rate, and ``replace(rate=...)`` changes the rate alone.
    """

    rate: float = 100.0
    accel_noise_sigma: float = 0.02
    gyro_noise_sigma: float = 0.05
    accel_bias_walk: float = 1e-4
    gyro_bias_walk: float = 1e-4
    accel_bias_initial: float = 0.0
    gyro_bias_initial: float = 0.0
    gravity: float = STANDARD_GRAVITY
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Consumer MEMS: InvenSense MPU-9250 data sheet (PS-MPU-9250A-01) noise densities, gyro 0.01 deg/s/rtHz
        # and accelerometer 300 ug/rtHz; bias stability of the class ~50 deg/h and ~5 mg (Groves, Principles of
        # GNSS, Inertial, and Multisensor Integrated Navigation Systems, 2nd ed., 2013, ch. 4: consumer-grade
        # gyro biases are tens to hundreds of deg/h, accelerometer biases milli-g).
        "consumer_mems": _preset(0.01, 300e-6 * STANDARD_GRAVITY, 50.0, 5.0),
        # Tactical grade (e.g. the Honeywell HG1700 class of ring-laser units): angle random walk 0.1 deg/rt(h)
        # = 0.1/60 deg/s/rtHz, velocity random walk 0.05 m/s/rt(h) = 0.05/60 m/s^2/rtHz, bias stability ~1 deg/h
        # and ~0.5 mg (Groves 2013, ch. 4: tactical-grade gyros 1-10 deg/h, accelerometers 0.1-1 mg).
        "tactical": _preset(0.1 / 60.0, 0.05 / 60.0, 1.0, 0.5),
        "ideal": {"noise": False},
    }

    @classmethod
    def follow_preset(cls, preset: Mapping[str, Any], given: Mapping[str, Any], values: dict[str, Any]) -> None:
        """A ``rate`` set over a preset keeps the preset's noise densities (:func:`follow_density_rate`)."""
        super().follow_preset(preset, given, values)
        follow_density_rate(preset, given, values)

    def validate(self) -> None:
        require_positive(self.rate, _OWNER, "rate", "Hz")
        for name in ("accel_noise_sigma", "gyro_noise_sigma", "accel_bias_walk", "gyro_bias_walk",
                     "accel_bias_initial", "gyro_bias_initial"):
            require_non_negative(getattr(self, name), _OWNER, name)
        require_positive(self.gravity, _OWNER, "gravity", "m/s^2")
        require_seed(self.seed, _OWNER)


@dataclasses.dataclass
class IMUResult(HostResult):
    """IMU samples (N = number of samples), body frame FLU.

    accel: (N, 3) measured specific force, m/s^2. gyro: (N, 3) measured angular rate, rad/s. accel_bias /
    gyro_bias: (N, 3) the biases inside those measurements (m/s^2, rad/s). true_accel / true_gyro: (N, 3)
    noise-free specific force and rate. times: (N,) s.
    """

    times: np.ndarray
    accel: np.ndarray
    gyro: np.ndarray
    accel_bias: np.ndarray
    gyro_bias: np.ndarray
    true_accel: np.ndarray
    true_gyro: np.ndarray
    frame_index: int


class IMU(NavSensor):
    """An IMU sampling a Trajectory (see the module docstring). ``sensor_id`` separates the noise of several
    IMUs sharing a seed."""

    config_class = IMUConfig

    def measure(self, trajectory: Any, times: Any = None, frame_index: int = 0,
                initial_accel_bias: Any = None, initial_gyro_bias: Any = None) -> IMUResult:
        """Sample the IMU along ``trajectory`` at ``times`` (s; default every 1 / rate over its span).

        ``initial_*_bias``: (3,) bias at t = 0 (m/s^2, rad/s) instead of the turn-on draw.
        """
        if not hasattr(trajectory, "acceleration"):
            raise ConfigError("IMU.measure: needs a Trajectory (for accelerations and rates), not bare poses")
        fi, s = self.samples(trajectory, times, frame_index)
        t = s.times
        c = self.config
        r = quat_to_matrix(s.poses[:, 3:])
        g_w = np.array([0.0, 0.0, -c.gravity])
        true_accel = rotate_fixed(r, trajectory.acceleration(t) - g_w, transpose=True)
        true_gyro = trajectory.angular_velocity(t, frame="body")
        n = t.size
        if not c.noise:
            zeros = np.zeros((n, 3))
            return IMUResult(t, true_accel, true_gyro, zeros, zeros.copy(), true_accel.copy(), true_gyro.copy(), fi)
        frames = fi + np.arange(n)

        def draw(stream: int) -> np.ndarray:
            return host_noise.gaussian(c.seed, self.sensor_id, stream, frames, 3)

        deg = math.pi / 180.0
        zero = np.zeros(1, dtype=np.int64)
        a0 = c.accel_bias_initial * host_noise.gaussian(c.seed, self.sensor_id, _ACCEL_INIT, zero, 3)[0] \
            if initial_accel_bias is None else _bias_vector(initial_accel_bias, "initial_accel_bias")
        g0 = c.gyro_bias_initial * deg * host_noise.gaussian(c.seed, self.sensor_id, _GYRO_INIT, zero, 3)[0] \
            if initial_gyro_bias is None else _bias_vector(initial_gyro_bias, "initial_gyro_bias")
        accel_bias = a0 + c.accel_bias_walk * host_noise.brownian(c.seed, self.sensor_id, _ACCEL_WALK, t, 3)
        gyro_bias = g0 + c.gyro_bias_walk * deg * host_noise.brownian(c.seed, self.sensor_id, _GYRO_WALK, t, 3)
        accel = true_accel + accel_bias + c.accel_noise_sigma * draw(_ACCEL_WHITE)
        gyro = true_gyro + gyro_bias + c.gyro_noise_sigma * deg * draw(_GYRO_WHITE)
        return IMUResult(t, accel, gyro, accel_bias, gyro_bias, true_accel, true_gyro, fi)


def _bias_vector(v: Any, what: str) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    if a.size != 3 or not np.isfinite(a).all():
        raise ConfigError(f"IMU.measure: {what} must be 3 finite numbers, got {v!r}")
    return a


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_VECTORS = {"accel": "m/s^2, specific force, sensor frame FLU", "gyro": "rad/s, sensor frame FLU",
            "accel_bias": "m/s^2", "gyro_bias": "rad/s", "true_accel": "m/s^2 (noise-free)",
            "true_gyro": "rad/s (noise-free)"}

SENSOR_KIND = _reg.SensorKind(
    name="imu", description="inertial measurement unit: specific force and angular rate with bias and noise",
    config_class=IMUConfig, sensor_class=IMU, uses_trajectory=True,
    build=lambda config, device, sensor_id: IMU(config, sensor_id=sensor_id),
    render=lambda sensor, batch: sensor.measure(batch.trajectory, times=batch.times, frame_index=batch.frame_index),
    schema=tuple(_reg.Product(name, _reg.TABLE, "float64", unit, (3,), frame="sensor FLU")
                 for name, unit in _VECTORS.items()),
    default_products=("accel", "gyro", "accel_bias", "gyro_bias"),
    metadata=lambda c: {"frame": "sensor FLU; accel = specific force (m/s^2, +g up at rest), gyro rad/s"},
    rate_field="rate",
)
