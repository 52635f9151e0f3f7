"""How closely a replay reproduces what production answered.

An interaction log read from an agent host (:mod:`thatchlab.logs.ingest`)
keeps each thatch tool's reply (``logged_reply``) and each prompt's nudge
(``logged_nudge``, parsed into ``logged_items``). :func:`fidelity` sets the
replay's replies and nudges beside them:

- **reply agreement**: the share of the engine's tool calls whose replayed
  reply is exactly the logged text;
- **nudge agreement**: the share of messages whose replayed nudge block is
  exactly the logged block of the same engine (both empty counts), over the
  messages whose nudge production recorded (an empty ``logged_nudge`` is a
  recorded "nothing surfaced"; a null one is unknown and not compared);
- **nudge item agreement**: the share of messages that surfaced the same
  statements in the same order, and the mean Jaccard overlap of the two sets;
- **regime agreement**: the share of messages whose *displayed* regime is
  the same. The nudge prints no scores or stored confidences, so both sides
  are classified from what it prints: ``none`` (nothing surfaced),
  ``strong`` (the top line's confidence ≥ ``strong_confidence``, its tests
  ≥ ``strong_evidence`` and no other line from the same matcher), else
  ``ambiguous``.

Exact texts follow from exact vectors: with production's model
(BGE-small-en-v1.5, mean pooling, its query prefix) or the vectors that
produced the log, replies and nudges should agree exactly. With another
embedder cosines differ, so the report says exact comparison needs the
production model and puts the regime agreement first.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.jsfmt import to_fixed
from thatchlab.logs import applied, sort_by_time
from thatchlab.replay.scoring import ENGINE_KINDS, ReplayResult, check_log

__all__ = ["fidelity", "FidelityReport", "PRODUCTION_MODEL", "same_model"]

#: The embedding model production thatch runs (transformers.js, mean pooling).
PRODUCTION_MODEL = "Xenova/bge-small-en-v1.5"
_HEADERS = {"prediction": "[thatch] User decision model", "behavior": "[thatch] Situational behaviors"}


def same_model(name, production: str = PRODUCTION_MODEL) -> bool:
    """Whether an embedder's ``name`` is the production model (any publisher or path of the same weights).

    >>> same_model("BAAI/bge-small-en-v1.5"), same_model("/models/bge-small-en-v1.5/"), same_model("lookup")
    (True, True, False)
    """
    if not isinstance(name, str) or not name:
        return False

    def base(s):
        return s.rstrip("/\\").replace("\\", "/").split("/")[-1].lower()

    return base(name) == base(production)


@dataclass
class FidelityReport:
    """What :func:`fidelity` returns.

    Attributes
    ----------
    engine, embedder : the replay's engine and embedder name.
    production_model : the model production's replies were made with.
    exact_model : whether the replay used that model (exact agreement is then expected).
    replies : one row per compared tool call: ``position, kind, logged, replayed, match``.
    nudges : one row per message: ``position, session``, ``known`` (production's nudge for it
        was recorded: compared), ``logged, replayed, match``,
        ``logged_items, replayed_items, items_match, jaccard, logged_regime``,
        ``replayed_regime, regime_match`` (item lists are statements).
    metrics : ``n_replies``, ``n_logged_replies`` (the tool calls compared: the
        engine's calls that ran and have a logged reply), ``reply_agreement``,
        ``n_nudges`` (messages), ``n_logged_nudges`` (messages whose nudge was
        recorded, empty or not: the ones compared), ``nudge_agreement``, ``nudge_item_agreement``,
        ``item_jaccard``, ``regime_agreement`` — every agreement NaN when its
        count of logged replies or nudges is 0 — and ``headline``, the number
        to read first.
    note : one sentence on what the numbers can show.
    """

    engine: str
    embedder: str | None
    production_model: str
    exact_model: bool
    replies: pd.DataFrame
    nudges: pd.DataFrame
    metrics: dict = field(default_factory=dict)
    note: str = ""

    def summary(self) -> str:
        m = self.metrics

        def pct(v):
            return "n/a" if v != v else f"{v:.0%}"

        lines = [f"{self.engine} replay with {self.embedder!r} against the logged replies",
                 f"  replies:      {pct(m['reply_agreement'])} exact ({m['n_logged_replies']} logged replies)",
                 f"  nudges:       {pct(m['nudge_agreement'])} exact, {pct(m['nudge_item_agreement'])} same items, "
                 f"Jaccard {m['item_jaccard']:.2f} ({m['n_logged_nudges']} logged nudges over {m['n_nudges']} "
                 "messages)" if m["n_logged_nudges"] else
                 f"  nudges:       none logged ({m['n_nudges']} messages): agreement unknown",
                 f"  regimes:      {pct(m['regime_agreement'])} agree", f"  {self.note}"]
        return "\n".join(lines)

    def __repr__(self):
        return (f"FidelityReport(engine={self.engine!r}, embedder={self.embedder!r}, exact_model={self.exact_model}, "
                f"headline={self.metrics.get('headline')})")


def _display_regime(items: list[tuple], params) -> str:
    """``none``/``strong``/``ambiguous`` from printed lines ``(statement, matcher, confidence, tests)``."""
    if not items:
        return "none"
    _, matcher, conf, tests = items[0]
    competing = any(m == matcher for _, m, _, _ in items[1:])
    if conf >= params.strong_confidence and tests >= params.strong_evidence and not competing:
        return "strong"
    return "ambiguous"


def _block(text, engine: str) -> str:
    """The engine's block of a logged nudge text (blocks are separated by a blank line)."""
    if not isinstance(text, str) or not text:
        return ""
    for part in text.split("\n\n"):
        if part.startswith(_HEADERS[engine]):
            return part
    return ""


def fidelity(result: ReplayResult, log, *, production_model: str = PRODUCTION_MODEL) -> FidelityReport:
    """Compare a replay's replies and nudges with the ones production logged.

    Parameters
    ----------
    result : :func:`thatchlab.replay.run`'s result on ``log``.
    log : the interaction log that was replayed, with ``logged_reply`` and
        (for nudges) ``logged_nudge``/``logged_items`` columns.
    production_model : the model production's replies were made with; the
        report expects exact agreement only when the replay's embedder is it.

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.replay import run
    >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1], "I am writing tests now": [1, 0.1]})
    >>> log = pd.DataFrame({"ts": ["2026-01-01T09:00:00Z", "2026-01-01T09:05:00Z"],
    ...     "session": ["s1", "s1"], "kind": ["prediction_update", "message"],
    ...     "matcher": ["writing tests", None], "statement": ["use pytest", None], "signal": ["confirm", None],
    ...     "text": [None, "I am writing tests now"],
    ...     "logged_reply": ['[created + confirm] "use pytest" confidence=0.58 (1/0)', None],
    ...     "logged_nudge": [None, "[thatch] User decision model\\n- [0.58 conf, 1 tests] When writing tests: you tend to use pytest"]})
    >>> rep = fidelity(run(log, embedder=emb), log)
    >>> rep.metrics["reply_agreement"], rep.metrics["nudge_agreement"], rep.exact_model
    (1.0, 1.0, False)
    """
    if not isinstance(result, ReplayResult):
        raise InputError(f"result: expected a ReplayResult, got {type(result).__name__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # run already warned about the order
        log = sort_by_time(check_log(log), "interaction log")
    ev = result.events
    if len(log) != len(ev):
        raise InputError(f"log: {len(log)} rows, but the replay has {len(ev)} events; pass the log that was replayed")
    engine, params = result.engine, result.params
    kinds = log["kind"].to_numpy(object)
    logged_reply = log["logged_reply"].to_numpy(object) if "logged_reply" in log.columns \
        else np.full(len(log), None, dtype=object)
    replayed = ev["reply"].to_numpy(object)
    # a call that never ran (skip_reason) has production's error text, not a reply to compare
    own = np.flatnonzero(np.isin(kinds, ENGINE_KINDS[engine]) & pd.notna(logged_reply)
                         & applied(log).to_numpy(dtype=bool))
    replies = pd.DataFrame({"position": own.astype(np.int64), "kind": kinds[own], "logged": logged_reply[own],
                            "replayed": replayed[own]})
    replies["match"] = [a == b for a, b in zip(replies["logged"], replies["replayed"])]

    nudge_rows = []
    if "logged_nudge" in log.columns or "logged_items" in log.columns:
        nu = result.nudges
        by_pos = {p: g for p, g in nu.groupby("position", sort=False)} if len(nu) else {}
        logged_nudge = log["logged_nudge"].to_numpy(object) if "logged_nudge" in log.columns else None
        logged_items = log["logged_items"].to_numpy(object) if "logged_items" in log.columns else None
        sessions = log["session"].to_numpy(object)
        for pos in np.flatnonzero(kinds == "message"):
            items = [it for it in (logged_items[pos] or [])] if logged_items is not None else []
            mine = [(it.get("statement"), it.get("matcher"), float(it.get("confidence", np.nan)),
                     int(it.get("tests", 0))) for it in items if it.get("engine", engine) == engine]
            g = by_pos.get(pos)
            rep = [] if g is None else [
                (s, m, float(to_fixed(c, 2)), int(n)) for s, m, c, n in
                zip(g["statement"], g["matcher_description"], g["confidence"], g["evidence_count"])]
            lo, re_ = [x[0] for x in mine], [x[0] for x in rep]
            union = set(lo) | set(re_)
            # recorded: a nudge text (empty when nothing surfaced; CSV reads that back as null, so the
            # parsed list, empty too, counts as well)
            known = (logged_nudge is not None and isinstance(logged_nudge[pos], str)) or (
                logged_items is not None and isinstance(logged_items[pos], list))
            block = _block(logged_nudge[pos], engine) if logged_nudge is not None else ""
            reply = replayed[pos] or ""
            lr, rr = _display_regime(mine, params), _display_regime(rep, params)
            nudge_rows.append({"position": int(pos), "session": sessions[pos], "known": bool(known),
                               "logged": block, "replayed": reply,
                               "match": block == reply, "logged_items": lo, "replayed_items": re_,
                               "items_match": lo == re_,
                               "jaccard": 1.0 if not union else len(set(lo) & set(re_)) / len(union),
                               "logged_regime": lr, "replayed_regime": rr, "regime_match": lr == rr})
    nudges = pd.DataFrame(nudge_rows, columns=["position", "session", "known", "logged", "replayed", "match",
                                               "logged_items",
                                               "replayed_items", "items_match", "jaccard", "logged_regime",
                                               "replayed_regime", "regime_match"])

    def mean(s):
        return float(np.mean(s.to_numpy(dtype=float))) if len(s) else float("nan")

    exact = same_model(result.embedder, production_model)
    # Only messages whose nudge production recorded (possibly empty: it surfaced nothing) are
    # compared; over none, agreement is unknown (NaN), never 1.0 or 0.5.
    known = nudges[nudges["known"].astype(bool)]
    metrics = {"n_replies": int(len(replies)), "n_logged_replies": int(len(replies)),
               "reply_agreement": mean(replies["match"]),
               "n_nudges": int(len(nudges)), "n_logged_nudges": int(len(known)),
               "nudge_agreement": mean(known["match"]), "nudge_item_agreement": mean(known["items_match"]),
               "item_jaccard": mean(known["jaccard"]), "regime_agreement": mean(known["regime_match"])}
    if exact:
        metrics["headline"] = metrics["reply_agreement"] if len(replies) else metrics["nudge_agreement"]
        note = (f"the replay used the production model ({result.embedder}): replies and nudges should agree "
                "exactly; a disagreement is a difference of state (start from --initial) or of parameters.")
    else:
        metrics["headline"] = metrics["regime_agreement"]
        note = (f"exact comparison needs the production model {production_model} (this replay used "
                f"{result.embedder!r}, whose cosines differ); read the regime agreement, which can carry over "
                "to another model — unless these are the very vectors the log was made with.")
    return FidelityReport(engine=engine, embedder=result.embedder, production_model=production_model,
                          exact_model=exact, replies=replies, nudges=nudges, metrics=metrics, note=note)
