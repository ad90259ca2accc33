"""Device presets across the acoustic sensors (named after devices, documented sources, renders) and the
elevation side lobes of the device chain, against numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.sensors.acoustic import presets as dp
from oceansim_py.sensors.acoustic.beam_pattern import LineArray
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.multibeam import MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonarConfig

SENSORS = [(ImagingSonarConfig, dp.IMAGING_SONAR_DEVICE_PRESETS), (MultibeamSonarConfig, dp.MULTIBEAM_DEVICE_PRESETS),
           (SidescanSonarConfig, dp.SIDESCAN_DEVICE_PRESETS), (SinglebeamSonarConfig, dp.SINGLEBEAM_DEVICE_PRESETS),
           (ProfilingSonarConfig, dp.PROFILING_DEVICE_PRESETS)]

#: The peers' presets keep their peer-faithful models under these names.
PEER_NAMES = ("holoocean", "oceansim", "_peer", "sidescan_900khz", "altimeter_200khz")


@pytest.mark.parametrize("config_cls, table", SENSORS, ids=[c.__name__ for c, _ in SENSORS])
def test_device_presets_are_the_device_model_with_a_stated_source(config_cls, table):
    for name, (values, source) in table.items():
        cfg = config_cls.preset(name)
        assert cfg.model == "device", name
        if hasattr(cfg, "normalisation"):
            assert cfg.normalisation == "none", name
        # The source names the datasheet (or the peer model file) and says what was chosen here.
        assert ("datasheet" in source or "DAVE" in source) and len(source) > 80, name
    # Every device-model preset of the sensor is in its documented table; every other preset is a peer's.
    for name in config_cls.preset_names():
        if config_cls.preset(name).model == "device":
            assert name in table, name
        else:
            assert any(tag in name for tag in PEER_NAMES), f"{config_cls.__name__} preset {name!r} is a peer model " \
                                                           f"under a device's name"


def test_peer_models_stay_reachable_under_peer_names():
    assert ImagingSonarConfig.preset("oculus_m750d").model == "device"
    assert ImagingSonarConfig.preset("oculus_m750d_peer").model == "peer"
    assert ImagingSonarConfig.preset("blueview_p900_peer").normalisation == "row"
    assert MultibeamSonarConfig.preset("blueview_p900_peer").bandwidth == 29.9e3   # DAVE's Gaussian b
    assert MultibeamSonarConfig.preset("blueview_p900").bandwidth == 30000.0      # -3 dB, datasheet 2.5 cm
    assert ProfilingSonarConfig.preset("em2040_700khz_peer").model == "peer"
    for name in ("holoocean_default", "holoocean_paper", "oceansim_default"):
        assert ImagingSonarConfig.preset(name).model == "peer"


def test_elevation_side_lobe_is_present_at_its_level():
    # A vertical uniform aperture with a 10 deg -3 dB beam: L / lambda = 0.4430 / sin(5 deg) = 5.083 (65 elements).
    # The one-way pattern's first side lobe peaks at x = (L / lambda) sin(e) = 1.430 (tan(pi x) = pi x), e = 16.35
    # deg, at |D|^2 = -13.26 dB; the two-way (D^4) echo of a plate there is -26.5 dB under the same plate on the
    # axis, and at the first null (x = 1, e = 11.35 deg) it vanishes.
    array = LineArray(math.radians(10.0))
    assert array.aperture_wavelengths == pytest.approx(5.083, rel=2e-3)
    lobe = math.asin(1.4303 / array.aperture_wavelengths)
    null = math.asin(1.0 / array.aperture_wavelengths)
    assert math.degrees(lobe) == pytest.approx(16.35, abs=0.05)
    cfg = ImagingSonarConfig(model="device", source_level=200.0, noise_level=None, volume_scattering=None,
                             bandwidth=0.0, beam_width=0.0, tvg="none", normalisation="none",
                             multiplicative_sigma=0.0, additive_sigma=0.0, horizontal_fov=6.0, vertical_fov=10.0,
                             elevation_pattern="array", elevation_span=60.0, n_beams=12, rays_per_beam=4,
                             elevation_rays=1200, min_range=4.0, max_range=6.0, range_bins=100, absorption=0.0,
                             jitter=False)
    sonar = ImagingSonar(cfg, device="cpu")

    def plate_echo(elevation: float) -> float:
        d = np.array([math.cos(elevation), 0.0, math.sin(elevation)])
        scene = make_scene(("plate", quad(5.0 * d, -d, 0.03), 0.5))
        return float(sonar.render(scene, np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()["clean_intensity"].sum())

    axis = plate_echo(0.0)
    assert 10 * math.log10(plate_echo(lobe) / axis) == pytest.approx(2 * -13.26, abs=1.0)
    assert 10 * math.log10(plate_echo(null) / axis) < -45.0
