"""Sea-surface kernel: the vertices of a wave patch at one time, as a sum of Gerstner (trochoidal) components.

The model is docs/PHYSICS.md section 7 (sea surface; VRX, Bingham et al. 2019, eq. 1): a rest point x0 of the
undisturbed surface z = z0 moves to

    x = x0 - sum_i h_i khat_i sin(k_i . x0 + p_i)        (horizontal, m)
    z = z0 + sum_i A_i cos(k_i . x0 + p_i)               (vertical, m)

with the component's wave vector k_i (rad/m), amplitude A_i (m), horizontal amplitude h_i = q A_i / tanh(k_i d)
(m; q the steepness, d the depth) and phase p_i = phi_i - omega_i t, reduced modulo 2 pi on the host in float64 so
that the float32 sum keeps its precision at any time t.

``gerstner_vertices_kernel`` sums it directly (a sine and a cosine per vertex and component);
``gerstner_grid_vertices_kernel`` gives the same surface for a rest grid with the angle sum separated into row and
column terms (``sea_row_terms_kernel`` makes the row terms per frame), four products per vertex and component.
"""

from __future__ import annotations

import warp as wp


@wp.kernel
def gerstner_vertices_kernel(rest: wp.array(dtype=wp.vec2), wave_vector: wp.array(dtype=wp.vec2),
                             amplitude: wp.array(dtype=wp.float32), horizontal: wp.array(dtype=wp.vec2),
                             phase: wp.array(dtype=wp.float32), n_components: int, z0: float,
                             vertices: wp.array(dtype=wp.vec3), start: int):
    """One element per rest point: its displaced position (world frame, m) at the time ``phase`` was made for.
    ``horizontal[i]`` is h_i khat_i (m), the horizontal amplitude along the wave's direction (zero for k = 0)."""
    v = wp.tid() + start
    x0 = rest[v]
    d = wp.vec2(0.0, 0.0)
    dz = float(0.0)
    for i in range(n_components):
        arg = wp.dot(wave_vector[i], x0) + phase[i]
        d = d - horizontal[i] * wp.sin(arg)
        dz = dz + amplitude[i] * wp.cos(arg)
    vertices[v] = wp.vec3(x0[0] + d[0], x0[1] + d[1], z0 + dz)


@wp.kernel
def sea_row_terms_kernel(row_arg: wp.array(dtype=wp.float32), row_cos: wp.array(dtype=wp.float32),
                         row_sin: wp.array(dtype=wp.float32), start: int):
    """One element per (grid row, component): cos and sin of its row argument k_y y_j + p_i (rad)."""
    e = wp.tid() + start
    row_cos[e] = wp.cos(row_arg[e])
    row_sin[e] = wp.sin(row_arg[e])


@wp.kernel
def gerstner_grid_vertices_kernel(col_cos: wp.array(dtype=wp.float32), col_sin: wp.array(dtype=wp.float32),
                                  row_cos: wp.array(dtype=wp.float32), row_sin: wp.array(dtype=wp.float32),
                                  axis_x: wp.array(dtype=wp.float32), axis_y: wp.array(dtype=wp.float32),
                                  amplitude: wp.array(dtype=wp.float32), horizontal: wp.array(dtype=wp.vec2),
                                  n_components: int, side: int, z0: float, vertices: wp.array(dtype=wp.vec3),
                                  start: int):
    """The same surface as ``gerstner_vertices_kernel`` for rest points on a grid (vertex v = j side + i at
    (axis_x[i], axis_y[j])), with the angle sum separated: k . x0 + p = a_i + b_j with a_i = k_x x_i (its cos and sin
    fixed per patch, ``col_*[i n + c]``) and b_j = k_y y_j + p (per frame, ``row_*[j n + c]``), so that
    cos(a + b) = cos a cos b - sin a sin b and sin(a + b) = sin a cos b + cos a sin b cost four products instead
    of a sine and a cosine per vertex and component."""
    v = wp.tid() + start
    i = v % side
    j = v / side
    ci = i * n_components
    rj = j * n_components
    d = wp.vec2(0.0, 0.0)
    dz = float(0.0)
    for c in range(n_components):
        ca = col_cos[ci + c]
        sa = col_sin[ci + c]
        cb = row_cos[rj + c]
        sb = row_sin[rj + c]
        d = d - horizontal[c] * (sa * cb + ca * sb)
        dz = dz + amplitude[c] * (ca * cb - sa * sb)
    vertices[v] = wp.vec3(axis_x[i] + d[0], axis_y[j] + d[1], z0 + dz)
