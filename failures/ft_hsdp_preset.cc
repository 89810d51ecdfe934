#include "failures/ft_hsdp_preset.h"

#include <array>
#include <cmath>
#include <string>

#include "sim/check.h"

namespace clustersim::failures {

namespace {

// Under FT-HSDP a fault inside one replica group is contained there when
// the group's own processes or nodes fail (FTAR drops the group, the others
// go on); a fault every group meets alike, or one nobody can place, needs
// the whole job restarted.
constexpr std::array<FtHsdpShare, 11> kShares = {{
    {"gpu_hbm3_memory", 22.9, BlastRadius::kProcess, "the GPU's process dies: its group drops"},
    {"pcie", 18.0, BlastRadius::kNode, "the GPU falls off its node's PCIe: the node is drained"},
    {"nccl_watchdog_timeout", 9.0, BlastRadius::kProcess,
     "a collective of the group times out: the group is declared failed (the paper's ~60 s "
     "all-reduce timeout), not the job"},
    {"faulty_gpu", 7.4, BlastRadius::kProcess, "the GPU's process dies: its group drops"},
    {"software_bug", 7.1, BlastRadius::kJob, "every group runs the same code: a full restart"},
    {"host_maintenance", 6.2, BlastRadius::kNode, "the node is taken out"},
    {"kernel_fault", 5.8, BlastRadius::kNode, "the node's OS fails: the node"},
    {"unexpected_reboot", 5.6, BlastRadius::kNode, "the node restarts: the node"},
    {"silent_data_corruption", 5.5, BlastRadius::kProcess,
     "caught on one GPU: its group recomputes from a healthy peer"},
    {"network_switch_cable", 5.3, BlastRadius::kNode, "the node loses a rail: the node"},
    {"other", 7.2, BlastRadius::kJob, "unknown: assumed to need a full restart"},
}};

}  // namespace

double ft_hsdp_growth_exponent() {
  const double large_per_day = 24.0 * 60.0 / kFtHsdpLargeMtbfMinutes;  // the job's failures a day
  const double large_rate = large_per_day * 1000.0 / static_cast<double>(kFtHsdpLargeNodes);
  return std::log(large_rate / kFtHsdpSmallRate) /
         std::log(static_cast<double>(kFtHsdpLargeNodes) / static_cast<double>(kFtHsdpSmallNodes));
}

double ft_hsdp_per_1000_node_days(int64_t nodes) {
  CLUSTERSIM_CHECK(nodes > 0, "a job of at least one node");
  return kFtHsdpSmallRate * std::pow(static_cast<double>(nodes) /
                                         static_cast<double>(kFtHsdpSmallNodes),
                                     ft_hsdp_growth_exponent());
}

std::span<const FtHsdpShare> ft_hsdp_100k_shares() { return kShares; }

FailureModel ft_hsdp_100k_model(const JobComponents& job) {
  FailureModel model = empty_failure_model(job);
  const double total = ft_hsdp_per_1000_node_days(job.nodes());
  for (const FtHsdpShare& share : kShares) {
    const int index = failure_category_index(share.category);
    CLUSTERSIM_CHECK(index >= 0, "an FT-HSDP cause is a category: " + std::string(share.category));
    FailureCause& cause = model.causes[static_cast<size_t>(index)];
    cause.rate_per_hour = rate_from_per_1000_node_days(total * share.percent / 100.0, job.nodes(),
                                                       cause.components);
    cause.blast = share.blast;
  }
  return model;
}

}  // namespace clustersim::failures
