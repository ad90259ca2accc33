"""An exclusive lock on a dataset folder, so that two ``generate`` runs never write into the same ``--out``.

The lock is the file ``<out>/.oceansim.lock``, held with ``fcntl.flock`` for as long as the run lasts and
holding its owner (pid, host, start time, command line) as JSON for the error a second run reports. The
kernel drops a flock when its process ends, however it ends (even ``kill -9``), so a run that died never
blocks the next one: its lock file is found unlocked, reported as stale on stderr, and taken over. Where the
file system has no flock (some network mounts), the file is created with ``O_EXCL`` instead; a stale one (its
pid dead on this host) is then reported with the command that clears it.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from oceansim_py.errors import DatasetError

LOCK_FILE = ".oceansim.lock"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _describe(owner: dict[str, Any]) -> str:
    return (f"pid {owner.get('pid', '?')} on host {owner.get('host', '?')} since {owner.get('started', '?')} "
            f"({owner.get('command', '?')})")


def _read_owner(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


class DatasetLock:
    """Hold ``with DatasetLock(out): ...`` around everything that writes into ``out`` (see module docstring)."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.path = self.out / LOCK_FILE
        self._fd: int | None = None

    def _owner(self) -> bytes:
        return json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "command": " ".join(sys.argv)}).encode()

    def _busy(self, owner: dict[str, Any]) -> DatasetError:
        return DatasetError(
            f"{self.out}: another oceansim-py run is writing this folder ({_describe(owner)}; lock file "
            f"{self.path}); wait for it to end or choose another --out")

    def acquire(self) -> None:
        import fcntl

        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise DatasetError(f"{self.path}: cannot create the lock file ({exc.strerror}); check that "
                                   f"{self.out} is a writable folder with free space") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise self._busy(_read_owner(self.path)) from None
                self._acquire_exclusive()
                return
            # The previous holder may have unlinked the file between our open and flock: retry on the new one.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            break
        previous = _read_owner(self.path)
        if previous:
            print(f"oceansim-py: {self.path}: taking over a stale lock left by {_describe(previous)}, which "
                  f"ended without releasing it", file=sys.stderr)
        os.ftruncate(fd, 0)
        os.write(fd, self._owner())
        self._fd = fd

    def _acquire_exclusive(self) -> None:
        """No flock here: the lock is the file's existence, created atomically."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            owner = _read_owner(self.path)
            if owner.get("host") == socket.gethostname() and isinstance(owner.get("pid"), int) and \
                    not _pid_alive(owner["pid"]):
                raise DatasetError(
                    f"{self.out}: stale lock {self.path} left by {_describe(owner)}, which is no longer running; "
                    f"delete it (rm {self.path}) and rerun with --resume") from None
            raise self._busy(owner) from None
        except OSError as exc:
            raise DatasetError(f"{self.path}: cannot create the lock file ({exc.strerror})") from exc
        os.write(fd, self._owner())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> "DatasetLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
