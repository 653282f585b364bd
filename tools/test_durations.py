"""Seconds per Python test module from a pytest JUnit report, for the order in which `make test`'s two xdist
workers take the modules (python/tests/conftest.py: slowest group first).

    bash ci/test-python.sh          # (or make test) writes out/test-reports/python.xml
    .venv/bin/python tools/test_durations.py                           # writes python/tests/durations.json

It also prints the finish time of each of N workers (--workers, default 2) when each takes the slowest group left,
the schedule conftest.py makes: a long module near the end of the list would leave one worker idle.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "python" / "tests"
sys.path.insert(0, str(TESTS))


def module_seconds(report: Path) -> dict[str, float]:
    """Sum of the test case times per module (``classname`` is ``tests.test_x`` or ``test_x[.Class]``)."""
    seconds: dict[str, float] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        module = next((p for p in parts if p.startswith("test_")), None)
        if module is None:
            continue
        seconds[module] = seconds.get(module, 0.0) + float(case.get("time", 0.0))
    return seconds


def schedule(group_seconds: dict[str, float], workers: int) -> list[float]:
    """Finish times when each free worker takes the slowest group left (longest processing time first)."""
    finish = [0.0] * workers
    for seconds in sorted(group_seconds.values(), reverse=True):
        finish[finish.index(min(finish))] += seconds
    return finish


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, nargs="?", default=ROOT / "out" / "test-reports" / "python.xml",
                        help="pytest --junitxml report of the whole suite (default: what ci/test-python.sh writes)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=TESTS / "durations.json")
    args = parser.parse_args(argv)
    seconds = module_seconds(args.report)
    if not seconds:
        print(f"{args.report}: no test cases of test_* modules", file=sys.stderr)
        return 1
    args.out.write_text(json.dumps({m: round(s, 1) for m, s in sorted(seconds.items())}, indent=1) + "\n")
    from conftest import SHARED_GROUPS

    groups: dict[str, float] = {}
    for module, s in seconds.items():
        groups[SHARED_GROUPS.get(module, module)] = groups.get(SHARED_GROUPS.get(module, module), 0.0) + s
    total = sum(seconds.values())
    finish = schedule(groups, args.workers)
    print(f"{len(seconds)} modules, {total:.0f} s in one process; {args.workers} workers, slowest group first: "
          + ", ".join(f"{f:.0f} s" for f in finish))
    for group, s in sorted(groups.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {s:7.1f} s  {group}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
