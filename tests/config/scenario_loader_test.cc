#include "config/scenario_loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"
#include "sim/check.h"
#include "sim/sim_time.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::sim {
namespace {

using test_support::ScratchDir;

// The identity keys plus a "cluster" section with one key of every type and a
// nested section, so that every path through the loader can be reached.
ConfigSchema test_schema() {
  ConfigSchema schema;
  add_scenario_identity_keys(schema);
  schema.add_section("cluster", "The machines.");
  schema.add_key("cluster.nodes", ValueType::kInt, "Number of nodes.")
      .positive()
      .default_to(int64_t{4});
  schema.add_key("cluster.utilization", ValueType::kFloat, "Fraction of time busy.")
      .fraction()
      .default_to(0.5);
  schema.add_key("cluster.ecc", ValueType::kBool, "Whether memory has ECC.").default_to(true);
  schema.add_key("cluster.topology", ValueType::kEnum, "Network shape.")
      .one_of({"fat_tree", "torus", "dragonfly"})
      .default_to(std::string("fat_tree"));
  schema.add_key("cluster.memory", ValueType::kBytes, "Memory per GPU.")
      .positive()
      .default_to(int64_t{80} << 30);
  schema.add_key("cluster.link_bandwidth", ValueType::kBandwidth, "Bandwidth of one link.")
      .positive()
      .default_to(5e10);
  schema.add_key("cluster.timeout", ValueType::kDuration, "Give up after this long.")
      .in_unit("s")
      .positive()
      .default_to(SimTime::minutes(10));
  schema.add_section("cluster.switch", "The switches.");
  schema.add_key("cluster.switch.radix", ValueType::kInt, "Ports per switch.")
      .positive()
      .default_to(int64_t{64});
  schema.add_key("cluster.switch.model", ValueType::kString, "Switch model, if known.");
  return schema;
}

// What unknown-key messages list for the top level and for "cluster".
std::string top_keys() { return "cluster, description, name, seed"; }
std::string cluster_keys() {
  return "ecc, link_bandwidth, memory, nodes, switch, timeout, topology, utilization";
}
std::string name_missing() {
  return "name: missing required key; expected non-empty string (Name of the scenario, shown in "
         "every report.)";
}

ConfigValues load(std::string_view yaml, const std::vector<std::string>& overrides = {}) {
  return load_scenario_text(yaml, "s.yaml", test_schema(), overrides);
}

// The diagnostic lines of loading `yaml`; fails the test if it loads.
std::vector<std::string> errors_of(std::string_view yaml,
                                   const std::vector<std::string>& overrides = {}) {
  try {
    load(yaml, overrides);
  } catch (const ConfigError& e) {
    std::vector<std::string> lines;
    for (const Diagnostic& d : e.diagnostics()) lines.push_back(d.to_string());
    return lines;
  }
  ADD_FAILURE() << "expected a ConfigError for:\n" << yaml;
  return {};
}

// The single diagnostic line of loading `yaml`.
std::string error_of(std::string_view yaml, const std::vector<std::string>& overrides = {}) {
  const std::vector<std::string> lines = errors_of(yaml, overrides);
  EXPECT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
  return lines.empty() ? std::string() : lines.front();
}

// ---- valid input, defaults and locations ----

TEST(ScenarioLoader, LoadsEveryTypeWithItsLocation) {
  const ConfigValues values = load(
      "name: run-1\n"
      "seed: 42\n"
      "cluster:\n"
      "  nodes: 16\n"
      "  utilization: 0.75\n"
      "  ecc: false\n"
      "  topology: torus\n"
      "  memory: 80GiB\n"
      "  link_bandwidth: 400Gbps\n"
      "  timeout: 10min\n"
      "  switch:\n"
      "    radix: 32\n"
      "    model: tomahawk\n");
  EXPECT_EQ(values.get_string("name"), "run-1");
  EXPECT_EQ(values.get_int("seed"), 42);
  EXPECT_EQ(values.get_int("cluster.nodes"), 16);
  EXPECT_EQ(values.get_float("cluster.utilization"), 0.75);
  EXPECT_FALSE(values.get_bool("cluster.ecc"));
  EXPECT_EQ(values.get_string("cluster.topology"), "torus");
  EXPECT_EQ(values.get_bytes("cluster.memory"), int64_t{85899345920});
  EXPECT_EQ(values.get_bandwidth_Bps("cluster.link_bandwidth"), 5e10);
  EXPECT_EQ(values.get_duration("cluster.timeout"), SimTime::s(600));
  EXPECT_EQ(values.get_int("cluster.switch.radix"), 32);
  EXPECT_EQ(values.get_string("cluster.switch.model"), "tomahawk");

  // Locations are 1-based and point at the value.
  EXPECT_EQ(values.where("name").to_string(), "s.yaml:1:7");
  EXPECT_EQ(values.where("seed").to_string(), "s.yaml:2:7");
  EXPECT_EQ(values.where("cluster.memory").to_string(), "s.yaml:8:11");
  EXPECT_EQ(values.where("cluster.switch.radix").to_string(), "s.yaml:12:12");
  EXPECT_FALSE(values.entry("cluster.nodes").is_default);
  EXPECT_TRUE(values.entry("description").is_default);
}

TEST(ScenarioLoader, AbsentKeysTakeDefaults) {
  const ConfigValues values = load("name: minimal\n");
  EXPECT_EQ(values.get_string("description"), "");
  EXPECT_EQ(values.get_int("seed"), 1);
  EXPECT_EQ(values.get_int("cluster.nodes"), 4);
  EXPECT_EQ(values.get_float("cluster.utilization"), 0.5);
  EXPECT_TRUE(values.get_bool("cluster.ecc"));
  EXPECT_EQ(values.get_string("cluster.topology"), "fat_tree");
  EXPECT_EQ(values.get_bytes("cluster.memory"), int64_t{85899345920});
  EXPECT_EQ(values.get_bandwidth_Bps("cluster.link_bandwidth"), 5e10);
  EXPECT_EQ(values.get_duration("cluster.timeout"), SimTime::minutes(10));
  EXPECT_EQ(values.get_int("cluster.switch.radix"), 64);

  // A default is located at the file (no section of these keys is in it).
  for (const std::string key : {"seed", "description", "cluster.nodes", "cluster.switch.radix"}) {
    const ConfigValues::Entry& entry = values.entry(key);
    EXPECT_TRUE(entry.is_default) << key;
    EXPECT_TRUE(entry.where.defaulted) << key;
    EXPECT_EQ(entry.where.to_string(), "s.yaml:1:1") << key;
  }
  EXPECT_FALSE(values.entry("name").is_default);
  EXPECT_FALSE(values.where("name").defaulted);
  EXPECT_EQ(values.where("name").to_string(), "s.yaml:1:7");
}

TEST(ScenarioLoader, ADefaultIsLocatedAtItsInnermostSectionInTheFile) {
  const ConfigValues values = load("name: x\ncluster:\n  nodes: 8\n  switch:\n    model: m\n");
  EXPECT_EQ(values.where("cluster.switch.radix").to_string(), "s.yaml:5:5");
  EXPECT_EQ(values.where("cluster.ecc").to_string(), "s.yaml:3:3");
  EXPECT_EQ(values.where("seed").to_string(), "s.yaml:1:1");
  EXPECT_TRUE(values.where("cluster.ecc").defaulted);
  // A check that fails on a default says so after the key.
  const Diagnostic d{values.where("cluster.ecc"), "cluster.ecc", "expected true, found false"};
  EXPECT_EQ(d.to_string(),
            "s.yaml:3:3: error: cluster.ecc (not set: its default): expected true, found false");
  const Diagnostic given{values.where("cluster.nodes"), "cluster.nodes", "expected 4, found 8"};
  EXPECT_EQ(given.to_string(), "s.yaml:3:10: error: cluster.nodes: expected 4, found 8");
}

TEST(ScenarioLoader, OptionalKeyWithoutDefaultIsAbsent) {
  const ConfigValues values = load("name: x\n");
  EXPECT_FALSE(values.has("cluster.switch.model"));
  EXPECT_TRUE(values.has("cluster.switch.radix"));
  // Every other key has a value: 11 keys declared, one optional without default.
  EXPECT_EQ(values.entries().size(), 12u - 1u);
}

TEST(ScenarioLoader, EmptySectionTakesDefaults) {
  const ConfigValues values = load("name: x\ncluster:\n");
  EXPECT_EQ(values.get_int("cluster.nodes"), 4);
  EXPECT_TRUE(values.entry("cluster.nodes").is_default);
}

TEST(ScenarioLoader, BareNumberIsInTheKeysUnit) {
  const ConfigValues values = load("name: x\ncluster:\n  timeout: 30\n");
  EXPECT_EQ(values.get_duration("cluster.timeout"), SimTime::s(30));
  EXPECT_EQ(values.where("cluster.timeout").to_string(), "s.yaml:3:12");
}

TEST(ScenarioLoader, UnitSuffixesAreExact) {
  const ConfigValues values = load(
      "name: x\n"
      "cluster:\n"
      "  memory: 1.5GiB\n"
      "  link_bandwidth: 50GB/s\n"
      "  timeout: 1.5ms\n");
  EXPECT_EQ(values.get_bytes("cluster.memory"), int64_t{1610612736});
  EXPECT_EQ(values.get_bandwidth_Bps("cluster.link_bandwidth"), 5e10);
  EXPECT_EQ(values.get_duration("cluster.timeout"), SimTime::us(1500));

  const ConfigValues decimal = load("name: x\ncluster: {memory: 0.1GB, timeout: 2us}\n");
  EXPECT_EQ(decimal.get_bytes("cluster.memory"), int64_t{100000000});
  EXPECT_EQ(decimal.get_duration("cluster.timeout"), SimTime::ns(2000));
}

TEST(ScenarioLoader, Int64MaxIsAccepted) {
  const ConfigValues values = load("name: x\nseed: 9223372036854775807\n");
  EXPECT_EQ(values.get_int("seed"), std::numeric_limits<int64_t>::max());
}

TEST(ScenarioLoader, FlowMappingAndQuotedValues) {
  const ConfigValues values = load("{name: \"a b\", cluster: {nodes: 2, ecc: TRUE}}\n");
  EXPECT_EQ(values.get_string("name"), "a b");
  EXPECT_EQ(values.get_int("cluster.nodes"), 2);
  EXPECT_TRUE(values.get_bool("cluster.ecc"));
}

TEST(ScenarioLoader, ValuesGettersCheckTheType) {
  const ConfigValues values = load("name: x\n");
  EXPECT_THROW(values.get_float("seed"), InvariantError);
  EXPECT_THROW(values.get_string("cluster.nodes"), InvariantError);
  EXPECT_THROW(values.get_int("cluster.switch.model"), InvariantError);
  EXPECT_THROW(values.entry("no.such.key"), InvariantError);
}

// ---- files ----

TEST(ScenarioLoaderFile, LoadsAFileAndNamesItInLocations) {
  const ScratchDir dir;
  const std::string path = dir.write("scenario.yaml", "# A comment first.\nname: from-file\n");
  const ConfigValues values = load_scenario_file(path, test_schema());
  EXPECT_EQ(values.get_string("name"), "from-file");
  EXPECT_EQ(values.where("name").to_string(), path + ":2:7");
}

TEST(ScenarioLoaderFile, MissingFile) {
  const ScratchDir dir;
  const std::string path = dir.path() + "/absent.yaml";
  try {
    load_scenario_file(path, test_schema());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].where.file, path);
    EXPECT_EQ(e.diagnostics()[0].where.line, 0);
    EXPECT_EQ(std::string(e.what()), path + ": error: cannot open the scenario: no such file");
  }
}

TEST(ScenarioLoaderFile, Directory) {
  const ScratchDir dir;
  try {
    load_scenario_file(dir.path(), test_schema());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.path() + ": error: is a directory; expected a scenario YAML file");
  }
}

// what() of loading `path` as a scenario ("" when it loads).
std::string load_error(const std::string& path) {
  try {
    load_scenario_file(path, test_schema());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ScenarioLoaderFile, AFifoIsRefusedAtOnce) {
  const ScratchDir dir;
  const std::string path = dir.file("pipe.yaml");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(load_error(path),
            path + ": error: is not a regular file; expected a scenario YAML file");
}

TEST(ScenarioLoaderFile, ASymlinkLoopIsNamed) {
  const ScratchDir dir;
  const std::string a = dir.file("a.yaml");
  std::filesystem::create_symlink(dir.file("b.yaml"), a);
  std::filesystem::create_symlink(a, dir.file("b.yaml"));
  EXPECT_EQ(load_error(a), a + ": error: cannot open the scenario: a loop of symbolic links");
}

TEST(ScenarioLoaderFile, AHugeFileIsRefusedBeforeItIsRead) {
  const ScratchDir dir;
  const std::string path = dir.file("huge.yaml");
  // Sparse: 1 GB of size without 1 GB of disk or of reading.
  std::filesystem::resize_file(dir.write("huge.yaml", "name: x\n"), 1000000000);
  EXPECT_EQ(load_error(path), path +
                                  ": error: cannot load the scenario: it is 1,000,000,000 bytes, "
                                  "over the 256MiB limit on input "
                                  "files (set CLUSTERSIM_MAX_INPUT_BYTES to read larger ones)");
}

TEST(ScenarioLoaderFile, EmptyFile) {
  const ScratchDir dir;
  const std::string path = dir.write("empty.yaml", "");
  try {
    load_scenario_file(path, test_schema());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":1:1: error: the file is empty; expected a mapping of scenario keys (at least "
                  "'name')");
  }
}

TEST(ScenarioLoaderFile, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permission bits do not stop reading";
  const ScratchDir dir;
  const std::string path = dir.write("secret.yaml", "name: x\n");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  try {
    load_scenario_file(path, test_schema());
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": error: cannot open the scenario for reading (permission denied?)");
  }
}

// ---- the file as a whole ----

TEST(ScenarioLoader, OnlyComments) {
  EXPECT_EQ(error_of("# nothing here\n\n   # still nothing\n"),
            "s.yaml:1:1: error: the file is empty; expected a mapping of scenario keys (at least "
            "'name')");
}

TEST(ScenarioLoader, TopLevelList) {
  // The required keys are not also reported missing: the file's shape is the problem.
  EXPECT_EQ(error_of("- name\n- x\n"),
            "s.yaml:1:1: error: expected a mapping of scenario keys at the top level (e.g. "
            "'name: my-run'), found a sequence");
}

TEST(ScenarioLoader, TopLevelScalar) {
  EXPECT_EQ(error_of("\nhello\n"),
            "s.yaml:2:1: error: expected a mapping of scenario keys at the top level (e.g. "
            "'name: my-run'), found 'hello'");
}

TEST(ScenarioLoader, TopLevelTextIsShownShortened) {
  // A CSV given as a scenario is one long plain scalar.
  EXPECT_EQ(error_of("hardware,dtype,m,n,k,tflops,source\nA100-SXM,fp16,1024,1024,1024,119.4,"
                     "azure-cublaslt\nA100-SXM,fp16,2048,2048,2048,221.8,azure-cublaslt\n"),
            "s.yaml:1:1: error: expected a mapping of scenario keys at the top level (e.g. "
            "'name: my-run'), found 'hardware,dtype,m,n,k,tflops,source A100-SXM,fp16,1024,1024,"
            "1...' (text of 134 characters)");
}

TEST(ScenarioLoader, InvalidYamlUnclosedFlowSequence) {
  // yaml-cpp notices the missing ']' at the next token: the ':' after "description".
  EXPECT_EQ(error_of("name: x\nseed: [1, 2\ndescription: y\n"),
            "s.yaml:3:12: error: invalid YAML: end of sequence flow not found");
  // ...or at the end of the input when nothing follows.
  EXPECT_EQ(error_of("name: [a, b\n"),
            "s.yaml:2:1: error: invalid YAML: end of sequence flow not found");
}

TEST(ScenarioLoader, InvalidYamlBadIndentation) {
  EXPECT_EQ(error_of("name: x\n  bad: indent\n"),
            "s.yaml:2:6: error: invalid YAML: illegal map value");
}

// yaml-cpp 0.7 loops forever on these in YAML::LoadAll (jbeder/yaml-cpp#1040);
// found by tests/fuzz/scenario_fuzz.
TEST(ScenarioLoader, AStrayCommaIsAnErrorNotAHang) {
  const std::string message =
      "invalid YAML: a token that cannot start a value here (a ',' outside [ ] or { }?)";
  EXPECT_EQ(error_of(",name: \"\"\n"), "s.yaml:1:1: error: " + message);
  EXPECT_EQ(error_of(","), "s.yaml:1:1: error: " + message);
  EXPECT_EQ(error_of("name: a\n---\n,\n"), "s.yaml:3:1: error: " + message);
}

TEST(ScenarioLoader, TwoDocuments) {
  EXPECT_EQ(error_of("name: a\n---\nname: b\n"),
            "s.yaml:3:1: error: expected one YAML document, found 2 (separated by '---')");
}

// ---- keys ----

TEST(ScenarioLoader, DuplicateTopLevelKey) {
  EXPECT_EQ(error_of("name: a\nseed: 2\nname: b\n"),
            "s.yaml:3:1: error: name: duplicate key (first set at line 1); expected each key once");
}

TEST(ScenarioLoader, DuplicateKeyInSection) {
  EXPECT_EQ(error_of("name: a\ncluster:\n  nodes: 2\n  ecc: true\n  nodes: 3\n"),
            "s.yaml:5:3: error: cluster.nodes: duplicate key (first set at line 3); expected each "
            "key once");
}

TEST(ScenarioLoader, UnknownKeyWithDidYouMean) {
  EXPECT_EQ(error_of("name: x\nnmae: x\n"),
            "s.yaml:2:1: error: nmae: unknown key (did you mean 'name'?); expected one of: " +
                top_keys());
}

TEST(ScenarioLoader, UnknownKeyWithoutCloseMatch) {
  EXPECT_EQ(error_of("name: x\nwhatever: 1\n"),
            "s.yaml:2:1: error: whatever: unknown key; expected one of: " + top_keys());
}

TEST(ScenarioLoader, UnknownKeyInSectionListsThatSection) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  nodse: 4\n"),
            "s.yaml:3:3: error: cluster.nodse: unknown key (did you mean 'nodes'?); expected one "
            "of: " +
                cluster_keys() + " (in section 'cluster')");
  EXPECT_EQ(error_of("name: x\ncluster:\n  switch:\n    radx: 4\n"),
            "s.yaml:4:5: error: cluster.switch.radx: unknown key (did you mean 'radix'?); "
            "expected one of: model, radix (in section 'cluster.switch')");
}

TEST(ScenarioLoader, NonScalarKey) {
  EXPECT_EQ(error_of("name: x\n[a, b]: 1\n"),
            "s.yaml:2:1: error: expected a key name, found a sequence as a key");
}

// ---- values of the wrong kind ----

TEST(ScenarioLoader, SequenceWhereScalarExpected) {
  EXPECT_EQ(error_of("name: x\nseed: [1, 2]\n"),
            "s.yaml:2:7: error: seed: expected integer >= 0, found a sequence");
}

TEST(ScenarioLoader, MappingWhereScalarExpected) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  memory:\n    size: 1GB\n"),
            "s.yaml:4:5: error: cluster.memory: expected size > 0, found a mapping");
}

TEST(ScenarioLoader, SequenceForAnEnumListsTheChoicesPlainly) {
  // No Markdown escaping (a backslash before each bar) in messages.
  EXPECT_EQ(error_of("name: x\ncluster:\n  topology: [torus]\n"),
            "s.yaml:3:13: error: cluster.topology: expected one of: fat_tree | torus | dragonfly, "
            "found a sequence");
}

TEST(ScenarioLoader, ScalarWhereSectionExpected) {
  EXPECT_EQ(error_of("name: x\ncluster: big\n"),
            "s.yaml:2:10: error: cluster: expected a mapping (section 'cluster'), found 'big'");
}

TEST(ScenarioLoader, TextForAnInt) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  nodes: four\n"),
            "s.yaml:3:10: error: cluster.nodes: expected a positive integer, found 'four'");
}

TEST(ScenarioLoader, TextForABool) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  ecc: yes\n"),
            "s.yaml:3:8: error: cluster.ecc: expected true or false, found 'yes'");
}

TEST(ScenarioLoader, EmptyValuePointsAtTheKey) {
  EXPECT_EQ(error_of("name: x\nseed:\n"),
            "s.yaml:2:1: error: seed: expected integer >= 0, found nothing (an empty value)");
}

TEST(ScenarioLoader, EmptyStringForNonEmptyString) {
  EXPECT_EQ(error_of("name: \"\"\n"),
            "s.yaml:1:7: error: name: expected a non-empty string, found ''");
}

TEST(ScenarioLoader, NegativeWherePositiveIsNeeded) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  nodes: -3\n"),
            "s.yaml:3:10: error: cluster.nodes: expected a positive integer, found '-3'");
}

TEST(ScenarioLoader, ZeroWherePositiveIsNeeded) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  switch: {radix: 0}\n"),
            "s.yaml:3:19: error: cluster.switch.radix: expected a positive integer, found '0'");
  EXPECT_EQ(error_of("name: x\ncluster:\n  timeout: 0s\n"),
            "s.yaml:3:12: error: cluster.timeout: expected a positive duration such as '10min', "
            "found '0s'");
}

TEST(ScenarioLoader, NegativeWhereNonNegativeIsNeeded) {
  EXPECT_EQ(error_of("name: x\nseed: -1\n"),
            "s.yaml:2:7: error: seed: expected a non-negative integer, found '-1'");
}

TEST(ScenarioLoader, FractionOutOfRange) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  utilization: 1.5\n"),
            "s.yaml:3:16: error: cluster.utilization: expected a finite number in [0, 1], found "
            "'1.5'");
}

TEST(ScenarioLoader, NanForAFloat) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  utilization: .nan\n"),
            "s.yaml:3:16: error: cluster.utilization: expected a finite number in [0, 1], found "
            "'.nan': not a finite number");
}

TEST(ScenarioLoader, InfinityForAFloat) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  utilization: .inf\n"),
            "s.yaml:3:16: error: cluster.utilization: expected a finite number in [0, 1], found "
            "'.inf': not a finite number");
  EXPECT_EQ(error_of("name: x\ncluster:\n  utilization: -.Inf\n"),
            "s.yaml:3:16: error: cluster.utilization: expected a finite number in [0, 1], found "
            "'-.Inf': not a finite number");
}

TEST(ScenarioLoader, Int64Overflow) {
  EXPECT_EQ(error_of("name: x\nseed: 99999999999999999999\n"),
            "s.yaml:2:7: error: seed: expected a non-negative integer, found "
            "'99999999999999999999': overflows a 64-bit integer (limit +-9223372036854775807)");
  EXPECT_EQ(error_of("name: x\nseed: 9223372036854775808\n"),
            "s.yaml:2:7: error: seed: expected a non-negative integer, found "
            "'9223372036854775808': overflows a 64-bit integer (limit +-9223372036854775807)");
}

TEST(ScenarioLoader, SizeWrittenInBits) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  memory: 80Gb\n"),
            "s.yaml:3:11: error: cluster.memory: expected a positive size such as '80GiB', found "
            "'80Gb': 'Gb' counts bits (b), but sizes are in bytes (B): did you mean 'GB'?");
}

TEST(ScenarioLoader, UnknownDurationUnit) {
  EXPECT_EQ(
      error_of("name: x\ncluster:\n  timeout: 10 parsecs\n"),
      "s.yaml:3:12: error: cluster.timeout: expected a positive duration such as '10min', "
      "found '10 parsecs': unknown duration unit 'parsecs'; accepted units: ns, us, \xC2\xB5s, "
      "ms, s, min, h, d");
}

TEST(ScenarioLoader, UnknownEnumValueWithSuggestion) {
  EXPECT_EQ(error_of("name: x\ncluster:\n  topology: toru\n"),
            "s.yaml:3:13: error: cluster.topology: expected one of fat_tree, torus, dragonfly, "
            "found 'toru': did you mean 'torus'?");
  EXPECT_EQ(error_of("name: x\ncluster:\n  topology: ring\n"),
            "s.yaml:3:13: error: cluster.topology: expected one of fat_tree, torus, dragonfly, "
            "found 'ring'");
}

// ---- required keys ----

TEST(ScenarioLoader, MissingRequiredKey) {
  EXPECT_EQ(error_of("seed: 3\n"), "s.yaml:1:1: error: " + name_missing());
}

TEST(ScenarioLoader, MissingRequiredKeyInSectionPointsAtTheSection) {
  ConfigSchema schema = test_schema();
  schema.add_key("cluster.switch.ports", ValueType::kInt, "Ports.").required();
  try {
    load_scenario_text("name: x\ncluster:\n  switch:\n    radix: 8\n", "s.yaml", schema);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:4:5: error: cluster.switch.ports: missing required key; expected integer "
              "(Ports.)");
  }
}

TEST(ScenarioLoader, InvalidRequiredKeyIsNotAlsoMissing) {
  EXPECT_EQ(error_of("name: [x]\n"),
            "s.yaml:1:7: error: name: expected non-empty string, found a sequence");
  EXPECT_EQ(error_of("name:\n"),
            "s.yaml:1:1: error: name: expected non-empty string, found nothing (an empty value)");
  EXPECT_EQ(error_of("name: x\n", {"name="}),
            "--set name=: error: name: expected non-empty string, found nothing (an empty value)");
}

// ---- many errors at once ----

TEST(ScenarioLoader, ReportsEveryErrorInFileOrder) {
  try {
    load(
        "seed: -1\n"
        "cluster:\n"
        "  nodes: 0\n"
        "  memroy: 1GB\n"
        "  topology: ring\n"
        "  nodes: 5\n"
        "descripton: x\n");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::vector<std::string> expected = {
        "s.yaml:1:7: error: seed: expected a non-negative integer, found '-1'",
        "s.yaml:3:10: error: cluster.nodes: expected a positive integer, found '0'",
        "s.yaml:4:3: error: cluster.memroy: unknown key (did you mean 'memory'?); expected one "
        "of: " +
            cluster_keys() + " (in section 'cluster')",
        ("s.yaml:5:13: error: cluster.topology: expected one of fat_tree, torus, dragonfly, found "
         "'ring'"),
        ("s.yaml:6:3: error: cluster.nodes: duplicate key (first set at line 3); expected each key "
         "once"),
        "s.yaml:7:1: error: descripton: unknown key (did you mean 'description'?); expected one "
        "of: " +
            top_keys(),
        // Missing required keys come last, once the whole file has been read.
        "s.yaml:1:1: error: " + name_missing(),
    };
    ASSERT_EQ(e.diagnostics().size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(e.diagnostics()[i].to_string(), expected[i]) << "diagnostic " << i;
    }
    // what() is the same lines joined.
    std::string joined;
    for (const std::string& line : expected) joined += (joined.empty() ? "" : "\n") + line;
    EXPECT_EQ(std::string(e.what()), joined);
    EXPECT_EQ(e.diagnostics()[1].key_path, "cluster.nodes");
    EXPECT_EQ(e.diagnostics()[1].where.line, 3);
    EXPECT_EQ(e.diagnostics()[1].where.column, 10);
  }
}

// ---- overrides ----

TEST(ScenarioLoaderOverride, ReplacesAFileValue) {
  const ConfigValues values = load("name: x\nseed: 5\n", {"seed=7", "cluster.switch.radix=16"});
  EXPECT_EQ(values.get_int("seed"), 7);
  EXPECT_EQ(values.where("seed").to_string(), "--set seed=7");
  EXPECT_FALSE(values.entry("seed").is_default);
  EXPECT_EQ(values.get_int("cluster.switch.radix"), 16);
  EXPECT_EQ(values.where("cluster.switch.radix").to_string(), "--set cluster.switch.radix=16");
}

TEST(ScenarioLoaderOverride, ValuesWithUnitsAndQuotes) {
  const ConfigValues values =
      load("name: x\n", {"cluster.timeout=10min", "cluster.memory=80GiB", "description='a: b'",
                         "cluster.link_bandwidth=400Gbps"});
  EXPECT_EQ(values.get_duration("cluster.timeout"), SimTime::s(600));
  EXPECT_EQ(values.get_bytes("cluster.memory"), int64_t{85899345920});
  EXPECT_EQ(values.get_string("description"), "a: b");
  EXPECT_EQ(values.get_bandwidth_Bps("cluster.link_bandwidth"), 5e10);
}

TEST(ScenarioLoaderOverride, LastOfTheSameKeyWins) {
  const ConfigValues values = load("name: x\n", {"seed=3", "seed=4"});
  EXPECT_EQ(values.get_int("seed"), 4);
  EXPECT_EQ(values.where("seed").to_string(), "--set seed=4");
}

TEST(ScenarioLoaderOverride, FixesABadFileValue) {
  const ConfigValues values =
      load("name: x\nseed: -5\ncluster:\n  nodes: [1]\n", {"seed=7", "cluster.nodes=2"});
  EXPECT_EQ(values.get_int("seed"), 7);
  EXPECT_EQ(values.get_int("cluster.nodes"), 2);
}

TEST(ScenarioLoaderOverride, SuppliesAMissingRequiredKey) {
  const ConfigValues values = load("seed: 2\n", {"name=from-cli"});
  EXPECT_EQ(values.get_string("name"), "from-cli");
}

TEST(ScenarioLoaderOverride, UnknownKeyWithDidYouMean) {
  EXPECT_EQ(error_of("name: x\n", {"sede=1"}),
            "--set sede=1: error: sede: unknown key (did you mean 'seed'?); expected one of: " +
                top_keys());
  EXPECT_EQ(error_of("name: x\n", {"cluster.switch.radx=2"}),
            "--set cluster.switch.radx=2: error: cluster.switch.radx: unknown key (did you mean "
            "'radix'?); expected one of: model, radix (in section 'cluster.switch')");
  EXPECT_EQ(error_of("name: x\n", {"cluster.swich.radix=2"}),
            "--set cluster.swich.radix=2: error: cluster.swich.radix: unknown key: there is no "
            "section 'cluster.swich'");
}

TEST(ScenarioLoaderOverride, WithoutEquals) {
  EXPECT_EQ(error_of("name: x\n", {"seed"}),
            "--set seed: error: expected KEY=VALUE (e.g. --set seed=7), found 'seed'");
  EXPECT_EQ(error_of("name: x\n", {"=3"}),
            "--set =3: error: expected KEY=VALUE (e.g. --set seed=7), found '=3'");
}

TEST(ScenarioLoaderOverride, OnASectionName) {
  EXPECT_EQ(error_of("name: x\n", {"cluster=3"}),
            "--set cluster=3: error: cluster: is a section, not a key; expected one of its keys: " +
                cluster_keys());
}

TEST(ScenarioLoaderOverride, InvalidValueNamesTheOverride) {
  try {
    load("name: x\n", {"seed=-1"});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    const Diagnostic& d = e.diagnostics()[0];
    EXPECT_EQ(d.where.file, "--set seed=-1");
    EXPECT_EQ(d.where.line, 0);
    EXPECT_EQ(d.key_path, "seed");
    EXPECT_EQ(d.to_string(),
              "--set seed=-1: error: seed: expected a non-negative integer, found '-1'");
  }
}

TEST(ScenarioLoaderOverride, SequenceValue) {
  EXPECT_EQ(error_of("name: x\n", {"cluster.nodes=[1, 2]"}),
            "--set cluster.nodes=[1, 2]: error: cluster.nodes: expected integer > 0, found a "
            "sequence");
}

TEST(ScenarioLoaderOverride, ErrorsComeWithTheFilesErrors) {
  // Malformed overrides first (they are read first), then the file in order,
  // then the values of the overrides.
  const std::vector<std::string> lines =
      errors_of("name: x\nseed: x\ncluster:\n  nodes: 0\n", {"sede=1", "cluster.ecc=maybe"});
  const std::vector<std::string> expected = {
      "--set sede=1: error: sede: unknown key (did you mean 'seed'?); expected one of: " +
          top_keys(),
      "s.yaml:2:7: error: seed: expected a non-negative integer, found 'x'",
      "s.yaml:4:10: error: cluster.nodes: expected a positive integer, found '0'",
      "--set cluster.ecc=maybe: error: cluster.ecc: expected true or false, found 'maybe'",
  };
  EXPECT_EQ(lines, expected);
}

}  // namespace
}  // namespace clustersim::sim
