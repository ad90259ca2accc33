"""The device chain of an acoustic sensor: sonar equation, coherent binning, point spread, receiver, TVG.

A sensor describes its fan (ray bearings and elevations grouped into contiguous *channels*: beams of an
imaging sonar) and hands it, with its :class:`DeviceSettings`, to a :class:`DeviceChain`, which renders the
echo image of a batch of poses into (B, n_range, n_channels) arrays. Equations and sources:
docs/PHYSICS_ACOUSTIC_CHAIN.md. Units of the outputs:

- ``intensity``: detected intensity |a + n|^2 of the coherent sum (speckle, reverberation and receiver noise
  included) after time-varying and fixed gain: re 1 uPa^2 times the gain (with no TVG and 0 dB gain it is the
  received intensity re 1 uPa^2; 10 log10 of it is the echo level in dB re 1 uPa).
- ``clean_intensity``: the expected (speckle-free, noise-free) echo intensity through the same point spread and
  gain, same unit.
- ``hit_count``, ``label_id``: rays binned per cell (before point spread) and the label of the strongest return.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError
from oceansim_py.kernels import acoustic_chain as k
from oceansim_py.kernels import acoustic_fans as fk
from oceansim_py.kernels import imaging_sonar as ks
from oceansim_py.kernels import multipath as km
from oceansim_py.runtime import check_memory, cpu_threads, launch_1d
from oceansim_py.sensors.acoustic.beam_pattern import (LineArray, beam_equivalent_widths, bearing_kernel,
                                                       bearing_kernels, range_kernel)
from oceansim_py.sensors.acoustic.multipath import (BounceState, BounceTracer, MixedPathBuffers, MultipathSettings,
                                                    chain_multipath_bytes_per_ray)
from oceansim_py.sensors.batching import PoseUploads
from oceansim_py.sensors.rays import RayBuffers
from oceansim_py.sensors.scratch import ScratchCache

#: Units of a device-model sensor's intensity arrays, for the sensors' dataset schemas.
DEVICE_INTENSITY_UNIT = ("model 'device': detected intensity |a + n|^2 re 1 uPa^2 (speckle, reverberation and "
                         "receiver noise included) after the TVG and fixed/automatic gain of the config")
DEVICE_CLEAN_UNIT = ("model 'device': expected (speckle- and noise-free) echo intensity re 1 uPa^2 through the same "
                     "point spread and gain")

#: Bins per CPU chunk of the receiver launch (at least): smaller chunks cost more in launches than they share.
BINS_PER_CHUNK = 16384

#: Rays per CPU chunk of the echo-and-binning launch (at least), for the same reason (a launch packs ~40 arguments).
RAYS_PER_CHUNK = 4096

#: Rays per CPU chunk of the ray generation (at least): a rotation costs ~3 ns, a chunk's launch ~25 us.
ROTATIONS_PER_CHUNK = 32768

#: Rows per block of the receiver's row permutation (:func:`row_order`).
ROW_BLOCK = 16

#: Valid time-varying gain laws and the k of k log10 r each applies.
TVG_LAWS: dict[str, float] = {"none": 0.0, "20log": 20.0, "30log": 30.0, "40log": 40.0}

#: Default volume backscattering strength S_v of clear coastal water (dB re 1 m^-1): the middle of the
#: -70 ... -90 dB range of Urick, "Principles of Underwater Sound" (3rd ed., §8.4) for shallow water off the
#: biological layers.
CLEAR_WATER_SV_DB = -80.0


@dataclasses.dataclass(frozen=True)
class DeviceSettings:
    """Physical parameters of the chain, in SI units (a sensor builds it from its validated config).

    frequency_hz: carrier f. sound_speed: c (m/s). source_level_db: SL (dB re 1 uPa at 1 m).
    absorption_db_per_m: alpha, one way. bandwidth_hz: -3 dB bandwidth B (range resolution c / (2 B)); 0: no
    range point spread beyond the bin. beam_width_rad: one-way -3 dB receive beam width in bearing; 0: no
    bearing point spread. beam_taper, sidelobe_db: the receive array's taper (and Chebyshev level).
    beam_steering: how the beams are formed across the fan (beam_pattern.BEAM_STEERINGS): "flat_array" (a steered
    flat array: beam j's pattern widens as 1 / cos theta_j) or "constant" (every beam the broadside pattern).
    element_width: width of the flat array's elements (wavelengths); their directivity weights each echo by its
    direction of arrival (flat_array only; 0: omnidirectional).
    pulse_taper: weighting of the pulse spectrum (range point spread). psf_extent: half-width of the kernels in
    beam widths (bearing) and range resolutions (range). noise_level_db: receiver noise NL per sample
    (dB re 1 uPa^2), ``None`` for none. post_tvg_noise_db: noise of the stages after the TVG (dB in the image's
    units after TVG and gain), ``None`` for none: referred to the input, 10^(post_tvg_noise_db / 10) / G(r).
    volume_scattering_db: S_v (dB re 1 m^-1), ``None`` for none.
    tvg_law: key of :data:`TVG_LAWS`; tvg_gain_db: fixed gain (dB). agc_level_db: automatic gain target (mean
    frame intensity after gain, dB), ``None`` for none. normalisation: "none" | "row" | "global".
    jitter: stratified jitter of ray directions. seed: keys every random stream. multipath: specular bounces and
    surface reverberation (sensors/acoustic/multipath.py); the default renders without either.
    """

    frequency_hz: float
    sound_speed: float
    source_level_db: float
    absorption_db_per_m: float
    bandwidth_hz: float
    beam_width_rad: float
    beam_taper: str
    pulse_taper: str
    sidelobe_db: float
    psf_extent: float
    noise_level_db: float | None
    volume_scattering_db: float | None
    tvg_law: str
    tvg_gain_db: float
    agc_level_db: float | None
    normalisation: str
    jitter: bool
    seed: int
    multipath: MultipathSettings = MultipathSettings()
    beam_steering: str = "flat_array"
    element_width: float = 0.0
    post_tvg_noise_db: float | None = None

    @property
    def wavelength(self) -> float:
        """lambda = c / f (m)."""
        return self.sound_speed / self.frequency_hz

    @property
    def range_resolution(self) -> float:
        """c / (2 B) (m), 0 when no bandwidth is set."""
        return self.sound_speed / (2.0 * self.bandwidth_hz) if self.bandwidth_hz > 0 else 0.0


class _ChannelsAndRanges:
    """What both fan descriptions derive the same way from ``rays_per_pose``, ``n_channels`` and the range
    window (``min_range``, ``max_range`` m, ``n_range`` bins)."""

    rays_per_pose: int
    n_channels: int
    min_range: float
    max_range: float
    n_range: int

    @property
    def rays_per_channel(self) -> int:
        return self.rays_per_pose // self.n_channels

    @property
    def range_bin(self) -> float:
        """Range bin size (m)."""
        return (self.max_range - self.min_range) / self.n_range


@dataclasses.dataclass(frozen=True)
class FanLayout(_ChannelsAndRanges):
    """The ray fan of one pose, as the chain sees it.

    bearings: (n_bearing_rays,) centre bearing per bearing ray (rad, +starboard), channel-major;
    bearing_cell: width of a bearing ray's cell (rad); elevations: (n_elev,) centre elevation per elevation ray
    (rad); elevation_weights: (n_elev,) solid angle times two-way elevation pattern per ray (sr);
    elevation_cell (rad); n_channels; channel_spacing: angle between channel centres (rad);
    min_range, max_range (m), n_range.
    """

    bearings: np.ndarray
    bearing_cell: float
    elevations: np.ndarray
    elevation_weights: np.ndarray
    elevation_cell: float
    n_channels: int
    channel_spacing: float
    min_range: float
    max_range: float
    n_range: int

    @property
    def n_elev(self) -> int:
        return int(self.elevations.size)

    @property
    def rays_per_pose(self) -> int:
        return int(self.bearings.size) * self.n_elev

    @property
    def channel_solid_angle(self) -> float:
        """Solid angle of one channel weighted by the two-way elevation pattern (sr)."""
        return float(self.elevation_weights.sum()) * (self.bearings.size // self.n_channels)


@dataclasses.dataclass(frozen=True)
class TableFan(_ChannelsAndRanges):
    """A ray fan given as a table (side-scan, profiling, single-beam), channel-major (channel c owns rays
    [c N / n_channels, (c + 1) N / n_channels)).

    directions: (N, 3) unit FLU directions of the cell centres; edges_a, edges_b: (N, 3) FLU edge vectors of each
    ray's cell (the cell is d + [-1/2, 1/2] a + [-1/2, 1/2] b, |a| and |b| its angular sizes in rad); weights: (N,)
    solid angle times two-way pattern (sr); n_channels; min_range, max_range (m), n_range. There is no bearing
    point spread across the channels of a table fan (channel_spacing 0).
    """

    directions: np.ndarray
    edges_a: np.ndarray
    edges_b: np.ndarray
    weights: np.ndarray
    n_channels: int
    min_range: float
    max_range: float
    n_range: int
    channel_spacing: float = 0.0

    @property
    def rays_per_pose(self) -> int:
        return int(self.weights.size)

    @property
    def channel_solid_angle(self) -> float:
        """Solid angle of the first channel weighted by its pattern (sr): the reverberating volume's."""
        return float(self.weights[: self.rays_per_channel].sum())


class _ChainBuffers:
    """Device scratch of one batch size."""

    def __init__(self, layout: FanLayout | TableFan, batch: int, device: Any,
                 multipath: MultipathSettings = MultipathSettings()) -> None:
        n_rays = batch * layout.rays_per_pose
        self.poses: wp.array | None = None  # the render's uploaded poses
        self.geometry: Any = None  # the render's scene geometry (object reflectivities and labels)
        self.rays = RayBuffers(n_rays, device, float(layout.max_range))
        self.ray_intensity = wp.empty(n_rays, dtype=wp.float32, device=device)
        self.ray_range = wp.empty(n_rays, dtype=wp.vec3, device=device)
        self.ray_bin = wp.empty(n_rays, dtype=wp.int32, device=device)
        self.ray_label = wp.empty(n_rays, dtype=wp.int32, device=device)
        self.ray_distance = self.rays.hits.distance  # hit distance, +inf for a miss
        # the scratch images' rows are padded so that a column (a step of one row) moves by an odd number of cache
        # lines: a column walk (the range pass's writes, the receiver's hit and label reads) then spreads over the
        # cache sets instead of thrashing one (n_range or n_channels a multiple of 1024 would step by 4 KiB)
        rows = (batch, layout.n_range, padded_row(layout.n_channels, 8))
        columns = (batch, layout.n_channels, padded_row(layout.n_range, 8))
        # Every image below is at rest between renders (0; labels -1): the kernels that write a bin set it back
        # after reading it (footprint_bin_kernel, bearing_receiver_kernel), so no render zero-fills an image.
        # Row-major (B, n_range, n_channels): after the range pass, read along rows by the bearing pass.
        self.field = wp.zeros(rows, dtype=wp.vec2, device=device)
        self.power = wp.zeros(rows, dtype=wp.float32, device=device)
        # the hit counts and labels as (count, label) pairs, copied from the channel-major ones by the range pass
        self.hit_label = wp.full(rows, wp.vec2i(0, -1), dtype=wp.vec2i, device=device)
        # Channel-major (B, n_channels, n_range): the binning's images, a channel's bins contiguous.
        self.pre_field = wp.zeros(columns, dtype=wp.vec2, device=device)
        self.pre_power = wp.zeros(columns, dtype=wp.float32, device=device)
        self.pre_hits = wp.zeros(columns, dtype=wp.int32, device=device)
        self.pre_labels = wp.full(columns, -1, dtype=wp.int32, device=device)
        self.peak = wp.empty(columns, dtype=wp.float32, device=device)
        self.row_echo = wp.zeros((batch, layout.n_range), dtype=wp.int32, device=device)
        self.row_max = wp.empty((batch, layout.n_range), dtype=wp.float32, device=device)
        self.row_sum = wp.empty((batch, layout.n_range), dtype=wp.float32, device=device)
        self.frame_max = wp.empty(batch, dtype=wp.float32, device=device)
        # multipath: the bounce state, every block's echoes (channel-major, blocks within a channel) and the
        # primary hit distance (the bounce casts reuse the hit arrays)
        self.blocks = multipath.chain_blocks if multipath.active else 1
        self.bounce = BounceState(n_rays, device) if multipath.active else None
        self.mixed = (MixedPathBuffers(n_rays, multipath.bounces, device)
                      if multipath.active and multipath.mixed else None)
        if multipath.active:
            n_echo = n_rays * self.blocks
            self.echo_intensity = wp.empty(n_echo, dtype=wp.float32, device=device)
            self.echo_range = wp.empty(n_echo, dtype=wp.vec3, device=device)
            self.echo_bin = wp.empty(n_echo, dtype=wp.int32, device=device)
            self.echo_label = wp.empty(n_echo, dtype=wp.int32, device=device)
            self.ray_distance = wp.empty(n_rays, dtype=wp.float32, device=device)
        else:
            self.echo_intensity, self.echo_range, self.echo_bin, self.echo_label = (
                self.ray_intensity, self.ray_range, self.ray_bin, self.ray_label)

    @staticmethod
    def nbytes(layout: FanLayout | TableFan, batch: int, multipath: MultipathSettings = MultipathSettings()) -> int:
        """Scratch bytes: per ray 24 (intensity, range/footprint/phase, bin, label) + ``RayBuffers.BYTES_PER_RAY``
        (origin, direction and hit, distance included, for the ray-cast backend); per row 12 (maximum, sum, echo
        flag); per bin 44 (complex and intensity images before and after the range pass, hit counts and labels
        before and after it, peak scratch; rows padded by :func:`padded_row`). With multipath, per ray also
        ``BounceState.BYTES_PER_RAY``, 4 (primary distance), 24 per echo block and the mixed paths' visibility rays and cross-channel echoes
        (``chain_multipath_bytes_per_ray``)."""
        per_ray = 24 + RayBuffers.BYTES_PER_RAY
        if multipath.active:
            per_ray += chain_multipath_bytes_per_ray(multipath)
        bins = 20 * layout.n_range * padded_row(layout.n_channels, 8) + 24 * layout.n_channels * padded_row(
            layout.n_range, 8)
        return batch * (64 + per_ray * layout.rays_per_pose + 12 * layout.n_range + bins)


class DeviceChain:
    """Renders a fan through the device chain on ``device``; holds its point-spread taps and scratch buffers.
    ``raycast_backend``: the sensor config's override of every cast the chain makes (``None``: the scene's).

    Scratch is kept per calling thread (:class:`~oceansim_py.sensors.scratch.ScratchCache`) for the last
    ``MAX_CACHED_BATCH_SIZES`` batch sizes, so renders from several threads run concurrently on their own buffers.
    """

    MAX_CACHED_BATCH_SIZES = 2

    def __init__(self, settings: DeviceSettings, layout: FanLayout | TableFan, device: Any,
                 sensor_id: int = 0, raycast_backend: str | None = None) -> None:
        self.settings = settings
        self.raycast_backend = raycast_backend
        self.layout = layout
        self.device = device
        self.sensor_id = int(sensor_id)
        s = settings
        self.range_taps = (range_kernel(s.range_resolution, layout.range_bin, s.pulse_taper, s.sidelobe_db,
                                        s.psf_extent) if s.bandwidth_hz > 0 else np.ones(1, np.float32))
        if s.beam_width_rad > 0:
            if layout.channel_spacing <= 0:
                raise ConfigError("beam_width: this sensor's channels are not beams across a bearing fan, so it "
                                  "has no bearing point spread; set beam_width to 0")
            array = LineArray(s.beam_width_rad, s.beam_taper, s.sidelobe_db)
            extent = s.psf_extent * s.beam_width_rad
            broadside = bearing_kernel(array, layout.channel_spacing, extent)
            self.bearing_taps = bearing_kernels(array, layout.n_channels, layout.channel_spacing, extent,
                                                s.beam_steering, s.element_width)
            # a steered flat array's beam j gathers sum h_j^2 / sum h^2 (~ E(theta_j)^2 / cos theta_j) times the
            # broadside beam's volume; a lens's beams all the same
            self.column_reverb = beam_equivalent_widths(array, layout.n_channels, layout.channel_spacing, extent,
                                                        s.beam_steering, s.element_width)
        else:
            broadside = np.ones(1, np.float32)
            self.bearing_taps = np.ones((layout.n_channels, 1), np.float32)
            self.column_reverb = np.ones(layout.n_channels)
        ranges = layout.min_range + (np.arange(layout.n_range) + 0.5) * layout.range_bin
        gain = 10.0 ** (tvg_db(ranges, s.tvg_law, s.absorption_db_per_m, s.tvg_gain_db) / 10.0)
        reverb = np.zeros(layout.n_range)
        if s.volume_scattering_db is not None:
            level = (s.source_level_db - 40.0 * np.log10(ranges) - 2.0 * s.absorption_db_per_m * ranges
                     + s.volume_scattering_db + 10.0 * np.log10(ranges**2 * layout.channel_solid_angle
                                                                * layout.range_bin))
            # Through the point spread, a broadside sample gathers sum(h_r^2) sum(h_b^2) bins' worth of volume
            # (column_reverb: another beam's relative to it).
            reverb = 10.0 ** (level / 10.0) * float(np.sum(self.range_taps.astype(np.float64) ** 2)
                                                    * np.sum(broadside.astype(np.float64) ** 2))
        self._row_gain = wp.array(gain.astype(np.float32), dtype=wp.float32, device=device)
        self._row_noise = wp.array(row_noise_intensity(gain, s.noise_level_db, s.post_tvg_noise_db),
                                   dtype=wp.float32, device=device)
        self._row_reverb = wp.array(reverb.astype(np.float32), dtype=wp.float32, device=device)
        self._range_taps = wp.array(self.range_taps, dtype=wp.float32, device=device)
        self._bearing_taps, self._tap_spans, self._column_reverb = receiver_tables(self.bearing_taps,
                                                                                  self.column_reverb, device)
        angles = 2.0 * np.pi * np.arange(2 ** int(k.PHASOR_BITS)) / 2 ** int(k.PHASOR_BITS)
        self._exp_table = wp.array(exponential_table(int(k.EXP_TABLE_BITS)), dtype=wp.float32, device=device)
        self._phasors = wp.array(np.stack([np.cos(angles), np.sin(angles)], 1).astype(np.float32), dtype=wp.vec2,
                                 device=device)
        self._scatterers = wp.array(scatterer_phasor_table(int(k.PHASOR_BITS)), dtype=wp.vec2, device=device)
        if isinstance(layout, TableFan):
            self._table = [wp.array(np.asarray(a, dtype=np.float32), dtype=wp.vec3, device=device)
                           for a in (layout.directions, layout.edges_a, layout.edges_b)]
            self._weights = wp.array(np.asarray(layout.weights, dtype=np.float32), dtype=wp.float32, device=device)
            self._table_order: wp.array | None = None  # the mixed paths' search (none without them)
            self._table_cones: wp.array | None = None
            self._cone_size = 0
            if settings.multipath.active and settings.multipath.mixed:
                order, cones, self._cone_size = table_cones(layout)
                self._table_order = wp.array(order, dtype=wp.int32, device=device)
                self._table_cones = wp.array(cones, dtype=wp.vec4, device=device)
        else:
            self._bearings = wp.array(np.stack([np.cos(layout.bearings), np.sin(layout.bearings)], 1).astype(np.float32),
                                      dtype=wp.vec2, device=device)
            table = np.stack([np.cos(layout.elevations), np.sin(layout.elevations), layout.elevation_weights], 1)
            self._elev_table = wp.array(table.astype(np.float32), dtype=wp.vec3, device=device)
        # the rays' jittered sensor-frame directions do not change from frame to frame: computed once here
        jitter_key = _host_key(s.seed, 0, self.sensor_id, int(k.STREAM_JITTER))
        self._directions_flu = wp.empty(layout.rays_per_pose, dtype=wp.vec3, device=device)
        if isinstance(layout, TableFan):
            launch_1d(k.table_directions_kernel, layout.rays_per_pose,
                      [*self._table, int(s.jitter), jitter_key, self._directions_flu], device)
        else:
            launch_1d(k.fan_directions_kernel, layout.rays_per_pose,
                      [self._bearings, float(layout.bearing_cell), self._elev_table, float(layout.elevation_cell),
                       layout.n_elev, int(s.jitter), jitter_key, self._directions_flu], device)
        mp = settings.multipath
        if mp.active and mp.mixed and isinstance(layout, FanLayout):
            uniform = [np.allclose(np.diff(a), c, rtol=1e-4, atol=1e-9) for a, c in
                       ((layout.bearings, layout.bearing_cell), (layout.elevations, layout.elevation_cell))]
            if not all(uniform):
                raise ConfigError("multipath_mixed_paths: the mixed-path returns find a direction's channel on a "
                                  "uniform bearing x elevation grid, and this fan is not one; set "
                                  "multipath_mixed_paths to false")
        self._tracer = (BounceTracer(mp, s.frequency_hz, s.sound_speed, device, raycast_backend) if mp.active
                        else None)
        # Without multipath, a CPU render computes each ray's echo where it bins it (one pass over the rays, no
        # per-ray echo arrays); on CUDA a thread per ray computes the echoes first (the binning has a thread per
        # channel only). Both give the same values.
        self._fused = self._tracer is None and wp.get_device(device).is_cpu
        table = isinstance(layout, TableFan)
        self._echo_kernel = k.device_table_ray_echo_kernel if table else k.device_ray_echo_kernel
        self._fused_kernel = k.device_table_bin_kernel if table else k.device_fan_bin_kernel
        self._row_order = row_order(layout.n_range, layout.n_channels)
        self._buffers: ScratchCache[_ChainBuffers] = ScratchCache(self.MAX_CACHED_BATCH_SIZES)
        self._poses = PoseUploads(device, self.MAX_CACHED_BATCH_SIZES)

    def memory_bytes(self, batch: int) -> int:
        """Device scratch bytes a render of ``batch`` poses needs (not counting the sensor's result arrays)."""
        return _ChainBuffers.nbytes(self.layout, batch, self.settings.multipath)

    def _buffers_for(self, batch: int) -> _ChainBuffers:
        buf = self._buffers.get(batch)
        if buf is None:
            lay = self.layout
            n = batch * max(lay.rays_per_pose, lay.n_range * lay.n_channels)
            if n >= 2**31:
                fix = "render fewer poses at once" if batch > 1 else "use fewer rays, range bins or beams per ping"
                raise ConfigError(f"device-chain render of {batch} pose(s) would index {n} rays or bins, past the "
                                  f"2^31 limit of a launch; {fix}")
            check_memory(self.memory_bytes(batch), self.device, f"device-chain render of {batch} pose(s) "
                         f"({lay.rays_per_pose} rays, {lay.n_range} x {lay.n_channels} bins each)",
                         "use fewer rays, range bins or beams, or render fewer poses at once")
            buf = self._buffers.put(batch, _ChainBuffers(lay, batch, self.device, self.settings.multipath))
        return buf

    def render(self, scene: Any, poses: np.ndarray, frame_index: int, intensity: wp.array | None,
               clean: wp.array | None = None, hits: wp.array | None = None, labels: wp.array | None = None,
               first_return: tuple[wp.array, float] | None = None,
               then: Callable[[Any], None] | None = None) -> None:
        """Render the (B, 7) ``poses`` (validated by the sensor) in ``scene`` (a :class:`~oceansim_py.scene.Scene`,
        whose ray-cast backend casts the rays) into the four (B, n_range, n_channels) result arrays (units in the
        module docstring); ``intensity`` None casts the rays only.
        For a :class:`TableFan`, ``first_return`` = (altitude (B,), sigma) receives each pose's nearest hit (m,
        NaN without one) plus N(0, sigma) noise (``first_return_kernel`` of kernels/acoustic_fans.py).
        ``then(buffers)``, if given, runs before another render may reuse the scratch: it may read the per-ray
        arrays (ray_intensity re 1 uPa^2, ray_bin, ray_label, ray_distance of a table fan, poses).
        The result arrays must be contiguous (the receiver writes each row through a pointer): a strided view or
        an array of another shape raises :class:`ConfigError` before anything is written."""
        batch = int(poses.shape[0])
        lay = self.layout
        if intensity is not None:
            check_result_arrays((batch, lay.n_range, lay.n_channels), intensity=intensity, clean=clean, hits=hits,
                                labels=labels)
        buf = self._cast(scene, poses)
        if intensity is not None:
            if self._fused:
                # the echoes are computed and binned in one pass (filling the per-ray echo arrays as it goes)
                launch_1d(self._fused_kernel, batch * lay.n_channels,
                          [*self._echo_args(buf), lay.rays_per_channel, lay.n_channels, *self._bin_args(buf)],
                          self.device, min_chunk=max(1, RAYS_PER_CHUNK // lay.rays_per_channel))
            else:
                launch_1d(k.footprint_bin_kernel, batch * lay.n_channels,
                          [buf.echo_intensity, buf.echo_range, buf.echo_bin, buf.echo_label,
                           lay.rays_per_channel * buf.blocks, lay.rays_per_pose * buf.blocks, lay.n_channels,
                           float(lay.min_range), float(lay.range_bin), lay.n_range, *self._bin_args(buf)],
                          self.device, min_chunk=1)
            self._image(buf, batch, frame_index, intensity, clean, hits, labels)
        elif self._fused and then is not None:
            launch_1d(self._echo_kernel, batch * lay.rays_per_pose, self._echo_args(buf), self.device)
        if then is not None:
            then(buf)
        if first_return is not None:
            if not isinstance(self.layout, TableFan):
                raise ConfigError("DeviceChain.render: first_return is only available for table fans")
            launch_1d(fk.first_return_kernel, int(poses.shape[0]),
                      [buf.ray_distance, self.layout.rays_per_pose, int(self.settings.seed), int(frame_index),
                       self.sensor_id, float(first_return[1]), first_return[0]], self.device, min_chunk=1)

    def _echo_args(self, buf: _ChainBuffers) -> list[Any]:
        """Arguments of the per-ray echo kernel (``device_ray_echo_kernel`` / ``device_table_ray_echo_kernel``),
        which the fused echo-and-binning kernels start with."""
        s, lay, rays = self.settings, self.layout, buf.rays
        g = buf.geometry
        phase_key = _host_key(s.seed, 0, self.sensor_id, int(k.STREAM_PHASE))
        hits = [rays.directions, *rays.hit_args(), g.object_reflectivity, g.object_label, buf.poses]
        common = [float(lay.min_range), float(lay.range_bin), lay.n_range, float(s.absorption_db_per_m),
                  10.0 ** (s.source_level_db / 10.0), float(s.wavelength), 0.25 * float(s.wavelength),
                  buf.ray_intensity, buf.ray_range, buf.ray_bin, buf.ray_label]
        if isinstance(lay, TableFan):
            return [*hits, *self._table[1:], self._weights, lay.rays_per_pose, phase_key, *common]
        return [*hits, *self._fan_cells(), phase_key, *common]

    def _fan_cells(self) -> list[Any]:
        lay = self.layout
        return [self._bearings, float(lay.bearing_cell), self._elev_table, float(lay.elevation_cell), lay.n_elev,
                lay.rays_per_pose]

    def _bin_args(self, buf: _ChainBuffers) -> list[Any]:
        """The binning kernels' last arguments: range taps, scratch images and the scatterers' phasor table
        (:func:`scatterer_phasor_table`)."""
        return [self._range_taps, buf.pre_field, buf.pre_power, buf.pre_hits, buf.pre_labels, buf.peak, buf.field,
                buf.power, buf.row_echo, buf.hit_label, self._scatterers]

    def _cast(self, scene: Any, poses: np.ndarray) -> _ChainBuffers:
        """Upload ``poses``, build and cast the rays; with multipath, trace the bounces into the echo blocks; else,
        off the fused CPU path, the per-ray echoes (the fused path computes them where it bins them)."""
        s, lay, dev = self.settings, self.layout, self.device
        batch = int(poses.shape[0])
        n_rays = batch * lay.rays_per_pose
        buf = self._buffers_for(batch)
        buf.poses = self._poses.upload(poses)
        buf.geometry = scene.geometry
        rays = buf.rays
        phase_key = _host_key(s.seed, 0, self.sensor_id, int(k.STREAM_PHASE))
        blocks = -(-lay.rays_per_pose // int(k.RAY_BLOCK))
        launch_1d(k.pose_rays_kernel, batch * blocks,
                  [buf.poses, self._directions_flu, lay.rays_per_pose, rays.origins, rays.directions], dev,
                  min_chunk=max(1, ROTATIONS_PER_CHUNK // int(k.RAY_BLOCK)))
        rays.cast(scene, self.raycast_backend)
        if self._tracer is not None:
            if isinstance(lay, TableFan):
                self._trace(scene, buf, n_rays, km.table_bounce_init_kernel,
                            [buf.poses, *self._table[1:], self._weights, lay.rays_per_pose], phase_key,
                            km.chain_mixed_echo_table_kernel,
                            [buf.poses, *self._table, self._weights, lay.rays_per_pose, lay.n_channels,
                             self._table_cones, self._cone_size, self._table_order])
            else:
                n_bearing = int(lay.bearings.size)
                self._trace(scene, buf, n_rays, km.fan_bounce_init_kernel, [buf.poses, *self._fan_cells()],
                            phase_key, km.chain_mixed_echo_fan_kernel,
                            [buf.poses, self._elev_table, float(lay.bearings[0]), float(lay.bearing_cell), n_bearing,
                             float(lay.elevations[0]), float(lay.elevation_cell), lay.n_elev, lay.n_channels])
        elif not self._fused:
            launch_1d(self._echo_kernel, n_rays, self._echo_args(buf), dev)
        return buf

    def _trace(self, scene: Any, buf: _ChainBuffers, n_rays: int, init_kernel: Any, init_args: list[Any],
               phase_key: int, mixed_kernel: Any, mixed_args: list[Any]) -> None:
        """Multipath: the direct echo and one echo block per bounce (sensors/acoustic/multipath.py) into
        ``buf.echo_*``, with mixed paths also one block per bounce (after the same-path blocks) and the
        cross-channel arrivals, then the direct echoes copied to the per-ray arrays and the primary hit distance
        kept."""
        s, lay, dev = self.settings, self.layout, self.device
        rays, state, mixed = buf.rays, buf.bounce, buf.mixed
        blocks = buf.blocks
        bounces = s.multipath.bounces

        def init() -> None:
            launch_1d(init_kernel, n_rays, [*init_args, *state.init_outputs()], dev)

        def echo(block: int, iface: Any, law: Any) -> None:
            launch_1d(km.chain_bounce_echo_kernel, n_rays,
                      [rays.origins, rays.directions, *rays.hit_args(), iface.mu, iface.label, iface.interface, law,
                       state.path, state.amp, state.edge_a, state.edge_b, state.weight, phase_key,
                       float(lay.min_range), float(lay.range_bin), lay.n_range, float(s.absorption_db_per_m),
                       10.0 ** (s.source_level_db / 10.0), float(s.wavelength), 0.25 * float(s.wavelength), block,
                       blocks, lay.rays_per_channel, buf.echo_intensity, buf.echo_range, buf.echo_bin,
                       buf.echo_label], dev)
            if block == 0:
                launch_1d(km.primary_distance_kernel, n_rays, [rays.hits.distance, rays.hits.face, rays.hits.obj, law,
                                                               buf.ray_distance], dev)
            elif mixed is not None:
                self._tracer.visibility(scene, rays, mixed.rays, mixed.remaining, buf.poses, lay.rays_per_pose, iface,
                                        law)
                launch_1d(mixed_kernel, n_rays,
                          [rays.origins, rays.directions, *rays.hit_args(), mixed.rays.hits.face, iface.mu,
                           iface.label, iface.interface, law, state.path, state.amp, state.edge_a, state.edge_b,
                           state.weight, *mixed_args, phase_key, float(lay.min_range), float(lay.range_bin),
                           lay.n_range, float(s.absorption_db_per_m), 10.0 ** (s.source_level_db / 10.0),
                           float(s.wavelength), 0.25 * float(s.wavelength), bounces + block, blocks, block, bounces,
                           buf.echo_intensity, buf.echo_range, buf.echo_bin, buf.echo_label, *mixed.cross_outputs()],
                          dev)

        self._tracer.trace(scene, rays, state, float(lay.max_range), init, echo, mixed=mixed is not None)
        launch_1d(km.chain_first_block_kernel, n_rays,
                  [buf.echo_intensity, buf.echo_range, buf.echo_bin, buf.echo_label, blocks, lay.rays_per_channel,
                   buf.ray_intensity, buf.ray_range, buf.ray_bin, buf.ray_label], dev)

    def _image(self, buf: _ChainBuffers, batch: int, frame_index: int, intensity: wp.array, clean: wp.array,
               hits: wp.array, labels: wp.array) -> None:
        """After the binning: the mixed paths' cross-channel arrivals, the receiver, automatic gain and
        normalisation."""
        s, lay, dev = self.settings, self.layout, self.device
        dr = float(lay.range_bin)
        if buf.mixed is not None:
            launch_1d(km.cross_channel_bin_kernel, batch,
                      [*buf.mixed.cross_outputs(), lay.rays_per_pose * s.multipath.bounces, float(lay.min_range), dr,
                       lay.n_range, self._range_taps, buf.field, buf.power, buf.hit_label, buf.peak,
                       buf.row_echo, self._scatterers], dev, min_chunk=1)
        n_bins = batch * lay.n_range * lay.n_channels
        launch_1d(k.bearing_receiver_kernel, batch * lay.n_range,
                  [buf.field, buf.power, buf.hit_label, self._bearing_taps, self._tap_spans, self._column_reverb,
                   lay.n_range,
                   lay.n_channels,
                   self._row_noise, self._row_reverb, int(s.seed), int(frame_index), self.sensor_id, self._exp_table,
                   self._phasors, self._row_gain, buf.row_echo, intensity, clean, hits, labels, buf.row_sum,
                   int(s.agc_level_db is not None), *self._row_order], dev,
                  min_chunk=receiver_chunk(batch * lay.n_range, lay.n_channels, cpu_threads()))
        if s.agc_level_db is not None:
            launch_1d(k.frame_mean_of_rows_kernel, batch, [buf.row_sum, lay.n_range, lay.n_channels, buf.frame_max],
                      dev, min_chunk=1)
            launch_1d(k.scale_frame_kernel, n_bins, [intensity, clean, buf.frame_max,
                                                     float(10.0 ** (s.agc_level_db / 10.0)), lay.n_range,
                                                     lay.n_channels], dev)
        if s.normalisation != "none":
            launch_1d(ks.sonar_row_max_kernel, batch * lay.n_range,
                      [intensity, lay.n_channels, lay.n_range, buf.row_max], dev, min_chunk=64)
            launch_1d(ks.sonar_frame_max_kernel, batch, [buf.row_max, lay.n_range, buf.frame_max], dev,
                      min_chunk=1)
            launch_1d(k.normalise_kernel, n_bins, [intensity, clean, buf.row_max, buf.frame_max,
                                                   int(s.normalisation == "row"), lay.n_range, lay.n_channels], dev)


def receiver_tables(taps: np.ndarray, column_reverb: np.ndarray,
                    device: Any) -> tuple[wp.array, wp.array, wp.array]:
    """The receiver's bearing tap table, its tiles' spans of nonzero taps and the per-channel reverberation factors
    on ``device`` (``bearing_receiver_kernel``): ``taps`` (n_channels, 2 M + 1), row j channel j's kernel, packed
    into tiles of ``TAP_LANES`` channels, (n_pad / TAP_LANES, 2 M + 1, TAP_LANES) float32 with the channels padded
    with zero taps to a whole number of receiver blocks (n_pad); per tile (t_lo, t_hi), its lanes' taps all zero
    outside t_lo <= t < t_hi ((0, 0) for a tile of padding); ``column_reverb`` (n_channels,) padded with ones."""
    n, width = taps.shape
    n_pad = -(-n // int(k.RECEIVER_BLOCK)) * int(k.RECEIVER_BLOCK)
    table = np.zeros((n_pad, width), np.float32)
    table[:n] = taps
    tiles = table.reshape(n_pad // int(k.TAP_LANES), int(k.TAP_LANES), width).transpose(0, 2, 1)
    nonzero = (tiles != 0.0).any(axis=2)
    spans = np.zeros((tiles.shape[0], 2), np.int32)
    for c, row in enumerate(nonzero):
        at = np.flatnonzero(row)
        if at.size:
            spans[c] = at[0], at[-1] + 1
    column = np.ones(n_pad, np.float32)
    column[:n] = column_reverb
    return (wp.array(np.ascontiguousarray(tiles), dtype=wp.float32, device=device),
            wp.array(spans, dtype=wp.vec2i, device=device), wp.array(column, dtype=wp.float32, device=device))


def check_result_arrays(shape: tuple[int, int, int], **arrays: wp.array | None) -> None:
    """Raise :class:`ConfigError` unless every one of ``arrays`` (DeviceChain.render's result arrays, by argument
    name) is a contiguous Warp array of ``shape`` (B, n_range, n_channels): the receiver (``receiver_row`` of
    kernels/acoustic_chain.py) writes a row through a raw pointer, so a strided view would get scrambled images
    and a smaller array would be written past its end."""
    for name, a in arrays.items():
        if a is None or tuple(a.shape) != tuple(shape) or not a.is_contiguous:
            got = "None" if a is None else f"shape {tuple(a.shape)}" + ("" if a.is_contiguous else ", not contiguous")
            raise ConfigError(f"device-chain render: the {name} result array must be a contiguous (B, n_range, "
                              f"n_channels) = {tuple(shape)} array, got {got}; pass arrays from wp.empty/wp.zeros "
                              f"of that shape (or no out= to let the sensor allocate them)")


def padded_row(n: int, itemsize: int) -> int:
    """Row length (elements, >= ``n``, less than ``n`` + 128 / itemsize) whose stride for ``itemsize``-byte elements
    is an odd number of 64-byte cache lines (n padded to 8 mod 16 for 8 bytes: 4-byte images with the same rows
    then step by an odd number of half lines)."""
    period = 128 // itemsize
    return n + (period // 2 - n) % period


def receiver_chunk(n_rows: int, n_channels: int, threads: int) -> int:
    """Rows per CPU chunk of the receiver launch (``launch_1d``'s min_chunk) for ``n_rows`` rows (all frames) of
    ``n_channels`` bins on ``threads`` threads: one chunk per thread (the row permutation of :func:`row_order`
    gives each its share of the rows with echoes, and every further chunk costs its launch, ~0.1 ms of CPU time on
    a 2-core host against ~2 ms of receiver work for an Oculus frame), none smaller than ``BINS_PER_CHUNK`` bins
    (16 rows at least)."""
    return max(16, BINS_PER_CHUNK // max(1, n_channels), n_rows // max(1, threads))


def row_order(n_range: int, n_channels: int) -> tuple[int, int]:
    """(row_block, block_step) of the receiver's row permutation (``bearing_receiver_kernel``): blocks of
    ``ROW_BLOCK`` rows (contiguous memory, so the CPU's prefetch still streams the writes) visited with stride
    ``block_step``, the integer nearest n_blocks / phi (golden ratio) coprime with n_blocks, so every CPU chunk
    gets its share of the rows with echoes; (1, 1) (rows in order) below ``ROW_BLOCK`` channels or two blocks."""
    n_blocks = n_range // ROW_BLOCK
    if n_channels < ROW_BLOCK or n_blocks < 3:
        return 1, 1
    step = max(1, round(n_blocks / 1.6180339887498949))
    while math.gcd(step, n_blocks) != 1:
        step += 1
    return ROW_BLOCK, step


#: Seed of the fixed permutation that pairs the scatterer phasor table's amplitudes with its phases.
SCATTERER_TABLE_SEED = 20261128


def scatterer_phasor_table(bits: int) -> np.ndarray:
    """(2 * 2^bits, 2) float32: the binning's ``phasors``, the footprint pieces' scatterers a_m exp(i 2 pi n / 2^bits).
    Rows 0 .. 2^bits - 1 hold the unit phasors exp(i 2 pi n / 2^bits) of the phase codes n (kernels/acoustic_chain.py
    ``echo_phase``, ``echo_phasor``); row 2^bits + m holds (a_m, 0), a Rayleigh amplitude: the square root of the
    unit exponential's mid-quantile -ln(1 - (k + 1/2) / 2^bits) with k = pi(m), pi a fixed random permutation
    (:data:`SCATTERER_TABLE_SEED`), scaled so that the mean a^2 is 1 (``piece_amplitude``: m is the scatterer bits of
    the echo's code, fixed to the surface patch, so that a sub-wavelength move of the sensor turns the phase and
    keeps the amplitude). A piece stands for a patch of many scatterers, so its amplitude is that of a circular
    complex Gaussian: any number of pieces in a cell sums to exponential intensity (scintillation index 1; unit
    phasors gave 1 - 1/N for N pieces: 0.3-0.6 at one or two rays per beam), and the expected intensity (the clean
    image, the sums of the pieces' intensities) is unchanged."""
    n = 2**bits
    quantiles = -np.log1p(-(np.arange(n, dtype=np.float64) + 0.5) / n)
    amplitude = np.sqrt(quantiles[np.random.default_rng(SCATTERER_TABLE_SEED).permutation(n)] / quantiles.mean())
    angles = 2.0 * np.pi * np.arange(n) / n
    unit = np.stack([np.cos(angles), np.sin(angles)], 1)
    return np.concatenate([unit, np.stack([amplitude, np.zeros(n)], 1)]).astype(np.float32)


def exponential_table(bits: int) -> np.ndarray:
    """(2^bits + 1,) float32 quantiles -ln(1 - n / 2^bits) of the unit exponential law, n = 0 .. 2^bits (the last,
    +inf, stored as the largest float32; the kernel computes the last segments exactly and never reads it):
    ``unit_exponential`` of kernels/acoustic_chain.py interpolates them."""
    n = np.arange(2**bits + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        table = -np.log1p(-n / 2**bits)
    table[-1] = np.finfo(np.float32).max
    return table.astype(np.float32)


def table_cones(layout: TableFan) -> tuple[np.ndarray, np.ndarray, int]:
    """The mixed paths' search structure of a table fan (kernels/multipath.py ``chain_mixed_echo_table_kernel``):
    the rays in Z-order of their bearing and elevation (10-bit quantised each), (N,) int32; their bounding cones in
    runs of m = ceil(sqrt(N)) rays of that order, (n_runs, 4) float32 rows (unit axis, cos of the half-angle to the
    farthest corner d +- a/2 +- b/2 of the run's cells, less 1e-6); and m."""
    d = np.asarray(layout.directions, dtype=np.float64)
    a = np.asarray(layout.edges_a, dtype=np.float64)
    b = np.asarray(layout.edges_b, dtype=np.float64)
    n = d.shape[0]
    m = max(int(np.ceil(np.sqrt(n))), 1)
    angles = np.stack([np.arctan2(d[:, 1], d[:, 0]), np.arcsin(np.clip(d[:, 2], -1.0, 1.0))], axis=1)
    span = np.maximum(angles.max(0) - angles.min(0), 1e-12)
    q = np.minimum(((angles - angles.min(0)) / span * 1023.0).astype(np.int64), 1023)
    code = np.zeros(n, dtype=np.int64)
    for bit in range(10):
        code |= ((q[:, 0] >> bit) & 1) << (2 * bit) | ((q[:, 1] >> bit) & 1) << (2 * bit + 1)
    order = np.argsort(code, kind="stable")
    corners = np.stack([d + sa * 0.5 * a + sb * 0.5 * b for sa in (-1, 1) for sb in (-1, 1)], axis=1)
    corners /= np.linalg.norm(corners, axis=2, keepdims=True)
    rows = []
    for lo in range(0, n, m):
        run = order[lo:lo + m]
        axis = d[run].sum(0)
        norm = np.linalg.norm(axis)
        axis = axis / norm if norm > 1e-12 else d[run[0]]
        cos = float((corners[run] @ axis).min()) - 1e-6
        rows.append([*axis, max(cos, -1.0)])
    return order.astype(np.int32), np.asarray(rows, dtype=np.float32), m


def _host_key(seed: int, frame: int, sensor: int, stream: int) -> int:
    """kernels/random.py ``stream_key`` computed on the host (the same 31-bit value)."""
    def pcg(x: int) -> int:
        state = (x * 747796405 + 2891336453) & 0xFFFFFFFF
        word = (((state >> ((state >> 28) + 4)) ^ state) * 277803737) & 0xFFFFFFFF
        return ((word >> 22) ^ word) & 0xFFFFFFFF

    h = pcg(seed & 0xFFFFFFFF)
    h = pcg(h ^ (frame & 0xFFFFFFFF))
    h = pcg(h ^ ((sensor * 0x9E3779B9) & 0xFFFFFFFF))
    h = pcg(h ^ ((stream * 0x85EBCA6B) & 0xFFFFFFFF))
    return h >> 1


#: Largest receiver noise per sample referred to the input (re 1 uPa^2) :func:`row_noise_intensity` accepts: float32's
#: largest value (3.4e38) over 340, so that the receiver's intensity draws (up to ln 2^32 = 22 times the variance) and
#: the echoes added to them stay finite before the gain.
MAX_ROW_NOISE_INTENSITY = 1e36


def row_noise_intensity(gain: np.ndarray, noise_level_db: float | None,
                        post_tvg_noise_db: float | None) -> np.ndarray:
    """Per range row, the receiver noise referred to the input (re 1 uPa^2 per sample, float32): the input noise
    10^(NL / 10) plus the post-TVG noise 10^(N_post / 10) / G(r) (``gain``: G(r) per row, linear on intensity),
    a ``None`` level contributing nothing. Both are complex Gaussian, so their sum is one complex Gaussian of that
    variance: after the gain, intensity |s + n|^2 G(r) holds NL + G(r) and N_post as a device's output does.
    Raises ConfigError (naming ``post_tvg_noise_level``) where a row's value passes
    :data:`MAX_ROW_NOISE_INTENSITY`: a gain so low that the post-TVG noise referred to the input would overflow."""
    noise = np.full(np.shape(gain), 10.0 ** (noise_level_db / 10.0) if noise_level_db is not None else 0.0)
    if post_tvg_noise_db is not None:
        with np.errstate(over="ignore", divide="ignore"):
            noise = noise + 10.0 ** (post_tvg_noise_db / 10.0) / np.asarray(gain, dtype=np.float64)
            lowest_gain_db = 10.0 * np.log10(np.min(gain))
        if not np.max(noise, initial=0.0) <= MAX_ROW_NOISE_INTENSITY:
            raise ConfigError(f"post_tvg_noise_level: {post_tvg_noise_db} dB over the lowest TVG and fixed gain "
                              f"G(r) = {lowest_gain_db:.1f} dB is a receiver noise past "
                              f"{10.0 * math.log10(MAX_ROW_NOISE_INTENSITY):.0f} dB re 1 uPa^2 referred to the "
                              f"input, where float32 overflows; lower it, or raise tvg_gain or min_range")
    return noise.astype(np.float32)


def tvg_db(ranges_m: np.ndarray, law: str, alpha_db_per_m: float, gain_db: float) -> np.ndarray:
    """Host mirror of the receiver's TVG in dB: k log10 r + 2 alpha r + gain (k from :data:`TVG_LAWS`; no
    absorption term for law "none")."""
    kk = TVG_LAWS[law]
    r = np.asarray(ranges_m, dtype=np.float64)
    if kk == 0.0:
        return np.full_like(r, gain_db)
    return kk * np.log10(r) + 2.0 * alpha_db_per_m * r + gain_db

