"""Reading a generated dataset: frames as numpy dicts, and a PyTorch map-style ``Dataset`` (torch optional).

Layout (see README): ``manifest.json`` and folders ``shard_NNNNN/<sensor>/``. Array products are one file per
sample, ``<product>_<sample:06d>.npy`` (float32/complex64/int32 raw data) or ``.png`` (8-bit views); tabular
sensors (navigation, DVL) write ``samples.csv`` per shard with one row per sample (columns ``sample``, ``time``,
then the measurements). A frame is one tick of the rig clock; each sensor contributes its most recent sample
at or before the tick's time (sensors at the tick rate contribute exactly the tick's sample).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from oceansim_py.dataset.manifest import read_manifest, validate_manifest
from oceansim_py.dataset.shards import read_table, shard_name
from oceansim_py.errors import DatasetError

TABLE_FILE = "samples.csv"


class DatasetReader:
    """A dataset folder opened for reading (see module docstring). ``len()`` is the number of frames."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        manifest = read_manifest(self.path)
        if manifest is None:
            raise DatasetError(f"{self.path}: no manifest.json; not an oceansim_py dataset")
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
        self._frames = sum(rec["frames"] for rec in manifest["shards"])
        self._tables: dict[tuple[str, int], dict[str, np.ndarray]] = {}

    def __len__(self) -> int:
        return self._frames

    def num_samples(self, sensor: str) -> int:
        return len(self._sample_shard[self._check_sensor(sensor)])

    def _check_sensor(self, sensor: str) -> str:
        if sensor not in self.sensors:
            raise DatasetError(f"{self.path}: no sensor {sensor!r}; sensors are {sorted(self.sensors)}")
        return sensor

    def sample(self, sensor: str, index: int) -> dict[str, Any]:
        """Every product of sample ``index`` of ``sensor``: arrays, plus ``sample`` and ``time``."""
        self._check_sensor(sensor)
        shard = self._sample_shard[sensor].get(index)
        if shard is None:
            raise DatasetError(f"{self.path}: sensor {sensor!r} has no sample {index} in the complete shards")
        folder = self.path / shard_name(shard) / sensor
        rate = float(self.sensors[sensor]["rate_hz"])
        out: dict[str, Any] = {"sample": index, "time": self.start_time + index / rate}
        table_path = folder / TABLE_FILE
        if table_path.is_file():
            key = (sensor, shard)
            if key not in self._tables:
                self._tables[key] = read_table(table_path)
            table = self._tables[key]
            rows = np.nonzero(table["sample"] == index)[0]
            if rows.size:
                for col, values in table.items():
                    if col not in ("sample", "time"):
                        out[col] = values[rows[0]]
        for f in sorted(folder.glob(f"*_{index:06d}.*")):
            product = f.name[: -len(f"_{index:06d}{f.suffix}")]
            if f.suffix == ".npy":
                out[product] = np.load(f)
            elif f.suffix == ".png":
                import imageio.v3 as iio

                out[product] = iio.imread(f)
        return out

    def samples(self, sensor: str) -> Iterator[dict[str, Any]]:
        """Every sample of ``sensor`` in order."""
        for m in sorted(self._sample_shard[self._check_sensor(sensor)]):
            yield self.sample(sensor, m)

    def frame(self, k: int) -> dict[str, Any]:
        """Frame ``k`` (a tick): ``{"frame", "time", <sensor>: sample dict or None}``."""
        if not 0 <= k < len(self):
            raise IndexError(f"frame {k} out of range 0..{len(self) - 1}")
        t = self.start_time + k / self.tick_rate
        out: dict[str, Any] = {"frame": k, "time": t}
        for name, meta in self.sensors.items():
            m = math.floor(k * float(meta["rate_hz"]) / self.tick_rate + 1e-9)
            out[name] = self.sample(name, m) if m in self._sample_shard[name] else None
        return out

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for k in range(len(self)):
            yield self.frame(k)


def load(path: str | Path) -> DatasetReader:
    """Open a dataset folder written by ``oceansim-py generate``."""
    return DatasetReader(path)


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
