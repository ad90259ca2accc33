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


def _sensors():
    from oceansim_py.sensors.imaging_sonar import ImagingSonar
    from oceansim_py.sensors.msis import Msis
    from oceansim_py.sensors.multibeam import MultibeamSonar
    from oceansim_py.sensors.profiling_sonar import ProfilingSonar
    from oceansim_py.sensors.sidescan import SidescanSonar
    from oceansim_py.sensors.singlebeam import SinglebeamSonar
    return {ImagingSonarConfig: (ImagingSonar, "clean_intensity"), SidescanSonarConfig: (SidescanSonar, "clean_intensity"),
            ProfilingSonarConfig: (ProfilingSonar, "clean_image"), SinglebeamSonarConfig: (SinglebeamSonar, "clean_intensity"),
            MsisConfig: (Msis, "clean_intensity"), MultibeamSonarConfig: (MultibeamSonar, "clean_intensity")}


LEVEL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


@pytest.fixture(scope="module")
def empty_water():
    """A 10 cm quad 900 m overhead: no fan reaches it."""
    from conftest import quad
    return make_scene(("far", quad([0.0, 0.0, 900.0], [0.0, 0.0, -1.0], 0.1), 0.5))


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_volume_reverberation_of_every_device_preset_follows_its_range_law(cls, empty_water):
    # RL_v = SL - 40 log r - 2 alpha r + S_v + 10 log10(r^2 Omega dr) (dr the bin, Omega the beam's): after a
    # 20 log r + 2 alpha r TVG every range row holds SL + S_v + 10 log10(Omega dr), the same at every range.
    sensor, key = _sensors()[cls]
    for name in device_presets(cls):
        cfg = cls.preset(name, noise_level=None, volume_scattering=-70.0, tvg="20log")
        out = sensor(cfg, device="cpu").render(empty_water, LEVEL).numpy()[key][0].astype(np.float64)
        rows = out.reshape(out.shape[0], -1).mean(axis=1)
        held = 10.0 * np.log10(rows[rows > 0])
        q = held.size // 10
        assert q > 3, name
        assert np.ptp(held[q:-q]) < 0.01, name


def _sample_key(cls) -> str:
    return "image" if cls is ProfilingSonarConfig else "intensity"


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_empty_water_of_every_device_preset_without_gain_is_its_noise_level(cls, empty_water):
    # A preset with tvg "none" and no reverberation: every sample is the receiver's complex Gaussian noise, so its
    # intensity is exponential with mean 10^(NL / 10) (3 %; poses batched to >= 20 000 samples: 0.7 % standard
    # error) and passes Kolmogorov-Smirnov at the 1 % level (critical value 1.63 / sqrt(n)).
    sensor, _ = _sensors()[cls]
    for name in device_presets(cls):
        cfg = cls.preset(name, tvg="none", volume_scattering=None)
        one = sensor(cfg, device="cpu").render(empty_water, LEVEL).numpy()[_sample_key(cls)].size
        batch = max(1, -(-20000 // one))
        poses = np.tile(LEVEL, (batch, 1))
        poses[:, 0] = np.arange(batch) * 0.37      # different poses: independent noise draws
        x = sensor(cfg, device="cpu").render(empty_water, poses).numpy()[_sample_key(cls)].astype(np.float64).ravel()
        x /= 10.0 ** (cfg.noise_level / 10.0)
        assert x.mean() == pytest.approx(1.0, rel=0.03), name
        x.sort()
        n = x.size
        cdf = 1.0 - np.exp(-x)
        d = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
        assert d < 1.63 / math.sqrt(n), name


@pytest.mark.parametrize("name", ["oculus_m750d", "gemini_720i"])
def test_point_target_through_a_preset_with_a_short_range_window(name):
    # A 1 cm plate facing the sonar at 5 m, centred in the first beam right of broadside; the preset with a 0.4 m
    # window of 400 bins (1 mm, under its resolution). Range -3 dB width c / (2B): 1500 / (2 * 187.5 kHz) = 4.0 mm
    # (M750d), 1500 / (2 * 93.75 kHz) = 8.0 mm (Gemini), 5 %; bearing -3 dB width the 1.0 deg beam (5 %, beams
    # 0.254 / 0.234 deg apart) and first side lobe -13.26 dB of a uniform aperture (0.5 dB: sampled at the beams).
    from conftest import quad
    base = ImagingSonarConfig.preset(name)
    step = base.horizontal_fov / base.n_beams
    y = -5.0 * math.tan(math.radians(0.5 * step))
    cfg = ImagingSonarConfig.preset(name, noise_level=None, volume_scattering=None, tvg="none", min_range=4.8,
                                    max_range=5.2, range_bins=400, rays_per_beam=4, elevation_rays=2048)
    plate = make_scene(("plate", quad([5.0, y, 0.0], [-1.0, 0.0, 0.0], 0.01), 0.5))
    img = ImagingSonar(cfg, device="cpu").render(plate, LEVEL).numpy()["clean_intensity"][0].astype(np.float64)
    r0, b0 = np.unravel_index(np.argmax(img), img.shape)
    assert b0 == cfg.n_beams // 2

    def width(profile, bin_size):
        p = profile / profile.max()
        c = int(np.argmax(p))

        def half(q):
            k = int(np.nonzero(q < 0.5)[0][0])
            return k - 1 + (q[k - 1] - 0.5) / (q[k - 1] - q[k])
        return (half(p[c::-1]) + half(p[c:])) * bin_size

    assert width(img[:, b0], cfg.range_resolution) == pytest.approx(cfg.sound_speed / (2 * cfg.bandwidth), rel=0.05)
    row = img[r0]
    assert width(row, step) == pytest.approx(cfg.beam_width, rel=0.05)
    p = 10.0 * np.log10(np.maximum(row / row.max(), 1e-30))
    for side in (p[b0:], p[b0::-1]):
        null = int(np.nonzero(np.diff(side) > 0)[0][0])
        assert side[null:].max() == pytest.approx(-13.26, abs=0.5)


def test_an_array_elevation_pattern_of_many_rays_is_built_in_bounded_memory():
    # The "array" elevation pattern D(e)^4 of a 65-element line array was evaluated as one (rays x 65) float64
    # matrix (1040 B per elevation ray, with the cosine's temporary): 109 MB to build an Oculus M750d preset with
    # 10^5 elevation rays (its memory estimate counts 80 B per elevation ray: 8 MB), 1.1 GB at 10^6, before any
    # memory check could refuse it. Evaluated in blocks of beam_pattern.PATTERN_BLOCK terms (32 MiB) it peaks near
    # two blocks, with the same values.
    import tracemalloc

    from oceansim_py.sensors.acoustic.beam_pattern import PATTERN_BLOCK, LineArray, array_factor

    array = LineArray(math.radians(20.0), "uniform", -30.0)
    e = np.linspace(-0.6, 0.6, 400_001)
    tracemalloc.start()
    d = array.amplitude(e)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # a block's phases and their cosines (2 x 32 MiB) and a few float64 arrays of e's size: 80 MB (419 MB before)
    assert peak < 2 * 8 * PATTERN_BLOCK + 4 * 8 * e.size
    pos = (np.arange(65) - 32) / 65.0
    sample = e[::4000]
    x = array.aperture_wavelengths * np.sin(sample)
    hand = np.cos(2.0 * np.pi * np.multiply.outer(x, pos)) @ array.weights / array.weights.sum()
    np.testing.assert_allclose(d[::4000], hand, rtol=0, atol=1e-12)
    assert array_factor(np.zeros(3), array.weights) == pytest.approx(np.ones(3))


def test_the_device_chains_per_ray_directions_are_counted_before_the_sensor_is_built(monkeypatch):
    # model "device" stores every ray's jittered sensor-frame direction (a vec3 of float32: 12 B per ray) when the
    # sensor is built. The construction check counted only the bearing and elevation tables (64 B per bearing
    # ray + 80 B per elevation ray), so an Oculus M750d preset with 10^6 elevation rays (1.024e9 rays) was built,
    # allocating 12.3 GB and running 66 s, before its render was refused. Counted, the construction is refused
    # first, with the size: 12 B x 1.024e9 = 12.29 GB of directions on top of the tables.
    import oceansim_py.runtime as runtime
    from oceansim_py.errors import ConfigError

    cfg = ImagingSonarConfig.preset("oculus_m750d", elevation_rays=10**6)
    peer = cfg.replace(model="peer")
    assert cfg.memory_bytes(0) - peer.memory_bytes(0) == 12 * 512 * 2 * 10**6
    monkeypatch.setattr(runtime, "available_memory_bytes", lambda device: 8 * 2**30)   # 8 GiB free
    with pytest.raises(ConfigError, match=r"ImagingSonar.*GiB"):
        ImagingSonar(cfg, device="cpu")
