"""Synthetic worlds with planted ground truth, seeded and deterministic."""

__all__: list[str] = []
