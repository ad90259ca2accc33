"""Sonar images as plain dicts shaped like ROS messages, so ROS users can publish them unchanged.

marine_acoustic_msgs/ProjectedSonarImage (apl-ocean-engineering/marine_msgs)::

    std_msgs/Header header                  {"stamp": {"sec", "nanosec"}, "frame_id"}
    PingInfo ping_info                      {"frequency" (Hz), "sound_speed" (m/s),
                                             "tx_beamwidths" (rad, per beam), "rx_beamwidths" (rad, per beam)}
    geometry_msgs/Vector3[] beam_directions [{"x", "y", "z"}] unit vectors
    float32[] ranges                        range-bin centres (m), increasing
    SonarImageData image                    {"is_bigendian", "dtype", "beam_count", "data" (bytes)}

The message's frame has Z forward (boresight, in the plane of the fan) and X up, so with a right-handed frame
Y points to starboard: a beam at bearing theta (positive to starboard, elevation 0) has direction
(0, sin theta, cos theta). ``data`` is row-major with one row per range bin and the beams along the row:
len(data) = len(ranges) * beam_count * bytes per sample, little-endian.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from oceansim_py.errors import ConfigError

#: SonarImageData dtype constants.
DTYPE_UINT8 = 0
DTYPE_INT8 = 1
DTYPE_UINT16 = 2
DTYPE_INT16 = 3
DTYPE_UINT32 = 4
DTYPE_INT32 = 5
DTYPE_UINT64 = 6
DTYPE_INT64 = 7
DTYPE_FLOAT32 = 8
DTYPE_FLOAT64 = 9

_DTYPES = {np.dtype(np.uint8): DTYPE_UINT8, np.dtype(np.int8): DTYPE_INT8, np.dtype(np.uint16): DTYPE_UINT16,
           np.dtype(np.int16): DTYPE_INT16, np.dtype(np.uint32): DTYPE_UINT32, np.dtype(np.int32): DTYPE_INT32,
           np.dtype(np.uint64): DTYPE_UINT64, np.dtype(np.int64): DTYPE_INT64,
           np.dtype(np.float32): DTYPE_FLOAT32, np.dtype(np.float64): DTYPE_FLOAT64}


def beam_directions(bearings: np.ndarray) -> list[dict[str, float]]:
    """Unit vectors (message frame: Z forward, X up, Y starboard) of beams at ``bearings`` (rad, +starboard)."""
    return [{"x": 0.0, "y": math.sin(float(b)), "z": math.cos(float(b))} for b in np.asarray(bearings)]


def receive_beamwidths(bearings: np.ndarray, beam_width: float, steering: str = "constant") -> np.ndarray:
    """One-way -3 dB receive widths (rad) of beams at ``bearings`` (rad) whose broadside width is ``beam_width``
    (rad). ``"constant"``: every beam ``beam_width`` wide. ``"flat_array"`` (one flat line array phase-steered,
    pattern D((L / lambda)(sin theta - sin theta_j))): the half-power points lie at sin theta = sin theta_j +-
    sin(beam_width / 2), so beam j is arcsin(sin theta_j + s) - arcsin(sin theta_j - s) wide, s = sin(beam_width
    / 2) (about beam_width / cos theta_j; a point past +-90 deg is taken at +-90 deg)."""
    b = np.asarray(bearings, dtype=np.float64)
    if steering == "constant":
        return np.full(b.shape, float(beam_width))
    if steering != "flat_array":
        raise ConfigError(f"receive_beamwidths: steering must be 'constant' or 'flat_array', got {steering!r}")
    half = math.sin(0.5 * float(beam_width))
    return np.arcsin(np.minimum(np.sin(b) + half, 1.0)) - np.arcsin(np.maximum(np.sin(b) - half, -1.0))


def projected_sonar_image(image: np.ndarray, ranges: np.ndarray, bearings: np.ndarray, frequency: float,
                          sound_speed: float, rx_beamwidth: float | np.ndarray, tx_beamwidth: float,
                          frame_id: str = "sonar", stamp: float = 0.0) -> dict[str, Any]:
    """A ProjectedSonarImage dict of one polar image (n_ranges, n_beams), row 0 nearest, column 0 most port.

    ``ranges`` (m) must increase; ``bearings`` in rad; beam widths (-3 dB) in rad: ``rx_beamwidth`` one for every
    beam or one per beam (:func:`receive_beamwidths`), ``tx_beamwidth`` the same for every beam; ``stamp`` in
    seconds (the transmit time).
    """
    img = np.asarray(image)
    r = np.asarray(ranges, dtype=np.float32)
    b = np.asarray(bearings, dtype=np.float64)
    if img.ndim != 2 or img.shape != (r.shape[0], b.shape[0]):
        raise ConfigError(f"projected_sonar_image: image shape {img.shape} does not match {r.shape[0]} ranges x "
                          f"{b.shape[0]} beams")
    if r.shape[0] > 1 and not np.all(np.diff(r) > 0):
        raise ConfigError("projected_sonar_image: ranges must increase strictly")
    if img.dtype not in _DTYPES:
        raise ConfigError(f"projected_sonar_image: unsupported image dtype {img.dtype}; use one of "
                          f"{sorted(str(d) for d in _DTYPES)}")
    data = np.ascontiguousarray(img, dtype=img.dtype.newbyteorder("<")).tobytes()
    n_beams = int(b.shape[0])
    rx = np.asarray(rx_beamwidth, dtype=np.float64)
    if rx.ndim > 1 or rx.size not in (1, n_beams):
        raise ConfigError(f"projected_sonar_image: rx_beamwidth holds {rx.size} widths for {n_beams} beams")
    rx = np.broadcast_to(rx.reshape(-1), (n_beams,))
    sec = int(math.floor(stamp))
    nanosec = min(int(round((stamp - sec) * 1e9)), 999_999_999)
    return {
        "header": {"stamp": {"sec": sec, "nanosec": nanosec}, "frame_id": frame_id},
        "ping_info": {"frequency": float(frequency), "sound_speed": float(sound_speed),
                      "tx_beamwidths": [float(tx_beamwidth)] * n_beams,
                      "rx_beamwidths": [float(w) for w in rx]},
        "beam_directions": beam_directions(b),
        "ranges": r.tolist(),
        "image": {"is_bigendian": False, "dtype": _DTYPES[img.dtype], "beam_count": n_beams, "data": data},
    }
