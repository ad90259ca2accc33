"""Reading a generated dataset: frames as numpy dicts, and a PyTorch map-style ``Dataset`` (torch optional).

Layout (see README): ``manifest.json`` and folders ``shard_NNNNN/<sensor>/``. Array products are one file per
sample, ``<product>_<sample:06d>.npy`` (float32/complex64/int32 raw data) or ``.png`` (8-bit views); tabular
sensors (navigation, DVL) write ``samples.csv`` per shard with one row per sample (columns ``sample``, ``time``,
then the measurements). A frame is one tick of the rig clock; each sensor contributes its most recent sample
at or before the tick's time (sensors at the tick rate contribute exactly the tick's sample).
"""

from __future__ import annotations

import math
import operator
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from oceansim_py.dataset.manifest import require_manifest, validate_manifest
from oceansim_py.dataset.shards import read_table, shard_name
from oceansim_py.errors import ConfigError, DatasetError, DatasetIndexError

TABLE_FILE = "samples.csv"


class DatasetReader:
    """A dataset folder opened for reading (see module docstring). ``len(reader)`` is the number of frames (the
    ticks of its complete shards: every tick of a complete run; of an interrupted one the ticks present, in order,
    see :meth:`ticks`); ``reader[k]`` is frame ``k`` (negative counts from the end), ``reader[a:b:c]`` a list of
    frames; an index out of range raises :class:`~oceansim_py.errors.DatasetIndexError` (a ``DatasetError`` and an ``IndexError``).

    ``verify=True`` reads every file once at open and checks it against its shard's SHA-256 (a full read of the
    dataset, so it is off by default; ``oceansim-py verify DIR`` does the same from the shell). Without it the
    reader still checks at open that every listed shard folder is there, and refuses symlinks that leave the
    dataset folder, files that are missing, and files it cannot parse, with a ``DatasetError``.
    """

    def __init__(self, path: str | Path, verify: bool = False) -> None:
        self.path = Path(path)
        manifest = require_manifest(self.path)
        problems = validate_manifest(manifest)
        if problems:
            raise DatasetError(f"{self.path / 'manifest.json'}: invalid manifest: {'; '.join(problems)}")
        self.manifest = manifest
        self.sensors: dict[str, dict[str, Any]] = manifest["sensors"]
        self.tick_rate = float(manifest["tick_rate_hz"])
        self.start_time = float(manifest["start_time"])
        # sample index -> shard index, per sensor
        self._sample_shard: dict[str, dict[int, int]] = {name: {} for name in self.sensors}
        for rec in manifest["shards"]:
            for name, (lo, hi) in rec["samples"].items():
                for m in range(lo, hi):
                    self._sample_shard[name][m] = rec["index"]
        # the frames are the ticks of the complete shards, in order: all of the run's once it is complete; of an
        # interrupted run (a Ray run completes shards out of order) those present, gaps skipped
        self._spans = sorted((int(a), int(b)) for a, b in (rec["ticks"] for rec in manifest["shards"]))
        self._span_firsts = np.cumsum([0] + [b - a for a, b in self._spans])   # frame index of each span's first
        self._frames = int(self._span_firsts[-1])
        self._tables: dict[tuple[str, int], dict[str, np.ndarray]] = {}
        self._renames: dict[str, dict[str, str]] = {}
        self._root = self.path.resolve()
        for rec in manifest["shards"]:
            folder = self.path / rec["name"]
            if folder.is_symlink() or not folder.is_dir():
                what = "a symlink" if folder.is_symlink() else "missing"
                raise DatasetError(f"{folder}: listed in the manifest but {what}; restore it (run 'oceansim-py verify {self.path}' for every problem)")
        if verify:
            from oceansim_py.dataset.verify import verify_dataset

            problems = verify_dataset(self.path)
            if problems:
                raise DatasetError(f"{self.path}: {len(problems)} problem(s): " + "; ".join(problems))

    def __len__(self) -> int:
        return self._frames

    def __getitem__(self, key: int | slice) -> Any:
        """Frame ``key`` (negative from the end), or a list of frames for a slice."""
        if isinstance(key, slice):
            return [self.frame(k) for k in range(*key.indices(len(self)))]
        k = _integer(key, "dataset indices", " or slices")
        if not -len(self) <= k < len(self):
            raise self._no_frame(k, f" (or -{len(self)}..-1 from the end)")
        return self.frame(k % len(self))

    def _no_frame(self, k: int, negative: str = "") -> DatasetIndexError:
        n = len(self)
        valid = f"frames 0..{n - 1}{negative}" if n else "no frame (no shard is complete)"
        return DatasetIndexError(f"{self.path}: no frame {k}; the dataset has {valid}")

    def _file(self, path: Path) -> Path:
        """``path`` if it is a regular file inside the dataset folder, else a ``DatasetError``."""
        if path.is_symlink() and not path.resolve().is_relative_to(self._root):
            raise DatasetError(f"{path}: a symlink out of the dataset folder; refused (a dataset holds its own files)")
        if not path.is_file():
            raise DatasetError(f"{path}: missing; run 'oceansim-py verify {self.path}' for every problem")
        return path

    def num_samples(self, sensor: str) -> int:
        return len(self._sample_shard[self._check_sensor(sensor)])

    def _check_sensor(self, sensor: str) -> str:
        if sensor not in self.sensors:
            raise DatasetError(f"{self.path}: no sensor {sensor!r}; sensors are {sorted(self.sensors)}")
        return sensor

    def sample(self, sensor: str, index: int) -> dict[str, Any]:
        """Every product of sample ``index`` of ``sensor``: arrays, plus ``sample`` and ``time``. A renamed product
        is there under its current and its former name (:meth:`_renamed_products`)."""
        self._check_sensor(sensor)
        index = _integer(index, "sample indices")
        shard = self._sample_shard[sensor].get(index)
        if shard is None:
            raise DatasetIndexError(f"{self.path}: sensor {sensor!r} has no sample {index} in the complete shards "
                                    f"({self._sample_span(sensor)})")
        folder = self.path / shard_name(shard) / sensor
        rate = float(self.sensors[sensor]["rate_hz"])
        out: dict[str, Any] = {"sample": index, "time": self.start_time + index / rate}
        formats: dict[str, str] = self.sensors[sensor].get("products_format", {})
        if "table" in formats.values():
            key = (sensor, shard)
            if key not in self._tables:
                self._tables[key] = read_table(self._file(folder / TABLE_FILE))
            table = self._tables[key]
            rows = np.nonzero(table["sample"] == index)[0]
            if not rows.size:
                raise DatasetError(f"{folder / TABLE_FILE}: no row for sample {index}; the file is truncated")
            arrays = self.sensors[sensor].get("arrays", {})
            for product, kind in formats.items():
                if kind == "table":
                    out[product] = _table_value(table, rows[0], product, arrays.get(product, {}).get("shape"),
                                                folder / TABLE_FILE)
        for product, kind in formats.items():
            if kind in ("npy", "npz", "png"):
                out[product] = read_array(self._file(folder / f"{product}_{index:06d}.{kind}"))
        for old, new in self._renamed_products(sensor).items():   # either name reads a renamed product
            if new in out and old not in out:
                out[old] = out[new]
            elif old in out and new not in out:
                out[new] = out[old]
        return out

    def _renamed_products(self, sensor: str) -> dict[str, str]:
        """Former product name -> current name for ``sensor``'s kind (e.g. a single-beam sonar's ``altitude``,
        now ``first_return_range``): a dataset written before a rename reads under the new name, and one written
        after it still under the old one. Empty for a kind this installation does not know."""
        from oceansim_py.sensors.registry import get

        kind = str(self.sensors[sensor].get("type", ""))
        if kind not in self._renames:
            try:
                self._renames[kind] = get(kind).renamed_products()
            except ConfigError:
                self._renames[kind] = {}
        return self._renames[kind]

    def _sample_span(self, sensor: str) -> str:
        """What samples ``sensor`` has, for an error: their count and lowest and highest index."""
        have = self._sample_shard[sensor]
        return f"{len(have)} sample(s), {min(have)}..{max(have)}" if have else "none"

    def samples(self, sensor: str) -> Iterator[dict[str, Any]]:
        """Every sample of ``sensor`` in order."""
        for m in sorted(self._sample_shard[self._check_sensor(sensor)]):
            yield self.sample(sensor, m)

    def ticks(self) -> np.ndarray:
        """The rig tick of every frame (int64, increasing): ``0 .. len - 1`` for a complete run; for an interrupted
        one the ticks of its complete shards (time of frame k: ``start_time + ticks()[k] / tick_rate``)."""
        return np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in self._spans] or
                              [np.zeros(0, dtype=np.int64)])

    def frame(self, k: int) -> dict[str, Any]:
        """Frame ``k`` (0..len - 1; the rig tick :meth:`ticks` ``[k]``, which is ``k`` once the run is complete):
        ``{"frame", "time", <sensor>: sample dict or None}``; a ``TypeError`` for an index that is not an integer."""
        k = _integer(k, "frame indices")
        if not 0 <= k < len(self):
            raise self._no_frame(k)
        span = int(np.searchsorted(self._span_firsts, k, side="right")) - 1
        tick = self._spans[span][0] + k - int(self._span_firsts[span])
        out: dict[str, Any] = {"frame": k, "time": self.start_time + tick / self.tick_rate}
        for name, meta in self.sensors.items():
            m = math.floor(tick * float(meta["rate_hz"]) / self.tick_rate + 1e-9)
            out[name] = self.sample(name, m) if m in self._sample_shard[name] else None
        return out

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for k in range(len(self)):
            yield self.frame(k)


def _integer(key: Any, what: str, alternatives: str = "") -> int:
    """``key`` as an int (Python and NumPy integers); a ``TypeError`` naming ``what`` for anything else (a float
    such as 1.5 or 2.0 is no frame or sample number)."""
    try:
        return operator.index(key)
    except TypeError:
        raise TypeError(f"{what} must be integers{alternatives}, not {type(key).__name__}") from None


def _table_value(table: dict[str, np.ndarray], row: int, product: str, shape: list[int] | None,
                 path: Path) -> Any:
    """One sample of a table product: the scalar of column ``product``, or the columns ``product_0 ..`` as an
    array of the manifest's ``shape`` (flat when the manifest predates shapes)."""
    if product in table:
        return table[product][row]
    cols = []
    while f"{product}_{len(cols)}" in table:
        cols.append(table[f"{product}_{len(cols)}"][row])
    if not cols:
        raise DatasetError(f"{path}: no column for product {product!r}; the file does not match the manifest")
    value = np.array(cols)
    if shape:
        if int(np.prod(shape)) != value.size:
            raise DatasetError(f"{path}: product {product!r} has {value.size} columns, the manifest's shape is "
                               f"{shape}")
        value = value.reshape(shape)
    return value


def read_array(path: Path) -> np.ndarray:
    """One array file of a dataset (.npy, or .png as uint8); an unreadable one is a ``DatasetError``."""
    try:
        if path.suffix == ".png":
            import imageio.v3 as iio

            return np.asarray(iio.imread(path))
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as npz:
                if len(npz.files) != 1:
                    raise ValueError(f"holds {len(npz.files)} arrays, expected 1")
                return npz[npz.files[0]]
        return np.load(path, allow_pickle=False)
    except Exception as exc:  # numpy and imageio raise ValueError, EOFError, OSError, ... for a damaged file
        raise DatasetError(f"{path}: unreadable ({exc}); run 'oceansim-py verify' on the dataset") from exc


def load(path: str | Path, verify: bool = False) -> DatasetReader:
    """Open a dataset folder written by ``oceansim-py generate`` (``verify``: see :class:`DatasetReader`)."""
    return DatasetReader(path, verify=verify)


try:  # torch is optional: TorchDataset is a real torch Dataset when it is installed
    from torch.utils.data import Dataset as _TorchDatasetBase
except ImportError:  # pragma: no cover - exercised where torch is absent
    _TorchDatasetBase = object  # type: ignore[misc,assignment]


class TorchDataset(_TorchDatasetBase):  # type: ignore[misc,valid-type]
    """PyTorch map-style dataset over the frames of a dataset folder. Item ``k``:
    ``{"frame", "time", <sensor>: {product: tensor, ...} or None}``; ``metadata`` holds the manifest's entries
    of the chosen sensors (ranges, bearings, intrinsics, ...). ``sensors`` limits which sensors are returned."""

    def __init__(self, path: str | Path, sensors: list[str] | None = None) -> None:
        if _TorchDatasetBase is object:
            raise DatasetError("TorchDataset needs PyTorch: pip install torch")
        self.reader = DatasetReader(path)
        self.sensor_names = sensors or list(self.reader.sensors)
        for s in self.sensor_names:
            self.reader._check_sensor(s)
        self.metadata = {s: self.reader.sensors[s] for s in self.sensor_names}

    def __len__(self) -> int:
        return len(self.reader)

    def __getitem__(self, k: int) -> dict[str, Any]:
        import torch

        frame = self.reader.frame(k)
        item: dict[str, Any] = {"frame": k, "time": torch.tensor(frame["time"], dtype=torch.float64)}
        for s in self.sensor_names:
            sample = frame[s]
            item[s] = None if sample is None else {key: torch.as_tensor(np.asarray(v)) for key, v in sample.items()}
        return item
