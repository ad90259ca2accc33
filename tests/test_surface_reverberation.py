"""Sea-surface reverberation of the acoustic device models (issue 16 item 3; Chapman & Harris 1962), against numbers
computed by hand: S_s at two wind speeds and angles, and the echo level of a single-beam looking up at the flat
surface against SL - 40 log r - 2 alpha r + S_s + 10 log A."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.sensors.acoustic.multipath import (chapman_harris_db, fluid_reflection, sea_state_wind,
                                                    surface_roughness_loss)
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig


def test_chapman_harris_against_hand_numbers():
    # beta = 158 (v f^(1/3))^-0.58, v in knots (1 m/s = 1.943844 kn), f in Hz;
    # S_s = 3.3 beta log10(psi / 30) - 42.4 log10(beta) + 2.6.
    # 10 m/s = 19.43844 kn, 10 kHz: v f^(1/3) = 19.43844 x 21.54435 = 418.789, beta = 158 x 418.789^-0.58 = 4.76321;
    #   psi = 10 deg: 3.3 x 4.76321 x log10(1/3) - 42.4 log10(4.76321) + 2.6 = -7.4996 - 28.7431 + 2.6 = -33.643 dB.
    # 5 m/s = 9.71922 kn, 100 kHz: v f^(1/3) = 9.71922 x 46.4159 = 451.126, beta = 4.56209;
    #   psi = 45 deg: 3.3 x 4.56209 x log10(1.5) - 42.4 log10(4.56209) + 2.6 = 2.6517 - 27.9492 + 2.6 = -22.698 dB.
    assert chapman_harris_db(10.0, 10.0, 10e3) == pytest.approx(-33.643, abs=0.005)
    assert chapman_harris_db(45.0, 5.0, 100e3) == pytest.approx(-22.698, abs=0.005)
    # the level grows with wind and grazing angle, and is capped at 0 dB
    assert chapman_harris_db(10.0, 15.0, 10e3) > chapman_harris_db(10.0, 10.0, 10e3)
    assert chapman_harris_db(80.0, 10.0, 10e3) > chapman_harris_db(10.0, 10.0, 10e3)
    assert chapman_harris_db(90.0, 60.0, 5e6) == 0.0


def test_reflection_coefficients_against_hand_numbers():
    # sand (1990 kg/m^3, 1750 m/s) at normal incidence: (2.26283 - 1) / (2.26283 + 1) = 0.38704; beyond its critical
    # angle asin(1500 / 1750) = 58.99 deg, 1. Mud (1420 kg/m^3, 1490 m/s, slower than water: no critical angle) at
    # grazing incidence (cos t1 = 0): -1; at 30 deg: sin t2 = (1490 / 1500) 0.5 = 0.49667, cos t2 = 0.86794,
    # Z2 / Z1 = 1420 x 1490 / (1026 x 1500) = 1.37479, R = (1.37479 x 0.86603 - 0.86794) / (... + 0.86794) = 0.15674.
    assert fluid_reflection(1990.0, 1750.0, 1.0) == pytest.approx(0.38704, abs=1e-5)
    assert fluid_reflection(1990.0, 1750.0, math.cos(math.radians(60.0))) == 1.0
    assert fluid_reflection(1420.0, 1490.0, 0.0) == pytest.approx(-1.0)
    assert fluid_reflection(1420.0, 1490.0, math.cos(math.radians(30.0))) == pytest.approx(0.15674, abs=1e-4)
    # the rough surface's coherent loss exp(-2 (k h cos t)^2): 200 kHz (k = 837.76 rad/m), h = 1 mm, normal
    # incidence: exp(-2 x 0.83776^2) = exp(-1.40368) = 0.24569
    assert surface_roughness_loss(2 * math.pi * 200e3 / 1500, 1e-3, 1.0) == pytest.approx(0.24569, abs=1e-5)


def _upward(pitch_up_deg: float, wind: float) -> tuple[SinglebeamSonarConfig, np.ndarray]:
    cfg = SinglebeamSonarConfig(model="device", opening_angle=4.0, cone_rings=8, rays_per_ring=32, min_range=0.5,
                                max_range=20.0, range_bins=1950, frequency=200e3, source_level=210.0, absorption=0.1,
                                noise_level=None, volume_scattering=None, tvg="none", surface_reverberation=True,
                                surface_wind_speed=wind)
    half = math.radians(pitch_up_deg) / 2
    return cfg, np.array([0.0, 0.0, -10.0, 0.0, -math.sin(half), 0.0, math.cos(half)])


@pytest.mark.parametrize("pitch, wind, hand", [(90.0, 8.0, 150.751), (45.0, 5.0, 140.933)])
def test_surface_return_level_of_an_upward_single_beam(pitch, wind, hand):
    # A 4 deg cone (Omega = 2 pi (1 - cos 2 deg) = 3.82755e-3 sr) at depth 10 m, 200 kHz, SL 210 dB, alpha 0.1 dB/m,
    # the flat surface z = 0 (no wave geometry), no other geometry in reach.
    # Looking straight up (psi = 90 deg), 8 m/s: r = 10 m, A = r^2 Omega = 0.382755 m^2 (-4.1708 dB), beta = 3.03791,
    #   S_s = 3.3 x 3.03791 x log10(3) - 42.4 log10(3.03791) + 2.6 = -13.0780 dB;
    #   EL = 210 - 40 - 2 - 13.0780 - 4.1708 = 150.751 dB re 1 uPa^2.
    # Pitched up 45 deg (psi = 45 deg), 5 m/s: r = 14.1421 m, A = r^2 Omega / cos 45 = 1.08259 m^2 (+0.3447 dB),
    #   beta = 3.98993, S_s = -20.5624 dB; EL = 210 - 46.0206 - 2.8284 - 20.5624 + 0.3447 = 140.933 dB.
    scene = make_scene(("far_wall", quad([500.0, 0.0, -10.0], [-1.0, 0.0, 0.0], 10.0), 0.5))
    cfg, pose = _upward(pitch, wind)
    clean = SinglebeamSonar(cfg, device="cpu").render(scene, pose).numpy()["clean_intensity"]
    assert 10 * math.log10(float(clean.astype(np.float64).sum())) == pytest.approx(hand, abs=1.0)
    # off: the flat surface returns nothing
    off = SinglebeamSonar(cfg.replace(surface_reverberation=False), device="cpu").render(scene, pose).numpy()
    assert float(off["clean_intensity"].sum()) == 0.0


def test_wave_surface_uses_the_sea_states_wind_and_replaces_the_lambert_law():
    # A moderate sea (Pierson-Moskowitz, U10 = 8 m/s) as geometry above an imaging sonar (750 kHz) at 2 m depth
    # pitched up 60 deg: surface_wind_speed null takes the scene's 8 m/s (the same image as giving 8 explicitly).
    # Off, the patch returns with its material's Lambert law (sea_surface: mu = 1): per ray mu cos(t) w / r^2
    # against Chapman-Harris' s_s w / (r^2 cos t), a ratio s_s / cos^2 t. At the boresight's t = 30 deg (psi = 60):
    # beta = 158 (15.5508 x 750000^(1/3))^-0.58 = 2.35286, S_s = 3.3 x 2.35286 x log10(2) - 42.4 log10(2.35286) + 2.6
    # = -10.8183 dB, and -20 log10(cos 30) = +1.2494 dB: -9.569 dB (the fan spans t = 20 .. 40 deg: -9.8 .. -9.2 dB
    # on a flat surface; the waves tilt the normals).
    scene = make_scene(("far_wall", quad([500.0, 0.0, -10.0], [-1.0, 0.0, 0.0], 10.0), 0.5))
    scene.add_sea_surface("moderate", size=60.0, resolution=1.0, center=(0.0, 0.0))
    assert sea_state_wind(scene) == 8.0
    base = dict(model="device", horizontal_fov=30.0, vertical_fov=20.0, n_beams=16, rays_per_beam=2,
                elevation_rays=16, min_range=0.5, max_range=10.0, range_bins=100, noise_level=None,
                volume_scattering=None, tvg="none", normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0)
    pose = np.array([0.0, 0.0, -2.0, 0.0, -math.sin(math.pi / 6), 0.0, math.cos(math.pi / 6)])

    def render(**kw):
        out = ImagingSonar(ImagingSonarConfig(**base, **kw), device="cpu").render(scene, pose).numpy()
        return out["clean_intensity"].astype(np.float64)

    from_scene = render(surface_reverberation=True)
    np.testing.assert_array_equal(from_scene, render(surface_reverberation=True, surface_wind_speed=8.0))
    hand = chapman_harris_db(60.0, 8.0, 750e3) - 20 * math.log10(math.cos(math.radians(30.0)))
    assert hand == pytest.approx(-9.569, abs=0.005)
    assert 10 * math.log10(from_scene.sum() / render().sum()) == pytest.approx(hand, abs=1.5)


def test_beyond_a_wave_patch_the_flat_surface_still_returns_and_mirrors():
    # The upward single-beam of test_surface_return_level_of_an_upward_single_beam (straight up, 8 m/s: 150.751 dB
    # by hand), now in a scene whose moving sea surface is a 20 m patch centred 200 m away: above the sensor the
    # surface is the flat plane z = 0, with the same level; inside the patch the mesh is met instead.
    scene = make_scene(("far_wall", quad([500.0, 0.0, -10.0], [-1.0, 0.0, 0.0], 10.0), 0.5))
    scene.add_sea_surface("moderate", size=20.0, resolution=1.0, center=(200.0, 0.0))
    cfg, pose = _upward(90.0, 8.0)
    clean = SinglebeamSonar(cfg, device="cpu").render(scene, pose).numpy()["clean_intensity"]
    assert 10 * math.log10(float(clean.astype(np.float64).sum())) == pytest.approx(150.751, abs=1.0)
    # and a bounce: a floor echo mirrored in the plane beyond the patch comes back at altitude + 2 x depth (the
    # same-path echo; at 2 kHz the calm sea's rms height 0.05 m leaves exp(-2 (k h)^2) = 0.70 of the mirror)
    floor = make_scene(("floor", quad([0.0, 0.0, -13.0], [0.0, 0.0, 1.0], 60.0), 0.5))
    floor.add_sea_surface("calm", size=20.0, resolution=1.0, center=(200.0, 0.0))
    down = SinglebeamSonarConfig(model="device", opening_angle=4.0, cone_rings=8, rays_per_ring=32, min_range=0.5,
                                 max_range=40.0, range_bins=3950, frequency=2e3, source_level=210.0, absorption=0.1,
                                 noise_level=None, volume_scattering=None, tvg="none", multipath_bounces=2,
                                 multipath_mixed_paths=False, jitter=False)
    looking_down = np.array([0.0, 0.0, -10.0, 0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])
    series = SinglebeamSonar(down, device="cpu").render(floor, looking_down).numpy()["clean_intensity"].reshape(-1)
    ranges = 0.5 + (np.arange(series.size) + 0.5) * (39.5 / 3950)
    second = ranges[(series > 0) & (ranges > 10.0)]
    assert second.size > 0 and second.min() == pytest.approx(3.0 + 2 * 13.0, abs=0.05)   # A + 2 (A + s)
