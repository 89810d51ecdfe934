#include "workloads/model/moe_spec.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::workloads {

namespace {

// DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437: 671B total, 37B
// activated; the config.json of deepseek-ai/DeepSeek-V3): 61 layers, hidden
// 7168, 128 heads (num_key_value_heads 128: MLA has no KV groups), MLA with
// q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
// qk_rope_head_dim 64, v_head_dim 128, attention_bias false; 256 routed
// experts (n_routed_experts), top 8, 1 shared expert, moe_intermediate_size
// 2048; first_k_dense_replace 3 dense layers of intermediate_size 18432;
// vocab 129280, untied head; num_nextn_predict_layers 1 MTP module. Its
// router (MoEGate, topk_method noaux_tc) keeps an experts-sized
// e_score_correction_bias, which the checkpoint stores.
ModelSpec deepseek_v3() {
  ModelSpec m;
  m.name = "deepseek-v3";
  m.layers = 61;
  m.hidden = 7168;
  m.heads = 128;
  m.kv_heads = 128;
  m.ffn_hidden = 18432;
  m.vocab = 129280;
  m.attention = AttentionKind::kMla;
  m.mla = MlaShape{1536, 512, 128, 64, 128};
  m.experts = 256;
  m.top_k = 8;
  m.shared_experts = 1;
  m.expert_ffn_hidden = 2048;
  m.first_dense_layers = 3;
  m.router_score_correction = true;
  m.mtp_layers = 1;
  return m;
}

// Qwen3 MoE (Qwen Team 2025, arXiv:2505.09388, and the config.json files of
// Qwen/Qwen3-30B-A3B and Qwen/Qwen3-235B-A22B): head_dim 128 whatever the
// hidden size, RMSNorm q_norm and k_norm of head_dim, 128 experts, top 8,
// no shared expert, every layer MoE (decoder_sparse_step 1, mlp_only_layers
// empty, so intermediate_size is never used), router without bias, vocab
// 151936, untied head.
ModelSpec qwen3_moe(std::string name, int64_t layers, int64_t hidden, int64_t heads,
                    int64_t ffn_hidden, int64_t expert_ffn_hidden) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = 4;
  m.ffn_hidden = ffn_hidden;
  m.vocab = 151936;
  m.explicit_head_dim = 128;
  m.qk_norm = true;
  m.experts = 128;
  m.top_k = 8;
  m.expert_ffn_hidden = expert_ffn_hidden;
  return m;
}

// gpt-oss-120b (OpenAI 2025, "gpt-oss-120b & gpt-oss-20b Model Card",
// arXiv:2508.10925, table 1: 116.83B total, 5.13B active; the config.json
// of openai/gpt-oss-120b, which transformers' GptOssConfig takes as its
// defaults): 36 layers, hidden 2880, 64 heads of head_dim 64, 8 KV heads,
// attention_bias true (q, k, v, o), a learned sink logit per head, layers
// alternately sliding-window (128 tokens, even layers) and full; 128
// experts of intermediate_size 2880, experts_per_token 4, no shared expert,
// biases on the router and on every expert's gate_up_proj and down_proj (a
// clamped SwiGLU, parameters as SwiGLU's); vocab 201088 (o200k_harmony),
// untied head.
ModelSpec gpt_oss_120b() {
  ModelSpec m;
  m.name = "gpt-oss-120b";
  m.layers = 36;
  m.hidden = 2880;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 2880;
  m.vocab = 201088;
  m.linear_bias = true;
  m.explicit_head_dim = 64;
  m.attention_sinks = true;
  m.sliding_window = 128;
  m.full_attention_every = 2;
  m.experts = 128;
  m.top_k = 4;
  m.expert_ffn_hidden = 2880;
  m.router_bias = true;
  return m;
}

// Mixtral 8x7B (Jiang et al. 2024, arXiv:2401.04088; Mistral's announcement:
// 46.7B total, 12.9B per token; the config.json of
// mistralai/Mixtral-8x7B-v0.1): Mistral 7B's shape (32 layers, hidden 4096,
// 32 heads, 8 KV heads, vocab 32000, untied head, sliding_window null)
// with 8 experts of intermediate_size 14336, top 2, router without bias.
ModelSpec mixtral_8x7b() {
  ModelSpec m;
  m.name = "mixtral-8x7b";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.vocab = 32000;
  m.experts = 8;
  m.top_k = 2;
  m.expert_ffn_hidden = 14336;
  return m;
}

// Llama 4 Scout (Meta's model card for meta-llama/Llama-4-Scout-17B-16E:
// 17B active, 109B total with the vision encoder; its config.json's
// text_config): 48 layers, hidden 5120, 40 heads of head_dim 128, 8 KV
// heads; every layer MoE (interleave_moe_layer_step 1, so
// intermediate_size_mlp 16384, the dense layers' width, is never used) with
// 16 experts, top 1, and a shared expert, both of intermediate_size 8192;
// router without bias; vocab 202048, untied head. Attention is chunked
// (attention_chunk_size 8192) in three layers of four, full in every fourth
// (the NoPE layers, no_rope_layer_interval 4). Its QK-norm is an L2 norm
// without weights, so qk_norm stays false. The vision encoder and projector
// are not a ModelSpec's.
ModelSpec llama4_scout() {
  ModelSpec m;
  m.name = "llama4-scout";
  m.layers = 48;
  m.hidden = 5120;
  m.heads = 40;
  m.kv_heads = 8;
  m.ffn_hidden = 16384;
  m.vocab = 202048;
  m.explicit_head_dim = 128;
  m.attention_chunk = 8192;
  m.full_attention_every = 4;
  m.experts = 16;
  m.top_k = 1;
  m.shared_experts = 1;
  m.expert_ffn_hidden = 8192;
  return m;
}

const char* const kExperts = "workload.custom_model.experts";
const char* const kTopK = "workload.custom_model.top_k";
const char* const kSharedExperts = "workload.custom_model.shared_experts";
const char* const kExpertFfn = "workload.custom_model.expert_ffn_hidden";
const char* const kSharedExpertFfn = "workload.custom_model.shared_expert_ffn_hidden";
const char* const kFirstDense = "workload.custom_model.first_dense_layers";
const char* const kHeadDim = "workload.custom_model.head_dim";
const char* const kQkNorm = "workload.custom_model.qk_norm";
const char* const kMtpLayers = "workload.custom_model.mtp_layers";
const char* const kKvHeads = "workload.custom_model.kv_heads";
const char* const kHeads = "workload.custom_model.heads";
const char* const kMla = "workload.custom_model.mla";
// q_lora_rank first: it is the one MLA key that may be left out.
constexpr std::array<std::string_view, 5> kMlaKeys = {
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};

std::string str(int64_t x) { return std::to_string(x); }
std::string mla_path(std::string_view key) { return std::string(kMla) + "." + std::string(key); }

// The MLA key the scenario gives first, where an error about the section points.
std::optional<std::string> first_mla_key(const sim::ConfigValues& values) {
  std::optional<std::string> first;
  for (std::string_view key : kMlaKeys) {
    const std::string path = mla_path(key);
    if (!values.has(path)) continue;
    if (!first || values.where(path).line < values.where(*first).line) first = path;
  }
  return first;
}

void read_mla(const sim::ConfigValues& values, ModelSpec& m, sim::DiagnosticSink& sink) {
  const std::optional<std::string> first = first_mla_key(values);
  if (!first) return;
  m.attention = AttentionKind::kMla;
  std::array<int64_t, kMlaKeys.size()> dims{};
  for (std::size_t i = 0; i < kMlaKeys.size(); ++i) {
    const std::string path = mla_path(kMlaKeys[i]);
    if (values.has(path)) {
      dims[i] = values.get_int(path);
    } else if (i > 0) {
      sink.add(values.where(*first), path,
               "expected a value because " + *first +
                   " is given (multi-head latent attention), found nothing");
    }
  }
  m.mla = MlaShape{dims[0], dims[1], dims[2], dims[3], dims[4]};
  if (m.kv_heads != m.heads) {
    sink.add(values.where(kKvHeads), kKvHeads,
             "expected heads (" + str(m.heads) +
                 ") with multi-head latent attention (every head expands its own keys and values "
                 "from the latent), found " +
                 str(m.kv_heads));
  }
  if (values.has(kHeadDim)) {
    sink.add(values.where(kHeadDim), kHeadDim,
             "expected no head_dim with multi-head latent attention (q and k heads are "
             "qk_nope_head_dim + qk_rope_head_dim wide, v heads v_head_dim), found " +
                 str(values.get_int(kHeadDim)));
  }
  if (m.qk_norm) {
    sink.add(values.where(kQkNorm), kQkNorm,
             "expected false with multi-head latent attention (its q_a and kv_a layernorms "
             "normalise the latents), found true");
  }
}

void read_experts(const sim::ConfigValues& values, ModelSpec& m, sim::DiagnosticSink& sink) {
  m.experts = values.has(kExperts) ? values.get_int(kExperts) : 0;
  const std::array<const char*, 5> moe_keys = {kTopK, kSharedExperts, kExpertFfn, kSharedExpertFfn,
                                               kFirstDense};
  if (m.experts == 0) {
    for (const char* key : moe_keys) {
      if (!values.has(key)) continue;
      sink.add(values.where(key), key,
               "expected no value without experts (a dense model has no expert layers), found " +
                   str(values.get_int(key)));
    }
    return;
  }
  const std::string because = "expected a value because experts is " + str(m.experts);
  for (const char* key : {kTopK, kExpertFfn}) {
    if (!values.has(key)) sink.add(values.where(kExperts), key, because + ", found nothing");
  }
  m.top_k = values.has(kTopK) ? values.get_int(kTopK) : 0;
  m.expert_ffn_hidden = values.has(kExpertFfn) ? values.get_int(kExpertFfn) : 0;
  m.shared_experts = values.has(kSharedExperts) ? values.get_int(kSharedExperts) : 0;
  m.shared_expert_ffn_hidden = values.has(kSharedExpertFfn) ? values.get_int(kSharedExpertFfn) : 0;
  m.first_dense_layers = values.has(kFirstDense) ? values.get_int(kFirstDense) : 0;
  if (m.top_k > m.experts) {
    sink.add(values.where(kTopK), kTopK,
             "expected at most the " + str(m.experts) + " experts, found " + str(m.top_k));
  }
  if (m.shared_expert_ffn_hidden > 0 && m.shared_experts == 0) {
    sink.add(values.where(kSharedExpertFfn), kSharedExpertFfn,
             "expected no value without shared_experts, found " + str(m.shared_expert_ffn_hidden));
  }
  if (m.first_dense_layers >= m.layers) {
    sink.add(values.where(kFirstDense), kFirstDense,
             "expected fewer than the " + str(m.layers) +
                 " layers (the rest hold the experts), found " + str(m.first_dense_layers));
  }
}

}  // namespace

std::vector<ModelSpec> moe_presets() {
  return {deepseek_v3(),
          qwen3_moe("qwen3-30b-a3b", 48, 2048, 32, 6144, 768),
          qwen3_moe("qwen3-235b-a22b", 94, 4096, 64, 12288, 1536),
          gpt_oss_120b(),
          mixtral_8x7b(),
          llama4_scout()};
}

void add_moe_model_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema
      .add_key(kHeadDim, ValueType::kInt,
               "Width of each query, key and value head when it is not hidden / heads (Qwen3 "
               "MoE: 128 with hidden 2048 and 32 heads); heads then need not divide hidden.")
      .positive();
  schema.add_key(kQkNorm, ValueType::kBool,
                 "RMSNorm with head_dim weights on queries and on keys (Qwen3); default false.");
  schema
      .add_key(kExperts, ValueType::kInt,
               "Routed experts per MoE layer (0 or left out: a dense model); needs top_k and "
               "expert_ffn_hidden. Counted in parameters; the commands that build a step "
               "refuse it (the step model has no expert layers yet).")
      .non_negative();
  schema.add_key(kTopK, ValueType::kInt, "Routed experts per token; at most experts.").positive();
  schema
      .add_key(kSharedExperts, ValueType::kInt,
               "Experts every token goes through besides its top_k (DeepSeek-V3, Llama 4: 1); "
               "default 0.")
      .non_negative();
  schema.add_key(kExpertFfn, ValueType::kInt, "Inner width of each expert's MLP.").positive();
  schema
      .add_key(kSharedExpertFfn, ValueType::kInt,
               "Inner width of each shared expert's MLP (default: expert_ffn_hidden).")
      .positive();
  schema
      .add_key(kFirstDense, ValueType::kInt,
               "Leading layers with a dense MLP of ffn_hidden in place of experts (DeepSeek-V3: "
               "3); fewer than layers. Default 0.")
      .non_negative();
  schema
      .add_key(kMtpLayers, ValueType::kInt,
               "Multi-token prediction modules (DeepSeek-V3: 1), each a block like the last "
               "layer's, a 2*hidden x hidden projection and two RMSNorms, sharing the embedding "
               "and output head; counted apart from the main model. The commands that build a "
               "step refuse it. Default 0.")
      .non_negative();
  schema.add_section(kMla,
                     "Multi-head latent attention (DeepSeek-V2/V3) in place of grouped-query "
                     "attention: every key but q_lora_rank needed, kv_heads equal to heads.");
  schema
      .add_key(mla_path("q_lora_rank"), ValueType::kInt,
               "Rank of the compressed query (DeepSeek-V3: 1536; 0 or left out: queries "
               "projected from hidden directly, as DeepSeek-V2-Lite).")
      .non_negative();
  schema
      .add_key(mla_path("kv_lora_rank"), ValueType::kInt,
               "Rank of the compressed keys and values, the latent (DeepSeek-V3: 512).")
      .positive();
  schema
      .add_key(mla_path("qk_nope_head_dim"), ValueType::kInt,
               "Per-head query and key width without rotary positions (DeepSeek-V3: 128).")
      .positive();
  schema
      .add_key(mla_path("qk_rope_head_dim"), ValueType::kInt,
               "Per-head query width with rotary positions, and the shared key's (DeepSeek-V3: "
               "64).")
      .positive();
  schema
      .add_key(mla_path("v_head_dim"), ValueType::kInt, "Per-head value width (DeepSeek-V3: 128).")
      .positive();
}

std::vector<std::string> moe_model_key_paths() {
  std::vector<std::string> paths = {kHeadDim,       kQkNorm,    kExperts,         kTopK,
                                    kSharedExperts, kExpertFfn, kSharedExpertFfn, kFirstDense,
                                    kMtpLayers};
  for (std::string_view key : kMlaKeys) paths.push_back(mla_path(key));
  return paths;
}

void read_moe_model_keys(const sim::ConfigValues& values, ModelSpec& m, sim::DiagnosticSink& sink) {
  if (values.has(kHeadDim)) m.explicit_head_dim = values.get_int(kHeadDim);
  if (values.has(kQkNorm)) m.qk_norm = values.get_bool(kQkNorm);
  if (values.has(kMtpLayers)) m.mtp_layers = values.get_int(kMtpLayers);
  read_mla(values, m, sink);
  read_experts(values, m, sink);
}

void check_step_model(const sim::ConfigValues& values, const ModelSpec& model,
                      sim::DiagnosticSink& sink) {
  const std::string expected = "expected a dense model: ";
  const std::string not_yet = " not simulated by the step model yet";
  const bool mla = model.attention == AttentionKind::kMla;
  if (model.name != "custom") {
    std::vector<std::string> parts;
    if (model.experts > 0) parts.emplace_back("expert layers (MoE)");
    if (mla) parts.emplace_back("multi-head latent attention (MLA)");
    if (model.mtp_layers > 0) parts.emplace_back("multi-token prediction (MTP) modules");
    if (parts.empty()) return;
    std::string list = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) {
      list += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
    }
    const bool plural = parts.size() > 1 || model.experts > 0 || model.mtp_layers > 0;
    std::string found = "found '" + model.name + "'";
    if (model.experts > 0) {
      found += " (" + str(model.experts) + " experts, top " + str(model.top_k) + ")";
    }
    sink.add(values.where("workload.model"), "workload.model",
             expected + list + (plural ? " are" : " is") + not_yet + ", " + found);
    return;
  }
  if (model.experts > 0) {
    sink.add(values.where(kExperts), kExperts,
             expected + "expert layers (MoE) are" + not_yet + ", found " + str(model.experts) +
                 " experts");
  }
  if (mla) {
    const std::string at = first_mla_key(values).value_or(kHeads);
    sink.add(values.where(at), at,
             expected + "multi-head latent attention (MLA) is" + not_yet + ", found " + kMla);
  }
  if (model.mtp_layers > 0) {
    sink.add(values.where(kMtpLayers), kMtpLayers,
             expected + "multi-token prediction (MTP) modules are" + not_yet + ", found " +
                 str(model.mtp_layers));
  }
}

}  // namespace clustersim::workloads
