"""Batch ray cast through Intel Embree 4 on the CPU (the ``embree`` ray-cast backend, ``oceansim_py.raycast``).

One kernel element casts :data:`PACKETS` packets of :data:`PACKET` consecutive rays, each with Embree's
``rtcIntersect8``, called through its address from a native snippet that also prepares the rays and resolves the
hits, so that no per-ray work runs outside one tight C++ loop. It writes the outputs of ``raycast_kernel`` with its
conventions:

- the ray: a direction shorter than ``kernels.raycast.MIN_DIRECTION_LENGTH`` (zero among them) or not finite, a
  non-finite origin or a max_range that is not > 0 is a miss; the
  direction is cast as ``kernels.raycast.cast_direction`` gives it (the same float operations);
- the hit: the nearest intersection with ``0 < t < max_range`` (Embree's ``t <= tfar`` with ``tfar`` the float
  just below ``max_range``);
- distance: Warp's own ray/triangle test (``wp::intersect_ray_tri_woop``, the one inside ``wp.mesh_query_ray``)
  re-evaluated on the triangle Embree found, so that it equals the ``warp`` backend's distance bit for bit whenever
  both find the same triangle (they differ only at edge ties); where that test misses by a rounding, Embree's
  ``t``;
- the triangle: for the flattened geometry (Embree top id 0) the record ``flat_records[prim]`` (see
  :data:`RECORD`) gives the world face, its object and its vertices; for an instance (top id ``k >= 1``)
  ``face = top_face_offset[k] + prim``, ``obj = face_object[face]`` and the vertices come from the world points;
- the normal: that world triangle's unit geometric normal turned to face the ray, with the operations (and so the
  roundings) of the ``warp`` backend: bit for bit its normal for the same face.

Why it is written this way (measured on a 2-core AMD EPYC with AVX2 and no AVX-512, Embree 4.4 from the embreex
wheel, per CPU second of one thread against Warp's BVH in the same run, fan and random rays on tank, pier, wreck,
harbour and a 1 M-triangle seabed, two runs of 300 k rays):

- ``rtcIntersect8``: the same rays through Embree alone (no post-pass) with each API, relative to
  ``rtcIntersect8``: ``rtcIntersect1`` in a loop median 0.97 (0.77 on the instanced harbour to 1.15 on one seabed
  fan run), ``rtcIntersect4`` 0.99 (0.90-1.12), ``rtcIntersect16`` 0.87 (0.71-1.05; 16-wide is emulated on AVX2).
  No width was consistently faster than 8; single rays lose most where instances add a second BVH level.
  ``RTC_RAY_QUERY_FLAG_COHERENT`` was no faster, even for sonar fans.
- Embree's traversal is most of the time. The rest was a median 27 % of the cast (10-44 %) before this layout; a
  profile showed ~40 % of it in the scalar ray set-up, most of the remainder in cache misses on the triangle
  gathers (``indices -> points``, ``face_object``), then the per-ray normal's square roots and divisions and the
  stores of the results stalling on their cache lines. Now the set-up runs the eight lanes in lock step
  (vectorised; the divisions of a non-unit direction only in a packet that has one), the flattened geometry's
  triangles are read from one 64-byte record each (vertices, the warp backend's unit normal computed once at
  build, face and object: one cache line instead of five), the record of each hit is prefetched as soon as Embree
  returns, while the element's second packet is traversed, Warp's ray test runs in lock step, an instanced hit's
  normal is computed only in a packet that has one, and the inputs and outputs 64 rays ahead are prefetched (the
  outputs for writing). The rest is now a median 15 % of the cast (0-27 %), the cast a median 1.15x faster
  (1.06-1.35x), and the results are the same bytes.
- The eight records of a packet are read as two 8 x 8 blocks of floats (two 32-byte loads per record; a lane without
  a record reads a constant miss record) and transposed with shuffles into the lock-step test's arrays: 16 vector
  loads instead of 104 scalar loads, 112 scalar stores and the vector reloads that could not be forwarded from them.
  Measured against the scalar gather (same run, 25 paired repeats of 100 k rays): medians of the paired ratios
  1.00-1.05x on the ten scene/ray rows (median 1.012x; 0.994x on the seabed fan), the unchanged traversal-only
  kernel timed alongside 0.98-1.01x (median 0.999x); the same bytes.
- The post-pass in lock step, with no per-lane branch or scalar loop on the flattened geometry's path. A profile
  of the kernel before (``perf`` sampling the JIT code on cpu-clock; tank fan, 100 k rays, one thread: the cast
  84 ns a ray, Embree 82 % of its samples, the ray set-up 6 %, the post-pass 10 %, ~8.7 ns a ray) put the
  post-pass's time in Warp's lock-step ray test 33 % (waiting on its four divisions), the output loop with its
  branches and scalar stores 21 %, the record transposition 15 %, a per-lane loop reading the face and object ids
  back from the transposed arrays 12 % (scalar loads of lanes just written by vector stores), the per-lane hit and
  record loop 12 % and the instanced path's checks 5 %, though no scene there has an instance. Now each lane's
  record pointer is selected without branches (the miss record for a lane without one), the instanced path (its
  faces, index rows, vertices, objects and normals) runs only in a packet with an instance's hit, the face and
  object ids are used as transposed, the outputs are selected in lock step (hit with 0 < t < max_range, or miss;
  Warp's double-precision path only in a packet that takes it) and a whole packet is written with six vector
  stores (the normals interleaved by shuffles). Against the previous kernel, interleaved in one process (25 paired
  repeats of 100 k rays, per CPU second of one thread): medians of the paired ratios tank fan 1.048x, random
  1.065x; wreck 1.035x, 1.060x; pier 1.032x, 1.054x; harbour 1.027x, 1.001x (its sea surface is an instance);
  the 1 M-triangle seabed 1.011x, 1.006x (its 64 MB of records come from memory); three earlier runs 1.03-1.10x on
  tank and wreck. The post-pass's share of the cast (traversal-only kernel timed alongside) went from 8-15 % to
  5-9 % on tank, wreck and pier, 7-12 % to 6-11 % on the seabed (harbour random 19 %, unchanged); the same bytes.
  A tank frame of the Oculus M750d 750 kHz device preset (interleaved, 30-40 frames): the bare cast 0.946x the
  time, the frame 0.959x at two threads (0.959x, 0.968x at one).
  Of that gain the vector stores are 1.5-2.5 % (the same kernel with a scalar store loop: 1.00-1.05x the previous
  kernel). What is left, by variants that skip a part (wrong outputs, timing only): on tank, Warp's ray test is
  3-4 % of the cast (the kernel without it 1.033-1.042x) and the stores nothing measurable (without them
  0.99-1.01x); on wreck neither is (1.00-1.02x): there the rest is the record reads (3.6 MB of records; the
  kernel reading the miss record for every lane: wreck 1.03-1.09x, pier 1.03-1.07x, tank 1.02-1.03x; records
  prefetched but not read: between the two, so partly the reads' latency, partly the lines they bring in).

Measured and rejected since (interleaved with this kernel in one process, per CPU second of one thread, medians of
paired ratios over 11-25 repeats of 100-200 k rays; this host's 2 vCPUs were shared with other load, so single
ratios carry about +-3 %):

- reordering the rays inside an element by direction before forming packets (a counting sort of 256 or 1024 rays on
  a 6- or 9-bit Morton key of the direction, quantised over [-1, 1] or over the block's own range; the results
  staged on the stack and written in ray order, or stored in key order with the outputs prefetched for writing).
  The order itself is worth 1.07-1.15x on random rays (measured by casting rays that arrive sorted so, at no cost)
  and 1.00-1.04x on sonar fans; the sort in the kernel costs 6-8 ns a ray (key pass, histogram and scatter, gather,
  staging) and its stack arrays crowd Embree's nodes out of L1, which left random rays at 0.98-1.04x and fans at
  0.89-1.02x (tank fan 0.89). The same bytes in every variant: a ray's result does not depend on its packet's other
  rays. A ray generator that can emit incoherent rays grouped by direction (bounce rays) gains the 1.07-1.15x.
- ``rtcIntersect1`` for the lanes of a packet whose directions span octants (Embree's hybrid traversal splits such a
  packet by octant and casts the parts a ray at a time anyway): 0.89-0.95x on random rays.
- the post-pass without branches on hit or miss (a miss record read in place of a missing hit's): within noise
  (0.98-1.01x); not kept.
- the rays of a whole packet read as three vector loads each of origins and directions deinterleaved by shuffles, and
  its outputs written as vector stores (the normals interleaved by shuffles), over the transposed record gather:
  paired median 1.000x (0.976-1.020x); not kept. (The two bullets above, on the earlier post-pass with its scalar
  per-lane loops; the lock-step post-pass above selects its outputs without branches and stores them as vectors.)
- with the lock-step post-pass above: its stages run over both packets in turn (each stage for packet 0, then
  packet 1, so that the out-of-order core overlaps the two packets' dependency chains) in place of one packet after
  the other: 0.95-1.02x (more stack arrays); the ray's part of Warp's test (the axis permutation and the three
  divisions of the direction) computed before ``rtcIntersect8`` so that it overlaps the traversal: 0.97-1.00x.

Packets never straddle launch chunks (a chunk is a whole number of elements), so a cast gives the same bytes on any
number of threads. Warp launches CPU kernels from the engine's thread pool with the GIL released, so casts use all
cores.

:func:`embree_traversal_kernel` is the same ray set-up and ``rtcIntersect8`` calls without the post-pass (Embree's
``t`` and primitive id only): ``benchmarks/raycast.py`` times it as the ceiling, Embree's own traversal speed.

The snippets are C++ for the host; built for CUDA (every kernel module must build there) they compile to nothing,
and the Embree backend refuses CUDA scenes before launching.
"""

from __future__ import annotations

import warp as wp

#: Rays per ``rtcIntersect8`` packet.
PACKET = 8

#: Packets per kernel element: the records of the first packet's hits are prefetched while the second is traversed
#: (1, 2 and 4 measured within noise of one another; 2 hides the prefetch latency without a larger stack frame;
#: with the lock-step post-pass, 3 and 4 again 0.98-1.02x of 2 on tank, wreck and pier, 1.01-1.02x on the seabed).
PACKETS = 2

#: Rays per kernel element.
RAYS_PER_ELEMENT = wp.constant(PACKET * PACKETS)

#: Float32 words per flattened-geometry record, one 64-byte cache line: vertices a, b, c (0-8), the warp backend's
#: unit normal ``normalize(normalize(cross(b - a, c - a)))`` (9-11), the world face (12) and its object (13) as
#: int32 bits, two zero words.
RECORD = 16

#: ``RTCRayQueryFlags`` for the packet cast: ``RTC_RAY_QUERY_FLAG_INCOHERENT`` (measured: ``_COHERENT`` is no faster,
#: even for sonar fans).
QUERY_INCOHERENT = 0

# Embree 4's RTCRayHit8 (rtcore_ray.h, structure of arrays, 32-byte aligned): the ray, then the hit, whose instID[0]
# follows geomID whatever RTC_MAX_INSTANCE_LEVEL_COUNT; the tail leaves room for deeper instance stacks and
# instPrimID. OceansimRTCIntersectArguments is RTCIntersectArguments (a null context: Embree's default one).
# Then the rays of each packet are read, checked and cast; what follows (in the loop over packets) uses its hits.
# @STATE@: the variant's own declarations; @PREFETCH_OUTPUTS@: its outputs' prefetch (for writing), as far ahead.
_CAST_PACKETS = r"""
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
    constexpr int NP = @PACKETS@;
    constexpr int AHEAD = 64;  // rays ahead whose inputs are prefetched
    OceansimRTCIntersectArguments args;
    args.flags = query_flags;
    args.feature_mask = 0xFFFFFFFFu;
    args.context = nullptr;
    args.filter = nullptr;
    args.intersect = nullptr;
    args.min_width_distance_factor = 0.0f;
    const int last = n - 1;
    {
        const int ahead = i0 + AHEAD < n ? i0 + AHEAD : last;
        for (int j = 0; j < 8 * NP * 12; j += 64) {
            __builtin_prefetch((const char*)&origins[ahead] + j);
            __builtin_prefetch((const char*)&directions[ahead] + j);
        }
        @PREFETCH_OUTPUTS@
    }
    OceansimRTCRayHit8 rhs[NP];
    alignas(32) int valids[NP][8];
    float ranges[NP][8];
    @STATE@
    for (int p = 0; p < NP; ++p) {
        OceansimRTCRayHit8& rh = rhs[p];
        int* valid = valids[p];
        float* range = ranges[p];
        const int b0 = i0 + 8 * p;
        float ox[8], oy[8], oz[8], dx[8], dy[8], dz[8];
        for (int k = 0; k < 8; ++k) {
            const int i = b0 + k < n ? b0 + k : last;
            const wp::vec3 o = origins[i];
            const wp::vec3 d = directions[i];
            ox[k] = o[0]; oy[k] = o[1]; oz[k] = o[2];
            dx[k] = d[0]; dy[k] = d[1]; dz[k] = d[2];
            range[k] = max_range.shape[0] > 1 ? max_range[i] : max_range[0];
        }
        // the eight lanes in lock step: wp::length, the validity test, kernels.raycast.cast_direction (wp::div:
        // each component over the length) and tfar (Embree accepts t <= tfar, Warp t < max_range: the float just
        // below max_range makes them one test)
        float length[8];
        int scale[8], rescale = 0;
        for (int k = 0; k < 8; ++k) {
            length[k] = wp::sqrt(dx[k] * dx[k] + dy[k] * dy[k] + dz[k] * dz[k]);
            scale[k] = wp::abs(length[k] - 1.0f) > unit_tolerance;
            rescale |= scale[k];
        }
        if (rescale) {  // a direction that is not unit: the divisions only then
            for (int k = 0; k < 8; ++k) {
                if (scale[k]) {
                    dx[k] = dx[k] / length[k]; dy[k] = dy[k] / length[k]; dz[k] = dz[k] / length[k];
                }
            }
        }
        int active = 0;
        for (int k = 0; k < 8; ++k) {
            const float r = range[k];
            // 2^-63: kernels.raycast.MIN_DIRECTION_LENGTH
            const int ok = (b0 + k < n) & (length[k] >= 1.0842021724855044e-19f) & __builtin_isfinite(length[k])
                           & __builtin_isfinite(ox[k]) & __builtin_isfinite(oy[k]) & __builtin_isfinite(oz[k])
                           & (r > 0.0f);
            const float ux = dx[k], uy = dy[k], uz = dz[k];
            const float tfar = __builtin_isfinite(r) ? (float)((double)r * (1.0 - 1.0 / 16777216.0)) : r;
            rh.org_x[k] = ok ? ox[k] : 0.0f; rh.org_y[k] = ok ? oy[k] : 0.0f; rh.org_z[k] = ok ? oz[k] : 0.0f;
            rh.dir_x[k] = ok ? ux : 1.0f; rh.dir_y[k] = ok ? uy : 0.0f; rh.dir_z[k] = ok ? uz : 0.0f;
            rh.tnear[k] = 0.0f; rh.time[k] = 0.0f; rh.tfar[k] = ok ? tfar : -1.0f;
            rh.mask[k] = 0xFFFFFFFFu; rh.id[k] = 0u; rh.flags[k] = 0u;
            rh.primID[k] = 0xFFFFFFFFu; rh.geomID[k] = 0xFFFFFFFFu; rh.instID[0][k] = 0xFFFFFFFFu;
            valid[k] = ok ? -1 : 0;
            active |= ok;
        }
        if (active) {
            ((oceansim_rtc_intersect8)intersect8)(valid, (void*)rtc_scene, &rh, &args);
            // a direction component below 1e-18 in magnitude (0 included): Embree's box test takes its reciprocal
            // as +1e18 whatever its sign (rcp_safe, min_rcp_input), so a ray lying in a BVH node's upper bounding
            // plane leaves the node at t = 0 and misses the face whose edge it runs along (a +x ray at z = 0.5 onto
            // an axis-aligned unit box's front face), which Warp's closed boxes hit. Such a lane is cast again with
            // those components set to -2^-40 (a negative reciprocal: the lower planes are then the open ones), each
            // combination, and a strictly nearer hit is kept: one combination keeps every node holding the triangle
            // Warp hits open (the triangle spans each of those axes, or the ray is in its plane and misses it in
            // both backends). Not -1e-18: an instance's inverse transform (a float reciprocal of its determinant,
            // 1 - 2^-24 for a translation) took that below the threshold again. The direction moves by 9.1e-13 rad
            // (9 nm at 10 km), and the distance and normal still come from Warp's test on the world triangle.
            int zeros[8], anyzero = 0;
            for (int k = 0; k < 8; ++k) {
                zeros[k] = valid[k] ? ((wp::abs(rh.dir_x[k]) < 1e-18f) | ((wp::abs(rh.dir_y[k]) < 1e-18f) << 1)
                                       | ((wp::abs(rh.dir_z[k]) < 1e-18f) << 2)) : 0;
                anyzero |= zeros[k];
            }
            for (int c = 1; anyzero && c < 8; ++c) {
                alignas(32) int again_valid[8];
                int again = 0;
                for (int k = 0; k < 8; ++k) {
                    again_valid[k] = (zeros[k] & c) == c ? -1 : 0;
                    again |= again_valid[k];
                }
                if (!again) {
                    continue;
                }
                OceansimRTCRayHit8 flipped;
                for (int k = 0; k < 8; ++k) {
                    flipped.org_x[k] = rh.org_x[k]; flipped.org_y[k] = rh.org_y[k]; flipped.org_z[k] = rh.org_z[k];
                    flipped.dir_x[k] = (c & 1) ? -9.094947e-13f : rh.dir_x[k];
                    flipped.dir_y[k] = (c & 2) ? -9.094947e-13f : rh.dir_y[k];
                    flipped.dir_z[k] = (c & 4) ? -9.094947e-13f : rh.dir_z[k];
                    flipped.tnear[k] = rh.tnear[k]; flipped.time[k] = rh.time[k]; flipped.tfar[k] = rh.tfar[k];
                    flipped.mask[k] = rh.mask[k]; flipped.id[k] = rh.id[k]; flipped.flags[k] = rh.flags[k];
                    flipped.primID[k] = 0xFFFFFFFFu; flipped.geomID[k] = 0xFFFFFFFFu; flipped.instID[0][k] = 0xFFFFFFFFu;
                }
                ((oceansim_rtc_intersect8)intersect8)(again_valid, (void*)rtc_scene, &flipped, &args);
                for (int k = 0; k < 8; ++k) {
                    if (again_valid[k] && flipped.geomID[k] != 0xFFFFFFFFu && flipped.tfar[k] < rh.tfar[k]) {
                        rh.tfar[k] = flipped.tfar[k]; rh.u[k] = flipped.u[k]; rh.v[k] = flipped.v[k];
                        rh.Ng_x[k] = flipped.Ng_x[k]; rh.Ng_y[k] = flipped.Ng_y[k]; rh.Ng_z[k] = flipped.Ng_z[k];
                        rh.primID[k] = flipped.primID[k]; rh.geomID[k] = flipped.geomID[k];
                        rh.instID[0][k] = flipped.instID[0][k];
                    }
                }
            }
        }
"""

# The full cast: right after each packet's cast, each hit's record (flattened geometry; the miss record for a lane
# without one) is located and prefetched, and, only in a packet with an instance's hit, its face, index row and object
# id; then, per packet, the eight records are transposed into one array per field, an instance's vertices, face and
# object patched in, Warp's ray/triangle test and the facing normals run over the eight lanes in lock step (every
# operation Warp's, in its order, so t and the normal are Warp's to the last bit; a lane where Warp's test takes its
# double-precision path, an edge function exactly 0, calls the function itself; one where it misses keeps Embree's
# t), the outputs are selected in lock step (hit with 0 < t < max_range, or miss) and a whole packet is written with
# vector stores (the arrays are contiguous: oceansim_py.raycast.backend), the normals interleaved by shuffles.
_FULL = _CAST_PACKETS + r"""
        // the hits: each lane's record (the miss record where there is none: the flattened geometry's hits only),
        // prefetched now; an instance's face and its index row and object only in a packet that has one
        int inst = 0;
        for (int k = 0; k < 8; ++k) {
            const int h = valid[k] != 0 && rh.geomID[k] != 0xFFFFFFFFu;
            const unsigned int top = rh.instID[0][k] != 0xFFFFFFFFu ? rh.instID[0][k] : rh.geomID[k];
            const int fromrec = h && top == 0u;
            const long long q = fromrec ? (long long)rh.primID[k] : 0;
            hits_[p][k] = h;
            recs[p][k] = fromrec ? records + @RECORD@ * q : miss_record;
            __builtin_prefetch(recs[p][k]);
            inst |= h && top != 0u;
        }
        insts[p] = inst;
        if (inst) {
            for (int k = 0; k < 8; ++k) {
                const unsigned int top = rh.instID[0][k] != 0xFFFFFFFFu ? rh.instID[0][k] : rh.geomID[k];
                fidxs[p][k] = -1;
                if (hits_[p][k] && top != 0u) {
                    fidxs[p][k] = top_face_offset[top] + (int)rh.primID[k];
                    __builtin_prefetch(&indices[3 * fidxs[p][k]]);
                    __builtin_prefetch(&face_object[fidxs[p][k]]);
                }
            }
        }
    }
    int hits = 0;
    for (int p = 0; p < NP; ++p) {
        const OceansimRTCRayHit8& rh = rhs[p];
        const int* hit = hits_[p];
        const int* fidx = fidxs[p];
        const float* const* rec = recs[p];
        const float* range = ranges[p];
        const int b0 = i0 + 8 * p;
        int via[8], vib[8], vic[8];
        if (insts[p]) {
            for (int k = 0; k < 8; ++k) {
                if (fidx[k] >= 0) {
                    via[k] = indices[3 * fidx[k]]; vib[k] = indices[3 * fidx[k] + 1]; vic[k] = indices[3 * fidx[k] + 2];
                    __builtin_prefetch(&points[via[k]]);
                    __builtin_prefetch(&points[vib[k]]);
                    __builtin_prefetch(&points[vic[k]]);
                }
            }
        }
        // the eight records as two 8 x 8 blocks of floats, transposed with shuffles into one array per field: 16
        // vector loads instead of 104 scalar loads and stores
        typedef float oceansim_v8 __attribute__((vector_size(32)));
        typedef float oceansim_v8u __attribute__((vector_size(32), aligned(4)));
        alignas(32) float ax[8], ay[8], az[8], bx[8], by[8], bz[8], cx[8], cy[8], cz[8], mx0[8], my0[8], mz0[8];
        alignas(32) float facebits[8], objbits[8];
        {
            float* const fields[16] = {ax, ay, az, bx, by, bz, cx, cy, cz, mx0, my0, mz0, facebits, objbits,
                                       nullptr, nullptr};
            for (int half = 0; half < 2; ++half) {
                oceansim_v8 r[8];
                for (int k = 0; k < 8; ++k) {
                    r[k] = *(const oceansim_v8u*)(rec[k] + 8 * half);
                }
                const oceansim_v8 t0 = __builtin_shufflevector(r[0], r[1], 0, 8, 1, 9, 4, 12, 5, 13);
                const oceansim_v8 t1 = __builtin_shufflevector(r[0], r[1], 2, 10, 3, 11, 6, 14, 7, 15);
                const oceansim_v8 t2 = __builtin_shufflevector(r[2], r[3], 0, 8, 1, 9, 4, 12, 5, 13);
                const oceansim_v8 t3 = __builtin_shufflevector(r[2], r[3], 2, 10, 3, 11, 6, 14, 7, 15);
                const oceansim_v8 t4 = __builtin_shufflevector(r[4], r[5], 0, 8, 1, 9, 4, 12, 5, 13);
                const oceansim_v8 t5 = __builtin_shufflevector(r[4], r[5], 2, 10, 3, 11, 6, 14, 7, 15);
                const oceansim_v8 t6 = __builtin_shufflevector(r[6], r[7], 0, 8, 1, 9, 4, 12, 5, 13);
                const oceansim_v8 t7 = __builtin_shufflevector(r[6], r[7], 2, 10, 3, 11, 6, 14, 7, 15);
                const oceansim_v8 u0 = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
                const oceansim_v8 u1 = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
                const oceansim_v8 u2 = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
                const oceansim_v8 u3 = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
                const oceansim_v8 u4 = __builtin_shufflevector(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13);
                const oceansim_v8 u5 = __builtin_shufflevector(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15);
                const oceansim_v8 u6 = __builtin_shufflevector(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13);
                const oceansim_v8 u7 = __builtin_shufflevector(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15);
                float* const* f = fields + 8 * half;
                *(oceansim_v8*)f[0] = __builtin_shufflevector(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11);
                *(oceansim_v8*)f[1] = __builtin_shufflevector(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11);
                *(oceansim_v8*)f[2] = __builtin_shufflevector(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11);
                *(oceansim_v8*)f[3] = __builtin_shufflevector(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11);
                *(oceansim_v8*)f[4] = __builtin_shufflevector(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15);
                *(oceansim_v8*)f[5] = __builtin_shufflevector(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15);
                if (half == 0) {
                    *(oceansim_v8*)f[6] = __builtin_shufflevector(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15);
                    *(oceansim_v8*)f[7] = __builtin_shufflevector(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15);
                }
            }
        }
        if (insts[p]) {  // an instance's triangle: its world vertices, face and object
            for (int k = 0; k < 8; ++k) {
                if (fidx[k] >= 0) {
                    const wp::vec3 a = points[via[k]], b = points[vib[k]], c = points[vic[k]];
                    ax[k] = a[0]; ay[k] = a[1]; az[k] = a[2];
                    bx[k] = b[0]; by[k] = b[1]; bz[k] = b[2];
                    cx[k] = c[0]; cy[k] = c[1]; cz[k] = c[2];
                    facebits[k] = __builtin_bit_cast(float, fidx[k]);
                    objbits[k] = __builtin_bit_cast(float, face_object[fidx[k]]);
                }
            }
        }
        alignas(32) float tr[8], nx[8], ny[8], nz[8];
        int exact[8];
        for (int k = 0; k < 8; ++k) {
            // wp::intersect_ray_tri_woop without branches
            const float dx = rh.dir_x[k], dy = rh.dir_y[k], dz = rh.dir_z[k];
            const float adx = wp::abs(dx), ady = wp::abs(dy), adz = wp::abs(dz);
            int kz = ady > adx ? 1 : 0;  // max_dim: longest_axis of the absolute values, the first of equal ones
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
            exact[k] = hit[k] & (U == 0.0f || V == 0.0f || W == 0.0f);
            const float det = U + V + W;
            const float Az = Sz * Akz;
            const float Bz = Sz * Bkz;
            const float Cz = Sz * Ckz;
            const float T = U * Az + V * Bz + W * Cz;
            const int inside = !((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f));
            const int ok = inside && det != 0.0f && !(wp::xorf(T, wp::sign_mask(det)) < 0.0f);
            const float rcpDet = 1.0f / det;
            tr[k] = ok ? T * rcpDet : rh.tfar[k];  // where Warp's test misses by a rounding: Embree's t
            // the record's unit normal turned to face the ray
            const float mx = mx0[k], my = my0[k], mz = mz0[k];
            const int flip = mx * dx + my * dy + mz * dz > 0.0f;
            nx[k] = flip ? -mx : mx; ny[k] = flip ? -my : my; nz[k] = flip ? -mz : mz;
        }
        int anyexact = 0;
        for (int k = 0; k < 8; ++k) {
            anyexact |= exact[k];
        }
        if (anyexact) {  // an edge function exactly 0: Warp's test itself (its double-precision path)
            for (int k = 0; k < 8; ++k) {
                if (exact[k]) {
                    const wp::vec3 o(rh.org_x[k], rh.org_y[k], rh.org_z[k]);
                    const wp::vec3 u(rh.dir_x[k], rh.dir_y[k], rh.dir_z[k]);
                    const wp::vec3 a(ax[k], ay[k], az[k]), b(bx[k], by[k], bz[k]), c(cx[k], cy[k], cz[k]);
                    float tt, bu, bv, sign;
                    tr[k] = wp::intersect_ray_tri_woop(o, u, a, b, c, tt, bu, bv, sign, nullptr) ? tt : rh.tfar[k];
                }
            }
        }
        if (insts[p]) {
            // an instance's hit: wp.mesh_query_ray's normalised cross product normalised again
            // (kernels.raycast.facing_normal), wp::normalize's operations written out, then turned to face the ray
            for (int k = 0; k < 8; ++k) {
                if (fidx[k] < 0) {
                    continue;
                }
                const float ex = bx[k] - ax[k], ey = by[k] - ay[k], ez = bz[k] - az[k];
                const float fx = cx[k] - ax[k], fy = cy[k] - ay[k], fz = cz[k] - az[k];
                float mx = ey * fz - ez * fy, my = ez * fx - ex * fz, mz = ex * fy - ey * fx;
                float l = wp::sqrt(mx * mx + my * my + mz * mz);
                const int pos1 = l > 0.0f;
                mx = pos1 ? mx / l : 0.0f; my = pos1 ? my / l : 0.0f; mz = pos1 ? mz / l : 0.0f;
                l = wp::sqrt(mx * mx + my * my + mz * mz);
                const int pos2 = l > 0.0f;
                mx = pos2 ? mx / l : 0.0f; my = pos2 ? my / l : 0.0f; mz = pos2 ? mz / l : 0.0f;
                const int flip = mx * rh.dir_x[k] + my * rh.dir_y[k] + mz * rh.dir_z[k] > 0.0f;
                nx[k] = flip ? -mx : mx; ny[k] = flip ? -my : my; nz[k] = flip ? -mz : mz;
            }
        }
        // the outputs in lock step: a hit with 0 < t < max_range, or a miss
        alignas(32) float od[8], onx[8], ony[8], onz[8];
        alignas(32) int of[8], oo[8];
        for (int k = 0; k < 8; ++k) {
            const float t = tr[k];
            const int keep = hit[k] & (t > 0.0f) & (t < range[k]);
            od[k] = keep ? t : INFINITY;
            onx[k] = keep ? nx[k] : 0.0f; ony[k] = keep ? ny[k] : 0.0f; onz[k] = keep ? nz[k] : 0.0f;
            of[k] = keep ? __builtin_bit_cast(int, facebits[k]) : -1;
            oo[k] = keep ? __builtin_bit_cast(int, objbits[k]) : -1;
            hits += keep;
        }
        if (b0 + 8 <= n) {  // a whole packet: vector stores (the arrays are contiguous), the normals interleaved
            const oceansim_v8 X = *(const oceansim_v8*)onx, Y = *(const oceansim_v8*)ony, Z = *(const oceansim_v8*)onz;
            const oceansim_v8 xy0 = __builtin_shufflevector(X, Y, 0, 8, -1, 1, 9, -1, 2, 10);
            const oceansim_v8 xy1 = __builtin_shufflevector(X, Y, -1, 3, 11, -1, 4, 12, -1, 5);
            const oceansim_v8 xy2 = __builtin_shufflevector(X, Y, 13, -1, 6, 14, -1, 7, 15, -1);
            float* nrm = (float*)&normal[b0];
            *(oceansim_v8u*)nrm = __builtin_shufflevector(xy0, Z, 0, 1, 8, 3, 4, 9, 6, 7);
            *(oceansim_v8u*)(nrm + 8) = __builtin_shufflevector(xy1, Z, 10, 1, 2, 11, 4, 5, 12, 7);
            *(oceansim_v8u*)(nrm + 16) = __builtin_shufflevector(xy2, Z, 0, 13, 2, 3, 14, 5, 6, 15);
            *(oceansim_v8u*)&distance[b0] = *(const oceansim_v8*)od;
            typedef int oceansim_v8i __attribute__((vector_size(32)));
            typedef int oceansim_v8iu __attribute__((vector_size(32), aligned(4)));
            *(oceansim_v8iu*)&face[b0] = *(const oceansim_v8i*)of;
            *(oceansim_v8iu*)&obj[b0] = *(const oceansim_v8i*)oo;
        } else {
            for (int k = 0; k < 8 && b0 + k < n; ++k) {
                distance[b0 + k] = od[k];
                normal[b0 + k] = wp::vec3(onx[k], ony[k], onz[k]);
                face[b0 + k] = of[k];
                obj[b0 + k] = oo[k];
            }
        }
    }
    return hits;
#endif
"""
# the outputs as far ahead, for writing: their cache lines are then owned before the stores reach them
_PREFETCH_OUTPUTS = r"""__builtin_prefetch(&distance[ahead], 1);
        __builtin_prefetch(&face[ahead], 1);
        __builtin_prefetch(&obj[ahead], 1);
        for (int j = 0; j < 8 * NP * 12; j += 64) {
            __builtin_prefetch((const char*)&normal[ahead] + j, 1);
        }"""
# the full cast's state: per packet, its lanes' hits (0/1), instances' faces (-1: none; set only in a packet with an
# instance's hit, insts[p]) and record pointers, and the miss record (the unit triangle, normal +z, face and object
# -1) that lanes without a record read
_FULL_STATE = r"""int hits_[NP][8], fidxs[NP][8], insts[NP];
    const float* recs[NP][8];
    const float* const records = flat_records.data;
    alignas(64) const float miss_record[@RECORD@] = {0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f,
                                                     0.0f, 0.0f, 1.0f, __builtin_bit_cast(float, -1),
                                                     __builtin_bit_cast(float, -1), 0.0f, 0.0f};"""
_FULL = (_FULL.replace("@STATE@", _FULL_STATE)
         .replace("@PREFETCH_OUTPUTS@", _PREFETCH_OUTPUTS)
         .replace("@PACKETS@", str(PACKETS)).replace("@RECORD@", str(RECORD)))

# Traversal alone (the benchmark's ceiling): Embree's t and primitive id, no post-pass.
_TRAVERSAL = _CAST_PACKETS + r"""
        for (int k = 0; k < 8; ++k) {
            const int i = b0 + k;
            if (i >= n) {
                break;
            }
            const int h = valid[k] && rh.geomID[k] != 0xFFFFFFFFu;
            distance[i] = h ? rh.tfar[k] : INFINITY;
            prim[i] = h ? (int)rh.primID[k] : -1;
            hits += h;
        }
    }
    return hits;
#endif
"""
_TRAVERSAL = (_TRAVERSAL.replace("@STATE@", "int hits = 0;").replace("@PACKETS@", str(PACKETS))
              .replace("@PREFETCH_OUTPUTS@", "__builtin_prefetch(&distance[ahead], 1);\n"
                       "        __builtin_prefetch(&prim[ahead], 1);"))

# One flattened-geometry record (RECORD): the normal with wp::normalize / wp::cross, the warp backend's operations.
_RECORD_SNIPPET = r"""
#if defined(__CUDA_ARCH__)
    return;
#else
    const int f = faces[q];
    const wp::vec3 a = points[indices[3 * f]];
    const wp::vec3 b = points[indices[3 * f + 1]];
    const wp::vec3 c = points[indices[3 * f + 2]];
    const wp::vec3 m = wp::normalize(wp::normalize(wp::cross(b - a, c - a)));
    float* r = &records[@RECORD@ * q];
    r[0] = a[0]; r[1] = a[1]; r[2] = a[2];
    r[3] = b[0]; r[4] = b[1]; r[5] = b[2];
    r[6] = c[0]; r[7] = c[1]; r[8] = c[2];
    r[9] = m[0]; r[10] = m[1]; r[11] = m[2];
    r[12] = __builtin_bit_cast(float, f);
    r[13] = __builtin_bit_cast(float, face_object[f]);
    r[14] = 0.0f; r[15] = 0.0f;
#endif
""".replace("@RECORD@", str(RECORD))


@wp.func_native(_FULL)
def embree_cast_element(intersect8: wp.uint64, rtc_scene: wp.uint64, query_flags: int, unit_tolerance: float,
                        i0: int, n: int, top_face_offset: wp.array(dtype=wp.int32),
                        flat_records: wp.array(dtype=wp.float32), points: wp.array(dtype=wp.vec3),
                        indices: wp.array(dtype=wp.int32), face_object: wp.array(dtype=wp.int32),
                        origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                        max_range: wp.array(dtype=wp.float32), distance: wp.array(dtype=wp.float32),
                        normal: wp.array(dtype=wp.vec3), face: wp.array(dtype=wp.int32),
                        obj: wp.array(dtype=wp.int32)) -> int:
    """Cast rays ``i0 .. min(i0 + RAYS_PER_ELEMENT, n) - 1`` (see the snippet above) into the outputs; returns the
    hits."""
    ...


@wp.func_native(_TRAVERSAL)
def embree_traverse_element(intersect8: wp.uint64, rtc_scene: wp.uint64, query_flags: int, unit_tolerance: float,
                            i0: int, n: int, origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                            max_range: wp.array(dtype=wp.float32), distance: wp.array(dtype=wp.float32),
                            prim: wp.array(dtype=wp.int32)) -> int:
    """Embree's traversal alone for rays ``i0 .. min(i0 + RAYS_PER_ELEMENT, n) - 1``; returns the hits."""
    ...


@wp.func_native(_RECORD_SNIPPET)
def embree_write_record(q: int, faces: wp.array(dtype=wp.int32), points: wp.array(dtype=wp.vec3),
                        indices: wp.array(dtype=wp.int32), face_object: wp.array(dtype=wp.int32),
                        records: wp.array(dtype=wp.float32)):
    """Write record ``q`` (:data:`RECORD`) of world face ``faces[q]``."""
    ...


@wp.kernel
def embree_raycast_kernel(intersect8: wp.uint64, rtc_scene: wp.uint64, query_flags: int, unit_tolerance: float,
                          n: int, top_face_offset: wp.array(dtype=wp.int32), flat_records: wp.array(dtype=wp.float32),
                          points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=wp.int32),
                          face_object: wp.array(dtype=wp.int32), origins: wp.array(dtype=wp.vec3),
                          directions: wp.array(dtype=wp.vec3), max_range: wp.array(dtype=wp.float32),
                          distance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3),
                          face: wp.array(dtype=wp.int32), obj: wp.array(dtype=wp.int32), start: int):
    """Batch ray cast of ``n`` rays, element e casting rays ``RAYS_PER_ELEMENT * (start + e)`` on; ``max_range``
    has one value, or one per ray. Launch ``ceil(n / RAYS_PER_ELEMENT)`` elements. ``flat_records``: one
    :data:`RECORD` per triangle of the flattened geometry, in Embree's primitive order. ``unit_tolerance``:
    ``kernels.raycast.UNIT_TOLERANCE``; ``query_flags``: ``RTCRayQueryFlags`` (``QUERY_INCOHERENT``)."""
    e = wp.tid() + start
    embree_cast_element(intersect8, rtc_scene, query_flags, unit_tolerance, e * RAYS_PER_ELEMENT, n, top_face_offset,
                        flat_records, points, indices, face_object, origins, directions, max_range, distance, normal,
                        face, obj)


@wp.kernel
def embree_traversal_kernel(intersect8: wp.uint64, rtc_scene: wp.uint64, query_flags: int, unit_tolerance: float,
                            n: int, origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                            max_range: wp.array(dtype=wp.float32), distance: wp.array(dtype=wp.float32),
                            prim: wp.array(dtype=wp.int32), start: int):
    """Benchmark only: the rays of :func:`embree_raycast_kernel` through Embree with no post-pass (``distance``:
    Embree's ``t`` or ``inf``; ``prim``: Embree's primitive id or -1). Launch as that kernel."""
    e = wp.tid() + start
    embree_traverse_element(intersect8, rtc_scene, query_flags, unit_tolerance, e * RAYS_PER_ELEMENT, n, origins,
                            directions, max_range, distance, prim)


@wp.kernel
def embree_records_kernel(faces: wp.array(dtype=wp.int32), points: wp.array(dtype=wp.vec3),
                          indices: wp.array(dtype=wp.int32), face_object: wp.array(dtype=wp.int32),
                          records: wp.array(dtype=wp.float32)):
    """Records (:data:`RECORD`) of the world faces ``faces`` (the flattened geometry, in Embree's primitive order)
    into ``records`` (``RECORD * len(faces)`` floats)."""
    q = wp.tid()
    embree_write_record(q, faces, points, indices, face_object, records)
