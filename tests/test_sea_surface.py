"""Sea state: spectra, spreading, dispersion and the Gerstner surface against numbers computed by hand."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
import warp as wp

from conftest import run_in_threads
from oceansim_py.errors import ConfigError
from oceansim_py.scene.sea_surface import (GRAVITY, SeaStateConfig, SeaSurface, sample_components,
                                           spreading_normalisation, wavenumber)


def test_pierson_moskowitz_peak_and_significant_height():
    c = SeaStateConfig(spectrum="pierson_moskowitz", wind_speed=10.0)
    u195 = 1.026 * 10.0
    assert c.peak_frequency == pytest.approx(0.877 * GRAVITY / u195, rel=1e-12)
    # m0 = integral of alpha g^2 w^-5 exp(-5/4 (wp/w)^4) dw = alpha g^2 / (5 wp^4): Hs = 4 sqrt(alpha / 5) g / wp^2
    exact = 4.0 * math.sqrt(8.1e-3 / 5.0) * GRAVITY / c.peak_frequency**2
    comp = sample_components(c)
    assert comp.significant_wave_height == pytest.approx(exact, rel=1e-3)
    assert comp.significant_wave_height == pytest.approx(0.21 * u195**2 / GRAVITY, rel=0.01)  # the textbook rule
    # the density peaks at omega_p: dS/dw = 0 there
    w = c.peak_frequency * np.array([0.99, 1.0, 1.01])
    s = c.spectral_density(w)
    assert s[1] > s[0] and s[1] > s[2]


def test_bretschneider_holds_the_given_height():
    c = SeaStateConfig(spectrum="bretschneider", significant_wave_height=2.5, peak_period=8.0, n_frequencies=64)
    assert c.peak_frequency == pytest.approx(2 * math.pi / 8.0)
    assert sample_components(c).significant_wave_height == pytest.approx(2.5, rel=1e-3)


def test_jonswap_peak_enhancement_and_fetch_law():
    c = SeaStateConfig(spectrum="jonswap", wind_speed=10.0, fetch=20_000.0, gamma=3.3)
    assert c.peak_frequency == pytest.approx(22.0 * (GRAVITY**2 / (10.0 * 20_000.0)) ** (1 / 3), rel=1e-12)
    alpha = 0.076 * (10.0**2 / (20_000.0 * GRAVITY)) ** 0.22
    wp_ = c.peak_frequency
    pm_shape = alpha * GRAVITY**2 * wp_**-5 * math.exp(-1.25)
    assert float(c.spectral_density(np.array([wp_]))[0]) == pytest.approx(3.3 * pm_shape, rel=1e-12)
    # far from the peak the enhancement vanishes
    w = 3.0 * wp_
    assert float(c.spectral_density(np.array([w]))[0]) == pytest.approx(
        alpha * GRAVITY**2 * w**-5 * math.exp(-1.25 * (wp_ / w) ** 4), rel=1e-6)


@pytest.mark.parametrize("s", [0.5, 2.0, 17.0, 80.0])
def test_spreading_function_integrates_to_one(s):
    theta = np.linspace(-math.pi, math.pi, 200_001)
    d = spreading_normalisation(np.array(s)) * np.cos(theta / 2) ** (2 * s)
    assert np.trapezoid(d, theta) == pytest.approx(1.0, abs=1e-6)


def test_mitsuyasu_s_max_from_the_wind_and_its_frequency_law():
    c = SeaStateConfig(wind_speed=10.0)
    s_max = 11.5 * (c.peak_frequency * 10.0 / GRAVITY) ** -2.5
    assert 15.0 < s_max < 19.0                                    # ~17 for a fully developed sea (VRX uses 17.01)
    s = c.spreading_exponent(c.peak_frequency * np.array([0.5, 1.0, 2.0]))
    np.testing.assert_allclose(s, s_max * np.array([0.5**5, 1.0, 2.0**-2.5]), rtol=1e-12)


def test_directions_spread_about_the_mean_and_energy_is_kept():
    c = SeaStateConfig(wind_speed=10.0, direction=30.0, spreading="cos2s", spreading_s=4.0, n_directions=36)
    comp = sample_components(c)
    theta = np.arctan2(comp.wave_vector[:, 1], comp.wave_vector[:, 0])
    energy = comp.amplitude**2
    mean = math.degrees(math.atan2(np.sum(energy * np.sin(theta)), np.sum(energy * np.cos(theta))))
    assert mean == pytest.approx(30.0, abs=1e-6)
    long_crested = sample_components(c.replace(spreading="none"))
    assert long_crested.count == c.n_frequencies
    assert long_crested.variance == pytest.approx(comp.variance, rel=1e-9)


def test_dispersion_relation():
    w = np.array([0.3, 1.0, 3.0])
    np.testing.assert_allclose(wavenumber(w, math.inf), w**2 / GRAVITY, rtol=1e-15)
    for depth in (2.0, 10.0, 100.0):
        k = wavenumber(w, depth)
        np.testing.assert_allclose(GRAVITY * k * np.tanh(k * depth), w**2, rtol=1e-12)
    k_shallow = wavenumber(np.array([0.05]), 1.0)[0]             # long wave in shallow water: c = sqrt(g d)
    assert 0.05 / k_shallow == pytest.approx(math.sqrt(GRAVITY * 1.0), rel=1e-3)


def test_surface_elevation_has_the_spectrum_variance():
    c = SeaStateConfig(wind_speed=8.0, n_frequencies=32, n_directions=16, steepness=0.0, seed=3)
    sea = SeaSurface(c, size=600.0, resolution=3.0, device="cpu")
    z = np.concatenate([sea.vertices_at(t).numpy()[:, 2] for t in (0.0, 37.0, 91.0)])
    assert np.mean(z) == pytest.approx(0.0, abs=0.05 * math.sqrt(sea.components.variance))
    assert np.var(z) == pytest.approx(sea.components.variance, rel=0.1)


def test_kernel_matches_the_host_formula_and_linear_waves_do_not_move_sideways():
    c = SeaStateConfig(wind_speed=12.0, steepness=0.8, seed=5)
    sea = SeaSurface(c, size=100.0, resolution=2.0, surface_z=1.5, device="cpu")
    got = sea.vertices_at(123.4).numpy()
    np.testing.assert_allclose(got, sea.displace(sea.rest, 123.4), atol=2e-4)
    flat = SeaSurface(c.replace(steepness=0.0), size=100.0, resolution=2.0, device="cpu")
    np.testing.assert_allclose(flat.vertices_at(5.0).numpy()[:, :2], flat.rest, atol=1e-4)


def test_single_component_by_hand():
    # one long-crested band: z = A cos(k x + phi - w t), x = x0 - q A sin(...) with q A k = steepness
    c = SeaStateConfig(spectrum="bretschneider", significant_wave_height=1.0, peak_period=5.0, n_frequencies=1,
                       spreading="none", steepness=0.5)
    comp = sample_components(c)
    a, k, w, phi = comp.amplitude[0], comp.wave_vector[0, 0], comp.omega[0], comp.phase[0]
    assert a == pytest.approx(math.sqrt(2) * 1.0 / 4.0, rel=2e-3)         # Hs = 4 sqrt(A^2 / 2)
    assert k == pytest.approx(w**2 / GRAVITY, rel=1e-12)
    assert comp.horizontal[0] == pytest.approx(0.5 * a, rel=1e-12)       # q times the circular orbit (kA << 1)
    sea = SeaSurface(c, size=20.0, resolution=1.0, device="cpu")
    x0 = np.array([[3.0, 0.0]])
    t = 2.0
    p = sea.displace(x0, t)[0]
    arg = k * 3.0 + phi - w * t
    assert p[2] == pytest.approx(a * math.cos(arg), abs=1e-12)
    assert p[0] == pytest.approx(3.0 - comp.horizontal[0] * math.sin(arg), abs=1e-12)
    period = 2 * math.pi / w                                                 # periodic in time
    np.testing.assert_allclose(sea.displace(x0, t + period), sea.displace(x0, t), atol=1e-9)


def test_steepest_field_has_no_loops():
    c = SeaStateConfig(wind_speed=15.0, steepness=1.0, n_frequencies=24, n_directions=12, seed=9)
    comp = sample_components(c)
    k = np.linalg.norm(comp.wave_vector, axis=1)
    assert np.sum(k * comp.horizontal) == pytest.approx(1.0, rel=1e-9)
    sea = SeaSurface(c, size=80.0, resolution=0.25, device="cpu")
    v = sea.vertices_at(10.0).numpy()
    n = int(round(math.sqrt(sea.num_vertices)))
    x, y = v[:, 0].reshape(n, n), v[:, 1].reshape(n, n)
    # Jacobian of rest -> surface by finite differences stays positive: the mesh never folds over
    dxdx, dydy = np.diff(x, axis=1)[:-1, :], np.diff(y, axis=0)[:, :-1]
    dxdy, dydx = np.diff(x, axis=0)[:, :-1], np.diff(y, axis=1)[:-1, :]
    assert np.min(dxdx * dydy - dxdy * dydx) > 0


def test_elevation_at_positions_inverts_the_horizontal_motion():
    c = SeaStateConfig(wind_speed=12.0, steepness=0.9, seed=2)
    sea = SeaSurface(c, size=50.0, resolution=1.0, device="cpu")
    rest = np.array([[1.3, -2.2], [10.0, 4.0], [-7.5, 0.5]])
    points = sea.displace(rest, 4.0)
    np.testing.assert_allclose(sea.elevation(points[:, :2], 4.0), points[:, 2], atol=1e-6)


def test_same_seed_same_sea_other_seed_other_sea():
    a = sample_components(SeaStateConfig(seed=4))
    b = sample_components(SeaStateConfig(seed=4))
    c = sample_components(SeaStateConfig(seed=5))
    np.testing.assert_array_equal(a.phase, b.phase)
    assert not np.array_equal(a.phase, c.phase)
    np.testing.assert_array_equal(a.amplitude, c.amplitude)


@pytest.mark.parametrize("change, field", [
    ({"wind_speed": 0.0}, "wind_speed"), ({"wind_speed": 100.0}, "wind_speed"), ({"fetch": -1.0}, "fetch"),
    ({"steepness": 1.5}, "steepness"), ({"spectrum": "phillips"}, "spectrum"), ({"spreading": "x"}, "spreading"),
    ({"n_frequencies": 1000, "n_directions": 100}, "n_frequencies"), ({"depth": 0.0}, "depth"),
    ({"gamma": 0.5}, "gamma"), ({"spreading": "cos2s", "spreading_s": 0.0}, "spreading_s"),
])
def test_bad_sea_states_name_the_field(change, field):
    with pytest.raises(ConfigError, match=f"SeaStateConfig.{field}"):
        SeaStateConfig(**change)


def test_patch_too_fine_is_refused():
    with pytest.raises(ConfigError, match="per side"):
        SeaSurface(SeaStateConfig(), size=1000.0, resolution=0.1, device="cpu")


def test_separated_grid_sum_equals_the_direct_sum(monkeypatch):
    # vertices_at uses cos(a + b) = cos a cos b - sin a sin b over the rest grid's rows and columns when the
    # tables are small enough, else one sine and cosine per vertex and component: both give the host formula
    c = SeaStateConfig(wind_speed=10.0, steepness=0.7, n_frequencies=16, n_directions=8, seed=8)
    grid = SeaSurface(c, size=60.0, resolution=1.5, center=(250.0, -40.0), surface_z=-0.5, device="cpu")
    monkeypatch.setattr(SeaSurface, "MAX_GRID_TERMS", 0)
    direct = SeaSurface(c, size=60.0, resolution=1.5, center=(250.0, -40.0), surface_z=-0.5, device="cpu")
    assert grid._grid and not direct._grid
    for t in (0.0, 17.3, 1e5 + 0.25):
        exact = grid.displace(grid.rest, t)
        np.testing.assert_allclose(grid.vertices_at(t).numpy(), exact, atol=2e-4)
        np.testing.assert_allclose(direct.vertices_at(t).numpy(), exact, atol=2e-4)


@pytest.mark.parametrize("grid", [True, False], ids=["separated", "direct"])
def test_vertices_at_allocates_nothing_after_the_first_frame(monkeypatch, grid):
    c = SeaStateConfig(wind_speed=9.0, steepness=0.6, n_frequencies=8, n_directions=4, seed=2)
    if not grid:
        monkeypatch.setattr(SeaSurface, "MAX_GRID_TERMS", 0)
    sea = SeaSurface(c, size=40.0, resolution=2.0, device="cpu")
    fresh = SeaSurface(c, size=40.0, resolution=2.0, device="cpu")
    times = (3.5, 11.0)
    expected = [fresh.vertices_at(t).numpy() for t in times]
    out = wp.empty(sea.num_vertices, dtype=wp.vec3, device="cpu")
    sea.vertices_at(0.0, out=out)
    made = []
    for name in ("array", "empty", "zeros"):
        real = getattr(wp, name)
        monkeypatch.setattr(wp, name, lambda *a, _real=real, _name=name, **k: made.append(_name) or _real(*a, **k))
    for t, want in zip(times, expected):
        sea.vertices_at(t, out=out)
        np.testing.assert_array_equal(out.numpy(), want)  # rewritten scratch gives a fresh patch's bytes
    assert made == []  # the phases / row tables are the thread's own, rewritten in place


def test_threads_evaluating_one_patch_use_their_own_scratch():
    c = SeaStateConfig(wind_speed=9.0, steepness=0.6, n_frequencies=8, n_directions=4, seed=2)
    sea = SeaSurface(c, size=40.0, resolution=2.0, device="cpu")
    times = [1.0, 2.0, 3.0, 4.0]
    expected = [sea.vertices_at(t).numpy() for t in times]
    scratch = {}
    start = threading.Barrier(len(times))

    def run(k):
        start.wait(timeout=30)
        for _ in range(20):
            np.testing.assert_array_equal(sea.vertices_at(times[k]).numpy(), expected[k])
        scratch[k] = sea._frame_scratch.get(None)

    run_in_threads(run, len(times))
    assert len({id(s.args) for s in scratch.values()}) == len(times)


def test_jonswap_significant_height_is_four_root_m0_of_the_documented_spectrum():
    # U10 = 10 m/s, F = 2 km: omega_p = 22 (g^2 / (U F))^(1/3) = 3.713 rad/s (Tp = 1.692 s,
    # f_p = 3.5 (g^2 / (U F))^(1/3) Hz), alpha = 0.076 (U^2 / (F g))^0.22 = 0.0238; m0 by the trapezoid rule over
    # 0.05..30 omega_p on 400 000 points: Hs = 4 sqrt(m0) = 0.2423 m (the fetch law
    # g Hs / U^2 = 1.6e-3 (g F / U^2)^(1/2) gives 0.2285 m: JONSWAP's two fits are 6 % apart here).
    c = SeaStateConfig(spectrum="jonswap", wind_speed=10.0, fetch=2000.0)
    assert 2 * math.pi / c.peak_frequency == pytest.approx(1.692, abs=1e-3)
    w = np.linspace(0.05, 30.0, 400_000) * c.peak_frequency
    hs = 4.0 * math.sqrt(np.trapezoid(c.spectral_density(w), w))
    assert hs == pytest.approx(0.2423, abs=1e-4)
    assert sample_components(c).significant_wave_height == pytest.approx(hs, rel=1e-3)


def test_eulerian_mean_level_of_gerstner_waves_by_hand():
    # A rest point x0 of one component moves to x = x0 - h sin(k x0 + p), z = A cos(k x0 + p); averaged over x (a
    # gauge at a fixed place, or a ray cast straight down) the level is the mean of A cos(theta) (1 - k h cos(theta))
    # = -k h A / 2. Summed over components: -sum k h A / 2 (-0.026 m for a U10 = 8 m/s sea of 24 x 8 components at
    # steepness 1), 0 for linear waves; the rms height stays sqrt(m0) = Hs / 4 = 0.36 m. Sampled at 5000 places,
    # twice, over 600 m (~10 peak wavelengths): within 0.005 m and 10 %.
    xy = np.random.default_rng(1).uniform(-300.0, 300.0, (5000, 2))
    for q in (0.0, 1.0):
        sea = SeaSurface(SeaStateConfig(wind_speed=8.0, steepness=q, seed=3, n_frequencies=24, n_directions=8),
                         size=20.0, resolution=10.0, surface_z=-2.0, device="cpu")
        comp = sea.components
        drop = float(np.sum(np.hypot(*comp.wave_vector.T) * comp.horizontal * comp.amplitude)) / 2.0
        z = np.concatenate([sea.elevation(xy, t) for t in (0.0, 61.0)]) + 2.0
        assert np.mean(z) == pytest.approx(-drop, abs=0.005)
        assert np.std(z) == pytest.approx(math.sqrt(comp.variance), rel=0.1)
    assert drop == pytest.approx(0.026, abs=0.002)
