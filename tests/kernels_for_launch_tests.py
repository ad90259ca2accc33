"""A kernel for tests/test_launch_runtime.py (Warp builds kernels from source files, one module per file)."""

import warp as wp


@wp.kernel
def affine_kernel(x: wp.array(dtype=wp.float32), scale: float, shift: wp.vec2, out: wp.array(dtype=wp.float32),
                  start: int):
    """out[i] = x[i] / scale + shift[0] + i shift[1], i = tid + start (1 / -0.0 is -inf, 1 / 0.0 is +inf)."""
    i = wp.tid() + start
    out[i] = x[i] / scale + shift[0] + float(i) * shift[1]
