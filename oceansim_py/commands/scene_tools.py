"""``oceansim-py scene from-bathymetry GRID --out scene.usda``: a seafloor scene from a bathymetry grid.

Conventions (sign, nodata, local frame, tiling, depth bands): see ``oceansim_py.scene.bathymetry``.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scene", help="scene tools (from-bathymetry)")
    ssub = p.add_subparsers(dest="scene_command", required=True)
    b = ssub.add_parser("from-bathymetry", help="turn a GeoTIFF / NetCDF / ESRI ASCII / XYZ grid into a .usda scene")
    b.add_argument("grid", help="bathymetry file (.tif/.tiff/.asc, .nc/.grd (NetCDF or Surfer), .xyz/.txt/.csv)")
    b.add_argument("--out", required=True, help="the .usda file to write (written to a temporary name, then renamed)")
    b.add_argument("--bounds", type=float, nargs=4, metavar=("XMIN", "YMIN", "XMAX", "YMAX"), default=None,
                   help="crop, in the grid's own coordinates (degrees for lon/lat grids)")
    b.add_argument("--resolution", type=float, default=None, help="resample to this grid spacing (m)")
    b.add_argument("--values", choices=["elevation", "depth"], default=None,
                   help="sign of the values: elevation (up positive) or depth (down positive); default from the file")
    b.add_argument("--geographic", choices=["auto", "yes", "no"], default="auto",
                   help="lon/lat degrees (yes) or projected metres (no); auto: from the CRS")
    b.add_argument("--material", default="sand", help="material of the seafloor (default sand)")
    b.add_argument("--materials", default=None, metavar="YAML",
                   help="materials file adding the names --material and --band may use (load the scene with it)")
    b.add_argument("--band", action="append", default=[], metavar="MIN:MAX:MATERIAL",
                   help="material for triangles whose depth (m) lies in [MIN, MAX); repeatable")
    b.add_argument("--tile-size", type=int, default=None, help="cells per tile side (default 1024)")
    b.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    b.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from oceansim_py.errors import ConfigError
    from oceansim_py.scene.bathymetry import TILE_SIZE, scene_from_bathymetry

    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise ConfigError(f"{out}: exists; pass --overwrite to replace it")
    bands = []
    for text in args.band:
        parts = text.split(":")
        if len(parts) != 3:
            raise ConfigError(f"--band {text!r}: expected MIN:MAX:MATERIAL, e.g. 0:20:sand")
        try:
            bands.append((float(parts[0]), float(parts[1]), parts[2]))
        except ValueError:
            raise ConfigError(f"--band {text!r}: MIN and MAX must be depths in metres") from None
    geographic = {"auto": None, "yes": True, "no": False}[args.geographic]
    scene_from_bathymetry(args.grid, out, bounds=args.bounds, resolution=args.resolution, values=args.values,
                          geographic=geographic, material=args.material, depth_bands=bands,
                          tile_size=TILE_SIZE if args.tile_size is None else args.tile_size,
                          materials=args.materials, build_scene=False)
    print(f"wrote {out}")
    return 0
