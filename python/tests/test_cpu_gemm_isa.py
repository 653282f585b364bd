"""The blocked CPU GEMM planned and compiled for an AVX2 and for an AVX-512 target.

Plans and code are checked for both targets on any machine; kernels run only where this machine has the ISA
(``/proc/cpuinfo`` flags), on small-integer inputs so that every fp32 sum is exact and the result must equal
numpy's bit for bit.
"""

import io

import numpy as np
import pytest
import tvm
from tvm.script import tirx as T
from tvm.tirx.script import tile as Tx

import axe4j
from _asm import innermost_fma_loop
from axe4j.cpu import target as cpu_target

pytestmark = pytest.mark.strict   # the product's own kernels: a fallback or a narrowed plan fails

AVX2 = {"kind": "llvm", "mcpu": "haswell"}
AVX512 = {"kind": "llvm", "mcpu": "skylake-avx512"}

# what each target's code executes: the cpuinfo flags it needs
NEEDS = {"haswell": {"avx2", "fma", "bmi2", "f16c"},
         "skylake-avx512": {"avx2", "fma", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"}}


def host_flags() -> set[str]:
    try:
        return set(next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split(":", 1)[1].split())
    except (OSError, StopIteration):
        return set()


def runs_here(target) -> bool:
    return NEEDS[target["mcpu"]] <= host_flags()


def gemm_kernel(m, n, k, trans_b=False, beta=0.0):
    b_shape = (n, k) if trans_b else (k, n)

    @T.prim_func
    def gemm(A: T.Buffer((m, k), "float32"), B: T.Buffer(b_shape, "float32"), C: T.Buffer((m, n), "float32"),
             D: T.Buffer((m, n), "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, trans_b, T.float32(1.0), T.float32(beta))

    return gemm, b_shape


def explain(kernel, target) -> str:
    return axe4j.explain(kernel, tvm.target.Target(target), file=io.StringIO())


# (M, N, K, trans_b, beta): full tiles, ragged edges on every dim, K over several blocks, one row, 8 rows with B
# transposed, beta * C added; up to 8 rows with B stride-1 along n (the row kernel on AVX-512): one row over a ragged
# chunk (100 = 6 vectors + 4), one row over two page-wide chunks, 8 rows with beta, 4 rows, 2 rows over
# four chunks in parallel, one row over chunks two pages wide and a ragged one (4200 = 2 x 2048 + 104)
SHAPES = [(64, 96, 80, False, 0.0), (37, 50, 29, False, 0.0), (45, 70, 600, False, 1.0), (1, 100, 70, False, 0.0),
          (8, 200, 33, True, 0.0), (130, 33, 17, True, 2.0), (1, 2048, 70, False, 0.0), (8, 64, 1100, False, 1.0),
          (4, 96, 64, False, 0.0), (2, 4096, 64, False, 0.0), (1, 4200, 40, False, 0.0)]


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2-haswell", "avx512-skylake"])
@pytest.mark.parametrize("m,n,k,trans_b,beta", SHAPES)
def test_blocked_gemm_is_exact_on_small_integers(target, m, n, k, trans_b, beta):
    if not runs_here(target):
        pytest.skip(f"this CPU lacks {sorted(NEEDS[target['mcpu']] - host_flags())} for {target['mcpu']}")
    kernel, b_shape = gemm_kernel(m, n, k, trans_b, beta)
    assert "axe4j-cpu-gemm-blocked (prio=10): accepted <- chosen" in explain(kernel, target)
    rng = np.random.default_rng(m * 1000 + n + k)
    a = rng.integers(-3, 4, (m, k)).astype("float32")
    b = rng.integers(-3, 4, b_shape).astype("float32")
    c = rng.integers(-5, 6, (m, n)).astype("float32")
    lib = axe4j.compile(kernel, tvm.target.Target(target))
    ts = [tvm.runtime.tensor(x) for x in (a, b, c, np.zeros((m, n), "float32"))]
    lib(*ts)
    expected = a.astype(np.int64) @ (b.T if trans_b else b).astype(np.int64) + int(beta) * c.astype(np.int64)
    np.testing.assert_array_equal(ts[3].numpy(), expected.astype("float32"))


def test_the_plan_differs_between_avx2_and_avx512_in_explain():
    kernel, _ = gemm_kernel(512, 512, 512)
    narrow, wide = explain(kernel, AVX2), explain(kernel, AVX512)
    assert "register tile 6x16 vector dim n, K block 256, 48-row blocks" in narrow
    assert "register tile 6x16 (AVX2 haswell: 16 ymm registers, 8 32-bit lanes" in narrow
    assert "register tile 8x32 vector dim n" in wide
    assert "register tile 8x32 (AVX-512: 32 zmm registers, 16 32-bit lanes" in wide
    assert "zmm" not in narrow


def test_up_to_eight_avx512_rows_take_the_row_kernel_and_the_avx2_plan_packs_them():
    kernel, _ = gemm_kernel(8, 4096, 256)
    wide, narrow = explain(kernel, AVX512), explain(kernel, AVX2)
    assert "row kernel, vector dim n, 1024-column chunks, parallel=True" in wide
    assert "register tile 6x16 vector dim n" in narrow and "B packed per K block" in narrow
    kernel, _ = gemm_kernel(9, 4096, 256)
    assert "register tile 8x32 vector dim n" in explain(kernel, AVX512)


def test_plain_llvm_keeps_the_avx2_plan():
    kernel, _ = gemm_kernel(128, 96, 64)
    report = axe4j.explain(kernel, "llvm", file=io.StringIO())
    assert "register tile 6x16 vector dim n, K block 64, 48-row blocks, parallel=True" in report
    assert "SSE: no AVX-512, so the AVX2 plan" in report


def test_avx512_code_keeps_sixteen_zmm_accumulators_in_registers_and_avx2_code_uses_no_zmm():
    """Compiled only (any machine): the AVX-512 micro-kernel's FMAs take zmm registers and no accumulator goes
    through the stack between them (one stack array per tile row; one 8 x 32 array stayed in memory)."""
    kernel, _ = gemm_kernel(256, 256, 256)
    wide = axe4j.compile(kernel, tvm.target.Target(AVX512)).mod.inspect_source("asm")
    fmas = [line for line in wide.splitlines() if "vfmadd231ps" in line and "zmm" in line]
    register_only = [line for line in fmas if "(" not in line.split("#")[0]]
    assert len(register_only) >= 16, fmas[:20]
    prefetches = [line for line in wide.splitlines() if "prefetchw" in line]
    assert prefetches, "the D tile is prefetched for writing"
    # one line every few K steps, from a loop: the tile's 16 lines asked at once held the line-fill buffers the
    # first FMAs' loads needed (4096^3 on one core 146 -> 164 GFLOP/s spread; docs/cpu-dispatch.md)
    assert len(prefetches) < 16, f"{len(prefetches)} prefetchw: the D tile's lines are asked for all at once"
    narrow = axe4j.compile(kernel, tvm.target.Target(AVX2)).mod.inspect_source("asm")
    assert "zmm" not in narrow and "vfmadd231ps" in narrow


def test_the_target_isa_comes_from_mcpu_and_mattr():
    assert cpu_target.isa_of(tvm.target.Target(AVX512))[:3] == ("avx512", 512, 32)
    assert cpu_target.isa_of(tvm.target.Target(AVX2)) == ("avx2", 256, 16)
    assert cpu_target.isa_of(tvm.target.Target({**AVX512, "mattr": ["-avx512f"]}))[0] == "avx2"
    assert cpu_target.isa_of(tvm.target.Target("llvm"))[0] == "sse"


def test_cache_sizes_are_read_from_sysfs_and_default_where_absent(tmp_path):
    for name, (level, kind, size) in {"index0": (1, "Data", "48K"), "index1": (1, "Instruction", "32K"),
                                      "index2": (2, "Unified", "2048K"), "index3": (3, "Unified", "30M")}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "level").write_text(f"{level}\n")
        (tmp_path / name / "type").write_text(f"{kind}\n")
        (tmp_path / name / "size").write_text(f"{size}\n")
    assert cpu_target.cache_bytes(tmp_path) == {"l1d": 48 * 1024, "l2": 2048 * 1024}
    assert cpu_target.cache_bytes(tmp_path / "absent") == cpu_target.DEFAULT_CACHE_BYTES



@pytest.mark.parametrize("mcpu", ["znver4", "skylake-avx512"])
def test_the_row_kernel_scales_each_u_value_once_per_pass_not_per_column_vector(mcpu):
    """Compiled for the -mcpu (any machine), run where this machine has AVX-512: at 1 x 4096 x 4096 with alpha = 1.5
    the row kernel's column loop holds only V loads, FMAs and D's load and store: alpha * U[u, k] is bound before
    it. Unbound, LLVM (unable to tell D's stores from U) reloaded, rescaled and rebroadcast the 4 factors of a pass
    for each 16-column vector: 4 vmulss and 4 vbroadcastss per 4 FMAs."""
    m, n, k = 1, 4096, 4096

    @T.prim_func
    def gemm(A: T.Buffer((m, k), "float32"), B: T.Buffer((k, n), "float32"), C: T.Buffer((m, n), "float32"),
             D: T.Buffer((m, n), "float32")):
        Tx.gemm(D[:, :], A[:, :], B[:, :], C[:, :], False, False, T.float32(1.5), T.float32(0.0))

    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu})
    assert "row kernel" in axe4j.explain(gemm, target, file=io.StringIO())
    lib = axe4j.compile(gemm, target)
    loop = innermost_fma_loop(lib.mod.inspect_source("asm"))
    fmas = [line for line in loop if "vfmadd" in line and "zmm" in line]
    assert len(fmas) >= 4 and not [line for line in loop if "vmulss" in line or "vbroadcastss" in line], loop
    if not runs_here(AVX512):
        return
    rng = np.random.default_rng(4)
    a = rng.integers(-3, 4, (m, k)).astype("float32")
    b = rng.integers(-3, 4, (k, n)).astype("float32")
    ts = [tvm.runtime.tensor(x) for x in (a, b, np.zeros((m, n), "float32"), np.zeros((m, n), "float32"))]
    lib(*ts)
    np.testing.assert_array_equal(ts[3].numpy(), (1.5 * (a.astype(np.int64) @ b.astype(np.int64))).astype("float32"))


@pytest.mark.parametrize("row_stride,width,base", [(1024, 32, 0), (1000, 32, 0), (1001, 32, 0), (4096, 32, 0),
                                                   (1000, 8, 0), (1024, 32, 8), (72, 24, 0), (1024, 32, None)])
def test_the_d_tile_prefetches_cover_every_line_its_rows_touch(row_stride, width, base):
    """Enumerated: for rows at every start a row stride gives (and a base off a line, or one known only at run
    time), the lines of the prefetched columns hold every line of the row's elements. N = 1000 fp32 rows start 32
    bytes into a line every other row and span three lines; prefetching two left the third to a cache miss."""
    from axe4j.cpu.gemm_blocked import prefetch_columns

    line = 16   # fp32 elements in 64 bytes
    columns = prefetch_columns(row_stride, width, line, base if base is not None else tvm.tirx.Var("b", "int32"))
    assert all(0 <= c < width for c in columns), columns
    for start_base in ([base] if base is not None else range(line)):
        for row in range(2 * line):
            start = start_base + row * row_stride
            touched = {(start + j) // line for j in range(width)}
            asked = {(start + c) // line for c in columns}
            assert touched <= asked, (row_stride, width, start_base, row, sorted(touched - asked))
    if row_stride % line == 0 and base == 0:
        assert len(columns) == -(-width // line), "aligned rows: one prefetch a line, none more"
