#include "failures/failure_model.h"

#include <array>
#include <cmath>
#include <string>

#include "sim/check.h"

namespace clustersim::failures {

namespace {

using CK = ComponentKind;
using BR = BlastRadius;

// Components and blast radii of the Llama 3 categories (why each):
//  * GPU-side faults (faulty GPU, HBM3, SRAM, GPU system processor, thermal
//    interface/sensor, silent data corruption) kill the process on that GPU.
//    HBM is its own component kind (one per GPU) so that a scenario can give
//    memory its own distribution; the count is the same.
//  * Host faults (maintenance, SSD, PSU, chassis, I/O board, CPU, DRAM) take
//    the node.
//  * nic: the node loses a rail and NCCL cannot run its collectives: the node.
//  * network_switch_cable: the table does not separate switches from cables.
//    It is fitted per NIC-to-leaf cable, the most numerous network part and
//    the one whose count grows with the job; its blast radius is the node
//    (a leaf-switch fault, which would take more, has its own category).
//  * software_bug and nccl_watchdog_timeout are per node (kNodeSoftware): the
//    chance that some process hits a bug or stalls a collective grows with the
//    number of processes; both stop the whole job. dependency (an external
//    service such as storage) is per job: its rate does not grow with size.
//  * pcie, kernel_fault, unexpected_reboot and other are causes of the
//    FT-HSDP paper's table (arXiv:2602.00277) that the Llama 3 table does
//    not name: a GPU falling off its PCIe link, an OS kernel fault and a
//    reboot take the node; "other" is unknown, so it stops the job.
constexpr std::array<FailureCategory, 27> kCategories = {{
    {"faulty_gpu", "gpu", CK::kGpu, BR::kProcess},
    {"gpu_hbm3_memory", "gpu", CK::kGpuHbm, BR::kProcess},
    {"software_bug", "software", CK::kNodeSoftware, BR::kJob},
    {"network_switch_cable", "network", CK::kNicCable, BR::kNode},
    {"host_maintenance", "host", CK::kHost, BR::kNode},
    {"gpu_sram_memory", "gpu", CK::kGpu, BR::kProcess},
    {"gpu_system_processor", "gpu", CK::kGpu, BR::kProcess},
    {"nic", "network", CK::kNic, BR::kNode},
    {"nccl_watchdog_timeout", "software", CK::kNodeSoftware, BR::kJob},
    {"silent_data_corruption", "gpu", CK::kGpu, BR::kProcess},
    {"gpu_thermal_interface_sensor", "gpu", CK::kGpu, BR::kProcess},
    {"ssd", "host", CK::kHost, BR::kNode},
    {"power_supply", "host", CK::kHost, BR::kNode},
    {"server_chassis", "host", CK::kHost, BR::kNode},
    {"io_expansion_board", "host", CK::kHost, BR::kNode},
    {"dependency", "software", CK::kJobSoftware, BR::kJob},
    {"cpu", "host", CK::kHost, BR::kNode},
    {"system_memory", "host", CK::kHost, BR::kNode},
    // Not in the Llama 3 table: rate 0 unless a scenario sets one.
    {"nvswitch", "network", CK::kNvSwitch, BR::kNode},
    {"leaf_switch", "network", CK::kLeafSwitch, BR::kLeaf},
    {"spine_switch", "network", CK::kSpineSwitch, BR::kDegradeBandwidth},
    {"core_switch", "network", CK::kCoreSwitch, BR::kDegradeBandwidth},
    {"fabric_link", "network", CK::kFabricLink, BR::kDegradeBandwidth},
    // Not in the Llama 3 table either (the ft_hsdp_100k preset's).
    {"pcie", "host", CK::kHost, BR::kNode},
    {"kernel_fault", "host", CK::kHost, BR::kNode},
    {"unexpected_reboot", "host", CK::kHost, BR::kNode},
    {"other", "software", CK::kNodeSoftware, BR::kJob},
}};

}  // namespace

std::string_view blast_radius_name(BlastRadius blast) {
  static constexpr std::array<std::string_view, 5> kNames = {"process", "node", "leaf",
                                                             "degrade_bandwidth", "job"};
  return kNames[static_cast<size_t>(blast)];
}

std::string_view inter_arrival_name(InterArrival distribution) {
  return distribution == InterArrival::kWeibull ? "weibull" : "exponential";
}

std::span<const FailureCategory> failure_categories() { return kCategories; }

int failure_category_index(std::string_view name) {
  for (size_t i = 0; i < kCategories.size(); ++i) {
    if (kCategories[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

sim::Weibull FailureCause::weibull_hours() const {
  CLUSTERSIM_CHECK(rate_per_hour > 0, "Weibull of cause " + std::string(name) + " with rate 0");
  return sim::Weibull(weibull_shape,
                      1.0 / (rate_per_hour * std::tgamma(1.0 + 1.0 / weibull_shape)));
}

double FailureModel::total_rate_per_hour() const {
  double total = 0;
  for (const FailureCause& c : causes) total += c.aggregate_rate_per_hour();
  return total;
}

double FailureModel::per_1000_node_days() const {
  CLUSTERSIM_CHECK(job.nodes() > 0, "failure model without a job");
  return total_rate_per_hour() * kNodeHoursPer1000NodeDays / static_cast<double>(job.nodes());
}

FailureModel empty_failure_model(const JobComponents& job) {
  FailureModel model;
  model.job = job;
  model.causes.reserve(kCategories.size());
  for (const FailureCategory& c : kCategories) {
    FailureCause cause;
    cause.name = c.name;
    cause.group = c.group;
    cause.component = c.component;
    cause.blast = c.blast;
    cause.components = job.count(c.component);
    model.causes.push_back(cause);
  }
  return model;
}

FailureModel job_mtbf_failure_model(const JobComponents& job, sim::SimTime mtbf,
                                    BlastRadius blast) {
  CLUSTERSIM_CHECK(mtbf > sim::SimTime::zero(), "job MTBF must be positive");
  CLUSTERSIM_CHECK(blast != BlastRadius::kDegradeBandwidth, "a job MTBF that kills something");
  FailureModel model;
  model.job = job;
  FailureCause cause;
  cause.name = "job_mtbf";
  cause.group = "job";
  cause.blast = blast;
  if (blast == BlastRadius::kJob) {
    cause.component = ComponentKind::kJobSoftware;
    cause.components = 1;
    cause.rate_per_hour = rate_from_mtbf(mtbf);
  } else {
    cause.component = ComponentKind::kHost;
    cause.components = job.nodes();
    cause.rate_per_hour = rate_from_mtbf(mtbf) / static_cast<double>(job.nodes());
  }
  model.causes.push_back(cause);
  return model;
}

std::string_view blast_problem(ComponentKind component, BlastRadius blast) {
  const bool fabric = component == ComponentKind::kSpineSwitch ||
                      component == ComponentKind::kCoreSwitch ||
                      component == ComponentKind::kFabricLink;
  switch (blast) {
    case BlastRadius::kJob:
      return "";
    case BlastRadius::kDegradeBandwidth:
      return fabric ? "" : "degrade_bandwidth needs a fabric component (spine_switch, core_switch or fabric_link)";
    case BlastRadius::kLeaf:
      if (fabric) return "a spine, core or switch-to-switch link takes out no node";
      return component == ComponentKind::kJobSoftware ? "the job as a whole names no node" : "";
    case BlastRadius::kProcess:
    case BlastRadius::kNode:
      if (fabric) return "a spine, core or switch-to-switch link takes out no node";
      if (component == ComponentKind::kLeafSwitch) return "a leaf switch takes out every node behind it (leaf)";
      return component == ComponentKind::kJobSoftware ? "the job as a whole names no node" : "";
  }
  return "";
}

double hours_of(sim::SimTime t) { return static_cast<double>(t.count_ns()) / kNsPerHour; }

double rate_from_mtbf(sim::SimTime mtbf) {
  CLUSTERSIM_CHECK(mtbf > sim::SimTime::zero(), "MTBF must be positive");
  return kNsPerHour / static_cast<double>(mtbf.count_ns());
}

sim::SimTime mtbf_from_rate(double rate_per_hour) {
  CLUSTERSIM_CHECK(rate_per_hour > 0 && std::isfinite(rate_per_hour), "rate must be positive");
  return sim::SimTime::from_ns_rounded(kNsPerHour / rate_per_hour);
}

double rate_from_per_1000_node_days(double per_1000_node_days, int64_t job_nodes,
                                    int64_t components) {
  CLUSTERSIM_CHECK(per_1000_node_days >= 0 && job_nodes > 0 && components > 0,
                   "per-1,000-node-days conversion needs a rate >= 0, nodes and components");
  return per_1000_node_days * static_cast<double>(job_nodes) /
         (kNodeHoursPer1000NodeDays * static_cast<double>(components));
}

double per_1000_node_days_from_rate(double rate_per_hour, int64_t components, int64_t job_nodes) {
  CLUSTERSIM_CHECK(rate_per_hour >= 0 && job_nodes > 0 && components >= 0,
                   "per-1,000-node-days conversion needs a rate >= 0 and nodes");
  return rate_per_hour * static_cast<double>(components) * kNodeHoursPer1000NodeDays /
         static_cast<double>(job_nodes);
}

}  // namespace clustersim::failures
