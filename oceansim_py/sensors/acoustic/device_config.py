"""Config fields of the device chain, shared by every acoustic sensor config (a dataclass mixin).

A sensor config that inherits :class:`DeviceChainFields` gains the fields below (all with defaults, so existing
configs and presets are unchanged), calls :meth:`DeviceChainFields.validate_device_chain` from its ``validate``
and builds the chain's :class:`~oceansim_py.sensors.acoustic.chain.DeviceSettings` with
:meth:`DeviceChainFields.device_settings`. ``model = "peer"`` (the default) keeps the sensor's peer-faithful
render; ``model = "device"`` renders through the device chain.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal, Mapping

from oceansim_py.io.config import require, require_finite, require_water_sound_speed
from oceansim_py.sensors.acoustic.absorption import francois_garrison
from oceansim_py.sensors.acoustic.beam_pattern import BEAM_STEERINGS, TAPERS, widest_beam_rad
from oceansim_py.sensors.acoustic.chain import CLEAR_WATER_SV_DB, TVG_LAWS, DeviceSettings
from oceansim_py.sensors.acoustic.display import COLORMAPS
from oceansim_py.sensors.acoustic.multipath import MultipathFields

#: Largest margin (dB) by which the receiver noise level may exceed the source level before it is refused as
#: impossible physics (a noise level that high would bury even a perfect reflector at 1 m).
MAX_NOISE_OVER_SOURCE_DB = 0.0

#: Lowest receiver noise level accepted (dB re 1 uPa^2 per sample): 40 dB under the thermal floor of a 1 Hz band at
#: 1 kHz seen by a 40 dB directivity (-15 - 40 = -55 dB); below it a value is a typo, not a receiver (and under
#: ~-450 dB its intensity underflows float32 to exactly 0). ``None`` renders without noise.
MIN_NOISE_LEVEL_DB = -100.0

#: Highest post-TVG noise level accepted (dB, the image's units after TVG and gain): a source level's 260 dB
#: ceiling plus 40 dB, above any echo after a TVG that undoes the spreading loss, and 85 dB under float32's
#: largest intensity (3.4e38, 385 dB), room for the exponential tail (+13.5 dB at a 2^-32 draw) and a megapixel
#: frame's sum in AGC and normalisation (+60 dB).
MAX_POST_TVG_NOISE_DB = 300.0


def require_line_array_width(owner: str, name: str, width_deg: float, taper: str, sidelobe_db: float) -> None:
    """Refuse a one-way -3 dB beam width (degrees) wider than a ``taper`` line array of at least half a wavelength
    forms (:func:`~oceansim_py.sensors.acoustic.beam_pattern.widest_beam_rad`): ConfigError naming ``name`` and
    the valid range. The taper and side-lobe level must already be valid."""
    widest = math.degrees(widest_beam_rad(taper, sidelobe_db))
    require(width_deg <= widest, owner, name,
            f"must lie in (0, {math.floor(widest * 100.0) / 100.0:g}] degrees for a {taper} line array (a wider "
            f"-3 dB beam needs an aperture under half a wavelength), got {width_deg}")


@dataclasses.dataclass(frozen=True)
class DeviceChainFields(MultipathFields):
    """Device-chain fields (docs/PHYSICS_ACOUSTIC_CHAIN.md), with the multipath fields of
    :class:`~oceansim_py.sensors.acoustic.multipath.MultipathFields` (checked here too).

    Attributes:
        model: "peer" (the sensor's peer-faithful model) or "device" (the device chain).
        frequency: carrier frequency (Hz).
        sound_speed: c (m/s), for the wavelength and the range resolution.
        source_level: SL (dB re 1 uPa at 1 m).
        absorption_model: "fixed" (use the sensor's ``absorption``, dB/m) or "francois_garrison" (from frequency,
            temperature, salinity, depth and pH, Francois & Garrison 1982).
        temperature (deg C), salinity (PSU), depth (m), ph: water for Francois-Garrison.
        bandwidth: -3 dB bandwidth B of the pulse (Hz), as datasheets give it; range resolution c / (2 B).
            0: no range point spread beyond the range bin.
        beam_width: one-way -3 dB receive beam width in bearing (degrees); 0: no bearing point spread.
        beam_taper: "uniform" (first side lobe -13.26 dB) | "hann" (-31.5 dB) | "chebyshev" (at sidelobe_level).
        beam_steering: how the beams are formed across the fan. "flat_array": by phase-steering one flat line
            array (Oculus, Gemini, BlueView, Mills-cross multibeams): the beam steered to theta_j has the pattern
            D((L / lambda)(sin theta - sin theta_j)), so ``beam_width`` is its broadside width and beam j is
            1 / cos theta_j as wide (2.4x at +-65 degrees), gathering as much more volume reverberation.
            It steers within +-90 degrees only (an imaging sonar wider than 180 degrees with a beam_width is
            refused with it).
            "constant": every beam has the broadside pattern about its own bearing (an acoustic lens, as in the
            ARIS, or a curved array).
        element_width: width of one element of the flat array (wavelengths; ``flat_array`` only). Its one-way
            directivity E(theta) = sinc(element_width sin theta) weights every echo by its bearing of arrival, so a
            point target at theta reads E(theta)^2 of its broadside level (0.5 wavelength, the default: the widest
            pitch that steers to +-90 degrees without grating lobes; -3.2 dB at 65 degrees) and a distributed one
            E(theta)^2 / cos(theta) to first order (beam_pattern.beam_equivalent_widths); 0: omnidirectional elements.
        pulse_taper: weighting of the pulse spectrum: "uniform" (flat band; sinc-like range response, range side
            lobes -13.3 dB), "hann" or "chebyshev" (lower range side lobes, same -3 dB resolution c / (2 B)).
        sidelobe_level: Chebyshev side-lobe level (dB, < 0), for every Chebyshev taper.
        psf_extent: half-width of the point-spread kernels, in beam widths (bearing) and range resolutions
            (range).
        elevation_span: elevation extent of the ray fan (degrees); 0: the vertical field of view. Set it wider
            than the vertical beam to let the elevation pattern's side lobes see geometry.
        elevation_taper: taper of the vertical aperture for ``elevation_pattern = "array"``.
        noise_level: receiver noise NL per sample (dB re 1 uPa^2), ``None`` for none.
        post_tvg_noise_level: noise of the receiver stages after the time-varying gain (the digitiser and what
            follows it), per sample, in the image's units after TVG and fixed gain (dB, the scale of
            ``display_floor``); ``None`` for none. Referred to the input it is this level less the gain G(r), so it
            fills the near ranges and the shadows, where the TVG is low, with a constant grain, and the input noise
            NL + G(r) takes over where the TVG has risen past it. A device preset sets it relative to
            ``noise_level`` (NL + 30 dB; ARIS NL + 47 dB); overriding ``noise_level`` on a preset moves it along
            (``noise_level: null`` turns both off), and ``tvg: none`` on a preset turns it off (no gain stage),
            unless it is set too.
        volume_scattering: S_v (dB re 1 m^-1), ``None`` for none; -80 dB is clear coastal water.
        tvg: time-varying gain law, "none" | "20log" | "30log" | "40log" (k log10 r + 2 alpha r).
        tvg_gain: fixed gain (dB) added to the TVG.
        agc_level: automatic gain: scale each frame so its mean intensity is this level (dB); ``None`` for none.
        jitter: stratified jitter of the ray directions inside their cells (fixed per sensor and seed).
    """

    model: Literal["peer", "device"] = "peer"
    frequency: float = 750000.0
    sound_speed: float = 1500.0
    source_level: float = 210.0
    absorption_model: Literal["fixed", "francois_garrison"] = "fixed"
    temperature: float = 10.0
    salinity: float = 35.0
    depth: float = 0.0
    ph: float = 8.0
    bandwidth: float = 0.0
    beam_width: float = 0.0
    beam_taper: Literal["uniform", "hann", "chebyshev"] = "uniform"
    beam_steering: Literal["flat_array", "constant"] = "flat_array"
    element_width: float = 0.5
    pulse_taper: Literal["uniform", "hann", "chebyshev"] = "uniform"
    sidelobe_level: float = -30.0
    psf_extent: float = 6.0
    elevation_span: float = 0.0
    elevation_taper: Literal["uniform", "hann", "chebyshev"] = "uniform"
    noise_level: float | None = 60.0
    post_tvg_noise_level: float | None = None
    volume_scattering: float | None = CLEAR_WATER_SV_DB
    tvg: Literal["none", "20log", "30log", "40log"] = "none"
    tvg_gain: float = 0.0
    agc_level: float | None = None
    jitter: bool = True

    @classmethod
    def follow_preset(cls, preset: Mapping[str, Any], given: Mapping[str, Any], values: dict[str, Any]) -> None:
        """A device preset derives ``post_tvg_noise_level`` from ``noise_level`` and its TVG's gain staging
        (presets.post_tvg_noise_level). Unless ``post_tvg_noise_level`` is given too: a ``noise_level`` set over the
        preset moves it by the same step (null ``noise_level``: null, a receiver without noise), and ``tvg: none``
        nulls it (no gain stage: the receiver's noise is ``noise_level`` alone). An ``absorption`` (dB/m) set over a
        preset that takes it from Francois-Garrison is the absorption used (``absorption_model`` becomes "fixed"),
        unless ``absorption_model`` is given too."""
        super().follow_preset(preset, given, values)  # type: ignore[misc]
        if "absorption" in given and "absorption_model" not in given:
            values["absorption_model"] = "fixed"
        if "post_tvg_noise_level" in given:
            return
        noise, post = preset.get("noise_level"), preset.get("post_tvg_noise_level")
        if noise is None or post is None:
            return
        if "tvg" in given and values.get("tvg") == "none":
            values["post_tvg_noise_level"] = None
            return
        if "noise_level" not in given:
            return
        level = values.get("noise_level")
        values["post_tvg_noise_level"] = (None if level is None
                                          else round(float(level) + (float(post) - float(noise)), 6))

    def require_finite_device_numbers(self, owner: str) -> None:
        """Every number field of the chain finite (the optional dB levels finite or null), whatever the model: a
        peer model ignores them, but a config that exists must be a valid one (it is written to manifests and may
        be switched to model 'device' with ``replace``)."""
        for name in ("frequency", "sound_speed", "source_level", "temperature", "salinity", "depth", "ph",
                     "bandwidth", "beam_width", "element_width", "sidelobe_level", "psf_extent", "elevation_span",
                     "tvg_gain"):
            require_finite(getattr(self, name), owner, name)
        for name in ("noise_level", "post_tvg_noise_level", "volume_scattering", "agc_level"):
            v = getattr(self, name)
            require(v is None or (isinstance(v, (int, float)) and math.isfinite(v)), owner, name,
                    f"must be a finite number (dB) or null, got {v!r}")

    def validate_device_chain(self, owner: str, horizontal_fov: float, vertical_fov: float) -> None:
        """Check the device fields (ConfigError naming the field and its valid range)."""
        self.require_finite_device_numbers(owner)
        for name, allowed in (("model", ("peer", "device")), ("absorption_model", ("fixed", "francois_garrison")),
                              ("beam_taper", TAPERS), ("beam_steering", BEAM_STEERINGS), ("pulse_taper", TAPERS), ("elevation_taper", TAPERS), ("tvg", tuple(TVG_LAWS))):
            require(getattr(self, name) in allowed, owner, name,
                    f"must be one of {list(allowed)}, got {getattr(self, name)!r}")
        require(1e3 <= self.frequency <= 1e7, owner, "frequency",
                f"must lie in [1 kHz, 10 MHz], got {self.frequency} Hz")
        require_water_sound_speed(self.sound_speed, owner)
        require(100.0 <= self.source_level <= 260.0, owner, "source_level",
                f"must lie in [100, 260] dB re 1 uPa at 1 m, got {self.source_level}")
        require(-2.0 <= self.temperature <= 40.0, owner, "temperature", f"must lie in [-2, 40] deg C, got "
                f"{self.temperature}")
        require(0.0 <= self.salinity <= 45.0, owner, "salinity", f"must lie in [0, 45] PSU, got {self.salinity}")
        require(0.0 <= self.depth <= 11000.0, owner, "depth", f"must lie in [0, 11000] m, got {self.depth}")
        require(6.0 <= self.ph <= 9.0, owner, "ph", f"must lie in [6, 9], got {self.ph}")
        require(0.0 <= self.bandwidth <= 2.0 * self.frequency, owner, "bandwidth",
                f"must lie in [0, 2 x frequency = {2.0 * self.frequency:g}] Hz (the -3 dB bandwidth; 0 for no "
                f"range point spread), got {self.bandwidth}")
        require(0.0 <= self.beam_width < horizontal_fov, owner, "beam_width",
                f"must lie in [0, horizontal_fov = {horizontal_fov}) degrees (0 for no bearing point spread), "
                f"got {self.beam_width}")
        require(0.0 <= self.element_width <= 1.0, owner, "element_width",
                f"must lie in [0, 1] wavelengths (0: omnidirectional elements; wider elements cannot steer a flat "
                f"array across a fan without grating lobes), got {self.element_width}")
        require(-120.0 <= self.sidelobe_level < 0.0, owner, "sidelobe_level",
                f"must lie in [-120, 0) dB, got {self.sidelobe_level}")
        if self.beam_width > 0.0:
            require_line_array_width(owner, "beam_width", self.beam_width, self.beam_taper, self.sidelobe_level)
        require(0.0 < self.psf_extent <= 50.0, owner, "psf_extent",
                f"must lie in (0, 50] beam widths, got {self.psf_extent}")
        require(self.elevation_span == 0.0 or vertical_fov <= self.elevation_span < 180.0, owner, "elevation_span",
                f"must be 0 (the vertical field of view) or lie in [vertical_fov = {vertical_fov}, 180) degrees, "
                f"got {self.elevation_span}")
        require(self.noise_level is None or self.noise_level >= MIN_NOISE_LEVEL_DB, owner, "noise_level",
                f"must lie in [{MIN_NOISE_LEVEL_DB:g}, source_level = {self.source_level}] dB re 1 uPa^2 (or null for "
                f"no receiver noise), got {self.noise_level}")
        require(self.noise_level is None or self.noise_level <= self.source_level + MAX_NOISE_OVER_SOURCE_DB,
                owner, "noise_level", f"must not exceed source_level ({self.source_level} dB re 1 uPa at 1 m): "
                f"a receiver noise of {self.noise_level} dB re 1 uPa^2 would bury every echo; lower it")
        require(self.post_tvg_noise_level is None
                or MIN_NOISE_LEVEL_DB <= self.post_tvg_noise_level <= MAX_POST_TVG_NOISE_DB, owner,
                "post_tvg_noise_level", f"must lie in [{MIN_NOISE_LEVEL_DB:g}, {MAX_POST_TVG_NOISE_DB:g}] dB (the "
                f"image's units after TVG and gain; or null for none), got {self.post_tvg_noise_level}")
        require(self.volume_scattering is None or -150.0 <= self.volume_scattering <= -10.0, owner,
                "volume_scattering", f"must lie in [-150, -10] dB re 1 m^-1 (clear water ~ -80), got "
                f"{self.volume_scattering}")
        require(isinstance(self.jitter, bool), owner, "jitter", f"must be true or false, got {self.jitter!r}")
        self.validate_multipath(owner, self.model)
        if self.model == "device":
            # The peers' noise does not apply to the device chain (it has speckle and receiver noise): left at
            # its default it is ignored; a value the user chose is refused rather than silently dropped.
            defaults = {f.name: f.default for f in dataclasses.fields(self)}
            for name in ("multiplicative_sigma", "additive_sigma"):
                v = getattr(self, name, 0.0)
                require(v == 0.0 or v == defaults.get(name), owner, name,
                        f"must be 0 (or left at its default, which is ignored) with model 'device' (the peers' "
                        f"noise; the device chain has speckle and receiver noise), got {v}")
            # The peers' spreading switch: the chain's sonar equation always has its two-way spreading, so a
            # spreading the user turned on would be silently dropped.
            spreading = getattr(self, "spreading", False)
            require(spreading is False, owner, "spreading",
                    f"must be false with model 'device' (the peers' (1 m / r)^2 switch; the device chain's sonar "
                    f"equation always applies two-way spreading), got {spreading!r}")

    def absorption_db_per_m(self, fixed: float) -> float:
        """One-way absorption (dB/m): ``fixed`` or Francois-Garrison at this frequency and water."""
        if self.absorption_model == "francois_garrison":
            return francois_garrison(self.frequency, self.temperature, self.salinity, self.depth, self.ph)
        return fixed

    def device_settings(self, fixed_absorption: float, normalisation: str, seed: int) -> DeviceSettings:
        """The chain's SI parameters from these fields."""
        return DeviceSettings(
            frequency_hz=float(self.frequency), sound_speed=float(self.sound_speed),
            source_level_db=float(self.source_level), absorption_db_per_m=self.absorption_db_per_m(fixed_absorption),
            bandwidth_hz=float(self.bandwidth), beam_width_rad=math.radians(self.beam_width),
            beam_taper=self.beam_taper, beam_steering=self.beam_steering,
            element_width=float(self.element_width), pulse_taper=self.pulse_taper, sidelobe_db=float(self.sidelobe_level), psf_extent=float(self.psf_extent),
            noise_level_db=None if self.noise_level is None else float(self.noise_level),
            post_tvg_noise_db=None if self.post_tvg_noise_level is None else float(self.post_tvg_noise_level),
            volume_scattering_db=None if self.volume_scattering is None else float(self.volume_scattering),
            tvg_law=self.tvg, tvg_gain_db=float(self.tvg_gain),
            agc_level_db=None if self.agc_level is None else float(self.agc_level), normalisation=normalisation,
            jitter=bool(self.jitter), seed=int(seed), multipath=self.multipath_settings())


@dataclasses.dataclass(frozen=True)
class DeviceDisplayFields:
    """Display fields of the device chain (sensors whose 8-bit image is a polar or fan image).

    Attributes:
        display: 8-bit mapping, "linear" (clip(255 gain z^gamma)) or "db" (window [display_floor,
            display_floor + dynamic_range] dB, then gamma).
        display_floor: level shown black in "db" display (dB, same reference as the image).
        dynamic_range: span of the "db" display window (dB).
        colormap: colour map of ``to_rgb`` renders ("gray", "copper", "hot", "amber").
    """

    display: Literal["linear", "db"] = "linear"
    display_floor: float = 60.0
    dynamic_range: float = 60.0
    colormap: Literal["gray", "copper", "hot", "amber"] = "gray"

    def require_finite_display_numbers(self, owner: str) -> None:
        """``display_floor`` and ``dynamic_range`` finite, whatever the model (see
        :meth:`DeviceChainFields.require_finite_device_numbers`)."""
        for name in ("display_floor", "dynamic_range"):
            require_finite(getattr(self, name), owner, name)

    def validate_device_display(self, owner: str) -> None:
        """Check the display fields (ConfigError naming the field)."""
        self.require_finite_display_numbers(owner)
        for name, allowed in (("display", ("linear", "db")), ("colormap", COLORMAPS)):
            require(getattr(self, name) in allowed, owner, name,
                    f"must be one of {list(allowed)}, got {getattr(self, name)!r}")
        require(self.dynamic_range > 0.0, owner, "dynamic_range", f"must be > 0 dB, got {self.dynamic_range}")
