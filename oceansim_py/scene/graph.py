"""The thin scene graph: :class:`Node` (path, world transform, triangle mesh, material, semantic label, stable
integer id) in a tree, and :class:`Scene`, which owns the device-side :class:`WorldGeometry` and answers ray
casts. Loaders (``usd.py``, ``meshes.py``) build the nodes; sensors only read the scene.

World frame: right-handed, Z up, metres. The sea surface is ``z = Scene.surface_z`` (0 unless the scene says).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Iterator

import numpy as np
import warp as wp

from oceansim_py.errors import SceneError
from oceansim_py.raycast import RaycastBackend, make_backend, resolve_backend_name
from oceansim_py.raycast.backend import check_cast_arrays
from oceansim_py.runtime import as_float32, resolve_device
from oceansim_py.scene.animation import TransformTrack
from oceansim_py.scene.geometry import WorldGeometry
from oceansim_py.scene.materials import BUILTIN_MATERIALS, DEFAULT_MATERIAL, Material
from oceansim_py.scene.sea_surface import SeaStateConfig, SeaSurface, check_patch, sea_state_config

#: Path of the node a moving sea surface is added as.
PATH_SEA_SURFACE = "/SeaSurface"

#: How far past the sea surface (m) :meth:`Scene.raycast_through_surface` restarts a ray.
SURFACE_STEP = 1e-3

#: Held while a scene makes a ray-cast backend object (``Scene.backend_for``) or walks them (``Scene.set_time``).
_BACKEND_LOCK = threading.Lock()


@dataclasses.dataclass
class TriangleMesh:
    """Triangles in a node's local frame (metres, after unit and up-axis conversion).

    vertices: (V, 3) float64. triangles: (F, 3) integer indices, counter-clockwise seen from the front
    (right-handed), so ``cross(b - a, c - a)`` is the outward normal. uvs: (F, 3, 2) texture coordinates
    (u, v) of each triangle's corners (scene/textures.py for the convention), or ``None``.
    """

    vertices: np.ndarray
    triangles: np.ndarray
    uvs: np.ndarray | None = None

    def __post_init__(self) -> None:
        vertices = np.asarray(self.vertices, dtype=np.float64)
        triangles = np.asarray(self.triangles)
        if vertices.size % 3 or (vertices.ndim > 1 and vertices.shape[-1] != 3):
            raise SceneError(f"TriangleMesh: vertices must have shape (V, 3), got {vertices.shape}")
        if triangles.size % 3 or (triangles.ndim > 1 and triangles.shape[-1] != 3):
            raise SceneError(f"TriangleMesh: triangles must have shape (F, 3), got {triangles.shape}")
        self.vertices = vertices.reshape(-1, 3)
        if triangles.size and not np.issubdtype(triangles.dtype, np.integer):
            whole = np.isfinite(triangles) & (triangles == np.round(triangles))
            if not whole.all():
                raise SceneError(f"TriangleMesh: triangles must hold integer vertex indices, got "
                                 f"{float(triangles.reshape(-1)[~whole.reshape(-1)][0]):g}")
        self.triangles = triangles.astype(np.int64).reshape(-1, 3)
        if self.triangles.size and (self.triangles.min() < 0 or self.triangles.max() >= self.vertices.shape[0]):
            raise SceneError(f"TriangleMesh: vertex indices out of range: values {int(self.triangles.min())}.."
                             f"{int(self.triangles.max())} for {self.vertices.shape[0]} vertices")
        if self.uvs is not None:
            uvs = np.asarray(self.uvs, dtype=np.float64)
            if uvs.shape != (self.triangles.shape[0], 3, 2) or not np.isfinite(uvs).all():
                raise SceneError(f"TriangleMesh: uvs must be finite with shape (F, 3, 2) = "
                                 f"({self.triangles.shape[0]}, 3, 2), one (u, v) per triangle corner; got "
                                 f"{uvs.shape}")
            self.uvs = uvs

    @property
    def num_triangles(self) -> int:
        return int(self.triangles.shape[0])


@dataclasses.dataclass(eq=False)
class Node:
    """One scene-graph node.

    Attributes:
        path: unique path, e.g. ``/World/Pier/Piling_03`` (a USD prim path where it came from USD).
        transform: (4, 4) local-to-world matrix at the scene's current time (column vectors, metres, Z up).
        mesh: triangles in the node's local frame, or ``None`` for a pure transform node.
        material: resolved acoustic reflectivity and optical albedo.
        label: semantic label (UsdSemantics, Isaac Sim's ``semanticData``, else the prim name).
        id: stable integer id (the node's rank among the scene's paths sorted), assigned by the Scene.
        track: time-sampled world transforms when the node is animated, else ``None``.
        sea_surface: the moving :class:`~oceansim_py.scene.sea_surface.SeaSurface` whose patch ``mesh`` is (world
            coordinates, identity ``transform``), else ``None``; ``Scene.set_time`` moves its vertices.
        parent / children: the tree.
    """

    path: str
    transform: np.ndarray = dataclasses.field(default_factory=lambda: np.eye(4))
    mesh: TriangleMesh | None = None
    material: Material = DEFAULT_MATERIAL
    label: str = ""
    id: int = -1
    track: TransformTrack | None = None
    sea_surface: Any = None
    parent: "Node | None" = dataclasses.field(default=None, repr=False)
    children: list["Node"] = dataclasses.field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def world_transform(self) -> np.ndarray:
        """The (4, 4) local-to-world matrix (``transform``; the design card's "world transform")."""
        return self.transform

    @property
    def semantic_label(self) -> str:
        """The semantic label (``label``; the design card's "semantic label")."""
        return self.label

    def __repr__(self) -> str:
        tris = self.mesh.num_triangles if self.mesh is not None else 0
        return (f"Node(id={self.id}, path={self.path!r}, label={self.label!r}, material={self.material.name!r}, "
                f"triangles={tris}, animated={self.track is not None or self.sea_surface is not None})")


@dataclasses.dataclass
class RaycastResult:
    """Results of ``Scene.raycast`` as Warp arrays on the scene's device (``.numpy()`` for host copies).

    distance: (N,) float32 metres along the unit ray, ``inf`` for a miss. normal: (N,) vec3 unit normal facing
    the ray (zero for a miss). face: (N,) int32 world triangle index, -1 for a miss. obj: (N,) int32 node id,
    -1 for a miss.
    """

    distance: wp.array
    normal: wp.array
    face: wp.array
    obj: wp.array

    @property
    def hit(self) -> np.ndarray:
        return self.face.numpy() >= 0

    def numpy(self) -> dict[str, np.ndarray]:
        return {"distance": self.distance.numpy(), "normal": self.normal.numpy(), "face": self.face.numpy(),
                "object": self.obj.numpy()}


class Scene:
    """A loaded scene: node tree, labels, metadata, device geometry (BVH) and animation.

    Build with :func:`oceansim_py.load_scene` or ``Scene(nodes, ...)`` from nodes you made. Node ids are
    assigned here: the rank of each node's path in sorted order, so the same file always gives the same ids.
    ``raycast_backend``: ``"warp"``, ``"embree"`` or ``"auto"``; ``None`` takes ``OCEANSIM_RAYCAST_BACKEND``,
    else auto (Embree for a CPU scene when installed, else Warp; see :mod:`oceansim_py.raycast`). A sensor whose
    config sets ``raycast_backend`` casts through :meth:`backend_for` its name instead.
    """

    def __init__(self, nodes: list[Node], source: str = "<memory>", device: Any = None,
                 metadata: dict[str, Any] | None = None, raycast_backend: str | None = None) -> None:
        if not nodes:
            raise SceneError(f"{source}: the scene has no nodes")
        paths = [n.path for n in nodes]
        if len(set(paths)) != len(paths):
            dup = sorted({p for p in paths if paths.count(p) > 1})[:3]
            raise SceneError(f"{source}: duplicate node paths {dup}; every node needs a unique path")
        self.source = source
        self.device = resolve_device(device)
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.time = float(self.metadata.get("start_time", 0.0))
        self._build(nodes)
        self._backends: dict[str, RaycastBackend] = {}
        self.set_raycast_backend(raycast_backend)

    def _build(self, nodes: list[Node]) -> None:
        """Assign ids and labels, move animated nodes to ``self.time`` and build the device geometry."""
        source = self.source
        self.nodes: list[Node] = sorted(nodes, key=lambda n: n.path)
        for i, n in enumerate(self.nodes):
            n.id = i
            if not n.label:
                n.label = n.name
        self._by_path = {n.path: n for n in self.nodes}
        self.labels: list[str] = sorted({n.label for n in self.nodes})
        label_index = {name: i for i, name in enumerate(self.labels)}
        self.node_label_ids = np.array([label_index[n.label] for n in self.nodes], dtype=np.int32)
        self._animated = [n for n in self.nodes if n.track is not None]
        if self._animated:
            for n in self._animated:
                n.transform = n.track.at(self.time)
        seas = [n for n in self.nodes if n.sea_surface is not None]
        if len(seas) > 1:
            raise SceneError(f"{source}: a scene holds at most one sea surface, got {[n.path for n in seas]}")
        self.sea_surface: SeaSurface | None = seas[0].sea_surface if seas else None
        self.geometry = WorldGeometry(self.nodes, self.node_label_ids, self.device, source)
        if self.sea_surface is not None:
            self.geometry.update(self.time)

    # -- the tree -----------------------------------------------------------------------------------------
    @property
    def roots(self) -> list[Node]:
        return [n for n in self.nodes if n.parent is None]

    def node(self, key: str | int) -> Node:
        """The node with this path or id; ``SceneError`` if there is none."""
        if isinstance(key, (int, np.integer)):
            if 0 <= int(key) < len(self.nodes):
                return self.nodes[int(key)]
            raise SceneError(f"{self.source}: no node with id {key} (ids run 0..{len(self.nodes) - 1})")
        try:
            return self._by_path[key]
        except KeyError:
            raise SceneError(f"{self.source}: no node at path {key!r}") from None

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def mesh_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.mesh is not None and n.mesh.num_triangles > 0]

    @property
    def num_triangles(self) -> int:
        return self.geometry.num_triangles

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned world bounds (min xyz, max xyz) in metres, at load time, of everything but a moving sea
        surface (whose patch is often far larger than the scene's content)."""
        return self.geometry.bounds

    @property
    def surface_z(self) -> float:
        """Height of the undisturbed (mean) sea surface (m); depth = surface_z - z."""
        return float(self.metadata.get("surface_z", 0.0))

    def surface_height(self, xy: Any, t: float | Any | None = None) -> np.ndarray:
        """Instantaneous sea-surface height z (m, world) above the horizontal positions ``xy`` (N, 2) or (2,)
        (world, m) at time ``t`` (s; one time or (N,) times; ``None``: the scene's current time): the moving sea
        surface's :meth:`~oceansim_py.scene.sea_surface.SeaSurface.elevation` when the scene has one, else
        ``surface_z`` everywhere. Returns (N,) float64."""
        p = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        if self.sea_surface is None:
            return np.full(p.shape[0], self.surface_z)
        return self.sea_surface.elevation(p, self.time if t is None else t)

    def pressure_head(self, xyz: Any, t: float | Any | None = None) -> np.ndarray:
        """Water pressure above atmospheric at points ``xyz`` (N, 3) (world, m) as a head of water (m; times
        rho g for Pa) at time ``t`` (s; ``None``: the scene's current time): below a moving sea surface the
        hydrostatic head about the mean surface plus the waves' dynamic pressure, attenuated with depth
        (:meth:`~oceansim_py.scene.sea_surface.SeaSurface.pressure_head`); without one, ``max(0, surface_z - z)``.
        Returns (N,) float64."""
        p = np.asarray(xyz, dtype=np.float64).reshape(-1, 3)
        if self.sea_surface is None:
            return np.maximum(0.0, self.surface_z - p[:, 2])
        return self.sea_surface.pressure_head(p, self.time if t is None else t)

    def add_sea_surface(self, sea_state: SeaStateConfig | dict[str, Any] | str, size: float = 200.0,
                        resolution: float = 1.0, center: tuple[float, float] | None = None,
                        material: Material | None = None) -> Node:
        """Add a moving sea surface to the scene (replacing the flat surface at ``surface_z``) and rebuild its
        geometry; returns the new node.

        ``sea_state``: a :class:`SeaStateConfig`, a mapping of its fields (optionally with ``preset``) or a preset
        name. ``size``: side of the square patch (m); ``resolution``: its grid spacing (m); ``center``: (x, y) of the
        patch (m; default: the centre of the scene's bounds). ``material``: default the built-in ``sea_surface``
        (pressure-release, mu = 1). The node is ``/SeaSurface`` with label ``sea_surface``; node ids are re-assigned
        (by path rank) and the ray-cast backend's structure is rebuilt on its next cast. The patch's mean surface is
        ``surface_z``; ``set_time`` moves its vertices and refits the BVH.
        """
        config = sea_state_config(sea_state, "sea_state")
        check_patch(size, resolution, "add_sea_surface: size", "add_sea_surface: resolution")
        if self.sea_surface is not None:
            raise SceneError(f"{self.source}: the scene already has a sea surface; a scene holds at most one")
        if PATH_SEA_SURFACE in self._by_path:
            raise SceneError(f"{self.source}: a node already has the sea surface's path {PATH_SEA_SURFACE}")
        if center is None:
            lo, hi = self.bounds
            center = (float(lo[0] + hi[0]) / 2.0, float(lo[1] + hi[1]) / 2.0)
        surface = SeaSurface(config, size=size, resolution=resolution, center=center, surface_z=self.surface_z,
                             device=self.device)
        mesh = TriangleMesh(surface.displace(surface.rest, self.time), surface.triangles)
        node = Node(PATH_SEA_SURFACE, mesh=mesh, material=material or BUILTIN_MATERIALS["sea_surface"],
                    label="sea_surface", sea_surface=surface)
        backend = self._backend_name
        self._build([*self.nodes, node])
        self._backend_name = backend
        with _BACKEND_LOCK:
            self._backends = {}
        return node

    @property
    def suggested_pose(self) -> np.ndarray | None:
        """A sensor pose (7,) the scene's author suggests, or ``None``."""
        p = self.metadata.get("suggested_pose")
        return None if p is None else np.asarray(p, dtype=np.float64)

    @property
    def description(self) -> str:
        return str(self.metadata.get("description", ""))

    def label_of(self, node_id: int) -> str:
        return self.labels[int(self.node_label_ids[node_id])]

    # -- animation ----------------------------------------------------------------------------------------
    @property
    def is_animated(self) -> bool:
        """Whether the scene changes with time (animated nodes or a moving sea surface): ``set_time`` per frame."""
        return bool(self._animated) or self.sea_surface is not None

    @property
    def time_range(self) -> tuple[float, float] | None:
        """(first, last) key time in seconds over all animated nodes, or ``None`` for a static scene."""
        if not self._animated:
            return None
        return (min(float(n.track.times[0]) for n in self._animated),
                max(float(n.track.times[-1]) for n in self._animated))

    def set_time(self, t: float) -> None:
        """Move animated nodes and the sea surface to time ``t`` (seconds) and refit the BVH (and the structure of
        every ray-cast backend made so far). Free for static scenes."""
        if not np.isfinite(t):
            raise SceneError(f"{self.source}: set_time needs a finite time in seconds, got {t!r}")
        self.time = float(t)
        if not self.is_animated:
            return
        for n in self._animated:
            n.transform = n.track.at(self.time)
        self.geometry.update(self.time)
        with _BACKEND_LOCK:
            made = list(self._backends.values())
        for backend in made:
            backend.update()

    # -- ray casting --------------------------------------------------------------------------------------
    @property
    def raycast_backend(self) -> str:
        """Name of the ray-cast backend behind :meth:`raycast` / :meth:`raycast_into` (``warp`` or ``embree``)."""
        return self._backend_name

    def set_raycast_backend(self, name: str | None = None) -> None:
        """Choose the ray-cast backend (``"warp"``, ``"embree"``, ``"auto"``; ``None``: the environment's, else
        auto). ``ConfigError`` when it cannot run here. Its acceleration structure is built on first cast; backend
        objects made before are kept for sensors that name them (:meth:`backend_for`)."""
        self._backend_name = resolve_backend_name(self.device, name)

    @property
    def backend(self) -> RaycastBackend:
        """The scene's own ray-cast backend object (:meth:`backend_for` of ``None``)."""
        return self.backend_for(None)

    def backend_for(self, name: str | None) -> RaycastBackend:
        """The backend object a sensor whose config says ``raycast_backend=name`` casts through: ``None`` is the
        scene's choice, else ``"warp"`` / ``"embree"`` / ``"auto"`` resolved on this scene's device (``ConfigError``
        as for :meth:`set_raycast_backend`). One object per backend, made on first use under a lock, so threads
        casting at once share it; ``set_time`` refits every one made."""
        key = self._backend_name if name is None else resolve_backend_name(self.device, name)
        backend = self._backends.get(key)
        if backend is None:
            with _BACKEND_LOCK:
                backend = self._backends.get(key)
                if backend is None:
                    backend = self._backends[key] = make_backend(key, self.geometry, self.source)
        return backend

    def raycast(self, origins: Any, directions: Any, max_range: float | Any = 1000.0,
                backend: str | None = None) -> RaycastResult:
        """Cast N rays (world frame, metres) and return their first hits.

        Args:
            origins: (N, 3) ray origins.
            directions: (N, 3) directions (normalised here; a zero direction, or one shorter than ~1.1e-19, is a
                miss: :mod:`oceansim_py.raycast.backend`).
            max_range: one maximum distance (m) or (N,) per ray.
            backend: a sensor's ``raycast_backend`` override (:meth:`backend_for`); ``None``: the scene's.
        """
        o = as_float32(origins, (3,), "raycast origins").reshape(-1, 3)
        d = as_float32(directions, (3,), "raycast directions").reshape(-1, 3)
        if o.shape != d.shape:
            raise SceneError(f"raycast: origins {o.shape} and directions {d.shape} must have the same shape")
        r = np.atleast_1d(np.asarray(max_range, dtype=np.float32))
        if r.size not in (1, o.shape[0]) or not np.all(r > 0):
            raise SceneError("raycast: max_range must be one positive value or one per ray")
        n = o.shape[0]
        dev = self.device
        with wp.ScopedDevice(dev):
            wo = wp.array(o, dtype=wp.vec3)
            wd = wp.array(d, dtype=wp.vec3)
            wr = wp.array(r, dtype=wp.float32)
            out = RaycastResult(wp.empty(n, dtype=wp.float32), wp.empty(n, dtype=wp.vec3),
                                wp.empty(n, dtype=wp.int32), wp.empty(n, dtype=wp.int32))
        self.raycast_into(wo, wd, wr, out, backend=backend)
        return out

    def raycast_through_surface(self, origins: Any, directions: Any, max_range: float | Any = 1000.0) -> RaycastResult:
        """:meth:`raycast`, but a ray that meets the moving sea surface goes on through it (once: the surface is a
        height field) to the next hit; for queries of the scene's content, such as terrain following from the
        mean surface down, that the waves must not stop. Without a sea surface it is :meth:`raycast`."""
        first = self.raycast(origins, directions, max_range)
        if self.sea_surface is None:
            return first
        res = first.numpy()
        sea_id = next(n.id for n in self.nodes if n.sea_surface is not None)
        through = np.flatnonzero(res["object"] == sea_id)
        if through.size == 0:
            return first
        o = np.asarray(origins, dtype=np.float64).reshape(-1, 3)[through]
        d = np.asarray(directions, dtype=np.float64).reshape(-1, 3)[through]
        d = d / np.linalg.norm(d, axis=1, keepdims=True)
        r = np.broadcast_to(np.asarray(max_range, dtype=np.float64), (res["distance"].shape[0],))[through]
        step = res["distance"][through].astype(np.float64) + SURFACE_STEP
        again = self.raycast(o + d * step[:, None], d, np.maximum(r - step, SURFACE_STEP)).numpy()
        hit = again["object"] >= 0
        res["distance"][through] = np.where(hit, again["distance"] + step, np.inf).astype(np.float32)
        for key in ("normal", "face", "object"):
            res[key][through] = again[key]
        dev = self.device
        with wp.ScopedDevice(dev):
            return RaycastResult(wp.array(res["distance"], dtype=wp.float32), wp.array(res["normal"], dtype=wp.vec3),
                                 wp.array(res["face"], dtype=wp.int32), wp.array(res["object"], dtype=wp.int32))

    def raycast_into(self, origins: wp.array, directions: wp.array, max_range: wp.array,
                     out: RaycastResult, threads: int | None = None, backend: str | None = None) -> None:
        """Device-side ray cast into preallocated arrays (no host copies) by the scene's backend, or by
        :meth:`backend_for` ``backend`` (a sensor's ``raycast_backend``); CPU work split across threads. Array
        contract: :mod:`oceansim_py.raycast.backend` (checked: :class:`SceneError` for strided views or arrays of
        other lengths)."""
        check_cast_arrays(origins, directions, max_range, out)
        self.backend_for(backend).cast(origins, directions, max_range, out, threads=threads)

    def summary(self) -> str:
        """A human-readable description of what the scene holds."""
        lo, hi = self.bounds
        lines = [f"scene {self.source}"]
        if self.description:
            lines.append(f"  {self.description}")
        lines.append(f"  {len(self.nodes)} nodes, {len(self.mesh_nodes())} with meshes, "
                     f"{self.num_triangles} triangles, device {self.device}, ray casts: {self.raycast_backend}")
        lines.append(f"  bounds min {np.round(lo, 3).tolist()} max {np.round(hi, 3).tolist()} (m)")
        lines.append(f"  labels: {', '.join(self.labels)}")
        mats = sorted({n.material.name for n in self.mesh_nodes()})
        lines.append(f"  materials: {', '.join(mats)}")
        if self._animated:
            t0, t1 = self.time_range  # type: ignore[misc]
            lines.append(f"  animated nodes: {len(self._animated)} (t = {t0:g} .. {t1:g} s)")
        if self.sea_surface is not None:
            sea = self.sea_surface
            lines.append(f"  sea surface: {sea.config.spectrum}, Hs {sea.components.significant_wave_height:.3g} m, "
                         f"{sea.components.count} components, {sea.num_vertices} vertices")
        if self.suggested_pose is not None:
            lines.append(f"  suggested sensor pose: {np.round(self.suggested_pose, 4).tolist()}")
        return "\n".join(lines)
