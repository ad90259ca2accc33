"""Multibeam echosounder (MBES): point-based coherent scattering, beam pattern, per-beam time series
(docs/PHYSICS.md section 2; Choi et al. 2021, scattering model of Brown, Johnson & Olson 2017).

Per beam j (bearing at the beam centre, uniformly spaced over the fan, positive to starboard) the sensor casts
``azimuth_rays_per_beam x rays_per_beam`` rays spread over the beam's bearing width and the elevation field of
view. Every hit is a point scatterer with a complex Gaussian amplitude (independent counter-based streams for
the real and imaginary parts, keyed by seed, frame, sensor id and ray index). The complex baseband time series
of each ideal fan beam is built by one of two methods:

- ``"time"`` (default): each scatterer deposits its Gaussian pulse A_i exp(-b^2 (t - 2 r_i / c)^2) into its
  beam's series, over the samples within ``pulse_extent_sigmas`` envelope sigmas of its delay;
- ``"spectral"``: the paper's reference, per-frequency sums P_j(f) on the grid df = 1 / T, then an inverse FFT
  (numpy.fft on the host). T covers the window plus a guard of the pulse's extent so that nothing wraps, and
  the frequencies span +-``pulse_extent_sigmas`` spectral sigmas; frequencies beyond the sample rate's band
  fold onto it exactly as sampling does, so both methods give the same samples (to the truncation error,
  ~exp(-K^2/2) of the peak).

The beams are then mixed with the paper's signed sinc weights w_ij = B(theta_i - theta_j), each beam
normalised by sqrt(sum_i w_ij^2), in a Warp kernel (the same on CPU and CUDA) that sums each output in a fixed
order over the beams that are non-zero at that sample: a ping is bit-identical whatever the thread count, BLAS,
batch size or executor.

Outputs: complex series (B, n_samples, n_beams) complex64 (``wp.vec2`` on the device), intensity |p|^2 and dB,
``ranges`` r_n = c t_n / 2 (m, increasing from ``min_range``) and ``bearings`` (rad, column 0 most port).
|p| is in the units of the source level (uPa at 1 m), p = S0 * (b / sqrt(pi)) * ... as in docs/PHYSICS.md §2.
Config angles are degrees, ranges metres, frequencies Hz, absorption dB/m (one way).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError, OceanSimError
from oceansim_py.io import images
from oceansim_py.io.config import (ConfigBase, require, require_finite, require_non_negative, require_positive,
                                   require_seed, require_water_sound_speed)
from oceansim_py.io.sonar_messages import projected_sonar_image, receive_beamwidths
from oceansim_py.kernels import multibeam as k
from oceansim_py.limits import MAX_FAN_WIDTH, check_config_memory
from oceansim_py.runtime import check_memory, launch_1d, resolve_device
from oceansim_py.kernels import acoustic_chain as kc
from oceansim_py.kernels import multipath as km
from oceansim_py.sensors.acoustic.bandwidth import (minus_3db_from_gaussian_b, sinc_power_integral,
                                                    sinc_rate_per_bandwidth)
from oceansim_py.sensors.acoustic.beam_pattern import LineArray, bearing_kernels
from oceansim_py.sensors.acoustic.chain import _host_key, row_noise_intensity, tvg_db
from oceansim_py.sensors.acoustic.device_config import DeviceChainFields, DeviceDisplayFields, require_line_array_width
from oceansim_py.sensors.acoustic.display import apply_colormap, db_window_to_uint8
from oceansim_py.sensors.acoustic.multipath import BounceState, BounceTracer
from oceansim_py.sensors.acoustic.presets import MULTIBEAM_DEVICE_PRESETS
from oceansim_py.sensors.acoustic_fan import require_count
from oceansim_py.sensors.backend_field import RaycastBackendField
from oceansim_py.sensors.batching import PoseUploads, check_out_type, check_render_call
from oceansim_py.sensors.rays import RayBuffers
from oceansim_py.sensors.scratch import ScratchCache

_OWNER = "MultibeamSonarConfig"

#: Largest element count of one device array (Warp indexes launches with 32-bit integers).
_MAX_ELEMENTS = 2**31 - 1

#: Largest sample_rate / bandwidth accepted: every ray's echo is spread over the samples of its pulse
#: (``pulse_half_width``, proportional to this ratio), so an oversampling of thousands turns one ping into minutes
#: of per-ray loops for no information (a device samples at 1-4 x its bandwidth).
MAX_OVERSAMPLING = 64.0


@dataclasses.dataclass(frozen=True)
class MultibeamSonarConfig(DeviceChainFields, DeviceDisplayFields, RaycastBackendField, ConfigBase):
    """Multibeam echosounder settings.

    ``model``: "peer" (default; the coherent point-scatterer model of Choi et al. 2021 as DAVE runs it, described
    below) or "device" (the same coherent series in the device chain's physical units, docs/PHYSICS.md §1b: see
    :class:`MultibeamSonar`). The device-chain fields (``absorption_model`` and water, ``noise_level``,
    ``volume_scattering``, ``tvg``, ``tvg_gain``, ``agc_level``, ``beam_taper``, ``sidelobe_level``,
    ``elevation_span``, ``elevation_taper``, ``jitter``, the display fields) are documented in
    :class:`~oceansim_py.sensors.acoustic.device_config.DeviceChainFields` and ``DeviceDisplayFields``; the
    peer model ignores them.

    fov: bearing field of view (deg), beams uniformly spaced over it. n_beams: number of beams.
    beam_width: -3 dB receive beam width (deg) used for the beam-pattern weights.
    elevation_fov: elevation field of view (deg). rays_per_beam: rays spread over it per beam.
    azimuth_rays_per_beam: rays spread over each beam's bearing width (1: one ray at the beam centre).
    frequency: centre frequency (Hz). bandwidth: with model "device", the -3 dB bandwidth B (Hz) as datasheets
    give it: the point-target range response (a flat band's sinc, first range side lobe -13.3 dB) has -3 dB
    width c / (2 B) (the device chain's convention, sensors/acoustic/bandwidth.py). With model "peer", the
    parameter b (Hz) of DAVE's Gaussian spectrum S(f) = S0 exp(-pi^2 (f - fc)^2 / b^2), 2.67 x that
    spectrum's -3 dB bandwidth (``bandwidth_3db``), kept so DAVE's model files read as DAVE reads them.
    sound_speed: c (m/s). min_range / max_range: the window of the time series (m).
    source_level: SL (dB re 1 uPa at 1 m), S0 = 10^(SL / 20). absorption: dB/m, one way.
    sample_rate: complex baseband sample rate (Hz); None means the bandwidth (peer) or twice the -3 dB bandwidth
    (device: two samples per resolution cell c / (2 B)).
    beam_pattern: mix beams with the signed sinc weights (side lobes; device: the ``beam_taper`` line array's
    pattern out to ``psf_extent`` beam widths). elevation_directivity: weight rays by the line-array pattern
    whose -3 dB width is the elevation field of view (DAVE uses 1; device: the two-way pattern D^4 of an
    ``elevation_taper`` vertical array, over an ``elevation_span`` that may be wider than the field of view so
    its side lobes see geometry).
    pulse_extent_sigmas: truncation of the pulse (time method) and of the spectrum (spectral method), in
    sigmas of the Gaussian envelope (peer; the device model truncates its range response at ``psf_extent`` range
    resolutions and its beam pattern at ``psf_extent`` beam widths). method: "time" or "spectral". seed: run
    seed of the speckle streams.
    """

    fov: float = 90.0
    n_beams: int = 512
    beam_width: float = 1.0
    elevation_fov: float = 20.0
    rays_per_beam: int = 11
    azimuth_rays_per_beam: int = 1
    frequency: float = 900e3
    bandwidth: float = 29.9e3
    sound_speed: float = 1500.0
    min_range: float = 0.1
    max_range: float = 10.0
    source_level: float = 220.0
    absorption: float = 0.0354
    sample_rate: float | None = None
    beam_pattern: bool = True
    elevation_directivity: bool = False
    pulse_extent_sigmas: float = 5.0
    method: Literal["time", "spectral"] = "time"
    seed: int = 0
    display: Literal["linear", "db"] = "db"

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Device presets (model "device", the acoustic device chain): values and sources in
        # sensors/acoustic/presets.py. The peer presets below are DAVE's model files, kept as "<device>_peer".
        **{name: values for name, (values, _source) in MULTIBEAM_DEVICE_PRESETS.items()},
        # Teledyne BlueView P900-90. fov, n_beams, frequency, bandwidth (29.9 kHz), max_range (10 m) and
        # source_level: DAVE model file (docs/PHYSICS.md section 2); 1 deg x 20 deg beam: P900 datasheet;
        # 11 elevation rays: the paper's live-view case; c, absorption: DAVE defaults.
        "blueview_p900_peer": {"fov": 90.0, "n_beams": 512, "beam_width": 1.0, "elevation_fov": 20.0,
                          "rays_per_beam": 11, "frequency": 900e3, "bandwidth": 29.9e3, "max_range": 10.0,
                          "source_level": 220.0, "sound_speed": 1500.0, "absorption": 0.0354},
        # Blueprint Oculus M1200d, high-frequency mode. fov, n_beams, frequency, bandwidth (265.5 kHz): DAVE
        # model file (docs/PHYSICS.md section 2); 0.4 deg beam width, 12 deg elevation and 10 m range: Oculus
        # datasheet figures for the 2.1 MHz mode; source level as the P900 (DAVE sets one value for all).
        "oculus_m1200d_peer": {"fov": 60.0, "n_beams": 256, "beam_width": 0.4, "elevation_fov": 12.0,
                          "rays_per_beam": 11, "frequency": 2.1e6, "bandwidth": 265.5e3, "max_range": 10.0,
                          "source_level": 220.0, "sound_speed": 1500.0, "absorption": 0.0354},
        # Teledyne SeaBat F50. fov 140 deg, 256 beams, 400 kHz: DAVE model file (docs/PHYSICS.md section 2).
        # docs/PHYSICS.md gives no bandwidth: 29.9 kHz as the DAVE P900 file (our assumption); 1 deg beam width,
        # 20 deg elevation and 50 m range are our reading of the F50 datasheet at 400 kHz.
        "seabat_f50_peer": {"fov": 140.0, "n_beams": 256, "beam_width": 1.0, "elevation_fov": 20.0,
                       "rays_per_beam": 11, "frequency": 400e3, "bandwidth": 29.9e3, "max_range": 50.0,
                       "source_level": 220.0, "sound_speed": 1500.0, "absorption": 0.0354},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        o = _OWNER
        require_positive(self.fov, o, "fov", "deg")
        require(self.fov <= 180.0, o, "fov", f"must be <= 180 deg, got {self.fov}")
        for name in ("n_beams", "rays_per_beam", "azimuth_rays_per_beam"):
            require_count(self, o, name)
        for name in ("beam_pattern", "elevation_directivity"):
            require(isinstance(getattr(self, name), bool), o, name, f"must be true or false, got "
                    f"{getattr(self, name)!r}")
        require_positive(self.beam_width, o, "beam_width", "deg")
        require_positive(self.elevation_fov, o, "elevation_fov", "deg")
        require(self.elevation_fov < 180.0, o, "elevation_fov", f"must be < 180 deg, got {self.elevation_fov}")
        require_positive(self.frequency, o, "frequency", "Hz")
        require_positive(self.bandwidth, o, "bandwidth", "Hz")
        require(self.bandwidth <= self.frequency, o, "bandwidth",
                f"{self.bandwidth} Hz exceeds the centre frequency {self.frequency} Hz; a pulse cannot be wider "
                f"than its carrier")
        require_water_sound_speed(self.sound_speed, o)
        require_non_negative(self.min_range, o, "min_range", "m")
        require_positive(self.max_range, o, "max_range", "m")
        require(self.max_range > self.min_range, o, "max_range",
                f"must be > min_range ({self.min_range} m), got {self.max_range}")
        require_finite(self.source_level, o, "source_level")
        require_non_negative(self.absorption, o, "absorption", "dB/m")
        if self.sample_rate is not None:
            require_positive(self.sample_rate, o, "sample_rate", "Hz")
            require(self.sample_rate >= self.bandwidth, o, "sample_rate",
                    f"{self.sample_rate} Hz cannot resolve a pulse of bandwidth {self.bandwidth} Hz; a complex "
                    f"baseband series needs sample_rate >= bandwidth (leave it unset for the default: the "
                    f"bandwidth with model 'peer', twice it with model 'device')")
            require(self.sample_rate <= MAX_OVERSAMPLING * self.bandwidth, o, "sample_rate",
                    f"{self.sample_rate} Hz is {self.sample_rate / self.bandwidth:.0f} x the bandwidth "
                    f"{self.bandwidth} Hz; it must be in [bandwidth, {MAX_OVERSAMPLING:g} x bandwidth] (each ray's "
                    f"echo is spread over its pulse's samples, so the cost grows with the oversampling; devices "
                    f"sample at 1-4 x their bandwidth)")
        require_finite(self.pulse_extent_sigmas, o, "pulse_extent_sigmas")
        require(self.pulse_extent_sigmas >= 3.0, o, "pulse_extent_sigmas",
                f"must be >= 3 (truncation error exp(-K^2/2)), got {self.pulse_extent_sigmas}")
        require(self.method in ("time", "spectral"), o, "method",
                f"must be 'time' or 'spectral', got {self.method!r}")
        require_seed(self.seed, o)
        require(self.model in ("peer", "device"), o, "model", f"must be 'peer' or 'device', got {self.model!r}")
        self.validate_multipath(o, self.model)
        self.require_finite_device_numbers(o)
        self.require_finite_display_numbers(o)
        if self.model == "device":
            self.validate_device_chain(o, self.fov, self.elevation_fov)
            if self.elevation_directivity:
                require_line_array_width(o, "elevation_fov", self.elevation_fov, self.elevation_taper,
                                         self.sidelobe_level)
            self.validate_device_display(o)
            require(self.method == "time", o, "method",
                    "must be 'time' with model 'device' (the spectral method is the peer model's reference)")
            require(self.display == "db", o, "display",
                    "must be 'db' for the multibeam (its 8-bit images are the dB window [display_floor, "
                    "display_floor + dynamic_range])")
            require(self.min_range > 0.0, o, "min_range",
                    "must be > 0 m with model 'device' (the sonar equation and the TVG need r > 0)")
            require(self.pulse_taper == "uniform", o, "pulse_taper",
                    "must be 'uniform' with model 'device': the multibeam's range response is the flat band's "
                    "sinc (-3 dB width c / (2 B))")
        largest = self.largest_array_elements()
        require(largest <= _MAX_ELEMENTS, o, "max_range",
                f"{self.max_range} m at {self.fs:g} Hz ({self.n_samples} samples x {self.n_beams} beams) needs "
                f"{largest} elements in one array, more than the {_MAX_ELEMENTS} a launch can index "
                f"(about {32 * self.n_samples * self.n_beams / 2**30:.1f} GiB per ping); lower max_range, "
                f"n_beams or sample_rate")

    MEMORY_FIX: ClassVar[str] = "lower n_beams, max_range, sample_rate or rays_per_beam"

    def memory_bytes(self, batch: int = 1) -> int:
        """Bytes a :class:`MultibeamSonar` needs: the beam-pattern and spectrum tables (float32 on device) plus
        :meth:`render_bytes` of ``batch`` pings with the config's method."""
        tables = 4 * (2 * self.n_beams + 8 + self.n_frequencies) + 8 * self.n_frequencies
        return tables + 4 * (self.n_samples + self.n_beams) + self.render_bytes(batch, self.method)

    def render_bytes(self, batch: int, method: str) -> int:
        """Bytes of one render of ``batch`` pings: pose, rays (amplitude + delay, and origin, direction and hit
        for the ray-cast backend: ``RayBuffers.BYTES_PER_RAY``), per-sample non-zero count;
        per sample and beam the series before mixing (8), its non-zero beam list (4) and the result (vec2 +
        intensity + dB, 16); the spectral method adds its device spectrum and host fold and FFT (complex128)."""
        per_ray = 12 + RayBuffers.BYTES_PER_RAY
        total = batch * (28 + per_ray * self.rays_per_pose + 4 * self.n_samples + 28 * self.n_samples * self.n_beams)
        if self.model == "device":  # per ray power and footprint; per sample and beam raw power and clean
            total += batch * (8 * self.rays_per_pose + 8 * self.n_samples * self.n_beams)
            mp = self.multipath_settings()
            if mp.active:  # bounce state, and amplitude, delay, power, footprint per echo block past the first;
                # mixed paths: the visibility rays and 24 B per cross-beam arrival
                total += batch * self.rays_per_pose * (BounceState.BYTES_PER_RAY + 20 * (mp.chain_blocks - 1))
                if mp.mixed:
                    total += batch * self.rays_per_pose * (RayBuffers.BYTES_PER_RAY + 4 + 24 * mp.bounces)
        if method == "spectral":
            total += batch * self.n_beams * (8 * self.n_frequencies + 32 * self.fft_length)
        return total

    def largest_array_elements(self) -> int:
        """Elements of the largest per-ping launch (samples x beams, rays or spectral sums)."""
        return max(self.n_samples * self.n_beams, self.rays_per_pose, self.n_beams * self.n_frequencies)

    # -- derived quantities --------------------------------------------------------------------------------
    @property
    def fs(self) -> float:
        """Sample rate of the complex baseband series (Hz)."""
        if self.sample_rate is not None:
            return float(self.sample_rate)
        return float(2.0 * self.bandwidth if self.model == "device" else self.bandwidth)

    @property
    def sinc_rate(self) -> float:
        """Device model: kappa B / fs, the range response h(u) = sinc(kappa B u / fs) per sample u (intensity
        -3 dB width c / (2 B), sensors/acoustic/bandwidth.py)."""
        return sinc_rate_per_bandwidth() * self.bandwidth / self.fs

    @property
    def bandwidth_3db(self) -> float:
        """-3 dB bandwidth (Hz): ``bandwidth`` (device) or, for the peer, its Gaussian spectrum's, 0.3748 b."""
        return float(self.bandwidth) if self.model == "device" else minus_3db_from_gaussian_b(self.bandwidth)

    @property
    def range_resolution(self) -> float:
        """Range step between samples, c / (2 fs) (m)."""
        return self.sound_speed / (2.0 * self.fs)

    @property
    def n_samples(self) -> int:
        """Samples per beam: r_n = min_range + n c / (2 fs) for every r_n <= max_range."""
        return int(math.floor((self.max_range - self.min_range) / self.range_resolution + 1e-9)) + 1

    @property
    def t0(self) -> float:
        """Two-way time of the first sample, 2 min_range / c (s)."""
        return 2.0 * self.min_range / self.sound_speed

    @property
    def rays_per_pose(self) -> int:
        return self.n_beams * self.azimuth_rays_per_beam * self.rays_per_beam

    @property
    def pulse_half_width(self) -> float:
        """Truncation half width of the pulse in samples: K sigma_t fs with sigma_t = 1 / (b sqrt 2)."""
        if self.model == "device":  # psf_extent range resolutions of 1 / B
            return self.psf_extent * self.fs / self.bandwidth
        return self.pulse_extent_sigmas * self.fs / (self.bandwidth * math.sqrt(2.0))

    @property
    def fft_length(self) -> int:
        """Length of the spectral method's grid (samples): the window plus a guard on each side."""
        return self.n_samples + 2 * int(math.ceil(self.pulse_half_width)) + 2

    @property
    def n_frequencies(self) -> int:
        """Frequencies of the spectral method: df = fs / fft_length over +-K sigma_f, sigma_f = b / (pi sqrt 2)."""
        span = self.pulse_extent_sigmas * self.bandwidth / (math.pi * math.sqrt(2.0))
        return 2 * int(math.ceil(span * self.fft_length / self.fs)) + 1

    def ranges(self) -> np.ndarray:
        """Range of each sample (m), increasing from min_range."""
        return (self.min_range + np.arange(self.n_samples) * self.range_resolution).astype(np.float32)

    def bearings(self) -> np.ndarray:
        """Beam-centre bearings (rad, positive to starboard), column 0 most port."""
        fov = math.radians(self.fov)
        return (-0.5 * fov + (np.arange(self.n_beams) + 0.5) * fov / self.n_beams).astype(np.float32)

    def beam_weights(self) -> np.ndarray:
        """(n_beams, n_beams) mixing matrix W[j, i] = B(theta_i - theta_j) / sqrt(sum_i B(theta_i - theta_j)^2)
        with the signed line-array pattern B(theta) = sin(x)/x, x = pi (0.884 / theta_bw) sin(theta)."""
        pattern, inv_norm = self.beam_pattern_terms()
        lag = np.abs(np.arange(self.n_beams)[None, :] - np.arange(self.n_beams)[:, None])
        return pattern[lag] * inv_norm[:, None]

    def beam_pattern_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """The Toeplitz factors of :meth:`beam_weights` (float64): ``pattern[k]`` = B(k * beam step), the
        pattern at a bearing difference of k beams, and ``inv_norm[j]`` = 1 / sqrt(sum_i B(theta_i - theta_j)^2),
        so that W[j, i] = pattern[|i - j|] * inv_norm[j]."""
        step = math.radians(self.fov) / self.n_beams
        x = math.pi * (0.884 / math.radians(self.beam_width)) * np.sin(np.arange(self.n_beams) * step)
        pattern = np.sinc(x / math.pi)
        sq = pattern * pattern
        # sum_i pattern[|i - j|]^2 = sum of sq over lags 0..j and 1..(n - 1 - j)
        cum = np.cumsum(sq)
        inv_norm = 1.0 / np.sqrt(cum[np.arange(self.n_beams)] + cum[self.n_beams - 1 - np.arange(self.n_beams)]
                                 - sq[0])
        return pattern, inv_norm

    # -- the device model ---------------------------------------------------------------------------------
    @property
    def elevation_fan(self) -> float:
        """Elevation extent of the device model's rays (deg): ``elevation_span``, or the elevation field of view."""
        return self.elevation_span if self.elevation_span > 0.0 else self.elevation_fov

    def device_elevation_table(self) -> np.ndarray:
        """(rays_per_beam, 3) rows (e_k, 0, w_k) of the device model: ray elevations e_k (rad) uniformly over the
        elevation fan and w_k = cos(e_k) de dtheta g(e_k) (sr), the ray's solid angle (dtheta the bearing step of
        one ray) times the two-way elevation pattern g = D(e)^4 of an ``elevation_taper`` vertical array whose
        one-way -3 dB width is ``elevation_fov`` (g = 1 without ``elevation_directivity``)."""
        span = math.radians(self.elevation_fan)
        de = span / self.rays_per_beam
        e = -0.5 * span + (np.arange(self.rays_per_beam) + 0.5) * de
        d_theta = math.radians(self.fov) / (self.n_beams * self.azimuth_rays_per_beam)
        w = np.cos(e) * de * d_theta
        if self.elevation_directivity:
            w = w * LineArray(math.radians(self.elevation_fov), self.elevation_taper,
                              self.sidelobe_level).amplitude(e) ** 4
        return np.stack([e, np.zeros_like(e), w], axis=1)

    def device_beam_pattern(self) -> np.ndarray:
        """Taps (n_beams, 2 M + 1), row j the weights h_j[m] of the beams j + m - M in beam j: the receive array's
        one-way amplitude pattern (peak 1; the ``beam_taper`` line array whose broadside -3 dB width is
        ``beam_width``) out to ``psf_extent`` beam widths, steered as ``beam_steering`` says (a flat array's taps
        weighted by its elements' directivity, ``element_width``)
        (:func:`~oceansim_py.sensors.acoustic.beam_pattern.bearing_kernels`, as the imaging sonar's); one tap 1
        without ``beam_pattern``."""
        if not self.beam_pattern:
            return np.ones((self.n_beams, 1), np.float32)
        array = LineArray(math.radians(self.beam_width), self.beam_taper, self.sidelobe_level)
        return bearing_kernels(array, self.n_beams, math.radians(self.fov) / self.n_beams,
                               self.psf_extent * math.radians(self.beam_width), self.beam_steering,
                               self.element_width)

    def device_tables(self) -> dict[str, np.ndarray]:
        """Host tables of the device model's receiver (float64), per sample n and beam j:

        - ``gain[n]``: TVG and fixed gain on intensity, 10^((k log10 r_n + 2 alpha r_n + tvg_gain) / 10);
        - ``noise[n]``: receiver noise referred to the input (re 1 uPa^2 per sample): 10^(noise_level / 10) +
          10^(post_tvg_noise_level / 10) / gain[n] (chain.row_noise_intensity; a ``None`` level adds nothing);
        - ``reverb[n]``: mean volume reverberation of one ideal beam, SL S_v r_n^-2 10^(-2 alpha r_n / 10)
          Omega L_eff (re 1 uPa^2), Omega = the beam's weighted solid angle (sum of its rays' w_k), L_eff the
          range integral of the squared range response h^2 = sinc^2(kappa B 2 r / c) over its truncation
          +-psf_extent c / (2 B): (c / (2 B kappa)) * integral of sinc^2 over +-kappa psf_extent;
        - ``beam_reverb[j]``: sum_m h_j[m]^2 over beam j's taps that fall on the fan's beams (the beams'
          reverberation the pattern gathers; 1 without ``beam_pattern``).
        """
        alpha = self.absorption_db_per_m(self.absorption)
        r = self.ranges().astype(np.float64)
        gain = 10.0 ** (tvg_db(r, self.tvg, alpha, self.tvg_gain) / 10.0)
        reverb = np.zeros_like(r)
        if self.volume_scattering is not None:
            omega = float(self.device_elevation_table()[:, 2].sum()) * self.azimuth_rays_per_beam
            kappa = sinc_rate_per_bandwidth()
            l_eff = (self.sound_speed / (2.0 * self.bandwidth * kappa)
                     * sinc_power_integral(kappa * self.psf_extent))
            level = 10.0 ** ((self.source_level + self.volume_scattering - 2.0 * alpha * r) / 10.0)
            reverb = level / r**2 * omega * l_eff
        sq = self.device_beam_pattern().astype(np.float64) ** 2
        half = (sq.shape[1] - 1) // 2
        beam_reverb = np.array([sq[j, max(0, half - j): half + self.n_beams - j].sum() for j in range(self.n_beams)])
        noise = row_noise_intensity(gain, self.noise_level, self.post_tvg_noise_level).astype(np.float64)
        return {"gain": gain, "noise": noise, "reverb": reverb, "beam_reverb": beam_reverb}


@dataclasses.dataclass
class MultibeamResult:
    """Pings of a batch of B poses, as Warp arrays on the sensor's device.

    time_series: (B, n_samples, n_beams) wp.vec2 = complex baseband pressure (real, imaginary).
    intensity: (B, n_samples, n_beams) float32, |p|^2. db: 10 log10 |p|^2 (-300 where p = 0).
    ranges: (n_samples,) m, increasing. bearings: (n_beams,) rad, positive to starboard, column 0 most port.

    With model "device": time_series is the received pressure p + n (echo, volume reverberation and receiver
    noise, re 1 uPa, before gain); intensity = |p + n|^2 G(r) after the TVG, fixed and automatic gain (re 1 uPa^2
    times the gain: with tvg "none" and 0 dB gain, the received intensity re 1 uPa^2); db = 10 log10 intensity;
    clean_intensity (device only, else None) the expected, speckle- and noise-free intensity through the same
    beam pattern and gain.
    """

    time_series: wp.array
    intensity: wp.array
    db: wp.array
    ranges: np.ndarray
    bearings: np.ndarray
    config: MultibeamSonarConfig
    frame_index: int
    method: str
    clean_intensity: wp.array | None = None

    @property
    def batch_size(self) -> int:
        return int(self.intensity.shape[0])

    def numpy(self) -> dict[str, np.ndarray]:
        """Host copies: time_series (complex64), intensity, db, ranges, bearings (and clean_intensity with
        model "device")."""
        ts = self.time_series.numpy()  # (B, S, NB, 2) float32
        out = {"time_series": np.ascontiguousarray(ts).view(np.complex64)[..., 0],
               "intensity": self.intensity.numpy(), "db": self.db.numpy(),
               "ranges": self.ranges.copy(), "bearings": self.bearings.copy()}
        if self.clean_intensity is not None:
            out["clean_intensity"] = self.clean_intensity.numpy()
        return out

    def torch(self) -> dict[str, Any]:
        """Zero-copy torch tensors (``wp.to_torch``); time_series as complex64 (``torch.view_as_complex``); with
        model "device" also clean_intensity."""
        try:
            import torch
        except ImportError as exc:
            raise OceanSimError("MultibeamResult.torch() needs PyTorch; install it (pip install torch) or use "
                                ".numpy()") from exc
        out = {"time_series": torch.view_as_complex(wp.to_torch(self.time_series)),
               "intensity": wp.to_torch(self.intensity), "db": wp.to_torch(self.db)}
        if self.clean_intensity is not None:
            out["clean_intensity"] = wp.to_torch(self.clean_intensity)
        return out

    def to_uint8(self, db_range: float = 60.0) -> np.ndarray:
        """(B, n_samples, n_beams) uint8. Peer model: each ping's dB intensity from -db_range (0) to its peak
        (255). Device model: the device display, the dB window [display_floor, display_floor + dynamic_range]
        of the config (``db_range`` is not used: the window is the device's gain and range controls)."""
        values = self.intensity.numpy()
        return np.stack([self._display(v, db_range) for v in values])

    def to_rgb(self, db_range: float = 60.0) -> np.ndarray:
        """(B, n_samples, n_beams, 3) uint8: :meth:`to_uint8` through the config's colour map."""
        return apply_colormap(self.to_uint8(db_range), self.config.colormap)

    def _display(self, values: np.ndarray, db_range: float) -> np.ndarray:
        c = self.config
        if c.model == "device":
            return db_window_to_uint8(values, c.display_floor, c.dynamic_range)
        return images.to_uint8(values, mode="db", db_range=db_range)

    def to_cartesian(self, width: int = 512) -> np.ndarray:
        """(B, H, width) float32 fan images of the intensity: sonar at the bottom centre, starboard right."""
        c = self.config
        return images.polar_to_cartesian(self.intensity.numpy(), self.ranges, self.bearings, width,
                                         range_step=c.range_resolution, bearing_step=math.radians(c.fov) / c.n_beams)

    def fan_uint8(self, width: int = 512, db_range: float = 60.0) -> np.ndarray:
        """(B, H, width) uint8 fan images (:meth:`to_cartesian`) on the display scale of :meth:`to_uint8`."""
        return np.stack([self._display(f, db_range) for f in self.to_cartesian(width)])

    def save_png(self, path: str | Path, frame: int = 0, fan_width: int | None = None,
                 db_range: float = 60.0) -> Path:
        """Write ping ``frame`` as an 8-bit dB PNG: polar, or the fan image when ``fan_width`` is set."""
        if not 0 <= frame < self.batch_size:
            raise ConfigError(f"save_png: frame {frame} is outside the batch of {self.batch_size}")
        if fan_width is None:
            img = self.to_uint8(db_range)[frame]
        else:
            img = self._display(self.to_cartesian(fan_width)[frame], db_range)
        return images.save_png(path, img)

    def to_projected_sonar_image(self, frame: int = 0, dtype: Literal["float32", "uint8"] = "float32",
                                 frame_id: str = "sonar", stamp: float = 0.0,
                                 db_range: float = 60.0) -> dict[str, Any]:
        """Ping ``frame`` as a dict with the fields and byte layout of marine_acoustic_msgs/ProjectedSonarImage
        (see :func:`oceansim_py.io.sonar_messages.projected_sonar_image`). ``float32``: intensity |p|^2;
        ``uint8``: the dB image of :meth:`to_uint8`."""
        if not 0 <= frame < self.batch_size:
            raise ConfigError(f"to_projected_sonar_image: frame {frame} is outside the batch of {self.batch_size}")
        c = self.config
        image = self.intensity.numpy()[frame] if dtype == "float32" else self.to_uint8(db_range)[frame]
        steering = c.beam_steering if c.model == "device" else "constant"
        return projected_sonar_image(image, self.ranges, self.bearings, frequency=c.frequency,
                                     sound_speed=c.sound_speed,
                                     rx_beamwidth=receive_beamwidths(self.bearings, math.radians(c.beam_width),
                                                                     steering),
                                     tx_beamwidth=math.radians(c.elevation_fov), frame_id=frame_id, stamp=stamp)


class _Buffers:
    """Device scratch for one batch size (reused between renders of one thread): rays and hits, scatterers, the
    sample-major series before mixing and each sample's list of non-zero beams."""

    def __init__(self, config: MultibeamSonarConfig, batch: int, device: wp.context.Device) -> None:
        c = config
        n_rays = batch * c.rays_per_pose
        self.rays = RayBuffers(n_rays, device, float(c.max_range))
        # multipath (device model): the bounce state, and one echo block per ray and bounce (beam-major, the blocks
        # of a beam contiguous, sensors/acoustic/multipath.py)
        mp = c.multipath_settings()
        traced = mp.active and c.model == "device"
        self.blocks = mp.chain_blocks if traced else 1
        self.bounce = BounceState(n_rays, device) if traced else None
        # mixed paths: the visibility rays and the cross-beam arrivals (pose-major, then bounce, then ray)
        self.mixed = traced and mp.mixed > 0
        if self.mixed:
            self.vis = RayBuffers(n_rays, device, 0.0)
            self.vis_remaining = wp.empty(n_rays, dtype=wp.float32, device=device)
            n_cross = n_rays * mp.bounces
            self.cross = [wp.empty(n_cross, dtype=wp.vec2, device=device),
                          wp.empty(n_cross, dtype=wp.float32, device=device),
                          wp.empty(n_cross, dtype=wp.float32, device=device),
                          wp.empty(n_cross, dtype=wp.float32, device=device),
                          wp.empty(n_cross, dtype=wp.int32, device=device)]
        n_echo = n_rays * self.blocks
        self.amp = wp.empty(n_echo, dtype=wp.vec2, device=device)
        self.delay = wp.empty(n_echo, dtype=wp.float32, device=device)
        # sample-major series before mixing
        self.raw = wp.zeros((batch, c.n_samples, c.n_beams), dtype=wp.vec2, device=device)
        self.nonzero_count = wp.empty(batch * c.n_samples, dtype=wp.int32, device=device)
        self.nonzero_beams = wp.empty((batch * c.n_samples, c.n_beams), dtype=wp.int32, device=device)
        self.spectrum: wp.array | None = None
        device_model = c.model == "device"
        self.power = wp.empty(n_echo if device_model else 0, dtype=wp.float32, device=device)
        self.extent = wp.empty(n_echo if device_model else 0, dtype=wp.float32, device=device)
        self.raw_power = wp.zeros((batch, c.n_samples, c.n_beams) if device_model else (0, 0, 0), dtype=wp.float32,
                                  device=device)
        self.keys = wp.empty(batch, dtype=wp.int32, device=device)
        self.frame_mean = wp.empty(batch, dtype=wp.float32, device=device)

    @staticmethod
    def nbytes(config: MultibeamSonarConfig, batch: int, method: str) -> int:
        return config.render_bytes(batch, method)


class MultibeamSonar:
    """A multibeam echosounder on ``device`` (``None``: cuda:0 if present, else cpu).

    ``sensor_id`` separates the speckle of several sonars sharing a seed. One sensor may render from several
    threads at once: each thread has its own scratch (the last ``MAX_CACHED_BATCH_SIZES`` batch sizes it
    rendered) and every render returns new result arrays (or writes the caller's ``out``).

    With ``model = "device"`` (docs/PHYSICS.md §1b) the same coherent time series is built in physical units:
    every ray's return follows the sonar equation (SL, two-way spreading and absorption, Lambert's law times its
    footprint, the two-way elevation pattern), its complex amplitude is a unit complex Gaussian fixed to the hit
    point (speckle that is static for a static sensor and decorrelates as it moves) times the two-way carrier
    phase; its pulse (the flat band's sinc range response, -3 dB width c / (2 B)) is spread over the ray's
    footprint; the beams are mixed with the receive array's pattern (peak 1, side lobes of its taper); then the
    receiver adds one complex Gaussian of the receiver noise plus the volume reverberation's mean, detects,
    and applies the TVG, fixed gain and optional automatic gain (the shared plumbing of sensors/acoustic/).
    """

    MAX_CACHED_BATCH_SIZES = 2

    def __init__(self, config: MultibeamSonarConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        self.config = config if config is not None else MultibeamSonarConfig()
        if not isinstance(self.config, MultibeamSonarConfig):
            raise ConfigError(f"MultibeamSonar: config must be a MultibeamSonarConfig, got {type(config).__name__}")
        self.device = resolve_device(device)
        self.sensor_id = int(sensor_id)
        # compile (or load from the cache) here, once, rather than in each CPU launch thread at first use
        c = self.config
        check_config_memory(c, 0, self.device, "MultibeamSonar")
        wp.load_module(k, device=self.device)
        self._ranges = c.ranges()
        self._bearings = c.bearings()
        self._buffers: ScratchCache[_Buffers] = ScratchCache(self.MAX_CACHED_BATCH_SIZES)
        self._poses = PoseUploads(self.device, self.MAX_CACHED_BATCH_SIZES)
        pattern, inv_norm = c.beam_pattern_terms()
        padded = np.concatenate([pattern, np.zeros(k.MIX_BLOCK)])  # lags past the last beam (never used)
        self._pattern = wp.array(padded.astype(np.float32), dtype=wp.float32, device=self.device)
        self._inv_norm = wp.array(inv_norm.astype(np.float32), dtype=wp.float32, device=self.device)
        m = c.n_frequencies
        f = (np.arange(m) - m // 2) * (c.fs / c.fft_length)
        scale = math.sqrt(math.pi) / c.bandwidth * np.exp(-(math.pi * f / c.bandwidth) ** 2)
        self._spectrum_scale = wp.array(scale.astype(np.float32), dtype=wp.float32, device=self.device)
        self._fold_index = (np.arange(m) - m // 2) % c.fft_length
        if c.model == "device":
            tables = c.device_tables()
            dev = self.device
            wp.load_module(kc, device=dev)
            self._device_pattern = wp.array(c.device_beam_pattern().astype(np.float32), dtype=wp.float32,
                                            device=dev)
            self._elev_table = wp.array(c.device_elevation_table().astype(np.float32), dtype=wp.vec3, device=dev)
            self._row_gain = wp.array(tables["gain"].astype(np.float32), dtype=wp.float32, device=dev)
            self._row_reverb = wp.array(tables["reverb"].astype(np.float32), dtype=wp.float32, device=dev)
            self._row_noise = wp.array(tables["noise"].astype(np.float32), dtype=wp.float32, device=dev)
            self._beam_reverb = wp.array(tables["beam_reverb"].astype(np.float32), dtype=wp.float32, device=dev)
        mp = c.multipath_settings()
        self._tracer = (BounceTracer(mp, c.frequency, c.sound_speed, self.device, c.raycast_backend)
                        if mp.active and c.model == "device" else None)

    def memory_bytes(self, batch: int, method: str | None = None) -> int:
        """Bytes a render of ``batch`` poses needs (scratch and result; spectral adds its spectra)."""
        return _Buffers.nbytes(self.config, batch, method or self.config.method)

    def _buffers_for(self, batch: int, method: str) -> _Buffers:
        c = self.config
        need = self.memory_bytes(batch, method)
        largest = batch * c.largest_array_elements()
        if largest > _MAX_ELEMENTS:
            raise ConfigError(f"{_OWNER}.max_range: {c.max_range} m with {c.n_beams} beams and a batch of {batch} "
                              f"needs {largest} elements in one array (limit {_MAX_ELEMENTS}, "
                              f"{need / 2**30:.1f} GiB in all); lower max_range, n_beams or the batch size")
        buf = self._buffers.get(batch)
        if buf is None or (method == "spectral" and buf.spectrum is None):
            check_memory(need, self.device,
                         f"{_OWNER}.max_range: a {method} multibeam render of {batch} pose(s) to {c.max_range} m "
                         f"({c.n_samples} samples x {c.n_beams} beams)",
                         "lower max_range, n_beams, rays_per_beam or the batch size")
        if buf is None:
            buf = self._buffers.put(batch, _Buffers(c, batch, self.device))
        if method == "spectral" and buf.spectrum is None:
            buf.spectrum = wp.empty(batch * c.n_beams * c.n_frequencies, dtype=wp.vec2, device=self.device)
        return buf

    def render(self, scene: Any, poses: Any, frame_index: int = 0, method: str | None = None,
               out: MultibeamResult | None = None) -> MultibeamResult:
        """Render B pings.

        Args:
            scene: a :class:`~oceansim_py.scene.Scene` on this sensor's device.
            poses: sensor poses in the world, (7,), (B, 7) ``[px, py, pz, qx, qy, qz, qw]`` or a Trajectory.
            frame_index: frame number of pose 0 (pose b is frame ``frame_index + b``; keys the speckle).
            method: "time" or "spectral" (default: the config's ``method``; model "device": "time" only).
            out: a result of a previous call with the same batch size to write into (its arrays are reused);
                by default new result arrays are allocated.
        """
        c = self.config
        method = method or c.method
        if method not in ("time", "spectral"):
            raise ConfigError(f"MultibeamSonar.render: method must be 'time' or 'spectral', got {method!r}")
        if c.model == "device" and method != "time":
            raise ConfigError(f"MultibeamSonar.render: method must be 'time' with model 'device' (the spectral "
                              f"method is the peer model's reference), got {method!r}; for the spectral method use "
                              f"a peer preset ({', '.join(sorted(k for k in c.PRESETS if k.endswith('_peer')))}) "
                              f"or model 'peer'")
        p = check_render_call("MultibeamSonar", scene, self.device, poses, frame_index)
        check_out_type("MultibeamSonar", out, MultibeamResult)
        batch = p.shape[0]
        buf = self._buffers_for(batch, method)
        shape = (batch, c.n_samples, c.n_beams)
        if out is None:
            dev = self.device
            out = MultibeamResult(wp.empty(shape, dtype=wp.vec2, device=dev),
                                  wp.empty(shape, dtype=wp.float32, device=dev),
                                  wp.empty(shape, dtype=wp.float32, device=dev), self._ranges, self._bearings, c,
                                  int(frame_index), method,
                                  wp.empty(shape, dtype=wp.float32, device=dev) if c.model == "device" else None)
        else:
            if tuple(out.intensity.shape) != shape or out.config != c:
                raise ConfigError(f"MultibeamSonar.render: out holds pings of shape {tuple(out.intensity.shape)} "
                                  f"from another config; pass a result of this sensor with a batch of {batch}")
            out.frame_index = int(frame_index)
            out.method = method
        dev = self.device
        pose_array = self._poses.upload(p)
        if c.model == "device":
            self._render_device(scene, pose_array, buf, batch, int(frame_index), out)
            return out
        g = scene.geometry
        hw = float(c.pulse_half_width)
        n_rays = batch * c.rays_per_pose
        rays = buf.rays
        fov, elevation_fov = math.radians(c.fov), math.radians(c.elevation_fov)
        launch_1d(k.multibeam_ray_gen_kernel, n_rays,
                  [pose_array, c.n_beams, c.azimuth_rays_per_beam, c.rays_per_beam, fov, elevation_fov, rays.origins,
                   rays.directions], dev)
        rays.cast(scene, c.raycast_backend)
        launch_1d(k.multibeam_scatter_kernel, n_rays,
                  [rays.directions, *rays.hit_args(), g.object_reflectivity, c.n_beams, c.azimuth_rays_per_beam,
                   c.rays_per_beam, fov, elevation_fov, int(c.elevation_directivity), float(c.sound_speed),
                   float(c.frequency), c.fs, c.t0, float(c.n_samples - 1),
                   hw, 10.0 ** (c.source_level / 20.0) * c.bandwidth / math.sqrt(math.pi),
                   c.absorption * math.log(10.0) / 20.0, int(c.seed), int(frame_index), self.sensor_id,
                   buf.amp, buf.delay], dev)
        rays_per_beam = c.azimuth_rays_per_beam * c.rays_per_beam
        if method == "time":
            buf.raw.zero_()
            launch_1d(k.multibeam_deposit_kernel, batch * c.n_beams,
                      [buf.amp, buf.delay, rays_per_beam, c.n_beams, c.n_samples, hw, c.bandwidth / c.fs, buf.raw],
                      dev, min_chunk=1)
        else:
            self._spectral_series(buf, batch, rays_per_beam)
        if c.beam_pattern:
            launch_1d(k.multibeam_nonzero_kernel, batch * c.n_samples,
                      [buf.raw, c.n_beams, c.n_samples, buf.nonzero_count, buf.nonzero_beams], dev, min_chunk=64)
        n_blocks = -(-c.n_beams // k.MIX_BLOCK)
        launch_1d(k.multibeam_mix_kernel, batch * c.n_samples * n_blocks,
                  [buf.raw, buf.nonzero_count, buf.nonzero_beams, self._pattern, self._inv_norm, int(c.beam_pattern),
                   c.n_beams, c.n_samples, n_blocks, out.time_series, out.intensity, out.db], dev, min_chunk=512)
        return out

    def _render_device(self, scene: Any, poses: wp.array, buf: _Buffers, batch: int, frame_index: int,
                       out: MultibeamResult) -> None:
        """``model = "device"``: scatter, footprint deposit, beam pattern + receiver, automatic gain."""
        c = self.config
        g = scene.geometry
        dev = self.device
        hw = float(c.pulse_half_width)
        alpha = c.absorption_db_per_m(c.absorption)
        jitter_key = _host_key(c.seed, 0, self.sensor_id, int(kc.STREAM_JITTER))
        phase_key = _host_key(c.seed, 0, self.sensor_id, int(kc.STREAM_PHASE))
        wavelength = c.sound_speed / c.frequency
        n_rays = batch * c.rays_per_pose
        rays = buf.rays
        fov, cell = math.radians(c.fov), math.radians(c.elevation_fan) / c.rays_per_beam
        launch_1d(k.multibeam_device_ray_gen_kernel, n_rays,
                  [poses, c.n_beams, c.azimuth_rays_per_beam, c.rays_per_beam, fov, self._elev_table, cell,
                   int(c.jitter), jitter_key, rays.origins, rays.directions], dev)
        rays.cast(scene, c.raycast_backend)
        if self._tracer is not None:
            self._trace(scene, poses, buf, n_rays, jitter_key, phase_key, wavelength, alpha)
        else:
            launch_1d(k.multibeam_device_scatter_kernel, n_rays,
                      [rays.directions, *rays.hit_args(), g.object_reflectivity, poses, c.n_beams,
                       c.azimuth_rays_per_beam, c.rays_per_beam, fov, self._elev_table, cell, int(c.jitter),
                       jitter_key, phase_key, 0.25 * wavelength, float(c.sound_speed), float(c.frequency), c.fs, c.t0,
                       float(c.n_samples - 1), hw, 10.0 ** (c.source_level / 10.0), alpha, buf.amp, buf.power,
                       buf.delay, buf.extent], dev)
        buf.raw.zero_()
        buf.raw_power.zero_()
        launch_1d(k.multibeam_device_deposit_kernel, batch * c.n_beams,
                  [buf.amp, buf.power, buf.delay, buf.extent,
                   c.azimuth_rays_per_beam * c.rays_per_beam * buf.blocks, c.n_beams, c.n_samples, hw, c.sinc_rate,
                   buf.raw, buf.raw_power], dev, min_chunk=1)
        if self._tracer is not None and buf.mixed:
            launch_1d(km.multibeam_cross_deposit_kernel, batch,
                      [*buf.cross, c.rays_per_pose * c.multipath_bounces, c.n_samples, hw, c.sinc_rate, buf.raw,
                       buf.raw_power], dev, min_chunk=1)
        launch_1d(kc.frame_keys_kernel, batch, [c.seed, frame_index, self.sensor_id, int(kc.STREAM_NOISE), buf.keys],
                  dev, min_chunk=batch)
        launch_1d(k.multibeam_device_mix_kernel, batch * c.n_samples * c.n_beams,
                  [buf.raw, buf.raw_power, self._device_pattern, c.n_beams, c.n_samples, self._row_noise,
                   self._row_reverb, self._beam_reverb, buf.keys, self._row_gain, out.time_series, out.intensity,
                   out.clean_intensity, out.db], dev)
        if c.agc_level is not None:
            n_bins = batch * c.n_samples * c.n_beams
            launch_1d(kc.frame_mean_kernel, batch, [out.intensity, c.n_samples, c.n_beams, buf.frame_mean], dev,
                      min_chunk=1)
            launch_1d(kc.scale_frame_kernel, n_bins, [out.intensity, out.clean_intensity, buf.frame_mean,
                                                      float(10.0 ** (c.agc_level / 10.0)), c.n_samples, c.n_beams],
                      dev)
            launch_1d(k.intensity_db_kernel, n_bins, [out.intensity, c.n_samples, c.n_beams, out.db], dev)

    def _trace(self, scene: Any, poses: wp.array, buf: _Buffers, n_rays: int, jitter_key: int, phase_key: int,
               wavelength: float, alpha: float) -> None:
        """Multipath (sensors/acoustic/multipath.py): the direct echo and one block per bounce into the per-ray
        amplitude, power, delay and footprint arrays, each beam's blocks contiguous for the deposit."""
        c = self.config
        dev = self.device
        rays, state = buf.rays, buf.bounce
        rays_per_beam = c.azimuth_rays_per_beam * c.rays_per_beam
        fov, cell = math.radians(c.fov), math.radians(c.elevation_fan) / c.rays_per_beam

        def init() -> None:
            launch_1d(km.multibeam_bounce_init_kernel, n_rays,
                      [poses, c.n_beams, c.azimuth_rays_per_beam, c.rays_per_beam, fov, self._elev_table, cell,
                       int(c.jitter), jitter_key, *state.init_outputs()], dev)

        def echo(block: int, iface: Any, law: Any) -> None:
            launch_1d(km.multibeam_bounce_echo_kernel, n_rays,
                      [rays.origins, rays.directions, *rays.hit_args(), iface.mu, iface.label, iface.interface, law,
                       state.path, state.amp, state.edge_a, state.edge_b, state.weight, phase_key, 0.25 * wavelength,
                       float(c.sound_speed), float(c.frequency), c.fs, c.t0, float(c.n_samples - 1),
                       float(c.pulse_half_width), 10.0 ** (c.source_level / 10.0), alpha, block, buf.blocks,
                       rays_per_beam, buf.amp, buf.power, buf.delay, buf.extent], dev)
            if block > 0 and buf.mixed:
                self._tracer.visibility(scene, rays, buf.vis, buf.vis_remaining, poses, c.rays_per_pose, iface, law)
                launch_1d(km.multibeam_mixed_echo_kernel, n_rays,
                          [rays.origins, rays.directions, *rays.hit_args(), buf.vis.hits.face, iface.mu, iface.label,
                           iface.interface, law, state.path, state.amp, state.edge_a, state.edge_b, state.weight,
                           poses, c.n_beams, c.azimuth_rays_per_beam, c.rays_per_beam, fov, self._elev_table, cell,
                           phase_key, 0.25 * wavelength, float(c.sound_speed), float(c.frequency), c.fs, c.t0,
                           float(c.n_samples - 1), float(c.pulse_half_width), 10.0 ** (c.source_level / 10.0), alpha,
                           c.multipath_bounces + block, buf.blocks, block, c.multipath_bounces, buf.amp, buf.power,
                           buf.delay, buf.extent, *buf.cross], dev)

        self._tracer.trace(scene, rays, state, float(c.max_range), init, echo, mixed=bool(buf.mixed))

    def _spectral_series(self, buf: _Buffers, batch: int, rays_per_beam: int) -> None:
        """The reference: device per-frequency sums, host fold onto the FFT grid and inverse FFT (numpy)."""
        c = self.config
        m = c.n_frequencies
        n_fft = c.fft_length
        launch_1d(k.multibeam_spectrum_kernel, batch * c.n_beams * m,
                  [buf.amp, buf.delay, rays_per_beam, m, n_fft, self._spectrum_scale, buf.spectrum],
                  self.device)
        spec = buf.spectrum.numpy().astype(np.float64).view(np.complex128)[..., 0].reshape(batch, c.n_beams, m)
        folded = np.zeros((batch, c.n_beams, n_fft), dtype=np.complex128)
        for lo in range(0, m, n_fft):  # indices within one block are distinct: a deterministic fold
            hi = min(lo + n_fft, m)
            folded[:, :, self._fold_index[lo:hi]] += spec[:, :, lo:hi]
        series = c.fs * np.fft.ifft(folded, axis=-1)[:, :, : c.n_samples]  # (B, beams, samples)
        host = np.ascontiguousarray(series.transpose(0, 2, 1).astype(np.complex64)).view(np.float32)
        buf.raw.assign(wp.array(host.reshape(batch, c.n_samples, c.n_beams, 2), dtype=wp.vec2, device="cpu"))


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module

_DISPLAY = "8-bit display view (uint8 0..255), not a measurement"
_IMAGE = ("n_samples", "n_beams")


def _cli_write(o: _reg.CliOutput) -> list[str]:
    """``oceansim-py render multibeam``: ``multibeam_polar.png`` (dB image; rows = range, nearest at the top;
    columns = beams, port on the left), ``multibeam_fan.png`` (the Cartesian fan, sonar at the bottom centre,
    starboard right), ``multibeam_time_series.npy`` ((n_samples, n_beams) complex64 baseband pressure),
    ``multibeam_intensity.npy`` (|p|^2, float32), ``multibeam_ranges.npy`` and ``multibeam_bearings.npy``."""
    c, out, data, args = o.config, o.out, o.data, o.args
    _reg.warn_if_blind("multibeam echosounder", float(data["intensity"][0].max() > 0), o, c.max_range)
    o.result.save_png(out / "multibeam_polar.png", db_range=args.db_range)
    o.result.save_png(out / "multibeam_fan.png", fan_width=args.fan_width, db_range=args.db_range)
    for name in ("time_series", "intensity"):
        images.save_npy(out / f"multibeam_{name}.npy", data[name][0])
    for name in ("ranges", "bearings"):
        images.save_npy(out / f"multibeam_{name}.npy", data[name])
    return [f"rendered a {c.n_samples} x {c.n_beams} multibeam ping ({o.result.method} method, {c.rays_per_pose} "
            f"rays) of {o.scene.source} in {o.seconds:.3f} s",
            f"wrote {out / 'multibeam_polar.png'}, {out / 'multibeam_fan.png'}, {out / 'multibeam_time_series.npy'}"]


def _cli_render(sensor: MultibeamSonar, scene: Any, poses: Any, frame_index: int, args: Any) -> Any:
    """``oceansim-py render multibeam``: the render with ``--method``; an error of the method names the flag."""
    try:
        return sensor.render(scene, poses, frame_index=frame_index, method=args.method)
    except ConfigError as exc:
        if args.method is None or "method" not in str(exc):
            raise
        raise ConfigError(f"--method {args.method}: {exc}") from exc


SENSOR_KIND = _reg.SensorKind(
    name="multibeam", description="multibeam echosounder: per-beam complex baseband time series",
    config_class=MultibeamSonarConfig, sensor_class=MultibeamSonar,
    schema=(
        _reg.Product("time_series", _reg.ARRAY, "complex64",
                     "complex baseband pressure (complex64): model 'peer', uPa at 1 m source-level reference; "
                     "model 'device', the received pressure re 1 uPa (echo, volume reverberation and receiver noise), "
                     "before the TVG and gain", _IMAGE),
        _reg.Product("intensity", _reg.ARRAY, "float32",
                     "uPa^2: model 'peer': squared magnitude |p|^2 of the baseband pressure (source level "
                     "referenced to 1 m); model 'device': detected intensity re 1 uPa^2 (noise and reverberation "
                     "included) after the TVG and fixed/automatic gain of the config", _IMAGE),
        _reg.Product("db", _reg.ARRAY, "float32", "10 log10 intensity, dB re 1 uPa^2 (model 'device': after the TVG "
                     "and gain; -300 where the intensity is 0)", _IMAGE),
        _reg.Product("polar_png", _reg.IMAGE, "uint8", _DISPLAY, _IMAGE,
                     view=lambda result, config: result.to_uint8()),
        _reg.Product("fan_png", _reg.IMAGE, "uint8", _DISPLAY + " (peer: dB scale, 60 dB span; device: the "
                     "config's dB window)", ("*", 512),
                     view=lambda result, config: result.fan_uint8(512, 60.0)),
    ),
    default_products=("intensity", "polar_png", "fan_png"),
    metadata=lambda c: {"ranges_m": c.ranges().tolist(), "bearings_rad": c.bearings().tolist(),
                        "image_layout": "(n_samples, n_beams): row 0 nearest range, column 0 most-port beam; "
                                        "time_series complex64 baseband"},
    cli=_reg.CliTarget(
        help="multibeam echosounder: complex time series (.npy), polar and fan PNGs",
        default_preset="blueview_p900", framing="multibeam", reach=lambda c: (c.max_range, c.fov),
        options=(
            _reg.CliOption(("--method",), {"default": None, "choices": ["time", "spectral"],
                                           "help": "time-series method (default: the config's, normally 'time'; "
                                                   "spectral: the peer model's, e.g. --preset blueview_p900_peer)"}),
            _reg.CliOption(("--fan-width",), {"type": _reg.cli_number(int, 2, MAX_FAN_WIDTH, "pixels"),
                                              "default": 800,
                                              "help": "width of the fan image in pixels (default 800)"}),
            _reg.CliOption(("--db-range",), {"type": _reg.cli_number(float, 1.0, 200.0, "dB"), "default": 60.0,
                                             "help": "dynamic range of the PNGs in dB (default 60)"}),
        ),
        render=_cli_render,
        write=_cli_write),
)
