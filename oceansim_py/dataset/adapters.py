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
import importlib
from typing import Any, ClassVar

import numpy as np

from oceansim_py.dataset.loader import TABLE_FILE
from oceansim_py.dataset.shards import PartialShard, save_npz, write_table
from oceansim_py.io.config import ConfigBase
from oceansim_py.io.images import save_npy, save_png, to_uint8

#: product kinds
NPY, PNG, TABLE = "npy", "png", "table"


def _import(path: str) -> Any:
    """``"package.module:Name"`` -> the object (imported on first use, so rig validation stays light)."""
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


class SensorAdapter(abc.ABC):
    """Base of every adapter (see module docstring). Subclasses set the class attributes and implement
    ``render``; ``sensor_metadata`` adds what a reader needs (ranges, intrinsics, ...).

    ``sensor_class`` / ``config_class``: ``"module:Name"`` of the sensor and its config; ``sensor_args``: which
    of ``device`` and ``sensor_id`` the sensor's constructor takes besides the config.
    """

    type_name: ClassVar[str]
    sensor_class: ClassVar[str]
    config_class: ClassVar[str]
    sensor_args: ClassVar[tuple[str, ...]] = ("device", "sensor_id")
    products: ClassVar[dict[str, str]]          # product name -> NPY | PNG | TABLE
    #: product name -> its unit (and frame), written to the manifest's ``arrays`` entry of the sensor
    units: ClassVar[dict[str, str]]
    #: per-sample shape of table products that are not scalars (written as columns ``<name>_<j>``, C order)
    table_shapes: ClassVar[dict[str, tuple[int, ...]]] = {}
    default_products: ClassVar[tuple[str, ...]]

    def __init__(self, spec: Any, seed: int, device: Any, compress: bool = False) -> None:
        self.spec = spec
        #: write array products as compressed ``.npz`` (lossless) instead of ``.npy``
        self.compress = bool(compress)
        cfg = dict(spec.config)
        self.config = self.config_from_dict(cfg, f"sensor {spec.name}")
        if "seed" in {f.name for f in dataclasses.fields(self.config)} and "seed" not in cfg:
            self.config = self.config.replace(seed=int(seed))
        self.seed = int(seed)
        self.device = device
        self.sensor = self._make_sensor()
        self._rows: list[dict[str, Any]] = []
        #: product -> {"shape", "dtype"} of one sample of each array/image product written so far
        self.written_specs: dict[str, dict[str, Any]] = {}

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        return _import(cls.config_class).from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        kwargs = {"device": self.device, "sensor_id": self.spec.sensor_id}
        return _import(self.sensor_class)(self.config, **{k: kwargs[k] for k in self.sensor_args})

    @abc.abstractmethod
    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        """Products of samples ``first_sample ..`` at ``times`` (s) and world sensor ``poses`` (B, 7)."""

    def sensor_metadata(self) -> dict[str, Any]:
        return {}

    def manifest_entry(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(),
                "products_format": {p: self.file_format(p) for p in self.spec.products},
                "arrays": {p: self.array_spec(p) for p in self.spec.products}, **self.sensor_metadata()}

    def file_format(self, product: str) -> str:
        """How ``product`` is stored: ``npy``, ``npz`` (compressed npy), ``png`` or ``table``."""
        kind = self.products[product]
        return "npz" if kind == NPY and self.compress else kind

    def array_spec(self, product: str) -> dict[str, Any]:
        """What one sample of ``product`` is: unit, file format, and (tables) its shape; the writer adds the
        shape and dtype of array files when it writes the first one."""
        spec: dict[str, Any] = {"unit": self.units[product], "format": self.file_format(product)}
        if self.products[product] == TABLE:
            spec["shape"] = list(self.table_shapes.get(product, ()))
        return spec

    def write(self, shard: PartialShard, products: dict[str, np.ndarray], times: np.ndarray,
              first_sample: int) -> None:
        """Write a rendered batch: one file per sample and array/image product (each recorded in the shard's
        journal before it is created), table rows kept for ``finish``."""
        sensor = self.spec.name
        wanted = self.spec.products
        for i in range(times.shape[0]):
            m = first_sample + i
            row: dict[str, Any] = {"sample": m, "time": float(times[i])}
            for name in wanted:
                kind = self.products[name]
                if kind != TABLE and name not in self.written_specs:
                    sample = np.asarray(products[name][i])
                    self.written_specs[name] = {"shape": list(sample.shape), "dtype": str(sample.dtype)}
                if kind == NPY and self.compress:
                    save_npz(shard.file(f"{sensor}/{name}_{m:06d}.npz"), name, products[name][i])
                elif kind == NPY:
                    save_npy(shard.file(f"{sensor}/{name}_{m:06d}.npy"), products[name][i])
                elif kind == PNG:
                    save_png(shard.file(f"{sensor}/{name}_{m:06d}.png"), products[name][i])
                else:
                    value = np.asarray(products[name][i])
                    if value.ndim == 0:
                        row[name] = value
                    else:
                        for j, v in enumerate(value.reshape(-1)):
                            row[f"{name}_{j}"] = v
            if len(row) > 2:
                self._rows.append(row)

    def finish(self, shard: PartialShard) -> None:
        """Write the shard's table (if the sensor has table products) and reset."""
        if self._rows:
            cols = {k: np.array([r[k] for r in self._rows]) for k in self._rows[0]}
            write_table(shard.file(f"{self.spec.name}/{TABLE_FILE}"), cols)
        self._rows = []


class _PolarSonarAdapter(SensorAdapter):
    """Sonars whose result is a polar image (range x beam) with ``numpy()``, ``to_uint8()`` and
    ``to_cartesian(width)``: the raw arrays, the polar 8-bit view and the fan view (``fan_display`` maps it)."""

    fan_width = 512
    image_layout: ClassVar[str]

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        res = self.sensor.render(scene, poses, frame_index=first_sample)
        out = dict(res.numpy())
        if "polar_png" in self.spec.products:
            out["polar_png"] = res.to_uint8()
        if "fan_png" in self.spec.products:
            out["fan_png"] = np.stack([self.fan_display(f) for f in res.to_cartesian(self.fan_width)])
        return out

    @abc.abstractmethod
    def fan_display(self, fan: np.ndarray) -> np.ndarray:
        """The uint8 view of one fan image, mapped like the sensor's own polar view."""

    def sensor_metadata(self) -> dict[str, Any]:
        return {"ranges_m": self.config.ranges().tolist(), "bearings_rad": self.config.bearings().tolist(),
                "image_layout": self.image_layout}


class ImagingSonarAdapter(_PolarSonarAdapter):
    type_name = "imaging_sonar"
    sensor_class = "oceansim_py.sensors.imaging_sonar:ImagingSonar"
    config_class = "oceansim_py.sensors.imaging_sonar:ImagingSonarConfig"
    products = {"intensity": NPY, "clean_intensity": NPY, "hit_count": NPY, "label_id": NPY, "polar_png": PNG,
                "fan_png": PNG}
    units = {
        'intensity': "linear echo intensity, normalised by the config's normalisation (row: each range row's "
                     "maximum = 1; none: sr), with speckle and noise",
        'clean_intensity': 'linear echo intensity before noise, same normalisation as intensity',
        'hit_count': 'count of rays binned per cell',
        'label_id': "index into the scene's labels of the strongest return (-1 empty)",
        'polar_png': '8-bit display view (uint8 0..255), not a measurement',
        'fan_png': '8-bit display view (uint8 0..255), not a measurement',
    }
    default_products = ("intensity", "polar_png", "fan_png")
    image_layout = "(n_range, n_beams): row 0 nearest range, column 0 most-port beam"

    def fan_display(self, fan: np.ndarray) -> np.ndarray:
        return to_uint8(fan, gain=self.config.gain, gamma=self.config.gamma)


class MultibeamAdapter(_PolarSonarAdapter):
    type_name = "multibeam"
    sensor_class = "oceansim_py.sensors.multibeam:MultibeamSonar"
    config_class = "oceansim_py.sensors.multibeam:MultibeamSonarConfig"
    products = {"time_series": NPY, "intensity": NPY, "db": NPY, "polar_png": PNG, "fan_png": PNG}
    units = {
        'time_series': 'complex baseband pressure, uPa at 1 m source-level reference (complex64)',
        'intensity': 'uPa^2: squared magnitude |p|^2 of the baseband pressure (source level referenced to 1 m)',
        'db': 'dB re 1 uPa^2 (10 log10 |p|^2; -300 where p = 0)',
        'polar_png': '8-bit display view (uint8 0..255), not a measurement',
        'fan_png': '8-bit display view (uint8 0..255), not a measurement (dB scale, 60 dB span)',
    }
    default_products = ("intensity", "polar_png", "fan_png")
    image_layout = ("(n_samples, n_beams): row 0 nearest range, column 0 most-port beam; time_series complex64 "
                    "baseband")

    def fan_display(self, fan: np.ndarray) -> np.ndarray:
        return to_uint8(fan, mode="db")


class SidescanAdapter(SensorAdapter):
    type_name = "sidescan"
    products = {"intensity": NPY, "clean_intensity": NPY, "ground_intensity": NPY, "hit_count": NPY,
                "label_id": NPY, "altitude": TABLE}
    units = {
        'intensity': 'linear echo intensity (sr-weighted return, with noise), columns port/starboard',
        'clean_intensity': 'linear echo intensity before noise',
        'ground_intensity': 'linear echo intensity resampled at ground_ranges_m',
        'hit_count': 'count of rays per bin',
        'label_id': 'label index of the strongest return (-1 empty)',
        'altitude': 'm (first return; NaN without one)',
    }
    default_products = ("intensity", "ground_intensity", "altitude")

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.sidescan import SidescanSonarConfig

        return SidescanSonarConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.sidescan import SidescanSonar

        return SidescanSonar(self.config, device=self.device, sensor_id=self.spec.sensor_id)

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        return self.sensor.render(scene, poses, frame_index=first_sample).numpy()

    def sensor_metadata(self) -> dict[str, Any]:
        return {"ranges_m": self.config.ranges().tolist(), "ground_ranges_m": self.config.ground_ranges().tolist(),
                "series_layout": "(n_range, 2): row 0 nearest range, column 0 port, 1 starboard; stack the samples "
                                 "into a waterfall [port reversed | starboard]; altitude = first return (m)"}


class ProfilingAdapter(SensorAdapter):
    type_name = "profiling"
    products = {"bottom_range": NPY, "intensity": NPY, "valid": NPY, "label_id": NPY, "point_sensor": NPY,
                "point_world": NPY, "image": NPY, "clean_image": NPY, "image_png": PNG}
    units = {
        'bottom_range': 'm (NaN where no bottom)',
        'intensity': "sr (sum over the beam's rays, with speckle)",
        'valid': 'flag 1/0',
        'label_id': 'label index (-1 invalid)',
        'point_sensor': 'm, sensor frame FLU (NaN invalid)',
        'point_world': 'm, world frame Z up (NaN invalid)',
        'image': 'sr per range x beam cell, with noise',
        'clean_image': 'sr per cell, before noise',
        'image_png': '8-bit display view (uint8 0..255), not a measurement',
    }
    default_products = ("bottom_range", "point_world", "intensity", "image_png")

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.profiling_sonar import ProfilingSonarConfig

        return ProfilingSonarConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.errors import ConfigError
        from oceansim_py.sensors.profiling_sonar import ProfilingSonar

        wanted = sorted({"image", "clean_image", "image_png"} & set(self.spec.products))
        if wanted and not self.config.image:
            raise ConfigError(f"sensor {self.spec.name}: products {wanted} need the image, but its config has "
                              f"image: false (e.g. the em2040 presets); add image: true to its config or drop them")
        return ProfilingSonar(self.config, device=self.device, sensor_id=self.spec.sensor_id)

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        res = self.sensor.render(scene, poses, frame_index=first_sample)
        out = res.numpy()
        if "image_png" in self.spec.products:
            out["image_png"] = res.to_uint8()
        return out

    def sensor_metadata(self) -> dict[str, Any]:
        return {"beam_angles_rad": self.config.beam_angles().tolist(), "ranges_m": self.config.ranges().tolist(),
                "layout": "per beam, most port first; beam angle from nadir, + starboard; points (n_beams, 3) in "
                          "m, NaN where the beam saw no bottom; image (n_range, n_beams), row 0 nearest"}


class SinglebeamAdapter(SensorAdapter):
    type_name = "singlebeam"
    products = {"intensity": NPY, "clean_intensity": NPY, "hit_count": NPY, "label_id": NPY, "altitude": TABLE}
    units = {
        'intensity': 'linear echo intensity with noise',
        'clean_intensity': 'linear echo intensity before noise',
        'hit_count': 'count of rays per bin',
        'label_id': 'label index (-1 empty)',
        'altitude': 'm (first return along the beam; NaN without one)',
    }
    default_products = ("intensity", "altitude")

    @classmethod
    def config_from_dict(cls, cfg: dict[str, Any], source: str) -> ConfigBase:
        from oceansim_py.sensors.singlebeam import SinglebeamSonarConfig

        return SinglebeamSonarConfig.from_dict(cfg, source)

    def _make_sensor(self) -> Any:
        from oceansim_py.sensors.singlebeam import SinglebeamSonar

        return SinglebeamSonar(self.config, device=self.device, sensor_id=self.spec.sensor_id)

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        return self.sensor.render(scene, poses, frame_index=first_sample).numpy()

    def sensor_metadata(self) -> dict[str, Any]:
        return {"ranges_m": self.config.ranges().tolist(),
                "layout": "intensity (n_range,), bin 0 nearest; altitude = first return (m, NaN without one)"}


class CameraAdapter(SensorAdapter):
    type_name = "camera"
    products = {"rgb_png": PNG, "depth_png": PNG, "label_png": PNG, "depth": NPY, "range": NPY, "label": NPY,
                "linear": NPY, "in_air": NPY, "normal": NPY}
    units = {
        'rgb_png': 'sRGB-encoded 8-bit colour (uint8)',
        'depth_png': '8-bit display view (uint8 0..255), not a measurement',
        'label_png': '8-bit display view (uint8 0..255), not a measurement',
        'depth': 'm, planar z-depth along the optical axis (inf for misses)',
        'range': "m along the pixel's ray (inf for misses)",
        'label': "index into the scene's labels (-1 misses)",
        'linear': 'linear underwater radiance (scene-relative, before exposure)',
        'in_air': 'linear in-air radiance (scene-relative)',
        'normal': 'unit vector, world frame',
    }
    default_products = ("rgb_png", "depth", "label")

    sensor_class = "oceansim_py.sensors.camera:UnderwaterCamera"
    config_class = "oceansim_py.sensors.camera:UnderwaterCameraConfig"
    sensor_args = ("device",)

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
    units = {
        'velocity': 'm/s, sensor frame FLU (NaN on dropout)',
        'valid': 'flag 1/0',
        'altitude': 'm (NaN without a valid beam)',
        'beam_range': 'm, slant range per beam (NaN invalid)',
        'beam_velocity': 'm/s along each beam (NaN invalid)',
        'beam_valid': 'flag 1/0 per beam',
    }
    table_shapes = {'velocity': (3,), 'beam_range': (4,), 'beam_velocity': (4,), 'beam_valid': (4,)}
    default_products = ("velocity", "valid", "altitude", "beam_range", "beam_velocity")

    sensor_class = "oceansim_py.sensors.dvl:DVL"
    config_class = "oceansim_py.sensors.dvl:DVLConfig"

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
    units = {
        'accel': 'm/s^2, specific force, sensor frame FLU',
        'gyro': 'rad/s, sensor frame FLU',
        'accel_bias': 'm/s^2',
        'gyro_bias': 'rad/s',
        'true_accel': 'm/s^2 (noise-free)',
        'true_gyro': 'rad/s (noise-free)',
    }
    table_shapes = {name: (3,) for name in ("accel", "gyro", "accel_bias", "gyro_bias", "true_accel", "true_gyro")}
    default_products = ("accel", "gyro", "accel_bias", "gyro_bias")

    sensor_class = "oceansim_py.sensors.imu:IMU"
    config_class = "oceansim_py.sensors.imu:IMUConfig"
    sensor_args = ("sensor_id",)

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
    units = {
        'pressure': 'Pa (absolute)',
        'depth': 'm below the surface, from the measured pressure',
        'true_depth': 'm below the surface (exact)',
    }
    default_products = ("pressure", "depth", "true_depth")

    sensor_class = "oceansim_py.sensors.barometer:Barometer"
    config_class = "oceansim_py.sensors.barometer:BarometerConfig"
    sensor_args = ("sensor_id",)

    def _measure(self, scene: Any, poses: np.ndarray, first_sample: int) -> Any:
        return self.sensor.measure(poses, scene=scene, frame_index=first_sample)


class GPSAdapter(_PoseDrivenAdapter):
    type_name = "gps"
    products = {"position": TABLE, "fix": TABLE, "depth": TABLE, "threshold": TABLE}
    units = {
        'position': 'm, world frame Z up (NaN without a fix)',
        'fix': 'flag 1/0',
        'depth': 'm, true antenna depth (negative above the surface)',
        'threshold': 'm, fix depth threshold',
    }
    table_shapes = {'position': (3,)}
    default_products = ("position", "fix")

    sensor_class = "oceansim_py.sensors.gps:GPS"
    config_class = "oceansim_py.sensors.gps:GPSConfig"
    sensor_args = ("sensor_id",)

    def _measure(self, scene: Any, poses: np.ndarray, first_sample: int) -> Any:
        return self.sensor.measure(poses, scene=scene, frame_index=first_sample)


class PoseSensorAdapter(_PoseDrivenAdapter):
    type_name = "pose"
    products = {"matrix": TABLE, "true_matrix": TABLE}
    units = {
        'matrix': 'SE(3) sensor-to-world matrix, translation in m',
        'true_matrix': 'SE(3) sensor-to-world matrix (exact), m',
    }
    table_shapes = {'matrix': (4, 4), 'true_matrix': (4, 4)}
    default_products = ("matrix",)

    sensor_class = "oceansim_py.sensors.pose_sensor:PoseSensor"
    config_class = "oceansim_py.sensors.pose_sensor:PoseSensorConfig"
    sensor_args = ("sensor_id",)

    def _measure(self, scene: Any, poses: np.ndarray, first_sample: int) -> Any:
        return self.sensor.measure(poses, frame_index=first_sample)


SENSOR_TYPES: dict[str, type[SensorAdapter]] = {
    a.type_name: a for a in (ImagingSonarAdapter, MultibeamAdapter, CameraAdapter, DVLAdapter, IMUAdapter,
                             BarometerAdapter, GPSAdapter, PoseSensorAdapter, SidescanAdapter, ProfilingAdapter,
                             SinglebeamAdapter)
}
