#include "cli/export_chakra_command.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/table_text.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/rank_list.h"
#include "config/text_fields.h"
#include "scenario/network_scenario.h"
#include "scenario/step_config.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/chakra/chakra_trace.h"
#include "workloads/model/memory_model.h"

namespace clustersim::cli {

namespace {

namespace chakra = workloads::chakra;

constexpr size_t kLabel = 18;
constexpr size_t kManyRanks = 1024;  // past this many files, warn first
constexpr size_t kGroupsListed = 8;

std::string str(int64_t n) { return std::to_string(n); }
std::string row(std::string_view label, const std::string& value) {
  return labelled_row(label, value, kLabel);
}

// `text` as one word of a POSIX shell: as it is when it holds nothing the
// shell would split or expand, else in single quotes.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_-+=./:,@%") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string size_text(double bytes) {
  if (bytes < 1024.0 * 1024.0) return fixed(bytes / 1024.0, 1) + " KiB";
  if (bytes < 1024.0 * 1024.0 * 1024.0) return fixed(bytes / (1024.0 * 1024.0), 1) + " MiB";
  return fixed(bytes / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
}

// --ranks as written: syntax now (a usage error), range once the world
// size is known.
std::string ranks_text(const ParsedCommand& parsed) {
  const std::string text = parsed.value_or("--ranks", "");
  const std::string problem = sim::rank_list_problem(text);
  if (!problem.empty()) {
    throw UsageError("option '--ranks' expects ranks such as '0' or '0,8-15', found '" + text +
                     "': " + problem);
  }
  if (sim::trim_blanks(text).empty()) {
    throw UsageError("option '--ranks' expects at least one rank, found '" + text + "'");
  }
  return text;
}

std::string prefix_text(const ParsedCommand& parsed) {
  const std::string prefix = parsed.value_or("--prefix", "");
  if (prefix.empty() || prefix.find('/') != std::string::npos || prefix == "." || prefix == "..") {
    throw UsageError("option '--prefix' expects a file name without '/', found '" + prefix + "'");
  }
  return prefix;
}

void make_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw sim::OutputError("cannot create directory '" + dir +
                           "': " + (ec ? ec.message() : std::string("not a directory")));
  }
}

// "10 (1 (shard_0): 8 ranks, 2 (shard_1): 8 ranks, ...)", ids in numeric
// order: the names live in the traces (clustersim_pg_desc), not in the
// groups file, which ASTRA-sim wants keyed by number only.
std::string groups_text(const chakra::CommGroups& groups, const chakra::GroupDescs& descs) {
  std::string text = str(static_cast<int64_t>(groups.size()));
  if (groups.empty()) return text;
  std::vector<std::string> ids;
  for (const auto& group : groups) ids.push_back(group.first);
  std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  text += " (";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i == kGroupsListed) {
      text += ", ...";
      break;
    }
    if (i > 0) text += ", ";
    const auto desc = descs.find(ids[i]);
    text += ids[i] + (desc == descs.end() ? "" : " (" + desc->second + ")") + ": " +
            str(static_cast<int64_t>(groups.at(ids[i]).size())) + " ranks";
  }
  return text + ")";
}

}  // namespace

CommandSpec export_chakra_command_spec() {
  return {
      "export-chakra",
      "Write the scenario's simulated step as Chakra ET traces, one per rank.",
      {"SCENARIO"},
      {{"-o", "DIR", false, "directory to write into (created when missing; required)"},
       {"--ranks", "LIST", false, "ranks to export, e.g. '0' or '0,8-15' (default: every rank)"},
       {"--prefix", "NAME", false, "file name prefix (default: the scenario's name)"},
       {"--no-host-nodes", "", false,
        "write only GPU, communication and memory nodes (no launches, no CPU optimizer)"},
       {"--set", "KEY=VALUE", true, "override a scenario key, validated like the file"},
       quiet_option()},
      "Files: DIR/NAME.<rank>.et (length-delimited Chakra ET protobuf: GlobalMetadata,\n"
      "then the nodes) and DIR/NAME.comm_groups.json (process group id -> ranks), each\n"
      "written atomically. One node per schedule task (kernels COMP_NODE with their\n"
      "roofline time, collectives COMM_COLL_NODE with comm_size and pg_name, offload\n"
      "copies MEM_LOAD/MEM_STORE, the CPU optimizer is_cpu_op) plus is_cpu_op nodes\n"
      "for the host's kernel launches; see workloads/chakra/chakra_export.h. Chakra's standard\n"
      "conventions: pg_name \"0\", \"1\", ... (\"0\" the whole world; each node's\n"
      "clustersim_pg_desc names it), all-gather comm_size each rank's input shard.\n"
      "`clustersim replay` and ASTRA-sim run the files (docs/chakra-traces.md).\n"
      "On stderr: a warning with the count and size first when writing more than 1024\n"
      "files, the files written so far with a percentage and ETA while it runs (redrawn on\n"
      "a terminal, else a line every 5 s), and 'wrote N files DIR/NAME.*.et and\n"
      "DIR/NAME.comm_groups.json' at the end; --quiet prints none but the warnings."};
}

int run_export_chakra_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  if (!parsed.has("-o")) throw UsageError("option '-o DIR' is required (where to write)");
  const std::string dir = parsed.value_or("-o", "");
  if (dir.empty()) throw UsageError("option '-o' expects a directory, found ''");
  const std::string rank_list = parsed.has("--ranks") ? ranks_text(parsed) : "";
  const std::string prefix_option = parsed.has("--prefix") ? prefix_text(parsed) : "";

  const std::string& scenario_path = parsed.positionals[0];
  const StepScenario step = load_step_scenario(scenario_path, parsed.values("--set"));
  const NetworkScenario& net = step.net;
  const workloads::StepConfig& config = step.config;
  const int64_t world = config.workload.world_size;
  std::vector<int64_t> ranks;
  if (rank_list.empty()) {
    ranks.resize(static_cast<size_t>(world));
    for (int64_t r = 0; r < world; ++r) ranks[static_cast<size_t>(r)] = r;
  } else {
    const sim::Parsed<std::vector<int64_t>> parsed_ranks = sim::parse_rank_list(rank_list, world);
    if (!parsed_ranks) {
      sim::DiagnosticSink sink;
      sink.add(sim::SourceLocation{"--ranks " + rank_list, 0, 0}, "",
               "expected ranks below the world size " + str(world) + " of '" + scenario_path +
                   "', found '" + rank_list + "': " + parsed_ranks.error);
      sink.throw_if_any();
    }
    ranks = *parsed_ranks;
  }
  const std::string scenario_name = net.values.get_string("name");
  const std::string prefix = prefix_option.empty() ? scenario_name : prefix_option;

  const workloads::MemoryBreakdown memory = workloads::memory_breakdown(config.workload);
  if (!workloads::fits(memory, config.memory_capacity_bytes)) {
    err << "clustersim export-chakra: warning: the step does not fit in GPU memory ("
        << str(memory.total()) << " > " << str(config.memory_capacity_bytes)
        << " bytes per GPU); exporting it anyway\n";
  }

  chakra::ExportOptions options;
  options.scenario = scenario_name;
  options.host_nodes = !parsed.has("--no-host-nodes");
  const chakra::StepExporter exporter(net.cluster, net.profile, config, options);
  if (exporter.host_work_left_out_ns() > 0) {
    err << "clustersim export-chakra: warning: --no-host-nodes leaves out the CPU optimizer ("
        << fixed(static_cast<double>(exporter.host_work_left_out_ns()) * 1e-6, 3)
        << " ms of host work per rank): a replay of these traces does not include it\n";
  }
  make_directory(dir);
  const std::string base = (std::filesystem::path(dir) / prefix).string();

  chakra::CommGroups groups;
  chakra::GroupDescs descs;
  int64_t total_bytes = 0;
  int64_t largest = 0;
  StatusLine status(err, "clustersim export-chakra", status_mode(parsed, err));
  CountMeter meter(status, static_cast<int64_t>(ranks.size()), "files");
  std::vector<std::string> written;
  for (size_t i = 0; i < ranks.size(); ++i) {
    meter.update(static_cast<int64_t>(i));
    const std::string path = chakra::rank_trace_path(base, ranks[i]);
    chakra::write_trace_file(path, exporter.trace(ranks[i]));
    std::error_code ec;
    const auto bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
    if (ec) throw sim::OutputError("cannot read the size of '" + path + "': " + ec.message());
    written.push_back(path);
    total_bytes += bytes;
    largest = std::max(largest, bytes);
    exporter.add_groups(ranks[i], groups, &descs);
    if (i == 0 && ranks.size() > kManyRanks) {
      err << "clustersim export-chakra: warning: writing " << ranks.size() << " trace files of "
          << size_text(static_cast<double>(bytes)) << " each, about "
          << size_text(static_cast<double>(bytes) * static_cast<double>(ranks.size()))
          << " in all (--ranks picks a subset)\n";
    }
  }
  meter.finish(static_cast<int64_t>(ranks.size()));
  const std::string groups_path = base + ".comm_groups.json";
  sim::write_file_atomically(groups_path, chakra::comm_groups_json(groups));
  status.note("wrote " + files_text(written, base + ".*.et") + " and " + groups_path);

  out << "# clustersim export-chakra: " << scenario_path << "\n";
  out << row("scenario", scenario_name + " (" + str(world) + " ranks)");
  out << row("ranks written", sim::format_rank_list(ranks) + " (" +
                                  str(static_cast<int64_t>(ranks.size())) + " of " + str(world) +
                                  ")");
  out << row("traces", base + ".<rank>.et");
  std::string nodes;
  for (int64_t s = 0; s < exporter.stage_count(); ++s) {
    if (s > 0) nodes += "; ";
    if (exporter.stage_count() > 1) nodes += "stage " + str(s) + ": ";
    nodes += str(exporter.nodes_per_rank(s));
    if (options.host_nodes) {
      nodes += " (" + str(exporter.schedule(s).size()) + " schedule tasks + " +
               str(exporter.launches_per_rank(s)) + " host launches)";
    }
  }
  if (!options.host_nodes) nodes += " (GPU, communication and memory only: --no-host-nodes)";
  out << row("nodes per rank", nodes);
  out << row("bytes", str(largest) + " per rank (largest), " + str(total_bytes) + " in all (" +
                          size_text(static_cast<double>(total_bytes)) + ")");
  out << row("process groups", groups_text(groups, descs));
  out << row("groups file", groups_path);
  if (static_cast<int64_t>(ranks.size()) == world) {
    std::string replay = "clustersim replay " + shell_word(scenario_path);
    for (const std::string& set : parsed.values("--set")) replay += " --set " + shell_word(set);
    out << row("replay with", replay + " --trace " + shell_word(base));
  }
  return kExitOk;
}

}  // namespace clustersim::cli
