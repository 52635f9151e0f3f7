"""Matplotlib figures; every function returns a Figure with labelled axes and units."""

__all__: list[str] = []
