"""What the acoustic positioning sensors (USBL, LBL) share: transponders (beacons) fixed in the world, the
two-way interrogation of each beacon with a moving head, occlusion by ray cast, range noise and outliers.

Timing of one ping (the head at sensor pose p(t), a beacon at b, sound speed c, turn-around delay tau):

    the head transmits at t0 (the sample time) from p(t0); the beacon hears it at tb = t0 + |b - p(t0)| / c,
    replies at tb + tau, and the reply reaches the moving head at t_rx, the solution of
    t_rx = tb + tau + |b - p(t_rx)| / c (fixed-point iteration; it contracts by |v| / c ~ 1e-3 per step).

The two-way travel time is ``T = t_rx - t0 - tau`` and the measured slant range ``c T / 2`` (the head knows
tau), plus N(0, range_sigma^2); with probability ``outlier_probability`` a reply is a multipath arrival,
``U(0, outlier_range)`` m longer. A beacon gives no fix when it is beyond ``max_range`` (the outbound slant
range), when the scene blocks either leg of the path (a ray cast from the head to the beacon at transmit and
at receive: a hit more than ``OCCLUSION_TOLERANCE`` short of the beacon), or for the sensor's own reasons (the
USBL's coverage cone). With ``surface_multipath`` a blocked beacon may still be heard by its reply reflected once
by the sea surface (:func:`surface_bounce`). Positions along a Trajectory come from the sensor's own trajectory (vehicle x mount),
held at its first / last pose outside its span; bare poses are taken as stationary.

Noise is counter-based (:mod:`oceansim_py.sensors.host_noise`): draw ``(seed, sensor id, stream, sample index,
beacon index)``, so a sample's fixes do not depend on the batch or shard it is rendered in.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from oceansim_py.io.config import (require, require_non_negative, require_positive, require_seed,
                                    require_water_sound_speed)
from oceansim_py.sensors import host_noise

#: a ray cast towards a beacon that stops within this distance (m) of it counts as reaching it (a beacon
#: standing on the seabed)
OCCLUSION_TOLERANCE = 0.05
#: fixed-point iterations of the reply time (error ~ (|v| / c)^n of the travel time)
REPLY_ITERATIONS = 4
RANGE_STREAM, OUTLIER_STREAM, OUTLIER_SIZE_STREAM = 0, 1, 2


class BeaconLayout:
    """Mixin of the positioning configs (their ``beacon_ids`` and ``beacon_positions`` fields): the number of
    beacons, which shapes the per-beacon products, and the beacons as dataset metadata."""

    @property
    def n_beacons(self) -> int:
        return len(self.beacon_ids)  # type: ignore[attr-defined]

    def beacon_metadata(self) -> dict[str, Any]:
        """``beacon_ids`` and ``beacon_positions_world`` (m, world) for the manifest."""
        return {"beacon_ids": list(self.beacon_ids),  # type: ignore[attr-defined]
                "beacon_positions_world": [list(p) for p in self.beacon_positions]}  # type: ignore[attr-defined]


def validate_beacons(ids: Any, positions: Any, owner: str) -> None:
    """``beacon_ids``: distinct integers, one per ``beacon_positions`` row (x, y, z world metres, finite)."""
    require(len(ids) >= 1, owner, "beacon_ids", "give at least one beacon (its id and a beacon_positions row)")
    require(len(set(ids)) == len(ids), owner, "beacon_ids", f"ids must be distinct, got {list(ids)}")
    require(len(positions) == len(ids), owner, "beacon_positions",
            f"give one [x, y, z] (m, world) per beacon id: {len(ids)} ids, {len(positions)} positions")
    for i, p in enumerate(positions):
        require(len(p) == 3 and all(math.isfinite(v) for v in p), owner, f"beacon_positions[{i}]",
                f"must be 3 finite numbers (m, world), got {p!r}")


def validate_ranging(config: Any, owner: str) -> None:
    """The ranging fields every positioning config has."""
    validate_beacons(config.beacon_ids, config.beacon_positions, owner)
    require_positive(config.rate, owner, "rate", "Hz")
    require_water_sound_speed(config.sound_speed, owner)
    require_non_negative(config.turnaround_delay, owner, "turnaround_delay", "s")
    require_positive(config.max_range, owner, "max_range", "m")
    require_non_negative(config.range_sigma, owner, "range_sigma", "m")
    require(0.0 <= config.outlier_probability <= 1.0, owner, "outlier_probability",
            f"must be in [0, 1], got {config.outlier_probability!r}")
    require_non_negative(config.outlier_range, owner, "outlier_range", "m")
    require(isinstance(config.surface_multipath, bool), owner, "surface_multipath",
            f"must be true or false, got {config.surface_multipath!r}")
    require_seed(config.seed, owner)


def poses_along(source: Any) -> Callable[[np.ndarray], np.ndarray] | None:
    """``times (N,) -> poses (N, 7)`` of the sensor: its trajectory's (held outside its span), or ``None`` for
    bare poses (stationary heads)."""
    if hasattr(source, "at") and hasattr(source, "start_time"):
        t0, t1 = float(source.start_time), float(source.end_time)
        return lambda t: np.asarray(source.at(np.clip(np.asarray(t, dtype=np.float64), t0, t1)), dtype=np.float64)
    return None


@dataclasses.dataclass
class Interrogation:
    """Geometry of every (ping, beacon) pair, arrays (B, n): outbound and return slant ranges (m), the reply's
    arrival time (s), the head's pose at arrival (B, n, 7), the two-way travel time (s, excluding the
    turn-around), and the reasons for no fix (bool)."""

    outbound: np.ndarray
    inbound: np.ndarray
    reply_time: np.ndarray
    receive_pose: np.ndarray
    travel_time: np.ndarray
    out_of_range: np.ndarray
    occluded: np.ndarray


def interrogate(times: np.ndarray, poses: np.ndarray, along: Any, beacons: np.ndarray, sound_speed: float,
                turnaround: float, max_range: float, scene: Any, backend: str | None) -> Interrogation:
    """Ping every beacon from each of B poses at ``times`` (module docstring). ``along``: :func:`poses_along`.
    ``backend``: the config's ``raycast_backend`` of the occlusion casts (``None``: the scene's)."""
    b, n = poses.shape[0], beacons.shape[0]
    t0 = np.zeros(b) if times is None else np.asarray(times, dtype=np.float64)
    p0 = poses[:, None, :3]
    outbound = np.linalg.norm(beacons[None] - p0, axis=2)                       # (B, n)
    t_beacon = t0[:, None] + outbound / sound_speed
    if along is None:
        rx_pose = np.broadcast_to(poses[:, None, :], (b, n, 7)).copy()
        inbound = outbound.copy()
        t_rx = t_beacon + turnaround + inbound / sound_speed
    else:
        t_rx = t_beacon + turnaround + outbound / sound_speed
        for _ in range(REPLY_ITERATIONS):
            rx_pose = along(t_rx.reshape(-1)).reshape(b, n, 7)
            inbound = np.linalg.norm(beacons[None] - rx_pose[..., :3], axis=2)
            t_rx = t_beacon + turnaround + inbound / sound_speed
        rx_pose = along(t_rx.reshape(-1)).reshape(b, n, 7)
        inbound = np.linalg.norm(beacons[None] - rx_pose[..., :3], axis=2)
    occluded = np.zeros((b, n), dtype=bool)
    if scene is not None:
        for origins, dist in ((np.broadcast_to(p0, (b, n, 3)), outbound), (rx_pose[..., :3], inbound)):
            targets = np.broadcast_to(beacons[None], (b, n, 3)).reshape(-1, 3)
            occluded |= blocked(scene, origins.reshape(-1, 3), targets, dist.reshape(-1), backend).reshape(b, n)
    return Interrogation(outbound, inbound, t_rx, rx_pose, t_rx - t0[:, None] - turnaround, outbound > max_range,
                         occluded)


@dataclasses.dataclass
class SurfaceBounce:
    """The once-surface-reflected replies (image-source method) of :func:`surface_bounce`: ``usable`` (B, n) where
    the direct path is blocked but the reflected one is clear and within range, the reflected geometry ``geo``
    (its ranges are the reflected path lengths) and the image beacons (n, 3) the head hears them from."""

    usable: np.ndarray
    geo: Interrogation
    image: np.ndarray


def surface_bounce(times: np.ndarray, poses: np.ndarray, along: Any, beacons: np.ndarray, direct: Interrogation,
                   sound_speed: float, turnaround: float, max_range: float, scene: Any,
                   backend: str | None) -> SurfaceBounce:
    """Multipath by the sea surface: a beacon whose direct path is blocked may still be heard by the reply that
    bounced once off the surface (pressure release, flat at the scene's mean ``surface_z``). By the image-source
    method the reflected path from the head to the beacon is the straight path to the beacon mirrored in the
    surface, z' = 2 z_s - z, so its timing is :func:`interrogate` with the mirrored beacons; it is usable where both
    of its legs below the surface (head -> reflection point -> beacon, outbound and inbound) are clear (a moving sea
    surface met on the way, a trough below the mean level, is the reflector, not an obstacle), the head and
    the beacon are under water, and the reflected range is within ``max_range``. The head then measures the
    reflected travel time and the direction of the image (a ghost fix above the true beacon), as real USBLs do
    behind obstacles. ``backend``: as for :func:`interrogate`."""
    z_s = float(scene.surface_z) if scene is not None else 0.0
    image = beacons.copy()
    image[:, 2] = 2.0 * z_s - beacons[:, 2]
    geo = interrogate(times, poses, along, image, sound_speed, turnaround, max_range, None, None)
    b, n = direct.occluded.shape
    under = (beacons[None, :, 2] < z_s) & (poses[:, None, 2] < z_s)
    clear = np.ones((b, n), dtype=bool)
    if scene is not None:
        # the moving sea surface is the reflector: a leg that meets it (a trough below the mean level) reaches it
        sea = next((node.id for node in scene.nodes if getattr(node, "sea_surface", None) is not None), None)
        heads = (np.broadcast_to(poses[:, None, :3], (b, n, 3)), geo.receive_pose[..., :3])
        for head in heads:
            head = head.reshape(-1, 3)
            img = np.broadcast_to(image[None], (b, n, 3)).reshape(-1, 3)
            bea = np.broadcast_to(beacons[None], (b, n, 3)).reshape(-1, 3)
            dz = img[:, 2] - head[:, 2]
            frac = np.where(dz > 0, (z_s - head[:, 2]) / np.where(dz > 0, dz, 1.0), 0.0)
            point = head + frac[:, None] * (img - head)               # where the path meets the surface
            leg_head = np.linalg.norm(point - head, axis=1)
            leg_beacon = np.linalg.norm(point - bea, axis=1)
            bad = (blocked(scene, head, point, leg_head, backend, sea)
                   | blocked(scene, bea, point, leg_beacon, backend, sea))
            clear &= ~bad.reshape(b, n)
    usable = direct.occluded & clear & under & ~geo.out_of_range
    return SurfaceBounce(usable, geo, image)


def merge_bounce(direct: Interrogation, bounce: SurfaceBounce) -> Interrogation:
    """The geometry the head measures: the reflected reply where :attr:`SurfaceBounce.usable`, else the direct
    one; ``occluded`` keeps the direct path's ground truth."""
    u = bounce.usable
    g = bounce.geo
    return Interrogation(np.where(u, g.outbound, direct.outbound), np.where(u, g.inbound, direct.inbound),
                         np.where(u, g.reply_time, direct.reply_time),
                         np.where(u[..., None], g.receive_pose, direct.receive_pose),
                         np.where(u, g.travel_time, direct.travel_time), direct.out_of_range, direct.occluded)


@dataclasses.dataclass
class Exchange:
    """One interrogation of every beacon from every sample as the head measures it (:func:`exchange`): ``geo`` the
    measured geometry (the surface-reflected reply where ``bounced``, else the direct one), ``true_range`` (B, n) m
    the direct head-beacon distance at the reply's arrival, ``heard`` (B, n) where a reply reaches the head (direct
    or reflected), ``bounced`` (B, n) where only the reflected one does, ``image`` (n, 3) the mirrored beacons the
    reflected replies come from (``None`` without ``surface_multipath``)."""

    geo: Interrogation
    true_range: np.ndarray
    heard: np.ndarray
    bounced: np.ndarray
    image: np.ndarray | None


def exchange(config: Any, times: np.ndarray | None, poses: np.ndarray, along: Any, beacons: np.ndarray,
             scene: Any) -> Exchange:
    """:func:`interrogate` the ``beacons`` (n, 3) from the samples (``times`` (B,) s or None, ``poses`` (B, 7),
    ``along`` of :func:`poses_along`) with the config's sound_speed, turnaround_delay and max_range, and with its
    ``surface_multipath`` hear a blocked beacon by its :func:`surface_bounce` reply."""
    c = config
    geo = interrogate(times, poses, along, beacons, c.sound_speed, c.turnaround_delay, c.max_range, scene,
                      c.raycast_backend)
    true_range = geo.inbound
    heard = ~geo.occluded
    bounced = np.zeros(heard.shape, dtype=bool)
    image = None
    if c.surface_multipath:
        bounce = surface_bounce(times, poses, along, beacons, geo, c.sound_speed, c.turnaround_delay, c.max_range,
                                scene, c.raycast_backend)
        geo, bounced, image = merge_bounce(geo, bounce), bounce.usable, bounce.image
        heard = heard | bounced
    return Exchange(geo, true_range, heard, bounced, image)


def blocked(scene: Any, origins: np.ndarray, targets: np.ndarray, distance: np.ndarray,
            backend: str | None, reflector: int | None = None) -> np.ndarray:
    """(N,) True where the scene blocks the straight path from ``origins`` to ``targets`` (world, m): a ray cast
    (through the sensor config's ``raycast_backend``, ``backend``; ``None``: the scene's) hit more than
    :data:`OCCLUSION_TOLERANCE` short of the target, unless it hit object ``reflector`` (the node id of the
    surface the path reflects off, which it reaches there)."""
    out = np.zeros(distance.shape, dtype=bool)
    ok = distance > OCCLUSION_TOLERANCE
    if not ok.any():
        return out
    hit = scene.raycast(origins[ok], targets[ok] - origins[ok], distance[ok], backend=backend).numpy()
    out[ok] = (hit["face"] >= 0) & (hit["distance"] < distance[ok] - OCCLUSION_TOLERANCE)
    if reflector is not None:
        out[ok] &= hit["object"] != reflector
    return out


def measured_ranges(config: Any, sensor_id: int, frames: np.ndarray, travel_time: np.ndarray) \
        -> tuple[np.ndarray, np.ndarray]:
    """(ranges (B, n) m, outlier flags (B, n)): ``c T / 2`` plus the range noise and multipath outliers."""
    c = config
    rng = c.sound_speed * travel_time / 2.0
    outlier = np.zeros(rng.shape, dtype=bool)
    if c.noise:
        n = rng.shape[1]
        rng = rng + c.range_sigma * host_noise.gaussian(c.seed, sensor_id, RANGE_STREAM, frames, n)
        outlier = host_noise.uniform(c.seed, sensor_id, OUTLIER_STREAM, frames, n) <= c.outlier_probability
        outlier &= c.outlier_probability > 0
        extra = c.outlier_range * host_noise.uniform(c.seed, sensor_id, OUTLIER_SIZE_STREAM, frames, n)
        rng = np.where(outlier, rng + extra, rng)
    return rng, outlier


def measure_batch(sensor: Any, batch: Any) -> Any:
    """A positioning sensor's registry ``render``: ping along its own trajectory at the batch's sample times."""
    return sensor.measure(batch.trajectory, times=batch.times, scene=batch.scene, frame_index=batch.frame_index)
