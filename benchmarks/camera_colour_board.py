"""Colour-board benchmark (OceanSim, Table I): RGB angular error of rendered vs true colour-checker patches.

The board: the 24 patches of an X-Rite ColorChecker Classic (6 x 4, 0.1 m patches on a 0.12 m pitch over a black
backing), each a Lambertian patch whose linear albedo is its published sRGB colour decoded (:data:`MACBETH_SRGB`),
lying on the seafloor at 10 m depth, face up. The camera looks straight down at its centre from ``d`` metres
(1, 2, 4 m by default) in each Jerlov water type, lit by the sun from above (zenith 20 deg) and the ambient floor,
with the veiling light scaled by the light at the camera (the camera's defaults). Its exposure is set per case so
that the white patch reaches 90 % of full scale (an auto-exposure on the board). Each patch's colour is the mean
of the pixels well inside it (its central 50 %).

Angular error (OceanSim eq. 7, after Akkaynak & Treibitz): psi(c1, c2) = arccos(c1 . c2 / (|c1| |c2|)), degrees,
per patch, averaged over the 24 patches:

- ``raw``: the rendered 8-bit sRGB patch colour vs the patch's true sRGB colour: the colour cast the water puts on
  an uncorrected photograph;
- ``white_balanced``: the same after a white balance on the white patch (each channel of the linear image, or of
  the sensor's digital numbers with a noisy camera preset, scaled so the white patch is its true colour), what
  remains once the global cast is removed (backscatter and the channel-dependent attenuation of dark patches);
- ``model``: the rendered linear patch colour vs eq. 1 evaluated by hand for the patch's albedo, irradiance and
  distance: the renderer against its own formula (should be ~0; a check, not a result).

OceanSim's Table I compares renders with real photographs of a physical board (HoloOcean, UNav-Sim*, Isaac Sim and
OceanSim columns); its per-case numbers are not in the text we hold (docs/PHYSICS.md §4 notes this), so this
benchmark reports the model's own colour cast and self-consistency, not a comparison with photographs.

Usage: python benchmarks/camera_colour_board.py [--quick] [--out PATH] [--device DEV] [--waters ...]
       [--distances ...] [--preset CAMERA_PRESET] [--size W H]
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from bench_common import add_common_arguments, machine, table_header, table_row, write_report
from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh
from oceansim_py.scene.textures import srgb_to_linear
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig

#: ColorChecker Classic patches in reading order (row 1: dark skin .. bluish green; row 4: white .. black), sRGB
#: (D65) 8-bit values as X-Rite publishes them (the "ColorChecker" article's sRGB table: X-Rite, ColorChecker
#: Classic, post-November-2014 formulation).
MACBETH_SRGB = (
    ("dark skin", (115, 82, 68)), ("light skin", (194, 150, 130)), ("blue sky", (98, 122, 157)),
    ("foliage", (87, 108, 67)), ("blue flower", (133, 128, 177)), ("bluish green", (103, 189, 170)),
    ("orange", (214, 126, 44)), ("purplish blue", (80, 91, 166)), ("moderate red", (193, 90, 99)),
    ("purple", (94, 60, 108)), ("yellow green", (157, 188, 64)), ("orange yellow", (224, 163, 46)),
    ("blue", (56, 61, 150)), ("green", (70, 148, 73)), ("red", (175, 54, 60)),
    ("yellow", (231, 199, 31)), ("magenta", (187, 86, 149)), ("cyan", (8, 133, 161)),
    ("white 9.5", (243, 243, 242)), ("neutral 8", (200, 200, 200)), ("neutral 6.5", (160, 160, 160)),
    ("neutral 5", (122, 122, 121)), ("neutral 3.5", (85, 85, 85)), ("black 2", (52, 52, 52)),
)
PATCH, PITCH = 0.10, 0.12          # m
BOARD_DEPTH = 10.0                 # m
WATERS = ("jerlov_I", "jerlov_IB", "jerlov_II", "jerlov_III", "jerlov_1C", "jerlov_3C", "jerlov_7C")
DISTANCES = (1.0, 2.0, 4.0)        # m, camera above the board


def patch_centre(k: int) -> tuple[float, float]:
    """World (x, y) of patch k's centre: columns run along -y (image right), rows along -x (image down) for a
    camera looking down with its top towards +x."""
    row, col = divmod(k, 6)
    return (1.5 - row) * PITCH, (2.5 - col) * PITCH


def board_scene(device: Any = "cpu") -> Scene:
    """The 24 patches, face up at z = -BOARD_DEPTH, on a black backing 1 mm below."""
    nodes = [Node("/board")]
    tri = np.array([[0, 1, 2], [0, 2, 3]])
    for k, (name, code) in enumerate(MACBETH_SRGB):
        x, y = patch_centre(k)
        h = PATCH / 2
        v = np.array([[x - h, y - h, 0], [x + h, y - h, 0], [x + h, y + h, 0], [x - h, y + h, 0]]) + [0, 0, -BOARD_DEPTH]
        albedo = tuple(float(a) for a in srgb_to_linear(np.array(code) / 255.0))
        nodes.append(Node(f"/board/patch_{k:02d}", mesh=TriangleMesh(v, tri), label=name,
                          material=Material(f"patch_{k:02d}", 0.5, albedo)))
    w = 3.5 * PITCH
    back = np.array([[-w, -w, 0], [w, -w, 0], [w, w, 0], [-w, w, 0]]) * [1, 1.4, 0] + [0, 0, -BOARD_DEPTH - 1e-3]
    nodes.append(Node("/board/backing", mesh=TriangleMesh(back, tri), label="backing",
                      material=Material("backing", 0.5, (0.01, 0.01, 0.01))))
    return Scene(nodes, device=device)


def angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """OceanSim eq. 7 per row: arccos of the cosine similarity, degrees."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def patch_means(image: np.ndarray, instance: np.ndarray, scene: Scene) -> np.ndarray:
    """(24, C) mean of each patch's pixels, keeping those at least a quarter patch from its edges."""
    out = []
    for k in range(len(MACBETH_SRGB)):
        node = scene.node(f"/board/patch_{k:02d}")
        mask = instance == node.id
        rows, cols = np.nonzero(mask)
        if rows.size == 0:
            raise RuntimeError(f"patch {k} is not in view; move the camera closer or widen the field of view")
        r0, r1, c0, c1 = rows.min(), rows.max(), cols.min(), cols.max()
        dr, dc = (r1 - r0) // 4, (c1 - c0) // 4
        inner = np.zeros_like(mask)
        inner[r0 + dr:r1 - dr + 1, c0 + dc:c1 - dc + 1] = True
        out.append(image[mask & inner].astype(np.float64).mean(axis=0))
    return np.array(out)


def expected_linear(config: UnderwaterCameraConfig, distance: float) -> np.ndarray:
    """(24, 3) eq. 1 for each patch by hand: J = albedo (ambient + sun cos(zenith) exp(-K_d depth)), camera on
    the patch's normal (z = distance along the pixel's ray is the patch's slant range; the patch centres are off
    axis, so the range of each is sqrt(d^2 + x^2 + y^2))."""
    w = config.water_type
    kd, bd, bb, binf = (np.array(v) for v in (w.diffuse_attenuation, w.attenuation, w.backscatter, w.veiling_light))
    amb, sun = np.array(config.ambient), np.array(config.sun_irradiance)
    e = amb + sun * math.cos(math.radians(config.sun_zenith)) * np.exp(-kd * BOARD_DEPTH)
    veil = binf * (amb + sun * np.exp(-kd * (BOARD_DEPTH - distance)))
    out = []
    for k, (_, code) in enumerate(MACBETH_SRGB):
        x, y = patch_centre(k)
        z = math.sqrt(distance ** 2 + x ** 2 + y ** 2)
        j = srgb_to_linear(np.array(code) / 255.0) * e
        out.append(j * np.exp(-bd * z) + veil * (1 - np.exp(-bb * z)))
    return np.array(out)


def run_case(scene: Scene, water: str, distance: float, size: tuple[int, int], preset: str | None,
             device: Any) -> dict[str, Any]:
    """Render the board from ``distance`` m in ``water`` and measure the three angular errors."""
    fov = 2 * math.degrees(math.atan(0.5 * 6.6 * PITCH / distance))     # the board's width fills the image
    fields = {"width": size[0], "height": size[1], "horizontal_fov": min(fov, 120.0), "water": water,
              "sun_azimuth": 180.0, "max_range": 50.0}
    config = UnderwaterCameraConfig.from_dict({**({"preset": preset} if preset else {}), **fields})
    pose = pose_from_euler(0.0, 0.0, -BOARD_DEPTH + distance, 0.0, 90.0, 0.0)   # nose down, image top = +x
    probe = UnderwaterCamera(config.replace(noise=False), device=device).render(scene, pose).numpy()
    white = patch_means(probe["linear"][0], probe["instance"][0], scene)[18]
    config = config.replace(exposure=0.9 / float(white.max()))
    result = UnderwaterCamera(config, device=device).render(scene, pose).numpy()
    rgb = patch_means(result["rgb"][0], result["instance"][0], scene)
    linear = patch_means(result["linear"][0], result["instance"][0], scene)
    truth_srgb = np.array([c for _, c in MACBETH_SRGB], dtype=np.float64)
    truth_linear = srgb_to_linear(truth_srgb / 255.0)
    # what the sensor measured, linear: its digital numbers with the noise model (noise, vignetting, clipping)
    measured = patch_means(result["raw"][0], result["instance"][0], scene) if "raw" in result else linear
    balanced = measured * (truth_linear[18] / measured[18])
    return {"water": water, "distance_m": distance, "exposure": round(config.exposure, 4),
            "raw_deg": float(angle_deg(rgb, truth_srgb).mean()),
            "white_balanced_deg": float(angle_deg(balanced, truth_linear).mean()),
            "model_deg": float(angle_deg(linear, expected_linear(config, distance)).max()),
            "per_patch_raw_deg": [round(float(a), 3) for a in angle_deg(rgb, truth_srgb)]}


COLUMNS = [("water", "water", "10s"), ("d (m)", "distance_m", "6.1f"), ("exposure", "exposure", "9.3f"),
           ("raw (deg)", "raw_deg", "10.2f"), ("white-bal. (deg)", "white_balanced_deg", "17.2f"),
           ("model max (deg)", "model_deg", "16.4f")]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser, "camera_colour_board", scenes=False, quick_help="three waters, two distances")
    parser.add_argument("--waters", nargs="*", default=list(WATERS))
    parser.add_argument("--distances", nargs="*", type=float, default=list(DISTANCES))
    parser.add_argument("--preset", default=None, help="camera preset (e.g. blackfly_s_machine_vision: with noise)")
    parser.add_argument("--size", nargs=2, type=int, default=(320, 240), metavar=("W", "H"))
    args = parser.parse_args(argv)
    waters = ["jerlov_IB", "jerlov_II", "jerlov_3C"] if args.quick else args.waters
    distances = [1.0, 2.0] if args.quick else args.distances
    device = args.device or None
    scene = board_scene(device)
    print(table_header(COLUMNS))
    rows = []
    for water in waters:
        for d in distances:
            row = run_case(scene, water, d, tuple(args.size), args.preset, scene.device)
            rows.append(row)
            print(table_row(COLUMNS, row))
    report = {"benchmark": "camera_colour_board", "machine": machine(), "preset": args.preset,
              "size": list(args.size), "rows": rows}
    write_report(args.out, report)
    return report


if __name__ == "__main__":
    main()
