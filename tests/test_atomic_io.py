"""oceansim_py.io.atomic: a write that fails leaves the old file and no temporary; concurrent writers never share
a temporary; the package's writers (PNG, npy, npz, manifest, scenes, PLY) go through it."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import threading

import numpy as np
import pytest

from oceansim_py.dataset.manifest import write_manifest
from oceansim_py.dataset.shards import save_npz
from oceansim_py.errors import DatasetError
from oceansim_py.io import atomic
from oceansim_py.io.atomic import atomic_open, atomic_path, atomic_write_bytes, atomic_write_text
from oceansim_py.io.images import save_npy, save_png
from oceansim_py.scene.procedural import write_builtin_scenes
from conftest import run_in_threads


def _names(folder):
    return sorted(p.name for p in folder.iterdir())


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_written_files_honour_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        atomic_write_bytes(tmp_path / "private.bin", b"secret")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private.bin").stat().st_mode) == 0o600


@pytest.mark.parametrize("unique", [True, False])
def test_write_replaces_the_file_with_mode_644_and_leaves_no_temporary(tmp_path, unique):
    target = tmp_path / "a.bin"
    target.write_bytes(b"old")
    assert atomic_write_bytes(target, b"new content", unique=unique) == target
    assert target.read_bytes() == b"new content"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    atomic_write_text(target, "x\ny\n", unique=unique)
    assert target.read_bytes() == b"x\ny\n"
    assert _names(tmp_path) == ["a.bin"]


@pytest.mark.parametrize("unique", [True, False])
def test_a_write_failing_midway_keeps_the_old_file_and_removes_the_temporary(tmp_path, unique):
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="midway"), atomic_open(target, "w", unique=unique) as fh:
        fh.write("half of the new")
        fh.flush()
        raise RuntimeError("failed midway")
    assert target.read_text() == "old\n"
    assert _names(tmp_path) == ["a.txt"]


def test_a_failing_rename_keeps_the_old_file_and_removes_the_temporary(tmp_path, monkeypatch):
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    monkeypatch.setattr(atomic.os, "replace", _disk_full)
    with pytest.raises(OSError, match="No space"):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert _names(tmp_path) == ["a.txt"]


def test_the_temporary_is_in_the_target_folder_and_unique_by_default(tmp_path):
    target = tmp_path / "m.json"
    with atomic_path(target) as first, atomic_path(target) as second:
        first.write_text("1")
        second.write_text("2")
        assert first.parent == second.parent == tmp_path and first != second
        assert first.name.startswith(".m.json.") and first.name.endswith(".tmp")
    assert target.read_text() == "1"  # the outer block renames last
    with atomic_path(target, unique=False) as fixed:
        assert fixed == tmp_path / "m.json.tmp"
        fixed.write_text("3")
    assert target.read_text() == "3" and _names(tmp_path) == ["m.json"]


def test_concurrent_writers_do_not_collide(tmp_path):
    target = tmp_path / "shared.txt"
    n = 6
    inside = threading.Barrier(n)
    temporaries = []

    def writer(k):
        with atomic_open(target, "w", encoding="utf-8") as fh:
            temporaries.append(fh.name)
            fh.write(f"writer {k}\n" * 1000)
            fh.flush()
            inside.wait(timeout=30)  # every writer has its temporary open at once

    run_in_threads(writer, n)
    assert len(set(temporaries)) == n
    text = target.read_text()
    assert text in {f"writer {k}\n" * 1000 for k in range(n)}  # one writer's file, whole
    assert _names(tmp_path) == ["shared.txt"]


def test_save_npy_failing_midway_is_a_dataset_error_and_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "x.npy"
    save_npy(target, np.arange(3))

    def half_then_full(fh, array):
        fh.write(b"\x93NUMPY partial")
        _disk_full()

    monkeypatch.setattr(np, "save", half_then_full)
    with pytest.raises(DatasetError, match=r"x\.npy: could not write the array \(No space left on device\)"):
        save_npy(target, np.arange(5))
    monkeypatch.undo()
    assert np.load(target).tolist() == [0, 1, 2]
    assert _names(tmp_path) == ["x.npy"]


def test_save_png_and_npz_failing_keep_old_files(tmp_path, monkeypatch):
    png, npz = tmp_path / "a.png", tmp_path / "b.npz"
    save_png(png, np.zeros((2, 3), dtype=np.uint8))
    save_npz(npz, "v", np.ones(4))
    before = {p: p.read_bytes() for p in (png, npz)}
    monkeypatch.setattr(atomic.os, "replace", _disk_full)
    with pytest.raises(DatasetError, match=r"a\.png: could not write the PNG"):
        save_png(png, np.full((2, 3), 9, dtype=np.uint8))
    with pytest.raises(DatasetError, match=r"b\.npz: could not write the array"):
        save_npz(npz, "v", np.zeros(4))
    assert {p: p.read_bytes() for p in (png, npz)} == before
    assert _names(tmp_path) == ["a.png", "b.npz"]


def test_manifest_write_failing_midway_keeps_the_old_manifest(tmp_path, monkeypatch):
    write_manifest(tmp_path, {"a": 1})

    def partial_dump(obj, fh, **kwargs):
        fh.write('{"a": ')
        _disk_full()

    monkeypatch.setattr(json, "dump", partial_dump)
    with pytest.raises(DatasetError, match=r"manifest\.json: could not write the manifest"):
        write_manifest(tmp_path, {"a": 2})
    monkeypatch.undo()
    assert json.loads((tmp_path / "manifest.json").read_text()) == {"a": 1}
    assert _names(tmp_path) == ["manifest.json"]


def test_scene_writer_failing_keeps_the_old_scene(tmp_path, monkeypatch):
    (path,) = write_builtin_scenes(tmp_path, ["tank"])
    before = path.read_bytes()
    monkeypatch.setattr(os, "fsync", _disk_full)
    with pytest.raises(OSError, match="No space"):
        write_builtin_scenes(tmp_path, ["tank"])
    assert path.read_bytes() == before and _names(tmp_path) == ["tank.usda"]


@pytest.mark.parametrize("mode", ["a", "ab", "r", "r+"])
def test_atomic_open_refuses_modes_that_would_replace_the_file_with_less(tmp_path, mode):
    # The temporary starts empty: "a" replaced the file with only the appended text, "r" read nothing and then
    # replaced the file with an empty one. Only whole-file writes are taken; the file and folder stay as they were.
    target = tmp_path / "log.txt"
    target.write_text("old line\n")
    with pytest.raises(ValueError, match=rf"^atomic_open: mode must be one of \('w', 'wb'\) .*got '{re.escape(mode)}'$"):
        with atomic_open(target, mode) as fh:
            fh.write("new\n" if "b" not in mode else b"new\n")
    assert target.read_text() == "old line\n" and _names(tmp_path) == ["log.txt"]
