"""The conventions every fitter shares (lifelines style).

``fit(...)`` returns the fitter; what it learned lives on attributes ending
in ``_``; ``summary_`` is a DataFrame indexed by parameter name with at least
``coef``, ``ci_lower`` and ``ci_upper``; ``confidence_interval_`` is its two
interval columns; ``log_likelihood_`` and ``n_`` say how well and on how much
it fitted; ``print_summary()`` prints all of it. Reading a learned attribute
before ``fit`` raises :class:`NotFittedError`.
"""

from __future__ import annotations

import sys
from typing import ClassVar

import pandas as pd

from thatchlab.core.display import html_block
from thatchlab.core.errors import ThatchlabError
from thatchlab.core.params import ParamsMixin

__all__ = ["BaseFitter", "NotFittedError"]


class NotFittedError(ThatchlabError, AttributeError):
    """A learned attribute (``summary_``, ``log_likelihood_``...) was read before ``fit``.

    Also an :class:`AttributeError`, so ``hasattr(fitter, "summary_")`` is
    ``False`` on an unfitted fitter.

    See Also
    --------
    BaseFitter : The fitters' shared conventions.

    Examples
    --------
    >>> from thatchlab.fit import HalfLifeFitter
    >>> hasattr(HalfLifeFitter(), "half_life_")
    False
    >>> try:
    ...     HalfLifeFitter().summary_
    ... except NotFittedError as err:
    ...     print(err)
    HalfLifeFitter is not fitted: call fit() before reading summary_
    """


class BaseFitter(ParamsMixin):
    """Base of the fitters: parameters, learned state, summary, repr.

    A subclass takes its parameters as constructor arguments (validated in
    ``_validate_params``, see :class:`~thatchlab.core.params.ParamsMixin`),
    implements ``fit`` to set ``summary_``, ``log_likelihood_`` and ``n_`` and
    return ``self``, and may extend ``_repr_values`` and ``_summary_header``.
    It declares the columns of its ``summary_`` in ``SUMMARY_COLUMNS`` and
    may offer small example data in a ``_check_data()`` classmethod, which
    :func:`~thatchlab.fit.check_fitter` fits to check all of this.

    Attributes
    ----------
    summary_ : DataFrame
        One row per fitted parameter (the index); columns
        ``SUMMARY_COLUMNS``: ``coef``, ``ci_lower``, ``ci_upper`` and
        whatever else the fitter reports.
    confidence_interval_ : DataFrame
        ``summary_[["ci_lower", "ci_upper"]]``.
    log_likelihood_ : float
        The maximised log-likelihood.
    n_ : int
        How many observations (:attr:`_n_noun`) the fit used.

    Examples
    --------
    >>> import pandas as pd
    >>> class MeanFitter(BaseFitter):
    ...     _estimand = "the mean"
    ...     _n_noun = "values"
    ...     def __init__(self):
    ...         pass
    ...     def fit(self, values):
    ...         s = pd.Series(values, dtype=float)
    ...         m, half = s.mean(), 1.96 * s.std() / len(s) ** 0.5
    ...         self.n_, self.log_likelihood_ = len(s), float("nan")
    ...         self.summary_ = pd.DataFrame({"coef": [m], "ci_lower": [m - half], "ci_upper": [m + half]},
    ...                                      index=pd.Index(["mean"], name="param"))
    ...         return self
    >>> f = MeanFitter()
    >>> f
    <MeanFitter: not fitted>
    >>> f.fit([1.0, 2.0, 3.0]) is f, f
    (True, <MeanFitter: fitted with 3 values, log_likelihood_=nan>)
    >>> f.confidence_interval_.round(3).to_dict("records")
    [{'ci_lower': 0.868, 'ci_upper': 3.132}]
    >>> f.print_summary()  # doctest: +NORMALIZE_WHITESPACE
    <MeanFitter: fitted with 3 values, log_likelihood_=nan>
            fitted = the mean
                 n = 3 values
    log-likelihood = nan
    <BLANKLINE>
           coef  ci_lower  ci_upper
    param
    mean      2    0.8684     3.132
    >>> MeanFitter().summary_
    Traceback (most recent call last):
    ...
    thatchlab.fit._base.NotFittedError: MeanFitter is not fitted: call fit() before reading summary_
    """

    #: What the fitter estimates, for :meth:`print_summary`.
    _estimand: ClassVar[str] = "parameters"
    #: What ``n_`` counts, for the repr and :meth:`print_summary`.
    _n_noun: ClassVar[str] = "observations"
    #: The columns of ``summary_``, in order: what the fitter documents and
    #: :func:`~thatchlab.fit.check_fitter` checks. A subclass that reports more declares its own.
    SUMMARY_COLUMNS: ClassVar[tuple[str, ...]] = ("coef", "ci_lower", "ci_upper")

    @classmethod
    def _check_data(cls):
        """Small deterministic data to fit on, for :func:`~thatchlab.fit.check_fitter`.

        What ``fit`` takes: one object, a tuple of positional arguments or a
        dict of keyword arguments; ``None`` (the default) when the fitter
        offers none, and then ``check_fitter`` needs ``data=``.
        """
        return None

    def fit(self, *args, **kwargs):  # pragma: no cover - every fitter overrides it
        """Fit to data; returns ``self``.

        Parameters
        ----------
        *args, **kwargs
            The data, as the subclass's ``fit`` names them.

        Returns
        -------
        BaseFitter
            ``self``, fitted.
        """
        raise NotImplementedError(f"{type(self).__name__}.fit")

    # -- learned state ---------------------------------------------------------------------
    def _is_fitted(self) -> bool:
        return "summary_" in self.__dict__

    def __getattr__(self, name):
        # only reached when normal lookup fails: a learned attribute of an unfitted fitter
        if name.endswith("_") and not name.startswith("_") and not self._is_fitted():
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit() before reading {name}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def confidence_interval_(self) -> pd.DataFrame:
        """The ``ci_lower`` and ``ci_upper`` columns of ``summary_`` (a copy)."""
        return self.summary_[["ci_lower", "ci_upper"]].copy()

    # -- display ---------------------------------------------------------------------------
    def _repr_values(self) -> list[tuple[str, object]]:
        """(name, value) pairs shown by the repr of a fitted fitter."""
        return [("log_likelihood_", self.log_likelihood_)]

    def _summary_header(self) -> list[tuple[str, object]]:
        """Extra (label, value) lines of :meth:`print_summary`, after the standard ones."""
        return []

    def __repr__(self) -> str:
        name = type(self).__name__
        if not self._is_fitted():
            return f"<{name}: not fitted>"
        parts = [f"fitted with {self.n_} {self._n_noun}"]
        parts += [f"{key}={_short(value)}" for key, value in self._repr_values()]
        return f"<{name}: {', '.join(parts)}>"

    def _repr_html_(self) -> str:
        """The fitter in a notebook: its repr, the header facts and ``summary_`` as a table."""
        if not self._is_fitted():
            return html_block(repr(self))
        facts = {"fitted": self._estimand, "n": f"{self.n_} {self._n_noun}",
                 "log-likelihood": _short(self.log_likelihood_)}
        alpha = getattr(self, "alpha", None)
        if isinstance(alpha, float):
            facts["intervals"] = f"{1 - alpha:.0%} (alpha = {alpha:g})"
        facts.update((label, _short(value)) for label, value in self._summary_header())
        return html_block(type(self).__name__, facts, {"summary_": self.summary_})

    def _summary_text(self, precision: int = 4) -> str:
        summary = self.summary_
        lines = [("fitted", self._estimand), ("n", f"{self.n_} {self._n_noun}"),
                 ("log-likelihood", _short(self.log_likelihood_, precision))]
        alpha = getattr(self, "alpha", None)
        if isinstance(alpha, float):
            lines.append(("intervals", f"{1 - alpha:.0%} (alpha = {alpha:g})"))
        lines += [(label, _short(value, precision)) for label, value in self._summary_header()]
        width = max(len(label) for label, _ in lines)
        head = [repr(self)] + [f"{label:>{width}} = {value}" for label, value in lines]
        table = summary.to_string(float_format=lambda x: f"{x:.{precision}g}")
        return "\n".join(head) + "\n\n" + table

    def print_summary(self, precision: int = 4, file=None) -> None:
        """Print what was fitted, on how much data, the log-likelihood and ``summary_``.

        Parameters
        ----------
        precision : int, default=4
            Significant digits of the numbers.
        file : file-like, default=None
            Where to print (``None``: ``sys.stdout``).
        """
        print(self._summary_text(precision), file=file if file is not None else sys.stdout)


def _short(value, precision: int = 4) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        if abs(value) >= 10 ** (precision - 1) and value != float("inf") and value != float("-inf"):
            return f"{value:.1f}"  # every integer digit, not an exponent
        return f"{value:.{precision}g}"
    return str(value)
