"""A TIRx CUDA kernel with Axe layouts, lowered through axe4j's Java CUDA rules and compiled for Hopper (no GPU needed).

Global -> a 128-byte-swizzled shared tile (CTA copy), ldmatrix into a warp's register fragment, stmatrix back,
row sums of the shared tile: ``axe4j.explain`` shows each rule's decision per tile call, then the generated
PTX (from the nvcc of the ``nvidia-cuda-nvcc`` wheel) is searched for the instructions the rules chose. Last, the
lowered kernel runs on the CPU in ``axe4j.cuda.interp`` and its outputs are checked against numpy element by element.
"""

import tvm  # noqa: F401  (TVM before the JVM)

import re
import time

import numpy as np
from tvm.script import tirx as T
from tvm.support import nvcc
from tvm.tirx.layout import ComposeLayout, S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import axe4j

SWIZZLED = ComposeLayout(3, 3, 3, TileLayout(S[8, 64])).tile_to((64, 64), (8, 64))   # Swizzle<3,3,3> o row-major
FRAGMENT = TileLayout(S[(2, 8, 2, 4, 2):(2, 4 @ laneid, 4, 1 @ laneid, 1)])           # 16x16 as 2x2 ldmatrix blocks


@T.prim_func
def kernel(A_ptr: T.handle, B_ptr: T.handle, r_ptr: T.handle) -> None:
    A = T.match_buffer(A_ptr, (64, 64), "float16")
    B = T.match_buffer(B_ptr, (16, 16), "float16")
    r = T.match_buffer(r_ptr, (64,), "float32")
    T.device_entry()
    T.cta_id([1])
    T.warp_id([4])
    T.lane_id([32])
    T.thread_id([128])
    A_smem = T.alloc_buffer((64, 64), "float16", scope="shared", layout=SWIZZLED)
    T_smem = T.alloc_buffer((16, 16), "float16", scope="shared", layout=TileLayout(S[16, 16]))
    X = T.alloc_buffer((64, 64), "float32", scope="shared", layout=TileLayout(S[64, 64]))
    sums = T.alloc_buffer((64,), "float32", scope="shared", layout=TileLayout(S[64]))
    R = T.alloc_buffer((16, 16), "float16", scope="local", layout=FRAGMENT)
    Tx.cta.copy(A_smem[:, :], A[:, :])
    Tx.cta.copy(T_smem[:, :], A[0:16, 0:16])
    T.cuda.cta_sync()
    Tx.warp.copy(R[:, :], T_smem[:, :])
    T.cuda.cta_sync()   # every warp has read the tile before any writes it back (the interpreter finds the race)
    Tx.warp.copy(T_smem[:, :], R[:, :])
    Tx.cta.cast(X[:, :], A_smem[:, :])
    T.cuda.cta_sync()
    Tx.cta.sum(sums[:], X[:, :], [1], False)
    T.cuda.cta_sync()
    Tx.cta.copy(B[:, :], T_smem[:, :])
    Tx.cta.copy(r[:], sums[:])


def main() -> None:
    axe4j.install()
    axe4j.use_pip_nvcc()
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")
    print(axe4j.explain(kernel, target, file=open("/dev/null", "w")))   # axe4j's decisions; verbose=True adds TVM's cases
    executable = axe4j.compile(kernel, target)
    source = executable.mod.imports[0].inspect_source("cuda")
    with target:
        ptx = bytes(nvcc.compile_cuda(source, target_format="ptx", compiler="nvcc")).decode()
    print("PTX for sm_90a, instructions the rules chose:")
    for pattern in (r"ld\.global(\.nc)?\.v4\.\w+", r"st\.shared\.v4\.\w+", r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16",
                    r"stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", r"cvt\.f32\.f16", r"add(\.rn)?(\.ftz)?\.f32"):
        found = re.search(pattern, ptx)
        print(f"  {pattern:55s} {'found: ' + found.group(0) if found else 'MISSING'}")
        if not found:
            raise SystemExit(f"{pattern} is not in the PTX")
    a = np.random.default_rng(0).standard_normal((64, 64)).astype("float16")
    b, r = np.zeros((16, 16), "float16"), np.zeros(64, "float32")
    start = time.perf_counter()
    axe4j.cuda.interp.run(executable, a, b, r)
    seconds = time.perf_counter() - start
    np.testing.assert_array_equal(b, a[:16, :16])
    np.testing.assert_allclose(r, a.astype("float32").sum(axis=1), rtol=1e-5, atol=1e-4)
    print(f"Interpreted on the CPU (axe4j.cuda.interp, 128 threads, {seconds:.2f} s): B equals A[0:16, 0:16] and r the "
          f"row sums of A, element for element")


if __name__ == "__main__":
    main()
