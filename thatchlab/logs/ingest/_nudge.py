"""Reading thatch's nudge blocks back out of the text a host injected.

thatch's prompt hook prints up to two blocks before the agent sees a prompt,
one per scoring engine: a header line (``[thatch] User decision model`` for
predictions, ``[thatch] Situational behaviors`` for behaviors) followed by one
line per surfaced item::

    - [0.58 conf, 1 tests] When writing tests: you tend to use pytest

The verb depends on the evidence count (``you may prefer`` / ``consider`` for
0 tests, ``you tend to`` / ``do`` otherwise), which is what tells the
matcher from the statement when either contains ``": "``. Hosts wrap the
hook output in their own markup (tags, ``hook success:`` prefixes, JSON
strings); the parser looks for the header lines wherever they are and stops
a block at the first line that is neither an item nor the continuation of
one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["NUDGE_HEADERS", "NudgeItem", "NudgeBlock", "parse_nudges", "has_nudge", "split_prompt",
           "extraction_line"]

#: Header line of each engine's nudge block.
NUDGE_HEADERS = {"prediction": "[thatch] User decision model", "behavior": "[thatch] Situational behaviors"}
#: The verbs of each engine: (no evidence, evidence).
_VERBS = {"prediction": ("you may prefer", "you tend to"), "behavior": ("consider", "do")}
_HEAD = re.compile(r"\[thatch\] (User decision model|Situational behaviors)[ \t]*$")
_LINE = re.compile(r"^- \[(\d+(?:\.\d+)?) conf, (\d+) tests\] When (.*)$")
_ENGINE_OF = {"User decision model": "prediction", "Situational behaviors": "behavior"}
#: Closing markup a host puts after hook output; a block ends there.
_CLOSERS = re.compile(r"^\s*</[A-Za-z0-9_-]+>\s*$")
_TRAILING_CLOSER = re.compile(r"</[A-Za-z0-9_-]+>\s*$")
#: The skill every wording of thatch's extraction nudge names (polite, insistent and shouting,
#: on both hosts: sysread/thatch src/prompts.ts ``extractionNudge``).
_EXTRACTOR = "thatch-fact-extractor"


@dataclass(frozen=True)
class NudgeItem:
    """One surfaced item as the nudge printed it.

    Parameters
    ----------
    engine : str
        ``"prediction"`` or ``"behavior"``.
    statement : str
        The prediction or behavior printed.
    matcher : str
        The situation after ``When``.
    confidence : float
        The displayed (two-decimal) confidence.
    tests : int
        The evidence count.
    verb : str
        The verb printed.
    """

    engine: str
    statement: str
    matcher: str
    confidence: float
    tests: int
    verb: str

    def as_dict(self) -> dict:
        """The item as a ``logged_items`` entry.

        Returns
        -------
        dict
            ``engine``, ``statement``, ``matcher``, ``confidence`` and ``tests``.
        """
        return {"engine": self.engine, "statement": self.statement, "matcher": self.matcher,
                "confidence": self.confidence, "tests": self.tests}


@dataclass(frozen=True)
class NudgeBlock:
    """One engine's block as printed.

    Parameters
    ----------
    engine : str
        ``"prediction"`` or ``"behavior"``.
    text : str
        The block exactly as printed (header and lines).
    items : tuple of NudgeItem, default=()
        Its items, in order.
    """

    engine: str
    text: str
    items: tuple = field(default_factory=tuple)


def _split_item(engine: str, rest: str, tests: int):
    """``(matcher, verb, statement)`` from the text after ``When``, or None.

    The verb printed must be the one the evidence count selects; among the
    places where ``": {verb} "`` occurs the first is taken (a matcher is a
    short situation, statements are free text).
    """
    verb = _VERBS[engine][0 if tests == 0 else 1]
    sep = f": {verb} "
    i = rest.find(sep)
    if i < 0:
        # a verb of the wrong evidence class (hand-edited text): accept the other one
        other = _VERBS[engine][1 if tests == 0 else 0]
        i, verb = rest.find(f": {other} "), other
        if i < 0:
            return None
        sep = f": {other} "
    return rest[:i], verb, rest[i + len(sep):]


def parse_nudges(text: str) -> list[NudgeBlock]:
    """Every thatch nudge block in ``text``, in order.

    A block runs from its header line through its item lines; a line that
    does not start an item continues the previous item's statement (a
    statement holding a newline) unless it is blank, another header or
    closing markup. Text around the blocks is ignored.

    Parameters
    ----------
    text : str
        Hook output, a prompt or a synthetic part holding the blocks.

    Returns
    -------
    list of NudgeBlock
        The blocks found (none: an empty list).

    Examples
    --------
    >>> hook = ("<user-prompt-submit-hook>[thatch] User decision model\\n"
    ...         "- [0.58 conf, 1 tests] When writing tests: you tend to use pytest\\n"
    ...         "- [0.50 conf, 0 tests] When naming things: you may prefer short names: a, b\\n\\n"
    ...         "[thatch] Situational behaviors\\n"
    ...         "- [0.50 conf, 0 tests] When committing: consider run the tests</user-prompt-submit-hook>")
    >>> blocks = parse_nudges(hook)
    >>> [(b.engine, len(b.items)) for b in blocks]
    [('prediction', 2), ('behavior', 1)]
    >>> blocks[0].items[1].matcher, blocks[0].items[1].statement, blocks[0].items[1].tests
    ('naming things', 'short names: a, b', 0)
    >>> print(blocks[1].text)
    [thatch] Situational behaviors
    - [0.50 conf, 0 tests] When committing: consider run the tests
    """
    if not isinstance(text, str) or "[thatch] " not in text:
        return []
    lines = text.replace("\r\n", "\n").split("\n")
    blocks: list[NudgeBlock] = []
    i = 0
    while i < len(lines):
        m = _HEAD.search(lines[i])
        if m is None:
            i += 1
            continue
        engine = _ENGINE_OF[m.group(1)]
        header = NUDGE_HEADERS[engine]
        kept = [header]
        items: list[list] = []  # [matcher, verb, statement, conf, tests]
        i += 1
        while i < len(lines):
            line = lines[i]
            closed = _TRAILING_CLOSER.search(line)
            if closed is not None:  # hook markup closed on the item's own line
                line = line[:closed.start()]
            item = _LINE.match(line)
            if item is not None:
                conf, tests = float(item.group(1)), int(item.group(2))
                split = _split_item(engine, item.group(3), tests)
                if split is None:
                    break
                items.append([split[0], split[1], split[2], conf, tests, item.group(1)])
                kept.append(line)
            elif items and line.strip() and not _HEAD.search(line) and not _CLOSERS.match(line) \
                    and not line.lstrip().startswith("<"):
                items[-1][2] += "\n" + line
                kept.append(line)
            else:
                break
            i += 1
            if closed is not None:
                break
        if items:
            blocks.append(NudgeBlock(engine, "\n".join(kept), tuple(
                NudgeItem(engine, stmt, matcher, conf, tests, verb)
                for matcher, verb, stmt, conf, tests, _ in items)))
    return blocks


def has_nudge(text) -> bool:
    """Whether ``text`` holds a thatch nudge header line.

    >>> has_nudge("ok\\n[thatch] Situational behaviors\\n- ..."), has_nudge("[thatch] is a tool")
    (True, False)
    """
    return isinstance(text, str) and "[thatch] " in text and any(
        _HEAD.search(line) for line in text.split("\n"))


def split_prompt(text: str) -> tuple[str, str]:
    """``(prompt, hook text)``: a prompt whose host appended the hook output to it.

    The prompt ends before the first line holding a nudge header (and the
    markup opening it on that line); the separating newline is dropped.

    >>> split_prompt("fix the flaky test\\n[thatch] User decision model\\n- [0.50 conf, 0 tests] When a: consider b")
    ('fix the flaky test', '[thatch] User decision model\\n- [0.50 conf, 0 tests] When a: consider b')
    >>> split_prompt("no nudge here")
    ('no nudge here', '')
    """
    if not has_nudge(text):
        return text, ""
    lines = text.split("\n")
    for j, line in enumerate(lines):
        m = _HEAD.search(line)
        if m is None:
            continue
        start = line.rfind("<", 0, m.start())  # an opening tag on the header's line goes with the hook
        cut = start if start >= 0 and ">" in line[start:m.start()] else m.start()
        head = "\n".join(lines[:j] + ([line[:cut]] if line[:cut].strip() else []))
        return head, "\n".join([line[cut:]] + lines[j + 1:])
    return text, ""  # pragma: no cover - has_nudge found a header


def extraction_line(text) -> str | None:
    """The first line of thatch's extraction nudge in a hook output, or None when it holds none.

    The hook printed it while tool interactions waited for fact extraction (on
    Claude Code ``thatch flush-tools``, and the opencode plugin before its
    extraction went direct); every wording starts ``[thatch] `` and names the
    ``thatch-fact-extractor`` skill. The line is returned from ``[thatch] ``
    on (host markup before it dropped); the payload that follows is not.

    >>> extraction_line("<user-prompt-submit-hook>[thatch] Spawn a background sub-agent to run the "
    ...                 "thatch-fact-extractor skill on 3 queued tool interactions. Use x:\\n{}")
    '[thatch] Spawn a background sub-agent to run the thatch-fact-extractor skill on 3 queued tool interactions. Use x:'
    >>> extraction_line("[thatch] User decision model\\n- [0.58 conf, 1 tests] When a: you tend to b") is None
    True
    """
    if not isinstance(text, str) or _EXTRACTOR not in text:
        return None
    for line in text.replace("\r\n", "\n").split("\n"):
        at = line.find("[thatch] ")
        if at >= 0 and _EXTRACTOR in line[at:]:
            return _TRAILING_CLOSER.sub("", line[at:]).rstrip()
    return None
