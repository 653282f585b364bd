// Host-side reading and checking of one rank's plan table (layout in axe4j_nccl.h). Every index is checked
// against the buffer it addresses, so a malformed table is refused with the offending step named instead of
// becoming an out-of-bounds access on the device.
#ifndef AXE4J_NCCL_PLAN_TABLE_H
#define AXE4J_NCCL_PLAN_TABLE_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "axe4j_nccl.h"

namespace axe4j {

struct TableStep {
  int64_t kind = 0, in_buffer = 0, count = 0, out_size = 0, root = 0, my_index = 0;
  std::vector<int64_t> group, send_counts, recv_counts, send_idx;
};

struct TableCopy {
  int64_t from_buffer = 0;
  std::vector<int64_t> from_idx, to_idx;
};

struct PlanTable {
  int64_t rank = 0, nranks = 0, element_bytes = 0, src_size = 0, dst_size = 0;
  std::vector<TableStep> steps;
  std::vector<TableCopy> copies;

  // Elements in buffer b (0 = src, s + 1 = output of step s).
  int64_t buffer_size(int64_t b) const { return b == 0 ? src_size : steps[b - 1].out_size; }
};

class TableReader {
 public:
  TableReader(const int64_t* t, int64_t n) : t_(t), n_(n) {}
  int64_t next(const char* what) {
    if (at_ >= n_) throw std::invalid_argument(std::string("plan table ends before ") + what);
    return t_[at_++];
  }
  std::vector<int64_t> take(int64_t count, const char* what) {
    if (count < 0 || count > n_ - at_)
      throw std::invalid_argument(std::string("plan table: ") + what + " needs " + std::to_string(count) +
                                  " entries, " + std::to_string(n_ - at_) + " left");
    std::vector<int64_t> out(t_ + at_, t_ + at_ + count);
    at_ += count;
    return out;
  }
  bool done() const { return at_ == n_; }

 private:
  const int64_t* t_;
  int64_t n_, at_ = 0;
};

inline std::string step_name(size_t s, int64_t kind) {
  static const char* names[] = {"idle", "reduce_scatter", "all_reduce", "all_gather", "broadcast", "all_to_all"};
  return "step " + std::to_string(s) + " (" + (kind >= 0 && kind <= 5 ? names[kind] : "unknown kind") + ")";
}

inline void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("plan table: " + message);
}

inline int64_t sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

// Elements the step's collective reads from its packed send buffer and writes into its output buffer.
inline void check_step_sizes(const TableStep& st, const std::string& name) {
  int64_t p = (int64_t)st.group.size(), n = (int64_t)st.send_idx.size();
  switch (st.kind) {
    case AXE4J_IDLE: return;
    case AXE4J_REDUCE_SCATTER:
      require(n == p * st.count, name + ": packs " + std::to_string(n) + " elements, reduce-scatter of " +
                                     std::to_string(p) + " blocks of " + std::to_string(st.count) + " needs " +
                                     std::to_string(p * st.count));
      require(st.out_size >= st.count, name + ": output smaller than its block");
      return;
    case AXE4J_ALL_REDUCE:
      require(n == st.count && st.out_size >= st.count, name + ": all-reduce sizes differ from count");
      return;
    case AXE4J_ALL_GATHER:
      require(n == st.count && st.out_size >= p * st.count, name + ": all-gather needs count sent, p x count out");
      return;
    case AXE4J_BROADCAST:
      require(st.root >= 0 && st.root < p, name + ": root outside the group");
      require(st.out_size >= st.count, name + ": output smaller than the broadcast");
      require(st.my_index != st.root || n == st.count, name + ": the root packs " + std::to_string(n) +
                                                           " elements, broadcasts " + std::to_string(st.count));
      return;
    case AXE4J_ALL_TO_ALL:
      for (int64_t c : st.send_counts) require(c >= 0, name + ": negative send count");
      for (int64_t c : st.recv_counts) require(c >= 0, name + ": negative receive count");
      require(sum(st.send_counts) == n, name + ": send counts sum to " + std::to_string(sum(st.send_counts)) +
                                            ", packed " + std::to_string(n));
      require(sum(st.recv_counts) <= st.out_size, name + ": receive counts exceed the output buffer");
      return;
    default: require(false, name + ": unknown kind " + std::to_string(st.kind));
  }
}

inline PlanTable parse_table(const int64_t* t, int64_t len) {
  require(t != nullptr && len >= 9, "shorter than its header (9 entries)");
  TableReader r(t, len);
  require(r.next("magic") == AXE4J_NCCL_TABLE_MAGIC, "wrong magic (not an axe4j NCCL plan table)");
  int64_t version = r.next("version");
  require(version == AXE4J_NCCL_TABLE_VERSION, "version " + std::to_string(version) + ", this library reads " +
                                                   std::to_string(AXE4J_NCCL_TABLE_VERSION));
  PlanTable p;
  p.rank = r.next("rank");
  p.nranks = r.next("nranks");
  p.element_bytes = r.next("element_bytes");
  p.src_size = r.next("src_size");
  p.dst_size = r.next("dst_size");
  int64_t n_steps = r.next("n_steps"), n_copies = r.next("n_copies");
  require(p.element_bytes == 1 || p.element_bytes == 2 || p.element_bytes == 4 || p.element_bytes == 8,
          "element_bytes " + std::to_string(p.element_bytes) + " (1, 2, 4 or 8)");
  require(p.src_size >= 0 && p.dst_size >= 0 && n_steps >= 0 && n_copies >= 0, "negative size in the header");
  for (int64_t s = 0; s < n_steps; ++s) {
    TableStep st;
    st.kind = r.next("step kind");
    std::string name = step_name(s, st.kind);
    st.in_buffer = r.next("in_buffer");
    st.count = r.next("count");
    st.out_size = r.next("out_size");
    st.root = r.next("root");
    int64_t gs = r.next("group_size");
    st.my_index = r.next("my_index");
    int64_t n_send = r.next("n_send");
    require(gs >= 1 && gs <= p.nranks, name + ": group of " + std::to_string(gs));
    st.group = r.take(gs, "group");
    st.send_counts = r.take(gs, "send_counts");
    st.recv_counts = r.take(gs, "recv_counts");
    st.send_idx = r.take(n_send, "send_idx");
    require(st.my_index >= 0 && st.my_index < gs && st.group[st.my_index] == p.rank,
            name + ": rank " + std::to_string(p.rank) + " is not member my_index of its group");
    for (int64_t g : st.group) require(g >= 0 && g < p.nranks, name + ": group member outside the world");
    require(st.in_buffer >= 0 && st.in_buffer <= s, name + ": reads buffer " + std::to_string(st.in_buffer) +
                                                          ", not yet written");
    require(st.count >= 0 && st.out_size >= 0, name + ": negative count");
    int64_t in_size = p.buffer_size(st.in_buffer);
    for (int64_t i : st.send_idx)
      require(i >= -1 && i < in_size, name + ": send index " + std::to_string(i) + " outside buffer " +
                                          std::to_string(st.in_buffer) + " of " + std::to_string(in_size));
    check_step_sizes(st, name);
    p.steps.push_back(std::move(st));
  }
  for (int64_t c = 0; c < n_copies; ++c) {
    TableCopy cp;
    cp.from_buffer = r.next("copy from_buffer");
    int64_t n = r.next("copy length");
    std::string name = "copy " + std::to_string(c);
    require(cp.from_buffer >= 0 && cp.from_buffer <= n_steps, name + ": unknown buffer");
    cp.from_idx = r.take(n, "copy from_idx");
    cp.to_idx = r.take(n, "copy to_idx");
    int64_t from_size = p.buffer_size(cp.from_buffer);
    for (int64_t i : cp.from_idx) require(i >= 0 && i < from_size, name + ": source index " + std::to_string(i) +
                                                                        " outside its buffer of " +
                                                                        std::to_string(from_size));
    for (int64_t i : cp.to_idx) require(i >= 0 && i < p.dst_size, name + ": destination index " +
                                                                       std::to_string(i) + " outside dst of " +
                                                                       std::to_string(p.dst_size));
    p.copies.push_back(std::move(cp));
  }
  require(r.done(), "entries left after the last copy");
  return p;
}

}  // namespace axe4j

#endif
