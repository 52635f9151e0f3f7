"""The metric glossary that travels with a report: ``glossary.html`` written beside ``index.html``.

The entries are the package's copy of the documentation's glossary
(``templates/glossary.md``, the same text as ``docs/glossary.md``), so a
report links to definitions that exist wherever it is opened: in a fresh
clone before any docs build, and from an installed wheel. Each metric name in
the report links to ``glossary.html#term-<name>`` and carries the entry's
first sentence as a tooltip.
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["Entry", "entries", "entry_for", "anchor", "write_glossary", "GLOSSARY_FILE"]

#: The page written beside a report's ``index.html``.
GLOSSARY_FILE = "glossary.html"

_BLOCK = re.compile(r"```\{glossary\}\n(.*?)\n```", re.S)
_ROLE = re.compile(r"\{(?:func|attr|mod|class|meth|doc|term|data|ref)\}`([^`]*)`")
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*([^*\s][^*]*)\*(?![*\w])")


@dataclass(frozen=True)
class Entry:
    """One glossary term: its name as printed, its anchor, its section and its definition (plain text)."""

    name: str
    anchor: str
    section: str
    text: str

    @property
    def tip(self) -> str:
        """The definition's first sentence (a tooltip)."""
        first = re.split(r"(?<=[.!?])\s+(?=[A-Z(`])", self.text, maxsplit=1)[0]
        return first if len(first) <= 300 else first[:297] + "..."


def anchor(name: str) -> str:
    """The ``id`` of a term's entry: ``term-`` and the name, other characters than letters, digits and
    ``_`` as hyphens (``val_<metric>`` → ``term-val_-metric``, as the docs site names it).

    >>> anchor("log_loss"), anchor("val_<metric>")
    ('term-log_loss', 'term-val_-metric')
    """
    return "term-" + re.sub(r"[^A-Za-z0-9_]+", "-", name).strip("-")


def _role_text(target: str) -> str:
    """What a cross-reference role shows: its title, or the last part of a ``~``-shortened target."""
    m = re.fullmatch(r"(.*?)\s*<([^>]*)>", target)
    if m:
        return m.group(1)
    if target.startswith("~"):
        return target[1:].rsplit(".", 1)[-1]
    return target


def _plain(markdown: str) -> str:
    text = _ROLE.sub(lambda m: _role_text(m.group(1)), markdown)
    text = _CODE.sub(r"\1", _BOLD.sub(r"\1", text))
    return " ".join(text.split())


def _html(markdown: str) -> str:
    """The HTML of a definition: roles as their text, code, bold and italics marked up, the rest escaped."""
    parts = []
    for i, piece in enumerate(re.split(r"(\{[a-z]+\}`[^`]*`|`[^`]+`)", markdown)):
        if i % 2:
            role = _ROLE.fullmatch(piece)
            inner = _role_text(role.group(1)) if role else piece[1:-1]
            parts.append(f"<code>{html.escape(inner)}</code>")
        else:
            esc = html.escape(piece, quote=False)
            esc = _BOLD.sub(r"<b>\1</b>", esc)
            parts.append(_ITALIC.sub(r"<i>\1</i>", esc))
    return " ".join("".join(parts).split())


def _source() -> str:
    return resources.files("thatchlab.report").joinpath("templates", "glossary.md").read_text(encoding="utf-8")


@functools.cache
def _parsed() -> tuple[tuple[str, str, list], ...]:
    """``(section title, intro markdown, [(term, definition markdown)])`` per section of the glossary."""
    text = _source()
    out = []
    for m in re.finditer(r"^## (.+?)\n(.*?)(?=^## |\Z)", text, flags=re.S | re.M):
        title, body = m.group(1).strip(), m.group(2)
        intro = _BLOCK.split(body)[0].strip()
        terms = []
        for block in _BLOCK.findall(body):
            name, lines = None, []
            for line in block.splitlines() + [""]:
                if line and not line[0].isspace():
                    if name is not None:
                        terms.append((name, "\n".join(lines)))
                    name, lines = line.strip(), []
                elif name is not None:
                    lines.append(line.strip())
            if name is not None:
                terms.append((name, "\n".join(lines)))
        out.append((title, intro, terms))
    return tuple(out)


@functools.cache
def entries() -> dict:
    """Every glossary entry by the name as printed.

    >>> entries()["log_loss"].anchor
    'term-log_loss'
    """
    return {name: Entry(name, anchor(name), title, _plain(md)) for title, _, terms in _parsed()
            for name, md in terms}


@functools.cache
def _patterns() -> tuple:
    """``(regex, entry)`` of the pattern entries (``val_<metric>``: a placeholder in angle brackets)."""
    out = []
    for name, e in entries().items():
        if "<" in name:
            pieces = re.split(r"(<[^>]+>)", name)  # text, placeholder, text, ...
            rx = "".join(".+" if i % 2 else re.escape(p) for i, p in enumerate(pieces))
            out.append((re.compile(rx), e))
    return tuple(out)


def entry_for(name: str) -> Entry | None:
    """The entry defining ``name``: its own, else the pattern entry it matches (``val_log_loss`` →
    ``val_<metric>``), else None.

    >>> entry_for("val_log_loss").name, entry_for("no such metric")
    ('val_<metric>', None)
    """
    e = entries().get(name)
    if e is not None:
        return e
    for rx, pattern in _patterns():
        if rx.fullmatch(name):
            return pattern
    return None


def write_glossary(folder) -> Path:
    """Write ``glossary.html`` (every entry, anchored ``#term-<name>``) into ``folder``; return its path."""
    rows = ["<!doctype html>", '<html><head><meta charset="utf-8"><title>thatchlab metric glossary</title>',
            "<style>body { font: 15px/1.45 -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; "
            "max-width: 900px; margin: 2em auto; padding: 0 1em; color: #222; } dt { font-weight: 600; "
            "margin-top: .8em; } dt code { font-size: 14px; } dd { margin-left: 1.5em; } "
            ":target { background: #fff6c8; }</style></head><body>",
            "<h1>Metric glossary</h1>",
            "<p>Every name a thatchlab report prints, with its definition, direction, how it is estimated "
            "and when it is NaN (written with the report; the same entries as the documentation's "
            "glossary).</p>"]
    for title, intro, terms in _parsed():
        rows.append(f"<h2>{html.escape(title)}</h2>")
        if intro:
            rows.extend(f"<p>{_html(p)}</p>" for p in re.split(r"\n\s*\n", intro) if p.strip())
        rows.append("<dl>")
        for name, md in terms:
            rows.append(f'<dt id="{anchor(name)}"><code>{html.escape(name)}</code></dt><dd>{_html(md)}</dd>')
        rows.append("</dl>")
    rows.append("</body></html>\n")
    path = Path(folder) / GLOSSARY_FILE
    path.write_text("\n".join(rows), encoding="utf-8")
    return path
