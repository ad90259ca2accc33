"""oceansim_py: GPU-accelerated underwater sensor rendering with NVIDIA Warp.

The public API, re-exported from the modules that own it.
"""

from oceansim_py.errors import ConfigError, DatasetError, OceanSimError, SceneError
from oceansim_py.poses import as_poses, pose_from_euler
from oceansim_py.runtime import resolve_device, set_cpu_threads
from oceansim_py.scene import (
    Material,
    MaterialTable,
    Node,
    RaycastResult,
    Scene,
    TriangleMesh,
    builtin_scene_names,
    load_scene,
)

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "DatasetError",
    "Material",
    "MaterialTable",
    "Node",
    "OceanSimError",
    "RaycastResult",
    "Scene",
    "SceneError",
    "TriangleMesh",
    "__version__",
    "as_poses",
    "builtin_scene_names",
    "load_scene",
    "pose_from_euler",
    "resolve_device",
    "set_cpu_threads",
]
