// Context parallelism's keys and checks (workload.parallelism.cp and section
// workload.context_parallel): the sequence of every micro-batch split over
// cp ranks, as torchtitan's context_parallel runs it (torch.distributed.
// tensor.experimental context_parallel, load balancing on): each sequence
// cut into 2 cp chunks, rank c holding chunks c and 2 cp - 1 - c, so that
// causal attention costs every rank the same. The cp ranks sit between
// dp_shard and tp in the device mesh (exec/mesh_layout.h) and FSDP shards
// over dp_shard x cp (torchtitan's dp_shard_cp), so
// workload.parallelism.shard_group_size counts the cp ranks too.
// Attention's kernels and exchanges: workloads/model/ring_attention.h.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"

namespace clustersim::workloads {

struct WorkloadSpec;

// How a rank gets the other ranks' K and V (torchtitan's
// experimental.context_parallel_rotate_method).
enum class CpRotateMethod {
  kAllGather,  // one all-gather of every rank's K and V before the first step
  kAllToAll,   // a ring: each step passes the K and V it used to the next rank
};
std::string_view cp_rotate_method_name(CpRotateMethod method);  // "allgather", "alltoall"

// The heads of the K and V that attention is handed and the ring moves
// (workload.context_parallel.kv_heads).
enum class CpKvHeads {
  kQuery,  // torchtitan: repeat_kv widens them to the query's heads before SDPA
  kModel,  // the model's KV heads: attention with native GQA (Llama 3's own CP)
};

// Declares workload.parallelism.cp and section workload.context_parallel.
void add_context_parallel_keys(sim::ConfigSchema& schema);

// Reads the keys into `w` and reports what cp cannot split, each at its key:
// cp must divide world_size / (tp x pp), and 2 cp the sequence (load
// balancing); no NO_SHARD (the cp ranks share FSDP's shard group); flash
// attention (the ring runs SDPA's flash kernel). Needs w's strategy, tp, pp,
// seq_len, flash_attention and world_size.
void read_context_parallel(const sim::ConfigValues& values, WorkloadSpec& w,
                           sim::DiagnosticSink& sink);

// After the groups are derived: an HSDP shard group must hold whole cp groups.
void check_cp_shard_group(const sim::ConfigValues& values, const WorkloadSpec& w,
                          sim::DiagnosticSink& sink);

}  // namespace clustersim::workloads
