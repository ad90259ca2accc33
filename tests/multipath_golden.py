"""Renders every acoustic preset on the built-in tank scene and hashes the outputs: the record behind
tests/test_multipath.py's byte-identity check (``multipath_bounces = 0`` must give the bytes the code gave before
multipath existed). ``python tests/multipath_golden.py`` rewrites tests/data/multipath_golden.json; it was run
once on the code before multipath (commit recorded in the file) and must not be re-run to make the test pass."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from oceansim_py.scene import load_scene
from oceansim_py.sensors.imaging_sonar import ImagingSonar, ImagingSonarConfig
from oceansim_py.sensors.msis import Msis, MsisConfig
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
from oceansim_py.sensors.profiling_sonar import ProfilingSonar, ProfilingSonarConfig
from oceansim_py.sensors.sidescan import SidescanSonar, SidescanSonarConfig
from oceansim_py.sensors.singlebeam import SinglebeamSonar, SinglebeamSonarConfig

GOLDEN = Path(__file__).parent / "data" / "multipath_golden.json"

#: (config class, sensor class, pose (7,) in the tank: position, quaternion xyzw) per sensor kind; the poses
#: look at the tank's floor and walls (the side-scan, profiler and single-beam look down/sideways).
_DOWN_45 = [0.0, 0.38268343, 0.0, 0.92387953]   # pitch 45 deg down (FLU, y-rotation)
_DOWN_90 = [0.0, 0.70710678, 0.0, 0.70710678]   # pointing straight down
KINDS = {
    "imaging_sonar": (ImagingSonarConfig, ImagingSonar, [0.0, 0.0, -1.5, *_DOWN_45]),
    "multibeam": (MultibeamSonarConfig, MultibeamSonar, [0.0, 0.0, -1.5, *_DOWN_45]),
    "sidescan": (SidescanSonarConfig, SidescanSonar, [0.0, 0.0, -1.5, 0.0, 0.0, 0.0, 1.0]),
    "profiling": (ProfilingSonarConfig, ProfilingSonar, [0.0, 0.0, -1.5, 0.0, 0.0, 0.0, 1.0]),
    "singlebeam": (SinglebeamSonarConfig, SinglebeamSonar, [0.0, 0.0, -1.5, *_DOWN_90]),
    "msis": (MsisConfig, Msis, [0.0, 0.0, -1.5, 0.0, 0.0, 0.0, 1.0]),
}


def _digest(result) -> str:  # noqa: ANN001 - any sensor result with .numpy()
    h = hashlib.sha256()
    arrays = result.numpy()
    for key in sorted(arrays):
        a = arrays[key]
        if isinstance(a, np.ndarray):
            h.update(key.encode())
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def render_hashes(backend: str, **extra: object) -> dict[str, str]:
    """kind/preset -> SHA-256 of the sorted output arrays of two frames (pose and pose moved 0.2 m along x),
    every field of the preset as given plus ``extra``."""
    scene = load_scene("tank", device="cpu", raycast_backend=backend)
    out: dict[str, str] = {}
    for kind, (cfg_cls, sensor_cls, pose) in KINDS.items():
        for name in cfg_cls.preset_names():
            cfg = cfg_cls.preset(name, **extra)
            sensor = sensor_cls(cfg, device="cpu")
            p0 = np.asarray(pose, dtype=np.float64)
            p1 = p0.copy()
            p1[0] += 0.2
            out[f"{kind}/{name}"] = _digest(sensor.render(scene, np.stack([p0, p1]), 3))
    return out


if __name__ == "__main__":
    commit = sys.argv[1] if len(sys.argv) > 1 else "unknown"
    GOLDEN.parent.mkdir(exist_ok=True)
    record = {"commit": commit, "hashes": {b: render_hashes(b) for b in ("embree", "warp")}}
    GOLDEN.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
