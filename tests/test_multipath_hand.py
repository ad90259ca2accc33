"""Multipath of the device models against hand numbers on scenes the other multipath tests do not use (audit MP):
the mixed second bottom echo of a sounder whose max range lies between 2 A + s and the chain's A + 2 (A + s), the
Kirchhoff/Eckart roughness loss of the sea surface in a rendered ghost, the fluid seabed's Rayleigh reflection
coefficient on both sides of its critical angle in a rendered ghost, and the moving surface moving the second
bottom echo by the wave height above the sounder."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from test_multipath import ALPHA, PITCH_DOWN_90, fls, onset, seafloor, sphere, window
from oceansim_py.scene import Material, Node, Scene
from oceansim_py.sensors.imaging_sonar import ImagingSonar
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig


def _sounder(max_range: float, **kw) -> SinglebeamSonarConfig:
    return SinglebeamSonarConfig(model="device", opening_angle=4.0, cone_rings=16, rays_per_ring=16, min_range=1.0,
                                 max_range=max_range, range_bins=int(round((max_range - 1.0) / 0.01)),
                                 absorption=ALPHA, noise_level=None, volume_scattering=None, tvg="none",
                                 multipath_bounces=2, jitter=False, **kw)


def test_mixed_second_bottom_echo_inside_the_range_although_its_chain_is_longer():
    # Sounder straight down at depth s = 2 m, altitude A = 3 m, the flat pressure-release surface, two bounces (the
    # scene of test_multipath_mixed.py's second bottom echo). The mixed second bottom echo lies at r = 2 A + s = 8 m,
    # but its chain floor -> surface -> floor is L_2 = A + 2 (A + s) = 13 m long. With max_range = 10 m the echo is
    # inside the window, so it must be there, at 8 m, at the level it has with max_range = 20 m (r = (L_b + D) / 2
    # >= L_b / 2: the chain must run to 2 x max_range). Before the fix the chain stopped at 10 m and the 8 m echo
    # was missing (0 in the window).
    A, s = 3.0, 2.0
    scene = seafloor(Material.from_properties("mud", (0.4, 0.4, 0.4), reflectivity=0.25), s + A)
    pose = np.array([0, 0, -s, *PITCH_DOWN_90])
    profiles = {}
    for max_range in (10.0, 20.0):
        out = SinglebeamSonar(_sounder(max_range), device="cpu").render(scene, pose).numpy()
        profiles[max_range] = out["clean_intensity"].reshape(-1).astype(np.float64)
    ranges = {m: 1.0 + (np.arange(p.size) + 0.5) * 0.01 for m, p in profiles.items()}
    near, far = profiles[10.0], profiles[20.0]
    assert window(near, ranges[10.0], 7.0, 9.0) > 0.0
    assert onset(near, ranges[10.0], 7.0, 9.0) == pytest.approx(2 * A + s, abs=0.011)
    assert window(near, ranges[10.0], 7.0, 9.0) == pytest.approx(window(far, ranges[20.0], 7.0, 9.0), rel=1e-6)
    # the same-path echo at L_2 = 13 m stays outside the 10 m window; the direct echo is unchanged
    assert window(near, ranges[10.0], 2.0, 4.0) == pytest.approx(window(far, ranges[20.0], 2.0, 4.0), rel=1e-6)


def test_multibeam_nadir_second_bottom_echo_inside_the_range_although_its_chain_is_longer():
    # The multibeam of test_multipath_mixed.py's nadir second bottom echo (depth s = 2 m, altitude A = 3 m, sand,
    # two bounces): the mixed echo at 2 A + s = 8 m with max_range 10 m (chain L_2 = 13 m), the same as with 20 m.
    # Before the fix the nadir beam held nothing past the direct echo.
    A, s = 3.0, 2.0
    scene = seafloor(Material.from_properties("sand", (0.45, 0.4, 0.3), density=1990.0, sound_speed=1750.0), s + A)
    pose = np.array([0, 0, -s, *PITCH_DOWN_90])
    nadirs = {}
    for max_range in (10.0, 20.0):
        cfg = MultibeamSonarConfig.preset("blueview_p900", max_range=max_range, n_beams=64, noise_level=None,
                                          volume_scattering=None, tvg="none", absorption_model="fixed",
                                          absorption=ALPHA, multipath_bounces=2)
        out = MultibeamSonar(cfg, device="cpu").render(scene, pose).numpy()
        nadirs[max_range] = (out["clean_intensity"][0][:, 32].astype(np.float64), out["ranges"])
    (near, r_near), (far, r_far) = nadirs[10.0], nadirs[20.0]
    assert window(near, r_near, 7.5, 9.0) > 0.0
    assert window(near, r_near, 7.5, 9.0) == pytest.approx(window(far, r_far, 7.5, 9.0), rel=1e-5)
    step = float(r_near[1] - r_near[0])
    assert onset(near, r_near, 6.5, 9.9) == pytest.approx(2 * A + s, abs=1500.0 / (2.0 * cfg.bandwidth) + 2 * step)


def test_rough_sea_surface_ghost_carries_the_eckart_loss_twice_each_way():
    # The surface ghost of test_multipath.py (sensor and sphere (a = 0.2 m) at depth 1.5 m, 8 m apart; ghost path
    # to the image centre sqrt(8^2 + 3^2) = 8.5440 m, incidence at the surface cos t = 3 / 8.5440 = 0.35112) at
    # 5 kHz (k = 2 pi 5000 / 1500 = 20.944 rad/m), with the flat plane under the calm sea (a wave patch 300 m away:
    # the plane carries its roughness): Pierson-Moskowitz U10 = 3 m/s, omega_p = 0.877 g / (1.026 x 3) = 2.7942
    # rad/s, Hs = 4 sqrt(8.1e-3 / 5) g / omega_p^2 = 0.2022 m, h = Hs / 4 = 0.05055 m. R = -exp(-2 (k h cos t)^2),
    # k h cos t = 0.37174, met twice (out and back): ghost(rough) / ghost(flat) = exp(-8 x 0.37174^2) = 0.3313
    # (with the docs' earlier, wrong exp(-2 (2 k h cos t)^2) it would be exp(-32 x 0.1382) = 0.012). The direct
    # echo does not touch the surface: unchanged.
    s, d, R, a = 1.5, 1.5, 8.0, 0.2
    cfg = fls(1, horizontal_fov=6.0, vertical_fov=50.0, n_beams=6, rays_per_beam=20, elevation_rays=1000,
              min_range=5.0, max_range=12.0, range_bins=700, multipath_mixed_paths=False, frequency=5e3)
    pose = np.array([0.0, 0.0, -s, 0.0, 0.0, 0.0, 1.0])
    flat = make_scene(("ball", sphere([R, 0.0, -d], a), 0.5))
    rough = make_scene(("ball", sphere([R, 0.0, -d], a), 0.5))
    rough.add_sea_surface("calm", size=20.0, resolution=1.0, center=(300.0, 0.0))
    h = rough.sea_surface.components.significant_wave_height / 4
    assert h == pytest.approx(0.05055, rel=2e-3)
    sonar = ImagingSonar(cfg, device="cpu")
    ranges = 5.0 + (np.arange(700) + 0.5) * 0.01
    p_flat, p_rough = (sonar.render(sc, pose).numpy()["clean_intensity"][0].sum(1).astype(np.float64)
                       for sc in (flat, rough))
    k = 2 * math.pi * 5e3 / 1500.0
    cos_t = (d + s) / math.hypot(R, d + s)
    hand = math.exp(-8 * (k * h * cos_t) ** 2)
    assert hand == pytest.approx(0.3313, abs=2e-3)
    assert window(p_rough, ranges, 7.0, 8.2) == window(p_flat, ranges, 7.0, 8.2)
    assert window(p_rough, ranges, 8.2, 9.0) / window(p_flat, ranges, 8.2, 9.0) == pytest.approx(hand, rel=0.03)


@pytest.mark.parametrize("ahead, hand_db", [(8.0, -1.2517), (3.0, -19.094)])
def test_sand_seabed_ghost_beyond_and_inside_the_critical_angle(ahead, hand_db):
    # A sand floor (rho 1990 kg/m^3, c 1750 m/s; Lambert mu 0 so that only its mirror is seen) 1.5 m below a
    # horizontal imaging sonar, a sphere (a = 0.2 m, mu 0.5) 1.5 m above the floor, `ahead` m away; the surface far
    # above. Image sphere: centre distance D_g = sqrt(ahead^2 + 3^2), grazing angle at the floor asin(3 / D_g).
    # Critical grazing angle acos(1500 / 1750) = 31.00 deg.
    # ahead 8: D_g = 8.5440, grazing 20.56 deg < 31.00: |R| = 1; ghost / direct = (8 / 8.5440)^4
    #   10^(-0.2 x 0.5440 / 10) = -1.1428 - 0.1088 = -1.2517 dB.
    # ahead 3: D_g = 4.2426, grazing 45 deg: Z2 / Z1 = 1990 x 1750 / (1026 x 1500) = 2.26283, cos t1 = 0.70711,
    #   sin t2 = (1750 / 1500) 0.70711 = 0.82496, cos t2 = 0.56518, R = (1.60006 - 0.56518) / (1.60006 + 0.56518)
    #   = 0.47794; ghost / direct = 40 log10 0.47794 + 40 log10(3 / 4.2426) - 0.2 x 1.2426
    #   = -12.8267 - 6.0206 - 0.2485 = -19.094 dB.
    sand = Material.from_properties("sand", (0.45, 0.4, 0.3), density=1990.0, sound_speed=1750.0, reflectivity=0.0)
    ball = Material.from_properties("ball", (0.5, 0.5, 0.5), reflectivity=0.5)
    root = Node("/World")
    scene = Scene([root, Node("/World/floor", mesh=quad([0.0, 0.0, -10.0], [0.0, 0.0, 1.0], 80.0), material=sand,
                              label="floor", parent=root),
                   Node("/World/ball", mesh=sphere([ahead, 0.0, -8.5], 0.2), material=ball, label="ball",
                        parent=root)], device="cpu")
    scene.metadata["surface_z"] = 100.0
    cfg = fls(1, horizontal_fov=6.0, vertical_fov=100.0, n_beams=6, rays_per_beam=20, elevation_rays=2000,
              min_range=1.0, max_range=12.0, range_bins=1100, multipath_mixed_paths=False)
    profile = ImagingSonar(cfg, device="cpu").render(scene, np.array([0.0, 0.0, -8.5, 0, 0, 0, 1.0])).numpy()[
        "clean_intensity"][0].sum(1).astype(np.float64)
    ranges = 1.0 + (np.arange(1100) + 0.5) * 0.01
    d_g = math.hypot(ahead, 3.0)
    assert onset(profile, ranges, d_g - 0.3, d_g + 0.2) == pytest.approx(d_g - 0.2, abs=0.011)
    ratio = window(profile, ranges, d_g - 0.25, d_g + 0.2) / window(profile, ranges, ahead - 0.25, ahead + 0.2)
    assert 10 * math.log10(ratio) == pytest.approx(hand_db, abs=0.3)


def test_moving_surface_moves_the_second_bottom_echo_by_the_wave_height_above():
    # A down-looking sounder at depth s = 10 m, altitude A = 3 m, under a long-crested Bretschneider swell
    # (Hs 1 m, Tp 10 s: wavelength g Tp^2 / (2 pi) = 156 m, slopes ~0.01, linear waves). Its same-path second
    # bottom echo (floor -> surface -> floor, back the same way) lies at L = A + 2 (A + s + eta(t)), eta the surface
    # height above the sounder: with a slope sigma the mirror tilts the ray by 2 sigma, adding
    # (A + s) (1 / cos 2 sigma - 1) ~ 2 sigma^2 13 m < 3 mm. At t = 0, 2.5, 5, 7.5 s eta = +0.196, +0.363, -0.208,
    # -0.264 m (the scene's surface_height): L = 29.392, 29.726, 28.585, 28.473 m.
    floor = make_scene(("floor", quad([0.0, 0.0, -13.0], [0.0, 0.0, 1.0], 60.0), 0.5))
    floor.add_sea_surface(dict(spectrum="bretschneider", significant_wave_height=1.0, peak_period=10.0,
                               spreading="none", steepness=0.0, n_frequencies=16), size=80.0, resolution=0.5,
                          center=(0.0, 0.0))
    cfg = SinglebeamSonarConfig(model="device", opening_angle=4.0, cone_rings=8, rays_per_ring=32, min_range=0.5,
                                max_range=40.0, range_bins=3950, frequency=2e3, source_level=210.0, absorption=0.1,
                                noise_level=None, volume_scattering=None, tvg="none", multipath_bounces=2,
                                multipath_mixed_paths=False, jitter=False)
    sonar = SinglebeamSonar(cfg, device="cpu")
    pose = np.array([0.0, 0.0, -10.0, *PITCH_DOWN_90])
    ranges = 0.5 + (np.arange(3950) + 0.5) * 0.01
    seen = []
    for t in (0.0, 2.5, 5.0, 7.5):
        floor.set_time(t)
        eta = float(floor.surface_height([0.0, 0.0])[0])
        series = sonar.render(floor, pose).numpy()["clean_intensity"].reshape(-1)
        second = ranges[(series > 0) & (ranges > 20.0)]
        assert second.min() == pytest.approx(3.0 + 2 * (13.0 + eta), abs=0.011)
        seen.append(eta)
    assert max(seen) - min(seen) > 0.5  # the echo moved by more than 1 m over the four times


def test_a_changed_surface_height_moves_the_ghost_of_the_same_sonar():
    # Sensor and sphere (a = 0.2 m) at z = -1.5 m, 8 m apart, the flat surface at surface_z. At z = 0 the ghost's
    # image centre is at height +1.5: distance sqrt(8^2 + 3^2) = 8.5440 m, onset 8.3440 m. With surface_z = 0.5
    # (the tide up 0.5 m) the image is at 2 x 0.5 + 1.5 = 2.5 m: sqrt(8^2 + 4^2) = 8.9443 m, onset 8.7443 m, for the
    # same sonar object as for a new one. Before the fix the sonar kept the plane height of its first render
    # (interfaces cached per geometry only) and drew the ghost at 8.344 m again.
    cfg = fls(1, horizontal_fov=6.0, vertical_fov=80.0, n_beams=6, rays_per_beam=20, elevation_rays=1000,
              min_range=5.0, max_range=12.0, range_bins=700, multipath_mixed_paths=False)
    scene = make_scene(("ball", sphere([8.0, 0.0, -1.5], 0.2), 0.5))
    pose = np.array([0.0, 0.0, -1.5, 0.0, 0.0, 0.0, 1.0])
    ranges = 5.0 + (np.arange(700) + 0.5) * 0.01
    sonar = ImagingSonar(cfg, device="cpu")

    def ghost_onset() -> float:
        profile = sonar.render(scene, pose).numpy()["clean_intensity"][0].sum(1).astype(np.float64)
        return onset(profile, ranges, 8.2, 11.9)

    assert ghost_onset() == pytest.approx(math.hypot(8.0, 3.0) - 0.2, abs=0.011)
    scene.metadata["surface_z"] = 0.5
    assert ghost_onset() == pytest.approx(math.hypot(8.0, 4.0) - 0.2, abs=0.011)


def test_imaging_sonar_looking_up_hears_chapman_harris_against_a_lambert_plane():
    # An imaging sonar (750 kHz) at depth 10 m pitched up 90 deg, a 4 x 4 deg fan (incidence <= 2.8 deg at the
    # surface, cos^2 >= 0.998). Surface reverberation of the flat surface at U10 = 8 m/s (15.5508 kn) against a
    # Lambert plane (mu = 1) in the same place without reverberation: per ray s_s w / (r^2 cos t) over
    # mu cos t w / r^2, so the ratio is 10^(S_s / 10) / cos^2 t. beta = 158 (15.5508 x 750000^(1/3))^-0.58
    # = 158 x 1412.89^-0.58 = 2.35286; S_s(90 deg) = 3.3 x 2.35286 x log10(3) - 42.4 log10(2.35286) + 2.6
    # = 3.7046 - 15.7559 + 2.6 = -9.451 dB.
    cfg = dict(horizontal_fov=4.0, vertical_fov=4.0, n_beams=8, rays_per_beam=4, elevation_rays=32, min_range=5.0,
               max_range=15.0, range_bins=1000)
    pose = np.array([0.0, 0.0, -10.0, 0.0, -math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])
    open_sea = make_scene(("far_wall", quad([500.0, 0.0, -10.0], [-1.0, 0.0, 0.0], 10.0), 0.5))
    lambert = make_scene(("plane", quad([0.0, 0.0, 0.0], [0.0, 0.0, -1.0], 40.0), 1.0))
    lambert.metadata["surface_z"] = 100.0
    reverb = ImagingSonar(fls(0, surface_reverberation=True, surface_wind_speed=8.0, **cfg), device="cpu")
    assert reverb.config.frequency == 750e3
    a = reverb.render(open_sea, pose).numpy()["clean_intensity"].astype(np.float64).sum()
    b = ImagingSonar(fls(0, **cfg), device="cpu").render(lambert, pose).numpy()["clean_intensity"].astype(
        np.float64).sum()
    assert 10 * math.log10(a / b) == pytest.approx(-9.451, abs=0.1)
