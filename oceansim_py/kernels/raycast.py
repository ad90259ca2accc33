"""Ray/BVH queries shared by every sensor, and the batch ray-cast kernel behind ``Scene.raycast``.

Frames: world, Z up, metres. Directions must be unit vectors (the kernels normalise what they are given, see
:func:`cast_direction`); distances are metres along the ray. Misses have ``hit = 0``, ``face = obj = -1`` and
distance ``+inf``.

Sensors cast in three steps: a ray-generation kernel writes world origins and directions into scratch, the
scene's backend (``Scene.raycast_into``) fills a ``RaycastResult``, and the sensor's shading kernel reads ray i's
hit back with :func:`load_hit`, the same :class:`RayHit` that :func:`cast_ray` returns for that ray.
"""

from __future__ import annotations

import warp as wp

#: Distance written for a miss.
MISS_DISTANCE = float("inf")


@wp.struct
class RayHit:
    """The first hit of one ray.

    hit: 1 if the ray hit within range, else 0. distance: metres along the unit ray. normal: unit geometric
    normal turned to face the ray (``dot(normal, direction) <= 0``). face: triangle index in the world mesh.
    obj: scene node id owning the face. cos_incidence: cos psi = -dot(direction, normal) in [0, 1].
    """

    hit: int
    distance: float
    normal: wp.vec3
    face: int
    obj: int
    cos_incidence: float


@wp.func
def no_hit() -> RayHit:
    """A miss: hit 0, distance +inf, zero normal, face and obj -1, cos_incidence 0."""
    h = RayHit()
    h.hit = 0
    h.distance = float(wp.inf)
    h.normal = wp.vec3(0.0, 0.0, 0.0)
    h.face = -1
    h.obj = -1
    h.cos_incidence = 0.0
    return h


@wp.func
def facing_normal(n: wp.vec3, direction: wp.vec3) -> wp.vec3:
    """``n`` normalised and flipped if needed so that it faces against ``direction`` (two-sided surfaces)."""
    m = wp.normalize(n)
    if wp.dot(m, direction) > 0.0:
        m = -m
    return m


@wp.func
def cast_ray(mesh: wp.uint64, face_object: wp.array(dtype=wp.int32), origin: wp.vec3, direction: wp.vec3,
             max_range: float) -> RayHit:
    """First hit of the ray ``origin + t * direction`` (``direction`` unit) for ``0 < t <= max_range``."""
    h = no_hit()
    q = wp.mesh_query_ray(mesh, origin, direction, max_range)
    if q.result:
        if q.t > 0.0:
            n = facing_normal(q.normal, direction)
            h.hit = 1
            h.distance = q.t
            h.normal = n
            h.face = q.face
            h.obj = face_object[q.face]
            h.cos_incidence = wp.clamp(-wp.dot(direction, n), 0.0, 1.0)
    return h


#: A direction whose length is within this of 1 is cast as given (:func:`cast_direction`).
UNIT_TOLERANCE = wp.constant(1.0e-6)

#: The shortest direction a backend casts (2^-63): below it the float32 squared length is subnormal or 0, so the
#: length, and the direction divided by it, would be wrong (a (1e-22, 0, 0) direction was cast 0.95 m too far); a
#: shorter direction is a miss, like a zero one. ``kernels.embree_cast`` holds the same value.
MIN_DIRECTION_LENGTH = wp.constant(1.0842021724855044e-19)


@wp.func
def cast_direction(d: wp.vec3, length: float) -> wp.vec3:
    """The unit direction a backend casts for ``d`` of length ``length`` > 0: ``d`` itself when it is unit within
    float rounding (``|length - 1| <= UNIT_TOLERANCE``), else ``d / length``. A sensor's unit direction is so cast
    bit for bit as the sensor computed it (dividing by its rounded length would move it by an ulp)."""
    u = d
    if wp.abs(length - 1.0) > UNIT_TOLERANCE:
        u = d / length
    return u


@wp.func
def load_hit(distance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3), face: wp.array(dtype=wp.int32),
             obj: wp.array(dtype=wp.int32), i: int, direction: wp.vec3) -> RayHit:
    """Ray i's hit from a backend's ``RaycastResult`` arrays, as :func:`cast_ray` gives it for the unit
    ``direction`` the ray was cast along (``cos_incidence`` from that direction and the stored facing normal)."""
    h = no_hit()
    f = face[i]
    if f >= 0:
        n = normal[i]
        h.hit = 1
        h.distance = distance[i]
        h.normal = n
        h.face = f
        h.obj = obj[i]
        h.cos_incidence = wp.clamp(-wp.dot(direction, n), 0.0, 1.0)
    return h


@wp.func
def two_way_absorption(alpha_db_per_m: float, r: float) -> float:
    """Two-way intensity loss factor 10^(-2 alpha r / 10) for absorption alpha (dB/m, one way) at range r (m)."""
    return wp.pow(10.0, -0.2 * alpha_db_per_m * r)


@wp.func
def sensor_to_world(pose: wp.transform, v: wp.vec3) -> wp.vec3:
    """Rotate a sensor-frame (FLU) direction into the world frame."""
    return wp.quat_rotate(wp.transform_get_rotation(pose), v)


@wp.func
def fan_direction(bearing: float, elevation: float) -> wp.vec3:
    """Unit FLU direction of a ray at ``bearing`` (rad, positive to starboard) and ``elevation`` (rad, up)."""
    ce = wp.cos(elevation)
    return wp.vec3(ce * wp.cos(bearing), -ce * wp.sin(bearing), wp.sin(elevation))


@wp.func
def ray_range(max_range: wp.array(dtype=wp.float32), i: int) -> float:
    """Ray i's maximum range (m): ``max_range`` holds one value for every ray, or one per ray."""
    r = max_range[0]
    if max_range.shape[0] > 1:
        r = max_range[i]
    return r


@wp.kernel
def raycast_kernel(mesh: wp.uint64, face_object: wp.array(dtype=wp.int32), origins: wp.array(dtype=wp.vec3),
                   directions: wp.array(dtype=wp.vec3), max_range: wp.array(dtype=wp.float32),
                   distance: wp.array(dtype=wp.float32), normal: wp.array(dtype=wp.vec3),
                   face: wp.array(dtype=wp.int32), obj: wp.array(dtype=wp.int32), start: int):
    """Batch ray cast: element i casts ray i (``max_range`` has one value, or one per ray); a direction shorter
    than :data:`MIN_DIRECTION_LENGTH` (zero among them) or not finite is a miss."""
    i = wp.tid() + start
    d = directions[i]
    L = wp.length(d)
    r = ray_range(max_range, i)
    if L >= MIN_DIRECTION_LENGTH:
        h = cast_ray(mesh, face_object, origins[i], cast_direction(d, L), r)
        distance[i] = h.distance
        normal[i] = h.normal
        face[i] = h.face
        obj[i] = h.obj
    else:
        distance[i] = float(wp.inf)
        normal[i] = wp.vec3(0.0, 0.0, 0.0)
        face[i] = -1
        obj[i] = -1
