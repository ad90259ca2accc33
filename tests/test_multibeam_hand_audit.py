"""Multibeam audit: hand numbers on scenes the other multibeam tests do not use (a flat floor below a sensor
looking straight down), and render-time input the config cannot see."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import make_scene, quad
from oceansim_py.errors import ConfigError
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig

#: Sensor at the origin pitched 90 deg down: boresight -z, bearing axis across track (starboard = -y world).
DOWN = np.array([0.0, 0.0, 0.0, 0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4)])

#: A bare device model: no noise, reverberation, jitter or beam pattern; each test sets the rest.
BARE = dict(model="device", noise_level=None, volume_scattering=None, absorption_model="fixed", jitter=False,
            beam_pattern=False, elevation_directivity=False)


def floor(depth: float, mu: float = 0.01):
    return make_scene(("floor", quad([0.0, 0.0, -depth], [0.0, 0.0, 1.0], 200.0), mu))


def test_device_render_refuses_the_spectral_method_naming_it():
    # The config refuses method 'spectral' with model 'device'; render(method="spectral") used to run the time
    # method anyway and label the result "spectral" (and allocate the spectral buffers).
    sonar = MultibeamSonar(MultibeamSonarConfig(**BARE, fov=30.0, n_beams=8, rays_per_beam=2, max_range=6.0),
                           device="cpu")
    with pytest.raises(ConfigError, match="MultibeamSonar.render: method must be 'time' with model 'device'"):
        sonar.render(floor(5.0), DOWN, method="spectral")
    assert sonar.render(floor(5.0), DOWN, method="time").method == "time"
