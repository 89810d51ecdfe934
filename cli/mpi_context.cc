#include "cli/mpi_context.h"

#include <cstdlib>

#ifdef CLUSTERSIM_WITH_MPI
#include <mpi.h>
#endif

namespace clustersim::cli {

bool built_with_mpi() {
#ifdef CLUSTERSIM_WITH_MPI
  return true;
#else
  return false;
#endif
}

#ifdef CLUSTERSIM_WITH_MPI

namespace {

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace

// OpenMPI's handles are macros with C casts; they expand in this file only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"

MpiContext::MpiContext() {
  if (!launched_by_mpirun()) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiContext::~MpiContext() {
  if (active_) MPI_Finalize();
}

std::vector<std::string> MpiContext::gather(const std::string& mine) const {
  if (!active_) return {mine};
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank_ == 0 ? static_cast<size_t>(size_) : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = total;
    total += lengths[i];
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (size_t i = 0; i < lengths.size(); ++i) {
    out.push_back(all.substr(static_cast<size_t>(offsets[i]), static_cast<size_t>(lengths[i])));
  }
  return out;
}

std::string MpiContext::broadcast(const std::string& from_root) const {
  if (!active_) return from_root;
  int length = static_cast<int>(from_root.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string text = rank_ == 0 ? from_root : std::string(static_cast<size_t>(length), '\0');
  MPI_Bcast(text.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

void MpiContext::abort(int code) const {
  if (active_) MPI_Abort(MPI_COMM_WORLD, code);
}

#pragma GCC diagnostic pop

#else

MpiContext::MpiContext() = default;
MpiContext::~MpiContext() = default;
std::vector<std::string> MpiContext::gather(const std::string& mine) const { return {mine}; }
std::string MpiContext::broadcast(const std::string& from_root) const { return from_root; }
void MpiContext::abort(int code) const { (void)code; }

#endif

}  // namespace clustersim::cli
