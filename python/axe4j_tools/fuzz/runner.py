"""Runs programs in worker processes under a watchdog and attributes every failure to its program.

A batch goes to one ``worker`` process, which reports each outcome as soon as it is known. When the worker outlives
its time limit it is killed; when it dies (a signal, an exit without reports), the programs it did not report are run
again one per process: the one that outlives the per-program limit is a ``hang``, one whose process dies is an
``internal`` crash (the signal or exit status named).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from .execute import Outcome

PYTHON_DIR = Path(__file__).resolve().parents[2]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                            if p]])
    return env


_live = set()                   # the worker processes running now (several with jobs > 1)
_live_lock = threading.Lock()


def _kill_live():
    with _live_lock:
        for proc in list(_live):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def call_worker(request: dict, timeout: float):
    """(replies, status): the worker's JSON replies, and None when it finished, else ``"timeout"`` or a description
    of its death (signal or exit status, with the end of its stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "axe4j_tools.fuzz.worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), text=True,
                            start_new_session=True)
    with _live_lock:
        _live.add(proc)
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
    finally:
        with _live_lock:
            _live.discard(proc)
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


def run_programs(programs, *, strict=False, batch=40, batch_timeout=None, single_timeout=120.0, on_outcome=None,
                 jobs=1):
    """Outcomes of ``programs`` in order; ``on_outcome(program, outcome)`` as each is known (in this thread). With
    ``jobs`` > 1 that many batches run at once, each in its own worker process."""
    results = {}

    def note(p, outcome):
        results[(p.seed, p.index)] = outcome
        if on_outcome is not None:
            on_outcome(p, outcome)

    groups = [programs[start:start + batch] for start in range(0, len(programs), batch)]
    if jobs <= 1:
        for group in groups:
            _run_batch(group, strict, batch_timeout, single_timeout, note)
    else:
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
        try:
            pending = [pool.submit(_collected, group, strict, batch_timeout, single_timeout) for group in groups]
            for future in concurrent.futures.as_completed(pending):
                for p, outcome in future.result():
                    note(p, outcome)
        except BaseException:   # stopped: no new batch starts, and the running workers go now
            pool.shutdown(wait=False, cancel_futures=True)
            _kill_live()
            raise
        pool.shutdown()
    return [results[(p.seed, p.index)] for p in programs]


def _collected(group, strict, batch_timeout, single_timeout):
    seen = []
    _run_batch(group, strict, batch_timeout, single_timeout, lambda p, outcome: seen.append((p, outcome)))
    return seen


def _run_batch(group, strict, batch_timeout, single_timeout, note):
    """Runs one batch in a worker; the programs it leaves unreported run again one per process, so that a hang or a
    crash is pinned on its program."""
    done = set()

    def noted(p, outcome):
        done.add((p.seed, p.index))
        note(p, outcome)

    limit = batch_timeout or (60.0 + 15.0 * len(group))
    replies, status = call_worker({"run": [repr(p) for p in group], "strict": strict}, limit)
    by_key = {(p.seed, p.index): p for p in group}
    for reply in replies:
        outcome = Outcome(**reply["outcome"])
        key = (outcome.seed, outcome.index)
        if key in by_key and key not in done:
            noted(by_key[key], outcome)
    missing = [p for p in group if (p.seed, p.index) not in done]
    if status is None and not missing:
        return
    for p in missing:   # one per process: the hang or the crash is this program's
        replies, single = call_worker({"run": [repr(p)], "strict": strict}, single_timeout)
        if replies:
            noted(p, Outcome(**replies[0]["outcome"]))
        elif single == "timeout":
            noted(p, Outcome(p.seed, p.index, "hang", "hang: no result within the time limit",
                             f"killed after {single_timeout:.0f} s"))
        else:
            noted(p, Outcome(p.seed, p.index, "internal", f"internal: crash: {(single or '')[:60]}", single or ""))
