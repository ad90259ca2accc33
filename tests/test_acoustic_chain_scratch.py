"""The device chain's fast per-bin path (sensors/acoustic/chain.py, kernels/acoustic_chain.py): the receiver's
table-interpolated exponential draw against the logarithm and the exponential law, scratch images that return to
rest between renders (no zero-fill), the row permutation of the receiver launch, and bytes that do not depend on
the thread count or the batch size."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from conftest import make_scene, quad
from oceansim_py.kernels import acoustic_chain as kc
from oceansim_py.kernels.random import pcg_hash
from oceansim_py.runtime import set_cpu_threads
from oceansim_py.runtime import CHUNKS_PER_THREAD, chunk_bounds
from oceansim_py.sensors.acoustic.chain import (exponential_table, receiver_chunk, receiver_tables, row_order,
                                               scatterer_phasor_table)
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig


@wp.kernel
def _exponential_of_words(words: wp.array(dtype=wp.uint32), table: wp.array(dtype=wp.float32),
                          out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = kc.unit_exponential(words[i], table)


@wp.kernel
def _hashed_words(out: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    out[i] = pcg_hash(wp.uint32(i))


def exponential_of(words: np.ndarray) -> np.ndarray:
    table = wp.array(exponential_table(int(kc.EXP_TABLE_BITS)), dtype=wp.float32, device="cpu")
    w = wp.array(words.astype(np.uint32), dtype=wp.uint32, device="cpu")
    out = wp.empty(words.size, dtype=wp.float32, device="cpu")
    wp.launch(_exponential_of_words, words.size, [w, table, out], device="cpu")
    return out.numpy().astype(np.float64)


def test_table_exponential_at_hand_computed_words():
    # u = h / 2^32: h = 0 -> 0; h = 2^31 (u = 1/2, a table node) -> ln 2; h = 3 * 2^30 (u = 3/4) -> ln 4;
    # h = 2^32 - 1 (exact tail) -> -ln(2^-32) = 32 ln 2.
    words = np.array([0, 2**31, 3 * 2**30, 2**32 - 1], dtype=np.uint64)
    assert exponential_of(words) == pytest.approx([0.0, math.log(2.0), math.log(4.0), 32 * math.log(2.0)],
                                                  rel=1e-6, abs=1e-7)


def test_table_exponential_follows_the_logarithm_and_the_exponential_law():
    n = 1 << 20
    words = wp.empty(n, dtype=wp.uint32, device="cpu")
    wp.launch(_hashed_words, n, [words], device="cpu")
    h = words.numpy().astype(np.uint64)
    e = exponential_of(h)
    exact = -np.log1p(-h.astype(np.float64) / 2.0**32)
    # chord error of the linear interpolation in the m-th segment from the end (1 - u in ((m - 1) / N, m / N],
    # N = 2^EXP_TABLE_BITS): at most h^2 max|E''| / 8 = 1 / (8 (m - 1)^2); the last EXP_EXACT_SEGMENTS are exact
    m = (1 << int(kc.EXP_TABLE_BITS)) - (h >> np.uint64(32 - int(kc.EXP_TABLE_BITS))).astype(np.float64)
    exact_tail = m <= int(kc.EXP_EXACT_SEGMENTS)
    assert np.all(np.abs(e - exact)[exact_tail] <= 2e-6 * exact[exact_tail])
    interpolated = ~exact_tail
    bound = 1.0 / (8.0 * (m[interpolated] - 1.0) ** 2) + 2e-6 * (1.0 + exact[interpolated])
    assert np.all(np.abs(e - exact)[interpolated] <= bound)
    assert e.mean() == pytest.approx(1.0, abs=3.0 / math.sqrt(n))
    x = np.sort(e)
    cdf = 1.0 - np.exp(-x)
    d = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert d < 1.36 / math.sqrt(n)   # Kolmogorov-Smirnov, 5 % level


@pytest.mark.parametrize("n_range", [1, 2, 3, 8, 47, 48, 745, 1024, 2290, 5725])
def test_receiver_row_permutation_visits_every_row_once(n_range):
    block, step = row_order(n_range, 512)
    n_blocks = n_range // block
    rows = [block * ((q // block * step) % n_blocks) + q % block if q < n_blocks * block else q
            for q in range(n_range)]
    assert sorted(rows) == list(range(n_range))
    if n_range >= 1024:
        assert block == 16 and rows[:2] == [0, 1] and rows[16] == 16 * step    # blocks of 16 rows, spread
    assert row_order(n_range, 2) == (1, 1)



@pytest.mark.parametrize("n_rows, n_channels, threads, chunks", [
    (1024, 512, 2, 2),     # Oculus M750d: one chunk of 512 rows per thread
    (1025, 512, 2, 2),     # a remainder row does not make a third chunk
    (3 * 1024, 512, 2, 2),  # a batch of 3 frames: still one chunk per thread
    (2300, 48, 3, 3),
    (400, 512, 1, 1),
    (4096, 2, 2, 1),       # side-scan: 8192 bins, less than BINS_PER_CHUNK (16384): one chunk
    (5725, 172, 2, 2),
])
def test_receiver_launch_makes_one_chunk_per_thread_of_at_least_bins_per_chunk_bins(n_rows, n_channels, threads,
                                                                                     chunks):
    # launch_1d splits n rows into min(CHUNKS_PER_THREAD threads, n // min_chunk) chunks
    min_chunk = receiver_chunk(n_rows, n_channels, threads)
    parts = 1 if threads == 1 else min(CHUNKS_PER_THREAD * threads, n_rows // min_chunk)
    assert len(chunk_bounds(n_rows, parts)) == chunks

#: A small fan with every stage of the chain on (range and bearing point spread, noise, reverberation, TVG).
CHAIN = dict(model="device", multiplicative_sigma=0.0, additive_sigma=0.0, normalisation="none",
             source_level=200.0, noise_level=60.0, volume_scattering=-70.0, bandwidth=25000.0, beam_width=1.2,
             tvg="30log", horizontal_fov=40.0, vertical_fov=20.0, n_beams=48, rays_per_beam=2, elevation_rays=16,
             min_range=1.0, max_range=12.0, range_bins=160)


def pitched(deg: float, position=(0.0, 0.0, 0.0)) -> np.ndarray:
    t = math.radians(deg)
    return np.array([*position, 0.0, math.sin(t / 2), 0.0, math.cos(t / 2)])


@pytest.fixture(scope="module")
def scenes():
    floor = make_scene(("floor", quad([10.0, 0.0, -2.0], [0.0, 0.0, 1.0], 80.0), 0.01))
    empty = make_scene(("far", quad([-50.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1), 0.5))
    return floor, empty


def render(sonar, scene, poses, frame_index=0):
    return sonar.render(scene, poses, frame_index=frame_index).numpy()


def test_scratch_returns_to_rest_between_renders(scenes):
    floor, empty = scenes
    cfg = ImagingSonarConfig(**CHAIN)
    used = ImagingSonar(cfg, device="cpu")
    first = render(used, floor, pitched(25.0))
    assert (first["hit_count"] > 0).any()
    # after a frame full of echoes, empty water renders as on a sensor that never saw one
    after = render(used, empty, pitched(0.0))
    fresh = render(ImagingSonar(cfg, device="cpu"), empty, pitched(0.0))
    for key in ("intensity", "clean_intensity", "hit_count", "label_id"):
        np.testing.assert_array_equal(after[key], fresh[key])
    assert (after["hit_count"] == 0).all() and (after["label_id"] == -1).all()
    # and the floor again gives the first frame's bytes
    again = render(used, floor, pitched(25.0))
    for key in ("intensity", "clean_intensity", "hit_count", "label_id"):
        np.testing.assert_array_equal(again[key], first[key])


def test_device_chain_bytes_do_not_depend_on_threads_or_batch(scenes):
    floor, _ = scenes
    cfg = ImagingSonarConfig(**CHAIN)
    poses = np.stack([pitched(20.0 + 4.0 * b, (0.1 * b, 0.0, 0.0)) for b in range(3)])
    runs = []
    try:
        for threads in (1, 2):
            set_cpu_threads(threads)
            runs.append(render(ImagingSonar(cfg, device="cpu"), floor, poses, frame_index=5))
        sonar = ImagingSonar(cfg, device="cpu")
        single = [render(sonar, floor, poses[b], frame_index=5 + b) for b in range(3)]
    finally:
        set_cpu_threads(None)
    assert (runs[0]["hit_count"] > 0).any()
    for key in ("intensity", "clean_intensity", "hit_count", "label_id"):
        np.testing.assert_array_equal(runs[0][key], runs[1][key])
        np.testing.assert_array_equal(runs[0][key], np.concatenate([s[key] for s in single]))


def test_scratch_returns_to_rest_after_mixed_multipath_arrivals():
    # A floor and a side wall: bounces off the wall bring mixed-path arrivals into other beams (the cross-channel
    # pass of kernels/multipath.py), which must leave the scratch at rest like the binning does.
    room = make_scene(("floor", quad([10.0, 0.0, -3.0], [0.0, 0.0, 1.0], 80.0), 0.05),
                      ("wall", quad([10.0, 2.5, -1.0], [0.0, -1.0, 0.0], 80.0), 0.3))
    empty = make_scene(("far", quad([-50.0, 0.0, 0.0], [1.0, 0.0, 0.0], 0.1), 0.5))
    cfg = ImagingSonarConfig(**CHAIN, multipath_bounces=1)
    used = ImagingSonar(cfg, device="cpu")
    pose = pitched(15.0, (0.0, 0.0, -1.0))
    first = render(used, room, pose)
    same_path = render(ImagingSonar(ImagingSonarConfig(**CHAIN, multipath_bounces=1, multipath_mixed_paths=False),
                                    device="cpu"), room, pose)
    assert not np.array_equal(first["clean_intensity"], same_path["clean_intensity"])  # mixed arrivals rendered
    after = render(used, empty, pitched(0.0, (0.0, 0.0, -1.0)))
    fresh = render(ImagingSonar(cfg, device="cpu"), empty, pitched(0.0, (0.0, 0.0, -1.0)))
    for key in ("intensity", "clean_intensity", "hit_count", "label_id"):
        np.testing.assert_array_equal(after[key], fresh[key])
    again = render(used, room, pose)
    for key in ("intensity", "clean_intensity", "hit_count", "label_id"):
        np.testing.assert_array_equal(again[key], first[key])


def _arrays(result) -> dict:
    return {k: v for k, v in result.numpy().items() if isinstance(v, np.ndarray)}


@pytest.mark.parametrize("kind", ["imaging_sonar", "sidescan", "profiling"])
def test_fused_echo_binning_gives_the_bytes_of_the_per_ray_echo_kernel(scenes, kind):
    # On CPU without multipath the chain computes each ray's echo where it bins it (device_fan_bin_kernel /
    # device_table_bin_kernel); CUDA and multipath run the per-ray echo kernel first, then footprint_bin_kernel.
    # Both must give the same bytes (the profiler's detection also reads the per-ray echoes).
    from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
    from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig

    floor, _ = scenes
    if kind == "imaging_sonar":
        make, poses = (lambda: ImagingSonar(ImagingSonarConfig(**CHAIN), device="cpu")), pitched(25.0)
    elif kind == "sidescan":
        make = lambda: SidescanSonar(SidescanSonarConfig.preset(  # noqa: E731
            "edgetech_4125_900khz", max_range=15.0, range_bins=200, across_track_rays=256), device="cpu")
        poses = pitched(0.0)
    else:
        make = lambda: ProfilingSonar(ProfilingSonarConfig.preset("em2040_600khz", image=True),  # noqa: E731
                                      device="cpu")
        poses = pitched(60.0)
    fused, split = make(), make()
    assert fused._chain._fused and fused._chain.settings.multipath.bounces == 0
    split._chain._fused = False
    a = _arrays(fused.render(floor, np.stack([poses, poses]), 3))
    b = _arrays(split.render(floor, np.stack([poses, poses]), 3))
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


@wp.kernel
def _echo_phase_of(distance: wp.array(dtype=wp.float32), point: wp.array(dtype=wp.vec3), wavelength: float,
                   grid: float, key: int, out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = kc.echo_phase(distance[i], wavelength, point[i], grid, key)


def _pcg(x: int) -> int:
    state = (x * 747796405 + 2891336453) & 0xFFFFFFFF
    word = (((state >> ((state >> 28) + 4)) ^ state) * 277803737) & 0xFFFFFFFF
    return ((word >> 22) ^ word) & 0xFFFFFFFF


def test_echo_phase_code_at_hand_computed_paths():
    # code = c + 4096 s: c = (floor(frac(2 r / lambda) 4096) + top 12 bits of the scatterer hash) mod 4096,
    # s = bits 8..19 of the hash; the hash of the point quantised to the grid, as written out here
    # powers of two: 2 r / lambda and p / grid exact in float32
    wavelength, grid, key = 2.0**-9, 2.0**-11, 12345
    r = np.array([41 * 2.0**-11, 15 * 2.0**-11, 1000 * 2.0**-10], dtype=np.float32)  # 2r/lambda = 20.5, 7.5, 1000
    p = np.array([[0.00126, -0.0031, 2.0], [1.0, 2.0, -3.0], [-0.7, 0.0, 0.00049]], dtype=np.float32)
    out = wp.empty(3, dtype=wp.float32, device="cpu")
    wp.launch(_echo_phase_of, 3, [wp.array(r, device="cpu"), wp.array(p, dtype=wp.vec3, device="cpu"), wavelength,
                                  grid, key, out], device="cpu")
    carrier = [2048, 2048, 0]   # frac(20.5) = frac(7.5) = 0.5 -> 2048; frac(1000) = 0
    for code, q, n_carrier in zip(out.numpy(), p, carrier):
        i = [int(math.floor(float(v) / grid)) & 0xFFFFFFFF for v in q]
        h = _pcg((key ^ i[0]) & 0xFFFFFFFF)
        h = _pcg(h ^ ((i[1] * 0x9E3779B9) & 0xFFFFFFFF))
        h = _pcg(h ^ ((i[2] * 0x85EBCA6B) & 0xFFFFFFFF))
        expected = ((n_carrier + (h >> 20)) & 4095) + (((h >> 8) & 4095) << 12)
        assert int(code) == expected and float(code) == code


@wp.kernel
def _native_binning(intensity: wp.array(dtype=wp.float32), rng: wp.array(dtype=wp.vec3),
                    cell: wp.array(dtype=wp.int32), label: wp.array(dtype=wp.int32), per_channel: int,
                    min_range: float, dr: float, n_range: int, field: wp.array3d(dtype=wp.vec2),
                    power: wp.array3d(dtype=wp.float32), hits: wp.array3d(dtype=wp.int32),
                    labels: wp.array3d(dtype=wp.int32), peak: wp.array3d(dtype=wp.float32),
                    phasors: wp.array(dtype=wp.vec2), span: wp.array(dtype=wp.vec2i)):
    j = wp.tid()
    span[j] = kc.bin_stored_echoes(j * per_channel, per_channel, 0, j, min_range, dr, n_range, intensity, rng, cell,
                                   label, field, power, hits, labels, peak, phasors, wp.vec2i(n_range, -1))


@wp.kernel
def _helper_binning(intensity: wp.array(dtype=wp.float32), rng: wp.array(dtype=wp.vec3),
                    cell: wp.array(dtype=wp.int32), label: wp.array(dtype=wp.int32), per_channel: int,
                    min_range: float, dr: float, n_range: int, field: wp.array3d(dtype=wp.vec2),
                    power: wp.array3d(dtype=wp.float32), hits: wp.array3d(dtype=wp.int32),
                    labels: wp.array3d(dtype=wp.int32), peak: wp.array3d(dtype=wp.float32),
                    phasors: wp.array(dtype=wp.vec2), span: wp.array(dtype=wp.vec2i)):
    # the binning as bin_stored_echoes documents it, from the Warp helpers multipath also bins with
    j = wp.tid()
    lo = n_range
    hi = int(-1)
    for i in range(j * per_channel, (j + 1) * per_channel):
        c = cell[i]
        if c >= 0:
            rr = rng[i]
            lo = wp.min(lo, c)
            hi = wp.max(hi, c)
            hits[0, j, c] = hits[0, j, c] + 1
            bins = kc.footprint_bins(rr, c, min_range, dr, n_range)
            own = kc.echo_phasor(rr[2], phasors)
            inv = kc.footprint_inverse(rr)
            for kk in range(bins[0], bins[1] + 1):
                w = kc.footprint_weight(rr, kk, inv, min_range, dr)
                if w > 0.0:
                    piece = intensity[i] * w
                    amplitude = wp.sqrt(piece) * kc.piece_amplitude(rr, c, kk, phasors)
                    field[0, j, kk] = field[0, j, kk] + amplitude * kc.piece_phasor(rr, c, kk, own, phasors)
                    power[0, j, kk] = power[0, j, kk] + piece
                    lo = wp.min(lo, kk)
                    hi = wp.max(hi, kk)
                    if labels[0, j, kk] < 0 or piece > peak[0, j, kk]:
                        peak[0, j, kk] = piece
                        labels[0, j, kk] = label[i]
    span[j] = wp.vec2i(lo, hi)


def _binned_both_ways(n_ch: int, per: int, n_range: int, max_extent_bins: float, seed: int) -> list:
    """Random echoes (some outside the window, some without footprint extent, extents up to ``max_extent_bins``
    bins, some of zero intensity, phase codes up to 2^24) binned into ``n_ch`` channels of ``n_range`` range bins
    by the native bin_stored_echoes and by the Warp helpers: [native, helpers] lists of (field, power, hits, labels,
    span)."""
    rng = np.random.default_rng(seed)
    min_range, dr = 0.5, 0.03
    n = n_ch * per
    r = rng.uniform(min_range, min_range + n_range * dr, n)
    extent = np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0.0, max_extent_bins * dr, n))
    code = rng.integers(0, 2**24, n).astype(np.float32)
    cell = np.where(rng.random(n) < 0.1, -1, np.minimum(np.floor((r - min_range) / dr), n_range - 1)).astype(np.int32)
    intensity = np.where(rng.random(n) < 0.05, 0.0, rng.exponential(1.0, n)).astype(np.float32)
    inputs = [wp.array(intensity, device="cpu"),
              wp.array(np.stack([r, extent, code], 1).astype(np.float32), dtype=wp.vec3, device="cpu"),
              wp.array(cell, device="cpu"), wp.array(rng.integers(0, 5, n).astype(np.int32), device="cpu"),
              per, min_range, dr, n_range]
    phasors = wp.array(scatterer_phasor_table(int(kc.PHASOR_BITS)), dtype=wp.vec2, device="cpu")
    results = []
    for kernel in (_native_binning, _helper_binning):
        shape = (1, n_ch, n_range)
        out = [wp.zeros(shape, dtype=wp.vec2, device="cpu"), wp.zeros(shape, dtype=wp.float32, device="cpu"),
               wp.zeros(shape, dtype=wp.int32, device="cpu"), wp.full(shape, -1, dtype=wp.int32, device="cpu"),
               wp.zeros(shape, dtype=wp.float32, device="cpu")]
        span = wp.empty(n_ch, dtype=wp.vec2i, device="cpu")
        wp.launch(kernel, n_ch, [*inputs, *out, phasors, span], device="cpu")
        results.append([a.numpy() for a in (*out[:4], span)])
    return results


def test_native_binning_gives_the_values_of_the_footprint_helpers():
    # random echoes (some outside the window, some without footprint extent, extents up to 12 bins, phase codes up
    # to 2^24) binned into 6 channels of 90 range bins by the native bin_stored_echoes and by the Warp helpers
    results = _binned_both_ways(6, 64, 90, 12.0, 4)
    assert (results[0][2] > 0).sum() > 200 and (results[0][3] >= 0).sum() > 300
    for native, helpers in zip(*results):
        np.testing.assert_array_equal(native, helpers)


@pytest.mark.parametrize("n_range, max_extent_bins", [(5, 12.0), (8, 12.0), (90, 40.0), (90, 3.0), (2, 3.0)])
def test_native_binning_paths_give_the_values_of_the_footprint_helpers(n_range, max_extent_bins):
    # The native binning's CPU paths: blocks of BIN_ECHOES echoes (70 per channel: a partial block), a footprint's
    # first BIN_FIRST pieces computed with its block, its further ones in windows of BIN_LANES bins (several per
    # footprint up to 40 bins; lanes past the footprint or the column computed and not used); blocks of wide
    # footprints (40 bins: BIN_WIDE or more per echo) added a window at a time, of narrow ones (3 bins) one piece at
    # a time; short columns (windows past the column's end).
    results = _binned_both_ways(5, 70, n_range, max_extent_bins, n_range)
    assert (results[1][2] > 0).sum() >= min(n_range * 5, 100)
    assert n_range < 80 or (results[1][4][:, 1] - results[1][4][:, 0] > kc.BIN_FIRST + 2 * kc.BIN_LANES).all()
    for native, helpers in zip(*results):
        np.testing.assert_array_equal(native, helpers)


@wp.kernel
def _native_spread(span: wp.array(dtype=wp.vec2i), n_range: int, taps: wp.array(dtype=wp.float32),
                   pre_field: wp.array3d(dtype=wp.vec2), pre_power: wp.array3d(dtype=wp.float32),
                   field: wp.array3d(dtype=wp.vec2), power: wp.array3d(dtype=wp.float32),
                   row_echo: wp.array2d(dtype=wp.int32), pre_hits: wp.array3d(dtype=wp.int32),
                   pre_labels: wp.array3d(dtype=wp.int32), hit_label: wp.array3d(dtype=wp.vec2i)):
    j = wp.tid()
    kc.range_spread(0, j, span[j], n_range, taps, pre_field, pre_power, field, power, row_echo, pre_hits, pre_labels,
                    hit_label)


@wp.kernel
def _warp_spread(span: wp.array(dtype=wp.vec2i), n_range: int, taps: wp.array(dtype=wp.float32),
                 pre_field: wp.array3d(dtype=wp.vec2), pre_power: wp.array3d(dtype=wp.float32),
                 field: wp.array3d(dtype=wp.vec2), power: wp.array3d(dtype=wp.float32),
                 row_echo: wp.array2d(dtype=wp.int32), pre_hits: wp.array3d(dtype=wp.int32),
                 pre_labels: wp.array3d(dtype=wp.int32), hit_label: wp.array3d(dtype=wp.vec2i)):
    # the range pass as range_spread documents it: rows lo - M .. hi + M, sources max(row - M, lo) .. min(row + M,
    # hi) in ascending order, the rows' hit counts and labels copied, then the channel's rows lo .. hi set back to
    # rest
    j = wp.tid()
    lo = span[j][0]
    hi = span[j][1]
    if hi >= 0:
        half = (taps.shape[0] - 1) // 2
        for row in range(wp.max(lo - half, 0), wp.min(hi + half, n_range - 1) + 1):
            f = wp.vec2(0.0, 0.0)
            p = float(0.0)
            for src in range(wp.max(row - half, lo), wp.min(row + half, hi) + 1):
                h = taps[src - row + half]
                f = f + h * pre_field[0, j, src]
                p = p + h * h * pre_power[0, j, src]
            field[0, row, j] = f
            power[0, row, j] = p
            hit_label[0, row, j] = wp.vec2i(pre_hits[0, j, row], pre_labels[0, j, row])
            row_echo[0, row] = 1
        for row in range(lo, hi + 1):
            pre_field[0, j, row] = wp.vec2(0.0, 0.0)
            pre_power[0, j, row] = 0.0
            pre_hits[0, j, row] = 0
            pre_labels[0, j, row] = -1


@pytest.mark.parametrize("n_taps", [1, 3, 7, 2 * kc.SPREAD_HALF_CAP + 1, 2 * kc.SPREAD_HALF_CAP + 3])
@pytest.mark.parametrize("n_range", [3, 90])
def test_native_range_spread_gives_the_sums_of_the_warp_loop(n_taps, n_range):
    # Channels whose echoes reached rows lo .. hi (none; one row at either end; a few; all), taps of both signs
    # (the native blocks' window is zero outside lo .. hi, blocks inside it read the column; kernels past
    # 2 SPREAD_HALF_CAP + 1 taps check each source's bounds), the scratch outside lo .. hi holding NaN: it must be read by neither, and the rows written,
    # the hit counts and labels copied, the flags and the scratch set back to rest must be the same bytes.
    rng = np.random.default_rng(n_taps * 100 + n_range)
    spans = [(n_range, -1), (0, 0), (n_range - 1, n_range - 1), (0, n_range - 1),
             (n_range // 3, (2 * n_range) // 3), (1, min(n_range - 1, 1 + n_taps))]
    n_ch, stride = len(spans), n_range + 5
    pre_f = np.full((1, n_ch, stride, 2), np.nan, np.float32)
    pre_p = np.full((1, n_ch, stride), np.nan, np.float32)
    pre_h = np.zeros((1, n_ch, stride), np.int32)     # rest outside lo .. hi
    pre_l = np.full((1, n_ch, stride), -1, np.int32)
    for j, (lo, hi) in enumerate(spans):
        pre_f[0, j, lo:hi + 1] = rng.normal(0.0, 1.0, (max(hi + 1 - lo, 0), 2))
        pre_p[0, j, lo:hi + 1] = rng.exponential(1.0, max(hi + 1 - lo, 0))
        pre_h[0, j, lo:hi + 1] = rng.integers(0, 4, max(hi + 1 - lo, 0))
        pre_l[0, j, lo:hi + 1] = rng.integers(-1, 9, max(hi + 1 - lo, 0))
    taps = wp.array(rng.normal(0.0, 1.0, n_taps).astype(np.float32), device="cpu")
    results = []
    for kernel in (_native_spread, _warp_spread):
        scratch = [wp.array(pre_f[:, :, :n_range], dtype=wp.vec2, device="cpu"),
                   wp.array(pre_p[:, :, :n_range], device="cpu")]
        images = [wp.full((1, n_range, n_ch + 3), wp.vec2(-7.0, -7.0), dtype=wp.vec2, device="cpu"),
                  wp.full((1, n_range, n_ch + 3), -7.0, dtype=wp.float32, device="cpu"),
                  wp.zeros((1, n_range), dtype=wp.int32, device="cpu")]
        counts = [wp.array(pre_h[:, :, :n_range], dtype=wp.int32, device="cpu"),
                  wp.array(pre_l[:, :, :n_range], dtype=wp.int32, device="cpu"),
                  wp.full((1, n_range, n_ch + 3), wp.vec2i(-7, -7), dtype=wp.vec2i, device="cpu")]
        wp.launch(kernel, n_ch, [wp.array(np.array(spans, np.int32), dtype=wp.vec2i, device="cpu"), n_range, taps,
                                 *scratch, *images, *counts], device="cpu")
        results.append([a.numpy() for a in (*scratch, *images, *counts)])
    native, reference = results
    assert np.isfinite(reference[2]).all() and (reference[2] != -7.0).any() and reference[4].any()
    assert (reference[7][..., 0] > 0).any() and (reference[7][..., 1] >= 0).any()
    for a, b in zip(native, reference):
        np.testing.assert_array_equal(a, b)


@wp.kernel
def _noise_draws(key: int, n_bins: int, table: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    e = wp.tid()
    out[e] = kc.unit_exponential(kc.bin_state(key, e), table)


def test_native_receiver_noise_is_the_draw_of_bin_state_and_unit_exponential(scenes):
    # empty water: every bin is V E G with E = unit_exponential(bin_state(key, r n_channels + j)), V = noise +
    # reverberation of the row times the beam's factor (a steered flat array's equivalent width relative to
    # broadside, sum h_j^2 / sum h^2: E(theta_j)^2 / cos theta_j = 0.966878 to first order, 0.964755 from the 1.2 deg
    # beam's taps sampled 0.833 deg apart) and G its gain, bit for bit (float32 products in that order)
    from oceansim_py.sensors.acoustic.chain import _host_key

    _, empty = scenes
    sonar = ImagingSonar(ImagingSonarConfig(**CHAIN), device="cpu")
    frame = 7
    image = sonar.render(empty, pitched(0.0), frame_index=frame).numpy()["intensity"][0]
    chain = sonar._chain
    n_range, n_ch = image.shape
    key = _host_key(chain.settings.seed, frame, chain.sensor_id, int(kc.STREAM_NOISE))
    draws = wp.empty(n_range * n_ch, dtype=wp.float32, device="cpu")
    wp.launch(_noise_draws, n_range * n_ch, [key, n_range * n_ch, chain._exp_table, draws], device="cpu")
    e = draws.numpy().reshape(n_range, n_ch)
    noise = np.float32(10.0 ** (chain.settings.noise_level_db / 10.0))
    np.testing.assert_array_equal(chain._row_noise.numpy(), np.full(n_range, noise))   # no post-TVG noise
    column = chain._column_reverb.numpy()[:n_ch]
    theta0 = math.radians(-19.5833333)   # beam 0 of 48 over 40 deg; half-wavelength elements by default
    assert column[0] == pytest.approx(np.sinc(0.5 * math.sin(theta0)) ** 2 / math.cos(theta0), rel=3e-3)
    assert column[0] == pytest.approx(0.964755, rel=1e-6)
    variance = noise + chain._row_reverb.numpy()[:, None] * column[None, :]
    expected = (variance * e) * chain._row_gain.numpy()[:, None]
    assert expected.dtype == np.float32 and np.all(expected > 0)
    np.testing.assert_array_equal(image, expected)


@wp.kernel
def _warp_phase_of_echoes(ray_range: wp.array(dtype=wp.vec3), ray_bin: wp.array(dtype=wp.int32),
                          directions: wp.array(dtype=wp.vec3), poses: wp.array(dtype=wp.transform),
                          rays_per_pose: int, wavelength: float, grid: float, key: int,
                          out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = -1.0
    if ray_bin[i] >= 0:
        r = ray_range[i][0]
        origin = wp.transform_get_translation(poses[i // rays_per_pose])
        out[i] = kc.echo_phase(r, wavelength, origin + r * directions[i], grid, key)


def test_native_echoes_carry_the_phase_code_of_echo_phase(scenes):
    # the chain's native echo block (fan_echoes) writes the phase code echo_phase (the Warp function multipath's
    # echoes use) gives for the same path and hit point; and its intensities follow the sonar equation's law
    from oceansim_py.sensors.acoustic.chain import _host_key

    floor, _ = scenes
    sonar = ImagingSonar(ImagingSonarConfig(**CHAIN), device="cpu")
    chain = sonar._chain
    kept = {}

    def grab(buf):
        kept.update(range=buf.ray_range.numpy().copy(), bin=buf.ray_bin.numpy().copy(), buf=buf)

    poses = np.stack([pitched(25.0), pitched(30.0, (0.3, 0.1, 0.0))])
    out = [wp.empty((2, 160, 48), dtype=t, device="cpu") for t in (wp.float32, wp.float32, wp.int32, wp.int32)]
    chain.render(floor, poses.astype(np.float32), 0, *out, then=grab)
    buf, s = kept["buf"], chain.settings
    n = kept["bin"].size
    warp_codes = wp.empty(n, dtype=wp.float32, device="cpu")
    key = _host_key(s.seed, 0, chain.sensor_id, int(kc.STREAM_PHASE))
    wp.launch(_warp_phase_of_echoes, n, [buf.ray_range, buf.ray_bin, buf.rays.directions, buf.poses,
                                         chain.layout.rays_per_pose, float(s.wavelength), 0.25 * float(s.wavelength),
                                         key, warp_codes], device="cpu")
    hit = kept["bin"] >= 0
    assert hit.sum() > 1000
    np.testing.assert_array_equal(kept["range"][hit, 2], warp_codes.numpy()[hit])


def _result_of(cfg, arrays):
    from oceansim_py.sensors.imaging_sonar import ImagingSonarResult

    return ImagingSonarResult(*arrays, None, None, [], cfg, 0)


def test_strided_or_misshapen_result_arrays_raise_before_anything_is_written(scenes):
    # The receiver writes each image row through a raw pointer: a transposed view of the right shape used to get a
    # scrambled image with no error, and a clean array smaller than the images was written past its end.
    from oceansim_py.errors import ConfigError

    floor, _ = scenes
    cfg = ImagingSonarConfig(**CHAIN)
    sonar = ImagingSonar(cfg, device="cpu")
    shape = (1, cfg.range_bins, cfg.n_beams)
    good = [wp.zeros(shape, dtype=t, device="cpu") for t in (wp.float32, wp.float32, wp.int32, wp.int32)]
    transposed = wp.zeros((1, cfg.n_beams, cfg.range_bins), dtype=wp.float32, device="cpu").transpose((0, 2, 1))
    assert tuple(transposed.shape) == shape and not transposed.is_contiguous
    with pytest.raises(ConfigError, match="intensity result array must be a contiguous"):
        sonar.render(floor, pitched(25.0), out=_result_of(cfg, [transposed, *good[1:]]))
    short = wp.full((1, 2, cfg.n_beams), 7.0, dtype=wp.float32, device="cpu")
    with pytest.raises(ConfigError, match=r"clean result array .* got shape \(1, 2, 48\)"):
        sonar.render(floor, pitched(25.0), out=_result_of(cfg, [good[0], short, *good[2:]]))
    assert (short.numpy() == 7.0).all() and (good[0].numpy() == 0.0).all()


#: Awkward fans for the native echo, binning and receiver blocks (ECHO_BLOCK 32 rays, RECEIVER_BLOCK 16 bins,
#: RAY_BLOCK 64 rays, bearing kernels up to 65 taps on the fast path): one beam, beams around 16, rays per beam
#: and per pose not multiples of the blocks, one and three range bins, bearing kernels of 1 tap and wider than 65
#: taps (and than the image), long range windows where grazing footprints are capped at MAX_FOOTPRINT_BINS.
AWKWARD = [dict(n_beams=1, rays_per_beam=7, elevation_rays=33), dict(n_beams=15, rays_per_beam=1, elevation_rays=3),
           dict(n_beams=17, rays_per_beam=2, elevation_rays=33), dict(n_beams=33, rays_per_beam=7, elevation_rays=1),
           dict(n_beams=17, rays_per_beam=3, elevation_rays=5, range_bins=1),
           dict(n_beams=5, rays_per_beam=3, elevation_rays=9, range_bins=3, bandwidth=0.0),
           dict(n_beams=17, rays_per_beam=3, elevation_rays=5, beam_width=0.0),
           dict(n_beams=200, rays_per_beam=1, elevation_rays=3, beam_width=12.0),
           dict(n_beams=31, rays_per_beam=1, elevation_rays=3, beam_width=30.0),
           dict(n_beams=19, rays_per_beam=3, elevation_rays=9, range_bins=3001)]


@pytest.mark.parametrize("fan", AWKWARD, ids=lambda f: "-".join(f"{k}{v}" for k, v in f.items()))
def test_awkward_fans_write_only_their_images_and_match_the_per_ray_path(fan):
    # Images rendered into the middle of canary-filled arrays (batch 3 between two canary frames): the native
    # blocks must write every bin of the three frames and nothing around them, with the bytes of the per-ray
    # echo kernel + footprint_bin_kernel path (CUDA's and multipath's).
    floor = make_scene(("floor", quad([10.0, 0.0, -2.0], [0.0, 0.0, 1.0], 80.0), 0.01),
                       ("wall", quad([6.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 3.0), 0.3))
    cfg = ImagingSonarConfig(**{**CHAIN, **fan})
    fused, split = ImagingSonar(cfg, device="cpu"), ImagingSonar(cfg, device="cpu")
    split._chain._fused = False
    poses = np.stack([pitched(3.0 + 30.0 * b, (0.1 * b, 0.0, 0.0)) for b in range(3)])
    canaries = {wp.float32: -12345.5, wp.int32: -777777}
    frames = [wp.full((5, cfg.range_bins, cfg.n_beams), canaries[t], dtype=t, device="cpu")
              for t in (wp.float32, wp.float32, wp.int32, wp.int32)]
    a = fused.render(floor, poses, 3, out=_result_of(cfg, [f[1:4] for f in frames]))
    b = split.render(floor, poses, 3)
    assert a.hit_count.numpy().sum() > 0
    for f, t in zip(frames, (wp.float32, wp.float32, wp.int32, wp.int32)):
        around = f.numpy()[[0, 4]]
        assert (around == canaries[t]).all()
        assert (f.numpy()[1:4] != canaries[t]).all()
    for key in ("intensity", "clean_intensity", "hit_count", "label_id"):
        np.testing.assert_array_equal(getattr(a, key).numpy(), getattr(b, key).numpy(), err_msg=key)


# fan_echoes as CUDA builds it (its `#if defined(__CUDA_ARCH__)` branches taken), compiled for the CPU here so that
# the CUDA code path runs without a GPU
@wp.func_native(kc._echo_snippet(kc._FAN_CELLS).replace("defined(__CUDA_ARCH__)", "1"))
def _fan_echoes_cuda_branch(first: int, count: int, local0: int, directions: wp.array(dtype=wp.vec3),
                            hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                            hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                            object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                            origin: wp.vec3, rotation: wp.quat, bearing_cos_sin: wp.array(dtype=wp.vec2),
                            bearing_cell: float, elevation_table: wp.array(dtype=wp.vec3), elevation_cell: float,
                            n_elev: int, min_range: float, range_resolution: float, n_range: int,
                            alpha_db_per_m: float, source_intensity: float, wavelength: float, phase_grid: float,
                            phase_key: int, ray_intensity: wp.array(dtype=wp.float32),
                            ray_range: wp.array(dtype=wp.vec3), ray_bin: wp.array(dtype=wp.int32),
                            ray_label: wp.array(dtype=wp.int32)) -> int:
    ...


@wp.kernel
def _fan_echo_blocks(cuda_branch: int, rays: int, directions: wp.array(dtype=wp.vec3),
                     hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                     hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                     object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                     bearing_cos_sin: wp.array(dtype=wp.vec2), elevation_table: wp.array(dtype=wp.vec3), n_elev: int,
                     ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                     ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32),
                     done: wp.array(dtype=wp.int32)):
    # blocks of ECHO_BLOCK rays, as device_fan_bin_kernel gives them (the last one partial)
    q = wp.tid()
    t0 = q * kc.ECHO_BLOCK
    count = wp.min(kc.ECHO_BLOCK, rays - t0)
    origin = wp.vec3(0.5, -1.0, 2.0)
    rotation = wp.quat_rpy(0.1, 0.4, -0.2)
    if cuda_branch == 1:
        done[q] = _fan_echoes_cuda_branch(t0, count, t0, directions, hit_distance, hit_normal, hit_face, hit_obj,
                                          object_mu, object_label, origin, rotation, bearing_cos_sin, 0.01,
                                          elevation_table, 0.02, n_elev, 1.0, 0.05, 200, 0.1, 1.0e20, 0.002, 0.0005,
                                          12345, ray_intensity, ray_range, ray_bin, ray_label)
    else:
        done[q] = kc.fan_echoes(t0, count, t0, directions, hit_distance, hit_normal, hit_face, hit_obj, object_mu,
                                object_label, origin, rotation, bearing_cos_sin, 0.01, elevation_table, 0.02, n_elev,
                                1.0, 0.05, 200, 0.1, 1.0e20, 0.002, 0.0005, 12345, ray_intensity, ray_range, ray_bin,
                                ray_label)


def test_cuda_branch_of_the_echo_blocks_computes_every_ray_of_a_block():
    # On CUDA the echo function keeps lane arrays of one ray; it used to clamp the block to its first ray, so a
    # fused echo-and-binning kernel run there (blocks of ECHO_BLOCK rays) left the other 31 rays' echoes unwritten.
    # It now steps through the block one ray at a time: the CPU block's values, for full and partial blocks.
    rng = np.random.default_rng(4)
    n_bearing, n_elev = 9, 7
    rays = n_bearing * n_elev  # 63: one full block and a partial one
    dirs = rng.normal(size=(rays, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    normals = rng.normal(size=(rays, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    face = rng.integers(-1, 5, rays).astype(np.int32)
    elev = rng.uniform(-0.3, 0.3, n_elev)
    bearing = rng.uniform(-0.5, 0.5, n_bearing)
    with wp.ScopedDevice("cpu"):
        inputs = [wp.array(dirs.astype(np.float32), dtype=wp.vec3),
                  wp.array(rng.uniform(0.5, 11.0, rays).astype(np.float32), dtype=wp.float32),
                  wp.array(normals.astype(np.float32), dtype=wp.vec3), wp.array(face, dtype=wp.int32),
                  wp.array(rng.integers(0, 3, rays).astype(np.int32), dtype=wp.int32),
                  wp.array(np.array([0.01, 0.2, 0.5], np.float32), dtype=wp.float32),
                  wp.array(np.array([4, 5, 6], np.int32), dtype=wp.int32),
                  wp.array(np.stack([np.cos(bearing), np.sin(bearing)], 1).astype(np.float32), dtype=wp.vec2),
                  wp.array(np.stack([np.cos(elev), np.sin(elev), rng.uniform(0.5, 1.0, n_elev)], 1).astype(np.float32),
                           dtype=wp.vec3), n_elev]
        results = []
        for branch in (0, 1):
            out = [wp.full(rays, -3.0, dtype=wp.float32), wp.zeros(rays, dtype=wp.vec3),
                   wp.full(rays, -3, dtype=wp.int32), wp.full(rays, -3, dtype=wp.int32), wp.zeros(2, dtype=wp.int32)]
            wp.launch(_fan_echo_blocks, 2, [branch, rays, *inputs, *out])
            results.append([a.numpy() for a in out])
    cpu, cuda = results
    np.testing.assert_array_equal(cpu[4], [32, 31])
    assert (cpu[2] >= 0).sum() > 10 and (cpu[2] == -1).sum() > 5 and (cpu[0] != -3.0).all()
    for a, b, name in zip(cpu, cuda, ("intensity", "range", "bin", "label", "returned count")):
        np.testing.assert_array_equal(b, a, err_msg=name)


@wp.kernel
def _echo_spans(table: int, whole: int, rays: int, directions: wp.array(dtype=wp.vec3),
                hit_distance: wp.array(dtype=wp.float32), hit_normal: wp.array(dtype=wp.vec3),
                hit_face: wp.array(dtype=wp.int32), hit_obj: wp.array(dtype=wp.int32),
                object_mu: wp.array(dtype=wp.float32), object_label: wp.array(dtype=wp.int32),
                bearing_cos_sin: wp.array(dtype=wp.vec2), elevation_table: wp.array(dtype=wp.vec3), n_elev: int,
                edges_a: wp.array(dtype=wp.vec3), edges_b: wp.array(dtype=wp.vec3), weights: wp.array(dtype=wp.float32),
                ray_intensity: wp.array(dtype=wp.float32), ray_range: wp.array(dtype=wp.vec3),
                ray_bin: wp.array(dtype=wp.int32), ray_label: wp.array(dtype=wp.int32),
                done: wp.array(dtype=wp.int32)):
    # whole = 1: element 0 computes every ray in one call (as the fused kernels give a channel); else element t ray t
    t = wp.tid()
    first = t
    count = 1
    if whole == 1:
        first = 0
        count = rays
    origin = wp.vec3(0.5, -1.0, 2.0)
    rotation = wp.quat_rpy(0.1, 0.4, -0.2)
    if table == 1:
        done[t] = kc.table_echoes(first, count, first, directions, hit_distance, hit_normal, hit_face, hit_obj,
                                  object_mu, object_label, origin, rotation, edges_a, edges_b, weights, 1.0, 0.05, 200,
                                  0.1, 1.0e20, 0.002, 0.0005, 12345, ray_intensity, ray_range, ray_bin, ray_label)
    else:
        done[t] = kc.fan_echoes(first, count, first, directions, hit_distance, hit_normal, hit_face, hit_obj,
                                object_mu, object_label, origin, rotation, bearing_cos_sin, 0.01, elevation_table,
                                0.02, n_elev, 1.0, 0.05, 200, 0.1, 1.0e20, 0.002, 0.0005, 12345, ray_intensity,
                                ray_range, ray_bin, ray_label)


@pytest.mark.parametrize("table, n_elev", [(0, 7), (0, 41), (1, 7)])
def test_echo_functions_compute_a_whole_span_in_sub_blocks_with_the_values_of_single_rays(table, n_elev):
    # The fused kernels give fan_echoes / table_echoes a whole channel (here 3 ECHO_BLOCK sub-blocks and a partial
    # one); they compute it ECHO_BLOCK lanes at a time, a fan's sub-block read from one bearing ray's elevation rays
    # when it lies in one (n_elev 41) and stepped through bearing rays when it does not (n_elev 7, 41): the bytes of
    # one call per ray, and the whole count returned.
    rng = np.random.default_rng(7)
    n_bearing = 3 * int(kc.ECHO_BLOCK) // n_elev + 2
    rays = n_bearing * n_elev
    assert rays > 3 * int(kc.ECHO_BLOCK) and rays % int(kc.ECHO_BLOCK) != 0
    dirs = rng.normal(size=(rays, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    normals = rng.normal(size=(rays, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    elev = rng.uniform(-0.3, 0.3, n_elev)
    bearing = rng.uniform(-0.5, 0.5, n_bearing)
    with wp.ScopedDevice("cpu"):
        inputs = [wp.array(dirs.astype(np.float32), dtype=wp.vec3),
                  wp.array(rng.uniform(0.5, 11.0, rays).astype(np.float32), dtype=wp.float32),
                  wp.array(normals.astype(np.float32), dtype=wp.vec3),
                  wp.array(rng.integers(-1, 5, rays).astype(np.int32), dtype=wp.int32),
                  wp.array(rng.integers(0, 3, rays).astype(np.int32), dtype=wp.int32),
                  wp.array(np.array([0.01, 0.2, 0.5], np.float32), dtype=wp.float32),
                  wp.array(np.array([4, 5, 6], np.int32), dtype=wp.int32),
                  wp.array(np.stack([np.cos(bearing), np.sin(bearing)], 1).astype(np.float32), dtype=wp.vec2),
                  wp.array(np.stack([np.cos(elev), np.sin(elev), rng.uniform(0.5, 1.0, n_elev)], 1).astype(np.float32),
                           dtype=wp.vec3), n_elev,
                  wp.array(rng.normal(0.0, 0.01, (rays, 3)).astype(np.float32), dtype=wp.vec3),
                  wp.array(rng.normal(0.0, 0.01, (rays, 3)).astype(np.float32), dtype=wp.vec3),
                  wp.array(rng.uniform(1e-4, 1e-3, rays).astype(np.float32), dtype=wp.float32)]
        results = []
        for whole in (1, 0):
            out = [wp.full(rays, -3.0, dtype=wp.float32), wp.zeros(rays, dtype=wp.vec3),
                   wp.full(rays, -3, dtype=wp.int32), wp.full(rays, -3, dtype=wp.int32),
                   wp.zeros(1 if whole else rays, dtype=wp.int32)]
            wp.launch(_echo_spans, 1 if whole else rays, [table, whole, rays, *inputs, *out])
            results.append([a.numpy() for a in out])
    span, single = results
    assert span[4][0] == rays and (single[4] == 1).all()
    assert (span[2] >= 0).sum() > 20 and (span[2] == -1).sum() > 10 and (span[0] != -3.0).all()
    for a, b, name in zip(span[:4], single[:4], ("intensity", "range", "bin", "label")):
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.parametrize("fov, n_beams, beam_width, steering, taps", [(40.0, 100, 2.1, "constant", 65),
                                                                       (40.0, 100, 2.15, "constant", 67),
                                                                       (40.0, 16, 30.0, "constant", 73),
                                                                       (120.0, 100, 2.1, "flat_array", 33),
                                                                       (120.0, 100, 6.0, "flat_array", 73)])
def test_bearing_point_spread_on_both_sides_of_the_fast_path_cap(fov, n_beams, beam_width, steering, taps):
    # receiver_row copies a block's sources into a zero-padded window for kernels of up to 2 RECEIVER_HALF_CAP + 1
    # = 65 taps and checks each tap's bounds for wider ones (here also wider than the image; the 30 degree beam's
    # kernel stops 90 degrees off its axis, 36 taps of 2.5 degrees). With no range spread,
    # noise or reverberation, the clean image is sum_t h_j[t]^2 P[r, j + t - M] G(r), P G the clean image of the
    # same fan with no bearing spread (beam_width 0): the convolution computed here in float64, with each channel's
    # own kernel (a steered flat array's, over a 120 degree fan: wider towards its edges).
    scene = make_scene(("floor", quad([10.0, 0.0, -2.0], [0.0, 0.0, 1.0], 80.0), 0.01),
                       ("wall", quad([6.0, 0.0, 0.0], [-1.0, 0.0, 0.0], 3.0), 0.3))
    base = dict(CHAIN, noise_level=None, volume_scattering=None, bandwidth=0.0, rays_per_beam=1, elevation_rays=5,
                range_bins=50, n_beams=n_beams, beam_steering=steering, horizontal_fov=fov)
    spread = ImagingSonar(ImagingSonarConfig(**{**base, "beam_width": beam_width}), device="cpu")
    h = spread._chain.bearing_taps.astype(np.float64)
    assert h.shape == (n_beams, taps)
    sharp = ImagingSonar(ImagingSonarConfig(**{**base, "beam_width": 0.0}), device="cpu")
    p = sharp.render(scene, pitched(20.0)).clean_intensity.numpy()[0].astype(np.float64)
    got = spread.render(scene, pitched(20.0)).clean_intensity.numpy()[0]
    half = (taps - 1) // 2
    want = np.zeros_like(p)
    for j in range(n_beams):
        for t in range(taps):
            if 0 <= j + t - half < n_beams:
                want[:, j] += h[j, t] ** 2 * p[:, j + t - half]
    assert (p > 0).sum() > 20
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6 * want.max())


def test_pose_rays_rotate_every_ray_of_every_pose_and_nothing_else():
    """pose_rays_kernel (64 rays per element, native): for 3 poses of 100 rays (not a multiple of the block), each
    ray's origin is its pose's position and its direction the sensor-frame direction rotated by the pose's
    quaternion, to float32 rounding of a float64 rotation computed here; the canary past the last ray is untouched."""
    from oceansim_py.poses import quat_to_matrix
    from oceansim_py.runtime import launch_1d

    rng = np.random.default_rng(11)
    n, batch = 100, 3
    flu = rng.normal(size=(n, 3))
    flu /= np.linalg.norm(flu, axis=1, keepdims=True)
    q = rng.normal(size=(batch, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    poses = np.column_stack([rng.uniform(-50, 50, size=(batch, 3)), q]).astype(np.float32)
    dev = wp.get_device("cpu")
    total = batch * n
    origins = wp.full(total + 1, wp.vec3(-7.0, -7.0, -7.0), dtype=wp.vec3, device=dev)
    directions = wp.full(total + 1, wp.vec3(-7.0, -7.0, -7.0), dtype=wp.vec3, device=dev)
    blocks = -(-n // int(kc.RAY_BLOCK))
    launch_1d(kc.pose_rays_kernel, batch * blocks,
              [wp.array(poses, dtype=wp.transform, device=dev), wp.array(flu.astype(np.float32), dtype=wp.vec3,
                                                                        device=dev), n, origins, directions], dev)
    o, d = origins.numpy(), directions.numpy()
    for b in range(batch):
        rot = quat_to_matrix(poses[b, 3:].astype(np.float64))
        expected = flu.astype(np.float32).astype(np.float64) @ rot.T
        np.testing.assert_allclose(d[b * n:(b + 1) * n], expected, atol=2e-7)
        assert np.array_equal(o[b * n:(b + 1) * n], np.tile(poses[b, :3], (n, 1)))
    assert np.array_equal(d[total], [-7.0, -7.0, -7.0]) and np.array_equal(o[total], [-7.0, -7.0, -7.0])


# receiver_row as CUDA builds it (16-lane blocks, table and phasor reads one lane at a time, no prefetch), compiled
# for the CPU here so that the CUDA code path runs without a GPU
@wp.func_native(kc._RECEIVER_ROW.replace("defined(__CUDA_ARCH__)", "1"))
def _receiver_row_cuda_branch(field_in: wp.array3d(dtype=wp.vec2), power_in: wp.array3d(dtype=wp.float32),
                              hit_label: wp.array3d(dtype=wp.vec2i), taps: wp.array3d(dtype=wp.float32),
                              tap_spans: wp.array(dtype=wp.vec2i), column_reverb: wp.array(dtype=wp.float32),
                              exp_table: wp.array(dtype=wp.float32),
                              phasors: wp.array(dtype=wp.vec2), intensity: wp.array3d(dtype=wp.float32),
                              clean: wp.array3d(dtype=wp.float32), hits: wp.array3d(dtype=wp.int32),
                              labels: wp.array3d(dtype=wp.int32), b: int, r: int, n_channels: int, echo: int,
                              key: int, variance: float, reverb: float, g: float, row_sums: int) -> float:
    ...


@wp.kernel
def _receiver_rows_cuda_branch(field_in: wp.array3d(dtype=wp.vec2), power_in: wp.array3d(dtype=wp.float32),
                               hit_label: wp.array3d(dtype=wp.vec2i), taps: wp.array3d(dtype=wp.float32),
                               tap_spans: wp.array(dtype=wp.vec2i), column_reverb: wp.array(dtype=wp.float32),
                               n_channels: int, noise: float,
                               row_reverb: wp.array(dtype=wp.float32), key: int,
                               exp_table: wp.array(dtype=wp.float32), phasors: wp.array(dtype=wp.vec2),
                               row_gain: wp.array(dtype=wp.float32), row_echo: wp.array2d(dtype=wp.int32),
                               intensity: wp.array3d(dtype=wp.float32), clean: wp.array3d(dtype=wp.float32),
                               hits: wp.array3d(dtype=wp.int32), labels: wp.array3d(dtype=wp.int32),
                               row_sum: wp.array2d(dtype=wp.float32)):
    r = wp.tid()
    reverb = row_reverb[r]
    row_sum[0, r] = _receiver_row_cuda_branch(field_in, power_in, hit_label, taps, tap_spans, column_reverb, exp_table,
                                              phasors,
                                              intensity, clean, hits, labels, 0, r, n_channels, row_echo[0, r], key,
                                              noise, reverb, row_gain[r], 1)
    row_echo[0, r] = 0


@wp.kernel
def _warp_receiver_bins(field_in: wp.array3d(dtype=wp.vec2), power_in: wp.array3d(dtype=wp.float32),
                        hit_label: wp.array3d(dtype=wp.vec2i), taps: wp.array2d(dtype=wp.float32),
                        column_reverb: wp.array(dtype=wp.float32), n_channels: int, noise: float,
                        row_reverb: wp.array(dtype=wp.float32), key: int, exp_table: wp.array(dtype=wp.float32),
                        phasors: wp.array(dtype=wp.vec2), row_gain: wp.array(dtype=wp.float32),
                        row_echo: wp.array2d(dtype=wp.int32), intensity: wp.array2d(dtype=wp.float32),
                        clean: wp.array2d(dtype=wp.float32), hits: wp.array2d(dtype=wp.int32),
                        labels: wp.array2d(dtype=wp.int32)):
    # bin (r, j) of the receiver from its definition (bearing_receiver_kernel's docstring) with the Warp helpers:
    # the point spread summed over channel j's taps in ascending order, sources outside the row skipped
    r, j = wp.tid()
    reverb = row_reverb[r] * column_reverb[j]
    variance = noise + reverb
    h = kc.bin_state(key, r * n_channels + j)
    e = kc.unit_exponential(h, exp_table)
    fx = float(0.0)
    fy = float(0.0)
    fp = float(0.0)
    hit = int(0)
    label = int(-1)
    if row_echo[0, r] != 0:
        half = (taps.shape[1] - 1) // 2
        for t in range(2 * half + 1):
            s = j + t - half
            if s >= 0 and s < n_channels:
                h1 = taps[j, t]
                fx = fx + h1 * field_in[0, r, s][0]
                fy = fy + h1 * field_in[0, r, s][1]
                fp = fp + (h1 * h1) * power_in[0, r, s]
        hit = hit_label[0, r, j][0]
        label = hit_label[0, r, j][1]
    det = fx * fx + fy * fy
    if variance > 0.0:
        k = int(pcg_hash(h) >> wp.uint32(32 - kc.PHASOR_BITS))
        ve = variance * e
        amplitude = wp.sqrt(ve)
        gx = fx + amplitude * phasors[k][0]
        gy = fy + amplitude * phasors[k][1]
        if det == 0.0:
            det = ve
        else:
            det = gx * gx + gy * gy
    g = row_gain[r]
    intensity[r, j] = det * g
    clean[r, j] = (fp + reverb) * g
    hits[r, j] = hit
    labels[r, j] = label


@pytest.mark.parametrize("n_channels, taps", [(1, 1), (2, 7), (15, 19), (17, 19), (33, 19), (48, 27), (70, 67)])
def test_receiver_rows_match_the_warp_definition_on_cpu_and_on_the_cuda_branch(n_channels, taps):
    # bearing_receiver_kernel (32-bin native blocks, 16 for a row's short last block; gathers on AVX2) and
    # receiver_row's CUDA branch (16-bin blocks, one lane at a time) against the receiver's definition written bin
    # by bin with the Warp helpers: the same bytes for the four outputs, row sums in bin order, and every row's
    # scratch (field, power, hits, labels, row_echo) back at rest; rows with and without echoes, blocks whose
    # sources are all zero, point-spread kernels narrower and wider (67 taps) than the fast path's 65, a kernel and
    # a volume reverberation factor of their own per channel (a steered flat array's).
    rng = np.random.default_rng(n_channels * 100 + taps)
    n_range, pad = 40, 3
    field = rng.normal(size=(1, n_range, n_channels + pad, 2)).astype(np.float32)
    power = rng.uniform(0.0, 2.0, size=(1, n_range, n_channels + pad)).astype(np.float32)
    quiet = rng.random(size=(1, n_range, n_channels + pad)) < 0.5
    quiet[:, :, : n_channels // 2] = True   # a run of zero sources (whole blocks of wide rows skip their taps)
    field[quiet] = 0.0
    power[quiet] = 0.0
    field[:, :, n_channels:] = 0.0          # the padding of a row is at rest
    power[:, :, n_channels:] = 0.0
    echo = (rng.random(size=(1, n_range)) < 0.6).astype(np.int32)
    field[echo == 0] = 0.0                  # a row without echoes is at rest
    power[echo == 0] = 0.0
    hit_label = np.zeros((1, n_range, n_channels + pad, 2), np.int32)
    hit_label[..., 1] = -1
    rows = np.flatnonzero(echo[0])
    hit_label[0, rows, :n_channels, 0] = rng.integers(0, 4, size=(rows.size, n_channels))
    hit_label[0, rows, :n_channels, 1] = np.where(hit_label[0, rows, :n_channels, 0] > 0,
                                                  rng.integers(0, 5, size=(rows.size, n_channels)), -1)
    widths = rng.uniform(0.6, 1.4, n_channels)
    h = np.exp(-0.5 * (np.linspace(-2.5, 2.5, taps)[None, :] / widths[:, None]) ** 2).astype(np.float32)
    # each channel's kernel zero beyond its own reach (as a steered flat array's): the tiles' spans of nonzero taps
    # differ, and the native receiver skips the taps outside them
    reach = rng.integers(0, taps // 2 + 1, n_channels)
    h[np.abs(np.arange(taps)[None, :] - taps // 2) > reach[:, None]] = 0.0
    column = rng.uniform(1.0, 2.5, n_channels)
    tables = receiver_tables(h, column, "cpu")
    spans = tables[1].numpy()
    assert taps == 1 or (spans[:, 1] - spans[:, 0] < taps).any()
    reverb = rng.uniform(0.0, 0.3, n_range).astype(np.float32)
    reverb[::7] = 0.0
    gain = rng.uniform(0.5, 3.0, n_range).astype(np.float32)
    key, noise = 987654, 0.25   # the CUDA-branch rows' stream key; the kernel's is its frame's
    angles = 2.0 * np.pi * np.arange(1 << int(kc.PHASOR_BITS)) / (1 << int(kc.PHASOR_BITS))
    with wp.ScopedDevice("cpu"):
        consts = dict(taps=tables[0], spans=tables[1], column=tables[2], row_taps=wp.array(h, dtype=wp.float32),
                      row_column=wp.array(column.astype(np.float32), dtype=wp.float32),
                      exp_table=wp.array(exponential_table(int(kc.EXP_TABLE_BITS)), dtype=wp.float32),
                      phasors=wp.array(np.stack([np.cos(angles), np.sin(angles)], 1).astype(np.float32),
                                       dtype=wp.vec2),
                      reverb=wp.array(reverb, dtype=wp.float32), gain=wp.array(gain, dtype=wp.float32))

        def scratch():
            return (wp.array(field, dtype=wp.vec2), wp.array(power, dtype=wp.float32),
                    wp.array(hit_label, dtype=wp.vec2i), wp.array(echo, dtype=wp.int32))

        def reference(used_key):
            f, p, hl, re = scratch()
            ref = [wp.empty((n_range, n_channels), dtype=t) for t in (wp.float32, wp.float32, wp.int32, wp.int32)]
            wp.launch(_warp_receiver_bins, (n_range, n_channels),
                      [f, p, hl, consts["row_taps"], consts["row_column"], n_channels, noise, consts["reverb"], used_key,
                       consts["exp_table"], consts["phasors"], consts["gain"], re, *ref])
            return [a.numpy() for a in ref]

        def outputs():
            return [wp.full((1, n_range, n_channels), v, dtype=t) for v, t in
                    ((-7.0, wp.float32), (-7.0, wp.float32), (-7, wp.int32), (-7, wp.int32))]

        got = []
        f, p, hl, re = scratch()
        out, row_sum = outputs(), wp.zeros((1, n_range), dtype=wp.float32)
        block, step = row_order(n_range, n_channels)
        seed, frame, sensor = 5, 3, 2
        wp.launch(kc.bearing_receiver_kernel, n_range,
                  [f, p, hl, consts["taps"], consts["spans"], consts["column"], n_range, n_channels,
                   wp.full(n_range, noise, dtype=wp.float32), consts["reverb"], seed, frame, sensor,
                   consts["exp_table"], consts["phasors"], consts["gain"], re, *out, row_sum, 1, block, step, 0])
        got.append(("cpu", out, row_sum, (f, p, hl, re), _host_key_of(seed, frame, sensor)))
        f, p, hl, re = scratch()
        out, row_sum = outputs(), wp.zeros((1, n_range), dtype=wp.float32)
        wp.launch(_receiver_rows_cuda_branch, n_range,
                  [f, p, hl, consts["taps"], consts["spans"], consts["column"], n_channels, noise,
                   consts["reverb"], key, consts["exp_table"],
                   consts["phasors"], consts["gain"], re, *out, row_sum])
        got.append(("cuda branch", out, row_sum, (f, p, hl, re), key))
        for name, out, row_sum, rest, used_key in got:
            expect = reference(used_key)
            assert (expect[0] > 0).all() and (expect[2] > 0).sum() > 10 and (expect[3] >= 0).sum() > 10
            sums = np.zeros(n_range, np.float32)   # bin order, float32
            for r in range(n_range):
                for j in range(n_channels):
                    sums[r] = np.float32(sums[r] + expect[0][r, j])
            for a, b, what in zip(out, expect, ("intensity", "clean", "hits", "labels")):
                np.testing.assert_array_equal(a.numpy()[0], b, err_msg=f"{name}: {what}")
            np.testing.assert_array_equal(row_sum.numpy()[0], sums, err_msg=f"{name}: row sums")
            f, p, hl, re = (a.numpy() for a in rest)
            assert not f.any() and not p.any() and not hl[..., 0].any() and (hl[..., 1] == -1).all(), name
            assert not re.any(), name


def _host_key_of(seed: int, frame: int, sensor: int) -> int:
    from oceansim_py.sensors.acoustic.chain import _host_key

    return _host_key(seed, frame, sensor, int(kc.STREAM_NOISE))
