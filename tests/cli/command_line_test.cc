#include "cli/command_line.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::Outcome;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;

const CommandSpec& run_spec() {
  static const CommandSpec spec{"run",
                                "Run a scenario.",
                                {"SCENARIO"},
                                {{"--set", "KEY=VALUE", true, "override a key"},
                                 {"-o", "FILE", false, "write the report to FILE"},
                                 {"--quiet", "", false, "print nothing"},
                                 {"--threads", "N", false, "worker threads"}},
                                "Details here."};
  return spec;
}

// What follows every UsageError message of run_spec().
std::string run_usage() {
  return "\nusage: clustersim run [--set KEY=VALUE]... [-o FILE] [--quiet] [--threads N] "
         "SCENARIO\nTry 'clustersim run --help'.";
}

ParsedCommand parse(const std::vector<std::string>& args) {
  return parse_command_args(run_spec(), args);
}

// The UsageError message of parsing `args`, or a test failure if it parses.
std::string usage_error_of(const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UsageError for " << ::testing::PrintToString(args);
  return "";
}

// ---- parse_command_args ----

TEST(ParseCommandArgs, PositionalOnly) {
  const ParsedCommand parsed = parse({"a.yaml"});
  EXPECT_FALSE(parsed.help);
  EXPECT_EQ(parsed.positionals, (std::vector<std::string>{"a.yaml"}));
  EXPECT_TRUE(parsed.options.empty());
  EXPECT_FALSE(parsed.has("-o"));
  EXPECT_EQ(parsed.value_or("-o", "fallback"), "fallback");
  EXPECT_TRUE(parsed.values("--set").empty());
}

TEST(ParseCommandArgs, OptionWithSeparateValue) {
  const ParsedCommand parsed = parse({"-o", "out.md", "a.yaml"});
  EXPECT_EQ(parsed.positionals, (std::vector<std::string>{"a.yaml"}));
  EXPECT_TRUE(parsed.has("-o"));
  EXPECT_EQ(parsed.value_or("-o", ""), "out.md");
}

TEST(ParseCommandArgs, OptionWithEqualsValue) {
  const ParsedCommand parsed = parse({"a.yaml", "--threads=4", "-o=x=y.md"});
  EXPECT_EQ(parsed.value_or("--threads", ""), "4");
  // Only the first '=' separates: the rest is the value.
  EXPECT_EQ(parsed.value_or("-o", ""), "x=y.md");
}

TEST(ParseCommandArgs, EmptyValueAfterEquals) {
  const ParsedCommand parsed = parse({"a.yaml", "-o="});
  EXPECT_TRUE(parsed.has("-o"));
  EXPECT_EQ(parsed.value_or("-o", "fallback"), "");
}

TEST(ParseCommandArgs, ValueMayStartWithADash) {
  const ParsedCommand parsed = parse({"--threads", "-1", "a.yaml"});
  EXPECT_EQ(parsed.value_or("--threads", ""), "-1");
  EXPECT_EQ(parsed.positionals, (std::vector<std::string>{"a.yaml"}));
}

TEST(ParseCommandArgs, RepeatableOptionKeepsCommandLineOrder) {
  const ParsedCommand parsed =
      parse({"--set", "seed=2", "a.yaml", "--set=name=x", "--set", "seed=1"});
  EXPECT_EQ(parsed.values("--set"), (std::vector<std::string>{"seed=2", "name=x", "seed=1"}));
  EXPECT_EQ(parsed.value_or("--set", ""), "seed=1");
  EXPECT_EQ(parsed.positionals, (std::vector<std::string>{"a.yaml"}));
}

TEST(ParseCommandArgs, Flag) {
  const ParsedCommand parsed = parse({"--quiet", "a.yaml"});
  EXPECT_TRUE(parsed.has("--quiet"));
  EXPECT_EQ(parsed.values("--quiet"), (std::vector<std::string>{""}));
  EXPECT_FALSE(parsed.has("--threads"));
}

TEST(ParseCommandArgs, FlagGivenAValue) {
  EXPECT_EQ(usage_error_of({"--quiet=yes", "a.yaml"}),
            "option '--quiet' takes no value, found '--quiet=yes'" + run_usage());
}

TEST(ParseCommandArgs, NonRepeatableOptionGivenTwice) {
  EXPECT_EQ(usage_error_of({"-o", "a.md", "-o", "b.md", "a.yaml"}),
            "option '-o' given more than once" + run_usage());
}

TEST(ParseCommandArgs, UnknownOptionWithDidYouMean) {
  EXPECT_EQ(usage_error_of({"--thread", "4", "a.yaml"}),
            "unknown option '--thread' for 'run' (did you mean '--threads'?)" + run_usage());
  EXPECT_EQ(usage_error_of({"--sett=seed=1", "a.yaml"}),
            "unknown option '--sett' for 'run' (did you mean '--set'?)" + run_usage());
  EXPECT_EQ(usage_error_of({"--verbose", "a.yaml"}),
            "unknown option '--verbose' for 'run'" + run_usage());
}

TEST(ParseCommandArgs, MissingValue) {
  EXPECT_EQ(
      usage_error_of({"a.yaml", "--threads"}),
      "option '--threads' expects a value (N), found the end of the command line" + run_usage());
}

TEST(ParseCommandArgs, TooFewPositionals) {
  EXPECT_EQ(usage_error_of({}),
            "expected SCENARIO, found the end of the command line" + run_usage());
  EXPECT_EQ(usage_error_of({"--quiet"}),
            "expected SCENARIO, found the end of the command line" + run_usage());
}

TEST(ParseCommandArgs, TooManyPositionals) {
  EXPECT_EQ(usage_error_of({"a.yaml", "b.yaml", "c.yaml"}),
            "unexpected argument 'b.yaml'" + run_usage());
}

TEST(ParseCommandArgs, HelpAnywhereSkipsPositionalChecks) {
  EXPECT_TRUE(parse({"-h"}).help);
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"a.yaml", "b.yaml", "--help"}).help);
  const ParsedCommand parsed = parse({"--set", "x=1", "-h"});
  EXPECT_TRUE(parsed.help);
  EXPECT_EQ(parsed.values("--set"), (std::vector<std::string>{"x=1"}));
}

TEST(ParseCommandArgs, DoubleDashEndsOptions) {
  const ParsedCommand parsed = parse({"--quiet", "--", "--odd-name.yaml"});
  EXPECT_TRUE(parsed.has("--quiet"));
  EXPECT_EQ(parsed.positionals, (std::vector<std::string>{"--odd-name.yaml"}));
  // A lone '-' (stdin, by convention) is a positional, not an option.
  EXPECT_EQ(parse({"-"}).positionals, (std::vector<std::string>{"-"}));
}

TEST(CommandHelp, ListsUsageSummaryDetailsAndOptions) {
  EXPECT_EQ(command_help(run_spec()),
            "clustersim run [--set KEY=VALUE]... [-o FILE] [--quiet] [--threads N] SCENARIO\n"
            "\n"
            "Run a scenario.\n"
            "\n"
            "Details here.\n"
            "\n"
            "Options:\n"
            "  --set KEY=VALUE       override a key (repeatable)\n"
            "  -o FILE               write the report to FILE\n"
            "  --quiet               print nothing\n"
            "  --threads N           worker threads\n"
            "  -h, --help            show this help\n");
}

// ---- run_clustersim, end to end ----

TEST(RunClustersim, Version) {
  const Outcome r = run({"--version"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_TRUE(r.out.starts_with("clustersim ")) << r.out;
  EXPECT_TRUE(r.out.ends_with("\n")) << r.out;
  EXPECT_GT(r.out.size(), std::string("clustersim \n").size()) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(RunClustersim, HelpGoesToStdout) {
  const Outcome r = run({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_TRUE(r.out.starts_with("usage: clustersim [--version] [--help] COMMAND [ARGS]\n"))
      << r.out;
  EXPECT_NE(r.out.find("\n  check             Check a scenario as a command would"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  describe-config   "), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(RunClustersim, NoArgumentsIsAUsageError) {
  const Outcome r = run({});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(r.err.starts_with("usage: clustersim [--version] [--help] COMMAND [ARGS]\n"))
      << r.err;
}

TEST(RunClustersim, UnknownCommandSuggests) {
  const Outcome r = run({"chek", "s.yaml"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "clustersim: error: unknown command 'chek' (did you mean 'check'?)\n"
            "Run 'clustersim --help' for the list of commands.\n");
}

TEST(RunClustersim, CheckValidScenario) {
  const ScratchDir dir;
  const std::string path = dir.write("ok.yaml", "# comment\nname: tiny-run\nseed: 3\n");
  const Outcome r = run({"check", path, "--for", "keys"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_TRUE(r.out.starts_with("ok: tiny-run\n")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(RunClustersim, CheckMisspeltKey) {
  const ScratchDir dir;
  const std::string path = dir.write("bad.yaml", "name: misspelt\nnmae: x\n");
  const Outcome r = run({"check", path, "--for", "keys"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(r.err.starts_with(path +
                                ":2:1: error: nmae: unknown key (did you mean 'name'?); expected "
                                "one of: "))
      << r.err;
  EXPECT_TRUE(r.err.ends_with("\n")) << r.err;
  // One diagnostic, one line.
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(RunClustersim, CheckBadOverride) {
  const ScratchDir dir;
  const std::string path = dir.write("ok.yaml", "name: x\n");
  const Outcome r = run({"check", path, "--for", "keys", "--set", "seed=-1"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "--set seed=-1: error: seed: expected a non-negative integer, found '-1'\n");
}

TEST(RunClustersim, CheckOverrideFixesTheFile) {
  const ScratchDir dir;
  const std::string path = dir.write("fix.yaml", "name: x\nseed: -4\n");
  const Outcome r = run({"check", "--set=seed=4", "--set", "name=fixed", path, "--for=keys"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(r.out.starts_with("ok: fixed\n")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(RunClustersim, CheckMissingFile) {
  const ScratchDir dir;
  const std::string path = dir.file("absent.yaml");
  const Outcome r = run({"check", path});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.err, path + ": error: cannot open the scenario: no such file\n");
}

TEST(RunClustersim, CheckWithoutScenarioIsAUsageError) {
  const Outcome r = run({"check"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "clustersim check: error: expected SCENARIO, found the end of the command line\n"
            "usage: clustersim check [--set KEY=VALUE]... [--for COMMAND] [--allow-oom] "
            "[--max-tasks-per-rank N] [--max-events N] SCENARIO\n"
            "Try 'clustersim check --help'.\n");
}

TEST(RunClustersim, CheckHelp) {
  const Outcome r = run({"check", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_TRUE(
      r.out.starts_with("clustersim check [--set KEY=VALUE]... [--for COMMAND] "
                        "[--allow-oom] [--max-tasks-per-rank N] [--max-events N] "
                        "SCENARIO\n\n"))
      << r.out;
  EXPECT_NE(r.out.find("  --set KEY=VALUE       "), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(RunClustersim, DescribeConfigToStdout) {
  const Outcome r = run({"describe-config"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_TRUE(r.out.starts_with("# Scenario keys\n")) << r.out;
  EXPECT_NE(r.out.find("| `name` | non-empty string |  | required | "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| `seed` | integer >= 0 |  | `1` | "), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(RunClustersim, DescribeConfigToAFile) {
  const ScratchDir dir;
  const std::string path = dir.file("keys.md");
  const Outcome to_file = run({"describe-config", "-o", path});
  EXPECT_EQ(to_file.code, kExitOk) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(to_file.err, "clustersim describe-config: wrote " + path + "\n");
  const Outcome to_stdout = run({"describe-config"});
  EXPECT_EQ(read_all(path), to_stdout.out);
  const Outcome quiet = run({"describe-config", "-o", path, "--quiet"});
  EXPECT_EQ(quiet.code, kExitOk) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

TEST(RunClustersim, DescribeConfigToAMissingDirectory) {
  const Outcome r = run({"describe-config", "-o", "/nonexistent/dir/x.md"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "clustersim describe-config: error: cannot write '/nonexistent/dir/x.md': No such "
            "file or directory\n");
}

TEST(RunClustersim, DescribeConfigTakesNoPositional) {
  const Outcome r = run({"describe-config", "extra"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(r.err.starts_with("clustersim describe-config: error: unexpected argument 'extra'\n"))
      << r.err;
}

}  // namespace
}  // namespace clustersim::cli
