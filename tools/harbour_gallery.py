"""Render the harbour gallery: four acoustic and optical views of the built-in ``harbour`` scene (with its default
wind sea), from ``oceansim-py render KIND --scene harbour``, written as small PNGs ``docs/gallery/harbour_*.png``.

Run from the repository root: ``python tools/harbour_gallery.py [--out docs/gallery] [--multipath-bounces N]
[--surface-reverberation]`` (the committed images: ``--multipath-bounces 1 --surface-reverberation``).
Views (world frame of the harbour: quay face at x = 0, basin at x > 0, z up, surface at z = 0):

- ``harbour_sonar``: an Oculus M750d (device preset, 130 deg, 30 m) 16 m off the quay, 2 m deep, facing it: the quay
  wall across the fan, the moored hull to starboard, the pile row to port;
- ``harbour_sidescan``: an EdgeTech 4125 (900 kHz device preset, 20 m range) run 50 m along the quay, 12 m off it,
  1 m deep, through the pile row (between two piles, the dark line near the top): the seafloor rising to the quay
  wall (the bright edge at 12 m) to port, the slope falling away to starboard (pings top to bottom);
- ``harbour_multibeam``: a SeaBat F50 (device preset) looking straight down 20 m off the quay with its swath across
  the slope (4 m deep at the quay side, 12 m offshore);
- ``harbour_camera``: the camera 1.5 m deep beside the piles, looking along the row (clear sunlit water).

``--multipath-bounces N`` sets the acoustic sensors' ``multipath_bounces`` config field where their configs have
one (specular multipath, issue 16); without it, or where the field does not exist, each preset's default is used.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from make_gallery import MAX_SIDE, fit_image  # noqa: E402 - after the path set-up

from oceansim_py.cli import main as cli_main  # noqa: E402
from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig  # noqa: E402
from oceansim_py.sensors.multibeam import MultibeamSonarConfig  # noqa: E402
from oceansim_py.sensors.sidescan import SidescanSonarConfig  # noqa: E402

#: name -> (render kind, its config class or None, arguments after ``render KIND``, the output PNG).
VIEWS: dict[str, tuple[str, type | None, list[str], str]] = {
    "harbour_sonar": ("sonar", ImagingSonarConfig,
                      ["--preset", "oculus_m750d", "--pose", "16,-12,-2,0,12,180"], "sonar_fan.png"),
    "harbour_sidescan": ("sidescan", SidescanSonarConfig,
                         ["--preset", "edgetech_4125_900khz", "--set", "max_range=20", "--pose", "12,-26,-1,0,0,90",
                          "--step", "0,0.2,0", "--pings", "250"], "sidescan_waterfall.png"),
    "harbour_multibeam": ("multibeam", MultibeamSonarConfig,
                          ["--preset", "seabat_f50", "--set", "max_range=25", "--pose", "20,-14,-1,0,90,90"],
                          "multibeam_fan.png"),
    "harbour_camera": ("camera", None, ["--preset", "clear_ocean_sunlit", "--pose", "7,-18,-1.5,0,8,-45"],
                       "camera_rgb.png"),
}


def multipath_args(config_class: type | None, bounces: int | None) -> list[str]:
    """``--set multipath_bounces=N`` when ``bounces`` is given and ``config_class`` has that field, else none."""
    if bounces is None or config_class is None:
        return []
    if "multipath_bounces" not in {f.name for f in dataclasses.fields(config_class)}:
        return []
    return ["--set", f"multipath_bounces={bounces}"]


def surface_args(config_class: type | None, reverberation: bool) -> list[str]:
    """``--set surface_reverberation=true`` for the acoustic views when ``reverberation`` is asked for."""
    if not reverberation or config_class is None:
        return []
    return ["--set", "surface_reverberation=true"]


def render_all(work: Path, bounces: int | None, reverberation: bool = False) -> dict[str, Image.Image]:
    """Run the four render commands into ``work`` and return each gallery image."""
    images = {}
    for name, (kind, config_class, args, png) in VIEWS.items():
        out = work / name
        argv = ["render", kind, "--scene", "harbour", *args, *multipath_args(config_class, bounces),
                *surface_args(config_class, reverberation), "--device", "cpu", "--out", str(out)]
        if cli_main(argv) != 0:
            raise SystemExit(f"oceansim-py {' '.join(argv)} failed")
        image = Image.open(out / png)
        if kind == "sidescan":
            images[name] = fit_image(image, (MAX_SIDE, min(MAX_SIDE, 2 * image.height)))
        else:
            images[name] = fit_image(image)
    return images


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "gallery"), help="folder of the PNGs")
    parser.add_argument("--multipath-bounces", type=int, default=None, metavar="N",
                        help="multipath_bounces of the acoustic sensors (where their configs have the field)")
    parser.add_argument("--surface-reverberation", action="store_true",
                        help="the acoustic views also render the sea surface's backscatter (Chapman-Harris at the "
                             "harbour's wind)")
    args = parser.parse_args(argv)
    if args.multipath_bounces is not None and args.multipath_bounces < 0:
        parser.error("--multipath-bounces must be >= 0")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, image in render_all(Path(tmp), args.multipath_bounces,
                                             args.surface_reverberation).items():
            path = out / f"{name}.png"
            image.save(path, optimize=True)
            print(f"wrote {path} ({path.stat().st_size / 1000:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
