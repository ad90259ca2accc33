"""Device presets of the acoustic sensors (the device chain, ``model = "device"``), with the source of every field.

Each table maps a preset name to ``(config values, summary)``; :data:`FIELD_SOURCES` gives, per sensor kind and
preset, the source of every field of the values. A source reads ``"<kind>: <document or reasoning>"`` with a kind of
:data:`SOURCE_KINDS`:

- ``datasheet`` / ``manual``: the manufacturer's document, named with its number, issue or year;
- ``manufacturer software``: a value hard-coded in the manufacturer's public SDK or viewer;
- ``model file``: a peer simulator's model of the device (DAVE, nps_uw_sensors_gazebo);
- ``paper``: a published paper (the peers' papers in shared/seeds, the absorption formula);
- ``derived``: computed from the fields above by the stated formula;
- ``third-party document``: a public document by a user or integrator of the device that quotes its specification
  (an observatory's data page, an open-source driver's constants, a simulator's documentation), named with its
  address or repository and path;
- ``estimate``: no document in reach states it; the reasoning is given. Values that Sound Metrics, Blueprint
  Subsea, Tritech, EdgeTech, Kongsberg, Norbit or Teledyne publish on their web datasheets but that no stored public
  copy holds (web pages, documentation, code and issues searched, November 2026) read "estimate: <value> as the
  <datasheet> is recalled; no stored copy states it (searched: <what>)", to be checked against the datasheet before
  relying on them;
- ``simulation``: a choice of the simulation, not a property of the device (ray counts, point-spread extent).

Common choices of all device presets:

- absorption from Francois & Garrison (1982) at the preset's frequency, 10 deg C, 35 PSU, 10 m depth, pH 8;
- receiver noise: the thermal noise floor (Mellen 1952, spectrum level -15 + 20 log10 f_kHz dB re 1 uPa^2/Hz)
  in the pulse bandwidth, less the receive array's directivity index DI = 10 log10(4 pi / (theta_h theta_v)),
  plus 6 dB for electronics: :func:`receiver_noise_level`;
- bandwidth B = c / (2 delta_r) from the range resolution delta_r (for a CW pulse of length tau, delta_r = c tau / 2,
  B = 1 / tau); range bins of about the range resolution over the window (the device's sample spacing where known;
  the Oculus and Gemini presets keep 1024 bins, coarser than their millimetre resolution, for memory);
- source levels are published for none of these sonars: :func:`estimated_source_level` gives SL = 10 log10(rho c P /
  (4 pi (1 m)^2 (1 uPa)^2)) + DI_tx for a peak acoustic power P = 30 W (:data:`ASSUMED_ACOUSTIC_POWER`) radiated
  into the transmit fan (Urick, Principles of Underwater Sound, 3rd ed. 1983, ch. 4), so a device's level follows
  its transmit directivity; the BlueView P900 keeps DAVE's 220 dB;
- volume scattering S_v = -80 dB re 1 m^-1 (clear coastal water); point-spread kernels ``PSF_EXTENT`` = 2.26 beam
  widths (range resolutions) each side: a uniform aperture's k-th null lies at k / 0.886 = 1.13 k beam widths,
  so the kernels hold the main lobe and the first side lobe (-13.3 dB) up to the second null (the second side
  lobe, -17.8 dB, is left out for speed); uniform pulse and array tapers (datasheets do not state them); elevation
  pattern of a uniform vertical aperture with the vertical beam width, rays spread over 3x that width so the first
  elevation side lobes see geometry;
- TVG 30 log r + 2 alpha r (a floor seen at grazing incidence fills range-limited cells, whose echo falls as
  r^-3), 0 dB fixed gain; post-TVG noise (the digitiser's) at noise_level + 30 dB in the gained image, the input
  noise after the TVG's 30 dB at 10 m (:data:`POST_TVG_NOISE_GAIN_DB`), so the near field and the shadows hold
  grain, as a recording does;
- display in dB from 27 dB under the post-TVG noise (at most 0.2 % of pure-noise pixels black:
  :data:`DISPLAY_FLOOR_UNDER_NOISE_DB`) up to noise_level + 100 dB (a sediment floor, about 60-85 dB above the noise
  after TVG, sits high in the window; adjust it as a device user does); the ARIS presets keep the ARIS's documented
  80 dB span under that top and put their post-TVG noise 27 dB over its floor (:func:`_display_values`).
"""

from __future__ import annotations

import math
from typing import Any

from oceansim_py.errors import ConfigError

SOUND_SPEED = 1500.0

#: Sea-water density (kg/m^3) of the source-level estimate.
WATER_DENSITY = 1025.0

#: Half-width of the device presets' point-spread kernels, in beam widths (range resolutions): up to the second
#: null of a uniform aperture's pattern, 2 / 0.886.
PSF_EXTENT = 2.26

#: Gain (dB) after which the input noise equals every device preset's post-TVG noise: 30 dB, the presets' TVG gain at
#: 10 m (30 log10 r, absorption aside). Nearer than that the post-TVG noise (the digitiser and what follows it) is
#: what a device's image shows between echoes, in its near field and its shadows; farther, the input noise lifted
#: by the TVG. Devices do not publish their gain staging: an estimate.
POST_TVG_NOISE_GAIN_DB = 30.0

#: Depth (dB) of the dB display's floor under the post-TVG noise: a noise sample's exponential intensity falls
#: 27 dB under its mean with probability 1 - exp(-10^-2.7) = 0.2 %, so at most one pixel in 500 of pure noise is
#: black, as in a device's recording (a real image has under 0.2 % exactly black pixels), while the display keeps
#: its range for the echoes.
DISPLAY_FLOOR_UNDER_NOISE_DB = 27.0

#: Peak acoustic power (W) assumed for every device whose source level is not published.
ASSUMED_ACOUSTIC_POWER = 30.0

#: The kinds a field source may name (module docstring).
SOURCE_KINDS = ("datasheet", "manual", "manufacturer software", "third-party document", "model file", "paper",
                "derived", "estimate", "simulation")

Sources = dict[str, str]
PresetTable = dict[str, tuple[dict[str, Any], str]]

#: Sensor kind -> preset name -> field -> source ("<kind>: <document or reasoning>").
FIELD_SOURCES: dict[str, dict[str, Sources]] = {}


def receiver_noise_level(frequency_hz: float, bandwidth_hz: float, beam_width_deg: float,
                         vertical_beam_deg: float, electronics_db: float = 6.0) -> float:
    """Receiver noise per sample (dB re 1 uPa^2): thermal noise spectrum level -15 + 20 log10 f_kHz (Mellen 1952)
    + 10 log10 B - DI + ``electronics_db``, DI = 10 log10(4 pi / (theta_h theta_v)) (beam widths in rad)."""
    di = 10.0 * math.log10(4.0 * math.pi / (math.radians(beam_width_deg) * math.radians(vertical_beam_deg)))
    return -15.0 + 20.0 * math.log10(frequency_hz / 1000.0) + 10.0 * math.log10(bandwidth_hz) - di + electronics_db


def post_tvg_noise_level(noise_level_db: float) -> float:
    """A preset's post-TVG noise (dB in the image's units after TVG and gain): its input noise after
    :data:`POST_TVG_NOISE_GAIN_DB` of gain, rounded to 0.1 dB."""
    return round(noise_level_db + POST_TVG_NOISE_GAIN_DB, 1)


def display_window(post_tvg_noise_db: float, top_db: float) -> tuple[float, float]:
    """(display_floor, dynamic_range) of a preset's dB display: the floor :data:`DISPLAY_FLOOR_UNDER_NOISE_DB`
    under the post-TVG noise, the top at ``top_db`` (dB, the level shown white), both rounded to 0.1 dB."""
    floor = round(post_tvg_noise_db - DISPLAY_FLOOR_UNDER_NOISE_DB, 1)
    return floor, round(top_db - floor, 1)


def estimated_source_level(tx_width_deg: float, tx_height_deg: float,
                           power_w: float = ASSUMED_ACOUSTIC_POWER) -> float:
    """Source level (dB re 1 uPa at 1 m) of ``power_w`` watts of acoustic power radiated into a transmit fan of
    ``tx_width_deg`` x ``tx_height_deg`` (-3 dB widths): 10 log10(rho c P / (4 pi (1 m)^2 (1 uPa)^2)) + DI_tx,
    DI_tx = 10 log10(4 pi / (theta_w theta_h)) (Urick 1983, ch. 4), rounded to 0.1 dB."""
    omni = 10.0 * math.log10(WATER_DENSITY * SOUND_SPEED * power_w / (4.0 * math.pi) / 1e-12)
    di = 10.0 * math.log10(4.0 * math.pi / (math.radians(tx_width_deg) * math.radians(tx_height_deg)))
    return round(omni + di, 1)


def _source_level_estimate(tx_width_deg: float, tx_height_deg: float) -> tuple[float, str]:
    level = estimated_source_level(tx_width_deg, tx_height_deg)
    return level, (f"estimate: not published; {ASSUMED_ACOUSTIC_POWER:g} W peak acoustic power into the "
                   f"{tx_width_deg:g} x {tx_height_deg:g} deg transmit fan (estimated_source_level, Urick 1983)")


def _register(kind: str, entries: dict[str, tuple[dict[str, Any], Sources, str]]) -> PresetTable:
    """Record the field sources of ``entries`` under ``kind``; return the ``name -> (values, summary)`` table."""
    FIELD_SOURCES[kind] = {name: {field: sources[field] for field in values if field in sources}
                           for name, (values, sources, _summary) in entries.items()}
    return {name: (values, summary) for name, (values, _sources, summary) in entries.items()}


def field_sources(kind: str, preset: str) -> Sources:
    """The source of every field of device preset ``preset`` of sensor ``kind`` (a key of :data:`FIELD_SOURCES`), as a
    new dict (changing it leaves the table as it is); a ``ConfigError`` naming the kinds or presets there are for an
    unknown one (the peer presets, e.g. ``oculus_m750d_peer``, are a peer's model file, not device presets)."""
    if kind not in FIELD_SOURCES:
        raise ConfigError(f"field_sources: no device presets for sensor kind {kind!r}; kinds: {sorted(FIELD_SOURCES)}")
    if preset not in FIELD_SOURCES[kind]:
        raise ConfigError(f"field_sources: {kind!r} has no device preset {preset!r}; device presets: "
                          f"{sorted(FIELD_SOURCES[kind])}")
    return dict(FIELD_SOURCES[kind][preset])


#: Sources of the water, chain and display fields every device preset shares (module docstring).
_COMMON: Sources = {
    "model": "simulation: the acoustic device chain (docs/PHYSICS_ACOUSTIC_CHAIN.md)",
    "sound_speed": "estimate: 1500 m/s, the nominal sea-water sound speed of datasheet range conversions",
    "absorption_model": "paper: Francois & Garrison (1982), J. Acoust. Soc. Am. 72(6), 1879-1890",
    "temperature": "estimate: 10 deg C, temperate coastal water (absorption input)",
    "salinity": "estimate: 35 PSU, sea water (absorption input)",
    "depth": "estimate: 10 m, a shallow survey or ROV depth (absorption input)",
    "ph": "estimate: pH 8, sea water (absorption input)",
    "volume_scattering": "estimate: S_v = -80 dB re 1 m^-1, clear coastal water (docs/PHYSICS_ACOUSTIC_CHAIN.md §2)",
    "psf_extent": "simulation: point-spread kernels to a uniform aperture's second null, 2 / 0.886 widths",
    "tvg": "estimate: 30 log r + 2 alpha r, level for range-limited floor cells (echo ~ r^-3)",
    "tvg_gain": "estimate: 0 dB fixed gain",
    "normalisation": "simulation: none, the device chain keeps physical units",
    "aggregation": "simulation: complex returns summed within a cell (coherent speckle)",
    "multiplicative_sigma": "simulation: the peers' noise off (the chain's speckle replaces it)",
    "additive_sigma": "simulation: the peers' noise off (the chain's receiver noise replaces it)",
    "additive_range_scaled": "simulation: the peers' noise off",
    "range_noise": "simulation: no added range noise (range spread comes from the pulse)",
    "angle_noise": "simulation: no added angle noise (bearing spread comes from the beam pattern)",
    "display": "estimate: dB display, as the manufacturers' viewers (gain and range controls)",
    "colormap": "estimate: amber, close to the default palettes of FLS viewers",
    "post_tvg_noise_level": ("estimate: unpublished gain staging; noise_level + 30 dB, the input noise after the "
                             "TVG's gain at 10 m (POST_TVG_NOISE_GAIN_DB)"),
    "dynamic_range": ("derived: from the display floor to noise_level + 100 dB (a sediment floor after TVG, ~60 dB "
                      "over the noise, sits high in the window; a viewer's range control)"),
    "display_floor": ("derived: post_tvg_noise_level - 27 dB, so noise shows as grain and at most 0.2 % of its "
                      "pixels are black (display_window)"),
    "db_range": ("derived: from the display floor to noise_level + 100 dB, as the imaging presets' dynamic_range (a "
                 "viewer's range control)"),
    "elevation_pattern": "estimate: uniform vertical aperture with the vertical beam width (taper unpublished)",
    "elevation_span": "simulation: rays over 3 x the vertical beam width, so its first side lobes see geometry",
}


def _resolution_sources(resolution_source: str) -> Sources:
    return {"bandwidth": f"derived: B = c / (2 delta_r), delta_r from {resolution_source}",
            "noise_level": "derived: thermal floor (Mellen 1952) in B, less the receive DI, + 6 dB electronics"}


#: The source of ``beam_steering: flat_array`` for the electronically beamformed sonars.
_FLAT_ARRAY = ("estimate: beams formed electronically on a flat receive array, as the maker describes its beamforming; "
               "its one published beam width is taken as the broadside one, and a steered flat array's beams widen as "
               "1 / cos(theta) (docs/PHYSICS_ACOUSTIC_CHAIN.md §3)")
#: The source of ``element_width`` for those sonars.
_ELEMENT_WIDTH = ("estimate: half-wavelength elements (unpublished), the widest pitch at which a flat array steers "
                  "across its fan without grating lobes")


def _steering_values(steering: tuple[str, str]) -> tuple[dict[str, Any], Sources]:
    """``beam_steering`` (and, for a flat array, ``element_width``) with their sources."""
    if steering[0] == "flat_array":
        return ({"beam_steering": "flat_array", "element_width": 0.5},
                {"beam_steering": steering[1], "element_width": _ELEMENT_WIDTH})
    return {"beam_steering": steering[0]}, {"beam_steering": steering[1]}


def _display_values(noise: float, window: float, level: float, hfov: float, vfov: float,
                    span: tuple[float, str] | None = None) -> tuple[dict[str, float], Sources]:
    """A preset's ``post_tvg_noise_level``, ``display_floor`` and ``dynamic_range`` (:func:`post_tvg_noise_level`,
    :func:`display_window`) with their sources. The window's top (white) is ``window`` dB over noise_level + 40 dB,
    widened by a source level's excess over this fan's estimate (:func:`_source_level_estimate`) so that it stays
    the same height over the echoes, which are that much louder: DAVE's 220 dB BlueView P900 saturated 26-36 % of
    its image on the tank and pier with the common top. ``span``: a device's documented (dynamic_range, source)
    instead, below the same top; its post-TVG noise then lies :data:`DISPLAY_FLOOR_UNDER_NOISE_DB` over the span's
    floor where that is above :func:`post_tvg_noise_level` (a device whose data hold a fixed span shows its noise in
    it)."""
    post = post_tvg_noise_level(noise)
    excess = round(max(0.0, level - _source_level_estimate(hfov, vfov)[0]), 1)
    top = noise + 40.0 + window + excess
    if span is not None:
        floor = round(top - span[0], 1)
        if floor + DISPLAY_FLOOR_UNDER_NOISE_DB > post:
            post = round(floor + DISPLAY_FLOOR_UNDER_NOISE_DB, 1)
            post_source = (f"derived: display_floor + {DISPLAY_FLOOR_UNDER_NOISE_DB:g} dB (noise_level + "
                           f"{post - noise:g} dB), so the noise shows inside the data's fixed {span[0]:g} dB span "
                           f"with at most 0.2 % of its pixels black, as in a recording")
            return ({"post_tvg_noise_level": post, "display_floor": floor, "dynamic_range": span[0]},
                    {"dynamic_range": span[1], "post_tvg_noise_level": post_source,
                     "display_floor": f"derived: noise_level + {40.0 + window:g} dB (the white of every imaging "
                                      f"preset) less the {span[0]:g} dB span"})
        return ({"post_tvg_noise_level": post, "display_floor": display_window(post, top)[0],
                 "dynamic_range": span[0]}, {"dynamic_range": span[1]})
    floor, dynamic_range = display_window(post, top)
    widened = f", widened by {excess:g} dB, the source level's excess over this fan's 30 W estimate" if excess else ""
    return ({"post_tvg_noise_level": post, "display_floor": floor, "dynamic_range": dynamic_range},
            {"dynamic_range": f"derived: from the display floor to noise_level + {40.0 + window:g} dB{widened} (a "
                              f"sediment floor after TVG, ~60 dB over the noise, sits high in the window; a viewer's "
                              f"range control)"})


def _fls(frequency: float, hfov: float, vfov: float, beams: int, beam_width: float, resolution: float,
         min_range: float, max_range: float, range_bins: int, rays_per_beam: int, elevation_rays: int,
         src: Sources, source_level: tuple[float, str] | None = None,
         steering: tuple[str, str] = ("flat_array", _FLAT_ARRAY),
         display_span: tuple[float, str] | None = None) -> tuple[dict[str, Any], Sources]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    noise = round(receiver_noise_level(frequency, bandwidth, beam_width, vfov), 1)
    level, level_source = source_level or _source_level_estimate(hfov, vfov)
    display, display_source = _display_values(noise, 60.0, level, hfov, vfov, display_span)
    values = dict(
        model="device", horizontal_fov=hfov, vertical_fov=vfov, n_beams=beams, beam_width=beam_width,
        **_steering_values(steering)[0], min_range=min_range, max_range=max_range, range_bins=range_bins, rays_per_beam=rays_per_beam,
        elevation_rays=elevation_rays, elevation_pattern="array", elevation_span=min(3.0 * vfov, 179.0),
        frequency=frequency, bandwidth=round(bandwidth, 1), source_level=level,
        sound_speed=SOUND_SPEED, absorption_model="francois_garrison", temperature=10.0, salinity=35.0,
        depth=10.0, ph=8.0, noise_level=noise,
        psf_extent=PSF_EXTENT, volume_scattering=-80.0, tvg="30log", tvg_gain=0.0, aggregation="sum",
        normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0, additive_range_scaled=False,
        display="db", **display, colormap="amber",
    )
    sources = {**_COMMON, **_resolution_sources(src.pop("resolution")), "source_level": level_source,
               **_steering_values(steering)[1], **display_source,
               "rays_per_beam": "simulation: rays across each beam (bearing sampling)",
               "elevation_rays": "simulation: rays in elevation over elevation_span (jittered, stratified)", **src}
    return values, sources


_ARIS_SDK = "manufacturer software: Sound Metrics aris-integration-sdk, SystemConfiguration (2010-2022)"
_ARIS_BEAMS = ("manufacturer software: Sound Metrics aris-file-sdk beam-width-metrics/ (per beam its centre and "
               "left / right edges, averaged from measured beam patterns; docs/understanding-aris-data.md names them "
               "the 'Beam Width Source' of each lens and beam count)")
#: Ocean Networks Canada's data page of its ARIS and DIDSON sonars (2017, revised 2022).
_ARIS_ONC = ("third-party document: Ocean Networks Canada, 'Sound Metrics Sonar Data', "
             "https://wiki.oceannetworks.ca/display/DP/119 ('Both ARIS and Didson operate with centre frequencies "
             "from 1 to 3 MHz, with 128 beams over a swatch that covers 28 degrees horizontally and 14 degrees "
             "vertically')")
_ARIS_SEARCHED = ("stored web pages, docs, code and issues for 'ARIS Explorer 1800 / 3000 specifications', "
                  "'identification range', 'detection range', 'beam width'; SoundMetrics/aris-file-sdk and "
                  "aris-integration-sdk hold window limits, not these ranges")


def _recalled(document: str, value: str, searched: str) -> str:
    """The source of a value that no stored public document states: what it is, the document it is recalled from,
    and what was searched for it."""
    return f"estimate: {value} as the {document} is recalled; no stored copy states it (searched: {searched})"


def _aris(frequency: float, hfov: float, beams: int, beam_width: float, pulse_us: float, max_range: float,
          range_bins: int, rays_per_beam: int, src: Sources) -> tuple[dict[str, Any], Sources]:
    """An ARIS mode: range resolution c tau / 2 of a CW pulse of ``pulse_us`` microseconds."""
    return _fls(frequency, hfov, 14.0, beams, beam_width, SOUND_SPEED * pulse_us * 1e-6 / 2.0, 0.7, max_range,
                range_bins, rays_per_beam, 128, {
                    "vertical_fov": f"{_ARIS_ONC}: 14 deg",
                    "min_range": f"{_ARIS_SDK}: WindowStartLimits from 0.7 m", **src},
                steering=("constant", f"{_ARIS_BEAMS}: the ARIS forms its beams with an acoustic lens (the beam-width "
                                      f"files are per lens), not by steering a flat array; every beam is given the "
                                      f"mean width"),
                display_span=(80.0, "manufacturer software: Sound Metrics aris-file-sdk docs/understanding-aris-data.md "
                                    "(each sample 'one unsigned byte in the range 0-255; this range maps to an "
                                    "acoustic signal in the range 0-80 dB')"))


#: apl-ocean-engineering/liboculus, the University of Washington APL driver of the Oculus sonars:
#: include/liboculus/Constants.h, per-model constants (the "alt_constants" API, liboculus issue #27, Oct 2023).
_LIBOCULUS = "third-party document: apl-ocean-engineering/liboculus include/liboculus/Constants.h"
_OCULUS_MANUAL = ("manual: Blueprint Subsea Oculus M-Series Sonar User Manual (P/N BP01222, March 2017) §1, "
                  "manualshive.com/en/manual/blueprint-subsea/m1200d/2777813?page=5 ('acoustically illuminating a "
                  "sector up to 130° horizontally and 20° vertically depending on the selected frequency mode')")
_OCULUS_BEAMS = f"{_LIBOCULUS}: FlagBits::Do512Beams ('use 512 beams (vs 256)')"
#: A user quoting the M1200d datasheet in Field-Robotics-Lab/nps_uw_multibeam_sonar issue #54 (2022).
_M1200D_10M = ("also Field-Robotics-Lab/nps_uw_multibeam_sonar issue #54: 'In the oculus M1200d datasheet, it stated "
               "that the maximum distance is 10m for 2.1MHz settings'")
_OCULUS_SEARCHED = ("stored web pages, docs, code and issues for 'Oculus M750d / M1200d specifications', 'range "
                    "resolution', 'horizontal aperture', 'minimum range'; liboculus, oculus_ros2 and the Oculus "
                    "M-Series user manual state beam widths and maximum ranges only")
_OCULUS_DOC = "Blueprint Subsea Oculus M-series datasheet"
_DAVE = "model file: DAVE / nps_uw_sensors_gazebo model files (docs/PHYSICS.md §2)"
#: DAVE's documentation of its BlueView P900-90 model.
_DAVE_DOC = "third-party document: Field-Robotics-Lab/dave.doc contents/fls_model_standalone.md"
#: The BlueView P900's source level: DAVE's value (Urick's relation makes it ~3.5 kW into the 90 x 20 deg fan).
_P900_LEVEL = (220.0, f"{_DAVE}: blueview_p900 220 dB (~3.5 kW peak acoustic power by Urick's relation: high)")
_P900_SEARCHED = ("stored web pages, docs, code and issues for 'BlueView P900-90 specifications', 'range "
                  "resolution', 'beam width'; the nearest statement is DAVE's documentation")
_P900_VERTICAL = (f"{_DAVE_DOC}: 20 deg (the model's 'height of 114 (corresponding to 20 degree vertical FOV)'); "
                  f"IOES-Lab/ROS2_Lyrical_MacOS_Native_AppleSilicon notes/upstream/submit/updaterate.md quotes the "
                  f"Teledyne BlueView P900 Series datasheet: '1° × 20°' beam width (P900-130)")
_P900_BEAM = f"{_DAVE_DOC}: 1 deg ('Beam width, 90 x 1 degrees'; 'Beam spacing 0.18 degrees')"
_P900_RESOLUTION = (f"{_DAVE_DOC} states 'Range resolution 2.45 cm'; 2.5 cm kept (2 % apart, within a bin; the "
                    f"stored source is DAVE's, not Teledyne's)")


def _fls_window(max_range: float, range_bins: int, resolution: float, why: str) -> Sources:
    return {"max_range": why, "range_bins": f"simulation: {range_bins} bins over the window "
                                            f"({max_range / range_bins * 100:.1f} cm, datasheet resolution "
                                            f"{resolution * 1000:g} mm: bins chosen for memory, not sampled at 2 B)"}


_GEMINI_SEARCHED = ("stored web pages, docs, code and issues for 'Gemini 720i specifications', 'range resolution', "
                    "'number of beams'; the Gemini 720is product manual 0703-SOM-00002 §2.1 and Tritech's Gemini "
                    "SDK headers are stored, no 720i datasheet")


_IMAGING: dict[str, tuple[dict[str, Any], Sources]] = {
    # ARIS Explorer 1800, 1.8 MHz, 96 beams (ping mode 3). Pulse: the SDK's default 14 us at 1.8 MHz -> 1.05 cm.
    # 1250 samples: the SDK's default sample count (0.7-15 m: 15.3 us per sample, within its 4-20 us).
    "aris1800_1800khz": _aris(1.8e6, 28.0, 96, 0.29, 14.0, 15.0, 1250, 8, {
        "frequency": f"{_ARIS_SDK}: Aris1800 FrequencyHigh 1.8 MHz",
        "n_beams": f"{_ARIS_SDK}: PingMode3 = 96 channels",
        "horizontal_fov": f"{_ARIS_BEAMS}: BeamWidths_ARIS1800_96.h beam edges -13.86 to 13.98 deg (28 deg)",
        "beam_width": f"{_ARIS_BEAMS}: BeamWidths_ARIS1800_96.h, 27.84 deg of edges over 96 beams = 0.29 deg "
                      f"mean (0.21-0.35 deg)",
        "resolution": f"{_ARIS_SDK}: MakeDefaultSettings1800 pulse width 14 us (c tau / 2 = 1.05 cm)",
        "max_range": _recalled("Sound Metrics ARIS Explorer 1800 datasheet", "15 m identification range (SDK window "
                               "end up to 50 m)", _ARIS_SEARCHED),
        "range_bins": f"{_ARIS_SDK}: default sample count 1250 (15.3 us per sample over 0.7-15 m)"}),
    # Detection mode: 1.1 MHz, 48 beams (ping mode 1); the SDK's longest 1.1 MHz pulse setting ("wide", 24 us)
    # for the long window; samples at the SDK's longest period (20 us = 1.5 cm) -> 2300 over 0.7-35 m.
    "aris1800_1100khz": _aris(1.1e6, 28.0, 48, 0.57, 24.0, 35.0, 2300, 16, {
        "frequency": f"{_ARIS_SDK}: Aris1800 FrequencyLow 1.1 MHz",
        "n_beams": f"{_ARIS_SDK}: PingMode1 = 48 channels",
        "horizontal_fov": f"{_ARIS_BEAMS}: BeamWidths_ARIS1800_1200_48.h beam edges -13.79 to 13.79 deg (28 deg)",
        "beam_width": f"{_ARIS_BEAMS}: BeamWidths_ARIS1800_1200_48.h, 27.58 deg of edges over 48 beams = 0.57 deg "
                      f"mean (0.43-0.69 deg)",
        "resolution": f"{_ARIS_SDK}: PulseWidthLimitsLowFrequency wide = 24 us (c tau / 2 = 1.8 cm)",
        "max_range": _recalled("Sound Metrics ARIS Explorer 1800 datasheet", "35 m detection range (SDK window "
                               "end up to 50 m)", _ARIS_SEARCHED),
        "range_bins": f"{_ARIS_SDK}: 1.5 cm per sample at its longest 20 us sample period over 0.7-35 m"}),
    # ARIS Explorer 3000, 3.0 MHz, 128 beams (ping mode 9): the SDK's default 5 us pulse -> 3.75 mm; 1250 samples
    # over 0.7-5 m (4.6 us per sample, within its 4-12 us).
    "aris3000_3000khz": _aris(3.0e6, 30.0, 128, 0.23, 5.0, 5.0, 1250, 6, {
        "frequency": f"{_ARIS_SDK}: Aris3000 FrequencyHigh 3.0 MHz",
        "n_beams": f"{_ARIS_SDK}: PingMode9 = 128 channels",
        "horizontal_fov": f"{_ARIS_BEAMS}: BeamWidths_ARIS3000_128.h beam edges -14.83 to 14.83 deg (30 deg)",
        "beam_width": f"{_ARIS_BEAMS}: BeamWidths_ARIS3000_128.h, 29.66 deg of edges over 128 beams = 0.23 deg "
                      f"mean (0.22-0.25 deg)",
        "resolution": f"{_ARIS_SDK}: MakeDefaultSettings3000 pulse width 5 us (c tau / 2 = 3.75 mm)",
        "max_range": _recalled("Sound Metrics ARIS Explorer 3000 datasheet", "5 m identification range (SDK window "
                               "end up to 20 m)", _ARIS_SEARCHED),
        "range_bins": f"{_ARIS_SDK}: default sample count 1250 (4.6 us per sample over 0.7-5 m)"}),
    # Detection mode: 1.8 MHz, same 128 beams; the receive aperture is the 3 MHz one, so the beam widens by
    # 3.0 / 1.8: 0.23 -> 0.38 deg. Pulse 14 us (the ARIS 1800's 1.8 MHz default, inside the 3000's 6-24 us
    # 1.8 MHz limits); samples at the SDK's longest period (12 us = 9 mm) -> 1600 over 0.7-15 m.
    "aris3000_1800khz": _aris(1.8e6, 30.0, 128, 0.38, 14.0, 15.0, 1600, 6, {
        "frequency": f"{_ARIS_SDK}: Aris3000 FrequencyLow 1.8 MHz",
        "n_beams": f"{_ARIS_SDK}: PingMode9 = 128 channels",
        "horizontal_fov": f"{_ARIS_BEAMS}: BeamWidths_ARIS3000_128.h beam edges -14.83 to 14.83 deg (30 deg)",
        "beam_width": "derived: the 3 MHz beam (0.23 deg, BeamWidths_ARIS3000_128.h) x 3.0 / 1.8 = 0.38 deg, the "
                      "same aperture (beam width ~ lambda / L)",
        "resolution": "estimate: 14 us (1.05 cm), the SDK's ARIS 1800 default at 1.8 MHz, within the SDK's "
                      "6-24 us ARIS 3000 1.8 MHz pulse limits",
        "max_range": _recalled("Sound Metrics ARIS Explorer 3000 datasheet", "15 m detection range (SDK window "
                               "end up to 20 m)", _ARIS_SEARCHED),
        "range_bins": f"{_ARIS_SDK}: 9 mm per sample at its longest 12 us sample period over 0.7-15 m"}),
    "oculus_m750d_750khz": _fls(750e3, 130.0, 20.0, 512, 1.0, 0.004, 0.1, 30.0, 1024, 2, 96, {
        "frequency": f"{_LIBOCULUS}: namespace Oculus_M750d::Freq_750kHz (pings at 650-850 kHz take its constants)",
        "horizontal_fov": _OCULUS_MANUAL,
        "vertical_fov": f"{_LIBOCULUS}: Oculus_M750d::Freq_750kHz ElevationBeamwidthDeg = 20.0 (also {_OCULUS_MANUAL})",
        "n_beams": f"{_OCULUS_BEAMS} (VideoRay's Oculus training: 'the Oculus actually emits 512 focused beams')",
        "beam_width": f"{_LIBOCULUS}: Oculus_M750d::Freq_750kHz AzimuthBeamwidthDeg = 1.0",
        "resolution": _recalled(_OCULUS_DOC, "4 mm", _OCULUS_SEARCHED),
        "min_range": _recalled(_OCULUS_DOC, "0.1 m", _OCULUS_SEARCHED),
        **_fls_window(30.0, 1024, 0.004, f"estimate: a 30 m working window inside the 120 m maximum ({_LIBOCULUS}: "
                                         f"Oculus_M750d::Freq_750kHz MaxRange = 120)")}),
    "oculus_m750d_1200khz": _fls(1.2e6, 70.0, 12.0, 512, 0.6, 0.0025, 0.1, 20.0, 1024, 2, 96, {
        "frequency": f"{_LIBOCULUS}: namespace Oculus_M750d::Freq_1200kHz",
        "horizontal_fov": _recalled(_OCULUS_DOC, "70 deg", _OCULUS_SEARCHED + "; the user manual's playback example "
                                    "shows a high-frequency image '80° wide rather than 130°' without naming the "
                                    "model"),
        "vertical_fov": f"{_LIBOCULUS}: Oculus_M750d::Freq_1200kHz ElevationBeamwidthDeg = 12.0 (liboculus issue "
                        f"#27: 12 deg on older M750d units, 20 deg on newer ones)",
        "n_beams": _OCULUS_BEAMS,
        "beam_width": f"{_LIBOCULUS}: Oculus_M750d::Freq_1200kHz AzimuthBeamwidthDeg = 0.6",
        "resolution": _recalled(_OCULUS_DOC, "2.5 mm", _OCULUS_SEARCHED),
        "min_range": _recalled(_OCULUS_DOC, "0.1 m", _OCULUS_SEARCHED),
        **_fls_window(20.0, 1024, 0.0025, f"estimate: a 20 m working window inside the 40 m maximum ({_LIBOCULUS}: "
                                          f"Oculus_M750d::Freq_1200kHz MaxRange = 40)")}),
    "oculus_m1200d_1200khz": _fls(1.2e6, 130.0, 20.0, 512, 0.6, 0.0025, 0.1, 20.0, 1024, 2, 96, {
        "frequency": f"{_LIBOCULUS}: namespace Oculus_M1200d::Freq_1200kHz (pings at 1.1-1.3 MHz take its "
                     f"constants)",
        "horizontal_fov": _OCULUS_MANUAL,
        "vertical_fov": f"{_LIBOCULUS}: Oculus_M1200d::Freq_1200kHz ElevationBeamwidthDeg = 20.0 (also "
                        f"{_OCULUS_MANUAL})",
        "n_beams": _OCULUS_BEAMS,
        "beam_width": f"{_LIBOCULUS}: Oculus_M1200d::Freq_1200kHz AzimuthBeamwidthDeg = 0.6",
        "resolution": _recalled(_OCULUS_DOC, "2.5 mm", _OCULUS_SEARCHED),
        "min_range": _recalled(_OCULUS_DOC, "0.1 m", _OCULUS_SEARCHED),
        **_fls_window(20.0, 1024, 0.0025, f"estimate: a 20 m working window inside the 40 m maximum ({_LIBOCULUS}: "
                                          f"Oculus_M1200d::Freq_1200kHz MaxRange = 40; its comment: 30 m on the "
                                          f"older generation)")}),
    # The -3 dB bandwidth of the 2.5 mm resolution (300 kHz), as the multibeam preset of the same mode: DAVE's
    # 265.5 kHz is its Gaussian b, not a -3 dB bandwidth (docs/PHYSICS_ACOUSTIC_CHAIN.md §8).
    "oculus_m1200d_2100khz": _fls(2.1e6, 60.0, 12.0, 256, 0.4, 0.0025, 0.1, 10.0, 1024, 4, 96, {
        "frequency": f"{_LIBOCULUS}: namespace Oculus_M1200d::Freq_2100kHz (pings above 2 MHz take its constants; "
                     f"also the DAVE model file's 2.1 MHz)",
        "horizontal_fov": f"{_DAVE}: oculus_m1200d 60 deg",
        "vertical_fov": f"{_LIBOCULUS}: Oculus_M1200d::Freq_2100kHz ElevationBeamwidthDeg = 12.0",
        "n_beams": f"{_DAVE}: oculus_m1200d 256 beams ({_OCULUS_BEAMS}: 256 is the device's other setting)",
        "beam_width": f"{_LIBOCULUS}: Oculus_M1200d::Freq_2100kHz AzimuthBeamwidthDeg = 0.4",
        "resolution": _recalled(_OCULUS_DOC, "2.5 mm", _OCULUS_SEARCHED + " (DAVE's 265.5 kHz is a Gaussian b, "
                                "not used)"),
        "min_range": _recalled(_OCULUS_DOC, "0.1 m", _OCULUS_SEARCHED),
        **_fls_window(10.0, 1024, 0.0025, f"{_LIBOCULUS}: Oculus_M1200d::Freq_2100kHz MaxRange = 10 ({_M1200D_10M})")}),
    # Gemini: the stored Tritech manual is the 720is's (0703-SOM-00002): 720 kHz, 120 deg sector (the 130 deg of
    # the earlier preset is the Gemini Narrow Beam Imager's), 20 deg vertical, 1.0 deg acoustic / 0.25 deg
    # effective resolution (512 beams over 120 deg = 0.23 deg).
    "gemini_720i": _fls(720e3, 120.0, 20.0, 512, 1.0, 0.008, 0.2, 50.0, 1024, 2, 96, {
        "frequency": "manual: Tritech Gemini 720is Product Manual 0703-SOM-00002 §2.1, 720 kHz",
        "horizontal_fov": "manual: Tritech 0703-SOM-00002 §2.1 scanning sector 120 deg (130 deg: the Gemini "
                          "Narrow Beam Imager, §7.2)",
        "vertical_fov": "manual: Tritech 0703-SOM-00002 §2.1 vertical beam width 20 deg",
        "beam_width": "manual: Tritech 0703-SOM-00002 §2.1 angular resolution 1.0 deg acoustic",
        "n_beams": "derived: 0.25 deg effective resolution (0703-SOM-00002 §2.1) over 120 deg ~ 480; 512 as the "
                   "Gemini datasheet is recalled (the stored §2.1 excerpts name 'Number of Beams' without its value; "
                   f"searched: {_GEMINI_SEARCHED})",
        "resolution": _recalled("Tritech Gemini 720i datasheet", "8 mm", _GEMINI_SEARCHED),
        "min_range": _recalled("Tritech Gemini 720i datasheet", "0.2 m", _GEMINI_SEARCHED),
        **_fls_window(50.0, 1024, 0.008, _recalled("Tritech Gemini 720i datasheet", "a 50 m window inside a 120 m "
                                                   "maximum range", _GEMINI_SEARCHED))}),
    "blueview_p900": _fls(900e3, 90.0, 20.0, 512, 1.0, 0.025, 0.2, 10.0, 400, 2, 96, {
        "frequency": f"{_DAVE}: blueview_p900 900 kHz", "horizontal_fov": f"{_DAVE}: blueview_p900 90 deg",
        "vertical_fov": _P900_VERTICAL,
        "n_beams": f"{_DAVE}: blueview_p900 512 beams",
        "beam_width": _P900_BEAM,
        "resolution": f"{_P900_RESOLUTION} (DAVE's 29.9 kHz is its Gaussian b)",
        "min_range": "estimate: 0.2 m, the peer preset's", "max_range": f"{_DAVE}: blueview_p900 10 m",
        "range_bins": "derived: 9.8 m window / 2.5 cm resolution = 392, rounded to 400"},
        source_level=_P900_LEVEL),
}

#: Imaging-sonar device presets: name -> (config values, summary of its sources).
IMAGING_SONAR_DEVICE_PRESETS: PresetTable = _register("imaging_sonar", {
    "aris1800_1800khz": (*_IMAGING["aris1800_1800khz"],
                         "Sound Metrics ARIS Explorer 1800, 1.8 MHz identification mode: frequency, 96 beams, 0.7 m "
                         "start, 14 us pulse (1.05 cm) and 1250 samples from Sound Metrics' SDK; fan and 0.29 deg "
                         "beams from its beam-width files; 14 deg vertical from Ocean Networks Canada's ARIS data "
                         "page; 15 m as the datasheet (recalled, not in the stored corpora); source level chosen "
                         "here (estimate). Field sources: FIELD_SOURCES['imaging_sonar']."),
    "aris1800_1100khz": (*_IMAGING["aris1800_1100khz"],
                         "Sound Metrics ARIS Explorer 1800, 1.1 MHz detection mode: frequency, 48 beams and a 24 us "
                         "pulse (1.8 cm) from the SDK; 0.57 deg beams from its beam-width file; 14 deg from Ocean "
                         "Networks Canada; 35 m as the datasheet (recalled); bins at the SDK's longest sample "
                         "period; source level chosen here."),
    "aris3000_3000khz": (*_IMAGING["aris3000_3000khz"],
                         "Sound Metrics ARIS Explorer 3000, 3.0 MHz identification mode: frequency, 128 beams, 5 us "
                         "pulse (3.75 mm) and 1250 samples from the SDK; 30 deg fan and 0.23 deg beams from its "
                         "beam-width file; 14 deg from Ocean Networks Canada; 5 m as the datasheet (recalled); "
                         "source level chosen here."),
    "aris3000_1800khz": (*_IMAGING["aris3000_1800khz"],
                         "Sound Metrics ARIS Explorer 3000, 1.8 MHz detection mode: frequency and 128 beams from the "
                         "SDK; beam width scaled from the 3 MHz beam by the wavelength; 15 m as the datasheet "
                         "(recalled); pulse, bins and source level chosen here."),
    "oculus_m750d_750khz": (*_IMAGING["oculus_m750d_750khz"],
                            "Blueprint Subsea Oculus M750d, 750 kHz mode: 130 x 20 deg (Oculus user manual), 1 x 20 "
                            "deg beams and 120 m maximum (liboculus Constants.h), 512 beams (liboculus); 4 mm and "
                            "0.1 m as the datasheet (recalled, no stored copy); 30 m window, bins and source level "
                            "chosen here."),
    "oculus_m750d_1200khz": (*_IMAGING["oculus_m750d_1200khz"],
                             "Blueprint Subsea Oculus M750d, 1.2 MHz mode: 0.6 x 12 deg beams and 40 m maximum "
                             "(liboculus Constants.h), 512 beams; 70 deg, 2.5 mm, 0.1 m as the datasheet (recalled, "
                             "no stored copy); 20 m window chosen here."),
    "oculus_m1200d_1200khz": (*_IMAGING["oculus_m1200d_1200khz"],
                              "Blueprint Subsea Oculus M1200d, 1.2 MHz mode: 130 x 20 deg (Oculus user manual), "
                              "0.6 x 20 deg beams and 40 m maximum (liboculus Constants.h), 512 beams; 2.5 mm and "
                              "0.1 m as the datasheet (recalled); 20 m window chosen here."),
    "oculus_m1200d_2100khz": (*_IMAGING["oculus_m1200d_2100khz"],
                              "Blueprint Subsea Oculus M1200d, 2.1 MHz mode: 60 deg and 256 beams from the DAVE "
                              "model file; 0.4 x 12 deg beams and 10 m (liboculus Constants.h); 2.5 mm (B = 300 kHz) "
                              "as the datasheet (recalled); source level chosen here."),
    "gemini_720i": (*_IMAGING["gemini_720i"],
                    "Tritech Gemini 720i: 720 kHz, 120 x 20 deg, 1 deg acoustic / 0.25 deg effective from the Gemini "
                    "720is product manual 0703-SOM-00002 (no 720i datasheet stored); 512 beams, 8 mm, 0.2 m as the "
                    "datasheet (recalled); 50 m window and source level chosen here."),
    "blueview_p900": (*_IMAGING["blueview_p900"],
                      "Teledyne BlueView P900-90: 900 kHz, 90 deg, 512 beams, 10 m and 220 dB from the DAVE model "
                      "file; 1 x 20 deg beams from DAVE's documentation of the P900-90 (and a quoted P900 Series "
                      "datasheet); 2.5 cm (B = 30 kHz) kept against DAVE's documented 2.45 cm (no Teledyne datasheet "
                      "stored)."),
})

#: "oculus_m750d" is the M750d in its default (750 kHz) mode; the peer model of that fan is "oculus_m750d_peer".
IMAGING_SONAR_DEVICE_PRESETS["oculus_m750d"] = (
    IMAGING_SONAR_DEVICE_PRESETS["oculus_m750d_750khz"][0],
    "The Oculus M750d in its 750 kHz mode: the same values and sources as oculus_m750d_750khz (Oculus user manual, "
    "liboculus Constants.h; 4 mm and 0.1 m as the datasheet, recalled).")
FIELD_SOURCES["imaging_sonar"]["oculus_m750d"] = FIELD_SOURCES["imaging_sonar"]["oculus_m750d_750khz"]


def _fan_display(noise: float) -> dict[str, float]:
    """``display_floor`` and ``db_range`` of a side-scan, profiling or single-beam device preset: the imaging presets'
    window (:func:`display_window`), black 27 dB under the post-TVG noise (noise_level + 3 dB), white at noise_level +
    100 dB. Their former window, 50 dB under each image's maximum, put the post-TVG noise 80 dB under the white of a
    floor 10 m below: the whole water column was exactly 0 (side-scan, profiling and single-beam alike)."""
    floor, span = display_window(post_tvg_noise_level(noise), noise + 100.0)
    return {"display_floor": floor, "db_range": span}


def _sidescan(frequency: float, along_track_beamwidth: float, vertical_beamwidth: float, depression: float,
              resolution: float, max_range: float, range_bins: int, across_track_rays: int,
              src: Sources) -> tuple[dict[str, Any], Sources]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    level, level_source = _source_level_estimate(along_track_beamwidth, vertical_beamwidth)
    noise = round(receiver_noise_level(frequency, bandwidth, along_track_beamwidth, vertical_beamwidth), 1)
    values = dict(
        model="device", along_track_beamwidth=along_track_beamwidth, vertical_beamwidth=vertical_beamwidth,
        depression=depression, min_range=0.5, max_range=max_range, range_bins=range_bins, along_track_rays=8,
        across_track_rays=across_track_rays, beam_pattern="gaussian", frequency=frequency,
        bandwidth=round(bandwidth, 1), source_level=level, sound_speed=SOUND_SPEED,
        absorption_model="francois_garrison", temperature=10.0, salinity=35.0, depth=10.0, ph=8.0, psf_extent=PSF_EXTENT,
        noise_level=noise, post_tvg_noise_level=post_tvg_noise_level(noise),
        volume_scattering=-80.0, tvg="30log", normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
        display="db", **_fan_display(noise),
    )
    sources = {**_COMMON, **_resolution_sources(src.pop("resolution")), "source_level": level_source,
               "min_range": "estimate: 0.5 m, inside the towfish's blanking",
               "along_track_rays": "simulation: rays across the horizontal beam",
               "across_track_rays": "simulation: rays over the vertical fan",
               "beam_pattern": "estimate: gaussian vertical pattern (the fan's shape is unpublished)", **src}
    return values, sources


_EDGETECH = ("estimate: as the EdgeTech 4125 datasheet is recalled; no stored copy states it (searched: stored web "
             "pages, docs, code and issues for 'EdgeTech 4125 specifications', '900 kHz horizontal beam width', "
             "'resolution across track'; the stored 4125i/4125 User Hardware Manual 0004823 pages give deployment, "
             "not acoustic specifications)")

#: Side-scan device presets: name -> (config values, summary). Common choices as for the imaging sonars (module
#: docstring); the fan keeps the peer preset's widening to nadir so the first return gives the altitude.
SIDESCAN_DEVICE_PRESETS: PresetTable = _register("sidescan", {
    "edgetech_4125_900khz": (*_sidescan(900e3, 0.28, 80.0, 50.0, 0.015, 75.0, 4096, 4096, {
        "frequency": f"{_EDGETECH}: 900 kHz channel (400/900 kHz towfish)",
        "along_track_beamwidth": f"{_EDGETECH}: 0.28 deg horizontal beam at 900 kHz",
        "vertical_beamwidth": "simulation: the recalled 50 deg vertical beam (searched as for the other fields) "
                              "widened to depressions 10-90 deg so "
                              "the first return gives the altitude (a real fish sees nadir through its side lobes)",
        "depression": "simulation: centre of the widened 10-90 deg fan",
        "resolution": f"{_EDGETECH}: 1.5 cm across-track resolution at 900 kHz",
        "max_range": f"{_EDGETECH}: 75 m per side at 900 kHz",
        "range_bins": "derived: 74.5 m / 4096 = 1.8 cm, about the 1.5 cm resolution"}),
        "EdgeTech 4125, 900 kHz channel: 0.28 deg beam, 75 m per side, 1.5 cm resolution (B = 50 kHz) as the "
        "datasheet (recalled; no stored copy holds it): check before relying on it. Fan widened to nadir, bins, "
        "rays and source level (30 W into the 0.28 x 80 deg fan) chosen here."),
})


_PA500 = ("estimate: as the Tritech PA500 datasheet is recalled; no stored copy states it (searched: stored web "
          "pages, docs, code and issues for 'Tritech PA500 specifications', '500 kHz', 'beam width 6 degrees'; the "
          "stored Tritech Altimeter Product Manual 0286-SOM-00001 pages give output formats and a ~10 Hz PA500 "
          "data rate only)")
_PA500_LEVEL = _source_level_estimate(6.0, 6.0)
_PA500_NOISE = round(receiver_noise_level(500e3, 37500.0, 6.0, 6.0), 1)

#: Single-beam device presets: name -> (config values, summary).
SINGLEBEAM_DEVICE_PRESETS: PresetTable = _register("singlebeam", {
    "tritech_pa500": (
        dict(model="device", opening_angle=6.0, cone_rings=16, rays_per_ring=64, min_range=0.1, max_range=50.0,
             range_bins=2495, frequency=500e3, bandwidth=37500.0, source_level=_PA500_LEVEL[0],
             sound_speed=SOUND_SPEED, absorption_model="francois_garrison", temperature=10.0, salinity=35.0,
             depth=10.0, ph=8.0, psf_extent=PSF_EXTENT,
             noise_level=_PA500_NOISE, post_tvg_noise_level=post_tvg_noise_level(_PA500_NOISE),
             volume_scattering=-80.0, tvg="30log", normalisation="none", multiplicative_sigma=0.0,
             additive_sigma=0.0, range_noise=0.0, **_fan_display(_PA500_NOISE)),
        {**_COMMON, **_resolution_sources("estimate: 2 cm, a 27 us CW pulse (c tau / 2) for a 50 m altimeter"),
         "source_level": _PA500_LEVEL[1], "frequency": f"{_PA500}: 500 kHz",
         "opening_angle": f"{_PA500}: 6 deg conical beam", "min_range": f"{_PA500}: 0.1 m",
         "max_range": f"{_PA500}: 50 m", "range_bins": "derived: 49.9 m / 2 cm resolution = 2495",
         "cone_rings": "simulation: rings of rays over the cone", "rays_per_ring": "simulation: rays per ring"},
        "Tritech PA500 altimeter: 500 kHz, 6 deg cone, 0.1-50 m as the datasheet (recalled; no stored copy): check "
        "before relying on it. Range resolution 2 cm (B = 37.5 kHz), 2 cm bins, rays, source level (30 W into the "
        "6 deg cone) and the receiver noise (thermal floor, module docstring) chosen here."),
})


def _swath(frequency: float, swath_width: float, along_track_beamwidth: float, n_beams: int, beam_width: float,
           resolution: float, max_range: float, range_bins: int, across_rays_per_beam: int,
           src: Sources, steering: tuple[str, str] = ("flat_array", _FLAT_ARRAY)) -> tuple[dict[str, Any], Sources]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    level, level_source = _source_level_estimate(along_track_beamwidth, swath_width)
    noise = round(receiver_noise_level(frequency, bandwidth, beam_width, along_track_beamwidth), 1)
    values = dict(
        model="device", swath_width=swath_width, along_track_beamwidth=along_track_beamwidth, n_beams=n_beams,
        beam_width=beam_width, **_steering_values(steering)[0], across_rays_per_beam=across_rays_per_beam,
        along_track_rays=4, min_range=0.5,
        max_range=max_range, range_bins=range_bins, frequency=frequency, bandwidth=round(bandwidth, 1),
        source_level=level, sound_speed=SOUND_SPEED, absorption_model="francois_garrison", temperature=10.0,
        salinity=35.0, depth=10.0, ph=8.0, psf_extent=PSF_EXTENT,
        noise_level=noise, post_tvg_noise_level=post_tvg_noise_level(noise),
        volume_scattering=-80.0, tvg="30log", normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
        range_noise=0.0, angle_noise=0.0, image=True, **_fan_display(noise),
    )
    sources = {**_COMMON, **_resolution_sources(src.pop("resolution")), "source_level": level_source,
               "min_range": "estimate: 0.5 m, inside the transducer's near-field blanking",
               **_steering_values(steering)[1],
               "across_rays_per_beam": "simulation: rays across each receive beam",
               "along_track_rays": "simulation: rays across the transmit beam",
               "image": "simulation: the water-column image is kept", **src}
    return values, sources


_UNITY = "paper: unity-ros-underwater-simulator-2021.txt §V, EM 2040-04 coverage table"
_EM2040 = ("estimate: as the Kongsberg EM 2040 MKII datasheet is recalled (cited by the paper); no stored copy "
           "states it (searched: stored web pages, docs, code and issues for 'EM 2040 MKII specifications', "
           "'beamwidth 0.4 degrees', 'number of soundings'; the stored EM 2040 brochure (yumpu 29734720) gives the "
           "first EM 2040's 0.5 x 1 and 1 x 1 deg at 200-400 kHz, and the EM 2040 MKII Installation Manual 472405/A "
           "lists a '0.4 degrees' TX transducer (drawing 337805) and a '0.7 degrees' RX transducer (338208))")
_NORBIT_MANUAL = "manual: NORBIT WBMS / iWBMS User Manual 10.4.3 (firmware 5.2.1, April 2020)"
_NORBIT = ("estimate: as the NORBIT WBMS datasheet is recalled; no stored copy states it (searched: stored web "
           "pages, docs, code and issues for 'NORBIT WBMS specifications', '256 beams', '0.9 x 1.9 degrees'; only "
           "the WBMS user manual 10.4.3 is stored, without beam widths or counts)")

#: Swath (multibeam bathymetry) device presets of the profiling sonar: name -> (config values, summary).
PROFILING_DEVICE_PRESETS: PresetTable = _register("profiling", {
    "em2040_600khz": (*_swath(600e3, 68.8, 0.4, 172, 0.4, 0.02, 115.0, 5725, 6, {
        "frequency": f"{_UNITY}: 600 kHz", "swath_width": f"{_UNITY}: 68.8 deg as the peer preset (130 m coverage "
                                                          f"at 95 m depth)",
        "max_range": f"{_UNITY}: 115 m slant range as the peer preset", "n_beams": "derived: 68.8 deg / 0.4 deg",
        "along_track_beamwidth": f"{_EM2040}: EM 2040-04, 0.4 deg transmit", "beam_width": f"{_EM2040}: 0.4 deg",
        "resolution": "estimate: 2 cm, an EM 2040 short CW pulse (~27 us); unpublished in the stored copies",
        "range_bins": "derived: 114.5 m / 2 cm resolution = 5725"}),
        "Kongsberg EM 2040-04 at 600 kHz as the peer preset em2040_600khz_peer (unity-ros-underwater-simulator-2021 "
        "§V coverage table: 68.8 deg swath, 115 m slant range); 0.4 deg beams as the EM 2040 MKII datasheet "
        "(recalled); range resolution 2 cm, 2 cm bins, rays and source level chosen here."),
    "em2040_700khz": (*_swath(700e3, 27.6, 0.4, 69, 0.4, 0.02, 56.6, 2830, 6, {
        "frequency": f"{_UNITY}: 700 kHz", "swath_width": f"{_UNITY}: 27.6 deg as the peer preset (27 m coverage "
                                                          f"at 55 m depth)",
        "max_range": f"{_UNITY}: 56.6 m slant range as the peer preset", "n_beams": "derived: 27.6 deg / 0.4 deg",
        "along_track_beamwidth": f"{_EM2040}: EM 2040-04, 0.4 deg transmit", "beam_width": f"{_EM2040}: 0.4 deg",
        "resolution": "estimate: 2 cm, an EM 2040 short CW pulse (~27 us); unpublished in the stored copies",
        "range_bins": "derived: 56.1 m / 2 cm resolution = 2805, rounded up to 2830"}),
        "Kongsberg EM 2040-04 at 700 kHz as the peer preset em2040_700khz_peer (unity-ros-underwater-simulator-2021 "
        "§V coverage table: 27.6 deg swath, 56.6 m slant range); 0.4 deg beams as the EM 2040 MKII datasheet "
        "(recalled); range resolution 2 cm, 2 cm bins, rays and source level chosen here."),
    # Bandwidth: the WBMS manual's 80 kHz FM sweep at every range (delta_r = c / 2B = 9.4 mm); bins at that
    # resolution over 0.5-60 m.
    "norbit_wbms_400khz": (*_swath(400e3, 140.0, 1.9, 256, 0.9, SOUND_SPEED / (2.0 * 80e3), 60.0, 6347, 4, {
        "frequency": f"{_NORBIT_MANUAL} §4 Tx pulse settings: optimized for 400 kHz (200-700 kHz)",
        "resolution": f"{_NORBIT_MANUAL} §5.1: 80 kHz bandwidth throughout the operational range",
        "swath_width": "estimate: 140 deg, a survey setting inside the WBMS's selectable swath (the manual's roll "
                       "stabilisation limits it to 160 deg)",
        "along_track_beamwidth": f"{_NORBIT}: 1.9 deg transmit at 400 kHz",
        "n_beams": f"{_NORBIT}: 256 beams", "beam_width": f"{_NORBIT}: 0.9 deg receive at 400 kHz",
        "max_range": "estimate: a 60 m window (the manual: tested to 175 m with 80 kHz)",
        "range_bins": "derived: 59.5 m / 9.375 mm resolution = 6347"},
        steering=("constant", _recalled("NORBIT WBMS product description", "constant: beams formed on a curved "
                                        "receive array, which keeps their width across the swath (its selectable "
                                        "swath, up to 210 deg, is beyond what a flat array can steer)",
                                        "stored web pages, docs, code and issues for 'NORBIT WBMS curved array', "
                                        "'constant beamwidth across swath'"))),
        "Norbit WBMS at 400 kHz: frequency and the 80 kHz FM bandwidth (9.4 mm) from the NORBIT WBMS user manual "
        "10.4.3 (2020); 0.9 x 1.9 deg and 256 beams as the datasheet (recalled); 140 deg swath, 0.5-60 m window, "
        "bins, rays and source level chosen here."),
})


def _multibeam(frequency: float, fov: float, n_beams: int, beam_width: float, elevation_fov: float,
               resolution: float, min_range: float, max_range: float, rays_per_beam: int,
               azimuth_rays_per_beam: int, src: Sources,
               source_level: tuple[float, str] | None = None) -> tuple[dict[str, Any], Sources]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    noise = round(receiver_noise_level(frequency, bandwidth, beam_width, elevation_fov), 1)
    level, level_source = source_level or _source_level_estimate(fov, elevation_fov)
    display, display_source = _display_values(noise, 80.0, level, fov, elevation_fov)
    values = dict(
        model="device", fov=fov, n_beams=n_beams, beam_width=beam_width, elevation_fov=elevation_fov,
        rays_per_beam=rays_per_beam, azimuth_rays_per_beam=azimuth_rays_per_beam, frequency=frequency,
        bandwidth=round(bandwidth, 1), sound_speed=SOUND_SPEED, min_range=min_range, max_range=max_range,
        source_level=level, absorption_model="francois_garrison", temperature=10.0, salinity=35.0,
        depth=10.0, ph=8.0, beam_pattern=True, **_steering_values(("flat_array", _FLAT_ARRAY))[0],
        elevation_directivity=True,
        elevation_span=min(3.0 * elevation_fov, 179.0), psf_extent=PSF_EXTENT, noise_level=noise, volume_scattering=-80.0,
        tvg="30log",
        # the top 120 dB over the noise: a multibeam ping sums many more scatterers per sample than an imaging-sonar
        # bin, and the imaging sonars' 100 dB saturates hard targets at 10 m (measured on the wreck)
        tvg_gain=0.0, display="db", **display, colormap="amber",
    )
    sources = {**_COMMON, **_resolution_sources(src.pop("resolution")), "source_level": level_source,
               "rays_per_beam": "simulation: rays in elevation per beam",
               "azimuth_rays_per_beam": "simulation: rays across each beam",
               "beam_pattern": "estimate: uniform line-array receive pattern (taper unpublished)",
               **_steering_values(("flat_array", _FLAT_ARRAY))[1],
               "elevation_directivity": "estimate: uniform vertical aperture of the vertical beam width",
               **display_source, **src}
    return values, sources


_F50_SEARCHED = ("stored web pages, docs, code and issues for 'SeaBat F50 specifications', 'beam width', 'range "
                 "resolution'; only the DAVE model file names the F50")
_F50 = f"estimate: no Teledyne Reson SeaBat F50 datasheet or manual is stored (searched: {_F50_SEARCHED})"
_CSUMB = ("third-party document: csumb-archives/seafloor descriptions/multibeamdescrip.html (SeaBat 7125: 'In the "
          "200kHz configuration, the receiver forms 256 equi-angle or equi-distant dynamically focused 1° receive "
          "beams')")

#: Multibeam device presets (model "device"): name -> (config values, summary). Common choices as for the imaging
#: sonars (module docstring); bandwidth is the -3 dB bandwidth B = c / (2 delta_r) of the datasheet range
#: resolution delta_r (the peers' DAVE files give the Gaussian's b instead: ``<name>_peer`` presets), sampled at
#: 2 B; rays over 3x the vertical beam so its side lobes see geometry.
MULTIBEAM_DEVICE_PRESETS: PresetTable = _register("multibeam", {
    "blueview_p900": (*_multibeam(900e3, 90.0, 512, 1.0, 20.0, 0.025, 0.2, 10.0, 96, 2, {
        "frequency": f"{_DAVE}: blueview_p900 900 kHz", "fov": f"{_DAVE}: blueview_p900 90 deg",
        "n_beams": f"{_DAVE}: blueview_p900 512 beams", "beam_width": _P900_BEAM,
        "elevation_fov": _P900_VERTICAL, "resolution": _P900_RESOLUTION,
        "min_range": "estimate: 0.2 m, the peer preset's", "max_range": f"{_DAVE}: blueview_p900 10 m"},
        source_level=_P900_LEVEL),
        "Teledyne BlueView P900-90: 900 kHz, 90 deg, 512 beams, 10 m window and 220 dB from the DAVE model file "
        "(docs/PHYSICS.md §2); 1 x 20 deg beams from DAVE's documentation of the P900-90 (and a quoted P900 Series "
        "datasheet); 2.5 cm (B = 30 kHz) kept against DAVE's documented 2.45 cm; rays chosen here."),
    "oculus_m1200d": (*_multibeam(2.1e6, 60.0, 256, 0.4, 12.0, 0.0025, 0.1, 10.0, 64, 2, {
        "frequency": f"{_LIBOCULUS}: namespace Oculus_M1200d::Freq_2100kHz (also the DAVE model file's 2.1 MHz)",
        "fov": f"{_DAVE}: oculus_m1200d 60 deg",
        "n_beams": f"{_DAVE}: oculus_m1200d 256 beams ({_OCULUS_BEAMS}: 256 is the device's other setting)",
        "beam_width": f"{_LIBOCULUS}: Oculus_M1200d::Freq_2100kHz AzimuthBeamwidthDeg = 0.4",
        "elevation_fov": f"{_LIBOCULUS}: Oculus_M1200d::Freq_2100kHz ElevationBeamwidthDeg = 12.0",
        "resolution": _recalled(_OCULUS_DOC, "2.5 mm", _OCULUS_SEARCHED),
        "min_range": _recalled(_OCULUS_DOC, "0.1 m", _OCULUS_SEARCHED),
        "max_range": f"{_LIBOCULUS}: Oculus_M1200d::Freq_2100kHz MaxRange = 10 ({_M1200D_10M})"}),
        "Blueprint Subsea Oculus M1200d, 2.1 MHz mode: 60 deg and 256 beams from the DAVE model file; 0.4 x 12 deg "
        "beams and 10 m from liboculus Constants.h; 2.5 mm (B = 300 kHz) and 0.1 m as the datasheet (recalled); "
        "source level (30 W into the 60 x 12 deg fan, as the imaging preset of this mode) and rays chosen here."),
    "seabat_f50": (*_multibeam(400e3, 140.0, 256, 1.0, 20.0, 0.0125, 0.5, 50.0, 64, 2, {
        "frequency": f"{_DAVE}: seabat_f50 400 kHz",
        "fov": "model file: nps_uw_sensors_gazebo models/seabat_f50/model.sdf, horizontal_fov 2.44346 rad = 140 deg",
        "n_beams": "model file: nps_uw_sensors_gazebo models/seabat_f50/model.sdf, 256 beams",
        "beam_width": f"{_F50}; 1 deg as the SeaBat 7125's 256 receive beams at 200 kHz ({_CSUMB})",
        "elevation_fov": f"{_F50}; 20 deg, the forward-looking class (P900, Oculus)",
        "resolution": f"{_F50}; 1.25 cm, a 17 us CW pulse",
        "min_range": f"{_F50}; 0.5 m blanking",
        "max_range": f"{_F50}; a 50 m window (the model file clips at 600 m)"}),
        "Teledyne SeaBat F50 at 400 kHz: 140 deg swath and 256 beams from the DAVE model file (docs/PHYSICS.md "
        "§2); no datasheet in the stored corpora: 1 x 20 deg beams, 50 m, 1.25 cm (B = 60 kHz), source level and "
        "rays are estimates (check before relying on them)."),
})


def _msis(frequency: float, hbw: float, vbw: float, step: float, resolution: float, max_range: float,
          range_bins: int, min_range: float, src: Sources) -> tuple[dict[str, Any], Sources]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    noise = round(receiver_noise_level(frequency, bandwidth, hbw, vbw), 1)
    level, level_source = _source_level_estimate(hbw, vbw)
    display, display_source = _display_values(noise, 60.0, level, hbw, vbw)
    values = dict(
        model="device", frequency=frequency, horizontal_beamwidth=hbw, vertical_beamwidth=vbw, step_angle=step,
        min_range=min_range, max_range=max_range, range_bins=range_bins, bandwidth=round(bandwidth, 1),
        source_level=level, sound_speed=SOUND_SPEED, absorption_model="francois_garrison", temperature=10.0,
        salinity=35.0, depth=10.0, ph=8.0, noise_level=noise, psf_extent=PSF_EXTENT, volume_scattering=-80.0,
        tvg="30log", tvg_gain=0.0, **display,
    )
    sources = {**_COMMON, **_resolution_sources(src.pop("resolution")), "source_level": level_source,
               **display_source, **src}
    return values, sources


_PING360_SW = "manufacturer software: Blue Robotics ping-python / ping-viewer Ping360 code"
_PING360_VIEWER = ("manufacturer software: bluerobotics/ping-viewer src/sensor/ping360.cpp "
                   "(_viewerDefaultTransmitFrequency = 750 kHz, the firmware's boot default 740)")
_PING360_PROTOCOL = ("manual: Blue Robotics ping-protocol, Ping360 messages, docs.bluerobotics.com/ping-protocol/"
                     "pingmessage-ping360 ('Acoustic operating frequency (500~1000 kHz). It is only practical to use "
                     "say 650 to 850 kHz')")
_PING360_SEARCHED = ("stored web pages, docs, code and issues for 'Ping360 technical details', 'vertical beam', "
                     "'minimum range'; the stored Blue Robotics pages give the 2 deg beam, 0.9 deg step and 50 m only")
_PING360_FORUM = "manual: Blue Robotics staff on discuss.bluerobotics.com, 'Understanding the Ping 360 specifications'"
_TRITECH_SEARCHED = ("stored web pages, docs, code and issues for 'Tritech Micron / SeaKing specifications', "
                     "'beamwidth', 'CHIRP 650-750 kHz'; stored: the Micron Echosounder manual 0650-SOM-00001 "
                     "(CHIRP appendix only) and the SeaKing Profiling Sonar manual 0374-SOM-00002, no imaging-head "
                     "datasheet")
_MICRON_DOC = "Tritech Micron (DST) product information"
_SEAKING_DOC = "Tritech SeaKing (DST) product information"
#: Ping360 transmit duration at a 20 m range (s): 8000 R / c microseconds (Blue Robotics' firmware rule).
_PING360_PULSE = 8000.0 * 20.0 / SOUND_SPEED * 1e-6

#: Mechanically scanned imaging sonar presets (MsisConfig): name -> (config values, summary).
MSIS_DEVICE_PRESETS: PresetTable = _register("msis", {
    # Ping360 pulse: the firmware rule in Blue Robotics' code, tau = 8000 R / c us = 107 us at 20 m
    # (c tau / 2 = 8 cm, B = 1 / tau = 9.4 kHz); 1200 samples, the firmware maximum.
    "ping360": (*_msis(750e3, 2.0, 25.0, 0.9, SOUND_SPEED * _PING360_PULSE / 2.0, 20.0, 1200, 0.75, {
        "frequency": f"{_PING360_VIEWER}; {_PING360_PROTOCOL}",
        "horizontal_beamwidth": f"{_PING360_FORUM}: 2 deg horizontal beam",
        "vertical_beamwidth": _recalled("Blue Robotics Ping360 technical details", "25 deg vertical beam",
                                        _PING360_SEARCHED),
        "step_angle": f"{_PING360_FORUM}: 0.9 deg mechanical resolution (1 gradian)",
        "resolution": f"{_PING360_SW}: transmit duration 8000 R / c us 'per firmware engineer' = 107 us at 20 m",
        "max_range": "estimate: a 20 m window inside the 50 m maximum (Blue Robotics forum, as above)",
        "range_bins": f"{_PING360_SW}: _firmwareMaxNumberOfPoints = 1200 samples per ping",
        "min_range": _recalled("Blue Robotics Ping360 technical details", "0.75 m", _PING360_SEARCHED)}),
        "Blue Robotics Ping360: 2 deg beam, 0.9 deg steps, 50 m maximum (Blue Robotics forum); 750 kHz (ping-viewer's "
        "default), pulse (107 us at 20 m: 8 cm) and 1200 samples from Blue Robotics' Ping360 code; 25 deg and "
        "0.75 m as the technical details (recalled, no stored datasheet); 20 m window and source level chosen "
        "here."),
    # Tritech Micron DST: CHIRP 650-750 kHz -> 100 kHz, 7.5 mm.
    "tritech_micron": (*_msis(700e3, 3.0, 35.0, 1.8, 0.0075, 30.0, 4000, 0.3, {
        "frequency": _recalled(_MICRON_DOC, "CHIRP about 700 kHz (650-750 kHz sweep)", _TRITECH_SEARCHED),
        "horizontal_beamwidth": _recalled(_MICRON_DOC, "3 deg", _TRITECH_SEARCHED),
        "vertical_beamwidth": _recalled(_MICRON_DOC, "35 deg", _TRITECH_SEARCHED),
        "step_angle": _recalled(_MICRON_DOC, "steps 0.45 / 0.9 / 1.8 / 3.6 deg (1.8 chosen)", _TRITECH_SEARCHED),
        "resolution": "estimate: the recalled 650-750 kHz CHIRP (100 kHz, searched as the frequency) gives "
                      "c / 2B = 7.5 mm (Tritech Micron "
                      "Echosounder manual 0650-SOM-00001 issue 02 App. A, manualshive.com/en/manual/moog/"
                      "tritech-micron-echosounder/1831535?page=19: 'In a CHIRP system, the critical factor "
                      "determining range resolution is the bandwidth of the CHIRP pulse')",
        "max_range": _recalled(_MICRON_DOC, "a 30 m window inside a 75 m maximum", _TRITECH_SEARCHED),
        "range_bins": "derived: 29.7 m / 7.5 mm resolution = 3960, rounded to 4000",
        "min_range": _recalled(_MICRON_DOC, "0.3 m", _TRITECH_SEARCHED)}),
        "Tritech Micron (DST): CHIRP about 700 kHz, 3 x 35 deg, 0.3-75 m, 0.45-3.6 deg steps as the product "
        "information (recalled, not in the stored corpora; check before relying on it; the stored Micron "
        "echosounder manual states only that CHIRP resolution follows the bandwidth). 1.8 deg steps, a 30 m window, "
        "bins at the 7.5 mm resolution and source level chosen here."),
    "seaking": (*_msis(675e3, 1.0, 20.0, 0.9, 0.05, 50.0, 1000, 0.5, {
        "frequency": _recalled(_SEAKING_DOC, "high-frequency channel 675 kHz (325 / 675 kHz head)",
                               _TRITECH_SEARCHED),
        "horizontal_beamwidth": _recalled(_SEAKING_DOC, "1 deg", _TRITECH_SEARCHED),
        "vertical_beamwidth": _recalled(_SEAKING_DOC, "20 deg", _TRITECH_SEARCHED),
        "step_angle": _recalled(_SEAKING_DOC, "0.9 deg step", _TRITECH_SEARCHED),
        "resolution": "estimate: 5 cm, a 67 us CW pulse",
        "max_range": _recalled(_SEAKING_DOC, "a 50 m window inside a 100 m maximum", _TRITECH_SEARCHED),
        "range_bins": "derived: 49.5 m / 5 cm resolution = 990, rounded to 1000",
        "min_range": "estimate: 0.5 m blanking"}),
        "Tritech SeaKing (DST, dual frequency), 675 kHz channel: 1 x 20 deg, up to 100 m as the product information "
        "(recalled, not in the stored corpora; check before relying on it). 0.9 deg steps, a 50 m window in 1000 "
        "bins, 5 cm range resolution (B = 15 kHz) and source level chosen here."),
})
