"""Multipath of the device models against hand numbers on scenes the other multipath tests do not use (audit MP):
the mixed second bottom echo of a sounder whose max range lies between 2 A + s and the chain's A + 2 (A + s)."""

from __future__ import annotations


import numpy as np
import pytest

from test_multipath import ALPHA, PITCH_DOWN_90, onset, seafloor, window
from oceansim_py.scene import Material
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig


def _sounder(max_range: float, **kw) -> SinglebeamSonarConfig:
    return SinglebeamSonarConfig(model="device", opening_angle=4.0, cone_rings=16, rays_per_ring=16, min_range=1.0,
                                 max_range=max_range, range_bins=int(round((max_range - 1.0) / 0.01)),
                                 absorption=ALPHA, noise_level=None, volume_scattering=None, tvg="none",
                                 multipath_bounces=2, jitter=False, **kw)


def test_mixed_second_bottom_echo_inside_the_range_although_its_chain_is_longer():
    # Sounder straight down at depth s = 2 m, altitude A = 3 m, the flat pressure-release surface, two bounces (the
    # scene of test_multipath_mixed.py's second bottom echo). The mixed second bottom echo lies at r = 2 A + s = 8 m,
    # but its chain floor -> surface -> floor is L_2 = A + 2 (A + s) = 13 m long. With max_range = 10 m the echo is
    # inside the window, so it must be there, at 8 m, at the level it has with max_range = 20 m (r = (L_b + D) / 2
    # >= L_b / 2: the chain must run to 2 x max_range). Before the fix the chain stopped at 10 m and the 8 m echo
    # was missing (0 in the window).
    A, s = 3.0, 2.0
    scene = seafloor(Material.from_properties("mud", (0.4, 0.4, 0.4), reflectivity=0.25), s + A)
    pose = np.array([0, 0, -s, *PITCH_DOWN_90])
    profiles = {}
    for max_range in (10.0, 20.0):
        out = SinglebeamSonar(_sounder(max_range), device="cpu").render(scene, pose).numpy()
        profiles[max_range] = out["clean_intensity"].reshape(-1).astype(np.float64)
    ranges = {m: 1.0 + (np.arange(p.size) + 0.5) * 0.01 for m, p in profiles.items()}
    near, far = profiles[10.0], profiles[20.0]
    assert window(near, ranges[10.0], 7.0, 9.0) > 0.0
    assert onset(near, ranges[10.0], 7.0, 9.0) == pytest.approx(2 * A + s, abs=0.011)
    assert window(near, ranges[10.0], 7.0, 9.0) == pytest.approx(window(far, ranges[20.0], 7.0, 9.0), rel=1e-6)
    # the same-path echo at L_2 = 13 m stays outside the 10 m window; the direct echo is unchanged
    assert window(near, ranges[10.0], 2.0, 4.0) == pytest.approx(window(far, ranges[20.0], 2.0, 4.0), rel=1e-6)


def test_multibeam_nadir_second_bottom_echo_inside_the_range_although_its_chain_is_longer():
    # The multibeam of test_multipath_mixed.py's nadir second bottom echo (depth s = 2 m, altitude A = 3 m, sand,
    # two bounces): the mixed echo at 2 A + s = 8 m with max_range 10 m (chain L_2 = 13 m), the same as with 20 m.
    # Before the fix the nadir beam held nothing past the direct echo.
    A, s = 3.0, 2.0
    scene = seafloor(Material.from_properties("sand", (0.45, 0.4, 0.3), density=1990.0, sound_speed=1750.0), s + A)
    pose = np.array([0, 0, -s, *PITCH_DOWN_90])
    nadirs = {}
    for max_range in (10.0, 20.0):
        cfg = MultibeamSonarConfig.preset("blueview_p900", max_range=max_range, n_beams=64, noise_level=None,
                                          volume_scattering=None, tvg="none", absorption_model="fixed",
                                          absorption=ALPHA, multipath_bounces=2)
        out = MultibeamSonar(cfg, device="cpu").render(scene, pose).numpy()
        nadirs[max_range] = (out["clean_intensity"][0][:, 32].astype(np.float64), out["ranges"])
    (near, r_near), (far, r_far) = nadirs[10.0], nadirs[20.0]
    assert window(near, r_near, 7.5, 9.0) > 0.0
    assert window(near, r_near, 7.5, 9.0) == pytest.approx(window(far, r_far, 7.5, 9.0), rel=1e-5)
    step = float(r_near[1] - r_near[0])
    assert onset(near, r_near, 6.5, 9.9) == pytest.approx(2 * A + s, abs=1500.0 / (2.0 * cfg.bandwidth) + 2 * step)
