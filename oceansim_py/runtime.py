"""Devices, Warp start-up, CPU thread chunking and memory checks.

Warp runs a CPU launch on one thread. :func:`launch_1d` splits a 1-D launch into contiguous chunks launched
from a thread pool (ctypes releases the GIL), so every core works. Chunkable kernels take their flattened
element count implicitly through ``dim`` and a final ``start: int`` argument, and compute
``i = wp.tid() + start``. Each element's result depends only on its own index, so the output is
bit-identical whatever the chunking. On CUDA the same kernel runs as one launch with ``start = 0``.
"""

from __future__ import annotations

import copy
import importlib
import os
import pkgutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import numpy as np
import warp as wp

from oceansim_py.errors import ConfigError

# Warp's start-up banner and per-module compile messages go through its log level; keep them for --verbose.
if hasattr(wp, "LOG_WARNING"):
    wp.config.log_level = wp.LOG_WARNING
wp.config.quiet = True

_init_lock = threading.Lock()
_load_lock = threading.Lock()
_initialised = False
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_threads_override: int | None = None

#: CPU launches smaller than this many elements per chunk are not split further.
MIN_CHUNK = 4096

#: Chunks per thread of a CPU launch: more chunks than threads let a thread that finishes early take the next
#: one, which evens out elements of uneven cost (rays that miss vs rays that traverse deep into the BVH).
CHUNKS_PER_THREAD = 4


#: What Warp's native library prints to stderr on a machine without the NVIDIA driver; dropped, because such a
#: machine renders on the CPU as intended (``oceansim-py info`` lists the devices Warp found).
_NO_DRIVER_MESSAGE = b"Could not find or load the NVIDIA CUDA driver"


def init_warp() -> None:
    """Initialise Warp once, quietly (idempotent, thread-safe); the native "no CUDA driver" warning of a
    CPU-only machine is not shown, anything else Warp prints at start-up is."""
    global _initialised
    with _init_lock:
        if not _initialised:
            _init_dropping_driver_warning()
            _initialised = True


def _init_dropping_driver_warning() -> None:
    """``wp.init()`` with file descriptor 2 captured, then replayed without the no-driver line."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        wp.init()
        return
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            wp.init()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        kept = [line for line in capture.read().splitlines(keepends=True) if _NO_DRIVER_MESSAGE not in line]
    if kept:
        sys.stderr.write(b"".join(kept).decode(errors="replace"))


def resolve_device(device: Any = None) -> wp.context.Device:
    """``None`` -> ``cuda:0`` when Warp sees a GPU, else ``cpu``; otherwise Warp's device for ``device``."""
    init_warp()
    if device is None:
        return wp.get_device("cuda:0") if wp.is_cuda_available() else wp.get_device("cpu")
    try:
        return wp.get_device(device)
    except Exception as exc:  # Warp raises plain exceptions for unknown devices
        names = [str(d) for d in wp.get_devices()]
        raise ConfigError(f"device {device!r} is not available; choose one of {names}") from exc


def cpu_threads() -> int:
    """Threads used for CPU launches: ``set_cpu_threads`` override, ``OCEANSIM_THREADS``, else all cores."""
    if _threads_override is not None:
        return _threads_override
    env = os.environ.get("OCEANSIM_THREADS")
    if env:
        try:
            n = int(env)
        except ValueError as exc:
            raise ConfigError(f"OCEANSIM_THREADS={env!r} is not an integer") from exc
        if n < 1:
            raise ConfigError(f"OCEANSIM_THREADS={env!r} must be >= 1")
        return n
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def set_cpu_threads(n: int | None) -> None:
    """Override the number of CPU launch threads (``None`` restores the default). Used by benchmarks."""
    global _threads_override
    if n is not None and n < 1:
        raise ConfigError(f"set_cpu_threads: n must be >= 1, got {n}")
    _threads_override = n


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _init_lock:
        if _pool is None or _pool_size < n:
            # the old pool is not shut down: a launch in another thread may still be submitting to it; its idle
            # workers exit once the last reference to it is dropped
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="oceansim-launch")
            _pool_size = n
        return _pool


def chunk_bounds(n: int, parts: int, align: int = 1) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``parts`` contiguous (start, stop) ranges whose starts are multiples
    of ``align`` (so a chunk never splits a group of ``align`` elements, e.g. one pose's rays)."""
    if n <= 0:
        return []
    groups = -(-n // align)
    parts = max(1, min(parts, groups))
    edges = [round(g * groups / parts) * align for g in range(parts + 1)]
    edges[-1] = n
    return [(a, min(b, n)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def load_module(kernel: Any, device: wp.context.Device) -> None:
    """Compile or load ``kernel``'s module for ``device`` under a lock, so that renders starting in several
    threads at once (or the launch pool's threads) never build the same module concurrently."""
    with _load_lock:
        kernel.module.load(device)


def launch_1d(kernel: Any, n: int, inputs: Sequence[Any], device: Any, align: int = 1,
              threads: int | None = None, min_chunk: int = MIN_CHUNK) -> None:
    """Launch ``kernel`` over ``n`` elements; the kernel's last argument is ``start: int``.

    On CPU the range is split into up to ``CHUNKS_PER_THREAD`` chunks per thread (starts aligned to ``align``)
    launched from a thread pool; on CUDA it is one launch. ``min_chunk``: fewest elements per chunk when ``align == 1`` (lower it for
    kernels whose elements are heavy, e.g. one element per sonar beam looping over its rays). Returns after
    all chunks finished.
    """
    dev = wp.get_device(device)
    if n <= 0:
        return
    load_module(kernel, dev)
    if not dev.is_cpu:
        wp.launch(kernel, dim=n, inputs=[*inputs, 0], device=dev)
        return
    nthreads = threads if threads is not None else cpu_threads()
    parts = 1 if nthreads == 1 else nthreads * CHUNKS_PER_THREAD
    if align == 1:
        parts = min(parts, max(1, n // max(1, min_chunk)))
    bounds = chunk_bounds(n, parts, align)
    if len(bounds) <= 1:
        wp.launch(kernel, dim=n, inputs=[*inputs, 0], device=dev)
        return
    pool = _get_pool(nthreads)
    futures = [pool.submit(command.launch) for command in chunk_launches(kernel, inputs, dev, bounds)]
    for f in futures:
        f.result()


def chunk_launches(kernel: Any, inputs: Sequence[Any], device: wp.context.Device,
                   bounds: Sequence[tuple[int, int]]) -> list[Any]:
    """One recorded ``wp.Launch`` per (start, stop) chunk of ``kernel`` over ``inputs`` + ``start``.

    The arguments are packed once (``wp.launch(..., record_cmd=True)``, some 40 us for a kernel of 20-30
    arguments); each further chunk is a copy with its own launch bounds and ``start`` (a few us), so a launch split
    into 8 chunks no longer spends 8 argument packings holding the GIL while the other launch threads wait for it.
    The kernel and its argument values are the same as ``wp.launch`` per chunk, so the results are too."""
    (a0, b0), rest = bounds[0], bounds[1:]
    first = wp.launch(kernel, dim=b0 - a0, inputs=[*inputs, a0], device=device, record_cmd=True)
    commands = [first]
    start_index = len(inputs)
    for a, b in rest:
        command = copy.copy(first)
        command.params = list(first.params)
        if first.params_addr:
            command.params_addr = list(first.params_addr)
        if getattr(first, "fwd_args", None) is not None:
            command.fwd_args = list(first.fwd_args)
        command.set_dim(b - a)
        command.set_param_at_index(start_index, a)
        commands.append(command)
    return commands


def available_memory_bytes(device: Any) -> int:
    """Free memory on ``device`` (GPU free memory, or the host's available RAM for CPU)."""
    init_warp()
    dev = wp.get_device(device)
    if dev.is_cuda:
        return int(getattr(dev, "free_memory", 0) or dev.total_memory)
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))


def check_memory(nbytes: int, device: Any, what: str, fix: str) -> None:
    """Refuse (``ConfigError``) a request that needs more than 80 % of the device's free memory."""
    free = available_memory_bytes(device)
    if nbytes > 0.8 * free:
        raise ConfigError(
            f"{what} would need {nbytes / 2**30:.2f} GiB on {device} but only {free / 2**30:.2f} GiB is free; "
            f"{fix}"
        )


def as_float32(a: Any, shape_tail: tuple[int, ...], what: str) -> np.ndarray:
    """``a`` as a C-contiguous float32 array whose trailing shape is ``shape_tail``; non-finite values are a
    ``ConfigError`` naming ``what`` and the first bad row."""
    arr = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
    if arr.shape[arr.ndim - len(shape_tail):] != shape_tail:
        raise ConfigError(f"{what}: expected shape (..., {', '.join(map(str, shape_tail))}), got {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        row = int(np.argwhere(bad.reshape(-1, int(np.prod(shape_tail))).any(axis=1))[0][0])
        raise ConfigError(f"{what}: row {row} holds a non-finite value; all values must be finite")
    return arr


def _kernel_modules() -> list[Any]:
    """The Warp modules of every ``oceansim_py.kernels`` submodule that defines kernels."""

    import oceansim_py.kernels as kernels_pkg

    modules = []
    for info in pkgutil.iter_modules(kernels_pkg.__path__):
        name = f"{kernels_pkg.__name__}.{info.name}"
        importlib.import_module(name)
        module = wp.get_module(name)
        if getattr(module, "kernels", None):
            modules.append(module)
    return modules


def cold_kernel_modules(device: Any = None) -> list[Any]:
    """The kernel modules with no compiled binary for ``device`` in Warp's kernel cache (they compile on their
    first launch). Empty when this Warp version does not expose where its cache files go."""
    dev = resolve_device(device)
    cold = []
    for module in _kernel_modules():
        try:
            folder = os.path.join(wp.config.kernel_cache_dir, module.get_module_identifier())
            binary = os.path.join(folder, module._get_compile_output_name(dev))
        except Exception:  # private Warp API changed: we cannot tell, so we do not announce
            return []
        if not os.path.exists(binary):
            cold.append(module)
    return cold


def compile_kernels_once(device: Any = None, notify: Any = print) -> float:
    """Compile every kernel module that Warp's cache lacks for ``device``, telling ``notify`` (a callable
    taking one str) before and after; returns the seconds spent (0 when the cache was warm, and nothing is
    said). This happens once per machine, Warp version and kernel source."""
    cold = cold_kernel_modules(device)
    if not cold:
        return 0.0
    dev = resolve_device(device)
    notify(f"compiling {len(cold)} Warp kernel module(s) for {dev} (first run only; cached in "
           f"{wp.config.kernel_cache_dir}); this takes a few seconds to a minute ...")
    t0 = time.perf_counter()
    for module in cold:
        module.load(dev)
    seconds = time.perf_counter() - t0
    notify(f"kernels compiled in {seconds:.1f} s")
    return seconds
