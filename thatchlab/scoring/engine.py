"""The shared four-table scoring engine behind predictions and behaviors.

Production thatch (its prediction and behavior engines) keeps matchers ("when"), items ("what"),
weighted matcher→item edges and a provenance trail, and scores an item for a
prompt as ``r3(r3(cosine) × edge.weight × confidence)``, where confidence is
the Bayesian posterior ``(c + K·P0) / (c + d + K)`` of its confirm and
disconfirm counts. :class:`ScoringEngine` reproduces every rule of that engine
exactly — rounding, ordering, ties, reply texts — over the public
:class:`~thatchlab.scoring.EngineState`; every write produces a
:class:`~thatchlab.scoring.WriteResult` its reply is formatted from.
:mod:`thatchlab.scoring.prediction` and :mod:`thatchlab.scoring.behavior` configure it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import EmbeddingError, InputError, ParamsError
from thatchlab.core.jsfmt import js_number, r3, to_fixed
from thatchlab.core.params import ParamsMixin, ScoringParams, at_least
from thatchlab.core.time import resolve_now
from thatchlab.core.vectors import MARGIN
from thatchlab.embed import default_embedder
from thatchlab.scoring._config import EngineConfig
from thatchlab.scoring._rank import js_round1, rank_columns
from thatchlab.scoring.confidence import evidence_count, posterior_confidence
from thatchlab.scoring.results import (
    ITEM_COLUMNS,
    EdgeRow,
    Nudge,
    Reply,
    WriteResult,
    fixed2,
    items_frame,
)
from thatchlab.scoring.rules import nudge_line, query_line
from thatchlab.scoring.state import ID_NAMESPACE, EngineState, deterministic_id, prov_text

__all__ = ["posterior_confidence", "evidence_count", "deterministic_id", "ID_NAMESPACE",
           "EngineConfig", "ScoringEngine", "Reply", "Nudge", "ITEM_COLUMNS"]

# the Parameters and Returns of the engine's two embedding methods, written once (filled in by fill_doc)
_EMBED_SECTIONS = """
Parameters
----------
texts : iterable of str
    The texts.

Returns
-------
ndarray
    float32 of shape (n, dim).
"""


#: Signals that change an item's counts (the others are confidence-neutral).
_COUNTING_SIGNALS = ("confirm", "disconfirm", "soft")


# constructor parameters every scoring engine documents alike (filled in by fill_doc)
_EMBEDDER_PARAM = """
embedder : Embedder, default=None
    An :class:`~thatchlab.embed.Embedder`; ``None`` loads the bundled
    model on first use.
"""
_STORE_CLOCK_PARAMS = """
project_store : str, default="project"
    The store writes go to by default; reads search it and ``global``.
clock : callable, default=None
    Returns the current time, used when ``now`` is not given.
"""
#: ``store`` and ``now`` of the tools that write.
_STORE_NOW_PARAMS = """
store : str, default=None
    The target store; the project store when None.
now : time, default=None
    The time of the write; the engine's clock when None.
"""
#: The whole Parameters section of the engines of one kind (``PredictionEngine``, ``BehaviorEngine``).
_ENGINE_PARAMS = ("Parameters\n----------\n" + _EMBEDDER_PARAM.lstrip("\n")
                  + "params : ScoringParams, default=None\n"
                  "    The release and the scoring parameters; the defaults when None.\n"
                  + _STORE_CLOCK_PARAMS.lstrip("\n")
                  + "strict_model : bool, default=False\n"
                  "    Also skip rows tagged with another model than the embedder's in every\n"
                  "    cosine scan (a research mode; production compares by dimension only).\n")

@fill_doc(embedder_param=_EMBEDDER_PARAM, store_clock_params=_STORE_CLOCK_PARAMS)
class ScoringEngine(ParamsMixin):
    """The generic engine over stores, matchers, items, edges and provenance.

    Parameters
    ----------
    {embedder_param}
    params : ScoringParams, default=None
        :class:`~thatchlab.core.params.ScoringParams`; the defaults when None.
    {store_clock_params}
    strict_model : bool, default=False
        Production compares vectors by dimension only: every cosine scan
        (nudges, queries, the matcher and item dedup of writes, feedback and
        delete lookups) uses each row with a vector of the query's dimension,
        whatever its ``model`` tag. ``True`` is a research mode that also
        skips rows tagged with a model other than the embedder's (untagged
        rows stay usable). Nudges and queries report how many of the rows
        they scored carry another model's tag
        (:attr:`~thatchlab.scoring.Nudge.n_foreign_model`; always 0 when strict).

    Attributes
    ----------
    state : EngineState
        The rows (read-only; only the tools change them).
    tables : dict of DataFrame
        The state with production columns.
    dedup_lookup : DedupLookup or None
        Optional source of approximate cosines for the dedup searches (None:
        the engine scans its own vectors). Decisions are the same either way.
    embedder : Embedder
        The embedder (the bundled model is loaded on first use).
    model_name : str or None
        The embedder's name.

    Raises
    ------
    ParamsError
        When ``params`` is not :class:`~thatchlab.core.params.ScoringParams`.
    InputError
        An empty ``project_store`` or a non-bool ``strict_model``.
    """

    config: EngineConfig

    def __init__(self, embedder=None, params: ScoringParams | None = None,
                 project_store: str = "project", clock=None, strict_model: bool = False):
        if params is None:
            params = ScoringParams()
        if not isinstance(params, ScoringParams):
            raise ParamsError(f"params: expected ScoringParams, got {type(params).__name__}")
        _check_text("project_store", project_store)
        self._embedder = embedder
        self.params = params
        self.project_store = project_store
        self.clock = clock
        self.strict_model = _check_bool("strict_model", strict_model)
        self.dedup_lookup = None
        self._state = EngineState(self.config.tables)

    @property
    def embedder(self):
        """The embedder; the bundled model is loaded on first use when none was given."""
        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder

    @property
    def model_name(self) -> str | None:
        """The embedder's ``name`` (None when there is none, or no embedder was given yet)."""
        return getattr(self._embedder, "name", None) if self._embedder is not None else None

    @property
    def scan_model(self) -> str | None:
        """The model tag a cosine scan requires: None (any tag, production) unless
        :attr:`strict_model` is set, then the embedder's name."""
        return self.model_name if self.strict_model else None

    @property
    def state(self) -> EngineState:
        """The engine's rows: :class:`~thatchlab.scoring.EngineState` (read-only)."""
        return self._state

    @property
    def tables(self) -> dict:
        """The state as DataFrames with production columns (see :attr:`EngineState.tables`)."""
        return self._state.tables

    @classmethod
    def from_tables(cls, tables: dict, *, embedder=None, params=None, project_store: str | None = None,
                    clock=None, strict_model: bool = False):
        """Rebuild an engine from DataFrames shaped like :attr:`tables` (e.g. read from a
        production store).

        Parameters
        ----------
        tables : dict of DataFrame
            ``stores``, ``matchers``, ``items``, ``edges`` and ``provenance``
            as :attr:`tables` gives them. Inputs are copied, not modified.
            Rows keep their ``model`` tags, which filter nothing unless
            ``strict_model``.
        embedder : Embedder, default=None
            As for the constructor.
        params : ScoringParams, default=None
            As for the constructor.
        project_store : str, default=None
            The project store (writes go to it; nudges and queries search it
            and ``global``). When None it is taken from the tables: the one
            store other than ``global`` that their matchers and items use, so
            a rebuilt engine nudges the rows it holds. When those rows use
            several such stores, or none, it is ``"project"`` (the
            constructor's default); name it to choose.
        clock : callable, default=None
            As for the constructor.
        strict_model : bool, default=False
            As for the constructor.

        Returns
        -------
        ScoringEngine
            An engine of the class it is called on, holding the rows.

        Examples
        --------
        >>> from thatchlab.embed import LookupEmbedder
        >>> from thatchlab.scoring import PredictionEngine
        >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]})
        >>> eng = PredictionEngine(emb, project_store="my-repo")
        >>> _ = eng.update("writing tests", "use pytest", "confirm", now="2026-01-01T00:00:00Z")
        >>> PredictionEngine.from_tables(eng.tables, embedder=emb).project_store
        'my-repo'
        """
        if project_store is None:
            project_store = _project_store_of(tables)
        eng = cls(embedder=embedder, params=params, project_store=project_store, clock=clock,
                  strict_model=strict_model)
        eng._state = EngineState.from_tables(tables, eng.config.tables)
        return eng

    # get_params/set_params (ParamsMixin): the constructor arguments and, by name, the
    # ScoringParams fields (``set_params(k=3)``); the embedder as given (None until loaded)
    _params_attr = "params"
    _param_attrs = {"embedder": "_embedder"}

    def _validate_params(self):
        _check_text("project_store", self.project_store)
        _check_bool("strict_model", self.strict_model)


    # ------------------------------------------------------------ embedding
    @fill_doc(embed_sections=_EMBED_SECTIONS)
    def embed_queries(self, texts) -> np.ndarray:
        """Query vectors of ``texts`` (the embedder's query prefix applies), checked:
        float32 of shape (n, dim), finite.

        {embed_sections}

        Raises
        ------
        EmbeddingError
            When the embedder returns another shape, a non-finite value or another dimension
            than its ``dim``.

        See Also
        --------
        embed_passages : Without the query prefix.
        """
        return self._embed(list(texts), "query")

    @fill_doc(embed_sections=_EMBED_SECTIONS)
    def embed_passages(self, texts) -> np.ndarray:
        """Passage vectors of ``texts`` (no prefix), as matcher and item texts are
        embedded; checked like :meth:`embed_queries`.

        {embed_sections}

        Raises
        ------
        EmbeddingError
            As for :meth:`embed_queries`.

        See Also
        --------
        embed_queries : With the query prefix.
        """
        return self._embed(list(texts), "passage")

    def _embed(self, texts, kind: str) -> np.ndarray:
        emb = self.embedder
        arr = emb.embed_queries(list(texts)) if kind == "query" else emb.embed_passages(list(texts))
        arr = np.asarray(arr)
        if arr.ndim != 2 or arr.shape[0] != len(texts):
            raise EmbeddingError(f"embedder {getattr(emb, 'name', emb)!r} returned shape {arr.shape} "
                                 f"for {len(texts)} text(s); expected ({len(texts)}, dim)")
        if not np.isfinite(arr).all():
            bad = [t for t, row in zip(texts, arr) if not np.isfinite(row).all()][0]
            raise EmbeddingError(f"embedding of {bad!r} contains NaN or infinite values")
        dim = getattr(emb, "dim", None)
        if isinstance(dim, (int, np.integer)) and arr.shape[1] != dim:
            raise EmbeddingError(f"embedding dimension {arr.shape[1]} differs from the embedder's "
                                 f"dim {dim}")
        return arr.astype(np.float32, copy=False)

    # ------------------------------------------------------------ searches
    def _nearest(self, table: str, text: str, vector: np.ndarray, stores) -> int | None:
        """Position of the nearest row of ``table`` in ``stores`` with raw cosine ≥
        dedup_cosine (the highest; first on ties), or None."""
        st = self._state
        if st.scan_rows(table, len(vector), stores=stores, model=self.scan_model)[1] == 0:
            return None
        lookup = self.dedup_lookup
        approx = None
        if lookup is not None:
            positions = st.scan_positions(table, len(vector), stores=stores, model=self.scan_model)
            approx = lookup.approx_cosines(table, text, vector, positions)
        dedup = self.params.dedup_cosine
        if approx is None:
            # float32 scan keeping every row within MARGIN of the best; exact cosines
            positions, cos = st.cosines(table, vector, stores=stores, model=self.scan_model, top=1)
        else:
            best = float(approx.max())
            if best < dedup - MARGIN:      # no row can reach dedup_cosine
                return None
            if approx.size > 1:
                positions = positions[approx >= best - MARGIN]
            if len(positions) == 1 and best >= dedup + MARGIN:
                return int(positions[0])   # the only candidate, surely above dedup_cosine
            cos = st.cosines_at(table, vector, positions)
        # the decision is made on exact float64 cosines (approximations within float32
        # error decide only where no exact value could decide otherwise)
        j = int(np.argmax(cos))
        return int(positions[j]) if cos[j] >= dedup else None

    def _item_scope(self, store: str) -> list[str]:
        """Stores the item dedup of a write searches (the release's rule, or ``dedup_scope``)."""
        return [store] if self.params.item_dedup_scope == "store" else list(dict.fromkeys([store, "global"]))

    def _default_stores(self) -> list[str]:
        return list(dict.fromkeys([self.project_store, "global"]))

    @property
    def writes_home(self) -> bool:
        """Whether the release's writes land where a near-identical item lives (``07ecf87`` on):
        update and codify then search ``[store, "global"]`` for the item, write into the
        store they found it in (the matcher dedup and creation too) and name that store
        in the reply; a store called ``"unknown"`` means ``global``. ``v0.1.30`` writes
        into the target store only."""
        return at_least("thatch", self.params.release, "07ecf87")

    def _target_store(self, store) -> str:
        """The store a write, feedback or delete names: ``store``, else the project store;
        from ``07ecf87`` on, ``"unknown"`` (what production's repo detection falls back
        to) is ``global``, whose rows the nudges read (sysread/thatch src/tool-defs.ts,
        ``resolveStore``)."""
        store = self.project_store if store is None else store
        _check_text("store", store)
        return "global" if store == "unknown" and self.writes_home else store

    # ------------------------------------------------------------ scoring
    def _rank(self, qvec, stores, threshold: float, max_items: int | None) -> tuple[pd.DataFrame, int]:
        """Steps 3–7 of the nudge: matchers → threshold → items → scores → one row per item;
        also how many scored matchers carry another model's tag."""
        columns, n_foreign = self._rank_columns(qvec, stores, threshold, max_items)
        return items_frame(columns), n_foreign

    def _rank_columns(self, qvec, stores, threshold: float, max_items: int | None) -> tuple[list, int]:
        """:meth:`_rank` as the frame's columns (lists), in :data:`ITEM_COLUMNS` order
        (:func:`~thatchlab.scoring._rank.rank_columns`)."""
        return rank_columns(self._state, self.params, qvec, stores, threshold, max_items,
                            scan_model=self.scan_model, own_model=self.model_name)

    def _line(self, row) -> str:
        """One line of a query reply (the same form in every release)."""
        n_tests = row["evidence_count"]
        verb = self.config.verb_untested if n_tests == 0 else self.config.verb_tested
        return query_line(fixed2(row["confidence"]), n_tests, verb, row["matcher_description"], row["statement"])

    def _line_of(self, confidence, n_tests, description, statement) -> str:
        """One line of a nudge block, as the release prints it (:func:`~thatchlab.scoring.rules.nudge_line`)."""
        verb = self.config.verb_untested if n_tests == 0 else self.config.verb_tested
        return nudge_line(self.params.release, fixed2(confidence), n_tests, verb, description, statement)

    def regime(self, items: pd.DataFrame) -> str:
        """Classify surfaced items: ``strong``, ``ambiguous`` or ``none``.

        ``strong`` needs the top item's stored confidence ≥ ``strong_confidence``,
        its evidence count ≥ ``strong_evidence`` and no competing item (another
        item from the same matcher within ``conflict_margin``, in integer thousandths).

        Parameters
        ----------
        items : DataFrame or None
            Surfaced items in nudge order (``score``, ``matcher_id``,
            ``stored_confidence``, ``evidence_count``).

        Returns
        -------
        str
            ``"strong"``, ``"ambiguous"`` or ``"none"`` (no item).
        """
        if items is None or len(items) == 0:
            return "none"
        return self._regime_of(items["score"].to_numpy(), items["matcher_id"].to_numpy(object),
                               items["stored_confidence"].iloc[0], items["evidence_count"].iloc[0])

    def _regime_of(self, score, matcher_id, top_confidence, top_evidence) -> str:
        """:meth:`regime` of items given as columns (rows in nudge order, at least one)."""
        p = self.params
        if isinstance(score, np.ndarray):
            score, matcher_id = score.tolist(), matcher_id.tolist()
        top_k = int(js_round1(score[0] * 1000))
        margin = int(js_round1(p.conflict_margin * 1000))
        top_matcher = matcher_id[0]
        competing = any(m == top_matcher and top_k - js_round1(s * 1000) <= margin
                        for s, m in zip(score[1:], matcher_id[1:]))
        if top_confidence >= p.strong_confidence and int(top_evidence) >= p.strong_evidence and not competing:
            return "strong"
        return "ambiguous"

    def nudge(self, prompt: str, stores=None, threshold: float | None = None) -> Nudge:
        """The auto-fire nudge for a prompt (steps 1–7 of the production rules).

        Prompts shorter than ``min_prompt_chars`` give regime ``skipped``;
        otherwise the prompt is embedded as a query and scored against the
        matchers of ``stores`` (default ``[project_store, "global"]``).

        Parameters
        ----------
        prompt : str
            The user's prompt.
        stores : str or list of str, default=None
            The stores searched; ``[project_store, "global"]`` when None.
        threshold : float, default=None
            The matcher threshold; ``params.threshold`` when None.

        Returns
        -------
        Nudge
            The nudge's text, items and regime.

        Raises
        ------
        InputError
            A prompt that is not text, or an empty store name.
        EmbeddingError
            A bad embedding.

        See Also
        --------
        nudge_vector : For an already embedded prompt.
        query : The query tool.
        """
        if not isinstance(prompt, str):
            raise InputError(f"prompt: expected text, got {type(prompt).__name__}")
        stores = self._default_stores() if stores is None else _check_stores(stores)
        if len(prompt) < self.params.min_prompt_chars:
            return Nudge(prompt, pd.DataFrame(columns=ITEM_COLUMNS), "", "skipped", stores)
        qvec = self._embed([prompt], "query")[0]
        return self._nudge(qvec, stores, threshold, prompt)

    def nudge_vector(self, qvec, stores=None, threshold: float | None = None, prompt: str = "") -> Nudge:
        """:meth:`nudge` for an already embedded prompt (production reuses one embedding).

        Parameters
        ----------
        qvec : array-like
            The prompt's query vector.
        stores : str or list of str, default=None
            As for :meth:`nudge`.
        threshold : float, default=None
            As for :meth:`nudge`.
        prompt : str, default=""
            The prompt's text, recorded in the nudge.

        Returns
        -------
        Nudge
            The nudge (its items frame is built when first read).
        """
        stores = self._default_stores() if stores is None else _check_stores(stores)
        return self._nudge(np.asarray(qvec), stores, threshold, prompt)

    def _nudge(self, qvec: np.ndarray, stores: list, threshold, prompt: str) -> Nudge:
        """:meth:`nudge_vector` with ``stores`` already checked."""
        p = self.params
        thr = p.threshold if threshold is None else float(threshold)
        columns, n_foreign = rank_columns(self._state, p, qvec, stores, thr, p.max_items,
                                          scan_model=self.scan_model, own_model=self.model_name)
        if not len(columns[0]):
            return Nudge(prompt, None, "", "none", stores, n_foreign_model=n_foreign, columns=columns)
        # text and regime from the columns (the items frame is built when first read)
        conf, n_tests, desc, stmt, score, _, matcher_id, _, _, _, stored = columns
        lines = [self._line_of(*r) for r in zip(conf, n_tests, desc, stmt)]
        text = "\n".join([self.config.header] + ["- " + line for line in lines])
        regime = self._regime_of(score, matcher_id, stored[0], n_tests[0])
        return Nudge(prompt, None, text, regime, stores, n_foreign_model=n_foreign, columns=columns)

    def query(self, context: str, store: str | None = None) -> Reply:
        """The query tool: every item of matchers at or above ``query_threshold``.

        Parameters
        ----------
        context : str
            The text searched for.
        store : str, default=None
            One store to search; ``[project_store, "global"]`` when None.

        Returns
        -------
        Reply
            The reply's text and items.

        See Also
        --------
        query_vector : For an already embedded context.
        nudge : The auto-fire nudge.
        """
        _check_text("context", context)
        stores = _check_stores([store] if store is not None else self._default_stores())
        qvec = self._embed([context], "query")[0]
        return self._query_reply(qvec, stores)

    def query_vector(self, qvec, store: str | None = None) -> Reply:
        """:meth:`query` for an already embedded context (a logged query vector).

        Parameters
        ----------
        qvec : array-like
            The context's query vector.
        store : str, default=None
            As for :meth:`query`.

        Returns
        -------
        Reply
            As for :meth:`query`.
        """
        stores = _check_stores([store] if store is not None else self._default_stores())
        return self._query_reply(np.asarray(qvec), stores)

    def _query_reply(self, qvec, stores) -> Reply:
        items, n_foreign = self._rank(qvec, stores, self.params.query_threshold, None)
        if len(items) == 0:
            text = f"No matching {self.config.plural} found."
        else:
            text = "\n".join(self._line(r) for _, r in items.iterrows())
        return Reply(text=text, action="query", items=items, n_foreign_model=n_foreign)

    # ------------------------------------------------------------ writes
    @fill_doc(store_now_params=_STORE_NOW_PARAMS)
    def write(self, matcher: str, statement: str, signal: str, rationale=None, store=None, now=None, *,
              vectors=None) -> Reply:
        """The update / codify transaction under any signal of the engine's vocabulary.

        Matcher dedup, item dedup, link, signal and provenance in one step:
        nothing is written when any check fails. ``vectors`` are the passage
        vectors of ``(matcher, statement)`` when already embedded. The reply's
        ``result`` is the :class:`~thatchlab.scoring.WriteResult`.

        Parameters
        ----------
        matcher : str
            The situation the item applies to.
        statement : str
            The item (prediction or behavior).
        signal : str
            One of the engine's signals.
        rationale : str, default=None
            Recorded with the item and in the provenance.
        {store_now_params}
        vectors : pair of array-like, default=None
            The passage vectors of ``(matcher, statement)``.

        Returns
        -------
        Reply
            The tool's reply.

        See Also
        --------
        write_result : The same, returning the result.
        """
        return self._reply(self.write_result(matcher, statement, signal, rationale, store, now,
                                              vectors=vectors))

    def write_result(self, matcher: str, statement: str, signal: str, rationale=None, store=None, now=None,
                     *, vectors=None, force_new: bool = False) -> WriteResult:
        """:meth:`write` returning its :class:`~thatchlab.scoring.WriteResult` (no reply).

        Parameters
        ----------
        matcher, statement, signal, rationale, store, now, vectors
            As for :meth:`write`.
        force_new : bool, default False
            Skip the item dedup: always create a new item (default seeding
            must never link to someone else's rule). The matcher dedup still
            applies.

        Returns
        -------
        WriteResult
            What was written.

        Raises
        ------
        InputError
            Empty texts, an unknown signal, or a rationale that is not text.
        """
        cfg, p, st = self.config, self.params, self._state
        _check_text(self._matcher_arg, matcher)
        _check_text(cfg.noun, statement)
        if signal not in cfg.signals:
            raise InputError(f"signal: expected one of {list(cfg.signals)}, got {signal!r}")
        if rationale is not None and not isinstance(rationale, str):
            raise InputError(f"rationale: expected text or None, got {type(rationale).__name__}")
        store = self._target_store(store)
        t = resolve_now(now, self.clock)
        if vectors is None:
            mvec, ivec = self._embed([matcher, statement], "passage")
        else:
            mvec, ivec = (np.asarray(v, dtype=np.float32) for v in vectors)
        model = self.model_name
        # searches first: nothing is written until every check has passed
        ipos = None if force_new else self._nearest("items", statement, ivec, self._item_scope(store))
        # the store written into: from 07ecf87 on, the one the near-identical item lives in
        home = store if ipos is None or not self.writes_home else st.items.cell("store", ipos)
        mpos = self._nearest("matchers", matcher, mvec, [home])
        ms, ts = _stamps(t)
        # mutations (cannot fail past this point)
        st.ensure_store(home)
        matcher_created = mpos is None
        if matcher_created:
            mpos = st.add_matcher(st.next_id("matchers", home, matcher), home, matcher, mvec, model, ms, ms)
        mid = st.matchers.cell("id", mpos)
        item_created = ipos is None
        if item_created:
            conf0 = posterior_confidence(0.0, 0.0, p.k, p.p0)
            ipos = st.add_item(st.next_id("items", home, statement), home, statement, rationale, ivec,
                               model, conf0, 0.0, 0.0, ms, ms)
        iid = st.items.cell("id", ipos)
        new_edges = (EdgeRow(mid, iid, 1.0, ms),) if st.add_edge(mid, iid, 1.0, ms) else ()
        if signal != cfg.create_signal:
            self._apply_signal(ipos, signal, ms)
        self._record(ipos, signal, rationale, ts)
        stored = st.items.cell("statement", ipos)
        # 07ecf87 names the store written into when it is not the one asked for
        where = "" if home == store else f" in {home}"
        if item_created and signal == cfg.create_signal:
            prefix, action, counts = f'[{cfg.created_word}] {home} :: "{statement}" for "{matcher}"', "created", False
        elif item_created:
            prefix, action, counts = f'[{cfg.created_word} + {signal}] "{stored}"', "created", True
        elif signal == cfg.create_signal:
            prefix, action, counts = f'[linked{where}] "{stored}" for "{matcher}"', "linked", True
        else:
            prefix, action, counts = f'[{signal}{where}] "{stored}"', "applied", True
        return self._item_result(ipos, action, signal, prefix, counts, matcher_id=mid,
                                 matcher_created=matcher_created, item_created=item_created,
                                 new_edges=new_edges)

    def _signal(self, text: str, signal: str, detail: str, store: str, now, vector) -> WriteResult:
        """A signal on the item nearest to ``text`` in ``store`` (feedback): counts, provenance."""
        t = resolve_now(now, self.clock)
        ipos = self._find_in_store(text, store, vector)
        if ipos is None:
            return self._not_found(text, store)
        ms, ts = _stamps(t)
        self._apply_signal(ipos, signal, ms)
        self._record(ipos, signal, detail, ts)
        return self._item_result(ipos, "applied", signal, f'[{signal}] "{self._state.items.cell("statement", ipos)}"',
                                 True)

    def _apply_signal(self, ipos: int, signal: str, ms: str):
        p, items = self.params, self._state.items
        c, d = items.cell("confirm_count", ipos), items.cell("disconfirm_count", ipos)
        if signal == "confirm":
            c = c + 1.0
        elif signal == "disconfirm":
            d = d + 1.0
        elif signal == "soft":
            d = d + p.soft_weight
        else:  # pragma: no cover - guarded by the signal vocabulary
            raise InputError(f"signal {signal!r} does not change confidence")
        self._state.set_counts(ipos, c, d, posterior_confidence(c, d, p.k, p.p0), ms)

    def _record(self, ipos: int, signal: str, detail, ts: str):
        st = self._state
        items = st.items
        iid = items.cell("id", ipos)
        pid = st.next_id("provenance", items.cell("store", ipos), prov_text(iid, signal, detail))
        st.add_provenance(pid, iid, signal, detail, ts)

    def _item_result(self, ipos: int, action: str, signal: str, prefix: str, shows_counts: bool,
                     **created) -> WriteResult:
        row = self._state.items.row(ipos)
        return WriteResult(action=action, store=row["store"], item_id=row["id"],
                           statement=row["statement"], signal=signal,
                           counts_changed=signal in _COUNTING_SIGNALS,
                           confirm_count=row["confirm_count"],
                           disconfirm_count=row["disconfirm_count"],
                           confidence=row["confidence"], reply_prefix=prefix,
                           shows_counts=shows_counts, **created)

    def _not_found(self, text: str, store: str) -> WriteResult:
        return WriteResult(action="not_found", store=store,
                           reply_prefix=f'No {self.config.noun} matching "{text}" found in "{store}".')

    def _reply(self, result: WriteResult) -> Reply:
        """The tool reply of a write: its text and fields, with the engine's action label."""
        cfg = self.config
        if result.action == "created":
            label = cfg.created_word if result.signal == cfg.create_signal else f"{cfg.created_word}+{result.signal}"
        elif result.action == "applied":
            label = result.signal
        else:
            label = result.action
        return Reply(text=result.text, action=label, store=result.store, item_id=result.item_id,
                     matcher_id=result.matcher_id, signal=result.signal, confidence=result.confidence,
                     confirm_count=result.confirm_count, disconfirm_count=result.disconfirm_count,
                     result=result)

    def _find_in_store(self, text: str, store: str, vector=None) -> int | None:
        vec = self._embed([text], "passage")[0] if vector is None else np.asarray(vector)
        return self._nearest("items", text, vec, [store])

    def delete(self, statement: str, store: str | None = None, *, vector=None) -> Reply:
        """Delete the nearest item (raw cosine ≥ dedup_cosine) in one store (``store``, default
        the project store; from release ``07ecf87`` on, ``"unknown"`` is ``global``).

        Its edges and provenance cascade; matchers stay.

        Parameters
        ----------
        statement : str
            The item's text.
        store : str, default=None
            The store; the project store when None.
        vector : array-like, default=None
            ``statement``'s passage vector when already embedded.

        Returns
        -------
        Reply
            ``deleted``, or ``not_found``.
        """
        _check_text("statement", statement)
        store = self._target_store(store)
        ipos = self._find_in_store(statement, store, vector)
        if ipos is None:
            return self._reply(self._not_found(statement, store))
        items = self._state.items
        iid, stmt = items.cell("id", ipos), items.cell("statement", ipos)
        self._state.delete_item(ipos)
        return self._reply(WriteResult(action="deleted", store=store, item_id=iid, statement=stmt,
                                       reply_prefix=f'[deleted] "{stmt}" from "{store}"'))

    def list(self, store: str | None = None) -> Reply:
        """The list tool: every item of the listed stores with its matchers and newest provenance.

        ``v0.1.30`` lists one store (``store``, default the project store);
        from ``07ecf87`` on, ``store=None`` lists the project store and then
        ``global`` (each by confidence), as production's list tools do
        (sysread/thatch src/tool-defs.ts, ``prediction_list`` /
        ``behavior_list``: the stores are listed as named, so a project store
        called ``global`` is listed twice).

        Parameters
        ----------
        store : str, default=None
            One store to list.

        Returns
        -------
        Reply
            The listing's text, and one row per item.
        """
        if store is not None:
            _check_text("store", store)
            stores = [store]
        elif self.writes_home:
            stores = [self.project_store, "global"]
        else:
            stores = [self.project_store]
        st = self._state
        items = st.items
        order = []
        for s in stores:
            in_store = np.flatnonzero(items["store"] == s)
            order.extend(in_store[np.argsort(-items.take("confidence", in_store), kind="stable")].tolist())
        if not order:
            named = '", "'.join(stores)
            return Reply(text=f'No {self.config.plural} in "{named}".', action="list",
                         items=pd.DataFrame(columns=["item_id", "statement", "confidence",
                                                     "evidence_count"]))
        edges, prov, matchers = st.edges, st.provenance, st.matchers
        blocks, records = [], []
        for ipos in order:
            row = items.row(ipos)
            iid, c, d = row["id"], row["confirm_count"], row["disconfirm_count"]
            n = evidence_count(c, d)
            conf3 = r3(row["confidence"])
            lines = [f"[{to_fixed(conf3, 2)} conf, {n} tests] {row['statement']}"]
            if row["rationale"]:
                lines.append(f"  rationale: {row['rationale']}")
            linked = st.edges_of_item(iid)
            if linked:
                lines.append("  matchers:")
                for j in linked:
                    mpos = st.matcher_position(edges.cell("matcher_id", j))
                    lines.append(f'    - "{matchers.cell("description", mpos)}" (w:{js_number(edges.cell("weight", j))})')
            newest = st.provenance_of_item(iid)[-10:][::-1]
            if newest:
                lines.append("  provenance:")
                for j in newest:
                    detail = prov.cell("detail", j)
                    detail = detail if detail is not None else ""
                    lines.append(f"    - [{prov.cell('created_at', j)[:10]}] {prov.cell('signal', j)}: {detail}")
            blocks.append("\n".join(lines))
            records.append({"item_id": iid, "statement": row["statement"], "confidence": conf3,
                            "evidence_count": n, "stored_confidence": row["confidence"],
                            "confirm_count": c, "disconfirm_count": d})
        return Reply(text="\n\n".join(blocks), action="list", store=stores[0] if len(stores) == 1 else None,
                     items=pd.DataFrame(records))

    # ------------------------------------------------------------ helpers
    _matcher_arg = "matcher"

    def __repr__(self):
        return (f"{type(self).__name__}(project_store={self.project_store!r}, "
                f"matchers={self._state.n_matchers}, {self.config.plural}={self._state.n_items}, "
                f"model={self.model_name!r})")


def _stamps(t) -> tuple[str, str]:
    """``(iso_ms(t), iso_s(t))`` of a UTC timestamp as :func:`~thatchlab.core.time.resolve_now`
    gives it (the same texts: both start with the seconds; its years have four digits)."""
    seconds = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    return f"{seconds}.{t.microsecond // 1000:03d}Z", seconds + "Z"


def _project_store_of(tables: dict, default: str = "project") -> str:
    """The one store other than ``global`` the matchers and items of ``tables`` use
    (``default`` when they use several or none)."""
    found = set()
    for name in ("matchers", "items"):
        frame = tables.get(name)
        if frame is not None and "store" in frame:
            found.update(frame["store"].unique().tolist())
    found.discard("global")
    if len(found) == 1:
        (store,) = found
        if isinstance(store, str) and store.strip():
            return store
    return default


def _check_text(name: str, value):
    if not isinstance(value, str):
        raise InputError(f"{name}: expected text, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{name}: expected non-empty text, got {value!r}")


def _check_bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def _check_stores(stores):
    if isinstance(stores, str):
        stores = [stores]
    stores = list(stores)
    for s in stores:
        _check_text("store", s)
    return stores
