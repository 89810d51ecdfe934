#include "workloads/model/model_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/scenario_loader.h"

namespace clustersim::workloads {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

sim::ConfigSchema model_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_model_keys(schema);
  return schema;
}

ModelSpec spec_from_yaml(std::string_view yaml) {
  return read_model_spec(sim::load_scenario_text(yaml, "scenario.yaml", model_schema()));
}

std::string error_of(std::string_view yaml) {
  try {
    spec_from_yaml(yaml);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

ModelSpec preset(std::string_view name) {
  const std::optional<ModelSpec> m = model_preset(name);
  EXPECT_TRUE(m.has_value()) << name;
  return m.value_or(ModelSpec{});
}

double relative_error(double actual, double expected) {
  return std::abs(actual - expected) / expected;
}

// Published totals: the Hugging Face safetensors parameter counts of the
// released checkpoints (exact), and the papers' rounded figures.
TEST(ModelSpec, LlamaParameterCountsMatchTheReleasedCheckpoints) {
  EXPECT_EQ(parameter_count(preset("llama2-7b")), 6'738'415'616);
  EXPECT_EQ(parameter_count(preset("llama2-13b")), 13'015'864'320);
  EXPECT_EQ(parameter_count(preset("llama2-70b")), 68'976'648'192);
  EXPECT_EQ(parameter_count(preset("llama3-8b")), 8'030'261'248);
  EXPECT_EQ(parameter_count(preset("llama3-70b")), 70'553'706'496);
  EXPECT_EQ(parameter_count(preset("llama3-405b")), 405'853'388'800);
  EXPECT_LT(relative_error(static_cast<double>(parameter_count(preset("llama3-8b"))), 8.03e9),
            0.005);
  EXPECT_LT(relative_error(static_cast<double>(parameter_count(preset("llama3-70b"))), 70.6e9),
            0.005);
  EXPECT_LT(relative_error(static_cast<double>(parameter_count(preset("llama3-405b"))), 405.8e9),
            0.005);
}

TEST(ModelSpec, Gpt3CountsLayerNormBiasesPositionsAndATiedHead) {
  const ModelSpec gpt3 = preset("gpt3-175b");
  const ParameterBreakdown p = parameter_breakdown(gpt3);
  const int64_t h = 12288;
  // 12 H^2 weights (q, k, v, o, 4H up, 4H down); biases 3H + H + 4H + H;
  // two LayerNorms of weight and bias 4H.
  EXPECT_EQ(p.block, 12 * h * h + 13 * h);
  EXPECT_EQ(p.embedding, 50257 * h + 2048 * h);
  EXPECT_EQ(p.final_norm, 2 * h);
  EXPECT_EQ(p.output_head, 0);
  EXPECT_EQ(p.total, 174'604'259'328);
  EXPECT_LT(relative_error(static_cast<double>(p.total), 174.6e9), 0.005);
  EXPECT_LT(relative_error(static_cast<double>(p.total), 175.0e9), 0.005);  // the paper's figure
}

TEST(ModelSpec, BreakdownOfLlama3_8bByHand) {
  const ParameterBreakdown p = parameter_breakdown(preset("llama3-8b"));
  // q 4096^2 + k, v 4096*1024 each + o 4096^2 + MLP 3*4096*14336 + 2 norms.
  EXPECT_EQ(p.block, 16'777'216 + 2 * 4'194'304 + 16'777'216 + 176'160'768 + 8192);
  EXPECT_EQ(p.embedding, 128256 * 4096);
  EXPECT_EQ(p.output_head, 128256 * 4096);
  EXPECT_EQ(p.final_norm, 4096);
  EXPECT_EQ(p.total, p.embedding + 32 * p.block + p.final_norm + p.output_head);
}

TEST(ModelSpec, PresetShapesAreThePublishedOnes) {
  const ModelSpec l405 = preset("llama3-405b");
  EXPECT_EQ(l405.layers, 126);
  EXPECT_EQ(l405.hidden, 16384);
  EXPECT_EQ(l405.heads, 128);
  EXPECT_EQ(l405.kv_heads, 8);
  EXPECT_EQ(l405.ffn_hidden, 53248);
  EXPECT_EQ(l405.head_dim(), 128);
  const ModelSpec gpt3 = preset("gpt3-175b");
  EXPECT_EQ(gpt3.activation, Activation::kGelu);
  EXPECT_EQ(gpt3.head_dim(), 128);
  EXPECT_EQ(gpt3.ffn_hidden, 4 * gpt3.hidden);
  EXPECT_FALSE(model_preset("custom").has_value());
  EXPECT_EQ(model_preset_names().size(), 13u);  // 7 dense, 6 MoE (moe_spec_test.cc)
}

TEST(ModelSpec, ReadsAPreset) {
  const ModelSpec m = spec_from_yaml("name: t\nworkload:\n  model: llama3-70b\n");
  EXPECT_EQ(m.name, "llama3-70b");
  EXPECT_EQ(m.layers, 80);
  EXPECT_EQ(m.kv_heads, 8);
}

constexpr std::string_view kCustom =
    "name: t\nworkload:\n  model: custom\n  custom_model:\n    layers: 2\n    hidden: 64\n"
    "    heads: 4\n    kv_heads: 2\n    ffn_hidden: 128\n    vocab: 100\n";

TEST(ModelSpec, ReadsACustomShapeWithItsFamily) {
  const ModelSpec swiglu = spec_from_yaml(std::string(kCustom) + "    activation: swiglu\n");
  EXPECT_EQ(swiglu.name, "custom");
  EXPECT_EQ(swiglu.hidden, 64);
  EXPECT_EQ(swiglu.kv_heads, 2);
  EXPECT_EQ(swiglu.norm, NormKind::kRmsNorm);
  EXPECT_FALSE(swiglu.tied_embeddings);
  // 64*64 + 2*64*32 + 64*64 + 3*64*128 + 2*64, embedding and head 100*64, norm 64.
  EXPECT_EQ(parameter_count(swiglu), 2 * (4096 + 4096 + 4096 + 24576 + 128) + 2 * 6400 + 64);

  const ModelSpec gelu = spec_from_yaml(std::string(kCustom) + "    activation: gelu\n");
  EXPECT_EQ(gelu.activation, Activation::kGelu);
  EXPECT_EQ(gelu.norm, NormKind::kLayerNorm);
  EXPECT_TRUE(gelu.linear_bias);
  EXPECT_TRUE(gelu.tied_embeddings);
  EXPECT_EQ(gelu.learned_positions, 0);
}

// Megatron-LM's GPT is the gelu family with the head untied
// (--untie-embeddings-and-output-weights): the head adds vocab x hidden
// parameters to the tied count, and nothing else changes.
TEST(ModelSpec, TiedEmbeddingsOverrideTheFamilysHead) {
  const std::string gelu = std::string(kCustom) + "    activation: gelu\n";
  const ModelSpec tied = spec_from_yaml(gelu);
  const ModelSpec untied = spec_from_yaml(gelu + "    tied_embeddings: false\n");
  EXPECT_FALSE(untied.tied_embeddings);
  EXPECT_EQ(untied.norm, NormKind::kLayerNorm);
  EXPECT_EQ(parameter_breakdown(untied).output_head, 100 * 64);
  EXPECT_EQ(parameter_count(untied), parameter_count(tied) + 100 * 64);
  const ModelSpec swiglu_tied =
      spec_from_yaml(std::string(kCustom) + "    activation: swiglu\n    tied_embeddings: true\n");
  EXPECT_TRUE(swiglu_tied.tied_embeddings);
  EXPECT_EQ(parameter_breakdown(swiglu_tied).output_head, 0);
  EXPECT_THAT(error_of("name: t\nworkload:\n  model: llama2-7b\n  custom_model:\n"
                       "    tied_embeddings: true\n"),
              HasSubstr("scenario.yaml:5:22: error: workload.custom_model.tied_embeddings: "
                        "expected no custom_model keys unless workload.model is 'custom'"));
}

TEST(ModelSpec, MissingModelIsReported) {
  EXPECT_THAT(error_of("name: t\n"),
              HasSubstr("scenario.yaml: error: workload.model: expected a model preset or custom "
                        "(this command needs a model), found nothing"));
}

TEST(ModelSpec, UnknownPresetSuggestsTheNearest) {
  const std::string error = error_of("name: t\nworkload:\n  model: llama3-8\n");
  EXPECT_THAT(error, HasSubstr("scenario.yaml:3:10: error: workload.model: "));
  EXPECT_THAT(error, HasSubstr("did you mean 'llama3-8b'?"));
}

TEST(ModelSpec, IncompleteCustomPointsAtTheModelKey) {
  const std::string error = error_of(kCustom);
  EXPECT_THAT(error, HasSubstr("scenario.yaml:3:10: error: workload.custom_model.activation: "
                               "expected a value because workload.model is 'custom', found "
                               "nothing"));
  EXPECT_THAT(error, Not(HasSubstr("custom_model.vocab")));
}

TEST(ModelSpec, CustomKeysWithAPresetAreRefused) {
  const std::string error =
      error_of("name: t\nworkload:\n  model: llama2-7b\n  custom_model:\n    layers: 4\n");
  EXPECT_THAT(error, HasSubstr("scenario.yaml:5:13: error: workload.custom_model.layers: expected "
                               "no custom_model keys unless workload.model is 'custom', found one "
                               "with workload.model 'llama2-7b'"));
}

TEST(ModelSpec, HeadsMustDivideHiddenAndKvHeadsMustDivideHeads) {
  std::string yaml(kCustom);
  yaml.replace(yaml.find("heads: 4"), 8, "heads: 6");
  yaml.replace(yaml.find("kv_heads: 2"), 11, "kv_heads: 4");
  const std::string error = error_of(yaml + "    activation: swiglu\n");
  EXPECT_THAT(error, HasSubstr("scenario.yaml:7:12: error: workload.custom_model.heads: expected "
                               "a divisor of hidden (64), found 6"));
  EXPECT_THAT(error, HasSubstr("scenario.yaml:8:15: error: workload.custom_model.kv_heads: "
                               "expected a divisor of heads (6), found 4"));
}

TEST(ModelSpec, NonPositiveShapeIsRefusedBySchema) {
  std::string yaml(kCustom);
  yaml.replace(yaml.find("layers: 2"), 9, "layers: 0");
  EXPECT_THAT(error_of(yaml + "    activation: swiglu\n"),
              HasSubstr("scenario.yaml:5:13: error: workload.custom_model.layers: expected a "
                        "positive integer"));
}

}  // namespace
}  // namespace clustersim::workloads
