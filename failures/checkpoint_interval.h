// Checkpoint interval references (Young, Daly) and the closed-form expected
// ETTR of checkpoint-restart, against which the campaign engine is checked.
//
// The model (Daly 2006, "A higher order estimate of the optimum checkpoint
// interval for restart dumps", Future Gener. Comput. Syst. 22(3):303-312):
//  * Failures of the whole job form a Poisson process of rate 1/M (M = the
//    job's MTBF) on the wall clock.
//  * Work runs in segments: `interval` (tau) of training, then a blocking save
//    of `save` (delta). A segment counts only when its save completes; a
//    failure during the training or the save of a segment loses the whole
//    segment (work since the last completed save).
//  * After each failure a recovery of fixed length R (detection, restart
//    pieces: everything but the lost work) runs, then the segment starts over.
//  * FailuresDuringRecovery says what a failure during a recovery does:
//      kRestartRecovery (Daly's model, and the campaign's: failures arrive
//      on the wall clock): the recovery starts over from its beginning at
//      the failure instant, with the full R again;
//      kIgnored: no failure can strike during a recovery (failures arrive
//      only while training or saving).
//
// Expected wall time of one segment, W = tau + delta (renewal-reward):
//   kRestartRecovery: E[T] = M * exp(R/M) * (exp(W/M) - 1)
//   kIgnored:         E[T] = (M + R) * (exp(W/M) - 1)
// and ETTR (training time / wall time over a long run) = tau / E[T].
// Derivation: an attempt at W uninterrupted seconds, restarted at once after
// each failure, takes M (exp(W/M) - 1) in expectation, with exp(W/M) - 1
// failures; each failure adds one recovery, which takes R (kIgnored) or, being
// itself an attempt at R uninterrupted seconds, M (exp(R/M) - 1).
// With no failures (M -> infinity) both give tau / (tau + delta).
//
// Both E[T] are a constant times exp(W/M) - 1, so the interval maximising
// ETTR depends on neither R nor the mode: it is the root of
// (1 - tau/M) exp((tau + delta)/M) = 1, which Young's and Daly's formulas
// approximate to first and higher order.
//
// Units: SimTime in, SimTime out (rounded to the nanosecond); the arithmetic
// is in double seconds. Preconditions (checked, InvariantError): mtbf > 0,
// save >= 0, restart >= 0, interval > 0. Thread safety: pure functions.
#pragma once

#include "sim/sim_time.h"

namespace clustersim::failures {

// Young (1974): tau = sqrt(2 * delta * M).
sim::SimTime young_interval(sim::SimTime save, sim::SimTime mtbf);

// Daly (2006), the higher-order estimate: for delta < 2M
//   tau = sqrt(2 delta M) * (1 + 1/3 sqrt(delta / (2M)) + 1/9 (delta / (2M))) - delta,
// else tau = M. The restart cost does not appear (it drops out of the optimum).
sim::SimTime daly_interval(sim::SimTime save, sim::SimTime mtbf);

// The exact maximiser of expected_ettr() over the interval (see above), found
// by bisection to well under a nanosecond. 0 when save is 0.
sim::SimTime optimal_interval(sim::SimTime save, sim::SimTime mtbf);

enum class FailuresDuringRecovery { kRestartRecovery, kIgnored };

struct CheckpointRestartModel {
  sim::SimTime mtbf;      // M: mean time between job failures, wall clock
  sim::SimTime restart;   // R: fixed cost of each recovery (lost work excluded)
  sim::SimTime save;      // delta: blocking time of one checkpoint save
  sim::SimTime interval;  // tau: training time between saves, saves excluded
  FailuresDuringRecovery during_recovery = FailuresDuringRecovery::kRestartRecovery;
};

// Expected wall time per completed segment, E[T] above, in seconds.
double expected_segment_seconds(const CheckpointRestartModel& model);

// tau / E[T], in (0, 1]. 0 when E[T] overflows a double (hopeless settings).
double expected_ettr(const CheckpointRestartModel& model);

}  // namespace clustersim::failures
