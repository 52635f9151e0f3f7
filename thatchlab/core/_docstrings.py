"""Docstring pieces written once and filled in at import time.

Several public callables share whole paragraphs of their numpydoc sections (the ``errors``
parameter of every log reader, the ``Returns`` of every store writer, ...). Such a paragraph is
kept as one module-level string and named in each docstring by a placeholder line, ``{name}``
alone on its line; :func:`fill_doc` swaps the text in when the module is imported, indented like
the placeholder, so ``__doc__`` (which help, numpydoc, Sphinx and doctest read) holds the full
sections. Only the names given are replaced: the other braces of a docstring (dict literals in
its examples) are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def fill_docstring(doc: str, pieces: dict[str, str]) -> str:
    """``doc`` with each line that is only ``{name}`` replaced by ``pieces[name]``, indented alike.

    A name given but not found is a mistake in the caller's docstring, so it raises
    ``ValueError`` (at import time, where the author sees it at once).
    """
    for name, text in pieces.items():
        pattern = re.compile(r"^([ \t]*)\{" + re.escape(name) + r"\}[ \t]*$", re.MULTILINE)
        lines = text.strip("\n").splitlines()

        def indented(match: re.Match, lines=lines) -> str:
            pad = match.group(1)
            return "\n".join(pad + line if line.strip() else "" for line in lines)

        doc, count = pattern.subn(indented, doc)
        if count == 0:
            raise ValueError(f"docstring has no line '{{{name}}}' to fill")
    return doc


def fill_doc(**pieces: str) -> Callable[[T], T]:
    """Decorator: fill the ``{name}`` placeholder lines of the decorated object's docstring.

    The object is returned itself, with ``__doc__`` rewritten; under ``python -OO`` (no
    docstrings) it is returned untouched.
    """
    def decorate(obj: T) -> T:
        if obj.__doc__:
            obj.__doc__ = fill_docstring(obj.__doc__, pieces)
        return obj
    return decorate
