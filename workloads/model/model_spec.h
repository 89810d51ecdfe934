// The model a training job runs: a decoder-only transformer described by its
// shape (layers, hidden size, attention heads, KV heads, FFN size, vocabulary)
// and its family conventions (activation, norm, biases, position encoding,
// tied embeddings).
//
// Presets carry published shapes (sources beside each in model_spec.cc);
// `custom` takes the shape from the scenario's `workload.custom_model`.
// Families for custom shapes, chosen by `activation`:
//  * swiglu: Llama conventions. RMSNorm (weight only), no linear biases,
//    rotary positions (no parameters), untied output head.
//  * gelu: GPT-3 conventions. LayerNorm (weight and bias), biases on every
//    linear layer, tied output head, but rotary positions: there is no key
//    for the length of a learned position table (for GPT-3 it is 25M of
//    175B parameters).
//  * squared_relu: Nemotron-4 conventions (Parmar et al. 2024,
//    arXiv:2402.16819): relu(x)^2 between the MLP's two matrices,
//    LayerNorm (weight and bias), no linear biases, rotary positions,
//    untied output head.
// `custom_model.tied_embeddings` overrides the family's head convention
// (Megatron-LM's GPT benchmarks untie it, a Llama-family model may tie it).
//
// Units: parameter counts are plain int64 numbers of parameters (not bytes).
// Thread safety: pure functions; ModelSpec is a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_schema.h"
#include "config/config_values.h"

namespace clustersim::workloads {

enum class Activation { kSwiGLU, kGelu, kSquaredRelu };
enum class NormKind { kRmsNorm, kLayerNorm };

struct ModelSpec {
  std::string name;  // preset name or "custom"
  int64_t layers = 0;
  int64_t hidden = 0;    // d_model
  int64_t heads = 0;     // query heads; head_dim = hidden / heads
  int64_t kv_heads = 0;  // key/value heads (GQA); == heads for multi-head attention
  int64_t ffn_hidden = 0;
  int64_t vocab = 0;
  Activation activation = Activation::kSwiGLU;
  NormKind norm = NormKind::kRmsNorm;
  bool linear_bias = false;      // biases on q/k/v/o and MLP projections
  bool tied_embeddings = false;  // output head shares the token embedding
  // Rows of a learned absolute position table (GPT-3: 2048); 0 means rotary
  // positions, which have no parameters.
  int64_t learned_positions = 0;

  int64_t head_dim() const { return hidden / heads; }
};

// The preset names, in declaration order (without "custom").
std::vector<std::string> model_preset_names();
// nullopt for an unknown name (and for "custom").
std::optional<ModelSpec> model_preset(std::string_view name);

// Parameters by FSDP-relevant part. With H = hidden, d = head_dim,
// F = ffn_hidden, V = vocab, L = layers:
//   embedding   = V*H (+ learned_positions*H)
//   block       = attention  H*(heads*d) [q] + 2*H*(kv_heads*d) [k, v] + (heads*d)*H [o]
//               + MLP        3*H*F (SwiGLU: gate, up, down) or 2*H*F (GELU, squared
//                            ReLU: up, down)
//               + norms      2*H (RMSNorm weight) or 2*2*H (LayerNorm weight and bias)
//               + biases     if linear_bias: (heads + 2*kv_heads)*d + H [q,k,v,o]
//                            + F + H [up, down] (+ F for a SwiGLU gate)
//   final_norm  = H (RMSNorm) or 2*H (LayerNorm)
//   output_head = V*H, or 0 when tied to the embedding
//   total       = embedding + L*block + final_norm + output_head
struct ParameterBreakdown {
  int64_t embedding = 0;
  int64_t block = 0;  // one transformer block
  int64_t block_linear = 0;  // its linear layers' weights (attention and MLP; no norms, biases)
  int64_t final_norm = 0;
  int64_t output_head = 0;
  int64_t total = 0;
};

ParameterBreakdown parameter_breakdown(const ModelSpec& model);
int64_t parameter_count(const ModelSpec& model);

// Declares section `workload` (the training job) with key `workload.model`,
// and section `workload.custom_model` with the shape keys used when
// workload.model is custom. No key is required and none has a default:
// scenarios without a training job omit the section, and read_model_spec()
// reports a missing `workload.model`.
// The commands that need a step's workload keys (KeySpec::required_by).
inline constexpr const char* kStepCommands =
    "run, sweep, campaign (without campaign.step_time), export-chakra, kernels";
void add_workload_model_keys(sim::ConfigSchema& schema);

// The model of a scenario. Throws sim::ConfigError listing every problem:
// no workload.model; custom keys missing for `custom` (pointing at
// workload.model) or given with a preset (pointing at each such key);
// hidden not divisible by heads (at heads); heads not divisible by kv_heads
// (at kv_heads).
ModelSpec read_model_spec(const sim::ConfigValues& values);

}  // namespace clustersim::workloads
