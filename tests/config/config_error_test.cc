#include "config/config_error.h"

#include <gtest/gtest.h>

#include <string>

#include "config/config_values.h"
#include "config/scenario_loader.h"

namespace clustersim::sim {
namespace {

TEST(ConfigError, OneLinePerDiagnosticInFileOrder) {
  DiagnosticSink sink;
  sink.add({"s.yaml", 2, 7}, "seed", "expected a number, found 'x'");
  sink.add({"s.yaml", 0, 0}, "", "is a directory");
  sink.add({"--set a=b", 0, 0}, "a", "unknown key");
  try {
    sink.throw_if_any();
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "s.yaml:2:7: error: seed: expected a number, found 'x'\n"
                 "s.yaml: error: is a directory\n"
                 "--set a=b: error: a: unknown key");
    EXPECT_EQ(e.diagnostics().size(), 3u);
  }
}

TEST(ConfigError, ControlCharactersFromTheInputAreEscaped) {
  // A line break would split the diagnostic; an escape sequence would drive
  // the terminal (this one turns it red); U+009B is the C1 form of CSI.
  DiagnosticSink sink;
  sink.add({"a\tb.yaml", 1, 1}, "k\x01", "found 'x\ny\x1b[31m\x7f\xc2\x9b' and 'caf\xc3\xa9'");
  try {
    sink.throw_if_any();
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "a\\tb.yaml:1:1: error: k\\x01: found 'x\\ny\\x1b[31m\\x7f\\u009b' and "
                 "'caf\xc3\xa9'");
  }
}

TEST(ConfigError, AScenarioValueWithAnEscapeSequenceIsShownEscaped) {
  ConfigSchema schema;
  add_scenario_identity_keys(schema);
  try {
    load_scenario_text("name: x\nseed: \"\\e[31mred\"\n", "s.yaml", schema);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "s.yaml:2:7: error: seed: expected a non-negative integer, found '\\x1b[31mred'");
    // The diagnostic keeps the value as it was (for callers that want data).
    EXPECT_NE(e.diagnostics().at(0).message.find("\x1b[31m"), std::string::npos);
  }
}

}  // namespace
}  // namespace clustersim::sim
