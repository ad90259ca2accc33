"""Batch dataset generation (rigs, shards, resume, local and Ray executors) and loaders."""

from oceansim_py.dataset.loader import DatasetReader, TorchDataset, load

__all__ = ["DatasetReader", "TorchDataset", "load"]
