"""Device presets on a tank floor, against numbers computed by hand (issue 11's comparison with real recordings):
a box's shadow length from the geometry, a point target's bearing response on a preset's beams, and the floor's
row-to-row level after TVG (docs/PHYSICS_ACOUSTIC_CHAIN.md §2-5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import quad
from oceansim_py.scene import Node, Scene, TriangleMesh
from oceansim_py.scene.materials import BUILTIN_MATERIALS
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig


def scene_of(*parts: tuple[str, TriangleMesh, str]) -> Scene:
    """Named meshes with materials from the built-in table."""
    nodes = [Node("/World")]
    for name, mesh, material in parts:
        nodes.append(Node(f"/World/{name}", mesh=mesh, material=BUILTIN_MATERIALS[material], label=name,
                          parent=nodes[0]))
    return Scene(nodes, device="cpu")


def pitched(deg: float) -> np.ndarray:
    t = math.radians(deg)
    return np.array([0.0, 0.0, 0.0, 0.0, math.sin(t / 2), 0.0, math.cos(t / 2)])


def box_mesh(center, extents) -> TriangleMesh:
    import trimesh

    box = trimesh.creation.box(extents=extents)
    box.apply_translation(center)
    return TriangleMesh(np.asarray(box.vertices, np.float32), np.asarray(box.faces, np.int32))


def first_run(mask: np.ndarray) -> np.ndarray:
    """Indices of the first contiguous run of True in a 1-D mask."""
    k = np.nonzero(mask)[0]
    end = np.nonzero(np.diff(k) > 1)[0]
    return k[: end[0] + 1] if end.size else k


def test_aris3000_box_shadow_has_the_geometric_length():
    # Sensor 1 m over a sand floor, pitched 19 deg down; a steel box 0.2 m high (1 m wide across the beams) whose
    # far face is at x_f = 2.54 m. Its top far edge is the last range that echoes, hypot(x_f, 1 - 0.2) = 2.663 m;
    # the ray grazing it meets the floor at x_e = x_f * 1 / (1 - 0.2) = 3.175 m, slant range hypot(x_e, 1) = 3.329 m:
    # the image's shadow runs from 2.663 to 3.329 m (0.666 m). Measured on the clean image (the box scene over the
    # floor alone, central beams, -3 dB): 2.687-3.333 m; the start is late by about half a ray footprint on the
    # box's top (r / sin(grazing) * delta_e ~ 2.5 cm), the area sampling of its last echoes.
    cfg = ImagingSonarConfig.preset("aris3000_3000khz")
    floor = ("floor", quad([3.0, 0.0, -1.0], [0.0, 0.0, 1.0], 20.0), "sand")
    box = ("box", box_mesh((2.44, 0.0, -0.9), (0.2, 1.0, 0.2)), "steel")
    sonar = ImagingSonar(cfg, device="cpu")
    with_box = sonar.render(scene_of(floor, box), pitched(19.0))
    alone = sonar.render(scene_of(floor), pitched(19.0)).numpy()["clean_intensity"][0].astype(np.float64)
    clean = with_box.numpy()["clean_intensity"][0].astype(np.float64)
    ranges = with_box.ranges.astype(np.float64)
    cols = np.abs(np.degrees(with_box.bearings)) < 5.0
    ratio = clean[:, cols].mean(axis=1) / np.maximum(alone[:, cols].mean(axis=1), 1e-30)
    xf, h, s = 2.54, 1.0, 0.2
    start, end = math.hypot(xf, h - s), math.hypot(xf * h / (h - s), h)
    assert (start, end) == pytest.approx((2.663, 3.329), abs=1e-3)
    shadow = first_run((ranges > 2.55) & (ratio < 0.5))
    assert ranges[shadow[0]] == pytest.approx(start, abs=0.04)
    assert ranges[shadow[-1]] == pytest.approx(end, abs=0.02)
    assert ranges[shadow[-1]] - ranges[shadow[0]] == pytest.approx(end - start, rel=0.06)
    # grey, not black: the 8-bit shadow holds the post-TVG noise's grain (its median 255 (27 - 1.6) / 80 = 81)
    u = with_box.to_uint8()[0][np.ix_(shadow, cols)]
    assert np.mean(u == 0) < 0.01 and 60 < np.median(u) < 110


def half_power_width(profile: np.ndarray, x: np.ndarray, k: int) -> float:
    """Full width of ``profile`` at half its value at index ``k`` (linear interpolation between samples)."""
    half = profile[k] / 2
    lo, hi = k, k
    while profile[lo] > half:
        lo -= 1
    while profile[hi] > half:
        hi += 1
    left = x[lo] + (half - profile[lo]) / (profile[lo + 1] - profile[lo]) * (x[lo + 1] - x[lo])
    right = x[hi - 1] + (profile[hi - 1] - half) / (profile[hi - 1] - profile[hi]) * (x[hi] - x[hi - 1])
    return float(right - left)


@pytest.mark.parametrize("name", ["gemini_720i", "oculus_m750d_750khz"])
def test_a_point_target_on_a_preset_draws_its_beam_and_side_lobes(name):
    # A 1.3 cm plate (0.15 of the 1 deg beam's 8.7 cm at 5 m) on the axis of a beam near broadside: the clean
    # image's bearing response has the beam's -3 dB width (1.0 deg, a uniform aperture; the beam there is
    # 1 / cos(0.12 deg) = 1.000002 wider) sampled at 0.23-0.25 deg, and the first side lobe of a uniform aperture at
    # -13.26 dB (sinc^2 at x = 1.430), the arcs beside a strong reflector of a real FLS image. Measured: 1.006 /
    # -13.28 dB (Gemini), 0.999 / -13.55 dB (Oculus M750d: its 0.254 deg beams sample the lobe off its peak). 8 rays
    # per beam so that rays 0.03 deg apart meet the 0.15 deg plate (the presets' 2 may all pass beside it).
    cfg = ImagingSonarConfig.preset(name, rays_per_beam=8, elevation_rays=400, volume_scattering=None, noise_level=None,
                                    post_tvg_noise_level=None)
    b = float(cfg.bearings()[cfg.n_beams // 2])  # positive to starboard: FLU y = -r sin(b)
    plate = ("plate", quad([5.0 * math.cos(b), -5.0 * math.sin(b), 0.0], [-math.cos(b), math.sin(b), 0.0], 0.013),
             "steel")
    res = ImagingSonar(cfg, device="cpu").render(scene_of(plate), pitched(0.0))
    clean = res.numpy()["clean_intensity"][0].astype(np.float64)
    i, j = np.unravel_index(np.argmax(clean), clean.shape)
    assert j == cfg.n_beams // 2
    row = clean[i] / clean[i, j]
    deg = np.degrees(res.bearings.astype(np.float64))
    assert half_power_width(row, deg, j) == pytest.approx(cfg.beam_width, rel=0.05)
    lobe = [k for k in range(1, row.size - 1) if row[k] > row[k - 1] and row[k] >= row[k + 1]
            and abs(deg[k] - deg[j]) > 0.8 * cfg.beam_width]
    nearest = min(lobe, key=lambda k: abs(deg[k] - deg[j]))
    assert 10.0 * math.log10(row[nearest]) == pytest.approx(-13.26, abs=0.5)
    # the lobe sits at x = 1.430 of the 0.886 half-power width: 1.61 beam widths off the axis
    assert abs(deg[nearest] - deg[j]) == pytest.approx(1.430 / 0.886 * cfg.beam_width, abs=0.15)


def test_blueview_p900_floor_rows_after_tvg_step_under_half_a_db_without_moire():
    # Issue 11: a real recording's floor rows vary ~0.3 dB row to row after TVG; required < 0.5 dB and no peak in
    # the steps' spectrum. The P900 preset (the coarsest range bins, 2.45 cm, 2 rays per beam, 96 in elevation) 2 m
    # over a sand floor, pitched 21 deg; the clean image's row means over the central 54 deg, rows within 6 dB of
    # the brightest (3.7-8.1 m). Measured: max step 0.39 dB, rms 0.11 dB; the steps less their quadratic trend
    # have a spectrum whose peak is 2.1 times its median (white noise over ~90 frequencies: about 2.8; the
    # point-binned peer fan's moire stood > 3 dB).
    cfg = ImagingSonarConfig.preset("blueview_p900")
    floor = ("floor", quad([6.0, 0.0, -2.0], [0.0, 0.0, 1.0], 40.0), "sand")
    res = ImagingSonar(cfg, device="cpu").render(scene_of(floor), pitched(21.0))
    clean = res.numpy()["clean_intensity"][0].astype(np.float64)
    cols = np.abs(np.degrees(res.bearings)) < 27.0
    level = 10.0 * np.log10(np.maximum(clean[:, cols].mean(axis=1), 1e-30))
    rows = np.nonzero(level > level.max() - 6.0)[0]
    assert rows.size > 150 and np.all(np.diff(rows) == 1)
    steps = np.diff(level[rows])
    assert np.abs(steps).max() < 0.5 and np.sqrt(np.mean(steps**2)) < 0.2
    x = np.arange(steps.size)
    spectrum = np.abs(np.fft.rfft(steps - np.polyval(np.polyfit(x, steps, 2), x)))[1:]
    assert spectrum.max() < 5.0 * np.median(spectrum)
