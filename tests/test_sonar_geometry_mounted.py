"""Every acoustic sensor mounted off the body origin and tilted, on a vehicle that is rolled, pitched and yawed:
where a small target at a known world position lands (range bin, beam, side, head angle), against hand numbers.

The vehicle sits at (10, -4, -20) with roll 12, pitch -9, yaw 37 deg; the sensor is mounted at (0.7, -0.3, 0.25) m
in the body frame with roll -20, pitch 25, yaw -15 deg (sensor pose = vehicle * mount, as a rig composes it). The
targets are placed by rotation matrices built here from the Euler angles (R = Rz(yaw) Ry(pitch) Rx(roll); Ry(+p)
tips +x down), not through the package's quaternions, so the test also checks the pose chain. Sensor frame FLU
(x forward, y port, z up); bearings and head angles positive to starboard, so a target at range r and bearing b in
the sensor's x-y plane is at (r cos b, -r sin b, 0) in the sensor frame.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene
from oceansim_py import (ConfigError, ImagingSonar, ImagingSonarConfig, ProfilingSonar, ProfilingSonarConfig,
                         SidescanSonar, SidescanSonarConfig, SinglebeamSonar, SinglebeamSonarConfig)
from oceansim_py.poses import compose_poses, pose_from_euler
from oceansim_py.scene import TriangleMesh
from oceansim_py.sensors.msis import Msis, MsisConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

VEHICLE = ((10.0, -4.0, -20.0), (12.0, -9.0, 37.0))        # position (m), roll / pitch / yaw (deg)
MOUNT = ((0.7, -0.3, 0.25), (-20.0, 25.0, -15.0))


def rotation(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rz(yaw) Ry(pitch) Rx(roll), angles in degrees (FLU body to world)."""
    r, p, y = np.radians([roll, pitch, yaw])
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def sensor_frame(vehicle=VEHICLE, mount=MOUNT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pose (7,) for render, sensor origin in the world, sensor-to-world rotation) of the mounted sensor."""
    rv, rm = rotation(*vehicle[1]), rotation(*mount[1])
    origin = np.asarray(vehicle[0]) + rv @ np.asarray(mount[0])
    pose = compose_poses(pose_from_euler(*vehicle[0], *vehicle[1])[None], pose_from_euler(*mount[0], *mount[1])[None])
    return pose[0], origin, rv @ rm


def rect(center, normal, up, width: float, height: float) -> TriangleMesh:
    """A width x height (m) rectangle centred at ``center``, facing ``normal``, its height along ``up``."""
    n = np.asarray(normal, float) / np.linalg.norm(normal)
    v = np.asarray(up, float) - (np.asarray(up, float) @ n) * n
    v /= np.linalg.norm(v)
    u = np.cross(v, n)
    c = np.asarray(center, float)
    corners = [c - width / 2 * u - height / 2 * v, c + width / 2 * u - height / 2 * v,
               c + width / 2 * u + height / 2 * v, c - width / 2 * u + height / 2 * v]
    return TriangleMesh(np.array(corners), np.array([[0, 1, 2], [0, 2, 3]]))


def target(local, width: float, height: float | None = None, mu: float = 0.9):
    """A scene holding one rectangle facing the mounted sensor at sensor-frame position ``local`` (m), its height
    along the sensor's z; returns (scene, render pose)."""
    pose, origin, rot = sensor_frame()
    world = origin + rot @ np.asarray(local, float)
    mesh = rect(world, origin - world, rot[:, 2], width, width if height is None else height)
    return make_scene(("t", mesh, mu)), pose


def peak(image: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(np.argmax(image), image.shape))


QUIET_DEVICE = dict(model="device", noise_level=None, volume_scattering=None, jitter=False)


@pytest.mark.parametrize("model", [pytest.param({}, id="peer"), pytest.param(QUIET_DEVICE, id="device"),
                                   pytest.param({**QUIET_DEVICE, "bandwidth": 15000.0, "beam_width": 5.0},
                                                id="device-psf")])
@pytest.mark.parametrize("bearing, beam", [(12.0, 4), (-6.0, 1)])
def test_imaging_sonar_target_lands_in_its_bin_and_beam_on_a_tilted_mount(model, bearing, beam):
    # 30 deg fan of 5 beams (6 deg each: beam j covers [-15 + 6 j, -9 + 6 j) deg, + starboard): +12 deg is the
    # centre of beam 4, -6 deg (port) the centre of beam 1. Bins of 5 cm from 0.37 m: a target at 3.045 m is the
    # centre of bin (3.045 - 0.37) / 0.05 = 53.5 -> 53. The 6 cm plate spans +-0.57 deg and 3.045-3.0455 m.
    cfg = ImagingSonarConfig(horizontal_fov=30.0, vertical_fov=10.0, min_range=0.37, max_range=5.37, n_beams=5,
                             range_bins=100, rays_per_beam=8, elevation_rays=16, absorption=0.0,
                             normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0, **model)
    b = math.radians(bearing)
    scene, pose = target([3.045 * math.cos(b), -3.045 * math.sin(b), 0.0], 0.06)
    out = ImagingSonar(cfg, device="cpu").render(scene, pose).numpy()
    assert peak(out["clean_intensity"][0]) == (53, beam)
    assert out["ranges"][53] == pytest.approx(3.045)
    assert math.degrees(out["bearings"][beam]) == pytest.approx(bearing, abs=1e-5)


def test_multibeam_sample_and_beam_of_a_target_on_a_tilted_mount():
    # Peer model, no beam mixing: 16 beams of 2 deg over 32 deg (beam j centred at -16 + 2 (j + 1/2) deg): +9 deg
    # is beam 12, -9 deg beam 3. Samples r_n = 0.7 + n c / (2 fs), fs = bandwidth = 30 kHz: 2.5 cm; a target at
    # 5.1 m (two-way time 6.8 ms) is sample (5.1 - 0.7) / 0.025 = 176.
    cfg = MultibeamSonarConfig(fov=32.0, n_beams=16, beam_width=2.0, elevation_fov=10.0, rays_per_beam=16,
                               azimuth_rays_per_beam=8, bandwidth=30e3, min_range=0.7, max_range=11.0,
                               beam_pattern=False, absorption=0.0)
    for bearing, beam in ((9.0, 12), (-9.0, 3)):
        b = math.radians(bearing)
        scene, pose = target([5.1 * math.cos(b), -5.1 * math.sin(b), 0.0], 0.08)
        out = MultibeamSonar(cfg, device="cpu").render(scene, pose).numpy()
        assert peak(out["intensity"][0]) == (176, beam)
        assert out["ranges"][176] == pytest.approx(5.1, abs=1e-5)


def test_sidescan_side_and_slant_bin_of_targets_on_a_tilted_mount():
    # Fans of depressions 5-90 deg each side, 0.1 m bins over 0.5-20.5 m (bin k centred at 0.55 + 0.1 k). A plate
    # 6 m to port and 4 m down (sensor frame (0, 6, -4), depression 33.7 deg) scaled to slant range 7.25 m: port
    # column, bin (7.25 - 0.5) / 0.1 = 67.5 -> 67; one 9 m to starboard, 3 m down (depression 18.4 deg) at 9.45 m:
    # starboard column, bin 89. The waterfall row is [port reversed | starboard]: 199 - 67 = 132 and 200 + 89 = 289.
    # Without a floor the first return (altitude) is the plate's range.
    cfg = SidescanSonarConfig(along_track_beamwidth=0.25, vertical_beamwidth=85.0, depression=47.5, min_range=0.5,
                              max_range=20.5, range_bins=200, along_track_rays=1, across_track_rays=1024)
    for side, (y, z), r, k, col in (("port", (6.0, -4.0), 7.25, 67, 132), ("starboard", (-9.0, -3.0), 9.45, 89, 289)):
        scale = r / math.hypot(y, z)
        scene, pose = target([0.0, y * scale, z * scale], 0.1)
        out = SidescanSonar(cfg, device="cpu").render(scene, pose).numpy()
        assert peak(out["clean_intensity"][0]) == (k, 0 if side == "port" else 1), side
        assert int(np.argmax(out["waterfall"][0])) == col
        assert out["altitude"][0] == pytest.approx(r, abs=2e-3)


def floor_plane(point, slope_deg: float, half: float = 200.0) -> tuple[TriangleMesh, np.ndarray]:
    """A plane through ``point`` rising slope_deg towards world +x (|x|, |y| <= half about it), and its normal."""
    s = math.tan(math.radians(slope_deg))
    c = np.asarray(point, float)
    corners = [c + [-half, -half, -half * s], c + [half, -half, half * s], c + [half, half, half * s],
               c + [-half, half, -half * s]]
    normal = np.array([-math.sin(math.radians(slope_deg)), 0.0, math.cos(math.radians(slope_deg))])
    return TriangleMesh(np.array(corners), np.array([[0, 1, 2], [0, 2, 3]])), normal


def test_profiling_soundings_on_a_slope_from_a_tilted_mount():
    # A floor 12 m under the sensor rising 10 deg towards world +x. Beam j (30 beams of 2 deg, centred at
    # theta_j = -30 + 2 (j + 1/2) deg from nadir, + starboard) points along R (0, -sin theta_j, -cos theta_j) and
    # meets the plane n.(x - c) = 0 at t_j = n.(c - o) / n.(R d_j): 15.2026 m (beam 0, most port), 13.3070 (beam
    # 15), 15.2215 (beam 29). The centre-of-gravity detection over each beam's 4 x 4 rays reads 0.8-0.9 mm more
    # (the mean of ranges over a 2 x 1 deg cell on a plane); the sounding is o + t_j R d_j in the world.
    pose, o, rot = sensor_frame()
    mesh, n = floor_plane(o - [0.0, 0.0, 12.0], 10.0)
    cfg = ProfilingSonarConfig(swath_width=60.0, along_track_beamwidth=1.0, n_beams=30, across_rays_per_beam=4,
                               along_track_rays=4, min_range=0.5, max_range=40.0, range_bins=400, range_noise=0.0,
                               angle_noise=0.0)
    out = ProfilingSonar(cfg, device="cpu").render(make_scene(("floor", mesh, 0.5)), pose).numpy()
    theta = np.radians(-30.0 + 2.0 * (np.arange(30) + 0.5))
    d = np.stack([0.0 * theta, -np.sin(theta), -np.cos(theta)], axis=1) @ rot.T
    t = (n @ (o - [0.0, 0.0, 12.0] - o)) / (d @ n)
    assert t[[0, 15, 29]] == pytest.approx([15.2026, 13.3070, 15.2215], abs=1e-4)
    assert np.allclose(out["bottom_range"][0], t, atol=2e-3)
    assert np.allclose(out["point_world"][0], o + t[:, None] * d, atol=2e-3)
    assert np.allclose(out["beam_angles"], theta, atol=1e-6)


def test_singlebeam_first_return_on_a_slope_from_a_tilted_mount():
    # Mounted pitched 70 deg down (roll 8, yaw -15 deg) on the same vehicle, 6 m above a floor rising 15 deg
    # towards world +x. Rays on 4 rings t_k = (k + 1/2) 2.5 deg about +x, 16 per ring at p_m = (m + 1/2) 22.5 deg,
    # along R (cos t, sin t cos p, sin t sin p): the nearest hit is ring 3, azimuth 8 at 5.9660 m (the boresight
    # meets the floor at 6.2630 m, the vertical at 6.0000 m): first return 5.9660 m, first lit bin
    # floor((5.9660 - 0.5) / 0.05) = 109.
    mount = ((0.7, -0.3, -0.25), (8.0, 70.0, -15.0))
    pose, o, rot = sensor_frame(mount=mount)
    mesh, n = floor_plane(o - [0.0, 0.0, 6.0], 15.0)
    cfg = SinglebeamSonarConfig(opening_angle=20.0, cone_rings=4, rays_per_ring=16, min_range=0.5, max_range=20.0,
                                range_bins=390, range_noise=0.0)
    out = SinglebeamSonar(cfg, device="cpu").render(make_scene(("floor", mesh, 0.5)), pose).numpy()
    t, p = np.meshgrid(np.radians((np.arange(4) + 0.5) * 2.5), np.radians((np.arange(16) + 0.5) * 22.5),
                       indexing="ij")
    d = np.stack([np.cos(t), np.sin(t) * np.cos(p), np.sin(t) * np.sin(p)], axis=-1).reshape(-1, 3) @ rot.T
    hits = (n @ [0.0, 0.0, -6.0]) / (d @ n)
    assert hits.min() == pytest.approx(5.9660, abs=1e-4) and int(np.argmin(hits)) == 3 * 16 + 8
    assert out["first_return_range"][0] == pytest.approx(hits.min(), abs=1e-4)
    assert int(np.flatnonzero(out["hit_count"][0])[0]) == 109


@pytest.mark.parametrize("bearing, step", [(40.8, 31), (-9.6, 3)])
def test_msis_step_of_a_target_on_a_tilted_mount(bearing, step):
    # Sector of 90 deg about +30 deg, steps of 1.8 deg: the first pass turns from the port edge -15 deg towards
    # starboard, step k at -15 + 1.8 k (k = 0..50), then back. Rays at -0.75, -0.25, 0.25, 0.75 deg about the head
    # axis: a 10 cm pole at 6.025 m (+-0.48 deg) at +40.8 deg is seen by step (40.8 + 15) / 1.8 = 31 only, at -9.6
    # deg by step 3 only, in bin floor((6.025 - 0.5) / 0.05) = 110.
    cfg = MsisConfig(horizontal_beamwidth=2.0, vertical_beamwidth=20.0, horizontal_rays=4, vertical_rays=8,
                     step_angle=1.8, sector_width=90.0, sector_centre=30.0, min_range=0.5, max_range=10.5,
                     range_bins=200, noise_level=None, volume_scattering=None, jitter=False)
    assert np.degrees(cfg.head_angles([0, 1, 50, 51])) == pytest.approx([-15.0, -13.2, 75.0, 73.2])
    b = math.radians(bearing)
    scene, pose = target([6.025 * math.cos(b), -6.025 * math.sin(b), 0.0], 0.1, 1.0)
    res = Msis(cfg, device="cpu").render_sweep(scene, pose, sweep=0)
    assert np.flatnonzero(res.hit_count.sum(axis=1)).tolist() == [step]
    assert math.degrees(res.head_angle[step]) == pytest.approx(bearing, abs=1e-4)
    assert peak(res.clean_intensity) == (step, 110)


def test_flat_array_steering_past_endfire_is_refused_and_a_lens_fan_sees_behind_broadside():
    # A 200 deg fan (100 beams of 2 deg, + starboard) with the device chain's bearing point spread: a flat array
    # steers only within +-90 deg (its beams past end-fire had no kernel tap on their own bearing, so a target at
    # 95 deg gave an empty image); it is refused naming beam_steering. With 'constant' steering (a lens) the target
    # at 95 deg, 5.05 m lands in beam (95 + 100) / 2 = 97.5 -> 97 and bin (5.05 - 0.5) / 0.1 = 45.5 -> 45.
    fan = dict(model="device", horizontal_fov=200.0, vertical_fov=10.0, min_range=0.5, max_range=10.5, n_beams=100,
               range_bins=100, rays_per_beam=4, elevation_rays=16, noise_level=None, volume_scattering=None,
               jitter=False, beam_width=2.0, bandwidth=15000.0)
    with pytest.raises(ConfigError, match=r"beam_steering.*horizontal_fov"):
        ImagingSonarConfig(beam_steering="flat_array", **fan)
    ImagingSonarConfig(beam_steering="flat_array", **{**fan, "horizontal_fov": 180.0, "n_beams": 90})
    ImagingSonarConfig(beam_steering="flat_array", **{**fan, "beam_width": 0.0})   # no steered point spread
    cfg = ImagingSonarConfig(beam_steering="constant", **fan)
    b = math.radians(95.0)
    scene, pose = target([5.05 * math.cos(b), -5.05 * math.sin(b), 0.0], 0.1, 1.0)
    assert peak(ImagingSonar(cfg, device="cpu").render(scene, pose).numpy()["clean_intensity"][0]) == (45, 97)


def test_a_mount_offset_beyond_float32_is_refused_by_the_rig_before_anything_is_written(tmp_path):
    # A mount z of 1e39 m is finite in float64 but infinite in the float32 poses the sensors render: it used to pass
    # the rig check, write the dataset's manifest, then fail in the first render naming "PoseSensor.measure poses:
    # pose 0" instead of the rig key.
    import yaml

    from oceansim_py.cli import main
    from oceansim_py.dataset.rig import parse_rig

    sensor = {"name": "p", "type": "pose", "rate_hz": 10.0, "mount": [0.5, 0.0, 1e39, 0, 30, 90],
              "config": {"noise": False}, "products": ["matrix"]}
    rig = {"name": "m", "scene": "tank", "seed": 1, "duration": 0.4, "shard_size": 2, "batch_size": 2,
           "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [2.0, 0.0, -1.5], "speed": 1.0},
           "sensors": [sensor]}
    with pytest.raises(ConfigError, match=r"sensors.*mount.*float32"):
        parse_rig(rig, "rig.yaml")
    (tmp_path / "rig.yaml").write_text(yaml.safe_dump(rig))
    assert main(["generate", "--rig", str(tmp_path / "rig.yaml"), "--out", str(tmp_path / "ds"), "--no-progress",
                 "--device", "cpu"]) != 0
    assert not (tmp_path / "ds").exists()
    sensor["mount"] = [0.5, 0.0, 3e38, 0, 30, 90]          # within float32: accepted
    parse_rig(rig, "rig.yaml")


def test_sidescan_ground_range_of_a_floor_target_from_a_yawed_vehicle():
    # Level sensor (mounted 0.4 m ahead, 0.3 m down, not tilted) on a vehicle yawed -63 deg, 6 m over a floor of
    # mu 1e-6; a 0.2 m bright plate (mu 1) lies on it 9.025 m to port or 12.975 m to starboard. The first return
    # (altitude) is the nadir echo, 6 m; the plate's slant range is sqrt(g^2 + 36) = 10.837 / 14.295 m and the
    # flat-bottom correction puts it back at ground range g (ground bin centres (k + 1/2) 0.05 m from nadir:
    # 9.025 m is bin 180). Centroids of the plate's echo within 3 cm (ray sampling); the other side stays dark.
    vehicle = ((3.0, 2.0, -10.0), (0.0, 0.0, -63.0))
    pose, o, rot = sensor_frame(vehicle, ((0.4, 0.0, -0.3), (0.0, 0.0, 0.0)))
    cfg = SidescanSonarConfig(along_track_beamwidth=0.25, vertical_beamwidth=85.0, depression=47.5, min_range=0.5,
                              max_range=20.5, range_bins=400, along_track_rays=1, across_track_rays=2048)
    floor = ("floor", rect(o - [0.0, 0.0, 6.0], [0, 0, 1], [1, 0, 0], 200.0, 200.0), 1e-6)
    for g, side in ((9.025, 0), (-12.975, 1)):
        spot = rect(o + rot @ [0.0, g, -6.0 + 0.002], [0, 0, 1], [1, 0, 0], 0.2, 0.2)
        out = SidescanSonar(cfg, device="cpu").render(make_scene(("t", spot, 1.0), floor), pose).numpy()
        assert out["altitude"][0] == pytest.approx(6.0, abs=1e-3)
        ground, slant = out["ground_intensity"][0][:, side], out["clean_intensity"][0][:, side]
        assert np.sum(ground * out["ground_ranges"]) / ground.sum() == pytest.approx(abs(g), abs=0.03)
        assert np.sum(slant * out["ranges"]) / slant.sum() == pytest.approx(math.hypot(g, 6.0), abs=0.03)
        assert out["clean_intensity"][0][:, 1 - side].max() < 1e-3 * slant.max()   # the faint floor alone
    assert out["ground_ranges"][180] == pytest.approx(9.025)
