"""Plain mesh files (.obj, .stl, .ply, .off, .glb, .gltf) -> scene nodes, through trimesh.

Mesh files carry no up axis or unit: they are taken as Z-up metres unless ``up_axis="Y"`` is given (glTF is Y-up by
specification, so .glb/.gltf default to Y; OBJ, STL, PLY and OFF have no convention and are assumed Z-up).
``meters_per_unit`` scales all axes; ``scale`` (one factor or one per world axis x, y, z, applied after the up-axis
conversion) multiplies it, e.g. ``scale=(1, 1, 2)`` doubles the height. A file holding a scene graph (glTF,
multi-object OBJ) gives one node per geometry instance, with its world transform from the file's graph; each
primitive of a glTF node holding several is a node labelled with that glTF node's name.

OBJ, PLY and OFF faces of 4 or more vertices that a fan would not cover exactly (concave ones) are triangulated in
their plane (``triangulate_polygons``): trimesh fans every face. An OBJ file is rewritten before trimesh reads it (only
those faces); a PLY or OFF geometry holding such a face gets its polygons' triangles in file order, fanned as before
where a fan covers the face (a PLY whose per-face texture coordinates made trimesh renumber its vertices is read as
trimesh reads it). A binary PLY whose faces have different corner counts, which trimesh cannot read, is read here
(vertex positions and faces only).

Materials: ``material`` (a table entry) for every geometry; without it, a geometry whose file material (glTF
material name, OBJ ``usemtl``) is named like a table entry (case-insensitive, as a USD binding's material name) gets
that entry, any other the table's ``default``.

Textures: a geometry with texture coordinates and a diffuse image (OBJ ``map_Kd`` of its ``.mtl``; glTF
``baseColorTexture``, multiplied by ``baseColorFactor``) gets it as its material's texture (scene/textures.py;
the image replaces the table material's albedo for the camera, the acoustic reflectivity stays). An OBJ whose
``.mtl`` names a ``map_Kd`` file that does not exist is a ``SceneError`` naming both.
"""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import numpy as np

from oceansim_py.errors import SceneError
from oceansim_py.poses import matmul_fixed
from oceansim_py.scene.graph import Node, TriangleMesh
from oceansim_py.scene.materials import Material, MaterialTable, default_material, material_named
from oceansim_py.scene.textures import Texture, obj_texture_files, texture_from_image

MESH_SUFFIXES = {".obj", ".stl", ".ply", ".glb", ".gltf", ".off"}

#: Rotation taking a Y-up frame to Z-up (x stays, y -> z, z -> -y).
Y_UP_TO_Z_UP = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])


def sanitize_name(name: str) -> str:
    """``name`` as a valid node-path element: every character other than a letter, digit or ``_`` becomes ``_``,
    and a name that is empty or starts with a digit gets a leading ``_``."""
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return out if out and not out[0].isdigit() else f"_{out}"


def read_mesh_file(path: Path, materials: MaterialTable, up_axis: str | None = None,
                   meters_per_unit: float = 1.0, material: str | None = None,
                   scale: float | tuple[float, float, float] = 1.0) -> list[Node]:
    """Nodes for every geometry in a mesh file (see module docstring). ``material`` names a table entry
    applied to all nodes; without it a geometry whose file material (glTF material, OBJ ``usemtl``) is named like
    a table entry (case-insensitive) gets that entry, any other the table's ``default``."""
    import trimesh

    if not path.is_file():
        raise SceneError(f"{path}: no such file")
    if not (np.isfinite(meters_per_unit) and meters_per_unit > 0):
        raise SceneError(f"{path}: meters_per_unit must be > 0, got {meters_per_unit}")
    if path.suffix.lower() == ".obj":
        for lib, image in obj_texture_files(path):
            if not image.is_file():
                raise SceneError(f"{path}: material library {lib} names texture file {image} (map_Kd), which does "
                                 f"not exist; fix the .mtl or add the image")
    suffix = path.suffix.lower()
    try:
        polygons = _obj_polygons_triangulated(path) if suffix == ".obj" else None
        loaded = _off_scene(path) if suffix == ".off" else None
        if polygons is not None:
            loaded = trimesh.load(io.BytesIO(polygons), file_type="obj", force="scene", process=False,
                                  resolver=trimesh.resolvers.FilePathResolver(str(path)))
        elif loaded is None:
            loaded = trimesh.load(str(path), force="scene", process=False)
    except Exception as exc:  # trimesh raises many types for unreadable files
        loaded = _ply_binary_ragged(path) if suffix == ".ply" else None
        if loaded is None:
            raise SceneError(f"{path}: not a readable mesh file ({type(exc).__name__}: {exc})") from exc
    up = (up_axis or ("Y" if path.suffix.lower() in {".glb", ".gltf"} else "Z")).upper()
    if up not in ("Y", "Z"):
        raise SceneError(f"{path}: up_axis must be 'Y' or 'Z', got {up_axis!r}")
    axes = np.broadcast_to(np.asarray(scale, dtype=np.float64), (3,)) if np.ndim(scale) == 0 else \
        np.asarray(scale, dtype=np.float64)
    if axes.shape != (3,) or not (np.isfinite(axes).all() and (axes > 0).all()):
        raise SceneError(f"{path}: scale must be one positive factor or three (x, y, z), got {scale!r}")
    conv = np.diag([*(meters_per_unit * axes), 1.0])
    if up == "Y":
        conv = matmul_fixed(conv, Y_UP_TO_Z_UP)
    mat = default_material(materials)
    if material is not None:
        mat = material_named(materials, material, str(path))
    textures: dict[int, Texture] = {}
    meshes: dict[str, TriangleMesh] = {}
    root_path = "/" + sanitize_name(path.stem)
    root = Node(path=root_path, material=mat, label=path.stem)
    nodes = [root]
    for i, node_name in enumerate(loaded.graph.nodes_geometry):
        transform, geom_name = loaded.graph[node_name]
        geom = loaded.geometry[geom_name]
        if not hasattr(geom, "faces") or len(geom.faces) == 0:
            continue
        verts = np.asarray(geom.vertices, dtype=np.float64)
        if suffix == ".ply" and verts.ndim == 2 and verts.shape[1] == 3:
            refit = _polygons_retriangulated(verts, _ply_polygons(geom))
            if refit is not None:
                geom.faces = refit
        faces = np.asarray(geom.faces, dtype=np.int64)
        if verts.ndim != 2 or verts.shape[1] != 3 or faces.ndim != 2 or faces.shape[1] != 3:
            raise SceneError(f"{path}: geometry {geom_name!r} has vertices of shape {verts.shape} and faces of shape "
                             f"{faces.shape}; expected (N, 3) points and (M, 3) triangles (is every vertex x y z?)")
        if not np.isfinite(verts).all():
            raise SceneError(f"{path}: geometry {geom_name!r} holds non-finite vertex coordinates")
        if faces.size and (faces.min() < 0 or faces.max() >= verts.shape[0]):
            raise SceneError(f"{path}: geometry {geom_name!r} has face indices out of range "
                             f"(0..{verts.shape[0] - 1})")
        texture, uvs = _texture_of(geom, f"{path}: geometry {geom_name!r}", textures)
        if geom_name not in meshes:  # a geometry placed by several graph nodes: one mesh, instanced
            meshes[geom_name] = TriangleMesh(verts, faces, uvs)
        name = _gltf_node_name(loaded.graph, str(node_name)) if suffix in (".glb", ".gltf") else str(node_name)
        node = Node(path=f"{root_path}/{sanitize_name(name)}_{i}",
                    transform=matmul_fixed(conv, transform),
                    mesh=meshes[geom_name],
                    material=_file_material(geom, materials, mat, texture) if material is None else
                    mat if texture is None else dataclasses.replace(mat, texture=texture),
                    label=name, parent=root)
        root.children.append(node)
        nodes.append(node)
    if len(nodes) == 1:
        raise SceneError(f"{path}: the file holds no triangle geometry")
    return nodes


_RANDOM_PRIMITIVE_SUFFIX = re.compile(r"_[0-9a-f]{6}")


def _gltf_node_name(graph: object, node_name: str) -> str:
    """The glTF node's name for a trimesh graph node: trimesh places each primitive of a node holding several as a
    child named ``<node>_<6 random hex digits>`` (other names on every load); such a child is given its parent's
    name, so paths and labels are the same on every load."""
    parent = graph.transforms.parents.get(node_name)
    if isinstance(parent, str) and node_name.startswith(parent) and \
            _RANDOM_PRIMITIVE_SUFFIX.fullmatch(node_name[len(parent):]):
        return parent
    return node_name


_OBJ_POLYGON = re.compile(rb"(?m)^[ \t]*f([ \t]+[^ \t\r\n]+){4}")


def _fan_misfits(points: np.ndarray, counts: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The polygons ``counts`` (F,) corners each, flat corner vertex ids ``ids`` into ``points`` (V, 3), triangulated
    in their planes (:func:`oceansim_py.scene.usd.triangulate_polygons`): (corners (T, 3) positions in ``ids``,
    owner (T,) polygon of each triangle, refit (F,) bool: the polygons whose triangles are not the fan from their
    first corner, i.e. that a fan would not cover exactly, such as a concave one). Polygons naming a vertex that
    does not exist are never refit."""
    from oceansim_py.scene.usd import triangulate_polygons

    bad_corner = (ids < 0) | (ids >= points.shape[0])
    starts = np.cumsum(counts) - counts
    bad = np.add.reduceat(bad_corner.astype(np.int64), starts) > 0 if counts.size else np.zeros(0, dtype=bool)
    corners = triangulate_polygons(points[np.clip(ids, 0, points.shape[0] - 1)], counts, np.arange(ids.size))
    owner = np.searchsorted(starts, corners[:, 0], side="right") - 1
    fan = (corners[:, 0] == starts[owner]) & (corners[:, 2] == corners[:, 1] + 1)
    refit = (np.bincount(owner[fan], minlength=counts.size) != counts - 2) & ~bad
    return corners, owner, refit


def _obj_polygons_triangulated(path: Path) -> bytes | None:
    """The OBJ file's bytes with each face of 4 or more vertices that a fan from its first vertex would not cover
    exactly (a concave face: trimesh fans every face, covering its notch) replaced by the triangles of
    :func:`oceansim_py.scene.usd.triangulate_polygons` (in the face's plane), each keeping its corners' ``v/vt/vn``
    references; ``None`` when there is no such face. A face naming a vertex that does not exist is left for trimesh
    to handle."""
    data = path.read_bytes()
    if not _OBJ_POLYGON.search(data):
        return None
    lines = data.split(b"\n")
    coords: list[bytes] = []
    face_lines, counts, defined, words = [], [], [], []  # per face: line, corners, vertices defined before it
    for k, line in enumerate(lines):
        split = line.split()
        if len(split) >= 4 and split[0] == b"v":
            coords += split[1:4]
        elif len(split) > 4 and split[0] == b"f":
            face_lines.append(k)
            counts.append(len(split) - 1)
            defined.append(len(coords) // 3)
            words += split[1:]
    try:
        positions = np.array(coords).astype(np.float64).reshape(-1, 3)
        ids = np.array([w.split(b"/", 1)[0] for w in words]).astype(np.int64)
    except ValueError:
        return None  # a malformed file: trimesh reports it
    if positions.shape[0] == 0:
        return None
    counts = np.array(counts)
    ids = np.where(ids > 0, ids - 1, np.repeat(defined, counts) + ids)
    corners, owner, refit = _fan_misfits(positions, counts, ids)
    if not refit.any():
        return None
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(counts.size + 1))
    for j in np.nonzero(refit)[0]:  # a face whose triangles all had zero area becomes an empty line
        tris = corners[order[bounds[j]:bounds[j + 1]]]
        lines[face_lines[j]] = b"\n".join(b"f " + b" ".join(words[c] for c in tri) for tri in tris)
    return b"\n".join(lines)


def _polygons_retriangulated(vertices: np.ndarray, polygons: tuple[np.ndarray, np.ndarray] | None,
                             every: bool = False) -> np.ndarray | None:
    """(T, 3) triangles of a PLY or OFF geometry's ``polygons`` ((F,) corners per polygon, their flat vertex ids, in
    file order) when one of them is a polygon that a fan would not cover exactly (a concave one, which trimesh fans,
    covering its notch): every polygon in file order, fanned from its first corner unless it is such a polygon,
    which gets :func:`oceansim_py.scene.usd.triangulate_polygons`'s triangles in its plane (``every``: whether or not
    there is such a polygon). ``None`` (keep trimesh's faces) when there is none, when every polygon is a triangle,
    or when a polygon has fewer than 3 corners or names a vertex that does not exist."""
    if polygons is None or polygons[0].size == 0:
        return None
    counts, ids = polygons
    if (counts <= 3).all() or counts.min() < 3 or ids.min() < 0 or ids.max() >= vertices.shape[0]:
        return None
    corners, owner, refit = _fan_misfits(vertices, counts, ids)
    if not (every or refit.any()):
        return None
    return ids[corners[np.argsort(owner, kind="stable")]]


def _ply_polygons(geom: object) -> tuple[np.ndarray, np.ndarray] | None:
    """(corners per polygon, flat vertex ids) of the faces, in file order, that trimesh's PLY reader kept in
    ``metadata['_ply_raw']``, or ``None`` when it renumbered the vertices (per-face texture coordinates) or kept
    no faces."""
    raw = getattr(geom, "metadata", {}).get("_ply_raw")
    try:
        vertex_count = int(raw["vertex"]["length"])
        data = raw["face"]["data"]
    except (TypeError, KeyError):
        return None
    if vertex_count != len(getattr(geom, "vertices", ())):
        return None
    if isinstance(data, dict):
        faces = next((data[k] for k in ("vertex_indices", "vertex_index") if k in data), None)
    elif isinstance(data, np.ndarray) and data.dtype.names:
        name = next((k for k in data.dtype.names if k in ("vertex_indices", "vertex_index")), data.dtype.names[0])
        faces = data[name]["f1"] if data[name].dtype.names else data[name]
    else:
        faces = data
    if faces is None or len(faces) == 0:
        return None
    if isinstance(faces, np.ndarray) and faces.dtype != object and faces.ndim == 2:
        return np.full(faces.shape[0], faces.shape[1], dtype=np.int64), faces.astype(np.int64).reshape(-1)
    counts = np.fromiter((len(f) for f in faces), dtype=np.int64, count=len(faces))
    return counts, np.concatenate([np.asarray(f, dtype=np.int64).reshape(-1) for f in faces])


_PLY_TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2",
              "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
              "float": "f4", "float32": "f4", "double": "f8", "float64": "f8"}


def _ply_binary_ragged(path: Path) -> object | None:
    """A ``trimesh.Scene`` of a binary PLY whose faces have different corner counts (trimesh's reader refuses
    them: it takes every list to be as long as the first), named after the file as trimesh names it: the vertices'
    x, y, z and each face's ``vertex_indices`` (or ``vertex_index``) list, triangulated by
    :func:`_polygons_retriangulated`; other properties (colours, normals, texture coordinates) are not read.
    ``None`` when the file is not such a PLY (an element before the faces with a list, a face with a second list,
    a header or body that does not parse)."""
    import trimesh

    data = path.read_bytes()
    end = data.find(b"end_header")
    if not data.startswith(b"ply") or end < 0:
        return None
    body = data.index(b"\n", end) + 1
    header = data[:end].decode("ascii", "replace").split("\n")
    fmt = next((line.split()[1] for line in header if line.startswith("format")), "")
    if fmt not in ("binary_little_endian", "binary_big_endian"):
        return None
    order = "<" if fmt == "binary_little_endian" else ">"
    elements: list[tuple[str, int, list[list[str]]]] = []
    try:
        for line in header:
            words = line.split()
            if words[:1] == ["element"]:
                elements.append((words[1], int(words[2]), []))
            elif words[:1] == ["property"] and elements:
                elements[-1][2].append(words[1:])
        pos, vertices, counts, ids = body, None, None, None
        for name, count, props in elements:
            lists = [k for k, prop in enumerate(props) if prop[0] == "list"]
            if name == "vertex" and not lists:
                dtype = np.dtype([(prop[1], order + _PLY_TYPES[prop[0]]) for prop in props])
                table = np.frombuffer(data, dtype, count, pos)
                vertices = np.stack([table[c].astype(np.float64) for c in "xyz"], axis=1)
                pos += dtype.itemsize * count
            elif name == "face" and len(lists) == 1 and props[lists[0]][3] in ("vertex_indices", "vertex_index"):
                k = lists[0]
                before = sum(np.dtype(_PLY_TYPES[prop[0]]).itemsize for prop in props[:k])
                after = sum(np.dtype(_PLY_TYPES[prop[0]]).itemsize for prop in props[k + 1:])
                count_type = np.dtype(order + _PLY_TYPES[props[k][1]])
                id_type = np.dtype(order + _PLY_TYPES[props[k][2]])
                counts, starts = np.empty(count, np.int64), np.empty(count, np.int64)
                byte = count_type == np.dtype("u1")  # the usual count type: read without numpy
                for f in range(count):  # each face's length is only known once the previous one is read
                    n = data[pos + before] if byte else int(np.frombuffer(data, count_type, 1, pos + before)[0])
                    counts[f], starts[f] = n, pos + before + count_type.itemsize
                    pos = starts[f] + n * id_type.itemsize + after
                within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
                offsets = np.repeat(starts, counts) + within * id_type.itemsize
                raw = np.frombuffer(data, np.uint8)[offsets[:, None] + np.arange(id_type.itemsize)]
                ids = raw.copy().view(id_type).reshape(-1).astype(np.int64)
            elif not lists:
                pos += count * sum(np.dtype(_PLY_TYPES[prop[0]]).itemsize for prop in props)
            else:
                return None
    except (KeyError, IndexError, ValueError, TypeError):
        return None
    if vertices is None or counts is None:
        return None
    triangles = _polygons_retriangulated(vertices, (counts, ids), every=True)
    if triangles is None:
        return None
    scene = trimesh.Scene()
    scene.add_geometry(trimesh.Trimesh(vertices, triangles, process=False), geom_name=path.name,
                       node_name=path.name)
    return scene


def _off_scene(path: Path) -> object | None:
    """A ``trimesh.Scene`` of an OFF file, read as trimesh's OFF reader reads it (comments stripped, the first 3
    numbers of a vertex line, each face line's count and corners), its one geometry and node named after the file as
    trimesh names them, with trimesh's triangles in trimesh's order unless a polygon needs triangles of its own: one
    that a fan would not cover exactly (concave), or polygons of more than 4 corners mixed with other sizes (which
    trimesh's reader cannot read), which give every polygon's triangles in file order
    (:func:`_polygons_retriangulated`). ``None`` when the file cannot be read this way or has a face of fewer than 3
    corners (trimesh then reads or reports it)."""
    import trimesh
    from trimesh.geometry import triangulate_quads
    from trimesh.util import comment_strip, decode_text

    try:
        text = comment_strip(decode_text(path.read_bytes())).strip()
        raw = re.split("(COFF|OFF)", text, maxsplit=1)[2]
        lines = [line.split() for line in raw.splitlines() if line.strip()]
        vertex_count, face_count = (int(v) for v in lines[0][:2])
        face_lines = lines[vertex_count + 1:vertex_count + face_count + 1]
        counts = np.array([int(line[0]) for line in face_lines], dtype=np.int64)
        vertices = np.array([float(v) for line in lines[1:vertex_count + 1] for v in line[:3]]).reshape(-1, 3)
        ids = np.array([int(w) for line, n in zip(face_lines, counts.tolist()) for w in line[1:n + 1]],
                       dtype=np.int64)
    except (ValueError, IndexError):
        return None
    if vertices.shape[0] != vertex_count or counts.size == 0 or counts.min() < 3 or ids.size != counts.sum():
        return None
    every = counts.max() > 4 and counts.min() != counts.max()
    triangles = _polygons_retriangulated(vertices, (counts, ids), every=bool(every))
    if triangles is None:
        uniform = counts.min() == counts.max()
        triangles = triangulate_quads(ids.reshape(counts.size, -1) if uniform else
                                      np.split(ids, np.cumsum(counts)[:-1]))
    scene = trimesh.Scene()
    scene.add_geometry(trimesh.Trimesh(vertices, triangles, process=False), geom_name=path.name,
                       node_name=path.name)
    return scene


def _file_material(geom: object, table: MaterialTable, default: Material, texture: Texture | None) -> Material:
    """The material of a trimesh geometry when none is given: the table entry named by the file's material for it
    (glTF material name, OBJ ``usemtl``; case-insensitive), else ``default``, with ``texture`` if any."""
    name = getattr(getattr(getattr(geom, "visual", None), "material", None), "name", None)
    found = table.get(name) if isinstance(name, str) else None
    mat = found or default
    return mat if texture is None else dataclasses.replace(mat, texture=texture)


def _texture_of(geom: object, where: str, cache: dict[int, Texture]) -> tuple[Texture | None, np.ndarray | None]:
    """(texture, (F, 3, 2) corner uvs) of a trimesh geometry with texture coordinates and a diffuse image, else
    (None, None). Textures are shared between geometries that share a trimesh material."""
    visual = getattr(geom, "visual", None)
    uv = getattr(visual, "uv", None) if getattr(visual, "kind", None) == "texture" else None
    material = getattr(visual, "material", None)
    if uv is None or material is None:
        return None, None
    image = getattr(material, "baseColorTexture", None)
    factor = np.ones(3)
    if image is not None:
        base = getattr(material, "baseColorFactor", None)
        if base is not None:
            base = np.asarray(base).reshape(-1)[:3]
            # trimesh keeps the factor as uint8 RGBA colours (0..255); a float factor is already in 0..1
            factor = base / 255.0 if np.issubdtype(base.dtype, np.integer) else base.astype(np.float64)
    else:
        image = getattr(material, "image", None)
    if image is None:
        return None, None
    uv = np.asarray(uv, dtype=np.float64)
    faces = np.asarray(geom.faces, dtype=np.int64)
    if uv.ndim != 2 or uv.shape[1] < 2 or uv.shape[0] <= faces.max() or not np.isfinite(uv).all():
        return None, None
    if id(material) not in cache:
        cache[id(material)] = texture_from_image(image, f"{where} texture", factor)
    return cache[id(material)], uv[:, :2][faces]
