#include "exec/step_result.h"

namespace clustersim::workloads {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::kForward:
      return "forward";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kBackward:
      return "backward";
    case Phase::kOptimizer:
      return "optimizer";
  }
  return "?";
}

}  // namespace clustersim::workloads
