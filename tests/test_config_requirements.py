"""The shared validation helpers of the sensor configs (io.config.require_zero, require_seed): the messages each
config gave before the checks were shared."""

from __future__ import annotations

import re

import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import require_seed, require_zero
from oceansim_py.sensors.dvl import DVLConfig
from oceansim_py.sensors.msis import MsisConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonarConfig

UNUSED = [
    (SidescanSonarConfig, "beam_width", "a side-scan (its two channels are sides, not beams of a bearing fan)"),
    (SidescanSonarConfig, "elevation_span", "a side-scan (the fan is vertical_beamwidth wide)"),
    (SinglebeamSonarConfig, "beam_width", "a single-beam sonar (one channel, no bearing fan)"),
    (SinglebeamSonarConfig, "elevation_span", "a single-beam sonar (the cone is opening_angle wide)"),
    (MsisConfig, "beam_width", "an MSIS (one beam, no bearing point spread across channels; its width is "
                               "horizontal_beamwidth)"),
    (MsisConfig, "elevation_span", "an MSIS (the fan is vertical_beamwidth wide)"),
    (ProfilingSonarConfig, "elevation_span", "a profiling sonar (the fan is along_track_beamwidth wide)"),
]


def test_helpers_by_hand():
    require_zero(0.0, "C", "f", "x")
    require_seed(0, "C")
    require_seed(2**31 - 1, "C")
    with pytest.raises(ConfigError, match=r"^C\.f: must be 0 for a thing \(why\), got 0\.5$"):
        require_zero(0.5, "C", "f", "a thing (why)")
    for bad in (-1, 2**31, 1.0, "1"):
        with pytest.raises(ConfigError, match=rf"^C\.seed: must be an integer in \[0, 2\^31\), "
                                              rf"got {re.escape(repr(bad))}$"):
            require_seed(bad, "C")


@pytest.mark.parametrize("config_class, field, why", UNUSED, ids=[f"{c.__name__}.{f}" for c, f, _ in UNUSED])
def test_unused_device_chain_fields_must_stay_zero(config_class, field, why):
    assert getattr(config_class(), field) == 0.0
    value = 179.5 if field == "elevation_span" else 1.5  # a span the device chain accepts (>= the vertical fov)
    with pytest.raises(ConfigError, match=rf"^{config_class.__name__}\.{field}: must be 0 for {re.escape(why)}, "
                                          rf"got {value}$"):
        config_class(**{field: value})


@pytest.mark.parametrize("config_class", [DVLConfig, MsisConfig])
def test_seed_messages(config_class):
    for bad in (-1, 2**31, 0.5):
        with pytest.raises(ConfigError, match=rf"^{config_class.__name__}\.seed: must be an integer in "
                                              rf"\[0, 2\^31\), got {re.escape(repr(bad))}$"):
            config_class(seed=bad)
