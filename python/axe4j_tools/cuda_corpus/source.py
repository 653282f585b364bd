"""What a generated CUDA source actually runs: the kernel bodies plus every helper they reach.

TVM's CUDA codegen defines one ``__device__`` helper per PTX builtin it needs (``tvm_builtin_ptx_*``, each an
``asm volatile("...")``). ``live_text`` returns the text of the ``__global__`` bodies followed by the bodies of
the helpers they call, transitively, so a check that ``ld.global.v4`` appears is a check that a kernel executes
it, not merely that some helper was declared.
"""

from __future__ import annotations

import re

_HELPER = re.compile(r"__device__[^;{]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{")
_KERNEL = re.compile(r'extern "C" __global__[^;{]*\)\s*\{')


def _block(text: str, open_brace: int) -> str:
    """Text from ``open_brace`` to its matching ``}``."""
    depth = 0
    for i in range(open_brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_brace:i + 1]
    raise ValueError("unbalanced braces in CUDA source")


def live_text(source: str) -> str:
    helpers: dict[str, str] = {}
    for m in _HELPER.finditer(source):
        helpers.setdefault(m.group(1), _block(source, m.end() - 1))
    bodies = [_block(source, m.end() - 1) for m in _KERNEL.finditer(source)]
    if not bodies:
        raise ValueError("no extern \"C\" __global__ kernel definition in the CUDA source")
    live, todo = [], list(bodies)
    seen: set[str] = set()
    while todo:
        text = todo.pop()
        live.append(text)
        for name in set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text)) & helpers.keys() - seen:
            seen.add(name)
            todo.append(helpers[name])
    return "\n".join(live)


def missing(source: str, patterns) -> list[str]:
    """The patterns (regexes) that the live text of ``source`` does not match."""
    text = live_text(source)
    return [p for p in patterns if not re.search(p, text)]
