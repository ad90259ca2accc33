"""The Rerun viewer: a dataset written to an .rrd without a window, read back chunk by chunk."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rerun")

from oceansim_py import load_dataset  # noqa: E402
from oceansim_py.cli import main  # noqa: E402
from oceansim_py.io.rerun_view import RETURN_FRACTION, fan_points  # noqa: E402

from all_streams_rig import make_dataset  # noqa: E402


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return make_dataset(tmp_path_factory.mktemp("view"))


def rrd_rows(path: Path) -> dict[str, list]:
    """Entity path -> its chunks, read back with rerun's own RRD reader."""
    from rerun.chunk import RrdReader

    out: dict[str, list] = {}
    for chunk in RrdReader(path).stream():
        out.setdefault(str(chunk.entity_path), []).append(chunk)
    return out


def test_fan_points_by_hand():
    # 2 ranges x 2 beams; peak 1.0, threshold 0.2: bins (0, 1) = 0.5 and (1, 0) = 1.0 survive
    img = np.array([[0.1, 0.5], [1.0, 0.0]])
    pts, val = fan_points(img, np.array([1.0, 2.0]), np.array([-np.pi / 2, np.pi / 6]))
    assert RETURN_FRACTION == 0.2
    # bin (0, 1): r 1 at +30 deg (starboard) -> (cos 30, -sin 30, 0); bin (1, 0): r 2 at -90 deg (port) -> (0, 2, 0)
    assert np.allclose(pts, [[np.cos(np.pi / 6), -0.5, 0.0], [0.0, 2.0, 0.0]])
    assert np.allclose(val, [0.5, 1.0])
    assert fan_points(np.zeros((2, 2)), np.ones(2), np.zeros(2))[0].shape == (0, 3)


def test_view_saves_a_readable_recording(dataset, tmp_path):
    out = tmp_path / "run.rrd"
    assert main(["view", str(dataset), "--save", str(out)]) == 0
    assert out.stat().st_size > 0
    rows = rrd_rows(out)
    n = {path: sum(c.num_rows for c in chunks) for path, chunks in rows.items()}
    reader = load_dataset(dataset)
    expected = {"/world/vehicle": 3, "/world/trajectory": 1, "/sonar/fls/polar": 3, "/sonar/mbes/polar": 3,
                "/world/vehicle/fls/returns": 3, "/world/vehicle/mbes/returns": 3, "/sonar/sss/waterfall": 3,
                "/world/swath/soundings": 3, "/world/vehicle/cam/image": 4,   # the static pinhole + 3 images
                "/camera/cam/depth": 3,
                "/world/vehicle/dvl/beams": 6, "/world/gps/position": 2, "/world/pose/position": 3,
                "/plots/imu/accel": 15, "/plots/baro/pressure": 3, "/plots/alt/altitude": 3}
    for path, count in expected.items():
        assert n.get(path) == count, path
    for sensor in reader.sensors:
        assert n[f"/world/vehicle/{sensor}"] == 1          # each mount, static
    assert any(p.startswith("/world/scene/") and "Floor" in p for p in n)
    # the vehicle is time-synchronised on the dataset time: 0, 0.5, 1.0 s on the "time" timeline
    # (rerun's batcher may split the rows into several chunks, e.g. on a busy machine: gather them all)
    batches = [c.to_record_batch() for c in rows["/world/vehicle"]]
    times = [t for b in batches for t in b.column("time").to_pylist()]
    assert [t.total_seconds() if hasattr(t, "total_seconds") else t / 1e9 for t in times] == \
        pytest.approx([0.0, 0.5, 1.0])
    translations = np.array([np.asarray(v).reshape(-1) for b in batches
                             for v in b.column("Transform3D:translation").to_pylist()])
    assert np.allclose(translations, [[-1.0, 0, -1.5], [-0.75, 0, -1.5], [-0.5, 0, -1.5]])
    # the fan returns are the bins at or above 20 % of each ping's peak, placed on the fan plane
    meta = reader.sensors["fls"]
    logged = [np.asarray(p).reshape(-1, 3) for c in rows["/world/vehicle/fls/returns"]
              for p in c.to_record_batch().column("Points3D:positions").to_pylist()]
    for pts, s in zip(logged, reader.samples("fls")):
        expected, _ = fan_points(s["intensity"], np.asarray(meta["ranges_m"]), np.asarray(meta["bearings_rad"]))
        assert len(expected) > 0 and np.allclose(pts, expected, atol=1e-5)
