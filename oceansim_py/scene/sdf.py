"""Gazebo SDFormat worlds and models (SDF 1.6-1.9, ``.sdf``/``.world``) -> scene nodes.

Parsed with the standard library's ``xml.etree.ElementTree`` (no external entities are resolved).

What is read:

- ``<world>`` (or a file whose root holds a ``<model>``): its ``<model>`` and ``<include>`` elements, nested
  models and includes inside models, ``<link>`` and their ``<visual>`` elements (collisions are not rendered).
- ``<include><uri>``: ``model://NAME[/sub/path]`` is looked up as ``<dir>/NAME`` in the search paths: the
  ``model_paths`` argument, then ``GZ_SIM_RESOURCE_PATH``, ``IGN_GAZEBO_RESOURCE_PATH``, ``GAZEBO_MODEL_PATH``
  and ``SDF_PATH`` (each a ``os.pathsep`` list), then the world file's folder. A model folder's
  ``model.config`` names its SDF file (``<sdf version=...>``; the highest version is taken), else
  ``model.sdf``. ``file://`` URIs, absolute and relative paths (relative to the including file) work too;
  ``http(s)://`` (Fuel) URIs are refused: download the model and add its folder to ``model_paths``.
  The include's ``<name>`` and ``<pose>`` replace the model's own; its ``<placement_frame>`` (or a model's
  ``placement_frame`` attribute, SDF 1.8) names the model's link or frame that the pose places instead of the
  model frame.
- Poses: ``<pose relative_to="F" degrees="true" rotation_format="euler_rpy|quat_xyzw">``. Without
  ``relative_to`` a model's or link's pose is relative to its parent (world or model frame), a visual's to
  its link, a ``<frame>``'s to its ``attached_to`` (default: the parent). ``F`` may name a model, link or
  frame of the same scope, ``__model__``, ``world``, or a nested element as ``model::link``. Euler angles
  are roll, pitch, yaw about the fixed x, y, z axes (R = Rz(yaw) Ry(pitch) Rx(roll)), radians unless
  ``degrees="true"``.
- Geometry: ``box`` (size), ``cylinder`` (radius, length along z), ``sphere`` (radius), ``capsule`` and
  ``ellipsoid`` (SDF 1.8+), ``plane`` (finite: ``size`` w x h, centred, facing ``normal``), ``mesh``
  (``uri``, per-axis ``scale`` applied in the mesh's frame after its unit and up-axis conversion,
  ``submesh/name`` picks one geometry, ``submesh/center`` moves its bounding-box centre to the origin, as
  Gazebo does). Collada through
  :mod:`oceansim_py.scene.collada`; OBJ/STL/PLY/glTF through :mod:`oceansim_py.scene.meshes`.
  ``heightmap``, ``polyline``, ``image`` and other geometry are refused with the model's name.

Materials (the rules): a visual's named material is the first table entry matched by, in order, the words of
its ``<material><script><name>`` (e.g. ``Gazebo/Sand`` -> ``sand``, ``UUVSimulator/SeaBedRock`` -> ``rock``),
then of the visual, link and model names (innermost first, nested models outwards). Words are split at
non-letters and camelCase; a few synonyms map to table names (``stone``/``stones``/``boulder`` -> rock,
``metal``/``iron`` -> steel, ``aluminum`` -> aluminium, ``seabed``/``seafloor``/``sediment`` -> sand,
``silt``/``clay`` -> mud, ``timber`` -> wood). No match: the ``default`` material. The albedo is
``<material><diffuse>`` (RGB, clipped to [0, 1]) when given, else the named material's albedo; the acoustic
reflectivity is always the named material's.

Nodes: ``/<world>/<model>[/<nested model>...]/<link>/<visual>`` (names sanitised; a name that sanitises to a path
already taken gets ``_2``, ``_3``, ...), models and links as
transform-only nodes. The semantic label of every node is its top-level model's name. Visuals of the same mesh file
part (resolved file, ``submesh`` name and ``center``; the ``scale`` stays on the node) or of the same primitive
(tag and parameters) share one ``TriangleMesh``, which the Embree backend instances.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

import numpy as np

from oceansim_py.errors import SceneError
from oceansim_py.poses import matmul_fixed
from oceansim_py.scene.graph import Node, TriangleMesh
from oceansim_py.scene.materials import Material, MaterialTable, default_material
from oceansim_py.scene.meshes import sanitize_name

#: Resource path variables searched for ``model://`` URIs, in this order (after ``model_paths``).
RESOURCE_PATH_VARIABLES = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "GAZEBO_MODEL_PATH", "SDF_PATH")
#: Segments around tessellated cylinders and capsules; icosphere subdivisions for spheres and ellipsoids.
PRIMITIVE_SEGMENTS = 32
SPHERE_SUBDIVISIONS = 3

_SYNONYMS = {"stone": "rock", "stones": "rock", "boulder": "rock", "rocks": "rock", "metal": "steel",
             "iron": "steel", "aluminum": "aluminium", "seabed": "sand", "seafloor": "sand", "sediment": "sand",
             "silt": "mud", "clay": "mud", "timber": "wood", "concrete": "concrete"}
_NOT_NAMED = {"default", "air"}


# -- small helpers ------------------------------------------------------------------------------------------

def _numbers(text: str | None, count: int, where: str) -> list[float]:
    try:
        vals = [float(v) for v in (text or "").split()]
    except ValueError:
        raise SceneError(f"{where}: expected {count} numbers, got {text!r}") from None
    if len(vals) != count or not all(map(math.isfinite, vals)):
        raise SceneError(f"{where}: expected {count} finite numbers, got {text!r}")
    return vals


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll) (radians; fixed axes, SDF's convention)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _quat_matrix(x: float, y: float, z: float, w: float, where: str) -> np.ndarray:
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if n < 1e-12:
        raise SceneError(f"{where}: a zero quaternion is no rotation")
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def parse_pose(elem: ET.Element | None, where: str) -> tuple[np.ndarray, str | None]:
    """(4x4 pose, relative_to or None) of a ``<pose>`` element (identity when absent)."""
    m = np.eye(4)
    if elem is None:
        return m, None
    where = f"{where} <pose>"
    fmt = elem.get("rotation_format", "euler_rpy")
    text = (elem.text or "").strip()
    if fmt == "quat_xyzw":
        v = _numbers(text, 7, where)
        m[:3, :3] = _quat_matrix(*v[3:], where=where)
    elif fmt == "euler_rpy":
        v = _numbers(text, 6, where) if text else [0.0] * 6
        ang = v[3:]
        if elem.get("degrees", "false").strip().lower() in ("true", "1"):
            ang = [math.radians(a) for a in ang]
        m[:3, :3] = rpy_matrix(*ang)
    else:
        raise SceneError(f"{where}: rotation_format must be 'euler_rpy' or 'quat_xyzw', got {fmt!r}")
    m[:3, 3] = v[:3]
    rel = elem.get("relative_to")
    return m, (rel.strip() if rel and rel.strip() else None)


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[^A-Za-z]+", spaced) if w]


def match_material(names: Sequence[str], table: MaterialTable) -> Material | None:
    """The first table material named by a word of ``names`` (in order), with the module's synonyms."""
    for name in names:
        for word in _words(name):
            key = _SYNONYMS.get(word, word)
            if key not in _NOT_NAMED and key in table:
                return table[key]
    return None


def search_paths(model_paths: Sequence[str | Path] | None, base: Path) -> list[Path]:
    """Where ``model://`` URIs are looked up (module docstring), in order, without duplicates."""
    out: list[Path] = [Path(p) for p in (model_paths or ())]
    for var in RESOURCE_PATH_VARIABLES:
        out += [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]
    out.append(base)
    seen, unique = set(), []
    for p in out:
        key = str(p)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


# -- the reader ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class _Scope:
    """A world or model: its frame in the world, its named children (models, links, frames), and the model files
    included on the way to it (resolved paths, outermost first)."""

    name: str
    world: np.ndarray
    elements: dict[str, tuple[str, ET.Element, Path]]
    parent: "_Scope | None"
    resolved: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    models: dict[str, "_Scope"] = dataclasses.field(default_factory=dict)
    items: list[tuple[str, ET.Element, Path]] = dataclasses.field(default_factory=list)
    includes: tuple[str, ...] = ()


class _SdfReader:
    def __init__(self, path: Path, table: MaterialTable, model_paths: Sequence[str | Path] | None) -> None:
        self.path = path
        self.table = table
        self.paths = search_paths(model_paths, path.parent)
        self.nodes: list[Node] = []
        self._paths: set[str] = set()  # node paths given so far
        # each model element read from an <include>, by id(), with its include chain (see _Scope.includes); the
        # element is held so that its id is never reused
        self._chains: dict[int, tuple[ET.Element, tuple[str, ...]]] = {}
        # one TriangleMesh per source geometry, shared by every visual using it: primitives by (tag, parameters),
        # mesh files by (resolved file, submesh, center)
        self._shapes: dict[tuple, list[tuple[TriangleMesh, np.ndarray]]] = {}
        self._files: dict[tuple[str, str, bool], list[tuple[TriangleMesh, np.ndarray]]] = {}

    # files and URIs
    def parse(self, path: Path) -> ET.Element:
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise SceneError(f"{path}: malformed XML ({exc})") from exc
        except OSError as exc:
            raise SceneError(f"{path}: cannot read ({exc.strerror})") from exc
        if root.tag != "sdf":
            raise SceneError(f"{path}: the root element is <{root.tag}>, not <sdf>")
        return root

    def resolve_uri(self, uri: str, base: Path, what: str) -> Path:
        """A file or folder for ``uri`` (module docstring); ``SceneError`` naming ``what`` and the paths tried."""
        uri = uri.strip()
        if uri.startswith(("http://", "https://")):
            raise SceneError(f"{self.path}: {what}: cannot fetch {uri!r}; download the model (e.g. `gz fuel "
                             f"download`) and add its folder to model_paths or GZ_SIM_RESOURCE_PATH")
        if uri.startswith("model://"):
            rest = uri[len("model://"):]
            tried = [p / rest for p in self.paths]
            for cand in tried:
                if cand.exists():
                    return cand
            raise SceneError(f"{self.path}: {what}: cannot resolve {uri!r}; searched {[str(t) for t in tried]} "
                             f"(model_paths, {', '.join(RESOURCE_PATH_VARIABLES)}, the world's folder); add the "
                             f"folder holding '{rest.split('/')[0]}' to model_paths")
        p = Path(uri[len("file://"):] if uri.startswith("file://") else uri)
        p = p if p.is_absolute() else base / p
        if not p.exists():
            raise SceneError(f"{self.path}: {what}: {uri!r} not found (looked at {p})")
        return p

    def model_file(self, folder: Path, what: str) -> Path:
        if folder.is_file():
            return folder
        config = folder / "model.config"
        if config.is_file():
            try:
                entries = ET.parse(config).getroot().findall("sdf")
            except ET.ParseError as exc:
                raise SceneError(f"{config}: malformed XML ({exc})") from exc
            if entries:
                def version(e: ET.Element) -> tuple[int, ...]:
                    return tuple(int(v) for v in re.findall(r"\d+", e.get("version", "0")))
                best = max(entries, key=version)
                f = folder / (best.text or "").strip()
                if f.is_file():
                    return f
                raise SceneError(f"{config}: names SDF file {best.text!r}, which does not exist ({what})")
        f = folder / "model.sdf"
        if f.is_file():
            return f
        raise SceneError(f"{self.path}: {what}: {folder} holds neither a model.config naming an SDF file nor a "
                         f"model.sdf")

    # the world
    def read(self) -> tuple[list[Node], dict]:
        root = self.parse(self.path)
        world = root.find("world")
        if world is not None:
            name = world.get("name", "world")
            elems = list(world)
        else:
            name = self.path.stem
            elems = list(root)
        top = Node(path="/" + sanitize_name(name), label=name)
        self.nodes.append(top)
        scope = _Scope(name, np.eye(4), {}, None)
        scope.items = self.collect(scope, elems, self.path.parent)
        self.load_scope(scope, top, [], label=None)
        if len(self.nodes) == 1:
            raise SceneError(f"{self.path}: the world holds no model with visual geometry")
        meta = {"description": f"Gazebo world {name} from {self.path.name}", "sdf_version": root.get("version", "")}
        return self.nodes, meta

    def collect(self, scope: _Scope, elems: list[ET.Element], base: Path) -> list[tuple[str, ET.Element, Path]]:
        """Register the scope's models (includes expanded), links and frames; returns them in order."""
        items = []
        for e in elems:
            if e.tag == "include":
                e, ebase = self.expand_include(e, base, scope)
                kind = "model"
            elif e.tag in ("model", "link", "frame"):
                kind, ebase = e.tag, base
            else:
                continue
            name = e.get("name")
            if not name:
                raise SceneError(f"{self.path}: a <{e.tag}> in {scope.name!r} has no name attribute")
            if name in scope.elements:
                raise SceneError(f"{self.path}: {scope.name!r} holds two elements named {name!r}")
            scope.elements[name] = (kind, e, ebase)
            items.append((kind, e, ebase))
        return items

    def expand_include(self, inc: ET.Element, base: Path, scope: _Scope) -> tuple[ET.Element, Path]:
        uri = (inc.findtext("uri") or "").strip()
        what = f"<include> {inc.findtext('name') or uri!r} in {scope.name!r}"
        if not uri:
            raise SceneError(f"{self.path}: {what} has no <uri>")
        target = self.resolve_uri(uri, base, what)
        f = self.model_file(target, what)
        chain = scope.includes + (str(f.resolve()),)
        if chain[-1] in scope.includes:
            raise SceneError(f"{self.path}: {what}: {f} includes itself: "
                             f"{' -> '.join(chain[chain.index(chain[-1]):])}")
        if len(chain) > 32:
            raise SceneError(f"{self.path}: {what}: includes nest more than 32 deep")
        model = self.parse(f).find("model")
        if model is None:
            raise SceneError(f"{f}: holds no <model> ({what})")
        model = copy.deepcopy(model)
        if inc.findtext("name"):
            model.set("name", inc.findtext("name").strip())
        pose = inc.find("pose")
        if pose is not None:
            for old in model.findall("pose"):
                model.remove(old)
            model.insert(0, pose)
        placement = (inc.findtext("placement_frame") or "").strip()
        if placement:
            model.set("placement_frame", placement)
        self._chains[id(model)] = (model, chain)
        return model, f.parent

    def frame_of(self, scope: _Scope, name: str, stack: tuple[str, ...] = ()) -> np.ndarray:
        """World transform of the frame ``name`` in ``scope``."""
        if name in ("", "__model__") or (scope.parent is None and name == "world"):
            return scope.world
        if name in scope.resolved:
            return scope.resolved[name]
        if "::" in name:
            head, rest = name.split("::", 1)
            if head not in scope.elements or scope.elements[head][0] != "model":
                raise SceneError(f"{self.path}: frame {name!r} in {scope.name!r}: no nested model {head!r}")
            return self.frame_of(self.model_scope(scope, head), rest, stack)
        if name not in scope.elements:
            raise SceneError(f"{self.path}: pose relative_to {name!r} in {scope.name!r} names no model, link or "
                             f"frame there; known: {sorted(scope.elements)}")
        if name in stack:
            raise SceneError(f"{self.path}: poses in {scope.name!r} refer to each other in a cycle: "
                             f"{' -> '.join(stack + (name,))}")
        kind, e, _ = scope.elements[name]
        local, rel = parse_pose(e.find("pose"), f"{scope.name}::{name}")
        if rel is None and kind == "frame":
            rel = e.get("attached_to") or None
        world = matmul_fixed(self.frame_of(scope, rel or "", stack + (name,)), local)
        placement = (e.get("placement_frame") or "").strip() if kind == "model" else ""
        if placement:
            world = matmul_fixed(world, np.linalg.inv(self.placement_in_model(scope, name, placement)))
        scope.resolved[name] = world
        return world

    def placement_in_model(self, scope: _Scope, name: str, placement: str) -> np.ndarray:
        """The pose of frame ``placement`` (a link, frame or nested ``model::frame``) of model ``name`` in that
        model's own frame: its pose places that frame rather than the model frame (SDF 1.8 placement_frame)."""
        _, e, base = scope.elements[name]
        local = _Scope(f"{scope.name}::{name}" if scope.parent else name, np.eye(4), {}, scope,
                       includes=self._chains.get(id(e), (e, scope.includes))[1])
        local.items = self.collect(local, list(e), base)
        return self.frame_of(local, placement)

    def model_scope(self, scope: _Scope, name: str) -> _Scope:
        if name not in scope.models:
            _, e, base = scope.elements[name]
            child = _Scope(f"{scope.name}::{name}" if scope.parent else name, self.frame_of(scope, name), {}, scope,
                           includes=self._chains.get(id(e), (e, scope.includes))[1])
            child.items = self.collect(child, list(e), base)
            scope.models[name] = child
        return scope.models[name]

    def load_scope(self, scope: _Scope, parent: Node, names: list[str], label: str | None) -> None:
        for kind, e, ebase in scope.items:
            name = e.get("name")
            if kind == "frame":
                self.frame_of(scope, name)
                continue
            node = Node(path=self.unique_path(f"{parent.path}/{sanitize_name(name)}"),
                        transform=self.frame_of(scope, name), label=label or name, parent=parent)
            parent.children.append(node)
            self.nodes.append(node)
            if kind == "model":
                self.load_scope(self.model_scope(scope, name), node, [name] + names, label or name)
            else:
                self.load_link(e, node, ebase, [name] + names, label or name, scope)

    def unique_path(self, path: str) -> str:
        """``path``, or ``path_2``, ``path_3``, ... when a node already has it: distinct SDF names can sanitise to
        one path (``rock-1`` and ``rock_1``)."""
        out, k = path, 1
        while out in self._paths:
            k += 1
            out = f"{path}_{k}"
        self._paths.add(out)
        return out

    def load_link(self, link: ET.Element, node: Node, base: Path, names: list[str], label: str,
                  scope: _Scope) -> None:
        model = scope.name
        for vis in link.findall("visual"):
            vname = vis.get("name") or f"visual_{len(node.children)}"
            where = f"model {model!r}, link {link.get('name')!r}, visual {vname!r}"
            local, rel = parse_pose(vis.find("pose"), where)
            geom = vis.find("geometry")
            if geom is None or len(geom) == 0:
                raise SceneError(f"{self.path}: {where} has no <geometry>")
            material = self.material(vis, [vname] + names)
            frame = node.transform if rel in (None, link.get("name")) else self.frame_of(scope, rel)
            xform = matmul_fixed(frame, local)
            for k, (mesh, pre) in enumerate(self.geometry(geom[0], base, where)):
                suffix = "" if k == 0 else f"_{k}"
                child = Node(path=self.unique_path(f"{node.path}/{sanitize_name(vname)}{suffix}"),
                             transform=matmul_fixed(xform, pre),
                             mesh=mesh, material=material, label=label, parent=node)
                node.children.append(child)
                self.nodes.append(child)

    def material(self, vis: ET.Element, names: list[str]) -> Material:
        mat_el = vis.find("material")
        script = mat_el.findtext("script/name") if mat_el is not None else None
        named = match_material(([script] if script else []) + names, self.table) or default_material(self.table)
        diffuse = mat_el.findtext("diffuse") if mat_el is not None else None
        if diffuse:
            vals = [float(v) for v in diffuse.split()[:3]] if len(diffuse.split()) >= 3 else None
            if vals is None or not all(map(math.isfinite, vals)):
                raise SceneError(f"{self.path}: visual {names[0]!r}: <diffuse> needs r g b [a], got {diffuse!r}")
            return dataclasses.replace(named, albedo=tuple(float(np.clip(v, 0.0, 1.0)) for v in vals))
        return named

    def geometry(self, g: ET.Element, base: Path, where: str) -> list[tuple[TriangleMesh, np.ndarray]]:
        """[(mesh, pre-transform)] of one geometry element, in the visual's frame. Every use of the same primitive
        (tag and parameters) or mesh file part gets the same ``TriangleMesh`` object, which the Embree backend
        builds once and instances per visual."""
        if g.tag == "mesh":
            return self.mesh(g, base, where)
        key = (g.tag, tuple((c.tag, (c.text or "").strip()) for c in g))
        if key not in self._shapes:
            self._shapes[key] = [(TriangleMesh(v, t), pre) for v, t, pre in self.primitive(g, where)]
        return self._shapes[key]

    def primitive(self, g: ET.Element, where: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """[(vertices, triangles, pre-transform)] of a primitive geometry element (not ``mesh``)."""
        from oceansim_py.scene import procedural
        from oceansim_py.scene.usd import triangulate_polygons

        def poly(m: procedural.PolyMesh, scale: Sequence[float] = (1.0, 1.0, 1.0)) -> list:
            pts = m.points * np.asarray(scale, dtype=np.float64)
            return [(pts, triangulate_polygons(pts, m.counts, m.indices), np.eye(4))]

        def num(tag: str) -> float:
            v = _numbers(g.findtext(tag), 1, f"{where} <{g.tag}><{tag}>")[0]
            if v <= 0:
                raise SceneError(f"{self.path}: {where} <{g.tag}><{tag}> must be > 0, got {v}")
            return v

        tag = g.tag
        if tag == "box":
            size = _numbers(g.findtext("size"), 3, f"{self.path}: {where} <box><size>")
            return poly(procedural.box(size))
        if tag == "cylinder":
            r, h = num("radius"), num("length")
            return poly(procedural.cylinder(r, -h / 2, h / 2, PRIMITIVE_SEGMENTS))
        if tag == "sphere":
            r = num("radius")
            return poly(procedural.icosphere(SPHERE_SUBDIVISIONS), (r, r, r))
        if tag == "ellipsoid":
            radii = _numbers(g.findtext("radii"), 3, f"{self.path}: {where} <ellipsoid><radii>")
            return poly(procedural.icosphere(SPHERE_SUBDIVISIONS), radii)
        if tag == "capsule":
            import trimesh

            m = trimesh.creation.capsule(height=num("length"), radius=num("radius"),
                                         count=[PRIMITIVE_SEGMENTS, PRIMITIVE_SEGMENTS])
            return [(np.asarray(m.vertices, dtype=np.float64), np.asarray(m.faces, dtype=np.int64), np.eye(4))]
        if tag == "plane":
            w, h = _numbers(g.findtext("size") or "1 1", 2, f"{self.path}: {where} <plane><size>")
            normal = np.asarray(_numbers(g.findtext("normal") or "0 0 1", 3, f"{self.path}: {where} <plane><normal>"))
            if np.linalg.norm(normal) < 1e-12 or w <= 0 or h <= 0:
                raise SceneError(f"{self.path}: {where}: a plane needs a non-zero normal and a size > 0")
            pts = np.array([[-w / 2, -h / 2, 0], [w / 2, -h / 2, 0], [w / 2, h / 2, 0], [-w / 2, h / 2, 0]])
            pre = np.eye(4)
            pre[:3, :3] = _rotation_z_to(normal / np.linalg.norm(normal))
            return [(pts, np.array([[0, 1, 2], [0, 2, 3]]), pre)]
        raise SceneError(f"{self.path}: {where}: unsupported geometry <{tag}>; supported are box, cylinder, "
                         f"sphere, capsule, ellipsoid, plane and mesh (convert a heightmap to a mesh, e.g. with "
                         f"`oceansim-py scene from-bathymetry`)")

    def mesh(self, g: ET.Element, base: Path, where: str) -> list[tuple[TriangleMesh, np.ndarray]]:
        """[(mesh, pre-transform)] of a ``<mesh>`` geometry: the file's parts are read once per (resolved file,
        submesh, center) and shared; the ``scale`` goes into the pre-transform."""
        uri = (g.findtext("uri") or "").strip()
        if not uri:
            raise SceneError(f"{self.path}: {where}: <mesh> has no <uri>")
        f = self.resolve_uri(uri, base, where)
        scale = _numbers(g.findtext("scale") or "1 1 1", 3, f"{self.path}: {where} <mesh><scale>")
        if any(s == 0 for s in scale):
            raise SceneError(f"{self.path}: {where}: <mesh><scale> has a zero component {scale}")
        pre = np.diag(scale + [1.0])
        sub = g.find("submesh")
        want = (sub.findtext("name") or "").strip() if sub is not None else ""
        center = bool(want) and (sub.findtext("center") or "").strip().lower() in ("true", "1")
        key = (str(f.resolve()), want, center)
        if key not in self._files:
            self._files[key] = self.mesh_parts(f, want, center, where)
        return [(mesh, matmul_fixed(pre, m)) for mesh, m in self._files[key]]

    def mesh_parts(self, f: Path, want: str, center: bool, where: str) -> list[tuple[TriangleMesh, np.ndarray]]:
        """[(mesh, part transform)] of mesh file ``f``: submesh ``want`` only (all when empty), recentred when
        ``center``. Parts placing one geometry of the file several times share its mesh."""
        if f.suffix.lower() == ".dae":
            from oceansim_py.scene.collada import read_collada_meshes

            parts = [(n, TriangleMesh(v, t), np.eye(4)) for n, v, t in read_collada_meshes(f)]
        else:
            from oceansim_py.scene.meshes import read_mesh_file

            bare: dict[int, TriangleMesh] = {}  # the file's meshes without their uvs (an SDF material has no texture)
            parts = []
            for n in read_mesh_file(f, self.table):
                if n.mesh is not None:
                    if id(n.mesh) not in bare:
                        bare[id(n.mesh)] = TriangleMesh(n.mesh.vertices, n.mesh.triangles)
                    parts.append((n.label, bare[id(n.mesh)], n.transform))
        if want:
            picked = [p for p in parts if p[0] == want or p[0].rsplit("_", 1)[0] == want]
            if not picked:
                raise SceneError(f"{self.path}: {where}: submesh {want!r} not in {f}; it holds "
                                 f"{[p[0] for p in parts]}")
            parts = picked
            if center:
                parts = [(n, _centred(mesh, m), np.eye(4)) for n, mesh, m in parts]
        return [(mesh, m) for _, mesh, m in parts]


def _centred(mesh: TriangleMesh, transform: np.ndarray) -> TriangleMesh:
    """A submesh for ``<submesh><center>true``, as Gazebo makes it (gz-common ``SubMesh::Center``): its vertices
    placed by the file's transform, then moved so that the centre of their bounding box is at the origin."""
    v = matmul_fixed(mesh.vertices, transform[:3, :3].T) + transform[:3, 3]
    return TriangleMesh(v - 0.5 * (v.min(axis=0) + v.max(axis=0)), mesh.triangles)


def _rotation_z_to(n: np.ndarray) -> np.ndarray:
    """The shortest rotation taking +z to the unit vector ``n``."""
    z = np.array([0.0, 0.0, 1.0])
    c = float(n[2])
    if c > 1 - 1e-12:
        return np.eye(3)
    if c < -1 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])
    v = np.cross(z, n)
    k = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + k + matmul_fixed(k, k) / (1 + c)


def read_sdf(path: Path, materials: MaterialTable,
             model_paths: Sequence[str | Path] | None = None) -> tuple[list[Node], dict]:
    """Nodes and metadata of an SDF world or model file (see the module docstring)."""
    if not path.is_file():
        raise SceneError(f"{path}: no such file")
    return _SdfReader(path, materials, model_paths).read()
