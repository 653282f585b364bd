"""What ptxas scheduled for every wgmma kernel of the GPU catalog (sm_90a): no instruction reads an accumulator
register of an HGMMA before the WARPGROUP.DEPBAR that retires it (axe4j_tools.sass). The interpreter runs TIR, before
ptxas, so this is the check that covers the compiler's side (docs/cuda-interp.md, "Found on a GPU")."""

import tvm  # noqa: F401  (before the JVM)

import pytest

import _gpu_cases
import axe4j
from axe4j_tools import sass
from axe4j_tools.cuda_corpus import build as corpus_build

# the small cases and, of the large ones (the timed sweep), the 8192x4096x4096 ones: one per tile configuration
WGMMA_CASES = [c for c in _gpu_cases.all_cases()
               if c.arch == "sm_90a" and c.name.split("/")[0] in ("wgmma", "hopper_gemm", "hopper_gemm_pipelined")
               and (c.size == "small" or "/8192x4096x4096" in c.name)]


def test_the_disassembler_is_installed():
    assert sass.tool("cuobjdump") is not None and sass.tool("nvdisasm") is not None


@pytest.mark.parametrize("case", WGMMA_CASES, ids=lambda c: c.name)
def test_no_accumulator_read_while_its_group_is_in_flight(case):
    axe4j.use_pip_nvcc()
    binary, _ = sass.cubin(corpus_build.cuda_source(case.build()), "sm_90a")
    instructions = sass.disassemble(binary)
    assert any(text.startswith(("HGMMA.", "QGMMA.")) for _, text in instructions), case.name
    assert sass.accumulator_reads_in_flight(instructions) == []
