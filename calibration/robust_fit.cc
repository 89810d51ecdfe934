#include "calibration/robust_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/check.h"

namespace clustersim::calibration {

namespace {

constexpr double kHuberK = 1.345;
constexpr double kTukeyC = 4.685;
constexpr double kMadToSigma = 1.4826;
constexpr int kMaxBoundedParameters = 8;

enum class State { kFree, kLower, kUpper };

double median_abs(const Eigen::VectorXd& r) {
  std::vector<double> a(static_cast<size_t>(r.size()));
  for (Eigen::Index i = 0; i < r.size(); ++i) a[static_cast<size_t>(i)] = std::fabs(r[i]);
  std::sort(a.begin(), a.end());
  const size_t n = a.size();
  return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

// Fixed columns, and those the earlier free ones span (Gram-Schmidt on
// unit-norm columns).
std::vector<bool> unidentified_columns(const Eigen::MatrixXd& a, const std::vector<bool>& fixed) {
  std::vector<bool> out = fixed;
  std::vector<Eigen::VectorXd> basis;
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    if (out[static_cast<size_t>(j)]) continue;
    const double norm = a.col(j).norm();
    if (!(norm > 0) || !std::isfinite(norm)) {
      out[static_cast<size_t>(j)] = true;
      continue;
    }
    Eigen::VectorXd v = a.col(j) / norm;
    for (int pass = 0; pass < 2; ++pass) {  // twice: classical Gram-Schmidt loses orthogonality
      for (const Eigen::VectorXd& q : basis) v -= q.dot(v) * q;
    }
    const double left = v.norm();
    if (left < 1e-9) {
      out[static_cast<size_t>(j)] = true;
    } else {
      basis.push_back(v / left);
    }
  }
  return out;
}

struct Solution {
  Eigen::VectorXd x;
  double cost = std::numeric_limits<double>::infinity();
  std::vector<State> states;
};

// The bounded weighted least-squares optimum over every active set.
Solution solve_bounded(const LinearProblem& p, const std::vector<bool>& unidentified,
                       const Eigen::VectorXd& weights) {
  const Eigen::Index n = p.parameters();
  const Eigen::VectorXd sqrt_w = weights.array().sqrt();
  const Eigen::MatrixXd aw = sqrt_w.asDiagonal() * p.design;
  const Eigen::VectorXd bw = sqrt_w.cwiseProduct(p.target);

  std::vector<Eigen::Index> bounded;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (unidentified[static_cast<size_t>(j)]) continue;
    if (std::isfinite(p.lower[j]) || std::isfinite(p.upper[j])) bounded.push_back(j);
  }
  CLUSTERSIM_CHECK(static_cast<int>(bounded.size()) <= kMaxBoundedParameters,
                   "fit_linear: at most 8 bounded parameters");

  Solution best;
  std::vector<State> states(static_cast<size_t>(n), State::kFree);
  size_t combos = 1;
  for (size_t i = 0; i < bounded.size(); ++i) combos *= 3;
  for (size_t combo = 0; combo < combos; ++combo) {
    size_t code = combo;
    bool possible = true;
    for (Eigen::Index j : bounded) {
      const State s = static_cast<State>(code % 3);
      code /= 3;
      if ((s == State::kLower && !std::isfinite(p.lower[j])) ||
          (s == State::kUpper && !std::isfinite(p.upper[j]))) {
        possible = false;
      }
      states[static_cast<size_t>(j)] = s;
    }
    if (!possible) continue;

    Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
    std::vector<Eigen::Index> free;
    for (Eigen::Index j = 0; j < n; ++j) {
      const size_t k = static_cast<size_t>(j);
      if (unidentified[k]) {
        x[j] = p.fallback[j];
      } else if (states[k] == State::kLower) {
        x[j] = p.lower[j];
      } else if (states[k] == State::kUpper) {
        x[j] = p.upper[j];
      } else {
        free.push_back(j);
      }
    }
    Eigen::VectorXd rhs = bw;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (x[j] != 0) rhs -= aw.col(j) * x[j];
    }
    if (!free.empty()) {
      Eigen::MatrixXd sub(aw.rows(), static_cast<Eigen::Index>(free.size()));
      Eigen::VectorXd norms(static_cast<Eigen::Index>(free.size()));
      for (size_t f = 0; f < free.size(); ++f) {
        const Eigen::Index col = static_cast<Eigen::Index>(f);
        const double norm = aw.col(free[f]).norm();
        norms[col] = norm > 0 ? norm : 1.0;
        sub.col(col) = aw.col(free[f]) / norms[col];
      }
      const Eigen::VectorXd z = sub.colPivHouseholderQr().solve(rhs);
      bool feasible = true;
      for (size_t f = 0; f < free.size(); ++f) {
        const Eigen::Index j = free[f];
        const double v = z[static_cast<Eigen::Index>(f)] / norms[static_cast<Eigen::Index>(f)];
        const double slack = 1e-12 * std::max(1.0, std::fabs(v));
        if (!std::isfinite(v) || v < p.lower[j] - slack || v > p.upper[j] + slack) {
          feasible = false;
        }
        x[j] = std::clamp(v, p.lower[j], p.upper[j]);
      }
      if (!feasible) continue;
    }
    const double cost = (aw * x - bw).squaredNorm();
    if (cost < best.cost * (1 - 1e-12)) {
      best.x = x;
      best.cost = cost;
      best.states = states;
    }
  }
  CLUSTERSIM_CHECK(std::isfinite(best.cost), "fit_linear: a feasible active set exists");
  return best;
}

bool converged(const Eigen::VectorXd& before, const Eigen::VectorXd& after) {
  for (Eigen::Index j = 0; j < before.size(); ++j) {
    if (std::fabs(after[j] - before[j]) > 1e-10 * std::max(1e-30, std::fabs(after[j]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

LinearProblem::LinearProblem(Eigen::Index rows, std::vector<std::string> parameter_names)
    : design(Eigen::MatrixXd::Zero(rows, static_cast<Eigen::Index>(parameter_names.size()))),
      target(Eigen::VectorXd::Zero(rows)),
      names(std::move(parameter_names)),
      lower(Eigen::VectorXd::Constant(static_cast<Eigen::Index>(names.size()),
                                      -std::numeric_limits<double>::infinity())),
      upper(Eigen::VectorXd::Constant(static_cast<Eigen::Index>(names.size()),
                                      std::numeric_limits<double>::infinity())),
      fallback(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(names.size()))),
      fixed(names.size(), false) {}

int LinearFit::outliers() const {
  int n = 0;
  for (Eigen::Index i = 0; i < weights.size(); ++i) n += weights[i] == 0 ? 1 : 0;
  return n;
}

double LinearFit::weighted_cost() const {
  return (weights.array() * residuals.array().square()).sum();
}

LinearFit fit_linear(const LinearProblem& p, const RobustFitOptions& options) {
  const Eigen::Index n = p.parameters();
  const Eigen::Index m = p.design.rows();
  CLUSTERSIM_CHECK(m > 0 && n > 0, "fit_linear: at least one case and one parameter");
  CLUSTERSIM_CHECK(p.target.size() == m && static_cast<Eigen::Index>(p.names.size()) == n &&
                       p.lower.size() == n && p.upper.size() == n && p.fallback.size() == n &&
                       static_cast<Eigen::Index>(p.fixed.size()) == n,
                   "fit_linear: sizes agree");
  for (Eigen::Index j = 0; j < n; ++j) {
    CLUSTERSIM_CHECK(
        p.lower[j] <= p.fallback[j] && p.fallback[j] <= p.upper[j],
        "fit_linear: fallback of " + p.names[static_cast<size_t>(j)] + " within its bounds");
  }

  LinearFit fit;
  fit.unidentified = unidentified_columns(p.design, p.fixed);
  const int free_parameters =
      static_cast<int>(std::count(fit.unidentified.begin(), fit.unidentified.end(), false));
  fit.weights = Eigen::VectorXd::Ones(m);
  Solution solution = solve_bounded(p, fit.unidentified, fit.weights);
  fit.residuals = p.design * solution.x - p.target;
  fit.scale = std::max(kMadToSigma * median_abs(fit.residuals), options.min_scale);

  if (options.robust) {
    // Phase 1: Huber, scale re-estimated each round. Phase 2: Tukey with the
    // scale phase 1 ended with (an MM-estimate).
    for (int phase = 0; phase < 2; ++phase) {
      for (int it = 0; it < options.max_iterations; ++it) {
        if (phase == 0) {
          fit.scale = std::max(kMadToSigma * median_abs(fit.residuals), options.min_scale);
        }
        Eigen::VectorXd w(m);
        int inliers = 0;
        for (Eigen::Index i = 0; i < m; ++i) {
          const double u = std::fabs(fit.residuals[i]) / fit.scale;
          if (phase == 0) {
            w[i] = u <= kHuberK ? 1.0 : kHuberK / u;
          } else {
            const double t = u / kTukeyC;
            w[i] = t < 1 ? (1 - t * t) * (1 - t * t) : 0.0;
          }
          inliers += w[i] > 0 ? 1 : 0;
        }
        if (inliers < free_parameters) break;
        Solution next = solve_bounded(p, fit.unidentified, w);
        ++fit.iterations;
        const bool done = converged(solution.x, next.x);
        solution = std::move(next);
        fit.weights = w;
        fit.residuals = p.design * solution.x - p.target;
        if (done) break;
      }
    }
  }
  fit.x = solution.x;
  fit.bound_hit.assign(static_cast<size_t>(n), BoundHit::kNone);
  for (Eigen::Index j = 0; j < n; ++j) {
    const size_t k = static_cast<size_t>(j);
    if (fit.unidentified[k]) continue;
    if (solution.states[k] == State::kLower) fit.bound_hit[k] = BoundHit::kLower;
    if (solution.states[k] == State::kUpper) fit.bound_hit[k] = BoundHit::kUpper;
  }
  return fit;
}

}  // namespace clustersim::calibration
