"""Device presets of the acoustic sensors (the device chain, ``model = "device"``), with their sources.

Datasheet values (frequency, fields of view, beams, beam widths, range resolution, maximum range) are from the
manufacturers' public datasheets named per preset; every value not on a datasheet is marked "chosen here".
Common choices for all imaging-sonar device presets:

- absorption from Francois & Garrison (1982) at the preset's frequency, 10 deg C, 35 PSU, 10 m depth, pH 8;
- receiver noise: the thermal noise floor (Mellen 1952, spectrum level -15 + 20 log10 f_kHz dB re 1 uPa^2/Hz)
  in the pulse bandwidth, less the receive array's directivity index DI = 10 log10(4 pi / (theta_h theta_v)),
  plus 6 dB for electronics (chosen here): :func:`receiver_noise_level`;
- volume scattering S_v = -80 dB re 1 m^-1 (clear coastal water); point-spread kernels ``PSF_EXTENT`` = 2.26 beam
  widths (range resolutions) each side: a uniform aperture's k-th null lies at k / 0.886 = 1.13 k beam widths,
  so the kernels hold the main lobe and the first side lobe (-13.3 dB) up to the second null (chosen here, for
  speed: the second side lobe, -17.8 dB, is left out);
- bandwidth B = c / (2 delta_r) from the datasheet range resolution delta_r; uniform pulse and array tapers
  unless stated (datasheets do not state them); elevation pattern of a uniform vertical aperture with the
  datasheet vertical beam width, rays spread over 3x that width so the first elevation side lobes see geometry;
- TVG 30 log r + 2 alpha r (a floor seen at grazing incidence fills range-limited cells, whose echo falls as
  r^-3), 0 dB fixed gain; display in dB over a 60 dB window starting 40 dB above the receiver noise level
  (chosen here: the TVG lifts the noise by 30 log r, so the noise shows as grain at long range and a
  sediment floor, about 60 dB above the noise after TVG, sits mid-window; adjust it as a device user does);
- source levels are not published for these sonars: 206 dB re 1 uPa at 1 m is chosen here for all but the
  P900 (220 dB, the DAVE model file's value), within the 200-220 dB of high-frequency imaging sonars;
- range windows: a practical setting inside the datasheet's maximum range, with range bins chosen here.
"""

from __future__ import annotations

import math
from typing import Any

SOUND_SPEED = 1500.0

#: Half-width of the device presets' point-spread kernels, in beam widths (range resolutions): up to the second
#: null of a uniform aperture's pattern, 2 / 0.886.
PSF_EXTENT = 2.26


def receiver_noise_level(frequency_hz: float, bandwidth_hz: float, beam_width_deg: float,
                         vertical_beam_deg: float, electronics_db: float = 6.0) -> float:
    """Receiver noise per sample (dB re 1 uPa^2): thermal noise spectrum level -15 + 20 log10 f_kHz (Mellen 1952)
    + 10 log10 B - DI + ``electronics_db``, DI = 10 log10(4 pi / (theta_h theta_v)) (beam widths in rad)."""
    di = 10.0 * math.log10(4.0 * math.pi / (math.radians(beam_width_deg) * math.radians(vertical_beam_deg)))
    return -15.0 + 20.0 * math.log10(frequency_hz / 1000.0) + 10.0 * math.log10(bandwidth_hz) - di + electronics_db


def _fls(frequency: float, hfov: float, vfov: float, beams: int, beam_width: float, resolution: float,
         min_range: float, max_range: float, range_bins: int, rays_per_beam: int, elevation_rays: int,
         source_level: float = 206.0) -> dict[str, Any]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    noise = round(receiver_noise_level(frequency, bandwidth, beam_width, vfov), 1)
    return dict(
        model="device", horizontal_fov=hfov, vertical_fov=vfov, n_beams=beams, beam_width=beam_width,
        min_range=min_range, max_range=max_range, range_bins=range_bins, rays_per_beam=rays_per_beam,
        elevation_rays=elevation_rays, elevation_pattern="array", elevation_span=min(3.0 * vfov, 179.0),
        frequency=frequency, bandwidth=round(bandwidth, 1), source_level=source_level,
        sound_speed=SOUND_SPEED, absorption_model="francois_garrison", temperature=10.0, salinity=35.0,
        depth=10.0, ph=8.0, noise_level=noise,
        psf_extent=PSF_EXTENT, volume_scattering=-80.0, tvg="30log", tvg_gain=0.0, aggregation="sum", normalisation="none",
        multiplicative_sigma=0.0, additive_sigma=0.0, additive_range_scaled=False, display="db",
        display_floor=noise + 40.0, dynamic_range=60.0, colormap="amber",
    )


#: Imaging-sonar device presets: name -> (config values, source).
IMAGING_SONAR_DEVICE_PRESETS: dict[str, tuple[dict[str, Any], str]] = {
    "aris1800_1800khz": (
        _fls(1.8e6, 28.0, 14.0, 96, 0.3, 0.01, 0.7, 15.0, 1024, 8, 128),
        "Sound Metrics ARIS Explorer 1800 datasheet, identification mode: 1.8 MHz, 28 x 14 deg, 96 beams of "
        "0.3 deg, 15 m identification range; range resolution 1 cm (B = 75 kHz) chosen here within the "
        "datasheet's 3 mm - 10 cm; min range 0.7 m (datasheet); 1024 range bins chosen here."),
    "aris1800_1100khz": (
        _fls(1.1e6, 28.0, 14.0, 48, 0.6, 0.02, 0.7, 35.0, 1024, 16, 128),
        "Sound Metrics ARIS Explorer 1800 datasheet, detection mode: 1.1 MHz, 28 x 14 deg, 48 beams of 0.6 deg, "
        "35 m detection range; range resolution 2 cm chosen here; 1024 range bins chosen here."),
    "aris3000_3000khz": (
        _fls(3.0e6, 30.0, 14.0, 128, 0.25, 0.005, 0.7, 5.0, 1024, 6, 128),
        "Sound Metrics ARIS Explorer 3000 datasheet, identification mode: 3.0 MHz, 30 x 14 deg, 128 beams of "
        "0.25 deg, 5 m identification range; range resolution 5 mm chosen here (datasheet: 3 mm - 10 cm)."),
    "aris3000_1800khz": (
        _fls(1.8e6, 30.0, 14.0, 128, 0.5, 0.01, 0.7, 15.0, 1024, 6, 128),
        "Sound Metrics ARIS Explorer 3000 datasheet, detection mode: 1.8 MHz, 30 x 14 deg, 128 beams of 0.5 deg, "
        "15 m detection range; range resolution 1 cm chosen here."),
    "oculus_m750d_750khz": (
        _fls(750e3, 130.0, 20.0, 512, 1.0, 0.004, 0.1, 30.0, 1024, 2, 96),
        "Blueprint Subsea Oculus M750d datasheet, low-frequency mode: 750 kHz, 130 x 20 deg, 512 beams, angular "
        "resolution 1 deg, range resolution 4 mm, max range 120 m (window 0.1-30 m chosen here)."),
    "oculus_m750d_1200khz": (
        _fls(1.2e6, 70.0, 12.0, 512, 0.6, 0.0025, 0.1, 20.0, 1024, 2, 96),
        "Blueprint Subsea Oculus M750d datasheet, high-frequency mode: 1.2 MHz, 70 x 12 deg, 512 beams, angular "
        "resolution 0.6 deg, range resolution 2.5 mm, max range 40 m (window 0.1-20 m chosen here)."),
    "oculus_m1200d_1200khz": (
        _fls(1.2e6, 130.0, 20.0, 512, 0.6, 0.0025, 0.1, 20.0, 1024, 2, 96),
        "Blueprint Subsea Oculus M1200d datasheet, low-frequency mode: 1.2 MHz, 130 x 20 deg, 512 beams, angular "
        "resolution 0.6 deg, range resolution 2.5 mm, max range 30 m (window 0.1-20 m chosen here)."),
    "oculus_m1200d_2100khz": (
        _fls(2.1e6, 60.0, 12.0, 256, 0.4, SOUND_SPEED / (2.0 * 265.5e3), 0.1, 10.0, 1024, 4, 96),
        "Blueprint Subsea Oculus M1200d datasheet, high-frequency mode: 2.1 MHz, 60 x 12 deg, angular resolution "
        "0.4 deg, max range 10 m; 256 beams and 265.5 kHz bandwidth from the DAVE model file (docs/PHYSICS.md §2)."),
    "gemini_720i": (
        _fls(720e3, 130.0, 20.0, 512, 1.0, 0.008, 0.2, 50.0, 1024, 2, 96),
        "Tritech Gemini 720i datasheet: 720 kHz, 130 x 20 deg, 512 beams, angular resolution 1 deg (0.5 deg "
        "effective), range resolution 8 mm, max range 120 m (window 0.2-50 m chosen here)."),
    "blueview_p900": (
        _fls(900e3, 90.0, 20.0, 512, 1.0, SOUND_SPEED / (2.0 * 29.9e3), 0.2, 10.0, 512, 2, 96, source_level=220.0),
        "Teledyne BlueView P900-90 datasheet: 900 kHz, 90 x 20 deg, 512 beams, beam width 1 deg, range "
        "resolution 2.5 cm; 29.9 kHz bandwidth, 10 m range and 220 dB source level from the DAVE model file "
        "(docs/PHYSICS.md §2)."),
}

#: "oculus_m750d" is the M750d in its default (750 kHz) mode; the peer model of that fan is "oculus_m750d_peer".
IMAGING_SONAR_DEVICE_PRESETS["oculus_m750d"] = (
    IMAGING_SONAR_DEVICE_PRESETS["oculus_m750d_750khz"][0],
    "The Oculus M750d in its 750 kHz mode: the same values and sources as oculus_m750d_750khz (Blueprint Subsea "
    "Oculus M750d datasheet).")


def _sidescan(frequency: float, along_track_beamwidth: float, vertical_beamwidth: float, depression: float,
              resolution: float, max_range: float, range_bins: int, across_track_rays: int,
              source_level: float = 210.0) -> dict[str, Any]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    return dict(
        model="device", along_track_beamwidth=along_track_beamwidth, vertical_beamwidth=vertical_beamwidth,
        depression=depression, min_range=0.5, max_range=max_range, range_bins=range_bins, along_track_rays=8,
        across_track_rays=across_track_rays, beam_pattern="gaussian", frequency=frequency,
        bandwidth=round(bandwidth, 1), source_level=source_level, sound_speed=SOUND_SPEED,
        absorption_model="francois_garrison", temperature=10.0, salinity=35.0, depth=10.0, ph=8.0, psf_extent=PSF_EXTENT,
        noise_level=round(receiver_noise_level(frequency, bandwidth, along_track_beamwidth, vertical_beamwidth), 1),
        volume_scattering=-80.0, tvg="30log", normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
        display="db", db_range=50.0,
    )


#: Side-scan device presets: name -> (config values, source). Common choices as for the imaging sonars (module
#: docstring); the fan keeps the peer preset's widening to nadir so the first return gives the altitude.
SIDESCAN_DEVICE_PRESETS: dict[str, tuple[dict[str, Any], str]] = {
    "edgetech_4125_900khz": (
        _sidescan(900e3, 0.28, 80.0, 50.0, 0.015, 75.0, 4096, 4096, source_level=220.0),
        "EdgeTech 4125 datasheet as recalled here (900 kHz channel: 0.28 deg horizontal beam, 75 m range per "
        "side, across-track resolution 1.5 cm -> B = 50 kHz); check before relying on it. Fan widened to "
        "depressions 10-90 deg with a gaussian pattern, 4096 range bins (1.8 cm), 8 x 4096 rays per side and a 220 dB source "
        "level chosen here."),
}


#: Single-beam device presets: name -> (config values, source).
SINGLEBEAM_DEVICE_PRESETS: dict[str, tuple[dict[str, Any], str]] = {
    "tritech_pa500": (
        dict(model="device", opening_angle=6.0, cone_rings=16, rays_per_ring=64, min_range=0.1, max_range=50.0,
             range_bins=2495, frequency=500e3, bandwidth=37500.0, source_level=210.0, sound_speed=SOUND_SPEED,
             absorption_model="francois_garrison", temperature=10.0, salinity=35.0, depth=10.0, ph=8.0,
             psf_extent=PSF_EXTENT, noise_level=round(receiver_noise_level(500e3, 37500.0, 6.0, 6.0), 1),
             volume_scattering=-80.0,
             tvg="30log", normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0, range_noise=0.0),
        "Tritech PA500 altimeter datasheet as recalled here (500 kHz, 6 deg conical beam, 0.1-50 m); check before "
        "relying on it. Range resolution 2 cm (B = 37.5 kHz), 2 cm bins, rays, a 210 dB source level and the "
        "receiver noise (thermal floor, module docstring) chosen here."),
}


def _swath(frequency: float, swath_width: float, along_track_beamwidth: float, n_beams: int, beam_width: float,
           resolution: float, max_range: float, range_bins: int, across_rays_per_beam: int,
           source_level: float) -> dict[str, Any]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    return dict(
        model="device", swath_width=swath_width, along_track_beamwidth=along_track_beamwidth, n_beams=n_beams,
        beam_width=beam_width, across_rays_per_beam=across_rays_per_beam, along_track_rays=4, min_range=0.5,
        max_range=max_range, range_bins=range_bins, frequency=frequency, bandwidth=round(bandwidth, 1),
        source_level=source_level, sound_speed=SOUND_SPEED, absorption_model="francois_garrison", temperature=10.0,
        salinity=35.0, depth=10.0, ph=8.0, psf_extent=PSF_EXTENT,
        noise_level=round(receiver_noise_level(frequency, bandwidth, beam_width, along_track_beamwidth), 1),
        volume_scattering=-80.0, tvg="30log", normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
        range_noise=0.0, angle_noise=0.0, image=True,
    )


#: Swath (multibeam bathymetry) device presets of the profiling sonar: name -> (config values, source).
PROFILING_DEVICE_PRESETS: dict[str, tuple[dict[str, Any], str]] = {
    "em2040_600khz": (
        _swath(600e3, 68.8, 0.4, 172, 0.4, 0.02, 115.0, 5725, 6, 210.0),
        "Kongsberg EM 2040-04 at 600 kHz as the peer preset em2040_600khz_peer (unity-ros-underwater-simulator-2021.txt "
        "§V coverage table: 68.8 deg swath, 115 m slant range; 0.4 deg beams); range resolution 2 cm, 2 cm bins, "
        "rays and a 210 dB source level chosen here (the datasheet is not in shared/seeds)."),
    "em2040_700khz": (
        _swath(700e3, 27.6, 0.4, 69, 0.4, 0.02, 56.6, 2830, 6, 210.0),
        "Kongsberg EM 2040-04 at 700 kHz as the peer preset em2040_700khz_peer (unity-ros-underwater-simulator-2021.txt "
        "§V coverage table: 27.6 deg swath, 56.6 m slant range; 0.4 deg beams); range resolution 2 cm, 2 cm bins, "
        "rays and a 210 dB source level chosen here (the datasheet is not in shared/seeds)."),
    "norbit_wbms_400khz": (
        _swath(400e3, 140.0, 1.9, 256, 0.9, 0.01, 60.0, 2048, 4, 210.0),
        "Norbit WBMS datasheet as recalled here (400 kHz, 0.9 x 1.9 deg beams, 256 beams, up to 210 deg swath, "
        "80 kHz chirp bandwidth: ~1 cm resolution); check before relying on it. 140 deg swath, 0.5-60 m window, "
        "2048 bins, rays and a 210 dB source level chosen here."),
}


def _multibeam(frequency: float, fov: float, n_beams: int, beam_width: float, elevation_fov: float,
               resolution: float, min_range: float, max_range: float, rays_per_beam: int,
               azimuth_rays_per_beam: int, source_level: float = 220.0) -> dict[str, Any]:
    bandwidth = SOUND_SPEED / (2.0 * resolution)
    noise = round(receiver_noise_level(frequency, bandwidth, beam_width, elevation_fov), 1)
    return dict(
        model="device", fov=fov, n_beams=n_beams, beam_width=beam_width, elevation_fov=elevation_fov,
        rays_per_beam=rays_per_beam, azimuth_rays_per_beam=azimuth_rays_per_beam, frequency=frequency,
        bandwidth=round(bandwidth, 1), sound_speed=SOUND_SPEED, min_range=min_range, max_range=max_range,
        source_level=source_level, absorption_model="francois_garrison", temperature=10.0, salinity=35.0,
        depth=10.0, ph=8.0, beam_pattern=True, elevation_directivity=True,
        elevation_span=min(3.0 * elevation_fov, 179.0), psf_extent=PSF_EXTENT, noise_level=noise, volume_scattering=-80.0,
        tvg="30log",
        # an 80 dB window: a multibeam ping sums many more scatterers per sample than an imaging-sonar bin, and a
        # 60 dB window from the noise floor + 40 dB saturates hard targets at 10 m (measured on the wreck)
        tvg_gain=0.0, display="db", display_floor=noise + 40.0, dynamic_range=80.0, colormap="amber",
    )


#: Multibeam device presets (model "device"): name -> (config values, source). Common choices as for the imaging
#: sonars (module docstring); bandwidth is the -3 dB bandwidth B = c / (2 delta_r) of the datasheet range
#: resolution delta_r (the peers' DAVE files give the Gaussian's b instead: ``<name>_peer`` presets), sampled at
#: 2 B; rays over 3x the vertical beam so its side lobes see geometry.
MULTIBEAM_DEVICE_PRESETS: dict[str, tuple[dict[str, Any], str]] = {
    "blueview_p900": (
        _multibeam(900e3, 90.0, 512, 1.0, 20.0, 0.025, 0.2, 10.0, 96, 2),
        "Teledyne BlueView P900-90 datasheet: 900 kHz, 90 x 20 deg, 512 beams, 1 deg beam width, range resolution "
        "2.5 cm (B = 30 kHz); 10 m window and 220 dB source level from the DAVE model file (docs/PHYSICS.md §2); "
        "rays chosen here."),
    "oculus_m1200d": (
        _multibeam(2.1e6, 60.0, 256, 0.4, 12.0, 0.0025, 0.1, 10.0, 64, 2),
        "Blueprint Subsea Oculus M1200d datasheet, 2.1 MHz mode: 60 x 12 deg, 0.4 deg angular resolution, range "
        "resolution 2.5 mm (B = 300 kHz), 10 m maximum range; 256 beams from the DAVE model file; source level "
        "220 dB (DAVE's one value) and rays chosen here."),
    "seabat_f50": (
        _multibeam(400e3, 140.0, 256, 1.0, 20.0, 0.0125, 0.5, 50.0, 64, 2),
        "Teledyne SeaBat F50 at 400 kHz: 140 deg swath and 256 beams from the DAVE model file (docs/PHYSICS.md "
        "§2); 1 x 20 deg beams and 50 m range our reading of the F50 datasheet; range resolution 1.25 cm "
        "(B = 60 kHz), source level 220 dB and rays chosen here (estimates: check before relying on them)."),
}
