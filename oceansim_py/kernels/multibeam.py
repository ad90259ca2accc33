"""Multibeam echosounder kernels: point scatterers, pulse deposit, per-frequency sums, beam mixing.

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

from oceansim_py.kernels.random import stream_state
from oceansim_py.kernels.raycast import cast_ray, fan_direction, sensor_to_world

# forward-only kernels: no adjoints to generate, which halves the first-use compile time
wp.set_module_options({"enable_backward": False})

#: Delay written for a scatterer that contributes nothing to the window.
NO_DELAY = -1.0e30

#: Random stream ids of the real and imaginary parts of the scatterer amplitudes (independent streams).
STREAM_XI_REAL = 0
STREAM_XI_IMAG = 1

#: Tile edge of the beam-mixing matrix product (buffers are padded to multiples of it).
MIX_TILE = 32


@wp.func
def line_array_pattern(angle: float, beam_width: float) -> float:
    """Signed pressure pattern B = sin(x)/x, x = pi (0.884 / beam_width) sin(angle) of a uniform line array
    whose -3 dB full width is ``beam_width`` (rad)."""
    x = wp.pi * (0.884 / beam_width) * wp.sin(angle)
    if wp.abs(x) < 1.0e-6:
        return 1.0
    return wp.sin(x) / x


@wp.kernel
def multibeam_scatter_kernel(mesh: wp.uint64, face_object: wp.array(dtype=wp.int32),
                             reflectivity: wp.array(dtype=wp.float32), poses: wp.array(dtype=wp.transform),
                             n_beams: int, az_rays: int, el_rays: int,
                             fov: float, elevation_fov: float, elevation_directivity: int,
                             max_range: float, sound_speed: float, frequency: float, sample_rate: float,
                             t0: float, window_end: float, half_width: float, amplitude_scale: float,
                             alpha_np: float, seed: int, frame_index: int, sensor: int,
                             amp: wp.array(dtype=wp.vec2), delay: wp.array(dtype=wp.float32), start: int):
    """One element per ray: cast it, write the scatterer amplitude ``amp`` and delay ``delay`` (samples).

    Element i = (pose b, beam j, azimuth sub-ray a, elevation ray k) in row-major order; the random
    element index is the ray index within the frame, the frame is ``frame_index + b``. ``amplitude_scale``
    is S0 * b / sqrt(pi); ``half_width`` (samples) is the pulse truncation half width; ``window_end`` the
    last sample index; angles in radians.
    """
    i = wp.tid() + start
    rays_per_beam = az_rays * el_rays
    rays_per_pose = n_beams * rays_per_beam
    b = i // rays_per_pose
    q = i - b * rays_per_pose
    j = q // rays_per_beam
    w = q - j * rays_per_beam
    a = w // el_rays
    k = w - a * el_rays
    beam_step = fov / float(n_beams)
    d_theta = beam_step / float(az_rays)
    d_phi = elevation_fov / float(el_rays)
    bearing = -0.5 * fov + (float(j) + (float(a) + 0.5) / float(az_rays)) * beam_step
    elevation = -0.5 * elevation_fov + (float(k) + 0.5) * d_phi
    pose = poses[b]
    direction = sensor_to_world(pose, fan_direction(bearing, elevation))
    h = cast_ray(mesh, face_object, wp.transform_get_translation(pose), direction, max_range)
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
                             envelope_rate: float, raw: wp.array3d(dtype=wp.float32), start: int):
    """Time-domain method. One element per (pose b, beam j): zero the beam's row of ``raw`` (B, beams_pad,
    2 * samples_pad, interleaved real/imaginary) and add each scatterer's pulse A_i exp(-(rate (n - d_i))^2)
    over the samples within ``half_width`` of its delay d_i. ``envelope_rate`` = b / fs (per sample).
    Sequential per element: the sum order is the ray order, whatever the chunking."""
    e = wp.tid() + start
    b = e // n_beams
    j = e - b * n_beams
    for n in range(n_samples):
        raw[b, j, 2 * n] = 0.0
        raw[b, j, 2 * n + 1] = 0.0
    first = e * rays_per_beam
    for q in range(rays_per_beam):
        d = delay[first + q]
        if d > NO_DELAY:
            A = amp[first + q]
            lo = wp.max(int(wp.ceil(d - half_width)), 0)
            hi = wp.min(int(wp.floor(d + half_width)), n_samples - 1)
            for n in range(lo, hi + 1):
                u = envelope_rate * (float(n) - d)
                g = wp.exp(-u * u)
                raw[b, j, 2 * n] = raw[b, j, 2 * n] + A[0] * g
                raw[b, j, 2 * n + 1] = raw[b, j, 2 * n + 1] + A[1] * g


@wp.kernel
def multibeam_spectrum_kernel(amp: wp.array(dtype=wp.vec2), delay: wp.array(dtype=wp.float32),
                              rays_per_beam: int, n_beams: int, n_freq: int, n_fft: int,
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
def multibeam_mix_tiles_kernel(weights_t: wp.array2d(dtype=wp.float32), raw: wp.array2d(dtype=wp.float32),
                               mixed: wp.array2d(dtype=wp.float32), beams_pad: int, cols_pad: int):
    """Beam-pattern mixing as a tiled matrix product (used on CUDA): for every pose b,
    mixed[b] = raw[b]^T @ weights_t, with raw viewed as (B * beams_pad, cols_pad) (beam-major rows) and mixed
    as (B * cols_pad, beams_pad) (sample-major rows: row 2n the real parts of sample n, row 2n + 1 the
    imaginary parts). ``weights_t`` is W^T. Launch with ``wp.launch_tiled`` over
    B * (cols_pad / MIX_TILE) * (beams_pad / MIX_TILE) tiles."""
    t = wp.tid()
    row_tiles = cols_pad // MIX_TILE
    col_tiles = beams_pad // MIX_TILE
    per_pose = row_tiles * col_tiles
    b = t // per_pose
    r = t - b * per_pose
    ti = r // col_tiles
    tj = r - ti * col_tiles
    acc = wp.tile_zeros(shape=(MIX_TILE, MIX_TILE), dtype=wp.float32)
    for tk in range(col_tiles):
        tr = wp.tile_load(raw, shape=(MIX_TILE, MIX_TILE), offset=(b * beams_pad + tk * MIX_TILE, ti * MIX_TILE))
        tw = wp.tile_load(weights_t, shape=(MIX_TILE, MIX_TILE), offset=(tk * MIX_TILE, tj * MIX_TILE))
        wp.tile_matmul(wp.tile_transpose(tr), tw, acc)
    wp.tile_store(mixed, acc, offset=(b * cols_pad + ti * MIX_TILE, tj * MIX_TILE))


@wp.kernel
def multibeam_finish_kernel(src: wp.array3d(dtype=wp.float32), sample_major: int, n_beams: int, n_samples: int,
                            time_series: wp.array3d(dtype=wp.vec2), intensity: wp.array3d(dtype=wp.float32),
                            db: wp.array3d(dtype=wp.float32), start: int):
    """One element per (pose b, sample n), looping over the beams j: write the (B, samples, beams) complex time
    series, its intensity |p|^2 and 10 log10 |p|^2 (dB; -300 for an exact zero). ``src`` is sample-major
    (B, 2 * samples_pad, beams_pad) when ``sample_major`` (the mixed series), else beam-major
    (B, beams_pad, 2 * samples_pad)."""
    e = wp.tid() + start
    b = e // n_samples
    n = e - b * n_samples
    for j in range(n_beams):
        v = wp.vec2(0.0, 0.0)
        if sample_major != 0:
            v = wp.vec2(src[b, 2 * n, j], src[b, 2 * n + 1, j])
        else:
            v = wp.vec2(src[b, j, 2 * n], src[b, j, 2 * n + 1])
        p2 = wp.dot(v, v)
        time_series[b, n, j] = v
        intensity[b, n, j] = p2
        if p2 > 0.0:
            db[b, n, j] = 10.0 * wp.log10(p2)
        else:
            db[b, n, j] = -300.0
