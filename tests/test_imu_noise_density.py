"""An IMU preset keeps its data-sheet noise density at any output rate (hand numbers).

The presets give per-sample white-noise sigmas at 100 Hz, sigma = N sqrt(100 Hz). Sampled at a rate f set over the
preset, the per-sample sigma must be N sqrt(f), so that sigma / sqrt(f) (the density an Allan deviation measures)
stays N. Tactical preset (oceansim_py/sensors/imu.py): gyro N = 0.1 deg/sqrt(h) = 0.1 / 60 deg/s/sqrt(Hz)
= 2.908882e-5 rad/s/sqrt(Hz), accelerometer N = 0.05 m/s/sqrt(h) = 0.05 / 60 = 8.333333e-4 m/s^2/sqrt(Hz).

Sampling error of a density measured from M independent N(0, sigma^2) draws: the relative standard error of a
sample standard deviation is 1 / sqrt(2 (M - 1)); the tolerances are 4 of those (a false failure once in ~16 000
runs, but the draws are counter-based, so a run is the same every time).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from oceansim_py.cli import main
from oceansim_py.dataset.rig import parse_rig
from oceansim_py.dataset.shards import read_table
from oceansim_py.errors import ConfigError
from oceansim_py.poses import pose_from_euler
from oceansim_py.sensors.imu import IMU, IMUConfig
from oceansim_py.sensors.magnetometer import MagnetometerConfig
from oceansim_py.trajectory import Trajectory

GYRO_DENSITY = math.radians(0.1 / 60.0)     # rad/s/sqrt(Hz), 2.908882e-5
ACCEL_DENSITY = 0.05 / 60.0                 # m/s^2/sqrt(Hz), 8.333333e-4


def white_noise(config: IMUConfig, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(accel, gyro) white noise of ``n`` samples at the config's rate, at rest: the measurement less the truth and
    the biases, (n, 3) each."""
    rest = Trajectory([0.0, n / config.rate], [pose_from_euler(0.0, 0.0, -10.0, 0.0, 0.0, 0.0)] * 2)
    r = IMU(config, sensor_id=2).measure(rest, times=np.arange(n) / config.rate)
    return r.accel - r.true_accel - r.accel_bias, r.gyro - r.true_gyro - r.gyro_bias


def test_tactical_preset_keeps_its_density_at_four_times_its_rate() -> None:
    n = 20000                                              # M = 60 000 draws per sensor: 4 SE = 1.2 %
    tol = 4.0 / math.sqrt(2.0 * (3 * n - 1))
    densities = {}
    for rate in (100.0, 400.0):
        accel, gyro = white_noise(IMUConfig.preset("tactical", rate=rate, seed=5), n)
        densities[rate] = accel.std() / math.sqrt(rate), gyro.std() / math.sqrt(rate)
        assert densities[rate][0] == pytest.approx(ACCEL_DENSITY, rel=tol)
        assert densities[rate][1] == pytest.approx(GYRO_DENSITY, rel=tol)
    # sample i draws the same N(0, 1) numbers at both rates: at 4x the rate, twice the per-sample noise
    assert densities[400.0] == pytest.approx(densities[100.0], rel=1e-12)
    a100, g100 = white_noise(IMUConfig.preset("tactical", rate=100.0, seed=5), 50)
    a400, g400 = white_noise(IMUConfig.preset("tactical", rate=400.0, seed=5), 50)
    # (to the round-off of subtracting g = 9.8 m/s^2 back out: 2 ulp of 9.8 ~ 4e-15 m/s^2)
    np.testing.assert_allclose(a400, 2.0 * a100, rtol=0, atol=1e-14)
    np.testing.assert_allclose(g400, 2.0 * g100, rtol=0, atol=1e-14)


def test_rate_over_a_preset_scales_its_white_sigmas_only() -> None:
    tactical = IMUConfig.preset("tactical")
    assert (tactical.rate, tactical.gyro_noise_sigma, tactical.accel_noise_sigma) == (100.0, 1.0 / 60.0, 0.05 / 6.0)
    fast = IMUConfig.preset("tactical", rate=400.0)
    assert fast.gyro_noise_sigma == pytest.approx(2.0 / 60.0, rel=1e-15)        # 0.1/60 deg/s/rtHz x sqrt(400)
    assert fast.accel_noise_sigma == pytest.approx(0.05 / 3.0, rel=1e-15)
    assert (fast.gyro_bias_walk, fast.accel_bias_walk) == (tactical.gyro_bias_walk, tactical.accel_bias_walk)
    assert IMUConfig.preset("tactical", rate=100.0) == tactical                   # the preset's own rate: same bits
    slow = IMUConfig.from_dict(yaml.safe_load("{preset: consumer_mems, rate: 25}"))
    assert slow.gyro_noise_sigma == pytest.approx(0.01 * 5.0, rel=1e-15)         # 0.01 deg/s/rtHz x sqrt(25)
    assert slow.accel_noise_sigma == pytest.approx(300e-6 * 9.80665 * 5.0, rel=1e-15)


def test_explicit_sigmas_win_over_the_preset_scaling() -> None:
    c = IMUConfig.preset("tactical", rate=400.0, gyro_noise_sigma=0.5)
    assert c.gyro_noise_sigma == 0.5
    assert c.accel_noise_sigma == pytest.approx(0.05 / 3.0, rel=1e-15)          # the one not given still scales
    both = IMUConfig.preset("tactical", rate=400.0, gyro_noise_sigma=0.5, accel_noise_sigma=0.25)
    assert (both.gyro_noise_sigma, both.accel_noise_sigma) == (0.5, 0.25)
    plain = IMUConfig(rate=400.0)                          # no preset: per-sample sigmas as given (the defaults)
    assert (plain.gyro_noise_sigma, plain.accel_noise_sigma) == (0.05, 0.02)
    assert IMUConfig.preset("ideal", rate=400.0).noise is False


def test_fluxgate_magnetometer_keeps_its_density_and_mems_its_rms() -> None:
    # fluxgate: 0.001 uT per sample at 100 Hz = 1e-4 uT/rtHz; at 25 Hz 1e-4 x 5 = 5e-4 uT
    assert MagnetometerConfig.preset("fluxgate", rate=25.0).noise_sigma == pytest.approx(5e-4, rel=1e-15)
    assert MagnetometerConfig.preset("fluxgate", rate=25.0, noise_sigma=0.002).noise_sigma == 0.002
    assert MagnetometerConfig.preset("mems", rate=25.0).noise_sigma == 0.32      # a data-sheet RMS, not a density


def imu_rig(rate_hz: float, frames: int, config: dict | None = None) -> dict:
    return {"name": "imu_rate", "scene": "tank", "seed": 4, "frames": frames, "shard_size": frames,
            "batch_size": frames,
            "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.2},
            "sensors": [{"name": "nav_imu", "type": "imu", "preset": "tactical", "rate_hz": rate_hz,
                         "config": config or {},
                         "products": ["accel", "gyro", "accel_bias", "gyro_bias", "true_accel", "true_gyro"]}]}


def test_rig_rate_becomes_the_imu_rate_and_a_different_one_is_refused() -> None:
    spec = parse_rig(imu_rig(400.0, 4), "rig.yaml").sensors[0]
    assert spec.config["rate"] == 400.0
    assert parse_rig(imu_rig(400.0, 4, {"rate": 400}), "rig.yaml").sensors[0].config["rate"] == 400
    with pytest.raises(ConfigError) as err:
        parse_rig(imu_rig(400.0, 4, {"rate": 200.0}), "rig.yaml")
    text = str(err.value)
    assert "rig.yaml" in text and "'nav_imu'" in text and "rate 200 Hz" in text and "rate_hz 400 Hz" in text


def test_generated_400_hz_imu_has_the_preset_density(tmp_path) -> None:
    frames = 4000                                          # 10 s at 400 Hz, M = 12 000 draws: 4 SE = 2.6 %
    rig = tmp_path / "rig.yaml"
    rig.write_text(yaml.safe_dump(imu_rig(400.0, frames)))
    assert main(["generate", "--rig", str(rig), "--out", str(tmp_path / "ds"), "--no-progress"]) == 0
    t = read_table(tmp_path / "ds" / "shard_00000" / "nav_imu" / "samples.csv")
    assert t["sample"].size == frames
    tol = 4.0 / math.sqrt(2.0 * (3 * frames - 1))
    for name, density in (("accel", ACCEL_DENSITY), ("gyro", GYRO_DENSITY)):
        white = np.stack([t[f"{name}_{i}"] - t[f"true_{name}_{i}"] - t[f"{name}_bias_{i}"] for i in range(3)])
        assert white.std() / math.sqrt(400.0) == pytest.approx(density, rel=tol)
