"""Layout axes TVM knows, and the error for one it does not.

An axis name TVM has not registered (``4 @ lanid``) is accepted when the layout is built (``Axis.get`` registers any
name) and fails deep in lowering with ``InternalError: ... Attribute thread has not been registered for lanid``.
``explain_unknown_axis`` turns that into an error that names the axis, where the kernel uses it, the axes TVM knows
(``tvm.tirx.layout._AXIS_NAMES``: thread axes, then memory axes) and the closest one.
"""

from __future__ import annotations

import difflib
import re

UNREGISTERED = re.compile(r"has not been registered for (\w+)")


def known_axes() -> tuple[list[str], list[str]]:
    """(thread axes, memory axes) TVM registers, in its order."""
    from tvm.tirx import layout

    threads, memories = [], []
    for name in layout._AXIS_NAMES:
        axis = layout.Axis.get(name)
        (threads if axis.is_thread() else memories).append(name)
    return threads, memories


def explain_unknown_axis(error: Exception, mod) -> ValueError | None:
    """A ``ValueError`` for TVM's error about an unregistered axis, or None when ``error`` is another one."""
    found = UNREGISTERED.search(str(error))
    if not found:
        return None
    name = found.group(1)
    threads, memories = known_axes()
    close = difflib.get_close_matches(name, threads + memories, n=1, cutoff=0.5)
    script = mod.script() if hasattr(mod, "script") else str(mod)
    uses = [line.strip() for line in script.splitlines() if re.search(rf"@\s*(?:Axis\.)?{re.escape(name)}\b", line)]
    where = f" in `{uses[0]}`" if uses else ""
    hint = f"; did you mean {close[0]}?" if close else ""
    return ValueError(f"layout axis '{name}'{where} is not an axis TVM knows: thread axes {', '.join(threads)}; "
                      f"memory axes {', '.join(memories)}{hint}")
