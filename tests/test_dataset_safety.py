"""Dataset folders under concurrent, repeated and hostile use: the output lock, refusing to join a run without
--resume, unique manifest temporaries, resume that deletes only its own files, and bad --out folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oceansim_py import DatasetError
from oceansim_py.dataset.generate import generate
from oceansim_py.dataset.lock import LOCK_FILE, DatasetLock
from oceansim_py.dataset.manifest import write_manifest
from oceansim_py.dataset.rig import load_rig
from oceansim_py.dataset.shards import PartialShard, check_shard, remove_written
from test_dataset import RIG, write_rig  # noqa: E402 (tests/ is on sys.path under pytest)

SMALL = {**RIG, "frames": 4, "shard_size": 2, "sensors": [RIG["sensors"][2]]}


def small_rig(folder: Path):
    return load_rig(write_rig(folder, SMALL))


def test_second_run_on_a_locked_folder_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with DatasetLock(out):
        owner = json.loads((out / LOCK_FILE).read_text())
        assert owner["pid"] == os.getpid()
        with pytest.raises(DatasetError, match=rf"another oceansim-py run is writing this folder \(pid {os.getpid()}"):
            generate(small_rig(tmp_path), out, progress=False)
    assert not (out / LOCK_FILE).exists()
    assert not (out / "manifest.json").exists()


def test_lock_held_by_another_process_is_refused_and_a_dead_ones_lock_is_taken_over(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from oceansim_py.dataset.lock import DatasetLock; "
                               f"l = DatasetLock(Path({str(out)!r})); l.acquire(); print('ok', flush=True); "
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent)
    try:
        assert holder.stdout.readline().strip() == "ok"
        with pytest.raises(DatasetError, match=rf"pid {holder.pid} on host"):
            DatasetLock(out).acquire()
    finally:
        holder.kill()
        holder.wait()
    # the holder died without releasing: its lock file stays, but the flock went with it
    assert json.loads((out / LOCK_FILE).read_text())["pid"] == holder.pid
    lock = DatasetLock(out)
    lock.acquire()
    assert json.loads((out / LOCK_FILE).read_text())["pid"] == os.getpid()
    lock.release()


def test_run_without_resume_does_not_join_an_existing_run(tmp_path):
    rig = small_rig(tmp_path)
    out = tmp_path / "out"
    generate(rig, out, progress=False)
    before = (out / "manifest.json").read_bytes()
    with pytest.raises(DatasetError, match="pass --resume"):
        generate(rig, out, progress=False)
    assert (out / "manifest.json").read_bytes() == before
    assert generate(rig, out, resume=True, progress=False)["status"] == "complete"


def test_manifest_writers_use_unique_temporaries(tmp_path, monkeypatch):
    made = []
    real = os.replace

    def spy(src, dst):
        made.append(os.path.basename(src))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    write_manifest(tmp_path, {"a": 1})
    write_manifest(tmp_path, {"a": 2})
    assert len(set(made)) == 2 and "manifest.json.tmp" not in made
    assert json.loads((tmp_path / "manifest.json").read_text()) == {"a": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]


def test_resume_deletes_only_files_its_writers_made(tmp_path):
    rig = small_rig(tmp_path)
    out = tmp_path / "out"
    generate(rig, out, progress=False)
    # a partial shard of a killed run with a user's file in it
    shard = PartialShard(out, 1)
    shard.file("baro/samples.csv").write_text("x")
    (shard.path / "notes.txt").write_text("mine")
    shard.close()
    with pytest.raises(DatasetError, match=r"did not write \(notes\.txt\)"):
        generate(rig, out, resume=True, progress=False)
    assert (shard.path / "notes.txt").read_text() == "mine"
    assert not (shard.path / "baro" / "samples.csv").exists()
    (shard.path / "notes.txt").unlink()
    assert generate(rig, out, resume=True, progress=False)["status"] == "complete"


def test_checksums_cover_only_what_the_shard_wrote(tmp_path):
    from oceansim_py.dataset.shards import ShardPlan, finish_shard

    shard = PartialShard(tmp_path, 0)
    shard.file("s/a.npy").write_bytes(b"a")
    (shard.path / "s" / "intruder.npy").write_bytes(b"b")
    with pytest.raises(DatasetError, match=r"files not written by this run: \['s/intruder.npy'\]"):
        finish_shard(tmp_path, ShardPlan(0, 0, 1, {"s": (0, 1)}), shard, {})
    assert not (tmp_path / "shard_00000").exists()


def test_out_below_a_regular_file_is_a_dataset_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatasetError, match=r"file exists and is not a folder"):
        generate(small_rig(tmp_path), tmp_path / "file" / "out", progress=False)


def test_symlinked_shard_files_are_refused(tmp_path):
    rig = small_rig(tmp_path)
    out = tmp_path / "out"
    generate(rig, out, progress=False)
    table = out / "shard_00000" / "baro" / "samples.csv"
    outside = tmp_path / "outside.csv"
    outside.write_bytes(table.read_bytes())
    table.unlink()
    table.symlink_to(outside)
    meta, problems = check_shard(out / "shard_00000", out)
    assert meta is None and any("symlink" in p for p in problems)
    with pytest.raises(DatasetError, match="did not write"):
        remove_written(out / "shard_00000")
    assert outside.exists() and table.is_symlink()


def test_oserror_writing_a_table_names_the_file(tmp_path, monkeypatch):
    import errno

    from oceansim_py.dataset import shards

    def no_inodes(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device (inodes)")

    monkeypatch.setattr(shards.Path, "write_text", no_inodes)
    with pytest.raises(DatasetError, match=r"t\.csv: could not write the table \(No space left"):
        shards.write_table(tmp_path / "t.csv", {"a": [1.0]})
