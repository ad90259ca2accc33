"""Mechanically scanned imaging sonar (MSIS): Blue Robotics Ping360, Tritech Micron / SeaKing class.

One fan-shaped beam (narrow in the horizontal, wide in the vertical) on a head that a stepper motor turns step
by step about the sensor's z axis. Each step is one ping at its own time and pose: step k fires at
``t0 + k * ping_period`` with the head at ``head_angle(k)`` and the vehicle wherever it is then, so a sweep taken
while moving is skewed as a real one is. Each ping's range bins go through the acoustic device chain
(:class:`~oceansim_py.sensors.acoustic.chain.DeviceChain`: sonar equation, coherent speckle, range point spread,
receiver noise, TVG; docs/PHYSICS_ACOUSTIC_CHAIN.md), the beam given to it as a one-channel
:class:`~oceansim_py.sensors.acoustic.chain.TableFan`.

Frames and angles: sensor FLU (x forward, y port, z up; the head's rotation axis is z). The head angle
``theta`` is measured in the sensor's x-y plane from +x, positive clockwise seen from above (towards
starboard, as every bearing in this package); the beam then points along (cos theta, -sin theta, 0). Ping360
reports its head angle in gradians (400 per turn): ``theta_deg = gradians * 360 / 400 = 0.9 * gradians``
(:func:`gradians_to_degrees`). Config angles in degrees, ranges in metres, times in seconds.

Scan pattern: with ``sector_width = 360`` the head turns on in one direction, ``steps_per_turn = 360 /
step_angle`` steps per turn (step k at ``sector_centre + k * step_angle``, wrapped). A sector scan has ``n =
sector_width / step_angle`` steps between its edges and reverses there, as real heads do: positions
0, 1, ..., n, n - 1, ..., 1, 0, 1, ... from the port edge ``sector_centre - sector_width / 2``. A *sweep* is one
turn (full circle: steps [s N, (s + 1) N)) or one pass from edge to edge (sector: steps [s n, (s + 1) n], n + 1
steps, consecutive sweeps sharing their turning step).

Dataset stream: one *step* per sample (rate = steps per second = 1 / ping_period), the natural stream of these
heads (Ping360 and Tritech drivers publish one message per ping); sample m is step m of the run, so its head
angle and its pose (the rig's pose at the sample time) are those of that step. :func:`assemble_sweeps` groups a
dataset's steps into sweeps (polar and Cartesian images).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from pathlib import Path
from typing import Any, ClassVar, Literal, Sequence

import numpy as np
import warp as wp

from oceansim_py.diagnostics import OceanSimWarning
from oceansim_py.errors import ConfigError
from oceansim_py.io import images
from oceansim_py.io.config import require, require_finite, require_seed, require_zero
from oceansim_py.poses import as_poses, compose_poses
from oceansim_py.limits import MAX_RANGE_BINS, check_config_memory
from oceansim_py.runtime import check_memory, resolve_device
from oceansim_py.sensors.acoustic.chain import DEVICE_CLEAN_UNIT, DEVICE_INTENSITY_UNIT, DeviceChain, TableFan
from oceansim_py.sensors.acoustic.device_config import DeviceChainFields
from oceansim_py.sensors.acoustic.display import COLORMAPS, apply_colormap, db_window_to_uint8
from oceansim_py.sensors.acoustic.presets import MSIS_DEVICE_PRESETS
from oceansim_py.sensors.acoustic_fan import RangeBinnedConfig, require_count
from oceansim_py.sensors.batching import check_render_call

_OWNER = "MsisConfig"

#: Ping360 head angles are gradians: 400 per turn.
GRADIANS_PER_TURN = 400


def gradians_to_degrees(gradians: float | np.ndarray) -> np.ndarray:
    """Ping360 head angle (gradians, 400 per turn) to degrees: ``gradians * 360 / 400 = 0.9 * gradians``."""
    return np.asarray(gradians, dtype=np.float64) * (360.0 / GRADIANS_PER_TURN)


@dataclasses.dataclass(frozen=True)
class MsisConfig(DeviceChainFields, RangeBinnedConfig):
    """MSIS parameters; the device-chain fields (frequency, source level, bandwidth, noise, TVG, ...) are those of
    :class:`~oceansim_py.sensors.acoustic.device_config.DeviceChainFields` (``model`` is always "device";
    ``beam_width`` must stay 0: one beam, no bearing point spread across channels).

    Attributes:
        horizontal_beamwidth: -3 dB beam width in the scan plane (degrees, narrow: 1-3 deg on real heads).
        vertical_beamwidth: -3 dB beam width across the scan plane (degrees, wide: 20-40 deg).
        horizontal_rays, vertical_rays: rays across the beam's two widths (a uniform grid over the -3 dB
            widths, each ray weighted by its solid angle, as the single-beam and side-scan fans).
        step_angle: head step (degrees); Ping360: gradians x 0.9 (1 grad = 0.9 deg, 400 steps per turn).
            ``sector_width / step_angle`` must be a whole number.
        sector_width: scanned sector (degrees, 360 = continuous full turns; less: a sector scan that reverses
            at its edges). sector_centre: head angle of the sector's centre (degrees, + starboard).
        ping_period: time between steps (s); 0: derived, two-way travel time to max_range plus
            ``processing_time`` (:attr:`step_period`).
        processing_time: time per step beyond the two-way travel time (s): motor step, transmit, transfer.
        min_range, max_range (m), range_bins: the range window and its bins.
        absorption: one-way absorption (dB/m) with ``absorption_model = "fixed"``.
        normalisation: "none" (intensities re 1 uPa^2 after gain) or "global" (each step by its largest bin).
        seed: keys every random draw (with the step index and the sensor id).
        display_floor, dynamic_range: 8-bit display window (dB) of the PNG views; colormap of the Cartesian view.
    """

    model: Literal["device"] = "device"
    frequency: float = 750000.0
    horizontal_beamwidth: float = 2.0
    vertical_beamwidth: float = 25.0
    horizontal_rays: int = 4
    vertical_rays: int = 24
    step_angle: float = 0.9
    sector_width: float = 360.0
    sector_centre: float = 0.0
    ping_period: float = 0.0
    processing_time: float = 0.01
    min_range: float = 0.75
    max_range: float = 20.0
    range_bins: int = 600
    absorption: float = 0.0
    normalisation: Literal["none", "global"] = "none"
    seed: int = 0
    display_floor: float = 60.0
    dynamic_range: float = 60.0
    colormap: Literal["gray", "copper", "hot", "amber"] = "amber"

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Blue Robotics Ping360, Tritech Micron and SeaKing (model "device"): values and the source of every field
        # in sensors/acoustic/presets.py (MSIS_DEVICE_PRESETS, FIELD_SOURCES["msis"]).
        name: values for name, (values, _source) in MSIS_DEVICE_PRESETS.items()
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        for name in ("horizontal_beamwidth", "vertical_beamwidth", "step_angle", "sector_width", "sector_centre",
                     "ping_period", "processing_time", "min_range", "max_range", "absorption", "display_floor",
                     "dynamic_range"):
            require_finite(getattr(self, name), _OWNER, name)
        require(self.model == "device", _OWNER, "model", f"must be 'device' (an MSIS renders through the acoustic "
                f"device chain), got {self.model!r}")
        require(0.0 < self.horizontal_beamwidth < 90.0, _OWNER, "horizontal_beamwidth",
                f"must lie in (0, 90) degrees, got {self.horizontal_beamwidth}")
        require(0.0 < self.vertical_beamwidth < 180.0, _OWNER, "vertical_beamwidth",
                f"must lie in (0, 180) degrees, got {self.vertical_beamwidth}")
        require_count(self, _OWNER, "horizontal_rays")
        require_count(self, _OWNER, "vertical_rays")
        require(0.0 < self.step_angle <= 90.0, _OWNER, "step_angle",
                f"must lie in (0, 90] degrees, got {self.step_angle} (Ping360: gradians x 0.9)")
        require(0.0 < self.sector_width <= 360.0, _OWNER, "sector_width",
                f"must lie in (0, 360] degrees (360: full turns), got {self.sector_width}")
        n = self.sector_width / self.step_angle
        require(abs(n - round(n)) < 1e-6 and round(n) >= 1, _OWNER, "step_angle",
                f"must divide sector_width = {self.sector_width} deg into a whole number of steps, got "
                f"{self.step_angle} deg ({n:.4f} steps); e.g. {self.sector_width / max(1, round(n)):.6g}")
        require(-360.0 <= self.sector_centre <= 360.0, _OWNER, "sector_centre",
                f"must lie in [-360, 360] degrees, got {self.sector_centre}")
        require(self.ping_period >= 0.0, _OWNER, "ping_period", f"must be >= 0 s (0: derived from the range), got "
                f"{self.ping_period}")
        require(self.processing_time >= 0.0, _OWNER, "processing_time", f"must be >= 0 s, got "
                f"{self.processing_time}")
        require(self.min_range >= 0.0, _OWNER, "min_range", f"must be >= 0 m, got {self.min_range}")
        require(self.max_range > self.min_range, _OWNER, "max_range",
                f"must be greater than min_range ({self.min_range} m), got {self.max_range} m")
        require(isinstance(self.range_bins, int) and 2 <= self.range_bins <= MAX_RANGE_BINS, _OWNER, "range_bins",
                f"must be an integer in [2, {MAX_RANGE_BINS:,}], got {self.range_bins!r}")
        require(self.absorption >= 0.0, _OWNER, "absorption", f"must be >= 0 dB/m, got {self.absorption}")
        require(self.normalisation in ("none", "global"), _OWNER, "normalisation",
                f"must be one of ['none', 'global'], got {self.normalisation!r}")
        require_seed(self.seed, _OWNER)
        require(self.dynamic_range > 0.0, _OWNER, "dynamic_range", f"must be > 0 dB, got {self.dynamic_range}")
        require(self.colormap in COLORMAPS, _OWNER, "colormap", f"must be one of {list(COLORMAPS)}, got "
                f"{self.colormap!r}")
        self.validate_device_chain(_OWNER, 180.0, self.vertical_beamwidth)
        require_zero(self.beam_width, _OWNER, "beam_width", "an MSIS (one beam, no bearing point spread across "
                                                            "channels; its width is horizontal_beamwidth)")
        require_zero(self.elevation_span, _OWNER, "elevation_span", "an MSIS (the fan is vertical_beamwidth wide)")

    # -- scan pattern --------------------------------------------------------------------------------------
    @property
    def full_circle(self) -> bool:
        return self.sector_width >= 360.0

    @property
    def sector_steps(self) -> int:
        """Steps across the sector (``sector_width / step_angle``; a full turn's step count)."""
        return int(round(self.sector_width / self.step_angle))

    @property
    def steps_per_sweep(self) -> int:
        """Steps (rows) of one assembled sweep: N for a full turn, n + 1 (edge to edge) for a sector."""
        return self.sector_steps if self.full_circle else self.sector_steps + 1

    @property
    def step_period(self) -> float:
        """Time between steps (s): ``ping_period``, or 2 max_range / sound_speed + processing_time when 0."""
        if self.ping_period > 0.0:
            return float(self.ping_period)
        return 2.0 * self.max_range / self.sound_speed + self.processing_time

    @property
    def steps_per_second(self) -> float:
        """The dataset rate of a one-step-per-sample stream (Hz)."""
        return 1.0 / self.step_period

    @property
    def sweep_period(self) -> float:
        """Time from a sweep's first step to the next sweep's first step (s)."""
        return self.sector_steps * self.step_period

    def head_angles(self, steps: Sequence[int] | np.ndarray) -> np.ndarray:
        """Head angles (rad, + starboard, wrapped to [-pi, pi)) of the global step indices ``steps``."""
        k = np.asarray(steps, dtype=np.int64)
        n = self.sector_steps
        if self.full_circle:
            deg = self.sector_centre + (k % n) * self.step_angle
        else:
            p = k % (2 * n)
            p = np.where(p > n, 2 * n - p, p)
            deg = self.sector_centre - 0.5 * self.sector_width + p * self.step_angle
        rad = np.radians(deg)
        return (rad + np.pi) % (2.0 * np.pi) - np.pi

    def sweep_of(self, steps: Sequence[int] | np.ndarray) -> np.ndarray:
        """Sweep index of each global step (a sector's turning step counts to the sweep it ends)."""
        k = np.asarray(steps, dtype=np.int64)
        n = self.sector_steps
        return k // n if self.full_circle else np.maximum(k - 1, 0) // n

    def sweep_steps(self, sweep: int) -> np.ndarray:
        """The global step indices of sweep ``sweep`` (``steps_per_sweep`` of them)."""
        n = self.sector_steps
        return np.arange(sweep * n, sweep * n + self.steps_per_sweep, dtype=np.int64)

    # -- the beam ------------------------------------------------------------------------------------------
    @property
    def fan_channels(self) -> int:
        return 1

    @property
    def rays_per_pose(self) -> int:
        return self.horizontal_rays * self.vertical_rays

    def result_bytes(self, batch: int) -> int:
        """Device bytes of a render's outputs: 16 B per range bin (intensity, clean, hits, labels) per step."""
        return 16 * batch * self.range_bins

    def ray_angles(self) -> tuple[np.ndarray, np.ndarray]:
        """(horizontal_rays,) and (vertical_rays,) cell-centre angles (rad) across the beam's -3 dB widths: the
        horizontal offset a (+ starboard) and the elevation e (+ up)."""
        wa, we = math.radians(self.horizontal_beamwidth), math.radians(self.vertical_beamwidth)
        a = -0.5 * wa + (np.arange(self.horizontal_rays) + 0.5) * wa / self.horizontal_rays
        e = -0.5 * we + (np.arange(self.vertical_rays) + 0.5) * we / self.vertical_rays
        return a, e

    def table_fan(self) -> TableFan:
        """The beam at head angle 0 as the device chain sees it: rays along (cos e cos a, -cos e sin a, sin e),
        each standing for cos e da de (sr), its cell spanned by (d dir / da) da and (d dir / de) de."""
        a1, e1 = self.ray_angles()
        da = math.radians(self.horizontal_beamwidth) / self.horizontal_rays
        de = math.radians(self.vertical_beamwidth) / self.vertical_rays
        a, e = (v.ravel() for v in np.meshgrid(a1, e1, indexing="ij"))
        ca, sa, ce, se = np.cos(a), np.sin(a), np.cos(e), np.sin(e)
        dirs = np.stack([ce * ca, -ce * sa, se], axis=1)
        edge_a = da * np.stack([-ce * sa, -ce * ca, np.zeros_like(a)], axis=1)
        edge_e = de * np.stack([-se * ca, se * sa, ce], axis=1)
        return TableFan(dirs, edge_a, edge_e, ce * da * de, 1, float(self.min_range), float(self.max_range),
                        self.range_bins)


def step_times(times: Any, n_steps: int) -> np.ndarray:
    """(n_steps,) float64 step times (s) from ``times``; a ``ConfigError`` naming ``Msis.render.times`` unless it
    holds ``n_steps`` finite numbers (one per pose)."""
    try:
        t = np.asarray(times, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"Msis.render.times: must be {n_steps} numbers (s, one per pose), got {times!r}") from exc
    require(t.size == n_steps and t.ndim <= 1, "Msis.render", "times",
            f"must hold one time (s) per pose: {n_steps}, got shape {t.shape}")
    require(bool(np.isfinite(t).all()), "Msis.render", "times", f"must be finite (s), got {t.tolist()}")
    return t.reshape(n_steps)


def head_poses(poses: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """(B, 7) world poses of the beam: each sensor pose turned by its head angle (rad, + starboard) about its z."""
    half = -0.5 * np.asarray(angles, dtype=np.float64)          # a yaw of -theta (FLU yaw turns to port)
    turn = np.zeros((half.size, 7))
    turn[:, 5], turn[:, 6] = np.sin(half), np.cos(half)
    return compose_poses(poses, turn)


@dataclasses.dataclass
class MsisResult:
    """Steps of a batch (global step indices ``steps``), host arrays.

    intensity, clean_intensity: (B, n_range) each step's echo series (units: DEVICE_INTENSITY_UNIT /
    DEVICE_CLEAN_UNIT of sensors/acoustic/chain.py); hit_count, label_id: (B, n_range) rays binned and label of
    the strongest return (-1 empty); head_angle: (B,) rad (+ starboard from the sensor's +x); steps: (B,) global
    step indices; times: (B,) s, when the render knew them (a sweep render), else None; ranges: (n_range,) bin
    centres (m).
    """

    intensity: np.ndarray
    clean_intensity: np.ndarray
    hit_count: np.ndarray
    label_id: np.ndarray
    head_angle: np.ndarray
    steps: np.ndarray
    ranges: np.ndarray
    label_names: list[str]
    config: MsisConfig
    times: np.ndarray | None = None

    @property
    def batch_size(self) -> int:
        return int(self.steps.size)

    def numpy(self) -> dict[str, np.ndarray]:
        """The arrays above (``head_angle_deg`` in degrees as well; ``times`` when known)."""
        out = {"intensity": self.intensity, "clean_intensity": self.clean_intensity, "hit_count": self.hit_count,
               "label_id": self.label_id, "head_angle": self.head_angle,
               "head_angle_deg": np.degrees(self.head_angle).astype(np.float32), "step": self.steps.astype(np.int32),
               "ranges": self.ranges}
        if self.times is not None:
            out["times"] = self.times
        return out

    def sweep(self) -> "Sweep":
        """These steps as one assembled scan (:class:`Sweep`)."""
        t = self.times if self.times is not None else self.steps * self.config.step_period
        return Sweep(self.intensity, self.head_angle, np.asarray(t, dtype=np.float64), self.steps, self.ranges,
                     self.config)


@dataclasses.dataclass
class Sweep:
    """An assembled scan: polar (n_steps, n_range) rows in firing order, each with its head angle (rad), time (s)
    and global step index; ``ranges`` the bin centres (m)."""

    polar: np.ndarray
    head_angle: np.ndarray
    times: np.ndarray
    steps: np.ndarray
    ranges: np.ndarray
    config: MsisConfig

    @property
    def complete(self) -> bool:
        return int(self.steps.size) == self.config.steps_per_sweep

    def cartesian(self, width: int = 512) -> tuple[np.ndarray, float, tuple[float, float]]:
        """Top-down image of the sweep in the sensor's frame, nearest step and nearest bin per pixel.

        Returns (image (H, width) in the polar image's unit, NaN outside the scanned sector or range, metres
        per pixel, (x of the top row's centre m ahead, y of the left column's centre m to starboard)). Up is the
        sensor's +x, right its starboard; the sonar sits at the centre of a full turn's square image (side 2
        max_range); a sector's image is the sector's bounding box. A pixel belongs to the step whose head angle
        is nearest, if within half a step (later steps win where a sector scan repeats an angle).
        """
        c = self.config
        if not isinstance(width, (int, np.integer)) or isinstance(width, bool) or width < 2:
            raise ConfigError(f"Sweep.cartesian: width must be an integer >= 2 pixels, got {width!r}")
        r_max = float(c.max_range)
        if c.full_circle:
            x_lo, x_hi, y_lo, y_hi = -r_max, r_max, -r_max, r_max
        else:
            start = math.radians(c.sector_centre - 0.5 * c.sector_width - 0.5 * c.step_angle)
            arc = start + np.linspace(0.0, math.radians(c.sector_width + c.step_angle), 721)
            xs = np.concatenate([[0.0], r_max * np.cos(arc)])
            ys = np.concatenate([[0.0], r_max * np.sin(arc)])
            x_lo, x_hi, y_lo, y_hi = xs.min(), xs.max(), ys.min(), ys.max()
        px = (y_hi - y_lo) / width if y_hi > y_lo else (x_hi - x_lo) / width
        height = max(1, int(math.ceil((x_hi - x_lo) / px)))
        y = y_lo + (np.arange(width) + 0.5) * px
        x = x_hi - (np.arange(height) + 0.5) * px
        yy, xx = np.meshgrid(y, x)
        r = np.hypot(xx, yy)
        theta = np.arctan2(yy, xx)
        dr = (c.max_range - c.min_range) / c.range_bins
        rbin = np.floor((r - c.min_range) / dr).astype(np.int64)
        # one row per distinct head angle, the latest firing winning; then the nearest angle per pixel (circular)
        latest = {round(float(a), 9): row for row, a in enumerate(self.head_angle)}
        keys = np.array(sorted(latest))
        rows = np.array([latest[k] for k in keys])
        hi = np.searchsorted(keys, theta) % keys.size
        lo = (hi - 1) % keys.size
        off_hi = np.abs((theta - keys[hi] + np.pi) % (2.0 * np.pi) - np.pi)
        off_lo = np.abs((theta - keys[lo] + np.pi) % (2.0 * np.pi) - np.pi)
        near = np.where(off_lo <= off_hi, lo, hi)
        off = np.minimum(off_lo, off_hi)
        take = (rbin >= 0) & (rbin < c.range_bins) & (off <= 0.5 * math.radians(c.step_angle) * (1.0 + 1e-9))
        out = np.full((height, width), np.nan, dtype=np.float64)
        out[take] = self.polar[rows[near[take]], rbin[take]]
        return out, px, (float(x[0]), float(y[0]))

    def to_uint8(self, values: np.ndarray | None = None) -> np.ndarray:
        """8-bit dB window (display_floor, dynamic_range) of ``values`` (default the polar image); NaN black."""
        v = self.polar if values is None else values
        return db_window_to_uint8(np.nan_to_num(v, nan=0.0), self.config.display_floor, self.config.dynamic_range)

    def save_polar_png(self, path: str | Path) -> Path:
        """Polar image: rows = steps in firing order (first at the top), columns = range (nearest left)."""
        return images.save_png(path, self.to_uint8())

    def save_cartesian_png(self, path: str | Path, width: int = 512) -> Path:
        """Top-down image (:meth:`cartesian`) through the config's colour map."""
        img, _, _ = self.cartesian(width)
        return images.save_png(path, apply_colormap(self.to_uint8(img), self.config.colormap))


class Msis:
    """A mechanically scanned imaging sonar on ``device`` (``None``: cuda:0 if present, else cpu); ``sensor_id``
    separates the noise of several sensors sharing a seed."""

    def __init__(self, config: MsisConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        self.config = config or MsisConfig()
        if not isinstance(self.config, MsisConfig):
            raise ConfigError(f"Msis: config must be an MsisConfig, got {type(self.config).__name__}")
        self.config.validate()
        self.device = resolve_device(device)
        self.sensor_id = int(sensor_id)
        c = self.config
        check_config_memory(c, 0, self.device, "Msis")
        self._checked_batch = 0  # largest batch whose render memory passed the check (see render)
        self._chain = DeviceChain(c.device_settings(c.absorption, c.normalisation, c.seed), c.table_fan(),
                                  self.device, self.sensor_id, c.raycast_backend)

    def memory_bytes(self, batch: int) -> int:
        """Device bytes a render of ``batch`` steps needs."""
        return self._chain.memory_bytes(batch) + self.config.result_bytes(batch)

    def render(self, scene: Any, poses: Any, frame_index: int = 0, times: Any = None) -> MsisResult:
        """Render B steps: ``poses`` (7,) or (B, 7) world sensor poses of global steps ``frame_index ..
        frame_index + B - 1`` (each turned by its step's head angle); ``times`` (B,) s, if known (finite; a
        ``ConfigError`` naming ``times`` otherwise)."""
        p = check_render_call("Msis", scene, self.device, poses, frame_index).astype(np.float64)
        t = None if times is None else step_times(times, p.shape[0])
        first = int(frame_index)
        c = self.config
        steps = first + np.arange(p.shape[0], dtype=np.int64)
        angles = c.head_angles(steps)
        beam = head_poses(p, angles).astype(np.float32)
        shape = (p.shape[0], c.range_bins, 1)
        # the result arrays come before the chain's scratch (which the chain checks): check the whole render first,
        # once per batch size larger than any checked before (reading the free memory costs ~0.1 ms)
        if p.shape[0] > self._checked_batch:
            check_memory(self.memory_bytes(p.shape[0]), self.device, f"Msis render of {p.shape[0]} step(s)",
                         "use fewer range bins or rays, or render fewer steps at once")
            self._checked_batch = p.shape[0]
        arrays = [wp.empty(shape, dtype=d, device=self.device) for d in (wp.float32, wp.float32, wp.int32, wp.int32)]
        self._chain.render(scene, beam, first, *arrays)
        flat = [a.numpy().reshape(p.shape[0], c.range_bins) for a in arrays]
        return MsisResult(*flat, angles.astype(np.float32), steps, c.ranges(), list(scene.labels), c, t)

    def render_sweep(self, scene: Any, motion: Any, sweep: int = 0, start_time: float = 0.0) -> MsisResult:
        """Render sweep ``sweep``: its steps k fire at ``start_time + k * step_period`` (k the global step index)
        at the sensor pose of that time (``sweep`` an integer >= 0, ``start_time`` finite s). ``motion``: a (7,)
        pose (a still sonar), a ``Trajectory`` / ``TimedPoses`` (anything with ``at(times) -> (N, 7)``), or a
        callable ``times -> (N, 7)``. In an animated scene (moving nodes, a moving sea surface) each step sees
        the scene at its own time: the steps render one at a time after ``scene.set_time`` (the scene is left at
        the last step's time)."""
        require(isinstance(sweep, (int, np.integer)) and not isinstance(sweep, bool) and sweep >= 0,
                "Msis.render_sweep", "sweep", f"must be an integer >= 0 (the sweep index), got {sweep!r}")
        require_finite(start_time, "Msis.render_sweep", "start_time")
        c = self.config
        steps = c.sweep_steps(int(sweep))
        times = start_time + steps * c.step_period
        if hasattr(motion, "at"):
            poses = np.asarray(motion.at(times), dtype=np.float64)
        elif callable(motion):
            poses = np.asarray(motion(times), dtype=np.float64)
        else:
            poses = np.repeat(as_poses(motion).astype(np.float64), steps.size, axis=0)
        if not getattr(scene, "is_animated", False):
            return self.render(scene, poses, int(steps[0]), times)
        parts = []
        for k in range(steps.size):
            scene.set_time(float(times[k]))
            parts.append(self.render(scene, poses[k:k + 1], int(steps[k]), times[k:k + 1]))
        first = parts[0]
        return MsisResult(*(np.concatenate([getattr(r, f) for r in parts]) for f in
                            ("intensity", "clean_intensity", "hit_count", "label_id", "head_angle", "steps")),
                          first.ranges, first.label_names, first.config, times)


def assemble_sweeps(samples: Sequence[dict[str, Any]] | Any, config: MsisConfig | dict[str, Any],
                    product: str = "intensity") -> list[Sweep]:
    """Group a dataset's MSIS steps into sweeps.

    ``samples``: the sensor's samples in order (``DatasetReader.samples(name)``: dicts with ``sample`` (the step
    index), ``time`` and the ``product`` array); ``config``: the sensor's :class:`MsisConfig` or the manifest's
    config dict (``reader.sensors[name]["config"]``). Returns one :class:`Sweep` per sweep the steps touch, in
    order (the first and last may be incomplete: :attr:`Sweep.complete`); a sector's turning step appears in
    both sweeps it joins."""
    cfg = config if isinstance(config, MsisConfig) else MsisConfig.from_dict(dict(config), "assemble_sweeps")
    rows: dict[int, tuple[float, np.ndarray]] = {}
    for s in samples:
        if product not in s:
            raise ConfigError(f"assemble_sweeps: sample {s.get('sample')} has no {product!r} product; write it "
                              f"(rig products) or pass product=")
        rows[int(s["sample"])] = (float(s["time"]), np.asarray(s[product]))
    if not rows:
        return []
    steps = np.array(sorted(rows))
    out = []
    first, last = int(cfg.sweep_of([steps[0]])[0]), int(cfg.sweep_of([steps[-1]])[0])
    for sw in range(first, last + 1):
        want = [int(k) for k in cfg.sweep_steps(sw) if int(k) in rows]
        if not want:
            continue
        k = np.array(want, dtype=np.int64)
        out.append(Sweep(np.stack([rows[i][1] for i in want]), cfg.head_angles(k).astype(np.float32),
                         np.array([rows[i][0] for i in want]), k, cfg.ranges(), cfg))
    return out


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_SERIES = ("range_bins",)


def _render(sensor: Msis, batch: _reg.Batch) -> MsisResult:
    """One step per sample: sample m is step m (its head angle), at the rig's pose of its time."""
    c = sensor.config
    if batch.rate_hz is not None and abs(batch.rate_hz * c.step_period - 1.0) > 0.01:
        warnings.warn(f"MSIS: the rig's rate_hz {batch.rate_hz:g} is not the head's step rate 1 / step_period = "
                      f"{c.steps_per_second:.4g} Hz; each sample is still one step, so the sweep's timing follows "
                      f"the rig (set rate_hz to {c.steps_per_second:.6g} for the head's own timing)",
                      OceanSimWarning, stacklevel=2)
    return sensor.render(batch.scene, batch.poses, batch.frame_index, batch.times)


def _cli_render(sensor: Msis, scene: Any, poses: np.ndarray, frame_index: int, args: Any) -> MsisResult:
    """One sweep from the first pose, the vehicle moving at ``--speed`` m/s along the sensor's +x."""
    c = sensor.config
    start = as_poses(poses).astype(np.float64)[:1]
    speed = float(getattr(args, "speed", 0.0) or 0.0)
    sweep = int(c.sweep_of([frame_index])[0])
    fwd = compose_poses(start, np.array([[1.0, 0, 0, 0, 0, 0, 1]]))[0, :3] - start[0, :3]   # the sensor's +x

    def moving(times: np.ndarray) -> np.ndarray:
        out = np.repeat(start, times.size, axis=0)
        out[:, :3] += np.outer(speed * (times - times[0]), fwd)
        return out

    return sensor.render_sweep(scene, moving, sweep)


def _cli_write(o: _reg.CliOutput) -> list[str]:
    """``oceansim-py render msis``: ``msis_polar.png`` (rows = steps in firing order, columns = range),
    ``msis_cartesian.png`` (top-down, sonar at the centre, up = sensor +x), ``msis_polar.npy`` ((steps, n_range)
    intensity), ``msis_head_angle_deg.npy``, ``msis_times.npy`` (s from the sweep's first step) and
    ``msis_ranges.npy``."""
    c, out, result = o.config, o.out, o.result
    _reg.warn_if_blind("MSIS", float((o.data["hit_count"] > 0).any(axis=1).mean()), o, c.max_range)
    sweep = result.sweep()
    sweep.save_polar_png(out / "msis_polar.png")
    sweep.save_cartesian_png(out / "msis_cartesian.png")
    images.save_npy(out / "msis_polar.npy", sweep.polar)
    images.save_npy(out / "msis_head_angle_deg.npy", np.degrees(sweep.head_angle).astype(np.float32))
    images.save_npy(out / "msis_times.npy", sweep.times - sweep.times[0])
    images.save_npy(out / "msis_ranges.npy", sweep.ranges)
    return [f"rendered one MSIS sweep of {sweep.steps.size} steps ({c.step_angle:g} deg, {c.step_period * 1e3:.1f} "
            f"ms each, {sweep.times[-1] - sweep.times[0]:.2f} s) of {o.scene.source} in {o.seconds:.3f} s (first "
            f"call: includes kernel loading)",
            f"wrote {out / 'msis_polar.png'}, {out / 'msis_cartesian.png'}, {out / 'msis_polar.npy'}"]


SENSOR_KIND = _reg.SensorKind(
    name="msis", aliases=("scanning_sonar",),
    description="mechanically scanned imaging sonar: one rotating beam, one step (ping) per sample",
    config_class=MsisConfig, sensor_class=Msis,
    render=_render,
    schema=(
        _reg.Product("intensity", _reg.ARRAY, "float32", DEVICE_INTENSITY_UNIT + "; the step's series, bin 0 "
                     "nearest", _SERIES),
        _reg.Product("clean_intensity", _reg.ARRAY, "float32", DEVICE_CLEAN_UNIT, _SERIES),
        _reg.Product("hit_count", _reg.ARRAY, "int32", "count of rays per bin", _SERIES),
        _reg.Product("label_id", _reg.ARRAY, "int32", "label index (-1 empty)", _SERIES),
        _reg.Product("head_angle_deg", _reg.TABLE, "float32",
                     "degrees, head angle of the step from the sensor's +x, + starboard (clockwise from above)",
                     frame="sensor FLU"),
        _reg.Product("step", _reg.TABLE, "int32", "global step index (the sample index)"),
    ),
    default_products=("intensity", "head_angle_deg", "step"),
    metadata=lambda c: {
        "ranges_m": c.ranges().tolist(), "step_period_s": c.step_period, "steps_per_second": c.steps_per_second,
        "steps_per_sweep": c.steps_per_sweep, "sector_steps": c.sector_steps, "full_circle": c.full_circle,
        "layout": "one step (ping) per sample: intensity (n_range,), bin 0 nearest; head_angle_deg from the "
                  "sensor's +x, + starboard; oceansim_py.sensors.msis.assemble_sweeps groups steps into sweeps"},
    cli=_reg.CliTarget(
        help="mechanically scanned imaging sonar: one sweep as polar and Cartesian PNGs and .npy",
        default_preset="ping360", framing="imaging_sonar", reach=lambda c: (float(c.max_range), 60.0),
        options=(_reg.CliOption(("--speed",), {"type": _reg.cli_number(float, -100.0, 100.0, "m/s"),
                                               "default": 0.0,
                                               "help": "vehicle speed along the sensor's +x during the sweep (m/s), "
                                                       "-100 to 100"}),),
        render=_cli_render, write=_cli_write),
)
