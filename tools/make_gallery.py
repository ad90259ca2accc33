"""Regenerate the README gallery: one image per sensor, from ``oceansim-py render KIND`` with its defaults on
the ``wreck`` scene, written as small PNGs to ``docs/gallery/`` (each well under 200 kB).

Run from the repository root: ``python tools/make_gallery.py [--out docs/gallery]``. Images: the imaging-sonar and
multibeam fans, the camera's sRGB image, the side-scan slant-range waterfall (pings top to bottom, port left),
the profiling sonar's bottom range over the run (pings top to bottom, beams port to starboard, near = bright)
and the single-beam echogram (pings left to right, range downwards).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from oceansim_py.cli import main as cli_main  # noqa: E402 - after the path set-up

#: Longest side of a gallery image (px).
MAX_SIDE = 480


def fit_image(image: Image.Image, size: tuple[int, int] | None = None) -> Image.Image:
    """``image`` resized to ``size`` (nearest for tall/flat waterfalls) or to fit MAX_SIDE."""
    if size is not None:
        return image.resize(size, Image.Resampling.BILINEAR)
    image = image.copy()
    image.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    return image


def _range_image(ranges: np.ndarray) -> Image.Image:
    """(pings, beams) ranges (m, NaN = no bottom) as 8-bit grey, nearest white, no bottom black."""
    valid = np.isfinite(ranges)
    out = np.zeros(ranges.shape, dtype=np.uint8)
    if valid.any():
        lo, hi = np.nanmin(ranges), np.nanmax(ranges)
        out[valid] = np.round(40 + 215 * (hi - ranges[valid]) / max(hi - lo, 1e-6)).astype(np.uint8)
    return Image.fromarray(out)


def render_all(work: Path) -> dict[str, Image.Image]:
    """Run the six render commands into ``work`` and return the gallery image of each sensor."""
    for kind in ("sonar", "multibeam", "camera", "sidescan", "profiling", "singlebeam"):
        if cli_main(["render", kind, "--out", str(work / kind)]) != 0:
            raise SystemExit(f"oceansim-py render {kind} failed")
    side = Image.open(work / "sidescan" / "sidescan_waterfall.png")
    echogram = Image.open(work / "singlebeam" / "singlebeam_echogram.png").transpose(Image.Transpose.TRANSPOSE)
    return {
        "sonar": fit_image(Image.open(work / "sonar" / "sonar_fan.png")),
        "multibeam": fit_image(Image.open(work / "multibeam" / "multibeam_fan.png")),
        "camera": fit_image(Image.open(work / "camera" / "camera_rgb.png")),
        "sidescan": fit_image(side, (MAX_SIDE, min(MAX_SIDE, 2 * side.height))),
        "profiling": fit_image(_range_image(np.load(work / "profiling" / "profiling_range.npy")),
                          (MAX_SIDE // 2, MAX_SIDE // 2)),
        "singlebeam": fit_image(echogram, (MAX_SIDE, MAX_SIDE // 2)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "gallery"), help="folder of the PNGs")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, image in render_all(Path(tmp)).items():
            path = out / f"{name}.png"
            image.save(path, optimize=True)
            print(f"wrote {path} ({path.stat().st_size / 1000:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
