"""The ``warp`` ray-cast backend: Warp's BVH (``wp.Mesh``) queried by ``raycast_kernel``, on CPU or CUDA."""

from __future__ import annotations

from typing import TYPE_CHECKING

import warp as wp

from oceansim_py.kernels.raycast import raycast_kernel
from oceansim_py.runtime import launch_1d

if TYPE_CHECKING:
    from oceansim_py.scene.geometry import WorldGeometry
    from oceansim_py.scene.graph import RaycastResult


class WarpBackend:
    """Casts against ``WorldGeometry.mesh`` (refitted by ``update_animated``; nothing of its own to update)."""

    name = "warp"

    def __init__(self, geometry: "WorldGeometry") -> None:
        self.geometry = geometry

    def cast(self, origins: wp.array, directions: wp.array, max_range: wp.array, out: "RaycastResult",
             threads: int | None = None) -> None:
        g = self.geometry
        launch_1d(raycast_kernel, origins.shape[0],
                  [g.mesh.id, g.face_object, origins, directions, max_range, out.distance, out.normal, out.face,
                   out.obj], g.device, threads=threads)

    def update(self) -> None:
        return None

    def describe(self) -> str:
        return f"warp (wp.Mesh BVH on {self.geometry.device})"
