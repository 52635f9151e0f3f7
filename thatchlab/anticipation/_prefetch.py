"""Prefetch: rank the facts the mined patterns expect a session to need (mnemo).

Before a session's first recall, the cues known so far (events that
happened, entities mentioned, facts already recalled, the weekly slot) are
matched against the patterns; each candidate fact scores the highest
confidence among the patterns that name it, ties broken by fact id, and the
top ``k`` are injected.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.anticipation._miners import slot_of
from thatchlab.core.errors import InputError
from thatchlab.core.frames import float_column, plain_columns
from thatchlab.core.params.anticipation import AnticipationParams
from thatchlab.core.time import as_utc

__all__ = ["Prefetcher", "CUE_KINDS"]

#: What a session can reveal before its first recall, and the pattern types each cue matches.
CUE_KINDS = ("event", "fact", "entity", "slot")


class Prefetcher:
    """Pick the facts to inject from mined patterns.

    Candidates come from sequential patterns whose trigger (event or fact)
    already occurred in the session and whose target is a fact; conditional
    patterns whose entity was mentioned; periodic patterns of the current
    slot; co-occurrence partners of facts already recalled. Facts already
    recalled are not prefetched again.

    Parameters
    ----------
    patterns : DataFrame
        The output of :func:`mine` (any subset of its rows): at least
        ``type``, ``workspace``, ``trigger``, ``target`` and ``confidence``.
    params : AnticipationParams, default=None
        Gives ``k``, ``slot_hours`` and ``timezone`` (defaults if None).

    Attributes
    ----------
    params : AnticipationParams
        The parameters in use.
    patterns : DataFrame
        The patterns given, with a fresh ``RangeIndex``; ``pattern_ids``
        index it.
    edges : DataFrame
        (pattern_id, workspace, cue_kind, cue, fact, confidence, type) for
        every usable pattern; co-occurrence pairs appear both ways.

    Raises
    ------
    InputError
        When ``patterns`` is not a DataFrame or misses a column.

    Examples
    --------
    >>> pats = pd.DataFrame({"type": ["sequential", "conditional", "periodic"], "workspace": "w",
    ...     "trigger": ["deploy", "prod", "0:4"], "target": ["runbook", "runbook", "metrics"],
    ...     "confidence": [0.8, 0.9, 0.7], "trigger_kind": ["event", "entity", "slot"],
    ...     "target_kind": "fact"})
    >>> Prefetcher(pats).prefetch({"workspace": "w", "events": ["deploy"], "entities": ["prod"],
    ...                            "ts": "2026-01-05T09:00Z"})[["rank", "fact_id", "score", "types"]]
       rank  fact_id  score                      types
    0     1  runbook    0.9  [conditional, sequential]
    1     2  metrics    0.7                 [periodic]
    """

    def __init__(self, patterns: pd.DataFrame, params: AnticipationParams | None = None):
        if not isinstance(patterns, pd.DataFrame):
            raise InputError(f"patterns: expected a DataFrame, got {type(patterns).__name__}")
        missing = [c for c in ("type", "workspace", "trigger", "target", "confidence") if c not in patterns]
        if missing:
            raise InputError(f"patterns: missing column(s) {missing}; expected the output of mine()")
        self.params = params if params is not None else AnticipationParams()
        self.patterns = plain_columns(patterns).reset_index(drop=True)
        self.edges = self._edges(self.patterns)

    @staticmethod
    def _edges(p: pd.DataFrame) -> pd.DataFrame:
        """(pattern_id, workspace, cue_kind, cue, fact, confidence, type) for every usable pattern."""
        pid = np.arange(len(p))
        conf = float_column(p["confidence"], "patterns", "confidence")
        tk = p["trigger_kind"] if "trigger_kind" in p else pd.Series("event", index=p.index)
        gk = p["target_kind"] if "target_kind" in p else pd.Series("fact", index=p.index)
        typ = p["type"]
        kind = np.select([typ == "sequential", typ == "conditional", typ == "periodic",
                          typ == "co-occurrence"],
                         [tk.fillna("event").to_numpy(), "entity", "slot", "fact"], default="")
        ok = (kind != "") & ((typ != "sequential") | (gk.fillna("fact") == "fact")).to_numpy()
        fwd = pd.DataFrame({"pattern_id": pid, "workspace": p["workspace"].to_numpy(), "cue_kind": kind,
                            "cue": p["trigger"].to_numpy(), "fact": p["target"].to_numpy(),
                            "confidence": conf, "type": typ.to_numpy()})[ok]
        co = (typ == "co-occurrence").to_numpy()
        back = pd.DataFrame({"pattern_id": pid, "workspace": p["workspace"].to_numpy(), "cue_kind": "fact",
                             "cue": p["target"].to_numpy(), "fact": p["trigger"].to_numpy(),
                             "confidence": conf, "type": typ.to_numpy()})[co]
        return pd.concat([fwd, back], ignore_index=True)

    def cues(self, context: dict, key=0) -> pd.DataFrame:
        """The cue table (key, workspace, cue_kind, cue) of one session context.

        Parameters
        ----------
        context : dict
            ``workspace`` plus any of ``events``, ``entities``, ``recalled``,
            ``ts`` (gives the slot) or ``slot``.
        key : object, default=0
            The session's key in the table.

        Returns
        -------
        DataFrame
            One row per cue: events, then entities, then recalled facts,
            then the slot.

        Raises
        ------
        InputError
            When ``context`` is not a dict with ``workspace``.

        See Also
        --------
        prefetch_many : Ranks the facts of a cue table.
        """
        if not isinstance(context, dict) or "workspace" not in context:
            raise InputError("context: expected a dict with 'workspace' and some of 'events', "
                             "'entities', 'recalled', 'ts' or 'slot'")
        rows = []
        for kind, field in (("event", "events"), ("entity", "entities"), ("fact", "recalled")):
            for v in context.get(field) or ():
                rows.append((key, context["workspace"], kind, v))
        slot = context.get("slot")
        if slot is None and context.get("ts") is not None:
            ts = as_utc(context["ts"], what="context['ts']")
            slot = slot_of(pd.Series([ts]), slot_hours=self.params.slot_hours,
                           timezone=self.params.timezone).iloc[0]
        if slot is not None:
            rows.append((key, context["workspace"], "slot", slot))
        return pd.DataFrame(rows, columns=["key", "workspace", "cue_kind", "cue"])

    def prefetch(self, context: dict, k: int | None = None) -> pd.DataFrame:
        """Top-``k`` facts for one session context.

        ``context``: ``workspace`` plus any of ``events`` (names seen so far),
        ``entities`` (mentioned so far), ``recalled`` (fact ids already
        recalled), ``ts`` (prefetch time, gives the slot) or ``slot``.

        Parameters
        ----------
        context : dict
            The session so far (see :meth:`cues`).
        k : int, default=None
            How many facts; ``params.k`` when None.

        Returns
        -------
        DataFrame
            (rank, fact_id, score, types, pattern_ids, patterns), where
            ``pattern_ids`` index :attr:`patterns` and ``patterns`` describe
            them.

        Raises
        ------
        InputError
            When ``context`` is not a dict with ``workspace``.

        See Also
        --------
        prefetch_many : Many sessions at once.
        """
        out = self.prefetch_many(self.cues(context), k=k)
        return out.drop(columns="key")

    def prefetch_many(self, cues: pd.DataFrame, k: int | None = None) -> pd.DataFrame:
        """Top-``k`` facts for many sessions at once from a cue table (key, workspace, cue_kind, cue).

        score(fact) = max confidence of the patterns matched by the session's
        cues that name the fact; ranked by score descending then fact id.

        Parameters
        ----------
        cues : DataFrame
            A cue table (key, workspace, cue_kind, cue), e.g. from
            :meth:`cues`; a ``fact`` cue also marks the fact as recalled.
        k : int, default=None
            How many facts per key; ``params.k`` when None.

        Returns
        -------
        DataFrame
            (key, rank, fact_id, score, types, pattern_ids, patterns), by key
            then rank.

        See Also
        --------
        prefetch : One session context.
        """
        k = self.params.k if k is None else int(k)
        cols = ["key", "rank", "fact_id", "score", "types", "pattern_ids", "patterns"]
        m = cues.drop_duplicates().merge(self.edges, on=["workspace", "cue_kind", "cue"])
        recalled = cues[cues["cue_kind"] == "fact"][["key", "cue"]].rename(columns={"cue": "fact"})
        if len(recalled) and len(m):
            m = m.merge(recalled.drop_duplicates().assign(_seen=True), on=["key", "fact"], how="left")
            m = m[m["_seen"].isna()].drop(columns="_seen")
        if m.empty:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
        m = m.drop_duplicates(["key", "pattern_id", "fact"])
        best = m.groupby(["key", "fact"], sort=False)["confidence"].max().rename("score").reset_index()
        best = best.sort_values(["key", "score", "fact"], ascending=[True, False, True], kind="stable")
        best["rank"] = best.groupby("key", sort=False).cumcount() + 1
        best = best[best["rank"] <= k]
        # the patterns behind each kept fact, strongest first
        m = m.merge(best[["key", "fact"]], on=["key", "fact"])
        m = m.sort_values(["key", "fact", "confidence", "pattern_id"], ascending=[True, True, False, True],
                          kind="stable")
        p = self.patterns
        trig, targ = p["trigger"].to_numpy(), p["target"].to_numpy()
        lists: dict = {}
        for key, fact, typ, pid, conf in zip(m["key"].tolist(), m["fact"].tolist(), m["type"].tolist(),
                                             m["pattern_id"].tolist(), m["confidence"].tolist()):
            entry = lists.setdefault((key, fact), (set(), [], []))
            entry[0].add(typ)
            entry[1].append(pid)
            entry[2].append(f"{typ}: {trig[pid]} -> {targ[pid]} ({conf:.3f})")
        pairs = list(zip(best["key"].tolist(), best["fact"].tolist()))
        g = best.rename(columns={"fact": "fact_id"})
        g["types"] = [sorted(lists[kf][0]) for kf in pairs]
        g["pattern_ids"] = [lists[kf][1] for kf in pairs]
        g["patterns"] = [lists[kf][2] for kf in pairs]
        return g[cols].reset_index(drop=True)
