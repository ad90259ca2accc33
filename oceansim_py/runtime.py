"""Devices, Warp start-up, CPU thread chunking and memory checks.

Warp runs a CPU launch on one thread. :func:`launch_1d` splits a 1-D launch into contiguous chunks that the
calling thread and persistent launch threads take from a shared counter (ctypes releases the GIL while a chunk
runs), so every core works. Chunkable kernels take their flattened element count implicitly through ``dim`` and a
final ``start: int`` argument, and compute ``i = wp.tid() + start``. Each element's result depends only on its own
index, so the output is bit-identical whatever the chunking. On CUDA the same kernel runs as one launch with
``start = 0``.
"""

from __future__ import annotations

import copy
import ctypes
import functools
import importlib
import itertools
import os
import pkgutil
import queue
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Sequence

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
_threads_override: int | None = None

#: Most CPU launch threads ``set_cpu_threads`` / ``OCEANSIM_THREADS`` accept: each is a persistent thread, and a
#: mistyped count (10**6) would otherwise start one per chunk of every large launch.
MAX_CPU_THREADS = 1024

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
    if isinstance(device, str) and device.startswith("cuda") and not wp.is_cuda_available():
        # asked without a driver, Warp prints CUDA driver errors to stderr before it raises
        raise ConfigError(f"device {device!r} is not available (Warp sees no CUDA GPU); choose one of "
                          f"{[str(d) for d in wp.get_devices()]}")
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
        if not 1 <= n <= MAX_CPU_THREADS:
            raise ConfigError(f"OCEANSIM_THREADS={env!r} must be in [1, {MAX_CPU_THREADS}]")
        return n
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def set_cpu_threads(n: int | None) -> None:
    """Override the number of CPU launch threads (``None`` restores the default): an integer in
    [1, ``MAX_CPU_THREADS``], else a ``ConfigError`` (and the setting is unchanged). Used by benchmarks."""
    global _threads_override
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_CPU_THREADS:
            raise ConfigError(f"set_cpu_threads: n must be an integer in [1, {MAX_CPU_THREADS}] or None, got {n!r}")
        n = int(n)
    _threads_override = n


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


def load_module(kernel: Any, device: wp.context.Device) -> Any:
    """Compile or load ``kernel``'s module for ``device`` under a lock, so that renders starting in several
    threads at once never build or load the same module concurrently (Warp's ``Module.load`` is not thread-safe:
    two threads loading one module both load it, and the copy that loses is unloaded while the other thread may
    be running its kernels). Loads the variant ``wp.launch`` then uses (on the CPU, Warp >= 1.10 keys a module's
    builds by block size and launches with 1) and returns it (the loaded module, a new object whenever it was
    rebuilt)."""
    with _load_lock:
        if device.is_cpu:
            try:
                return kernel.module.load(device, 1)
            except TypeError:  # a Warp whose Module.load takes no block size
                pass
        return kernel.module.load(device)


def launch_1d(kernel: Any, n: int, inputs: Sequence[Any], device: Any, align: int = 1,
              threads: int | None = None, min_chunk: int = MIN_CHUNK) -> None:
    """Launch ``kernel`` over ``n`` elements; the kernel's last argument is ``start: int``.

    On CPU the range is split into up to ``CHUNKS_PER_THREAD`` chunks per thread (starts aligned to ``align``),
    which the calling thread and the launch threads (:class:`LaunchThreads`) take in turn; on CUDA it is one
    launch. ``min_chunk``: fewest elements per chunk when ``align == 1`` (lower it for kernels whose elements are
    heavy, e.g. one element per sonar beam looping over its rays). Returns after all chunks finished.
    """
    dev = wp.get_device(device)
    if n <= 0:
        return
    loaded = load_module(kernel, dev)
    if not dev.is_cpu:
        wp.launch(kernel, dim=n, inputs=[*inputs, 0], device=dev)
        return
    nthreads = threads if threads is not None else cpu_threads()
    parts = 1 if nthreads == 1 else nthreads * CHUNKS_PER_THREAD
    if align == 1:
        parts = min(parts, max(1, n // max(1, min_chunk)))
    bounds = chunk_bounds(n, parts, align)
    calls, packed = _launch_plans.calls(kernel, loaded, inputs, dev, bounds)
    if len(calls) == 1:
        calls[0]()
    else:
        _launch_threads.run(calls, nthreads)
    del packed  # held until the chunks ran (the arrays its parameters view)


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


try:  # Warp's own CPU argument structs (warp/_src/context.py), to call a chunk's compiled function directly
    from warp._src.context import _build_cpu_args_structs
    from warp._src.context import _get_apic_capture_for_device
    from warp._src.types import launch_bounds_t
except ImportError:  # another Warp version: every chunk goes through wp.Launch.launch
    _build_cpu_args_structs = None


def chunk_calls(kernel: Any, inputs: Sequence[Any], device: wp.context.Device,
                bounds: Sequence[tuple[int, int]]) -> tuple[list[Callable[[], None]], Any]:
    """One zero-argument call per (start, stop) chunk of ``kernel`` over ``inputs`` + ``start`` on the CPU, and
    the packed launch to hold until they ran (None when the calls hold what they need).

    The arguments are packed once (:func:`chunk_launches`'s first command); with the Warp versions that expose
    their CPU argument structs, its struct is built once and each chunk gets a byte copy with its own ``start`` and
    launch bounds, and a call is the compiled kernel function itself (under 1 us; ``wp.Launch.launch`` rebuilds
    the struct field by field, ~10 us, holding the GIL). The same function, arguments and bounds as ``wp.launch``
    per chunk, so the same results; otherwise (other Warp versions, block launches, a CPU graph capture) each
    chunk's ``wp.Launch.launch``."""
    (a0, b0) = bounds[0]
    first = wp.launch(kernel, dim=b0 - a0, inputs=[*inputs, a0], device=device, record_cmd=True)
    if (_build_cpu_args_structs is None or getattr(first, "block_dim", 1) > 1 or getattr(first, "adjoint", False)
            or _get_apic_capture_for_device(device) is not None):
        return [command.launch for command in chunk_launches(kernel, inputs, device, bounds)], None
    args0, _ = _build_cpu_args_structs(first.kernel, first.hooks, first.params, False)
    start_field = args0._fields_[-1][0]
    forward = first.hooks.forward
    calls: list[Callable[[], None]] = []
    for a, b in bounds:
        args = type(args0).from_buffer_copy(args0)
        setattr(args, start_field, a)
        calls.append(functools.partial(forward, ctypes.byref(launch_bounds_t(b - a)), ctypes.byref(args)))
    return calls, first


def _arg_key(value: Any) -> Any:
    """What a launch argument contributes to its packed bytes: for an array its type, dtype, data and gradient
    pointers, shape and strides (the array struct is made of nothing else); for a number, a Warp scalar or a Warp
    vector, matrix or transform its type and value. Raises TypeError for anything else (a struct, say), which is
    then packed afresh at every launch."""
    if isinstance(value, wp.array):
        grad = value.grad
        return (type(value), value.dtype, value.ptr, None if grad is None else grad.ptr, value.shape,
                value.strides)
    # numbers by their bits, not by ==: 0.0 == -0.0 but they pack differently
    if type(value) in (int, bool):
        return (type(value), value)
    if type(value) is float:
        return (float, value.hex())
    if isinstance(value, np.generic):
        return (type(value), value.tobytes())
    if isinstance(value, ctypes.Array):  # Warp's vector, matrix, quaternion and transform values
        return (type(value), bytes(value))
    if type(value) in _WARP_SCALARS:
        inner = value.value
        return (type(value), inner.hex() if isinstance(inner, float) else inner)
    raise TypeError(f"launch argument of type {type(value).__name__} is not compared by value")


#: Warp's scalar classes (wp.float32(1.0) and the like), compared by their ``value``.
_WARP_SCALARS = frozenset(getattr(wp, name) for name in ("int8", "uint8", "int16", "uint16", "int32", "uint32",
                                                          "int64", "uint64", "float16", "float32", "float64")
                          if hasattr(wp, name))


class LaunchPlans:
    """Recently packed CPU launches, reused while the arguments pack to the same bytes.

    Packing a launch's arguments costs some 50-100 us of Python for a kernel of 20-40 arguments (more than many
    kernels of a small sensor take to run); a frame of a sensor makes the same launches on the same scratch every
    time. A plan is keyed by the kernel, the chunk bounds and every argument's :func:`_arg_key` (an array by its
    pointers, shape and strides: exactly what its packed struct holds, so a reused plan passes the same bytes as a
    fresh packing; no reference to an array is kept) and is valid while the kernel's module stays the loaded one.
    At most ``PER_KERNEL`` plans per kernel (least recently used dropped). Only with the Warp versions whose CPU
    argument structs :func:`chunk_calls` uses; otherwise every launch packs."""

    PER_KERNEL = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plans: dict[Any, dict[Any, tuple[Any, list[Callable[[], None]]]]] = {}

    def calls(self, kernel: Any, loaded: Any, inputs: Sequence[Any], device: wp.context.Device,
              bounds: Sequence[tuple[int, int]]) -> tuple[list[Callable[[], None]], Any]:
        """The chunk calls of ``kernel`` over ``inputs`` + ``start`` for ``bounds`` (``loaded``: its loaded
        module, :func:`load_module`) and what to hold until they ran (:func:`chunk_calls`)."""
        try:
            key = (tuple(bounds), tuple(_arg_key(a) for a in inputs))
            hash(key)
        except TypeError:
            key = None
        if key is not None:
            with self._lock:
                per_kernel = self._plans.get(kernel)
                plan = per_kernel.pop(key, None) if per_kernel is not None else None
                if plan is not None and plan[0] is loaded:
                    per_kernel[key] = plan  # most recently used last
                    return plan[1], None
        calls, packed = chunk_calls(kernel, inputs, device, bounds)
        if key is not None and packed is not None:
            with self._lock:
                per_kernel = self._plans.setdefault(kernel, {})
                per_kernel[key] = (loaded, calls)  # the calls' structs hold copies of the argument bytes
                while len(per_kernel) > self.PER_KERNEL:
                    per_kernel.pop(next(iter(per_kernel)))
        return calls, packed


_launch_plans = LaunchPlans()


class _ChunkJob:
    """The chunk calls of one launch, taken in order from a shared counter by every thread that works on it."""

    def __init__(self, calls: Sequence[Callable[[], None]]) -> None:
        self.calls = calls
        self.n = len(calls)
        self._next = itertools.count()  # next() on a count is atomic under the GIL
        self._finished = itertools.count(1)
        self.done = threading.Event()
        self.error: BaseException | None = None

    def work(self) -> None:
        """Run chunks until none is left (a thread that arrives late runs none)."""
        while True:
            i = next(self._next)
            if i >= self.n:
                return
            try:
                self.calls[i]()
            except BaseException as exc:  # re-raised in the launching thread
                if self.error is None:
                    self.error = exc
            if next(self._finished) == self.n:
                self.done.set()


class LaunchThreads:
    """Persistent daemon threads that run CPU launch chunks.

    A launch over T threads wakes at most T - 1 of them (one queue entry each), works on its own chunks in the
    calling thread, and returns when every chunk has finished, whoever ran it: one wake-up per thread per launch
    instead of one task per chunk, and never a wait for a thread that is busy elsewhere (several threads may
    launch at once; a late thread finds the chunks taken). A forked child starts with none (they are made again
    on its first launch)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[_ChunkJob] = queue.SimpleQueue()
        self._count = 0

    def run(self, calls: Sequence[Callable[[], None]], nthreads: int) -> None:
        """Run ``calls`` on up to ``nthreads`` threads, the calling one included; the first exception of a chunk
        is raised here after every chunk finished."""
        job = _ChunkJob(calls)
        helpers = min(nthreads - 1, job.n - 1)
        if helpers > 0:
            self._start(helpers)
            for _ in range(helpers):
                self._queue.put(job)
        job.work()
        job.done.wait()
        if job.error is not None:
            raise job.error

    def _start(self, n: int) -> None:
        with self._lock:
            while self._count < n:
                threading.Thread(target=self._serve, name=f"oceansim-launch-{self._count}", daemon=True).start()
                self._count += 1

    def _serve(self) -> None:
        while True:
            self._queue.get().work()

    def reset_after_fork(self) -> None:
        """In a forked child: no thread of the parent exists there; start afresh."""
        self._lock = threading.Lock()
        self._queue = queue.SimpleQueue()
        self._count = 0


_launch_threads = LaunchThreads()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_launch_threads.reset_after_fork)


#: The memory controller files of this process's cgroup as a container sees them (its own cgroup mounted at
#: /sys/fs/cgroup): (limit, usage, stat, the stat line of reclaimable page cache) for cgroup v2, then v1.
CGROUP_MEMORY_FILES = (
    ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory.stat", "inactive_file"),
    ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes",
     "/sys/fs/cgroup/memory/memory.stat", "total_inactive_file"),
)


#: The CGROUP_MEMORY_FILES for which no limit was found (checked once: a process's limit is set when it starts).
_cgroup_unlimited: tuple[Any, ...] | None = None


def _cgroup_available_bytes() -> int | None:
    """Bytes this process may still allocate under its cgroup's memory limit (limit - usage + inactive page
    cache, which the kernel reclaims before it kills), or None without a limit. ``/proc/meminfo`` shows the
    host's memory, so in a container (a Ray worker, a Docker job with ``--memory``) a render larger than the
    container's limit would be killed by the OOM killer instead of refused. Without a limit the files are read
    once (some 100 us), not at every check."""
    global _cgroup_unlimited
    if _cgroup_unlimited is CGROUP_MEMORY_FILES:
        return None
    available = _read_cgroup_available_bytes()
    if available is None:
        _cgroup_unlimited = CGROUP_MEMORY_FILES
    return available


def _read_cgroup_available_bytes() -> int | None:
    """:func:`_cgroup_available_bytes` read from the files."""
    for limit_path, usage_path, stat_path, cache_key in CGROUP_MEMORY_FILES:
        try:
            with open(limit_path, encoding="ascii") as fh:
                text = fh.read().strip()
            if text == "max":
                return None
            limit = int(text)
            if limit >= 1 << 60:  # v1's "no limit" (a page-rounded 2^63 - 1)
                return None
            with open(usage_path, encoding="ascii") as fh:
                usage = int(fh.read().strip())
            cache = 0
            with open(stat_path, encoding="ascii") as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == cache_key:
                        cache = int(value)
                        break
        except (OSError, ValueError):
            continue
        return max(0, limit - usage + cache)
    return None


def available_memory_bytes(device: Any) -> int:
    """Free memory on ``device`` (GPU free memory, or for the CPU the host's available RAM, at most what the
    process's cgroup memory limit still allows)."""
    init_warp()
    dev = wp.get_device(device)
    if dev.is_cuda:
        return int(getattr(dev, "free_memory", 0) or dev.total_memory)
    host = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    host = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if host is None:
        host = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    cgroup = _cgroup_available_bytes()
    return host if cgroup is None else min(host, cgroup)


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
