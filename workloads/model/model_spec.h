// The model a training job runs: a decoder-only transformer described by its
// shape (layers, hidden size, attention heads, KV heads, FFN size, vocabulary)
// and its family conventions (activation, norm, biases, position encoding,
// tied embeddings).
//
// Presets carry published shapes (sources beside each in model_spec.cc, and
// in moe_spec.cc for the mixture-of-experts ones);
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
// Beyond the dense families (moe_spec.h declares their keys and presets):
// mixture-of-experts MLPs, multi-head latent attention (DeepSeek-V2/V3),
// multi-token prediction modules, head widths other than hidden / heads,
// QK-norm, attention sinks and local (sliding-window or chunked) attention.
// Every such field's zero / false is the model as before (GQA, head_dim
// hidden / heads, dense MLPs), so a dense spec reads and counts as before.
// Only the parameter counts know these shapes so far: read_workload_spec()
// refuses a model with experts, MLA or MTP to the commands that build a step.
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
enum class AttentionKind {
  kGqa,  // grouped-query (multi-head when kv_heads == heads) attention
  kMla,  // multi-head latent attention: low-rank compressed queries, keys and values
};

// Multi-head latent attention (DeepSeek-V2 section 2.1; DeepSeek-V3's
// config.json: q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
// qk_rope_head_dim 64, v_head_dim 128). Widths in elements.
struct MlaShape {
  int64_t q_lora_rank = 0;       // 0: queries projected from hidden directly (V2-Lite)
  int64_t kv_lora_rank = 0;      // the compressed KV latent
  int64_t qk_nope_head_dim = 0;  // per head, without rotary positions
  int64_t qk_rope_head_dim = 0;  // per head with rotary positions (the key's is shared)
  int64_t v_head_dim = 0;
};

struct ModelSpec {
  std::string name;  // preset name or "custom"
  int64_t layers = 0;
  int64_t hidden = 0;      // d_model
  int64_t heads = 0;       // query heads; head_dim() wide
  int64_t kv_heads = 0;    // key/value heads (GQA); == heads for multi-head attention
  int64_t ffn_hidden = 0;  // MLP width of a dense layer (of first_dense_layers with experts)
  int64_t vocab = 0;
  Activation activation = Activation::kSwiGLU;
  NormKind norm = NormKind::kRmsNorm;
  // Biases on q/k/v/o and on MLP projections (every expert's too).
  bool linear_bias = false;
  bool tied_embeddings = false;  // output head shares the token embedding
  // Rows of a learned absolute position table (GPT-3: 2048); 0 means rotary
  // positions, which have no parameters.
  int64_t learned_positions = 0;

  // Per-head width of q, k and v when it is not hidden / heads (Qwen3 MoE:
  // 128, GPT-OSS: 64); 0 derives it from hidden / heads.
  int64_t explicit_head_dim = 0;
  bool qk_norm = false;  // RMSNorm weights of head_dim on queries and on keys (Qwen3)
  AttentionKind attention = AttentionKind::kGqa;
  MlaShape mla;                  // when attention is kMla
  bool attention_sinks = false;  // one learned logit per head and layer (GPT-OSS)
  // Local attention: with sliding_window (GPT-OSS: 128) or attention_chunk
  // (Llama 4: 8192) tokens, every layer but each full_attention_every-th
  // (layers full_attention_every - 1, 2 * full_attention_every - 1, ...)
  // attends locally. It changes attention FLOPs, not parameters.
  int64_t sliding_window = 0;        // tokens each query sees back
  int64_t attention_chunk = 0;       // tokens per chunk a query sees within
  int64_t full_attention_every = 0;  // 0: no layer attends fully when local attention is set

  // Mixture of experts: layers first_dense_layers.. hold, in place of the
  // MLP, `experts` routed SwiGLU (or GELU) MLPs of expert_ffn_hidden, of
  // which a linear router picks top_k per token, and shared_experts that
  // every token goes through. experts == 0 is a dense model.
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t shared_experts = 0;
  int64_t expert_ffn_hidden = 0;
  int64_t shared_expert_ffn_hidden = 0;  // 0: expert_ffn_hidden (DeepSeek, Llama 4)
  int64_t first_dense_layers = 0;        // DeepSeek-V3: 3 layers with ffn_hidden 18432
  bool router_bias = false;              // the router's linear has a bias (GPT-OSS)
  // An experts-sized bias added to the routing scores to balance load
  // (DeepSeek-V3's aux-loss-free e_score_correction_bias).
  bool router_score_correction = false;
  // Multi-token prediction modules (DeepSeek-V3: 1), each a transformer
  // block, a 2H x H projection and two RMSNorms, sharing the embedding and
  // the output head.
  int64_t mtp_layers = 0;

  int64_t head_dim() const {
    if (attention == AttentionKind::kMla) return mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    return explicit_head_dim > 0 ? explicit_head_dim : hidden / heads;
  }
  int64_t moe_layers() const { return experts > 0 ? layers - first_dense_layers : 0; }
  int64_t shared_expert_width() const {
    return shared_expert_ffn_hidden > 0 ? shared_expert_ffn_hidden : expert_ffn_hidden;
  }
  // Whether layer `layer` (0-based) attends locally (a window or a chunk).
  bool local_attention(int64_t layer) const;
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
// Attention beyond that (in `attention`, and so in every block):
//   qk_norm     + 2*d
//   sinks       + heads
//   MLA         replaces q, k, v, o (DeepSeek-V3's modeling code; n = heads,
//               r = qk_rope_head_dim, c = qk_nope_head_dim + r):
//               H*q_lora + q_lora [q_a_proj, q_a_layernorm] + q_lora*n*c [q_b_proj]
//               (H*n*c [q_proj] without q_lora)
//               + H*(kv_lora + r) + kv_lora [kv_a_proj_with_mqa, kv_a_layernorm]
//               + kv_lora*n*(qk_nope + v_head) [kv_b_proj] + n*v_head*H [o_proj]
//               (+ q_lora + kv_lora + r + H biases with linear_bias)
// With experts E, top_k k, shared experts S of width Fs, expert width Fe and
// D = first_dense_layers:
//   an expert   = the MLP above with Fe for F (with its biases if linear_bias)
//   routed_experts = E experts;  shared_experts = S experts of width Fs
//   router      = H*E (+ E with router_bias) (+ E with router_score_correction)
//   block       = attention + norms + router + routed_experts + shared_experts
//                 (the block of layers D..L-1)
//   dense_block = the dense block above with F, for layers 0..D-1; dense_ffn its MLP
//   total       = embedding + D*dense_block + (L-D)*block + final_norm + output_head
//   mtp         = mtp_layers * (block + 2*H*H [eh_proj] + 2 norms [enorm, hnorm]),
//                 not in total: the main model is what publishers count
//                 (DeepSeek-V3: 671B; the checkpoint with the MTP module 685B)
//   active      = total - (L-D) * (E - k) * expert: what one token's forward
//                 touches, the embedding table and the output head included
//                 (a dense model: total).
// Publishers differ on the embedding: Mistral (Mixtral 12.9B), Qwen (3.3B,
// 22B) and Meta (Llama 4 17B) count it in the active figure; DeepSeek
// (V3's 37B, 36.6B in its README_WEIGHTS) and OpenAI (GPT-OSS's 5.13B) count
// active - embedding (a lookup reads one row of the table; the untied output
// head they count).
struct ParameterBreakdown {
  int64_t embedding = 0;
  int64_t block = 0;         // one transformer block (an MoE block with experts)
  int64_t block_linear = 0;  // its linear layers' weights (attention and MLP, the router and
                             // every expert with experts; no norms, biases)
  int64_t final_norm = 0;
  int64_t output_head = 0;
  int64_t total = 0;  // the main model, without MTP modules

  int64_t attention = 0;       // one layer's attention: projections, their biases and norms, sinks
  int64_t routed_experts = 0;  // one MoE layer's routed experts, all E of them
  int64_t shared_experts = 0;  // one MoE layer's shared experts
  int64_t router = 0;          // one MoE layer's router
  int64_t dense_block = 0;     // a block of the first_dense_layers (0 without)
  int64_t dense_ffn = 0;       // its MLP
  int64_t mtp = 0;             // every MTP module, without the shared embedding and head
  int64_t active = 0;          // per token, embedding included (see above)
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
// hidden not divisible by heads when head_dim is not given (at heads);
// heads not divisible by kv_heads (at kv_heads); and the MoE, MLA and MTP
// keys' problems (read_moe_model_keys() in moe_spec.h).
ModelSpec read_model_spec(const sim::ConfigValues& values);

}  // namespace clustersim::workloads
