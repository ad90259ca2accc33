"""Multipath, the sea surface and surface reverberation of the sensors and scenes the other multipath tests do not
use (audit MP2), against hand numbers: the side-scan's and the MSIS's surface ghost and mixed ghost, the profiling
sonar's second bottom echoes, the multibeam's Chapman-Harris surface return beam by beam, a Bretschneider sea's
wind, a mud seabed (no critical angle), the imaging sonar's ghost following a moving surface at the bounce point
away from the sensor, and the first return of the side-scan and single-beam, which the silent flat surface must not
become when multipath is on."""

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
