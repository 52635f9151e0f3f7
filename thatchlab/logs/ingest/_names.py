"""The names thatch's tools reach a transcript under, whatever registered them.

A host records a tool call under the name it gave the tool, and the same
thatch tool shows up under several:

- ``mcp__<server>__<tool>``: Claude Code's name for an MCP server's tool
  (``mcp__thatch__prediction_update`` when the server is registered as
  ``thatch``);
- ``mcp__plugin_<plugin>_<server>__<tool>``: Claude Code's name for the tool
  of an MCP server a plugin bundles (thatch installed as a Claude Code
  plugin: ``mcp__plugin_thatch_thatch__prediction_update``);
- ``<server>_<tool>``: opencode's name for an MCP server's tool and the name
  thatch's opencode plugin registers (``thatch_prediction_update``);
- the plain ``<tool>`` (``prediction_update``), as hosts that register
  thatch's tools without a prefix write it. Only the tools that are log
  kinds (:data:`~thatchlab.logs.ingest.THATCH_TOOLS`) are taken under their
  plain name: ``memory_save`` alone could be any server's.

:func:`thatch_tool` reads all of them by default; ``server`` names the
server the way the user registered it, as a bare name (``thatch``) or as
any of the prefixes above (``mcp__plugin_thatch_thatch__``,
``plugin_thatch_thatch``).
"""

from __future__ import annotations

import re

from thatchlab.core.errors import LogValidationError
from thatchlab.logs.ingest._tools import THATCH_TOOLS

__all__ = ["server_name", "thatch_tool", "looks_like_thatch", "subagent_mode", "SUBAGENT_MODES"]

#: What ``subagents=`` may be: what an adapter reads of sub-agents (True and False mean "all" and "none").
SUBAGENT_MODES = ("calls", "all", "none")

_PLUGIN = re.compile(r"^mcp__plugin_(.+)__(.+)$")


def server_name(server: str) -> str:
    """The server's registered name from what a user may pass as ``--server``.

    >>> server_name("thatch"), server_name("mcp__thatch__"), server_name("mcp__plugin_thatch_thatch__")
    ('thatch', 'thatch', 'plugin_thatch_thatch')
    >>> server_name("thatch_")  # opencode's prefix
    'thatch'
    """
    s = server.strip()
    if s.startswith("mcp__"):
        s = s[len("mcp__"):]
    return s[:-2] if s.endswith("__") else s[:-1] if s.endswith("_") and len(s) > 1 else s


def thatch_tool(name, server: str = "thatch"):
    """``(tool, form)`` when ``name`` is one of thatch's tools under ``server``, else None.

    ``tool`` is the bare tool name (a log kind when it is in ``THATCH_TOOLS``;
    thatch's other tools, memories and chat, keep their own name), ``form``
    how the host wrote it: ``"mcp"``, ``"plugin"``, ``"host"`` (``<server>_``)
    or ``"plain"``.

    >>> thatch_tool("mcp__thatch__prediction_update"), thatch_tool("mcp__plugin_tt_thatch__behavior_list")
    (('prediction_update', 'mcp'), ('behavior_list', 'plugin'))
    >>> thatch_tool("thatch_memory_save"), thatch_tool("prediction_query"), thatch_tool("memory_save")
    (('memory_save', 'host'), ('prediction_query', 'plain'), None)
    >>> thatch_tool("mcp__plugin_thatch_thatch__prediction_list", server="mcp__plugin_thatch_thatch__")
    ('prediction_list', 'mcp')
    >>> thatch_tool("mcp__other__prediction_update") is None
    True
    """
    if not isinstance(name, str) or not name:
        return None
    s = server_name(server)
    if name.startswith(f"mcp__{s}__") and len(name) > len(s) + 7:
        return name[len(s) + 7:], "mcp"
    if not s.startswith("plugin_"):
        m = _PLUGIN.match(name)
        if m is not None and m.group(1).endswith(f"_{s}") and len(m.group(1)) > len(s) + 1:
            return m.group(2), "plugin"
    if name.startswith(f"{s}_") and len(name) > len(s) + 1 and not name.startswith("mcp__"):
        return name[len(s) + 1:], "host"
    if name in THATCH_TOOLS:
        return name, "plain"
    return None


def looks_like_thatch(name) -> bool:
    """Whether a tool name no form matched still ends in one of thatch's tool names (another
    ``--server`` would read it).

    >>> looks_like_thatch("mcp__memory__prediction_update"), looks_like_thatch("Bash")
    (True, False)
    """
    return isinstance(name, str) and any(name.endswith(f"_{t}") for t in THATCH_TOOLS)


def subagent_mode(subagents) -> str:
    """``subagents=`` as one of :data:`SUBAGENT_MODES`.

    >>> subagent_mode(True), subagent_mode(False), subagent_mode("calls")
    ('all', 'none', 'calls')
    """
    if subagents is True or subagents is False:
        return "all" if subagents else "none"
    if subagents not in SUBAGENT_MODES:
        raise LogValidationError(f"subagents: expected one of {', '.join(SUBAGENT_MODES)} (or True/False), "
                                 f"got {subagents!r}")
    return subagents
