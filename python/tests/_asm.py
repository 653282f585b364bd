"""Reading x86 assembly (AT&T syntax, as LLVM prints it) in the CPU code tests."""

import re

LABEL = re.compile(r"^\.\w+:")


def innermost_fma_loop(asm: str) -> list[str]:
    """The lines of the innermost loop (a block that jumps back to its own label, no label inside) with the most
    FMAs."""
    lines = asm.splitlines()
    labels = {line.split(":")[0]: i for i, line in enumerate(lines) if LABEL.match(line)}
    loops = []
    for i, line in enumerate(lines):
        jump = re.match(r"\s+j\w+\s+(\.\w+)", line)
        if jump and jump.group(1) in labels and labels[jump.group(1)] < i:
            body = lines[labels[jump.group(1)]:i + 1]
            if not any(LABEL.match(b) for b in body[1:]):
                loops.append(body)
    return max(loops, key=lambda body: sum("vfmadd" in b for b in body))


def instructions(lines: list[str]) -> list[str]:
    return [line.split("#")[0].strip() for line in lines if line.startswith("\t") and line.split("#")[0].strip()]
