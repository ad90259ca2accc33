"""Collada (``.dae``) meshes -> scene nodes, through ``pycollada`` (optional extra ``gazebo``).

Every geometry instance of the document's default scene becomes one node, its triangles placed by the
instance's node transforms (pycollada's bound geometry). Triangle sets, polylists and polygons are read
(polygons triangulated in their plane by :func:`oceansim_py.scene.usd.triangulate_polygons`, so concave ones keep
their shape; faces of fewer than 3 vertices are dropped); lines and other primitives carry no surface and are
skipped.

Units and axes: vertices are multiplied by ``<asset><unit meter=...>`` (Collada's default is 1) and rotated
from the document's ``<up_axis>`` to Z up (Collada's default is ``Y_UP``): Y_UP maps (x, y, z) -> (x, -z, y),
X_UP maps (x, y, z) -> (-y, -z, x), Z_UP is left as is. Gazebo does the same, so a DAVE model looks the same.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from oceansim_py.errors import SceneError
from oceansim_py.poses import matmul_fixed
from oceansim_py.scene.graph import Node, TriangleMesh
from oceansim_py.scene.materials import Material, MaterialTable, default_material, material_named
from oceansim_py.scene.meshes import sanitize_name


#: Rotations taking a document's up axis to Z up (column vectors).
UP_AXIS_TO_Z_UP = {
    "Z_UP": np.eye(3),
    "Y_UP": np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]),
    "X_UP": np.array([[0.0, -1, 0], [0, 0, -1], [1, 0, 0]]),
}


def read_collada_meshes(path: Path) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(name, vertices (V, 3) m Z-up, triangles (F, 3))`` for each geometry instance of the document's scene.

    Raises ``SceneError`` for an unreadable document or one without triangles.
    """
    with warnings.catch_warnings():
        # pycollada builds its transforms with numpy.matrix, which numpy flags as pending deprecation
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return _read_collada_meshes(path)


def _read_collada_meshes(path: Path) -> list[tuple[str, np.ndarray, np.ndarray]]:
    try:
        import collada
    except ImportError:
        raise SceneError(f"{path}: reading Collada needs the 'pycollada' package; install the extra: "
                         f"pip install 'oceansim-py[gazebo]'") from None
    if not path.is_file():
        raise SceneError(f"{path}: no such file")
    try:
        doc = collada.Collada(str(path), ignore=[collada.common.DaeUnsupportedError,
                                                 collada.common.DaeBrokenRefError])
    except Exception as exc:  # pycollada raises DaeError subclasses, lxml/ElementTree errors, ...
        raise SceneError(f"{path}: not a readable Collada document ({type(exc).__name__}: {exc})") from exc
    unit = float(doc.assetInfo.unitmeter or 1.0)
    if not (np.isfinite(unit) and unit > 0):
        raise SceneError(f"{path}: <asset><unit meter> must be > 0, got {unit}")
    up = str(doc.assetInfo.upaxis or "Y_UP").upper()
    if up not in UP_AXIS_TO_Z_UP:
        raise SceneError(f"{path}: unknown <up_axis> {up!r}; expected one of {sorted(UP_AXIS_TO_Z_UP)}")
    conv = UP_AXIS_TO_Z_UP[up] * unit
    scene = doc.scene if doc.scene is not None else (doc.scenes[0] if len(doc.scenes) else None)
    out = []
    if scene is not None:
        for k, bound in enumerate(scene.objects("geometry")):
            verts, tris = [], []
            offset = 0
            for prim in bound.primitives():
                if not isinstance(prim, (collada.triangleset.BoundTriangleSet, collada.polylist.BoundPolylist)) \
                        or prim.vertex is None:
                    continue
                v = np.asarray(prim.vertex, dtype=np.float64).reshape(-1, 3)
                idx = _triangles(prim, collada, v, f"{path}: geometry {bound.original.id!r}")
                if idx.size == 0:
                    continue
                verts.append(v)
                tris.append(idx + offset)
                offset += v.shape[0]
            if not tris:
                continue
            v = matmul_fixed(np.concatenate(verts), conv.T)
            t = np.concatenate(tris)
            if not np.isfinite(v).all():
                raise SceneError(f"{path}: geometry {bound.original.id!r} holds non-finite vertex coordinates")
            out.append((f"{bound.original.id or 'geometry'}_{k}", v, t))
    if not out:
        raise SceneError(f"{path}: the Collada document holds no triangle geometry in its scene (only "
                         f"triangles, polylists and polygons instanced by a <visual_scene> node are read)")
    return out


def _triangles(prim: object, collada: object, vertices: np.ndarray, where: str) -> np.ndarray:
    """(T, 3) vertex indices of the triangles of a bound triangle set, polylist or polygons primitive (polygons
    triangulated in their plane, faces of fewer than 3 vertices dropped); ``SceneError`` naming ``where`` for
    indices out of range."""
    flat = np.asarray(prim.vertex_index, dtype=np.int64).reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= vertices.shape[0]):
        raise SceneError(f"{where} has vertex indices out of range")
    if isinstance(prim, collada.triangleset.BoundTriangleSet):
        return flat.reshape(-1, 3)
    from oceansim_py.scene.usd import triangulate_polygons

    spans = np.asarray(prim.polyindex, dtype=np.int64).reshape(-1, 2)
    counts = spans[:, 1] - spans[:, 0]
    keep = counts >= 3
    corners = np.concatenate([flat[a:b] for a, b in spans[keep]]) if keep.any() else flat[:0]
    return triangulate_polygons(vertices, counts[keep], corners)


def read_collada(path: Path, materials: MaterialTable, material: str | None = None) -> list[Node]:
    """Nodes for a Collada file: a root ``/<stem>`` and one child per geometry instance (module docstring).
    ``material`` names a table entry for every node (default: the table's ``default``)."""
    mat: Material = default_material(materials)
    if material is not None:
        mat = material_named(materials, material, str(path))
    root = Node(path="/" + sanitize_name(path.stem), material=mat, label=path.stem)
    nodes = [root]
    for name, verts, tris in read_collada_meshes(path):
        node = Node(path=f"{root.path}/{sanitize_name(name)}", mesh=TriangleMesh(verts, tris), material=mat,
                    label=path.stem, parent=root)
        root.children.append(node)
        nodes.append(node)
    return nodes
