#include "workloads/schedules/async_tp_tasks.h"

#include "sim/check.h"

namespace clustersim::workloads {

namespace {

Task copy(int64_t bytes, const Task& gemm, TaskKind kind, int32_t shift) {
  Task t = gemm;
  t.kind = kind;
  t.kernel = kNoKernel;
  t.stream = kind == TaskKind::kSend ? Stream::kTpSend : Stream::kTpRecv;
  t.group = GroupRole::kTp;
  t.peer_stage = shift;
  t.bytes = bytes;
  return t;
}

Task chunk_of(const FsdpSchedule& s, const Task& gemm) {
  const auto k = static_cast<size_t>(gemm.kernel);
  CLUSTERSIM_CHECK(k < s.tp_chunk.size() && s.tp_chunk[k] != kNoKernel,
                   "async TP needs the GEMM's row chunk");
  Task c = gemm;
  c.kernel = s.tp_chunk[k];
  return c;
}

}  // namespace

int32_t add_gathered_matmul(const FsdpSchedule& s, int64_t tp, const Task& gemm,
                            const std::vector<int32_t>& deps, int32_t input, const AddTaskFn& add) {
  const Task chunk = chunk_of(s, gemm);
  int32_t last = add(chunk, deps);  // the local shard's rows
  std::vector<int32_t> ready = deps;
  if (input >= 0) ready.push_back(input);
  for (int32_t k = 1; k < static_cast<int32_t>(tp); ++k) {
    const int64_t bytes = s.tp_gather_chunk_bytes;
    add(copy(bytes, gemm, TaskKind::kSend, k), ready);  // this shard to the peer k on
    const int32_t got = add(copy(bytes, gemm, TaskKind::kRecv, -k), ready);
    // After the previous chunk too: the compute stream's order, said
    // explicitly so that an exported graph keeps it.
    last = add(chunk, {got, last});
  }
  return last;
}

int32_t add_scattered_matmul(const FsdpSchedule& s, int64_t tp, const Task& gemm,
                             const std::vector<int32_t>& deps, const AddTaskFn& add) {
  const Task chunk = chunk_of(s, gemm);
  std::vector<int32_t> d = deps;
  int32_t got = -1;
  for (int32_t k = 1; k < static_cast<int32_t>(tp); ++k) {
    const int32_t done = add(chunk, d);  // the rows peer k on owns
    // The next chunk after this one (the compute stream's order, explicit
    // for an exported graph).
    d = {done};
    add(copy(s.tp_chunk_bytes, gemm, TaskKind::kSend, k), {done});
    got = add(copy(s.tp_chunk_bytes, gemm, TaskKind::kRecv, -k), {done});
  }
  add(chunk, d);  // its own rows
  Task sum = gemm;
  sum.kernel = s.tp_reduce_partials;
  std::vector<int32_t> partials;
  if (got >= 0) partials.push_back(got);
  return add(sum, partials);
}

}  // namespace clustersim::workloads
