"""Logs: validated long-format event tables, one row per event.

Readers and writers handle JSONL, CSV and Parquet; each log kind has a
``validate_*`` function raising :class:`~thatchlab.core.errors.LogValidationError`
with the file, row, column and what was expected. Logs are never modified in
place. Readers return their rows sorted by ``ts`` (stably: equal times keep
their file order), with ``attrs["reordered"]`` counting the rows that moved,
and warn when a file was not in time order (:func:`sort_by_time`).

========================  ==================================================  ====================
log                       validate / read                                     engine
========================  ==================================================  ====================
interaction log           ``validate_interaction_log`` / ``read_...``         prediction, behavior
memory log                ``validate_memory_log`` / ``read_...``              belief
recall log                ``validate_recall_log`` / ``read_...``              calibration
event and recall streams  ``validate_event_log``, ``validate_recall_stream``  anticipation
========================  ==================================================  ====================

Production files are logs too: :func:`signals_from_store` reads a thatch
store's provenance as a signal log, and :func:`read_ai_memory` an ai-memory
database's memories, shadow observations and recall ledger. The agent hosts'
own records (Claude Code transcripts, opencode storage) and other systems'
exports (omi, ai-memory, mnemo) are read by :mod:`thatchlab.logs.ingest`.
"""

from thatchlab.logs import ingest
from thatchlab.logs._core import log_format, read_table, write_table
from thatchlab.logs._order import sort_by_time
from thatchlab.logs._validate import LogSpec, RowRule, validate_frame
from thatchlab.logs.ai_memory import (
    LEDGER_COLUMNS,
    AiMemoryTables,
    read_ai_memory,
    read_memories,
    read_recall_observations,
    read_shadow_observations,
)
from thatchlab.logs.interaction import (
    INTERACTION_COLUMNS,
    INTERACTION_KINDS,
    LOGGED_COLUMNS,
    applied,
    mark_checked_args,
    read_interaction_log,
    signals_from_store,
    validate_interaction_log,
    write_interaction_log,
)
from thatchlab.logs.memory import (
    MEMORY_LOG_COLUMNS,
    read_memory_log,
    validate_memory_log,
    write_memory_log,
)
from thatchlab.logs.recall import RECALL_COLUMNS, read_recall_log, validate_recall_log
from thatchlab.logs.streams import (
    read_event_log,
    read_recall_stream,
    validate_event_log,
    validate_recall_stream,
    write_stream,
)

__all__ = ["ingest", "INTERACTION_COLUMNS", "INTERACTION_KINDS", "LOGGED_COLUMNS", "applied", "mark_checked_args",
           "read_interaction_log", "signals_from_store",
           "validate_interaction_log", "write_interaction_log",
           "MEMORY_LOG_COLUMNS", "read_memory_log", "validate_memory_log", "write_memory_log",
           "RECALL_COLUMNS", "read_recall_log", "validate_recall_log",
           "read_event_log", "read_recall_stream", "validate_event_log", "validate_recall_stream",
           "write_stream", "AiMemoryTables", "read_ai_memory", "read_memories",
           "read_shadow_observations", "read_recall_observations", "LEDGER_COLUMNS", "LogSpec", "RowRule", "log_format", "read_table", "validate_frame", "write_table",
           "sort_by_time"]
