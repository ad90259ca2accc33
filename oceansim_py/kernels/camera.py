"""Underwater camera kernels: pinhole rays, Lambertian in-air shading, water image formation, sRGB encoding.

The camera casts through the scene's ray-cast backend (sensors/rays.py) in passes over tiles of pixels, per
sub-sample of the exposure: :func:`camera_ray_kernel` writes each pixel's primary ray, the backend casts them;
with the sea-surface optics, :func:`camera_bounce_ray_kernel` writes the in-water ray of each primary ray that
reaches the surface (mirror ray from below, refracted ray from above), the backend casts those;
:func:`camera_shadow_ray_kernel` writes the shadow rays of the shaded points (to the sun and each vehicle light),
the backend casts those, and :func:`camera_shade_kernel` shades each pixel from its hits (``load_hit``). Pixel
``p = b * H * W + row * W + col`` of the batch (B, H, W) is ray ``p - first_pixel`` of its tile. Each pixel
depends only on its own index, so the result is bit-identical whatever the CPU chunking, tiling or batch size.

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

The sea surface (Snell's window, Fresnel, total internal reflection, the view from above) is
:func:`surface_radiance`'s (docs/PHYSICS.md §4.2).

albedo is the node's flat albedo, or its texture sampled bilinearly at the hit's uv (:func:`sample_texture`,
:func:`hit_uv`). A distorting lens replaces the pinhole ray by a precomputed per-pixel ray (sensors/lens.py); V is
the vignetting map (1 without). Motion blur averages I and J over the frame's sub-frame poses. With the noise
model, ``camera_sensor_kernel`` turns I into digital numbers and re-encodes ``rgb`` from them; each element's
draws depend only on (seed, frame, sensor id, element), so it too is bit-identical whatever the chunking.
"""

from __future__ import annotations

import warp as wp

from oceansim_py.kernels.random import stream_state
from oceansim_py.kernels.raycast import RayHit, load_hit

#: Shadow rays start this far (m) off the surface, along the normal, to avoid hitting their own triangle.
SHADOW_OFFSET = 1.0e-3
#: Smallest |cosine| between the sea surface's normal and an in-water ray used to add back the water between the
#: surface and that ray's offset origin (:func:`shaded_hit`): at most 1 m, for rays within 0.06 deg of grazing.
GRAZING_COSINE = 1.0e-3


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


@wp.func
def pixel_index(i: int, first_pixel: int, width: int, height: int) -> wp.vec3i:
    """(image b, row, col) of ray ``i`` of a tile that starts at pixel ``first_pixel`` of the batch."""
    p = first_pixel + i
    per_image = width * height
    b = p / per_image
    rem = p - b * per_image
    row = rem / width
    return wp.vec3i(b, row, rem - row * width)


@wp.func
def sensor_ray(col: int, row: int, fx: float, fy: float, cx: float, cy: float, use_rays: int,
               rays: wp.array2d(dtype=wp.vec3)) -> wp.vec3:
    """Unit FLU ray of pixel (row, col): the pinhole ray, or the lens table's ray with ``use_rays`` 1."""
    d = pinhole_direction(col, row, fx, fy, cx, cy)
    if use_rays != 0:
        d = rays[row, col]
    return d


@wp.kernel
def camera_ray_kernel(
    poses: wp.array(dtype=wp.transform),
    sub_samples: int,
    sample: int,
    first_pixel: int,
    width: int,
    height: int,
    fx: float,
    fy: float,
    cx: float,
    cy: float,
    use_rays: int,
    rays: wp.array2d(dtype=wp.vec3),
    origins: wp.array(dtype=wp.vec3),
    directions: wp.array(dtype=wp.vec3),
    start: int,
):
    """Primary ray ``i`` of a tile: pixel ``first_pixel + i`` of the batch seen from sub-sample ``sample`` of its
    image's exposure poses (``poses[b * sub_samples + sample]``): world origin = the camera position, world unit
    direction = the pose's rotation of the pixel's sensor ray (:func:`sensor_ray`)."""
    i = wp.tid() + start
    px = pixel_index(i, first_pixel, width, height)
    pose = poses[px[0] * sub_samples + sample]
    origins[i] = wp.transform_get_translation(pose)
    directions[i] = wp.quat_rotate(wp.transform_get_rotation(pose),
                                   sensor_ray(px[2], px[1], fx, fy, cx, cy, use_rays, rays))


@wp.struct
class Lights:
    """The camera's illumination: ``ambient`` irradiance, the sun (``sun_irradiance`` just below the surface, world
    unit ``sun_direction`` towards it, dimmed by ``diffuse_attenuation`` K_d over the depth below ``surface_z``),
    the vehicle spot lights (sensor frame; ``light_cos_outer`` / ``light_cos_inner`` their cone edges) and
    ``shadows`` (1: shadow rays to the sun and each light)."""

    ambient: wp.vec3
    sun_irradiance: wp.vec3
    sun_direction: wp.vec3
    surface_z: float
    diffuse_attenuation: wp.vec3
    shadows: int
    light_position: wp.array(dtype=wp.vec3)
    light_direction: wp.array(dtype=wp.vec3)
    light_cos_outer: wp.array(dtype=wp.float32)
    light_cos_inner: wp.array(dtype=wp.float32)
    light_intensity: wp.array(dtype=wp.vec3)


@wp.func
def sun_shadow_range(lights: Lights, p: wp.vec3, n: wp.vec3) -> float:
    """Length (m) of the shadow ray from the hit point ``p`` (normal ``n``) up to the surface along the sun, or 0
    when no ray is cast (sun off, the surface faces away, shadows off, the point at or above the surface)."""
    r = 0.0
    if lights.shadows != 0 and wp.length_sq(lights.sun_irradiance) > 0.0:
        if wp.dot(n, lights.sun_direction) > 0.0:
            depth = wp.max(lights.surface_z - p[2], 0.0)
            if lights.sun_direction[2] > 0.0 and depth > 0.0:
                r = depth / lights.sun_direction[2]
    return r


@wp.struct
class LightPath:
    """The path from a hit point towards vehicle light k: unit ``direction``, ``distance`` (m), ``cos_n`` (cosine
    with the surface normal) and ``cone`` (the spot's angular weight in [0, 1])."""

    direction: wp.vec3
    distance: float
    cos_n: float
    cone: float


@wp.func
def light_path(lights: Lights, pose: wp.transform, k: int, p: wp.vec3, n: wp.vec3) -> LightPath:
    """The path from ``p`` (normal ``n``) to light ``k`` of the camera at ``pose`` (zero distance: the light sits
    on the point and does not light it)."""
    out = LightPath()
    out.direction = wp.vec3(0.0, 0.0, 0.0)
    out.distance = 0.0
    out.cos_n = 0.0
    out.cone = 0.0
    lp = wp.transform_point(pose, lights.light_position[k])
    to_light = lp - p
    dist = wp.length(to_light)
    if dist > 0.0:
        l_dir = to_light / dist
        axis = wp.quat_rotate(wp.transform_get_rotation(pose), lights.light_direction[k])
        cos_axis = -wp.dot(l_dir, axis)
        cone = 0.0
        if cos_axis >= lights.light_cos_inner[k]:
            cone = 1.0
        elif cos_axis > lights.light_cos_outer[k]:
            cone = wp.smoothstep(lights.light_cos_outer[k], lights.light_cos_inner[k], cos_axis)
        out.direction = l_dir
        out.distance = dist
        out.cos_n = wp.dot(n, l_dir)
        out.cone = cone
    return out


@wp.struct
class Water:
    """The water's image formation coefficients (sensors/water.py): attenuation ``beta_d`` and backscatter
    ``beta_b`` (1/m), veiling light ``veiling_light`` B_inf for unit illumination, scaled by the light at the
    camera with ``veiling_scales_with_light`` 1."""

    beta_d: wp.vec3
    beta_b: wp.vec3
    veiling_light: wp.vec3
    veiling_scales_with_light: int


@wp.struct
class SeaSurface:
    """The sea surface as the camera sees it: the scene's moving surface mesh, node ``sea_obj`` (-1: none), and,
    with ``flat`` 1, beyond it (or without one) the flat plane ``z = surface_z``; water of refractive index
    ``n_water`` below, air (n = 1) and a sky of radiance ``sky_zenith`` straight up and ``sky_horizon`` at the
    horizon above (linear in the direction's z, :func:`sky_radiance`). ``max_range`` (m): a surface farther along a
    ray is not seen. ``mesh_obj``: the scene's sea-surface node whatever the optics (-1: none), which shadow rays
    pass through (the sun's irradiance is given below the surface)."""

    sea_obj: int
    mesh_obj: int
    flat: int
    surface_z: float
    n_water: float
    sky_zenith: wp.vec3
    sky_horizon: wp.vec3
    max_range: float


#: Crossing kinds: the ray does not reach the sea surface, reaches it from the water (below), from the air (above).
CROSS_NONE = wp.constant(0)
CROSS_FROM_WATER = wp.constant(1)
CROSS_FROM_AIR = wp.constant(2)


@wp.struct
class Crossing:
    """Where a camera ray meets the sea surface: ``kind`` (CROSS_*), ``distance`` (m along the ray) and the unit
    surface ``normal`` turned towards the camera."""

    kind: int
    distance: float
    normal: wp.vec3


@wp.func
def surface_crossing(origin: wp.vec3, d: wp.vec3, h: RayHit, in_water: int, sea: SeaSurface) -> Crossing:
    """The ray ``origin + t d`` (first hit ``h``) from a camera in the water (``in_water`` 1) or in the air: it meets
    the surface where it hits the sea-surface mesh (from the water when the mesh's facing normal points down),
    else, with ``sea.flat``, where it crosses the plane ``z = surface_z`` (up from the water, down from the air)
    nearer than its first hit and ``max_range``."""
    out = Crossing()
    out.kind = CROSS_NONE
    out.distance = float(wp.inf)
    out.normal = wp.vec3(0.0, 0.0, 0.0)
    if h.hit != 0 and h.obj == sea.sea_obj:
        out.distance = h.distance
        out.normal = h.normal
        out.kind = CROSS_FROM_AIR
        if h.normal[2] < 0.0:
            out.kind = CROSS_FROM_WATER
    elif sea.flat != 0:
        reach = wp.min(h.distance, sea.max_range)
        if in_water != 0 and d[2] > 0.0:
            t = (sea.surface_z - origin[2]) / d[2]
            if t >= 0.0 and t < reach:
                out.kind = CROSS_FROM_WATER
                out.distance = t
                out.normal = wp.vec3(0.0, 0.0, -1.0)
        if in_water == 0 and d[2] < 0.0:
            t = (sea.surface_z - origin[2]) / d[2]
            if t >= 0.0 and t < reach:
                out.kind = CROSS_FROM_AIR
                out.distance = t
                out.normal = wp.vec3(0.0, 0.0, 1.0)
    return out


@wp.func
def fresnel_reflectance(cos_i: float, n1: float, n2: float) -> float:
    """Unpolarised Fresnel reflectance 0.5 (r_s^2 + r_p^2) of light going from index ``n1`` into ``n2`` at
    incidence cosine ``cos_i``; 1 beyond the critical angle (total internal reflection)."""
    eta = n1 / n2
    sin2_t = eta * eta * (1.0 - cos_i * cos_i)
    if sin2_t >= 1.0:
        return 1.0
    cos_t = wp.sqrt(1.0 - sin2_t)
    rs = (n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t)
    rp = (n1 * cos_t - n2 * cos_i) / (n1 * cos_t + n2 * cos_i)
    return 0.5 * (rs * rs + rp * rp)


@wp.func
def refract(d: wp.vec3, n: wp.vec3, eta: float) -> wp.vec3:
    """Snell's law: the unit direction of ``d`` (unit) refracted through a surface of unit normal ``n`` (facing
    against ``d``) with ``eta = n1 / n2``; zero past the critical angle."""
    cos_i = -wp.dot(d, n)
    sin2_t = eta * eta * (1.0 - cos_i * cos_i)
    if sin2_t >= 1.0:
        return wp.vec3(0.0, 0.0, 0.0)
    return wp.normalize(eta * d + (eta * cos_i - wp.sqrt(1.0 - sin2_t)) * n)


@wp.func
def reflect(d: wp.vec3, n: wp.vec3) -> wp.vec3:
    """Mirror direction of ``d`` about the unit normal ``n``."""
    return d - (2.0 * wp.dot(d, n)) * n


@wp.func
def sky_radiance(sea: SeaSurface, d: wp.vec3) -> wp.vec3:
    """Sky radiance towards the unit direction ``d``: ``sky_horizon + (sky_zenith - sky_horizon) * d_z`` (d_z
    clamped to [0, 1]: below the horizon the horizon's)."""
    return sea.sky_horizon + wp.clamp(d[2], 0.0, 1.0) * (sea.sky_zenith - sea.sky_horizon)


@wp.func
def bounce_ray_origin(origin: wp.vec3, d: wp.vec3, cr: Crossing) -> wp.vec3:
    """Start of the in-water ray leaving the surface crossing ``cr``: the surface point moved ``SHADOW_OFFSET``
    into the water (towards the camera from below, away from it from above)."""
    q = origin + cr.distance * d
    side = 1.0
    if cr.kind == CROSS_FROM_AIR:
        side = -1.0
    return q + (side * SHADOW_OFFSET) * cr.normal


@wp.func
def bounce_ray_direction(d: wp.vec3, cr: Crossing, sea: SeaSurface) -> wp.vec3:
    """Direction of the in-water ray leaving the crossing ``cr``: the mirror ray from below (it stays in the
    water, at any angle), the refracted ray from above."""
    if cr.kind == CROSS_FROM_WATER:
        return reflect(d, cr.normal)
    return refract(d, cr.normal, 1.0 / sea.n_water)


@wp.kernel
def camera_bounce_ray_kernel(
    poses: wp.array(dtype=wp.transform),
    in_water: wp.array(dtype=wp.int32),
    sub_samples: int,
    sample: int,
    first_pixel: int,
    width: int,
    height: int,
    directions: wp.array(dtype=wp.vec3),
    hit_distance: wp.array(dtype=wp.float32),
    hit_normal: wp.array(dtype=wp.vec3),
    hit_face: wp.array(dtype=wp.int32),
    hit_obj: wp.array(dtype=wp.int32),
    sea: SeaSurface,
    bounce_origins: wp.array(dtype=wp.vec3),
    bounce_directions: wp.array(dtype=wp.vec3),
    crossings: wp.array(dtype=wp.int32),
    start: int,
):
    """The in-water ray of primary ray ``i`` past the sea surface (:func:`surface_crossing`): the mirror ray of a
    ray reaching the surface from below, the refracted ray of one reaching it from above; a zero direction (a miss)
    for a ray that does not reach the surface. ``crossings[0]`` counts the rays that do (zero it first)."""
    i = wp.tid() + start
    px = pixel_index(i, first_pixel, width, height)
    k = px[0] * sub_samples + sample
    origin = wp.transform_get_translation(poses[k])
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    cr = surface_crossing(origin, d, h, in_water[k], sea)
    bounce_origins[i] = origin
    bounce_directions[i] = wp.vec3(0.0, 0.0, 0.0)
    if cr.kind != CROSS_NONE:
        bounce_origins[i] = bounce_ray_origin(origin, d, cr)
        bounce_directions[i] = bounce_ray_direction(d, cr, sea)
        wp.atomic_add(crossings, 0, 1)


@wp.struct
class ShadedHit:
    """The scene point a pixel shows: ``hit`` 0 when its ray (primary, or the in-water ray past the surface) hits
    nothing (or the sea surface again); ``point`` (world, m), facing ``normal``, node ``obj``, triangle ``face``,
    ``distance`` (m along that ray: for an in-water ray its water path from the surface to the point)."""

    hit: int
    point: wp.vec3
    normal: wp.vec3
    obj: int
    face: int
    distance: float


@wp.func
def shaded_hit(origin: wp.vec3, d: wp.vec3, h: RayHit, cr: Crossing, bounce_origins: wp.array(dtype=wp.vec3),
               bounce_directions: wp.array(dtype=wp.vec3), bounce_distance: wp.array(dtype=wp.float32),
               bounce_normal: wp.array(dtype=wp.vec3), bounce_face: wp.array(dtype=wp.int32),
               bounce_obj: wp.array(dtype=wp.int32), i: int, sea_obj: int) -> ShadedHit:
    """The point pixel ray ``i`` shades: its primary hit ``h`` when it does not reach the sea surface, else the hit
    of its in-water ray (the bounce arrays, read only then). The in-water ray is cast from ``SHADOW_OFFSET`` below
    the surface, along its normal (:func:`bounce_ray_origin`); its water path counts from where that ray crosses the
    surface's plane, ``SHADOW_OFFSET / |n . d|`` behind its origin (at most ``SHADOW_OFFSET / GRAZING_COSINE``), so
    the whole depth of water attenuates and scatters: a floor z below a flat surface is ``z / cos`` away."""
    out = ShadedHit()
    out.hit = h.hit
    out.point = origin + h.distance * d
    out.normal = h.normal
    out.obj = h.obj
    out.face = h.face
    out.distance = h.distance
    if cr.kind != CROSS_NONE:
        bo = bounce_origins[i]
        bd = bounce_directions[i]
        hb = load_hit(bounce_distance, bounce_normal, bounce_face, bounce_obj, i, bd)
        out.hit = hb.hit
        if hb.obj == sea_obj:
            out.hit = 0
        out.point = bo + hb.distance * bd
        out.normal = hb.normal
        out.obj = hb.obj
        out.face = hb.face
        out.distance = hb.distance + SHADOW_OFFSET / wp.max(wp.abs(wp.dot(cr.normal, bd)), GRAZING_COSINE)
    return out


@wp.kernel
def camera_shadow_ray_kernel(
    poses: wp.array(dtype=wp.transform),
    in_water: wp.array(dtype=wp.int32),
    sub_samples: int,
    sample: int,
    first_pixel: int,
    width: int,
    height: int,
    directions: wp.array(dtype=wp.vec3),
    hit_distance: wp.array(dtype=wp.float32),
    hit_normal: wp.array(dtype=wp.vec3),
    hit_face: wp.array(dtype=wp.int32),
    hit_obj: wp.array(dtype=wp.int32),
    sea: SeaSurface,
    bounce_origins: wp.array(dtype=wp.vec3),
    bounce_directions: wp.array(dtype=wp.vec3),
    bounce_distance: wp.array(dtype=wp.float32),
    bounce_normal: wp.array(dtype=wp.vec3),
    bounce_face: wp.array(dtype=wp.int32),
    bounce_obj: wp.array(dtype=wp.int32),
    lights: Lights,
    shadow_origins: wp.array(dtype=wp.vec3),
    shadow_directions: wp.array(dtype=wp.vec3),
    shadow_range: wp.array(dtype=wp.float32),
    start: int,
):
    """The shadow rays of the point pixel ray ``i`` shades (:func:`shaded_hit`): ray ``i * (1 + L)`` towards the
    sun (up to the mean surface), ray ``i * (1 + L) + 1 + k`` towards light k (up to ``SHADOW_OFFSET`` short of
    it), all from the point lifted ``SHADOW_OFFSET`` along its normal. A ray that need not be cast (no point, a
    surface facing away from the source, a light whose cone misses the point, the sun off or the point above the
    surface) gets a zero direction: the backend returns a miss for it (lit), as for an unblocked ray."""
    i = wp.tid() + start
    px = pixel_index(i, first_pixel, width, height)
    k = px[0] * sub_samples + sample
    pose = poses[k]
    origin = wp.transform_get_translation(pose)
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    cr = surface_crossing(origin, d, h, in_water[k], sea)
    s = shaded_hit(origin, d, h, cr, bounce_origins, bounce_directions, bounce_distance, bounce_normal, bounce_face,
                   bounce_obj, i, sea.sea_obj)
    n_lights = lights.light_position.shape[0]
    base = i * (1 + n_lights)
    zero = wp.vec3(0.0, 0.0, 0.0)
    p = s.point
    n = s.normal
    lift = p + SHADOW_OFFSET * n
    sun_range = 0.0
    if s.hit != 0:
        sun_range = sun_shadow_range(lights, p, n)
    shadow_origins[base] = lift
    shadow_directions[base] = zero
    shadow_range[base] = 1.0
    if sun_range > 0.0:
        shadow_directions[base] = lights.sun_direction
        shadow_range[base] = sun_range
    for j in range(n_lights):
        jj = base + 1 + j
        shadow_origins[jj] = lift
        shadow_directions[jj] = zero
        shadow_range[jj] = 1.0
        if s.hit != 0:
            lp = light_path(lights, pose, j, p, n)
            reach = lp.distance - SHADOW_OFFSET
            if lp.cos_n > 0.0 and lp.cone > 0.0 and reach > 0.0:
                shadow_directions[jj] = lp.direction
                shadow_range[jj] = reach


@wp.func
def lit(lights: Lights, shadow_face: wp.array(dtype=wp.int32), shadow_obj: wp.array(dtype=wp.int32), sea_obj: int,
        j: int) -> int:
    """1 if shadow ray ``j`` reached its source blocked by nothing but the sea surface (which lets the light
    through; always 1 with shadows off)."""
    out = 1
    if lights.shadows != 0:
        if shadow_face[j] >= 0 and shadow_obj[j] != sea_obj:
            out = 0
    return out


@wp.func
def irradiance(lights: Lights, pose: wp.transform, p: wp.vec3, n: wp.vec3, beta_d: wp.vec3,
               shadow_face: wp.array(dtype=wp.int32), shadow_obj: wp.array(dtype=wp.int32), sea_obj: int,
               base: int) -> wp.vec3:
    """Irradiance at the point ``p`` (normal ``n``): ambient, the sun dimmed by K_d over the point's depth, each
    light with its cone, cosine, inverse square and exp(-beta^D d) along its own path (module docstring); sources
    blocked by their shadow rays ``base``, ``base + 1 + k`` are left out."""
    e = lights.ambient
    if wp.length_sq(lights.sun_irradiance) > 0.0:
        cos_sun = wp.dot(n, lights.sun_direction)
        if cos_sun > 0.0:
            depth = wp.max(lights.surface_z - p[2], 0.0)
            if lit(lights, shadow_face, shadow_obj, sea_obj, base) != 0:
                e = e + cos_sun * wp.cw_mul(lights.sun_irradiance, vec_exp(-depth * lights.diffuse_attenuation))
    for k in range(lights.light_position.shape[0]):
        lp = light_path(lights, pose, k, p, n)
        if lp.distance > 0.0:
            if lp.cos_n > 0.0 and lp.cone > 0.0:
                if lit(lights, shadow_face, shadow_obj, sea_obj, base + 1 + k) != 0:
                    dist = lp.distance
                    e = e + (lp.cone * lp.cos_n / (dist * dist)) * wp.cw_mul(lights.light_intensity[k],
                                                                             vec_exp(-dist * beta_d))
    return e


@wp.func
def veiling(water: Water, lights: Lights, origin: wp.vec3) -> wp.vec3:
    """B_inf seen by a camera at ``origin``: the water's veiling light, times ambient + the sun dimmed over the
    camera's depth when it scales with the light."""
    veil = water.veiling_light
    if water.veiling_scales_with_light != 0:
        cam_depth = wp.max(lights.surface_z - origin[2], 0.0)
        e_cam = lights.ambient + wp.cw_mul(lights.sun_irradiance, vec_exp(-cam_depth * lights.diffuse_attenuation))
        veil = wp.cw_mul(water.veiling_light, e_cam)
    return veil


@wp.func
def surface_albedo(object_albedo: wp.array(dtype=wp.vec3), tex: SceneTextures, obj: int, face: int,
                   p: wp.vec3) -> wp.vec3:
    """Albedo of node ``obj`` at the point ``p`` of its triangle ``face``: its texture when it has one."""
    albedo = object_albedo[obj]
    t = tex.object_texture[obj]
    if t >= 0:
        albedo = sample_texture(tex.texels, tex.info, t, hit_uv(tex.points, tex.indices, tex.face_uv, face, p))
    return albedo


@wp.func
def through_water(j: wp.vec3, z: float, water: Water, veil: wp.vec3) -> wp.vec3:
    """Radiance ``j`` seen through ``z`` m of water: J exp(-beta^D z) + B_inf (1 - exp(-beta^B z))."""
    return wp.cw_mul(j, vec_exp(-z * water.beta_d)) + wp.cw_mul(veil, wp.vec3(1.0, 1.0, 1.0)
                                                                - vec_exp(-z * water.beta_b))


@wp.struct
class Radiance:
    """A pixel ray's linear radiance at the camera ``img`` and its in-air (water-free) radiance ``j``."""

    img: wp.vec3
    j: wp.vec3


@wp.func
def surface_radiance(d: wp.vec3, cr: Crossing, j_water: wp.vec3, l_water: wp.vec3, sea: SeaSurface) -> Radiance:
    """Radiance leaving the sea surface towards the camera along ``-d`` at the crossing ``cr`` (``img``), and the same
    without water (``j``), given the in-water ray's radiance arriving at the surface ``l_water`` (``j_water`` its
    scene radiance without water):

        from the water:  R l_water + (1 - R) n^2 L_sky(t)     (R = 1 past the critical angle: no sky)
        from the air:    R L_sky(r) + (1 - R) / n^2 l_water

    R the Fresnel reflectance at the incidence angle, t the refracted and r the mirror direction into the air, n the
    water's refractive index (the n^2 of radiance crossing the interface: L / n^2 is conserved)."""
    out = Radiance()
    cos_i = -wp.dot(d, cr.normal)
    n2 = sea.n_water * sea.n_water
    if cr.kind == CROSS_FROM_WATER:
        r = fresnel_reflectance(cos_i, sea.n_water, 1.0)
        sky = wp.vec3(0.0, 0.0, 0.0)
        if r < 1.0:
            sky = ((1.0 - r) * n2) * sky_radiance(sea, refract(d, cr.normal, sea.n_water))
        out.img = r * l_water + sky
        out.j = r * j_water + sky
    else:
        r = fresnel_reflectance(cos_i, 1.0, sea.n_water)
        sky = r * sky_radiance(sea, reflect(d, cr.normal))
        out.img = sky + ((1.0 - r) / n2) * l_water
        out.j = sky + ((1.0 - r) / n2) * j_water
    return out


@wp.kernel
def camera_shade_kernel(
    poses: wp.array(dtype=wp.transform),
    in_water: wp.array(dtype=wp.int32),
    sub_samples: int,
    sample: int,
    geometry_sample: int,
    first_pixel: int,
    width: int,
    height: int,
    fx: float,
    fy: float,
    cx: float,
    cy: float,
    use_rays: int,
    rays: wp.array2d(dtype=wp.vec3),
    directions: wp.array(dtype=wp.vec3),
    hit_distance: wp.array(dtype=wp.float32),
    hit_normal: wp.array(dtype=wp.vec3),
    hit_face: wp.array(dtype=wp.int32),
    hit_obj: wp.array(dtype=wp.int32),
    sea: SeaSurface,
    bounce_origins: wp.array(dtype=wp.vec3),
    bounce_directions: wp.array(dtype=wp.vec3),
    bounce_distance: wp.array(dtype=wp.float32),
    bounce_normal: wp.array(dtype=wp.vec3),
    bounce_face: wp.array(dtype=wp.int32),
    bounce_obj: wp.array(dtype=wp.int32),
    shadow_face: wp.array(dtype=wp.int32),
    shadow_obj: wp.array(dtype=wp.int32),
    object_albedo: wp.array(dtype=wp.vec3),
    object_label: wp.array(dtype=wp.int32),
    tex: SceneTextures,
    lights: Lights,
    water: Water,
    use_vignette: int,
    vignette: wp.array2d(dtype=wp.float32),
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
    """Shade primary ray ``i`` of a tile (pixel ``first_pixel + i``, sub-sample ``sample``) and add it to the
    pixel's ``linear`` / ``in_air`` sums (sub-sample 0 starts them); the last sub-sample divides the sums by
    ``sub_samples`` and encodes ``rgb = encode_u8(exposure * I * vignette[row, col])`` (vignette 1 with
    ``use_vignette`` 0). The geometry products (range, depth, label, instance, normal) are those of sub-sample
    ``geometry_sample``: the first hit, or the sea surface where the ray reaches it (label and instance -1 for the
    flat surface, which is no scene node).

    The shaded point (:func:`shaded_hit`) has J = albedo * irradiance (its shadow rays' hits ``shadow_face`` /
    ``shadow_obj``, read only with ``lights.shadows`` 1). A ray that does not reach the surface: from a camera in
    the water (``in_water``) I = J exp(-beta^D z) + B_inf (1 - exp(-beta^B z)), B_inf for a miss; from a camera in
    the air I = J, the sky for a miss. A ray that reaches the surface sees :func:`surface_radiance` of its in-water
    ray's radiance (that ray's J through its water path, B_inf if it hits nothing), through the water between
    the camera and the surface when the camera is in the water."""
    i = wp.tid() + start
    px = pixel_index(i, first_pixel, width, height)
    b = px[0]
    row = px[1]
    col = px[2]
    k = b * sub_samples + sample
    pose = poses[k]
    origin = wp.transform_get_translation(pose)
    d = directions[i]
    h = load_hit(hit_distance, hit_normal, hit_face, hit_obj, i, d)
    cr = surface_crossing(origin, d, h, in_water[k], sea)
    s = shaded_hit(origin, d, h, cr, bounce_origins, bounce_directions, bounce_distance, bounce_normal, bounce_face,
                   bounce_obj, i, sea.sea_obj)
    veil = veiling(water, lights, origin)
    j = wp.vec3(0.0, 0.0, 0.0)
    img = veil
    if s.hit != 0:
        e = irradiance(lights, pose, s.point, s.normal, water.beta_d, shadow_face, shadow_obj, sea.mesh_obj,
                       i * (1 + lights.light_position.shape[0]))
        j = wp.cw_mul(surface_albedo(object_albedo, tex, s.obj, s.face, s.point), e)
        img = through_water(j, s.distance, water, veil)
    if cr.kind != CROSS_NONE:
        rad = surface_radiance(d, cr, j, img, sea)
        j = rad.j
        img = rad.img
        if cr.kind == CROSS_FROM_WATER:
            img = through_water(img, cr.distance, water, veil)
    elif in_water[k] == 0:
        img = j
        if h.hit == 0:
            img = sky_radiance(sea, d)

    if sample == geometry_sample:
        if cr.kind != CROSS_NONE:
            out_range[b, row, col] = cr.distance
            out_depth[b, row, col] = cr.distance * sensor_ray(col, row, fx, fy, cx, cy, use_rays, rays)[0]
            out_label[b, row, col] = -1
            out_instance[b, row, col] = -1
            if h.hit != 0 and h.obj == sea.sea_obj:
                out_label[b, row, col] = object_label[h.obj]
                out_instance[b, row, col] = h.obj
            out_normal[b, row, col] = cr.normal
        elif h.hit != 0:
            out_range[b, row, col] = h.distance
            out_depth[b, row, col] = h.distance * sensor_ray(col, row, fx, fy, cx, cy, use_rays, rays)[0]
            out_label[b, row, col] = object_label[h.obj]
            out_instance[b, row, col] = h.obj
            out_normal[b, row, col] = h.normal
        else:
            out_range[b, row, col] = float(wp.inf)
            out_depth[b, row, col] = float(wp.inf)
            out_label[b, row, col] = -1
            out_instance[b, row, col] = -1
            out_normal[b, row, col] = wp.vec3(0.0, 0.0, 0.0)

    img_sum = wp.vec3(0.0, 0.0, 0.0)
    j_sum = wp.vec3(0.0, 0.0, 0.0)
    if sample > 0:
        img_sum = out_linear[b, row, col]
        j_sum = out_in_air[b, row, col]
    img_sum = img_sum + img
    j_sum = j_sum + j
    if sample == sub_samples - 1:
        if sub_samples > 1:
            img_sum = img_sum / float(sub_samples)
            j_sum = j_sum / float(sub_samples)
        g = exposure
        if use_vignette != 0:
            g = exposure * vignette[row, col]
        out_rgb[b, row, col, 0] = encode_u8(g * img_sum[0])
        out_rgb[b, row, col, 1] = encode_u8(g * img_sum[1])
        out_rgb[b, row, col, 2] = encode_u8(g * img_sum[2])
    out_linear[b, row, col] = img_sum
    out_in_air[b, row, col] = j_sum


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
