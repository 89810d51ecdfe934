// write_kineto_trace: torch.profiler's layout for one rank, by hand on a few
// records (what each record becomes, where, and when).
#include "timeline/kineto_trace_writer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace clustersim::workloads {
namespace {

using sim::SimTime;

TraceRecord record(int64_t rank, std::string_view track, std::string_view name,
                   std::string_view category, int64_t start_ns, int64_t duration_ns) {
  TraceRecord r;
  r.rank = rank;
  r.track = track;
  r.name = name;
  r.category = category;
  r.start = SimTime::ns(start_ns);
  r.duration = SimTime::ns(duration_ns);
  return r;
}

std::string trace_of(const std::vector<TraceRecord>& records) {
  std::ostringstream out;
  write_kineto_trace(records, KinetoRank{3, 16, 3, SimTime::ns(5'000'123)}, out);
  return out.str();
}

bool has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

TEST(KinetoTraceWriter, RecordsBecomeWhatTorchProfilerWrites) {
  std::vector<TraceRecord> records;
  records.push_back(record(3, "host", "kernel_launches", "host", 0, 10'000));
  records.push_back(record(3, "compute", "wq", "gemm", 10'000, 2'500));
  TraceRecord attention = record(3, "compute", "sdpa_bwd", "attention", 20'000, 4'000);
  attention.phase = Phase::kBackward;
  records.push_back(attention);
  TraceRecord gather = record(3, "comm", "all_gather", "all_gather", 30'000, 1'000);
  gather.wait = SimTime::ns(500);
  gather.group_size = 16;
  gather.bytes = 4096;
  gather.algorithm = "ring";
  gather.protocol = "ll128";
  records.push_back(gather);
  records.push_back(record(3, "pcie", "copy_to_host", "pcie", 40'000, 700));
  records.push_back(record(4, "compute", "other_rank", "gemm", 0, 1));  // not rank 3's
  const std::string t = trace_of(records);

  EXPECT_TRUE(
      has(t, "\"distributedInfo\":{\n\"backend\":\"nccl\",\n\"rank\":3,\n\"world_size\":16"))
      << t;
  // The step marker over the whole step, on the host thread (pid 1, tid 1).
  EXPECT_TRUE(has(t,
                  "\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
                  "\"ts\":0,\"dur\":5000.123"))
      << t;
  EXPECT_TRUE(has(t,
                  "\"cat\":\"cuda_runtime\",\"name\":\"kernel_launches\",\"pid\":1,\"tid\":1,"
                  "\"ts\":0,\"dur\":10"));
  // Kernels on GPU 3's streams, named as their class's kernels are.
  EXPECT_TRUE(has(t,
                  "\"cat\":\"kernel\",\"name\":\"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt\","
                  "\"pid\":3,\"tid\":7,\"ts\":10,\"dur\":2.5"));
  EXPECT_TRUE(has(t, "\"name\":\"flash_bwd_kernel\",\"pid\":3,\"tid\":7,\"ts\":20,\"dur\":4"));
  // A collective from the rank's arrival (start - wait) to its end.
  EXPECT_TRUE(has(t,
                  "\"name\":\"ncclDevKernel_AllGather_RING_LL128\",\"pid\":3,\"tid\":20,"
                  "\"ts\":29.5,\"dur\":1.5"));
  EXPECT_TRUE(has(t,
                  "\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\",\"pid\":3,"
                  "\"tid\":32,\"ts\":40,\"dur\":0.7"));
  EXPECT_TRUE(has(t, "\"clustersim_name\":\"wq\""));
  EXPECT_FALSE(has(t, "other_rank"));
}

}  // namespace
}  // namespace clustersim::workloads
