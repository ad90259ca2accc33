"""Kernels of specular multipath and sea-surface reverberation for the acoustic device models (docs/PHYSICS.md §1,
"Multipath" and "Surface reverberation"; the policy is sensors/acoustic/multipath.py).

A ray of a sensor's fan that hits continues along the specular direction r = d - 2 (d . n) n from its hit point
(moved 1e-4 m + 1e-5 max_i |p_i| along the normal so that it does not hit its own face again) and is cast again
through the scene's backend, up to N bounces. Each ray carries, between casts:

- ``path``: the one-way length (m) of the segments before its current one,
- ``amp``: the product of the pressure reflection coefficients of the interfaces it bounced off (one way),
- ``edge_a``, ``edge_b``: the world edge vectors of its cell (rad-scaled, as the sensors' fans define them),
  reflected with the ray at each bounce, so that the footprint of a bounce hit is that of the unfolded
  (image-space) ray tube,
- ``weight``: its solid angle times the two-way pattern (sr),
- ``remaining``: the range left to cast (m; 0: the ray is done, which every backend treats as a miss).

The echo of bounce b is the backscatter at the b-th hit sent back along the same path: the sonar equation of the
direct echo with r the total one-way path L = sum of the segments (spreading and absorption over L, footprint
L^2 w / cos psi), times amp^4 (the pressure amplitude meets every reflection twice, out and back), at range L
(delay 2 L / c) on the bearing / channel of the original ray, with the carrier phase of the total path.

Mixed paths (device models, ``multipath_mixed_paths``): after bounce cast b >= 1, a visibility ray from each echoing
hit P_b to the sensor S (``visibility_ray_kernel``, cast through the backend); if free, the arrival out along the
chain and straight back (and its reciprocal) at r = (L_b + D) / 2, D = |S - P_b|, with the chain's reflection
coefficients met once (``mixed_echo``), on the ray's own channel and on the channel holding P_b's direction
(``chain_mixed_echo_*_kernel``, ``multibeam_mixed_echo_kernel``; the cross-channel arrivals binned per pose by
``cross_channel_bin_kernel`` / ``multibeam_cross_deposit_kernel``).

Interfaces (``object_interface[obj]``, a vec4 per scene object plus one for the analytic surface plane):
(INTERFACE_FLUID, Z2 / Z1, c2 / c1, 0): the angle-dependent Rayleigh reflection coefficient of a fluid half-space,
R = (Z2 cos t1 - Z1 cos t2) / (Z2 cos t1 + Z1 cos t2), sin t2 = (c2 / c1) sin t1, R = 1 beyond the critical angle;
(INTERFACE_FIXED, 0, 0, R0): R0 at every angle; (INTERFACE_PRESSURE_RELEASE, ...): R = -1;
(INTERFACE_SEA_SURFACE, 0, 0, h): R = -exp(-2 (k h cos t1)^2) (pressure release times the Kirchhoff/Eckart
coherent roughness loss, h the rms wave height, k = 2 pi f / c; Rayleigh parameter g = 2 k h cos t1, loss
exp(-g^2 / 2)); a sea-surface hit backscatters by Chapman-Harris when surface reverberation is on.
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.acoustic_chain import (RayEcho, binned_extent, echo_phase, echo_phasor, fan_cell,
                                                footprint_bins, footprint_inverse, footprint_weight, piece_amplitude,
                                                piece_phasor,
                                                scatterer_gaussian, store_echo)
from oceansim_py.kernels.imaging_sonar import range_cell, ray_return
from oceansim_py.kernels.multibeam import MAX_FOOTPRINT_SAMPLES, NO_DELAY, deposit_pulse, device_ray_angles
from oceansim_py.kernels.raycast import RayHit, load_hit, ray_range, sensor_to_world, two_way_absorption

INTERFACE_FLUID = wp.constant(0)
INTERFACE_FIXED = wp.constant(1)
INTERFACE_PRESSURE_RELEASE = wp.constant(2)
INTERFACE_SEA_SURFACE = wp.constant(3)

#: Cosine of incidence below which footprints and the surface's area are capped (as the direct echo's).
MIN_COS_INCIDENCE = wp.constant(1.0e-3)

#: Knots per metre per second.
KNOTS_PER_MPS = wp.constant(1.9438444924406046)


@wp.func
def reflection_coefficient(iface: wp.vec4, cos_incidence: float, wavenumber: float) -> float:
    """Pressure reflection coefficient of interface ``iface`` (module docstring) for a ray at incidence
    cos t1 = ``cos_incidence`` (from the normal), acoustic wavenumber k = ``wavenumber`` (rad/m)."""
    kind = int(iface[0])
    r = float(-1.0)
    if kind == INTERFACE_FLUID:
        z = iface[1]
        n = iface[2]
        c1 = cos_incidence
        s2 = n * n * (1.0 - c1 * c1)
        if s2 >= 1.0:
            r = 1.0
        else:
            c2 = wp.sqrt(1.0 - s2)
            r = (z * c1 - c2) / (z * c1 + c2)
    elif kind == INTERFACE_FIXED:
        r = iface[3]
    elif kind == INTERFACE_SEA_SURFACE:
        g = wavenumber * iface[3] * cos_incidence
        r = -wp.exp(-2.0 * g * g)
    return r


@wp.func
def chapman_harris_db(grazing_deg: float, wind_knots: float, frequency_hz: float) -> float:
    """Sea-surface backscattering strength S_s (dB re 1 m^2 per m^2) of Chapman & Harris (1962):
    3.3 beta log10(psi / 30) - 42.4 log10(beta) + 2.6, beta = 158 (v f^(1/3))^-0.58, psi the grazing angle
    (deg), v the wind speed (knots, > 0), f (Hz); capped at 0 dB (the fit, made at 0.4-6.4 kHz, exceeds it at high
    wind and frequency, and a surface cannot return more than it receives)."""
    beta = 158.0 * wp.pow(wind_knots * wp.pow(frequency_hz, 1.0 / 3.0), -0.58)
    s = 3.3 * beta * wp.log10(wp.max(grazing_deg, 1.0e-6) / 30.0) - 42.4 * wp.log10(beta) + 2.6
    return wp.min(s, 0.0)


@wp.struct
class SurfaceLaw:
    """How sea-surface hits backscatter: ``reverberation`` 1 (Chapman-Harris at ``wind_knots`` and ``frequency``
    Hz) or 0 (the object's Lambert mu); ``plane_obj``: the object id of the analytic surface plane (-1 for none),
    whose hits give no echo without reverberation; ``max_path``: the one-way path (m, the sensor's max range) a
    same-path echo must stay below (the bounce chain itself may run on to twice that for the mixed paths)."""

    reverberation: int
    wind_knots: float
    frequency: float
    plane_obj: int
    max_path: float


@wp.struct
class BounceEcho:
    """A bounce echo before the sensor's own storage: intensity (re 1 uPa^2), total one-way path L (m), range
    extent of the footprint (m), hit point (world), label, and ``valid`` (0: no echo)."""

    value: float
    path: float
    extent: float
    point: wp.vec3
    label: int
    valid: int


@wp.func
def bounce_echo(h: RayHit, origin: wp.vec3, direction: wp.vec3, path: float, amp: float, edge_a: wp.vec3,
                edge_b: wp.vec3, weight: float, object_mu: wp.array(dtype=wp.float32),
                object_label: wp.array(dtype=wp.int32), object_interface: wp.array(dtype=wp.vec4), law: SurfaceLaw,
                alpha_db_per_m: float, source_intensity: float) -> BounceEcho:
    """The echo of hit ``h`` of a ray at one-way path ``path`` before this segment, with one-way reflection
    product ``amp``: Lambert I = SL amp^4 mu cos(psi) w / L^2 10^(-2 alpha L / 10), or for a sea-surface hit with
    reverberation I = SL amp^4 10^(S_s / 10) w / (L^2 cos psi) 10^(-2 alpha L / 10) (S_s per unit area times the
    footprint L^2 w / cos psi, two-way spreading L^-4); footprint range extent
    L sqrt((n . edge_a)^2 + (n . edge_b)^2) / cos psi (uncapped); none at L >= ``law.max_path``."""
    out = BounceEcho()
    out.valid = 0
    out.value = 0.0
    out.path = 0.0
    out.extent = 0.0
    out.point = wp.vec3(0.0, 0.0, 0.0)
    out.label = -1
    if h.hit == 1 and path + h.distance < law.max_path:
        L = path + h.distance
        c = wp.max(h.cos_incidence, MIN_COS_INCIDENCE)
        a2 = amp * amp
        gain = source_intensity * a2 * a2 * weight / (L * L) * two_way_absorption(alpha_db_per_m, L)
        surface = int(object_interface[h.obj][0]) == INTERFACE_SEA_SURFACE
        if surface and law.reverberation == 1:
            grazing = wp.degrees(wp.asin(wp.clamp(h.cos_incidence, 0.0, 1.0)))
            out.value = gain * wp.pow(10.0, 0.1 * chapman_harris_db(grazing, law.wind_knots, law.frequency)) / c
            out.valid = 1
        elif h.obj != law.plane_obj:
            out.value = gain * object_mu[h.obj] * h.cos_incidence
            out.valid = 1
        da = wp.dot(h.normal, edge_a)
        db = wp.dot(h.normal, edge_b)
        out.path = L
        out.extent = L * wp.sqrt(da * da + db * db) / c
        out.point = origin + h.distance * direction
        out.label = object_label[h.obj]
    return out


@wp.kernel
def surface_plane_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                         max_range: wp.array(dtype=wp.float32), surface_z: float, plane_obj: int,
                         mesh_min: wp.vec2, mesh_max: wp.vec2,
                         distance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3),
                         face: wp.array(dtype=wp.int32), obj: wp.array(dtype=wp.int32), start: int):
    """Ray i against the analytic flat sea surface z = ``surface_z`` (the default surface of a scene without
    wave geometry, and the surface beyond a wave patch's horizontal extent [mesh_min, mesh_max] (world x, y; an
    empty box, min > max, without one)): a ray from below going up that meets the plane outside that box before
    its geometry hit (and within its range, ``max_range`` (1,) or per ray) gets the plane as its hit: distance
    t = (z_s - o_z) / d_z, normal (0, 0, -1), obj ``plane_obj``, face 0 (a stand-in: the plane has no triangle)."""
    i = wp.tid() + start
    o = origins[i]
    d = directions[i]
    if d[2] > 0.0 and o[2] < surface_z:
        t = (surface_z - o[2]) / d[2]
        x = o[0] + t * d[0]
        y = o[1] + t * d[1]
        on_patch = x >= mesh_min[0] and x <= mesh_max[0] and y >= mesh_min[1] and y <= mesh_max[1]
        if (not on_patch) and t < ray_range(max_range, i) and (face[i] < 0 or t < distance[i]):
            distance[i] = t
            normal[i] = wp.vec3(0.0, 0.0, -1.0)
            face[i] = 0
            obj[i] = plane_obj



@wp.kernel
def primary_distance_kernel(hit_distance: wp.array(dtype=wp.float32), hit_face: wp.array(dtype=wp.int32),
                            hit_obj: wp.array(dtype=wp.int32), law: SurfaceLaw, out: wp.array(dtype=wp.float32),
                            start: int):
    """Ray i's primary hit distance (m) kept for the sensor's first return (side-scan altitude, single-beam
    first_return_range): the hit's distance, +inf for a miss and for a hit of the analytic surface plane that gives
    no echo (surface reverberation off: the plane only mirrors, as :func:`echoes` decides)."""
    i = wp.tid() + start
    d = hit_distance[i]
    if hit_face[i] >= 0 and hit_obj[i] == law.plane_obj and law.reverberation == 0:
        d = float(wp.inf)
    out[i] = d

@wp.kernel
def fan_bounce_init_kernel(poses: wp.array(dtype=wp.transform), bearing_cos_sin: wp.array(dtype=wp.vec2),
                           bearing_cell: float, elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float,
                           n_elev: int, rays_per_pose: int, path: wp.array(dtype=wp.float32),
                           amp: wp.array(dtype=wp.float32), edge_a: wp.array(dtype=wp.vec3),
                           edge_b: wp.array(dtype=wp.vec3), weight: wp.array(dtype=wp.float32), start: int):
    """Ray i of a bearing x elevation fan (kernels/acoustic_chain.py ``fan_directions_kernel`` / ``pose_rays_kernel``): path 0, amp 1,
    its cell's world edge vectors (``fan_cell`` rotated by the pose) and weight w_k."""
    i = wp.tid() + start
    b = i // rays_per_pose
    local = i - b * rays_per_pose
    c = local // n_elev
    k = local - c * n_elev
    et = elevation_table[k]
    cell = fan_cell(bearing_cos_sin[c], et, bearing_cell, elevation_cell)
    q = wp.transform_get_rotation(poses[b])
    path[i] = 0.0
    amp[i] = 1.0
    edge_a[i] = wp.quat_rotate(q, cell.edge_a)
    edge_b[i] = wp.quat_rotate(q, cell.edge_b)
    weight[i] = et[2]


@wp.kernel
def table_bounce_init_kernel(poses: wp.array(dtype=wp.transform), edges_a: wp.array(dtype=wp.vec3),
                             edges_b: wp.array(dtype=wp.vec3), weights: wp.array(dtype=wp.float32),
                             rays_per_pose: int, path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                             edge_a: wp.array(dtype=wp.vec3), edge_b: wp.array(dtype=wp.vec3),
                             weight: wp.array(dtype=wp.float32), start: int):
    """Ray i of a table fan (side-scan, profiling, single-beam, MSIS): path 0, amp 1, world edges, weight."""
    i = wp.tid() + start
    b = i // rays_per_pose
    local = i - b * rays_per_pose
    q = wp.transform_get_rotation(poses[b])
    path[i] = 0.0
    amp[i] = 1.0
    edge_a[i] = wp.quat_rotate(q, edges_a[local])
    edge_b[i] = wp.quat_rotate(q, edges_b[local])
    weight[i] = weights[local]


@wp.kernel
def multibeam_bounce_init_kernel(poses: wp.array(dtype=wp.transform), n_beams: int, az_rays: int, el_rays: int,
                                 fov: float, elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float,
                                 jitter: int, jitter_key: int, path: wp.array(dtype=wp.float32),
                                 amp: wp.array(dtype=wp.float32), edge_a: wp.array(dtype=wp.vec3),
                                 edge_b: wp.array(dtype=wp.vec3), weight: wp.array(dtype=wp.float32), start: int):
    """Ray i of the multibeam's device fan (kernels/multibeam.py ``device_ray_angles``): path 0, amp 1, the world
    edge vectors of ``multibeam_device_scatter_kernel``'s footprint and the weight w_k."""
    i = wp.tid() + start
    rays_per_pose = n_beams * az_rays * el_rays
    b = i // rays_per_pose
    q = i - b * rays_per_pose
    k = q - (q // el_rays) * el_rays
    angles = device_ray_angles(q, n_beams, az_rays, el_rays, fov, elevation_table, elevation_cell, jitter,
                               jitter_key)
    ce = wp.cos(angles[1])
    se = wp.sin(angles[1])
    cb = wp.cos(angles[0])
    sb = wp.sin(angles[0])
    pose = poses[b]
    path[i] = 0.0
    amp[i] = 1.0
    edge_a[i] = sensor_to_world(pose, wp.vec3(-se * cb, se * sb, ce)) * elevation_cell
    edge_b[i] = sensor_to_world(pose, wp.vec3(-sb, -cb, 0.0)) * (ce * fov / float(n_beams) / float(az_rays))
    weight[i] = elevation_table[k][2]


@wp.func
def mirror(v: wp.vec3, n: wp.vec3) -> wp.vec3:
    """``v`` reflected in the plane of unit normal ``n``: v - 2 (v . n) n."""
    return v - 2.0 * wp.dot(v, n) * n


@wp.kernel
def bounce_step_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                       hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                       hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                       object_interface: wp.array(dtype=wp.vec4), wavenumber: float, max_range: float,
                       path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                       edge_a: wp.array(dtype=wp.vec3), edge_b: wp.array(dtype=wp.vec3),
                       remaining: wp.array(dtype=wp.float32), start: int):
    """Ray i after a cast: if it hit, continue it specularly from the hit point (module docstring): amp *= R,
    path += distance, direction and cell edges mirrored in the hit's plane, origin = hit point + offset along
    the normal, remaining = max_range - path; a miss, a zero R or a path past ``max_range`` ends it
    (remaining 0)."""
    i = wp.tid() + start
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    rem = float(0.0)
    if h.hit == 1:
        a = amp[i] * reflection_coefficient(object_interface[h.obj], h.cos_incidence, wavenumber)
        L = path[i] + h.distance
        if a != 0.0 and L < max_range:
            n = h.normal
            p = origins[i] + h.distance * d
            scale = wp.max(wp.max(wp.abs(p[0]), wp.abs(p[1])), wp.abs(p[2]))
            amp[i] = a
            path[i] = L
            directions[i] = wp.normalize(mirror(d, n))
            edge_a[i] = mirror(edge_a[i], n)
            edge_b[i] = mirror(edge_b[i], n)
            origins[i] = p + (1.0e-4 + 1.0e-5 * scale) * n
            rem = max_range - L
    remaining[i] = rem


@wp.func
def block_slot(i: int, group: int, n_blocks: int, block: int) -> int:
    """Slot of ray ``i``'s echo of block ``block`` when the rays come in groups of ``group`` (a channel's or a
    beam's rays) and each group keeps its ``n_blocks`` blocks contiguous: (g n_blocks + block) group + (i - g group),
    g = i // group (so the binning gathers a group's bounces as its rays)."""
    g = i // group
    return (g * n_blocks + block) * group + (i - g * group)


@wp.func
def cross_slot(i: int, rays_per_pose: int, bounces: int, bounce: int) -> int:
    """Slot of ray ``i``'s cross-channel mixed arrival of bounce ``bounce`` (1..bounces): (pose bounces + bounce
    - 1) rays_per_pose + (ray in pose)."""
    b = i // rays_per_pose
    return (b * bounces + bounce - 1) * rays_per_pose + (i - b * rays_per_pose)


@wp.kernel
def chain_bounce_echo_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                             hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                             hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                             object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                             object_interface: wp.array(dtype=wp.vec4), law: SurfaceLaw,
                             path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                             edge_a: wp.array(dtype=wp.vec3), edge_b: wp.array(dtype=wp.vec3),
                             weight: wp.array(dtype=wp.float32), phase_key: int, min_range: float,
                             range_resolution: float, n_range: int, alpha_db_per_m: float, source_intensity: float,
                             wavelength: float, phase_grid: float, block: int, n_blocks: int, rays_per_channel: int,
                             ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                             ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32), start: int):
    """Ray i's echo of bounce ``block`` (0: the direct echo) for the device chain (kernels/acoustic_chain.py
    ``RayEcho`` layout: intensity, (L, footprint extent as :func:`binned_extent` bins it, phase code of
    4 pi L / lambda + phi(hit point), ``echo_phase``), range bin, label), stored at ((channel of ray i) n_blocks + block)
    rays_per_channel + (ray in channel): a channel's echoes of every bounce contiguous, so the chain's binning
    gathers them as the channel's rays."""
    i = wp.tid() + start
    o = block_slot(i, rays_per_channel, n_blocks, block)
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    e = bounce_echo(h, origins[i], d, path[i], amp[i], edge_a[i], edge_b[i], weight[i], object_mu, object_label,
                    object_interface, law, alpha_db_per_m, source_intensity)
    out = RayEcho()
    out.value = 0.0
    out.rng = wp.vec3(0.0, 0.0, 0.0)
    out.cell = -1
    out.label = -1
    if e.valid == 1:
        cell = range_cell(e.path, min_range, range_resolution, n_range)
        if cell >= 0:
            extent = binned_extent(e.extent, e.path, range_resolution)
            phase = echo_phase(e.path, wavelength, e.point, phase_grid, phase_key)
            out.value = e.value
            out.rng = wp.vec3(e.path, extent, phase)
            out.cell = cell
            out.label = e.label
    store_echo(out.value, out.rng, out.cell, out.label, o, ray_intensity, ray_range, ray_bin, ray_label)


@wp.kernel
def chain_first_block_kernel(blocked_intensity: wp.array(dtype=wp.float32), blocked_range: wp.array(dtype=wp.vec3),
                             blocked_bin: wp.array(dtype=wp.int32), blocked_label: wp.array(dtype=wp.int32),
                             n_blocks: int, rays_per_channel: int, ray_intensity: wp.array(dtype=wp.float32),
                             ray_range: wp.array(dtype=wp.vec3), ray_bin: wp.array(dtype=wp.int32),
                             ray_label: wp.array(dtype=wp.int32), start: int):
    """Ray i's direct echo (block 0 of :func:`chain_bounce_echo_kernel`'s layout) copied to index i: the per-ray
    arrays a sensor's own detection reads (profiling soundings)."""
    i = wp.tid() + start
    o = block_slot(i, rays_per_channel, n_blocks, 0)
    store_echo(blocked_intensity[o], blocked_range[o], blocked_bin[o], blocked_label[o], i, ray_intensity, ray_range,
               ray_bin, ray_label)


# -- mixed paths (the device chain): out along the bounce chain, back in a straight line, and the reverse -----------


@wp.func
def echoes(h: RayHit, object_interface: wp.array(dtype=wp.vec4), law: SurfaceLaw) -> int:
    """1 when hit ``h`` backscatters (as :func:`bounce_echo` decides: any object but the analytic plane, and a
    sea-surface hit with reverberation on), else 0."""
    out = int(0)
    if h.hit == 1:
        if int(object_interface[h.obj][0]) == INTERFACE_SEA_SURFACE and law.reverberation == 1:
            out = 1
        elif h.obj != law.plane_obj:
            out = 1
    return out


@wp.kernel
def visibility_ray_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                          hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                          hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                          object_interface: wp.array(dtype=wp.vec4), law: SurfaceLaw,
                          poses: wp.array(dtype=wp.transform), rays_per_pose: int,
                          vis_origins: wp.array(dtype=wp.vec3), vis_directions: wp.array(dtype=wp.vec3),
                          vis_remaining: wp.array(dtype=wp.float32), start: int):
    """Ray i's visibility ray after a bounce cast: from its hit point P (moved 1e-4 m + 1e-5 max_i |P_i| along the
    facing normal, as the bounce step does) towards the sensor S of its pose, length |S - P'| (remaining 0, a miss for
    every backend, when the hit does not echo or S lies behind the face: n . (S - P) <= 0)."""
    i = wp.tid() + start
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    o = origins[i]
    v = wp.vec3(1.0, 0.0, 0.0)
    rem = float(0.0)
    if echoes(h, object_interface, law) == 1:
        sensor = wp.transform_get_translation(poses[i // rays_per_pose])
        p = o + h.distance * d
        scale = wp.max(wp.max(wp.abs(p[0]), wp.abs(p[1])), wp.abs(p[2]))
        q = p + (1.0e-4 + 1.0e-5 * scale) * h.normal
        back = sensor - q
        dist = wp.length(back)
        if wp.dot(h.normal, sensor - p) > 0.0 and dist > 0.0:
            o = q
            v = back / dist
            rem = dist
    vis_origins[i] = o
    vis_directions[i] = v
    vis_remaining[i] = rem


@wp.struct
class MixedEcho:
    """One of the two reciprocal mixed-path arrivals of a bounce hit P, before the receive channel is chosen:
    intensity with the ray's own weight (re 1 uPa^2), range r = (L + D) / 2 (m), footprint range extent (m), P
    (world), the unit vector from the sensor to P (world), label, ``valid`` (0: none)."""

    value: float
    rng: float
    extent: float
    point: wp.vec3
    away: wp.vec3
    label: int
    valid: int


@wp.func
def mixed_echo(h: RayHit, origin: wp.vec3, direction: wp.vec3, path: float, amp: float, edge_a: wp.vec3,
               edge_b: wp.vec3, weight: float, sensor: wp.vec3, visible: int, object_mu: wp.array(dtype=wp.float32),
               object_label: wp.array(dtype=wp.int32), object_interface: wp.array(dtype=wp.vec4), law: SurfaceLaw,
               alpha_db_per_m: float, source_intensity: float) -> MixedEcho:
    """The mixed-path arrival of bounce hit ``h`` (docs/PHYSICS.md §1 "Mixed paths"): L = path + distance the
    chain's one-way length, D = |S - P|, o = (S - P) / D; the bistatic sonar equation
    I = SL amp^2 sigma(P) A / (L^2 D^2) 10^(-alpha (L + D) / 10) with the unfolded tube's footprint
    A = L^2 w / cos(t_in) gives I = SL amp^2 sigma w / (cos(t_in) D^2) 10^(-alpha (L + D) / 10); Lambert
    sigma = mu cos(t_in) cos(t_out) (t_out: between the normal and o), Chapman-Harris (sea surface with
    reverberation) sigma = 10^((S_s(psi_in) + S_s(psi_out)) / 20). Footprint range extent: the tube's cell edges
    e projected on P's plane, u_e = L (e - (e . n) / (d . n) d), each changing r by (d - o) . u_e / 2."""
    out = MixedEcho()
    out.valid = 0
    out.value = 0.0
    out.rng = 0.0
    out.extent = 0.0
    out.point = wp.vec3(0.0, 0.0, 0.0)
    out.away = wp.vec3(1.0, 0.0, 0.0)
    out.label = -1
    if echoes(h, object_interface, law) == 1 and visible == 1:
        p = origin + h.distance * direction
        back = sensor - p
        D = wp.length(back)
        cos_out = float(0.0)
        if D > 0.0:
            cos_out = wp.dot(h.normal, back) / D
        if cos_out > 0.0:
            o = back / D
            L = path + h.distance
            c = wp.max(h.cos_incidence, MIN_COS_INCIDENCE)
            gain = source_intensity * amp * amp * weight / (D * D) * wp.pow(10.0, -0.1 * alpha_db_per_m * (L + D))
            if int(object_interface[h.obj][0]) == INTERFACE_SEA_SURFACE and law.reverberation == 1:
                g_in = wp.degrees(wp.asin(wp.clamp(h.cos_incidence, 0.0, 1.0)))
                g_out = wp.degrees(wp.asin(wp.clamp(cos_out, 0.0, 1.0)))
                s_db = chapman_harris_db(g_in, law.wind_knots, law.frequency) + chapman_harris_db(
                    g_out, law.wind_knots, law.frequency)
                out.value = gain * wp.pow(10.0, 0.05 * s_db) / c
            else:
                out.value = gain * object_mu[h.obj] * wp.min(cos_out, 1.0)
            dn = -c
            ua = L * (edge_a - wp.dot(edge_a, h.normal) / dn * direction)
            ub = L * (edge_b - wp.dot(edge_b, h.normal) / dn * direction)
            ea = 0.5 * wp.dot(direction - o, ua)
            eb = 0.5 * wp.dot(direction - o, ub)
            out.rng = 0.5 * (L + D)
            out.extent = wp.sqrt(ea * ea + eb * eb)
            out.point = p
            out.away = -o
            out.label = object_label[h.obj]
            out.valid = 1
    return out


@wp.func
def fan_channel_of(local: wp.vec3, first_bearing: float, bearing_cell: float, n_bearing: int,
                   bearing_rays_per_channel: int, first_elevation: float, elevation_cell: float,
                   n_elev: int) -> wp.vec2i:
    """(channel, elevation ray) of the bearing x elevation fan cell (uniform grids: bearing ray j at
    first_bearing + j bearing_cell, elevation ray k at first_elevation + k elevation_cell, rad) that holds the
    sensor-frame (FLU) direction ``local``; (-1, -1) outside the fan."""
    horizontal = wp.sqrt(local[0] * local[0] + local[1] * local[1])
    bearing = wp.atan2(-local[1], local[0])
    elevation = wp.atan2(local[2], horizontal)
    j = int(wp.floor((bearing - first_bearing) / bearing_cell + 0.5))
    k = int(wp.floor((elevation - first_elevation) / elevation_cell + 0.5))
    out = wp.vec2i(-1, -1)
    if j >= 0 and j < n_bearing and k >= 0 and k < n_elev:
        out = wp.vec2i(j // bearing_rays_per_channel, k)
    return out


@wp.func
def store_mixed(e: MixedEcho, pattern: float, own: int, target: int, phase_key: int, min_range: float,
                range_resolution: float, n_range: int, wavelength: float, phase_grid: float, o: int,
                ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32), x: int,
                cross_intensity: wp.array(dtype=wp.float32), cross_range: wp.array(dtype=wp.vec3),
                cross_bin: wp.array(dtype=wp.int32), cross_label: wp.array(dtype=wp.int32),
                cross_channel: wp.array(dtype=wp.int32)):
    """Store mixed arrival ``e`` times ``pattern`` (receive/transmit pattern of P's direction relative to the ray's,
    one way) with the ray's own channel ``own`` and P's channel ``target`` (-1: outside the fan, nothing): the same
    channel gets both reciprocal arrivals coherently (amplitude 2 a: intensity 4 I) at ``o``; else the own
    channel I (the reciprocal arrival, back along the ray) at ``o`` and ``target`` I (out along the ray, back
    from P) at cross index ``x``. Phase 2 pi (L + D) / lambda + phi(P)."""
    value = float(0.0)
    rng = wp.vec3(0.0, 0.0, 0.0)
    cell = int(-1)
    label = int(-1)
    channel = int(-1)
    if e.valid == 1 and target >= 0:
        c = range_cell(e.rng, min_range, range_resolution, n_range)
        if c >= 0:
            v = e.value * pattern
            rng = wp.vec3(e.rng, binned_extent(e.extent, e.rng, range_resolution),
                          echo_phase(e.rng, wavelength, e.point, phase_grid, phase_key))
            cell = c
            label = e.label
            if target == own:
                value = 4.0 * v
            else:
                value = v
                channel = target
    store_echo(value, rng, cell, label, o, ray_intensity, ray_range, ray_bin, ray_label)
    store_echo(value, rng, cell, label, x, cross_intensity, cross_range, cross_bin, cross_label)
    cross_channel[x] = channel


@wp.kernel
def chain_mixed_echo_fan_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                                hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                                hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                                vis_face: wp.array(dtype=wp.int32), object_mu: wp.array(dtype=wp.float32),
                                object_label: wp.array(dtype=wp.int32), object_interface: wp.array(dtype=wp.vec4),
                                law: SurfaceLaw, path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                                edge_a: wp.array(dtype=wp.vec3), edge_b: wp.array(dtype=wp.vec3),
                                weight: wp.array(dtype=wp.float32), poses: wp.array(dtype=wp.transform),
                                elevation_table: wp.array(dtype=wp.vec3), first_bearing: float, bearing_cell: float,
                                n_bearing: int, first_elevation: float, elevation_cell: float, n_elev: int,
                                n_channels: int, phase_key: int, min_range: float, range_resolution: float,
                                n_range: int, alpha_db_per_m: float, source_intensity: float, wavelength: float,
                                phase_grid: float, block: int, n_blocks: int, bounce: int, bounces: int,
                                ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                                ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32),
                                cross_intensity: wp.array(dtype=wp.float32), cross_range: wp.array(dtype=wp.vec3),
                                cross_bin: wp.array(dtype=wp.int32), cross_label: wp.array(dtype=wp.int32),
                                cross_channel: wp.array(dtype=wp.int32), start: int):
    """Ray i's mixed-path arrivals of bounce ``bounce`` (>= 1) for a bearing x elevation fan (imaging sonar):
    :func:`mixed_echo` (visible when the visibility ray missed: ``vis_face`` < 0), P's channel and elevation ray
    by :func:`fan_channel_of`, pattern sqrt(g(e_P) / g(e_k)) with g(e) = w(e) / cos(e) the elevation table's
    two-way pattern; own-channel echo at block ``block`` of the chain's layout (as
    :func:`chain_bounce_echo_kernel`), cross echo at ((pose) bounces + bounce - 1) rays_per_pose + (ray in pose)."""
    i = wp.tid() + start
    rays_per_pose = n_bearing * n_elev
    rays_per_channel = rays_per_pose // n_channels
    o = block_slot(i, rays_per_channel, n_blocks, block)
    b = i // rays_per_pose
    local_i = i - b * rays_per_pose
    x = cross_slot(i, rays_per_pose, bounces, bounce)
    k_own = local_i - (local_i // n_elev) * n_elev
    own = local_i // rays_per_channel
    pose = poses[b]
    sensor = wp.transform_get_translation(pose)
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    visible = wp.where(vis_face[i] < 0, 1, 0)
    e = mixed_echo(h, origins[i], d, path[i], amp[i], edge_a[i], edge_b[i], weight[i], sensor, visible, object_mu,
                   object_label, object_interface, law, alpha_db_per_m, source_intensity)
    target = int(-1)
    pattern = float(0.0)
    if e.valid == 1:
        ck = fan_channel_of(wp.quat_rotate_inv(wp.transform_get_rotation(pose), e.away), first_bearing, bearing_cell,
                            n_bearing, rays_per_channel // n_elev, first_elevation, elevation_cell, n_elev)
        target = ck[0]
        if target >= 0:
            et = elevation_table[ck[1]]
            eo = elevation_table[k_own]
            g_own = eo[2] / eo[0]
            if g_own > 0.0:
                pattern = wp.sqrt(wp.max(et[2] / et[0], 0.0) / g_own)
    store_mixed(e, pattern, own, target, phase_key, min_range, range_resolution, n_range, wavelength, phase_grid, o,
                ray_intensity, ray_range, ray_bin, ray_label, x, cross_intensity, cross_range, cross_bin, cross_label,
                cross_channel)


@wp.func
def cell_pattern(edge_a: wp.vec3, edge_b: wp.vec3, weight: float) -> float:
    """Two-way pattern of a table ray: its weight over its cell's solid angle |a x b| (sr)."""
    area = wp.length(wp.cross(edge_a, edge_b))
    g = float(0.0)
    if area > 0.0:
        g = weight / area
    return g


@wp.kernel
def chain_mixed_echo_table_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                                  hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                                  hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                                  vis_face: wp.array(dtype=wp.int32), object_mu: wp.array(dtype=wp.float32),
                                  object_label: wp.array(dtype=wp.int32),
                                  object_interface: wp.array(dtype=wp.vec4), law: SurfaceLaw,
                                  path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                                  edge_a: wp.array(dtype=wp.vec3), edge_b: wp.array(dtype=wp.vec3),
                                  weight: wp.array(dtype=wp.float32), poses: wp.array(dtype=wp.transform),
                                  table_directions: wp.array(dtype=wp.vec3), table_a: wp.array(dtype=wp.vec3),
                                  table_b: wp.array(dtype=wp.vec3), table_weights: wp.array(dtype=wp.float32),
                                  rays_per_pose: int, n_channels: int, table_cones: wp.array(dtype=wp.vec4),
                                  cone_size: int, table_order: wp.array(dtype=wp.int32), phase_key: int,
                                  min_range: float,
                                  range_resolution: float, n_range: int, alpha_db_per_m: float,
                                  source_intensity: float, wavelength: float, phase_grid: float, block: int,
                                  n_blocks: int, bounce: int, bounces: int,
                                  ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                                  ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32),
                                  cross_intensity: wp.array(dtype=wp.float32), cross_range: wp.array(dtype=wp.vec3),
                                  cross_bin: wp.array(dtype=wp.int32), cross_label: wp.array(dtype=wp.int32),
                                  cross_channel: wp.array(dtype=wp.int32), start: int):
    """Ray i's mixed-path arrivals of bounce ``bounce`` for a table fan (side-scan, profiling, single-beam, MSIS):
    as :func:`chain_mixed_echo_fan_kernel`, P's receiving ray t the table ray nearest P's sensor-frame direction
    u (smallest |u - d_t|^2: in float32, u . d_t = 1 - theta^2 / 2 cannot tell apart rays less than ~0.03 deg
    from u, finer than a fine table's cells) whose cell holds it (|(u - d_t) . a_t| <= |a_t|^2 / 2, the same for b_t), its channel
    t // rays_per_channel (side-scan: port or starboard; single-beam: its one beam, if inside the cone), pattern
    sqrt(g_t / g_k), g = w / |a x b|. The search: the table's rays in a spatially compact order ``table_order``
    (Z-order of their bearing and elevation), in runs of ``cone_size`` rays, each with a bounding cone
    ``table_cones`` (unit axis, cos of the half-angle that holds its cells); only the runs whose cone holds u are
    scanned (about 2 sqrt(N) tests for N rays instead of N)."""
    i = wp.tid() + start
    rays_per_channel = rays_per_pose // n_channels
    o = block_slot(i, rays_per_channel, n_blocks, block)
    b = i // rays_per_pose
    local_i = i - b * rays_per_pose
    x = cross_slot(i, rays_per_pose, bounces, bounce)
    own = local_i // rays_per_channel
    pose = poses[b]
    sensor = wp.transform_get_translation(pose)
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    visible = wp.where(vis_face[i] < 0, 1, 0)
    e = mixed_echo(h, origins[i], d, path[i], amp[i], edge_a[i], edge_b[i], weight[i], sensor, visible, object_mu,
                   object_label, object_interface, law, alpha_db_per_m, source_intensity)
    target = int(-1)
    pattern = float(0.0)
    if e.valid == 1:
        u = wp.quat_rotate_inv(wp.transform_get_rotation(pose), e.away)
        best = int(-1)
        best_gap = float(5.0)
        for run in range(table_cones.shape[0]):
            cone = table_cones[run]
            if u[0] * cone[0] + u[1] * cone[1] + u[2] * cone[2] >= cone[3]:
                for r in range(run * cone_size, wp.min((run + 1) * cone_size, rays_per_pose)):
                    t = table_order[r]
                    gap = wp.length_sq(u - table_directions[t])
                    if gap < best_gap or (gap == best_gap and t < best):
                        best_gap = gap
                        best = t
        inside = int(0)
        if best >= 0:
            v = u - table_directions[best]
            ta = table_a[best]
            tb = table_b[best]
            if wp.abs(wp.dot(v, ta)) <= 0.5 * wp.dot(ta, ta) and wp.abs(wp.dot(v, tb)) <= 0.5 * wp.dot(tb, tb):
                inside = 1
        if inside == 1:
            ta = table_a[best]
            tb = table_b[best]
            g_own = cell_pattern(table_a[local_i], table_b[local_i], table_weights[local_i])
            if g_own > 0.0:
                target = best // rays_per_channel
                pattern = wp.sqrt(cell_pattern(ta, tb, table_weights[best]) / g_own)
    store_mixed(e, pattern, own, target, phase_key, min_range, range_resolution, n_range, wavelength, phase_grid, o,
                ray_intensity, ray_range, ray_bin, ray_label, x, cross_intensity, cross_range, cross_bin, cross_label,
                cross_channel)


@wp.kernel
def cross_channel_bin_kernel(cross_intensity: wp.array(dtype=wp.float32), cross_range: wp.array(dtype=wp.vec3),
                             cross_bin: wp.array(dtype=wp.int32), cross_label: wp.array(dtype=wp.int32),
                             cross_channel: wp.array(dtype=wp.int32), entries_per_pose: int, min_range: float,
                             range_resolution: float, n_range: int, range_taps: wp.array(dtype=wp.float32),
                             field: wp.array3d(dtype=wp.vec2), power: wp.array3d(dtype=wp.float32),
                             hit_label: wp.array3d(dtype=wp.vec2i), peak: wp.array3d(dtype=wp.float32),
                             row_echo: wp.array2d(dtype=wp.int32), phasors: wp.array(dtype=wp.vec2), start: int):
    """Element (pose b), after ``footprint_bin_kernel``: add the pose's cross-channel mixed arrivals, in entry order,
    to their target channels, exactly as that kernel bins a channel's own rays (footprint pieces, own phase in the
    own bin, hashed phasors elsewhere, hits, strongest-piece label) with the range point spread applied to each
    piece directly (field[row] += h[m] sqrt(piece) phasor, power[row] += h[m]^2 piece into the row-major images
    after the range pass: the same linear pass), hit counts and labels into the row-major (hit count, label) pairs
    ``hit_label`` (B, n_range, n_channels) the range pass filled, ``peak`` into the channel-major scratch
    (B, n_channels, n_range), and every row written flagged in ``row_echo`` (so the receiver reads and resets it:
    the scratch stays at rest between renders). One element per pose reads its entries sequentially, as an entry
    may land on any channel: deterministic without atomics."""
    b = wp.tid() + start
    first = b * entries_per_pose
    half_taps = (range_taps.shape[0] - 1) // 2
    for t in range(entries_per_pose):
        j = cross_channel[first + t]
        cell = cross_bin[first + t]
        if j >= 0 and cell >= 0:
            value = cross_intensity[first + t]
            rr = cross_range[first + t]
            counted = hit_label[b, cell, j]
            hit_label[b, cell, j] = wp.vec2i(counted[0] + 1, counted[1])
            row_echo[b, cell] = 1
            bins = footprint_bins(rr, cell, min_range, range_resolution, n_range)
            own = echo_phasor(rr[2], phasors)
            inv_extent = footprint_inverse(rr)
            for kk in range(bins[0], bins[1] + 1):
                w = footprint_weight(rr, kk, inv_extent, min_range, range_resolution)
                if w > 0.0:
                    piece = value * w
                    amplitude = (wp.sqrt(piece) * piece_amplitude(rr, cell, kk, phasors)) * piece_phasor(
                        rr, cell, kk, own, phasors)
                    for row in range(wp.max(kk - half_taps, 0), wp.min(kk + half_taps, n_range - 1) + 1):
                        tap = range_taps[kk - row + half_taps]
                        field[b, row, j] = field[b, row, j] + tap * amplitude
                        power[b, row, j] = power[b, row, j] + tap * tap * piece
                        row_echo[b, row] = 1
                    held = hit_label[b, kk, j]
                    if held[1] < 0 or piece > peak[b, j, kk]:
                        peak[b, j, kk] = piece
                        hit_label[b, kk, j] = wp.vec2i(held[0], cross_label[first + t])


@wp.kernel
def multibeam_bounce_echo_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                                 hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                                 hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                                 object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                                 object_interface: wp.array(dtype=wp.vec4), law: SurfaceLaw,
                                 path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                                 edge_a: wp.array(dtype=wp.vec3), edge_b: wp.array(dtype=wp.vec3),
                                 weight: wp.array(dtype=wp.float32), phase_key: int, phase_grid: float,
                                 sound_speed: float, frequency: float, sample_rate: float, t0: float,
                                 window_end: float, half_width: float, source_intensity: float,
                                 alpha_db_per_m: float, block: int, n_blocks: int, rays_per_beam: int,
                                 out_amp: wp.array(dtype=wp.vec2), out_power: wp.array(dtype=wp.float32),
                                 out_delay: wp.array(dtype=wp.float32), out_extent: wp.array(dtype=wp.float32),
                                 start: int):
    """Ray i's echo of bounce ``block`` (0: direct) for the multibeam's device model, in
    ``multibeam_device_scatter_kernel``'s form: A = sqrt(I) xi exp(-i 2 k_c L) (xi a unit complex Gaussian fixed to
    the hit point), power I, delay (2 L / c - t0) fs samples (NO_DELAY for none or outside the window), footprint
    extent in samples (capped at MAX_FOOTPRINT_SAMPLES); stored at ((beam of ray i) n_blocks + block)
    rays_per_beam + (ray in beam), so that the deposit gathers a beam's bounces as its rays."""
    i = wp.tid() + start
    o = block_slot(i, rays_per_beam, n_blocks, block)
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    e = bounce_echo(h, origins[i], d, path[i], amp[i], edge_a[i], edge_b[i], weight[i], object_mu, object_label,
                    object_interface, law, alpha_db_per_m, source_intensity)
    out_amp[o] = wp.vec2(0.0, 0.0)
    out_power[o] = 0.0
    out_delay[o] = NO_DELAY
    out_extent[o] = 0.0
    if e.valid == 1:
        delay = (2.0 * e.path / sound_speed - t0) * sample_rate
        if delay >= -half_width and delay <= window_end + half_width:
            xi = scatterer_gaussian(e.point, phase_grid, phase_key)
            cycles = 2.0 * frequency * e.path / sound_speed
            phase = -2.0 * wp.pi * (cycles - wp.floor(cycles))
            c = wp.cos(phase)
            s = wp.sin(phase)
            out_amp[o] = wp.vec2(xi[0] * c - xi[1] * s, xi[0] * s + xi[1] * c) * wp.sqrt(e.value)
            out_power[o] = e.value
            out_delay[o] = delay
            out_extent[o] = wp.min(e.extent * 2.0 * sample_rate / sound_speed, MAX_FOOTPRINT_SAMPLES)


@wp.func
def pulse_amplitude(point: wp.vec3, value: float, path: float, phase_grid: float, phase_key: int, sound_speed: float,
                    frequency: float) -> wp.vec2:
    """sqrt(value) xi exp(-i 2 pi f path / c): the multibeam's complex echo amplitude of a return of intensity
    ``value`` over the total (out + back) ``path`` (m), xi the unit complex Gaussian of the scatterer at ``point``."""
    xi = scatterer_gaussian(point, phase_grid, phase_key)
    cycles = frequency * path / sound_speed
    phase = -2.0 * wp.pi * (cycles - wp.floor(cycles))
    c = wp.cos(phase)
    s = wp.sin(phase)
    return wp.vec2(xi[0] * c - xi[1] * s, xi[0] * s + xi[1] * c) * wp.sqrt(value)


@wp.kernel
def multibeam_mixed_echo_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                                hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                                hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                                vis_face: wp.array(dtype=wp.int32), object_mu: wp.array(dtype=wp.float32),
                                object_label: wp.array(dtype=wp.int32), object_interface: wp.array(dtype=wp.vec4),
                                law: SurfaceLaw, path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                                edge_a: wp.array(dtype=wp.vec3), edge_b: wp.array(dtype=wp.vec3),
                                weight: wp.array(dtype=wp.float32), poses: wp.array(dtype=wp.transform),
                                n_beams: int, az_rays: int, el_rays: int, fov: float,
                                elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float, phase_key: int,
                                phase_grid: float, sound_speed: float, frequency: float, sample_rate: float,
                                t0: float, window_end: float, half_width: float, source_intensity: float,
                                alpha_db_per_m: float, block: int, n_blocks: int, bounce: int, bounces: int,
                                out_amp: wp.array(dtype=wp.vec2), out_power: wp.array(dtype=wp.float32),
                                out_delay: wp.array(dtype=wp.float32), out_extent: wp.array(dtype=wp.float32),
                                cross_amp: wp.array(dtype=wp.vec2), cross_power: wp.array(dtype=wp.float32),
                                cross_delay: wp.array(dtype=wp.float32), cross_extent: wp.array(dtype=wp.float32),
                                cross_beam: wp.array(dtype=wp.int32), start: int):
    """Ray i's mixed-path arrivals of bounce ``bounce`` (>= 1) for the multibeam's device model, in
    :func:`multibeam_bounce_echo_kernel`'s form at the total path L + D (delay ((L + D) / c - t0) fs): P's beam
    from its sensor-frame bearing (ray cells of fov / (n_beams az_rays) from -fov / 2) and elevation ray (cells of
    ``elevation_cell`` around ``elevation_table[k][0]``), pattern sqrt(g(e_P) / g(e_k)), g = w / cos e; the same
    beam: amplitude 2 A (intensity 4 I) at block ``block``; another beam: A at block ``block`` and A at cross index
    ((pose) bounces + bounce - 1) rays_per_pose + (ray in pose) with its beam; outside the fan: nothing."""
    i = wp.tid() + start
    rays_per_beam = az_rays * el_rays
    rays_per_pose = n_beams * rays_per_beam
    o = block_slot(i, rays_per_beam, n_blocks, block)
    b = i // rays_per_pose
    local_i = i - b * rays_per_pose
    x = cross_slot(i, rays_per_pose, bounces, bounce)
    own = local_i // rays_per_beam
    k_own = local_i - (local_i // el_rays) * el_rays
    pose = poses[b]
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    visible = wp.where(vis_face[i] < 0, 1, 0)
    e = mixed_echo(h, origins[i], d, path[i], amp[i], edge_a[i], edge_b[i], weight[i],
                   wp.transform_get_translation(pose), visible, object_mu, object_label, object_interface, law,
                   alpha_db_per_m, source_intensity)
    out_amp[o] = wp.vec2(0.0, 0.0)
    out_power[o] = 0.0
    out_delay[o] = NO_DELAY
    out_extent[o] = 0.0
    cross_amp[x] = wp.vec2(0.0, 0.0)
    cross_power[x] = 0.0
    cross_delay[x] = NO_DELAY
    cross_extent[x] = 0.0
    cross_beam[x] = -1
    if e.valid == 1:
        ray_cell = fov / float(n_beams * az_rays)
        first_elevation = elevation_table[0][0]
        ck = fan_channel_of(wp.quat_rotate_inv(wp.transform_get_rotation(pose), e.away), -0.5 * fov + 0.5 * ray_cell,
                            ray_cell, n_beams * az_rays, az_rays, first_elevation, elevation_cell, el_rays)
        delay = (2.0 * e.rng / sound_speed - t0) * sample_rate
        g_own = elevation_table[k_own][2] / wp.cos(elevation_table[k_own][0])
        if ck[0] >= 0 and g_own > 0.0 and delay >= -half_width and delay <= window_end + half_width:
            et = elevation_table[ck[1]]
            value = e.value * wp.sqrt(wp.max(et[2] / wp.cos(et[0]), 0.0) / g_own)
            a = pulse_amplitude(e.point, value, 2.0 * e.rng, phase_grid, phase_key, sound_speed, frequency)
            extent = wp.min(e.extent * 2.0 * sample_rate / sound_speed, MAX_FOOTPRINT_SAMPLES)
            out_delay[o] = delay
            out_extent[o] = extent
            if ck[0] == own:
                out_amp[o] = 2.0 * a
                out_power[o] = 4.0 * value
            else:
                out_amp[o] = a
                out_power[o] = value
                cross_amp[x] = a
                cross_power[x] = value
                cross_delay[x] = delay
                cross_extent[x] = extent
                cross_beam[x] = ck[0]


@wp.kernel
def multibeam_cross_deposit_kernel(cross_amp: wp.array(dtype=wp.vec2), cross_power: wp.array(dtype=wp.float32),
                                   cross_delay: wp.array(dtype=wp.float32), cross_extent: wp.array(dtype=wp.float32),
                                   cross_beam: wp.array(dtype=wp.int32), entries_per_pose: int, n_samples: int,
                                   half_width: float, sinc_rate: float, raw: wp.array3d(dtype=wp.vec2),
                                   raw_power: wp.array3d(dtype=wp.float32), start: int):
    """Element (pose b), after ``multibeam_device_deposit_kernel``: deposit the pose's cross-beam mixed arrivals,
    in entry order, into their beams (the same pulse pieces, ``deposit_pulse``); sequential per pose: deterministic
    without atomics."""
    b = wp.tid() + start
    first = b * entries_per_pose
    for t in range(entries_per_pose):
        j = cross_beam[first + t]
        if j >= 0:
            deposit_pulse(cross_amp[first + t], cross_power[first + t], cross_delay[first + t],
                          cross_extent[first + t], t, b, j, n_samples, half_width, sinc_rate, raw, raw_power)


# -- HoloOcean's MultiPath (the imaging sonar's peer model) ------------------------------------------------------
# HoloOcean (ImagingSonar.cpp, MultiPath) reflects each first-hit leaf's impact direction specularly, finds the next
# leaf along it (B), and adds at B's bearing, at range (r1 + |m - B| + |B - S|) / 2 (out to m, across to B, straight
# back from B to the sensor S), the value R1^2 R2^2 cos(return) with R the normal-incidence impedance coefficients
# and cos(return) the cosine between B's specular direction and the direction from B back to the sensor. Here the
# same bounce stage runs on the peer model's rays: the reflected ray is cast through the scene's backend.


@wp.kernel
def holoocean_bounce_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                            hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                            hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                            object_reflectivity: wp.array(dtype=wp.float32), max_range: float,
                            path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                            remaining: wp.array(dtype=wp.float32), start: int):
    """Ray i after the peer's primary cast: a hit m continues specularly from m (path = r1, amp = mu_m = R1^2,
    remaining = max_range); a miss is done (remaining 0)."""
    i = wp.tid() + start
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    rem = float(0.0)
    if h.hit == 1:
        n = h.normal
        p = origins[i] + h.distance * d
        scale = wp.max(wp.max(wp.abs(p[0]), wp.abs(p[1])), wp.abs(p[2]))
        path[i] = h.distance
        amp[i] = object_reflectivity[h.obj]
        directions[i] = wp.normalize(mirror(d, n))
        origins[i] = p + (1.0e-4 + 1.0e-5 * scale) * n
        rem = max_range
    remaining[i] = rem


@wp.kernel
def holoocean_multipath_return_kernel(origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                                      hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                                      hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                                      object_reflectivity: wp.array(dtype=wp.float32),
                                      object_label: wp.array(dtype=wp.int32), poses: wp.array(dtype=wp.transform),
                                      elevation_table: wp.array(dtype=wp.vec3), n_elev: int, rays_per_pose: int,
                                      path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                                      horizontal_fov: float, vertical_fov: float, n_beams: int, min_range: float,
                                      range_resolution: float, n_range: int, alpha_db_per_m: float, spreading: int,
                                      range_sigma: float, range_keys: wp.array(dtype=wp.int32),
                                      mp_value: wp.array(dtype=wp.float32), mp_cell: wp.array(dtype=wp.int32),
                                      mp_label: wp.array(dtype=wp.int32), start: int):
    """Ray i's HoloOcean multipath contribution after the bounce cast: with a second hit B inside the field of
    view (bearing within horizontal_fov / 2, elevation within vertical_fov / 2, rad) and the range window, range
    r = (r1 + |m - B| + |B - S|) / 2, beam of B's bearing, value mu_m mu_B cos_ret w_k 10^(-2 alpha r / 10)
    [(1 m / r)^2 if spreading] (cos_ret = r_B . (S - B) / |S - B|, r_B the specular direction at B; none when
    <= 0), with HoloOcean's range noise as the primary returns (stream index rays_per_pose + local). Stores the
    value, the cell row n_beams + beam (-1 for none) and B's label."""
    i = wp.tid() + start
    b = i // rays_per_pose
    local = i - b * rays_per_pose
    k = local - (local // n_elev) * n_elev
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    value = float(0.0)
    cell = int(-1)
    label = int(-1)
    if h.hit == 1:
        pose = poses[b]
        s = wp.transform_get_translation(pose)
        p = origins[i] + h.distance * d
        back = s - p
        dist_back = wp.length(back)
        local_b = wp.quat_rotate_inv(wp.transform_get_rotation(pose), p - s)
        horizontal = wp.sqrt(local_b[0] * local_b[0] + local_b[1] * local_b[1])
        bearing = -wp.atan2(local_b[1], local_b[0])
        elevation = wp.atan2(local_b[2], horizontal)
        r = 0.5 * (path[i] + h.distance + dist_back)
        cos_ret = wp.dot(mirror(d, h.normal), back / wp.max(dist_back, 1.0e-9))
        if (wp.abs(bearing) < 0.5 * horizontal_fov and wp.abs(elevation) < 0.5 * vertical_fov and cos_ret > 0.0
                and dist_back > 0.0):
            x = float(0.0)
            pdf = float(1.0)
            if range_sigma > 0.0:
                state = wp.rand_init(range_keys[b], rays_per_pose + local)
                x = -range_sigma * wp.log(1.0 - wp.randf(state))
                pdf = wp.exp(-x / range_sigma)
            row = range_cell(r, min_range, range_resolution, n_range)
            if row >= 0:
                if range_sigma > 0.0:
                    row = wp.min(int(wp.floor((r + x - min_range) / range_resolution)), n_range - 1)
                beam = wp.min(int(wp.floor((bearing + 0.5 * horizontal_fov) / horizontal_fov * float(n_beams))),
                              n_beams - 1)
                value = (amp[i] * object_reflectivity[h.obj] * cos_ret * elevation_table[k][2]
                         * two_way_absorption(alpha_db_per_m, r) * pdf)
                if spreading == 1:
                    value = value / (r * r)
                cell = row * n_beams + beam
                label = object_label[h.obj]
    mp_value[i] = value
    mp_cell[i] = cell
    mp_label[i] = label


@wp.kernel
def holoocean_multipath_bin_kernel(mp_value: wp.array(dtype=wp.float32), mp_cell: wp.array(dtype=wp.int32),
                                   mp_label: wp.array(dtype=wp.int32), rays_per_pose: int, n_beams: int,
                                   clean: wp.array3d(dtype=wp.float32), hits: wp.array3d(dtype=wp.int32),
                                   labels: wp.array3d(dtype=wp.int32), peak: wp.array3d(dtype=wp.float32),
                                   start: int):
    """Element (pose b): add the pose's multipath contributions, in ray order, to its image (after the direct
    returns' ``sonar_bin_kernel``: clean += value, hits += 1, label of the strongest return). One element per pose
    reads its rays sequentially, as a contribution may land in any beam: deterministic without atomics."""
    b = wp.tid() + start
    first = b * rays_per_pose
    for t in range(rays_per_pose):
        c = mp_cell[first + t]
        if c >= 0:
            row = c // n_beams
            j = c - row * n_beams
            s = mp_value[first + t]
            n = hits[b, row, j] + 1
            hits[b, row, j] = n
            clean[b, row, j] = clean[b, row, j] + s
            if n == 1 or s > peak[b, row, j]:
                peak[b, row, j] = s
                labels[b, row, j] = mp_label[first + t]


# -- the fan sonars' peer model (side-scan, profiling, single-beam: kernels/acoustic_fans.py) ----------------------


@wp.kernel
def fan_peer_bounce_return_kernel(directions: wp.array(dtype=wp.vec3), hit_distance: wp.array(dtype=wp.float32),
                                  hit_normal: wp.array(dtype=wp.vec3), hit_face: wp.array(dtype=wp.int32),
                                  hit_obj: wp.array(dtype=wp.int32), object_reflectivity: wp.array(dtype=wp.float32),
                                  object_label: wp.array(dtype=wp.int32), plane_obj: int,
                                  weights: wp.array(dtype=wp.float32), rays_per_pose: int,
                                  path: wp.array(dtype=wp.float32), amp: wp.array(dtype=wp.float32),
                                  min_range: float, range_resolution: float, n_range: int, alpha_db_per_m: float,
                                  spreading: int, block: int, n_blocks: int, rays_per_channel: int,
                                  ray_value: wp.array(dtype=wp.float32), ray_bin: wp.array(dtype=wp.int32),
                                  ray_label: wp.array(dtype=wp.int32), start: int):
    """Ray i's return of bounce ``block`` (0: direct) in the fan peers' law at the total one-way path L:
    s = amp^4 mu cos(psi) w_k 10^(-2 alpha L / 10) [(1 m / L)^2 if spreading] (kernels/imaging_sonar.py
    ``ray_return``), binned at L, stored at ((channel of ray i) n_blocks + block) rays_per_channel + (ray in
    channel). The analytic surface plane (``plane_obj``) returns nothing."""
    i = wp.tid() + start
    k = i - (i // rays_per_pose) * rays_per_pose
    o = block_slot(i, rays_per_channel, n_blocks, block)
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, directions[i])
    value = float(0.0)
    cell = int(-1)
    label = int(-1)
    if h.hit == 1 and h.obj != plane_obj:
        L = path[i] + h.distance
        cell = range_cell(L, min_range, range_resolution, n_range)
        if cell >= 0:
            a2 = amp[i] * amp[i]
            value = a2 * a2 * ray_return(object_reflectivity[h.obj], h.cos_incidence, weights[k], alpha_db_per_m, L,
                                         spreading)
            label = object_label[h.obj]
    ray_value[o] = value
    ray_bin[o] = cell
    ray_label[o] = label


@wp.kernel
def fan_peer_first_block_kernel(blocked_value: wp.array(dtype=wp.float32), blocked_bin: wp.array(dtype=wp.int32),
                                blocked_label: wp.array(dtype=wp.int32), n_blocks: int, rays_per_channel: int,
                                ray_value: wp.array(dtype=wp.float32), ray_bin: wp.array(dtype=wp.int32),
                                ray_label: wp.array(dtype=wp.int32), start: int):
    """Ray i's direct return (block 0 of :func:`fan_peer_bounce_return_kernel`'s layout) copied to index i, for the
    sensors' own per-ray detection (profiling soundings)."""
    i = wp.tid() + start
    channel = i // rays_per_channel
    o = channel * n_blocks * rays_per_channel + (i - channel * rays_per_channel)
    ray_value[i] = blocked_value[o]
    ray_bin[i] = blocked_bin[o]
    ray_label[i] = blocked_label[o]
