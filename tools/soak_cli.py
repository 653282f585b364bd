"""Soak of the command-line tool as a separate process: the hostile requests one by one (time and
peak memory of each run), then one long batch stream with hostile lines mixed into ordinary ones, every ordinary
answer checked against a brute-force enumeration, and the stream's peak memory.

    python3 tools/soak_cli.py [--lines 100000]

Exits 1 when an answer is wrong or missing, a run exceeds 512 MiB, or a hostile request is not refused.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pathlib
import random
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
AXE = str(ROOT / "bin" / "axe")
MEMORY_LIMIT_KB = 512 * 1024

HOSTILE_LINES = [
    ({"op": "apply", "layout": "S[2:1] + R[16777216:1@laneid]", "shape": [2], "coord": [1]}, "too_large"),
    ({"op": "apply", "layout": "S[2:1] + R[1048576:1@laneid]", "shape": [2], "coord": [1]}, "too_large"),
    ({"op": "canon", "layout": "S[(\u0668,\u0661\u0666):(\u0661\u0666,\u0661)]"}, "parse"),
    ({"op": "canon", "layout": "S[(\uff18,\uff11\uff16):(16,1)]"}, "parse"),
    ({"op": "canon", "layout": "S[8:1]\u2003+ 2"}, "parse"),
    ({"op": "iters", "layout": "S[2:9223372036854775807] + 1"}, "invalid"),
    ({"op": "slice", "layout": "S[8:1]", "shape": [8], "region": [[1, 9223372036854775807]]}, "invalid"),
    ({"op": "inverse", "layout": "S[8:1] + R[(4096,4096):(1@a,1@b)]", "shape": [8], "point": {"m": 3}}, "ok"),
    ('{"op":"canon","layout":"S[8:1]","deep":' + "[" * 50_000 + "]" * 50_000 + "}", "parse"),  # raw line
]
HOSTILE_COMMANDS = [
    ["layout", "batch"],  # fed one hostile line below
    ["layout", "show", "S[2:1] + R[16777216:1@laneid]"],
    ["layout", "show", "S[2:9223372036854775807] + 1"],
]


def measured(args: list[str], stdin: bytes) -> tuple[int, bytes, float, int]:
    """Runs bin/axe (which execs the JVM): exit code, stdout, wall seconds, peak resident KiB (from wait4)."""
    start = time.monotonic()
    child = subprocess.Popen([AXE, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(child.stdout.read()))
    reader.start()
    try:
        child.stdin.write(stdin)
        child.stdin.close()
    except BrokenPipeError:
        pass
    reader.join()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, out[0], time.monotonic() - start, usage.ru_maxrss


def random_request(rng: random.Random):
    """An apply of a small random layout and its brute-force answer (the tool's JSON point objects)."""
    shard = [(rng.choice([1, 2, 3, 4, 8]), rng.choice([0, 1, 2, 5, -1, -3]), rng.choice(["m", "laneid", "warpid"]))
             for _ in range(rng.randint(1, 3))]
    replica = [(rng.randint(2, 4), rng.choice([1, 3, -2]), rng.choice(["m", "warpid"]))
               for _ in range(rng.choice([0, 0, 1]))]

    def iters(items):
        return "(" + ",".join(str(e) for e, _, _ in items) + "):(" + ",".join(
            str(s) if a == "m" else f"{s}@{a}" for _, s, a in items) + ")"

    text = "S[" + iters(shard) + "]" + (" + R[" + iters(replica) + "]" if replica else "")
    size = 1
    for e, _, _ in shard:
        size *= e
    x = rng.randrange(size)
    rest, digits = x, []
    for e, _, _ in reversed(shard):
        digits.append(rest % e)
        rest //= e
    digits.reverse()
    base = {}
    for d, (_, s, a) in zip(digits, shard):
        base[a] = base.get(a, 0) + d * s
    points = set()
    for combo in itertools.product(*[range(f) for f, _, _ in replica]):
        p = dict(base)
        for r, (_, t, a) in zip(combo, replica):
            p[a] = p.get(a, 0) + r * t
        points.add(tuple(sorted((k, v) for k, v in p.items() if v != 0)))
    return {"op": "apply", "layout": text, "shape": [size], "coord": [x]}, sorted(points)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    failures = []

    print("[soak-cli] hostile requests, one process each (wall time includes JVM start):")
    for request, kind in HOSTILE_LINES:
        line = request if isinstance(request, str) else json.dumps(request)
        code, out, wall, peak = measured(["layout", "batch"], (line + "\n").encode())
        answer = json.loads(out.decode().splitlines()[0])
        ok = answer.get("kind", "ok") == kind and code == 0 and peak < MEMORY_LIMIT_KB
        print(f"  {wall:5.2f} s {peak / 1024:6.1f} MiB  {answer.get('kind', 'ok')}  {line[:90]}")
        if not ok:
            failures.append(f"{request}: {answer} (exit {code}, {peak} KiB)")
    for command in HOSTILE_COMMANDS[1:]:
        code, out, wall, peak = measured(command, b"")
        print(f"  {wall:5.2f} s {peak / 1024:6.1f} MiB  exit {code}  axe {' '.join(command)}")
        if code not in (2, 4) or peak >= MEMORY_LIMIT_KB:
            failures.append(f"axe {command}: exit {code}, {peak} KiB")

    rng = random.Random(20261124)
    lines, expected = [], []
    hostile_every = 997
    for i in range(args.lines):
        if i % hostile_every == 0:
            request, kind = HOSTILE_LINES[(i // hostile_every) % len(HOSTILE_LINES)]
            if isinstance(request, str):  # unreadable: answered without its id
                lines.append(request)
                expected.append(("kind", kind, None))
            else:
                lines.append(json.dumps(dict(request, id=i)))
                expected.append(("kind", kind, i))
        else:
            request, points = random_request(rng)
            request["id"] = i
            lines.append(json.dumps(request))
            expected.append(("points", points, i))
    code, out, wall, peak = measured(["layout", "batch"], ("\n".join(lines) + "\n").encode())
    answers = out.decode().splitlines()
    wrong = 0
    if len(answers) != len(lines):
        failures.append(f"{len(lines)} requests, {len(answers)} answers")
    for text, (what, value, id_) in zip(answers, expected):
        answer = json.loads(text)
        if answer.get("id") != id_:
            wrong += 1
        elif what == "kind":
            wrong += answer.get("kind", "ok") != value
        else:
            got = sorted(tuple(sorted(p.items())) for p in answer.get("points", [{"error": 1}]))
            wrong += got != value
    print(f"[soak-cli] batch of {len(lines)} lines ({len(lines) // hostile_every + 1} hostile): exit {code}, "
          f"{len(answers)} answers, {wrong} wrong, {wall:.1f} s, peak {peak / 1024:.1f} MiB")
    if wrong or code != 0 or peak >= MEMORY_LIMIT_KB:
        failures.append(f"batch: exit {code}, {wrong} wrong answers, {peak} KiB")

    closed = subprocess.run(f"yes '{json.dumps(HOSTILE_LINES[0][0])}' | {AXE} layout batch | head -3 > /dev/null; "
                            "echo ${PIPESTATUS[1]}", shell=True, executable="/bin/bash", capture_output=True,
                            text=True, timeout=120)
    print(f"[soak-cli] batch whose reader closes after 3 answers: exit {closed.stdout.strip()}")
    if closed.stdout.strip() != "141":
        failures.append(f"closed output: exit {closed.stdout.strip()} {closed.stderr[-500:]}")

    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
