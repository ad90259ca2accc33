"""Mixed-path multipath returns of the device chain (issue 16 item 1: out along the bounce chain, back in a straight
line, and the reverse; sensors/acoustic/multipath.py, docs/PHYSICS.md §1 "Mixed paths"), against numbers computed by
hand: the echosounder's second bottom echo at 2 A + s, the mixed ghost of a sphere halfway between the sphere and
its mirror image in the flat surface (coherent pair, one channel) and in a side wall (two channels, at the
hand-computed bearings), and an occluder that removes the mixed arrival but not the same-path ghost."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from test_multipath import ALPHA, PITCH_DOWN_90, fls, onset, seafloor, sphere, window
from oceansim_py.scene import Material, Node, Scene
from oceansim_py.sensors.imaging_sonar import ImagingSonar
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig


def lambert_sphere(gamma: float) -> float:
    """int max(n.u, 0) max(n.v, 0) dA / a^2 over a sphere, u and v unit vectors gamma (rad) apart (the bistatic
    Lambert sphere): (2/3) (sin g + (pi - g) cos g); 2 pi / 3 for g = 0."""
    return 2.0 / 3.0 * (math.sin(gamma) + (math.pi - gamma) * math.cos(gamma))


def test_second_bottom_echo_of_a_single_beam_at_twice_the_altitude_plus_depth():
    # Single-beam straight down at depth s = 2 m, altitude A = 3 m over a floor of Lambert mu = 0.25 (reflection
    # coefficient R_f = sqrt(mu) = 0.5), the flat pressure-release surface above (R_s = -1), two bounces. The ray at
    # polar angle t goes floor -> surface -> floor (P_2 at horizontal offset rho = 13 tan t, chain length
    # L = (A + 2 (A + s)) / cos t = 13 / cos t) and comes straight back (D = sqrt(A^2 + rho^2), cos(out) = A / D):
    # range (L + D) / 2 = 2 A + s = 8 m for t -> 0. Each of the two reciprocal arrivals carries
    # I = SL R_f^2 R_s^2 mu cos(out) w / D^2 10^(-alpha (L + D) / 10); both land in the single beam when P_2's
    # direction t' = atan(rho / A) lies inside the cone, and add coherently: 4 I. The direct floor echo of the ray
    # is SL mu cos^3(t) w / A^2 10^(-2 alpha A / cos t). The cone is uniform (w = the ring's solid angle); no jitter,
    # so every ray lies on its ring's centre as the hand sum assumes.
    A, s, mu = 3.0, 2.0, 0.25
    floor = Material.from_properties("mud", (0.4, 0.4, 0.4), reflectivity=mu)
    scene = seafloor(floor, s + A)
    cfg = SinglebeamSonarConfig(model="device", opening_angle=4.0, cone_rings=16, rays_per_ring=16, min_range=1.0,
                                max_range=20.0, range_bins=1900, absorption=ALPHA, noise_level=None,
                                volume_scattering=None, tvg="none", multipath_bounces=2, jitter=False)
    sonar = SinglebeamSonar(cfg, device="cpu")
    out = sonar.render(scene, np.array([0, 0, -s, *PITCH_DOWN_90])).numpy()
    profile = out["clean_intensity"].reshape(-1).astype(np.float64)
    ranges = 1.0 + (np.arange(1900) + 0.5) * 0.01
    # hand numbers per ring (the cone's rings of width dt, centres t_k; P_2 received when t' < the half opening)
    half = math.radians(2.0)
    dt = half / 16
    direct = mixed = 0.0
    for k in range(16):
        t = (k + 0.5) * dt
        w = 2 * math.pi * (math.cos(k * dt) - math.cos((k + 1) * dt))  # the ring's solid angle (all its rays)
        direct += mu * math.cos(t) ** 3 * w / A**2 * 10 ** (-0.2 * ALPHA * A / math.cos(t))
        rho = (A + 2 * (A + s)) * math.tan(t)
        D = math.hypot(A, rho)
        L = (A + 2 * (A + s)) / math.cos(t)
        if math.atan2(rho, A) < half:
            mixed += 4 * mu * mu * (A / D) * w / D**2 * 10 ** (-0.1 * ALPHA * (L + D))
    hand = 10 * math.log10(mixed / direct)
    assert hand == pytest.approx(-13.041, abs=0.005)
    assert onset(profile, ranges, 2.0, 4.0) == pytest.approx(A, abs=0.011)
    assert onset(profile, ranges, 7.0, 9.0) == pytest.approx(2 * A + s, abs=0.011)  # within one bin
    ratio = 10 * math.log10(window(profile, ranges, 7.0, 9.0) / window(profile, ranges, 2.0, 4.0))
    assert ratio == pytest.approx(hand, abs=0.5)
    # the same-path second echo (out and back along the chain) stays at L = 13 m; without mixed paths there is
    # nothing at 8 m
    assert onset(profile, ranges, 12.0, 14.0) == pytest.approx(13.0, abs=0.011)
    same = SinglebeamSonar(cfg.replace(multipath_mixed_paths=False), device="cpu").render(
        scene, np.array([0, 0, -s, *PITCH_DOWN_90])).numpy()["clean_intensity"].reshape(-1).astype(np.float64)
    assert window(same, ranges, 7.0, 9.0) == 0.0
    np.testing.assert_allclose(window(same, ranges, 12.0, 14.0), window(profile, ranges, 12.0, 14.0), rtol=1e-5)


SURFACE_CFG = dict(horizontal_fov=6.0, vertical_fov=50.0, n_beams=6, rays_per_beam=20, elevation_rays=1000,
                   min_range=5.0, max_range=12.0, range_bins=700)
S_DEPTH, D_DEPTH, R_AHEAD, RADIUS = 1.5, 1.5, 8.0, 0.2


def _surface_profile(*extra: tuple) -> np.ndarray:
    scene = make_scene(("ball", sphere([R_AHEAD, 0.0, -D_DEPTH], RADIUS), 0.5), *extra)
    pose = np.array([0.0, 0.0, -S_DEPTH, 0.0, 0.0, 0.0, 1.0])
    return ImagingSonar(fls(1, **SURFACE_CFG), device="cpu").render(scene, pose).numpy()[
        "clean_intensity"][0].sum(1).astype(np.float64)


def test_mixed_ghost_of_a_sphere_below_the_flat_surface():
    # Sensor S at depth s = 1.5 m looking along +x, sphere (a = 0.2 m, mu = 0.5) at depth d = 1.5 m, R = 8 m ahead,
    # the flat pressure-release surface z = 0 (R_s = -1), one bounce. Centre distances: direct r_d = sqrt(R^2 +
    # (d - s)^2) = 8, image r_m = sqrt(R^2 + (d + s)^2) = 8.5440. Mixed: out via the surface, back direct (and the
    # reverse), range (r_d + r_m) / 2 = 8.2720 at the centre; the sphere is lit from the image S' and seen from S,
    # gamma = atan(3 / 8) = 20.556 deg apart, so the bistatic Lambert sphere gives per arrival
    # SL R_s^2 mu a^2 F(gamma) / (r_d^2 r_m^2) 10^(-alpha (r_d + r_m) / 10); both arrivals share the bearing (a
    # horizontal mirror keeps it): 4x. Direct: SL mu a^2 F(0) / r_d^4 10^(-2 alpha r_d / 10), F(0) = 2 pi / 3; ghost
    # (same path): R_s^4 (r_d / r_m)^4 10^(-2 alpha (r_m - r_d) / 10) relative. The flat elevation pattern: no
    # pattern factor.
    ranges = 5.0 + (np.arange(700) + 0.5) * 0.01
    profile = _surface_profile()
    r_d = math.hypot(R_AHEAD, D_DEPTH - S_DEPTH)
    r_m = math.hypot(R_AHEAD, D_DEPTH + S_DEPTH)
    gamma = math.atan2(D_DEPTH + S_DEPTH, R_AHEAD)
    mixed_centre = 0.5 * (r_d + r_m)
    assert mixed_centre == pytest.approx(8.2720, abs=1e-4)
    hand_mixed = (10 * math.log10(4 * lambert_sphere(gamma) / lambert_sphere(0.0)) + 20 * math.log10(r_d / r_m)
                  - ALPHA * (r_m - r_d))
    hand_ghost = 40 * math.log10(r_d / r_m) - 2 * ALPHA * (r_m - r_d)
    assert hand_mixed == pytest.approx(5.1314, abs=1e-3)
    assert hand_ghost == pytest.approx(-1.2517, abs=1e-3)
    # windows: direct 7.8 .. 8.0, mixed from ~(r_d + r_m) / 2 - a cos(gamma / 2) = 8.0752, ghost 8.344 .. 8.544
    direct, mixed, ghost = (window(profile, ranges, 7.7, 8.04), window(profile, ranges, 8.04, 8.32),
                            window(profile, ranges, 8.32, 8.7))
    assert onset(profile, ranges, 7.7, 8.04) == pytest.approx(R_AHEAD - RADIUS, abs=0.011)
    assert onset(profile, ranges, 8.04, 8.32) == pytest.approx(mixed_centre - RADIUS * math.cos(gamma / 2),
                                                               abs=0.011)
    assert onset(profile, ranges, 8.32, 8.7) == pytest.approx(r_m - RADIUS, abs=0.011)
    assert 10 * math.log10(mixed / direct) == pytest.approx(hand_mixed, abs=0.5)
    assert 10 * math.log10(ghost / direct) == pytest.approx(hand_ghost, abs=0.5)


def test_an_occluder_removes_the_mixed_arrival_but_not_the_same_path_ghost():
    # As above, plus a 0.6 m plate facing the sensor at x = 4 m on the straight line S -> sphere (z = -1.5 m): the
    # visibility ray from the sphere to S is blocked (and so is the direct echo), while the ghost path via the
    # surface passes x = 4 m at z = 0, above the plate.
    ranges = 5.0 + (np.arange(700) + 0.5) * 0.01
    clear = _surface_profile()
    blocked = _surface_profile(("plate", quad([4.0, 0.0, -1.5], [-1.0, 0.0, 0.0], 0.6), 0.5))
    assert window(clear, ranges, 8.04, 8.32) > 0.0
    assert window(blocked, ranges, 7.7, 8.32) == 0.0  # no direct echo, no mixed arrival
    assert window(blocked, ranges, 8.32, 8.7) == pytest.approx(window(clear, ranges, 8.32, 8.7), rel=1e-3)


def test_mixed_ghost_in_a_side_wall_lands_on_both_hand_computed_bearings():
    # Sensor at the origin looking along +x, sphere (a = 0.2 m) at C = (6, 0, 0), a concrete wall (rho 2400 kg/m^3,
    # c 3700 m/s: R = 1 beyond the critical angle asin(1500 / 3700) = 23.9 deg from its normal; Lambert mu 1e-6 so
    # that it adds no echo of its own) in the plane y = 1 m, facing -y. Paths via the wall meet it at 71.6 deg from
    # its normal: R = 1. The image of C is C' = (6, 2, 0) at bearing -atan(2 / 6) = -18.435 deg (port), distance
    # r_m = sqrt(40) = 6.3246 m; direct r_d = 6 m at bearing 0. The mixed pair: out along the ray towards C' (via the
    # wall), back straight from C: received from bearing 0; out straight to C, back via the wall: received from
    # -18.435 deg; both at range (r_d + r_m) / 2 = 6.1623 m (centre), each carrying
    # R^2 (r_d / r_m)^2 F(gamma) / F(0) 10^(-alpha (r_m - r_d) / 10) of the direct echo, gamma = atan(2 / 6) the
    # angle at C between S and its image S' = (0, 2, 0): -0.4576 - 0.2128 - 0.0325 = -0.7028 dB. The mixed arrivals
    # are the difference of the renders with and without mixed paths (the clean intensity adds powers).
    nodes = [Node("/World")]
    concrete = Material.from_properties("concrete", (0.4, 0.4, 0.4), reflectivity=1e-6, density=2400.0,
                                        sound_speed=3700.0)
    ball = Material.from_properties("ball", (0.5, 0.5, 0.5), reflectivity=0.5)
    nodes.append(Node("/World/wall", mesh=quad([10.0, 1.0, 0.0], [0.0, -1.0, 0.0], 30.0), material=concrete,
                      label="wall", parent=nodes[0]))
    nodes.append(Node("/World/ball", mesh=sphere([6.0, 0.0, 0.0], 0.2), material=ball, label="ball",
                      parent=nodes[0]))
    scene = Scene(nodes, device="cpu")
    scene.metadata["surface_z"] = 100.0  # the flat surface far above: only the wall mirrors
    cfg = fls(1, horizontal_fov=48.0, vertical_fov=6.0, n_beams=48, rays_per_beam=5, elevation_rays=60,
              min_range=4.0, max_range=8.0, range_bins=400)
    pose = np.array([0, 0, 0, 0, 0, 0, 1.0])
    both = ImagingSonar(cfg, device="cpu").render(scene, pose).numpy()["clean_intensity"][0].astype(np.float64)
    same = ImagingSonar(cfg.replace(multipath_mixed_paths=False), device="cpu").render(scene, pose).numpy()[
        "clean_intensity"][0].astype(np.float64)
    mixed = both - same
    ranges = 4.0 + (np.arange(400) + 0.5) * 0.01
    bearings = -24.0 + (np.arange(48) + 0.5)  # beam centres (deg), +starboard
    r_d, r_m = 6.0, math.sqrt(40.0)
    gamma = math.atan2(2.0, 6.0)
    b_mirror = -math.degrees(math.atan2(2.0, 6.0))
    assert b_mirror == pytest.approx(-18.435, abs=1e-3)
    near_direct = np.abs(bearings) < 3.0
    near_mirror = np.abs(bearings - b_mirror) < 3.0
    assert mixed[:, near_direct | near_mirror].sum() > 0.99 * mixed.sum()
    per_beam = mixed.sum(0)
    assert bearings[near_direct][per_beam[near_direct].argmax()] == pytest.approx(0.0, abs=1.0)
    assert bearings[near_mirror][per_beam[near_mirror].argmax()] == pytest.approx(b_mirror, abs=1.0)
    assert onset(mixed[:, near_direct].sum(1), ranges, 5.5, 7.0) == pytest.approx(
        0.5 * (r_d + r_m) - 0.2 * math.cos(gamma / 2), abs=0.011)
    direct = same[:, near_direct].sum(1)
    d_energy = window(direct, ranges, 5.7, 6.05)
    hand = 20 * math.log10(r_d / r_m) + 10 * math.log10(lambert_sphere(gamma) / lambert_sphere(0.0)) - ALPHA * (
        r_m - r_d)
    assert hand == pytest.approx(-0.7028, abs=1e-3)
    for sel in (near_direct, near_mirror):
        assert 10 * math.log10(mixed[:, sel].sum() / d_energy) == pytest.approx(hand, abs=0.5)


def test_second_bottom_echo_of_a_multibeam_nadir_beam_at_twice_the_altitude_plus_depth():
    # The multibeam (device model) pointing down at depth s = 2 m over sand at altitude A = 3 m, two bounces: the
    # nadir beam's second echo is the mixed path floor -> surface -> floor out, straight back: (L + D) / 2 with
    # L = A + 2 (A + s) = 13 m and D = A: 2 A + s = 8 m (the same-path second line lies at 13 m). Off nadir, the
    # ray at theta reaches P_2 13 tan(theta) across; beam theta_j first hears the arrival of the ray whose P_2 it
    # looks at, theta = atan(3 tan(theta_j) / 13): (13 / cos(theta) + 3 / cos(theta_j)) / 2.
    A, s = 3.0, 2.0
    scene = seafloor(Material.from_properties("sand", (0.45, 0.4, 0.3), density=1990.0, sound_speed=1750.0), s + A)
    cfg = MultibeamSonarConfig.preset("blueview_p900", max_range=20.0, n_beams=64, noise_level=None,
                                      volume_scattering=None, tvg="none", absorption_model="fixed",
                                      absorption=ALPHA, multipath_bounces=2)
    pose = np.array([0, 0, -s, *PITCH_DOWN_90])
    out = MultibeamSonar(cfg, device="cpu").render(scene, pose).numpy()
    same = MultibeamSonar(cfg.replace(multipath_mixed_paths=False), device="cpu").render(scene, pose).numpy()
    clean = out["clean_intensity"][0].astype(np.float64)
    ranges, bearings = out["ranges"], out["bearings"]
    step = float(ranges[1] - ranges[0])
    tol = 1500.0 / (2.0 * cfg.bandwidth) + 2 * step
    mixed = clean - same["clean_intensity"][0].astype(np.float64)
    assert np.abs(mixed[(ranges > 12.5)]).max() < 1e-6 * clean.max()  # the same-path returns are unchanged
    for j in (len(bearings) // 2, len(bearings) // 2 + 8):
        tj = abs(float(bearings[j]))
        t = math.atan(A * math.tan(tj) / (A + 2 * (A + s)))
        hand = 0.5 * ((A + 2 * (A + s)) / math.cos(t) + A / math.cos(tj))
        sel = (ranges > 6.5) & (ranges < 12.0)
        col = mixed[sel, j]
        assert col.max() > 0
        edge = ranges[sel][np.argmax(col > 0.5 * col.max())]
        spacing = abs(float(bearings[1] - bearings[0]))
        lo = 0.5 * ((A + 2 * (A + s)) + A / math.cos(max(tj - spacing, 0.0))) if j != len(bearings) // 2 else hand
        assert lo - tol <= edge <= hand + tol
    nadir = clean[:, len(bearings) // 2]
    assert onset(nadir, ranges, 6.5, 12.0) == pytest.approx(2 * A + s, abs=tol)
