"""LBL (long baseline) transceiver on the vehicle: slant ranges to a baseline of transponders fixed in the world,
and the time each reply arrives.

Each sample is one interrogation of every beacon of the baseline (each replying on its own channel after the
turn-around delay); ranges, timing, occlusion, noise and outliers as in
:mod:`oceansim_py.sensors.acoustic_positioning`. A position solver (trilateration from the ranges and the reply
times) is the user's: the dataset holds what the transceiver measures, and the beacons' surveyed positions in
the manifest.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from oceansim_py.io.config import ConfigBase
from oceansim_py.sensors.acoustic_positioning import (
    BeaconLayout, exchange, measure_batch, measured_ranges, poses_along, validate_ranging,
)
from oceansim_py.sensors.backend_field import RaycastBackendField
from oceansim_py.sensors.nav_common import HostResult, NavSensor, timed_run_target

_OWNER = "LBLConfig"


@dataclasses.dataclass(frozen=True)
class LBLConfig(BeaconLayout, RaycastBackendField, ConfigBase):
    """LBL parameters. beacon_ids: distinct integer ids. beacon_positions: one [x, y, z] per id, m, world frame.
    rate: Hz (interrogations when measuring a Trajectory without times). sound_speed: m/s. turnaround_delay: s.
    max_range: m. range_sigma: m. outlier_probability: per reply. outlier_range: m (outliers U(0, outlier_range)
    long). surface_multipath: a beacon whose direct path is blocked is heard by its surface-reflected reply (a
    longer range, flagged as an outlier). noise: False turns all noise off. seed: run seed."""

    beacon_ids: tuple[int, ...] = (1, 2, 3)
    beacon_positions: tuple[tuple[float, float, float], ...] = ((0.0, 0.0, 0.0), (100.0, 0.0, 0.0),
                                                                (0.0, 100.0, 0.0))
    rate: float = 0.5
    sound_speed: float = 1500.0
    turnaround_delay: float = 0.0
    max_range: float = 5000.0
    range_sigma: float = 0.1
    outlier_probability: float = 0.0
    outlier_range: float = 10.0
    surface_multipath: bool = False
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Medium-frequency LBL (Sonardyne Compatt 6 / Fusion 6G class, 19-34 kHz): datasheet-class range
        # precision of a few cm; 0.05 m noise, 10 ms turn-around and 5 km reach are this library's estimates.
        "mf_lbl": {"rate": 1.0, "max_range": 5000.0, "range_sigma": 0.05, "turnaround_delay": 0.01},
        # Low-frequency deep-water LBL (8-16 kHz, 10 km): ~1 m noise and occasional multipath (estimates).
        "lf_lbl": {"rate": 0.1, "max_range": 10000.0, "range_sigma": 1.0, "turnaround_delay": 0.05,
                   "outlier_probability": 0.02, "outlier_range": 50.0},
        "ideal": {"noise": False},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        validate_ranging(self, _OWNER)


@dataclasses.dataclass
class LBLResult(HostResult):
    """Per sample (N) and beacon (n), NaN without a fix: range (N, n) m, c travel_time / 2 plus the range noise and
    outliers; travel_time (N, n) s two-way (without the turn-around; noise-free, as reply_time); reply_time (N, n) s, the reply's arrival; fix, outlier, occluded (N, n) bool; true_range (N, n)
    m at the reply's arrival. times (N,) s or ``None``."""

    range: np.ndarray
    travel_time: np.ndarray
    reply_time: np.ndarray
    fix: np.ndarray
    outlier: np.ndarray
    occluded: np.ndarray
    true_range: np.ndarray
    times: np.ndarray | None
    frame_index: int


class LBL(NavSensor):
    """An LBL transceiver (module docstring). ``sensor_id`` separates the noise of several transceivers."""

    config_class = LBLConfig

    def measure(self, source: Any, times: Any = None, scene: Any = None, frame_index: int = 0) -> LBLResult:
        """Interrogate at a Trajectory's samples (at ``times`` or every 1 / rate) or at poses (7,) / (B, 7) of a
        stationary transceiver. ``scene`` (optional) blocks the paths it intersects."""
        fi, s = self.samples(source, times, frame_index)
        c = self.config
        beacons = np.asarray(c.beacon_positions, dtype=np.float64)
        ex = exchange(c, s.times, s.poses, poses_along(source), beacons, scene)
        geo = ex.geo
        rng, outlier = measured_ranges(c, self.sensor_id, fi + np.arange(s.poses.shape[0]), geo.travel_time)
        fix = ~geo.out_of_range & ex.heard
        nan = np.where(fix, 1.0, np.nan)
        return LBLResult(rng * nan, geo.travel_time * nan, geo.reply_time * nan, fix, (outlier | ex.bounced) & fix,
                         geo.occluded, ex.true_range, s.times, fi)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_N = ("n_beacons",)
SENSOR_KIND = _reg.SensorKind(
    name="lbl", description="LBL transceiver: ranges to a baseline of beacons and the time of each reply",
    config_class=LBLConfig, sensor_class=LBL, uses_trajectory=True, render=measure_batch,
    build=lambda config, device, sensor_id: LBL(config, sensor_id=sensor_id),
    schema=(
        _reg.Product("range", _reg.TABLE, "float64", "m per beacon, c x travel_time / 2 plus the range noise "
                     "and outliers (NaN: no fix)", _N),
        _reg.Product("travel_time", _reg.TABLE, "float64", "s, two-way travel time without the turn-around "
                     "(noise-free: the noise is on the range; NaN: no fix)", _N),
        _reg.Product("reply_time", _reg.TABLE, "float64", "s, arrival time of each reply (NaN: no fix)", _N),
        _reg.Product("fix", _reg.TABLE, "int8", "flag 1/0 per beacon", _N),
        _reg.Product("outlier", _reg.TABLE, "int8", "flag 1/0: a multipath outlier (ground truth)", _N),
        _reg.Product("occluded", _reg.TABLE, "int8", "flag 1/0: the scene blocks the path (ground truth)", _N),
        _reg.Product("true_range", _reg.TABLE, "float64", "m, transceiver-beacon distance at the reply's arrival",
                     _N),
    ),
    default_products=("range", "reply_time", "fix"),
    metadata=LBLConfig.beacon_metadata,
    cli=timed_run_target("LBL transceiver: ranges to the configured baseline along a straight run (.npy)"),
)
