"""Statements of the design and physics cards (shared/DESIGN.md, shared/PHYSICS.md) checked the way an outside test
would, through the public API, against numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np

import oceansim_py as osp
from conftest import make_scene, quad

LEVEL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def test_node_exposes_the_cards_world_transform_and_semantic_label() -> None:
    # DESIGN.md Layout: "Node (path, world transform, mesh, material, semantic label, id)".
    scene = make_scene(("plate", quad([2.0, 0.0, -1.0], [-1.0, 0.0, 0.0], 1.0), 0.5))
    node = scene.node("/World/plate")
    assert node.path == "/World/plate" and node.semantic_label == "plate" and node.id >= 0
    assert node.world_transform.shape == (4, 4) and np.array_equal(node.world_transform, node.transform)


def test_navigation_sensors_take_the_uniform_render_call() -> None:
    # DESIGN.md Data flow: "poses (B,7) -> Sensor.render(scene, poses)". Barometer at 10 m depth, noise off:
    # P = 101325 + 1025 * 9.80665 * 10 = 201843.1625 Pa; GPS below its 0.5 m threshold: no fix; pose: 4 x 4.
    scene = make_scene(("floor", quad([0.0, 0.0, -30.0], [0.0, 0.0, 1.0], 50.0), 0.5))
    poses = np.array([[0.0, 0.0, -10.0, 0.0, 0.0, 0.0, 1.0], [1.0, 0.0, -0.2, 0.0, 0.0, 0.0, 1.0]])
    baro = osp.Barometer(osp.BarometerConfig(noise=False)).render(scene, poses).numpy()
    np.testing.assert_allclose(baro["pressure"], [101325.0 + 1025.0 * 9.80665 * 10.0, 101325.0 + 1025.0 * 9.80665 * 0.2])
    gps = osp.GPS(osp.GPSConfig(noise=False)).render(scene, poses).numpy()
    assert gps["fix"].tolist() == [False, True]
    pose = osp.PoseSensor(osp.PoseSensorConfig(noise=False)).render(scene, poses, frame_index=3).numpy()
    assert pose["matrix"].shape == (2, 4, 4) and np.allclose(pose["matrix"][0, :3, 3], [0.0, 0.0, -10.0])


def test_profiling_result_carries_bearings_positive_to_starboard() -> None:
    # DESIGN.md Conventions: results carry `ranges` and `bearings`, bearing + starboard, column 0 most port. A level
    # profiler 4 m over a flat floor: beam j at theta_j from nadir sees the floor at 4 / cos(theta_j) and its sounding
    # at y = -4 tan(theta_j) (starboard is -y in FLU).
    scene = make_scene(("floor", quad([0.0, 0.0, -4.0], [0.0, 0.0, 1.0], 60.0), 0.5))
    config = osp.ProfilingSonarConfig(swath_width=60.0, n_beams=6, across_rays_per_beam=3, min_range=0.5,
                                      max_range=10.0, range_bins=95)
    result = osp.ProfilingSonar(config).render(scene, LEVEL)
    theta = result.bearings
    assert np.array_equal(theta, result.beam_angles)
    np.testing.assert_allclose(theta, np.radians(-30.0 + (np.arange(6) + 0.5) * 10.0), atol=1e-6)
    out = result.numpy()
    np.testing.assert_allclose(out["bottom_range"][0], 4.0 / np.cos(theta), rtol=2e-3)
    np.testing.assert_allclose(out["point_world"][0][:, 1], -4.0 * np.tan(theta), atol=0.02)


def test_every_sensor_accepts_device() -> None:
    # DESIGN.md Devices: "Every public call accepts `device`" and None means cuda:0 if Warp sees a GPU, else cpu.
    from oceansim_py.sensors.magnetometer import Magnetometer

    for sensor_class in (osp.IMU, osp.GPS, osp.Barometer, osp.PoseSensor, Magnetometer):
        assert str(sensor_class(device="cpu").device) == "cpu"
        assert str(sensor_class().device) in ("cpu", "cuda:0")
    try:
        osp.IMU(device="tpu:7")
    except osp.ConfigError as exc:
        assert "tpu:7" in str(exc)
    else:
        raise AssertionError("an unknown device must be a ConfigError")


def test_dvl_altitude_is_the_sensor_frame_vertical_mean_and_the_adaptive_rate_is_continuous() -> None:
    # PHYSICS.md §5: altitude = mean vertical component of the valid beam ranges, here along the sensor's z axis
    # (docs/PHYSICS.md §5, as built). Floor 5 m below, 22.5 deg "X" beams, noise off, at rest.
    # Level: r_k = 5 / cos 22.5 = 5.4120 m, altitude 5. Pitched 10 deg down: beam k's downward world component is
    # cos a cos p -+ sin a cos 45 sin p = 0.909844 -+ 0.046989, so r = 5 / 0.862855 = 5.79472 (two beams) and
    # 5 / 0.956833 = 5.22558 (two), altitude = cos a * mean(r) = 0.923880 * 5.51015 = 5.09071 m (+1.8 %).
    scene = make_scene(("floor", quad([0.0, 0.0, -5.0], [0.0, 0.0, 1.0], 60.0), 0.5))
    dvl = osp.DVL(osp.DVLConfig.preset("dvl_22_5deg", noise=False))
    level = dvl.render(scene, LEVEL, velocities=[0.0, 0.0, 0.0]).numpy()
    np.testing.assert_allclose(level["beam_range"][0], 5.0 / math.cos(math.radians(22.5)), rtol=1e-5)
    np.testing.assert_allclose(level["altitude"], [5.0], rtol=1e-5)
    pitched = dvl.render(scene, osp.pose_from_euler(0, 0, 0, 0, 10, 0), velocities=[0.0, 0.0, 0.0]).numpy()
    np.testing.assert_allclose(np.sort(pitched["beam_range"][0]), [5.22558, 5.22558, 5.79472, 5.79472], atol=2e-4)
    np.testing.assert_allclose(pitched["altitude"], [5.09071], atol=2e-4)
    # Adaptive rate (OceanSim's, made continuous): 100 Hz to 7.5 m, c / 2h = 1500 / 40 = 37.5 Hz at 20 m, 15 Hz at
    # the 50 m knee, then a ramp to 5 Hz at 60 m (10 Hz at 55 m), 5 Hz beyond; no jump anywhere.
    np.testing.assert_allclose(osp.adaptive_rate_hz([1.0, 7.5, 20.0, 50.0, 55.0, 60.0, 200.0]),
                               [100.0, 100.0, 37.5, 15.0, 10.0, 5.0, 5.0], rtol=1e-9)
    h = np.linspace(0.1, 100.0, 100001)
    assert np.abs(np.diff(osp.adaptive_rate_hz(h))).max() < 0.1


def test_imaging_sonar_config_takes_a_range_resolution_in_place_of_range_bins(tmp_path) -> None:
    # Issue 3: "range bins (or range resolution)". 1-9 m at 0.1 m = 80 bins; the OceanSim preset's 0.2-3 m at
    # 0.008 m = 350 bins (its own count); both at once are refused.
    c = osp.ImagingSonarConfig.from_dict({"min_range": 1.0, "max_range": 9.0, "range_resolution": 0.1})
    assert c.range_bins == 80 and abs(c.range_resolution - 0.1) < 1e-12
    assert osp.ImagingSonarConfig.preset("oceansim_default", range_resolution=0.008).range_bins == 350
    path = tmp_path / "fls.yaml"
    path.write_text("preset: holoocean_default\nmax_range: 20.1\nrange_resolution: 0.05\n")
    assert osp.ImagingSonarConfig.from_yaml(path).range_bins == 400   # (20.1 - 0.1) / 0.05
    for bad in ({"range_resolution": 0.1, "range_bins": 10}, {"range_resolution": -0.1}, {"range_resolution": "x"}):
        try:
            osp.ImagingSonarConfig.from_dict(bad)
        except osp.ConfigError as exc:
            assert "range_resolution" in str(exc)
        else:
            raise AssertionError(f"{bad} must be a ConfigError")


def test_imaging_sonar_config_constructor_takes_a_range_resolution() -> None:
    # the keyword form: ImagingSonarConfig(min_range=1, max_range=9, range_resolution=0.1) has 80 bins of 0.1 m, and
    # replace() keeps the bin count (the instance's range_resolution is the read-only bin size)
    c = osp.ImagingSonarConfig(min_range=1.0, max_range=9.0, range_resolution=0.1)
    assert c.range_bins == 80 and abs(c.range_resolution - 0.1) < 1e-12
    assert c.replace(max_range=5.0).range_bins == 80
    for bad in ({"range_resolution": 0.1, "range_bins": 10}, {"range_resolution": -0.1}):
        try:
            osp.ImagingSonarConfig(**bad)
        except osp.ConfigError as exc:
            assert "range_resolution" in str(exc)
        else:
            raise AssertionError(f"{bad} must be a ConfigError")


def test_render_sonar_cli_takes_set_range_resolution(tmp_path) -> None:
    # the same through the CLI's --set: 0.2-3 m (oceansim_default) at 0.02 m = 140 range rows in the raw image
    from oceansim_py.cli import main

    out = tmp_path / "fls"
    assert main(["render", "sonar", "--scene", "tank", "--device", "cpu", "--preset", "oceansim_default",
                 "--set", "range_resolution=0.02", "--set", "n_beams=16", "--set", "rays_per_beam=1",
                 "--set", "elevation_rays=8", "--out", str(out)]) == 0
    raw = [np.load(p) for p in out.glob("*.npy")]
    assert raw and any(a.shape[-2:] == (140, 16) for a in raw)


def _fls(**overrides):
    values = dict(model="peer", horizontal_fov=60.0, vertical_fov=20.0, min_range=1.0, max_range=9.0, n_beams=30,
                  range_bins=80, rays_per_beam=4, elevation_rays=40, absorption=0.0, normalisation="none",
                  multiplicative_sigma=0.0, additive_sigma=0.0, additive_range_scaled=False)
    values.update(overrides)
    return osp.ImagingSonarConfig(**values)


def test_fls_image_of_a_wall_is_the_cards_sum_ray_by_ray() -> None:
    # PHYSICS.md §1, every ray by hand: b_i = -30 deg + (i + 1/2) 0.5 deg (120 rays), e_k = -10 deg + (k + 1/2) 0.5 deg
    # (40), d = (cos e cos b, -cos e sin b, sin e). A wall x = 5 (mu 0.5) is met at r = 5 / (cos b cos e) with
    # cos psi = cos b cos e; s = mu cos psi dOmega 10^(-2 alpha r / 10) (1 / r^2 with spreading), dOmega = cos e db de;
    # range bin floor((r - 1) / 0.1), beam floor((b + 30 deg) / 2 deg); sum, or mean over the bin's rays; row and
    # global normalisation divide by the row / image maximum.
    scene = make_scene(("wall", quad([5.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 40.0), 0.5))
    base = _fls()
    b, e = np.meshgrid(base.ray_bearings(), base.ray_elevations(), indexing="ij")
    r = 5.0 / (np.cos(b) * np.cos(e))
    s = 0.5 * np.cos(b) * np.cos(e) * np.cos(e) * math.radians(0.5) * math.radians(0.5)
    cell = (np.floor((r - 1.0) / 0.1).astype(int), np.floor((b + math.radians(30.0)) / math.radians(2.0)).astype(int))

    def binned(values: np.ndarray) -> np.ndarray:
        out = np.zeros((80, 30))
        np.add.at(out, cell, values)
        return out

    hits = binned(np.ones_like(s))
    total = binned(s)
    cases = {
        "sum": (_fls(), total),
        "absorption 0.5 dB/m": (_fls(absorption=0.5), binned(s * 10 ** (-2 * 0.5 * r / 10))),
        "spreading": (_fls(spreading=True), binned(s / r**2)),
        "mean": (_fls(aggregation="mean"), np.where(hits > 0, total / np.maximum(hits, 1), 0.0)),
        "row": (_fls(normalisation="row"), total / np.maximum(total.max(axis=1, keepdims=True), 1e-30)),
        "global": (_fls(normalisation="global"), total / total.max()),
    }
    for name, (config, expected) in cases.items():
        got = osp.ImagingSonar(config).render(scene, LEVEL).numpy()
        np.testing.assert_allclose(got["clean_intensity"][0], expected, rtol=2e-5, atol=1e-6 * expected.max(),
                                   err_msg=name)
        assert np.array_equal(got["hit_count"][0], hits), name
    # a back face returns the same (two-sided, cos psi >= 0), never negative energy
    flipped = make_scene(("wall", quad([5.0, 0.0, 0.0], [1.0, 0.0, 0.0], 40.0), 0.5))
    np.testing.assert_allclose(osp.ImagingSonar(base).render(flipped, LEVEL).numpy()["clean_intensity"][0], total,
                               rtol=2e-5, atol=1e-6 * total.max())


def test_fls_starboard_target_lands_right_of_centre_in_polar_and_fan_images() -> None:
    # A 0.5 m plate 5 m ahead, 2 m to starboard (y = -2): bearing atan(2 / 5) = +21.8 deg -> beam
    # floor((21.8 + 30) / 2) = 25 of 30 (plate edges 19.0-24.4 deg: beams 24-27 at most). In the fan image (width
    # 200 px over +-9 sin 30 = +-4.5 m: 22.2 px/m, sonar at the bottom centre) it lies at column 100 + 2 * 22.2 = 144,
    # 5 m up from the bottom row.
    scene = make_scene(("plate", quad([5.0, -2.0, 0.0], [-1.0, 0.0, 0.0], 0.5), 0.5))
    result = osp.ImagingSonar(_fls()).render(scene, LEVEL)
    cols = np.flatnonzero(result.numpy()["clean_intensity"][0].sum(axis=0))
    assert cols.min() >= 24 and cols.max() <= 27 and 25 in cols
    assert result.bearings[25] > 0 and result.bearings[0] < 0       # + starboard, column 0 most port
    fan = result.to_cartesian(200)[0]
    rows, xs = np.nonzero(fan > 0)
    assert abs(xs.mean() - 144.4) < 3.0
    px = 200 / 9.0
    assert abs((fan.shape[0] - rows.mean()) / px - 5.0) < 0.2


def test_modem_without_sample_times_says_times_are_needed() -> None:
    # render(scene, poses) of a modem, or measure(poses, None): the error said "time 0 is nan"; it must ask for times
    from oceansim_py.sensors.acoustic_modem import AcousticModem, AcousticModemConfig

    scene = make_scene(("floor", quad([0.0, 0.0, -30.0], [0.0, 0.0, 1.0], 400.0), 0.5))
    modem = AcousticModem(AcousticModemConfig(node_positions=((150.0, 0.0, -10.0),)))
    for call in (lambda: modem.render(scene, LEVEL), lambda: modem.measure(LEVEL, None)):
        try:
            call()
        except osp.ConfigError as exc:
            assert "give times" in str(exc) and "nan" not in str(exc)
        else:
            raise AssertionError("a modem without sample times must be a ConfigError")
