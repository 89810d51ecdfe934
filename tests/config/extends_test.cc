// `extends: <file>` in config/scenario_loader.h: deep merge, replacement of
// scalars and lists, chains, cycles, missing bases, and messages that name
// the file holding the value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"
#include "config/scenario_loader.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::sim {
namespace {

using test_support::ScratchDir;

ConfigSchema extends_schema(bool with_extends = true) {
  ConfigSchema schema;
  add_scenario_identity_keys(schema);
  if (with_extends) add_extends_key(schema);
  schema.add_section("cluster", "The machines.");
  schema.add_key("cluster.nodes", ValueType::kInt, "Number of nodes.").positive().required();
  schema.add_key("cluster.memory", ValueType::kBytes, "Memory per GPU.")
      .positive()
      .default_to(int64_t{80} << 30);
  schema.add_section("cluster.switch", "The switches.");
  schema.add_key("cluster.switch.radix", ValueType::kInt, "Ports per switch.")
      .positive()
      .default_to(int64_t{64});
  schema.add_key("cluster.switch.model", ValueType::kString, "Switch model.")
      .default_to(std::string("generic"));
  return schema;
}

ConfigValues load(const std::string& path, const ConfigSchema& schema = extends_schema(),
                  const std::vector<std::string>& overrides = {}) {
  return load_scenario_file(path, schema, overrides);
}

// The messages of the ConfigError that loading `path` throws, one per line.
std::vector<std::string> errors_of(const std::string& path) {
  try {
    load(path);
  } catch (const ConfigError& e) {
    std::vector<std::string> lines;
    for (const Diagnostic& d : e.diagnostics()) lines.push_back(d.to_string());
    return lines;
  }
  ADD_FAILURE() << path << " loaded without an error";
  return {};
}

constexpr const char* kBase =
    "name: base\n"             // 1
    "description: the base\n"  // 2
    "cluster:\n"               // 3
    "  nodes: 4\n"             // 4
    "  memory: 40GB\n"         // 5
    "  switch:\n"              // 6
    "    radix: 32\n"          // 7
    "    model: qm9700\n";     // 8

TEST(Extends, DeepMergeOverridesKeyByKeyAndKeepsTheRest) {
  const ScratchDir dir;
  dir.write("base.yaml", kBase);
  const std::string top = dir.write("top.yaml",
                                    "extends: base.yaml\n"  // 1
                                    "name: top\n"           // 2
                                    "cluster:\n"            // 3
                                    "  switch:\n"           // 4
                                    "    radix: 128\n");    // 5
  const ConfigValues v = load(top);
  EXPECT_EQ(v.get_string("name"), "top");
  EXPECT_EQ(v.get_string("description"), "the base");
  EXPECT_EQ(v.get_int("cluster.nodes"), 4);
  EXPECT_EQ(v.get_bytes("cluster.memory"), 40'000'000'000);
  EXPECT_EQ(v.get_int("cluster.switch.radix"), 128);
  EXPECT_EQ(v.get_string("cluster.switch.model"), "qm9700");
  // Each value is where its file says it.
  EXPECT_EQ(v.where("name").to_string(), top + ":2:7");
  EXPECT_EQ(v.where("cluster.switch.radix").to_string(), top + ":5:12");
  EXPECT_EQ(v.where("cluster.nodes").to_string(), dir.file("base.yaml") + ":4:10");
  EXPECT_EQ(v.where("cluster.switch.model").to_string(), dir.file("base.yaml") + ":8:12");
  EXPECT_EQ(v.get_string("extends"), "base.yaml");
}

TEST(Extends, ScalarReplacesAndFlowMappingsMerge) {
  const ScratchDir dir;
  dir.write("base.yaml", kBase);
  const std::string top = dir.write("top.yaml",
                                    "extends: base.yaml\n"
                                    "cluster: {nodes: 16, switch: {model: sn5600}}\n");
  const ConfigValues v = load(top);
  EXPECT_EQ(v.get_int("cluster.nodes"), 16);
  EXPECT_EQ(v.get_string("cluster.switch.model"), "sn5600");
  EXPECT_EQ(v.get_int("cluster.switch.radix"), 32);
  EXPECT_EQ(v.get_string("name"), "base");
}

// No key of these schemas takes a list, so a list shows replacement by the
// errors it gives or takes away: it is never merged with the base's value.
TEST(Extends, ListReplacesTheBaseValueWhole) {
  const ScratchDir dir;
  dir.write("base.yaml", kBase);
  // A list over a scalar: the list is the value, reported in the top file.
  const std::string top = dir.write("top.yaml",
                                    "extends: base.yaml\n"
                                    "cluster:\n"
                                    "  nodes: [8, 16]\n");
  EXPECT_EQ(errors_of(top), std::vector<std::string>{
                                top + ":3:10: error: cluster.nodes: expected integer > 0, found "
                                      "a sequence"});
  // A list over a whole section replaces it too, rather than merging into it.
  const std::string section = dir.write("section.yaml",
                                        "extends: base.yaml\n"
                                        "cluster: [a, b]\n");
  EXPECT_EQ(errors_of(section),
            std::vector<std::string>{section + ":2:10: error: cluster: expected a mapping (section "
                                               "'cluster'), found a sequence"});
  // A scalar over the base's list: the list is gone, and with it its error.
  dir.write("list_base.yaml",
            "name: b\n"
            "cluster:\n"
            "  nodes: [1, 2]\n"
            "  switch: [x]\n");
  const std::string fixed = dir.write("fixed.yaml",
                                      "extends: list_base.yaml\n"
                                      "cluster:\n"
                                      "  nodes: 2\n"
                                      "  switch: {radix: 16}\n");
  const ConfigValues v = load(fixed);
  EXPECT_EQ(v.get_int("cluster.nodes"), 2);
  EXPECT_EQ(v.get_int("cluster.switch.radix"), 16);
  EXPECT_EQ(v.get_string("cluster.switch.model"), "generic");  // the schema's default
}

TEST(Extends, EmptySectionAddsNothing) {
  const ScratchDir dir;
  dir.write("base.yaml", kBase);
  const std::string top = dir.write("top.yaml", "extends: base.yaml\ncluster:\n");
  EXPECT_EQ(load(top).get_int("cluster.switch.radix"), 32);
}

TEST(Extends, NestedChainResolvesEachAgainstItsOwnFolder) {
  const ScratchDir dir;
  dir.write("root.yaml", kBase);
  std::filesystem::create_directories(dir.file("mid"));
  dir.write("mid/mid.yaml",
            "extends: ../root.yaml\n"
            "cluster: {memory: 96GB, switch: {radix: 64}}\n");
  const std::string top = dir.write("top.yaml",
                                    "extends: mid/mid.yaml\n"
                                    "name: top\n"
                                    "cluster: {switch: {model: sn5600}}\n");
  const ConfigValues v = load(top);
  EXPECT_EQ(v.get_string("name"), "top");
  EXPECT_EQ(v.get_int("cluster.nodes"), 4);                   // root
  EXPECT_EQ(v.get_bytes("cluster.memory"), 96'000'000'000);   // mid
  EXPECT_EQ(v.get_int("cluster.switch.radix"), 64);           // mid over root's 32
  EXPECT_EQ(v.get_string("cluster.switch.model"), "sn5600");  // top
  EXPECT_EQ(v.where("cluster.memory").to_string(), dir.file("mid/mid.yaml") + ":2:19");
  EXPECT_EQ(v.get_string("extends"), "mid/mid.yaml");
}

TEST(Extends, CycleIsAnErrorNamingEveryFile) {
  const ScratchDir dir;
  const std::string a = dir.write("a.yaml", "extends: b.yaml\nname: a\n");
  const std::string b = dir.write("b.yaml", "name: b\nextends: ./c.yaml\n");
  const std::string c = dir.write("c.yaml", "extends: a.yaml\n");
  EXPECT_EQ(errors_of(a),
            std::vector<std::string>{c +
                                     ":1:10: error: extends: expected a chain of files that ends, "
                                     "found a cycle: " +
                                     a + " -> " + b + " -> " + c + " -> " + a});
  const std::string self = dir.write("self.yaml", "extends: self.yaml\n");
  EXPECT_EQ(errors_of(self),
            std::vector<std::string>{self +
                                     ":1:10: error: extends: expected a chain of files that "
                                     "ends, found a cycle: " +
                                     self + " -> " + self});
}

TEST(Extends, MissingBaseIsReportedAtTheExtendsThatNamesIt) {
  const ScratchDir dir;
  const std::string top = dir.write("top.yaml", "name: t\nextends: nope.yaml\n");
  EXPECT_EQ(errors_of(top),
            std::vector<std::string>{top +
                                     ":2:10: error: extends: expected a YAML file to extend "
                                     "(relative to this file's folder), found no file at '" +
                                     dir.file("nope.yaml") + "'"});
  std::filesystem::create_directories(dir.file("folder"));
  const std::string folder = dir.write("folder.yaml", "extends: folder\n");
  EXPECT_EQ(errors_of(folder),
            std::vector<std::string>{folder +
                                     ":1:10: error: extends: expected a YAML file to "
                                     "extend (relative to this file's folder), found a "
                                     "directory at '" +
                                     dir.file("folder") + "'"});
}

TEST(Extends, ErrorsInsideTheBaseNameTheBaseFile) {
  const ScratchDir dir;
  const std::string base = dir.write("base.yaml",
                                     "name: b\n"
                                     "cluster:\n"
                                     "  nodes: 0\n"
                                     "  nodse: 3\n");
  const std::string top = dir.write("top.yaml",
                                    "extends: base.yaml\n"
                                    "cluster:\n"
                                    "  memory: -1GB\n");
  EXPECT_EQ(errors_of(top),
            (std::vector<std::string>{
                base + ":3:10: error: cluster.nodes: expected a positive integer, found '0'",
                base + ":4:3: error: cluster.nodse: unknown key (did you mean 'nodes'?); "
                       "expected one of: memory, nodes, switch (in section 'cluster')",
                top + ":3:11: error: cluster.memory: expected a positive size such as '80GiB', "
                      "found '-1GB'"}));
  // Invalid YAML and an empty file in the base stop the reading there.
  const std::string broken = dir.write("broken.yaml", "name: b\ncluster: {nodes: 4\n");
  const std::string on_broken = dir.write("on_broken.yaml", "extends: broken.yaml\n");
  const std::vector<std::string> yaml_errors = errors_of(on_broken);
  ASSERT_EQ(yaml_errors.size(), 1u);
  EXPECT_EQ(yaml_errors[0].rfind(broken + ":3:1: error: invalid YAML: ", 0), 0u) << yaml_errors[0];
  dir.write("empty.yaml", "# nothing\n");
  const std::string on_empty = dir.write("on_empty.yaml", "extends: empty.yaml\n");
  EXPECT_EQ(errors_of(on_empty),
            std::vector<std::string>{dir.file("empty.yaml") +
                                     ":1:1: error: the file is empty; expected a mapping of keys "
                                     "(a file to extend)"});
}

TEST(Extends, RequiredKeysAreCheckedOnTheMergedFile) {
  const ScratchDir dir;
  // The base alone lacks cluster.nodes; the top gives it.
  dir.write("partial.yaml", "name: p\ncluster:\n  memory: 8GB\n");
  const std::string top = dir.write("top.yaml", "extends: partial.yaml\ncluster: {nodes: 2}\n");
  EXPECT_EQ(load(top).get_int("cluster.nodes"), 2);
  // Neither gives it: reported at the top file's section.
  const std::string none =
      dir.write("none.yaml", "extends: partial.yaml\ncluster:\n  memory: 1GB\n");
  const std::vector<std::string> errors = errors_of(none);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind(none + ":3:3: error: cluster.nodes: missing required key", 0), 0u)
      << errors[0];
}

TEST(Extends, BadExtendsValueIsReportedAgainstTheSchema) {
  const ScratchDir dir;
  const std::string top = dir.write("top.yaml", "extends: {file: a.yaml}\nname: t\n");
  const std::vector<std::string> errors = errors_of(top);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0], top + ":1:10: error: extends: expected non-empty string, found a mapping");
}

TEST(Extends, OnlySchemasThatDeclareItFollowExtends) {
  const ScratchDir dir;
  dir.write("base.yaml", kBase);
  const std::string top = dir.write("top.yaml", "extends: base.yaml\nname: t\n");
  try {
    load(top, extends_schema(/*with_extends=*/false));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    ASSERT_GE(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].to_string().rfind(top + ":1:1: error: extends: unknown key", 0),
              0u)
        << e.what();
  }
}

TEST(Extends, OverridesApplyOnTopOfTheMergedFile) {
  const ScratchDir dir;
  dir.write("base.yaml", kBase);
  const std::string top = dir.write("top.yaml", "extends: base.yaml\ncluster: {nodes: 8}\n");
  const ConfigValues v = load(top, extends_schema(), {"cluster.switch.radix=256"});
  EXPECT_EQ(v.get_int("cluster.nodes"), 8);
  EXPECT_EQ(v.get_int("cluster.switch.radix"), 256);
}

}  // namespace
}  // namespace clustersim::sim
