"""The default mode never hands a call to one of TVM's CUDA cases that is not proven right for it
(``axe4j.upstream``), and a refusal leads somewhere: its first line names the call, its scope and target, and each
operand's storage and layout; the reasons say what to write instead (``axe4j._refusal``, the rules' reasons)."""

import tvm  # noqa: F401  (before the JVM)

import os

import numpy as np
import pytest
from tvm.script import tirx as T
from tvm.tirx.layout import R, S, TileLayout, laneid
from tvm.tirx.script import tile as Tx

import axe4j
from axe4j import upstream

SM90 = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}, host="llvm")


def _header():
    T.device_entry()
    T.cta_id([1])
    T.warp_id([1])
    T.lane_id([32])
    T.thread_id([32])


def _exchange(dispatch=None):
    """r (lane l holds element l) -> s (lane l holds elements 2l % 32 ...): an exchange between lanes."""

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (32,), "float32")
        B = T.match_buffer(B_ptr, (32,), "float32")
        _header()
        r = T.alloc_buffer((32,), "float32", scope="local", layout=TileLayout(S[32:1 @ laneid]))
        s = T.alloc_buffer((32,), "float32", scope="local", layout=TileLayout(S[(2, 16):(1 @ laneid, 2 @ laneid)]))
        Tx.warp.copy(r[:], A[:])
        Tx.warp.copy(s[:], r[:], dispatch=dispatch)
        Tx.warp.copy(B[:], s[:])

    return kernel


def _quiet(kernel):
    return axe4j.explain(kernel, SM90, file=open(os.devnull, "w"))


def test_a_call_only_unproven_tvm_cases_take_is_refused_naming_call_operands_and_way_forward():
    with pytest.raises(axe4j.DispatchRefused) as refused:
        axe4j.compile(_exchange(), SM90)
    message = str(refused.value)
    first = message.splitlines()[0]
    assert first == ("no dispatch case lowers T.warp.copy(s[0:32], r[0:32]) (warp scope, cuda): "
                     "s local S[(2,16):(1@laneid,2@laneid)], r local S[32:1@laneid]"), first
    assert "axe4j's rules declined it:" in message
    assert "copy r to a shared tile, sync the scope, then copy that tile to s" in message
    assert "fallback (prio=0): fallback: not run in axe4j's default mode: TVM's copy/fallback is not proven right " \
           "for any call" in message
    assert message.splitlines()[-1] == "(TIRx schedule dispatch failed: op=tirx.tile.copy target=cuda)"
    report = _quiet(_exchange())
    assert "  REFUSED: no axe4j rule accepts this call, and none of TVM's own cases" in report


def test_strict_mode_and_a_named_case_are_as_before():
    with pytest.raises(axe4j.StrictError, match="fallback"):
        axe4j.compile(_exchange(), SM90, strict=True)
    executable = axe4j.compile(_exchange(dispatch="fallback"), SM90)   # the kernel names the case: it runs
    assert [r.variant for r in executable.lowered] == ["axe4j-cuda-register", "fallback", "axe4j-cuda-register"]


def test_tvms_case_runs_where_proven_right_and_explain_says_which():
    from test_first_hour import _prefetched_copy

    report = _quiet(_prefetched_copy())
    assert "FALLBACK: no axe4j rule accepts this call; of TVM's own cases only those proven right for it may lower " \
           "it: ldgsts (TVM's copy_async/ldgsts is proven right for global -> shared" in report
    executable = axe4j.compile(_prefetched_copy(), SM90)
    assert [r.variant for r in executable.lowered] == ["ldgsts", "axe4j-cuda-vector"]


def test_every_proof_names_a_case_tvm_has():
    from axe4j import _tvm_internals

    axe4j.install()
    axe4j.dispatch.register()
    table = {(str(op.name).split(".")[-1], v.variant) for (op, kind), cases in _tvm_internals.dispatch_table().items()
             if kind == "cuda" for v in cases}
    for proof in upstream.PROOFS:
        for op in proof.ops:
            assert (op, proof.variant) in table, (op, proof.variant)
    assert upstream.proof_for("copy", "fallback") is None
    assert upstream.proof_for("copy", "ldstmatrix") is None


def _crossing_copy():
    """A shared tile <- a (64,) global view S[(8,8):(1,8)] at [4, 36): the region crosses the inner digit."""

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (64,), "float32")
        B = T.match_buffer(B_ptr, (32,), "float32")
        _header()
        At = T.decl_buffer((64,), "float32", data=A.data, layout=TileLayout(S[(8, 8):(1, 8)]))
        s = T.alloc_buffer((32,), "float32", scope="shared", layout=TileLayout(S[32]))
        Tx.warp.copy(s[:], At[4:36])
        Tx.warp.copy(B[:], s[:])

    return kernel


def test_a_region_across_a_digit_names_the_regions_to_use():
    report = _quiet(_crossing_copy())
    assert "region [4, 36) of dim 0 crosses a digit of extent 8 (stride 8) part way: use the regions [4, 8) [8, 32) " \
           "[32, 36) of the dim, each inside whole digits, or one that starts at a multiple of 8" in report


def _run_time_copy(bound):
    """B[i] <- At[5i + 3 : 5i + 35] of a (128,) global view S[(16,8):(1,16)], the start bound as written."""

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (128,), "float32")
        B = T.match_buffer(B_ptr, (4, 32), "float32")
        _header()
        At = T.decl_buffer((128,), "float32", data=A.data, layout=TileLayout(S[(16, 8):(1, 16)]))
        for i in T.serial(4):
            Tx.warp.copy(B[i, :], At[5 * i + 3:5 * i + 35])

    return kernel


def test_a_run_time_start_that_may_cross_a_digit_names_the_multiple_and_meta_var():
    report = _quiet(_run_time_copy(None))
    assert "may cross digit" in report
    assert "a start that is a multiple of" in report and "bind it with T.meta_var(...)" in report, report


def _register_sum_into_memory():
    """A warp sums the rows of a register tile straight into global memory."""
    src = TileLayout(S[(8, 4, 4):(4 @ laneid, 1 @ laneid, 1)])

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (8, 16), "float32")
        B = T.match_buffer(B_ptr, (8,), "float32")
        _header()
        r = T.alloc_buffer((8, 16), "float32", scope="local", layout=src)
        Tx.warp.copy(r[:, :], A[:, :])
        Tx.warp.sum(B[:], r[:, :], [1], False)

    return kernel


def test_a_register_reduction_into_memory_names_the_tile_to_reduce_into():
    with pytest.raises(axe4j.DispatchRefused) as refused:
        axe4j.compile(_register_sum_into_memory(), SM90)
    message = str(refused.value)
    assert message.splitlines()[0].startswith("no dispatch case lowers T.warp.sum(B[0:8], r[0:8, 0:16]")
    assert "B global" in message.splitlines()[0] and "r local S[(8,4,4):(4@laneid,1@laneid,1)]" in message
    assert "reduce into a local tile of shape [8] on the source's threads" in message
    assert "then copy that tile to B" in message


def test_the_reduction_the_way_forward_describes_compiles_and_is_right():
    src = TileLayout(S[(8, 4, 4):(4 @ laneid, 1 @ laneid, 1)])
    dst = TileLayout(S[(8,):(4 @ laneid,)] + R[4:1 @ laneid])

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (8, 16), "float32")
        B = T.match_buffer(B_ptr, (8,), "float32")
        _header()
        r = T.alloc_buffer((8, 16), "float32", scope="local", layout=src)
        s = T.alloc_buffer((8,), "float32", scope="local", layout=dst)
        Tx.warp.copy(r[:, :], A[:, :])
        Tx.warp.sum(s[:], r[:, :], [1], False)
        Tx.warp.copy(B[:], s[:])

    executable = axe4j.compile(kernel, SM90)
    a = np.random.default_rng(7).standard_normal((8, 16)).astype("float32")
    b = np.zeros(8, "float32")
    axe4j.cuda.interp.run(executable, a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_explain_says_the_calls_after_a_refused_one_were_not_reached():
    """The scope's threads are known only to a dispatch that reached a call: the calls after the refused exchange
    are not judged (they were said to be declined for "0 active threads")."""
    report = _quiet(_exchange())
    after = report.split("main #2:")[1]
    assert "not reached: TVM's dispatch stopped at an earlier call" in after, after
    assert "0 active threads" not in report, report
    assert report.splitlines()[-1].startswith("TVM's dispatch stops here:")
