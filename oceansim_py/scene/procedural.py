"""Builders for the built-in scenes in ``scenes/``: ``tank``, ``pier``, ``wreck`` and ``harbour``.

Each builder returns the text of a ``.usda`` stage (Z up, metres). Geometry is made with numpy and written as
USDA text directly (``scene/usd.py`` is the only module that imports pxr). The output is deterministic: noise
comes from an integer hash (no random-number generator whose stream could change between numpy versions) and
every number is written with a fixed number of decimals, so ``--regenerate`` rewrites byte-identical files.

Every stage carries, in its root layer's ``customLayerData``, a dictionary ``oceansim`` with a one-line
``description``, a ``suggested_pose`` ``[px, py, pz, qx, qy, qz, qw]`` (FLU sensor frame, x = boresight),
the sea surface height ``surface_z`` (m) and, for a scene with waves by default (``harbour``), the
``sea_state`` (SeaStateConfig fields) with its patch ``sea_surface_size`` / ``sea_surface_resolution`` (m) that
``load_scene`` adds unless told otherwise. Prims carry ``oceansim:material`` (a built-in table name, inherited
by their children), UsdSemantics class labels, some ``primvars:displayColor`` albedos and, for rocks, a bound
UsdShade material ``/World/Looks/Rock`` whose name resolves to the table's ``rock``.

World frame of every scene: x forward from the suggested pose's viewpoint, z up, sea surface at z = 0.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from oceansim_py.io.atomic import atomic_write_text
from oceansim_py.poses import matmul_fixed, pose_from_euler

#: Decimals written for point coordinates (0.1 mm) and for other values.
POINT_DECIMALS = 4
VALUE_DECIMALS = 6

# ---------------------------------------------------------------------------------------------------------
# Tank geometry (metres). Multibeam paper (Choi et al. 2021, §3): a square tank, a 0.4 m diameter cylinder
# 4 m ahead of the sonar, the opposite wall 5.5 m from the sonar. Depth, size of the tank behind and beside the
# sonar, and the sonar depth are not given there; chosen here.
TANK_SONAR = (0.0, 0.0, -1.5)          # sonar position: 1.5 m below the surface, mid-depth
TANK_CYLINDER_AXIS_X = 4.0             # cylinder axis, 4 m ahead of the sonar along +x
TANK_CYLINDER_RADIUS = 0.2
TANK_CYLINDER_SEGMENTS = 64            # side faces; one face is centred on the -x direction (faces the sonar)
TANK_CYLINDER_TOP_Z = -0.5
TANK_FAR_WALL_X = 5.5                  # inner face of the far wall
TANK_BACK_WALL_X = -1.5                # inner face of the wall behind the sonar: a 7 m x 7 m square tank
TANK_HALF_WIDTH = 3.5                  # inner faces of the side walls at y = +-3.5
TANK_FLOOR_Z = -3.0                    # 3 m of water
TANK_WALL_TOP_Z = 0.5                  # walls stand 0.5 m above the water
TANK_WALL_THICKNESS = 0.2


# ---------------------------------------------------------------------------------------------------------
# Polygon meshes
@dataclasses.dataclass
class PolyMesh:
    """A polygon mesh as USD stores it: points (V, 3) m, face vertex counts (F,), flat vertex indices.

    Faces are counter-clockwise seen from outside (right-handed), so normals point out.
    """

    points: np.ndarray
    counts: np.ndarray
    indices: np.ndarray

    @property
    def num_triangles(self) -> int:
        return int(np.sum(self.counts - 2))


def grid_quads(nu: int, nv: int, wrap_u: bool = False) -> np.ndarray:
    """(F, 4) quad indices of a grid of ``nu`` x ``nv`` vertices stored u-major (index = i * nv + j).

    Quad (i, j) -> (i, j), (i+1, j), (i+1, j+1), (i, j+1): counter-clockwise when u x v points out.
    ``wrap_u`` joins the last u row to the first (a closed ring).
    """
    iu = np.arange(nu if wrap_u else nu - 1)
    jv = np.arange(nv - 1)
    i, j = np.meshgrid(iu, jv, indexing="ij")
    i1 = (i + 1) % nu
    q = np.stack([i * nv + j, i1 * nv + j, i1 * nv + j + 1, i * nv + j + 1], axis=-1)
    return q.reshape(-1, 4)


def heightfield(x0: float, x1: float, nx: int, y0: float, y1: float, ny: int,
                height: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> PolyMesh:
    """A quad heightfield over [x0, x1] x [y0, y1] with ``nx`` x ``ny`` vertices, z = height(x, y); faces up."""
    x, y = np.meshgrid(np.linspace(x0, x1, nx), np.linspace(y0, y1, ny), indexing="ij")
    pts = np.stack([x, y, height(x, y)], axis=-1).reshape(-1, 3)
    q = grid_quads(nx, ny)
    return PolyMesh(pts, np.full(q.shape[0], 4), q.reshape(-1))


def box(size: Sequence[float], center: Sequence[float] = (0.0, 0.0, 0.0)) -> PolyMesh:
    """An axis-aligned box of ``size`` (m) centred on ``center``: 8 points, 6 outward quads."""
    s = np.asarray(size, dtype=np.float64) / 2
    c = np.asarray(center, dtype=np.float64)
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64)
    # corner index = 4 * (x>0) + 2 * (y>0) + (z>0)
    faces = np.array([[0, 1, 3, 2],   # -x
                      [4, 6, 7, 5],   # +x
                      [0, 4, 5, 1],   # -y
                      [2, 3, 7, 6],   # +y
                      [0, 2, 6, 4],   # -z
                      [1, 5, 7, 3]])  # +z
    return PolyMesh(c + corners * s, np.full(6, 4), faces.reshape(-1))


def cylinder(radius: float, z0: float, z1: float, segments: int, bottom_cap: bool = True,
             top_cap: bool = True) -> PolyMesh:
    """A vertical cylinder about the z axis from z0 to z1: quad sides, n-gon caps.

    Vertices sit at angles 2*pi*(k + 0.5)/segments, so side faces are centred on the angles 2*pi*k/segments
    (for an even count, one face is centred on -x at distance radius*cos(pi/segments) from the axis).
    """
    a = 2 * np.pi * (np.arange(segments) + 0.5) / segments
    ring = np.stack([radius * np.cos(a), radius * np.sin(a)], axis=-1)
    pts = np.concatenate([np.column_stack([ring, np.full(segments, z0)]),
                          np.column_stack([ring, np.full(segments, z1)])])
    k = np.arange(segments)
    k1 = (k + 1) % segments
    sides = np.stack([k, k1, segments + k1, segments + k], axis=-1).reshape(-1)
    counts = [np.full(segments, 4)]
    idx = [sides]
    if bottom_cap:
        counts.append(np.array([segments]))
        idx.append(k[::-1])
    if top_cap:
        counts.append(np.array([segments]))
        idx.append(segments + k)
    return PolyMesh(pts, np.concatenate(counts), np.concatenate(idx))


def torus(major: float, minor: float, nu: int, nv: int) -> PolyMesh:
    """A torus about the z axis (ring radius ``major``, tube radius ``minor``), outward quads."""
    u = 2 * np.pi * np.arange(nu) / nu
    v = 2 * np.pi * np.arange(nv) / nv
    uu, vv = np.meshgrid(u, v, indexing="ij")
    rr = major + minor * np.cos(vv)
    pts = np.stack([rr * np.cos(uu), rr * np.sin(uu), minor * np.sin(vv)], axis=-1).reshape(-1, 3)
    # wrap both ways: quads (i, j) -> (i, j), (i+1, j), (i+1, j+1), (i, j+1) with j+1 taken mod nv
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    i1, j1 = (i + 1) % nu, (j + 1) % nv
    q = np.stack([i * nv + j, i1 * nv + j, i1 * nv + j1, i * nv + j1], axis=-1).reshape(-1, 4)
    return PolyMesh(pts, np.full(q.shape[0], 4), q.reshape(-1))


def icosphere(subdivisions: int) -> PolyMesh:
    """A unit icosphere (triangles), from trimesh."""
    import trimesh

    m = trimesh.creation.icosphere(subdivisions=subdivisions, radius=1.0)
    f = np.asarray(m.faces, dtype=np.int64)
    return PolyMesh(np.asarray(m.vertices, dtype=np.float64), np.full(f.shape[0], 3), f.reshape(-1))


# ---------------------------------------------------------------------------------------------------------
# Deterministic noise (integer hash; identical on every platform and numpy version)
_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def hash_uniform(*keys: np.ndarray | int) -> np.ndarray:
    """Uniform values in [0, 1) from integer keys via splitmix64 (vectorised over broadcast arrays)."""
    arrays = np.broadcast_arrays(*[np.asarray(k, dtype=np.int64) for k in keys])
    h = np.full(arrays[0].shape, 0x9E3779B97F4A7C15, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for a in arrays:
            h = h ^ (a.astype(np.uint64) & _MASK64)
            h = h + np.uint64(0x9E3779B97F4A7C15)
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(31))
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def value_noise(x: np.ndarray, y: np.ndarray, seed: int, octaves: int = 4) -> np.ndarray:
    """Fractal 2-D value noise in about [-1, 1]; unit lattice spacing at the first octave."""
    total = np.zeros(np.broadcast(x, y).shape)
    amp, freq, norm = 1.0, 1.0, 0.0
    for o in range(octaves):
        fx, fy = x * freq, y * freq
        ix, iy = np.floor(fx), np.floor(fy)
        tx, ty = fx - ix, fy - iy
        sx, sy = tx * tx * (3 - 2 * tx), ty * ty * (3 - 2 * ty)
        ix, iy = ix.astype(np.int64), iy.astype(np.int64)

        def lattice(dx: int, dy: int) -> np.ndarray:
            return 2.0 * hash_uniform(seed, o, ix + dx, iy + dy) - 1.0

        top = lattice(0, 0) * (1 - sx) + lattice(1, 0) * sx
        bot = lattice(0, 1) * (1 - sx) + lattice(1, 1) * sx
        total += amp * (top * (1 - sy) + bot * sy)
        norm += amp
        amp *= 0.5
        freq *= 2.0
    return total / norm


def rock(seed: int, size: Sequence[float]) -> PolyMesh:
    """A perturbed icosphere (about ``size`` m across in x, y, z) with its base near z = 0."""
    m = icosphere(2)
    p = m.points
    bump = np.zeros(p.shape[0])
    for k in range(5):
        d = np.array([hash_uniform(seed, k, c)[()] for c in range(3)]) * 2 - 1
        d /= max(np.linalg.norm(d), 1e-9)
        freq = 1.5 + 2.5 * hash_uniform(seed, k, 3)[()]
        phase = 2 * np.pi * hash_uniform(seed, k, 4)[()]
        bump += np.sin(freq * matmul_fixed(p, d[:, None])[:, 0] * np.pi + phase) / (k + 1)
    r = 1.0 + 0.18 * bump
    pts = p * r[:, None] * (np.asarray(size, dtype=np.float64) / 2)
    pts[:, 2] -= pts[:, 2].min() * 0.7   # 30 % of the rock's height lies below its origin (buried)
    return PolyMesh(pts, m.counts, m.indices)


def look_at_pose(eye: Sequence[float], target: Sequence[float]) -> list[float]:
    """A (7,) pose at ``eye`` whose FLU x axis (boresight) points at ``target``, with zero roll."""
    d = np.asarray(target, dtype=np.float64) - np.asarray(eye, dtype=np.float64)
    yaw = math.degrees(math.atan2(d[1], d[0]))
    pitch = math.degrees(math.atan2(-d[2], math.hypot(d[0], d[1])))
    return [float(v) for v in pose_from_euler(*eye, 0.0, pitch, yaw)]


# ---------------------------------------------------------------------------------------------------------
# USDA text
def fmt(v: float, decimals: int = VALUE_DECIMALS) -> str:
    """A number with at most ``decimals`` decimals, trailing zeros removed, never ``-0``."""
    s = f"{v:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _fmt_array(values: np.ndarray, decimals: int) -> list[str]:
    return [fmt(v, decimals) for v in np.asarray(values, dtype=np.float64).reshape(-1).tolist()]


def _tuple(values: Sequence[float], decimals: int = VALUE_DECIMALS) -> str:
    return "(" + ", ".join(fmt(float(v), decimals) for v in values) + ")"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _wrapped(items: list[str], per_line: int) -> str:
    """``[a, b, ...]`` with ``per_line`` items a line (keeps files diffable); continuation lines are indented
    relative to the property, which :meth:`Prim.write` indents as a whole."""
    if len(items) <= per_line:
        return "[" + ", ".join(items) + "]"
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[\n" + ",\n".join("    " + ln for ln in lines) + "\n]"


@dataclasses.dataclass
class Prim:
    """One prim to write: type, name, properties (already USDA lines), API schemas and children."""

    type_name: str
    name: str
    properties: list[str] = dataclasses.field(default_factory=list)
    api_schemas: list[str] = dataclasses.field(default_factory=list)
    children: list["Prim"] = dataclasses.field(default_factory=list)

    def material(self, name: str) -> "Prim":
        """Set ``oceansim:material`` (a built-in table name; children inherit it)."""
        self.properties.append(f"custom string oceansim:material = {_quote(name)}")
        return self

    def label(self, label: str) -> "Prim":
        """Give the prim a UsdSemantics class label."""
        self.api_schemas.append("SemanticsLabelsAPI:class")
        self.properties.append(f"token[] semantics:labels:class = [{_quote(label)}]")
        return self

    def color(self, rgb: Sequence[float]) -> "Prim":
        """Set ``primvars:displayColor`` (constant linear RGB albedo)."""
        self.properties.append(f"color3f[] primvars:displayColor = [{_tuple(rgb, 3)}]")
        return self

    def bind(self, material_path: str) -> "Prim":
        """Bind a UsdShade material by path."""
        self.api_schemas.append("MaterialBindingAPI")
        self.properties.append(f"rel material:binding = <{material_path}>")
        return self

    def xform(self, translate: Sequence[float] | None = None, rotate_xyz: Sequence[float] | None = None,
              scale: Sequence[float] | None = None) -> "Prim":
        """Local transform ops (translate m, rotateXYZ degrees, scale), applied scale first."""
        order = []
        if translate is not None:
            self.properties.append(f"double3 xformOp:translate = {_tuple(translate)}")
            order.append('"xformOp:translate"')
        if rotate_xyz is not None:
            self.properties.append(f"float3 xformOp:rotateXYZ = {_tuple(rotate_xyz)}")
            order.append('"xformOp:rotateXYZ"')
        if scale is not None:
            self.properties.append(f"float3 xformOp:scale = {_tuple(scale)}")
            order.append('"xformOp:scale"')
        self.properties.append(f"uniform token[] xformOpOrder = [{', '.join(order)}]")
        return self

    def write(self, out: list[str], indent: str) -> None:
        head = f'{indent}def {self.type_name} "{self.name}"'
        if self.api_schemas:
            schemas = ", ".join(_quote(s) for s in self.api_schemas)
            out.append(f"{head} (\n{indent}    prepend apiSchemas = [{schemas}]\n{indent})")
        else:
            out.append(head)
        out.append(indent + "{")
        inner = indent + "    "
        for prop in self.properties:
            out.append(inner + prop.replace("\n", "\n" + inner))
        for i, child in enumerate(self.children):
            if self.properties or i:
                out.append("")
            child.write(out, inner)
        out.append(indent + "}")


def mesh_prim(name: str, mesh: PolyMesh) -> Prim:
    """A ``Mesh`` prim holding ``mesh`` (points with 0.1 mm resolution, no subdivision, extent)."""
    coords = _fmt_array(mesh.points, POINT_DECIMALS)
    points = ["(" + ", ".join(coords[i:i + 3]) + ")" for i in range(0, len(coords), 3)]
    lo, hi = mesh.points.min(axis=0), mesh.points.max(axis=0)
    props = [
        f"float3[] extent = [{_tuple(lo, POINT_DECIMALS)}, {_tuple(hi, POINT_DECIMALS)}]",
        f"int[] faceVertexCounts = {_wrapped([str(int(c)) for c in mesh.counts], 40)}",
        f"int[] faceVertexIndices = {_wrapped([str(int(i)) for i in mesh.indices], 24)}",
        f"point3f[] points = {_wrapped(points, 8)}",
        'uniform token subdivisionScheme = "none"',
    ]
    return Prim("Mesh", name, props)


def _metadata_value(name: str, value: str | int | float | dict) -> list[str]:
    """USDA lines (unindented) declaring one ``customLayerData`` entry: a string, int, double or a dictionary of
    them."""
    if isinstance(value, dict):
        inner = [line for key, v in value.items() for line in _metadata_value(key, v)]
        return [f"dictionary {name} = {{", *("    " + line for line in inner), "}"]
    if isinstance(value, str):
        return [f"string {name} = {_quote(value)}"]
    if isinstance(value, int) and not isinstance(value, bool):
        return [f"int {name} = {value}"]
    return [f"double {name} = {fmt(float(value))}"]


def stage_text(root: Prim, description: str, suggested_pose: Sequence[float], surface_z: float = 0.0,
               extra: dict[str, str | int | float | dict] | None = None) -> str:
    """The ``.usda`` text of a stage whose default prim is ``root``, with the ``oceansim`` layer metadata
    (``extra``: further entries of that dictionary, e.g. the default ``sea_state``)."""
    pose = ", ".join(fmt(v) for v in suggested_pose)
    extra_lines = [line for key, v in (extra or {}).items() for line in _metadata_value(key, v)]
    out = [
        "#usda 1.0",
        "(",
        "    customLayerData = {",
        "        dictionary oceansim = {",
        f"            string description = {_quote(description)}",
        f"            double[] suggested_pose = [{pose}]",
        f"            double surface_z = {fmt(surface_z)}",
        *("            " + line for line in extra_lines),
        "        }",
        "    }",
        f'    defaultPrim = "{root.name}"',
        "    metersPerUnit = 1",
        '    upAxis = "Z"',
        ")",
        "",
    ]
    root.write(out, "")
    return "\n".join(out) + "\n"


def looks_scope(names_and_colors: Sequence[tuple[str, Sequence[float]]]) -> Prim:
    """``/World/Looks`` with one UsdPreviewSurface material per (name, diffuse colour)."""
    mats = []
    for name, rgb in names_and_colors:
        shader = Prim("Shader", "PreviewSurface", [
            'uniform token info:id = "UsdPreviewSurface"',
            f"color3f inputs:diffuseColor = {_tuple(rgb, 3)}",
            "float inputs:roughness = 0.9",
            "token outputs:surface",
        ])
        mats.append(Prim("Material", name, [
            f"token outputs:surface.connect = </World/Looks/{name}/PreviewSurface.outputs:surface>",
        ], children=[shader]))
    return Prim("Scope", "Looks", children=mats)


# ---------------------------------------------------------------------------------------------------------
# The scenes
def build_tank() -> str:
    """The multibeam paper's square test tank with one steel cylinder (see the ``TANK_*`` constants)."""
    t = TANK_WALL_THICKNESS
    inner_len = TANK_FAR_WALL_X - TANK_BACK_WALL_X
    wall_h = TANK_WALL_TOP_Z - TANK_FLOOR_Z
    wall_zc = (TANK_WALL_TOP_Z + TANK_FLOOR_Z) / 2
    x_mid = (TANK_FAR_WALL_X + TANK_BACK_WALL_X) / 2
    floor = heightfield(TANK_BACK_WALL_X, TANK_FAR_WALL_X, 29, -TANK_HALF_WIDTH, TANK_HALF_WIDTH, 29,
                        lambda x, y: np.full_like(x, TANK_FLOOR_Z))
    walls = {
        "WallFar": box((t, 2 * TANK_HALF_WIDTH + 2 * t, wall_h), (TANK_FAR_WALL_X + t / 2, 0.0, wall_zc)),
        "WallBack": box((t, 2 * TANK_HALF_WIDTH + 2 * t, wall_h), (TANK_BACK_WALL_X - t / 2, 0.0, wall_zc)),
        "WallPort": box((inner_len, t, wall_h), (x_mid, TANK_HALF_WIDTH + t / 2, wall_zc)),
        "WallStarboard": box((inner_len, t, wall_h), (x_mid, -TANK_HALF_WIDTH - t / 2, wall_zc)),
    }
    tank = Prim("Xform", "Tank").material("concrete")
    tank.children.append(mesh_prim("Floor", floor).label("floor").color((0.38, 0.37, 0.35)))
    tank.children.extend(mesh_prim(name, m).label("wall") for name, m in walls.items())
    # The cylinder stands on the floor (no bottom cap) and ends 0.5 m below the surface.
    cyl = cylinder(TANK_CYLINDER_RADIUS, TANK_FLOOR_Z, TANK_CYLINDER_TOP_Z, TANK_CYLINDER_SEGMENTS,
                   bottom_cap=False)
    target = (mesh_prim("Cylinder", cyl).material("steel").label("cylinder").color((0.30, 0.30, 0.32))
              .xform(translate=(TANK_CYLINDER_AXIS_X, 0.0, 0.0)))
    world = Prim("Xform", "World", children=[tank, target])
    description = ("Multibeam test tank after Choi et al. 2021 Sec. 3: 7 x 7 m concrete tank 3 m deep, 0.4 m steel "
                   "cylinder 4 m ahead of the sonar, far wall 5.5 m; sonar 1.5 m deep, level, boresight +x")
    pose = [*TANK_SONAR, 0.0, 0.0, 0.0, 1.0]
    return stage_text(world, description, pose)


def _pier_seafloor_z(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pier seafloor height (m): 4 m deep at x = 0, sloping down 1:10 offshore (+x), with gentle noise."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return -4.0 - 0.1 * x + 0.15 * value_noise(x / 4.0, y / 4.0, seed=11) + 0.03 * value_noise(x, y, seed=12)


def build_pier() -> str:
    """A pier on a sloping sandy seafloor: two rows of concrete pilings, pile caps, a wooden deck, debris."""
    seafloor = heightfield(-10.0, 40.0, 201, -15.0, 15.0, 121, _pier_seafloor_z)
    pier = Prim("Xform", "Pier").material("concrete")
    piling_x = [4.0 * k for k in range(9)]
    piling_y = (-3.0, 3.0)
    for row, y in enumerate(piling_y):
        for k, x in enumerate(piling_x):
            base = float(_pier_seafloor_z(x, y)) - 1.0   # driven 1 m into the seafloor
            mesh = cylinder(0.25, base, 2.0, 24)
            pier.children.append(mesh_prim(f"Piling_{'PS'[row]}{k:02d}", mesh).label("piling")
                                 .xform(translate=(x, y, 0.0)))
    for k, x in enumerate(piling_x):
        pier.children.append(mesh_prim(f"PileCap_{k:02d}", box((0.6, 6.8, 0.4), (0.0, 0.0, 1.8))).label("pile_cap")
                             .xform(translate=(x, 0.0, 0.0)))
    pier.children.append(mesh_prim("Deck", box((36.0, 8.0, 0.3), (15.0, 0.0, 2.15))).material("wood")
                         .label("deck").color((0.35, 0.25, 0.15)))

    debris = Prim("Xform", "Debris")
    for k, (x, y, tilt) in enumerate([(6.5, 1.2, 4.0), (13.8, -1.6, 11.0), (21.2, 5.1, 0.0)]):
        z = float(_pier_seafloor_z(x, y)) + 0.06   # lying on the bottom, slightly sunk in
        debris.children.append(mesh_prim(f"Tyre_{k}", torus(0.28, 0.1, 24, 12)).material("rubber").label("tyre")
                               .color((0.05, 0.05, 0.05)).xform(translate=(x, y, z), rotate_xyz=(tilt, 0.0, 0.0)))
    drum_x, drum_y = 10.3, -0.9
    drum = Prim("Cylinder", "Drum", [
        'uniform token axis = "X"',
        "double height = 0.88",
        "double radius = 0.29",
        "float3[] extent = [(-0.44, -0.29, -0.29), (0.44, 0.29, 0.29)]",
    ]).material("steel").label("drum").color((0.45, 0.22, 0.10))
    debris.children.append(drum.xform(translate=(drum_x, drum_y, float(_pier_seafloor_z(drum_x, drum_y)) + 0.25),
                                      rotate_xyz=(0.0, 0.0, 35.0)))
    block_x, block_y = 17.6, 1.9
    debris.children.append(mesh_prim("ConcreteBlock", box((1.0, 0.6, 0.4), (0.0, 0.0, 0.15))).material("concrete")
                           .label("block").xform(translate=(block_x, block_y, float(_pier_seafloor_z(block_x,
                                                                                                       block_y))),
                                                 rotate_xyz=(0.0, 6.0, -20.0)))
    rocks = Prim("Xform", "Rocks")
    k = 0
    seed = 0
    while k < 14:
        u = hash_uniform(101, seed, np.arange(4))
        seed += 1
        x, y = -4.0 + 40.0 * u[0], -12.0 + 24.0 * u[1]
        near_piling = min(math.hypot(x - px, y - py) for px in piling_x for py in piling_y) < 1.5
        if near_piling:
            continue
        size = 0.4 + 0.8 * u[2]
        mesh = rock(1000 + k, (size * 1.3, size, size * 0.7))
        rocks.children.append(mesh_prim(f"Rock_{k:02d}", mesh).bind("/World/Looks/Rock").label("rock")
                              .xform(translate=(x, y, float(_pier_seafloor_z(x, y))),
                                     rotate_xyz=(0.0, 0.0, 360.0 * u[3])))
        k += 1
    debris.children.append(rocks)

    world = Prim("Xform", "World", children=[
        looks_scope([("Rock", (0.16, 0.15, 0.14))]),
        mesh_prim("Seafloor", seafloor).material("sand").label("seafloor").color((0.45, 0.40, 0.30)),
        pier,
        debris,
    ])
    description = ("Pier on a sandy seafloor sloping 1:10 from 4 m deep: two rows of 9 concrete pilings, wooden "
                   "deck, tyres, a steel drum, rocks; pose between the rows, 2 m deep, 12 deg down, along +x")
    pose = [float(v) for v in pose_from_euler(-3.0, 0.0, -2.0, 0.0, 12.0, 0.0)]
    return stage_text(world, description, pose)


#: Wreck hull: length, beam, depth (m) and mesh resolution (stations along, points around the section).
HULL_LENGTH, HULL_BEAM, HULL_DEPTH = 22.0, 6.0, 3.2
HULL_STATIONS, HULL_SECTION_POINTS = 80, 25


def hull(length: float = HULL_LENGTH, beam: float = HULL_BEAM, depth: float = HULL_DEPTH,
         stations: int = HULL_STATIONS, section_points: int = HULL_SECTION_POINTS) -> PolyMesh:
    """An open hull shell along +x (bow at +x), gunwale near z = 0, keel at z = -depth amidships.

    Sections are half-ellipses y = w(u) sin(phi), z = -d(u) cos(phi) for phi from +90 deg (port gunwale) to
    -90 deg (starboard); w tapers to 0 at the stem (u = 1) and to 70 % at the transom (u = -1), which is
    closed by one n-gon. The sheer rises 0.6 m towards the bow. Outward-facing quads.
    """
    u = np.linspace(-1.0, 1.0, stations)
    phi = np.linspace(np.pi / 2, -np.pi / 2, section_points)
    half_w = beam / 2 * np.sqrt(1.0 - np.clip(u, 0.0, None) ** 2) * (1.0 - 0.3 * np.clip(u, None, 0.0) ** 2)
    d = depth * (1.0 - 0.25 * u ** 4)
    sheer = 0.6 * np.clip(u, 0.0, None) ** 2
    uu, pp = np.meshgrid(np.arange(stations), phi, indexing="ij")
    x = (length / 2 * u)[uu]
    y = half_w[uu] * np.sin(pp)
    z = -d[uu] * np.cos(pp) + sheer[uu]
    pts = np.stack([x, y, z], axis=-1).reshape(-1, 3)
    q = grid_quads(stations, section_points)            # d/du x d/dphi points outward
    transom = np.arange(section_points)                 # station 0; seen from astern (-x) counter-clockwise
    counts = np.concatenate([np.full(q.shape[0], 4), [section_points]])
    return PolyMesh(pts, counts, np.concatenate([q.reshape(-1), transom]))


def _wreck_seafloor_z(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Wreck seafloor height (m): about 20 m deep, 1 m undulations, a slight slope to +y."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return (-20.0 + 0.02 * y + 0.8 * value_noise(x / 8.0, y / 8.0, seed=21)
            + 0.08 * value_noise(x / 1.5, y / 1.5, seed=22))


def build_wreck() -> str:
    """A steel fishing-vessel wreck heeled over on a muddy seafloor, with rocks around it."""
    seafloor = heightfield(-30.0, 30.0, 151, -30.0, 30.0, 151, _wreck_seafloor_z)
    heel, yaw = 14.0, 25.0
    keel_z = float(_wreck_seafloor_z(0.0, 0.0)) + HULL_DEPTH - 0.8   # keel 0.8 m into the mud
    wreck = Prim("Xform", "Wreck").material("steel").xform(translate=(0.0, 0.0, keel_z),
                                                           rotate_xyz=(heel, 2.0, yaw))
    wreck.children.append(mesh_prim("Hull", hull()).label("hull").color((0.32, 0.20, 0.12)))
    for k, (x0, x1) in enumerate([(-6.0, -2.5), (-1.5, 2.5), (4.5, 6.5)]):   # what is left of the deck
        wreck.children.append(mesh_prim(f"Deck_{k}", box((x1 - x0, 0.85 * HULL_BEAM, 0.12),
                                                         ((x0 + x1) / 2, 0.0, -0.35)))
                              .material("wood").label("deck").color((0.30, 0.22, 0.14)))
    wreck.children.append(mesh_prim("Wheelhouse", box((3.5, 3.2, 2.2), (-7.5, 0.0, 0.8))).label("wheelhouse"))
    wreck.children.append(mesh_prim("Mast", cylinder(0.15, 0.0, 7.0, 16)).label("mast")
                          .xform(translate=(3.5, 0.0, -0.3), rotate_xyz=(35.0, 10.0, 0.0)))

    rocks = Prim("Xform", "Rocks")
    c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
    k = 0
    seed = 0
    while k < 24:
        u = hash_uniform(202, seed, np.arange(4))
        seed += 1
        x, y = -26.0 + 52.0 * u[0], -26.0 + 52.0 * u[1]
        along, across = c * x + s * y, -s * x + c * y
        if (along / 14.0) ** 2 + (across / 5.5) ** 2 < 1.0:   # not inside the wreck
            continue
        size = 0.5 + 2.0 * u[2] ** 2
        mesh = rock(2000 + k, (size * 1.4, size, size * 0.6))
        rocks.children.append(mesh_prim(f"Rock_{k:02d}", mesh).bind("/World/Looks/Rock").label("rock")
                              .xform(translate=(x, y, float(_wreck_seafloor_z(x, y))),
                                     rotate_xyz=(0.0, 0.0, 360.0 * u[3])))
        k += 1

    world = Prim("Xform", "World", children=[
        looks_scope([("Rock", (0.16, 0.15, 0.14))]),
        mesh_prim("Seafloor", seafloor).material("mud").label("seafloor").color((0.20, 0.18, 0.14)),
        wreck,
        rocks,
    ])
    eye_x, eye_y = -9.0, -9.5
    eye = (eye_x, eye_y, float(_wreck_seafloor_z(eye_x, eye_y)) + 5.0)
    target = (0.0, 0.0, float(_wreck_seafloor_z(0.0, 0.0)) + 1.0)
    description = ("22 m steel fishing-vessel wreck heeled 14 deg on a muddy seafloor about 20 m deep, with rocks; "
                   "pose 13 m off its starboard quarter, 5 m above the bottom, looking at it")
    return stage_text(world, description, look_at_pose(eye, target))


# ---------------------------------------------------------------------------------------------------------
# Harbour geometry (metres). A quay runs along y with its face at x = 0, the harbour basin lies at x > 0.
HARBOUR_QUAY_TOP_Z = 2.0               # quay deck 2 m above the mean surface
HARBOUR_QUAY_BACK_X = -4.0             # the quay wall is a 4 m thick concrete block behind the face x = 0
HARBOUR_QUAY_FOOT_Z = -5.0             # founded 1 m below the seafloor at the face
HARBOUR_HALF_WIDTH = 30.0              # the basin (and quay) span y in [-30, 30]
HARBOUR_OFFSHORE_X = 48.0              # the seafloor ends 48 m off the quay
HARBOUR_DEPTH_AT_QUAY = 4.0            # seafloor 4 m deep at the quay face ...
HARBOUR_DEPTH_OFFSHORE = 12.0          # ... sloping linearly to 12 m deep ...
HARBOUR_SLOPE_END_X = 40.0             # ... 40 m off the quay (1:5), flat beyond
HARBOUR_SAND_END_X = 16.0              # sand up to 16 m off the quay, mud beyond
HARBOUR_RIPPLE = 0.05                  # seafloor roughness: value noise within +-0.05 m
HARBOUR_GRID = 0.5                     # seafloor mesh spacing
HARBOUR_PILE_Y = -22.0                 # a row of concrete piles out from the quay along x at y = -22 ...
HARBOUR_PILE_X = tuple(6.0 + 4.0 * k for k in range(8))   # ... at x = 6, 10, ..., 34
HARBOUR_PILE_RADIUS = 0.3
HARBOUR_PILE_TOP_Z = HARBOUR_QUAY_TOP_Z   # carrying a timber walkway level with the quay
HARBOUR_HULL = (26.0, 6.4, 3.6)        # moored hull: length, beam, depth (keel to gunwale amidships)
HARBOUR_HULL_FREEBOARD = 1.1           # gunwale 1.1 m above the mean surface: draft 3.6 - 1.1 = 2.5 m
HARBOUR_HULL_GAP = 1.2                 # fender gap between the quay face and the hull's side
HARBOUR_HULL_Y = 6.0                   # amidships, bow towards +y
#: The harbour's default sea: a small wind sea (U10 = 5 m/s over a 2 km fetch: Hs about 0.13 m, Tp 1.3 s) coming
#: in towards the quay (travelling to -x), on a 64 m patch at 0.25 m spacing (resolves its shortest components,
#: 0.57 m long).
HARBOUR_SEA_STATE = {"spectrum": "jonswap", "wind_speed": 5.0, "fetch": 2000.0, "direction": 180.0,
                     "n_frequencies": 10, "n_directions": 8, "steepness": 0.5, "seed": 16}
HARBOUR_SEA_PATCH = (64.0, 0.25)


def harbour_seafloor_z(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Harbour seafloor height (m): 4 m deep at the quay face (x = 0), 12 m at x >= 40 m (linear between), with
    sand ripples within +-``HARBOUR_RIPPLE``."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    slope = np.clip(x / HARBOUR_SLOPE_END_X, 0.0, 1.0)
    ripple = 0.7 * value_noise(x / 1.5, y / 6.0, seed=31, octaves=2) + 0.3 * value_noise(x / 4.0, y / 4.0, seed=32)
    return -HARBOUR_DEPTH_AT_QUAY - (HARBOUR_DEPTH_OFFSHORE - HARBOUR_DEPTH_AT_QUAY) * slope + HARBOUR_RIPPLE * ripple


def _moored_hull() -> Prim:
    """The moored vessel: the wreck's hull shape with a deck and a wheelhouse, floating alongside the quay."""
    length, beam, depth = HARBOUR_HULL
    x = HARBOUR_HULL_GAP + beam / 2
    vessel = Prim("Xform", "Vessel").material("steel").xform(translate=(x, HARBOUR_HULL_Y, HARBOUR_HULL_FREEBOARD),
                                                             rotate_xyz=(0.0, 0.0, 90.0))
    vessel.children.append(mesh_prim("Hull", hull(length, beam, depth)).label("hull").color((0.10, 0.16, 0.30)))
    vessel.children.append(mesh_prim("Deck", box((0.6 * length, 0.8 * beam, 0.1), (-0.1 * length, 0.0, -0.2)))
                           .label("deck").color((0.40, 0.40, 0.38)))
    vessel.children.append(mesh_prim("Wheelhouse", box((4.0, 0.7 * beam, 2.4), (-0.3 * length, 0.0, 1.0)))
                           .label("wheelhouse").color((0.85, 0.85, 0.82)))
    return vessel


def build_harbour() -> str:
    """A harbour basin: a concrete quay wall, a row of piles carrying a walkway, a moored hull and a seafloor
    sloping from 4 m at the quay to 12 m offshore, with a small wind sea by default (``HARBOUR_*`` constants)."""
    n_y = int(round(2 * HARBOUR_HALF_WIDTH / HARBOUR_GRID)) + 1
    x0 = -1.0   # the seafloor runs 1 m under the quay wall: no gap at its foot
    sand = heightfield(x0, HARBOUR_SAND_END_X, int(round((HARBOUR_SAND_END_X - x0) / HARBOUR_GRID)) + 1,
                       -HARBOUR_HALF_WIDTH, HARBOUR_HALF_WIDTH, n_y, harbour_seafloor_z)
    mud = heightfield(HARBOUR_SAND_END_X, HARBOUR_OFFSHORE_X,
                      int(round((HARBOUR_OFFSHORE_X - HARBOUR_SAND_END_X) / HARBOUR_GRID)) + 1,
                      -HARBOUR_HALF_WIDTH, HARBOUR_HALF_WIDTH, n_y, harbour_seafloor_z)
    seafloor = Prim("Xform", "Seafloor", children=[
        mesh_prim("Sand", sand).material("sand").label("seafloor").color((0.45, 0.40, 0.30)),
        mesh_prim("Mud", mud).material("mud").label("seafloor").color((0.22, 0.20, 0.16)),
    ])
    wall_h = HARBOUR_QUAY_TOP_Z - HARBOUR_QUAY_FOOT_Z
    quay = mesh_prim("QuayWall", box((-HARBOUR_QUAY_BACK_X, 2 * HARBOUR_HALF_WIDTH, wall_h),
                                     (HARBOUR_QUAY_BACK_X / 2, 0.0, (HARBOUR_QUAY_TOP_Z + HARBOUR_QUAY_FOOT_Z) / 2)))
    quay = quay.material("concrete").label("quay_wall").color((0.50, 0.49, 0.46))

    piles = Prim("Xform", "Piles").material("concrete")
    for k, x in enumerate(HARBOUR_PILE_X):
        base = float(harbour_seafloor_z(x, HARBOUR_PILE_Y)) - 1.0   # driven 1 m into the seafloor
        piles.children.append(mesh_prim(f"Pile_{k:02d}", cylinder(HARBOUR_PILE_RADIUS, base, HARBOUR_PILE_TOP_Z, 24))
                              .label("pile").color((0.42, 0.41, 0.38)).xform(translate=(x, HARBOUR_PILE_Y, 0.0)))
    walk_len = HARBOUR_PILE_X[-1] + 1.0
    piles.children.append(mesh_prim("Walkway", box((walk_len, 2.0, 0.25), (walk_len / 2, HARBOUR_PILE_Y,
                                                                         HARBOUR_PILE_TOP_Z + 0.125)))
                          .material("wood").label("walkway").color((0.35, 0.25, 0.15)))

    world = Prim("Xform", "World", children=[seafloor, quay, piles, _moored_hull()])
    description = ("Harbour basin: concrete quay wall (face x = 0), 8 concrete piles under a walkway, a 26 m hull "
                   "moored alongside (draft 2.5 m), seafloor sloping from 4 m at the quay to 12 m offshore, small "
                   "wind sea (JONSWAP U10 5 m/s, 2 km fetch); pose 20 m off the quay, 2 m deep, facing it")
    pose = look_at_pose((20.0, -10.0, -2.0), (0.0, -10.0, -3.5))
    size, resolution = HARBOUR_SEA_PATCH
    return stage_text(world, description, pose, extra={"sea_state": HARBOUR_SEA_STATE, "sea_surface_size": size,
                                                       "sea_surface_resolution": resolution})


#: Built-in scene name -> builder returning the ``.usda`` text.
BUILTIN_SCENES: dict[str, Callable[[], str]] = {"tank": build_tank, "pier": build_pier, "wreck": build_wreck,
                                                "harbour": build_harbour}


def write_builtin_scenes(folder: str | Path, names: Sequence[str] | None = None) -> list[Path]:
    """Write the built-in scenes (all, or ``names``) as ``<folder>/<name>.usda``; returns the paths written."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names if names is not None else BUILTIN_SCENES:
        path = out / f"{name}.usda"
        atomic_write_text(path, BUILTIN_SCENES[name]())
        written.append(path)
    return written
