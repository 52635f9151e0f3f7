"""Tuning: sweeps and the fitters (PriorFitter, HalfLifeFitter, DeriveWeightsFitter)."""

from .derive import DeriveWeightsFitter
from .halflife import HalfLifeFitter, exposure_segments
from .prior import PriorFitter
from .registry import EngineSpec, Prepared, Segment, engines, get_engine, register_engine
from .sweep import BestConfig, best, config_id, holdout_segments, sweep
from .transfer import transfer_threshold

__all__ = ["HalfLifeFitter", "exposure_segments", "DeriveWeightsFitter"]
__all__ += ["PriorFitter", "transfer_threshold", "sweep", "best", "BestConfig", "holdout_segments", "config_id",
            "EngineSpec", "Prepared", "Segment", "engines", "get_engine", "register_engine"]
