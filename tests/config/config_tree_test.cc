// Other tools' configuration files as trees: TOML and YAML parsing with
// their locations, the reader's kinds and leftovers, OmegaConf's
// interpolations (config/config_tree.h, toml_tree.h, yaml_tree.h,
// omegaconf_interpolation.h).
#include "config/config_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "config/omegaconf_interpolation.h"
#include "config/toml_tree.h"
#include "config/yaml_tree.h"

namespace clustersim::sim {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TomlTree, ReadsKindsAndLocationsInFileOrder) {
  const ConfigNode root = parse_toml_tree(
      "[training]\nseq_len = 8192\ncompile = true\nlr = 3e-4\ndataset = \"c4\"\n"
      "[model]\nconverters = [\"float8\"]\n",
      "t.toml");
  ASSERT_EQ(root.members.size(), 2u);
  EXPECT_EQ(root.members[0].key, "training");  // toml++ sorts; the tree keeps the file's order
  const ConfigNode* seq = root.find("training.seq_len");
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->kind, ConfigNode::Kind::kInteger);
  EXPECT_EQ(seq->integer, 8192);
  EXPECT_EQ(seq->where.to_string(), "t.toml:2:11");
  EXPECT_EQ(root.find("training.compile")->kind, ConfigNode::Kind::kBool);
  EXPECT_DOUBLE_EQ(root.find("training.lr")->number, 3e-4);
  EXPECT_EQ(root.find("training.lr")->text, "3e-04");
  EXPECT_EQ(root.find("training.dataset")->text, "c4");
  const ConfigNode* converters = root.find("model.converters");
  ASSERT_EQ(converters->kind, ConfigNode::Kind::kArray);
  EXPECT_EQ(value_text(*converters), "['float8']");
  std::vector<std::string> keys;
  for (const auto& [k, v] : root.member("training")->members) keys.push_back(k);
  EXPECT_THAT(keys, ::testing::ElementsAre("seq_len", "compile", "lr", "dataset"));
}

TEST(TomlTree, InvalidTomlIsAnErrorAtItsLineAndColumn) {
  const std::string error =
      error_of([] { parse_toml_tree("[training]\nseq_len = 8192\nbatch_size = = 2\n", "t.toml"); });
  EXPECT_THAT(error, ::testing::StartsWith("t.toml:3:"));
  EXPECT_THAT(error, HasSubstr("error: expected valid TOML, found an error: "));
}

TEST(YamlTree, TypesPlainScalarsAsYamlsCoreSchemaAndKeepsQuotedOnesStrings) {
  const ConfigNode root = parse_yaml_tree(
      "model:\n  a: 16\n  b: '16'\n  c: null\n  d:\n  e: True\n  f: 1e-5\n  g: bf16\n", "n.yaml");
  EXPECT_EQ(root.find("model.a")->kind, ConfigNode::Kind::kInteger);
  EXPECT_EQ(root.find("model.b")->kind, ConfigNode::Kind::kString);
  EXPECT_EQ(root.find("model.c")->kind, ConfigNode::Kind::kNull);
  EXPECT_EQ(root.find("model.d")->kind, ConfigNode::Kind::kNull);
  EXPECT_TRUE(root.find("model.e")->boolean);
  EXPECT_EQ(root.find("model.f")->kind, ConfigNode::Kind::kFloat);
  EXPECT_EQ(root.find("model.g")->kind, ConfigNode::Kind::kString);
  EXPECT_EQ(root.find("model.g")->where.to_string(), "n.yaml:8:6");
}

TEST(YamlTree, AnEmptyFileOrAListAtTheTopIsAnError) {
  EXPECT_EQ(error_of([] { parse_yaml_tree("# only a comment\n", "n.yaml"); }),
            "n.yaml:1:1: error: the file is empty; expected a mapping of keys");
  EXPECT_THAT(error_of([] { parse_yaml_tree("- a\n- b\n", "n.yaml"); }),
              HasSubstr("expected a mapping of keys at the top level"));
}

TEST(ConfigTreeReader, ReportsAWrongKindAtTheValueAndGoesOn) {
  const ConfigNode root = parse_toml_tree("[training]\nseq_len = \"8192\"\nsteps = 10\n", "t.toml");
  DiagnosticSink sink;
  ConfigTreeReader reader(root, sink);
  EXPECT_FALSE(reader.take_int("training.seq_len"));
  EXPECT_EQ(reader.take_int("training.steps"), 10);
  EXPECT_FALSE(reader.take_int("training.absent"));
  EXPECT_EQ(error_of([&] { sink.throw_if_any(); }),
            "t.toml:2:11: error: training.seq_len: expected an integer, found the string '8192'");
}

TEST(ConfigTreeReader, ListsWhatNobodyTookInFileOrder) {
  const ConfigNode root = parse_toml_tree(
      "[job]\ndump_folder = \"./outputs\"\n[training]\nseq_len = 2048\nsteps = 10\n"
      "[checkpoint]\nfolder = \"c\"\ninterval = 5\n",
      "t.toml");
  DiagnosticSink sink;
  ConfigTreeReader reader(root, sink);
  reader.take("training.seq_len");
  reader.mark_read("checkpoint");  // a whole table
  std::vector<std::string> left;
  for (const auto& [path, node] : reader.unread()) left.push_back(path + "=" + value_text(*node));
  EXPECT_THAT(left, ::testing::ElementsAre("job.dump_folder='./outputs'", "training.steps=10"));
}

ConfigNode resolved(const std::string& yaml, DiagnosticSink& sink) {
  ConfigNode root = parse_yaml_tree(yaml, "n.yaml");
  resolve_interpolations(root, sink);
  return root;
}

TEST(OmegaConfInterpolation, ResolvesReferencesAndNemosResolvers) {
  DiagnosticSink sink;
  const ConfigNode root = resolved(
      "model:\n  hidden_size: 2048\n  ffn_hidden_size: ${multiply:4, ${.hidden_size}}\n"
      "  encoder_seq_length: 4096\n  max_position_embeddings: ${.encoder_seq_length}\n"
      "  data:\n    seq_length: ${model.encoder_seq_length}\n    up: ${..hidden_size}\n"
      "exp:\n  size: ${multiply:${training.model.hidden_size}, 2}\n"
      "  ceil: ${divide_ceil:7, 2}\n  path: ${data_dir}/vocab.json\n",
      sink);
  EXPECT_TRUE(sink.empty());
  EXPECT_EQ(root.find("model.ffn_hidden_size")->integer, 8192);
  EXPECT_EQ(root.find("model.ffn_hidden_size")->where.to_string(), "n.yaml:3:20");
  EXPECT_EQ(root.find("model.max_position_embeddings")->integer, 4096);
  EXPECT_EQ(root.find("model.data.seq_length")->integer, 4096);
  EXPECT_EQ(root.find("model.data.up")->integer, 2048);
  EXPECT_EQ(root.find("exp.size")->integer, 4096);  // NeMo-Framework-Launcher's "training."
  EXPECT_EQ(root.find("exp.ceil")->integer, 4);
  EXPECT_EQ(root.find("exp.path")->text, "${data_dir}/vocab.json");  // left as written
}

TEST(OmegaConfInterpolation, AMissingKeyOrACycleIsAnErrorAndTheValueBecomesNull) {
  DiagnosticSink sink;
  const ConfigNode root =
      resolved("model:\n  a: ${.missing}\n  b: ${.c}\n  c: ${.b}\n  d: ${pow:2, 3}\n", sink);
  EXPECT_EQ(root.find("model.a")->kind, ConfigNode::Kind::kNull);
  const std::string error = error_of([&] { sink.throw_if_any(); });
  EXPECT_THAT(error, HasSubstr("n.yaml:2:6: error: model.a: expected a value at 'model.missing', "
                               "found none in '${.missing}'"));
  EXPECT_THAT(error, HasSubstr("found a cycle"));
  EXPECT_THAT(error, HasSubstr("model.d: expected one of NeMo's resolvers"));
}

}  // namespace
}  // namespace clustersim::sim
