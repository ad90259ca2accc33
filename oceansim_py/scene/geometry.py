"""World geometry: one ``wp.Mesh`` (BVH) over every node's world-space triangles, with per-face object ids and
per-object material and label arrays on the device. Animated nodes update their vertices in a kernel and the
BVH is refitted, never rebuilt. A node carrying a moving sea surface (``node.sea_surface``, a
:class:`~oceansim_py.scene.sea_surface.SeaSurface`) has its vertices, a contiguous range of the world points,
re-evaluated at each time by the sea-surface kernel, and the BVH is refitted likewise.

It reads the nodes through :class:`GeometryNode` (what it needs of a node), so it does not depend on the scene
graph that owns it (scene/graph.py builds a ``WorldGeometry`` from its ``Node`` objects).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import warp as wp

from oceansim_py.errors import SceneError
from oceansim_py.kernels.geometry import transform_vertices_kernel
from oceansim_py.poses import rotate_fixed
from oceansim_py.runtime import launch_1d
from oceansim_py.scene.textures import TextureAtlas

log = logging.getLogger(__name__)

#: Triangles with an area below this (m^2) are degenerate and dropped (as are those with a vertex that is not
#: finite in float32: NaN, or beyond float32's range).
DEGENERATE_AREA = 1e-12


def transform_points(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a 4x4 affine (column vectors) to (N, 3) points, in float64 (fixed summation order: the same bits
    whatever the BLAS thread count or machine)."""
    p = np.asarray(points, dtype=np.float64)
    return rotate_fixed(np.asarray(matrix, dtype=np.float64)[:3, :3], p) + matrix[:3, 3]


def triangle_areas(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    a, b, c = (points[triangles[:, k]] for k in range(3))
    return 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)


class GeometryNode(Protocol):
    """What the world geometry reads of a scene node (:class:`oceansim_py.scene.graph.Node` is one): its id, its
    mesh (``vertices`` (V, 3) m in the node frame, ``triangles`` (F, 3)) or ``None``, its 4x4 node-to-world
    ``transform``, its animation ``track`` (``None`` when static) and its ``material`` (``reflectivity``,
    linear RGB ``albedo``, ``texture`` or ``None``; a textured mesh also has ``uvs`` (F, 3, 2)). A node may also
    carry ``sea_surface`` (a ``SeaSurface`` whose vertices are its mesh's, in world coordinates, with an identity
    transform), read with ``getattr``."""

    id: int
    mesh: Any
    transform: np.ndarray
    track: Any
    material: Any


@dataclass
class GeometryStats:
    triangles: int
    vertices: int
    dropped_degenerate: int
    build_seconds: float


@dataclass
class MeshSlot:
    """One node's share of the world triangles: its kept (non-degenerate) triangles as indices into
    ``node.mesh.vertices`` (winding as in the world mesh) and the world index of the first of them; its world
    triangles are ``face_offset .. face_offset + len(triangles) - 1`` in that order."""

    node: GeometryNode
    triangles: np.ndarray
    face_offset: int


@dataclass
class SeaSlot:
    """A moving sea surface's share of the world points: ``points[vertex_offset : vertex_offset + count]`` are
    its patch's vertices (world, m); ``slot`` is its :class:`MeshSlot`."""

    slot: MeshSlot
    vertex_offset: int
    count: int

    @property
    def surface(self) -> Any:
        return self.slot.node.sea_surface  # type: ignore[attr-defined]


class WorldGeometry:
    """Device-side world geometry of a scene (see module docstring).

    Attributes (Warp arrays on ``device``):
        mesh: the ``wp.Mesh``; pass ``mesh.id`` to kernels as ``wp.uint64``.
        face_object: (F,) int32, node id of each triangle.
        object_reflectivity: (N_nodes,) float32 acoustic reflectivity mu per node id.
        object_albedo: (N_nodes,) vec3 linear RGB albedo per node id.
        object_label: (N_nodes,) int32 index into ``Scene.labels`` per node id.
        object_texture: (N_nodes,) int32 row of ``texture_info`` of the node's diffuse texture, -1 for none (a
            node whose material has a texture but whose mesh has no ``uvs`` keeps its flat albedo).
        face_uv: (3 F,) vec2 texture coordinates of each triangle corner (zeros for untextured nodes).
        texture_texels, texture_info: the scene's textures packed by :class:`TextureAtlas`.
        num_textures: how many textures the atlas holds.
    ``slots``: one :class:`MeshSlot` per node with triangles, in world-triangle order (what the Embree ray-cast
    backend builds its instances and flattened geometry from).
    ``sea_surfaces``: one :class:`SeaSlot` per moving sea surface (their vertex ranges in ``points``).
    """

    def __init__(self, nodes: list[GeometryNode], label_ids: np.ndarray, device: wp.context.Device,
                 source: str = "<scene>") -> None:
        t0 = time.perf_counter()
        self.device = device
        pts, tris, face_obj, face_uv = [], [], [], []
        textured: dict[int, Any] = {}
        anim_local, anim_slot, anim_dst = [], [], []
        self.animated_nodes: list[GeometryNode] = []
        offset = 0
        dropped = 0
        self.slots: list[MeshSlot] = []
        self.sea_surfaces: list[SeaSlot] = []
        faces = 0
        for node in nodes:
            if node.mesh is None or node.mesh.triangles.shape[0] == 0:
                continue
            local = np.asarray(node.mesh.vertices, dtype=np.float64)
            t = np.asarray(node.mesh.triangles, dtype=np.int64)
            uvs = getattr(node.mesh, "uvs", None)
            texture = getattr(node.material, "texture", None)
            world = transform_points(node.transform, local)
            if np.linalg.det(node.transform[:3, :3]) < 0:
                t = t[:, [0, 2, 1]]
                uvs = None if uvs is None else uvs[:, [0, 2, 1]]
            with np.errstate(over="ignore"):  # a vertex beyond float32's range becomes inf on the device
                finite = np.isfinite(world.astype(np.float32)).all(axis=1)
            keep = (triangle_areas(world, t) > DEGENERATE_AREA) & finite[t].all(axis=1)
            dropped += int((~keep).sum())
            t = t[keep]
            if t.shape[0] == 0:
                continue
            self.slots.append(MeshSlot(node, t, faces))
            if getattr(node, "sea_surface", None) is not None:
                if node.track is not None or not np.array_equal(node.transform, np.eye(4)):
                    raise SceneError(f"{source}: sea-surface node {getattr(node, 'path', node.id)} must have an "
                                     f"identity transform and no animation track (its vertices are world points)")
                if node.sea_surface.device != device or node.sea_surface.num_vertices != local.shape[0]:
                    raise SceneError(f"{source}: sea-surface node {getattr(node, 'path', node.id)} must hold its "
                                     f"patch's {node.sea_surface.num_vertices} vertices on the scene's device "
                                     f"{device}; add it with Scene.add_sea_surface")
                self.sea_surfaces.append(SeaSlot(self.slots[-1], offset, local.shape[0]))
            faces += t.shape[0]
            pts.append(world)
            tris.append(t + offset)
            if texture is not None and uvs is not None:
                textured[node.id] = texture
                face_uv.append(np.asarray(uvs, dtype=np.float32)[keep].reshape(-1, 2))
            else:
                face_uv.append(np.zeros((3 * t.shape[0], 2), dtype=np.float32))
            face_obj.append(np.full(t.shape[0], node.id, dtype=np.int32))
            if node.track is not None:
                anim_local.append(local)
                anim_slot.append(np.full(local.shape[0], len(self.animated_nodes), dtype=np.int32))
                anim_dst.append(np.arange(offset, offset + local.shape[0], dtype=np.int32))
                self.animated_nodes.append(node)
            offset += local.shape[0]
        if not tris:
            raise SceneError(f"{source}: the scene holds no triangles to cast rays against; add a mesh or an "
                             f"implicit primitive (Cube, Sphere, ...) that is visible")
        if dropped:
            log.warning("%s: dropped %d degenerate (zero-area or non-finite) triangle(s)", source, dropped)
        with np.errstate(over="ignore"):  # an unused vertex beyond float32's range (its triangles were dropped)
            points = np.concatenate(pts).astype(np.float32)
        indices = np.concatenate(tris).astype(np.int32)
        self.num_triangles = int(indices.shape[0])
        self.num_vertices = int(points.shape[0])
        self.dropped_degenerate = dropped
        # the scene's extent is its content's: a sea-surface patch (often far larger) does not count, unless it is
        # all there is; nor do the non-finite vertices of dropped triangles
        finite = np.isfinite(points).all(axis=1)
        content = finite.copy()
        for sea in self.sea_surfaces:
            content[sea.vertex_offset:sea.vertex_offset + sea.count] = False
        extent = points[content] if content.any() else points[finite]
        self.bounds = (extent.min(axis=0).astype(np.float64), extent.max(axis=0).astype(np.float64))

        n_nodes = max((n.id for n in nodes), default=-1) + 1
        refl = np.zeros(n_nodes, dtype=np.float32)
        albedo = np.zeros((n_nodes, 3), dtype=np.float32)
        for node in nodes:
            refl[node.id] = node.material.reflectivity
            albedo[node.id] = node.material.albedo
        atlas = TextureAtlas.pack(list(textured.values()))
        object_texture = np.full(n_nodes, -1, dtype=np.int32)
        for node_id, texture in textured.items():
            object_texture[node_id] = atlas.index[id(texture)]
        self.num_textures = atlas.count
        with wp.ScopedDevice(device):
            self.points = wp.array(points, dtype=wp.vec3)
            self.indices = wp.array(indices.reshape(-1), dtype=wp.int32)
            self.mesh = wp.Mesh(points=self.points, indices=self.indices,
                                bvh_constructor="sah" if device.is_cpu else "lbvh")
            self.face_object = wp.array(np.concatenate(face_obj), dtype=wp.int32)
            self.object_reflectivity = wp.array(refl, dtype=wp.float32)
            self.object_albedo = wp.array(albedo, dtype=wp.vec3)
            self.object_label = wp.array(np.asarray(label_ids, dtype=np.int32), dtype=wp.int32)
            self.object_texture = wp.array(object_texture, dtype=wp.int32)
            self.face_uv = wp.array(np.concatenate(face_uv) if textured else np.zeros((1, 2), np.float32),
                                    dtype=wp.vec2)
            self.texture_texels = wp.array(atlas.texels, dtype=wp.vec3)
            self.texture_info = wp.array(atlas.info, dtype=wp.int32)
            if self.animated_nodes:
                self._anim_local = wp.array(np.concatenate(anim_local).astype(np.float32), dtype=wp.vec3)
                self._anim_slot = wp.array(np.concatenate(anim_slot), dtype=wp.int32)
                self._anim_dst = wp.array(np.concatenate(anim_dst), dtype=wp.int32)
                self._anim_xforms = wp.zeros(len(self.animated_nodes), dtype=wp.mat44)
        self.build_seconds = time.perf_counter() - t0

    @property
    def is_animated(self) -> bool:
        """Whether anything moves with time (animated nodes or a moving sea surface)."""
        return bool(self.animated_nodes) or bool(self.sea_surfaces)

    def update_animated(self) -> None:
        """Move the animated nodes' vertices to their current ``Node.transform`` and refit the BVH."""
        if not self.animated_nodes:
            return
        self._move_animated()
        self.mesh.refit()

    def update(self, time: float) -> None:
        """Move everything that moves to time ``time`` (s): animated nodes to their current ``Node.transform``,
        sea surfaces to their waves at ``time`` (evaluated on the device, written into ``points``), then refit
        the BVH once (``wp.Mesh.refit``: same mesh, same id, no rebuild)."""
        if not self.is_animated:
            return
        if self.animated_nodes:
            self._move_animated()
        for sea in self.sea_surfaces:
            sea.surface.vertices_at(time, out=self.sea_points(sea))
        self.mesh.refit()

    def sea_points(self, sea: SeaSlot) -> wp.array:
        """The (count,) vec3 view of ``points`` holding ``sea``'s vertices (world, m)."""
        return self.points[sea.vertex_offset:sea.vertex_offset + sea.count]

    def _move_animated(self) -> None:
        mats = np.stack([n.transform for n in self.animated_nodes]).astype(np.float32)
        self._anim_xforms.assign(wp.array(mats, dtype=wp.mat44, device="cpu"))
        launch_1d(transform_vertices_kernel, self._anim_local.shape[0],
                  [self._anim_local, self._anim_slot, self._anim_dst, self._anim_xforms, self.points],
                  self.device)

    def stats(self) -> GeometryStats:
        return GeometryStats(self.num_triangles, self.num_vertices, self.dropped_degenerate, self.build_seconds)
