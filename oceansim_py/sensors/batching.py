"""What every ray-casting sensor does with a batch of poses before its kernels run: validate the call (the scene
on the sensor's device, the poses, the frame numbers of the batch) and upload the poses into per-thread device
scratch that is reused between renders of the same batch size.

The camera, the DVL and the acoustic sensors (imaging sonar, multibeam, ``AcousticFan`` of the fan sonars, the
device chain) use these.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError
from oceansim_py.limits import check_frame_index
from oceansim_py.poses import as_poses
from oceansim_py.sensors.scratch import ScratchCache


def check_render_call(owner: str, scene: Any, device: Any, poses: Any, frame_index: Any,
                      what: str = "sensor", poses_name: str = "poses") -> np.ndarray:
    """The (B, 7) float32 poses of a render call of ``owner`` (e.g. ``"DVL"``); a ``ConfigError`` when the scene
    is on another device than ``device``, a pose is invalid (named by ``poses_name``) or the batch's frame
    numbers ``frame_index .. frame_index + B - 1`` leave the noise counter's range."""
    if not hasattr(scene, "device") or not hasattr(scene, "geometry"):
        raise ConfigError(f"{owner}: scene must be an oceansim_py Scene (load_scene(path) or Scene(nodes)), got "
                          f"{type(scene).__name__}")
    if scene.device != device:
        raise ConfigError(f"{owner}: the scene is on {scene.device} but the {what} on {device}; load the scene with "
                          f"device={str(device)!r}")
    p = as_poses(poses, poses_name)
    check_frame_index(frame_index, f"{owner}.render", p.shape[0])
    return p


def check_out_type(owner: str, out: Any, result_type: type) -> None:
    """A :class:`ConfigError` unless ``out`` is None or a ``result_type`` (a render's ``out`` argument)."""
    if out is not None and not isinstance(out, result_type):
        raise ConfigError(f"{owner}.render: out must be a {result_type.__name__} returned by an earlier render, got "
                          f"{type(out).__name__}")


def check_out(owner: str, out: Any, result_type: type, config: Any, batch: int) -> None:
    """A render's ``out`` argument: None (new result arrays), or a result of ``result_type`` that a render of the
    same sensor config (``config``, compared by value) and the same batch size returned, whose arrays the render
    then overwrites (and returns in the same object). Anything else raises :class:`ConfigError` before a kernel
    runs."""
    if out is None:
        return
    check_out_type(owner, out, result_type)
    if out.config != config or out.batch_size != batch:
        raise ConfigError(f"{owner}.render: out holds {out.batch_size} pose(s) from "
                          f"{'this' if out.config == config else 'another'} config; pass a result of this sensor's "
                          f"config rendered with a batch of {batch}, or out=None for new arrays")


class PoseUploads:
    """Device arrays of ``wp.transform`` poses, one per batch size (at most ``max_batch_sizes`` per thread; see
    :class:`~oceansim_py.sensors.scratch.ScratchCache`), so that a render uploads its poses without allocating."""

    def __init__(self, device: Any, max_batch_sizes: int = 2) -> None:
        self.device = device
        self._buffers: ScratchCache[wp.array] = ScratchCache(max_batch_sizes)

    def upload(self, poses: np.ndarray) -> wp.array:
        """The calling thread's device array for ``len(poses)`` poses, holding ``poses`` (B, 7)."""
        batch = int(poses.shape[0])
        buf = self._buffers.get_or_make(batch, lambda: wp.empty(batch, dtype=wp.transform, device=self.device))
        buf.assign(wp.array(np.ascontiguousarray(poses, dtype=np.float32), dtype=wp.transform, device="cpu"))
        return buf
