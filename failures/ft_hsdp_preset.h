// The ft_hsdp_100k preset: the failures of the FT-HSDP paper's training run
// on about 100,000 H100 ("Fault-tolerant HSDP ...", arXiv:2602.00277), as a
// FailureModel for a job of any size.
//
// Root causes (Table 1 of the paper, as ../shared/data/README.md quotes
// secondary write-ups of it): 678 unexpected interruptions, HBM3 22.9%,
// PCIe 18.0%, NCCL timeouts 9.0%, faulty GPU 7.4%, software bug 7.1%, host
// maintenance 6.2%, kernel fault 5.8%, reboot 5.6%, silent data corruption
// 5.5%, network 5.3%, other 7.2%. Each is one category of
// failure_categories() with its share of the job's rate and the blast
// radius it has under FT-HSDP (ft_hsdp_100k_shares() says why each).
//
// Rate, and how it grows with the job: the paper reports 2.3 interruptions
// per 1,000 servers per day at 32,768 GPUs (4,096 servers) but one every
// ~18 minutes at 98,304 (12,288 servers), 6.51 per 1,000 servers per day:
// 2.8 times the per-server rate at 3 times the servers. The law here is the
// power law fitted to those two anchor points (two constants, two points:
// it reproduces them by construction),
//   per_1000_node_days(n) = 2.3 * (n / 4,096)^a,  a = ln(6.51 / 2.3) / ln 3
//   = 0.947,
// so the job's rate grows as n^1.947. Outside 4,096-12,288 servers it is an
// extrapolation of two points, not a measurement.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "failures/failure_model.h"
#include "failures/job_components.h"

namespace clustersim::failures {

inline constexpr int64_t kFtHsdpSmallNodes = 4'096;    // 32,768 H100
inline constexpr double kFtHsdpSmallRate = 2.3;        // per 1,000 node-days there
inline constexpr int64_t kFtHsdpLargeNodes = 12'288;   // 98,304 H100
inline constexpr double kFtHsdpLargeMtbfMinutes = 18;  // the job's MTBF there

// The law's exponent a (above).
double ft_hsdp_growth_exponent();
// The job's failures per 1,000 node-days at `nodes` (> 0) nodes.
double ft_hsdp_per_1000_node_days(int64_t nodes);

struct FtHsdpShare {
  std::string_view category;  // a failure_categories() name
  double percent;             // of the paper's 678 interruptions
  BlastRadius blast;          // under FT-HSDP
  std::string_view why;       // the reason for that blast radius
};
// The eleven causes, in the paper's order; the percents sum to 100.
std::span<const FtHsdpShare> ft_hsdp_100k_shares();

// Every category at rate 0 but the eleven, whose rates per component-hour
// give the job ft_hsdp_per_1000_node_days(job.nodes()) in all, split by
// share, each with its blast radius.
FailureModel ft_hsdp_100k_model(const JobComponents& job);

}  // namespace clustersim::failures
