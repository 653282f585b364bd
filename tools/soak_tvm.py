"""Soak of the axe4j.layout.* TVM functions: threads calling them at once for a while, hostile and ordinary calls
mixed, every ordinary answer checked against a brute-force enumeration, every hostile one against its refusal.

    .venv/bin/python tools/soak_tvm.py [--threads 8] [--seconds 30]

Prints the calls made, the wrong answers (must be 0), the slowest refusal and the JVM's heap after the run; exits 1
on any wrong answer or unexpected error. ``make soak`` runs it with core dumps enabled.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import threading
import time

import tvm  # noqa: F401  (TVM's libraries before the JVM)

import axe4j

AXES = ["m", "laneid", "warpid"]


def random_layout(rng: random.Random):
    """(text, shard, replica, offset): up to 3 shard iters, sometimes replicas and an offset, small sizes."""
    shard = [(rng.choice([1, 2, 3, 4, 8]), rng.choice([0, 1, 2, 3, 5, 8, -1, -4]), rng.choice(AXES))
             for _ in range(rng.randint(1, 3))]
    replica = [(rng.randint(2, 5), rng.choice([1, 2, 3, 7, -2]), rng.choice(AXES))
               for _ in range(rng.choice([0, 0, 1, 2]))]
    offset = {rng.choice(AXES): rng.randint(-9, 9)} if rng.random() < 0.4 else {}

    def iters(items):
        return "(" + ",".join(str(e) for e, _, _ in items) + "):(" + ",".join(
            f"{s}" if a == "m" else f"{s}@{a}" for _, s, a in items) + ")"

    text = "S[" + iters(shard) + "]"
    if replica:
        text += " + R[" + iters(replica) + "]"
    for axis, value in offset.items():
        if value:
            text += (" + " if value > 0 else " - ") + str(abs(value)) + ("" if axis == "m" else "@" + axis)
    return text, shard, replica, offset


def brute_force(shard, replica, offset, x):
    digits = []
    for extent, _, _ in reversed(shard):
        digits.append(x % extent)
        x //= extent
    digits.reverse()
    base = dict(offset)
    for d, (_, stride, axis) in zip(digits, shard):
        base[axis] = base.get(axis, 0) + d * stride
    points = set()
    for combo in itertools.product(*[range(f) for f, _, _ in replica]):
        p = dict(base)
        for r, (_, t, axis) in zip(combo, replica):
            p[axis] = p.get(axis, 0) + r * t
        points.add(tuple(sorted((k, v) for k, v in p.items() if v != 0)))
    return sorted(points)


HOSTILE = [
    (lambda: axe4j.layout.apply("S[2:1] + R[16777216:1@laneid]", 1), "too large"),
    (lambda: axe4j.layout.apply("S[2:1] + R[1048576:1@laneid]", [1], [2]), "too large"),
    (lambda: axe4j.layout.span("S[2:9223372036854775807]"), "overflows 64 bits"),
    (lambda: axe4j.layout.canonicalize("S[(\u0668,\u0661\u0666):(\u0661\u0666,\u0661)]"), "U+0668"),
    (lambda: axe4j.layout.slice("S[8:1]", [8], [tvm.ir.Range.from_min_extent(1, 2**63 - 1)]), "overflows 64 bits"),
    (lambda: axe4j.layout.canonicalize("S[8:1]" + " " * (2 << 20)), "too large"),
    (lambda: axe4j.layout.tile("S[4:1]", "S[2:4611686018427387904]", [2], [4]), "overflows 64 bits"),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    axe4j.install()
    assert axe4j.layout.count("S[8:1] + R[(4096,4096):(1@a,1@b)]", 3) == 1 << 24

    stats = {"calls": 0, "wrong": 0, "unexpected": 0, "slowest_refusal_s": 0.0}
    problems: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + args.seconds

    def work(seed: int) -> None:
        rng = random.Random(seed)
        calls = wrong = unexpected = 0
        slowest = 0.0
        while time.monotonic() < stop:
            if rng.random() < 0.25:
                call, says = rng.choice(HOSTILE)
                start = time.monotonic()
                try:
                    call()
                    unexpected += 1
                    with lock:
                        problems.append(f"no refusal where '{says}' was expected")
                except ValueError as error:
                    if says not in str(error):
                        unexpected += 1
                        with lock:
                            problems.append(f"expected '{says}', got {str(error)[:300]}")
                slowest = max(slowest, time.monotonic() - start)
            else:
                text, shard, replica, offset = random_layout(rng)
                size = 1
                for e, _, _ in shard:
                    size *= e
                x = rng.randrange(size)
                got = sorted(tuple(sorted((k, v) for k, v in p.items() if v != 0))
                             for p in axe4j.layout.apply(text, x))
                if got != brute_force(shard, replica, offset, x):
                    wrong += 1
                    with lock:
                        problems.append(f"wrong apply of {text} at {x}: {got}")
                if axe4j.layout.count(text, x) != len(got):
                    wrong += 1
                    with lock:
                        problems.append(f"wrong count of {text} at {x}")
            calls += 1
        with lock:
            stats["calls"] += calls
            stats["wrong"] += wrong
            stats["unexpected"] += unexpected
            stats["slowest_refusal_s"] = max(stats["slowest_refusal_s"], slowest)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    runtime = __import__("jpype").JClass("java.lang.Runtime").getRuntime()
    used = (int(runtime.totalMemory()) - int(runtime.freeMemory())) >> 20
    print(f"[soak-tvm] {args.threads} threads x {args.seconds:.0f} s: {stats['calls']} calls, "
          f"{stats['wrong']} wrong answers, {stats['unexpected']} unexpected errors, slowest refusal "
          f"{stats['slowest_refusal_s'] * 1000:.0f} ms, JVM heap in use after the run {used} MiB")
    for p in problems[:20]:
        print("  " + p)
    return 0 if stats["wrong"] == 0 and stats["unexpected"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
