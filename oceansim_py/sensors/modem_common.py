"""What the acoustic and optical modems share: the nodes of the network, the message schedule, the timing of each
message, and how events are stored in a dataset.

**Nodes.** Node 0 is the modem this sensor models, on the vehicle at its mount (``node_id``, default
``"vehicle"``); nodes 1.. are fixed modems (a topside or seabed modem at a beacon), ``node_ids`` with one
``node_positions`` row each (m, world frame).

**Schedule.** ``messages``: rows ``[time s, sender, receiver, payload]``, e.g.
``[2.0, vehicle, topside, "depth 12.5"]``; a payload written ``0x...`` is bytes in hex, anything else is
UTF-8 text. Message ``k`` is row ``k`` of the schedule (its id in the dataset and its noise counter).

**Timing.** A message of ``L`` payload bytes lasts ``(8 L + header_bits) / bit_rate`` s. Sent at ``t_s`` from the
sender's position then, its first bit reaches the receiver at ``t_a``, the solution of ``t_a = t_s + |p_r(t_a) -
p_s(t_s)| / c`` (the receiver may move; fixed-point iteration), and its last bit at ``t_a + duration`` (the
receive time). The vehicle is held at its first / last pose outside its trajectory's span.

**Events in a dataset.** Every message becomes one event, whatever its fate. A sample at time ``t_m`` of a modem
sampled at ``rate_hz`` holds the events whose receive time lies in ``(t_(m-1), t_m]`` (sample 0: every event up to
``t_0``; ``t_(m-1)`` is the previous entry of ``times``, or ``t_m - 1 / rate_hz`` for the first sample of a batch),
so each event appears in exactly one sample and a message still travelling at the last sample appears in none. A
receive time within :data:`RECEIVE_TIME_TOLERANCE` after a sample time counts as at it: the sum ``send + travel +
duration`` of exact hand numbers (0.2 s + 0.1 s = 0.30000000000000004 in binary) stays in the sample at 0.3 s.
Products: ``events``, a float64 array (n_events, 11) with the columns :data:`EVENT_COLUMNS` (node indices into
the manifest's ``nodes``; reason codes into its ``reasons``), and ``payload``, the uint8 concatenation of the
events' payloads in row order (``payload_bytes`` long each); :func:`decode_events` turns a sample back into
readable records.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import require, require_non_negative, require_positive, require_seed
from oceansim_py.poses import as_poses
from oceansim_py.sensors.acoustic_positioning import poses_along

#: reason codes of an event (column ``reason``): 0 delivered, else why it was not
REASONS = ("delivered", "out_of_range", "lost", "collision", "half_duplex", "occluded", "out_of_cone", "too_weak")
DELIVERED, OUT_OF_RANGE, LOST, COLLISION, HALF_DUPLEX, OCCLUDED, OUT_OF_CONE, TOO_WEAK = range(len(REASONS))
#: columns of the ``events`` product
EVENT_COLUMNS = ("message", "send_time", "arrival_time", "receive_time", "delivered", "reason", "sender",
                 "receiver", "distance", "link_margin_db", "payload_bytes")
ARRIVAL_ITERATIONS = 4
#: s; a receive time this little after a sample time belongs to that sample (rounding of send + travel + duration)
RECEIVE_TIME_TOLERANCE = 1e-9


def payload_bytes(payload: str) -> bytes:
    """A schedule payload as bytes: ``0x...`` hex, else UTF-8 text."""
    if payload.startswith("0x"):
        return bytes.fromhex(payload[2:])
    return payload.encode("utf-8")


def validate_network(config: Any, owner: str) -> None:
    """Nodes and schedule of a modem config (module docstring)."""
    require(isinstance(config.node_id, str) and bool(config.node_id), owner, "node_id",
            "must be a non-empty name for this modem")
    names = (config.node_id, *config.node_ids)
    require(len(set(names)) == len(names), owner, "node_ids",
            f"node names must be distinct and differ from node_id {config.node_id!r}, got {list(config.node_ids)}")
    require(len(config.node_positions) == len(config.node_ids), owner, "node_positions",
            f"give one [x, y, z] (m, world) per node id: {len(config.node_ids)} ids, {len(config.node_positions)} "
            f"positions")
    for i, p in enumerate(config.node_positions):
        require(len(p) == 3 and all(math.isfinite(v) for v in p), owner, f"node_positions[{i}]",
                f"must be 3 finite numbers (m, world), got {p!r}")
    for k, (t, sender, receiver, payload) in enumerate(config.messages):
        where = f"messages[{k}]"
        require(math.isfinite(t), owner, where, f"time must be finite, got {t!r}")
        for role, name in (("sender", sender), ("receiver", receiver)):
            require(name in names, owner, where, f"{role} {name!r} is not a node; nodes are {list(names)}")
        require(sender != receiver, owner, where, f"sender and receiver are both {sender!r}")
        try:
            payload_bytes(payload)
        except ValueError:
            raise ConfigError(f"{owner}.{where}: payload {payload!r} starts with 0x but is not hex; write hex "
                              f"digits in pairs or drop the 0x") from None
    require_positive(config.bit_rate, owner, "bit_rate", "bit/s")
    require_non_negative(config.header_bits, owner, "header_bits", "bits")
    require_positive(config.max_range, owner, "max_range", "m")
    require_seed(config.seed, owner)


@dataclasses.dataclass
class Traffic:
    """Every message of the schedule (M of them), in schedule order: sender / receiver node index, send,
    arrival (first bit) and receive (last bit) times (s), duration (s), the sender's pose at sending and the
    receiver's at arrival ((M, 7) world), the distance travelled (m), and the payloads."""

    sender: np.ndarray
    receiver: np.ndarray
    send_time: np.ndarray
    arrival_time: np.ndarray
    receive_time: np.ndarray
    duration: np.ndarray
    sender_pose: np.ndarray
    receiver_pose: np.ndarray
    distance: np.ndarray
    payloads: list[bytes]


def node_names(config: Any) -> list[str]:
    return [config.node_id, *config.node_ids]


def stationary_pose(source: Any, what: str) -> np.ndarray:
    """The one pose (7,) float64 of a stationary modem, its quaternion normalised; ``ConfigError`` naming ``what``
    for anything else (a wrong shape, a non-finite value, a non-unit quaternion, several poses: a moving modem
    needs a Trajectory, which gives the times between its poses)."""
    as_poses(source, f"{what} pose")  # validation only: it returns float32, and positions keep float64 here
    pose = np.array(getattr(source, "poses", source), dtype=np.float64).reshape(-1, 7)
    if pose.shape[0] != 1:
        raise ConfigError(f"{what}: got {pose.shape[0]} poses; a stationary modem takes one pose (7,), a moving one a "
                          f"Trajectory")
    still = pose[0]
    still[3:] /= np.linalg.norm(still[3:])
    return still


def schedule_traffic(config: Any, source: Any, speed: float, what: str = "modem") -> Traffic:
    """Timing of every scheduled message (module docstring) with the vehicle's modem on ``source`` (its
    Trajectory, or one pose (7,) of a stationary modem, checked by :func:`stationary_pose`; errors name ``what``)
    and signals travelling at ``speed`` (m/s)."""
    names = node_names(config)
    along = poses_along(source)
    if along is None:
        still = stationary_pose(source, what)
        along = lambda t: np.tile(still, (np.size(t), 1))  # noqa: E731 - a stationary modem
    fixed = np.array([[*p, 0.0, 0.0, 0.0, 1.0] for p in config.node_positions], dtype=np.float64).reshape(-1, 7)

    def poses_of(nodes: np.ndarray, times: np.ndarray) -> np.ndarray:
        out = np.zeros((nodes.size, 7))
        own = nodes == 0
        if own.any():
            out[own] = along(times[own])
        if (~own).any():
            out[~own] = fixed[nodes[~own] - 1]
        return out

    m = len(config.messages)
    sender = np.array([names.index(row[1]) for row in config.messages], dtype=np.int64)
    receiver = np.array([names.index(row[2]) for row in config.messages], dtype=np.int64)
    t_send = np.array([row[0] for row in config.messages], dtype=np.float64)
    payloads = [payload_bytes(row[3]) for row in config.messages]
    duration = (8.0 * np.array([len(p) for p in payloads], dtype=np.float64) + config.header_bits) / config.bit_rate
    p_send = poses_of(sender, t_send)
    t_arrive = t_send.copy()
    for _ in range(ARRIVAL_ITERATIONS):
        p_recv = poses_of(receiver, t_arrive)
        t_arrive = t_send + np.linalg.norm(p_recv[:, :3] - p_send[:, :3], axis=1) / speed
    p_recv = poses_of(receiver, t_arrive)
    distance = np.linalg.norm(p_recv[:, :3] - p_send[:, :3], axis=1) if m else np.zeros(0)
    return Traffic(sender, receiver, t_send, t_arrive, t_arrive + duration, duration, p_send, p_recv, distance,
                   payloads)


def event_table(traffic: Traffic, reason: np.ndarray, margin_db: np.ndarray) -> np.ndarray:
    """(M, 11) events in :data:`EVENT_COLUMNS` order."""
    m = traffic.send_time.size
    return np.column_stack([np.arange(m), traffic.send_time, traffic.arrival_time, traffic.receive_time,
                            reason == DELIVERED, reason, traffic.sender, traffic.receiver, traffic.distance,
                            margin_db, [len(p) for p in traffic.payloads]]).astype(np.float64).reshape(m, 11)


@dataclasses.dataclass
class ModemResult:
    """Per sample (N): ``events`` (a list of (n_i, 11) float64 arrays, :data:`EVENT_COLUMNS`) and ``payload``
    (a list of uint8 arrays, the events' payloads concatenated). ``times`` (N,) s."""

    events: list[np.ndarray]
    payload: list[np.ndarray]
    times: np.ndarray | None
    frame_index: int

    def numpy(self) -> dict[str, Any]:
        """The per-sample lists (ragged: a sample's number of events varies)."""
        return {"events": [e.copy() for e in self.events], "payload": [p.copy() for p in self.payload]}


def window_events(table: np.ndarray, payloads: list[bytes], times: np.ndarray, first_sample: int,
                  rate_hz: float | None) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Split the events into the samples at ``times`` (module docstring): sample ``m`` takes receive times in
    ``(t_(m-1), t_m]``, the previous entry of ``times`` as the lower bound (so consecutive samples share their
    boundary exactly, whatever the rounding of ``t_m - 1 / rate_hz``), ``t_m - 1 / rate_hz`` for the first sample
    of a batch, and sample 0 everything up to ``t_0``. Without ``rate_hz`` the first sample's interval is the spacing
    of ``times`` (a single sample then takes every event up to its time)."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    if rate_hz is not None:
        period = 1.0 / float(rate_hz)
    elif t.size > 1:
        period = float(t[1] - t[0])
    else:
        period = math.inf
    received = table[:, 3] - RECEIVE_TIME_TOLERANCE if table.size else np.zeros(0)
    events, blobs = [], []
    for i, tm in enumerate(t):
        if first_sample + i == 0:
            lo = -math.inf
        else:
            lo = t[i - 1] if i > 0 else tm - period
        rows = np.nonzero((received > lo) & (received <= tm))[0]
        events.append(table[rows].copy() if rows.size else np.zeros((0, len(EVENT_COLUMNS))))
        blobs.append(np.frombuffer(b"".join(payloads[k] for k in rows), dtype=np.uint8).copy())
    return events, blobs


def decode_events(sample: dict[str, Any], meta: dict[str, Any]) -> list[dict[str, Any]]:
    """A dataset sample of a modem as records: message id, times (s), delivered, reason (text), sender and
    receiver (node names), distance (m), link margin (dB), payload (bytes) and payload_hex. ``meta`` is the
    sensor's manifest entry (its ``nodes`` and ``reasons``)."""
    events = np.asarray(sample["events"], dtype=np.float64).reshape(-1, len(EVENT_COLUMNS))
    blob = bytes(np.asarray(sample.get("payload", np.zeros(0, dtype=np.uint8)), dtype=np.uint8))
    nodes, reasons = meta["nodes"], meta["reasons"]
    out, offset = [], 0
    for row in events:
        rec = dict(zip(EVENT_COLUMNS, row.tolist()))
        n = int(rec["payload_bytes"])
        payload = blob[offset:offset + n]
        offset += n
        out.append({"message": int(rec["message"]), "send_time": rec["send_time"],
                    "arrival_time": rec["arrival_time"], "receive_time": rec["receive_time"],
                    "delivered": bool(rec["delivered"]), "reason": reasons[int(rec["reason"])],
                    "sender": nodes[int(rec["sender"])], "receiver": nodes[int(rec["receiver"])],
                    "distance": rec["distance"], "link_margin_db": rec["link_margin_db"], "payload": payload,
                    "payload_hex": payload.hex()})
    return out


def measure_batch(sensor: Any, batch: Any) -> ModemResult:
    """A modem's registry ``render``: the network along the sensor's own trajectory, split into the batch's
    samples."""
    return sensor.measure(batch.trajectory, batch.times, scene=batch.scene, frame_index=batch.frame_index,
                          rate_hz=batch.rate_hz)


def modem_arrays(result: ModemResult, wanted: Any) -> dict[str, np.ndarray]:
    """Registry ``arrays``: the ragged per-sample lists as object arrays (one array per sample)."""
    out: dict[str, np.ndarray] = {}
    for name in ("events", "payload"):
        items = getattr(result, name)
        arr = np.empty(len(items), dtype=object)
        arr[:] = items
        out[name] = arr
    return out
