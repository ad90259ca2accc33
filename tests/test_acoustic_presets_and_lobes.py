"""Device presets across the acoustic sensors (named after devices, documented sources, renders) and the
elevation side lobes of the device chain, against numbers computed by hand."""

from __future__ import annotations

import math
import re

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


def test_every_value_recalled_from_a_datasheet_says_what_was_searched():
    # A value no stored public document states is an estimate that names the datasheet it is recalled from and what
    # was searched for it, so a reader knows where to check it; no field is left at the bare "as recalled" label.
    recalled = 0
    for kind, presets in dp.FIELD_SOURCES.items():
        for name, sources in presets.items():
            for field, source in sources.items():
                if "recalled" in source:
                    recalled += 1
                    assert "searched" in source, f"{kind} {name}.{field}: {source!r}"
                assert "as recalled (no stored copy)" not in source, f"{kind} {name}.{field}"
    assert recalled > 0


FANS = [(dp.IMAGING_SONAR_DEVICE_PRESETS, "horizontal_fov"), (dp.MULTIBEAM_DEVICE_PRESETS, "fov"),
        (dp.PROFILING_DEVICE_PRESETS, "swath_width")]


@pytest.mark.parametrize("table, fov_field", FANS, ids=["imaging_sonar", "multibeam", "profiling"])
def test_beams_cover_the_fan_without_gaps(table, fov_field):
    # The beam spacing fov / n_beams is at most the -3 dB beam width (5 % margin: the ARIS lenses space their beams
    # unevenly, 0.21-0.35 deg for the 1800's 96), so a target anywhere in the fan lies in some beam's main lobe.
    # E.g. ARIS 1800 at 1.8 MHz: 28 / 96 = 0.292 deg <= 1.05 x 0.29; Oculus M750d 750 kHz: 130 / 512 = 0.254 <= 1.
    for name, (values, _summary) in table.items():
        spacing = values[fov_field] / values["n_beams"]
        assert spacing <= 1.05 * values["beam_width"], f"{name}: spacing {spacing:.3f} deg, beam {values['beam_width']}"


def test_aris_beam_widths_are_the_mean_of_sound_metrics_beam_width_files():
    # Sound Metrics aris-file-sdk beam-width-metrics: the outer beam edges over the beam count, by hand:
    # BeamWidths_ARIS1800_96.h -13.8562 .. 13.9831 -> 27.8393 / 96 = 0.2900 deg;
    # BeamWidths_ARIS1800_1200_48.h -13.7893 .. 13.7893 -> 27.5786 / 48 = 0.5746 deg;
    # BeamWidths_ARIS3000_128.h -14.831 .. 14.832 -> 29.663 / 128 = 0.2317 deg; the 3 MHz aperture at 1.8 MHz:
    # 0.23 x 3.0 / 1.8 = 0.383 deg.
    beam = {name: ImagingSonarConfig.preset(name).beam_width
            for name in ("aris1800_1800khz", "aris1800_1100khz", "aris3000_3000khz", "aris3000_1800khz")}
    assert beam == {"aris1800_1800khz": round(27.8393 / 96, 2), "aris1800_1100khz": round(27.5786 / 48, 2),
                    "aris3000_3000khz": round(29.663 / 128, 2), "aris3000_1800khz": round(0.23 * 3.0 / 1.8, 2)}
    assert beam == {"aris1800_1800khz": 0.29, "aris1800_1100khz": 0.57, "aris3000_3000khz": 0.23,
                    "aris3000_1800khz": 0.38}


def test_a_number_quoted_from_a_driver_constant_is_the_field_value():
    # Where a field's source is a driver constant (liboculus Constants.h: "AzimuthBeamwidthDeg = 0.6",
    # "ElevationBeamwidthDeg = 12.0", "MaxRange = 10"), the field holds that number: the -3 dB beam width, the
    # vertical fan, the window end (an estimate that only mentions a constant, e.g. a window inside the maximum
    # range, is not checked).
    quoted = {"AzimuthBeamwidthDeg": ("beam_width",), "ElevationBeamwidthDeg": ("vertical_fov", "elevation_fov"),
              "MaxRange": ("max_range",)}
    checked = 0
    for kind, table in (("imaging_sonar", dp.IMAGING_SONAR_DEVICE_PRESETS), ("multibeam", dp.MULTIBEAM_DEVICE_PRESETS)):
        for name, (values, _summary) in table.items():
            for field, source in dp.field_sources(kind, name).items():
                for constant, fields in quoted.items():
                    match = re.search(constant + r" = ([0-9.]+)", source)
                    if match and field in fields and source.startswith("third-party document: "):
                        assert values[field] == float(match.group(1)), f"{kind} {name}.{field}: {source!r}"
                        checked += 1
    # 4 imaging modes (+ the oculus_m750d alias) x beam width and vertical fan, 1 window end; the multibeam M1200d x 3
    assert checked == 5 * 2 + 1 + 3


def test_a_louder_preset_widens_its_display_window_by_its_excess_source_level():
    # BlueView P900: DAVE's 220 dB against this fan's 30 W estimate of 199.2 dB (90 x 20 deg): its window's top is
    # noise + 100 + 20.8 dB (imaging) and noise + 120 + 20.8 dB (multibeam), from the common floor 27 dB under the
    # post-TVG noise (noise + 30 dB), i.e. noise + 3 dB: 117.8 and 137.8 dB wide, so the same echoes over the same
    # noise fill it as the other presets' 97 dB do. On the tank (sensor 1.5 m down, pitched 45 deg) the common window
    # saturates over 10 % of its image; the widened one under 3 %, with the same black pixels.
    from oceansim_py.scene import load_scene

    assert dp._source_level_estimate(90.0, 20.0)[0] == 199.2
    cfg = ImagingSonarConfig.preset("blueview_p900")
    assert cfg.post_tvg_noise_level == pytest.approx(cfg.noise_level + 30.0)
    assert cfg.dynamic_range == pytest.approx(117.8) and cfg.display_floor == pytest.approx(cfg.noise_level + 3.0)
    assert MultibeamSonarConfig.preset("blueview_p900").dynamic_range == pytest.approx(137.8)
    assert ImagingSonarConfig.preset("oculus_m750d").dynamic_range == 97.0
    scene = load_scene("tank", device="cpu")
    pose = np.array([0.0, 0.0, -1.5, 0.0, 0.38268343, 0.0, 0.92387953])
    wide = ImagingSonar(cfg, device="cpu").render(scene, pose).to_uint8()[0]
    narrow = ImagingSonar(ImagingSonarConfig.preset("blueview_p900", dynamic_range=97.0),
                          device="cpu").render(scene, pose).to_uint8()[0]
    assert np.mean(narrow == 255) > 0.10 and np.mean(wide == 255) < 0.03
    assert np.mean(wide == 0) == pytest.approx(np.mean(narrow == 0), abs=0.005)
