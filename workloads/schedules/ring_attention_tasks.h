// The communication of context-parallel attention (WorkloadSpec::cp > 1,
// workloads/model/ring_attention.h), placed around the kernels of a block's forward,
// recomputation and backward as torch's ring attention issues it:
//  * the K/V exchange starts after each attention.cp_kv_cat (the buffer it
//    sends): with CpRotateMethod::kAllGather one all-gather of every rank's
//    K and V (nccl-tests bytes: cp x FsdpSchedule::cp_kv_bytes) after the
//    first cat of the pass, which every later step waits for (only the local
//    step 0 overlaps it); with kAllToAll a ring send to the next member of the
//    context-parallel group and a receive from the previous one
//    (cp_kv_bytes each), which the next cat and step wait for;
//  * in the backward, after attention.cp_grad_init and each
//    attention.cp_grad_accumulate, the fp32 K/V gradients go one rank on
//    around the ring (cp_kv_grad_bytes), and the next accumulation (or the
//    final cast) waits for the ones received.
// All of it runs on one communicator (ProcessGroupNCCL's stream for the cp
// group), so each exchange starts after the previous one; a ring send and
// its receive run together (one all_to_all_single in torch).
//
// Thread safety: one instance per schedule being built; not shared.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "workloads/model/workload_config.h"
#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::workloads {

class RingAttentionTasks {
 public:
  static constexpr int32_t kNone = -1;

  RingAttentionTasks(const WorkloadSpec& spec, const FsdpSchedule& schedule, AddTaskFn add)
      : method_(spec.cp_rotate),
        kv_bytes_(schedule.cp_kv_bytes),
        kv_grad_bytes_(schedule.cp_kv_grad_bytes),
        cp_(spec.cp),
        add_(std::move(add)) {}

  // The task the kernel `name` must wait for (kNone: none).
  int32_t before(std::string_view name);
  // After kernel task `kernel` (`base`: its unit, phase and micro-batch):
  // the exchanges that start there.
  void after(std::string_view name, const Task& base, int32_t kernel);

 private:
  // One exchange on the cp communicator, after `after` and the previous one.
  int32_t collective(const Task& base, int32_t after);
  int32_t ring(const Task& base, int64_t bytes, int32_t after);

  CpRotateMethod method_;
  int64_t kv_bytes_;
  int64_t kv_grad_bytes_;
  int64_t cp_;
  AddTaskFn add_;
  int32_t cats_ = 0;               // K/V cats so far in this attention
  int32_t next_ = kNone;           // the exchange bringing the K and V of the step after next
  int32_t current_ = kNone;        // ... of the next step (kNone: its own, step 0's)
  int32_t awaited_ = kNone;        // the exchange a kernel of this pass last waited for
  int32_t grad_ready_ = kNone;     // the K/V gradients the next accumulation reads
  std::vector<int32_t> previous_;  // the last exchange's tasks
};

}  // namespace clustersim::workloads
