#include "workloads/model/pipeline_config.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/named_choices.h"
#include "config/text_fields.h"
#include "workloads/model/pipeline_stages.h"

namespace clustersim::workloads {

namespace {

using sim::name_of;
using sim::Named;
using sim::names;
using sim::value_of;

constexpr std::array<Named<PipelineSchedule>, 5> kPipelineSchedules = {
    {{PipelineSchedule::kGpipe, "gpipe"},
     {PipelineSchedule::k1F1B, "1f1b"},
     {PipelineSchedule::kInterleaved1F1B, "interleaved_1f1b"},
     {PipelineSchedule::kZbv, "zbv"},
     {PipelineSchedule::kDualPipeV, "dualpipev"}}};

// workload.pipeline.grad_reduction: whether each unit is reduced during the
// last backward (Megatron-Core) rather than after it (torchtitan).
constexpr std::array<Named<bool>, 2> kGradReductions = {
    {{false, "after_last_backward"}, {true, "during_last_backward"}}};

const char* const kPp = "workload.parallelism.pp";
const char* const kGradAccum = "workload.grad_accum";
const char* const kPipelineSchedule = "workload.pipeline.schedule";
const char* const kMicrobatches = "workload.pipeline.microbatches";
const char* const kGlobalBatch = "workload.global_batch";
const char* const kVirtualStages = "workload.pipeline.virtual_stages";
const char* const kLayersPerStage = "workload.pipeline.layers_per_stage";
const char* const kGradReduction = "workload.pipeline.grad_reduction";

std::string str(int64_t x) { return std::to_string(x); }

// workload.pipeline.layers_per_stage: pp x virtual_stages positive counts
// summing to the layers.
void read_layer_split(const sim::ConfigValues& values, WorkloadSpec& w, bool model_ok,
                      sim::DiagnosticSink& sink) {
  const std::string text = values.get_string(kLayersPerStage);
  std::vector<int64_t> counts;
  bool ok = true;
  for (const sim::TextField& field : sim::split_commas(text)) {
    const std::optional<int64_t> n = sim::parse_number<int64_t>(field.text);
    ok = ok && n && *n >= 1;
    counts.push_back(n.value_or(0));
  }
  const int64_t chunks = w.pp * w.virtual_stages;
  int64_t sum = 0;
  for (const int64_t n : counts) sum += n;
  if (!ok) {
    sink.add(values.where(kLayersPerStage), kLayersPerStage,
             "expected comma-separated block counts of at least 1, found '" + text + "'");
  } else if (static_cast<int64_t>(counts.size()) != chunks) {
    sink.add(values.where(kLayersPerStage), kLayersPerStage,
             "expected " + str(chunks) + " counts (pp " + str(w.pp) + " x virtual_stages " +
                 str(w.virtual_stages) + "), found " + str(static_cast<int64_t>(counts.size())));
  } else if (model_ok && sum != w.model.layers) {
    sink.add(values.where(kLayersPerStage), kLayersPerStage,
             "expected counts summing to the model's " + str(w.model.layers) + " layers, found " +
                 str(sum));
  } else {
    w.layers_per_chunk = std::move(counts);
  }
}

}  // namespace

// Pipeline parallelism: pp splits the stages' ranks and the layers; its
// micro-batches take grad_accum's place.
void check_pipeline(const sim::ConfigValues& values, WorkloadSpec& w, bool model_ok,
                    std::optional<int64_t> from_global_batch, sim::DiagnosticSink& sink) {
  if (w.pp == 1) {
    if (values.has(kMicrobatches)) {
      sink.add(values.where(kMicrobatches), kMicrobatches,
               "expected no value with pp 1 (micro-batches without a pipeline are " +
                   std::string(kGradAccum) + "), found " + str(values.get_int(kMicrobatches)));
    }
    if (w.virtual_stages != 1) {
      sink.add(values.where(kVirtualStages), kVirtualStages,
               "expected 1 with pp 1 (no pipeline), found " + str(w.virtual_stages));
    }
    if (w.reduce_during_last_backward) {
      sink.add(values.where(kGradReduction), kGradReduction,
               "expected " + std::string(name_of(kGradReductions, false)) +
                   " with pp 1 (without a pipeline, workload.fsdp.no_sync says when gradients "
                   "are reduced), found " +
                   std::string(name_of(kGradReductions, true)));
    }
    if (values.has(kLayersPerStage)) {
      sink.add(values.where(kLayersPerStage), kLayersPerStage,
               "expected no value with pp 1 (no pipeline), found '" +
                   values.get_string(kLayersPerStage) + "'");
    }
    return;
  }
  if ((w.world_size / w.tp) % w.pp != 0 || w.world_size % w.tp != 0) {
    sink.add(values.where(kPp), kPp,
             "expected a divisor of world_size " + str(w.world_size) + " / tp " + str(w.tp) +
                 " = " + str(w.world_size / w.tp) + ", found " + str(w.pp));
  } else if (model_ok && w.pp * w.virtual_stages > w.model.layers) {
    sink.add(values.where(kPp), kPp,
             "expected pp x virtual_stages " + str(w.virtual_stages) + " at most the model's " +
                 str(w.model.layers) + " layers (a chunk holds at least one block), found " +
                 str(w.pp));
  }
  const bool interleaved = w.pipeline_schedule == PipelineSchedule::kInterleaved1F1B;
  const bool zbv = v_shaped(w.pipeline_schedule);  // zbv or dualpipev
  const bool chunks_ok = zbv           ? w.virtual_stages == 2
                         : interleaved ? w.virtual_stages >= 2
                                       : w.virtual_stages == 1;
  if (!chunks_ok) {
    sink.add(values.where(kVirtualStages), kVirtualStages,
             std::string(zbv           ? "expected 2"
                         : interleaved ? "expected at least 2"
                                       : "expected 1") +
                 " with schedule " + values.get_string(kPipelineSchedule) + ", found " +
                 str(w.virtual_stages));
  }
  if (zbv && w.torch_compile) {
    sink.add(values.where("workload.torch_compile"), "workload.torch_compile",
             "expected false with schedule " + values.get_string(kPipelineSchedule) +
                 " (torch.distributed.pipelining does not split the backward into input and "
                 "weight gradients under torch.compile), found true");
  }
  if (w.grad_accum != 1) {
    sink.add(values.where(kGradAccum), kGradAccum,
             "expected 1 with pp " + str(w.pp) + " (the pipeline's micro-batches are " +
                 kMicrobatches + "), found " + str(w.grad_accum));
  }
  if (w.cpu_offload) {
    sink.add(values.where("workload.cpu_offload"), "workload.cpu_offload",
             "expected false with pp " + str(w.pp) +
                 " (CPU offload under pipeline parallelism is not modelled), found true");
  }
  w.grad_accum =
      values.has(kMicrobatches) ? values.get_int(kMicrobatches) : from_global_batch.value_or(w.pp);
  // Where the count came from: the key, the global batch, or pp's default.
  const char* const count_key = values.has(kMicrobatches) ? kMicrobatches
                                : from_global_batch      ? kGlobalBatch
                                                         : kPp;
  if (values.has(kLayersPerStage)) read_layer_split(values, w, model_ok, sink);
  if (interleaved && w.grad_accum % w.pp != 0) {
    sink.add(values.where(count_key), kMicrobatches,
             "expected a multiple of pp " + str(w.pp) +
                 " with interleaved_1f1b (micro-batches run in rounds of one per stage), found " +
                 str(w.grad_accum));
  }
  if (w.pipeline_schedule == PipelineSchedule::kDualPipeV && w.grad_accum < 2 * w.pp) {
    sink.add(values.where(count_key), kMicrobatches,
             "expected at least 2 x pp = " + str(2 * w.pp) +
                 " with dualpipev (its warm-up sends 2 (pp - 1) micro-batches down the V before "
                 "the first backward), found " +
                 str(w.grad_accum));
  }
}

void add_pipeline_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema.add_section(
      "workload.pipeline",
      "Pipeline parallelism's schedule (workload.parallelism.pp > 1; "
      "workloads/model/pipeline_stages.h): activations and their gradients cross stages by "
      "NCCL send/recv; FSDP inside a stage keeps its blocks gathered from their "
      "first forward to their last backward and reduces gradients once, in or "
      "after the last micro-batch (grad_reduction).");
  schema
      .add_key(kPipelineSchedule, ValueType::kEnum,
               "gpipe: every micro-batch's forward, then every backward; 1f1b: stage s runs pp - "
               "1 - s warm-up forwards, then one forward and one backward in turn; "
               "interleaved_1f1b: the same over virtual_stages chunks per rank, micro-batches in "
               "rounds of pp; zbv: zero bubble in a V (2 chunks per rank, s and 2 pp - 1 - s, the "
               "backward split into input and weight gradients, which fill the bubbles; eager "
               "only); dualpipev: DeepSeek's DualPipe cut in half (the same V, at least 2 pp "
               "micro-batches, forwards paired with the other chunk's backwards; eager only) "
               "(torch.distributed.pipelining's ScheduleGPipe, Schedule1F1B, "
               "ScheduleInterleaved1F1B, ScheduleZBVZeroBubble and ScheduleDualPipeV).")
      .one_of(names(kPipelineSchedules))
      .default_to(std::string("1f1b"));
  schema
      .add_key(kMicrobatches, ValueType::kInt,
               "Micro-batches of local_batch sequences each per step (torchtitan: local_batch_size "
               "/ pipeline_parallel_microbatch_size); default: derived from global_batch when "
               "that is given, else pp. Replaces grad_accum, which stays 1.")
      .positive();
  schema
      .add_key(kVirtualStages, ValueType::kInt,
               "Model chunks per rank (interleaved_1f1b: at least 2; zbv, dualpipev: 2): the "
               "layers split into pp x virtual_stages chunks, rank-stage s holding chunks s, s + "
               "pp, ... (zbv, dualpipev: s and 2 pp - 1 - s); 1 for gpipe and 1f1b.")
      .positive()
      .default_to(int64_t{1});
  schema
      .add_key(kGradReduction, ValueType::kEnum,
               "When a stage reduces its gradients: after_last_backward, every unit after the "
               "stage's last backward, in module order (torch.distributed.pipelining with FSDP2, "
               "torchtitan); during_last_backward, each unit as the last micro-batch's backward "
               "produces its gradients, overlapped with the rest of it (Megatron-Core's "
               "--overlap-grad-reduce).")
      .one_of(names(kGradReductions))
      .default_to(std::string("after_last_backward"));
  schema.add_key(kLayersPerStage, ValueType::kString,
                 "Blocks per chunk in model order, comma-separated (e.g. \"7,8,8,9\" for pp 4: "
                 "a lighter first stage for the embedding); pp x virtual_stages counts of at "
                 "least 1 summing to the layers. Default: the even split.");
}

void read_pipeline_keys(const sim::ConfigValues& values, WorkloadSpec& w) {
  w.pipeline_schedule = value_of(kPipelineSchedules, values.get_string(kPipelineSchedule));
  w.virtual_stages = values.get_int(kVirtualStages);
  w.reduce_during_last_backward = value_of(kGradReductions, values.get_string(kGradReduction));
}

}  // namespace clustersim::workloads
