"""The ``embree`` ray-cast backend: Intel Embree 4 on the CPU (optional extra ``oceansim_py[embree]``).

Scene layout, built once from the scene's :class:`WorldGeometry`:

- **shared meshes and animated nodes are instances.** Each distinct mesh (one ``TriangleMesh`` object with the
  same kept triangles) becomes a prototype Embree scene over its local vertices, built once; every node using it
  is an instance carrying the node's 4x4 transform. ``update()`` (after ``Scene.set_time``) only sets the moved
  instances' transforms and recommits the top level, a few microseconds per instance: no vertex is transformed
  and no triangle BVH is rebuilt or refitted. A node whose transform mirrors (negative determinant) uses the same
  prototype: ``WorldGeometry`` reverses its world winding, the prototype keeps the mesh's.
  Which nodes share a ``TriangleMesh`` is the loader's doing: USD (:mod:`oceansim_py.scene.usd`) shares a
  PointInstancer prototype's meshes among its instances, an instanceable reference's meshes per prototype prim
  (instance proxies) and an implicit prim's tessellation per shape; SDF worlds (:mod:`oceansim_py.scene.sdf`) one
  mesh per (resolved mesh file, submesh) and per primitive (tag and parameters); mesh files
  (:mod:`oceansim_py.scene.meshes`) one per geometry of a glTF/OBJ graph. Collada documents
  (:mod:`oceansim_py.scene.collada`) give each geometry instance its own transformed copy (flattened), as do the
  procedural and bathymetry scenes (no repeated mesh). Code building ``Node`` objects shares a mesh by passing the
  same ``TriangleMesh`` to several nodes.
- **every other (static, unshared) node's triangles go into one flattened geometry** at the top level, copied
  once from the world mesh, because one BVH over them is faster to traverse than instances of one-off meshes.

The Embree scene is built by the first cast of at least :data:`BUILD_AT_RAYS` rays, or by :meth:`EmbreeBackend.build`;
until then smaller casts go through Warp's BVH, which every scene has (same results: see
:mod:`oceansim_py.raycast.backend`), so that a one-ray query (framing a view, a depth probe) on a large scene never
pays for an Embree build. Flattened geometries up to :data:`HIGH_QUALITY_TRIANGLES` triangles get Embree's
high-quality (spatial split) BVH, larger ones the medium-quality one, which builds faster in less memory.

- **a moving sea surface is its own geometry** in a scene of its own under an identity instance, built with
  Embree's refit quality: ``update()`` copies its new vertices (which ``WorldGeometry.update`` evaluated into the
  world points) into its vertex buffer and recommits it, which refits its BVH over the same triangles; the static
  geometry's BVH is untouched.

When the scene has animated instances or a sea surface, the flattened geometry sits in a scene of its own under an
identity instance (exact: the identity transform leaves rays unchanged), so that an update rebuilds only the small
BVH over the instances.

Top-level geometry id 0 is the flattened geometry; instance ``k >= 1`` is ``MeshSlot`` ``instanced[k - 1]`` (the
sea surface's identity instance comes last among them). Each triangle of the flattened geometry also gets a
64-byte record (``flat_records``, in Embree's primitive order; :data:`oceansim_py.kernels.embree_cast.RECORD`): its
world vertices, the ``warp`` backend's unit normal (computed once, with Warp's operations), its world face and its
object, so that resolving a hit reads one cache line instead of the index row, three vertices and the object id
(64 bytes per flattened triangle: 64 MB for the 1 M-triangle seabed), on transparent huge pages where the table
spans one or more (:func:`_huge_page_floats`).

The kernel (``embree_raycast_kernel``) casts packets of eight rays (``rtcIntersect8``), two per kernel element,
turns Embree's (top id, primitive) into the world triangle, takes the distance and normal from it (exactly as the
``warp`` backend) and runs from the engine's launch thread pool: Warp CPU launches release the GIL, so the cast
scales over cores. Rays and results are the caller's Warp arrays, read and written in place: nothing is copied per
cast. Why ``rtcIntersect8`` and this layout: :mod:`oceansim_py.kernels.embree_cast`.

Scene options, measured on this project's 2-core AVX2 machine (traversal alone, per CPU second against Warp's BVH,
fan and random rays on tank, wreck and the 1 M-triangle seabed, ``benchmarks/raycast.py``):

- robust mode (``RTC_SCENE_FLAG_ROBUST``) stays: without it traversal is 15-30 % faster, but a ray through a
  shared edge can slip between the two triangles (a hit the ``warp`` backend finds is lost);
- ``RTC_SCENE_FLAG_COMPACT`` is 15-25 % slower (indexed triangles in the leaves); not set;
- build quality: high (spatial splits) and medium were within run-to-run noise of each other, low 10-45 % slower;
  high is kept up to :data:`HIGH_QUALITY_TRIANGLES`, where medium's faster, leaner build takes over;
- flattening vs instancing: the built-in tank, pier, wreck and the seabed have no shared or animated mesh, so they
  are one flattened geometry in one BVH already. The same geometry under an identity instance (the layout of a
  scene with animated nodes or a sea surface) traversed a median 4 % slower (-20 % to +13 % over the runs).
  A shared mesh stays instanced whatever its count: N uniformly scaled copies of a 1280-triangle sphere scattered in
  front of a 98 304-ray fan (one thread, thread time, interleaved in one process against the same nodes given
  copies of the mesh, i.e. flattened): N = 200 cast 0.95x the flattened layout's time, build 0.02 s vs 0.21 s;
  N = 2000 (overlapping, 99 % of rays hit) cast 1.78x, build 0.21 s vs 3.7 s, and no 164 MB of hit records;
- the top level with instances (harbour: 28 k flattened triangles and the 131 k-triangle sea surface): the
  flattened triangles directly in the top-level scene next to the sea's instance traversed no faster (fan 0.92x,
  random 1.02x the identity-instance layout) and made each frame's update 9.6 ms instead of 2.6 ms (the top-level
  commit then rebuilds over the flattened triangles), so they stay under their own identity instance;
- flush-to-zero / denormals-are-zero around the cast (Embree's start-up advice) made no measurable difference.
- Embree's device options: ``hugepages=1`` no difference; ``tri_accel=bvh4.triangle4v`` (4-wide BVH) 10-25 %
  slower, ``isa=avx`` 5-10 % slower; ``tri_accel=bvh8.triangle4`` 10-25 % faster but it is the non-robust
  Moeller-Trumbore leaf test whatever the scene flag (robust mode needs the ``triangle4v`` leaves' Pluecker test):
  rejected with non-robust mode. The default device (``bvh8.triangle4v``, AVX2) is kept.
"""

from __future__ import annotations

import ctypes
import logging
import mmap
import threading
import time
from typing import TYPE_CHECKING

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError
from oceansim_py.kernels.embree_cast import (QUERY_INCOHERENT, RAYS_PER_ELEMENT, RECORD, embree_raycast_kernel,
                                             embree_records_kernel, embree_traversal_kernel)
from oceansim_py.kernels.raycast import UNIT_TOLERANCE
from oceansim_py.raycast import rtcore as rtc
from oceansim_py.raycast.warp_backend import WarpBackend
from oceansim_py.runtime import MIN_CHUNK, check_memory, launch_1d

if TYPE_CHECKING:
    from oceansim_py.scene.geometry import MeshSlot, WorldGeometry
    from oceansim_py.scene.graph import RaycastResult

log = logging.getLogger(__name__)

FLAT_GEOMETRY_ID = 0

#: The first cast of at least this many rays builds the Embree scene (smaller ones go to Warp's BVH until then).
BUILD_AT_RAYS = 4096

#: Flattened geometries up to this many triangles get a high-quality BVH, larger ones a medium-quality one.
HIGH_QUALITY_TRIANGLES = 4_000_000

#: A transparent huge page (x86-64, aarch64 with 4 KiB base pages), bytes: records of at least one are put on them.
HUGE_PAGE_BYTES = 1 << 21


def _huge_page_floats(count: int) -> tuple[mmap.mmap | None, wp.array]:
    """A CPU float32 array of ``count`` (uninitialised) for the hit records, and the memory that holds it.

    The records are read at random (one per hit, anywhere in the table): on 4 KiB pages a 1 M-triangle scene's 64 MB
    table spans 16 k pages, far more than the data TLB holds, so most hits also paid a page walk. Where the system
    offers transparent huge pages on request (Linux, ``MADV_HUGEPAGE``; ``/sys/kernel/mm/transparent_hugepage/enabled``
    is ``madvise`` or ``always``), the table is private anonymous memory starting on a 2 MiB boundary, advised before
    it is first written, so that the kernel backs it with 2 MiB pages (measured, interleaved in one process, per CPU
    second of one thread: random rays on the 1 M-triangle seabed 1.07-1.13x, the other rows within noise; the same
    bytes). Elsewhere, or below one huge page, a plain Warp array. The memory stays mapped while the returned object
    lives."""
    nbytes = 4 * count
    if nbytes < HUGE_PAGE_BYTES or not hasattr(mmap, "MADV_HUGEPAGE"):
        return None, wp.empty(count, dtype=wp.float32)
    # private: shared anonymous memory follows its own huge-page setting (shmem_enabled, usually never)
    memory = mmap.mmap(-1, nbytes + HUGE_PAGE_BYTES, flags=mmap.MAP_PRIVATE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    offset = -base % HUGE_PAGE_BYTES
    try:
        memory.madvise(mmap.MADV_HUGEPAGE, offset, nbytes)
    except OSError:  # no transparent huge pages here: the same memory on base pages
        pass
    return memory, wp.array(ptr=base + offset, dtype=wp.float32, shape=(count,), device="cpu")


def _fill_buffer(lib: rtc.EmbreeLibrary, geom: int, kind: int, fmt: int, data: np.ndarray) -> np.ndarray:
    """Allocate an Embree-owned buffer (padded as Embree needs), copy ``data`` (rows of 3) into it and return the
    numpy view of it (valid while the geometry lives)."""
    ptr = lib.lib.rtcSetNewGeometryBuffer(geom, kind, 0, fmt, 12, data.shape[0])
    lib.check("allocate a geometry buffer")
    view = np.frombuffer((ctypes.c_byte * data.nbytes).from_address(ptr), dtype=data.dtype).reshape(data.shape)
    view[:] = data
    return view


def _column_major(matrix: np.ndarray) -> np.ndarray:
    """A 4x4 (column-vector convention) as 16 float32 in column-major order, Embree's FLOAT4X4_COLUMN_MAJOR."""
    return np.ascontiguousarray(np.asarray(matrix, dtype=np.float64).T, dtype=np.float32).reshape(16)


class EmbreeBackend:
    """Embree scene over ``geometry`` (module docstring). CPU scenes only."""

    name = "embree"

    def __init__(self, geometry: "WorldGeometry", source: str = "<scene>") -> None:
        if not geometry.device.is_cpu:
            raise ConfigError(f"{source}: the embree ray-cast backend casts on the CPU, but the scene is on "
                              f"{geometry.device}; load it with device='cpu' or use raycast_backend='warp'")
        self.lib = rtc.embree_library()
        self.geometry = geometry
        self.source = source
        self.built = False
        self.build_seconds = 0.0
        self._small_casts = WarpBackend(geometry)
        # serialises the build and updates: threads whose first casts race would otherwise build the scene twice at
        # once, one attaching into the other's half-built Embree scene (an Embree error or a cast against it)
        self._build_lock = threading.Lock()

    def build(self) -> None:
        """Build the Embree scene now (idempotent and thread-safe; the first cast of ``BUILD_AT_RAYS`` rays does it
        otherwise)."""
        if self.built:
            return
        with self._build_lock:
            if not self.built:
                self._build()

    def _build(self) -> None:
        t0 = time.perf_counter()
        lib, geometry, source = self.lib, self.geometry, self.source
        self._owned_scenes: list[int] = []
        self._owned_geometries: list[int] = []
        uses: dict[int, int] = {}
        for s in geometry.slots:
            uses[id(s.node.mesh)] = uses.get(id(s.node.mesh), 0) + 1
        sea_slots = {id(sea.slot) for sea in geometry.sea_surfaces}
        self.instanced: list["MeshSlot"] = [s for s in geometry.slots if id(s) not in sea_slots
                                            and (s.node.track is not None or uses[id(s.node.mesh)] > 1)]
        flat = [s for s in geometry.slots if id(s) not in sea_slots
                and not (s.node.track is not None or uses[id(s.node.mesh)] > 1)]
        check_memory(4 * RECORD * sum(len(s.triangles) for s in flat), geometry.device,
                     f"the Embree hit records of {source} (64 bytes per flattened triangle)",
                     "cast this scene with raycast_backend='warp'")

        animated = any(s.node.track is not None for s in self.instanced) or bool(sea_slots)
        self.scene = self._new_scene(rtc.RTC_SCENE_FLAG_DYNAMIC if animated else 0)
        faces = np.zeros(0, dtype=np.int32)
        if flat:
            faces = np.concatenate([np.arange(s.face_offset, s.face_offset + len(s.triangles), dtype=np.int32)
                                    for s in flat])
            quality = (rtc.RTC_BUILD_QUALITY_HIGH if len(faces) <= HIGH_QUALITY_TRIANGLES
                       else rtc.RTC_BUILD_QUALITY_MEDIUM)
            # with animated instances beside it, the flattened geometry sits in its own scene under an identity
            # instance: recommitting the top level then rebuilds the BVH over the instances only, not its triangles
            holder = self.scene
            if animated:
                holder = self._new_scene()
            lib.lib.rtcSetSceneBuildQuality(holder, quality)
            self._attach_mesh(holder, geometry.points.numpy(),
                              geometry.indices.numpy().reshape(-1, 3)[faces], FLAT_GEOMETRY_ID, quality)
            if animated:
                lib.lib.rtcCommitScene(holder)
                lib.check(f"build the BVH of the static geometry of {source}")
                self._attach_instance(holder, np.eye(4), FLAT_GEOMETRY_ID)
        self.prototypes = 0
        self._instances: list[int] = []
        prototypes: dict[tuple[int, bytes], int] = {}
        for k, s in enumerate(self.instanced, start=1):
            # a mirroring node's kept triangles are the mesh's with the winding reversed (WorldGeometry); unreversed,
            # they key the same prototype as its other uses: the cast takes its distance and normal from the world
            # triangle, and Embree's robust test finds a triangle whichever its winding
            local = s.triangles[:, [0, 2, 1]] if np.linalg.det(s.node.transform[:3, :3]) < 0 else s.triangles
            key = (id(s.node.mesh), local.tobytes())
            if key not in prototypes:
                proto = self._new_scene()
                self._attach_mesh(proto, s.node.mesh.vertices, local, 0, rtc.RTC_BUILD_QUALITY_HIGH)
                lib.lib.rtcCommitScene(proto)
                lib.check(f"build the BVH of {s.node.path}")
                prototypes[key] = proto
            self._instances.append(self._attach_instance(prototypes[key], s.node.transform, k))
        self.prototypes = len(prototypes)
        self._seas: list[tuple[int, int, int, np.ndarray, object]] = []
        for sea in geometry.sea_surfaces:
            # the patch in its own scene, its BVH refitted (not rebuilt) when its vertices move
            holder = self._new_scene(rtc.RTC_SCENE_FLAG_DYNAMIC)
            lib.lib.rtcSetSceneBuildQuality(holder, rtc.RTC_BUILD_QUALITY_LOW)
            geom, vertices = self._attach_mesh(holder, geometry.sea_points(sea).numpy(), sea.slot.triangles, 0,
                                               rtc.RTC_BUILD_QUALITY_REFIT)
            lib.lib.rtcCommitScene(holder)
            lib.check(f"build the BVH of the sea surface {sea.slot.node.path}")
            self.instanced.append(sea.slot)
            inst = self._attach_instance(holder, np.eye(4), len(self.instanced))
            self._instances.append(inst)
            self._seas.append((holder, geom, inst, vertices, sea))
        lib.lib.rtcCommitScene(self.scene)
        lib.check(f"build the scene of {source}")
        offsets = np.zeros(len(self.instanced) + 1, dtype=np.int32)
        offsets[1:] = [s.face_offset for s in self.instanced]
        self._animated = [(inst, s.node) for inst, s in zip(self._instances, self.instanced)
                          if s.node.track is not None]
        with wp.ScopedDevice(geometry.device):
            self.top_face_offset = wp.array(offsets, dtype=wp.int32)
            self._records_memory, self.flat_records = _huge_page_floats(max(1, len(faces)) * RECORD)
            if len(faces):
                wp.launch(embree_records_kernel, dim=len(faces),
                          inputs=[wp.array(faces, dtype=wp.int32), geometry.points, geometry.indices,
                                  geometry.face_object, self.flat_records])
        self.flat_triangles = sum(len(s.triangles) for s in flat)
        self.build_seconds = time.perf_counter() - t0
        self.built = True
        log.debug("%s: Embree scene with %d flattened triangles, %d instances of %d prototypes, built in %.3f s",
                  source, self.flat_triangles, len(self._instances), self.prototypes, self.build_seconds)

    def _new_scene(self, flags: int = 0) -> int:
        """A new Embree scene in robust mode: watertight triangle tests and traversal, so that a ray through the
        shared edge of two triangles hits one of them (as Warp's watertight test does), never slips between."""
        scene = self.lib.lib.rtcNewScene(self.lib.device)
        self._owned_scenes.append(scene)
        self.lib.lib.rtcSetSceneFlags(scene, flags | rtc.RTC_SCENE_FLAG_ROBUST)
        return scene

    def _attach_mesh(self, scene: int, vertices: np.ndarray, triangles: np.ndarray, geom_id: int,
                     quality: int) -> tuple[int, np.ndarray]:
        """Attach a triangle geometry; returns it and the numpy view of its (Embree-owned) vertex buffer."""
        lib = self.lib
        geom = lib.lib.rtcNewGeometry(lib.device, rtc.RTC_GEOMETRY_TYPE_TRIANGLE)
        self._owned_geometries.append(geom)
        lib.lib.rtcSetGeometryBuildQuality(geom, quality)
        view = _fill_buffer(lib, geom, rtc.RTC_BUFFER_TYPE_VERTEX, rtc.RTC_FORMAT_FLOAT3,
                            np.ascontiguousarray(vertices, dtype=np.float32).reshape(-1, 3))
        _fill_buffer(lib, geom, rtc.RTC_BUFFER_TYPE_INDEX, rtc.RTC_FORMAT_UINT3,
                     np.ascontiguousarray(triangles, dtype=np.uint32).reshape(-1, 3))
        lib.lib.rtcCommitGeometry(geom)
        lib.lib.rtcAttachGeometryByID(scene, geom, geom_id)
        lib.check("attach a triangle mesh")
        return geom, view

    def _attach_instance(self, prototype: int, matrix: np.ndarray, geom_id: int) -> int:
        inst = self.lib.lib.rtcNewGeometry(self.lib.device, rtc.RTC_GEOMETRY_TYPE_INSTANCE)
        self._owned_geometries.append(inst)
        self.lib.lib.rtcSetGeometryInstancedScene(inst, prototype)
        self._set_transform(inst, matrix)
        self.lib.lib.rtcAttachGeometryByID(self.scene, inst, geom_id)
        self.lib.check("attach an instance")
        return inst

    def _set_transform(self, inst: int, matrix: np.ndarray) -> None:
        m = _column_major(matrix)
        self.lib.lib.rtcSetGeometryTransform(inst, 0, rtc.RTC_FORMAT_FLOAT4X4_COLUMN_MAJOR, m.ctypes.data)
        self.lib.lib.rtcCommitGeometry(inst)

    def update(self) -> None:
        """Move the animated instances to their nodes' current transforms, refit the sea surfaces' BVHs over their
        current vertices (the world points ``WorldGeometry.update`` wrote), and recommit the top level."""
        with self._build_lock:
            if self.built and (self._animated or self._seas):
                self._update()

    def _update(self) -> None:
        lib = self.lib.lib
        for inst, node in self._animated:
            self._set_transform(inst, node.transform)
        for holder, geom, inst, vertices, sea in self._seas:
            vertices[:] = self.geometry.sea_points(sea).numpy()
            lib.rtcUpdateGeometryBuffer(geom, rtc.RTC_BUFFER_TYPE_VERTEX, 0)
            lib.rtcCommitGeometry(geom)
            lib.rtcCommitScene(holder)
            lib.rtcCommitGeometry(inst)
        lib.rtcCommitScene(self.scene)
        self.lib.check("update the animated instances and sea surfaces")

    def cast(self, origins: wp.array, directions: wp.array, max_range: wp.array, out: "RaycastResult",
             threads: int | None = None) -> None:
        if not self.built:
            if origins.shape[0] < BUILD_AT_RAYS:
                self._small_casts.cast(origins, directions, max_range, out, threads)
                return
            self.build()
        g = self.geometry
        n = origins.shape[0]
        launch_1d(embree_raycast_kernel, (n + RAYS_PER_ELEMENT - 1) // RAYS_PER_ELEMENT,
                  [self.lib.intersect8_address, self.scene, QUERY_INCOHERENT, float(UNIT_TOLERANCE), n,
                   self.top_face_offset, self.flat_records, g.points, g.indices, g.face_object, origins, directions,
                   max_range, out.distance, out.normal, out.face, out.obj], g.device, threads=threads,
                  min_chunk=MIN_CHUNK // RAYS_PER_ELEMENT)

    def traverse_only(self, origins: wp.array, directions: wp.array, max_range: wp.array, distance: wp.array,
                      prim: wp.array, threads: int | None = None) -> None:
        """Benchmark only: the rays of :meth:`cast` through Embree's traversal with no post-pass (``distance``:
        Embree's own ``t`` or ``inf``; ``prim``: Embree's primitive id or -1), the ceiling of the cast's speed."""
        self.build()
        n = origins.shape[0]
        launch_1d(embree_traversal_kernel, (n + RAYS_PER_ELEMENT - 1) // RAYS_PER_ELEMENT,
                  [self.lib.intersect8_address, self.scene, QUERY_INCOHERENT, float(UNIT_TOLERANCE), n, origins,
                   directions, max_range, distance, prim], self.geometry.device, threads=threads,
                  min_chunk=MIN_CHUNK // RAYS_PER_ELEMENT)

    def describe(self) -> str:
        if not self.built:
            return f"embree (Embree {self.lib.version} on cpu; scene not built yet)"
        return (f"embree (Embree {self.lib.version} on cpu: {self.flat_triangles} flattened triangles, "
                f"{len(self._instances)} instance(s) of {self.prototypes} mesh(es))")

    def __del__(self) -> None:
        lib = getattr(self, "lib", None)
        if lib is None:
            return
        for geom in getattr(self, "_owned_geometries", []):
            lib.lib.rtcReleaseGeometry(geom)
        for scene in reversed(getattr(self, "_owned_scenes", [])):
            lib.lib.rtcReleaseScene(scene)
