"""The user decision model: "when X, the user tends to Y" (thatch's prediction engine).

:class:`PredictionEngine` is the scoring engine configured with the
prediction tables, the confirm/disconfirm/soft/create signals and the
prediction reply texts. Only user feedback moves confidence; untested
predictions stay at the prior and nothing decays with time.
"""

from __future__ import annotations

import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import InputError, ParamsError
from thatchlab.core.params import PREDICTION_SIGNALS
from thatchlab.core.time import resolve_now
from thatchlab.scoring.engine import (
    _ENGINE_PARAMS,
    _STORE_NOW_PARAMS,
    EngineConfig,
    Reply,
    ScoringEngine,
    _check_text,
    _stamps,
)
from thatchlab.scoring.results import WriteResult

__all__ = ["PredictionEngine", "PREDICTION_CONFIG", "DEDUP_PAIR_COLUMNS"]

#: Columns of :attr:`PredictionEngine.dedup_pairs` (production's ``prediction_dedup_pairs``).
DEDUP_PAIR_COLUMNS = ("store", "id_a", "id_b", "status", "checked_at")

PREDICTION_CONFIG = EngineConfig(
    kind="prediction", noun="prediction", plural="predictions",
    header="[thatch] User decision model", verb_untested="you may prefer", verb_tested="you tend to",
    signals=PREDICTION_SIGNALS, create_signal="create", created_word="created")


@fill_doc(engine_params=_ENGINE_PARAMS)
class PredictionEngine(ScoringEngine):
    """Predictions of the user's decisions, exactly as production thatch scores them.

    {engine_params}

    Attributes
    ----------
    state : EngineState
        The rows (read-only; only the tools change them).
    dedup_pairs : DataFrame
        The recorded pair verdicts.
    dedup_lookup : DedupLookup or None
        Optional source of approximate cosines for the dedup searches.

    See Also
    --------
    BehaviorEngine : The same engine over behaviors.

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1],
    ...                       "I am writing tests now": [1, 0.1]})
    >>> eng = PredictionEngine(emb)
    >>> eng.update("writing tests", "use pytest", "confirm", "said so",
    ...            now="2026-01-01T00:00:00Z").text
    '[created + confirm] "use pytest" confidence=0.58 (1/0)'
    >>> print(eng.nudge("I am writing tests now").text)
    [thatch] User decision model
    - [0.58 conf, 1 tests] When writing tests: you tend to use pytest
    """

    config = PREDICTION_CONFIG

    def __init__(self, embedder=None, params=None, project_store: str = "project", clock=None,
                 strict_model: bool = False):
        super().__init__(embedder=embedder, params=params, project_store=project_store, clock=clock,
                         strict_model=strict_model)
        # (store, id_a, id_b) -> (status, checked_at), in insertion order (SQLite rowid order)
        self._pairs: dict = {}

    @classmethod
    def from_tables(cls, tables: dict, *, embedder=None, params=None, project_store: str | None = None,
                    clock=None, strict_model: bool = False):
        """:meth:`ScoringEngine.from_tables`; a ``dedup_pairs`` frame in ``tables`` (columns
        :data:`DEDUP_PAIR_COLUMNS`, as :attr:`dedup_pairs` gives it) is taken as the verdicts.

        Parameters
        ----------
        tables : dict of DataFrame
            ``stores``, ``matchers``, ``items``, ``edges``, ``provenance`` and
            optionally ``dedup_pairs``.
        embedder : Embedder, default=None
            As for the constructor.
        params : ScoringParams, default=None
            As for the constructor.
        project_store : str, default=None
            The project store; taken from the tables when None.
        clock : callable, default=None
            As for the constructor.
        strict_model : bool, default=False
            As for the constructor.

        Returns
        -------
        PredictionEngine
            The rebuilt engine.

        Raises
        ------
        InputError
            When ``dedup_pairs`` misses a column.
        """
        eng = super().from_tables(tables, embedder=embedder, params=params, project_store=project_store,
                                  clock=clock, strict_model=strict_model)
        pairs = tables.get("dedup_pairs")
        if pairs is not None and len(pairs):
            missing = [c for c in DEDUP_PAIR_COLUMNS if c not in pairs.columns]
            if missing:
                raise InputError(f"dedup_pairs: missing column(s) {missing}")
            for store, a, b, status, at in zip(*(pairs[c].tolist() for c in DEDUP_PAIR_COLUMNS)):
                eng._pairs[(store, a, b)] = (status, at)
        return eng

    @property
    def dedup_pairs(self) -> pd.DataFrame:
        """The recorded pair verdicts (production's ``prediction_dedup_pairs`` from
        ``07ecf87`` on): ``store, id_a, id_b, status, checked_at``, ids in canonical order,
        rows in insertion order (a verdict given again updates its row in place)."""
        rows = [(*key, *value) for key, value in self._pairs.items()]
        return pd.DataFrame(rows, columns=list(DEDUP_PAIR_COLUMNS), dtype=object)

    def mark_checked(self, id_a: str, id_b: str, status: str, store=None, now=None) -> Reply:
        """The ``prediction_mark_checked`` tool (release ``07ecf87`` on): record a verdict on a pair.

        The two ids are stored in canonical (sorted) order, so ``(a, b)`` and
        ``(b, a)`` are one row of :attr:`dedup_pairs`; a second verdict on a pair
        replaces its status and ``checked_at`` (the time of ``now``, to the
        second, as production's ``strftime('%Y-%m-%dT%H:%M:%SZ','now')`` writes
        it). ``store`` is resolved like a write's (default the project store;
        ``"unknown"`` is ``global``). Production reads the table only to skip
        adjudicated pairs in its hygiene duplicate scan; nudges, queries and
        writes never read it. The ids are not checked against the items
        (production's upsert does not check them either).

        The reply is ``[marked <status>]``: the part of production's reply its
        own QA case pins (sysread/thatch tests/qa/auto/uc-113-prediction-dedup.ts);
        the full reply text of src/tool-defs.ts @2ed97f2a could not be read
        (see the release notes in the documentation). ``reply.result.action`` is
        ``"marked"``. Releases before ``07ecf87`` have no such tool: a
        :class:`~thatchlab.core.errors.ParamsError` says so.

        Parameters
        ----------
        id_a, id_b : str
            The pair's item ids (any order).
        status : str
            The verdict.
        store : str, default=None
            The store; resolved like a write's.
        now : time, default=None
            The time of the verdict; the engine's clock when None.

        Returns
        -------
        Reply
            ``[marked <status>]``.

        Raises
        ------
        ParamsError
            Under a release before ``07ecf87``.
        InputError
            An empty id, status or store.

        Examples
        --------
        >>> from thatchlab.embed import LookupEmbedder
        >>> eng = PredictionEngine(LookupEmbedder({"x": [1, 0]}))
        >>> eng.mark_checked("b-id", "a-id", "distinct", now="2026-10-02T08:00:00.250Z").text
        '[marked distinct]'
        >>> eng.dedup_pairs.values.tolist()
        [['project', 'a-id', 'b-id', 'distinct', '2026-10-02T08:00:00Z']]
        """
        if not self.writes_home:
            raise ParamsError(f"prediction_mark_checked: release {self.params.release!r} has no such tool "
                              "(it exists from '07ecf87' on)")
        for name, value in (("id_a", id_a), ("id_b", id_b), ("status", status)):
            _check_text(name, value)
        store = self._target_store(store)
        checked_at = _stamps(resolve_now(now, self.clock))[1]
        a, b = sorted((id_a, id_b), key=_utf16)
        self._pairs[(store, a, b)] = (status, checked_at)
        result = WriteResult(action="marked", store=store, reply_prefix=f"[marked {status}]")
        return Reply(text=result.text, action="marked", store=store, result=result)

    @fill_doc(store_now_params=_STORE_NOW_PARAMS)
    def update(self, matcher: str, prediction: str, signal: str, rationale=None, store=None,
               now=None, *, vectors=None) -> Reply:
        """The ``prediction_update`` tool: one transaction of matcher dedup,
        prediction dedup, link, signal and provenance.

        Parameters
        ----------
        matcher : str
            The situation the prediction applies to.
        prediction : str
            The predicted decision.
        signal : str
            One of ``create``, ``confirm``, ``disconfirm`` or ``soft``.
        rationale : str, default=None
            Recorded with the item and in the provenance.
        {store_now_params}
        vectors : pair of array-like, default=None
            The passage vectors of ``(matcher, prediction)`` when already
            embedded (replays).

        Returns
        -------
        Reply
            The tool's reply; ``reply.result`` is the
            :class:`~thatchlab.scoring.WriteResult`.
        """
        return self.write(matcher, prediction, signal, rationale, store, now, vectors=vectors)


def _utf16(text: str) -> bytes:
    """Sort key of JavaScript's default ``Array.prototype.sort`` on strings (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")
