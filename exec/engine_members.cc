// The members of a timeline (exec/engine_state.h, exec/timelines.h): the
// time accounts of members faster than the timeline's slowest. Such a
// member computes each segment in its share of the timeline's time and runs
// ahead into the next unless its host has not issued it; the time it gains
// it then waits where the timeline waits (a TP collective: sync wait, as
// the slowest member's arrival starts it), so its idle gaps are the
// timeline's own, opened earlier by its lead.
#include <algorithm>
#include <cmath>
#include <vector>

#include "exec/engine_state.h"
#include "sim/check.h"

namespace clustersim::workloads::engine_detail {

namespace {

// std::llround for a duration (0 <= x < 2^52): x - trunc(x) is exact there,
// so this rounds halves away from zero as llround does, inline (llround is a
// libm call: 2.5% of the 3D step).
int64_t round_ns(double x) {
  const auto whole = static_cast<int64_t>(x);
  return whole + (x - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

}  // namespace

void Engine::set_member_speeds(const std::vector<double>& factors) {
  bool even = true;
  for (int64_t t = 0; t < tl_.world; ++t) {
    double slowest = 0;
    for (int64_t c = 0; c < k_; ++c) {
      const double f = factors[static_cast<size_t>(real_rank(t, c))];
      if (c > 0 && f != slowest) even = false;
      slowest = std::max(slowest, f);
    }
    rank(t).slowdown = slowest;
  }
  if (even || k_ == 1) return;
  const auto n = static_cast<size_t>(tl_.world * k_);
  uneven_ = true;
  member_ratio_.resize(n);
  member_lead_.assign(n, 0);
  member_host_ahead_.assign(n, 0);
  member_accounts_.resize(n);
  for (int64_t t = 0; t < tl_.world; ++t) {
    for (int64_t c = 0; c < k_; ++c) {
      const auto i = static_cast<size_t>(t * k_ + c);
      member_ratio_[i] = factors[static_cast<size_t>(real_rank(t, c))] / rank(t).slowdown;
      member_accounts_[i] = rank(t).accounts;
    }
  }
}

// Member i was free at free - lead_i; what ended the gap ended for it then
// too, unless that was the compute stream's own end (its own, earlier); it
// starts once that and its host allow, and its lead is then what it is
// ahead of the timeline's start.
void Engine::members_start(int64_t t, int64_t free, int64_t start, int64_t cause_end,
                           int64_t host_ready, const Cause& cause) {
  const auto base = static_cast<size_t>(t * k_);
  for (size_t i = base; i < base + static_cast<size_t>(k_); ++i) {
    const int64_t free_i = free - member_lead_[i];
    const int64_t end_i = cause.account == step_accounts::kCompute ? free_i : cause_end;
    const int64_t start_i = std::min(start, std::max(end_i, host_ready - member_host_ahead_[i]));
    step_accounts::charge_gap(member_accounts_[i], free_i, start_i, end_i, cause.account,
                              cause.group_start_ns);
    member_lead_[i] = start - start_i;
  }
}

// The running segment took `busy` ns of compute on the slowest member: member
// i takes its share of it from its own start, and ends no earlier than the
// segment's launch-bound end.
void Engine::members_end(int64_t t, int64_t busy) {
  const RankState& st = rank(t);
  const int64_t end = now();
  const auto base = static_cast<size_t>(t * k_);
  for (size_t i = base; i < base + static_cast<size_t>(k_); ++i) {
    Accounts& a = member_accounts_[i];
    const int64_t ahead = member_host_ahead_[i];
    const int64_t start_i = st.seg_start_ns - member_lead_[i];
    const double ratio = member_ratio_[i];
    const int64_t busy_i = ratio == 1 ? busy : round_ns(static_cast<double>(busy) * ratio);
    const int64_t end_i =
        ratio == 1 ? end : std::min(end, std::max(start_i + busy_i, st.seg_tail_end_ns - ahead));
    a[step_accounts::kCompute] += busy_i;
    a[step_accounts::kLaunchBound] += (end_i - start_i) - busy_i;
    member_lead_[i] = end - end_i;
  }
}

// A host wait on the compute stream passed, the timeline's host resuming at
// `anchor` (the later of reaching the gate, `reach`, and now): a member's
// host reached it as far ahead as it already was, and the compute it waited
// for ended its lead earlier.
void Engine::members_pass_gate(int64_t t, int64_t reach, int64_t anchor) {
  const auto base = static_cast<size_t>(t * k_);
  for (size_t i = base; i < base + static_cast<size_t>(k_); ++i) {
    const int64_t anchor_i = std::max(reach - member_host_ahead_[i], now() - member_lead_[i]);
    member_host_ahead_[i] = anchor - std::min(anchor, anchor_i);
  }
}

// A member whose last completion was a segment finished its lead earlier.
int64_t Engine::member_finish(const RankState& st, size_t member) const {
  if (!uneven() || st.finish_account != step_accounts::kCompute ||
      st.finish_ns != st.compute_free_ns) {
    return st.finish_ns;
  }
  return st.finish_ns - member_lead_[index(st) * static_cast<size_t>(k_) + member];
}

Accounts Engine::closed_member(const RankState& st, size_t member, int64_t step_end) const {
  const size_t i = index(st) * static_cast<size_t>(k_) + member;
  Accounts v = member_accounts_[i];
  step_accounts::close_rank(v, st.finish_account, member_finish(st, member),
                            st.compute_free_ns - member_lead_[i], st.finish_group_start_ns,
                            step_end, tail_account_);
  return v;
}

}  // namespace clustersim::workloads::engine_detail
