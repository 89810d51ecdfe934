#include "workloads/schedules/step_simulator.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "exec/engine.h"
#include "exec/step_accounts.h"
#include "exec/timelines.h"
#include "sim/check.h"
#include "workloads/model/transformer_kernels.h"
#include "workloads/schedules/gpu_speed.h"
#include "workloads/schedules/step_program.h"

namespace clustersim::workloads {

int64_t step_timelines(const StepConfig& config) {
  const WorkloadSpec& w = config.workload;
  TimelineSettings s;
  s.world = w.world_size;
  s.pp = w.pp;
  s.tp = w.tp;
  s.explicit_ranks = config.explicit_ranks;
  s.jitter = config.compute.segment_jitter > 0 || w.host_per_step_jitter_ns > 0;
  s.equal_speeds = config.compute.speed_variation == 0 && config.stragglers.empty();
  s.traced = !config.trace_ranks.empty();
  s.ring_in_tp = w.async_tp && w.tp > 1;
  return expected_timelines(s);
}

StepWork estimate_step_work(const StepConfig& config) {
  StepWork work = estimate_step_work(config.workload, config.schedule_options);
  work.timelines = step_timelines(config);
  return work;
}

StepResult simulate_step(const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile, const StepConfig& config) {
  const WorkloadSpec& w = config.workload;
  const Layout layout = step::step_layout(w, cluster);

  // One program per pipeline stage (one without pipeline parallelism); every
  // rank of a stage runs its stage's.
  std::vector<Program> programs;
  int64_t tasks_per_rank = 0;
  for (int64_t stage = 0; stage < w.pp; ++stage) {
    FsdpScheduleOptions schedule_options = config.schedule_options;
    schedule_options.stage = stage;
    const FsdpSchedule schedule = build_fsdp_schedule(w, schedule_options);
    tasks_per_rank = std::max<int64_t>(tasks_per_rank, schedule.size());
    programs.push_back(
        step::compile_program(schedule, config, layout, cluster, profile).program);
  }
  EngineOptions options;
  options.routing = config.routing;
  options.healthy_fabric = config.healthy_fabric;
  options.comm_overlap_slowdown = config.compute.comm_overlap_slowdown;
  options.stragglers = config.stragglers;
  options.rank_time_factors =
      gpu_time_factors(layout.world, config.compute.speed_variation, config.seed);
  options.segment_jitter_sd = config.compute.segment_jitter;
  options.jitter_seed = config.seed;
  options.host_lead_ns = w.host_per_step_ns;
  options.host_lead_jitter_ns = w.host_per_step_jitter_ns;
  options.trace_ranks = config.trace_ranks;
  options.progress = config.progress;
  options.explicit_ranks = config.explicit_ranks;
  if (config.max_task_timelines > 0) {
    options.max_timelines = std::max<int64_t>(1, config.max_task_timelines / tasks_per_rank);
  }
  EngineResult run;
  if (w.pp == 1) {
    run = run_program(programs.front(), layout, cluster, profile, options);
  } else {
    std::vector<int32_t> program_of(static_cast<size_t>(layout.world));
    for (int64_t r = 0; r < layout.world; ++r) {
      program_of[static_cast<size_t>(r)] = static_cast<int32_t>(layout.stage_of(r));
    }
    options.tail_account = step_accounts::kPipelineBubble;
    run = run_programs(EngineJob{programs, program_of, nullptr}, layout, cluster, profile, options);
  }

  StepResult out;
  out.step_time_s = static_cast<double>(run.step_end_ns) * 1e-9;
  out.slowest_rank = run.slowest_rank;
  out.ranks = layout.world;
  out.events = run.events;
  out.engine = run.stats;
  out.collectives = run.collectives;
  out.tasks_per_rank = tasks_per_rank;
  out.breakdown = step_accounts::mean_breakdown(run.summed_accounts, layout.world);

  const double tokens_per_gpu =
      static_cast<double>(w.rank_tokens() * w.grad_accum) / static_cast<double>(w.tp * w.pp);
  if (out.step_time_s > 0) {
    out.tokens_per_s_per_gpu = tokens_per_gpu / out.step_time_s;
    out.tflops_per_gpu =
        model_flops_per_token(w.model, w.seq_len) * out.tokens_per_s_per_gpu * 1e-12;
    out.mfu = out.tflops_per_gpu * 1e12 / config.compute.peak_flops;
    if (config.gpu_power_w > 0)
      out.tokens_per_joule_gpu = out.tokens_per_s_per_gpu / config.gpu_power_w;
    if (config.system_power_per_gpu_w > 0) {
      out.tokens_per_joule_system = out.tokens_per_s_per_gpu / config.system_power_per_gpu_w;
    }
  }
  out.memory = memory_breakdown(w);
  out.memory_capacity_bytes = config.memory_capacity_bytes;
  out.fits_in_memory =
      config.memory_capacity_bytes <= 0 || fits(out.memory, config.memory_capacity_bytes);
  out.trace = std::move(run.trace);
  out.ranks_per_timeline = run.ranks_per_timeline;
  out.timeline_dims = std::move(run.timeline_dims);
  out.explicit_why = std::move(run.explicit_why);
  return out;
}

}  // namespace clustersim::workloads
