"""Multipath, the sea surface and surface reverberation of the sensors and scenes the other multipath tests do not
use (audit MP2), against hand numbers: the side-scan's (device and peer) and the MSIS's surface ghost and mixed
ghost, the MSIS's ghost in a mud seabed (no critical angle), the profiling sonar's second bottom echoes, the
multibeam's Chapman-Harris surface return beam by beam, a Bretschneider sea's wind, the imaging sonar's ghost
following a moving surface at the bounce point away from the sensor, an MSIS sweep under a moving surface, the
USBL/LBL surface bounce under a swell, and the first return of the side-scan and single-beam, which the silent flat
surface must not become when multipath is on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from test_multipath import ALPHA, PITCH_DOWN_90, fls, onset, seafloor, sphere, window
from oceansim_py.scene import Material
from oceansim_py.sensors.acoustic.multipath import chapman_harris_db, fluid_reflection, sea_state_wind
from oceansim_py.sensors.imaging_sonar import ImagingSonar
from oceansim_py.sensors.msis import Msis, MsisConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

QUIET = dict(noise_level=None, volume_scattering=None)


@pytest.mark.parametrize("model", ["device", "peer"])
def test_the_silent_flat_surface_is_not_the_first_return(model):
    # A side-scan at depth 1 m over a floor 5 m below (z = -6), its fan from 30 deg above the horizontal
    # (depression 20 - 100 / 2) to 70 deg below: the first return is the floor at 5 / sin 70 deg = 5.3209 m. The flat
    # surface z = 0 lies at 1 / sin 30 deg = 2.0 m along the fan's top edge, but without surface reverberation it
    # gives no echo of its own (it only mirrors): with multipath_bounces 1 or 2 the altitude must stay 5.3209 m (the ground-range image is made with it). Before the fix the bounce loop's plane hit became the first return
    # (2.00 m). A single-beam pitched up 60 deg sees only the surface: no first return (NaN) with any bounces.
    floor = make_scene(("floor", quad([0.0, 0.0, -6.0], [0.0, 0.0, 1.0], 200.0), 0.5))
    pose = np.array([0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0])
    up60 = np.array([0.0, 0.0, -1.0, 0.0, -math.sin(math.pi / 6), 0.0, math.cos(math.pi / 6)])
    extra = QUIET if model == "device" else {}
    for bounces in (0, 1, 2):
        cfg = SidescanSonarConfig(model=model, depression=20.0, vertical_beamwidth=100.0, max_range=30.0,
                                  multipath_bounces=bounces, **extra)
        out = SidescanSonar(cfg, device="cpu").render(floor, pose).numpy()
        assert float(out["altitude"][0]) == pytest.approx(5.0 / math.sin(math.radians(70.0)), abs=0.01)
        beam = SinglebeamSonar(SinglebeamSonarConfig(model=model, max_range=30.0, multipath_bounces=bounces, **extra),
                               device="cpu").render(floor, up60).numpy()
        assert math.isnan(float(beam["first_return_range"][0]))
    if model == "device":
        # with surface reverberation the surface does echo: it is then the first return, 2.0 m (the fan's top ray)
        cfg = SidescanSonarConfig(model=model, depression=20.0, vertical_beamwidth=100.0, max_range=30.0,
                                  multipath_bounces=1, surface_reverberation=True, surface_wind_speed=5.0, **extra)
        out = SidescanSonar(cfg, device="cpu").render(floor, pose).numpy()
        assert float(out["altitude"][0]) == pytest.approx(1.0 / math.sin(math.radians(30.0)), abs=0.01)


# Sensor S at depth s = 2 m, a sphere (a = 0.2 m, mu 0.5) at depth d = 2 m, R = 8 m away along the beam, the flat
# pressure-release surface z = 0, one bounce. Image of the sphere in the surface: centre distance
# r_m = sqrt(8^2 + 4^2) = 8.94427 m, leading edge 8.74427 m (direct 7.8 m). Same-path ghost / direct
# = 40 log10(8 / 8.94427) - 0.2 x 0.94427 = -1.93820 - 0.18885 = -2.12705 dB. Mixed pair (out via the surface, back
# straight, and the reverse; one channel, coherent: 4x), the sphere lit from S' = (0, 0, +2) and seen from S,
# gamma = atan(4 / 8) = 26.565 deg apart; bistatic Lambert sphere F(g) = (2/3) (sin g + (pi - g) cos g):
# F(gamma) / F(0) = (0.447214 + 2.678 x 0.894427) / pi = 0.904777; mixed / direct = 4 x 0.904777 (r_d / r_m)^2
# 10^(-alpha (r_m - r_d) / 10) = 5.5861 - 0.9691 - 0.0944 = +4.5226 dB, leading edge (r_d + r_m) / 2 - a cos(g / 2)
# = 8.47214 - 0.19465 = 8.27749 m. (The imaging sonar gives +4.49 dB on this scene.)
S2, D2, R8, A02 = 2.0, 2.0, 8.0, 0.2
GHOST_DB, MIXED_DB = -2.12705, 4.5226
RANGES_5_12 = 5.0 + (np.arange(700) + 0.5) * 0.01


def _lambert_sphere(gamma: float) -> float:
    return 2.0 / 3.0 * (math.sin(gamma) + (math.pi - gamma) * math.cos(gamma))


def test_hand_numbers_of_the_sphere_below_the_surface():
    r_m = math.hypot(R8, S2 + D2)
    gamma = math.atan2(S2 + D2, R8)
    assert 40 * math.log10(R8 / r_m) - 2 * ALPHA * (r_m - R8) == pytest.approx(GHOST_DB, abs=1e-4)
    mixed = 4 * _lambert_sphere(gamma) / _lambert_sphere(0.0) * (R8 / r_m) ** 2 * 10 ** (-ALPHA * (r_m - R8) / 10)
    assert 10 * math.log10(mixed) == pytest.approx(MIXED_DB, abs=1e-3)


def _check_ghosts(same: np.ndarray, both: np.ndarray) -> None:
    """Onsets and levels of the direct echo, the same-path ghost and the mixed pair (``both`` - ``same``)."""
    r_m = math.hypot(R8, S2 + D2)
    gamma = math.atan2(S2 + D2, R8)
    direct = window(same, RANGES_5_12, 7.0, 8.2)
    assert onset(same, RANGES_5_12, 7.0, 8.2) == pytest.approx(R8 - A02, abs=0.011)
    assert onset(same, RANGES_5_12, 8.3, 9.5) == pytest.approx(r_m - A02, abs=0.011)
    assert 10 * math.log10(window(same, RANGES_5_12, 8.3, 9.5) / direct) == pytest.approx(GHOST_DB, abs=0.1)
    mixed = both - same
    assert onset(mixed, RANGES_5_12, 7.0, 9.5) == pytest.approx(0.5 * (R8 + r_m) - A02 * math.cos(gamma / 2),
                                                                abs=0.011)
    assert 10 * math.log10(mixed.sum() / direct) == pytest.approx(MIXED_DB, abs=0.15)


def test_side_scan_surface_ghost_and_mixed_ghost_on_the_starboard_channel():
    # The sphere abeam to starboard (world -y); a flat-pattern side-scan fan from 40 deg up to 40 deg down
    # (depression 0, vertical beam width 80), 6 deg along track. Everything lands on the starboard channel, the
    # port channel stays empty. Before the fix the mixed pair was 0.43 dB low (+4.09 dB): the table fan's search
    # for the ray holding P's direction took the largest u . d_t in float32, which cannot tell apart rays closer
    # than ~0.03 deg, and dropped the arrivals whose chosen ray's cell did not hold u.
    scene = make_scene(("ball", sphere([0.0, -R8, -D2], A02), 0.5))
    cfg = SidescanSonarConfig(model="device", along_track_beamwidth=6.0, vertical_beamwidth=80.0, depression=0.0,
                              min_range=5.0, max_range=12.0, range_bins=700, along_track_rays=40,
                              across_track_rays=2000, absorption=ALPHA, tvg="none", normalisation="none",
                              multiplicative_sigma=0.0, additive_sigma=0.0, beam_pattern="flat", multipath_bounces=1,
                              **QUIET)
    pose = np.array([0.0, 0.0, -S2, 0.0, 0.0, 0.0, 1.0])
    same, both = (SidescanSonar(c, device="cpu").render(scene, pose).numpy()["clean_intensity"][0].astype(np.float64)
                  for c in (cfg.replace(multipath_mixed_paths=False), cfg))
    assert both[:, 0].sum() == 0.0
    _check_ghosts(same[:, 1], both[:, 1])


def test_msis_surface_ghost_and_mixed_ghost():
    # The MSIS head at step 0 (head angle 0: looking along +x), 3 x 60 deg beam on a 30 x 1500 ray table (cells
    # 0.1 x 0.04 deg: the finer the table, the more arrivals the float32 search dropped: -0.43 dB before the fix).
    scene = make_scene(("ball", sphere([R8, 0.0, -D2], A02), 0.5))
    cfg = MsisConfig(horizontal_beamwidth=3.0, vertical_beamwidth=60.0, horizontal_rays=30, vertical_rays=1500,
                     min_range=5.0, max_range=12.0, range_bins=700, absorption=ALPHA, tvg="none",
                     normalisation="none", multipath_bounces=1, **QUIET)
    assert float(cfg.head_angles(np.array([0]))[0]) == 0.0
    pose = np.array([0.0, 0.0, -S2, 0.0, 0.0, 0.0, 1.0])
    same, both = (Msis(c, device="cpu").render(scene, pose).clean_intensity[0].astype(np.float64)
                  for c in (cfg.replace(multipath_mixed_paths=False), cfg))
    _check_ghosts(same, both)


def test_profiling_sonar_nadir_beam_second_bottom_echoes():
    # A profiling sonar looking down at depth s = 2 m over mud at altitude A = 3 m, two bounces, its nadir beam
    # (11 beams over 20 deg): the bottom at A = 3 m (the sounding, unchanged by the bounces), the mixed second bottom
    # echo (floor -> surface -> floor out, straight back) at 2 A + s = 8 m, the same-path one at A + 2 (A + s) = 13 m;
    # without mixed paths nothing at 8 m.
    A, s = 3.0, 2.0
    floor = seafloor(Material.from_properties("mud", (0.4, 0.4, 0.4), reflectivity=0.25), s + A)
    cfg = ProfilingSonarConfig(model="device", swath_width=20.0, n_beams=11, min_range=0.5, max_range=20.0,
                               range_bins=1950, absorption=ALPHA, tvg="none", normalisation="none",
                               multiplicative_sigma=0.0, additive_sigma=0.0, multipath_bounces=2, **QUIET)
    pose = np.array([0.0, 0.0, -s, 0.0, 0.0, 0.0, 1.0])
    for mixed in (True, False):
        out = ProfilingSonar(cfg.replace(multipath_mixed_paths=mixed), device="cpu").render(floor, pose).numpy()
        nadir, ranges = out["clean_image"][0][:, 5].astype(np.float64), out["ranges"]
        assert float(out["bottom_range"][0][5]) == pytest.approx(A, abs=0.01)
        assert onset(nadir, ranges, 12.0, 14.0) == pytest.approx(A + 2 * (A + s), abs=0.011)
        if mixed:
            assert onset(nadir, ranges, 7.0, 9.5) == pytest.approx(2 * A + s, abs=0.011)
        else:
            assert window(nadir, ranges, 7.0, 9.5) == 0.0


def test_multibeam_surface_reverberation_beam_by_beam_against_a_lambert_plane():
    # A BlueView P900 multibeam (900 kHz, 90 deg swath, 64 beams) at depth 10 m pitched up 90 deg: beam j meets the
    # flat surface at incidence t_j = its beam angle. Surface reverberation at U10 = 8 m/s (15.5508 kn) against a
    # Lambert plane (mu = 1) in the same place without it: per ray S_s w / (r^2 cos t) over mu cos t w / r^2, so
    # beam j's ratio is S_s(90 - t_j) - 20 log10 cos t_j (dB); beta = 158 (15.5508 x 900000^(1/3))^-0.58 = 2.27137.
    # Beam 40 at t = (40.5 / 64 - 1/2) 90 = 11.953 deg: S_s(78.047) = 3.3 x 2.27137 x log10(78.047 / 30)
    # - 42.4 log10(2.27137) + 2.6 = 3.1124 - 15.1066 + 2.6 = -9.3942 dB, -20 log10 cos t = +0.1904: -9.204 dB; the
    # other beams by the host twin chapman_harris_db.
    up = np.array([0.0, 0.0, -10.0, 0.0, -math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])
    open_sea = make_scene(("far_wall", quad([500.0, 0.0, -10.0], [-1.0, 0.0, 0.0], 10.0), 0.5))
    lambert = make_scene(("plane", quad([0.0, 0.0, 0.0], [0.0, 0.0, -1.0], 80.0), 1.0))
    lambert.metadata["surface_z"] = 100.0
    cfg = MultibeamSonarConfig.preset("blueview_p900", max_range=20.0, n_beams=64, tvg="none",
                                      absorption_model="fixed", absorption=0.1, **QUIET)
    assert cfg.frequency == 900e3
    a = MultibeamSonar(cfg.replace(surface_reverberation=True, surface_wind_speed=8.0), device="cpu").render(
        open_sea, up).numpy()
    b = MultibeamSonar(cfg, device="cpu").render(lambert, up).numpy()
    per_a = a["clean_intensity"][0].astype(np.float64).sum(0)
    per_b = b["clean_intensity"][0].astype(np.float64).sum(0)
    beta = 158.0 * (8.0 * 1.9438444924406046 * 900e3 ** (1 / 3)) ** -0.58
    assert beta == pytest.approx(2.27137, abs=1e-4)
    for j in (40, 44, 48, 56):
        t = abs(float(a["bearings"][j]))
        hand = float(chapman_harris_db(90.0 - math.degrees(t), 8.0, 900e3)) - 20 * math.log10(math.cos(t))
        if j == 40:
            assert math.degrees(t) == pytest.approx(11.953, abs=1e-3)
            assert hand == pytest.approx(-9.204, abs=0.01)
        assert 10 * math.log10(per_a[j] / per_b[j]) == pytest.approx(hand, abs=0.1)
    # the surface return of the nadir beam starts at the depth, 10 m
    col, ranges = a["clean_intensity"][0][:, 32].astype(np.float64), a["ranges"]
    assert ranges[np.argmax(col > 0.01 * col.max())] == pytest.approx(10.0, abs=0.05)


def test_imaging_sonar_ghost_follows_the_moving_surface_at_the_bounce_point():
    # An imaging sonar at depth s = 3 m, a sphere (a = 0.3 m) at depth 3 m, R = 20 m ahead, under a long-crested
    # Bretschneider swell (Hs 1 m, Tp 10 s, 16 components, linear) whose patch is centred on the bounce point
    # (10, 0). The ghost's leading edge is the shortest reflected path S -> X -> sphere over the surface profile
    # eta(x, t) along the beam (Fermat: the image source of the local tangent plane), min_x sqrt(x^2 + (s + eta)^2)
    # + sqrt((R - x)^2 + (d + eta)^2) - a, i.e. about sqrt(R^2 + (s + d + 2 eta(R / 2))^2) - a; the surface height at
    # the sensor (a different phase of the wave, k x = 0.4 rad away) would put it elsewhere: at t = 0 eta(0) =
    # +0.196 m but eta(10) = +0.018 m. By hand from the sampled profile: 20.566, 20.734, 20.593, 20.423 m at t = 0,
    # 2.5, 5, 7.5 s (the imaging sonar's ghost onsets, bins of 1 cm: 20.56, 20.73, 20.59, 20.42). The surface echo
    # itself (the patch's Lambert mu = 1) is in both renders: the ghost is their difference. The sea's wind for
    # Chapman-Harris (Pierson-Moskowitz wind of Hs): U19.5 = sqrt(Hs g / 0.21) = 6.8336, U10 = 6.8336 / 1.026
    # = 6.6604 m/s.
    s, d, R, a = 3.0, 3.0, 20.0, 0.3
    scene = make_scene(("ball", sphere([R, 0.0, -d], a), 0.5))
    scene.add_sea_surface(dict(spectrum="bretschneider", significant_wave_height=1.0, peak_period=10.0,
                               spreading="none", steepness=0.0, n_frequencies=16), size=80.0, resolution=0.5,
                          center=(10.0, 0.0))
    assert sea_state_wind(scene) == pytest.approx(6.6604, abs=1e-4)
    cfg = fls(1, horizontal_fov=4.0, vertical_fov=50.0, n_beams=4, rays_per_beam=10, elevation_rays=3000,
              min_range=15.0, max_range=25.0, range_bins=1000, multipath_mixed_paths=False, frequency=2e3)
    with_ghost, direct = ImagingSonar(cfg, device="cpu"), ImagingSonar(cfg.replace(multipath_bounces=0), device="cpu")
    pose = np.array([0.0, 0.0, -s, 0.0, 0.0, 0.0, 1.0])
    ranges = 15.0 + (np.arange(1000) + 0.5) * 0.01
    xs = np.linspace(0.0, R, 201)
    fine = np.linspace(0.0, R, 20001)
    onsets = []
    for t in (0.0, 2.5, 5.0, 7.5):
        scene.set_time(t)
        eta = np.interp(fine, xs, scene.surface_height(np.stack([xs, np.zeros_like(xs)], axis=1)))
        hand = float((np.hypot(fine, s + eta) + np.hypot(R - fine, d + eta)).min()) - a
        ghost = (with_ghost.render(scene, pose).numpy()["clean_intensity"][0].sum(1).astype(np.float64)
                 - direct.render(scene, pose).numpy()["clean_intensity"][0].sum(1).astype(np.float64))
        onsets.append(onset(ghost, ranges, 20.3, 24.9))
        assert onsets[-1] == pytest.approx(hand, abs=0.011)
    assert max(onsets) - min(onsets) > 0.25


def test_usbl_and_lbl_surface_bounce_under_a_swell_is_not_blocked_by_the_surface_itself():
    # tests/test_positioning_multipath.py's wall (x = 3 m, top z = -6) between a head 10 m deep and a beacon 10 m
    # ahead at the same depth: the reply heard by its surface reflection, image beacon at z = +10, range
    # sqrt(10^2 + 20^2) = 22.3607 m (the surface flat at its mean z = 0, as documented), reflection point (5, 0, 0).
    # Now under a long-crested swell (Hs 1 m, Tp 10 s) whose patch covers that point: at t = 5 and 7.5 s a trough
    # lies there (eta = -0.138, -0.210 m), so the leg's ray meets the wave mesh 0.14-0.21 m / sin(63.4 deg) short of
    # the mean-level point. The surface is the reflector, not an obstacle: the fix must stay (22.3607 m), as at
    # t = 0 and 2.5 s (crests, +0.207, +0.275 m). Before the fix the troughs gave no fix. A wall that cuts the
    # reflected path (top z = -3) still does.
    from test_positioning_multipath import BEACON, HEAD, wall_scene
    from oceansim_py.sensors.lbl import LBL, LBLConfig
    from oceansim_py.sensors.usbl import USBL, USBLConfig
    swell = dict(spectrum="bretschneider", significant_wave_height=1.0, peak_period=10.0, spreading="none",
                 steepness=0.0, n_frequencies=16)
    usbl = USBL(USBLConfig(beacon_positions=(BEACON,), noise=False, surface_multipath=True))
    lbl = LBL(LBLConfig(beacon_ids=(1,), beacon_positions=(BEACON,), noise=False, surface_multipath=True))
    scene = wall_scene(top=-6.0)
    scene.add_sea_surface(swell, size=60.0, resolution=0.5, center=(5.0, 0.0))
    cut = wall_scene(top=-3.0)
    cut.add_sea_surface(swell, size=60.0, resolution=0.5, center=(5.0, 0.0))
    for t, eta in ((0.0, 0.207), (2.5, 0.275), (5.0, -0.138), (7.5, -0.210)):
        scene.set_time(t)
        cut.set_time(t)
        assert float(scene.surface_height([5.0, 0.0])[0]) == pytest.approx(eta, abs=1e-3)
        u = usbl.measure(HEAD, scene=scene)
        assert u.fix[0, 0] and u.slant_range[0, 0] == pytest.approx(math.hypot(10.0, 20.0), abs=1e-9)
        r = lbl.measure(HEAD, scene=scene)
        assert r.fix[0, 0] and r.range[0, 0] == pytest.approx(math.hypot(10.0, 20.0), abs=1e-9)
        assert not usbl.measure(HEAD, scene=cut).fix[0, 0]


def test_msis_sweep_under_a_moving_surface_sees_the_surface_of_each_steps_time():
    # An MSIS 10 m deep, head scanning a 4-step sector (step 0.9 deg) pitched up 90 deg: each step's beam looks
    # straight up at the surface of its own time t_k = start + k T (T = ping_period 2.5 s), under a long-crested
    # Bretschneider swell (Hs 1 m, Tp 10 s) with surface reverberation (the sea's wind): the surface return's onset
    # is the depth below the instantaneous surface, 10 + eta(0, t_k) (eta = +0.196, +0.363, -0.208, -0.264 m at
    # 0, 2.5, 5, 7.5 s; tests/test_multipath_hand.py), the same as a single-step render after set_time(t_k). Before
    # the fix the sweep rendered every step at the scene's current time: four onsets at 10 + eta(0, 0).
    scene = make_scene(("far_wall", quad([500.0, 0.0, -10.0], [-1.0, 0.0, 0.0], 10.0), 0.5))
    scene.add_sea_surface(dict(spectrum="bretschneider", significant_wave_height=1.0, peak_period=10.0,
                               spreading="none", steepness=0.0, n_frequencies=16), size=80.0, resolution=0.5,
                          center=(0.0, 0.0))
    cfg = MsisConfig(horizontal_beamwidth=2.0, vertical_beamwidth=2.0, horizontal_rays=8, vertical_rays=8,
                     step_angle=0.9, sector_width=3.6, ping_period=2.5, min_range=5.0, max_range=15.0,
                     range_bins=1000, tvg="none", normalisation="none", surface_reverberation=True, **QUIET)
    up = np.array([0.0, 0.0, -10.0, 0.0, -math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])
    sonar = Msis(cfg, device="cpu")
    ranges = cfg.ranges()
    scene.set_time(0.0)
    sweep = sonar.render_sweep(scene, up, sweep=0, start_time=0.0)
    assert sweep.times[:4] == pytest.approx([0.0, 2.5, 5.0, 7.5])
    for k, eta in enumerate((0.196, 0.363, -0.208, -0.264)):
        t = float(sweep.times[k])
        assert float(scene.surface_height([0.0, 0.0], t)[0]) == pytest.approx(eta, abs=1e-3)
        row = sweep.clean_intensity[k].astype(np.float64)
        assert onset(row, ranges, 9.0, 11.0) == pytest.approx(10.0 + eta, abs=0.015)
        scene.set_time(t)
        single = sonar.render(scene, up, int(sweep.steps[k])).clean_intensity[0]
        np.testing.assert_array_equal(single, sweep.clean_intensity[k])


def test_msis_ghost_in_a_mud_seabed_with_no_critical_angle():
    # The MSIS of test_msis_surface_ghost_and_mixed_ghost 1.5 m above a mud floor (1420 kg/m^3, 1490 m/s: slower
    # than water, so no critical angle; Lambert mu 0 so that only its mirror is seen), a sphere (a = 0.2 m) 8 m
    # ahead at the sensor's height, the surface far above. Image sphere at sqrt(8^2 + 3^2) = 8.5440 m (onset
    # 8.3440), incidence cos t1 = 3 / 8.5440 = 0.35112 (grazing 20.56 deg); Snell sin^2 t2 = (1490 / 1500)^2
    # (1 - 0.35112^2) = 0.86506, cos t2 = 0.36734; Z2 / Z1 = 1420 x 1490 / (1026 x 1500) = 1.37479; R = (1.37479 x
    # 0.35112 - 0.36734) / (0.48272 + 0.36734) = 0.13573: ghost / direct = 40 log10 0.13573 + 40 log10(8 / 8.5440)
    # - 0.2 x 0.5440 = -34.6926 - 1.1429 - 0.1088 = -35.944 dB. (Sand, beyond its critical angle, would give
    # -1.25 dB: tests/test_multipath_hand.py.)
    from oceansim_py.scene import Node, Scene
    mud = Material.from_properties("mud", (0.2, 0.2, 0.2), density=1420.0, sound_speed=1490.0, reflectivity=0.0)
    ball = Material.from_properties("ball", (0.5, 0.5, 0.5), reflectivity=0.5)
    root = Node("/World")
    scene = Scene([root, Node("/World/floor", mesh=quad([0.0, 0.0, -10.0], [0.0, 0.0, 1.0], 80.0), material=mud,
                              label="floor", parent=root),
                   Node("/World/ball", mesh=sphere([8.0, 0.0, -8.5], 0.2), material=ball, label="ball",
                        parent=root)], device="cpu")
    scene.metadata["surface_z"] = 100.0
    assert float(fluid_reflection(1420.0, 1490.0, 3.0 / math.hypot(8.0, 3.0))) == pytest.approx(0.13573, abs=1e-5)
    cfg = MsisConfig(horizontal_beamwidth=3.0, vertical_beamwidth=60.0, horizontal_rays=30, vertical_rays=1500,
                     min_range=5.0, max_range=12.0, range_bins=700, absorption=ALPHA, tvg="none",
                     normalisation="none", multipath_bounces=1, multipath_mixed_paths=False, **QUIET)
    p = Msis(cfg, device="cpu").render(scene, np.array([0.0, 0.0, -8.5, 0.0, 0.0, 0.0, 1.0])).clean_intensity[
        0].astype(np.float64)
    d_g = math.hypot(8.0, 3.0)
    assert onset(p, RANGES_5_12, d_g - 0.3, d_g + 0.2) == pytest.approx(d_g - 0.2, abs=0.011)
    ratio = window(p, RANGES_5_12, d_g - 0.25, d_g + 0.2) / window(p, RANGES_5_12, 7.75, 8.2)
    assert 10 * math.log10(ratio) == pytest.approx(-35.944, abs=0.15)


@pytest.mark.parametrize("spreading, hand_db", [(False, -1.1580), (True, -2.1271)])
def test_side_scan_peer_surface_ghost_in_its_own_law(spreading, hand_db):
    # The side-scan scene above with the peer model (one bounce, its law s = R^4 mu cos(psi) w 10^(-2 alpha L / 10),
    # times (1 m / L)^2 with `spreading`): a sphere's summed echo is mu a^2 F(0) / D^2 without spreading (the rays'
    # solid angle over the sphere, pi a^2 / D^2 weighted by cos psi) and / D^4 with it, so ghost / direct
    # = 20 log10(8 / 8.94427) - 0.18885 = -0.96910 - 0.18885 = -1.1580 dB, or 40 log10(...) - 0.18885 = -2.1271 dB;
    # ghost onset 8.744 m either way.
    scene = make_scene(("ball", sphere([0.0, -R8, -D2], A02), 0.5))
    cfg = SidescanSonarConfig(model="peer", along_track_beamwidth=6.0, vertical_beamwidth=80.0, depression=0.0,
                              min_range=5.0, max_range=12.0, range_bins=700, along_track_rays=40,
                              across_track_rays=2000, absorption=ALPHA, spreading=spreading, normalisation="none",
                              multiplicative_sigma=0.0, additive_sigma=0.0, beam_pattern="flat", multipath_bounces=1)
    p = SidescanSonar(cfg, device="cpu").render(scene, np.array([0.0, 0.0, -S2, 0.0, 0.0, 0.0, 1.0])).numpy()[
        "clean_intensity"][0][:, 1].astype(np.float64)
    r_m = math.hypot(R8, S2 + D2)
    assert onset(p, RANGES_5_12, 8.3, 9.5) == pytest.approx(r_m - A02, abs=0.011)
    ratio = window(p, RANGES_5_12, 8.3, 9.5) / window(p, RANGES_5_12, 7.0, 8.2)
    assert 10 * math.log10(ratio) == pytest.approx(hand_db, abs=0.1)
