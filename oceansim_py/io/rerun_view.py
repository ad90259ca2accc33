"""Streaming a dataset to the Rerun viewer (``rerun-sdk``, the ``viewer`` extra), time-synchronised on the
dataset's time (timeline ``time``, seconds from the dataset start).

Entities (world frame: Z up, metres; sensor frames FLU):

* ``world/scene/<node>``: the scene's meshes (static);
* ``world/trajectory``: the vehicle's ground-truth path over the dataset (static line strip);
* ``world/vehicle``: the vehicle pose at every frame; ``world/vehicle/<sensor>``: each sensor's mount (static);
* imaging sonar / multibeam: ``sonar/<name>/polar`` (the polar image, 8-bit, 60 dB below the ping's peak) and
  ``world/vehicle/<name>/returns`` (3-D points at each range-bearing bin above ``RETURN_FRACTION`` of the ping's
  peak, in the fan plane, coloured by intensity);
* side-scan: ``sonar/<name>/waterfall`` (the pings so far, ``[port reversed | starboard]``, newest at the bottom,
  8-bit over 60 dB);
* profiling: ``world/<name>/soundings`` (points in the world);
* camera: ``world/vehicle/<name>/image`` (pinhole from the intrinsics, FLU camera axes, and the RGB image on
  it), ``camera/<name>/depth`` (depth image, m);
* DVL: ``world/vehicle/<name>/beams`` (arrows along each valid beam, length = slant range);
* GPS / pose sensor: ``world/<name>/position`` (points); IMU, barometer, altimeter: ``plots/<name>/<value>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from oceansim_py.dataset.loader import DatasetReader
from oceansim_py.errors import OceanSimError
from oceansim_py.export.streams import mount_matrix, product, tick_times, vehicle_trajectory
from oceansim_py.io.atomic import atomic_path
from oceansim_py.io.images import to_uint8
from oceansim_py.poses import matrix_to_quat, pose_to_matrix

#: bins at or above this fraction of a ping's peak intensity become 3-D points
RETURN_FRACTION = 0.2
TIMELINE = "time"


def _rerun() -> Any:
    try:
        import rerun as rr
    except ImportError as exc:
        raise OceanSimError("the viewer needs rerun-sdk: pip install 'oceansim_py[viewer]'") from exc
    return rr


def _transform(rr: Any, m: np.ndarray) -> Any:
    q = matrix_to_quat(m[:3, :3])
    return rr.Transform3D(translation=m[:3, 3], quaternion=rr.Quaternion(xyzw=q))


def fan_points(image: np.ndarray, ranges: np.ndarray, bearings: np.ndarray,
               fraction: float = RETURN_FRACTION) -> tuple[np.ndarray, np.ndarray]:
    """Points (N, 3) in the sensor FLU frame of the bins of a polar image (n_range, n_beams) at or above
    ``fraction`` of its peak (bearing + starboard -> y = -r sin b), and their intensities (N,)."""
    img = np.nan_to_num(np.asarray(image, dtype=np.float64))
    peak = float(img.max()) if img.size else 0.0
    if peak <= 0.0:
        return np.zeros((0, 3)), np.zeros(0)
    ri, bi = np.nonzero(img >= fraction * peak)
    r, b = np.asarray(ranges)[ri], np.asarray(bearings)[bi]
    return np.stack([r * np.cos(b), -r * np.sin(b), np.zeros_like(r)], axis=1), img[ri, bi]


def _log_scene(rr: Any, rec: Any, scene_name: str) -> None:
    from oceansim_py.scene import load_scene
    from oceansim_py.scene.geometry import transform_points

    scene = load_scene(scene_name)
    for i, node in enumerate(scene.nodes):
        if node.mesh is None or node.mesh.num_triangles == 0:
            continue
        verts = transform_points(node.transform, node.mesh.vertices)
        rec.log(f"world/scene/{i:03d}_{rr.escape_entity_path_part(node.name)}",
                rr.Mesh3D(vertex_positions=verts.astype(np.float32), triangle_indices=node.mesh.triangles),
                static=True)


def log_dataset(reader: DatasetReader, rec: Any, scene: bool = True) -> None:
    """Log every stream of ``reader`` into the recording stream ``rec`` (see module docstring)."""
    rr = _rerun()
    if scene:
        _log_scene(rr, rec, reader.manifest["rig"]["scene"])
    times = tick_times(reader)
    if times.size:
        traj = vehicle_trajectory(reader)
        world_t_vehicle = pose_to_matrix(np.asarray(traj.at(times), dtype=np.float64))
        rec.log("world/trajectory", rr.LineStrips3D([world_t_vehicle[:, :3, 3]]), static=True)
        for t, m in zip(times, world_t_vehicle):
            rec.set_time(TIMELINE, duration=float(t))
            rec.log("world/vehicle", _transform(rr, m))
    for name, meta in reader.sensors.items():
        rec.log(f"world/vehicle/{name}", _transform(rr, mount_matrix(reader, name)), static=True)
        if meta["type"] == "camera":      # the camera's frustum; its images are drawn on it in 3-D
            k = meta["intrinsics"]
            rec.log(f"world/vehicle/{name}/image",
                    rr.Pinhole(focal_length=[k["fx"], k["fy"]], principal_point=[k["cx"], k["cy"]],
                               resolution=[k["width"], k["height"]], camera_xyz=rr.ViewCoordinates.FLU,
                               image_plane_distance=0.5), static=True)
        _log_sensor(rr, rec, reader, name, meta)


def _log_sensor(rr: Any, rec: Any, reader: DatasetReader, name: str, meta: dict[str, Any]) -> None:
    kind = meta["type"]
    waterfall: list[np.ndarray] = []
    for sample in reader.samples(name):
        rec.set_time(TIMELINE, duration=float(sample["time"]))
        if kind in ("imaging_sonar", "multibeam"):
            image = product(sample, "intensity")
            if image is not None:
                rec.log(f"sonar/{name}/polar", rr.Image(to_uint8(image, mode="db")))
                pts, val = fan_points(image, np.asarray(meta["ranges_m"]), np.asarray(meta["bearings_rad"]))
                rec.log(f"world/vehicle/{name}/returns",
                        rr.Points3D(pts, colors=np.stack([to_uint8(val / max(val.max(), 1e-12))] * 3, axis=1)
                                    if val.size else None, radii=0.02))
        elif kind == "sidescan":
            series = product(sample, "intensity")
            if series is not None:
                waterfall.append(np.concatenate([series[::-1, 0], series[:, 1]]))
                rec.log(f"sonar/{name}/waterfall", rr.Image(to_uint8(np.stack(waterfall), mode="db")))
        elif kind == "profiling":
            pts = product(sample, "point_world")
            if pts is not None:
                pts = pts.reshape(-1, 3)
                rec.log(f"world/{name}/soundings", rr.Points3D(pts[np.all(np.isfinite(pts), axis=1)], radii=0.05))
        elif kind == "camera":
            if "rgb_png" in sample:
                rec.log(f"world/vehicle/{name}/image", rr.Image(np.asarray(sample["rgb_png"])[..., :3]))
            if "depth" in sample:
                rec.log(f"camera/{name}/depth", rr.DepthImage(np.asarray(sample["depth"], dtype=np.float32),
                                                               meter=1.0))
        elif kind == "dvl":
            rng = product(sample, "beam_range")
            if rng is not None:
                dirs = np.asarray(meta["beam_directions_sensor_frame"], dtype=np.float64)[: rng.size]
                ok = np.isfinite(rng)
                rec.log(f"world/vehicle/{name}/beams", rr.Arrows3D(vectors=dirs[ok] * rng[ok, None]))
        elif kind in ("gps", "pose"):
            pos = product(sample, "position") if kind == "gps" else product(sample, "matrix")
            if pos is not None:
                xyz = pos.reshape(3) if kind == "gps" else pos.reshape(4, 4)[:3, 3]
                if np.all(np.isfinite(xyz)):
                    rec.log(f"world/{name}/position", rr.Points3D([xyz], radii=0.1))
        else:
            for key in {"imu": ("accel", "gyro"), "barometer": ("pressure", "depth"),
                        "singlebeam": ("altitude",), "magnetometer": ("field",), "usbl": ("slant_range",),
                        "lbl": ("range",)}.get(kind, ()):
                value = product(sample, key)
                if value is not None:
                    rec.log(f"plots/{name}/{key}", rr.Scalars(np.asarray(value, dtype=np.float64).reshape(-1)))


def view_dataset(path: str | Path, save: str | Path | None = None, spawn: bool = True, scene: bool = True) -> Any:
    """Stream the dataset at ``path`` to Rerun: into the file ``save`` (``.rrd``) when given, else to a viewer
    it spawns (``spawn=True``). ``scene=False`` leaves the scene mesh out. Returns the recording stream.

    The ``.rrd`` appears only when complete (written under a temporary name, then renamed): a dataset file that
    cannot be read part-way raises its ``DatasetError`` and leaves no partial recording (nor an older ``save``
    half-overwritten)."""
    rr = _rerun()
    reader = DatasetReader(path)
    rec = rr.RecordingStream("oceansim_py", recording_id=str(reader.manifest.get("fingerprint", ""))[:32] or None)
    if save is None:
        if spawn:
            try:
                rec.spawn()
            except RuntimeError as exc:   # no viewer executable (a headless machine, or rerun-sdk without it)
                first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
                raise OceanSimError(f"{path}: could not start the Rerun viewer ({first}); write a recording with "
                                    f"--save run.rrd (Python: save='run.rrd') and open it with `rerun run.rrd` "
                                    f"where a viewer runs") from exc
        log_dataset(reader, rec, scene=scene)
        rec.flush()
        return rec
    out = Path(save)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out, fsync=False) as tmp:
        rec.save(tmp)
        try:
            log_dataset(reader, rec, scene=scene)
            rec.flush()
        finally:
            rec.disconnect()          # the file is closed before it is renamed or removed
    return rec
