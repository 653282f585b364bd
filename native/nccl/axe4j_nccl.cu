// axe4j's NCCL executor: communicators, plan upload and the per-call gather -> collective -> scatter sequence.
// The API and the table layout are in axe4j_nccl.h.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "axe4j_nccl.h"
#include "plan_table.h"

struct axe4j_nccl_comm {
  ncclComm_t world = nullptr;
  int nranks = 0, rank = 0, device = 0;
};

namespace {

thread_local std::string g_error;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Failure(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

void nccl_ok(ncclResult_t r, const char* what, ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  std::string detail = comm ? ncclGetLastError(comm) : ncclGetLastError(nullptr);
  throw Failure(std::string(what) + ": " + ncclGetErrorString(r) + (detail.empty() ? "" : " - " + detail));
}

// Runs body, turning an exception into a nonzero code and the thread's error text.
template <class F>
int guarded(F&& body) {
  try {
    g_error.clear();
    body();
    return 0;
  } catch (const std::invalid_argument& e) {
    g_error = e.what();
    return 2;
  } catch (const std::exception& e) {
    g_error = e.what();
    return 1;
  }
}

struct DtypeInfo {
  ncclDataType_t nccl;
  int bytes;
  const char* name;
};

DtypeInfo dtype_info(int dtype) {
  switch (dtype) {
    case AXE4J_FLOAT16: return {ncclFloat16, 2, "float16"};
    case AXE4J_BFLOAT16: return {ncclBfloat16, 2, "bfloat16"};
    case AXE4J_FLOAT32: return {ncclFloat32, 4, "float32"};
    case AXE4J_FLOAT64: return {ncclFloat64, 8, "float64"};
    case AXE4J_INT8: return {ncclInt8, 1, "int8"};
    case AXE4J_UINT8: return {ncclUint8, 1, "uint8"};
    case AXE4J_INT32: return {ncclInt32, 4, "int32"};
    case AXE4J_UINT32: return {ncclUint32, 4, "uint32"};
    case AXE4J_INT64: return {ncclInt64, 8, "int64"};
    case AXE4J_UINT64: return {ncclUint64, 8, "uint64"};
    default: throw std::invalid_argument("dtype code " + std::to_string(dtype) + " is not an axe4j_nccl_dtype (0..9)");
  }
}

// out[i] = idx[i] < 0 ? 0 : in[idx[i]]  (W: an unsigned word of the element's width; a copy needs no arithmetic)
template <class W>
__global__ void gather(const W* in, W* out, const int64_t* idx, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t j = idx[i];
    out[i] = j < 0 ? W(0) : in[j];
  }
}

// out[to[i]] = in[from[i]]
template <class W>
__global__ void scatter(const W* in, W* out, const int64_t* from, const int64_t* to, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    out[to[i]] = in[from[i]];
}

unsigned blocks_for(int64_t n) {
  int64_t b = (n + 255) / 256;
  return (unsigned)(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

template <class W>
void launch_copy(const void* in, void* out, const int64_t* from, const int64_t* to, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  if (to == nullptr)
    gather<W><<<blocks_for(n), 256, 0, s>>>((const W*)in, (W*)out, from, n);
  else
    scatter<W><<<blocks_for(n), 256, 0, s>>>((const W*)in, (W*)out, from, to, n);
  cuda_ok(cudaGetLastError(), "copy kernel launch");
}

void copy_elements(int bytes, const void* in, void* out, const int64_t* from, const int64_t* to, int64_t n,
                   cudaStream_t s) {
  switch (bytes) {
    case 1: return launch_copy<uint8_t>(in, out, from, to, n, s);
    case 2: return launch_copy<uint16_t>(in, out, from, to, n, s);
    case 4: return launch_copy<uint32_t>(in, out, from, to, n, s);
    default: return launch_copy<unsigned long long>(in, out, from, to, n, s);
  }
}

int64_t aligned(int64_t bytes) { return (bytes + 255) / 256 * 256; }

bool is_world(const std::vector<int64_t>& group, int nranks) {
  if ((int64_t)group.size() != nranks) return false;
  for (int i = 0; i < nranks; ++i)
    if (group[i] != i) return false;
  return true;
}

}  // namespace

struct axe4j_nccl_plan {
  axe4j_nccl_comm* comm = nullptr;
  axe4j::PlanTable table;
  std::vector<ncclComm_t> sub;        // per step: its group's communicator (null when idle)
  std::vector<bool> owned;            // per step: sub was split for it (else it is the world)
  std::vector<const int64_t*> send_idx, copy_from, copy_to;  // device index arrays
  std::vector<void*> send_buf, out_buf;                       // device scratch per step
  void* device_memory = nullptr;
  int64_t copy_elements_total = 0;

  ~axe4j_nccl_plan() {
    for (size_t s = 0; s < sub.size(); ++s)
      if (owned[s] && sub[s]) ncclCommDestroy(sub[s]);
    if (device_memory) cudaFree(device_memory);
  }
};

extern "C" {

const char* axe4j_nccl_last_error(void) { return g_error.c_str(); }

int axe4j_nccl_version(int* version) {
  return guarded([&] { nccl_ok(ncclGetVersion(version), "ncclGetVersion", nullptr); });
}

int axe4j_nccl_device_count(int* count) {
  return guarded([&] {
    *count = 0;
    cuda_ok(cudaGetDeviceCount(count), "no usable CUDA device: cudaGetDeviceCount");
    if (*count == 0) throw Failure("no CUDA device: cudaGetDeviceCount found 0");
  });
}

int axe4j_nccl_unique_id(unsigned char id[AXE4J_NCCL_UNIQUE_ID_BYTES]) {
  static_assert(sizeof(ncclUniqueId) == AXE4J_NCCL_UNIQUE_ID_BYTES, "ncclUniqueId is 128 bytes");
  return guarded([&] {
    ncclUniqueId uid;
    nccl_ok(ncclGetUniqueId(&uid), "ncclGetUniqueId", nullptr);
    std::memcpy(id, &uid, sizeof uid);
  });
}

int axe4j_nccl_comm_init(int nranks, int rank, const unsigned char id[AXE4J_NCCL_UNIQUE_ID_BYTES], int device,
                         axe4j_nccl_comm** comm) {
  return guarded([&] {
    *comm = nullptr;
    if (nranks < 1 || rank < 0 || rank >= nranks)
      throw std::invalid_argument("comm_init: rank " + std::to_string(rank) + " of " + std::to_string(nranks));
    int count = 0;
    cuda_ok(cudaGetDeviceCount(&count), "no usable CUDA device: cudaGetDeviceCount");
    if (count == 0) throw Failure("no CUDA device: cudaGetDeviceCount found 0");
    int dev = device < 0 ? rank % count : device;
    if (dev >= count)
      throw std::invalid_argument("comm_init: device " + std::to_string(dev) + ", this machine has " +
                                  std::to_string(count));
    cuda_ok(cudaSetDevice(dev), "cudaSetDevice");
    ncclUniqueId uid;
    std::memcpy(&uid, id, sizeof uid);
    auto* c = new axe4j_nccl_comm();
    c->nranks = nranks;
    c->rank = rank;
    c->device = dev;
    ncclResult_t r = ncclCommInitRank(&c->world, nranks, uid, rank);
    if (r != ncclSuccess) {
      delete c;
      nccl_ok(r, "ncclCommInitRank", nullptr);
    }
    *comm = c;
  });
}

int axe4j_nccl_comm_device(const axe4j_nccl_comm* comm, int* device) {
  return guarded([&] {
    if (!comm) throw std::invalid_argument("comm_device: null communicator");
    *device = comm->device;
  });
}

int axe4j_nccl_comm_destroy(axe4j_nccl_comm* comm) {
  return guarded([&] {
    if (!comm) return;
    ncclComm_t w = comm->world;
    delete comm;
    if (w) nccl_ok(ncclCommDestroy(w), "ncclCommDestroy", nullptr);
  });
}

int axe4j_nccl_table_check(const int64_t* table, int64_t table_len) {
  return guarded([&] { axe4j::parse_table(table, table_len); });
}

int axe4j_nccl_plan_create(axe4j_nccl_comm* comm, const int64_t* table, int64_t table_len, axe4j_nccl_plan** out) {
  return guarded([&] {
    *out = nullptr;
    if (!comm) throw std::invalid_argument("plan_create: null communicator");
    auto plan = std::make_unique<axe4j_nccl_plan>();
    plan->comm = comm;
    plan->table = axe4j::parse_table(table, table_len);
    const axe4j::PlanTable& t = plan->table;
    if (t.rank != comm->rank || t.nranks != comm->nranks)
      throw std::invalid_argument("plan_create: table of rank " + std::to_string(t.rank) + " of " +
                                  std::to_string(t.nranks) + " on communicator rank " + std::to_string(comm->rank) +
                                  " of " + std::to_string(comm->nranks));
    cuda_ok(cudaSetDevice(comm->device), "cudaSetDevice");
    // One allocation: index arrays first, then per step its packed send buffer and its output buffer.
    int64_t eb = t.element_bytes, total = 0;
    std::vector<int64_t> at_send_idx, at_from, at_to, at_send, at_out;
    for (const auto& st : t.steps) {
      at_send_idx.push_back(total);
      total += aligned(8 * (int64_t)st.send_idx.size());
    }
    for (const auto& cp : t.copies) {
      at_from.push_back(total);
      total += aligned(8 * (int64_t)cp.from_idx.size());
      at_to.push_back(total);
      total += aligned(8 * (int64_t)cp.to_idx.size());
    }
    for (const auto& st : t.steps) {
      at_send.push_back(total);
      total += aligned(eb * (int64_t)st.send_idx.size());
      at_out.push_back(total);
      total += aligned(eb * st.out_size);
    }
    cuda_ok(cudaMalloc(&plan->device_memory, total > 0 ? total : 256), "cudaMalloc of the plan's buffers");
    // Scratch starts zeroed (an idle step's output is read as zeros); the index arrays are uploaded over it.
    cuda_ok(cudaMemset(plan->device_memory, 0, total > 0 ? total : 256), "cudaMemset");
    char* base = (char*)plan->device_memory;
    auto upload = [&](const std::vector<int64_t>& v, int64_t at) {
      if (!v.empty()) cuda_ok(cudaMemcpy(base + at, v.data(), 8 * v.size(), cudaMemcpyHostToDevice), "upload");
      return (const int64_t*)(base + at);
    };
    for (size_t s = 0; s < t.steps.size(); ++s) {
      plan->send_idx.push_back(upload(t.steps[s].send_idx, at_send_idx[s]));
      plan->send_buf.push_back(base + at_send[s]);
      plan->out_buf.push_back(base + at_out[s]);
    }
    for (size_t c = 0; c < t.copies.size(); ++c) {
      plan->copy_from.push_back(upload(t.copies[c].from_idx, at_from[c]));
      plan->copy_to.push_back(upload(t.copies[c].to_idx, at_to[c]));
    }
    cuda_ok(cudaDeviceSynchronize(), "plan upload");
    // Split per step: color = smallest rank of the group, key = position in it (the MPI executor's rule). A
    // step whose group is the world in rank order uses the world itself; idle ranks take no color.
    for (const auto& st : t.steps) {
      if (is_world(st.group, comm->nranks)) {
        plan->sub.push_back(comm->world);
        plan->owned.push_back(false);
        continue;
      }
      int64_t color = st.group[0];
      for (int64_t g : st.group) color = g < color ? g : color;
      ncclComm_t sub = nullptr;
      nccl_ok(ncclCommSplit(comm->world, st.kind == AXE4J_IDLE ? NCCL_SPLIT_NOCOLOR : (int)color,
                            (int)st.my_index, &sub, nullptr),
              "ncclCommSplit", comm->world);
      plan->sub.push_back(sub);
      plan->owned.push_back(true);
    }
    *out = plan.release();
  });
}

int axe4j_nccl_plan_destroy(axe4j_nccl_plan* plan) {
  return guarded([&] { delete plan; });
}

int axe4j_nccl_redistribute(axe4j_nccl_plan* plan, const void* src, void* dst, int dtype, void* stream) {
  return guarded([&] {
    if (!plan) throw std::invalid_argument("redistribute: null plan");
    const axe4j::PlanTable& t = plan->table;
    DtypeInfo dt = dtype_info(dtype);
    if (dt.bytes != t.element_bytes)
      throw std::invalid_argument(std::string("redistribute: dtype ") + dt.name + " has " + std::to_string(dt.bytes) +
                                  "-byte elements, the plan was made for " + std::to_string(t.element_bytes));
    if ((t.src_size > 0 && !src) || (t.dst_size > 0 && !dst))
      throw std::invalid_argument("redistribute: null src or dst");
    cudaStream_t s = (cudaStream_t)stream;
    int eb = dt.bytes;
    cuda_ok(cudaSetDevice(plan->comm->device), "cudaSetDevice");
    std::vector<const void*> buffers{src};
    for (size_t i = 0; i < t.steps.size(); ++i) {
      const axe4j::TableStep& st = t.steps[i];
      const void* in = buffers[st.in_buffer];
      void* send = plan->send_buf[i];
      void* out = plan->out_buf[i];
      ncclComm_t c = plan->sub[i];
      copy_elements(eb, in, send, plan->send_idx[i], nullptr, (int64_t)st.send_idx.size(), s);
      switch (st.kind) {
        case AXE4J_REDUCE_SCATTER:
          nccl_ok(ncclReduceScatter(send, out, st.count, dt.nccl, ncclSum, c, s), "ncclReduceScatter", c);
          break;
        case AXE4J_ALL_REDUCE:
          nccl_ok(ncclAllReduce(send, out, st.count, dt.nccl, ncclSum, c, s), "ncclAllReduce", c);
          break;
        case AXE4J_ALL_GATHER:
          nccl_ok(ncclAllGather(send, out, st.count, dt.nccl, c, s), "ncclAllGather", c);
          break;
        case AXE4J_BROADCAST:
          nccl_ok(ncclBroadcast(send, out, st.count, dt.nccl, (int)st.root, c, s), "ncclBroadcast", c);
          break;
        case AXE4J_ALL_TO_ALL: {
          nccl_ok(ncclGroupStart(), "ncclGroupStart", c);
          int64_t soff = 0, roff = 0;
          ncclResult_t first = ncclSuccess;
          for (size_t m = 0; m < st.group.size(); ++m) {
            ncclResult_t r = ncclSuccess;
            if (st.send_counts[m])
              r = ncclSend((const char*)send + soff * eb, st.send_counts[m], dt.nccl, (int)m, c, s);
            if (r == ncclSuccess && st.recv_counts[m])
              r = ncclRecv((char*)out + roff * eb, st.recv_counts[m], dt.nccl, (int)m, c, s);
            if (first == ncclSuccess) first = r;
            soff += st.send_counts[m];
            roff += st.recv_counts[m];
          }
          ncclResult_t end = ncclGroupEnd();
          nccl_ok(first, "ncclSend/ncclRecv", c);
          nccl_ok(end, "ncclGroupEnd", c);
          break;
        }
        default: break;  // idle
      }
      buffers.push_back(out);
    }
    if (t.dst_size > 0) cuda_ok(cudaMemsetAsync(dst, 0, (size_t)t.dst_size * eb, s), "cudaMemsetAsync of dst");
    for (size_t c = 0; c < t.copies.size(); ++c)
      copy_elements(eb, buffers[t.copies[c].from_buffer], dst, plan->copy_from[c], plan->copy_to[c],
                    (int64_t)t.copies[c].from_idx.size(), s);
  });
}

}  // extern "C"
