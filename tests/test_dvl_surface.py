"""DVL surface tracking (issue 16): upward beams, ranges to the flat or moving sea surface, and the velocity
relative to the surface's orbital motion, against hand numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.scene import Material, Node, Scene, TriangleMesh
from oceansim_py.scene.sea_surface import GRAVITY, SeaStateConfig
from oceansim_py.sensors.dvl import DVL, DVLConfig

DEPTH = 6.0        # sensor depth below the mean surface (m)
FLOOR_Z = -20.0


def floor_scene(half: float = 40.0) -> Scene:
    """A flat floor 20 m deep over [-half, half]^2 (two triangles)."""
    verts = np.array([[-half, -half, FLOOR_Z], [half, -half, FLOOR_Z], [half, half, FLOOR_Z], [-half, half, FLOOR_Z]])
    mat = Material.from_properties("sand", (0.5, 0.5, 0.5), reflectivity=0.3)
    return Scene([Node("/W"), Node("/W/floor", mesh=TriangleMesh(verts, np.array([[0, 1, 2], [0, 2, 3]])),
                                   material=mat)], device="cpu")


def level_pose(z: float, x: float = 0.0, y: float = 0.0) -> np.ndarray:
    return np.array([[x, y, z, 0.0, 0.0, 0.0, 1.0]])


def test_upward_beams_range_to_the_flat_surface_and_measure_the_vehicle_velocity() -> None:
    scene = floor_scene()
    v = [0.8, -0.3, 0.05]
    for angle in (22.5, 30.0):
        cfg = DVLConfig(beam_angle=angle, tracking="surface", noise=False)
        dirs = cfg.beam_directions()
        np.testing.assert_allclose(dirs[:, 2], math.cos(math.radians(angle)), atol=1e-12)   # all look up
        r = DVL(cfg, device="cpu").render(scene, level_pose(-DEPTH), velocities=v).numpy()
        # every beam meets the surface s / cos(alpha) away: 6 / cos(22.5 deg) = 6.4944 m, 6 / cos(30 deg) = 6.9282 m
        np.testing.assert_allclose(r["beam_range"][0], DEPTH / math.cos(math.radians(angle)), rtol=1e-6)
        np.testing.assert_allclose(r["altitude"], DEPTH, rtol=1e-6)           # the depth below the surface
        np.testing.assert_allclose(r["beam_velocity"][0], dirs @ v, atol=1e-6)  # a still surface: d_k . v
        np.testing.assert_allclose(r["velocity"][0], v, atol=1e-5)
        assert r["valid"].all() and r["beam_valid"].all()
    # the same sensor tracking the bottom sees the floor 14 m below instead
    r = DVL(DVLConfig(noise=False), device="cpu").render(scene, level_pose(-DEPTH), velocities=v).numpy()
    np.testing.assert_allclose(r["altitude"], -FLOOR_Z - DEPTH, rtol=1e-6)


def test_flat_surface_out_of_range_or_above_the_sensor_is_a_dropout() -> None:
    scene = floor_scene()
    cfg = DVLConfig(tracking="surface", noise=False, max_range=10.0)
    dvl = DVL(cfg, device="cpu")
    # 12 m deep: the surface is 12 / cos(22.5 deg) = 13.0 m up each beam, beyond max_range 10 m
    r = dvl.render(scene, level_pose(-12.0), velocities=[0.0, 0.0, 0.0]).numpy()
    assert not r["valid"].any() and not r["beam_valid"].any() and np.isnan(r["velocity"]).all()
    # above the surface (a sensor in air) no beam meets it from below
    r = dvl.render(scene, level_pose(0.5), velocities=[0.0, 0.0, 0.0]).numpy()
    assert not r["beam_valid"].any()


def test_under_a_single_wave_the_surface_relative_velocity_differs_by_the_orbital_velocity() -> None:
    scene = floor_scene()
    # one long-crested linear wave travelling to +x: Hs 1 m (A = Hs / (2 sqrt 2) = 0.354 m), Tp 8 s (its one
    # component at the spectrum's mean frequency is 59 m long), on a 0.5 m mesh
    sea = SeaStateConfig(spectrum="bretschneider", significant_wave_height=1.0, peak_period=8.0, spreading="none",
                         n_frequencies=1, steepness=0.0, seed=3)
    scene.add_sea_surface(sea, size=60.0, resolution=0.5, center=(0.0, 0.0))
    t = 2.0
    scene.set_time(t)
    comp = scene.sea_surface.components
    a, w, (kx, ky), phi = comp.amplitude[0], comp.omega[0], comp.wave_vector[0], comp.phase[0]
    assert a == pytest.approx(1.0 / (2.0 * math.sqrt(2.0)), rel=1e-3)   # the sampled band holds 99.97 % of m0
    assert (kx, ky) == (pytest.approx(w**2 / GRAVITY, rel=1e-12), 0.0)      # deep water: omega^2 = g k

    v = np.array([1.0, 0.2, 0.0])
    pose = level_pose(-5.0, x=3.0)
    up = DVL(DVLConfig(tracking="surface", noise=False), device="cpu").render(scene, pose, velocities=v).numpy()
    down = DVL(DVLConfig(noise=False), device="cpu").render(scene, pose, velocities=v).numpy()
    assert up["beam_valid"].all() and down["beam_valid"].all()
    d = DVLConfig(tracking="surface").beam_directions()
    hits = pose[0, :3] + up["beam_range"][0][:, None] * d
    # the beams end on the instantaneous surface eta = A cos(k x + phi - omega t)
    theta = kx * hits[:, 0] + phi - w * t
    np.testing.assert_allclose(hits[:, 2], a * np.cos(theta), atol=2e-3)
    # orbital velocity at each hit (deep water): u = A omega cos(theta) along the wave, w = A omega sin(theta)
    u = np.column_stack([a * w * np.cos(theta), np.zeros(4), a * w * np.sin(theta)])
    np.testing.assert_allclose(up["beam_velocity"][0], np.einsum("kj,kj->k", d, v - u), atol=2e-3)
    # bottom track measures the vehicle's velocity over ground; surface track differs from it by the least-squares
    # solve of the beams' orbital velocities, -(D^T D)^-1 D^T (d_k . u_k). Not simply -u at the sensor: the vertical
    # orbital velocity differs between the fore and aft footprints (2 m either side, 0.22 rad of this 59 m wave),
    # and the solve turns that difference into horizontal velocity times cot(alpha)
    np.testing.assert_allclose(down["velocity"][0], v, atol=1e-5)
    orbital, *_ = np.linalg.lstsq(d, np.einsum("kj,kj->k", d, u), rcond=None)
    np.testing.assert_allclose(up["velocity"][0] - down["velocity"][0], -orbital, atol=3e-3)
    assert np.linalg.norm(orbital) > 0.1


def test_bad_tracking_mode_is_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError, match="tracking"):
        DVLConfig(tracking="ice")
    with pytest.raises(ConfigError, match="tracking"):
        DVLConfig.from_dict({"tracking": "up"}, source="rig.yaml")


def test_surface_velocity_is_the_rate_of_change_of_the_surface() -> None:
    from oceansim_py.scene.sea_surface import SeaSurface

    xy = np.array([[3.0, -1.0], [17.5, 4.0]])
    t, dt = 1.3, 1e-4
    for steepness in (0.0, 1.0):
        sea = SeaStateConfig(spectrum="bretschneider", significant_wave_height=1.0, peak_period=8.0,
                             spreading="none", n_frequencies=1, steepness=steepness)
        s = SeaSurface(sea, size=40.0, resolution=1.0)
        u = s.surface_velocity(xy, t)
        if steepness == 0.0:   # linear waves: the vertical part is d eta / dt at the point (central difference)
            rise = (s.elevation(xy, t + dt) - s.elevation(xy, t - dt)) / (2 * dt)
            np.testing.assert_allclose(u[:, 2], rise, atol=1e-6)
        # one component: |u| = A omega (deep water), along the wave (+x) and up
        comp = s.components
        np.testing.assert_allclose(np.linalg.norm(u, axis=1), comp.amplitude[0] * comp.omega[0], rtol=1e-9)
        assert np.all(u[:, 1] == 0.0)
        if steepness == 1.0:   # trochoidal waves: exactly the velocity of the surface point that moves there
            rest = s.rest_points(xy, t)
            moved = (s.displace(rest, t + dt) - s.displace(rest, t - dt)) / (2 * dt)
            np.testing.assert_allclose(u, moved, atol=1e-6)


def test_beyond_the_wave_patch_the_beams_range_to_the_flat_surface() -> None:
    # A 20 m wave patch centred on the origin ([-10, 10]^2); the floor runs to 40 m. Beyond the patch the sea
    # surface is the flat plane z = 0 again (as the camera's "always" optics and the GPS have it): the beams used to
    # find nothing there and the DVL dropped out. 6 m deep, 22.5 deg beams: r = 6 / cos(22.5 deg) = 6.4944 m, and the
    # still plane gives the vehicle's velocity exactly.
    scene = floor_scene()
    sea = SeaStateConfig(spectrum="bretschneider", significant_wave_height=1.0, peak_period=8.0, spreading="none",
                         n_frequencies=1, steepness=0.0, seed=3)
    scene.add_sea_surface(sea, size=20.0, resolution=0.5, center=(0.0, 0.0))
    scene.set_time(2.0)
    v = [0.5, -0.2, 0.0]
    dvl = DVL(DVLConfig(tracking="surface", noise=False), device="cpu")
    # footprints 6 tan(22.5 deg) cos(45 deg) = 1.76 m either side of the sensor: x = 20 is well beyond the patch
    out = dvl.render(scene, level_pose(-DEPTH, x=20.0), velocities=v).numpy()
    assert out["beam_valid"].all() and out["valid"][0]
    np.testing.assert_allclose(out["beam_range"][0], DEPTH / math.cos(math.radians(22.5)), rtol=1e-5)
    np.testing.assert_allclose(out["velocity"][0], v, atol=1e-5)
    assert out["altitude"][0] == pytest.approx(DEPTH, rel=1e-5)
    # under the patch the beams still end on the wave mesh, not on the plane (the wave is 0.35 m high)
    under = dvl.render(scene, level_pose(-DEPTH), velocities=v).numpy()
    hits_z = -DEPTH + under["beam_range"][0] * math.cos(math.radians(22.5))
    np.testing.assert_allclose(hits_z, scene.surface_height(
        under["beam_range"][0][:, None] * DVLConfig(tracking="surface").beam_directions()[:, :2]), atol=5e-3)
    assert np.abs(hits_z).max() > 0.05
