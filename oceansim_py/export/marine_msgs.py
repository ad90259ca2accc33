"""The ``marine_acoustic_msgs`` message definitions (ROS 2 package of apl-ocean-engineering/marine_msgs) and a
``rosbags`` typestore that knows them, so bags we write carry the definitions and standard readers decode them.

The field lists (types, names, constants) are those of the released package; ROS 2 identifies a type by its
fields, so they must stay exactly as they are. Comments are ours and brief.
"""

from __future__ import annotations

from typing import Any

PACKAGE = "marine_acoustic_msgs"

#: type name -> .msg text, in dependency order.
DEFINITIONS: dict[str, str] = {
    "PingInfo": """\
# Transmit/receive parameters of one ping. frequency: Hz (0 if unknown). sound_speed: m/s (0 if unknown).
float32 frequency
float32 sound_speed
# -3 dB beam widths per beam (rad); may be empty
float32[] tx_beamwidths
float32[] rx_beamwidths
""",
    "SonarImageData": """\
bool    is_bigendian

uint32  DTYPE_UINT8 = 0
uint32  DTYPE_INT8 = 1
uint32  DTYPE_UINT16 = 2
uint32  DTYPE_INT16 = 3
uint32  DTYPE_UINT32 = 4
uint32  DTYPE_INT32 = 5
uint32  DTYPE_UINT64 = 6
uint32  DTYPE_INT64 = 7
uint32  DTYPE_FLOAT32 = 8
uint32  DTYPE_FLOAT64 = 9

uint32  dtype
uint32 beam_count
# row-major samples, one row per range sample, beam_count samples per row
uint8[] data
""",
    "DetectionFlag": """\
uint8 DETECT_OK = 0
uint8 DETECT_BAD_SONAR = 1
uint8 DETECT_BAD_FILTER = 2
uint8 DETECT_BAD_USER = 4
uint8 flag
""",
    "ProjectedSonarImage": """\
# One scan of an imaging sonar. Frame: Z forward in the plane of the fan, X up. Stamp: transmit time.
std_msgs/Header header
PingInfo ping_info
geometry_msgs/Vector3[] beam_directions
# range-bin centres (m)
float32[] ranges
SonarImageData image
""",
    "RawSonarImage": """\
# Per-beam sample series of one ping. Stamp: transmit time; sample i of a beam at stamp + i / sample_rate.
std_msgs/Header header
PingInfo ping_info
float32 sample_rate
uint32  samples_per_beam
uint32 sample0
float32[] tx_delays
float32[] tx_angles
float32[] rx_angles
SonarImageData image
""",
    "SonarRanges": """\
# One ping of a profiling sonar: per-beam flags, intensities, unit vectors and ranges (m).
std_msgs/Header header
PingInfo ping_info
DetectionFlag[] flags
float32[] transmit_delays
float32[] intensities
geometry_msgs/Vector3[] beam_unit_vec
float32[] ranges
""",
    "Dvl": """\
# One bottom-track ping of a DVL; velocities in m/s, ranges in m, covariances -1 when unknown.
uint8 DVL_MODE_BOTTOM=1
uint8 DVL_MODE_WATER=2
uint8 DVL_TYPE_PISTON=0
uint8 DVL_TYPE_PHASED_ARRAY=1
std_msgs/Header header
uint8 velocity_mode
uint8 dvl_type
geometry_msgs/Vector3 velocity
float64[9] velocity_covar
float64 altitude
float64 course_gnd
float64 speed_gnd
uint8 num_good_beams
float32 sound_speed
bool beam_ranges_valid
bool beam_velocities_valid
geometry_msgs/Vector3[4] beam_unit_vec
float64[4] range
float32[4] range_covar
float32[4] beam_quality
float32[4] beam_velocity
float32[4] beam_velocity_covar
""",
}


def msgtype(name: str) -> str:
    """The full ROS 2 type name of a marine_acoustic_msgs message, e.g. ``marine_acoustic_msgs/msg/Dvl``."""
    return f"{PACKAGE}/msg/{name}"


def ros_typestore() -> Any:
    """A ``rosbags`` ROS 2 (Humble) typestore with the standard messages plus marine_acoustic_msgs."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types: dict[str, Any] = {}
    for name, text in DEFINITIONS.items():
        types.update(get_types_from_msg(text, msgtype(name)))
    store.register(types)
    return store
