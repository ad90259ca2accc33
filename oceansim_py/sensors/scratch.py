"""Per-thread scratch buffers of a sensor, so that one sensor object can render from several threads.

A sensor keeps device scratch (poses, per-ray returns, intermediate series) between renders of the same batch
size so that a render does not allocate. Shared between threads, two concurrent renders would write the same
scratch and return each other's images; :class:`ScratchCache` therefore keeps one cache per calling thread
(``threading.local``): a thread reuses its own buffers and never sees another thread's. Results returned to
the caller are never scratch (each render allocates its result arrays, or writes the caller's ``out``).
"""

from __future__ import annotations

import threading
from typing import Callable, Generic, Hashable, TypeVar

T = TypeVar("T")


class ScratchCache(Generic[T]):
    """Scratch objects keyed by e.g. the batch size, at most ``max_entries`` per thread (oldest dropped first).

    ``len()`` is the number of entries the calling thread holds.
    """

    def __init__(self, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError(f"ScratchCache: max_entries must be >= 1, got {max_entries}")
        self.max_entries = int(max_entries)
        self._local = threading.local()

    def _entries(self) -> dict[Hashable, T]:
        entries = getattr(self._local, "entries", None)
        if entries is None:
            entries = {}
            self._local.entries = entries
        return entries

    def get(self, key: Hashable) -> T | None:
        """The calling thread's entry for ``key``, or None."""
        return self._entries().get(key)

    def put(self, key: Hashable, value: T) -> T:
        """Store ``value`` for ``key`` in the calling thread's cache (dropping its oldest entry when full)."""
        entries = self._entries()
        if key not in entries and len(entries) >= self.max_entries:
            entries.pop(next(iter(entries)))
        entries[key] = value
        return value

    def get_or_make(self, key: Hashable, make: Callable[[], T]) -> T:
        """The calling thread's entry for ``key``, made with ``make()`` (and stored) when it has none."""
        value = self.get(key)
        return value if value is not None else self.put(key, make())

    def __len__(self) -> int:
        return len(self._entries())
