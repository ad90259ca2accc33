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
    rgb = round(255 * srgb_oetf(clamp(exposure * I * V, 0, 1)))

albedo is the node's flat albedo, or its texture sampled bilinearly at the hit's uv (:func:`sample_texture`,
:func:`hit_uv`). A distorting lens replaces the pinhole ray by a precomputed per-pixel ray (sensors/lens.py); V is
the vignetting map (1 without). Motion blur averages I and J over the frame's sub-frame poses. With the noise
model, ``camera_sensor_kernel`` turns I into digital numbers and re-encodes ``rgb`` from them; each element's
draws depend only on (seed, frame, sensor id, element), so it too is bit-identical whatever the chunking.
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.random import stream_state
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



@wp.func
def wrap_texel(i: int, n: int, mode: int) -> int:
    """Texel index ``i`` along an axis of ``n`` texels under a wrap mode (0 repeat, 1 clamp, 2 mirror, 3 black);
    -1 for a texel outside the image in black mode."""
    if mode == 1:
        return wp.clamp(i, 0, n - 1)
    if mode == 2:
        m = ((i % (2 * n)) + 2 * n) % (2 * n)
        if m >= n:
            m = 2 * n - 1 - m
        return m
    if mode == 3:
        if i < 0 or i >= n:
            return -1
        return i
    return ((i % n) + n) % n


@wp.func
def texel(texels: wp.array(dtype=wp.vec3), offset: int, width: int, row: int, col: int) -> wp.vec3:
    """Texel (row, col) of the texture at ``offset`` (black for an index of -1)."""
    if row < 0 or col < 0:
        return wp.vec3(0.0, 0.0, 0.0)
    return texels[offset + row * width + col]


@wp.func
def sample_texture(texels: wp.array(dtype=wp.vec3), info: wp.array2d(dtype=wp.int32), t: int, uv: wp.vec2) -> wp.vec3:
    """Bilinear sample of texture ``t`` at texture coordinates ``uv`` ((0, 0) = the image's bottom-left corner;
    texel (row, col) has its centre at ((col + 0.5) / W, 1 - (row + 0.5) / H))."""
    offset = info[t, 0]
    w = info[t, 1]
    h = info[t, 2]
    wrap_s = info[t, 3] / 4
    wrap_t = info[t, 3] - 4 * wrap_s
    x = uv[0] * float(w) - 0.5
    y = (1.0 - uv[1]) * float(h) - 0.5
    x0 = wp.floor(x)
    y0 = wp.floor(y)
    fx = x - x0
    fy = y - y0
    c0 = wrap_texel(int(x0), w, wrap_s)
    c1 = wrap_texel(int(x0) + 1, w, wrap_s)
    r0 = wrap_texel(int(y0), h, wrap_t)
    r1 = wrap_texel(int(y0) + 1, h, wrap_t)
    top = (1.0 - fx) * texel(texels, offset, w, r0, c0) + fx * texel(texels, offset, w, r0, c1)
    bottom = (1.0 - fx) * texel(texels, offset, w, r1, c0) + fx * texel(texels, offset, w, r1, c1)
    return (1.0 - fy) * top + fy * bottom


@wp.func
def hit_uv(points: wp.array(dtype=wp.vec3), indices: wp.array(dtype=wp.int32), face_uv: wp.array(dtype=wp.vec2),
           face: int, p: wp.vec3) -> wp.vec2:
    """Texture coordinates at point ``p`` of triangle ``face``: its corners' uvs weighted by the barycentric
    coordinates of ``p`` (clamped to the triangle)."""
    a = points[indices[3 * face]]
    b = points[indices[3 * face + 1]]
    c = points[indices[3 * face + 2]]
    e1 = b - a
    e2 = c - a
    q = p - a
    d11 = wp.dot(e1, e1)
    d12 = wp.dot(e1, e2)
    d22 = wp.dot(e2, e2)
    q1 = wp.dot(q, e1)
    q2 = wp.dot(q, e2)
    den = d11 * d22 - d12 * d12
    wb = 0.0
    wc = 0.0
    if den > 0.0:
        wb = wp.clamp((d22 * q1 - d12 * q2) / den, 0.0, 1.0)
        wc = wp.clamp((d11 * q2 - d12 * q1) / den, 0.0, 1.0 - wb)
    wa = 1.0 - wb - wc
    return wa * face_uv[3 * face] + wb * face_uv[3 * face + 1] + wc * face_uv[3 * face + 2]


@wp.struct
class SceneTextures:
    """The scene's geometry and textures the shading reads (WorldGeometry's arrays)."""

    points: wp.array(dtype=wp.vec3)
    indices: wp.array(dtype=wp.int32)
    face_uv: wp.array(dtype=wp.vec2)
    object_texture: wp.array(dtype=wp.int32)
    texels: wp.array(dtype=wp.vec3)
    info: wp.array2d(dtype=wp.int32)


@wp.struct
class Shaded:
    """One ray's shading: underwater ``img`` and in-air ``j`` radiance, and its first hit (``hit``, ``distance``
    m, world ``normal``, node ``obj``)."""

    img: wp.vec3
    j: wp.vec3
    hit: int
    distance: float
    normal: wp.vec3
    obj: int


@wp.func
def shade_ray(
    mesh: wp.uint64,
    face_object: wp.array(dtype=wp.int32),
    object_albedo: wp.array(dtype=wp.vec3),
    tex: SceneTextures,
    pose: wp.transform,
    d: wp.vec3,
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
) -> Shaded:
    """Shade the world ray ``d`` (unit) from the camera at ``pose`` (module docstring)."""
    origin = wp.transform_get_translation(pose)
    veil = veiling_light
    if veiling_scales_with_light != 0:
        cam_depth = wp.max(surface_z - origin[2], 0.0)
        e_cam = ambient + wp.cw_mul(sun_irradiance, vec_exp(-cam_depth * diffuse_attenuation))
        veil = wp.cw_mul(veiling_light, e_cam)

    out = Shaded()
    h = cast_ray(mesh, face_object, origin, d, max_range)
    out.hit = h.hit
    out.distance = h.distance
    out.normal = h.normal
    out.obj = h.obj
    out.j = wp.vec3(0.0, 0.0, 0.0)
    out.img = veil
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
        albedo = object_albedo[h.obj]
        t = tex.object_texture[h.obj]
        if t >= 0:
            albedo = sample_texture(tex.texels, tex.info, t, hit_uv(tex.points, tex.indices, tex.face_uv, h.face, p))
        out.j = wp.cw_mul(albedo, e)
        z = h.distance
        out.img = wp.cw_mul(out.j, vec_exp(-z * beta_d)) + wp.cw_mul(veil, wp.vec3(1.0, 1.0, 1.0)
                                                                    - vec_exp(-z * beta_b))
    return out


@wp.kernel
def camera_render_kernel(
    mesh: wp.uint64,
    face_object: wp.array(dtype=wp.int32),
    object_albedo: wp.array(dtype=wp.vec3),
    object_label: wp.array(dtype=wp.int32),
    tex: SceneTextures,
    poses: wp.array(dtype=wp.transform),
    sub_samples: int,
    geometry_sample: int,
    width: int,
    height: int,
    fx: float,
    fy: float,
    cx: float,
    cy: float,
    use_rays: int,
    rays: wp.array2d(dtype=wp.vec3),
    use_vignette: int,
    vignette: wp.array2d(dtype=wp.float32),
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
    towards the sun (zero irradiance switches the sun off); light arrays are in the sensor frame.

    Exposure: ``poses`` holds ``sub_samples`` poses per image (image b: ``poses[b * sub_samples + s]``, spread
    over the exposure); ``linear`` and ``in_air`` are their mean, the geometry products (range, depth, label,
    instance, normal) come from sub-sample ``geometry_sample`` (mid-exposure). Rays: ``use_rays`` 0 is the
    pinhole ray of the pixel, 1 the sensor-frame unit ray ``rays[row, col]`` (a distorting lens, sensors/lens.py).
    ``rgb`` is ``encode_u8(exposure * I * vignette[row, col])`` (vignette 1 with ``use_vignette`` 0)."""
    i = wp.tid() + start
    per_image = width * height
    b = i / per_image
    rem = i - b * per_image
    row = rem / width
    col = rem - row * width

    d_sensor = pinhole_direction(col, row, fx, fy, cx, cy)
    if use_rays != 0:
        d_sensor = rays[row, col]

    img = wp.vec3(0.0, 0.0, 0.0)
    j = wp.vec3(0.0, 0.0, 0.0)
    for s in range(sub_samples):
        pose = poses[b * sub_samples + s]
        d = wp.quat_rotate(wp.transform_get_rotation(pose), d_sensor)
        sh = shade_ray(mesh, face_object, object_albedo, tex, pose, d, max_range, ambient, sun_irradiance,
                       sun_direction, surface_z, diffuse_attenuation, shadows, light_position, light_direction,
                       light_cos_outer, light_cos_inner, light_intensity, beta_d, beta_b, veiling_light,
                       veiling_scales_with_light)
        img = img + sh.img
        j = j + sh.j
        if s == geometry_sample:
            if sh.hit != 0:
                out_range[b, row, col] = sh.distance
                out_depth[b, row, col] = sh.distance * d_sensor[0]
                out_label[b, row, col] = object_label[sh.obj]
                out_instance[b, row, col] = sh.obj
                out_normal[b, row, col] = sh.normal
            else:
                out_range[b, row, col] = float(wp.inf)
                out_depth[b, row, col] = float(wp.inf)
                out_label[b, row, col] = -1
                out_instance[b, row, col] = -1
                out_normal[b, row, col] = wp.vec3(0.0, 0.0, 0.0)
    if sub_samples > 1:
        img = img / float(sub_samples)
        j = j / float(sub_samples)

    out_in_air[b, row, col] = j
    out_linear[b, row, col] = img
    g = exposure
    if use_vignette != 0:
        g = exposure * vignette[row, col]
    out_rgb[b, row, col, 0] = encode_u8(g * img[0])
    out_rgb[b, row, col, 1] = encode_u8(g * img[1])
    out_rgb[b, row, col, 2] = encode_u8(g * img[2])


@wp.func
def poisson(state: wp.uint32, mean: float) -> float:
    """One Poisson(mean) draw from one uniform: inversion of the CDF below a mean of 64 (exact), the rounded
    Gaussian approximation N(mean, mean) above (its error in the variance is < 1 / (12 mean))."""
    if mean <= 0.0:
        return 0.0
    if mean >= 64.0:
        return wp.max(wp.floor(mean + wp.sqrt(mean) * wp.randn(state) + 0.5), 0.0)
    u = wp.randf(state)
    p = wp.exp(-mean)
    cdf = p
    k = float(0.0)
    while u > cdf and k < 1000.0:
        k = k + 1.0
        p = p * mean / k
        cdf = cdf + p
    return k


@wp.kernel
def camera_sensor_kernel(
    linear: wp.array3d(dtype=wp.vec3),
    use_vignette: int,
    vignette: wp.array2d(dtype=wp.float32),
    electrons_per_unit: float,
    dark_electrons: float,
    full_well: float,
    read_noise: float,
    gain: float,
    max_code: float,
    seed: int,
    frame_index: int,
    sensor_id: int,
    out_raw: wp.array4d(dtype=wp.uint16),
    out_rgb: wp.array4d(dtype=wp.uint8),
    start: int,
):
    """Photon-transfer model of element ``i`` = (image b, row, col, channel c) (sensors/camera.py):

        mean e- = electrons_per_unit * I_c * vignette + dark_electrons
        e- = min(Poisson(mean), full_well) + read_noise * N(0, 1)
        DN = clamp(floor(e- / gain + 0.5), 0, max_code);   rgb = encode_u8(DN / max_code)

    ``electrons_per_unit`` = QE * photons per unit of ``exposure * I``, times ``exposure``. Draws are keyed by
    (seed, frame_index + b, sensor_id, stream, element (row * W + col) * 3 + c): stream 0 shot noise, 1 read
    noise."""
    i = wp.tid() + start
    height = linear.shape[1]
    width = linear.shape[2]
    per_image = width * height * 3
    b = i / per_image
    rem = i - b * per_image
    pixel = rem / 3
    c = rem - pixel * 3
    row = pixel / width
    col = pixel - row * width
    v = 1.0
    if use_vignette != 0:
        v = vignette[row, col]
    mean = electrons_per_unit * linear[b, row, col][c] * v + dark_electrons
    shot = stream_state(seed, frame_index + b, sensor_id, 0, rem)
    electrons = wp.min(poisson(shot, mean), full_well)
    read = stream_state(seed, frame_index + b, sensor_id, 1, rem)
    electrons = electrons + read_noise * wp.randn(read)
    dn = wp.clamp(wp.floor(electrons / gain + 0.5), 0.0, max_code)
    out_raw[b, row, col, c] = wp.uint16(int(dn))
    out_rgb[b, row, col, c] = encode_u8(dn / max_code)
