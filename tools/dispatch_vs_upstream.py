#!/usr/bin/env python3
"""Dispatch choices per tile call of every CUDA corpus kernel: TVM's own cases against axe4j's, as a table.

    .venv/bin/python tools/dispatch_vs_upstream.py [--out docs/dispatch-vs-upstream.md]

Two worker processes lower every (kernel, arch) of ``axe4j_tools.cuda_corpus`` and record, per tile call, the variant
whose PrimFunc replaced it (``axe4j.cuda.choices.recording``):

* ``upstream``: ``tvm.compile(..., tir_pipeline="tirx")`` in a process where ``axe4j.install()`` is never called,
  so TVM's table holds only its own cases (checked: no ``axe4j-*`` variant, no JVM);
* ``axe4j``: ``axe4j.compile(module, target)``, which installs the Java side and registers its cases.

No nvcc: lowering is what dispatches. The parent pairs the calls of each kernel in order (by op, scope, storage)
and writes the Markdown table plus one explanation per differing call, from what the workers recorded
(priorities, declines, errors). Variants named ``axe4j-cuda-*`` are axe4j's CUDA cases; nothing here depends on which exist.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AXE4J_PREFIX = "axe4j-"
PROBE = "axe4j-explain-probe"  # records calls for axe4j.explain; declines every call


# ---- workers -------------------------------------------------------------------------------------

def _cases_table():
    """variant -> priority for every CUDA case in TVM's table, keyed "op/variant"."""
    from tvm.tirx.operator.tile_primitive import dispatcher

    out = {}
    for (op, kind), cases in dispatcher._DISPATCH_TABLE.items():
        if kind == "cuda":
            for case in cases:
                out[f"{op.name.split('.')[-1]}/{case.variant}"] = case.priority
    return out


def worker(mode: str, out_path: str) -> None:
    import tvm  # noqa: F401  (before the JVM)

    import axe4j
    from axe4j.cuda import choices as cuda_choices
    from axe4j_tools import cuda_corpus as corpus
    from axe4j_tools.cuda_corpus import build

    if mode == "axe4j":
        axe4j.install()
    results = []
    for kernel in corpus.kernels():
        for arch in kernel.archs:
            error = None
            with cuda_choices.recording() as calls:
                try:
                    if mode == "axe4j":
                        axe4j.compile(build.module(kernel), build.target(arch))
                    else:
                        tvm.compile(build.module(kernel), target=build.target(arch), tir_pipeline="tirx")
                except Exception as failure:  # recorded: a refusal is a result here
                    error = _summary(failure)
            results.append({"kernel": kernel.name, "arch": arch, "entry_op": kernel.op, "error": error,
                            "calls": [vars(c) for c in calls]})
    cases = _cases_table()
    ours = sorted(k for k in cases if k.split("/", 1)[1].startswith(AXE4J_PREFIX))
    if mode == "upstream" and (axe4j.installed() is not None or ours):
        raise SystemExit(f"upstream worker saw axe4j: installed={axe4j.installed()}, cases={ours}")
    Path(out_path).write_text(json.dumps({"mode": mode, "cases": cases, "results": results}, indent=1))


def _summary(error) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for line in lines:  # the decisive line of TVM's failure report, when there is one
        if "Invalid use of undefined variable" in line or "no registered variants" in line:
            return line.split("Traceback:")[-1].strip()[:200]
    return (lines[0] if lines else type(error).__name__)[:200]


def run_worker(mode: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, f"{mode}.json")
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        proc = subprocess.run([sys.executable, __file__, "--worker", mode, "--json", out], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{mode} worker failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return json.loads(Path(out).read_text())


# ---- report --------------------------------------------------------------------------------------

def _label(call) -> str:
    if call is None:
        return "(no call)"
    if call["variant"] is None:
        return "refused"
    return f"`{call['variant']}`" + (" (forced)" if call["forced"] else "")


def _explain(kernel, arch, up, ax, up_run, ax_run, cases) -> str:
    c = up or ax
    where = f"{kernel} {arch} call {c['index']} ({c['op']}, {c['scope']})"
    if up is None:
        if up_run["error"]:
            return f"{where}: dispatched only under axe4j; TVM's own compile stopped at an earlier refused call."
        return f"{where}: dispatched only under axe4j (a tile call inside the expansion axe4j chose)."
    if ax is None:
        if ax_run["error"]:
            return f"{where}: dispatched only by TVM alone; the axe4j compile stopped earlier: {ax_run['error']}."
        return f"{where}: dispatched only by TVM alone (a tile call inside the expansion TVM chose)."
    op = up["op"]
    if up["variant"] is None and ax["variant"] is not None:
        return (f"{where}: no upstream case applies ({up_run['error'] or up['error']}); axe4j's "
                f"`{ax['variant']}` (priority {cases.get(op + '/' + ax['variant'], '?')}) lowers it.")
    if ax["variant"] is None and up["variant"] is not None:
        declined = "; ".join(f"{v}: {r}" for v, r in ax["declined"] if v != PROBE) or ax["error"] or ax_run["error"]
        return f"{where}: upstream lowers it with `{up['variant']}`; under axe4j dispatch failed: {declined}."
    before = [v for v, _ in ax["declined"] if v != PROBE]
    p_up = cases.get(f"{op}/{up['variant']}", "?")
    p_ax = cases.get(f"{op}/{ax['variant']}", "?")
    text = (f"{where}: axe4j's table picks `{ax['variant']}` (priority {p_ax}) where TVM alone picks "
            f"`{up['variant']}` (priority {p_up})")
    if before:
        text += f"; declined first: {', '.join(before)}"
    return text + "."


def _paired(up_calls, ax_calls):
    """(upstream call or None, axe4j call or None) in order, matching calls by (op, scope, storage) so that a
    call one side dispatches and the other does not (e.g. inside a chosen expansion) does not shift the rest."""
    from difflib import SequenceMatcher

    def key(c):
        return (c["op"], c["scope"], c["storage"])

    pairs = []
    matcher = SequenceMatcher(a=[key(c) for c in up_calls], b=[key(c) for c in ax_calls], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            common = min(i2 - i1, j2 - j1)
            pairs += [(up_calls[i1 + k], ax_calls[j1 + k]) for k in range(common)]
            pairs += [(u, None) for u in up_calls[i1 + common:i2]]
            pairs += [(None, a) for a in ax_calls[j1 + common:j2]]
        else:
            pairs += [(u, None) for u in up_calls[i1:i2]] + [(None, a) for a in ax_calls[j1:j2]]
    return pairs


def report(up: dict, ax: dict) -> tuple[str, int, int]:
    """Markdown text, number of tile calls compared, number that differ."""
    runs_ax = {(r["kernel"], r["arch"]): r for r in ax["results"]}
    rows, notes, same_count, total = [], [], 0, 0
    for run in up["results"]:
        other = runs_ax[(run["kernel"], run["arch"])]
        for u, a in _paired(run["calls"], other["calls"]):
            c = u or a
            same = u is not None and a is not None and u["variant"] == a["variant"]
            total += 1
            same_count += same
            rows.append(f"| {run['kernel']} | {c['index']} | {c['op']} | {c['scope']} | {c['storage']} | "
                        f"{run['arch']} | {_label(u)} | {_label(a)} | {'yes' if same else '**no**'} |")
            if not same:
                notes.append("- " + _explain(run["kernel"], run["arch"], u, a, run, other, ax["cases"]))
    # the explain probe records calls for axe4j.explain and never implements one
    ours = sorted(k for k in ax["cases"] if k.split("/", 1)[1].startswith(AXE4J_PREFIX)
                  and not k.endswith(PROBE))
    refused = sorted({(r["kernel"], r["arch"], r["error"]) for r in up["results"] if r["error"]})
    lines = [
        "# Dispatch choices: TVM's CUDA cases against axe4j's",
        "",
        "Generated by `make dispatch-vs-upstream` (`tools/dispatch_vs_upstream.py`); do not edit by hand.",
        "",
        "Every tile call of every kernel in `axe4j_tools.cuda_corpus`, lowered for each arch it targets, once with TVM's",
        "own dispatch cases (a process that never calls `axe4j.install()`) and once through `axe4j.compile`",
        "(Java cases registered). The variant is the dispatch case whose PrimFunc replaced the call",
        "(`axe4j.cuda.choices.recording`); *refused* means no case applied and compilation failed;",
        "*(forced)* marks a call that names its variant with `dispatch=`; *(no call)*, a call only one side dispatched.",
        "Calls are numbered in dispatch order (the upstream number where both sides have the call).",
        "",
        f"- tile calls compared: {total}; same variant: {same_count}; different: {total - same_count}",
        f"- axe4j CUDA cases registered: {len(ours)}" + (f" ({', '.join(ours)})" if ours else
                                                        " (none yet: axe4j registers Java cases for `llvm` only)"),
        f"- (kernel, arch) pairs TVM's own dispatch refuses: {len(refused)}",
        "",
        "| kernel | call | op | scope | storage | arch | upstream variant | axe4j variant | same? |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "## Differences",
        "",
        *(notes or ["None: with the cases registered today, axe4j's dispatch makes TVM's choice for every call."]),
        "",
        "## Upstream refusals",
        "",
        *([f"- {k} ({a}): {e}" for k, a, e in refused] or ["None."]),
        "",
    ]
    return "\n".join(lines), total, total - same_count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "dispatch-vs-upstream.md"))
    parser.add_argument("--worker", choices=["upstream", "axe4j"], help=argparse.SUPPRESS)
    parser.add_argument("--json", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.json)
        return
    up = run_worker("upstream")
    ax = run_worker("axe4j")
    text, total, differing = report(up, ax)
    Path(args.out).write_text(text)
    print(f"[dispatch-vs-upstream] wrote {args.out}: {total} tile calls, {differing} differ")


if __name__ == "__main__":
    main()
