"""Atomic file writes: a file appears complete under its name, or not at all.

The package's file writers (scenes, bathymetry stages, images and arrays, dataset products, the manifest, point
clouds) go through :func:`atomic_path`; files inside a dataset shard that is still being written (its table,
``shard.json``) need not, since the shard folder's own rename publishes them. The data goes to a temporary file
in the target's folder (the same file system, so the rename is atomic), is flushed to disk (``fsync``), given
mode ``0o644`` and renamed over the target with :func:`os.replace`. On any error — an ``OSError``, an exception
raised by the caller's block, a ``KeyboardInterrupt`` — the temporary is removed and the old file, if there was
one, is left as it was.

Temporary names: unique by default (``.<name>.<random>.tmp`` from :func:`tempfile.mkstemp`), so concurrent
writers of the same file never share a temporary and the last rename wins with a complete file.
``unique=False`` uses the fixed sibling ``<name>.tmp``: dataset shard folders have one writer each, and
``--resume`` cleans up exactly those siblings (:func:`oceansim_py.dataset.shards.remove_written`).

The functions raise ``OSError`` as it comes; callers turn it into the ``OceanSimError`` subclass that names
their file (:func:`cannot_write` for dataset products).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from oceansim_py.errors import DatasetError

#: Permissions of every file written before the process umask applies (``mkstemp`` creates 0o600; ``open``
#: would create 0o666 & ~umask, which is what a written file gets).
FILE_MODE = 0o666


def _process_umask() -> int:
    """The process umask: from /proc/self/status on Linux (a read that changes nothing), else by setting and
    restoring it (POSIX has no read-only call)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask

#: The modes :func:`atomic_open` takes: a whole new file, text or binary.
WRITE_MODES = ("w", "wb")


def _temporary(target: Path, unique: bool) -> Path:
    if not unique:
        return target.with_name(target.name + ".tmp")
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    return Path(name)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path, *, unique: bool = True, fsync: bool = True) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s folder to write; on leaving the block it replaces ``path``.

    ``fsync`` flushes the temporary to disk before the rename (``False`` where a later step makes the files
    durable, or for many small products whose loss on a power cut is recovered by ``--resume``). Whatever goes
    wrong inside the block or in the rename, the temporary is removed and the exception propagates.
    """
    target = Path(path)
    tmp = _temporary(target, unique)
    try:
        yield tmp
        if fsync:
            _fsync_file(tmp)
        os.chmod(tmp, FILE_MODE & ~_process_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):  # e.g. the folder is gone: there is no temporary to remove
            tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", *, unique: bool = True, fsync: bool = True,
                encoding: str | None = None, newline: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary file for writing (``mode`` ``"w"`` or ``"wb"``, with ``encoding`` and ``newline`` as
    for :func:`open`); when the block ends without an error it is flushed, fsynced and renamed onto ``path``.
    Any other mode is a ``ValueError`` before anything is touched: the temporary starts empty, so an append
    (``"a"``) or a read (``"r"``, ``"r+"``) would replace the file with what the block wrote, losing its content."""
    if mode not in WRITE_MODES:
        raise ValueError(f"atomic_open: mode must be one of {WRITE_MODES} (the file is written whole), got {mode!r}")
    with atomic_path(path, unique=unique, fsync=False) as tmp, \
            open(tmp, mode, encoding=encoding, newline=newline) as fh:
        yield fh
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())


def atomic_write_bytes(path: str | Path, data: bytes, *, unique: bool = True, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`); returns the path."""
    with atomic_open(path, "wb", unique=unique, fsync=fsync) as fh:
        fh.write(data)
    return Path(path)


def atomic_write_text(path: str | Path, text: str, *, encoding: str = "utf-8", newline: str = "\n",
                      unique: bool = True, fsync: bool = True) -> Path:
    """Write ``text`` to ``path`` atomically (``newline="\\n"``: the same bytes on every platform)."""
    with atomic_open(path, "w", unique=unique, fsync=fsync, encoding=encoding, newline=newline) as fh:
        fh.write(text)
    return Path(path)


def cannot_write(path: str | Path, what: str, exc: OSError) -> DatasetError:
    """The error of a product that could not be written: ``what`` (e.g. ``"the PNG"``), the OS's reason, and
    what to check."""
    return DatasetError(f"{path}: could not write {what} ({exc.strerror or exc}); check the folder exists, is "
                        f"writable and the disk has space")
