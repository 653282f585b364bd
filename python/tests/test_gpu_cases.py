"""The catalog of GPU cases (``_gpu_cases``) is whole and consistent, without a GPU and without compiling a kernel:
unique names, arguments shaped as the kernels' parameters, expected outputs shaped as the outputs, and every GPU
test item of the kernel modules runs exactly the cases of one kernel (one case per arch the module compiles for)."""

import tvm  # noqa: F401  (before anything that could start the JVM)

import collections
import functools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import _gpu_cases

HERE = Path(__file__).resolve().parent

# Each GPU test and the case name its items run: "{id}" is the item's parameter id. The item runs the case of that
# name, or, when there is none, the one of "<name>/<arch>" whose arch is the device's (the test picks it at run
# time from the compute capability).
GPU_TESTS = {
    "test_cuda_corpus.py::test_results_match_numpy_on_the_gpu": "corpus/{id}",
    "test_cuda_dispatch.py::test_kernel_results_on_a_gpu": "dispatch/{id}",
    "test_cuda_dispatch.py::test_corpus_kernel_results_through_axe4j_on_a_gpu": "dispatch_corpus/{name}/{arch}",
    "test_cuda_mma.py::test_gemm_results_on_a_gpu": "mma/{id}",
    "test_cuda_wgmma.py::test_gemm_async_results_on_a_gpu": "wgmma/{id}",
    "test_cuda_tcgen05.py::test_results_on_a_gpu": "tcgen05/{id}",
    "test_cuda_register.py::test_register_kernel_results_on_a_gpu": "register/{id}",
    "test_cuda_async.py::test_copy_async_results_on_a_gpu": "async/{id}",
    "test_hopper_gemm.py::test_results_on_a_gpu": "hopper_gemm/{id}",
    "test_ampere_gemm.py::test_results_on_a_gpu": "ampere_gemm/{id}",
    "test_hopper_gemm_pipelined.py::test_results_on_a_gpu": "hopper_gemm_pipelined/{id}",
    "test_blackwell_gemm.py::test_results_on_a_blackwell_gpu": "blackwell_gemm/{id}",
    "test_moe_cuda.py::test_stage_results_on_a_gpu": "moe_cuda/{id}",
}
# GPU tests that run no compiled kernel of their own, hence no case: the cuBLAS harness's, and the whole MoE layer's
# (its three kernels are the moe_cuda stage cases).
NO_CASE = {"test_native_cublas.py::test_result_is_a_times_b_transposed",
           "test_native_cublas.py::test_inputs_from_files_are_multiplied", "test_moe_cuda.py::test_the_layer_on_a_gpu"}


@functools.cache
def _cases():
    return _gpu_cases.all_cases()


def _kernel_key(case):
    """The case's name without its arch: the cases of one key compile the same kernel."""
    head, _, tail = case.name.rpartition("/")
    return head if tail == case.arch else case.name


def _layout(arrays):
    return [(tuple(a.shape), str(a.dtype)) for a in arrays]


def test_names_are_unique_and_name_the_module_the_kernel_and_the_arch():
    names = [c.name for c in _cases()]
    assert len(set(names)) == len(names), [n for n, k in collections.Counter(names).items() if k > 1]
    prefixes = {template.split("/")[0] for template in GPU_TESTS.values()}
    for case in _cases():
        assert case.name.split("/")[0] in prefixes, case.name
        assert re.fullmatch(r"[A-Za-z0-9_./-]+", case.name), case.name
        last = case.name.rsplit("/", 1)[-1]
        assert not last.startswith("sm_") or last == case.arch, f"{case.name} is compiled for {case.arch}"
        assert str(case.target.arch) == case.arch, f"{case.name}: target {case.target}"


def test_arguments_match_the_kernel_parameters():
    """Shapes and dtypes of ``args()`` against the parameters of ``kernel()``, once per kernel (the cases of one
    kernel at several archs share it); outputs start as zeros. The large case's arguments are checked by shape only:
    making them takes seconds."""
    checked = {}
    for case in _cases():
        key = _kernel_key(case)
        if key not in checked:
            checked[key] = _gpu_cases.params(case.kernel())
        params = checked[key]
        assert all(0 <= i < len(params) for i in case.outputs) and case.outputs, f"{case.name}: outputs {case.outputs}"
        if case.size == "large":
            continue
        args = case.args()
        assert _layout(args) == params, f"{case.name}: args {_layout(args)}, kernel parameters {params}"
        for i in case.outputs:
            assert not np.any(args[i].astype("float32")), f"{case.name}: output {i} does not start as zeros"


def test_arguments_are_deterministic():
    for case in _cases()[::17]:
        if case.size == "small":
            first, second = case.args(), case.args()
            for a, b in zip(first, second):
                np.testing.assert_array_equal(a, b, err_msg=case.name)


def test_expected_outputs_have_the_output_shapes_and_dtypes_and_pass_the_check():
    for case in _cases():
        if case.size == "large":
            continue
        args = case.args()
        expected = case.expected(args)
        assert _layout(expected) == [_layout([args[i]])[0] for i in case.outputs], \
            f"{case.name}: expected {_layout(expected)}"
        _gpu_cases.check(case, expected, args)


def test_check_names_the_case_and_the_output_that_differ():
    case = next(c for c in _cases() if c.name.startswith("dispatch/add_cta_f32/"))
    args = case.args()
    wrong = [e.copy() for e in case.expected(args)]
    wrong[0][3, 5] += 1.0
    with pytest.raises(AssertionError, match=re.escape(f"{case.name} output 2")):
        _gpu_cases.check(case, wrong, args)
    exact = next(c for c in _cases() if c.check_exact)
    args = exact.args()
    wrong = [e.copy() for e in exact.expected(args)]
    wrong[0].flat[0] = np.nextafter(wrong[0].flat[0], np.float32(np.inf))
    with pytest.raises(AssertionError, match=re.escape(exact.name)):
        _gpu_cases.check(exact, wrong, args)


@pytest.mark.parametrize("version,arch", [("8.0", "sm_80"), ("8.6", "sm_80"), ("8.9", "sm_80"), ("9.0", "sm_90a"),
                                          ("10.0", "sm_100a"), ("10.3", None), ("12.0", None), ("7.5", None)])
def test_device_arch_follows_the_compute_capability(version, arch):
    assert _gpu_cases.device_arch(version) == arch


def _gpu_items():
    """The node ids of every gpu-marked test item, as pytest collects them."""
    files = sorted({key.split("::")[0] for key in GPU_TESTS} | {key.split("::")[0] for key in NO_CASE})
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "-m", "gpu",
                          *files], cwd=HERE, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if "::" in line]


def test_every_gpu_test_item_runs_the_cases_of_one_kernel_and_every_case_has_its_item():
    """The mapping: an item of a test in GPU_TESTS runs the case its template names, or, when no case has that
    name, the one case of that kernel compiled for the device's arch. Items of the modules that compile one arch
    only (wgmma, tcgen05, hopper_gemm) and of the corpus-through-axe4j test (one item per kernel and arch) map one to
    one; the others map to one case per arch."""
    names = {c.name: c for c in _cases()}
    covered = collections.Counter()
    per_test = collections.Counter()
    items = _gpu_items()
    for item in items:
        test, _, param = item.partition("[")
        test = test.split("/")[-1]
        param = param.rstrip("]")
        if test in NO_CASE:
            continue
        assert test in GPU_TESTS, f"gpu test {test} is not in the catalog's mapping"
        name_part, _, arch_part = param.rpartition("-")
        key = GPU_TESTS[test].format(id=param, name=name_part, arch=arch_part)
        runs = [key] if key in names else [n for n in names if n.rpartition("/")[0] == key
                                           and n.rpartition("/")[2] == names[n].arch]
        assert runs, f"{item}: no case named {key} or {key}/<arch>"
        assert len({names[n].arch for n in runs}) == len(runs), f"{item}: two cases of one arch: {runs}"
        covered.update(runs)
        per_test[test] += 1
    assert not [n for n, k in covered.items() if k > 1], "cases run by two items"
    assert set(covered) == set(names), f"cases no GPU test runs: {sorted(set(names) - set(covered))[:10]}"
    assert set(per_test) == set(GPU_TESTS), f"gpu tests without items: {set(GPU_TESTS) - set(per_test)}"
    assert sum(per_test.values()) + len(NO_CASE) == len(items)


def test_a_gpu_test_picks_the_case_of_the_device_arch_or_skips(monkeypatch):
    monkeypatch.setattr(_gpu_cases, "device_arch", lambda compute_version=None: "sm_90a")
    assert _gpu_cases.for_device(_cases(), "dispatch/add_cta_f32").name == "dispatch/add_cta_f32/sm_90a"
    assert _gpu_cases.for_device(_cases(), "wgmma/wgmma_64x64x32_sw64").arch == "sm_90a"
    with pytest.raises(pytest.skip.Exception, match="is sm_100a code; this GPU runs sm_90a"):
        _gpu_cases.for_device(_cases(), "tcgen05/tcgen05_128x128x64_sw128")
    monkeypatch.setattr(_gpu_cases, "device_arch", lambda compute_version=None: "sm_80")
    assert _gpu_cases.for_device(_cases(), "mma/mma_16x8x16_f16").arch == "sm_80"
    with pytest.raises(pytest.skip.Exception, match="compiled for sm_100a, sm_90a; this GPU runs sm_80"):
        _gpu_cases.for_device(_cases(), "register/copy_cta_warpid_f16")
