"""The 0.27 lane beside a tvm_tirx test: the two TVMs cannot share a process, so a script of the 0.27 lane runs in
.venv's Python (this checkout's axe4j first on its path, the lane choice cleared) and answers one JSON document."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from axe4j import _lane

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv" / "bin" / "python"


def start(script: Path, *args: str) -> subprocess.Popen:
    """Starts ``script`` with ``args`` under the 0.27 lane; it works while the caller goes on."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    env.pop(_lane.LANE_ENV, None)
    return subprocess.Popen([str(PYTHON), str(script), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def running(script: Path, *args: str):
    """A module fixture's body: yields the started script, and kills it if the tests left it running."""
    process = start(script, *args)
    yield process
    if process.poll() is None:
        process.kill()


def answer(process: subprocess.Popen, timeout: float = 600):
    """The script's JSON answer; its exit status must be 0 (the end of its errors otherwise)."""
    stdout, stderr = process.communicate(timeout=timeout)
    assert process.returncode == 0, stderr[-3000:]
    return json.loads(stdout)
