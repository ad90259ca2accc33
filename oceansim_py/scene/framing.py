"""Sensor poses that frame a scene's subject, for any scene (built-in, USD or a plain mesh file).

The *subject* is what a user points a sensor at: the scene's nodes minus the "ground" (a node whose world
bounding box spans at least :data:`GROUND_SPAN` of the scene's extent along x or y: a seafloor, a tank floor or
wall), then the largest remaining node (by bounding-box diagonal) together with every remaining node whose box
touches it (a hull with its deck, wheelhouse and mast; a pier with its pilings). A scene with nothing but
ground (one object from a mesh file) is its own subject.

Poses, all world frame (Z up, m), FLU sensor frame (x = boresight), approaching along +x:

- ``imaging_sonar``, ``multibeam``, ``camera`` (looking kinds): the boresight aims at the subject's centre from
  a standoff that fits the subject's half-diagonal ``r`` into the horizontal field of view
  (``r / tan(fov / 2)``, plus ``r`` for the sonars, which also need the range behind the front face), capped at
  :data:`REACH_FRACTION` of the sensor's reach (its ``max_range``; for the camera the water's visibility), and
  looking :data:`LOOK_PITCH_DEG` down.
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

from oceansim_py.poses import pose_from_euler

#: A node spanning at least this share of the scene's x or y extent is ground, not subject.
GROUND_SPAN = 0.8
#: Standoffs stay within this share of the sensor's reach (m / m).
REACH_FRACTION = 0.7
#: Depression of the looking kinds' boresight (degrees below horizontal).
LOOK_PITCH_DEG = {"imaging_sonar": 20.0, "multibeam": 25.0, "camera": 15.0}
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
    v = node.mesh.vertices @ node.transform[:3, :3].T + node.transform[:3, 3]
    return v.min(axis=0), v.max(axis=0)


def subject_bounds(scene: Any) -> tuple[np.ndarray, np.ndarray]:
    """World bounds (min, max) of the scene's subject (see the module docstring), metres."""
    lo, hi = (np.asarray(b, dtype=np.float64) for b in scene.bounds)
    extent = np.maximum(hi - lo, 1e-9)
    boxes = [b for b in (node_bounds(n) for n in scene.mesh_nodes()) if b is not None]
    candidates = [(a, b) for a, b in boxes if not ((b - a)[:2] >= GROUND_SPAN * extent[:2]).any()]
    if not candidates:
        return lo, hi
    main = max(candidates, key=lambda ab: float(np.linalg.norm(ab[1] - ab[0])))
    s_lo, s_hi = main[0].copy(), main[1].copy()
    for a, b in candidates:
        if (a <= main[1]).all() and (b >= main[0]).all():
            s_lo, s_hi = np.minimum(s_lo, a), np.maximum(s_hi, b)
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
    range (camera: the distance it can see through the water), ``fov_deg`` its horizontal field of view."""
    if kind not in LOOKING_KINDS:
        raise ValueError(f"framing_pose: kind must be one of {LOOKING_KINDS}, got {kind!r}")
    lo, hi = subject_bounds(scene)
    target = (lo + hi) / 2
    r = 0.5 * float(np.linalg.norm((hi - lo)[:2])) or 0.5 * float(np.linalg.norm(hi - lo)) or 1.0
    standoff = r / math.tan(math.radians(min(fov_deg, 170.0)) / 2)
    if kind != "camera":
        standoff += r
    standoff = min(standoff, REACH_FRACTION * reach)
    pitch = math.radians(LOOK_PITCH_DEG[kind])
    eye = target + standoff * np.array([-math.cos(pitch), 0.0, math.sin(pitch)])
    eye[2] = _below_surface(float(eye[2]), scene)
    if np.allclose(eye, target):
        eye[0] -= standoff
    return look_at(eye, target)


def survey_run(scene: Any, kind: str, reach: float, step: float = 0.2, max_pings: int = 2000) -> SurveyRun:
    """The straight run of a survey kind past the subject (module docstring): ``step`` (m) between pings,
    at most ``max_pings`` pings (the step grows to cover the run with that many)."""
    if kind not in SURVEY_KINDS:
        raise ValueError(f"survey_run: kind must be one of {SURVEY_KINDS}, got {kind!r}")
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
