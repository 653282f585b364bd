"""A seeded slice of the differential fuzzer (``axe4j_tools.fuzz``, docs/fuzzing.md): random legal tile programs on
``llvm`` and, through the CPU interpreter of CUDA kernels, on sm_80/sm_90a/sm_100a, each compared with numpy in a
watched worker process. No program may stop with an internal error, give wrong numbers or hang, except in a class
still listed as open (``KNOWN_OPEN`` below, or ``AXE4J_FUZZ_KNOWN_OPEN``; each must be emptied once its fix lands).

The fuzzer checks itself: emitters mutated on purpose (operands swapped, sub as add, exp as exp2, every value one
larger, sum as max) must make every program they touch ``wrong``; the shrinker must keep a failure while shrinking it;
the watchdog must turn a program that outlives its limit into a ``hang``.
"""

import tvm  # noqa: F401  (before the JVM)

import os
import sys
import threading
import time
from collections import Counter

import pytest

import axe4j
from axe4j_tools.fuzz import execute, generate, known, lazy_stack, mutate, runner, shrink
from axe4j_tools.fuzz.spec import parse

SEED = 20261207
PROGRAMS = 240
# classes of failure known to be open (names from axe4j_tools.fuzz.known): none
KNOWN_OPEN = ""


@pytest.fixture(scope="module", autouse=True)
def installed():
    axe4j.install()
    axe4j.use_pip_nvcc()
    lazy_stack.install()


def test_programs_are_reproducible_from_seed_and_index_and_travel_as_their_repr():
    for index in range(50):
        p = generate.program(SEED, index)
        assert generate.program(SEED, index) == p
        assert parse(repr(p)) == p
    kinds = Counter(generate.program(SEED, i).target for i in range(200))
    assert set(kinds) == set(generate.TARGETS), kinds


def test_seeded_slice_has_no_internal_error_no_wrong_answer_and_no_hang():
    open_names = known.open_classes(os.environ.get("AXE4J_FUZZ_KNOWN_OPEN", KNOWN_OPEN))
    programs = [generate.program(SEED, i) for i in range(PROGRAMS)]
    outcomes = runner.run_programs(programs, batch=PROGRAMS)
    counts = Counter(o.klass for o in outcomes)
    explained = Counter()
    unexplained = []
    for p, o in zip(programs, outcomes):
        if o.klass in ("internal", "wrong", "hang"):
            name = known.known_class(p, o, open_names)
            if name:
                explained[name] += 1
            else:
                unexplained.append(f"{o.signature}\n    {p!r}\n    {o.detail[:400]}")
    print(f"seed {SEED}: {dict(counts)}; in open classes: {dict(explained)}")
    assert counts["right"] >= PROGRAMS // 2, counts
    assert not unexplained, f"{len(unexplained)} failure(s) outside the open classes:\n" + "\n".join(unexplained)


def _touched(kind, count=6):
    """Programs whose op the mutation changes (float dtypes; on CUDA only for sum-as-max: the CPU reduce rule has
    its own combine step)."""
    _, _, ops = mutate.MUTATIONS[kind]
    targets = ("sm_90a", "sm_80") if kind == "sum-as-max" else ("llvm", "sm_90a")
    out = []
    index = 0
    while len(out) < count:
        p = generate.program(SEED + 1, index, targets, ops, ("float32", "float16"))
        index += 1
        if p.op == "sum" and all(p.extent[a] == 1 for a in p.axes) and not p.accum:
            continue   # a sum of one term is its max
        out.append(p)
    return out


def test_a_large_unrolled_loop_nest_compiles_on_the_main_thread():
    # found with extents past the generator's (152 x 132, int32 maximum through a permuted split layout): LLVM unrolled
    # the loop nest and recursed past the 1 MiB of stack the JVM had left this thread; the worker died of SIGSEGV
    assert threading.current_thread() is threading.main_thread()
    p = parse("Program(seed=777123, index=2107, target='llvm', op='maximum', extent=(152, 132), dst=Operand(layout=Layout(dims=((152,), (132,)), strides=(133, 1), offset=0, replica=(), swizzle=None), dtype='int32', start=(0, 0), memory='global', view=False), srcs=(Operand(layout=Layout(dims=((8, 19), (19, 7)), strides=(1, 1064, 56, 8), offset=4, replica=(), swizzle=None), dtype='int32', start=(0, 0), memory='global', view=False),), scope='', threads=0, repeat=1, axes=(), accum=False, scalar=5.0, tiles=(), notes=())")
    (outcome,) = execute.execute([p])
    assert outcome.klass == "right", outcome


@pytest.mark.parametrize("kind", sorted(mutate.MUTATIONS))
def test_a_mutated_emitter_makes_every_program_it_touches_wrong(kind):
    caught, touched = mutate.self_check({kind: _touched(kind)})[kind]
    assert touched >= 3, f"the mutation changed only {touched} of the programs that ran right without it"
    assert caught == touched, f"{kind}: only {caught} of the {touched} mutated programs were reported wrong"


def test_the_shrinker_keeps_the_failure_and_makes_the_program_smaller():
    p = next(q for q in _touched("off-by-one", 20) if q.repeat > 1 or len(q.extent) > 1 or q.srcs[0].start != (0,))
    with mutate.mutated("off-by-one") as touches:
        outcome = execute.execute([p])[0]
        assert touches.count, "the mutation changed nothing in the kernel"
        assert outcome.klass == "wrong", outcome
        small, small_outcome = shrink.shrink(p, outcome.signature, budget=25)
    assert small_outcome.signature == outcome.signature and small.notes, small
    size = lambda q: (q.repeat, len(q.extent), sum(q.extent), sum(s.layout.span() for s in (*q.srcs, q.dst)))  # noqa: E731
    assert size(small) < size(p), (p, small)


def test_the_watchdog_reports_a_program_that_outlives_its_limit_as_a_hang():
    p = generate.program(SEED, 0)
    outcomes = runner.run_programs([p], stall_timeout=0.5, single_timeout=0.5)
    assert [o.klass for o in outcomes] == ["hang"], outcomes


def test_batches_run_at_once_keep_each_outcome_with_its_program():
    programs = [generate.program(SEED, i) for i in range(4)]
    seen = []
    outcomes = runner.run_programs(programs, batch=1, stall_timeout=0.5, single_timeout=0.5, jobs=3,
                                   on_outcome=lambda p, o: seen.append((p.index, o.index)))
    assert [(o.seed, o.index) for o in outcomes] == [(p.seed, p.index) for p in programs]
    assert [o.klass for o in outcomes] == ["hang"] * 4, outcomes
    assert sorted(seen) == [(i, i) for i in range(4)]
    assert not runner._live, "a worker outlived the run"


def _fake_worker(body):
    return (sys.executable, "-c", "import sys, time, json\nsys.stdin.read()\n" + body)


def test_a_worker_that_dies_is_reported_with_its_status_and_the_end_of_its_stderr():
    # the stderr reader ends its stream with None: a death must not stop the run with a TypeError
    dies = _fake_worker("print(json.dumps({'n': 0}), flush=True)\n"
                        "print('first line\\nTVMError: the last words', file=sys.stderr)\nsys.exit(3)")
    replies, status = runner.call_worker({}, 5.0, command=dies)
    assert [r["n"] for r in replies] == [0]
    assert status == "worker died (exit status 3): first line | TVMError: the last words", status
    killed = _fake_worker("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    _, status = runner.call_worker({}, 5.0, command=killed)
    assert status.startswith("worker died (signal SIGSEGV)"), status


def test_after_a_worker_dies_only_its_module_runs_one_per_process(monkeypatch):
    # 20 llvm programs: modules of 8 (execute.module_groups); the worker dies on program 11, in the second module
    programs = [p for p in (generate.program(SEED, i) for i in range(400)) if p.target == "llvm"][:20]
    poison = programs[11]
    calls = []

    def fake_worker(request, timeout, on_reply=None, command=None):
        batch = [parse(text) for text in request["run"]]
        calls.append([p.index for p in batch])
        replies = []
        for group in execute.module_groups(batch):
            for p in group:
                if p.index == poison.index:
                    return replies, "worker died (signal SIGSEGV): "
                reply = {"outcome": {"seed": p.seed, "index": p.index, "klass": "right"}}
                replies.append(reply)
                if on_reply is not None:
                    on_reply(reply)
        return replies, None

    monkeypatch.setattr(runner, "call_worker", fake_worker)
    outcomes = runner.run_programs(programs, batch=500)
    index = [p.index for p in programs]
    assert calls == [index, *[[i] for i in index[11:16]], index[16:]], calls
    assert [o.klass for o in outcomes] == ["right"] * 11 + ["internal"] + ["right"] * 8, outcomes
    assert outcomes[11].signature.startswith("internal: crash: worker died (signal SIGSEGV)")


def test_the_watchdog_limits_the_wait_for_each_report_not_the_whole_batch():
    # ten reports 0.3 s apart take 3 s, three times the limit: all kept, none a timeout
    steady = _fake_worker("for i in range(10):\n    print(json.dumps({'n': i}), flush=True)\n    time.sleep(0.3)")
    seen = []
    replies, status = runner.call_worker({}, 1.0, seen.append, command=steady)
    assert status is None and [r["n"] for r in replies] == list(range(10)) and seen == replies
    # two reports, then silence: killed one limit after the last report, the two reports kept
    stalls = _fake_worker("print(json.dumps({'n': 0}), flush=True)\nprint(json.dumps({'n': 1}), flush=True)\n"
                          "time.sleep(60)")
    began = time.monotonic()
    replies, status = runner.call_worker({}, 1.0, command=stalls)
    assert status == "timeout" and [r["n"] for r in replies] == [0, 1]
    assert time.monotonic() - began < 10, "the stalled worker was not killed at its limit"
    assert not runner._live
