"""Kernels of the ray-fan sonars (kernels/acoustic_fans.py) against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from oceansim_py.kernels.acoustic_fans import first_return_kernel
from oceansim_py.runtime import launch_1d


@pytest.mark.parametrize("rays_per_pose", [1, 7, 8, 9, 1024, 65_539])
def test_first_return_is_the_nearest_hit_of_each_pose(rays_per_pose):
    """The nearest finite distance of every pose's rays, exactly (sigma 0), NaN for a pose whose rays all missed
    (+inf), wherever in the pose the nearest ray sits (first, last, in the vectorised body or the tail)."""
    rng = np.random.default_rng(rays_per_pose)
    poses = 5
    d = rng.uniform(0.5, 40.0, size=(poses, rays_per_pose)).astype(np.float32)
    d[rng.random(d.shape) < 0.3] = np.inf
    d[1, :] = np.inf                                  # nothing hit
    d[2, -1] = np.float32(0.125)                      # the nearest is the last ray
    d[3, 0] = np.float32(0.25)                        # ... the first
    if rays_per_pose > 1:
        d[4, rays_per_pose // 2] = np.float32(0.375)  # ... one in the middle
    ray_range = wp.array(d.ravel(), dtype=wp.float32, device="cpu")
    out = wp.zeros(poses, dtype=wp.float32, device="cpu")
    launch_1d(first_return_kernel, poses, [ray_range, rays_per_pose, 0, 0, 0, 0.0, out], "cpu", min_chunk=1)
    want = d.min(axis=1)
    want[~np.isfinite(want)] = np.nan
    np.testing.assert_array_equal(out.numpy(), want)
