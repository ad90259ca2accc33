"""The thin scene graph: :class:`Node` (path, world transform, triangle mesh, material, semantic label, stable
integer id) in a tree, and :class:`Scene`, which owns the device-side :class:`WorldGeometry` and answers ray
casts. Loaders (``usd.py``, ``meshes.py``) build the nodes; sensors only read the scene.

World frame: right-handed, Z up, metres. The sea surface is ``z = Scene.surface_z`` (0 unless the scene says).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import numpy as np
import warp as wp

from oceansim_py.errors import SceneError
from oceansim_py.raycast import RaycastBackend, make_backend, resolve_backend_name
from oceansim_py.runtime import as_float32, resolve_device
from oceansim_py.scene.animation import TransformTrack
from oceansim_py.scene.geometry import WorldGeometry
from oceansim_py.scene.materials import DEFAULT_MATERIAL, Material


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
        self.vertices = np.asarray(self.vertices, dtype=np.float64).reshape(-1, 3)
        self.triangles = np.asarray(self.triangles, dtype=np.int64).reshape(-1, 3)
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
        parent / children: the tree.
    """

    path: str
    transform: np.ndarray = dataclasses.field(default_factory=lambda: np.eye(4))
    mesh: TriangleMesh | None = None
    material: Material = DEFAULT_MATERIAL
    label: str = ""
    id: int = -1
    track: TransformTrack | None = None
    parent: "Node | None" = dataclasses.field(default=None, repr=False)
    children: list["Node"] = dataclasses.field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def __repr__(self) -> str:
        tris = self.mesh.num_triangles if self.mesh is not None else 0
        return (f"Node(id={self.id}, path={self.path!r}, label={self.label!r}, material={self.material.name!r}, "
                f"triangles={tris}, animated={self.track is not None})")


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
    else auto (Embree for a CPU scene when installed, else Warp; see :mod:`oceansim_py.raycast`).
    """

    def __init__(self, nodes: list[Node], source: str = "<memory>", device: Any = None,
                 metadata: dict[str, Any] | None = None, time_codes_per_second: float = 1.0,
                 raycast_backend: str | None = None) -> None:
        if not nodes:
            raise SceneError(f"{source}: the scene has no nodes")
        paths = [n.path for n in nodes]
        if len(set(paths)) != len(paths):
            dup = sorted({p for p in paths if paths.count(p) > 1})[:3]
            raise SceneError(f"{source}: duplicate node paths {dup}; every node needs a unique path")
        self.source = source
        self.device = resolve_device(device)
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.nodes: list[Node] = sorted(nodes, key=lambda n: n.path)
        for i, n in enumerate(self.nodes):
            n.id = i
            if not n.label:
                n.label = n.name
        self._by_path = {n.path: n for n in self.nodes}
        self.labels: list[str] = sorted({n.label for n in self.nodes})
        label_index = {name: i for i, name in enumerate(self.labels)}
        self.node_label_ids = np.array([label_index[n.label] for n in self.nodes], dtype=np.int32)
        self.time = float(self.metadata.get("start_time", 0.0))
        self._animated = [n for n in self.nodes if n.track is not None]
        if self._animated:
            for n in self._animated:
                n.transform = n.track.at(self.time)
        self.geometry = WorldGeometry(self.nodes, self.node_label_ids, self.device, source)
        self._backend: RaycastBackend | None = None
        self.set_raycast_backend(raycast_backend)

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
        """Axis-aligned world bounds (min xyz, max xyz) in metres, at load time."""
        return self.geometry.bounds

    @property
    def surface_z(self) -> float:
        """Height of the sea surface (m); depth = surface_z - z."""
        return float(self.metadata.get("surface_z", 0.0))

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
        return bool(self._animated)

    @property
    def time_range(self) -> tuple[float, float] | None:
        """(first, last) key time in seconds over all animated nodes, or ``None`` for a static scene."""
        if not self._animated:
            return None
        return (min(float(n.track.times[0]) for n in self._animated),
                max(float(n.track.times[-1]) for n in self._animated))

    def set_time(self, t: float) -> None:
        """Move animated nodes to time ``t`` (seconds) and refit the BVH. Free for static scenes."""
        if not np.isfinite(t):
            raise SceneError(f"{self.source}: set_time needs a finite time in seconds, got {t!r}")
        self.time = float(t)
        if not self._animated:
            return
        for n in self._animated:
            n.transform = n.track.at(self.time)
        self.geometry.update_animated()
        if self._backend is not None:
            self._backend.update()

    # -- ray casting --------------------------------------------------------------------------------------
    @property
    def raycast_backend(self) -> str:
        """Name of the ray-cast backend behind :meth:`raycast` / :meth:`raycast_into` (``warp`` or ``embree``)."""
        return self._backend_name

    def set_raycast_backend(self, name: str | None = None) -> None:
        """Choose the ray-cast backend (``"warp"``, ``"embree"``, ``"auto"``; ``None``: the environment's, else
        auto). ``ConfigError`` when it cannot run here. Its acceleration structure is built on first cast."""
        self._backend_name = resolve_backend_name(self.device, name)
        self._backend = None

    @property
    def backend(self) -> RaycastBackend:
        """The ray-cast backend object (built on first use)."""
        if self._backend is None:
            self._backend = make_backend(self._backend_name, self.geometry, self.source)
        return self._backend

    def raycast(self, origins: Any, directions: Any, max_range: float | Any = 1000.0) -> RaycastResult:
        """Cast N rays (world frame, metres) and return their first hits.

        Args:
            origins: (N, 3) ray origins.
            directions: (N, 3) directions (normalised here; a zero direction is a miss).
            max_range: one maximum distance (m) or (N,) per ray.
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
        self.raycast_into(wo, wd, wr, out)
        return out

    def raycast_into(self, origins: wp.array, directions: wp.array, max_range: wp.array,
                     out: RaycastResult, threads: int | None = None) -> None:
        """Device-side ray cast into preallocated arrays (no host copies) by the scene's backend; CPU work split
        across threads. Array contract: :mod:`oceansim_py.raycast.backend`."""
        self.backend.cast(origins, directions, max_range, out, threads=threads)

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
        if self.is_animated:
            t0, t1 = self.time_range  # type: ignore[misc]
            lines.append(f"  animated nodes: {len(self._animated)} (t = {t0:g} .. {t1:g} s)")
        if self.suggested_pose is not None:
            lines.append(f"  suggested sensor pose: {np.round(self.suggested_pose, 4).tolist()}")
        return "\n".join(lines)
