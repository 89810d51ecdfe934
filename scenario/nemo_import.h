// `clustersim import nemo CONFIG.yaml`: a NeMo / Megatron-Core recipe (the
// megatron_gpt_config.yaml layout of NeMo 1.x and NeMo-Framework-Launcher's
// conf/training/*.yaml: trainer.num_nodes, devices, precision; model.* with
// the batch, the parallel sizes, the transformer's shape and options,
// model.optim) as a scenario (docs/import.md has the table of keys). OmegaConf
// interpolations are resolved first (config/omegaconf_interpolation.h).
//
// The model is written as workload.custom_model with the recipe's shape. Its
// vocabulary is the tokenizer's (GPT2BPETokenizer, the Llama 2 and 3
// tokenizers), padded as Megatron pads it (to a multiple of
// make_vocab_size_divisible_by x tensor_model_parallel_size); for another
// tokenizer --set workload.custom_model.vocab=N gives it. Megatron-Core's
// execution is mapped as scenarios/published/megatron_gpt_h100.yaml models
// it: its distributed optimizer as SHARD_GRAD_OP with gradients accumulated
// unsharded and reduced once a step (fsdp.no_sync), in fp32 for bf16
// training; Transformer Engine's fused kernels as torch.compile's fusion;
// --tp-comm-overlap (ub_tp_comm_overlap) as async TP; its [seq, batch,
// hidden] activations (tp_sequence_dim 0).
//
// Errors: sim::ConfigError listing every problem at the YAML's
// file:line:col with the key ("model.micro_batch_size"), what was expected
// and what was found; then every problem of the written scenario
// (scenario/import_target.h), pointed at the key it came from.
// Thread safety: pure functions (they read the config and the shipped
// profiles).
#pragma once

#include <string>
#include <string_view>

#include "scenario/import_target.h"
#include "scenario/imported_scenario.h"

namespace clustersim::cli {

// The scenario of the recipe at `config_path`, checked.
ImportedScenario import_nemo(const std::string& config_path, const ImportOptions& options);

// The same from the recipe's text; `config_path` names it in messages.
ImportedScenario import_nemo_text(std::string_view yaml, const std::string& config_path,
                                  const ImportOptions& options);

}  // namespace clustersim::cli
