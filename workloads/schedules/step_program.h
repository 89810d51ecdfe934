// An FsdpSchedule compiled into the engine's program form (exec/program.h;
// internal to schedules/ and the Chakra export: step_simulator.h is the API).
//
// Tasks become operations on their stream, in stream order: consecutive
// kernels with no dependency on another stream form one segment (timed at
// once, with its launch-bound tail); frees disappear (a host wait on a free
// becomes a wait for the compute operations issued before it); each
// collective is tuned once for its group shape (every group of a role has the
// same shape, see Layout); copies and host CPU work become local operations
// of fixed duration. Dependencies name (stream, position) pairs, so a rank's
// progress is a few counters. Host issue times are prefix sums of the
// operations' host costs: launches, and the loop's own host work before each
// micro-batch's forward and each transformer layer's pass
// (WorkloadSpec::host_per_micro_batch_ns, host_per_layer_ns; the layers' not
// under CUDA graphs), which falls before the kernel or operation it precedes,
// inside a segment if need be.
//
// Units: nanoseconds (int64) and bytes. Thread safety: compile_program is a
// pure function; a Program is immutable once built.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <optional>
#include <vector>

#include "collectives/collective_cost.h"
#include "hardware/hardware_profile.h"
#include "workloads/schedules/fsdp_schedule.h"
#include "workloads/schedules/step_simulator.h"
#include "topology/cluster.h"

namespace clustersim::workloads::step {

// The program of one role, and what the Chakra export needs besides.
struct StepProgram {
  Program program;                 // Op::first_task / task_count: schedule tasks
  std::vector<int64_t> kernel_ns;  // by schedule kernel index
};

// The device mesh of `w` (exec/mesh_layout.h).
Layout mesh_layout(const WorkloadSpec& w);
// The same, after the invariant checks (callers validate user input first):
// the job fits the cluster, tp divides a node's GPUs, shard x replica x tp =
// world size.
Layout step_layout(const WorkloadSpec& w, const topology::Cluster& cluster);

// The shape of group 0 of `role` on `cluster`: every group of a role has the
// same shape (the layout is regular), so the tuner needs only this one.
collectives::GroupGeometry group_geometry(const Layout& layout, GroupRole role,
                                          const topology::Cluster& cluster);

// The ranks of group g of `role`, in ring order.
std::vector<int64_t> group_members(const Layout& layout, GroupRole role, int64_t g);

// A group that does not hold as many of its members on each node it uses
// (the collective model's precondition, collectives/group_collectives.h).
struct UnevenGroup {
  GroupRole role = GroupRole::kNone;
  int64_t group = 0;
};
// The first such group, role by role (shard, replica, tp, pp, cp), or
// nullopt; only group 0 of each role unless `every_group` (the engine
// tunes every group of a role on group 0's shape, so the full job needs
// that one even; a job with groups removed can leave a later one uneven).
std::optional<UnevenGroup> uneven_group(const topology::Cluster& cluster, const Layout& layout,
                                        bool every_group);

// Precondition: the layout matches config.workload and fits the cluster.
StepProgram compile_program(const FsdpSchedule& schedule, const StepConfig& config,
                            const Layout& layout, const topology::Cluster& cluster,
                            const collectives::HardwareProfile& profile);

}  // namespace clustersim::workloads::step
