"""What the exporters and the viewer share: reading a dataset's streams whichever table layout the reader uses,
sensor mounts, the vehicle trajectory of the rig, frame names and ROS time stamps.

Table products come back from the dataset reader either as one array (``position`` (3,)) or as scalar columns
``position_0 .. position_k``; :func:`product` accepts both.
"""

from __future__ import annotations

import inspect
import re
from types import SimpleNamespace
from typing import Any

import numpy as np

from oceansim_py.dataset.loader import DatasetReader
from oceansim_py.poses import matrix_to_quat, pose_to_matrix

#: the world frame (Z up, metres) and the vehicle frame (FLU) in exported messages and transforms
WORLD_FRAME = "map"
VEHICLE_FRAME = "base_link"

#: rotation (columns = child axes in the parent FLU sensor frame) of the ROS camera optical frame
#: (x right, y down, z forward) and of the marine_acoustic_msgs sonar frame (x up, y starboard, z forward)
OPTICAL_IN_FLU = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
SONAR_IN_FLU = np.array([[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [1.0, 0.0, 0.0]])
#: the marine_acoustic_msgs/Dvl frame (x forward, z along the DVL's look direction, down): FLU turned 180 deg
#: about x
DVL_IN_FLU = np.diag([1.0, -1.0, -1.0])


def product(sample: dict[str, Any], name: str) -> np.ndarray | None:
    """Product ``name`` of a sample as an array: the array itself, or its ``name_0..name_k`` table columns
    stacked in index order; ``None`` when the sample has neither."""
    if name in sample:
        return np.asarray(sample[name])
    pattern = re.compile(rf"^{re.escape(name)}_(\d+)$")
    cols = sorted((int(m.group(1)), key) for key in sample if (m := pattern.match(key)))
    if not cols:
        return None
    return np.array([sample[key] for _, key in cols])


def mount_matrix(reader: DatasetReader, sensor: str) -> np.ndarray:
    """4x4 vehicle_T_sensor of ``sensor`` (its rig mount)."""
    return pose_to_matrix(np.asarray(reader.sensors[sensor]["mount"], dtype=np.float64))


def vehicle_trajectory(reader: DatasetReader, scene: Any = None) -> Any:
    """The rig's vehicle :class:`~oceansim_py.trajectory.Trajectory` (ground truth), rebuilt from the manifest.
    ``scene`` is only needed by trajectories planned against the scene (lawnmower); it is loaded when needed."""
    from oceansim_py.dataset.rig import TRAJECTORY_TYPES
    from oceansim_py.dataset.worker import build_trajectory
    from oceansim_py.trajectory import Trajectory

    spec = dict(reader.manifest["rig"]["trajectory"])   # as validated (paths resolved) when generated
    ctor = getattr(Trajectory, TRAJECTORY_TYPES[spec["type"]])
    if scene is None and "scene" in inspect.signature(ctor).parameters and "scene" not in spec:
        from oceansim_py.scene import load_scene

        scene = load_scene(reader.manifest["rig"]["scene"])
    return build_trajectory(SimpleNamespace(trajectory=spec, source=str(reader.path / "manifest.json")), scene)


def tick_times(reader: DatasetReader) -> np.ndarray:
    """Times (s) of the dataset's frames (the rig ticks of its complete shards, :meth:`DatasetReader.ticks`)."""
    return reader.start_time + reader.ticks().astype(np.float64) / reader.tick_rate


def stamp_ns(t: float) -> int:
    """Seconds -> integer nanoseconds (rounded)."""
    return int(round(float(t) * 1e9))


def sec_nanosec(t: float) -> tuple[int, int]:
    """Seconds -> (sec, nanosec) of a ROS ``builtin_interfaces/Time`` (nanosec in 0..999_999_999)."""
    ns = stamp_ns(t)
    return ns // 1_000_000_000, ns % 1_000_000_000


def ros_topic(topic: str) -> str:
    """``topic`` as a valid ROS 2 topic name: in every ``/``-separated token, characters other than ASCII
    letters, digits and ``_`` become ``_``, and a token starting with a digit gets a leading ``_`` (rig sensor
    names may hold ``-`` and start with a digit; ``ros2 bag play`` refuses such topics)."""
    tokens = []
    for token in topic.split("/"):
        clean = re.sub(r"[^A-Za-z0-9_]", "_", token)
        tokens.append(f"_{clean}" if clean[:1].isdigit() else clean)
    return "/".join(tokens)


def sensor_frame(sensor: str, kind: str = "") -> str:
    """Frame name of a sensor (its FLU mount frame), or of its ``optical`` / ``sonar`` sub-frame."""
    return f"{sensor}_{kind}" if kind else sensor


def rotation_to_quat(r: np.ndarray) -> np.ndarray:
    """[qx, qy, qz, qw] of a 3x3 rotation."""
    return matrix_to_quat(np.asarray(r, dtype=np.float64))
