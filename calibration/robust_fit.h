// Bounded, outlier-robust linear least squares (Eigen), the one solver behind
// every fit of calibration/: efficiency curves and collective latency and
// bandwidth are all written so that the relative error of a predicted time
// is linear in the unknowns (see compute_fit.h, collective_fit.h).
//
// Problem: minimise sum_i w_i (a_i . x - b_i)^2 subject to lower <= x <= upper,
// where the rows a_i, b_i are cases and w_i robust weights.
//
// Method:
//  * Identifiability: parameters the caller marks `fixed` keep their
//    fallback; the other columns are taken in order; a column that the kept
//    columns already span (relative residual of its projection below 1e-9,
//    after scaling every column to unit norm) is not fitted: its parameter
//    is fixed at its fallback value (the base profile's, or 0 for a term the
//    data cannot see) and reported as unidentified. Order the columns by
//    priority: the first of two collinear ones is kept.
//  * Bounds: the bounded problem is convex, so its optimum is the best
//    feasible solution among the active sets (each bounded parameter free,
//    at its lower or at its upper bound); with the few parameters of a
//    calibration fit (at most 8, checked) every active set is solved and the
//    cheapest feasible one is kept -- exact and deterministic.
//  * Robustness: iteratively reweighted least squares, first with Huber
//    weights (k = 1.345; convex, so it cannot be pulled into a poor local
//    minimum), then with Tukey's biweight (c = 4.685), which gives a case
//    whose residual exceeds c x scale weight 0: such outliers do not move the
//    fit at all. The scale is 1.4826 x the median absolute residual (MAD about
//    zero: the residuals are relative errors, centred on 0), floored at
//    `min_scale` (2%: the run-to-run noise of GPU timings) so that a
//    near-perfect fit does not call a few-percent miss an outlier. Weights
//    are never allowed to leave fewer inliers than free parameters; then the
//    last weights that did are kept.
//
// Units: whatever the caller's rows are in; for calibration's relative-error
// rows, residuals are relative errors (0.05 = 5%).
// Thread safety: pure functions.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

namespace clustersim::calibration {

struct LinearProblem {
  Eigen::MatrixXd design;          // rows: cases; columns: parameters
  Eigen::VectorXd target;          // one per case
  std::vector<std::string> names;  // one per parameter, for reports
  Eigen::VectorXd lower;           // bounds; -inf / +inf when unbounded
  Eigen::VectorXd upper;
  Eigen::VectorXd fallback;  // value of a parameter the data cannot identify
  // Parameters the caller knows the cases cannot see (e.g. a latency that is
  // under 1% of every measured time): fixed at their fallback, reported as
  // unidentified.
  std::vector<bool> fixed;

  // A problem of `rows` x `names.size()`, unbounded, fallbacks 0.
  LinearProblem(Eigen::Index rows, std::vector<std::string> parameter_names);
  Eigen::Index parameters() const { return design.cols(); }
};

struct RobustFitOptions {
  bool robust = true;       // false: plain bounded least squares (all weights 1)
  double min_scale = 0.02;  // floor of the residual scale (2% for relative errors)
  int max_iterations = 100;
};

enum class BoundHit { kNone, kLower, kUpper };

struct LinearFit {
  Eigen::VectorXd x;
  Eigen::VectorXd residuals;        // design * x - target
  Eigen::VectorXd weights;          // final robust weights in [0, 1]; 0: an outlier
  std::vector<BoundHit> bound_hit;  // per parameter
  std::vector<bool> unidentified;   // per parameter: fixed at its fallback
  double scale = 0;                 // the robust scale of the residuals
  int iterations = 0;

  int outliers() const;
  // sum of w_i r_i^2 (the weighted least-squares cost).
  double weighted_cost() const;
};

// Throws InvariantError when the problem is malformed (sizes disagree, more
// than 8 bounded parameters, a fallback outside its bounds) or empty.
LinearFit fit_linear(const LinearProblem& problem, const RobustFitOptions& options = {});

}  // namespace clustersim::calibration
