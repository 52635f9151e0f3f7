"""Real logs in: production records of the agent hosts, read into thatchlab's logs.

thatch keeps no log of the prompts it saw or the nudges it printed; the
record of a deployment lives in the agent host's own files. Each adapter
here reads one host's or one system's files and returns an
:class:`IngestResult`: the log (``result.log``), every table it made
(``result.tables``) and what it read and left out, by reason (``result.read``,
``result.skipped``). Unknown records and fields are counted, never fatal.

==========================  ==================================================  ==========================
adapter                     reads                                               gives
==========================  ==================================================  ==========================
:func:`claude_code`         Claude Code session transcripts (JSON lines)        interaction log
:func:`opencode`            opencode's ``opencode.db`` and legacy JSON storage  interaction log
:func:`omi_memories`        an omi ``/v3/memories`` export (JSON)               memory log
:func:`ai_memory`           an ai-memory SQLite database                        recall log, observations,
                                                                                recall outcomes
:func:`mnemo_events`        dumps of mnemo's ``mnemo_event`` and recalls        event and recall streams
==========================  ==================================================  ==========================

An ingested interaction log keeps what production answered: each tool
call's reply (``logged_reply``) and each prompt's nudge (``logged_nudge``,
parsed into ``logged_items`` and ``surfaced``), so a replay can be checked
against it (:func:`thatchlab.replay.fidelity`). :func:`redact` makes a log
shareable (prompts and rationales as stable hashes, their vectors in a
lookup table) and :func:`grow` grows a log from a grown source by
``record_id``: rows the source completed are updated in place, new ones
added, none duplicated and none lost.

What never ran stays visible: a tool call the user rejected, that errored or
is still running is a row with its reason in ``skip_reason``
(:data:`SKIP_REASONS`), which a replay skips. Stores are named as thatch
names them (:func:`detect_repo`, :mod:`~thatchlab.logs.ingest._stores`).
"""

from thatchlab.logs.ingest._ai_memory import ai_memory
from thatchlab.logs.ingest._claude_code import claude_code
from thatchlab.logs.ingest._growth import Growth, grow
from thatchlab.logs.ingest._mnemo import mnemo_events
from thatchlab.logs.ingest._nudge import NUDGE_HEADERS, NudgeBlock, NudgeItem, parse_nudges
from thatchlab.logs.ingest._omi import omi_memories
from thatchlab.logs.ingest._opencode import opencode
from thatchlab.logs.ingest._share import redact, redact_text
from thatchlab.logs.ingest._stores import detect_repo, parse_git_url, worktree_main
from thatchlab.logs.ingest._tools import INGEST_COLUMNS, SKIP_REASONS, THATCH_TOOLS, IngestResult

__all__ = ["claude_code", "opencode", "omi_memories", "ai_memory", "mnemo_events", "IngestResult",
           "parse_nudges", "NudgeBlock", "NudgeItem", "NUDGE_HEADERS", "redact", "redact_text", "grow",
           "Growth", "detect_repo", "parse_git_url", "THATCH_TOOLS", "INGEST_COLUMNS", "SKIP_REASONS", "worktree_main"]
