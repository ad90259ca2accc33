"""Multibeam echosounder (issue 4): methods agree, point-target pulse and side lobes, speckle, absorption,
range window, message export, determinism, validation, CLI. CPU only, small scenes built in memory."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh
import warp as wp

import oceansim_py as osp
from oceansim_py.errors import ConfigError
from oceansim_py.io.sonar_messages import DTYPE_FLOAT32, DTYPE_UINT8
from oceansim_py.runtime import set_cpu_threads
from oceansim_py.scene import Node, Scene, TriangleMesh
from oceansim_py.kernels import multibeam as mbk
from oceansim_py.runtime import launch_1d
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig


def _material(reflectivity: float = 0.5) -> osp.Material:
    return osp.Material.from_properties("m", (0.5, 0.5, 0.5), reflectivity=reflectivity)


def _facet(x: float, y: float, z: float, half: float) -> TriangleMesh:
    """A square of side 2*half facing the -x direction, centred on (x, y, z)."""
    v = np.array([[x, y - half, z - half], [x, y + half, z - half], [x, y + half, z + half],
                  [x, y - half, z + half]], dtype=np.float64)
    return TriangleMesh(v, np.array([[0, 1, 2], [0, 2, 3]], dtype=np.int32))


def _scene(meshes: dict[str, TriangleMesh], reflectivity: float = 0.5) -> Scene:
    nodes = [Node("/W")] + [Node(f"/W/{name}", mesh=m, material=_material(reflectivity), label=name)
                            for name, m in meshes.items()]
    return Scene(nodes, device="cpu")


@pytest.fixture(scope="module")
def tank_scene() -> Scene:
    box = trimesh.creation.box(extents=(12.0, 12.0, 6.0))
    box.invert()
    cyl = trimesh.creation.cylinder(radius=0.5, height=3.0)
    cyl.apply_translation((4.0, 0.5, -1.5))
    return _scene({"tank": TriangleMesh(np.asarray(box.vertices), np.asarray(box.faces)),
                   "cylinder": TriangleMesh(np.asarray(cyl.vertices), np.asarray(cyl.faces))})


def _small_config(**kw) -> MultibeamSonarConfig:
    base = dict(fov=90.0, n_beams=64, beam_width=2.0, elevation_fov=20.0, rays_per_beam=16, max_range=8.0)
    base.update(kw)
    return MultibeamSonarConfig(**base)


LOOK_DOWN = osp.pose_from_euler(0.0, 0.0, 0.0, 0.0, 10.0, 0.0)

# A point target: a 1 cm facet on boresight, hit by the single ray of the centre beam only (beams 0.25 deg
# apart: neighbours pass 2.2 cm away at 5 m).
POINT_CONFIG = dict(fov=60.25, n_beams=241, beam_width=4.0, elevation_fov=0.5, rays_per_beam=1,
                    min_range=0.0, max_range=8.0, bandwidth=30e3, absorption=0.0)


# -- the two methods -----------------------------------------------------------------------------------------
def test_time_and_spectral_agree_on_tank_scene(tank_scene: Scene) -> None:
    sonar = MultibeamSonar(_small_config(), device="cpu")
    t = sonar.render(tank_scene, LOOK_DOWN, method="time").numpy()["time_series"]
    s = sonar.render(tank_scene, LOOK_DOWN, method="spectral").numpy()["time_series"]
    peak = np.abs(t).max()
    assert peak > 0
    assert np.count_nonzero(np.abs(t) > 1e-3 * peak) > 0.2 * t.size  # the tank fills most of the image
    assert np.abs(t - s).max() <= 1e-3 * peak


# -- point target ---------------------------------------------------------------------------------------------
def test_point_target_pulse_at_two_way_delay() -> None:
    cfg = MultibeamSonarConfig(**POINT_CONFIG, beam_pattern=False, sample_rate=120e3)
    res = MultibeamSonar(cfg, device="cpu").render(_scene({"dot": _facet(5.0, 0.0, 0.0, 0.005)}), np.array(
        [0, 0, 0, 0, 0, 0, 1.0])).numpy()
    p = res["time_series"][0]
    energy = (np.abs(p) ** 2).sum(axis=0)
    assert np.flatnonzero(energy).tolist() == [120]  # only the centre beam
    tau = 2 * 5.0 / 1500.0
    t = cfg.t0 + np.arange(cfg.n_samples) / cfg.fs
    series = p[:, 120]
    n_peak = int(np.argmax(np.abs(series)))
    assert abs(t[n_peak] - tau) <= 0.5 / cfg.fs
    # the whole pulse is A exp(-b^2 (t - tau)^2): one complex constant A for every sample within 3 sigma
    near = np.abs(t - tau) < 3.0 / (cfg.bandwidth * math.sqrt(2.0))
    ratio = series[near] / np.exp(-(cfg.bandwidth * (t[near] - tau)) ** 2)
    assert near.sum() >= 15
    assert np.abs(ratio - ratio[0]).max() <= 2e-3 * np.abs(ratio[0])


def test_point_scatterer_mean_intensity_matches_the_model() -> None:
    # E|p(tau)|^2 = E|a|^2 exp(-4 alpha_Np r) / r^4 (S0 b / sqrt(pi))^2 with E|a|^2 = mu cos^2(psi) r^2 dtheta dphi;
    # tau = 2 * 5 / 1500 s falls exactly on sample 200 at fs = b = 30 kHz
    cfg = MultibeamSonarConfig(**{**POINT_CONFIG, "absorption": 0.5}, beam_pattern=False)
    frames = 400
    inten = MultibeamSonar(cfg, device="cpu").render(_scene({"dot": _facet(5.0, 0.0, 0.0, 0.005)}, 0.5),
                                                     np.tile([0, 0, 0, 0, 0, 0, 1.0], (frames, 1))).numpy()
    peak = inten["intensity"][:, 200, 120].astype(np.float64)
    r, mu = 5.0, 0.5
    d_theta, d_phi = math.radians(60.25 / 241), math.radians(0.5)
    alpha_np = 0.5 * math.log(10) / 20
    s0 = 10 ** (220 / 20) * 30e3 / math.sqrt(math.pi)
    expected = mu * r**2 * d_theta * d_phi * math.exp(-4 * alpha_np * r) / r**4 * s0**2
    assert peak.mean() == pytest.approx(expected, rel=0.15)  # exponential statistics: 5 % std over 400 frames
    assert peak.std() / peak.mean() == pytest.approx(1.0, abs=0.15)


def test_point_target_side_lobes_after_beam_mixing() -> None:
    cfg = MultibeamSonarConfig(**POINT_CONFIG, beam_pattern=True)
    res = MultibeamSonar(cfg, device="cpu").render(_scene({"dot": _facet(5.0, 0.0, 0.0, 0.005)}),
                                                   np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
    inten = res["intensity"][0]
    row = inten[int(np.argmax(inten.max(axis=1)))]
    assert int(np.argmax(row)) == 120
    db = 10 * np.log10(row / row[120])
    right = db[121:]
    first_null = int(np.argmax(np.diff(right) > 0))  # beams past the main lobe's first minimum
    lobe = first_null + int(np.argmax(right[first_null:first_null + 40]))
    assert -14.3 <= right[lobe] <= -12.3
    # first side lobe of sin(x)/x at x = 4.493: sin(theta) = 4.493 theta_bw / (0.884 pi), 0.25 deg per beam
    expected = math.degrees(math.asin(4.493 * math.radians(4.0) / (0.884 * math.pi))) / 0.25
    assert abs((lobe + 1) - expected) <= 1.0
    # signed weights: symmetric about the target
    assert np.allclose(row[120 - 40:120], row[121:161][::-1], rtol=1e-3)


# -- speckle -------------------------------------------------------------------------------------------------
def test_speckle_contrast_of_a_rough_plane_is_rayleigh() -> None:
    floor = TriangleMesh(np.array([[-50, -50, -3], [50, -50, -3], [50, 50, -3], [-50, 50, -3]], float),
                         np.array([[0, 1, 2], [0, 2, 3]], dtype=np.int32))
    cfg = MultibeamSonarConfig(fov=20.0, n_beams=16, beam_width=1.25, elevation_fov=20.0, rays_per_beam=200,
                               azimuth_rays_per_beam=8, bandwidth=3e3, min_range=3.0, max_range=8.0,
                               beam_pattern=False)
    pose = osp.pose_from_euler(0.0, 0.0, 0.0, 0.0, 30.0, 0.0)
    frames = 32
    inten = MultibeamSonar(cfg, device="cpu").render(_scene({"floor": floor}), np.repeat(pose[None], frames, 0),
                                                     frame_index=100).numpy()["intensity"]
    mean = inten.mean(axis=0)
    cells = mean > 0.1 * mean.max()
    assert cells.sum() >= 100
    z = inten[:, cells] / mean[cells]
    contrast = z.std() / z.mean()
    assert 0.9 <= contrast <= 1.1


# -- physics of amplitude and range -------------------------------------------------------------------------
def test_absorption_slope_is_two_alpha_r() -> None:
    scene = _scene({"near": _facet(4.0, 0.0, 0.0, 0.005),
                    "far": _facet(8.0 * math.cos(math.radians(10)), -8.0 * math.sin(math.radians(10)), 0.0, 0.005)})
    pose = np.array([0, 0, 0, 0, 0, 0, 1.0])
    cfg = MultibeamSonarConfig(**{**POINT_CONFIG, "max_range": 10.0}, beam_pattern=False)
    clear = MultibeamSonar(cfg, device="cpu").render(scene, pose).numpy()["intensity"][0]
    lossy = MultibeamSonar(cfg.replace(absorption=1.0), device="cpu").render(scene, pose).numpy()["intensity"][0]
    for beam, r in ((120, 4.0), (160, 8.0)):  # 10 deg starboard = 40 beams
        loss_db = 10 * math.log10(lossy[:, beam].max() / clear[:, beam].max())
        assert loss_db == pytest.approx(-2.0 * 1.0 * r, abs=0.01)


def test_elevation_directivity_weights_a_ray_by_the_line_array_pattern() -> None:
    # three elevation rays at -4, 0, +4 deg; the facet catches only the +4 deg ray of the centre beam
    el = math.radians(4.0)
    scene = _scene({"dot": _facet(5.0 * math.cos(el), 0.0, 5.0 * math.sin(el), 0.005)})
    cfg = MultibeamSonarConfig(**{**POINT_CONFIG, "elevation_fov": 12.0, "rays_per_beam": 3}, beam_pattern=False)
    pose = np.array([0, 0, 0, 0, 0, 0, 1.0])
    flat = MultibeamSonar(cfg, device="cpu").render(scene, pose).numpy()["intensity"][0]
    shaped = MultibeamSonar(cfg.replace(elevation_directivity=True), device="cpu").render(scene, pose).numpy()
    x = math.pi * 0.884 / math.radians(12.0) * math.sin(el)
    assert shaped["intensity"][0].max() / flat.max() == pytest.approx((math.sin(x) / x) ** 2, rel=1e-4)


def test_torch_view_is_complex64(tank_scene: Scene) -> None:
    torch = pytest.importorskip("torch")
    res = MultibeamSonar(_small_config(), device="cpu").render(tank_scene, LOOK_DOWN)
    t = res.torch()
    assert t["time_series"].dtype == torch.complex64
    assert np.array_equal(t["time_series"].numpy(), res.numpy()["time_series"])


def test_nothing_beyond_max_range() -> None:
    wall = {"wall": _facet(12.0, 0.0, 0.0, 30.0)}
    cfg = _small_config(max_range=10.0, beam_pattern=False)
    res = MultibeamSonar(cfg, device="cpu").render(_scene(wall), np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
    assert res["ranges"][-1] <= 10.0
    assert not np.any(res["intensity"])
    near = MultibeamSonar(cfg, device="cpu").render(_scene({"wall": _facet(9.0, 0.0, 0.0, 30.0)}),
                                                    np.array([0, 0, 0, 0, 0, 0, 1.0])).numpy()
    first = int(np.argmax(near["intensity"][0].max(axis=1) > 0))
    assert near["ranges"][first] == pytest.approx(9.0 - cfg.pulse_half_width * cfg.range_resolution,
                                                  abs=cfg.range_resolution)


# -- export --------------------------------------------------------------------------------------------------
def test_projected_sonar_image_is_self_consistent(tank_scene: Scene) -> None:
    res = MultibeamSonar(_small_config(), device="cpu").render(tank_scene, np.stack([LOOK_DOWN, LOOK_DOWN]))
    msg = res.to_projected_sonar_image(frame=1, stamp=12.25)
    n_r, n_b = len(res.ranges), len(res.bearings)
    img = msg["image"]
    assert img["dtype"] == DTYPE_FLOAT32 and img["beam_count"] == n_b and img["is_bigendian"] is False
    assert len(img["data"]) == n_r * n_b * 4
    decoded = np.frombuffer(img["data"], dtype="<f4").reshape(n_r, n_b)
    assert np.array_equal(decoded, res.intensity.numpy()[1])
    assert np.all(np.diff(msg["ranges"]) > 0) and len(msg["ranges"]) == n_r
    d = np.array([[v["x"], v["y"], v["z"]] for v in msg["beam_directions"]])
    assert d.shape == (n_b, 3)
    assert np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-6)
    # message frame: Z forward, X up, Y starboard; column 0 is the most-port beam (bearing -44.3 deg)
    assert d[0, 1] == pytest.approx(math.sin(res.bearings[0])) and d[0, 1] < 0 and np.all(d[:, 0] == 0)
    assert msg["header"]["stamp"] == {"sec": 12, "nanosec": 250_000_000}
    assert msg["ping_info"]["frequency"] == 900e3 and len(msg["ping_info"]["rx_beamwidths"]) == n_b
    assert msg["ping_info"]["rx_beamwidths"][0] == pytest.approx(math.radians(2.0))
    u8 = res.to_projected_sonar_image(dtype="uint8")
    assert u8["image"]["dtype"] == DTYPE_UINT8 and len(u8["image"]["data"]) == n_r * n_b
    assert max(u8["image"]["data"]) == 255


def test_images_and_files(tank_scene: Scene, tmp_path) -> None:
    res = MultibeamSonar(_small_config(), device="cpu").render(tank_scene, LOOK_DOWN)
    u8 = res.to_uint8()
    assert u8.shape == (1, res.config.n_samples, 64) and u8.max() == 255
    fan = res.to_cartesian(200)
    assert fan.shape[0] == 1 and fan.shape[2] == 200 and fan.max() > 0
    import imageio.v3 as iio

    assert iio.imread(res.save_png(tmp_path / "p.png")).shape == u8.shape[1:]
    assert iio.imread(res.save_png(tmp_path / "f.png", fan_width=200)).shape == fan.shape[1:]


# -- determinism ---------------------------------------------------------------------------------------------
def test_same_seed_same_ping_other_seed_other_ping(tank_scene: Scene) -> None:
    cfg = _small_config()
    a = MultibeamSonar(cfg, device="cpu").render(tank_scene, LOOK_DOWN).numpy()["time_series"]
    b = MultibeamSonar(cfg, device="cpu").render(tank_scene, LOOK_DOWN).numpy()["time_series"]
    c = MultibeamSonar(cfg.replace(seed=7), device="cpu").render(tank_scene, LOOK_DOWN).numpy()["time_series"]
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)
    # same geometry, other speckle: mean intensity over the image within 20 %
    assert np.mean(np.abs(c) ** 2) == pytest.approx(np.mean(np.abs(a) ** 2), rel=0.2)


@pytest.mark.parametrize("method", ["time", "spectral"])
def test_batch_equals_single_renders_bit_for_bit(tank_scene: Scene, method: str) -> None:
    cfg = _small_config()
    poses = np.stack([osp.pose_from_euler(0.3 * i, -0.2 * i, 0.1, 0.0, 10.0 + 5 * i, 7.0 * i) for i in range(3)])
    sonar = MultibeamSonar(cfg, device="cpu")
    try:
        set_cpu_threads(2)
        batch = sonar.render(tank_scene, poses, frame_index=5, method=method).numpy()["time_series"]
        set_cpu_threads(1)
        singles = [sonar.render(tank_scene, poses[i], frame_index=5 + i, method=method).numpy()["time_series"][0]
                   for i in range(3)]
    finally:
        set_cpu_threads(None)
    for i in range(3):
        assert np.array_equal(batch[i], singles[i])
    assert not np.array_equal(batch[0], batch[1])


def test_mixing_kernel_matches_the_weight_matrix_product() -> None:
    """The fixed-order mixing kernel equals W @ p per sample (float64 reference), skipping zero beams exactly."""
    cfg = MultibeamSonarConfig(fov=60.0, n_beams=43, beam_width=4.0)
    rng = np.random.default_rng(3)
    raw = (rng.standard_normal((2, 7, 43)) + 1j * rng.standard_normal((2, 7, 43))).astype(np.complex64)
    raw[:, :, :5] = 0  # leading / trailing zero beams and an all-zero sample
    raw[:, :, 33:] = 0
    raw[1, 4] = 0
    pattern, inv_norm = cfg.beam_pattern_terms()
    dev = "cpu"
    raw_wp = wp.array(raw.view(np.float32).reshape(2, 7, 43, 2), dtype=wp.vec2, device=dev)
    count = wp.empty(14, dtype=wp.int32, device=dev)
    beams = wp.empty((14, 43), dtype=wp.int32, device=dev)
    launch_1d(mbk.multibeam_nonzero_kernel, 14, [raw_wp, 43, 7, count, beams], dev)
    assert count.numpy()[0] == 28 and beams.numpy()[0, :28].tolist() == list(range(5, 33))
    assert count.numpy()[7 + 4] == 0
    ts = wp.empty((2, 7, 43), dtype=wp.vec2, device=dev)
    inten = wp.empty((2, 7, 43), dtype=wp.float32, device=dev)
    db = wp.empty((2, 7, 43), dtype=wp.float32, device=dev)
    padded = np.concatenate([pattern, np.zeros(mbk.MIX_BLOCK)]).astype(np.float32)
    n_blocks = -(-43 // mbk.MIX_BLOCK)  # the last block is partial
    launch_1d(mbk.multibeam_mix_kernel, 2 * 7 * n_blocks,
              [raw_wp, count, beams, wp.array(padded, device=dev), wp.array(inv_norm.astype(np.float32), device=dev),
               1, 43, 7, n_blocks, ts, inten, db], dev)
    expected = np.einsum("ji,bni->bnj", cfg.beam_weights(), raw.astype(np.complex128))
    got = ts.numpy().view(np.complex64)[..., 0]
    assert np.allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert np.all(got[1, 4] == 0) and np.all(db.numpy()[1, 4] == -300.0)
    assert np.allclose(inten.numpy(), np.abs(expected) ** 2, rtol=1e-4, atol=1e-5)


def test_beam_weights_are_signed_and_normalised() -> None:
    cfg = MultibeamSonarConfig(fov=60.0, n_beams=61, beam_width=4.0)
    w = cfg.beam_weights()
    assert np.allclose((w ** 2).sum(axis=1), 1.0)
    assert w.min() < 0  # the sinc's negative lobes are kept
    # B(theta) at the -3 dB half width is 1/sqrt(2) of B(0)
    x = math.pi * 0.884 / math.radians(4.0) * math.sin(math.radians(2.0))
    assert math.sin(x) / x == pytest.approx(1 / math.sqrt(2), abs=0.01)


# -- config --------------------------------------------------------------------------------------------------
def test_presets() -> None:
    # The device-named presets are the device model (tests/test_acoustic_multibeam.py); DAVE's model files are
    # kept as "<device>_peer".
    assert MultibeamSonarConfig.preset_names() == ["blueview_p900", "blueview_p900_peer", "oculus_m1200d",
                                                   "oculus_m1200d_peer", "seabat_f50", "seabat_f50_peer"]
    p900 = MultibeamSonarConfig.preset("blueview_p900_peer")
    assert (p900.fov, p900.n_beams, p900.frequency, p900.bandwidth, p900.max_range, p900.source_level) == (
        90.0, 512, 900e3, 29.9e3, 10.0, 220.0)
    assert p900.fs == 29.9e3 and p900.n_samples == int((10.0 - 0.1) / (1500 / (2 * 29.9e3))) + 1
    m1200 = MultibeamSonarConfig.preset("oculus_m1200d_peer")
    assert (m1200.fov, m1200.n_beams, m1200.frequency, m1200.bandwidth) == (60.0, 256, 2.1e6, 265.5e3)
    f50 = MultibeamSonarConfig.preset("seabat_f50_peer")
    assert (f50.fov, f50.n_beams, f50.frequency) == (140.0, 256, 400e3)
    cfg = MultibeamSonarConfig.from_dict({"preset": "oculus_m1200d_peer", "max_range": 5.0, "method": "spectral"})
    assert cfg.max_range == 5.0 and cfg.method == "spectral" and cfg.n_beams == 256
    with pytest.raises(ConfigError, match="beam_widht"):
        MultibeamSonarConfig.from_dict({"beam_widht": 1.0})


@pytest.mark.parametrize("field, value", [("bandwidth", 0.0), ("bandwidth", -5.0), ("frequency", 0.0),
                                          ("frequency", -1.0), ("sample_rate", 10e3), ("max_range", 0.05),
                                          ("sample_rate", 1e12)])
def test_bad_config_names_the_field(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"MultibeamSonarConfig.{field}"):
        MultibeamSonarConfig(**{field: value})


def test_oversampling_beyond_the_cap_is_refused_with_the_valid_range() -> None:
    cfg = MultibeamSonarConfig()
    MultibeamSonarConfig(sample_rate=64.0 * cfg.bandwidth)   # the cap itself is accepted
    with pytest.raises(ConfigError, match=r"sample_rate: .* must be in \[bandwidth, 64 x bandwidth\]"):
        MultibeamSonarConfig(sample_rate=65.0 * cfg.bandwidth)


def test_max_range_beyond_buffers_is_refused_with_the_amount(tank_scene: Scene, monkeypatch) -> None:
    import oceansim_py.runtime as runtime

    monkeypatch.setattr(runtime, "available_memory_bytes", lambda device: 2**30)  # a 1 GiB device
    sonar = MultibeamSonar(MultibeamSonarConfig(max_range=2500.0), device="cpu")  # 99,663 samples x 512 beams
    with pytest.raises(ConfigError, match=r"max_range.*needs? 1\.[0-9]+ GiB"):
        sonar.render(tank_scene, LOOK_DOWN)
    with pytest.raises(ConfigError, match=r"MultibeamSonarConfig\.max_range: .* GiB per ping"):
        MultibeamSonarConfig(max_range=5.0e7)  # more samples x beams than a launch can index


def test_non_finite_pose_is_refused(tank_scene: Scene) -> None:
    bad = np.stack([LOOK_DOWN, LOOK_DOWN])
    bad[1, 0] = np.nan
    with pytest.raises(ConfigError, match="pose 1"):
        MultibeamSonar(_small_config(), device="cpu").render(tank_scene, bad)


# -- CLI -----------------------------------------------------------------------------------------------------
def test_cli_render_multibeam(tmp_path) -> None:
    from oceansim_py.cli import main

    box = trimesh.creation.box(extents=(12.0, 12.0, 6.0))
    box.invert()
    mesh_path = tmp_path / "tank.stl"
    box.export(mesh_path)
    out = tmp_path / "out"
    rc = main(["render", "multibeam", "--scene", str(mesh_path), "--preset", "blueview_p900", "--pose",
               "0,0,0,0,10,0", "--set", "n_beams=32", "--set", "max_range=7", "--out", str(out)])
    assert rc == 0
    ts = np.load(out / "multibeam_time_series.npy")
    ranges = np.load(out / "multibeam_ranges.npy")
    assert ts.dtype == np.complex64 and ts.shape == (len(ranges), 32) and np.abs(ts).max() > 0
    assert (out / "multibeam_polar.png").is_file() and (out / "multibeam_fan.png").is_file()
    assert main(["render", "multibeam", "--scene", str(mesh_path), "--preset", "nope", "--pose", "0,0,0,0,0,0",
                 "--out", str(out)]) == 2
