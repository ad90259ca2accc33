"""Optical modem (HoloOcean §V-B, after the Hydromea LUMA X): scheduled messages over a line-of-sight light link.

Nodes, schedule, timing and how events are stored: :mod:`oceansim_py.sensors.modem_common` (light travels at
``light_speed`` = c0 / 1.34 in sea water, so the delay is some ns per metre; HoloOcean applies none). A
message's fate, in this order of precedence:

1. ``out_of_range``: the distance exceeds ``max_range`` (the device's limit);
2. ``occluded``: the scene blocks the straight path from sender to receiver (ray cast at the arrival);
3. ``out_of_cone``: the receiver lies outside the sender's cone, or the sender outside the receiver's
   (half-angle ``cone_angle`` about each modem's axis: the vehicle modem's sensor +x, a fixed node's
   ``node_directions`` row in the world frame);
4. ``too_weak``: the link budget fails (below);
5. else ``delivered``. (Optical links are narrow and short; collisions are not modelled.)

Link budget, from the water type (:class:`~oceansim_py.sensors.water.WaterType`): the received power falls as
``exp(-beta r) / r^2`` (beam attenuation beta of the water in the LED's band, 1/m: the ``attenuation`` of the
water type's blue channel for ``band: blue`` (450-475 nm LEDs), green for ``band: green``). ``clear_range`` is
the range the link reaches in water that does not attenuate, so the link margin is

    margin = 10 log10(clear_range^2 / (r^2 exp(beta r))) + N(0, fading_sigma^2)      dB

and the message is delivered when the margin is >= 0. Turbid water (a larger beta) shortens the link: with
``clear_range`` 60 m, Jerlov I water (beta_blue = 0.022 /m) reaches 39 m, IB (0.089 /m) 22 m, coastal 3C (1.56 /m)
3.6 m.
Using the beam attenuation (every scattered photon lost) is conservative for a wide-angle receiver.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from oceansim_py.io.config import ConfigBase, require, require_non_negative, require_positive
from oceansim_py.poses import quat_to_matrix
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.acoustic_modem import AcousticModem, modem_metadata, modem_schema
from oceansim_py.sensors.backend_field import RaycastBackendField
from oceansim_py.sensors.nav_common import timed_run_target
from oceansim_py.sensors.acoustic_positioning import blocked
from oceansim_py.sensors.modem_common import (
    DELIVERED, OCCLUDED, OUT_OF_CONE, OUT_OF_RANGE, TOO_WEAK, Traffic, measure_batch, modem_arrays, validate_network,
)
from oceansim_py.sensors.water import WaterType

_OWNER = "OpticalModemConfig"
_FADING = 0
#: speed of light in sea water (m/s): c0 / 1.34
LIGHT_SPEED_WATER = 299792458.0 / 1.34
_BANDS = {"blue": 2, "green": 1}

Message = tuple[float, str, str, str]


@dataclasses.dataclass(frozen=True)
class OpticalModemConfig(RaycastBackendField, ConfigBase):
    """Optical modem parameters (module docstrings of this module and of modem_common).

    node_id: this modem's name. node_ids / node_positions: fixed modems (m, world). node_directions: one unit
    axis per fixed node (world frame; normalised here). messages: rows [time s, sender, receiver, payload].
    max_range: m. cone_angle: deg, half-angle of every modem's cone. clear_range: m, the link's reach in
    non-attenuating water. water: a WaterType preset (``jerlov_I`` ... ``jerlov_9C``). band: "blue" or "green".
    bit_rate: bit/s. header_bits: bits. light_speed: m/s. fading_sigma: dB. noise: False turns the fading off.
    seed: run seed.
    """

    node_id: str = "vehicle"
    node_ids: tuple[str, ...] = ("dock",)
    node_positions: tuple[tuple[float, float, float], ...] = ((0.0, 0.0, 0.0),)
    node_directions: tuple[tuple[float, float, float], ...] = ((1.0, 0.0, 0.0),)
    messages: tuple[Message, ...] = ()
    max_range: float = 50.0
    cone_angle: float = 30.0
    clear_range: float = 60.0
    water: str = "jerlov_IB"
    band: str = "blue"
    bit_rate: float = 10e6
    header_bits: float = 64.0
    light_speed: float = LIGHT_SPEED_WATER
    fading_sigma: float = 1.0
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Hydromea LUMA X (HoloOcean's reference; vendor figures: up to 10 Mbit/s, up to 50 m in clear water,
        # blue LEDs). The 30 deg half-angle cone and 60 m clear-water reach are this library's estimates.
        "luma_x": {"max_range": 50.0, "cone_angle": 30.0, "clear_range": 60.0, "bit_rate": 10e6, "band": "blue"},
        # A short-range green-LED link of the Sonardyne BlueComm 200 class (vendor: up to 10 Mbit/s, ~150 m in
        # deep clear water, wide 180 deg receiver): numbers are estimates.
        "bluecomm_200": {"max_range": 150.0, "cone_angle": 45.0, "clear_range": 180.0, "bit_rate": 10e6,
                         "band": "green", "water": "jerlov_I"},
        "ideal": {"noise": False},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        validate_network(self, _OWNER)
        require(len(self.node_directions) == len(self.node_ids), _OWNER, "node_directions",
                f"give one axis [x, y, z] (world) per node id: {len(self.node_ids)} ids, "
                f"{len(self.node_directions)} directions")
        for i, d in enumerate(self.node_directions):
            require(len(d) == 3 and all(math.isfinite(v) for v in d) and math.hypot(*d) > 0, _OWNER,
                    f"node_directions[{i}]", f"must be 3 finite numbers, not all 0, got {d!r}")
        require(0.0 < self.cone_angle <= 180.0, _OWNER, "cone_angle",
                f"must be in (0, 180] deg, got {self.cone_angle!r}")
        require_positive(self.clear_range, _OWNER, "clear_range", "m")
        require(self.water in WaterType.PRESETS, _OWNER, "water",
                f"unknown water type {self.water!r}; choose one of {sorted(WaterType.PRESETS)}")
        require(self.band in _BANDS, _OWNER, "band", f"must be 'blue' or 'green', got {self.band!r}")
        require_positive(self.light_speed, _OWNER, "light_speed", "m/s")
        require_non_negative(self.fading_sigma, _OWNER, "fading_sigma", "dB")

    def attenuation(self) -> float:
        """Beam attenuation (1/m) of the water in the LED's band."""
        return float(WaterType.preset(self.water).attenuation[_BANDS[self.band]])

    def margin_db(self, distance: Any) -> np.ndarray:
        """Link margin (dB) at ``distance`` (m) before fading (module docstring)."""
        r = np.maximum(np.asarray(distance, dtype=np.float64), 1e-3)
        return 10.0 * np.log10(self.clear_range ** 2 / r ** 2) - 10.0 * np.log10(math.e) * self.attenuation() * r


def _axes(config: OpticalModemConfig, nodes: np.ndarray, poses: np.ndarray) -> np.ndarray:
    """(M, 3) world axis of each node: the vehicle modem's sensor +x at its pose, a fixed node's direction."""
    fixed = np.asarray(config.node_directions, dtype=np.float64).reshape(-1, 3)
    fixed = fixed / np.linalg.norm(fixed, axis=1, keepdims=True)
    own = quat_to_matrix(poses[:, 3:])[:, :, 0]
    return np.where((nodes == 0)[:, None], own, fixed[np.maximum(nodes - 1, 0)] if fixed.size else own)


def optical_fates(config: OpticalModemConfig, traffic: Traffic, scene: Any, sensor_id: int) \
        -> tuple[np.ndarray, np.ndarray]:
    """(reason codes (M,), link margin dB (M,)) of every message (module docstring)."""
    c = config
    m = traffic.send_time.size
    reason = np.full(m, DELIVERED)
    if m == 0:
        return reason, np.zeros(0)
    margin = c.margin_db(traffic.distance)
    if c.noise:
        margin = margin + c.fading_sigma * host_noise.gaussian(c.seed, sensor_id, _FADING, np.arange(m), 1)[:, 0]
    reason[margin < 0.0] = TOO_WEAK
    ps, pr = traffic.sender_pose[:, :3], traffic.receiver_pose[:, :3]
    los = (pr - ps) / np.maximum(traffic.distance, 1e-9)[:, None]
    cos_cone = math.cos(math.radians(c.cone_angle))
    a_s = _axes(c, traffic.sender, traffic.sender_pose)
    a_r = _axes(c, traffic.receiver, traffic.receiver_pose)
    inside = (np.sum(a_s * los, axis=1) >= cos_cone - 1e-12) & (np.sum(a_r * -los, axis=1) >= cos_cone - 1e-12)
    reason[~inside] = OUT_OF_CONE
    if scene is not None:
        reason[blocked(scene, ps, pr, traffic.distance, c.raycast_backend)] = OCCLUDED
    reason[traffic.distance > c.max_range] = OUT_OF_RANGE
    return reason, margin


class OpticalModem(AcousticModem):
    """The vehicle's optical modem and the fixed modems it talks to (module docstring); the schedule, caching
    and sampling are the acoustic modem's."""

    speed_attr = "light_speed"
    config_class = OpticalModemConfig

    def fates(self, traffic: Traffic, scene: Any) -> tuple[np.ndarray, np.ndarray]:
        """(reason codes (M,), link margin dB (M,)) of the scheduled ``traffic`` (:func:`optical_fates`; ``scene``
        blocks the line of sight)."""
        return optical_fates(self.config, traffic, scene, self.sensor_id)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

SENSOR_KIND = _reg.SensorKind(
    name="optical_modem", description="optical modem: line of sight, range and cone limits, water attenuation",
    config_class=OpticalModemConfig, sensor_class=OpticalModem, uses_trajectory=True, render=measure_batch,
    arrays=modem_arrays, build=lambda config, device, sensor_id: OpticalModem(config, sensor_id=sensor_id),
    schema=modem_schema(), default_products=("events", "payload"),
    metadata=lambda c: {**modem_metadata(c), "attenuation_per_m": c.attenuation()},
    cli=timed_run_target("optical modem: the configured message schedule along a straight run (events .json)"),
)
