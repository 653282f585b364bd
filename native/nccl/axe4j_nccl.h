/* axe4j's NCCL executor of redistribution plans: a C ABI over one generic library (no per-plan compilation).
 *
 * A plan reaches the library as one rank's table of 64-bit integers (built by axe4j.mesh.nccl_runtime from the
 * decoded plan; layout below). The library checks every index against the buffer it addresses, splits the world
 * communicator once per step, uploads the index arrays and allocates its scratch buffers once per plan; each
 * redistribute call then runs, on the caller's stream: per step a gather kernel packing the send buffer, the
 * collective, and at the end the scatter copies into dst. src and dst are device buffers owned by the caller.
 *
 * Every function returns 0 on success or a nonzero code; axe4j_nccl_last_error() gives the reason (per thread).
 *
 * Table (int64), AXE4J_NCCL_TABLE_VERSION 1:
 *   header  magic, version, rank, nranks, element_bytes, src_size, dst_size, n_steps, n_copies
 *   step s  kind, in_buffer, count, out_size, root, group_size, my_index, n_send,
 *           group[group_size], send_counts[group_size], recv_counts[group_size], send_idx[n_send]
 *   copy    from_buffer, n, from_idx[n], to_idx[n]
 * Buffer 0 is src; step s writes buffer s + 1 (out_size elements). send_idx[i] = -1 packs a zero (padding).
 * count is NCCL's count: the block per member (reduce_scatter, all_gather) or the whole buffer (all_reduce,
 * broadcast); all_to_all uses send_counts/recv_counts. dst is zeroed before the copies.
 */
#ifndef AXE4J_NCCL_H
#define AXE4J_NCCL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AXE4J_NCCL_TABLE_MAGIC 0x41584e43LL /* "AXNC" */
#define AXE4J_NCCL_TABLE_VERSION 1
#define AXE4J_NCCL_UNIQUE_ID_BYTES 128
/* Only the entry points are exported (the library is built with hidden visibility). */
#define AXE4J_NCCL_API __attribute__((visibility("default")))

/* Element types; reductions sum in the element's own type. */
enum axe4j_nccl_dtype {
  AXE4J_FLOAT16 = 0, AXE4J_BFLOAT16 = 1, AXE4J_FLOAT32 = 2, AXE4J_FLOAT64 = 3, AXE4J_INT8 = 4,
  AXE4J_UINT8 = 5, AXE4J_INT32 = 6, AXE4J_UINT32 = 7, AXE4J_INT64 = 8, AXE4J_UINT64 = 9
};

/* Step kinds of a table. */
enum axe4j_nccl_kind {
  AXE4J_IDLE = 0, AXE4J_REDUCE_SCATTER = 1, AXE4J_ALL_REDUCE = 2, AXE4J_ALL_GATHER = 3, AXE4J_BROADCAST = 4,
  AXE4J_ALL_TO_ALL = 5
};

typedef struct axe4j_nccl_comm axe4j_nccl_comm;
typedef struct axe4j_nccl_plan axe4j_nccl_plan;

/* Text of the last failure on this thread ("" when none). */
AXE4J_NCCL_API const char* axe4j_nccl_last_error(void);

/* Version of the NCCL library loaded at run time (e.g. 22809 for 2.28.9). */
AXE4J_NCCL_API int axe4j_nccl_version(int* version);

/* Number of CUDA devices; fails, with the runtime's reason, when there is no driver or no device. */
AXE4J_NCCL_API int axe4j_nccl_device_count(int* count);

/* A fresh NCCL unique id (rank 0 makes it; every rank passes the same bytes to comm_init). */
AXE4J_NCCL_API int axe4j_nccl_unique_id(unsigned char id[AXE4J_NCCL_UNIQUE_ID_BYTES]);

/* Joins the world communicator on `device`, or on device rank % device_count when device < 0. */
AXE4J_NCCL_API int axe4j_nccl_comm_init(int nranks, int rank, const unsigned char id[AXE4J_NCCL_UNIQUE_ID_BYTES], int device,
                         axe4j_nccl_comm** comm);
AXE4J_NCCL_API int axe4j_nccl_comm_device(const axe4j_nccl_comm* comm, int* device);
AXE4J_NCCL_API int axe4j_nccl_comm_destroy(axe4j_nccl_comm* comm);

/* Checks a table without a GPU (what plan_create refuses, this refuses with the same text). */
AXE4J_NCCL_API int axe4j_nccl_table_check(const int64_t* table, int64_t table_len);

/* Checks and uploads this rank's table; splits the world communicator per step (collective: every rank calls it
 * for the same plan, in the same order). */
AXE4J_NCCL_API int axe4j_nccl_plan_create(axe4j_nccl_comm* comm, const int64_t* table, int64_t table_len, axe4j_nccl_plan** plan);
AXE4J_NCCL_API int axe4j_nccl_plan_destroy(axe4j_nccl_plan* plan);

/* Runs the plan on `stream` (a cudaStream_t, 0 for the legacy default stream): src holds src_size elements of
 * `dtype`, dst dst_size. Returns once the work is enqueued. Not for concurrent use of one plan. */
AXE4J_NCCL_API int axe4j_nccl_redistribute(axe4j_nccl_plan* plan, const void* src, void* dst, int dtype, void* stream);

#ifdef __cplusplus
}
#endif

#endif
