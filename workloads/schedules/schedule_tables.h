// What a rank's FSDP/HSDP/TP schedule is made of before its tasks: the
// names of task kinds and streams, and the kernel table with the unit sizes
// (FsdpSchedule's fields above `tasks`: the blocks' and root's kernels,
// recomputation, the weight-gradient split, the optimizer and clipping,
// FSDP2's copies and gradient accumulation, DTensor's sequence copy, Float8's
// amax kernel; the stage's chunks and parameter bytes). Internal to
// schedules/: build_fsdp_schedule (fsdp_schedule.h) calls it, then builds the
// tasks.
//
// Units: bytes and parameters. Thread safety: a pure function of its inputs.
#pragma once

#include <string_view>

#include "workloads/model/workload_config.h"
#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::workloads {

// Megatron sequence parallelism (fsdp_schedule.h): the TP collective before
// or after the block kernel named so, TaskKind::kKernel for none.
TaskKind tp_collective_before(std::string_view kernel);
TaskKind tp_collective_after(std::string_view kernel);

// Fills `s`'s kernel table and sizes for `spec` (a spec as read_workload_spec()
// returns it; invariant check) and the stage of `options`.
void build_schedule_tables(const WorkloadSpec& spec, const FsdpScheduleOptions& options,
                           FsdpSchedule& s);

}  // namespace clustersim::workloads
