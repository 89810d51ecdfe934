#include "scenario/step_config.h"

#include <optional>
#include <utility>

#include "collectives/tuner.h"
#include "config/config_error.h"
#include "workloads/model/compute_model.h"
#include "workloads/model/workload_config.h"
#include "workloads/schedules/forced_choice.h"
#include "workloads/schedules/step_program.h"
#include "workloads/schedules/straggler_config.h"

namespace clustersim::cli {

namespace {

// Every group must hold as many of its members on each node it uses. In
// torchtitan's order that holds whenever the sizes pass read_workload_spec's
// checks; another mesh_order can break it (tp of 8 strided by a cp of 3 on
// 8-GPU nodes puts 3, 3 and 2 members on its nodes).
void check_mesh_groups(const sim::ConfigValues& values, const topology::Cluster& cluster,
                       const workloads::WorkloadSpec& w) {
  const workloads::Layout layout = workloads::step::mesh_layout(w);
  const std::optional<workloads::step::UnevenGroup> uneven =
      workloads::step::uneven_group(cluster, layout, /*every_group=*/false);
  if (!uneven) return;
  const std::vector<int64_t> gpus =
      workloads::step::group_members(layout, uneven->role, uneven->group);
  std::string ranks;
  for (size_t i = 0; i < gpus.size() && i < 4; ++i) ranks += std::to_string(gpus[i]) + ", ";
  const char* const key = "workload.parallelism.mesh_order";
  sim::DiagnosticSink sink;
  sink.add(values.where(key), key,
           "expected an order that puts as many members of each group on every node it uses, "
           "found \"" +
               values.get_string(key) + "\", whose " +
               std::string(workloads::group_role_name(uneven->role)) + " group of rank " +
               std::to_string(gpus.front()) + " (ranks " + ranks + "...) does not with " +
               std::to_string(cluster.gpus_per_node()) + " GPUs per node");
  sink.throw_if_any();
}

void check_forced_choice(const sim::ConfigValues& values, const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile,
                         const workloads::StepConfig& config) {
  const collectives::ForcedChoice& forced = config.forced;
  if (!forced.algorithm && !forced.protocol && !forced.channels) return;
  const std::optional<std::string> problem =
      workloads::forced_choice_problem(cluster, profile, config, forced);
  if (!problem) return;
  // Blame the algorithm when it fails even with the protocol left to the
  // tuner (nvls across nodes); else the protocol (nvls with LL).
  const char* key = "collectives.protocol";
  if (forced.algorithm) {
    const collectives::ForcedChoice algorithm_only{forced.algorithm, std::nullopt, forced.channels};
    if (!forced.protocol ||
        workloads::forced_choice_problem(cluster, profile, config, algorithm_only)) {
      key = "collectives.algorithm";
    }
  }
  sim::DiagnosticSink sink;
  sink.add(values.where(key), key, *problem);
  sink.throw_if_any();
}

// A low-precision recipe needs the tensor cores that run its format: the
// workload's key is where the user asked for them.
void check_float8(const sim::ConfigValues& values, const collectives::HardwareProfile& profile,
                  const workloads::WorkloadSpec& w) {
  using workloads::Float8Recipe;
  if (w.float8 == Float8Recipe::kNone) return;
  const collectives::GpuProfile& gpu = profile.gpu;
  std::string lacks;
  if (w.float8 == Float8Recipe::kNvfp4 && gpu.peak_fp4_flops_per_s <= 0) {
    lacks = "no FP4 tensor cores (gpu.peak_fp4_tflops 0)";
  } else if ((w.float8 == Float8Recipe::kMxfp8 || w.float8 == Float8Recipe::kNvfp4) &&
             !gpu.block_scaled_mma) {
    lacks =
        "no tensor cores that apply block scales (gpu.block_scaled_mma false: MXFP8 and "
        "NVFP4 need Blackwell's block-scaled MMA)";
  } else if (w.float8 != Float8Recipe::kNvfp4 && gpu.peak_fp8_flops_per_s <= 0) {
    lacks = "no FP8 tensor cores (gpu.peak_fp8_tflops 0)";
  }
  if (lacks.empty()) return;
  const char* key = "workload.float8.recipe";
  std::string runs;
  if (gpu.peak_fp8_flops_per_s > 0) {
    runs = gpu.block_scaled_mma ? "none, tensorwise, rowwise, delayed, current, blockwise or mxfp8"
                                : "none, tensorwise, rowwise, delayed, current or blockwise";
  } else {
    runs = "none";
  }
  sim::DiagnosticSink sink;
  sink.add(values.where(key), key,
           "expected " + runs + " on hardware profile " + profile.name + " (" +
               profile.source_file + "), which has " + lacks + ", found " + values.get_string(key));
  sink.throw_if_any();
}

}  // namespace

workloads::StepConfig step_config_from_scenario(const NetworkScenario& net) {
  return step_config_from_scenario(net.values, net.cluster, net.profile);
}

workloads::StepConfig step_config_from_scenario(const sim::ConfigValues& values,
                                                const topology::Cluster& cluster,
                                                const collectives::HardwareProfile& profile) {
  ScenarioProblems problems;
  std::optional<workloads::StepConfig> config =
      step_config_parts(values, cluster, profile, problems);
  problems.throw_if_any();
  return std::move(*config);
}

std::optional<workloads::StepConfig> step_config_parts(const sim::ConfigValues& values,
                                                       const topology::Cluster& cluster,
                                                       const collectives::HardwareProfile& profile,
                                                       ScenarioProblems& problems) {
  std::optional<workloads::WorkloadSpec> workload = problems.attempt([&] {
    return workloads::read_workload_spec(values, cluster.gpu_count(), cluster.gpus_per_node());
  });
  if (!workload) return std::nullopt;
  workloads::StepConfig config;
  config.workload = std::move(*workload);
  // The checks below are independent of one another: each runs, so that
  // one pass reports all of their problems.
  bool ok = problems.check([&] { check_mesh_groups(values, cluster, config.workload); });
  config.schedule_options.separate_reduce_stream = config.workload.separate_reduce_stream;
  config.schedule_options.no_sync = config.workload.no_sync;
  ok = problems.check([&] { check_float8(values, profile, config.workload); }) && ok;
  ok = problems.check([&] {
    config.stragglers = workloads::read_stragglers(values, config.workload.world_size);
  }) && ok;
  config.seed = static_cast<uint64_t>(values.get_int("seed"));
  config.compute = workloads::compute_spec_from_profile(profile, config.workload.cudnn_attention);
  config.compute.stack_efficiency = values.get_float("workload.stack_efficiency");
  config.memory_capacity_bytes = profile.gpu.memory_bytes;
  config.gpu_power_w = profile.gpu.power_w;
  config.system_power_per_gpu_w = profile.host.system_power_per_gpu_w;
  config.host.kernel_launch = sim::SimTime::from_ns_rounded(profile.host.kernel_launch_us * 1e3);
  config.host.graph_launch = sim::SimTime::from_ns_rounded(profile.host.graph_launch_us * 1e3);
  config.host.pcie_Bps = cluster.spec().node.pcie_Bps * profile.host.pcie_efficiency;
  // The profile's figure is one node's CPU, shared by the node's ranks.
  config.host.cpu_adam_params_per_s =
      profile.host.cpu_adam_params_per_s / static_cast<double>(cluster.spec().node.gpus_per_node);
  config.forced = collectives::read_forced_choice(values);
  config.routing = collectives::read_routing(values);
  // A forced choice is checked against the step's collectives: only once
  // the step is otherwise sound.
  if (ok) ok = problems.check([&] { check_forced_choice(values, cluster, profile, config); });
  if (!ok) return std::nullopt;
  return config;
}

StepScenario load_step_scenario(const std::string& path, std::span<const std::string> overrides) {
  ScenarioProblems problems;
  NetworkParts parts = load_network_parts(path, overrides, problems);
  std::optional<workloads::StepConfig> config;
  if (parts.cluster && parts.profile) {
    config = step_config_parts(parts.values, *parts.cluster, *parts.profile, problems);
  } else if (parts.cluster) {
    // Without a profile the workload's own checks (mesh, batch, schedule)
    // can still run: their problems belong to this pass too.
    problems.check([&] {
      workloads::read_workload_spec(parts.values, parts.cluster->gpu_count(),
                                    parts.cluster->gpus_per_node());
    });
  }
  problems.throw_if_any();
  return StepScenario{NetworkScenario{std::move(parts.values), std::move(*parts.cluster),
                                      std::move(*parts.profile)},
                      std::move(*config)};
}

}  // namespace clustersim::cli
