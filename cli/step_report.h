// What `run` and `replay` print and write about a simulated step
// (workloads::StepResult): the time-breakdown table of the summary, the
// JSON breakdown object, the --trace-ranks option and the Chrome trace file.
// Thread safety: pure functions (the file writers touch only their file).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"
#include "config/json_writer.h"
#include "scenario/network_scenario.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {

// Width of the label column of the step summaries.
inline constexpr size_t kStepLabelWidth = 26;

// A label, then columns right-aligned in 12 characters: table headings, and
// (figures(): indented by two) their rows.
std::string columns_row(std::string_view label, const std::vector<std::string>& columns);
std::string figures(std::string_view label, const std::vector<std::string>& columns);
// "12.5%", or "-" when `whole` is not positive.
std::string percent(double part, double whole);

// The summary's GPUs line: "16 (2 nodes x 8, hgx_h100), hardware profile h100".
std::string gpus_text(const NetworkScenario& net);
// Its software stack line: "torchtitan (stack_efficiency 0.833)", or
// "none (stack_efficiency 1.000)".
std::string stack_text(const NetworkScenario& net);
// "scenario": {name, file, seed} and "cluster": {gpus, nodes, gpus_per_node,
// node, hardware_profile}.
void write_scenario_json(sim::JsonWriter& json, const std::string& scenario_path,
                         const NetworkScenario& net);

// "time per rank (mean)" and one row per account, seconds and % of the step.
std::string breakdown_table(const workloads::StepResult& result);

// The step's figures: step_time_s, tokens_per_s_per_gpu, tflops_per_gpu,
// `utilization_key` ("mfu" for run's model FLOPs, "hfu" for replay's traced
// FLOPs), compute_s, exposed_comm_s and "breakdown": {compute_s,
// exposed_all_gather_s, ..., idle_s}.
void write_step_figures_json(sim::JsonWriter& json, const workloads::StepResult& result,
                             std::string_view utilization_key);

// What the simulation did: ranks, slowest_rank, events, collectives and
// `per_rank_key` (tasks or nodes per rank).
void write_simulation_counts_json(sim::JsonWriter& json, const workloads::StepResult& result,
                                  std::string_view per_rank_key);

// How the engine ran the step's ranks (exec/timelines.h): one timeline per
// TP group, or one per rank and why; the summary's "engine" row and the
// JSON object "engine" {ranks_per_timeline, timelines, explicit_why}.
std::string engine_text(const workloads::StepResult& result);
void write_engine_json(sim::JsonWriter& json, const workloads::StepResult& result);

// The --explicit option: one timeline per rank, the reference engine.
OptionSpec explicit_option();

// The --engine-stats option: what the engine did, by kind of event
// (workloads::EngineStats), as summary rows and as the JSON object
// "engine_stats".
OptionSpec engine_stats_option();
std::string engine_stats_table(const workloads::EngineStats& stats, uint64_t events);
void write_engine_stats_json(sim::JsonWriter& json, const workloads::EngineStats& stats);

// The --trace-ranks LIST option of a command whose trace file option is
// `trace_option` ("--trace" for run): its text (default "0"), checked for
// syntax; UsageError when malformed, empty or given without `trace_option`.
std::string trace_ranks_text(const ParsedCommand& parsed, const std::string& trace_option);
// The ranks of `text` below `world`; ConfigError naming --trace-ranks and
// `what` (the job, "'scenario.yaml'") otherwise.
std::vector<int64_t> trace_ranks_below(const std::string& text, int64_t world,
                                       const std::string& what);

// Writes (atomically) the Chrome/Perfetto trace of `records` to `path`.
void write_chrome_trace_file(const std::string& path,
                             std::span<const workloads::TraceRecord> records);

// The --trace-format option of a command with a trace file option: "chrome"
// (default, one file of every traced rank, timeline/chrome_trace.h) or
// "kineto" (torch.profiler's layout, one file per traced rank,
// timeline/kineto_trace_writer.h); UsageError otherwise or without
// `trace_option`.
bool kineto_format(const ParsedCommand& parsed, const std::string& trace_option);
// Writes (atomically) one Kineto trace per rank of `ranks`: to `path` when
// there is one rank, else to `path` with ".rank<N>" before its extension
// (t.json -> t.rank3.json). Returns the files written.
std::vector<std::string> write_kineto_trace_files(const std::string& path,
                                                  std::span<const workloads::TraceRecord> records,
                                                  std::span<const int64_t> ranks,
                                                  int64_t world_size, int64_t gpus_per_node,
                                                  sim::SimTime step_time);
// The files' names with "*" for the rank (t.json -> t.rank*.json).
std::string kineto_trace_pattern(const std::string& path);

}  // namespace clustersim::cli
