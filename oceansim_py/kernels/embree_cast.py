"""Batch ray cast through Intel Embree 4 on the CPU (the ``embree`` ray-cast backend, ``oceansim_py.raycast``).

A Warp CPU kernel calls Embree's ``rtcIntersect1`` through its address (a native snippet), one ray per element,
and writes the same outputs as ``raycast_kernel``: distance (metres along the unit ray, ``inf`` for a miss), the
unit geometric normal of the world triangle turned to face the ray, the world triangle index and its node id.
The triangle index comes from Embree's ids: ``face = top_face_offset[top] + prim`` for instanced meshes, or
``face = flat_faces[prim]`` for the one flattened geometry (top id 0; ``face = prim`` when ``flat_faces`` is empty,
i.e. it holds every world triangle). The distance is then re-evaluated by Warp's own ray/triangle test on that
world triangle, so that it equals the ``warp`` backend's bit for bit whenever both find the same triangle (they
differ only at edge ties). Hits follow Warp's rule exactly:
``0 < t < max_range``; a zero or non-finite direction, a non-finite origin or a max_range that is not > 0 is
a miss. Warp launches CPU kernels from the engine's thread pool with the GIL released, so casts use all cores.

The snippet is C++ for the host; built for CUDA (every kernel module must build there) it compiles to a miss,
and the Embree backend refuses CUDA scenes before launching.
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.raycast import cast_direction, facing_normal

#: ``rtcIntersect1`` on one ray. The struct is Embree 4's ``RTCRayHit`` (``rtcore_ray.h``): the ray (48 bytes),
#: then the hit, whose ``instID[0]`` sits at byte 76 whatever ``RTC_MAX_INSTANCE_LEVEL_COUNT``; the tail padding
#: leaves room for deeper instance stacks and ``instPrimID``. Writes t into ``t_out[i]``, the primitive into
#: ``prim_out[i]`` and the top-level geometry id (the instance, else the geometry) into ``top_out[i]``.
_INTERSECT1 = r"""
#if defined(__CUDA_ARCH__)
    t_out[i] = INFINITY;
    prim_out[i] = -1;
    top_out[i] = -1;
    return 0;
#else
    struct alignas(16) OceansimRTCRayHit {
        float org_x, org_y, org_z, tnear, dir_x, dir_y, dir_z, time, tfar;
        unsigned int mask, id, flags;
        float Ng_x, Ng_y, Ng_z, u, v;
        unsigned int primID, geomID, instID[16];
        unsigned int padding[16];
    };
    typedef void (*oceansim_rtc_intersect1)(void*, OceansimRTCRayHit*, void*);
    OceansimRTCRayHit rh;
    rh.org_x = origin[0]; rh.org_y = origin[1]; rh.org_z = origin[2]; rh.tnear = 0.0f;
    rh.dir_x = direction[0]; rh.dir_y = direction[1]; rh.dir_z = direction[2]; rh.time = 0.0f;
    rh.tfar = max_t; rh.mask = 0xFFFFFFFFu; rh.id = 0u; rh.flags = 0u;
    rh.primID = 0xFFFFFFFFu; rh.geomID = 0xFFFFFFFFu; rh.instID[0] = 0xFFFFFFFFu;
    ((oceansim_rtc_intersect1)intersect1)((void*)rtc_scene, &rh, nullptr);
    if (rh.geomID == 0xFFFFFFFFu) {
        return 0;
    }
    t_out[i] = rh.tfar;
    prim_out[i] = (int)rh.primID;
    top_out[i] = (int)(rh.instID[0] != 0xFFFFFFFFu ? rh.instID[0] : rh.geomID);
    return 1;
#endif
"""


@wp.func_native(_INTERSECT1)
def embree_intersect1(intersect1: wp.uint64, rtc_scene: wp.uint64, origin: wp.vec3, direction: wp.vec3,
                      max_t: float, i: int, t_out: wp.array(dtype=wp.float32), prim_out: wp.array(dtype=wp.int32),
                      top_out: wp.array(dtype=wp.int32)) -> int:
    """First hit of one ray in an Embree scene (see the snippet above); 1 if it hit, 0 otherwise."""
    ...


_WOOP = r"""
    float t, u, v, sign;
    if (intersect_ray_tri_woop(origin, direction, a, b, c, t, u, v, sign, nullptr)) {
        return t;
    }
    return -1.0f;
"""


@wp.func_native(_WOOP)
def warp_triangle_distance(origin: wp.vec3, direction: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> float:
    """Distance along ``direction`` to triangle (a, b, c) by Warp's own ray/triangle test (the one inside
    ``wp.mesh_query_ray``), -1 when that test misses it: a face Embree found gets the distance, bit for bit,
    that the ``warp`` backend computes for it."""
    ...


@wp.func
def finite3(v: wp.vec3) -> bool:
    return wp.isfinite(v[0]) and wp.isfinite(v[1]) and wp.isfinite(v[2])


@wp.func
def ray_range(max_range: wp.array(dtype=wp.float32), i: int) -> float:
    r = max_range[0]
    if max_range.shape[0] > 1:
        r = max_range[i]
    return r


@wp.func
def ray_is_valid(o: wp.vec3, length: float, r: float) -> bool:
    """A ray Embree is given: finite origin, non-zero finite direction, max_range > 0 (else it is a miss)."""
    return length > 0.0 and wp.isfinite(length) and finite3(o) and r > 0.0


@wp.func
def embree_tfar(r: float) -> float:
    """Embree accepts ``t <= tfar``, Warp ``t < max_range``: the float just below ``r`` makes them one test."""
    tfar = r
    if wp.isfinite(r):
        tfar = wp.float32(wp.float64(r) * wp.float64(1.0 - 1.0 / 16777216.0))
    return tfar


@wp.func
def write_miss(i: int, distance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3),
               face: wp.array(dtype=wp.int32), obj: wp.array(dtype=wp.int32)):
    distance[i] = float(wp.inf)
    normal[i] = wp.vec3(0.0, 0.0, 0.0)
    face[i] = -1
    obj[i] = -1


@wp.func
def resolve_hit(i: int, o: wp.vec3, u: wp.vec3, r: float, top_face_offset: wp.array(dtype=wp.int32),
                flat_faces: wp.array(dtype=wp.int32), points: wp.array(dtype=wp.vec3),
                indices: wp.array(dtype=wp.int32), face_object: wp.array(dtype=wp.int32),
                distance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3), face: wp.array(dtype=wp.int32),
                obj: wp.array(dtype=wp.int32)):
    """Turn Embree's (t, primitive, top id) in ``distance/face/obj[i]`` into the world triangle, Warp's distance
    to it, its facing normal (rounded exactly as the warp backend's) and node id; a miss when that distance is not
    in (0, r)."""
    top = obj[i]
    f = int(0)
    if top == 0 and flat_faces.shape[0] > 0:
        f = flat_faces[face[i]]
    else:
        f = top_face_offset[top] + face[i]
    a = points[indices[3 * f]]
    b = points[indices[3 * f + 1]]
    c = points[indices[3 * f + 2]]
    t = warp_triangle_distance(o, u, a, b, c)
    if t < 0.0:  # Warp's test misses by a rounding where Embree's hit: keep Embree's distance
        t = distance[i]
    if t > 0.0 and t < r:
        distance[i] = t
        # wp.mesh_query_ray returns the normalised cross product and the warp backend's facing_normal normalises
        # it again: the same two roundings give the same last bit
        normal[i] = facing_normal(wp.normalize(wp.cross(b - a, c - a)), u)
        face[i] = f
        obj[i] = face_object[f]
    else:
        write_miss(i, distance, normal, face, obj)


@wp.kernel
def embree_raycast_kernel(intersect1: wp.uint64, rtc_scene: wp.uint64, top_face_offset: wp.array(dtype=wp.int32),
                          flat_faces: wp.array(dtype=wp.int32), points: wp.array(dtype=wp.vec3),
                          indices: wp.array(dtype=wp.int32), face_object: wp.array(dtype=wp.int32),
                          origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                          max_range: wp.array(dtype=wp.float32), distance: wp.array(dtype=wp.float32),
                          normal: wp.array(dtype=wp.vec3), face: wp.array(dtype=wp.int32),
                          obj: wp.array(dtype=wp.int32), start: int):
    """Batch ray cast, one ray per element (``max_range`` has one value, or one per ray), into the arrays
    ``raycast_kernel`` fills, with the same conventions. ``distance``/``face``/``obj`` hold Embree's t, primitive
    and top-level id between the intersection and ``resolve_hit``."""
    i = wp.tid() + start
    o = origins[i]
    d = directions[i]
    L = wp.length(d)
    r = ray_range(max_range, i)
    hit = int(0)
    if ray_is_valid(o, L, r):
        u = cast_direction(d, L)
        hit = embree_intersect1(intersect1, rtc_scene, o, u, embree_tfar(r), i, distance, face, obj)
        if hit == 1:
            resolve_hit(i, o, u, r, top_face_offset, flat_faces, points, indices, face_object, distance, normal,
                        face, obj)
    if hit == 0:
        write_miss(i, distance, normal, face, obj)
