"""Display products of the imaging sonar and the multibeam against hand computations: a point target at a known
range and bearing lands on the fan (Cartesian) pixel computed from the documented fan geometry (sonar at the
bottom centre, far range up, starboard right; oceansim_py/io/images.py fan_geometry), and a dataset's fan PNG of a
device preset is the device's dB display window of the fan, like its polar PNG."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import make_scene, quad
from oceansim_py.cli import main
from oceansim_py.dataset import load
from oceansim_py.io.images import polar_to_cartesian
from oceansim_py.sensors.acoustic.display import db_window_to_uint8
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
WIDTH = 400


def target(r: float, bearing_deg: float, size: float):
    """A small square facing the sensor at range ``r`` (m) and ``bearing_deg`` (positive to starboard = -y, FLU)."""
    b = math.radians(bearing_deg)
    c = [r * math.cos(b), -r * math.sin(b), 0.0]
    return make_scene(("t", quad(c, [-c[0], -c[1], 0.0], size), 0.9))


def hand_pixel(r: float, bearing_deg: float, r_max: float, fov_deg: float) -> tuple[int, int]:
    """(row, column) of the point by hand: pixel px = 2 r_max sin(fov / 2) / WIDTH (fov < 180 deg, so the bottom row
    is at the sonar); column counted from the port edge y = -r_max sin(fov / 2), row from the top (x = r_max)."""
    half = math.radians(fov_deg) / 2
    px = 2 * r_max * math.sin(half) / WIDTH
    height = math.ceil(r_max / px)
    b = math.radians(bearing_deg)
    return math.floor(height - r * math.cos(b) / px), math.floor((r * math.sin(b) + r_max * math.sin(half)) / px)


def peak_pixel(fan: np.ndarray) -> tuple[int, int]:
    row, col = np.unravel_index(np.argmax(fan), fan.shape)
    return int(row), int(col)


@pytest.mark.parametrize("bearing", [0.0, 20.0, -35.0, 64.8, -64.8])
def test_imaging_sonar_point_target_lands_on_its_fan_pixel(bearing):
    # Oculus M750d 750 kHz: 130 deg, 0.1-30 m (r_max 30 m), 400 px wide: px = 60 sin(65 deg) / 400 = 0.1359 m,
    # H = ceil(30 / 0.1359) = 221 rows; e.g. 18.6 m at +20 deg: row floor(221 - 17.478 / 0.1359) = 92, column
    # floor((6.362 + 27.189) / 0.1359) = 246. The bearing edges (+-64.8 deg) are inside the outermost beams.
    cfg = ImagingSonarConfig.preset("oculus_m750d")
    assert (cfg.horizontal_fov, cfg.max_range) == (130.0, 30.0)
    res = ImagingSonar(cfg, device="cpu").render(target(18.6, bearing, 0.37), IDENTITY)
    fan = res.to_cartesian(WIDTH, clean=True)[0]
    assert fan.shape == (221, WIDTH)
    row, col = hand_pixel(18.6, bearing, 30.0, 130.0)
    got = peak_pixel(fan)
    assert abs(got[0] - row) <= 1 and abs(got[1] - col) <= 1, (got, (row, col))
    assert (col > WIDTH // 2) == (bearing > 0) or bearing == 0.0


@pytest.mark.parametrize("bearing", [25.0, -30.0, 44.9, -44.9])
def test_multibeam_point_target_lands_on_its_fan_pixel(bearing):
    # BlueView P900: 90 deg, samples from 0.2 m every 2.5 cm to r_max = 10 m (+ half a sample); 400 px wide.
    cfg = MultibeamSonarConfig.preset("blueview_p900")
    res = MultibeamSonar(cfg, device="cpu").render(target(6.0, bearing, 0.12), IDENTITY)
    r_max = float(res.ranges[-1] + 0.5 * (res.ranges[1] - res.ranges[0]))
    row, col = hand_pixel(6.0, bearing, r_max, 90.0)
    got = peak_pixel(res.to_cartesian(WIDTH)[0])
    assert abs(got[0] - row) <= 1 and abs(got[1] - col) <= 1, (got, (row, col))


def test_a_target_outside_the_fan_is_not_seen():
    cfg = ImagingSonarConfig.preset("oculus_m750d")
    assert ImagingSonar(cfg, device="cpu").render(target(18.6, 68.0, 0.37), IDENTITY).numpy()["hit_count"].sum() == 0


def test_dataset_fan_png_of_a_device_preset_is_its_db_display_window(tmp_path: Path):
    # The fan PNG is the device's dB window [display_floor, display_floor + dynamic_range] of the fan image, as the
    # polar PNG is of the polar image (it was once the linear clip(255 I), all 255 for intensities in uPa^2).
    rig = {"name": "fan", "scene": "tank", "seed": 3, "frames": 1, "tick_rate_hz": 1.0, "shard_size": 1,
           "batch_size": 1,
           "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
           "sensors": [{"name": "fls", "type": "imaging_sonar", "preset": "aris3000_3000khz", "rate_hz": 1.0,
                        "config": {"max_range": 6.0, "n_beams": 64, "range_bins": 96, "rays_per_beam": 2,
                                   "elevation_rays": 24},
                        "products": ["intensity", "polar_png", "fan_png"]}]}
    (tmp_path / "rig.yaml").write_text(yaml.safe_dump(rig))
    assert main(["generate", "--rig", str(tmp_path / "rig.yaml"), "--out", str(tmp_path / "out"),
                 "--no-progress"]) == 0
    frame = load(tmp_path / "out").frame(0)["fls"]
    cfg = ImagingSonarConfig.preset("aris3000_3000khz", **rig["sensors"][0]["config"])
    assert cfg.display == "db"
    np.testing.assert_array_equal(frame["polar_png"],
                                  db_window_to_uint8(frame["intensity"], cfg.display_floor, cfg.dynamic_range))
    fan = polar_to_cartesian(frame["intensity"], cfg.ranges(), cfg.bearings(), 512)
    np.testing.assert_array_equal(frame["fan_png"], db_window_to_uint8(fan, cfg.display_floor, cfg.dynamic_range))
    assert (frame["fan_png"] == 255).mean() < 0.05
