#include "failures/checkpoint_interval.h"

#include <cmath>
#include <string>

#include "sim/check.h"

namespace clustersim::failures {

namespace {

double seconds(sim::SimTime t) { return t.to_seconds(); }

void check_mtbf_and_save(sim::SimTime save, sim::SimTime mtbf) {
  CLUSTERSIM_CHECK(mtbf > sim::SimTime::zero(),
                   "checkpoint interval needs mtbf > 0, found " + std::to_string(mtbf.count_ns()));
  CLUSTERSIM_CHECK(save >= sim::SimTime::zero(),
                   "checkpoint interval needs save >= 0, found " + std::to_string(save.count_ns()));
}

}  // namespace

sim::SimTime young_interval(sim::SimTime save, sim::SimTime mtbf) {
  check_mtbf_and_save(save, mtbf);
  return sim::SimTime::from_seconds_rounded(std::sqrt(2.0 * seconds(save) * seconds(mtbf)));
}

sim::SimTime daly_interval(sim::SimTime save, sim::SimTime mtbf) {
  check_mtbf_and_save(save, mtbf);
  const double delta = seconds(save);
  const double m = seconds(mtbf);
  if (delta >= 2.0 * m) return mtbf;
  const double x = delta / (2.0 * m);
  const double tau = std::sqrt(2.0 * delta * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta;
  return sim::SimTime::from_seconds_rounded(tau);
}

sim::SimTime optimal_interval(sim::SimTime save, sim::SimTime mtbf) {
  check_mtbf_and_save(save, mtbf);
  const double delta = seconds(save);
  const double m = seconds(mtbf);
  // d/dtau [tau / (exp((tau + delta)/M) - 1)] has the sign of
  // f(tau) = (1 - tau/M) exp((tau + delta)/M) - 1, which falls strictly from
  // exp(delta/M) - 1 >= 0 at tau = 0 to -1 at tau = M.
  auto f = [&](double tau) { return (1.0 - tau / m) * std::exp((tau + delta) / m) - 1.0; };
  double lo = 0.0;
  double hi = m;
  if (f(lo) <= 0.0) return sim::SimTime::zero();
  for (int i = 0; i < 200 && hi - lo > 1e-12 * m; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > 0.0 ? lo : hi) = mid;
  }
  return sim::SimTime::from_seconds_rounded(0.5 * (lo + hi));
}

double expected_segment_seconds(const CheckpointRestartModel& model) {
  check_mtbf_and_save(model.save, model.mtbf);
  CLUSTERSIM_CHECK(model.restart >= sim::SimTime::zero(),
                   "ETTR needs restart >= 0, found " + std::to_string(model.restart.count_ns()));
  CLUSTERSIM_CHECK(model.interval > sim::SimTime::zero(),
                   "ETTR needs interval > 0, found " + std::to_string(model.interval.count_ns()));
  const double m = seconds(model.mtbf);
  const double r = seconds(model.restart);
  const double w = seconds(model.interval) + seconds(model.save);
  // expm1 keeps precision when W << M (rare failures).
  const double attempts = std::expm1(w / m);
  switch (model.during_recovery) {
    case FailuresDuringRecovery::kRestartRecovery:
      return m * std::exp(r / m) * attempts;
    case FailuresDuringRecovery::kIgnored:
      return (m + r) * attempts;
  }
  return 0.0;
}

double expected_ettr(const CheckpointRestartModel& model) {
  const double wall = expected_segment_seconds(model);
  if (!std::isfinite(wall)) return 0.0;
  return seconds(model.interval) / wall;
}

}  // namespace clustersim::failures
