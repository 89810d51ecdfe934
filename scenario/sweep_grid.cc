#include "scenario/sweep_grid.h"

#include <algorithm>
#include <set>

#include "config/text_fields.h"

namespace clustersim::cli {

namespace {

// A grid this large is a typo (a range without its step), not a sweep.
constexpr size_t kMaxValuesPerAxis = 100000;

const char* const kItemsExpected =
    "values such as '8,16,32', a range '8..1024:x2' (geometric) or '1..9:+2' (arithmetic), or "
    "'divisors'";

sim::Parsed<int64_t> range_number(std::string_view text, std::string_view item,
                                  std::string_view what) {
  const std::optional<int64_t> n = sim::parse_number<int64_t>(sim::trim_blanks(text));
  if (!n) {
    return sim::Parsed<int64_t>::fail("expected an integer " + std::string(what) + " in range '" +
                                      std::string(item) + "' (A..B:xF or A..B:+S), found '" +
                                      std::string(text) + "'");
  }
  return sim::Parsed<int64_t>::ok(*n);
}

// Appends the values of one item (a literal or a range) to `out`.
std::string expand_item(std::string_view item, std::vector<std::string>& out) {
  const size_t dots = item.find("..");
  if (dots == std::string_view::npos) {
    out.emplace_back(item);
    return "";
  }
  const size_t colon = item.find(':', dots);
  if (colon == std::string_view::npos || colon + 1 >= item.size()) {
    return "expected a step after the range '" + std::string(item) +
           "': ':xF' (geometric) or ':+S' (arithmetic), found none";
  }
  const auto from = range_number(item.substr(0, dots), item, "start");
  if (!from) return from.error;
  const auto to = range_number(item.substr(dots + 2, colon - dots - 2), item, "end");
  if (!to) return to.error;
  const char kind = item[colon + 1];
  if (kind != 'x' && kind != '+') {
    return "expected ':x' (geometric) or ':+' (arithmetic) after the range in '" +
           std::string(item) + "', found ':" + std::string(item.substr(colon + 1)) + "'";
  }
  const auto step = range_number(item.substr(colon + 2), item, "step");
  if (!step) return step.error;
  if (*to < *from) {
    return "expected a range whose start is at most its end, found '" + std::string(item) + "'";
  }
  if (kind == 'x' && (*step < 2 || *from < 1)) {
    return "expected a geometric range with start >= 1 and factor >= 2, found '" +
           std::string(item) + "'";
  }
  if (kind == '+' && *step < 1) {
    return "expected an arithmetic range with step >= 1, found '" + std::string(item) + "'";
  }
  const size_t before = out.size();
  for (int64_t v = *from; v <= *to;) {
    if (out.size() - before >= kMaxValuesPerAxis) {
      return "expected at most " + std::to_string(kMaxValuesPerAxis) + " values from range '" +
             std::string(item) + "', found more";
    }
    out.push_back(std::to_string(v));
    // Stop before overflowing int64.
    if (kind == 'x') {
      if (v > *to / *step) break;
      v *= *step;
    } else {
      if (v > *to - *step) break;
      v += *step;
    }
  }
  return "";
}

}  // namespace

sim::Parsed<SweepAxis> parse_sweep_axis(std::string_view text) {
  const std::string_view trimmed = sim::trim_blanks(text);
  const size_t eq = trimmed.find('=');
  if (eq == std::string_view::npos || sim::trim_blanks(trimmed.substr(0, eq)).empty()) {
    return sim::Parsed<SweepAxis>::fail(
        "expected KEY=V1,V2,... (e.g. workload.parallelism.shard_group_size=8..64:x2), found '" +
        std::string(text) + "'");
  }
  SweepAxis axis;
  axis.key = std::string(sim::trim_blanks(trimmed.substr(0, eq)));
  const std::string_view items_text = sim::trim_blanks(trimmed.substr(eq + 1));
  if (items_text.empty()) {
    return sim::Parsed<SweepAxis>::fail("expected " + std::string(kItemsExpected) + " after '" +
                                        axis.key + "=', found nothing");
  }
  for (const sim::TextField& field : sim::split_commas(items_text)) {
    if (field.text.empty()) {
      return sim::Parsed<SweepAxis>::fail("expected " + std::string(kItemsExpected) + " for " +
                                          axis.key + ", found an empty item in '" +
                                          std::string(items_text) + "'");
    }
    if (field.text == "divisors") {
      axis.divisors = true;
      continue;
    }
    const std::string problem = expand_item(field.text, axis.values);
    if (!problem.empty()) return sim::Parsed<SweepAxis>::fail(axis.key + ": " + problem);
  }
  if (axis.divisors && !axis.values.empty()) {
    return sim::Parsed<SweepAxis>::fail("expected 'divisors' alone for " + axis.key +
                                        " (its values depend on each point), found '" +
                                        std::string(items_text) + "'");
  }
  if (axis.values.size() > kMaxValuesPerAxis) {
    return sim::Parsed<SweepAxis>::fail("expected at most " + std::to_string(kMaxValuesPerAxis) +
                                        " values for " + axis.key + ", found " +
                                        std::to_string(axis.values.size()));
  }
  return sim::Parsed<SweepAxis>::ok(std::move(axis));
}

sim::Parsed<std::vector<SweepAxis>> parse_sweep_axes(std::string_view text) {
  std::vector<SweepAxis> axes;
  std::set<std::string, std::less<>> keys;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view piece = text.substr(start, end - start);
    start = end + 1;
    if (sim::trim_blanks(piece).empty()) continue;
    sim::Parsed<SweepAxis> axis = parse_sweep_axis(piece);
    if (!axis) return sim::Parsed<std::vector<SweepAxis>>::fail(axis.error);
    if (!keys.insert(axis->key).second) {
      return sim::Parsed<std::vector<SweepAxis>>::fail("expected each key once, found " +
                                                       axis->key + " twice");
    }
    axes.push_back(std::move(*axis.value));
  }
  return sim::Parsed<std::vector<SweepAxis>>::ok(std::move(axes));
}

std::vector<int64_t> divisors_of(int64_t n) {
  std::vector<int64_t> low, high;
  for (int64_t d = 1; d <= n / d; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

std::vector<SweepPoint> expand_sweep_grid(const std::vector<SweepAxis>& axes,
                                          const DpSizeOf& dp_size_of) {
  // Every combination of the fixed axes (odometer, first axis slowest).
  std::vector<size_t> fixed;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (!axes[a].divisors) fixed.push_back(a);
  }
  struct Indexed {
    std::vector<size_t> index;  // per axis: the value's index; a divisor's value
    SweepPoint point;
  };
  std::vector<Indexed> all;
  std::vector<size_t> odometer(fixed.size(), 0);
  for (;;) {
    bool empty_axis = false;
    std::vector<std::string> overrides;
    for (size_t f = 0; f < fixed.size(); ++f) {
      const SweepAxis& axis = axes[fixed[f]];
      if (axis.values.empty()) empty_axis = true;
      if (!empty_axis) overrides.push_back(axis.key + "=" + axis.values[odometer[f]]);
    }
    if (empty_axis) break;
    Indexed base;
    base.index.assign(axes.size(), 0);
    base.point.values.assign(axes.size(), "");
    for (size_t f = 0; f < fixed.size(); ++f) {
      base.index[fixed[f]] = odometer[f];
      base.point.values[fixed[f]] = axes[fixed[f]].values[odometer[f]];
    }
    if (fixed.size() == axes.size()) {
      all.push_back(std::move(base));
    } else {
      const DpSize dp = dp_size_of(overrides);
      if (dp.dp <= 0) {
        base.point.invalid_reason =
            dp.error.empty() ? "no data-parallel size for 'divisors'" : dp.error;
        all.push_back(std::move(base));
      } else {
        // Every combination of the divisors axes (all with the same list).
        const std::vector<int64_t> d = divisors_of(dp.dp);
        std::vector<size_t> divisor_axes;
        for (size_t a = 0; a < axes.size(); ++a) {
          if (axes[a].divisors) divisor_axes.push_back(a);
        }
        std::vector<size_t> inner(divisor_axes.size(), 0);
        for (;;) {
          Indexed p = base;
          for (size_t k = 0; k < divisor_axes.size(); ++k) {
            p.index[divisor_axes[k]] = static_cast<size_t>(d[inner[k]]);
            p.point.values[divisor_axes[k]] = std::to_string(d[inner[k]]);
          }
          all.push_back(std::move(p));
          size_t k = inner.size();
          while (k > 0 && ++inner[k - 1] == d.size()) inner[--k] = 0;
          if (k == 0) break;
        }
      }
    }
    size_t f = odometer.size();
    while (f > 0 && ++odometer[f - 1] == axes[fixed[f - 1]].values.size()) odometer[--f] = 0;
    if (f == 0) break;
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Indexed& a, const Indexed& b) { return a.index < b.index; });
  std::vector<SweepPoint> points;
  points.reserve(all.size());
  for (Indexed& p : all) points.push_back(std::move(p.point));
  return points;
}

std::vector<std::string> point_overrides(const std::vector<SweepAxis>& axes,
                                         const SweepPoint& point) {
  std::vector<std::string> out;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (!point.values[a].empty()) out.push_back(axes[a].key + "=" + point.values[a]);
  }
  return out;
}

void add_sweep_keys(sim::ConfigSchema& schema) {
  schema.add_section("sweep", "The grid of `clustersim sweep` (ignored by the other commands).")
      .unknown_key_hint =
      "the axes are one string: `axes: workload.local_batch=1,2; workload.seq_len=4096,8192`";
  schema
      .add_key("sweep.axes", sim::ValueType::kString,
               "Axes of the sweep, separated by ';': KEY=ITEM,ITEM,... where KEY is any scenario "
               "key and an ITEM is a value, an integer range A..B:xF (geometric, e.g. 8..1024:x2) "
               "or A..B:+S (arithmetic), or `divisors` alone (every divisor of the point's "
               "data-parallel size, world GPUs / tp, computed per point). Points are the "
               "cartesian product, first axis slowest; `--grid KEY=...` replaces the axis of "
               "the same key. With HYBRID_SHARD, sweeping one of shard_group_size / "
               "replica_group_size derives the other (the file's value of the other is "
               "dropped).")
      .validated_by(
          [](const sim::ConfigValue& value) -> std::string {
            const auto parsed = parse_sweep_axes(std::get<std::string>(value));
            return parsed ? "" : "axes as KEY=ITEM,...; KEY=... (" + parsed.error + ")";
          },
          "KEY=ITEM,...; KEY=...");
}

}  // namespace clustersim::cli
