#include "workloads/model/context_parallel.h"

#include <array>
#include <string>

#include "config/named_choices.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {

namespace {

using sim::Named;

constexpr std::array<Named<CpRotateMethod>, 2> kRotateMethods = {
    {{CpRotateMethod::kAllGather, "allgather"}, {CpRotateMethod::kAllToAll, "alltoall"}}};
constexpr std::array<Named<CpKvHeads>, 2> kKvHeads = {
    {{CpKvHeads::kQuery, "query"}, {CpKvHeads::kModel, "model"}}};

const char* const kCp = "workload.parallelism.cp";
const char* const kRotate = "workload.context_parallel.rotate_method";
const char* const kKvHeadsKey = "workload.context_parallel.kv_heads";

std::string str(int64_t x) { return std::to_string(x); }

}  // namespace

std::string_view cp_rotate_method_name(CpRotateMethod method) {
  return sim::name_of(kRotateMethods, method);
}

void add_context_parallel_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema
      .add_key(
          kCp, ValueType::kInt,
          "Context-parallel degree: the ranks that split each sequence (torchtitan's "
          "context_parallel_degree; mesh [pp, dp_replicate, dp_shard, cp, tp]). Each rank "
          "holds 2 of 2 cp chunks of every sequence (load balancing for the causal mask) and "
          "computes attention against the others' K and V (workloads/model/ring_attention.h). FSDP "
          "shards over dp_shard x cp, so shard_group_size counts these ranks. Must divide "
          "world_size / (tp x pp), with 2 cp dividing seq_len.")
      .positive()
      .default_to(int64_t{1});
  schema.add_section("workload.context_parallel",
                     "How context parallelism moves K and V (workload.parallelism.cp > 1; "
                     "torch.distributed.tensor.experimental.context_parallel as torchtitan runs "
                     "it).");
  schema
      .add_key(kRotate, ValueType::kEnum,
               "allgather (torchtitan's default): one all-gather of every rank's K and V per "
               "attention, overlapped with the first (local) step only; alltoall: a ring, each "
               "step passing the K and V it used on to the next rank while it computes. The "
               "backward passes the fp32 K and V gradients around the ring either way.")
      .one_of(sim::names(kRotateMethods))
      .default_to(std::string("allgather"));
  schema
      .add_key(kKvHeadsKey, ValueType::kEnum,
               "The heads of the K and V that attention gets and the ring moves: query "
               "(torchtitan's Llama code repeats K and V to the query's heads before SDPA, so "
               "grouped-query attention saves no ring traffic) or model (the model's KV heads, "
               "attention with native GQA, as Llama 3's own context parallelism gathers them).")
      .one_of(sim::names(kKvHeads))
      .default_to(std::string("query"));
}

void read_context_parallel(const sim::ConfigValues& values, WorkloadSpec& w,
                           sim::DiagnosticSink& sink) {
  w.cp = values.get_int(kCp);
  w.cp_rotate = sim::value_of(kRotateMethods, values.get_string(kRotate));
  w.cp_kv_heads = sim::value_of(kKvHeads, values.get_string(kKvHeadsKey));
  if (w.cp == 1) return;
  const int64_t dp = w.world_size / (w.tp * w.pp);
  if (w.world_size % (w.tp * w.pp) != 0 || dp % w.cp != 0) {
    sink.add(values.where(kCp), kCp,
             "expected a divisor of world_size " + str(w.world_size) + " / (tp " + str(w.tp) +
                 " x pp " + str(w.pp) + ") = " + str(dp) + ", found " + str(w.cp));
  } else if (w.seq_len % (2 * w.cp) != 0) {
    sink.add(values.where(kCp), kCp,
             "expected 2 x cp to divide seq_len " + str(w.seq_len) +
                 " (load balancing cuts each sequence into 2 x cp chunks), found " + str(w.cp));
  } else if (w.strategy == ShardingStrategy::kNoShard) {
    sink.add(values.where(kCp), kCp,
             "expected 1 with strategy NO_SHARD (the context-parallel ranks are part of FSDP's "
             "shard group, torchtitan's dp_shard_cp), found " +
                 str(w.cp));
  }
  if (!w.flash_attention) {
    sink.add(values.where("workload.attention"), "workload.attention",
             "expected flash with cp " + str(w.cp) +
                 " (context parallelism runs SDPA's flash kernel block by block), found math");
  }
}

void check_cp_shard_group(const sim::ConfigValues& values, const WorkloadSpec& w,
                          sim::DiagnosticSink& sink) {
  if (w.cp == 1 || w.shard_group_size % w.cp == 0) return;
  const char* const key = values.has("workload.parallelism.shard_group_size")
                              ? "workload.parallelism.shard_group_size"
                              : "workload.parallelism.replica_group_size";
  sink.add(values.where(key), key,
           "expected a shard group of whole context-parallel groups (shard_group_size a "
           "multiple of cp " +
               str(w.cp) + "; FSDP shards over dp_shard x cp), found shard_group_size " +
               str(w.shard_group_size));
}

}  // namespace clustersim::workloads
