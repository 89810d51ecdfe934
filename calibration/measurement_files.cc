#include "calibration/measurement_files.h"

#include "calibration/measurement_csv.h"
#include "config/gzip_text.h"

namespace clustersim::calibration {

std::string_view measurement_kind_name(MeasurementKind kind) {
  switch (kind) {
    case MeasurementKind::kGemm:
      return "gemm";
    case MeasurementKind::kAttention:
      return "attention";
    case MeasurementKind::kCollective:
      return "collectives";
    case MeasurementKind::kKinetoTrace:
      return "kineto trace";
  }
  return "?";
}

namespace {

bool looks_like_json(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

template <class T>
void append(std::vector<T>& to, std::vector<T>&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

MeasurementSet read_measurement_files(const std::vector<std::string>& paths,
                                      std::string_view op_hint) {
  MeasurementSet set;
  sim::DiagnosticSink sink;
  for (const std::string& path : paths) {
    try {
      MeasurementFile file{path, MeasurementKind::kCollective, 0};
      const std::string text = sim::read_file_text_or_gunzip(path);
      if (looks_like_json(text)) {
        file.kind = MeasurementKind::kKinetoTrace;
        set.kineto_traces.push_back(path);
      } else if (looks_like_gemm_csv(text)) {
        file.kind = MeasurementKind::kGemm;
        std::vector<GemmMeasurement> rows = parse_gemm_csv(text, path);
        file.rows = static_cast<int>(rows.size());
        append(set.gemm, std::move(rows));
      } else if (looks_like_attention_csv(text)) {
        file.kind = MeasurementKind::kAttention;
        std::vector<AttentionMeasurement> rows = parse_attention_csv(text, path);
        file.rows = static_cast<int>(rows.size());
        append(set.attention, std::move(rows));
      } else {
        std::vector<CollectiveMeasurement> rows =
            parse_collective_measurements(text, path, op_hint);
        file.rows = static_cast<int>(rows.size());
        append(set.collectives, std::move(rows));
      }
      set.files.push_back(std::move(file));
    } catch (const sim::ConfigError& e) {
      for (const sim::Diagnostic& d : e.diagnostics()) sink.add(d.where, d.key_path, d.message);
    }
  }
  sink.throw_if_any();
  return set;
}

}  // namespace clustersim::calibration
