"""Exporting datasets to ROS 2 (rosbag2 / MCAP) and streaming them to the Rerun viewer (optional extras)."""

from oceansim_py.export.bag import ExportSummary, ExportWarning, export_dataset

__all__ = ["ExportSummary", "ExportWarning", "export_dataset"]
