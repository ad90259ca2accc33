"""Issue 11 checks configured as an outside user would: a device preset with a field set over it, on every
acoustic sensor, against numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from conftest import make_scene
from oceansim_py.scene import TriangleMesh
from oceansim_py.sensors.acoustic.absorption import francois_garrison
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.msis import MsisConfig
from oceansim_py.sensors.multibeam import MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonarConfig

CONFIGS = [ImagingSonarConfig, SidescanSonarConfig, ProfilingSonarConfig, SinglebeamSonarConfig,
           MultibeamSonarConfig, MsisConfig]


def device_presets(cls):
    return [n for n in cls.preset_names() if cls.preset(n).model == "device"]


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_absorption_set_over_a_device_preset_is_the_absorption_rendered(cls):
    # The device presets take alpha from Francois-Garrison; an absorption of 0.1 dB/m set over one must be the
    # alpha the chain uses (it was silently ignored: the preset's Francois-Garrison value, e.g. 1.06 dB/m at
    # 1.8 MHz, rendered a sphere 10 m off an ARIS 1800 19 dB under SL - 40 log r - 0.2 r + TS).
    for name in device_presets(cls):
        cfg = cls.preset(name, absorption=0.1)
        assert cfg.absorption_db_per_m(cfg.absorption) == pytest.approx(0.1), name
        # the preset's own alpha is Francois-Garrison at its frequency and water
        base = cls.preset(name)
        assert base.absorption_db_per_m(base.absorption) == pytest.approx(
            francois_garrison(base.frequency, base.temperature, base.salinity, base.depth, base.ph)), name
    # absorption_model given too keeps Francois-Garrison
    name = device_presets(cls)[0]
    cfg = cls.preset(name, absorption=0.1, absorption_model="francois_garrison")
    assert cfg.absorption_db_per_m(cfg.absorption) == pytest.approx(
        francois_garrison(cfg.frequency, cfg.temperature, cfg.salinity, cfg.depth, cfg.ph))
