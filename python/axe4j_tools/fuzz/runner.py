"""Runs programs in worker processes under a watchdog and attributes every failure to its program.

A batch goes to one ``worker`` process, which reports each outcome as soon as it is known. When the worker reports
nothing for its stall limit it is killed; when it dies (a signal, an exit without reports), the programs of the module
it was on (``execute.module_groups``: the first with a program it did not report) run again one per process: the one
that outlives the per-program limit is a ``hang``, one whose process dies is an ``internal`` crash (the signal or exit
status named). The other programs it did not report go to a new worker as a batch.
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

from .execute import Outcome, module_groups

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


WORKER = (sys.executable, "-m", "axe4j_tools.fuzz.worker")


def call_worker(request: dict, timeout: float, on_reply=None, command=WORKER):
    """(replies, status): the worker's JSON replies, and None when it finished, else ``"timeout"`` or a description
    of its death (signal or exit status, with the end of its stderr). ``timeout`` bounds the wait for each next
    reply, not the whole call: a batch of hundreds runs as long as it keeps reporting, and a program that hangs is
    killed ``timeout`` seconds after the last report. ``on_reply(reply)`` is called as each reply arrives."""
    proc = subprocess.Popen(list(command), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), text=True,
                            start_new_session=True)
    with _live_lock:
        _live.add(proc)
    lines = queue.Queue()
    err_tail = collections.deque(maxlen=40)
    readers = [threading.Thread(target=_pump, args=(proc.stdout, lines.put), daemon=True),
               threading.Thread(target=_pump, args=(proc.stderr, err_tail.append), daemon=True)]
    for reader in readers:
        reader.start()
    replies, status = [], None
    try:
        try:
            proc.stdin.write(json.dumps(request))
            proc.stdin.close()
        except BrokenPipeError:
            pass   # the worker died before reading: its status says why
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                os.killpg(proc.pid, signal.SIGKILL)
                status = "timeout"
                break
            if line is None:
                break
            try:
                reply = json.loads(line)
            except json.JSONDecodeError:
                continue   # a line a library printed
            replies.append(reply)
            if on_reply is not None:
                on_reply(reply)
        proc.wait()
    except BaseException:   # the run is stopped (Ctrl-C, SIGTERM): its worker goes with it
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    finally:
        with _live_lock:
            _live.discard(proc)
    for reader in readers:
        reader.join(timeout=5)
    if status is None and proc.returncode != 0:
        code = proc.returncode
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        tail = " | ".join("".join(line for line in err_tail if line is not None).strip().splitlines()[-3:])
        status = f"worker died ({how}): {tail[-600:]}"
    return replies, status


def _pump(stream, put):
    """Hands each line of ``stream`` to ``put``, then None at its end."""
    for line in stream:
        put(line)
    put(None)


def run_programs(programs, *, strict=False, batch=500, stall_timeout=180.0, single_timeout=120.0, on_outcome=None,
                 jobs=1):
    """Outcomes of ``programs`` in order; ``on_outcome(program, outcome)`` as each is known (in this thread). With
    ``jobs`` > 1 that many batches run at once, each in its own worker process. A worker that reports nothing for
    ``stall_timeout`` seconds is killed; a program run alone gets ``single_timeout``.

    Batches are large because a worker's start (TVM, the JVM, the rules) costs about 4 CPU seconds: measured on
    200 programs, batches of 200 took 21 CPU s against 38 for batches of 40."""
    results = {}

    def note(p, outcome):
        results[(p.seed, p.index)] = outcome
        if on_outcome is not None:
            on_outcome(p, outcome)

    groups = [programs[start:start + batch] for start in range(0, len(programs), batch)]
    if jobs <= 1:
        for group in groups:
            _run_batch(group, strict, stall_timeout, single_timeout, note)
        return [results[(p.seed, p.index)] for p in programs]
    known = queue.Queue()   # (program, outcome) from the pool's threads, noted here as they come
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    try:
        pending = {pool.submit(_run_batch, group, strict, stall_timeout, single_timeout,
                               lambda p, outcome: known.put((p, outcome))) for group in groups}
        while pending or not known.empty():
            try:
                note(*known.get(timeout=0.2))
            except queue.Empty:
                finished = {f for f in pending if f.done()}
                for future in finished:
                    future.result()   # a batch's own error stops the run
                pending -= finished
    except BaseException:   # stopped: no new batch starts, and the running workers go now
        pool.shutdown(wait=False, cancel_futures=True)
        _kill_live()
        raise
    pool.shutdown()
    return [results[(p.seed, p.index)] for p in programs]


def _run_batch(group, strict, stall_timeout, single_timeout, note):
    """Runs one batch in a worker, noting each outcome as it is reported. When the worker dies or stalls, the
    unreported programs of the module it was on run again one per process, so that the hang or the crash is pinned on
    its program, and the other unreported ones run as a new batch."""
    done = set()
    by_key = {(p.seed, p.index): p for p in group}

    def noted(p, outcome):
        done.add((p.seed, p.index))
        note(p, outcome)

    def reported(reply):
        outcome = Outcome(**reply["outcome"])
        key = (outcome.seed, outcome.index)
        if key in by_key and key not in done:
            noted(by_key[key], outcome)

    _, status = call_worker({"run": [repr(p) for p in group], "strict": strict}, stall_timeout, reported)
    missing = [p for p in group if (p.seed, p.index) not in done]
    if status is None and not missing:
        return
    # the worker stopped in the first module it did not finish: those programs one per process (the hang or the crash
    # is one of theirs), the rest as a new batch (one per process, hundreds took 4 CPU seconds each)
    unfinished = ([p for p in g if (p.seed, p.index) not in done] for g in module_groups(group))
    suspects = next(g for g in unfinished if g)
    suspect_keys = {(p.seed, p.index) for p in suspects}
    rest = [p for p in missing if (p.seed, p.index) not in suspect_keys]
    for p in suspects:
        replies, single = call_worker({"run": [repr(p)], "strict": strict}, single_timeout)
        if replies:
            noted(p, Outcome(**replies[0]["outcome"]))
        elif single == "timeout":
            noted(p, Outcome(p.seed, p.index, "hang", "hang: no result within the time limit",
                             f"killed after {single_timeout:.0f} s"))
        else:
            noted(p, Outcome(p.seed, p.index, "internal", f"internal: crash: {(single or '')[:60]}", single or ""))
    if rest:
        _run_batch(rest, strict, stall_timeout, single_timeout, note)
