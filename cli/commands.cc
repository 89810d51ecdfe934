#include "cli/commands.h"

#include <functional>
#include <ostream>
#include <vector>

#include "cli/calibrate_command.h"
#include "cli/campaign_command.h"
#include "cli/check_command.h"
#include "cli/collective_command.h"
#include "cli/command_line.h"
#include "cli/export_chakra_command.h"
#include "cli/import_command.h"
#include "cli/kernels_command.h"
#include "cli/progress.h"
#include "cli/replay_command.h"
#include "cli/run_command.h"
#include "cli/sweep_command.h"
#include "cli/topo_command.h"
#include "cli/validate_command.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/suggest.h"
#include "scenario/scenario_schema.h"
#include "sim/check.h"

namespace clustersim::cli {

namespace {

struct Io {
  std::ostream& out;
  std::ostream& err;
};

using Handler = std::function<int(const ParsedCommand&, Io&)>;

struct Command {
  CommandSpec spec;
  Handler handler;
};

int describe_config_command(const ParsedCommand& parsed, Io& io) {
  const std::string text = build_scenario_schema().describe_markdown();
  const std::string output = parsed.value_or("-o", "");
  if (output.empty()) {
    io.out << text;
  } else {
    sim::write_file_atomically(output, text);
    StatusLine(io.err, "clustersim describe-config", status_mode(parsed, io.err))
        .note("wrote " + output);
  }
  return kExitOk;
}

const std::vector<Command>& commands() {
  static const std::vector<Command> kTable = {
      {check_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_check_command(p, io.out, io.err); }},
      {{"describe-config",
        "Print every scenario key with its type, unit, default and description (Markdown).",
        {},
        {{"-o", "FILE", false, "write to FILE (atomically) instead of stdout"}, quiet_option()},
        "With -o, 'wrote FILE' on stderr (not with --quiet)."},
       describe_config_command},
      {run_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_run_command(p, io.out, io.err); }},
      {import_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_import_command(p, io.out, io.err); }},
      {campaign_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_campaign_command(p, io.out, io.err); }},
      {sweep_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_sweep_command(p, io.out, io.err); }},
      {topo_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_topo_command(p, io.out, io.err); }},
      {collective_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_collective_command(p, io.out, io.err); }},
      {validate_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_validate_command(p, io.out, io.err); }},
      {calibrate_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_calibrate_command(p, io.out, io.err); }},
      {kernels_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_kernels_command(p, io.out, io.err); }},
      {export_chakra_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_export_chakra_command(p, io.out, io.err); }},
      {replay_command_spec(),
       [](const ParsedCommand& p, Io& io) { return run_replay_command(p, io.out, io.err); }},
  };
  return kTable;
}

std::string main_help() {
  std::string text =
      "usage: clustersim [--version] [--help] COMMAND [ARGS]\n\n"
      "Discrete-event simulator of LLM training on GPU clusters.\n\nCommands:\n";
  for (const Command& c : commands()) {
    text += "  " + c.spec.name + std::string(18 - c.spec.name.size(), ' ') + c.spec.summary + "\n";
  }
  text +=
      "\nRun 'clustersim COMMAND --help' for the options of one command.\n"
      "Exit codes: 0 ok, 1 input or simulation error, 2 usage error.\n";
  return text;
}

}  // namespace

std::vector<CommandSpec> command_specs() {
  std::vector<CommandSpec> specs;
  for (const Command& c : commands()) specs.push_back(c.spec);
  return specs;
}

int run_clustersim(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  return run_clustersim(args, out, err, nullptr);
}

int run_clustersim(std::span<const std::string> args, std::ostream& out, std::ostream& err,
                   std::vector<sim::Diagnostic>* diagnostics) {
  if (diagnostics != nullptr) diagnostics->clear();
  Io io{out, err};
  if (args.empty()) {
    err << main_help();
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help") {
    out << main_help();
    return kExitOk;
  }
  if (first == "--version") {
    out << "clustersim " << CLUSTERSIM_VERSION << "\n";
    return kExitOk;
  }
  const Command* command = nullptr;
  std::vector<std::string> names;
  for (const Command& c : commands()) {
    names.push_back(c.spec.name);
    if (c.spec.name == first) command = &c;
  }
  if (command == nullptr) {
    err << "clustersim: error: unknown command '" << first << "'";
    if (auto guess = sim::suggest(first, names)) err << " (did you mean '" << *guess << "'?)";
    err << "\nRun 'clustersim --help' for the list of commands.\n";
    return kExitUsage;
  }
  try {
    const ParsedCommand parsed = parse_command_args(command->spec, args.subspan(1));
    if (parsed.help) {
      out << command_help(command->spec);
      return kExitOk;
    }
    return command->handler(parsed, io);
  } catch (const UsageError& e) {
    err << "clustersim " << command->spec.name << ": error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const sim::ConfigError& e) {
    err << e.what() << "\n";
    if (diagnostics != nullptr) *diagnostics = e.diagnostics();
    return kExitError;
  } catch (const sim::OutputError& e) {
    err << "clustersim " << command->spec.name << ": error: " << e.what() << "\n";
    return kExitError;
  } catch (const sim::InvariantError& e) {
    err << "clustersim " << command->spec.name << ": " << e.what()
        << "\nThis is a bug in clustersim; please report it with the scenario.\n";
    return kExitError;
  } catch (const std::exception& e) {
    // Anything else (out of memory, a library's own exception) still ends
    // with a message and exit code 1, never an abort.
    err << "clustersim " << command->spec.name << ": error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace clustersim::cli
