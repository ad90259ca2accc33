"""The ``raycast_backend`` field of every ray-casting sensor's config (a dataclass mixin).

A config that inherits :class:`RaycastBackendField` gains the field (default ``None``, so existing configs,
presets and YAML rigs are unchanged) and calls :meth:`RaycastBackendField.validate_raycast_backend` from its
``validate``. The sensor passes the field to every cast it makes (``RayBuffers.cast``, ``Scene.raycast_into``,
``Scene.raycast``), which casts through ``Scene.backend_for``: backend choice in :mod:`oceansim_py.raycast`.
"""

from __future__ import annotations

import dataclasses

from oceansim_py.raycast import check_backend_choice


@dataclasses.dataclass(frozen=True)
class RaycastBackendField:
    """Per-sensor ray-cast backend override.

    Attributes:
        raycast_backend: the backend this sensor's rays are cast with: ``None`` = the scene's choice
            (``load_scene(..., raycast_backend=)``, else ``OCEANSIM_RAYCAST_BACKEND``, else auto); ``"warp"``,
            ``"embree"`` (CPU scenes only) or ``"auto"`` (Embree on a CPU scene when installed, else Warp).
            Backends agree to float32 rounding of the hit distance (tests/test_raycast_backends.py).
    """

    raycast_backend: str | None = None

    def validate_raycast_backend(self) -> None:
        """``ConfigError`` naming ``<Config>.raycast_backend`` for an unknown name, or for ``embree`` when it is not
        installed (the scene's messages)."""
        check_backend_choice(self.raycast_backend, f"{type(self).__name__}.raycast_backend")
