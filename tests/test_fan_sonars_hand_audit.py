"""Side-scan, profiling, single-beam and MSIS on scenes the other tests do not use, against hand numbers.

Frames: world z up; sensor FLU (x forward, y port, z up). ``pose_from_euler(x, y, z, roll, pitch, yaw)``: a yaw of
+90 deg points the nose along world +y, so the vehicle's port side is world -x and its starboard world +x; a pitch
of +90 deg points the nose down; a roll of +90 deg turns the sensor's +y (port) to world +z (starboard down).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py import (ConfigError, ProfilingSonar, ProfilingSonarConfig, SidescanSonar, SidescanSonarConfig,
                         SinglebeamSonar, SinglebeamSonarConfig)
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import TriangleMesh
from oceansim_py.sensors.msis import Msis, MsisConfig
from oceansim_py.trajectory import Trajectory


def plate(x0: float, x1: float, y0: float, y1: float, z: float) -> TriangleMesh:
    """A horizontal rectangle at height z (m), facing up."""
    v = np.array([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]], dtype=float)
    return TriangleMesh(v, [[0, 1, 2], [0, 2, 3]])


def plane(slope_x: float = 0.0, slope_y: float = 0.0, half: float = 200.0) -> TriangleMesh:
    """The plane z = slope_x x + slope_y y over |x|, |y| <= half."""
    xy = np.array([[-half, -half], [half, -half], [half, half], [-half, half]], dtype=float)
    return TriangleMesh(np.column_stack([xy, xy @ [slope_x, slope_y]]), [[0, 1, 2], [0, 2, 3]])


# -- side-scan ---------------------------------------------------------------------------------------------------

def sidescan(**kw) -> SidescanSonar:
    """HoloOcean's fan (depressions 5-90 deg each side), 0.1 m bins over 0.5-20.5 m, noise off."""
    base = dict(along_track_beamwidth=0.25, vertical_beamwidth=85.0, depression=47.5, min_range=0.5, max_range=20.5,
                range_bins=200, along_track_rays=1, across_track_rays=1024)
    base.update(kw)
    return SidescanSonar(SidescanSonarConfig(**base), device="cpu")


def test_sidescan_port_is_the_vehicles_left_when_heading_along_world_y():
    # Heading +y at 4 m over the floor: a bright strip at world x = -7 +- 0.2 lies 7 m to port (left). Slant range
    # sqrt(4^2 + 6.8^2) = 7.89 .. sqrt(4^2 + 7.2^2) = 8.24 m: bins floor((7.89 - 0.5) / 0.1) = 73 .. 77 of the port
    # column only; after the flat-bottom correction (altitude = nadir echo 4 m) ground bins 6.8-7.2 m (+- a bin).
    s = make_scene(("floor", plate(-100, 100, -100, 100, 0.0), 0.05), ("strip", plate(-7.2, -6.8, -20, 20, 0.01), 1.0))
    out = sidescan().render(s, pose_from_euler(0.0, 0.0, 4.0, 0.0, 0.0, 90.0)).numpy()
    assert out["altitude"][0] == pytest.approx(4.0, abs=1e-4)
    port, star = out["clean_intensity"][0, :, 0], out["clean_intensity"][0, :, 1]
    bright = np.flatnonzero(port > 3.0 * star)
    assert bright.tolist() == [73, 74, 75, 76, 77]
    assert np.all(star[70:80] <= 3.0 * port[70:80])          # nothing stands out to starboard
    g = out["ground_ranges"]
    gp, gs = out["ground_intensity"][0, :, 0], out["ground_intensity"][0, :, 1]
    gb = g[gp > 3.0 * gs]
    assert gb.min() >= 6.8 - 0.1 and gb.max() <= 7.2 + 0.1 and gb.size >= 3


def test_sidescan_waterfall_rows_follow_the_trajectory():
    # 11 pings 1 m apart along +x at 4 m height; a 0.8 m target (x 4.6-5.4) 6 m to starboard. The 0.25 deg
    # along-track beam is 7.2 m x 0.0044 = 3 cm wide there, so only ping 5 (x = 5) sees it, at slant
    # sqrt(4^2 + 6^2) = 7.21 m, bin 67: waterfall column 200 + 67 (starboard half, nadir in the middle).
    s = make_scene(("floor", plate(-100, 100, -100, 100, 0.0), 0.05), ("box", plate(4.6, 5.4, -6.2, -5.8, 0.01), 1.0))
    traj = Trajectory.from_arrays(np.arange(11.0), [pose_from_euler(float(k), 0, 4.0, 0, 0, 0) for k in range(11)])
    wf = sidescan(along_track_rays=2).render(s, traj).numpy()["waterfall"]
    assert wf.shape == (11, 400)
    lit = [k for k in range(11) if wf[k, 266:269].max() > 3.0 * wf[0, 267]]
    assert lit == [5]


# -- profiling ---------------------------------------------------------------------------------------------------

def profiling(**kw) -> ProfilingSonarConfig:
    """9 one-ray beams of 10 deg over a 90 deg swath: beam j at theta_j = -40 + 10 j deg (+ starboard)."""
    base = dict(swath_width=90.0, along_track_beamwidth=1.0, n_beams=9, across_rays_per_beam=1, along_track_rays=1,
                min_range=0.5, max_range=40.5, range_bins=400)
    base.update(kw)
    return ProfilingSonarConfig(**base)


def test_profiling_soundings_in_sensor_and_world_frames_when_heading_along_world_y():
    # Level at (3, -2, 10) heading +y over the floor z = 0: beam theta hits at r = 10 / cos theta, sensor point
    # r (0, -sin theta, -cos theta) = (0, -10 tan theta, -10); starboard is world +x, so the world point is
    # (3 + 10 tan theta, -2, 0): beam 0 (-40 deg, most port) at x = 3 - 8.391 = -5.391.
    cfg = profiling()
    th = cfg.beam_angles().astype(np.float64)
    assert np.degrees(th) == pytest.approx(np.arange(-40.0, 41.0, 10.0), abs=1e-5)
    out = ProfilingSonar(cfg, device="cpu").render(make_scene(("floor", plane(), 0.5)),
                                                   pose_from_euler(3.0, -2.0, 10.0, 0, 0, 90.0)).numpy()
    np.testing.assert_allclose(out["bottom_range"][0], 10.0 / np.cos(th), rtol=1e-6)
    want_sensor = np.column_stack([np.zeros(9), -10.0 * np.tan(th), np.full(9, -10.0)])
    np.testing.assert_allclose(out["point_sensor"][0], want_sensor, atol=2e-5)
    want_world = np.column_stack([3.0 + 10.0 * np.tan(th), np.full(9, -2.0), np.zeros(9)])
    np.testing.assert_allclose(out["point_world"][0], want_world, atol=2e-5)
    assert out["point_world"][0, 0, 0] == pytest.approx(-5.391, abs=1e-3)


def test_profiling_range_and_intensity_on_a_floor_sloping_up_to_port():
    # Floor z = 0.2 y (rising to port), sonar level at (0, 0, 10) heading +x. The ray (0, -sin t, -cos t) meets it
    # where 10 - r cos t = -0.2 r sin t: r = 10 / (cos t - 0.2 sin t); the sounding satisfies z = 0.2 y. Beam
    # intensity (one ray): mu cos psi w, cos psi = (cos t - 0.2 sin t) / sqrt(1.04) (normal (0, -0.2, 1) / |.|),
    # w = radians(1) * radians(10) sr; with spreading and 0.1 dB/m absorption times (1 / r)^2 10^(-0.02 r).
    cfg = profiling(absorption=0.1, spreading=True)
    th = cfg.beam_angles().astype(np.float64)
    out = ProfilingSonar(cfg, device="cpu").render(make_scene(("floor", plane(0.0, 0.2), 0.5)),
                                                   pose_from_euler(0, 0, 10.0, 0, 0, 0)).numpy()
    r = 10.0 / (np.cos(th) - 0.2 * np.sin(th))
    np.testing.assert_allclose(out["bottom_range"][0], r, rtol=2e-6)
    pw = out["point_world"][0]
    np.testing.assert_allclose(pw[:, 2], 0.2 * pw[:, 1], atol=1e-5)
    cos_psi = (np.cos(th) - 0.2 * np.sin(th)) / math.sqrt(1.04)
    want = 0.5 * cos_psi * math.radians(1.0) * math.radians(10.0) / r ** 2 * 10.0 ** (-0.02 * r)
    np.testing.assert_allclose(out["intensity"][0], want, rtol=1e-4)


def test_profiling_range_and_angle_noise_have_their_sigmas():
    # 20 pings x 200 beams over a flat floor 10 m below: detected range - 10 / cos theta ~ N(0, 0.05 m); the
    # sounding's angle atan2(-y, -z) - theta ~ N(0, 0.5 deg), independent. 4000 draws: the std of a sample std is
    # sigma / sqrt(2 N) = 1.1 %, its mean's sigma / sqrt(N) = 1.6 % of sigma.
    cfg = profiling(n_beams=200, range_noise=0.05, angle_noise=0.5, seed=7)
    poses = np.stack([pose_from_euler(0.5 * k, 0, 10.0, 0, 0, 0) for k in range(20)])
    out = ProfilingSonar(cfg, device="cpu").render(make_scene(("floor", plane(), 0.5)), poses).numpy()
    th = cfg.beam_angles().astype(np.float64)
    dr = out["bottom_range"] - 10.0 / np.cos(th)
    ps = out["point_sensor"].astype(np.float64)
    da = np.degrees(np.arctan2(-ps[..., 1], -ps[..., 2]) - th)
    assert dr.std() == pytest.approx(0.05, rel=0.05) and abs(dr.mean()) < 0.05 * 0.08
    assert da.std() == pytest.approx(0.5, rel=0.05) and abs(da.mean()) < 0.5 * 0.08
    assert abs(np.corrcoef(dr.ravel(), da.ravel())[0, 1]) < 0.06
    # the range noise moves the sounding along its beam: |point_sensor| is the noisy range
    np.testing.assert_allclose(np.linalg.norm(ps, axis=2), out["bottom_range"], rtol=1e-5)


# -- single-beam -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("slope_deg, opening", [(10.0, 30.0), (10.0, 10.0), (25.0, 30.0)])
def test_singlebeam_first_return_on_a_slope_depends_on_the_beam_width(slope_deg, opening):
    # Pitched 90 deg down 10 m over the plane z = tan(b) x: the perpendicular distance is 10 cos b. If the cone's
    # outermost ring (polar angle t_max = (rings - 1/2) / rings * A / 2) reaches the normal (b <= t_max) the first
    # return is 10 cos b; otherwise the ring's ray nearest the normal, 10 cos b / cos(b - t_max) (its azimuth
    # cells of 360 / 256 deg are close enough: cos of half a cell off is 1 - 1e-7).
    rings = 32
    cfg = SinglebeamSonarConfig(opening_angle=opening, cone_rings=rings, rays_per_ring=256, min_range=0.5,
                                max_range=20.0, range_bins=390)
    b = math.radians(slope_deg)
    out = SinglebeamSonar(cfg, device="cpu").render(make_scene(("floor", plane(math.tan(b)), 0.5)),
                                                    pose_from_euler(0, 0, 10.0, 0, 90.0, 0)).numpy()
    t_max = (rings - 0.5) / rings * math.radians(opening) / 2
    want = 10.0 * math.cos(b) if b <= t_max else 10.0 * math.cos(b) / math.cos(b - t_max)
    assert out["first_return_range"][0] == pytest.approx(want, abs=2e-3)
    first_bin = int(np.flatnonzero(out["hit_count"][0])[0])
    assert first_bin == int((want - 0.5) / cfg.range_resolution)


def test_singlebeam_device_echo_peaks_at_the_altitude_over_a_flat_floor():
    # Looking straight down from h: ring t returns at h / cos t with energy mu cos t dOmega, dOmega ~ sin t dt,
    # spread over dr = h sin t / cos^2 t dt: per metre of range ~ cos^3 t / h, largest at nadir, so the echo peaks
    # at r = h, within a bin (2 cm) plus the range resolution c / 2B = 1500 / 75000 = 2 cm of the PA500 preset
    # (the device chain spreads each ray over its footprint's ranges; the peer model bins each ray at one range,
    # so with 16 rings its peak wanders up to ~0.3 m past h as the rings alias against the bins).
    cfg = SinglebeamSonarConfig.preset("tritech_pa500")
    heights = np.array([2.0, 3.37, 5.05, 7.3, 8.91])
    out = SinglebeamSonar(cfg, device="cpu").render(make_scene(("floor", plane(), 0.5)),
                                                    [pose_from_euler(0, 0, h, 0, 90.0, 0) for h in heights]).numpy()
    peak = out["ranges"][out["clean_intensity"].argmax(axis=1)]
    assert np.abs(peak - heights).max() <= cfg.range_resolution + 0.02
    # first return: the nearest ray of the jittered cone, at most 1 / cos(3 deg) - 1 = 0.14 % past h
    fr = out["first_return_range"]
    assert np.all(fr >= heights - 1e-4) and np.all(fr <= heights / math.cos(math.radians(3.0)) + 1e-4)


# -- MSIS --------------------------------------------------------------------------------------------------------

def msis(**kw) -> Msis:
    base = dict(horizontal_beamwidth=2.0, vertical_beamwidth=10.0, horizontal_rays=3, vertical_rays=4, step_angle=9.0,
                min_range=0.5, max_range=10.5, range_bins=400, bandwidth=30000.0, jitter=False)
    base.update(kw)
    return Msis(MsisConfig(**base), device="cpu")


def first_bins(out: dict) -> dict[int, int]:
    """{head angle (whole degrees): first range bin with a hit} of the steps that hit anything."""
    return {int(round(float(np.degrees(a)))): int(np.flatnonzero(h)[0])
            for a, h in zip(out["head_angle"], out["hit_count"]) if h.any()}


def test_msis_head_angle_turns_to_starboard_of_a_yawed_vehicle():
    # Heading world +y: starboard (head +90 deg) is world +x, where a 4 m wall stands 3 m away (x = 3, |y| <= 2).
    # A step at head angle h has rays at horizontal offsets a in {-2/3, 0, 2/3} deg and elevations e in
    # {+-1.25, +-3.75} deg; they meet the wall at 3 / (cos e cos(h + a - 90)); the first bin is that of the nearest
    # ray: h = 90: 3 / cos(1.25) = 3.0007 -> bin floor(2.5007 / 0.025) = 100; h = 72: 3 / (cos 1.25 cos 17.33)
    # = 3.1437 -> 105; h = 63: 3 / (cos 1.25 cos 26.33) = 3.3485 -> 113. The wall spans +-atan(2 / 3) = 33.7 deg
    # about 90 (rays reach 33.7 + 1 deg): steps 63 .. 117 only, nothing to port.
    out = msis().render_sweep(make_scene(("wall", quad([3.0, 0.0, 0.0], [-1, 0, 0], 4.0), 0.5)),
                              pose_from_euler(0, 0, 0, 0, 0, 90.0)).numpy()
    bins = first_bins(out)
    assert sorted(bins) == [63, 72, 81, 90, 99, 108, 117]
    assert bins[90] == 100 and bins[72] == bins[108] == 105 and bins[63] == bins[117] == 113


def test_msis_head_axis_follows_a_rolled_vehicle():
    # Rolled +90 deg (starboard down) 3 m over a floor: the head turns about the sensor's z, now world -y, and its
    # starboard (+90) points straight down. A ray at (h + a, e) has world z component -cos e sin(h + a), so it
    # meets the floor at 3 / (cos e sin(h + a)), nearest for a = +2/3 (h < 90), e = +-1.25 deg: h = 90:
    # 3 / cos 1.25 = 3.0007 -> bin 100; h = 81: 3 / (cos 1.25 sin 81.67) = 3.0327 -> bin 101; h = 18:
    # 3 / (cos 1.25 sin 18.67) = 9.376 -> bin 355; h = 9: 17.9 m, past max_range. Head angles from 180 to 360 look
    # up: no hit.
    out = msis().render_sweep(make_scene(("floor", quad([0.0, 0.0, -3.0], [0, 0, 1], 40.0), 0.5)),
                              pose_from_euler(0, 0, 0, 90.0, 0, 0)).numpy()
    bins = first_bins(out)
    assert min(bins) == 18 and max(bins) == 162
    assert bins[90] == 100 and bins[81] == bins[99] == 101 and bins[18] == bins[162] == 355


def test_msis_bad_render_inputs_raise_config_errors_naming_the_field():
    m = msis()
    s = make_scene(("wall", quad([3.0, 0.0, 0.0], [-1, 0, 0], 4.0), 0.5))
    still = np.array([[0, 0, 0, 0, 0, 0, 1.0]] * 2)
    with pytest.raises(ConfigError, match=r"times"):
        m.render(s, still, 0, times=[0.0, 0.1, 0.2])              # three times for two poses
    with pytest.raises(ConfigError, match=r"times"):
        m.render(s, still, 0, times=[0.0, float("nan")])
    with pytest.raises(ConfigError, match=r"render_sweep\.sweep"):
        m.render_sweep(s, still[0], sweep=-1)
    with pytest.raises(ConfigError, match=r"start_time"):
        m.render_sweep(s, still[0], start_time=float("inf"))
    sweep = m.render(s, still, 0, times=[0.0, 0.1]).sweep()
    with pytest.raises(ConfigError, match=r"width"):
        sweep.cartesian(100.5)


@pytest.mark.parametrize("config_class, preset", [(SidescanSonarConfig, "edgetech_4125_900khz"),
                                                  (ProfilingSonarConfig, "em2040_600khz"),
                                                  (SinglebeamSonarConfig, "tritech_pa500")])
def test_device_model_refuses_the_peers_spreading_switch(config_class, preset):
    # The device chain's sonar equation always has its two-way spreading; spreading: true (the peers' (1 m / r)^2)
    # used to be accepted and silently ignored, as the peers' speckle sigmas are refused.
    with pytest.raises(ConfigError, match=r"\.spreading"):
        config_class.preset(preset, spreading=True)
