"""Figures of sweeps and prior fits."""

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from thatchlab.fit import PriorFitter
from thatchlab.plots import metric_curve, metric_heatmap, prior_profile


def _results():
    k = np.repeat([1.0, 5.0, 20.0], 4)
    p0 = np.tile([0.3, 0.5], 6)
    w = np.tile(np.repeat([0.25, 1.0], 2), 3)
    val = (np.log(k) - 1.5) ** 2 + (p0 - 0.5) ** 2 + 0.1 * w
    return pd.DataFrame({"k": k, "p0": p0, "soft_weight": w, "val_log_loss": val, "test_log_loss": val + 0.01,
                         "val_log_loss_lo": val - 0.02, "val_log_loss_hi": val + 0.02})


def test_heatmap_takes_best_over_other_params():
    fig = metric_heatmap(_results(), "k", "p0", "log_loss")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "prior strength K (pseudo-signals)"
    assert ax.get_ylabel() == "prior mean P0 (probability)"
    data = ax.images[0].get_array()
    assert data.shape == (2, 3)
    # the cell (k=5, p0=0.5) is the best over soft weights: 0.1 * 0.25 + (ln 5 - 1.5)^2
    assert np.isclose(float(data[1, 1]), (np.log(5.0) - 1.5) ** 2 + 0.025, rtol=1e-12)
    assert fig.axes[1].get_ylabel() == "validation log-loss (nats per signal)"


def test_curve_has_interval_band_and_units():
    fig = metric_curve(_results(), "k", "log_loss", log_x=True)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "prior strength K (pseudo-signals) (log scale)"
    assert ax.get_ylabel() == "log-loss (nats per signal)"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["validation", "validation 95% bootstrap interval", "held-out test"]
    assert ax.lines[0].get_xdata().tolist() == [1.0, 5.0, 20.0]


def test_prior_profile_interior_and_boundary():
    rng = np.random.default_rng(0)
    c = rng.binomial(8, rng.beta(2, 3, 300))
    fig = prior_profile(PriorFitter().fit_counts(c, 8 - c), "k")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and "deviance" in ax.get_ylabel()
    dev = ax.lines[0].get_ydata()
    assert dev.min() < 0.05 and dev.max() > 3.84
    fig = prior_profile(PriorFitter().fit_counts(c, 8 - c), "p0")
    assert fig.axes[0].get_xlabel() == "prior mean P0 (probability)"
    f = PriorFitter().fit_counts(np.full(100, 2), np.full(100, 3))  # no spread between items at all
    assert f.boundary_
    assert "boundary" in prior_profile(f, "k").axes[0].get_title()


def test_decision_forest_draws_every_tested_configuration_and_colours_what_ships():
    from thatchlab.decide import decide, planted_sweep
    from thatchlab.plots import decision_forest

    ships = decide(planted_sweep(30, -0.03, np.random.default_rng(1)), "log_loss", n_boot=100)
    fig = decision_forest(ships)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["k alone", "candidate (k=20.0): gate"]
    assert ax.get_title() == "prediction decision on log_loss: ships k=20.0"
    assert "left is better" in ax.get_xlabel()
    colours = {line.get_color() for line in ax.lines if line.get_linestyle() == "-"}
    assert "C2" in colours  # the shipped configuration in colour
    null = decide(planted_sweep(30, 0.03, np.random.default_rng(2)), "log_loss", n_boot=100)
    fig = decision_forest(null)
    assert fig.axes[0].get_title().endswith("ships nothing")
    assert {line.get_color() for line in fig.axes[0].lines if line.get_linestyle() == "-"} == {"0.55"}


def test_decide_calibration_study_counts_worlds():
    from thatchlab.decide import decide_calibration

    table = decide_calibration(clusters=(5, 12), reps=30, n_boot=100, seed=7)
    assert table["clusters"].tolist() == [5, 12] and table["reps"].tolist() == [30, 30]
    assert (table["false_ships"] / table["reps"]).tolist() == table["false_ship"].tolist()
    assert table["false_ship"].max() <= 0.1 and table["power"].min() > 0.3
    assert table[["coverage", "percentile_coverage"]].apply(lambda s: s.between(0, 1)).all().all()
