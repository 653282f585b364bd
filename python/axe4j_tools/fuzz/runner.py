"""Runs programs in worker processes under a watchdog and attributes every failure to its program.

A batch goes to one ``worker`` process, which reports each outcome as soon as it is known. When the worker outlives
its time limit it is killed; when it dies (a signal, an exit without reports), the programs it did not report are run
again one per process: the one that outlives the per-program limit is a ``hang``, one whose process dies is an
``internal`` crash (the signal or exit status named).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from .execute import Outcome

PYTHON_DIR = Path(__file__).resolve().parents[2]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                            if p]])
    return env


def call_worker(request: dict, timeout: float):
    """(replies, status): the worker's JSON replies, and None when it finished, else ``"timeout"`` or a description
    of its death (signal or exit status, with the end of its stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "axe4j_tools.fuzz.worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(json.dumps(request), timeout=timeout)
        status = None
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        status = "timeout"
    except BaseException:   # the run is stopped (Ctrl-C, SIGTERM): its worker goes with it
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    replies = []
    for line in out.splitlines():
        try:
            replies.append(json.loads(line))
        except json.JSONDecodeError:
            continue   # a line a library printed
    if status is None and proc.returncode != 0:
        code = proc.returncode
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        tail = " | ".join(err.strip().splitlines()[-3:])
        status = f"worker died ({how}): {tail[-600:]}"
    return replies, status


def run_programs(programs, *, strict=False, batch=40, batch_timeout=None, single_timeout=120.0, on_outcome=None):
    """Outcomes of ``programs`` in order; ``on_outcome(program, outcome)`` as each is known."""
    results = {}

    def note(p, outcome):
        results[(p.seed, p.index)] = outcome
        if on_outcome is not None:
            on_outcome(p, outcome)

    for start in range(0, len(programs), batch):
        group = programs[start:start + batch]
        limit = batch_timeout or (60.0 + 15.0 * len(group))
        replies, status = call_worker({"run": [repr(p) for p in group], "strict": strict}, limit)
        by_key = {(p.seed, p.index): p for p in group}
        for reply in replies:
            outcome = Outcome(**reply["outcome"])
            if (outcome.seed, outcome.index) in by_key:
                note(by_key[(outcome.seed, outcome.index)], outcome)
        missing = [p for p in group if (p.seed, p.index) not in results]
        if status is None and not missing:
            continue
        for p in missing:   # one per process: the hang or the crash is this program's
            replies, single = call_worker({"run": [repr(p)], "strict": strict}, single_timeout)
            if replies:
                note(p, Outcome(**replies[0]["outcome"]))
            elif single == "timeout":
                note(p, Outcome(p.seed, p.index, "hang", "hang: no result within the time limit",
                                f"killed after {single_timeout:.0f} s"))
            else:
                note(p, Outcome(p.seed, p.index, "internal", f"internal: crash: {(single or '')[:60]}", single or ""))
    return [results[(p.seed, p.index)] for p in programs]
