// `import nemo`: the keys a NeMo / Megatron-Core recipe maps to, the
// tokenizer's padded vocabulary, Megatron's execution as the scenario models
// it, and the errors at the YAML's lines (scenario/nemo_import.h).
#include "scenario/nemo_import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/config_error.h"

namespace clustersim::cli {
namespace {

using ::testing::HasSubstr;

ImportOptions options(std::vector<std::string> sets = {}) {
  ImportOptions o;
  o.hardware = "h100";
  o.sets = std::move(sets);
  return o;
}

std::string value_of(const ImportedScenario& s, const std::string& key) {
  const ImportedKey* k = s.find(key);
  return k == nullptr ? "(absent)" : k->value;
}

std::string error_of(const std::string& yaml, const ImportOptions& o) {
  try {
    import_nemo_text(yaml, "n.yaml", o);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// A Llama-3-8B recipe as NeMo-Framework-Launcher writes one: TP 2, CP 2, PP 2 over 4 nodes.
const char* const kLlama =
    "trainer:\n"                                   // 1
    "  num_nodes: 4\n"                             // 2
    "  devices: 8\n"                               // 3
    "  precision: bf16-mixed\n"                    // 4
    "  gradient_clip_val: 1.0\n"                   // 5
    "model:\n"                                     // 6
    "  micro_batch_size: 1\n"                      // 7
    "  global_batch_size: 64\n"                    // 8
    "  tensor_model_parallel_size: 2\n"            // 9
    "  pipeline_model_parallel_size: 2\n"          // 10
    "  virtual_pipeline_model_parallel_size: 2\n"  // 11
    "  context_parallel_size: 2\n"                 // 12
    "  sequence_parallel: true\n"
    "  encoder_seq_length: 8192\n"
    "  max_position_embeddings: ${.encoder_seq_length}\n"
    "  num_layers: 32\n"
    "  hidden_size: 4096\n"
    "  ffn_hidden_size: 14336\n"
    "  num_attention_heads: 32\n"
    "  num_query_groups: 8\n"
    "  normalization: rmsnorm\n"
    "  bias: false\n"
    "  activation: fast-swiglu\n"
    "  position_embedding_type: rope\n"
    "  share_embeddings_and_output_weights: false\n"
    "  make_vocab_size_divisible_by: 128\n"
    "  tokenizer:\n"
    "    library: huggingface\n"
    "    type: meta-llama/Meta-Llama-3-8B\n"
    "  activations_checkpoint_granularity: full\n"
    "  activations_checkpoint_method: uniform\n"
    "  activations_checkpoint_num_layers: 1\n"
    "  transformer_engine: true\n"
    "  ub_tp_comm_overlap: true\n"
    "  optim:\n"
    "    name: mcore_distributed_optim\n"
    "    lr: 1e-4\n"
    "    overlap_grad_sync: true\n"
    "    overlap_param_sync: true\n"
    "  data:\n"
    "    seq_length: ${model.encoder_seq_length}\n";

TEST(NemoImport, ALlamaRecipeWithEveryParallelism) {
  const ImportedScenario s = import_nemo_text(kLlama, "n.yaml", options());
  EXPECT_EQ(value_of(s, "cluster.nodes"), "4");
  EXPECT_EQ(value_of(s, "workload.dtype"), "bf16");
  EXPECT_EQ(value_of(s, "workload.model"), "custom");
  EXPECT_EQ(value_of(s, "workload.custom_model.layers"), "32");
  EXPECT_EQ(value_of(s, "workload.custom_model.kv_heads"), "8");
  EXPECT_EQ(value_of(s, "workload.custom_model.ffn_hidden"), "14336");
  EXPECT_EQ(value_of(s, "workload.custom_model.activation"), "swiglu");
  EXPECT_EQ(value_of(s, "workload.custom_model.tied_embeddings"), "false");
  // 128,256 is already a multiple of 128 x tp 2.
  EXPECT_EQ(value_of(s, "workload.custom_model.vocab"), "128256");
  EXPECT_EQ(value_of(s, "workload.local_batch"), "1");
  EXPECT_EQ(value_of(s, "workload.global_batch"), "64");
  EXPECT_EQ(s.find("workload.global_batch")->where.to_string(), "n.yaml:8:22");
  EXPECT_EQ(value_of(s, "workload.seq_len"), "8192");
  EXPECT_EQ(value_of(s, "workload.parallelism.tp"), "2");
  EXPECT_EQ(value_of(s, "workload.parallelism.pp"), "2");
  EXPECT_EQ(value_of(s, "workload.parallelism.cp"), "2");
  EXPECT_EQ(value_of(s, "workload.pipeline.schedule"), "interleaved_1f1b");
  EXPECT_EQ(value_of(s, "workload.pipeline.virtual_stages"), "2");
  // Megatron's modes derive when a stage reduces from overlap_grad_reduce.
  EXPECT_EQ(value_of(s, "workload.pipeline.grad_reduction"), "(absent)");
  EXPECT_EQ(value_of(s, "workload.megatron.overlap_grad_reduce"), "true");
  EXPECT_EQ(value_of(s, "workload.megatron.overlap_param_gather"), "true");
  EXPECT_EQ(value_of(s, "workload.context_parallel.rotate_method"), "alltoall");
  EXPECT_EQ(value_of(s, "workload.context_parallel.kv_heads"), "model");
  EXPECT_EQ(value_of(s, "workload.activation_checkpointing"), "full");
  EXPECT_EQ(value_of(s, "workload.torch_compile"), "true");
  EXPECT_EQ(value_of(s, "workload.parallelism.async_tp"), "true");
  EXPECT_EQ(value_of(s, "workload.parallelism.tp_sequence_dim"), "0");
  EXPECT_EQ(value_of(s, "workload.parallelism.strategy"), "DISTRIBUTED_OPTIMIZER");
  EXPECT_EQ(value_of(s, "workload.fsdp.no_sync"), "(absent)");
  EXPECT_EQ(value_of(s, "workload.fsdp.reduce_dtype"), "fp32");
  EXPECT_EQ(value_of(s, "stack"), "nemo");
  EXPECT_TRUE(s.approximations.empty()) << s.approximations.front();
  EXPECT_THAT(s.unmapped, ::testing::Contains("model.optim.lr: 1e-4"));
  EXPECT_THAT(s.unmapped, ::testing::Contains("model.max_position_embeddings: 8192"));
}

// FP8 through Transformer Engine: its delayed scaling, and with fp8_params
// the distributed optimizer's FP8 weights (the nemo stack casts once a step).
TEST(NemoImport, Fp8WithFp8ParamsIsDelayedScalingWithFp8Weights) {
  const ImportedScenario s = import_nemo_text(
      std::string(kLlama) + "  fp8: true\n  fp8_params: true\n", "n.yaml", options());
  EXPECT_EQ(value_of(s, "workload.float8.recipe"), "delayed");
  EXPECT_EQ(value_of(s, "workload.megatron.fp8_param_gather"), "true");
  EXPECT_EQ(s.find("workload.megatron.fp8_param_gather")->where.to_string(), "n.yaml:43:15");
  EXPECT_TRUE(s.approximations.empty()) << s.approximations.front();
  const ImportedScenario bf16_weights =
      import_nemo_text(std::string(kLlama) + "  fp8: true\n", "n.yaml", options());
  EXPECT_EQ(value_of(bf16_weights, "workload.megatron.fp8_param_gather"), "(absent)");
}

// GPT-3 conventions: GELU, LayerNorm, biases, learned positions, a tied head.
const char* const kGpt =
    "trainer:\n  num_nodes: 1\n  devices: 8\n  precision: 16\n"
    "model:\n  micro_batch_size: 2\n  global_batch_size: 64\n"
    "  encoder_seq_length: 2048\n  num_layers: 12\n  hidden_size: 768\n"
    "  ffn_hidden_size: ${multiply:4, ${.hidden_size}}\n  num_attention_heads: 12\n"
    "  tokenizer:\n    library: megatron\n    type: GPT2BPETokenizer\n"
    "  optim:\n    name: fused_adam\n";

TEST(NemoImport, NemosDefaultsForAGptRecipe) {
  const ImportedScenario s = import_nemo_text(kGpt, "n.yaml", options());
  EXPECT_EQ(value_of(s, "workload.dtype"), "fp16");
  EXPECT_EQ(value_of(s, "workload.custom_model.ffn_hidden"), "3072");  // 4 x 768
  EXPECT_EQ(value_of(s, "workload.custom_model.kv_heads"), "12");
  EXPECT_EQ(value_of(s, "workload.custom_model.activation"), "gelu");
  EXPECT_EQ(value_of(s, "workload.custom_model.tied_embeddings"), "true");
  // GPT-2's 50,257 padded to a multiple of 128 x tp 1.
  EXPECT_EQ(value_of(s, "workload.custom_model.vocab"), "50304");
  EXPECT_EQ(value_of(s, "workload.parallelism.strategy"), "NO_SHARD");  // fused_adam: DDP
  EXPECT_EQ(value_of(s, "workload.fsdp.reduce_dtype"), "param");        // fp16 gradients
  EXPECT_EQ(value_of(s, "workload.torch_compile"), "false");
  EXPECT_EQ(value_of(s, "workload.grad_clip"), "false");  // Lightning's default 0
  EXPECT_THAT(s.approximations,
              ::testing::Contains(HasSubstr("'learned_absolute': its table (max_position_"
                                            "embeddings x hidden parameters) is left out")));
}

// Qwen3-style heads, wider than hidden / heads (128 channels on hidden 4096
// over 64 heads), become the model's explicit head width; the usual width
// writes nothing.
TEST(NemoImport, KvChannelsOtherThanHiddenOverHeadsIsTheHeadWidth) {
  std::string wide = kLlama;
  wide.replace(wide.find("  num_attention_heads: 32\n"), 26,
               "  num_attention_heads: 64\n  kv_channels: 128\n");
  const ImportedScenario s = import_nemo_text(wide, "n.yaml", options());
  EXPECT_EQ(value_of(s, "workload.custom_model.head_dim"), "128");
  EXPECT_EQ(value_of(s, "workload.custom_model.heads"), "64");
  std::string usual = kLlama;
  usual.replace(usual.find("  num_attention_heads: 32\n"), 26,
                "  num_attention_heads: 32\n  kv_channels: 128\n");
  EXPECT_EQ(
      value_of(import_nemo_text(usual, "n.yaml", options()), "workload.custom_model.head_dim"),
      "(absent)");
}

TEST(NemoImport, AnUnknownTokenizerNeedsTheVocabularyFromTheCommandLine) {
  std::string yaml = kGpt;
  yaml.replace(yaml.find("GPT2BPETokenizer"), 16, "my/tokenizer");
  EXPECT_EQ(error_of(yaml, options()),
            "n.yaml:15:11: error: model.tokenizer.type: expected a tokenizer whose vocabulary the "
            "importer knows (megatron GPT2BPETokenizer, huggingface Llama 2 or Llama 3), found "
            "library 'megatron', type 'my/tokenizer'; give the vocabulary with --set "
            "workload.custom_model.vocab=N");
  const ImportedScenario s =
      import_nemo_text(yaml, "n.yaml", options({"workload.custom_model.vocab=32000"}));
  EXPECT_EQ(value_of(s, "workload.custom_model.vocab"), "32000");
}

TEST(NemoImport, MissingBatchKeysAndABatchTheReplicasDoNotDivideAreReportedAtTheirLines) {
  std::string yaml = kGpt;
  yaml.replace(yaml.find("  micro_batch_size: 2\n"), 22, "");
  EXPECT_THAT(error_of(yaml, options()),
              HasSubstr("n.yaml: error: model.micro_batch_size: expected a number of sequences "
                        "(NeMo needs it), found none"));
  yaml = kGpt;
  yaml.replace(yaml.find("global_batch_size: 64"), 21, "global_batch_size: 60");
  EXPECT_EQ(error_of(yaml, options()),
            "n.yaml:7:22: error: model.global_batch_size: expected a multiple of local_batch 2 x "
            "8 data-parallel replicas (world_size 8 / (tp 1 x pp 1 x cp 1)) = 16 sequences, "
            "found 60 (nearest: 48 or 64) (written as workload.global_batch)");
}

TEST(NemoImport, GpusMustAgreeWithTheTrainersNodesAndDevices) {
  ImportOptions o = options();
  o.gpus = 16;
  EXPECT_EQ(error_of(kGpt, o),
            "n.yaml:2:14: error: trainer.num_nodes: expected --gpus to agree with "
            "trainer.num_nodes 1 x trainer.devices 8 = 8, found --gpus 16");
}

TEST(NemoImport, AnInterpolationThatNamesNothingIsAnErrorAtItsLine) {
  std::string yaml = kGpt;
  yaml.replace(yaml.find("${.hidden_size}"), 15, "${.hiden_size}");
  EXPECT_THAT(error_of(yaml, options()),
              HasSubstr("n.yaml:11:20: error: model.ffn_hidden_size: expected a value at "
                        "'model.hiden_size', found none"));
}

}  // namespace
}  // namespace clustersim::cli
