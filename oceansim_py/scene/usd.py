"""USD stage -> scene nodes. The only module of the package that imports ``pxr``.

What is read:

- every ``UsdGeom.Mesh`` (n-gons triangulated in their plane, see :func:`triangulate_polygons`; ``holeIndices`` dropped,
  ``orientation = leftHanded`` reversed), including meshes under instanceable prims (instance proxies);
- the implicit primitives Cube, Sphere, Cylinder, Cone, Capsule, Plane (a two-triangle quad), Cylinder_1 (its two
  radii may differ) and Capsule_1 (equal radii), tessellated;
- ``UsdGeom.PointInstancer``: each prototype placed at each instance, as nodes
  ``<instancer>/instance_<k>/<prototype-relative path>``; a prototype's subtree is read whatever its prims'
  specifiers (prototypes kept under an ``over`` or ``class`` prim, hidden from the stage's traversal, keep their
  meshes);
- world transforms through ``UsdGeom.XformCache`` at the stage's start time code. A prim whose xformOps, or
  whose ancestors' xformOps, have time samples gets a :class:`TransformTrack` holding those ops (their sample
  values, in seconds) and the constant matrices between them, so that ``Scene.set_time(t)`` gives exactly
  ``ComputeLocalToWorldTransform(t)``: each op's value is interpolated (linearly; ``orient`` by slerp), then
  the ops are composed, ``!invert!`` ops inverted and ``!resetXformStack!`` honoured (see
  :mod:`oceansim_py.scene.animation`). Ops animated by value clips or splines are refused. Motion authored
  inside PointInstancer prototypes, and time-sampled instance positions, are read at the start time;
- invisible prims are skipped with their subtrees; prims whose computed purpose is ``guide`` or ``proxy`` (their
  own authored purpose, else their nearest ancestor's: ``UsdGeom.Imageable.ComputePurpose``) give no geometry, but
  a descendant that authors purpose ``default`` or ``render`` is read, as USD renders it.

Instancing is kept: nodes built from one source prim share one ``TriangleMesh`` (the Embree backend builds it once
and instances it per node): a PointInstancer prototype's meshes are shared by all its instances (and by every
instancer targeting that prototype), the meshes under instanceable prims by every instance of the same prototype
(keyed by the prim in the prototype and the texture-coordinate primvar read with it), and implicit prims by shape.
Everything applied per node (unit and axis conversion is per stage; transforms, mirroring, materials, labels) stays
on the node.

Frames and units: the stage's frame is converted to the package's world frame (Z up, metres) by
``C = metersPerUnit * R`` where ``R`` is the Y-up -> Z-up rotation for a Y-up stage (identity for Z-up).
Node vertices are ``C @ p`` (local frame, metres) and node transforms ``C @ M @ C^-1`` (column vectors), so
world points are ``C @ M @ p``. USD's fallbacks apply to unauthored stage metadata: upAxis Y, metersPerUnit
0.01 (centimetres).

Materials and labels, each inherited down the hierarchy (a prim without its own value takes the nearest
ancestor's):

- the *named material*: ``oceansim:material`` (string/token naming a table entry), else the name of the
  UsdShade material bound to the prim for purpose ``full`` (else its all-purpose binding; case-insensitive table
  lookup; names not in the table are ignored);
- ``oceansim:reflectivity`` (float in [0, 1]) overrides the named material's reflectivity;
- albedo: ``oceansim:albedo`` (color3f), else the named material's albedo, else the first value of
  ``primvars:displayColor`` (clipped to [0, 1]), else the ``default`` material's albedo;
- label: UsdSemantics ``semantics:labels:<taxonomy>`` (taxonomy ``class`` preferred, first value), else Isaac
  Sim's ``semantic:<name>:params:semanticData`` (semanticType ``class`` preferred), else the prim's name.
- texture: a Mesh whose bound material's surface is a ``UsdPreviewSurface`` with ``diffuseColor`` connected to
  a ``UsdUVTexture`` gets that image as its material's texture (scene/textures.py): ``inputs:file`` (resolved
  against the layer; a file that does not exist is a ``SceneError`` naming it and the shader),
  ``sourceColorSpace``, ``scale``, ``bias``, ``wrapS``/``wrapT`` (``useMetadata`` reads as ``repeat``: PNG and
  JPEG carry no wrap metadata). The texture coordinates are the primvar named by the ``UsdPrimvarReader_float2``
  connected to the texture's ``st`` input (``inputs:varname``, default ``st``), with any interpolation
  (``faceVarying``, ``vertex``/``varying``, ``uniform``, ``constant``; indexed primvars flattened). A textured
  material on a mesh without that primvar logs a warning and keeps the flat albedo.
- per-face materials: a face ``GeomSubset`` of family ``materialBind`` bound to another material than its mesh
  becomes a child node ``<mesh>/<subset>`` holding its faces, with that material (and texture), the subset's
  own ``oceansim:*`` attributes and label (else the mesh's); the mesh's node keeps the other faces.

Stage metadata: the root layer's ``customLayerData["oceansim"]`` may hold ``description`` (string),
``suggested_pose`` (7 numbers ``[px, py, pz, qx, qy, qz, qw]`` in the converted world frame) and ``surface_z``
(m); other keys are passed through unchanged. The returned metadata adds ``up_axis``, ``meters_per_unit``,
``start_time`` (s) and ``time_codes_per_second``.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
from pathlib import Path
from typing import Any, Callable

import mapbox_earcut
import numpy as np
from pxr import Pcp, Tf, Usd, UsdGeom, UsdShade

from oceansim_py.errors import ConfigError, SceneError
from oceansim_py.poses import matmul_fixed
from oceansim_py.scene.animation import OP_KINDS, TransformTrack, XformOp
from oceansim_py.scene.graph import Node, TriangleMesh
from oceansim_py.scene.materials import Material, MaterialTable, default_material, material_named
from oceansim_py.scene.meshes import Y_UP_TO_Z_UP
from oceansim_py.scene.textures import WRAP_MODES, Texture, read_texture

log = logging.getLogger(__name__)

#: Values of ``read_usd(..., missing_references=...)``.
MISSING_REFERENCE_POLICIES = ("error", "warn")
#: Composition errors that mean an asset or prim a stage points to is missing (its geometry would be dropped).
_MISSING_ASSET_ERRORS = (Pcp.ErrorInvalidAssetPath, Pcp.ErrorInvalidSublayerPath, Pcp.ErrorUnresolvedPrimPath)

#: Concave polygons of up to this many vertices are ear-clipped vectorised (O(n^2) work each), larger ones
#: by ``mapbox_earcut``.
_SMALL_POLYGON = 32

#: Segments around the axis of tessellated Cylinder, Cone and Capsule prims.
IMPLICIT_SEGMENTS = 32
#: Icosphere subdivisions for Sphere prims (1280 faces; every face lies within 0.5 % of the radius).
SPHERE_SUBDIVISIONS = 3

_PREDICATE = Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)
#: Children walked inside a PointInstancer prototype: also undefined and abstract ones, since prototypes are commonly
#: kept under an ``over`` or ``class`` prim to hide them from the stage's own traversal.
_PROTOTYPE_PREDICATE = Usd.TraverseInstanceProxies(Usd.PrimIsActive & Usd.PrimIsLoaded)
#: Surface prim types the reader does not tessellate (a warning names each; curves and points have no surface).
_UNREAD_SURFACES = ("NurbsPatch", "TetMesh")
_IMPLICIT_TYPES = ("Cube", "Sphere", "Cylinder", "Cone", "Capsule", "Plane", "Cylinder_1", "Capsule_1")


# -- triangulation -----------------------------------------------------------------------------------------

def _cross2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _project_to_plane(xyz: np.ndarray) -> np.ndarray:
    """(P, n, 3) polygons -> (P, n, 2) coordinates in each polygon's best-fit plane (the plane normal to its
    Newell normal), counter-clockwise seen from the side that normal points to (the front for right-handed
    winding). Coordinates are taken relative to the polygon's first vertex, so far-off polygons keep their
    precision."""
    xyz = xyz - xyz[:, :1]
    normal = np.cross(xyz, np.roll(xyz, -1, axis=1)).sum(axis=1)
    length = np.linalg.norm(normal, axis=1, keepdims=True)
    normal = np.where(length > 0, normal / np.where(length > 0, length, 1.0), [0.0, 0.0, 1.0])
    helper = np.where(np.abs(normal[:, :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    u = np.cross(helper, normal)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = np.cross(normal, u)
    return np.stack([matmul_fixed(xyz, u[:, :, None])[..., 0], matmul_fixed(xyz, v[:, :, None])[..., 0]], axis=-1)


def _convex(uv: np.ndarray) -> np.ndarray:
    """(P,) True for the polygons of uv (P, n, 2) (counter-clockwise) that a fan from vertex 0 triangulates
    exactly: no corner turns clockwise and no fan triangle is clockwise (collinear and repeated vertices are
    allowed; a polygon that winds around more than once is not convex)."""
    corner, tol = _corners(uv)
    fan = _cross2(uv[:, 1:-1] - uv[:, :1], uv[:, 2:] - uv[:, :1])
    return (corner >= -tol).all(axis=1) & (fan >= -tol).all(axis=1)


def _corners(uv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Turn at each corner of polygons uv (P, n, 2) (> 0: counter-clockwise) and a tolerance (P, 1) for it."""
    extent = np.ptp(uv.reshape(uv.shape[0], -1), axis=1)
    corner = _cross2(uv - np.roll(uv, 1, axis=1), np.roll(uv, -1, axis=1) - uv)
    return corner, (1e-12 * extent * extent)[:, None]


def _ear_clip(uv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ear clipping of P polygons of n vertices at once, uv (P, n, 2) counter-clockwise -> (owner (T,), local
    vertex indices (T, 3)), T = P * (n - 2), with the polygons' winding. Vectorised over polygons and
    vertices, O(P n^2) memory: for small polygons only.

    Each step finds every ear of every polygon and clips the same number m >= 1 of pairwise non-adjacent ears
    from each (clipping one ear cannot spoil another that does not share its tip's neighbours); a polygon
    without a clean ear clips its most convex corner. Clipping keeps the chain identity polygon = triangle +
    rest, so the triangles' signed coverage always equals the polygon's winding number: the result is exact
    exactly when no triangle is clockwise, which :func:`triangulate_polygons` checks.
    """
    p_count = uv.shape[0]
    _, tol = _corners(uv)
    local = np.broadcast_to(np.arange(uv.shape[1]), uv.shape[:2])
    owners, out = [], []
    while uv.shape[1] > 3:
        k = uv.shape[1]
        prev, nxt = np.roll(uv, 1, axis=1), np.roll(uv, -1, axis=1)
        corner = _cross2(uv - prev, nxt - uv)                                  # (P, k), > 0: convex
        convex = corner > tol
        a, b, c, q = prev[:, :, None], uv[:, :, None], nxt[:, :, None], uv[:, None, :]
        inside = ((_cross2(b - a, q - a) >= -tol[..., None]) & (_cross2(c - b, q - b) >= -tol[..., None])
                  & (_cross2(a - c, q - c) >= -tol[..., None]))               # (P, candidate, vertex)
        j = np.arange(k)
        own = (j[None, :] == j[:, None]) | (j[None, :] == (j[:, None] - 1) % k) | (j[None, :] == (j[:, None] + 1) % k)
        ear = convex & ~(inside & ~own).any(axis=2)
        # Ears at even or at odd positions are never neighbours (with k odd, k - 1 neighbours 0: left out).
        even = (j % 2 == 0) & (j != k - 1 if k % 2 else True)
        ear_even, ear_odd = ear & even, ear & (j % 2 == 1)
        pick = np.where((ear_even.sum(axis=1) >= ear_odd.sum(axis=1))[:, None], ear_even, ear_odd)
        stuck = np.nonzero(~pick.any(axis=1))[0]
        pick[stuck, np.argmax(np.where(convex, corner, -np.inf), axis=1)[stuck]] = True
        m = min(int(pick.sum(axis=1).min()), k - 3)
        pick &= np.cumsum(pick, axis=1) <= m
        r, c = np.nonzero(pick)
        owners.append(r)
        out.append(np.stack([local[r, (c - 1) % k], local[r, c], local[r, (c + 1) % k]], axis=1))
        uv = uv[~pick].reshape(p_count, k - m, 2)
        local = local[~pick].reshape(p_count, k - m)
    owners.append(np.arange(p_count))
    out.append(local)
    return np.concatenate(owners), np.concatenate(out)


def _earcut(uv: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Triangles of one polygon uv (n, 2) (counter-clockwise) by ``mapbox_earcut`` (z-order-hashed ear
    clipping: O(n) memory, about O(n log n) time). It takes keyhole boundaries (a slit into a hole and back),
    collinear and repeated vertices and zero-area spikes, and drops the zero-area triangles these would give.
    Triangles come back counter-clockwise, i.e. with the polygon's winding."""
    ring = np.array([uv.shape[0]], dtype=np.uint32)
    tri = mapbox_earcut.triangulate_float64(np.ascontiguousarray(uv), ring).astype(np.int64).reshape(-1, 3)
    a, b, c = uv[tri[:, 0]], uv[tri[:, 1]], uv[tri[:, 2]]
    flip = _cross2(b - a, c - a) < 0
    tri[flip] = tri[flip][:, [0, 2, 1]]
    return ids[tri]


def triangulate_polygons(points: np.ndarray, counts: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Triangulate polygons given USD-style: ``counts`` (F,) vertices per face, ``indices`` (sum(counts),)
    into ``points`` (V, 3). Returns (T, 3) triangles keeping each polygon's winding, T <= sum(counts - 2)
    (equal for polygons without repeated or collinear vertices); the triangles of each polygon cover exactly
    its area (the shoelace area in its plane).

    Each polygon is triangulated in its best-fit plane (Newell normal). Convex polygons are fanned, concave ones
    of up to 32 vertices ear-clipped, vectorised over all polygons of one size; an ear-clipped polygon with a
    clockwise triangle (keyholes, slits, degenerate vertices can give one) and every larger concave polygon go
    to ``mapbox_earcut``, one call per polygon. Memory stays O(V + F) whatever the polygon sizes.
    """
    points = np.asarray(points, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    out = []
    for n in np.unique(counts):
        n = int(n)
        first = starts[counts == n]
        if n == 3:
            out.append(indices[first[:, None] + np.arange(3)])
            continue
        step = max(1, 4_000_000 // (n * min(n, _SMALL_POLYGON)))  # bounds the work arrays to ~100 MB
        for lo in range(0, first.size, step):
            ids = indices[first[lo:lo + step, None] + np.arange(n)]
            uv = _project_to_plane(points[ids])
            convex = _convex(uv)
            if convex.any():
                fan = np.arange(1, n - 1)
                c = ids[convex]
                out.append(np.stack([np.repeat(c[:, 0], n - 2), c[:, fan].reshape(-1), c[:, fan + 1].reshape(-1)],
                                    axis=1))
            concave = np.nonzero(~convex)[0]
            if n <= _SMALL_POLYGON and concave.size:
                owner, local = _ear_clip(uv[concave])
                corners = uv[concave][owner[:, None], local]                    # (T, 3, 2)
                area = _cross2(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
                _, tol = _corners(uv[concave])
                exact = np.ones(concave.size, dtype=bool)
                exact[owner[area < -tol[owner, 0]]] = False
                keep = exact[owner]
                out.append(ids[concave[owner[keep]][:, None], local[keep]])
                concave = concave[~exact]
            out.extend(_earcut(uv[p], ids[p]) for p in concave)
    if not out:
        return np.zeros((0, 3), dtype=np.int64)
    return np.concatenate(out)


# -- implicit primitives -----------------------------------------------------------------------------------

def _axis_rotation(axis: str) -> np.ndarray:
    """Proper rotation taking +Z to the given USD axis token."""
    if axis == "X":
        return np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])
    if axis == "Y":
        return np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])
    return np.eye(3)


def _implicit_params(prim: Usd.Prim, time: Usd.TimeCode) -> tuple[str, tuple[float, ...], str]:
    """(kind, dimensions, axis) of an implicit primitive, in stage units: Cube (size,), Sphere (radius,),
    Cylinder (bottom radius, top radius, height), Cone and Capsule (radius, height), Plane (width, length).
    ``Cylinder_1`` reads as a Cylinder (its radii may differ: a frustum), ``Capsule_1`` as a Capsule."""
    kind = prim.GetTypeName()
    if kind == "Cube":
        return kind, (float(UsdGeom.Cube(prim).GetSizeAttr().Get(time)),), "Z"
    if kind == "Sphere":
        return kind, (float(UsdGeom.Sphere(prim).GetRadiusAttr().Get(time)),), "Z"
    if kind == "Plane":
        plane = UsdGeom.Plane(prim)
        return (kind, (float(plane.GetWidthAttr().Get(time)), float(plane.GetLengthAttr().Get(time))),
                str(plane.GetAxisAttr().Get(time)))
    if kind in ("Cylinder_1", "Capsule_1"):
        schema = (UsdGeom.Cylinder_1 if kind == "Cylinder_1" else UsdGeom.Capsule_1)(prim)
        bottom, top = float(schema.GetRadiusBottomAttr().Get(time)), float(schema.GetRadiusTopAttr().Get(time))
        height, axis = float(schema.GetHeightAttr().Get(time)), str(schema.GetAxisAttr().Get(time))
        if kind == "Cylinder_1":
            return "Cylinder", (bottom, top, height), axis
        if bottom != top:
            raise SceneError(f"prim {prim.GetPath()}: Capsule_1 with radiusBottom {bottom} != radiusTop {top} is "
                             f"not supported; give both the same radius or model it as a Mesh")
        return "Capsule", (bottom, height), axis
    schema = {"Cylinder": UsdGeom.Cylinder, "Cone": UsdGeom.Cone, "Capsule": UsdGeom.Capsule}[kind](prim)
    radius, height = float(schema.GetRadiusAttr().Get(time)), float(schema.GetHeightAttr().Get(time))
    dims = (radius, radius, height) if kind == "Cylinder" else (radius, height)
    return kind, dims, str(schema.GetAxisAttr().Get(time))


def _valid_dimensions(kind: str, dims: tuple[float, ...]) -> bool:
    """Whether the dimensions of :func:`_implicit_params` make a shape with faces: finite, none negative; sizes,
    radii and plane sides > 0 (one of a cylinder's two radii may be 0), heights > 0 (a capsule's may be 0)."""
    if not all(math.isfinite(d) and d >= 0 for d in dims):
        return False
    if kind == "Cylinder":
        return max(dims[:2]) > 0 and dims[2] > 0
    if kind == "Capsule":
        return dims[0] > 0
    return min(dims) > 0


@functools.lru_cache(maxsize=256)
def _tessellate(kind: str, dims: tuple[float, ...], axis: str) -> tuple[np.ndarray, np.ndarray]:
    """Triangles of an implicit primitive centred on its origin, outward counter-clockwise faces (a Plane's face
    towards +axis) (read-only arrays, shared by every prim of the same shape). ``dims``: :func:`_implicit_params`."""
    import trimesh.creation as tc

    if kind == "Plane":  # width along x, length along y, facing +z (before the axis rotation)
        w, h = dims[0] / 2, dims[1] / 2
        verts, faces = np.array([[-w, -h, 0.0], [w, -h, 0.0], [w, h, 0.0], [-w, h, 0.0]]), [[0, 1, 2], [0, 2, 3]]
    elif kind == "Cube":
        m = tc.box(extents=[dims[0]] * 3)
        verts, faces = np.asarray(m.vertices), m.faces
    elif kind == "Sphere":
        m = tc.icosphere(subdivisions=SPHERE_SUBDIVISIONS, radius=dims[0])
        verts, faces = np.asarray(m.vertices), m.faces
    elif kind == "Cylinder":  # a unit-radius cylinder whose rings are scaled to the bottom and top radii
        bottom, top, height = dims
        m = tc.cylinder(radius=1.0, height=height, sections=IMPLICIT_SEGMENTS)
        verts, faces = np.array(m.vertices, dtype=np.float64), m.faces
        verts[:, :2] *= np.where(verts[:, 2:] > 0, top, bottom)
    elif kind == "Cone":  # trimesh: base at z = 0, apex at z = height; USD: centred on the origin
        m = tc.cone(radius=dims[0], height=dims[1], sections=IMPLICIT_SEGMENTS)
        verts, faces = np.asarray(m.vertices) - [0.0, 0.0, dims[1] / 2], m.faces
    else:  # Capsule: height is the cylindrical part, hemispherical caps added (as in trimesh)
        m = tc.capsule(height=dims[1], radius=dims[0], count=[IMPLICIT_SEGMENTS, IMPLICIT_SEGMENTS // 2])
        verts, faces = np.asarray(m.vertices), m.faces
    verts = np.ascontiguousarray(matmul_fixed(verts, _axis_rotation(axis).T), dtype=np.float64)
    faces = np.ascontiguousarray(faces, dtype=np.int64)
    verts.setflags(write=False)
    faces.setflags(write=False)
    return verts, faces


# -- the reader --------------------------------------------------------------------------------------------

def _bound_material(prim: Usd.Prim) -> tuple[UsdShade.Material, Usd.Relationship]:
    """The material bound to ``prim`` for final rendering (purpose ``full``, which falls back to the all-purpose
    binding; ``preview`` bindings are not used) and the relationship that binds it."""
    return UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial(UsdShade.Tokens.full)



@dataclasses.dataclass(frozen=True)
class _Inherited:
    """Material and label sources passed down the hierarchy (each the nearest ancestor's value)."""

    named: Material | None = None
    #: (bound material path, path of the binding relationship that binds it) of the prim, None when unbound
    binding: tuple[str, str] | None = None
    reflectivity: float | None = None
    albedo: tuple[float, float, float] | None = None
    display_color: tuple[float, float, float] | None = None
    label: str | None = None


@dataclasses.dataclass
class _Record:
    """A node before conversion: ``matrix`` (4, 4) column-vector transform in stage units and axes, relative
    to the walk's base (the world, or a prototype's parent); ``track``: the world transform as factors (constant
    matrices in stage units and animated ops, times in seconds), for animated nodes only."""

    path: str
    parent: int
    matrix: np.ndarray
    label: str
    material: Material
    mesh: tuple[np.ndarray, ...] | None = None
    track: tuple[np.ndarray | XformOp, ...] | None = None


class _StageReader:
    def __init__(self, path: Path, stage: Usd.Stage, materials: MaterialTable) -> None:
        self.path = path
        self.stage = stage
        self.table = materials
        self.current_prim: Usd.Prim | None = None  # the prim being read (named in errors)
        self.start = float(stage.GetStartTimeCode())
        self.time = Usd.TimeCode(self.start)
        self.tcps = float(stage.GetTimeCodesPerSecond())
        if not (math.isfinite(self.tcps) and self.tcps > 0):
            raise SceneError(f"{path}: timeCodesPerSecond must be > 0, got {self.tcps}")
        self.up_axis = str(UsdGeom.GetStageUpAxis(stage))
        if self.up_axis not in ("Y", "Z"):
            raise SceneError(f"{path}: stage upAxis is {self.up_axis!r}, but USD allows only \"Y\" or \"Z\"; "
                             f"fix the layer metadata (upAxis = \"Z\")")
        self.meters_per_unit = float(UsdGeom.GetStageMetersPerUnit(stage))
        if not (math.isfinite(self.meters_per_unit) and self.meters_per_unit > 0):
            raise SceneError(f"{path}: stage metersPerUnit must be a finite number > 0, got "
                             f"{self.meters_per_unit}; fix the layer metadata")
        conv = np.diag([self.meters_per_unit] * 3 + [1.0])
        if self.up_axis == "Y":
            conv = matmul_fixed(conv, Y_UP_TO_Z_UP)
        self.conv = conv
        self.conv_inv = np.linalg.inv(conv)
        self._caches: dict[float, UsdGeom.XformCache] = {}
        self._templates: dict[str, list[_Record]] = {}
        self._textures: dict[tuple[Any, ...], Texture] = {}
        self._meshes: dict[tuple[str, str | None, tuple[str, ...]], tuple[np.ndarray, ...] | None] = {}

    # -- helpers --------------------------------------------------------------------------------------------
    def fail(self, prim: Usd.Prim, what: str) -> SceneError:
        return SceneError(f"{self.path}: prim {prim.GetPath()}: {what}")

    def cache(self, code: float) -> UsdGeom.XformCache:
        if code not in self._caches:
            self._caches[code] = UsdGeom.XformCache(Usd.TimeCode(code))
        return self._caches[code]

    def matrix(self, prim: Usd.Prim, base: Usd.Prim | None, code: float) -> np.ndarray:
        """Column-vector transform of ``prim`` relative to ``base`` (``None``: the world), stage units."""
        cache = self.cache(code)
        if base is None:
            m = cache.GetLocalToWorldTransform(prim)
        else:
            m = cache.ComputeRelativeTransform(prim, base)[0]
        return np.array(m, dtype=np.float64).T

    def local_factors(self, prim: Usd.Prim) -> tuple[tuple[np.ndarray | XformOp, ...], bool]:
        """The prim's local transform as factors (column convention, stage units): each op with two or more
        time samples as an :class:`XformOp` (its authored values at its samples, times in seconds), the others
        as their constant matrices at the start time; and whether the prim resets the transform stack."""
        xf = UsdGeom.Xformable(prim)
        ops = xf.GetOrderedXformOps()
        factors: list[np.ndarray | XformOp] = []
        for op in ops:
            codes = op.GetTimeSamples()
            if len(codes) < 2 and op.GetAttr().ValueMightBeTimeVarying():
                raise self.fail(prim, f"{op.GetOpName()}: animated without time samples (value clips or splines), "
                                      f"which the reader does not evaluate; bake the animation to time samples")
            if len(codes) < 2:
                factors.append(np.array(op.GetOpTransform(self.time), dtype=np.float64).T)
                continue
            kind = str(UsdGeom.XformOp.GetOpTypeToken(op.GetOpType()))
            if kind not in OP_KINDS:
                raise self.fail(prim, f"{op.GetOpName()}: time-sampled xformOp of type {kind!r} is not supported "
                                      f"(supported: {', '.join(OP_KINDS)})")
            values = [op.Get(Usd.TimeCode(c)) for c in codes]
            if kind == "orient":
                values = [[q.GetReal(), *q.GetImaginary()] for q in values]
            elif kind == "transform":
                values = [np.array(v, dtype=np.float64).T.reshape(-1) for v in values]
            values = np.array(values, dtype=np.float64).reshape(len(codes), -1)
            if not np.isfinite(values).all():
                raise self.fail(prim, f"{op.GetOpName()}: time samples hold non-finite values")
            precision = {UsdGeom.XformOp.PrecisionHalf: "half", UsdGeom.XformOp.PrecisionFloat: "float"}.get(
                op.GetPrecision(), "double")
            factors.append(XformOp(kind, op.IsInverseOp(), np.array(codes, dtype=np.float64) / self.tcps, values,
                                   precision))
        return tuple(factors), bool(xf.GetResetXformStack())

    def value(self, prim: Usd.Prim, name: str) -> Any:
        attr = prim.GetAttribute(name)
        if not attr or not attr.HasAuthoredValue():
            return None
        return attr.Get(self.time)

    # -- materials and labels -------------------------------------------------------------------------------
    def resolve(self, prim: Usd.Prim, inh: _Inherited) -> _Inherited:
        named = inh.named
        name = self.value(prim, "oceansim:material")
        bound, rel = _bound_material(prim)
        # the binding is the prim's own (not inherited) when its material or the relationship binding it differs
        # from the parent's: a direct binding on the prim, or a collection binding naming the prim but not its parent
        binding = (str(bound.GetPath()), str(rel.GetPath())) if bound else None
        if name is not None:
            named = material_named(self.table, str(name), f"{self.path}: prim {prim.GetPath()}", "oceansim:material")
        elif binding is not None and binding != inh.binding:
            named = self.table.get(bound.GetPrim().GetName()) or named
        refl = self.value(prim, "oceansim:reflectivity")
        if refl is not None:
            refl = self.number(prim, "oceansim:reflectivity", refl)
        albedo = self.value(prim, "oceansim:albedo")
        if albedo is not None:
            albedo = self.color(prim, "oceansim:albedo", albedo)
        color = self.value(prim, "primvars:displayColor")
        if color is not None and len(color) > 0:
            color = tuple(float(np.clip(c, 0.0, 1.0)) for c in self.color(prim, "primvars:displayColor", color[0]))
        else:
            color = None
        return _Inherited(named, binding, inh.reflectivity if refl is None else refl,
                          inh.albedo if albedo is None else albedo, inh.display_color if color is None else color,
                          self.own_label(prim) or inh.label)

    def number(self, prim: Usd.Prim, name: str, value: Any) -> float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise self.fail(prim, f"{name} must be a float, got {value!r}") from None

    def color(self, prim: Usd.Prim, name: str, value: Any) -> tuple[float, float, float]:
        try:
            rgb = tuple(float(c) for c in value)
        except (TypeError, ValueError):
            rgb = ()
        if len(rgb) != 3 or not all(math.isfinite(c) for c in rgb):
            raise self.fail(prim, f"{name} must be three finite numbers (color3f), got {value!r}")
        return rgb  # type: ignore[return-value]

    def own_label(self, prim: Usd.Prim) -> str | None:
        labels = {}
        for prop in prim.GetAuthoredPropertiesInNamespace("semantics:labels"):
            values = prop.Get(self.time) if isinstance(prop, Usd.Attribute) else None
            if values is not None and len(values) > 0 and str(values[0]):
                labels[prop.GetName().split(":", 2)[2]] = str(values[0])
        if labels:
            return labels.get("class", labels[sorted(labels)[0]])
        isaac: dict[str, tuple[str, str]] = {}
        for prop in prim.GetAuthoredPropertiesInNamespace("semantic"):
            parts = prop.GetName().split(":")
            if isinstance(prop, Usd.Attribute) and len(parts) == 4 and parts[2:] == ["params", "semanticData"]:
                data = prop.Get(self.time)
                kind = prim.GetAttribute(f"semantic:{parts[1]}:params:semanticType").Get(self.time)
                if data:
                    isaac[parts[1]] = (str(kind or ""), str(data))
        if isaac:
            chosen = [v for _, v in sorted(isaac.items()) if v[0] == "class"] or [v for _, v in sorted(isaac.items())]
            return chosen[0][1]
        return None

    def material(self, prim: Usd.Prim, inh: _Inherited) -> Material:
        base = inh.named or default_material(self.table)
        albedo = inh.albedo or (inh.named.albedo if inh.named else None) or inh.display_color or base.albedo
        refl = base.reflectivity if inh.reflectivity is None else inh.reflectivity
        if albedo == base.albedo and refl == base.reflectivity:
            return base
        try:
            checked = Material.from_properties(base.name, albedo, reflectivity=refl,
                                               source=f"{self.path}: prim {prim.GetPath()}")
        except ConfigError as exc:
            raise SceneError(str(exc)) from None
        return checked if refl != base.reflectivity else dataclasses.replace(base, albedo=checked.albedo)

    # -- geometry -------------------------------------------------------------------------------------------
    def mesh(self, prim: Usd.Prim, texture: tuple[Texture, str] | None = None,
             faces: np.ndarray | None = None) -> tuple[np.ndarray, ...] | None:
        """(points, triangles) of a Mesh prim, and with ``texture`` = (texture, primvar name) also the (T, 3, 2)
        texture coordinates of each triangle's corners (``None`` when the primvar is missing). ``faces``: (F,)
        bool, the faces to read (default all); ``None`` when none is left."""
        mesh = UsdGeom.Mesh(prim)
        pts = mesh.GetPointsAttr().Get(self.time)
        counts = mesh.GetFaceVertexCountsAttr().Get(self.time)
        indices = mesh.GetFaceVertexIndicesAttr().Get(self.time)
        if pts is None or counts is None or indices is None or len(counts) == 0:
            return None
        pts = np.array(pts, dtype=np.float64).reshape(-1, 3)
        counts = np.array(counts, dtype=np.int64)
        indices = np.array(indices, dtype=np.int64)
        if not np.isfinite(pts).all():
            bad = int(np.nonzero(~np.isfinite(pts).all(axis=1))[0][0])
            raise self.fail(prim, f"points hold non-finite coordinates (first at point {bad}); fix the mesh")
        if counts.min() < 3:
            bad = int(np.argmax(counts < 3))
            raise self.fail(prim, f"faceVertexCounts[{bad}] = {counts[bad]}: every face needs at least 3 vertices")
        if int(counts.sum()) != indices.size:
            raise self.fail(prim, f"faceVertexCounts sum to {int(counts.sum())} but faceVertexIndices has "
                                  f"{indices.size} entries; the two must agree")
        if indices.size and (indices.min() < 0 or indices.max() >= pts.shape[0]):
            raise self.fail(prim, f"faceVertexIndices out of range: values {int(indices.min())}..{int(indices.max())}"
                                  f" but the mesh has {pts.shape[0]} points")
        corner_uv = None if texture is None else self.corner_uvs(prim, texture[1], counts, indices)
        holes = mesh.GetHoleIndicesAttr().Get(self.time)
        if (holes is not None and len(holes) > 0) or faces is not None:
            keep_face = np.ones(counts.size, dtype=bool) if faces is None else faces.copy()
            holes = np.asarray(holes if holes is not None else [], dtype=np.int64)
            keep_face[holes[(holes >= 0) & (holes < counts.size)]] = False
            if not keep_face.any():
                return None
            keep_corner = np.repeat(keep_face, counts)
            indices = indices[keep_corner]
            corner_uv = None if corner_uv is None else corner_uv[keep_corner]
            counts = counts[keep_face]
        left = mesh.GetOrientationAttr().Get(self.time) == UsdGeom.Tokens.leftHanded
        if corner_uv is None:
            tris = triangulate_polygons(pts, counts, indices)
            return (pts, tris[:, [0, 2, 1]] if left else tris)
        # the same triangulation, in corner (face-vertex) indices, so each triangle corner keeps its own uv
        corners = triangulate_polygons(pts[indices], counts, np.arange(indices.size))
        if left:
            corners = corners[:, [0, 2, 1]]
        return pts, indices[corners], corner_uv[corners]

    def read_mesh(self, record: _Record, holder: Usd.Prim, prim: Usd.Prim, faces: np.ndarray | None,
                  part: tuple[str, ...]) -> None:
        """Set ``record.mesh`` to the faces ``faces`` ((F,) bool, ``None``: all) of Mesh ``prim``, textured by the
        material bound to ``holder`` (the mesh or one of its subsets), and the texture on ``record.material``."""
        texture = self.texture(holder)
        record.mesh = self.shared(holder, None if texture is None else texture[1],
                                  lambda: self.mesh(prim, texture, faces), part)
        if record.mesh is not None and len(record.mesh) == 3:
            record.material = dataclasses.replace(record.material, texture=texture[0])

    def material_subsets(self, prim: Usd.Prim) -> list[tuple[Usd.Prim, np.ndarray]]:
        """(subset prim, face indices) of each face ``GeomSubset`` of family ``materialBind`` of Mesh ``prim``
        bound to another material than the mesh (module docstring)."""
        own = _bound_material(prim)[0]
        own_path = str(own.GetPath()) if own else None
        count = UsdGeom.Mesh(prim).GetFaceCount(self.time)
        out = []
        for subset in UsdShade.MaterialBindingAPI(prim).GetMaterialBindSubsets():
            bound = _bound_material(subset.GetPrim())[0]
            if subset.GetElementTypeAttr().Get(self.time) != UsdGeom.Tokens.face or not bound or \
                    str(bound.GetPath()) == own_path:
                continue
            faces = np.asarray(subset.GetIndicesAttr().Get(self.time) or [], dtype=np.int64)
            if faces.size and (faces.min() < 0 or faces.max() >= count):
                raise self.fail(subset.GetPrim(), f"indices hold faces {int(faces.min())}..{int(faces.max())} but "
                                                  f"the mesh has {count} faces")
            out.append((subset.GetPrim(), faces))
        return out

    def implicit(self, prim: Usd.Prim) -> tuple[np.ndarray, np.ndarray]:
        """(points, triangles) of an implicit primitive (Cube, Sphere, ...), tessellated."""
        try:
            kind, dims, axis = _implicit_params(prim, self.time)
        except SceneError as exc:
            raise SceneError(f"{self.path}: {exc}") from None
        if not _valid_dimensions(kind, dims):
            raise self.fail(prim, f"{prim.GetTypeName()} needs a finite size/radius > 0 and height >= 0, got "
                                  f"{', '.join(f'{d:g}' for d in dims)}")
        return _tessellate(kind, dims, axis)

    def shared(self, prim: Usd.Prim, uv_name: str | None, read: Callable[[], tuple[np.ndarray, ...] | None],
               part: tuple[str, ...] = ()) -> tuple[np.ndarray, ...] | None:
        """The local geometry of ``prim`` (``read()``), read once per source prim: an instance proxy's source is
        its prim in the prototype (every instance of one prototype gets the same tuple), any other prim is its
        own source (a PointInstancer prototype walked for several instancers). ``uv_name``: the texture
        coordinate primvar read with it (a material bound outside the prototype may differ per instance);
        ``part``: the material subsets left out of it. :meth:`nodes` makes one ``TriangleMesh`` per tuple, so the
        Embree backend instances it."""
        source = prim.GetPrimInPrototype() if prim.IsInstanceProxy() else prim
        key = (str(source.GetPath()), uv_name, part)
        if key not in self._meshes:
            self._meshes[key] = read()
        return self._meshes[key]

    def corner_uvs(self, prim: Usd.Prim, name: str, counts: np.ndarray, indices: np.ndarray) -> np.ndarray | None:
        """(sum(counts), 2) texture coordinates of every face-vertex of a mesh from primvar ``name`` (flattened,
        any interpolation), or ``None`` (with a warning) when the mesh has no such primvar."""
        primvar = UsdGeom.PrimvarsAPI(prim).FindPrimvarWithInheritance(name)
        values = primvar.ComputeFlattened(self.time) if primvar and primvar.HasValue() else None
        if values is None or len(values) == 0:
            log.warning("%s: prim %s: its material has a texture but the mesh has no primvar %r of texture "
                        "coordinates; it keeps the flat albedo", self.path, prim.GetPath(), f"primvars:{name}")
            return None
        uv = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        if uv.shape[1] < 2 or not np.isfinite(uv[:, :2]).all():
            raise self.fail(prim, f"primvars:{name} must hold finite (u, v) texture coordinates")
        uv = uv[:, :2]
        interp = primvar.GetInterpolation()
        need = {UsdGeom.Tokens.faceVarying: indices.size, UsdGeom.Tokens.uniform: counts.size,
                UsdGeom.Tokens.constant: 1}.get(interp, int(indices.max()) + 1)
        if uv.shape[0] < need:
            raise self.fail(prim, f"primvars:{name} ({interp}) holds {uv.shape[0]} values but the mesh needs {need}")
        if interp == UsdGeom.Tokens.faceVarying:
            return uv[:indices.size]
        if interp == UsdGeom.Tokens.uniform:
            return uv[np.repeat(np.arange(counts.size), counts)]
        if interp == UsdGeom.Tokens.constant:
            return np.repeat(uv[:1], indices.size, axis=0)
        return uv[indices]  # vertex, varying

    # -- textures -------------------------------------------------------------------------------------------
    def input_value(self, shader: UsdShade.Shader, name: str) -> Any:
        """The value of a shader input, following connections to the material's interface inputs."""
        inp = shader.GetInput(name)
        if not inp:
            return None
        attrs = inp.GetValueProducingAttributes()
        for attr in attrs:
            if attr.HasAuthoredValue() or attr.Get() is not None:
                return attr.Get(self.time)
        return None

    def texture(self, prim: Usd.Prim) -> tuple[Texture, str] | None:
        """(texture, uv primvar name) of the UsdUVTexture driving the diffuseColor of the UsdPreviewSurface
        bound to ``prim``, or ``None`` (module docstring)."""
        material = _bound_material(prim)[0]
        if not material:
            return None
        surface = material.ComputeSurfaceSource()
        shader = surface[0] if isinstance(surface, tuple) else surface
        if not shader or shader.GetIdAttr().Get() != "UsdPreviewSurface":
            return None
        diffuse = shader.GetInput("diffuseColor")
        sources = diffuse.GetConnectedSources()[0] if diffuse else []
        if not sources:
            return None
        tex = UsdShade.Shader(sources[0].source.GetPrim())
        if tex.GetIdAttr().Get() != "UsdUVTexture":
            return None
        where = f"{self.path}: shader {tex.GetPath()}"
        asset = self.input_value(tex, "file")
        if asset is None or not asset.path:
            raise SceneError(f"{where}: UsdUVTexture has no inputs:file; give the image file")
        resolved = asset.resolvedPath or ""
        if not resolved:
            layer_dir = Path(tex.GetPrim().GetStage().GetRootLayer().realPath or self.path).parent
            raise SceneError(f"{where}: texture file {asset.path!r} does not exist (looked for "
                             f"{layer_dir / asset.path}); fix inputs:file or add the image")
        varname = "st"
        st = tex.GetInput("st")
        st_sources = st.GetConnectedSources()[0] if st else []
        if st_sources:
            reader = UsdShade.Shader(st_sources[0].source.GetPrim())
            name = self.input_value(reader, "varname")
            if name:
                varname = str(name)
        params = (resolved, str(self.input_value(tex, "sourceColorSpace") or "auto"),
                  tuple(self.input_value(tex, "scale") or (1.0, 1.0, 1.0, 1.0))[:3],
                  tuple(self.input_value(tex, "bias") or (0.0, 0.0, 0.0, 0.0))[:3],
                  *(self.wrap(tex, w, where) for w in ("wrapS", "wrapT")))
        if params not in self._textures:
            self._textures[params] = read_texture(resolved, color_space=params[1], scale=params[2], bias=params[3],
                                                  wrap_s=params[4], wrap_t=params[5], where=where)
        return self._textures[params], varname

    def wrap(self, shader: UsdShade.Shader, name: str, where: str) -> str:
        mode = str(self.input_value(shader, name) or "useMetadata")
        if mode == "useMetadata":
            return "repeat"
        if mode not in WRAP_MODES:
            raise SceneError(f"{where}: inputs:{name} = {mode!r}; expected one of {sorted(WRAP_MODES)} or useMetadata")
        return mode

    # -- the walk -------------------------------------------------------------------------------------------
    def walk(self, prim: Usd.Prim, parent: int, inh: _Inherited, chain: tuple[np.ndarray | XformOp, ...],
             base: Usd.Prim | None, out: list[_Record]) -> None:
        """Append records for ``prim`` and its subtree. ``base`` None: world transforms, absolute paths and
        animation tracks (``chain``: the parent's world transform as factors); else transforms and paths
        relative to ``base`` (a PointInstancer prototype's parent).
        """
        self.current_prim = prim
        if prim.GetTypeName() and not prim.IsA(UsdGeom.Imageable):
            return  # materials, shaders, geom subsets, ...
        rendered = True
        if prim.IsA(UsdGeom.Imageable):
            img = UsdGeom.Imageable(prim)
            if img.GetVisibilityAttr().Get(self.time) == UsdGeom.Tokens.invisible:
                return
            rendered = img.ComputePurpose() not in (UsdGeom.Tokens.guide, UsdGeom.Tokens.proxy)
        inh = self.resolve(prim, inh)
        if base is None and prim.IsA(UsdGeom.Xformable):
            own, resets = self.local_factors(prim)
            chain = own if resets else chain + own
        path = str(prim.GetPath()) if base is None else str(prim.GetPath().MakeRelativePath(base.GetPath()))
        record = _Record(path, parent, self.matrix(prim, base, self.start), inh.label or prim.GetName(),
                         self.material(prim, inh))
        if base is None and any(isinstance(f, XformOp) for f in chain):
            record.track = chain
        subsets = self.material_subsets(prim) if rendered and prim.IsA(UsdGeom.Mesh) else []
        if rendered and prim.IsA(UsdGeom.Mesh):
            rest = None
            if subsets:
                rest = np.ones(UsdGeom.Mesh(prim).GetFaceCount(self.time), dtype=bool)
                for _, faces in subsets:
                    rest[faces] = False
            self.read_mesh(record, prim, prim, rest, tuple(sorted(str(s.GetName()) for s, _ in subsets)))
        elif rendered and prim.GetTypeName() in _IMPLICIT_TYPES:
            record.mesh = self.shared(prim, None, lambda: self.implicit(prim))
        elif rendered and prim.GetTypeName() in _UNREAD_SURFACES:
            log.warning("%s: prim %s: %s surfaces are not read (it is left out); convert it to a Mesh", self.path,
                        prim.GetPath(), prim.GetTypeName())
        index = len(out)
        out.append(record)
        for subset, faces in subsets:
            sub_inh = self.resolve(subset, inh)
            sub = _Record(f"{path}/{subset.GetName()}", index, record.matrix, sub_inh.label or subset.GetName(),
                          self.material(subset, sub_inh), track=record.track)
            keep = np.zeros(rest.size, dtype=bool)
            keep[faces] = True
            self.read_mesh(sub, subset, prim, keep, ())
            out.append(sub)
        if prim.IsA(UsdGeom.PointInstancer):
            if rendered:
                self.instances(prim, index, inh, out)
            else:
                out.pop()
            return
        for child in prim.GetFilteredChildren(_PREDICATE if base is None else _PROTOTYPE_PREDICATE):
            self.walk(child, index, inh, chain, base, out)
        if (prim.GetTypeName() in ("", "Scope") or not rendered) and len(out) == index + 1:
            # a typeless prim or Scope holding nothing imageable (e.g. a "Looks" scope of materials), or a guide or
            # proxy prim without a rendered descendant
            out.pop()

    def instances(self, prim: Usd.Prim, index: int, inh: _Inherited, out: list[_Record]) -> None:
        """Records for every (unmasked) instance of a PointInstancer and its prototype's subtree."""
        inst = UsdGeom.PointInstancer(prim)
        protos = []
        for target in inst.GetPrototypesRel().GetForwardedTargets():
            proto = self.stage.GetPrimAtPath(target)
            if not proto:
                raise self.fail(prim, f"prototype {target} does not exist")
            protos.append(proto)
        proto_index = np.asarray(inst.GetProtoIndicesAttr().Get(self.time) or [], dtype=np.int64)
        if proto_index.size == 0:
            return
        if proto_index.min() < 0 or proto_index.max() >= len(protos):
            raise self.fail(prim, f"protoIndices hold values {int(proto_index.min())}..{int(proto_index.max())} "
                                  f"but there are {len(protos)} prototypes")
        xforms = inst.ComputeInstanceTransformsAtTime(self.time, self.time, UsdGeom.PointInstancer.ExcludeProtoXform,
                                                      UsdGeom.PointInstancer.IgnoreMask)
        if len(xforms) != proto_index.size:
            raise self.fail(prim, f"positions/orientations/scales do not match the {proto_index.size} protoIndices")
        inst_mats = np.transpose(np.array(xforms, dtype=np.float64).reshape(-1, 4, 4), (0, 2, 1))
        mask = np.asarray(inst.ComputeMaskAtTime(self.time), dtype=bool)
        visible = np.nonzero(mask)[0] if mask.size else np.arange(proto_index.size)
        owner = out[index]
        templates = [self.template(prim, p, inh) for p in protos]
        for k in visible:
            k = int(k)
            placed = matmul_fixed(owner.matrix, inst_mats[k])
            inst_index = len(out)
            track = None
            if owner.track is not None:
                track = owner.track + (inst_mats[k],)
            out.append(_Record(f"{owner.path}/instance_{k}", index, placed, owner.label, owner.material, track=track))
            first = len(out)
            for rec in templates[int(proto_index[k])]:
                out.append(dataclasses.replace(
                    rec, path=f"{owner.path}/instance_{k}/{rec.path}",
                    parent=inst_index if rec.parent < 0 else first + rec.parent, matrix=matmul_fixed(placed, rec.matrix),
                    track=None if track is None else track + (rec.matrix,)))

    def template(self, instancer: Usd.Prim, proto: Usd.Prim, inh: _Inherited) -> list[_Record]:
        """Records of a prototype subtree relative to the prototype's parent, with the instancer's inherited
        materials and labels (parent indices local, -1 for the prototype root)."""
        key = f"{instancer.GetPath()} {proto.GetPath()}"
        if key not in self._templates:
            recs: list[_Record] = []
            self.walk(proto, -1, inh, (), proto.GetParent(), recs)
            self._templates[key] = recs
        return self._templates[key]

    # -- output ---------------------------------------------------------------------------------------------
    def nodes(self) -> list[Node]:
        records: list[_Record] = []
        for prim in self.stage.GetPseudoRoot().GetFilteredChildren(_PREDICATE):
            self.walk(prim, -1, _Inherited(), (), None, records)
        c3 = self.conv[:3, :3]
        nodes: list[Node] = []
        meshes: dict[int, TriangleMesh] = {}  # one per source geometry tuple (records sharing it share the mesh)
        for rec in records:
            if not np.isfinite(rec.matrix).all():
                raise SceneError(f"{self.path}: prim {rec.path}: its world transform holds non-finite values; fix "
                                 f"its or its ancestors' xformOps (an instance_<k>: the PointInstancer's "
                                 f"positions, orientations or scales)")
            mesh = None
            if rec.mesh is not None:
                if id(rec.mesh) not in meshes:
                    meshes[id(rec.mesh)] = TriangleMesh(matmul_fixed(rec.mesh[0], c3.T), rec.mesh[1],
                                                        rec.mesh[2] if len(rec.mesh) > 2 else None)
                mesh = meshes[id(rec.mesh)]
            node = Node(path=rec.path, transform=matmul_fixed(matmul_fixed(self.conv, rec.matrix), self.conv_inv), mesh=mesh,
                        material=rec.material, label=rec.label)
            if rec.track is not None:
                try:
                    node.track = TransformTrack.from_factors([self.conv, *rec.track, self.conv_inv])
                except SceneError as exc:
                    raise SceneError(f"{self.path}: prim {rec.path}: time-sampled transform: {exc}") from None
            if rec.parent >= 0:
                node.parent = nodes[rec.parent]
                node.parent.children.append(node)
            nodes.append(node)
        if not any(n.mesh is not None and n.mesh.num_triangles > 0 for n in nodes):
            raise SceneError(f"{self.path}: no geometry: the stage holds no visible Mesh, PointInstancer prototype "
                             f"or implicit prim ({', '.join(_IMPLICIT_TYPES)}) with faces")
        return nodes

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"up_axis": self.up_axis, "meters_per_unit": self.meters_per_unit,
                                "start_time": self.start / self.tcps, "time_codes_per_second": self.tcps}
        data = self.stage.GetRootLayer().customLayerData.get("oceansim")
        if data is None:
            return meta
        if not isinstance(data, dict):
            raise SceneError(f"{self.path}: customLayerData 'oceansim' must be a dictionary")
        for key in sorted(set(data) - {"description", "suggested_pose", "surface_z"}):
            meta[key] = data[key]
        if "description" in data:
            meta["description"] = str(data["description"])
        if "suggested_pose" in data:
            pose = np.asarray(list(data["suggested_pose"]), dtype=np.float64)
            if pose.shape != (7,) or not np.isfinite(pose).all() or np.linalg.norm(pose[3:]) == 0:
                raise SceneError(f"{self.path}: customLayerData oceansim.suggested_pose must be 7 finite numbers "
                                 f"[px, py, pz, qx, qy, qz, qw] with a non-zero quaternion")
            pose[3:] /= np.linalg.norm(pose[3:])
            meta["suggested_pose"] = pose.tolist()
        if "surface_z" in data:
            z = float(data["surface_z"])
            if not math.isfinite(z):
                raise SceneError(f"{self.path}: customLayerData oceansim.surface_z must be finite")
            meta["surface_z"] = z
        return meta


def _error_text(exc: Exception) -> str:
    """The message of a USD error. Its text may quote bytes of a corrupt file that are not UTF-8, which pxr cannot
    decode (``str()`` raises even on the error's ``commentary``): those errors are named by their error code."""
    parts = []
    for arg in exc.args:
        try:
            parts.append(str(arg))
        except UnicodeDecodeError:
            code = getattr(arg, "errorCodeString", "") or type(arg).__name__
            parts.append(f"{code}: the parser's message quotes bytes that are not UTF-8 (a corrupt or binary file)")
    return " ".join(parts) or type(exc).__name__


def open_stage(path: Path) -> Usd.Stage:
    """Open a USD stage; ``SceneError`` naming the file when it is missing or not USD."""
    if not path.is_file():
        raise SceneError(f"{path}: no such file")
    try:
        stage = Usd.Stage.Open(str(path))
    except Tf.ErrorException as exc:
        msg = " ".join(_error_text(exc).split())
        raise SceneError(f"{path}: not a readable USD file ({msg[:300]})") from None
    if stage is None:
        raise SceneError(f"{path}: not a readable USD file")
    return stage


def check_composition(path: Path, stage: Usd.Stage, missing_references: str = "error") -> None:
    """Report the stage's missing references, payloads, sublayers and referenced prims (asset paths that do
    not resolve, prims not in the referenced file): ``SceneError`` naming each prim and asset for
    ``missing_references="error"``, a logged warning for ``"warn"`` (the stage then loads without them)."""
    if missing_references not in MISSING_REFERENCE_POLICIES:
        raise ConfigError(f"missing_references must be one of {list(MISSING_REFERENCE_POLICIES)}, "
                          f"got {missing_references!r}")
    missing = [e for e in stage.GetCompositionErrors() if isinstance(e, _MISSING_ASSET_ERRORS)]
    if not missing:
        return
    lines = [f"prim {e.rootSite.path}: {' '.join(str(e).split())}" for e in missing]
    if missing_references == "warn":
        for line in lines:
            log.warning("%s: %s (loaded without it)", path, line)
        return
    raise SceneError(f"{path}: {len(lines)} missing reference(s): " + "; ".join(lines) + " -- fix the asset "
                     "paths, or load with missing_references=\"warn\" (oceansim-py render/describe: "
                     "--missing-references warn) to drop what they would add")


def read_usd(path: Path, materials: MaterialTable,
             missing_references: str = "error") -> tuple[list[Node], dict[str, Any]]:
    """Read a USD stage into scene nodes (world frame Z up, metres) and metadata; see the module docstring.
    ``missing_references``: ``"error"`` (default) refuses a stage whose references, payloads or sublayers do
    not resolve, ``"warn"`` logs them and loads the rest (see :func:`check_composition`)."""
    path = Path(path)
    stage = open_stage(path)
    check_composition(path, stage, missing_references)
    reader = _StageReader(path, stage, materials)
    try:
        return reader.nodes(), reader.metadata()
    except Tf.ErrorException as exc:  # an authored value pxr itself refuses (e.g. an xformOp of the wrong type)
        msg = " ".join(_error_text(exc).split())
        raise SceneError(f"{path}: USD refused a value of the stage ({msg[:400]}); fix the prim it names") from None
    except (TypeError, ValueError) as exc:  # an attribute authored with a type or shape its schema does not have
        where = f"prim {reader.current_prim.GetPath()}" if reader.current_prim is not None else "the stage"
        raise SceneError(f"{path}: {where}: an attribute holds a value of the wrong type or shape "
                         f"({type(exc).__name__}: {exc}); author it with its schema's type") from None


__all__ = ["IMPLICIT_SEGMENTS", "MISSING_REFERENCE_POLICIES", "SPHERE_SUBDIVISIONS", "check_composition", "open_stage",
           "read_usd", "triangulate_polygons"]
