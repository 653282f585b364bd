"""The process the runner watches: ``python -m axe4j_tools.fuzz.worker`` reads a JSON request on stdin and writes one
JSON line per result on stdout, flushed as each is known (so the runner keeps what finished before a hang or crash).

Requests: ``{"run": [program repr, ...], "strict": bool}`` -> one outcome per program;
``{"shrink": program repr, "signature": str}`` -> the shrunk program's repr and its outcome (shrink.py).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import warnings


def _emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    import tvm  # noqa: F401  (TVM's libraries before the JVM)

    import axe4j

    from . import execute, lazy_stack, shrink
    from .spec import parse

    request = json.loads(sys.stdin.read())
    warnings.simplefilter("ignore")   # TVM's fallback notices: the outcome records which case lowered what
    axe4j.install()
    axe4j.use_pip_nvcc()
    lazy_stack.install()
    if "run" in request:
        programs = [parse(text) for text in request["run"]]
        execute.execute(programs, strict=request.get("strict", False),
                        report=lambda o: _emit({"outcome": dataclasses.asdict(o)}))
    elif "shrink" in request:
        program = parse(request["shrink"])
        smaller, outcome = shrink.shrink(program, request["signature"], budget=request.get("budget", 60))
        _emit({"shrunk": repr(smaller), "outcome": dataclasses.asdict(outcome)})


if __name__ == "__main__":
    main()
