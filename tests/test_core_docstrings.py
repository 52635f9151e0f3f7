"""thatchlab.core.docstrings: shared numpydoc pieces filled in at import time."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import thatchlab
from thatchlab.core.docstrings import fill_doc, fill_docstring
from thatchlab.core.errors import InputError


def test_piece_is_indented_like_its_placeholder():
    doc = "Sum.\n\n    Parameters\n    ----------\n    {params}\n\n    Returns\n"
    out = fill_docstring(doc, {"params": "\nx : int\n    A number.\n\ny : int\n    Another.\n"})
    assert out == ("Sum.\n\n    Parameters\n    ----------\n    x : int\n        A number.\n\n"
                   "    y : int\n        Another.\n\n    Returns\n")


def test_other_braces_are_left_alone():
    doc = '    {a}\n    >>> {"k": 1}\n    {b} inline stays\n'
    assert fill_docstring(doc, {"a": "A"}) == '    A\n    >>> {"k": 1}\n    {b} inline stays\n'


def test_every_placeholder_line_is_filled():
    assert fill_docstring("  {p}\n\n  {p}\n", {"p": "one\ntwo"}) == "  one\n  two\n\n  one\n  two\n"


def test_a_name_without_placeholder_raises():
    with pytest.raises(InputError, match=r"no line '\{missing\}'"):
        fill_docstring("Nothing here.\n", {"missing": "text"})


def test_decorator_returns_the_object_with_its_doc_filled():
    @fill_doc(params="x : int\n    A number.")
    def double(x):
        """Twice ``x``.

        Parameters
        ----------
        {params}
        """
        return 2 * x

    assert double(2) == 4
    assert inspect.cleandoc(double.__doc__) == "Twice ``x``.\n\nParameters\n----------\nx : int\n    A number."


def test_decorator_leaves_an_object_without_docstring():
    def bare():
        return None

    assert fill_doc(p="text")(bare) is bare
    assert bare.__doc__ is None


def test_no_public_docstring_keeps_a_placeholder():
    """Every docstring built from pieces is complete at run time (no ``{name}`` line left)."""
    left = []
    line = re.compile(r"^\s*\{[a-z_0-9]+\}\s*$", re.M)
    for info in pkgutil.walk_packages(thatchlab.__path__, "thatchlab."):
        if info.name.startswith("thatchlab.datasets.make_samples"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            docs = [(name, obj.__doc__)]
            if inspect.isclass(obj):
                docs += [(f"{name}.{m}", getattr(f, "__doc__", None)) for m, f in vars(obj).items()
                         if inspect.isfunction(f)]
            left += [f"{module.__name__}.{n}" for n, d in docs if d and line.search(d)]
    assert left == []
