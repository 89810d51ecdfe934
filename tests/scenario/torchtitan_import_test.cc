// `import torchtitan`: the keys a torchtitan config maps to, in both of its
// layouts, torchtitan's defaults where the config is silent, and the errors
// at the TOML's lines (scenario/torchtitan_import.h, torchtitan_pipeline.h).
#include "scenario/torchtitan_import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/config_error.h"
#include "scenario/torchtitan_pipeline.h"

namespace clustersim::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ImportOptions options(std::optional<int64_t> gpus, std::string hardware = "h100") {
  ImportOptions o;
  o.gpus = gpus;
  o.hardware = std::move(hardware);
  return o;
}

std::string value_of(const ImportedScenario& s, const std::string& key) {
  const ImportedKey* k = s.find(key);
  return k == nullptr ? "(absent)" : k->value;
}

std::string source_of(const ImportedScenario& s, const std::string& key) {
  const ImportedKey* k = s.find(key);
  return k == nullptr ? "(absent)" : k->source;
}

std::string error_of(const std::string& toml, const ImportOptions& o) {
  try {
    import_torchtitan_text(toml, "t.toml", o);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// The 2025 layout: [parallelism], local_batch_size and global_batch_size, [compile].
const char* const kHsdp2025 =
    "[job]\n"                         // 1
    "description = \"Llama 3 8B\"\n"  // 2
    "[model]\n"                       // 3
    "name = \"llama3\"\n"             // 4
    "flavor = \"8B\"\n"               // 5
    "[training]\n"                    // 6
    "local_batch_size = 2\n"          // 7
    "global_batch_size = 512\n"       // 8
    "seq_len = 4096\n"                // 9
    "steps = 100\n"                   // 10
    "[parallelism]\n"                 // 11
    "data_parallel_replicate_degree = 2\n"
    "data_parallel_shard_degree = -1\n"
    "tensor_parallel_degree = 2\n"
    "[activation_checkpoint]\n"
    "mode = \"full\"\n"
    "[compile]\n"
    "enable = true\n";

TEST(TorchtitanImport, The2025LayoutWithHsdpAndAGlobalBatch) {
  const ImportedScenario s = import_torchtitan_text(kHsdp2025, "t.toml", options(64));
  EXPECT_EQ(value_of(s, "workload.model"), "llama3-8b");
  EXPECT_EQ(value_of(s, "workload.seq_len"), "4096");
  EXPECT_EQ(value_of(s, "workload.local_batch"), "2");
  EXPECT_EQ(value_of(s, "workload.global_batch"), "512");
  EXPECT_EQ(source_of(s, "workload.global_batch"), "[training] global_batch_size");
  EXPECT_EQ(s.find("workload.global_batch")->where.to_string(), "t.toml:8:21");
  // 64 GPUs / (replicate 2 x tp 2) = 16 shards: HSDP 16 x 2.
  EXPECT_EQ(value_of(s, "workload.parallelism.strategy"), "HYBRID_SHARD");
  EXPECT_EQ(value_of(s, "workload.parallelism.shard_group_size"), "16");
  EXPECT_EQ(value_of(s, "workload.parallelism.tp"), "2");
  EXPECT_EQ(value_of(s, "workload.activation_checkpointing"), "full");
  EXPECT_EQ(value_of(s, "workload.torch_compile"), "true");
  EXPECT_EQ(source_of(s, "workload.torch_compile"), "[compile] enable");
  // torchtitan's defaults of that layout: bf16 with fp32 reduction, fused AdamW, max_norm 1.
  EXPECT_EQ(value_of(s, "workload.dtype"), "bf16");
  EXPECT_EQ(value_of(s, "workload.fsdp.reduce_dtype"), "fp32");
  EXPECT_EQ(value_of(s, "workload.optimizer.implementation"), "fused");
  EXPECT_EQ(source_of(s, "workload.optimizer.implementation"),
            "[optimizer] implementation (absent: torchtitan's default 'fused')");
  EXPECT_EQ(value_of(s, "workload.grad_clip"), "true");
  EXPECT_EQ(value_of(s, "cluster.nodes"), "8");
  EXPECT_EQ(value_of(s, "cluster.node"), "hgx_h100");
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.description, "Llama 3 8B (torchtitan)");
  EXPECT_THAT(s.unmapped, ElementsAre("[training] steps = 100"));
}

TEST(TorchtitanImport, TheLateTwentyTwentyFourLayoutTakesItsDefaults) {
  const ImportedScenario s = import_torchtitan_text(
      "[model]\nname = \"llama3\"\nflavor = \"70B\"\n"
      "[training]\nbatch_size = 1\ndata_parallel_shard_degree = 8\ntensor_parallel_degree = 8\n",
      "old.toml", options(std::nullopt));
  // No --gpus: every degree is given, 8 x 8 = 64 GPUs.
  EXPECT_EQ(value_of(s, "cluster.nodes"), "8");
  EXPECT_EQ(source_of(s, "cluster.nodes"),
            "data_parallel_replicate_degree 1 x data_parallel_shard_degree 8 x tp 8 x pp 1 x cp 1 "
            "/ 8 GPUs per node");
  EXPECT_EQ(value_of(s, "workload.seq_len"), "2048");
  EXPECT_EQ(source_of(s, "workload.seq_len"),
            "[training] seq_len (absent: torchtitan's default 2048)");
  // Until 2025 torchtitan ran AdamW's foreach implementation unless [optimizer] fused.
  EXPECT_EQ(value_of(s, "workload.optimizer.implementation"), "foreach");
  // mode 'selective' with option '2' by default: layer-level, only approximated.
  EXPECT_EQ(value_of(s, "workload.activation_checkpointing"), "selective");
  ASSERT_EQ(s.approximations.size(), 1u);
  EXPECT_THAT(s.approximations[0],
              HasSubstr("selective_ac_option = '2' (one block in 2 checkpointed"));
}

TEST(TorchtitanImport, PipelineOfDecember2024SplitsTheBatchAndTheLayersAsTorchtitanDid) {
  const ImportedScenario s = import_torchtitan_text(
      "[model]\nname = \"llama3\"\nflavor = \"405B\"\n"
      "[training]\nbatch_size = 32\nseq_len = 8192\ntensor_parallel_degree = 8\ncompile = true\n"
      "[experimental]\npipeline_parallel_degree = 8\n"
      "pipeline_parallel_schedule = \"Interleaved1F1B\"\nenable_async_tensor_parallel = true\n"
      "[activation_checkpoint]\nmode = 'full'\n[float8]\nenable_float8_linear = true\n",
      "p.toml", options(512, "h100_96gb_500w"));
  // 32 sequences per rank in pp = 8 micro-batches of 4.
  EXPECT_EQ(value_of(s, "workload.local_batch"), "4");
  EXPECT_EQ(value_of(s, "workload.pipeline.microbatches"), "8");
  EXPECT_EQ(value_of(s, "workload.pipeline.schedule"), "interleaved_1f1b");
  EXPECT_EQ(value_of(s, "workload.pipeline.virtual_stages"), "2");
  // generate_split_points over 16 stages of 126 blocks: 7, 8 x 14, 7.
  EXPECT_EQ(value_of(s, "workload.pipeline.layers_per_stage"), "7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7");
  EXPECT_EQ(value_of(s, "workload.parallelism.async_tp"), "true");
  EXPECT_EQ(value_of(s, "workload.float8.recipe"), "tensorwise");
  EXPECT_EQ(value_of(s, "workload.parallelism.strategy"), "FULL_SHARD");  // 512 / 64 = 8 shards
  EXPECT_EQ(value_of(s, "cluster.nodes"), "64");
}

TEST(TorchtitanImport, PipelineOf2025UsesTheMicroBatchSizeAndWeighsTheEmbedding) {
  const ImportedScenario s = import_torchtitan_text(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
      "[training]\nlocal_batch_size = 8\n"
      "[parallelism]\npipeline_parallel_degree = 4\npipeline_parallel_microbatch_size = 2\n",
      "p.toml", options(32));
  EXPECT_EQ(value_of(s, "workload.local_batch"), "2");
  EXPECT_EQ(value_of(s, "workload.pipeline.microbatches"), "4");
  EXPECT_EQ(value_of(s, "workload.pipeline.schedule"), "1f1b");
  // 32 blocks + embedding + output = 34 over 4 stages: 9, 9, 8, 8, less one each at the ends.
  EXPECT_EQ(value_of(s, "workload.pipeline.layers_per_stage"), "8,9,8,7");
}

TEST(TorchtitanPipeline, SplitsAsEachLayoutOfTorchtitan) {
  EXPECT_THAT(torchtitan_2024_split(126, 8), ElementsAre(15, 16, 16, 16, 16, 16, 16, 15));
  EXPECT_THAT(torchtitan_2024_split(32, 4), ElementsAre(8, 8, 8, 8));
  EXPECT_THAT(torchtitan_2025_split(32, 4, 1, 1), ElementsAre(8, 9, 8, 7));
  EXPECT_THAT(torchtitan_2025_split(126, 8, 1, 1), ElementsAre(15, 16, 16, 16, 16, 16, 16, 15));
  EXPECT_TRUE(torchtitan_2025_split(2, 4, 1, 1).empty());  // a stage without a block
  EXPECT_THAT(*split_from_points(32, {"layers.8", "layers.16", "layers.24"}),
              ElementsAre(8, 8, 8, 8));
  EXPECT_FALSE(split_from_points(32, {"layers.16", "layers.8"}));
  EXPECT_EQ(torchtitan_schedule("interleaved1f1b")->name, "interleaved_1f1b");
  EXPECT_FALSE(torchtitan_schedule("Zigzag"));
}

TEST(TorchtitanImport, InvalidTomlIsReportedAtItsLine) {
  EXPECT_THAT(error_of("[training]\nseq_len = 8192\nsteps = = 2\n", options(8)),
              ::testing::StartsWith("t.toml:3:"));
}

TEST(TorchtitanImport, AFlavorWithoutAPresetNamesTheOnesThereAre) {
  EXPECT_EQ(error_of("[model]\nname = \"llama3\"\nflavor = \"1B\"\n", options(8)),
            "t.toml:3:10: error: model.flavor: expected a flavor of llama3 with a preset here "
            "(8B, 70B, 405B), found '1B'");
}

TEST(TorchtitanImport, ABatchTheReplicasDoNotDivideIsReportedAtTheGlobalBatchSize) {
  EXPECT_EQ(error_of("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\n"
                     "local_batch_size = 2\nglobal_batch_size = 100\n",
                     options(8)),
            "t.toml:6:21: error: training.global_batch_size: expected a multiple of local_batch "
            "2 x 8 data-parallel replicas (world_size 8 / (tp 1 x pp 1 x cp 1)) = 16 sequences, "
            "found 100 (nearest: 96 or 112) (written as workload.global_batch)");
}

TEST(TorchtitanImport, ALeftOverDegreeNeedsTheGpuCount) {
  EXPECT_EQ(error_of("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                     "data_parallel_shard_degree = -1\n",
                     options(std::nullopt)),
            "t.toml:5:30: error: parallelism.data_parallel_shard_degree: expected --gpus N with "
            "[parallelism] data_parallel_shard_degree -1 (the GPUs left over): a torchtitan "
            "config does not hold the GPU count, torchrun's --nproc_per_node x --nnodes does; "
            "found no --gpus");
  EXPECT_EQ(error_of("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                     "data_parallel_shard_degree = 8\n",
                     options(16)),
            "--gpus 16: error: expected 8 GPUs (data_parallel_replicate_degree 1 x "
            "data_parallel_shard_degree 8 x tp 1 x pp 1 x cp 1), found 16");
}

TEST(TorchtitanImport, EveryProblemOfTheConfigAtOnce) {
  const std::string error = error_of(
      "[model]\nname = \"llama3\"\nflavor = \"1B\"\n[training]\nseq_len = \"8192\"\n"
      "[activation_checkpoint]\nmode = \"some\"\n",
      options(8, "h1000"));
  EXPECT_THAT(error, HasSubstr("t.toml:3:10: error: model.flavor: expected a flavor"));
  EXPECT_THAT(error, HasSubstr("t.toml:5:11: error: training.seq_len: expected an integer, "
                               "found the string '8192'"));
  EXPECT_THAT(error, HasSubstr("t.toml:7:8: error: activation_checkpoint.mode: expected none, "
                               "selective or full, found 'some'"));
}

TEST(TorchtitanImport, AnUnknownHardwareProfileSuggestsAShippedOne) {
  EXPECT_THAT(error_of(kHsdp2025, options(64, "h1000")),
              HasSubstr("--hardware h1000: error: hardware: expected a shipped profile's name ("));
  EXPECT_THAT(error_of(kHsdp2025, options(64, "h1000")), HasSubstr("(did you mean 'h100'?)"));
}

TEST(TorchtitanImport, SetReplacesAMappedKeyAndItsErrorsNameTheOption) {
  ImportOptions o = options(64);
  o.sets = {"workload.torch_compile=false"};
  const ImportedScenario s = import_torchtitan_text(kHsdp2025, "t.toml", o);
  EXPECT_EQ(value_of(s, "workload.torch_compile"), "false");
  EXPECT_EQ(source_of(s, "workload.torch_compile"), "--set");
  o.sets = {"workload.tourch_compile=true"};
  EXPECT_THAT(error_of(kHsdp2025, o),
              HasSubstr("--set workload.tourch_compile=true: error: workload.tourch_compile: "
                        "unknown key (did you mean 'torch_compile'?)"));
}

}  // namespace
}  // namespace clustersim::cli
