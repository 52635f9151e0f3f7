"""What both replay paths share: the event and nudge columns, the result type, the log check,
the starting engine, and the frames the results are built into.

:mod:`thatchlab.replay.scoring` (the entry points) and the vectorised plan
(:mod:`thatchlab.replay._scoring_plan`) both build on it, so neither imports the other back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.core.display import RichDisplay
from thatchlab.core.errors import InputError
from thatchlab.core.params import ScoringParams
from thatchlab.embed import default_embedder
from thatchlab.logs.interaction import validate_interaction_log
from thatchlab.scoring import ITEM_COLUMNS, ScoringEngine
from thatchlab.scoring.behavior import BehaviorEngine
from thatchlab.scoring.prediction import PredictionEngine

__all__ = ["ReplayResult", "EVENT_COLUMNS", "NUDGE_COLUMNS", "ENGINE_KINDS", "LIST_KINDS", "VERDICT_KINDS",
           "replayed_kinds", "engine_class",
           "initial_engine", "check_log", "row_vector", "foreign_model_metrics", "events_frame", "nudges_frame"]

#: Columns of :attr:`ReplayResult.events`, one row per log event in log order.
EVENT_COLUMNS = ["position", "ts", "session", "store", "kind", "regime", "n_items", "n_foreign_model", "action",
                 "item_id", "matcher_id", "signal", "forecast", "confidence", "reply"]
#: Columns of :attr:`ReplayResult.nudges`, one row per surfaced item (messages and queries).
NUDGE_COLUMNS = ["position", "rank", "item_id", "statement", "matcher_id", "matcher_description", "store",
                 "score", "cosine", "weight", "confidence", "stored_confidence", "evidence_count"]
#: Log kinds each engine acts on (messages are read by both).
ENGINE_KINDS = {"prediction": ("prediction_update", "prediction_query", "prediction_delete", "prediction_list"),
                "behavior": ("behavior_codify", "behavior_feedback", "behavior_delete", "behavior_list")}
#: The list tool's kind per engine: its reply prints the whole store at that moment.
LIST_KINDS = {"prediction": "prediction_list", "behavior": "behavior_list"}
#: Pair-verdict tools per engine (thatch ``07ecf87`` on): they change no matcher, item or
#: count; under an older release their rows are ignored like another engine's.
VERDICT_KINDS = {"prediction": ("prediction_mark_checked",), "behavior": ()}


def replayed_kinds(engine: str, eng) -> tuple:
    """The log kinds a replay of ``engine`` applies with the engine ``eng`` (besides
    messages): :data:`ENGINE_KINDS`, plus :data:`VERDICT_KINDS` when ``eng``'s release
    has those tools."""
    return ENGINE_KINDS[engine] + (VERDICT_KINDS[engine] if eng.writes_home else ())


@dataclass
class ReplayResult(RichDisplay):
    """What :func:`run` returns.

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    events : pandas.DataFrame
        One row per log event in log order (:data:`EVENT_COLUMNS`): messages carry ``regime``,
        ``n_items`` and the nudge block in ``reply``; messages and queries carry
        ``n_foreign_model``, how many of the matchers they scored have a model tag other than the
        embedder's (:attr:`~thatchlab.scoring.Nudge.n_foreign_model`; NaN on other rows); writes
        carry ``action`` (``created``, ``created+confirm``, ``linked``, ``confirm``, ``deleted``,
        ``not_found``...), ``item_id``, ``signal``, ``forecast`` (stored confidence before a
        confirm/disconfirm/soft signal) and ``confidence`` (after) and the reply text; rows of the
        other engine have action ``ignored``, rows with a ``skip_reason`` (tool calls that never ran
        in production) action ``skipped``.
    nudges : pandas.DataFrame
        One row per surfaced item of a message or query (:data:`NUDGE_COLUMNS`), ``rank`` 0 first.
    tables : dict
        The final engine state (``stores, matchers, items, edges, provenance``).
    metrics : dict, default={}
        Dict of scalars (see :func:`thatchlab.metrics.scoring.replay_metrics`), plus
        :func:`foreign_model_metrics`.
    engine : str, default='prediction'
        ``"prediction"`` or ``"behavior"``.
    embedder : str or None, default=None
        The embedding model's name.
    params : ScoringParams, default=ScoringParams()
        The :class:`~thatchlab.core.params.ScoringParams` used; ``release`` (a property) is the
        thatch release replayed.
    path : str, default='vectorised'
        ``"events"`` or ``"vectorised"``.
    strict_model : bool, default=False
        Whether scans skipped rows of another model's tag (see
        :class:`~thatchlab.scoring.ScoringEngine`; False is production).
    diagnostics : list, default=[]
        Sentences explaining a mostly silent replay (more than half of the scored messages surfaced
        nothing): each message's best matcher cosine (median, 90th percentile) beside the threshold,
        and what to do about an embedder/threshold mismatch; empty otherwise.
    """

    events: pd.DataFrame
    nudges: pd.DataFrame
    tables: dict
    metrics: dict = field(default_factory=dict)
    engine: str = "prediction"
    embedder: str | None = None
    params: ScoringParams = field(default_factory=ScoringParams)
    path: str = "vectorised"
    strict_model: bool = False
    diagnostics: list = field(default_factory=list)

    def prior_signals(self) -> pd.DataFrame:
        """The signal log :class:`~thatchlab.fit.PriorFitter` fits from: ``item_id, signal, ts``.

        One row per provenance row of the final state, in insertion order
        (``create``/``codify`` rows included; the fitter counts the signals).

        Returns
        -------
        pandas.DataFrame
            Columns ``item_id, signal, ts``.

        See Also
        --------
        thatchlab.fit.PriorFitter : fits the population prior from these rows.
        """
        prov = self.tables["provenance"]
        fk = "prediction_id" if "prediction_id" in prov.columns else "behavior_id"
        out = prov.rename(columns={fk: "item_id", "created_at": "ts"})[["item_id", "signal", "ts"]]
        return out.reset_index(drop=True)

    @property
    def release(self) -> str:
        """The production release replayed (``params.release``): thatch's ``v0.1.30`` or ``07ecf87``."""
        return self.params.release

    def _display_(self):
        metrics = pd.DataFrame({"value": pd.Series(
            {k: v for k, v in self.metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)},
            dtype="float64")})
        facts = {"engine": self.engine, "release": f"thatch {self.release}", "path": self.path,
                 "embedder": self.embedder,
                 "events": f"{len(self.events):,}", "nudged items": f"{len(self.nudges):,}"}
        if self.diagnostics:
            facts["diagnostics"] = " ".join(self.diagnostics)
        return "Replay", facts, {"metrics": metrics, "events": self.events}

    def __repr__(self):
        return (f"ReplayResult(engine={self.engine!r}, release={self.release!r}, path={self.path!r}, "
                f"events={len(self.events)}, "
                f"nudges={len(self.nudges)}, embedder={self.embedder!r}, metrics={len(self.metrics)})")


def engine_class(engine: str):
    if engine not in ("prediction", "behavior"):
        raise InputError(f"engine: expected 'prediction' or 'behavior', got {engine!r}")
    return PredictionEngine if engine == "prediction" else BehaviorEngine


def initial_engine(initial, engine: str, embedder, params: ScoringParams,
                   strict_model: bool = False) -> ScoringEngine:
    """A fresh engine of kind ``engine`` holding ``initial``'s state (never modifying it).

    ``initial`` may be None, a :class:`~thatchlab.store.StoreContents`
    (``store.import_sqlite(path)``), an engine, or a dict of tables; the new
    engine scans with ``strict_model`` whatever ``initial``'s setting.
    """
    cls = engine_class(engine)
    project = "project"
    tables = None
    if initial is not None:
        obj = initial
        if not isinstance(obj, (dict, ScoringEngine)) and hasattr(obj, engine):
            obj = getattr(obj, engine)
        if isinstance(obj, ScoringEngine):
            if obj.config.kind != engine:
                raise InputError(f"initial: expected {engine} engine state, got a {obj.config.kind} engine")
            project = obj.project_store
            if embedder is None:  # the embedder as given (None: not loaded yet)
                embedder = obj.get_params(deep=False)["embedder"]
            tables = obj.tables
        elif isinstance(obj, dict):
            tables = obj
        elif obj is not None:
            raise InputError("initial: expected None, store.import_sqlite(...) contents, an engine or "
                             f"a dict of tables, got {type(initial).__name__}")
    if embedder is None:
        embedder = default_embedder()
    if tables is None:
        return cls(embedder=embedder, params=params, project_store=project, strict_model=strict_model)
    return cls.from_tables(tables, embedder=embedder, params=params, project_store=project,
                           strict_model=strict_model)


def check_log(log, source=None) -> pd.DataFrame:
    """The validated, typed log (a copy)."""
    return validate_interaction_log(log, source=source)


def row_vector(v):
    return None if v is None else np.asarray(v, dtype=np.float32)


def foreign_model_metrics(events: pd.DataFrame) -> dict:
    """Metrics of the rows scored with another model's tag, from :attr:`ReplayResult.events`.

    ``n_foreign_model_reads`` counts the messages and queries whose scan
    scored at least one matcher tagged with a model other than the
    embedder's; ``n_foreign_model_rows`` is the most such matchers one read
    scored. Both 0 means every cosine compared the embedder's own (or
    untagged) vectors.

    Parameters
    ----------
    events : pandas.DataFrame
        A replay's events, with their ``n_foreign_model`` column.

    Returns
    -------
    dict
        ``{"n_foreign_model_reads": int, "n_foreign_model_rows": int}``.

    Examples
    --------
    >>> ev = pd.DataFrame({"n_foreign_model": [float("nan"), 0.0, 2.0, 3.0]})
    >>> foreign_model_metrics(ev)
    {'n_foreign_model_reads': 2, 'n_foreign_model_rows': 3}
    """
    n = events["n_foreign_model"].to_numpy(np.float64)
    n = n[~np.isnan(n)]
    return {"n_foreign_model_reads": int(np.count_nonzero(n > 0)),
            "n_foreign_model_rows": int(n.max()) if n.size else 0}


def events_frame(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=EVENT_COLUMNS)
    df["position"] = df["position"].astype("int64")
    for col in ("n_items", "n_foreign_model", "forecast", "confidence"):
        df[col] = df[col].astype("float64")
    for col in ("session", "store", "kind", "regime", "action", "item_id", "matcher_id", "signal", "reply"):
        df[col] = df[col].astype(object).where(df[col].notna(), None)
    return df


def nudges_frame(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=NUDGE_COLUMNS)
    for col in ("position", "rank", "evidence_count"):
        df[col] = df[col].astype("int64")
    for col in ("score", "cosine", "weight", "confidence", "stored_confidence"):
        df[col] = df[col].astype("float64")
    for col in ("item_id", "statement", "matcher_id", "matcher_description", "store"):
        df[col] = df[col].astype(object)
    return df.reset_index(drop=True)


assert set(NUDGE_COLUMNS[2:]) <= set(ITEM_COLUMNS)
