"""DVL kernels: the Janus beams of a batch of poses (rays for the scene's ray-cast backend, then the beam
ranges and velocities from the hits, relative to the bottom or, surface tracking, to the sea surface), then each
sample's velocity.

Frames: poses are sensor-to-world ``wp.transform``; beam directions and velocities are in the sensor frame
(FLU). Beam ``k`` of sample ``b`` is element ``b * 4 + k``. Noise: stream 0 = range, stream 1 = beam
velocity, stream 2 = water-track beam velocity; frame = ``frame0 + b``, element = ``k``, so a sample's noise does not depend on the batch it is in.
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.random import stream_state
from oceansim_py.kernels.raycast import load_hit, sensor_to_world

#: Beams per sample (a 4-beam Janus array).
NUM_BEAMS = 4
RANGE_STREAM = 0
VELOCITY_STREAM = 1


@wp.kernel
def dvl_beam_rays_kernel(poses: wp.array(dtype=wp.transform), beam_dirs: wp.array(dtype=wp.vec3),
                         origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3), start: int):
    """Element (sample b, beam k): the beam's world origin (the sensor position) and unit world direction, for the
    scene's ray-cast backend."""
    i = wp.tid() + start
    b = i // 4
    k = i - b * 4
    pose = poses[b]
    origins[i] = wp.transform_get_translation(pose)
    directions[i] = sensor_to_world(pose, beam_dirs[k])


@wp.kernel
def dvl_beams_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                     hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                     hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                     velocities: wp.array(dtype=wp.vec3), beam_dirs: wp.array(dtype=wp.vec3), min_range: float,
                     max_range: float, surface_plane: int, surface_z: float, mesh_min: wp.vec2, mesh_max: wp.vec2,
                     target_velocity: wp.array(dtype=wp.vec3),
                     target_moving: int, range_sigma: float, velocity_sigma: float, noise: int, seed: int,
                     frame0: int, sensor: int, beam_range: wp.array(dtype=wp.float32),
                     beam_velocity: wp.array(dtype=wp.float32), beam_valid: wp.array(dtype=wp.int32), start: int):
    """Element (sample b, beam k), from the beam's hit (cast up to max_range by the backend): a hit at or beyond
    ``min_range`` is valid and gets the range (+ N(0, range_sigma)) and the beam velocity ``d_k . (v - u_i)``
    (+ N(0, velocity_sigma)); else NaN and invalid.

    ``surface_plane`` 1 (surface tracking): the flat surface z = ``surface_z`` (world, m) is a target too, met by a
    rising beam from below at ``(surface_z - o_z) / dir_z`` when that is nearer than the mesh hit and within
    ``max_range``, and where the crossing lies outside the sea-surface mesh's horizontal extent [``mesh_min``,
    ``mesh_max``] (world x, y, m; an empty box, min > max, without a mesh): beyond the wave patch the surface is the
    flat plane. ``target_moving`` 1: ``u_i = target_velocity[i]``, the velocity of what
    beam i hit (sensor frame, m/s: the sea surface's orbital velocity, zero for other geometry); else u_i = 0."""
    i = wp.tid() + start
    b = i // 4
    k = i - b * 4
    d = beam_dirs[k]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, directions[i])
    hit = h.hit
    r = h.distance
    if surface_plane != 0:
        rise = directions[i][2]
        below = surface_z - origins[i][2]
        if rise > 0.0 and below >= 0.0:
            t = below / rise
            x = origins[i][0] + t * directions[i][0]
            y = origins[i][1] + t * directions[i][1]
            on_mesh = x >= mesh_min[0] and x <= mesh_max[0] and y >= mesh_min[1] and y <= mesh_max[1]
            if t <= max_range and (hit == 0 or t < r) and not on_mesh:
                hit = 1
                r = t
    if hit == 1 and r >= min_range:
        u = wp.vec3(0.0, 0.0, 0.0)
        if target_moving != 0:
            u = target_velocity[i]
        v = wp.dot(d, velocities[b] - u)
        if noise != 0:
            sr = stream_state(seed, frame0 + b, sensor, RANGE_STREAM, k)
            sv = stream_state(seed, frame0 + b, sensor, VELOCITY_STREAM, k)
            r = r + range_sigma * wp.randn(sr)
            v = v + velocity_sigma * wp.randn(sv)
        beam_range[i] = r
        beam_velocity[i] = v
        beam_valid[i] = 1
    else:
        beam_range[i] = wp.nan
        beam_velocity[i] = wp.nan
        beam_valid[i] = 0


@wp.kernel
def dvl_solve_kernel(beam_dirs: wp.array(dtype=wp.vec3), beam_range: wp.array(dtype=wp.float32),
                     beam_velocity: wp.array(dtype=wp.float32), beam_valid: wp.array(dtype=wp.int32),
                     velocity: wp.array(dtype=wp.vec3), valid: wp.array(dtype=wp.int32),
                     altitude: wp.array(dtype=wp.float32), start: int):
    """Element b: least-squares velocity over the valid beams, ``(sum d d^T)^-1 sum d v_k`` (needs >= 3 beams,
    else NaN and invalid), and the altitude: mean of ``r_k * |d_k.z|`` (sensor-frame vertical distance to the
    tracked bottom or surface) over the valid beams (NaN when none is valid)."""
    b = wp.tid() + start
    a = wp.mat33(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    rhs = wp.vec3(0.0, 0.0, 0.0)
    count = int(0)
    alt = float(0.0)
    for k in range(4):
        i = b * 4 + k
        if beam_valid[i] == 1:
            d = beam_dirs[k]
            a = a + wp.outer(d, d)
            rhs = rhs + d * beam_velocity[i]
            alt = alt + beam_range[i] * wp.abs(d[2])
            count = count + 1
    if count >= 3:
        velocity[b] = wp.inverse(a) * rhs
        valid[b] = 1
    else:
        velocity[b] = wp.vec3(wp.nan, wp.nan, wp.nan)
        valid[b] = 0
    if count > 0:
        altitude[b] = alt / float(count)
    else:
        altitude[b] = wp.nan


WATER_STREAM = 2


@wp.kernel
def dvl_water_beams_kernel(velocities: wp.array(dtype=wp.vec3), beam_dirs: wp.array(dtype=wp.vec3),
                           beam_range: wp.array(dtype=wp.float32), layer_current: wp.array(dtype=wp.vec3),
                           layer_end: float, velocity_sigma: float, noise: int, seed: int, frame0: int, sensor: int,
                           water_velocity: wp.array(dtype=wp.float32), water_valid: wp.array(dtype=wp.int32),
                           start: int):
    """Element (sample b, beam k), water-track: the beam sees the water layer ending ``layer_end`` m along it
    when its bottom return (``beam_range``, NaN without one) lies beyond that; it measures ``d_k . (v - c_k)``
    (+ N(0, velocity_sigma), its own noise stream), ``c_k`` the water's velocity at the layer in the sensor
    frame; else NaN and invalid."""
    i = wp.tid() + start
    b = i // 4
    k = i - b * 4
    r = beam_range[i]
    if wp.isnan(r) or r >= layer_end:
        d = beam_dirs[k]
        v = wp.dot(d, velocities[b] - layer_current[i])
        if noise != 0:
            v = v + velocity_sigma * wp.randn(stream_state(seed, frame0 + b, sensor, WATER_STREAM, k))
        water_velocity[i] = v
        water_valid[i] = 1
    else:
        water_velocity[i] = wp.nan
        water_valid[i] = 0
