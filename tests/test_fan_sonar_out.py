"""``render(..., out=previous_result)`` of the ray-fan sonars (side-scan, single-beam, profiling), both models: the
render overwrites the arrays of ``out`` and returns it, with the same bytes as a render into new arrays; an
``out`` of another batch size, config or class raises ``ConfigError`` before anything is written."""

from __future__ import annotations

import numpy as np
import pytest

import oceansim_py as osp
from oceansim_py import ConfigError
from oceansim_py.poses import compose_poses, pose_from_euler
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

#: (sensor class, config class, preset, nose-down pitch in degrees): the peer default and a device preset of each.
CASES = [
    (SidescanSonar, SidescanSonarConfig, None, 0.0),
    (SidescanSonar, SidescanSonarConfig, "edgetech_4125_900khz", 0.0),
    (SinglebeamSonar, SinglebeamSonarConfig, None, 90.0),
    (SinglebeamSonar, SinglebeamSonarConfig, "tritech_pa500", 90.0),
    (ProfilingSonar, ProfilingSonarConfig, None, 0.0),
    (ProfilingSonar, ProfilingSonarConfig, "em2040_700khz", 0.0),
]


@pytest.fixture(scope="module")
def tank():
    return osp.load_scene("tank", device="cpu")


def poses_of(scene, pitch_deg: float, batch: int, shift: float = 0.0) -> np.ndarray:
    base = compose_poses(scene.suggested_pose, pose_from_euler(0.0, 0.0, 0.0, 0.0, pitch_deg, 0.0))
    return np.stack([compose_poses(base, pose_from_euler(0.05 * b + shift, 0.0, 0.0)) for b in range(batch)])


def warp_arrays(result) -> dict[str, int]:
    """Device pointer of every Warp array field of a result."""
    return {k: v.ptr for k, v in vars(result).items() if hasattr(v, "ptr")}


@pytest.mark.parametrize("sensor_cls, config_cls, preset, pitch", CASES,
                         ids=[f"{c[0].__name__}-{c[2] or 'peer'}" for c in CASES])
def test_render_into_out_reuses_its_arrays_with_the_same_bytes(tank, sensor_cls, config_cls, preset, pitch):
    config = config_cls.preset(preset) if preset else config_cls()
    sonar = sensor_cls(config, device="cpu")
    poses = poses_of(tank, pitch, 2)
    fresh = sonar.render(tank, poses, frame_index=5).numpy()
    # a result of another ping (other poses, other frame numbers), then rendered over
    out = sonar.render(tank, poses_of(tank, pitch, 2, shift=0.7), frame_index=40)
    pointers = warp_arrays(out)
    assert pointers, "the result holds Warp arrays"
    again = sonar.render(tank, poses, frame_index=5, out=out)
    assert again is out
    assert out.frame_index == 5
    assert warp_arrays(out) == pointers   # no array replaced
    reused = out.numpy()
    assert fresh.keys() == reused.keys()
    for key in fresh:
        np.testing.assert_array_equal(reused[key], fresh[key], err_msg=key)


@pytest.mark.parametrize("sensor_cls, config_cls, preset, pitch", CASES[:2] + CASES[4:5],
                         ids=[f"{c[0].__name__}-{c[2] or 'peer'}" for c in CASES[:2] + CASES[4:5]])
def test_out_of_another_batch_config_or_class_is_refused_before_writing(tank, sensor_cls, config_cls, preset,
                                                                        pitch):
    config = config_cls.preset(preset) if preset else config_cls()
    sonar = sensor_cls(config, device="cpu")
    out = sonar.render(tank, poses_of(tank, pitch, 2), frame_index=0)
    before = out.numpy()
    with pytest.raises(ConfigError, match="batch of 3"):
        sonar.render(tank, poses_of(tank, pitch, 3), out=out)
    other = sensor_cls(config_cls(seed=config.seed + 1) if preset is None else config_cls.preset(preset).replace(
        seed=config.seed + 1), device="cpu")
    with pytest.raises(ConfigError, match="another config"):
        other.render(tank, poses_of(tank, pitch, 2), out=out)
    with pytest.raises(ConfigError, match="must be a"):
        sonar.render(tank, poses_of(tank, pitch, 2), out=object())
    after = out.numpy()
    for key in before:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)
