// Pipeline parallelism as torchtitan configures it, for the torchtitan
// importer (scenario/torchtitan_import.h): its schedule names, the stages
// per rank they imply, and how torchtitan splits the blocks into stages when
// the config does not say (it moved: December 2024's generate_split_points,
// 2025's generate_llm_fqn_per_model_part).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::cli {

struct TorchtitanSchedule {
  std::string name;          // this project's workload.pipeline.schedule
  bool multi_stage = false;  // several stages per rank (torch's PipelineScheduleMulti)
  std::string note;          // why it is only the nearest schedule here; "" when it is the same
};

// torch.distributed.pipelining's schedule name as torchtitan's config gives
// it, compared without case as get_schedule_class does ("1F1B",
// "Interleaved1F1B", "ZBVZeroBubble", "DualPipeV", mid-2024's
// "interleaved_1f1b"...); nothing for a name torch does not have.
std::optional<TorchtitanSchedule> torchtitan_schedule(std::string_view name);
// The names torchtitan_schedule() knows, for messages.
std::string torchtitan_schedule_names();

// December 2024 (torchtitan/parallelisms/pipelining_utils.py,
// generate_split_points): layers / stages blocks each, the first stage no
// extra, the middle ones one extra each while layers % stages lasts, the
// last the rest. 126 layers in 8 stages: 15, 16 x 6, 15.
std::vector<int64_t> torchtitan_2024_split(int64_t layers, int64_t stages);

// 2025 (generate_llm_fqn_per_model_part): the embedding counts as
// `input_weight` layers and the norm and output as `output_weight`; the
// layers + weights split evenly over the stages, the first (layers + weights)
// % stages stages one more, then the first stage gives up input_weight and
// the last output_weight. 32 layers in 4 stages (weights 1): 8, 9, 8, 7.
// Empty when a stage would hold no block.
std::vector<int64_t> torchtitan_2025_split(int64_t layers, int64_t stages, int64_t input_weight,
                                           int64_t output_weight);

// The blocks per stage that split points ("layers.16", ...: each the first
// block of a stage after the first) make; nothing when one does not name a
// block in 1 .. layers - 1 or they are not increasing.
std::optional<std::vector<int64_t>> split_from_points(int64_t layers,
                                                      const std::vector<std::string>& points);

// "15,16,16,15": the counts as workload.pipeline.layers_per_stage writes them.
std::string layers_per_stage_text(const std::vector<int64_t>& counts);

}  // namespace clustersim::cli
