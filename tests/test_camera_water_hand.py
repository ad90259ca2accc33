"""Underwater camera against published water optics and the image formation model, by hand (audit CR).

Sources: Solonenko & Mobley (2015, Applied Optics 54(17)) a, b per Jerlov type (sensors/water.py); Lee et al.
(1999, Applied Optics 38(18):3831) below-surface remote-sensing reflectance r_rs = (0.084 + 0.17 u) u per sr,
u = b_b / (a + b_b); Akkaynak & Treibitz (2018) I = J exp(-beta^D z) + B_inf (1 - exp(-beta^B z)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oceansim_py.poses import pose_from_euler
from oceansim_py.scene import Material, Node, Scene, TriangleMesh
from oceansim_py.sensors import water
from oceansim_py.sensors.camera import UnderwaterCamera, UnderwaterCameraConfig
from oceansim_py.sensors.water import WaterType

OCEANIC = ("jerlov_I", "jerlov_IA", "jerlov_IB", "jerlov_II", "jerlov_III")
TURBID_COASTAL = ("jerlov_3C", "jerlov_7C", "jerlov_9C")


def test_veiling_light_of_coastal_water_by_hand() -> None:
    # Jerlov 3C green band (525, 550, 575 nm): a = 0.078, 0.082, 0.095; b = 1.15, 1.06, 0.985 1/m.
    # b_w = 0.00288 (lambda / 500)^-4.32 = 0.002333, 0.001907, 0.001575;
    # b_b = b_w / 2 + 0.0183 (b - b_w) = 0.0221688, 0.0203166, 0.0187842;
    # B_inf = b_b / (2 (a + b_b)) = 0.110657, 0.099283, 0.082544 -> mean 0.097495.
    # (Single scattering with c = a + b gave b_b / (2 c) = 0.00887: a grey veil 11 times too dark.)
    assert WaterType.preset("jerlov_3C").veiling_light[1] == pytest.approx(0.097495, abs=2e-6)


def test_veiling_light_is_the_colour_and_brightness_of_real_water() -> None:
    # Oceanic water is blue (B > G > R), turbid coastal water green to yellow-green (G above B and R): the
    # colour of deep water is set by u = b_b / (a + b_b), whose band means (Lee et al. 1999) give pi * r_rs, the
    # veil seen looking straight down in our units; a camera looking sideways sees 1-2 times that.
    for name in OCEANIC:
        r, g, b = WaterType.preset(name).veiling_light
        assert b > g > r, name
    for name in TURBID_COASTAL:
        r, g, b = WaterType.preset(name).veiling_light
        assert g > b and g > r, name
    for t in water.JERLOV_TYPES:
        a = water.SOLONENKO_MOBLEY_2015[(t, "a")]
        bs = water.SOLONENKO_MOBLEY_2015[(t, "b")]
        u = [water.backscattering(b, wl) / (ai + water.backscattering(b, wl))
             for ai, b, wl in zip(a, bs, water.TABLE_WAVELENGTHS_NM)]
        pi_rrs = water._band_mean([math.pi * (0.084 + 0.17 * x) * x for x in u])
        for c, (veil, ref) in enumerate(zip(WaterType.preset(f"jerlov_{t}").veiling_light, pi_rrs)):
            assert 1.0 < veil / ref < 2.0, (t, "RGB"[c], veil, ref)


def test_attenuation_order_of_oceanic_and_coastal_water() -> None:
    # Oceanic: red goes first (pure-water absorption, a(600-650) ~ 0.23-0.33 1/m), blue last, in the beam (beta^D)
    # and in the sunlight (K_d). Coastal: blue goes first (yellow substance and particles, beta^D 3C = 1.55 blue vs
    # 1.15 red and green) and sunlight is green at depth (K_d least in green: the coastal window, Jerlov 1976).
    for name in ("jerlov_I", "jerlov_IA", "jerlov_IB"):
        w = WaterType.preset(name)
        assert w.attenuation[0] > w.attenuation[1] > w.attenuation[2], name
        assert w.diffuse_attenuation[0] > w.diffuse_attenuation[1] > w.diffuse_attenuation[2], name
    for name in TURBID_COASTAL:
        w = WaterType.preset(name)
        assert w.attenuation[2] == max(w.attenuation), name
        assert w.diffuse_attenuation[1] == min(w.diffuse_attenuation), name


def test_table_rows_agree_with_kirks_diffuse_attenuation() -> None:
    # Kirk (1991, Limnol. Oceanogr. 36(3):455): K_d = (1 / mu0) sqrt(a^2 + (0.425 mu0 - 0.19) a b); for the sun
    # overhead (mu0 = 1) sqrt(a^2 + 0.235 a b). The table's K_d lies 1.02-1.19 times that in every row (the paper's
    # K_d is for a sun off the zenith, mu0 < 1): a transcription error in a, b or K_d would break it. E.g. Jerlov 3C
    # at 550 nm: sqrt(0.082^2 + 0.235 * 0.082 * 1.06) = 0.1647, table 0.187 (ratio 1.135).
    for t in water.JERLOV_TYPES:
        rows = zip(*(water.SOLONENKO_MOBLEY_2015[(t, q)] for q in ("a", "b", "Kd")))
        for wl, (a, b, kd) in zip(water.TABLE_WAVELENGTHS_NM, rows):
            assert 1.0 < kd / math.sqrt(a * a + 0.235 * a * b) < 1.25, (t, wl)


def _plate_scene(distance: float, albedo: float) -> Scene:
    """A 1 m square plate facing the camera ``distance`` m ahead (x), centred at 10 m depth."""
    h, x = 0.5, distance
    v = np.array([[x, -h, -10.0 - h], [x, h, -10.0 - h], [x, h, -10.0 + h], [x, -h, -10.0 + h]], dtype=float)
    mat = Material.from_properties("grey", (albedo,) * 3, reflectivity=0.5)
    return Scene([Node("/W"), Node("/W/plate", mesh=TriangleMesh(v, np.array([[0, 1, 2], [0, 2, 3]])), material=mat,
                               label="plate")], device="cpu")


@pytest.mark.parametrize("water_name", ["jerlov_IB", "jerlov_3C"])
def test_grey_target_contrast_and_backscatter_with_distance(water_name: str) -> None:
    # Camera at 10 m depth looking along +x, ambient light E = 0.5 only: J = 0.18 * 0.5 = 0.09 on an 18 % grey
    # plate; the water beyond (corner pixels, 54 deg off axis, miss the 1 m plate even at 1 m) is B = B_inf * E.
    # Target I_t = J e^(-beta^D z) + B (1 - e^(-beta^B z)); its contrast against the water C = (I_t - B) / B
    # = (J e^(-beta^D z) - B e^(-beta^B z)) / B; a black plate shows the backscatter alone, B (1 - e^(-beta^B z)),
    # which saturates at B: 1 - e^(-1.155 * 3) = 0.969 of it at 3 m in Jerlov 3C red.
    w = WaterType.preset(water_name)
    bd, bb = np.array(w.attenuation), np.array(w.backscatter)
    e = 0.5
    veil = np.array(w.veiling_light) * e
    cfg = UnderwaterCameraConfig(width=9, height=9, horizontal_fov=90.0, sun=False, ambient=(e, e, e),
                                 water=water_name)
    cam = UnderwaterCamera(cfg)
    contrasts = []
    for z in (1.0, 3.0, 5.0, 10.0):
        grey = cam.render(_plate_scene(z, 0.18), pose_from_euler(0, 0, -10)).numpy()["linear"][0]
        black = cam.render(_plate_scene(z, 0.0), pose_from_euler(0, 0, -10)).numpy()["linear"][0]
        np.testing.assert_allclose(grey[0, 0], veil, rtol=1e-5)
        np.testing.assert_allclose(grey[4, 4], 0.09 * np.exp(-bd * z) + veil * (1 - np.exp(-bb * z)), rtol=1e-4)
        np.testing.assert_allclose(black[4, 4], veil * (1 - np.exp(-bb * z)), rtol=1e-4)
        c = (grey[4, 4] - grey[0, 0]) / grey[0, 0]
        np.testing.assert_allclose(c, (0.09 * np.exp(-bd * z) - veil * np.exp(-bb * z)) / veil, rtol=1e-3, atol=1e-6)
        contrasts.append(c)
    # the contrast halves over ~ ln 2 / beta^D (beta^B within 3.2 % of beta^D in IB, 0.7 % in 3C): from 3 to 5 m it
    # falls by e^(-2 beta^D)
    c3, c5 = contrasts[1], contrasts[2]
    np.testing.assert_allclose(c5 / c3, np.exp(-2.0 * bd), rtol=0.05)
    if water_name == "jerlov_3C":
        # turbid coastal: the plate has faded into the green veil by 10 m (contrast < 1e-3), not into black
        assert (np.abs(contrasts[3]) < 1e-3).all()
        assert veil[1] > veil[0] and veil[1] > veil[2]
