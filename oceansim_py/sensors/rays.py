"""Per-batch ray scratch of a ray-casting sensor: the rays its generation kernel writes and the hits the scene's
ray-cast backend returns for them (``Scene.raycast_into``; array contract: :mod:`oceansim_py.raycast.backend`).

A sensor renders in three steps: its ray-generation kernel writes world origins and directions (world frame,
metres, unit directions) into :attr:`RayBuffers.origins` / :attr:`RayBuffers.directions`, :meth:`RayBuffers.cast`
hands them to the backend (the scene's, or the one the sensor config's ``raycast_backend`` names), and its
shading kernel reads ray i's hit with ``kernels.raycast.load_hit``. A sensor keeps one ``RayBuffers`` per batch
size inside its per-thread scratch (:class:`~oceansim_py.sensors.scratch.ScratchCache`), so a render allocates
nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import warp as wp

from oceansim_py.scene.graph import RaycastResult


class RayBuffers:
    """Device scratch for ``n_rays`` rays on ``device``: origins, directions (vec3), the one maximum range
    ``max_range`` (m) of every ray in a (1,) float32 array, and the backend's :class:`RaycastResult` (distance,
    normal, face, obj)."""

    #: Device bytes per ray: origin, direction, distance, normal, face, obj.
    BYTES_PER_RAY = 12 + 12 + 4 + 12 + 4 + 4

    def __init__(self, n_rays: int, device: Any, max_range: float) -> None:
        self.origins = wp.empty(n_rays, dtype=wp.vec3, device=device)
        self.directions = wp.empty(n_rays, dtype=wp.vec3, device=device)
        self.max_range = wp.array(np.array([max_range], dtype=np.float32), dtype=wp.float32, device=device)
        self.hits = RaycastResult(wp.empty(n_rays, dtype=wp.float32, device=device),
                                  wp.empty(n_rays, dtype=wp.vec3, device=device),
                                  wp.empty(n_rays, dtype=wp.int32, device=device),
                                  wp.empty(n_rays, dtype=wp.int32, device=device))

    def cast(self, scene: Any, backend: str | None, max_range: wp.array | None = None,
             threads: int | None = None) -> None:
        """Cast every ray into :attr:`hits` (``Scene.raycast_into``) through ``scene``'s backend, or the one the
        sensor's ``raycast_backend`` names (``backend``; ``None``: the scene's). ``max_range``: (1,) or one per ray
        (m; default :attr:`max_range`); ``threads``: CPU launch threads (``None``: all)."""
        scene.raycast_into(self.origins, self.directions, self.max_range if max_range is None else max_range,
                           self.hits, threads=threads, backend=backend)

    def hit_args(self) -> list[wp.array]:
        """The result arrays in ``load_hit``'s order (distance, normal, face, obj), for a shading kernel's inputs."""
        h = self.hits
        return [h.distance, h.normal, h.face, h.obj]
