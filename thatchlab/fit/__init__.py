"""Fitting: estimate an engine's parameters from logged outcomes, with intervals.

This package holds the fitters, which follow scikit-learn's estimator conventions
(``fit`` returns the fitter, learned attributes end in ``_``, ``summary_`` is a
tidy frame): :class:`PriorFitter` (thatch's K and P0), :class:`HalfLifeFitter`
(omi's half-lives), :class:`DeriveWeightsFitter` (ai-memory's derive
coefficients), :func:`transfer_threshold` (moving a cosine threshold between
embedders), and :func:`check_fitter`, the check suite every fitter passes.
It may import ``core``, the engines, ``replay`` and ``metrics``; never
``sweep``, ``decide`` or anything above them.
"""

from thatchlab.fit._base import BaseFitter, NotFittedError
from thatchlab.fit._check import FitterCheckError, check_fitter
from thatchlab.fit.derive import DeriveWeightsFitter
from thatchlab.fit.halflife import HalfLifeFitter, exposure_segments
from thatchlab.fit.prior import PriorFitter
from thatchlab.fit.transfer import transfer_threshold

__all__ = ["BaseFitter", "NotFittedError", "PriorFitter", "HalfLifeFitter", "exposure_segments",
           "DeriveWeightsFitter", "transfer_threshold", "check_fitter", "FitterCheckError"]
