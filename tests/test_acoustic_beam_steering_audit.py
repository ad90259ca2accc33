"""Beams across the fan (``beam_steering``, ``element_width``; docs/PHYSICS_ACOUSTIC_CHAIN.md §3) on presets and
fans that test_acoustic_beam_steering.py does not use, against numbers computed by hand: point targets at 20, 55
and 64 degrees on the Oculus M750d, off-nadir beams of the EM 2040, the SeaBat F50's multibeam device model; the
edge cases of wide beams, fans near 180 degrees and many beams."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from conftest import make_scene
from oceansim_py.scene import TriangleMesh
from oceansim_py.sensors.acoustic.beam_pattern import (LineArray, array_factor, bearing_kernel, bearing_kernels,
                                                       beam_equivalent_widths, channel_bearings, element_factor)
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig

#: No noise, reverberation, TVG, absorption or range spread: the clean image is the echoes through the bearing taps.
BARE = dict(multiplicative_sigma=0.0, noise_level=None, volume_scattering=None, bandwidth=0.0, tvg="none",
            absorption_model="fixed", absorption=0.0)
POSE = np.array([0, 0, 0, 0, 0, 0, 1.0])


def strip(theta: float, r: float, width: float, along: str = "z", length: float = 3.0) -> TriangleMesh:
    """A flat strip facing the sensor at bearing ``theta`` (rad, + starboard) and range ``r`` (m), ``width`` (rad)
    wide in bearing and ``length`` (m) long along the sensor axis ``along`` ("z": a forward-looking fan in the
    x-y plane, +y port; "x": a downward fan in the y-z plane, nadir -z)."""
    def point(a: float, t: float) -> list[float]:
        if along == "z":
            return [r * math.cos(a), -r * math.sin(a), t]
        return [t, -r * math.sin(a), -r * math.cos(a)]
    a0, a1, h = theta - width / 2, theta + width / 2, length / 2
    verts = np.array([point(a0, -h), point(a1, -h), point(a1, h), point(a0, h)])
    return TriangleMesh(verts, np.array([[0, 1, 2], [0, 2, 3]]))


def centre_deg(j: int, n: int, fov_deg: float) -> float:
    return (j + 0.5 - n / 2) * fov_deg / n


def hand_profile(j: int, n: int, fov_deg: float, beam_width_deg: float, psf_extent: float) -> np.ndarray:
    """The clean response across the channels j' to a point source on channel j's centre, relative to channel j,
    with omnidirectional elements: D((L / lambda)(sin theta_j - sin theta_j'))^2 while |sin theta_j - sin theta_j'|
    is within the broadside kernel's reach sin(ceil(psf_extent w / spacing) spacing), else 0."""
    array = LineArray(math.radians(beam_width_deg))
    step = fov_deg / n
    reach = math.sin(math.radians(math.ceil(psf_extent * beam_width_deg / step - 1e-9) * step))
    s = np.sin(np.radians(centre_deg(np.arange(n), n, fov_deg)))
    d = np.sin(math.radians(centre_deg(j, n, fov_deg))) - s
    return np.where(np.abs(d) <= reach + 1e-9, array_factor(array.aperture_wavelengths * d, array.weights) ** 2, 0.0)


def half_power_widths(profile: np.ndarray, j: int, step_deg: float) -> tuple[float, float]:
    """Half widths (deg, interpolated) towards the lower and the higher channels where the profile falls to half of
    its value at channel j (NaN where it does not inside the fan)."""
    p = profile / profile[j]

    def half(q: np.ndarray) -> float:
        if not (q < 0.5).any():
            return math.nan
        k = int(np.nonzero(q < 0.5)[0][0])
        return (k - 1 + (q[k - 1] - 0.5) / (q[k - 1] - q[k])) * step_deg

    return half(p[j::-1]), half(p[j:])


def response_rows(render, scene, configs: dict[str, object], key: str, j: int) -> dict[str, np.ndarray]:
    """The clean row through channel j's peak for each named config (the row chosen on the first config)."""
    images = {name: render(cfg).render(scene, POSE).numpy()[key][0].astype(np.float64) for name, cfg in configs.items()}
    first = next(iter(images.values()))
    row = int(np.argmax(first[:, j]))
    return {name: image[row] for name, image in images.items()}


@pytest.mark.parametrize("bearing", [19.932, 54.971, -64.111])
def test_oculus_m750d_point_targets_by_hand(bearing):
    # Oculus M750d at 750 kHz: 512 beams over 130 deg (0.25391 deg apart), 1 deg broadside beam, psf_extent 2.26
    # (9 taps, 2.285 deg). A strip 0.6 beams wide at 5 m on a beam centre. By hand, for theta = 54.971 deg
    # (beam 472): sin = 0.818859, sin(0.5 deg) = 0.008727; half-power bearings asin(0.810132) = 54.1088 and
    # asin(0.827585) = 55.8515 deg: half widths 0.8619 inward, 0.8808 outward (0.4995 for the lens); the elements
    # weight its peak by E^2 = sinc(0.5 x 0.818859)^2 = (sin(1.286265) / 1.286265)^2 = 0.556797. At -64.111 deg
    # (beam 3) the inward half width is 1.1226 deg and the outward half-power point falls off the 130 deg fan.
    n, fov = 512, 130.0
    j = int(round(bearing / (fov / n) + n / 2 - 0.5))
    theta = math.radians(centre_deg(j, n, fov))
    scene = make_scene(("strip", strip(theta, 5.0, 0.6 * math.radians(fov / n)), 0.5))
    configs = {name: ImagingSonarConfig.preset("oculus_m750d_750khz", **BARE, normalisation="none", additive_sigma=0.0,
                                               rays_per_beam=4, elevation_rays=16, **extra)
               for name, extra in (("flat", {}), ("omni", {"element_width": 0.0}),
                                   ("lens", {"beam_steering": "constant"}))}
    rows = response_rows(lambda c: ImagingSonar(c, device="cpu"), scene, configs, "clean_intensity", j)
    window = np.abs(np.arange(n) - j) <= 30
    want = hand_profile(j, n, fov, 1.0, 2.26)
    np.testing.assert_allclose((rows["omni"] / rows["omni"][j])[window], want[window], atol=1e-6)
    s, u = abs(math.sin(theta)), math.sin(math.radians(0.5))
    lower, upper = half_power_widths(rows["flat"], j, fov / n)
    inward, outward = (lower, upper) if theta > 0 else (upper, lower)
    assert inward == pytest.approx(math.degrees(abs(theta) - math.asin(s - u)), rel=0.01)
    if outward == outward:                             # the outward half-power point inside the fan
        assert outward == pytest.approx(math.degrees(math.asin(s + u) - abs(theta)), rel=0.01)
    assert half_power_widths(rows["lens"], j, fov / n)[0] == pytest.approx(0.4995, abs=2e-3)
    assert rows["flat"][j] / rows["omni"][j] == pytest.approx(np.sinc(0.5 * s) ** 2, rel=1e-5)
    if bearing == 54.971:
        assert (inward, outward) == pytest.approx((0.8619, 0.8808), rel=0.01)
    if bearing == -64.111:                             # the outward half-power point, -65.170 deg, is off the fan
        assert outward != outward and inward == pytest.approx(1.1226, rel=0.01)


def test_em2040_off_nadir_beams_by_hand():
    # EM 2040 at 600 kHz widened to a 140 deg swath of 350 beams (0.4 deg apart, 0.4 deg beams, 4 taps): strips at
    # 20 m on beams 224 (19.8 deg), 312 (55.0 deg) and 14 (-64.2 deg). The response across the beams is the hand
    # profile; the peak is E^2 = sinc(0.5 sin theta)^2: 0.909119, 0.556548, 0.487839.
    n, fov = 350, 140.0
    beams = (224, 312, 14)
    scene = make_scene(*[(f"s{j}", strip(math.radians(centre_deg(j, n, fov)), 20.0, 0.24 * math.pi / 180, "x", 4.0),
                          0.5) for j in beams])
    configs = {name: ProfilingSonarConfig.preset("em2040_600khz", **BARE, swath_width=fov, n_beams=n, **extra)
               for name, extra in (("flat", {}), ("omni", {"element_width": 0.0}))}
    for j, e2 in zip(beams, (0.909119, 0.556548, 0.487839)):
        rows = response_rows(lambda c: ProfilingSonar(c, device="cpu"), scene, configs, "clean_image", j)
        window = np.abs(np.arange(n) - j) <= 20
        np.testing.assert_allclose((rows["omni"] / rows["omni"][j])[window],
                                   hand_profile(j, n, fov, 0.4, configs["flat"].psf_extent)[window], atol=1e-6)
        assert rows["flat"][j] / rows["omni"][j] == pytest.approx(e2, rel=1e-5), j


def test_seabat_multibeam_off_broadside_by_hand():
    # SeaBat F50 device model: 256 beams over 140 deg (0.546875 deg apart), 1 deg beams. A strip on beam 10
    # (-64.258 deg) at 5 m: inward half width theta - asin(sin theta + sin 0.5 deg) = 1.1282 deg (1.1763 outward,
    # the half-power point at -65.434 deg inside the fan); peak E^2 = 0.487469; the whole profile by hand.
    n, fov, j = 256, 140.0, 10
    theta = math.radians(centre_deg(j, n, fov))
    scene = make_scene(("strip", strip(theta, 5.0, 0.6 * math.radians(fov / n)), 0.5))
    base = dict(noise_level=None, volume_scattering=None, tvg="none", absorption_model="fixed", absorption=0.0,
                elevation_directivity=False, jitter=False)
    configs = {name: MultibeamSonarConfig.preset("seabat_f50", **base, **extra)
               for name, extra in (("flat", {}), ("omni", {"element_width": 0.0}))}
    rows = response_rows(lambda c: MultibeamSonar(c, device="cpu"), scene, configs, "clean_intensity", j)
    window = np.arange(n) <= j + 20
    np.testing.assert_allclose((rows["omni"] / rows["omni"][j])[window],
                               hand_profile(j, n, fov, 1.0, configs["flat"].psf_extent)[window], atol=1e-6)
    outward, inward = half_power_widths(rows["flat"], j, fov / n)
    assert (inward, outward) == pytest.approx((1.1282, 1.1763), rel=0.01)
    assert rows["flat"][j] / rows["omni"][j] == pytest.approx(0.487469, rel=1e-5)


def test_no_tap_reaches_behind_the_aperture():
    # A 60 deg beam with the default psf_extent (6 widths: 360 deg) sampled every 1 deg: taps beyond 90 deg off the
    # beam axis (behind the aperture) are not kept. Before, sin(m step) folded the pattern back: the main lobe
    # again at +-180 and +-360 deg, so sum h^2 (the broadside volume reverberation) was 261.32 instead of 65.10,
    # +6.0 dB.
    array = LineArray(math.radians(60.0))
    taps = bearing_kernel(array, math.radians(1.0), 6.0 * math.radians(60.0)).astype(np.float64)
    assert taps.size == 181
    assert np.sum(taps ** 2) == pytest.approx(65.0966, rel=1e-5)


def test_lens_beam_sees_no_ghost_from_behind_its_aperture():
    # A lens (constant) of 60 deg beams across a 170 deg fan: a target at +79.5 deg is 159 deg off the axis of the
    # beam at -79.5 deg, behind its aperture. Before, the folded kernel D((L / lambda) sin 159 deg) put a ghost
    # there at -1.49 dB.
    scene = make_scene(("strip", strip(math.radians(79.5), 5.0, math.radians(0.6)), 0.5))
    cfg = ImagingSonarConfig(model="device", **BARE, normalisation="none", additive_sigma=0.0, source_level=200.0,
                             horizontal_fov=170.0, n_beams=170, beam_width=60.0, beam_steering="constant",
                             vertical_fov=2.0, rays_per_beam=4, elevation_rays=16, min_range=4.5, max_range=5.5,
                             range_bins=50)
    clean = ImagingSonar(cfg, device="cpu").render(scene, POSE).numpy()["clean_intensity"][0].astype(np.float64)
    row = clean[int(np.argmax(clean.max(axis=1)))]
    assert int(np.argmax(row)) == 164
    assert row[5] == 0.0                                   # -79.5 deg, 159 deg off
    assert row[80] > 0.0                                   # -0.5 deg, 80 deg off: in front of the aperture


def equivalent_width_by_quadrature(array: LineArray, theta: float, element_width: float, reach: float) -> float:
    """integral of D((L / lambda)(sin t - sin theta))^2 E(t)^2 dt over the kernel's reach (rad), by quadrature."""
    t = np.linspace(-math.pi / 2, math.pi / 2, 400_001)
    d = np.sin(t) - math.sin(theta)
    keep = np.abs(d) <= reach
    with np.errstate(invalid="ignore", divide="ignore"):
        x = array.aperture_wavelengths * d[keep]
        p = np.where(np.abs(x) < 1e-9, 1.0, np.sin(math.pi * x) / (65 * np.sin(math.pi * x / 65))) ** 2
    return float(np.sum(p * element_factor(t[keep], element_width) ** 2) * (t[1] - t[0]))


def test_volume_reverberation_near_endfire():
    # A flat array across a 179 deg fan (512 beams, 1 deg beams): the edge beam at 89.33 deg is steered to end-fire,
    # where its pattern in sin theta runs out at sin = 1. Its equivalent width relative to broadside, by quadrature
    # of D^2 E^2 over the kernel's reach, is 2.876 (half-wavelength elements) and 7.043 (omnidirectional); the
    # first-order E(theta)^2 / cos(theta) used before gave 34.42 and 84.91 (+10.8 dB of reverberation).
    n, fov = 512, 179.0
    array = LineArray(math.radians(1.0))
    step = math.radians(fov / n)
    extent = 2.26 * math.radians(1.0)
    reach = math.sin(math.ceil(extent / step - 1e-9) * step)
    broadside = equivalent_width_by_quadrature(array, 0.0, 0.0, reach)
    theta = channel_bearings(n, step)
    for width, want in ((0.5, 2.876), (0.0, 7.043)):
        got = beam_equivalent_widths(array, n, step, extent, "flat_array", width)
        hand = equivalent_width_by_quadrature(array, theta[-1], width, reach) / broadside
        assert hand == pytest.approx(want, rel=2e-3)
        assert got[-1] == pytest.approx(hand, rel=0.03)
        assert got[0] == pytest.approx(got[-1], rel=1e-6)
        # away from end-fire it is E^2 / cos to first order: within 0.03 dB out to 70 deg (0.19 dB at 75 deg, where
        # end-fire cuts the kernel's outward reach, sin theta + sin(2.285 deg) > 1)
        mid = np.abs(theta) < math.radians(70.0)
        first_order = element_factor(theta, width) ** 2 / np.cos(theta)
        assert np.all(np.abs(10 * np.log10(got[mid] / first_order[mid])) < 0.03)


def test_volume_reverberation_is_the_taps_equivalent_width():
    # Each beam gathers sum over its taps (not cut at the fan's edges: volume lies outside the fan too) of
    # h_j[m]^2 times the broadside beam's volume / sum h^2: the same weighting a uniform layer of scatterers gets
    # through the kernel. On the Oculus M750d's fan it is E^2 / cos within 0.012 dB; the lens's beams all 1.
    n, fov = 512, 130.0
    array = LineArray(math.radians(1.0))
    step, extent = math.radians(fov / n), 2.26 * math.radians(1.0)
    got = beam_equivalent_widths(array, n, step, extent, "flat_array", 0.5)
    theta = channel_bearings(n, step)
    j = 472
    m = np.arange(-30, 31)
    source = theta[j] + m * step
    d = np.sin(source) - np.sin(theta[j])
    reach = math.sin(9 * step)
    h = np.where(np.abs(d) <= reach + 1e-12, array_factor(array.aperture_wavelengths * d, array.weights)
                 * element_factor(source, 0.5), 0.0).astype(np.float32).astype(np.float64)
    broadside = bearing_kernel(array, step, extent).astype(np.float64)
    assert got[j] == pytest.approx(np.sum(h ** 2) / np.sum(broadside ** 2), rel=1e-6)
    first_order = element_factor(theta, 0.5) ** 2 / np.cos(theta)
    assert np.abs(10 * np.log10(got / first_order)).max() < 0.012
    assert np.array_equal(beam_equivalent_widths(array, n, step, extent, "constant", 0.5), np.ones(n))


def test_many_beams_kernels_bounded_memory():
    # 1024 beams over 170 deg with 4 deg beams out to 8 widths: row 0 (84.92 deg) reaches 344 taps inward, to
    # asin(sin 84.92 deg - sin 32.04 deg) = 27.72 deg; the pattern was evaluated for every tap of every row at once,
    # (1024, 689, 65) float64 = 367 MB per temporary (4096 beams: 11.7 GB resident). Now in row blocks.
    array = LineArray(math.radians(4.0))
    step = math.radians(170.0 / 1024)
    tracemalloc.start()
    try:
        taps = bearing_kernels(array, 1024, step, 8.0 * math.radians(4.0), "flat_array", 0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert taps.shape == (1024, 689)
    assert peak < 128 * 2 ** 20
    whole = array_factor(array.aperture_wavelengths * (np.sin(channel_bearings(1024, step)[0] + 5 * step)
                                                       - np.sin(channel_bearings(1024, step)[0])), array.weights)
    assert taps[0, 344 + 5] == pytest.approx(float(whole) * float(element_factor(channel_bearings(1024, step)[0]
                                                                                  + 5 * step, 0.5)), rel=1e-6)
