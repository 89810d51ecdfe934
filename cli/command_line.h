// Command-line parsing for the subcommands: options declared once (name,
// value, help) drive parsing, errors and --help text.
//
// Accepted forms: `--opt VALUE`, `--opt=VALUE`, flags without a value, `-h`
// or `--help` anywhere, and `--` to end options. A mistake (unknown option,
// missing value, wrong number of arguments) is a UsageError whose message
// says what was expected and found, with a did-you-mean for options; the
// command exits 2 for it.
#pragma once

#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;        // "--set"
  std::string value_name;  // "KEY=VALUE"; empty for a flag
  bool repeatable = false;
  std::string help;
};

struct CommandSpec {
  std::string name;
  std::string summary;  // one line, for `clustersim --help`
  // Required, in order: "SCENARIO". A last name ending in "..." takes one
  // or more arguments; in brackets, "[FILES...]", zero or more.
  std::vector<std::string> positionals;
  std::vector<OptionSpec> options;
  std::string details;  // extra paragraphs for --help
};

struct ParsedCommand {
  bool help = false;
  std::vector<std::string> positionals;
  std::map<std::string, std::vector<std::string>> options;  // flag -> {""}

  bool has(const std::string& option) const { return options.contains(option); }
  // The value of a non-repeatable option, or `fallback` when absent.
  std::string value_or(const std::string& option, const std::string& fallback) const;
  // Every value of a repeatable option, in command-line order.
  std::vector<std::string> values(const std::string& option) const;
  // The option's value as a whole number from 1 to `most`, or `fallback`
  // when absent; UsageError naming the option and `what` ("a number of
  // threads") otherwise.
  int positive_int_or(const std::string& option, int fallback, int64_t most,
                      const std::string& what) const;
  // The option's size in bytes ("65536", "64KiB"), at least `least`, or
  // `fallback` when it is absent; a UsageError otherwise.
  int64_t bytes_or(const std::string& option, int64_t fallback, int64_t least = 0) const;
  // The option's integer >= 0, or `fallback` when it is absent.
  int64_t non_negative_int_or(const std::string& option, int64_t fallback,
                              const std::string& what) const;
};

ParsedCommand parse_command_args(const CommandSpec& spec, std::span<const std::string> args);

// The --help text of one command.
std::string command_help(const CommandSpec& spec);

}  // namespace clustersim::cli
