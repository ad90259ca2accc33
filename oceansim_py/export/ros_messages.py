"""Dataset samples -> ROS 2 messages (``rosbags`` message objects), one converter per sensor type.

Topics are ``/<sensor>/<what>`` (the sensor name made a valid ROS 2 token by the exporter:
:func:`~oceansim_py.export.streams.ros_topic`, e.g. ``front-sonar`` -> ``front_sonar``); every header is
stamped with the sample's dataset time and names the sensor's
frame. Frames (all published on ``/tf_static`` by the exporter, see :func:`static_transforms`):

* ``<sensor>``: the sensor's FLU mount frame on ``base_link`` (x forward, y port, z up);
* ``<camera>_optical``: ROS optical frame (x right, y down, z forward) of a camera;
* ``<sonar>_sonar``: the marine_acoustic_msgs sonar frame (z forward along the boresight, x up, y starboard) of
  imaging, multibeam and side-scan sonars;
* ``<dvl>_dvl``: the marine_acoustic_msgs Dvl frame (x forward, z down along the DVL's look direction).

Mapping (sensor type: topic -> message):

* camera: ``image`` -> sensor_msgs/Image rgb8 (from ``rgb_png``), ``camera_info`` -> sensor_msgs/CameraInfo
  (pinhole; plumb_bob D = the camera's OpenCV distortion coefficients, zeros without), ``depth`` -> Image 32FC1 (planar z-depth, m), ``label`` -> Image 32SC1;
* imaging_sonar, multibeam: ``image`` -> marine_acoustic_msgs/ProjectedSonarImage of ``intensity``
  (float32, one row per range bin, beams along the row, see :mod:`oceansim_py.io.sonar_messages`; ping_info
  from :func:`polar_ping_info`: carrier, sound speed and per-beam -3 dB receive widths); multibeam
  also ``points`` -> sensor_msgs/PointCloud2 of its per-beam soundings (peak-amplitude detection, see
  :func:`beam_soundings`) in the sensor's FLU frame;
* sidescan: ``raw_image`` -> marine_acoustic_msgs/RawSonarImage of ``intensity`` with two beams
  (column 0 port, 1 starboard; rows = slant-range samples; float32; see ``RosMessageFactory.sidescan``) --
  a per-ping message rather than an Image waterfall, so no ping is resampled;
* msis: ``raw_image`` -> marine_acoustic_msgs/RawSonarImage of one step's ``intensity``: one beam whose
  rx_angle is the head angle (rad about the sonar frame's x axis, + starboard; from ``head_angle_deg``), one row
  per slant-range sample (float32; see ``RosMessageFactory.msis``) -- one message per step at its own time, as
  the heads' drivers publish them; a sweep is the run of messages between turns;
* profiling: ``points`` -> sensor_msgs/PointCloud2 (x, y, z, intensity float32) of the soundings in ``map``
  (``point_world``), NaN for beams without a bottom; ``ranges`` -> marine_acoustic_msgs/SonarRanges (beam
  unit vectors in the sensor's FLU frame; ping_info: the device chain's carrier and sound speed, per-beam
  widths, see ``RosMessageFactory._profiling_ping_info``);
* singlebeam: ``altitude`` -> sensor_msgs/Range of ``first_return_range`` (NaN without a return; datasets of
  before the product's rename hold it as ``altitude``, which the reader maps);
* dvl: ``dvl`` -> marine_acoustic_msgs/Dvl in ``<dvl>_dvl`` (velocity and beam unit vectors rotated from the
  sensor's FLU frame; beam ranges and velocities);
* imu: ``data`` -> sensor_msgs/Imu (orientation unknown: orientation_covariance[0] = -1);
* barometer: ``pressure`` -> sensor_msgs/FluidPressure (Pa);
* gps: ``fix`` -> sensor_msgs/NavSatFix, the local world position converted to WGS84 about a datum;
* pose: ``pose`` -> geometry_msgs/PoseStamped of the measured sensor pose in ``map``;
* magnetometer: ``field`` -> sensor_msgs/MagneticField (tesla; the dataset holds uT);
* usbl: ``beacon_<id>`` -> geometry_msgs/PointStamped of each beacon with a fix, in the sensor's FLU frame
  (slant range x measured direction: the ``position`` product, or from the default products ``slant_range``,
  ``bearing`` and ``elevation`` when it was not written), stamped at the ping; beacons without a fix send nothing;
* lbl: ``range_<id>`` -> sensor_msgs/Range (radiation_type ULTRASOUND, field_of_view 0) of each beacon with a
  fix, stamped at the ping;
* acoustic_modem, optical_modem: ``events`` -> std_msgs/String, one per event, logged at its ``receive_time``
  (its ``arrival_time`` if it has none, else the time of the sample that holds it: a sample holds the events
  received since the previous one, so at 1 Hz an event received at 3.03 s is in the 4 s sample), ``data`` a JSON
  object of :func:`~oceansim_py.sensors.modem_common.decode_events` (the payload as ``payload_hex``);
* dvl with water-track products: also ``dvl_water`` -> marine_acoustic_msgs/Dvl with velocity_mode
  DVL_MODE_WATER (2) of ``water_velocity``.

Covariances come from the sensor's configured white noise when its ``noise`` is on (:func:`noise_variances`): the
Imu's angular velocity and linear acceleration (diagonal gyro_noise_sigma^2 in rad^2/s^2, accel_noise_sigma^2),
FluidPressure's variance (noise_sigma^2, Pa^2), NavSatFix's position (diagonal horizontal_sigma^2,
horizontal_sigma^2, vertical_sigma^2 in east, north, up; COVARIANCE_TYPE_DIAGONAL_KNOWN) for a fix, MagneticField's
(diagonal, T^2), and the Dvl's: each valid beam's range_covar (range_sigma^2) and beam_velocity_covar
(velocity_sigma^2, water_velocity_sigma^2 for water track), and velocity_covar sigma^2 (D^T D)^-1 of the
least-squares solve over the valid beams' unit vectors D, in the message's frame. The white noise alone: the IMU's
bias and its random walk are not in it. Otherwise (noise off, no fix, a beam or solve without data) they are unknown
(0 / type UNKNOWN, or -1 where the message says so).
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable

import numpy as np

from oceansim_py.errors import DatasetError
from oceansim_py.export.marine_msgs import msgtype
from oceansim_py.export.streams import (
    DVL_IN_FLU, OPTICAL_IN_FLU, SONAR_IN_FLU, VEHICLE_FRAME, WORLD_FRAME, product, rotation_to_quat, sec_nanosec, sensor_frame,
)
from oceansim_py.io.sonar_messages import projected_sonar_image, receive_beamwidths

#: WGS84 semi-major axis (m) and first eccentricity squared
WGS84_A = 6378137.0
WGS84_E2 = 6.69437999014e-3

#: (topic, ROS type name, message object), or with a fourth item, the time (s) to log it at when that is not its
#: sample's time (a modem event at its reception)
Message = tuple[Any, ...]


class MissingProduct(DatasetError):
    """A sample lacks a product its stream needs."""


def local_to_geodetic(position: np.ndarray, datum: tuple[float, float, float]) -> tuple[float, float, float]:
    """Local world metres (x east, y north, z up) about ``datum`` (lat deg, lon deg, alt m) -> (lat deg, lon deg,
    alt m), on the WGS84 ellipsoid's meridian and prime-vertical radii at the datum (tangent-plane, accurate to
    centimetres within a few km)."""
    lat0 = math.radians(datum[0])
    s = math.sin(lat0)
    w = math.sqrt(1.0 - WGS84_E2 * s * s)
    r_n = WGS84_A / w                                   # prime vertical radius
    r_m = WGS84_A * (1.0 - WGS84_E2) / w ** 3           # meridian radius
    x, y, z = (float(v) for v in position)
    lat = datum[0] + math.degrees(y / (r_m + datum[2]))
    lon = datum[1] + math.degrees(x / ((r_n + datum[2]) * math.cos(lat0)))
    return lat, lon, datum[2] + z


def beam_soundings(image: np.ndarray, ranges: np.ndarray, bearings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-beam peak-amplitude soundings of a polar image (n_range, n_beams): for each beam the range bin of its
    largest intensity, as a point (n_beams, 3) in the sensor FLU frame (the fan plane, bearing + starboard ->
    y = -r sin b), and that peak intensity; NaN point and 0 intensity for a beam with no return (all <= 0)."""
    img = np.nan_to_num(np.asarray(image, dtype=np.float64))
    k = np.argmax(img, axis=0)
    peak = img[k, np.arange(img.shape[1])]
    r = np.where(peak > 0.0, ranges[k], np.nan)
    xyz = np.stack([r * np.cos(bearings), -r * np.sin(bearings), np.zeros_like(r)], axis=1)
    return xyz, np.where(peak > 0.0, peak, 0.0).astype(np.float32)


def polar_ping_info(kind: str, cfg: dict[str, Any], bearings: np.ndarray) -> tuple[float, float, Any, float]:
    """(frequency Hz, sound speed m/s, receive widths rad (one, or one per beam), transmit width rad) of the
    PingInfo of an imaging sonar or multibeam of config ``cfg`` (its ``to_dict``). The receive width is the
    one-way -3 dB beam width: with the device chain (``model: device``) ``beam_width``, per beam as the chain forms
    it (``beam_steering``: a flat array's beams widen away from broadside, see
    :func:`~oceansim_py.io.sonar_messages.receive_beamwidths`); a peer multibeam's ``beam_width``; an imaging
    sonar without a bearing point spread (peer model, or ``beam_width`` 0) has beams one spacing wide
    (horizontal_fov / n_beams). Frequency and sound speed are 0 (unknown, per PingInfo) for the imaging sonar's
    peer model, which has no carrier. The transmit width is the vertical fan."""
    device = cfg.get("model") == "device"
    width = math.radians(float(cfg.get("beam_width") or 0.0))
    steering = cfg.get("beam_steering", "constant") if device else "constant"
    if kind == "multibeam":
        return (float(cfg["frequency"]), float(cfg["sound_speed"]), receive_beamwidths(bearings, width, steering),
                math.radians(cfg["elevation_fov"]))
    freq, c = (float(cfg["frequency"]), float(cfg["sound_speed"])) if device else (0.0, 0.0)
    rx = receive_beamwidths(bearings, width, steering) if device and width > 0 else \
        math.radians(cfg["horizontal_fov"]) / cfg["n_beams"]
    return freq, c, rx, math.radians(cfg["vertical_fov"])


def noise_variances(meta: dict[str, Any], *names: str) -> list[float] | None:
    """The squares of the config fields ``names`` of a sensor's manifest entry ``meta`` when its ``noise`` is on
    (its configured white noise, each a 1-sigma per sample), else ``None`` (unknown)."""
    cfg = meta.get("config") or {}
    if not cfg.get("noise", True) or any(cfg.get(n) is None for n in names):
        return None
    return [float(cfg[n]) ** 2 for n in names]


def diagonal_covariance(variances: list[float] | np.ndarray) -> np.ndarray:
    """A row-major 3 x 3 covariance (9,) with ``variances`` on its diagonal."""
    cov = np.zeros(9)
    cov[[0, 4, 8]] = variances
    return cov


def beam_solve_covariance(directions: np.ndarray, valid: np.ndarray, variance: float | None,
                          rotation: np.ndarray) -> np.ndarray:
    """The (9,) covariance of a DVL's least-squares velocity over its ``valid`` beams (unit vectors ``directions``,
    (n, 3), sensor frame) with independent beam noise of ``variance`` (m^2/s^2): variance (D^T D)^-1, rotated into
    the message's frame by ``rotation`` (R C R^T); -1 everywhere when the variance is unknown or fewer than 3
    beams are valid (no solve)."""
    d = np.asarray(directions, dtype=np.float64)[np.asarray(valid, dtype=bool)]
    if variance is None or d.shape[0] < 3:
        return np.full(9, -1.0)
    cov = variance * np.linalg.inv(d.T @ d)
    return (rotation @ cov @ rotation.T).reshape(9)


def beam_covariances(valid: np.ndarray | None, variance: float | None) -> np.ndarray:
    """(4,) float32 per-beam covariances: ``variance`` for a valid beam, -1 (unknown) otherwise."""
    if valid is None or variance is None:
        return np.full(4, -1.0, dtype=np.float32)
    return np.where(np.asarray(valid, dtype=bool).reshape(4), variance, -1.0).astype(np.float32)


class RosMessageFactory:
    """Builds the messages of every supported sensor type with one ``rosbags`` typestore."""

    def __init__(self, typestore: Any, gps_datum: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        self.ts = typestore
        self.gps_datum = gps_datum
        self.converters: dict[str, Callable[[str, dict[str, Any], dict[str, Any]], list[Message]]] = {
            "camera": self.camera, "imaging_sonar": self.polar_sonar, "multibeam": self.polar_sonar,
            "sidescan": self.sidescan, "msis": self.msis, "profiling": self.profiling, "singlebeam": self.singlebeam,
            "dvl": self.dvl, "imu": self.imu, "barometer": self.barometer, "gps": self.gps, "pose": self.pose,
            "magnetometer": self.magnetometer, "usbl": self.usbl, "lbl": self.lbl,
            "acoustic_modem": self.modem_events, "optical_modem": self.modem_events,
        }

    # -- building blocks ---------------------------------------------------------------------------------
    def new(self, typename: str, **fields: Any) -> Any:
        return self.ts.types[typename](**fields)

    def header(self, t: float, frame_id: str) -> Any:
        sec, nanosec = sec_nanosec(t)
        return self.new("std_msgs/msg/Header", stamp=self.new("builtin_interfaces/msg/Time", sec=sec,
                                                                nanosec=nanosec), frame_id=frame_id)

    def vector3(self, v: Any) -> Any:
        x, y, z = (float(c) for c in v)
        return self.new("geometry_msgs/msg/Vector3", x=x, y=y, z=z)

    def transform(self, t: float, parent: str, child: str, matrix: np.ndarray) -> Any:
        """geometry_msgs/TransformStamped of parent_T_child (4x4)."""
        q = rotation_to_quat(matrix[:3, :3])
        return self.new("geometry_msgs/msg/TransformStamped", header=self.header(t, parent), child_frame_id=child,
                        transform=self.new("geometry_msgs/msg/Transform", translation=self.vector3(matrix[:3, 3]),
                                           rotation=self.new("geometry_msgs/msg/Quaternion", x=q[0], y=q[1],
                                                             z=q[2], w=q[3])))

    def tf_message(self, transforms: list[Any]) -> Any:
        return self.new("tf2_msgs/msg/TFMessage", transforms=transforms)

    def image(self, t: float, frame: str, array: np.ndarray, encoding: str) -> Any:
        a = np.ascontiguousarray(array)
        h, w = a.shape[:2]
        return self.new("sensor_msgs/msg/Image", header=self.header(t, frame), height=h, width=w,
                        encoding=encoding, is_bigendian=0, step=a.strides[0],
                        data=np.frombuffer(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes(),
                                           dtype=np.uint8))

    def _sonar_image_data(self, d: dict[str, Any]) -> Any:
        return self.new(msgtype("SonarImageData"), is_bigendian=bool(d["is_bigendian"]), dtype=int(d["dtype"]),
                        beam_count=int(d["beam_count"]), data=np.frombuffer(d["data"], dtype=np.uint8))

    def _ping_info(self, d: dict[str, Any]) -> Any:
        return self.new(msgtype("PingInfo"), frequency=float(d["frequency"]), sound_speed=float(d["sound_speed"]),
                        tx_beamwidths=np.asarray(d["tx_beamwidths"], dtype=np.float32),
                        rx_beamwidths=np.asarray(d["rx_beamwidths"], dtype=np.float32))

    @staticmethod
    def need(sample: dict[str, Any], name: str, sensor: str) -> np.ndarray:
        value = product(sample, name)
        if value is None:
            raise MissingProduct(f"sensor {sensor!r} sample {sample.get('sample')}: no {name!r} product")
        return value

    # -- sensors -----------------------------------------------------------------------------------------
    def camera(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        t, frame = sample["time"], sensor_frame(name, "optical")
        out: list[Message] = []
        if "rgb_png" in sample:
            rgb = np.asarray(sample["rgb_png"])[..., :3].astype(np.uint8)
            out.append((f"/{name}/image", "sensor_msgs/msg/Image", self.image(t, frame, rgb, "rgb8")))
        if "depth" in sample:
            depth = np.asarray(sample["depth"], dtype=np.float32)
            out.append((f"/{name}/depth", "sensor_msgs/msg/Image", self.image(t, frame, depth, "32FC1")))
        if "label" in sample:
            label = np.asarray(sample["label"], dtype=np.int32)
            out.append((f"/{name}/label", "sensor_msgs/msg/Image", self.image(t, frame, label, "32SC1")))
        if not out:
            raise MissingProduct(f"sensor {name!r} sample {sample.get('sample')}: none of rgb_png, depth, label")
        k = meta["intrinsics"]
        # OpenCV's (k1, k2, p1, p2, k3) is ROS's plumb_bob D in the same order; none recorded: no distortion
        d = np.asarray((meta.get("distortion_coefficients") or {}).get("values") or np.zeros(5), dtype=np.float64)
        fx, fy, cx, cy = float(k["fx"]), float(k["fy"]), float(k["cx"]), float(k["cy"])
        info = self.new("sensor_msgs/msg/CameraInfo", header=self.header(t, frame), height=int(k["height"]),
                        width=int(k["width"]), distortion_model="plumb_bob", d=d,
                        k=np.array([fx, 0, cx, 0, fy, cy, 0, 0, 1], dtype=np.float64),
                        r=np.eye(3).reshape(-1),
                        p=np.array([fx, 0, cx, 0, 0, fy, cy, 0, 0, 0, 1, 0], dtype=np.float64),
                        binning_x=0, binning_y=0,
                        roi=self.new("sensor_msgs/msg/RegionOfInterest", x_offset=0, y_offset=0, height=0, width=0,
                                     do_rectify=False))
        out.append((f"/{name}/camera_info", "sensor_msgs/msg/CameraInfo", info))
        return out

    def polar_sonar(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        cfg = meta["config"]
        image = self.need(sample, "intensity", name).astype(np.float32)
        bearings = np.asarray(meta["bearings_rad"], dtype=np.float64)
        freq, c, rx, tx = polar_ping_info(meta["type"], cfg, bearings)
        d = projected_sonar_image(image, np.asarray(meta["ranges_m"], dtype=np.float32), bearings, freq, c, rx, tx,
                                  frame_id=sensor_frame(name, "sonar"), stamp=float(sample["time"]))
        msg = self.new(msgtype("ProjectedSonarImage"), header=self.header(sample["time"], d["header"]["frame_id"]),
                       ping_info=self._ping_info(d["ping_info"]),
                       beam_directions=[self.vector3((v["x"], v["y"], v["z"])) for v in d["beam_directions"]],
                       ranges=np.asarray(d["ranges"], dtype=np.float32), image=self._sonar_image_data(d["image"]))
        out: list[Message] = [(f"/{name}/image", msgtype("ProjectedSonarImage"), msg)]
        if meta["type"] == "multibeam":
            xyz, peak = beam_soundings(image, np.asarray(meta["ranges_m"], dtype=np.float64), bearings)
            out.append((f"/{name}/points", "sensor_msgs/msg/PointCloud2",
                        self.point_cloud(sample["time"], sensor_frame(name), xyz, peak)))
        return out

    def sidescan(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        """RawSonarImage with two beams, column 0 port and 1 starboard, one row per slant-range sample
        (``ranges_m``); rx_angles (rad, about the sonar frame's x axis, + starboard) -90 deg and +90 deg;
        sample_rate = c / (2 dr) with c the config's sound speed for the device chain (``model: device``, which
        also gives ping_info its carrier frequency), else the nominal 1500 m/s and frequency 0 (unknown) (c is
        written as ping_info.sound_speed); sample0 = the index of the first sample, min_range / dr (rounded: a
        reader's (sample0 + i) dr is bin i's near edge when min_range is a multiple of dr; ``ranges_m`` holds
        the bin centres)."""
        cfg = meta["config"]
        series = self.need(sample, "intensity", name).astype(np.float32)
        ranges = np.asarray(meta["ranges_m"], dtype=np.float64)
        dr = float(ranges[1] - ranges[0]) if ranges.size > 1 else float(cfg["max_range"] - cfg["min_range"])
        device = cfg.get("model") == "device"
        c = float(cfg["sound_speed"]) if device else 1500.0
        beam = math.radians(cfg["along_track_beamwidth"])
        ping = self.new(msgtype("PingInfo"), frequency=float(cfg["frequency"]) if device else 0.0, sound_speed=c,
                        tx_beamwidths=np.full(2, beam, dtype=np.float32),
                        rx_beamwidths=np.full(2, math.radians(cfg["vertical_beamwidth"]), dtype=np.float32))
        data = self.new(msgtype("SonarImageData"), is_bigendian=False, dtype=8, beam_count=2,
                        data=np.frombuffer(np.ascontiguousarray(series, dtype="<f4").tobytes(), dtype=np.uint8))
        msg = self.new(msgtype("RawSonarImage"), header=self.header(sample["time"], sensor_frame(name, "sonar")),
                       ping_info=ping, sample_rate=c / (2.0 * dr), samples_per_beam=int(series.shape[0]),
                       sample0=int(round(float(cfg["min_range"]) / dr)), tx_delays=np.zeros(2, dtype=np.float32),
                       tx_angles=np.zeros(2, dtype=np.float32),
                       rx_angles=np.array([-math.pi / 2, math.pi / 2], dtype=np.float32), image=data)
        return [(f"/{name}/raw_image", msgtype("RawSonarImage"), msg)]

    def msis(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        """RawSonarImage of one MSIS step: one beam, rx_angles = [head angle] (rad, about the sonar frame's x axis,
        + starboard), one row per slant-range sample (``ranges_m``); ping_info has the config's frequency and
        sound speed, tx_beamwidths the horizontal (scan-plane) and rx_beamwidths the vertical beam width;
        sample_rate = c / (2 dr); sample0 = min_range / dr."""
        cfg = meta["config"]
        series = self.need(sample, "intensity", name).astype(np.float32).reshape(-1, 1)
        head = float(np.asarray(self.need(sample, "head_angle_deg", name)).reshape(-1)[0])
        ranges = np.asarray(meta["ranges_m"], dtype=np.float64)
        dr = float(ranges[1] - ranges[0]) if ranges.size > 1 else float(cfg["max_range"] - cfg["min_range"])
        c = float(cfg["sound_speed"])
        ping = self.new(msgtype("PingInfo"), frequency=float(cfg["frequency"]), sound_speed=c,
                        tx_beamwidths=np.array([math.radians(cfg["horizontal_beamwidth"])], dtype=np.float32),
                        rx_beamwidths=np.array([math.radians(cfg["vertical_beamwidth"])], dtype=np.float32))
        data = self.new(msgtype("SonarImageData"), is_bigendian=False, dtype=8, beam_count=1,
                        data=np.frombuffer(np.ascontiguousarray(series, dtype="<f4").tobytes(), dtype=np.uint8))
        msg = self.new(msgtype("RawSonarImage"), header=self.header(sample["time"], sensor_frame(name, "sonar")),
                       ping_info=ping, sample_rate=c / (2.0 * dr), samples_per_beam=int(series.shape[0]),
                       sample0=int(round(float(cfg["min_range"]) / dr)), tx_delays=np.zeros(1, dtype=np.float32),
                       tx_angles=np.array([math.radians(head)], dtype=np.float32),
                       rx_angles=np.array([math.radians(head)], dtype=np.float32), image=data)
        return [(f"/{name}/raw_image", msgtype("RawSonarImage"), msg)]

    def point_cloud(self, t: float, frame: str, xyz: np.ndarray, intensity: np.ndarray) -> Any:
        n = xyz.shape[0]
        rec = np.zeros(n, dtype=[("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("intensity", "<f4")])
        rec["x"], rec["y"], rec["z"], rec["intensity"] = xyz[:, 0], xyz[:, 1], xyz[:, 2], intensity
        fields = [self.new("sensor_msgs/msg/PointField", name=f, offset=4 * i, datatype=7, count=1)
                  for i, f in enumerate(("x", "y", "z", "intensity"))]
        return self.new("sensor_msgs/msg/PointCloud2", header=self.header(t, frame), height=1, width=n,
                        fields=fields, is_bigendian=False, point_step=16, row_step=16 * n,
                        data=np.frombuffer(rec.tobytes(), dtype=np.uint8),
                        is_dense=bool(np.all(np.isfinite(xyz))))

    def profiling(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        t = sample["time"]
        rng = self.need(sample, "bottom_range", name).astype(np.float32)
        angles = np.asarray(meta["beam_angles_rad"], dtype=np.float64)
        inten = product(sample, "intensity")
        inten = np.zeros_like(rng) if inten is None or inten.shape != rng.shape else inten.astype(np.float32)
        out: list[Message] = []
        world = product(sample, "point_world")
        if world is not None:
            out.append((f"/{name}/points", "sensor_msgs/msg/PointCloud2",
                        self.point_cloud(t, WORLD_FRAME, world.reshape(-1, 3), inten)))
        # beam unit vectors in the sensor FLU frame: from nadir (-z), + starboard (-y)
        dirs = [self.vector3((0.0, -math.sin(a), -math.cos(a))) for a in angles]
        flags = [self.new(msgtype("DetectionFlag"), flag=0 if np.isfinite(r) else 1) for r in rng]
        ranges = self.new(msgtype("SonarRanges"), header=self.header(t, sensor_frame(name)),
                          ping_info=self._profiling_ping_info(meta["config"], angles),
                          flags=flags, transmit_delays=np.zeros(rng.size, dtype=np.float32), intensities=inten,
                          beam_unit_vec=dirs, ranges=rng)
        out.append((f"/{name}/ranges", msgtype("SonarRanges"), ranges))
        return out

    def _profiling_ping_info(self, cfg: dict[str, Any], angles: np.ndarray) -> Any:
        """PingInfo of a profiling sonar of config ``cfg`` whose beams point at across-track ``angles`` (rad): the
        device chain's carrier frequency and sound speed (the peer model has no carrier: 0, unknown); per beam the
        along-track transmit width and the across-track -3 dB receive width, ``beam_width`` as the chain forms it
        (:func:`~oceansim_py.io.sonar_messages.receive_beamwidths`), else one beam spacing (swath_width /
        n_beams). All widths in rad."""
        device = cfg.get("model") == "device"
        width = math.radians(float(cfg.get("beam_width") or 0.0))
        rx = receive_beamwidths(angles, width, cfg.get("beam_steering", "constant")) if device and width > 0 else \
            np.full(angles.shape, math.radians(cfg["swath_width"]) / cfg["n_beams"])
        return self.new(msgtype("PingInfo"), frequency=float(cfg["frequency"]) if device else 0.0,
                        sound_speed=float(cfg["sound_speed"]) if device else 0.0,
                        tx_beamwidths=np.full(angles.shape, math.radians(cfg["along_track_beamwidth"]),
                                              dtype=np.float32),
                        rx_beamwidths=np.asarray(rx, dtype=np.float32))

    def singlebeam(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        cfg = meta["config"]
        alt = float(np.asarray(self.need(sample, "first_return_range", name)).reshape(-1)[0])
        msg = self.new("sensor_msgs/msg/Range", header=self.header(sample["time"], sensor_frame(name)),
                       radiation_type=0, field_of_view=math.radians(cfg["opening_angle"]),
                       min_range=float(cfg["min_range"]), max_range=float(cfg["max_range"]), range=alt)
        return [(f"/{name}/altitude", "sensor_msgs/msg/Range", msg)]

    def dvl(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        v = DVL_IN_FLU.T @ self.need(sample, "velocity", name).astype(np.float64).reshape(3)
        beam_range = product(sample, "beam_range")
        beam_vel = product(sample, "beam_velocity")
        beam_ok = product(sample, "beam_valid")
        if beam_ok is None and beam_range is not None:
            beam_ok = np.isfinite(beam_range)
        n_good = int(np.count_nonzero(beam_ok)) if beam_ok is not None else (3 if np.all(np.isfinite(v)) else 0)
        alt = product(sample, "altitude")
        directions = np.asarray(meta["beam_directions_sensor_frame"], dtype=np.float64)[:4]
        (velocity_var,) = noise_variances(meta, "velocity_sigma") or (None,)
        (range_var,) = noise_variances(meta, "range_sigma") or (None,)
        solved = beam_ok is not None and bool(np.all(np.isfinite(v)))
        msg = self.new(
            msgtype("Dvl"), header=self.header(sample["time"], sensor_frame(name, "dvl")), velocity_mode=1, dvl_type=0,
            velocity=self.vector3(v),
            velocity_covar=(beam_solve_covariance(directions, np.asarray(beam_ok).reshape(4), velocity_var,
                                                  DVL_IN_FLU.T) if solved else np.full(9, -1.0)),
            altitude=float(np.nan if alt is None else np.asarray(alt).reshape(-1)[0]),
            course_gnd=math.atan2(v[1], v[0]), speed_gnd=math.hypot(v[0], v[1]), num_good_beams=n_good,
            sound_speed=float(meta["config"]["sound_speed"]),
            beam_ranges_valid=beam_range is not None, beam_velocities_valid=beam_vel is not None,
            beam_unit_vec=[self.vector3(DVL_IN_FLU.T @ d)
                           for d in np.asarray(meta["beam_directions_sensor_frame"], dtype=np.float64)[:4]],
            range=np.full(4, np.nan) if beam_range is None else beam_range.astype(np.float64).reshape(4),
            range_covar=beam_covariances(beam_ok if beam_range is not None else None, range_var),
            beam_quality=np.zeros(4, dtype=np.float32),
            beam_velocity=(np.full(4, np.nan, dtype=np.float32) if beam_vel is None
                           else beam_vel.astype(np.float32).reshape(4)),
            beam_velocity_covar=beam_covariances(beam_ok if beam_vel is not None else None, velocity_var))
        out: list[Message] = [(f"/{name}/dvl", msgtype("Dvl"), msg)]
        water = product(sample, "water_velocity")
        if water is not None:
            w = DVL_IN_FLU.T @ water.astype(np.float64).reshape(3)
            wbeams = product(sample, "water_beam_velocity")
            (water_var,) = noise_variances(meta, "water_velocity_sigma") or (None,)
            water_ok = None if wbeams is None else np.isfinite(wbeams.astype(np.float64).reshape(4))
            out.append((f"/{name}/dvl_water", msgtype("Dvl"), self.new(
                msgtype("Dvl"), header=msg.header, velocity_mode=2, dvl_type=0, velocity=self.vector3(w),
                velocity_covar=(beam_solve_covariance(directions, water_ok, water_var, DVL_IN_FLU.T)
                                if water_ok is not None and bool(np.all(np.isfinite(w))) else np.full(9, -1.0)),
                altitude=msg.altitude, course_gnd=math.atan2(w[1], w[0]),
                speed_gnd=math.hypot(w[0], w[1]),
                num_good_beams=int(np.count_nonzero(np.isfinite(wbeams))) if wbeams is not None else 0,
                sound_speed=msg.sound_speed, beam_ranges_valid=False, beam_velocities_valid=wbeams is not None,
                beam_unit_vec=msg.beam_unit_vec, range=np.full(4, np.nan), range_covar=msg.range_covar,
                beam_quality=msg.beam_quality,
                beam_velocity=(np.full(4, np.nan, dtype=np.float32) if wbeams is None
                               else wbeams.astype(np.float32).reshape(4)),
                beam_velocity_covar=beam_covariances(water_ok, water_var))))
        return out

    def imu(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        acc = self.need(sample, "accel", name).reshape(3)
        gyro = self.need(sample, "gyro", name).reshape(3)
        unknown = np.zeros(9)
        unknown[0] = -1.0
        gyro_var, accel_var = noise_variances(meta, "gyro_noise_sigma", "accel_noise_sigma") or (0.0, 0.0)
        msg = self.new("sensor_msgs/msg/Imu", header=self.header(sample["time"], sensor_frame(name)),
                       orientation=self.new("geometry_msgs/msg/Quaternion", x=0.0, y=0.0, z=0.0, w=1.0),
                       orientation_covariance=unknown, angular_velocity=self.vector3(gyro),
                       angular_velocity_covariance=diagonal_covariance([gyro_var * (math.pi / 180.0) ** 2] * 3),
                       linear_acceleration=self.vector3(acc),
                       linear_acceleration_covariance=diagonal_covariance([accel_var] * 3))
        return [(f"/{name}/data", "sensor_msgs/msg/Imu", msg)]

    def barometer(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        p = float(self.need(sample, "pressure", name).reshape(-1)[0])
        msg = self.new("sensor_msgs/msg/FluidPressure", header=self.header(sample["time"], sensor_frame(name)),
                       fluid_pressure=p, variance=(noise_variances(meta, "noise_sigma") or [0.0])[0])
        return [(f"/{name}/pressure", "sensor_msgs/msg/FluidPressure", msg)]

    def gps(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        pos = self.need(sample, "position", name).astype(np.float64).reshape(3)
        fix = product(sample, "fix")
        has_fix = bool(np.all(np.isfinite(pos))) if fix is None else bool(np.asarray(fix).reshape(-1)[0])
        lat, lon, alt = local_to_geodetic(pos, self.gps_datum) if has_fix else (math.nan,) * 3
        status = self.new("sensor_msgs/msg/NavSatStatus", status=0 if has_fix else -1, service=1)
        known = noise_variances(meta, "horizontal_sigma", "vertical_sigma") if has_fix else None
        msg = self.new("sensor_msgs/msg/NavSatFix", header=self.header(sample["time"], sensor_frame(name)),
                       status=status, latitude=lat, longitude=lon, altitude=alt,
                       position_covariance=diagonal_covariance([known[0], known[0], known[1]] if known else [0.0] * 3),
                       position_covariance_type=2 if known else 0)
        return [(f"/{name}/fix", "sensor_msgs/msg/NavSatFix", msg)]

    def pose(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        m = self.need(sample, "matrix", name).astype(np.float64).reshape(4, 4)
        q = rotation_to_quat(m[:3, :3])
        pose = self.new("geometry_msgs/msg/Pose",
                        position=self.new("geometry_msgs/msg/Point", x=m[0, 3], y=m[1, 3], z=m[2, 3]),
                        orientation=self.new("geometry_msgs/msg/Quaternion", x=q[0], y=q[1], z=q[2], w=q[3]))
        msg = self.new("geometry_msgs/msg/PoseStamped", header=self.header(sample["time"], WORLD_FRAME), pose=pose)
        return [(f"/{name}/pose", "geometry_msgs/msg/PoseStamped", msg)]

    def magnetometer(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        field_t = self.need(sample, "field", name).astype(np.float64).reshape(3) * 1e-6      # uT -> T
        msg = self.new("sensor_msgs/msg/MagneticField", header=self.header(sample["time"], sensor_frame(name)),
                       magnetic_field=self.vector3(field_t),
                       magnetic_field_covariance=diagonal_covariance(
                           [v * 1e-12 for v in noise_variances(meta, "noise_sigma") or [0.0]] * 3))
        return [(f"/{name}/field", "sensor_msgs/msg/MagneticField", msg)]

    def usbl(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        pos = product(sample, "position")
        if pos is None:   # the default products: r (cos e cos b, -cos e sin b, sin e), as USBL.measure's position
            r, b, e = (self.need(sample, k, name).astype(np.float64).reshape(-1)
                       for k in ("slant_range", "bearing", "elevation"))
            pos = r[:, None] * np.stack([np.cos(e) * np.cos(b), -np.cos(e) * np.sin(b), np.sin(e)], axis=-1)
        out: list[Message] = []
        for beacon, p in zip(meta["beacon_ids"], np.asarray(pos, dtype=np.float64).reshape(-1, 3)):
            if np.all(np.isfinite(p)):
                msg = self.new("geometry_msgs/msg/PointStamped", header=self.header(sample["time"], sensor_frame(name)),
                               point=self.new("geometry_msgs/msg/Point", x=p[0], y=p[1], z=p[2]))
                out.append((f"/{name}/beacon_{beacon}", "geometry_msgs/msg/PointStamped", msg))
        return out

    def lbl(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        ranges = self.need(sample, "range", name).astype(np.float64).reshape(-1)
        cfg = meta["config"]
        out: list[Message] = []
        for beacon, r in zip(meta["beacon_ids"], ranges):
            if np.isfinite(r):
                msg = self.new("sensor_msgs/msg/Range", header=self.header(sample["time"], sensor_frame(name)),
                               radiation_type=0, field_of_view=0.0, min_range=0.0,
                               max_range=float(cfg["max_range"]), range=float(r))
                out.append((f"/{name}/range_{beacon}", "sensor_msgs/msg/Range", msg))
        return out

    def modem_events(self, name: str, meta: dict[str, Any], sample: dict[str, Any]) -> list[Message]:
        from oceansim_py.sensors.modem_common import decode_events

        self.need(sample, "events", name)
        out: list[Message] = []
        for event in decode_events(sample, meta):
            event.pop("payload")
            msg = self.new("std_msgs/msg/String", data=json.dumps(event, sort_keys=True))
            when = next((float(event[k]) for k in ("receive_time", "arrival_time")
                         if event.get(k) is not None and math.isfinite(float(event[k]))), float(sample["time"]))
            out.append((f"/{name}/events", "std_msgs/msg/String", msg, when))
        return out


def static_transforms(factory: RosMessageFactory, sensors: dict[str, dict[str, Any]], t: float,
                      mounts: dict[str, np.ndarray]) -> list[Any]:
    """``/tf_static``: base_link -> every sensor (its mount), and sensor -> its optical / sonar / dvl sub-frame."""
    out = []
    for name, meta in sensors.items():
        out.append(factory.transform(t, VEHICLE_FRAME, sensor_frame(name), mounts[name]))
        sub = {"camera": ("optical", OPTICAL_IN_FLU), "imaging_sonar": ("sonar", SONAR_IN_FLU),
               "multibeam": ("sonar", SONAR_IN_FLU), "sidescan": ("sonar", SONAR_IN_FLU),
               "msis": ("sonar", SONAR_IN_FLU), "dvl": ("dvl", DVL_IN_FLU)}.get(meta["type"])
        if sub:
            m = np.eye(4)
            m[:3, :3] = sub[1]
            out.append(factory.transform(t, sensor_frame(name), sensor_frame(name, sub[0]), m))
    return out
