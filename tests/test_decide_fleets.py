"""Decisions on fleet-shaped sweeps (issue 34): the user level, unbalanced clusters, who is
hurt, repeated looks. Worlds come from ``benchmarks/bench_decide_fleets.py``'s generator, which
plants the truth outside the code under test."""

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.errors import InputError
from thatchlab.decide import decide
from thatchlab.decide._testing import (
    linearized_se,
    paired_difference,
    sequence_halfwidth,
    sequence_rho,
)

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(_BENCH))
    spec = importlib.util.spec_from_file_location("bench_decide_fleets", _BENCH / "bench_decide_fleets.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kw)


def test_decide_clusters_by_user_when_the_sweep_recorded_users(bench):
    frame = bench.fleet(np.random.default_rng(1), 8, 10, np.full(8, -0.10))
    d = _quiet(decide, frame, "interruption_rate", n_boot=50)
    assert d.cluster == "user"
    assert set(d.evidence["cluster"]) == {"user"} and set(d.evidence["n_clusters"]) == {8}
    s = _quiet(decide, frame, "interruption_rate", n_boot=50, cluster="session")
    assert s.cluster == "session" and set(s.evidence["n_clusters"]) == {80}
    with pytest.raises(InputError, match="this sweep's clusters are 'session' or 'user', got 'team'"):
        decide(frame, "interruption_rate", cluster="team")


def test_cr1_part_equals_statsmodels_cluster_robust_covariance():
    """With equal leverages CR2 is CR1 with G/(G-1): checked against statsmodels' WLS with
    cluster-robust covariance (its small-sample correction, K = 1) on the rows themselves."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(4)
    groups = np.repeat(np.arange(6), 5)  # 6 clusters of 5 rows each: equal leverages
    w = np.ones(groups.size)
    diff = rng.normal(0.1, 1.0, groups.size) + np.repeat(rng.normal(0, 0.5, 6), 5)
    fit = sm.WLS(diff, np.ones((diff.size, 1)), weights=w).fit(cov_type="cluster",
                                                               cov_kwds={"groups": groups})
    num = np.bincount(groups, weights=diff * w)
    den = np.bincount(groups, weights=w)
    m = num.sum() / den.sum()
    se, df = linearized_se((num - m * den) / den.sum(), den / den.sum(), 6)
    assert se == pytest.approx(float(fit.bse[0]), rel=1e-10)
    assert df == pytest.approx(5.0)
    r = paired_difference(np.zeros(6), den, num, den, None)
    assert r["se"] == pytest.approx(float(fit.bse[0]), rel=1e-10) and r["draws"].size == 0


def test_one_user_with_half_the_rows_counts_as_few_clusters(bench):
    frame = bench.fleet(np.random.default_rng(2), 30, 4, np.zeros(30), half=True)
    s = frame.attrs["clusters"].coarsen(frame.attrs["cluster_parents"]["user"], "user")
    (n0,), (d0,) = s.sums("interruption_rate", "test", [frame["config_id"].iloc[0]])
    (n1,), (d1,) = s.sums("interruption_rate", "test", [frame["config_id"].iloc[1]])
    r = paired_difference(n0, d0, n1, d1, None)
    assert r["n_clusters"] == 30 and 4.0 < r["effective_clusters"] < 4.5


def test_a_change_that_hurts_a_minority_is_not_shipped_by_default(bench):
    effects = np.r_[np.full(26, -0.05), np.full(4, 0.15)]
    frame = bench.fleet(np.random.default_rng(9), 30, 8, effects)  # the pooled change passes its gate
    d = _quiet(decide, frame, "interruption_rate", n_boot=50)
    assert d.shipped_parameters() == []
    assert d.harm["users"] == 30 and not d.harm["holds"] and sorted(d.harm["hurt"]) == ["u26", "u27"]
    assert set(d.per_user["user"].iloc[:4]) == {"u26", "u27", "u28", "u29"}  # the worst four, first
    # the split by sign of the point effect is shown even where most intervals include 0
    assert d.harm["by_sign"] == {"worse": 6, "better": 24, "no change": 0}
    assert d.harm["by_interval"] == {"worse": 2, "better": 4, "unclear": 24}
    assert d.harm["split"] == "by point effect 6 worse, 24 better; by interval 2 worse, 4 better, 24 unclear"
    assert (d.per_user["direction"].iloc[:4] == "worse").all()
    assert d.per_user["direction"].tolist().count("worse") == 6 and d.per_user["better"].sum() == 4
    assert d.summary().splitlines()[-1] == ("  per user (30): by point effect 6 worse, 24 better; by interval "
                                            "2 worse, 4 better, 24 unclear; hurt beyond 0: u26, u27")
    assert d.harm["split"] in d.evidence["reason"].iloc[0]
    assert "hurts" in d.evidence["reason"].iloc[0] and "beyond the harm margin 0" in d.evidence["reason"].iloc[0]
    ok = _quiet(decide, frame, "interruption_rate", n_boot=50, allow_harm=True)
    assert ok.shipped_parameters() == ["threshold"] and ok.harm["allowed"] and ok.harm["holds"]
    assert ok.to_dict()["harm"]["hurt"] == d.harm["hurt"]


def test_a_change_that_helps_everyone_ships_with_its_per_user_table(bench):
    frame = bench.fleet(np.random.default_rng(8), 30, 8, np.full(30, -0.10))
    d = _quiet(decide, frame, "interruption_rate", n_boot=50)
    assert d.shipped_parameters() == ["threshold"] and d.harm["hurt"] == [] and d.harm["holds"]
    assert list(d.per_user.columns) == ["user", "sessions", "rows", "delta", "ci_lower", "ci_upper",
                                        "worsening", "direction", "worse", "better", "hurt"]
    assert (d.per_user["sessions"] == 8).all() and d.harm["share_worse"] == 0.0
    assert d.harm["by_sign"] == {"worse": 0, "better": 30, "no change": 0}
    assert d.harm["by_interval"] == {"worse": 0, "better": 15, "unclear": 15}


def test_confidence_sequences_are_wider_and_the_ledger_records_every_look(bench, tmp_path):
    rho = sequence_rho(0.05)
    assert sequence_halfwidth(1.0, 100, 0.05, rho) == pytest.approx(3.0352, abs=1e-4)
    ledger = tmp_path / "looks.json"
    frame = bench.fleet(np.random.default_rng(9), 30, 8, np.full(30, -0.04))
    plain = _quiet(decide, frame, "interruption_rate", n_boot=50)
    seq = _quiet(decide, frame, "interruption_rate", n_boot=50, sequential=True, looks=ledger)
    g, s = plain.combined["gate"], seq.combined["gate"]
    assert (s["ci_upper"] - s["ci_lower"]) > 1.2 * (g["ci_upper"] - g["ci_lower"])
    assert seq.looks == 1 and seq.sequential
    with pytest.warns(UserWarning, match="records 1 earlier look"):
        again = decide(frame, "interruption_rate", n_boot=50, looks=ledger)
    assert again.looks == 2
    rows = pd.read_json(ledger)
    assert rows["look"].tolist() == [1, 2] and rows["sequential"].tolist() == [True, False]
    assert set(rows["cluster"]) == {"user"}
