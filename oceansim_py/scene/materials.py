"""Acoustic and optical materials: the built-in table, user tables from YAML, and the impedance formula.

A :class:`Material` carries an acoustic reflectivity ``mu`` (the fraction of incident intensity returned,
docs/PHYSICS.md §1) and a linear RGB albedo in [0, 1]. The reflectivity is either given directly, or derived from
the material's density and longitudinal sound speed through the normal-incidence intensity reflection
coefficient against sea water, as HoloOcean does:

    Z = rho * c,   R = (Z2 - Z1) / (Z2 + Z1),   mu = R^2,   Z1 = 1026 kg/m^3 * 1500 m/s.

A rough surface's Lambert scattering strength S (dB, 10 log10 mu; e.g. -27 dB sand to -40 dB mud) may be given
instead (``scattering_strength``): mu = 10^(S / 10) (docs/PHYSICS_ACOUSTIC_CHAIN.md §1).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from oceansim_py.errors import ConfigError, SceneError

if TYPE_CHECKING:
    from oceansim_py.scene.textures import Texture

#: Sea water density (kg/m^3) and sound speed (m/s) used for the impedance formula.
WATER_DENSITY = 1026.0
WATER_SOUND_SPEED = 1500.0


def impedance_reflectivity(density: float, sound_speed: float,
                           water_density: float = WATER_DENSITY,
                           water_sound_speed: float = WATER_SOUND_SPEED) -> float:
    """Intensity reflection coefficient mu = R^2 at normal incidence of a fluid-like half-space."""
    z1 = water_density * water_sound_speed
    z2 = density * sound_speed
    r = (z2 - z1) / (z2 + z1)
    return r * r


@dataclasses.dataclass(frozen=True)
class Material:
    """A surface material.

    Attributes:
        name: table key (lower case).
        reflectivity: acoustic intensity reflectivity mu in [0, 1] (dimensionless).
        albedo: linear-RGB diffuse albedo, each channel in [0, 1].
        density: kg/m^3, when the reflectivity came from the impedance formula (else ``None``).
        sound_speed: m/s, likewise.
        texture: a diffuse-colour :class:`~oceansim_py.scene.textures.Texture` that replaces ``albedo`` for the
            camera where the mesh has texture coordinates (``None``: the flat albedo).
    """

    name: str
    reflectivity: float
    albedo: tuple[float, float, float]
    density: float | None = None
    sound_speed: float | None = None
    texture: Texture | None = None

    @staticmethod
    def from_properties(name: str, albedo: tuple[float, float, float], *, reflectivity: float | None = None,
                        density: float | None = None, sound_speed: float | None = None,
                        scattering_strength: float | None = None,
                        source: str = "material table") -> "Material":
        """Build a material from a direct reflectivity, a Lambert scattering strength in dB (mu = 10^(S/10)),
        or density and sound speed; validate ranges."""
        where = f"{source}: material '{name}'"
        for field, value in (("reflectivity", reflectivity), ("density", density), ("sound_speed", sound_speed),
                             ("scattering_strength", scattering_strength)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
                raise ConfigError(f"{where}: {field} must be a number, got {value!r}")
        if scattering_strength is not None:
            if reflectivity is not None:
                raise ConfigError(f"{where}: give 'reflectivity' or 'scattering_strength' (dB), not both")
            if not (math.isfinite(scattering_strength) and scattering_strength <= 0.0):
                raise ConfigError(f"{where}: scattering_strength must be a finite number of dB <= 0 (Lambert "
                                  f"parameter 10 log10 mu), got {scattering_strength!r}")
            reflectivity = 10.0 ** (scattering_strength / 10.0)
        if reflectivity is None:
            if density is None or sound_speed is None:
                raise ConfigError(f"{where}: give 'reflectivity', or both 'density' (kg/m^3) and "
                                  f"'sound_speed' (m/s)")
            if not (density > 0 and sound_speed > 0 and math.isfinite(density) and math.isfinite(sound_speed)):
                raise ConfigError(f"{where}: density and sound_speed must be finite and > 0")
            reflectivity = impedance_reflectivity(density, sound_speed)
        if not (math.isfinite(reflectivity) and 0.0 <= reflectivity <= 1.0):
            raise ConfigError(f"{where}: reflectivity must lie in [0, 1], got {reflectivity!r}")
        if not all(isinstance(a, numbers.Real) and not isinstance(a, bool) for a in albedo):
            raise ConfigError(f"{where}: albedo must be three numbers in [0, 1], got {albedo!r}")
        alb = tuple(float(a) for a in albedo)
        if len(alb) != 3 or not all(math.isfinite(a) and 0.0 <= a <= 1.0 for a in alb):
            raise ConfigError(f"{where}: albedo must be three values in [0, 1], got {albedo!r}")
        return Material(name.lower(), float(reflectivity), alb, density, sound_speed)  # type: ignore[arg-type]


def _m(name: str, albedo: tuple[float, float, float], **kw: float) -> Material:
    return Material.from_properties(name, albedo, **kw)


# Densities and sound speeds (longitudinal, bulk) and albedos. Sources:
#  [K]  Kinsler, Frey, Coppens & Sanders, Fundamentals of Acoustics, 4th ed., Appendix A10 (solids, liquids).
#  [H]  Hamilton & Bachman (1982), "Sound velocity and related properties of marine sediments", JASA 72(6):
#       sand ~1.94-2.03 g/cm^3, 1700-1840 m/s; silt/clay (mud) ~1.4-1.6 g/cm^3, 1480-1520 m/s.
#  [A]  APL-UW High-Frequency Ocean Environmental Acoustic Models Handbook (1994), Table 2.1 sediment ratios.
#  [HO] HoloOcean documentation, ImagingSonar / OctreeMaterials (reflectivity via impedance).
#  Albedos are typical diffuse reflectances of the material in sRGB-linear (measured spectra averaged per
#  channel; e.g. concrete ~0.35-0.4, wet sand ~0.25-0.35, dark rock ~0.1-0.2, rust/steel ~0.3).
_BUILTIN = [
    _m("steel", (0.30, 0.30, 0.32), density=7850.0, sound_speed=5900.0),     # [K] steel, mild
    _m("aluminium", (0.60, 0.60, 0.62), density=2700.0, sound_speed=6420.0),  # [K] aluminium, rolled
    _m("concrete", (0.38, 0.37, 0.35), density=2400.0, sound_speed=3700.0),  # [K]/[HO] concrete
    _m("rock", (0.16, 0.15, 0.14), density=2650.0, sound_speed=5500.0),      # granite [K]
    _m("sand", (0.45, 0.40, 0.30), density=1990.0, sound_speed=1750.0),      # medium sand [H],[A]
    _m("mud", (0.20, 0.18, 0.14), density=1420.0, sound_speed=1490.0),       # clayey silt [H],[A]
    _m("gravel", (0.30, 0.28, 0.25), density=2100.0, sound_speed=1900.0),    # gravel [A] (ratios 2.49/1.34)
    _m("wood", (0.35, 0.25, 0.15), density=650.0, sound_speed=4000.0),       # oak across grain [K]
    _m("rubber", (0.05, 0.05, 0.05), density=950.0, sound_speed=1550.0),     # soft rubber [K]
    _m("glass", (0.50, 0.55, 0.55), density=2500.0, sound_speed=5600.0),     # Pyrex [K]
    _m("plastic", (0.70, 0.70, 0.70), density=950.0, sound_speed=2400.0),    # HDPE [K]
    _m("fiberglass", (0.60, 0.60, 0.58), density=1900.0, sound_speed=2800.0),  # GRP hull laminate (typ.)
    _m("coral", (0.55, 0.45, 0.40), density=1800.0, sound_speed=3500.0),     # porous carbonate (typ.)
    _m("air", (0.0, 0.0, 0.0), reflectivity=1.0),                            # pressure-release surface, R=-1
    # the sea surface seen from the water: acoustically pressure-release (R = -1, mu = 1); optically water, whose
    # normal-incidence Fresnel reflectance is ((1.333 - 1) / (1.333 + 1))^2 = 0.020
    _m("sea_surface", (0.020, 0.020, 0.020), reflectivity=1.0),
    _m("default", (0.50, 0.50, 0.50), reflectivity=0.5),                     # when nothing else is known
]

BUILTIN_MATERIALS: dict[str, Material] = {m.name: m for m in _BUILTIN}

_MATERIAL_KEYS = {"reflectivity", "density", "sound_speed", "albedo", "scattering_strength"}


class MaterialTable:
    """Name -> :class:`Material`, starting from the built-in table; user YAML entries add or override. An entry
    for a known name may give its albedo alone (the acoustics are kept) or its acoustics alone (the albedo is kept).

    YAML layout::

        materials:
          hull_paint: {albedo: [0.8, 0.1, 0.1], reflectivity: 0.6}
          basalt:     {albedo: [0.1, 0.1, 0.1], density: 2900, sound_speed: 5800}
          mud:        {albedo: [0.3, 0.25, 0.2], scattering_strength: -40}
    """

    def __init__(self, materials: Mapping[str, Material] | None = None) -> None:
        self._materials: dict[str, Material] = dict(BUILTIN_MATERIALS if materials is None else materials)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._materials

    def __getitem__(self, name: str) -> Material:
        return self._materials[name.lower()]

    def get(self, name: str | None) -> Material | None:
        return None if name is None else self._materials.get(name.lower())

    def names(self) -> list[str]:
        return sorted(self._materials)

    def add(self, material: Material) -> None:
        self._materials[material.name] = material

    def copy(self) -> "MaterialTable":
        return MaterialTable(self._materials)

    def update_from_mapping(self, data: Any, source: str) -> None:
        """Add the entries of ``{materials: {name: {...}}}`` (or a bare name -> fields mapping)."""
        if isinstance(data, Mapping) and "materials" in data:
            extra = sorted(set(data) - {"materials"})
            if extra:
                raise ConfigError(f"{source}: unknown top-level key(s) {extra}; only 'materials' is allowed")
            data = data["materials"]
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: expected a mapping 'materials: {{name: {{...}}}}'")
        for name, fields in data.items():
            if not isinstance(fields, Mapping):
                raise ConfigError(f"{source}: material '{name}' must be a mapping of {sorted(_MATERIAL_KEYS)}")
            unknown = sorted(set(fields) - _MATERIAL_KEYS)
            if unknown:
                raise ConfigError(f"{source}: material '{name}': unknown key(s) {unknown}; valid keys are "
                                  f"{sorted(_MATERIAL_KEYS)}")
            base = self.get(str(name))
            albedo = fields.get("albedo", base.albedo if base else BUILTIN_MATERIALS["default"].albedo)
            if not isinstance(albedo, (list, tuple)) or len(albedo) != 3:
                raise ConfigError(f"{source}: material '{name}': albedo must be a list of three numbers")
            alb: Any = tuple(albedo)
            acoustic = {key: fields.get(key) for key in ("reflectivity", "density", "sound_speed",
                                                         "scattering_strength")}
            if base is not None and all(value is None for value in acoustic.values()):
                # an entry that gives only the albedo of a known material keeps that material's acoustics
                material = dataclasses.replace(
                    Material.from_properties(str(name), alb, reflectivity=base.reflectivity, source=source),
                    density=base.density, sound_speed=base.sound_speed)
            else:
                material = Material.from_properties(str(name), alb, source=source, **acoustic)
            self.add(material)

    @classmethod
    def from_yaml(cls, path: str | Path, base: "MaterialTable | None" = None) -> "MaterialTable":
        """The built-in (or ``base``) table plus the entries of a YAML file."""
        from oceansim_py.io.config import load_yaml

        table = (base or cls()).copy()
        table.update_from_mapping(load_yaml(path), str(path))
        return table


DEFAULT_MATERIAL = BUILTIN_MATERIALS["default"]


def default_material(table: MaterialTable) -> Material:
    """The material of geometry that names none: ``table``'s ``default`` entry (a materials YAML may redefine it),
    else the built-in :data:`DEFAULT_MATERIAL`."""
    return table.get("default") or DEFAULT_MATERIAL


def material_named(table: MaterialTable, name: str, where: str, attribute: str | None = None) -> Material:
    """The material ``name`` of ``table`` (case-insensitive). An unknown name is a ``SceneError`` starting with
    ``where`` (the file, prim or depth band that names it) and, given ``attribute``, the attribute that holds the
    name (e.g. ``oceansim:material``), listing the known materials and how to add one."""
    found = table.get(name)
    if found is None:
        holder = f"{attribute} names " if attribute else ""
        raise SceneError(f"{where}: {holder}unknown material {name!r}; known materials are {table.names()} (add it "
                         f"in a materials YAML file)")
    return found
