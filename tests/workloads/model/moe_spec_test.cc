#include "workloads/model/moe_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/scenario_loader.h"
#include "workloads/model/model_spec.h"

namespace clustersim::workloads {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ModelSpec spec_from_yaml(std::string_view yaml) {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_model_keys(schema);
  return read_model_spec(sim::load_scenario_text(yaml, "scenario.yaml", schema));
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

// A published count is the exact one rounded to its last digit, worth
// `unit`: the tolerance is half that digit (0.07% of 671B, 0.4% of 12.9B,
// 1.4% of 37B), no looser than the publisher's own rounding.
void expect_rounds_to(int64_t count, double published, double unit) {
  EXPECT_LE(std::abs(static_cast<double>(count) - published), unit / 2)
      << count << " published as " << published;
}

TEST(MoeSpec, PresetsFollowTheDenseOnesInDeclarationOrder) {
  const std::vector<std::string> names = model_preset_names();
  ASSERT_EQ(names.size(), 13u);
  EXPECT_EQ(names[6], "gpt3-175b");
  EXPECT_THAT(std::vector<std::string>(names.begin() + 7, names.end()),
              ::testing::ElementsAre("deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b",
                                     "gpt-oss-120b", "mixtral-8x7b", "llama4-scout"));
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(preset(names[i]).experts > 0, i >= 7) << names[i];
  }
}

TEST(MoeSpec, DenseModelsCountAsBefore) {
  for (const std::string name : {"llama2-7b", "llama3-405b", "gpt3-175b"}) {
    const ParameterBreakdown p = parameter_breakdown(preset(name));
    EXPECT_EQ(p.active, p.total) << name;
    EXPECT_EQ(p.routed_experts + p.shared_experts + p.router + p.dense_block + p.mtp, 0) << name;
  }
}

// DeepSeek-V3's MLA per the modeling code: q_a_proj 7168x1536, q_a_layernorm
// 1536, q_b_proj 1536 x 128*192, kv_a_proj_with_mqa 7168 x (512+64),
// kv_a_layernorm 512, kv_b_proj 512 x 128*(128+128), o_proj 128*128 x 7168.
TEST(MoeSpec, DeepSeekV3CountsTheMainModelAndTheMtpModuleApart) {
  const ModelSpec m = preset("deepseek-v3");
  EXPECT_EQ(m.head_dim(), 192);
  EXPECT_EQ(m.moe_layers(), 58);
  const ParameterBreakdown p = parameter_breakdown(m);
  EXPECT_EQ(p.attention, 11'010'048 + 1536 + 37'748'736 + 4'128'768 + 512 + 16'777'216 +
                             117'440'512);  // 187,107,328
  EXPECT_EQ(p.routed_experts, int64_t{256} * 3 * 7168 * 2048);
  EXPECT_EQ(p.shared_experts, 3 * 7168 * 2048);
  EXPECT_EQ(p.router, 256 * 7168 + 256);  // with e_score_correction_bias
  EXPECT_EQ(p.dense_ffn, 3 * int64_t{7168} * 18432);
  EXPECT_EQ(p.dense_block, p.attention + p.dense_ffn + 2 * 7168);
  EXPECT_EQ(p.block, p.attention + p.routed_experts + p.shared_experts + p.router + 2 * 7168);
  EXPECT_EQ(p.embedding, int64_t{129280} * 7168);
  EXPECT_EQ(p.output_head, p.embedding);
  EXPECT_EQ(p.total, 671'026'419'200);
  expect_rounds_to(p.total, 671e9, 1e9);  // the technical report's 671B
  // DeepSeek's activated figure leaves out the embedding: 36.6B, the
  // README_WEIGHTS.md figure "including 0.9B for the output Head" (a later
  // revision reads 36.7B "including 0.9B for Embedding", which does not add
  // up: with the embedding it is 37.55B), and the report's 37B.
  EXPECT_EQ(p.active, 37'552'297'472);
  expect_rounds_to(p.active - p.embedding, 36.6e9, 0.1e9);
  expect_rounds_to(p.active - p.embedding, 37e9, 1e9);
  // The MTP module: layer 61's block, eh_proj 14336x7168, enorm and hnorm.
  EXPECT_EQ(p.mtp, p.block + 2 * int64_t{7168} * 7168 + 2 * 7168);  // 11,610,061,056
  // Hugging Face's 685B is what the checkpoint stores: the main model, the
  // MTP module and its copies of the embedding, the head and the head's norm
  // (shared_head), 684.49B, plus the FP8 weights' scale_inv tensors (about
  // 0.04B, not counted here): within 0.5%.
  const int64_t stored = p.total + p.mtp + p.embedding + p.output_head + 7168;
  EXPECT_EQ(stored, 684'489'845'504);
  EXPECT_LT(std::abs(static_cast<double>(stored) / 685e9 - 1), 0.005);
}

// Qwen counts the embedding and the head in its activated figure, and gives
// non-embedding totals (both removed) on the model cards.
TEST(MoeSpec, Qwen3MoeMatchesTheModelCards) {
  const ModelSpec small = preset("qwen3-30b-a3b");
  EXPECT_EQ(small.head_dim(), 128);  // hidden 2048 / 32 heads would be 64
  const ParameterBreakdown s = parameter_breakdown(small);
  // q 2048x4096, k and v 2048x512, o 4096x2048, q_norm and k_norm 128.
  EXPECT_EQ(s.attention, 8'388'608 + 2 * 1'048'576 + 8'388'608 + 256);
  EXPECT_EQ(s.total, 30'532'122'624);
  expect_rounds_to(s.total, 30.5e9, 0.1e9);
  expect_rounds_to(s.total - s.embedding - s.output_head, 29.9e9, 0.1e9);
  // 3.353B: the card's 3.3B cuts it to one decimal rather than rounding
  // (without the embedding it would be 3.04B).
  EXPECT_EQ(s.active, 3'353'032'704);
  EXPECT_GE(static_cast<double>(s.active), 3.3e9);
  EXPECT_LT(static_cast<double>(s.active), 3.4e9);

  const ParameterBreakdown b = parameter_breakdown(preset("qwen3-235b-a22b"));
  EXPECT_EQ(b.total, 235'093'634'560);
  expect_rounds_to(b.total, 235e9, 1e9);
  expect_rounds_to(b.total - b.embedding - b.output_head, 234e9, 1e9);
  EXPECT_EQ(b.active, 22'190'763'520);
  expect_rounds_to(b.active, 22e9, 1e9);
}

// OpenAI's active figure counts the unembedding but not the embedding.
TEST(MoeSpec, GptOss120bMatchesTheModelCard) {
  const ModelSpec m = preset("gpt-oss-120b");
  const ParameterBreakdown p = parameter_breakdown(m);
  // q, k, v, o with biases (4096 + 2*512 + 2880) and 64 sinks.
  EXPECT_EQ(p.attention, 2880 * 4096 + 2 * 2880 * 512 + 4096 * 2880 + 4096 + 1024 + 2880 + 64);
  // Each expert: gate_up_proj 2880x5760 and its bias, down_proj 2880x2880 and its bias.
  EXPECT_EQ(p.routed_experts, int64_t{128} * (3 * 2880 * 2880 + 5760 + 2880));
  EXPECT_EQ(p.router, 128 * 2880 + 128);
  EXPECT_EQ(p.total, 116'829'156'672);
  expect_rounds_to(p.total, 116.83e9, 0.01e9);
  EXPECT_EQ(p.active - p.embedding, 5'132'849'472);
  expect_rounds_to(p.active - p.embedding, 5.13e9, 0.01e9);
  EXPECT_TRUE(m.local_attention(0));
  EXPECT_FALSE(m.local_attention(1));
  EXPECT_TRUE(m.local_attention(34));
  EXPECT_FALSE(m.local_attention(35));
}

TEST(MoeSpec, Mixtral8x7bMatchesMistralsFigures) {
  const ParameterBreakdown p = parameter_breakdown(preset("mixtral-8x7b"));
  EXPECT_EQ(p.total, 46'702'792'704);
  expect_rounds_to(p.total, 46.7e9, 0.1e9);
  EXPECT_EQ(p.active, 12'879'925'248);  // 12.75B without the embedding
  expect_rounds_to(p.active, 12.9e9, 0.1e9);
}

// Meta's 109B includes the vision encoder and its projector (about 0.9B by
// the vision_config: 34 layers of width 1408), which a ModelSpec has not:
// the text model is 1.1% under it. The activated 17B is the text model's.
TEST(MoeSpec, Llama4ScoutTextModelAgainstMetasFigures) {
  const ModelSpec m = preset("llama4-scout");
  const ParameterBreakdown p = parameter_breakdown(m);
  EXPECT_EQ(p.shared_experts, 3 * 5120 * 8192);
  EXPECT_EQ(p.routed_experts, 16 * p.shared_experts);
  EXPECT_EQ(p.dense_block, 0);  // every layer MoE
  EXPECT_EQ(p.total, 107'769'861'120);
  EXPECT_LT(static_cast<double>(p.total), 109e9);
  EXPECT_LT(1 - static_cast<double>(p.total) / 109e9, 0.015);
  EXPECT_EQ(p.active, 17'172'894'720);  // 16.14B without the embedding
  expect_rounds_to(p.active, 17e9, 1e9);
  int64_t chunked = 0;
  for (int64_t layer = 0; layer < m.layers; ++layer) chunked += m.local_attention(layer) ? 1 : 0;
  EXPECT_EQ(chunked, 36);
  EXPECT_FALSE(m.local_attention(3));
}

constexpr std::string_view kCustom =
    "name: t\nworkload:\n  model: custom\n  custom_model:\n    layers: 2\n    hidden: 64\n"
    "    heads: 4\n    kv_heads: 2\n    ffn_hidden: 128\n    vocab: 100\n    activation: swiglu\n";

std::string custom(std::string_view extra) { return std::string(kCustom) + std::string(extra); }

TEST(MoeSpec, ReadsACustomMoeAndCountsItByHand) {
  const ModelSpec m = spec_from_yaml(
      custom("    experts: 4\n    top_k: 2\n    shared_experts: 1\n    expert_ffn_hidden: 32\n"
             "    first_dense_layers: 1\n"));
  EXPECT_EQ(m.experts, 4);
  EXPECT_EQ(m.top_k, 2);
  EXPECT_EQ(m.shared_expert_width(), 32);
  EXPECT_EQ(m.moe_layers(), 1);
  const ParameterBreakdown p = parameter_breakdown(m);
  // attention 64*64 + 2*64*32 + 64*64 = 12288; norms 128; an expert 3*64*32.
  EXPECT_EQ(p.dense_block, 12288 + 3 * 64 * 128 + 128);
  EXPECT_EQ(p.block, 12288 + 4 * 6144 + 6144 + 4 * 64 + 128);
  EXPECT_EQ(p.total, 6400 + p.dense_block + p.block + 64 + 6400);  // 93,248
  EXPECT_EQ(p.active, p.total - (4 - 2) * 6144);
  EXPECT_EQ(p.mtp, 0);
}

TEST(MoeSpec, HeadDimLiftsTheDivisibilityOfHiddenAndQkNormCountsPerHead) {
  std::string yaml(kCustom);
  yaml.replace(yaml.find("heads: 4"), 8, "heads: 6");
  const ModelSpec m = spec_from_yaml(yaml + "    head_dim: 16\n    qk_norm: true\n");
  EXPECT_EQ(m.head_dim(), 16);
  // q 64 x 96, k and v 64 x 32, o 96 x 64, q_norm and k_norm of 16.
  EXPECT_EQ(parameter_breakdown(m).attention, 6144 + 4096 + 6144 + 32);
  EXPECT_THAT(error_of(yaml), HasSubstr("heads: expected a divisor of hidden (64), found 6"));
}

TEST(MoeSpec, ReadsMultiHeadLatentAttentionAndCountsItByHand) {
  std::string yaml = custom(
      "    mla:\n      q_lora_rank: 16\n      kv_lora_rank: 8\n      qk_nope_head_dim: 8\n"
      "      qk_rope_head_dim: 4\n      v_head_dim: 8\n");
  yaml.replace(yaml.find("kv_heads: 2"), 11, "kv_heads: 4");
  const ModelSpec m = spec_from_yaml(yaml);
  EXPECT_EQ(m.attention, AttentionKind::kMla);
  EXPECT_EQ(m.head_dim(), 12);
  // q_a 64x16 + 16, q_b 16 x 4*12, kv_a 64 x (8+4) + 8, kv_b 8 x 4*(8+8), o 4*8 x 64.
  EXPECT_EQ(parameter_breakdown(m).attention, 1024 + 16 + 768 + 768 + 8 + 512 + 2048);
}

TEST(MoeSpec, TopKAboveTheExperts) {
  EXPECT_THAT(error_of(custom("    experts: 8\n    top_k: 9\n    expert_ffn_hidden: 32\n")),
              HasSubstr("scenario.yaml:13:12: error: workload.custom_model.top_k: expected at "
                        "most the 8 experts, found 9"));
}

TEST(MoeSpec, TopKWithoutExperts) {
  EXPECT_THAT(error_of(custom("    top_k: 2\n")),
              HasSubstr("scenario.yaml:12:12: error: workload.custom_model.top_k: expected no "
                        "value without experts (a dense model has no expert layers), found 2"));
}

TEST(MoeSpec, ExpertsNeedTopKAndExpertFfnHidden) {
  const std::string error = error_of(custom("    experts: 8\n"));
  EXPECT_THAT(error, HasSubstr("scenario.yaml:12:14: error: workload.custom_model.top_k: expected "
                               "a value because experts is 8, found nothing"));
  EXPECT_THAT(error,
              HasSubstr("scenario.yaml:12:14: error: workload.custom_model.expert_ffn_hidden: "
                        "expected a value because experts is 8, found nothing"));
}

TEST(MoeSpec, FirstDenseLayersBelowTheLayers) {
  EXPECT_THAT(error_of(custom("    experts: 8\n    top_k: 2\n    expert_ffn_hidden: 32\n"
                              "    first_dense_layers: 2\n")),
              HasSubstr("scenario.yaml:15:25: error: workload.custom_model.first_dense_layers: "
                        "expected fewer than the 2 layers (the rest hold the experts), found 2"));
}

TEST(MoeSpec, HeadDimMustBePositive) {
  EXPECT_THAT(error_of(custom("    head_dim: 0\n")),
              HasSubstr("scenario.yaml:12:15: error: workload.custom_model.head_dim: expected a "
                        "positive integer"));
}

TEST(MoeSpec, EveryProblemOfAFileAtOnce) {
  const std::string error =
      error_of(custom("    experts: 4\n    top_k: 5\n    first_dense_layers: 3\n"
                      "    shared_expert_ffn_hidden: 16\n"));
  EXPECT_THAT(error,
              HasSubstr("scenario.yaml:12:14: error: workload.custom_model.expert_ffn_hidden"));
  EXPECT_THAT(error, HasSubstr("scenario.yaml:13:12: error: workload.custom_model.top_k: expected "
                               "at most the 4 experts, found 5"));
  EXPECT_THAT(error, HasSubstr("scenario.yaml:14:25: error: workload.custom_model.first_dense_"
                               "layers: expected fewer than the 2 layers"));
  EXPECT_THAT(error, HasSubstr("scenario.yaml:15:31: error: workload.custom_model.shared_expert_"
                               "ffn_hidden: expected no value without shared_experts, found 16"));
}

TEST(MoeSpec, IncompleteMlaPointsAtItsFirstKey) {
  const std::string error = error_of(custom("    head_dim: 16\n    mla:\n      kv_lora_rank: 8\n"));
  EXPECT_THAT(error, HasSubstr("scenario.yaml:14:21: error: workload.custom_model.mla.v_head_dim: "
                               "expected a value because workload.custom_model.mla.kv_lora_rank "
                               "is given (multi-head latent attention), found nothing"));
  EXPECT_THAT(error, Not(HasSubstr("mla.q_lora_rank")));
  EXPECT_THAT(error, HasSubstr("scenario.yaml:8:15: error: workload.custom_model.kv_heads: "
                               "expected heads (4) with multi-head latent attention"));
  EXPECT_THAT(error, HasSubstr("scenario.yaml:12:15: error: workload.custom_model.head_dim: "
                               "expected no head_dim with multi-head latent attention"));
}

TEST(MoeSpec, MoeKeysWithAPresetAreRefused) {
  EXPECT_THAT(error_of("name: t\nworkload:\n  model: mixtral-8x7b\n  custom_model:\n"
                       "    experts: 4\n    mla:\n      kv_lora_rank: 8\n"),
              ::testing::AllOf(
                  HasSubstr("scenario.yaml:5:14: error: workload.custom_model.experts: expected "
                            "no custom_model keys unless workload.model is 'custom'"),
                  HasSubstr("scenario.yaml:7:21: error: workload.custom_model.mla.kv_lora_rank: "
                            "expected no custom_model keys")));
}

}  // namespace
}  // namespace clustersim::workloads
