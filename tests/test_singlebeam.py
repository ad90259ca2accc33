"""Single-beam sonar / altimeter (docs/PHYSICS.md §3): every check against a number computed by hand.

The sonar looks along its +x boresight; pitched 90 degrees down (positive pitch = nose down) at height H over
a flat floor it is an altimeter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh
from PIL import Image

from oceansim_py import ConfigError, OceanSimError, SinglebeamSonar, SinglebeamSonarConfig, set_cpu_threads
from oceansim_py.cli import main as cli_main
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh

H = 4.03   # puts the nadir echo mid-bin: floor((4.03 - 0.5) / 0.05) = 70


def quiet(**kw) -> SinglebeamSonarConfig:
    base = dict(opening_angle=30.0, cone_rings=16, rays_per_ring=32, min_range=0.5, max_range=10.5, range_bins=200)
    base.update(kw)
    return SinglebeamSonarConfig(**base)


def floor_scene(z: float = 0.0, mu: float = 0.5) -> Scene:
    v = np.array([[-50, -50, z], [50, -50, z], [50, 50, z], [-50, 50, z]], dtype=float)
    mat = Material.from_properties("floor", (0.5, 0.5, 0.5), reflectivity=mu)
    return Scene([Node("/W"), Node("/W/floor", mesh=TriangleMesh(v, [[0, 1, 2], [0, 2, 3]]), material=mat,
                                   label="floor")], device="cpu")


def down(x: float = 0.0, y: float = 0.0, z: float = H) -> np.ndarray:
    return pose_from_euler(x, y, z, 0.0, 90.0, 0.0)


def render(cfg: SinglebeamSonarConfig, scene: Scene, poses, frame_index: int = 0) -> dict:
    return SinglebeamSonar(cfg, device="cpu").render(scene, poses, frame_index).numpy()


def test_altimeter_over_a_flat_floor_reads_the_height():
    out = render(quiet(), floor_scene(), down())
    # Innermost ring at 15 / 32 deg off the axis: first return H / cos(0.47 deg) = H (1 + 3.3e-5).
    assert out["altitude"][0] == pytest.approx(H, abs=1e-3)
    nz = np.nonzero(out["intensity"][0])[0]
    assert nz[0] == 70                                  # bin [4.0, 4.05) holds H
    # The cone's edge (15 deg) reaches the floor at H / cos(15 deg) = 4.172 m: bin floor(3.672 / 0.05) = 73.
    assert nz[-1] == 73
    # Energy: mu * int cos(psi) dOmega over the cone = mu * 2 pi * int_0^a cos t sin t dt = mu * pi sin^2(a).
    assert out["intensity"][0].sum() == pytest.approx(0.5 * math.pi * math.sin(math.radians(15.0)) ** 2, rel=2e-3)
    assert out["hit_count"][0].sum() == 16 * 32


def test_altitude_follows_height_and_misses_are_nan():
    poses = np.stack([down(z=h) for h in (2.0, 6.5, 9.0)] + [pose_from_euler(0, 0, 3.0, 0, -90.0, 0)])
    out = render(quiet(), floor_scene(), poses)
    np.testing.assert_allclose(out["altitude"][:3], [2.0, 6.5, 9.0], atol=1e-3)
    assert np.isnan(out["altitude"][3])                 # looking up: nothing to hit
    assert out["intensity"][3].sum() == 0.0


def test_absorption_and_spreading_of_the_echo():
    base = render(quiet(), floor_scene(), down())["intensity"][0].sum()
    absorbed = render(quiet(absorption=0.3), floor_scene(), down())["intensity"][0].sum()
    spread = render(quiet(spreading=True), floor_scene(), down())["intensity"][0].sum()
    # On a flat floor a ray t off the axis returns mu cos t dOmega from r = H / cos t, dOmega = 2 pi sin t dt:
    # spreading gives (1 / H^2) int cos^3 t sin t / int cos t sin t = (1 + cos^2 a) / (2 H^2), a = 15 deg;
    # absorption the same average of 10^(-0.06 H / cos t) (evaluated by quadrature).
    a = math.radians(15.0)
    assert spread / base == pytest.approx((1 + math.cos(a) ** 2) / (2 * H ** 2), rel=2e-3)
    t = np.linspace(0.0, a, 20001)
    w = np.cos(t) * np.sin(t)
    assert absorbed / base == pytest.approx(np.trapezoid(w * 10 ** (-0.06 * H / np.cos(t)), t) / np.trapezoid(w, t),
                                            rel=2e-3)


def test_range_noise_on_the_altitude_has_the_configured_sigma():
    poses = np.stack([down(x=0.1 * k) for k in range(200)])
    out = render(quiet(range_noise=0.05, cone_rings=4, rays_per_ring=8, seed=2), floor_scene(), poses)
    err = out["altitude"] - H
    assert abs(err.mean()) < 0.012                      # 3 sigma / sqrt(200)
    assert err.std() == pytest.approx(0.05, rel=0.15)


def test_batch_and_thread_chunking_render_bit_for_bit():
    cfg = quiet(range_noise=0.02, multiplicative_sigma=0.3, additive_sigma=1e-4, normalisation="global", seed=5)
    poses = np.stack([down(x=0.3 * k, z=H + 0.1 * k) for k in range(6)])
    batch = render(cfg, floor_scene(), poses, frame_index=20)
    for b in range(6):
        one = render(cfg, floor_scene(), poses[b], frame_index=20 + b)
        for k in ("intensity", "clean_intensity", "altitude", "hit_count"):
            np.testing.assert_array_equal(one[k][0], batch[k][b], err_msg=k)
    set_cpu_threads(1)
    try:
        single = render(cfg, floor_scene(), poses, frame_index=20)
    finally:
        set_cpu_threads(None)
    for k in ("intensity", "altitude"):
        np.testing.assert_array_equal(single[k], batch[k], err_msg=k)
    # Global normalisation: every clean ping peaks at exactly 1.
    np.testing.assert_array_equal(batch["clean_intensity"].max(axis=1), np.ones(6, dtype=np.float32))


def test_presets_echogram_and_torch(tmp_path):
    hol = SinglebeamSonarConfig.preset("holoocean_default")
    assert (hol.opening_angle, hol.min_range, hol.max_range, hol.range_bins) == (30.0, 0.5, 10.0, 200)
    alt = SinglebeamSonarConfig.preset("altimeter_200khz")
    assert alt.range_resolution == pytest.approx(0.05)
    res = SinglebeamSonar(alt, device="cpu").render(floor_scene(), np.stack([down(z=20.0), down(z=30.0)]))
    np.testing.assert_allclose(res.numpy()["altitude"], [20.0, 30.0], atol=0.05)
    img = np.asarray(Image.open(res.save_png(tmp_path / "echo.png")))
    assert img.shape == (2, alt.range_bins)
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(OceanSimError, match="PyTorch"):
            res.torch()
    else:
        assert tuple(res.torch()["intensity"].shape) == (2, alt.range_bins)


@pytest.mark.parametrize("field,kw", [
    ("opening_angle", dict(opening_angle=0.0)),
    ("opening_angle", dict(opening_angle=180.0)),
    ("cone_rings", dict(cone_rings=0)),
    ("rays_per_ring", dict(rays_per_ring=2.5)),
    ("max_range", dict(max_range=0.5)),
    ("range_noise", dict(range_noise=-0.1)),
    ("gamma", dict(gamma=0.0)),
])
def test_bad_configs_raise_config_error_naming_the_field(field, kw):
    with pytest.raises(ConfigError, match=field):
        quiet(**kw)


def test_cli_render_singlebeam_writes_echogram_and_altitude(tmp_path):
    floor = trimesh.Trimesh([[-20, -20, -3], [20, -20, -3], [20, 20, -3], [-20, 20, -3]], [[0, 1, 2], [0, 2, 3]])
    path = tmp_path / "floor.obj"
    floor.export(path)
    out = tmp_path / "out"
    rc = cli_main(["render", "singlebeam", "--scene", str(path), "--pose", "0,0,0,0,90,0", "--pings", "2",
                   "--step", "0.5,0,0", "--out", str(out), "--device", "cpu"])
    assert rc == 0
    np.testing.assert_allclose(np.load(out / "singlebeam_first_return_range.npy"), [3.0, 3.0], atol=1e-3)
    assert np.load(out / "singlebeam.npy").shape == (2, 200)
    assert (out / "singlebeam_echogram.png").stat().st_size > 0
    assert cli_main(["render", "singlebeam", "--scene", str(path), "--pose", "0,0,0,0,90,0", "--pings", "0",
                     "--out", str(out), "--device", "cpu"]) == 2
