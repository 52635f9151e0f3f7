"""A cell the calibration functions and the prefetcher cannot read is named by row and column.

Called on frames nobody validated (a recall log, shadow observations or patterns a researcher
built or edited), these read numbers and times straight from the cells. Before: text in a
number column raised NumPy's raw ``ValueError``, an unparsable time pandas' raw
``DateParseError``, a boolean passed as the number 1, a missing ``corroboration`` reached the
derive fit as NaN (a raw ``LinAlgError``), and a missing ``created_at`` gave the shadow
sampler an age of about 350 years (the time minus pandas' missing-time sentinel).
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
