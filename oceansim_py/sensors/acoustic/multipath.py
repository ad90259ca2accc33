"""Specular multipath and sea-surface reverberation of the acoustic device models: config fields, the scene's
interfaces and the bounce loop (the math is in kernels/multipath.py; docs/PHYSICS.md §1).

Choices, where the issue left them open:

- **Same-path returns.** The echo of bounce b is the backscatter at the b-th hit sent back along the path it came
  (as HoloOcean's multipath does): range = the total one-way path L, amplitude times the product of the
  reflection coefficients, each met twice.
- **Mixed-path returns** (``multipath_mixed_paths``, on by default; the device models: the chain of the imaging,
  side-scan, profiling, single-beam sonars and the MSIS, and the multibeam's): the backscatter at the
  b-th hit P_b (b >= 1) that goes back to the sensor in a straight line (a visibility ray cast from P_b to the
  sensor, one extra cast per bounce), and its reciprocal (out straight to P_b, back along the chain): the cross
  terms of the image method, e.g. the echosounder's classic second bottom echo at 2 x altitude + depth and the
  mixed ghost halfway between an object and its mirror image. Range (L_b + D) / 2, amplitude through the chain's
  reflection coefficients met once (docs/PHYSICS.md §1 "Mixed paths"). The reciprocal arrival lands on the ray's
  own channel, the out-via-chain / back-direct one on the channel whose cell holds P_b's direction (dropped, with
  its reciprocal, when P_b is outside the fan: the transmit beam does not light it). The peer models render
  same-path returns only.
- **Reflection coefficients.** Materials with a density and sound speed (the built-in table): the angle-dependent
  fluid-fluid Rayleigh coefficient against sea water (1026 kg/m^3, 1500 m/s; shear waves ignored, |R| = 1 beyond
  the critical angle, its phase ignored). Materials given only a reflectivity mu: R = +sqrt(mu) at every angle.
  ``air``: -1. The sea surface (the wave patch's node, material ``sea_surface``, or the analytic plane):
  -exp(-2 (k h cos t)^2) with h = Hs / 4 of the scene's sea state (0 for the flat plane).
- **The flat surface.** A scene without wave geometry has its sea surface at z = ``Scene.surface_z`` (0 by default):
  with bounces > 0 or surface reverberation on, rays also meet that analytic plane (no triangles, no BVH cost).
  With a wave patch, the plane stands in for the surface beyond the patch's horizontal extent (with the sea
  state's roughness and wind, still).
  Without reverberation the plane gives no echo of its own; it only mirrors (and is no first return: the
  side-scan's altitude and the single-beam's first_return_range skip it). It carries label -1.
- **Surface reverberation** (``surface_reverberation``, off by default): a sea-surface hit (wave patch or plane)
  backscatters with Chapman & Harris (1962) S_s(psi, wind) per unit area instead of the Lambert law of its
  material. The wind speed is the scene's sea state's U10 (for a Bretschneider sea, the Pierson-Moskowitz wind of
  its Hs: U19.5 = sqrt(Hs g / 0.21), U10 = U19.5 / 1.026), unless ``surface_wind_speed`` is given; the flat plane
  needs ``surface_wind_speed``.
- ``multipath_bounces = 0`` and ``surface_reverberation = false`` render exactly as before (the same kernels, the
  same bytes).
- **Peer models.** The fan sonars' peer (side-scan, profiling, single-beam) renders bounces in its own law
  (``PEER_BOUNCES``); the imaging sonar's peer has HoloOcean's one-bounce ``multipath`` instead; the multibeam's DAVE
  peer has neither. No peer has surface reverberation. What a peer cannot render is refused by name.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import require
from oceansim_py.kernels import multipath as km
from oceansim_py.runtime import launch_1d
from oceansim_py.scene.materials import WATER_DENSITY, WATER_SOUND_SPEED
from oceansim_py.scene.sea_surface import GRAVITY, U195_OVER_U10
from oceansim_py.sensors.rays import RayBuffers

#: Most specular bounces a ray may take.
MAX_BOUNCES = 4

#: Models whose renders support multipath (config ``model`` values); the peers' own kernels do not.
MULTIPATH_MODELS = ("device",)

KNOTS_PER_MPS = 1.9438444924406046


@dataclasses.dataclass(frozen=True)
class MultipathSettings:
    """bounces: specular bounces per ray (0..MAX_BOUNCES). surface_reverberation: Chapman-Harris backscatter of
    sea-surface hits. surface_wind_speed: U10 (m/s) for it, ``None``: the scene's sea state's."""

    bounces: int = 0
    surface_reverberation: bool = False
    surface_wind_speed: float | None = None
    mixed_paths: bool = True

    @property
    def active(self) -> bool:
        """Whether renders go through the bounce loop (else the unchanged single-cast path)."""
        return self.bounces > 0 or self.surface_reverberation

    @property
    def blocks(self) -> int:
        """Same-path echo blocks per ray: the direct echo and one per bounce."""
        return 1 + self.bounces

    @property
    def mixed(self) -> int:
        """Mixed-path blocks per ray (one per bounce when mixed paths are on, else 0)."""
        return self.bounces if self.mixed_paths else 0

    @property
    def chain_blocks(self) -> int:
        """Echo blocks per ray of the device chain: the same-path blocks, then the mixed-path ones."""
        return self.blocks + self.mixed


@dataclasses.dataclass(frozen=True)
class MultipathFields:
    """Multipath config fields of every acoustic sensor (a dataclass mixin; docs/PHYSICS.md §1).

    Attributes:
        multipath_bounces: specular bounces per ray, 0..4 (0: no multipath, the output of earlier versions).
            With bounces > 0 a scene without wave geometry mirrors in the flat surface z = surface_z.
        surface_reverberation: sea-surface hits backscatter by Chapman-Harris (wind speed and grazing angle)
            instead of their material's Lambert law; with no wave geometry the flat surface is seen too.
        surface_wind_speed: U10 (m/s, > 0) for Chapman-Harris; ``None``: the scene's sea state's (a scene without
            one then needs this field).
        multipath_mixed_paths: with bounces > 0, also the mixed-path returns (out along the bounce chain, back in a
            straight line, and the reverse); false: the same-path returns only. Rendered by the device models; the
            peer models render same-path returns only.
    """

    multipath_bounces: int = 0
    surface_reverberation: bool = False
    surface_wind_speed: float | None = None
    multipath_mixed_paths: bool = True

    #: What a peer model offers instead of ``multipath_bounces`` (named in the error), if anything.
    PEER_MULTIPATH = ""
    #: Whether the sensor's peer model renders ``multipath_bounces`` too (the fan sonars' peer does).
    PEER_BOUNCES = False

    def validate_multipath(self, owner: str, model: str) -> None:
        """Check the multipath fields (ConfigError naming the field); ``model``: the config's model, whose render
        must support multipath (:data:`MULTIPATH_MODELS`) when it is asked for."""
        b = self.multipath_bounces
        require(isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= MAX_BOUNCES, owner,
                "multipath_bounces", f"must be an integer in [0, {MAX_BOUNCES}] (0: no multipath), got {b!r}")
        require(isinstance(self.surface_reverberation, bool), owner, "surface_reverberation",
                f"must be true or false, got {self.surface_reverberation!r}")
        w = self.surface_wind_speed
        require(w is None or (isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
                              and 0.0 < w <= 60.0), owner, "surface_wind_speed",
                f"must be null (the scene's sea state) or a wind speed U10 in (0, 60] m/s, got {w!r}")
        require(isinstance(self.multipath_mixed_paths, bool), owner, "multipath_mixed_paths",
                f"must be true or false, got {self.multipath_mixed_paths!r}")
        if model not in MULTIPATH_MODELS:
            refused = [("surface_reverberation", self.surface_reverberation)]
            if not self.PEER_BOUNCES:
                refused.insert(0, ("multipath_bounces", b != 0))
            for name, on in refused:
                require(not on, owner, name, f"is only rendered by model 'device' (the peer model {model!r} keeps "
                        f"its own kernels); set model: device or leave {name} at its default{self.PEER_MULTIPATH}")

    def multipath_bytes_per_ray(self) -> int:
        """Device bytes per ray the bounce loop adds to a device-chain render (the bounce state, the primary hit
        distance, 24 B of echo per block, the mixed paths' visibility rays and cross-channel echoes); 0 without
        multipath or for a peer model."""
        mp = self.multipath_settings()
        model = getattr(self, "model", "device")
        if not mp.active or (model not in MULTIPATH_MODELS and not self.PEER_BOUNCES):
            return 0
        if model not in MULTIPATH_MODELS:  # the fan peers: same-path blocks only
            return BounceState.BYTES_PER_RAY + 4 + 24 * mp.blocks
        return chain_multipath_bytes_per_ray(mp)

    def multipath_settings(self) -> MultipathSettings:
        return MultipathSettings(int(self.multipath_bounces), bool(self.surface_reverberation),
                                 None if self.surface_wind_speed is None else float(self.surface_wind_speed),
                                 bool(self.multipath_mixed_paths))


def chain_multipath_bytes_per_ray(mp: MultipathSettings) -> int:
    """Device bytes per ray of the device chain's bounce loop: the bounce state, the primary hit distance, 24 B of
    echo per block and, with mixed paths, the visibility rays (:class:`MixedPathBuffers`)."""
    extra = MixedPathBuffers.BYTES_PER_RAY_AND_BOUNCE * mp.bounces + MixedPathBuffers.BYTES_PER_RAY if mp.mixed else 0
    return BounceState.BYTES_PER_RAY + 4 + 24 * mp.chain_blocks + extra


def chapman_harris_db(grazing_deg: Any, wind_speed_mps: float, frequency_hz: float) -> np.ndarray:
    """Host twin of ``kernels.multipath.chapman_harris_db``: S_s (dB) at grazing angles ``grazing_deg``, wind U10
    (m/s, converted to knots), frequency (Hz); capped at 0 dB."""
    v = wind_speed_mps * KNOTS_PER_MPS
    beta = 158.0 * (v * frequency_hz ** (1.0 / 3.0)) ** -0.58
    psi = np.maximum(np.asarray(grazing_deg, dtype=np.float64), 1e-6)
    return np.minimum(3.3 * beta * np.log10(psi / 30.0) - 42.4 * np.log10(beta) + 2.6, 0.0)


def fluid_reflection(density: float, sound_speed: float, cos_incidence: Any) -> np.ndarray:
    """Host twin of the fluid interface: R(t1) of a fluid half-space (density kg/m^3, sound speed m/s) under sea
    water, 1 beyond the critical angle."""
    z = density * sound_speed / (WATER_DENSITY * WATER_SOUND_SPEED)
    n = sound_speed / WATER_SOUND_SPEED
    c1 = np.asarray(cos_incidence, dtype=np.float64)
    s2 = n * n * (1.0 - c1 * c1)
    c2 = np.sqrt(np.maximum(1.0 - s2, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s2 >= 1.0, 1.0, (z * c1 - c2) / (z * c1 + c2))


def surface_roughness_loss(wavenumber: float, rms_height: float, cos_incidence: Any) -> np.ndarray:
    """exp(-2 (k h cos t)^2): the coherent reflection loss of a rough surface (Kirchhoff / Eckart), h the rms
    height (m), t the incidence angle from the normal."""
    g = wavenumber * rms_height * np.asarray(cos_incidence, dtype=np.float64)
    return np.exp(-2.0 * g * g)


def sea_state_wind(scene: Any) -> float | None:
    """U10 (m/s) of the scene's sea state (Pierson-Moskowitz wind of Hs for a Bretschneider sea); None without."""
    sea = getattr(scene, "sea_surface", None)
    if sea is None:
        return None
    cfg = sea.config
    if cfg.spectrum == "bretschneider":
        return math.sqrt(cfg.significant_wave_height * GRAVITY / 0.21) / U195_OVER_U10
    return float(cfg.wind_speed)


def interface_of(node: Any, rms_height: float) -> tuple[float, float, float, float]:
    """The ``object_interface`` vec4 of a scene node (kernels/multipath.py)."""
    m = node.material
    if getattr(node, "sea_surface", None) is not None or m.name == "sea_surface":
        return (float(km.INTERFACE_SEA_SURFACE), 0.0, 0.0, float(rms_height))
    if m.name == "air":
        return (float(km.INTERFACE_PRESSURE_RELEASE), 0.0, 0.0, 0.0)
    if m.density is not None and m.sound_speed is not None:
        return (float(km.INTERFACE_FLUID), m.density * m.sound_speed / (WATER_DENSITY * WATER_SOUND_SPEED),
                m.sound_speed / WATER_SOUND_SPEED, 0.0)
    return (float(km.INTERFACE_FIXED), 0.0, 0.0, math.sqrt(m.reflectivity))


@dataclasses.dataclass
class SceneInterfaces:
    """Per-object arrays of one scene geometry, with one extra object for the analytic plane (id ``plane_obj``):
    mu (reflectivity, 0 for the plane), label (-1 for the plane), interface vec4; the plane's height
    (``scene.surface_z``), the wave patch's horizontal extent (world x, y min and max; an empty box without one:
    the plane stands in for the surface outside it) and the rms wave height h (m)."""

    geometry: Any
    mu: wp.array
    label: wp.array
    interface: wp.array
    plane_obj: int
    plane_z: float
    mesh_min: tuple[float, float]
    mesh_max: tuple[float, float]
    rms_height: float


def scene_interfaces(scene: Any) -> SceneInterfaces:
    """The :class:`SceneInterfaces` of ``scene`` now."""
    g = scene.geometry
    sea = getattr(scene, "sea_surface", None)
    h = 0.0 if sea is None else sea.components.significant_wave_height / 4.0
    n = len(scene.nodes)
    iface = np.zeros((n + 1, 4), dtype=np.float32)
    for node in scene.nodes:
        iface[node.id] = interface_of(node, h)
    iface[n] = (float(km.INTERFACE_SEA_SURFACE), 0.0, 0.0, h)
    mesh_min, mesh_max = (1.0, 1.0), (0.0, 0.0)  # an empty box: no wave patch, the plane everywhere
    if sea is not None:
        rest = sea.rest
        mesh_min, mesh_max = tuple(map(float, rest.min(axis=0))), tuple(map(float, rest.max(axis=0)))
    dev = scene.device
    mu = np.concatenate([g.object_reflectivity.numpy(), np.zeros(1, np.float32)])
    label = np.concatenate([g.object_label.numpy(), np.full(1, -1, np.int32)])
    return SceneInterfaces(g, wp.array(mu, dtype=wp.float32, device=dev), wp.array(label, dtype=wp.int32, device=dev),
                           wp.array(iface, dtype=wp.vec4, device=dev), n, float(scene.surface_z), mesh_min,
                           mesh_max, h)


class BounceState:
    """Per-ray scratch of the bounce loop (kernels/multipath.py): path, amp, edge_a, edge_b, weight, remaining."""

    BYTES_PER_RAY = 4 + 4 + 12 + 12 + 4 + 4

    def __init__(self, n_rays: int, device: Any) -> None:
        self.path = wp.empty(n_rays, dtype=wp.float32, device=device)
        self.amp = wp.empty(n_rays, dtype=wp.float32, device=device)
        self.edge_a = wp.empty(n_rays, dtype=wp.vec3, device=device)
        self.edge_b = wp.empty(n_rays, dtype=wp.vec3, device=device)
        self.weight = wp.empty(n_rays, dtype=wp.float32, device=device)
        self.remaining = wp.empty(n_rays, dtype=wp.float32, device=device)

    def init_outputs(self) -> list[wp.array]:
        """The arrays an init kernel writes, in its order (path, amp, edge_a, edge_b, weight)."""
        return [self.path, self.amp, self.edge_a, self.edge_b, self.weight]


class MixedPathBuffers:
    """Per-ray scratch of the mixed-path returns of a device chain with ``n_rays`` rays per render and ``bounces``
    bounces: the visibility rays (hit point to sensor: origins, directions, remaining length, the backend's hits)
    and the cross-channel echoes (kernels/multipath.py ``chain_mixed_echo_*_kernel``: intensity, (r, extent,
    phase), range bin, label, target channel; pose-major, then bounce, then ray)."""

    BYTES_PER_RAY = RayBuffers.BYTES_PER_RAY + 4
    BYTES_PER_RAY_AND_BOUNCE = 4 + 12 + 4 + 4 + 4

    def __init__(self, n_rays: int, bounces: int, device: Any) -> None:
        self.rays = RayBuffers(n_rays, device, 0.0)
        self.remaining = wp.empty(n_rays, dtype=wp.float32, device=device)
        n = n_rays * bounces
        self.cross_intensity = wp.empty(n, dtype=wp.float32, device=device)
        self.cross_range = wp.empty(n, dtype=wp.vec3, device=device)
        self.cross_bin = wp.empty(n, dtype=wp.int32, device=device)
        self.cross_label = wp.empty(n, dtype=wp.int32, device=device)
        self.cross_channel = wp.empty(n, dtype=wp.int32, device=device)

    def cross_outputs(self) -> list[wp.array]:
        """The cross-channel arrays in the kernels' order (intensity, range, bin, label, channel)."""
        return [self.cross_intensity, self.cross_range, self.cross_bin, self.cross_label, self.cross_channel]


class BounceTracer:
    """The bounce loop of one sensor: carrier ``frequency`` (Hz) and ``sound_speed`` (m/s) for the roughness
    loss and Chapman-Harris; ``raycast_backend``: the sensor config's backend override of every bounce and
    visibility cast (``None``: the scene's). The scene's interfaces are cached per scene geometry and surface
    height (``Scene.surface_z`` may change between renders)."""

    def __init__(self, settings: MultipathSettings, frequency: float, sound_speed: float, device: Any,
                 raycast_backend: str | None) -> None:
        self.settings = settings
        self.raycast_backend = raycast_backend
        self.frequency = float(frequency)
        self.wavenumber = 2.0 * math.pi * float(frequency) / float(sound_speed)
        self.device = device
        self._interfaces: SceneInterfaces | None = None

    def interfaces(self, scene: Any) -> SceneInterfaces:
        cached = self._interfaces
        if cached is None or cached.geometry is not scene.geometry or cached.plane_z != float(scene.surface_z):
            cached = self._interfaces = scene_interfaces(scene)
        return cached

    def surface_law(self, scene: Any, interfaces: SceneInterfaces) -> km.SurfaceLaw:
        """The kernels' :class:`~oceansim_py.kernels.multipath.SurfaceLaw` for ``scene``; ConfigError when surface
        reverberation has no wind speed."""
        s = self.settings
        law = km.SurfaceLaw()
        law.reverberation = int(s.surface_reverberation)
        law.frequency = self.frequency
        law.plane_obj = interfaces.plane_obj
        wind = s.surface_wind_speed if s.surface_wind_speed is not None else sea_state_wind(scene)
        if s.surface_reverberation and wind is None:
            raise ConfigError("surface_wind_speed: surface_reverberation needs a wind speed: the scene has no sea "
                              "state (load_scene(..., sea_state=...)), so set surface_wind_speed (U10, m/s)")
        law.wind_knots = float(wind or 0.0) * KNOTS_PER_MPS
        return law

    def visibility(self, scene: Any, rays: RayBuffers, vis: RayBuffers, remaining: wp.array, poses: wp.array,
                   rays_per_pose: int, interfaces: SceneInterfaces, law: km.SurfaceLaw) -> None:
        """After a bounce cast into ``rays``: one visibility ray per echoing hit, from the hit point (moved off its
        face) to the sensor of its pose (length in ``remaining``), cast through the scene's backend into
        ``vis.hits`` (a miss: the sensor sees the hit point). The analytic surface plane is not tested: both ends
        lie in the water."""
        n = int(rays.origins.shape[0])
        launch_1d(km.visibility_ray_kernel, n, [rays.origins, rays.directions, *rays.hit_args(), interfaces.interface,
                                                law, poses, rays_per_pose, vis.origins, vis.directions, remaining],
                  self.device)
        vis.cast(scene, self.raycast_backend, remaining)

    def trace(self, scene: Any, rays: RayBuffers, state: BounceState, max_range: float,
              init: Callable[[], None], echo: Callable[[int, SceneInterfaces, km.SurfaceLaw], None],
              mixed: bool = False) -> None:
        """After the primary cast into ``rays``: ``init()`` (the sensor's init kernel into ``state``), then for
        b = 0..bounces ``echo(b, interfaces, law)`` (the sensor's echo kernel for block b), the rays continued
        specularly and cast again through the scene's backend between blocks. With no wave geometry every cast
        is clipped by the analytic plane z = surface_z first (with a wave patch, outside its horizontal extent).

        Same-path echoes stop at the one-way path ``max_range`` (m). With ``mixed`` (the sensor renders mixed
        paths) the chain runs on to a path of 2 ``max_range``: a mixed arrival lies at (L_b + D) / 2 >= L_b / 2, so
        a bounce hit P_b past ``max_range`` can still be heard within it (the sounder's second bottom echo at
        2 A + s needs the chain's L_2 = A + 2 (A + s))."""
        dev = self.device
        n = int(rays.origins.shape[0])
        iface = self.interfaces(scene)
        law = self.surface_law(scene, iface)
        law.max_path = float(max_range)
        chain_range = 2.0 * float(max_range) if mixed else float(max_range)
        hits = rays.hit_args()

        def clip(max_ranges: wp.array) -> None:
            launch_1d(km.surface_plane_kernel, n, [rays.origins, rays.directions, max_ranges, iface.plane_z,
                                                   iface.plane_obj, wp.vec2(*iface.mesh_min), wp.vec2(*iface.mesh_max),
                                                   *hits], dev)

        clip(rays.max_range)
        init()
        echo(0, iface, law)
        for b in range(1, self.settings.bounces + 1):
            launch_1d(km.bounce_step_kernel, n, [rays.origins, rays.directions, *hits, iface.interface,
                                                 self.wavenumber, chain_range, state.path, state.amp,
                                                 state.edge_a, state.edge_b, state.remaining], dev)
            rays.cast(scene, self.raycast_backend, state.remaining)
            clip(state.remaining)
            echo(b, iface, law)
