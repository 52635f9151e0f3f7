"""The shared four-table scoring engine behind predictions and behaviors.

Production thatch (seeds 000 and 003) keeps matchers ("when"), items ("what"),
weighted matcher→item edges and a provenance trail, and scores an item for a
prompt as ``r3(r3(cosine) × edge.weight × confidence)``, where confidence is
the Bayesian posterior ``(c + K·P0) / (c + d + K)`` of its confirm and
disconfirm counts. :class:`ScoringEngine` reproduces every rule of that engine
exactly — rounding, ordering, ties, reply texts — over pandas-friendly state;
:mod:`thatchlab.scoring.prediction` and :mod:`thatchlab.scoring.behavior` configure it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.core.errors import EmbeddingError, InputError, ParamsError
from thatchlab.core.jsfmt import js_number, js_round, r3, to_fixed
from thatchlab.core.params import ParamsMixin, ScoringParams
from thatchlab.core.schema import ENGINE_TABLES
from thatchlab.core.time import iso_ms, iso_s, resolve_now
from thatchlab.core.vectors import VectorRows
from thatchlab.scoring.state import ID_NAMESPACE, EngineState, _prov_text, deterministic_id

__all__ = ["posterior_confidence", "evidence_count", "deterministic_id", "ID_NAMESPACE",
           "EngineConfig", "ScoringEngine", "Reply", "Nudge", "ITEM_COLUMNS"]


#: Columns of the items DataFrame returned by nudges and queries.
ITEM_COLUMNS = ["confidence", "evidence_count", "matcher_description", "statement", "score",
                "item_id", "matcher_id", "store", "cosine", "weight", "stored_confidence"]


def posterior_confidence(c, d, k=5.0, p0=0.5):
    """Posterior mean confidence of an item: ``(c + K·P0) / (c + d + K)``.

    ``c`` counts confirms, ``d`` disconfirms (soft signals add their weight to
    ``d``). Vectorised: scalars or arrays broadcast together.

    >>> posterior_confidence(0, 0)
    0.5
    >>> posterior_confidence(1, 0), posterior_confidence(0, 1.25)
    (0.5833333333333334, 0.4)
    >>> posterior_confidence([3, 0], [0, 3], k=5, p0=0.5).round(4).tolist()
    [0.6875, 0.3125]
    """
    c = np.asarray(c, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    p0 = np.asarray(p0, dtype=np.float64)
    out = (c + k * p0) / (c + d + k)
    if out.ndim == 0:
        return float(out)
    return out


def evidence_count(c, d):
    """Number of tests shown beside an item: JavaScript ``Math.round(c + d)``.

    >>> evidence_count(0, 0.5), evidence_count(2, 0.25), evidence_count(2, 0.5)
    (1, 2, 3)
    """
    out = js_round(np.asarray(c, dtype=np.float64) + np.asarray(d, dtype=np.float64))
    if np.ndim(out) == 0:
        return int(out)
    return out.astype(np.int64)


@dataclass(frozen=True)
class EngineConfig:
    """What distinguishes the prediction and behavior engines."""

    kind: str                   # "prediction" | "behavior"
    noun: str                   # "prediction" | "behavior"
    plural: str                 # "predictions" | "behaviors"
    header: str                 # nudge block header
    verb_untested: str          # verb when evidence_count == 0
    verb_tested: str            # verb otherwise
    signals: tuple              # signals a write may carry
    create_signal: str          # the confidence-neutral signal ("create" / "codify")
    created_word: str           # "created" / "codified"

    @property
    def tables(self) -> dict:
        return ENGINE_TABLES[self.kind]


@dataclass
class Reply:
    """A tool reply: ``text`` exactly as production prints it, plus its fields."""

    text: str
    action: str = ""
    store: str | None = None
    item_id: str | None = None
    matcher_id: str | None = None
    signal: str | None = None
    confidence: float | None = None
    confirm_count: float | None = None
    disconfirm_count: float | None = None
    items: pd.DataFrame | None = None

    def __str__(self):
        return self.text


@dataclass
class Nudge:
    """The auto-fire result for one prompt.

    ``items`` has the columns of :data:`ITEM_COLUMNS` (``confidence`` is the
    3-decimal rounded stored confidence, ``score`` the rounded score);
    ``text`` is the block production injects (empty when nothing surfaced);
    ``regime`` is ``strong``, ``ambiguous``, ``none`` or ``skipped``.
    """

    prompt: str
    items: pd.DataFrame
    text: str
    regime: str
    stores: list = field(default_factory=list)

    def __str__(self):
        return self.text

    def __len__(self):
        return len(self.items)


class ScoringEngine(ParamsMixin, EngineState):
    """The generic engine over stores, matchers, items, edges and provenance.

    Parameters
    ----------
    embedder : an :class:`~thatchlab.embed.Embedder`; ``None`` loads the
        bundled model on first use.
    params : :class:`~thatchlab.core.params.ScoringParams`.
    project_store : the store writes go to by default; reads search it and ``global``.
    clock : a callable returning the current time, used when ``now`` is not given.
    """

    config: EngineConfig

    def __init__(self, embedder=None, params: ScoringParams | None = None,
                 project_store: str = "project", clock=None):
        if params is None:
            params = ScoringParams()
        if not isinstance(params, ScoringParams):
            raise ParamsError(f"params: expected ScoringParams, got {type(params).__name__}")
        _check_text("project_store", project_store)
        self._embedder = embedder
        self.params = params
        self.project_store = project_store
        self.clock = clock
        self._reset_state()

    @property
    def embedder(self):
        if self._embedder is None:
            from thatchlab.embed import default_embedder

            self._embedder = default_embedder()
        return self._embedder

    @property
    def model_name(self) -> str | None:
        return getattr(self._embedder, "name", None) if self._embedder is not None else None

    # get_params/set_params (ParamsMixin): the constructor arguments and, by name, the
    # ScoringParams fields (``set_params(k=3)``); the embedder as given (None until loaded)
    _params_attr = "params"
    _param_attrs = {"embedder": "_embedder"}

    def _validate_params(self):
        _check_text("project_store", self.project_store)


    # ------------------------------------------------------------ embedding
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
    def _store_mask(self, stores) -> np.ndarray:
        if getattr(self, "_m_store_arr", None) is None or len(self._m_store_arr) != len(self._m_store_code):
            self._m_store_arr = np.asarray(self._m_store_code, dtype=np.int64)
        codes = [self._stores.index(s) for s in stores if s in self._stores]
        return np.isin(self._m_store_arr, codes)

    def _nearest(self, rows: VectorRows, vec, mask) -> tuple[int | None, float]:
        """Nearest row by raw cosine ≥ dedup_cosine (highest; first on ties)."""
        pos, cos = rows.cosines(vec, rows=mask, model=self.model_name, top=1)
        if pos.size == 0:
            return None, float("nan")
        j = int(np.argmax(cos))
        if cos[j] >= self.params.dedup_cosine:
            return int(pos[j]), float(cos[j])
        return None, float(cos[j])

    def _item_mask(self, stores) -> np.ndarray:
        stores = set(stores)
        return np.fromiter((s in stores for s in self._i["store"]), dtype=bool, count=len(self._i["store"]))

    def _matcher_mask_for(self, store) -> np.ndarray:
        return self._store_mask([store])

    def _default_stores(self) -> list[str]:
        return list(dict.fromkeys([self.project_store, "global"]))

    # ------------------------------------------------------------ scoring
    def _rank(self, qvec, stores, threshold: float, max_items: int | None) -> pd.DataFrame:
        """Steps 3–7 of the nudge: matchers → threshold → items → scores → dedup."""
        p = self.params
        mask = self._store_mask(stores)
        # float32 scan for candidates, exact float64 cosines for the few that can matter
        pos, cos = self._m_vec.cosines(qvec, rows=mask, model=self.model_name,
                                       floor=p.noise_floor, top=p.top_matchers)
        keep = cos >= p.noise_floor
        pos, cos = pos[keep], cos[keep]
        rc = r3(cos) if cos.size else cos
        # stable sort by rounded cosine: ties keep insertion (row) order
        order = np.argsort(-rc, kind="stable")[: p.top_matchers]
        rows = []
        for j in order:
            if rc[j] < threshold:
                continue
            mpos = int(pos[j])
            mid = self._m["id"][mpos]
            for e in self._e_by_matcher.get(mid, ()):
                iid = self._e["item_id"][e]
                ipos = self._i_pos.get(iid)
                if ipos is None:
                    continue
                rows.append((self._i["statement"][ipos], float(rc[j]), float(self._e["weight"][e]),
                             ipos, mpos))
        rows.sort(key=lambda r: r[0])  # statement, code-point order (stable)
        out = []
        for statement, rcos, weight, ipos, mpos in rows:
            conf = float(self._i["confidence"][ipos])
            if conf < p.min_confidence:
                continue
            score = r3(rcos * weight * conf)
            out.append((score, statement, rcos, weight, conf, ipos, mpos))
        order = sorted(range(len(out)), key=lambda j: -out[j][0])  # stable, score desc
        seen, final = set(), []
        for j in order:
            score, statement, rcos, weight, conf, ipos, mpos = out[j]
            iid = self._i["id"][ipos]
            if iid in seen:
                continue
            seen.add(iid)
            final.append({
                "confidence": r3(conf),
                "evidence_count": evidence_count(self._i["confirm_count"][ipos],
                                                 self._i["disconfirm_count"][ipos]),
                "matcher_description": self._m["description"][mpos],
                "statement": statement, "score": score, "item_id": iid,
                "matcher_id": self._m["id"][mpos], "store": self._i["store"][ipos],
                "cosine": rcos, "weight": weight, "stored_confidence": conf})
            if max_items is not None and len(final) >= max_items:
                break
        df = pd.DataFrame(final, columns=ITEM_COLUMNS)
        return df.astype({"evidence_count": "int64", "confidence": "float64", "score": "float64",
                          "cosine": "float64", "weight": "float64", "stored_confidence": "float64"})

    def _line(self, row) -> str:
        verb = self.config.verb_untested if row["evidence_count"] == 0 else self.config.verb_tested
        return (f"[{to_fixed(row['confidence'], 2)} conf, {int(row['evidence_count'])} tests] "
                f"When {row['matcher_description']}: {verb} {row['statement']}")

    def regime(self, items: pd.DataFrame) -> str:
        """Classify surfaced items: ``strong``, ``ambiguous`` or ``none`` (see DESIGN)."""
        if items is None or len(items) == 0:
            return "none"
        p = self.params
        top = items.iloc[0]
        top_k = int(js_round(top["score"] * 1000))
        margin = int(js_round(p.conflict_margin * 1000))
        others = items.iloc[1:]
        competing = bool(((others["matcher_id"] == top["matcher_id"]) &
                          (top_k - js_round(others["score"].to_numpy() * 1000) <= margin)).any()) \
            if len(others) else False
        if (top["stored_confidence"] >= p.strong_confidence
                and int(top["evidence_count"]) >= p.strong_evidence and not competing):
            return "strong"
        return "ambiguous"

    def nudge(self, prompt: str, stores=None, threshold: float | None = None) -> Nudge:
        """The auto-fire nudge for a prompt (steps 1–7 of the production rules).

        Prompts shorter than ``min_prompt_chars`` give regime ``skipped``;
        otherwise the prompt is embedded as a query and scored against the
        matchers of ``stores`` (default ``[project_store, "global"]``).
        """
        if not isinstance(prompt, str):
            raise InputError(f"prompt: expected text, got {type(prompt).__name__}")
        stores = self._default_stores() if stores is None else _check_stores(stores)
        if len(prompt) < self.params.min_prompt_chars:
            return Nudge(prompt, pd.DataFrame(columns=ITEM_COLUMNS), "", "skipped", stores)
        qvec = self._embed([prompt], "query")[0]
        return self.nudge_vector(qvec, stores=stores, threshold=threshold, prompt=prompt)

    def nudge_vector(self, qvec, stores=None, threshold: float | None = None, prompt: str = "") -> Nudge:
        """:meth:`nudge` for an already embedded prompt (production reuses one embedding)."""
        stores = self._default_stores() if stores is None else _check_stores(stores)
        thr = self.params.threshold if threshold is None else float(threshold)
        items = self._rank(np.asarray(qvec), stores, thr, self.params.max_items)
        text = ""
        if len(items):
            text = "\n".join([self.config.header] + ["- " + self._line(r) for _, r in items.iterrows()])
        return Nudge(prompt, items, text, self.regime(items), stores)

    def query(self, context: str, store: str | None = None) -> Reply:
        """The query tool: every item of matchers at or above ``query_threshold``."""
        _check_text("context", context)
        stores = [store] if store is not None else self._default_stores()
        _check_stores(stores)
        qvec = self._embed([context], "query")[0]
        items = self._rank(qvec, stores, self.params.query_threshold, None)
        if len(items) == 0:
            text = f"No matching {self.config.plural} found."
        else:
            text = "\n".join(self._line(r) for _, r in items.iterrows())
        return Reply(text=text, action="query", items=items)

    # ------------------------------------------------------------ writes
    def _write(self, matcher: str, statement: str, signal: str, rationale, store, now,
               *, vectors=None, force_new: bool = False) -> Reply:
        """The update/codify transaction (matcher dedup, item dedup, link, signal, provenance).

        ``force_new`` skips the item dedup (default seeding must never link to
        someone else's rule)."""
        cfg, p = self.config, self.params
        _check_text(self._matcher_arg, matcher)
        _check_text(cfg.noun, statement)
        if signal not in cfg.signals:
            raise InputError(f"signal: expected one of {list(cfg.signals)}, got {signal!r}")
        if rationale is not None and not isinstance(rationale, str):
            raise InputError(f"rationale: expected text or None, got {type(rationale).__name__}")
        store = self.project_store if store is None else store
        _check_text("store", store)
        t = resolve_now(now, self.clock)
        if vectors is None:
            mvec, ivec = self._embed([matcher, statement], "passage")
        else:
            mvec, ivec = (np.asarray(v, dtype=np.float32) for v in vectors)
        model = self.model_name
        # -- searches (nothing written yet)
        mpos, _ = self._nearest(self._m_vec, mvec, self._matcher_mask_for(store))
        scope = [store] if p.dedup_scope == "store" else list(dict.fromkeys([store, "global"]))
        ipos = None if force_new else self._nearest(self._i_vec, ivec, self._item_mask(scope))[0]
        ms, ts = iso_ms(t), iso_s(t)
        # -- mutations (cannot fail past this point)
        self._ensure_store(store)
        if mpos is None:
            mid = self._next_id("matchers", store, matcher)
            mpos = self._add_matcher_row(mid, store, matcher, mvec, model, ms, ms)
        mid = self._m["id"][mpos]
        created = ipos is None
        if created:
            iid = self._next_id("items", store, statement)
            conf0 = posterior_confidence(0.0, 0.0, p.k, p.p0)
            ipos = self._add_item_row(iid, store, statement, rationale, ivec, model, conf0,
                                      0.0, 0.0, ms, ms)
        iid = self._i["id"][ipos]
        self._add_edge(mid, iid, 1.0, ms)
        if signal != cfg.create_signal:
            self._apply_signal(ipos, signal, ms)
        self._record(ipos, signal, rationale, ts)
        return self._write_reply(created, signal, store, ipos, mid, matcher, statement)

    def _apply_signal(self, ipos: int, signal: str, ms: str):
        p = self.params
        c = self._i["confirm_count"][ipos]
        d = self._i["disconfirm_count"][ipos]
        if signal == "confirm":
            c = c + 1.0
        elif signal == "disconfirm":
            d = d + 1.0
        elif signal == "soft":
            d = d + p.soft_weight
        else:  # pragma: no cover - guarded by the signal vocabulary
            raise InputError(f"signal {signal!r} does not change confidence")
        self._i["confirm_count"][ipos] = c
        self._i["disconfirm_count"][ipos] = d
        self._i["confidence"][ipos] = posterior_confidence(c, d, p.k, p.p0)
        self._i["updated_at"][ipos] = ms
        self._version += 1

    def _record(self, ipos: int, signal: str, detail, ts: str):
        iid = self._i["id"][ipos]
        pid = self._next_id("provenance", self._i["store"][ipos], _prov_text(iid, signal, detail))
        self._add_provenance_row(pid, iid, signal, detail, ts)

    def _counts_text(self, ipos) -> str:
        return (f"confidence={to_fixed(self._i['confidence'][ipos], 2)} "
                f"({js_number(self._i['confirm_count'][ipos])}/"
                f"{js_number(self._i['disconfirm_count'][ipos])})")

    def _write_reply(self, created, signal, store, ipos, mid, matcher, statement) -> Reply:
        cfg = self.config
        stmt = self._i["statement"][ipos]
        if created and signal == cfg.create_signal:
            text = f'[{cfg.created_word}] {store} :: "{statement}" for "{matcher}"'
            action = cfg.created_word
        elif created:
            text = f'[{cfg.created_word} + {signal}] "{stmt}" {self._counts_text(ipos)}'
            action = f"{cfg.created_word}+{signal}"
        elif signal == cfg.create_signal:
            text = f'[linked] "{stmt}" for "{matcher}" {self._counts_text(ipos)}'
            action = "linked"
        else:
            text = f'[{signal}] "{stmt}" {self._counts_text(ipos)}'
            action = signal
        return Reply(text=text, action=action, store=self._i["store"][ipos], item_id=self._i["id"][ipos],
                     matcher_id=mid, signal=signal, confidence=self._i["confidence"][ipos],
                     confirm_count=self._i["confirm_count"][ipos],
                     disconfirm_count=self._i["disconfirm_count"][ipos])

    def _find_in_store(self, text: str, store: str, vector=None):
        vec = self._embed([text], "passage")[0] if vector is None else np.asarray(vector)
        ipos, _ = self._nearest(self._i_vec, vec, self._item_mask([store]))
        return ipos

    def delete(self, statement: str, store: str | None = None, *, vector=None) -> Reply:
        """Delete the nearest item (raw cosine ≥ dedup_cosine) in one store.

        Its edges and provenance cascade; matchers stay.
        """
        _check_text("statement", statement)
        store = self.project_store if store is None else store
        _check_text("store", store)
        ipos = self._find_in_store(statement, store, vector)
        if ipos is None:
            return Reply(text=f'No {self.config.noun} matching "{statement}" found in "{store}".',
                         action="not_found", store=store)
        iid, stmt = self._i["id"][ipos], self._i["statement"][ipos]
        self._delete_item(ipos)
        return Reply(text=f'[deleted] "{stmt}" from "{store}"', action="deleted", store=store,
                     item_id=iid)

    def list(self, store: str | None = None) -> Reply:
        """List one store's items (default the project store), by confidence."""
        store = self.project_store if store is None else store
        _check_text("store", store)
        fk_rows = [j for j, s in enumerate(self._i["store"]) if s == store]
        conf = [self._i["confidence"][j] for j in fk_rows]
        order = [fk_rows[j] for j in sorted(range(len(fk_rows)), key=lambda j: -conf[j])]
        if not order:
            return Reply(text=f'No {self.config.plural} in "{store}".', action="list",
                         items=pd.DataFrame(columns=["item_id", "statement", "confidence",
                                                     "evidence_count"]))
        blocks, records = [], []
        for ipos in order:
            iid = self._i["id"][ipos]
            c, d = self._i["confirm_count"][ipos], self._i["disconfirm_count"][ipos]
            n = evidence_count(c, d)
            conf3 = r3(self._i["confidence"][ipos])
            lines = [f"[{to_fixed(conf3, 2)} conf, {n} tests] {self._i['statement'][ipos]}"]
            if self._i["rationale"][ipos]:
                lines.append(f"  rationale: {self._i['rationale'][ipos]}")
            edges = [j for j, x in enumerate(self._e["item_id"]) if x == iid]
            if edges:
                lines.append("  matchers:")
                for j in edges:
                    mpos = self._m_pos[self._e["matcher_id"][j]]
                    lines.append(f'    - "{self._m["description"][mpos]}" '
                                 f'(w:{js_number(self._e["weight"][j])})')
            prov = [j for j, x in enumerate(self._p["item_id"]) if x == iid][-10:][::-1]
            if prov:
                lines.append("  provenance:")
                for j in prov:
                    detail = self._p["detail"][j] if self._p["detail"][j] is not None else ""
                    lines.append(f"    - [{self._p['created_at'][j][:10]}] {self._p['signal'][j]}: {detail}")
            blocks.append("\n".join(lines))
            records.append({"item_id": iid, "statement": self._i["statement"][ipos],
                            "confidence": conf3, "evidence_count": n,
                            "stored_confidence": self._i["confidence"][ipos],
                            "confirm_count": c, "disconfirm_count": d})
        return Reply(text="\n\n".join(blocks), action="list", store=store,
                     items=pd.DataFrame(records))

    # ------------------------------------------------------------ helpers
    _matcher_arg = "matcher"

    def __repr__(self):
        return (f"{type(self).__name__}(project_store={self.project_store!r}, "
                f"matchers={len(self._m['id'])}, {self.config.plural}={len(self._i['id'])}, "
                f"model={self.model_name!r})")


def _check_text(name: str, value):
    if not isinstance(value, str):
        raise InputError(f"{name}: expected text, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{name}: expected non-empty text, got {value!r}")


def _check_stores(stores):
    if isinstance(stores, str):
        stores = [stores]
    stores = list(stores)
    for s in stores:
        _check_text("store", s)
    return stores
