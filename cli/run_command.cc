#include "cli/run_command.h"

#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/output_schema.h"
#include "cli/progress.h"
#include "cli/step_preflight.h"
#include "cli/step_report.h"
#include "cli/table_text.h"
#include "cli/work_guard.h"
#include "collectives/tuner.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/json_writer.h"
#include "config/rank_list.h"
#include "scenario/network_scenario.h"
#include "scenario/step_config.h"
#include "workloads/model/compute_model.h"
#include "workloads/model/memory_model.h"
#include "workloads/model/model_spec.h"
#include "workloads/model/workload_config.h"
#include "workloads/schedules/step_simulator.h"
#include "workloads/schedules/step_work.h"
#include "workloads/schedules/straggler_config.h"

namespace clustersim::cli {

namespace {

using workloads::MemoryBreakdown;
using workloads::StepResult;
using workloads::WorkloadSpec;

constexpr size_t kLabel = kStepLabelWidth;  // width of the label column

std::string on_off(bool flag) { return flag ? "on" : "off"; }
std::string str(int64_t n) { return std::to_string(n); }

std::string row(std::string_view label, const std::string& value) {
  return labelled_row(label, value, kLabel);
}

// Everything the command knows before simulating.
struct RunInputs {
  std::string scenario_path;
  NetworkScenario net;
  WorkloadSpec workload;
  workloads::StepConfig config;
};

std::string strategy_text(const WorkloadSpec& w) {
  const std::string pipeline =
      w.pp > 1 ? ", pp " + str(w.pp) + " (" +
                     std::string(workloads::pipeline_schedule_name(w.pipeline_schedule)) + ", " +
                     str(w.grad_accum) + " micro-batches)"
               : "";
  const std::string context =
      w.cp > 1 ? ", cp " + str(w.cp) + " (" +
                     std::string(workloads::cp_rotate_method_name(w.cp_rotate)) + ")"
               : "";
  const std::string order = w.mesh_order != workloads::kTorchtitanMeshOrder
                                ? ", mesh [" + workloads::mesh_order_text(w.mesh_order) + "]"
                                : "";
  return std::string(workloads::sharding_strategy_name(w.strategy)) + ": shard group " +
         str(w.shard_group_size) + " x replica group " + str(w.replica_group_size) + ", tp " +
         str(w.tp) + pipeline + context + order + " (" + str(w.world_size) + " ranks)";
}

std::string stragglers_text(const workloads::StepConfig& config) {
  if (config.stragglers.empty()) return "none";
  std::vector<int64_t> ranks;
  for (const workloads::Straggler& s : config.stragglers) ranks.push_back(s.rank);
  std::ostringstream slowdown;
  slowdown << config.stragglers.front().slowdown;
  return str(static_cast<int64_t>(ranks.size())) + " rank(s) " + sim::format_rank_list(ranks) +
         ", compute x" + slowdown.str();
}

std::string summary(const RunInputs& in, const StepResult& r) {
  const WorkloadSpec& w = in.workload;
  std::string text = "# clustersim run: " + in.scenario_path + "\n";
  text += row("scenario", in.net.values.get_string("name"));
  text += row("GPUs", gpus_text(in.net));
  text += row("software stack", stack_text(in.net));
  text +=
      row("model", w.model.name + ", " +
                       fixed(static_cast<double>(workloads::parameter_count(w.model)) / 1e9, 2) +
                       "B parameters");
  // Under pp the micro-batches take grad_accum's place (the key stays 1).
  const std::string steps = w.pp > 1 ? " per micro-batch, " + str(w.grad_accum) + " micro-batches"
                                     : ", grad_accum " + str(w.grad_accum);
  text += row("batch", "seq_len " + str(w.seq_len) + ", local_batch " + str(w.local_batch) + steps +
                           ", global_batch " + str(w.global_batch()) + ", " +
                           std::string(workloads::dtype_name(w.dtype)));
  text += row("strategy", strategy_text(w));
  // Megatron's DDP has no FSDP options: its own take their row.
  if (w.megatron) {
    text += row("megatron", "overlap_grad_reduce " + on_off(w.overlap_grad_reduce) +
                                ", overlap_param_gather " +
                                (w.strategy == workloads::ShardingStrategy::kDistributedOptimizer
                                     ? on_off(w.overlap_param_gather)
                                     : std::string("- (DDP)")) +
                                ", bucket_size " + str(w.bucket_params) + ", main grads " +
                                std::string(workloads::dtype_name(w.reduce_dtype)));
  } else if (w.megatron_fsdp) {
    text += row("megatron-fsdp", std::string("optim_grads_params, fsdp_double_buffer ") +
                                     on_off(w.limit_all_gathers) + ", main grads " +
                                     std::string(workloads::dtype_name(w.reduce_dtype)));
  } else {
    text += row("fsdp", "backward_prefetch " +
                            std::string(workloads::backward_prefetch_name(w.backward_prefetch)) +
                            ", forward_prefetch " + on_off(w.forward_prefetch) +
                            ", limit_all_gathers " + on_off(w.limit_all_gathers) +
                            ", reshard_after_forward " +
                            // Pipeline stages keep their units gathered (torchtitan under PP).
                            (w.pp > 1 ? std::string("off (pp)") : on_off(w.reshard_after_forward)) +
                            ", separate_reduce_stream " + on_off(w.separate_reduce_stream) +
                            ", no_sync " + on_off(w.no_sync));
  }
  text +=
      row("options",
          "activation_checkpointing " +
              std::string(workloads::activation_checkpointing_name(w.activation_checkpointing)) +
              ", cpu_offload " + on_off(w.cpu_offload) + ", torch_compile " +
              on_off(w.torch_compile) + ", cuda_graphs " + on_off(w.cuda_graphs));
  text += row("stragglers", stragglers_text(in.config));
  text += "\n";
  text += row("step time", fixed(r.step_time_s, 6) + " s");
  text += row("tokens/s per GPU", fixed(r.tokens_per_s_per_gpu, 1));
  text += row("TFLOP/s per GPU", fixed(r.tflops_per_gpu, 1));
  text += row("MFU", fixed(100.0 * r.mfu, 1) + "%");
  if (r.tokens_per_joule_gpu > 0) {
    std::string energy = fixed(r.tokens_per_joule_gpu, 2) + " at the GPU's " +
                         fixed(in.config.gpu_power_w, 0) + " W";
    if (r.tokens_per_joule_system > 0) {
      energy += ", " + fixed(r.tokens_per_joule_system, 2) + " at the system's " +
                fixed(in.config.system_power_per_gpu_w, 0) + " W per GPU";
    }
    text += row("tokens per joule", energy);
  }
  text += "\n";

  text += breakdown_table(r);
  text += "\n";
  text += memory_table(r.memory, r.memory_capacity_bytes, w.pp);
  text += "\n";
  text += row("events simulated", std::to_string(r.events) + " (" + str(r.collectives) +
                                      " collectives, " + str(r.tasks_per_rank) +
                                      " tasks per rank, slowest rank " + str(r.slowest_rank) + ")");
  text += row("engine", engine_text(r));
  return text;
}

void write_inputs_json(sim::JsonWriter& json, const RunInputs& in) {
  const WorkloadSpec& w = in.workload;
  write_scenario_json(json, in.scenario_path, in.net);
  json.key("workload").begin_object();
  json.key("model").str(w.model.name);
  json.key("parameters").int64(workloads::parameter_count(w.model));
  json.key("seq_len").int64(w.seq_len);
  json.key("local_batch").int64(w.local_batch);
  json.key("grad_accum").int64(w.grad_accum);
  json.key("global_batch").int64(w.global_batch());
  json.key("dtype").str(workloads::dtype_name(w.dtype));
  json.key("strategy").str(workloads::sharding_strategy_name(w.strategy));
  json.key("world_size").int64(w.world_size);
  json.key("dp_size").int64(w.dp_size);
  json.key("shard_group_size").int64(w.shard_group_size);
  json.key("replica_group_size").int64(w.replica_group_size);
  json.key("tp").int64(w.tp);
  json.key("pp").int64(w.pp);
  json.key("cp").int64(w.cp);
  json.key("mesh_order").str(workloads::mesh_order_text(w.mesh_order));
  json.key("pipeline_schedule").str(workloads::pipeline_schedule_name(w.pipeline_schedule));
  json.key("backward_prefetch").str(workloads::backward_prefetch_name(w.backward_prefetch));
  json.key("forward_prefetch").boolean(w.forward_prefetch);
  json.key("limit_all_gathers").boolean(w.limit_all_gathers);
  json.key("reshard_after_forward").boolean(w.reshard_after_forward);
  json.key("separate_reduce_stream").boolean(w.separate_reduce_stream);
  json.key("no_sync").boolean(w.no_sync);
  // Megatron-Core's data parallelism in place of PyTorch's, if any.
  json.key("megatron_data_parallel")
      .str(w.megatron_fsdp ? "fsdp"
           : !w.megatron   ? "none"
           : w.strategy == workloads::ShardingStrategy::kDistributedOptimizer
               ? "distributed_optimizer"
               : "ddp");
  json.key("reduce_dtype").str(workloads::dtype_name(w.reduce_dtype));
  json.key("activation_checkpointing")
      .str(workloads::activation_checkpointing_name(w.activation_checkpointing));
  json.key("cpu_offload").boolean(w.cpu_offload);
  json.key("torch_compile").boolean(w.torch_compile);
  json.key("cuda_graphs").boolean(w.cuda_graphs);
  json.end_object();
  std::vector<int64_t> ranks;
  for (const workloads::Straggler& s : in.config.stragglers) ranks.push_back(s.rank);
  json.key("stragglers").begin_object();
  json.key("ranks").str(sim::format_rank_list(ranks));
  json.key("count").int64(static_cast<int64_t>(ranks.size()));
  json.key("slowdown").number(in.net.values.get_float("stragglers.slowdown"));
  json.end_object();
}

std::string report_json(const RunInputs& in, const StepResult& r, double wall_s,
                        bool engine_stats) {
  std::ostringstream out;
  sim::JsonWriter json(out, 2);
  json.begin_object();
  write_schema_version(json);
  write_inputs_json(json, in);
  write_step_figures_json(json, r, "mfu");
  const MemoryBreakdown& m = r.memory;
  json.key("peak_memory_bytes").int64(m.total());
  json.key("memory_capacity_bytes").int64(r.memory_capacity_bytes);
  json.key("headroom_bytes").int64(r.memory_capacity_bytes - m.total());
  json.key("fits_in_memory").boolean(r.fits_in_memory);
  json.key("memory").begin_object();
  json.key("params_bytes").int64(m.params);
  json.key("grads_bytes").int64(m.grads);
  json.key("optimizer_bytes").int64(m.optimizer);
  json.key("unsharded_params_bytes").int64(m.unsharded_params);
  json.key("activations_bytes").int64(m.activations);
  json.key("comm_buffers_bytes").int64(m.comm_buffers);
  json.key("reserve_bytes").int64(m.reserve);
  json.key("host_bytes").int64(m.host_bytes);
  json.key("stage").int64(m.stage);
  json.end_object();
  write_simulation_counts_json(json, r, "tasks_per_rank");
  write_engine_json(json, r);
  if (engine_stats) write_engine_stats_json(json, r.engine);
  json.key("wall_s").number(wall_s);
  json.end_object();
  json.finish();
  out << '\n';
  return out.str();
}

}  // namespace

CommandSpec run_command_spec() {
  CommandSpec spec{
      "run",
      "Simulate one training step of the scenario's workload on every rank and summarise it.",
      {"SCENARIO"},
      {{"--set", "KEY=VALUE", true, "override a scenario key, validated like the file"},
       {"--json", "FILE", false, "also write the results as JSON (atomically)"},
       {"--trace", "FILE", false, "write a Chrome/Perfetto trace (JSON) of the traced ranks"},
       {"--trace-ranks", "LIST", false, "ranks to trace, e.g. '0,8-15' (default 0; with --trace)"},
       {"--trace-format", "FORMAT", false,
        "chrome (default) or kineto: torch.profiler's layout, one file per traced rank "
        "(FILE, or FILE.rankN with several), for HTA, TensorBoard and `validate --kineto`"},
       {"--allow-oom", "", false, "simulate even when the step does not fit in GPU memory"},
       {"--no-wall-time", "", false,
        "leave out the last line (wall time), the only one that differs between runs"}},
      "The summary gives step time, tokens/s, TFLOP/s and MFU per GPU, where the time goes\n"
      "(mean per rank) and peak memory per GPU against the profile's gpu.memory. A step\n"
      "that does not fit is reported on stderr with its memory breakdown and exits 1,\n"
      "unless --allow-oom. JSON keys: step_time_s, tokens_per_s_per_gpu, tflops_per_gpu,\n"
      "mfu, peak_memory_bytes, fits_in_memory, exposed_comm_s, compute_s, events, engine,\n"
      "wall_s, breakdown, memory and the inputs; only wall_s varies between identical runs.\n"
      "Before simulating, the step's work is estimated (tasks per rank, tasks x timelines) and a\n"
      "step over the limits below is refused at the key that drives it. On stderr: the\n"
      "estimate when it is 20 M tasks or more, then while the step runs its percentage done,\n"
      "events and ETA (redrawn on a terminal, else a line every 5 s, none for a step that\n"
      "ends sooner), and 'wrote FILE' for each file written; --quiet prints none of these."};
  spec.options.push_back(explicit_option());
  spec.options.push_back(engine_stats_option());
  spec.options.push_back(quiet_option());
  for (OptionSpec& o : work_limit_options()) spec.options.push_back(std::move(o));
  return spec;
}

int run_run_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const auto started = std::chrono::steady_clock::now();
  const bool tracing = parsed.has("--trace");
  const std::string trace_ranks =
      tracing || parsed.has("--trace-ranks") ? trace_ranks_text(parsed, "--trace") : "";
  const bool kineto = kineto_format(parsed, "--trace");

  StepScenario step = load_step_scenario(parsed.positionals[0], parsed.values("--set"));
  RunInputs in{parsed.positionals[0], std::move(step.net), step.config.workload, step.config};
  const topology::Cluster& cluster = in.net.cluster;
  workloads::StepConfig& config = in.config;
  if (tracing) {
    config.trace_ranks =
        trace_ranks_below(trace_ranks, in.workload.world_size, "'" + in.scenario_path + "'");
  }
  const collectives::HardwareProfile& profile = in.net.profile;

  config.explicit_ranks = parsed.has("--explicit");
  const WorkLimits limits = work_limits_from(parsed);
  config.max_task_timelines = limits.max_task_timelines;
  const StepPreflight preflight = preflight_step(in.net.values, config, limits,
                                                 parsed.has("--allow-oom"), "clustersim run", err);
  if (!preflight.ok) return kExitError;
  StatusLine status(err, "clustersim run", status_mode(parsed, err));
  if (preflight.work.task_timelines() >= kLargeTaskTimelines)
    status.note(step_work_text(preflight.work));
  EngineMeter meter(status);
  config.progress = meter.callback();
  const StepResult result = workloads::simulate_step(cluster, profile, config);
  config.progress = nullptr;
  meter.finish(result.events);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  if (parsed.has("--json")) {
    const std::string path = parsed.value_or("--json", "");
    sim::write_file_atomically(path, report_json(in, result, wall_s, parsed.has("--engine-stats")));
    status.note("wrote " + path);
  }
  if (tracing && kineto) {
    const std::string path = parsed.value_or("--trace", "");
    const std::vector<std::string> files = write_kineto_trace_files(
        path, result.trace, config.trace_ranks, in.workload.world_size, cluster.gpus_per_node(),
        sim::SimTime::from_seconds_rounded(result.step_time_s));
    status.note("wrote " + files_text(files, kineto_trace_pattern(path)));
  } else if (tracing) {
    const std::string path = parsed.value_or("--trace", "");
    write_chrome_trace_file(path, result.trace);
    status.note("wrote " + path);
  }
  out << summary(in, result);
  if (parsed.has("--engine-stats")) out << "\n" << engine_stats_table(result.engine, result.events);
  if (!parsed.has("--no-wall-time")) out << row("wall time", fixed(wall_s, 3) + " s");
  return kExitOk;
}

}  // namespace clustersim::cli
