"""What the navigation sensors share through ``sensors.nav_common.NavSensor`` and ``io.config.require_seed``: the
config type check, the default config, ``sensor_id``, the frame-index check of ``measure`` and the seed check,
with the messages each sensor gave before they were shared."""

from __future__ import annotations

import numpy as np
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.sensors.acoustic_modem import AcousticModem, AcousticModemConfig
from oceansim_py.sensors.barometer import Barometer, BarometerConfig
from oceansim_py.sensors.gps import GPS, GPSConfig
from oceansim_py.sensors.imu import IMU, IMUConfig
from oceansim_py.sensors.lbl import LBL, LBLConfig
from oceansim_py.sensors.magnetometer import Magnetometer, MagnetometerConfig
from oceansim_py.sensors.optical_modem import OpticalModem, OpticalModemConfig
from oceansim_py.sensors.pose_sensor import PoseSensor, PoseSensorConfig
from oceansim_py.sensors.usbl import USBL, USBLConfig
from oceansim_py.trajectory import Trajectory

# (sensor, its config class, the article its message has always used)
SENSORS = [(IMU, IMUConfig, "an"), (GPS, GPSConfig, "a"), (Barometer, BarometerConfig, "a"),
           (Magnetometer, MagnetometerConfig, "a"), (USBL, USBLConfig, "a"), (LBL, LBLConfig, "an"),
           (PoseSensor, PoseSensorConfig, "a"), (AcousticModem, AcousticModemConfig, "an"),
           (OpticalModem, OpticalModemConfig, "an")]
SAMPLED = [s for s, _, _ in SENSORS if s not in (AcousticModem, OpticalModem)]


@pytest.mark.parametrize("sensor, config_class, article", SENSORS, ids=[s.__name__ for s, _, _ in SENSORS])
def test_config_type_default_and_sensor_id(sensor, config_class, article):
    s = sensor(None, sensor_id=np.int64(3))
    assert isinstance(s.config, config_class) and s.sensor_id == 3 and type(s.sensor_id) is int
    given = config_class(seed=7)
    assert sensor(given).config is given
    with pytest.raises(ConfigError, match=rf"^{sensor.__name__}: config must be {article} {config_class.__name__}, "
                                          rf"got dict$"):
        sensor({"seed": 7})


@pytest.mark.parametrize("config_class", [c for _, c, _ in SENSORS], ids=[c.__name__ for _, c, _ in SENSORS])
def test_seed_must_be_a_31_bit_integer(config_class):
    assert config_class(seed=2**31 - 1).seed == 2**31 - 1
    for bad in (-1, 2**31, 1.5, "1"):
        with pytest.raises(ConfigError, match=rf"^{config_class.__name__}\.seed: must be an integer in \[0, 2\^31\), "
                                              rf"got {bad!r}$"):
            config_class(seed=bad)


@pytest.mark.parametrize("sensor", SAMPLED, ids=[s.__name__ for s in SAMPLED])
def test_measure_checks_the_frame_index_and_samples_at_the_rate(sensor):
    poses = np.tile([0.0, 0.0, -5.0, 1.0, 0.0, 0.0, 0.0], (3, 1))
    run = Trajectory(np.array([0.0, 1.0, 2.0]), poses)
    s = sensor()
    with pytest.raises(ConfigError, match=rf"^{sensor.__name__}\.measure: frame_index must be an integer >= 0, "
                                          rf"got -1$"):
        s.measure(run, frame_index=-1)
    fi, samples = s.samples(run, None, 5)
    n = int(np.floor(2.0 * s.config.rate + 1e-9)) + 1  # every 1 / rate s over the 2 s span
    assert fi == 5 and samples.poses.shape == (n, 7) and samples.times[1] == pytest.approx(1.0 / s.config.rate)


def test_positioning_configs_share_their_beacon_layout():
    from oceansim_py.sensors.registry import get

    positions = ((1.0, 2.0, -3.0), (4.0, 5.0, -6.0))
    for kind, config_class in (("lbl", LBLConfig), ("usbl", USBLConfig)):
        c = config_class(beacon_ids=(7, 9), beacon_positions=positions)
        assert c.n_beacons == 2
        meta = get(kind).metadata(c)
        assert meta["beacon_ids"] == [7, 9]
        assert meta["beacon_positions_world"] == [[1.0, 2.0, -3.0], [4.0, 5.0, -6.0]]
    usbl = get("usbl").metadata(USBLConfig(beacon_ids=(7, 9), beacon_positions=positions))
    assert sorted(usbl) == ["beacon_ids", "beacon_positions_world", "direction_cosine_sigma", "frame"]
