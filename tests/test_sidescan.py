"""Side-scan sonar (docs/PHYSICS.md §3): every check against a number computed by hand.

Scenes are built in memory: a flat floor at z = 0 and the sonar level at height H, x along track, so port is
+y and starboard -y. With the HoloOcean fan (each side covers depressions 5-90 deg) the first return is the
nadir echo at slant range H.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh
from PIL import Image

from oceansim_py import ConfigError, OceanSimError, SidescanSonar, SidescanSonarConfig, set_cpu_threads
from oceansim_py.cli import main as cli_main
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh

H = 5.05   # sonar height over the floor (m): puts the nadir echo mid-bin, floor((5.05 - 0.5) / 0.1) = 45


def quiet(**kw) -> SidescanSonarConfig:
    """HoloOcean's fan with 0.1 m bins over 0.5-20.5 m, one along-track ray, noise off, physical units."""
    base = dict(along_track_beamwidth=0.25, vertical_beamwidth=85.0, depression=47.5, min_range=0.5,
                max_range=20.5, range_bins=200, along_track_rays=1, across_track_rays=1024)
    base.update(kw)
    return SidescanSonarConfig(**base)


def plate(x0, x1, y0, y1, z) -> TriangleMesh:
    """A horizontal rectangle at height z (m)."""
    v = np.array([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]], dtype=float)
    return TriangleMesh(v, [[0, 1, 2], [0, 2, 3]])


def scene_of(*parts: tuple[str, TriangleMesh, float]) -> Scene:
    nodes = [Node("/W")]
    for name, mesh, mu in parts:
        nodes.append(Node(f"/W/{name}", mesh=mesh, label=name,
                          material=Material.from_properties(name, (0.5, 0.5, 0.5), reflectivity=mu)))
    return Scene(nodes, device="cpu")


FLOOR = ("floor", plate(-100, 100, -100, 100, 0.0), 0.5)
POSE = pose_from_euler(0.0, 0.0, H, 0.0, 0.0, 0.0)


def render(cfg: SidescanSonarConfig, scene: Scene, poses=POSE, frame_index: int = 0, sensor_id: int = 0) -> dict:
    return SidescanSonar(cfg, device="cpu", sensor_id=sensor_id).render(scene, poses, frame_index).numpy()


def test_flat_floor_first_return_is_the_altitude_with_a_nadir_gap():
    cfg = quiet()
    out = render(cfg, scene_of(FLOOR))
    # Nearest ray: depression 90 - 85 / 2048 deg -> range H / sin(89.96 deg) = H (1 + 2.6e-7).
    assert out["altitude"][0] == pytest.approx(H, abs=1e-4)
    for side in ("port", "starboard"):
        nz = np.nonzero(out[side][0])[0]
        assert nz[0] == 45                       # the bin holding H = 5.05 m
        assert out["ranges"][45] == pytest.approx(5.05)
    # Waterfall row: [port far..near | starboard near..far]: the 2 x 45 bins around the middle are the gap.
    row = out["waterfall"][0]
    assert row.shape == (400,)
    assert np.all(row[200 - 45:200 + 45] == 0)
    assert row[200 - 46] > 0 and row[200 + 45] > 0
    np.testing.assert_array_equal(row[:200], out["port"][0][::-1])
    # Energy of one side: mu * w_a * int_{d0}^{90} sin d dd (cos psi = sin d on a flat floor, dOmega = w_a dd),
    # d0 = asin(H / 20.5) where the range window ends: 0.5 * radians(0.25) * cos(d0).
    d0 = math.asin(H / 20.5)
    expected = 0.5 * math.radians(0.25) * math.cos(d0)
    assert out["port"][0].sum() == pytest.approx(expected, rel=5e-3)
    assert out["starboard"][0].sum() == pytest.approx(expected, rel=5e-3)


def test_ground_range_of_a_target_is_right_after_flat_bottom_correction():
    # A bright strip (mu 1 vs the floor's 0.05) 5.8-6.2 m to starboard, 1 cm proud of the floor. Its slant range
    # is sqrt(6^2 + 5.05^2) = 7.84 m; after correction it must sit at ground range 6 m.
    s = scene_of(("floor", plate(-100, 100, -100, 100, 0.0), 0.05), ("strip", plate(-20, 20, -6.2, -5.8, 0.01), 1.0))
    out = render(quiet(), s)
    g = out["ground_ranges"]
    assert g[0] == pytest.approx(0.05) and g[1] - g[0] == pytest.approx(0.1)
    star, port = out["ground_intensity"][0, :, 1], out["ground_intensity"][0, :, 0]
    bright = g[(star > 3.0 * port) & (g < 15.0)]
    assert bright.size >= 3
    assert bright.min() >= 5.8 - 0.1 and bright.max() <= 6.2 + 0.1
    assert 5.95 in np.round(bright, 2)
    # The slant series has it at 7.68-7.99 m instead.
    slant = out["ranges"][out["starboard"][0] > 3.0 * out["port"][0]]
    assert slant.min() >= 7.68 - 0.1 and slant.max() <= 7.99 + 0.1
    # Port, plain floor: corrected intensity is smooth in ground range, no gap after the correction at g >= 0.
    assert np.all(port[g < 15.0] > 0)


def test_object_on_the_floor_casts_a_shadow_on_its_side():
    # A 1 m x 1 m bar along track on the floor, 3.5-4.5 m to starboard. From (0, 0, 5) its near face spans slant
    # ranges sqrt(3.5^2 + 4^2) = 5.32 to sqrt(3.5^2 + 5^2) = 6.10 m; rays over its far top edge (4.5, 1) reach
    # the floor at 4.5 * 5 / 4 = 5.625 m, slant sqrt(5.625^2 + 5^2) = 7.53 m. Slant 6.10-7.53 m is shadow.
    bar = trimesh.creation.box(extents=[40.0, 1.0, 1.0])
    bar.apply_translation([0.0, -4.0, 0.5])
    s = scene_of(("floor", plate(-100, 100, -100, 100, 0.0), 0.5),
                 ("bar", TriangleMesh(bar.vertices, bar.faces), 0.5))
    out = render(quiet(), s, pose_from_euler(0.0, 0.0, 5.0, 0.0, 0.0, 0.0))
    hits = out["hit_count"][0]
    shadow = slice(57, 70)                        # bins [6.2, 7.5) m
    assert np.all(hits[shadow, 1] == 0)           # starboard: nothing comes back
    assert np.all(hits[shadow, 0] > 0)            # port: the floor
    assert np.all(hits[71:110, 1] > 0)            # starboard floor again past 7.53 m
    bar_id = s.labels.index("bar")
    # Bins 49-54 (slant 5.4-6.0 m): starboard rays see the bar and, closer in, the floor (ground 1.8-3.3 m);
    # port only the floor.
    assert np.all(hits[49:55, 1] > hits[49:55, 0])
    assert bar_id not in out["label_id"][0][:, 0]                    # port never sees it
    assert s.labels.index("floor") in out["label_id"][0][:, 1]
    # In the waterfall the shadow is right of centre (starboard half).
    row = out["waterfall"][0]
    assert np.all(row[200 + 57:200 + 70] == 0) and np.all(row[200 - 70:200 - 57] > 0)


def test_absorption_scales_each_bin():
    # Absorption 0.5 dB/m: each return is scaled by 10^(-0.1 r); compare two single bins of the same floor.
    plain = render(quiet(), scene_of(FLOOR))["port"][0]
    absorbed = render(quiet(absorption=0.5), scene_of(FLOOR))["port"][0]
    r = quiet().ranges()
    for i in (60, 100):
        assert absorbed[i] / plain[i] == pytest.approx(10 ** (-0.1 * r[i]), rel=0.01)


def noisy() -> SidescanSonarConfig:
    return quiet(across_track_rays=256, along_track_rays=2, normalisation="global", multiplicative_sigma=0.3,
                 additive_sigma=0.01, seed=7)


def transect(n: int) -> np.ndarray:
    return np.stack([pose_from_euler(0.5 * k, 0.2 * k, H, 1.0 * k, 0.0, 2.0 * k) for k in range(n)])


def test_batch_and_thread_chunking_render_bit_for_bit():
    s = scene_of(FLOOR, ("box", TriangleMesh(trimesh.creation.box(extents=[2, 2, 2]).vertices + [0, 6, 1],
                                             trimesh.creation.box(extents=[2, 2, 2]).faces), 0.9))
    poses = transect(4)
    batch = render(noisy(), s, poses, frame_index=10)
    keys = ("intensity", "clean_intensity", "hit_count", "label_id", "altitude", "ground_intensity", "waterfall")
    for b in range(4):
        one = render(noisy(), s, poses[b], frame_index=10 + b)
        for k in keys:
            np.testing.assert_array_equal(one[k][0], batch[k][b], err_msg=k)
    set_cpu_threads(1)
    try:
        single_thread = render(noisy(), s, poses, frame_index=10)
    finally:
        set_cpu_threads(None)
    for k in keys:
        np.testing.assert_array_equal(single_thread[k], batch[k], err_msg=k)
    # Noise is on (intensity differs from the clean series) and keyed by the sensor id.
    assert not np.array_equal(batch["intensity"], batch["clean_intensity"])
    other = render(noisy(), s, poses, frame_index=10, sensor_id=1)
    assert not np.array_equal(other["intensity"], batch["intensity"])
    np.testing.assert_array_equal(other["clean_intensity"], batch["clean_intensity"])


def test_waterfall_png_stacks_pings(tmp_path):
    sonar = SidescanSonar(noisy().replace(additive_sigma=0.0), device="cpu")   # speckle keeps empty bins at 0
    res = sonar.render(scene_of(FLOOR), transect(6))
    path = res.save_png(tmp_path / "wf.png")
    img = np.asarray(Image.open(path))
    assert img.shape == (6, 400) and img.dtype == np.uint8
    np.testing.assert_array_equal(img, res.to_uint8())
    assert np.all(img[:, 195:205] == 0) and img.max() > 0         # nadir gap down the middle


def test_torch_export_or_a_clear_error():
    res = SidescanSonar(quiet(across_track_rays=16), device="cpu").render(scene_of(FLOOR), transect(2))
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(OceanSimError, match="PyTorch"):
            res.torch()
        return
    t = res.torch()
    assert tuple(t["intensity"].shape) == (2, 200, 2) and tuple(t["altitude"].shape) == (2,)


def test_presets_are_valid_and_match_their_sources():
    hol = SidescanSonarConfig.preset("holoocean_default")
    assert 2 * hol.vertical_beamwidth == 170.0 and hol.along_track_beamwidth == 0.25
    assert hol.depression + hol.vertical_beamwidth / 2 == 90.0
    assert (hol.min_range, hol.max_range) == (0.5, 35.0)
    hf = SidescanSonarConfig.preset("sidescan_900khz")
    assert hf.range_resolution == pytest.approx(0.05)
    assert SidescanSonarConfig.from_dict({"preset": "sidescan_900khz", "max_range": 50.0}).max_range == 50.0


@pytest.mark.parametrize("field,kw", [
    ("depression", dict(depression=60.0)),                  # fan would cross nadir: 60 + 42.5 > 90
    ("range_bins", dict(range_bins=1)),
    ("max_range", dict(max_range=0.4)),
    ("along_track_beamwidth", dict(along_track_beamwidth=0.0)),
    ("across_track_rays", dict(across_track_rays=0)),
    ("normalisation", dict(normalisation="row")),
    ("multiplicative_sigma", dict(multiplicative_sigma=-0.1)),
    ("absorption", dict(absorption=float("nan"))),
])
def test_bad_configs_raise_config_error_naming_the_field(field, kw):
    with pytest.raises(ConfigError, match=field):
        quiet(**kw)


def test_unknown_yaml_key_and_bad_render_inputs(tmp_path):
    p = tmp_path / "ss.yaml"
    p.write_text("preset: holoocean_default\nbeam_widht: 2\n")
    with pytest.raises(ConfigError, match="beam_widht"):
        SidescanSonarConfig.from_yaml(p)
    sonar = SidescanSonar(quiet(across_track_rays=16), device="cpu")
    with pytest.raises(ConfigError, match="frame_index"):
        sonar.render(scene_of(FLOOR), POSE, frame_index=-1)
    with pytest.raises(ConfigError):
        sonar.render(scene_of(FLOOR), np.array([0, 0, np.nan, 0, 0, 0, 1.0]))


def test_cli_render_sidescan_writes_waterfalls_and_series(tmp_path):
    floor = trimesh.Trimesh([[-50, -50, 0], [50, -50, 0], [50, 50, 0], [-50, 50, 0]], [[0, 1, 2], [0, 2, 3]])
    path = tmp_path / "floor.obj"
    floor.export(path)
    cfg = tmp_path / "ss.yaml"
    cfg.write_text("preset: holoocean_default\nmax_range: 20.5\nrange_bins: 200\nacross_track_rays: 256\n"
                   "along_track_rays: 1\n")
    out = tmp_path / "out"
    rc = cli_main(["render", "sidescan", "--scene", str(path), "--config", str(cfg), "--pose", "0,0,5.05,0,0,0",
                   "--pings", "3", "--out", str(out), "--device", "cpu"])
    assert rc == 0
    series = np.load(out / "sidescan.npy")
    assert series.shape == (3, 200, 2)
    assert np.nonzero(series[0, :, 0])[0][0] == 45          # nadir echo at 5.05 m
    np.testing.assert_allclose(np.load(out / "sidescan_altitude.npy"), 5.05, atol=1e-3)
    assert np.asarray(Image.open(out / "sidescan_waterfall.png")).shape == (3, 400)
    assert (out / "sidescan_ground_waterfall.png").stat().st_size > 0
    assert cli_main(["render", "sidescan", "--scene", str(path), "--preset", "nope", "--out", str(out),
                     "--pose", "0,0,5,0,0,0", "--device", "cpu"]) == 2
