"""``get_params``/``set_params`` of the engines and fitters, written once.

The contract is scikit-learn's: an object's parameters are its constructor
arguments, plus — for an object holding a frozen parameter dataclass — that
dataclass's fields, addressed by their bare names (``engine.set_params(k=3)``).
``obj.set_params(**obj.get_params())`` changes nothing and returns ``obj``;
an unknown name or an invalid value raises :class:`EstimatorParamsError`
naming the valid parameters, and leaves the object as it was.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Mapping
from typing import Any, ClassVar

from thatchlab.core.errors import InputError, ParamsError
from thatchlab.core.params._base import ParamsBase

__all__ = ["ParamsMixin", "EstimatorParamsError"]


class EstimatorParamsError(ParamsError, InputError):
    """An unknown name or an invalid value given to an engine's or a fitter's parameters.

    A :class:`~thatchlab.core.errors.ParamsError`, and also an
    :class:`~thatchlab.core.errors.InputError`, which the fitters raised for
    bad arguments before the parameters had one implementation.
    """


@functools.cache
def _init_names(cls: type) -> tuple[str, ...]:
    """Names of ``cls.__init__``'s arguments, in order (``self`` excluded)."""
    names = []
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{cls.__name__}.__init__ takes *{p.name}: ParamsMixin needs every "
                            "parameter to be a named constructor argument")
        names.append(p.name)
    return tuple(names)


class ParamsMixin:
    """``get_params``/``set_params`` derived from the constructor and a params dataclass.

    A class using the mixin stores each constructor argument on an attribute
    of the same name (or the one :attr:`_param_attrs` names) and, when it holds
    a frozen parameter dataclass, names that attribute in :attr:`_params_attr`.
    Its constructor calls :meth:`_check_params` to run the class's own
    :meth:`_validate_params` (``set_params`` runs it too).

    Attributes
    ----------
    _params_attr : str or None
        Attribute holding the :class:`~thatchlab.core.params.ParamsBase`
        dataclass whose fields are parameters too (``None``: no dataclass).
    _param_attrs : mapping
        Constructor argument → the attribute storing it, when they differ.
    _data_args : tuple of str
        Constructor arguments that are data rather than parameters (left out).

    Examples
    --------
    >>> from thatchlab.core.params import ParamsMixin, ScoringParams
    >>> class Toy(ParamsMixin):
    ...     _params_attr = "params"
    ...     def __init__(self, params=None, label="toy"):
    ...         self.params = params if params is not None else ScoringParams()
    ...         self.label = label
    >>> toy = Toy()
    >>> list(toy.get_params(deep=False))
    ['params', 'label']
    >>> toy.get_params()["k"], toy.set_params(k=10, label="ten").params.k, toy.label
    (5.0, 10.0, 'ten')
    >>> toy.set_params(**toy.get_params()) is toy
    True
    >>> try:
    ...     toy.set_params(kk=1)
    ... except EstimatorParamsError as err:
    ...     print(str(err)[:78] + " ...")
    Toy: unknown parameter(s) ['kk']; valid parameters: params, label, k, p0, soft ...
    """

    _params_attr: ClassVar[str | None] = None
    _param_attrs: ClassVar[Mapping[str, str]] = {}
    _data_args: ClassVar[tuple[str, ...]] = ()

    # -- names -----------------------------------------------------------------------------
    @classmethod
    def _init_param_names(cls) -> tuple[str, ...]:
        """The constructor arguments that are parameters, in signature order."""
        return tuple(n for n in _init_names(cls) if n not in cls._data_args)

    def _field_names(self) -> tuple[str, ...]:
        """The fields of the held parameter dataclass (empty without one)."""
        if self._params_attr is None:
            return ()
        return tuple(f.name for f in dataclasses.fields(getattr(self, self._params_attr)))

    def _storage(self, name: str) -> str:
        return self._param_attrs.get(name, name)

    # -- the two methods -------------------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters, by name.

        Parameters
        ----------
        deep : bool, default True
            Also list the fields of the held parameter dataclass by their own
            names (scikit-learn's nested parameters). ``deep=False`` gives the
            constructor arguments only, so ``type(obj)(**obj.get_params(deep=False))``
            builds an unfitted copy.

        Returns
        -------
        dict
            Parameter name → current value.

        See Also
        --------
        set_params
        """
        out = {name: getattr(self, self._storage(name)) for name in self._init_param_names()}
        if deep and self._params_attr is not None:
            held = getattr(self, self._params_attr)
            out.update({f.name: getattr(held, f.name) for f in dataclasses.fields(held)})
        return out

    def set_params(self, **params):
        """Set parameters by name; returns ``self``.

        Constructor arguments are set first, then dataclass fields on top of
        the (possibly new) dataclass, validated by its own checks; then the
        class's :meth:`_validate_params` runs. On any error nothing changes.

        Parameters
        ----------
        **params
            New values by name: constructor arguments and fields of the held
            parameter dataclass.

        Returns
        -------
        self
            The same object, changed.

        Raises
        ------
        EstimatorParamsError
            An unknown name (the message lists the valid ones) or an invalid value.

        See Also
        --------
        get_params
        """
        if not params:
            return self
        init = self._init_param_names()
        fields = self._field_names()
        unknown = [name for name in params if name not in init and name not in fields]
        if unknown:
            raise EstimatorParamsError(
                f"{type(self).__name__}: unknown parameter(s) {unknown}; valid parameters: "
                f"{', '.join(init + fields)}")
        saved = {name: getattr(self, self._storage(name)) for name in init}
        if self._params_attr is not None and self._params_attr not in saved:
            saved[self._params_attr] = getattr(self, self._params_attr)
        try:
            for name in init:
                if name in params:
                    setattr(self, self._storage(name), params[name])
            if self._params_attr is not None:
                self._set_fields({k: v for k, v in params.items() if k in fields},
                                 type(saved[self._params_attr]))
            self._check_params()
        except BaseException:
            for name, value in saved.items():
                setattr(self, self._storage(name), value)
            raise
        return self

    def _set_fields(self, changes: dict, kind: type) -> None:
        held = getattr(self, self._params_attr)
        if not isinstance(held, kind) or not isinstance(held, ParamsBase):
            raise EstimatorParamsError(f"{self._params_attr}: expected {kind.__name__}, "
                                       f"got {type(held).__name__}")
        if not changes:
            return
        try:
            new = held.replace(**changes)
        except ParamsError as err:
            raise EstimatorParamsError(str(err)) from err
        if new != held:  # an unchanged dataclass keeps its identity
            setattr(self, self._params_attr, new)

    # -- validation ------------------------------------------------------------------------
    def _validate_params(self) -> dict | None:
        """Check the constructor arguments; may return normalised values by name.

        Raise :class:`~thatchlab.core.errors.InputError` or
        :class:`~thatchlab.core.errors.ParamsError` on a bad value. The
        default accepts everything.
        """
        return None

    def _check_params(self) -> None:
        """Run :meth:`_validate_params`, store what it normalised, raise
        :class:`EstimatorParamsError` on a bad value."""
        try:
            normalised = self._validate_params()
        except EstimatorParamsError:
            raise
        except (ParamsError, InputError) as err:
            raise EstimatorParamsError(str(err)) from err
        for name, value in (normalised or {}).items():
            setattr(self, self._storage(name), value)
