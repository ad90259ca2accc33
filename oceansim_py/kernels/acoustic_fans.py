"""Kernels of the ray-fan sonars (docs/PHYSICS.md §3): side-scan, profiling (swath bathymetry) and single-beam.

They share the imaging sonar's machinery (kernels/imaging_sonar.py): each sensor is a fixed table of unit
sensor-frame (FLU) ray directions with the solid angle (sr) times beam pattern each ray stands for, grouped
into *channels* whose rays are contiguous (side-scan: port then starboard; profiling: its beams, most port
first; single-beam: one). One render of B poses is:

1. :func:`fan_ray_gen_kernel`, one element per ray: its world origin and direction; the scene's ray-cast backend
   (``Scene.raycast_into``) casts them (hit distance ``+inf`` for a miss); :func:`fan_ray_return_kernel`, one
   element per ray: stores the return ``s`` (docs/PHYSICS.md §1), its range bin (-1 outside
   [min_range, max_range)) and the label hit.
2. ``sonar_bin_kernel`` of kernels/imaging_sonar.py, one element per (pose, channel): gathers the channel's
   rays into its (B, n_range, n_channels) column, then the imaging sonar's normalisation and noise kernels.
3. Per sensor: :func:`first_return_kernel` (altitude = nearest hit of the fan, one element per pose),
   :func:`ground_range_kernel` (side-scan flat-bottom correction, one element per output bin) and
   :func:`profile_detect_kernel` (profiling bottom detection, one element per (pose, beam)).

Every element reads only what it owns in a fixed order (gathers, no atomics), so the outputs are
bit-identical whatever the batch size, the CPU chunking or the device. Ray ``(b, k)`` is at
``b * rays_per_pose + k``. Ranges in metres, angles in radians; noise streams as in kernels/random.py.
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.imaging_sonar import binned_return
from oceansim_py.kernels.random import stream_state
from oceansim_py.kernels.raycast import load_hit, sensor_to_world

#: Noise stream ids beyond the imaging sonar's (1 multiplicative speckle, 2 additive, used by its finish kernel
#: on the range series): range, beam angle and the speckle of a profiling beam's intensity.
STREAM_RANGE = wp.constant(3)
STREAM_ANGLE = wp.constant(4)
STREAM_BEAM_SPECKLE = wp.constant(5)


@wp.kernel
def fan_ray_gen_kernel(poses: wp.array(dtype=wp.transform), table: wp.array(dtype=wp.vec3), rays_per_pose: int,
                       origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3), start: int):
    """Ray i (pose i // rays_per_pose, table entry k): its world origin (the sensor position) and the unit FLU
    direction ``table[k]`` rotated into the world, for the scene's ray-cast backend."""
    i = wp.tid() + start
    b = i // rays_per_pose
    k = i - b * rays_per_pose
    pose = poses[b]
    origins[i] = wp.transform_get_translation(pose)
    directions[i] = sensor_to_world(pose, table[k])


@wp.kernel
def fan_ray_return_kernel(directions: wp.array(dtype=wp.vec3), hit_distance: wp.array(dtype=wp.float32),
                          hit_normal: wp.array(dtype=wp.vec3), hit_face: wp.array(dtype=wp.int32),
                          hit_obj: wp.array(dtype=wp.int32), object_reflectivity: wp.array(dtype=wp.float32),
                          object_label: wp.array(dtype=wp.int32), weights: wp.array(dtype=wp.float32),
                          rays_per_pose: int, min_range: float, range_resolution: float, n_range: int,
                          alpha_db_per_m: float, spreading: int, ray_value: wp.array(dtype=wp.float32),
                          ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32), start: int):
    """Store ray i's return, range bin and label from its hit (the backend's results for the rays of
    :func:`fan_ray_gen_kernel`; the hit distance, ``+inf`` for a miss, stays in ``hit_distance``).

    weights[k]: the solid angle (sr) times the beam pattern of table entry k. The return is
    s = mu * cos(psi) * w_k * 10^(-2 alpha r / 10) * [(1 m / r)^2 if spreading] for hits in the range window.
    """
    i = wp.tid() + start
    k = i - (i // rays_per_pose) * rays_per_pose
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, directions[i])
    ret = binned_return(h, object_reflectivity, object_label, weights[k], alpha_db_per_m, spreading, min_range,
                        range_resolution, n_range)
    ray_value[i] = ret.value
    ray_bin[i] = ret.cell
    ray_label[i] = ret.label


_NEAREST = r"""
    // the smallest of values[first .. first + count - 1], or ``none`` (see nearest_of): eight running minima (the
    // compiler vectorises them), then the lanes and the tail in order
    const float* v = (const float*)values.data + first;
    float lane[8];
    for (int l = 0; l < 8; ++l) {
        lane[l] = none;
    }
    int k = 0;
    for (; k + 8 <= count; k += 8) {
        for (int l = 0; l < 8; ++l) {
            const float x = v[k + l];
            lane[l] = lane[l] < x ? lane[l] : x;
        }
    }
    float m = none;
    for (int l = 0; l < 8; ++l) {
        m = m < lane[l] ? m : lane[l];
    }
    for (; k < count; ++k) {
        const float x = v[k];
        m = m < x ? m : x;
    }
    return m;
"""


@wp.func_native(_NEAREST)
def nearest_of(values: wp.array(dtype=wp.float32), first: int, count: int, none: float) -> float:
    """min(none, values[first], ..., values[first + count - 1]) of a contiguous float32 array, in native code the
    compiler vectorises (a Warp loop costs ~7 ns an element, the side-scan's 65 536 rays 0.45 ms). The minimum of
    values that are not NaN does not depend on the order (hit distances are finite or +inf, never NaN)."""
    ...


@wp.kernel
def first_return_kernel(ray_range: wp.array(dtype=wp.float32), rays_per_pose: int, seed: int, frame_index: int,
                        sensor_id: int, range_sigma: float, altitude: wp.array(dtype=wp.float32), start: int):
    """Element b: the nearest hit of pose b's fan (m; :func:`nearest_of` of its rays' hit distances, contiguous),
    plus N(0, range_sigma) noise keyed by (seed, frame_index + b, sensor_id, STREAM_RANGE, 0); NaN when no ray hit
    within max_range."""
    b = wp.tid() + start
    m = nearest_of(ray_range, b * rays_per_pose, rays_per_pose, float(wp.inf))
    if m < float(wp.inf):
        if range_sigma > 0.0:
            st = stream_state(seed, frame_index + b, sensor_id, STREAM_RANGE, 0)
            m = m + range_sigma * wp.randn(st)
        altitude[b] = m
    else:
        altitude[b] = float(wp.nan)


@wp.kernel
def ground_range_kernel(slant: wp.array3d(dtype=wp.float32), altitude: wp.array(dtype=wp.float32),
                        min_range: float, range_resolution: float, n_range: int, n_channels: int,
                        ground: wp.array3d(dtype=wp.float32), start: int):
    """Element (pose b, ground bin g, channel c): flat-bottom slant-to-ground-range correction.

    Ground bin g is centred at x_g = (g + 1/2) * range_resolution from the point below the sensor; with the
    altitude a (first return) it reads the slant series at r = sqrt(x_g^2 + a^2), interpolating linearly between
    slant bin centres (needs n_range >= 2). Bins reading outside the slant window, and frames without an
    altitude, are 0.
    """
    e = wp.tid() + start
    per_frame = n_range * n_channels
    b = e // per_frame
    cell = e - b * per_frame
    g = cell // n_channels
    c = cell - g * n_channels
    a = altitude[b]
    v = float(0.0)
    if not wp.isnan(a):
        x = (float(g) + 0.5) * range_resolution
        r = wp.sqrt(x * x + a * a)
        f = (r - min_range) / range_resolution - 0.5
        if f >= 0.0 and f <= float(n_range - 1):
            i0 = wp.min(int(wp.floor(f)), n_range - 2)
            u = f - float(i0)
            v = slant[b, i0, c]
            if u > 0.0:
                v = v * (1.0 - u) + slant[b, i0 + 1, c] * u
    ground[b, g, c] = v


@wp.kernel
def profile_detect_kernel(ray_value: wp.array(dtype=wp.float32), ray_bin: wp.array(dtype=wp.int32),
                          ray_label: wp.array(dtype=wp.int32), ray_range: wp.array(dtype=wp.float32),
                          rays_per_beam: int, rays_per_pose: int, n_beams: int,
                          beam_angles: wp.array(dtype=wp.float32), poses: wp.array(dtype=wp.transform),
                          seed: int, frame_index: int, sensor_id: int, range_sigma: float, angle_sigma: float,
                          speckle_sigma: float, bottom_range: wp.array2d(dtype=wp.float32),
                          intensity: wp.array2d(dtype=wp.float32), valid: wp.array2d(dtype=wp.int32),
                          label: wp.array2d(dtype=wp.int32), point_sensor: wp.array2d(dtype=wp.vec3),
                          point_world: wp.array2d(dtype=wp.vec3), start: int):
    """Element (pose b, beam j): bottom detection and sounding of one profiling beam.

    The detected range is the return-weighted mean range of the beam's hits in the range window (centre of
    gravity); the beam intensity is the sum of its returns times (1 + w_m), w_m ~ N(0, speckle_sigma). The
    range gets N(0, range_sigma) noise and the beam angle theta_j (rad from nadir, + starboard) N(0, angle_sigma)
    noise (streams STREAM_RANGE / STREAM_ANGLE / STREAM_BEAM_SPECKLE keyed by (seed, frame_index + b,
    sensor_id, j)). The sounding in the sensor frame is r * (0, -sin theta, -cos theta) and in the world the
    pose applied to it. A beam with no return (or only zero-energy ones) has valid 0, range and points NaN.
    """
    e = wp.tid() + start
    b = e // n_beams
    j = e - b * n_beams
    first = b * rays_per_pose + j * rays_per_beam
    sw = float(0.0)
    swr = float(0.0)
    peak = float(-1.0)
    lab = int(-1)
    for t in range(rays_per_beam):
        if ray_bin[first + t] >= 0:
            s = ray_value[first + t]
            sw = sw + s
            swr = swr + s * ray_range[first + t]
            if s > peak:
                peak = s
                lab = ray_label[first + t]
    if sw > 0.0:
        frame = frame_index + b
        r = swr / sw
        theta = beam_angles[j]
        if range_sigma > 0.0:
            r = r + range_sigma * wp.randn(stream_state(seed, frame, sensor_id, STREAM_RANGE, j))
        if angle_sigma > 0.0:
            theta = theta + angle_sigma * wp.randn(stream_state(seed, frame, sensor_id, STREAM_ANGLE, j))
        z = sw
        if speckle_sigma > 0.0:
            z = wp.max(sw * (1.0 + speckle_sigma * wp.randn(stream_state(seed, frame, sensor_id,
                                                                         STREAM_BEAM_SPECKLE, j))), 0.0)
        p = r * wp.vec3(0.0, -wp.sin(theta), -wp.cos(theta))
        bottom_range[b, j] = r
        intensity[b, j] = z
        valid[b, j] = 1
        label[b, j] = lab
        point_sensor[b, j] = p
        point_world[b, j] = wp.transform_point(poses[b], p)
    else:
        nan = float(wp.nan)
        bottom_range[b, j] = nan
        intensity[b, j] = 0.0
        valid[b, j] = 0
        label[b, j] = -1
        point_sensor[b, j] = wp.vec3(nan, nan, nan)
        point_world[b, j] = wp.vec3(nan, nan, nan)
