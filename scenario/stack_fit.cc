#include "scenario/stack_fit.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>

#include "config/config_error.h"
#include "scenario/stack_profile.h"
#include "sim/check.h"

namespace clustersim::cli {

namespace {

constexpr double kLowest = 0.2;
constexpr double kHighest = 2.0;
// Where every fit starts: the range stacks fall in, which brackets them.
constexpr double kStartPoints[] = {0.6, 1.0, 1.4};
// A solution within this of a simulated point is that point's (the stack
// file keeps three decimals).
constexpr double kTolerance = 5e-4;
// A cross-validation fold's fit settles for the interpolation once its
// solution is this close to a simulated point of every run: each curve is
// nearly a power law, so the interpolation over so short a stretch is off by
// far less than the fold's own spread (the run it predicts is simulated at
// the fold's efficiency exactly).
constexpr double kFoldTolerance = 0.02;
// Rounds of simulate-at-the-solution before the fit settles for the last.
constexpr int kMostRefinements = 6;

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 == 1 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// Each run's log(predicted / measured tokens/s) at the efficiencies
// simulated so far, by run id; between them, interpolated in log efficiency.
class Curves {
 public:
  explicit Curves(const StepDone& step_done) : step_done_(step_done) {}

  // Simulates the runs not yet simulated at `efficiency`, in parallel (each
  // step is independent; the results do not depend on the order).
  void simulate(const std::vector<TrainingRun>& runs, double efficiency) {
    std::vector<const TrainingRun*> todo;
    for (const TrainingRun& run : runs) {
      if (points_[run.id].contains(efficiency)) continue;
      scenario(run);  // loaded here, read by the threads below
      todo.push_back(&run);
    }
    const auto n = static_cast<int64_t>(todo.size());
    std::vector<double> predicted(todo.size());
    std::vector<std::exception_ptr> failed(todo.size());
    std::mutex lock;
    StepDone done;
    if (step_done_) {
      done = [&] {
        const std::lock_guard<std::mutex> guard(lock);
        step_done_();
      };
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<size_t>(i);
      try {
        const NetworkScenario& net = *scenarios_.at(todo[k]->id);
        predicted[k] = predict_scenario(net, efficiency, done).tokens_per_s_per_gpu;
      } catch (...) {
        failed[k] = std::current_exception();
      }
    }
    for (size_t k = 0; k < todo.size(); ++k) {
      if (failed[k]) std::rethrow_exception(failed[k]);
      points_[todo[k]->id][efficiency] = std::log(predicted[k] / todo[k]->tokens_per_s_per_gpu);
    }
  }

  bool has_near(const TrainingRun& run, double efficiency, double tolerance) const {
    const auto it = points_.find(run.id);
    if (it == points_.end()) return false;
    const auto above = it->second.lower_bound(efficiency - tolerance);
    return above != it->second.end() && above->first <= efficiency + tolerance;
  }

  double log_error(const TrainingRun& run, double efficiency) const {
    const std::map<double, double>& points = points_.at(run.id);
    CLUSTERSIM_CHECK(points.size() >= 2, "stack fit: run '" + run.id + "' has too few points");
    auto hi = points.lower_bound(efficiency);
    if (hi != points.end() && hi->first == efficiency) return hi->second;
    if (hi == points.begin()) ++hi;
    if (hi == points.end()) --hi;
    const auto lo = std::prev(hi);
    const double t = std::log(efficiency / lo->first) / std::log(hi->first / lo->first);
    return lo->second + t * (hi->second - lo->second);
  }

 private:
  const NetworkScenario& scenario(const TrainingRun& run) {
    std::unique_ptr<NetworkScenario>& net = scenarios_[run.id];
    if (!net) net = std::make_unique<NetworkScenario>(load_run_scenario(run));
    return *net;
  }

  StepDone step_done_;
  std::map<std::string, std::map<double, double>> points_;
  std::map<std::string, std::unique_ptr<NetworkScenario>> scenarios_;
};

double median_log_error(const Curves& curves, const std::vector<TrainingRun>& runs,
                        double efficiency) {
  std::vector<double> e;
  e.reserve(runs.size());
  for (const TrainingRun& run : runs) e.push_back(curves.log_error(run, efficiency));
  return median(e);
}

// The efficiency at which the interpolated median log error is zero, in
// [kLowest, kHighest] (a bound when the error keeps its sign there).
double solve(const Curves& curves, const std::vector<TrainingRun>& runs) {
  double lo = kLowest;
  double hi = kHighest;
  if (median_log_error(curves, runs, hi) <= 0) return hi;
  if (median_log_error(curves, runs, lo) >= 0) return lo;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (median_log_error(curves, runs, mid) > 0 ? hi : lo) = mid;
  }
  return 0.5 * (lo + hi);
}

EfficiencyFit fit_on(Curves& curves, const std::vector<TrainingRun>& runs,
                     double tolerance = kTolerance) {
  CLUSTERSIM_CHECK(!runs.empty(), "fit_stack_efficiency needs runs");
  for (const TrainingRun& run : runs) {
    CLUSTERSIM_CHECK(run.tokens_per_s_per_gpu > 0,
                     "fit_stack_efficiency: run '" + run.id + "' has no throughput yet");
  }
  for (const double e : kStartPoints) curves.simulate(runs, e);
  EfficiencyFit fit;
  for (const TrainingRun& run : runs) fit.fitted_to.push_back(run.id);
  double solution = solve(curves, runs);
  for (int round = 0; round < kMostRefinements; ++round) {
    const double at = std::round(solution * 1000.0) / 1000.0;
    const bool simulated = std::all_of(runs.begin(), runs.end(), [&](const TrainingRun& run) {
      return curves.has_near(run, at, tolerance);
    });
    if (simulated) break;
    curves.simulate(runs, at);
    solution = solve(curves, runs);
  }
  fit.stack_efficiency = std::round(solution * 1000.0) / 1000.0;
  return fit;
}

std::vector<std::optional<CrossValidated>> cross_validate_on(
    Curves& curves, const std::vector<TrainingRun>& runs,
    const std::vector<std::string>& stack_paths, int folds, const StepDone& step_done) {
  CLUSTERSIM_CHECK(folds >= 2 && stack_paths.size() == runs.size(),
                   "cross_validate_runs: " + std::to_string(folds) + " folds");
  std::vector<std::optional<CrossValidated>> out(runs.size());
  const auto fold_of = [folds](size_t i) {
    return static_cast<int>(i % static_cast<size_t>(folds));
  };
  for (int k = 0; k < folds; ++k) {
    std::map<std::string, std::vector<TrainingRun>> training;  // stack path -> runs
    for (size_t i = 0; i < runs.size(); ++i) {
      if (fold_of(i) != k && !stack_paths[i].empty()) training[stack_paths[i]].push_back(runs[i]);
    }
    std::map<std::string, double> efficiency;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (fold_of(i) != k) continue;
      const auto t = training.find(stack_paths[i]);
      if (t == training.end()) continue;
      if (!efficiency.contains(t->first)) {
        efficiency[t->first] = fit_on(curves, t->second, kFoldTolerance).stack_efficiency;
      }
      const double c = efficiency[t->first];
      out[i] = CrossValidated{
          predict_run(runs[i], c, step_done).tokens_per_s_per_gpu / runs[i].tokens_per_s_per_gpu -
              1,
          c};
    }
  }
  return out;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(a, ea);
  const auto cb = std::filesystem::weakly_canonical(b, eb);
  return !ea && !eb ? ca == cb : a == b;
}

}  // namespace

int64_t fit_steps_at_most(int64_t runs) {
  return runs * static_cast<int64_t>(std::size(kStartPoints) + kMostRefinements);
}

int64_t cross_validation_steps_at_most(const std::vector<std::string>& stack_paths, int folds) {
  if (folds < 2) return 0;
  // Per fold, a fit of each stack of its runs to the other folds' runs on
  // it, then a prediction of each of its runs that has such a fit.
  int64_t steps = 0;
  const auto fold_of = [folds](size_t i) {
    return static_cast<int>(i % static_cast<size_t>(folds));
  };
  for (int k = 0; k < folds; ++k) {
    std::map<std::string, int64_t> training;  // stack path -> runs
    for (size_t i = 0; i < stack_paths.size(); ++i) {
      if (fold_of(i) != k && !stack_paths[i].empty()) ++training[stack_paths[i]];
    }
    std::set<std::string> fitted;
    for (size_t i = 0; i < stack_paths.size(); ++i) {
      if (fold_of(i) != k) continue;
      const auto t = training.find(stack_paths[i]);
      if (t == training.end()) continue;
      if (fitted.insert(t->first).second) steps += fit_steps_at_most(t->second);
      ++steps;
    }
  }
  return steps;
}

int64_t stack_fit_steps_at_most(int64_t runs, int folds) {
  // The measured step times' throughput, the fit, the in-sample errors,
  // then the cross-validation (every run on the one stack).
  const int64_t used = std::min<int64_t>(folds, runs);
  const int64_t cross_validation =
      folds >= 2 && runs >= 2 ? fit_steps_at_most(runs) * (used - 1) + runs : 0;
  return runs + fit_steps_at_most(runs) + runs + cross_validation;
}

EfficiencyFit fit_stack_efficiency(const std::vector<TrainingRun>& runs,
                                   const StepDone& step_done) {
  Curves curves(step_done);
  return fit_on(curves, runs);
}

std::vector<std::optional<CrossValidated>> cross_validate_runs(
    const std::vector<TrainingRun>& runs, const std::vector<std::string>& stack_paths, int folds,
    const StepDone& step_done) {
  Curves curves(step_done);
  return cross_validate_on(curves, runs, stack_paths, folds, step_done);
}

StackFit fit_stack(const std::vector<std::string>& runs_files, const std::string& stack_path,
                   int folds, const StepDone& step_done) {
  CLUSTERSIM_CHECK(!runs_files.empty(), "fit_stack needs a runs file");
  StackFit out;
  std::vector<TrainingRun> mine;
  std::set<std::string> other_stacks;
  for (TrainingRun& run : read_training_runs(runs_files)) {
    const NetworkScenario net = load_run_scenario(run);
    const std::string used = stack_path_of(net.values, net.values.file());
    if (!used.empty() && same_file(used, stack_path)) {
      mine.push_back(std::move(run));
    } else {
      ++out.other_runs;
      other_stacks.insert(used.empty() ? "no stack" : used);
    }
  }
  if (mine.empty()) {
    std::string used;
    for (const std::string& p : other_stacks) used += (used.empty() ? "" : ", ") + p;
    sim::DiagnosticSink sink;
    sink.add(sim::SourceLocation{runs_files.front(), 0, 0}, "",
             "expected runs whose scenario names the stack " + stack_path +
                 " (the --stack), found none of " + std::to_string(out.other_runs) + " (they use " +
                 used + ")");
    sink.throw_if_any();
  }
  for (TrainingRun& run : mine) {
    if (run.step_time_s) set_measured_throughput(run, predict_run(run, std::nullopt, step_done));
  }
  Curves curves(step_done);
  out.fit = fit_on(curves, mine);
  for (const TrainingRun& run : mine) {
    out.in_sample.push_back(
        predict_run(run, out.fit.stack_efficiency, step_done).tokens_per_s_per_gpu /
            run.tokens_per_s_per_gpu -
        1);
  }
  if (folds >= 2 && mine.size() >= 2) {
    const std::vector<std::string> paths(mine.size(), stack_path);
    for (const auto& cv : cross_validate_on(curves, mine, paths, folds, step_done)) {
      if (cv) out.cross_validated.push_back(cv->error);
    }
  }
  return out;
}

}  // namespace clustersim::cli
