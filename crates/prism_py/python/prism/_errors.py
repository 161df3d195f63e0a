"""The exceptions Prism raises, carrying its diagnostics as data.

A diagnostic is a :class:`Record`: a ``dict`` with ``prism check --message-format json``'s
fields (``severity``, ``code``, ``message``, ``file``, ``line``, ``column``, ``end_line``,
``end_column``, ``labels``, ``notes``, ``help``), readable as attributes too
(``d.code == d["code"]``). Each label is a record with the same position fields, a
``message`` and ``primary``. A dynamic-check report has the same fields, with ``kind`` (its
code, e.g. ``data-race``) and the ``block`` and ``thread`` that found it.
"""

from __future__ import annotations

import json

from ._prism import DeviceError, InternalError  # noqa: F401  (re-exported)


class Record(dict):
    """A dict whose keys read as attributes too."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def records(json_lines: str) -> list:
    """Parses ``render_json``'s lines into records (labels too)."""
    out = []
    for line in json_lines.splitlines():
        if line.strip():
            d = Record(json.loads(line))
            d["labels"] = [Record(label) for label in d.get("labels", [])]
            out.append(d)
    return out


class CompileError(Exception):
    """The program has errors; nothing was compiled.

    ``str(e)`` is the rendered report, as ``prism check`` prints it. ``e.diagnostics`` holds
    every diagnostic (warnings too) as a :class:`Record`; ``e.codes`` the codes of the
    errors, in order.
    """

    def __init__(self, text: str, diagnostics: list):
        super().__init__(text)
        self.text = text
        self.diagnostics = diagnostics

    @property
    def codes(self) -> list:
        return [d.code for d in self.diagnostics if d.severity == "error"]


class CompileWarning(UserWarning):
    """The program compiled with warnings (a legacy spelling, a barrier inference could
    not place in ``unsafe`` code, ...). The message is the rendered report."""


class KernelFault(Exception):
    """A dynamic check fired while the kernel ran on the simulator: a data race, an
    out-of-bounds access, barrier divergence, a deadlock, a non-uniform value, ...

    ``str(e)`` is the rendered report, as ``prism run`` prints it. ``e.reports`` holds each
    finding as a :class:`Record` (``kind``, ``message``, ``file``, ``line``, ``column``,
    ``labels``, ``notes``, ``block``, ``thread``); ``e.kinds`` their kinds. The arrays passed
    to the launch are left as they were.
    """

    def __init__(self, kernel: str, text: str, reports: list):
        super().__init__(text)
        self.kernel = kernel
        self.text = text
        self.reports = reports

    @property
    def kinds(self) -> list:
        return [r.kind for r in self.reports]
