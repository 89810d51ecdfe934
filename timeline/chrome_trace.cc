#include "timeline/chrome_trace.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/json_writer.h"

namespace clustersim::workloads {

namespace {

constexpr std::array<std::string_view, 6> kTracks = {"host",   "compute", "comm",
                                                     "reduce", "tp",      "pcie"};

// Thread ids: the fixed ones, then the others in order of first appearance.
class TrackIds {
 public:
  int64_t id(std::string_view track) {
    for (size_t i = 0; i < kTracks.size(); ++i) {
      if (kTracks[i] == track) return static_cast<int64_t>(i);
    }
    for (size_t i = 0; i < extra_.size(); ++i) {
      if (extra_[i] == track) return static_cast<int64_t>(kTracks.size() + i);
    }
    extra_.push_back(track);
    return static_cast<int64_t>(kTracks.size() + extra_.size() - 1);
  }
  std::string_view name(int64_t id) const {
    const auto i = static_cast<size_t>(id);
    return i < kTracks.size() ? kTracks[i] : extra_[i - kTracks.size()];
  }

 private:
  std::vector<std::string_view> extra_;
};

std::string unit_text(int32_t unit) {
  if (unit == kRootUnit) return "root";
  if (unit == kWholeModel) return "optimizer";
  return "block " + std::to_string(unit);
}

void microseconds(sim::JsonWriter& json, sim::SimTime time) { json.decimal(time.count_ns(), 3); }

void metadata(sim::JsonWriter& json, int64_t pid, const int64_t* tid, std::string_view name,
              std::string_view arg_key, auto&& write_arg) {
  json.begin_object().key("ph").str("M").key("pid").int64(pid);
  if (tid != nullptr) json.key("tid").int64(*tid);
  json.key("name").str(name).key("args").begin_object().key(arg_key);
  write_arg();
  json.end_object().end_object();
}

}  // namespace

void write_chrome_trace(std::span<const TraceRecord> records, std::ostream& out) {
  TrackIds tracks;
  std::vector<int64_t> tids;
  tids.reserve(records.size());
  std::vector<std::pair<int64_t, int64_t>> used;  // (rank, tid)
  for (const TraceRecord& r : records) {
    tids.push_back(tracks.id(r.track));
    used.emplace_back(r.rank, tids.back());
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());

  sim::JsonWriter json(out, 0, 2);
  json.begin_object().key("traceEvents").begin_array();
  for (size_t i = 0; i < used.size(); ++i) {
    // Plain names, not a structured binding: clang 14 (the fuzz build's
    // compiler) cannot capture one in a lambda.
    const int64_t rank = used[i].first;
    const int64_t tid = used[i].second;
    if (i == 0 || used[i - 1].first != rank) {
      const std::string name = "rank " + std::to_string(rank);
      metadata(json, rank, nullptr, "process_name", "name", [&] { json.str(name); });
      metadata(json, rank, nullptr, "process_sort_index", "sort_index", [&] { json.int64(rank); });
    }
    metadata(json, rank, &tid, "thread_name", "name", [&] { json.str(tracks.name(tid)); });
    metadata(json, rank, &tid, "thread_sort_index", "sort_index", [&] { json.int64(tid); });
  }
  for (size_t i = 0; i < records.size(); ++i) {
    const TraceRecord& r = records[i];
    json.begin_object().key("ph").str("X").key("pid").int64(r.rank).key("tid").int64(tids[i]);
    json.key("ts");
    microseconds(json, r.start);
    json.key("dur");
    microseconds(json, r.duration);
    json.key("name").str(r.name).key("cat").str(r.category);
    json.key("args").begin_object();
    json.key("phase").str(phase_name(r.phase));
    json.key("unit").str(unit_text(r.unit));
    json.key("micro_batch").int64(r.micro_batch);
    if (r.group_size > 0 || r.bytes > 0) json.key("bytes").int64(r.bytes);
    if (r.group_size > 0) {
      json.key("group_size").int64(r.group_size);
      json.key("wait_us");
      microseconds(json, r.wait);
      if (!r.algorithm.empty()) json.key("algorithm").str(r.algorithm);
      if (!r.protocol.empty()) json.key("protocol").str(r.protocol);
    }
    json.end_object().end_object();
  }
  json.end_array().key("displayTimeUnit").str("ns").end_object();
  json.finish();
  out << '\n';
}

}  // namespace clustersim::workloads
