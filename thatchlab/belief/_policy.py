"""omi's source policy (release ``17fecf7``): who may restate, contradict or resolve whom.

omi's ``belief_source_policy.py`` (BasedHardware/omi @d3bbcc94) orders evidence by where it came
from on a 0-5 scale (:data:`~thatchlab.core.params.belief.SOURCE_AUTHORITY`), groups it into
*families* (one original lineage, independence group or conversation each), and lets a new
record touch an existing one only when the two are about the same subject, each has at least one
family, no family is shared, the new record's authority is above 0 and at least the existing
one's, and both are eligible. Repetition (a copy, a second capture of the same conversation) is
not independent evidence.

thatchlab reads these per row, claims and stored rows alike (:data:`EVIDENCE_COLUMNS`):

``source_authority``
    an int on production's 0-5 scale. When absent it is derived as the policy derives it where
    it can: a user-asserted row is ``user_direct`` (5); otherwise the row's ``authority`` (a
    number of thatchlab's) clipped to 0-5 and rounded down; otherwise ``unknown`` (0). Every
    derivation is said in a warning, since thatchlab's ``authority`` has no fixed scale.
``evidence_families``
    a list of texts; absent or empty means none, which is never independent.
``evidence_time``
    production's original evidence time (the latest capture time of the row's evidence); absent
    means the row's own time (``captured_at``, a claim's ``ts``).
``eligible``
    whether production's eligibility test passes (active, processed, not restricted, locked,
    refused in review or suppressed, with usable evidence); default True.
``subject_entity_id``
    the entity a claim is about, when it names one; two records about the account's own user
    (``subject_scope`` ``primary_user``) without entity ids are about the same subject, two
    anonymous third parties are not.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, warn
from thatchlab.core.params.belief import SOURCE_AUTHORITY, USER_SUBJECT_SCOPE
from thatchlab.core.time import as_utc

__all__ = ["EVIDENCE_COLUMNS", "EVIDENCE_DEFAULTS", "norm_evidence_fields", "source_authority",
           "same_subject", "independent_evidence", "original_evidence_time", "DerivedAuthority"]

#: Per-row fields of the source policy (claims and stored rows), in order.
EVIDENCE_COLUMNS = ("source_authority", "evidence_families", "evidence_time", "eligible",
                    "subject_entity_id")
#: What a row without them carries.
EVIDENCE_DEFAULTS = dict(source_authority=None, evidence_families=(), evidence_time=None, eligible=True,
                         subject_entity_id=None)
_TOP = max(SOURCE_AUTHORITY.values())


def is_null(v) -> bool:
    """Whether a cell is missing (None, NaT, NA or a NaN float)."""
    if v is None or v is pd.NaT or v is pd.NA:
        return True
    return isinstance(v, (float, np.floating)) and math.isnan(v)


def _authority_value(v, where: str):
    if is_null(v):
        return None
    ok = isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        ok, v = True, int(v)
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        ok, v = True, int(v.strip())
    if not ok or not 0 <= int(v) <= _TOP:
        raise InputError(f"{where}, column 'source_authority': expected an integer from 0 to {_TOP} "
                         f"(production's source order) or null, got {v!r}")
    return int(v)


def json_list(v, where: str, what: str):
    """A cell holding a list: the list (a JSON array's text decoded, an array as a list), None when the
    cell is null; InputError naming ``where`` and ``what`` (the items expected) for anything else."""
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except json.JSONDecodeError:
            raise InputError(f"{where}: expected a list of {what} (or a JSON array of them), got the text "
                             f"{v!r}") from None
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple, set, frozenset)):
        return list(v)
    if v is None or is_null(v):
        return None
    raise InputError(f"{where}: expected a list of {what} or null, got {v!r}")


def _families_value(v, where: str) -> tuple:
    where = f"{where}, column 'evidence_families'"
    v = json_list(v, where, "non-empty texts")
    if v is None:
        return ()
    if not all(isinstance(x, str) and x for x in v):
        raise InputError(f"{where}: expected a list of non-empty texts or null, got {v!r}")
    return tuple(sorted(set(v)))


def _eligible_value(v, where: str) -> bool:
    if is_null(v):
        return True
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    if isinstance(v, (int, np.integer)) and v in (0, 1):
        return bool(v)
    raise InputError(f"{where}, column 'eligible': expected true or false (null = true), got {v!r}")


def norm_evidence_fields(raw: dict, where: str) -> dict:
    """The source-policy fields of one row, checked and normalised (see the module notes)."""
    ent = raw.get("subject_entity_id")
    return dict(
        source_authority=_authority_value(raw.get("source_authority"), where),
        evidence_families=_families_value(raw.get("evidence_families"), where),
        evidence_time=None if is_null(raw.get("evidence_time")) else as_utc(
            raw.get("evidence_time"), what=f"{where}, column 'evidence_time'").as_unit("ns"),
        eligible=_eligible_value(raw.get("eligible"), where),
        subject_entity_id=None if is_null(ent) or ent == "" else str(ent),
    )


class DerivedAuthority:
    """Counts rows whose authority was derived, for one warning per call.

    Attributes
    ----------
    rows : list
        The ids of the rows noted, each once, in the order first noted.
    """

    def __init__(self):
        self.rows: list = []
        self._seen: set = set()

    def note(self, row_id) -> None:
        """Note that ``row_id``'s authority was derived (once per id).

        Parameters
        ----------
        row_id : object
            The row's id.
        """
        if row_id not in self._seen:
            self._seen.add(row_id)
            self.rows.append(row_id)

    def warn(self, what: str) -> None:
        """Warn once about every row noted (nothing when none was).

        Parameters
        ----------
        what : str
            The call the warning names.
        """
        if not self.rows:
            return
        ids = ", ".join(repr(r) for r in self.rows[:3]) + (", ..." if len(self.rows) > 3 else "")
        warn(f"{what}: {len(self.rows)} row(s) carry no source_authority ({ids}); derived by omi's source "
             f"policy: user_asserted -> {_TOP} (user_direct), else authority clipped to 0-{_TOP} and rounded "
             f"down, else 0 (unknown). Give source_authority (0-{_TOP}) to state it.")


def source_authority(row, derived: DerivedAuthority | None = None) -> int:
    """A row's authority on production's 0-5 scale (derived when absent, noted in ``derived``).

    Derived: ``user_asserted`` gives the top; else ``authority`` clipped to the scale and
    rounded down; else 0 (unknown).

    Parameters
    ----------
    row : mapping
        A claim or stored row.
    derived : DerivedAuthority, default=None
        Notes the row when its authority is derived.

    Returns
    -------
    int
        The authority, 0 to 5.

    Examples
    --------
    >>> source_authority({"source_authority": 3}), source_authority({"user_asserted": True})
    (3, 5)
    >>> source_authority({"authority": 2.7}), source_authority({})
    (2, 0)
    """
    v = row.get("source_authority")
    if not is_null(v):
        return int(v)
    if derived is not None:
        derived.note(row.get("id", row.get("memory_id")))
    ua = row.get("user_asserted")
    if not is_null(ua) and bool(ua):
        return _TOP
    a = row.get("authority")
    if is_null(a):
        return SOURCE_AUTHORITY["unknown"]
    return int(math.floor(min(max(float(a), 0.0), float(_TOP))))


def same_subject(left, right) -> bool:
    """Production's subject test: equal scopes, then equal entity ids when either names one, else
    only the account's own user (``primary_user``) is one subject.

    Parameters
    ----------
    left, right : mapping
        Two rows with ``subject_scope`` and ``subject_entity_id``.

    Returns
    -------
    bool
        Whether they are about the same subject.

    See Also
    --------
    independent_evidence : Uses this test first.
    """
    if left.get("subject_scope") != right.get("subject_scope"):
        return False
    a, b = left.get("subject_entity_id"), right.get("subject_entity_id")
    if a or b:
        return a == b
    return left.get("subject_scope") == USER_SUBJECT_SCOPE


def independent_evidence(new, existing, derived: DerivedAuthority | None = None) -> tuple[bool, str]:
    """Whether ``new`` is independent authoritative evidence about ``existing``, and if not, why.

    In production's order: same subject; both have evidence families and share none; the new
    source's authority is above 0 and at least the row's; both are eligible.

    Parameters
    ----------
    new : mapping
        The claim (with the source-policy fields).
    existing : mapping
        The stored row.
    derived : DerivedAuthority, default=None
        Notes the rows whose authority is derived.

    Returns
    -------
    ok : bool
        Whether it is.
    reason : str
        Why not (``""`` when it is).

    See Also
    --------
    same_subject, source_authority : The tests it applies.
    """
    nf, of = set(new.get("evidence_families") or ()), set(existing.get("evidence_families") or ())
    if not same_subject(new, existing):
        return False, "another subject"
    if not nf or not of:
        return False, "no evidence family"
    if not nf.isdisjoint(of):
        return False, "shared evidence family"
    a_new = source_authority(new, derived)
    if a_new <= 0:
        return False, "source authority 0"
    # the top of the order is at least anything: the row's authority is then not needed (nor derived)
    a_old = a_new if a_new == _TOP else source_authority(existing, derived)
    if a_new < a_old:
        return False, f"less authoritative ({a_new} < {a_old})"
    if not new.get("eligible", True) or not existing.get("eligible", True):
        return False, "not eligible"
    return True, ""


def original_evidence_time(row, default=None):
    """Production's original evidence time of a row: its ``evidence_time`` (else its captured
    time, else ``default``), moved up to its last corroboration when that is later.

    Parameters
    ----------
    row : mapping
        A row with ``evidence_time``, ``captured_at`` and ``last_corroborated_at``.
    default : aware time, default=None
        The time when the row has neither of the first two.

    Returns
    -------
    aware time or None
        The time.
    """
    base = row.get("evidence_time")
    if is_null(base):
        base = row.get("captured_at")
    if is_null(base):
        base = default
    corr = row.get("last_corroborated_at")
    return base if is_null(corr) or corr <= base else corr
