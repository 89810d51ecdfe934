#include "calibration/kineto_trace.h"

#include <algorithm>
#include <map>
#include <optional>

#include "calibration/interval_union.h"
#include "config/gzip_text.h"
#include "config/json_reader.h"
#include "config/text_fields.h"

namespace clustersim::calibration {

namespace {

using sim::JsonValue;

bool contains_any(const std::string& lowered, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view w) { return lowered.find(w) != std::string::npos; });
}

// One diagnostic, built by push_back: GCC 12 reports a braced
// vector<Diagnostic> temporary as maybe-uninitialized (a false positive).
[[noreturn]] void throw_one(sim::SourceLocation where, std::string key_path, std::string message) {
  std::vector<sim::Diagnostic> diagnostics;
  diagnostics.push_back(sim::Diagnostic{std::move(where), std::move(key_path), std::move(message)});
  throw sim::ConfigError(std::move(diagnostics));
}

bool is_gpu_category(std::string_view cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
}

// One "X" event, checked.
struct Event {
  const JsonValue* value = nullptr;
  std::string path;
  std::string_view name;
  std::string_view cat;
  double ts_us = 0;
  double dur_us = 0;
  std::optional<int64_t> correlation;
};

struct Launch {
  double ts_us = 0;
  std::string thread;  // "pid/tid" of the launching CPU thread, as the trace writes them
};

// Where GPU work launched by one CPU thread counts as FSDP2's: the union of
// the thread's FSDP::... ranges.
class FsdpRanges {
 public:
  void add(const std::string& thread, double start_us, double end_us) {
    ranges_[thread].emplace_back(start_us, end_us);
  }
  void merge() {
    for (auto& [thread, ranges] : ranges_) {
      std::sort(ranges.begin(), ranges.end());
      std::vector<std::pair<double, double>> merged;
      for (const auto& r : ranges) {
        if (!merged.empty() && r.first <= merged.back().second) {
          merged.back().second = std::max(merged.back().second, r.second);
        } else {
          merged.push_back(r);
        }
      }
      ranges = std::move(merged);
    }
  }
  // After merge().
  bool contains(const std::string& thread, double t) const {
    const auto it = ranges_.find(thread);
    if (it == ranges_.end()) return false;
    const auto& ranges = it->second;
    const auto after =
        std::upper_bound(ranges.begin(), ranges.end(), t,
                         [](double x, const std::pair<double, double>& r) { return x < r.first; });
    return after != ranges.begin() && t <= std::prev(after)->second;
  }

 private:
  std::map<std::string, std::vector<std::pair<double, double>>> ranges_;
};

struct Marker {
  int64_t number;
  double start_us;
  double duration_us;
  sim::SourceLocation where;
};

class TraceReader {
 public:
  explicit TraceReader(const std::string& file) : file_(file) {}

  // distributedInfo's rank (>= 0) and world_size (> 0), where given.
  void read_distributed_info(const JsonValue& top, KinetoTrace& trace) {
    const JsonValue* info = top.find("distributedInfo");
    if (info == nullptr) return;
    if (!info->is(JsonValue::Kind::kObject)) {
      throw_one(
          info->where(file_), "distributedInfo",
          "expected an object (torch.profiler's rank and world_size), found " + info->describe());
    }
    const auto integer = [&](const char* key, int64_t least) -> std::optional<int64_t> {
      const JsonValue* v = info->find(key);
      if (v == nullptr) return std::nullopt;
      if (!v->is(JsonValue::Kind::kNumber) || !v->is_integer || v->integer < least) {
        throw_one(v->where(file_), std::string("distributedInfo.") + key,
                  std::string("expected an integer >= ") + std::to_string(least) + ", found " +
                      v->describe());
      }
      return v->integer;
    };
    trace.rank = integer("rank", 0);
    trace.world_size = integer("world_size", 1);
    if (const JsonValue* w = info->find("world_size")) trace.world_size_where = w->where(file_);
  }

  KinetoTrace read(const JsonValue& top) {
    if (!top.is(JsonValue::Kind::kObject)) {
      throw_one(top.where(file_), "",
                "expected a JSON object with a \"traceEvents\" array (torch.profiler's Chrome "
                "trace), found " +
                    top.describe());
    }
    const JsonValue* events = top.find("traceEvents");
    if (events == nullptr) {
      throw_one(top.where(file_), "",
                "expected a member \"traceEvents\" (the array of trace events) in the top-level "
                "object, found none");
    }
    if (!events->is(JsonValue::Kind::kArray)) {
      throw_one(events->where(file_), "traceEvents",
                "expected an array of trace events, found " + events->describe());
    }
    std::vector<Event> gpu;
    std::map<int64_t, Launch> launches;  // correlation -> the CPU launch
    FsdpRanges fsdp;
    std::map<int64_t, sim::SourceLocation> step_numbers;
    std::vector<Marker> markers;
    for (size_t i = 0; i < events->items.size(); ++i) {
      std::optional<Event> event =
          complete_event(events->items[i], sim::json_path_index("traceEvents", i));
      if (!event) continue;
      if (is_gpu_category(event->cat)) {
        gpu.push_back(*event);
      } else if (event->name.starts_with("ProfilerStep") &&
                 (event->cat == "user_annotation" || event->cat == "cpu_op")) {
        if (std::optional<Marker> marker = step_marker(*event)) {
          const auto [it, inserted] = step_numbers.emplace(marker->number, marker->where);
          if (!inserted) {
            sink_.add(marker->where, event->path,
                      "expected each step number once, found ProfilerStep#" +
                          std::to_string(marker->number) + " again (first at " +
                          std::to_string(it->second.line) + ":" +
                          std::to_string(it->second.column) + ")");
          } else {
            markers.push_back(*marker);
          }
        }
      } else if (event->correlation && event->cat != "gpu_user_annotation") {
        launches.emplace(*event->correlation, Launch{event->ts_us, thread_of(*event->value)});
      } else if (event->name.starts_with("FSDP::") &&
                 (event->cat == "user_annotation" || event->cat == "cpu_op")) {
        fsdp.add(thread_of(*event->value), event->ts_us, event->ts_us + event->dur_us);
      }
    }
    fsdp.merge();
    if (sink_.empty() && markers.empty()) {
      sink_.add(events->where(file_), "traceEvents",
                "expected at least one ProfilerStep#N event (a torch.profiler step marker, cat "
                "user_annotation or cpu_op), found none");
    }
    sink_.throw_if_any();

    std::stable_sort(markers.begin(), markers.end(),
                     [](const Marker& a, const Marker& b) { return a.start_us < b.start_us; });
    KinetoTrace trace;
    trace.file = file_;
    read_distributed_info(top, trace);
    for (const Marker& m : markers) {
      KinetoStep step;
      step.number = m.number;
      step.cpu_start_us = m.start_us;
      step.cpu_duration_us = m.duration_us;
      step.where = m.where;
      trace.steps.push_back(step);
    }
    std::vector<std::vector<std::pair<double, double>>> compute(trace.steps.size());
    for (const Event& e : gpu) {
      double t = e.ts_us;
      const Launch* launch = nullptr;
      if (e.correlation) {
        const auto it = launches.find(*e.correlation);
        if (it != launches.end()) {
          launch = &it->second;
          t = launch->ts_us;
        }
      }
      const std::optional<size_t> index = step_at(markers, t);
      if (!index) {
        ++trace.unattributed_events;
        continue;
      }
      KinetoStep& step = trace.steps[*index];
      const KernelClass kind = classify_kernel(e.name, e.cat);
      const bool copy_like = kind == KernelClass::kElementwise || kind == KernelClass::kMemory ||
                             kind == KernelClass::kOther;
      const KernelClass c = copy_like && launch != nullptr && fsdp.contains(launch->thread, t)
                                ? KernelClass::kFsdpCopy
                                : kind;
      KernelClassTotals& totals = step.by_class[static_cast<size_t>(c)];
      ++totals.count;
      totals.duration_us += e.dur_us;
      const double end = e.ts_us + e.dur_us;
      if (step.gpu_events == 0) {
        step.gpu_start_us = e.ts_us;
        step.gpu_end_us = end;
      } else {
        step.gpu_start_us = std::min(step.gpu_start_us, e.ts_us);
        step.gpu_end_us = std::max(step.gpu_end_us, end);
      }
      ++step.gpu_events;
      if (!is_nccl(kind) && kind != KernelClass::kMemory) {
        compute[*index].emplace_back(e.ts_us, end);
      }
    }
    for (size_t s = 0; s < trace.steps.size(); ++s) {
      trace.steps[s].compute_busy_us = union_length(compute[s]);
    }
    return trace;
  }

 private:
  // The event at `path` if it is a complete ("X") event with valid fields;
  // nothing for other phases and for invalid events (reported).
  std::optional<Event> complete_event(const JsonValue& v, const std::string& path) {
    if (!v.is(JsonValue::Kind::kObject)) {
      sink_.add(v.where(file_), path, "expected an event object, found " + v.describe());
      return std::nullopt;
    }
    const JsonValue* ph = v.find("ph");
    if (ph == nullptr) {
      sink_.add(v.where(file_), path,
                "expected a member \"ph\" (the event phase, \"X\" for complete events), found "
                "none");
      return std::nullopt;
    }
    if (!ph->is(JsonValue::Kind::kString)) {
      sink_.add(ph->where(file_), sim::json_path_member(path, "ph"),
                "expected a string (the event phase), found " + ph->describe());
      return std::nullopt;
    }
    if (ph->text != "X") return std::nullopt;
    Event e;
    e.value = &v;
    e.path = path;
    bool ok = true;
    const auto string_member = [&](const char* key, bool required) -> std::string_view {
      const JsonValue* m = v.find(key);
      if (m == nullptr) {
        if (required) {
          sink_.add(v.where(file_), path,
                    std::string("expected a member \"") + key + "\" (a string), found none");
          ok = false;
        }
        return "";
      }
      if (!m->is(JsonValue::Kind::kString)) {
        sink_.add(m->where(file_), sim::json_path_member(path, key),
                  "expected a string, found " + m->describe());
        ok = false;
        return "";
      }
      return m->text;
    };
    e.name = string_member("name", true);
    e.cat = string_member("cat", false);
    const auto time_member = [&](const char* key, const char* what, double& out) {
      const JsonValue* m = v.find(key);
      if (m == nullptr) {
        sink_.add(v.where(file_), path,
                  std::string("expected a member \"") + key + "\" (" + what +
                      " in microseconds), found none");
        ok = false;
      } else if (!m->is(JsonValue::Kind::kNumber)) {
        sink_.add(m->where(file_), sim::json_path_member(path, key),
                  std::string("expected a number (") + what + " in microseconds), found " +
                      m->describe());
        ok = false;
      } else {
        out = m->number;
      }
    };
    time_member("ts", "start time", e.ts_us);
    time_member("dur", "duration", e.dur_us);
    if (const JsonValue* dur = v.find("dur");
        dur != nullptr && dur->is(JsonValue::Kind::kNumber) && dur->number < 0) {
      sink_.add(dur->where(file_), sim::json_path_member(path, "dur"),
                "expected a non-negative number of microseconds, found " + dur->describe());
      ok = false;
    }
    if (const JsonValue* args = v.find("args"); args != nullptr) {
      const std::string args_path = sim::json_path_member(path, "args");
      if (!args->is(JsonValue::Kind::kObject)) {
        sink_.add(args->where(file_), args_path, "expected an object, found " + args->describe());
        ok = false;
      } else if (const JsonValue* corr = args->find("correlation"); corr != nullptr) {
        if (!corr->is(JsonValue::Kind::kNumber) || !corr->is_integer) {
          sink_.add(corr->where(file_), sim::json_path_member(args_path, "correlation"),
                    "expected an integer correlation id, found " + corr->describe());
          ok = false;
        } else {
          e.correlation = corr->integer;
        }
      }
    }
    if (!ok) return std::nullopt;
    return e;
  }

  // "pid/tid" as written (numbers or strings; absent members count as empty).
  static std::string thread_of(const JsonValue& v) {
    const auto part = [&](const char* key) -> std::string {
      const JsonValue* m = v.find(key);
      if (m == nullptr) return "";
      if (m->is(JsonValue::Kind::kString)) return m->text;
      if (m->is(JsonValue::Kind::kNumber) && m->is_integer) return std::to_string(m->integer);
      return "";
    };
    return part("pid") + "/" + part("tid");
  }

  std::optional<Marker> step_marker(const Event& e) {
    const std::string_view prefix = "ProfilerStep#";
    std::optional<int64_t> number;
    if (e.name.starts_with(prefix)) {
      number = sim::parse_number<int64_t>(e.name.substr(prefix.size()));
    }
    const JsonValue& name = *e.value->find("name");
    if (!number || *number < 0) {
      sink_.add(name.where(file_), sim::json_path_member(e.path, "name"),
                "expected a step marker named ProfilerStep#<n> with a non-negative integer n, "
                "found " +
                    name.describe());
      return std::nullopt;
    }
    return Marker{*number, e.ts_us, e.dur_us, e.value->where(file_)};
  }

  // The step whose marker [start, start + duration) holds `t`.
  static std::optional<size_t> step_at(const std::vector<Marker>& markers, double t) {
    const auto after = std::upper_bound(markers.begin(), markers.end(), t,
                                        [](double x, const Marker& m) { return x < m.start_us; });
    if (after == markers.begin()) return std::nullopt;
    const auto m = std::prev(after);
    if (t >= m->start_us + m->duration_us) return std::nullopt;
    return static_cast<size_t>(m - markers.begin());
  }

  const std::string& file_;
  sim::DiagnosticSink sink_;
};

}  // namespace

std::string_view kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm:
      return "gemm";
    case KernelClass::kFlashAttention:
      return "flash_attention";
    case KernelClass::kNcclAllGather:
      return "nccl_all_gather";
    case KernelClass::kNcclReduceScatter:
      return "nccl_reduce_scatter";
    case KernelClass::kNcclAllReduce:
      return "nccl_all_reduce";
    case KernelClass::kNcclOther:
      return "nccl_other";
    case KernelClass::kOptimizer:
      return "optimizer";
    case KernelClass::kElementwise:
      return "elementwise";
    case KernelClass::kFsdpCopy:
      return "fsdp_copy";
    case KernelClass::kMemory:
      return "memory";
    case KernelClass::kOther:
      return "other";
  }
  return "other";
}

bool is_nccl(KernelClass c) {
  return c == KernelClass::kNcclAllGather || c == KernelClass::kNcclReduceScatter ||
         c == KernelClass::kNcclAllReduce || c == KernelClass::kNcclOther;
}

KernelClass classify_kernel(std::string_view name, std::string_view category) {
  if (category == "gpu_memcpy" || category == "gpu_memset") return KernelClass::kMemory;
  if (name.starts_with("ncclKernel_") || name.starts_with("ncclDevKernel_")) {
    if (name.find("AllGather") != std::string_view::npos) return KernelClass::kNcclAllGather;
    if (name.find("ReduceScatter") != std::string_view::npos) {
      return KernelClass::kNcclReduceScatter;
    }
    if (name.find("AllReduce") != std::string_view::npos) return KernelClass::kNcclAllReduce;
    return KernelClass::kNcclOther;
  }
  const std::string n = sim::ascii_lower(name);
  if (contains_any(n, {"multi_tensor_apply", "adam"})) return KernelClass::kOptimizer;
  if (contains_any(n, {"flash", "fmha", "attention", "dot_do_o", "convert_dq"})) {
    return KernelClass::kFlashAttention;
  }
  if (contains_any(n, {"gemm", "cutlass", "sm80_xmma", "sm90_xmma", "xmma_", "nvjet", "cublas",
                       "triton_tem_"})) {
    return KernelClass::kGemm;
  }
  if (contains_any(n, {"elementwise",    "vectorized",  "reduce_kernel", "softmax",
                       "layer_norm",     "layernorm",   "rms",           "copy",
                       "fill",           "triton_poi_", "triton_red_",   "triton_per_",
                       "index",          "embedding",   "grad_weight",   "sum_and_scatter",
                       "radixsort",      "nll_loss",    "cross_entropy", "chunk_cat",
                       "cat_",           "gammabeta",   "devicescan",    "devicecompact",
                       "unique_by_key",  "partial_segment", "partials_per_segment"})) {
    return KernelClass::kElementwise;
  }
  return KernelClass::kOther;
}

KinetoTrace parse_kineto_trace(std::string_view text, const std::string& file) {
  const JsonValue top = sim::parse_json(text, file);
  return TraceReader(file).read(top);
}

KinetoTrace read_kineto_trace(const std::string& path) {
  const JsonValue top = sim::parse_json(sim::read_file_text_or_gunzip(path), path);
  return TraceReader(path).read(top);
}

}  // namespace clustersim::calibration
