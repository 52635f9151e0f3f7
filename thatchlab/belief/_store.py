"""A belief store: memory rows that only evidence events change (time alone never does).

Rows are the production memory fields (the evidence clock is
``last_corroborated_at``). ``restated`` refreshes the clock, ``contradicted``
lowers confidence and may supersede, ``resolved`` closes the row at the event
time, ``unrelated`` writes nothing and ``delete`` is the only removal.
Reads compute currency on the fly and never write; nothing changes on time
alone.

Production's edges, kept as they are:

* release ``4d5d5c5``: a contradiction from a *less* authoritative source
  still lowers the row's confidence (to 0.0 under the default
  ``contradiction_factor``) and marks it contradicted; authority only decides
  whether it also supersedes;
* release ``17fecf7``: a less authoritative source (``source_authority`` on
  omi's 0-5 scale, derived with a warning when absent) writes nothing, for
  every judged event; the event lands at the later of the two rows' original
  evidence times; the automation pause stops judged events;
* an empty ``belief_class`` is no class, and a class thatchlab does not know
  is accepted when the row stores a half-life (which wins over any class);
* NaN in ``half_life_days`` is pandas' missing value here, as in every float
  column: a row cannot store a NaN half-life (the scalar functions of
  :mod:`thatchlab.belief` show what production does with one).
"""

from __future__ import annotations

import copy as _copy
from types import MappingProxyType

import numpy as np
import pandas as pd

from thatchlab.belief._admit import admit as _admit_claims
from thatchlab.belief._currency import (
    compute_currency,
    currency_band,
    evidence_clock,
)
from thatchlab.belief._half_life import derive_half_life_days
from thatchlab.belief._policy import (
    EVIDENCE_COLUMNS,
    DerivedAuthority,
    is_null,
    norm_evidence_fields,
    original_evidence_time,
)
from thatchlab.belief._policy import (
    source_authority as _source_authority,
)
from thatchlab.belief._rows import MEMORY_COLUMNS, memories_frame, norm_row
from thatchlab.core.errors import InputError
from thatchlab.core.frames import plain_columns
from thatchlab.core.params import ParamsMixin
from thatchlab.core.params.belief import (
    EVIDENCE_EVENTS,
    OWNER_AUTHORSHIP_MIN,
    SOURCE_AUTHORITY,
    USER_SUBJECT_SCOPE,
    BeliefParams,
)
from thatchlab.core.time import as_utc, iso_ms

__all__ = ["BeliefStore", "MEMORY_COLUMNS", "EVIDENCE_COLUMNS"]

def _events_records(events) -> list[dict]:
    if isinstance(events, pd.DataFrame):
        return plain_columns(events).to_dict(orient="records")
    if isinstance(events, dict):
        return [events]
    return [dict(e) for e in events]


def _mask_17fecf7(df: pd.DataFrame, which: str, include_archive: bool, known, band) -> np.ndarray:
    """The rows of view ``which`` under release ``17fecf7`` (see :meth:`BeliefStore.view`)."""
    archive = (df["tier"] == "archive").to_numpy()
    fence = ~archive if not include_archive else np.ones(len(df), dtype=bool)
    if which in ("all", "released"):
        return fence
    if which == "useful_now":
        return ~archive & (known & (df["status"] != "contradicted")
                           & band.isin(["current", "fading"])).to_numpy()
    return fence & (df["status"].isin(["superseded", "contradicted"]) | ~known
                    | band.isin(["fading", "history"])).to_numpy()


class BeliefStore(ParamsMixin):
    """Memory rows under the belief model.

    Parameters
    ----------
    memories : DataFrame, default=None
        Rows with at least ``id``, ``text``, ``captured_at`` (other columns of
        :data:`MEMORY_COLUMNS` default to null / 0 / ``active``).
    params : BeliefParams, default=None
        The release and the model's parameters; the defaults when None.

    Attributes
    ----------
    params : BeliefParams
        The parameters in use.
    journal : list of dict
        One entry per write: ``memory_id``, ``event`` and ``changed`` (the columns written).
    memories : DataFrame
        A copy of the rows.
    tables : dict
        The export table.

    Raises
    ------
    InputError
        ``params`` that are not :class:`~thatchlab.core.params.BeliefParams`, ``memories`` that
        are not a DataFrame, or a bad row.

    Examples
    --------
    >>> store = BeliefStore()
    >>> store.write({"id": "m1", "text": "likes green tea", "belief_class": "preference",
    ...              "captured_at": "2026-01-01T00:00:00Z"})
    >>> _ = store.apply({"ts": "2026-03-01T00:00:00Z", "kind": "restated", "memory_id": "m1"})
    >>> v = store.view("2026-08-28T00:00:00Z", which="all")
    >>> row = v.iloc[0]
    >>> int(row["corroboration_count"]), float(row["currency"]), row["band"]
    (1, 0.5, 'fading')
    """

    def __init__(self, memories: pd.DataFrame | None = None, params: BeliefParams | None = None):
        self.params = params if params is not None else BeliefParams()
        if not isinstance(self.params, BeliefParams):
            raise InputError(f"params: expected BeliefParams, got {type(self.params).__name__}")
        self._rows: dict[str, dict] = {}
        self.journal: list[dict] = []
        if memories is not None:
            if not isinstance(memories, pd.DataFrame):
                raise InputError(f"memories: expected a DataFrame, got {type(memories).__name__}")
            for i, rec in enumerate(plain_columns(memories).to_dict(orient="records")):
                self.write(rec, _where=f"memories row {i}")

    # -- state ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, memory_id) -> bool:
        return memory_id in self._rows

    def __repr__(self) -> str:
        return f"BeliefStore({len(self)} memories)"

    @property
    def memories(self) -> pd.DataFrame:
        """A copy of the rows as a DataFrame (insertion order)."""
        return memories_frame(self._rows.values())

    @property
    def tables(self) -> dict:
        """``{"belief_memories": memories}``, the export table."""
        return {"belief_memories": self.memories}

    def row(self, memory_id) -> dict:
        """A copy of one row as a dict (unknown id raises).

        Parameters
        ----------
        memory_id : str
            The row's id.

        Returns
        -------
        dict
            A deep copy of the row.

        Raises
        ------
        InputError
            When no row has that id.

        See Also
        --------
        row_view : A read-only view, without copying.
        """
        if memory_id not in self._rows:
            raise InputError(f"memory_id: no memory {memory_id!r} in the store")
        return _copy.deepcopy(self._rows[memory_id])

    def row_view(self, memory_id):
        """A read-only view of one row (``None`` for an unknown id), without copying.

        For replays that read many rows: the view reflects later writes and
        cannot be modified.

        Parameters
        ----------
        memory_id : str
            The row's id.

        Returns
        -------
        mapping or None
            The view.

        See Also
        --------
        row : A copy of the row.
        row_views : Views of every row.
        """
        row = self._rows.get(memory_id)
        return None if row is None else MappingProxyType(row)

    def row_views(self):
        """Read-only views of every row, in insertion order (see :meth:`row_view`).

        Returns
        -------
        iterator of mapping
            One view per row.
        """
        return (MappingProxyType(r) for r in self._rows.values())

    def copy(self) -> BeliefStore:
        """An independent copy: the same parameters, the rows and journal copied.

        Returns
        -------
        BeliefStore
            The copy.
        """
        out = BeliefStore(params=self.params)
        out._rows = _copy.deepcopy(self._rows)
        out.journal = list(self.journal)
        return out

    # get_params/set_params (ParamsMixin): ``params`` and the BeliefParams fields by name
    _params_attr = "params"
    _data_args = ("memories",)

    # -- writes ----------------------------------------------------------------------------
    def write(self, row: dict, *, _where: str | None = None) -> None:
        """Insert one new memory row (a log ``write``); an existing id raises.

        Parameters
        ----------
        row : dict
            The row's columns (see :data:`MEMORY_COLUMNS`).
        _where : str, default=None
            Where the row comes from, for error messages.

        Raises
        ------
        InputError
            A bad row, or an id already in the store.
        """
        new = norm_row(dict(row), _where or f"write of {row.get('id')!r}")
        if new["id"] in self._rows:
            raise InputError(f"{_where or 'write'}: memory {new['id']!r} already exists")
        self._rows[new["id"]] = new
        self.journal.append(dict(memory_id=new["id"], event="write", changed=("*",)))

    def apply(self, events) -> pd.DataFrame:
        """Apply evidence events in the given order.

        Each event has ``ts``, ``kind`` (one of ``restated``, ``contradicted``,
        ``resolved``, ``unrelated``, ``review``, ``delete``), ``memory_id``
        and optionally ``target_memory_id`` (the row touched; when null the
        row is ``memory_id``, and when set ``memory_id`` is the evidence
        source), ``authority`` (of the new source, for contradictions),
        ``confirmed`` (for reviews) and, read under release ``17fecf7``, the
        source's ``source_authority`` (else derived from ``user_asserted`` /
        ``authority``, with a warning) and ``evidence_time``.

        Rules common to both releases: ``restated`` → corroboration_count + 1,
        last_corroborated_at = the event time, evidence pointer appended;
        ``contradicted`` → confidence × contradiction_factor, status
        ``superseded`` (superseded_by = the source) when superseding is
        allowed and a source is named, else ``contradicted``; ``resolved`` →
        valid_to = the event time; ``unrelated`` → nothing; ``review`` true →
        restated, false → contradicted without supersede; ``delete`` → the
        row is removed.

        Release ``4d5d5c5`` (omi ``belief_evidence.py`` @4d5d5c53): the event
        time is ``ts``; a contradiction whose ``authority`` is below the row's
        (null = 0) still lowers confidence (0.9 → 0.0 with the default factor,
        status ``contradicted``) and only the supersede is withheld.

        Release ``17fecf7`` (blob 17fecf7a with ``belief_source_policy.py``
        @d3bbcc94): a restated, contradicted or resolved event whose source
        is less authoritative than the row (0-5 scale) writes nothing; the
        event time is the later of the row's original evidence time (its
        ``evidence_time`` or ``captured_at``, or its last corroboration when
        later) and the source's (``evidence_time``, else ``ts``); with
        ``automation_paused`` those events write nothing. Reviews and deletes
        are the owner's and go on. A logged event is a judgment production
        made, so the store does not re-run the admission gate's family and
        subject tests: :func:`~thatchlab.belief.admit` does.

        Parameters
        ----------
        events : DataFrame, dict or list of dict
            The events, applied in order.

        Returns
        -------
        DataFrame
            One row per event: ``memory_id`` (the row touched), ``kind``, ``action`` and
            ``changed`` (columns written).

        Raises
        ------
        InputError
            A bad event (see :meth:`apply_event`).

        See Also
        --------
        apply_event : One event.
        """
        derived = DerivedAuthority()
        out = []
        for i, ev in enumerate(_events_records(events)):
            out.append(self.apply_event(ev, i, derived=derived))
        derived.warn("BeliefStore.apply")
        return pd.DataFrame(out, columns=["memory_id", "kind", "action", "changed"])

    def apply_event(self, ev: dict, i: int = 0, *, derived: DerivedAuthority | None = None) -> dict:
        """Apply one evidence event (a mapping as in :meth:`apply`); ``i`` names it in errors.

        Replays that interleave reads and events call this once per event.

        Parameters
        ----------
        ev : dict
            The event.
        i : int, default=0
            The event's position, for error messages.
        derived : DerivedAuthority, default=None
            Collects the rows whose source authority was derived, so that the caller warns
            once (without it, this call warns itself).

        Returns
        -------
        dict
            ``{"memory_id", "kind", "action", "changed"}`` for that event.

        Raises
        ------
        InputError
            An unknown kind, a bad time, no row named or an unknown one, a review without
            ``confirmed``, or bad source-policy fields.
        """
        kind = ev.get("kind")
        if kind not in EVIDENCE_EVENTS:
            raise InputError(f"event {i}, column 'kind': expected one of {list(EVIDENCE_EVENTS)}, "
                             f"got {kind!r}")
        ts = as_utc(ev.get("ts"), what=f"event {i}, column 'ts'").as_unit("ns")
        source = None if is_null(ev.get("memory_id")) else str(ev.get("memory_id"))
        target = None if is_null(ev.get("target_memory_id")) else str(ev.get("target_memory_id"))
        mid = target if target is not None else source
        if mid is None:
            raise InputError(f"event {i}: expected a memory_id or target_memory_id")
        pointer = source if target is not None and source != target else f"{kind}:{iso_ms(ts)}"
        if kind == "unrelated":
            return self._done(mid, kind, "nothing", ())
        if mid not in self._rows:
            raise InputError(f"event {i} ({kind}): no memory {mid!r} in the store")
        row = self._rows[mid]
        if kind == "review":
            confirmed = ev.get("confirmed")
            if is_null(confirmed):
                raise InputError(f"event {i} (review): column 'confirmed' must be true or false")
            if bool(confirmed):
                return self._restate(row, ts, pointer, kind)
            return self._contradict(row, kind, supersede_to=None)
        if kind == "delete":
            del self._rows[mid]
            return self._done(mid, kind, "deleted", ("*",))
        named = source if target is not None and source != target else None
        if self.params.release != "4d5d5c5":
            own = derived is None
            derived = DerivedAuthority() if own else derived
            try:
                return self._judged(row, ev, i, kind, ts, pointer, named, derived)
            finally:
                if own:
                    derived.warn("BeliefStore.apply_event")
        if kind == "restated":
            return self._restate(row, ts, pointer, kind)
        if kind == "resolved":
            row["valid_to"] = ts
            return self._done(mid, kind, "resolved", ("valid_to",))
        # contradicted
        auth = ev.get("authority")
        new_auth = 0.0 if is_null(auth) else float(auth)
        old_auth = 0.0 if row["authority"] is None else row["authority"]
        if new_auth < old_auth:
            # production lowers truth whatever the source; only superseding needs authority
            return self._contradict(row, kind, supersede_to=None)
        return self._contradict(row, kind, supersede_to=named if self.params.supersede else None)

    def _judged(self, row, ev, i, kind, ts, pointer, named, derived) -> dict:
        """A judged event under release 17fecf7 (see :meth:`apply`)."""
        if self.params.automation_paused:
            return self._done(row["id"], kind, "nothing", ())
        src = norm_evidence_fields(ev, f"event {i} ({kind})")
        src.update(id=named or pointer, user_asserted=ev.get("user_asserted"),
                   authority=ev.get("authority"))
        a_new = _source_authority(src, derived)
        # the top of omi's order (5) is at least anything: the row's authority is not needed then
        if a_new < max(SOURCE_AUTHORITY.values()) and a_new < _source_authority(row, derived):
            return self._done(row["id"], kind, "nothing", ())
        when = max(original_evidence_time(row), src["evidence_time"] or ts)
        return self._judged_write(row, kind, when, pointer, named)

    def apply_judgment(self, memory_id, kind: str, when, source: str) -> dict:
        """Write one admission judgment of release ``17fecf7`` on ``memory_id`` at ``when``.

        The admission gate (:func:`~thatchlab.belief.admit`) calls this once it has checked the
        source's independence and authority, so nothing is checked here but the event's name:
        ``restated`` (clock = ``when``), ``resolved`` (``valid_to`` = ``when``) or
        ``contradicted`` (confidence × factor, superseded by ``source`` when allowed).

        Parameters
        ----------
        memory_id : str
            The row judged.
        kind : {"restated", "resolved", "contradicted"}
            The event.
        when : aware time
            The event's time.
        source : str
            The claim's id (the evidence pointer and, for a contradiction, the superseding row).

        Returns
        -------
        dict
            ``{"memory_id", "kind", "action", "changed"}``.

        Raises
        ------
        InputError
            An unknown kind or row, or a bad time.
        """
        if kind not in ("restated", "resolved", "contradicted"):
            raise InputError(f"kind: expected restated, resolved or contradicted, got {kind!r}")
        if memory_id not in self._rows:
            raise InputError(f"memory_id: no memory {memory_id!r} in the store")
        when = as_utc(when, what="when").as_unit("ns")
        return self._judged_write(self._rows[memory_id], kind, when, str(source), str(source))

    def _judged_write(self, row, kind, when, pointer, named) -> dict:
        if kind == "restated":
            return self._restate(row, when, pointer, kind)
        if kind == "resolved":
            row["valid_to"] = when
            return self._done(row["id"], kind, "resolved", ("valid_to",))
        return self._contradict(row, kind, supersede_to=named if self.params.supersede else None)

    def _restate(self, row, ts, pointer, kind):
        row["corroboration_count"] += 1
        row["last_corroborated_at"] = ts
        row["evidence"].append(pointer)
        return self._done(row["id"], kind, "restated",
                          ("corroboration_count", "last_corroborated_at", "evidence"))

    def _contradict(self, row, kind, supersede_to):
        if row["confidence"] is not None:
            row["confidence"] = row["confidence"] * self.params.contradiction_factor
        if supersede_to is not None:
            row["status"] = "superseded"
            row["superseded_by"] = supersede_to
            return self._done(row["id"], kind, "superseded", ("confidence", "status", "superseded_by"))
        row["status"] = "contradicted"
        return self._done(row["id"], kind, "contradicted", ("confidence", "status"))

    def _done(self, mid, kind, action, changed):
        if changed:
            self.journal.append(dict(memory_id=mid, event=kind, changed=tuple(changed)))
        return dict(memory_id=mid, kind=kind, action=action, changed=list(changed))

    # -- reads -----------------------------------------------------------------------------
    def view(self, now, which: str = "useful_now", *, include_archive: bool = False) -> pd.DataFrame:
        """The rows as a reader sees them at ``now`` (nothing is written).

        Adds ``effective_half_life_days`` (:func:`derive_half_life_days`),
        ``as_of`` (the evidence clock), ``currency`` and ``band``.

        Release ``4d5d5c5``: ``useful_now``: a class or stored half-life is
        known, status is not superseded/contradicted, band ∈ {current,
        fading}. ``history``: superseded, contradicted or unclassified rows
        and rows whose band ∈ {fading, history} (fading rows are in both).
        ``all``: every row. The clock is ``last_corroborated_at``, else
        ``captured_at``.

        Release ``17fecf7`` follows ``temporal_view_allows_record`` of omi's
        ``belief_model.py`` (blob 275b9e2f) over thatchlab's rows: tier
        ``archive`` rows are in no view unless ``include_archive`` (and never
        in ``useful_now``); ``released`` (production's default list, the
        shipped contract) and ``all`` are every other row; ``useful_now``: a
        class or stored half-life is known and band ∈ {current, fading} —
        production's rule does not look at ``superseded``, so a superseded
        row with a current band is listed; ``history``: superseded or
        unclassified rows and rows whose band ∈ {fading, history}. A
        ``contradicted`` row (thatchlab's state of a row the owner refuted in
        review, which production hides from every view through
        ``user_review``) stays out of ``useful_now`` and in ``history``, as in
        ``4d5d5c5``.
        The clock is ``last_corroborated_at``, else the row's original
        evidence time (``evidence_time``, else ``captured_at``).

        Parameters
        ----------
        now : aware time
            The time of the read.
        which : str, default="useful_now"
            The view: one of ``params.views``.
        include_archive : bool, default=False
            Release ``17fecf7``: list tier ``archive`` rows too (never in ``useful_now``).

        Returns
        -------
        DataFrame
            The rows of the view, with the four read columns.

        Raises
        ------
        InputError
            An unknown view, a non-bool ``include_archive``, ``include_archive`` under
            ``4d5d5c5``, or a bad ``now``.

        See Also
        --------
        proactive : omi's proactive bar.
        """
        new = self._view_release(which, include_archive)
        now = as_utc(now, what="now")
        df = self.memories
        if df.empty:
            for col, dtype in (("effective_half_life_days", "float64"),
                               ("as_of", "datetime64[ns, UTC]"), ("currency", "float64"),
                               ("band", object)):
                df[col] = pd.Series(dtype=dtype)
            return df
        self._add_read_columns(df, now, new)
        known = df["belief_class"].notna() | df["half_life_days"].notna()
        band = df["band"]
        if new:
            return df[_mask_17fecf7(df, which, include_archive, known, band)].reset_index(drop=True)
        if which == "all":
            return df
        closed = df["status"].isin(["superseded", "contradicted"])
        if which == "useful_now":
            mask = known & ~closed & band.isin(["current", "fading"])
        else:
            mask = closed | ~known | band.isin(["fading", "history"])
        return df[mask.to_numpy()].reset_index(drop=True)

    def _view_release(self, which, include_archive) -> bool:
        """Check the view's arguments; whether the release is ``17fecf7``'s (not ``4d5d5c5``)."""
        views = self.params.views
        if which not in views:
            raise InputError(f"which: expected one of {list(views)} (release {self.params.release!r}), "
                             f"got {which!r}")
        new = self.params.release != "4d5d5c5"
        if not isinstance(include_archive, bool):
            raise InputError(f"include_archive: expected True or False, got {include_archive!r}")
        if include_archive and not new:
            raise InputError("include_archive: release '4d5d5c5' has no archive fence; use release='17fecf7'")
        return new

    def _add_read_columns(self, df: pd.DataFrame, now, new: bool) -> None:
        """Add the half-life, the release's evidence clock, the currency at ``now`` and its band."""
        df["effective_half_life_days"] = derive_half_life_days(
            df["half_life_days"], user_asserted=df["user_asserted"],
            belief_class=df["belief_class"], kind=df["kind"], tier=df["tier"], params=self.params)
        if new:
            df["as_of"] = df["last_corroborated_at"].fillna(df["evidence_time"]).fillna(df["captured_at"])
        else:
            df["as_of"] = evidence_clock(df)
        df["currency"] = np.asarray(compute_currency(
            df["as_of"], now, df["effective_half_life_days"], df["valid_to"]), dtype=np.float64)
        df["band"] = currency_band(df["currency"])

    def proactive(self, now) -> pd.Series:
        """Which rows pass omi's proactive bar at ``now`` (release ``17fecf7``), a boolean Series by id.

        ``record_passes_proactive_bar`` of ``belief_model.py`` (blob 275b9e2f): a class or
        stored half-life is known, the source is owner-authored (source authority ≥ 3,
        ``user_spoken``; derived with a warning when absent), band ``current``, subject
        ``primary_user``, and truth not contradicted (no ``superseded_by``, confidence > 0 or
        null). Owner review and use suppression are not modelled (thatchlab rows carry neither).

        Parameters
        ----------
        now : aware time
            The time of the read.

        Returns
        -------
        Series of bool
            Named ``proactive``, indexed by ``id``.

        Raises
        ------
        InputError
            Under release ``4d5d5c5``.

        See Also
        --------
        view : The rows a reader sees.
        """
        if self.params.release == "4d5d5c5":
            raise InputError("proactive: the proactive bar is replayed for release '17fecf7' only; "
                             "use BeliefParams(release='17fecf7')")
        v = self.view(now, "all", include_archive=True)
        derived = DerivedAuthority()
        rows = list(self._rows.values())
        owner = np.array([_source_authority(r, derived) >= OWNER_AUTHORSHIP_MIN for r in rows], dtype=bool)
        derived.warn("BeliefStore.proactive")
        known = (v["belief_class"].notna() | v["half_life_days"].notna()).to_numpy()
        truth = (v["superseded_by"].isna() & ~(v["confidence"] <= 0.0)).to_numpy()
        ok = known & owner & (v["band"] == "current").to_numpy() & truth & (
            v["subject_scope"] == USER_SUBJECT_SCOPE).to_numpy()
        return pd.Series(ok, index=pd.Index(v["id"], name="id"), name="proactive")

    def admit(self, claims, judge, embedder, k: int | None = None, min_score: float | None = None,
              *, at=None, apply: bool = True) -> pd.DataFrame:
        """Admission gate; see :func:`thatchlab.belief.admit`.

        Parameters
        ----------
        claims : DataFrame, str or list of str
            The claims, judged one after another.
        judge : callable
            ``judge(claim_dict, neighbours_df) -> Judgment``.
        embedder : Embedder
            Embeds the passages.
        k, min_score : int and float, default=None
            Default to ``params.k`` / ``params.min_score``.
        at : aware time, default=None
            The time of claims that carry no ``ts``.
        apply : bool, default=True
            When False nothing is written.

        Returns
        -------
        DataFrame
            One row per claim (see :func:`thatchlab.belief.admit`).
        """
        return _admit_claims(self, claims, judge, embedder, k=k, min_score=min_score, at=at, apply=apply)
