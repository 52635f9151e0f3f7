"""Shared machinery of the frozen parameter dataclasses.

Every engine's parameters are a frozen dataclass with production defaults,
validated on construction; ``replace`` makes a validated variant and
``to_dict``/``from_dict`` serialise them for manifests and sweeps.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from thatchlab.core.errors import ParamsError

__all__ = ["ParamsBase", "check_number", "check_int", "check_choice"]


def check_number(name: str, value, *, lo=None, hi=None, lo_open=False, hi_open=False,
                 allow_inf=False) -> float:
    """Validate a real number against an interval and return it as float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise ParamsError(f"{name}: expected a number, got {value!r}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ParamsError(f"{name}: expected a finite number, got {value!r}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ParamsError(f"{name}: expected {'>' if lo_open else '>='} {lo}, got {value!r}")
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ParamsError(f"{name}: expected {'<' if hi_open else '<='} {hi}, got {value!r}")
    return v


def check_int(name: str, value, *, lo=None, hi=None) -> int:
    """Validate an integer (floats with an integral value are accepted)."""
    if isinstance(value, bool):
        raise ParamsError(f"{name}: expected an integer, got {value!r}")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ParamsError(f"{name}: expected an integer, got {value!r}") from None
    if not math.isfinite(f) or f != int(f):
        raise ParamsError(f"{name}: expected an integer, got {value!r}")
    v = int(f)
    if lo is not None and v < lo:
        raise ParamsError(f"{name}: expected >= {lo}, got {value!r}")
    if hi is not None and v > hi:
        raise ParamsError(f"{name}: expected <= {hi}, got {value!r}")
    return v


def check_choice(name: str, value, choices) -> Any:
    if value not in choices:
        raise ParamsError(f"{name}: expected one of {sorted(choices)!r}, got {value!r}")
    return value


class ParamsBase:
    """Mixin for frozen parameter dataclasses.

    Subclasses implement ``_validate()`` returning a dict of normalised field
    values (e.g. ints coerced); ``__post_init__`` stores them.
    """

    def __post_init__(self):
        normalised = self._validate()
        for key, value in (normalised or {}).items():
            object.__setattr__(self, key, value)

    def _validate(self) -> dict:  # pragma: no cover - overridden
        return {}

    def replace(self, **changes):
        """Return a validated copy with ``changes`` applied.

        Parameters
        ----------
        **changes
            New values of fields, by field name.

        Returns
        -------
        same type as self
            A new instance; ``self`` is unchanged (the dataclass is frozen).

        Raises
        ------
        ParamsError
            A name that is not a field, or a value outside its field's domain.

        See Also
        --------
        to_dict, from_dict
        """
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ParamsError(
                f"{type(self).__name__}: unknown parameter(s) {sorted(unknown)}; "
                f"expected some of {[f.name for f in dataclasses.fields(self)]}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """Plain dict of every field (JSON-serialisable values).

        Returns
        -------
        dict
            Field name → value; tuples become lists and nested dicts are copied.

        See Also
        --------
        from_dict : The inverse.
        """
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: dict):
        """Build from a dict as written by :meth:`to_dict`; unknown keys raise.

        Parameters
        ----------
        data : dict
            Field name → value; missing fields take their defaults.

        Returns
        -------
        cls
            A validated instance.

        Raises
        ------
        ParamsError
            ``data`` is not a dict, names an unknown field, or holds a bad value.

        See Also
        --------
        to_dict : The inverse.
        coerce : Also takes None, an instance or any mapping.
        """
        if not isinstance(data, dict):
            raise ParamsError(f"{cls.__name__}.from_dict: expected a dict, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ParamsError(
                f"{cls.__name__}: unknown parameter(s) {sorted(unknown)}; expected some of {sorted(names)}")
        return cls(**data)

    @classmethod
    def coerce(cls, value, what: str = "params"):
        """``value`` as parameters of this class.

        None gives the defaults, an instance is returned as it is, a mapping
        gives the defaults with those fields changed (as the command line
        takes a flat mapping).

        Parameters
        ----------
        value : None, instance of cls or mapping
            What to turn into parameters.
        what : str, default="params"
            How the error message names ``value``.

        Returns
        -------
        cls
            The parameters.

        Raises
        ------
        ParamsError
            ``value`` is of another type, or the mapping has unknown fields or bad values.

        See Also
        --------
        from_dict
        """
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict({**cls().to_dict(), **dict(value)})
        raise ParamsError(f"{what}: expected {cls.__name__} or a mapping of its fields, got "
                          f"{type(value).__name__}")

    def get_params(self, deep: bool = True) -> dict:
        """The fields as scikit-learn's ``get_params`` gives parameters (the same as :meth:`to_dict`).

        Parameters
        ----------
        deep : bool, default=True
            Accepted for scikit-learn's signature; the fields have no nested parameters.

        Returns
        -------
        dict
            Field name → value.
        """
        return self.to_dict()


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
