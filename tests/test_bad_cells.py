"""A cell the calibration functions, the miners and the prefetcher cannot read is named by row and column.

Called on frames nobody validated (a recall log, shadow observations or patterns a researcher
built or edited), these read numbers and times straight from the cells. Before: text in a
number column raised NumPy's raw ``ValueError``, an unparsable time pandas' raw
``DateParseError``, a boolean passed as the number 1, a missing ``corroboration`` reached the
derive fit as NaN (a raw ``LinAlgError``), and a missing ``created_at`` gave the shadow
sampler an age of about 350 years (the time minus pandas' missing-time sentinel). A list or
a dict in a key column (a miner's workspace, session, name or fact; an item, ledger or memory id)
raised pandas' raw ``unhashable type`` error, and ``mine_conditional`` read text in ``entities``
letter by letter.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from thatchlab import anticipation, calibration, datasets, logs, replay
from thatchlab.core.errors import InputError, TimeError
from thatchlab.fit import DeriveWeightsFitter

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")   # the samples' own notes


@pytest.fixture(scope="module")
def recall():
    log = datasets.load_recall_log().head(300)
    assert log["consumed"].notna().iloc[2]          # row 2 is a judged touch
    return log


def _with(df: pd.DataFrame, column: str, value) -> pd.DataFrame:
    out = df.copy()
    out[column] = out[column].astype(object)
    out.at[2, column] = value
    return out


CASES = [
    ("recall_features", "corroboration", "x", InputError, r"recalls row 2, column 'corroboration': expected a number, got 'x'"),
    ("recall_features", "corroboration", True, InputError, r"recalls row 2, column 'corroboration': expected a number, got True"),
    ("recall_features", "corroboration", None, InputError,
     r"recalls row 2, column 'corroboration': expected a value on a judged touch, got null"),
    ("recall_features", "created_at", None, InputError,
     r"recalls row 2, column 'created_at': expected a value on a judged touch, got null"),
    ("recall_features", "ts", "x", TimeError, r"recalls\.ts\[2\]: cannot parse 'x' as a timestamp"),
    ("recall_features", "created_at", True, TimeError, r"recalls\.created_at\[2\]: expected an aware timestamp, got True"),
    ("DeriveWeightsFitter.fit", "corroboration", None, InputError, r"recalls row 2, column 'corroboration'"),
    ("shadow_sample", "caller_confidence", "x", InputError,
     r"shadow_sample recalls row 2, column 'caller_confidence': expected a number, got 'x'"),
    ("shadow_sample", "corroboration", "x", InputError,
     r"shadow_sample recalls row 2, column 'corroboration': expected a number, got 'x'"),
    ("shadow_sample", "created_at", None, InputError,
     r"shadow_sample recalls row 2, column 'created_at': expected an aware time, got null"),
]
CALLS = {"recall_features": calibration.recall_features,
         "DeriveWeightsFitter.fit": lambda d: DeriveWeightsFitter().fit(d),
         "shadow_sample": lambda d: calibration.shadow_sample(d, 1.0, 0)}


@pytest.mark.parametrize(("call", "column", "value", "error", "message"), CASES)
def test_a_bad_cell_of_a_recall_log_is_named(recall, call, column, value, error, message):
    with pytest.raises(error, match=message):
        CALLS[call](_with(recall, column, value))


def test_a_bad_confidence_in_the_observations_is_named(recall):
    obs = replay.run_calibration(logs.validate_recall_log(recall)).observations
    now = obs["observed_at"].max()
    for value in ("x", True):
        with pytest.raises(InputError, match=rf"calibrate_from_shadow observations row 2, column "
                                             rf"'derived_confidence': expected a number, got {value!r}"):
            calibration.calibrate_from_shadow(_with(obs, "derived_confidence", value), now, days=3650)
    as_text = obs.assign(derived_confidence=obs["derived_confidence"].map(repr).astype(object))
    assert calibration.calibrate_from_shadow(as_text, now, days=3650).to_json() == \
        calibration.calibrate_from_shadow(obs, now, days=3650).to_json()      # text spelling a number reads as it


def test_a_bad_pattern_confidence_is_named():
    ev, rc = logs.validate_event_log(datasets.load_events().head(300)), logs.validate_recall_stream(datasets.load_recalls().head(300))
    patterns = anticipation.mine(ev, rc, ev["ts"].max() + pd.Timedelta(seconds=1))
    assert len(patterns) > 3
    with pytest.raises(InputError, match=r"patterns row 2, column 'confidence': expected a number, got 'high'"):
        anticipation.Prefetcher(_with(patterns, "confidence", "high"))
    assert np.isfinite(anticipation.Prefetcher(patterns).edges["confidence"]).all()


@pytest.mark.parametrize(("column", "value", "expected"), [
    ("corroboration_count", "x", "a whole number >= 0, got 'x'"),        # before: int()'s raw ValueError
    ("corroboration_count", 2.5, r"a whole number >= 0, got 2\.5"),      # before: stored as 2, silently
    ("corroboration_count", -1, "a whole number >= 0, got -1"),
    ("evidence", "x", r"a list of evidence ids \(or a JSON array of them\), got the text 'x'"),           # before: json's raw JSONDecodeError
    ("evidence", -1, "a list of evidence ids or null, got -1"),                  # before: "'int' object is not iterable"
])
def test_a_bad_cell_of_a_belief_store_frame_is_named(column, value, expected):
    from thatchlab.belief import BeliefStore

    memories = replay.run_belief(logs.validate_memory_log(datasets.load_memory_log().head(300))).state.memories
    assert len(memories) > 3
    with pytest.raises(InputError, match=rf"memories row 2, column '{column}': expected {expected}"):
        BeliefStore(_with(memories.reset_index(drop=True), column, value))
    kept = BeliefStore(memories).memories
    assert BeliefStore(_with(memories.reset_index(drop=True), "evidence", None)).memories.loc[2, "evidence"] == []
    assert len(kept) == len(memories)


@pytest.fixture(scope="module")
def streams():
    ev = datasets.load_events().head(300).reset_index(drop=True)
    rc = datasets.load_recalls().head(300).reset_index(drop=True)
    return ev, rc


KEY_CASES = [   # before: pandas' raw "unhashable type: 'list'" (or 'dict') from the miners' factorize
    ("mine_periodic", "recalls", "workspace"),
    ("mine_periodic", "recalls", "fact_id"),
    ("mine_sequential", "events", "workspace"),
    ("mine_sequential", "events", "name"),
    ("co_recall_count", "recalls", "session"),
    ("mine_cooccurrence", "recalls", "fact_id"),
    ("mine_conditional", "events", "session"),
    ("mine_conditional", "recalls", "fact_id"),
]
MINERS = {
    "mine_periodic": lambda ev, rc: anticipation.mine_periodic(rc),
    "mine_sequential": lambda ev, rc: anticipation.mine_sequential(ev),
    "co_recall_count": lambda ev, rc: anticipation.co_recall_count(rc),
    "mine_cooccurrence": lambda ev, rc: anticipation.mine_cooccurrence(rc),
    "mine_conditional": lambda ev, rc: anticipation.mine_conditional(ev, rc),
}


@pytest.mark.parametrize(("miner", "frame", "column"), KEY_CASES)
@pytest.mark.parametrize("value", [["a"], {"a": 1}])
def test_a_key_cell_that_cannot_key_a_group_is_named(streams, miner, frame, column, value):
    ev, rc = streams
    ev, rc = (_with(ev, column, value), rc) if frame == "events" else (ev, _with(rc, column, value))
    kind = type(value).__name__
    with pytest.raises(InputError, match=rf"{frame}: row 2, column '{column}': expected text or a number, "
                                         rf"got a {kind} "):
        MINERS[miner](ev, rc)


def test_entities_that_are_not_a_list_of_names_are_named(streams):
    ev, rc = streams
    valid = logs.validate_event_log(ev), logs.validate_recall_stream(rc)
    mined = anticipation.mine_conditional(*valid)
    for value in (-1, "prod", ["prod", 3]):         # before: "'int' object is not iterable"; "prod" read as p, r, o, d
        with pytest.raises(InputError, match=r"events: row 2, column 'entities': expected a list of entity names"):
            anticipation.mine_conditional(_with(valid[0], "entities", value), valid[1])
    with_none = _with(valid[0], "entities", None)        # a missing list is no mention, as []
    assert anticipation.mine_conditional(with_none, valid[1]).equals(
        anticipation.mine_conditional(_with(valid[0], "entities", []), valid[1]))
    assert len(mined) > 0


def test_a_null_kind_in_a_mined_stream_is_named():
    # before: the null kind was coded -1 and its rows counted under another (kind, name) node
    t = pd.Timestamp("2026-01-05T09:00Z")
    ev = pd.DataFrame({"ts": [t + pd.Timedelta(hours=h) for h in range(6)], "workspace": "w",
                       "name": ["a", "b"] * 3, "kind": ["x", None, "x", "y", "x", "y"]})
    with pytest.raises(InputError, match=r"events: row 1, column 'kind': expected a value, got null"):
        anticipation.mine_sequential(ev, min_obs=1, mode="fraction")


@pytest.mark.parametrize(("call", "message"), [
    ("prior", r"signals: row 2, column 'item_id': expected text or a number, got a list \['a'\]"),
    ("ledger", r"recall_observations ledger: row 2, column 'memory_id': expected text or a number, got a list"),
    ("caller", r"memories: row 2, column 'id': expected text or a number, got a list"),
])
def test_an_id_that_cannot_key_a_group_is_named(recall, call, message):
    from thatchlab.fit import PriorFitter

    obs = replay.run_calibration(logs.validate_recall_log(recall)).observations
    now = obs["observed_at"].max()
    ids = obs["memory_id"].drop_duplicates().reset_index(drop=True)
    memories = pd.DataFrame({"id": ids, "access_count": 1, "namespace": obs["namespace"].iloc[0],
                             "metadata": '{"agent_id": "a1"}', "lifecycle_state": "active"})
    ledger = pd.DataFrame({"memory_id": ids, "consumed": 1})
    signals = pd.DataFrame({"item_id": list("aabbc"), "signal": ["confirm", "disconfirm", "confirm", "confirm",
                                                                 "disconfirm"]})
    calls = {"prior": lambda: PriorFitter().fit(_with(signals, "item_id", ["a"])),
             "ledger": lambda: calibration.backfill_recall_outcomes(obs, _with(ledger, "memory_id", ["a"])),
             "caller": lambda: calibration.calibrate_from_shadow(obs, now, days=3650, audience="a1",
                                                                 memories=_with(memories, "id", ["a"]))}
    with pytest.raises(InputError, match=message):
        calls[call]()


def test_mine_names_a_missing_key_in_its_own_stream(streams):
    # before: mine() mined the union of both streams and named a recall's missing fact as
    # "events: row <len(events) + i>, column 'name'"
    ev, rc = streams
    now = ev["ts"].max() + pd.Timedelta(seconds=1)
    with pytest.raises(InputError, match=r"^recalls: row 2, column 'fact_id': expected a value, got null$"):
        anticipation.mine(ev, _with(rc, "fact_id", None), now)
    with pytest.raises(InputError, match=r"^events: row 2, column 'name': expected a value, got null$"):
        anticipation.mine(_with(ev, "name", None), rc, now)
    with pytest.raises(InputError, match=r"^recalls: row 2, column 'workspace': expected text or a number"):
        anticipation.mine(ev, _with(rc, "workspace", ["w"]), now)
