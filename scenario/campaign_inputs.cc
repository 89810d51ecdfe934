#include "scenario/campaign_inputs.h"

#include <memory>

#include "failures/campaign_config.h"
#include "failures/failure_config.h"
#include "scenario/step_config.h"
#include "topology/cluster_config.h"
#include "workloads/model/memory_model.h"
#include "workloads/model/workload_config.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::cli {

using failures::CampaignSpec;
using sim::SimTime;

CampaignInputs read_campaign_inputs(const std::string& path, const sim::ConfigValues& values,
                                    const StepPlatformOf& platform,
                                    const workloads::StepResult* simulated,
                                    std::shared_ptr<const StepCache> step_cache,
                                    const WorkLimits& limits, const StepWatch& watch) {
  const failures::CampaignSettings settings = failures::read_campaign_settings(values);
  const topology::ClusterSpec cluster_spec = topology::read_cluster_spec(values);
  const int64_t gpus_per_node = cluster_spec.node.gpus_per_node;
  CampaignInputs in;
  in.scenario_path = path;
  in.step_cache = step_cache;
  CampaignSpec& spec = in.spec;
  spec.duration = settings.duration;
  spec.trials = settings.trials;
  spec.tokens = settings.tokens.value_or(0);
  spec.seed = static_cast<uint64_t>(values.get_int("seed"));

  const bool has_workload = values.has("workload.seq_len") || values.has("workload.local_batch");
  double state_bytes_per_gpu = 0;
  if (has_workload) {
    const workloads::WorkloadSpec w =
        workloads::read_workload_spec(values, cluster_spec.nodes * gpus_per_node, gpus_per_node);
    in.job_gpus = w.world_size;
    in.replica_groups = w.replica_group_size;
    spec.tokens_per_step =
        static_cast<double>(w.local_batch * w.seq_len * w.grad_accum * w.batch_replicas());
    const workloads::MemoryBreakdown m = workloads::memory_breakdown(w);
    state_bytes_per_gpu = static_cast<double>(m.params + m.optimizer + m.host_bytes);
  } else {
    in.job_gpus = cluster_spec.nodes * gpus_per_node;
  }
  if (settings.tokens_per_step) spec.tokens_per_step = *settings.tokens_per_step;
  if (spec.tokens_per_step <= 0) {
    sim::DiagnosticSink sink;
    sink.add(sim::SourceLocation{path, 0, 0}, "campaign.tokens_per_step",
             "expected campaign.tokens_per_step or a workload section to derive it from, found "
             "neither");
    sink.throw_if_any();
  }
  spec.replica_groups = in.replica_groups;
  in.model = failures::read_failure_model(values, cluster_spec, in.job_gpus);

  // The step: given, or simulated (and for ft_hsdp with k groups when a trial needs it).
  const bool ft = values.get_string("recovery.policy") == "ft_hsdp";
  if (settings.step_time && simulated == nullptr) {
    spec.step_time = *settings.step_time;
  } else {
    if (!has_workload) {
      sim::DiagnosticSink sink;
      sink.add(sim::SourceLocation{path, 0, 0}, "campaign.step_time",
               "expected campaign.step_time or a workload section to simulate the step, found "
               "neither");
      sink.throw_if_any();
    }
    in.step_simulated = true;
    const StepPlatform on = platform();
    workloads::StepConfig config = step_config_from_scenario(values, on.cluster, on.profile);
    config.max_task_timelines = limits.max_task_timelines;
    workloads::StepWork work;
    if (simulated == nullptr) {
      work = workloads::estimate_step_work(config);
      check_step_work(work, config.workload, values, limits);
    }
    const double full_s =
        simulated != nullptr ? simulated->step_time_s : cached_step(step_cache.get(), "full", [&] {
          if (watch.starting) watch.starting(work);
          workloads::StepConfig watched = config;
          watched.progress = watch.progress;
          const workloads::StepResult r = workloads::simulate_step(on.cluster, on.profile, watched);
          if (watch.finished) watch.finished(r.events);
          return r.step_time_s;
        });
    spec.step_time = SimTime::from_seconds_rounded(full_s);
    in.degraded =
        std::make_shared<DegradedSteps>(on.cluster, on.profile, config, full_s, step_cache);
    spec.slowdown_of_fabric_fault = [degraded = in.degraded](failures::ComponentKind kind) {
      return (*degraded)(kind);
    };
    spec.slowdown_of_straggler = [degraded = in.degraded](double slowdown) {
      return degraded->straggler(slowdown);
    };
    if (ft && in.replica_groups >= 2) {
      in.live =
          std::make_shared<LiveThroughput>(on.cluster, on.profile, config, full_s, step_cache);
      spec.throughput_of_live = [live = in.live](int64_t k) { return (*live)(k); };
    }
  }
  failures::WorkloadFacts facts;
  facts.step_time = spec.step_time;
  facts.state_bytes_per_gpu = static_cast<int64_t>(state_bytes_per_gpu);
  in.policy = failures::read_recovery_policy(values, in.job_gpus, in.replica_groups, facts);
  return in;
}

}  // namespace clustersim::cli
