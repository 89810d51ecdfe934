#include "cli/command_line.h"

#include <optional>

#include "config/suggest.h"
#include "config/text_fields.h"
#include "config/units.h"

namespace clustersim::cli {

namespace {

const OptionSpec* find_option(const CommandSpec& spec, const std::string& name) {
  for (const OptionSpec& option : spec.options) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

std::string usage_line(const CommandSpec& spec) {
  std::string line = "clustersim " + spec.name;
  for (const OptionSpec& option : spec.options) {
    std::string text = option.name;
    if (!option.value_name.empty()) text += " " + option.value_name;
    line += " [" + text + "]";
    if (option.repeatable) line += "...";
  }
  for (const std::string& p : spec.positionals) line += " " + p;
  return line;
}

[[noreturn]] void usage_error(const CommandSpec& spec, const std::string& message) {
  throw UsageError(message + "\nusage: " + usage_line(spec) + "\nTry 'clustersim " + spec.name +
                   " --help'.");
}

}  // namespace

std::string ParsedCommand::value_or(const std::string& option, const std::string& fallback) const {
  const auto it = options.find(option);
  return it == options.end() ? fallback : it->second.back();
}

std::vector<std::string> ParsedCommand::values(const std::string& option) const {
  const auto it = options.find(option);
  return it == options.end() ? std::vector<std::string>{} : it->second;
}

int ParsedCommand::positive_int_or(const std::string& option, int fallback, int64_t most,
                                   const std::string& what) const {
  if (!has(option)) return fallback;
  const std::string text = value_or(option, "");
  const std::optional<int64_t> n = sim::parse_number<int64_t>(text);
  if (!n || *n < 1 || *n > most) {
    throw UsageError("option '" + option + "' expects " + what + " from 1 to " +
                     std::to_string(most) + ", found '" + text + "'");
  }
  return static_cast<int>(*n);
}

int64_t ParsedCommand::bytes_or(const std::string& option, int64_t fallback, int64_t least) const {
  if (!has(option)) return fallback;
  const std::string text = value_or(option, "");
  const sim::Parsed<int64_t> bytes = sim::parse_bytes(text, "B");
  if (!bytes || *bytes < least) {
    throw UsageError("option '" + option + "' expects " + (least > 0 ? "a positive" : "a") +
                     " size such as '65536' or '64KiB', found '" + text + "'" +
                     (bytes.error.empty() ? "" : ": " + bytes.error));
  }
  return *bytes;
}

int64_t ParsedCommand::non_negative_int_or(const std::string& option, int64_t fallback,
                                           const std::string& what) const {
  if (!has(option)) return fallback;
  const std::string text = value_or(option, "");
  const std::optional<int64_t> n = sim::parse_number<int64_t>(text);
  if (!n || *n < 0) {
    throw UsageError("option '" + option + "' expects " + what + " (an integer >= 0), found '" +
                     text + "'");
  }
  return *n;
}

ParsedCommand parse_command_args(const CommandSpec& spec, std::span<const std::string> args) {
  ParsedCommand parsed;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_ended || arg.size() < 2 || arg[0] != '-') {
      parsed.positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const OptionSpec* option = find_option(spec, name);
    if (option == nullptr) {
      std::vector<std::string> names{"--help"};
      for (const OptionSpec& o : spec.options) names.push_back(o.name);
      std::string message = "unknown option '" + name + "' for '" + spec.name + "'";
      if (auto guess = sim::suggest(name, names)) message += " (did you mean '" + *guess + "'?)";
      usage_error(spec, message);
    }
    std::string value;
    if (option->value_name.empty()) {
      if (eq != std::string::npos) {
        usage_error(spec, "option '" + name + "' takes no value, found '" + arg + "'");
      }
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      usage_error(spec, "option '" + name + "' expects a value (" + option->value_name +
                            "), found the end of the command line");
    }
    std::vector<std::string>& slot = parsed.options[name];
    if (!slot.empty() && !option->repeatable) {
      usage_error(spec, "option '" + name + "' given more than once");
    }
    slot.push_back(value);
  }
  if (parsed.help) return parsed;
  // A last positional in brackets, "[X...]", may also be absent.
  const bool optional_last = !spec.positionals.empty() && spec.positionals.back().starts_with("[");
  const size_t required = spec.positionals.size() - (optional_last ? 1 : 0);
  if (parsed.positionals.size() < required) {
    usage_error(spec, "expected " + spec.positionals[parsed.positionals.size()] +
                          ", found the end of the command line");
  }
  // A last positional named "X..." takes one or more arguments.
  const bool variadic = !spec.positionals.empty() && (spec.positionals.back().ends_with("...") ||
                                                      spec.positionals.back().ends_with("...]"));
  if (!variadic && parsed.positionals.size() > spec.positionals.size()) {
    usage_error(spec, "unexpected argument '" + parsed.positionals[spec.positionals.size()] + "'");
  }
  return parsed;
}

std::string command_help(const CommandSpec& spec) {
  std::string text = usage_line(spec) + "\n\n" + spec.summary + "\n";
  if (!spec.details.empty()) text += "\n" + spec.details + "\n";
  // Every help text, that of -h included, starts after 24 columns (or one space after a
  // longer name).
  const auto padded = [](const std::string& left) {
    return "  " + left + std::string(left.size() < 22 ? 22 - left.size() : 1, ' ');
  };
  text += "\nOptions:\n";
  for (const OptionSpec& option : spec.options) {
    std::string left = option.name;
    if (!option.value_name.empty()) left += " " + option.value_name;
    text += padded(left) + option.help;
    if (option.repeatable) text += " (repeatable)";
    text += "\n";
  }
  text += padded("-h, --help") + "show this help\n";
  return text;
}

}  // namespace clustersim::cli
