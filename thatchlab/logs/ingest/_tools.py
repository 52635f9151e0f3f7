"""thatch's tool calls as interaction-log rows, whatever host made them.

Every host names thatch's tools its own way (Claude Code ``mcp__thatch__<tool>``,
opencode's plugin ``thatch_<tool>``) but passes the same arguments. This
module maps a tool's name and input to the log's columns and builds the
message rows, so each host adapter only has to find prompts, tool calls,
tool results and the injected nudge text.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from thatchlab.logs.ingest._nudge import extraction_line, parse_nudges
from thatchlab.logs.interaction import INTERACTION_COLUMNS, LOGGED_COLUMNS, validate_interaction_log

__all__ = ["THATCH_TOOLS", "ARG_COLUMNS", "tool_row", "message_row", "finish_log",
           "IngestResult", "INGEST_COLUMNS", "SKIP_REASONS", "mark_not_run", "ContentIds"]

#: thatch's tools, which are also the log kinds of their rows.
THATCH_TOOLS = ("prediction_update", "prediction_query", "prediction_list", "prediction_delete",
                "behavior_codify", "behavior_feedback", "behavior_list", "behavior_delete",
                "prediction_mark_checked")
#: Tool argument → log column (the rest go to ``args`` as JSON: ``prediction_mark_checked``'s
#: ``id_a``, ``id_b`` and ``status``, sysread/thatch src/tool-defs.ts @2ed97f2a).
ARG_COLUMNS = {"matcher": "matcher", "situation": "matcher", "prediction": "statement",
               "behavior": "statement", "statement": "statement", "signal": "signal",
               "rationale": "rationale", "context": "text", "relevant": "relevant", "store": "store"}
#: Columns of an ingested interaction log: the log's own, ``cwd``, then the ingest columns.
INGEST_COLUMNS = tuple(c for c in INTERACTION_COLUMNS if c not in ("propensity", "embedding")) + (
    "cwd",) + LOGGED_COLUMNS
#: ``skip_reason`` texts: why a logged tool call never ran in production.
SKIP_REASONS = {"rejected": "rejected by the user", "error": "tool error", "running": "still running",
                "pending": "pending (never started)", "no_result": "no result recorded"}
_TRUE = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}


@dataclass
class IngestResult:
    """What an adapter read.

    Parameters
    ----------
    log : pandas.DataFrame
        The main log (the interaction log, the memory log, the recall log or
        the event stream, per adapter).
    tables : dict of pandas.DataFrame, default={}
        Every table the adapter produced, by name (``log`` is one of them).
    read : collections.Counter, default=Counter()
        What was read (``files``, ``records``, ``prompts``, ``tool calls``...).
    skipped : collections.Counter, default=Counter()
        What was left out, by reason; nothing left out is ever silent.
    not_run : collections.Counter, default=Counter()
        Tool calls that never ran in production (rejected by the user, an
        error, still running), by reason: they are rows of the log with that
        reason in ``skip_reason``, which a replay skips.
    stripped : collections.Counter, default=Counter()
        What was cut out of prompts because the host, not the user, wrote it
        (IDE context, system reminders, hook output), by kind.
    found : collections.Counter, default=Counter()
        The source's records by kind (a transcript's record types), for
        the message of an ingest that gave no row.
    warnings : list of str, default=[]
        Sentences about guesses the adapter had to make (a store named after
        a folder, say); the command line prints each as a ``warning:`` line.
    """

    log: pd.DataFrame
    tables: dict = field(default_factory=dict)
    read: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)
    not_run: Counter = field(default_factory=Counter)
    stripped: Counter = field(default_factory=Counter)
    found: Counter = field(default_factory=Counter)
    warnings: list = field(default_factory=list)

    def __repr__(self):
        sk = ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped.items())) or "nothing"
        nr = ", ".join(f"{k}: {v}" for k, v in sorted(self.not_run.items())) or "none"
        return (f"IngestResult(rows={len(self.log)}, tables={list(self.tables)}, skipped={{{sk}}}, "
                f"not_run={{{nr}}})")


def _relevant(v):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, str):
        return _TRUE.get(v.strip().lower(), v)
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    return v


def _text_or_none(v):
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)


def tool_row(kind: str, args, *, ts, session, record_id, cwd=None, reply=None) -> dict:
    """The log row of one thatch tool call (``kind`` is the tool's name without the host prefix).

    >>> r = tool_row("behavior_feedback", {"behavior": "run the tests", "relevant": "true",
    ...              "context": "caught a bug", "extra": 1}, ts="2026-01-01T00:00:00Z", session="s",
    ...              record_id="toolu_1", reply='[confirm] "run the tests" confidence=0.58 (1/0)')
    >>> r["statement"], r["relevant"], r["text"], r["args"]
    ('run the tests', True, 'caught a bug', '{"extra": 1}')
    """
    row = {c: None for c in INGEST_COLUMNS}
    row.update(ts=ts, session=session, kind=kind, record_id=record_id, cwd=cwd, logged_reply=reply)
    extra = {}
    for name, value in (args or {}).items() if isinstance(args, dict) else ():
        col = ARG_COLUMNS.get(name)
        if col is None or row[col] is not None:
            extra[name] = value
        elif col == "relevant":
            row[col] = _relevant(value)
        else:
            row[col] = value if isinstance(value, str) or value is None else _text_or_none(value)
    if kind == "prediction_delete" and row["statement"] is None:  # older argument names
        for alt in ("text", "query"):
            if isinstance(extra.get(alt), str):
                row["statement"] = extra.pop(alt)
                break
    if extra:
        row["args"] = json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str)
    return row


def message_row(prompt: str, hook_texts, *, ts, session, record_id, cwd=None, engine=None) -> dict:
    """The log row of one prompt, with the nudge blocks found in ``hook_texts`` parsed back.

    ``hook_texts`` are the texts thatch's prompt hook printed for this prompt
    (anything holding ``[thatch] ``). ``surfaced`` lists the statements of
    every block (only ``engine``'s when given), ``logged_nudge`` the blocks'
    text joined by a blank line and ``logged_items`` one object per item
    (``engine, statement, matcher, confidence, tests``). When thatch's hook
    output was recorded but holds no block, nothing was surfaced: empty
    ``logged_nudge``, ``surfaced`` and ``logged_items``. When none was
    recorded, what production surfaced is unknown: all three null.
    ``logged_extraction`` is the first line of an extraction nudge among the
    hook texts (:func:`~thatchlab.logs.ingest._nudge.extraction_line`), else null.

    >>> row = message_row("fix the flaky test", ["[thatch] After responding, check: ..."], ts="t", session="s",
    ...                   record_id="u1")
    >>> row["logged_nudge"], row["surfaced"], message_row("fix it", [], ts="t", session="s", record_id="u2")["surfaced"]
    ('', [], None)
    """
    row = {c: None for c in INGEST_COLUMNS}
    row.update(ts=ts, session=session, kind="message", text=prompt, record_id=record_id, cwd=cwd)
    texts = [t for t in hook_texts if isinstance(t, str) and "[thatch] " in t]
    blocks, seen = [], set()
    for text in texts:
        for b in parse_nudges(text):
            if (b.engine, b.text) not in seen:  # the same output reported twice by the host
                seen.add((b.engine, b.text))
                blocks.append(b)
    if texts:
        row["logged_extraction"] = next((line for line in map(extraction_line, texts) if line), None)
        row["logged_nudge"] = "\n\n".join(b.text for b in blocks)
        row["logged_items"] = [it.as_dict() for b in blocks for it in b.items]
        row["surfaced"] = [it.statement for b in blocks if engine is None or b.engine == engine
                           for it in b.items]
    return row


def mark_not_run(row: dict, reason: str, result: "IngestResult") -> None:
    """Mark ``row`` as a call that never ran (a replay skips it) and count it under its reason.

    >>> res = IngestResult(log=None); row = {"skip_reason": None}
    >>> mark_not_run(row, SKIP_REASONS["rejected"], res); row["skip_reason"], dict(res.not_run)
    ('rejected by the user', {'rejected by the user': 1})
    """
    row["skip_reason"] = reason
    result.not_run[reason] += 1


class ContentIds:
    """Stable ids for records the source gave none: a hash of what they hold and when, plus how many
    earlier records held the same (so an earlier record appearing never shifts a later one's id).

    >>> ids = ContentIds("cc-prompt")
    >>> a, b = ids("s1", "2026-01-05T09:00:00Z", "fix it"), ids("s1", "2026-01-05T09:00:00Z", "fix it")
    >>> a != b, a.startswith("cc-prompt:"), b.endswith("#2")
    (True, True, True)
    """

    def __init__(self, prefix: str):
        self.prefix, self.seen = prefix, Counter()

    def __call__(self, *parts) -> str:
        key = hashlib.sha256("\x1f".join("" if p is None else str(p) for p in parts).encode("utf-8")).hexdigest()[:20]
        self.seen[key] += 1
        n = self.seen[key]
        return f"{self.prefix}:{key}" + (f"#{n}" if n > 1 else "")



def finish_log(rows: list[dict], skipped: Counter, source=None) -> pd.DataFrame:
    """The rows as a validated interaction log in time order; invalid rows are counted, not fatal.

    Rows that fail validation (a tool call without its required arguments,
    a signal outside the vocabulary, an unparsable time...) are dropped and
    counted under ``invalid <kind> row (<column>)``.
    """
    df = pd.DataFrame(rows, columns=list(INGEST_COLUMNS)) if rows else pd.DataFrame(
        {c: pd.Series(dtype=object) for c in INGEST_COLUMNS})
    valid, rejected = validate_interaction_log(df, source=source, errors="report")
    for kind, col in zip(rejected.get("kind", []), rejected.get("column", [])):
        skipped[f"invalid {kind} row ({col})"] += 1
    return valid.sort_values("ts", kind="stable").reset_index(drop=True)
