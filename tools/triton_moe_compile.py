"""The Triton fused-MoE peer's two kernels (axe4j.moe.triton_moe) compiled for sm_90 without a GPU: Triton's own
compiler (``triton.compile`` with a ``GPUTarget``) and the ptxas it carries, at Qwen3-30B-A3B's shapes (hidden 2048,
intermediate 768), for every distinct row of ``CONFIGS`` in FP16 and FP8, and BF16 at the largest.

A kernel that would not launch on an H100/H200, or would run far below its kind, fails here: a compile error, more
shared memory than a block may have (227 KiB), more registers than the block's threads may hold (64 K per SM), no
wgmma where the block has 64 rows or more, or tiles loaded through registers instead of cp.async. Each line names
the kernel, the type, the block sizes, the MMA the PTX uses (``wgmma`` or ``mma.sync``), how the tiles load, shared
bytes, registers and spilled bytes (the registers and spills from ``ptxas -v``; a kernel's own count needs a
driver). The pointers are marked 16-byte aligned, as Triton's launcher marks a torch tensor's.
Needs only triton (no torch, no GPU); run it in a venv that has it, as ``make test`` does in out/triton-venv:
    out/triton-venv/bin/python tools/triton_moe_compile.py        # exit 0: every kernel would launch
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

MOE = Path(__file__).resolve().parent.parent / "python" / "axe4j" / "moe"
HIDDEN, INTER = 2048, 768               # axe4j.moe.config.QWEN3_30B_A3B
SHARED_LIMIT = 227 * 1024               # the most dynamic shared memory one block may have on sm_90
REGISTERS_PER_SM = 64 * 1024


def _triton_moe():
    """triton_moe and its one import, loaded as the package ``moe`` (as the GPU bundle carries them): no TVM."""
    package = types.ModuleType("moe")
    package.__path__ = [str(MOE)]
    sys.modules["moe"] = package
    for name in ("block_sort", "triton_moe"):
        spec = importlib.util.spec_from_file_location(f"moe.{name}", MOE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"moe.{name}"] = module
        spec.loader.exec_module(module)
    return sys.modules["moe.triton_moe"]


def cases(tm):
    """(tokens, dtype) for each distinct block-size row of CONFIGS in FP16 and FP8, and BF16 at the last."""
    seen, out = set(), []
    for bound, row in tm.CONFIGS:
        tokens = bound if bound is not None else 4096
        if row in seen:
            continue
        seen.add(row)
        out += [(tokens, "fp16"), (tokens, "fp8e4nv")]
    return out + [(4096, "bf16")]


def compile_one(tm, kernel, which, tokens, dtype):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fp8 = dtype == "fp8e4nv"
    act = "bf16" if dtype == "bf16" else "fp16"
    c = tm.config(tokens, fp8)
    if which == "gemm1":
        names = ("x_ptr", "w1_ptr", "a_ptr", "sorted_ptr", "block_expert_ptr", "used_ptr", "weight_ptr", "xs_ptr",
                 "w1s_ptr", "pairs", "top_k", "blocks_m")
        types_ = (f"*{dtype}", f"*{dtype}", f"*{act}", "*i32", "*i32", "*i32", "*fp32", "*fp32", "*fp32", "i32",
                  "i32", "i32")
        bn = min(c["BN"] // 2, INTER)                     # gate and up: BN / 2 columns each (as fused_experts)
    else:
        names = ("a_ptr", "w2_ptr", "y_ptr", "sorted_ptr", "block_expert_ptr", "used_ptr", "as_ptr", "w2s_ptr",
                 "pairs", "blocks_m")
        types_ = (f"*{dtype if fp8 else act}", f"*{dtype}", "*fp32", "*i32", "*i32", "*i32", "*fp32", "*fp32",
                  "i32", "i32")
        bn = min(c["BN"], HIDDEN)
    constants = {"H": HIDDEN, "I": INTER, "BM": c["BM"], "BN": bn, "BK": min(c["BK"], INTER),
                 "GROUP_M": c["GROUP_M"], "FP8": fp8}
    signature = dict(zip(names, types_)) | {k: "constexpr" for k in constants}
    order = list(signature)
    # every pointer 16-byte aligned, as Triton's launcher specializes it for a torch tensor (without the hint the
    # loads cannot be vectorised into cp.async and go through registers); integers unspecialized
    aligned = {(order.index(n),): [["tt.divisibility", 16]] for n in names if signature[n].startswith("*")}
    source = ASTSource(kernel, signature, constexprs={(order.index(k),): v for k, v in constants.items()},
                       attrs=aligned)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": c["num_warps"], "num_stages": c["num_stages"]})
    ptx = compiled.asm["ptx"]
    mma = "wgmma" if "wgmma.mma_async" in ptx else "mma.sync" if "mma.sync" in ptx else "none"
    copy = "cp.async" if "cp.async" in ptx else "registers"
    shared = int(compiled.metadata.shared)
    regs, spills = _registers(ptx, compiled.metadata.name)
    threads = 32 * c["num_warps"]
    problems = []
    if mma == "none":
        problems.append("no tensor-core MMA in the PTX")
    if mma != "wgmma" and c["BM"] >= 64:
        problems.append(f"BM={c['BM']} fills a warpgroup's m64 wgmma, but the PTX has none")
    if copy != "cp.async":
        problems.append("the tiles load through registers, not cp.async (the pipeline holds them in registers)")
    if shared > SHARED_LIMIT:
        problems.append(f"{shared} bytes of shared memory > {SHARED_LIMIT}")
    if regs * threads > REGISTERS_PER_SM:
        problems.append(f"{regs} registers x {threads} threads > {REGISTERS_PER_SM}")
    blocks = f"BM={c['BM']} BN={bn} BK={constants['BK']} warps={c['num_warps']} stages={c['num_stages']}"
    line = (f"{which} {dtype} tokens<={tokens} {blocks}: {mma}, loads via {copy}, shared {shared} B, {regs} regs, "
            f"{spills} spilled bytes")
    return line, problems


def _registers(ptx: str, name: str) -> tuple[int, int]:
    """(registers, spilled bytes) of kernel ``name`` from ``ptxas -v`` (the ptxas Triton carries), since a
    compiled kernel reads them from the driver, which a machine without a GPU lacks."""
    import re
    import subprocess
    import tempfile

    import triton

    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "k.ptx"
        source.write_text(ptx)
        out = subprocess.run([str(ptxas), "-v", "-arch=sm_90a", str(source), "-o", str(Path(tmp) / "k.cubin")],
                             capture_output=True, text=True, check=True)
    text = out.stdout + out.stderr
    used = re.search(r"Used (\d+) registers", text)
    spill = re.search(r"(\d+) bytes spill stores", text)
    if used is None:
        raise RuntimeError(f"ptxas -v printed no register count for {name}: {text[-400:]}")
    return int(used.group(1)), int(spill.group(1)) if spill else 0


def main() -> int:
    tm = _triton_moe()
    gemm1, gemm2 = tm._kernels()
    failed = 0
    for tokens, dtype in cases(tm):
        for which, kernel in (("gemm1", gemm1), ("gemm2", gemm2)):
            try:
                line, problems = compile_one(tm, kernel, which, tokens, dtype)
            except Exception as e:  # noqa: BLE001 - the compiler's own error is the report
                line, problems = f"{which} {dtype} tokens<={tokens}", [f"{type(e).__name__}: {e}"]
            print(line + (": " + "; ".join(problems) if problems else " ok"), flush=True)
            failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
