// Model shapes beyond the dense Llama and GPT families (ModelSpec's MoE,
// MLA, MTP, head_dim and QK-norm fields): the presets that have them, with
// their published sources, and the `workload.custom_model` keys that give
// them to a custom model.
//
// Only parameter counts know these shapes so far (parameter_breakdown());
// kernels, memory and schedules model dense blocks. So the commands that
// build a step refuse a model with experts, MLA or MTP modules
// (check_step_model()) rather than simulate a dense model in its place.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"
#include "workloads/model/model_spec.h"

namespace clustersim::workloads {

// The presets with experts (deepseek-v3, qwen3-30b-a3b, qwen3-235b-a22b,
// gpt-oss-120b, mixtral-8x7b, llama4-scout), in declaration order; they
// follow the dense ones in model_preset_names().
std::vector<ModelSpec> moe_presets();

// Declares the optional keys of `workload.custom_model` for these shapes:
// head_dim, qk_norm, experts, top_k, shared_experts, expert_ffn_hidden,
// shared_expert_ffn_hidden, first_dense_layers, mtp_layers and the section
// `workload.custom_model.mla` (q_lora_rank, kv_lora_rank, qk_nope_head_dim,
// qk_rope_head_dim, v_head_dim). None has a default: left out, a shape is
// dense.
void add_moe_model_keys(sim::ConfigSchema& schema);
// Their full paths, for the check that a preset takes no custom keys.
std::vector<std::string> moe_model_key_paths();

// Reads those keys into `m` (a custom model with its dense keys read) and
// reports every problem at its key: top_k, shared_experts,
// expert_ffn_hidden, shared_expert_ffn_hidden or first_dense_layers
// without experts; top_k or expert_ffn_hidden missing with experts (at
// experts); top_k above experts; first_dense_layers not below layers;
// shared_expert_ffn_hidden without shared_experts; an incomplete mla section
// (at its first key); kv_heads other than heads, head_dim or qk_norm with
// MLA.
void read_moe_model_keys(const sim::ConfigValues& values, ModelSpec& m, sim::DiagnosticSink& sink);

// For each part of `model` that the step model does not simulate yet (expert
// layers, multi-head latent attention, MTP modules), an error "expected a
// dense model: ..." at its custom key, or at workload.model for a preset.
void check_step_model(const sim::ConfigValues& values, const ModelSpec& model,
                      sim::DiagnosticSink& sink);

}  // namespace clustersim::workloads
