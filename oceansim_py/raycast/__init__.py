"""Ray-cast backends behind ``Scene.raycast`` / ``Scene.raycast_into`` (interface: :mod:`.backend`).

- ``warp``: Warp's BVH, on CPU and CUDA; the default on CUDA and the fallback everywhere.
- ``embree``: Intel Embree 4 on the CPU (``pip install 'oceansim_py[embree]'``); the default for CPU scenes
  when installed.

Choice, first that applies: a sensor config's ``raycast_backend`` field (that sensor's casts only, through
``Scene.backend_for``); ``load_scene(..., raycast_backend=...)`` / ``Scene(..., raycast_backend=...)`` /
``Scene.set_raycast_backend(...)``; the environment variable ``OCEANSIM_RAYCAST_BACKEND`` (``warp``, ``embree`` or
``auto``; ``embree`` there applies to CPU scenes, a CUDA scene keeps ``warp``); else ``auto``. Asking for
``embree`` when it is not installed, or for a CUDA scene by argument or sensor field, is a ``ConfigError``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from oceansim_py.errors import ConfigError
from oceansim_py.raycast.backend import BACKENDS, RaycastBackend
from oceansim_py.raycast.rtcore import embree_available, embree_library

if TYPE_CHECKING:
    import warp as wp

    from oceansim_py.scene.geometry import WorldGeometry

ENV_VAR = "OCEANSIM_RAYCAST_BACKEND"
CHOICES = ("auto", *BACKENDS)


def _checked(name: str, what: str) -> str:
    key = str(name).strip().lower()
    if key not in CHOICES:
        raise ConfigError(f"{what}={name!r} is not a ray-cast backend; choose one of {', '.join(CHOICES)}")
    return key


def requested_backend() -> str:
    """The backend ``OCEANSIM_RAYCAST_BACKEND`` asks for (``auto`` when unset)."""
    env = os.environ.get(ENV_VAR, "").strip()
    return _checked(env, ENV_VAR) if env else "auto"


def check_backend_choice(name: str | None, what: str = "raycast_backend") -> None:
    """Check a sensor config's backend override ``name`` (``None``: the scene's choice) where no scene is known
    yet: ``ConfigError`` naming ``what`` for an unknown name or for ``embree`` without Embree installed. Whether
    it suits the scene's device is checked at the first cast (:meth:`Scene.backend_for`)."""
    if name is not None and _checked(name, what) == "embree":
        _require_embree(what)


def _require_embree(what: str) -> None:
    try:
        embree_library()
    except ConfigError as exc:
        raise ConfigError(f"{what}='embree' asks for the embree ray-cast backend: {exc}") from None


def resolve_backend_name(device: "wp.context.Device", requested: str | None = None) -> str:
    """The backend a scene on ``device`` uses, given its own request (``None``: the environment's, else auto)."""
    if requested is not None:
        choice = _checked(requested, "raycast_backend")
        explicit = True
    else:
        choice = requested_backend()
        explicit = False
    if choice == "warp":
        return "warp"
    if choice == "embree":
        if not device.is_cpu:
            if explicit:
                raise ConfigError(f"raycast_backend='embree' casts on the CPU, but the scene is on {device}; "
                                  f"load it with device='cpu' or use raycast_backend='warp'")
            return "warp"
        _require_embree("raycast_backend" if explicit else ENV_VAR)
        return "embree"
    return "embree" if device.is_cpu and embree_available() else "warp"


def make_backend(name: str, geometry: "WorldGeometry", source: str = "<scene>") -> RaycastBackend:
    """A backend called ``name`` (already resolved) over ``geometry``."""
    if name == "embree":
        from oceansim_py.raycast.embree_backend import EmbreeBackend

        return EmbreeBackend(geometry, source)
    from oceansim_py.raycast.warp_backend import WarpBackend

    return WarpBackend(geometry)


__all__ = ["BACKENDS", "CHOICES", "ENV_VAR", "RaycastBackend", "check_backend_choice", "make_backend",
           "requested_backend", "resolve_backend_name"]
