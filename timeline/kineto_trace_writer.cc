#include "timeline/kineto_trace_writer.h"

#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/json_writer.h"

namespace clustersim::workloads {

namespace {

constexpr int64_t kHostPid = 1;
constexpr int64_t kHostTid = 1;

// CUDA stream ids as traces show them: the default compute stream 7, NCCL's
// streams after it.
class StreamIds {
 public:
  int64_t id(std::string_view track) {
    static constexpr std::array<std::pair<std::string_view, int64_t>, 5> kFixed = {
        {{"compute", 7}, {"comm", 20}, {"reduce", 24}, {"tp", 28}, {"pcie", 32}}};
    for (const auto& [name, id] : kFixed) {
      if (name == track) return id;
    }
    for (size_t i = 0; i < extra_.size(); ++i) {
      if (extra_[i] == track) return 36 + 4 * static_cast<int64_t>(i);
    }
    extra_.push_back(track);
    return 36 + 4 * static_cast<int64_t>(extra_.size() - 1);
  }

 private:
  std::vector<std::string_view> extra_;
};

bool cpu_side(const TraceRecord& r) { return r.track == "host" || r.track == "cpu"; }
bool is_copy(const TraceRecord& r) { return r.track == "pcie" || r.category == "async_tp"; }

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string nccl_op(std::string_view category) {
  if (category == "all_gather") return "AllGather";
  if (category == "reduce_scatter") return "ReduceScatter";
  if (category == "all_reduce") return "AllReduce";
  if (category == "broadcast") return "Broadcast";
  return "SendRecv";
}

// The name a real trace gives a kernel of the record's kind (see the header).
std::string kernel_name(const TraceRecord& r) {
  if (r.track == "compute") {
    if (r.category == "gemm") return "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt";
    if (r.category == "attention") {
      return r.phase == Phase::kBackward ? "flash_bwd_kernel" : "flash_fwd_kernel";
    }
    if (r.category == "optimizer") return "multi_tensor_apply_kernel";
    return "vectorized_elementwise_kernel";
  }
  if (r.track == "pcie") {
    return r.name == "copy_to_device" ? "Memcpy HtoD (Pinned -> Device)"
                                      : "Memcpy DtoH (Device -> Pinned)";
  }
  if (r.category == "async_tp") return "Memcpy PtoP (Device -> Device)";
  const std::string algorithm = r.algorithm.empty() ? "RING" : upper(r.algorithm);
  const std::string protocol = r.protocol.empty() ? "SIMPLE" : upper(r.protocol);
  return "ncclDevKernel_" + nccl_op(r.category) + "_" + algorithm + "_" + protocol;
}

void microseconds(sim::JsonWriter& json, int64_t ns) { json.decimal(ns, 3); }

void thread_name(sim::JsonWriter& json, int64_t pid, int64_t tid, const std::string& name) {
  json.begin_object().key("ph").str("M").key("pid").int64(pid).key("tid").int64(tid);
  json.key("name").str("thread_name").key("args").begin_object().key("name").str(name);
  json.end_object().end_object();
}

// An "X" event of the host's thread; with a correlation, a launch that a
// GPU event names.
void host_event(sim::JsonWriter& json, std::string_view category, const std::string& name,
                int64_t start_ns, int64_t duration_ns, std::optional<int64_t> correlation = {}) {
  json.begin_object().key("ph").str("X").key("cat").str(category);
  json.key("name").str(name).key("pid").int64(kHostPid).key("tid").int64(kHostTid);
  json.key("ts");
  microseconds(json, start_ns);
  json.key("dur");
  microseconds(json, duration_ns);
  json.key("args").begin_object();
  if (correlation) json.key("correlation").int64(*correlation);
  json.end_object().end_object();
}

void process_name(sim::JsonWriter& json, int64_t pid, const std::string& name) {
  json.begin_object().key("ph").str("M").key("pid").int64(pid).key("tid").int64(0);
  json.key("name").str("process_name").key("args").begin_object().key("name").str(name);
  json.end_object().end_object();
}

}  // namespace

void write_kineto_trace(std::span<const TraceRecord> records, const KinetoRank& rank,
                        std::ostream& out) {
  StreamIds streams;
  std::vector<std::pair<int64_t, std::string_view>> used;  // GPU streams, first use order
  for (const TraceRecord& r : records) {
    if (r.rank != rank.rank || cpu_side(r)) continue;
    const int64_t id = streams.id(r.track);
    bool seen = false;
    for (const auto& u : used) seen = seen || u.first == id;
    if (!seen) used.emplace_back(id, r.track);
  }

  sim::JsonWriter json(out, 0, 2);
  json.begin_object().key("schemaVersion").int64(1);
  json.key("distributedInfo").begin_object().key("backend").str("nccl");
  json.key("rank").int64(rank.rank).key("world_size").int64(rank.world_size).end_object();
  json.key("traceEvents").begin_array();
  process_name(json, kHostPid, "rank " + std::to_string(rank.rank) + " host");
  thread_name(json, kHostPid, kHostTid, "python");
  process_name(json, rank.device, "GPU " + std::to_string(rank.device));
  for (const auto& [id, track] : used) {
    thread_name(json, rank.device, id,
                "stream " + std::to_string(id) + " (" + std::string(track) + ")");
  }
  // The step marker prof.step() writes, over the whole step.
  host_event(json, "user_annotation", "ProfilerStep#1", 0, rank.step_time.count_ns());

  int64_t correlation = 0;  // of FSDP2's copies and their launches
  for (const TraceRecord& r : records) {
    if (r.rank != rank.rank) continue;
    const bool cpu = cpu_side(r);
    const bool fsdp_copy = r.track == "compute" && r.name.starts_with(kFsdpCopyPrefix);
    if (fsdp_copy) {
      // The FSDP::... range and the launch a real trace has around the copy.
      ++correlation;
      host_event(json, "user_annotation",
                 "FSDP::" + std::string(r.name.substr(kFsdpCopyPrefix.size())),
                 r.start.count_ns(), r.duration.count_ns());
      host_event(json, "cuda_runtime", "cudaLaunchKernel", r.start.count_ns(), 0, correlation);
    }
    // A collective's kernel runs from this rank's arrival to its end.
    const bool nccl = !cpu && !is_copy(r) && r.track != "compute";
    const int64_t start = (nccl ? r.start - r.wait : r.start).count_ns();
    const int64_t duration = (nccl ? r.wait + r.duration : r.duration).count_ns();
    json.begin_object().key("ph").str("X");
    if (cpu) {
      json.key("cat").str(r.track == "host" ? "cuda_runtime" : "cpu_op");
      json.key("name").str(r.name).key("pid").int64(kHostPid).key("tid").int64(kHostTid);
    } else {
      json.key("cat").str(is_copy(r) ? "gpu_memcpy" : "kernel");
      json.key("name").str(kernel_name(r));
      json.key("pid").int64(rank.device).key("tid").int64(streams.id(r.track));
    }
    json.key("ts");
    microseconds(json, start);
    json.key("dur");
    microseconds(json, duration);
    json.key("args").begin_object();
    if (!cpu) json.key("device").int64(rank.device).key("stream").int64(streams.id(r.track));
    if (fsdp_copy) json.key("correlation").int64(correlation);
    json.key("clustersim_name").str(r.name).key("clustersim_category").str(r.category);
    json.key("clustersim_phase").str(phase_name(r.phase));
    if (r.group_size > 0) json.key("group_size").int64(r.group_size);
    if (r.bytes > 0) json.key("bytes").int64(r.bytes);
    json.end_object().end_object();
  }
  json.end_array().key("displayTimeUnit").str("ms").end_object();
  json.finish();
  out << '\n';
}

}  // namespace clustersim::workloads
