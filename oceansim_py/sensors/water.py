"""Optical water types for the underwater camera: wideband RGB coefficients of the image formation model.

The camera applies (docs/PHYSICS.md §4, Akkaynak & Treibitz 2018, "A Revised Underwater Image Formation Model",
CVPR)::

    I_c = J_c exp(-beta^D_c z) + B^inf_c (1 - exp(-beta^B_c z)),   c in {R, G, B}

and attenuates sunlight with depth by ``exp(-K_d,c depth)``. A :class:`WaterType` holds, per RGB channel:

- ``attenuation``: beta^D (1/m), the wideband beam attenuation of the direct signal;
- ``backscatter``: beta^B (1/m), the wideband coefficient of the backscatter curve;
- ``veiling_light``: B^inf (linear, same units as the in-air radiance J: a white Lambertian surface under unit
  irradiance has J = 1), the colour of water at infinite distance;
- ``diffuse_attenuation``: K_d (1/m), the downwelling diffuse attenuation that dims the sun with depth.

Presets ``jerlov_<type>`` come from Solonenko & Mobley (2015), "Inherent optical properties of Jerlov water
types", Applied Optics 54(17):5392-5401, doi:10.1364/AO.54.005392, Tables 4-8 (absorption a(lambda),
scattering b(lambda) and the diffuse attenuation K_d(lambda) of the paper's IOP model, 1/m), the rows held in
:data:`SOLONENKO_MOBLEY_2015`. They are reduced to RGB with a flat spectrum over three bands (blue 450-475 nm,
green 525-575 nm, red 600-650 nm):

- beam attenuation c = a + b; beta^D_c = mean of c over the band (the slope of -ln(direct signal) at z -> 0);
- B^inf(lambda) = b_b / (2 (a + b_b)): the path radiance at infinite distance is L_inf = E beta(theta) / c for light
  of irradiance E singly scattered through the angle theta into the line of sight (Akkaynak & Treibitz 2018:
  B^inf = b E / c with E the ambient radiance). A camera under a light field from above looks sideways or down,
  so theta lies in the backward hemisphere, where the mean of the volume scattering function is b_b / (2 pi).
  In our units (a white Lambertian surface under irradiance E has J = 1, i.e. radiance E / pi) that gives
  pi (b_b / (2 pi)) / c per unit illumination. Single scattering with c underestimates the veil of water whose
  scattering dominates (b / c ~ 0.9 in Jerlov III and the coastal types): light scattered through small angles
  still travels on, so the quasi-single-scattering approximation (Gordon 1973, Applied Optics
  12(12):2803) replaces c by a + b_b: B^inf = b_b / (2 (a + b_b)), a function of u = b_b / (a + b_b) like the
  measured reflectance of deep water (Lee et al. 1999, Applied Optics 38(18):3831, r_rs = (0.084 + 0.17 u) u
  per sr below the surface, for a camera looking straight down; B^inf is 1.0-1.9 times pi r_rs, as the
  horizontal radiance of the sea exceeds its nadir radiance). With c the veil of Jerlov 3C was ~0.009 in every
  channel (neutral grey, 11 times darker than u gives in green); now it is green (0.027, 0.097, 0.091) and
  Jerlov 7C yellow-green, the colour of coastal water. B^inf_c = band mean. The backscattering
  coefficient splits b into pure seawater, b_w(lambda) = 0.00288 (lambda / 500 nm)^-4.32 1/m (Morel 1974)
  with backscatter ratio 1/2, and particles, b_p = max(b - b_w, 0), with the Petzold average-particle ratio
  b_bp / b_p = 0.0183 (Mobley 1994, Light and Water, Table 3.10): b_b = b_w / 2 + 0.0183 b_p. An isotropic
  phase function (ratio 1/2 for everything) would make the veil of particle-rich water 4-5 times brighter
  still (Jerlov 3C green: b / (4 a + 2 b) = 0.43);
- beta^B_c = sum(B^inf(lambda) c(lambda)) / sum(B^inf(lambda)) over the band (the initial slope of the
  wideband backscatter curve, which weights c by the veiling light's own spectrum);
- K_d,c = band mean of K_d.

These are coefficients, not transmittances: OceanSim's Jerlov presets store per-metre transmittances
(e.g. 0.9) as if they were coefficients, which is physically wrong (docs/PHYSICS.md §4). Jerlov 5C is absent because
its published table (Table 7) repeats other rows from 600 nm up, so no red channel can be formed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

from oceansim_py.errors import ConfigError
from oceansim_py.io.config import ConfigBase, require, require_non_negative

RGB = tuple[float, float, float]

#: Wavelengths (nm) of the table rows used, and the RGB band each belongs to (index into R, G, B).
TABLE_WAVELENGTHS_NM = (450, 475, 525, 550, 575, 600, 625, 650)
BAND_OF_ROW = (2, 2, 1, 1, 1, 0, 0, 0)

#: Solonenko & Mobley (2015), Applied Optics 54(17), Tables 4-8: a, b and K_d (1/m) at TABLE_WAVELENGTHS_NM.
SOLONENKO_MOBLEY_2015: dict[tuple[str, str], tuple[float, ...]] = {
    ("I", "a"): (0.018, 0.019, 0.046, 0.062, 0.082, 0.228, 0.295, 0.334),
    ("I", "b"): (0.00381, 0.00306, 0.00205, 0.0017, 0.00143, 0.00122, 0.00104, 0.000899),
    ("I", "Kd"): (0.022, 0.021, 0.049, 0.065, 0.085, 0.233, 0.302, 0.341),
    ("IA", "a"): (0.0221, 0.0216, 0.0468, 0.0622, 0.0821, 0.228, 0.295, 0.334),
    ("IA", "b"): (0.00631, 0.00536, 0.00402, 0.00354, 0.00315, 0.00283, 0.00256, 0.00234),
    ("IA", "Kd"): (0.0264, 0.0253, 0.0503, 0.0658, 0.0858, 0.234, 0.303, 0.342),
    ("IB", "a"): (0.0235, 0.0225, 0.0469, 0.0623, 0.0822, 0.2278, 0.296, 0.334),
    ("IB", "b"): (0.068, 0.0635, 0.0565, 0.0536, 0.0511, 0.0488, 0.0468, 0.045),
    ("IB", "Kd"): (0.0342, 0.0325, 0.0572, 0.0726, 0.0926, 0.241, 0.31, 0.349),
    ("II", "a"): (0.0241, 0.0228, 0.0469, 0.0622, 0.0821, 0.228, 0.296, 0.334),
    ("II", "b"): (0.504, 0.459, 0.387, 0.358, 0.332, 0.309, 0.288, 0.27),
    ("II", "Kd"): (0.062, 0.0579, 0.0845, 0.0999, 0.12, 0.27, 0.337, 0.375),
    ("III", "a"): (0.0388, 0.0335, 0.0507, 0.0646, 0.0838, 0.229, 0.297, 0.336),
    ("III", "b"): (1.38, 1.26, 1.06, 0.98, 0.908, 0.845, 0.788, 0.737),
    ("III", "Kd"): (0.124, 0.11, 0.129, 0.144, 0.164, 0.324, 0.39, 0.426),
    ("1C", "a"): (0.105, 0.077, 0.068, 0.076, 0.092, 0.236, 0.304, 0.344),
    ("1C", "b"): (0.514, 0.469, 0.395, 0.365, 0.338, 0.314, 0.293, 0.274),
    ("1C", "Kd"): (0.179, 0.139, 0.121, 0.129, 0.146, 0.317, 0.395, 0.439),
    ("3C", "a"): (0.154, 0.105, 0.078, 0.082, 0.095, 0.239, 0.307, 0.346),
    ("3C", "b"): (1.5, 1.36, 1.15, 1.06, 0.985, 0.916, 0.855, 0.8),
    ("3C", "Kd"): (0.319, 0.24, 0.187, 0.187, 0.201, 0.38, 0.456, 0.498),
    ("7C", "a"): (0.542, 0.388, 0.233, 0.195, 0.175, 0.301, 0.367, 0.403),
    ("7C", "b"): (3.3, 3.01, 2.54, 2.35, 2.18, 2.03, 1.89, 1.77),
    ("7C", "Kd"): (0.924, 0.71, 0.47, 0.409, 0.371, 0.527, 0.6, 0.635),
    ("9C", "a"): (0.943, 0.709, 0.43, 0.348, 0.291, 0.39, 0.436, 0.456),
    ("9C", "b"): (4.39, 4.01, 3.38, 3.12, 2.89, 2.69, 2.51, 2.35),
    ("9C", "Kd"): (1.56, 1.24, 0.826, 0.696, 0.603, 0.72, 0.763, 0.775),
}

JERLOV_TYPES = ("I", "IA", "IB", "II", "III", "1C", "3C", "7C", "9C")


#: Backscatter ratio b_bp / b_p of the Petzold average-particle phase function (Mobley 1994, Table 3.10).
PARTICLE_BACKSCATTER_RATIO = 0.0183


def pure_water_scattering(wavelength_nm: float) -> float:
    """Scattering coefficient b_w (1/m) of pure seawater (Morel 1974): 0.00288 (lambda / 500 nm)^-4.32."""
    return 0.00288 * (wavelength_nm / 500.0) ** -4.32


def backscattering(b: float, wavelength_nm: float) -> float:
    """Backscattering coefficient b_b (1/m) of water of total scattering ``b`` (1/m): half of the pure-water part
    plus :data:`PARTICLE_BACKSCATTER_RATIO` of the particle part (see the module docstring)."""
    b_w = min(b, pure_water_scattering(wavelength_nm))
    return 0.5 * b_w + PARTICLE_BACKSCATTER_RATIO * (b - b_w)


def _band_mean(values: list[float], weights: list[float] | None = None) -> RGB:
    """Per RGB band, the (weighted) mean of per-row values."""
    out = []
    for band in range(3):
        rows = [k for k, b in enumerate(BAND_OF_ROW) if b == band]
        w = [1.0 if weights is None else weights[k] for k in rows]
        out.append(sum(values[k] * wk for k, wk in zip(rows, w)) / sum(w))
    return (round(out[0], 6), round(out[1], 6), round(out[2], 6))


def jerlov_rgb_coefficients(jerlov_type: str) -> dict[str, Any]:
    """The WaterType field values of one Jerlov type, reduced from the table as the module docstring says."""
    a = SOLONENKO_MOBLEY_2015[(jerlov_type, "a")]
    b = SOLONENKO_MOBLEY_2015[(jerlov_type, "b")]
    kd = SOLONENKO_MOBLEY_2015[(jerlov_type, "Kd")]
    c = [ai + bi for ai, bi in zip(a, b)]
    b_b = [backscattering(bi, wl) for bi, wl in zip(b, TABLE_WAVELENGTHS_NM)]
    veil = [0.5 * bbi / (ai + bbi) for ai, bbi in zip(a, b_b)]
    return {
        "name": f"jerlov_{jerlov_type}",
        "attenuation": _band_mean(c),
        "backscatter": _band_mean(c, weights=veil),
        "veiling_light": _band_mean(veil),
        "diffuse_attenuation": _band_mean(list(kd)),
    }


def _require_rgb(value: Any, owner: str, field: str, unit: str) -> None:
    require(isinstance(value, tuple) and len(value) == 3, owner, field, f"must be three values (R, G, B), got "
            f"{value!r}")
    for k, v in zip("RGB", value):
        require_non_negative(v, owner, f"{field}[{k}]", unit)


@dataclasses.dataclass(frozen=True)
class WaterType(ConfigBase):
    """Wideband RGB optical properties of a water body (see the module docstring for each field's meaning).

    Build one from a preset (``WaterType.preset("jerlov_II")``), from custom coefficients
    (``WaterType(attenuation=(0.4, 0.1, 0.08), ...)``), or from YAML.
    """

    name: str = "custom"
    attenuation: RGB = (0.4, 0.12, 0.1)
    backscatter: RGB = (0.4, 0.12, 0.1)
    veiling_light: RGB = (0.05, 0.25, 0.3)
    diffuse_attenuation: RGB = (0.35, 0.1, 0.06)

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        f"jerlov_{t}": jerlov_rgb_coefficients(t) for t in JERLOV_TYPES
    }

    def validate(self) -> None:
        owner = "WaterType"
        _require_rgb(self.attenuation, owner, "attenuation", "1/m")
        _require_rgb(self.backscatter, owner, "backscatter", "1/m")
        _require_rgb(self.veiling_light, owner, "veiling_light", "(linear)")
        _require_rgb(self.diffuse_attenuation, owner, "diffuse_attenuation", "1/m")

    def visibility(self, contrast: float = 0.05) -> float:
        """Distance (m) over which the direct signal of the least attenuated channel falls to ``contrast`` of
        its value: ``ln(1 / contrast) / min_c beta^D_c`` (3 / beta^D for the default 5 %); ``inf`` in
        non-attenuating water. Beyond it an object is lost in the veiling light whatever the lighting (the
        CLI keeps the camera's default pose within it)."""
        if not 0 < contrast < 1:
            raise ConfigError(f"WaterType.visibility: contrast must be in (0, 1), got {contrast!r}")
        beta = min(self.attenuation)
        return math.inf if beta <= 0 else math.log(1.0 / contrast) / beta
