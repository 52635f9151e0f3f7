"""Docstring pieces written once and filled in at import time.

Several public callables share whole paragraphs of their numpydoc sections (the
``errors`` parameter of every log reader, the ``Returns`` of every store writer,
...). Such a paragraph is kept as one module-level string and named in each
docstring by a placeholder line, ``{name}`` alone on its line; :func:`fill_doc`
swaps the text in when the module is imported, indented like the placeholder, so
``__doc__`` (which ``help``, numpydoc, Sphinx and doctest read) holds the full
sections. Only the names given are replaced: the other braces of a docstring
(dict literals in its examples) are left as they are. This is the role pandas'
``@doc`` decorator plays there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from thatchlab.core.errors import InputError

__all__ = ["fill_doc", "fill_docstring"]

T = TypeVar("T")


def fill_docstring(doc: str, pieces: dict[str, str]) -> str:
    """``doc`` with each line that is only ``{name}`` replaced by ``pieces[name]``, indented alike.

    Parameters
    ----------
    doc : str
        A docstring with placeholder lines.
    pieces : dict of str to str
        The text of each placeholder, written without indentation (leading and
        trailing blank lines are dropped).

    Returns
    -------
    str
        The docstring with every named placeholder line filled in.

    Raises
    ------
    InputError
        A name given has no placeholder line in ``doc`` (a mistake in the
        docstring, seen at import time).

    See Also
    --------
    fill_doc : The decorator that applies it to a function or class.

    Examples
    --------
    >>> print(fill_docstring("Sum.\\n\\n    {params}\\n", {"params": "x : int\\n    A number."}))
    Sum.
    <BLANKLINE>
        x : int
            A number.
    <BLANKLINE>
    """
    for name, text in pieces.items():
        pattern = re.compile(r"^([ \t]*)\{" + re.escape(name) + r"\}[ \t]*$", re.MULTILINE)
        lines = text.strip("\n").splitlines()

        def indented(match: re.Match, lines=lines) -> str:
            pad = match.group(1)
            return "\n".join(pad + line if line.strip() else "" for line in lines)

        doc, count = pattern.subn(indented, doc)
        if count == 0:
            raise InputError(f"docstring has no line '{{{name}}}' to fill")
    return doc


def fill_doc(**pieces: str) -> Callable[[T], T]:
    """Decorator: fill the ``{name}`` placeholder lines of the decorated object's docstring.

    Parameters
    ----------
    **pieces : str
        The text of each placeholder (see :func:`fill_docstring`).

    Returns
    -------
    callable
        A decorator that rewrites ``__doc__`` and returns the object itself;
        without a docstring (``python -OO``) the object is returned untouched.

    See Also
    --------
    fill_docstring : The substitution itself.

    Examples
    --------
    >>> @fill_doc(params="x : int\\n    A number.")
    ... def double(x):
    ...     '''Twice ``x``.
    ...
    ...     Parameters
    ...     ----------
    ...     {params}
    ...     '''
    ...     return 2 * x
    >>> "A number." in double.__doc__
    True
    """
    def decorate(obj: T) -> T:
        if obj.__doc__:
            obj.__doc__ = fill_docstring(obj.__doc__, pieces)
        return obj
    return decorate
