#include "workloads/model/model_spec.h"

#include <array>
#include <span>
#include <string>
#include <utility>

#include "config/config_error.h"
#include "workloads/model/moe_spec.h"

namespace clustersim::workloads {

namespace {

// Llama conventions: SwiGLU, RMSNorm, no biases, rotary, untied head (the
// ModelSpec defaults).
ModelSpec llama(std::string name, int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads,
                int64_t ffn_hidden, int64_t vocab) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn_hidden;
  m.vocab = vocab;
  return m;
}

ModelSpec gpt3_175b() {
  ModelSpec m;
  m.name = "gpt3-175b";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = int64_t{4} * 12288;
  m.vocab = 50257;
  m.activation = Activation::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.linear_bias = true;
  m.tied_embeddings = true;
  m.learned_positions = 2048;
  return m;
}

const std::vector<ModelSpec>& presets() {
  static const std::vector<ModelSpec> kPresets = {
      // Llama 2 (Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned
      // Chat Models", table 1 and the released config.json files): 7B and 13B
      // use multi-head attention; 70B uses GQA with 8 KV heads. Vocab 32000.
      llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000),
      llama("llama2-13b", 40, 5120, 40, 40, 13824, 32000),
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000),
      // Llama 3 (Llama Team 2024, "The Llama 3 Herd of Models", table 3): all
      // GQA with 8 KV heads. The table's vocabulary is 128,000; the released
      // config.json (and so the embedding matrix) has 128256 = 128000 + 256
      // reserved special tokens, which is what the weights hold.
      llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256),
      llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256),
      llama("llama3-405b", 126, 16384, 128, 8, 53248, 128256),
      // GPT-3 175B (Brown et al. 2020, "Language Models are Few-Shot
      // Learners", table 2.1: 96 layers, d_model 12288, 96 heads of 128,
      // FFN 4 * d_model, context 2048). GPT-2 conventions (Radford et al.
      // 2019): BPE vocabulary 50257, learned positions, LayerNorm, biased
      // linear layers, output head tied to the token embedding.
      gpt3_175b(),
  };
  static const std::vector<ModelSpec> kAll = [] {
    std::vector<ModelSpec> all = kPresets;
    for (ModelSpec& m : moe_presets()) all.push_back(std::move(m));
    return all;
  }();
  return kAll;
}

// The custom model's keys: the first kRequiredCustomKeys are needed, the
// rest may be left out (the family's convention then holds).
constexpr std::array<std::string_view, 8> kCustomKeys = {
    "layers", "hidden",     "heads",          "kv_heads", "ffn_hidden",
    "vocab",  "activation", "tied_embeddings"};
constexpr std::size_t kRequiredCustomKeys = 7;

std::string custom_path(std::string_view key) {
  return "workload.custom_model." + std::string(key);
}

std::vector<std::string> model_choices() {
  std::vector<std::string> names = model_preset_names();
  names.emplace_back("custom");
  return names;
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const ModelSpec& m : presets()) names.push_back(m.name);
  return names;
}

std::optional<ModelSpec> model_preset(std::string_view name) {
  for (const ModelSpec& m : presets()) {
    if (m.name == name) return m;
  }
  return std::nullopt;
}

namespace {

// A part of a block: its linear layers' weights and everything else it holds
// (biases; for attention also MLA's and QK-norm's norms and sinks).
struct PartParameters {
  int64_t linear = 0;
  int64_t other = 0;
};

PartParameters attention_parameters(const ModelSpec& model) {
  const int64_t h = model.hidden;
  const int64_t n = model.heads;
  PartParameters a;
  if (model.attention == AttentionKind::kMla) {
    const MlaShape& mla = model.mla;
    const int64_t qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    const int64_t q =
        mla.q_lora_rank > 0 ? h * mla.q_lora_rank + mla.q_lora_rank * n * qk : h * n * qk;
    a.linear = q + h * (mla.kv_lora_rank + mla.qk_rope_head_dim) +
               mla.kv_lora_rank * n * (mla.qk_nope_head_dim + mla.v_head_dim) +
               n * mla.v_head_dim * h;
    a.other = mla.q_lora_rank + mla.kv_lora_rank;  // q_a_layernorm, kv_a_layernorm
    // DeepSeek's attention_bias puts biases on q_a_proj, kv_a_proj_with_mqa and o_proj.
    if (model.linear_bias) a.other += mla.q_lora_rank + mla.kv_lora_rank + mla.qk_rope_head_dim + h;
  } else {
    const int64_t q_width = n * model.head_dim();
    const int64_t kv_width = model.kv_heads * model.head_dim();
    a.linear = h * q_width + 2 * h * kv_width + q_width * h;
    if (model.linear_bias) a.other += q_width + 2 * kv_width + h;
    if (model.qk_norm) a.other += 2 * model.head_dim();
  }
  if (model.attention_sinks) a.other += n;
  return a;
}

// An MLP of width `width`: a dense layer's, or one expert.
PartParameters mlp_parameters(const ModelSpec& model, int64_t width) {
  const bool swiglu = model.activation == Activation::kSwiGLU;
  PartParameters m;
  m.linear = (swiglu ? 3 : 2) * model.hidden * width;
  if (model.linear_bias) m.other = (swiglu ? 2 * width : width) + model.hidden;
  return m;
}

int64_t sum(const PartParameters& p) { return p.linear + p.other; }

}  // namespace

bool ModelSpec::local_attention(int64_t layer) const {
  if (sliding_window == 0 && attention_chunk == 0) return false;
  return full_attention_every == 0 || (layer + 1) % full_attention_every != 0;
}

ParameterBreakdown parameter_breakdown(const ModelSpec& model) {
  const int64_t h = model.hidden;
  const int64_t norm_params = model.norm == NormKind::kRmsNorm ? h : 2 * h;
  const PartParameters attention = attention_parameters(model);
  const PartParameters mlp = mlp_parameters(model, model.ffn_hidden);

  ParameterBreakdown p;
  p.embedding = model.vocab * h + model.learned_positions * h;
  p.attention = sum(attention);
  const int64_t dense_block = p.attention + sum(mlp) + 2 * norm_params;
  p.final_norm = norm_params;
  p.output_head = model.tied_embeddings ? 0 : model.vocab * h;
  if (model.experts == 0) {
    p.block = dense_block;
    p.block_linear = attention.linear + mlp.linear;
    p.total = p.embedding + model.layers * p.block + p.final_norm + p.output_head;
    p.active = p.total;
  } else {
    const PartParameters expert = mlp_parameters(model, model.expert_ffn_hidden);
    const PartParameters shared = mlp_parameters(model, model.shared_expert_width());
    p.routed_experts = model.experts * sum(expert);
    p.shared_experts = model.shared_experts * sum(shared);
    p.router = model.experts * h + (model.router_bias ? model.experts : 0) +
               (model.router_score_correction ? model.experts : 0);
    p.block = p.attention + p.routed_experts + p.shared_experts + p.router + 2 * norm_params;
    p.block_linear = attention.linear + model.experts * expert.linear +
                     model.shared_experts * shared.linear + model.experts * h;
    if (model.first_dense_layers > 0) {
      p.dense_block = dense_block;
      p.dense_ffn = sum(mlp);
    }
    p.total = p.embedding + model.first_dense_layers * p.dense_block +
              model.moe_layers() * p.block + p.final_norm + p.output_head;
    p.active = p.total - model.moe_layers() * (model.experts - model.top_k) * sum(expert);
  }
  // DeepSeek-V3's eh_proj (no bias) and its enorm and hnorm.
  p.mtp = model.mtp_layers * (p.block + 2 * h * h + 2 * norm_params);
  return p;
}

int64_t parameter_count(const ModelSpec& model) { return parameter_breakdown(model).total; }

void add_workload_model_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema.add_section(
      "workload", "The training job: model, batch, parallelism (FSDP/HSDP) and PyTorch options.");
  schema
      .add_key("workload.model", ValueType::kEnum,
               "Model preset (published shapes), or custom (see workload.custom_model). The "
               "mixture-of-experts presets, deepseek-v3 onwards, are not simulated yet: the "
               "commands that build a step refuse them.")
      .one_of(model_choices())
      .required_by(kStepCommands);

  schema.add_section(
      "workload.custom_model",
      "The model when workload.model is custom (layers, hidden, heads, kv_heads, ffn_hidden, "
      "vocab and activation needed; the rest optional).");
  schema.add_key(custom_path("layers"), ValueType::kInt, "Transformer blocks.").positive();
  schema.add_key(custom_path("hidden"), ValueType::kInt, "Model width d_model.").positive();
  schema
      .add_key(custom_path("heads"), ValueType::kInt,
               "Query heads; must divide hidden unless head_dim is given.")
      .positive();
  schema
      .add_key(custom_path("kv_heads"), ValueType::kInt,
               "Key/value heads (grouped-query attention); must divide heads.")
      .positive();
  schema.add_key(custom_path("ffn_hidden"), ValueType::kInt, "Inner width of the MLP.").positive();
  schema.add_key(custom_path("vocab"), ValueType::kInt, "Vocabulary size (embedding rows).")
      .positive();
  schema
      .add_key(custom_path("activation"), ValueType::kEnum,
               "swiglu: Llama conventions (RMSNorm, no biases, untied head); gelu: GPT-3 "
               "conventions (LayerNorm, biases, tied head); squared_relu: Nemotron-4's "
               "(relu(x)^2, LayerNorm, no biases, untied head). All use rotary positions.")
      .one_of({"swiglu", "gelu", "squared_relu"});
  schema.add_key(custom_path("tied_embeddings"), ValueType::kBool,
                 "Whether the output head shares the token embedding's weights (default: the "
                 "family's, true for gelu, false for swiglu). Megatron-LM ties them unless run "
                 "with --untie-embeddings-and-output-weights.");
  add_moe_model_keys(schema);
}

ModelSpec read_model_spec(const sim::ConfigValues& values) {
  sim::DiagnosticSink sink;
  if (!values.has("workload.model")) {
    sim::SourceLocation file_only{values.file(), 0, 0};
    sink.add(file_only, "workload.model",
             "expected a model preset or custom (this command needs a model), found nothing");
    sink.throw_if_any();
  }
  const std::string& model_name = values.get_string("workload.model");
  if (model_name != "custom") {
    std::vector<std::string> paths;
    for (std::string_view key : kCustomKeys) paths.push_back(custom_path(key));
    for (const std::string& path : moe_model_key_paths()) paths.push_back(path);
    for (const std::string& path : paths) {
      if (values.has(path)) {
        sink.add(values.where(path), path,
                 "expected no custom_model keys unless workload.model is 'custom', found one "
                 "with workload.model '" +
                     model_name + "'");
      }
    }
    sink.throw_if_any();
    return *model_preset(model_name);
  }

  for (std::string_view key : std::span(kCustomKeys).first(kRequiredCustomKeys)) {
    if (!values.has(custom_path(key))) {
      sink.add(values.where("workload.model"), custom_path(key),
               "expected a value because workload.model is 'custom', found nothing");
    }
  }
  sink.throw_if_any();

  ModelSpec m;
  m.name = "custom";
  m.layers = values.get_int(custom_path("layers"));
  m.hidden = values.get_int(custom_path("hidden"));
  m.heads = values.get_int(custom_path("heads"));
  m.kv_heads = values.get_int(custom_path("kv_heads"));
  m.ffn_hidden = values.get_int(custom_path("ffn_hidden"));
  m.vocab = values.get_int(custom_path("vocab"));
  const std::string& activation = values.get_string(custom_path("activation"));
  if (activation == "gelu") {
    m.activation = Activation::kGelu;
    m.norm = NormKind::kLayerNorm;
    m.linear_bias = true;
    m.tied_embeddings = true;
  } else if (activation == "squared_relu") {
    m.activation = Activation::kSquaredRelu;
    m.norm = NormKind::kLayerNorm;
  }
  if (values.has(custom_path("tied_embeddings"))) {
    m.tied_embeddings = values.get_bool(custom_path("tied_embeddings"));
  }
  read_moe_model_keys(values, m, sink);
  if (m.explicit_head_dim == 0 && m.attention == AttentionKind::kGqa && m.hidden % m.heads != 0) {
    sink.add(values.where(custom_path("heads")), custom_path("heads"),
             "expected a divisor of hidden (" + std::to_string(m.hidden) + "), found " +
                 std::to_string(m.heads));
  }
  if (m.heads % m.kv_heads != 0) {
    sink.add(values.where(custom_path("kv_heads")), custom_path("kv_heads"),
             "expected a divisor of heads (" + std::to_string(m.heads) + "), found " +
                 std::to_string(m.kv_heads));
  }
  sink.throw_if_any();
  return m;
}

}  // namespace clustersim::workloads
