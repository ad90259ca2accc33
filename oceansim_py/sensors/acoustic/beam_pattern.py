"""Line-array beam patterns, tapers and the point-spread kernels of the device chain (docs/PHYSICS.md §1b).

Bearing and elevation patterns are those of a line array of :data:`ARRAY_ELEMENTS` elements with an amplitude
taper w_n, steered to broadside. With x = (L / lambda) sin(theta) (L the aperture) the one-way *amplitude*
pattern is

    D(x) = sum_n w_n exp(i 2 pi x (n - (N - 1) / 2) / N) / sum_n w_n            (real for symmetric tapers)

and the beam's -3 dB width is where |D|^2 = 1/2. Given a datasheet beam width, the aperture L / lambda is solved
so that the pattern's -3 dB full width equals it (uniform taper: L / lambda = 0.886 / theta_3dB in the small-angle
limit). Tapers: ``uniform`` (first side lobe -13.26 dB), ``hann`` (-31.5 dB, main lobe 1.6x wider),
``chebyshev`` (Dolph-Chebyshev, all side lobes at a chosen level).

Range point spread: the matched-filter output of a pulse of -3 dB bandwidth B, whose spectrum is flat over the
band or weighted by a taper; by the stated convention its *intensity* has -3 dB full width delta_r = c / (2 B).
The output is the Fourier transform of the spectrum weighting: the same function as the array factor of that
taper, so :func:`range_kernel` reuses it (uniform: sinc-like, first range side lobe -13.3 dB).

Kernels are sampled on the image grid and normalised to a peak of 1, so a point target's peak keeps its echo
level and a distributed target's level is that of a resolution cell (sum of h^2 bins' worth of scatterers).
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np

from oceansim_py.errors import ConfigError

Taper = Literal["uniform", "hann", "chebyshev"]
TAPERS: tuple[str, ...] = ("uniform", "hann", "chebyshev")

#: How a sensor's beams are formed across the fan (``beam_steering``): ``flat_array``, each beam by phase-steering
#: one flat line array, so the beam steered to theta_j has the pattern D((L / lambda)(sin theta - sin theta_j)) and
#: widens as 1 / cos theta_j; ``constant``, every beam the broadside pattern D((L / lambda) sin(theta - theta_j))
#: (an acoustic lens, as in the ARIS, or a curved array).
BEAM_STEERINGS: tuple[str, ...] = ("flat_array", "constant")

#: Elements of the modelled line array (odd: a symmetric taper has a centre element). 65 elements at lambda/2
#: spacing keep grating lobes out of view for beams narrower than ~1.6 degrees... and for wider ones the
#: element spacing is finer (the spacing is L / N), so no grating lobe falls within +-90 degrees while
#: L / lambda < N / 2.
ARRAY_ELEMENTS = 65

#: Largest point-spread kernel half-width (taps) accepted; wider ones are refused with their size.
MAX_KERNEL_HALF_WIDTH = 4096


def chebyshev_taper(n: int, sidelobe_db: float) -> np.ndarray:
    """Dolph-Chebyshev taper of ``n`` (odd) elements with all side lobes at ``sidelobe_db`` (< 0) dB."""
    if n % 2 != 1:
        raise ConfigError(f"chebyshev_taper: n must be odd, got {n}")
    if not sidelobe_db < 0.0:
        raise ConfigError(f"chebyshev_taper: sidelobe_db must be < 0 dB, got {sidelobe_db}")
    order = n - 1
    beta = math.cosh(math.acosh(10.0 ** (-sidelobe_db / 20.0)) / order)
    x = beta * np.cos(np.pi * np.arange(n) / n)
    p = np.empty(n)
    big = np.abs(x) > 1.0
    p[big] = np.cosh(order * np.arccosh(np.abs(x[big]))) * np.where(x[big] > 0, 1.0, -1.0) ** order
    p[~big] = np.cos(order * np.arccos(x[~big]))
    w = np.real(np.fft.fft(p))
    half = (n + 1) // 2
    w = np.concatenate((w[half - 1:0:-1], w[:half]))
    return w / w.max()


def taper_weights(taper: str, sidelobe_db: float = -30.0, n: int = ARRAY_ELEMENTS) -> np.ndarray:
    """Amplitude weights w_n of ``taper`` over ``n`` elements (max 1)."""
    if taper == "uniform":
        return np.ones(n)
    if taper == "hann":
        return np.sin(np.pi * (np.arange(n) + 0.5) / n) ** 2
    if taper == "chebyshev":
        return chebyshev_taper(n, sidelobe_db)
    raise ConfigError(f"taper must be one of {list(TAPERS)}, got {taper!r}")


#: Pattern values (x values x array elements; rows x taps x elements in :func:`steered_taps`) evaluated at once
#: (32 MiB of float64).
PATTERN_BLOCK = 1 << 22


def array_factor(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Amplitude pattern D(x) (real, D(0) = 1) at x = (L / lambda) sin(theta), evaluated over blocks of at most
    :data:`PATTERN_BLOCK` pattern terms (x values times elements), so the float64 temporaries stay near 32 MiB
    however many x (an elevation pattern of 10^6 rays needed 1 GB in one piece)."""
    n = weights.size
    pos = (np.arange(n) - (n - 1) / 2.0) / n
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1)
    d = np.empty(flat.size, np.float64)
    step = max(1, PATTERN_BLOCK // n)
    for a in range(0, flat.size, step):
        d[a:a + step] = np.cos(2.0 * np.pi * np.multiply.outer(flat[a:a + step], pos)) @ weights
    return d.reshape(x.shape) / weights.sum()


def half_power_x(weights: np.ndarray) -> float:
    """The x > 0 where |D(x)|^2 first falls to 1/2 (bisection on the main lobe)."""
    xs = np.linspace(0.0, 4.0, 4001)
    below = np.nonzero(array_factor(xs, weights) ** 2 < 0.5)[0]
    lo, hi = xs[below[0] - 1], xs[below[0]]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if array_factor(np.array([mid]), weights)[0] ** 2 < 0.5:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


@functools.lru_cache(maxsize=64)
def widest_beam_rad(taper: str, sidelobe_db: float = -30.0) -> float:
    """Widest one-way -3 dB full beam width (rad) that a ``taper`` line array of at least half a wavelength forms:
    the aperture solved for a width theta is L / lambda = x_half / sin(theta / 2) (:class:`LineArray`), so
    L / lambda >= 1/2 means theta <= 2 asin(2 x_half); pi when 2 x_half >= 1 (uniform: 124.7 degrees)."""
    s = 2.0 * half_power_x(taper_weights(taper, sidelobe_db))
    return math.pi if s >= 1.0 else 2.0 * math.asin(s)


class LineArray:
    """A broadside line array whose one-way -3 dB full beam width is ``beam_width_rad``."""

    def __init__(self, beam_width_rad: float, taper: str = "uniform", sidelobe_db: float = -30.0) -> None:
        if not 0.0 < beam_width_rad < math.pi:
            raise ConfigError(f"LineArray: beam width must lie in (0, 180) degrees, got "
                              f"{math.degrees(beam_width_rad)} degrees")
        self.weights = taper_weights(taper, sidelobe_db)
        self.aperture_wavelengths = half_power_x(self.weights) / math.sin(0.5 * beam_width_rad)
        if self.aperture_wavelengths < 0.5:
            raise ConfigError(f"LineArray: a {math.degrees(beam_width_rad):.1f} degree beam needs an aperture under "
                              f"half a wavelength; use a narrower beam width")

    def amplitude(self, angle_rad: np.ndarray) -> np.ndarray:
        """One-way amplitude pattern D(theta) (real, D(0) = 1) at angles off the beam axis (rad)."""
        return array_factor(self.aperture_wavelengths * np.sin(np.asarray(angle_rad, dtype=np.float64)),
                            self.weights)


def bearing_kernel(array: LineArray, beam_spacing_rad: float, extent_rad: float) -> np.ndarray:
    """Bearing point-spread taps h[m] = D(m * spacing), m = -M..M with M = ceil(extent / spacing) (peak 1), but no
    tap more than 90 degrees off the beam axis: a source there lies behind the aperture, and D(sin(m spacing))
    would fold the pattern's main lobe back in at 180 degrees."""
    half = min(int(math.ceil(extent_rad / beam_spacing_rad - 1e-9)),
               int(math.floor(0.5 * math.pi / beam_spacing_rad + 1e-9)))
    if half > MAX_KERNEL_HALF_WIDTH:
        raise ConfigError(f"bearing point-spread kernel would need {2 * half + 1} taps (> "
                          f"{2 * MAX_KERNEL_HALF_WIDTH + 1}); lower psf_extent or use fewer beams")
    m = np.arange(-half, half + 1)
    return array.amplitude(m * beam_spacing_rad).astype(np.float32)


def channel_bearings(n_channels: int, spacing_rad: float) -> np.ndarray:
    """Bearing of each channel centre (rad) of a fan of ``n_channels`` spaced ``spacing_rad`` and centred on the
    sensor axis: theta_j = (j + 1/2 - n / 2) spacing."""
    return (np.arange(n_channels) + 0.5 - 0.5 * n_channels) * spacing_rad


def element_factor(theta_rad: np.ndarray, element_width: float) -> np.ndarray:
    """One-way amplitude directivity E(theta) = sinc(w sin theta) = sin(pi w sin theta) / (pi w sin theta) of one
    element ``element_width`` = w wavelengths wide in a baffled flat array (1 for w = 0: omnidirectional)."""
    return np.sinc(element_width * np.sin(np.asarray(theta_rad, dtype=np.float64)))


def steered_reach(array: LineArray, n_channels: int, spacing_rad: float, extent_rad: float,
                  within_fan: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per channel j of a steered flat array, the first and last source offsets (m_lo_j, m_hi_j) (beam steps) its
    kernel keeps: while |sin theta_(j + m) - sin theta_j| reaches no further than the last tap of the broadside
    kernel (:func:`bearing_kernel`), and the source lies inside the fan (``within_fan``) or only in front of the
    aperture (|theta_(j + m)| <= 90 degrees: the volume outside the fan)."""
    half0 = (bearing_kernel(array, spacing_rad, extent_rad).size - 1) // 2
    theta = channel_bearings(n_channels, spacing_rad)
    sin_j = np.sin(theta)
    reach = math.sin(min(half0 * spacing_rad, 0.5 * math.pi))
    # the farthest source on each side within the reach (sin is monotonic on [-90, 90] degrees)
    hi_theta = np.arcsin(np.minimum(sin_j + reach, 1.0))
    lo_theta = np.arcsin(np.maximum(sin_j - reach, -1.0))
    m_hi = np.floor((hi_theta - theta) / spacing_rad + 1e-9).astype(np.int64)
    m_lo = np.ceil((lo_theta - theta) / spacing_rad - 1e-9).astype(np.int64)
    if within_fan:
        j = np.arange(n_channels)
        m_hi, m_lo = np.minimum(m_hi, n_channels - 1 - j), np.maximum(m_lo, -j)
    return m_lo, m_hi


def steered_taps(array: LineArray, theta_rad: np.ndarray, spacing_rad: float, m_lo: np.ndarray, m_hi: np.ndarray,
                 half: int, element_width: float) -> np.ndarray:
    """Taps (rows, 2 half + 1) float32 of flat arrays steered to ``theta_rad``: h[m] = D((L / lambda)(sin(theta + m
    spacing) - sin theta)) E(theta + m spacing) for m_lo <= m <= m_hi, else 0 (m = -half..half), evaluated in
    blocks of rows of at most :data:`PATTERN_BLOCK` pattern terms."""
    m = np.arange(-half, half + 1)
    out = np.empty((theta_rad.size, m.size), np.float32)
    rows = max(1, PATTERN_BLOCK // (m.size * array.weights.size))
    for a in range(0, theta_rad.size, rows):
        theta = theta_rad[a:a + rows]
        source = theta[:, None] + m[None, :] * spacing_rad
        x = array.aperture_wavelengths * (np.sin(source) - np.sin(theta)[:, None])
        taps = array_factor(x, array.weights) * element_factor(source, element_width)
        keep = (m[None, :] >= m_lo[a:a + rows, None]) & (m[None, :] <= m_hi[a:a + rows, None])
        out[a:a + rows] = np.where(keep, taps, 0.0)
    return out


def bearing_kernels(array: LineArray, n_channels: int, spacing_rad: float, extent_rad: float,
                    steering: str = "flat_array", element_width: float = 0.0) -> np.ndarray:
    """Bearing point-spread taps of every channel: (n_channels, 2 M + 1) float32, row j the weights h_j[m] of the
    sources j + m - M of output channel j (at m = M: 1 for ``constant``, E(theta_j) for ``flat_array``), for a fan
    centred on the sensor axis (:func:`channel_bearings`).

    ``constant``: every row is :func:`bearing_kernel` (the broadside pattern at m beam steps, out to ``extent_rad``).
    ``flat_array``: row j is the pattern of a flat array steered to theta_j, seen from a source at theta_(j + m) =
    theta_j + m spacing: h_j[m] = D((L / lambda)(sin theta_(j + m) - sin theta_j)), kept while |sin theta_(j + m) -
    sin theta_j| reaches no further than the broadside kernel's last tap in sin theta (so row j's kernel spans the
    same part of the pattern, 1 / cos theta_j times as many beams) and the source lies inside the fan
    (:func:`steered_reach`); M is the largest half-width over the rows; each tap times the element factor
    E(theta_(j + m)) of the array's elements (:func:`element_factor`, ``element_width`` wavelengths; 1 for 0), which
    weights an echo by its direction of arrival. At broadside, with omnidirectional elements, the two are the same
    taps.
    """
    if steering not in BEAM_STEERINGS:
        raise ConfigError(f"beam_steering must be one of {list(BEAM_STEERINGS)}, got {steering!r}")
    if steering == "constant":
        return np.tile(bearing_kernel(array, spacing_rad, extent_rad), (n_channels, 1))
    m_lo, m_hi = steered_reach(array, n_channels, spacing_rad, extent_rad, within_fan=True)
    half = int(max(m_hi.max(), -m_lo.min()))
    if half > MAX_KERNEL_HALF_WIDTH:
        raise ConfigError(f"bearing point-spread kernels of a flat array would need {2 * half + 1} taps at the fan's "
                          f"edge (> {2 * MAX_KERNEL_HALF_WIDTH + 1}); lower psf_extent, use fewer beams or "
                          f"beam_steering 'constant'")
    return steered_taps(array, channel_bearings(n_channels, spacing_rad), spacing_rad, m_lo, m_hi, half,
                        element_width)


def beam_equivalent_widths(array: LineArray, n_channels: int, spacing_rad: float, extent_rad: float,
                           steering: str = "flat_array", element_width: float = 0.0) -> np.ndarray:
    """Volume each channel's beam gathers relative to the broadside beam's, (n_channels,) float64: sum_m h_j[m]^2 /
    sum_m h[m]^2, with h the broadside kernel (:func:`bearing_kernel`) and h_j channel j's steered taps
    (:func:`bearing_kernels`) not cut at the fan's edges (volume lies outside the fan too), over the sources in
    front of the aperture (:func:`steered_reach`): the weight a uniform layer of scatterers gets through the
    kernel. ``flat_array``: E(theta_j)^2 / cos theta_j to first order in the beam width (the beam 1 / cos theta_j
    wider, its elements' directivity), but finite where the beam is steered to end-fire (its pattern in sin theta
    runs out at sin theta = 1) and where a wide beam's E varies across it. ``constant``: 1 for every channel.
    """
    if steering not in BEAM_STEERINGS:
        raise ConfigError(f"beam_steering must be one of {list(BEAM_STEERINGS)}, got {steering!r}")
    if steering == "constant":
        return np.ones(n_channels)
    broadside = float(np.sum(bearing_kernel(array, spacing_rad, extent_rad).astype(np.float64) ** 2))
    m_lo, m_hi = steered_reach(array, n_channels, spacing_rad, extent_rad, within_fan=False)
    half = int(max(m_hi.max(), -m_lo.min()))
    theta = channel_bearings(n_channels, spacing_rad)
    rows = max(1, PATTERN_BLOCK // ((2 * half + 1) * array.weights.size))
    out = np.empty(n_channels)
    for a in range(0, n_channels, rows):
        taps = steered_taps(array, theta[a:a + rows], spacing_rad, m_lo[a:a + rows], m_hi[a:a + rows], half,
                            element_width).astype(np.float64)
        out[a:a + rows] = np.sum(taps ** 2, axis=1) / broadside
    return out


def range_kernel(resolution_m: float, bin_m: float, taper: str = "uniform", sidelobe_db: float = -30.0,
                 extent: float = 6.0) -> np.ndarray:
    """Range point-spread taps h[m], m = -M..M, M = ceil(extent * delta_r / dr) (peak 1).

    The matched-filter output of a pulse whose spectrum is flat over the band (``uniform``: a sinc-like response,
    first range side lobe -13.3 dB) or weighted by ``taper`` across it: the Fourier pair of the spectrum
    weighting, i.e. :func:`array_factor` of the taper, scaled so that its intensity -3 dB full width is
    ``resolution_m`` = c / (2 B).
    """
    weights = taper_weights(taper, sidelobe_db)
    half = int(math.ceil(extent * resolution_m / bin_m - 1e-9))
    if half > MAX_KERNEL_HALF_WIDTH:
        raise ConfigError(f"range point-spread kernel would need {2 * half + 1} taps (> "
                          f"{2 * MAX_KERNEL_HALF_WIDTH + 1}): the range resolution {resolution_m:.4g} m spans too "
                          f"many range bins of {bin_m:.4g} m; raise bandwidth, lower psf_extent or use fewer "
                          f"range_bins")
    m = np.arange(-half, half + 1)
    x = m * bin_m * (2.0 * half_power_x(weights) / resolution_m)
    return array_factor(x, weights).astype(np.float32)


def first_sidelobe_db(weights: np.ndarray) -> float:
    """Level (dB re the main lobe) of the highest side lobe of |D|^2 beyond the first null."""
    xs = np.linspace(0.0, 6.0, 12001)
    p = array_factor(xs, weights) ** 2
    rising = np.nonzero(np.diff(p) > 0)[0]
    return float(10.0 * np.log10(p[rising[0]:].max()))
