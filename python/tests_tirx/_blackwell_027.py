"""The Blackwell GEMM on the 0.27 lane (axe4j.cuda.kernels.blackwell_gemm), for test_blackwell_gemm_tirx.py: per
configuration of argv ("MxNxKxBNxSTAGESxCTA_GROUPxDTYPE", BK 64) for sm_100a, the PTX instruction mix (_ptx_mix),
the rules that lowered its calls and D computed by the 0.27 lane's interpreter on the test's inputs
(``_blackwell_inputs``). Run in .venv's Python; prints JSON {"mix": {config: mix}, "rules": {config: [variant, ...]},
"d": {config: D as float32 nested lists}}."""

import tvm  # noqa: F401  (before the JVM)

import json
import sys
from pathlib import Path

import numpy as np
from tvm.support import nvcc

sys.path.insert(0, str(Path(__file__).parent))

import axe4j  # noqa: E402
from axe4j.cuda import interp  # noqa: E402
from axe4j.cuda.kernels.blackwell_gemm import blackwell_gemm  # noqa: E402

import _blackwell_inputs  # noqa: E402
import _ptx_mix  # noqa: E402


def main(configs):
    axe4j.install()
    axe4j.use_pip_nvcc()
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"}, host="llvm")
    mixes, rules, results = {}, {}, {}
    for config in configs:
        (m, n, k), options = _blackwell_inputs.parse(config)
        executable = axe4j.compile(blackwell_gemm(m, n, k, **options), target)
        source = executable.mod.imports[0].inspect_source("cuda")
        with target:   # nvcc's -gencode comes from the current target's arch
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        mixes[config] = _ptx_mix.mix(ptx)
        rules[config] = sorted({row.variant for row in executable.lowered})
        a, b, d, _ = _blackwell_inputs.arrays(config)
        interp.run(executable, a, b, d)
        results[config] = d.astype("float32").tolist()
    print(json.dumps({"mix": mixes, "rules": rules, "d": results}))


if __name__ == "__main__":
    main(sys.argv[1:])
