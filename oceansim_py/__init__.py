"""oceansim_py: GPU-accelerated underwater sensor rendering with NVIDIA Warp.

The public API, re-exported from the modules that own it.
"""

from oceansim_py.dataset import DatasetReader, TorchDataset
from oceansim_py.dataset import load as load_dataset
from oceansim_py.errors import ConfigError, DatasetError, OceanSimError, SceneError
from oceansim_py.export import export_dataset
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
from oceansim_py.sensors.barometer import Barometer, BarometerConfig, BarometerResult
from oceansim_py.sensors.camera import CameraResult, UnderwaterCamera, UnderwaterCameraConfig, VehicleLight
from oceansim_py.sensors.dvl import DVL, DVLConfig, DVLResult, adaptive_rate_hz
from oceansim_py.sensors.gps import GPS, GPSConfig, GPSResult
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig, ImagingSonarResult
from oceansim_py.sensors.imu import IMU, IMUConfig, IMUResult
from oceansim_py.sensors.multibeam import MultibeamResult, MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.pose_sensor import PoseSensor, PoseSensorConfig, PoseSensorResult
from oceansim_py.sensors.profiling_sonar import ProfilingResult, ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanResult, SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamResult, SinglebeamSonar, SinglebeamSonarConfig
from oceansim_py.sensors.water import WaterType
from oceansim_py.trajectory import Trajectory

from oceansim_py.version import __version__

__all__ = [
    "DVL", "GPS", "IMU",
    "Barometer", "BarometerConfig", "BarometerResult",
    "CameraResult", "UnderwaterCamera", "UnderwaterCameraConfig", "VehicleLight", "WaterType",
    "ConfigError", "DatasetError", "OceanSimError", "SceneError",
    "DVLConfig", "DVLResult", "adaptive_rate_hz",
    "DatasetReader", "TorchDataset", "load_dataset",
    "export_dataset",
    "GPSConfig", "GPSResult",
    "IMUConfig", "IMUResult",
    "ImagingSonar", "ImagingSonarConfig", "ImagingSonarResult",
    "Material", "MaterialTable", "Node", "RaycastResult", "Scene", "TriangleMesh", "builtin_scene_names",
    "load_scene",
    "MultibeamResult", "MultibeamSonar", "MultibeamSonarConfig",
    "PoseSensor", "PoseSensorConfig", "PoseSensorResult",
    "ProfilingResult", "ProfilingSonar", "ProfilingSonarConfig",
    "SidescanResult", "SidescanSonar", "SidescanSonarConfig",
    "SinglebeamResult", "SinglebeamSonar", "SinglebeamSonarConfig",
    "Trajectory",
    "__version__",
    "as_poses", "pose_from_euler", "resolve_device", "set_cpu_threads",
]

from oceansim_py.scene.bathymetry import scene_from_bathymetry  # noqa: E402 - appended public API

__all__ += ["scene_from_bathymetry"]

from oceansim_py.scene.sea_surface import SeaStateConfig, SeaSurface  # noqa: E402 - appended public API

__all__ += ["SeaStateConfig", "SeaSurface"]
