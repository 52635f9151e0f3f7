"""Every public callable documented like scikit-learn's: numpydoc's own validation, package by package.

Public means: every name in a package's ``__all__`` and in the ``__all__`` of its public modules
(``thatchlab.sweep.registry``, ``thatchlab.decide.policy``, ...), and the public methods and
properties those classes define themselves. Each is run through :func:`numpydoc.validate.validate`
with the checks the docs build enforces (:data:`CHECKS`, the same set as
``numpydoc_validation_checks`` in ``docs/conf.py``), plus two of ours:

* ``EX01`` (an ``Examples`` section) for the top-level API: ``thatchlab``'s own names and the
  ``__all__`` of :mod:`thatchlab.fit`, :mod:`thatchlab.sweep` and :mod:`thatchlab.decide`
  (the examples run as doctests in the test command);
* ``RS01``: a callable whose own source raises a thatchlab error (a ``ThatchlabError`` subclass)
  has a ``Raises`` section.

    python scripts/check_docstrings.py                 # every package; exit 1 on any problem
    python scripts/check_docstrings.py thatchlab.fit   # one package (prefix match)
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
import textwrap
from collections.abc import Iterator

from numpydoc.docscrape import get_doc_object
from numpydoc.validate import validate

#: numpydoc's checks enforced everywhere: a docstring, every parameter documented (and no unknown
#: one), a Returns section when something is returned. Kept equal to docs/conf.py.
CHECKS = {"GL08", "PR01", "PR02", "RT01"}
TOP_LEVEL = ("thatchlab.fit", "thatchlab.sweep", "thatchlab.decide")
SKIP_PACKAGES = ("thatchlab.tune",)  # the deprecated shim re-exports; the names are checked at home


def _modules() -> Iterator:
    import thatchlab

    yield thatchlab
    for info in pkgutil.walk_packages(thatchlab.__path__, "thatchlab."):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")[1:]):
            continue
        if name.startswith(SKIP_PACKAGES) or name.startswith("thatchlab.datasets.make_samples"):
            continue
        yield importlib.import_module(name)


def _exported(module) -> Iterator[tuple[str, object]]:
    names = getattr(module, "__all__", None)
    if module.__name__ == "thatchlab":
        names = [n for n in module._NAMES]
    for name in names or ():
        obj = getattr(module, name, None)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            if (getattr(obj, "__module__", "") or "").startswith("thatchlab"):
                yield f"{obj.__module__}.{obj.__qualname__}", obj


def _methods(cls) -> Iterator[tuple[str, object]]:
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if isinstance(member, property) or inspect.isfunction(member):
            yield name, member


def public_callables() -> dict[str, tuple[object, bool]]:
    """``{qualified name: (object, top_level)}`` of every public callable, each once."""
    found: dict[str, tuple[object, bool]] = {}
    for module in _modules():
        top = module.__name__ in TOP_LEVEL or module.__name__ == "thatchlab"
        for qual, obj in _exported(module):
            if qual in found:
                found[qual] = (obj, found[qual][1] or top)
                continue
            found[qual] = (obj, top)
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for name, member in _methods(obj):
                    found.setdefault(f"{qual}.{name}", (member, False))
    return found


def _raises_thatchlab_error(obj) -> bool:
    from thatchlab.core.errors import ThatchlabError

    target = obj.fget if isinstance(obj, property) else obj
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    except (OSError, TypeError, SyntaxError):
        return False
    module = sys.modules.get(getattr(target, "__module__", ""), None)
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            call = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = getattr(call, "id", None) or getattr(call, "attr", None)
            err = getattr(module, name, None) if name else None
            if inspect.isclass(err) and issubclass(err, ThatchlabError):
                return True
    return False


def problems(prefix: str = "thatchlab") -> list[tuple[str, str, str]]:
    """``(name, code, message)`` for every public callable under ``prefix`` that misses a section."""
    out = []
    for qual, (obj, top) in sorted(public_callables().items()):
        if not qual.startswith(prefix):
            continue
        if isinstance(obj, property):
            if not (obj.__doc__ or "").strip():
                out.append((qual, "GL08", "The object does not have a docstring"))
            continue
        result = validate(qual)
        for code, message in result["errors"]:
            if code in CHECKS or (top and code == "EX01"):
                out.append((qual, code, message))
        if _raises_thatchlab_error(obj) and inspect.isfunction(obj):
            doc = get_doc_object(obj)
            if not doc["Raises"]:
                out.append((qual, "RS01", "raises a thatchlab error but has no Raises section"))
    return out


def main(argv: list[str]) -> int:
    prefix = argv[0] if argv else "thatchlab"
    found = problems(prefix)
    for qual, code, message in found:
        print(f"{qual}: {code} {message}")
    total = sum(1 for q in public_callables() if q.startswith(prefix))
    print(f"{len(found)} problems in {len({q for q, _, _ in found})} of {total} public callables under {prefix}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
