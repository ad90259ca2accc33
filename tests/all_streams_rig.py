"""A tiny rig with one sensor of every type (3 frames in the tank), for the export and viewer tests."""

from __future__ import annotations

from pathlib import Path

import yaml

from oceansim_py.cli import main

#: a tiny rig with every stream type; transect along +x at 0.5 m/s from (-1, 0, -1.5), ticks at 2 Hz
RIG = {
    "name": "export_all", "scene": "tank", "seed": 3, "frames": 3, "tick_rate_hz": 2.0, "shard_size": 2,
    "batch_size": 2,
    "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
    "sensors": [
        {"name": "cam", "type": "camera", "preset": "clear_ocean_sunlit", "rate_hz": 2.0,
         "config": {"width": 32, "height": 24}, "products": ["rgb_png", "depth", "label"],
         "mount": [0.3, 0, 0.1, 0, 10, 0]},
        {"name": "fls", "type": "imaging_sonar", "preset": "oceansim_default", "rate_hz": 2.0,
         "config": {"max_range": 6.0, "n_beams": 16, "range_bins": 24, "rays_per_beam": 2, "elevation_rays": 8},
         "products": ["intensity"]},
        {"name": "mbes", "type": "multibeam", "preset": "blueview_p900", "rate_hz": 2.0,
         "config": {"n_beams": 16, "max_range": 4.0, "rays_per_beam": 3}, "products": ["intensity"],
         "mount": [0.5, 0, 0, 0, 40, 0]},
        {"name": "sss", "type": "sidescan", "preset": "sidescan_900khz", "rate_hz": 2.0,
         "config": {"max_range": 5.0, "range_bins": 40, "across_track_rays": 64}, "products": ["intensity"]},
        {"name": "swath", "type": "profiling", "preset": "holoocean_default", "rate_hz": 2.0,
         "config": {"n_beams": 8, "max_range": 5.0, "range_bins": 50, "image": False},
         "products": ["bottom_range", "point_world", "intensity"]},
        {"name": "alt", "type": "singlebeam", "preset": "altimeter_200khz", "rate_hz": 2.0,
         "mount": [0, 0, 0, 0, 90, 0], "config": {"cone_rings": 2, "rays_per_ring": 8}},
        {"name": "dvl", "type": "dvl", "preset": "dvl_30deg", "rate_hz": 4.0},
        {"name": "imu", "type": "imu", "preset": "consumer_mems", "rate_hz": 10.0},
        {"name": "baro", "type": "barometer", "preset": "bar30", "rate_hz": 2.0},
        {"name": "gps", "type": "gps", "preset": "standalone", "rate_hz": 1.0, "mount": [0, 0, 2.0, 0, 0, 0]},
        {"name": "pose", "type": "pose", "rate_hz": 2.0},
    ],
}


def make_dataset(folder: Path) -> Path:
    """Generate :data:`RIG` into ``folder/ds`` (about a second on a CPU) and return the dataset path."""
    rig = folder / "rig.yaml"
    rig.write_text(yaml.safe_dump(RIG))
    out = folder / "ds"
    assert main(["generate", "--rig", str(rig), "--out", str(out), "--no-progress"]) == 0
    return out
