"""Batch ray cast through Intel Embree 4 on the CPU (the ``embree`` ray-cast backend, ``oceansim_py.raycast``).

One kernel element casts a packet of :data:`PACKET` consecutive rays with Embree's ``rtcIntersect8`` (native on
AVX2 CPUs, emulated by narrower packets elsewhere), called through its address from a native snippet that also
prepares the rays and resolves the hits, so that no per-ray work runs outside one tight C++ loop. It writes the
outputs of ``raycast_kernel`` with its conventions:

- the ray: a zero or non-finite direction, a non-finite origin or a max_range that is not > 0 is a miss; the
  direction is cast as ``kernels.raycast.cast_direction`` gives it (the same float operations);
- the hit: the nearest intersection with ``0 < t < max_range`` (Embree's ``t <= tfar`` with ``tfar`` the float
  just below ``max_range``);
- distance: Warp's own ray/triangle test (``wp::intersect_ray_tri_woop``, the one inside ``wp.mesh_query_ray``)
  re-evaluated on the triangle Embree found, so that it equals the ``warp`` backend's distance bit for bit whenever
  both find the same triangle (they differ only at edge ties); where that test misses by a rounding, Embree's
  ``t``. The eight lanes run it without branches, in lock step;
- the triangle: ``face = top_face_offset[top] + prim`` for an instanced mesh (``top``: Embree's instance id), or
  ``face = flat_faces[prim]`` for the one flattened geometry (top id 0; ``face = prim`` when ``flat_faces`` is
  empty, i.e. it holds every world triangle); ``obj = face_object[face]``;
- the normal: that world triangle's unit geometric normal turned to face the ray, computed from the world points
  with the operations (and so the roundings) of the ``warp`` backend: bit for bit its normal for the same face.

Packets never straddle launch chunks (a chunk is a whole number of packets), so a cast gives the same bytes on any
number of threads. Warp launches CPU kernels from the engine's thread pool with the GIL released, so casts use all
cores.

The snippet is C++ for the host; built for CUDA (every kernel module must build there) it compiles to nothing, and
the Embree backend refuses CUDA scenes before launching.
"""

from __future__ import annotations

import warp as wp

#: Rays per kernel element: one ``rtcIntersect8`` packet.
PACKET = wp.constant(8)

#: ``RTCRayQueryFlags`` for the packet cast: ``RTC_RAY_QUERY_FLAG_INCOHERENT`` (measured: ``_COHERENT`` is no faster,
#: even for sonar fans).
QUERY_INCOHERENT = 0

#: The packet cast. ``OceansimRTCRayHit8`` is Embree 4's ``RTCRayHit8`` (``rtcore_ray.h``, structure of arrays,
#: 32-byte aligned): the ray, then the hit, whose ``instID[0]`` follows ``geomID`` whatever
#: ``RTC_MAX_INSTANCE_LEVEL_COUNT``; the tail leaves room for deeper instance stacks and ``instPrimID``.
#: ``OceansimRTCIntersectArguments`` is ``RTCIntersectArguments`` (a null context: Embree's default one).
_CAST8 = r"""
#if defined(__CUDA_ARCH__)
    return 0;
#else
    struct alignas(32) OceansimRTCRayHit8 {
        float org_x[8], org_y[8], org_z[8], tnear[8], dir_x[8], dir_y[8], dir_z[8], time[8], tfar[8];
        unsigned int mask[8], id[8], flags[8];
        float Ng_x[8], Ng_y[8], Ng_z[8], u[8], v[8];
        unsigned int primID[8], geomID[8], instID[16][8];
        unsigned int padding[16][8];
    };
    struct OceansimRTCIntersectArguments {
        int flags;
        unsigned int feature_mask;
        void* context;
        void* filter;
        void* intersect;
        float min_width_distance_factor;
    };
    typedef void (*oceansim_rtc_intersect8)(const int*, void*, OceansimRTCRayHit8*, OceansimRTCIntersectArguments*);
    OceansimRTCRayHit8 rh;
    alignas(32) int valid[8];
    float range[8];
    int active = 0;
    for (int k = 0; k < 8; ++k) {
        const int i = i0 + k;
        valid[k] = 0;
        rh.org_x[k] = 0.0f; rh.org_y[k] = 0.0f; rh.org_z[k] = 0.0f; rh.tnear[k] = 0.0f;
        rh.dir_x[k] = 1.0f; rh.dir_y[k] = 0.0f; rh.dir_z[k] = 0.0f; rh.time[k] = 0.0f; rh.tfar[k] = -1.0f;
        rh.mask[k] = 0xFFFFFFFFu; rh.id[k] = 0u; rh.flags[k] = 0u;
        rh.primID[k] = 0xFFFFFFFFu; rh.geomID[k] = 0xFFFFFFFFu; rh.instID[0][k] = 0xFFFFFFFFu;
        if (i >= n) {
            continue;
        }
        const wp::vec3 o = origins[i];
        const wp::vec3 d = directions[i];
        const float length = wp::length(d);
        const float r = max_range.shape[0] > 1 ? max_range[i] : max_range[0];
        range[k] = r;
        if (!(length > 0.0f && __builtin_isfinite(length) && __builtin_isfinite(o[0]) && __builtin_isfinite(o[1])
              && __builtin_isfinite(o[2]) && r > 0.0f)) {
            continue;
        }
        // kernels.raycast.cast_direction
        const wp::vec3 u = wp::abs(length - 1.0f) > unit_tolerance ? wp::div(d, length) : d;
        // Embree accepts t <= tfar, Warp t < max_range: the float just below max_range makes them one test
        float tfar = r;
        if (__builtin_isfinite(r)) {
            tfar = (float)((double)r * (1.0 - 1.0 / 16777216.0));
        }
        rh.org_x[k] = o[0]; rh.org_y[k] = o[1]; rh.org_z[k] = o[2];
        rh.dir_x[k] = u[0]; rh.dir_y[k] = u[1]; rh.dir_z[k] = u[2];
        rh.tfar[k] = tfar;
        valid[k] = -1;
        active = 1;
    }
    if (active) {
        OceansimRTCIntersectArguments args;
        args.flags = query_flags;
        args.feature_mask = 0xFFFFFFFFu;
        args.context = nullptr;
        args.filter = nullptr;
        args.intersect = nullptr;
        args.min_width_distance_factor = 0.0f;
        ((oceansim_rtc_intersect8)intersect8)(valid, (void*)rtc_scene, &rh, &args);
    }
    // Resolve the hits in two passes over the lanes. 1: the world triangle of each hit and Warp's ray/triangle
    // test on it (wp::intersect_ray_tri_woop, the test inside wp.mesh_query_ray) written without branches, so the
    // eight lanes run in lock step (vectorised) rather than mispredicting per ray; every operation is Warp's, in
    // its order, so t is Warp's to the last bit. A lane where Warp's test takes its double-precision path (an
    // edge function exactly 0) calls the function itself; one where Warp's test misses keeps Embree's t.
    int fidx[8];
    float ax[8], ay[8], az[8], bx[8], by[8], bz[8], cx[8], cy[8], cz[8], tw[8];
    int hit[8], ok[8], exact[8];
    for (int k = 0; k < 8; ++k) {
        const int i = i0 + k;
        hit[k] = i < n && valid[k] && rh.geomID[k] != 0xFFFFFFFFu;
        fidx[k] = 0;
        if (hit[k]) {
            const unsigned int top = rh.instID[0][k] != 0xFFFFFFFFu ? rh.instID[0][k] : rh.geomID[k];
            const int prim = (int)rh.primID[k];
            fidx[k] = (top == 0u && flat_faces.shape[0] > 0) ? flat_faces[prim] : top_face_offset[top] + prim;
        }
        wp::vec3 a(0.0f, 0.0f, 0.0f), b(1.0f, 0.0f, 0.0f), c(0.0f, 1.0f, 0.0f);
        if (hit[k]) {
            a = points[indices[3 * fidx[k]]];
            b = points[indices[3 * fidx[k] + 1]];
            c = points[indices[3 * fidx[k] + 2]];
        }
        ax[k] = a[0]; ay[k] = a[1]; az[k] = a[2];
        bx[k] = b[0]; by[k] = b[1]; bz[k] = b[2];
        cx[k] = c[0]; cy[k] = c[1]; cz[k] = c[2];
    }
    for (int k = 0; k < 8; ++k) {
        const float dx = rh.dir_x[k], dy = rh.dir_y[k], dz = rh.dir_z[k];
        // max_dim (longest_axis of the absolute values: the first of equal ones)
        const float adx = wp::abs(dx), ady = wp::abs(dy), adz = wp::abs(dz);
        int kz = ady > adx ? 1 : 0;
        const float lmax = ady > adx ? ady : adx;
        kz = adz > lmax ? 2 : kz;
        int kx = kz == 2 ? 0 : kz + 1;
        int ky = kx == 2 ? 0 : kx + 1;
        const float dkz = kz == 0 ? dx : (kz == 1 ? dy : dz);
        const int swap = dkz < 0.0f;
        const int kx2 = swap ? ky : kx;
        ky = swap ? kx : ky;
        kx = kx2;
        const float dkx = kx == 0 ? dx : (kx == 1 ? dy : dz);
        const float dky = ky == 0 ? dx : (ky == 1 ? dy : dz);
        const float Sx = dkx / dkz;
        const float Sy = dky / dkz;
        const float Sz = 1.0f / dkz;
        const float Ax_ = ax[k] - rh.org_x[k], Ay_ = ay[k] - rh.org_y[k], Az_ = az[k] - rh.org_z[k];
        const float Bx_ = bx[k] - rh.org_x[k], By_ = by[k] - rh.org_y[k], Bz_ = bz[k] - rh.org_z[k];
        const float Cx_ = cx[k] - rh.org_x[k], Cy_ = cy[k] - rh.org_y[k], Cz_ = cz[k] - rh.org_z[k];
        const float Akx = kx == 0 ? Ax_ : (kx == 1 ? Ay_ : Az_);
        const float Aky = ky == 0 ? Ax_ : (ky == 1 ? Ay_ : Az_);
        const float Akz = kz == 0 ? Ax_ : (kz == 1 ? Ay_ : Az_);
        const float Bkx = kx == 0 ? Bx_ : (kx == 1 ? By_ : Bz_);
        const float Bky = ky == 0 ? Bx_ : (ky == 1 ? By_ : Bz_);
        const float Bkz = kz == 0 ? Bx_ : (kz == 1 ? By_ : Bz_);
        const float Ckx = kx == 0 ? Cx_ : (kx == 1 ? Cy_ : Cz_);
        const float Cky = ky == 0 ? Cx_ : (ky == 1 ? Cy_ : Cz_);
        const float Ckz = kz == 0 ? Cx_ : (kz == 1 ? Cy_ : Cz_);
        const float Ax = Akx - Sx * Akz;
        const float Ay = Aky - Sy * Akz;
        const float Bx = Bkx - Sx * Bkz;
        const float By = Bky - Sy * Bkz;
        const float Cx = Ckx - Sx * Ckz;
        const float Cy = Cky - Sy * Ckz;
        const float U = wp::diff_product(Cx, By, Cy, Bx);
        const float V = wp::diff_product(Ax, Cy, Ay, Cx);
        const float W = wp::diff_product(Bx, Ay, By, Ax);
        exact[k] = U == 0.0f || V == 0.0f || W == 0.0f;
        const float det = U + V + W;
        const float Az = Sz * Akz;
        const float Bz = Sz * Bkz;
        const float Cz = Sz * Ckz;
        const float T = U * Az + V * Bz + W * Cz;
        const int inside = !((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f));
        ok[k] = inside && det != 0.0f && !(wp::xorf(T, wp::sign_mask(det)) < 0.0f);
        const float rcpDet = 1.0f / det;
        tw[k] = T * rcpDet;
    }
    // 2: distances, normals, faces and objects
    int hits = 0;
    for (int k = 0; k < 8; ++k) {
        const int i = i0 + k;
        if (i >= n) {
            break;
        }
        const wp::vec3 u(rh.dir_x[k], rh.dir_y[k], rh.dir_z[k]);
        const wp::vec3 a(ax[k], ay[k], az[k]), b(bx[k], by[k], bz[k]), c(cx[k], cy[k], cz[k]);
        float t = rh.tfar[k];
        if (hit[k]) {
            if (exact[k]) {
                const wp::vec3 o(rh.org_x[k], rh.org_y[k], rh.org_z[k]);
                float tt, bu, bv, sign;
                if (wp::intersect_ray_tri_woop(o, u, a, b, c, tt, bu, bv, sign, nullptr)) {
                    t = tt;
                }
            } else if (ok[k]) {
                t = tw[k];
            }
        }
        if (hit[k] && t > 0.0f && t < range[k]) {
            const int f = fidx[k];
            // wp.mesh_query_ray's normalised cross product, normalised again and turned by facing_normal: the
            // warp backend's roundings, so the same last bit
            wp::vec3 m = wp::normalize(wp::normalize(wp::cross(b - a, c - a)));
            if (wp::dot(m, u) > 0.0f) {
                m = -m;
            }
            distance[i] = t;
            normal[i] = m;
            face[i] = f;
            obj[i] = face_object[f];
            ++hits;
        } else {
            distance[i] = INFINITY;
            normal[i] = wp::vec3(0.0f, 0.0f, 0.0f);
            face[i] = -1;
            obj[i] = -1;
        }
    }
    return hits;
#endif
"""


@wp.func_native(_CAST8)
def embree_cast_packet(intersect8: wp.uint64, rtc_scene: wp.uint64, query_flags: int, unit_tolerance: float,
                       i0: int, n: int, top_face_offset: wp.array(dtype=wp.int32),
                       flat_faces: wp.array(dtype=wp.int32), points: wp.array(dtype=wp.vec3),
                       indices: wp.array(dtype=wp.int32), face_object: wp.array(dtype=wp.int32),
                       origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                       max_range: wp.array(dtype=wp.float32), distance: wp.array(dtype=wp.float32),
                       normal: wp.array(dtype=wp.vec3), face: wp.array(dtype=wp.int32),
                       obj: wp.array(dtype=wp.int32)) -> int:
    """Cast rays ``i0 .. min(i0 + 8, n) - 1`` (see the snippet above) into the outputs; returns the hits."""
    ...


@wp.kernel
def embree_raycast_kernel(intersect8: wp.uint64, rtc_scene: wp.uint64, query_flags: int, unit_tolerance: float,
                          n: int, top_face_offset: wp.array(dtype=wp.int32), flat_faces: wp.array(dtype=wp.int32),
                          points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=wp.int32),
                          face_object: wp.array(dtype=wp.int32), origins: wp.array(dtype=wp.vec3),
                          directions: wp.array(dtype=wp.vec3), max_range: wp.array(dtype=wp.float32),
                          distance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3),
                          face: wp.array(dtype=wp.int32), obj: wp.array(dtype=wp.int32), start: int):
    """Batch ray cast of ``n`` rays, element p casting packet ``start + p`` (rays ``8 (start + p)`` on);
    ``max_range`` has one value, or one per ray. Launch ``ceil(n / PACKET)`` elements. ``unit_tolerance``:
    ``kernels.raycast.UNIT_TOLERANCE``; ``query_flags``: ``RTCRayQueryFlags`` (``QUERY_INCOHERENT``)."""
    p = wp.tid() + start
    embree_cast_packet(intersect8, rtc_scene, query_flags, unit_tolerance, p * PACKET, n, top_face_offset,
                       flat_faces, points, indices, face_object, origins, directions, max_range, distance, normal,
                       face, obj)
