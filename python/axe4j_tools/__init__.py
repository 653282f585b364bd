"""Tooling around axe4j, apart from the runtime package ``axe4j``: what tests, benchmarks and reports use, never
what a compiled kernel needs.

- ``axe4j_tools.cuda_corpus``: the CUDA tile-op corpus (kernels, their inputs, builds with TVM's or axe4j's cases)
- ``axe4j_tools.nki_executor``: runs generated NKI with numpy under Trainium's limits (a test harness)
- ``axe4j_tools.nki_namespace``: rewrites TVM's NKI to the current ``nki.*`` namespace for that executor
- ``axe4j_tools.sass``: reads ptxas's SASS of a cubin (ordering checks)
- ``axe4j_tools.chart``: PNG charts without matplotlib (benchmark reports)
- ``axe4j_tools.mesh_peers``: the peers of ``make bench-mesh`` (XLA GSPMD through JAX, DTensor's per-dim order)
- ``axe4j_tools.fuzz``: the differential fuzzer of random tile programs against numpy (``make fuzz``, docs/fuzzing.md)
"""
