#include "config/config_schema.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/scenario_loader.h"
#include "sim/check.h"
#include "sim/sim_time.h"

namespace clustersim::sim {
namespace {

std::string power_of_two(const ConfigValue& value) {
  const int64_t x = std::get<int64_t>(value);
  return x > 0 && (x & (x - 1)) == 0 ? std::string() : std::string("a power of two");
}

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
      .in_unit("B/s")
      .default_to(5e10);
  schema.add_key("cluster.timeout", ValueType::kDuration, "Give up after this long.")
      .in_unit("s")
      .non_negative()
      .default_to(SimTime::minutes(10));
  schema.add_section("cluster.switch", "The switches.");
  schema.add_key("cluster.switch.radix", ValueType::kInt, "Ports per switch.")
      .positive()
      .validated_by(power_of_two, "a power of two")
      .default_to(int64_t{64});
  schema.add_key("cluster.switch.model", ValueType::kString, "Switch model, if known.");
  return schema;
}

KeySpec spec_of(ValueType type, std::string unit = "") {
  KeySpec spec;
  spec.path = "k";
  spec.type = type;
  spec.unit = std::move(unit);
  return spec;
}

// The value of parsing `text`, or a test failure with the error.
ConfigValue parsed_ok(const KeySpec& spec, std::string_view text) {
  const Parsed<ConfigValue> parsed = parse_value(spec, text);
  EXPECT_TRUE(parsed) << "'" << text << "': " << parsed.error;
  return parsed ? *parsed : ConfigValue{};
}

// The error of parsing `text`, or a test failure if it parses.
std::string parse_error(const KeySpec& spec, std::string_view text) {
  const Parsed<ConfigValue> parsed = parse_value(spec, text);
  EXPECT_FALSE(parsed) << "'" << text << "' parsed";
  return parsed.error;
}

// ---- declaring ----

TEST(ConfigSchema, StartsWithOnlyTheTopLevelSection) {
  const ConfigSchema schema;
  ASSERT_NE(schema.find_section(""), nullptr);
  EXPECT_EQ(schema.sections().size(), 1u);
  EXPECT_TRUE(schema.keys().empty());
  EXPECT_TRUE(schema.child_names("").empty());
}

TEST(ConfigSchema, FindsDeclaredKeysAndSections) {
  const ConfigSchema schema = test_schema();
  const KeySpec* radix = schema.find_key("cluster.switch.radix");
  ASSERT_NE(radix, nullptr);
  EXPECT_EQ(radix->path, "cluster.switch.radix");
  EXPECT_EQ(radix->name(), "radix");
  EXPECT_EQ(radix->type, ValueType::kInt);
  EXPECT_EQ(radix->limit, Limit::kPositive);
  EXPECT_EQ(std::get<int64_t>(*radix->default_value), 64);
  EXPECT_EQ(schema.find_key("cluster.switch"), nullptr);
  EXPECT_EQ(schema.find_key("radix"), nullptr);
  ASSERT_NE(schema.find_section("cluster.switch"), nullptr);
  EXPECT_EQ(schema.find_section("cluster.switch")->doc, "The switches.");
  EXPECT_EQ(schema.find_section("cluster.nodes"), nullptr);
  EXPECT_EQ(schema.find_key("name")->name(), "name");
  EXPECT_TRUE(schema.find_key("name")->is_required);
  EXPECT_TRUE(schema.find_key("name")->non_empty);
}

TEST(ConfigSchema, KeyWithoutDeclaredParentSectionIsABug) {
  ConfigSchema schema;
  try {
    schema.add_key("workload.seq_len", ValueType::kInt, "Tokens.");
    FAIL() << "expected an InvariantError";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'workload.seq_len' needs a declared parent section"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(schema.find_key("workload.seq_len"), nullptr);
}

TEST(ConfigSchema, SectionWithoutDeclaredParentIsABug) {
  ConfigSchema schema;
  try {
    schema.add_section("a.b", "Nested too early.");
    FAIL() << "expected an InvariantError";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("section 'a.b' needs a declared parent section"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(schema.add_section("", "The top level again."), InvariantError);
}

TEST(ConfigSchema, DeclaringTwiceIsABug) {
  ConfigSchema schema;
  schema.add_section("cluster", "The machines.");
  schema.add_key("cluster.nodes", ValueType::kInt, "Nodes.");
  try {
    schema.add_key("cluster.nodes", ValueType::kFloat, "Nodes again.");
    FAIL() << "expected an InvariantError";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("'cluster.nodes' declared twice"), std::string::npos)
        << e.what();
  }
  // The first declaration stands.
  EXPECT_EQ(schema.find_key("cluster.nodes")->type, ValueType::kInt);
  EXPECT_THROW(schema.add_section("cluster", "Again."), InvariantError);
  // A name is either a key or a section, never both.
  EXPECT_THROW(schema.add_section("cluster.nodes", "Nodes as a section."), InvariantError);
  EXPECT_THROW(schema.add_key("cluster", ValueType::kInt, "Cluster as a key."), InvariantError);
}

TEST(ConfigSchema, ChildNamesAreKeysThenSections) {
  const ConfigSchema schema = test_schema();
  EXPECT_EQ(schema.child_names(""),
            (std::vector<std::string>{"description", "name", "seed", "cluster"}));
  EXPECT_EQ(schema.child_names("cluster"),
            (std::vector<std::string>{"ecc", "link_bandwidth", "memory", "nodes", "timeout",
                                      "topology", "utilization", "switch"}));
  EXPECT_EQ(schema.child_names("cluster.switch"), (std::vector<std::string>{"model", "radix"}));
  EXPECT_TRUE(schema.child_names("nowhere").empty());
}

TEST(ConfigSchema, Paths) {
  EXPECT_EQ(join_path("", "seed"), "seed");
  EXPECT_EQ(join_path("a.b", "c"), "a.b.c");
  EXPECT_EQ(parent_path("a.b.c"), "a.b");
  EXPECT_EQ(parent_path("c"), "");
  EXPECT_EQ(parent_path(""), "");
}

// ---- type descriptions (the docs' type column and structural messages) ----

TEST(KeySpecTypeDescription, EveryTypeAndLimit) {
  EXPECT_EQ(spec_of(ValueType::kInt).type_description(), "integer");
  EXPECT_EQ(spec_of(ValueType::kInt).positive().type_description(), "integer > 0");
  EXPECT_EQ(spec_of(ValueType::kInt).non_negative().type_description(), "integer >= 0");
  EXPECT_EQ(spec_of(ValueType::kFloat).type_description(), "number");
  EXPECT_EQ(spec_of(ValueType::kFloat).fraction().type_description(), "number in [0, 1]");
  EXPECT_EQ(spec_of(ValueType::kBool).type_description(), "boolean");
  EXPECT_EQ(spec_of(ValueType::kString).type_description(), "string");
  EXPECT_EQ(spec_of(ValueType::kString).not_empty().type_description(), "non-empty string");
  EXPECT_EQ(spec_of(ValueType::kEnum).one_of({"a", "b", "c"}).type_description(),
            "one of: a | b | c");
  EXPECT_EQ(spec_of(ValueType::kBytes).type_description(), "size");
  EXPECT_EQ(spec_of(ValueType::kBandwidth).positive().type_description(), "bandwidth > 0");
  EXPECT_EQ(spec_of(ValueType::kDuration).non_negative().type_description(), "duration >= 0");
  EXPECT_EQ(test_schema().find_key("cluster.switch.radix")->type_description(),
            "integer > 0, a power of two");
}

// ---- parse_value ----

TEST(ParseValue, Int) {
  const KeySpec spec = spec_of(ValueType::kInt);
  EXPECT_EQ(std::get<int64_t>(parsed_ok(spec, "42")), 42);
  EXPECT_EQ(std::get<int64_t>(parsed_ok(spec, "+42")), 42);
  EXPECT_EQ(std::get<int64_t>(parsed_ok(spec, "-42")), -42);
  EXPECT_EQ(std::get<int64_t>(parsed_ok(spec, "-9223372036854775808")), INT64_MIN);
  EXPECT_EQ(parse_error(spec, "4.0"), "expected an integer, found '4.0'");
  EXPECT_EQ(parse_error(spec, "1e3"), "expected an integer, found '1e3'");
  EXPECT_EQ(parse_error(spec, "0x10"), "expected an integer, found '0x10'");
  EXPECT_EQ(parse_error(spec, ""), "expected an integer, found ''");
  EXPECT_EQ(parse_error(spec, "+"), "expected an integer, found '+'");
  EXPECT_EQ(parse_error(spec, "-9223372036854775809"),
            "expected an integer, found '-9223372036854775809': overflows a 64-bit integer "
            "(limit +-9223372036854775807)");
}

TEST(ParseValue, PlusThenMinusIsNotANumber) {
  // from_chars takes no '+'; skipping it must not let "+-5" through as -5.
  EXPECT_EQ(parse_error(spec_of(ValueType::kInt), "+-5"), "expected an integer, found '+-5'");
  EXPECT_EQ(parse_error(spec_of(ValueType::kFloat), "+-1.5"),
            "expected a finite number, found '+-1.5'");
}

TEST(ParseValue, IntLimits) {
  KeySpec positive = spec_of(ValueType::kInt);
  positive.positive();
  EXPECT_EQ(parse_error(positive, "0"), "expected a positive integer, found '0'");
  EXPECT_EQ(std::get<int64_t>(parsed_ok(positive, "1")), 1);
  KeySpec non_negative = spec_of(ValueType::kInt);
  non_negative.non_negative();
  EXPECT_EQ(std::get<int64_t>(parsed_ok(non_negative, "0")), 0);
  EXPECT_EQ(parse_error(non_negative, "-1"), "expected a non-negative integer, found '-1'");
}

TEST(ParseValue, Float) {
  const KeySpec spec = spec_of(ValueType::kFloat);
  EXPECT_EQ(std::get<double>(parsed_ok(spec, "0.25")), 0.25);
  EXPECT_EQ(std::get<double>(parsed_ok(spec, ".5")), 0.5);
  EXPECT_EQ(std::get<double>(parsed_ok(spec, "1e3")), 1000.0);
  EXPECT_EQ(parse_error(spec, "half"), "expected a finite number, found 'half'");
  EXPECT_EQ(parse_error(spec, "nan"), "expected a finite number, found 'nan': not a finite number");
  EXPECT_EQ(parse_error(spec, "-.INF"),
            "expected a finite number, found '-.INF': not a finite number");
  EXPECT_EQ(parse_error(spec, "1e400"),
            "expected a finite number, found '1e400': out of the range of a double");
  KeySpec fraction = spec_of(ValueType::kFloat);
  fraction.fraction();
  EXPECT_EQ(std::get<double>(parsed_ok(fraction, "0")), 0.0);
  EXPECT_EQ(std::get<double>(parsed_ok(fraction, "1")), 1.0);
  EXPECT_EQ(parse_error(fraction, "1.01"), "expected a finite number in [0, 1], found '1.01'");
  EXPECT_EQ(parse_error(fraction, "-0.1"), "expected a finite number in [0, 1], found '-0.1'");
}

TEST(ParseValue, Bool) {
  const KeySpec spec = spec_of(ValueType::kBool);
  EXPECT_TRUE(std::get<bool>(parsed_ok(spec, "true")));
  EXPECT_TRUE(std::get<bool>(parsed_ok(spec, "True")));
  EXPECT_FALSE(std::get<bool>(parsed_ok(spec, "FALSE")));
  EXPECT_EQ(parse_error(spec, "1"), "expected true or false, found '1'");
  EXPECT_EQ(parse_error(spec, "yes"), "expected true or false, found 'yes'");
}

TEST(ParseValue, String) {
  EXPECT_EQ(std::get<std::string>(parsed_ok(spec_of(ValueType::kString), "")), "");
  KeySpec non_empty = spec_of(ValueType::kString);
  non_empty.not_empty();
  EXPECT_EQ(std::get<std::string>(parsed_ok(non_empty, "x y")), "x y");
  EXPECT_EQ(parse_error(non_empty, ""), "expected a non-empty string, found ''");
}

TEST(ParseValue, Enum) {
  KeySpec spec = spec_of(ValueType::kEnum);
  spec.one_of({"fat_tree", "torus", "dragonfly"});
  EXPECT_EQ(std::get<std::string>(parsed_ok(spec, "torus")), "torus");
  EXPECT_EQ(parse_error(spec, "Torus"),
            "expected one of fat_tree, torus, dragonfly, found 'Torus': did you mean 'torus'?");
  EXPECT_EQ(parse_error(spec, "fat-tree"),
            "expected one of fat_tree, torus, dragonfly, found 'fat-tree': did you mean "
            "'fat_tree'?");
  EXPECT_EQ(parse_error(spec, "mesh"), "expected one of fat_tree, torus, dragonfly, found 'mesh'");
}

TEST(ParseValue, Bytes) {
  const KeySpec spec = spec_of(ValueType::kBytes);
  EXPECT_EQ(std::get<int64_t>(parsed_ok(spec, "80GiB")), int64_t{85899345920});
  EXPECT_EQ(std::get<int64_t>(parsed_ok(spec, "1.5 KiB")), 1536);
  EXPECT_EQ(std::get<int64_t>(parsed_ok(spec, "0.1GB")), 100000000);
  EXPECT_EQ(parse_error(spec, "10"),
            "expected a size such as '80GiB', found '10': missing unit: a size needs one, as in "
            "'80GiB'; accepted units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB");
  EXPECT_EQ(parse_error(spec, "80Gb"),
            "expected a size such as '80GiB', found '80Gb': 'Gb' counts bits (b), but sizes are "
            "in bytes (B): did you mean 'GB'?");
  EXPECT_EQ(parse_error(spec, "1.5B"),
            "expected a size such as '80GiB', found '1.5B': not a whole number of bytes");
  // With a unit, a bare number is in it.
  EXPECT_EQ(std::get<int64_t>(parsed_ok(spec_of(ValueType::kBytes, "MiB"), "2")), 2097152);
}

TEST(ParseValue, Bandwidth) {
  KeySpec spec = spec_of(ValueType::kBandwidth);
  spec.positive();
  EXPECT_EQ(std::get<double>(parsed_ok(spec, "400Gbps")), 5e10);
  EXPECT_EQ(std::get<double>(parsed_ok(spec, "50GB/s")), 5e10);
  EXPECT_EQ(std::get<double>(parsed_ok(spec, "46.5 GB/s")), 4.65e10);
  EXPECT_EQ(parse_error(spec, "0Gbps"),
            "expected a positive bandwidth such as '400Gbps' or '50GB/s', found '0Gbps'");
  EXPECT_EQ(parse_error(spec, "400GBps"),
            "expected a positive bandwidth such as '400Gbps' or '50GB/s', found '400GBps': 'GBps' "
            "is not accepted, to keep bytes (B) and bits (b) apart: did you mean 'GB/s'?");
  EXPECT_EQ(parse_error(spec, "400Gb"),
            "expected a positive bandwidth such as '400Gbps' or '50GB/s', found '400Gb': 'Gb' is "
            "a number of bits, but a bandwidth (per second) is expected: did you mean 'Gb/s'?");
}

TEST(ParseValue, Duration) {
  KeySpec spec = spec_of(ValueType::kDuration, "s");
  spec.non_negative();
  EXPECT_EQ(std::get<SimTime>(parsed_ok(spec, "10min")), SimTime::s(600));
  EXPECT_EQ(std::get<SimTime>(parsed_ok(spec, "30")), SimTime::s(30));
  EXPECT_EQ(std::get<SimTime>(parsed_ok(spec, "0")), SimTime::zero());
  EXPECT_EQ(std::get<SimTime>(parsed_ok(spec, "2us")), SimTime::ns(2000));
  EXPECT_EQ(parse_error(spec, "-1s"),
            "expected a non-negative duration such as '10min', found '-1s'");
  EXPECT_EQ(parse_error(spec, "5 sec"),
            "expected a non-negative duration such as '10min', found '5 sec': unknown duration "
            "unit 'sec': did you mean 's'?");
  EXPECT_EQ(parse_error(spec, "1.5ns"),
            "expected a non-negative duration such as '10min', found '1.5ns': not a whole number "
            "of nanoseconds, the resolution of simulated time");
  // Without a unit on the key, a bare number is an error.
  EXPECT_FALSE(parse_value(spec_of(ValueType::kDuration), "30"));
}

TEST(ParseValue, ValidatorRunsAfterTheLimit) {
  const ConfigSchema schema = test_schema();
  const KeySpec& radix = *schema.find_key("cluster.switch.radix");
  EXPECT_EQ(std::get<int64_t>(parsed_ok(radix, "32")), 32);
  EXPECT_EQ(parse_error(radix, "6"), "expected a power of two, found '6'");
  EXPECT_EQ(parse_error(radix, "-8"), "expected a positive integer, found '-8'");
  EXPECT_EQ(parse_error(radix, "x"), "expected a positive integer, found 'x'");
}

// ---- format_value ----

TEST(FormatValue, ReadableUnits) {
  EXPECT_EQ(format_value(spec_of(ValueType::kInt), int64_t{-7}), "-7");
  EXPECT_EQ(format_value(spec_of(ValueType::kFloat), 0.1), "0.1");
  EXPECT_EQ(format_value(spec_of(ValueType::kBool), false), "false");
  EXPECT_EQ(format_value(spec_of(ValueType::kString), std::string("a b")), "a b");
  EXPECT_EQ(format_value(spec_of(ValueType::kBytes), int64_t{85899345920}), "80GiB");
  EXPECT_EQ(format_value(spec_of(ValueType::kBytes), int64_t{512000000}), "512MB");
  EXPECT_EQ(format_value(spec_of(ValueType::kBandwidth), 5e10), "50GB/s");
  EXPECT_EQ(format_value(spec_of(ValueType::kBandwidth), 4.65e10), "46.5GB/s");
  EXPECT_EQ(format_value(spec_of(ValueType::kDuration), SimTime::s(600)), "10min");
  EXPECT_EQ(format_value(spec_of(ValueType::kDuration), SimTime::us(1500)), "1.5ms");
  EXPECT_EQ(format_value(spec_of(ValueType::kDuration), SimTime::zero()), "0s");
}

TEST(FormatValue, RoundTripsThroughParseValue) {
  const KeySpec bytes = spec_of(ValueType::kBytes);
  for (const int64_t v : {int64_t{1}, int64_t{1023}, int64_t{1536}, int64_t{100000000},
                          int64_t{85899345920}, int64_t{1} << 50, int64_t{123456789012345}}) {
    EXPECT_EQ(std::get<int64_t>(parsed_ok(bytes, format_value(bytes, v))), v) << v;
  }
  const KeySpec bandwidth = spec_of(ValueType::kBandwidth);
  for (const double v : {0.5, 1.0, 12.5e9, 5e10, 4.65e10, 1e12 / 3.0}) {
    EXPECT_EQ(std::get<double>(parsed_ok(bandwidth, format_value(bandwidth, v))), v) << v;
  }
  const KeySpec duration = spec_of(ValueType::kDuration);
  for (const SimTime v : {SimTime::ns(1), SimTime::ns(1001), SimTime::us(2), SimTime::ms(1500),
                          SimTime::minutes(10), SimTime::days(54), SimTime::ns(123456789)}) {
    EXPECT_EQ(std::get<SimTime>(parsed_ok(duration, format_value(duration, v))), v) << v.count_ns();
  }
  const KeySpec number = spec_of(ValueType::kFloat);
  for (const double v : {0.1, 1.0 / 3.0, -2.5e-7, 1e300}) {
    EXPECT_EQ(std::get<double>(parsed_ok(number, format_value(number, v))), v) << v;
  }
}

// ---- describe_markdown ----

TEST(DescribeMarkdown, HasEverySectionAndKey) {
  const ConfigSchema schema = test_schema();
  const std::string text = schema.describe_markdown();
  EXPECT_TRUE(text.starts_with("# Scenario keys\n\n")) << text;
  for (const std::string heading :
       {"\n## Top level\n\nScenario identity.\n\n", "\n## `cluster`\n\nThe machines.\n\n",
        "\n## `cluster.switch`\n\nThe switches.\n\n"}) {
    EXPECT_NE(text.find(heading), std::string::npos) << heading;
  }
  for (const auto& [path, spec] : schema.keys()) {
    const std::string start = "| `" + path + "` | ";
    const size_t at = text.find(start);
    ASSERT_NE(at, std::string::npos) << path;
    const std::string row = text.substr(at, text.find('\n', at) - at);
    EXPECT_TRUE(row.ends_with(" | " + spec.doc + " |")) << row;
    EXPECT_NE(row.find(" | " + spec.unit + " | "), std::string::npos) << row;
  }
}

TEST(DescribeMarkdown, ExactRows) {
  const std::string text = test_schema().describe_markdown();
  const std::vector<std::string> rows = {
      ("| key | type | unit | default | description |\n| --- | --- | --- | --- | --- |\n"
       "| `description` | string |  | `\"\"` | Free text describing the scenario. |\n"
       "| `name` | non-empty string |  | required | Name of the scenario, shown in every report. "
       "|\n"
       "| `seed` | integer >= 0 |  | `1` | Seed of every random stream; same scenario and seed, "
       "same results. |\n"),
      "| `cluster.link_bandwidth` | bandwidth > 0 | B/s | `50GB/s` | Bandwidth of one link. |\n",
      "| `cluster.memory` | size > 0 |  | `80GiB` | Memory per GPU. |\n",
      "| `cluster.timeout` | duration >= 0 | s | `10min` | Give up after this long. |\n",
      // In a table cell the bars of an enum are escaped.
      ("| `cluster.topology` | one of: fat_tree \\| torus \\| dragonfly |  | `fat_tree` | Network "
       "shape. |\n"),
      "| `cluster.utilization` | number in [0, 1] |  | `0.5` | Fraction of time busy. |\n",
      "| `cluster.ecc` | boolean |  | `true` | Whether memory has ECC. |\n",
      "| `cluster.switch.model` | string |  | (optional) | Switch model, if known. |\n",
      "| `cluster.switch.radix` | integer > 0, a power of two |  | `64` | Ports per switch. |\n",
  };
  for (const std::string& row : rows) {
    EXPECT_NE(text.find(row), std::string::npos) << "missing:\n" << row << "\nin:\n" << text;
  }
}

TEST(DescribeMarkdown, KeysAppearUnderTheirOwnSection) {
  const std::string text = test_schema().describe_markdown();
  const size_t cluster = text.find("## `cluster`");
  const size_t cluster_switch = text.find("## `cluster.switch`");
  ASSERT_NE(cluster, std::string::npos);
  ASSERT_NE(cluster_switch, std::string::npos);
  EXPECT_LT(text.find("## Top level"), cluster);
  const size_t nodes = text.find("| `cluster.nodes`");
  const size_t radix = text.find("| `cluster.switch.radix`");
  EXPECT_LT(text.find("| `seed`"), cluster);
  EXPECT_GT(nodes, cluster);
  EXPECT_LT(nodes, cluster_switch);
  EXPECT_GT(radix, cluster_switch);
}

}  // namespace
}  // namespace clustersim::sim
