"""Multibeam echosounder kernels: point scatterers, pulse deposit, per-frequency sums, beam mixing.

Every sum runs in a fixed order inside one kernel element (no BLAS, no atomics), so a ping is bit-identical
whatever the CPU thread count, chunking, batch size or executor.

The model is docs/PHYSICS.md section 2 (Choi et al. 2021, Brown et al. 2017). Every ray that hits is a point
scatterer with complex amplitude

    A_i = a_i * D(phi_i) * exp(-2 alpha_Np r_i) / r_i^2 * S0 * (b / sqrt(pi)) * exp(-i 2 k_c r_i)

where a_i = (xi_x + i xi_y) / sqrt(2) * sqrt(mu cos^2 psi r^2 dtheta dphi). The carrier phase exp(-i 2 k_c r)
is folded into A_i, so the per-beam complex *baseband* time series is

    p_j(t) = sum_i A_i * exp(-b^2 (t - tau_i)^2),    tau_i = 2 r_i / c,

sampled at t_n = t_0 + n / fs. Sign convention: P(f) = S(f) sum_i A'_i exp(-i 2 pi f tau_i) with
p(t) = integral P(f) exp(+i 2 pi f t) df (the paper's exp(+i 2 k r) is the same model under the
exp(-i omega t) convention; intensities are identical). Scatterer delays are stored in samples relative to
t_0 (``delay = (tau_i - t_0) * fs``); a ray that misses, or whose pulse cannot reach the window, gets
``NO_DELAY``.

Frames: FLU sensor frame, bearing positive to starboard (``fan_direction``), world Z up, metres, seconds.
Complex values are ``wp.vec2`` (real, imaginary).
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.acoustic_chain import complex_gaussian, scatterer_gaussian
from oceansim_py.kernels.random import pcg_hash, stream_state
from oceansim_py.kernels.raycast import fan_direction, load_hit, sensor_to_world, two_way_absorption

# forward-only kernels: no adjoints to generate, which halves the first-use compile time
wp.set_module_options({"enable_backward": False})

#: Delay written for a scatterer that contributes nothing to the window.
NO_DELAY = -1.0e30

#: Random stream ids of the real and imaginary parts of the scatterer amplitudes (independent streams).
STREAM_XI_REAL = 0
STREAM_XI_IMAG = 1

@wp.func
def line_array_pattern(angle: float, beam_width: float) -> float:
    """Signed pressure pattern B = sin(x)/x, x = pi (0.884 / beam_width) sin(angle) of a uniform line array
    whose -3 dB full width is ``beam_width`` (rad)."""
    x = wp.pi * (0.884 / beam_width) * wp.sin(angle)
    if wp.abs(x) < 1.0e-6:
        return 1.0
    return wp.sin(x) / x


@wp.func
def peer_ray_angles(q: int, n_beams: int, az_rays: int, el_rays: int, fov: float, elevation_fov: float) -> wp.vec2:
    """(bearing, elevation) in rad of ray ``q`` of a pose, q = (beam j, azimuth sub-ray a, elevation ray k) in
    row-major order: cell centres of the beam's az_rays x el_rays grid."""
    rays_per_beam = az_rays * el_rays
    j = q // rays_per_beam
    w = q - j * rays_per_beam
    a = w // el_rays
    k = w - a * el_rays
    beam_step = fov / float(n_beams)
    d_phi = elevation_fov / float(el_rays)
    bearing = -0.5 * fov + (float(j) + (float(a) + 0.5) / float(az_rays)) * beam_step
    elevation = -0.5 * elevation_fov + (float(k) + 0.5) * d_phi
    return wp.vec2(bearing, elevation)


@wp.kernel
def multibeam_ray_gen_kernel(poses: wp.array(dtype=wp.transform), n_beams: int, az_rays: int, el_rays: int,
                             fov: float, elevation_fov: float, origins: wp.array(dtype=wp.vec3),
                             directions: wp.array(dtype=wp.vec3), start: int):
    """One element per ray (order of :func:`multibeam_scatter_kernel`): its world origin and unit world direction
    at :func:`peer_ray_angles`, for the scene's ray-cast backend."""
    i = wp.tid() + start
    rays_per_pose = n_beams * az_rays * el_rays
    b = i // rays_per_pose
    q = i - b * rays_per_pose
    angles = peer_ray_angles(q, n_beams, az_rays, el_rays, fov, elevation_fov)
    pose = poses[b]
    origins[i] = wp.transform_get_translation(pose)
    directions[i] = sensor_to_world(pose, fan_direction(angles[0], angles[1]))


@wp.kernel
def multibeam_scatter_kernel(directions: wp.array(dtype=wp.vec3), hit_distance: wp.array(dtype=wp.float32),
                             hit_normal: wp.array(dtype=wp.vec3), hit_face: wp.array(dtype=wp.int32),
                             hit_obj: wp.array(dtype=wp.int32), reflectivity: wp.array(dtype=wp.float32),
                             n_beams: int, az_rays: int, el_rays: int,
                             fov: float, elevation_fov: float, elevation_directivity: int,
                             sound_speed: float, frequency: float, sample_rate: float,
                             t0: float, window_end: float, half_width: float, amplitude_scale: float,
                             alpha_np: float, seed: int, frame_index: int, sensor: int,
                             amp: wp.array(dtype=wp.vec2), delay: wp.array(dtype=wp.float32), start: int):
    """One element per ray, from its hit (the backend's results for :func:`multibeam_ray_gen_kernel`'s rays):
    write the scatterer amplitude ``amp`` and delay ``delay`` (samples).

    Element i = (pose b, beam j, azimuth sub-ray a, elevation ray k) in row-major order; the random
    element index is the ray index within the frame, the frame is ``frame_index + b``. ``amplitude_scale``
    is S0 * b / sqrt(pi); ``half_width`` (samples) is the pulse truncation half width; ``window_end`` the
    last sample index; angles in radians.
    """
    i = wp.tid() + start
    rays_per_pose = n_beams * az_rays * el_rays
    b = i // rays_per_pose
    q = i - b * rays_per_pose
    beam_step = fov / float(n_beams)
    d_theta = beam_step / float(az_rays)
    d_phi = elevation_fov / float(el_rays)
    elevation = peer_ray_angles(q, n_beams, az_rays, el_rays, fov, elevation_fov)[1]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, directions[i])
    amp[i] = wp.vec2(0.0, 0.0)
    delay[i] = NO_DELAY
    if h.hit == 1:
        r = h.distance
        d = (2.0 * r / sound_speed - t0) * sample_rate
        if d >= -half_width and d <= window_end + half_width:
            mu = reflectivity[h.obj]
            cos_psi = h.cos_incidence
            magnitude = wp.sqrt(mu * cos_psi * cos_psi * r * r * d_theta * d_phi)
            gain = magnitude * wp.exp(-2.0 * alpha_np * r) / (r * r) * amplitude_scale
            if elevation_directivity != 0:
                gain = gain * line_array_pattern(elevation, elevation_fov)
            frame = frame_index + b
            sx = stream_state(seed, frame, sensor, STREAM_XI_REAL, q)
            sy = stream_state(seed, frame, sensor, STREAM_XI_IMAG, q)
            xi = wp.vec2(wp.randn(sx), wp.randn(sy)) * 0.70710678
            # carrier phase -2 k_c r in cycles, reduced before the float32 sine for accuracy at long range
            cycles = 2.0 * frequency * r / sound_speed
            phase = -2.0 * wp.pi * (cycles - wp.floor(cycles))
            c = wp.cos(phase)
            s = wp.sin(phase)
            amp[i] = wp.vec2(xi[0] * c - xi[1] * s, xi[0] * s + xi[1] * c) * gain
            delay[i] = d


@wp.kernel
def multibeam_deposit_kernel(amp: wp.array(dtype=wp.vec2), delay: wp.array(dtype=wp.float32),
                             rays_per_beam: int, n_beams: int, n_samples: int, half_width: float,
                             envelope_rate: float, raw: wp.array3d(dtype=wp.vec2), start: int):
    """Time-domain method. One element per (pose b, beam j): add each scatterer's pulse
    A_i exp(-(rate (n - d_i))^2) into column j of the zeroed sample-major series ``raw`` (B, samples, beams)
    over the samples within ``half_width`` of its delay d_i. ``envelope_rate`` = b / fs (per sample).
    Sequential per element: the sum order is the ray order, whatever the chunking."""
    e = wp.tid() + start
    b = e // n_beams
    j = e - b * n_beams
    first = e * rays_per_beam
    for q in range(rays_per_beam):
        d = delay[first + q]
        if d > NO_DELAY:
            A = amp[first + q]
            lo = wp.max(int(wp.ceil(d - half_width)), 0)
            hi = wp.min(int(wp.floor(d + half_width)), n_samples - 1)
            for n in range(lo, hi + 1):
                u = envelope_rate * (float(n) - d)
                raw[b, n, j] = raw[b, n, j] + A * wp.exp(-u * u)


@wp.kernel
def multibeam_spectrum_kernel(amp: wp.array(dtype=wp.vec2), delay: wp.array(dtype=wp.float32),
                              rays_per_beam: int, n_freq: int, n_fft: int,
                              spectrum_scale: wp.array(dtype=wp.float32),
                              spectrum: wp.array(dtype=wp.vec2), start: int):
    """Spectral reference (the paper's eq. 8). One element per (pose b, beam j, frequency m): the baseband
    spectrum P_j(f'_m) = G(f'_m) sum_i A_i exp(-i 2 pi f'_m tau'_i), f'_m = (m - n_freq // 2) / T_fft, with
    tau'_i = d_i / fs, so the phase is 2 pi (m - n_freq // 2) d_i / n_fft cycles (reduced in float64).
    ``spectrum_scale[m]`` is G(f'_m) = (sqrt(pi) / b) exp(-pi^2 f'^2 / b^2), the transform of the envelope.
    Cost: rays x frequencies complex exponentials (the bottleneck the paper measured)."""
    e = wp.tid() + start
    bj = e // n_freq
    m = e - bj * n_freq
    fm = wp.float64(m - n_freq // 2) / wp.float64(n_fft)
    acc = wp.vec2(0.0, 0.0)
    first = bj * rays_per_beam
    for q in range(rays_per_beam):
        d = delay[first + q]
        if d > NO_DELAY:
            cyc = fm * wp.float64(d)
            phase = -2.0 * wp.pi * float(cyc - wp.floor(cyc))
            c = wp.cos(phase)
            s = wp.sin(phase)
            A = amp[first + q]
            acc = acc + wp.vec2(A[0] * c - A[1] * s, A[0] * s + A[1] * c)
    spectrum[e] = acc * spectrum_scale[m]


@wp.kernel
def multibeam_nonzero_kernel(raw: wp.array3d(dtype=wp.vec2), n_beams: int, n_samples: int,
                             count: wp.array(dtype=wp.int32), beams: wp.array2d(dtype=wp.int32), start: int):
    """One element per (pose b, sample n): the beams whose series is non-zero at sample n, in increasing order,
    in ``beams[b * n_samples + n, :count]``. The mixing sums over these beams only (a seafloor return occupies a
    few beams per sample)."""
    e = wp.tid() + start
    b = e // n_samples
    n = e - b * n_samples
    m = int(0)
    for j in range(n_beams):
        v = raw[b, n, j]
        if v[0] != 0.0 or v[1] != 0.0:
            beams[e, m] = j
            m = m + 1
    count[e] = m


#: Output beams per element of the mixing kernel (each scatterer sample is loaded once for all of them).
MIX_BLOCK = 8

MixBlock = wp.types.vector(length=MIX_BLOCK, dtype=wp.float32)


@wp.kernel
def multibeam_mix_kernel(raw: wp.array3d(dtype=wp.vec2), count: wp.array(dtype=wp.int32),
                         beams: wp.array2d(dtype=wp.int32), pattern: wp.array(dtype=wp.float32),
                         inv_norm: wp.array(dtype=wp.float32), mix: int, n_beams: int, n_samples: int,
                         n_blocks: int, time_series: wp.array3d(dtype=wp.vec2),
                         intensity: wp.array3d(dtype=wp.float32), db: wp.array3d(dtype=wp.float32), start: int):
    """One element per (pose b, sample n, block of ``MIX_BLOCK`` output beams j): the beam-pattern mixing (when
    ``mix``) and the outputs.

    Mixed p_j = inv_norm[j] * sum_i pattern[|i - j|] p_i, summed over the non-zero beams i of the sample
    (``count``, ``beams``) in increasing i: a fixed order, so the result does not depend on the device's thread
    count or chunking. The weights W[j, i] = B(theta_i - theta_j) / sqrt(sum_i B^2) are Toeplitz for uniformly
    spaced beams: ``pattern[k]`` = B(k * beam step) (padded with ``MIX_BLOCK`` extra entries for the last
    block), ``inv_norm[j]`` the row's normalisation. Without ``mix`` p_j is raw. Writes the (B, samples, beams)
    complex series, |p|^2 and 10 log10 |p|^2 (dB; -300 for an exact zero)."""
    e = wp.tid() + start
    bn = e // n_blocks
    j0 = (e - bn * n_blocks) * MIX_BLOCK
    b = bn // n_samples
    n = bn - b * n_samples
    re = MixBlock()
    im = MixBlock()
    if mix != 0:
        for q in range(count[bn]):
            i = beams[bn, q]
            v = raw[b, n, i]
            for jj in range(MIX_BLOCK):
                w = pattern[wp.abs(i - j0 - jj)]
                re[jj] = re[jj] + w * v[0]
                im[jj] = im[jj] + w * v[1]
    for jj in range(MIX_BLOCK):
        j = j0 + jj
        if j < n_beams:
            v = raw[b, n, j]
            if mix != 0:
                v = wp.vec2(re[jj], im[jj]) * inv_norm[j]
            p2 = wp.dot(v, v)
            time_series[b, n, j] = v
            intensity[b, n, j] = p2
            if p2 > 0.0:
                db[b, n, j] = 10.0 * wp.log10(p2)
            else:
                db[b, n, j] = -300.0


# -- the device chain (model "device"; docs/PHYSICS.md §1b) ----------------------------------------------------


@wp.func
def sinc(x: float) -> float:
    """sin(pi x) / (pi x), 1 at x = 0."""
    if wp.abs(x) < 1.0e-6:
        return 1.0
    return wp.sin(wp.pi * x) / (wp.pi * x)


#: Largest range extent of one ray's footprint in the device model, in samples (a ray at near-grazing incidence,
#: cos psi -> 0, is capped to it).
MAX_FOOTPRINT_SAMPLES = wp.constant(4096.0)

#: Footprints up to this many samples are split into one piece per sample (:func:`deposit_pulse`).
PER_SAMPLE_PIECES = wp.constant(128.0)

#: Wider footprints are split into ceil(extent x sinc_rate) equal pieces, at most this many: pieces spaced
#: 1 / sinc_rate samples (1 / (kappa B) in delay) or closer add up to a flat expected intensity (the sinc^2 response's
#: spectrum is zero from sinc_rate cycles per sample on), flat up to a footprint of MAX_FOOTPRINT_PIECES /
#: sinc_rate samples (1156 at f_s = 2 B). Bounds a ray's deposit cost.
MAX_FOOTPRINT_PIECES = wp.constant(512)


@wp.func
def device_ray_angles(q: int, n_beams: int, az_rays: int, el_rays: int, fov: float,
                      elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float, jitter: int,
                      jitter_key: int) -> wp.vec2:
    """(bearing, elevation) in rad of ray ``q`` of a pose in the device model: the cell centre (bearing as the
    peer, elevation ``elevation_table[k][0]``), jittered uniformly inside its (beam step / az_rays) x
    ``elevation_cell`` cell with ``jitter`` (stream ``jitter_key`` at ray q: the same for every frame)."""
    rays_per_beam = az_rays * el_rays
    j = q // rays_per_beam
    w = q - j * rays_per_beam
    a = w // el_rays
    k = w - a * el_rays
    beam_step = fov / float(n_beams)
    d_theta = beam_step / float(az_rays)
    bearing = -0.5 * fov + (float(j) + (float(a) + 0.5) / float(az_rays)) * beam_step
    elevation = elevation_table[k][0]
    if jitter == 1:
        state = wp.rand_init(jitter_key, q)
        bearing = bearing + (wp.randf(state) - 0.5) * d_theta
        elevation = elevation + (wp.randf(state) - 0.5) * elevation_cell
    return wp.vec2(bearing, elevation)


@wp.kernel
def multibeam_device_ray_gen_kernel(poses: wp.array(dtype=wp.transform), n_beams: int, az_rays: int, el_rays: int,
                                    fov: float, elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float,
                                    jitter: int, jitter_key: int, origins: wp.array(dtype=wp.vec3),
                                    directions: wp.array(dtype=wp.vec3), start: int):
    """Device model, one element per ray: its world origin and unit world direction at
    :func:`device_ray_angles`, for the scene's ray-cast backend."""
    i = wp.tid() + start
    rays_per_pose = n_beams * az_rays * el_rays
    b = i // rays_per_pose
    q = i - b * rays_per_pose
    angles = device_ray_angles(q, n_beams, az_rays, el_rays, fov, elevation_table, elevation_cell, jitter,
                               jitter_key)
    pose = poses[b]
    origins[i] = wp.transform_get_translation(pose)
    directions[i] = sensor_to_world(pose, fan_direction(angles[0], angles[1]))


@wp.kernel
def multibeam_device_scatter_kernel(directions: wp.array(dtype=wp.vec3), hit_distance: wp.array(dtype=wp.float32),
                                    hit_normal: wp.array(dtype=wp.vec3), hit_face: wp.array(dtype=wp.int32),
                                    hit_obj: wp.array(dtype=wp.int32), object_mu: wp.array(dtype=wp.float32),
                                    poses: wp.array(dtype=wp.transform),
                                    n_beams: int, az_rays: int, el_rays: int, fov: float,
                                    elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float, jitter: int,
                                    jitter_key: int, phase_key: int, phase_grid: float,
                                    sound_speed: float, frequency: float, sample_rate: float, t0: float,
                                    window_end: float, half_width: float, source_intensity: float,
                                    alpha_db_per_m: float, amp: wp.array(dtype=wp.vec2),
                                    power: wp.array(dtype=wp.float32), delay: wp.array(dtype=wp.float32),
                                    extent: wp.array(dtype=wp.float32), start: int):
    """Device model, one element per ray (same ray order as :func:`multibeam_scatter_kernel`), from its hit (the
    backend's results for :func:`multibeam_device_ray_gen_kernel`'s rays, directions at :func:`device_ray_angles`).

    Sonar equation of the return
    (re 1 uPa^2 at the receiver): I = SL mu cos(psi) w_k / r^2 10^(-2 alpha r / 10), w_k = solid angle x two-way
    elevation pattern (sr). Amplitude A = sqrt(I) xi exp(-i 2 k_c r) with xi a unit complex Gaussian fixed to the
    hit point quantised to ``phase_grid`` (static speckle for a static sensor). Writes amp, power = I, delay
    (samples after t0; NO_DELAY for a miss or a pulse outside the window) and ``extent``, the range extent of the
    ray's surface footprint in samples (r / cos(psi) sqrt((n . e_a)^2 + (n . e_b)^2), e_a, e_b the cell's edge
    vectors, capped at ``MAX_FOOTPRINT_SAMPLES``)."""
    i = wp.tid() + start
    rays_per_beam = az_rays * el_rays
    rays_per_pose = n_beams * rays_per_beam
    b = i // rays_per_pose
    q = i - b * rays_per_pose
    k = q - (q // el_rays) * el_rays
    d_theta = fov / float(n_beams) / float(az_rays)
    et = elevation_table[k]
    angles = device_ray_angles(q, n_beams, az_rays, el_rays, fov, elevation_table, elevation_cell, jitter,
                               jitter_key)
    bearing = angles[0]
    elevation = angles[1]
    pose = poses[b]
    origin = wp.transform_get_translation(pose)
    direction = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, direction)
    amp[i] = wp.vec2(0.0, 0.0)
    power[i] = 0.0
    delay[i] = NO_DELAY
    extent[i] = 0.0
    if h.hit == 1:
        r = h.distance
        d = (2.0 * r / sound_speed - t0) * sample_rate
        if d >= -half_width and d <= window_end + half_width:
            ce = wp.cos(elevation)
            se = wp.sin(elevation)
            cb = wp.cos(bearing)
            sb = wp.sin(bearing)
            da = wp.dot(h.normal, sensor_to_world(pose, wp.vec3(-se * cb, se * sb, ce))) * elevation_cell
            dbb = wp.dot(h.normal, sensor_to_world(pose, wp.vec3(-sb, -cb, 0.0))) * (ce * d_theta)
            footprint = r * wp.sqrt(da * da + dbb * dbb) / wp.max(h.cos_incidence, 1.0e-3)
            extent[i] = wp.min(footprint * 2.0 * sample_rate / sound_speed, MAX_FOOTPRINT_SAMPLES)
            value = (source_intensity * object_mu[h.obj] * h.cos_incidence * et[2] / (r * r)
                     * two_way_absorption(alpha_db_per_m, r))
            xi = scatterer_gaussian(origin + r * direction, phase_grid, phase_key)
            cycles = 2.0 * frequency * r / sound_speed
            phase = -2.0 * wp.pi * (cycles - wp.floor(cycles))
            c = wp.cos(phase)
            s = wp.sin(phase)
            amp[i] = wp.vec2(xi[0] * c - xi[1] * s, xi[0] * s + xi[1] * c) * wp.sqrt(value)
            power[i] = value
            delay[i] = d


@wp.func
def rotate_by_hash(piece: wp.vec2, hh: wp.uint32) -> wp.vec2:
    """``piece`` times exp(i phi), phi = 2 pi (the hash's top 24 bits) / 2^24: a random phase from hash ``hh``."""
    phase = 6.283185307179586 * float(hh >> wp.uint32(8)) / 16777216.0
    c = wp.cos(phase)
    s = wp.sin(phase)
    return wp.vec2(piece[0] * c - piece[1] * s, piece[0] * s + piece[1] * c)


@wp.func
def deposit_piece(piece: wp.vec2, pw: float, centre: float, b: int, j: int, n_samples: int, half_width: float,
                  sinc_rate: float, raw: wp.array3d(dtype=wp.vec2), raw_power: wp.array3d(dtype=wp.float32)):
    """Add ``piece`` h(n - centre) to the field and ``pw`` h(n - centre)^2 to the expected intensity of beam j of
    pose b over the samples n within ``half_width`` of ``centre``, h(u) = sinc(sinc_rate u)."""
    lo = wp.max(int(wp.ceil(centre - half_width)), 0)
    hi = wp.min(int(wp.floor(centre + half_width)), n_samples - 1)
    for n in range(lo, hi + 1):
        g = sinc(sinc_rate * (float(n) - centre))
        raw[b, n, j] = raw[b, n, j] + piece * g
        raw_power[b, n, j] = raw_power[b, n, j] + pw * g * g


@wp.func
def deposit_pulse(A: wp.vec2, P: float, d: float, ext: float, q: int, b: int, j: int, n_samples: int,
                  half_width: float, sinc_rate: float, raw: wp.array3d(dtype=wp.vec2),
                  raw_power: wp.array3d(dtype=wp.float32)):
    """Deposit one ray's pulse (amplitude A, intensity P, delay d and footprint extent ``ext`` in samples, index q
    in its beam's list for the random phases) into beam j of pose b: :func:`multibeam_device_deposit_kernel`'s
    pieces."""
    half = 0.5 * ext
    seed = pcg_hash(wp.uint32(int(d * 4096.0)) ^ wp.uint32(q) * wp.uint32(-1640531527))
    if ext > PER_SAMPLE_PIECES:
        # a wide footprint: n_pieces equal pieces 1 / sinc_rate samples apart or closer; the one holding d keeps
        # the ray's phase
        n_pieces = wp.min(int(wp.ceil(ext * sinc_rate)), MAX_FOOTPRINT_PIECES)
        k_own = n_pieces // 2
        width = ext / float(n_pieces)
        weight = 1.0 / float(n_pieces)
        for k in range(n_pieces):
            piece = A * wp.sqrt(weight)
            if k != k_own:
                piece = rotate_by_hash(piece, pcg_hash(seed ^ wp.uint32(k) * wp.uint32(-1028477387)))
            deposit_piece(piece, P * weight, d - half + (float(k) + 0.5) * width, b, j, n_samples, half_width,
                          sinc_rate, raw, raw_power)
        return
    m0 = int(wp.floor(d + 0.5))
    m1 = m0
    if half > 0.5:
        m0 = int(wp.floor(d - half + 0.5))
        m1 = int(wp.floor(d + half + 0.5))
    own = int(wp.floor(d + 0.5))
    for m in range(m0, m1 + 1):
        w = float(1.0)
        centre = d
        if half > 0.5:
            a0 = wp.max(float(m) - 0.5, d - half)
            a1 = wp.min(float(m) + 0.5, d + half)
            w = (a1 - a0) / (2.0 * half)
            centre = 0.5 * (a0 + a1)
        if w > 0.0:
            piece = A * wp.sqrt(w)
            if m != own:
                piece = rotate_by_hash(piece, pcg_hash(seed ^ wp.uint32(m) * wp.uint32(-2048144789)))
            deposit_piece(piece, P * w, centre, b, j, n_samples, half_width, sinc_rate, raw, raw_power)


@wp.kernel
def multibeam_device_deposit_kernel(amp: wp.array(dtype=wp.vec2), power: wp.array(dtype=wp.float32),
                                    delay: wp.array(dtype=wp.float32), extent: wp.array(dtype=wp.float32),
                                    rays_per_beam: int, n_beams: int, n_samples: int, half_width: float,
                                    sinc_rate: float, raw: wp.array3d(dtype=wp.vec2),
                                    raw_power: wp.array3d(dtype=wp.float32), start: int):
    """Device model, one element per (pose b, beam j): deposit each ray's pulse, spread over its footprint.

    A ray whose footprint spans E = extent_i samples around its delay d_i is split into pieces, one per sample
    interval [m - 1/2, m + 1/2] overlapping [d_i - E/2, d_i + E/2], of weight w_m = overlap / E, centred on the
    overlap (one piece at d_i when E <= 1); a footprint wider than ``PER_SAMPLE_PIECES`` samples is split into
    K = min(ceil(E sinc_rate), MAX_FOOTPRINT_PIECES) equal pieces of weight 1 / K instead (spaced at most
    1 / sinc_rate: a flat expected intensity at a bounded cost). Piece m adds sqrt(w_m) A_i exp(i phi_m) h(n - c_m)
    to the field ``raw`` and w_m I_i h(n - c_m)^2 to the expected intensity ``raw_power`` over the samples within
    ``half_width`` of c_m, h(u) = sinc(sinc_rate u) the range response of a flat band (``sinc_rate`` = kappa B / fs,
    intensity -3 dB width c / (2 B), sensors/acoustic/bandwidth.py); phi_m = 0 for the piece holding d_i and a
    random phase (hash of the ray's delay, its index in the beam and the piece) for the others: the footprint's
    other scatterers.
    Sequential per element (ray order): bit-identical whatever the chunking. Expects raw, raw_power zeroed."""
    e = wp.tid() + start
    b = e // n_beams
    j = e - b * n_beams
    first = e * rays_per_beam
    for q in range(rays_per_beam):
        d = delay[first + q]
        if d > NO_DELAY:
            deposit_pulse(amp[first + q], power[first + q], d, extent[first + q], q, b, j, n_samples, half_width,
                          sinc_rate, raw, raw_power)


@wp.kernel
def multibeam_device_mix_kernel(raw: wp.array3d(dtype=wp.vec2), raw_power: wp.array3d(dtype=wp.float32),
                                taps: wp.array2d(dtype=wp.float32), n_beams: int, n_samples: int,
                                row_noise: wp.array(dtype=wp.float32), row_reverb: wp.array(dtype=wp.float32),
                                beam_reverb: wp.array(dtype=wp.float32), keys: wp.array(dtype=wp.int32),
                                row_gain: wp.array(dtype=wp.float32), time_series: wp.array3d(dtype=wp.vec2),
                                intensity: wp.array3d(dtype=wp.float32), clean: wp.array3d(dtype=wp.float32),
                                db: wp.array3d(dtype=wp.float32), start: int):
    """Device model, one element per (pose b, sample n, beam j): the receive beam pattern and the receiver.

    Beam pattern: p_j = sum_m h_j[m] p_(j + m - M) and P_j = sum_m h_j[m]^2 P_(j + m - M), h_j = ``taps[j]`` (beam
    j's one-way amplitude pattern at the beam spacing out to psf_extent beam widths, peak 1: a point target keeps
    its echo level; one tap 1 for none; beams outside the fan contribute nothing). Receiver: one circular
    complex Gaussian draw n of variance row_noise[n] + R (row_noise: the receiver noise referred to the input, the
    post-TVG noise included, MultibeamSonarConfig.device_tables; R = row_reverb[n] beam_reverb[j], the volume
    reverberation's mean), keyed by keys[b] and the sample-beam index. Writes time_series = p + n (re 1 uPa,
    before gain), intensity = |p + n|^2 G, clean = (P + R) G with G = row_gain[n] (TVG and fixed gain),
    db = 10 log10 intensity (-300 for 0)."""
    e = wp.tid() + start
    per = n_samples * n_beams
    b = e // per
    q = e - b * per
    n = q // n_beams
    j = q - n * n_beams
    half = (taps.shape[1] - 1) // 2
    v = wp.vec2(0.0, 0.0)
    p = float(0.0)
    for i in range(wp.max(j - half, 0), wp.min(j + half, n_beams - 1) + 1):
        h = taps[j, i - j + half]
        v = v + h * raw[b, n, i]
        p = p + h * h * raw_power[b, n, i]
    reverb = row_reverb[n] * beam_reverb[j]
    variance = row_noise[n] + reverb
    if variance > 0.0:
        v = v + complex_gaussian(wp.rand_init(keys[b], q), variance)
    g = row_gain[n]
    p2 = wp.dot(v, v) * g
    time_series[b, n, j] = v
    intensity[b, n, j] = p2
    clean[b, n, j] = (p + reverb) * g
    if p2 > 0.0:
        db[b, n, j] = 10.0 * wp.log10(p2)
    else:
        db[b, n, j] = -300.0


@wp.kernel
def intensity_db_kernel(intensity: wp.array3d(dtype=wp.float32), n_samples: int, n_beams: int,
                        db: wp.array3d(dtype=wp.float32), start: int):
    """Element (b, n, j): db = 10 log10 intensity (-300 for 0), after an automatic gain rescaled the image."""
    e = wp.tid() + start
    per = n_samples * n_beams
    b = e // per
    r = e - b * per
    n = r // n_beams
    j = r - n * n_beams
    p2 = intensity[b, n, j]
    if p2 > 0.0:
        db[b, n, j] = 10.0 * wp.log10(p2)
    else:
        db[b, n, j] = -300.0
