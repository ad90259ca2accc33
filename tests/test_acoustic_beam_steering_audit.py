"""Beams across the fan (``beam_steering``, ``element_width``; docs/PHYSICS_ACOUSTIC_CHAIN.md §3) on fans that
test_acoustic_beam_steering.py does not use, against numbers computed by hand: the edge cases of wide beams, fans
near 180 degrees and many beams; the volume reverberation of each beam."""

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
