"""check_fitter: every fitter passes it, and each check names the broken convention it finds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.errors import InputError
from thatchlab.fit import (
    BaseFitter,
    DeriveWeightsFitter,
    FitterCheckError,
    HalfLifeFitter,
    PriorFitter,
    check_fitter,
)
from thatchlab.fit._check import CHECKS


def _all_fitters(cls=BaseFitter) -> list[type]:
    """Every BaseFitter subclass defined in thatchlab, found recursively (new fitters join by themselves)."""
    found = []
    for sub in cls.__subclasses__():
        if sub.__module__.startswith("thatchlab."):
            found.append(sub)
        found += _all_fitters(sub)
    return sorted(set(found), key=lambda c: c.__name__)


#: Constructor arguments that keep a fitter's check fast (DeriveWeightsFitter's default 40
#: bootstrap draws for its calibrated cuts take most of its fit time and change no convention).
_FAST = {DeriveWeightsFitter: {"calibrate": 0}}


def test_the_fitters_are_discovered():
    assert {PriorFitter, HalfLifeFitter, DeriveWeightsFitter} <= set(_all_fitters())


@pytest.mark.parametrize("cls", _all_fitters(), ids=lambda c: c.__name__)
def test_every_fitter_passes_every_check(cls):
    report = check_fitter(cls(**_FAST.get(cls, {})))
    assert report["check"].tolist() == list(CHECKS)
    assert report["passed"].all(), report.loc[~report["passed"]].to_dict("records")
    row = report.set_index("check")["detail"]
    assert row["summary_columns"] == f"summary_ columns: {', '.join(cls.SUMMARY_COLUMNS)}"


def test_documented_summary_columns():
    assert PriorFitter.SUMMARY_COLUMNS == ("coef", "ci_lower", "ci_upper")
    assert HalfLifeFitter.SUMMARY_COLUMNS == ("coef", "ci_lower", "ci_upper", "n", "events", "exposure_days",
                                              "rate", "log_likelihood")
    assert DeriveWeightsFitter.SUMMARY_COLUMNS == ("coef", "se", "ci_lower", "ci_upper", "identified", "bound",
                                                   "note", "hand_set")


def test_an_instance_is_checked_with_its_own_parameters_and_never_fitted():
    fitter = HalfLifeFitter(alpha=0.1)
    report = check_fitter(fitter)
    assert report.set_index("check").loc["params_round_trip", "detail"] == "parameters: alpha, weibull"
    assert "summary_" not in vars(fitter)


def test_a_caller_s_data_are_passed_to_fit_and_left_unchanged():
    durations = np.array([1.0, 2.0, 3.0, 4.0])
    report = check_fitter(HalfLifeFitter, data=(durations, [True, False, True, True]))
    assert report["passed"].all()
    assert durations.tolist() == [1.0, 2.0, 3.0, 4.0]
    report = check_fitter(HalfLifeFitter, data={"durations_days": [5.0, 6.0], "event_observed": [1, 0]})
    assert report["passed"].all()


# -- a toy fitter that follows every convention, and one broken variant per check ------------------
class MeanFitter(BaseFitter):
    """The mean of ``values`` of a frame, with a normal interval."""

    def __init__(self, alpha: float = 0.05):
        self.alpha = alpha

    @classmethod
    def _check_data(cls):
        return pd.DataFrame({"values": [1.0, 2.0, 4.0, 7.0]})

    def fit(self, frame):
        s = frame["values"]
        m, half = float(s.mean()), 1.96 * float(s.std()) / len(s) ** 0.5
        self.n_, self.log_likelihood_ = len(s), float("nan")
        self.summary_ = pd.DataFrame({"coef": [m], "ci_lower": [m - half], "ci_upper": [m + half]},
                                     index=pd.Index(["mean"], name="param"))
        return self


class MutatesInput(MeanFitter):
    def fit(self, frame):
        frame["values"] = frame["values"] * 2
        return super().fit(frame)


class ReturnsNone(MeanFitter):
    def fit(self, frame):
        super().fit(frame)


class NoUnderscore(MeanFitter):
    def fit(self, frame):
        super().fit(frame)
        self.mean = self.summary_["coef"].iloc[0]
        return self


class LearnedInInit(MeanFitter):
    def __init__(self, alpha: float = 0.05):
        super().__init__(alpha)
        self.n_ = 0


_draws = iter(range(1000))


class RefitDiffers(MeanFitter):
    def fit(self, frame):
        super().fit(frame)
        self.draw_ = next(_draws)  # state outside the fitter: no two fits agree
        return self


class NotPicklable(MeanFitter):
    def fit(self, frame):
        super().fit(frame)
        self.transform_ = lambda x: x - self.summary_["coef"].iloc[0]
        return self


class WrongColumns(MeanFitter):
    SUMMARY_COLUMNS = ("coef", "ci_lower", "ci_upper", "se")


class ChangesParams(MeanFitter):
    def __init__(self, alpha: float = 0.05):
        self.alpha = round(alpha * 2, 6)


class BlankHtml(MeanFitter):
    def _repr_html_(self):
        return ""


class Unclonable(MeanFitter):
    def __init__(self, alpha: float = 0.05, groups=("a", "b")):
        self.alpha = alpha
        self.groups = list(groups)  # an equal copy, not the argument itself: clone refuses it


class NoData(MeanFitter):
    @classmethod
    def _check_data(cls):
        return None


def test_the_toy_fitter_passes():
    assert check_fitter(MeanFitter)["passed"].all()


@pytest.mark.parametrize("cls, check, detail", [
    (MutatesInput, "input_not_mutated", "fit changed its input args[0]: "),
    (ReturnsNone, "fit_returns_self", "fit returned None; it must return self"),
    (NoUnderscore, "learned_attribute_names",
     "fit set public attribute(s) ['mean'] whose names do not end in '_' (learned attributes end in '_'; "
     "private state starts with '_')"),
    (LearnedInInit, "not_fitted_before_fit", "learned attribute(s) ['n_'] exist before fit"),
    (RefitDiffers, "refit_identical", "a second fit on the same data learned something else: draw_: "),
    (NotPicklable, "pickle", "raised "),
    (WrongColumns, "summary_columns",
     "summary_ has columns ['coef', 'ci_lower', 'ci_upper']; WrongColumns.SUMMARY_COLUMNS documents "
     "['coef', 'ci_lower', 'ci_upper', 'se']"),
    (ChangesParams, "params_round_trip", "ChangesParams(**get_params()) has other parameters: alpha: 0.1 against 0.2"),
    (BlankHtml, "repr_html", "_repr_html_ of the unfitted fitter gave a str; expected HTML naming BlankHtml"),
    (Unclonable, "clone", "raised RuntimeError: Cannot clone object"),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_each_broken_convention_is_named(cls, check, detail):
    report = check_fitter(cls, raise_on_failure=False)
    failed = report.loc[~report["passed"]].set_index("check")["detail"]
    assert check in failed.index
    assert failed[check].startswith(detail), failed[check]
    with pytest.raises(FitterCheckError, match=rf"^{cls.__name__} failed \d+ of 10 check\(s\): .*{check}: ") as err:
        check_fitter(cls)
    assert isinstance(err.value, AssertionError)
    cols = ["check", "passed"]
    pd.testing.assert_frame_equal(err.value.report[cols], report[cols])


def test_a_broken_fitter_fails_only_its_own_checks():
    report = check_fitter(NoUnderscore, raise_on_failure=False).set_index("check")["passed"]
    assert report[~report].index.tolist() == ["learned_attribute_names"]
    report = check_fitter(MutatesInput, raise_on_failure=False).set_index("check")["passed"]
    # the doubled values double the summary on each fit, so the refit differs too
    assert report[~report].index.tolist() == ["input_not_mutated", "refit_identical"]


def test_bad_calls_are_input_errors():
    with pytest.raises(InputError, match=r"^fitter: expected a BaseFitter subclass or instance, got a str$"):
        check_fitter("PriorFitter")
    with pytest.raises(InputError, match=r"^data: NoData has no example data"):
        check_fitter(NoData)
    assert check_fitter(NoData, data=pd.DataFrame({"values": [1.0, 3.0]}))["passed"].all()
    with pytest.raises(InputError, match=r"^checks: unknown check\(s\) \['pickles'\]"):
        check_fitter(MeanFitter, checks=["pickles"])
    assert check_fitter(MeanFitter, checks=["pickle", "clone"])["check"].tolist() == ["pickle", "clone"]
