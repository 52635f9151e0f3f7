"""Bundled sample logs, loaded as validated DataFrames (like ``sklearn.datasets``).

The samples ship inside the package, so they load wherever thatchlab is
installed — from a wheel, outside any checkout. Each loader reads one file
through the same validating reader a researcher uses on their own logs and
returns its DataFrame (``attrs`` carry what the reader reports); each one's
docstring ends with the file's data card. :func:`samples_dir` is the
directory itself (what ``thatchlab run`` reads when given no ``--data``).

==================================  ===============================  =====================
loader                              file                             engine
==================================  ===============================  =====================
:func:`load_interactions`           ``interactions.jsonl``           prediction
:func:`load_behavior_interactions`  ``behavior_interactions.jsonl``  behavior
:func:`load_memory_log`             ``memory_log.jsonl``             belief
:func:`load_recall_log`             ``recall_log.jsonl``             calibration
:func:`load_events`                 ``events.jsonl``                 anticipation
:func:`load_recalls`                ``recalls.jsonl``                anticipation
:func:`load_claude_code`            ``ingest/claude-code/``          prediction (ingest)
:func:`load_opencode`               ``ingest/opencode/``             prediction (ingest)
:func:`load_omi_memories`           ``ingest/omi_memories.json``     belief (ingest)
:func:`load_ai_memory`              ``ingest/ai-memory.db``          calibration (ingest)
:func:`load_mnemo`                  ``ingest/mnemo_*.csv``           anticipation (ingest)
==================================  ===============================  =====================

Examples
--------
>>> from thatchlab import datasets
>>> log = datasets.load_interactions()
>>> sorted(log["kind"].unique())
['message', 'prediction_update']
>>> datasets.load_recall_log()["memory_id"].nunique()
148
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path

from thatchlab.core.errors import InputError
from thatchlab.logs import (
    read_event_log,
    read_interaction_log,
    read_memory_log,
    read_recall_log,
    read_recall_stream,
)
from thatchlab.logs.ingest import ai_memory, claude_code, mnemo_events, omi_memories, opencode

__all__ = ["samples_dir", "data_card", "load_interactions", "load_behavior_interactions",
           "load_memory_log", "load_recall_log", "load_events", "load_recalls", "load_claude_code",
           "load_opencode", "load_omi_memories", "load_ai_memory", "load_mnemo"]


def samples_dir() -> Path:
    """The directory holding the bundled samples (inside the installed package).

    It is what ``thatchlab run`` reads when given no ``--data``.

    Returns
    -------
    pathlib.Path
        The ``samples`` folder of the installed ``thatchlab.datasets``.

    See Also
    --------
    data_card : the data card of one file in it.

    Examples
    --------
    >>> (samples_dir() / "interactions.jsonl").is_file()
    True
    """
    return Path(str(resources.files("thatchlab.datasets") / "samples"))


@cache
def _cards() -> dict[str, str]:
    """Each ``## `file` ...`` section of the two data cards, by the first file it names."""
    cards = {}
    for card in (samples_dir() / "README.md", samples_dir() / "ingest" / "README.md"):
        if not card.is_file():
            continue
        for section in re.split(r"^(?=## )", card.read_text(encoding="utf-8"), flags=re.M):
            names = re.findall(r"`([^`]+)`", section.splitlines()[0]) if section.startswith("## ") else []
            for name in names:
                cards.setdefault(name, section.strip())
    return cards


def data_card(name: str) -> str:
    """The data card section of one bundled file.

    Parameters
    ----------
    name : str
        The file as its card names it (``"interactions.jsonl"``,
        ``"ai-memory.db"``, ``"opencode/"``, ...).

    Returns
    -------
    str
        The card's ``## `file` ...`` section, its heading included.

    Raises
    ------
    InputError
        No card names ``name`` (the message lists the bundled files).

    See Also
    --------
    samples_dir : the folder the cards describe.

    Examples
    --------
    >>> data_card("recall_log.jsonl").splitlines()[0]
    '## `recall_log.jsonl` — recall log (ai-memory confidence calibration)'
    """
    cards = _cards()
    if name not in cards:
        raise InputError(f"no data card for {name!r}; the bundled files are {sorted(cards)}")
    return cards[name]


def _with_card(name: str, returns: tuple[str, str], see_also: str):
    """Finish the decorated loader's docstring: its Returns (``returns`` is the type and the
    sentence), its See Also line, and the data card of ``name`` as a literal block under Notes.

    Every loader's docstring has the same three closing sections, so they are written here once.
    """
    def attach(fn):
        kind, text = returns
        doc = (f"{fn.__doc__.rstrip()}\n\n    Returns\n    -------\n    {kind}\n        {text}\n\n"
               f"    See Also\n    --------\n    {see_also}\n")
        try:
            card = data_card(name)
        except Exception:  # a stripped install without the README keeps the sections without the card
            fn.__doc__ = doc
            return fn
        body = "\n".join(("        " + line) if line else "" for line in card.splitlines())
        fn.__doc__ = f"{doc}\n    Notes\n    -----\n    Data card::\n\n{body}\n"
        return fn
    return attach


def _log_sample(file: str, reader: str, see_also: str):
    """:func:`_with_card` for a loader that reads the bundled log ``file`` with ``thatchlab.logs.<reader>``."""
    return _with_card(file, ("pandas.DataFrame", f"``{file}`` read with :func:`thatchlab.logs.{reader}`."),
                      see_also)


def _adapter_result(what: str) -> tuple[str, str]:
    """The Returns of a loader that runs one ingest adapter: its result, then ``what``."""
    return "IngestResult", f"The adapter's result; {what}"


@_log_sample("interactions.jsonl", "read_interaction_log",
             "load_behavior_interactions : the behavior engine's sample.")
def load_interactions():
    """The sample interaction log of the prediction engine (validated, sorted by ``ts``)."""
    return read_interaction_log(samples_dir() / "interactions.jsonl")


@_log_sample("behavior_interactions.jsonl", "read_interaction_log",
             "load_interactions : the prediction engine's sample.")
def load_behavior_interactions():
    """The sample interaction log of the behavior engine (validated, sorted by ``ts``)."""
    return read_interaction_log(samples_dir() / "behavior_interactions.jsonl")


@_log_sample("memory_log.jsonl", "read_memory_log",
             "load_omi_memories : a sample omi export, ingested into a memory log.")
def load_memory_log():
    """The sample memory log of omi's belief model (validated, sorted by ``ts``)."""
    return read_memory_log(samples_dir() / "memory_log.jsonl")


@_log_sample("recall_log.jsonl", "read_recall_log",
             "load_ai_memory : a sample ai-memory database, ingested into a recall log.")
def load_recall_log():
    """The sample recall log of ai-memory's confidence calibration (validated, sorted by ``ts``)."""
    return read_recall_log(samples_dir() / "recall_log.jsonl")


@_log_sample("events.jsonl", "read_event_log",
             "load_recalls : the recall stream of the same workspaces.")
def load_events():
    """The sample event stream mined by the anticipation engine (validated, sorted by ``ts``)."""
    return read_event_log(samples_dir() / "events.jsonl")


@_log_sample("recalls.jsonl", "read_recall_stream",
             "load_events : the event stream the engine mines.")
def load_recalls():
    """The sample recall stream the anticipation engine prefetches for (validated, sorted by ``ts``)."""
    return read_recall_stream(samples_dir() / "recalls.jsonl")


@_with_card("claude-code/-home-dev-weather-app/", _adapter_result("``.log`` is the interaction log."),
            "load_opencode : the same kind of log from opencode's sessions.")
def load_claude_code(**kw):
    """Sample Claude Code transcripts read by :func:`thatchlab.logs.ingest.claude_code`.

    Parameters
    ----------
    **kw
        Keyword arguments of :func:`thatchlab.logs.ingest.claude_code`
        (``server``, ``subagents``, ``engine``, ``project_store``).
    """
    return claude_code(samples_dir() / "ingest" / "claude-code", **kw)


@_with_card("opencode/", _adapter_result("``.log`` is the interaction log."),
            "load_claude_code : the same kind of log from Claude Code's transcripts.")
def load_opencode(**kw):
    """A sample opencode data directory read by :func:`thatchlab.logs.ingest.opencode`.

    Parameters
    ----------
    **kw
        Keyword arguments of :func:`thatchlab.logs.ingest.opencode`
        (``subagents``, ``engine``, ``project_store``, ``server``).
    """
    return opencode(samples_dir() / "ingest" / "opencode", **kw)


@_with_card("omi_memories.json", _adapter_result("``.log`` is the memory log."),
            "load_memory_log : the bundled memory log.")
def load_omi_memories():
    """A sample omi ``/v3/memories`` export read by :func:`thatchlab.logs.ingest.omi_memories`."""
    return omi_memories(samples_dir() / "ingest" / "omi_memories.json")


@_with_card("ai-memory.db", _adapter_result("``.log`` is the recall log, ``.tables`` holds ``recalls``, "
                                            "``observations`` and ``outcomes``."),
            "load_recall_log : the bundled recall log.")
def load_ai_memory():
    """A sample ai-memory database read (read-only) by :func:`thatchlab.logs.ingest.ai_memory`."""
    return ai_memory(samples_dir() / "ingest" / "ai-memory.db")


@_with_card("mnemo_events.csv", _adapter_result("the event and recall streams."),
            "load_events : the bundled event stream.")
def load_mnemo(**kw):
    """Sample mnemo dumps read by :func:`thatchlab.logs.ingest.mnemo_events`.

    Parameters
    ----------
    **kw
        Keyword arguments of :func:`thatchlab.logs.ingest.mnemo_events`
        (``session_gap``).
    """
    ingest = samples_dir() / "ingest"
    return mnemo_events(ingest / "mnemo_events.csv", ingest / "mnemo_recalls.csv", **kw)
