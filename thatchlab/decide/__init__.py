"""Deciding: ship a configuration only when held-out data shows it helps.

This package holds :func:`decide` (a paired, cluster-robust test of a sweep's
candidate against production's default, with identification, constraints,
per-user harm and sequential looks), :class:`Decision` (what ships and the
evidence), :func:`combine_decisions` (several metrics of one engine), the
calibration study of the procedure itself (:func:`planted_sweep`,
:func:`decide_calibration`) and the main job's decision :mod:`policy`. It
reads sweep results, so it may import ``sweep`` and ``fit`` (and everything
below them); nothing but the front ends (``plots``, ``report``, ``run``,
``cli``) imports it.

How :func:`decide` decides. Let ``D`` be the parameters where the candidate
``θ̂`` differs from the default ``θ₀`` (unidentified ones are at their
default) and ``θ_A = θ₀[A ← θ̂_A]`` for ``A ⊆ D``. Every comparison is the
paired difference ``δ_A = m_test(θ_A) − m_test(θ₀)`` over the test clusters
(cluster-bootstrap SE with the CR1 factor ``√(G/(G−1))``, Student's t with
``G − 1`` degrees of freedom, Cameron & Miller 2015), tested one-sided for
improvement. The procedure is a serial gatekeeper (family-wise error ``≤ α``
over everything tested):

1. *Gate*: ``θ_D = θ̂`` against ``θ₀`` at ``α`` (its ``1 − α`` interval on
   the improving side of 0). Not passed: nothing ships.
2. *Reduction family*, only after the gate: every proper non-empty
   ``A ⊂ D`` with a sweep row, ``θ_A`` against ``θ₀``, Holm at ``α``.
3. A rejected ``θ_A`` *replaces* ``θ̂`` when the rest of the change adds
   nothing the data can show: ``θ̂`` is not better than ``θ_A`` at ``α``
   (paired). The smallest such ``A`` ships (ties: the larger test
   improvement); none: ``θ̂`` ships. Under a ``constraint`` the first of
   these (then the other rejected subsets) whose test value satisfies the
   constraint ships; none: nothing ships.

Below ``MIN_CLUSTERS`` test clusters nothing ships (the reason names the
count). The t reference keeps the false-ship rate at or below the nominal
one-sided ``α/2`` down to 5 clusters where the percentile interval does not
(``benchmarks/bench_decide_calibration.py``).

The sweep's ``release`` column is the context of the comparison, never a
candidate: rows of several releases are refused (decide on each release's
rows), and the decision says its release (``Decision.release``).

The ratio metrics :func:`decide` accepts, per engine: the scoring engines
(``prediction``, ``behavior``; per-session sums) ``log_loss``, ``brier``,
``interruption_rate``, ``wrong_silent_follow_rate``, ``coverage``,
``nudge_net_rate``; ``belief`` (per-memory sums) ``brier``, currency against
``still_true``; ``calibration`` (per-memory sums) ``derived_log_loss``,
``derived_brier``, ``caller_log_loss``, ``caller_brier``; ``anticipation``
(per-session sums) ``hit_rate_at_k``, ``prefetch_precision``,
``recall_at_k``, ``round_trips_saved_per_session``,
``false_prefetches_per_session``. A planted frame (simulation studies) has
rows with the parameter columns, a ``config_id`` column
(:func:`~thatchlab.sweep.config_id` ``(engine, params)``),
``val_<metric>``/``test_<metric>`` columns, and attrs ``engine``, ``metric``,
``metrics``, ``holdout``, ``unidentified``, ``identification`` and
``clusters``: a :class:`~thatchlab.sweep.ClusterStats` from
``ClusterStats.merge({config_id: {(metric, segment): (num, den)}}, unit,
{segment: labels})``.

The harm check (``thatchlab.decide._harm``) and repeated looks: sequential
decisions use anytime-valid confidence sequences
(``thatchlab.decide._testing.sequence_halfwidth``), and a looks ledger is a
JSON file each decision appends to (``thatchlab.decide._looks``).
"""

from thatchlab.decide import policy  # noqa: E402,I001  (the main job's policy, a public module)
from thatchlab.decide._core import Decision, combine_decisions, decide
from thatchlab.decide.calibration_study import decide_calibration, planted_sweep
from thatchlab.decide.policy import RULES, MainJobPolicy, PredictionOutcome

__all__ = ["decide", "Decision", "combine_decisions", "decide_calibration", "planted_sweep", "policy",
           "MainJobPolicy", "PredictionOutcome", "RULES"]
