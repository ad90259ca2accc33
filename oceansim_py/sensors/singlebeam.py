"""Single-beam sonar / altimeter: configuration, sensor and result (docs/PHYSICS.md §3, return and noise of §1).

A cone of rays about the boresight gives one intensity series over range per ping and the first-return range
(the nearest hit of the cone along any of its rays, plus Gaussian range noise). It is a slant range along the
boresight's cone, not an altitude: it equals the altitude only when the sensor is mounted pitched 90 degrees
down over a level bottom (an altimeter).

Frames: sensor FLU, boresight +x. Rays lie on ``cone_rings`` rings of polar angle
t_k = (k + 1/2) * (A / 2) / cone_rings about +x (A the full opening angle), ``rays_per_ring`` per ring at
azimuths p_m = (m + 1/2) 2 pi / rays_per_ring, pointing along (cos t, sin t cos p, sin t sin p); a ray stands
for the solid angle 2 pi (cos t_k^- - cos t_k^+) / rays_per_ring of its ring cell. Config angles in degrees,
ranges in metres, absorption in dB/m (one way).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import warp as wp

from oceansim_py.io import images
from oceansim_py.io.config import require, require_non_negative, require_zero
from oceansim_py.sensors.acoustic.chain import DEVICE_CLEAN_UNIT, DEVICE_INTENSITY_UNIT, TableFan
from oceansim_py.sensors.acoustic.device_config import DeviceChainFields
from oceansim_py.sensors.acoustic.presets import SINGLEBEAM_DEVICE_PRESETS
from oceansim_py.sensors.acoustic_fan import (FanSeries, FanSonar, RangeBinnedConfig, db_display_reference,
                                              require_count, torch_tensors, validate_range_and_noise)

_OWNER = "SinglebeamSonarConfig"


@dataclasses.dataclass(frozen=True)
class SinglebeamSonarConfig(DeviceChainFields, RangeBinnedConfig):
    """Single-beam sonar parameters. With ``model = "device"`` the pings go through the acoustic device chain
    (fields of :class:`~oceansim_py.sensors.acoustic.device_config.DeviceChainFields`; no bearing point spread:
    ``beam_width`` 0): intensities re 1 uPa^2 after TVG, coherent speckle, range point spread, receiver noise.

    Attributes:
        opening_angle: full cone angle A (degrees, 0 < A < 180).
        cone_rings, rays_per_ring: the cone's rays (see module docstring).
        min_range, max_range: range window (m); range_bins bins cover [min_range, max_range).
        absorption: one-way absorption alpha (dB/m). spreading: multiply returns by (1 m / r)^2.
        range_noise: sigma of the Gaussian noise on the altitude (m).
        normalisation: "none" (sr) or "global" (each ping by its largest bin).
        multiplicative_sigma, additive_sigma: speckle z = I (1 + w_m) + w_a (docs/PHYSICS.md §1).
        seed: noise seed; draws keyed by (seed, frame index, sensor id, stream, bin).
        db_range, gain, gamma: 8-bit display (dB over db_range when normalisation is "none", else linear).
        display_floor: level shown black in the "db" display (dB in the image's units: re 1 uPa^2 after TVG and
            gain with ``model = "device"``); the window is [display_floor, display_floor + db_range]. ``None``: the
            window's top is the image's maximum (the device presets set it: their post-TVG noise shows as grain).
    """

    opening_angle: float = 30.0
    cone_rings: int = 16
    rays_per_ring: int = 64
    min_range: float = 0.5
    max_range: float = 10.0
    range_bins: int = 200
    absorption: float = 0.0
    spreading: bool = False
    range_noise: float = 0.0
    normalisation: Literal["none", "global"] = "none"
    multiplicative_sigma: float = 0.0
    additive_sigma: float = 0.0
    seed: int = 0
    db_range: float = 50.0
    display_floor: float | None = None
    gain: float = 1.0
    gamma: float = 1.0

    #: The peer model renders ``multipath_bounces`` too (same-path returns in its law; acoustic_fan.py).
    PEER_BOUNCES: ClassVar[bool] = True
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # HoloOcean SinglebeamSonar (docs/PHYSICS.md §3: 30 deg cone, 0.5-10 m); 200 range bins as in HoloOcean's
        # example sensor definition (HoloOcean docs), noise off as its AddSigma = MultSigma = 0 there; rays
        # (16 rings x 64) chosen here.
        "holoocean_default": dict(
            opening_angle=30.0, cone_rings=16, rays_per_ring=64, min_range=0.5, max_range=10.0, range_bins=200,
            absorption=0.0, range_noise=0.0, normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
        ),
        # A 200 kHz survey altimeter. No data sheet is in shared/seeds: values typical of the class, chosen
        # here: 10 deg cone, 0.3-100 m, 1 cm range noise, 0.05 m bins (1994), absorption 0.05 dB/m (~200 kHz
        # sea water, Francois-Garrison), speckle 0.2, global normalisation.
        "altimeter_200khz": dict(
            opening_angle=10.0, cone_rings=8, rays_per_ring=32, min_range=0.3, max_range=100.0, range_bins=1994,
            absorption=0.05, range_noise=0.01, normalisation="global", multiplicative_sigma=0.2, additive_sigma=0.0,
        ),
        # Device presets (model "device"): values and sources in sensors/acoustic/presets.py.
        **{name: values for name, (values, _source) in SINGLEBEAM_DEVICE_PRESETS.items()},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        validate_range_and_noise(self, _OWNER, ("opening_angle", "range_noise"))
        require(0.0 < self.opening_angle < 180.0, _OWNER, "opening_angle",
                f"must be in (0, 180) degrees, got {self.opening_angle}; set the full cone angle")
        require_count(self, _OWNER, "cone_rings")
        require_count(self, _OWNER, "rays_per_ring")
        require_non_negative(self.range_noise, _OWNER, "range_noise", "m")
        require(self.db_range > 0.0, _OWNER, "db_range", f"must be > 0 dB, got {self.db_range}")
        self.validate_device_chain(_OWNER, 180.0, self.opening_angle)
        require_zero(self.beam_width, _OWNER, "beam_width", "a single-beam sonar (one channel, no bearing fan)")
        require_zero(self.elevation_span, _OWNER, "elevation_span", "a single-beam sonar (the cone is opening_angle "
                                                                    "wide)")

    @property
    def fan_channels(self) -> int:
        """Series columns of the fan."""
        return 1

    def result_bytes(self, batch: int) -> int:
        """Device bytes of a render's outputs beyond the fan's series: the altitude (4 B) per ping."""
        return 4 * batch

    @property
    def rays_per_pose(self) -> int:
        return self.cone_rings * self.rays_per_ring

    def ray_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(rays_per_pose, 3) FLU directions and solid angles (sr), ordered (ring, azimuth)."""
        half = 0.5 * math.radians(self.opening_angle)
        edges = np.arange(self.cone_rings + 1) * half / self.cone_rings
        t = np.repeat(0.5 * (edges[:-1] + edges[1:]), self.rays_per_ring)
        p = np.tile((np.arange(self.rays_per_ring) + 0.5) * 2.0 * math.pi / self.rays_per_ring, self.cone_rings)
        ring_sr = 2.0 * math.pi * (np.cos(edges[:-1]) - np.cos(edges[1:])) / self.rays_per_ring
        dirs = np.stack([np.cos(t), np.sin(t) * np.cos(p), np.sin(t) * np.sin(p)], axis=1)
        return dirs, np.repeat(ring_sr, self.rays_per_ring)

    def table_fan(self) -> TableFan:
        """The cone as the device chain sees it: each ray's cell spans (d dir / dt) dt and (d dir / dp) dp, dt
        the ring width and dp the azimuth step (rad)."""
        dirs, weights = self.ray_table()
        dt = 0.5 * math.radians(self.opening_angle) / self.cone_rings
        dp = 2.0 * math.pi / self.rays_per_ring
        t = np.arccos(np.clip(dirs[:, 0], -1.0, 1.0))
        p = np.arctan2(dirs[:, 2], dirs[:, 1])
        polar = dt * np.stack([-np.sin(t), np.cos(t) * np.cos(p), np.cos(t) * np.sin(p)], axis=1)
        azimuth = dp * np.stack([np.zeros_like(t), -np.sin(t) * np.sin(p), np.sin(t) * np.cos(p)], axis=1)
        return TableFan(dirs, polar, azimuth, weights, 1, float(self.min_range), float(self.max_range),
                        self.range_bins)


@dataclasses.dataclass
class SinglebeamResult:
    """Pings of a batch of B poses (frames ``frame_index ..``), as Warp arrays on the sensor's device.

    intensity, clean_intensity: (B, n_range) series with and without noise. hit_count, label_id: (B, n_range)
    rays binned and label index of the strongest return (-1 empty). first_return_range: (B,) range of the
    nearest hit of the cone (m, with range noise; NaN when no ray hit within max_range). ranges: (n_range,) bin
    centres (m). ``altitude`` is a deprecated alias of ``first_return_range`` (it was never an altitude unless
    the sensor looks straight down); ``numpy()`` still holds an ``"altitude"`` key with the same array.
    """

    intensity: wp.array
    clean_intensity: wp.array
    hit_count: wp.array
    label_id: wp.array
    first_return_range: wp.array
    ranges: np.ndarray
    label_names: list[str]
    config: SinglebeamSonarConfig
    frame_index: int

    @property
    def batch_size(self) -> int:
        return int(self.first_return_range.shape[0])

    @property
    def altitude(self) -> wp.array:
        """Deprecated alias of :attr:`first_return_range` (a slant range, not an altitude)."""
        warnings.warn("SinglebeamResult.altitude is deprecated: it is the first-return range along the cone; use "
                      "first_return_range", DeprecationWarning, stacklevel=2)
        return self.first_return_range

    def numpy(self) -> dict[str, np.ndarray]:
        """Host copies of the arrays above (``"altitude"``: deprecated key, the ``first_return_range`` array)."""
        first = self.first_return_range.numpy()
        return {"intensity": self.intensity.numpy(), "clean_intensity": self.clean_intensity.numpy(),
                "hit_count": self.hit_count.numpy(), "label_id": self.label_id.numpy(),
                "first_return_range": first, "altitude": first, "ranges": self.ranges.copy()}

    def torch(self) -> dict[str, Any]:
        """Zero-copy torch tensors of the device arrays (``wp.to_torch``); needs PyTorch installed."""
        return torch_tensors("SinglebeamResult", {
            "intensity": self.intensity, "clean_intensity": self.clean_intensity, "hit_count": self.hit_count,
            "label_id": self.label_id, "first_return_range": self.first_return_range})

    def to_uint8(self) -> np.ndarray:
        """(B, n_range) uint8 echogram, one row per ping (linear when normalised, else dB over db_range)."""
        c = self.config
        v = self.intensity.numpy()
        if c.normalisation == "global":
            return images.to_uint8(v, gain=c.gain, gamma=c.gamma)
        return images.to_uint8(v, mode="db", db_range=c.db_range, reference=db_display_reference(c))

    def save_png(self, path: str | Path) -> Path:
        """Write the echogram (rows = pings, first at the top; columns = range, nearest left) as an 8-bit PNG."""
        return images.save_png(path, self.to_uint8())


class SinglebeamSonar(FanSonar):
    """A single-beam sonar / altimeter on ``device`` (``None``: cuda:0 if present, else cpu); ``sensor_id``
    separates the noise of several sensors sharing a seed. Takes a :class:`SinglebeamSonarConfig` (default: its
    defaults)."""

    CONFIG = SinglebeamSonarConfig
    RESULT = SinglebeamResult

    def __init__(self, config: SinglebeamSonarConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        super().__init__(config, device, sensor_id)
        self._chain = self._device_chain()

    def _n_channels(self) -> int:
        return self.config.fan_channels

    def memory_bytes(self, batch: int) -> int:
        """Device bytes a render of ``batch`` pings needs."""
        if self._chain is not None:
            return self._chain.memory_bytes(batch) + self._result_bytes(batch) + 16 * batch * self.config.range_bins
        return super().memory_bytes(batch)

    def _result_bytes(self, batch: int) -> int:
        return self.config.result_bytes(batch)

    def render(self, scene: Any, poses: Any, frame_index: int = 0,
               out: SinglebeamResult | None = None) -> SinglebeamResult:
        """Render B pings (arguments as :meth:`FanSonar._check`: the scene, (7,) or (B, 7) poses or a
        Trajectory, and the frame number of pose 0). ``out``: a result of an earlier render of this sensor with the
        same batch size, whose arrays this render overwrites and which it returns (no allocation); by default new
        arrays. With ``model = "device"`` the pings go through the acoustic device chain
        (sensors/acoustic/chain.py); the first_return is the first return plus N(0, range_noise), as in the peer
        model."""
        c = self.config
        frame_index = int(frame_index)
        p = self._check(scene, poses, frame_index, out)
        batch = p.shape[0]
        column = (batch, c.range_bins, 1)  # the fan's one channel
        into = (FanSeries(*(a.reshape(column) for a in (out.intensity, out.clean_intensity, out.hit_count,
                                                        out.label_id)))
                if out is not None else None)
        first_out = out.first_return_range if out is not None else None
        if self._chain is not None:
            series, first_return = self._chain_series(self._chain, scene, p, frame_index, c.range_noise, into,
                                                      first_out)
        else:
            _, series, buf = self._cast(scene, p, frame_index, out=into)
            first_return = self._fan.altitude(buf, batch, frame_index, c.range_noise, first_out)
        if out is not None:
            out.label_names = list(scene.labels)
            out.frame_index = frame_index
            return out
        flat = (batch, c.range_bins)
        return SinglebeamResult(series.intensity.reshape(flat), series.clean.reshape(flat), series.hits.reshape(flat),
                                series.labels.reshape(flat), first_return, c.ranges(), list(scene.labels), c,
                                frame_index)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_SERIES = ("range_bins",)


def _cli_write(o: _reg.CliOutput) -> list[str]:
    """``oceansim-py render singlebeam``: ``singlebeam_echogram.png`` (rows = pings, first at the top; columns =
    range, nearest left), ``singlebeam.npy`` ((pings, n_range) intensity), ``singlebeam_first_return_range.npy``
    ((pings,) range of the nearest hit of the cone, m, NaN without one; an altitude only when looking straight
    down) and ``singlebeam_ranges.npy``. Mount pitched 90 degrees down (``--pose x,y,z,0,90,0``) for an
    altimeter."""
    c, out, data = o.config, o.out, o.data
    _reg.warn_if_blind("single-beam sonar", float((data["hit_count"] > 0).mean()), o, c.max_range)
    o.result.save_png(out / "singlebeam_echogram.png")
    for file, name in (("singlebeam", "intensity"), ("singlebeam_first_return_range", "first_return_range"),
                       ("singlebeam_ranges", "ranges")):
        images.save_npy(out / f"{file}.npy", data[name])
    return [f"rendered {len(o.poses)} single-beam ping(s) of {c.range_bins} bins ({c.rays_per_pose} rays each) of "
            f"{o.scene.source} in {o.seconds:.3f} s (first call: includes kernel loading); "
            f"{_reg.first_ping_text('first-return range', data['first_return_range'], 3)}",
            f"wrote {out / 'singlebeam_echogram.png'}, {out / 'singlebeam.npy'}, "
            f"{out / 'singlebeam_first_return_range.npy'}"]


SENSOR_KIND = _reg.SensorKind(
    name="singlebeam", description="single-beam sonar / altimeter: one echo series and first-return range per ping",
    config_class=SinglebeamSonarConfig, sensor_class=SinglebeamSonar,
    schema=(
        _reg.Product("intensity", _reg.ARRAY, "float32", "model 'peer': linear echo intensity with noise; "
                     + DEVICE_INTENSITY_UNIT, _SERIES),
        _reg.Product("clean_intensity", _reg.ARRAY, "float32", "linear echo intensity before noise; " + DEVICE_CLEAN_UNIT, _SERIES),
        _reg.Product("hit_count", _reg.ARRAY, "int32", "count of rays per bin", _SERIES),
        _reg.Product("label_id", _reg.ARRAY, "int32", "label index (-1 empty)", _SERIES),
        _reg.Product("first_return_range", _reg.TABLE, "float32",
                     "m, range of the nearest hit of the cone (NaN without one); an altitude only when the sensor "
                     "looks straight down", aliases=("altitude",)),
    ),
    default_products=("intensity", "first_return_range"),
    metadata=lambda c: {"ranges_m": c.ranges().tolist(),
                        "layout": "intensity (n_range,), bin 0 nearest; first_return_range = range of the first "
                                  "return along the cone (m, NaN without one)"},
    cli=_reg.CliTarget(
        help="single-beam sonar / altimeter: echogram PNG, series and first-return range .npy",
        default_preset="holoocean_default", poses=_reg.RUN, framing="singlebeam", write=_cli_write),
)
