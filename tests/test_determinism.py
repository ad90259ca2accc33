"""The same seed gives the same bytes whatever the BLAS / OpenMP / launch thread count, the batch size and the
executor (local or Ray): every reduction feeding an output runs in a fixed order in our own code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from oceansim_py.cli import main

ROOT = Path(__file__).resolve().parents[1]

#: A 512-beam P900 ping to 10 m: large enough that OpenBLAS splits a matrix product over 2 threads (the old
#: BLAS beam mixing gave different bytes with OPENBLAS_NUM_THREADS=1 and =2 here).
RENDER_SCRIPT = """
import hashlib, sys
import numpy as np
import oceansim_py as osp
from oceansim_py.poses import compose_poses, pose_from_euler
from oceansim_py.sensors.multibeam import MultibeamSonar, MultibeamSonarConfig
scene = osp.load_scene("tank", device="cpu")
poses = np.stack([compose_poses(scene.suggested_pose, pose_from_euler(0.05 * b, 0, 0, 0, 0, 2.0 * b)) for b in range(3)])
for method in ("time", "spectral"):
    cfg = MultibeamSonarConfig.preset("blueview_p900_peer", max_range=10.0, rays_per_beam=3, method=method)
    sonar = MultibeamSonar(cfg, device="cpu")
    batch = sonar.render(scene, poses, frame_index=7).numpy()
    singles = [sonar.render(scene, poses[b], frame_index=7 + b).numpy() for b in range(3)]
    for name in ("time_series", "intensity", "db"):
        assert all(np.array_equal(batch[name][b], singles[b][name][0]) for b in range(3)), (method, name)
        print(method, name, hashlib.sha256(np.ascontiguousarray(batch[name]).tobytes()).hexdigest())
"""

RIG = {
    "name": "determinism", "scene": "tank", "seed": 5, "frames": 4, "tick_rate_hz": 4.0, "shard_size": 2,
    "batch_size": 2,
    "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
    "sensors": [
        {"name": "mbes", "type": "multibeam", "preset": "blueview_p900", "rate_hz": 4.0,
         "config": {"max_range": 10.0, "rays_per_beam": 3}, "products": ["time_series", "intensity", "db", "polar_png"]},
        {"name": "fls", "type": "imaging_sonar", "preset": "oceansim_default", "rate_hz": 4.0,
         "config": {"max_range": 6.0, "n_beams": 64, "range_bins": 96, "rays_per_beam": 2, "elevation_rays": 24},
         "products": ["intensity", "label_id"]},
        {"name": "dvl", "type": "dvl", "preset": "dvl_30deg", "rate_hz": 4.0},
        {"name": "imu", "type": "imu", "preset": "consumer_mems", "rate_hz": 20.0},
        {"name": "pose", "type": "pose", "rate_hz": 4.0, "mount": [0.1, 0, 0.2, 0, 10, 0]},
    ],
}


def thread_env(n: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"OPENBLAS_NUM_THREADS": str(n), "OMP_NUM_THREADS": str(n), "MKL_NUM_THREADS": str(n),
                "OCEANSIM_THREADS": str(n), "PYTHONPATH": str(ROOT)})
    return env


def dataset_files(out: Path) -> dict[str, bytes]:
    """Every file of a dataset but the manifest (whose ``timing`` differs), by relative path."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "manifest.json"}


def manifest_without_timing(out: Path) -> dict:
    """The manifest without its wall-clock fields (``timing``, each shard's ``render_seconds``)."""
    m = json.loads((out / "manifest.json").read_text())
    m.pop("timing", None)
    m["shards"] = [{k: v for k, v in s.items() if not k.endswith("_seconds")} for s in m["shards"]]
    return m


def test_multibeam_bytes_do_not_depend_on_blas_launch_threads_or_batch() -> None:
    hashes = []
    for n in (1, 2):
        run = subprocess.run([sys.executable, "-c", RENDER_SCRIPT], env=thread_env(n), cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        hashes.append([line for line in run.stdout.splitlines() if line.startswith(("time ", "spectral "))])
    assert len(hashes[0]) == 6
    assert hashes[0] == hashes[1]


def test_generate_bytes_do_not_depend_on_blas_threads_or_batch_size(tmp_path: Path) -> None:
    outs = []
    for n, batch in ((1, 2), (2, 1)):
        rig = tmp_path / f"rig{n}.yaml"
        rig.write_text(yaml.safe_dump({**RIG, "batch_size": batch}))
        out = tmp_path / f"out{n}"
        run = subprocess.run([sys.executable, "-m", "oceansim_py.cli", "generate", "--rig", str(rig), "--out", str(out),
                              "--no-progress"], env=thread_env(n), cwd=ROOT, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        outs.append(out)
    a, b = dataset_files(outs[0]), dataset_files(outs[1])
    assert any(k.startswith("shard_00000/mbes/time_series") for k in a)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    ma, mb = manifest_without_timing(outs[0]), manifest_without_timing(outs[1])
    assert ma["shards"] == mb["shards"]


def test_ray_executor_writes_the_same_bytes_as_local(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    rig = tmp_path / "rig.yaml"
    rig.write_text(yaml.safe_dump(RIG))
    local, distributed = tmp_path / "local", tmp_path / "ray"
    assert main(["generate", "--rig", str(rig), "--out", str(local), "--no-progress"]) == 0
    assert main(["generate", "--rig", str(rig), "--out", str(distributed), "--executor", "ray", "--no-progress"]) == 0
    a, b = dataset_files(local), dataset_files(distributed)
    assert len(a) > 20 and a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    assert manifest_without_timing(local) == manifest_without_timing(distributed)
    checksums = lambda out: {s["index"]: s["checksum"] for s in manifest_without_timing(out)["shards"]}  # noqa: E731
    assert checksums(distributed) == checksums(local)
    assert np.load(local / "shard_00001" / "mbes" / "time_series_000003.npy").dtype == np.complex64


def test_fixed_order_products_equal_the_hand_sums() -> None:
    from oceansim_py.poses import matmul_fixed, rotate_fixed

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 3, 4)), rng.standard_normal((5, 4, 2))
    by_hand = ((a[:, :, 0:1] * b[:, 0:1, :] + a[:, :, 1:2] * b[:, 1:2, :]) + a[:, :, 2:3] * b[:, 2:3, :]) \
        + a[:, :, 3:4] * b[:, 3:4, :]
    assert np.array_equal(matmul_fixed(a, b), by_hand)  # k = 0, 1, 2, 3 in that order, bit for bit
    np.testing.assert_allclose(matmul_fixed(a, b), a @ b, rtol=1e-14, atol=1e-14)
    r, v = rng.standard_normal((6, 3, 3)), rng.standard_normal((6, 3))
    np.testing.assert_allclose(rotate_fixed(r, v), np.einsum("nij,nj->ni", r, v), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(rotate_fixed(r, v, transpose=True), np.einsum("nji,nj->ni", r, v), rtol=1e-14,
                               atol=1e-14)
    assert rotate_fixed(np.diag([1.0, 2.0, 3.0]), np.array([[1.0, 1.0, 1.0]])).tolist() == [[1.0, 2.0, 3.0]]
