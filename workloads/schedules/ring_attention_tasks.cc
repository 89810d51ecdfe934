#include "workloads/schedules/ring_attention_tasks.h"

#include <utility>

namespace clustersim::workloads {

int32_t RingAttentionTasks::before(std::string_view name) {
  // A later cat of the ring and each step after the first read the K and V
  // the previous exchange brought. Once a kernel waited for an exchange, the
  // compute stream's order makes the later ones wait too (the all-gather
  // serves every step), so they need no dependency and can share a segment.
  const bool reads_kv = (name == "attention.cp_kv_cat" && cats_ > 0) ||
                        name == "attention.cp_step" || name == "attention.cp_step.bwd";
  if (reads_kv && current_ != kNone && current_ != awaited_) {
    awaited_ = current_;
    return current_;
  }
  if (name == "attention.cp_grad_accumulate" || name == "attention.cp_grad_cast") {
    return grad_ready_;
  }
  return kNone;
}

void RingAttentionTasks::after(std::string_view name, const Task& base, int32_t kernel) {
  if (name == "attention.cp_kv_cat") {
    // What the next step will read: the all-gather (once a pass) or this
    // ring exchange.
    if (method_ == CpRotateMethod::kAllToAll) {
      next_ = ring(base, kv_bytes_, kernel);
    } else if (cats_ == 0) {
      next_ = collective(base, kernel);
    }
    ++cats_;
  } else if (name == "attention" || name == "attention.bwd" || name == "attention.cp_step" ||
             name == "attention.cp_step.bwd") {
    current_ = next_;
  } else if (name == "attention.cp_grad_init" || name == "attention.cp_grad_accumulate") {
    grad_ready_ = ring(base, kv_grad_bytes_, kernel);
  } else if (name == "attention.cp_out_cast" || name == "attention.cp_grad_cast") {
    cats_ = 0;  // the attention is done
    current_ = next_ = awaited_ = grad_ready_ = kNone;
  }
}

int32_t RingAttentionTasks::collective(const Task& base, int32_t after) {
  Task t = base;
  t.kind = TaskKind::kAllGather;
  t.stream = Stream::kCp;
  t.group = GroupRole::kCp;
  t.kernel = kNoKernel;
  t.bytes = cp_ * kv_bytes_;
  std::vector<int32_t> d = previous_;
  d.push_back(after);
  const int32_t id = add_(t, std::move(d));
  previous_ = {id};
  return id;
}

int32_t RingAttentionTasks::ring(const Task& base, int64_t bytes, int32_t after) {
  std::vector<int32_t> d = previous_;
  d.push_back(after);
  Task t = base;
  t.kernel = kNoKernel;
  t.group = GroupRole::kCp;
  t.bytes = bytes;
  t.kind = TaskKind::kSend;
  t.stream = Stream::kCpSend;
  t.peer_stage = 1;  // the next member of the cp group
  const int32_t send = add_(t, d);
  t.kind = TaskKind::kRecv;
  t.stream = Stream::kCpRecv;
  t.peer_stage = -1;  // from the previous one
  const int32_t recv = add_(t, std::move(d));
  previous_ = {send, recv};
  return recv;
}

}  // namespace clustersim::workloads
