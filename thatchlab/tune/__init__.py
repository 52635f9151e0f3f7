"""Tuning: sweeps and the fitters (PriorFitter, HalfLifeFitter, DeriveWeightsFitter)."""

from thatchlab.tune._fitter import BaseFitter, NotFittedError
from thatchlab.tune.calibration_study import decide_calibration, planted_sweep
from thatchlab.tune.decide import Decision, combine_decisions, decide
from thatchlab.tune.derive import DeriveWeightsFitter
from thatchlab.tune.halflife import HalfLifeFitter, exposure_segments
from thatchlab.tune.persist import load_sweep, save_sweep
from thatchlab.tune.prior import PriorFitter
from thatchlab.tune.registry import (
            EngineSpec,
            Prepared,
            Segment,
            engines,
            get_engine,
            register_engine,
)
from thatchlab.tune.resampling import ClusterStats
from thatchlab.tune.sweep import (
            BestConfig,
            best,
            config_id,
            holdout_segments,
            identification,
            metric_direction,
            pareto,
            sweep,
)
from thatchlab.tune.transfer import transfer_threshold

__all__ = ["BaseFitter", "NotFittedError", "HalfLifeFitter", "exposure_segments", "DeriveWeightsFitter"]
__all__ += ["PriorFitter", "transfer_threshold", "sweep", "best", "BestConfig", "holdout_segments", "config_id",
            "EngineSpec", "ClusterStats", "Prepared", "Segment", "engines", "get_engine", "register_engine",
            "decide", "Decision", "save_sweep", "load_sweep", "combine_decisions", "decide_calibration", "planted_sweep", "pareto", "identification", "metric_direction"]

# the main job's decision policy (what it decides, at which level, on which metric)
from thatchlab.tune import policy  # noqa: E402
from thatchlab.tune.policy import RULES, MainJobPolicy, PredictionOutcome  # noqa: E402

__all__ += ["policy", "MainJobPolicy", "PredictionOutcome", "RULES"]
