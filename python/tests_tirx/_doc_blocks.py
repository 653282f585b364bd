"""The code blocks of docs/tvm-versions.md, each with the lane it runs on (its first line, ``# lane: tvm`` or
``# lane: tvm_tirx``), and a runner that executes each block in a namespace of its own."""

from __future__ import annotations

import re
import runpy
import tempfile
import traceback
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "tvm-versions.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
LANE = re.compile(r"#\s*lane:\s*(\w+)")


def blocks(doc: Path = DOC) -> list[dict]:
    """Every fenced block: ``{"line", "language", "lane", "code"}``; ``lane`` None when the first line names none."""
    text = doc.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        code = match.group(2)
        lane = LANE.match(code.splitlines()[0]) if code.strip() else None
        out.append({"line": text.count("\n", 0, match.start()) + 1, "language": match.group(1),
                    "lane": lane.group(1) if lane else None, "code": code})
    return out


def run(lane: str, doc: Path = DOC) -> list[dict]:
    """Runs the blocks of ``lane``: ``{"line", "error"}`` each, error None where the block ran. Each block runs from
    a file of its own (TVMScript reads its functions' source)."""
    results = []
    for block in blocks(doc):
        if block["lane"] != lane:
            continue
        try:
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / f"tvm_versions_md_line_{block['line']}.py"
                path.write_text(block["code"], encoding="utf-8")
                runpy.run_path(str(path), run_name="__doc_block__")
            results.append({"line": block["line"], "error": None})
        except Exception:  # noqa: BLE001 - reported with its traceback
            results.append({"line": block["line"], "error": traceback.format_exc()[-3000:]})
    return results
