"""Forward-looking imaging sonar kernels (docs/PHYSICS.md §1): cast the fan, bin the returns, normalise, add noise.

One render of B poses is a fixed set of launches, all on the device (after the result images are cleared):

1. :func:`sonar_ray_gen_kernel`, one element per ray: its world origin and direction; the scene's ray-cast
   backend (``Scene.raycast_into``) casts them; :func:`sonar_ray_return_kernel`, one element per ray: stores the
   ray's return ``s`` (docs/PHYSICS.md §1), its range bin (-1 when the ray missed or fell outside
   [min_range, max_range)) and the semantic label of the surface hit.
2. :func:`sonar_bin_kernel`, one element per (pose, beam): walks that beam's rays in a fixed order and
   accumulates them into the column of bins it alone owns. A gather, not a scatter: no atomics, so the image
   is bit-identical whatever the batch size, the CPU thread count or the device.
3. :func:`sonar_mean_kernel` (mean aggregation only), one element per bin.
4. :func:`sonar_row_max_kernel` and :func:`sonar_frame_max_kernel`: maxima for the normalisation.
5. :func:`sonar_noise_keys_kernel` (one element per pose) and :func:`sonar_finish_kernel` (one element per
   bin): normalisation, speckle and noise.

Layouts. Rays of one pose are ordered (beam, sub-bearing, elevation), so a beam's rays are contiguous:
ray ``(b, j, u, k)`` is at ``b * rays_per_pose + (j * rays_per_beam + u) * n_elev + k``. Images are
(B, n_range, n_beams) with row 0 the nearest range bin and column 0 the most-port beam. Angles in radians,
bearing positive to starboard; ranges in metres.
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.random import rayleigh, stream_key
from oceansim_py.kernels.raycast import RayHit, load_hit, sensor_to_world, two_way_absorption

#: Noise stream ids (kernels/random.py): the multiplicative and additive terms draw from unrelated streams.
STREAM_MULTIPLICATIVE = wp.constant(1)
STREAM_ADDITIVE = wp.constant(2)
#: Stream of HoloOcean's range noise (RangeSigma), per ray.
STREAM_RANGE = wp.constant(3)

#: Normalisation modes passed to :func:`sonar_finish_kernel`.
NORMALISE_NONE = wp.constant(0)
NORMALISE_ROW = wp.constant(1)
NORMALISE_GLOBAL = wp.constant(2)


@wp.func
def range_cell(distance: float, min_range: float, range_resolution: float, n_range: int) -> int:
    """Range bin of a return at ``distance`` (m): floor((r - min_range) / dr), or -1 outside [min_range, max_range)."""
    cell = int(-1)
    f = (distance - min_range) / range_resolution
    if f >= 0.0 and f < float(n_range):
        cell = wp.min(int(wp.floor(f)), n_range - 1)
    return cell


@wp.func
def ray_return(reflectivity: float, cos_incidence: float, weight: float, alpha_db_per_m: float, distance: float,
               spreading: int) -> float:
    """Return of one ray (docs/PHYSICS.md §1):
    s = mu * cos(psi) * w * 10^(-2 alpha r / 10) * [(1 m / r)^2 if spreading],
    with w the ray's solid angle (sr) times the beam pattern."""
    value = reflectivity * cos_incidence * weight * two_way_absorption(alpha_db_per_m, distance)
    if spreading == 1:
        value = value / (distance * distance)
    return value


@wp.struct
class BinnedReturn:
    """A ray's contribution to a range-binned image: return s, range bin (-1 outside the window) and the label
    of the surface it hit (-1 if none)."""

    value: float
    cell: int
    label: int


@wp.func
def binned_return(h: RayHit, object_reflectivity: wp.array(dtype=wp.float32),
                  object_label: wp.array(dtype=wp.int32), weight: float, alpha_db_per_m: float, spreading: int,
                  min_range: float, range_resolution: float, n_range: int) -> BinnedReturn:
    """The :func:`ray_return` of hit ``h`` and its :func:`range_cell`; zero and -1 for misses and hits outside
    the range window."""
    out = BinnedReturn()
    out.value = 0.0
    out.cell = -1
    out.label = -1
    if h.hit == 1:
        cell = range_cell(h.distance, min_range, range_resolution, n_range)
        if cell >= 0:
            out.value = ray_return(object_reflectivity[h.obj], h.cos_incidence, weight, alpha_db_per_m, h.distance,
                                   spreading)
            out.cell = cell
            out.label = object_label[h.obj]
    return out


@wp.kernel
def sonar_ray_gen_kernel(poses: wp.array(dtype=wp.transform), bearing_cos_sin: wp.array(dtype=wp.vec2),
                         elevation_table: wp.array(dtype=wp.vec3), n_elev: int, rays_per_pose: int,
                         origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3), start: int):
    """Ray i's world origin (the sensor position) and unit world direction, for the scene's backend.

    bearing_cos_sin[c] = (cos b_c, sin b_c) of bearing ray c; elevation_table[k] = (cos e_k, sin e_k, w_k): the
    sensor-frame (FLU) direction is (cos e cos b, -cos e sin b, sin e).
    """
    i = wp.tid() + start
    b = i // rays_per_pose
    local = i - b * rays_per_pose
    c = local // n_elev
    k = local - c * n_elev
    bcs = bearing_cos_sin[c]
    et = elevation_table[k]
    d_flu = wp.vec3(et[0] * bcs[0], -et[0] * bcs[1], et[1])
    pose = poses[b]
    origins[i] = wp.transform_get_translation(pose)
    directions[i] = sensor_to_world(pose, d_flu)


@wp.kernel
def sonar_ray_return_kernel(directions: wp.array(dtype=wp.vec3), hit_distance: wp.array(dtype=wp.float32),
                            hit_normal: wp.array(dtype=wp.vec3), hit_face: wp.array(dtype=wp.int32),
                            hit_obj: wp.array(dtype=wp.int32), object_reflectivity: wp.array(dtype=wp.float32),
                            object_label: wp.array(dtype=wp.int32), elevation_table: wp.array(dtype=wp.vec3),
                            n_elev: int, rays_per_pose: int, min_range: float, range_resolution: float, n_range: int,
                            alpha_db_per_m: float, spreading: int, range_sigma: float,
                            range_keys: wp.array(dtype=wp.int32), perfect_cos: float,
                            ray_perfect: wp.array(dtype=wp.int32), ray_value: wp.array(dtype=wp.float32),
                            ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32), start: int):
    """Store ray i's return from its hit (the backend's results for the rays of :func:`sonar_ray_gen_kernel`).

    w_k = elevation_table[k][2] = cos e_k * db * de * g(e_k) is the ray's solid angle (sr) times the elevation beam
    pattern. The return is s = mu * cos(psi) * w_k * 10^(-2 alpha r / 10) * [(1 m / r)^2 if spreading].

    HoloOcean's range noise (RangeSigma, ``range_sigma`` > 0 m): a return inside the window is binned at r + x,
    x ~ Exponential(mean range_sigma) (clamped to the last bin, as HoloOcean does), and scaled by the scaled pdf
    exp(-x / range_sigma); x is drawn from stream ``range_keys[b]`` at the ray's index within the pose.
    With ``perfect_cos`` > 0 (HoloOcean's AzimuthStreaks), ``ray_perfect[i]`` = 1 for a binned return whose
    incidence is within acos(perfect_cos) of the normal, else 0.
    """
    i = wp.tid() + start
    b = i // rays_per_pose
    local = i - b * rays_per_pose
    k = local - (local // n_elev) * n_elev
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, directions[i])
    ret = binned_return(h, object_reflectivity, object_label, elevation_table[k][2], alpha_db_per_m, spreading,
                        min_range, range_resolution, n_range)
    if range_sigma > 0.0 and ret.cell >= 0:
        state = wp.rand_init(range_keys[b], local)
        x = -range_sigma * wp.log(1.0 - wp.randf(state))
        ret.cell = wp.min(int(wp.floor((h.distance + x - min_range) / range_resolution)), n_range - 1)
        ret.value = ret.value * wp.exp(-x / range_sigma)
    if perfect_cos > 0.0:
        perfect = int(0)
        if ret.cell >= 0 and h.cos_incidence > perfect_cos:
            perfect = 1
        ray_perfect[i] = perfect
    ray_value[i] = ret.value
    ray_bin[i] = ret.cell
    ray_label[i] = ret.label


@wp.kernel
def sonar_bin_kernel(ray_value: wp.array(dtype=wp.float32), ray_bin: wp.array(dtype=wp.int32),
                     ray_label: wp.array(dtype=wp.int32), rays_per_beam: int, rays_per_pose: int, n_beams: int,
                     clean: wp.array3d(dtype=wp.float32), hits: wp.array3d(dtype=wp.int32),
                     labels: wp.array3d(dtype=wp.int32), peak: wp.array3d(dtype=wp.float32), start: int):
    """Element (pose b, beam j): add the beam's ``rays_per_beam`` returns, in ray order, into column j of image b.

    Expects ``clean`` and ``hits`` zeroed and ``labels`` set to -1. clean: sum of the returns per bin; hits:
    rays binned per bin; labels: label of the strongest single return (the first such ray on ties); peak:
    scratch holding that return (written by a bin's first ray before it is read).
    """
    e = wp.tid() + start
    b = e // n_beams
    j = e - b * n_beams
    first = b * rays_per_pose + j * rays_per_beam
    for t in range(rays_per_beam):
        cell = ray_bin[first + t]
        if cell >= 0:
            s = ray_value[first + t]
            n = hits[b, cell, j] + 1
            hits[b, cell, j] = n
            clean[b, cell, j] = clean[b, cell, j] + s
            if n == 1:
                peak[b, cell, j] = s
                labels[b, cell, j] = ray_label[first + t]
            elif s > peak[b, cell, j]:
                peak[b, cell, j] = s
                labels[b, cell, j] = ray_label[first + t]


@wp.kernel
def sonar_mean_kernel(clean: wp.array3d(dtype=wp.float32), hits: wp.array3d(dtype=wp.int32), n_beams: int,
                      n_range: int, start: int):
    """Element (pose b, row r, beam j): turn the bin's sum into the mean of its returns (mean aggregation)."""
    e = wp.tid() + start
    per_frame = n_range * n_beams
    b = e // per_frame
    cell = e - b * per_frame
    r = cell // n_beams
    j = cell - r * n_beams
    n = hits[b, r, j]
    if n > 1:
        clean[b, r, j] = clean[b, r, j] / float(n)


@wp.kernel
def sonar_row_max_kernel(clean: wp.array3d(dtype=wp.float32), n_beams: int, n_range: int,
                         row_max: wp.array2d(dtype=wp.float32), start: int):
    """Element (pose b, row r): the largest bin value of that range row."""
    e = wp.tid() + start
    b = e // n_range
    r = e - b * n_range
    m = float(0.0)
    for j in range(n_beams):
        m = wp.max(m, clean[b, r, j])
    row_max[b, r] = m


@wp.kernel
def sonar_frame_max_kernel(row_max: wp.array2d(dtype=wp.float32), n_range: int,
                           frame_max: wp.array(dtype=wp.float32), start: int):
    """Element b: the largest bin value of image b (from its row maxima)."""
    b = wp.tid() + start
    m = float(0.0)
    for r in range(n_range):
        m = wp.max(m, row_max[b, r])
    frame_max[b] = m


@wp.kernel
def sonar_noise_keys_kernel(seed: int, frame_index: int, sensor_id: int, keys: wp.array2d(dtype=wp.int32),
                            start: int):
    """Element b: the stream keys of frame ``frame_index + b`` (column 0 multiplicative, 1 additive), so that
    the per-bin kernel seeds ``wp.rand_init(key, bin)``, the same state as ``stream_state`` gives."""
    b = wp.tid() + start
    keys[b, 0] = stream_key(seed, frame_index + b, sensor_id, STREAM_MULTIPLICATIVE)
    keys[b, 1] = stream_key(seed, frame_index + b, sensor_id, STREAM_ADDITIVE)


@wp.kernel
def sonar_finish_kernel(clean: wp.array3d(dtype=wp.float32), row_max: wp.array2d(dtype=wp.float32),
                        frame_max: wp.array(dtype=wp.float32), normalise: int, n_beams: int, n_range: int,
                        min_range: float, range_resolution: float, max_range: float, fov_rad: float,
                        sigma_mult: float, sigma_add: float, range_scaled: int, beam_gain: float,
                        beam_width_rad: float, noise_keys: wp.array2d(dtype=wp.int32),
                        intensity: wp.array3d(dtype=wp.float32), start: int):
    """Element (pose b, row r, beam j): normalise the clean bin in place, then
    z = I * (1 + w_m) + w_a * h, w_m ~ N(0, sigma_mult), w_a ~ Rayleigh(sigma_add), z >= 0, with
    h = 1 or, when ``range_scaled``, h = (r / r_max)^2 * (1 + beam_gain * exp(-(bearing / beam_width)^2)).

    Noise draws are keyed by (seed, frame_index + b, sensor_id, stream, r * n_beams + j) through
    ``noise_keys`` from :func:`sonar_noise_keys_kernel`.
    """
    e = wp.tid() + start
    per_frame = n_range * n_beams
    b = e // per_frame
    cell = e - b * per_frame
    r = cell // n_beams
    j = cell - r * n_beams
    v = clean[b, r, j]
    if normalise == NORMALISE_ROW:
        m = row_max[b, r]
        if m > 0.0:
            v = v / m
            clean[b, r, j] = v
    elif normalise == NORMALISE_GLOBAL:
        m = frame_max[b]
        if m > 0.0:
            v = v / m
            clean[b, r, j] = v
    z = v
    if sigma_mult > 0.0 and v != 0.0:   # an empty bin stays 0 whatever w_m: skip the draw
        sm = wp.rand_init(noise_keys[b, 0], cell)
        z = v * (1.0 + sigma_mult * wp.randn(sm))
    if sigma_add > 0.0:
        sa = wp.rand_init(noise_keys[b, 1], cell)
        h = float(1.0)
        if range_scaled == 1:
            rr = (min_range + (float(r) + 0.5) * range_resolution) / max_range
            bearing = -0.5 * fov_rad + (float(j) + 0.5) * fov_rad / float(n_beams)
            q = bearing / beam_width_rad
            h = rr * rr * (1.0 + beam_gain * wp.exp(-q * q))
        z = z + rayleigh(sa, sigma_add) * h
    intensity[b, r, j] = wp.max(z, 0.0)


@wp.kernel
def sonar_perfect_count_kernel(ray_perfect: wp.array(dtype=wp.int32), ray_bin: wp.array(dtype=wp.int32),
                               rays_per_beam: int, rays_per_pose: int, n_beams: int,
                               perfect: wp.array3d(dtype=wp.int32), start: int):
    """Element (pose b, beam j): count the beam's binned returns with a near-normal incidence (``ray_perfect``)
    per bin of column j. Expects ``perfect`` zeroed."""
    e = wp.tid() + start
    b = e // n_beams
    j = e - b * n_beams
    first = b * rays_per_pose + j * rays_per_beam
    for t in range(rays_per_beam):
        cell = ray_bin[first + t]
        if cell >= 0 and ray_perfect[first + t] == 1:
            perfect[b, cell, j] = perfect[b, cell, j] + 1


@wp.kernel
def sonar_streaks_kernel(intensity: wp.array3d(dtype=wp.float32), perfect: wp.array3d(dtype=wp.int32),
                         hits: wp.array3d(dtype=wp.int32), n_beams: int, n_range: int, fraction: float, mode: int,
                         start: int):
    """Element (pose b, row r): HoloOcean's azimuth streaks. When the row's near-normal returns are at least
    ``fraction`` of its binned returns (HoloOcean: 8 % within 8 degrees of the normal), every bin of the row is
    remapped: ``mode`` -1 (removal) z -> z^2, +1 (increased gain) z -> 1 - (1 - z)^2."""
    e = wp.tid() + start
    b = e // n_range
    r = e - b * n_range
    n_perfect = int(0)
    n_total = int(0)
    for j in range(n_beams):
        n_perfect = n_perfect + perfect[b, r, j]
        n_total = n_total + hits[b, r, j]
    if n_total > 0 and float(n_perfect) >= fraction * float(n_total):
        for j in range(n_beams):
            z = intensity[b, r, j]
            if mode == -1:
                intensity[b, r, j] = z * z
            else:
                intensity[b, r, j] = 1.0 - (1.0 - z) * (1.0 - z)
