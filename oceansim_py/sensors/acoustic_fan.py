"""The ray fan shared by the side-scan, profiling and single-beam sonars (docs/PHYSICS.md §3).

A sensor describes its fan as a table of unit sensor-frame (FLU) ray directions, the solid angle (sr) times
beam pattern each ray stands for, and a number of *channels* whose rays are contiguous in the table.
:class:`AcousticFan` casts the fan from B poses in one set of launches and gathers every channel's returns
into a range series (B, n_range, n_channels) with the imaging sonar's binning, normalisation and noise
kernels (docs/PHYSICS.md §1: z = I (1 + w_m) + w_a). The per-ray returns and hit distances stay in its scratch
buffers for the sensor's own follow-up kernels (altitude, ground range, bottom detection).
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, ClassVar

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError, OceanSimError
from oceansim_py.io.config import ConfigBase, require, require_finite, require_non_negative, require_positive
from oceansim_py.kernels import acoustic_fans as fk
from oceansim_py.kernels import imaging_sonar as sk
from oceansim_py.kernels import multipath as km
from oceansim_py.limits import MAX_RANGE_BINS, check_config_memory
from oceansim_py.runtime import check_memory, launch_1d, resolve_device
from oceansim_py.sensors.acoustic.chain import DeviceChain
from oceansim_py.sensors.acoustic.multipath import BounceState, BounceTracer
from oceansim_py.sensors.backend_field import RaycastBackendField
from oceansim_py.sensors.batching import PoseUploads, check_out, check_render_call
from oceansim_py.sensors.rays import RayBuffers
from oceansim_py.sensors.scratch import ScratchCache


def validate_range_and_noise(c: ConfigBase, owner: str, finite: tuple[str, ...] = ()) -> None:
    """Checks shared by the fan sonars' configs: the sensor's own ``finite`` fields and ``db_range`` are finite,
    then the range window and bins, absorption, speckle, seed, display."""
    for name in (*finite, "db_range", "min_range", "max_range", "absorption", "multiplicative_sigma",
                 "additive_sigma", "gain", "gamma"):
        require_finite(getattr(c, name), owner, name)
    require_non_negative(c.min_range, owner, "min_range", "m")
    require(c.max_range > c.min_range, owner, "max_range",
            f"must be greater than min_range ({c.min_range} m), got {c.max_range} m; raise max_range or lower "
            f"min_range")
    require(isinstance(c.range_bins, int) and 2 <= c.range_bins <= MAX_RANGE_BINS, owner, "range_bins",
            f"must be an integer in [2, {MAX_RANGE_BINS:,}], got {c.range_bins!r}")
    require_non_negative(c.absorption, owner, "absorption", "dB/m")
    require(isinstance(c.spreading, bool), owner, "spreading", f"must be true or false, got {c.spreading!r}")
    require_non_negative(c.multiplicative_sigma, owner, "multiplicative_sigma")
    require_non_negative(c.additive_sigma, owner, "additive_sigma")
    require(c.normalisation in ("none", "global"), owner, "normalisation",
            f"must be one of ['none', 'global'], got {c.normalisation!r}")
    require(isinstance(c.seed, int) and 0 <= c.seed < 2**31, owner, "seed",
            f"must be an integer in [0, 2^31), got {c.seed!r}")
    require_positive(c.gain, owner, "gain")
    require_positive(c.gamma, owner, "gamma")
    if c.display_floor is not None:
        require_finite(c.display_floor, owner, "display_floor")


def db_display_reference(c: ConfigBase) -> float | None:
    """Intensity a fan sonar's dB display shows white (its ``images.to_uint8`` reference): the window
    [display_floor, display_floor + db_range] dB in the image's units, so 10^((display_floor + db_range) / 10);
    ``None`` where ``display_floor`` is ``None`` (the window's top is then each image's maximum)."""
    return None if c.display_floor is None else 10.0 ** ((c.display_floor + c.db_range) / 10.0)


def require_count(c: ConfigBase, owner: str, name: str, minimum: int = 1) -> None:
    """A ``ConfigError`` (naming ``owner.name``) unless the config's field ``name`` is an integer >= ``minimum``."""
    v = getattr(c, name)
    require(isinstance(v, int) and v >= minimum, owner, name, f"must be an integer >= {minimum}, got {v!r}")


def range_bin_centres(min_range: float, max_range: float, range_bins: int) -> np.ndarray:
    """Range-bin centres (m), nearest first."""
    dr = (max_range - min_range) / range_bins
    return (min_range + (np.arange(range_bins) + 0.5) * dr).astype(np.float32)


class RangeBinnedConfig(RaycastBackendField, ConfigBase, abc.ABC):
    """Base of the fan sonars' configs, whose fields ``min_range``, ``max_range`` (m) and ``range_bins`` give
    ``range_bins`` equal bins over [min_range, max_range). Each fan sonar's config defines :attr:`fan_channels`
    and :meth:`result_bytes` (abstract here)."""

    @property
    def range_resolution(self) -> float:
        """Range bin size (m)."""
        return (self.max_range - self.min_range) / self.range_bins

    def ranges(self) -> np.ndarray:
        """Range-bin centres (m), nearest first."""
        return range_bin_centres(self.min_range, self.max_range, self.range_bins)

    MEMORY_FIX: ClassVar[str] = "use fewer rays or range bins"
    #: Bytes per ray of the ray table while it is built (float64 temporaries on the host, the device copy).
    TABLE_BYTES_PER_RAY: ClassVar[int] = 160

    @property
    @abc.abstractmethod
    def fan_channels(self) -> int:
        """Series columns of the fan (beams or sides)."""

    @abc.abstractmethod
    def result_bytes(self, batch: int) -> int:
        """Device bytes of a render's own outputs beyond the fan's scratch and series."""

    def memory_bytes(self, batch: int = 1) -> int:
        """Bytes a fan sonar with this config needs: its ray table (``TABLE_BYTES_PER_RAY`` per ray), and per
        ping 12 + ``RayBuffers.BYTES_PER_RAY`` (48) B per ray of scratch (return, bin, label; origin, direction and
        hit for the ray-cast backend) plus the bounce loop's (``multipath_bytes_per_ray`` of the configs'
        ``DeviceChainFields``), 4 + 20 B per range bin and channel (series and their scratch) and its own outputs
        (:meth:`result_bytes`)."""
        per_ping = (40 + (12 + RayBuffers.BYTES_PER_RAY + self.multipath_bytes_per_ray()) * self.rays_per_pose
                    + self.range_bins * (4 + 20 * self.fan_channels))
        return self.TABLE_BYTES_PER_RAY * self.rays_per_pose + 4 * self.range_bins + batch * per_ping \
            + self.result_bytes(batch)


def torch_tensors(owner: str, arrays: dict[str, wp.array]) -> dict[str, Any]:
    """Zero-copy torch tensors of device arrays (``wp.to_torch``); an ``OceanSimError`` without PyTorch."""
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise OceanSimError(f"{owner}.torch() needs PyTorch; install it (pip install torch) or use .numpy()") from exc
    return {k: wp.to_torch(v) for k, v in arrays.items()}


@dataclasses.dataclass
class FanSeries:
    """One render's range series, (B, n_range, n_channels) Warp arrays: ``intensity`` (with noise, >= 0),
    ``clean`` (before noise, after normalisation), ``hits`` (rays binned), ``labels`` (label index of the
    strongest return, -1 where empty)."""

    intensity: wp.array
    clean: wp.array
    hits: wp.array
    labels: wp.array

    @staticmethod
    def allocate(shape: tuple[int, ...], device: Any) -> "FanSeries":
        """Four new (uninitialised) arrays of ``shape`` on ``device``."""
        return FanSeries(*(wp.empty(shape, dtype=t, device=device) for t in (wp.float32, wp.float32, wp.int32,
                                                                              wp.int32)))

    def arrays(self) -> list[wp.array]:
        """[intensity, clean, hits, labels]."""
        return [self.intensity, self.clean, self.hits, self.labels]


class FanBuffers:
    """Device scratch for one batch size: the rays and their hits (``ray_range`` is the hit distance, ``+inf`` for
    a miss), per-ray returns, bins and labels; ``poses`` is the render's uploaded poses. The series' scratch
    (peaks, maxima, noise keys) is allocated by the first render that gathers series."""

    def __init__(self, n_rays: int, batch: int, device: Any, max_range: float, blocks: int = 0) -> None:
        self.batch = batch
        self.device = device
        self.poses: wp.array | None = None
        self.rays = RayBuffers(n_rays, device, max_range)
        self.ray_value = wp.empty(n_rays, dtype=wp.float32, device=device)
        self.ray_bin = wp.empty(n_rays, dtype=wp.int32, device=device)
        self.ray_label = wp.empty(n_rays, dtype=wp.int32, device=device)
        self.ray_range = self.rays.hits.distance
        self.peak: wp.array | None = None
        # multipath (``blocks`` > 0: the direct return and one block per bounce, channel-major with a channel's
        # blocks contiguous; the primary hit distance kept, as the bounce casts reuse the hit arrays)
        self.blocks = max(blocks, 1)
        self.bounce = BounceState(n_rays, device) if blocks > 0 else None
        if blocks > 0:
            self.echo_value = wp.empty(n_rays * blocks, dtype=wp.float32, device=device)
            self.echo_bin = wp.empty(n_rays * blocks, dtype=wp.int32, device=device)
            self.echo_label = wp.empty(n_rays * blocks, dtype=wp.int32, device=device)
            self.ray_range = wp.empty(n_rays, dtype=wp.float32, device=device)
        else:
            self.echo_value, self.echo_bin, self.echo_label = self.ray_value, self.ray_bin, self.ray_label

    def series_scratch(self, n_range: int, n_channels: int) -> None:
        if self.peak is None:
            self.peak = wp.empty((self.batch, n_range, n_channels), dtype=wp.float32, device=self.device)
            self.row_max = wp.empty((self.batch, n_range), dtype=wp.float32, device=self.device)
            self.frame_max = wp.empty(self.batch, dtype=wp.float32, device=self.device)
            self.noise_keys = wp.empty((self.batch, 2), dtype=wp.int32, device=self.device)


class AcousticFan:
    """Casts one sensor's ray fan (see module docstring) on ``device``.

    Args:
        owner: the sensor's name, for error messages.
        directions: (N, 3) unit FLU ray directions, channel-major (channel c owns rays
            ``[c * N / n_channels, (c + 1) * N / n_channels)``).
        weights: (N,) solid angle (sr) times beam pattern per ray.
        n_channels: channels (series columns).
        config: the sensor's config (fields min_range, max_range, range_bins, absorption, spreading, seed,
            multiplicative_sigma, additive_sigma, normalisation).

    Scratch is kept per thread for the last ``MAX_CACHED_BATCH_SIZES`` batch sizes, so one sensor may render from
    several threads at once.
    """

    MAX_CACHED_BATCH_SIZES = 2

    def __init__(self, owner: str, directions: np.ndarray, weights: np.ndarray, n_channels: int, config: Any,
                 device: Any, sensor_id: int) -> None:
        self.owner = owner
        self.config = config
        self.device = resolve_device(device)
        self.sensor_id = int(sensor_id)
        self.rays_per_pose = int(weights.shape[0])
        self.n_channels = int(n_channels)
        self.rays_per_channel = self.rays_per_pose // self.n_channels
        self.range_resolution = (config.max_range - config.min_range) / config.range_bins
        self.directions = wp.array(np.asarray(directions, dtype=np.float32), dtype=wp.vec3, device=self.device)
        self.weights = wp.array(np.asarray(weights, dtype=np.float32), dtype=wp.float32, device=self.device)
        self._buffers: ScratchCache[FanBuffers] = ScratchCache(self.MAX_CACHED_BATCH_SIZES)
        self._poses = PoseUploads(self.device, self.MAX_CACHED_BATCH_SIZES)
        # the peer's specular bounces (multipath_bounces; the device model's are the chain's)
        mp = config.multipath_settings()
        self._tracer = (BounceTracer(mp, config.frequency, config.sound_speed, self.device, config.raycast_backend)
                        if mp.bounces > 0 and config.model == "peer" else None)

    def memory_bytes(self, batch: int) -> int:
        """Device bytes a render of ``batch`` poses needs (scratch and the four series; an upper bound when the
        series are skipped): per ray 12 (return, bin, label) + ``RayBuffers.BYTES_PER_RAY`` (origin, direction and
        hit for the ray-cast backend), and with bounces the bounce loop's."""
        per_ray = 12 + RayBuffers.BYTES_PER_RAY + (self.config.multipath_bytes_per_ray() if self._tracer else 0)
        return batch * (40 + per_ray * self.rays_per_pose + self.config.range_bins * (4 + 20 * self.n_channels))

    def buffers(self, batch: int) -> FanBuffers:
        buf = self._buffers.get(batch)
        if buf is None:
            n = batch * max(self.rays_per_pose, self.config.range_bins * self.n_channels)
            if n >= 2**31:
                fix = "render fewer poses at once" if batch > 1 else "use fewer rays or range bins per ping"
                raise ConfigError(f"{self.owner} render of {batch} pose(s) would index {n} rays or bins, past the "
                                  f"2^31 limit of a launch; {fix}")
            check_memory(self.memory_bytes(batch), self.device, f"{self.owner} render of {batch} pose(s) "
                         f"({self.rays_per_pose} rays each)", "use fewer rays or range bins, or render fewer poses "
                         "at once")
            blocks = self._tracer.settings.blocks if self._tracer is not None else 0
            buf = self._buffers.put(batch, FanBuffers(batch * self.rays_per_pose, batch, self.device,
                                                      float(self.config.max_range), blocks))
        return buf

    def check(self, scene: Any, poses: Any, frame_index: Any) -> np.ndarray:
        """Validated (B, 7) poses; a ``ConfigError`` for a scene on another device, a bad pose or a bad frame
        index (:func:`~oceansim_py.sensors.batching.check_render_call`)."""
        return check_render_call(self.owner, scene, self.device, poses, frame_index)

    def render(self, scene: Any, poses: np.ndarray, frame_index: int, series: bool = True,
               out: FanSeries | None = None) -> tuple[FanSeries | None, FanBuffers]:
        """Cast the fan from (B, 7) ``poses`` and, if ``series``, gather the range series (into ``out``'s arrays
        when given, else new ones); returns them (or None) and the scratch, whose ray arrays hold this render's
        returns until the calling thread's next render of the same batch size."""
        c = self.config
        batch = poses.shape[0]
        buf = self.buffers(batch)
        dev = self.device
        buf.poses = self._poses.upload(poses)
        g = scene.geometry
        dr = float(self.range_resolution)
        n_rays = batch * self.rays_per_pose
        rays = buf.rays
        launch_1d(fk.fan_ray_gen_kernel, n_rays,
                  [buf.poses, self.directions, self.rays_per_pose, rays.origins, rays.directions], dev)
        rays.cast(scene, self.config.raycast_backend)
        if self._tracer is not None:
            self._trace(scene, buf, n_rays)
        else:
            launch_1d(fk.fan_ray_return_kernel, n_rays,
                      [rays.directions, *rays.hit_args(), g.object_reflectivity, g.object_label, self.weights,
                       self.rays_per_pose, float(c.min_range), dr, c.range_bins, float(c.absorption),
                       int(c.spreading), buf.ray_value, buf.ray_bin, buf.ray_label], dev)
        if not series:
            return None, buf
        return self._series(buf, batch, frame_index, out), buf

    def _trace(self, scene: Any, buf: FanBuffers, n_rays: int) -> None:
        """The peer's multipath (sensors/acoustic/multipath.py): the direct return and one block per bounce in
        the peer's law at the total path into ``buf.echo_*``; then the direct returns copied to the per-ray arrays
        and the primary hit distance kept in ``buf.ray_range``."""
        c = self.config
        dev = self.device
        rays, state = buf.rays, buf.bounce
        dr = float(self.range_resolution)

        def init() -> None:
            state.path.zero_()
            state.amp.fill_(1.0)
            state.edge_a.zero_()
            state.edge_b.zero_()

        def echo(block: int, iface: Any, law: Any) -> None:
            launch_1d(km.fan_peer_bounce_return_kernel, n_rays,
                      [rays.directions, *rays.hit_args(), iface.mu, iface.label, law.plane_obj, self.weights,
                       self.rays_per_pose, state.path, state.amp, float(c.min_range), dr, c.range_bins,
                       float(c.absorption), int(c.spreading), block, buf.blocks, self.rays_per_channel,
                       buf.echo_value, buf.echo_bin, buf.echo_label], dev)
            if block == 0:
                launch_1d(km.primary_distance_kernel, n_rays, [rays.hits.distance, rays.hits.face, rays.hits.obj, law,
                                                               buf.ray_range], dev)

        self._tracer.trace(scene, rays, state, float(c.max_range), init, echo)
        launch_1d(km.fan_peer_first_block_kernel, n_rays,
                  [buf.echo_value, buf.echo_bin, buf.echo_label, buf.blocks, self.rays_per_channel, buf.ray_value,
                   buf.ray_bin, buf.ray_label], dev)

    def _series(self, buf: FanBuffers, batch: int, frame_index: int, out: FanSeries | None) -> FanSeries:
        c = self.config
        dev = self.device
        dr = float(self.range_resolution)
        shape = (batch, c.range_bins, self.n_channels)
        buf.series_scratch(c.range_bins, self.n_channels)
        series = out if out is not None else FanSeries.allocate(shape, dev)
        # the binning accumulates into clean, hits and labels: they start at rest (0, label -1)
        series.clean.zero_()
        series.hits.zero_()
        series.labels.fill_(-1)
        launch_1d(sk.sonar_bin_kernel, batch * self.n_channels,
                  [buf.echo_value, buf.echo_bin, buf.echo_label, self.rays_per_channel * buf.blocks,
                   self.rays_per_pose * buf.blocks, self.n_channels, series.clean, series.hits, series.labels,
                   buf.peak], dev, min_chunk=1)
        mode = sk.NORMALISE_GLOBAL if c.normalisation == "global" else sk.NORMALISE_NONE
        if mode == sk.NORMALISE_GLOBAL:
            launch_1d(sk.sonar_row_max_kernel, batch * c.range_bins,
                      [series.clean, self.n_channels, c.range_bins, buf.row_max], dev, min_chunk=64)
            launch_1d(sk.sonar_frame_max_kernel, batch, [buf.row_max, c.range_bins, buf.frame_max], dev, min_chunk=1)
        launch_1d(sk.sonar_noise_keys_kernel, batch, [int(c.seed), int(frame_index), self.sensor_id, buf.noise_keys],
                  dev, min_chunk=batch)
        launch_1d(sk.sonar_finish_kernel, batch * c.range_bins * self.n_channels,
                  [series.clean, buf.row_max, buf.frame_max, mode, self.n_channels, c.range_bins,
                   float(c.min_range), dr, float(c.max_range), 1.0, float(c.multiplicative_sigma),
                   float(c.additive_sigma), 0, 0.0, 1.0, buf.noise_keys, series.intensity], dev)
        return series

    def altitude(self, buf: FanBuffers, batch: int, frame_index: int, range_sigma: float,
                 out: wp.array | None = None) -> wp.array:
        """(B,) first return of each pose's fan (m, NaN without a hit), plus N(0, range_sigma) noise (into ``out``
        when given)."""
        alt = out if out is not None else wp.empty(batch, dtype=wp.float32, device=self.device)
        launch_1d(fk.first_return_kernel, batch,
                  [buf.ray_range, self.rays_per_pose, int(self.config.seed), int(frame_index), self.sensor_id,
                   float(range_sigma), alt], self.device, min_chunk=1)
        return alt


class FanSonar(abc.ABC):
    """Base of the sonars built on one :class:`AcousticFan` on ``device`` (``None``: cuda:0 if present, else
    cpu); ``sensor_id`` separates the noise of several sensors sharing a seed. A subclass names its config
    class (``CONFIG``, default-constructed when ``config`` is None), its result class (``RESULT``, which a
    render's ``out`` must be), its channels and its result's bytes."""

    CONFIG: ClassVar[type[ConfigBase]]
    RESULT: ClassVar[type]

    def __init__(self, config: Any = None, device: Any = None, sensor_id: int = 0) -> None:
        name = type(self).__name__
        self.config = config if config is not None else self.CONFIG()
        if not isinstance(self.config, self.CONFIG):
            raise ConfigError(f"{name}: config must be a {self.CONFIG.__name__}, got {type(config).__name__}")
        check_config_memory(self.config, 0, resolve_device(device), name)
        dirs, weights = self.config.ray_table()
        self._fan = AcousticFan(name, dirs, weights, self._n_channels(), self.config, device, sensor_id)
        self.device = self._fan.device
        self.sensor_id = self._fan.sensor_id
        self._checked_batch = 0  # largest batch whose render memory passed the check (see _check)

    @abc.abstractmethod
    def _n_channels(self) -> int:
        """Series columns of the fan (beams or sides)."""

    @abc.abstractmethod
    def _result_bytes(self, batch: int) -> int:
        """Device bytes of a render's own outputs beyond the fan's scratch and series."""

    def memory_bytes(self, batch: int) -> int:
        """Device bytes a render of ``batch`` pings needs."""
        return self._fan.memory_bytes(batch) + self._result_bytes(batch)

    def _check(self, scene: Any, poses: Any, frame_index: Any, out: Any) -> np.ndarray:
        """The validated (B, 7) poses of a render call (:meth:`AcousticFan.check`: the scene on this sensor's
        device, (7,) or (B, 7) ``[px, py, pz, qx, qy, qz, qw]`` poses or a Trajectory, frame number of pose 0) and
        its ``out`` (None, or a result of this sensor's class and config for the same batch size:
        :func:`~oceansim_py.sensors.batching.check_out`). Without ``out`` the render allocates its result arrays
        before the fan or chain allocates (and checks) its scratch, so the whole render's :meth:`memory_bytes` is
        checked here first (a ``ConfigError`` with the estimate), once per batch size larger than any checked
        before, like the scratch: reading the free memory (~0.1 ms) costs a fifth of a single-beam ping."""
        p = self._fan.check(scene, poses, frame_index)
        batch = p.shape[0]
        check_out(type(self).__name__, out, self.RESULT, self.config, batch)
        if out is None and batch > self._checked_batch:
            check_memory(self.memory_bytes(batch), self.device, f"{type(self).__name__} render of {batch} pose(s) "
                         f"({self._fan.rays_per_pose} rays each)",
                         "use fewer rays, beams or range bins, or render fewer poses at once")
            self._checked_batch = batch
        return p

    def _cast(self, scene: Any, p: np.ndarray, frame_index: int, series: bool = True,
              out: FanSeries | None = None) -> tuple[int, FanSeries | None, FanBuffers]:
        """Cast the fan from the validated (B, 7) poses ``p`` (:meth:`_check`); returns the batch size B and
        :meth:`AcousticFan.render`'s series (None unless ``series``; into ``out``'s arrays when given) and scratch.
        ``frame_index``: frame number of pose 0 (pose b is frame ``frame_index + b``; keys the noise)."""
        fan_series, buf = self._fan.render(scene, p, frame_index, series=series, out=out)
        return p.shape[0], fan_series, buf

    def _device_chain(self) -> DeviceChain | None:
        """The acoustic device chain (sensors/acoustic/chain.py) of a config with ``model = "device"`` (fields of
        :class:`~oceansim_py.sensors.acoustic.device_config.DeviceChainFields`) over its ray table; None for the
        peer model."""
        c = self.config
        if c.model != "device":
            return None
        return DeviceChain(c.device_settings(c.absorption, c.normalisation, c.seed), c.table_fan(), self.device,
                           self.sensor_id, c.raycast_backend)

    def _chain_series(self, chain: DeviceChain, scene: Any, p: np.ndarray, frame_index: int, range_sigma: float,
                      out: FanSeries | None = None,
                      first_return: wp.array | None = None) -> tuple[FanSeries, wp.array]:
        """Render the pings of the validated (B, 7) poses ``p`` (:meth:`_check`) through the device ``chain``;
        returns the (B, n_range, n_channels) series and the (B,) first return of each ping (m, NaN without a hit)
        plus N(0, range_sigma) noise, written into ``out`` and ``first_return`` when given."""
        batch = p.shape[0]
        shape = (batch, self.config.range_bins, self._fan.n_channels)
        dev = self.device
        series = out if out is not None else FanSeries.allocate(shape, dev)
        if first_return is None:
            first_return = wp.empty(batch, dtype=wp.float32, device=dev)
        chain.render(scene, p, frame_index, series.intensity, series.clean, series.hits, series.labels,
                     first_return=(first_return, float(range_sigma)))
        return series, first_return
