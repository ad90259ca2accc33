"""Sensor poses that frame a scene's subject, for any scene (built-in, USD or a plain mesh file).

The *subject* is what a user points a sensor at: the scene's nodes that reach below the sea surface, minus the
"ground" (a node whose world bounding box spans at least :data:`GROUND_SPAN` of the scene's extent along x or y: a
seafloor, a tank floor or wall), then the largest remaining node (by bounding-box diagonal) together with every
remaining node whose box touches it (a hull with its deck, wheelhouse and mast; a pier with its pilings). A scene
with nothing but ground (one object from a mesh file) is its own subject. The subject's box is cut at the sea
surface (nothing above it is seen by an underwater sensor).

Poses, all world frame (Z up, m), FLU sensor frame (x = boresight):

- ``imaging_sonar``, ``multibeam``, ``camera`` (looking kinds): the boresight aims at the subject's centre from
  a standoff that fits the subject's half-diagonal ``r`` into the horizontal field of view
  (``r / tan(fov / 2) + r`` for the sonars, which also need the range behind the front face; for the camera the
  horizontal half-diagonal over ``tan(fov / 2)``, at least :data:`CAMERA_MIN_STANDOFF` off the surface), capped at
  :data:`REACH_FRACTION` of the sensor's reach (its ``max_range``; for the camera the water's visibility), and
  looking :data:`LOOK_PITCH_DEG` down, approaching from :data:`APPROACH_AZIMUTH_DEG` off the -x side, and
  stopping :data:`OBSTACLE_CLEARANCE` short of anything that stands between it and the subject.
- ``sidescan``, ``profiling``, ``singlebeam`` (survey kinds): the *start* of a straight, level run along +x
  past the subject, from ``margin`` before its box to ``margin`` after it (:func:`survey_run`). Profiling and the
  single-beam (pitched 90 degrees down, an altimeter) run over the subject's centre line; the side-scan runs
  beside it so the subject lies in its port swath, not in the nadir gap.

Every position is kept at least :data:`SURFACE_CLEARANCE` below the sea surface.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from oceansim_py.errors import ConfigError
from oceansim_py.poses import matmul_fixed, pose_from_euler, quat_to_matrix

#: A node spanning at least this share of the scene's x or y extent is ground, not subject.
GROUND_SPAN = 0.8
#: Standoffs stay within this share of the sensor's reach (m / m).
REACH_FRACTION = 0.7
#: Depression of the looking kinds' boresight (degrees below horizontal).
LOOK_PITCH_DEG = {"imaging_sonar": 20.0, "multibeam": 25.0, "camera": 15.0}
#: The looking kinds approach from this azimuth off -x, towards +x and +y (degrees): an oblique view.
APPROACH_AZIMUTH_DEG = 30.0
#: A framing pose stays this far (m) in front of any surface between it and the subject.
OBSTACLE_CLEARANCE = 0.5
#: The camera's framing pose stands at least this far (m) off the subject's surface (a vehicle's lights
#: saturate a nearer view).
CAMERA_MIN_STANDOFF = 1.0
#: Sensor positions stay this far below the sea surface (m).
SURFACE_CLEARANCE = 0.5
LOOKING_KINDS = ("imaging_sonar", "multibeam", "camera")
SURVEY_KINDS = ("sidescan", "profiling", "singlebeam")


@dataclasses.dataclass(frozen=True)
class SurveyRun:
    """A straight run: ``pings`` poses from ``start`` ((7,) pose), each moved by ``step`` ((3,) world m)."""

    start: np.ndarray
    step: np.ndarray
    pings: int

    def poses(self) -> np.ndarray:
        """(pings, 7) float64 poses; the attitude is the start's."""
        poses = np.repeat(self.start.reshape(1, 7), self.pings, axis=0)
        poses[:, :3] += np.arange(self.pings)[:, None] * self.step
        return poses


def node_bounds(node: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """World axis-aligned bounds (min, max) of a node's own mesh (m), or None without one."""
    if node.mesh is None or node.mesh.vertices.size == 0:
        return None
    v = matmul_fixed(node.mesh.vertices, node.transform[:3, :3].T) + node.transform[:3, 3]
    return v.min(axis=0), v.max(axis=0)


def subject_bounds(scene: Any) -> tuple[np.ndarray, np.ndarray]:
    """World bounds (min, max) of the scene's subject (see the module docstring), metres."""
    lo, hi = (np.asarray(b, dtype=np.float64) for b in scene.bounds)
    extent = np.maximum(hi - lo, 1e-9)
    boxes = [b for b in (node_bounds(n) for n in scene.mesh_nodes() if getattr(n, "sea_surface", None) is None)
             if b is not None]
    surface = scene.surface_z
    candidates = [(a, b) for a, b in boxes
                  if a[2] < surface and not ((b - a)[:2] >= GROUND_SPAN * extent[:2]).any()]
    if not candidates:
        return lo, hi
    main = max(candidates, key=lambda ab: float(np.linalg.norm(ab[1] - ab[0])))
    s_lo, s_hi = main[0].copy(), main[1].copy()
    for a, b in candidates:
        if (a <= main[1]).all() and (b >= main[0]).all():
            s_lo, s_hi = np.minimum(s_lo, a), np.maximum(s_hi, b)
    s_hi[2] = min(s_hi[2], surface)
    return s_lo, s_hi


def _below_surface(z: float, scene: Any) -> float:
    return min(z, scene.surface_z - SURFACE_CLEARANCE)


def look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(7,) pose at ``eye`` whose boresight points at ``target`` (zero roll)."""
    d = np.asarray(target, dtype=np.float64) - np.asarray(eye, dtype=np.float64)
    yaw = math.degrees(math.atan2(d[1], d[0]))
    pitch = math.degrees(math.atan2(-d[2], math.hypot(d[0], d[1])))
    return pose_from_euler(float(eye[0]), float(eye[1]), float(eye[2]), 0.0, pitch, yaw)


def framing_pose(scene: Any, kind: str, reach: float, fov_deg: float = 90.0) -> np.ndarray:
    """A (7,) pose of a looking kind that frames the subject (module docstring); ``reach`` (m) the sensor's
    range (camera: the distance it can see through the water), ``fov_deg`` its horizontal field of view.

    The standoff is measured from the subject's surface along the line of sight (a ray cast from outside its
    box towards its centre), so a large subject does not put the sensor out of reach of its near side."""
    if kind not in LOOKING_KINDS:
        raise ConfigError(f"framing_pose: kind must be one of {LOOKING_KINDS}, got {kind!r}")
    lo, hi = subject_bounds(scene)
    target = (lo + hi) / 2
    half = np.maximum((hi - lo) / 2, 1e-6)
    r = float(np.linalg.norm(half)) or 1.0
    pitch, azimuth = math.radians(LOOK_PITCH_DEG[kind]), math.radians(APPROACH_AZIMUTH_DEG)
    outward = np.array([-math.cos(pitch) * math.cos(azimuth), -math.cos(pitch) * math.sin(azimuth),
                        math.sin(pitch)])
    box_exit = float(min(half[i] / abs(outward[i]) for i in range(3) if abs(outward[i]) > 1e-9))
    start = target + (box_exit + 1.0) * outward
    cast = getattr(scene, "raycast_through_surface", scene.raycast)  # from above the waves, through them
    hit = cast(start[None, :], -outward[None, :], box_exit + 1.0).numpy()
    surface = box_exit + 1.0 - float(hit["distance"][0]) if hit["face"][0] >= 0 else 0.0
    if kind == "camera":   # fill the image width with the subject, at least CAMERA_MIN_STANDOFF off it
        fit = max(float(np.linalg.norm(half[:2])) / math.tan(math.radians(min(fov_deg, 170.0)) / 2),
                  surface + CAMERA_MIN_STANDOFF)
    else:                  # the whole subject inside the fan, its far side within range
        fit = r / math.tan(math.radians(min(fov_deg, 170.0)) / 2) + r
    standoff = min(max(fit, surface + 0.3), surface + REACH_FRACTION * reach)
    origin = target + surface * outward
    clear = scene.raycast(origin[None, :] + 1e-3 * outward, outward[None, :], standoff).numpy()
    if clear["face"][0] >= 0:   # something stands between: stop short of it
        standoff = max(surface + 0.1, surface + float(clear["distance"][0]) - OBSTACLE_CLEARANCE)
    eye = target + standoff * outward
    eye[2] = _below_surface(float(eye[2]), scene)
    return look_at(eye, target)


def boresight_range(scene: Any, pose: np.ndarray, max_range: float) -> float:
    """Distance (m) from ``pose`` along its boresight (+x) to the first surface, ``inf`` within ``max_range``
    when nothing is hit."""
    axis = quat_to_matrix(np.asarray(pose[3:], dtype=np.float64))[:, 0]
    hit = scene.raycast(np.asarray(pose[:3], dtype=np.float64)[None, :], axis[None, :], max_range).numpy()
    return float(hit["distance"][0]) if hit["face"][0] >= 0 else math.inf


def suggested_pose_for(scene: Any, kind: str, reach: float, fov_deg: float = 90.0) -> np.ndarray:
    """(7,) pose of a looking kind: the scene's own ``suggested_pose`` when its boresight meets a surface within
    ``REACH_FRACTION * reach`` (m), else :func:`framing_pose`. Used by the CLI when no ``--pose`` is given."""
    stored = scene.suggested_pose
    if stored is not None and boresight_range(scene, stored, REACH_FRACTION * reach) < math.inf:
        return np.asarray(stored, dtype=np.float64)
    return framing_pose(scene, kind, reach, fov_deg)


def survey_run(scene: Any, kind: str, reach: float, step: float = 0.2, max_pings: int = 2000) -> SurveyRun:
    """The straight run of a survey kind past the subject (module docstring): ``step`` (m) between pings,
    at most ``max_pings`` pings (the step grows to cover the run with that many)."""
    if kind not in SURVEY_KINDS:
        raise ConfigError(f"survey_run: kind must be one of {SURVEY_KINDS}, got {kind!r}")
    lo, hi = subject_bounds(scene)
    centre = (lo + hi) / 2
    length = float(hi[0] - lo[0])
    margin = max(2.0, 0.25 * length)
    height = float(hi[2] - lo[2])
    if kind == "sidescan":
        altitude = min(max(height + 2.0, 3.0), 0.4 * reach)
        z = _below_surface(float(lo[2]) + altitude, scene)
        y = float(lo[1]) - min(max(altitude, 2.0), 0.3 * reach)
        start = pose_from_euler(float(lo[0]) - margin, y, z, 0.0, 0.0, 0.0)
    else:
        clearance = min(max(2.0, 0.5 * height), 0.5 * max(reach - height, 1.0))
        z = _below_surface(float(hi[2]) + clearance, scene)
        pitch = 90.0 if kind == "singlebeam" else 0.0
        start = pose_from_euler(float(lo[0]) - margin, float(centre[1]), z, 0.0, pitch, 0.0)
    run_length = length + 2 * margin
    pings = int(math.floor(run_length / step)) + 1
    if pings > max_pings:
        step, pings = run_length / (max_pings - 1), max_pings
    return SurveyRun(start=np.asarray(start, dtype=np.float64), step=np.array([step, 0.0, 0.0]), pings=pings)
