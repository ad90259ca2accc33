"""Side-scan sonar: configuration, sensor and result (docs/PHYSICS.md §3, with the return and noise of §1).

Two transducers, port and starboard, each with a narrow along-track beam and a wide across-track fan tilted
down by the depression angle. One ping gives one intensity time series per side over the range bins; a
trajectory's pings stack into a waterfall image (pings x [port reversed | starboard]) in which the nadir gap
(no return before the first bottom echo) runs down the middle. The flat-bottom correction maps each side's
slant-range series to ground range with the altitude taken as the first return of the ping.

Frames: sensor FLU (x along track, y port, z up); mount the sensor level with x along the vehicle's track.
A ray of side s (+1 port, -1 starboard) at along-track angle a (rad, + forward) and depression d (rad below
the horizontal) points along (sin a, s cos a cos d, -cos a sin d) and stands for the solid angle
cos a * da * dd. Config angles in degrees, ranges in metres, absorption in dB/m (one way).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import warp as wp

from oceansim_py.io import images
from oceansim_py.io.config import require, require_zero
from oceansim_py.kernels import acoustic_fans as fk
from oceansim_py.runtime import launch_1d
from oceansim_py.sensors.acoustic.chain import DEVICE_CLEAN_UNIT, DEVICE_INTENSITY_UNIT, TableFan
from oceansim_py.sensors.acoustic.device_config import DeviceChainFields
from oceansim_py.sensors.acoustic.presets import SIDESCAN_DEVICE_PRESETS
from oceansim_py.sensors.acoustic_fan import (FanSeries, FanSonar, RangeBinnedConfig, db_display_reference,
                                              require_count, torch_tensors, validate_range_and_noise)

_OWNER = "SidescanSonarConfig"

#: Channel (series column) of each side.
PORT, STARBOARD = 0, 1


@dataclasses.dataclass(frozen=True)
class SidescanSonarConfig(DeviceChainFields, RangeBinnedConfig):
    """Side-scan sonar parameters (one value for both sides). With ``model = "device"`` the pings go through the
    acoustic device chain (fields of :class:`~oceansim_py.sensors.acoustic.device_config.DeviceChainFields`;
    no bearing point spread: ``beam_width`` 0): intensities re 1 uPa^2 after TVG, coherent speckle, range
    point spread, receiver noise and reverberation.

    Attributes:
        along_track_beamwidth: along-track (horizontal) beam width (degrees, 0 < w < 90).
        vertical_beamwidth: across-track fan width of each side (degrees).
        depression: angle of each side's fan axis below the horizontal (degrees); the fan covers depressions
            [depression - vertical_beamwidth / 2, depression + vertical_beamwidth / 2], within [-90, 90]. The
            altitude (first return) is the sensor's height over a flat floor only if the fan reaches 90 (nadir).
        min_range, max_range: slant-range window (m); range_bins bins cover [min_range, max_range).
        along_track_rays, across_track_rays: rays per side in each direction.
        absorption: one-way absorption alpha (dB/m); the return is scaled by 10^(-2 alpha r / 10).
        spreading: multiply returns by (1 m / r)^2 (off: real side-scans apply a time-varying gain).
        beam_pattern: "flat" or "gaussian" across track (-3 dB at the fan's edges, peak on its axis).
        normalisation: "none" (physical units, sr) or "global" (each ping by its largest bin).
        multiplicative_sigma, additive_sigma: speckle z = I (1 + w_m) + w_a, w_m ~ N(0, sigma_m),
            w_a ~ Rayleigh(sigma_a) (docs/PHYSICS.md §1).
        seed: noise seed; draws keyed by (seed, frame index, sensor id, stream, bin).
        display: waterfall PNG mapping: "db" (10 log10 over db_range dB under the image maximum, or from
            display_floor) or "linear" (clip(255 gain z^gamma)).
        display_floor: level shown black in the "db" display (dB in the image's units: re 1 uPa^2 after TVG and
            gain with ``model = "device"``); the window is [display_floor, display_floor + db_range]. ``None``: the
            window's top is the image's maximum (the device presets set it: their post-TVG noise shows as grain).
    """

    along_track_beamwidth: float = 0.25
    vertical_beamwidth: float = 85.0
    depression: float = 47.5
    min_range: float = 0.5
    max_range: float = 35.0
    range_bins: int = 2000
    along_track_rays: int = 2
    across_track_rays: int = 1024
    absorption: float = 0.0
    spreading: bool = False
    beam_pattern: Literal["flat", "gaussian"] = "flat"
    normalisation: Literal["none", "global"] = "none"
    multiplicative_sigma: float = 0.0
    additive_sigma: float = 0.0
    seed: int = 0
    display: Literal["db", "linear"] = "db"
    db_range: float = 50.0
    display_floor: float | None = None
    gain: float = 1.0
    gamma: float = 1.0

    #: The peer model renders ``multipath_bounces`` too (same-path returns in its law; acoustic_fan.py).
    PEER_BOUNCES: ClassVar[bool] = True
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # HoloOcean SidescanSonar (docs/PHYSICS.md §3: 170 deg x 0.25 deg, 0.5-35 m): its 170 deg "azimuth" fan is
        # centred on nadir, i.e. each side covers depressions 5-90 deg (85 deg wide about 47.5 deg). 2000
        # range bins as in HoloOcean's TorpedoSidescanSonar scenario (HoloOcean docs); noise off as in its
        # sensor defaults; rays (2 x 1024 per side) chosen here.
        "holoocean_default": dict(
            along_track_beamwidth=0.25, vertical_beamwidth=85.0, depression=47.5, min_range=0.5, max_range=35.0,
            range_bins=2000, along_track_rays=2, across_track_rays=1024, absorption=0.0, beam_pattern="flat",
            normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
        ),
        # A 900 kHz side-scan channel after the EdgeTech 4125 data sheet as recalled here (not in shared/seeds;
        # check before relying on it): 0.28 deg horizontal beam, 50 deg vertical beam tilted 20 deg down,
        # 75 m range per side at 900 kHz. The fan here is widened to depressions 10-90 deg (80 deg about
        # 50 deg, gaussian pattern) so that the first return gives the altitude (a real fish sees the nadir
        # through its side lobes). Absorption 0.25 dB/m ~ 900 kHz in 10 C sea water (Francois-Garrison),
        # 0.05 m bins (1490), speckle 0.3 / 0.002 and rays chosen here.
        "sidescan_900khz": dict(
            along_track_beamwidth=0.28, vertical_beamwidth=80.0, depression=50.0, min_range=0.5, max_range=75.0,
            range_bins=1490, along_track_rays=2, across_track_rays=1536, absorption=0.25, beam_pattern="gaussian",
            normalisation="global", multiplicative_sigma=0.3, additive_sigma=0.002,
        ),
        # Device presets (model "device"): values and sources in sensors/acoustic/presets.py.
        **{name: values for name, (values, _source) in SIDESCAN_DEVICE_PRESETS.items()},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        validate_range_and_noise(self, _OWNER, ("along_track_beamwidth", "vertical_beamwidth", "depression"))
        require(0.0 < self.along_track_beamwidth < 90.0, _OWNER, "along_track_beamwidth",
                f"must be in (0, 90) degrees, got {self.along_track_beamwidth}")
        require(0.0 < self.vertical_beamwidth <= 180.0, _OWNER, "vertical_beamwidth",
                f"must be in (0, 180] degrees, got {self.vertical_beamwidth}")
        lo = self.depression - 0.5 * self.vertical_beamwidth
        hi = self.depression + 0.5 * self.vertical_beamwidth
        require(lo >= -90.0 and hi <= 90.0, _OWNER, "depression",
                f"the fan covers depressions [{lo}, {hi}] degrees, which must lie within [-90, 90] (past 90 a "
                f"side would look across nadir to the other side); lower vertical_beamwidth or move depression")
        require_count(self, _OWNER, "along_track_rays")
        require_count(self, _OWNER, "across_track_rays")
        require(self.beam_pattern in ("flat", "gaussian"), _OWNER, "beam_pattern",
                f"must be one of ['flat', 'gaussian'], got {self.beam_pattern!r}")
        require(self.display in ("db", "linear"), _OWNER, "display",
                f"must be one of ['db', 'linear'], got {self.display!r}")
        require(self.db_range > 0.0, _OWNER, "db_range", f"must be > 0 dB, got {self.db_range}")
        self.validate_device_chain(_OWNER, 180.0, self.vertical_beamwidth)
        require_zero(self.beam_width, _OWNER, "beam_width", "a side-scan (its two channels are sides, not beams of a "
                                                            "bearing fan)")
        require_zero(self.elevation_span, _OWNER, "elevation_span", "a side-scan (the fan is vertical_beamwidth wide)")

    # -- derived geometry (slant-range bins: range_resolution and ranges() of RangeBinnedConfig; ground-range
    # bins have the same size) ------------------------------------------------------------------------------
    @property
    def rays_per_side(self) -> int:
        return self.along_track_rays * self.across_track_rays

    @property
    def fan_channels(self) -> int:
        """Series columns of the fan."""
        return 2

    def result_bytes(self, batch: int) -> int:
        """Device bytes of a render's outputs beyond the fan's series: altitude (4 B) and the ground-range series (8 B per bin) per ping."""
        return batch * (4 + 8 * self.range_bins)

    @property
    def rays_per_pose(self) -> int:
        return 2 * self.rays_per_side

    def ground_ranges(self) -> np.ndarray:
        """Ground-range bin centres (m from the point below the sensor), nearest first."""
        return ((np.arange(self.range_bins) + 0.5) * self.range_resolution).astype(np.float32)

    def ray_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(2 * rays_per_side, 3) FLU directions and (2 * rays_per_side,) solid angle x pattern (sr), port rays
        first; within a side, ordered (along-track, depression)."""
        wa = math.radians(self.along_track_beamwidth)
        wd = math.radians(self.vertical_beamwidth)
        a = -0.5 * wa + (np.arange(self.along_track_rays) + 0.5) * wa / self.along_track_rays
        d = math.radians(self.depression) - 0.5 * wd + (np.arange(self.across_track_rays) + 0.5) * wd / \
            self.across_track_rays
        aa, dd = np.meshgrid(a, d, indexing="ij")
        aa, dd = aa.ravel(), dd.ravel()
        w = np.cos(aa) * (wa / self.along_track_rays) * (wd / self.across_track_rays)
        if self.beam_pattern == "gaussian":
            w = w * np.exp(-math.log(2.0) * (2.0 * (dd - math.radians(self.depression)) / wd) ** 2)
        dirs = [np.stack([np.sin(aa), s * np.cos(aa) * np.cos(dd), -np.cos(aa) * np.sin(dd)], axis=1)
                for s in (1.0, -1.0)]
        return np.concatenate(dirs), np.concatenate([w, w])

    def ray_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(2 * rays_per_side, 3) FLU edge vectors of each ray's cell, in :meth:`ray_table` order: along track
        (d dir / da) * da and across track (d dir / dd) * dd, da and dd the ray spacings (rad)."""
        wa = math.radians(self.along_track_beamwidth)
        wd = math.radians(self.vertical_beamwidth)
        da, dd = wa / self.along_track_rays, wd / self.across_track_rays
        a = -0.5 * wa + (np.arange(self.along_track_rays) + 0.5) * da
        d = math.radians(self.depression) - 0.5 * wd + (np.arange(self.across_track_rays) + 0.5) * dd
        aa, ee = np.meshgrid(a, d, indexing="ij")
        aa, ee = aa.ravel(), ee.ravel()
        along = [da * np.stack([np.cos(aa), -s * np.sin(aa) * np.cos(ee), np.sin(aa) * np.sin(ee)], axis=1)
                 for s in (1.0, -1.0)]
        across = [dd * np.stack([np.zeros_like(aa), -s * np.cos(aa) * np.sin(ee), -np.cos(aa) * np.cos(ee)], axis=1)
                  for s in (1.0, -1.0)]
        return np.concatenate(along), np.concatenate(across)

    def table_fan(self) -> TableFan:
        """The fan as the device chain sees it (channels: port, starboard)."""
        dirs, weights = self.ray_table()
        along, across = self.ray_cells()
        return TableFan(dirs, along, across, weights, 2, float(self.min_range), float(self.max_range),
                        self.range_bins)


@dataclasses.dataclass
class SidescanResult:
    """Pings of a batch of B poses (frames ``frame_index ..``), as Warp arrays on the sensor's device.

    intensity, clean_intensity: (B, n_range, 2) slant-range series, column 0 port, 1 starboard (with and
    without noise). hit_count, label_id: (B, n_range, 2) rays binned and label of the strongest return (-1 empty).
    altitude: (B,) first return of the ping (m), NaN if nothing returned.
    ground_intensity: (B, n_range, 2) ``intensity`` resampled at ``ground_ranges`` (flat-bottom correction).
    ranges: slant-range bin centres (m); ground_ranges: ground-range bin centres (m).
    """

    intensity: wp.array
    clean_intensity: wp.array
    hit_count: wp.array
    label_id: wp.array
    altitude: wp.array
    ground_intensity: wp.array
    ranges: np.ndarray
    ground_ranges: np.ndarray
    label_names: list[str]
    config: SidescanSonarConfig
    frame_index: int

    @property
    def batch_size(self) -> int:
        return int(self.intensity.shape[0])

    def numpy(self) -> dict[str, np.ndarray]:
        """Host copies: the arrays above plus ``port`` / ``starboard`` (B, n_range) slant series and the
        ``waterfall`` / ``ground_waterfall`` (B, 2 n_range) images."""
        out = {"intensity": self.intensity.numpy(), "clean_intensity": self.clean_intensity.numpy(),
               "hit_count": self.hit_count.numpy(), "label_id": self.label_id.numpy(),
               "altitude": self.altitude.numpy(), "ground_intensity": self.ground_intensity.numpy(),
               "ranges": self.ranges.copy(), "ground_ranges": self.ground_ranges.copy()}
        out["port"] = out["intensity"][:, :, PORT].copy()
        out["starboard"] = out["intensity"][:, :, STARBOARD].copy()
        out["waterfall"] = waterfall(out["intensity"])
        out["ground_waterfall"] = waterfall(out["ground_intensity"])
        return out

    def torch(self) -> dict[str, Any]:
        """Zero-copy torch tensors of the device arrays (``wp.to_torch``); needs PyTorch installed."""
        return torch_tensors("SidescanResult", {
            "intensity": self.intensity, "clean_intensity": self.clean_intensity, "hit_count": self.hit_count,
            "label_id": self.label_id, "altitude": self.altitude, "ground_intensity": self.ground_intensity})

    def waterfall(self, ground: bool = False, clean: bool = False) -> np.ndarray:
        """(B, 2 n_range) float32 waterfall: one row per ping, [port reversed | starboard], nadir in the middle."""
        if ground:
            return waterfall(self.ground_intensity.numpy())
        return waterfall((self.clean_intensity if clean else self.intensity).numpy())

    def to_uint8(self, ground: bool = False) -> np.ndarray:
        """(B, 2 n_range) uint8 waterfall with the config's display mapping."""
        c = self.config
        return images.to_uint8(self.waterfall(ground), gain=c.gain, gamma=c.gamma, mode=c.display,
                               db_range=c.db_range, reference=db_display_reference(c))

    def save_png(self, path: str | Path, ground: bool = False) -> Path:
        """Write the waterfall (rows = pings, first ping at the top; port on the left) as an 8-bit PNG."""
        return images.save_png(path, self.to_uint8(ground))


def waterfall(series: np.ndarray) -> np.ndarray:
    """(B, n_range, 2) side series -> (B, 2 n_range) rows [port far..near | starboard near..far]."""
    s = np.asarray(series)
    return np.concatenate([s[:, ::-1, PORT], s[:, :, STARBOARD]], axis=1)


class SidescanSonar(FanSonar):
    """A side-scan sonar on ``device`` (``None``: cuda:0 if present, else cpu); ``sensor_id`` separates the
    noise of several sensors sharing a seed. Takes a :class:`SidescanSonarConfig` (default: its defaults)."""

    CONFIG = SidescanSonarConfig
    RESULT = SidescanResult

    def __init__(self, config: SidescanSonarConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        super().__init__(config, device, sensor_id)
        self._chain = self._device_chain()

    def _n_channels(self) -> int:
        return self.config.fan_channels

    def _result_bytes(self, batch: int) -> int:
        return self.config.result_bytes(batch)

    def memory_bytes(self, batch: int) -> int:
        """Device bytes a render of ``batch`` pings needs."""
        if self._chain is not None:
            return self._chain.memory_bytes(batch) + self._result_bytes(batch) + 16 * batch * 2 * self.config.range_bins
        return super().memory_bytes(batch)

    def render(self, scene: Any, poses: Any, frame_index: int = 0,
               out: SidescanResult | None = None) -> SidescanResult:
        """Render B pings (arguments as :meth:`FanSonar._check`: the scene, (7,) or (B, 7) poses or a
        Trajectory, and the frame number of pose 0). ``out``: a result of an earlier render of this sensor with the
        same batch size, whose arrays this render overwrites and which it returns (no allocation: a loop rendering
        ping after ping reuses one set of arrays); by default new arrays. With ``model = "device"`` the pings go
        through the acoustic device chain (sensors/acoustic/chain.py) and the altitude is the ping's first return,
        as in the peer model."""
        c = self.config
        frame_index = int(frame_index)
        p = self._check(scene, poses, frame_index, out)
        batch = p.shape[0]
        into = (FanSeries(out.intensity, out.clean_intensity, out.hit_count, out.label_id)
                if out is not None else None)
        altitude_out = out.altitude if out is not None else None
        if self._chain is not None:
            series, altitude = self._chain_series(self._chain, scene, p, frame_index, 0.0, into, altitude_out)
        else:
            _, series, buf = self._cast(scene, p, frame_index, out=into)
            altitude = self._fan.altitude(buf, batch, frame_index, 0.0, altitude_out)
        ground = (out.ground_intensity if out is not None
                  else wp.empty((batch, c.range_bins, 2), dtype=wp.float32, device=self.device))
        launch_1d(fk.ground_range_kernel, batch * c.range_bins * 2,
                  [series.intensity, altitude, float(c.min_range), float(c.range_resolution), c.range_bins, 2,
                   ground], self.device)
        if out is not None:
            out.label_names = list(scene.labels)
            out.frame_index = frame_index
            return out
        return SidescanResult(series.intensity, series.clean, series.hits, series.labels, altitude, ground,
                              c.ranges(), c.ground_ranges(), list(scene.labels), c, frame_index)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_SERIES = ("range_bins", 2)


def _cli_write(o: _reg.CliOutput) -> list[str]:
    """``oceansim-py render sidescan``: ``sidescan_waterfall.png`` (rows = pings, first at the top; port on the
    left, starboard on the right, nadir in the middle), ``sidescan_ground_waterfall.png`` (after the flat-bottom
    correction), ``sidescan.npy`` ((pings, n_range, 2) slant-range intensity, column 0 port),
    ``sidescan_ground.npy``, ``sidescan_altitude.npy`` and ``sidescan_ranges.npy``."""
    c, out, data = o.config, o.out, o.data
    _reg.warn_if_blind("side-scan sonar", float((data["hit_count"] > 0).mean()), o, c.max_range)
    o.result.save_png(out / "sidescan_waterfall.png")
    o.result.save_png(out / "sidescan_ground_waterfall.png", ground=True)
    for file, name in (("sidescan", "intensity"), ("sidescan_ground", "ground_intensity"),
                       ("sidescan_altitude", "altitude"), ("sidescan_ranges", "ranges")):
        images.save_npy(out / f"{file}.npy", data[name])
    return [f"rendered {len(o.poses)} side-scan ping(s) of {c.range_bins} bins per side ({c.rays_per_pose} rays "
            f"each) of {o.scene.source} in {o.seconds:.3f} s (first call: includes kernel loading); "
            f"{_reg.first_ping_text('altitude', data['altitude'], 2)}",
            f"wrote {out / 'sidescan_waterfall.png'}, {out / 'sidescan_ground_waterfall.png'}, {out / 'sidescan.npy'}"]


SENSOR_KIND = _reg.SensorKind(
    name="sidescan", description="side-scan sonar: port and starboard slant-range series per ping",
    config_class=SidescanSonarConfig, sensor_class=SidescanSonar,
    schema=(
        _reg.Product("intensity", _reg.ARRAY, "float32",
                     "model 'peer': linear echo intensity (sr-weighted return, with noise); "
                     + DEVICE_INTENSITY_UNIT + "; columns port/starboard", _SERIES),
        _reg.Product("clean_intensity", _reg.ARRAY, "float32", "linear echo intensity before noise; " + DEVICE_CLEAN_UNIT, _SERIES),
        _reg.Product("ground_intensity", _reg.ARRAY, "float32",
                     "linear echo intensity resampled at ground_ranges_m", _SERIES),
        _reg.Product("hit_count", _reg.ARRAY, "int32", "count of rays per bin", _SERIES),
        _reg.Product("label_id", _reg.ARRAY, "int32", "label index of the strongest return (-1 empty)", _SERIES),
        _reg.Product("altitude", _reg.TABLE, "float32", "m (first return; NaN without one)"),
    ),
    default_products=("intensity", "ground_intensity", "altitude"),
    metadata=lambda c: {"ranges_m": c.ranges().tolist(), "ground_ranges_m": c.ground_ranges().tolist(),
                        "series_layout": "(n_range, 2): row 0 nearest range, column 0 port, 1 starboard; stack the "
                                         "samples into a waterfall [port reversed | starboard]; altitude = first "
                                         "return (m)"},
    cli=_reg.CliTarget(
        help="side-scan sonar: waterfall PNGs (slant and ground range) and raw .npy",
        default_preset="holoocean_default", poses=_reg.RUN, framing="sidescan", write=_cli_write),
)
