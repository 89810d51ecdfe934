#include "exec/step_accounts.h"

#include <algorithm>

namespace clustersim::workloads::step_accounts {

Account exposed_account(collectives::CollectiveOp op) {
  switch (op) {
    case collectives::CollectiveOp::kAllGather:
      return kExposedAllGather;
    case collectives::CollectiveOp::kReduceScatter:
      return kExposedReduceScatter;
    default:
      return kExposedAllReduce;
  }
}

void charge_gap(Accounts& a, int64_t free_ns, int64_t start_ns, int64_t cause_end_ns, Account cause,
                int64_t group_start_ns) {
  if (start_ns <= free_ns) return;
  const int64_t waited_until = std::min(std::max(free_ns, cause_end_ns), start_ns);
  const int64_t waited = waited_until - free_ns;
  if (waited > 0) {
    if (cause == kIdle || cause == kCompute) {
      a[kIdle] += waited;
    } else {
      const int64_t sync =
          cause == kPipelineBubble ? 0 : std::clamp(group_start_ns - free_ns, int64_t{0}, waited);
      a[kSyncWait] += sync;
      a[cause] += waited - sync;
    }
  }
  a[kLaunchBound] += start_ns - waited_until;
}

void close_rank(Accounts& v, Account finish_account, int64_t finish_ns, int64_t compute_free_ns,
                int64_t finish_group_start_ns, int64_t step_end_ns, Account tail_account) {
  const int64_t tail = std::max<int64_t>(0, finish_ns - compute_free_ns);
  if (finish_account == kIdle || finish_account == kCompute) {
    v[kIdle] += tail;
  } else {
    const int64_t sync = finish_account == kPipelineBubble
                             ? 0
                             : std::clamp(finish_group_start_ns - compute_free_ns, int64_t{0}, tail);
    v[kSyncWait] += sync;
    v[finish_account] += tail - sync;
  }
  v[tail_account] += step_end_ns - std::max(finish_ns, compute_free_ns);
}

StepBreakdown mean_breakdown(const std::array<double, kAccountCount>& sum_ns, int64_t ranks) {
  const double scale = static_cast<double>(ranks) * 1e9;
  StepBreakdown b;
  b.compute_s = sum_ns[kCompute] / scale;
  b.exposed_all_gather_s = sum_ns[kExposedAllGather] / scale;
  b.exposed_reduce_scatter_s = sum_ns[kExposedReduceScatter] / scale;
  b.exposed_all_reduce_s = sum_ns[kExposedAllReduce] / scale;
  b.exposed_tp_s = sum_ns[kExposedTp] / scale;
  b.exposed_pcie_s = sum_ns[kExposedPcie] / scale;
  b.pipeline_bubble_s = sum_ns[kPipelineBubble] / scale;
  b.exposed_cp_s = sum_ns[kExposedCp] / scale;
  b.sync_wait_s = sum_ns[kSyncWait] / scale;
  b.launch_bound_s = sum_ns[kLaunchBound] / scale;
  b.idle_s = sum_ns[kIdle] / scale;
  return b;
}

}  // namespace clustersim::workloads::step_accounts
