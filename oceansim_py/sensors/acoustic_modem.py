"""Acoustic modem (HoloOcean §V-A, after the Blueprint Subsea SeaTrac X150): scheduled messages between the
vehicle's modem and fixed modems, delivered after distance / c, lost to range, noise, collisions and half-duplex.

Nodes, schedule, timing and how events are stored: :mod:`oceansim_py.sensors.modem_common`. A message's fate, in
this order of precedence:

1. ``out_of_range``: the distance travelled exceeds ``max_range``;
2. ``half_duplex``: the receiver is itself transmitting while the message arrives (its reception interval
   ``[arrival, arrival + duration]`` overlaps one of the receiver's own transmissions);
3. ``collision``: another in-range message reaches the same receiver with overlapping reception intervals:
   both are lost (HoloOcean drops every message sent at the same time; here the overlap is at the receiver,
   after each message's own travel time);
4. ``lost``: packet loss from the link budget (below), drawn per message;
5. else ``delivered``.

Link budget (the loss model; Urick, Principles of Underwater Sound, ch. 2-5, and Stojanovic 2007, "On the
relationship between capacity and distance in an underwater acoustic communication channel"):

    TL(r)  = 20 log10(r / 1 m) + a(f) r / 1000                 dB (spherical spreading + absorption)
    a(f)   = 0.11 f^2/(1+f^2) + 44 f^2/(4100+f^2) + 2.75e-4 f^2 + 0.003   dB/km, f in kHz (Thorp)
    SNR    = SL - TL(r) - (NL + 10 log10 B)                    dB (NL: noise spectrum level, dB re 1 uPa^2/Hz)
    Eb/N0  = SNR + 10 log10(B / R) - implementation_loss + N(0, fading_sigma^2)     dB
    BER    = Q(sqrt(2 Eb/N0)) = erfc(sqrt(Eb/N0)) / 2          (coherent BPSK in white noise)
    PER    = 1 - (1 - BER)^(8 L + header_bits)

and the message is lost when a uniform draw (keyed by the run seed, sensor id and message index) is below PER.
So the loss rises with range (TL) and with the noise level NL; ``implementation_loss`` is the gap between a real
modem in multipath and the white-noise bound, and the fading term spreads the cliff. The event's
``link_margin_db`` column holds that Eb/N0 (dB).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import ConfigBase, require_non_negative, require_positive, require_water_sound_speed
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.acoustic_positioning import poses_along
from oceansim_py.sensors.modem_common import (
    COLLISION, DELIVERED, EVENT_COLUMNS, HALF_DUPLEX, LOST, OUT_OF_RANGE, REASONS, ModemResult, Traffic, event_table,
    measure_batch, modem_arrays, node_names, schedule_traffic, stationary_pose, validate_network,
    window_events,
)
from oceansim_py.sensors.nav_common import NavSensor, check_frame_index, finite_times, timed_run_target

_OWNER = "AcousticModemConfig"
_FADING, _LOSS = 0, 1

Message = tuple[float, str, str, str]


_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def thorp_absorption_db_per_km(frequency_hz: float) -> float:
    """Thorp's absorption coefficient (dB/km) at ``frequency_hz``."""
    f2 = (frequency_hz / 1000.0) ** 2
    return 0.11 * f2 / (1 + f2) + 44.0 * f2 / (4100 + f2) + 2.75e-4 * f2 + 0.003


@dataclasses.dataclass(frozen=True)
class AcousticModemConfig(ConfigBase):
    """Acoustic modem parameters (module docstrings of this module and of modem_common).

    node_id: this modem's name. node_ids / node_positions: fixed modems (m, world). messages: rows [time s,
    sender, receiver, payload]. sound_speed: m/s. max_range: m. bit_rate: bit/s. header_bits: bits added to each
    message. frequency: Hz, carrier (absorption). bandwidth: Hz. source_level: dB re 1 uPa at 1 m. noise_level:
    dB re 1 uPa^2/Hz. implementation_loss: dB. fading_sigma: dB per message. noise: False makes delivery
    deterministic (no fading; lost only when PER >= 0.5). seed: run seed.
    """

    node_id: str = "vehicle"
    node_ids: tuple[str, ...] = ("topside",)
    node_positions: tuple[tuple[float, float, float], ...] = ((0.0, 0.0, 0.0),)
    messages: tuple[Message, ...] = ()
    sound_speed: float = 1500.0
    max_range: float = 1000.0
    bit_rate: float = 100.0
    header_bits: float = 64.0
    frequency: float = 28000.0
    bandwidth: float = 8000.0
    source_level: float = 176.0
    noise_level: float = 50.0
    implementation_loss: float = 10.0
    fading_sigma: float = 3.0
    noise: bool = True
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Blueprint Subsea SeaTrac X150 (HoloOcean's reference; datasheet: 24-32 kHz, 100 bit/s, 1 km range).
        # Source level 176 dB and the 64-bit header are this library's estimates.
        "seatrac_x150": {"max_range": 1000.0, "bit_rate": 100.0, "frequency": 28000.0, "bandwidth": 8000.0,
                         "source_level": 176.0},
        # EvoLogics S2C R 18/34 (datasheet: 18-34 kHz, up to 13.9 kbit/s, 3.5 km); source level 184 dB estimate.
        "evologics_s2c_r_18_34": {"max_range": 3500.0, "bit_rate": 13900.0, "frequency": 26000.0,
                                  "bandwidth": 16000.0, "source_level": 184.0},
        # WHOI Micro-Modem 2 at 25 kHz, PSK rate 5 kbit/s class over ~3 km (public WHOI figures of the class);
        # source level 190 dB re 1 uPa (a 5 kHz band) estimate.
        "whoi_micromodem_psk": {"max_range": 3000.0, "bit_rate": 5000.0, "frequency": 25000.0,
                                "bandwidth": 5000.0, "source_level": 190.0},
        "ideal": {"noise": False, "implementation_loss": 0.0},
    }

    def validate(self) -> None:
        validate_network(self, _OWNER)
        require_water_sound_speed(self.sound_speed, _OWNER)
        require_positive(self.frequency, _OWNER, "frequency", "Hz")
        require_positive(self.bandwidth, _OWNER, "bandwidth", "Hz")
        for name in ("source_level", "noise_level", "implementation_loss"):
            v = getattr(self, name)
            if not math.isfinite(v):
                raise ConfigError(f"{_OWNER}.{name}: must be a finite number (dB), got {v!r}")
        require_non_negative(self.fading_sigma, _OWNER, "fading_sigma", "dB")

    def eb_n0_db(self, distance: Any) -> np.ndarray:
        """Eb/N0 (dB) at ``distance`` (m) before fading (module docstring)."""
        r = np.maximum(np.asarray(distance, dtype=np.float64), 1.0)
        tl = 20.0 * np.log10(r) + thorp_absorption_db_per_km(self.frequency) * r / 1000.0
        snr = self.source_level - tl - (self.noise_level + 10.0 * math.log10(self.bandwidth))
        return snr + 10.0 * math.log10(self.bandwidth / self.bit_rate) - self.implementation_loss

    def packet_error_rate(self, eb_n0_db: Any, bits: Any) -> np.ndarray:
        """PER of ``bits`` at ``eb_n0_db``: 1 - (1 - erfc(sqrt(Eb/N0)) / 2)^bits."""
        ber = 0.5 * _erfc(np.sqrt(10.0 ** (np.asarray(eb_n0_db, dtype=np.float64) / 10.0)))
        return -np.expm1(np.asarray(bits, dtype=np.float64) * np.log1p(-ber))


def _overlaps(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """(M, K) whether interval i of a overlaps interval k of b (closed intervals)."""
    return (a0[:, None] <= b1[None, :]) & (b0[None, :] <= a1[:, None])


def acoustic_fates(config: AcousticModemConfig, traffic: Traffic, sensor_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(reason codes (M,), Eb/N0 dB (M,)) of every message (module docstring)."""
    c = config
    m = traffic.send_time.size
    reason = np.full(m, DELIVERED)
    if m == 0:
        return reason, np.zeros(0)
    ids = np.arange(m)
    margin = c.eb_n0_db(traffic.distance)
    if c.noise:
        margin = margin + c.fading_sigma * host_noise.gaussian(c.seed, sensor_id, _FADING, ids, 1)[:, 0]
    bits = 8.0 * np.array([len(p) for p in traffic.payloads]) + c.header_bits
    per = c.packet_error_rate(margin, bits)
    draw = host_noise.uniform(c.seed, sensor_id, _LOSS, ids, 1)[:, 0] if c.noise else np.full(m, 0.5)
    reason[draw <= per] = LOST
    in_range = traffic.distance <= c.max_range
    rx0, rx1 = traffic.arrival_time, traffic.receive_time
    same_rx = traffic.receiver[:, None] == traffic.receiver[None, :]
    clash = _overlaps(rx0, rx1, rx0, rx1) & same_rx & in_range[None, :] & in_range[:, None] & ~np.eye(m, dtype=bool)
    reason[clash.any(axis=1)] = COLLISION
    tx_end = traffic.send_time + traffic.duration
    own_tx = traffic.receiver[:, None] == traffic.sender[None, :]
    reason[(_overlaps(rx0, rx1, traffic.send_time, tx_end) & own_tx).any(axis=1)] = HALF_DUPLEX
    reason[~in_range] = OUT_OF_RANGE
    return reason, margin


def _sample_values(source: Any) -> tuple[bytes, ...]:
    """The values a modem's events depend on in ``source`` (a Trajectory's times and poses, or the pose array), as
    bytes: the event cache must miss when an array is changed in place and passed again."""
    arrays = (source.times, source.poses) if hasattr(source, "times") and hasattr(source, "poses") else (source,)
    return tuple(np.asarray(a, dtype=np.float64).tobytes() for a in arrays)


class AcousticModem(NavSensor):
    """The vehicle's acoustic modem and the fixed modems it talks to (module docstring). ``sensor_id`` keys the
    noise. The whole schedule is simulated once per trajectory and split into samples."""

    speed_attr = "sound_speed"
    config_class = AcousticModemConfig
    #: (source, its sample values, scene, event table, payloads) of the last :meth:`events` call.
    _cache: tuple[Any, tuple[bytes, ...], Any, np.ndarray, list[bytes]] | None = None

    def fates(self, traffic: Traffic, scene: Any) -> tuple[np.ndarray, np.ndarray]:
        """(reason codes (M,), Eb/N0 dB (M,)) of the scheduled ``traffic`` (:func:`acoustic_fates`); the acoustic
        link does not ray-cast, so ``scene`` is not used (the optical modem's override uses it)."""
        return acoustic_fates(self.config, traffic, self.sensor_id)

    def events(self, source: Any, scene: Any = None) -> tuple[np.ndarray, list[bytes]]:
        """Every scheduled message as an event ((M, 11), :data:`EVENT_COLUMNS`) and the payloads, with this
        modem on ``source`` (a Trajectory, or a pose (7,) of a stationary modem)."""
        what = f"{type(self).__name__}.measure"
        if poses_along(source) is None:
            stationary_pose(source, what)
        values = _sample_values(source)
        cached = self._cache
        if cached is not None and cached[0] is source and cached[1] == values and cached[2] is scene:
            return cached[3], cached[4]
        traffic = schedule_traffic(self.config, source, getattr(self.config, self.speed_attr), what)
        reason, margin = self.fates(traffic, scene)
        table = event_table(traffic, reason, margin)
        self._cache = (source, values, scene, table, traffic.payloads)
        return table, traffic.payloads

    def measure(self, source: Any, times: Any, scene: Any = None, frame_index: int = 0,
                rate_hz: float | None = None) -> ModemResult:
        """The events of the samples at ``times`` (s): sample ``frame_index + i`` holds the events received in
        its interval (:func:`~oceansim_py.sensors.modem_common.window_events`)."""
        what = f"{type(self).__name__}.measure"
        fi = check_frame_index(frame_index, what)
        if times is None:
            raise ConfigError(f"{what}: give times (s), the samples whose intervals collect the received messages "
                              f"(e.g. a Trajectory's times); a modem has no rate of its own to sample at")
        t = finite_times(times, what)
        if rate_hz is not None and not (isinstance(rate_hz, (int, float)) and math.isfinite(rate_hz) and rate_hz > 0):
            raise ConfigError(f"{what}: rate_hz must be a finite number > 0 (Hz), got {rate_hz!r}")
        table, payloads = self.events(source, scene)
        events, blobs = window_events(table, payloads, t, fi, rate_hz)
        return ModemResult(events, blobs, t, fi)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module


def modem_schema() -> tuple[_reg.Product, ...]:
    """The schema every modem writes: its events and their payloads (modem_common's module docstring)."""
    return (
        _reg.Product("events", _reg.ARRAY, "float64", "one row per event received in the sample's interval: "
                     + ", ".join(EVENT_COLUMNS) + " (s, flag, code, node index, m, dB, bytes)",
                     ("*", len(EVENT_COLUMNS))),
        _reg.Product("payload", _reg.ARRAY, "uint8", "the events' payload bytes, concatenated in row order", ("*",)),
    )


def modem_metadata(config: Any) -> dict[str, Any]:
    return {"nodes": node_names(config), "reasons": list(REASONS), "event_columns": list(EVENT_COLUMNS),
            "node_positions_world": [list(p) for p in config.node_positions]}


SENSOR_KIND = _reg.SensorKind(
    name="acoustic_modem", description="acoustic modem: scheduled messages with travel time, range, noise, "
                                       "collisions",
    config_class=AcousticModemConfig, sensor_class=AcousticModem, uses_trajectory=True, render=measure_batch,
    arrays=modem_arrays, build=lambda config, device, sensor_id: AcousticModem(config, sensor_id=sensor_id),
    schema=modem_schema(), default_products=("events", "payload"), metadata=modem_metadata,
    cli=timed_run_target("acoustic modem: the configured message schedule along a straight run (events .json)"),
)
