#include "cli/sweep_report.h"

#include <algorithm>

#include "cli/table_text.h"
#include "config/text_fields.h"
#include "sweep/sweep_rows.h"

namespace clustersim::cli {

namespace {

constexpr size_t kListed = 10;  // points listed with their reason, per status

// The points of one unsimulated status with their reasons.
struct Unsimulated {
  size_t count = 0;
  std::string listed;

  void add(const std::vector<std::string>& overrides, const std::string& reason) {
    if (++count <= kListed) listed += "  " + join(overrides, " ") + ": " + reason + "\n";
  }
  std::string section(const char* title) const {
    if (count == 0) return "";
    std::string text = std::string(title) + ":\n" + listed;
    if (count > kListed) text += "  ... and " + std::to_string(count - kListed) + " more\n";
    return text;
  }
};

}  // namespace

std::string sweep_report(const SweepReportInputs& in) {
  size_t ok = 0, oom = 0;
  Unsimulated skipped, failed;
  const size_t k = in.axes.size();
  for (size_t i = 0; i < in.points.size(); ++i) {
    const std::vector<std::string> fields = csv_split(in.rows[i]);
    const std::string& status = fields[k + kStatus];
    if (status == "ok") ++ok;
    if (status == "out_of_memory") ++oom;
    if (status == "skipped")
      skipped.add(point_overrides(in.axes, in.points[i]), fields[k + kReason]);
    if (status == "failed") failed.add(point_overrides(in.axes, in.points[i]), fields[k + kReason]);
  }
  std::string report = "# clustersim sweep: " + in.scenario_path + "\n";
  report += "points: " + std::to_string(in.points.size()) + " (" + std::to_string(ok) + " ok, " +
            std::to_string(oom) + " out of memory, " + std::to_string(skipped.count) + " skipped";
  // Only a bug fails a point: the usual report does not mention the status.
  if (failed.count > 0) report += ", " + std::to_string(failed.count) + " failed";
  if (in.resumed > 0) {
    report += "; " + std::to_string(in.resumed) + " resumed from " + in.journal_path;
  }
  report += ")\n";
  report += skipped.section("skipped");
  report += failed.section("failed");
  report += in.campaign ? "\nbest by tokens/s per GPU x ETTR (fitting in memory first):\n"
                        : "\nbest by tokens/s per GPU (fitting in memory first):\n";
  report += ranked_table(in.axes, in.points, in.rows, in.top, in.campaign);
  return report;
}

std::string ranked_table(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                         const std::vector<std::string>& rows, size_t top, bool campaign) {
  struct Ranked {
    size_t index;
    std::vector<std::string> fields;
    bool fits;
    double score;
  };
  const size_t k = axes.size();
  std::vector<Ranked> ranked;
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> fields = csv_split(rows[i]);
    if (!simulated_status(fields[k + kStatus])) continue;
    double score = sim::parse_number<double>(fields[k + kTokens]).value_or(0);
    if (campaign) score *= sim::parse_number<double>(fields[k + kEttr]).value_or(0);
    const bool fits = fields[k + kFits] == "true";
    ranked.push_back(Ranked{i, std::move(fields), fits, score});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.fits != b.fits) return a.fits;
    return a.score > b.score;
  });
  if (ranked.size() > top) ranked.resize(top);
  if (ranked.empty()) return "no point could be simulated\n";

  std::vector<std::string> headings = {"#"};
  for (const SweepAxis& axis : axes)
    headings.emplace_back(axis.key.substr(axis.key.rfind('.') + 1));
  for (const char* h : {"step s", "tokens/s/GPU", "MFU", "peak GiB", "fits"}) headings.push_back(h);
  // Tokens per joule where some point's profile gives power.
  bool energy = false;
  // A row written before the energy columns (a resumed journal) has none.
  const auto energy_of = [k](const std::vector<std::string>& f, size_t column) {
    return k + column < f.size() ? f[k + column] : std::string();
  };
  for (const Ranked& r : ranked) {
    energy = energy || !energy_of(r.fields, kTokensPerJouleGpu).empty() ||
             !energy_of(r.fields, kTokensPerJouleSystem).empty();
  }
  if (energy) {
    for (const char* h : {"tok/J GPU", "tok/J system"}) headings.push_back(h);
  }
  if (campaign) {
    for (const char* h : {"ETTR", "x ETTR", "train days"}) headings.push_back(h);
  }
  std::vector<std::vector<std::string>> cells;
  for (size_t r = 0; r < ranked.size(); ++r) {
    const std::vector<std::string>& f = ranked[r].fields;
    std::vector<std::string> line = {std::to_string(r + 1)};
    for (size_t a = 0; a < k; ++a) line.push_back(f[a]);
    const auto num = [](const std::string& t) { return sim::parse_number<double>(t).value_or(0); };
    line.push_back(fixed(num(f[k + kStepTime]), 4));
    line.push_back(fixed(num(f[k + kTokens]), 1));
    line.push_back(fixed(100 * num(f[k + kMfu]), 1) + "%");
    line.push_back(fixed(num(f[k + kPeak]) / (1024.0 * 1024.0 * 1024.0), 2));
    line.push_back(ranked[r].fits ? "yes" : "no");
    if (energy) {
      for (const size_t column : {kTokensPerJouleGpu, kTokensPerJouleSystem}) {
        const std::string value = energy_of(f, column);
        line.push_back(value.empty() ? "-" : fixed(num(value), 2));
      }
    }
    if (campaign) {
      line.push_back(fixed(100 * num(f[k + kEttr]), 2) + "%");
      line.push_back(fixed(ranked[r].score, 1));
      line.push_back(f[k + kTimeToTrain].empty() ? "-" : fixed(num(f[k + kTimeToTrain]), 2));
    }
    cells.push_back(std::move(line));
  }
  std::vector<size_t> width(headings.size());
  for (size_t c = 0; c < headings.size(); ++c) {
    width[c] = headings[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  const auto format = [&width](const std::vector<std::string>& line) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c) text += pad(line[c], width[c] + (c == 0 ? 0 : 2));
    return text + "\n";
  };
  std::string text = format(headings);
  for (const auto& line : cells) text += format(line);
  return text;
}

}  // namespace clustersim::cli
