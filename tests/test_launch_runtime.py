"""runtime.launch_1d on the CPU: chunks run by the calling thread and the launch threads, packed launches reused
while the arguments pack to the same bytes (oceansim_py/runtime.py). Every result is checked against numpy."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import warp as wp

import oceansim_py.runtime as rt
from oceansim_py.runtime import LaunchThreads, _arg_key, launch_1d
from kernels_for_launch_tests import affine_kernel  # noqa: E402 - tests/ is on the path (rootdir conftest)

DEV = "cpu"


def expected(x: np.ndarray, scale: float, shift: tuple[float, float]) -> np.ndarray:
    i = np.arange(x.size, dtype=np.float32)
    with np.errstate(divide="ignore"):
        return x / np.float32(scale) + np.float32(shift[0]) + i * np.float32(shift[1])


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [1, 7, 1000, 40_003])
def test_every_element_once_for_any_thread_count(threads, n):
    x = np.linspace(-3.0, 5.0, n, dtype=np.float32)
    out = wp.full(n + 1, -7.0, dtype=wp.float32, device=DEV)
    launch_1d(affine_kernel, n, [wp.array(x, device=DEV), 2.0, wp.vec2(0.5, 0.25), out], DEV, threads=threads,
              min_chunk=1)
    got = out.numpy()
    np.testing.assert_array_equal(got[:n], expected(x, 2.0, (0.5, 0.25)))
    assert got[n] == -7.0   # nothing written past n


def test_a_repeated_launch_reuses_its_packing_and_a_changed_argument_repacks(monkeypatch):
    n = 5000
    x = wp.array(np.arange(n, dtype=np.float32), device=DEV)
    a = wp.zeros(n, dtype=wp.float32, device=DEV)
    b = wp.zeros(n, dtype=wp.float32, device=DEV)
    packings = []
    real = rt.chunk_calls
    monkeypatch.setattr(rt, "chunk_calls", lambda *args: packings.append(1) or real(*args))

    def launch(out, scale, shift):
        launch_1d(affine_kernel, n, [x, scale, wp.vec2(*shift), out], DEV, threads=2, min_chunk=100)
        return out.numpy().copy()   # on the CPU numpy() is a view of the array

    xs = x.numpy()
    np.testing.assert_array_equal(launch(a, 4.0, (1.0, 0.0)), expected(xs, 4.0, (1.0, 0.0)))
    first = len(packings)
    np.testing.assert_array_equal(launch(a, 4.0, (1.0, 0.0)), expected(xs, 4.0, (1.0, 0.0)))
    assert len(packings) == first  # same arguments: the plan is reused
    # each change packs again and takes effect: another output array, scale, vector and the sign of zero
    np.testing.assert_array_equal(launch(b, 4.0, (1.0, 0.0)), expected(xs, 4.0, (1.0, 0.0)))
    np.testing.assert_array_equal(a.numpy(), expected(xs, 4.0, (1.0, 0.0)))
    np.testing.assert_array_equal(launch(b, 8.0, (1.0, 0.0)), expected(xs, 8.0, (1.0, 0.0)))
    np.testing.assert_array_equal(launch(b, 8.0, (1.0, 2.0)), expected(xs, 8.0, (1.0, 2.0)))
    assert len(packings) == first + 3
    inf = launch(b, 0.0, (0.0, 0.0))
    minus_inf = launch(b, -0.0, (0.0, 0.0))
    assert np.isposinf(inf[1:]).all() and np.isneginf(minus_inf[1:]).all()


def test_a_rebuilt_module_is_never_called_through_an_old_plan():
    n = 300
    x = wp.array(np.ones(n, dtype=np.float32), device=DEV)
    out = wp.zeros(n, dtype=wp.float32, device=DEV)
    args = [x, 1.0, wp.vec2(0.0, 1.0), out]
    launch_1d(affine_kernel, n, args, DEV, threads=2, min_chunk=10)
    module = affine_kernel.module
    before = rt.load_module(affine_kernel, wp.get_device(DEV))
    unroll = module.options["max_unroll"]
    try:
        module.options["max_unroll"] = unroll + 1   # a new module hash: the next load builds a new module
        module.mark_modified()
        assert rt.load_module(affine_kernel, wp.get_device(DEV)) is not before
        out.zero_()
        launch_1d(affine_kernel, n, args, DEV, threads=2, min_chunk=10)
        np.testing.assert_array_equal(out.numpy(), expected(np.ones(n, np.float32), 1.0, (0.0, 1.0)))
    finally:
        module.options["max_unroll"] = unroll
        module.mark_modified()


def test_launches_from_several_threads_at_once():
    n = 20_000
    x = wp.array(np.linspace(0, 1, n, dtype=np.float32), device=DEV)
    outs = [wp.zeros(n, dtype=wp.float32, device=DEV) for _ in range(6)]
    errors = []

    def work(k):
        try:
            for rep in range(20):
                launch_1d(affine_kernel, n, [x, float(k + 1), wp.vec2(float(rep), 0.0), outs[k]], DEV, threads=2,
                          min_chunk=500)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(outs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, out in enumerate(outs):
        np.testing.assert_array_equal(out.numpy(), expected(x.numpy(), k + 1.0, (19.0, 0.0)))


def test_a_failing_chunk_raises_in_the_launching_thread_after_all_chunks_ran():
    ran = []

    def ok(i):
        return lambda: ran.append(i)

    def boom():
        raise RuntimeError("chunk 3 failed")

    calls = [ok(0), ok(1), ok(2), boom, ok(4), ok(5)]
    with pytest.raises(RuntimeError, match="chunk 3 failed"):
        LaunchThreads().run(calls, 3)
    assert sorted(ran) == [0, 1, 2, 4, 5]


def test_argument_keys_compare_bits_and_refuse_what_they_cannot_compare():
    assert _arg_key(0.0) != _arg_key(-0.0)
    assert _arg_key(1) != _arg_key(1.0) != _arg_key(True)
    assert _arg_key(wp.vec3(1.0, 2.0, 3.0)) == _arg_key(wp.vec3(1.0, 2.0, 3.0))
    a = wp.zeros(4, dtype=wp.float32, device=DEV)
    assert _arg_key(a) == _arg_key(a) != _arg_key(a.reshape((2, 2)))

    @wp.struct
    class Holder:
        v: float

    with pytest.raises(TypeError):
        _arg_key(Holder())
