"""Doppler velocity log: a four-beam Janus array cast on the scene's BVH (docs/PHYSICS.md §5).

Geometry (sensor frame, FLU): beam ``k`` points at ``beam_angle`` alpha from the sensor's -z axis, at azimuth
``phi_k = 45° + k·90°`` (layout "X") or ``k·90°`` (layout "+"), azimuth measured from +x towards +y:
``d_k = (sin a cos phi_k, sin a sin phi_k, -cos a)``. Mount the sensor looking down (identity rotation on a
level vehicle). With ``tracking: surface`` the beams point about the sensor's +z axis instead,
``d_k = (sin a cos phi_k, sin a sin phi_k, +cos a)``: an upward-looking DVL (identity rotation on a level vehicle
looks up).

Surface tracking (``tracking: surface``; the ice/surface-track mode of upward-looking DVLs and ADCPs): each beam
measures its first echo above, the sea surface or whatever floats on it (ice, a hull). The flat surface
z = ``scene.surface_z`` is a target even though it is not geometry; a moving sea surface (``Scene.add_sea_surface``)
is met as its instantaneous mesh (beyond the patch's horizontal extent, as the flat plane again, still), and a beam that hits it measures ``d_k · (v - u_k)``, ``u_k`` the water's orbital
velocity at the hit point (:meth:`~oceansim_py.scene.sea_surface.SeaSurface.surface_velocity`, sensor frame):
the velocity relative to the moving surface. Its range is to the instantaneous surface, and ``altitude`` is the mean
``r_k cos(alpha)``: the distance up to the surface along the sensor's z axis (the depth below the surface for a
level sensor). Other geometry (a hull, a pier) is still; bottom tracking ignores the surface's motion. The solve
assumes one velocity for all beams: under waves not much longer than the footprint the orbital velocity differs
from beam to beam, and the fore/aft difference of its vertical part enters the horizontal estimate times
cot(alpha), as in real surface-track data (the beam velocities are exact).

Model, per sample: beam ``k`` is valid when its ray hits within ``[min_range, max_range]``; its range gets
N(0, range_sigma) and its velocity is ``v_k = d_k · v + N(0, velocity_sigma)``, ``v`` the sensor's velocity
over the bottom in the sensor frame (positive ``v_k``: closing on the bottom along the beam). The velocity is
the least-squares solution over the valid beams; with all four beams of the "+" layout this is HoloOcean's
Janus matrix (holoocean-2022 eq. 4, whose beam vectors are ``-d`` of the opposite beams). Fewer than three
valid beams is a dropout: ``valid`` false and velocity NaN (never zeros, which a filter cannot tell from a
stop). Altitude: mean of ``r_k cos(alpha)`` (the sensor-frame vertical component) over the valid beams.

Adaptive rate (:func:`adaptive_rate_hz`): OceanSim pings at 100 Hz below 7.5 m, follows c/(2h) up to 50 m and
jumps to 5 Hz beyond (its ramp ends at 15 Hz). Here, with h0 = sound_speed / (2 max_rate):

    f(h) = max_rate                                         h <= h0            (7.5 m)
         = sound_speed / (2 h)                              h0 < h <= knee     (50 m: 15 Hz)
         = f(knee) + (min_rate - f(knee)) (h - knee) / ramp knee < h < knee + ramp (to 60 m)
         = min_rate                                         h >= knee + ramp   (5 Hz)

which is continuous everywhere. A dropout (unknown altitude) reports ``min_rate``. ``DVL.render`` samples at
the poses it is given (each result carries ``rate_hz``); ``DVL.render_adaptive`` pings a Trajectory at this rate.

Water currents and water-track (issue 17): with ``water_track: true`` every ping is also a water-track ping,
as on DVLs that report both (off by default: it costs a launch and memory, and its products need it). Beam ``k`` looks at a layer of water from ``blanking_distance`` to ``blanking_distance + water_layer`` m along
the beam; its water velocity ``c_k`` is the current field (:mod:`oceansim_py.sensors.currents`: ``none``,
``uniform``, a depth ``profile`` or a ``grid`` file) at the layer's centre. The beam measures
``d_k · (v - c_k) + N(0, water_velocity_sigma)`` when its bottom return (if any) lies beyond the layer's end, and
the water-track velocity is the same least-squares solve over those beams (>= 3, else NaN). So in a uniform
current ``c`` (rotated into the sensor frame) bottom-track reads the velocity over the ground ``v`` and
water-track ``v - c``; without a current both read ``v``. The bottom-track products do not depend on any of this.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError, OceanSimError
from oceansim_py.io.config import (ConfigBase, require, require_non_negative, require_positive, require_seed,
                                    require_water_sound_speed)
from oceansim_py.kernels.dvl import (NUM_BEAMS, dvl_beam_rays_kernel, dvl_beams_kernel, dvl_solve_kernel,
                                     dvl_water_beams_kernel)
from oceansim_py.poses import quat_to_matrix, rotate_fixed
from oceansim_py.runtime import as_float32, check_memory, launch_1d, resolve_device
from oceansim_py.sensors.backend_field import RaycastBackendField
from oceansim_py.sensors.batching import PoseUploads, check_render_call
from oceansim_py.sensors.currents import KINDS as CURRENT_KINDS
from oceansim_py.sensors.currents import CurrentField, current_field
from oceansim_py.sensors.rays import RayBuffers
from oceansim_py.sensors.scratch import ScratchCache

_OWNER = "DVLConfig"

#: What the beams track: the bottom (looking down) or the sea surface (looking up).
TRACKING_MODES = ("bottom", "surface")


@dataclasses.dataclass(frozen=True)
class DVLConfig(RaycastBackendField, ConfigBase):
    """DVL parameters.

    beam_angle: deg, angle of each beam from the sensor's -z axis. layout: "X" (azimuths 45° + k·90°) or "+"
    (k·90°). min_range / max_range: m, slant range window of a valid beam. velocity_sigma: m/s, per-beam velocity
    noise. range_sigma: m, per-beam range noise. sound_speed: m/s (adaptive rate). max_rate / min_rate: Hz.
    rate_knee: m, end of the c/(2h) part. rate_ramp: m, length of the linear fall from f(knee) to min_rate.
    noise: False turns all noise off. seed: run seed of the counter-based noise.

    Water current and water-track (module docstring): water_track: also measure the velocity relative to the
    water (the ``water_*`` products need it). current: "none", "uniform", "profile" or "grid".
    current_velocity: m/s, world frame (x, y, z), for "uniform". current_profile: rows [depth m, vx, vy, vz m/s]
    in increasing depth, for "profile". current_file: a .npz or .csv grid (:mod:`oceansim_py.sensors.currents`;
    a relative path is taken from the working directory), for "grid". blanking_distance: m along each beam
    before the water-track layer. water_layer: m, the layer's length along the beam. water_velocity_sigma: m/s,
    per-beam water-track velocity noise.

    tracking: "bottom" (beams about -z, ranges and velocities relative to the bottom) or "surface" (beams about +z,
    relative to the sea surface; module docstring).
    """

    beam_angle: float = 22.5
    layout: str = "X"
    min_range: float = 0.1
    max_range: float = 50.0
    velocity_sigma: float = 0.01
    range_sigma: float = 0.02
    sound_speed: float = 1500.0
    max_rate: float = 100.0
    min_rate: float = 5.0
    rate_knee: float = 50.0
    rate_ramp: float = 10.0
    noise: bool = True
    seed: int = 0
    water_track: bool = False
    current: str = "none"
    current_velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    current_profile: tuple[tuple[float, float, float, float], ...] = ()
    current_file: str = ""
    blanking_distance: float = 0.5
    water_layer: float = 2.0
    water_velocity_sigma: float = 0.02
    tracking: str = "bottom"

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # Generic 4-beam Janus DVLs at the two common beam angles (docs/PHYSICS.md §5); noise of a 1 cm/s-class
        # per-beam velocity and 2 cm range, 50 m maximum range (OceanSim's rate knee).
        "dvl_22_5deg": {"beam_angle": 22.5, "layout": "X"},
        "dvl_30deg": {"beam_angle": 30.0, "layout": "X"},
        # HoloOcean's layout: "+" beams, the order and angle its Janus matrix (eq. 4) assumes.
        "holoocean": {"beam_angle": 22.5, "layout": "+"},
        # Water Linked DVL A50 (public spec sheet): 4 beams at 22.5°, 0.05-50 m altitude. Noise values are
        # this library's typical figures, not the vendor's.
        "waterlinked_a50": {"beam_angle": 22.5, "layout": "X", "min_range": 0.05, "max_range": 50.0 / math.cos(
            math.radians(22.5)), "velocity_sigma": 0.005, "range_sigma": 0.01},
    }

    def validate(self) -> None:
        self.validate_raycast_backend()
        require_positive(self.beam_angle, _OWNER, "beam_angle", "deg")
        require(self.beam_angle < 90.0, _OWNER, "beam_angle", f"must be < 90 deg, got {self.beam_angle!r}")
        require(self.layout in ("X", "+"), _OWNER, "layout", f"must be 'X' or '+', got {self.layout!r}")
        require_non_negative(self.min_range, _OWNER, "min_range", "m")
        require_positive(self.max_range, _OWNER, "max_range", "m")
        require(self.max_range > self.min_range, _OWNER, "max_range",
                f"must be > min_range ({self.min_range}), got {self.max_range!r}")
        require_non_negative(self.velocity_sigma, _OWNER, "velocity_sigma", "m/s")
        require_non_negative(self.range_sigma, _OWNER, "range_sigma", "m")
        require_water_sound_speed(self.sound_speed, _OWNER)
        require_positive(self.max_rate, _OWNER, "max_rate", "Hz")
        require_positive(self.min_rate, _OWNER, "min_rate", "Hz")
        require(self.max_rate > self.min_rate, _OWNER, "max_rate",
                f"must be > min_rate ({self.min_rate}), got {self.max_rate!r}")
        require_positive(self.rate_knee, _OWNER, "rate_knee", "m")
        h0 = self.sound_speed / (2.0 * self.max_rate)
        require(self.rate_knee > h0, _OWNER, "rate_knee",
                f"must be above sound_speed / (2 max_rate) = {h0:g} m, got {self.rate_knee!r}")
        require(self.sound_speed / (2.0 * self.rate_knee) >= self.min_rate, _OWNER, "rate_knee",
                f"c / (2 rate_knee) = {self.sound_speed / (2.0 * self.rate_knee):g} Hz must be >= min_rate "
                f"({self.min_rate} Hz); lower rate_knee or min_rate")
        require_positive(self.rate_ramp, _OWNER, "rate_ramp", "m")
        require_seed(self.seed, _OWNER)
        require(self.current in CURRENT_KINDS, _OWNER, "current",
                f"must be one of {list(CURRENT_KINDS)}, got {self.current!r}")
        require(all(np.isfinite(self.current_velocity)), _OWNER, "current_velocity",
                f"must be 3 finite numbers (m/s), got {self.current_velocity!r}")
        require(self.current != "grid" or bool(self.current_file), _OWNER, "current_file",
                "name a .npz or .csv grid file for current: grid")
        require_non_negative(self.blanking_distance, _OWNER, "blanking_distance", "m")
        require_positive(self.water_layer, _OWNER, "water_layer", "m")
        require_non_negative(self.water_velocity_sigma, _OWNER, "water_velocity_sigma", "m/s")
        require(self.tracking in TRACKING_MODES, _OWNER, "tracking",
                f"must be one of {list(TRACKING_MODES)} (bottom: beams look down; surface: beams look up at the sea "
                f"surface), got {self.tracking!r}")
        self.current_field()

    def current_field(self) -> CurrentField:
        """The water current this DVL sees (loads a grid file; ``ConfigError`` naming the field when it is bad)."""
        return current_field(self.current, self.current_velocity, self.current_profile, self.current_file, _OWNER)

    def memory_bytes(self, batch: int = 1) -> int:
        """Device bytes of ``batch`` samples: ``DVL.BYTES_PER_SAMPLE`` each, plus ``DVL.WATER_BYTES_PER_SAMPLE``
        with water-track and the beams' target velocities (4 vec3) when surface tracking."""
        return batch * (DVL.BYTES_PER_SAMPLE + (DVL.WATER_BYTES_PER_SAMPLE if self.water_track else 0)
                        + (NUM_BEAMS * 12 if self.tracking == "surface" else 0))

    def beam_directions(self) -> np.ndarray:
        """(4, 3) unit beam directions in the sensor frame (see the module docstring): about -z, or +z when
        surface tracking."""
        a = math.radians(self.beam_angle)
        phi = np.radians((45.0 if self.layout == "X" else 0.0) + 90.0 * np.arange(NUM_BEAMS))
        up = 1.0 if self.tracking == "surface" else -1.0
        return np.column_stack([math.sin(a) * np.cos(phi), math.sin(a) * np.sin(phi),
                                np.full(NUM_BEAMS, up * math.cos(a))])


def adaptive_rate_hz(altitude: Any, config: DVLConfig | None = None) -> np.ndarray:
    """Ping rate (Hz) at ``altitude`` (m), continuous piecewise formula of the module docstring; NaN altitude
    (dropout) gives ``min_rate``."""
    c = config if config is not None else DVLConfig()
    h = np.asarray(altitude, dtype=np.float64)
    h0 = c.sound_speed / (2.0 * c.max_rate)
    f_knee = c.sound_speed / (2.0 * c.rate_knee)
    with np.errstate(divide="ignore", invalid="ignore"):
        ping = c.sound_speed / (2.0 * np.maximum(h, h0))
        ramp = f_knee + (c.min_rate - f_knee) * (h - c.rate_knee) / c.rate_ramp
    out = np.where(h <= c.rate_knee, np.minimum(ping, c.max_rate), np.maximum(ramp, c.min_rate))
    return np.where(np.isnan(h), c.min_rate, out)


@dataclasses.dataclass
class DVLResult:
    """DVL samples of a batch of B poses, as Warp arrays on the sensor's device.

    velocity: (B,) vec3, sensor frame (FLU), m/s; NaN on dropout. valid: (B,) int32, 1 when >= 3 beams.
    beam_range: (B * 4,) float32 slant ranges (m), NaN for invalid beams. beam_velocity: (B * 4,) float32 beam
    velocities ``d_k · v`` (m/s; ``d_k · (v - u_k)`` on a moving sea surface when surface tracking), NaN for
    invalid beams. beam_valid: (B * 4,) int32. altitude: (B,) float32 (m; the distance up to the surface when
    surface tracking), NaN when no beam is valid. times: (B,) seconds when the poses came from a Trajectory, else
    ``None``.
    With water-track (else ``None``): water_velocity: (B,) vec3 water-track velocity (relative to the water layer), sensor frame, m/s; NaN with
    fewer than 3 water-track beams. water_valid: (B,) int32. water_beam_velocity: (B * 4,) float32 (NaN invalid).
    """

    velocity: wp.array
    valid: wp.array
    beam_range: wp.array
    beam_velocity: wp.array
    beam_valid: wp.array
    altitude: wp.array
    config: DVLConfig
    frame_index: int
    times: np.ndarray | None = None
    water_velocity: wp.array | None = None
    water_valid: wp.array | None = None
    water_beam_velocity: wp.array | None = None

    @property
    def batch_size(self) -> int:
        return int(self.valid.shape[0])

    def numpy(self) -> dict[str, np.ndarray]:
        """Host copies: velocity (B, 3), valid (B,) bool, beam_range / beam_velocity / beam_valid (B, 4),
        altitude (B,), rate_hz (B,) from :func:`adaptive_rate_hz`, beam_directions (4, 3), and times."""
        b = self.batch_size
        alt = self.altitude.numpy()
        out = {"velocity": self.velocity.numpy().reshape(b, 3), "valid": self.valid.numpy().astype(bool),
               "beam_range": self.beam_range.numpy().reshape(b, NUM_BEAMS),
               "beam_velocity": self.beam_velocity.numpy().reshape(b, NUM_BEAMS),
               "beam_valid": self.beam_valid.numpy().reshape(b, NUM_BEAMS).astype(bool), "altitude": alt,
               "rate_hz": adaptive_rate_hz(alt, self.config), "beam_directions": self.config.beam_directions()}
        if self.times is not None:
            out["times"] = self.times.copy()
        if self.water_velocity is not None:
            out["water_velocity"] = self.water_velocity.numpy().reshape(b, 3)
            out["water_valid"] = self.water_valid.numpy().astype(bool)
            out["water_beam_velocity"] = self.water_beam_velocity.numpy().reshape(b, NUM_BEAMS)
        return out

    def torch(self) -> dict[str, Any]:
        """Zero-copy torch tensors of the device arrays (``wp.to_torch``); needs PyTorch installed."""
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise OceanSimError("DVLResult.torch() needs PyTorch; install it (pip install torch) or use "
                                ".numpy()") from exc
        b = self.batch_size
        return {"velocity": wp.to_torch(self.velocity), "valid": wp.to_torch(self.valid),
                "beam_range": wp.to_torch(self.beam_range).reshape(b, NUM_BEAMS),
                "beam_velocity": wp.to_torch(self.beam_velocity).reshape(b, NUM_BEAMS),
                "beam_valid": wp.to_torch(self.beam_valid).reshape(b, NUM_BEAMS),
                "altitude": wp.to_torch(self.altitude)}


class DVL:
    """A four-beam DVL on ``device`` (``None``: cuda:0 if present, else cpu). ``sensor_id`` separates the noise
    of several DVLs sharing a seed."""

    #: Device bytes per sample: pose, velocity, 4 x (range, velocity, valid), velocity, valid, altitude, and the
    #: 4 beams' rays and hits for the ray-cast backend (``RayBuffers.BYTES_PER_RAY`` each).
    BYTES_PER_SAMPLE = 28 + 12 + 4 * 12 + 12 + 4 + 4 + NUM_BEAMS * RayBuffers.BYTES_PER_RAY
    #: and with water-track: 4 x (layer current, velocity, valid), velocity, valid, altitude scratch.
    WATER_BYTES_PER_SAMPLE = 4 * 20 + 12 + 4 + 4

    def __init__(self, config: DVLConfig | None = None, device: Any = None, sensor_id: int = 0) -> None:
        self.config = config if config is not None else DVLConfig()
        if not isinstance(self.config, DVLConfig):
            raise ConfigError(f"DVL: config must be a DVLConfig, got {type(config).__name__}")
        self.device = resolve_device(device)
        self.sensor_id = int(sensor_id)
        self._dirs = wp.array(self.config.beam_directions().astype(np.float32), dtype=wp.vec3, device=self.device)
        self._poses = PoseUploads(self.device)
        self._rays: ScratchCache[RayBuffers] = ScratchCache(2)
        self._current = self.config.current_field()
        self._still = wp.zeros(1, dtype=wp.vec3, device=self.device)   # stands in for target velocities

    def _sensor_velocities(self, poses: np.ndarray, source: Any, velocities: Any, velocity_frame: str) \
            -> np.ndarray:
        if velocities is None:
            if not hasattr(source, "velocity") or not hasattr(source, "times"):
                raise ConfigError("DVL.render: pass velocities (B, 3) with the poses, or a Trajectory (whose "
                                  "velocity over the bottom is used)")
            return np.asarray(source.velocity(frame="body"), dtype=np.float64)
        v = as_float32(velocities, (3,), "DVL.render velocities").astype(np.float64).reshape(-1, 3)
        if v.shape[0] == 1 and poses.shape[0] > 1:
            v = np.repeat(v, poses.shape[0], axis=0)
        if v.shape[0] != poses.shape[0]:
            raise ConfigError(f"DVL.render: {v.shape[0]} velocities for {poses.shape[0]} poses; give one per pose")
        if velocity_frame == "sensor":
            return v
        if velocity_frame == "world":
            return rotate_fixed(quat_to_matrix(poses[:, 3:].astype(np.float64)), v, transpose=True)
        raise ConfigError(f"DVL.render: velocity_frame must be 'world' or 'sensor', got {velocity_frame!r}")

    def render(self, scene: Any, poses: Any, velocities: Any = None, velocity_frame: str = "world",
               frame_index: int = 0) -> DVLResult:
        """Sample the DVL at B poses: one ray cast of the B x 4 beams through the scene's backend, one beam launch
        (element = (sample, beam)) and one solve launch.

        Args:
            scene: a :class:`~oceansim_py.scene.Scene` on this sensor's device.
            poses: sensor poses (7,), (B, 7) or a Trajectory (then its times are carried into the result and,
                without ``velocities``, its velocity is the velocity over the bottom).
            velocities: (B, 3) or (3,) sensor velocity over the bottom (m/s) in ``velocity_frame``: "world"
                (rotated into the sensor frame here) or "sensor".
            frame_index: frame number of sample 0 (sample b is frame ``frame_index + b``; keys the noise).
        """
        p = check_render_call("DVL", scene, self.device, poses, frame_index, poses_name="DVL.render poses")
        v = self._sensor_velocities(p, poses, velocities, velocity_frame)
        b = p.shape[0]
        c = self.config
        dev = self.device
        check_memory(c.memory_bytes(b), dev, f"DVL render of {b} samples", "render fewer samples at once")
        wposes = self._poses.upload(p)
        wvel = wp.array(v.astype(np.float32), dtype=wp.vec3, device=dev)
        nb = b * NUM_BEAMS
        out = DVLResult(wp.empty(b, dtype=wp.vec3, device=dev), wp.empty(b, dtype=wp.int32, device=dev),
                        wp.empty(nb, dtype=wp.float32, device=dev), wp.empty(nb, dtype=wp.float32, device=dev),
                        wp.empty(nb, dtype=wp.int32, device=dev), wp.empty(b, dtype=wp.float32, device=dev), c,
                        int(frame_index), np.asarray(poses.times, dtype=np.float64).copy()
                        if hasattr(poses, "times") else None)
        rays = self._rays.get_or_make(nb, lambda: RayBuffers(nb, dev, float(c.max_range)))
        launch_1d(dvl_beam_rays_kernel, nb, [wposes, self._dirs, rays.origins, rays.directions], dev,
                  align=NUM_BEAMS)
        rays.cast(scene, c.raycast_backend)
        surface = c.tracking == "surface"
        moving = surface and scene.sea_surface is not None
        target = self._surface_velocities(scene, p, rays) if moving else self._still
        mesh_min, mesh_max = (1.0, 1.0), (0.0, 0.0)          # an empty box: no wave mesh, the plane everywhere
        if moving:
            rest = scene.sea_surface.rest
            mesh_min, mesh_max = tuple(rest.min(axis=0)), tuple(rest.max(axis=0))
        launch_1d(dvl_beams_kernel, nb,
                  [rays.origins, rays.directions, *rays.hit_args(), wvel, self._dirs, float(c.min_range),
                   float(c.max_range), int(surface), float(scene.surface_z), wp.vec2(*mesh_min), wp.vec2(*mesh_max),
                   target, int(moving),
                   float(c.range_sigma), float(c.velocity_sigma), int(c.noise), int(c.seed), int(frame_index),
                   self.sensor_id, out.beam_range, out.beam_velocity, out.beam_valid], dev, align=NUM_BEAMS)
        launch_1d(dvl_solve_kernel, b, [self._dirs, out.beam_range, out.beam_velocity, out.beam_valid,
                                        out.velocity, out.valid, out.altitude], dev)
        if c.water_track:
            self._water_track(scene, p, wvel, out)
        return out

    def _surface_velocities(self, scene: Any, poses: np.ndarray, rays: RayBuffers) -> wp.array:
        """(B * 4,) velocity (sensor frame, m/s) of what each beam hit: the sea surface's orbital velocity at the
        hit point at the scene's time for beams that hit the moving surface, zero for the rest (host, one copy of
        the hits)."""
        sea_id = next(n.id for n in scene.nodes if n.sea_surface is not None)
        obj = rays.hits.obj.numpy()
        velocity = np.zeros((obj.shape[0], 3))
        on_sea = obj == sea_id
        if np.any(on_sea):
            points = (rays.origins.numpy()[on_sea].astype(np.float64)
                      + rays.hits.distance.numpy()[on_sea, None] * rays.directions.numpy()[on_sea])
            world = scene.sea_surface.surface_velocity(points[:, :2], scene.time)
            rot = quat_to_matrix(np.repeat(poses[:, 3:].astype(np.float64), NUM_BEAMS, axis=0)[on_sea])
            velocity[on_sea] = rotate_fixed(rot, world, transpose=True)
        return wp.array(velocity.astype(np.float32), dtype=wp.vec3, device=self.device)

    def _water_track(self, scene: Any, poses: np.ndarray, wvel: wp.array, out: DVLResult) -> None:
        """Water-track of the batch (module docstring): the current at each beam's layer centre (host, sensor
        frame), one launch for the beams and one solve."""
        c, dev = self.config, self.device
        b = poses.shape[0]
        layer_current = np.zeros((b, NUM_BEAMS, 3))
        if c.current != "none":
            rot = quat_to_matrix(poses[:, 3:].astype(np.float64))                        # (B, 3, 3) sensor -> world
            dirs_w = rotate_fixed(rot[:, None], c.beam_directions()[None, :, :])        # (B, 4, 3)
            centres = poses[:, None, :3].astype(np.float64) + dirs_w * (c.blanking_distance + c.water_layer / 2)
            water = self._current.at(centres.reshape(-1, 3), float(scene.surface_z)).reshape(b, NUM_BEAMS, 3)
            layer_current = rotate_fixed(rot[:, None], water, transpose=True)
        nb = b * NUM_BEAMS
        out.water_velocity = wp.empty(b, dtype=wp.vec3, device=dev)
        out.water_valid = wp.empty(b, dtype=wp.int32, device=dev)
        out.water_beam_velocity = wp.empty(nb, dtype=wp.float32, device=dev)
        water_valid = wp.empty(nb, dtype=wp.int32, device=dev)
        launch_1d(dvl_water_beams_kernel, nb,
                  [wvel, self._dirs, out.beam_range, wp.array(layer_current.reshape(-1, 3).astype(np.float32),
                                                              dtype=wp.vec3, device=dev),
                   float(c.blanking_distance + c.water_layer), float(c.water_velocity_sigma), int(c.noise),
                   int(c.seed), int(out.frame_index), self.sensor_id, out.water_beam_velocity, water_valid], dev,
                  align=NUM_BEAMS)
        launch_1d(dvl_solve_kernel, b, [self._dirs, out.beam_range, out.water_beam_velocity, water_valid,
                                        out.water_velocity, out.water_valid, wp.empty(b, dtype=wp.float32,
                                                                                      device=dev)], dev)

    def render_adaptive(self, scene: Any, trajectory: Any, frame_index: int = 0) -> DVLResult:
        """Ping along a Trajectory at the adaptive rate: ping ``n + 1`` comes ``1 / f(h_n)`` s after ping ``n``
        (:func:`adaptive_rate_hz` of the altitude at ping n), from the trajectory's start to its end.

        Two batched passes: the noise-free altitude on a grid of spacing ``1 / max_rate`` (linearly interpolated
        between grid points) gives the schedule on the host; then one render at the scheduled times, ping n
        being frame ``frame_index + n``. The result's ``times`` are the ping times.
        """
        if not hasattr(trajectory, "resample"):
            raise ConfigError("DVL.render_adaptive: needs a Trajectory (the ping times depend on the path)")
        c = self.config
        grid = trajectory.resample(c.max_rate)
        probe = DVL(c.replace(noise=False), device=self.device, sensor_id=self.sensor_id)
        altitude = probe.render(scene, grid).altitude.numpy().astype(np.float64)
        times = [trajectory.start_time]
        end = trajectory.end_time
        while True:
            t = times[-1]
            k = min(int((t - grid.start_time) * c.max_rate), len(grid) - 1)
            h = altitude[k]
            if k + 1 < len(grid) and np.isfinite(h) and np.isfinite(altitude[k + 1]):
                u = (t - grid.times[k]) * c.max_rate
                h = (1.0 - u) * h + u * altitude[k + 1]
            nxt = t + 1.0 / float(adaptive_rate_hz(h, c))
            if nxt > end + 1e-9:
                break
            times.append(nxt)
        return self.render(scene, trajectory.interpolate(np.array(times)), frame_index=frame_index)


# --- sensor registry declaration (oceansim_py/sensors/registry.py) -------------------------------------------------
from oceansim_py.sensors import registry as _reg  # noqa: E402 - the declaration block closes the module


def _render_batch(sensor: DVL, batch: _reg.Batch) -> DVLResult:
    """The batch with the sensor's own velocity (its trajectory's, in the sensor frame)."""
    velocity = batch.trajectory.velocity(batch.times, frame="body")
    return sensor.render(batch.scene, batch.poses, velocities=velocity, velocity_frame="sensor",
                         frame_index=batch.frame_index)


_WATER_PRODUCTS = ("water_velocity", "water_valid", "water_beam_velocity")


def _check(config: DVLConfig, products: tuple[str, ...], where: str) -> None:
    """The water-track products need ``water_track: true``."""
    wanted = [p for p in _WATER_PRODUCTS if p in products]
    if wanted and not config.water_track:
        raise ConfigError(f"{where}: products {wanted} need water-track; add water_track: true to its config or "
                          f"drop them")


SENSOR_KIND = _reg.SensorKind(
    name="dvl", description="Doppler velocity log: four Janus beams, velocity, ranges and dropout",
    config_class=DVLConfig, sensor_class=DVL, uses_trajectory=True, render=_render_batch,
    schema=(
        _reg.Product("velocity", _reg.TABLE, "float32", "m/s, sensor frame FLU (NaN on dropout)", (3,),
                     frame="sensor FLU"),
        _reg.Product("valid", _reg.TABLE, "int8", "flag 1/0"),
        _reg.Product("altitude", _reg.TABLE, "float32", "m (NaN without a valid beam)"),
        _reg.Product("beam_range", _reg.TABLE, "float32", "m, slant range per beam (NaN invalid)", (NUM_BEAMS,)),
        _reg.Product("beam_velocity", _reg.TABLE, "float32", "m/s along each beam (NaN invalid)", (NUM_BEAMS,)),
        _reg.Product("beam_valid", _reg.TABLE, "int8", "flag 1/0 per beam", (NUM_BEAMS,)),
        _reg.Product("water_velocity", _reg.TABLE, "float32", "m/s relative to the water layer (water-track), "
                     "sensor frame FLU (NaN with fewer than 3 beams)", (3,), frame="sensor FLU"),
        _reg.Product("water_valid", _reg.TABLE, "int8", "flag 1/0 (water-track)"),
        _reg.Product("water_beam_velocity", _reg.TABLE, "float32", "m/s along each beam relative to the water "
                     "layer (NaN invalid)", (NUM_BEAMS,)),
    ),
    default_products=("velocity", "valid", "altitude", "beam_range", "beam_velocity"), check=_check,
    metadata=lambda c: {"beam_directions_sensor_frame": c.beam_directions().tolist(), "tracking": c.tracking,
                        "velocity_frame": "sensor FLU, m/s; NaN on dropout (fewer than 3 valid beams)"},
)
