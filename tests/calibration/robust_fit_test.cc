#include "calibration/robust_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/check.h"

namespace clustersim::calibration {
namespace {

// Relative-error rows of t = a + b * s: residual (a + b s) / t - 1 is linear
// in (a, b) with row [1 / t, s / t] and target 1.
LinearProblem line_problem(const std::vector<double>& s, const std::vector<double>& t) {
  LinearProblem p(static_cast<Eigen::Index>(s.size()), {"a", "b"});
  for (size_t i = 0; i < s.size(); ++i) {
    const Eigen::Index r = static_cast<Eigen::Index>(i);
    p.design(r, 0) = 1 / t[i];
    p.design(r, 1) = s[i] / t[i];
    p.target[r] = 1;
  }
  return p;
}

TEST(RobustFit, RecoversExactParameters) {
  std::vector<double> s, t;
  for (int i = 0; i < 12; ++i) {
    s.push_back(std::pow(2.0, i));
    t.push_back(20.0 + 0.5 * s.back());
  }
  const LinearFit fit = fit_linear(line_problem(s, t));
  EXPECT_NEAR(fit.x[0], 20.0, 1e-9);
  EXPECT_NEAR(fit.x[1], 0.5, 1e-12);
  EXPECT_EQ(fit.outliers(), 0);
  EXPECT_LT(fit.residuals.cwiseAbs().maxCoeff(), 1e-12);
}

TEST(RobustFit, AnOutlierDoesNotMoveTheFit) {
  std::vector<double> s, t;
  for (int i = 0; i < 12; ++i) {
    s.push_back(std::pow(2.0, i));
    // +-0.5% deterministic noise
    t.push_back((20.0 + 0.5 * s.back()) * (1 + 0.005 * ((i % 3) - 1)));
  }
  t[7] *= 3;  // one case three times slower (a noisy node)
  const LinearFit plain = fit_linear(line_problem(s, t), {.robust = false});
  const LinearFit robust = fit_linear(line_problem(s, t));
  // Least squares is pulled by several percent; the robust fit stays within
  // the noise and flags exactly that case.
  EXPECT_GT(std::fabs(plain.x[1] / 0.5 - 1), 0.03);
  EXPECT_NEAR(robust.x[0] / 20.0, 1.0, 0.006);
  EXPECT_NEAR(robust.x[1] / 0.5, 1.0, 0.006);
  EXPECT_EQ(robust.outliers(), 1);
  EXPECT_EQ(robust.weights[7], 0.0);

  // Without the outlier: the same answer to 1e-9.
  std::vector<double> s2 = s, t2 = t;
  s2.erase(s2.begin() + 7);
  t2.erase(t2.begin() + 7);
  const LinearFit clean = fit_linear(line_problem(s2, t2));
  EXPECT_NEAR(robust.x[0], clean.x[0], 1e-9 * clean.x[0]);
  EXPECT_NEAR(robust.x[1], clean.x[1], 1e-9 * clean.x[1]);
}

TEST(RobustFit, BoundsHoldAndAreReported) {
  // t = 10 + s exactly, but b is bounded above by 0.8 (a link-rate bound):
  // the fit sits on the bound and a absorbs what it can.
  std::vector<double> s, t;
  for (int i = 0; i < 8; ++i) {
    s.push_back(100.0 * (i + 1));
    t.push_back(10.0 + s.back());
  }
  LinearProblem p = line_problem(s, t);
  p.upper[1] = 0.8;
  p.lower[0] = 0;
  const LinearFit fit = fit_linear(p, {.robust = false});
  EXPECT_DOUBLE_EQ(fit.x[1], 0.8);
  EXPECT_EQ(fit.bound_hit[1], BoundHit::kUpper);
  EXPECT_EQ(fit.bound_hit[0], BoundHit::kNone);
  EXPECT_GT(fit.x[0], 10.0);  // compensating latency

  // Bounded below at 0: a negative intercept is refused.
  std::vector<double> t2;
  for (double v : s) t2.push_back(-5.0 + v + 0.0 * v);
  LinearProblem q = line_problem(s, t2);
  q.lower[0] = 0;
  const LinearFit low = fit_linear(q, {.robust = false});
  EXPECT_EQ(low.x[0], 0.0);
  EXPECT_EQ(low.bound_hit[0], BoundHit::kLower);
}

TEST(RobustFit, CollinearColumnTakesItsFallback) {
  // Third column equals the first: not identifiable, fixed at its fallback.
  std::vector<double> s, t;
  for (int i = 0; i < 6; ++i) {
    s.push_back(1.0 + i);
    t.push_back(3.0 + 2.0 * s.back());
  }
  const LinearProblem base = line_problem(s, t);
  LinearProblem p(base.design.rows(), {"a", "b", "a_again"});
  p.design.leftCols(2) = base.design;
  p.design.col(2) = base.design.col(0);
  p.target = base.target;
  p.fallback[2] = 0;
  const LinearFit fit = fit_linear(p);
  EXPECT_FALSE(fit.unidentified[0]);
  EXPECT_FALSE(fit.unidentified[1]);
  EXPECT_TRUE(fit.unidentified[2]);
  EXPECT_NEAR(fit.x[0], 3.0, 1e-9);
  EXPECT_NEAR(fit.x[1], 2.0, 1e-9);
  EXPECT_EQ(fit.x[2], 0.0);
}

TEST(RobustFit, MalformedProblemsAreInvariantErrors) {
  LinearProblem p(3, {"a"});
  p.fallback[0] = 2;
  p.upper[0] = 1;
  EXPECT_THROW(fit_linear(p), sim::InvariantError);
  LinearProblem empty(0, {"a"});
  EXPECT_THROW(fit_linear(empty), sim::InvariantError);
}

}  // namespace
}  // namespace clustersim::calibration
