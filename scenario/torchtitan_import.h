// `clustersim import torchtitan CONFIG.toml`: a torchtitan train config as a
// scenario (docs/import.md has the table of keys). Both layouts torchtitan
// published are read:
//  * until early 2025 (train_configs/llama3_8b.toml; the December 2024
//    benchmark's): [training] batch_size, data_parallel_*_degree,
//    tensor_parallel_degree, compile; [experimental] pipeline_parallel_*,
//    context_parallel_degree, enable_async_tensor_parallel; [float8]
//    enable_float8_linear; [optimizer] fused (default false: foreach AdamW);
//    and April 2024's data_parallel_degree and fp8_linear;
//  * 2025 (torchtitan/models/llama3/train_configs/*.toml): [training]
//    local_batch_size, global_batch_size; [parallelism] with every degree and
//    the pipeline's pipeline_parallel_microbatch_size; [model] converters =
//    ["float8"], [float8] recipe_name; [optimizer] implementation (default
//    fused); [compile] enable.
// Keys the config leaves out take torchtitan's defaults of that layout,
// and the comment beside each written key says so. The GPU count is not in a
// torchtitan config (torchrun's --nproc_per_node x --nnodes gives it): it is
// --gpus, or the product of the degrees when none is -1.
//
// Errors: sim::ConfigError listing every problem at the TOML's
// file:line:col with the key ("training.seq_len"), what was expected and
// what was found: invalid TOML, a value of the wrong type, a model or flavor
// without a preset here, degrees that do not multiply to the GPUs, a batch
// the micro-batches do not divide; then every problem of the written
// scenario (scenario/import_target.h), pointed at the key it came from.
// Thread safety: pure functions (they read the config and the shipped
// profiles).
#pragma once

#include <string>
#include <string_view>

#include "scenario/import_target.h"
#include "scenario/imported_scenario.h"

namespace clustersim::cli {

// The scenario of the config at `config_path`, checked.
ImportedScenario import_torchtitan(const std::string& config_path, const ImportOptions& options);

// The same from the config's text; `config_path` names it in messages and
// comments.
ImportedScenario import_torchtitan_text(std::string_view toml, const std::string& config_path,
                                        const ImportOptions& options);

}  // namespace clustersim::cli
