"""Survey bathymetry grids -> seafloor scenes: GeoTIFF, NetCDF, ESRI ASCII grid and XYZ point files.

Readers (optional extra ``bathymetry``): GeoTIFF and ESRI ASCII grids (``.tif``/``.tiff``/``.asc``) and Surfer
grids (``.grd`` starting ``DSAA``/``DSBB``/``DSRB``) through ``rasterio``; NetCDF (``.nc``/``.grd``,
GEBCO/EMODnet/GMT style) through ``netCDF4``; XYZ text (``.xyz``, ``.txt``, ``.csv``: ``x y z`` per line,
separated by spaces, tabs, commas or semicolons; in a line separated by semicolons a comma is the decimal mark)
with numpy.

Conventions (the package's world frame: Z up, metres, sea surface at z = 0):

- **Sign.** Grid values are *elevations* (up positive, so the seafloor 30 m down is -30) unless they are
  *depths* (down positive): a NetCDF variable named ``depth`` or carrying ``positive = "down"``, an XYZ file
  whose header line names its columns x, y and ``depth`` (``depth_m``, ``Depth (m)``, ``bathymetry``), or
  ``values="depth"`` given by the caller. A depth ``d`` becomes ``z = -d``.
- **Nodata** (the raster's nodata value, NetCDF ``_FillValue``/``missing_value``, NaN, XYZ lattice points that are
  absent) is masked: a grid cell whose four corners are not all valid gets no triangles.
- **Local frame.** Origin at the centre of the (cropped) grid's extent; x east, y north, metres. A projected
  grid (or one without a CRS) is used as is, its coordinates shifted by the origin (and converted to metres
  when its CRS's linear unit is the foot or US survey foot, as in US State Plane zones). A geographic grid
  (lon/lat degrees: a geographic CRS, NetCDF ``lat``/``lon`` axes or units ``degrees_*``, an XYZ header
  ``lon lat ...``) is mapped to metres by an equirectangular (local tangent-plane) approximation about the
  centre ``(lon0, lat0)`` on the WGS84 ellipsoid: ``x = N(lat0) cos(lat0) (lon - lon0)``,
  ``y = M(lat0) (lat - lat0)`` with ``M``, ``N`` the meridional and prime-vertical radii of curvature (angles
  in radians). Within 10 km of the centre the error is below ~0.1 %. The origin and CRS are kept in the
  scene metadata (``bathymetry``).
- **Raster values** are ``raw * scale + offset`` (the GeoTIFF's GDAL scale/offset metadata, e.g. int16
  decimetres), before the sign convention, in the band's unit (GDAL unit type: feet, US survey feet,
  fathoms, decimetres, centimetres and millimetres are converted to metres; any other unit is taken as
  metres); samples sit at pixel centres (``xllcorner``/``xllcenter`` of an ESRI grid both honoured).
- **Crop** ``bounds=(xmin, ymin, xmax, ymax)`` is in the grid's own coordinates (degrees for a geographic
  grid), applied before anything else: it keeps the samples (pixel centres) that lie inside the bounds.
  **Resample** ``resolution`` (m) re-grids the cropped grid by bilinear interpolation onto a regular grid of
  that spacing in the local frame (a sample strictly between a nodata sample and others is nodata; one on a
  valid source sample keeps its value).
- **Mesh.** Grid samples are the vertices (pixel centres); each valid cell gives two triangles, normals up.
  Large grids are split into tiles of at most ``tile_size`` x ``tile_size`` cells, one mesh node each, sharing
  their edge vertices so the surface has no cracks.
- **Materials.** Every tile takes ``material`` (default ``sand``); ``depth_bands`` ``[(d0, d1, name), ...]``
  give triangles whose centroid depth ``-z`` lies in ``[d0, d1)`` metres the material ``name`` (first band
  that matches; the others keep ``material``). A tile with several materials becomes one node per material.
- **XYZ lattice**: points whose x and y each sit on a regular spacing (within 0.05 of it, so coordinates printed
  to a few decimals count) and of which at least half have a lattice neighbour east or north are that grid
  (absent points: nodata). **Scattered XYZ points** (any other set, e.g. soundings rounded to cm) are gridded:
  the mean z of the points in each cell of a grid of spacing ``resolution`` (default: the mean point spacing,
  ``sqrt(area / n)``); empty cells are nodata.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import numbers
import re
import warnings
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from oceansim_py.errors import SceneError
from oceansim_py.io.atomic import atomic_open
from oceansim_py.scene.graph import Node, Scene, TriangleMesh
from oceansim_py.scene.materials import MaterialTable, material_named

GEOTIFF_SUFFIXES = {".tif", ".tiff", ".asc"}
NETCDF_SUFFIXES = {".nc", ".grd", ".nc4"}
XYZ_SUFFIXES = {".xyz", ".txt", ".csv"}
BATHYMETRY_SUFFIXES = GEOTIFF_SUFFIXES | NETCDF_SUFFIXES | XYZ_SUFFIXES

#: Cells per tile side (a tile holds at most 2 * TILE_SIZE^2 triangles).
TILE_SIZE = 1024
#: Host bytes a scene needs per triangle and per vertex (node meshes, world copies, BVH), for the memory check.
SCENE_BYTES_PER_TRIANGLE = 160
SCENE_BYTES_PER_VERTEX = 80
#: WGS84 semi-major axis (m) and first eccentricity squared.
WGS84_A = 6378137.0
WGS84_E2 = 6.69437999014e-3

_ELEVATION_NAMES = ("elevation", "z", "height", "topo", "band1", "altitude")
_DEPTH_NAMES = ("depth", "bathymetry", "deptht")
#: NetCDF dimension names of the east (x) and north (y) axes, to tell a grid stored (x, y) from one stored (y, x)
_X_DIMS = ("x", "lon", "longitude", "easting")
_Y_DIMS = ("y", "lat", "latitude", "northing")


@dataclasses.dataclass
class BathymetryGrid:
    """A regular grid of seafloor heights.

    z: (ny, nx) float64 elevation (m, up positive, NaN = nodata) after the sign convention is applied.
    x: (nx,) ascending sample x coordinates; y: (ny,) ascending sample y coordinates. In the source's own
    units until :meth:`to_local` maps them to local metres.
    geographic: coordinates are lon/lat degrees. crs: the source CRS as text (WKT/EPSG), or ``None``.
    metres_per_unit: metres per x/y unit of a projected grid (a CRS in feet or US survey feet: 0.3048,
    0.3048006; else 1), applied by :meth:`to_local`.
    """

    z: np.ndarray
    x: np.ndarray
    y: np.ndarray
    geographic: bool
    crs: str | None
    source: str
    origin: tuple[float, float] = (0.0, 0.0)
    metres_per_unit: float = 1.0

    def crop(self, bounds: Sequence[float]) -> "BathymetryGrid":
        """The samples inside ``(xmin, ymin, xmax, ymax)`` (source units)."""
        xmin, ymin, xmax, ymax = _check_bounds(bounds, self.source)
        ix = np.nonzero((self.x >= xmin) & (self.x <= xmax))[0]
        iy = np.nonzero((self.y >= ymin) & (self.y <= ymax))[0]
        if ix.size < 2 or iy.size < 2:
            raise SceneError(f"{self.source}: the crop {list(bounds)} holds fewer than 2 x 2 grid samples; the "
                             f"grid spans x {self.x[0]:g}..{self.x[-1]:g}, y {self.y[0]:g}..{self.y[-1]:g}")
        return dataclasses.replace(self, z=self.z[iy[0]:iy[-1] + 1, ix[0]:ix[-1] + 1],
                                   x=self.x[ix[0]:ix[-1] + 1], y=self.y[iy[0]:iy[-1] + 1])

    def to_local(self) -> "BathymetryGrid":
        """The grid with x, y in local metres about the centre of its extent (see module docstring)."""
        cx = 0.5 * (self.x[0] + self.x[-1])
        cy = 0.5 * (self.y[0] + self.y[-1])
        if self.geographic:
            lat0 = math.radians(cy)
            s2 = math.sin(lat0) ** 2
            n_rad = WGS84_A / math.sqrt(1.0 - WGS84_E2 * s2)
            m_rad = WGS84_A * (1.0 - WGS84_E2) / (1.0 - WGS84_E2 * s2) ** 1.5
            x = (self.x - cx) * math.radians(1.0) * n_rad * math.cos(lat0)
            y = (self.y - cy) * math.radians(1.0) * m_rad
        else:
            x, y = (self.x - cx) * self.metres_per_unit, (self.y - cy) * self.metres_per_unit
        return dataclasses.replace(self, x=x, y=y, origin=(float(cx), float(cy)), metres_per_unit=1.0)

    def resample(self, resolution: float) -> "BathymetryGrid":
        """Bilinear re-gridding onto spacing ``resolution`` (same units as x, y) over the same extent."""
        if not (math.isfinite(resolution) and resolution > 0):
            raise SceneError(f"{self.source}: resolution must be a finite spacing > 0 (m), got {resolution!r}")
        nx = int(math.floor((self.x[-1] - self.x[0]) / resolution + 1e-9)) + 1
        ny = int(math.floor((self.y[-1] - self.y[0]) / resolution + 1e-9)) + 1
        if nx < 2 or ny < 2:
            raise SceneError(f"{self.source}: resolution {resolution:g} m is coarser than the grid's extent "
                             f"({self.x[-1] - self.x[0]:g} x {self.y[-1] - self.y[0]:g} m)")
        xs = self.x[0] + resolution * np.arange(nx)
        ys = self.y[0] + resolution * np.arange(ny)
        fx = np.interp(xs, self.x, np.arange(self.x.size, dtype=np.float64))
        fy = np.interp(ys, self.y, np.arange(self.y.size, dtype=np.float64))
        # a target sample within 1e-9 cells of a source sample is on it (weights exactly 0 and 1)
        fx = np.where(np.abs(fx - np.rint(fx)) < 1e-9, np.rint(fx), fx)
        fy = np.where(np.abs(fy - np.rint(fy)) < 1e-9, np.rint(fy), fy)
        x0 = np.minimum(np.floor(fx).astype(np.int64), self.x.size - 2)
        y0 = np.minimum(np.floor(fy).astype(np.int64), self.y.size - 2)
        tx = (fx - x0)[None, :]
        ty = (fy - y0)[:, None]
        z = self.z
        rows0, rows1 = z[y0], z[y0 + 1]
        top = _lerp(rows0[:, x0], rows0[:, x0 + 1], tx)
        bottom = _lerp(rows1[:, x0], rows1[:, x0 + 1], tx)
        return dataclasses.replace(self, z=_lerp(top, bottom, ty), x=xs, y=ys)


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``a (1 - t) + b t``, where a sample of weight 0 does not count: a nodata (NaN) neighbour spoils only the
    samples that lie strictly between it and a valid one, not those on a valid grid sample."""
    with np.errstate(invalid="ignore"):
        return np.where(t == 0.0, a, np.where(t == 1.0, b, a * (1 - t) + b * t))


def _check_bounds(bounds: Sequence[float], source: str) -> tuple[float, float, float, float]:
    try:
        xmin, ymin, xmax, ymax = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise SceneError(f"{source}: bounds must be four numbers (xmin, ymin, xmax, ymax), got {bounds!r}") from None
    if not (xmin < xmax and ymin < ymax) or not all(map(math.isfinite, (xmin, ymin, xmax, ymax))):
        raise SceneError(f"{source}: bounds must be finite with xmin < xmax and ymin < ymax, got {list(bounds)}")
    return xmin, ymin, xmax, ymax


# -- readers ---------------------------------------------------------------------------------------------------

def _import(module: str, path: Path) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SceneError(f"{path}: reading this grid needs the '{module}' package; install the extra: "
                         f"pip install 'oceansim-py[bathymetry]'") from None


def _ascending(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Axes ``x`` (nx,) and ``y`` (ny,) flipped to ascending order, with the (ny, nx) grid ``z`` flipped to match."""
    if y[0] > y[-1]:
        y, z = y[::-1], z[::-1]
    if x[0] > x[-1]:
        x, z = x[::-1], z[:, ::-1]
    return x, y, z


def _read_raster(path: Path, bounds: Sequence[float] | None, max_bytes: int) -> BathymetryGrid:
    """GeoTIFF or ESRI ASCII grid through rasterio; only the cropped window is read."""
    with warnings.catch_warnings():
        # rasterio's window helpers use the affine '*' operator, which affine flags as pending deprecation
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return _read_raster_window(path, bounds, max_bytes)


def _read_raster_window(path: Path, bounds: Sequence[float] | None, max_bytes: int) -> BathymetryGrid:
    rasterio = _import("rasterio", path)
    from rasterio.windows import Window

    try:
        ds = rasterio.open(path)
    except Exception as exc:  # rasterio raises RasterioIOError and others
        raise SceneError(f"{path}: not a readable raster grid ({exc})") from exc
    with ds:
        if ds.transform.b != 0 or ds.transform.d != 0:
            raise SceneError(f"{path}: the raster is rotated or sheared; warp it to a north-up grid first "
                             f"(e.g. gdalwarp)")
        window = Window(0, 0, ds.width, ds.height)
        if bounds is not None:
            xmin, ymin, xmax, ymax = _check_bounds(bounds, str(path))
            window = _centre_window(ds.transform, ds.width, ds.height, (xmin, ymin, xmax, ymax))
            if window is None:
                raise SceneError(f"{path}: the crop {list(bounds)} holds fewer than 2 x 2 grid samples; the "
                                 f"grid covers {list(ds.bounds)}")
        _check_grid_bytes(int(window.width) * int(window.height), path, max_bytes)
        band = ds.read(1, window=window, masked=True)
        # stored values are scaled: value = raw * scale + offset (GDAL metadata; e.g. int16 decimetres)
        scale, offset = ds.scales[0], ds.offsets[0]
        z = np.ma.filled(band.astype(np.float64) * scale + offset, np.nan) * _vertical_metres(ds.units[0])
        t = ds.window_transform(window)
        x = t.c + t.a * (np.arange(int(window.width)) + 0.5)
        y = t.f + t.e * (np.arange(int(window.height)) + 0.5)
        crs = ds.crs
        geographic = bool(crs is not None and crs.is_geographic)
        crs_text = crs.to_string() if crs is not None else None
        # a projected CRS in feet (e.g. a US State Plane zone in US survey feet): x, y are feet
        horizontal = float(crs.linear_units_factor[1]) if crs is not None and crs.is_projected else 1.0
    x, y, z = _ascending(x, y, z)
    return BathymetryGrid(z, x, y, geographic, crs_text, str(path), metres_per_unit=horizontal)


#: Metres per vertical unit, by the band's unit name (lower case, spaces and dashes removed); other names: metres.
_VERTICAL_UNITS = {"ft": 0.3048, "foot": 0.3048, "feet": 0.3048, "internationalfoot": 0.3048,
                   "ftus": 1200.0 / 3937.0, "usft": 1200.0 / 3937.0, "ussurveyfoot": 1200.0 / 3937.0,
                   "ussurveyfeet": 1200.0 / 3937.0, "footus": 1200.0 / 3937.0, "feetus": 1200.0 / 3937.0,
                   "fathom": 1.8288, "fathoms": 1.8288, "fm": 1.8288,
                   "dm": 0.1, "decimetre": 0.1, "decimeter": 0.1, "decimetres": 0.1, "decimeters": 0.1,
                   "cm": 0.01, "centimetre": 0.01, "centimeter": 0.01, "centimetres": 0.01, "centimeters": 0.01,
                   "mm": 0.001, "millimetre": 0.001, "millimeter": 0.001, "millimetres": 0.001, "millimeters": 0.001}


def _vertical_metres(units: str | None) -> float:
    """Metres per unit of a raster band whose unit is ``units`` (GDAL band unit type; empty: metres)."""
    key = (units or "").lower().replace(" ", "").replace("-", "").replace("_", "")
    return _VERTICAL_UNITS.get(key, 1.0)


def _centre_window(transform: Any, width: int, height: int, bounds: tuple[float, float, float, float]) -> Any:
    """The window of the pixels whose centres lie inside ``bounds`` (the rule of :meth:`BathymetryGrid.crop`),
    or ``None`` when it holds fewer than 2 x 2 pixels. ``transform``: a north-up affine (b = d = 0)."""
    from rasterio.windows import Window

    xmin, ymin, xmax, ymax = bounds
    # pixel centre i lies at c + a (i + 0.5): its index range for x in [xmin, xmax] (a > 0 or a < 0)
    def index_range(lo: float, hi: float, origin: float, step: float, n: int) -> tuple[int, int]:
        f0, f1 = sorted(((lo - origin) / step - 0.5, (hi - origin) / step - 0.5))
        return max(math.ceil(f0 - 1e-9), 0), min(math.floor(f1 + 1e-9), n - 1)

    c0, c1 = index_range(xmin, xmax, transform.c, transform.a, width)
    r0, r1 = index_range(ymin, ymax, transform.f, transform.e, height)
    if c1 - c0 + 1 < 2 or r1 - r0 + 1 < 2:
        return None
    return Window(c0, r0, c1 - c0 + 1, r1 - r0 + 1)


def _pick(names: Sequence[str], candidates: Sequence[str]) -> str | None:
    lower = {n.lower(): n for n in names}
    return next((lower[c] for c in candidates if c in lower), None)


def _read_netcdf(path: Path, bounds: Sequence[float] | None, values: str | None,
                 max_bytes: int) -> tuple[BathymetryGrid, str]:
    """A 2-D ``elevation``/``depth``/``z`` variable on 1-D x/y (lon/lat) axes, stored (y, x) or, when its
    dimension names say so (``lon``/``x``/... first, ``lat``/``y``/... second), (x, y); only the crop is read."""
    netCDF4 = _import("netCDF4", path)
    try:
        ds = netCDF4.Dataset(str(path))
    except OSError as exc:
        raise SceneError(f"{path}: not a readable NetCDF file ({exc})") from exc
    with ds:
        two_d = [n for n, v in ds.variables.items() if v.ndim == 2]
        name = _pick(two_d, _ELEVATION_NAMES + _DEPTH_NAMES)
        if name is None:
            raise SceneError(f"{path}: no 2-D grid variable named one of {list(_ELEVATION_NAMES + _DEPTH_NAMES)}; "
                             f"2-D variables found: {two_d}")
        var = ds.variables[name]
        # (y, x) as GMT, GEBCO and EMODnet write it; a variable stored (x, y) (named so) is read transposed
        transposed = var.dimensions[0].lower() in _X_DIMS and var.dimensions[1].lower() in _Y_DIMS
        xdim, ydim = var.dimensions if transposed else var.dimensions[::-1]
        if xdim not in ds.variables or ydim not in ds.variables:
            raise SceneError(f"{path}: variable {name!r} has no coordinate variables for its dimensions "
                             f"({ydim}, {xdim})")
        xv, yv = ds.variables[xdim], ds.variables[ydim]
        x = np.asarray(xv[:], dtype=np.float64)
        y = np.asarray(yv[:], dtype=np.float64)
        units = f"{getattr(xv, 'units', '')} {getattr(yv, 'units', '')}".lower()
        geographic = "degree" in units or (xdim.lower() in ("lon", "longitude") and ydim.lower() in ("lat", "latitude"))
        ix = np.arange(x.size)
        iy = np.arange(y.size)
        if bounds is not None:
            xmin, ymin, xmax, ymax = _check_bounds(bounds, str(path))
            ix = np.nonzero((x >= xmin) & (x <= xmax))[0]
            iy = np.nonzero((y >= ymin) & (y <= ymax))[0]
            if ix.size < 2 or iy.size < 2:
                raise SceneError(f"{path}: the crop {list(bounds)} holds fewer than 2 x 2 grid samples; the grid "
                                 f"spans x {x.min():g}..{x.max():g}, y {y.min():g}..{y.max():g}")
        _check_grid_bytes(ix.size * iy.size, path, max_bytes)
        var.set_auto_maskandscale(True)
        if transposed:
            data = np.ma.asarray(var[ix[0]:ix[-1] + 1, iy[0]:iy[-1] + 1]).T
        else:
            data = var[iy[0]:iy[-1] + 1, ix[0]:ix[-1] + 1]
        z = np.ma.filled(np.ma.asarray(data).astype(np.float64), np.nan)
        positive = str(getattr(var, "positive", "")).lower()
        kind = values or ("depth" if positive == "down" or (positive != "up" and name.lower() in _DEPTH_NAMES)
                          else "elevation")
        x, y = x[ix[0]:ix[-1] + 1], y[iy[0]:iy[-1] + 1]
    x, y, z = _ascending(x, y, z)
    return BathymetryGrid(z, x, y, geographic, "EPSG:4326" if geographic else None, str(path)), kind


def _read_xyz(path: Path, resolution: float | None, geographic: bool | None, values: str | None,
              max_bytes: int) -> tuple[BathymetryGrid, str]:
    """``x y z`` lines; a lattice (points on a regular spacing, some may be missing) becomes that grid (the mean z
    of points given twice), other point sets are binned (mean z per cell, ``resolution`` in metres for projected
    points; geographic ones are binned at their mean spacing and resampled later).

    A header line naming the columns x, y (``x``/``lon``/``longitude``/``easting``/``e``,
    ``y``/``lat``/``latitude``/``northing``/``n``) and z says more: the kind is ``values``, else ``depth`` when
    the third name is a depth (``depth``, ``depth_m``, ``Depth (m)``, ``bathymetry``), else ``elevation``; and
    with ``geographic`` ``None`` the points are lon/lat degrees when the first two names are lon/lat."""
    rows = []
    header: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            text = line.split("#", 1)[0]
            # semicolon-separated lines use the comma as their decimal mark ("1,5;2,5;-30,25")
            text = (text.replace(",", ".") if ";" in text else text.replace(",", " ")).replace(";", " ").split()
            if not text:
                continue
            try:
                rows.append([float(v) for v in text[:3]])
            except ValueError:
                if rows:
                    raise SceneError(f"{path}:{lineno}: not three numbers 'x y z': {line.strip()!r}") from None
                header = text  # a header line
                continue
            if len(text) < 3:
                raise SceneError(f"{path}:{lineno}: expected three columns 'x y z', got {line.strip()!r}")
    names = [re.match(r"[a-z]*", h.lower()).group() for h in header[:3]]  # type: ignore[union-attr]
    xy_header = len(names) == 3 and names[0] in _X_DIMS + ("e", "east") and names[1] in _Y_DIMS + ("n", "north")
    kind = values or ("depth" if xy_header and names[2] in _DEPTH_NAMES else "elevation")
    if geographic is None:
        geographic = xy_header and names[0] in ("lon", "longitude") and names[1] in ("lat", "latitude")
    if geographic:
        resolution = None
    pts = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    pts = pts[np.isfinite(pts).all(axis=1)]
    if pts.shape[0] < 4:
        raise SceneError(f"{path}: fewer than 4 valid 'x y z' points")
    src = str(path)
    lattice = _lattice(pts[:, 0]), _lattice(pts[:, 1])
    if lattice[0] is not None and lattice[1] is not None:
        (x0, dx, nx), (y0, dy, ny) = lattice
        ix = np.rint((pts[:, 0] - x0) / dx).astype(np.int64)
        iy = np.rint((pts[:, 1] - y0) / dy).astype(np.int64)
    if lattice[0] is not None and lattice[1] is not None and _mostly_neighbours(ix, iy):
        _check_grid_bytes(nx * ny, path, max_bytes)
        return BathymetryGrid(_cell_means(ix, iy, pts[:, 2], nx, ny), x0 + dx * np.arange(nx),
                              y0 + dy * np.arange(ny), geographic, "EPSG:4326" if geographic else None, src), kind
    lo, hi = pts[:, :2].min(axis=0), pts[:, :2].max(axis=0)
    if resolution is None:
        resolution = math.sqrt(float(np.prod(hi - lo)) / pts.shape[0])
    if not (math.isfinite(resolution) and resolution > 0):
        raise SceneError(f"{path}: the points span no area; give a resolution > 0")
    # cell centres lo + k * resolution up to the one nearest hi: every point lies within half a cell of its centre
    nx, ny = (int(v) for v in np.rint((hi - lo) / resolution).astype(np.int64) + 1)
    _check_grid_bytes(nx * ny, path, max_bytes)
    ix = np.rint((pts[:, 0] - lo[0]) / resolution).astype(np.int64)
    iy = np.rint((pts[:, 1] - lo[1]) / resolution).astype(np.int64)
    return BathymetryGrid(_cell_means(ix, iy, pts[:, 2], nx, ny), lo[0] + resolution * np.arange(nx),
                          lo[1] + resolution * np.arange(ny), geographic, "EPSG:4326" if geographic else None,
                          src), kind


def _cell_means(ix: np.ndarray, iy: np.ndarray, z: np.ndarray, nx: int, ny: int) -> np.ndarray:
    """(ny, nx) grid of the mean ``z`` of the points in each cell ``(iy, ix)``; NaN where a cell has none."""
    flat = iy * nx + ix
    total = np.bincount(flat, weights=z, minlength=nx * ny)
    count = np.bincount(flat, minlength=nx * ny)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan).reshape(ny, nx)


def _lattice(values: np.ndarray) -> tuple[float, float, int] | None:
    """(start, spacing, count) when every value sits within 0.05 spacing of ``start + k * spacing`` (k integer),
    else ``None``. The spacing is the extent over its number of steps (the extent over the mean of the gaps near
    the smallest, rounded), so coordinates printed with a few decimals (a 15 arc-second lattice written to 6 or 4
    decimals of a degree) still form their lattice."""
    u = np.unique(values)
    if u.size < 2:
        return None
    extent = float(u[-1] - u[0])
    gaps = np.diff(u)
    steps = round(extent / float(np.mean(gaps[gaps <= 1.5 * gaps.min()])))
    step = extent / steps
    k = (u - u[0]) / step
    if not np.all(np.abs(k - np.rint(k)) <= 0.05):
        return None
    return float(u[0]), step, steps + 1


def _mostly_neighbours(ix: np.ndarray, iy: np.ndarray) -> bool:
    """Whether at least half of the lattice nodes ``(ix, iy)`` have their east or north neighbour among them, as
    in a grid written out sample by sample (holes allowed). Scattered soundings rounded to a few decimals also sit
    on a (fine) lattice, but rarely next to each other; they are binned instead."""
    nodes = set(zip(ix.tolist(), iy.tolist()))
    linked = sum(1 for i, j in nodes if (i + 1, j) in nodes or (i, j + 1) in nodes)
    return 2 * linked >= len(nodes)


def _check_grid_bytes(samples: int, path: Path, max_bytes: int) -> None:
    need = samples * 8 * 4  # the grid in float64 and the temporaries of sign, crop and resampling
    if need > max_bytes:
        raise SceneError(f"{path}: the grid holds {samples:,} samples and would need about {need / 2**30:.2f} GiB "
                         f"(limit {max_bytes / 2**30:.2f} GiB); crop it with bounds or coarsen it with a "
                         f"resolution (the crop is read without loading the rest)")


def read_bathymetry(path: str | Path, bounds: Sequence[float] | None = None, resolution: float | None = None,
                    values: str | None = None, geographic: bool | None = None,
                    max_memory_bytes: int | None = None) -> BathymetryGrid:
    """Read a bathymetry grid, crop it, convert it to local metres and elevations, and resample it.

    Args:
        path: a GeoTIFF/ASCII grid, NetCDF or XYZ file.
        bounds: crop ``(xmin, ymin, xmax, ymax)`` in the file's own coordinates.
        resolution: target grid spacing in metres (``None``: keep the file's spacing).
        values: ``"elevation"`` (up positive) or ``"depth"`` (down positive); ``None``: from the file
            (NetCDF variable name / ``positive`` attribute), else elevation.
        geographic: force lon/lat (``True``) or projected metres (``False``); ``None``: from the CRS (grids
            without a CRS: projected; XYZ: lon/lat when its header names the columns lon, lat, else projected).
        max_memory_bytes: refuse grids that would need more host memory (default: half the available RAM).

    Returns: the grid in the local frame (module docstring), ``z`` up positive in metres.
    """
    p = Path(path)
    if not p.is_file():
        raise SceneError(f"{p}: no such file")
    if values not in (None, "elevation", "depth"):
        raise SceneError(f"{p}: values must be 'elevation' or 'depth', got {values!r}")
    if resolution is not None and not (isinstance(resolution, numbers.Real) and math.isfinite(resolution)
                                       and resolution > 0):
        raise SceneError(f"{p}: resolution must be a finite spacing > 0 (m), got {resolution!r}")
    limit = int(max_memory_bytes) if max_memory_bytes is not None else _default_memory_limit()
    suffix = p.suffix.lower()
    kind = values or "elevation"
    if suffix in GEOTIFF_SUFFIXES or (suffix == ".grd" and _is_surfer_grid(p)):
        grid = _read_raster(p, bounds, limit)
    elif suffix in NETCDF_SUFFIXES:
        grid, kind = _read_netcdf(p, bounds, values, limit)
    elif suffix in XYZ_SUFFIXES:
        grid, kind = _read_xyz(p, resolution, geographic, values, limit)
        if bounds is not None:
            grid = grid.crop(bounds)
    else:
        raise SceneError(f"{p}: unsupported bathymetry file type {suffix or '(none)'}; use one of "
                         f"{sorted(BATHYMETRY_SUFFIXES)}")
    if geographic is not None:
        grid.geographic = bool(geographic)
    if kind == "depth":
        grid.z = -grid.z
    if not np.isfinite(grid.z).any():
        raise SceneError(f"{p}: the grid{' crop ' + str(list(bounds)) if bounds is not None else ''} holds only "
                         f"nodata; choose bounds that cover valid soundings")
    grid = grid.to_local()
    if resolution is not None:
        _check_grid_bytes(int((grid.x[-1] - grid.x[0]) / resolution + 1) * int((grid.y[-1] - grid.y[0]) / resolution
                                                                                + 1), p, limit)
        grid = grid.resample(resolution)
    return grid


def _is_surfer_grid(path: Path) -> bool:
    """Whether a ``.grd`` file is a Golden Software Surfer grid (ASCII ``DSAA``, binary ``DSBB``/``DSRB``; read
    through rasterio, samples at its nodes, the blanking value 1.70141e38 nodata) rather than a GMT NetCDF one."""
    with open(path, "rb") as fh:
        return fh.read(4) in (b"DSAA", b"DSBB", b"DSRB")


def _default_memory_limit() -> int:
    from oceansim_py.runtime import available_memory_bytes

    return available_memory_bytes("cpu") // 2


# -- meshing -----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Tile:
    """One tile's triangles: ``name`` (``tile_r<row>_c<col>``), vertices (V, 3) m, triangles (F, 3), and the
    material name of each triangle."""

    name: str
    vertices: np.ndarray
    triangles: np.ndarray
    materials: list[tuple[str, np.ndarray]]


def _parse_bands(depth_bands: Sequence[Sequence[Any]] | None, table: MaterialTable,
                 source: str) -> list[tuple[float, float, str]]:
    bands = []
    for band in depth_bands or ():
        try:
            d0, d1, name = float(band[0]), float(band[1]), str(band[2])
        except (TypeError, ValueError, IndexError):
            raise SceneError(f"{source}: a depth band must be (min_depth_m, max_depth_m, material), "
                             f"got {band!r}") from None
        if not d0 < d1:
            raise SceneError(f"{source}: depth band {band!r}: min depth must be below max depth")
        material_named(table, name, f"{source}: depth band {band!r}")
        bands.append((d0, d1, name.lower()))
    return bands


def iter_tiles(grid: BathymetryGrid, material: str = "sand", depth_bands: Sequence[Sequence[Any]] | None = None,
               tile_size: int = TILE_SIZE, materials: MaterialTable | None = None) -> Iterator[Tile]:
    """The grid's triangles, one :class:`Tile` at a time (memory: one tile), rows of tiles from the south."""
    table = materials or MaterialTable()
    material_named(table, material, grid.source)
    bands = _parse_bands(depth_bands, table, grid.source)
    if isinstance(tile_size, bool) or not isinstance(tile_size, numbers.Integral) or tile_size < 1:
        raise SceneError(f"{grid.source}: tile_size must be a whole number of cells >= 1, got {tile_size!r}")
    ny, nx = grid.z.shape
    for tr, r0 in enumerate(range(0, ny - 1, tile_size)):
        r1 = min(r0 + tile_size, ny - 1)
        for tc, c0 in enumerate(range(0, nx - 1, tile_size)):
            c1 = min(c0 + tile_size, nx - 1)
            z = grid.z[r0:r1 + 1, c0:c1 + 1]
            valid = np.isfinite(z)
            cells = valid[:-1, :-1] & valid[:-1, 1:] & valid[1:, :-1] & valid[1:, 1:]
            if not cells.any():
                continue
            w = c1 - c0 + 1
            rr, cc = np.nonzero(cells)
            a = rr * w + cc
            quads = np.stack([a, a + 1, a + w + 1, a + w], axis=1)
            tris = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
            used = np.zeros(z.size, dtype=bool)
            used[tris.reshape(-1)] = True
            remap = np.cumsum(used) - 1
            gx, gy = np.meshgrid(grid.x[c0:c1 + 1], grid.y[r0:r1 + 1])
            verts = np.stack([gx.reshape(-1)[used], gy.reshape(-1)[used], z.reshape(-1)[used]], axis=1)
            tris = remap[tris]
            names = np.full(tris.shape[0], material, dtype=object)
            if bands:
                depth = -verts[tris, 2].mean(axis=1)
                assigned = np.zeros(tris.shape[0], dtype=bool)
                for d0, d1, name in bands:
                    hit = ~assigned & (depth >= d0) & (depth < d1)
                    names[hit] = name
                    assigned |= hit
            groups = [(str(m), np.nonzero(names == m)[0]) for m in sorted(set(names.tolist()))]
            yield Tile(f"tile_r{tr:03d}_c{tc:03d}", verts, tris, groups)


def estimate_scene_bytes(grid: BathymetryGrid) -> int:
    """Host bytes a :class:`Scene` of this grid needs (node meshes, world copies, BVH), at most."""
    ny, nx = grid.z.shape
    return SCENE_BYTES_PER_TRIANGLE * 2 * (nx - 1) * (ny - 1) + SCENE_BYTES_PER_VERTEX * nx * ny


def bathymetry_nodes(grid: BathymetryGrid, material: str = "sand",
                     depth_bands: Sequence[Sequence[Any]] | None = None, tile_size: int = TILE_SIZE,
                     materials: MaterialTable | None = None) -> list[Node]:
    """Scene nodes: ``/Bathymetry`` (label ``seafloor``) with one child per tile (and material)."""
    table = materials or MaterialTable()
    root = Node(path="/Bathymetry", material=material_named(table, material, grid.source), label="seafloor")
    nodes = [root]
    for tile in iter_tiles(grid, material, depth_bands, tile_size, table):
        for name, faces in tile.materials:
            suffix = "" if len(tile.materials) == 1 else f"_{name}"
            tris = tile.triangles[faces]
            node = Node(path=f"/Bathymetry/{tile.name}{suffix}", mesh=TriangleMesh(tile.vertices, tris),
                        material=table[name], label="seafloor", parent=root)
            root.children.append(node)
            nodes.append(node)
    if len(nodes) == 1:
        raise SceneError(f"{grid.source}: no grid cell has four valid corners; nothing to mesh")
    return nodes


def scene_from_bathymetry(path: str | Path, out: str | Path | None = None, *, bounds: Sequence[float] | None = None,
                          resolution: float | None = None, values: str | None = None,
                          geographic: bool | None = None, material: str = "sand",
                          depth_bands: Sequence[Sequence[Any]] | None = None, tile_size: int = TILE_SIZE,
                          materials: MaterialTable | str | Path | None = None, device: Any = None,
                          build_scene: bool = True, max_memory_bytes: int | None = None) -> Scene | None:
    """A seafloor scene from a bathymetry grid (see the module docstring for every convention).

    ``out``: also write the scene as a ``.usda`` stage (streamed tile by tile, through a temporary file renamed
    into place). ``build_scene=False`` with ``out`` writes the file only (memory: the grid and one tile) and
    returns ``None``. Otherwise returns the :class:`Scene` with its BVH on ``device``; grids whose scene would
    need more than ``max_memory_bytes`` (default: half the available RAM) are refused with the estimate.
    ``materials``: a :class:`MaterialTable` or a YAML file of extra materials (as :func:`load_scene` takes).
    """
    table = MaterialTable.from_yaml(materials) if isinstance(materials, (str, Path)) else materials or MaterialTable()
    limit = int(max_memory_bytes) if max_memory_bytes is not None else _default_memory_limit()
    grid = read_bathymetry(path, bounds=bounds, resolution=resolution, values=values, geographic=geographic,
                           max_memory_bytes=limit)
    metadata = bathymetry_metadata(grid)
    scene = None
    if build_scene:
        need = estimate_scene_bytes(grid)
        if need > limit:
            raise SceneError(f"{path}: a scene of this {grid.z.shape[1]} x {grid.z.shape[0]} grid would need about "
                             f"{need / 2**30:.2f} GiB (limit {max(limit, 0) / 2**30:.2f} GiB); coarsen it with a "
                             f"resolution, crop it with bounds, or write the .usda alone (build_scene=False)")
        nodes = bathymetry_nodes(grid, material, depth_bands, tile_size, table)
    if out is not None:
        write_bathymetry_usda(grid, out, material, depth_bands, tile_size, table)
    if build_scene:
        scene = Scene(nodes, source=str(path), device=device, metadata=metadata)
    return scene


def bathymetry_metadata(grid: BathymetryGrid) -> dict[str, Any]:
    """Scene metadata: description, sea surface, a suggested pose and where the local origin lies."""
    from oceansim_py.scene.procedural import look_at_pose

    ny, nx = grid.z.shape
    centre_z = grid.z[ny // 2, nx // 2]
    floor = float(centre_z) if np.isfinite(centre_z) else float(np.nanmedian(grid.z))
    eye = (0.0, 0.0, min(floor + 10.0, -1.0))
    return {
        "description": f"seafloor from {Path(grid.source).name} ({nx} x {ny} samples)",
        "surface_z": 0.0,
        "suggested_pose": look_at_pose(eye, (20.0, 0.0, floor)),
        "bathymetry": {"source": grid.source, "origin": list(grid.origin), "crs": grid.crs or "",
                       "geographic": grid.geographic,
                       "frame": "x east, y north, z up (m); origin at the grid centre, sea surface z = 0"},
    }


# -- USDA writing ---------------------------------------------------------------------------------------------

def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _write_mesh(fh: Any, name: str, vertices: np.ndarray, triangles: np.ndarray, material: str) -> None:
    from oceansim_py.scene.procedural import POINT_DECIMALS

    ind = "        "
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    fh.write(f'{ind}def Mesh "{name}"\n{ind}{{\n')
    fh.write(f"{ind}    custom string oceansim:material = {_quote(material)}\n")
    fh.write(f"{ind}    float3[] extent = [({lo[0]:.4f}, {lo[1]:.4f}, {lo[2]:.4f}), "
             f"({hi[0]:.4f}, {hi[1]:.4f}, {hi[2]:.4f})]\n")
    fh.write(f"{ind}    int[] faceVertexCounts = [")
    np.full(triangles.shape[0], 3, dtype=np.int32).tofile(fh, sep=", ")
    fh.write(f"]\n{ind}    int[] faceVertexIndices = [")
    triangles.astype(np.int64).tofile(fh, sep=", ")
    fh.write(f"]\n{ind}    point3f[] points = [")
    f = f"%.{POINT_DECIMALS}f"
    np.savetxt(fh, vertices, fmt=f"({f}, {f}, {f})", delimiter="", newline=", ")
    fh.write(f"]\n{ind}    uniform token subdivisionScheme = \"none\"\n{ind}}}\n")


def write_bathymetry_usda(grid: BathymetryGrid, out: str | Path, material: str = "sand",
                          depth_bands: Sequence[Sequence[Any]] | None = None, tile_size: int = TILE_SIZE,
                          materials: MaterialTable | None = None) -> Path:
    """Write the grid's seafloor as a ``.usda`` stage (Z up, metres; ``/World/Bathymetry/tile_*`` meshes with
    ``oceansim:material``, semantic label ``seafloor``, and the ``oceansim`` layer metadata). Tiles are
    streamed, and the file appears only once complete (temporary name, then rename)."""
    from oceansim_py.scene.procedural import fmt

    path = Path(out)
    if path.suffix.lower() != ".usda":
        raise SceneError(f"{path}: the bathymetry scene is written as USDA text; give a .usda path")
    if not path.parent.is_dir():
        raise SceneError(f"{path}: the folder {path.parent} does not exist")
    meta = bathymetry_metadata(grid)
    bathy = meta["bathymetry"]
    with atomic_open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("#usda 1.0\n(\n    customLayerData = {\n        dictionary oceansim = {\n")
        fh.write(f"            string description = {_quote(meta['description'])}\n")
        fh.write(f"            double[] suggested_pose = [{', '.join(fmt(v) for v in meta['suggested_pose'])}]\n")
        fh.write("            double surface_z = 0\n")
        fh.write(f"            string bathymetry_source = {_quote(bathy['source'])}\n")
        fh.write(f"            double[] bathymetry_origin = [{fmt(bathy['origin'][0], 9)}, "
                 f"{fmt(bathy['origin'][1], 9)}]\n")
        fh.write(f"            string bathymetry_crs = {_quote(bathy['crs'])}\n")
        fh.write("        }\n    }\n    defaultPrim = \"World\"\n    metersPerUnit = 1\n    upAxis = \"Z\"\n)\n\n")
        fh.write('def Xform "World"\n{\n    def Xform "Bathymetry" (\n'
                 '        prepend apiSchemas = ["SemanticsLabelsAPI:class"]\n    )\n    {\n'
                 f'        custom string oceansim:material = {_quote(material)}\n'
                 '        token[] semantics:labels:class = ["seafloor"]\n')
        count = 0
        for tile in iter_tiles(grid, material, depth_bands, tile_size, materials):
            for name, faces in tile.materials:
                suffix = "" if len(tile.materials) == 1 else f"_{name}"
                tris = tile.triangles[faces]
                used = np.unique(tris)
                remap = np.full(tile.vertices.shape[0], -1, dtype=np.int64)
                remap[used] = np.arange(used.size)
                fh.write("\n")
                _write_mesh(fh, f"{tile.name}{suffix}", tile.vertices[used], remap[tris], name)
                count += 1
        if count == 0:
            raise SceneError(f"{grid.source}: no grid cell has four valid corners; nothing to write")
        fh.write("    }\n}\n")
    return path
