"""Every sensor whose config carries a speed of sound refuses one that is not water's (1300-1700 m/s), naming the
field; the peer multibeam accepted 2.5 m/s (independent audit, November 2026)."""

from __future__ import annotations

import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.sensors.acoustic_modem import AcousticModemConfig
from oceansim_py.sensors.dvl import DVLConfig
from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig
from oceansim_py.sensors.lbl import LBLConfig
from oceansim_py.sensors.multibeam import MultibeamSonarConfig
from oceansim_py.sensors.usbl import USBLConfig

CONFIGS = [
    (MultibeamSonarConfig, lambda c: MultibeamSonarConfig(sound_speed=c)),
    (MultibeamSonarConfig, lambda c: MultibeamSonarConfig.preset("seabat_f50_peer", sound_speed=c)),
    (MultibeamSonarConfig, lambda c: MultibeamSonarConfig.preset("seabat_f50", sound_speed=c)),
    (ImagingSonarConfig, lambda c: ImagingSonarConfig.preset("oculus_m750d", sound_speed=c)),
    (ImagingSonarConfig, lambda c: ImagingSonarConfig.preset("holoocean_default", sound_speed=c)),
    (DVLConfig, lambda c: DVLConfig(sound_speed=c)),
    (AcousticModemConfig, lambda c: AcousticModemConfig(sound_speed=c)),
    (USBLConfig, lambda c: USBLConfig(sound_speed=c, element_spacing=0.025)),  # lambda / 2 at 25 kHz, 1300 m/s: 0.026 m
    (LBLConfig, lambda c: LBLConfig(sound_speed=c)),
]


@pytest.mark.parametrize("cls, make", CONFIGS)
@pytest.mark.parametrize("bad", [2.5, 1000.0, 2000.0, float("nan"), float("inf")])
def test_a_sound_speed_outside_water_is_refused_naming_the_field(cls, make, bad) -> None:
    with pytest.raises(ConfigError, match=rf"{cls.__name__}\.sound_speed"):
        make(bad)


@pytest.mark.parametrize("cls, make", CONFIGS)
@pytest.mark.parametrize("good", [1300.0, 1435.0, 1540.0, 1700.0])
def test_water_sound_speeds_are_accepted(cls, make, good) -> None:
    assert make(good).sound_speed == good
