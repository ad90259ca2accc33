"""Forward-looking imaging sonar (FLS): configuration, sensor and result (docs/PHYSICS.md §1).

Rays are spaced uniformly in angle over the bearing x elevation fan; each carries the solid angle it stands
for, so the image does not depend on the ray density. The first hit of each ray returns
``s = mu * cos(psi) * dOmega * 10^(-2 alpha r / 10) * [(1 m / r)^2] * g(e)``; returns are summed (or averaged)
into range x beam bins, optionally normalised, then speckled: ``z = I * (1 + w_m) + w_a * h``.

Frames and conventions (docs/DESIGN.md, Conventions): sensor frame FLU (x boresight, y port, z up); bearing positive to
starboard; polar images (B, n_range, n_beams), row 0 the nearest range bin, column 0 the most-port beam.
Config angles are degrees, ranges metres, absorption dB/m (one way).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError, OceanSimError
from oceansim_py.io import images
from oceansim_py.io.config import ConfigBase, require, require_finite, require_non_negative, require_positive
from oceansim_py.kernels import acoustic_chain as kc
from oceansim_py.kernels import imaging_sonar as k
from oceansim_py.kernels import multipath as km
from oceansim_py.limits import MAX_FAN_WIDTH, MAX_RANGE_BINS, check_config_memory
from oceansim_py.runtime import check_memory, launch_1d, resolve_device
from oceansim_py.sensors.backend_field import RaycastBackendField
from oceansim_py.sensors.batching import PoseUploads, check_out_type, check_render_call
from oceansim_py.sensors.rays import RayBuffers
from oceansim_py.sensors.scratch import ScratchCache
from oceansim_py.sensors.acoustic.beam_pattern import LineArray
from oceansim_py.sensors.acoustic.chain import DEVICE_CLEAN_UNIT, DEVICE_INTENSITY_UNIT, DeviceChain, FanLayout
from oceansim_py.sensors.acoustic.device_config import DeviceChainFields, DeviceDisplayFields, require_line_array_width
from oceansim_py.sensors.acoustic.display import apply_colormap, db_window_to_uint8
from oceansim_py.sensors.acoustic.presets import IMAGING_SONAR_DEVICE_PRESETS

_OWNER = "ImagingSonarConfig"


@dataclasses.dataclass(frozen=True)
class ImagingSonarConfig(DeviceChainFields, DeviceDisplayFields, RaycastBackendField, ConfigBase):
    """Imaging sonar parameters (the device-chain fields, ``model`` and below, are documented in
    :class:`~oceansim_py.sensors.acoustic.device_config.DeviceChainFields` and ``DeviceDisplayFields``).

    Attributes:
        horizontal_fov: bearing field of view Theta (degrees, 0 < Theta < 360).
        vertical_fov: elevation field of view Phi (degrees, 0 < Phi < 180).
        min_range, max_range: range window (m); bins cover [min_range, max_range).
        n_beams: beams (image columns) across the horizontal field of view.
        range_bins: range bins (image rows); the range resolution is (max - min) / range_bins. A mapping or YAML
            file may give ``range_resolution`` (m) instead (:meth:`derived_keys`).
        rays_per_beam: rays in bearing per beam (the fan has n_beams * rays_per_beam bearing rays).
        elevation_rays: rays in elevation.
        absorption: alpha, one-way absorption in dB/m (the return is scaled by 10^(-2 alpha r / 10)).
        spreading: multiply returns by (1 m / r)^2 (two-way spreading less the footprint's growth).
        elevation_pattern: "flat" (g = 1), "gaussian" (g = exp(-ln 2 (2 e / Phi)^2): -3 dB at the edges) or
            "array" (two-way pattern g = D(e)^4 of a vertical line array with ``elevation_taper`` whose one-way
            -3 dB width is Phi, side lobes included; pair it with ``elevation_span`` > Phi).
        aggregation: "sum" of the returns in a bin, or their "mean" (HoloOcean 2022 eq. 2; a mean scales with
            the ray solid angle, so pair it with a normalisation).
        normalisation: "none" (physical units: sr for the peer model, re 1 uPa^2 for the device model), "row" (each
            range row by its maximum), "global"; ``None`` (the default): the model's own, "row" for the peer model
            (OceanSim's) and "none" for the device model (its intensities in physical units, as every device
            preset sets): :attr:`normalisation_mode`.
        multiplicative_sigma: sigma_m of the Gaussian speckle w_m.
        additive_sigma: sigma_a of the Rayleigh additive noise w_a (in the units of the normalised image).
        additive_range_scaled: h = (r / r_max)^2 * (1 + additive_beam_gain * exp(-(b / additive_beam_width)^2))
            instead of h = 1 (OceanSim eq. 3; its sigma_phi is additive_beam_width^2 in rad^2).
        additive_beam_gain: c_p of that formula.
        additive_beam_width: its bearing width (degrees).
        seed: noise seed; draws are keyed by (seed, frame index, sensor id, stream, bin).
        gain, gamma: 8-bit display mapping clip(255 * gain * z^gamma).
        range_sigma: HoloOcean's RangeSigma (m): each return is binned at r + x, x ~ Exponential(mean
            range_sigma), and scaled by exp(-x / range_sigma) (the exponential's pdf scaled to 1 at 0); 0 is off.
        azimuth_streaks: HoloOcean's AzimuthStreaks: 0 off; in a row where at least 8 % of the returns meet their
            surface within 8 degrees of the normal, -1 maps each bin z -> z^2 (removal artefact) and 1 maps
            z -> 1 - (1 - z)^2 (increased gain artefact), after the noise (z in the normalised image's units).
        multipath: HoloOcean's MultiPath, for the peer model (``model: peer``): each ray's first hit reflects
            specularly once (cast through the scene's backend); a second hit B in the field of view adds
            mu_1 mu_B cos(return) w at B's bearing and range (r1 + |m - B| + |B - S|) / 2, as HoloOcean's
            ImagingSonar.cpp does (kernels/multipath.py). The device model has ``multipath_bounces`` instead.
        HoloOcean's AddSigma and MultSigma are ``additive_sigma`` and ``multiplicative_sigma``, its ScaleNoise
        the range-scaled additive noise: :meth:`from_holoocean` reads a HoloOcean ImagingSonar configuration.
    """

    horizontal_fov: float = 130.0
    vertical_fov: float = 20.0
    min_range: float = 0.2
    max_range: float = 3.0
    n_beams: int = 260
    range_bins: int = 350
    rays_per_beam: int = 12
    elevation_rays: int = 461
    absorption: float = 0.1
    spreading: bool = False
    elevation_pattern: Literal["flat", "gaussian", "array"] = "flat"
    aggregation: Literal["sum", "mean"] = "sum"
    normalisation: Literal["none", "row", "global"] | None = None
    multiplicative_sigma: float = 0.2
    additive_sigma: float = 0.05
    additive_range_scaled: bool = True
    additive_beam_gain: float = 0.5
    additive_beam_width: float = 30.0
    seed: int = 0
    gain: float = 1.0
    gamma: float = 1.0
    range_sigma: float = 0.0
    azimuth_streaks: int = 0
    multipath: bool = False

    PEER_MULTIPATH: ClassVar[str] = " (the peer model has HoloOcean's one-bounce MultiPath: multipath: true)"

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # HoloOcean ImagingSonar sensor defaults (HoloOcean docs; holoocean-2022.txt §III): 120 x 20 deg,
        # 0.1-10 m, 512 range x 512 azimuth bins, per-bin mean, noise off (AddSigma = MultSigma = 0).
        # Rays (2 per beam x 256 in elevation) and the global normalisation are chosen here: HoloOcean
        # projects octree leaves instead of casting rays.
        "holoocean_default": dict(
            horizontal_fov=120.0, vertical_fov=20.0, min_range=0.1, max_range=10.0, n_beams=512,
            range_bins=512, rays_per_beam=2, elevation_rays=256, absorption=0.0, aggregation="mean",
            normalisation="global", multiplicative_sigma=0.0, additive_sigma=0.0, additive_range_scaled=False,
        ),
        # The HoloOcean paper's figure (holoocean-2022.txt §III, Fig. 4): 120 x 20 deg, 1-50 m,
        # 1024 range bins x 512 beams, "minor multiplicative and additive noise" (sigmas 0.1 / 0.02 chosen
        # here; the paper gives no values). Rays chosen here as for holoocean_default.
        "holoocean_paper": dict(
            horizontal_fov=120.0, vertical_fov=20.0, min_range=1.0, max_range=50.0, n_beams=512,
            range_bins=1024, rays_per_beam=2, elevation_rays=256, absorption=0.0, aggregation="mean",
            normalisation="global", multiplicative_sigma=0.1, additive_sigma=0.02, additive_range_scaled=False,
        ),
        # OceanSim default (oceansim-2025.txt §III-A2, modelled on an Oculus M750d): 130 x 20 deg, 0.2-3 m,
        # 0.008 m x 0.5 deg bins = 350 x 260, ~3000 x 461 rays (here 260 beams x 12 = 3120 bearing rays,
        # spaced in angle, not through OceanSim's pinhole), alpha = 0.1 (applied here as dB/m), summed bins,
        # per-row normalisation, sigma_m = 0.2, sigma_a = 0.05, range-scaled additive noise with c_p = 0.5
        # (eq. 3; the beam width 30 deg is chosen here). OceanSim's 0.5 + w_m (eq. 5) is a display offset;
        # this engine uses 1 + w_m as HoloOcean does (docs/PHYSICS.md §1).
        "oceansim_default": dict(
            horizontal_fov=130.0, vertical_fov=20.0, min_range=0.2, max_range=3.0, n_beams=260,
            range_bins=350, rays_per_beam=12, elevation_rays=461, absorption=0.1, aggregation="sum",
            normalisation="row", multiplicative_sigma=0.2, additive_sigma=0.05, additive_range_scaled=True,
            additive_beam_gain=0.5, additive_beam_width=30.0,
        ),
        # The peer model with a Blueprint Subsea Oculus M750d's fan, 750 kHz mode (docs/PHYSICS.md §1: 130 x 20 deg,
        # 512 beams, 0.1-120 m). 1024 range bins, 2 x 128 rays per beam, absorption 0.2 dB/m (~750 kHz sea water)
        # and the noise levels are chosen here. (Named "oculus_m750d" before the device presets; that name is now
        # the device model.)
        "oculus_m750d_peer": dict(
            horizontal_fov=130.0, vertical_fov=20.0, min_range=0.1, max_range=120.0, n_beams=512,
            range_bins=1024, rays_per_beam=2, elevation_rays=128, absorption=0.2, aggregation="sum",
            normalisation="row", multiplicative_sigma=0.2, additive_sigma=0.05, additive_range_scaled=True,
            additive_beam_gain=0.5, additive_beam_width=30.0,
        ),
        # The peer model with a Teledyne BlueView P900's fan (docs/PHYSICS.md §1 and the DAVE model file: 90 x 20 deg,
        # 512 beams, 10 m, 114 rays in elevation; named "blueview_p900" before the device presets). 392 range bins from 0.2 m = the c / (2 bandwidth) = 1500 / (2 * 29.9 kHz)
        # = 2.5 cm resolution; min range, absorption (DAVE's 0.0354 dB/m) and noise levels as stated.
        "blueview_p900_peer": dict(
            horizontal_fov=90.0, vertical_fov=20.0, min_range=0.2, max_range=10.0, n_beams=512,
            range_bins=392, rays_per_beam=2, elevation_rays=114, absorption=0.0354, aggregation="sum",
            normalisation="row", multiplicative_sigma=0.2, additive_sigma=0.05, additive_range_scaled=False,
        ),
        # Device presets (model "device", the acoustic device chain): values and sources in
        # sensors/acoustic/presets.py. Every preset named after a real device is one of these.
        **{name: values for name, (values, _source) in IMAGING_SONAR_DEVICE_PRESETS.items()},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        for name in ("horizontal_fov", "vertical_fov", "min_range", "max_range", "absorption",
                     "multiplicative_sigma", "additive_sigma", "additive_beam_gain", "additive_beam_width",
                     "gain", "gamma"):
            require_finite(getattr(self, name), _OWNER, name)
        require(0.0 < self.horizontal_fov < 360.0, _OWNER, "horizontal_fov",
                f"must be in (0, 360) degrees, got {self.horizontal_fov}; set the sonar's bearing aperture")
        require(0.0 < self.vertical_fov < 180.0, _OWNER, "vertical_fov",
                f"must be in (0, 180) degrees, got {self.vertical_fov}; set the sonar's elevation aperture")
        require_non_negative(self.min_range, _OWNER, "min_range", "m")
        require(self.max_range > self.min_range, _OWNER, "max_range",
                f"must be greater than min_range ({self.min_range} m), got {self.max_range} m; "
                f"raise max_range or lower min_range")
        for name in ("n_beams", "range_bins", "rays_per_beam", "elevation_rays"):
            v = getattr(self, name)
            require(isinstance(v, int) and v >= 1, _OWNER, name, f"must be an integer >= 1, got {v!r}")
        require(self.range_bins <= MAX_RANGE_BINS, _OWNER, "range_bins",
                f"must be at most {MAX_RANGE_BINS:,}, got {self.range_bins:,}")
        require_non_negative(self.absorption, _OWNER, "absorption", "dB/m")
        require_non_negative(self.multiplicative_sigma, _OWNER, "multiplicative_sigma")
        require_non_negative(self.additive_sigma, _OWNER, "additive_sigma")
        require_non_negative(self.additive_beam_gain, _OWNER, "additive_beam_gain")
        require_positive(self.additive_beam_width, _OWNER, "additive_beam_width", "degrees")
        require_positive(self.gain, _OWNER, "gain")
        require_positive(self.gamma, _OWNER, "gamma")
        for name, allowed in (("elevation_pattern", ("flat", "gaussian", "array")), ("aggregation", ("sum", "mean")),
                              ("normalisation", (None, "none", "row", "global"))):
            require(getattr(self, name) in allowed, _OWNER, name,
                    f"must be one of {list(allowed)}, got {getattr(self, name)!r}")
        require(isinstance(self.seed, int) and 0 <= self.seed < 2**31, _OWNER, "seed",
                f"must be an integer in [0, 2^31), got {self.seed!r}")
        require_finite(self.range_sigma, _OWNER, "range_sigma")
        require_non_negative(self.range_sigma, _OWNER, "range_sigma", "m")
        require(self.azimuth_streaks in (-1, 0, 1) and not isinstance(self.azimuth_streaks, bool), _OWNER,
                "azimuth_streaks", f"must be -1 (removal), 0 (off) or 1 (increased gain), as HoloOcean's "
                f"AzimuthStreaks, got {self.azimuth_streaks!r}")
        for name in ("multipath", "spreading", "additive_range_scaled"):
            require(isinstance(getattr(self, name), bool), _OWNER, name, f"must be true or false, got "
                    f"{getattr(self, name)!r}")
        require(not (self.multipath and self.model == "device"), _OWNER, "multipath",
                "is HoloOcean's one-bounce MultiPath of the peer model; with model 'device' set multipath_bounces "
                "(0..4) instead")
        self.validate_device_chain(_OWNER, self.horizontal_fov, self.vertical_fov)
        if self.elevation_pattern == "array":
            require_line_array_width(_OWNER, "vertical_fov", self.vertical_fov, self.elevation_taper,
                                     self.sidelobe_level)
        self.validate_device_display(_OWNER)
        if self.model == "device":
            for name in ("range_sigma", "azimuth_streaks"):
                require(getattr(self, name) == 0, _OWNER, name,
                        f"must be 0 with model 'device' (a HoloOcean peer option), got {getattr(self, name)}")
            require(self.aggregation == "sum", _OWNER, "aggregation",
                    "must be 'sum' with model 'device' (the coherent sum of a resolution cell's echoes)")
            # A flat array steers within +-90 deg: the point spread of a beam past end-fire has no tap on its own
            # bearing, so those beams would stay silently empty.
            require(self.beam_steering != "flat_array" or self.beam_width == 0.0 or self.horizontal_fov <= 180.0,
                    _OWNER, "beam_steering",
                    f"'flat_array' steers a flat array's beams within +-90 degrees, but horizontal_fov = "
                    f"{self.horizontal_fov} degrees puts beams behind it; use 'constant' (a lens or curved array), "
                    f"horizontal_fov <= 180, or beam_width 0 (no bearing point spread)")

    DERIVED_KEYS: ClassVar[tuple[str, ...]] = ("range_resolution",)

    @classmethod
    def derived_keys(cls, preset: dict[str, Any], given: dict[str, Any], where: str) -> dict[str, Any]:
        """``range_resolution`` (m) in a mapping or YAML file, in place of ``range_bins`` (issue 3: "range bins (or
        range resolution)"): range_bins = round((max_range - min_range) / range_resolution), the window's ends as
        given or from the preset or the defaults; the bins then span the window exactly, so the resolution is
        (max_range - min_range) / range_bins (the given one when it divides the window)."""
        if "range_resolution" not in given:
            return given
        out = dict(given)
        res = out.pop("range_resolution")
        if "range_bins" in out:
            raise ConfigError(f"{where}: give range_bins or range_resolution, not both")
        ends = {k: out.get(k, preset.get(k, getattr(cls, k))) for k in ("min_range", "max_range")}
        numbers = [res, *ends.values()]
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in numbers):
            raise ConfigError(f"{where}: range_resolution, min_range and max_range must be finite numbers (m), got "
                              f"{res!r}, {ends['min_range']!r}, {ends['max_range']!r}")
        span = float(ends["max_range"]) - float(ends["min_range"])
        if not (res > 0 and span > 0):
            raise ConfigError(f"{where}: range_resolution must be > 0 m inside a window max_range > min_range, got "
                              f"{res!r} m over [{ends['min_range']}, {ends['max_range']}] m")
        out["range_bins"] = max(1, int(round(span / float(res))))
        return out

    #: HoloOcean ImagingSonar configuration keys that only steer HoloOcean's octree or its viewer (no meaning for a
    #: ray-cast sonar): accepted and ignored by :meth:`from_holoocean`.
    HOLOOCEAN_IGNORED: ClassVar[tuple[str, ...]] = ("InitOctreeRange", "ViewRegion", "ViewOctree", "ShowWarning",
                                                     "ClusterSize", "ElevationBins", "ElevationRes", "TicksPerCapture",
                                                     "CaptureWidth", "CaptureHeight")

    @classmethod
    def from_holoocean(cls, configuration: dict[str, Any], **overrides: Any) -> "ImagingSonarConfig":
        """The peer model of a HoloOcean ``ImagingSonar`` sensor ``configuration`` (its JSON keys), on top of the
        ``holoocean_default`` preset, then ``overrides``.

        RangeBins -> range_bins, AzimuthBins -> n_beams, RangeMin / RangeMax -> min_range / max_range, Azimuth /
        Elevation -> horizontal_fov / vertical_fov (deg), AddSigma (or sqrt(AddCov)) -> additive_sigma, MultSigma
        (or sqrt(MultCov)) -> multiplicative_sigma, RangeRes / AzimuthRes (m / deg; where RangeBins / AzimuthBins
        are not given) -> range_bins = floor((RangeMax - RangeMin) / RangeRes) / n_beams = floor(Azimuth /
        AzimuthRes), as HoloOcean derives them, RangeSigma -> range_sigma, AzimuthStreaks -> azimuth_streaks,
        MultiPath -> multipath (HoloOcean's one-bounce multipath, the peer model's), ScaleNoise -> HoloOcean's scaling
        of the additive noise h = (r / r_max)^2 (1 + 0.5 exp(-a^2 / (Azimuth / 64))) with the azimuth a in degrees,
        i.e. additive_range_scaled with additive_beam_gain 0.5 and additive_beam_width sqrt(Azimuth / 64) deg.
        Keys in :attr:`HOLOOCEAN_IGNORED` steer HoloOcean's octree or viewer and are ignored; any other key is a
        ConfigError.
        """
        if not isinstance(configuration, dict):
            raise ConfigError(f"{_OWNER}.from_holoocean: configuration must be a dict of HoloOcean keys, got "
                              f"{type(configuration).__name__}")
        direct = {"RangeBins": "range_bins", "AzimuthBins": "n_beams", "RangeMin": "min_range",
                  "RangeMax": "max_range", "Azimuth": "horizontal_fov", "Elevation": "vertical_fov",
                  "AddSigma": "additive_sigma", "MultSigma": "multiplicative_sigma", "RangeSigma": "range_sigma",
                  "AzimuthStreaks": "azimuth_streaks", "MultiPath": "multipath"}
        values = dict(cls._preset_values("holoocean_default", f"{_OWNER}.from_holoocean"))
        for key, value in configuration.items():
            if key in direct:
                values[direct[key]] = value
            elif key in ("AddCov", "MultCov"):
                if not isinstance(value, (int, float)) or value < 0:
                    raise ConfigError(f"{_OWNER}.from_holoocean: {key} must be a number >= 0 (a variance), got "
                                      f"{value!r}")
                values["additive_sigma" if key == "AddCov" else "multiplicative_sigma"] = math.sqrt(value)
            elif key == "ScaleNoise":
                values["additive_range_scaled"] = bool(value)
            elif key in ("RangeRes", "AzimuthRes"):
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                    raise ConfigError(f"{_OWNER}.from_holoocean: {key} must be a number > 0 (a bin size, "
                                      f"{'m' if key == 'RangeRes' else 'degrees'}), got {value!r}")
            elif key not in cls.HOLOOCEAN_IGNORED:
                known = [*direct, "AddCov", "MultCov", "ScaleNoise", "RangeRes", "AzimuthRes", *cls.HOLOOCEAN_IGNORED]
                raise ConfigError(f"{_OWNER}.from_holoocean: unknown HoloOcean ImagingSonar key {key!r}; known: "
                                  f"{sorted(known)}")
        # HoloOcean derives a bin count from a bin size only where the count is not given: RangeBins =
        # (RangeMax - RangeMin) / RangeRes, AzimuthBins = Azimuth / AzimuthRes, truncated to integers
        spans = {"RangeRes": ("RangeBins", "range_bins", ("max_range", "min_range")),
                 "AzimuthRes": ("AzimuthBins", "n_beams", ("horizontal_fov", None))}
        for res_key, (bins_key, field, (top, bottom)) in spans.items():
            ends = [values[top], values[bottom] if bottom else 0.0]
            if res_key in configuration and not configuration.get(bins_key) and all(
                    isinstance(v, (int, float)) and math.isfinite(v) for v in ends):
                values[field] = int(math.floor((ends[0] - ends[1]) / float(configuration[res_key]) + 1e-9))
        if values.get("additive_range_scaled"):
            values["additive_beam_gain"] = 0.5
            values["additive_beam_width"] = math.sqrt(float(values["horizontal_fov"]) / 64.0)
        values.update(overrides)
        return cls.from_dict(values, source=f"{_OWNER}.from_holoocean")

    # -- derived geometry --------------------------------------------------------------------------------
    @property
    def normalisation_mode(self) -> str:
        """The normalisation a render applies: ``normalisation``, or when it is ``None`` the model's default ("row"
        for the peer model, "none" for the device model)."""
        if self.normalisation is not None:
            return self.normalisation
        return "none" if self.model == "device" else "row"

    @property
    def range_resolution(self) -> float:
        """Range bin size (m)."""
        return (self.max_range - self.min_range) / self.range_bins

    @property
    def rays_per_pose(self) -> int:
        return self.n_beams * self.rays_per_beam * self.elevation_rays

    MEMORY_FIX: ClassVar[str] = "lower rays_per_beam, elevation_rays, n_beams or range_bins"

    def memory_bytes(self, batch: int = 1) -> int:
        """Bytes an :class:`ImagingSonar` needs: its ray tables (64 B per bearing ray, 80 B per elevation ray,
        host temporaries included; with model "device" also every ray's jittered direction, 12 B per ray, stored
        when the sensor is built) plus, per pose, 12 + ``RayBuffers.BYTES_PER_RAY`` (48) B per ray of scratch (the
        ray's return, and its origin, direction and hit for the ray-cast backend) and 4 + 20 n_beams B per range
        bin (peak scratch and the result's four images)."""
        tables = 64 * self.n_beams * self.rays_per_beam + 80 * self.elevation_rays + 4 * (self.range_bins + self.n_beams)
        if self.model == "device":
            tables += 12 * self.rays_per_pose
        return tables + self.render_bytes(batch)

    def render_bytes(self, batch: int) -> int:
        """Device bytes of one render of ``batch`` poses (scratch and result; range noise adds a key per pose,
        azimuth streaks a flag per ray and a count per bin)."""
        extra = 4 if self.range_sigma > 0.0 else 0
        if self.multipath:  # HoloOcean multipath: per ray path, reflectivity, range left, value, cell, label
            extra += 24 * self.rays_per_pose
        if self.azimuth_streaks != 0:
            extra += 4 * (self.rays_per_pose + self.range_bins * self.n_beams)
        per_ray = 12 + RayBuffers.BYTES_PER_RAY + self.multipath_bytes_per_ray()
        return batch * (40 + per_ray * self.rays_per_pose + self.range_bins * (4 + 20 * self.n_beams) + extra)

    def ranges(self) -> np.ndarray:
        """Range-bin centres (m), nearest first."""
        return (self.min_range + (np.arange(self.range_bins) + 0.5) * self.range_resolution).astype(np.float32)

    def bearings(self) -> np.ndarray:
        """Beam centres (rad, positive to starboard), most-port beam first."""
        fov = math.radians(self.horizontal_fov)
        return (-0.5 * fov + (np.arange(self.n_beams) + 0.5) * fov / self.n_beams).astype(np.float32)

    def ray_bearings(self) -> np.ndarray:
        """Bearing of every bearing ray (rad): b_i = -Theta/2 + (i + 1/2) Theta / N_b."""
        fov = math.radians(self.horizontal_fov)
        n = self.n_beams * self.rays_per_beam
        return -0.5 * fov + (np.arange(n) + 0.5) * fov / n

    @property
    def elevation_fan(self) -> float:
        """Elevation extent of the ray fan (degrees): ``elevation_span``, or the vertical field of view."""
        return self.elevation_span if self.elevation_span > 0.0 else self.vertical_fov

    def ray_elevations(self) -> np.ndarray:
        """Elevation of every elevation ray (rad): e_k = -Phi/2 + (k + 1/2) Phi / N_e (Phi the elevation fan)."""
        fov = math.radians(self.elevation_fan)
        return -0.5 * fov + (np.arange(self.elevation_rays) + 0.5) * fov / self.elevation_rays

    def elevation_weights(self) -> np.ndarray:
        """Solid angle per ray times the elevation pattern, per elevation ray: cos e * db * de * g(e) (sr)."""
        e = self.ray_elevations()
        db = math.radians(self.horizontal_fov) / (self.n_beams * self.rays_per_beam)
        de = math.radians(self.elevation_fan) / self.elevation_rays
        w = np.cos(e) * db * de
        if self.elevation_pattern == "gaussian":
            w = w * np.exp(-math.log(2.0) * (2.0 * e / math.radians(self.vertical_fov)) ** 2)
        elif self.elevation_pattern == "array":
            w = w * LineArray(math.radians(self.vertical_fov), self.elevation_taper, self.sidelobe_level).amplitude(e) ** 4
        return w

    def fan_layout(self) -> FanLayout:
        """The ray fan as the device chain sees it (channels = beams)."""
        n_bearing = self.n_beams * self.rays_per_beam
        return FanLayout(bearings=self.ray_bearings(), bearing_cell=math.radians(self.horizontal_fov) / n_bearing,
                         elevations=self.ray_elevations(), elevation_weights=self.elevation_weights(),
                         elevation_cell=math.radians(self.elevation_fan) / self.elevation_rays, n_channels=self.n_beams,
                         channel_spacing=math.radians(self.horizontal_fov) / self.n_beams,
                         min_range=float(self.min_range), max_range=float(self.max_range), n_range=self.range_bins)


def _accept_range_resolution(init: Any) -> Any:
    """``ImagingSonarConfig(..., range_resolution=dr)``: the keyword form of :meth:`ImagingSonarConfig.derived_keys`
    (the bin size in metres in place of ``range_bins``), so the constructor takes what a mapping, a YAML file and
    ``--set`` take. ``range_resolution`` stays the read-only property it is on an instance."""

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, range_resolution: float | None = None, **kwargs: Any) -> None:
        if range_resolution is not None:
            kwargs = type(self).derived_keys({}, {**kwargs, "range_resolution": range_resolution}, _OWNER)
        init(self, *args, **kwargs)

    return __init__


ImagingSonarConfig.__init__ = _accept_range_resolution(ImagingSonarConfig.__init__)  # type: ignore[method-assign]


@dataclasses.dataclass
class ImagingSonarResult:
    """Images of a batch of B poses, as Warp arrays on the sensor's device.

    intensity: (B, n_range, n_beams) float32, normalised image with speckle and noise (>= 0). With model
        "device": detected intensity after TVG and gain, re 1 uPa^2 (sensors/acoustic/chain.py).
    clean_intensity: the same before noise (after normalisation; in sr when normalisation is "none"). With model
        "device": the expected (speckle- and noise-free) echo intensity, same unit.
    hit_count: (B, n_range, n_beams) int32, rays binned per cell.
    label_id: (B, n_range, n_beams) int32, index into ``label_names`` of the strongest return, -1 where empty.
    ranges: (n_range,) bin centres (m), row 0 nearest. bearings: (n_beams,) rad, +starboard, column 0 most port.
    """

    intensity: wp.array
    clean_intensity: wp.array
    hit_count: wp.array
    label_id: wp.array
    ranges: np.ndarray
    bearings: np.ndarray
    label_names: list[str]
    config: ImagingSonarConfig
    frame_index: int

    @property
    def batch_size(self) -> int:
        return int(self.intensity.shape[0])

    def numpy(self) -> dict[str, np.ndarray]:
        """Host copies: intensity, clean_intensity, hit_count, label_id, ranges, bearings."""
        return {"intensity": self.intensity.numpy(), "clean_intensity": self.clean_intensity.numpy(),
                "hit_count": self.hit_count.numpy(), "label_id": self.label_id.numpy(),
                "ranges": self.ranges.copy(), "bearings": self.bearings.copy()}

    def torch(self) -> dict[str, Any]:
        """Zero-copy torch tensors of the device arrays (``wp.to_torch``); needs PyTorch installed."""
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise OceanSimError("ImagingSonarResult.torch() needs PyTorch; install it (pip install torch) or "
                                "use .numpy()") from exc
        return {"intensity": wp.to_torch(self.intensity), "clean_intensity": wp.to_torch(self.clean_intensity),
                "hit_count": wp.to_torch(self.hit_count), "label_id": wp.to_torch(self.label_id)}

    def to_uint8(self, clean: bool = False) -> np.ndarray:
        """(B, n_range, n_beams) uint8 images: clip(255 * gain * z^gamma) with the config's gain and gamma, or with
        ``display = "db"`` the dB window [display_floor, display_floor + dynamic_range] then gamma."""
        return self._display((self.clean_intensity if clean else self.intensity).numpy())

    def to_rgb(self, clean: bool = False) -> np.ndarray:
        """(B, n_range, n_beams, 3) uint8: :meth:`to_uint8` through the config's colour map."""
        return apply_colormap(self.to_uint8(clean), self.config.colormap)

    def _display(self, values: np.ndarray) -> np.ndarray:
        c = self.config
        if c.display == "db":
            return db_window_to_uint8(values, c.display_floor, c.dynamic_range, c.gamma)
        return images.to_uint8(values, gain=c.gain, gamma=c.gamma)

    def to_cartesian(self, width: int = 512, clean: bool = False) -> np.ndarray:
        """(B, H, width) float32 fan images: sonar at the bottom centre, boresight up, starboard right."""
        values = (self.clean_intensity if clean else self.intensity).numpy()
        c = self.config
        return images.polar_to_cartesian(values, self.ranges, self.bearings, width, range_step=c.range_resolution,
                                         bearing_step=math.radians(c.horizontal_fov) / c.n_beams)

    def fan_uint8(self, width: int = 512, clean: bool = False) -> np.ndarray:
        """(B, H, width) uint8 fan images (:meth:`to_cartesian`) on the display scale of :meth:`to_uint8`."""
        return self._display(self.to_cartesian(width, clean))

    def save_png(self, path: str | Path, frame: int = 0, fan_width: int | None = None) -> Path:
        """Write frame ``frame`` as an 8-bit PNG: the polar image, or the fan image when ``fan_width`` is set."""
        if not 0 <= frame < self.batch_size:
            raise ConfigError(f"save_png: frame {frame} is outside the batch of {self.batch_size}")
        if fan_width is None:
            img = self.to_uint8()[frame]
        else:
            img = self._display(self.to_cartesian(fan_width)[frame])
        return images.save_png(path, img)


#: HoloOcean's azimuth streaks: a return is "perfect" within 8 degrees of the normal, and a row streaks when at
#: least 8 % of its returns are (ImagingSonar.cpp, ``perfectCos = DegCos(8)``, ``percToBand = 0.08``).
HOLOOCEAN_PERFECT_COS = math.cos(math.radians(8.0))
HOLOOCEAN_STREAK_FRACTION = 0.08


class _Buffers:
    """Device scratch for one batch size: the rays and their hits, per-ray returns (reused between renders)."""

    def __init__(self, config: ImagingSonarConfig, batch: int, device: wp.context.Device) -> None:
        n_rays = batch * config.rays_per_pose
        self.rays = RayBuffers(n_rays, device, float(config.max_range))
        self.ray_value = wp.empty(n_rays, dtype=wp.float32, device=device)
        self.ray_bin = wp.empty(n_rays, dtype=wp.int32, device=device)
        self.ray_label = wp.empty(n_rays, dtype=wp.int32, device=device)
        self.peak = wp.empty((batch, config.range_bins, config.n_beams), dtype=wp.float32, device=device)
        self.row_max = wp.empty((batch, config.range_bins), dtype=wp.float32, device=device)
        self.frame_max = wp.empty(batch, dtype=wp.float32, device=device)
        self.noise_keys = wp.empty((batch, 2), dtype=wp.int32, device=device)
        self.range_keys = wp.empty(batch if config.range_sigma > 0.0 else 0, dtype=wp.int32, device=device)
        streaks = config.azimuth_streaks != 0
        self.ray_perfect = wp.empty(n_rays if streaks else 0, dtype=wp.int32, device=device)
        self.perfect = wp.empty((batch, config.range_bins, config.n_beams) if streaks else (0, 0, 0), dtype=wp.int32,
                                device=device)
        n_mp = n_rays if config.multipath else 0
        self.mp_path, self.mp_amp, self.mp_remaining, self.mp_value = (
            wp.empty(n_mp, dtype=wp.float32, device=device) for _ in range(4))
        self.mp_cell, self.mp_label = (wp.empty(n_mp, dtype=wp.int32, device=device) for _ in range(2))

    @staticmethod
    def nbytes(config: ImagingSonarConfig, batch: int) -> int:
        return config.render_bytes(batch)


class ImagingSonar:
    """A forward-looking imaging sonar on ``device`` (``None``: cuda:0 if present, else cpu).

    ``sensor_id`` separates the noise of several sonars sharing a seed. Scratch buffers are kept for the
    last ``MAX_CACHED_BATCH_SIZES`` batch sizes rendered (e.g. a dataset's full batches and its last,
    shorter one) and reused by later renders of those sizes, per thread: one sonar may render from several
    threads at once.
    """

    MAX_CACHED_BATCH_SIZES = 2

    def __init__(self, config: ImagingSonarConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        self.config = config if config is not None else ImagingSonarConfig()
        if not isinstance(self.config, ImagingSonarConfig):
            raise ConfigError(f"ImagingSonar: config must be an ImagingSonarConfig, got {type(config).__name__}")
        self.device = resolve_device(device)
        self.sensor_id = int(sensor_id)
        c = self.config
        check_config_memory(c, 0, self.device, "ImagingSonar")
        b = c.ray_bearings()
        e = c.ray_elevations()
        self._bearing_cs = wp.array(np.stack([np.cos(b), np.sin(b)], axis=1).astype(np.float32), dtype=wp.vec2,
                                    device=self.device)
        self._elev_table = wp.array(np.stack([np.cos(e), np.sin(e), c.elevation_weights()], axis=1)
                                    .astype(np.float32), dtype=wp.vec3, device=self.device)
        self._buffers: ScratchCache[_Buffers] = ScratchCache(self.MAX_CACHED_BATCH_SIZES)
        self._poses = PoseUploads(self.device, self.MAX_CACHED_BATCH_SIZES)
        self._ranges = c.ranges()
        self._bearings = c.bearings()
        self._chain = (DeviceChain(c.device_settings(c.absorption, c.normalisation_mode, c.seed), c.fan_layout(),
                                   self.device, self.sensor_id, c.raycast_backend) if c.model == "device" else None)

    def memory_bytes(self, batch: int) -> int:
        """Device bytes a render of ``batch`` poses needs (scratch and result)."""
        if self._chain is not None:
            return self._chain.memory_bytes(batch) + 16 * batch * self.config.range_bins * self.config.n_beams
        return _Buffers.nbytes(self.config, batch)

    def _buffers_for(self, batch: int) -> _Buffers:
        buf = self._buffers.get(batch)
        if buf is None:
            n = batch * max(self.config.rays_per_pose, self.config.range_bins * self.config.n_beams)
            if n >= 2**31:
                fix = ("render fewer poses at once" if batch > 1
                       else "lower rays_per_beam, elevation_rays, n_beams or range_bins")
                raise ConfigError(f"imaging sonar render of {batch} pose(s) would index {n} rays or bins, past "
                                  f"the 2^31 limit of a launch; {fix}")
            check_memory(self.memory_bytes(batch), self.device, f"imaging sonar render of {batch} pose(s) "
                         f"({self.config.rays_per_pose} rays each)",
                         "lower rays_per_beam, elevation_rays, n_beams or range_bins, or render fewer poses at once")
            buf = self._buffers.put(batch, _Buffers(self.config, batch, self.device))
        return buf

    def render(self, scene: Any, poses: Any, frame_index: int = 0,
               out: ImagingSonarResult | None = None) -> ImagingSonarResult:
        """Render B sonar images.

        Args:
            scene: a :class:`~oceansim_py.scene.Scene` on this sensor's device.
            poses: sensor poses in the world, (7,), (B, 7) ``[px, py, pz, qx, qy, qz, qw]`` or a Trajectory.
            frame_index: frame number of pose 0 (pose b is frame ``frame_index + b``; keys the noise).
            out: a result of a previous call with the same batch size to write into (its arrays are reused);
                by default new result arrays are allocated.
        """
        c = self.config
        p = check_render_call("ImagingSonar", scene, self.device, poses, frame_index)
        check_out_type("ImagingSonar", out, ImagingSonarResult)
        batch = p.shape[0]
        if self._chain is not None:
            return self._render_device(scene, p, int(frame_index), out)
        buf = self._buffers_for(batch)
        shape = (batch, c.range_bins, c.n_beams)
        if out is None:
            dev = self.device
            out = ImagingSonarResult(wp.empty(shape, dtype=wp.float32, device=dev),
                                     wp.empty(shape, dtype=wp.float32, device=dev),
                                     wp.empty(shape, dtype=wp.int32, device=dev),
                                     wp.empty(shape, dtype=wp.int32, device=dev),
                                     self._ranges, self._bearings, list(scene.labels), c, int(frame_index))
        else:
            if tuple(out.intensity.shape) != shape or out.config != c:
                raise ConfigError(f"ImagingSonar.render: out holds images of shape {tuple(out.intensity.shape)} "
                                  f"from another config; pass a result of this sensor with a batch of {batch}")
            out.label_names = list(scene.labels)
            out.frame_index = int(frame_index)
        pose_array = self._poses.upload(p)
        g = scene.geometry
        dev = self.device
        dr = float(c.range_resolution)
        if c.range_sigma > 0.0:
            launch_1d(kc.frame_keys_kernel, batch, [int(c.seed), int(frame_index), self.sensor_id,
                                                    int(k.STREAM_RANGE), buf.range_keys], dev, min_chunk=batch)
        streaks = c.azimuth_streaks != 0
        n_rays = batch * c.rays_per_pose
        rays = buf.rays
        launch_1d(k.sonar_ray_gen_kernel, n_rays,
                  [pose_array, self._bearing_cs, self._elev_table, c.elevation_rays, c.rays_per_pose, rays.origins,
                   rays.directions], dev)
        rays.cast(scene, c.raycast_backend)
        launch_1d(k.sonar_ray_return_kernel, n_rays,
                  [rays.directions, *rays.hit_args(), g.object_reflectivity, g.object_label, self._elev_table,
                   c.elevation_rays, c.rays_per_pose, float(c.min_range), dr, c.range_bins, float(c.absorption),
                   int(c.spreading), float(c.range_sigma), buf.range_keys, HOLOOCEAN_PERFECT_COS if streaks else 0.0,
                   buf.ray_perfect, buf.ray_value, buf.ray_bin, buf.ray_label], dev)
        out.clean_intensity.zero_()
        out.hit_count.zero_()
        out.label_id.fill_(-1)
        launch_1d(k.sonar_bin_kernel, batch * c.n_beams,
                  [buf.ray_value, buf.ray_bin, buf.ray_label, c.rays_per_beam * c.elevation_rays, c.rays_per_pose,
                   c.n_beams, out.clean_intensity, out.hit_count, out.label_id, buf.peak], dev, min_chunk=1)
        if c.multipath:
            self._holoocean_multipath(scene, pose_array, buf, batch, out)
        n_bins = batch * c.range_bins * c.n_beams
        if c.aggregation == "mean":
            launch_1d(k.sonar_mean_kernel, n_bins, [out.clean_intensity, out.hit_count, c.n_beams, c.range_bins],
                      dev)
        mode = {"none": k.NORMALISE_NONE, "row": k.NORMALISE_ROW, "global": k.NORMALISE_GLOBAL}[c.normalisation_mode]
        if mode != k.NORMALISE_NONE:
            launch_1d(k.sonar_row_max_kernel, batch * c.range_bins,
                      [out.clean_intensity, c.n_beams, c.range_bins, buf.row_max], dev, min_chunk=64)
        if mode == k.NORMALISE_GLOBAL:
            launch_1d(k.sonar_frame_max_kernel, batch, [buf.row_max, c.range_bins, buf.frame_max], dev, min_chunk=1)
        launch_1d(k.sonar_noise_keys_kernel, batch, [int(c.seed), int(frame_index), self.sensor_id, buf.noise_keys],
                  dev, min_chunk=batch)
        launch_1d(k.sonar_finish_kernel, n_bins,
                  [out.clean_intensity, buf.row_max, buf.frame_max, mode, c.n_beams, c.range_bins,
                   float(c.min_range), dr, float(c.max_range), math.radians(c.horizontal_fov),
                   float(c.multiplicative_sigma), float(c.additive_sigma), int(c.additive_range_scaled),
                   float(c.additive_beam_gain), math.radians(c.additive_beam_width), buf.noise_keys,
                   out.intensity], dev)
        if streaks:
            buf.perfect.zero_()
            launch_1d(k.sonar_perfect_count_kernel, batch * c.n_beams,
                      [buf.ray_perfect, buf.ray_bin, c.rays_per_beam * c.elevation_rays, c.rays_per_pose, c.n_beams,
                       buf.perfect], dev, min_chunk=1)
            launch_1d(k.sonar_streaks_kernel, batch * c.range_bins,
                      [out.intensity, buf.perfect, out.hit_count, c.n_beams, c.range_bins, HOLOOCEAN_STREAK_FRACTION,
                       int(c.azimuth_streaks)], dev, min_chunk=16)
        return out

    def _holoocean_multipath(self, scene: Any, poses: wp.array, buf: _Buffers, batch: int,
                             out: ImagingSonarResult) -> None:
        """HoloOcean's MultiPath (``multipath``; kernels/multipath.py): the primary hits reflected once, cast again,
        and each second hit in view added at its bearing and HoloOcean's range."""
        c = self.config
        g = scene.geometry
        dev = self.device
        n_rays = batch * c.rays_per_pose
        rays = buf.rays
        launch_1d(km.holoocean_bounce_kernel, n_rays,
                  [rays.origins, rays.directions, *rays.hit_args(), g.object_reflectivity, float(c.max_range),
                   buf.mp_path, buf.mp_amp, buf.mp_remaining], dev)
        rays.cast(scene, c.raycast_backend, buf.mp_remaining)
        launch_1d(km.holoocean_multipath_return_kernel, n_rays,
                  [rays.origins, rays.directions, *rays.hit_args(), g.object_reflectivity, g.object_label, poses,
                   self._elev_table, c.elevation_rays, c.rays_per_pose, buf.mp_path, buf.mp_amp,
                   math.radians(c.horizontal_fov), math.radians(c.vertical_fov), c.n_beams, float(c.min_range),
                   float(c.range_resolution), c.range_bins, float(c.absorption), int(c.spreading),
                   float(c.range_sigma), buf.range_keys, buf.mp_value, buf.mp_cell, buf.mp_label], dev)
        launch_1d(km.holoocean_multipath_bin_kernel, batch,
                  [buf.mp_value, buf.mp_cell, buf.mp_label, c.rays_per_pose, c.n_beams, out.clean_intensity,
                   out.hit_count, out.label_id, buf.peak], dev, min_chunk=1)

    def _render_device(self, scene: Any, poses: np.ndarray, frame_index: int,
                       out: ImagingSonarResult | None) -> ImagingSonarResult:
        """``model = "device"``: render through the acoustic device chain (sensors/acoustic/chain.py)."""
        c = self.config
        batch = poses.shape[0]
        shape = (batch, c.range_bins, c.n_beams)
        if out is None:
            # new result arrays (the chain checks its own scratch when it allocates it): reading the free memory
            # costs more than a small frame's launches, so a render into ``out`` skips it
            check_memory(self.memory_bytes(batch), self.device, f"imaging sonar render of {batch} pose(s) "
                         f"({c.rays_per_pose} rays each)",
                         "lower rays_per_beam, elevation_rays, n_beams or range_bins, or render fewer poses at once")
            out = ImagingSonarResult(wp.empty(shape, dtype=wp.float32, device=self.device), wp.empty(shape, dtype=wp.float32, device=self.device),
                                     wp.empty(shape, dtype=wp.int32, device=self.device), wp.empty(shape, dtype=wp.int32, device=self.device),
                                     self._ranges, self._bearings, list(scene.labels), c, frame_index)
        elif tuple(out.intensity.shape) != shape or out.config != c:
            raise ConfigError(f"ImagingSonar.render: out holds images of shape {tuple(out.intensity.shape)} "
                              f"from another config; pass a result of this sensor with a batch of {batch}")
        out.label_names = list(scene.labels)
        out.frame_index = frame_index
        self._chain.render(scene, poses, frame_index, out.intensity, out.clean_intensity, out.hit_count,
                           out.label_id)
        return out


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_DISPLAY = "8-bit display view (uint8 0..255), not a measurement"
_IMAGE = ("range_bins", "n_beams")


def _cli_write(o: _reg.CliOutput) -> list[str]:
    """``oceansim-py render sonar``: ``sonar_polar.png`` (rows = range, nearest at the top; columns = beams,
    port on the left), ``sonar_fan.png`` (the Cartesian fan, sonar at the bottom centre, starboard right),
    ``sonar.npy`` ((n_range, n_beams) float32 intensity), ``sonar_ranges.npy`` and ``sonar_bearings.npy``."""
    c, out, data = o.config, o.out, o.data
    o.result.save_png(out / "sonar_polar.png")
    o.result.save_png(out / "sonar_fan.png", fan_width=o.args.fan_width)
    images.save_npy(out / "sonar.npy", data["intensity"][0])
    images.save_npy(out / "sonar_ranges.npy", data["ranges"])
    images.save_npy(out / "sonar_bearings.npy", data["bearings"])
    hits = int(data["hit_count"][0].sum())
    _reg.warn_if_blind("imaging sonar", float(hits > 0), o, c.max_range)
    return [f"rendered {c.range_bins} x {c.n_beams} sonar image ({c.rays_per_pose} rays, {hits} binned) of "
            f"{o.scene.source} in {o.seconds:.3f} s (first call: includes kernel loading)",
            f"wrote {out / 'sonar_polar.png'}, {out / 'sonar_fan.png'}, {out / 'sonar.npy'}"]


SENSOR_KIND = _reg.SensorKind(
    name="imaging_sonar", aliases=("sonar",),
    description="forward-looking imaging sonar: range x beam intensity images",
    config_class=ImagingSonarConfig, sensor_class=ImagingSonar,
    schema=(
        _reg.Product("intensity", _reg.ARRAY, "float32", "model 'peer': linear echo intensity, normalised by the "
                     "config's normalisation (row: each range row's maximum = 1; none: sr), with speckle and noise; "
                     + DEVICE_INTENSITY_UNIT, _IMAGE),
        _reg.Product("clean_intensity", _reg.ARRAY, "float32",
                     "linear echo intensity before noise, same normalisation as intensity; "
                     + DEVICE_CLEAN_UNIT, _IMAGE),
        _reg.Product("hit_count", _reg.ARRAY, "int32", "count of rays binned per cell", _IMAGE),
        _reg.Product("label_id", _reg.ARRAY, "int32",
                     "index into the scene's labels of the strongest return (-1 empty)", _IMAGE),
        _reg.Product("polar_png", _reg.IMAGE, "uint8", _DISPLAY, _IMAGE,
                     view=lambda result, config: result.to_uint8()),
        _reg.Product("fan_png", _reg.IMAGE, "uint8", _DISPLAY, ("*", 512),
                     view=lambda result, config: result.fan_uint8(512)),
    ),
    default_products=("intensity", "polar_png", "fan_png"),
    metadata=lambda c: {"ranges_m": c.ranges().tolist(), "bearings_rad": c.bearings().tolist(),
                        "image_layout": "(n_range, n_beams): row 0 nearest range, column 0 most-port beam"},
    cli=_reg.CliTarget(
        name="sonar", help="forward-looking imaging sonar: polar PNG, fan PNG and raw .npy",
        default_preset="holoocean_paper",        # 1-50 m: reaches every built-in scene's subject
        framing="imaging_sonar", reach=lambda c: (c.max_range, c.horizontal_fov),
        options=(_reg.CliOption(("--fan-width",), {"type": _reg.cli_number(int, 2, MAX_FAN_WIDTH, "pixels"),
                                                   "default": 800,
                                                   "help": "width of the fan image in pixels (default 800)"}),),
        write=_cli_write),
)
