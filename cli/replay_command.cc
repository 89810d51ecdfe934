#include "cli/replay_command.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/output_schema.h"
#include "cli/progress.h"
#include "cli/step_report.h"
#include "cli/table_text.h"
#include "cli/work_guard.h"
#include "collectives/tuner.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/json_writer.h"
#include "config/rank_list.h"
#include "scenario/network_scenario.h"
#include "workloads/chakra/chakra_replay.h"
#include "workloads/chakra/chakra_scale.h"
#include "workloads/chakra/chakra_trace.h"
#include "workloads/schedules/gpu_speed.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::cli {

namespace {

namespace chakra = workloads::chakra;
using workloads::StepResult;

std::string str(int64_t n) { return std::to_string(n); }

std::string row(std::string_view label, const std::string& value) {
  return labelled_row(label, value, kStepLabelWidth);
}

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  sim::DiagnosticSink sink;
  sink.add(sim::SourceLocation{where, 0, 0}, "", message);
  sink.throw_if_any();
  throw std::logic_error("unreachable");
}

// The rank numbers r of the files PREFIX.<r>.et present, sorted.
std::vector<int64_t> rank_files_present(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path path(prefix);
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string base = path.filename().string() + ".";
  std::vector<int64_t> ranks;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= base.size() + 3 || name.compare(0, base.size(), base) != 0 ||
        !name.ends_with(".et")) {
      continue;
    }
    const std::string digits = name.substr(base.size(), name.size() - base.size() - 3);
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        (digits.size() > 1 && digits[0] == '0')) {
      continue;
    }
    ranks.push_back(std::stoll(digits));
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

std::string found_text(const std::string& prefix, const std::vector<int64_t>& present) {
  if (present.empty()) return "no file " + prefix + ".<rank>.et was found";
  return "found " + str(static_cast<int64_t>(present.size())) + " rank file(s) " + prefix +
         ".<rank>.et for ranks " + sim::format_rank_list(present);
}

// How many ranks to read: --ranks K (every file 0..K-1 must exist), else
// every file present, which must be 0..K-1.
int64_t traced_rank_count(const std::string& prefix, int64_t requested) {
  const std::vector<int64_t> present = rank_files_present(prefix);
  const auto has = [&](int64_t r) { return std::binary_search(present.begin(), present.end(), r); };
  const int64_t count = requested > 0 ? requested : static_cast<int64_t>(present.size());
  for (int64_t r = 0; r < std::max<int64_t>(count, 1); ++r) {
    if (!has(r)) {
      fail(chakra::rank_trace_path(prefix, r), "expected " + chakra::rank_trace_path(prefix, r) +
                                                   ": no such file (" +
                                                   found_text(prefix, present) + ")");
    }
  }
  return count;
}

struct ReplayInputs {
  std::string scenario_path;
  NetworkScenario net;
  std::string prefix;
  std::string groups_file;  // empty: none
  chakra::CommGroups groups;
  int64_t traced = 0;
  int64_t ranks = 0;
  bool recompute = false;
  int64_t max_nodes = 0;
  chakra::FormDecision form;
};

std::string summary(const ReplayInputs& in, const StepResult& r) {
  std::string text = "# clustersim replay: " + in.scenario_path + "\n";
  text += row("scenario", in.net.values.get_string("name"));
  text += row("GPUs", gpus_text(in.net));
  text += row("software stack", stack_text(in.net));
  text += row("traces", in.prefix + ".<rank>.et, " + str(in.traced) + " rank(s), up to " +
                            str(in.max_nodes) + " nodes per rank");
  text += row("process groups",
              in.groups_file.empty()
                  ? std::string("none (every process group is the whole world)")
                  : str(static_cast<int64_t>(in.groups.size())) + " from " + in.groups_file);
  // Which sizes the all-gathers were read with, and by which rule.
  text += row("trace form",
              std::string(chakra::trace_form_name(in.form.form)) + " (" + in.form.why + ")");
  text += row("ranks", in.ranks == in.traced
                           ? str(in.ranks) + " (as traced)"
                           : str(in.ranks) + " (--scale-to: rank r replays traced rank r mod " +
                                 str(in.traced) + ")");
  text += row("compute", in.recompute ? "compute model (--recompute-compute)" : "traced durations");
  text += "\n";
  text += row("step time", fixed(r.step_time_s, 6) + " s");
  text += row("tokens/s per GPU", r.tokens_per_s_per_gpu > 0 ? fixed(r.tokens_per_s_per_gpu, 1)
                                                             : "- (--tokens-per-gpu)");
  // The traced num_ops count every kernel that ran, recomputation included:
  // hardware FLOPs, not the model FLOPs `run`'s MFU counts.
  text += row("TFLOP/s per GPU", fixed(r.tflops_per_gpu, 1) + " (traced num_ops)");
  text += row("HFU", fixed(100.0 * r.mfu, 1) + "% (traced num_ops / peak; with recomputation)");
  text += "\n";
  text += breakdown_table(r);
  text += "\n";
  text += row("events simulated", std::to_string(r.events) + " (" + str(r.collectives) +
                                      " collectives, slowest rank " + str(r.slowest_rank) + ")");
  return text;
}

std::string report_json(const ReplayInputs& in, const StepResult& r, double wall_s,
                        bool engine_stats) {
  std::ostringstream out;
  sim::JsonWriter json(out, 2);
  json.begin_object();
  write_schema_version(json);
  write_scenario_json(json, in.scenario_path, in.net);
  json.key("traces").begin_object();
  json.key("prefix").str(in.prefix);
  json.key("traced_ranks").int64(in.traced);
  json.key("ranks").int64(in.ranks);
  json.key("comm_groups").str(in.groups_file);
  json.key("groups").int64(static_cast<int64_t>(in.groups.size()));
  json.key("form").str(chakra::trace_form_name(in.form.form));
  json.key("scaled").boolean(in.ranks != in.traced);
  json.key("recompute_compute").boolean(in.recompute);
  json.end_object();
  write_step_figures_json(json, r, "hfu");
  write_simulation_counts_json(json, r, "nodes_per_rank");
  if (engine_stats) write_engine_stats_json(json, r.engine);
  json.key("wall_s").number(wall_s);
  json.end_object();
  json.finish();
  out << '\n';
  return out.str();
}

}  // namespace

CommandSpec replay_command_spec() {
  CommandSpec spec{
      "replay",
      "Replay Chakra ET traces (one per rank) on the scenario's cluster and summarise the step.",
      {"SCENARIO"},
      {{"--trace", "PREFIX", false, "the traces: PREFIX.<rank>.et (required)"},
       {"--comm-groups", "FILE", false,
        "communicator groups JSON (default PREFIX.comm_groups.json if it exists)"},
       {"--ranks", "K", false, "replay ranks 0..K-1 (default: every PREFIX.<r>.et present)"},
       {"--scale-to", "N", false,
        "replay on N ranks (a multiple of the traced ranks): data-parallel groups widen"},
       {"--recompute-compute", "", false,
        "time kernels with the compute model (num_ops, tensor_size) instead of the trace"},
       {"--tokens-per-gpu", "N", false, "tokens one GPU trains on per step (for tokens/s)"},
       {"--set", "KEY=VALUE", true, "override a scenario key, validated like the file"},
       {"--json", "FILE", false, "also write the results as JSON (atomically)"},
       {"--trace-out", "FILE", false, "write a Chrome/Perfetto trace (JSON) of the traced ranks"},
       {"--trace-ranks", "LIST", false,
        "ranks to trace, e.g. '0,8-15' (default 0; with --trace-out)"},
       {"--trace-format", "FORMAT", false,
        "chrome (default) or kineto: torch.profiler's layout, one file per traced rank"},
       {"--no-wall-time", "", false,
        "leave out the last line (wall time), the only one that differs between runs"}},
      "Each rank's graph runs on its GPU: kernels one at a time per stream, host work, PCIe\n"
      "copies, collectives matched by position in their process group with the tuner's\n"
      "cost and link contention, send/recv pairs. A collective whose peers never reach it\n"
      "is reported as a deadlock (exit 1). --scale-to N maps the traced k ranks onto N:\n"
      "groups that span the traced job (the world, HSDP replica groups) widen, other\n"
      "groups (shard, TP) are repeated, comm_size and compute are kept (chakra/\n"
      "chakra_scale.h). Traces in Chakra's standard form (numeric pg_name, all-gather\n"
      "comm_size per rank) and clustersim's older named form are both read; the\n"
      "'trace form' line says which and why (docs/chakra-traces.md). JSON keys:\n"
      "step_time_s, tflops_per_gpu, hfu, breakdown, events, collectives, ranks, wall_s,\n"
      "and the inputs; only wall_s varies between runs. A replay of more nodes x ranks\n"
      "than --max-events is refused before it starts. On stderr: the nodes x ranks to\n"
      "replay when they are 20 M or more, then while it runs its percentage done, events and\n"
      "ETA (redrawn on a terminal, else a line every 5 s), and 'wrote FILE' for each file\n"
      "written; --quiet prints none of these."};
  spec.options.push_back(engine_stats_option());
  spec.options.push_back(quiet_option());
  spec.options.push_back(work_limit_options().back());  // --max-events
  return spec;
}

int run_replay_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const auto started = std::chrono::steady_clock::now();
  if (!parsed.has("--trace")) {
    throw UsageError("option '--trace PREFIX' is required (the traces PREFIX.<rank>.et)");
  }
  const std::string prefix = parsed.value_or("--trace", "");
  if (prefix.empty()) throw UsageError("option '--trace' expects a PREFIX, found ''");
  const int64_t requested = parsed.non_negative_int_or("--ranks", 0, "a number of ranks");
  if (parsed.has("--ranks") && requested == 0) {
    throw UsageError("option '--ranks' expects a number of ranks (an integer >= 1), found '0'");
  }
  const int64_t scale_to = parsed.non_negative_int_or("--scale-to", 0, "a number of ranks");
  if (parsed.has("--scale-to") && scale_to == 0) {
    throw UsageError("option '--scale-to' expects a number of ranks (an integer >= 1), found '0'");
  }
  const int64_t tokens = parsed.non_negative_int_or("--tokens-per-gpu", 0, "a number of tokens");
  const bool tracing = parsed.has("--trace-out");
  const std::string trace_ranks =
      tracing || parsed.has("--trace-ranks") ? trace_ranks_text(parsed, "--trace-out") : "";
  const bool kineto = kineto_format(parsed, "--trace-out");
  // Every option is checked before a file is read.
  const WorkLimits limits = work_limits_from(parsed);

  ReplayInputs in{parsed.positionals[0],
                  load_network_scenario(parsed.positionals[0], parsed.values("--set")),
                  prefix,
                  "",
                  {},
                  0,
                  0,
                  parsed.has("--recompute-compute"),
                  0,
                  {}};
  const topology::Cluster& cluster = in.net.cluster;

  in.traced = traced_rank_count(prefix, requested);
  in.ranks = scale_to > 0 ? scale_to : in.traced;
  if (in.ranks > cluster.gpu_count()) {
    fail(in.scenario_path,
         "expected at most " + str(cluster.gpu_count()) + " ranks (the cluster's GPUs), found " +
             str(in.ranks) +
             (scale_to > 0 ? " (--scale-to)" : " traced ranks in " + prefix + ".<rank>.et"));
  }
  if (scale_to > 0 && scale_to % in.traced != 0) {
    fail("--scale-to " + str(scale_to),
         "expected a multiple of the " + str(in.traced) + " traced ranks, found " + str(scale_to));
  }

  if (parsed.has("--comm-groups")) {
    in.groups_file = parsed.value_or("--comm-groups", "");
  } else if (std::error_code ec; std::filesystem::exists(prefix + ".comm_groups.json", ec)) {
    in.groups_file = prefix + ".comm_groups.json";
  }
  if (!in.groups_file.empty()) in.groups = chakra::read_comm_groups(in.groups_file);

  // Ranks whose files hold the same graph share one parsed trace and one
  // compiled template (a data-parallel job's files differ in the rank only).
  const chakra::RankTraces traces = chakra::read_rank_traces(prefix, in.traced);
  for (const chakra::Trace& trace : traces.graphs) {
    in.max_nodes = std::max(in.max_nodes, static_cast<int64_t>(trace.nodes.size()));
  }
  chakra::check_traces(traces.view(), in.groups);
  // The engine's work, as for `run` (scenario/work_limits.h): nodes x ranks.
  const workloads::StepWork work{in.max_nodes, in.ranks};
  if (const int64_t most = limits.max_task_timelines; work.task_timelines() > most) {
    fail(prefix + ".<rank>.et", "expected at most " + with_separators(most) +
                                    " trace nodes x ranks to replay (--max-events raises the "
                                    "limit), found " +
                                    with_separators(in.ranks) + " ranks of up to " +
                                    with_separators(in.max_nodes) + " nodes, " +
                                    with_separators(work.task_timelines()));
  }

  chakra::ReplayOptions options;
  options.recompute_compute = in.recompute;
  options.forced = collectives::read_forced_choice(in.net.values);
  options.routing = collectives::read_routing(in.net.values);
  options.tokens_per_rank = tokens;
  options.rank_time_factors =
      workloads::gpu_time_factors(in.ranks, in.net.profile.gpu.speed_variation,
                                  static_cast<uint64_t>(in.net.values.get_int("seed")));
  options.segment_jitter_sd = in.net.profile.gpu.segment_jitter;
  options.jitter_seed = static_cast<uint64_t>(in.net.values.get_int("seed"));
  if (tracing) {
    options.trace_ranks = trace_ranks_below(trace_ranks, in.ranks, "the replay");
  }
  const chakra::ReplayJob job = chakra::build_replay_job(traces.view(), in.groups, in.ranks);
  in.form = job.form;
  StatusLine status(err, "clustersim replay", status_mode(parsed, err));
  if (work.task_timelines() >= kLargeTaskTimelines) {
    status.note("replaying " + with_separators(in.ranks) + " ranks x up to " +
                with_separators(in.max_nodes) + " trace nodes (" +
                count_text(static_cast<double>(work.task_timelines())) + " nodes)");
  }
  EngineMeter meter(status);
  options.progress = meter.callback();
  const StepResult result = chakra::replay_job(cluster, in.net.profile, job, options);
  options.progress = nullptr;
  meter.finish(result.events);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  if (parsed.has("--json")) {
    const std::string path = parsed.value_or("--json", "");
    sim::write_file_atomically(path, report_json(in, result, wall_s, parsed.has("--engine-stats")));
    status.note("wrote " + path);
  }
  if (tracing && kineto) {
    const std::string path = parsed.value_or("--trace-out", "");
    const std::vector<std::string> files = write_kineto_trace_files(
        path, result.trace, options.trace_ranks, in.ranks, cluster.gpus_per_node(),
        sim::SimTime::from_seconds_rounded(result.step_time_s));
    status.note("wrote " + files_text(files, kineto_trace_pattern(path)));
  } else if (tracing) {
    const std::string path = parsed.value_or("--trace-out", "");
    write_chrome_trace_file(path, result.trace);
    status.note("wrote " + path);
  }
  out << summary(in, result);
  if (parsed.has("--engine-stats")) out << "\n" << engine_stats_table(result.engine, result.events);
  if (!parsed.has("--no-wall-time")) out << row("wall time", fixed(wall_s, 3) + " s");
  return kExitOk;
}

}  // namespace clustersim::cli
