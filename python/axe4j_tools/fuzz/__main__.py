"""``python -m axe4j_tools.fuzz``: generate, run, classify, summarise, shrink (``make fuzz``, ``make soak``).

    python -m axe4j_tools.fuzz --seed 7 --count 3000 [--targets llvm,sm_90a] [--known-open bf16-cpu,...]
                               [--out out/fuzz] [--batch 40] [--shrink 12] [--start 0]

Prints the seed, a table per class and per target/op/dtype, each distinct failure (its signature, its count, the
first program's (seed, index)) and writes a shrunk reproducer of each distinct failure to ``OUT/<n>-<class>.py`` and
the outcomes to ``OUT/outcomes.jsonl``. Exit status 1 when a failure outside the known-open classes was found.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
import time
from pathlib import Path

from . import generate, known, replay, runner
from .execute import Outcome
from .spec import parse
from .summary import Summary


def _stop(signum, frame):
    raise SystemExit(128 + signum)   # unwinds through the runner, which kills the running worker


def main(argv=None):
    signal.signal(signal.SIGTERM, _stop)
    ap = argparse.ArgumentParser(prog="python -m axe4j_tools.fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--start", type=int, default=0, help="first program index")
    ap.add_argument("--targets", default=",".join(generate.TARGETS))
    ap.add_argument("--ops", default=",".join(generate.OPS))
    ap.add_argument("--dtypes", default=",".join(generate.DTYPES))
    ap.add_argument("--known-open", default=None, help=f"classes still open: {', '.join(known.CLASSES)} | all | none")
    ap.add_argument("--out", default="out/fuzz")
    ap.add_argument("--batch", type=int, default=500, help="programs per worker process")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="batches run at once, each in its own worker process (default: the CPUs this process may use)")
    ap.add_argument("--shrink", type=int, default=12, help="distinct failures to shrink (each up to --budget runs)")
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--from-outcomes", metavar="JSONL", help="summarise and shrink the outcomes a run wrote (it may "
                    "have been stopped) instead of running programs")
    args = ap.parse_args(argv)
    open_names = known.open_classes(args.known_open)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.from_outcomes:
        summary = Summary(open_names)
        for line in open(args.from_outcomes):
            row = json.loads(line)
            summary.add(parse(row.pop("program")), Outcome(**row))
        print(f"[fuzz] {args.from_outcomes}: seed(s) {', '.join(map(str, sorted(summary.seeds)))}")
        print(summary.table())
        return _reproduce(summary, out, args)
    programs = [generate.program(args.seed, i, tuple(args.targets.split(",")), tuple(args.ops.split(",")),
                                 tuple(args.dtypes.split(",")))
                for i in range(args.start, args.start + args.count)]
    print(f"[fuzz] seed {args.seed}: programs {args.start}..{args.start + args.count - 1} on {args.targets}, "
          f"{args.jobs} worker{'s' if args.jobs != 1 else ''} at once; "
          f"known open: {', '.join(open_names) or 'none'}", flush=True)
    summary = Summary(open_names)
    log = open(out / "outcomes.jsonl", "w")
    began = time.time()

    def seen(p, outcome):
        summary.add(p, outcome)
        log.write(json.dumps({**dataclasses.asdict(outcome), "program": repr(p)}) + "\n")
        log.flush()
        done = summary.total
        if done % 200 == 0:
            rate = done / (time.time() - began)
            print(f"[fuzz] {done} programs, {rate:.2f}/s: {summary.counts_line()}", flush=True)

    runner.run_programs(programs, strict=args.strict, batch=args.batch, on_outcome=seen, jobs=args.jobs)
    elapsed = time.time() - began
    used = os.times()
    print(summary.table(elapsed, used.children_user + used.children_system))
    return _reproduce(summary, out, args)


def _reproduce(summary, out, args):
    """A shrunk reproducer of each distinct failure (the first --shrink of them); exit status 1 when a failure
    outside the known-open classes was seen."""
    for n, (signature, first, count) in enumerate(summary.distinct()[:args.shrink]):
        p, outcome = first
        replies, status = [], "a hang or a crash is not shrunk in a worker"
        if outcome.klass != "hang" and "crash" not in signature:
            replies, status = runner.call_worker({"shrink": repr(p), "signature": signature, "budget": args.budget},
                                                 timeout=60 + 20 * args.budget)
        if replies:
            p, outcome = parse(replies[0]["shrunk"]), Outcome(**replies[0]["outcome"])
        path = out / f"{n:02d}-{outcome.klass}.py"
        path.write_text(replay.snippet(p, outcome))
        print(f"[fuzz] reproducer {path} ({count}x, seed {first[0].seed} index {first[0].index}"
              f"{'' if replies else ', not shrunk: ' + str(status)[:80]})")
    return 1 if summary.unexplained() else 0


if __name__ == "__main__":
    sys.exit(main())
