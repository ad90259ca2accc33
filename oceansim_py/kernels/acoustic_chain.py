"""Kernels of the acoustic device chain (docs/PHYSICS.md §1b; docs/PHYSICS_ACOUSTIC_CHAIN.md).

A render of B poses on the device chain is, after the fan's rays are laid out as in kernels/imaging_sonar.py
(rays of one pose ordered (channel, ray-in-channel), a channel's rays contiguous):

1. :func:`pose_rays_kernel`, one element per RAY_BLOCK rays: the pose's rotation of the rays' stratified,
   jittered sensor-frame directions inside their cells (:func:`fan_directions_kernel`, once per chain: they are the
   same every frame); the scene's ray-cast backend (``Scene.raycast_into``) casts them;
   :func:`device_ray_echo_kernel`, one element per ray (:func:`fan_echoes`): sonar-equation intensity of the return
   (re 1 uPa^2 at the receiver), its range, the range extent of its footprint and its phase ``2 k r + phi`` (phi a
   random phase fixed to the quantised world-space hit point) as a 12-bit integer code into a table of unit phasors
   (:func:`echo_phase`: steps of 0.09 deg, no sine or cosine per echo).
2. :func:`footprint_bin_kernel`, one element per (pose, channel): gathers the channel's rays
   (:func:`bin_stored_echoes`), each spread over the range bins its surface footprint covers, into channel-major
   complex amplitude, intensity, hit and label scratch (a gather, no atomics), then the range pass of the separable
   convolution (complex image with the real taps h, mean intensity with h^2) over the rows the channel reached, into
   row-major images, flagging those rows.
3. :func:`bearing_receiver_kernel`, one element per row: the bearing pass of the convolution fused with the
   receiver: volume reverberation and receiver noise as one additive complex Gaussian (a counter-based draw per
   bin), detection |.|^2, time-varying gain and fixed gain; a row without echoes is noise and reverberation
   only. It writes every bin of the four outputs once and returns the scratch it read to rest (0, label -1):
   no render zero-fills an image.
4. Optional per-frame :func:`frame_mean_of_rows_kernel` (from the receiver's row sums) + :func:`scale_frame_kernel`
   (automatic gain), and :func:`normalise_kernel` (per-row or global maximum normalisation).
1-3 for a table fan (side-scan, profiling, single-beam) start with :func:`table_directions_kernel` and
:func:`device_table_ray_echo_kernel` instead. On CPU without multipath, :func:`device_fan_bin_kernel` /
:func:`device_table_bin_kernel` do the echo kernel's and :func:`footprint_bin_kernel`'s work in one launch, one
element per (pose, channel), with the same values. The per-ray and per-bin work is native C++ (``wp.func_native``:
:func:`pose_ray_block`, :func:`fan_echoes` / :func:`table_echoes`, :func:`bin_stored_echoes`, :func:`range_spread`,
:func:`receiver_row`) written as loops the compiler vectorises where the work allows; Warp's generated code is
scalar, one element at a time, and recomputes each array address from its strides.

Every element writes only what it owns and reads in a fixed order, so images are bit-identical whatever the
batch size, the CPU chunking or the device. Random draws are counter-based (kernels/random.py): the jitter and
the scatterer phase do not depend on the frame (a static sensor sees a static speckle pattern); the receiver
noise and reverberation do.
Images are (B, n_range, n_channels); ranges in metres, angles in radians, intensities re 1 uPa^2.
"""

from __future__ import annotations

from typing import NamedTuple

import warp as wp

from oceansim_py.kernels.random import pcg_hash, stream_key

wp.set_module_options({"enable_backward": False})

#: Random stream ids (kernels/random.py) of the device chain, beyond those of the peer models.
STREAM_JITTER = wp.constant(21)
STREAM_PHASE = wp.constant(22)
STREAM_NOISE = wp.constant(23)

TWO_PI = wp.constant(6.283185307179586)


@wp.func
def complex_gaussian(state: wp.uint32, variance: float) -> wp.vec2:
    """One circular complex Gaussian draw with E|z|^2 = variance: Marsaglia's polar method (a point (u, v) uniform
    in the unit disc, s = u^2 + v^2, z = (u, v) sqrt(-variance ln(s) / s); one log and one square root, no
    sine or cosine; 4 / pi draws of a pair on average)."""
    u = 2.0 * wp.randf(state) - 1.0
    v = 2.0 * wp.randf(state) - 1.0
    q = u * u + v * v
    while q >= 1.0 or q == 0.0:
        u = 2.0 * wp.randf(state) - 1.0
        v = 2.0 * wp.randf(state) - 1.0
        q = u * u + v * v
    f = wp.sqrt(-variance * wp.log(q) / q)
    return wp.vec2(u * f, v * f)


@wp.func
def scatterer_hash(point: wp.vec3, grid: float, key: int) -> wp.uint32:
    """32 random bits fixed to the world-space point quantised to ``grid`` (m) and to ``key``."""
    inv = 1.0 / grid
    ix = wp.uint32(int(wp.floor(point[0] * inv)))
    iy = wp.uint32(int(wp.floor(point[1] * inv)))
    iz = wp.uint32(int(wp.floor(point[2] * inv)))
    h = pcg_hash(wp.uint32(key) ^ ix)
    h = pcg_hash(h ^ iy * wp.uint32(-1640531527))
    return pcg_hash(h ^ iz * wp.uint32(-2048144789))


@wp.func
def scatterer_gaussian(point: wp.vec3, grid: float, key: int) -> wp.vec2:
    """Circular complex Gaussian amplitude (E|z|^2 = 1) fixed to the world-space point quantised to ``grid`` (m)
    and to ``key``: a Rayleigh-amplitude scatterer that stays the same while the same surface patch is seen."""
    ix = wp.uint32(int(wp.floor(point[0] / grid)))
    iy = wp.uint32(int(wp.floor(point[1] / grid)))
    iz = wp.uint32(int(wp.floor(point[2] / grid)))
    h = pcg_hash(wp.uint32(key) ^ ix)
    h = pcg_hash(h ^ iy * wp.uint32(-1640531527))
    h = pcg_hash(h ^ iz * wp.uint32(-2048144789))
    state = wp.rand_init(int(h >> wp.uint32(1)))
    return complex_gaussian(state, 1.0)


#: Phases are carried as integers n (phase 2 pi n / 2^PHASOR_BITS, steps of 0.09 deg), their unit phasors from a
#: table of 2^PHASOR_BITS entries (no sine or cosine per echo).
PHASOR_BITS = wp.constant(12)


@wp.func
def echo_phase(distance: float, wavelength: float, point: wp.vec3, grid: float, key: int) -> float:
    """The phase code of an echo over the two-way path ``distance`` (m) from a scatterer at ``point``:
    c + 2^PHASOR_BITS s, an integer below 2^24 (exact in the float32 it is stored as). c = (n_carrier + n_scatterer)
    mod 2^PHASOR_BITS is the echo's phase 4 pi r / lambda + phi in steps of 2 pi / 2^PHASOR_BITS: n_carrier =
    floor(frac(2 r / lambda) 2^PHASOR_BITS) (the carrier phase, reduced in cycles first, for float32); n_scatterer
    and s (12 more bits, seeding the footprint's other scatterers, :func:`piece_phasor`) come from the
    :func:`scatterer_hash` of the point quantised to ``grid`` (a random phase phi fixed to the surface point)."""
    t = 2.0 * distance / wavelength
    n_carrier = wp.min(int((t - wp.floor(t)) * float(1 << PHASOR_BITS)), (1 << PHASOR_BITS) - 1)
    h = scatterer_hash(point, grid, key)
    n = (n_carrier + int(h >> wp.uint32(32 - PHASOR_BITS))) & ((1 << PHASOR_BITS) - 1)
    return float(n + (int((h >> wp.uint32(8)) & wp.uint32(4095)) << PHASOR_BITS))


@wp.func
def echo_phasor(code: float, phasors: wp.array(dtype=wp.vec2)) -> wp.vec2:
    """exp(i phase) of an :func:`echo_phase` code: ``phasors``[c] (the table of exp(i 2 pi n / 2^PHASOR_BITS), the
    first half of the binning's chain.scatterer_phasor_table)."""
    return phasors[int(code) & ((1 << PHASOR_BITS) - 1)]


#: Largest range extent of one ray's footprint, in range bins (grazing rays are capped to it).
MAX_FOOTPRINT_BINS = wp.constant(32)

#: A footprint narrower than r / 2^POINT_FOOTPRINT_BITS is binned as a point (extent 0, one piece of weight 1). The
#: binning's overlap weights are differences of float32 ranges near r (r - extent/2, r + extent/2, a bin edge), each
#: rounded to half an ulp of r (<= r 2^-24): a footprint of a few ulps got weights that did not sum to 1 (0 when
#: r +- extent/2 rounded to r: the echo was lost; a plate facing the sensor at 20 m lost half its energy). At
#: r 2^-14 (0.6 mm at 10 m, a fraction of any range bin) the weights' sum is within 2^-8 of 1.
POINT_FOOTPRINT_BITS = wp.constant(14)


@wp.func
def binned_extent(extent: float, r: float, range_resolution: float) -> float:
    """The footprint range extent (m) an echo at range ``r`` (m) is binned with: ``extent`` capped at
    MAX_FOOTPRINT_BINS bins of ``range_resolution`` (m), and 0 (a point) below r / 2^POINT_FOOTPRINT_BITS."""
    capped = wp.min(extent, float(MAX_FOOTPRINT_BINS) * range_resolution)
    return wp.where(capped < r * (1.0 / float(1 << POINT_FOOTPRINT_BITS)), 0.0, capped)


@wp.struct
class RayEcho:
    """A ray's echo as the chain stores it: intensity (re 1 uPa^2), (r, footprint extent, phase code of
    :func:`echo_phase`), range bin
    (-1 outside the window or for a miss) and label."""

    value: float
    rng: wp.vec3
    cell: int
    label: int


@wp.func
def store_echo(value: float, rng: wp.vec3, cell: int, label: int, o: int,
               ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
               ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32)):
    """Write one echo (a :class:`RayEcho`'s fields) into slot ``o`` of the chain's per-ray echo arrays."""
    ray_intensity[o] = value
    ray_range[o] = rng
    ray_bin[o] = cell
    ray_label[o] = label


@wp.struct
class FanCell:
    """A bearing x elevation fan ray's cell in the sensor frame (FLU): centre direction ``centre`` (unit) and edge
    vectors ``edge_a`` (elevation) and ``edge_b`` (bearing)."""

    centre: wp.vec3
    edge_a: wp.vec3
    edge_b: wp.vec3


@wp.func
def fan_cell(bcs: wp.vec2, et: wp.vec3, bearing_cell: float, elevation_cell: float) -> FanCell:
    """The cell of the ray at bearing (cos b, sin b) = ``bcs`` and elevation (cos e, sin e) = ``et[0], et[1]``:
    centre d = (cos e cos b, -cos e sin b, sin e), edges a = t_e de and b = t_b cos(e) db (unit elevation and
    bearing tangents t_e, t_b at d; de = ``elevation_cell``, db = ``bearing_cell`` in rad)."""
    ce = et[0]
    se = et[1]
    cb = bcs[0]
    sb = bcs[1]
    out = FanCell()
    out.centre = wp.vec3(ce * cb, -ce * sb, se)
    out.edge_a = wp.vec3(-se * cb, se * sb, ce) * elevation_cell
    out.edge_b = wp.vec3(-sb, -cb, 0.0) * (ce * bearing_cell)
    return out


@wp.func
def jittered(d_flu: wp.vec3, edge_a: wp.vec3, edge_b: wp.vec3, jitter: int, jitter_key: int, local: int) -> wp.vec3:
    """With ``jitter``, normalize(d + (u - 1/2) a + (v - 1/2) b), u, v uniform from a stream keyed by
    ``jitter_key`` and the ray's index ``local`` within the pose (the same for every frame): uniform over the
    cell's tangent plane, no trigonometry. Else ``d_flu``."""
    d = d_flu
    if jitter == 1:
        state = wp.rand_init(jitter_key, local)
        u = wp.randf(state) - 0.5
        v = wp.randf(state) - 0.5
        d = wp.normalize(d_flu + u * edge_a + v * edge_b)
    return d


#: Lanes of the echo functions (:func:`fan_echoes`, :func:`table_echoes`) on the CPU: they take any number of rays
#: (the fused echo-and-binning kernels give a whole channel) and compute them in sub-blocks of ECHO_BLOCK rays, lane
#: by lane (vectorised).
ECHO_BLOCK = wp.constant(32)

_ECHO_HELPERS = r"""
    auto pcg = [](unsigned int x) -> unsigned int {
        const unsigned int st = x * 747796405u + 2891336453u;
        const unsigned int w = ((st >> ((st >> 28u) + 4u)) ^ st) * 277803737u;
        return (w >> 22u) ^ w;
    };
    // e^x for x <= 0 (Cephes expf: x = n ln 2 + g, |g| <= ln 2 / 2, a degree-5 polynomial, 2^n in the exponent
    // bits; relative error < 2e-7; below -87 it is e^-87 ~ 1.6e-38, never reached by 2 alpha r / (10 log10 e))
    auto exp_neg = [](float x) -> float {
        x = x > -87.0f ? x : -87.0f;
        const float n = wp::floor(x * 1.44269504088896341f + 0.5f);
        const float g = (x - n * 0.693359375f) - n * -2.12194440e-4f;
        float p = 1.9875691500e-4f;
        p = p * g + 1.3981999507e-3f;
        p = p * g + 8.3334519073e-3f;
        p = p * g + 4.1665795894e-2f;
        p = p * g + 1.6666665459e-1f;
        p = p * g + 5.0000001201e-1f;
        const float y = p * g * g + g + 1.0f;
        const int bits = ((int)n + 127) << 23;
        union { int i; float f; } scale;
        scale.i = bits;
        return y * scale.f;
    };
    const float* dir = (const float*)directions.data;
    const float* nrm = (const float*)hit_normal.data;
    const float* dist_in = (const float*)hit_distance.data;
    const int* face_in = (const int*)hit_face.data;
    const int* obj_in = (const int*)hit_obj.data;
    const float* mu = (const float*)object_mu.data;
    const int* lab = (const int*)object_label.data;
    float* out_v = (float*)ray_intensity.data;
    float* out_r = (float*)ray_range.data;
    int* out_c = (int*)ray_bin.data;
    int* out_l = (int*)ray_label.data;
    const float qx = rotation[0];
    const float qy = rotation[1];
    const float qz = rotation[2];
    const float qw = rotation[3];
    const float qc = 2.0f * qw * qw - 1.0f;
    const float cap = (float)@MAX_BINS@ * range_resolution;
    const float point_scale = 1.0f / (float)(1 << @POINT_BITS@);
    const float absorb = -0.46051701859880914f * alpha_db_per_m;
    const float inv_grid = 1.0f / phase_grid;
    const unsigned int ukey = (unsigned int)phase_key;
    const float ox = origin[0];
    const float oy = origin[1];
    const float oz = origin[2];
    // the rays in sub-blocks of E lanes (the fused kernels give a whole channel); on CUDA one ray at a time, lane
    // arrays of one so that they stay in registers
#if defined(__CUDA_ARCH__)
    const int E = 1;
#else
    const int E = @BLOCK@;
#endif
    const int total = count;
    for (int done = 0; done < total; done += E, first += E, local0 += E) {
    count = total - done < E ? total - done : E;
"""

_ECHO_LANES = r"""
    // the echoes of rays first .. first + count - 1 (count <= E) from their hits, lane by lane with no branch (the
    // compiler vectorises the loop); lane l's cell edges ea_*, eb_* and weight wt from the cells' lane code. The
    // lanes read the hit arrays and write the echo arrays, distinct buffers: no dependence between lanes
#if defined(__clang__) && !defined(__CUDA_ARCH__)
#pragma clang loop vectorize(assume_safety)
#endif
    for (int l = 0; l < count; ++l) {
        const int i = first + l;
@CELL@
        const float dist = dist_in[i];
        // the range bin (imaging_sonar.range_cell): in the window [min_range, max_range) of a hit
        const float f = (dist - min_range) / range_resolution;
        const int face = face_in[i];
        const int obj = obj_in[i];
        const bool valid = (face >= 0) & (f >= 0.0f) & (f < (float)n_range);
        const float r = valid ? dist : 1.0f;
        int cell = (int)wp::floor(valid ? f : 0.0f);
        cell = cell < n_range - 1 ? cell : n_range - 1;
        // object 0 for a miss: every lane reads its object's reflectivity and label (no per-lane branch)
        const int o = valid ? obj : 0;
        const float reflectivity = mu[o];
        const int label = lab[o];
        const float dx = dir[3 * i];
        const float dy = dir[3 * i + 1];
        const float dz = dir[3 * i + 2];
        const float nx = nrm[3 * i];
        const float ny = nrm[3 * i + 1];
        const float nz = nrm[3 * i + 2];
        float cosi = -(dx * nx + dy * ny + dz * nz);
        cosi = cosi > 0.0f ? (cosi < 1.0f ? cosi : 1.0f) : 0.0f;
        // sonar equation: SL mu cos(psi) w / r^2 10^(-2 alpha r / 10)
        const float value = source_intensity * reflectivity * cosi * wt / (r * r) * exp_neg(absorb * r);
        // the normal in the sensor frame (quat_rotate_inv), the footprint's range extent
        const float d2 = 2.0f * (qx * nx + qy * ny + qz * nz);
        const float sx = nx * qc + qx * d2 - (qy * nz - qz * ny) * qw * 2.0f;
        const float sy = ny * qc + qy * d2 - (qz * nx - qx * nz) * qw * 2.0f;
        const float sz = nz * qc + qz * d2 - (qx * ny - qy * nx) * qw * 2.0f;
        const float da = sx * ea_x + sy * ea_y + sz * ea_z;
        const float db = sx * eb_x + sy * eb_y + sz * eb_z;
        const float spread = r * wp::sqrt(da * da + db * db) / (cosi > 1.0e-3f ? cosi : 1.0e-3f);
        // binned_extent: capped, and a point below r / 2^POINT_FOOTPRINT_BITS (overlap weights exact enough)
        const float capped = spread < cap ? spread : cap;
        const float extent = capped < r * point_scale ? 0.0f : capped;
        // echo_phase: carrier phase in 1 / 2^PHASOR_BITS cycles plus the scatterer hash of the hit point
        const float t = 2.0f * r / wavelength;
        const float cycles = t - wp::floor(t);
        int carrier = (int)(cycles * (float)@PHASOR_N@);
        carrier = carrier < @PHASOR_N@ - 1 ? carrier : @PHASOR_N@ - 1;
        // the hit point origin + r d and its grid cell, as separate statements (no contraction: echo_phase's values)
        const float rx = r * dx;
        const float ry = r * dy;
        const float rz = r * dz;
        const float px = ox + rx;
        const float py = oy + ry;
        const float pz = oz + rz;
        const unsigned int ix = (unsigned int)(int)wp::floor(px * inv_grid);
        const unsigned int iy = (unsigned int)(int)wp::floor(py * inv_grid);
        const unsigned int iz = (unsigned int)(int)wp::floor(pz * inv_grid);
        const unsigned int h = pcg(pcg(pcg(ukey ^ ix) ^ iy * 2654435769u) ^ iz * 2246822507u);
        const int code = ((carrier + (int)(h >> @PHASOR_SHIFT@u)) & (@PHASOR_N@ - 1))
                         + ((int)((h >> 8u) & 4095u) << @PHASOR_BITS@);
        out_v[i] = valid ? value : 0.0f;
        out_r[3 * i] = valid ? r : 0.0f;
        out_r[3 * i + 1] = valid ? extent : 0.0f;
        out_r[3 * i + 2] = valid ? (float)code : 0.0f;
        out_c[i] = valid ? cell : -1;
        out_l[i] = valid ? label : -1;
    }
    }
    return total;
"""


class _Cells(NamedTuple):
    """How an echo function finds its lanes' cells: ``prologue`` (native code run once per sub-block, before the
    lane loop) and ``lane`` (native code at the top of the lane loop defining lane l's cell edges ea_x, ea_y, ea_z,
    eb_x, eb_y, eb_z and weight wt)."""

    prologue: str
    lane: str


_FAN_CELLS = _Cells(prologue=r"""
    // the sub-block's cells: lane l is elevation ray k = (local0 + l) mod n_elev of bearing ray c = (local0 + l) div
    // n_elev; (cos e, sin e, w) of elevation_table[k] and (cos b, sin b) of bearing_cos_sin[c] into lane arrays
    float ce_l[E], se_l[E], w_l[E], cb_l[E], sb_l[E];
    {
        const float* et = (const float*)elevation_table.data;
        const float* bt = (const float*)bearing_cos_sin.data;
        int c = local0 / n_elev;
        int k = local0 - c * n_elev;
        if (k + count <= n_elev) {
            // the whole sub-block in bearing ray c: elevation rays k .. k + count - 1 (a copy the compiler vectorises)
            const float cb = bt[2 * c];
            const float sb = bt[2 * c + 1];
            const float* e0 = et + 3 * k;
            for (int l = 0; l < count; ++l) {
                ce_l[l] = e0[3 * l];
                se_l[l] = e0[3 * l + 1];
                w_l[l] = e0[3 * l + 2];
                cb_l[l] = cb;
                sb_l[l] = sb;
            }
        } else {
            for (int l = 0; l < count; ++l) {
                ce_l[l] = et[3 * k];
                se_l[l] = et[3 * k + 1];
                w_l[l] = et[3 * k + 2];
                cb_l[l] = bt[2 * c];
                sb_l[l] = bt[2 * c + 1];
                k = k + 1;
                if (k == n_elev) {
                    k = 0;
                    c = c + 1;
                }
            }
        }
    }
""", lane=r"""
        // fan_cell: a = t_e de, b = t_b cos(e) db
        const float ce = ce_l[l];
        const float se = se_l[l];
        const float cb = cb_l[l];
        const float sb = sb_l[l];
        const float scale_b = ce * bearing_cell;
        const float ea_x = -se * cb * elevation_cell;
        const float ea_y = se * sb * elevation_cell;
        const float ea_z = ce * elevation_cell;
        const float eb_x = -sb * scale_b;
        const float eb_y = -cb * scale_b;
        const float eb_z = 0.0f;
        const float wt = w_l[l];
""")
_TABLE_CELLS = _Cells(prologue=r"""
    const float* edge_a_in = (const float*)edges_a.data;
    const float* edge_b_in = (const float*)edges_b.data;
    const float* weight_in = (const float*)weights.data;
""", lane=r"""
        // the ray's cell from the table
        const int k = local0 + l;
        const float ea_x = edge_a_in[3 * k];
        const float ea_y = edge_a_in[3 * k + 1];
        const float ea_z = edge_a_in[3 * k + 2];
        const float eb_x = edge_b_in[3 * k];
        const float eb_y = edge_b_in[3 * k + 1];
        const float eb_z = edge_b_in[3 * k + 2];
        const float wt = weight_in[k];
""")


def _echo_snippet(cells: _Cells) -> str:
    """The native echo function: helpers and the sub-block loop, the sub-block's ``cells`` prologue, the lanes' echoes
    (with the cells' lane code)."""
    text = _ECHO_HELPERS + cells.prologue + _ECHO_LANES.replace("@CELL@\n", cells.lane)
    for name, value in (("@BLOCK@", int(ECHO_BLOCK)), ("@MAX_BINS@", int(MAX_FOOTPRINT_BINS)),
                        ("@POINT_BITS@", int(POINT_FOOTPRINT_BITS)),
                        ("@PHASOR_N@", 1 << int(PHASOR_BITS)), ("@PHASOR_BITS@", int(PHASOR_BITS)),
                        ("@PHASOR_SHIFT@", 32 - int(PHASOR_BITS))):
        text = text.replace(name, str(value))
    return text


@wp.func_native(_echo_snippet(_FAN_CELLS))
def fan_echoes(first: int, count: int, local0: int, directions: wp.array(dtype=wp.vec3),
               hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
               hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
               object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32), origin: wp.vec3,
               rotation: wp.quat, bearing_cos_sin: wp.array(dtype=wp.vec2), bearing_cell: float,
               elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float, n_elev: int, min_range: float,
               range_resolution: float, n_range: int, alpha_db_per_m: float, source_intensity: float,
               wavelength: float, phase_grid: float, phase_key: int, ray_intensity: wp.array(dtype=wp.float32),
               ray_range: wp.array(dtype=wp.vec3), ray_bin: wp.array(dtype=wp.int32),
               ray_label: wp.array(dtype=wp.int32)) -> int:
    """The echoes of rays ``first`` .. ``first + count - 1`` (pose-local indices from ``local0``; any ``count``,
    computed in sub-blocks of ECHO_BLOCK rays on the CPU, one ray at a time on CUDA) of a bearing x elevation fan,
    from their hits, into the per-ray echo arrays (:class:`RayEcho`'s fields); returns ``count``. A ray's cell is
    that of :func:`fan_cell` (weight w_k = elevation_table[k][2]); the sensor sits at ``origin`` with attitude
    ``rotation``.

    Echo of a hit in the range window [min_range, min_range + n_range dr): intensity
    I = SL mu cos(psi) w / r^2 10^(-2 alpha r / 10) (Lambert: mu cos^2 psi times the footprint r^2 w / cos psi,
    two-way spreading r^-4; the exponential by a polynomial, relative error < 2e-7), range bin floor((r - min) / dr),
    footprint range extent r / cos(psi) sqrt((n . edge_a)^2 + (n . edge_b)^2) (n the normal in the sensor frame,
    cos psi floored at 1e-3), as :func:`binned_extent` bins it, and the phase code of :func:`echo_phase` (the same
    operations: tests/test_acoustic_chain_scratch.py compares them); else intensity 0, bin and label -1. Native code,
    lane by lane with no branch: the compiler vectorises a sub-block (the fan's cell data de-interleaved into lane
    arrays first)."""
    ...


@wp.func_native(_echo_snippet(_TABLE_CELLS))
def table_echoes(first: int, count: int, local0: int, directions: wp.array(dtype=wp.vec3),
                 hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                 hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                 object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32), origin: wp.vec3,
                 rotation: wp.quat, edges_a: wp.array(dtype=wp.vec3), edges_b: wp.array(dtype=wp.vec3),
                 weights: wp.array(dtype=wp.float32), min_range: float, range_resolution: float, n_range: int,
                 alpha_db_per_m: float, source_intensity: float, wavelength: float, phase_grid: float,
                 phase_key: int, ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                 ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32)) -> int:
    """:func:`fan_echoes` for a table fan: ray ``local``'s cell edges a_k = ``edges_a``[local], b_k =
    ``edges_b``[local] and weight ``weights``[local] (sr x pattern)."""
    ...


@wp.kernel
def fan_directions_kernel(bearing_cos_sin: wp.array(dtype=wp.vec2), bearing_cell: float,
                          elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float, n_elev: int, jitter: int,
                          jitter_key: int, directions_flu: wp.array(dtype=wp.vec3), start: int):
    """Ray ``local`` of a bearing x elevation fan (imaging sonar; channel c = local // n_elev, elevation ray k):
    its unit sensor-frame (FLU) direction, the cell centre of :func:`fan_cell` :func:`jittered` inside the cell.
    The same for every pose and frame, so the chain computes it once (:func:`pose_rays_kernel` rotates it).

    bearing_cos_sin[c] = (cos b_c, sin b_c) of the centre bearing of bearing ray c (rad, +starboard);
    elevation_table[k] = (cos e_k, sin e_k, w_k) with e_k the centre elevation (rad) and w_k the ray's solid
    angle (sr) times the two-way elevation pattern.
    """
    local = wp.tid() + start
    c = local // n_elev
    k = local - c * n_elev
    cell = fan_cell(bearing_cos_sin[c], elevation_table[k], bearing_cell, elevation_cell)
    directions_flu[local] = jittered(cell.centre, cell.edge_a, cell.edge_b, jitter, jitter_key, local)


@wp.kernel
def table_directions_kernel(table: wp.array(dtype=wp.vec3), edges_a: wp.array(dtype=wp.vec3),
                            edges_b: wp.array(dtype=wp.vec3), jitter: int, jitter_key: int,
                            directions_flu: wp.array(dtype=wp.vec3), start: int):
    """Ray ``local`` of a fan given as a table (side-scan, profiling, single-beam): FLU unit direction d_k with
    cell edge vectors a_k, b_k (the ray's cell is d_k + [-1/2, 1/2] a_k + [-1/2, 1/2] b_k), :func:`jittered` with
    stream index k; computed once per chain like :func:`fan_directions_kernel`."""
    local = wp.tid() + start
    directions_flu[local] = jittered(table[local], edges_a[local], edges_b[local], jitter, jitter_key, local)


#: Rays per element of :func:`pose_rays_kernel`.
RAY_BLOCK = wp.constant(64)

_POSE_RAYS = r"""
    // rays first .. first + count - 1 of one pose: origin and rotated direction, lane by lane (vectorised)
    const float* flu = (const float*)directions_flu.data;
    float* o_out = (float*)origins.data;
    float* d_out = (float*)directions.data;
    const float qx = rotation[0];
    const float qy = rotation[1];
    const float qz = rotation[2];
    const float qw = rotation[3];
    const float qc = 2.0f * qw * qw - 1.0f;
    const float w2 = qw * 2.0f;
#if defined(__clang__) && !defined(__CUDA_ARCH__)
#pragma clang loop vectorize(assume_safety)
#endif
    for (int l = 0; l < count; ++l) {
        const int i = first + l;
        const int k = local0 + l;
        const float x = flu[3 * k];
        const float y = flu[3 * k + 1];
        const float z = flu[3 * k + 2];
        // quat_rotate
        const float d = 2.0f * (qx * x + qy * y + qz * z);
        d_out[3 * i] = x * qc + qx * d + (qy * z - qz * y) * w2;
        d_out[3 * i + 1] = y * qc + qy * d + (qz * x - qx * z) * w2;
        d_out[3 * i + 2] = z * qc + qz * d + (qx * y - qy * x) * w2;
        o_out[3 * i] = position[0];
        o_out[3 * i + 1] = position[1];
        o_out[3 * i + 2] = position[2];
    }
    return count;
"""


@wp.func_native(_POSE_RAYS)
def pose_ray_block(first: int, count: int, local0: int, position: wp.vec3, rotation: wp.quat,
                   directions_flu: wp.array(dtype=wp.vec3), origins: wp.array(dtype=wp.vec3),
                   directions: wp.array(dtype=wp.vec3)) -> int:
    """Rays ``first`` .. ``first + count - 1`` of one pose (pose-local indices from ``local0``): origin ``position``
    and direction ``directions_flu``[local] rotated by ``rotation`` (the rotation of ``wp.quat_rotate``, up to the
    roundings of its contraction); returns ``count``. Native code, vectorised over the rays."""
    ...


@wp.kernel
def pose_rays_kernel(poses: wp.array(dtype=wp.transform), directions_flu: wp.array(dtype=wp.vec3),
                     rays_per_pose: int, origins: wp.array(dtype=wp.vec3), directions: wp.array(dtype=wp.vec3),
                     start: int):
    """Rays i = b rays_per_pose + local of a render, element e = (pose b, block q) for the RAY_BLOCK rays from
    local = q RAY_BLOCK of pose b (launch B ceil(rays_per_pose / RAY_BLOCK) elements): world origin (pose b's
    position) and unit world direction (``directions_flu``[local] of :func:`fan_directions_kernel` /
    :func:`table_directions_kernel` rotated by pose b's attitude), for the scene's ray-cast backend
    (:func:`pose_ray_block`)."""
    e = wp.tid() + start
    blocks = (rays_per_pose + RAY_BLOCK - 1) // RAY_BLOCK
    b = e // blocks
    local0 = (e - b * blocks) * RAY_BLOCK
    pose = poses[b]
    pose_ray_block(b * rays_per_pose + local0, wp.min(RAY_BLOCK, rays_per_pose - local0), local0,
                   wp.transform_get_translation(pose), wp.transform_get_rotation(pose), directions_flu, origins,
                   directions)


@wp.kernel
def device_ray_echo_kernel(directions: wp.array(dtype=wp.vec3),
                           hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                           hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                           object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                           poses: wp.array(dtype=wp.transform), bearing_cos_sin: wp.array(dtype=wp.vec2),
                           bearing_cell: float, elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float,
                           n_elev: int, rays_per_pose: int, phase_key: int,
                           min_range: float, range_resolution: float, n_range: int,
                           alpha_db_per_m: float, source_intensity: float, wavelength: float, phase_grid: float,
                           ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                           ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32), start: int):
    """Ray i of a bearing x elevation fan, from its hit (the backend's results for :func:`pose_rays_kernel`'s
    rays): its :func:`fan_echoes` (a block of one ray) into the per-ray echo arrays (the rays' origin is the pose's
    position)."""
    i = wp.tid() + start
    b = i // rays_per_pose
    pose = poses[b]
    fan_echoes(i, 1, i - b * rays_per_pose, directions, hit_distance, hit_normal, hit_face, hit_obj, object_mu,
               object_label, wp.transform_get_translation(pose), wp.transform_get_rotation(pose), bearing_cos_sin,
               bearing_cell, elevation_table, elevation_cell, n_elev, min_range, range_resolution, n_range,
               alpha_db_per_m, source_intensity, wavelength, phase_grid, phase_key, ray_intensity, ray_range,
               ray_bin, ray_label)


@wp.kernel
def device_table_ray_echo_kernel(directions: wp.array(dtype=wp.vec3),
                                 hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                                 hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                                 object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                                 poses: wp.array(dtype=wp.transform), edges_a: wp.array(dtype=wp.vec3),
                                 edges_b: wp.array(dtype=wp.vec3), weights: wp.array(dtype=wp.float32),
                                 rays_per_pose: int, phase_key: int, min_range: float,
                                 range_resolution: float, n_range: int, alpha_db_per_m: float,
                                 source_intensity: float, wavelength: float, phase_grid: float,
                                 ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                                 ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32), start: int):
    """Ray i of a table fan, from its hit: its :func:`table_echoes` (a block of one ray) into the per-ray echo
    arrays. The hit distance (+inf for a miss) stays in ``hit_distance``."""
    i = wp.tid() + start
    b = i // rays_per_pose
    pose = poses[b]
    table_echoes(i, 1, i - b * rays_per_pose, directions, hit_distance, hit_normal, hit_face, hit_obj, object_mu,
                 object_label, wp.transform_get_translation(pose), wp.transform_get_rotation(pose), edges_a, edges_b,
                 weights, min_range, range_resolution, n_range, alpha_db_per_m, source_intensity, wavelength,
                 phase_grid, phase_key, ray_intensity, ray_range, ray_bin, ray_label)


@wp.func
def footprint_bins(rr: wp.vec3, cell: int, min_range: float, range_resolution: float, n_range: int) -> wp.vec2i:
    """(first, last) range bin an echo's footprint [r - extent/2, r + extent/2] overlaps (``rr`` = (r, footprint
    extent, phase code) m, m, :func:`echo_phase`; ``cell``: its range bin, both bounds with no extent)."""
    half = 0.5 * rr[1]
    k0 = cell
    k1 = cell
    if half > 0.0:
        inv = 1.0 / range_resolution  # the same for every echo: computed once in a loop over echoes
        k0 = wp.max(int(wp.floor((rr[0] - half - min_range) * inv)), 0)
        k1 = wp.min(int(wp.floor((rr[0] + half - min_range) * inv)), n_range - 1)
    return wp.vec2i(k0, k1)


@wp.func
def footprint_inverse(rr: wp.vec3) -> float:
    """1 / extent of an echo's footprint (``rr`` as :func:`footprint_bins`; 0 with no extent), for
    :func:`footprint_weight`: one division per echo, not one per piece."""
    inv = float(0.0)
    if rr[1] > 0.0:
        inv = 1.0 / rr[1]
    return inv


@wp.func
def footprint_weight(rr: wp.vec3, kk: int, inv_extent: float, min_range: float, range_resolution: float) -> float:
    """Share of an echo's footprint (``rr`` as :func:`footprint_bins`; ``inv_extent`` its
    :func:`footprint_inverse`) inside range bin ``kk``: the overlap of the footprint and the bin over the extent
    (1 with no extent)."""
    half = 0.5 * rr[1]
    w = float(1.0)
    if half > 0.0:
        lo = min_range + float(kk) * range_resolution
        w = (wp.min(rr[0] + half, lo + range_resolution) - wp.max(rr[0] - half, lo)) * inv_extent
    return w


@wp.func
def piece_amplitude(rr: wp.vec3, cell: int, kk: int, phasors: wp.array(dtype=wp.vec2)) -> float:
    """Rayleigh amplitude a (mean a^2 = 1) of an echo's footprint piece in range bin ``kk``: ``phasors``[2^PHASOR_BITS
    + m][0] (the second half of chain.scatterer_phasor_table), m in the echo's own bin ``cell`` the 12 scatterer bits
    s of its phase code rr[2] (:func:`echo_phase`: fixed to the surface patch, so the amplitude stays while the
    carrier phase moves with the range), elsewhere the low 12 bits of the hash :func:`piece_phasor` takes the phase
    from (other scatterers)."""
    m = (int(rr[2]) >> PHASOR_BITS) & ((1 << PHASOR_BITS) - 1)
    if kk != cell:
        hh = pcg_hash(wp.uint32(m) ^ wp.uint32(kk) * wp.uint32(-1640531527))
        m = int(hh & wp.uint32((1 << PHASOR_BITS) - 1))
    return phasors[(1 << PHASOR_BITS) + m][0]


@wp.func
def piece_phasor(rr: wp.vec3, cell: int, kk: int, own: wp.vec2, phasors: wp.array(dtype=wp.vec2)) -> wp.vec2:
    """Phasor of an echo's footprint piece in range bin ``kk``: ``own`` = exp(i phase) in the echo's own bin
    ``cell``; elsewhere ``phasors``[(c + h) mod 2^PHASOR_BITS], c the phase of the code rr[2] (:func:`echo_phase`)
    and h the top bits of a hash of its scatterer bits s and the bin (other scatterers: a random phase fixed to the
    surface patch, turned by the carrier phase as the own bin's)."""
    phasor = own
    if kk != cell:
        code = int(rr[2])
        hh = pcg_hash(wp.uint32((code >> PHASOR_BITS) & ((1 << PHASOR_BITS) - 1))
                      ^ wp.uint32(kk) * wp.uint32(-1640531527))
        phasor = phasors[(code + int(hh >> wp.uint32(32 - PHASOR_BITS))) & ((1 << PHASOR_BITS) - 1)]
    return phasor


#: Rows per block of :func:`range_spread`'s CPU path; range kernels of up to 2 SPREAD_HALF_CAP + 1 taps take it.
SPREAD_ROWS = 16
SPREAD_HALF_CAP = 32

_RANGE_SPREAD = r"""
    // the range pass of channel j of frame b (see range_spread's docstring): row = lo - M .. hi + M summed over the
    // sources src = max(row - M, lo) .. min(row + M, hi) in ascending order, h[src - row + M] pre_field[src] and
    // (h h) pre_power[src] (separate statements: the products and sums of the Warp expressions, no contraction)
    const int lo_row = span[0];
    const int hi_row = span[1];
    if (hi_row < 0) {
        return;
    }
    const int half = (range_taps.shape[0] - 1) / 2;
    const float* tap = (const float*)range_taps.data;
    const float* src_f = (const float*)&wp::index(pre_field, b, j, 0);
    float* src_p = &wp::index(pre_power, b, j, 0);
    char* out_f = (char*)&wp::index(field, b, 0, j);
    char* out_p = (char*)&wp::index(power, b, 0, j);
    const long long step_f = (long long)field.strides[1];
    const long long step_p = (long long)power.strides[1];
    int* flag = &wp::index(row_echo, b, 0);
    // the channel's hit counts and labels, copied into the row-major pairs with the rows' outputs (rows outside
    // lo .. hi copy rest values onto rest values)
    int* src_h = &wp::index(pre_hits, b, j, 0);
    int* src_l = &wp::index(pre_labels, b, j, 0);
    char* out_hl = (char*)&wp::index(hit_label, b, 0, j);
    const long long step_hl = (long long)hit_label.strides[1];
    const int r0 = lo_row - half > 0 ? lo_row - half : 0;
    const int r1 = hi_row + half < n_range - 1 ? hi_row + half : n_range - 1;
#if defined(__CUDA_ARCH__)
    const bool blocks = false;
#else
    const bool blocks = half <= @HALF_CAP@;
#endif
    if (blocks) {
        // blocks of R rows: the block's sources row0 - M .. row0 + R - 1 + M once, de-interleaved and zero outside
        // lo .. hi (a zero source adds nothing to a sum that starts at zero: the same sums), then every tap over
        // the block's lanes with no bound to check (the compiler vectorises them)
        const int R = @ROWS@;
        float sx[@ROWS@ + 2 * @HALF_CAP@], sy[@ROWS@ + 2 * @HALF_CAP@], sp[@ROWS@ + 2 * @HALF_CAP@];
        for (int row0 = r0; row0 <= r1; row0 += R) {
            const int cnt = r1 - row0 + 1 < R ? r1 - row0 + 1 : R;
            if ((row0 - half >= lo_row) & (row0 + R - 1 + half <= hi_row)) {
                // a block whose sources all lie in lo .. hi: every tap straight from the column, the field's
                // (x, y) pairs as 2 R lanes (the same products and sums)
                const float* win_f = src_f + 2 * (row0 - half);
                const float* win_p = src_p + (row0 - half);
                float axy[2 * @ROWS@], ap[@ROWS@];
                for (int q = 0; q < 2 * R; ++q) {
                    axy[q] = 0.0f;
                }
                for (int l = 0; l < R; ++l) {
                    ap[l] = 0.0f;
                }
                for (int m = 0; m <= 2 * half; ++m) {
                    const float h = tap[m];
                    const float hh = h * h;
                    for (int q = 0; q < 2 * R; ++q) {
                        const float t = h * win_f[2 * m + q];
                        axy[q] = axy[q] + t;
                    }
                    for (int l = 0; l < R; ++l) {
                        const float tp = hh * win_p[m + l];
                        ap[l] = ap[l] + tp;
                    }
                }
#if !defined(__CUDA_ARCH__)
                // the output rows two blocks on asked for now: each is a cache line of the row-major images,
                // mostly not in this core's caches
                for (int l = 0; l < R; ++l) {
                    const int ahead = row0 + 2 * R + l < r1 ? row0 + 2 * R + l : r1;
                    __builtin_prefetch(out_f + step_f * ahead, 1);
                    __builtin_prefetch(out_p + step_p * ahead, 1);
                    __builtin_prefetch(out_hl + step_hl * ahead, 1);
                }
#endif
                for (int l = 0; l < cnt; ++l) {
                    const int row = row0 + l;
                    float* f = (float*)(out_f + step_f * row);
                    f[0] = axy[2 * l];
                    f[1] = axy[2 * l + 1];
                    *(float*)(out_p + step_p * row) = ap[l];
                    *(wp::vec2i*)(out_hl + step_hl * row) = wp::vec2i(src_h[row], src_l[row]);
                    if (flag[row] == 0) {
                        flag[row] = 1;
                    }
                }
                continue;
            }
            for (int s = 0; s < R + 2 * half; ++s) {
                sx[s] = 0.0f;
                sy[s] = 0.0f;
                sp[s] = 0.0f;
            }
            const int first_src = row0 - half > lo_row ? row0 - half : lo_row;
            const int last_src = row0 + cnt - 1 + half < hi_row ? row0 + cnt - 1 + half : hi_row;
            const int shift = half - row0;
            for (int src = first_src; src <= last_src; ++src) {
                sx[src + shift] = src_f[2 * src];
                sy[src + shift] = src_f[2 * src + 1];
                sp[src + shift] = src_p[src];
            }
            float ax[@ROWS@], ay[@ROWS@], ap[@ROWS@];
            for (int l = 0; l < R; ++l) {
                ax[l] = 0.0f;
                ay[l] = 0.0f;
                ap[l] = 0.0f;
            }
            for (int m = 0; m <= 2 * half; ++m) {
                const float h = tap[m];
                const float hh = h * h;
                for (int l = 0; l < R; ++l) {
                    const float tx = h * sx[l + m];
                    const float ty = h * sy[l + m];
                    const float tp = hh * sp[l + m];
                    ax[l] = ax[l] + tx;
                    ay[l] = ay[l] + ty;
                    ap[l] = ap[l] + tp;
                }
            }
            for (int l = 0; l < cnt; ++l) {
                const int row = row0 + l;
                float* f = (float*)(out_f + step_f * row);
                f[0] = ax[l];
                f[1] = ay[l];
                *(float*)(out_p + step_p * row) = ap[l];
                *(wp::vec2i*)(out_hl + step_hl * row) = wp::vec2i(src_h[row], src_l[row]);
                if (flag[row] == 0) {
                    flag[row] = 1;  // once: the channels of other CPU threads read it, written it would bounce
                }
            }
        }
    } else {
        for (int row = r0; row <= r1; ++row) {
            const int s0 = row - half > lo_row ? row - half : lo_row;
            const int s1 = row + half < hi_row ? row + half : hi_row;
            float ax = 0.0f;
            float ay = 0.0f;
            float ap = 0.0f;
            for (int src = s0; src <= s1; ++src) {
                const float h = tap[src - row + half];
                const float tx = h * src_f[2 * src];
                const float ty = h * src_f[2 * src + 1];
                const float hh = h * h;
                const float tp = hh * src_p[src];
                ax = ax + tx;
                ay = ay + ty;
                ap = ap + tp;
            }
            float* f = (float*)(out_f + step_f * row);
            f[0] = ax;
            f[1] = ay;
            *(float*)(out_p + step_p * row) = ap;
            *(wp::vec2i*)(out_hl + step_hl * row) = wp::vec2i(src_h[row], src_l[row]);
            if (flag[row] == 0) {
                flag[row] = 1;
            }
        }
    }
    // the channel's columns back to rest
    float* rest_f = (float*)src_f;
    for (int row = 2 * lo_row; row <= 2 * hi_row + 1; ++row) {
        rest_f[row] = 0.0f;
    }
    for (int row = lo_row; row <= hi_row; ++row) {
        src_p[row] = 0.0f;
        src_h[row] = 0;
        src_l[row] = -1;
    }
""".replace("@ROWS@", str(SPREAD_ROWS)).replace("@HALF_CAP@", str(SPREAD_HALF_CAP))


@wp.func_native(_RANGE_SPREAD)
def range_spread(b: int, j: int, span: wp.vec2i, n_range: int, range_taps: wp.array(dtype=wp.float32),
                 pre_field: wp.array3d(dtype=wp.vec2), pre_power: wp.array3d(dtype=wp.float32),
                 field: wp.array3d(dtype=wp.vec2), power: wp.array3d(dtype=wp.float32),
                 row_echo: wp.array2d(dtype=wp.int32), pre_hits: wp.array3d(dtype=wp.int32),
                 pre_labels: wp.array3d(dtype=wp.int32), hit_label: wp.array3d(dtype=wp.vec2i)):
    """The range pass of channel j of frame b (:func:`footprint_bin_kernel`) over the rows around ``span`` = (lo,
    hi), the rows its echoes reached (none if hi < 0): field[b, row, j] = sum h[src - row + M] pre_field[b, j, src]
    and power[b, row, j] = sum h^2 pre_power[b, j, src] over src = max(row - M, lo) .. min(row + M, hi) in
    ascending order (h = ``range_taps``, 2 M + 1 taps), hit_label[b, row, j] = (pre_hits[b, j, row],
    pre_labels[b, j, row]) and row_echo[b, row] set to 1, for row = lo - M .. hi + M inside the image; then its
    pre_field, pre_power, pre_hits and pre_labels rows lo .. hi set back to rest.

    Native code: on CPU, blocks of SPREAD_ROWS rows, every tap a loop over the block's rows with no bound to check
    (vectorised): a block whose sources all lie in lo .. hi reads them from the column (the field's (x, y) pairs as
    lanes of their own), another's sources are copied once into a window that is zero outside lo .. hi (a zero
    source adds nothing to a sum that starts at zero); range kernels wider than 2 SPREAD_HALF_CAP + 1 taps, and
    CUDA, check each row's bounds. The same sums as the Warp reference in tests/test_acoustic_chain_scratch.py."""
    ...


@wp.kernel
def footprint_bin_kernel(ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                         ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32),
                         rays_per_channel: int, rays_per_pose: int, n_channels: int, min_range: float,
                         range_resolution: float, n_range: int, range_taps: wp.array(dtype=wp.float32),
                         pre_field: wp.array3d(dtype=wp.vec2), pre_power: wp.array3d(dtype=wp.float32),
                         pre_hits: wp.array3d(dtype=wp.int32), pre_labels: wp.array3d(dtype=wp.int32),
                         peak: wp.array3d(dtype=wp.float32), field: wp.array3d(dtype=wp.vec2),
                         power: wp.array3d(dtype=wp.float32), row_echo: wp.array2d(dtype=wp.int32),
                         hit_label: wp.array3d(dtype=wp.vec2i), phasors: wp.array(dtype=wp.vec2), start: int):
    """Element (pose b, channel j): bin the channel's rays (:func:`bin_stored_echoes`, in ray order, into the
    channel-major scratch pre_* (B, n_channels, n_range), so a channel's bins are contiguous), then its range point
    spread.

    Range point spread (the range pass of the separable convolution), over the rows [lo - M, hi + M] around the
    rows lo..hi the channel's echoes reached: field[b, row, j] = sum_m h[m] pre_field[b, j, row - m + M],
    power[b, row, j] = sum_m h[m]^2 pre_power[b, j, row - m + M] (h = ``range_taps``, symmetric, m = 0..2M; one
    tap 1 for none), into the row-major (B, n_range, n_channels) images the bearing pass reads, and
    row_echo[b, row] = 1 for every row written (every writer writes the same 1: the result does not depend on the
    order), and the hit counts and labels of those rows into the row-major (hit count, label) pairs ``hit_label``
    (B, n_range, n_channels), a pair one 8-byte store next to the row's field and power, so that the bearing pass
    reads them along its rows. The channel's pre_field, pre_power, pre_hits and pre_labels are then set back to
    rest; :func:`bearing_receiver_kernel` reads and resets field, power, hit_label and row_echo of the flagged rows
    (rows not flagged hold their rest values). Expects every scratch at rest: 0, and -1 for pre_labels and the
    labels of hit_label (peak needs no initial value)."""
    e = wp.tid() + start
    b = e // n_channels
    j = e - b * n_channels
    first = b * rays_per_pose + j * rays_per_channel
    span = bin_stored_echoes(first, rays_per_channel, b, j, min_range, range_resolution, n_range, ray_intensity,
                             ray_range, ray_bin, ray_label, pre_field, pre_power, pre_hits, pre_labels, peak, phasors,
                             wp.vec2i(n_range, -1))
    range_spread(b, j, span, n_range, range_taps, pre_field, pre_power, field, power, row_echo, pre_hits,
                 pre_labels, hit_label)


#: :func:`bin_stored_echoes` on CPU: echoes per block (their footprint bounds and first BIN_FIRST pieces computed
#: lane by lane), range bins per window of a footprint's further pieces (computed lane by lane), and the mean
#: footprint width (bins per echo) from which a block's footprints are added a window of BIN_LANES bins at a time
#: (AVX2): below it one piece at a time is cheaper (1-2 piece footprints, as most of an Oculus M750d's or an ARIS
#: 1800's), above it the windows are (ARIS 3000 at 3 MHz: 9.4 bins per echo).
BIN_ECHOES = 32
BIN_FIRST = 3
BIN_LANES = 8
BIN_WIDE = 5

_BIN_ECHOES = r"""
    // the binning of echoes first .. first + count - 1 (see bin_stored_echoes); a channel's columns as pointers,
    // the footprint helpers' operations written out in the same order (separate statements: no contraction)
    const float* value_in = (const float*)ray_intensity.data;
    const float* range_in = (const float*)ray_range.data;
    const int* bin_in = (const int*)ray_bin.data;
    const int* label_in = (const int*)ray_label.data;
    const wp::vec2* table = (const wp::vec2*)phasors.data;
    wp::vec2* field_col = &wp::index(pre_field, b, j, 0);
    float* power_col = &wp::index(pre_power, b, j, 0);
    int* hits_col = &wp::index(pre_hits, b, j, 0);
    int* labels_col = &wp::index(pre_labels, b, j, 0);
    float* peak_col = &wp::index(peak, b, j, 0);
    const float inv_dr = 1.0f / range_resolution;
    int lo_row = span[0];
    int hi_row = span[1];
    // footprint_weight of bin kk for the footprint [down, up] of extent 1 / inv_extent
    auto weight = [&](int kk, float up, float down, float inv_extent) -> float {
        const float t = (float)kk * range_resolution;
        const float lo = min_range + t;
        const float hi = lo + range_resolution;
        const float top = up < hi ? up : hi;
        const float bottom = down > lo ? down : lo;
        const float overlap = top - bottom;
        return overlap * inv_extent;
    };
    // the scatterer amplitudes a_m, the x of the table's second half (piece_amplitude)
    const float* scatterer_amp = (const float*)(table + @PHASOR_N@);
    // piece_phasor and piece_amplitude: the indices of the piece in bin kk of the echo with phase code `code` and
    // range bin `cell`, n + 2^PHASOR_BITS m (n its phase, m its amplitude): in its own bin the code's low 24 bits
    // (echo_phasor; m its scatterer bits s), elsewhere n = the code's phase plus the top PHASOR_BITS bits of a hash
    // of s and the bin, m that hash's low PHASOR_BITS bits (indices are selected, not phasors: no branch)
    auto phasor_index = [](unsigned int code, int kk, int cell) -> unsigned int {
        const unsigned int x = ((code >> @PHASOR_BITS@u) & @PHASOR_MASK@u) ^ ((unsigned int)kk * 2654435769u);
        const unsigned int st = x * 747796405u + 2891336453u;
        const unsigned int wd = ((st >> ((st >> 28u) + 4u)) ^ st) * 277803737u;
        const unsigned int hh = (wd >> 22u) ^ wd;
        const unsigned int hashed = ((code + (hh >> @PHASOR_SHIFT@u)) & @PHASOR_MASK@u)
                                    | ((hh & @PHASOR_MASK@u) << @PHASOR_BITS@u);
        return kk == cell ? (code & @PIECE_MASK@u) : hashed;
    };
    // a piece of intensity `piece` and amplitude `amplitude` (its square root) in bin kk, phase and scatterer
    // amplitude indices `n` (phasor_index): the sums, the span and the strongest piece's label (on CPU selected by
    // masks: the comparison depends on the data, a branch on it would be mispredicted)
    auto add_piece = [&](int kk, float piece, float amplitude, unsigned int n, int label) {
        const float scaled = amplitude * scatterer_amp[2u * (n >> @PHASOR_BITS@u)];
        const wp::vec2 add = scaled * table[n & @PHASOR_MASK@u];
        field_col[kk] = field_col[kk] + add;
        power_col[kk] = power_col[kk] + piece;
        lo_row = kk < lo_row ? kk : lo_row;
        hi_row = kk > hi_row ? kk : hi_row;
        const int held = labels_col[kk];
        const float strongest = peak_col[kk];
#if defined(__CUDA_ARCH__)
        const bool wins = held < 0 || piece > strongest;
        peak_col[kk] = wins ? piece : strongest;
        labels_col[kk] = wins ? label : held;
#else
        const int wins = -(int)((held < 0) | (piece > strongest));
        union { float f; int i; } p, q;
        p.f = piece;
        q.f = strongest;
        q.i = (p.i & wins) | (q.i & ~wins);
        peak_col[kk] = q.f;
        labels_col[kk] = (label & wins) | (held & ~wins);
#endif
    };
#if defined(__CUDA_ARCH__)
    // CUDA: echo by echo (blocks of one), the pieces of each a loop over its bins
    const int E = 1;
#else
    // CPU: blocks of E echoes. Their footprint bounds and their first N pieces (bins k0 .. k0 + N - 1: weight,
    // intensity, amplitude, phasor index) lane by lane with no branch (vectorised); then echo by echo, those
    // pieces and the footprint's further bins (a footprint's pieces lie in consecutive bins k0 .. k1) in windows
    // of W bins computed lane by lane too (lanes past k1 are computed and not used), each piece added in order.
    // With AVX2, a wide block's footprints (WIDE bins per echo or more on average) are added W bins at a time
    // instead (add_window: the pieces of one echo lie in distinct bins, so each bin still receives its pieces in
    // echo order, the same sums).
    const int E = @ECHOES@;
    const int N = @FIRST@;
    const int W = @LANES@;
    float first_w[N][E], first_piece[N][E], first_amp[N][E];
    unsigned int first_index[N][E];
#if defined(__AVX2__)
    static_assert(@LANES@ == 8, "the wide blocks' windows are 8-lane AVX2 vectors");
    typedef float bin_f8 __attribute__((vector_size(32)));
    typedef int bin_i8 __attribute__((vector_size(32)));
    typedef int bin_i4 __attribute__((vector_size(16)));
    typedef long long bin_q4 __attribute__((vector_size(32)));
    typedef unsigned int bin_u8_w __attribute__((vector_size(32)));
    const bin_q4 all_lanes = (bin_q4)(bin_i8{} == bin_i8{});
    // the pieces of lanes `live` (0 or -1 per lane) into bins s .. s + 7 (inside the column): read-modify-writes
    // of 8 bins, the operations of add_piece per lane (separate statements: no contraction), lanes not live
    // keeping their values (selected by masks)
    auto add_window = [&](int s, bin_f8 piece, bin_f8 amp, bin_i8 index, bin_i8 live, int label) {
        // the scatterer amplitudes scatterer_amp[2 m] (m = index >> PHASOR_BITS) scale the amplitudes (add_piece)
        const bin_i8 amp_index = (bin_i8)((bin_u8_w)index >> @PHASOR_BITS@u) * 2;
        const bin_f8 scatterer = __builtin_ia32_gatherd_ps256(bin_f8{}, scatterer_amp, amp_index,
                                                              (bin_f8)(bin_i8{} == bin_i8{}), 4);
        const bin_f8 scaled = amp * scatterer;
        // table[index & mask] for bins s .. s + 3 and s + 4 .. s + 7: (x, y) pairs, the field's layout
        const bin_i8 phase = index & @PHASOR_MASK@;
        const bin_i4 index_lo = __builtin_shufflevector(phase, phase, 0, 1, 2, 3);
        const bin_i4 index_hi = __builtin_shufflevector(phase, phase, 4, 5, 6, 7);
        const long long* pairs = (const long long*)table;
        const bin_f8 phasor_lo = (bin_f8)__builtin_ia32_gatherd_q256(bin_q4{}, pairs, index_lo, all_lanes, 8);
        const bin_f8 phasor_hi = (bin_f8)__builtin_ia32_gatherd_q256(bin_q4{}, pairs, index_hi, all_lanes, 8);
        const bin_f8 amp_lo = __builtin_shufflevector(scaled, scaled, 0, 0, 1, 1, 2, 2, 3, 3);
        const bin_f8 amp_hi = __builtin_shufflevector(scaled, scaled, 4, 4, 5, 5, 6, 6, 7, 7);
        const bin_i8 live_lo = __builtin_shufflevector(live, live, 0, 0, 1, 1, 2, 2, 3, 3);
        const bin_i8 live_hi = __builtin_shufflevector(live, live, 4, 4, 5, 5, 6, 6, 7, 7);
        float* field_at = (float*)(field_col + s);
        bin_f8 field_lo, field_hi, power, strongest;
        bin_i8 held;
        __builtin_memcpy(&field_lo, field_at, sizeof(field_lo));
        __builtin_memcpy(&field_hi, field_at + 8, sizeof(field_hi));
        __builtin_memcpy(&power, power_col + s, sizeof(power));
        __builtin_memcpy(&strongest, peak_col + s, sizeof(strongest));
        __builtin_memcpy(&held, labels_col + s, sizeof(held));
        const bin_f8 add_lo = amp_lo * phasor_lo;
        const bin_f8 add_hi = amp_hi * phasor_hi;
        const bin_f8 sum_lo = field_lo + add_lo;
        const bin_f8 sum_hi = field_hi + add_hi;
        const bin_f8 sum_power = power + piece;
        const bin_i8 wins = live & ((held < 0) | (piece > strongest));
        const bin_i8 new_lo = ((bin_i8)sum_lo & live_lo) | ((bin_i8)field_lo & ~live_lo);
        const bin_i8 new_hi = ((bin_i8)sum_hi & live_hi) | ((bin_i8)field_hi & ~live_hi);
        const bin_i8 new_power = ((bin_i8)sum_power & live) | ((bin_i8)power & ~live);
        const bin_i8 new_peak = ((bin_i8)piece & wins) | ((bin_i8)strongest & ~wins);
        const bin_i8 new_label = (label & wins) | (held & ~wins);
        __builtin_memcpy(field_at, &new_lo, sizeof(new_lo));
        __builtin_memcpy(field_at + 8, &new_hi, sizeof(new_hi));
        __builtin_memcpy(power_col + s, &new_power, sizeof(new_power));
        __builtin_memcpy(peak_col + s, &new_peak, sizeof(new_peak));
        __builtin_memcpy(labels_col + s, &new_label, sizeof(new_label));
    };
#endif
#endif
    int k0_l[E], k1_l[E];
    float inv_l[E];
    // echo e of the block starting at ray i0: its values and footprint bins (k0_l, k1_l, inv_l filled by the block's
    // first loop); an echo with a bin (cell >= 0) is counted in its bin's hits and the channel's span here
    struct EchoHead {
        int cell, label, k0, k1;
        float value, half, inv_extent, up, down;
        unsigned int code;
    };
    int i0 = first;
    const auto echo_head = [&](const int e) -> EchoHead {
        const int i = i0 + e;
        EchoHead h;
        h.cell = bin_in[i];
        if (h.cell >= 0) {
            lo_row = h.cell < lo_row ? h.cell : lo_row;
            hi_row = h.cell > hi_row ? h.cell : hi_row;
            hits_col[h.cell] = hits_col[h.cell] + 1;
        }
        h.value = value_in[i];
        const float r = range_in[3 * i];
        h.half = 0.5f * range_in[3 * i + 1];
        h.code = (unsigned int)(int)range_in[3 * i + 2];
        h.label = label_in[i];
        h.k0 = k0_l[e];
        h.k1 = k1_l[e];
        h.inv_extent = inv_l[e];
        h.up = r + h.half;
        h.down = r - h.half;
        return h;
    };
    for (; i0 < first + count; i0 += E) {
        const int m = first + count - i0 < E ? first + count - i0 : E;
        // footprint_bins, footprint_inverse (and on CPU the first N pieces, and the bins the footprints span)
        int spanned = 0;
#if defined(__clang__) && !defined(__CUDA_ARCH__)
#pragma clang loop vectorize(assume_safety)
#endif
        for (int e = 0; e < m; ++e) {
            const int i = i0 + e;
            const int cell = bin_in[i];
            const float r = range_in[3 * i];
            const float extent = range_in[3 * i + 1];
            const float half = 0.5f * extent;
            const float a = r - half;
            const float a2 = a - min_range;
            const float b2 = r + half;
            const float b3 = b2 - min_range;
            const int f0 = (int)wp::floor(a2 * inv_dr);
            const int f1 = (int)wp::floor(b3 * inv_dr);
            const int c0 = f0 > 0 ? f0 : 0;
            const int c1 = f1 < n_range - 1 ? f1 : n_range - 1;
            k0_l[e] = half > 0.0f ? c0 : cell;
            k1_l[e] = half > 0.0f ? c1 : cell;
            spanned += cell >= 0 ? (half > 0.0f ? c1 - c0 + 1 : 1) : 0;
            const float inverse = 1.0f / (extent > 0.0f ? extent : 1.0f);
            const float inv_extent = extent > 0.0f ? inverse : 0.0f;
            inv_l[e] = inv_extent;
#if !defined(__CUDA_ARCH__)
            const float value = value_in[i];
            const unsigned int code = (unsigned int)(int)range_in[3 * i + 2];
            const int k0 = half > 0.0f ? c0 : cell;
            for (int p = 0; p < N; ++p) {
                const int kk = k0 + p;
                const float w = half > 0.0f ? weight(kk, b2, a, inv_extent) : 1.0f;
                const float piece = value * w;
                first_w[p][e] = w;
                first_piece[p][e] = piece;
                first_amp[p][e] = wp::sqrt(w > 0.0f ? piece : 0.0f);
                first_index[p][e] = phasor_index(code, kk, cell);
            }
#endif
        }
#if defined(__AVX2__) && !defined(__CUDA_ARCH__)
        // a wide block (its footprints span WIDE bins or more per echo on average, an echo outside the window
        // counted as none): every footprint in windows of W bins from its first, each window's pieces added to its
        // bins at once (add_window; one at a time past the column's end)
        if (spanned >= @WIDE@ * m) {
            for (int e = 0; e < m; ++e) {
                const auto [cell, label, k0, k1, value, half, inv_extent, up, down, code] = echo_head(e);
                if (cell < 0) {
                    continue;
                }
                // the footprint's pieces in bins s .. s + 7 (weight, intensity, amplitude, phasor index: the
                // operations of the narrow blocks' window loop below, 8 lanes at once), lanes past k1 computed and
                // not used
                typedef unsigned int bin_u8 __attribute__((vector_size(32)));
                const bin_f8 up_v = up + bin_f8{};
                const bin_f8 down_v = down + bin_f8{};
                const bin_i8 whole = -(int)(half > 0.0f) + bin_i8{};
                const bin_i8 one = (bin_i8)(1.0f + bin_f8{});
                for (int s = k0; s <= k1; s += W) {
                    const bin_i8 kk = s + bin_i8{0, 1, 2, 3, 4, 5, 6, 7};
                    const bin_f8 t = __builtin_convertvector(kk, bin_f8) * range_resolution;
                    const bin_f8 lo = min_range + t;
                    const bin_f8 hi = lo + range_resolution;
                    const bin_f8 top = __builtin_ia32_minps256(up_v, hi);
                    const bin_f8 bottom = __builtin_ia32_maxps256(down_v, lo);
                    const bin_f8 overlap = top - bottom;
                    const bin_f8 share = overlap * inv_extent;
                    const bin_f8 w = (bin_f8)(((bin_i8)share & whole) | (one & ~whole));
                    const bin_f8 piece = value * w;
                    const bin_i8 positive = w > 0.0f;
                    const bin_f8 amp = __builtin_elementwise_sqrt((bin_f8)((bin_i8)piece & positive));
                    const bin_u8 x = ((code >> @PHASOR_BITS@u) & @PHASOR_MASK@u) ^ ((bin_u8)kk * 2654435769u);
                    const bin_u8 st = x * 747796405u + 2891336453u;
                    const bin_u8 wd = ((st >> ((st >> 28u) + 4u)) ^ st) * 277803737u;
                    const bin_u8 hh = (wd >> 22u) ^ wd;
                    const bin_i8 hashed = (bin_i8)(((code + (hh >> @PHASOR_SHIFT@u)) & @PHASOR_MASK@u)
                                                   | ((hh & @PHASOR_MASK@u) << @PHASOR_BITS@u));
                    const bin_i8 own = kk == cell;
                    const bin_i8 index = ((int)(code & @PIECE_MASK@u) & own) | (hashed & ~own);
                    const bin_i8 live = (kk <= k1) & positive;
                    if (s + W <= n_range) {
                        const int bits = __builtin_ia32_movmskps256((bin_f8)live);
                        if (bits != 0) {
                            const int lowest = s + __builtin_ctz((unsigned int)bits);
                            const int highest = s + 31 - __builtin_clz((unsigned int)bits);
                            lo_row = lowest < lo_row ? lowest : lo_row;
                            hi_row = highest > hi_row ? highest : hi_row;
                        }
                        add_window(s, piece, amp, index, live, label);
                    } else {
                        for (int l = 0; l < W; ++l) {
                            if (live[l] != 0) {
                                add_piece(s + l, piece[l], amp[l], (unsigned int)index[l], label);
                            }
                        }
                    }
                }
            }
            continue;
        }
#endif
        for (int e = 0; e < m; ++e) {
            const auto [cell, label, k0, k1, value, half, inv_extent, up, down, code] = echo_head(e);
            if (cell < 0) {
                continue;
            }
#if defined(__CUDA_ARCH__)
            for (int kk = k0; kk <= k1; ++kk) {
                const float w = half > 0.0f ? weight(kk, up, down, inv_extent) : 1.0f;
                if (w > 0.0f) {
                    const float piece = value * w;
                    add_piece(kk, piece, wp::sqrt(piece), phasor_index(code, kk, cell), label);
                }
            }
#else
            // the first N pieces (computed above), then the footprint's further bins in windows of W (a
            // footprint with no extent is one piece, in bin k0 = k1 = cell)
            const int n_first = k1 - k0 + 1 < N ? k1 - k0 + 1 : N;
            for (int p = 0; p < n_first; ++p) {
                if (first_w[p][e] > 0.0f) {
                    add_piece(k0 + p, first_piece[p][e], first_amp[p][e], first_index[p][e], label);
                }
            }
            for (int s = k0 + N; s <= k1; s += W) {
                float w_l[W], piece_l[W], amp_l[W];
                unsigned int index_l[W];
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#endif
                for (int l = 0; l < W; ++l) {
                    const int kk = s + l;
                    const float w = weight(kk, up, down, inv_extent);
                    const float piece = value * w;
                    w_l[l] = w;
                    piece_l[l] = piece;
                    amp_l[l] = wp::sqrt(w > 0.0f ? piece : 0.0f);
                    index_l[l] = phasor_index(code, kk, cell);
                }
                // the window's bins s .. min(k1, s + W - 1) in order
                const int last = k1 - s < W - 1 ? k1 - s : W - 1;
                for (int l = 0; l <= last; ++l) {
                    if (w_l[l] > 0.0f) {
                        add_piece(s + l, piece_l[l], amp_l[l], index_l[l], label);
                    }
                }
            }
#endif
        }
    }
    return wp::vec2i(lo_row, hi_row);
"""
for _name, _value in (("@PHASOR_MASK@", (1 << int(PHASOR_BITS)) - 1), ("@PHASOR_SHIFT@", 32 - int(PHASOR_BITS)),
                      ("@PIECE_MASK@", (1 << (2 * int(PHASOR_BITS))) - 1), ("@PHASOR_BITS@", int(PHASOR_BITS)),
                      ("@PHASOR_N@", 1 << int(PHASOR_BITS)), ("@ECHOES@", BIN_ECHOES), ("@WIDE@", BIN_WIDE),
                      ("@LANES@", BIN_LANES), ("@FIRST@", BIN_FIRST)):
    _BIN_ECHOES = _BIN_ECHOES.replace(_name, str(_value))


@wp.func_native(_BIN_ECHOES)
def bin_stored_echoes(first: int, count: int, b: int, j: int, min_range: float, range_resolution: float,
                      n_range: int, ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                      ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32),
                      pre_field: wp.array3d(dtype=wp.vec2), pre_power: wp.array3d(dtype=wp.float32),
                      pre_hits: wp.array3d(dtype=wp.int32), pre_labels: wp.array3d(dtype=wp.int32),
                      peak: wp.array3d(dtype=wp.float32), phasors: wp.array(dtype=wp.vec2), span: wp.vec2i) -> wp.vec2i:
    """Bin the stored echoes ``first`` .. ``first + count - 1`` (those with a range bin, in order) into channel j of
    frame b of the channel-major scratch (B, n_channels, n_range); returns ``span`` = (lowest, highest) row touched,
    widened by their rows.

    Each echo (intensity I = ``ray_intensity`` re 1 uPa^2, ``ray_range`` = (r, footprint extent, phase code),
    range bin ``cell`` >= 0, label) is spread over the range bins :func:`footprint_bins` its footprint
    [r - extent/2, r + extent/2] overlaps, in proportion to the overlap (:func:`footprint_weight`; area sampling:
    no aliasing between the ray grid and the range bins). A piece of weight w in bin k adds I w to ``pre_power``
    and (sqrt(I w) a_k) exp(i phi_k) to ``pre_field``, phi_k the echo's phase in its own bin (:func:`echo_phasor`)
    and that plus a random phase elsewhere (:func:`piece_phasor`), a_k a Rayleigh amplitude of mean square 1
    (:func:`piece_amplitude`; ``phasors`` is chain.scatterer_phasor_table: 2^PHASOR_BITS unit phasors, then the
    amplitudes): the footprint's scatterers in other bins are other scatterers.
    ``pre_hits``[cell] counts the echo; ``pre_labels``[k] keeps the label of the strongest piece in bin k (``peak``:
    its intensity; a label of -1 means none yet).

    Native code: the channel's columns as pointers (Warp's generated code recomputes every array address from its
    strides), and those helpers' operations written out in the same order and roundings, so the values are theirs
    (tests/test_acoustic_chain_scratch.py compares them with a kernel built from the helpers). On CPU the footprint
    bounds and first BIN_FIRST pieces (weights, amplitudes, phasor indices) of BIN_ECHOES echoes at a time are
    computed lane by lane, a footprint's further pieces BIN_LANES bins at a time (vectorised), and every piece is
    then added in order (echoes in ray order, a footprint's bins in ascending order: the same sums) with no branch on
    the data (the phasor's table index and the strongest piece's label are selected, not branched on). A block whose
    footprints span BIN_WIDE bins per echo or more on average adds each footprint BIN_LANES bins at a time with AVX2
    (vector read-modify-writes of the window's bins, masked selects for the labels: the same values, each bin's
    pieces still in echo order)."""
    ...


@wp.kernel
def device_fan_bin_kernel(directions: wp.array(dtype=wp.vec3),
                          hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                          hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                          object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                          poses: wp.array(dtype=wp.transform), bearing_cos_sin: wp.array(dtype=wp.vec2),
                          bearing_cell: float, elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float,
                          n_elev: int, rays_per_pose: int, phase_key: int,
                          min_range: float, range_resolution: float, n_range: int,
                          alpha_db_per_m: float, source_intensity: float, wavelength: float, phase_grid: float,
                          ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                          ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32),
                          rays_per_channel: int, n_channels: int, range_taps: wp.array(dtype=wp.float32),
                          pre_field: wp.array3d(dtype=wp.vec2), pre_power: wp.array3d(dtype=wp.float32),
                          pre_hits: wp.array3d(dtype=wp.int32), pre_labels: wp.array3d(dtype=wp.int32),
                          peak: wp.array3d(dtype=wp.float32), field: wp.array3d(dtype=wp.vec2),
                          power: wp.array3d(dtype=wp.float32), row_echo: wp.array2d(dtype=wp.int32),
                          hit_label: wp.array3d(dtype=wp.vec2i), phasors: wp.array(dtype=wp.vec2), start: int):
    """Element (pose b, channel j) of a bearing x elevation fan: :func:`device_ray_echo_kernel` and
    :func:`footprint_bin_kernel` for one channel: the channel's echoes into the per-ray echo arrays (one
    :func:`fan_echoes` call for all its rays: its setup once per channel), binned from there while they are in
    cache, then the range pass. The same values as the two kernels; one launch, and the echo arrays are read back
    from cache. The chain's CPU path without multipath."""
    e = wp.tid() + start
    b = e // n_channels
    j = e - b * n_channels
    pose = poses[b]
    rotation = wp.transform_get_rotation(pose)
    origin = wp.transform_get_translation(pose)  # the origin of every ray of the pose
    first = b * rays_per_pose + j * rays_per_channel
    local0 = j * rays_per_channel
    fan_echoes(first, rays_per_channel, local0, directions, hit_distance, hit_normal, hit_face, hit_obj, object_mu,
               object_label, origin, rotation, bearing_cos_sin, bearing_cell, elevation_table, elevation_cell, n_elev,
               min_range, range_resolution, n_range, alpha_db_per_m, source_intensity, wavelength, phase_grid,
               phase_key, ray_intensity, ray_range, ray_bin, ray_label)
    span = bin_stored_echoes(first, rays_per_channel, b, j, min_range, range_resolution, n_range, ray_intensity,
                             ray_range, ray_bin, ray_label, pre_field, pre_power, pre_hits, pre_labels, peak, phasors,
                             wp.vec2i(n_range, -1))
    range_spread(b, j, span, n_range, range_taps, pre_field, pre_power, field, power, row_echo, pre_hits,
                 pre_labels, hit_label)


@wp.kernel
def device_table_bin_kernel(directions: wp.array(dtype=wp.vec3),
                            hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                            hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                            object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                            poses: wp.array(dtype=wp.transform), edges_a: wp.array(dtype=wp.vec3),
                            edges_b: wp.array(dtype=wp.vec3), weights: wp.array(dtype=wp.float32),
                            rays_per_pose: int, phase_key: int, min_range: float,
                            range_resolution: float, n_range: int, alpha_db_per_m: float,
                            source_intensity: float, wavelength: float, phase_grid: float,
                            ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                            ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32),
                            rays_per_channel: int, n_channels: int, range_taps: wp.array(dtype=wp.float32),
                            pre_field: wp.array3d(dtype=wp.vec2), pre_power: wp.array3d(dtype=wp.float32),
                            pre_hits: wp.array3d(dtype=wp.int32), pre_labels: wp.array3d(dtype=wp.int32),
                            peak: wp.array3d(dtype=wp.float32), field: wp.array3d(dtype=wp.vec2),
                            power: wp.array3d(dtype=wp.float32), row_echo: wp.array2d(dtype=wp.int32),
                            hit_label: wp.array3d(dtype=wp.vec2i), phasors: wp.array(dtype=wp.vec2), start: int):
    """Element (pose b, channel j) of a table fan: :func:`device_table_ray_echo_kernel` and
    :func:`footprint_bin_kernel` for one channel, as :func:`device_fan_bin_kernel`."""
    e = wp.tid() + start
    b = e // n_channels
    j = e - b * n_channels
    pose = poses[b]
    rotation = wp.transform_get_rotation(pose)
    origin = wp.transform_get_translation(pose)
    first = b * rays_per_pose + j * rays_per_channel
    table_echoes(first, rays_per_channel, j * rays_per_channel, directions, hit_distance, hit_normal, hit_face,
                 hit_obj, object_mu, object_label, origin, rotation, edges_a, edges_b, weights, min_range,
                 range_resolution, n_range, alpha_db_per_m, source_intensity, wavelength, phase_grid, phase_key,
                 ray_intensity, ray_range, ray_bin, ray_label)
    span = bin_stored_echoes(first, rays_per_channel, b, j, min_range, range_resolution, n_range, ray_intensity,
                             ray_range, ray_bin, ray_label, pre_field, pre_power, pre_hits, pre_labels, peak, phasors,
                             wp.vec2i(n_range, -1))
    range_spread(b, j, span, n_range, range_taps, pre_field, pre_power, field, power, row_echo, pre_hits,
                 pre_labels, hit_label)


@wp.func
def bin_indices(e: int, n_range: int, n_channels: int) -> wp.vec3i:
    per_frame = n_range * n_channels
    b = e // per_frame
    cell = e - b * per_frame
    r = cell // n_channels
    return wp.vec3i(b, r, cell - r * n_channels)


#: The exponential draws of the receiver interpolate a table of 2^EXP_TABLE_BITS + 1 quantiles of the unit
#: exponential law (:func:`exponential_table`); the last EXP_EXACT_SEGMENTS segments are computed exactly.
EXP_TABLE_BITS = wp.constant(12)
EXP_EXACT_SEGMENTS = wp.constant(8)


@wp.func
def unit_exponential(h: wp.uint32, table: wp.array(dtype=wp.float32)) -> float:
    """One unit-mean exponential draw E = -ln(1 - u) from the uniform 32-bit word h (u = h / 2^32): the top
    EXP_TABLE_BITS bits of h pick the segment n of ``table`` (table[n] = -ln(1 - n / 2^EXP_TABLE_BITS)) and the
    other bits interpolate linearly inside it; in the last EXP_EXACT_SEGMENTS segments (the tail, where the
    quantile curves) E is the logarithm itself. Chord error at most 1 / (8 (m - 1)^2) in the m-th segment from the
    end (1 - u in ((m - 1) / N, m / N], N = 2^EXP_TABLE_BITS; m > EXP_EXACT_SEGMENTS: < 0.002, 0.03 % of a draw
    there), mean bias < 1e-5; largest draw 32 ln 2 = 22.2."""
    n = int(h >> wp.uint32(32 - EXP_TABLE_BITS))
    frac = float(h & wp.uint32((1 << (32 - EXP_TABLE_BITS)) - 1)) * (1.0 / float(1 << (32 - EXP_TABLE_BITS)))
    segments = 1 << EXP_TABLE_BITS
    if n >= segments - EXP_EXACT_SEGMENTS:
        # 1 - u = (segments - n - frac) / segments, computed without cancellation
        return wp.log(float(segments)) - wp.log(float(segments - n) - frac)
    a = table[n]
    return a + frac * (table[n + 1] - a)


@wp.func
def bin_state(key: int, b_bin: int) -> wp.uint32:
    """The random state of bin ``b_bin`` (r n_channels + j) of a frame's receiver stream ``key``: one PCG hash of
    key XOR bin, distinct for every bin of the frame (a bijection of the bin index)."""
    return pcg_hash(wp.uint32(key) ^ wp.uint32(b_bin))


#: Bins per block of :func:`receiver_row` on CPU (a block's point spread and noise are computed lane by lane; 16 on
#: CUDA, where a thread's block lives in local memory).
RECEIVER_BLOCK = 32

#: Bearing kernels of up to 2 RECEIVER_HALF_CAP + 1 taps take :func:`receiver_row`'s fast path (the block's sources
#: copied once into a zero-padded window); wider ones check each tap's bounds (the same sums).
RECEIVER_HALF_CAP = 32

#: Channels per tile of the bearing tap table (``bearing_receiver_kernel``'s ``taps``): the taps of 16 consecutive
#: output channels for one source offset are contiguous, one vector load for the 16 lanes of a point-spread tile.
TAP_LANES = 16

_RECEIVER_ROW = r"""
    // One receiver row (see receiver_row's docstring). Blocks of B bins (fewer in a row's last block): every step is
    // a loop over the block's lanes with no branch, so the compiler vectorises it; bin_state and unit_exponential
    // written as separate statements (no contraction the Warp functions do not have): a noise-only bin is bit for
    // bit theirs.
#if defined(__CUDA_ARCH__)
    constexpr int B = 16;
#define RX_VECTORISE
#else
    constexpr int B = @BLOCK@;
#define RX_VECTORISE _Pragma("clang loop vectorize(assume_safety)")
#endif
#if defined(__AVX2__) && !defined(__CUDA_ARCH__)
    typedef int rx_i8 __attribute__((vector_size(32)));
    typedef float rx_f8 __attribute__((vector_size(32)));
    typedef int rx_i4 __attribute__((vector_size(16)));
    typedef long long rx_q4 __attribute__((vector_size(32)));
    struct rx_pair8 { rx_f8 first, second; };
    // lanes 0..7 of the 8-byte elements at base + scale * at (scale 4: a float and the next; 8: a vec2), split
    // into their first and second floats
    const auto rx_gather_pairs = [](const float* base, rx_i8 at, int scale) -> rx_pair8 {
        const rx_q4 all = (rx_q4)(rx_i8{} == rx_i8{});
        const rx_i4 lo = __builtin_shufflevector(at, at, 0, 1, 4, 5);
        const rx_i4 hi = __builtin_shufflevector(at, at, 2, 3, 6, 7);
        const long long* q = (const long long*)base;
        const rx_f8 g0 = (rx_f8)(scale == 4 ? __builtin_ia32_gatherd_q256(rx_q4{}, q, lo, all, 4)
                                            : __builtin_ia32_gatherd_q256(rx_q4{}, q, lo, all, 8));
        const rx_f8 g1 = (rx_f8)(scale == 4 ? __builtin_ia32_gatherd_q256(rx_q4{}, q, hi, all, 4)
                                            : __builtin_ia32_gatherd_q256(rx_q4{}, q, hi, all, 8));
        return rx_pair8{__builtin_shufflevector(g0, g1, 0, 2, 8, 10, 4, 6, 12, 14),
                        __builtin_shufflevector(g0, g1, 1, 3, 9, 11, 5, 7, 13, 15)};
    };
#endif
    const int n = n_channels;
    const int half = (taps.shape[1] - 1) / 2;
    const int taps_n = 2 * half + 1;
    const unsigned int ukey = (unsigned int)key;
    const unsigned int first = (unsigned int)(r * n);
    const float* tap = (const float*)taps.data;
    const float* col_reverb = (const float*)column_reverb.data;
    const int* spans = (const int*)tap_spans.data;
    const float* tab = (const float*)exp_table.data;
    const float* ph = (const float*)phasors.data;
    float* fin = (float*)&wp::index(field_in, b, r, 0);
    float* pin = &wp::index(power_in, b, r, 0);
    float* out_i = &wp::index(intensity, b, r, 0);
    float* out_c = &wp::index(clean, b, r, 0);
    int* out_h = &wp::index(hits, b, r, 0);
    int* out_l = &wp::index(labels, b, r, 0);
    const int noisy = variance > 0.0f || reverb > 0.0f;
    const float seg_scale = 1.0f / (float)(1u << @SEG_SHIFT@u);
    float total = 0.0f;
    // one block of cnt bins from j0, its lanes computed W at a time (W a constant of the instantiation: the loops
    // over the lanes unroll): W = B, or B / 2 for a row's last block of at most B / 2 bins (a short row's only
    // one); values of lanes past the row are never stored
    struct rx_full {
        int operator()() const { return B; }
    };
    struct rx_half {
        int operator()() const { return B / 2; }
    };
    const auto block = [&](const int j0, const int cnt, const auto width) {
        const int W = width();
        unsigned int hh[B];
        float ex[B];
        float det[B];
        // the bin's volume reverberation R(r) c_j and noise variance V + R(r) c_j (c_j = column_reverb[j])
        float rv[B], var[B];
        RX_VECTORISE
        for (int i = 0; i < W; ++i) {
            const float rc = reverb * col_reverb[j0 + i];
            rv[i] = rc;
            var[i] = variance + rc;
        }
        // bin_state: one PCG hash per bin (every lane of the block: lanes past the row's end are never stored)
        RX_VECTORISE
        for (int i = 0; i < W; ++i) {
            const unsigned int x = ukey ^ (first + (unsigned int)(j0 + i));
            const unsigned int st = x * 747796405u + 2891336453u;
            const unsigned int w = ((st >> ((st >> 28u) + 4u)) ^ st) * 277803737u;
            hh[i] = (w >> 22u) ^ w;
        }
        // unit_exponential's table segment; the tail (the last EXACT segments) is done exactly below
        int seg_of[B];
        float frac_of[B], ta[B], tb[B];
        int tail = 0;
        RX_VECTORISE
        for (int i = 0; i < W; ++i) {
            const unsigned int h = hh[i];
            const int seg = (int)(h >> @SEG_SHIFT@u);
            tail |= seg >= @SEGMENTS@ - @EXACT@;
            seg_of[i] = seg < @SEGMENTS@ - 1 ? seg : @SEGMENTS@ - 2;
            frac_of[i] = (float)(int)(h & @FRAC_MASK@u) * seg_scale;
        }
#if defined(__AVX2__) && !defined(__CUDA_ARCH__)
        // (tab[seg], tab[seg + 1]) as one 8-byte element per lane: two 4-lane gathers per 8 lanes, de-interleaved
        for (int i = 0; i < W; i += 8) {
            rx_i8 at;
            __builtin_memcpy(&at, &seg_of[i], sizeof(at));
            rx_pair8 pair = rx_gather_pairs(tab, at, 4);
            __builtin_memcpy(&ta[i], &pair.first, sizeof(rx_f8));
            __builtin_memcpy(&tb[i], &pair.second, sizeof(rx_f8));
        }
#else
        for (int i = 0; i < W; ++i) {
            ta[i] = tab[seg_of[i]];
            tb[i] = tab[seg_of[i] + 1];
        }
#endif
        RX_VECTORISE
        for (int i = 0; i < W; ++i) {
            const float a = ta[i];
            const float d = tb[i] - a;
            const float fd = frac_of[i] * d;
            ex[i] = a + fd;
        }
        if (tail) {
            for (int i = 0; i < cnt; ++i) {
                const unsigned int h = hh[i];
                const int seg = (int)(h >> @SEG_SHIFT@u);
                if (seg >= @SEGMENTS@ - @EXACT@) {
                    const float frac = (float)(int)(h & @FRAC_MASK@u) * seg_scale;
                    ex[i] = wp::log((float)@SEGMENTS@) - wp::log((float)(@SEGMENTS@ - seg) - frac);
                }
            }
        }
        if (echo == 0) {
            if (noisy) {
                RX_VECTORISE
                for (int i = 0; i < cnt; ++i) {
                    const float detected = var[i] * ex[i];
                    det[i] = detected * g;
                }
            } else {
                const float detected = 0.0f * g;
                for (int i = 0; i < cnt; ++i) {
                    det[i] = detected;
                }
            }
            RX_VECTORISE
            for (int i = 0; i < cnt; ++i) {
                out_i[j0 + i] = det[i];
                out_c[j0 + i] = rv[i] * g;
                out_h[j0 + i] = 0;
                out_l[j0 + i] = -1;
            }
        } else {
            // the block's (hit count, label) pairs, contiguous along the row
            int* pairs_at = (int*)&wp::index(hit_label, b, r, j0);
            float fx[B], fy[B], fp[B];
            for (int i = 0; i < cnt; ++i) {
                fx[i] = 0.0f;
                fy[i] = 0.0f;
                fp[i] = 0.0f;
            }
            // the bearing point spread, bin j = j0 + i summed over its taps t in ascending order (source
            // j + t - half), skipped where every source of the block is zero (adding zeros changes nothing)
            if (half <= @HALF_CAP@) {
                // the sources of the block's point-spread tiles (16 lanes each) j0 - half .. j0 + max(W, 16) - 1 + half
                // once, de-interleaved and zero outside the row
                // (a zero source adds nothing), then every tap over the block's lanes with no bound to check
                float sx[B + 2 * @HALF_CAP@], sy[B + 2 * @HALF_CAP@], sp[B + 2 * @HALF_CAP@];
                const int base = j0 - half;
                const int span = (W > 16 ? W : 16) + 2 * half;
                // the window's part inside the row, q = lo_q .. hi_q - 1 (all of it but at the row's ends), loaded
                // contiguously; zeros outside (an index clamped per source made every load a gather: 5-15 % more
                // receiver time on the tank presets)
                const int lo_q = base < 0 ? -base : 0;
                const int hi_q = n - base < span ? n - base : span;
                int any = 0;
                for (int q = 0; q < lo_q; ++q) {
                    sx[q] = 0.0f;
                    sy[q] = 0.0f;
                    sp[q] = 0.0f;
                }
                RX_VECTORISE
                for (int q = lo_q; q < hi_q; ++q) {
                    const float x = fin[2 * (base + q)];
                    const float y = fin[2 * (base + q) + 1];
                    const float p = pin[base + q];
                    sx[q] = x;
                    sy[q] = y;
                    sp[q] = p;
                    any |= (x != 0.0f) | (y != 0.0f) | (p != 0.0f);
                }
                for (int q = hi_q; q < span; ++q) {
                    sx[q] = 0.0f;
                    sy[q] = 0.0f;
                    sp[q] = 0.0f;
                }
                if (any) {
                    // 16 lanes at a time (one tile of the tap table), their sums held in registers over every tap
                    for (int i0 = 0; i0 < W; i0 += 16) {
                        const int c = (j0 + i0) / @TAP_LANES@;
                        const float* tile = tap + (size_t)c * taps_n * @TAP_LANES@;
                        // the tile's taps outside [t_lo, t_hi) are zero in every lane: skipped (adding 0 h x to a
                        // sum that is 0 before the first nonzero tap and unchanged after the last changes nothing)
                        const int t_lo = spans[2 * c];
                        const int t_hi = spans[2 * c + 1];
                        float ax[16], ay[16], ap[16];
                        for (int l = 0; l < 16; ++l) {
                            ax[l] = 0.0f;
                            ay[l] = 0.0f;
                            ap[l] = 0.0f;
                        }
                        for (int t = t_lo; t < t_hi; ++t) {
                            const float* ht = tile + @TAP_LANES@ * t;
                            for (int l = 0; l < 16; ++l) {
                                const float h1 = ht[l];
                                const float h2 = h1 * h1;
                                const float tx = h1 * sx[t + i0 + l];
                                const float ty = h1 * sy[t + i0 + l];
                                const float tp = h2 * sp[t + i0 + l];
                                ax[l] = ax[l] + tx;
                                ay[l] = ay[l] + ty;
                                ap[l] = ap[l] + tp;
                            }
                        }
                        for (int l = 0; l < 16; ++l) {
                            fx[i0 + l] = ax[l];
                            fy[i0 + l] = ay[l];
                            fp[i0 + l] = ap[l];
                        }
                    }
                }
            } else {
                // kernels wider than 2 HALF_CAP + 1 taps: the same sums, bounds checked per tap
                for (int t = 0; t < taps_n; ++t) {
                    const int off = j0 + t - half;
                    const int ilo = -off > 0 ? -off : 0;
                    const int ihi = n - off < cnt ? n - off : cnt;
                    for (int i = ilo; i < ihi; ++i) {
                        const int j = j0 + i;
                        const float h1 = tap[((size_t)(j / @TAP_LANES@) * taps_n + t) * @TAP_LANES@ + j % @TAP_LANES@];
                        const float h2 = h1 * h1;
                        const float tx = h1 * fin[2 * (off + i)];
                        const float ty = h1 * fin[2 * (off + i) + 1];
                        const float tp = h2 * pin[off + i];
                        fx[i] = fx[i] + tx;
                        fy[i] = fy[i] + ty;
                        fp[i] = fp[i] + tp;
                    }
                }
            }
            // detection: |f + n|^2, n of amplitude sqrt(V E) and phase from the top PHASOR_BITS bits
            // of pcg(h), or V E where f = 0; every lane of the block, then the block's bins stored
            RX_VECTORISE
            for (int i = 0; i < cnt; ++i) {
                det[i] = fx[i] * fx[i] + fy[i] * fy[i];
            }
            if (noisy) {
                int k_of[B];
                float cx[B], cy[B];
                RX_VECTORISE
                for (int i = 0; i < W; ++i) {
                    const unsigned int h = hh[i];
                    const unsigned int st = h * 747796405u + 2891336453u;
                    const unsigned int w = ((st >> ((st >> 28u) + 4u)) ^ st) * 277803737u;
                    k_of[i] = (int)(((w >> 22u) ^ w) >> @PHASOR_SHIFT@u);
                }
#if defined(__AVX2__) && !defined(__CUDA_ARCH__)
                for (int i = 0; i < W; i += 8) {
                    rx_i8 at;
                    __builtin_memcpy(&at, &k_of[i], sizeof(at));
                    rx_pair8 pair = rx_gather_pairs(ph, at, 8);
                    __builtin_memcpy(&cx[i], &pair.first, sizeof(rx_f8));
                    __builtin_memcpy(&cy[i], &pair.second, sizeof(rx_f8));
                }
#else
                for (int i = 0; i < W; ++i) {
                    cx[i] = ph[2 * k_of[i]];
                    cy[i] = ph[2 * k_of[i] + 1];
                }
#endif
                RX_VECTORISE
                for (int i = 0; i < cnt; ++i) {
                    const float ve = var[i] * ex[i];
                    const float amplitude = wp::sqrt(ve);
                    const float gx = fx[i] + amplitude * cx[i];
                    const float gy = fy[i] + amplitude * cy[i];
                    const float dn = gx * gx + gy * gy;
                    det[i] = det[i] == 0.0f ? ve : dn;
                }
            }
            RX_VECTORISE
            for (int i = 0; i < cnt; ++i) {
                const float d = det[i] * g;
                det[i] = d;
                out_i[j0 + i] = d;
                const float pr = fp[i] + rv[i];
                out_c[j0 + i] = pr * g;
            }
            for (int i = 0; i < cnt; ++i) {
                out_h[j0 + i] = pairs_at[2 * i];
                out_l[j0 + i] = pairs_at[2 * i + 1];
                pairs_at[2 * i] = 0;
                pairs_at[2 * i + 1] = -1;
            }
        }
        if (row_sums) {
            for (int i = 0; i < cnt; ++i) {
                total = total + det[i];
            }
        }
    };
    for (int j0 = 0; j0 < n; j0 += B) {
        const int cnt = n - j0 < B ? n - j0 : B;
        if (cnt > B / 2) {
            block(j0, cnt, rx_full{});
        } else if (echo != 0 || cnt > B / 4) {
            block(j0, cnt, rx_half{});
        } else {
            // noise only, at most B / 4 bins (a side-scan row: 2): bin by bin, the block's setup costs more than
            // its lanes save here
            for (int i = 0; i < cnt; ++i) {
                const unsigned int x = ukey ^ (first + (unsigned int)(j0 + i));
                const unsigned int st = x * 747796405u + 2891336453u;
                const unsigned int w = ((st >> ((st >> 28u) + 4u)) ^ st) * 277803737u;
                const unsigned int h = (w >> 22u) ^ w;
                const int seg = (int)(h >> @SEG_SHIFT@u);
                const float frac = (float)(int)(h & @FRAC_MASK@u) * seg_scale;
                float e;
                if (seg >= @SEGMENTS@ - @EXACT@) {
                    e = wp::log((float)@SEGMENTS@) - wp::log((float)(@SEGMENTS@ - seg) - frac);
                } else {
                    const float a = tab[seg];
                    const float d = tab[seg + 1] - a;
                    const float fd = frac * d;
                    e = a + fd;
                }
                const float rc = reverb * col_reverb[j0 + i];
                const float vr = variance + rc;
                float detected = 0.0f;
                if (noisy) {
                    detected = vr * e;
                }
                const float out = detected * g;
                out_i[j0 + i] = out;
                out_c[j0 + i] = rc * g;
                out_h[j0 + i] = 0;
                out_l[j0 + i] = -1;
                if (row_sums) {
                    total = total + out;
                }
            }
        }
    }
    if (echo != 0) {
        for (int s = 0; s < 2 * n; ++s) {
            fin[s] = 0.0f;
        }
        for (int s = 0; s < n; ++s) {
            pin[s] = 0.0f;
        }
    }
#undef RX_VECTORISE
    return total;
"""
for _name, _value in (("@BLOCK@", RECEIVER_BLOCK), ("@HALF_CAP@", RECEIVER_HALF_CAP),
                      ("@SEG_SHIFT@", 32 - int(EXP_TABLE_BITS)), ("@SEGMENTS@", 1 << int(EXP_TABLE_BITS)),
                      ("@EXACT@", int(EXP_EXACT_SEGMENTS)), ("@FRAC_MASK@", (1 << (32 - int(EXP_TABLE_BITS))) - 1),
                      ("@PHASOR_SHIFT@", 32 - int(PHASOR_BITS)), ("@TAP_LANES@", TAP_LANES)):
    _RECEIVER_ROW = _RECEIVER_ROW.replace(_name, str(_value))


@wp.func_native(_RECEIVER_ROW)
def receiver_row(field_in: wp.array3d(dtype=wp.vec2), power_in: wp.array3d(dtype=wp.float32),
                 hit_label: wp.array3d(dtype=wp.vec2i), taps: wp.array3d(dtype=wp.float32),
                 tap_spans: wp.array(dtype=wp.vec2i), column_reverb: wp.array(dtype=wp.float32), exp_table: wp.array(dtype=wp.float32), phasors: wp.array(dtype=wp.vec2),
                 intensity: wp.array3d(dtype=wp.float32),
                 clean: wp.array3d(dtype=wp.float32), hits: wp.array3d(dtype=wp.int32),
                 labels: wp.array3d(dtype=wp.int32), b: int, r: int, n_channels: int, echo: int,
                 key: int, variance: float, reverb: float, g: float, row_sums: int) -> float:
    """Row r of frame b of :func:`bearing_receiver_kernel` (``echo``: the row's row_echo flag; ``key``: the frame's
    noise stream key; V = ``variance``, the receiver noise; R(r) = ``reverb``, G(r) = ``g``): writes the row's four outputs (contiguous
    along the row) and sets its scratch back to rest; returns the row's intensity summed in bin order if
    ``row_sums`` is 1, else 0.
    The draws are those of :func:`bin_state` and :func:`unit_exponential` (the same operations in the same order;
    tests/test_acoustic_chain_scratch.py compares them), computed RECEIVER_BLOCK bins at a time in branch-free steps
    (native code: Warp's generated code is scalar)."""
    ...


@wp.kernel
def bearing_receiver_kernel(field_in: wp.array3d(dtype=wp.vec2), power_in: wp.array3d(dtype=wp.float32),
                            hit_label: wp.array3d(dtype=wp.vec2i), taps: wp.array3d(dtype=wp.float32),
                            tap_spans: wp.array(dtype=wp.vec2i), column_reverb: wp.array(dtype=wp.float32),
                            n_range: int,
                            n_channels: int, row_noise: wp.array(dtype=wp.float32),
                            row_reverb: wp.array(dtype=wp.float32), seed: int, frame_index: int, sensor_id: int,
                            exp_table: wp.array(dtype=wp.float32), phasors: wp.array(dtype=wp.vec2),
                            row_gain: wp.array(dtype=wp.float32),
                            row_echo: wp.array2d(dtype=wp.int32), intensity: wp.array3d(dtype=wp.float32),
                            clean: wp.array3d(dtype=wp.float32), hits: wp.array3d(dtype=wp.int32),
                            labels: wp.array3d(dtype=wp.int32), row_sum: wp.array2d(dtype=wp.float32),
                            row_sums: int, row_block: int, block_step: int, start: int):
    """Element (pose b, row r): the bearing point spread and the receiver in one pass over the row's bins j
    (:func:`receiver_row`); writes every bin of the row's four outputs once (no zero-fill needed) and, with
    ``row_sums`` 1, the row's sum of ``intensity`` (in bin order, for the automatic gain; else 0). The four outputs
    must be contiguous along their last axis (a row).

    field_in, power_in: the row-major (B, n_range, >= n_channels) scratch images of :func:`footprint_bin_kernel`
    (rows contiguous); hit_label: its row-major (B, n_range, >= n_channels) (hit count, label) pairs.
    taps[c, t, l] = h_j[t] for output channel j = TAP_LANES c + l (tiles of TAP_LANES channels, c up to the row's
    last block of RECEIVER_BLOCK channels, zero past the row): the bearing kernel of channel j over its sources
    j + t - M, t = 0..2M (beam_pattern.bearing_kernels; one tap h = 1 for none); tap_spans[c] = (t_lo, t_hi): every
    tap of tile c outside t_lo <= t < t_hi is zero (a steered flat array's central tiles need about half the
    widest channel's taps).
    Point spread across channels (beams): f = sum_t h_j[t] field_in[r, j + t - M], p = sum_t h_j[t]^2
    power_in[r, j + t - M] (channels outside the image contribute nothing), each bin summed over its sources in
    ascending order; a row that :func:`footprint_bin_kernel` did not write
    (``row_echo`` 0) has f = p = 0, hits 0 and label -1 and skips it; a row it wrote has hits and labels from
    hit_label, and field_in, power_in, hit_label and row_echo of the row are set back to rest (0, label -1) after
    reading.
    Receiver: intensity = |f + n|^2 G(r), clean = (p + R) G(r). n is one circular complex Gaussian draw
    (exponential intensity) of variance V = row_noise[r] + R: receiver noise referred to the input (re 1 uPa^2:
    the input noise plus the post-TVG noise over G(r), chain.row_noise_intensity, per row on the host) plus the volume
    reverberation R = row_reverb[r] column_reverb[j] (its sonar-equation mean per sample through the point spread:
    per row on the host for a broadside beam, times the beam's equivalent width relative to broadside;
    ``column_reverb`` padded like the taps). Every bin draws from its own counter-based state h = :func:`bin_state` (key, r n_channels + j), key
    the stream key of (seed, frame_index + b, sensor_id, STREAM_NOISE), so a bin's draw does not depend on any
    other bin: where f = 0, |n|^2 = V E with E = :func:`unit_exponential` (h, ``exp_table``); elsewhere n is drawn
    in polar form, |n|^2 = V E (the squared modulus of a circular Gaussian is exponential) and a uniform phase
    independent of it, ``phasors``[top PHASOR_BITS bits of pcg(h)] (steps of 2 pi / 2^PHASOR_BITS, 0.09 deg): one
    hash, two table reads and a square root, no logarithm or rejection loop. G = row_gain[r]: time-varying and
    fixed gain on intensity, 10^((k log10 r + 2 alpha r + gain) / 10), per row on the host.
    clean is the expected intensity, speckle- and noise-free (echoes and reverberation).

    Element e = b n_range + q handles row r of a permutation that keeps blocks of ``row_block`` rows together
    (contiguous memory) and spreads the blocks: q = row_block k + i (k < n_blocks = n_range // row_block) ->
    r = row_block ((k block_step) mod n_blocks) + i, ``block_step`` coprime with n_blocks; the last
    n_range mod row_block rows stay in place. The rows with echoes, often one band of ranges, so spread over all
    CPU chunks."""
    e = wp.tid() + start
    b = e // n_range
    r = e - b * n_range
    n_blocks = n_range // row_block
    if row_block > 1 and r < n_blocks * row_block:
        k = r // row_block
        r = int((wp.int64(k) * wp.int64(block_step)) % wp.int64(n_blocks)) * row_block + (r - k * row_block)
    reverb = row_reverb[r]
    key = stream_key(seed, frame_index + b, sensor_id, STREAM_NOISE)
    echo = row_echo[b, r]
    row_sum[b, r] = receiver_row(field_in, power_in, hit_label, taps, tap_spans, column_reverb, exp_table, phasors,
                                 intensity,
                                 clean, hits, labels, b, r, n_channels, echo, key,
                                 row_noise[r], reverb, row_gain[r], row_sums)
    if echo != 0:
        row_echo[b, r] = 0


@wp.kernel
def frame_keys_kernel(seed: int, frame_index: int, sensor_id: int, stream: int, keys: wp.array(dtype=wp.int32),
                      start: int):
    """Element b: the stream key of frame ``frame_index + b`` for ``stream``."""
    b = wp.tid() + start
    keys[b] = stream_key(seed, frame_index + b, sensor_id, stream)


@wp.kernel
def frame_mean_kernel(image: wp.array3d(dtype=wp.float32), n_range: int, n_channels: int,
                      mean: wp.array(dtype=wp.float32), start: int):
    """Element b: mean of image b, summed row by row in a fixed order."""
    b = wp.tid() + start
    total = float(0.0)
    for r in range(n_range):
        row = float(0.0)
        for j in range(n_channels):
            row = row + image[b, r, j]
        total = total + row
    mean[b] = total / float(n_range * n_channels)


@wp.kernel
def frame_mean_of_rows_kernel(row_sum: wp.array2d(dtype=wp.float32), n_range: int, n_channels: int,
                              mean: wp.array(dtype=wp.float32), start: int):
    """Element b: mean of image b from its row sums (:func:`bearing_receiver_kernel`), added in row order: the
    value of :func:`frame_mean_kernel` on the image, without reading it again."""
    b = wp.tid() + start
    total = float(0.0)
    for r in range(n_range):
        total = total + row_sum[b, r]
    mean[b] = total / float(n_range * n_channels)


@wp.kernel
def scale_frame_kernel(image: wp.array3d(dtype=wp.float32), clean: wp.array3d(dtype=wp.float32),
                       mean: wp.array(dtype=wp.float32), target: float, n_range: int, n_channels: int, start: int):
    """Element (b, r, j): automatic gain, image and clean scaled by target / mean[b] (unchanged if mean is 0)."""
    e = wp.tid() + start
    ix = bin_indices(e, n_range, n_channels)
    m = mean[ix[0]]
    if m > 0.0:
        s = target / m
        image[ix[0], ix[1], ix[2]] = image[ix[0], ix[1], ix[2]] * s
        clean[ix[0], ix[1], ix[2]] = clean[ix[0], ix[1], ix[2]] * s


@wp.kernel
def normalise_kernel(image: wp.array3d(dtype=wp.float32), clean: wp.array3d(dtype=wp.float32),
                     row_max: wp.array2d(dtype=wp.float32), frame_max: wp.array(dtype=wp.float32), per_row: int,
                     n_range: int, n_channels: int, start: int):
    """Element (b, r, j): divide image and clean by the row maximum (``per_row`` 1) or the frame maximum of the
    image (from ``sonar_row_max_kernel`` / ``sonar_frame_max_kernel``); unchanged where that maximum is 0."""
    e = wp.tid() + start
    ix = bin_indices(e, n_range, n_channels)
    m = frame_max[ix[0]]
    if per_row == 1:
        m = row_max[ix[0], ix[1]]
    if m > 0.0:
        image[ix[0], ix[1], ix[2]] = image[ix[0], ix[1], ix[2]] / m
        clean[ix[0], ix[1], ix[2]] = clean[ix[0], ix[1], ix[2]] / m
