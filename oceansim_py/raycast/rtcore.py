"""The Embree 4 C API through ctypes, from the shared library the ``embreex`` wheel ships.

``embreex``'s Python API casts one ray at a time while holding the GIL and has no instancing, so the engine
calls Embree's C API itself: scene construction here (ctypes), the packet cast ``rtcIntersect8`` from a Warp CPU
kernel (``oceansim_py.kernels.embree_cast``), which gets the function's address. Only what the engine uses is
bound. Enum values and struct layouts are those of Embree 4's public headers (``rtcore_*.h``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import threading
from pathlib import Path

from oceansim_py.errors import ConfigError

#: What to install for the Embree backend.
INSTALL_HINT = "pip install 'oceansim_py[embree]'"

RTC_INVALID_GEOMETRY_ID = 0xFFFFFFFF
RTC_GEOMETRY_TYPE_TRIANGLE = 0
RTC_GEOMETRY_TYPE_INSTANCE = 121
RTC_BUFFER_TYPE_INDEX = 0
RTC_BUFFER_TYPE_VERTEX = 1
RTC_FORMAT_UINT3 = 0x5003
RTC_FORMAT_FLOAT3 = 0x9003
RTC_FORMAT_FLOAT4X4_COLUMN_MAJOR = 0x9244
RTC_BUILD_QUALITY_LOW = 0
RTC_BUILD_QUALITY_MEDIUM = 1
RTC_BUILD_QUALITY_HIGH = 2
RTC_BUILD_QUALITY_REFIT = 3
RTC_SCENE_FLAG_DYNAMIC = 1 << 0
RTC_SCENE_FLAG_ROBUST = 1 << 2
RTC_DEVICE_PROPERTY_VERSION = 0

_ERRORS = {0: "none", 1: "unknown", 2: "invalid argument", 3: "invalid operation", 4: "out of memory",
           5: "unsupported CPU", 6: "cancelled", 7: "level zero raytracing support missing"}

_lock = threading.Lock()
_library: "EmbreeLibrary | None" = None
_load_error: str | None = None


def _candidate_paths() -> list[str]:
    """Where the embreex wheel puts ``libembree4`` (auditwheel ``embreex.libs``, delocate ``.dylibs``, the
    package folder itself on Windows), then the system's."""
    import embreex  # noqa: F401 - raises ImportError when the extra is missing

    pkg = Path(embreex.__file__).resolve().parent
    found: list[str] = []
    for folder in (pkg.parent / "embreex.libs", pkg / ".dylibs", pkg, pkg.parent / "embreex.libs"):
        for pattern in ("libembree4*.so*", "libembree4*.dylib", "embree4*.dll"):
            found += sorted(glob.glob(str(folder / pattern)))
    system = ctypes.util.find_library("embree4")
    if system:
        found.append(system)
    return list(dict.fromkeys(found))


class EmbreeLibrary:
    """The loaded Embree library: a device, typed functions and the address of ``rtcIntersect8``."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)
        vp, u32, sz = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t
        sig = {
            "rtcNewDevice": (vp, [ctypes.c_char_p]),
            "rtcGetDeviceError": (ctypes.c_int, [vp]),
            "rtcGetDeviceProperty": (ctypes.c_ssize_t, [vp, ctypes.c_int]),
            "rtcNewScene": (vp, [vp]),
            "rtcSetSceneFlags": (None, [vp, ctypes.c_int]),
            "rtcSetSceneBuildQuality": (None, [vp, ctypes.c_int]),
            "rtcCommitScene": (None, [vp]),
            "rtcReleaseScene": (None, [vp]),
            "rtcNewGeometry": (vp, [vp, ctypes.c_int]),
            "rtcSetNewGeometryBuffer": (vp, [vp, ctypes.c_int, u32, ctypes.c_int, sz, sz]),
            "rtcSetGeometryBuildQuality": (None, [vp, ctypes.c_int]),
            "rtcUpdateGeometryBuffer": (None, [vp, ctypes.c_int, u32]),
            "rtcSetGeometryInstancedScene": (None, [vp, vp]),
            "rtcSetGeometryTransform": (None, [vp, u32, ctypes.c_int, vp]),
            "rtcCommitGeometry": (None, [vp]),
            "rtcAttachGeometryByID": (None, [vp, vp, u32]),
            "rtcReleaseGeometry": (None, [vp]),
        }
        for name, (res, args) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        self.lib = lib
        self.path = path
        self.device = lib.rtcNewDevice(None)
        if not self.device:
            raise ConfigError(f"Embree ({path}) could not create a device (unsupported CPU?)")
        v = int(lib.rtcGetDeviceProperty(self.device, RTC_DEVICE_PROPERTY_VERSION))
        self.version = f"{v // 10000}.{v // 100 % 100}.{v % 100}"
        if v // 10000 != 4:
            raise ConfigError(f"{path} is Embree {self.version}; the Embree backend needs Embree 4 ({INSTALL_HINT})")
        self.intersect8_address = int(ctypes.cast(lib.rtcIntersect8, ctypes.c_void_p).value)

    def check(self, what: str) -> None:
        """Raise ``ConfigError`` when the device reports an error after ``what``."""
        code = int(self.lib.rtcGetDeviceError(self.device))
        if code:
            raise ConfigError(f"Embree failed to {what}: {_ERRORS.get(code, code)}")


MISSING = f"the Embree ray-cast backend needs the optional package embreex: {INSTALL_HINT}"


def _embreex_importable() -> bool:
    """Whether ``import embreex`` succeeds now (a dictionary look-up once imported)."""
    try:
        import embreex  # noqa: F401
    except ImportError:
        return False
    return True


def embree_library() -> EmbreeLibrary:
    """The process-wide Embree library (loaded once); ``ConfigError`` naming the extra when it is missing.

    Whether ``embreex`` imports is asked on every call, not remembered: a process that cannot import it (not
    installed, or blocked with ``sys.modules["embreex"] = None``) gets the error even after an earlier load, and
    one that can import it again (the package installed, the block lifted) gets the library."""
    global _library, _load_error
    if not _embreex_importable():
        raise ConfigError(MISSING)
    with _lock:
        if _library is not None:
            return _library
        if _load_error is None:
            try:
                paths = _candidate_paths()
            except ImportError:
                raise ConfigError(MISSING) from None
            else:
                errors = []
                for p in paths:
                    try:
                        _library = EmbreeLibrary(p)
                        return _library
                    except OSError as exc:
                        errors.append(f"{p}: {exc}")
                _load_error = (f"embreex is installed but its Embree 4 library could not be loaded "
                               f"({'; '.join(errors) or 'no libembree4 found next to it'}); reinstall with "
                               f"{INSTALL_HINT}")
        raise ConfigError(_load_error)


def embree_available() -> bool:
    """Whether the Embree backend can run here (embreex installed and its library loads)."""
    try:
        embree_library()
    except ConfigError:
        return False
    return True
