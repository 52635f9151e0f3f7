"""The numpydoc sections every store section module (belief, calibration, patterns) shares.

Each of those modules has the same functions (``create``, ``write``, ``present``, ``read``,
``check_equal``, ``default_params``, ``model``) over its own kind of object; what their
docstrings say is the same but for the object's and the parameters' types. :func:`section_docs`
writes those sections once for a given kind, and the modules fill them into their docstrings
with :func:`thatchlab.core.docstrings.fill_doc`.
"""

from __future__ import annotations

#: ``Parameters`` of ``present``: the file to look in.
PRESENT_PARAMS = """
Parameters
----------
conn : sqlite3.Connection
    A connection to the file.
"""

#: ``Parameters`` of ``read``: the file to read.
READ_PARAMS = """
Parameters
----------
conn : sqlite3.Connection
    A read-only connection to the file.
"""


def section_docs(obj_type: str, obj_text: str, params_type: str, write_raises: str) -> dict[str, str]:
    """The shared sections for a section module whose objects are ``obj_type``.

    ``obj_text`` describes the accepted objects, ``params_type`` is the section's parameter
    class and ``write_raises`` says when ``write`` raises ``StoreWriteError``. The keys are the
    placeholders: ``write_sections``, ``check_equal_sections``, ``obj_params`` and
    ``model_sections``.
    """
    obj = f"obj : {obj_type}\n    {obj_text}\n"
    obj_params = "Parameters\n----------\n" + obj
    return {
        "write_sections": (
            "Parameters\n----------\n"
            "conn : sqlite3.Connection\n    The export being built (its tables created by :func:`create`).\n"
            + obj
            + f"params : {params_type} or None\n    The parameters recorded for the section.\n\n"
            "Returns\n-------\ndict\n    ``{table: rows written}``.\n\n"
            f"Raises\n------\nStoreWriteError\n    {write_raises}\n"),
        "check_equal_sections": (
            "Parameters\n----------\n"
            f"a : {obj_type}\n    What was given (written under ``params``).\n"
            f"b : {obj_type}\n    What :func:`read` returned.\n"
            f"params : {params_type} or None\n    The parameters ``a`` was written under.\n\n"
            "Raises\n------\nAssertionError\n    The rows differ (naming the first that does).\n"),
        "obj_params": obj_params,
        "model_sections": obj_params + "\nReturns\n-------\nNone\n    Always.\n",
    }
