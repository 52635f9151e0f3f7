"""Tuning: sweeps and the fitters (PriorFitter, HalfLifeFitter, DeriveWeightsFitter)."""

__all__: list[str] = []
