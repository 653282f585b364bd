"""The demos `make demo` runs after `bin/axe demo` exit 0 and say what they checked: the bridge demo, the CPU kernel
(every element against numpy) and the CUDA kernel (PTX checks and its run in the CPU interpreter)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("demo, says", [
    ("bridge_demo.py", "installed in this TVM"),
    ("cpu_kernel_demo.py", "result check: C and its row sums match numpy"),
    ("cuda_kernel_demo.py", "Interpreted on the CPU (axe4j.cuda.interp"),
])
def test_demo_runs_and_checks(demo, says):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / demo)], capture_output=True, text=True, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert says in out.stdout, out.stdout[-3000:]
