// The end of a rank's step schedule, after its last gradient reduction
// (fsdp_schedule.h's "Gradient clipping" and "Optimizer"): the gradient
// norm and its all-reduces, the clipping, the optimizer step (on the GPU, or
// the host's with CPU offload), and Float8's precomputed scales for the
// next step.
//
// Units: task bytes as fsdp_schedule.h counts them (an fp32 norm's 4 bytes,
// an amax's 4). Thread safety: a pure function of its inputs but for the
// tasks it adds.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/model/workload_config.h"
#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::workloads {

// Adds the tasks above through `add`, the first waiting for `ready` (every
// final reduction); returns the optimizer step's task.
int32_t add_optimizer_tasks(const WorkloadSpec& spec, const FsdpSchedule& s, const AddTaskFn& add,
                            std::vector<int32_t> ready);

}  // namespace clustersim::workloads
