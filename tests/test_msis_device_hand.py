"""MSIS device presets (Ping360, Tritech Micron, SeaKing) on a scene built here, against numbers computed by hand: a
wall at a known range in its bin, the 8-bit polar and Cartesian images' black fraction, and the water column's
statistics (docs/PHYSICS_ACOUSTIC_CHAIN.md §1, §4-5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.sensors.msis import Msis, MsisConfig

STILL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


@pytest.fixture(scope="module")
def room():
    """A wall 8 m ahead (+x) and one 5 m to starboard (-y), both 40 m squares; port and astern open water."""
    return make_scene(("front", quad([8.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5),
                      ("starboard", quad([0.0, -5.0, 0.0], [0.0, 1.0, 0.0], 40.0), 0.5))


@pytest.mark.parametrize("name", ["ping360", "tritech_micron", "seaking"])
def test_msis_device_walls_land_in_their_bins_and_the_image_is_not_black(room, name):
    # Head 0 looks along +x (the wall at 8 m), head 90 deg to starboard (the wall at 5 m). The nearest ray meets
    # each wall at its perpendicular distance d: the first bin holding a hit is the one at (d - min_range) / dr
    # (its centre within a bin: the jittered rays miss the perpendicular by a fraction of the beam, and the
    # Micron's 5 m falls 0.01 bin under a bin edge); the echo's peak bin centre lies within half the range
    # resolution c / 2B (+ a bin) behind d (the vertical fan's rays reach
    # the wall at d / cos(e): measured 2 bins = 3.2 cm late for the Ping360's 8 cm pulse, 0-1 bin for the others).
    c = MsisConfig.preset(name)
    res = Msis(c, device="cpu").render_sweep(room, STILL)
    d, sweep = res.numpy(), res.sweep()
    dr = (c.max_range - c.min_range) / c.range_bins
    heads = np.degrees(d["head_angle"])
    for head, wall in ((0.0, 8.0), (90.0, 5.0)):
        k = int(np.argmin(np.abs((heads - head + 180.0) % 360.0 - 180.0)))
        assert heads[k] == pytest.approx(head, abs=1e-6)
        hits = d["hit_count"][k].ravel()
        assert abs(int(np.argmax(hits > 0)) + 0.5 - (wall - c.min_range) / dr) <= 1.0
        peak = float(sweep.ranges[int(np.argmax(d["clean_intensity"][k].ravel()))])
        assert -0.5 * dr <= peak - wall <= 0.5 * c.sound_speed / (2.0 * c.bandwidth) + dr
    # the display window [NL + 3, NL + 100] dB: no noise or reverberation sample is exactly black (a sample of mean
    # NL + 30 dB or more falls 27 dB under its mean with probability 0.2 %); measured 0-0.04 %.
    assert (sweep.to_uint8() == 0).mean() < 0.002
    cart = sweep.cartesian(256)[0]
    assert (sweep.to_uint8(cart)[np.isfinite(cart)] == 0).mean() < 0.002


@pytest.mark.parametrize("name", ["ping360", "seaking"])
def test_msis_device_open_water_is_volume_reverberation_rising_10_log_r(room, name):
    # Heads 200-250 deg look astern to port: open water. There the samples are the volume reverberation (S_v = -80 dB,
    # RL_v = SL - 40 log r - 2 alpha r + S_v + 10 log(r^2 Omega dr)), which after the 30 log r + 2 alpha r TVG rises
    # as +10 log r, 19-25 dB over the post-TVG noise (NL + 30 dB) at these presets' source levels and pulses: the
    # band 5-8 m (mean range 6.5 m) 10 log(6.5 / 1.5) = 6.37 dB over the band 1-2 m; fully developed (scintillation
    # index 1).
    c = MsisConfig.preset(name)
    sweep = Msis(c, device="cpu").render_sweep(room, STILL).sweep()
    heads = np.degrees(sweep.head_angle) % 360.0
    water = sweep.polar[(heads > 200.0) & (heads < 250.0)].astype(np.float64)
    r = sweep.ranges
    near, far = water[:, (r >= 1.0) & (r < 2.0)], water[:, (r >= 5.0) & (r < 8.0)]
    assert 10.0 * math.log10(far.mean() / near.mean()) == pytest.approx(10.0 * math.log10(6.5 / 1.5), abs=0.5)
    assert 10.0 * math.log10(near.mean()) > c.post_tvg_noise_level + 15.0
    for band in (near, far):
        assert band.var() / band.mean() ** 2 == pytest.approx(1.0, abs=0.15)
