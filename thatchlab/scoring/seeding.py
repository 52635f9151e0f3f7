"""Default behaviors and their version-stamped seeding into the ``global`` store.

thatchlab ships its own list of default behaviors (key, situation, behavior,
rationale). Seeding follows production's rule, adopted after lookup by
matcher cosine destroyed user-made rules: a seeded behavior's rationale ends
with the stamp ``seed-key:{key} seed-version:{version}``; a default is looked
up by its key among ``global`` behaviors; the same version is skipped,
another version is deleted and re-created (reusing its matcher); behaviors
without a stamp are never touched.
"""

from __future__ import annotations

import json
import re
from importlib import resources

import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.scoring.engine import _check_text

__all__ = ["default_behaviors", "seed_defaults", "seed_stamp", "read_stamp"]

_STAMP_KEY = re.compile(r"seed-key:(\S+)")
_STAMP_VERSION = re.compile(r"seed-version:(\S+)")


def default_behaviors() -> pd.DataFrame:
    """The default behaviors shipped with thatchlab (key, situation, behavior, rationale).

    Returns
    -------
    DataFrame
        One row per default.

    See Also
    --------
    seed_defaults : Seeds them into an engine.
    """
    text = resources.files("thatchlab").joinpath("data/default_behaviors.json").read_text("utf-8")
    return pd.DataFrame(json.loads(text), columns=["key", "situation", "behavior", "rationale"])


def seed_stamp(key: str, version: str) -> str:
    """The stamp a seeded behavior's rationale ends with.

    Parameters
    ----------
    key : str
        The default's key.
    version : str
        The seed version.

    Returns
    -------
    str
        ``seed-key:<key> seed-version:<version>``.

    See Also
    --------
    read_stamp : Reads it back.

    Examples
    --------
    >>> seed_stamp("tests-first", "1.0.0")
    'seed-key:tests-first seed-version:1.0.0'
    """
    return f"seed-key:{key} seed-version:{version}"


def read_stamp(rationale) -> tuple[str | None, str | None]:
    """``(key, version)`` of a rationale's seed stamp (None for a missing part).

    Parameters
    ----------
    rationale : str or None
        A behavior's rationale.

    Returns
    -------
    key, version : str or None
        The stamp's parts.

    See Also
    --------
    seed_stamp : Writes the stamp.

    Examples
    --------
    >>> read_stamp("catches bugs seed-key:tests-first seed-version:1.0.0")
    ('tests-first', '1.0.0')
    >>> read_stamp("made by the user")
    (None, None)
    """
    if not rationale:
        return None, None
    key, version = _STAMP_KEY.search(rationale), _STAMP_VERSION.search(rationale)
    return (key.group(1) if key else None), (version.group(1) if version else None)


def seed_defaults(engine, version: str, now=None, defaults: pd.DataFrame | None = None) -> pd.DataFrame:
    """Seed default behaviors into ``engine``'s ``global`` store, idempotently across versions.

    Parameters
    ----------
    engine : BehaviorEngine
        The engine (:class:`~thatchlab.scoring.BehaviorEngine`) seeded.
    version : str
        The seed version stamped on every default (no whitespace).
    now : time, default=None
        The time of the writes (the engine's clock when None).
    defaults : DataFrame, default=None
        Columns key, situation, behavior, rationale; :func:`default_behaviors` when None.

    Returns
    -------
    DataFrame
        One row per default: ``key`` and ``action`` (``created``, ``skipped``
        or ``replaced``).

    Raises
    ------
    InputError
        An empty version, or one with whitespace.
    """
    _check_text("version", version)
    if any(ch.isspace() for ch in version):
        raise InputError(f"version: expected no whitespace, got {version!r}")
    defaults = default_behaviors() if defaults is None else defaults
    actions = []
    for row in defaults.itertuples(index=False):
        found = _stamped_position(engine.state, row.key)
        if found is not None:
            if read_stamp(engine.state.items.row(found)["rationale"])[1] == version:
                actions.append({"key": row.key, "action": "skipped"})
                continue
            engine.state.delete_item(found)
            action = "replaced"
        else:
            action = "created"
        # always a new behavior (never linked to someone else's rule); a near-identical
        # global matcher is reused
        engine.write_result(row.situation, row.behavior, engine.config.create_signal,
                            f"{row.rationale} {seed_stamp(row.key, version)}", "global", now, force_new=True)
        actions.append({"key": row.key, "action": action})
    return pd.DataFrame(actions, columns=["key", "action"])


def _stamped_position(state, key: str) -> int | None:
    """Position of the first ``global`` behavior whose stamp carries ``key``."""
    for pos, (store, rationale) in enumerate(zip(state.items["store"], state.items["rationale"])):
        if store == "global" and read_stamp(rationale)[0] == key:
            return pos
    return None
