"""Prompts a Claude Code user typed while the agent was working (the input queue).

A prompt typed while a turn runs does not become a ``user`` record at once:
Claude Code queues it and writes its queue to the transcript (2.1.x) as
``queue-operation`` records, an append-only ledger with these verbs (the
shapes of public transcript readers' fixtures and notes: see
``data/ingest/README.md``):

- ``enqueue`` (with ``content``, the text): a prompt entered the queue;
- ``dequeue`` (no content): the head of the queue was sent as the next turn,
  and a ``user`` record holding it follows: that record is the prompt's row
  (when none follows, the prompt was lost on the way, a known Claude Code
  bug: counted);
- ``remove`` (with ``content``, sometimes ``reason: "absorbed_mid_turn"``):
  the prompt was taken into the running turn; no ``user`` record ever
  follows, so the queue record is the only trace of it;
- ``popAll``: the user took every queued prompt back into the input box (to
  edit it): none of them was sent (what is sent later is a new prompt).

Newer versions also write a prompt absorbed into a running turn as an
``attachment`` record of type ``queued_command`` (``prompt``; ``commandMode``
``"prompt"``, or ``"task-notification"`` for the host's own notices; an
``origin`` whose ``kind`` is ``"human"`` for what the user typed, ``"peer"``
for another agent's message), timestamped when the prompt was accepted.

:class:`QueueBook` keeps one transcript's queue and tells, at the end of the
file, which queued prompts were sent into a turn without a ``user`` record
(each becomes a message row, once, whether the queue record, the attachment
or both recorded it) and why the others are not prompts (a counted reason).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["QueueBook", "Queued", "queued_text"]

#: Content of a queue entry the host wrote, not the user (its own notices, other agents' messages).
_HOST_NOTICE = ("<task-notification>", "<cross-session-message", "<channel")
#: Skip reasons of queued entries that are not prompts.
QUEUE_REASONS = {
    "popall": "queued prompt taken back to the input box (popAll: never sent)",
    "waiting": "queued prompt still waiting at the end of the file (never sent)",
    "notice": "queued host notice (task notification or another session's message)",
    "peer": "queued message from another agent (origin not human)",
    "mode": "queued command that is not a prompt",
    "empty": "queued prompt without text (an image or empty)",
    "lost": "queued prompt taken from the queue but never sent (no user record followed)",
    "command": "queued slash command (not a prompt)",
}
_SLASH = re.compile(r"^/[A-Za-z][\w:-]*(\s|$)")


@dataclass
class Queued:
    """One queued prompt that was sent into a turn without a ``user`` record."""

    text: str
    ts: str | None
    session: str | None
    cwd: str | None
    uuid: str | None
    rec: dict


def queued_text(value) -> str | None:
    """The text of a queued prompt: a string, or the ``text`` blocks of a list joined by newlines.

    >>> queued_text("run it again"), queued_text([{"type": "text", "text": "and this"}, {"type": "image"}])
    ('run it again', 'and this')
    >>> queued_text([{"type": "image"}]) is None
    True
    """
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [b["text"] for b in value if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)]
        return "\n".join(texts) if texts else None
    return None


class QueueBook:
    """The input queue of one transcript file, read record by record."""

    def __init__(self, skipped: Counter, read: Counter):
        self.skipped, self.read = skipped, read
        self.waiting: list[Queued] = []   # enqueued, not yet resolved
        self.absorbed: list[Queued] = []  # removed from the queue into a running turn
        self.attached: list[Queued] = []  # queued_command attachments a human typed
        self.dequeued: list[Queued] = []  # sent as the next turn: a user record should follow

    def operation(self, rec: dict, where) -> None:
        """A ``queue-operation`` record; ``where(rec)`` is ``(ts, session, cwd)``."""
        op = rec.get("operation")
        text = queued_text(rec.get("content"))
        ts, session, cwd = where(rec)
        if op == "enqueue":
            self.waiting.append(Queued(text or "", ts, session, cwd, None, rec))
        elif op == "dequeue":
            if self.waiting:
                self.dequeued.append(self.waiting.pop(0))
        elif op == "remove":
            entry = self._take(text)
            if entry is None:
                entry = Queued(text or "", ts, session, cwd, None, rec)
            elif text and not entry.text:
                entry.text = text
            self.absorbed.append(entry)
        elif op in ("popAll", "clear"):
            n = len(self.waiting) or (1 if text else 0)
            self.waiting = []
            if n:
                self.skipped[QUEUE_REASONS["popall"]] += n
            else:
                self.read["queue operations with nothing queued"] += 1
        else:
            self.skipped[f"queue operation {op!r}" if isinstance(op, str) else "queue operation without a verb"] += 1

    def delivered(self, text: str) -> None:
        """A ``user`` record with this (raw) text arrived: a dequeued prompt it holds was sent."""
        for i, entry in enumerate(self.dequeued):
            if entry.text.strip() and entry.text.strip() in text:
                del self.dequeued[i]
                self.read["queued prompts sent as their own user record"] += 1
                return

    def _take(self, text):
        for i, entry in enumerate(self.waiting):
            if text is None or entry.text == text:
                return self.waiting.pop(i)
        return None

    def attachment(self, rec: dict, body: dict, where) -> None:
        """A ``queued_command`` attachment."""
        ts, session, cwd = where(rec)
        mode = body.get("commandMode")
        origin = body.get("origin") if isinstance(body.get("origin"), dict) else {}
        kind = origin.get("kind")
        text = queued_text(body.get("prompt"))
        if mode not in (None, "prompt"):
            self.skipped[QUEUE_REASONS["notice"] if mode == "task-notification" else QUEUE_REASONS["mode"]] += 1
        elif kind not in (None, "human"):
            self.skipped[QUEUE_REASONS["notice"] if kind == "task-notification" else QUEUE_REASONS["peer"]] += 1
        elif body.get("isMeta") or rec.get("isMeta"):
            self.skipped["meta record"] += 1
        elif not text or not text.strip():
            self.skipped[QUEUE_REASONS["empty"]] += 1
        else:
            uuid = rec.get("uuid") if isinstance(rec.get("uuid"), str) and rec["uuid"] else None
            self.attached.append(Queued(text, ts, session, cwd, uuid, rec))

    def close(self) -> list[Queued]:
        """The file has ended: the queued prompts sent without a ``user`` record, each once (an
        attachment and the ``remove`` of the same text are one prompt; the attachment's record
        is kept). Entries still waiting and host notices are counted."""
        if self.waiting:
            self.skipped[QUEUE_REASONS["waiting"]] += len(self.waiting)
        for entry in self.dequeued:
            self.skipped[QUEUE_REASONS["notice"] if entry.text.lstrip().startswith(_HOST_NOTICE) else
                         QUEUE_REASONS["command"] if _SLASH.match(entry.text.lstrip()) else QUEUE_REASONS["lost"]] += 1
        out, attached = [], list(self.attached)
        for entry in self.absorbed:
            if entry.text.lstrip().startswith(_HOST_NOTICE):
                self.skipped[QUEUE_REASONS["notice"]] += 1
                continue
            if _SLASH.match(entry.text.lstrip()):
                self.skipped[QUEUE_REASONS["command"]] += 1
                continue
            twin = next((a for a in attached if a.text == entry.text), None)
            if twin is not None:
                attached.remove(twin)
                out.append(twin)
                self.read["queued prompts recorded twice (queue record and attachment: one row)"] += 1
            elif not entry.text.strip():
                self.skipped[QUEUE_REASONS["empty"]] += 1
            else:
                out.append(entry)
        for a in attached:
            if a.text.lstrip().startswith(_HOST_NOTICE):
                self.skipped[QUEUE_REASONS["notice"]] += 1
            elif _SLASH.match(a.text.lstrip()):
                self.skipped[QUEUE_REASONS["command"]] += 1
            else:
                out.append(a)
        self.waiting, self.absorbed, self.attached, self.dequeued = [], [], [], []
        return out
