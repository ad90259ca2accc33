"""Underwater RGB camera: pinhole rays cast through the scene's ray-cast backend, Lambertian in-air shading, the
image formation model of docs/PHYSICS.md §4 in linear space, the sea surface (§4.2), sRGB encoding at the end.

Frames: the pose is the camera's sensor frame (FLU: x = optical axis, y left, z up) in the world (Z up, m).
Image row 0 is the top, column 0 the left; image right is -y, image down is -z. Vehicle lights are given in the
sensor frame. The math lives in :mod:`oceansim_py.kernels.camera`; see its docstring for the formulas.

Radiometric units are relative: a white Lambertian surface under unit irradiance has in-air radiance J = 1
(the 1/pi of a Lambertian BRDF is folded into the units), and ``exposure`` maps linear values to the sRGB
encoder's [0, 1] input. The sun is a directional light from above whose irradiance (given just below the
surface, on a plane facing it) is dimmed with the hit point's depth by ``exp(-K_d depth)``; ambient is a
constant irradiance floor (not dimmed). With ``shadows`` on, a shadow ray is cast towards the sun (up to
the sea surface along the sun direction) and towards each light. The veiling light B_inf of the water type is
given for unit illumination; with ``veiling_scales_with_light`` it is multiplied by the illumination at the
camera (ambient + sun irradiance dimmed by K_d over the camera's depth), per pose (Akkaynak & Treibitz
2018: B_inf = b E / c).

Sea surface (docs/PHYSICS.md §4.2): with ``surface_optics`` ``auto`` (default) the camera sees the scene's moving
sea surface when it has one (``load_scene(..., sea_state=...)``), with ``always`` also the flat plane ``z =
surface_z``; ``never`` (and ``auto`` on a scene with the flat surface: the bytes rendered before) fills the world with
water. From below, a ray reaching the surface is split by Fresnel: the sky (``sky_zenith``, ``sky_horizon``)
refracted by Snell's law inside the 48.6 deg window, and the mirror ray, cast again through the backend (one
bounce), beyond it (total internal reflection) and, Fresnel-weighted, inside it; from above, the reflected sky
and the refracted ray into the water (cast, attenuated, with the backscatter). A camera above the surface sees
objects in the air without attenuation and the sky where it hits nothing. ``range``/``depth``/``normal`` of a pixel
that sees the surface are the surface's; ``label``/``instance`` the sea-surface node's, or -1 for the flat plane.

Camera realism (each off by default, so an existing config renders the same bytes; the fields appear in
``to_dict()``, and so in a dataset manifest, only when set):

- textures: a material's diffuse texture (scene/textures.py) replaces its flat albedo where the mesh has UVs;
- lens distortion: ``distortion = (k1, k2, p1, p2, k3)``, OpenCV's Brown-Conrady coefficients with the camera's
  ``camera_matrix()``; each pixel's ray is the undistorted pixel (sensors/lens.py);
- vignetting: ``vignetting_cos4`` (the cos^4 law) and ``vignetting_polynomial`` (a1, a2, a3) on the radius
  normalised by the half diagonal (sensors/lens.py); it darkens ``rgb`` (and ``raw``), not ``linear``;
- exposure and motion blur: ``exposure_time`` (s) centred on the sample's time, integrated with
  ``motion_blur_samples`` camera poses at the centres of equal sub-intervals, taken from the sensor's trajectory
  (``Batch.trajectory`` in a dataset; ``render(..., exposure_poses=)`` directly). ``linear``/``in_air`` are the
  mean over the sub-samples, the geometry products (range, depth, label, instance, normal) are those of the
  sub-sample at mid-exposure (sample ``motion_blur_samples // 2``). Only the camera moves within an exposure:
  animated scene nodes stay where the scene's time puts them;
- sensor noise, ``noise: true``: a photon-transfer model (EMVA 1288). Mean signal electrons per pixel and channel
  ``mu_e = QE * photons_per_unit * exposure * I_c * V`` (``photons_per_unit``: photons collected for
  ``exposure * I = 1``; default ``full_well / QE``, so that ``exposure * I = 1`` just fills the well, as the
  noiseless image maps it to white), plus dark current ``dark_current * exposure_time``; shot noise Poisson
  (exact below 64 e-, its Gaussian approximation above), clipped at ``full_well``; read noise Gaussian
  ``read_noise`` e- rms; ``DN = round(e / gain)`` clamped to ``[0, 2^bit_depth - 1]`` (``gain`` e-/DN, default
  ``full_well / (2^bit_depth - 1)``). The variance of a flat field in DN is ``mu_DN / gain + read_noise^2 /
  gain^2 + 1/12``: the photon transfer curve has slope ``1 / gain``. The ``raw`` product holds the DN
  (uint16) and ``rgb`` is ``encode(DN / (2^bit_depth - 1))``. Draws are counter-based: a function of (``seed``,
  frame index, sensor id, pixel, channel), so batches and shards give the same bytes.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError, OceanSimError
from oceansim_py.io import images
from oceansim_py.io.atomic import atomic_write_text, cannot_write
from oceansim_py.io.config import ConfigBase, require, require_finite, require_non_negative, require_positive
from oceansim_py.kernels import camera as k
from oceansim_py.runtime import check_memory, launch_1d, resolve_device
from oceansim_py.sensors import lens
from oceansim_py.sensors.backend_field import RaycastBackendField
from oceansim_py.sensors.batching import PoseUploads, check_out_type, check_render_call
from oceansim_py.sensors.rays import RayBuffers
from oceansim_py.sensors.scratch import ScratchCache
from oceansim_py.sensors.water import WaterType

RGB = tuple[float, float, float]
Vec3 = tuple[float, float, float]

#: ``surface_optics`` values: see :class:`UnderwaterCameraConfig`.
SURFACE_OPTICS = ("auto", "always", "never")

#: Device bytes per pixel of a result: rgb 3 + in_air 12 + linear 12 + range 4 + depth 4 + label 4 +
#: instance 4 + normal 12.
BYTES_PER_PIXEL = 55


def _require_rgb(value: Any, owner: str, field: str, unit: str = "") -> None:
    require(isinstance(value, tuple) and len(value) == 3, owner, field,
            f"must be three values (R, G, B), got {value!r}")
    for c, v in zip("RGB", value):
        require_non_negative(v, owner, f"{field}[{c}]", unit)


def _require_vec3(value: Any, owner: str, field: str) -> None:
    require(isinstance(value, tuple) and len(value) == 3, owner, field,
            f"must be three values (x, y, z), got {value!r}")
    for c, v in zip("xyz", value):
        require_finite(v, owner, f"{field}[{c}]")


@dataclasses.dataclass(frozen=True)
class VehicleLight(ConfigBase):
    """A spot light on the vehicle, in the camera's sensor frame (FLU, metres).

    position: light position (m). direction: beam axis (normalised here). half_angle: cone half angle (deg,
    (0, 180]); the beam fades to zero over the last ``edge`` degrees inside it (smoothstep; 0 = hard edge).
    intensity: RGB radiant intensity in relative units: the irradiance it gives 1 m away on its axis, before
    water attenuation exp(-beta^D d) along its path.
    """

    position: Vec3 = (0.0, 0.0, 0.0)
    direction: Vec3 = (1.0, 0.0, 0.0)
    half_angle: float = 45.0
    edge: float = 10.0
    intensity: RGB = (1.0, 1.0, 1.0)

    def validate(self) -> None:
        owner = "VehicleLight"
        _require_vec3(self.position, owner, "position")
        _require_vec3(self.direction, owner, "direction")
        require(math.hypot(*self.direction) > 0, owner, "direction", "must be a non-zero vector")
        require_finite(self.half_angle, owner, "half_angle")
        require(0 < self.half_angle <= 180, owner, "half_angle", f"must be in (0, 180] degrees, got "
                f"{self.half_angle!r}")
        require_non_negative(self.edge, owner, "edge", "degrees")
        require(self.edge <= self.half_angle, owner, "edge", f"must not exceed half_angle ({self.half_angle}), "
                f"got {self.edge!r}")
        _require_rgb(self.intensity, owner, "intensity")

    def cone_cosines(self) -> tuple[float, float]:
        """(cos of the outer half angle, cos of the inner, fully lit half angle)."""
        return (math.cos(math.radians(self.half_angle)),
                math.cos(math.radians(self.half_angle - self.edge)))


@dataclasses.dataclass(frozen=True)
class UnderwaterCameraConfig(RaycastBackendField, ConfigBase):
    """Pinhole underwater camera (see the module docstring for frames and units).

    Intrinsics: ``width`` x ``height`` pixels; ``horizontal_fov`` (deg, (0, 180)) sets ``fx`` when ``fx`` is
    None; ``fy`` defaults to ``fx`` (square pixels); ``cx``/``cy`` (pixels, OpenCV image coordinates: the centre
    of pixel (row, col) is (u, v) = (col, row)) default to the image centre ((width - 1) / 2, (height - 1) / 2),
    so an OpenCV calibration's K can be used as it is.
    ``max_range`` (m): rays that hit nothing nearer see the veiling light.
    Lighting: ``ambient`` RGB irradiance; ``sun`` on/off with ``sun_irradiance`` (RGB, just below the surface)
    from ``sun_zenith`` (deg from straight above, [0, 90)) and ``sun_azimuth`` (deg, counter-clockwise from
    world +x); ``lights`` (vehicle spot lights); ``shadows`` (shadow rays to the sun and lights).
    Water: ``water`` preset name (see ``WaterType.preset_names()``, default ``jerlov_IB``, clear oceanic); any of the
    ``water_*`` fields (RGB, None = the preset's) replaces that coefficient of the preset (custom water):
    ``water_attenuation`` (beta^D, wideband beam attenuation of the direct signal, 1/m), ``water_backscatter``
    (beta^B, coefficient of the backscatter curve, 1/m), ``water_veiling_light`` (B^inf, linear, in the units of
    the in-air radiance) and ``water_diffuse_attenuation`` (K_d, dims the sun with depth, 1/m); see
    :class:`~oceansim_py.sensors.water.WaterType`. ``veiling_scales_with_light``:
    see the module docstring. ``exposure``: linear gain applied before sRGB encoding.
    Realism (module docstring; all off by default): ``distortion`` (k1, k2, p1, p2, k3); ``vignetting_cos4``,
    ``vignetting_polynomial`` (a1, a2, a3); ``exposure_time`` (s, >= 0) and ``motion_blur_samples`` (>= 1);
    ``noise`` with ``quantum_efficiency`` (0, 1], ``photons_per_unit`` (photons, None = full_well / QE),
    ``full_well`` (e-), ``read_noise`` (e- rms), ``dark_current`` (e-/s), ``gain`` (e-/DN, None = full_well /
    (2^bit_depth - 1)), ``bit_depth`` (1..16) and ``seed`` (the run seed of the noise).
    Sea surface (module docstring): ``surface_optics`` ``"auto"`` (the scene's moving sea surface when it has one,
    else none: the flat surface is only the depth reference of the light), ``"always"`` (also the flat plane
    ``z = surface_z``), ``"never"`` (none: a sea-surface mesh is shaded like any object); ``sky_zenith`` /
    ``sky_horizon`` RGB sky radiance straight up and at the horizon (linear in between in the direction's z;
    relative units: a uniform sky of radiance L gives irradiance L on a horizontal plane, like
    ``sun_irradiance``); ``water_refractive_index`` (n, [1, 2]).
    """

    width: int = 640
    height: int = 480
    horizontal_fov: float = 90.0
    fx: float | None = None
    fy: float | None = None
    cx: float | None = None
    cy: float | None = None
    max_range: float = 100.0
    ambient: RGB = (0.1, 0.1, 0.1)
    sun: bool = True
    sun_irradiance: RGB = (1.0, 1.0, 1.0)
    sun_zenith: float = 20.0
    sun_azimuth: float = 0.0
    lights: tuple[VehicleLight, ...] = ()
    shadows: bool = True
    water: str = "jerlov_IB"
    water_attenuation: RGB | None = None
    water_backscatter: RGB | None = None
    water_veiling_light: RGB | None = None
    water_diffuse_attenuation: RGB | None = None
    veiling_scales_with_light: bool = True
    exposure: float = 1.0
    distortion: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    vignetting_cos4: bool = False
    vignetting_polynomial: tuple[float, float, float] = (0.0, 0.0, 0.0)
    exposure_time: float = 0.0
    motion_blur_samples: int = 1
    noise: bool = False
    quantum_efficiency: float = 0.7
    photons_per_unit: float | None = None
    full_well: float = 10000.0
    read_noise: float = 2.0
    dark_current: float = 0.0
    gain: float | None = None
    bit_depth: int = 12
    seed: int = 0
    sky_zenith: RGB = (0.25, 0.40, 0.65)
    sky_horizon: RGB = (0.55, 0.65, 0.80)
    water_refractive_index: float = 1.333
    surface_optics: str = "auto"

    #: the realism and sea-surface fields: left out of ``to_dict()`` at their defaults (``seed`` also while ``noise``
    #: is off), so configs and manifests without them keep their bytes
    REALISM_FIELDS: ClassVar[tuple[str, ...]] = (
        "distortion", "vignetting_cos4", "vignetting_polynomial", "exposure_time", "motion_blur_samples", "noise",
        "quantum_efficiency", "photons_per_unit", "full_well", "read_noise", "dark_current", "gain", "bit_depth",
        "seed", "sky_zenith", "sky_horizon", "water_refractive_index", "surface_optics")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "clear_ocean_sunlit": {"water": "jerlov_IB", "sun": True, "lights": []},
        "coastal_with_lights": {
            "water": "jerlov_3C", "sun": True, "sun_irradiance": [0.3, 0.3, 0.3], "ambient": [0.02, 0.02, 0.02],
            "lights": [
                {"position": [0.0, 0.3, 0.0], "direction": [1.0, 0.0, 0.0], "half_angle": 40.0,
                 "edge": 15.0, "intensity": [4.0, 4.0, 4.0]},
                {"position": [0.0, -0.3, 0.0], "direction": [1.0, 0.0, 0.0], "half_angle": 40.0,
                 "edge": 15.0, "intensity": [4.0, 4.0, 4.0]},
            ]},
        "night_with_lights": {
            "water": "jerlov_II", "sun": False, "ambient": [0.0, 0.0, 0.0], "veiling_scales_with_light": False,
            "water_veiling_light": [0.0, 0.01, 0.015], "sky_zenith": [0.0, 0.0, 0.0], "sky_horizon": [0.0, 0.0, 0.0],
            "lights": [{"position": [0.0, 0.0, 0.2], "direction": [1.0, 0.0, -0.2], "half_angle": 50.0,
                        "edge": 20.0, "intensity": [6.0, 6.0, 6.0]}]},
        # GoPro-class action camera (HERO8/9 "linear" mode, 1/2.3" sensor, 1.55 um pixels) in a flat-port dive
        # housing, 1080p30. Estimates, stated: HFOV in air ~86 deg ("linear"), /1.33 by the flat port
        # underwater (tan(hfov_water / 2) = tan(hfov_air / 2) / 1.333) ~ 68 deg; the flat port's pincushion
        # partly offsets the residual barrel of the dewarped lens: k1 = -0.08, k2 = 0.02 (estimate); cos^4
        # falloff; small-pixel CMOS: full well ~4500 e-, read noise ~2.5 e-, QE ~0.6 (typical published values
        # of 1.5 um BSI sensors), 10-bit output; 1/60 s shutter, 5 blur sub-samples.
        "gopro_flat_port": {
            "width": 1920, "height": 1080, "horizontal_fov": 68.0, "distortion": [-0.08, 0.02, 0.0, 0.0, 0.0],
            "vignetting_cos4": True, "exposure_time": 1.0 / 60.0, "motion_blur_samples": 5, "noise": True,
            "quantum_efficiency": 0.6, "full_well": 4500.0, "read_noise": 2.5, "dark_current": 5.0,
            "bit_depth": 10},
        # FLIR Blackfly S BFS-U3-31S4C (Sony IMX265, 2048 x 1536, 3.45 um pixels, 12-bit ADC) with a 4 mm lens
        # in a flat-port housing. Sensor: FLIR's EMVA 1288 data for the IMX265 Blackfly S: QE ~0.65 (525 nm),
        # temporal dark noise ~2.2 e-, saturation capacity ~10,400 e- (values rounded); dark current ~3 e-/s
        # (estimate). Lens: 7.07 mm sensor width, f = 4 mm: HFOV 83 deg in air, 67 deg behind a flat port;
        # k1 = 0.05 (the flat port's pincushion, estimate); vignetting a1 = -0.25 (estimate of an f/2.8 C-mount
        # lens at full aperture); 5 ms exposure, 3 blur sub-samples.
        "blackfly_s_machine_vision": {
            "width": 2048, "height": 1536, "horizontal_fov": 67.0, "distortion": [0.05, 0.0, 0.0, 0.0, 0.0],
            "vignetting_polynomial": [-0.25, 0.0, 0.0], "exposure_time": 0.005, "motion_blur_samples": 3,
            "noise": True, "quantum_efficiency": 0.65, "full_well": 10400.0, "read_noise": 2.2,
            "dark_current": 3.0, "bit_depth": 12},
    }

    def __post_init__(self) -> None:
        lights = []
        for i, light in enumerate(self.lights):
            if isinstance(light, VehicleLight):
                lights.append(light)
            elif isinstance(light, dict):
                lights.append(VehicleLight.from_dict(light, source=f"UnderwaterCameraConfig.lights[{i}]"))
            else:
                raise ConfigError(f"UnderwaterCameraConfig.lights[{i}]: expected a VehicleLight or a mapping of "
                                  f"its fields, got {type(light).__name__}")
        object.__setattr__(self, "lights", tuple(lights))
        super().__post_init__()

    def validate(self) -> None:
        owner = "UnderwaterCameraConfig"
        self.validate_raycast_backend()
        for name in ("width", "height"):
            v = getattr(self, name)
            require(isinstance(v, int) and v >= 1, owner, name, f"must be an integer >= 1 pixel, got {v!r}")
        require_finite(self.horizontal_fov, owner, "horizontal_fov")
        require(0 < self.horizontal_fov < 180, owner, "horizontal_fov",
                f"must be in (0, 180) degrees, got {self.horizontal_fov!r}")
        for name in ("fx", "fy"):
            v = getattr(self, name)
            if v is not None:
                require_positive(v, owner, name, "pixels")
        for name in ("cx", "cy"):
            v = getattr(self, name)
            if v is not None:
                require_finite(v, owner, name)
        require_positive(self.max_range, owner, "max_range", "m")
        _require_rgb(self.ambient, owner, "ambient")
        _require_rgb(self.sun_irradiance, owner, "sun_irradiance")
        require_finite(self.sun_zenith, owner, "sun_zenith")
        require(0 <= self.sun_zenith < 90, owner, "sun_zenith",
                f"must be in [0, 90) degrees (the sun is above), got {self.sun_zenith!r}")
        require_finite(self.sun_azimuth, owner, "sun_azimuth")
        require(self.water in WaterType.PRESETS, owner, "water",
                f"unknown water preset {self.water!r}; choose one of {WaterType.preset_names()} and override "
                f"water_attenuation / water_backscatter / water_veiling_light / water_diffuse_attenuation for "
                f"custom water")
        for name in ("water_attenuation", "water_backscatter", "water_veiling_light", "water_diffuse_attenuation"):
            v = getattr(self, name)
            if v is not None:
                _require_rgb(v, owner, name)
        require_positive(self.exposure, owner, "exposure")
        _require_rgb(self.sky_zenith, owner, "sky_zenith")
        _require_rgb(self.sky_horizon, owner, "sky_horizon")
        require_finite(self.water_refractive_index, owner, "water_refractive_index")
        require(1.0 <= self.water_refractive_index <= 2.0, owner, "water_refractive_index",
                f"must be in [1, 2] (sea water: about 1.333-1.345), got {self.water_refractive_index!r}")
        require(self.surface_optics in SURFACE_OPTICS, owner, "surface_optics",
                f"must be one of {', '.join(SURFACE_OPTICS)}, got {self.surface_optics!r}")
        self._validate_realism(owner)

    def _validate_realism(self, owner: str) -> None:
        require(isinstance(self.distortion, tuple) and len(self.distortion) == 5, owner, "distortion",
                f"must be five values (k1, k2, p1, p2, k3), OpenCV's order, got {self.distortion!r}")
        for name, v in zip(("k1", "k2", "p1", "p2", "k3"), self.distortion):
            require_finite(v, owner, f"distortion[{name}]")
        if lens.has_distortion(self.distortion):
            why = lens.check_distortion(self.width, self.height, self.intrinsics(), self.distortion)
            require(why is None, owner, "distortion", f"{list(self.distortion)} (k1, k2, p1, p2, k3) {why}")
        require(isinstance(self.vignetting_polynomial, tuple) and len(self.vignetting_polynomial) == 3, owner,
                "vignetting_polynomial", f"must be three values (a1, a2, a3), got {self.vignetting_polynomial!r}")
        for name, v in zip(("a1", "a2", "a3"), self.vignetting_polynomial):
            require_finite(v, owner, f"vignetting_polynomial[{name}]")
        a1, a2, a3 = self.vignetting_polynomial
        rho2 = np.linspace(0.0, 1.0, 101)
        require(bool((1.0 + rho2 * (a1 + rho2 * (a2 + rho2 * a3)) > 0).all()), owner, "vignetting_polynomial",
                f"{list(self.vignetting_polynomial)} makes the falloff 1 + a1 r^2 + a2 r^4 + a3 r^6 reach 0 or less "
                f"inside the image (r <= 1, the half diagonal)")
        require_non_negative(self.exposure_time, owner, "exposure_time", "s")
        require(isinstance(self.motion_blur_samples, int) and 1 <= self.motion_blur_samples <= 1024, owner,
                "motion_blur_samples", f"must be an integer in [1, 1024] (1 = no blur), got "
                                       f"{self.motion_blur_samples!r}")
        require(isinstance(self.bit_depth, int) and 1 <= self.bit_depth <= 16, owner, "bit_depth",
                f"must be an integer number of bits in [1, 16], got {self.bit_depth!r}")
        require_finite(self.quantum_efficiency, owner, "quantum_efficiency")
        require(0 < self.quantum_efficiency <= 1, owner, "quantum_efficiency",
                f"must be in (0, 1] (electrons per photon), got {self.quantum_efficiency!r}")
        require_positive(self.full_well, owner, "full_well", "electrons")
        require_non_negative(self.read_noise, owner, "read_noise", "electrons rms")
        require_non_negative(self.dark_current, owner, "dark_current", "electrons/s")
        for name, unit in (("photons_per_unit", "photons"), ("gain", "electrons/DN")):
            if getattr(self, name) is not None:
                require_positive(getattr(self, name), owner, name, unit)
        require(isinstance(self.seed, int) and 0 <= self.seed < 2**31, owner, "seed",
                f"must be an integer in [0, 2^31), got {self.seed!r}")

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["lights"] = [light.to_dict() for light in self.lights]
        defaults = type(self)()
        for name in self.REALISM_FIELDS:
            if getattr(self, name) == getattr(defaults, name) or (name == "seed" and not self.noise):
                del out[name]
        return out

    @property
    def max_code(self) -> int:
        """The largest digital number of the ADC, 2^bit_depth - 1."""
        return 2 ** self.bit_depth - 1

    def sensor_gain(self) -> float:
        """Conversion gain in electrons per DN: ``gain``, or full_well / (2^bit_depth - 1)."""
        return float(self.gain) if self.gain is not None else self.full_well / self.max_code

    def electrons_per_unit(self) -> float:
        """Mean signal electrons for a linear value ``exposure * I = 1``: QE * photons_per_unit."""
        photons = self.photons_per_unit if self.photons_per_unit is not None else \
            self.full_well / self.quantum_efficiency
        return float(self.quantum_efficiency * photons)

    def exposure_offsets(self) -> np.ndarray:
        """(motion_blur_samples,) times (s) of the sub-samples relative to the sample's time: the centres of
        equal slices of the exposure [-exposure_time / 2, exposure_time / 2]."""
        n = self.motion_blur_samples
        return self.exposure_time * ((np.arange(n) + 0.5) / n - 0.5)

    @property
    def blurs(self) -> bool:
        """Whether a frame integrates more than one pose."""
        return self.motion_blur_samples > 1 and self.exposure_time > 0

    # -- derived quantities -------------------------------------------------------------------------------
    @property
    def water_type(self) -> WaterType:
        """The resolved :class:`WaterType`: the preset with any ``water_*`` overrides applied."""
        base = WaterType.preset(self.water)
        overrides = {f: getattr(self, f"water_{f}") for f in
                     ("attenuation", "backscatter", "veiling_light", "diffuse_attenuation")
                     if getattr(self, f"water_{f}") is not None}
        if overrides:
            return base.replace(name=f"{self.water}+custom", **overrides)
        return base

    def intrinsics(self) -> tuple[float, float, float, float]:
        """(fx, fy, cx, cy) in pixels, OpenCV convention: pixel (row, col) has its centre at (u, v) = (col, row),
        so a centred principal point is ((width - 1) / 2, (height - 1) / 2); ``horizontal_fov`` spans the full
        image width, edge to edge (fx = width / 2 / tan(fov / 2))."""
        fx = self.fx if self.fx is not None else 0.5 * self.width / math.tan(math.radians(self.horizontal_fov) / 2)
        fy = self.fy if self.fy is not None else fx
        cx = self.cx if self.cx is not None else 0.5 * (self.width - 1)
        cy = self.cy if self.cy is not None else 0.5 * (self.height - 1)
        return float(fx), float(fy), float(cx), float(cy)

    def camera_matrix(self) -> np.ndarray:
        """3x3 pinhole matrix K in the OpenCV convention: camera frame x right, y down, z forward; pixel
        (row, col) centred at (u, v) = (col, row). A camera-frame point (x, y, z) the renderer shows at pixel
        (row, col) projects with K to (u, v) = (col, row); a centred camera has cx = (width - 1) / 2,
        cy = (height - 1) / 2."""
        fx, fy, cx, cy = self.intrinsics()
        return np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])

    def sun_direction(self) -> np.ndarray:
        """World unit vector towards the sun."""
        z, a = math.radians(self.sun_zenith), math.radians(self.sun_azimuth)
        return np.array([math.sin(z) * math.cos(a), math.sin(z) * math.sin(a), math.cos(z)])

    MEMORY_FIX: ClassVar[str] = "lower width and height"

    def memory_bytes(self, batch: int = 1) -> int:
        """Device bytes of ``batch`` rendered images: ``BYTES_PER_PIXEL`` per pixel (every result channel), 6 more
        for the ``raw`` DN with noise, 28 B per pose and sub-sample, and the lens tables (12 B per pixel of rays
        with distortion, 4 of vignetting)."""
        pixels = self.width * self.height
        per_pixel = BYTES_PER_PIXEL + (6 if self.noise else 0)
        tables = pixels * ((12 if lens.has_distortion(self.distortion) else 0) + (4 if self.vignettes else 0))
        return batch * (28 * self.motion_blur_samples + pixels * per_pixel) + tables

    @property
    def shadow_sources(self) -> int:
        """Shadow rays cast per shaded ray: one slot for the sun and one per vehicle light with ``shadows`` on (and a
        sun or a light to shadow), else 0."""
        return 1 + len(self.lights) if self.shadows and (self.sun or self.lights) else 0

    @property
    def vignettes(self) -> bool:
        """Whether any vignetting is on."""
        return self.vignetting_cos4 or any(a != 0.0 for a in self.vignetting_polynomial)


@dataclasses.dataclass
class CameraResult:
    """Images of a batch of B poses, as Warp arrays on the camera's device (row 0 = top, column 0 = left).

    rgb: (B, H, W, 3) uint8, sRGB-encoded underwater image. linear: (B, H, W) vec3, linear underwater image I
    (before exposure). in_air: (B, H, W) vec3, linear in-air radiance J (0 for misses). range: (B, H, W)
    float32, metres along the pixel's ray (inf for misses). depth: (B, H, W) float32, planar z-depth along the
    optical axis (m, inf for misses). label: (B, H, W) int32, index into ``label_names`` (-1 for misses).
    instance: (B, H, W) int32, scene node id (-1 for misses). normal: (B, H, W) vec3, world-frame unit normal
    facing the camera (0 for misses). raw: (B, H, W, 3) uint16 digital numbers of the photon-transfer model
    with ``noise`` on, else ``None``.
    """

    rgb: wp.array
    linear: wp.array
    in_air: wp.array
    range: wp.array
    depth: wp.array
    label: wp.array
    instance: wp.array
    normal: wp.array
    label_names: list[str]
    camera_matrix: np.ndarray
    config: UnderwaterCameraConfig
    frame_index: int
    raw: wp.array | None = None

    FIELDS: ClassVar[tuple[str, ...]] = ("rgb", "linear", "in_air", "range", "depth", "label", "instance", "normal")

    @property
    def batch_size(self) -> int:
        return int(self.rgb.shape[0])

    @property
    def fields(self) -> tuple[str, ...]:
        """The arrays this result holds: ``FIELDS``, and ``raw`` with noise."""
        return self.FIELDS + (("raw",) if self.raw is not None else ())

    def numpy(self) -> dict[str, np.ndarray]:
        """Host copies; vec3 images come back as (B, H, W, 3) float32."""
        return {name: getattr(self, name).numpy() for name in self.fields}

    def torch(self) -> dict[str, Any]:
        """Zero-copy torch tensors of the device arrays (``wp.to_torch``); needs PyTorch installed."""
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise OceanSimError("CameraResult.torch() needs PyTorch; install it (pip install torch) or use "
                                ".numpy()") from exc
        return {name: wp.to_torch(getattr(self, name)) for name in self.fields}

    def depth_uint8(self, frame: int = 0) -> np.ndarray:
        """(H, W) uint8 planar depth image: 255 at the camera falling linearly to 0 at the frame's farthest hit;
        misses are 0."""
        d = self.depth.numpy()[self._check_frame(frame)]
        hit = np.isfinite(d)
        far = float(d[hit].max()) if hit.any() else 1.0
        return images.to_uint8(np.where(hit, 1.0 - d / far, 0.0))

    def label_uint8(self, frame: int = 0) -> np.ndarray:
        """(H, W, 3) uint8 label image: a fixed colour per label id, black for misses."""
        return label_colours(self.label.numpy()[self._check_frame(frame)])

    def save_png(self, folder: str | Path, frame: int = 0, prefix: str = "") -> dict[str, Path]:
        """Write ``<prefix>rgb.png``, ``<prefix>depth.png`` and ``<prefix>label.png`` of one frame into
        ``folder``."""
        f = self._check_frame(frame)
        folder = Path(folder)
        return {"rgb": images.save_png(folder / f"{prefix}rgb.png", self.rgb.numpy()[f]),
                "depth": images.save_png(folder / f"{prefix}depth.png", self.depth_uint8(f)),
                "label": images.save_png(folder / f"{prefix}label.png", self.label_uint8(f))}

    def _check_frame(self, frame: int) -> int:
        if not 0 <= frame < self.batch_size:
            raise ConfigError(f"CameraResult: frame {frame} is outside the batch of {self.batch_size}")
        return int(frame)


def label_colours(label: np.ndarray) -> np.ndarray:
    """uint8 RGB colours for label ids (a fixed golden-ratio hue walk, so id k always gets the same colour);
    ids < 0 are black."""
    ids = np.asarray(label, dtype=np.int64)
    hue = (np.maximum(ids, 0) * 0.618033988749895) % 1.0
    k = (np.stack([5.0, 3.0, 1.0]) + hue[..., None] * 6.0) % 6.0
    rgb = 1.0 - 0.75 * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)
    out = np.rint(255.0 * rgb).astype(np.uint8)
    out[ids < 0] = 0
    return out


class SegmentRays(RayBuffers):
    """:class:`~oceansim_py.sensors.rays.RayBuffers` whose rays each have their own maximum range: ``max_range``
    (n_rays,) float32 m, written by the generation kernel (shadow rays end at their light or at the surface)."""

    BYTES_PER_RAY = RayBuffers.BYTES_PER_RAY + 4

    def __init__(self, n_rays: int, device: Any) -> None:
        super().__init__(n_rays, device, 1.0)
        self.max_range = wp.empty(n_rays, dtype=wp.float32, device=device)


class _Scratch:
    """Ray scratch of one tile of ``n_pixels`` pixels: the primary rays, the in-water rays past the sea surface
    (``bounce``, with ``crossings``, the count of primary rays that reach the surface), and ``shadow_sources``
    shadow rays per pixel (``None`` without)."""

    def __init__(self, n_pixels: int, shadow_sources: int, device: Any, max_range: float) -> None:
        self.primary = RayBuffers(n_pixels, device, max_range)
        self.shadow = SegmentRays(n_pixels * shadow_sources, device) if shadow_sources else None
        self.crossings = wp.zeros(1, dtype=wp.int32, device=device)
        self._bounce: RayBuffers | None = None
        self._n_pixels, self._device, self._max_range = n_pixels, device, max_range

    @property
    def bounce(self) -> RayBuffers:
        """The in-water rays past the surface, allocated on the first render that sees a surface."""
        if self._bounce is None:
            self._bounce = RayBuffers(self._n_pixels, self._device, self._max_range)
        return self._bounce

    @staticmethod
    def nbytes(n_pixels: int, shadow_sources: int, surface: bool = True) -> int:
        """Device bytes of the scratch of a tile of ``n_pixels`` pixels (``surface``: with the in-water rays)."""
        rays = (2 if surface else 1) * RayBuffers.BYTES_PER_RAY + shadow_sources * SegmentRays.BYTES_PER_RAY
        return n_pixels * rays + 4


class UnderwaterCamera:
    """An underwater RGB camera on ``device`` (``None``: cuda:0 if present, else cpu).

    ``render`` draws a batch of poses in one launch. The poses buffer is kept per batch size and per thread and
    reused (one camera may render from several threads at once); pass ``out`` (a previous result of the same
    batch size) to reuse the image arrays too. ``sensor_id`` separates the noise of several cameras sharing a
    seed. The lens tables (each pixel's ray with distortion, the vignetting map) are computed once, here.
    """

    MAX_CACHED_BATCH_SIZES = 2
    #: Pixels rendered per pass (the ray scratch holds one tile's primary and shadow rays).
    TILE_PIXELS = 1 << 19

    def __init__(self, config: UnderwaterCameraConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        self.config = config if config is not None else UnderwaterCameraConfig()
        if not isinstance(self.config, UnderwaterCameraConfig):
            raise ConfigError(f"UnderwaterCamera: config must be an UnderwaterCameraConfig, got "
                              f"{type(config).__name__}")
        self.device = resolve_device(device)
        c = self.config
        self.water = c.water_type
        lights = c.lights
        cones = [light.cone_cosines() for light in lights]
        dirs = [np.asarray(light.direction, dtype=np.float64) / math.hypot(*light.direction) for light in lights]
        dev = self.device
        self._light_position = wp.array(np.array([l.position for l in lights], np.float32).reshape(-1, 3),
                                        dtype=wp.vec3, device=dev)
        self._light_direction = wp.array(np.array(dirs, np.float32).reshape(-1, 3), dtype=wp.vec3, device=dev)
        self._light_cos_outer = wp.array(np.array([cc[0] for cc in cones], np.float32), dtype=wp.float32, device=dev)
        self._light_cos_inner = wp.array(np.array([cc[1] for cc in cones], np.float32), dtype=wp.float32, device=dev)
        self._light_intensity = wp.array(np.array([l.intensity for l in lights], np.float32).reshape(-1, 3),
                                         dtype=wp.vec3, device=dev)
        self._poses = PoseUploads(self.device, self.MAX_CACHED_BATCH_SIZES)
        self._scratch: ScratchCache[_Scratch] = ScratchCache(self.MAX_CACHED_BATCH_SIZES)
        self._in_water: ScratchCache[wp.array] = ScratchCache(self.MAX_CACHED_BATCH_SIZES)
        self.sensor_id = int(sensor_id)
        intr = c.intrinsics()
        rays = lens.pixel_rays(c.width, c.height, intr, c.distortion) if lens.has_distortion(c.distortion) else None
        self._vignette_map = (lens.vignetting_map(c.width, c.height, intr, rays, c.vignetting_cos4,
                                                  c.vignetting_polynomial) if c.vignettes else None)
        self._rays = wp.array(rays if rays is not None else np.zeros((1, 1, 3), np.float32), dtype=wp.vec3, device=dev)
        self._vignette = wp.array(self._vignette_map if self._vignette_map is not None else np.ones((1, 1), np.float32),
                                  dtype=wp.float32, device=dev)

    def vignetting(self) -> np.ndarray:
        """(H, W) relative illumination of each pixel (sensors/lens.py; all ones without vignetting)."""
        c = self.config
        return self._vignette_map.copy() if self._vignette_map is not None else np.ones((c.height, c.width),
                                                                                          np.float32)

    def exposure_poses(self, trajectory: Any, times: Any) -> np.ndarray:
        """(B, motion_blur_samples, 7) camera poses over the exposure of frames at ``times`` (s): the
        trajectory at ``times + config.exposure_offsets()``, clamped to the trajectory's span (the camera is
        taken as still before its first and after its last sample)."""
        t = np.asarray(times, dtype=np.float64).reshape(-1, 1) + self.config.exposure_offsets()[None, :]
        t = np.clip(t, trajectory.start_time, trajectory.end_time)
        return np.asarray(trajectory.at(t.reshape(-1)), dtype=np.float64).reshape(t.shape[0], t.shape[1], 7)

    def memory_bytes(self, batch: int) -> int:
        """Device bytes a render of ``batch`` poses needs: the result images and tables
        (:meth:`UnderwaterCameraConfig.memory_bytes`) and the ray scratch of one tile (:meth:`_Scratch.nbytes`)."""
        c = self.config
        tile = min(self.TILE_PIXELS, batch * c.width * c.height)
        return c.memory_bytes(batch) + _Scratch.nbytes(tile, c.shadow_sources, c.surface_optics != "never")

    def allocate(self, batch: int, label_names: list[str] | None = None, frame_index: int = 0) -> CameraResult:
        """New result arrays for ``batch`` images (refused with the estimate if the device lacks memory)."""
        c = self.config
        check_memory(self.memory_bytes(batch), self.device,
                     f"camera render of {batch} image(s) of {c.width}x{c.height}",
                     "lower width/height or render fewer poses at once")
        shape = (batch, c.height, c.width)
        dev = self.device
        return CameraResult(
            raw=wp.empty((*shape, 3), dtype=wp.uint16, device=dev) if c.noise else None,
            rgb=wp.empty((*shape, 3), dtype=wp.uint8, device=dev), linear=wp.empty(shape, dtype=wp.vec3, device=dev),
            in_air=wp.empty(shape, dtype=wp.vec3, device=dev), range=wp.empty(shape, dtype=wp.float32, device=dev),
            depth=wp.empty(shape, dtype=wp.float32, device=dev), label=wp.empty(shape, dtype=wp.int32, device=dev),
            instance=wp.empty(shape, dtype=wp.int32, device=dev), normal=wp.empty(shape, dtype=wp.vec3, device=dev),
            label_names=list(label_names or []), camera_matrix=c.camera_matrix(), config=c,
            frame_index=int(frame_index))

    def _scratch_for(self, n_pixels: int) -> _Scratch:
        """The calling thread's ray scratch for a tile of ``n_pixels`` pixels (made on first use)."""
        c = self.config
        scratch = self._scratch.get(n_pixels)
        if scratch is None:
            check_memory(_Scratch.nbytes(n_pixels, c.shadow_sources, c.surface_optics != "never"), self.device,
                         f"camera ray scratch of {n_pixels} pixels", "lower width/height")
            scratch = self._scratch.put(n_pixels, _Scratch(n_pixels, c.shadow_sources, self.device,
                                                            float(c.max_range)))
        return scratch

    def _lighting(self, scene: Any) -> tuple[k.Lights, k.Water, k.SeaSurface, k.SceneTextures]:
        """The kernels' structs: the camera's lights, its water, the sea surface and sky, the scene's geometry and
        textures."""
        c = self.config
        w = self.water
        lights = k.Lights()
        lights.ambient = wp.vec3(*c.ambient)
        lights.sun_irradiance = wp.vec3(*(c.sun_irradiance if c.sun else (0.0, 0.0, 0.0)))
        lights.sun_direction = wp.vec3(*c.sun_direction())
        lights.surface_z = float(scene.surface_z)
        lights.diffuse_attenuation = wp.vec3(*w.diffuse_attenuation)
        lights.shadows = int(c.shadows)
        lights.light_position, lights.light_direction = self._light_position, self._light_direction
        lights.light_cos_outer, lights.light_cos_inner = self._light_cos_outer, self._light_cos_inner
        lights.light_intensity = self._light_intensity
        water = k.Water()
        water.beta_d, water.beta_b = wp.vec3(*w.attenuation), wp.vec3(*w.backscatter)
        water.veiling_light = wp.vec3(*w.veiling_light)
        water.veiling_scales_with_light = int(c.veiling_scales_with_light)
        sea = k.SeaSurface()
        sea.mesh_obj = next((n.id for n in scene.nodes if n.sea_surface is not None), -1)
        sea.sea_obj = sea.mesh_obj if c.surface_optics != "never" else -1
        sea.flat = int(c.surface_optics == "always")
        sea.surface_z = float(scene.surface_z)
        sea.n_water = float(c.water_refractive_index)
        sea.sky_zenith, sea.sky_horizon = wp.vec3(*c.sky_zenith), wp.vec3(*c.sky_horizon)
        sea.max_range = float(c.max_range)
        g = scene.geometry
        tex = k.SceneTextures()
        tex.points, tex.indices, tex.face_uv = g.points, g.indices, g.face_uv
        tex.object_texture, tex.texels, tex.info = g.object_texture, g.texture_texels, g.texture_info
        return lights, water, sea, tex

    def sees_surface(self, scene: Any) -> bool:
        """Whether this camera renders the sea surface of ``scene`` (``surface_optics``: ``always``, or ``auto`` and the
        scene has a moving sea surface)."""
        mode = self.config.surface_optics
        return mode == "always" or (mode == "auto" and scene.sea_surface is not None)

    def _in_water_flags(self, scene: Any, poses: np.ndarray) -> wp.array:
        """(N,) int32 per pose: 1 where the camera is below the sea surface (the moving surface's instantaneous
        height above it at the scene's time, else ``surface_z``), 0 in the air; all 1 when the camera does not see
        the surface (the water then fills the world, as the image formation model has it)."""
        p = np.asarray(poses, dtype=np.float64).reshape(-1, 7)
        under = p[:, 2] < scene.surface_height(p[:, :2]) if self.sees_surface(scene) else np.ones(len(p), bool)
        buf = self._in_water.get_or_make(len(p), lambda: wp.empty(len(p), dtype=wp.int32, device=self.device))
        buf.assign(wp.array(under.astype(np.int32), dtype=wp.int32, device="cpu"))
        return buf

    def _shade(self, scene: Any, poses: np.ndarray, pose_buf: wp.array, batch: int, sub: int, out: CameraResult,
               use_vignette: int, threads: int | None) -> None:
        """Render the batch into ``out`` tile by tile (``TILE_PIXELS`` pixels at most) and sub-sample by sub-sample:
        primary rays, cast through the scene's backend (or the config's ``raycast_backend``); the in-water rays past
        the sea surface of those that reach it, cast (only when some do); the shadow rays of the shaded points, cast;
        shading into ``out``."""
        c = self.config
        fx, fy, cx, cy = c.intrinsics()
        use_rays = int(lens.has_distortion(c.distortion))
        lights, water, sea, tex = self._lighting(scene)
        in_water = self._in_water_flags(scene, poses)
        surface = self.sees_surface(scene)
        g = scene.geometry
        dev = self.device
        total = batch * c.width * c.height
        view = [c.width, c.height, fx, fy, cx, cy, use_rays, self._rays]
        for first in range(0, total, self.TILE_PIXELS):
            n = min(self.TILE_PIXELS, total - first)
            scratch = self._scratch_for(n)
            rays = scratch.primary
            bounce = scratch.bounce if surface else rays   # never read without a surface to reach
            shadow = scratch.shadow.hits if scratch.shadow is not None else rays.hits
            for s in range(sub):
                tile = [sub, s, first, c.width, c.height]
                launch_1d(k.camera_ray_kernel, n, [pose_buf, *tile, *view[2:], rays.origins, rays.directions],
                          dev, threads=threads, min_chunk=1024)
                rays.cast(scene, c.raycast_backend, threads=threads)
                if surface:
                    scratch.crossings.zero_()
                    launch_1d(k.camera_bounce_ray_kernel, n,
                              [pose_buf, in_water, *tile, rays.directions, *rays.hit_args(), sea, bounce.origins,
                               bounce.directions, scratch.crossings], dev, threads=threads, min_chunk=1024)
                    if int(scratch.crossings.numpy()[0]) > 0:
                        bounce.cast(scene, c.raycast_backend, threads=threads)
                primary_and_bounce = [rays.directions, *rays.hit_args(), sea, bounce.origins, bounce.directions,
                                      *bounce.hit_args()]
                if scratch.shadow is not None:
                    sh = scratch.shadow
                    launch_1d(k.camera_shadow_ray_kernel, n,
                              [pose_buf, in_water, *tile, *primary_and_bounce, lights, sh.origins, sh.directions,
                               sh.max_range], dev, threads=threads, min_chunk=1024)
                    sh.cast(scene, c.raycast_backend, threads=threads)
                launch_1d(k.camera_shade_kernel, n,
                          [pose_buf, in_water, sub, s, sub // 2, first, *view, *primary_and_bounce, shadow.face,
                           shadow.obj, g.object_albedo, g.object_label, tex, lights, water, use_vignette,
                           self._vignette, float(c.exposure), out.rgb, out.in_air, out.linear, out.range, out.depth,
                           out.label, out.instance, out.normal], dev, threads=threads, min_chunk=1024)

    def render(self, scene: Any, poses: Any, frame_index: int = 0, out: CameraResult | None = None,
               threads: int | None = None, exposure_poses: Any = None) -> CameraResult:
        """Render B images.

        Args:
            scene: a :class:`~oceansim_py.scene.Scene` on this camera's device.
            poses: camera poses in the world, (7,), (B, 7) ``[px, py, pz, qx, qy, qz, qw]`` or a Trajectory.
            frame_index: frame number of pose 0 (pose b is frame ``frame_index + b``), recorded in the result.
            out: a previous result of this camera with the same batch size to write into.
            threads: CPU launch threads (default: all; see ``runtime.set_cpu_threads``).
            exposure_poses: (B, S, 7) camera poses over each frame's exposure (:meth:`exposure_poses`), whose
                images are averaged (motion blur); ``None``: the camera is still during the exposure.
        """
        c = self.config
        p = check_render_call("UnderwaterCamera", scene, self.device, poses, frame_index, what="camera")
        batch = p.shape[0]
        check_out_type("UnderwaterCamera", out, CameraResult)
        sub = 1
        if exposure_poses is not None:
            e = np.asarray(exposure_poses, dtype=np.float64)
            if e.ndim != 3 or e.shape[0] != batch or e.shape[2] != 7 or e.shape[1] < 1:
                raise ConfigError(f"UnderwaterCamera.render: exposure_poses must have shape (B, S, 7) with B = "
                                  f"{batch} frames, got {e.shape}")
            sub = int(e.shape[1])
            p = check_render_call("UnderwaterCamera", scene, self.device, e.reshape(-1, 7), frame_index,
                                  what="camera", poses_name="exposure_poses")
        if out is None:
            out = self.allocate(batch, scene.labels, frame_index)
        else:
            if tuple(out.rgb.shape) != (batch, c.height, c.width, 3) or out.config != c:
                raise ConfigError(f"UnderwaterCamera.render: out holds images of shape {tuple(out.rgb.shape)} "
                                  f"from another config; pass a result of this camera with a batch of {batch}")
            out.label_names = list(scene.labels)
            out.frame_index = int(frame_index)
        pose_buf = self._poses.upload(p)
        use_vignette = int(self._vignette_map is not None)
        self._shade(scene, p, pose_buf, batch, sub, out, use_vignette, threads)
        if c.noise:
            launch_1d(k.camera_sensor_kernel, batch * c.width * c.height * 3,
                      [out.linear, use_vignette, self._vignette, c.electrons_per_unit() * float(c.exposure),
                       float(c.dark_current * c.exposure_time), float(c.full_well), float(c.read_noise),
                       c.sensor_gain(), float(c.max_code), int(c.seed), int(frame_index), self.sensor_id, out.raw,
                       out.rgb], self.device, threads=threads, min_chunk=1024)
        return out


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_DISPLAY = "8-bit display view (uint8 0..255), not a measurement"
_PIXELS = ("height", "width")
_RGB = ("height", "width", 3)
#: the result's float/int arrays a rig can write (``rgb`` is written as the ``rgb_png`` image)
_ARRAYS = ("depth", "range", "label", "linear", "in_air", "normal", "raw")


def _cli_write(o: _reg.CliOutput) -> list[str]:
    """``oceansim-py render camera``: ``camera_rgb.png`` (sRGB), ``camera_depth.png`` (planar depth, bright =
    near, dark = the farthest hit, black = nothing hit), ``camera_label.png`` (a fixed colour per label) and raw
    arrays: ``camera_rgb.npy`` ((H, W, 3) uint8), ``camera_linear.npy`` and ``camera_in_air.npy`` ((H, W, 3)
    float32 linear underwater and in-air images), ``camera_range.npy`` and ``camera_depth.npy`` ((H, W) float32
    m, inf = miss), ``camera_label.npy`` ((H, W) int32, -1 = miss; names in ``camera_labels.json``),
    ``camera_normal.npy`` ((H, W, 3) world-frame normals) and, with noise, ``camera_raw.npy`` ((H, W, 3) uint16
    DN)."""
    c, out, data = o.config, o.out, o.data
    written = o.result.save_png(out, prefix="camera_")
    for name in (n for n in ("rgb", *_ARRAYS) if n in data):
        images.save_npy(out / f"camera_{name}.npy", data[name][0])
    labels = out / "camera_labels.json"
    try:
        atomic_write_text(labels, json.dumps(o.result.label_names, indent=1) + "\n", unique=False, fsync=False)
    except OSError as exc:
        raise cannot_write(labels, "the label names", exc) from exc
    # a pixel sees something where its range is finite: geometry, or the sea surface (the flat plane has label -1)
    hit = np.isfinite(data["range"][0])
    _reg.warn_if_blind("camera", float(hit.mean()), o, c.max_range)
    return [f"rendered a {c.width} x {c.height} camera image of {o.scene.source} in {o.sensor.water.name} water in "
            f"{o.seconds:.3f} s ({100.0 * hit.mean():.1f} % of pixels see geometry or the sea surface)",
            f"wrote {', '.join(str(p) for p in written.values())} and camera_*.npy"]


def _render_batch(sensor: UnderwaterCamera, batch: _reg.Batch) -> CameraResult:
    """The batch, with each frame's exposure sampled along the sensor's trajectory when the config blurs."""
    exposure = None
    if sensor.config.blurs and batch.trajectory is not None:
        exposure = sensor.exposure_poses(batch.trajectory, batch.times)
    return sensor.render(batch.scene, batch.poses, frame_index=batch.frame_index, exposure_poses=exposure)


def _check_products(config: UnderwaterCameraConfig, products: tuple[str, ...], where: str) -> None:
    if "raw" in products and not config.noise:
        raise ConfigError(f"{where}: product 'raw' (the sensor's digital numbers) needs the noise model; set "
                          f"noise: true in the camera's config or drop 'raw'")


def _metadata(c: UnderwaterCameraConfig) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "intrinsics": dict(zip(("fx", "fy", "cx", "cy"), c.intrinsics()), width=c.width, height=c.height),
        "camera_matrix": c.camera_matrix().tolist(),
        "frame": "optical axis = sensor +x, image right = -y, image down = -z; depth = planar z-depth (m)"}
    if lens.has_distortion(c.distortion):
        meta["distortion_coefficients"] = {"model": "OpenCV (k1, k2, p1, p2, k3)", "values": list(c.distortion)}
    if c.noise:
        meta["sensor"] = {"gain_e_per_dn": c.sensor_gain(), "max_code": c.max_code, "full_well_e": c.full_well,
                          "read_noise_e": c.read_noise}
    return meta


SENSOR_KIND = _reg.SensorKind(
    name="camera", description="underwater RGB camera: sRGB image, depth, range, labels, normals",
    config_class=UnderwaterCameraConfig, sensor_class=UnderwaterCamera, uses_trajectory=True,
    render=_render_batch, check=_check_products,
    schema=(
        _reg.Product("rgb_png", _reg.IMAGE, "uint8", "sRGB-encoded 8-bit colour (uint8)", _RGB,
                     view=lambda result, config: result.rgb.numpy()),
        _reg.Product("depth_png", _reg.IMAGE, "uint8", _DISPLAY, _PIXELS,
                     view=lambda r, config: np.stack([r.depth_uint8(i) for i in range(r.batch_size)])),
        _reg.Product("label_png", _reg.IMAGE, "uint8", _DISPLAY, _RGB,
                     view=lambda r, config: np.stack([r.label_uint8(i) for i in range(r.batch_size)])),
        _reg.Product("depth", _reg.ARRAY, "float32", "m, planar z-depth along the optical axis (inf for misses)",
                     _PIXELS),
        _reg.Product("range", _reg.ARRAY, "float32", "m along the pixel's ray (inf for misses)", _PIXELS),
        _reg.Product("label", _reg.ARRAY, "int32", "index into the scene's labels (-1 misses)", _PIXELS),
        _reg.Product("linear", _reg.ARRAY, "float32", "linear underwater radiance (scene-relative, before exposure)",
                     _RGB),
        _reg.Product("in_air", _reg.ARRAY, "float32", "linear in-air radiance (scene-relative)", _RGB),
        _reg.Product("normal", _reg.ARRAY, "float32", "unit vector, world frame", _RGB, frame="world"),
        _reg.Product("raw", _reg.ARRAY, "uint16", "DN, digital numbers of the photon-transfer model (noise: true)",
                     _RGB),
    ),
    default_products=("rgb_png", "depth", "label"),
    build=lambda config, device, sensor_id: UnderwaterCamera(config, device=device, sensor_id=sensor_id),
    arrays=lambda result, wanted: {name: getattr(result, name).numpy() for name in _ARRAYS if name in wanted},
    metadata=_metadata,
    cli=_reg.CliTarget(
        help="underwater RGB camera: RGB, depth and label PNGs plus raw .npy", framing="camera",
        reach=lambda c: (min(c.max_range, c.water_type.visibility()), c.horizontal_fov),
        options=(_reg.CliOption(("--water",), {"default": None,
                                               "help": f"water preset, one of {', '.join(WaterType.preset_names())} "
                                                       f"(default: the config's)"}, config_field="water"),),
        write=_cli_write),
)
