// Hand-built engine programs for the exec/ tests: appending an op to its
// stream in host order, with its dependencies and trace labels.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/program.h"

namespace clustersim::test_support {

// Appends `op` to its stream, in host order; a segment's task_count kernels
// share its work in its trace labels, any other op is labelled an all-reduce.
inline int32_t add(workloads::Program& p, workloads::Op op, std::vector<workloads::Dep> deps = {}) {
  using workloads::OpLabel;
  op.pos = static_cast<int32_t>(p.stream_ops[op.stream].size());
  op.dep_begin = static_cast<int32_t>(p.deps.size());
  for (const workloads::Dep& d : deps) p.deps.push_back(d);
  op.dep_end = static_cast<int32_t>(p.deps.size());
  const auto id = static_cast<int32_t>(p.ops.size());
  p.stream_ops[op.stream].push_back(id);
  if (op.kind == workloads::OpKind::kSegment) {
    op.label = static_cast<int32_t>(p.kernels.size());
    for (int32_t k = 0; k < op.task_count; ++k) {
      p.kernels.push_back(OpLabel{"compute", "k", "gemm", {}, 0, op.work_ns / op.task_count});
    }
  } else {
    op.label = static_cast<int32_t>(p.labels.size());
    p.labels.push_back(OpLabel{"comm", "all_reduce", "all_reduce", {}, 0, 0});
  }
  p.ops.push_back(op);
  return id;
}

}  // namespace clustersim::test_support
