"""A moving sea surface: a directional wave spectrum sampled into Gerstner (trochoidal) or linear waves.

Sea state (docs/PHYSICS.md section 7; VRX, Bingham et al. 2019, section II-A):

- **Spectra** S(omega) (m^2 s / rad), omega the angular frequency (rad/s), g = 9.80665 m/s^2:

  - ``pierson_moskowitz`` (fully developed sea; Pierson & Moskowitz 1964), from the wind speed U10 at 10 m (m/s):
    S = alpha g^2 omega^-5 exp(-5/4 (omega_p / omega)^4), alpha = 8.1e-3, omega_p = 0.877 g / U19.5 with
    U19.5 = 1.026 U10 (the 1/7 power law between 10 m and 19.5 m); Hs = 0.21 U19.5^2 / g = 0.162 g / omega_p^2.
  - ``bretschneider`` (the two-parameter Pierson-Moskowitz spectrum of VRX eq. 3): given Hs (m) and the peak
    period Tp = 2 pi / omega_p (s), S = 5/16 Hs^2 omega_p^4 omega^-5 exp(-5/4 (omega_p / omega)^4).
  - ``jonswap`` (fetch-limited sea; Hasselmann et al. 1973), from U10 and the fetch F (m):
    S = alpha g^2 omega^-5 exp(-5/4 (omega_p / omega)^4) gamma^r, r = exp(-(omega - omega_p)^2 /
    (2 sigma^2 omega_p^2)), alpha = 0.076 (U10^2 / (F g))^0.22, omega_p = 22 (g^2 / (U10 F))^(1/3),
    gamma = 3.3, sigma = 0.07 below omega_p and 0.09 above.

- **Directional spreading** D(omega, theta) (1/rad, integrating to 1 over theta) about the mean direction
  theta_m (the direction the waves travel to, counter-clockwise from +x): ``mitsuyasu``
  D = N(s) cos^2s((theta - theta_m) / 2), N(s) = Gamma(s + 1) / (2 sqrt(pi) Gamma(s + 1/2)), with
  s = s_max (omega / omega_p)^5 below the peak and s_max (omega / omega_p)^-2.5 above (Mitsuyasu et al. 1975;
  VRX eq. 8-10), s_max = 11.5 (omega_p U10 / g)^-2.5 from the wind unless ``spreading_s`` is given (about 17 for a
  fully developed sea); ``cos2s``: the same shape with one s for every frequency; ``none``: long-crested waves
  all travelling along theta_m.

- **Sampling.** The spectrum is cut into ``n_frequencies`` bands holding equal energy (m0 / n each, from its
  cumulative integral on a fine grid between 0.3 and 8 omega_p, which holds all but ~0.03 % of a
  Pierson-Moskowitz spectrum's energy), each at its energy-weighted mean frequency, and each band into
  ``n_directions`` equal direction bins; component (i, j) has amplitude A = sqrt(2 m0_i D_ij dtheta) (VRX eq. 6),
  so sum A^2 / 2 = m0 and Hs = 4 sqrt(m0) hold exactly for the sampled field. Each component gets a random phase
  from a counter-based generator keyed by the seed (Philox), so the same seed gives the same sea everywhere.

- **Waves.** Dispersion omega^2 = g k tanh(k d) (deep water when ``depth`` is inf: omega^2 = g k). A rest point of
  the undisturbed surface moves as in :mod:`oceansim_py.kernels.sea_surface`: vertically by the linear wave sum
  (so the elevation statistics are those of the spectrum), horizontally by ``steepness`` q times the particle
  orbit (A / tanh(k d)): q = 0 gives linear (sinusoidal) waves, q = 1 true trochoidal (Gerstner) waves with the
  orbits of linear theory. Where the components together would fold the surface (sum k h > 1), every horizontal
  amplitude is scaled down by the same factor so that sum k h = 1, which keeps the map from rest points to the
  surface one-to-one (its Jacobian is I - M with |M| <= sum k h). This is stricter than VRX's per-component
  q_i = min(q, 1 / (k_i A_i)), which can still loop when components add up.
  The rest points keep the spectrum's mean level and variance; seen from a fixed place (a wave gauge, a ray cast
  down) the horizontal motion lowers the mean level by sum k h A / 2 (crests narrow, troughs widen): about 1-3 cm
  for a U10 = 8 m/s sea at steepness 1, none for linear waves.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Literal

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import ConfigBase, require, require_positive
from oceansim_py.kernels import sea_surface as sea_kernels
from oceansim_py.runtime import launch_1d, resolve_device
from oceansim_py.sensors.scratch import ScratchCache

_OWNER = "SeaStateConfig"

#: Standard gravity (m/s^2).
GRAVITY = 9.80665

#: U19.5 / U10 under the 1/7 power law of the marine wind profile ((19.5 / 10)^(1/7)).
U195_OVER_U10 = 1.026

#: Most components a sea state may have (frequencies x directions); each vertex sums over all of them.
MAX_COMPONENTS = 16384

#: Fine-grid points on which the spectrum's cumulative energy is integrated, and its span in units of omega_p.
_GRID_POINTS = 8192
_GRID_SPAN = (0.3, 8.0)

SPECTRA = ("pierson_moskowitz", "bretschneider", "jonswap")
SPREADINGS = ("mitsuyasu", "cos2s", "none")

#: ``sea_state`` value meaning no moving surface, even where the scene declares one (``load_scene``, rigs).
FLAT_SEA = "flat"


@dataclasses.dataclass(frozen=True)
class SeaStateConfig(ConfigBase):
    """A sea state: spectrum, directional spreading, sampling and wave shape (see the module docstring).

    spectrum: ``pierson_moskowitz`` | ``bretschneider`` | ``jonswap``. wind_speed: U10, m/s at 10 m
    (Pierson-Moskowitz, JONSWAP, and the Mitsuyasu s_max). fetch: m (JONSWAP). significant_wave_height: Hs, m,
    and peak_period: Tp, s (Bretschneider). gamma: JONSWAP peak enhancement. direction: mean direction the waves
    travel to, degrees counter-clockwise from +x. spreading: ``mitsuyasu`` | ``cos2s`` | ``none``. spreading_s:
    s of cos2s, or s_max of Mitsuyasu (0: from the wind). n_frequencies, n_directions: components per axis
    (``none`` uses one direction). steepness: 0 (linear waves) .. 1 (trochoidal waves, kept from folding). depth: water
    depth, m (inf: deep water). seed: keys the random phases.
    """

    spectrum: Literal["pierson_moskowitz", "bretschneider", "jonswap"] = "pierson_moskowitz"
    wind_speed: float = 8.0
    fetch: float = 50_000.0
    significant_wave_height: float = 1.0
    peak_period: float = 6.0
    gamma: float = 3.3
    direction: float = 0.0
    spreading: Literal["mitsuyasu", "cos2s", "none"] = "mitsuyasu"
    spreading_s: float = 0.0
    n_frequencies: int = 32
    n_directions: int = 16
    steepness: float = 0.5
    depth: float = math.inf
    seed: int = 0

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "calm": {"spectrum": "pierson_moskowitz", "wind_speed": 3.0},
        "moderate": {"spectrum": "pierson_moskowitz", "wind_speed": 8.0},
        "rough": {"spectrum": "pierson_moskowitz", "wind_speed": 15.0},
        "harbour_chop": {"spectrum": "jonswap", "wind_speed": 10.0, "fetch": 2_000.0},
    }

    def validate(self) -> None:
        require(self.spectrum in SPECTRA, _OWNER, "spectrum", f"must be one of {list(SPECTRA)}, got {self.spectrum!r}")
        require(self.spreading in SPREADINGS, _OWNER, "spreading",
                f"must be one of {list(SPREADINGS)}, got {self.spreading!r}")
        require_positive(self.wind_speed, _OWNER, "wind_speed", "m/s")
        require(self.wind_speed <= 60.0, _OWNER, "wind_speed", f"must be <= 60 m/s (hurricane), got {self.wind_speed}")
        require_positive(self.fetch, _OWNER, "fetch", "m")
        require_positive(self.significant_wave_height, _OWNER, "significant_wave_height", "m")
        require_positive(self.peak_period, _OWNER, "peak_period", "s")
        require(1.0 <= self.gamma <= 10.0, _OWNER, "gamma", f"must lie in [1, 10] (3.3 is JONSWAP's), got {self.gamma}")
        require(math.isfinite(self.direction), _OWNER, "direction", f"must be finite degrees, got {self.direction}")
        require(math.isfinite(self.spreading_s) and self.spreading_s >= 0.0, _OWNER, "spreading_s",
                f"must be >= 0 (0: Mitsuyasu's from the wind), got {self.spreading_s}")
        require(self.spreading != "cos2s" or self.spreading_s > 0, _OWNER, "spreading_s",
                "must be > 0 with spreading 'cos2s'")
        for name in ("n_frequencies", "n_directions"):
            v = getattr(self, name)
            require(isinstance(v, int) and v >= 1, _OWNER, name, f"must be an integer >= 1, got {v!r}")
        require(self.n_frequencies * self.n_directions <= MAX_COMPONENTS, _OWNER, "n_frequencies",
                f"n_frequencies x n_directions = {self.n_frequencies * self.n_directions} components exceeds "
                f"{MAX_COMPONENTS}; every surface vertex sums over all of them: lower one of them")
        require(0.0 <= self.steepness <= 1.0, _OWNER, "steepness", f"must lie in [0, 1], got {self.steepness}")
        require(self.depth > 0 and not math.isnan(self.depth), _OWNER, "depth",
                f"must be > 0 m (inf for deep water), got {self.depth}")

    # -- spectrum ----------------------------------------------------------------------------------------
    @property
    def peak_frequency(self) -> float:
        """omega_p, rad/s."""
        if self.spectrum == "pierson_moskowitz":
            return 0.877 * GRAVITY / (U195_OVER_U10 * self.wind_speed)
        if self.spectrum == "bretschneider":
            return 2.0 * math.pi / self.peak_period
        return 22.0 * (GRAVITY**2 / (self.wind_speed * self.fetch)) ** (1.0 / 3.0)

    def spectral_density(self, omega: np.ndarray) -> np.ndarray:
        """S(omega), m^2 s / rad, at angular frequencies ``omega`` (rad/s, > 0)."""
        w = np.asarray(omega, dtype=np.float64)
        wp_ = self.peak_frequency
        shape = w**-5.0 * np.exp(-1.25 * (wp_ / w) ** 4)
        if self.spectrum == "pierson_moskowitz":
            return 8.1e-3 * GRAVITY**2 * shape
        if self.spectrum == "bretschneider":
            return 5.0 / 16.0 * self.significant_wave_height**2 * wp_**4 * shape
        alpha = 0.076 * (self.wind_speed**2 / (self.fetch * GRAVITY)) ** 0.22
        sigma = np.where(w <= wp_, 0.07, 0.09)
        r = np.exp(-((w - wp_) ** 2) / (2.0 * sigma**2 * wp_**2))
        return alpha * GRAVITY**2 * shape * self.gamma**r

    def spreading_exponent(self, omega: np.ndarray) -> np.ndarray:
        """s(omega) of the cos^2s spreading (dimensionless)."""
        w = np.asarray(omega, dtype=np.float64) / self.peak_frequency
        if self.spreading == "cos2s":
            return np.full_like(w, self.spreading_s)
        s_max = self.spreading_s or 11.5 * (self.peak_frequency * self.wind_speed / GRAVITY) ** -2.5
        return s_max * np.where(w <= 1.0, w**5, w**-2.5)


def spreading_normalisation(s: np.ndarray) -> np.ndarray:
    """N(s) = Gamma(s + 1) / (2 sqrt(pi) Gamma(s + 1/2)), so that N(s) cos^2s(dtheta / 2) integrates to 1 over
    one turn (computed through log-gamma, valid for large s)."""
    s = np.asarray(s, dtype=np.float64)
    lg = np.vectorize(math.lgamma)
    return np.exp(lg(s + 1.0) - lg(s + 0.5)) / (2.0 * math.sqrt(math.pi))


def wavenumber(omega: np.ndarray, depth: float) -> np.ndarray:
    """k (rad/m) with omega^2 = g k tanh(k d) (Newton's method; omega^2 / g in deep water, ``depth`` inf)."""
    w = np.asarray(omega, dtype=np.float64)
    k = w**2 / GRAVITY
    if math.isinf(depth):
        return k
    k = np.maximum(k, w / math.sqrt(GRAVITY * depth))  # start above the root: Newton then converges monotonically
    for _ in range(50):
        t = np.tanh(k * depth)
        f = GRAVITY * k * t - w**2
        df = GRAVITY * (t + k * depth * (1.0 - t**2))
        step = f / df
        k = k - step
        if np.all(np.abs(step) <= 1e-14 * k):
            break
    return k


@dataclasses.dataclass(frozen=True)
class WaveComponents:
    """The sampled sea: per component (C,) its wave vector (C, 2) rad/m, angular frequency rad/s, amplitude m,
    horizontal (Gerstner) amplitude m and phase at t = 0 rad."""

    wave_vector: np.ndarray
    omega: np.ndarray
    amplitude: np.ndarray
    horizontal: np.ndarray
    phase: np.ndarray

    @property
    def count(self) -> int:
        return int(self.omega.shape[0])

    @property
    def variance(self) -> float:
        """m0 = sum A^2 / 2 (m^2): the variance of the surface elevation."""
        return float(np.sum(self.amplitude**2) / 2.0)

    @property
    def significant_wave_height(self) -> float:
        """Hs = 4 sqrt(m0), m."""
        return 4.0 * math.sqrt(self.variance)

    def phases_at(self, t: float | np.ndarray) -> np.ndarray:
        """phi - omega t reduced to [0, 2 pi) in float64 (rad), for the float32 kernel: (C,) for one time ``t``
        (s), (N, C) for (N,) times."""
        tt = np.asarray(t, dtype=np.float64)
        if tt.ndim == 0:
            return np.mod(self.phase - self.omega * float(tt), 2.0 * math.pi)
        return np.mod(self.phase[None, :] - self.omega[None, :] * tt.reshape(-1, 1), 2.0 * math.pi)


def sample_components(config: SeaStateConfig) -> WaveComponents:
    """Sample ``config``'s directional spectrum into wave components (module docstring, Sampling)."""
    c = config
    wp_ = c.peak_frequency
    grid = np.linspace(_GRID_SPAN[0] * wp_, _GRID_SPAN[1] * wp_, _GRID_POINTS)
    density = c.spectral_density(grid)
    step = grid[1] - grid[0]
    cumulative = np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) * step / 2.0)])
    m0 = cumulative[-1]
    edges = np.interp(np.linspace(0.0, m0, c.n_frequencies + 1), cumulative, grid)
    moment = np.concatenate([[0.0], np.cumsum((density[1:] * grid[1:] + density[:-1] * grid[:-1]) * step / 2.0)])
    band_energy = np.diff(np.interp(edges, grid, cumulative))
    band_moment = np.diff(np.interp(edges, grid, moment))
    omega = band_moment / band_energy

    n_dir = 1 if c.spreading == "none" else c.n_directions
    mean = math.radians(c.direction)
    dtheta = 2.0 * math.pi / n_dir
    offsets = -math.pi + (np.arange(n_dir) + 0.5) * dtheta  # bin centres relative to the mean direction
    if n_dir == 1:
        weights = np.ones((c.n_frequencies, 1))
        offsets = np.zeros(1)
    else:
        s = c.spreading_exponent(omega)[:, None]
        shape = np.cos(offsets[None, :] / 2.0) ** (2.0 * s)
        weights = shape / shape.sum(axis=1, keepdims=True)  # D dtheta per bin, summing to 1 for each band
    amplitude = np.sqrt(2.0 * band_energy[:, None] * weights)

    k = wavenumber(omega, c.depth)[:, None] * np.ones((1, n_dir))
    theta = mean + offsets[None, :] * np.ones((c.n_frequencies, 1))
    wave_vector = np.stack([k * np.cos(theta), k * np.sin(theta)], axis=-1).reshape(-1, 2)
    omega_c = (omega[:, None] * np.ones((1, n_dir))).reshape(-1)
    amp = amplitude.reshape(-1)
    keep = amp > 0.0
    k_flat = k.reshape(-1)
    orbit = amp / (np.tanh(k_flat * c.depth) if math.isfinite(c.depth) else 1.0)
    total = float(np.sum(k_flat * orbit))
    horizontal = c.steepness * orbit * (min(1.0, 1.0 / total) if total > 0 else 0.0)
    rng = np.random.Generator(np.random.Philox(key=int(c.seed) & (2**64 - 1)))
    phase = rng.uniform(0.0, 2.0 * math.pi, size=amp.shape[0])
    return WaveComponents(wave_vector[keep], omega_c[keep], amp[keep], horizontal[keep], phase[keep])


def check_patch(size: Any, resolution: Any, size_name: str = "SeaSurface: size",
                resolution_name: str = "SeaSurface: resolution") -> int:
    """Vertices per side of a ``size`` m patch at ``resolution`` m; ``ConfigError`` naming the field when either
    is not a positive finite number of metres or the patch is finer than ``SeaSurface.MAX_VERTICES_PER_SIDE``."""
    for value, name in ((size, size_name), (resolution, resolution_name)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
            raise ConfigError(f"{name}: must be a positive finite number of metres, got {value!r}")
    n = int(round(size / resolution)) + 1
    if n > SeaSurface.MAX_VERTICES_PER_SIDE:
        raise ConfigError(f"{resolution_name}: a {size} m patch at {resolution} m makes {n} x {n} vertices, more "
                          f"than {SeaSurface.MAX_VERTICES_PER_SIDE} per side; raise the resolution (m) or shrink "
                          f"the patch")
    return n


@dataclasses.dataclass
class _FrameScratch:
    """The device arrays :meth:`SeaSurface.vertices_at` rewrites every frame, float32: the wave phases (C,) of the
    direct sum, or the row arguments k_y y_j + p_i (rows x C) and their cos / sin tables of the separated sum."""

    args: wp.array
    row_cos: wp.array | None = None
    row_sin: wp.array | None = None


class SeaSurface:
    """A square patch of moving sea surface as a triangle mesh (world frame, m, z up).

    Args:
        config: the sea state.
        size: side of the patch (m), centred on ``center`` (x, y).
        resolution: rest-grid spacing (m); resolve the shortest waves that matter (a quarter of their length).
        surface_z: z of the undisturbed surface (m).
        device: where :meth:`vertices_at` evaluates (Warp device).

    ``triangles`` (F, 3) is fixed; :meth:`vertices_at` gives the displaced vertices at a time (a BVH over them is
    refitted, not rebuilt, from frame to frame); :meth:`elevation` is the instantaneous surface height at given
    horizontal positions (e.g. to tell whether a GPS antenna is above water).
    """

    #: Most rest-grid vertices per side.
    MAX_VERTICES_PER_SIDE = 4097

    #: Most (vertices per side x components) for which :meth:`vertices_at` uses the separated angle sum (two tables
    #: of that many float32 per axis, 16 MB each at the limit); above it, the direct sum (a sine and a cosine per
    #: vertex and component).
    MAX_GRID_TERMS = 4 * 1024 * 1024

    def __init__(self, config: SeaStateConfig, size: float = 200.0, resolution: float = 1.0,
                 center: tuple[float, float] = (0.0, 0.0), surface_z: float = 0.0, device: Any = None) -> None:
        n = check_patch(size, resolution)
        self.config = config
        self.components = sample_components(config)
        self.surface_z = float(surface_z)
        self.device = resolve_device(device)
        axis = np.linspace(-size / 2.0, size / 2.0, max(n, 2))
        gx, gy = np.meshgrid(axis + center[0], axis + center[1], indexing="xy")
        self.rest = np.stack([gx.ravel(), gy.ravel()], axis=1)
        m = axis.shape[0]
        i, j = np.meshgrid(np.arange(m - 1), np.arange(m - 1), indexing="xy")
        a = (j * m + i).ravel()
        b, c_, d = a + 1, a + m + 1, a + m
        # counter-clockwise seen from above: normals point up (+z) at rest
        self.triangles = np.concatenate([np.stack([a, b, c_], 1), np.stack([a, c_, d], 1)]).astype(np.int32)
        comp = self.components
        dev = self.device
        self._rest = wp.array(self.rest.astype(np.float32), dtype=wp.vec2, device=dev)
        self._k = wp.array(comp.wave_vector.astype(np.float32), dtype=wp.vec2, device=dev)
        self._amp = wp.array(comp.amplitude.astype(np.float32), dtype=wp.float32, device=dev)
        k = np.linalg.norm(comp.wave_vector, axis=1, keepdims=True)
        khat = np.divide(comp.wave_vector, k, out=np.zeros_like(comp.wave_vector), where=k > 0)
        self._horiz = wp.array((comp.horizontal[:, None] * khat).astype(np.float32), dtype=wp.vec2, device=dev)
        self._axis_x = axis + center[0]
        self._axis_y = axis + center[1]
        self._grid = m * comp.count <= self.MAX_GRID_TERMS
        if self._grid:  # the separated angle sum (kernels/sea_surface.py): cos / sin of k_x x_i, fixed per patch
            a = self._axis_x[:, None] * comp.wave_vector[None, :, 0]
            self._col_cos = wp.array(np.cos(a).astype(np.float32).ravel(), dtype=wp.float32, device=dev)
            self._col_sin = wp.array(np.sin(a).astype(np.float32).ravel(), dtype=wp.float32, device=dev)
            self._ax = wp.array(self._axis_x.astype(np.float32), dtype=wp.float32, device=dev)
            self._ay = wp.array(self._axis_y.astype(np.float32), dtype=wp.float32, device=dev)
        # per calling thread, so that threads evaluating the patch at different times do not share them
        self._frame_scratch: ScratchCache[_FrameScratch] = ScratchCache(1)

    @property
    def num_vertices(self) -> int:
        return int(self.rest.shape[0])

    def vertices_at(self, t: float, out: wp.array | None = None) -> wp.array:
        """The (V,) vec3 vertices (world, m) at time ``t`` (s), on the patch's device; written into ``out`` if
        given (e.g. the points array of a ``wp.Mesh`` before ``refit()``)."""
        if not math.isfinite(t):
            raise ConfigError(f"SeaSurface.vertices_at: time must be finite seconds, got {t}")
        dev = self.device
        if out is None:
            out = wp.empty(self.num_vertices, dtype=wp.vec3, device=dev)
        comp = self.components
        scratch = self._frame_scratch.get_or_make(None, self._make_frame_scratch)
        if not self._grid:
            scratch.args.assign(comp.phases_at(t).astype(np.float32))
            launch_1d(sea_kernels.gerstner_vertices_kernel, self.num_vertices,
                      [self._rest, self._k, self._amp, self._horiz, scratch.args, comp.count, self.surface_z, out],
                      dev)
            return out
        # row arguments k_y y_j + p_i reduced modulo 2 pi in float64 on the host, so float32 keeps their precision
        row = np.mod(self._axis_y[:, None] * comp.wave_vector[None, :, 1] + comp.phases_at(t)[None, :], 2.0 * math.pi)
        scratch.args.assign(row.astype(np.float32).ravel())
        launch_1d(sea_kernels.sea_row_terms_kernel, scratch.args.shape[0],
                  [scratch.args, scratch.row_cos, scratch.row_sin], dev)
        launch_1d(sea_kernels.gerstner_grid_vertices_kernel, self.num_vertices,
                  [self._col_cos, self._col_sin, scratch.row_cos, scratch.row_sin, self._ax, self._ay, self._amp,
                   self._horiz, comp.count, self._axis_x.shape[0], self.surface_z, out], dev)
        return out

    def _make_frame_scratch(self) -> _FrameScratch:
        """The calling thread's :class:`_FrameScratch` (allocated once, then rewritten frame after frame)."""
        n = self.components.count * (self._axis_y.shape[0] if self._grid else 1)
        arrays = [wp.empty(n, dtype=wp.float32, device=self.device) for _ in range(3 if self._grid else 1)]
        return _FrameScratch(*arrays)

    def displace(self, rest_xy: np.ndarray, t: float | np.ndarray) -> np.ndarray:
        """(N, 3) surface points (float64, host) that rest points ``rest_xy`` (N, 2) move to at time ``t`` (s; one
        time, or (N,) times, one per point)."""
        comp = self.components
        xy = np.asarray(rest_xy, dtype=np.float64).reshape(-1, 2)
        # element-wise products and numpy's pairwise sums (no BLAS), so the result is the same on every machine
        kx, ky = comp.wave_vector[:, 0], comp.wave_vector[:, 1]
        arg = xy[:, :1] * kx[None, :] + xy[:, 1:] * ky[None, :] + self._phases(t, xy.shape[0])
        k = np.hypot(kx, ky)
        safe = np.where(k > 0, k, 1.0)
        s = np.sin(arg) * comp.horizontal[None, :]
        out = np.empty((xy.shape[0], 3))
        out[:, 0] = xy[:, 0] - np.sum(s * (kx / safe)[None, :], axis=1)
        out[:, 1] = xy[:, 1] - np.sum(s * (ky / safe)[None, :], axis=1)
        out[:, 2] = self.surface_z + np.sum(np.cos(arg) * comp.amplitude[None, :], axis=1)
        return out

    def _phases(self, t: float | np.ndarray, n: int) -> np.ndarray:
        """Component phases at ``t``: (1, C) for one time, (n, C) for (n,) times; ``ConfigError`` otherwise."""
        tt = np.asarray(t, dtype=np.float64)
        if not np.all(np.isfinite(tt)) or tt.ndim > 1 or (tt.ndim == 1 and tt.shape[0] != n):
            raise ConfigError(f"SeaSurface: time must be finite seconds, one value or one per point ({n}), "
                              f"got shape {tt.shape}")
        p = self.components.phases_at(tt)
        return p[None, :] if tt.ndim == 0 else p

    def elevation(self, xy: np.ndarray, t: float | np.ndarray, iterations: int = 8) -> np.ndarray:
        """Instantaneous surface height z (m) above the horizontal positions ``xy`` (N, 2) at time ``t`` (s; one
        time or (N,) times): the rest point that moves to each position is found by fixed-point iteration (a
        contraction, since sum k h <= 1 times the steepness), then displaced."""
        return self.displace(self.rest_points(xy, t, iterations), t)[:, 2]

    def rest_points(self, xy: np.ndarray, t: float | np.ndarray, iterations: int = 8) -> np.ndarray:
        """(N, 2) rest points (m) of the undisturbed surface that move to the horizontal positions ``xy`` (N, 2) at
        time ``t`` (s; one time or (N,) times), by fixed-point iteration (a contraction, since sum k h <= 1 times
        the steepness); ``xy`` itself for linear waves (steepness 0)."""
        target = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        rest = target.copy()
        for _ in range(iterations):
            moved = self.displace(rest, t)[:, :2]
            rest = rest + (target - moved)
        return rest

    def surface_velocity(self, xy: np.ndarray, t: float | np.ndarray) -> np.ndarray:
        """(N, 3) velocity (world frame, m/s) of the water at the instantaneous surface above the horizontal
        positions ``xy`` (N, 2) at time ``t`` (s; one time or (N,) times): the linear-wave orbital velocity at the
        surface (Dean & Dalrymple 1991, eq. 4.14),

            u = sum_i A_i omega_i / tanh(k_i d) khat_i cos(theta_i),   w = sum_i A_i omega_i sin(theta_i),

        theta_i = k_i . x0 + p_i the phase of the rest point x0 that moves to ``xy`` (:meth:`rest_points`), so w is
        the rate of rise of the elevation there (1 / tanh = 1 in deep water). What a surface-tracking DVL's beams
        see move, besides the vehicle."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        comp = self.components
        kx, ky = comp.wave_vector[:, 0], comp.wave_vector[:, 1]
        rest = self.rest_points(xy, t)
        theta = rest[:, :1] * kx[None, :] + rest[:, 1:] * ky[None, :] + self._phases(t, xy.shape[0])
        k = np.hypot(kx, ky)
        safe = np.where(k > 0, k, 1.0)
        depth = self.config.depth
        deep = np.ones_like(k) if math.isinf(depth) else np.tanh(k * depth)
        orbit = comp.amplitude * comp.omega                     # A omega, m/s
        horizontal = np.cos(theta) * (orbit / deep)[None, :]
        out = np.empty((xy.shape[0], 3))
        out[:, 0] = np.sum(horizontal * (kx / safe)[None, :], axis=1)
        out[:, 1] = np.sum(horizontal * (ky / safe)[None, :], axis=1)
        out[:, 2] = np.sum(np.sin(theta) * orbit[None, :], axis=1)
        return out

    def pressure_head(self, xyz: np.ndarray, t: float | np.ndarray) -> np.ndarray:
        """Water pressure above atmospheric at points ``xyz`` (N, 3) (world, m) at time ``t`` (s; one time or
        (N,) times), as a head of water (m; multiply by rho g for Pa); 0 above the instantaneous surface.

        Linear wave theory (Dean & Dalrymple 1991, eq. 4.26): below the undisturbed surface z0 the pressure is
        hydrostatic about z0 plus each component's dynamic pressure, attenuated with depth,

            head = (z0 - z) + sum_i A_i K_i(z) cos(k_i . x + p_i),   K_i = cosh(k_i (z - z0 + d)) / cosh(k_i d)

        (K_i = exp(k_i (z - z0)) in deep water), evaluated at the point's own horizontal position (Eulerian).
        Between z0 and a crest, where linear theory says nothing, it is hydrostatic below the instantaneous
        surface, ``elevation - z``. A sensor deeper than half the longest wavelength feels almost none of the
        waves: the reason a pressure depth gauge reads the mean depth, not the depth below the wave above it.
        """
        p = np.asarray(xyz, dtype=np.float64).reshape(-1, 3)
        comp = self.components
        kx, ky = comp.wave_vector[:, 0], comp.wave_vector[:, 1]
        arg = p[:, :1] * kx[None, :] + p[:, 1:2] * ky[None, :] + self._phases(t, p.shape[0])
        k = np.hypot(kx, ky)[None, :]
        below = np.minimum(p[:, 2:3] - self.surface_z, 0.0)  # z - z0, <= 0
        depth = self.config.depth
        if math.isinf(depth):
            attenuation = np.exp(k * below)
        else:  # cosh(k (z - z0 + d)) / cosh(k d) without overflow for large k d
            attenuation = (np.exp(k * below) + np.exp(-k * (below + 2.0 * depth))) / (1.0 + np.exp(-2.0 * k * depth))
        head = -below[:, 0] + np.sum(comp.amplitude[None, :] * attenuation * np.cos(arg), axis=1)
        above = p[:, 2] > self.surface_z
        if np.any(above):
            tt = np.asarray(t, dtype=np.float64)
            t_above = tt if tt.ndim == 0 else tt[above]
            head[above] = self.elevation(p[above, :2], t_above) - p[above, 2]
        return np.maximum(head, 0.0)


def sea_state_config(value: Any, where: str = "sea_state") -> SeaStateConfig:
    """A :class:`SeaStateConfig` from a config, a mapping of its fields (optionally with ``preset``) or a preset
    name (``calm``, ``moderate``, ``rough``, ``harbour_chop``); ``ConfigError`` naming ``where`` otherwise."""
    if isinstance(value, SeaStateConfig):
        return value
    if isinstance(value, str):
        return SeaStateConfig.from_dict({"preset": value}, source=where)
    if isinstance(value, dict):
        return SeaStateConfig.from_dict(value, source=where)
    raise ConfigError(f"{where}: expected a SeaStateConfig, a mapping of its fields or a preset name "
                      f"({sorted(SeaStateConfig.PRESETS)}), got {type(value).__name__}")


def sea_state_or_flat(value: Any, where: str = "sea_state") -> SeaStateConfig:
    """:func:`sea_state_config` where :data:`FLAT_SEA` (handled by the caller) is the other choice (``load_scene``,
    a rig): a name that is no preset, or a null, gets an error that names ``'flat'`` too."""
    try:
        return sea_state_config(value, where)
    except ConfigError as exc:
        if value is None or isinstance(value, str):
            raise ConfigError(f"{exc}; or '{FLAT_SEA}' for the flat surface without waves") from None
        raise


__all__ = ["FLAT_SEA", "GRAVITY", "SeaStateConfig", "SeaSurface", "WaveComponents", "check_patch", "sample_components",
           "sea_state_config", "sea_state_or_flat",
           "spreading_normalisation", "wavenumber"]
