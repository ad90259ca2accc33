"""Beams across the fan (``beam_steering``, docs/PHYSICS_ACOUSTIC_CHAIN.md §3): a steered flat array's beam widens
as 1 / cos(theta) off broadside, a lens's (or curved array's) keeps its width; against numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.errors import ConfigError
from oceansim_py.sensors.acoustic.beam_pattern import (LineArray, array_factor, beam_equivalent_widths, bearing_kernel,
                                                       bearing_kernels, channel_bearings, element_factor, half_power_x)
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from test_acoustic_multibeam import width

#: A bare imaging-sonar device chain: no range spread, noise, reverberation or TVG.
BARE = dict(model="device", multiplicative_sigma=0.0, additive_sigma=0.0, normalisation="none", source_level=200.0,
            noise_level=None, volume_scattering=None, bandwidth=0.0, tvg="none")

#: 800 beams over 100 deg (0.125 deg apart): beam j's centre is (j - 399.5) 0.125 deg; beams 400, 719 and 80 are
#: at +0.0625, +39.9375 and -39.9375 deg.
FAN = dict(horizontal_fov=100.0, n_beams=800, beam_width=1.0, psf_extent=4.0, vertical_fov=2.0, rays_per_beam=4,
           elevation_rays=64, min_range=4.5, max_range=5.5, range_bins=50)
BEAMS = (400, 719, 80)


def bearing_deg(j: int) -> float:
    return (j - 399.5) * 0.125


def steered_width_deg(theta_deg: float, beam_width_deg: float) -> float:
    """-3 dB full width of a flat array steered to theta whose broadside width is beam_width: the half-power
    points lie at sin(theta) +- sin(beam_width / 2) (the pattern is a function of sin(theta) - sin(theta_j))."""
    s, u = math.sin(math.radians(theta_deg)), math.sin(math.radians(beam_width_deg / 2))
    return math.degrees(math.asin(s + u) - math.asin(s - u))


def first_sidelobe_db(profile: np.ndarray, side: int) -> float:
    """Highest level (dB re the peak) beyond the first null on one side (+1 starboard, -1 port) of the peak."""
    p = profile / profile.max()
    c = int(np.argmax(p))
    half = 10.0 * np.log10(np.maximum(p[c::side], 1e-30))
    null = int(np.nonzero(np.diff(half) > 0)[0][0])
    return float(half[null:].max())


def plates_scene():
    """Three 6 mm plates at 5 m facing the sensor, on the centres of beams 400, 719 and 80 (+y is port)."""
    parts = []
    for k, j in enumerate(BEAMS):
        t = math.radians(bearing_deg(j))
        centre = [5.0 * math.cos(t), -5.0 * math.sin(t), 0.0]
        parts.append((f"plate{k}", quad(centre, [-math.cos(t), math.sin(t), 0.0], 0.006), 0.5))
    return make_scene(*parts)


@pytest.fixture(scope="module")
def rows():
    """Row through the plates of the clean image, for each beam_steering (and the flat array with omnidirectional
    elements)."""
    scene = plates_scene()
    out = {}
    for steering, width in (("flat_array", 0.5), ("constant", 0.5), ("omni", 0.0)):
        cfg = ImagingSonarConfig(**BARE, **FAN, beam_steering="constant" if steering == "constant" else "flat_array",
                                 element_width=width)
        img = ImagingSonar(cfg, device="cpu").render(scene, np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
        clean = img["clean_intensity"][0].astype(np.float64)
        out[steering] = clean[int(np.argmax(clean.max(axis=1)))]
    return out


def test_by_hand_widths():
    # theta = 39.9375 deg: sin = 0.641952, sin(0.5 deg) = 0.0087265: asin(0.650678) - asin(0.633225) = 40.5928 -
    # 39.2885 = 1.3043 deg (1 / cos(theta) = 1.3042: the first-order widening).
    assert steered_width_deg(39.9375, 1.0) == pytest.approx(1.3043, abs=2e-4)
    assert steered_width_deg(0.0, 1.0) == pytest.approx(1.0, abs=1e-9)


def test_flat_array_beams_widen_off_broadside_and_a_lens_keeps_its_width(rows):
    # The point target's response across the beams (sampled 0.125 deg apart) is the beam pattern of the beam whose
    # centre it sits on: -3 dB width 1.0 deg at broadside for both; 1.30 deg at +-39.94 deg for the flat array,
    # 1.0 deg for the lens. Each plate's window is +-60 beams around it (the others are 40 deg away).
    for steering, row in rows.items():
        if steering == "omni":
            continue
        for j in BEAMS:
            window = row[j - 60: j + 61]
            assert int(np.argmax(window)) == 60, (steering, j)
            want = steered_width_deg(bearing_deg(j), 1.0) if steering == "flat_array" else 1.0
            assert width(window) * 0.125 == pytest.approx(want, rel=0.03), (steering, j)
    flat, lens = rows["flat_array"], rows["constant"]
    assert width(flat[719 - 60: 780]) / width(lens[719 - 60: 780]) == pytest.approx(1.3043, rel=0.03)
    # near broadside the two are nearly the same pattern (beam 400 is steered 0.0625 deg: its lobes differ by < 0.2 %)
    np.testing.assert_allclose(flat[380:421], lens[380:421], rtol=2e-3, atol=1e-3 * lens.max())


def test_elements_weight_a_point_target_by_its_bearing(rows):
    # The elements' one-way directivity E = sinc(0.5 sin theta) (half-wavelength elements): at 39.9375 deg,
    # sinc(0.320976) = sin(1.008374) / 1.008374 = 0.838940, so the plate reads E^2 = 0.703821 (-1.525 dB) of its
    # level with omnidirectional elements; at 0.0625 deg, 1 - 1e-6. The lens (constant) has no element weighting.
    flat, omni, lens = rows["flat_array"], rows["omni"], rows["constant"]
    for j, want in ((719, 0.703821), (80, 0.703821), (400, 1.0)):
        assert flat[j] / omni[j] == pytest.approx(want, rel=1e-4), j
        assert omni[j] / lens[j] == pytest.approx(1.0, rel=2e-3), j


def test_steered_beam_keeps_its_side_lobe_level(rows):
    # Steering stretches the pattern in theta, not its levels: the uniform aperture's first side lobe stays at
    # -13.26 dB on both sides of the target at +39.94 deg (the lobes themselves sit at sin(theta) +- 1.43 / (L /
    # lambda): further out on the far side).
    window = rows["flat_array"][719 - 60: 780]
    for side in (1, -1):
        assert first_sidelobe_db(window, side) == pytest.approx(-13.26, abs=0.5)


def test_flat_array_kernels_by_hand():
    # A 1 deg uniform array over a 100 deg fan of 800 beams: row j of the taps is D((L / lambda)(sin(theta_j + m
    # step) - sin(theta_j))); row 719 at m = +4 (0.5 deg off): computed here from the definition.
    array = LineArray(math.radians(1.0))
    step = math.radians(0.125)
    taps = bearing_kernels(array, 800, step, math.radians(4.0))   # omnidirectional elements
    half = (taps.shape[1] - 1) // 2
    theta = math.radians(bearing_deg(719))
    x = half_power_x(array.weights) / math.sin(math.radians(0.5)) * (math.sin(theta + 4 * step) - math.sin(theta))
    assert taps[719, half + 4] == pytest.approx(float(array_factor(np.array([x]), array.weights)[0]), rel=1e-6)
    assert channel_bearings(800, step)[719] == pytest.approx(theta, rel=1e-12)
    # every row peaks at 1 on its own beam; a lens's rows are the broadside kernel
    assert np.all(taps[:, half] == 1.0)
    lens = bearing_kernels(array, 800, step, math.radians(4.0), "constant")
    assert np.array_equal(lens, np.tile(bearing_kernel(array, step, math.radians(4.0)), (800, 1)))
    # a beam's kernel reaches as far in sin(theta) as the broadside kernel's 32 taps (4 deg): beam 80 at -39.9375
    # deg inward to sin(theta) + sin(4 deg) = -0.641952 + 0.069756 = -0.572196, theta = -34.904 deg, 40.27 beams
    # (m = +40), outward to -0.711708, theta = -45.374 deg, 43.48 beams (m = -43), against 32 at broadside
    nonzero = np.nonzero(taps[80])[0] - half
    assert nonzero.max() == 40 and nonzero.min() == -43
    with pytest.raises(ConfigError, match="beam_steering"):
        bearing_kernels(array, 800, step, math.radians(4.0), "phased")
    # half-wavelength elements weight each tap by its source's E(theta_(j + m)) = sinc(0.5 sin theta_(j + m))
    weighted = bearing_kernels(array, 800, step, math.radians(4.0), "flat_array", 0.5)
    source = channel_bearings(800, step)[719] + (np.arange(taps.shape[1]) - half) * step
    np.testing.assert_allclose(weighted[719], taps[719] * element_factor(source, 0.5), rtol=2e-6, atol=1e-9)
    assert element_factor(np.radians(39.9375), 0.5) == pytest.approx(0.838940, rel=1e-6)


def test_volume_reverberation_of_a_steered_beam(rows):
    # Volume reverberation only (no geometry in view, no noise): a steered flat array's beam j gathers
    # sum_m h_j[m]^2 / sum_m h[m]^2 times the broadside beam's volume (beam_equivalent_widths: its taps, not cut at
    # the fan's edges, against the broadside kernel's), which is 1 / cos(theta_j) times as much weighted by its
    # elements' E(theta_j)^2 to first order (beam 0, at -49.9375 deg: sinc(0.382671)^2 / cos(49.9375 deg) =
    # 0.602083 / 0.643623 = 0.935459 against 0.934807 from the taps; beam 400 at 0.0625 deg: 0.9999996 against
    # 0.998967, the sampled kernel); a lens's beams all gather the same.
    far = make_scene(("far", quad([-50.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1), 0.5))
    base = dict(BARE, volume_scattering=-70.0, **{**FAN, "elevation_rays": 4, "rays_per_beam": 1})
    theta = np.radians([bearing_deg(j) for j in range(800)])
    array = LineArray(math.radians(1.0))
    for steering, width in (("flat_array", 0.5), ("flat_array", 0.0), ("constant", 0.5)):
        cfg = ImagingSonarConfig(**base, beam_steering=steering, element_width=width)
        clean = ImagingSonar(cfg, device="cpu").render(far, np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
        row = clean["clean_intensity"][0][10].astype(np.float64)
        want = beam_equivalent_widths(array, 800, math.radians(0.125), math.radians(4.0), steering, width)
        np.testing.assert_allclose(row / row[400] * want[400], want, rtol=1e-5)
        first_order = (np.sinc(width * np.sin(theta)) ** 2 / np.cos(theta) if steering == "flat_array"
                       else np.ones(800))
        np.testing.assert_allclose(want, first_order, rtol=2e-3)
        if steering == "flat_array" and width == 0.5:
            assert (want[0], want[400]) == pytest.approx((0.934807, 0.998967), rel=1e-5)
            assert row[0] / row[400] == pytest.approx(0.934807 / 0.998967, rel=1e-5)


def test_multibeam_device_model_steers_its_beams_too():
    # The multibeam's device model with the same fan: a 6 mm plate on beam 719 (+39.94 deg) at 5 m; the row across
    # beams is the steered pattern, -3 dB width 1.30 deg (flat array) or 1.0 deg (constant).
    t = math.radians(bearing_deg(719))
    scene = make_scene(("plate", quad([5.0 * math.cos(t), -5.0 * math.sin(t), 0.0], [-math.cos(t), math.sin(t), 0.0],
                                      0.006), 0.5))
    for steering, want in (("flat_array", 1.3043), ("constant", 1.0)):
        cfg = MultibeamSonarConfig(model="device", source_level=200.0, noise_level=None, volume_scattering=None,
                                   tvg="none", absorption_model="fixed", absorption=0.0, elevation_directivity=False,
                                   psf_extent=4.0, fov=100.0, n_beams=800, beam_width=1.0, elevation_fov=2.0,
                                   rays_per_beam=64, jitter=False, min_range=4.5, max_range=5.5, bandwidth=20000.0,
                                   beam_steering=steering)
        img = MultibeamSonar(cfg, device="cpu").render(scene, np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
        clean = img["clean_intensity"][0].astype(np.float64)
        row = clean[int(np.argmax(clean.max(axis=1)))]
        assert int(np.argmax(row)) == 719
        assert width(row[659:780]) * 0.125 == pytest.approx(want, rel=0.03), steering


def test_unknown_beam_steering_and_bad_element_width_name_the_field():
    with pytest.raises(ConfigError, match="beam_steering"):
        ImagingSonarConfig(**BARE, **FAN, beam_steering="phased")
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ConfigError, match="element_width"):
            ImagingSonarConfig(**BARE, **FAN, element_width=bad)
    with pytest.raises(ConfigError, match="beam_steering"):
        MultibeamSonarConfig(model="device", fov=100.0, n_beams=800, beam_steering="lens")
