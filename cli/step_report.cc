#include "cli/step_report.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/table_text.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/rank_list.h"
#include "config/text_fields.h"
#include "timeline/chrome_trace.h"
#include "timeline/kineto_trace_writer.h"

namespace clustersim::cli {

std::string columns_row(std::string_view label, const std::vector<std::string>& columns) {
  std::string text = pad_right(std::string(label), kStepLabelWidth);
  for (const std::string& c : columns) text += pad(c, 12);
  return text + "\n";
}

std::string figures(std::string_view label, const std::vector<std::string>& columns) {
  return columns_row("  " + std::string(label), columns);
}

std::string percent(double part, double whole) {
  return whole > 0 ? fixed(100.0 * part / whole, 1) + "%" : "-";
}

std::string stack_text(const NetworkScenario& net) {
  const sim::ConfigValues& v = net.values;
  std::string details = "stack_efficiency " + fixed(v.get_float("workload.stack_efficiency"), 3);
  // The loop's host work only when set, so that reports without it keep their lines.
  const int64_t host_ns = v.get_duration("workload.host.per_step").count_ns();
  const int64_t jitter_ns = v.get_duration("workload.host.per_step_jitter").count_ns();
  if (host_ns > 0 || jitter_ns > 0) {
    details += ", host per step " + fixed(static_cast<double>(host_ns) / 1e6, 3) + " ms";
  }
  if (jitter_ns > 0) details += " +- " + fixed(static_cast<double>(jitter_ns) / 1e6, 3) + " ms";
  if (!v.has("stack") || v.get_string("stack").empty()) return "none (" + details + ")";
  return v.get_string("stack") + " (" + details + ")";
}

std::string gpus_text(const NetworkScenario& net) {
  const topology::Cluster& cluster = net.cluster;
  return std::to_string(cluster.gpu_count()) + " (" + std::to_string(cluster.node_count()) +
         (cluster.node_count() == 1 ? " node x " : " nodes x ") +
         std::to_string(cluster.gpus_per_node()) + ", " + cluster.spec().node.preset +
         "), hardware profile " + net.profile.name;
}

void write_scenario_json(sim::JsonWriter& json, const std::string& scenario_path,
                         const NetworkScenario& net) {
  const topology::Cluster& cluster = net.cluster;
  json.key("scenario").begin_object();
  json.key("name").str(net.values.get_string("name"));
  json.key("file").str(scenario_path);
  json.key("seed").int64(net.values.get_int("seed"));
  json.key("stack").str(net.values.has("stack") ? net.values.get_string("stack") : "");
  json.key("stack_efficiency").number(net.values.get_float("workload.stack_efficiency"));
  json.end_object();
  json.key("cluster").begin_object();
  json.key("gpus").int64(cluster.gpu_count());
  json.key("nodes").int64(cluster.node_count());
  json.key("gpus_per_node").int64(cluster.gpus_per_node());
  json.key("node").str(cluster.spec().node.preset);
  json.key("hardware_profile").str(net.profile.name);
  json.end_object();
}

std::string breakdown_table(const workloads::StepResult& r) {
  const workloads::StepBreakdown& b = r.breakdown;
  std::string text = columns_row("time per rank (mean)", {"s", "% of step"});
  const auto part = [&](std::string_view label, double seconds) {
    text += figures(label, {fixed(seconds, 6), percent(seconds, r.step_time_s)});
  };
  part("compute", b.compute_s);
  part("exposed all-gather", b.exposed_all_gather_s);
  part("exposed reduce-scatter", b.exposed_reduce_scatter_s);
  part("exposed all-reduce", b.exposed_all_reduce_s);
  part("exposed TP", b.exposed_tp_s);
  part("exposed CP", b.exposed_cp_s);
  part("exposed PCIe", b.exposed_pcie_s);
  part("pipeline bubble", b.pipeline_bubble_s);
  part("sync wait", b.sync_wait_s);
  part("launch-bound", b.launch_bound_s);
  part("idle", b.idle_s);
  return text;
}

void write_step_figures_json(sim::JsonWriter& json, const workloads::StepResult& r,
                             std::string_view utilization_key) {
  json.key("step_time_s").number(r.step_time_s);
  json.key("tokens_per_s_per_gpu").number(r.tokens_per_s_per_gpu);
  json.key("tflops_per_gpu").number(r.tflops_per_gpu);
  json.key(utilization_key).number(r.mfu);
  if (r.tokens_per_joule_gpu > 0) json.key("tokens_per_joule_gpu").number(r.tokens_per_joule_gpu);
  if (r.tokens_per_joule_system > 0) {
    json.key("tokens_per_joule_system").number(r.tokens_per_joule_system);
  }
  const workloads::StepBreakdown& b = r.breakdown;
  json.key("compute_s").number(b.compute_s);
  json.key("exposed_comm_s").number(b.exposed_comm_s());
  json.key("breakdown").begin_object();
  json.key("compute_s").number(b.compute_s);
  json.key("exposed_all_gather_s").number(b.exposed_all_gather_s);
  json.key("exposed_reduce_scatter_s").number(b.exposed_reduce_scatter_s);
  json.key("exposed_all_reduce_s").number(b.exposed_all_reduce_s);
  json.key("exposed_tp_s").number(b.exposed_tp_s);
  json.key("exposed_cp_s").number(b.exposed_cp_s);
  json.key("exposed_pcie_s").number(b.exposed_pcie_s);
  json.key("pipeline_bubble_s").number(b.pipeline_bubble_s);
  json.key("sync_wait_s").number(b.sync_wait_s);
  json.key("launch_bound_s").number(b.launch_bound_s);
  json.key("idle_s").number(b.idle_s);
  json.end_object();
}

void write_simulation_counts_json(sim::JsonWriter& json, const workloads::StepResult& r,
                                  std::string_view per_rank_key) {
  json.key("ranks").int64(r.ranks);
  json.key("slowest_rank").int64(r.slowest_rank);
  json.key("events").uint64(r.events);
  json.key("collectives").int64(r.collectives);
  json.key(per_rank_key).int64(r.tasks_per_rank);
}

std::string engine_text(const workloads::StepResult& r) {
  if (r.ranks_per_timeline > 1) {
    const int64_t n = r.ranks / r.ranks_per_timeline;
    const std::string counts = std::to_string(n) + (n == 1 ? " timeline of " : " timelines of ") +
                               std::to_string(r.ranks_per_timeline) + " ranks";
    if (r.timeline_dims == std::vector<std::string>{"tp"}) {
      return "one timeline per TP group: " + counts;
    }
    std::string dims;
    for (const std::string& d : r.timeline_dims) dims += (dims.empty() ? "" : " ") + d;
    return "identical ranks once: " + counts + " (" + dims + ")";
  }
  const std::string text = "one timeline per rank";
  return r.explicit_why.empty() ? text : text + " (" + r.explicit_why + ")";
}

void write_engine_json(sim::JsonWriter& json, const workloads::StepResult& r) {
  json.key("engine").begin_object();
  json.key("ranks_per_timeline").int64(r.ranks_per_timeline);
  json.key("timeline_dims").begin_array();
  for (const std::string& d : r.timeline_dims) json.str(d);
  json.end_array();
  json.key("timelines").int64(r.ranks / r.ranks_per_timeline);
  json.key("explicit_why").str(r.explicit_why);
  json.end_object();
}

OptionSpec explicit_option() {
  return {"--explicit", "", false,
          "one timeline per rank, the reference engine (by default the members of a "
          "tensor-parallel group share one timeline where that is exact)"};
}

OptionSpec engine_stats_option() {
  return {"--engine-stats", "", false,
          "also report the engine's events by kind and its max-min solves "
          "(where a large step's simulation time goes)"};
}

std::string engine_stats_table(const workloads::EngineStats& s, uint64_t events) {
  const auto share = [&](uint64_t n) {
    return percent(static_cast<double>(n), static_cast<double>(events));
  };
  std::string text = columns_row("engine events by kind", {"events", "% of all"});
  const auto kind = [&](std::string_view label, uint64_t n) {
    text += figures(label, {std::to_string(n), share(n)});
  };
  kind("segment ends", s.segment_ends);
  kind("re-looks", s.relooks);
  kind("group starts", s.group_starts);
  kind("transfer begins", s.transfer_begins);
  kind("transfer ends", s.transfer_ends);
  kind("latency-only ends", s.latency_ends);
  kind("flow solves", s.flow_solves);
  kind("local op ends", s.local_ends);
  text += figures("stale looks (not events)", {std::to_string(s.stale_looks), "-"});
  text += figures("chained segment ends (not events)", {std::to_string(s.chained_ends), "-"});
  text +=
      figures("chained TP collective ends (not events)", {std::to_string(s.chained_tp_ends), "-"});
  text += figures("max-min re-solves", {std::to_string(s.components_solved)});
  text += figures("flows re-solved", {std::to_string(s.flows_solved)});
  text += figures("largest component", {std::to_string(s.largest_component)});
  text += figures("member flows solved", {s.bundle_solve});
  if (s.link_classes > 0) text += figures("link classes", {std::to_string(s.link_classes)});
  return text;
}

void write_engine_stats_json(sim::JsonWriter& json, const workloads::EngineStats& s) {
  json.key("engine_stats").begin_object();
  json.key("segment_ends").uint64(s.segment_ends);
  json.key("relooks").uint64(s.relooks);
  json.key("group_starts").uint64(s.group_starts);
  json.key("transfer_begins").uint64(s.transfer_begins);
  json.key("transfer_ends").uint64(s.transfer_ends);
  json.key("latency_ends").uint64(s.latency_ends);
  json.key("flow_solves").uint64(s.flow_solves);
  json.key("local_ends").uint64(s.local_ends);
  json.key("stale_looks").uint64(s.stale_looks);
  json.key("chained_ends").uint64(s.chained_ends);
  json.key("chained_tp_ends").uint64(s.chained_tp_ends);
  json.key("components_solved").uint64(s.components_solved);
  json.key("flows_solved").uint64(s.flows_solved);
  json.key("largest_component").uint64(s.largest_component);
  json.key("bundle_solve").str(s.bundle_solve);
  json.key("link_classes").uint64(s.link_classes);
  json.end_object();
}

std::string trace_ranks_text(const ParsedCommand& parsed, const std::string& trace_option) {
  if (parsed.has("--trace-ranks") && !parsed.has(trace_option)) {
    throw UsageError("option '--trace-ranks' needs '" + trace_option +
                     " FILE' (the trace to write)");
  }
  const std::string text = parsed.value_or("--trace-ranks", "0");
  const std::string problem = sim::rank_list_problem(text);
  if (!problem.empty()) {
    throw UsageError("option '--trace-ranks' expects ranks such as '0' or '0,8-15', found '" +
                     text + "': " + problem);
  }
  if (sim::trim_blanks(text).empty()) {
    throw UsageError("option '--trace-ranks' expects at least one rank, found '" + text + "'");
  }
  return text;
}

std::vector<int64_t> trace_ranks_below(const std::string& text, int64_t world,
                                       const std::string& what) {
  const sim::Parsed<std::vector<int64_t>> ranks = sim::parse_rank_list(text, world);
  if (!ranks) {
    sim::DiagnosticSink sink;
    sink.add(sim::SourceLocation{"--trace-ranks " + text, 0, 0}, "",
             "expected ranks below the world size " + std::to_string(world) + " of " + what +
                 ", found '" + text + "': " + ranks.error);
    sink.throw_if_any();
  }
  return *ranks;
}

void write_chrome_trace_file(const std::string& path,
                             std::span<const workloads::TraceRecord> records) {
  std::ostringstream trace;
  workloads::write_chrome_trace(records, trace);
  sim::write_file_atomically(path, trace.str());
}

bool kineto_format(const ParsedCommand& parsed, const std::string& trace_option) {
  if (!parsed.has("--trace-format")) return false;
  if (!parsed.has(trace_option)) {
    throw UsageError("option '--trace-format' needs '" + trace_option + "'");
  }
  const std::string format = parsed.value_or("--trace-format", "");
  if (format != "chrome" && format != "kineto") {
    throw UsageError("option '--trace-format' expects chrome or kineto, found '" + format + "'");
  }
  return format == "kineto";
}

namespace {

// `path` with `tag` before its extension (t.json, ".rank3" -> t.rank3.json).
std::string tagged_path(const std::string& path, const std::string& tag) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return has_ext ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

}  // namespace

std::string kineto_trace_pattern(const std::string& path) { return tagged_path(path, ".rank*"); }

std::vector<std::string> write_kineto_trace_files(const std::string& path,
                                                  std::span<const workloads::TraceRecord> records,
                                                  std::span<const int64_t> ranks,
                                                  int64_t world_size, int64_t gpus_per_node,
                                                  sim::SimTime step_time) {
  std::vector<std::string> files;
  for (const int64_t r : ranks) {
    const std::string file =
        ranks.size() > 1 ? tagged_path(path, ".rank" + std::to_string(r)) : path;
    std::ostringstream text;
    workloads::write_kineto_trace(
        records, workloads::KinetoRank{r, world_size, r % std::max<int64_t>(1, gpus_per_node), step_time},
        text);
    sim::write_file_atomically(file, text.str());
    files.push_back(file);
  }
  return files;
}

}  // namespace clustersim::cli
