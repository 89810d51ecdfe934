// MpiContext: what `sweep` needs of MPI, and nothing when the process was not
// started by mpirun. When the environment says mpirun launched it
// (OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_RANK for other launchers) and
// the binary was built with MPI (Debian's OpenMPI, found by CMake), the
// constructor initialises MPI and the object reports this process's rank and
// the world size; otherwise it is rank 0 of 1 and never touches MPI, so the
// plain binary runs as before. The destructor finalises what it initialised.
//
// Errors: MPI failures abort the job (MPI's default error handler), as a
// half-distributed sweep cannot be recovered. Thread safety: construct and
// use it from the main thread only (MPI_THREAD_FUNNELED); OpenMP threads of a
// rank do not call MPI.
#pragma once

#include <string>
#include <vector>

namespace clustersim::cli {

class MpiContext {
 public:
  MpiContext();
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Every rank's text, at rank 0 in rank order; the other ranks get an empty
  // vector. Collective: every rank calls it.
  std::vector<std::string> gather(const std::string& mine) const;
  // Rank 0's text, on every rank. Collective.
  std::string broadcast(const std::string& from_root) const;
  // Ends every rank of the job (a rank that fails would leave the others
  // waiting in a collective); without MPI it does nothing.
  void abort(int code) const;

 private:
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
};

// Whether this binary can join an MPI job (built with MPI).
bool built_with_mpi();

}  // namespace clustersim::cli
