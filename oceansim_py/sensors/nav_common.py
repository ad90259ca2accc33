"""What the navigation sensors (IMU, barometer, GPS, magnetometer, pose sensor, USBL, LBL, modems) share: their
construction (:class:`NavSensor`), where their samples come from, the sea-surface height, and host-side results
with ``numpy()`` / ``torch()``.

A sensor's ``measure(source, times=None, ...)`` accepts a :class:`~oceansim_py.trajectory.Trajectory`
(sampled at ``times``, or every ``1 / config.rate`` s over its span when ``times`` is ``None``) or plain poses
(7,) / (B, 7) used as they are (``times`` then only labels the samples). Sample ``i`` is frame
``frame_index + i`` of the sensor's counter-based noise.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import warnings
from typing import Any, ClassVar, Mapping

import numpy as np

from oceansim_py.diagnostics import OceanSimWarning
from oceansim_py.errors import ConfigError, OceanSimError
from oceansim_py.limits import check_frame_index  # noqa: F401  (re-exported for the navigation sensors)
from oceansim_py.poses import as_poses
from oceansim_py.runtime import resolve_device


#: Key of a preset (a ``PRESETS`` entry) naming the per-sample white-noise sigmas it derives from noise densities
#: at its own ``rate``: sigma = density * sqrt(rate) (see :func:`follow_density_rate`).
DENSITY_SIGMAS = "_density_sigmas"


def follow_density_rate(preset: Mapping[str, Any], given: Mapping[str, Any], values: dict[str, Any]) -> None:
    """The ``follow_preset`` step of a config whose presets derive per-sample white noise from a density N at the
    preset's ``rate`` f_p (sigma_p = N sqrt(f_p)): a ``rate`` f set over such a preset scales each sigma named by its
    :data:`DENSITY_SIGMAS` to sigma_p sqrt(f / f_p) = N sqrt(f), so that the noise density (what a data sheet and
    an Allan deviation give) stays the device's at any output rate. A sigma given too is kept as given; at the
    preset's own rate the factor is exactly 1. A rate that is not a finite positive number is left to
    ``validate()``."""
    names = preset.get(DENSITY_SIGMAS, ())
    rate = values.get("rate")
    if not names or "rate" not in given or not (isinstance(rate, float) and math.isfinite(rate) and rate > 0):
        return
    factor = math.sqrt(rate / float(preset["rate"]))
    for name in names:
        if name not in given:
            values[name] = values[name] * factor


@dataclasses.dataclass
class Samples:
    """Resolved samples: times (N,) s or ``None``, poses (N, 7) float64, and the trajectory if there was one."""

    times: np.ndarray | None
    poses: np.ndarray
    trajectory: Any


def finite_times(times: Any, what: str) -> np.ndarray:
    """``times`` (s) as a flat float64 array; a ``ConfigError`` naming ``what`` when one is not a finite number (a
    NaN time would otherwise fall in no sample's interval and vanish silently)."""
    try:
        t = np.asarray(times, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: times must be numbers (s), got {times!r}") from None
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise ConfigError(f"{what}: time {int(bad[0])} is {t[bad[0]]}; times must be finite (s)")
    return t


def sample_source(source: Any, times: Any, rate: float, what: str) -> Samples:
    """Resolve a Trajectory or poses into :class:`Samples` (see the module docstring)."""
    if hasattr(source, "resample") and hasattr(source, "times"):
        traj = source.resample(rate) if times is None else source.interpolate(times)
        return Samples(traj.times.copy(), np.asarray(traj.poses, dtype=np.float64), traj)
    as_poses(source, f"{what} poses")  # validation only: it returns float32, and positions keep float64 here
    poses = np.array(getattr(source, "poses", source), dtype=np.float64).reshape(-1, 7)
    poses[:, 3:] /= np.linalg.norm(poses[:, 3:], axis=1, keepdims=True)
    t = None
    if times is not None:
        t = finite_times(times, what)
        if t.size != poses.shape[0]:
            raise ConfigError(f"{what}: {t.size} times for {poses.shape[0]} poses; give one time per pose")
    return Samples(t, poses, None)


def _article(name: str) -> str:
    """``"an"`` before a name read with a vowel sound first: a vowel (IMU, Acoustic...) or an initialism whose first
    letter is spoken "ef", "el", "em", "en", "es", ... (LBL); else ``"a"`` (GPS, USBL, Barometer)."""
    if name[:1] in "AEIO" or (name[:1] in "FHLMNRSX" and name[1:2].isupper()):
        return "an"
    return "a"


class NavSensor:
    """Base of the host-side navigation sensors. ``config``: an instance of the subclass's ``config_class``
    (``None``: its defaults; anything else is a ``ConfigError``). ``sensor_id`` separates the noise of several
    sensors sharing a seed. ``device`` is accepted as by every public call (docs/DESIGN.md, Devices: ``None`` is
    cuda:0 when Warp sees a GPU, else cpu; an unknown one is a ``ConfigError``) and kept as ``self.device``; these
    sensors compute on the host (NumPy), so their results are the same on any device."""

    config_class: ClassVar[type]

    def __init__(self, config: Any = None, sensor_id: int = 0, *, device: Any = None) -> None:
        cls = self.config_class
        if config is None:
            config = cls()
        elif not isinstance(config, cls):
            raise ConfigError(f"{type(self).__name__}: config must be {_article(cls.__name__)} {cls.__name__}, "
                              f"got {type(config).__name__}")
        self.config = config
        self.sensor_id = int(sensor_id)
        self.device = resolve_device(device)

    def samples(self, source: Any, times: Any, frame_index: Any) -> tuple[int, Samples]:
        """The checked ``frame_index`` and the :class:`Samples` of ``source`` (a Trajectory sampled at ``times``,
        or every ``1 / config.rate`` s; or poses), errors naming ``<Sensor>.measure``."""
        what = f"{type(self).__name__}.measure"
        fi = check_frame_index(frame_index, what)
        return fi, sample_source(source, times, self.config.rate, what)

    def render(self, scene: Any, poses: Any, frame_index: int = 0, times: Any = None) -> Any:
        """The engine's uniform ``Sensor.render(scene, poses)`` (docs/DESIGN.md, Data flow): :meth:`measure` at
        ``poses`` ((7,) / (B, 7) world poses, or a Trajectory sampled at ``times``), with ``scene`` (its sea
        surface, its geometry for occlusion) for the sensors whose ``measure`` takes one. Sample ``i`` is frame
        ``frame_index + i`` of the noise, as in ``measure``. The IMU needs a Trajectory (accelerations and rates)."""
        extra = {"scene": scene} if "scene" in inspect.signature(self.measure).parameters else {}
        return self.measure(poses, times=times, frame_index=frame_index, **extra)


def surface_height(surface_z: float | None, scene: Any) -> float:
    """The sea-surface height (m): ``surface_z`` if given, else ``scene.surface_z``, else 0."""
    if surface_z is not None:
        return float(surface_z)
    return float(scene.surface_z) if scene is not None else 0.0


def instantaneous_surface(surface_z: float | None, scene: Any, xy: np.ndarray, times: np.ndarray | None) -> np.ndarray:
    """The sea-surface height (m) above each horizontal position ``xy`` (N, 2): ``surface_z`` if given (flat);
    else ``scene.surface_height(xy, t)`` at the samples' ``times`` (``None``: the scene's current time), which is
    the moving sea surface's instantaneous elevation when the scene has one; else 0. Returns (N,) float64."""
    n = xy.shape[0]
    if surface_z is not None or scene is None or getattr(scene, "sea_surface", None) is None:
        return np.full(n, surface_height(surface_z, scene))
    return scene.surface_height(xy, times)


def pressure_head(surface_z: float | None, scene: Any, xyz: np.ndarray, times: np.ndarray | None) -> np.ndarray:
    """Water pressure above atmospheric at ``xyz`` (N, 3) as a head of water (m): ``max(0, z_s - z)`` under a
    flat surface (``surface_z`` if given, else the scene's, else 0); under a scene's moving sea surface,
    ``scene.pressure_head`` (hydrostatic about the mean surface plus the waves' pressure, attenuated with depth)
    at the samples' ``times`` (``None``: the scene's current time). Returns (N,) float64."""
    if surface_z is not None or scene is None or getattr(scene, "sea_surface", None) is None:
        return np.maximum(0.0, surface_height(surface_z, scene) - xyz[:, 2])
    return scene.pressure_head(xyz, times)


class HostResult:
    """Mixin for dataclass results holding numpy arrays: ``numpy()`` and ``torch()`` of the array fields."""

    def numpy(self) -> dict[str, np.ndarray]:
        """Copies of every array field (``times`` only when known)."""
        return {f.name: np.array(getattr(self, f.name)) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if isinstance(getattr(self, f.name), np.ndarray)}

    def torch(self) -> dict[str, Any]:
        """Torch tensors of the array fields (CPU); needs PyTorch installed."""
        try:
            import torch
        except ImportError as exc:
            raise OceanSimError(f"{type(self).__name__}.torch() needs PyTorch; install it (pip install torch) "
                                f"or use .numpy()") from exc
        return {k: torch.from_numpy(v) for k, v in self.numpy().items()}


def measure_poses(sensor: Any, batch: Any) -> Any:
    """A pose-driven sensor's (barometer, GPS) registry ``render``: ``measure`` at the batch's world poses."""
    return sensor.measure(batch.poses, scene=batch.scene, frame_index=batch.frame_index)


def timed_run_target(help: str, default_preset: str | None = None, uses_scene: bool = True) -> Any:
    """The ``oceansim-py render KIND`` target of a sensor whose measurement depends on time (positioning,
    modems, magnetometer): a straight run of ``--pings`` poses ``--step`` apart (over the scene's subject without
    ``--pose``), one every ``--interval`` seconds, measured as a trajectory (so travel times see the motion);
    every product is written as ``TARGET_<product>.npy`` stacked over the pings, ragged products as
    ``TARGET_<product>.json`` lists, one per ping; a modem's events as records with named fields (node names,
    reason text, ``payload_hex``: :func:`~oceansim_py.sensors.modem_common.decode_events`), not rows of codes."""
    from oceansim_py.sensors import registry

    def render(sensor: Any, scene: Any, poses: np.ndarray, frame_index: int, args: Any) -> Any:
        from oceansim_py.trajectory import Trajectory

        poses = np.asarray(poses, dtype=np.float64).reshape(-1, 7)
        times = np.arange(poses.shape[0], dtype=np.float64) * float(args.interval)
        source = Trajectory(times, poses) if poses.shape[0] > 1 else poses
        extra = {"scene": scene} if uses_scene else {}
        return sensor.measure(source, times=times, frame_index=frame_index, **extra)

    def interval(text: str) -> float:
        import argparse

        try:
            value = float(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from exc
        if not (np.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{text!r}: the interval must be > 0 s")
        return value

    return registry.CliTarget(
        help=help, default_preset=default_preset, poses=registry.RUN, framing="singlebeam",
        reach=lambda c: (float(getattr(c, "max_range", 50.0)), 90.0), render=render, write=write_timed_run,
        options=(registry.CliOption(("--interval",), {"type": interval, "default": 1.0,
                                                       "help": "seconds between pings (default 1)"}),))


def write_timed_run(o: Any) -> list[str]:
    """Writer of :func:`timed_run_target` (see there)."""
    import json

    from oceansim_py.io.atomic import atomic_write_text, cannot_write
    from oceansim_py.io.images import save_npy

    written = []
    meta = o.kind.metadata(o.config)
    for p in o.kind.schema:
        value = o.data.get(p.name)
        if value is None:
            continue
        if isinstance(value, list):
            path = o.out / f"{o.target}_{p.name}.json"
            o.out.mkdir(parents=True, exist_ok=True)
            if p.name == "events" and "event_columns" in meta:   # a modem's: records, not rows of 11 codes
                from oceansim_py.sensors.modem_common import decode_events

                lists = [[{k: v for k, v in rec.items() if k != "payload"}
                          for rec in decode_events({"events": events, "payload": payload}, meta)]
                         for events, payload in zip(value, o.data["payload"])]
            else:
                lists = [np.asarray(v).tolist() for v in value]
            try:
                atomic_write_text(path, json.dumps(lists))
            except OSError as exc:
                raise cannot_write(path, f"the {p.name} lists", exc) from exc
            written.append(path)
        else:
            written.append(save_npy(o.out / f"{o.target}_{p.name}.npy", np.asarray(value)))
    if getattr(o.config, "messages", None) == ():
        warnings.warn(f"{o.target}: the config schedules no messages, so there are no events; schedule them with "
                      f"--set 'messages=[[2.0, {o.config.node_id}, {o.config.node_ids[0]}, hello]]' (rows [time s, "
                      f"sender, receiver, payload]) or in a --config YAML", OceanSimWarning, stacklevel=2)
    return [f"measured {len(o.poses)} ping(s) of the {o.kind.name} along a straight run in {o.scene.source} in "
            f"{o.seconds:.3f} s", f"wrote {', '.join(str(w) for w in written)}"]
