"""Bad input to the host-side sensor helpers raises an OceanSimError (ConfigError) that says what to do."""

import numpy as np
import pytest

from oceansim_py.errors import ConfigError
from oceansim_py.sensors import host_noise
from oceansim_py.sensors.water import WaterType


def test_brownian_rejects_times_past_its_span_with_a_config_error():
    # The bridge spans +-2^-16 s * 2^42 = +-2^26 s; 2^27 s is past it.
    with pytest.raises(ConfigError, match="nearer epoch"):
        host_noise.brownian(0, 0, 0, np.array([2.0**27]), 3)
    with pytest.raises(ConfigError, match="finite"):
        host_noise.brownian(0, 0, 0, np.array([np.nan]), 3)


def test_visibility_rejects_a_contrast_outside_0_1_with_a_config_error():
    with pytest.raises(ConfigError, match="contrast"):
        WaterType().visibility(contrast=1.5)
