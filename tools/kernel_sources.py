"""The generated CUDA source (and PTX) of the GPU bundle's kernels, to check that a change to a kernel's Python leaves
the code it generates byte for byte the same.

Each case is compiled alone for its target as the GPU bundle compiles it (``tools/gpu_bundle.py``: catalog cases
with ``axe4j.compile``, or TVM's own dispatch for the ``corpus/`` cases; the MoE layer's kernels with
``axe4j.compile`` for ``axe4j.moe.cuda.target()``), under the bundle's exported symbol, and its CUDA source is written
to ``OUT/<case>.cu``; with the ``nvidia-cuda-nvcc`` wheel's nvcc (``axe4j._cuda.pip_nvcc``) also ``OUT/<case>.ptx``
(``nvcc -ptx -arch=<case arch>``; ``--no-ptx`` skips it). ``OUT/digests.json`` maps each case to the sha256 of its
files. ``<case>`` is the case name with ``/`` as ``__`` (``gpu_bundle.file_stem``).

Compiling all 425 catalog cases and the bundle's 78 MoE kernels and 24 FP8 MoE kernels, with PTX, takes about 15-20
minutes on a 2-core machine (1-3 s a kernel), longer than a check should, so the default set (102 kernels, about 4
minutes) is: every Hopper GEMM (``hopper_gemm/``), pipelined Hopper GEMM (``hopper_gemm_pipelined/``: the small cases
and one large shape per tile configuration of the sweep, plus the fused 128x256), Blackwell GEMM (``blackwell_gemm/``),
Ampere GEMM and CUDA MoE (``moe_cuda/``) case of the catalog; the MoE bundle kernels at 16 and 4096 tokens (FP16 and
BF16, three-kernel and fused forms, and the four kernels of the FP8 experts), one (BN1, BN2) variant and the fused
kernel's (tickets, reset) variants at 256 tokens; and the first two cases of every other catalog module (a sample of
the emitters' output). ``--all`` takes every case; ``--cases PATTERN...`` (fnmatch on case names, e.g.
``'hopper_gemm*'``) takes those matching among all of them.

The TVMScript parser reads a kernel's Python source when the kernel is built: do not edit the sources while this
runs (take the baseline from an exported copy of the commit instead).

usage: kernel_sources.py [--out DIR] [--cases PATTERN ...] [--all] [--no-ptx] [--list]
       kernel_sources.py --compare DIR_A DIR_B      (exit 1 when any case differs or is missing from one side)
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "python" / "tests"
KERNEL_MODULES = ("hopper_gemm", "hopper_gemm_pipelined", "blackwell_gemm", "ampere_gemm", "moe_cuda")
SAMPLE_PER_MODULE = 2
LARGE_SHAPE = "4096x4096x4096"          # the large pipelined GEMM shape sampled for each tile configuration
MOE_TOKENS = (16, 4096)
MOE_VARIANT = (64, 128)                 # (BN1, BN2), BF16, at MOE_TOKENS[0]
MOE_FUSED_VARIANTS = ((True, False), (False, False))   # (tickets, reset), BF16, at 256 tokens


def log(message: str) -> None:
    print(f"[kernel-sources] {message}", file=sys.stderr, flush=True)


def _setup():
    sys.path.insert(0, str(ROOT / "python"))
    sys.path.insert(0, str(TESTS))
    sys.path.insert(0, str(ROOT / "tools"))
    import tvm  # noqa: F401  (TVM before the JVM)

    import axe4j

    axe4j.install()


# ---- the cases ----------------------------------------------------------------------------------------------------

class Source:
    """One kernel to compile: ``name`` (unique), ``arch`` and ``compile()`` -> its CUDA source."""

    def __init__(self, name, arch, compile_fn):
        self.name, self.arch, self.compile = name, arch, compile_fn


def _catalog_sources():
    import _gpu_cases
    import gpu_bundle

    out = []
    for case in _gpu_cases.all_cases():
        def compile_fn(case=case):
            from axe4j_tools.cuda_corpus import build as corpus_build

            executable = gpu_bundle.compile_group([case], gpu_bundle.lowering(case), case.target)
            return corpus_build.cuda_source(executable)
        out.append(Source(case.name, case.arch, compile_fn))
    return out


def _moe_sources():
    """The MoE kernels of the GPU bundle (``gpu_bundle.compile_moe``), named by their bundle symbols."""
    import gpu_bundle

    def one(symbol, make):
        def compile_fn():
            import tvm

            import axe4j
            from axe4j.moe import cuda
            from axe4j_tools.cuda_corpus import build as corpus_build

            func = make().with_attr("global_symbol", symbol)
            return corpus_build.cuda_source(axe4j.compile(tvm.IRModule({symbol: func}), cuda.target()))
        return Source(f"moe/{symbol}", "sm_90a", compile_fn)

    def kernel_of(tokens, dtype, bn1=128, bn2=128, fused=False, name=None):
        def make():
            from axe4j.moe import QWEN3_30B_A3B, cuda

            return cuda.kernels(QWEN3_30B_A3B, tokens, bn1, bn2, dtype=dtype, fused=fused)[name]
        return make

    def fused_of(tokens, tickets, reset):
        def make():
            from axe4j.moe import QWEN3_30B_A3B
            from axe4j.moe.cuda_kernels import ROWS, experts_kernel
            from axe4j.moe.schedule import TileSchedule

            shape = QWEN3_30B_A3B
            max_tiles = TileSchedule.max_tiles(tokens * shape.top_k, shape.experts, ROWS)
            return experts_kernel(shape, tokens, max_tiles, 128, 128, "bfloat16", tickets, reset)
        return make

    def fp8_of(tokens, name):
        def make():
            from axe4j.moe import QWEN3_30B_A3B, cuda_fp8

            return cuda_fp8.kernels(QWEN3_30B_A3B, tokens, dtype="bfloat16")[name]
        return make

    out = []
    for dtype, short in (("float16", "f16"), ("bfloat16", "bf16")):
        for tokens in gpu_bundle.MOE_TOKENS:
            for name in ("gemm1", "gemm2", "combine"):
                out.append(one(f"moe_{name}_{tokens}_tokens_{short}", kernel_of(tokens, dtype, name=name)))
            out.append(one(f"moe_experts_{tokens}_tokens_{short}", kernel_of(tokens, dtype, fused=True,
                                                                              name="experts")))
    for bn1, bn2 in gpu_bundle.MOE_VARIANTS:
        for tokens in gpu_bundle.MOE_VARIANT_TOKENS:
            for name in ("gemm1", "gemm2", "combine"):
                out.append(one(f"moe_{name}_{tokens}_tokens_bf16_bn{bn1}x{bn2}",
                               kernel_of(tokens, "bfloat16", bn1, bn2, name=name)))
    for tickets, reset in gpu_bundle.MOE_FUSED_VARIANTS:
        for tokens in gpu_bundle.MOE_FUSED_VARIANT_TOKENS:
            tag = f"{tokens}_tokens_bf16_{'tickets' if tickets else 'block_order'}_{'reset' if reset else 'no_reset'}"
            out.append(one(f"moe_experts_{tag}", fused_of(tokens, tickets, reset)))
    for tokens in gpu_bundle.moe_fp8_tokens("full"):   # the FP8 library (gpu_bundle.compile_moe_fp8)
        for name in ("quantise_x", "gemm1", "quantise_h", "gemm2"):
            out.append(one(f"moe_fp8_{name}_{tokens}_tokens_bf16", fp8_of(tokens, name)))
    return out


def _default(source) -> bool:
    name = source.name
    if name.startswith("moe/"):
        symbol = name[len("moe/"):]
        short = ("_tokens_f16", "_tokens_bf16")
        if any(symbol.endswith(f"_{t}{s}") for t in MOE_TOKENS for s in short):
            return True
        if symbol.endswith(f"_{MOE_TOKENS[0]}_tokens_bf16_bn{MOE_VARIANT[0]}x{MOE_VARIANT[1]}"):
            return True
        return any(symbol == f"moe_experts_256_tokens_bf16_{'tickets' if t else 'block_order'}_"
                              f"{'reset' if r else 'no_reset'}" for t, r in MOE_FUSED_VARIANTS)
    module = name.split("/")[0]
    shape = name.split("/")[1].split("_")[0] if "/" in name else ""
    if module == "hopper_gemm_pipelined" and shape.count("x") == 2:   # the large sweep: one shape of each config
        return shape == LARGE_SHAPE or name.endswith("_fused")
    return module in KERNEL_MODULES


def select(sources, patterns, everything):
    if patterns:
        return [s for s in sources if any(fnmatch.fnmatchcase(s.name, p) for p in patterns)]
    if everything:
        return sources
    chosen, per_module = [], {}
    for source in sources:
        module = source.name.split("/")[0]
        if _default(source):
            chosen.append(source)
        elif module != "moe" and per_module.get(module, 0) < SAMPLE_PER_MODULE:
            per_module[module] = per_module.get(module, 0) + 1
            chosen.append(source)
    return chosen


# ---- writing ------------------------------------------------------------------------------------------------------

def file_stem(name: str) -> str:
    import gpu_bundle

    return gpu_bundle.file_stem(name)


def nvcc_path():
    try:
        from axe4j._cuda import pip_nvcc

        return pip_nvcc()
    except Exception:  # noqa: BLE001  (no wheel: no PTX)
        return None


def ptx(nvcc, source: str, arch: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        cu, out = Path(folder) / "kernel.cu", Path(folder) / "kernel.ptx"
        cu.write_text(source)
        command = [str(nvcc), "-ptx", f"-arch={arch}", "-O3", "-o", str(out), str(cu)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"nvcc -ptx failed ({done.returncode}): {done.stderr[-2000:]}")
        return out.read_text()


def write(out: Path, sources, with_ptx: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    nvcc = nvcc_path() if with_ptx else None
    if with_ptx and nvcc is None:
        log("no nvcc from the nvidia-cuda-nvcc wheel: CUDA sources only")
    digests, failed, started = {}, {}, time.time()
    for i, source in enumerate(sources):
        t = time.time()
        try:
            code = source.compile()
        except Exception as error:  # noqa: BLE001  (record it, go on)
            failed[source.name] = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
            log(f"{source.name}: does not compile: {failed[source.name]}")
            continue
        stem = file_stem(source.name)
        (out / f"{stem}.cu").write_text(code)
        entry = {"arch": source.arch, "cu": hashlib.sha256(code.encode()).hexdigest()}
        if nvcc is not None:
            text = ptx(nvcc, code, source.arch)
            (out / f"{stem}.ptx").write_text(text)
            entry["ptx"] = hashlib.sha256(text.encode()).hexdigest()
        digests[source.name] = entry
        log(f"[{i + 1}/{len(sources)}] {source.name}: {time.time() - t:.1f} s")
    (out / "digests.json").write_text(json.dumps({"cases": digests, "failed": failed}, indent=1, sort_keys=True) + "\n")
    log(f"wrote {len(digests)} kernels to {out} in {time.time() - started:.0f} s; {len(failed)} failed")
    return 1 if failed else 0


# ---- comparing ----------------------------------------------------------------------------------------------------

def _sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def compare(a: Path, b: Path, head: int = 40) -> int:
    """Prints the cases whose files (hashed afresh, not read from ``digests.json``) differ between two outputs (a
    unified diff head of each), the cases only one side has, and a summary line; 1 when anything differs, else 0."""
    da = json.loads((a / "digests.json").read_text())["cases"]
    db = json.loads((b / "digests.json").read_text())["cases"]
    same, differ = [], []
    for name in sorted(set(da) | set(db)):
        if name not in da or name not in db:
            print(f"ONLY IN {a if name in da else b}: {name}")
            differ.append(name)
            continue
        stem = file_stem(name)
        kinds = [k for k in ("cu", "ptx") if k in da[name] and k in db[name]
                 and _sha(a / f"{stem}.{k}") != _sha(b / f"{stem}.{k}")]
        if not kinds:
            same.append(name)
            continue
        differ.append(name)
        print(f"DIFFERS: {name} ({', '.join(kinds)})")
        kind = kinds[0]
        left = (a / f"{stem}.{kind}").read_text().splitlines(keepends=True)
        right = (b / f"{stem}.{kind}").read_text().splitlines(keepends=True)
        diff = list(difflib.unified_diff(left, right, f"{a}/{stem}.{kind}", f"{b}/{stem}.{kind}"))
        sys.stdout.writelines(diff[:head])
        if len(diff) > head:
            print(f"... ({len(diff) - head} more diff lines)")
    print(f"{len(same)} identical, {len(differ)} differ")
    return 1 if differ else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "kernel-sources")
    parser.add_argument("--cases", nargs="+", metavar="PATTERN", help="fnmatch patterns on case names")
    parser.add_argument("--all", action="store_true", help="every catalog case and every MoE bundle kernel")
    parser.add_argument("--no-ptx", action="store_true", help="CUDA sources only")
    parser.add_argument("--list", action="store_true", help="print the selected case names and stop")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"))
    args = parser.parse_args(argv)
    if args.compare:
        sys.path.insert(0, str(ROOT / "tools"))
        return compare(*args.compare)
    _setup()
    sources = select(_catalog_sources() + _moe_sources(), args.cases, args.all)
    if args.list:
        print("\n".join(s.name for s in sources))
        return 0
    if not sources:
        log("no case matches")
        return 2
    return write(args.out.resolve(), sources, not args.no_ptx)


if __name__ == "__main__":
    sys.exit(main())
