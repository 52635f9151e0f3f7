"""Admission gate of the belief model: a new claim is judged against its neighbours before it is written.

A new claim is compared with its nearest stored rows by embedding; only
neighbours at or above a similarity bar go to a judge, which names the
evidence event (restated, contradicted, resolved, unrelated) and the row it
touches. Similarity alone never writes: without a judged event the claim is
an ordinary new row.

The release decides the rest. ``4d5d5c5`` (omi ``belief_evidence.py``
@4d5d5c53): the judge sees every neighbour at or above the bar, and an event
naming no row lands on the top-scoring neighbour. ``17fecf7`` (blob 17fecf7a
with ``belief_source_policy.py`` @d3bbcc94): ineligible rows are dropped from
the nearest, an ineligible claim asks nothing, the judge sees only rows the
claim is independent authoritative evidence about and must name one of them
(else ``unrelated``), and the event lands at the later of the two rows'
original evidence times; with ``automation_paused`` no judge is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from thatchlab.belief._policy import (
    DerivedAuthority,
    independent_evidence,
    norm_evidence_fields,
    original_evidence_time,
    source_authority,
)
from thatchlab.core.errors import EmbeddingError, InputError
from thatchlab.core.time import as_utc

__all__ = ["admit", "Judgment", "OracleJudge", "SimilarityJudge", "CallableJudge", "JUDGE_EVENTS"]

#: Events a judge may return.
JUDGE_EVENTS = ("restated", "contradicted", "resolved", "unrelated")


@dataclass(frozen=True)
class Judgment:
    """A judge's verdict on one claim: the event and the row it touches.

    Parameters
    ----------
    event : str
        One of :data:`JUDGE_EVENTS`.
    target_memory_id : str, default=None
        The row the event touches; None when it names no row.
    rationale : str, default=""
        Why, in the judge's words.
    """

    event: str
    target_memory_id: str | None = None
    rationale: str = ""


def _as_judgment(value) -> Judgment:
    if isinstance(value, Judgment):
        return value
    if isinstance(value, str):
        return Judgment(value)
    if isinstance(value, dict):
        return Judgment(value.get("event"), value.get("target_memory_id"),
                        value.get("rationale") or "")
    if isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
        return Judgment(*value)
    raise InputError(f"judge: expected a Judgment, dict, (event, target) tuple or event text, "
                     f"got {value!r}")


class OracleJudge:
    """Returns the labelled event of each claim (e.g. from a memory log).

    ``labels`` maps a claim id to an event name or ``(event, target_memory_id)``,
    or is a DataFrame with ``memory_id``, ``kind`` and ``target_memory_id``.
    A claim without a label, or whose labelled row is not among the
    neighbours shown, is ``unrelated``: the judge cannot pick a row the gate
    did not retrieve. A label that names no row (``"restated"`` alone) is
    returned without a target: release ``4d5d5c5`` applies it to the top
    neighbour, ``17fecf7`` reads it as ``unrelated``.

    Parameters
    ----------
    labels : dict or DataFrame
        Claim id → event name or ``(event, target_memory_id)``, or a memory
        log's rows (``memory_id``, ``kind``, ``target_memory_id``; rows whose
        kind is no judge event are ignored).

    Attributes
    ----------
    labels : dict
        Claim id (text) → ``(event, target_memory_id or None)``.

    See Also
    --------
    SimilarityJudge : A baseline that needs no labels.
    CallableJudge : A user's function as a judge.

    Examples
    --------
    >>> import pandas as pd
    >>> j = OracleJudge({"c1": ("restated", "m1")})
    >>> j({"id": "c1", "text": "x"}, pd.DataFrame({"id": ["m1"], "score": [0.9]})).event
    'restated'
    """

    def __init__(self, labels):
        if isinstance(labels, pd.DataFrame):
            rows = labels[labels["kind"].isin(JUDGE_EVENTS)]
            labels = {str(m): (k, None if pd.isna(t) else str(t)) for m, k, t in
                      zip(rows["memory_id"], rows["kind"], rows["target_memory_id"])}
        self.labels = {str(k): (v if isinstance(v, tuple) else (v, None)) for k, v in labels.items()}

    @classmethod
    def from_log(cls, log: pd.DataFrame) -> OracleJudge:
        """Labels from a memory log's evidence rows that name a target.

        Parameters
        ----------
        log : DataFrame
            A memory log with ``memory_id``, ``kind`` and ``target_memory_id``.

        Returns
        -------
        OracleJudge
            The judge of those labels.
        """
        return cls(log[log["target_memory_id"].notna()])

    def __call__(self, claim: dict, neighbours: pd.DataFrame) -> Judgment:
        event, target = self.labels.get(str(claim.get("id")), ("unrelated", None))
        if event == "unrelated" or target is None or target in set(neighbours["id"]):
            # a label naming no row is passed on as such: the gate applies it to the top neighbour
            return Judgment(event, None if event == "unrelated" else target, "label")
        return Judgment("unrelated", None, "labelled row not among the neighbours")


class SimilarityJudge:
    """Baseline: the top neighbour at or above ``restate_at`` is ``restated``,
    anything else ``unrelated`` (it never contradicts or resolves).

    Parameters
    ----------
    restate_at : float, default=0.9
        The similarity at or above which the top neighbour is restated.

    Attributes
    ----------
    restate_at : float
        The bar, as a float.

    See Also
    --------
    OracleJudge : Labelled events.

    Examples
    --------
    >>> import pandas as pd
    >>> SimilarityJudge(0.9)({"id": "c"}, pd.DataFrame({"id": ["m1"], "score": [0.95]}))
    Judgment(event='restated', target_memory_id='m1', rationale='similarity 0.950 >= 0.9')
    """

    def __init__(self, restate_at: float = 0.9):
        self.restate_at = float(restate_at)

    def __call__(self, claim: dict, neighbours: pd.DataFrame) -> Judgment:
        if len(neighbours) and neighbours["score"].iloc[0] >= self.restate_at:
            s = float(neighbours["score"].iloc[0])
            return Judgment("restated", str(neighbours["id"].iloc[0]),
                            f"similarity {s:.3f} >= {self.restate_at:g}")
        return Judgment("unrelated", None, f"no neighbour >= {self.restate_at:g}")


class CallableJudge:
    """Wraps a user's function (e.g. an LLM call) as a judge.

    ``fn(claim_text, neighbours)`` gets the claim text and a list of dicts
    (``id``, ``text``, ``score``, ...) and returns a :class:`Judgment`, a dict
    with ``event``/``target_memory_id``, an ``(event, target)`` tuple or an
    event name.

    Parameters
    ----------
    fn : callable
        ``fn(claim_text, neighbours) -> verdict``.

    Attributes
    ----------
    fn : callable
        The function wrapped.

    Raises
    ------
    InputError
        When ``fn`` is not callable.

    Examples
    --------
    >>> import pandas as pd
    >>> j = CallableJudge(lambda text, nb: ("resolved", nb[0]["id"]))
    >>> j({"id": "c", "text": "done"}, pd.DataFrame({"id": ["m1"], "text": ["plan"], "score": [0.8]}))
    Judgment(event='resolved', target_memory_id='m1', rationale='')
    """

    def __init__(self, fn: Callable):
        if not callable(fn):
            raise InputError(f"CallableJudge: expected a callable, got {fn!r}")
        self.fn = fn

    def __call__(self, claim: dict, neighbours: pd.DataFrame) -> Judgment:
        return _as_judgment(self.fn(claim.get("text"), neighbours.to_dict(orient="records")))


def _null_target(target) -> bool:
    """No row named: None, NaN/NA or an empty id."""
    return (target is None or target is pd.NA or target == ""
            or (isinstance(target, float) and np.isnan(target)))


def _claims_frame(claims) -> pd.DataFrame:
    if isinstance(claims, str):
        claims = [claims]
    if not isinstance(claims, pd.DataFrame):
        claims = pd.DataFrame({"text": list(claims)})
    if "text" not in claims.columns:
        raise InputError("claims: expected a 'text' column")
    out = claims.reset_index(drop=True).copy()
    if "id" not in out.columns:
        out["id"] = [f"claim-{i}" for i in range(len(out))]
    return out


def admit(store, claims, judge, embedder, k: int | None = None, min_score: float | None = None,
          *, at=None, apply: bool = True) -> pd.DataFrame:
    """Run new claims through the admission gate, one after another.

    For each claim: cosine similarity (dot product of L2-normalised passage
    vectors, in float64) with every row of ``store``; the ``k`` nearest
    (ties in insertion order); the judge is consulted only when some of them
    have similarity ``>= min_score`` and sees only those. ``restated`` /
    ``resolved`` touch the target row; ``contradicted`` touches it (subject to
    authority) and, when the contradiction lands, adds the claim as a new row
    that supersedes it; ``unrelated`` (or no neighbour) adds the claim.

    Release ``4d5d5c5``: a judgment that names no target row is applied to
    the neighbour with the highest similarity, as production did: a judge
    answering just ``"restated"`` for "likes green tea a lot" against
    "prefers green tea" (0.96) restates "prefers green tea". The report's
    ``target_memory_id`` is then that neighbour.

    Release ``17fecf7`` (the default): of the ``k`` nearest, ineligible rows
    are dropped; an ineligible claim asks no judge; the judge sees only the
    *candidates*, rows about the same subject whose evidence families and
    the claim's are both non-empty and disjoint, with the claim's source
    authority above 0 and at least the row's (0-5; derived with a warning
    when a row has none, see :func:`~thatchlab.belief.source_authority`);
    the candidates' frame gives ``source_authority`` and ``as_of`` (the
    original evidence time). A judgment that names no candidate is
    ``unrelated`` (rationale ``no target``). The event's time is the later of
    the row's and the claim's original evidence times (``evidence_time``,
    else the captured time, else ``ts``). A less authoritative claim writes
    nothing on the row; it is kept as its own row. With
    ``automation_paused`` no judge is asked and the claim is kept.

    Parameters
    ----------
    store : BeliefStore
        Changed in place when ``apply``.
    claims : DataFrame, str or list of str
        ``text`` (and optionally ``id``, ``ts``, ``authority``, ``belief_class`` and other memory
        columns, and the source policy's ``source_authority``, ``evidence_families``,
        ``evidence_time``, ``eligible``, ``subject_entity_id``), or texts.
    judge : callable
        ``judge(claim_dict, neighbours_df) -> Judgment``.
    embedder : Embedder
        Embeds the passages (:class:`~thatchlab.embed.Embedder`).
    k, min_score : int and float, default=None
        Default to ``store.params.k`` / ``store.params.min_score``.
    at : aware time, default=None
        The time of claims that carry no ``ts``.
    apply : bool, default=True
        When False nothing is written (the decisions are only reported).

    Returns
    -------
    DataFrame
        One row per claim: ``claim_id``, ``text``, ``top_score``, ``n_neighbours`` (at or above
        ``min_score``; eligible ones under ``17fecf7``), ``n_candidates`` (rows shown to the
        judge), ``consulted``, ``event``, ``target_memory_id``, ``rationale``, ``action``.

    Raises
    ------
    InputError
        ``k`` below 1, claims without text or time, or a judge's bad verdict.
    EmbeddingError
        When the embedder returns a vector count unlike the texts'.
    """
    k = store.params.k if k is None else int(k)
    min_score = store.params.min_score if min_score is None else float(min_score)
    if k < 1:
        raise InputError(f"k: expected >= 1, got {k}")
    cl = _claims_frame(claims)
    gate = _Gate.over(store, cl, judge, embedder, k, min_score, at, apply)
    out = [gate.admit_one(i, claim) for i, claim in enumerate(cl.to_dict(orient="records"))]
    gate.derived.warn("admit")
    return pd.DataFrame(out, columns=_REPORT_COLUMNS)


_REPORT_COLUMNS = ["claim_id", "text", "top_score", "n_neighbours", "n_candidates", "consulted", "event",
                   "target_memory_id", "rationale", "action"]


@dataclass
class _Gate:
    """One :func:`admit` call: the store's rows and their vectors (grown as claims are added),
    and the settings every claim is judged with."""

    store: object
    judge: Callable
    k: int
    min_score: float
    at: object
    apply: bool
    vec_of: dict
    ids: list
    mat: list
    new_rules: bool
    derived: DerivedAuthority

    @classmethod
    def over(cls, store, cl: pd.DataFrame, judge, embedder, k, min_score, at, apply) -> _Gate:
        """Embed the store's texts and the claims' once (each distinct text once)."""
        rows = list(store.row_views())
        texts = [r["text"] for r in rows] + cl["text"].astype(str).tolist()
        uniq = list(dict.fromkeys(texts))
        vecs = np.asarray(embedder.embed_passages(uniq), dtype=np.float64) if uniq else np.zeros((0, 1))
        if vecs.shape[0] != len(uniq):
            raise EmbeddingError(f"embedder returned {vecs.shape[0]} vectors for {len(uniq)} texts")
        vec_of = dict(zip(uniq, vecs))
        return cls(store, judge, k, min_score, at, apply, vec_of, [r["id"] for r in rows],
                   [vec_of[r["text"]] for r in rows], store.params.release != "4d5d5c5", DerivedAuthority())

    def admit_one(self, i: int, claim: dict) -> dict:
        """Judge claim ``i`` against the rows so far, apply the verdict, and report it."""
        ts = claim.get("ts") if claim.get("ts") is not None and not pd.isna(claim.get("ts")) else self.at
        if ts is None:
            raise InputError(f"claims row {i}: no 'ts' and no at= given (engines never read the clock)")
        ts = as_utc(ts, what=f"claims row {i}, column 'ts'")
        q = self.vec_of[str(claim["text"])]
        claim_fields = norm_evidence_fields(claim, f"claims row {i}") if self.new_rules else None
        if self.new_rules and self.store.params.automation_paused:
            # production returns before looking for neighbours; the claim stays its own record
            nb_idx, top, n_cand = [], float("nan"), 0
            verdict = Judgment("unrelated", None, "automation paused")
        else:
            verdict, nb_idx, top, n_cand = self._judged(claim, claim_fields, ts, q)
        action = self._applied(claim, claim_fields, ts, verdict, q) if self.apply else "none"
        return dict(claim_id=str(claim["id"]), text=claim["text"], top_score=top,
                    n_neighbours=len(nb_idx), n_candidates=n_cand, consulted=n_cand > 0,
                    event=verdict.event, target_memory_id=verdict.target_memory_id,
                    rationale=verdict.rationale, action=action)

    def _nearest(self, q) -> tuple[list, float, dict]:
        """The ``k`` nearest live rows (ties in insertion order) at or above ``min_score``: their
        positions, the top similarity, and the similarity of each of the ``k``."""
        alive = [j for j, m in enumerate(self.ids) if m in self.store]
        if not alive:
            return [], float("nan"), {}
        sims = np.asarray([self.mat[j] for j in alive]) @ q
        order = np.argsort(-sims, kind="stable")[:self.k]
        # 17fecf7: ineligible rows take their place among the k nearest, then are dropped
        nb_idx = [alive[j] for j in order if sims[j] >= self.min_score
                  and (not self.new_rules or self.store.row_view(self.ids[alive[j]])["eligible"])]
        return nb_idx, float(sims[order[0]]), {alive[j]: float(sims[j]) for j in order}

    def _judged(self, claim: dict, claim_fields, ts, q) -> tuple[Judgment, list, float, int]:
        """The release's judge on the claim's neighbours: (verdict, neighbours, top, candidates)."""
        nb_idx, top, scores = self._nearest(q)
        nb = [(self.ids[j], scores.get(j)) for j in nb_idx]
        if self.new_rules:
            verdict, n_cand = _judge_17fecf7(self.store, claim, claim_fields, ts, self.judge, nb, self.derived)
        else:
            verdict, n_cand = _judge_4d5d5c5(self.store, claim, self.judge, nb), len(nb_idx)
        return verdict, nb_idx, top, n_cand

    def _applied(self, claim: dict, claim_fields, ts, verdict: Judgment, q) -> str:
        """Write the verdict with the release's rules; a claim kept as a row joins the neighbours."""
        if self.new_rules:
            action = _apply_17fecf7(self.store, claim, claim_fields, ts, verdict)
        else:
            action = _apply_verdict(self.store, claim, ts, verdict)
        if action in ("inserted", "superseded"):
            self.ids.append(str(claim["id"]))
            self.mat.append(q)
        return action


def _neighbour_frame(store, nb) -> pd.DataFrame:
    frame = pd.DataFrame([dict(store.row_view(m)) for m, _ in nb])
    frame.insert(2, "score", [s for _, s in nb])
    return frame.reset_index(drop=True)


def _checked(verdict) -> Judgment:
    verdict = _as_judgment(verdict)
    if verdict.event not in JUDGE_EVENTS:
        raise InputError(f"judge returned event {verdict.event!r}; expected one of {list(JUDGE_EVENTS)}")
    return verdict


def _judge_4d5d5c5(store, claim, judge, nb) -> Judgment:
    """omi belief_evidence.py @4d5d5c53: the judge sees every neighbour at or above the bar; a
    judgment naming no row lands on the top neighbour."""
    if not nb:
        return Judgment("unrelated", None, "no neighbour at or above min_score")
    frame = _neighbour_frame(store, nb)
    verdict = _checked(judge(dict(claim), frame))
    if verdict.event != "unrelated" and _null_target(verdict.target_memory_id):
        # production applies a judgment that names no row to the top-scoring neighbour
        verdict = Judgment(verdict.event, str(frame["id"].iloc[0]), verdict.rationale)
    if verdict.event != "unrelated" and verdict.target_memory_id not in set(frame["id"]):
        raise InputError(f"judge named row {verdict.target_memory_id!r}, which is not among "
                         f"the neighbours shown ({list(frame['id'])})")
    return verdict


def _claim_record(claim: dict, fields: dict, ts) -> dict:
    rec = dict(claim)
    rec.update(fields)
    if rec.get("captured_at") is None or pd.isna(rec.get("captured_at")):
        rec["captured_at"] = ts
    else:
        rec["captured_at"] = as_utc(rec["captured_at"], what="claims, column 'captured_at'")
    rec["last_corroborated_at"] = None
    return rec


def _judge_17fecf7(store, claim, fields, ts, judge, nb, derived) -> tuple[Judgment, int]:
    """omi belief_evidence.py blob 17fecf7a with belief_source_policy.py @d3bbcc94: only eligible
    rows are neighbours, the claim must be eligible, only independent authoritative rows are
    candidates and the judge sees only those, and it must name one of them."""
    if not nb:
        return Judgment("unrelated", None, "no neighbour at or above min_score"), 0
    if not fields["eligible"]:
        return Judgment("unrelated", None, "source unavailable (claim not eligible)"), 0
    new = _claim_record(claim, fields, ts)
    cand, why = [], []
    for m, score in nb:
        ok, reason = independent_evidence(new, store.row_view(m), derived)
        if ok:
            cand.append((m, score))
        else:
            why.append(f"{m}: {reason}")
    if not cand:
        return Judgment("unrelated", None, "no independent authoritative evidence (" + "; ".join(why) + ")"), 0
    frame = _neighbour_frame(store, cand)
    frame["source_authority"] = [source_authority(store.row_view(m)) for m, _ in cand]
    frame["as_of"] = [original_evidence_time(store.row_view(m)) for m, _ in cand]
    frame["evidence_families"] = [list(f) for f in frame["evidence_families"]]
    verdict = _checked(judge(dict(claim), frame))
    if verdict.event == "unrelated":
        return verdict, len(cand)
    if _null_target(verdict.target_memory_id) or verdict.target_memory_id not in set(frame["id"]):
        # production: a judgment must name one of the candidates shown, else it is unrelated
        return Judgment("unrelated", None, "no target"), len(cand)
    return Judgment(verdict.event, str(verdict.target_memory_id), verdict.rationale), len(cand)


def _apply_17fecf7(store, claim: dict, fields: dict, ts, verdict: Judgment) -> str:
    new_row = {c: v for c, v in claim.items() if c not in ("ts",)}
    if new_row.get("captured_at") is None or pd.isna(new_row.get("captured_at")):
        new_row["captured_at"] = ts
    if verdict.event == "unrelated":
        store.write(new_row)
        return "inserted"
    new = _claim_record(claim, fields, ts)
    # the later of the two records' original evidence times, never the processing time
    when = max(original_evidence_time(store.row_view(verdict.target_memory_id)), original_evidence_time(new))
    res = store.apply_judgment(verdict.target_memory_id, verdict.event, when, str(claim["id"]))
    if verdict.event == "contradicted":
        store.write(new_row)
        return "superseded" if res["action"] == "superseded" else "inserted"
    return res["action"]


def _apply_verdict(store, claim: dict, ts, verdict: Judgment) -> str:
    new_row = {c: v for c, v in claim.items() if c not in ("ts",)}
    if new_row.get("captured_at") is None or pd.isna(new_row.get("captured_at")):
        new_row["captured_at"] = ts
    if verdict.event == "unrelated":
        store.write(new_row)
        return "inserted"
    ev = dict(ts=ts, kind=verdict.event, memory_id=str(claim["id"]),
              target_memory_id=verdict.target_memory_id, authority=claim.get("authority"))
    res = store.apply(ev).iloc[0]
    if verdict.event == "contradicted" and res["action"] != "nothing":
        store.write(new_row)
        return "superseded" if res["action"] == "superseded" else "inserted"
    return res["action"]
