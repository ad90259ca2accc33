"""The one exception family of oceansim_py.

Every error the package raises on purpose is an :class:`OceanSimError`. Messages name the file, prim or
field at fault and say what to do about it.
"""

from __future__ import annotations


class OceanSimError(Exception):
    """Base class of every error oceansim_py raises on purpose."""


class SceneError(OceanSimError):
    """A scene file or scene graph is unusable (missing file, malformed USD, bad geometry)."""


class ConfigError(OceanSimError, ValueError):
    """A configuration value, YAML file, pose or request is invalid or would not fit in memory."""


class DatasetError(OceanSimError):
    """A dataset on disk is inconsistent, incomplete or cannot be written."""


class DatasetIndexError(DatasetError, IndexError):
    """A frame or sample index outside a dataset; also an ``IndexError``, as sequences raise."""
