"""Replay of a memory log through omi's belief model.

Events run in time order through a :class:`~thatchlab.belief.BeliefStore`:
writes insert rows, evidence events touch them, reads record the row's
stored state. Currency and band at every read are then computed in one
vectorised pass, so the per-class half-lives change only that last step
(:meth:`BeliefReplayResult.rescore`). Metrics say how well currency predicts
whether a belief still holds, and count *time-only transitions* — stored
changes no event explains — which the model forbids (must be 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.belief import (
    BeliefParams,
    BeliefStore,
    DerivedAuthority,
    compute_currency,
    currency_band,
    derive_half_life_days,
    exposure_segments,
)
from thatchlab.core.errors import InputError
from thatchlab.logs import sort_by_time
from thatchlab.logs.memory import validate_memory_log
from thatchlab.metrics.calibration import brier

__all__ = ["run_belief", "BeliefReplayResult", "band_truth_table"]

_FP = ("status", "valid_to", "confidence", "corroboration_count", "last_corroborated_at",
       "superseded_by", "half_life_days", "belief_class")
_BANDS = ("current", "fading", "history")


def _val(v):
    return None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT else v


def _write_row(ev: dict) -> dict:
    return dict(id=ev["memory_id"], text=ev["text"], belief_class=_val(ev["belief_class"]),
                half_life_days=_val(ev["half_life_days"]),
                user_asserted=bool(_val(ev["user_asserted"]) or False), kind=_val(ev["memory_kind"]),
                tier=_val(ev["tier"]), subject_scope=_val(ev["subject_scope"]),
                authority=_val(ev["authority"]), captured_at=ev["ts"], valid_to=_val(ev["valid_to"]),
                source_authority=_val(ev["source_authority"]), evidence_families=ev["evidence_families"],
                evidence_time=_val(ev["evidence_time"]), eligible=_val(ev["eligible"]),
                subject_entity_id=_val(ev["subject_entity_id"]))


@dataclass
class BeliefReplayResult:
    """What :func:`run_belief` returns.

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    events : pandas.DataFrame
        One row per ``read``: ts, memory_id, still_true, the stored state read (status, class,
        half-life, valid_to, ``as_of``), and ``effective_half_life_days``, ``currency``, ``band``,
        ``useful_now``.
    actions : pandas.DataFrame
        One row per evidence event: what it did to the store.
    state : BeliefStore
        The final :class:`~thatchlab.belief.BeliefStore`.
    metrics : dict
        Scalars — ``auc`` and ``brier`` of currency for ``still_true``, ``n_reads``, ``n_labelled``,
        ``share_true_<band>``, ``n_<band>``, ``useful_now_precision``, ``useful_now_recall``,
        ``time_only_transitions`` (always 0 for this model), ``n_missing``.
    band_table : pandas.DataFrame
        Band × truth counts with the share still true per band.
    params : BeliefParams
        The parameters used; ``release`` (a property) is the omi release replayed.
    _raw_reads : pandas.DataFrame, default=None
        Internal: the reads as recorded, before currency is computed (what :meth:`rescore`
        recomputes from).
    _time_only : int, default=0
        Internal: the count of time-only transitions of the replay (kept by :meth:`rescore`).
    log : pandas.DataFrame, default=None
        The replayed log, validated and sorted (what :meth:`exposures` reads).
    """

    events: pd.DataFrame
    actions: pd.DataFrame
    state: BeliefStore
    metrics: dict
    band_table: pd.DataFrame
    params: BeliefParams
    _raw_reads: pd.DataFrame = field(repr=False, default=None)
    _time_only: int = field(repr=False, default=0)
    log: pd.DataFrame = field(repr=False, default=None)

    def exposures(self, end=None) -> pd.DataFrame:
        """The replayed log's exposure segments, what :class:`~thatchlab.fit.HalfLifeFitter` fits:
        ``HalfLifeFitter().fit(ex["duration_days"], ex["event"], ex["group"])``
        (see :func:`thatchlab.belief.exposure_segments`).

        Parameters
        ----------
        end : datetime or str, default=None
            Where open segments end (see :func:`thatchlab.belief.exposure_segments`).

        Returns
        -------
        pandas.DataFrame
            One exposure segment per row (``duration_days``, ``event``, ``group``...).

        Raises
        ------
        InputError
            The result does not hold its log.
        """
        if self.log is None:
            raise InputError("exposures: this result does not hold its log; replay with run_belief")
        return exposure_segments(self.log, end=end)

    @property
    def tables(self) -> dict:
        """The final store's tables (``state.tables``)."""
        return self.state.tables

    @property
    def release(self) -> str:
        """The omi release replayed (``params.release``)."""
        return self.params.release

    def rescore(self, params: BeliefParams) -> BeliefReplayResult:
        """The same replay scored under other half-life priors, without
        re-running the events (valid when only the priors differ).

        Parameters
        ----------
        params : BeliefParams
            The other half-life priors.

        Returns
        -------
        BeliefReplayResult
            The same replay, its currency, bands and metrics recomputed.
        """
        events, metrics, table = _score(self._raw_reads, params, self._time_only,
                                        self.metrics["n_missing"])
        return BeliefReplayResult(events, self.actions, self.state, metrics, table, params,
                                  self._raw_reads, self._time_only, log=self.log)


def band_truth_table(events: pd.DataFrame) -> pd.DataFrame:
    """Counts of labelled reads per band and truth, with ``share_true`` per band.

    Parameters
    ----------
    events : pandas.DataFrame
        Reads with ``band`` and ``still_true`` (a replay's ``events``).

    Returns
    -------
    pandas.DataFrame
        Indexed by band (``current, fading, history``): counts per truth, ``n`` and ``share_true``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = band_truth_table(pd.DataFrame({"band": ["current", "current", "history"],
    ...                                    "still_true": [True, False, False]}))
    >>> float(t.loc["current", "share_true"]), int(t.loc["history", "false"])
    (0.5, 1)
    """
    lab = events[events["still_true"].notna() & events["band"].notna()]
    y = lab["still_true"].astype(bool).to_numpy()
    b = lab["band"].to_numpy()
    rows = []
    for band in _BANDS:
        m = b == band
        n, t = int(m.sum()), int((y & m).sum())
        rows.append(dict(band=band, true=t, false=n - t, n=n, share_true=t / n if n else np.nan))
    return pd.DataFrame(rows).set_index("band")


def _score(raw: pd.DataFrame, params: BeliefParams, time_only: int, n_missing: int):
    ev = raw.copy()
    if len(ev):
        ev["effective_half_life_days"] = derive_half_life_days(
            ev["half_life_days"], user_asserted=ev["user_asserted"], belief_class=ev["belief_class"],
            kind=ev["memory_kind"], tier=ev["tier"], params=params)
        cur = np.array(compute_currency(ev["as_of"], ev["ts"], ev["effective_half_life_days"],
                                          ev["valid_to"]), dtype=np.float64)
        missing = ev["missing"].to_numpy(dtype=bool)
        cur[missing] = np.nan
        ev["currency"] = cur
        band = currency_band(cur)
        band[missing] = None          # no row was read: no band (a NaN currency alone is history)
        ev["band"] = pd.Series(band, index=ev.index, dtype=object)  # None stays None (pandas 3 infers str)
        known = (ev["belief_class"].notna() | ev["half_life_days"].notna()).to_numpy()
        if params.release == "4d5d5c5":
            listed = (ev["status"] == "active").to_numpy()
        else:   # 17fecf7's useful_now: the archive fence; of the statuses only a refuted row is out
            listed = ((ev["tier"] != "archive") & (ev["status"] != "contradicted")).to_numpy()
        ev["useful_now"] = known & listed & np.isin(ev["band"].to_numpy(dtype=object),
                                                    ["current", "fading"])
    else:
        for col in ("effective_half_life_days", "currency"):
            ev[col] = pd.Series(dtype="float64")
        ev["band"] = pd.Series(dtype=object)
        ev["useful_now"] = pd.Series(dtype=bool)
    lab = ev[ev["still_true"].notna() & ev["currency"].notna()]
    y = lab["still_true"].astype(bool).to_numpy()
    c = lab["currency"].to_numpy(dtype=np.float64)
    if len(np.unique(y)) == 2:
        from sklearn.metrics import roc_auc_score  # heavy: sklearn only for the AUC

        auc = float(roc_auc_score(y, c))
    else:
        auc = float("nan")
    table = band_truth_table(ev)
    u = lab["useful_now"].to_numpy(dtype=bool)
    metrics = dict(auc=auc, brier=brier(y, c), n_reads=int(len(ev)), n_labelled=int(len(lab)),
                   time_only_transitions=int(time_only), n_missing=int(n_missing),
                   useful_now_precision=float(y[u].mean()) if u.any() else float("nan"),
                   useful_now_recall=float(u[y].mean()) if y.any() else float("nan"))
    for band in _BANDS:
        metrics[f"n_{band}"] = int(table.loc[band, "n"])
        metrics[f"share_true_{band}"] = float(table.loc[band, "share_true"])
    return ev, metrics, table


def run_belief(log: pd.DataFrame, params: BeliefParams | None = None, *,
               initial=None) -> BeliefReplayResult:
    """Replay a memory log under ``params``.

    Events run in ``ts`` order (ties keep log order): ``write`` inserts a row
    (captured at ``ts``; ``memory_kind`` is the row's ``kind``), evidence
    events go through :meth:`BeliefStore.apply`, ``read`` records the row as
    stored. Events on rows that do not exist (deleted or never written) are
    counted in ``n_missing`` and change nothing. Each read's currency is
    ``compute_currency(as_of, ts, derive_half_life_days(...), valid_to)``.

    Parameters
    ----------
    log : pandas.DataFrame
        A memory log (validated here).
    params : BeliefParams, default=None
        The parameters (defaults: omi's half-life priors).
    initial : BeliefStore or pandas.DataFrame, default=None
        A store or memories frame to start from (copied).

    Returns
    -------
    BeliefReplayResult
        The reads scored, the actions, the final store and the metrics.

    Examples
    --------
    >>> import pandas as pd
    >>> log = pd.DataFrame({
    ...     "ts": ["2026-01-01T00:00:00Z", "2026-01-08T00:00:00Z", "2026-01-15T00:00:00Z"],
    ...     "memory_id": ["m1", "m1", "m1"], "kind": ["write", "read", "read"],
    ...     "text": ["went hiking", None, None], "belief_class": ["episodic", None, None],
    ...     "still_true": [None, True, False]})
    >>> r = run_belief(log)
    >>> r.events["currency"].tolist(), r.events["band"].tolist()
    ([0.5, 0.25], ['fading', 'fading'])
    >>> r.metrics["auc"], r.metrics["time_only_transitions"]
    (1.0, 0)
    """
    params = BeliefParams.coerce(params)
    log = sort_by_time(validate_memory_log(log), "memory log")
    if isinstance(initial, BeliefStore):
        store = initial.copy()
        store.params = params
    else:
        store = BeliefStore(initial, params=params)
    walk = _Walk(store, new_clock=params.release != "4d5d5c5")
    for pos, ev in enumerate(log.to_dict(orient="records")):
        walk.step(pos, ev)
    walk.derived.warn("run_belief")
    raw = _reads_frame(walk.reads)
    events, metrics, table = _score(raw, params, walk.time_only, walk.n_missing)
    act = pd.DataFrame(walk.actions, columns=["position", "ts", "memory_id", "kind", "action", "changed"])
    return BeliefReplayResult(events, act, store, metrics, table, params, raw, walk.time_only, log=log)


class _Walk:
    """The event loop of :func:`run_belief`: one store, the reads and actions it records, and the
    counts of time-only transitions and of events on rows that do not exist."""

    def __init__(self, store: BeliefStore, *, new_clock: bool):
        self.store = store
        self.new_clock = new_clock
        self.derived = DerivedAuthority()
        self.reads: list = []
        self.actions: list = []
        self.last_fp: dict = {}
        self.touched: set = set()
        self.time_only = 0
        self.n_missing = 0

    def step(self, pos: int, ev: dict) -> None:
        """Apply one event; a read or an unrelated event that journals a change is time-only."""
        kind = ev["kind"]
        n_journal = len(self.store.journal)
        if kind == "write":
            self.store.write(_write_row(ev), _where=f"memory log row {pos} (write)")
            self.touched.add(ev["memory_id"])
        elif kind == "read":
            self.read(pos, ev)
        elif not self.evidence(pos, ev, kind):
            return
        if kind in ("read", "unrelated") and len(self.store.journal) != n_journal:
            self.time_only += len(self.store.journal) - n_journal

    def read(self, pos: int, ev: dict) -> None:
        """Record the row as stored; a stored change since the last read that no event touched
        counts as a time-only transition."""
        row = self.store.row_view(ev["memory_id"])
        if row is None:
            self.n_missing += 1
            self.reads.append(dict(position=pos, ts=ev["ts"], memory_id=ev["memory_id"],
                                   still_true=ev["still_true"], missing=True))
            return
        fp = tuple(repr(row[c]) for c in _FP)
        mid = row["id"]
        if mid in self.last_fp and self.last_fp[mid] != fp and mid not in self.touched:
            self.time_only += 1
        self.last_fp[mid] = fp
        self.touched.discard(mid)
        self.reads.append(dict(
            position=pos, ts=ev["ts"], memory_id=mid, still_true=ev["still_true"],
            missing=False, status=row["status"], belief_class=row["belief_class"],
            half_life_days=row["half_life_days"], user_asserted=row["user_asserted"],
            memory_kind=row["kind"], tier=row["tier"], valid_to=row["valid_to"],
            as_of=row["last_corroborated_at"] or (self.new_clock and row["evidence_time"])
            or row["captured_at"],
            corroboration_count=row["corroboration_count"]))

    def evidence(self, pos: int, ev: dict, kind: str) -> bool:
        """Apply an evidence event through the store; False when its target row does not exist."""
        target = _val(ev["target_memory_id"]) or ev["memory_id"]
        if kind != "unrelated" and target not in self.store:
            self.n_missing += 1
            self.actions.append(dict(position=pos, ts=ev["ts"], memory_id=target, kind=kind,
                                     action="missing", changed=[]))
            return False
        out = self.store.apply_event(dict(ev), pos, derived=self.derived)
        self.touched.add(out["memory_id"])
        self.actions.append(dict(position=pos, ts=ev["ts"], **out))
        return True


def _reads_frame(reads: list) -> pd.DataFrame:
    cols = ["position", "ts", "memory_id", "still_true", "missing", "status", "belief_class",
            "half_life_days", "user_asserted", "memory_kind", "tier", "valid_to", "as_of",
            "corroboration_count"]
    df = pd.DataFrame(reads, columns=cols)
    for col in ("ts", "valid_to", "as_of"):
        df[col] = pd.to_datetime(pd.Series(list(df[col]), dtype=object), utc=True).dt.as_unit("ns")
    df["half_life_days"] = pd.to_numeric(df["half_life_days"]).astype("float64")
    df["still_true"] = pd.array([None if _val(v) is None else bool(v) for v in df["still_true"]],
                                dtype="boolean")
    df["missing"] = df["missing"].astype(bool)
    df["user_asserted"] = df["user_asserted"].map(lambda v: bool(v) if _val(v) is not None else False)
    return df
