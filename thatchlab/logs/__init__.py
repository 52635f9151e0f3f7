"""Logs: validated long-format event tables, one row per event.

Readers and writers handle JSONL, CSV and Parquet; each log kind has a
``validate_*`` function raising :class:`~thatchlab.errors.LogValidationError`
with the file, row, column and what was expected. Logs are never modified in
place.
"""

from ._core import LogSpec, RowRule, log_format, read_table, validate_frame, write_table

__all__ = ["LogSpec", "RowRule", "log_format", "read_table", "validate_frame", "write_table"]
