#include "schedules/step_simulator.h"

#include <string>
#include <utility>

#include "exec/engine.h"
#include "exec/step_accounts.h"
#include "model/transformer_kernels.h"
#include "schedules/gpu_speed.h"
#include "schedules/step_program.h"
#include "sim/check.h"

namespace clustersim::workloads {

StepResult simulate_step(const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile, const StepConfig& config) {
  const WorkloadSpec& w = config.workload;
  const Layout layout = step::step_layout(w, cluster);

  const FsdpSchedule schedule = build_fsdp_schedule(w, config.schedule_options);
  const step::StepProgram program =
      step::compile_program(schedule, config, layout, cluster, profile);
  EngineOptions options;
  options.routing = config.routing;
  options.comm_overlap_slowdown = config.compute.comm_overlap_slowdown;
  options.stragglers = config.stragglers;
  options.rank_time_factors =
      gpu_time_factors(layout.world, config.compute.speed_variation, config.seed);
  options.trace_ranks = config.trace_ranks;
  EngineResult run = run_program(program.program, layout, cluster, profile, options);

  StepResult out;
  out.step_time_s = static_cast<double>(run.step_end_ns) * 1e-9;
  out.slowest_rank = run.slowest_rank;
  out.ranks = layout.world;
  out.events = run.events;
  out.collectives = run.collectives;
  out.tasks_per_rank = schedule.size();
  out.breakdown = step_accounts::mean_breakdown(run.summed_accounts, layout.world);

  const double tokens_per_gpu =
      static_cast<double>(w.local_batch * w.seq_len * w.grad_accum) / static_cast<double>(w.tp);
  if (out.step_time_s > 0) {
    out.tokens_per_s_per_gpu = tokens_per_gpu / out.step_time_s;
    out.tflops_per_gpu =
        model_flops_per_token(w.model, w.seq_len) * out.tokens_per_s_per_gpu * 1e-12;
    out.mfu = out.tflops_per_gpu * 1e12 / config.compute.peak_flops;
  }
  out.memory = memory_breakdown(w);
  out.memory_capacity_bytes = config.memory_capacity_bytes;
  out.fits_in_memory =
      config.memory_capacity_bytes <= 0 || fits(out.memory, config.memory_capacity_bytes);
  out.trace = std::move(run.trace);
  return out;
}

}  // namespace clustersim::workloads
