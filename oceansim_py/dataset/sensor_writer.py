"""How the dataset generator builds, renders and writes one sensor of a rig, for every kind alike: the kind's
:class:`~oceansim_py.sensors.registry.SensorKind` says how to build and render it and what each product is.

``render`` takes a batch of sample times and world sensor poses and returns the rig's products as numpy arrays
with a leading batch axis, each in its schema dtype; ``write`` stores them in the shard: array products as
``<product>_<sample:06d>.npy`` (``.npz`` with ``compress``), image products as ``.png``, and table products as
rows of the shard's ``samples.csv`` for that sensor. The sample index keys the sensor's noise (its frame index),
so a sample renders the same wherever and whenever it is rendered.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from oceansim_py.dataset.loader import TABLE_FILE
from oceansim_py.dataset.shards import PartialShard, save_npz, write_table
from oceansim_py.io.images import save_npy, save_png
from oceansim_py.sensors.registry import ARRAY, IMAGE, TABLE, Batch, get


class SensorWriter:
    """One sensor of the rig (``spec``: a :class:`~oceansim_py.dataset.rig.SensorSpec`) with its config (the
    rig's ``seed`` unless the config sets its own), the sensor built on ``device``, and the table rows of the
    shard being written."""

    def __init__(self, spec: Any, seed: int, device: Any, compress: bool = False) -> None:
        self.spec = spec
        self.kind = get(spec.type)
        #: write array products as compressed ``.npz`` (lossless) instead of ``.npy``
        self.compress = bool(compress)
        cfg = dict(spec.config)
        self.config = self.kind.make_config(cfg, f"sensor {spec.name}")
        if "seed" in {f.name for f in dataclasses.fields(self.config)} and "seed" not in cfg:
            self.config = self.config.replace(seed=int(seed))
        self.seed = int(seed)
        self.device = device
        if self.kind.check is not None:
            self.kind.check(self.config, tuple(spec.products), f"sensor {spec.name}")
        self.sensor = self.kind.make_sensor(self.config, device, spec.sensor_id)
        self._rows: list[dict[str, Any]] = []
        self._mounted: tuple[Any, Any] | None = None     # (vehicle trajectory, sensor trajectory)
        #: product -> {"shape", "dtype"} of one sample of each array/image product written so far
        self.written_specs: dict[str, dict[str, Any]] = {}

    def sensor_trajectory(self, trajectory: Any) -> Any:
        """The sensor's own trajectory (vehicle * mount), built once per vehicle trajectory."""
        if self._mounted is None or self._mounted[0] is not trajectory:
            self._mounted = (trajectory, trajectory.mounted(np.asarray(self.spec.mount)))
        return self._mounted[1]

    def render(self, scene: Any, trajectory: Any, times: np.ndarray, poses: np.ndarray,
               first_sample: int) -> dict[str, np.ndarray]:
        """Products of samples ``first_sample ..`` at ``times`` (s) and world sensor ``poses`` (B, 7)."""
        own = self.sensor_trajectory(trajectory) if self.kind.uses_trajectory else None
        result = self.kind.render(self.sensor, Batch(scene, poses, times, first_sample, own,
                                                               rate_hz=self.spec.rate_hz))
        return self.kind.products_of(result, self.config, self.spec.products)

    def manifest_entry(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(),
                "products_format": {p: self.file_format(p) for p in self.spec.products},
                "arrays": {p: self.array_spec(p) for p in self.spec.products}, **self.kind.metadata(self.config)}

    def file_format(self, product: str) -> str:
        """How ``product`` is stored: ``npy``, ``npz`` (compressed npy), ``png`` or ``table``."""
        storage = self.kind.product(product).storage
        return "npz" if storage == ARRAY and self.compress else storage

    def array_spec(self, product: str) -> dict[str, Any]:
        """What one sample of ``product`` is: unit, file format, and (tables) its shape; the writer adds the
        shape and dtype of array files when it writes the first one."""
        p = self.kind.product(product)
        spec: dict[str, Any] = {"unit": p.unit, "format": self.file_format(product)}
        if p.storage == TABLE:
            spec["shape"] = list(p.shape_for(self.config))
        return spec

    def write(self, shard: PartialShard, products: dict[str, np.ndarray], times: np.ndarray,
              first_sample: int) -> None:
        """Write a rendered batch: one file per sample and array/image product (each recorded in the shard's
        journal before it is created), table rows kept for ``finish``."""
        sensor = self.spec.name
        storage = self.kind.products
        for i in range(times.shape[0]):
            m = first_sample + i
            row: dict[str, Any] = {"sample": m, "time": float(times[i])}
            for name in self.spec.products:
                kind = storage[name]
                if kind != TABLE and name not in self.written_specs:
                    sample = np.asarray(products[name][i])
                    self.written_specs[name] = {"shape": list(sample.shape), "dtype": str(sample.dtype)}
                if kind == ARRAY and self.compress:
                    save_npz(shard.file(f"{sensor}/{name}_{m:06d}.npz"), name, products[name][i])
                elif kind == ARRAY:
                    save_npy(shard.file(f"{sensor}/{name}_{m:06d}.npy"), products[name][i])
                elif kind == IMAGE:
                    save_png(shard.file(f"{sensor}/{name}_{m:06d}.png"), products[name][i])
                else:
                    value = np.asarray(products[name][i])
                    if value.ndim == 0:
                        row[name] = value
                    else:
                        for j, v in enumerate(value.reshape(-1)):
                            row[f"{name}_{j}"] = v
            if len(row) > 2:
                self._rows.append(row)

    def finish(self, shard: PartialShard) -> None:
        """Write the shard's table (if the sensor has table products) and reset."""
        if self._rows:
            cols = {k: np.array([r[k] for r in self._rows]) for k in self._rows[0]}
            write_table(shard.file(f"{self.spec.name}/{TABLE_FILE}"), cols)
        self._rows = []
