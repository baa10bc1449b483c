"""Readers that turn saved runs (ours, the old harness's) into Tasks and Samples."""

from ocllm.formats.saved_run import SavedRecord, SavedRun, load_saved_run

__all__ = ["SavedRecord", "SavedRun", "load_saved_run"]
