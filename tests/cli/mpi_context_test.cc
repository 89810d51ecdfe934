#include "cli/mpi_context.h"

#include <gtest/gtest.h>

namespace clustersim::cli {
namespace {

// Not started by mpirun: one rank, MPI untouched, collectives are identities.
TEST(MpiContext, WithoutMpirunIsRankZeroOfOne) {
  const MpiContext mpi;
  EXPECT_FALSE(mpi.active());
  EXPECT_EQ(mpi.rank(), 0);
  EXPECT_EQ(mpi.size(), 1);
  EXPECT_EQ(mpi.gather("rows"), std::vector<std::string>{"rows"});
  EXPECT_EQ(mpi.broadcast("grid"), "grid");
}

}  // namespace
}  // namespace clustersim::cli
