"""The Ampere-style GEMM on the 0.27 lane (axe4j.cuda.kernels.ampere_gemm), for test_ampere_gemm_tirx.py: per shape
of argv ("MxNxK") and arch, the PTX instruction mix (_ptx_mix) and the rules that lowered its calls. Run in .venv's
Python; prints JSON {"mix": {shape: {arch: mix}}, "rules": {shape: [variant, ...]}}."""

import tvm  # noqa: F401  (before the JVM)

import json
import sys
from pathlib import Path

from tvm.support import nvcc

sys.path.insert(0, str(Path(__file__).parent))

import axe4j  # noqa: E402
from axe4j.cuda.kernels.ampere_gemm import ampere_gemm  # noqa: E402

import _ptx_mix  # noqa: E402

ARCHS = ("sm_80", "sm_90a")


def main(shapes):
    axe4j.install()
    axe4j.use_pip_nvcc()
    mixes, rules = {}, {}
    for shape in shapes:
        m, n, k = (int(v) for v in shape.split("x"))
        for arch in ARCHS:
            target = tvm.target.Target({"kind": "cuda", "arch": arch}, host="llvm")
            executable = axe4j.compile(ampere_gemm(m, n, k), target)
            source = executable.mod.imports[0].inspect_source("cuda")
            with target:
                ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
            mixes.setdefault(shape, {})[arch] = _ptx_mix.mix(ptx)
            rules[shape] = sorted({row.variant for row in executable.lowered})
    print(json.dumps({"mix": mixes, "rules": rules}))


if __name__ == "__main__":
    main(sys.argv[1:])
