"""The Hopper GEMM on the 0.27 lane (axe4j.cuda.kernels.hopper_gemm), for test_hopper_gemm_tirx.py: per
configuration of argv ("MxNxKxSTAGES", 128 x 128 x 64 tiles) for sm_90a, the PTX instruction mix (_ptx_mix) and
the rules that lowered its calls. Run in .venv's Python; prints JSON {"mix": {config: mix}, "rules": {config:
[variant, ...]}}."""

import tvm  # noqa: F401  (before the JVM)

import json
import sys
from pathlib import Path

from tvm.support import nvcc

sys.path.insert(0, str(Path(__file__).parent))

import axe4j  # noqa: E402
from axe4j.cuda.kernels.hopper_gemm import hopper_gemm  # noqa: E402

import _ptx_mix  # noqa: E402


def main(configs):
    axe4j.install()
    axe4j.use_pip_nvcc()
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    mixes, rules = {}, {}
    for config in configs:
        m, n, k, stages = (int(v) for v in config.split("x"))
        executable = axe4j.compile(hopper_gemm(m, n, k, stages=stages), target)
        source = executable.mod.imports[0].inspect_source("cuda")
        with target:   # nvcc's -gencode comes from the current target's arch
            ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
        mixes[config] = _ptx_mix.mix(ptx)
        rules[config] = sorted({row.variant for row in executable.lowered})
    print(json.dumps({"mix": mixes, "rules": rules}))


if __name__ == "__main__":
    main(sys.argv[1:])
