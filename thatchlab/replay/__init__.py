"""Replay logged events through the engines under chosen parameters.

One module per engine family; each ``run*`` function returns a result
dataclass with per-event outputs, final state and metrics.
"""

__all__: list[str] = []
