// The time accounts of one rank's step, shared by the step simulator and the
// Chakra replay (internal to the engines; StepBreakdown in exec/step_result.h
// is the public form): compute, exposed communication by kind, sync wait,
// launch-bound and idle, in integer nanoseconds while simulating, averaged
// over ranks into seconds at the end.
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>

#include "collectives/collective_cost.h"
#include "exec/step_result.h"

namespace clustersim::workloads::step_accounts {

enum Account : uint8_t {
  kCompute,
  kExposedAllGather,
  kExposedReduceScatter,
  kExposedAllReduce,
  kExposedTp,
  kExposedPcie,
  kSyncWait,
  kLaunchBound,
  kIdle,
  kPipelineBubble,  // waiting for another pipeline stage: never split into sync wait
  kExposedCp,       // context parallelism's K/V exchanges (ring attention)
  kAccountCount
};

using Accounts = std::array<int64_t, kAccountCount>;

// The account a wait for a collective of kind `op` is charged to (a
// tensor-parallel collective's caller knows its role and picks kExposedTp).
Account exposed_account(collectives::CollectiveOp op);

// Charges the end of a rank's step to `v`: after its last kernel
// (compute_free_ns) up to its finish, what it still waited for
// (finish_account, the part before finish_group_start_ns as sync wait),
// then idle up to the step's end.
// A compute stream's idle gap [free_ns, start_ns] ends with work starting at
// start_ns. The gap up to cause_end_ns (when what the work waited for last
// ended, clamped into the gap) is charged to that cause: to idle if it was
// compute or nothing, else to `cause` less the part before group_start_ns
// (the collective's start: waiting for slower members), which is sync wait.
// The rest of the gap, after the cause ended, the host was late issuing the
// work: launch_bound. Nothing when start_ns <= free_ns. A pipeline receive's
// whole wait is the bubble (its "slower member" is the other stage).
void charge_gap(Accounts& a, int64_t free_ns, int64_t start_ns, int64_t cause_end_ns, Account cause,
                int64_t group_start_ns);

// The idle time after the rank finished, up to the step's end, goes to
// `tail_account` (kIdle; a pipeline stage's: kPipelineBubble).
void close_rank(Accounts& v, Account finish_account, int64_t finish_ns, int64_t compute_free_ns,
                int64_t finish_group_start_ns, int64_t step_end_ns, Account tail_account = kIdle);

// Accounts summed over `ranks` closed ranks (nanoseconds) -> mean seconds.
StepBreakdown mean_breakdown(const std::array<double, kAccountCount>& sum_ns, int64_t ranks);

}  // namespace clustersim::workloads::step_accounts
