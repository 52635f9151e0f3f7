"""Edge cases of a second pass: CSV text that round-trips, numbers the verbs refuse, outputs and
starting stores the verbs check before any work."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests._ingest import cli as run
from tests._stores import toy_export_and_production
from thatchlab import logs
from thatchlab.core.errors import InputError, ParamsError

DATA = Path(__file__).resolve().parents[1] / "data"

#: Texts a CSV writer must quote to read back: line breaks of every kind (a lone ``\r`` is a line
#: end to CSV readers), quotes, the delimiter, edge spaces, NUL and text that looks like a number.
ODD_TEXTS = ["a\r", "a\rb", "\ra", "a\nb", "a\r\nb", "line\n", 'say "hi"', '""', "a,b", "  padded  ",
             "x\x00y", "tab\there", "1.5", "NA", "\u2028sep\x85"]


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# ----------------------------------------------------------------- 1. CSV round trips
def _odd_log() -> pd.DataFrame:
    n = len(ODD_TEXTS)
    return pd.DataFrame({
        "ts": [f"2026-01-01T09:{i:02d}:00Z" for i in range(n)],
        "session": ["s,1", "s\r2"] * (n // 2) + ["s,1"] * (n % 2),
        "kind": ["message"] * n,
        "text": ODD_TEXTS,
        "rationale": [None] * (n - 1) + ["why\r"]})


def test_interaction_log_csv_round_trips_every_text(tmp_path):
    log = _odd_log()
    path = logs.write_interaction_log(log, tmp_path / "log.csv")
    back = logs.read_interaction_log(path)
    assert back["text"].tolist() == ODD_TEXTS
    assert back["session"].tolist() == log["session"].tolist()
    assert back["rationale"].tolist()[-1] == "why\r" and back["rationale"].isna().sum() == len(log) - 1
    assert len(back) == len(log)
    # the CSV reads as the JSONL of the same log does
    as_jsonl = logs.read_interaction_log(logs.write_interaction_log(log, tmp_path / "log.jsonl"))
    assert back["text"].tolist() == as_jsonl["text"].tolist()


def test_write_table_csv_round_trips_texts_and_names(tmp_path):
    extra = ["\r", "\n", "\r\n", " ", "\x00", "end\r\r"]
    frame = pd.DataFrame({"text": ODD_TEXTS + extra, "odd,\r name": list(reversed(ODD_TEXTS + extra)),
                          "n": np.arange(len(ODD_TEXTS + extra), dtype=float)})
    path = logs.write_table(frame, tmp_path / "t.csv")
    back = logs.read_table(path)
    assert list(back.columns) == ["text", "odd,\r name", "n"]
    assert back["text"].tolist() == ODD_TEXTS + extra
    assert back["odd,\r name"].tolist() == list(reversed(ODD_TEXTS + extra))
    assert back["n"].astype(float).tolist() == frame["n"].tolist()   # CSV cells read as text
    # every text field is quoted and numbers are bare: a reader told so reads the numbers as floats
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, quoting=csv.QUOTE_NONNUMERIC))
    assert rows[0] == ["text", "odd,\r name", "n"] and rows[1] == ["a\r", "end\r\r", 0.0]
    assert path.read_bytes().startswith(b'"text","odd,\r name","n"\n"a\r","end\r\r",0.0\n')


def test_write_table_csv_empty_text_reads_back_null(tmp_path):
    """CSV cannot tell an empty text from a missing one (documented on write_table): both read as null."""
    back = logs.read_table(logs.write_table(pd.DataFrame({"text": ["", None, "x"]}), tmp_path / "e.csv"))
    # null as the text dtype has it: None in object (pandas 2), NaN in str (pandas 3)
    assert back["text"].isna().tolist() == [True, True, False] and back["text"].iloc[2] == "x"


def test_write_frame_csv_round_trips_through_our_reader_and_pandas(tmp_path):
    from thatchlab.cli._io import write_frame

    table = pd.DataFrame({"metric": ODD_TEXTS, "value": np.linspace(0.5, 3.0, len(ODD_TEXTS)),
                          "count": np.arange(len(ODD_TEXTS))})
    table.loc[2, "value"] = np.nan
    path = tmp_path / "m.csv"
    write_frame(table, path)
    ours = logs.read_table(path)
    assert ours["metric"].tolist() == ODD_TEXTS
    assert ours["count"].tolist() == [str(i) for i in range(len(ODD_TEXTS))]
    np.testing.assert_array_equal(ours["value"].astype(float).to_numpy(), table["value"].to_numpy())
    # pandas reads the numbers as numbers; its C parser stops a cell at NUL, its Python one does not
    theirs = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"metric": str},
                         float_precision="round_trip")
    plain = [i for i, t in enumerate(ODD_TEXTS) if "\x00" not in t]
    assert theirs["metric"].iloc[plain].tolist() == [ODD_TEXTS[i] for i in plain]
    np.testing.assert_array_equal(theirs["value"].to_numpy(), table["value"].to_numpy())
    assert theirs["count"].tolist() == list(range(len(ODD_TEXTS)))
    python = pd.read_csv(path, keep_default_na=False, dtype={"metric": str}, engine="python")
    assert python["metric"].tolist() == ODD_TEXTS


# ----------------------------------------------------------------- 2. numbers the verbs refuse
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), 1e308, -1.0, 86400.5])
def test_check_seconds_refuses_what_no_wait_can_be(value):
    from thatchlab.cli._inputs import check_seconds

    with pytest.raises(InputError) as exc:
        check_seconds("--timeout", value)
    assert str(exc.value) == (f"--timeout: expected a finite number of seconds between 0 and 86400, "
                              f"got {value!r}")


def test_check_seconds_passes_what_a_wait_can_be():
    from thatchlab.cli._inputs import check_count, check_number, check_seconds

    assert check_seconds("--timeout", 0) == 0.0 and check_seconds("--timeout", 86400) == 86400.0
    assert check_seconds("--timeout", 2.5, max=3) == 2.5
    with pytest.raises(InputError, match="between 0 and 3, got 4"):
        check_seconds("--timeout", 4, max=3)
    assert check_number("--days", "7", 0, 10, "number of days") == 7.0
    with pytest.raises(InputError, match=r"^--days: expected a finite number of days between 0 and 10, got 'x'$"):
        check_number("--days", "x", 0, 10, "number of days")
    assert check_count("--size", 3, 1, 5) == 3
    for bad in (0, 6, True, 2.0):
        with pytest.raises(InputError, match=r"^--size: expected an integer between 1 and 5, got "):
            check_count("--size", bad, 1, 5)


BAD_TIMEOUTS = ["nan", "inf", "1e308", "-1"]


@pytest.mark.parametrize("timeout", BAD_TIMEOUTS)
def test_merge_and_restore_refuse_a_timeout_that_is_no_number_of_seconds(timeout, tmp_path, capsys):
    export, prod = toy_export_and_production(tmp_path)
    backup = tmp_path / "prod.bak.db"
    backup.write_bytes(prod.read_bytes())
    before = prod.read_bytes()
    for argv in (["merge", str(export), str(prod), "--timeout", timeout],
                 ["merge", str(export), str(prod), "--dry-run", "--timeout", timeout],
                 ["restore", str(backup), str(prod), "--timeout", timeout]):
        code, out, err = run(argv, capsys)
        line = _one_error_line(err)
        # "--timeout: ..." once cli/_store.py checks the option (check_seconds), "timeout: ..." from the
        # store layer until then: either way exit 2, one line, nothing touched
        assert code == 2 and out == "", err
        assert line.endswith(f"timeout: expected a finite number of seconds between 0 and 86400, "
                             f"got {float(timeout)!r}"), line
    assert prod.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.db", "export.manifest.json", "prod.bak.db",
                                                         "prod.db"]


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), 1e308, -1.0])
def test_the_store_layer_refuses_the_same_timeouts(timeout, tmp_path):
    from thatchlab.store import merge_into, restore

    export, prod = toy_export_and_production(tmp_path)
    backup = tmp_path / "prod.bak.db"
    backup.write_bytes(prod.read_bytes())
    before = prod.read_bytes()
    with pytest.raises(InputError, match="timeout"):
        merge_into(export, prod, timeout=timeout)
    with pytest.raises(InputError, match="timeout"):
        merge_into(export, prod, dry_run=True, timeout=timeout)
    with pytest.raises(InputError, match="timeout"):
        restore(backup, prod, timeout=timeout)
    assert prod.read_bytes() == before


@pytest.mark.parametrize("days", ["1e308", "inf", "nan", "-1", "36500.5"])
def test_calibrate_refuses_a_window_of_no_number_of_days(days, tmp_path, capsys):
    for extra in ([], ["--now", "2026-04-01T00:00:00Z"]):
        code, out, err = run(["calibrate", str(DATA / "recall_log.jsonl"), "--days", days, *extra], capsys)
        line = _one_error_line(err)
        assert code == 2 and out == ""
        assert line == (f"error: --days: expected a finite number of days between 0 and 36500, "
                        f"got {float(days)!r}")


def test_calibration_params_bound_the_window_as_the_report_does():
    from thatchlab.calibration import MAX_WINDOW_DAYS
    from thatchlab.core.params import CalibrationParams

    assert MAX_WINDOW_DAYS == 36500
    assert CalibrationParams(window_days=36500).window_days == 36500
    with pytest.raises(ParamsError, match=r"^window_days: expected <= 36500, got 1e\+308$"):
        CalibrationParams(window_days=1e308)


def test_calibrate_at_the_largest_window(capsys):
    code, out, err = run(["calibrate", str(DATA / "recall_log.jsonl"), "--days", "36500"], capsys)
    assert code == 0, err
    assert out.startswith("CONFIDENCE CALIBRATION REPORT (window: 36500 days, observations: ")


@pytest.mark.parametrize("kind", ["preference", "behavior", "belief", "recall", "patterns"])
def test_synth_refuses_a_size_beyond_the_largest_of_its_kind(kind, tmp_path, capsys):
    from thatchlab.cli._synth import SIZES

    unit, largest = SIZES[kind]
    for size in (largest + 1, 10**12, 10**30):
        code, out, err = run(["synth", kind, "--out", str(tmp_path / "s.csv"), "--size", str(size)], capsys)
        line = _one_error_line(err)
        assert code == 2 and out == ""
        assert line == f"error: --size: {kind} accepts at most {largest} {unit} (about a million rows), got {size}"
    assert not list(tmp_path.iterdir())


def test_synth_sizes_are_documented_in_the_help(capsys):
    from thatchlab.cli._synth import SIZES

    assert SIZES == {"preference": ("sessions", 500_000), "behavior": ("sessions", 500_000),
                     "belief": ("memories", 100_000), "recall": ("recall rows", 1_000_000),
                     "patterns": ("days", 36_500)}
    code, out, _ = run(["synth", "--help"], capsys)
    flat = " ".join(out.replace("│", " ").split())
    assert code == 0
    for n in ("500000", "100000", "1000000", "36500"):
        assert f"at most {n}" in flat


@pytest.mark.parametrize("argv, option, needle", [
    (["--search", "random", "--n-trials", "1000000000000"], "--n-trials", "between 1 and 100000, got 1000000000000"),
    (["--search", "random", "--n-trials", "0"], "--n-trials", "between 1 and 100000, got 0"),
    (["--search", "optuna", "--seed", "-1"], "--seed", "between 0 and 4294967295, got -1"),
    (["--search", "optuna", "--seed", "4294967296"], "--seed", "between 0 and 4294967295, got 4294967296"),
])
def test_sweep_refuses_counts_and_seeds_it_cannot_use(argv, option, needle, capsys):
    code, out, err = run(["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space",
                          '{"state": {"low": 1, "high": 9}}', "--metric", "auc", *argv], capsys)
    line = _one_error_line(err)
    assert code == 2 and out == "" and line.startswith(f"error: {option}: ") and line.endswith(needle)


@pytest.mark.parametrize("argv, needle", [
    (["--n-boot", "1000000000000"], "--n-boot: expected a number of resamples between 1 and 100000, got 1000000000000"),
    (["--n-boot", "-1"], "--n-boot: expected a number of resamples between 1 and 100000, got -1"),
    (["--n-boot", "0"], "--n-boot: expected a number of resamples between 1 and 100000, got 0"),
    (["--seed", "-1"], "--seed: expected a seed between 0 and 4294967295, got -1"),
    (["--constraint", "brier<=nan"], "--constraint 'brier<=nan': expected METRIC<=NUMBER with a finite number, "
                                     "got 'nan'"),
    (["--constraint", "coverage>=-inf"], "--constraint 'coverage>=-inf': expected METRIC>=NUMBER with a finite "
                                         "number, got '-inf'"),
])
def test_decide_refuses_numbers_before_reading_the_sweep(argv, needle, tmp_path, capsys):
    code, out, err = run(["decide", str(tmp_path / "absent.csv"), "--metric", "log_loss",
                          "--out", str(tmp_path / "d.json"), *argv], capsys)
    assert code == 2 and out == "" and _one_error_line(err) == f"error: {needle}"
    assert not list(tmp_path.iterdir())


def test_mine_with_a_window_or_lookback_as_long_as_pandas_holds(capsys):
    from thatchlab.anticipation import mine, mine_sequential
    from thatchlab.core.params import AnticipationParams

    ev, rc = logs.read_event_log(DATA / "events.jsonl"), logs.read_recall_stream(DATA / "recalls.jsonl")
    # a window longer than the events' span holds every later event: the same as one just longer
    pd.testing.assert_frame_equal(mine_sequential(ev, window="106751d"), mine_sequential(ev, window="3650d"))
    now = max(ev["ts"].max(), rc["ts"].max()) + pd.Timedelta(seconds=1)
    want = mine(ev, rc, now, AnticipationParams(window="3650d"))
    code, out, err = run(["mine", str(DATA / "events.jsonl"), str(DATA / "recalls.jsonl"),
                          "--window", "106751d"], capsys)
    assert code == 0, err
    assert out.splitlines()[-1].split() == ["total", str(len(want))]
    # a lookback reaching before 1677 mines everything before --now
    code, out, err = run(["mine", str(DATA / "events.jsonl"), str(DATA / "recalls.jsonl"),
                          "--lookback", "106751d", "--now", "1700-01-01T00:00:00Z"], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "patterns mined over [the earliest time, 1700-01-01T00:00:00+00:00):"
    assert out.splitlines()[-1].split() == ["total", "0"]


def test_in_lookback_without_a_lower_bound():
    from thatchlab.anticipation import in_lookback
    from thatchlab.anticipation._mine import lookback_start

    df = pd.DataFrame({"ts": pd.to_datetime(["1690-01-01T00:00Z", "1699-12-31T00:00Z", "1700-01-02T00:00Z"],
                                            utc=True)})
    assert lookback_start(pd.Timestamp("1700-01-01", tz="UTC"), "106751d") is None
    assert in_lookback(df, "1700-01-01T00:00Z", "106751d")["ts"].dt.year.tolist() == [1690, 1699]
    assert in_lookback(df, "1700-01-01T00:00Z", "365d")["ts"].dt.year.tolist() == [1699]


# ----------------------------------------------------------------- 3. outputs and starting stores
@pytest.mark.parametrize("second", ["same", "dotted", "symlink"])
def test_replay_refuses_one_file_for_events_and_metrics(second, tmp_path, capsys):
    events = tmp_path / "out.csv"
    metrics = {"same": events, "dotted": tmp_path / "." / "out.csv", "symlink": tmp_path / "link.csv"}[second]
    if second == "symlink":
        metrics.symlink_to(events)
    code, out, err = run(["replay", str(DATA / "memory_log.jsonl"), "--engine", "belief",
                          "--events-out", str(events), "--metrics-out", str(metrics)], capsys)
    assert code == 2 and out == ""
    assert _one_error_line(err) == (f"error: --events-out and --metrics-out both name {metrics}; expected two "
                                    "different files (the second write would replace the first)")
    assert not events.exists()


def test_replay_writes_events_and_metrics_to_two_files(tmp_path, capsys):
    code, _, err = run(["replay", str(DATA / "memory_log.jsonl"), "--engine", "belief",
                        "--events-out", str(tmp_path / "e.csv"), "--metrics-out", str(tmp_path / "m.csv")], capsys)
    assert code == 0, err
    metrics = logs.read_table(tmp_path / "m.csv")
    assert list(metrics.columns) == ["metric", "value", "text"] and len(metrics) > 0
    assert len(logs.read_table(tmp_path / "e.csv")) > 0


def _ai_memory_db(path: Path) -> Path:
    with sqlite3.connect(path) as c:
        c.executescript("""
        CREATE TABLE memories (id TEXT PRIMARY KEY, tier TEXT, namespace TEXT, title TEXT, content TEXT,
            confidence REAL NOT NULL DEFAULT 1.0, source TEXT, created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL, confidence_source TEXT NOT NULL DEFAULT 'caller_provided',
            confidence_signals TEXT, confidence_decayed_at TEXT);
        CREATE TABLE confidence_shadow_observations (id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL, namespace TEXT NOT NULL, source TEXT, observed_at TEXT NOT NULL,
            caller_confidence REAL, derived_confidence REAL NOT NULL, signals TEXT, recall_outcome TEXT);
        """)
        c.execute("INSERT INTO memories VALUES ('m1', 'long', 'work', 't', 'c', 0.9, 'user', "
                  "'2026-02-01T00:00:00+00:00', '2026-02-01T00:00:00+00:00', 'caller_provided', NULL, NULL)")
        c.execute("INSERT INTO confidence_shadow_observations (memory_id, namespace, source, observed_at, "
                  "caller_confidence, derived_confidence, signals, recall_outcome) "
                  "VALUES ('m1', 'work', 'user', '2026-02-25T00:00:00+00:00', 0.9, 0.6, '{}', NULL)")
    c.close()
    return path


@pytest.mark.parametrize("engine", ["prediction", "behavior"])
def test_replay_initial_without_the_engines_tables(engine, tmp_path, capsys):
    db = _ai_memory_db(tmp_path / "ai-memory.db")
    code, out, err = run(["replay", str(DATA / "interactions.jsonl"), "--engine", engine,
                          "--initial", str(db), "--events-out", str(tmp_path / "e.csv")], capsys)
    items = "predictions" if engine == "prediction" else "behaviors"
    assert code == 2 and out == ""
    assert _one_error_line(err) == (
        f"error: --initial {db}: holds none of the {engine} engine's tables (stores, {engine}_matchers, {items}, "
        f"{engine}_edges, {engine}_provenance), only the calibration engine's tables; expected a thatch store or "
        f"a thatchlab export of the {engine} engine to start the replay from")
    assert not (tmp_path / "e.csv").exists()


def test_replay_initial_of_the_other_scoring_engine(tmp_path, capsys):
    from thatchlab.core.schema import STORES_DDL, thatch_ddl

    only = tmp_path / "prediction-only.db"
    with sqlite3.connect(only) as con:
        for stmt in [STORES_DDL, *thatch_ddl("prediction"), "INSERT INTO stores VALUES ('global')"]:
            con.execute(stmt)
    con.close()
    code, out, err = run(["replay", str(DATA / "behavior_interactions.jsonl"), "--engine", "behavior",
                          "--initial", str(only)], capsys)
    line = _one_error_line(err)
    assert code == 2 and out == ""
    assert "holds none of the behavior engine's tables" in line and "only the prediction engine's tables" in line


def test_an_ai_memory_database_imports_as_the_calibration_tables(tmp_path):
    """What ``thatchlab import ai-memory.db`` finds (the verb's printing is in cli/_store.py)."""
    from thatchlab.store import import_sqlite

    contents = import_sqlite(_ai_memory_db(tmp_path / "ai-memory.db"))
    assert contents.prediction is None and contents.behavior is None and contents.beliefs is None
    tables = contents.calibration.tables
    assert {k: len(v) for k, v in tables.items()} == {"memories": 1, "confidence_shadow_observations": 1}
    assert not hasattr(contents.calibration, "to_csv") and not hasattr(contents.calibration, "frame")
