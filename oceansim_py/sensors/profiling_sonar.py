"""Profiling sonar (multibeam swath bathymetry): configuration, sensor and result (docs/PHYSICS.md §3).

A swath of narrow beams across track pointing down. Per ping and beam: the detected bottom range (the
return-weighted mean range of the beam's rays, a centre-of-gravity detection), the beam intensity, and the
sounding as a 3-D point in the sensor and world frames; over a trajectory the soundings form a bathymetric
point cloud (:meth:`ProfilingResult.point_cloud`, :meth:`ProfilingResult.save_ply` through trimesh). Range
and beam-angle noise are Gaussian. The same rays also give a (range x beam) intensity image with the imaging
sonar's speckle (docs/PHYSICS.md §1), HoloOcean's ProfilingSonar output.

Frames: sensor FLU (x along track, y port, z up); mount it level, x along the track (tilt it with the mount).
Beam j is centred at theta_j = -W/2 + (j + 1/2) W / n_beams from nadir (rad, positive to starboard), most-port
beam first, and points along (0, -sin theta_j, -cos theta_j). A ray at along-track angle a and across angle
theta points along (sin a, -cos a sin theta, -cos a cos theta) and stands for cos a * da * dtheta (sr).
Config angles in degrees, ranges in metres, absorption in dB/m (one way).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError
from oceansim_py.io import images
from oceansim_py.io.atomic import atomic_path
from oceansim_py.io.config import require, require_non_negative, require_zero
from oceansim_py.kernels import acoustic_fans as fk
from oceansim_py.runtime import launch_1d
from oceansim_py.sensors.acoustic.chain import DEVICE_CLEAN_UNIT, DEVICE_INTENSITY_UNIT, TableFan
from oceansim_py.sensors.acoustic.device_config import DeviceChainFields
from oceansim_py.sensors.acoustic.presets import PROFILING_DEVICE_PRESETS
from oceansim_py.sensors.acoustic_fan import (FanSeries, FanSonar, RangeBinnedConfig, db_display_reference,
                                              require_count, torch_tensors, validate_range_and_noise)

_OWNER = "ProfilingSonarConfig"


@dataclasses.dataclass(frozen=True)
class ProfilingSonarConfig(DeviceChainFields, RangeBinnedConfig):
    """Profiling sonar parameters. With ``model = "device"`` the image goes through the acoustic device chain
    (fields of :class:`~oceansim_py.sensors.acoustic.device_config.DeviceChainFields`; ``beam_width`` > 0 adds
    the bearing point spread across the beams) and the soundings are the centre of gravity of the beam's
    sonar-equation echoes (re 1 uPa^2; beam intensity without speckle: ``multiplicative_sigma`` must be 0).

    Attributes:
        swath_width: across-track field of view W (degrees, 0 < W < 180), centred on nadir.
        along_track_beamwidth: along-track beam width (degrees, 0 < w < 90).
        n_beams: beams across the swath (contiguous, W / n_beams wide each).
        across_rays_per_beam, along_track_rays: rays per beam across and along track.
        min_range, max_range: range window (m); range_bins bins cover [min_range, max_range) for the image.
        absorption: one-way absorption alpha (dB/m). spreading: multiply returns by (1 m / r)^2.
        range_noise: sigma of the Gaussian noise on each detected range (m).
        angle_noise: sigma of the Gaussian noise on each beam's angle (degrees).
        normalisation: image normalisation, "none" (sr) or "global" (each ping by its largest bin).
        multiplicative_sigma, additive_sigma: image speckle z = I (1 + w_m) + w_a (docs/PHYSICS.md §1); the beam
            intensities get the multiplicative term only.
        seed: noise seed; draws keyed by (seed, frame index, sensor id, stream, beam or bin).
        image: also render the (range x beam) intensity image (HoloOcean's output); off, a render computes
            the soundings only and skips the image's n_range x n_beams bins per ping.
        gain, gamma: 8-bit image mapping clip(255 gain z^gamma) when normalisation is "global"; a
            "none" image is shown in dB over db_range.
        display_floor: level shown black in the "db" display (dB in the image's units: re 1 uPa^2 after TVG and
            gain with ``model = "device"``); the window is [display_floor, display_floor + db_range]. ``None``: the
            window's top is the image's maximum (the device presets set it: their post-TVG noise shows as grain).
    """

    swath_width: float = 120.0
    along_track_beamwidth: float = 1.0
    n_beams: int = 120
    across_rays_per_beam: int = 4
    along_track_rays: int = 4
    min_range: float = 0.5
    max_range: float = 75.0
    range_bins: int = 745
    absorption: float = 0.0
    spreading: bool = False
    range_noise: float = 0.0
    angle_noise: float = 0.0
    normalisation: Literal["none", "global"] = "none"
    multiplicative_sigma: float = 0.0
    additive_sigma: float = 0.0
    seed: int = 0
    image: bool = True
    db_range: float = 50.0
    display_floor: float | None = None
    gain: float = 1.0
    gamma: float = 1.0

    #: The peer model renders ``multipath_bounces`` too (same-path returns in its law; acoustic_fan.py).
    PEER_BOUNCES: ClassVar[bool] = True
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # HoloOcean ProfilingSonar (docs/PHYSICS.md §3: 120 deg x 1 deg, 0.5-75 m); 120 beams of 1 deg, 0.1 m bins
        # (745), 4 x 4 rays per beam and noise off chosen here.
        "holoocean_default": dict(
            swath_width=120.0, along_track_beamwidth=1.0, n_beams=120, across_rays_per_beam=4, along_track_rays=4,
            min_range=0.5, max_range=75.0, range_bins=745, absorption=0.0, range_noise=0.0, angle_noise=0.0,
            normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
        ),
        # Kongsberg EM 2040-04 at 600 kHz, single RX (unity-ros-underwater-simulator-2021.txt §V, the paper's
        # variants and its coverage table, cold ocean water): max depth 95 m with 130 m coverage, i.e. a swath
        # of 2 atan(65 / 95) = 68.8 deg out to the slant range sqrt(95^2 + 65^2) = 115 m. 0.4 deg beams (the
        # "-04" model's beam width, nominal), 172 beams (0.4 deg spacing), 0.05 m bins, absorption 0.18 dB/m
        # (~600 kHz sea water), range noise 0.02 m and angle noise 0.02 deg chosen here. Soundings only (a
        # multibeam's product), no water-column image: set image true to get one.
        "em2040_600khz_peer": dict(
            swath_width=68.8, along_track_beamwidth=0.4, n_beams=172, across_rays_per_beam=3, along_track_rays=3,
            min_range=0.5, max_range=115.0, range_bins=2290, absorption=0.18, range_noise=0.02, angle_noise=0.02,
            normalisation="global", multiplicative_sigma=0.2, additive_sigma=0.0, image=False,
        ),
        # The same at 700 kHz (the paper's table: max depth 55 m with 27 m coverage): swath 2 atan(13.5 / 55)
        # = 27.6 deg, slant range sqrt(55^2 + 13.5^2) = 56.6 m; 69 beams of 0.4 deg, absorption 0.21 dB/m
        # (~700 kHz sea water) and noise chosen here.
        "em2040_700khz_peer": dict(
            swath_width=27.6, along_track_beamwidth=0.4, n_beams=69, across_rays_per_beam=3, along_track_rays=3,
            min_range=0.5, max_range=56.6, range_bins=1122, absorption=0.21, range_noise=0.02, angle_noise=0.02,
            normalisation="global", multiplicative_sigma=0.2, additive_sigma=0.0, image=False,
        ),
        # Device presets (model "device"): values and sources in sensors/acoustic/presets.py.
        **{name: values for name, (values, _source) in PROFILING_DEVICE_PRESETS.items()},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        validate_range_and_noise(self, _OWNER, ("swath_width", "along_track_beamwidth", "range_noise", "angle_noise"))
        require(0.0 < self.swath_width < 180.0, _OWNER, "swath_width",
                f"must be in (0, 180) degrees, got {self.swath_width}; set the across-track aperture")
        require(0.0 < self.along_track_beamwidth < 90.0, _OWNER, "along_track_beamwidth",
                f"must be in (0, 90) degrees, got {self.along_track_beamwidth}")
        for name in ("n_beams", "across_rays_per_beam", "along_track_rays"):
            require_count(self, _OWNER, name)
        require_non_negative(self.range_noise, _OWNER, "range_noise", "m")
        require_non_negative(self.angle_noise, _OWNER, "angle_noise", "degrees")
        require(isinstance(self.image, bool), _OWNER, "image", f"must be true or false, got {self.image!r}")
        require(self.db_range > 0.0, _OWNER, "db_range", f"must be > 0 dB, got {self.db_range}")
        self.validate_device_chain(_OWNER, self.swath_width, self.along_track_beamwidth)
        require_zero(self.elevation_span, _OWNER, "elevation_span", "a profiling sonar (the fan is "
                                                                    "along_track_beamwidth wide)")

    # -- derived geometry (range_resolution and ranges() of the image bins: RangeBinnedConfig) --------------
    @property
    def rays_per_beam(self) -> int:
        return self.across_rays_per_beam * self.along_track_rays

    @property
    def fan_channels(self) -> int:
        """Series columns of the fan."""
        return self.n_beams

    def result_bytes(self, batch: int) -> int:
        """Device bytes of a render's outputs beyond the fan's series: 40 B per beam (ranges, intensities, validity, labels, points) per ping."""
        return batch * self.n_beams * 40

    @property
    def rays_per_pose(self) -> int:
        return self.n_beams * self.rays_per_beam

    def beam_angles(self) -> np.ndarray:
        """Beam centres (rad from nadir, positive to starboard), most-port beam first."""
        w = math.radians(self.swath_width)
        return (-0.5 * w + (np.arange(self.n_beams) + 0.5) * w / self.n_beams).astype(np.float32)

    def ray_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(rays_per_pose, 3) FLU directions and solid angles (sr), ordered (beam, along, across)."""
        w = math.radians(self.swath_width)
        wa = math.radians(self.along_track_beamwidth)
        n_across = self.n_beams * self.across_rays_per_beam
        theta = (-0.5 * w + (np.arange(n_across) + 0.5) * w / n_across).reshape(self.n_beams, 1,
                                                                               self.across_rays_per_beam)
        a = (-0.5 * wa + (np.arange(self.along_track_rays) + 0.5) * wa / self.along_track_rays).reshape(1, -1, 1)
        theta, a = np.broadcast_arrays(theta, a)
        theta, a = theta.ravel(), a.ravel()
        dirs = np.stack([np.sin(a), -np.cos(a) * np.sin(theta), -np.cos(a) * np.cos(theta)], axis=1)
        weights = np.cos(a) * (wa / self.along_track_rays) * (w / n_across)
        return dirs, weights

    def table_fan(self) -> TableFan:
        """The fan as the device chain sees it (channels: beams, most port first); each ray's cell spans
        (d dir / d theta) d theta across track and (d dir / da) da along track."""
        dirs, weights = self.ray_table()
        dth = math.radians(self.swath_width) / (self.n_beams * self.across_rays_per_beam)
        da = math.radians(self.along_track_beamwidth) / self.along_track_rays
        a = np.arcsin(np.clip(dirs[:, 0], -1.0, 1.0))
        theta = np.arctan2(-dirs[:, 1], -dirs[:, 2])
        across = dth * np.stack([np.zeros_like(a), -np.cos(a) * np.cos(theta), np.cos(a) * np.sin(theta)], axis=1)
        along = da * np.stack([np.cos(a), np.sin(a) * np.sin(theta), np.sin(a) * np.cos(theta)], axis=1)
        return TableFan(dirs, across, along, weights, self.n_beams, float(self.min_range), float(self.max_range),
                        self.range_bins, channel_spacing=math.radians(self.swath_width) / self.n_beams)


@dataclasses.dataclass
class ProfilingResult:
    """Swaths of a batch of B poses (frames ``frame_index ..``), as Warp arrays on the sensor's device.

    bottom_range: (B, n_beams) detected range per beam (m, with noise; NaN where the beam saw no bottom).
    intensity: (B, n_beams) beam return: the sum over its rays (peer: sr, with speckle; device: their sonar-equation
    echoes, re 1 uPa^2, before TVG, gain, point spread and noise). valid: (B, n_beams) int32 1/0.
    label_id: (B, n_beams) label index of the beam's strongest return (-1 invalid).
    point_sensor, point_world: (B, n_beams, 3) soundings in the sensor and world frames (m; NaN invalid).
    image, clean_image: (B, n_range, n_beams) range x beam intensity with and without noise; None when the
    config's ``image`` is off.
    beam_angles: (n_beams,) rad from nadir, + starboard. ranges: (n_range,) image bin centres (m).
    image_hits, image_labels: (B, n_range, n_beams) rays binned and label index of the strongest return per image
    bin (-1 empty); None when the image is off. Not among :meth:`numpy`'s products.
    """

    bottom_range: wp.array
    intensity: wp.array
    valid: wp.array
    label_id: wp.array
    point_sensor: wp.array
    point_world: wp.array
    image: wp.array | None
    clean_image: wp.array | None
    beam_angles: np.ndarray
    ranges: np.ndarray
    label_names: list[str]
    config: ProfilingSonarConfig
    frame_index: int
    image_hits: wp.array | None = None
    image_labels: wp.array | None = None

    @property
    def batch_size(self) -> int:
        return int(self.bottom_range.shape[0])

    @property
    def bearings(self) -> np.ndarray:
        """``beam_angles`` under the name every sonar result carries (docs/DESIGN.md, Conventions): (n_beams,) rad
        from nadir (the sensor's -z axis), + starboard, column 0 the most-port beam."""
        return self.beam_angles

    def _arrays(self) -> dict[str, wp.array]:
        out = {"bottom_range": self.bottom_range, "intensity": self.intensity, "valid": self.valid,
               "label_id": self.label_id, "point_sensor": self.point_sensor, "point_world": self.point_world}
        if self.image is not None:
            out.update(image=self.image, clean_image=self.clean_image)
        return out

    def numpy(self) -> dict[str, np.ndarray]:
        """Host copies of the arrays above (points as (B, n_beams, 3) float32; no images when they are off)."""
        out = {k: v.numpy() for k, v in self._arrays().items()}
        out.update(beam_angles=self.beam_angles.copy(), ranges=self.ranges.copy())
        return out

    def torch(self) -> dict[str, Any]:
        """Zero-copy torch tensors of the device arrays (``wp.to_torch``); needs PyTorch installed."""
        return torch_tensors("ProfilingResult", self._arrays())

    def point_cloud(self, frame: Literal["world", "sensor"] = "world") -> tuple[np.ndarray, np.ndarray]:
        """The valid soundings of every ping: (N, 3) float32 points in ``frame`` and their (N,) intensities."""
        if frame not in ("world", "sensor"):
            raise ConfigError(f"ProfilingResult.point_cloud: frame must be 'world' or 'sensor', got {frame!r}")
        pts = (self.point_world if frame == "world" else self.point_sensor).numpy()
        ok = self.valid.numpy().astype(bool)
        return pts[ok], self.intensity.numpy()[ok]

    def save_ply(self, path: str | Path, frame: Literal["world", "sensor"] = "world") -> Path:
        """Write the point cloud (:meth:`point_cloud`) as PLY through trimesh, grey levels = intensity in dB."""
        import trimesh

        pts, inten = self.point_cloud(frame)
        if pts.shape[0] == 0:
            raise ConfigError(f"ProfilingResult.save_ply: no valid sounding in the {self.batch_size} ping(s); "
                              f"nothing to write to {path}")
        grey = images.to_uint8(inten, mode="db", db_range=self.config.db_range)
        colours = np.stack([grey, grey, grey, np.full_like(grey, 255)], axis=1)
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(p) as tmp:
            trimesh.PointCloud(pts.astype(np.float64), colors=colours).export(str(tmp), file_type="ply")
        return p

    def to_uint8(self) -> np.ndarray:
        """(B, n_range, n_beams) uint8 images: linear (gain, gamma) when normalised, else dB over db_range."""
        c = self.config
        if self.image is None:
            raise ConfigError("ProfilingResult: this render has no image (the config's image is false); set "
                              "image: true to render one")
        v = self.image.numpy()
        if c.normalisation == "global":
            return images.to_uint8(v, gain=c.gain, gamma=c.gamma)
        return np.stack([images.to_uint8(f, mode="db", db_range=c.db_range, reference=db_display_reference(c))
                         for f in v])

    def save_png(self, path: str | Path, frame: int = 0) -> Path:
        """Write ping ``frame``'s range x beam image (row 0 nearest, column 0 most port) as an 8-bit PNG."""
        if not 0 <= frame < self.batch_size:
            raise ConfigError(f"save_png: frame {frame} is outside the batch of {self.batch_size}")
        return images.save_png(path, self.to_uint8()[frame])


class ProfilingSonar(FanSonar):
    """A profiling (swath bathymetry) sonar on ``device`` (``None``: cuda:0 if present, else cpu);
    ``sensor_id`` separates the noise of several sensors sharing a seed."""

    CONFIG = ProfilingSonarConfig
    RESULT = ProfilingResult

    def __init__(self, config: ProfilingSonarConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        super().__init__(config, device, sensor_id)
        self._beam_angles = self.config.beam_angles()
        self._beam_angles_dev = wp.array(self._beam_angles, dtype=wp.float32, device=self.device)
        self._chain = self._device_chain()

    def memory_bytes(self, batch: int) -> int:
        """Device bytes a render of ``batch`` swaths needs."""
        if self._chain is not None:
            return (self._chain.memory_bytes(batch) + self._result_bytes(batch)
                    + 16 * batch * self.config.n_beams * self.config.range_bins)
        return super().memory_bytes(batch)

    def _n_channels(self) -> int:
        return self.config.fan_channels

    def _result_bytes(self, batch: int) -> int:
        return self.config.result_bytes(batch)

    def render(self, scene: Any, poses: Any, frame_index: int = 0,
               out: ProfilingResult | None = None) -> ProfilingResult:
        """Render B swaths (arguments as :meth:`FanSonar._check`: the scene, (7,) or (B, 7) poses or a
        Trajectory, and the frame number of pose 0). ``out``: a result of an earlier render of this sensor with the
        same batch size, whose arrays this render overwrites and which it returns (no allocation: the water-column
        image of a multibeam is tens of MB per ping, and fresh pages cost more to touch than to render); by
        default new arrays. With ``model = "device"`` the image goes through the acoustic device chain and the
        soundings come from the chain's per-ray echoes by the peer model's detection (centre of gravity, range and
        angle noise)."""
        c = self.config
        frame_index = int(frame_index)
        p = self._check(scene, poses, frame_index, out)
        batch = p.shape[0]
        dev = self.device
        if out is not None:
            beams = [out.bottom_range, out.intensity, out.valid, out.label_id, out.point_sensor, out.point_world]
            image = [out.image, out.clean_image, out.image_hits, out.image_labels]
        else:
            shape = (batch, c.n_beams)
            beams = [wp.empty(shape, dtype=t, device=dev)
                     for t in (wp.float32, wp.float32, wp.int32, wp.int32, wp.vec3, wp.vec3)]
            image = (FanSeries.allocate((batch, c.range_bins, c.n_beams), dev).arrays() if c.image
                     else [None, None, None, None])

        def detect(ray_value: wp.array, ray_bin: wp.array, ray_label: wp.array, ray_range: wp.array, poses: wp.array,
                   multiplicative_sigma: float) -> None:
            launch_1d(fk.profile_detect_kernel, batch * c.n_beams,
                      [ray_value, ray_bin, ray_label, ray_range, c.rays_per_beam, c.rays_per_pose, c.n_beams,
                       self._beam_angles_dev, poses, int(c.seed), frame_index, self.sensor_id, float(c.range_noise),
                       math.radians(c.angle_noise), float(multiplicative_sigma), *beams], dev, min_chunk=64)

        if self._chain is not None:
            self._chain.render(scene, p, frame_index, *image,
                               then=lambda b: detect(b.ray_intensity, b.ray_bin, b.ray_label, b.ray_distance, b.poses,
                                                     0.0))
        else:
            into = FanSeries(*image) if c.image else None
            _, series, buf = self._cast(scene, p, frame_index, series=c.image, out=into)
            detect(buf.ray_value, buf.ray_bin, buf.ray_label, buf.ray_range, buf.poses, c.multiplicative_sigma)
            if series is not None:
                image = series.arrays()
        if out is not None:
            out.label_names = list(scene.labels)
            out.frame_index = frame_index
            return out
        return ProfilingResult(*beams, image[0], image[1], self._beam_angles, c.ranges(), list(scene.labels), c,
                               frame_index, image[2], image[3])


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_BEAMS = ("n_beams",)
_IMAGE = ("range_bins", "n_beams")
_IMAGE_PRODUCTS = ("image", "clean_image", "image_png")


def _check(config: ProfilingSonarConfig, products: tuple[str, ...], where: str) -> None:
    """The image products need ``image: true``."""
    wanted = sorted(set(_IMAGE_PRODUCTS) & set(products))
    if wanted and not config.image:
        raise ConfigError(f"{where}: products {wanted} need the image, but its config has image: false (e.g. the "
                          f"em2040 presets); add image: true to its config or drop them")


def _cli_write(o: _reg.CliOutput) -> list[str]:
    """``oceansim-py render profiling``: ``profiling.ply`` (the valid soundings of every ping as a world-frame
    point cloud, grey = intensity), ``profiling_image.png`` (the first ping's range x beam image, row 0 nearest,
    column 0 most port; when the config renders an image), ``profiling_points.npy`` ((pings, n_beams, 3) world
    soundings, NaN where no bottom), ``profiling_range.npy`` ((pings, n_beams) detected ranges) and
    ``profiling_beam_angles.npy``."""
    c, out, data = o.config, o.out, o.data
    n_valid = int(data["valid"].sum())
    _reg.warn_if_blind("profiling sonar", float(data["valid"].mean()), o, c.max_range)
    if o.result.image is not None:
        o.result.save_png(out / "profiling_image.png")
    for file, name in (("points", "point_world"), ("range", "bottom_range"), ("beam_angles", "beam_angles")):
        images.save_npy(out / f"profiling_{file}.npy", data[name])
    if n_valid == 0:
        raise ConfigError(f"no beam saw the bottom within {c.max_range} m of the pose; wrote the arrays to {out} but "
                          f"no profiling.ply; move the sensor closer or raise max_range")
    o.result.save_ply(out / "profiling.ply")
    return [f"rendered {len(o.poses)} swath(s) of {c.n_beams} beams ({c.rays_per_pose} rays each) of "
            f"{o.scene.source} in {o.seconds:.3f} s (first call: includes kernel loading); {n_valid} soundings",
            f"wrote {out / 'profiling.ply'}, {out / 'profiling_points.npy'}, {out / 'profiling_range.npy'}"]


SENSOR_KIND = _reg.SensorKind(
    name="profiling", description="profiling (swath bathymetry) sonar: per-beam bottom range and soundings",
    config_class=ProfilingSonarConfig, sensor_class=ProfilingSonar,
    schema=(
        _reg.Product("bottom_range", _reg.ARRAY, "float32", "m (NaN where no bottom)", _BEAMS),
        _reg.Product("intensity", _reg.ARRAY, "float32", "model 'peer': sr (sum over the beam's rays, with speckle); "
                     "model 'device': the sum of its rays' sonar-equation echoes, re 1 uPa^2, before TVG, gain, point "
                     "spread and noise", _BEAMS),
        _reg.Product("valid", _reg.ARRAY, "int32", "flag 1/0", _BEAMS),
        _reg.Product("label_id", _reg.ARRAY, "int32", "label index (-1 invalid)", _BEAMS),
        _reg.Product("point_sensor", _reg.ARRAY, "float32", "m, sensor frame FLU (NaN invalid)", ("n_beams", 3),
                     frame="sensor FLU"),
        _reg.Product("point_world", _reg.ARRAY, "float32", "m, world frame Z up (NaN invalid)", ("n_beams", 3),
                     frame="world"),
        _reg.Product("image", _reg.ARRAY, "float32", "sr per range x beam cell, with noise; " + DEVICE_INTENSITY_UNIT,
                     _IMAGE),
        _reg.Product("clean_image", _reg.ARRAY, "float32", "sr per cell, before noise; " + DEVICE_CLEAN_UNIT, _IMAGE),
        _reg.Product("image_png", _reg.IMAGE, "uint8", "8-bit display view (uint8 0..255), not a measurement", _IMAGE,
                     view=lambda result, config: result.to_uint8()),
    ),
    default_products=("bottom_range", "point_world", "intensity", "image_png"),
    check=_check,
    metadata=lambda c: {"beam_angles_rad": c.beam_angles().tolist(), "ranges_m": c.ranges().tolist(),
                        "layout": "per beam, most port first; beam angle from nadir, + starboard; points (n_beams, "
                                  "3) in m, NaN where the beam saw no bottom; image (n_range, n_beams), row 0 "
                                  "nearest"},
    cli=_reg.CliTarget(
        help="profiling (swath bathymetry) sonar: PLY point cloud, image and .npy",
        default_preset="holoocean_default", poses=_reg.RUN, framing="profiling", write=_cli_write),
)
