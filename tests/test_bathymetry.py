"""Bathymetry grids -> seafloor scenes: a synthetic grid (a known slope plus a known hill) written as GeoTIFF,
NetCDF (lon/lat depths), ESRI ASCII and XYZ gives hand-computed vertical ray-cast ranges; crop, resampling,
tiling, depth bands, USD output and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py import SceneError, load_scene, scene_from_bathymetry
from oceansim_py.cli import main as cli_main
from oceansim_py.scene.bathymetry import WGS84_A, WGS84_E2

# Local grid (m): x = -60..60, y = -40..40, spacing 2; origin at the centre.
NX, NY, DX = 61, 41, 2.0
X0, Y0 = 500000.0, 4000000.0      # projected coordinates of the local origin (UTM-like)


def elevation(x, y):
    """Slope z = -30 - 0.1 x + 0.05 y plus a Gaussian hill of 8 m (sigma 5 m) at (20, -10)."""
    return -30.0 - 0.1 * x + 0.05 * y + 8.0 * np.exp(-((x - 20.0) ** 2 + (y + 10.0) ** 2) / 50.0)


def local_grid():
    x = (np.arange(NX) - 30) * DX
    y = (np.arange(NY) - 20) * DX
    z = elevation(*np.meshgrid(x, y))
    z[:5, :5] = np.nan            # nodata patch in the south-west corner: x -60..-52, y -40..-32
    return x, y, z


def write_geotiff(path, crs="EPSG:32631"):
    import rasterio
    from rasterio.transform import from_origin

    x, y, z = local_grid()
    data = np.where(np.isnan(z), -9999.0, z)[::-1].astype(np.float32)       # north-up rows
    with rasterio.open(path, "w", driver="GTiff", width=NX, height=NY, count=1, dtype="float32", crs=crs,
                       nodata=-9999.0, transform=from_origin(X0 + x[0] - DX / 2, Y0 + y[-1] + DX / 2, DX, DX)) as ds:
        ds.write(data, 1)


def write_netcdf(path):
    """Depths (positive down) on lon/lat at the equator, spaced so that one step is 2 m both ways."""
    import netCDF4

    x, y, z = local_grid()
    dlon = math.degrees(DX / WGS84_A)                       # N(0) cos(0) = a
    dlat = math.degrees(DX / (WGS84_A * (1 - WGS84_E2)))    # M(0) = a (1 - e^2)
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("lat", NY)
        ds.createDimension("lon", NX)
        lat = ds.createVariable("lat", "f8", ("lat",))
        lon = ds.createVariable("lon", "f8", ("lon",))
        lat.units, lon.units = "degrees_north", "degrees_east"
        lat[:] = (np.arange(NY) - 20) * dlat
        lon[:] = 10.0 + (np.arange(NX) - 30) * dlon
        depth = ds.createVariable("depth", "f4", ("lat", "lon"), fill_value=-32767.0)
        depth.positive = "down"
        depth[:] = np.ma.masked_invalid(-z)


def write_netcdf_xy(path):
    """Elevations in projected metres stored (x, y): the variable's first dimension is x (east). Read as (y, x)
    it came out transposed, the probes 26.25, 26.125, 24.5 m giving 33.0, 33.1, 28.0 m."""
    import netCDF4

    x, y, z = local_grid()
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", NX)
        ds.createDimension("y", NY)
        xv = ds.createVariable("x", "f8", ("x",))
        yv = ds.createVariable("y", "f8", ("y",))
        xv.units = yv.units = "m"
        xv[:] = X0 + x
        yv[:] = Y0 + y
        elev = ds.createVariable("elevation", "f4", ("x", "y"), fill_value=-32767.0)
        elev[:] = np.ma.masked_invalid(z.T)


def write_ascii(path):
    x, y, z = local_grid()
    rows = np.where(np.isnan(z), -9999.0, z)[::-1]
    head = (f"ncols {NX}\nnrows {NY}\nxllcorner {X0 + x[0] - DX / 2}\nyllcorner {Y0 + y[0] - DX / 2}\n"
            f"cellsize {DX}\nNODATA_value -9999\n")
    path.write_text(head + "\n".join(" ".join(f"{v:.6f}" for v in row) for row in rows) + "\n")


def write_xyz(path):
    x, y, z = local_grid()
    xx, yy = np.meshgrid(X0 + x, Y0 + y)
    keep = np.isfinite(z)                                  # nodata points are simply absent
    lines = [f"{a:.3f},{b:.3f},{c:.6f}" for a, b, c in zip(xx[keep], yy[keep], z[keep])]
    path.write_text("x,y,z\n" + "\n".join(lines) + "\n")


WRITERS = {"grid.tif": write_geotiff, "grid.nc": write_netcdf, "grid_xy.nc": write_netcdf_xy, "grid.asc": write_ascii,
           "grid.xyz": write_xyz}

# (x, y) in the local frame, expected vertical range from z = 0 (m)
PROBES = [((-30.0, 15.0), 30 - 3 - 0.75),          # on the slope, far from the hill: a grid vertex
          ((-31.0, 15.5), 30 - 3.1 - 0.775),       # inside a cell: the plane is exact on triangles
          ((20.0, -10.0), 30 + 2 + 0.5 - 8.0)]     # the hill top (a grid vertex)


def down(scene, xy):
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    o = np.column_stack([xy, np.zeros(len(xy))])
    return scene.raycast(o, np.tile([0.0, 0.0, -1.0], (len(xy), 1)), 500.0).numpy()


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_every_format_gives_hand_computed_ranges(tmp_path, name):
    path = tmp_path / name
    WRITERS[name](path)
    scene = scene_from_bathymetry(path, device="cpu")
    hit = down(scene, [p for p, _ in PROBES] + [(-58.0, -38.0)])
    np.testing.assert_allclose(hit["distance"][:3], [r for _, r in PROBES], atol=2e-3)
    assert not np.isfinite(hit["distance"][3])             # nodata: no triangles there
    assert scene.surface_z == 0.0
    # 60 x 40 cells, minus the 5 x 5 cells touching the nodata patch (a 5 x 5 sample block masks 5 x 5 cells)
    assert scene.num_triangles == 2 * (60 * 40 - 25)


def test_geographic_origin_and_projected_origin_are_recorded(tmp_path):
    write_geotiff(tmp_path / "grid.tif")
    meta = scene_from_bathymetry(tmp_path / "grid.tif", device="cpu").metadata["bathymetry"]
    assert meta["origin"] == pytest.approx([X0, Y0]) and not meta["geographic"]
    write_netcdf(tmp_path / "grid.nc")
    meta = scene_from_bathymetry(tmp_path / "grid.nc", device="cpu").metadata["bathymetry"]
    assert meta["origin"] == pytest.approx([10.0, 0.0]) and meta["geographic"]


def test_crop_resample_tiles_and_depth_bands(tmp_path):
    path = tmp_path / "grid.tif"
    write_geotiff(path)
    # crop x to local 0..40: the origin moves 20 m east, the hill top to local (0, -10)
    scene = scene_from_bathymetry(path, device="cpu", bounds=(X0 - 0.5, Y0 - 100, X0 + 40.5, Y0 + 100))
    assert down(scene, [(0.0, -10.0)])["distance"][0] == pytest.approx(24.5, abs=1e-3)
    assert scene.metadata["bathymetry"]["origin"][0] == pytest.approx(X0 + 20.0)
    # resampled to 4 m: the plane stays exact; 31 x 21 samples
    scene = scene_from_bathymetry(path, device="cpu", resolution=4.0)
    assert down(scene, [(-30.0, 15.0)])["distance"][0] == pytest.approx(26.25, abs=1e-3)
    assert scene.num_triangles == 2 * (30 * 20 - 9)        # 3 x 3 coarse cells touch the nodata patch
    # tiles of 16 cells: several nodes, the same surface (a probe on a tile edge: x = -60 + 32 = -28)
    scene = scene_from_bathymetry(path, device="cpu", tile_size=16, depth_bands=[(0, 26, "rock")])
    assert len(scene.mesh_nodes()) >= 12
    hit = down(scene, [(-28.0, 15.0), (20.0, -10.0), (-30.0, 15.0)])
    assert hit["distance"][0] == pytest.approx(30 - 2.8 - 0.75, abs=1e-3)
    assert [scene.node(int(i)).material.name for i in hit["object"]] == ["sand", "rock", "sand"]


def test_usda_output_round_trips_and_cli(tmp_path):
    path = tmp_path / "grid.tif"
    write_geotiff(path)
    out = tmp_path / "seafloor.usda"
    assert cli_main(["scene", "from-bathymetry", str(path), "--out", str(out), "--tile-size", "32",
                     "--band", "0:26:rock"]) == 0
    scene = load_scene(out, device="cpu")
    hit = down(scene, [p for p, _ in PROBES])
    np.testing.assert_allclose(hit["distance"], [r for _, r in PROBES], atol=2e-3)
    assert scene.node(int(hit["object"][2])).material.name == "rock"
    assert scene.metadata["surface_z"] == 0.0
    # exists: refused without --overwrite
    assert cli_main(["scene", "from-bathymetry", str(path), "--out", str(out)]) != 0


def test_bad_bathymetry_input(tmp_path):
    path = tmp_path / "grid.tif"
    write_geotiff(path)
    with pytest.raises(SceneError, match="only nodata"):
        scene_from_bathymetry(path, device="cpu", bounds=(X0 - 61, Y0 - 41, X0 - 51, Y0 - 31))
    with pytest.raises(SceneError, match="fewer than 2 x 2"):
        scene_from_bathymetry(path, device="cpu", bounds=(0, 0, 1, 1))
    with pytest.raises(SceneError, match="GiB"):
        scene_from_bathymetry(path, device="cpu", max_memory_bytes=10_000)
    other = tmp_path / "grid.tif.bak"
    other.write_text("x")
    with pytest.raises(SceneError, match="unsupported bathymetry"):
        scene_from_bathymetry(other, device="cpu")
    bad = tmp_path / "bad.xyz"
    bad.write_text("1 2 3\n4 5 6\n7 eight 9\n")
    with pytest.raises(SceneError, match="bad.xyz:3"):
        scene_from_bathymetry(bad, device="cpu")
    # a failure while the .usda is being written leaves the existing file untouched and no temporary behind
    out = tmp_path / "keep.usda"
    out.write_text("precious")
    with pytest.raises(SceneError, match="unknown material"):
        scene_from_bathymetry(path, out, build_scene=False, depth_bands=[(0, 10, "unobtainium")])
    assert out.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["bad.xyz", "grid.tif", "grid.tif.bak", "keep.usda"])
    # a zero / NaN resolution and an unknown default material name the field (were OverflowError, ValueError
    # and a bare KeyError)
    for resolution in (0.0, float("nan")):
        with pytest.raises(SceneError, match="resolution must be a finite spacing > 0"):
            scene_from_bathymetry(path, device="cpu", resolution=resolution)
    with pytest.raises(SceneError, match="unknown material 'unobtainium'"):
        scene_from_bathymetry(path, device="cpu", material="unobtainium")


def test_scattered_xyz_points_are_binned_at_the_resolution(tmp_path):
    """Points jittered off a 2 m lattice (so no lattice is detected) are averaged per 2 m cell: on the plane the
    error is at most the slope times the jitter (0.1 * 0.01 + 0.05 * 0.01 m)."""
    rng = np.random.default_rng(3)
    x, y = np.meshgrid((np.arange(31) - 15) * 2.0, (np.arange(21) - 10) * 2.0)
    x = x.reshape(-1) + rng.uniform(-0.01, 0.01, x.size)
    y = y.reshape(-1) + rng.uniform(-0.01, 0.01, y.size)
    z = -30.0 - 0.1 * x + 0.05 * y
    path = tmp_path / "scattered.xyz"
    path.write_text("\n".join(f"{a:.5f} {b:.5f} {c:.6f}" for a, b, c in zip(X0 + x, Y0 + y, z)) + "\n")
    scene = scene_from_bathymetry(path, device="cpu", resolution=2.0)
    assert scene.num_triangles == 2 * 30 * 20
    ox, oy = scene.metadata["bathymetry"]["origin"]
    px, py = -10.0, 6.0                                   # local; source (ox + px, oy + py)
    sx, sy = ox + px - X0, oy + py - Y0                   # the same point in the frame z was written in
    assert down(scene, [(px, py)])["distance"][0] == pytest.approx(30 + 0.1 * sx - 0.05 * sy, abs=3e-3)


def _write_3x3(path, data, dtype="float32", nodata=None, scale=None, offset=None, units=None):
    """A 3 x 3 north-up GeoTIFF, 10 m pixels, west edge x = 1000, north edge y = 2030 (pixel centres at
    x = 1005, 1015, 1025 and y = 2025, 2015, 2005 from the top row down)."""
    import rasterio
    from rasterio.transform import from_origin

    with rasterio.open(path, "w", driver="GTiff", width=3, height=3, count=1, dtype=dtype, crs="EPSG:32631",
                       transform=from_origin(1000.0, 2030.0, 10.0, 10.0), nodata=nodata) as ds:
        ds.write(np.asarray(data, dtype=dtype), 1)
        if scale is not None:
            ds.scales, ds.offsets = (scale,), (offset,)
        if units is not None:
            ds.units = (units,)


def test_geotiff_3x3_cell_centres_north_up_nodata_and_crop_by_sample_centres(tmp_path):
    pytest.importorskip("rasterio")
    from oceansim_py.scene.bathymetry import read_bathymetry

    path = tmp_path / "g.tif"
    _write_3x3(path, [[-10, -11, -12], [-13, -9999, -15], [-16, -17, -18]], nodata=-9999)
    g = read_bathymetry(path)
    # centre of the extent (1015, 2015) is the origin; the top (north) row lies at local y = +10
    assert g.origin == (1015.0, 2015.0)
    np.testing.assert_array_equal(g.x, [-10.0, 0.0, 10.0])
    np.testing.assert_array_equal(g.y, [-10.0, 0.0, 10.0])
    assert g.z[2, 0] == -10.0 and g.z[0, 2] == -18.0 and np.isnan(g.z[1, 1])
    # bounds (1004, 2004, 1016, 2016) hold the centres x 1005, 1015 and y 2005, 2015: the south-west 2 x 2
    # samples [[-16, -17], [-13, nodata]] (rows from the south), origin (1010, 2010). Was refused: the window was
    # rounded from pixel edges (col_off 0.4, width 1.2 -> 1 pixel).
    c = read_bathymetry(path, bounds=(1004, 2004, 1016, 2016))
    assert c.origin == (1010.0, 2010.0)
    np.testing.assert_array_equal(c.z[0], [-16.0, -17.0])
    assert c.z[1, 0] == -13.0 and np.isnan(c.z[1, 1])
    # the same rule as the XYZ/NetCDF crop: (1006, 2006, 1026, 2026) holds centres 1015, 1025 and 2015, 2025
    c = read_bathymetry(path, bounds=(1006, 2006, 1026, 2026))
    assert c.origin == (1020.0, 2020.0)
    np.testing.assert_array_equal(c.z, [[np.nan, -15.0], [-11.0, -12.0]])
    with pytest.raises(SceneError, match="fewer than 2 x 2"):
        read_bathymetry(path, bounds=(1006, 2006, 1014, 2026))


def test_geotiff_scale_and_offset_are_applied(tmp_path):
    pytest.importorskip("rasterio")
    from oceansim_py.scene.bathymetry import read_bathymetry

    # int16 raw 100 with scale 0.1 and offset -50: 100 * 0.1 - 50 = -40 m (was read as +100 m)
    path = tmp_path / "s.tif"
    _write_3x3(path, [[100, 110, 120], [130, 140, 150], [160, 170, 180]], dtype="int16", scale=0.1, offset=-50.0)
    g = read_bathymetry(path)
    np.testing.assert_allclose(g.z, [[-34, -33, -32], [-37, -36, -35], [-40, -39, -38]], atol=1e-9)


@pytest.mark.parametrize("corner", ["corner", "center"])
def test_esri_ascii_grid_xllcorner_and_xllcenter(tmp_path, corner):
    pytest.importorskip("rasterio")
    from oceansim_py.scene.bathymetry import read_bathymetry

    path = tmp_path / f"{corner}.asc"
    path.write_text(f"ncols 3\nnrows 2\nxll{corner} 100\nyll{corner} 200\ncellsize 10\nNODATA_value -9999\n"
                    "1 2 3\n4 5 -9999\n")
    g = read_bathymetry(path, values="depth")
    # corner: centres x 105, 115, 125, y 205 (south row), 215 -> origin (115, 210); center: x 100..120, y 200, 210
    assert g.origin == ((115.0, 210.0) if corner == "corner" else (110.0, 205.0))
    # the first text row is the north one; depths become z = -d
    np.testing.assert_array_equal(g.z[1], [-1.0, -2.0, -3.0])
    assert g.z[0, 0] == -4.0 and np.isnan(g.z[0, 2])


@pytest.mark.parametrize("units,metres", [("ft", 0.3048), ("US survey foot", 1200.0 / 3937.0), ("m", 1.0),
                                          (None, 1.0), ("Foot_US", 1200.0 / 3937.0), ("cm", 0.01),
                                          ("millimetre", 0.001)])
def test_geotiff_vertical_units_become_metres(tmp_path, units, metres):
    pytest.importorskip("rasterio")
    from oceansim_py.scene.bathymetry import read_bathymetry

    # 100 ft depth = 30.48 m down (was read as 100 m); NaN nodata stays nodata
    path = tmp_path / "u.tif"
    _write_3x3(path, [[100, 100, 100], [100, np.nan, 100], [100, 100, 100]], nodata=float("nan"), units=units)
    g = read_bathymetry(path, values="depth")
    assert g.z[0, 0] == pytest.approx(-100.0 * metres, rel=1e-12) and np.isnan(g.z[1, 1])


def test_yaml_scattering_strength_sets_the_echo_of_a_bathymetry_floor(tmp_path):
    pytest.importorskip("rasterio")
    from oceansim_py import ImagingSonar, ImagingSonarConfig
    from oceansim_py.poses import pose_from_euler
    from oceansim_py.scene.materials import MaterialTable

    # a flat floor 5.05 m deep (ESRI grid of depths, 21 x 21 samples of 1 m), seen straight down from z = 0 by a
    # 2 x 2 degree fan: all rays land in range bin 40 (1 + 40.5 * 0.1 = 5.05 m). Lambert scattering strength
    # S = -20 dB gives mu = 10^(-20 / 10) = 0.01, so the frame's energy is mu * Theta * Phi = 0.01 * (2 pi / 180)^2
    # (small angles, as tests/test_imaging_sonar.py), and a depth band with S = -10 dB gives ten times more.
    grid = tmp_path / "flat.asc"
    grid.write_text("ncols 21\nnrows 21\nxllcorner 0\nyllcorner 0\ncellsize 1\nNODATA_value -9999\n"
                    + ("5.05 " * 21 + "\n") * 21)
    mats = tmp_path / "mats.yaml"
    mats.write_text("materials:\n  quiet_mud: {albedo: [0.2, 0.2, 0.2], scattering_strength: -20}\n"
                    "  loud_sand: {albedo: [0.4, 0.4, 0.3], scattering_strength: -10}\n")
    table = MaterialTable.from_yaml(mats)
    cfg = ImagingSonarConfig(horizontal_fov=2.0, vertical_fov=2.0, min_range=1.0, max_range=11.0, n_beams=8,
                             range_bins=100, rays_per_beam=4, elevation_rays=16, absorption=0.0,
                             normalisation="none", multiplicative_sigma=0.0, additive_sigma=0.0,
                             additive_range_scaled=False)
    down_pose = pose_from_euler(0.0, 0.0, 0.0, pitch_deg=90.0)
    energies = []
    for bands in (None, [(0.0, 10.0, "loud_sand")]):
        scene = scene_from_bathymetry(grid, values="depth", material="quiet_mud", depth_bands=bands,
                                      materials=table, device="cpu")
        out = ImagingSonar(cfg, device="cpu").render(scene, down_pose).numpy()
        img = out["clean_intensity"][0]
        assert np.nonzero(img.sum(axis=1))[0].tolist() == [40]
        energies.append(float(img.sum()))
    assert energies[0] == pytest.approx(0.01 * math.radians(2.0) ** 2, rel=1e-3)
    assert energies[1] == pytest.approx(0.1 * math.radians(2.0) ** 2, rel=1e-3)


def test_resample_keeps_valid_samples_next_to_nodata(tmp_path):
    pytest.importorskip("rasterio")
    from oceansim_py.scene.bathymetry import read_bathymetry

    # 3 x 3 grid, 10 m, the centre sample nodata. Resampling at 10 m is the identity (was all nodata: a zero
    # weight times the NaN neighbour spoiled every sample); at 5 m the south row (y = -10) is
    # -16, (-16 - 17) / 2 = -16.5, -17, -17.5, -18, and every sample strictly inside a cell touching the centre
    # is nodata, e.g. (0, -5) between -17 and the nodata centre.
    path = tmp_path / "g.tif"
    _write_3x3(path, [[-10, -11, -12], [-13, -9999, -15], [-16, -17, -18]], nodata=-9999)
    same = read_bathymetry(path, resolution=10.0)
    np.testing.assert_array_equal(same.z, [[-16, -17, -18], [-13, np.nan, -15], [-10, -11, -12]])
    half = read_bathymetry(path, resolution=5.0)
    np.testing.assert_array_equal(half.x, [-10, -5, 0, 5, 10])
    np.testing.assert_array_equal(half.z[0], [-16, -16.5, -17, -17.5, -18])
    np.testing.assert_array_equal(half.z[:, 0], [-16, -14.5, -13, -11.5, -10])
    assert np.isnan(half.z[1:4, 1:4]).all()


def test_semicolon_xyz_with_decimal_commas(tmp_path):
    from oceansim_py.scene.bathymetry import read_bathymetry

    # "x;y;depth" with decimal commas (European CSV): 2 x 2 lattice, 0,5 m spacing, depths 10,25 .. 10,75.
    # Was read as x = 0, y = 0, z = 5 (the commas split the numbers). Origin (0.25, 0.25), z = -depth.
    path = tmp_path / "eu.csv"
    path.write_text("x;y;depth\n0,0;0,0;10,25\n0,5;0,0;10,5\n0,0;0,5;10,75\n0,5;0,5;11\n")
    g = read_bathymetry(path, values="depth")
    assert g.origin == (0.25, 0.25)
    np.testing.assert_array_equal(g.z, [[-10.25, -10.5], [-10.75, -11.0]])


def test_lon_lat_xyz_lattice_printed_to_few_decimals_is_read_as_its_lattice(tmp_path):
    from oceansim_py.scene.bathymetry import read_bathymetry

    # A 15 arc-second (1/240 deg) lattice, 120 x 120 samples from (-5 E, 50 N), written as GEBCO/EMODnet XYZ
    # exports do, to 6 (or 4) decimals of a degree: the printed gaps are 0.004166/0.004167 (0.0041/0.0042), so
    # the lattice test on the smallest gap failed and the points were binned at their mean spacing instead:
    # a 121 x 120 grid with 120 empty (nodata) cells and doubled ones. By hand: every sample is on the
    # 120 x 120 lattice; at the centre latitude lat0 = 50 + 119/480 deg the east spacing is
    # N(lat0) cos(lat0) * radians(1/240) and the north one M(lat0) * radians(1/240) (module docstring).
    step = 1.0 / 240.0
    lon, lat = np.meshgrid(-5.0 + step * np.arange(120), 50.0 + step * np.arange(120))
    depth = 30.0 + 0.01 * np.arange(lon.size).reshape(lon.shape)
    lat0 = math.radians(50.0 + 119 / 480)
    s2 = math.sin(lat0) ** 2
    n_rad, m_rad = WGS84_A / math.sqrt(1 - WGS84_E2 * s2), WGS84_A * (1 - WGS84_E2) / (1 - WGS84_E2 * s2) ** 1.5
    for decimals, rel in ((6, 1e-6), (4, 1e-4)):
        path = tmp_path / f"gebco{decimals}.xyz"
        np.savetxt(path, np.column_stack([lon.ravel(), lat.ravel(), depth.ravel()]), fmt=f"%.{decimals}f")
        g = read_bathymetry(path, values="depth", geographic=True)
        assert g.z.shape == (120, 120)
        np.testing.assert_allclose(g.z, -depth, atol=1e-9)
        assert g.x[1] - g.x[0] == pytest.approx(n_rad * math.cos(lat0) * math.radians(step), rel=rel)
        assert g.y[1] - g.y[0] == pytest.approx(m_rad * math.radians(step), rel=rel)


def test_scattered_soundings_printed_to_centimetres_are_binned_not_a_centimetre_lattice(tmp_path):
    from oceansim_py.scene.bathymetry import read_bathymetry

    # 400 random soundings over 100 x 100 m printed to 2 decimals all sit on a 1 cm lattice: they were taken
    # for a lattice grid of ~9966 x 9964 samples holding 400 values, with no cell of four valid corners (no
    # mesh; larger files were refused as too large). Few of them are lattice neighbours, so they are binned:
    # at the mean spacing sqrt(area / n) ~ 5 m, a ~21 x 21 grid whose valid cells hold the mean of their points.
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0.0, 100.0, 400), rng.uniform(0.0, 100.0, 400)
    path = tmp_path / "soundings.xyz"
    np.savetxt(path, np.column_stack([x, y, -20.0 - 0.1 * x]), fmt="%.2f")
    g = read_bathymetry(path)
    assert max(g.z.shape) <= 21 and g.x[1] - g.x[0] == pytest.approx(5.0, rel=0.01)
    scene = scene_from_bathymetry(path, device="cpu")
    assert scene.num_triangles > 0


def test_tile_size_zero_or_fractional_is_refused_not_replaced(tmp_path, capsys):
    # --tile-size 0 was read as "not given" (args.tile_size or 1024) and wrote a one-tile scene; 2.5 was a bare
    # TypeError from range(). Both are SceneErrors naming tile_size, and no .usda is written.
    path = tmp_path / "grid.tif"
    write_geotiff(path)
    out = tmp_path / "seafloor.usda"
    assert cli_main(["scene", "from-bathymetry", str(path), "--out", str(out), "--tile-size", "0"]) != 0
    assert "tile_size must be a whole number of cells >= 1, got 0" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(SceneError, match="tile_size must be a whole number of cells >= 1, got 2.5"):
        scene_from_bathymetry(path, device="cpu", tile_size=2.5)


@pytest.mark.parametrize("header,z", [("x y depth", -12.5), ("Easting,Northing,Depth (m)", -12.5),
                                      ("lon;lat;depth_m", -12.5), ("x y z", 12.5), ("", 12.5),
                                      ("Survey of depth soundings", 12.5)])
def test_xyz_header_naming_the_third_column_depth_sets_the_sign(tmp_path, header, z):
    from oceansim_py.scene.bathymetry import read_bathymetry

    # A 2 x 2 lattice of 12.5 under a header: a column named depth holds depths (down positive), so the seafloor
    # is z = -12.5, as a NetCDF variable named depth; with no header, 'z' or a title line the values stay
    # elevations (+12.5).
    # values= given by the caller still wins. Was +12.5 for every header (a seafloor 12.5 m above the surface).
    sep = ";" if ";" in header else ","
    path = tmp_path / "h.csv"
    path.write_text((header + "\n" if header else "") + "".join(f"{x}{sep}{y}{sep}12.5\n" for y in (0, 1)
                                                                 for x in (0, 1)))
    np.testing.assert_array_equal(read_bathymetry(path).z, np.full((2, 2), z))
    np.testing.assert_array_equal(read_bathymetry(path, values="elevation").z, np.full((2, 2), 12.5))


def test_geotiff_in_a_us_survey_feet_crs_is_converted_to_metres(tmp_path):
    pytest.importorskip("rasterio")
    from oceansim_py.scene.bathymetry import read_bathymetry

    # A 3 x 3 grid of depths (m) in NAD83 / New York Long Island (EPSG:2263, US survey feet), 10 ft pixels: the
    # local spacing is 10 * 1200 / 3937 = 3.0480061 m (was 10 "m": the grid drawn 3.28 times too wide). Depths
    # 10, 11, 12 m from west to east, so a vertical ray at local x = 1.5240030 m (half a spacing east of the
    # centre) meets the floor at 11.5 m. The origin stays in the CRS's own units (feet).
    path = tmp_path / "ftus.tif"
    _write_3x3(path, [[10, 11, 12]] * 3)
    import rasterio
    with rasterio.open(path, "r+") as ds:
        ds.crs = "EPSG:2263"
    g = read_bathymetry(path, values="depth")
    foot = 1200.0 / 3937.0
    np.testing.assert_allclose(g.x, [-10 * foot, 0.0, 10 * foot], rtol=1e-12)
    np.testing.assert_allclose(g.y, [-10 * foot, 0.0, 10 * foot], rtol=1e-12)
    assert g.origin == (1015.0, 2015.0)
    scene = scene_from_bathymetry(path, values="depth", device="cpu")
    assert down(scene, [(5 * foot, 0.0)])["distance"][0] == pytest.approx(11.5, abs=1e-4)


def test_a_materials_yaml_path_names_the_floor_material_in_the_api_and_the_cli(tmp_path):
    # scene_from_bathymetry(materials="m.yaml") takes a YAML path as load_scene does (was AttributeError: 'str'
    # object has no attribute 'get'), and the CLI's --materials lets --material/--band name its entries (was
    # "unknown material"). seagrass: S = -30 dB, mu = 10^(-3) = 0.001; the written .usda loaded with the same
    # file gives the floor that material.
    grid = tmp_path / "flat.asc"
    grid.write_text("ncols 3\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 1\n" + "7 7 7\n" * 3)
    mats = tmp_path / "m.yaml"
    mats.write_text("materials:\n  seagrass: {albedo: [0.1, 0.3, 0.1], scattering_strength: -30}\n")
    scene = scene_from_bathymetry(grid, values="depth", material="seagrass", materials=str(mats), device="cpu")
    hit = down(scene, [(0.2, 0.1)])
    assert hit["distance"][0] == pytest.approx(7.0)
    assert scene.node(int(hit["object"][0])).material.reflectivity == pytest.approx(0.001)
    out = tmp_path / "floor.usda"
    assert cli_main(["scene", "from-bathymetry", str(grid), "--out", str(out), "--values", "depth",
                     "--materials", str(mats), "--band", "0:10:seagrass"]) == 0
    loaded = load_scene(out, device="cpu", materials=mats)
    assert loaded.node(int(down(loaded, [(0.2, 0.1)])["object"][0])).material.name == "seagrass"


@pytest.mark.parametrize("kind_name,pitch,product", [("sidescan", 0.0, "clean_intensity"),
                                                     ("singlebeam", 90.0, "clean_intensity"),
                                                     ("profiling", 60.0, "clean_image")])
def test_scattering_strength_scales_every_fan_sensors_echo_from_a_bathymetry_floor(tmp_path, kind_name, pitch,
                                                                                  product):
    from oceansim_py.poses import pose_from_euler
    from oceansim_py.scene.materials import MaterialTable
    from oceansim_py.sensors import registry

    # A flat floor 20 m deep (ESRI grid of depths, 1 m cells) seen from 5 m above it by the default (physical
    # units, no normalisation) sidescan, single-beam and profiling sonars: every echo is mu times the same
    # geometry, so S = -10 dB (mu = 0.1) gives exactly 10 times the clean echo of S = -20 dB (mu = 0.01).
    grid = tmp_path / "flat.asc"
    grid.write_text("ncols 121\nnrows 121\nxllcenter -60\nyllcenter -60\ncellsize 1\n" + ("20 " * 121 + "\n") * 121)
    mats = tmp_path / "m.yaml"
    mats.write_text("materials:\n  s20: {albedo: [0.2, 0.2, 0.2], scattering_strength: -20}\n"
                    "  s10: {albedo: [0.2, 0.2, 0.2], scattering_strength: -10}\n")
    table = MaterialTable.from_yaml(mats)
    kind = registry.get(kind_name)
    sensor = kind.make_sensor(kind.config_class(), device="cpu")
    pose = pose_from_euler(0.0, 0.0, -15.0, pitch_deg=pitch)
    sums = []
    for name in ("s20", "s10"):
        scene = scene_from_bathymetry(grid, values="depth", material=name, materials=table, device="cpu")
        out = sensor.render(scene, pose).numpy()
        sums.append(float(np.asarray(out[product], dtype=np.float64).sum()))
    assert sums[0] > 0 and sums[1] / sums[0] == pytest.approx(10.0, rel=1e-5)


def test_scattered_points_whose_extent_falls_short_of_a_whole_cell_keep_their_last_column(tmp_path):
    from oceansim_py.scene.bathymetry import read_bathymetry

    # 31 x 21 soundings on a 2 m pattern, each x nudged +-0.1 m (alternating, so no lattice): the x extent is
    # 0.1 .. 59.9 = 29.9 cells. The binning grid had floor(29.9) + 1 = 30 columns, so the last two columns of
    # points (x ~ 58 and 59.9) were averaged into one cell: -35.89 where the points say -35.79 and -35.99. Now
    # rint(29.9) + 1 = 31 columns, each cell holds its one point: z = -30 - 0.1 x of that point, by hand.
    i, j = np.meshgrid(np.arange(31), np.arange(21))
    sign = np.where((i + j) % 2 == 0, 1.0, -1.0)
    sign[:, 0], sign[:, 30] = 1.0, -1.0
    x, y = 2.0 * i + 0.1 * sign, 2.0 * j
    z = -30.0 - 0.1 * x
    path = tmp_path / "soundings.xyz"
    np.savetxt(path, np.column_stack([x.ravel(), y.ravel(), z.ravel()]), fmt="%.3f")
    g = read_bathymetry(path, resolution=2.0)
    assert g.z.shape == (21, 31)
    np.testing.assert_allclose(g.z, z, atol=1e-9)


def test_pixel_is_point_geotiff_samples_sit_on_their_tie_points(tmp_path):
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import from_origin

    from oceansim_py.scene.bathymetry import read_bathymetry

    # A PixelIsPoint GeoTIFF (AREA_OR_POINT=Point) whose tie point puts the first sample's centre at (1005, 2025)
    # (written with GTIFF_POINT_GEO_IGNORE so the tie point is stored as given): GDAL reads it as the area
    # grid with its corner at (1000, 2030), so the samples are at 1005/1015/1025 and 2025/2015/2005, not half a
    # pixel off; the origin is their centre (1015, 2015) and the north-west value 0 is the local (-10, +10).
    path = tmp_path / "point.tif"
    with rasterio.Env(GTIFF_POINT_GEO_IGNORE=True):
        with rasterio.open(path, "w", driver="GTiff", width=3, height=3, count=1, dtype="float32",
                           crs="EPSG:32631", transform=from_origin(1005.0, 2025.0, 10.0, 10.0)) as ds:
            ds.update_tags(AREA_OR_POINT="Point")
            ds.write(-np.arange(1, 10, dtype="float32").reshape(3, 3), 1)
    g = read_bathymetry(path)
    assert g.origin == (1015.0, 2015.0)
    np.testing.assert_array_equal(g.x, [-10.0, 0.0, 10.0])
    assert g.z[-1, 0] == -1.0 and g.z[0, -1] == -9.0


def test_a_surfer_ascii_grd_is_read_at_its_nodes(tmp_path):
    pytest.importorskip("rasterio")
    from oceansim_py.scene.bathymetry import read_bathymetry

    # A Surfer ASCII grid (DSAA; rows from the south, x/y ranges are the outer nodes, 1.70141e38 blanks a node)
    # in a .grd file was refused as "not a readable NetCDF file". By hand: nodes x 1000, 1010, 1020 and
    # y 2000, 2010, origin (1010, 2005), depths 10 11 12 on the south row, 13 14 and a blank on the north row.
    path = tmp_path / "survey.grd"
    path.write_text("DSAA\n3 2\n1000 1020\n2000 2010\n10 14\n10 11 12\n13 14 1.70141e38\n")
    g = read_bathymetry(path, values="depth")
    assert g.origin == (1010.0, 2005.0)
    np.testing.assert_array_equal(g.x, [-10.0, 0.0, 10.0])
    np.testing.assert_array_equal(g.y, [-5.0, 5.0])
    np.testing.assert_array_equal(g.z, [[-10.0, -11.0, -12.0], [-13.0, -14.0, np.nan]])


@pytest.mark.parametrize("depth,eye_z", [(30.0, -20.0), (5.0, -1.0)])
def test_suggested_pose_looks_down_at_the_floor_ahead(tmp_path, depth, eye_z):
    # Flat floor `depth` m deep: the suggested pose is 10 m above the floor at the origin (but at least 1 m under
    # the surface), looking at (20, 0, -depth): pitched down by theta = atan((eye_z + depth) / 20) about +y,
    # q = (0, sin(theta / 2), 0, cos(theta / 2)); 30 m: theta = atan(0.5) = 26.565 deg; 5 m: atan(4 / 20).
    grid = tmp_path / "flat.asc"
    grid.write_text("ncols 3\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 1\n" + f"{depth} {depth} {depth}\n" * 3)
    pose = scene_from_bathymetry(grid, values="depth", device="cpu").metadata["suggested_pose"]
    theta = math.atan2(eye_z + depth, 20.0)
    np.testing.assert_allclose(pose, [0.0, 0.0, eye_z, 0.0, math.sin(theta / 2), 0.0, math.cos(theta / 2)],
                               atol=1e-12)


def test_a_lattice_point_given_twice_is_their_mean(tmp_path):
    from oceansim_py.scene.bathymetry import read_bathymetry

    # Two overlapping survey lines exported on one 1 m lattice give (0, 0) twice, at -10 and -12: the sample is
    # their mean -11, as a scattered set's cell is (the later line won: -12).
    path = tmp_path / "overlap.xyz"
    path.write_text("0 0 -10\n1 0 -10\n0 1 -10\n1 1 -10\n0 0 -12\n")
    np.testing.assert_array_equal(read_bathymetry(path).z, [[-11.0, -10.0], [-10.0, -10.0]])


def test_an_xyz_header_naming_lon_lat_makes_the_points_geographic(tmp_path):
    from oceansim_py.scene.bathymetry import read_bathymetry

    # 'lon,lat,depth' (a GEBCO/EMODnet XYZ export) on a 0.01 deg lattice at the equator: lon/lat degrees, so the
    # local spacing is a * radians(0.01) = 1113.19 m east and a (1 - e^2) * radians(0.01) = 1105.74 m north
    # (N(0) = a, M(0) = a (1 - e^2)); it was 0.01 "m" (degrees read as metres: the survey 0.02 m wide), and the
    # depths were read as elevations. geographic=False still forces metres.
    path = tmp_path / "gebco.csv"
    path.write_text("lon,lat,depth\n" + "".join(f"{10 + 0.01 * i:.2f},{0.01 * j - 0.01:.2f},{20 + i}\n"
                                                for j in range(3) for i in range(3)))
    g = read_bathymetry(path)
    assert g.geographic and g.origin == pytest.approx((10.01, 0.0))
    np.testing.assert_allclose(g.x, np.array([-1, 0, 1]) * WGS84_A * math.radians(0.01), rtol=1e-9)
    np.testing.assert_allclose(g.y, np.array([-1, 0, 1]) * WGS84_A * (1 - WGS84_E2) * math.radians(0.01),
                               rtol=1e-9)
    np.testing.assert_array_equal(g.z[0], [-20.0, -21.0, -22.0])
    np.testing.assert_allclose(read_bathymetry(path, geographic=False).x, [-0.01, 0.0, 0.01], atol=1e-12)
