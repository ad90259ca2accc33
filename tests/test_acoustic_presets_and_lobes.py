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
from oceansim_py.sensors.msis import MsisConfig
from oceansim_py.sensors.multibeam import MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonarConfig

SENSORS = [(ImagingSonarConfig, dp.IMAGING_SONAR_DEVICE_PRESETS), (MultibeamSonarConfig, dp.MULTIBEAM_DEVICE_PRESETS),
           (SidescanSonarConfig, dp.SIDESCAN_DEVICE_PRESETS), (SinglebeamSonarConfig, dp.SINGLEBEAM_DEVICE_PRESETS),
           (ProfilingSonarConfig, dp.PROFILING_DEVICE_PRESETS)]

#: Every device-preset table under its FIELD_SOURCES kind.
TABLES = {"imaging_sonar": dp.IMAGING_SONAR_DEVICE_PRESETS, "multibeam": dp.MULTIBEAM_DEVICE_PRESETS,
          "sidescan": dp.SIDESCAN_DEVICE_PRESETS, "singlebeam": dp.SINGLEBEAM_DEVICE_PRESETS,
          "profiling": dp.PROFILING_DEVICE_PRESETS, "msis": dp.MSIS_DEVICE_PRESETS}

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


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_every_field_of_every_device_preset_has_a_documented_source(kind):
    # Each field's source names its kind (datasheet, manual, SDK, model file, paper, derived, estimate, simulation)
    # and says which document or what reasoning; no source is left for a field the preset does not set.
    assert sorted(dp.FIELD_SOURCES) == sorted(TABLES)
    for name, (values, _summary) in TABLES[kind].items():
        sources = dp.field_sources(kind, name)
        assert set(sources) == set(values), f"{kind} {name}: fields without a source {set(values) - set(sources)}"
        for field, source in sources.items():
            source_kind, _, text = source.partition(": ")
            assert source_kind in dp.SOURCE_KINDS and len(text) >= 10, f"{kind} {name}.{field}: {source!r}"


def test_msis_presets_are_the_documented_device_presets():
    for name, (values, _summary) in dp.MSIS_DEVICE_PRESETS.items():
        cfg = MsisConfig.preset(name)
        assert all(getattr(cfg, field) == value for field, value in values.items()), name
    assert sorted(MsisConfig.preset_names()) == sorted(dp.MSIS_DEVICE_PRESETS)


def test_datasheet_derived_values_by_hand():
    # ARIS 1800 at 1.8 MHz: the SDK's default 14 us CW pulse -> B = 1 / tau = 71428.6 Hz, c tau / 2 = 1.05 cm.
    aris = ImagingSonarConfig.preset("aris1800_1800khz")
    assert aris.bandwidth == pytest.approx(71428.6) and 1500.0 / (2 * aris.bandwidth) == pytest.approx(0.0105)
    assert (aris.n_beams, aris.min_range, aris.range_bins) == (96, 0.7, 1250)
    # Norbit WBMS: the manual's 80 kHz sweep at every range -> 9.375 mm; bins at that resolution over 0.5-60 m.
    norbit = ProfilingSonarConfig.preset("norbit_wbms_400khz")
    assert norbit.bandwidth == 80000.0 and norbit.range_bins == round(59.5 / 0.009375)
    # Ping360 at 20 m: transmit 8000 * 20 / 1500 = 106.7 us -> B = 9375 Hz (8 cm); 1200 samples (firmware maximum).
    ping = MsisConfig.preset("ping360")
    assert ping.bandwidth == 9375.0 and ping.range_bins == 1200
    # Gemini 720is manual: a 120 deg sector, 20 deg vertical, 720 kHz.
    gemini = ImagingSonarConfig.preset("gemini_720i")
    assert (gemini.horizontal_fov, gemini.vertical_fov, gemini.frequency) == (120.0, 20.0, 720e3)


def test_estimated_source_level_by_hand():
    # 30 W into the ARIS 1800's 28 x 14 deg fan: 10 log10(1025 * 1500 * 30 / (4 pi) / 1e-12) = 185.65 dB omni,
    # DI_tx = 10 log10(4 pi / (0.48869 * 0.24435)) = 20.22 dB -> 205.87 dB re 1 uPa at 1 m.
    assert dp.estimated_source_level(28.0, 14.0) == pytest.approx(205.9, abs=1e-9)
    assert ImagingSonarConfig.preset("aris1800_1800khz").source_level == pytest.approx(205.9)
    # Where no document gives it, the level is that estimate for the preset's transmit fan; the P900 keeps DAVE's.
    assert SidescanSonarConfig.preset("edgetech_4125_900khz").source_level == dp.estimated_source_level(0.28, 80.0)
    assert MsisConfig.preset("ping360").source_level == dp.estimated_source_level(2.0, 25.0)
    assert MultibeamSonarConfig.preset("blueview_p900").source_level == 220.0
    assert dp.field_sources("multibeam", "blueview_p900")["source_level"].startswith("model file: ")


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


def test_field_sources_of_an_unknown_kind_or_preset_is_a_config_error_and_the_table_stays_as_it_is():
    # field_sources("imaging_sonar", "oculus_m750d_peer") was a bare KeyError, and the dict it returned was the table's
    # own (shared by oculus_m750d and oculus_m750d_750khz): changing it changed the documented sources.
    from oceansim_py.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^field_sources: 'imaging_sonar' has no device preset 'oculus_m750d_peer'; "
                                          r"device presets: \[.*'oculus_m750d'.*\]$"):
        dp.field_sources("imaging_sonar", "oculus_m750d_peer")
    with pytest.raises(ConfigError, match=r"^field_sources: no device presets for sensor kind 'camera'; kinds: "
                                          r"\['imaging_sonar', 'msis', 'multibeam', 'profiling', 'sidescan', "
                                          r"'singlebeam'\]$"):
        dp.field_sources("camera", "gopro_flat_port")
    sources = dp.field_sources("imaging_sonar", "oculus_m750d")
    sources["frequency"] = "estimate: changed by a caller"
    assert dp.field_sources("imaging_sonar", "oculus_m750d_750khz")["frequency"] != "estimate: changed by a caller"
    assert dp.FIELD_SOURCES["imaging_sonar"]["oculus_m750d"]["frequency"] != "estimate: changed by a caller"
