"""Kernels that move animated geometry (world frame, metres)."""

from __future__ import annotations

import warp as wp


@wp.kernel
def transform_vertices_kernel(local_points: wp.array(dtype=wp.vec3), vertex_slot: wp.array(dtype=wp.int32),
                              destination: wp.array(dtype=wp.int32), slot_transforms: wp.array(dtype=wp.mat44),
                              points: wp.array(dtype=wp.vec3), start: int):
    """Animated geometry: ``points[destination[i]] = T[vertex_slot[i]] * local_points[i]`` (world, metres)."""
    i = wp.tid() + start
    points[destination[i]] = wp.transform_point(slot_transforms[vertex_slot[i]], local_points[i])
