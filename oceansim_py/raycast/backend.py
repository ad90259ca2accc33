"""The ray-cast backend interface every caller of ``Scene.raycast`` / ``Scene.raycast_into`` goes through.

A backend owns whatever acceleration structure it needs over a scene's :class:`WorldGeometry` and answers batch
ray casts into preallocated device arrays:

    inputs   origins (N,) vec3 and directions (N,) vec3 (world frame, metres; directions need not be unit, a
             zero or non-finite one, or one shorter than 2^-63 ~ 1.1e-19 (``kernels.raycast.MIN_DIRECTION_LENGTH``:
             too short to normalise in float32) is a miss, as is one whose float32 length overflows (longer than
             ~1.8e19); one that is unit within 1e-6 is cast exactly as given, others are normalised:
             ``kernels.raycast.cast_direction``), max_range (1,) or (N,) float32 metres;
    outputs  distance (N,) float32 metres along the unit ray, ``inf`` for a miss; normal (N,) vec3 unit
             geometric normal of the world triangle turned to face the ray (zero for a miss); face (N,) int32
             world triangle index (``WorldGeometry.indices``), -1 for a miss; obj (N,) int32 scene node id,
             -1 for a miss (``object_reflectivity[obj]``, ``object_label[obj]`` give material and label).

Every array is contiguous (the ``embree`` backend reads and writes them through raw pointers) and the outputs
hold N entries: :func:`check_cast_arrays`, which ``Scene.raycast_into`` runs before any backend, refuses others.

A hit is the nearest intersection with ``0 < t < max_range``. Every backend gives the same hits, faces and
objects, and distances equal within float rounding (edge ties aside: a ray through the shared edge of two
triangles may be given either).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from oceansim_py.errors import SceneError

if TYPE_CHECKING:
    import warp as wp

    from oceansim_py.scene.graph import RaycastResult

#: Backend names ``raycast_backend=`` and ``OCEANSIM_RAYCAST_BACKEND`` accept.
BACKENDS = ("warp", "embree")


def check_cast_arrays(origins: "wp.array", directions: "wp.array", max_range: "wp.array",
                      out: "RaycastResult") -> None:
    """Raise :class:`SceneError` unless the arrays of a batch cast follow the array contract (module docstring):
    all contiguous, directions and the four outputs as long as ``origins`` (N), ``max_range`` 1 or N long. A
    strided view would be read and written as if it were contiguous by the ``embree`` backend (wrong rays, wrong
    hits), and a short output written past its end by either backend."""
    n = int(origins.shape[0])
    named = [("origins", origins, (n,)), ("directions", directions, (n,)), ("max_range", max_range, (1, n)),
             ("distance", out.distance, (n,)), ("normal", out.normal, (n,)), ("face", out.face, (n,)),
             ("obj", out.obj, (n,))]
    for name, a, lengths in named:
        if a.ndim != 1 or int(a.shape[0]) not in lengths or not a.is_contiguous:
            what = f"shape {tuple(a.shape)}" + ("" if a.is_contiguous else ", a strided view")
            raise SceneError(f"raycast_into: {name} must be a contiguous 1-D array of "
                             f"{' or '.join(str(x) for x in dict.fromkeys(lengths))} entries for {n} rays, got "
                             f"{what}; pass wp.empty/wp.array arrays (or .contiguous() copies of views)")


class RaycastBackend(Protocol):
    """What :class:`Scene` needs from a ray-cast backend (see the module docstring for the array contract)."""

    #: ``"warp"`` or ``"embree"``.
    name: str

    def cast(self, origins: "wp.array", directions: "wp.array", max_range: "wp.array", out: "RaycastResult",
             threads: int | None = None) -> None:
        """Cast ``origins.shape[0]`` rays into ``out``; on CPU, ``threads`` launch threads (``None``: all)."""
        ...

    def update(self) -> None:
        """Follow the animated nodes after ``WorldGeometry.update_animated`` moved them (``Scene.set_time``)."""
        ...

    def describe(self) -> str:
        """One line for ``oceansim-py info`` and ``Scene.summary``."""
        ...
