#include "workloads/model/global_batch.h"

#include <limits>
#include <string>

namespace clustersim::workloads {

namespace {

const char* const kGlobalBatch = "workload.global_batch";
const char* const kGradAccum = "workload.grad_accum";
const char* const kMicrobatches = "workload.pipeline.microbatches";

std::string str(int64_t x) { return std::to_string(x); }

}  // namespace

void add_global_batch_key(sim::ConfigSchema& schema) {
  schema
      .add_key(kGlobalBatch, sim::ValueType::kInt,
               "Sequences per optimizer step over the whole job (torchtitan's "
               "global_batch_size, Megatron-LM's --global-batch-size, NeMo's "
               "model.global_batch_size). The micro-batches per step are derived: global_batch "
               "= local_batch x micro-batches x world_size / (tp x pp x cp); they are grad_accum "
               "(pp 1) or pipeline.microbatches (pp > 1), which may be left out or must agree. "
               "Default: local_batch x those micro-batches x the replicas.")
      .positive();
}

std::optional<int64_t> micro_batches_from_global_batch(const sim::ConfigValues& values,
                                                       const WorkloadSpec& w,
                                                       sim::DiagnosticSink& sink) {
  if (!values.has(kGlobalBatch)) return std::nullopt;
  const int64_t mesh = w.tp * w.pp * w.cp;
  if (w.world_size % mesh != 0) return std::nullopt;
  const int64_t global = values.get_int(kGlobalBatch);
  const int64_t replicas = w.world_size / mesh;
  if (w.local_batch > std::numeric_limits<int64_t>::max() / replicas) {
    sink.add(values.where(kGlobalBatch), kGlobalBatch,
             "expected local_batch " + str(w.local_batch) + " x " + str(replicas) +
                 " data-parallel replicas to fit in 64 bits, found them past it");
    return std::nullopt;
  }
  const int64_t per_micro_batch = w.local_batch * replicas;
  const std::string product = "local_batch " + str(w.local_batch) + " x " + str(replicas) +
                              " data-parallel replicas (world_size " + str(w.world_size) +
                              " / (tp " + str(w.tp) + " x pp " + str(w.pp) + " x cp " + str(w.cp) +
                              "))";
  if (global % per_micro_batch != 0) {
    const int64_t below = global / per_micro_batch * per_micro_batch;
    const bool above_fits = below <= std::numeric_limits<int64_t>::max() - per_micro_batch;
    const std::string nearest = below == 0   ? str(per_micro_batch)
                                : above_fits ? str(below) + " or " + str(below + per_micro_batch)
                                             : str(below);
    sink.add(values.where(kGlobalBatch), kGlobalBatch,
             "expected a multiple of " + product + " = " + str(per_micro_batch) +
                 " sequences, found " + str(global) + " (nearest: " + nearest + ")");
    return std::nullopt;
  }
  const int64_t micro_batches = global / per_micro_batch;
  const char* const count_key = w.pp > 1 ? kMicrobatches : kGradAccum;
  if (values.has(count_key) && !values.entry(count_key).is_default &&
      values.get_int(count_key) != micro_batches) {
    sink.add(values.where(count_key), count_key,
             "expected " + str(micro_batches) + " (global_batch " + str(global) + " / (" + product +
                 ")) or no value, found " + str(values.get_int(count_key)));
  }
  return micro_batches;
}

}  // namespace clustersim::workloads
