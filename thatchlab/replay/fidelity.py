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

:func:`fidelity_by_release` asks which thatch release wrote a log: it
replays the log under every known release (or the ones named) and reports
each one's agreement, and the release the log matches.

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
from thatchlab.core.params import ScoringParams, release_names, resolve_release
from thatchlab.logs import applied, sort_by_time
from thatchlab.replay.scoring import ENGINE_KINDS, ReplayResult, check_log
from thatchlab.replay.scoring import run as _run

__all__ = ["fidelity", "FidelityReport", "PRODUCTION_MODEL", "same_model", "fidelity_by_release",
           "ReleaseFidelity", "MATCH_BAR", "RELEASE_COLUMNS"]

#: The embedding model production thatch runs (transformers.js, mean pooling).
PRODUCTION_MODEL = "Xenova/bge-small-en-v1.5"
_HEADERS = {"prediction": "[thatch] User decision model", "behavior": "[thatch] Situational behaviors"}


def same_model(name, production: str = PRODUCTION_MODEL) -> bool:
    """Whether an embedder's ``name`` is the production model (any publisher or path of the same weights).

    Parameters
    ----------
    name : str or None
        An embedder's name (a model id or a local path).
    production : str, default=PRODUCTION_MODEL
        The production model.

    Returns
    -------
    bool
        True when both name the same weights.

    Examples
    --------
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

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    engine, embedder : str
        The replay's engine and embedder name.
    production_model : str
        The model production's replies were made with.
    exact_model : bool
        Whether the replay used that model (exact agreement is then expected).
    replies : pandas.DataFrame
        One row per compared tool call: ``position, kind, logged, replayed, match``.
    nudges : pandas.DataFrame
        One row per message: ``position, session``, ``known`` (production's nudge for it was
        recorded: compared), ``logged, replayed, match``, ``logged_items, replayed_items,
        items_match, jaccard, logged_regime``, ``replayed_regime, regime_match`` (item lists are
        statements).
    metrics : dict, default={}
        ``n_replies``, ``n_logged_replies`` (the tool calls compared: the engine's calls that ran
        and have a logged reply), ``reply_agreement``, ``n_nudges`` (messages), ``n_logged_nudges``
        (messages whose nudge was recorded, empty or not: the ones compared), ``nudge_agreement``,
        ``nudge_item_agreement``, ``item_jaccard``, ``regime_agreement`` — every agreement NaN when
        its count of logged replies or nudges is 0 — and ``headline``, the number to read first.
    note : str, default=''
        One sentence on what the numbers can show.
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
        """The report as a few lines of text: agreement of replies, nudges and regimes, and the note.

        Returns
        -------
        str
            One line per comparison, then the note.
        """
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
    result : ReplayResult
        :func:`thatchlab.replay.run`'s result on ``log``.
    log : pandas.DataFrame
        The interaction log that was replayed, with ``logged_reply`` and (for nudges)
        ``logged_nudge``/``logged_items`` columns.
    production_model : str, default=PRODUCTION_MODEL
        The model production's replies were made with; the report expects exact agreement only
        when the replay's embedder is it.

    Returns
    -------
    FidelityReport
        The compared replies and nudges, the agreement metrics and a note on how to read them.

    Raises
    ------
    InputError
        ``result`` is not a :class:`ReplayResult`, or ``log`` does not have its events' length.

    See Also
    --------
    fidelity_by_release : which release wrote the log.

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
    replayed = ev["reply"].to_numpy(object)
    replies = _reply_rows(log, replayed, result.engine)
    nudges = _nudge_rows(result, log, replayed)
    exact = same_model(result.embedder, production_model)
    metrics = _fidelity_metrics(replies, nudges)
    if exact:
        metrics["headline"] = metrics["reply_agreement"] if len(replies) else metrics["nudge_agreement"]
        note = (f"the replay used the production model ({result.embedder}): replies and nudges should agree "
                "exactly; a disagreement is a difference of state (start from --initial) or of parameters.")
    else:
        metrics["headline"] = metrics["regime_agreement"]
        note = (f"exact comparison needs the production model {production_model} (this replay used "
                f"{result.embedder!r}, whose cosines differ); read the regime agreement, which can carry over "
                "to another model — unless these are the very vectors the log was made with.")
    return FidelityReport(engine=result.engine, embedder=result.embedder, production_model=production_model,
                          exact_model=exact, replies=replies, nudges=nudges, metrics=metrics, note=note)


_NUDGE_COLUMNS = ["position", "session", "known", "logged", "replayed", "match", "logged_items",
                  "replayed_items", "items_match", "jaccard", "logged_regime", "replayed_regime",
                  "regime_match"]


def _reply_rows(log: pd.DataFrame, replayed, engine: str) -> pd.DataFrame:
    """The engine's logged replies beside the replayed ones."""
    kinds = log["kind"].to_numpy(object)
    logged_reply = log["logged_reply"].to_numpy(object) if "logged_reply" in log.columns \
        else np.full(len(log), None, dtype=object)
    # a call that never ran (skip_reason) has production's error text, not a reply to compare
    own = np.flatnonzero(np.isin(kinds, ENGINE_KINDS[engine]) & pd.notna(logged_reply)
                         & applied(log).to_numpy(dtype=bool))
    replies = pd.DataFrame({"position": own.astype(np.int64), "kind": kinds[own], "logged": logged_reply[own],
                            "replayed": replayed[own]})
    replies["match"] = [a == b for a, b in zip(replies["logged"], replies["replayed"])]
    return replies


def _nudge_rows(result: ReplayResult, log: pd.DataFrame, replayed) -> pd.DataFrame:
    """One row per message: the logged nudge block and items beside the replayed ones."""
    nudge_rows = []
    if "logged_nudge" in log.columns or "logged_items" in log.columns:
        nu = result.nudges
        by_pos = {p: g for p, g in nu.groupby("position", sort=False)} if len(nu) else {}
        logged_nudge = log["logged_nudge"].to_numpy(object) if "logged_nudge" in log.columns else None
        logged_items = log["logged_items"].to_numpy(object) if "logged_items" in log.columns else None
        sessions = log["session"].to_numpy(object)
        for pos in np.flatnonzero(log["kind"].to_numpy(object) == "message"):
            nudge_rows.append(_nudge_row(result, pos, sessions[pos], by_pos.get(pos), logged_nudge,
                                         logged_items, replayed[pos] or ""))
    return pd.DataFrame(nudge_rows, columns=_NUDGE_COLUMNS)


def _nudge_row(result: ReplayResult, pos, session, g, logged_nudge, logged_items, reply: str) -> dict:
    """One message's comparison: text, statements surfaced (and their Jaccard) and displayed regime."""
    engine, params = result.engine, result.params
    items = [it for it in (logged_items[pos] or [])] if logged_items is not None else []
    mine = [(it.get("statement"), it.get("matcher"), float(it.get("confidence", np.nan)),
             int(it.get("tests", 0))) for it in items if it.get("engine", engine) == engine]
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
    lr, rr = _display_regime(mine, params), _display_regime(rep, params)
    return {"position": int(pos), "session": session, "known": bool(known),
            "logged": block, "replayed": reply,
            "match": block == reply, "logged_items": lo, "replayed_items": re_,
            "items_match": lo == re_,
            "jaccard": 1.0 if not union else len(set(lo) & set(re_)) / len(union),
            "logged_regime": lr, "replayed_regime": rr, "regime_match": lr == rr}


def _fidelity_metrics(replies: pd.DataFrame, nudges: pd.DataFrame) -> dict:
    """Agreement shares of the replies and of the recorded nudges."""
    def mean(s):
        return float(np.mean(s.to_numpy(dtype=float))) if len(s) else float("nan")

    # Only messages whose nudge production recorded (possibly empty: it surfaced nothing) are
    # compared; over none, agreement is unknown (NaN), never 1.0 or 0.5.
    known = nudges[nudges["known"].astype(bool)]
    return {"n_replies": int(len(replies)), "n_logged_replies": int(len(replies)),
            "reply_agreement": mean(replies["match"]),
            "n_nudges": int(len(nudges)), "n_logged_nudges": int(len(known)),
            "nudge_agreement": mean(known["match"]), "nudge_item_agreement": mean(known["items_match"]),
            "item_jaccard": mean(known["jaccard"]), "regime_agreement": mean(known["regime_match"])}


#: The pooled agreement a release needs for :func:`fidelity_by_release` to say the log matches it.
MATCH_BAR = 0.95
#: Columns of :attr:`ReleaseFidelity.table`, one row per release.
RELEASE_COLUMNS = ["release", "n_logged_replies", "reply_agreement", "n_logged_nudges", "nudge_agreement",
                   "nudge_item_agreement", "regime_agreement", "n_compared", "agreement"]


@dataclass
class ReleaseFidelity:
    """What :func:`fidelity_by_release` returns.

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per release replayed (:data:`RELEASE_COLUMNS`), oldest first: the engines' logged
        replies and recorded nudges compared, and the shares that agree exactly
        (``reply_agreement``, ``nudge_agreement``), that surfaced the same statements
        (``nudge_item_agreement``) and the same displayed regime (``regime_agreement``), pooled over
        the engines; ``n_compared`` = replies + nudges compared and ``agreement`` the share of them
        that agree exactly (NaN when nothing was compared).
    reports : dict
        ``{(release, engine): FidelityReport}``, every comparison made.
    verdict : str
        ``"match"`` (one release agrees best and reaches ``match_bar``), ``"weak"`` (one release
        agrees best, below the bar), ``"tie"`` (two or more agree best, equally) or ``"unknown"``
        (the log holds nothing to compare).
    best : str or None
        The release the log matches best when one does (``"match"`` or ``"weak"``), None on a tie or
        when nothing was compared.
    tied : tuple
        The releases sharing the best agreement (one name unless ``"tie"``).
    statement : str
        One sentence saying which release wrote the log, or why that cannot be said.
    exact_model : bool
        Whether the replays used production's model (exact agreement is then expected).
    match_bar : float, default=MATCH_BAR
        The pooled agreement the best release needed to match (:data:`MATCH_BAR` by default).
    """

    table: pd.DataFrame
    reports: dict
    verdict: str
    best: str | None
    tied: tuple
    statement: str
    exact_model: bool
    match_bar: float = MATCH_BAR

    def summary(self) -> str:
        """The table as text, one line per release, then the statement.

        Returns
        -------
        str
            The aligned table and the statement.
        """
        def pct(v):
            return "n/a" if v != v else f"{v:.0%}"

        head = f"{'release':<10} {'replies':>12} {'nudges':>12} {'items':>6} {'regimes':>8} {'agreement':>10}"
        lines = [head]
        for r in self.table.itertuples(index=False):
            lines.append(f"{r.release:<10} {pct(r.reply_agreement):>5} of {r.n_logged_replies:<4}"
                         f"{pct(r.nudge_agreement):>5} of {r.n_logged_nudges:<4}{pct(r.nudge_item_agreement):>6} "
                         f"{pct(r.regime_agreement):>8} {pct(r.agreement):>10}")
        lines.append(self.statement)
        return "\n".join(lines)

    def __repr__(self):
        return f"ReleaseFidelity(verdict={self.verdict!r}, best={self.best!r}, tied={self.tied!r})"


def _engines_of(log: pd.DataFrame) -> tuple:
    """The engines whose rows or recorded nudge blocks the log holds (prediction when it holds neither)."""
    kinds = set(log["kind"].tolist())
    nudges = " ".join(v for v in log["logged_nudge"].tolist() if isinstance(v, str)) \
        if "logged_nudge" in log.columns else ""
    found = tuple(e for e in ("prediction", "behavior")
                  if kinds & set(ENGINE_KINDS[e]) or _HEADERS[e] in nudges)
    return found or ("prediction",)


def fidelity_by_release(log, embedder=None, *, releases=None, engines=None, params: ScoringParams | None = None,
                        initial=None, path: str = "vectorised", match_bar: float = MATCH_BAR,
                        production_model: str = PRODUCTION_MODEL) -> ReleaseFidelity:
    """Which thatch release wrote this log: replay it under each release and compare with what production logged.

    Parameters
    ----------
    log : pandas.DataFrame
        An interaction log with what production answered (``logged_reply``, ``logged_nudge`` or
        ``logged_items``), e.g. from :mod:`thatchlab.logs.ingest`.
    embedder : Embedder, default=None
        The embedder of every replay (None: the bundled model); exact agreement needs production's
        model or the vectors the log was made with.
    releases : str or sequence of str, default=None
        The thatch releases to try (names :func:`~thatchlab.core.params.resolve_release` accepts;
        None: every known release).
    engines : str or sequence of str, default=None
        ``"prediction"``, ``"behavior"`` or both (None: the engines whose tool calls or nudge
        blocks the log holds).
    params : ScoringParams, default=None
        The other parameters of every replay (production's defaults); only ``release`` changes.
    initial : StoreContents or ScoringEngine or dict, default=None
        As for :func:`thatchlab.replay.run`.
    path : {"vectorised", "events"}, default="vectorised"
        As for :func:`thatchlab.replay.run`.
    match_bar : float, default=MATCH_BAR
        The pooled agreement the best release needs for the log to match it.
    production_model : str, default=PRODUCTION_MODEL
        As for :func:`fidelity`.

    Returns
    -------
    ReleaseFidelity
        Each release's agreement, the verdict and one sentence saying it.

    Raises
    ------
    InputError
        ``match_bar`` is not a share, ``releases`` is empty, or an engine is unknown.
    ReleaseError
        A release name is not known (listing the known ones).

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1], "[chat] writing tests": [1, 0.1]})
    >>> log = pd.DataFrame({"ts": ["2026-01-01T09:00:00Z", "2026-01-01T09:05:00Z"],
    ...     "session": ["s1", "s1"], "kind": ["prediction_update", "message"],
    ...     "matcher": ["writing tests", None], "statement": ["use pytest", None], "signal": ["confirm", None],
    ...     "text": [None, "[chat] writing tests"],
    ...     "logged_reply": ['[created + confirm] "use pytest" confidence=0.58 (1/0)', None],
    ...     "logged_nudge": [None, ""]})
    >>> res = fidelity_by_release(log, emb)
    >>> res.table[["release", "agreement"]].values.tolist()
    [['v0.1.30', 0.5], ['07ecf87', 1.0]]
    >>> res.verdict, res.best
    ('match', '07ecf87')
    """
    params = ScoringParams.coerce(params)
    if not 0 <= float(match_bar) <= 1:
        raise InputError(f"match_bar: expected a share in [0, 1], got {match_bar!r}")
    names = _release_names(releases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # one time-order warning is enough: the caller's own
        log = sort_by_time(check_log(log), "interaction log")
    engines = _engines_asked(log, engines)
    reports, rows = {}, []
    for name in names:
        rows.append(_release_row(name, log, engines, reports, embedder=embedder, initial=initial, path=path,
                                 params=params.replace(release=name), production_model=production_model))
    order = {n: i for i, n in enumerate(release_names("thatch"))}
    table = pd.DataFrame(sorted(rows, key=lambda r: order[r["release"]]), columns=RELEASE_COLUMNS)
    exact = all(rep.exact_model for rep in reports.values())
    verdict, best, tied, statement = _verdict(table, float(match_bar))
    if not exact and verdict != "unknown":
        statement += (f" The replays used {next(iter(reports.values())).embedder!r}, not production's model "
                      f"{production_model}: a disagreement may come from the vectors, unless these are the "
                      "vectors the log was made with.")
    return ReleaseFidelity(table=table, reports=reports, verdict=verdict, best=best, tied=tied,
                           statement=statement, exact_model=exact, match_bar=float(match_bar))


def _release_names(releases) -> list:
    """The thatch releases to try, resolved and without repeats (every known one for None)."""
    names = list(release_names("thatch")) if releases is None else \
        list(dict.fromkeys(resolve_release("thatch", r) for r in ([releases] if isinstance(releases, str)
                                                                   else releases)))
    if not names:
        raise InputError("releases: expected at least one thatch release, got none")
    return names


def _engines_asked(log: pd.DataFrame, engines) -> tuple:
    """The engines to replay: those asked for (checked), else those the log holds."""
    if engines is None:
        engines = _engines_of(log)
    elif isinstance(engines, str):
        engines = (engines,)
    for e in engines:
        if e not in ENGINE_KINDS:
            raise InputError(f"engines: expected 'prediction' and/or 'behavior', got {e!r}")
    return engines


def _release_row(name: str, log, engines, reports: dict, *, params, embedder, initial, path,
                 production_model) -> dict:
    """Replay the log under one release, engine by engine; the agreement pooled over the engines
    (each engine's report is added to ``reports``)."""
    sums = dict.fromkeys(("replies", "reply_match", "nudges", "nudge_match", "item_match", "regime_match"), 0)
    for engine in engines:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # silence diagnostics are the replay's business
            res = _run(log, engine, params=params, embedder=embedder, initial=initial, path=path)
            rep = fidelity(res, log, production_model=production_model)
        reports[(name, engine)] = rep
        known = rep.nudges[rep.nudges["known"].astype(bool)]
        sums["replies"] += len(rep.replies)
        sums["reply_match"] += int(rep.replies["match"].sum())
        sums["nudges"] += len(known)
        sums["nudge_match"] += int(known["match"].sum())
        sums["item_match"] += int(known["items_match"].sum())
        sums["regime_match"] += int(known["regime_match"].sum())

    def share(num, den):
        return num / den if den else float("nan")

    compared = sums["replies"] + sums["nudges"]
    return {"release": name, "n_logged_replies": sums["replies"],
            "reply_agreement": share(sums["reply_match"], sums["replies"]),
            "n_logged_nudges": sums["nudges"], "nudge_agreement": share(sums["nudge_match"], sums["nudges"]),
            "nudge_item_agreement": share(sums["item_match"], sums["nudges"]),
            "regime_agreement": share(sums["regime_match"], sums["nudges"]),
            "n_compared": compared, "agreement": share(sums["reply_match"] + sums["nudge_match"], compared)}


def _verdict(table: pd.DataFrame, bar: float) -> tuple:
    """``(verdict, best, tied, statement)`` from the releases' pooled agreements."""
    if not len(table) or int(table["n_compared"].max()) == 0:
        return ("unknown", None, (), "Nothing to compare: the log holds no logged replies or recorded nudges of "
                "thatch's engines, so it cannot say which release wrote it.")
    agree = table["agreement"].to_numpy(dtype=float)
    top = float(np.nanmax(agree))
    tied = tuple(table["release"][np.isclose(agree, top, rtol=0, atol=1e-12)].tolist())
    others = ", ".join(f"{r} {a:.0%}" for r, a in zip(table["release"], agree) if r not in tied)
    rest = f" ({others})" if others else ""
    if len(tied) > 1:
        return ("tie", None, tied, f"Releases {' and '.join(tied)} agree equally with the log ({top:.0%} of "
                f"{int(table['n_compared'].max())} replies and nudges){rest}: it does not tell them apart.")
    best = tied[0]
    if top >= bar:
        return ("match", best, tied, f"The log matches thatch {best}: {top:.0%} of its replies and nudges agree"
                f"{rest}.")
    return ("weak", best, tied, f"No known release matches the log well: the closest, {best}, agrees on "
            f"{top:.0%} of its replies and nudges (below {bar:.0%}){rest}.")
