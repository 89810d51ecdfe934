// FlowTransfers' quotient by link class (exec/flow_transfers.h,
// solve_by_link_class()): the classes of the links in flight, kept as
// transfers start and end, and the quotient's flows reloaded at each solve.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "exec/flow_transfers.h"

namespace clustersim::workloads {

namespace {

// SplitMix64's finaliser: the hashes of the indexes.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }

}  // namespace

size_t FlowTransfers::StepHash::operator()(const Step& s) const {
  return mix((static_cast<uint64_t>(static_cast<uint32_t>(s.from)) | static_cast<uint64_t>(s.shape)
                                                                         << 32) ^
             (s.coefficient_bits * 0x9e3779b97f4a7c15ULL + s.instance));
}

uint32_t FlowTransfers::intern_shape(std::span<const collectives::Footprint* const> footprints,
                                     double busbw_factor, double alone_Bps) {
  uint64_t h = mix(bits(busbw_factor) ^ mix(bits(alone_Bps)));
  for (const collectives::Footprint* fp : footprints) h = mix(h ^ std::bit_cast<uintptr_t>(fp));
  std::vector<uint32_t>& bucket = shape_index_[h];
  for (const uint32_t id : bucket) {
    const Shape& s = shapes_[id];
    if (s.busbw_factor == busbw_factor && s.alone_Bps == alone_Bps &&
        std::equal(s.footprints.begin(), s.footprints.end(), footprints.begin(),
                   footprints.end())) {
      return id;
    }
  }
  const auto id = static_cast<uint32_t>(shapes_.size());
  shapes_.push_back(Shape{{footprints.begin(), footprints.end()}, busbw_factor, alone_Bps, {}});
  bucket.push_back(id);
  return id;
}

int32_t FlowTransfers::intern_class(double capacity_Bps, const std::vector<RowEntry>& row) {
  uint64_t h = mix(bits(capacity_Bps));
  for (const RowEntry& e : row) {
    h = mix(h ^ (static_cast<uint64_t>(e.shape) << 32 | e.instance));
    h = mix(h ^ bits(e.coefficient));
  }
  std::vector<int32_t>& bucket = class_index_[h];
  for (const int32_t id : bucket) {
    const LinkClass& c = classes_[static_cast<size_t>(id)];
    if (c.capacity_Bps == capacity_Bps &&
        std::equal(c.row.begin(), c.row.end(), row.begin(), row.end(),
                   [](const RowEntry& a, const RowEntry& b) {
                     return a.shape == b.shape && a.instance == b.instance &&
                            bits(a.coefficient) == bits(b.coefficient);
                   })) {
      return id;
    }
  }
  const auto id = static_cast<int32_t>(classes_.size());
  LinkClass c;
  c.capacity_Bps = capacity_Bps;
  c.row = row;
  // Its flows at their full rates, as MaxMinFairness sums a link's potential.
  double potential = 0;
  for (const RowEntry& e : row) {
    const Shape& s = shapes_[e.shape];
    potential += e.coefficient * s.busbw_factor * s.alone_Bps;
  }
  c.can_bind = !(potential <= capacity_Bps);
  classes_.push_back(std::move(c));
  bucket.push_back(id);
  return id;
}

int32_t FlowTransfers::class_of(size_t link) {
  if (link >= link_class_.size()) link_class_.resize(link + 1, -1);
  int32_t& c = link_class_[link];
  if (c < 0) {
    c = intern_class(flows_.link_capacity(static_cast<collectives::LinkId>(link)), {});
    ++classes_[static_cast<size_t>(c)].links;
  }
  return c;
}

int32_t FlowTransfers::look_up_step(const Step& step) {
  // A small direct-mapped cache before the map: a start takes thousands of
  // steps, most of them a few kinds.
  const size_t h = StepHash{}(step);
  RecentStep& recent = recent_steps_[h & (recent_steps_.size() - 1)];
  if (recent.to >= 0 && recent.step == step) {
    last_step_ = recent;
    return recent.to;
  }
  if (const auto it = steps_.find(step); it != steps_.end()) {
    recent = RecentStep{step, it->second};
    last_step_ = recent;
    return it->second;
  }
  const uint32_t shape = step.shape;
  const uint32_t instance = step.instance;
  const double coefficient = std::bit_cast<double>(step.coefficient_bits);
  const LinkClass& c = classes_[static_cast<size_t>(step.from)];
  std::vector<RowEntry> row = c.row;
  const auto at =
      std::lower_bound(row.begin(), row.end(), RowEntry{shape, instance, 0},
                       [](const RowEntry& a, const RowEntry& b) {
                         return a.shape != b.shape ? a.shape < b.shape : a.instance < b.instance;
                       });
  const bool present = at != row.end() && at->shape == shape && at->instance == instance;
  if (coefficient < 0) {
    if (present) row.erase(at);
  } else if (present) {
    at->coefficient += coefficient;
  } else {
    row.insert(at, RowEntry{shape, instance, coefficient});
  }
  const int32_t to = intern_class(c.capacity_Bps, row);
  steps_.emplace(step, to);
  recent = RecentStep{step, to};
  last_step_ = recent;
  return to;
}

void FlowTransfers::mark(uint32_t slot) {
  Transfer& tr = transfers_[slot];
  if (tr.marked == marks_) return;
  tr.marked = marks_;
  marked_.push_back(slot);
}

void FlowTransfers::move_link(size_t link, int32_t from, int32_t to) {
  link_class_[link] = to;
  LinkClass& a = classes_[static_cast<size_t>(from)];
  LinkClass& b = classes_[static_cast<size_t>(to)];
  --a.links;
  ++b.links;
  if (a.can_bind || b.can_bind) mark_row(a, /*recount=*/true);
}

void FlowTransfers::mark_row(const LinkClass& c, bool recount) {
  for (const RowEntry& e : c.row) {
    const uint32_t slot = shapes_[e.shape].slot_of_instance[e.instance];
    if (slot == kNoSlot) continue;  // the transfer ending
    if (recount) transfers_[slot].counted = false;
    mark(slot);
  }
}

void FlowTransfers::quotient_start(uint32_t slot,
                                   std::span<const collectives::Footprint* const> footprints,
                                   double busbw_factor, double alone_Bps) {
  Transfer& tr = transfers_[slot];
  const collectives::Footprint& first = *footprints.front();
  for (const collectives::Footprint* fp : footprints) {
    // CollectiveFlows::rate scales a contended rate by the footprint's own.
    if (fp->solo_rate_Bps != first.solo_rate_Bps ||
        fp->reference_rate_Bps != first.reference_rate_Bps) {
      throw QuotientBroken{};
    }
  }
  tr.shape = intern_shape(footprints, busbw_factor, alone_Bps);
  std::vector<uint32_t>& slots = shapes_[tr.shape].slot_of_instance;
  const auto free = std::find(slots.begin(), slots.end(), kNoSlot);
  tr.instance = static_cast<uint32_t>(free - slots.begin());
  if (free == slots.end()) {
    slots.push_back(slot);
  } else {
    *free = slot;
  }
  tr.moving = true;
  tr.counted = false;
  tr.quotient_loads.clear();
  tr.uneven.clear();
  mark(slot);
  for (const collectives::Footprint* fp : footprints) {
    for (const collectives::LinkLoad& load : fp->loads) {
      const auto link = static_cast<size_t>(load.link);
      const int32_t from = class_of(link);
      move_link(link, from, next_class(from, tr.shape, tr.instance, load.coefficient));
    }
  }
}

void FlowTransfers::quotient_finish(uint32_t slot) {
  Transfer& tr = transfers_[slot];
  tr.moving = false;
  shapes_[tr.shape].slot_of_instance[tr.instance] = kNoSlot;
  if (!tr.flows.empty()) {
    if (!quotient_.batch_open()) quotient_.begin_batch();
    quotient_.remove_flow(tr.flows.front());
    tr.flows.clear();
  }
  for (const int32_t c : tr.uneven) --classes_[static_cast<size_t>(c)].uneven_for;
  tr.uneven.clear();
  for (const collectives::Footprint* fp : shapes_[tr.shape].footprints) {
    for (const collectives::LinkLoad& load : fp->loads) {
      const auto link = static_cast<size_t>(load.link);
      const int32_t from = link_class_[link];
      const int32_t to = next_class(from, tr.shape, tr.instance, -1.0);
      if (to != from) move_link(link, from, to);  // (equal: another of its flows left it)
    }
  }
}

void FlowTransfers::quotient_count(uint32_t slot) {
  Transfer& tr = transfers_[slot];
  const Shape& shape = shapes_[tr.shape];
  // Whether a class's uneven_for crosses zero, its transfers load it or
  // stop loading it: they reload (their counts stand).
  for (const int32_t c : tr.uneven) {
    LinkClass& lc = classes_[static_cast<size_t>(c)];
    if (--lc.uneven_for == 0) mark_row(lc, /*recount=*/false);
  }
  tr.uneven.clear();
  tr.first_classes.clear();
  std::vector<int32_t>& touched = tr.uneven;  // every class met, then filtered
  for (size_t copy = 0; copy < shape.footprints.size(); ++copy) {
    ++seen_;
    for (const collectives::LinkLoad& load : shape.footprints[copy]->loads) {
      const int32_t id = link_class_[static_cast<size_t>(load.link)];
      LinkClass& c = classes_[static_cast<size_t>(id)];
      if (!c.can_bind || c.seen == seen_) continue;
      c.seen = seen_;
      if (c.copies++ == 0) touched.push_back(id);
      if (copy == 0) tr.first_classes.push_back(id);
    }
  }
  const auto copies = static_cast<uint32_t>(shape.footprints.size());
  size_t kept = 0;
  for (const int32_t id : touched) {
    LinkClass& c = classes_[static_cast<size_t>(id)];
    const bool uneven = c.copies < copies;
    c.copies = 0;
    if (!uneven) continue;
    touched[kept++] = id;
    if (c.uneven_for++ == 0) {
      left_out_.push_back(id);
      mark_row(c, /*recount=*/false);
    }
  }
  touched.resize(kept);
  tr.counted = true;
}

void FlowTransfers::quotient_reload() {
  // Counting may mark transfers whose loads change with it: a second round
  // reloads them (their counts stand, so it marks nothing more).
  while (!marked_.empty()) {
    reloading_.swap(marked_);
    marked_.clear();
    ++marks_;
    for (const uint32_t slot : reloading_) {
      if (transfers_[slot].moving && !transfers_[slot].counted) quotient_count(slot);
    }
    for (const uint32_t slot : reloading_) {
      Transfer& tr = transfers_[slot];
      if (!tr.moving) continue;
      loads_scratch_.clear();
      for (const int32_t id : tr.first_classes) {
        LinkClass& c = classes_[static_cast<size_t>(id)];
        if (c.uneven_for > 0) continue;  // checked after the solve instead
        if (c.quotient_link < 0) {
          c.quotient_link = static_cast<int64_t>(quotient_.add_link(c.capacity_Bps));
        }
        const auto at = std::find_if(c.row.begin(), c.row.end(), [&](const RowEntry& e) {
          return e.shape == tr.shape && e.instance == tr.instance;
        });
        loads_scratch_.push_back(collectives::LinkLoad{
            static_cast<collectives::LinkId>(c.quotient_link), at->coefficient});
      }
      std::sort(loads_scratch_.begin(), loads_scratch_.end(),
                [](const collectives::LinkLoad& a, const collectives::LinkLoad& b) {
                  return a.link < b.link;
                });
      const bool same =
          !tr.flows.empty() &&
          std::equal(loads_scratch_.begin(), loads_scratch_.end(), tr.quotient_loads.begin(),
                     tr.quotient_loads.end(),
                     [](const collectives::LinkLoad& a, const collectives::LinkLoad& b) {
                       return a.link == b.link && bits(a.coefficient) == bits(b.coefficient);
                     });
      if (same) continue;
      if (!quotient_.batch_open()) quotient_.begin_batch();
      if (!tr.flows.empty()) quotient_.remove_flow(tr.flows.front());
      const Shape& shape = shapes_[tr.shape];
      const collectives::FlowId flow =
          quotient_.add_flow(loads_scratch_, shape.alone_Bps, shape.busbw_factor);
      const auto f = static_cast<size_t>(flow);
      if (slot_of_flow_.size() <= f) slot_of_flow_.resize(f + 1);
      slot_of_flow_[f] = slot;
      tr.flows.assign(1, flow);
      tr.quotient_loads = loads_scratch_;
    }
  }
}

void FlowTransfers::quotient_check() {
  size_t kept = 0;
  for (const int32_t id : left_out_) {
    const LinkClass& c = classes_[static_cast<size_t>(id)];
    if (c.uneven_for == 0) continue;  // back in the quotient (or gone)
    left_out_[kept++] = id;
    if (c.links == 0) continue;
    double load = 0;
    for (const RowEntry& e : c.row) {
      const Shape& shape = shapes_[e.shape];
      const Transfer& tr = transfers_[shape.slot_of_instance[e.instance]];
      load += e.coefficient * shape.busbw_factor * quotient_.rate(tr.flows.front());
    }
    // (Rounding: the solver's own sums reach a saturated link's capacity
    // within a few ulps.)
    if (!(load <= c.capacity_Bps * (1 + 1e-12))) throw QuotientBroken{};
  }
  left_out_.resize(kept);
}

// As CollectiveFlows::rate makes of a flow's share.
double FlowTransfers::quotient_rate(const Transfer& tr) const {
  const Shape& shape = shapes_[tr.shape];
  const double solo = collectives::CollectiveFlows::solo_rate_Bps(
      *shape.footprints.front(), shape.busbw_factor, shape.alone_Bps);
  return collectives::CollectiveFlows::moving_rate_Bps(quotient_.rate(tr.flows.front()), solo,
                                                       shape.alone_Bps);
}

}  // namespace clustersim::workloads
