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
