// FlowTransfers' check that its merged bundles stay exact
// (exec/flow_transfers.h): the claims on the links in flight.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "exec/flow_transfers.h"

namespace clustersim::workloads {

void FlowTransfers::grow_links_to(size_t link) {
  link_capacity_.resize(link + 1, std::numeric_limits<double>::quiet_NaN());
  link_refs_.resize(link + 1, 0);
  link_member_.resize(link + 1, -1);
  link_bundle_size_.resize(link + 1, 0);
  copy_of_.resize(link + 1, -1);
  link_apart_.resize(link + 1, 0);
  link_potential_.resize(link + 1, 0);
  link_copies_.resize(link + 1, 0);
}

// (The solver's link records lie scattered; a claim reads thousands.)
double FlowTransfers::capacity(size_t link) {
  double& c = link_capacity_[link];
  if (std::isnan(c)) c = flows_.link_capacity(static_cast<collectives::LinkId>(link));
  return c;
}

void FlowTransfers::set_apart(size_t link) {
  link_apart_[link] = 1;
  apart_now_.push_back(link);
}

// Member c's flows must be copies of member 0's, link for link (each link
// in use copying one member-0 link for one member of bundles of one size,
// with its capacity, and each member-0 link copied once per member), except
// on links that cannot bind. Where claims disagree -- two member indices or
// bundle sizes on a link, two origins, a copy of another capacity, a member
// copying one member-0 link twice -- the links involved and the member-0
// links they copy must hold their flows' full rates within their capacity:
// then they constrain no flow, and member c's problem without its such
// links is member 0's without theirs. (A link whose claims agree carries
// copies of flows its member-0 link carries, and so no more than it.)
bool FlowTransfers::claim(std::span<const collectives::Footprint* const> footprints,
                          double load_scale) {
  const collectives::Footprint& first = *footprints.front();
  const auto size = static_cast<int32_t>(footprints.size());
  const bool outside = footprints.size() == 1;  // a flow outside the bundles
  apart_now_.clear();
  const auto disagree = [this](size_t link, int64_t origin) {
    set_apart(link);
    if (origin >= 0) set_apart(static_cast<size_t>(origin));
    if (copy_of_[link] >= 0) set_apart(static_cast<size_t>(copy_of_[link]));
  };
  for (size_t c = 0; c < footprints.size(); ++c) {
    const collectives::Footprint& fp = *footprints[c];
    if (fp.loads.size() != first.loads.size() || fp.solo_rate_Bps != first.solo_rate_Bps ||
        fp.reference_rate_Bps != first.reference_rate_Bps) {
      return false;
    }
    const int32_t member = outside ? -2 : static_cast<int32_t>(c);
    for (size_t i = 0; i < fp.loads.size(); ++i) {
      const collectives::LinkLoad& mine = fp.loads[i];
      const collectives::LinkLoad& base = first.loads[i];
      if (mine.coefficient != base.coefficient) return false;
      const auto link = static_cast<size_t>(mine.link);
      const int64_t origin = outside ? -1 : static_cast<int64_t>(base.link);
      grow_links(link);
      link_potential_[link] += mine.coefficient * load_scale;
      if (link_refs_[link]++ == 0) {
        link_member_[link] = member;
        link_bundle_size_[link] = size;
        copy_of_[link] = origin;
        link_apart_[link] = 0;
        if (origin >= 0) {  // (member 0 claimed it first)
          const auto o = static_cast<size_t>(origin);
          if (++link_copies_[o] > size || (o != link && capacity(link) != capacity(o))) {
            disagree(link, origin);
          }
        }
      } else if (link_member_[link] != member || link_bundle_size_[link] != size ||
                 copy_of_[link] != origin) {
        disagree(link, origin);
      } else if (link_apart_[link] != 0) {
        apart_now_.push_back(link);  // its potential grew
      }
    }
  }
  for (const size_t link : apart_now_) {
    if (!(link_potential_[link] <= capacity(link))) return false;
  }
  return true;
}

void FlowTransfers::release(std::span<const collectives::Footprint* const> footprints,
                            double load_scale) {
  for (const collectives::Footprint* fp : footprints) {
    for (const collectives::LinkLoad& load : fp->loads) {
      const auto link = static_cast<size_t>(load.link);
      link_potential_[link] -= load.coefficient * load_scale;
      if (--link_refs_[link] != 0) continue;
      if (copy_of_[link] >= 0) --link_copies_[static_cast<size_t>(copy_of_[link])];
      link_member_[link] = -1;
      copy_of_[link] = -1;
      link_apart_[link] = 0;
      link_potential_[link] = 0;  // exact again when free: no drift
    }
  }
}

}  // namespace clustersim::workloads
