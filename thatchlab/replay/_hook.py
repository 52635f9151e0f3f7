"""Which prompts thatch's prompt hook left without a nudge, per release, from what the log shows.

The scoring engines score a prompt; production's hook decides first whether
to score it at all, and its rules changed between releases:

- ``07ecf87`` (sysread/thatch src/runtime.ts @07ecf879, ``onChatMessage``):
  a prompt that is a chat transcript echo (its text starts with ``[chat] ``,
  the bubbles ``isChatEchoParts`` recognises) and every prompt of a task
  sub-agent's session (a child session that is not thatch's own extraction
  child) get no nudge. The extraction nudge is gone: extraction runs as a
  child session when the parent goes idle, and nothing suppresses the nudges.
  (Claude Code runs another program as its hook, bin/thatch ``flush-tools``;
  the stored copy read, @03a2a713, still prints an extraction nudge first.
  This release follows src/runtime.ts, as the release table does.)
- ``v0.1.30``: while tool interactions waited for extraction, the hook
  printed the extraction nudge and returned, so that prompt got no recall,
  prediction or behavior nudge. Which prompts those were is not in the
  engine's state: the log says it, by the extraction nudge production
  printed before the prompt (``logged_extraction``, kept by
  :mod:`thatchlab.logs.ingest`).

A prompt the hook skipped replays as regime ``skipped`` (nothing scored,
nothing surfaced), like a prompt under ``min_prompt_chars``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.params import at_least, resolve_release

__all__ = ["CHAT_ECHO_PREFIX", "HOOK_SKIPS", "hook_skips", "hook_skipped"]

#: The prefix of a chat echo bubble (thatch src/prompts.ts ``chatEchoText`` / ``isChatEchoParts``).
CHAT_ECHO_PREFIX = "[chat] "
#: Why the hook of a release gave a prompt no nudge.
HOOK_SKIPS = {"chat_echo": "a chat echo ('[chat] ' prompt): the hook skips it (07ecf87)",
              "subagent": "a task sub-agent's session: the hook skips it (07ecf87)",
              "extraction": "the hook printed an extraction nudge and returned (v0.1.30)"}


def _column(log: pd.DataFrame, name: str) -> np.ndarray:
    return log[name].to_numpy(object) if name in log.columns else np.full(len(log), None, dtype=object)


def hook_skips(log: pd.DataFrame, release: str) -> np.ndarray:
    """Per row of ``log``: the :data:`HOOK_SKIPS` key of a message the hook of ``release`` did not
    nudge, None elsewhere (every other row, and messages it nudged).

    >>> log = pd.DataFrame({"kind": ["message", "message", "message", "prediction_update"],
    ...     "text": ["[chat] ana-1 sent you a message", "add tests", "add tests", None],
    ...     "subagent": [None, "task", None, "task"],
    ...     "logged_extraction": [None, None, "[thatch] Spawn a background sub-agent ...", None]})
    >>> hook_skips(log, "07ecf87").tolist()
    ['chat_echo', 'subagent', None, None]
    >>> hook_skips(log, "v0.1.30").tolist()
    [None, None, 'extraction', None]
    """
    release = resolve_release("thatch", release)
    n = len(log)
    out = np.full(n, None, dtype=object)
    if not n:
        return out
    message = (log["kind"].to_numpy(object) == "message")
    if at_least("thatch", release, "07ecf87"):
        texts = _column(log, "text")
        echo = np.fromiter((isinstance(t, str) and t.startswith(CHAT_ECHO_PREFIX) for t in texts),
                           dtype=bool, count=n)
        task = _column(log, "subagent") == "task"
        out[message & task] = "subagent"
        out[message & echo] = "chat_echo"
    else:
        shown = np.fromiter((isinstance(v, str) and v != "" for v in _column(log, "logged_extraction")),
                            dtype=bool, count=n)
        out[message & shown] = "extraction"
    return out


def hook_skipped(log: pd.DataFrame, release: str) -> np.ndarray:
    """Bool per row: a message the hook of ``release`` gave no nudge (:func:`hook_skips` set)."""
    return np.not_equal(hook_skips(log, release), None)
