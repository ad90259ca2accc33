"""Sensor adapters: how the dataset generator builds, renders and writes each sensor type of a rig.

An adapter wraps one sensor of the rig. ``render`` takes a batch of sample times and world sensor poses and
returns products as numpy arrays with a leading batch axis; ``write`` stores them in the shard: array products
as ``<product>_<sample:06d>.npy`` (raw float data), image products as ``.png``, and table products as rows of
the shard's ``samples.csv`` for that sensor. The sample index keys the sensor's noise (its frame index), so a
sample renders the same wherever and whenever it is rendered.
"""

from __future__ import annotations

import abc
import dataclasses
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from oceansim_py.dataset.loader import TABLE_FILE
from oceansim_py.dataset.shards import write_table
from oceansim_py.io.config import ConfigBase
from oceansim_py.io.images import save_npy, save_png

#: product kinds
NPY, PNG, TABLE = "npy", "png", "table"


class SensorAdapter(abc.ABC):
    """Base of every adapter (see module docstring). Subclasses set the class attributes and implement
    ``_make_sensor`` and ``render``; ``sensor_metadata`` adds what a reader needs (ranges, intrinsics, ...)."""

    type_name: ClassVar[str]
    config_cls: ClassVar[type[ConfigBase]]
    products: ClassVar[dict[str, str]]          # product name -> NPY | PNG | TABLE
    default_products: ClassVar[tuple[str, ...]]

    def __init__(self, spec: Any, seed: int, device: Any) -> None:
        self.spec = spec
        cfg = dict(spec.config)
        self.config = self.config_from_dict(cfg, f"sensor {spec.name}")
        if "seed" in {f.name for f in dataclasses.fields(self.config)} and "seed" not in cfg:
            self.config = self.config.replace(seed=int(seed))
        self.seed = int(seed)
        self.device = device
        self.sensor = self._make_sensor()
        self._rows: list[dict[str, Any]] = []

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        return cls.config_cls.from_dict(cfg, source)

    @abc.abstractmethod
    def _make_sensor(self) -> Any:
        """Build the wrapped sensor from ``self.config`` on ``self.device``."""

    @abc.abstractmethod
    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        """Products of samples ``first_sample ..`` at ``times`` (s) and world sensor ``poses`` (B, 7)."""

    def sensor_metadata(self) -> dict[str, Any]:
        return {}

    def manifest_entry(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(), "products_format": {p: self.products[p] for p in self.spec.products},
                **self.sensor_metadata()}

    def write(self, folder: Path, products: dict[str, np.ndarray], times: np.ndarray, first_sample: int) -> None:
        """Write a rendered batch: one file per sample and array/image product, table rows kept for ``finish``."""
        wanted = self.spec.products
        for i in range(times.shape[0]):
            m = first_sample + i
            row: dict[str, Any] = {"sample": m, "time": float(times[i])}
            for name in wanted:
                kind = self.products[name]
                if kind == NPY:
                    save_npy(folder / f"{name}_{m:06d}.npy", products[name][i])
                elif kind == PNG:
                    save_png(folder / f"{name}_{m:06d}.png", products[name][i])
                else:
                    value = np.asarray(products[name][i])
                    if value.ndim == 0:
                        row[name] = value
                    else:
                        for j, v in enumerate(value.reshape(-1)):
                            row[f"{name}_{j}"] = v
            if len(row) > 2:
                self._rows.append(row)

    def finish(self, folder: Path) -> None:
        """Write the shard's table (if the sensor has table products) and reset."""
        if self._rows:
            cols = {k: np.array([r[k] for r in self._rows]) for k in self._rows[0]}
            write_table(folder / TABLE_FILE, cols)
        self._rows = []


class ImagingSonarAdapter(SensorAdapter):
    type_name = "imaging_sonar"
    products = {"intensity": NPY, "clean_intensity": NPY, "hit_count": NPY, "label_id": NPY, "polar_png": PNG,
                "fan_png": PNG}
    default_products = ("intensity", "polar_png", "fan_png")
    fan_width = 512

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.imaging_sonar import ImagingSonarConfig

        return ImagingSonarConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.imaging_sonar import ImagingSonar

        return ImagingSonar(self.config, device=self.device, sensor_id=self.spec.sensor_id)

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        res = self.sensor.render(scene, poses, frame_index=first_sample)
        out = dict(res.numpy())
        if "polar_png" in self.spec.products:
            out["polar_png"] = res.to_uint8()
        if "fan_png" in self.spec.products:
            from oceansim_py.io.images import to_uint8

            c = self.config
            out["fan_png"] = to_uint8(res.to_cartesian(self.fan_width), gain=c.gain, gamma=c.gamma)
        return out

    def sensor_metadata(self) -> dict[str, Any]:
        return {"ranges_m": self.config.ranges().tolist(), "bearings_rad": self.config.bearings().tolist(),
                "image_layout": "(n_range, n_beams): row 0 nearest range, column 0 most-port beam"}


class MultibeamAdapter(SensorAdapter):
    type_name = "multibeam"
    products = {"time_series": NPY, "intensity": NPY, "db": NPY, "polar_png": PNG, "fan_png": PNG}
    default_products = ("intensity", "polar_png", "fan_png")
    fan_width = 512

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.multibeam import MultibeamSonarConfig

        return MultibeamSonarConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.multibeam import MultibeamSonar

        return MultibeamSonar(self.config, device=self.device, sensor_id=self.spec.sensor_id)

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        from oceansim_py.io.images import to_uint8

        res = self.sensor.render(scene, poses, frame_index=first_sample)
        out = dict(res.numpy())
        if "polar_png" in self.spec.products:
            out["polar_png"] = res.to_uint8()
        if "fan_png" in self.spec.products:
            out["fan_png"] = np.stack([to_uint8(f, mode="db") for f in res.to_cartesian(self.fan_width)])
        return out

    def sensor_metadata(self) -> dict[str, Any]:
        return {"ranges_m": self.config.ranges().tolist(), "bearings_rad": self.config.bearings().tolist(),
                "image_layout": "(n_samples, n_beams): row 0 nearest range, column 0 most-port beam; "
                                "time_series complex64 baseband"}


class CameraAdapter(SensorAdapter):
    type_name = "camera"
    products = {"rgb_png": PNG, "depth_png": PNG, "label_png": PNG, "depth": NPY, "range": NPY, "label": NPY,
                "linear": NPY, "in_air": NPY, "normal": NPY}
    default_products = ("rgb_png", "depth", "label")

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.camera import UnderwaterCameraConfig

        return UnderwaterCameraConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.camera import UnderwaterCamera

        return UnderwaterCamera(self.config, device=self.device)

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        res = self.sensor.render(scene, poses, frame_index=first_sample)
        wanted = set(self.spec.products)
        out = {name: getattr(res, name).numpy() for name in ("depth", "range", "label", "linear", "in_air", "normal")
               if name in wanted}
        if "rgb_png" in wanted:
            out["rgb_png"] = res.rgb.numpy()
        if "depth_png" in wanted:
            out["depth_png"] = np.stack([res.depth_uint8(i) for i in range(res.batch_size)])
        if "label_png" in wanted:
            out["label_png"] = np.stack([res.label_uint8(i) for i in range(res.batch_size)])
        return out

    def sensor_metadata(self) -> dict[str, Any]:
        fx, fy, cx, cy = self.config.intrinsics()
        return {"intrinsics": {"fx": fx, "fy": fy, "cx": cx, "cy": cy, "width": self.config.width,
                               "height": self.config.height},
                "camera_matrix": self.config.camera_matrix().tolist(),
                "frame": "optical axis = sensor +x, image right = -y, image down = -z; depth = planar z-depth (m)"}


class _MountedTrajectoryMixin:
    """For sensors that need velocities/accelerations: the trajectory of the sensor itself (vehicle * mount),
    built once per trajectory."""

    _mounted_for: Any = None
    _mounted: Any = None

    def mounted(self, trajectory: Any) -> Any:
        if self._mounted_for is not trajectory:
            self._mounted = trajectory.mounted(np.asarray(self.spec.mount))  # type: ignore[attr-defined]
            self._mounted_for = trajectory
        return self._mounted


class DVLAdapter(_MountedTrajectoryMixin, SensorAdapter):
    type_name = "dvl"
    products = {"velocity": TABLE, "valid": TABLE, "altitude": TABLE, "beam_range": TABLE,
                "beam_velocity": TABLE, "beam_valid": TABLE}
    default_products = ("velocity", "valid", "altitude", "beam_range", "beam_velocity")

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.dvl import DVLConfig

        return DVLConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.dvl import DVL

        return DVL(self.config, device=self.device, sensor_id=self.spec.sensor_id)

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        velocity = self.mounted(trajectory).velocity(times, frame="body")
        res = self.sensor.render(scene, poses, velocities=velocity, velocity_frame="sensor",
                                 frame_index=first_sample)
        out = res.numpy()
        for key in ("valid", "beam_valid"):
            out[key] = out[key].astype(np.int8)
        return out

    def sensor_metadata(self) -> dict[str, Any]:
        return {"beam_directions_sensor_frame": self.config.beam_directions().tolist(),
                "velocity_frame": "sensor FLU, m/s; NaN on dropout (fewer than 3 valid beams)"}


class IMUAdapter(_MountedTrajectoryMixin, SensorAdapter):
    type_name = "imu"
    products = {"accel": TABLE, "gyro": TABLE, "accel_bias": TABLE, "gyro_bias": TABLE, "true_accel": TABLE,
                "true_gyro": TABLE}
    default_products = ("accel", "gyro", "accel_bias", "gyro_bias")

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.imu import IMUConfig

        return IMUConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.imu import IMU

        return IMU(self.config, sensor_id=self.spec.sensor_id)

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        return self.sensor.measure(self.mounted(trajectory), times=times, frame_index=first_sample).numpy()

    def sensor_metadata(self) -> dict[str, Any]:
        return {"frame": "sensor FLU; accel = specific force (m/s^2, +g up at rest), gyro rad/s"}


class _PoseDrivenAdapter(SensorAdapter):
    """Sensors measured from the sensor's world poses alone (barometer, GPS, pose sensor)."""

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        res = self._measure(scene, poses, first_sample)
        out = res.numpy()
        return {k: (v.astype(np.int8) if v.dtype == bool else v) for k, v in out.items() if v is not None}

    @abc.abstractmethod
    def _measure(self, scene: Any, poses: np.ndarray, first_sample: int) -> Any:
        """The sensor's result at ``poses``."""


class BarometerAdapter(_PoseDrivenAdapter):
    type_name = "barometer"
    products = {"pressure": TABLE, "depth": TABLE, "true_depth": TABLE}
    default_products = ("pressure", "depth", "true_depth")

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.barometer import BarometerConfig

        return BarometerConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.barometer import Barometer

        return Barometer(self.config, sensor_id=self.spec.sensor_id)

    def _measure(self, scene: Any, poses: np.ndarray, first_sample: int) -> Any:
        return self.sensor.measure(poses, scene=scene, frame_index=first_sample)


class GPSAdapter(_PoseDrivenAdapter):
    type_name = "gps"
    products = {"position": TABLE, "fix": TABLE, "depth": TABLE, "threshold": TABLE}
    default_products = ("position", "fix")

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.gps import GPSConfig

        return GPSConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.gps import GPS

        return GPS(self.config, sensor_id=self.spec.sensor_id)

    def _measure(self, scene: Any, poses: np.ndarray, first_sample: int) -> Any:
        return self.sensor.measure(poses, scene=scene, frame_index=first_sample)


class PoseSensorAdapter(_PoseDrivenAdapter):
    type_name = "pose"
    products = {"matrix": TABLE, "true_matrix": TABLE}
    default_products = ("matrix",)

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.pose_sensor import PoseSensorConfig

        return PoseSensorConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.pose_sensor import PoseSensor

        return PoseSensor(self.config, sensor_id=self.spec.sensor_id)

    def _measure(self, scene: Any, poses: np.ndarray, first_sample: int) -> Any:
        return self.sensor.measure(poses, frame_index=first_sample)


SENSOR_TYPES: dict[str, type[SensorAdapter]] = {
    a.type_name: a for a in (ImagingSonarAdapter, MultibeamAdapter, CameraAdapter, DVLAdapter, IMUAdapter,
                             BarometerAdapter, GPSAdapter, PoseSensorAdapter)
}
