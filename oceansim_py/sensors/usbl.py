"""USBL (ultra-short baseline) head on the vehicle: slant range and direction to transponders fixed in the world
(an "inverted" USBL: the head rides the vehicle, the beacons sit in the scene).

Range and timing: :mod:`oceansim_py.sensors.acoustic_positioning` (two-way travel time x c / 2 with the
turn-around delay, the head moving during the exchange, occlusion by ray cast, range noise, multipath outliers).
Each sample is one ping that interrogates every beacon (each replying on its own channel); the ping interval is
the sample interval (the rig's ``rate_hz``, or ``1 / rate`` when measuring a Trajectory directly).

Direction, from the phase differences across the array. The head's receive array lies in the sensor's y-z plane
(the boresight is the sensor's +x, FLU; mount the head looking down with pitch 90 deg): one baseline of
``element_spacing`` d along y and one along z. A reply from the unit direction s (sensor frame, at the reply's
arrival) arrives with phase differences ``dphi_y = 2 pi (d / lambda) s_y`` and ``dphi_z = 2 pi (d / lambda) s_z``
(lambda = c / frequency), each measured with N(0, phase_sigma^2) noise. Inverting, the direction cosines are
``s_y' = lambda dphi_y / (2 pi d)`` (noise ``sigma_s = lambda phase_sigma / (2 pi d)``, the same everywhere) and
``s_x' = sqrt(1 - s_y'^2 - s_z'^2)`` (the head hears the front hemisphere). Angles: bearing ``atan2(-s_y', s_x')``
(positive to starboard, as every sensor here) and elevation ``asin(s_z')`` (positive up). An angle theta off
boresight in a baseline's plane follows from ``sin theta = s``, so its error is ``sigma_s / cos theta``: the angle
error grows off boresight, as on a real head. The spacing must be at most lambda / 2 (larger baselines are
ambiguous without a second, shorter one). A reply from outside the coverage cone (``coverage``, half-angle from
boresight), or whose noisy direction cosines leave the unit circle, gives no fix.

Products per beacon (in ``beacon_ids`` order): slant range (m), bearing / elevation (rad), the beacon's position
in the sensor frame (range x measured direction, at the reply's arrival), the fix flag, the two-way travel time
and the reply's arrival time (s), and ground truth.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from oceansim_py.io.config import ConfigBase, require, require_non_negative, require_positive
from oceansim_py.poses import quat_to_matrix, rotate_fixed
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.acoustic_positioning import (
    BeaconLayout, exchange, measure_batch, measured_ranges, poses_along, validate_ranging,
)
from oceansim_py.sensors.backend_field import RaycastBackendField
from oceansim_py.sensors.nav_common import HostResult, NavSensor, timed_run_target

_OWNER = "USBLConfig"
_PHASE_Y, _PHASE_Z = 10, 11


@dataclasses.dataclass(frozen=True)
class USBLConfig(BeaconLayout, RaycastBackendField, ConfigBase):
    """USBL parameters (module docstring for the model).

    beacon_ids: distinct integer ids. beacon_positions: one [x, y, z] per id, m, world frame. rate: Hz (pings
    when measuring a Trajectory without times). sound_speed: m/s. turnaround_delay: s, the transponders' reply
    delay (known to the head). max_range: m. frequency: Hz, of the replies. element_spacing: m, the array's
    baseline (<= lambda / 2). phase_sigma: deg, phase-difference noise per baseline. coverage: deg, half-angle
    of the cone around the boresight (+x) the head hears. range_sigma: m. outlier_probability: per reply.
    outlier_range: m, multipath outliers are U(0, outlier_range) long. surface_multipath: a beacon whose direct
    path is blocked is heard by its surface-reflected reply (a ghost fix at its mirror image above the surface;
    flagged as an outlier). noise: False turns all noise off. seed.
    """

    beacon_ids: tuple[int, ...] = (1,)
    beacon_positions: tuple[tuple[float, float, float], ...] = ((0.0, 0.0, 0.0),)
    rate: float = 1.0
    sound_speed: float = 1500.0
    turnaround_delay: float = 0.0
    max_range: float = 1000.0
    frequency: float = 25000.0
    element_spacing: float = 0.03
    phase_sigma: float = 2.0
    coverage: float = 90.0
    range_sigma: float = 0.1
    outlier_probability: float = 0.0
    outlier_range: float = 10.0
    surface_multipath: bool = False
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Sonardyne Micro-Ranger 2 class (datasheet: 1 s update, 995 m range, 200 deg coverage, 0.1 deg
        # repeatability class; band 20-34 kHz). Spacing lambda / 2 at 27 kHz; the phase noise (1.5 deg) and
        # 0.2 m range noise are this library's estimates that give about 0.5 deg of angle error at boresight.
        "sonardyne_micro_ranger_2": {"rate": 1.0, "max_range": 995.0, "frequency": 27000.0,
                                     "element_spacing": 0.0277, "phase_sigma": 1.5, "coverage": 90.0,
                                     "range_sigma": 0.2},
        # Blueprint Subsea SeaTrac X150 (HoloOcean's modem; datasheet: 24-32 kHz, 1 km range, 0.1 m range
        # resolution, bearing accuracy +-2 deg class). Phase noise chosen (estimate) for ~1 deg at boresight.
        "seatrac_x150": {"rate": 0.5, "max_range": 1000.0, "frequency": 28000.0, "element_spacing": 0.0267,
                         "phase_sigma": 3.0, "coverage": 90.0, "range_sigma": 0.1, "turnaround_delay": 0.0},
        # Teledyne Benthos / Evologics S2C USBL class (18-34 kHz, 1-3.5 km): a longer-range head with a 0.5 s
        # transponder turn-around; accuracy figures are estimates.
        "evologics_s2c_r_usbl": {"rate": 0.5, "max_range": 3500.0, "frequency": 26000.0,
                                 "element_spacing": 0.0288, "phase_sigma": 2.0, "coverage": 90.0,
                                 "range_sigma": 0.2, "turnaround_delay": 0.5, "outlier_probability": 0.02,
                                 "outlier_range": 20.0},
        "ideal": {"noise": False},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        validate_ranging(self, _OWNER)
        require_positive(self.frequency, _OWNER, "frequency", "Hz")
        require_positive(self.element_spacing, _OWNER, "element_spacing", "m")
        half = self.sound_speed / self.frequency / 2
        require(self.element_spacing <= half * (1 + 1e-9), _OWNER, "element_spacing",
                f"must be at most lambda / 2 = {half:.4g} m at {self.frequency:g} Hz and {self.sound_speed:g} "
                f"m/s (a longer baseline is ambiguous), got {self.element_spacing!r}")
        require_non_negative(self.phase_sigma, _OWNER, "phase_sigma", "deg")
        require(0.0 < self.coverage <= 90.0, _OWNER, "coverage",
                f"must be in (0, 90] deg (the head hears its front hemisphere), got {self.coverage!r}")

    def direction_cosine_sigma(self) -> float:
        """Noise of a measured direction cosine: lambda phase_sigma / (2 pi d) (dimensionless)."""
        wavelength = self.sound_speed / self.frequency
        return wavelength * math.radians(self.phase_sigma) / (2.0 * math.pi * self.element_spacing)


@dataclasses.dataclass
class USBLResult(HostResult):
    """Per sample (N) and beacon (n), NaN without a fix: slant_range (N, n) m, c travel_time / 2 plus the range
    noise and outliers; bearing, elevation (N, n) rad (sensor frame, + starboard, + up); position (N, n, 3) m,
    sensor frame FLU; fix (N, n) bool; travel_time (N, n) s two-way (without the turn-around; noise-free, as
    reply_time); reply_time (N, n) s, the reply's arrival; outlier (N, n) bool; occluded (N, n) bool; true_range,
    true_bearing, true_elevation (N, n); true_position (N, n, 3) sensor frame at the reply's arrival: the
    beacon's, also where the head measures a surface-reflected reply from its mirror image (the ghost is in the
    measured products only). times (N,) s or ``None``."""

    slant_range: np.ndarray
    bearing: np.ndarray
    elevation: np.ndarray
    position: np.ndarray
    fix: np.ndarray
    travel_time: np.ndarray
    reply_time: np.ndarray
    outlier: np.ndarray
    occluded: np.ndarray
    true_range: np.ndarray
    true_bearing: np.ndarray
    true_elevation: np.ndarray
    true_position: np.ndarray
    times: np.ndarray | None
    frame_index: int


def _angles(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.arctan2(-s[..., 1], s[..., 0]), np.arcsin(np.clip(s[..., 2], -1.0, 1.0))


class USBL(NavSensor):
    """A USBL head (module docstring). ``sensor_id`` separates the noise of several heads sharing a seed."""

    config_class = USBLConfig

    def measure(self, source: Any, times: Any = None, scene: Any = None, frame_index: int = 0) -> USBLResult:
        """Ping at a Trajectory's samples (at ``times`` or every 1 / rate; the head moves during each exchange)
        or at poses (7,) / (B, 7) of a stationary head. ``scene`` (optional) blocks paths it intersects."""
        fi, s = self.samples(source, times, frame_index)
        c = self.config
        beacons = np.asarray(c.beacon_positions, dtype=np.float64)
        ex = exchange(c, s.times, s.poses, poses_along(source), beacons, scene)
        geo, heard, bounced = ex.geo, ex.heard, ex.bounced
        beacon_at = np.broadcast_to(beacons[None], geo.receive_pose[..., :3].shape)
        heard_from = beacon_at if ex.image is None else np.where(bounced[..., None], ex.image[None], beacon_at)
        rot = quat_to_matrix(geo.receive_pose[..., 3:])                               # (N, n, 3, 3)
        arrival = rotate_fixed(rot, heard_from - geo.receive_pose[..., :3], transpose=True)
        arrival_dir = arrival / np.linalg.norm(arrival, axis=-1, keepdims=True)
        rel = arrival if ex.image is None else rotate_fixed(rot, beacon_at - geo.receive_pose[..., :3], transpose=True)
        true_dir = rel / np.linalg.norm(rel, axis=-1, keepdims=True)
        frames = fi + np.arange(s.poses.shape[0])
        n = beacons.shape[0]
        rng, outlier = measured_ranges(c, self.sensor_id, frames, geo.travel_time)
        meas = arrival_dir.copy()
        if c.noise:
            sig = c.direction_cosine_sigma()
            meas[..., 1] += sig * host_noise.gaussian(c.seed, self.sensor_id, _PHASE_Y, frames, n)
            meas[..., 2] += sig * host_noise.gaussian(c.seed, self.sensor_id, _PHASE_Z, frames, n)
        lateral = meas[..., 1] ** 2 + meas[..., 2] ** 2
        meas[..., 0] = np.sqrt(np.maximum(1.0 - lateral, 0.0))
        in_cone = arrival_dir[..., 0] >= math.cos(math.radians(c.coverage)) - 1e-12
        fix = ~geo.out_of_range & heard & in_cone & (lateral <= 1.0)
        bearing, elevation = _angles(meas)
        true_bearing, true_elevation = _angles(true_dir)
        nan = np.where(fix, 1.0, np.nan)
        return USBLResult(rng * nan, bearing * nan, elevation * nan, (rng * nan)[..., None] * meas, fix,
                          geo.travel_time * nan, geo.reply_time * nan, (outlier | bounced) & fix, geo.occluded,
                          ex.true_range, true_bearing, true_elevation, rel, s.times, fi)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module


_N = ("n_beacons",)
SENSOR_KIND = _reg.SensorKind(
    name="usbl", description="USBL head: slant range and bearing/elevation to beacons in the scene",
    config_class=USBLConfig, sensor_class=USBL, uses_trajectory=True, render=measure_batch,
    build=lambda config, device, sensor_id: USBL(config, sensor_id=sensor_id),
    schema=(
        _reg.Product("slant_range", _reg.TABLE, "float64", "m per beacon, c x travel_time / 2 plus the range noise "
                     "and outliers (NaN: no fix)", _N),
        _reg.Product("bearing", _reg.TABLE, "float64", "rad per beacon, + starboard of the boresight (NaN: no fix)",
                     _N, frame="sensor FLU"),
        _reg.Product("elevation", _reg.TABLE, "float64", "rad per beacon, + up (NaN: no fix)", _N,
                     frame="sensor FLU"),
        _reg.Product("position", _reg.TABLE, "float64", "m, beacon in the sensor frame (NaN: no fix)",
                     ("n_beacons", 3), frame="sensor FLU"),
        _reg.Product("fix", _reg.TABLE, "int8", "flag 1/0 per beacon", _N),
        _reg.Product("travel_time", _reg.TABLE, "float64", "s, two-way travel time without the turn-around "
                     "(noise-free: the noise is on the range; NaN: no fix)", _N),
        _reg.Product("reply_time", _reg.TABLE, "float64", "s, arrival time of each reply (NaN: no fix)", _N),
        _reg.Product("outlier", _reg.TABLE, "int8", "flag 1/0: a multipath outlier (ground truth)", _N),
        _reg.Product("occluded", _reg.TABLE, "int8", "flag 1/0: the scene blocks the path (ground truth)", _N),
        _reg.Product("true_range", _reg.TABLE, "float64", "m, head-beacon distance at the reply's arrival", _N),
        _reg.Product("true_bearing", _reg.TABLE, "float64", "rad (ground truth)", _N, frame="sensor FLU"),
        _reg.Product("true_elevation", _reg.TABLE, "float64", "rad (ground truth)", _N, frame="sensor FLU"),
    ),
    default_products=("slant_range", "bearing", "elevation", "fix", "reply_time"),
    metadata=lambda c: {**c.beacon_metadata(), "direction_cosine_sigma": c.direction_cosine_sigma(),
                        "frame": "sensor FLU (boresight +x); bearing + starboard, elevation + up"},
    cli=timed_run_target("USBL head: range, bearing and elevation to the configured beacons along a straight run (.npy)"),
)
