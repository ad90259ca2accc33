"""The shard worker: holds a scene, a trajectory and the rig's sensors, and renders + writes whole shards.

The local executor uses one in process; the Ray executor runs one per actor so that the scene, its BVH and the
compiled kernels stay alive between shards.
"""

from __future__ import annotations

import inspect
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from oceansim_py.dataset.rig import TRAJECTORY_TYPES, Rig
from oceansim_py.dataset.sensor_writer import SensorWriter
from oceansim_py.dataset.shards import PartialShard, ShardPlan, finish_shard, sample_range
from oceansim_py.errors import ConfigError
from oceansim_py.poses import compose_poses


def build_trajectory(rig: Rig, scene: Any) -> Any:
    """The rig's trajectory (a :class:`~oceansim_py.trajectory.Trajectory`), built against the loaded scene."""
    from oceansim_py.trajectory import Trajectory

    params = {k: v for k, v in rig.trajectory.items() if k != "type"}
    ctor = getattr(Trajectory, TRAJECTORY_TYPES[rig.trajectory["type"]])
    sig = inspect.signature(ctor).parameters
    if "scene" in sig and "scene" not in params:
        params["scene"] = scene
    try:
        return ctor(**params)
    except TypeError as exc:
        raise ConfigError(f"{rig.source}: trajectory: {exc}") from exc


def sample_times(rig: Rig, rate_hz: float, lo: int, hi: int) -> np.ndarray:
    """Times (s) of a sensor's samples ``lo..hi-1``: ``start_time + m / rate``."""
    return rig.start_time + np.arange(lo, hi, dtype=np.float64) / rate_hz


def last_sample_time(rig: Rig, frames: int) -> float:
    """Time (s) of the last pose a run of ``frames`` ticks needs: its last tick (``start_time + (frames - 1) /
    tick_rate``; the run records the trajectory at every tick) or the last sample of any of the rig's sensors (:func:`sample_times`
    of the samples :func:`~oceansim_py.dataset.shards.sample_range` gives the ticks 0 .. frames - 1), whichever is
    later."""
    last = rig.start_time + max(frames - 1, 0) / rig.tick_rate_hz
    for spec in rig.sensors:
        lo, hi = sample_range(0, frames, rig.tick_rate_hz, spec.rate_hz)
        if hi > lo:
            last = max(last, float(sample_times(rig, spec.rate_hz, hi - 1, hi)[0]))
    return last


def most_frames_within(rig: Rig, end_time: float) -> int:
    """The most ticks a run of ``rig`` may have with no sample after ``end_time`` (s; + 1e-6)."""
    lo = 0
    hi = int(max(0.0, end_time - rig.start_time) * rig.tick_rate_hz) + 2
    hi += int(rig.tick_rate_hz / min((s.rate_hz for s in rig.sensors), default=rig.tick_rate_hz)) + 1
    while lo < hi:                            # last_sample_time grows with the frame count
        mid = (lo + hi + 1) // 2
        if last_sample_time(rig, mid) <= end_time + 1e-6:
            lo = mid
        else:
            hi = mid - 1
    return lo


class ShardWorker:
    """Renders and writes shards of one rig into ``out`` (see module docstring).

    Files are written by one background thread in submission order while the next batch renders, so disk
    and PNG encoding overlap with the kernels; a shard completes only after all of its writes succeeded.
    """

    def __init__(self, rig: Rig, out: str | Path, device: Any = None, compress: bool = False) -> None:
        from oceansim_py.scene import load_scene

        self.rig = rig
        self.out = Path(out)
        self.scene = load_scene(rig.scene, device=device, **rig.scene_options())
        self.trajectory = build_trajectory(rig, self.scene)
        self.sensors: list[SensorWriter] = [SensorWriter(s, rig.seed, self.scene.device, compress)
                                             for s in rig.sensors]
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="oceansim-writer")
        end = last_sample_time(rig, rig.frames)
        t0, t1 = float(self.trajectory.start_time), float(self.trajectory.end_time)
        if rig.start_time < t0 - 1e-9:   # no frame count helps: the first tick is before the trajectory
            raise ConfigError(
                f"{rig.source}: start_time {rig.start_time:g} s is before the trajectory's start ({t0:g} s); set "
                f"start_time within the trajectory's span {t0:g} .. {t1:g} s")
        if end > t1 + 1e-6:
            fits = most_frames_within(rig, t1)
            raise ConfigError(
                f"{rig.source}: the run needs the poses of t = {rig.start_time:g} .. {end:g} s ({rig.frames} frames at "
                f"{rig.tick_rate_hz:g} Hz) but the trajectory spans {t0:g} .. {t1:g} s; lower 'frames' (at most "
                f"{fits}) or lengthen the trajectory")

    def metadata(self) -> dict[str, Any]:
        """Per-sensor metadata for the manifest (config, ranges, bearings, intrinsics, ...)."""
        return {a.spec.name: a.manifest_entry() for a in self.sensors}

    def render_batches(self, plan: ShardPlan) -> Iterator[tuple[SensorWriter, np.ndarray, int,
                                                                 dict[str, np.ndarray], float]]:
        """Render every sample of every sensor in ``plan``, a batch at a time: yields (writer, sample times,
        first sample index, products, seconds spent rendering the batch). Nothing is written."""
        for sensor in self.sensors:
            lo, hi = plan.samples[sensor.spec.name]
            if hi <= lo:
                continue
            times = sample_times(self.rig, sensor.spec.rate_hz, lo, hi)
            vehicle = np.asarray(self.trajectory.at(times), dtype=np.float64)
            poses = compose_poses(vehicle, np.asarray(sensor.spec.mount)[None, :])
            # An animated scene is moved to each sample's time, so its samples render one at a time.
            step = 1 if self.scene.is_animated else self.rig.batch_size
            for b0 in range(0, hi - lo, step):
                b1 = min(hi - lo, b0 + step)
                t_start = time.perf_counter()
                if self.scene.is_animated:
                    self.scene.set_time(float(times[b0]))
                products = sensor.render(self.scene, self.trajectory, times[b0:b1], poses[b0:b1], lo + b0)
                yield sensor, times[b0:b1], lo + b0, products, time.perf_counter() - t_start

    def run_shard(self, plan: ShardPlan) -> dict[str, Any]:
        """Render and write shard ``plan``; returns its manifest record (with ``render_seconds``: the time spent
        in the sensors' render calls)."""
        shard = PartialShard(self.out, plan.index)
        render_s = 0.0
        writes: list[Future] = []
        rendered: set[str] = set()
        for sensor, times, first, products, seconds in self.render_batches(plan):
            render_s += seconds
            rendered.add(sensor.spec.name)
            writes.append(self._writer.submit(sensor.write, shard, products, times, first))
        for sensor in self.sensors:
            if sensor.spec.name in rendered:
                writes.append(self._writer.submit(sensor.finish, shard))
        try:
            for w in writes:
                w.result()
        finally:
            for w in writes:
                w.cancel()
        specs = {a.spec.name: dict(a.written_specs) for a in self.sensors if a.written_specs}
        return finish_shard(self.out, plan, shard, {"render_seconds": round(render_s, 6), "array_specs": specs})
