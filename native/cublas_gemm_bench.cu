// cuBLAS FP16 (or, with --dtype bf16, BF16) GEMM baseline: D = A B^T with A (M x K) and B (N x K) row-major, FP32
// accumulation, D (M x N) row-major in the input type -- the "TN" problem the axe4j GEMM kernels solve. Timing as TVM's time evaluator does it:
// `number` back-to-back launches between two CUDA events, that mean per launch, `repeat` times; the median of the
// repeats is reported. With --flush-l2 BYTES, a buffer of that size is overwritten (cudaMemsetAsync) before each
// repeat, outside the timed events, so each repeat starts with a cold L2 (use --number 1). Inputs follow a closed
// formula (exact in FP16) that the Python side regenerates to compare results:
// A[i][k] = ((7 i + 13 k + seed) mod 9 - 4) / 8, B[j][k] = ((11 j + 5 k + 2 seed) mod 9 - 4) / 8;
// or, with --inputs A_PATH B_PATH, are read from raw row-major FP16 files (M x K and N x K: users' data, such as
// seeded random-normal values, on which power-limited GPUs run slower than on the formula's few distinct values).
//
// usage: cublas_gemm_bench M N K [--number N] [--repeat R] [--warmup W] [--seed S] [--save PATH] [--flush-l2 BYTES]
//                          [--inputs A_PATH B_PATH] [--dtype f16|bf16]
// prints one JSON line: {"m":..,"n":..,"k":..,"ms":..,"tflops":..,"device":"..","flush_l2":..};
// exit 3 when there is no GPU.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kNoDevice = 3;
constexpr int kUsage = 2;
constexpr int kFailure = 1;

struct Options {
  long m = 0, n = 0, k = 0;
  int number = 10, repeat = 5, warmup = 3, seed = 0;
  long flush = 0;
  std::string save, input_a, input_b;
  bool bf16 = false;   // --dtype bf16: BF16 inputs and output (16-bit storage either way)
};

[[noreturn]] void fail(int code, const std::string& message) {
  std::fprintf(stderr, "cublas_gemm_bench: %s\n", message.c_str());
  std::exit(code);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(kFailure, std::string(what) + ": " + cudaGetErrorString(e));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) fail(kFailure, std::string(what) + ": " + cublasGetStatusString(s));
}

long positive(const char* text, const char* name) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0) fail(kUsage, std::string(name) + " must be a positive integer, not '" + text + "'");
  return v;
}

Options parse(int argc, char** argv) {
  if (argc < 4)
    fail(kUsage, "usage: cublas_gemm_bench M N K [--number N] [--repeat R] [--warmup W] [--seed S] [--save PATH] "
                 "[--flush-l2 BYTES] [--inputs A_PATH B_PATH] [--dtype f16|bf16]");
  Options o;
  o.m = positive(argv[1], "M");
  o.n = positive(argv[2], "N");
  o.k = positive(argv[3], "K");
  for (int i = 4; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 >= argc) fail(kUsage, flag + " needs a value");
    if (flag == "--inputs") {
      if (i + 2 >= argc) fail(kUsage, "--inputs needs two files: A (M x K) and B (N x K), raw FP16");
      o.input_a = argv[i + 1];
      o.input_b = argv[i + 2];
      ++i;
      continue;
    }
    if (flag == "--number") o.number = static_cast<int>(positive(argv[i + 1], "--number"));
    else if (flag == "--repeat") o.repeat = static_cast<int>(positive(argv[i + 1], "--repeat"));
    else if (flag == "--warmup") o.warmup = static_cast<int>(positive(argv[i + 1], "--warmup"));
    else if (flag == "--seed") o.seed = static_cast<int>(std::strtol(argv[i + 1], nullptr, 10));
    else if (flag == "--save") o.save = argv[i + 1];
    else if (flag == "--flush-l2") o.flush = positive(argv[i + 1], "--flush-l2");
    else if (flag == "--dtype") {
      std::string d = argv[i + 1];
      if (d != "f16" && d != "bf16") fail(kUsage, "--dtype must be f16 or bf16, not '" + d + "'");
      o.bf16 = d == "bf16";
    }
    else fail(kUsage, "unknown option " + flag);
  }
  return o;
}

__global__ void fill(__half* x, long rows, long cols, long a, long b, long c, bool bf16) {
  long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (idx >= rows * cols) return;
  long r = idx / cols, k = idx % cols;
  float v = static_cast<float>((a * r + b * k + c) % 9 - 4) / 8.0f;   // exact in FP16 and BF16
  if (bf16) {
    reinterpret_cast<__nv_bfloat16*>(x)[idx] = __float2bfloat16(v);
  } else {
    x[idx] = __float2half(v);
  }
}

// Reads `count` FP16 values from `path` into device memory `dst`; the file must hold exactly that many.
void load(__half* dst, long count, const std::string& path, const char* what) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) fail(kUsage, std::string("cannot open ") + what + " file " + path);
  std::vector<__half> host(static_cast<size_t>(count));
  size_t got = std::fread(host.data(), sizeof(__half), host.size(), f);
  bool extra = std::fgetc(f) != EOF;
  std::fclose(f);
  if (got != host.size() || extra)
    fail(kUsage, std::string(what) + " file " + path + " must hold exactly " + std::to_string(count) +
                     " FP16 values (" + std::to_string(count * 2) + " bytes)");
  check(cudaMemcpy(dst, host.data(), sizeof(__half) * host.size(), cudaMemcpyHostToDevice), "cudaMemcpy inputs");
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) fail(kNoDevice, "no CUDA GPU on this machine");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");

  __half *a = nullptr, *b = nullptr, *d = nullptr;
  check(cudaMalloc(&a, sizeof(__half) * o.m * o.k), "cudaMalloc A");
  check(cudaMalloc(&b, sizeof(__half) * o.n * o.k), "cudaMalloc B");
  check(cudaMalloc(&d, sizeof(__half) * o.m * o.n), "cudaMalloc D");
  const int threads = 256;
  if (!o.input_a.empty()) {
    load(a, o.m * o.k, o.input_a, "A");
    load(b, o.n * o.k, o.input_b, "B");
  } else {
    fill<<<(o.m * o.k + threads - 1) / threads, threads>>>(a, o.m, o.k, 7, 13, o.seed, o.bf16);
    fill<<<(o.n * o.k + threads - 1) / threads, threads>>>(b, o.n, o.k, 11, 5, 2L * o.seed, o.bf16);
    check(cudaGetLastError(), "fill");
  }

  cublasHandle_t handle;
  check(cublasCreate(&handle), "cublasCreate");
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major D (M x N) is column-major D^T (N x M) = B (N x K) . A^T: B is the column-major K x N matrix
  // transposed, A the column-major K x M matrix as is.
  auto gemm = [&] {
    const cudaDataType_t type = o.bf16 ? CUDA_R_16BF : CUDA_R_16F;
    check(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(o.n), static_cast<int>(o.m),
                       static_cast<int>(o.k), &alpha, b, type, static_cast<int>(o.k), a, type,
                       static_cast<int>(o.k), &beta, d, type, static_cast<int>(o.n), CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  };
  for (int i = 0; i < o.warmup; ++i) gemm();
  check(cudaDeviceSynchronize(), "warm-up");

  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  void* flush = nullptr;
  if (o.flush > 0) check(cudaMalloc(&flush, static_cast<size_t>(o.flush)), "cudaMalloc L2 flush buffer");
  std::vector<double> ms;
  for (int r = 0; r < o.repeat; ++r) {
    if (flush != nullptr) check(cudaMemsetAsync(flush, r & 0xff, static_cast<size_t>(o.flush)), "cudaMemsetAsync");
    check(cudaEventRecord(start), "cudaEventRecord");
    for (int i = 0; i < o.number; ++i) gemm();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float elapsed = 0;
    check(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
    ms.push_back(static_cast<double>(elapsed) / o.number);
  }
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2];
  double tflops = 2.0 * o.m * o.n * o.k / (median * 1e-3) / 1e12;

  if (!o.save.empty()) {
    std::vector<__half> host(static_cast<size_t>(o.m * o.n));
    check(cudaMemcpy(host.data(), d, sizeof(__half) * host.size(), cudaMemcpyDeviceToHost), "cudaMemcpy D");
    FILE* f = std::fopen(o.save.c_str(), "wb");
    if (f == nullptr || std::fwrite(host.data(), sizeof(__half), host.size(), f) != host.size())
      fail(kFailure, "cannot write " + o.save);
    std::fclose(f);
  }
  std::printf("{\"m\":%ld,\"n\":%ld,\"k\":%ld,\"ms\":%.6f,\"tflops\":%.3f,\"device\":\"%s\",\"flush_l2\":%ld,"
              "\"inputs\":\"%s\",\"dtype\":\"%s\"}\n", o.m, o.n, o.k, median, tflops, prop.name, o.flush,
              o.input_a.empty() ? "formula" : "files", o.bf16 ? "bf16" : "f16");
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(d);
  if (flush != nullptr) cudaFree(flush);
  return 0;
}
