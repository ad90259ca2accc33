"""Dataset data-loss checks with numbers known by hand: float64 table products read back to the last bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oceansim_py.dataset import load
from oceansim_py.dataset.generate import generate
from oceansim_py.dataset.rig import load_rig
from oceansim_py.dataset.shards import read_table, write_table
from test_dataset import write_rig  # noqa: E402 (tests/ is on sys.path under pytest)

#: The vehicle starts 4 km east of the tank (far from the origin, as in a survey's local frame) and runs east
#: at 0.5 m/s; a noise-free pose sensor at 3 Hz samples it at t = m / 3 s.
X0 = 4321.123456789
RIG = {
    "name": "far_pose", "scene": "tank", "seed": 1, "frames": 4, "tick_rate_hz": 3.0, "shard_size": 2,
    "batch_size": 2,
    "trajectory": {"type": "transect", "start": [X0, 0.0, -1.5], "end": [X0 + 10.0, 0.0, -1.5], "speed": 0.5},
    "sensors": [{"name": "pose", "type": "pose", "rate_hz": 3.0, "products": ["matrix"]}],
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    out = folder / "out"
    generate(load_rig(write_rig(folder, RIG)), out, progress=False)
    return out


def test_float64_table_products_read_back_exactly(dataset):
    # x(t) = X0 + 0.5 t at t = m / 3: 4321.123456789, 4321.28978..., 4321.45645..., 4321.62312... Written with
    # 9 significant digits (as before) x read back as 4321.12346 etc., 1e-6 m off; now to the bit (1e-9 covers
    # the trajectory's own float64 rounding, ~1e-12 m).
    ds = load(dataset)
    assert ds.num_samples("pose") == 4
    for m, sample in enumerate(ds.samples("pose")):
        x = sample["matrix"].reshape(4, 4)[0, 3]
        assert abs(x - (X0 + 0.5 * m / 3.0)) < 1e-9
        assert sample["matrix"].reshape(4, 4)[2, 3] == -1.5


def test_table_cells_keep_float64_values_and_float32_cells_stay_short(tmp_path):
    # An epoch time stamp: 1.7e9 + 0.1 s was written "1.7e+09" with 9 significant digits (0.1 s lost); a float32
    # keeps its 9-digit form (enough to round-trip any float32), a short float64 its short form.
    t = np.array([1_700_000_000.1, 1_700_000_000.2, 0.5])
    f32 = np.array([0.1, 1.0 / 3.0, 12345.678], dtype=np.float32)
    p = tmp_path / "samples.csv"
    write_table(p, {"sample": np.arange(3), "time": t, "value": f32})
    lines = p.read_text().splitlines()
    assert lines[1] == "0,1700000000.1,0.100000001"
    assert lines[3] == "2,0.5,12345.6777"
    back = read_table(p)
    assert np.array_equal(back["time"], t)
    assert np.array_equal(back["value"].astype(np.float32), f32)
    assert np.array_equal(back["sample"], [0, 1, 2])
