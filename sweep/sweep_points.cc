#include "sweep/sweep_points.h"

#include <algorithm>
#include <exception>

#include "config/config_error.h"
#include "config/file_text.h"
#include "config/scenario_loader.h"
#include "hardware/shipped_profiles.h"
#include "scenario/network_scenario.h"
#include "scenario/scenario_schema.h"
#include "scenario/stack_profile.h"
#include "scenario/step_config.h"
#include "sweep/sweep_rows.h"
#include "topology/cluster_config.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::cli {

namespace {

const char* const kShard = "workload.parallelism.shard_group_size";
const char* const kReplica = "workload.parallelism.replica_group_size";
const char* const kTp = "workload.parallelism.tp";

}  // namespace

std::vector<SweepAxis> scenario_sweep_axes(const sim::ConfigValues& values,
                                           const sim::ConfigSchema& schema) {
  std::vector<SweepAxis> axes;
  if (!values.has("sweep.axes")) return axes;
  // Validated by the schema already; parsing again cannot fail.
  axes = *parse_sweep_axes(values.get_string("sweep.axes")).value;
  sim::DiagnosticSink sink;
  for (const SweepAxis& axis : axes) {
    if (schema.find_key(axis.key) == nullptr || axis.key == "sweep.axes") {
      sink.add(values.where("sweep.axes"), "sweep.axes",
               "expected scenario keys to sweep, found '" + axis.key + "', which is not one");
    }
  }
  sink.throw_if_any();
  return axes;
}

std::string derived_group_key(const std::vector<SweepAxis>& axes,
                              const std::vector<std::string>& sets) {
  const auto swept = [&axes](const char* key) {
    return std::any_of(axes.begin(), axes.end(),
                       [key](const SweepAxis& a) { return a.key == key; });
  };
  const auto is_set = [&sets](const char* key) {
    return std::any_of(sets.begin(), sets.end(), [key](const std::string& s) {
      return s.starts_with(std::string(key) + "=");
    });
  };
  std::string dropped;
  if (swept(kShard) && !swept(kReplica) && !is_set(kReplica)) dropped = kReplica;
  if (swept(kReplica) && !swept(kShard) && !is_set(kShard)) dropped = kShard;
  return dropped;
}

PointLoader::PointLoader(std::string path, std::string text, std::vector<std::string> sets,
                         std::string dropped, WorkLimits limits)
    : path_(std::move(path)),
      text_(std::move(text)),
      sets_(std::move(sets)),
      dropped_(std::move(dropped)),
      limits_(limits),
      schema_(build_scenario_schema()) {}

sim::ConfigValues PointLoader::values(const std::vector<std::string>& overrides) const {
  std::vector<std::string> all = sets_;
  all.insert(all.end(), overrides.begin(), overrides.end());
  sim::ConfigValues loaded = sim::load_scenario_text(text_, path_, schema_, all);
  apply_stack_profile(loaded, path_);
  apply_profile_node(loaded, path_);
  if (dropped_.empty() || !loaded.has(dropped_)) return loaded;
  sim::ConfigValues kept;
  for (const auto& [key, entry] : loaded.entries()) {
    if (key != dropped_) kept.set(key, entry);
  }
  return kept;
}

DpSize PointLoader::dp_size(const std::vector<std::string>& overrides) const {
  try {
    const sim::ConfigValues v = values(overrides);
    const topology::ClusterSpec spec = topology::read_cluster_spec(v);
    const int64_t gpus = spec.nodes * spec.node.gpus_per_node;
    const int64_t tp = v.get_int(kTp);
    if (tp <= 0 || gpus % tp != 0) {
      return {0, std::string(kTp) + ": expected a divisor of the world size " +
                     std::to_string(gpus) + ", found " + std::to_string(tp)};
    }
    return {gpus / tp, ""};
  } catch (const sim::ConfigError& e) {
    return {0, reason_of(e)};
  } catch (const std::exception& e) {
    return {0, e.what()};
  }
}

const topology::Cluster& PointLoader::cluster_for(const sim::ConfigValues& v) {
  const topology::ClusterSpec spec = topology::read_cluster_spec(v);
  std::string cluster_key;
  for (const auto& [key, entry] : v.entries()) {
    if (key.starts_with("cluster.")) {
      cluster_key += key + "=" + sim::format_value(*schema_.find_key(key), entry.value) + "\n";
    }
  }
  std::unique_ptr<topology::Cluster>& cluster = clusters_[cluster_key];
  if (!cluster) {
    cluster = std::make_unique<topology::Cluster>(topology::build_cluster(spec));
  }
  return *cluster;
}

const collectives::HardwareProfile* PointLoader::profile_for(const sim::ConfigValues& v,
                                                             std::string& reason) {
  if (!v.has("hardware") || v.get_string("hardware").empty()) {
    reason = "hardware: missing; expected " + collectives::shipped_profiles_phrase();
    return nullptr;
  }
  const std::string& value = v.get_string("hardware");
  const std::string profile_path = collectives::resolve_hardware_path(path_, value);
  if (const sim::ReadOutcome file = sim::check_input_file(profile_path);
      file.failure != sim::ReadFailure::kNone) {
    reason = "hardware: expected " + collectives::shipped_profiles_phrase() + ", found " +
             (collectives::is_bare_profile_name(value)
                  ? "'" + value + "', which this build does not ship"
                  : sim::found_phrase(file, profile_path));
    return nullptr;
  }
  std::unique_ptr<collectives::HardwareProfile>& profile = profiles_[profile_path];
  if (!profile) {
    profile = std::make_unique<collectives::HardwareProfile>(collectives::load_hardware_profile(
        profile_path, hardware_schema_for_scenario(stack_path_of(v, path_))));
  }
  return profile.get();
}

PreparedPoint PointLoader::prepare(const std::vector<std::string>& overrides) {
  PreparedPoint p;
  try {
    p.values = values(overrides);
    p.cluster = &cluster_for(p.values);
    p.profile = profile_for(p.values, p.reason);
    if (p.profile == nullptr) return p;
    p.config = step_config_from_scenario(p.values, *p.cluster, *p.profile);
    p.config.max_task_timelines = limits_.max_task_timelines;
    const workloads::StepWork work = workloads::estimate_step_work(p.config);
    p.task_timelines = work.task_timelines();
    check_step_work(work, p.config.workload, p.values, limits_);
  } catch (const sim::ConfigError& e) {
    p.reason = reason_of(e);
  } catch (const std::exception& e) {
    p.reason = e.what();
    p.failed = true;
  }
  return p;
}

}  // namespace clustersim::cli
