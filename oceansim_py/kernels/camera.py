"""Underwater camera kernels: pinhole rays, Lambertian in-air shading, water image formation, sRGB encoding.

One thread per pixel of a batch (B, H, W); element ``i = b * H * W + row * W + col``. Each pixel depends only on
its own index, so the result is bit-identical whatever the CPU chunking or batch size.

Frames: the pose maps the sensor FLU frame (x forward = optical axis, y left, z up) to the world (Z up, metres).
Image coordinates follow OpenCV: pixel (row, col) has its centre at ``u = col``, ``v = row`` (the image spans
[-0.5, W - 0.5] x [-0.5, H - 0.5]); the pinhole ray through it is ``(1, -(u - cx) / fx, -(v - cy) / fy)`` in FLU
(image right = -y, image down = -z), normalised, so ``K = [[fx, 0, cx], [0, fy, cy], [0, 0, 1]]`` projects a
point it sees back onto ``(col, row)``.

Radiometry (linear RGB, relative units: a white Lambertian surface under unit irradiance has J = 1):

    J = albedo * (ambient + E_sun + sum_lights E_light)
    E_sun = sun_irradiance * exp(-K_d * depth(p)) * max(0, n . l_sun)          (0 if shadowed)
    E_light = intensity * cone * max(0, n . l) / d^2 * exp(-beta^D * d)         (0 if shadowed)
    I = J * exp(-beta^D * z) + B_inf * (1 - exp(-beta^B * z));   a miss sees I = B_inf, J = 0
    B_inf = veiling_light * (ambient + sun_irradiance * exp(-K_d * camera depth))  if veiling_scales_with_light
    rgb = round(255 * srgb_oetf(clamp(exposure * I, 0, 1)))
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.raycast import cast_ray

#: Shadow rays start this far (m) off the surface, along the normal, to avoid hitting their own triangle.
SHADOW_OFFSET = 1.0e-3


@wp.func
def vec_exp(v: wp.vec3) -> wp.vec3:
    """Component-wise exp."""
    return wp.vec3(wp.exp(v[0]), wp.exp(v[1]), wp.exp(v[2]))


@wp.func
def srgb_oetf(x: float) -> float:
    """IEC 61966-2-1 sRGB encoding of a linear value in [0, 1]."""
    if x <= 0.0031308:
        return 12.92 * x
    return 1.055 * wp.pow(x, 1.0 / 2.4) - 0.055


@wp.func
def encode_u8(x: float) -> wp.uint8:
    """Linear value -> sRGB 8-bit code (clamped to [0, 1], rounded half up)."""
    return wp.uint8(int(wp.floor(255.0 * srgb_oetf(wp.clamp(x, 0.0, 1.0)) + 0.5)))


@wp.func
def pinhole_direction(col: int, row: int, fx: float, fy: float, cx: float, cy: float) -> wp.vec3:
    """Unit FLU direction of the ray through the centre of pixel (row, col), at image point (u, v) = (col, row)
    (OpenCV pixel coordinates)."""
    x = (float(col) - cx) / fx
    y = (float(row) - cy) / fy
    return wp.normalize(wp.vec3(1.0, -x, -y))


@wp.func
def occluded(mesh: wp.uint64, face_object: wp.array(dtype=wp.int32), origin: wp.vec3, direction: wp.vec3,
             distance: float) -> int:
    """1 if the segment ``origin + t direction``, 0 < t < distance, hits any triangle."""
    h = cast_ray(mesh, face_object, origin, direction, distance)
    return h.hit


@wp.kernel
def camera_render_kernel(
    mesh: wp.uint64,
    face_object: wp.array(dtype=wp.int32),
    object_albedo: wp.array(dtype=wp.vec3),
    object_label: wp.array(dtype=wp.int32),
    poses: wp.array(dtype=wp.transform),
    width: int,
    height: int,
    fx: float,
    fy: float,
    cx: float,
    cy: float,
    max_range: float,
    ambient: wp.vec3,
    sun_irradiance: wp.vec3,
    sun_direction: wp.vec3,
    surface_z: float,
    diffuse_attenuation: wp.vec3,
    shadows: int,
    light_position: wp.array(dtype=wp.vec3),
    light_direction: wp.array(dtype=wp.vec3),
    light_cos_outer: wp.array(dtype=wp.float32),
    light_cos_inner: wp.array(dtype=wp.float32),
    light_intensity: wp.array(dtype=wp.vec3),
    beta_d: wp.vec3,
    beta_b: wp.vec3,
    veiling_light: wp.vec3,
    veiling_scales_with_light: int,
    exposure: float,
    out_rgb: wp.array4d(dtype=wp.uint8),
    out_in_air: wp.array3d(dtype=wp.vec3),
    out_linear: wp.array3d(dtype=wp.vec3),
    out_range: wp.array3d(dtype=wp.float32),
    out_depth: wp.array3d(dtype=wp.float32),
    out_label: wp.array3d(dtype=wp.int32),
    out_instance: wp.array3d(dtype=wp.int32),
    out_normal: wp.array3d(dtype=wp.vec3),
    start: int,
):
    """Render pixel ``i`` of the batch (see the module docstring); ``sun_direction`` is the world unit vector
    towards the sun (zero irradiance switches the sun off); light arrays are in the sensor frame."""
    i = wp.tid() + start
    per_image = width * height
    b = i / per_image
    rem = i - b * per_image
    row = rem / width
    col = rem - row * width

    pose = poses[b]
    origin = wp.transform_get_translation(pose)
    d_sensor = pinhole_direction(col, row, fx, fy, cx, cy)
    d = wp.quat_rotate(wp.transform_get_rotation(pose), d_sensor)

    veil = veiling_light
    if veiling_scales_with_light != 0:
        cam_depth = wp.max(surface_z - origin[2], 0.0)
        e_cam = ambient + wp.cw_mul(sun_irradiance, vec_exp(-cam_depth * diffuse_attenuation))
        veil = wp.cw_mul(veiling_light, e_cam)

    h = cast_ray(mesh, face_object, origin, d, max_range)
    j = wp.vec3(0.0, 0.0, 0.0)
    img = veil
    if h.hit != 0:
        p = origin + h.distance * d
        n = h.normal
        lift = p + SHADOW_OFFSET * n
        e = ambient
        # sun from above, dimmed by K_d over the hit point's depth
        if wp.length_sq(sun_irradiance) > 0.0:
            cos_sun = wp.dot(n, sun_direction)
            if cos_sun > 0.0:
                depth = wp.max(surface_z - p[2], 0.0)
                lit = 1
                if shadows != 0 and sun_direction[2] > 0.0 and depth > 0.0:
                    lit = 1 - occluded(mesh, face_object, lift, sun_direction, depth / sun_direction[2])
                if lit != 0:
                    e = e + cos_sun * wp.cw_mul(sun_irradiance, vec_exp(-depth * diffuse_attenuation))
        # vehicle lights, attenuated along their own path
        for k in range(light_position.shape[0]):
            lp = wp.transform_point(pose, light_position[k])
            to_light = lp - p
            dist = wp.length(to_light)
            if dist > 0.0:
                l_dir = to_light / dist
                cos_n = wp.dot(n, l_dir)
                axis = wp.quat_rotate(wp.transform_get_rotation(pose), light_direction[k])
                cos_axis = -wp.dot(l_dir, axis)
                cone = 0.0
                if cos_axis >= light_cos_inner[k]:
                    cone = 1.0
                elif cos_axis > light_cos_outer[k]:
                    cone = wp.smoothstep(light_cos_outer[k], light_cos_inner[k], cos_axis)
                if cos_n > 0.0 and cone > 0.0:
                    lit = 1
                    if shadows != 0:
                        lit = 1 - occluded(mesh, face_object, lift, l_dir, dist - SHADOW_OFFSET)
                    if lit != 0:
                        e = e + (cone * cos_n / (dist * dist)) * wp.cw_mul(light_intensity[k],
                                                                           vec_exp(-dist * beta_d))
        j = wp.cw_mul(object_albedo[h.obj], e)
        z = h.distance
        img = wp.cw_mul(j, vec_exp(-z * beta_d)) + wp.cw_mul(veil, wp.vec3(1.0, 1.0, 1.0) - vec_exp(-z * beta_b))
        out_range[b, row, col] = z
        out_depth[b, row, col] = z * d_sensor[0]
        out_label[b, row, col] = object_label[h.obj]
        out_instance[b, row, col] = h.obj
        out_normal[b, row, col] = n
    else:
        out_range[b, row, col] = float(wp.inf)
        out_depth[b, row, col] = float(wp.inf)
        out_label[b, row, col] = -1
        out_instance[b, row, col] = -1
        out_normal[b, row, col] = wp.vec3(0.0, 0.0, 0.0)

    out_in_air[b, row, col] = j
    out_linear[b, row, col] = img
    out_rgb[b, row, col, 0] = encode_u8(exposure * img[0])
    out_rgb[b, row, col, 1] = encode_u8(exposure * img[1])
    out_rgb[b, row, col, 2] = encode_u8(exposure * img[2])
