"""Belief figures: labelled axes and one curve per class."""

from __future__ import annotations

import pandas as pd

from thatchlab.belief import BELIEF_CLASSES, BeliefParams
from thatchlab.plots import band_table_figure, currency_curves


def test_currency_curves_have_labels_and_curves():
    fig = currency_curves(BeliefParams(), days=90,
                          fitted=pd.Series({"preference": 60.0, "identity": float("inf")}))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "days since last evidence (d)" and "currency" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    # classes that share a half-life share one labelled curve instead of hiding each other
    distinct = {BeliefParams().half_life_for(c) for c in BELIEF_CLASSES}
    assert len(labels) == len(distinct) + 1 and "preference fitted (60 d)" in labels
    assert "state, plan (30 d)" in labels
    pref = next(line for line in ax.get_lines() if line.get_label().startswith("preference ("))
    assert pref.get_ydata()[0] == 1.0


def test_band_table_figure_draws_one_group_per_table():
    t = pd.DataFrame({"n": [3, 2, 5], "share_true": [0.9, 0.5, 0.1]},
                     index=pd.Index(["current", "fading", "history"], name="band"))
    fig = band_table_figure({"priors": t, "fitted": t})
    assert len(fig.axes[0].patches) == 6 and fig.axes[0].get_xlabel() == "currency band"
