"""Sea-surface kernel: the vertices of a wave patch at one time, as a sum of Gerstner (trochoidal) components.

The model is docs/PHYSICS.md section 7 (sea surface; VRX, Bingham et al. 2019, eq. 1): a rest point x0 of the
undisturbed surface z = z0 moves to

    x = x0 - sum_i h_i khat_i sin(k_i . x0 + p_i)        (horizontal, m)
    z = z0 + sum_i A_i cos(k_i . x0 + p_i)               (vertical, m)

with the component's wave vector k_i (rad/m), amplitude A_i (m), horizontal amplitude h_i = q A_i / tanh(k_i d)
(m; q the steepness, d the depth) and phase p_i = phi_i - omega_i t, reduced modulo 2 pi on the host in float64 so
that the float32 sum keeps its precision at any time t.
"""

from __future__ import annotations

import warp as wp


@wp.kernel
def gerstner_vertices_kernel(rest: wp.array(dtype=wp.vec2), wave_vector: wp.array(dtype=wp.vec2),
                             amplitude: wp.array(dtype=wp.float32), horizontal: wp.array(dtype=wp.float32),
                             phase: wp.array(dtype=wp.float32), n_components: int, z0: float,
                             vertices: wp.array(dtype=wp.vec3), start: int):
    """One element per rest point: its displaced position (world frame, m) at the time ``phase`` was made for."""
    v = wp.tid() + start
    x0 = rest[v]
    dx = float(0.0)
    dy = float(0.0)
    dz = float(0.0)
    for i in range(n_components):
        k = wave_vector[i]
        arg = wp.dot(k, x0) + phase[i]
        kk = wp.length(k)
        s = wp.sin(arg)
        if kk > 0.0:
            dx = dx - horizontal[i] * k[0] / kk * s
            dy = dy - horizontal[i] * k[1] / kk * s
        dz = dz + amplitude[i] * wp.cos(arg)
    vertices[v] = wp.vec3(x0[0] + dx, x0[1] + dy, z0 + dz)
