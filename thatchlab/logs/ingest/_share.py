"""Sharing an ingested log without its prompts.

:func:`redact` replaces what the user and the agent wrote in their own words
— prompt and query texts, feedback contexts and rationales — by stable
hashes, and returns a lookup table of vectors (each hashed prompt's *query*
vector, and the passage vectors of the matcher and statement texts that stay
readable) so the redacted log still replays exactly with a
:class:`~thatchlab.embed.LookupEmbedder` built from it.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

import numpy as np
import pandas as pd

__all__ = ["redact_text", "redact"]

_REDACTED_TEXT_KINDS = ("message", "prediction_query", "behavior_feedback")
_QUERY_KINDS = ("message", "prediction_query")
_PROV = re.compile(r"^(    - \[\d{4}-\d\d-\d\d\] [^:]+: )(.*)$")


def redact_text(text: str) -> str:
    """A stable stand-in for ``text``: its SHA-256 in hex, cut to the text's length (64 at most).

    The length is kept up to 64 characters so that the engines' length rule
    (prompts shorter than ``min_prompt_chars`` fire no nudge) treats the
    stand-in as it treated the text.

    Parameters
    ----------
    text : str
        The text to hide.

    Returns
    -------
    str
        Hex digits, as many as the text's characters (64 at most).

    See Also
    --------
    redact : a whole log with its lookup table.

    Examples
    --------
    >>> redact_text("fix the flaky test")
    '1ca42459f21e732e42'
    >>> len(redact_text("ok")), len(redact_text("x" * 500))
    (2, 64)
    """
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return digest[: min(len(text), 64)]


def _reply(reply, mapping: dict):
    """A list reply with the rationale and provenance details written as their stand-ins."""
    if not isinstance(reply, str) or not mapping:
        return reply
    out = []
    for line in reply.split("\n"):
        if line.startswith("  rationale: ") and line[len("  rationale: "):] in mapping:
            line = "  rationale: " + mapping[line[len("  rationale: "):]]
        else:
            m = _PROV.match(line)
            if m is not None:
                detail = m.group(2)
                for pre in ("", "ham: ", "spam: "):
                    if detail.startswith(pre) and detail[len(pre):] in mapping:
                        line = m.group(1) + pre + mapping[detail[len(pre):]]
                        break
        out.append(line)
    return "\n".join(out)


def redact(log: pd.DataFrame, embedder) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(redacted log, lookup)`` of an interaction log.

    Parameters
    ----------
    log : pandas.DataFrame
        An interaction log (validated; ``logs.read_interaction_log`` or an ingest's ``log``).
    embedder : Embedder
        Any object with ``embed_queries``, ``embed_passages`` and ``name``:
        the model the lookup's vectors are computed with.

    Returns
    -------
    redacted : pandas.DataFrame
        The log with ``text`` (messages, queries, feedback contexts)
        and ``rationale`` replaced by :func:`redact_text`, the rationale and
        context lines of ``logged_reply`` likewise, and a logged
        ``embedding`` column emptied (it is the prompt's vector, kept in the
        lookup instead).
    lookup : pandas.DataFrame
        ``text, embedding`` rows: each redacted prompt or query's
        stand-in with its query vector, then every matcher, statement and
        delete text with its passage vector (first vector kept when two
        short texts share a stand-in).

    See Also
    --------
    redact_text : the stand-in of one text.

    Examples
    --------
    >>> from thatchlab.logs import validate_interaction_log
    >>> class Toy:  # any object with the embedder methods
    ...     name = "toy"
    ...     def embed_queries(self, texts): return np.ones((len(texts), 2), np.float32)
    ...     def embed_passages(self, texts): return np.zeros((len(texts), 2), np.float32) + [1, 0]
    >>> log = validate_interaction_log(pd.DataFrame({"ts": ["2026-01-01T00:00:00Z"] * 2, "session": ["s"] * 2,
    ...     "kind": ["message", "prediction_update"], "text": ["my secret prompt text", None],
    ...     "matcher": [None, "writing tests"], "statement": [None, "use pytest"], "signal": [None, "create"],
    ...     "rationale": [None, "said so in chat"]}))
    >>> red, lookup = redact(log, Toy())
    >>> red["text"][0] == redact_text("my secret prompt text"), red["rationale"][1] == redact_text("said so in chat")
    (True, True)
    >>> lookup["text"].tolist()[1:], len(lookup)
    (['writing tests', 'use pytest'], 3)
    """
    out = log.copy()
    mapping, queries = _stand_ins(out)
    _replace_texts(out, mapping)
    passages = [t for col in ("matcher", "statement") for t in out[col].tolist() if isinstance(t, str)]
    lookup = _lookup(list(dict.fromkeys(queries)), list(dict.fromkeys(passages)), mapping, embedder)
    return out, lookup


def _stand_ins(log: pd.DataFrame) -> tuple[dict, list]:
    """``(mapping, queries)``: each redacted text → its stand-in, and the prompts and queries among them, in order."""
    kinds = log["kind"].to_numpy(object)
    mapping: dict[str, str] = {}
    queries: list[str] = []
    for i in np.flatnonzero(np.isin(kinds, _REDACTED_TEXT_KINDS)):
        t = log["text"].iat[i]
        if isinstance(t, str):
            mapping[t] = redact_text(t)
            if kinds[i] in _QUERY_KINDS:
                queries.append(t)
    for t in log["rationale"].to_numpy(object):
        if isinstance(t, str):
            mapping[t] = redact_text(t)
    return mapping, queries


def _replace_texts(out: pd.DataFrame, mapping: dict) -> None:
    """Put the stand-ins in ``out``: text, rationale, the reply's lines; drop a logged prompt vector."""
    redact_col = np.isin(out["kind"].to_numpy(object), _REDACTED_TEXT_KINDS)
    out["text"] = [mapping.get(t, t) if redact_col[i] and isinstance(t, str) else t
                   for i, t in enumerate(out["text"].tolist())]
    out["rationale"] = [mapping.get(t, t) if isinstance(t, str) else t for t in out["rationale"].to_numpy(object)]
    if "logged_reply" in out.columns:
        out["logged_reply"] = [_reply(r, mapping) for r in out["logged_reply"].tolist()]
    if "embedding" in out.columns:
        out["embedding"] = None


def _lookup(queries: list, passages: list, mapping: dict, embedder) -> pd.DataFrame:
    """``text, embedding``: each query's stand-in with its query vector, then each passage with its passage vector."""
    rows, seen, clashes = [], set(), Counter()
    if queries:
        qv = np.asarray(embedder.embed_queries(queries), dtype=np.float32)
        for t, v in zip(queries, qv):
            key = mapping[t]
            if key in seen:
                clashes["stand-in shared by two texts"] += 1
                continue
            seen.add(key)
            rows.append((key, v.tolist()))
    if passages:
        pv = np.asarray(embedder.embed_passages(passages), dtype=np.float32)
        for t, v in zip(passages, pv):
            if t not in seen:
                seen.add(t)
                rows.append((t, v.tolist()))
    lookup = pd.DataFrame(rows, columns=["text", "embedding"])
    lookup.attrs["model"] = getattr(embedder, "name", None)
    lookup.attrs["clashes"] = dict(clashes)
    return lookup
