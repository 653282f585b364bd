# axe4j: two commands matter — `make demo` and `make test` (see README.md).
MVN ?= mvn
MVNFLAGS ?= -B --no-transfer-progress
SHELL := /bin/bash

.PHONY: demo test soak fuzz build python wheel bench-layout bench-call bench-tirx bench-cpu clean

## Build the jars (no tests); .venv first, as tvm-runtime-natives copies TVM's runtime libraries from it.
build: python
	$(MVN) $(MVNFLAGS) -q -DskipTests package

## The pip wheel, python/dist/axe4j-<version>-py3-none-any.whl: the axe4j package with the jars install() needs
## (docs/wheel.md). `make test` builds it and runs it in a fresh venv without a JDK (ci/test-wheel.sh).
wheel: build
	.venv/bin/python tools/build_wheel.py

## Python virtual environment with the pinned TVM stack (idempotent; seconds when up to date).
python:
	bash ci/setup-python.sh

## The new TIRx lane's virtual environment .venv-tirx: apache-tvm-tirx pinned (ci/requirements-tirx.txt), this checkout's
## python/ on its path; a venv of its own, as tvm_tirx and apache-tvm 0.27 cannot share a process (docs/tvm-versions.md).
.PHONY: python-tirx
python-tirx:
	bash ci/setup-tirx.sh

## Set up everything from a fresh clone, then run the paper's examples.
demo: python build
	bin/axe demo
	.venv/bin/python examples/bridge_demo.py
	.venv/bin/python examples/cpu_kernel_demo.py
	.venv/bin/python examples/cuda_kernel_demo.py

## Every test: Java (JUnit) and Python.
test:
	bash ci/test.sh

## Long runs: 100,000 fuzzed batch requests, bin/axe under hostile input, TVM functions from 8 threads (core dumps on),
## 100,000 random tile programs against numpy (the differential fuzzer, SOAK_PROGRAMS).
soak:
	bash tools/soak.sh

## The differential fuzzer (docs/fuzzing.md): FUZZ_COUNT random legal tile programs (default 3,000) of FUZZ_SEED
## (default: the time) on llvm and, interpreted, sm_80/sm_90a/sm_100a, against numpy; a table per class and per
## target/op/dtype, a shrunk reproducer of each distinct failure in out/fuzz/. FUZZ_KNOWN_OPEN: classes still open.
FUZZ_SEED ?= $(shell date +%s)
FUZZ_COUNT ?= 3000
fuzz: python build
	PYTHONPATH=python .venv/bin/python -m axe4j_tools.fuzz --seed $(FUZZ_SEED) --count $(FUZZ_COUNT) --out out/fuzz \
		$(if $(FUZZ_KNOWN_OPEN),--known-open $(FUZZ_KNOWN_OPEN))

## JMH benchmark of the layout algebra on the paper's layouts.
bench-layout: build
	bash benchmarks/bench-layout.sh

clean:
	$(MVN) $(MVNFLAGS) -q clean

## Sort and prune the Java imports, trim trailing whitespace (the check `mvn verify` runs; the BOM has no sources).
.PHONY: format
format:
	$(MVN) $(MVNFLAGS) -q spotless:apply -pl '!axe4j-bom'

## `axe serve` against a Python ASGI service (Starlette under uvicorn with uvloop, httptools and orjson:
## benchmarks/serve_peer.py) on the same exported module, same closed-loop load, order Java, Python, Python, Java:
## req/s, p50/p99 and ratios, binary and JSON (out/bench-serve/result.json). The peer's packages are bench-only
## (benchmarks/requirements-serve.txt, installed into .venv by ci/setup-bench-serve.sh; `make test` does not).
.PHONY: bench-serve
bench-serve: python build
	bash ci/setup-bench-serve.sh
	.venv/bin/python benchmarks/bench_serve.py

## axe4j's CPU kernels against ONNX Runtime Java (1.23.2, from Maven Central), in one JVM, same inputs, alternated
## rounds: GEMM (N = 128/512/2048), GEMM + bias + GELU, LayerNorm and softmax rows, at 1 and 2 threads a side; each
## checked against numpy first. ORT is a dependency of the benchmarks module's bench-jvm profile only (not of `make
## test`); the reactor is packaged, not installed. Table and out/bench-jvm/result.json (benchmarks/bench_jvm.py);
## BENCH_JVM_ARGS=--service runs both through axe serve's server code instead (ORT as the service's Backend);
## BENCH_JVM_ARGS passes options, e.g. "--rounds 9 --round-ms 200 --threads 1,2 --only softmax".
BENCH_JVM_ARGS ?=
.PHONY: bench-jvm
bench-jvm: python
	$(MVN) $(MVNFLAGS) -q -Pbench-jvm -pl benchmarks -am -DskipTests package
	.venv/bin/python benchmarks/bench_jvm.py $(BENCH_JVM_ARGS)

## Latency of a no-op TVM packed function from Java and from Python, same run, as a ratio.
bench-call: python build
	.venv/bin/python benchmarks/bench_call_latency.py

## Each layout operation through axe4j (JVM, and from Python) and TIRx's C++ (from Java, from Python), same run.
bench-tirx: python build
	.venv/bin/python benchmarks/bench_layout_vs_tirx.py

## CPU kernels compiled through axe4j's Java dispatch rules: fp32 GEMM against numpy (1024^3 and a shape sweep,
## best of interleaved rounds; out/bench-cpu/gemm-sweep.json and .png), then the variants against the naive ones.
bench-cpu: python build
	.venv/bin/python benchmarks/bench_cpu_kernels.py

## Native baseline harnesses (cuBLAS GEMM) with the PyPI CUDA 13 toolchain; no GPU needed to build.
.PHONY: native
native: python
	bash native/build.sh

## Hopper FP16 GEMMs through axe4j against cuBLAS on a GPU, the benchmark sweep through the GPU bundle's runner
## (TFLOP/s, ratio, chosen tiles: out/bench-gemm/); says so without one.
.PHONY: bench-gemm
bench-gemm: python build native
	.venv/bin/python benchmarks/bench_gemm.py

## The GPU kernels of the test catalog, exported with their inputs, expected outputs, the TVM runtime and a runner,
## for a GPU machine without TVM or a JDK: out/gpu-bundle (docs/gpu-bundle.md); run there: python3 run.py.
.PHONY: gpu-bundle
gpu-bundle: python build native
	.venv/bin/python tools/gpu_bundle.py

## Both TVM lanes' tile-op kernels (python/tests_tirx/_tile_kernels.py) as sm_90a cubins with their launches and arrays,
## for a GPU machine with numpy and a CUDA driver, no TVM: out/tirx-gpu-bundle (docs/gpu-bundle.md, "Both TVM lanes"); run there:
## python3 run.py --out DIR [--timing].
.PHONY: tirx-gpu-bundle
tirx-gpu-bundle: python build python-tirx
	rm -rf out/tirx-gpu-bundle
	PYTHONPATH=python .venv-tirx/bin/python tools/tirx_gpu_bundle.py --lane tirx
	PYTHONPATH=python .venv/bin/python tools/tirx_gpu_bundle.py --lane 0.27
	cp tools/tirx-gpu-bundle/run.py out/tirx-gpu-bundle/

## The JVM runtime with a jlink JRE, a set of the catalog's sm_90a kernels, the Hopper GEMMs, the MoE kernels and the GPU
## service, for a GPU machine without a JDK, TVM or network: out/jvm-gpu-bundle (<= 64 MiB; docs/jvm-gpu-bundle.md);
## run there: ./run.sh --out DIR.
.PHONY: jvm-gpu-bundle
jvm-gpu-bundle: python native
	$(MVN) $(MVNFLAGS) -q -DskipTests install
	$(MVN) $(MVNFLAGS) -q -f examples/serve/pom.xml -DskipTests package
	.venv/bin/python tools/jvm_gpu_bundle.py

## python/axe4j/targets.json: the hardware facts of org.axe4j.targets for Python (generated; a test compares).
.PHONY: targets-json
targets-json: build
	java -cp axe-layout/target/classes org.axe4j.targets.TargetFacts > python/axe4j/targets.json

## python/axe4j/plan_schema.json from the plan records (org.axe4j.schedules.plan); PlanSchemaTest checks it.
.PHONY: plan-schema
plan-schema: build
	java -cp "schedules/target/classes:$$(ls schedules/target/lib/*.jar | tr '\n' ':')" \
		org.axe4j.schedules.plan.PlanSchema > python/axe4j/plan_schema.json
	$(MAKE) plan-types

## python/axe4j/plan_types.py (typed plans) from plan_schema.json; python/tests/test_plan_types.py checks it is current.
.PHONY: plan-types
plan-types:
	.venv/bin/python tools/gen_plan_types.py

## docs/divergences.md from the full differential suite against TIRx's C++ (tests never write tracked files).
.PHONY: divergences
divergences: python build
	$(MVN) $(MVNFLAGS) -q -pl axe-passes -am test -Dtest=DifferentialTest -Dsurefire.failIfNoSpecifiedTests=false \
		-Daxe4j.write.divergences=true

## Dispatch choices per tile call of the CUDA corpus: TVM's own cases against axe4j's (docs/dispatch-vs-upstream.md).
.PHONY: dispatch-vs-upstream
dispatch-vs-upstream: python build
	.venv/bin/python tools/dispatch_vs_upstream.py

## Redistribution on 8 ranks: axe4j's plans (bytes, minimum, MPI time) against XLA's GSPMD (JAX on CPU: bytes from
## the compiled HLO, time) and DTensor's per-mesh-dim order (bytes); out/bench-mesh/ (docs/mesh.md).
.PHONY: bench-mesh
bench-mesh: python build
	bash ci/setup-mpi.sh
	bash ci/setup-jax.sh
	.venv/bin/python benchmarks/bench_mesh.py

## Kernels with layouts inferred by InferLayouts against the same kernels with hand-written layouts (times, ratio).
.PHONY: bench-infer
bench-infer: python build
	.venv/bin/python benchmarks/bench_infer.py

## Trainium examples at every listed size (GEMM 512-4096, attention S = 512-4096) in the NKI executor.
.PHONY: test-trn-full
test-trn-full: python build
	AXE4J_TRN_FULL=1 .venv/bin/python -m pytest -q python/tests/test_trn_gemm.py python/tests/test_trn_mha.py

## The fused MoE layer (Qwen3-30B-A3B shapes) on the CPU against a numpy/BLAS layer; the GPU part where a GPU is lent.
.PHONY: bench-moe
bench-moe: python build
	.venv/bin/python benchmarks/bench_moe.py

## axe4j's NCCL executor of redistribution plans: native/build/libaxe4j_nccl.so (PyPI nvcc + nccl.h; no GPU needed).
.PHONY: nccl
nccl: python
	bash ci/setup-mpi.sh
	bash native/nccl/build.sh

## The NCCL executor with plans made here, for a GPU machine without a JDK or TVM: out/nccl-bundle (docs/mesh.md);
## run there: python out/nccl-bundle/run.py --out out/nccl-results (needs PyTorch with CUDA).
.PHONY: nccl-bundle
nccl-bundle: python build nccl
	.venv/bin/python tools/nccl_bundle.py
