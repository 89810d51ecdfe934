#include "failures/campaign.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <mutex>

#include "failures/failure_sampler.h"
#include "sim/check.h"
#include "sim/simulator.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace clustersim::failures {

namespace {

using sim::SimTime;

constexpr double kNsToS = 1e-9;

double seconds(int64_t ns) { return static_cast<double>(ns) * kNsToS; }

enum EventKind : sim::EventKind {
  kFailureArrives,
  kStragglerAppears,
  kStragglerRemoved,  // data: straggler id
  kFabricRepaired,    // data: fault id
  kSaveStarts,        // data: generation
  kSaveEnds,          // data: generation
  kSaveDurable,       // data: generation
  kRecoveryEnds,      // data: generation
  kStallEnds,         // data: generation
  kGroupRejoins,      // data: group << 32 | generation
  kSpareBack,         // data: nodes
  kCampaignEnds,
};

// kRejoining: training paused while a recovered replica group rejoins.
enum class Mode : uint8_t {
  kRunning,
  kSaving,
  kRecovering,
  kWaitingSpares,
  kStalled,
  kRejoining,
  kDone
};

class TrialEngine : public sim::EventHandler {
 public:
  TrialEngine(const FailureModel& model, const RecoveryPolicy& policy, const CampaignSpec& spec,
              uint64_t trial)
      : model_(model),
        policy_(policy),
        spec_(spec),
        failures_(model, spec.seed, trial),
        stragglers_(model, spec.seed, trial),
        ft_(policy.kind == RecoveryPolicyKind::kFtHsdp),
        group_down_(static_cast<size_t>(spec.replica_groups), false),
        group_generation_(static_cast<size_t>(spec.replica_groups), 0),
        spares_(policy.spare_nodes.value_or(-1)) {
    result_.interruptions_by_cause.assign(model.causes.size() + 1, 0);
    full_rate_tokens_per_s_ = spec.tokens_per_step / spec.step_time.to_seconds();
    gpus_per_group_ = std::max<int64_t>(1, model.job.gpus() / spec.replica_groups);
    if (ft_) {
      const double step = static_cast<double>(spec.step_time.count_ns());
      quorum_factor_ = step / (step + static_cast<double>(policy.ft_step_overhead.count_ns()));
    }
  }

  TrialResult run() {
    handler_ = sim_.add_handler(*this);
    end_ns_ = spec_.duration.count_ns();
    sim_.schedule_at(spec_.duration, handler_, kCampaignEnds);
    schedule_next_failure();
    schedule_next_straggler();
    enter_running();
    sim_.run();
    result_.wall_s = static_cast<double>(last_ns_) * kNsToS;
    result_.tokens = trained_s_ * full_rate_tokens_per_s_;
    return result_;
  }

  void on_event(sim::Simulator&, const sim::Event& event) override {
    if (mode_ == Mode::kDone) return;
    advance();
    if (mode_ == Mode::kDone) return;  // the tokens were reached before now
    switch (event.kind) {
      case kFailureArrives:
        on_failure(failures_.next());
        schedule_next_failure();
        break;
      case kStragglerAppears:
        on_straggler(stragglers_.next());
        schedule_next_straggler();
        break;
      case kStragglerRemoved:
        on_straggler_removed(event.data);
        break;
      case kFabricRepaired:
        std::erase_if(fabric_faults_,
                      [id = event.data](const FabricFault& x) { return x.id == id; });
        break;
      case kSaveStarts:
        if (event.data == save_generation_) start_save();
        break;
      case kSaveEnds:
        if (event.data == save_generation_) end_save();
        break;
      case kSaveDurable:
        if (event.data == durable_generation_) committed_s_ = save_mark_s_;
        break;
      case kRecoveryEnds:
        if (event.data == recovery_generation_) end_recovery();
        break;
      case kStallEnds:
        if (event.data == stall_generation_ &&
            (mode_ == Mode::kStalled || mode_ == Mode::kRejoining)) {
          enter_running();
        }
        break;
      case kGroupRejoins:
        rejoin(static_cast<int64_t>(event.data >> 32), event.data & 0xffffffffu);
        break;
      case kSpareBack:
        spares_back(static_cast<int64_t>(event.data));
        break;
      case kCampaignEnds:
        mode_ = Mode::kDone;
        sim_.stop();
        break;
      default:
        CLUSTERSIM_CHECK(false, "unknown campaign event " + std::to_string(event.kind));
    }
  }

 private:
  int64_t now() const { return sim_.now().count_ns(); }

  // ---- Time accounting ----

  double throughput() const {
    double f = 1.0;
    if (ft_) {
      const int64_t alive = spec_.replica_groups - down_groups_;
      f = alive < spec_.replica_groups && spec_.throughput_of_live
              ? spec_.throughput_of_live(alive)
          : spec_.throughput_by_live.empty()
              ? static_cast<double>(alive) / static_cast<double>(spec_.replica_groups)
              : spec_.throughput_by_live[static_cast<size_t>(alive)];
      f *= quorum_factor_;
    }
    return f / slowdown();
  }

  // What slows the synchronous step: the slowest straggler or fabric fault
  // in the job (the slowest counts; they do not compound).
  double slowdown() const {
    double s = 1.0;
    for (const ActiveStraggler& a : active_stragglers_) s = std::max(s, a.slowdown);
    for (const FabricFault& x : fabric_faults_) s = std::max(s, x.slowdown);
    return s;
  }

  // Charges [last_ns_, now) to the current mode; ends the trial where the
  // tokens are reached inside it.
  void advance() {
    const int64_t t = std::min(now(), end_ns_);
    int64_t dt = t - last_ns_;
    if (dt <= 0) return;
    double* acc = result_.seconds.data();
    switch (mode_) {
      case Mode::kRunning: {
        const double f = throughput();
        const double target_s = spec_.tokens > 0 ? spec_.tokens / full_rate_tokens_per_s_ : 0;
        if (target_s > 0 && f > 0 && trained_s_ + f * seconds(dt) >= target_s) {
          dt = std::min<int64_t>(
              dt, static_cast<int64_t>(std::ceil((target_s - trained_s_) / f / kNsToS)));
          result_.trained = true;
        }
        const double span = seconds(dt);
        trained_s_ += f * span;
        acc[kProductive] += f * span;
        acc[kDegraded] += (1 - f) * span;
        running_since_save_ns_ += dt;
        break;
      }
      case Mode::kSaving:
        acc[kCheckpointSave] += seconds(dt);
        break;
      case Mode::kRecovering:
        charge_recovery(last_ns_, last_ns_ + dt);
        break;
      case Mode::kWaitingSpares:
        acc[kSparesWait] += seconds(dt);
        break;
      case Mode::kStalled:
        acc[kFtStall] += seconds(dt);
        break;
      case Mode::kRejoining:
        acc[kFtRejoin] += seconds(dt);
        break;
      case Mode::kDone:
        return;
    }
    last_ns_ += dt;
    if (result_.trained) {
      mode_ = Mode::kDone;
      sim_.stop();
    }
  }

  // Splits recovery time over the restart pieces in the order they are paid
  // (detection first).
  void charge_recovery(int64_t from, int64_t to) {
    int64_t piece_start = recovery_start_ns_;
    for (const CostPiece& piece : recovery_pieces_) {
      const int64_t piece_end = piece_start + piece.time.count_ns();
      const int64_t a = std::max(from, piece_start);
      const int64_t b = std::min(to, piece_end);
      if (b > a) {
        const CampaignAccount account = piece.name == "detection" ? kDetection : kRestart;
        result_.seconds[account] += static_cast<double>(b - a) * kNsToS;
      }
      piece_start = piece_end;
    }
  }

  // ---- Running and checkpoints ----

  void enter_running() {
    mode_ = Mode::kRunning;
    ++save_generation_;
    const int64_t left =
        std::max<int64_t>(0, policy_.checkpoint_interval.count_ns() - running_since_save_ns_);
    sim_.schedule_at(SimTime::ns(now() + left), handler_, kSaveStarts, save_generation_);
  }

  void leave_running() {
    ++save_generation_;  // the pending save start or end is void
  }

  void start_save() {
    mode_ = Mode::kSaving;
    save_mark_s_ = trained_s_;
    ++save_generation_;
    ++durable_generation_;
    sim_.schedule_at(SimTime::ns(now() + policy_.checkpoint_save_blocking.count_ns()), handler_,
                     kSaveEnds, save_generation_);
    sim_.schedule_at(SimTime::ns(now() + policy_.checkpoint_write.count_ns()), handler_,
                     kSaveDurable, durable_generation_);
  }

  void end_save() {
    running_since_save_ns_ = 0;
    enter_running();
  }

  // ---- Failures ----

  void schedule_next_failure() {
    const SimTime at = failures_.peek().time;
    if (at < spec_.duration) sim_.schedule_at(at, handler_, kFailureArrives);
  }

  void schedule_next_straggler() {
    const SimTime at = stragglers_.peek().appears;
    if (at < spec_.duration) sim_.schedule_at(at, handler_, kStragglerAppears);
  }

  void on_failure(const Failure& f) {
    ++result_.failures;
    if (f.blast == BlastRadius::kDegradeBandwidth) {
      on_fabric_fault(f);
      return;
    }
    const size_t cause = f.cause >= 0 ? static_cast<size_t>(f.cause) : model_.causes.size();
    const NodeRange nodes = f.blast == BlastRadius::kJob    ? NodeRange{0, 0}
                            : f.blast == BlastRadius::kLeaf ? model_.job.leaf_nodes_of(
                                                                  f.component, f.component_index)
                                                            : model_.job.nodes_of(
                                                                  f.component, f.component_index);
    const bool full = mode_ == Mode::kRecovering || mode_ == Mode::kWaitingSpares;
    if (!ft_ || f.blast == BlastRadius::kJob || full) {
      ++result_.interruptions;
      ++result_.interruptions_by_cause[cause];
      full_restart(nodes.count);
      return;
    }
    // ft_hsdp: the groups holding the struck nodes' GPUs.
    const int64_t gpn = model_.job.gpus_per_node();
    const int64_t first_group = nodes.first * gpn / gpus_per_group_;
    const int64_t last_group = std::min(spec_.replica_groups - 1,
                                        ((nodes.first + nodes.count) * gpn - 1) / gpus_per_group_);
    std::vector<int64_t> hit;
    for (int64_t g = first_group; g <= last_group; ++g) {
      if (!group_down_[static_cast<size_t>(g)]) hit.push_back(g);
    }
    if (hit.empty()) return;  // a group already down: nothing more stops
    ++result_.interruptions;
    ++result_.interruptions_by_cause[cause];
    if (!ft_tolerates(policy_, down_groups_ + static_cast<int64_t>(hit.size()))) {
      full_restart(nodes.count);
      return;
    }
    const int64_t nodes_per_group = std::max<int64_t>(1, nodes.count / std::ssize(hit));
    for (const int64_t g : hit) {
      group_down_[static_cast<size_t>(g)] = true;
      ++down_groups_;
      ++group_generation_[static_cast<size_t>(g)];
      waiting_groups_.push_back({g, nodes_per_group});
    }
    serve_waiting_groups();
    // The healthy groups stall (a save in progress is abandoned).
    ++durable_generation_;  // a save not yet durable is lost with the group
    pause_for(ft_stall(policy_).count_ns(), Mode::kStalled);
  }

  // Pauses training (kStalled or kRejoining) until now + pause_ns, or the
  // end of the pause already running if that is later.
  void pause_for(int64_t pause_ns, Mode mode) {
    if (mode_ == Mode::kRunning || mode_ == Mode::kSaving) leave_running();
    mode_ = mode;
    stall_until_ns_ = std::max(stall_until_ns_, now() + pause_ns);
    ++stall_generation_;
    sim_.schedule_at(SimTime::ns(stall_until_ns_), handler_, kStallEnds, stall_generation_);
  }

  // A group back after its recovery and the next step boundary (one step).
  void serve_waiting_groups() {
    while (!waiting_groups_.empty()) {
      const WaitingGroup w = waiting_groups_.front();
      if (!take_spares(w.nodes)) return;
      waiting_groups_.pop_front();
      const int64_t back = now() + policy_.ft_detection.count_ns() +
                           replica_recovery(policy_).count_ns() + spec_.step_time.count_ns();
      sim_.schedule_at(
          SimTime::ns(back), handler_, kGroupRejoins,
          (static_cast<uint64_t>(w.group) << 32) | group_generation_[static_cast<size_t>(w.group)]);
    }
  }

  void rejoin(int64_t g, uint64_t generation) {
    if (generation != (group_generation_[static_cast<size_t>(g)] & 0xffffffffu)) return;
    if (!group_down_[static_cast<size_t>(g)]) return;
    group_down_[static_cast<size_t>(g)] = false;
    --down_groups_;
    // The others pause while it catches up (recovery.ft_rejoin_stall); a
    // rejoin during a stall lengthens the stall.
    const int64_t pause = policy_.ft_rejoin_stall.count_ns();
    const bool training = mode_ == Mode::kRunning || mode_ == Mode::kSaving ||
                          mode_ == Mode::kStalled || mode_ == Mode::kRejoining;
    if (pause == 0 || !training) return;
    pause_for(pause, mode_ == Mode::kStalled ? Mode::kStalled : Mode::kRejoining);
  }

  void full_restart(int64_t nodes_lost) {
    ++result_.full_restarts;
    const double lost = trained_s_ - committed_s_;
    result_.seconds[kProductive] -= lost;
    result_.seconds[kLostWork] += lost;
    trained_s_ = committed_s_;
    running_since_save_ns_ = 0;
    leave_running();
    ++durable_generation_;
    ++stall_generation_;
    ++recovery_generation_;
    // Every group comes back with the restart.
    for (size_t g = 0; g < group_down_.size(); ++g) {
      group_down_[g] = false;
      ++group_generation_[g];
    }
    down_groups_ = 0;
    waiting_groups_.clear();
    restart_nodes_needed_ += nodes_lost;
    if (!take_spares(restart_nodes_needed_)) {
      mode_ = Mode::kWaitingSpares;
      return;
    }
    restart_nodes_needed_ = 0;
    start_recovery();
  }

  void start_recovery() {
    mode_ = Mode::kRecovering;
    recovery_start_ns_ = now();
    recovery_pieces_ = restart_pieces(policy_);
    ++recovery_generation_;
    sim_.schedule_at(SimTime::ns(now() + restart_cost(policy_).count_ns()), handler_, kRecoveryEnds,
                     recovery_generation_);
  }

  void end_recovery() { enter_running(); }

  // ---- Spares ----

  // Takes `n` spare nodes if the pool has them (an unlimited pool always
  // does); the failed nodes come back repaired repair_time later.
  bool take_spares(int64_t n) {
    if (n <= 0 || spares_ < 0) return true;
    if (spares_ < n) return false;
    spares_ -= n;
    sim_.schedule_at(SimTime::ns(now() + policy_.repair_time.count_ns()), handler_, kSpareBack,
                     static_cast<uint64_t>(n));
    return true;
  }

  void spares_back(int64_t n) {
    spares_ += n;
    if (mode_ == Mode::kWaitingSpares && take_spares(restart_nodes_needed_)) {
      restart_nodes_needed_ = 0;
      start_recovery();
      return;
    }
    serve_waiting_groups();
  }

  // ---- Fabric faults ----

  // Nothing stops: the job runs at the degraded step until the repair.
  void on_fabric_fault(const Failure& f) {
    if (!spec_.slowdown_of_fabric_fault) return;  // counted, not simulated
    const double s = spec_.slowdown_of_fabric_fault(f.component);
    if (s <= 1.0) return;
    const uint64_t id = next_fabric_fault_id_++;
    fabric_faults_.push_back({id, s});
    sim_.schedule_at(std::min(sim_.now() + policy_.fabric_repair_time, spec_.duration), handler_,
                     kFabricRepaired, id);
  }

  // ---- Stragglers ----

  void on_straggler(const StragglerEvent& s) {
    const uint64_t id = next_straggler_id_++;
    const double step_factor =
        spec_.slowdown_of_straggler ? spec_.slowdown_of_straggler(s.slowdown) : s.slowdown;
    active_stragglers_.push_back({id, step_factor, s});
    sim_.schedule_at(std::min(s.removed, spec_.duration), handler_, kStragglerRemoved, id);
  }

  void on_straggler_removed(uint64_t id) {
    const auto it = std::find_if(active_stragglers_.begin(), active_stragglers_.end(),
                                 [id](const ActiveStraggler& a) { return a.id == id; });
    if (it == active_stragglers_.end()) return;
    const StragglerEvent s = it->event;
    active_stragglers_.erase(it);
    if (s.removed < spec_.duration) on_failure(removal_failure(s));
  }

  struct ActiveStraggler {
    uint64_t id;
    double slowdown;
    StragglerEvent event;
  };
  struct FabricFault {
    uint64_t id;
    double slowdown;
  };
  struct WaitingGroup {
    int64_t group;
    int64_t nodes;
  };

  const FailureModel& model_;
  const RecoveryPolicy& policy_;
  const CampaignSpec& spec_;
  FailureSampler failures_;
  StragglerSampler stragglers_;
  bool ft_;
  sim::Simulator sim_;
  sim::HandlerId handler_ = 0;
  TrialResult result_;
  Mode mode_ = Mode::kRunning;
  int64_t last_ns_ = 0;
  int64_t end_ns_ = 0;
  double full_rate_tokens_per_s_ = 0;
  double quorum_factor_ = 1;
  int64_t gpus_per_group_ = 1;
  // Training, in full-throughput seconds: done, and safe in a checkpoint.
  double trained_s_ = 0;
  double committed_s_ = 0;
  double save_mark_s_ = 0;
  int64_t running_since_save_ns_ = 0;
  uint64_t save_generation_ = 0;
  uint64_t durable_generation_ = 0;
  uint64_t recovery_generation_ = 0;
  uint64_t stall_generation_ = 0;
  int64_t recovery_start_ns_ = 0;
  std::vector<CostPiece> recovery_pieces_;
  int64_t stall_until_ns_ = 0;
  std::vector<bool> group_down_;
  std::vector<uint64_t> group_generation_;
  int64_t down_groups_ = 0;
  std::deque<WaitingGroup> waiting_groups_;
  int64_t spares_;  // -1: unlimited
  int64_t restart_nodes_needed_ = 0;
  std::vector<ActiveStraggler> active_stragglers_;
  uint64_t next_straggler_id_ = 0;
  std::vector<FabricFault> fabric_faults_;
  uint64_t next_fabric_fault_id_ = 0;
};

void check_spec(const RecoveryPolicy& policy, const CampaignSpec& spec) {
  CLUSTERSIM_CHECK(spec.duration > SimTime::zero() && spec.step_time > SimTime::zero() &&
                       spec.tokens_per_step > 0 && spec.trials >= 1,
                   "campaign spec: duration, step time, tokens per step and trials positive");
  CLUSTERSIM_CHECK(spec.replica_groups == policy.replica_groups && spec.replica_groups >= 1,
                   "campaign spec: replica groups " + std::to_string(spec.replica_groups) +
                       " match the policy's " + std::to_string(policy.replica_groups));
  if (!spec.throughput_by_live.empty()) {
    CLUSTERSIM_CHECK(std::ssize(spec.throughput_by_live) == spec.replica_groups + 1,
                     "throughput_by_live has replica_groups + 1 entries");
    for (const double f : spec.throughput_by_live) {
      CLUSTERSIM_CHECK(f >= 0 && f <= 1, "throughput fractions in [0, 1]");
    }
  }
}

}  // namespace

const char* campaign_account_name(CampaignAccount account) {
  switch (account) {
    case kProductive:
      return "productive";
    case kLostWork:
      return "lost_work";
    case kDetection:
      return "detection";
    case kRestart:
      return "restart";
    case kCheckpointSave:
      return "checkpoint_saves";
    case kDegraded:
      return "degraded";
    case kFtStall:
      return "ft_stall";
    case kSparesWait:
      return "spares_wait";
    case kFtRejoin:
      return "ft_rejoin";
    case kCampaignAccounts:
      break;
  }
  return "?";
}

double TrialResult::ettr() const { return wall_s > 0 ? seconds[kProductive] / wall_s : 0; }

TrialResult run_trial(const FailureModel& model, const RecoveryPolicy& policy,
                      const CampaignSpec& spec, uint64_t trial) {
  check_spec(policy, spec);
  return TrialEngine(model, policy, spec, trial).run();
}

CampaignResult run_campaign(const FailureModel& model, const RecoveryPolicy& policy,
                            const CampaignSpec& spec, int threads, const TrialsDone& trials_done) {
  check_spec(policy, spec);
  CampaignResult out;
  out.trials.resize(static_cast<size_t>(spec.trials));
  const auto n = static_cast<int64_t>(spec.trials);
  std::mutex finished_lock;
  int64_t finished = 0;
#ifdef _OPENMP
  const int use = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(use)
#else
  (void)threads;
#endif
  for (int64_t t = 0; t < n; ++t) {
    out.trials[static_cast<size_t>(t)] =
        TrialEngine(model, policy, spec, static_cast<uint64_t>(t)).run();
    if (trials_done) {
      const std::lock_guard<std::mutex> guard(finished_lock);
      trials_done(++finished);
    }
  }

  // Aggregates in trial order, so the sums do not depend on the threads.
  const double count = static_cast<double>(n);
  double sum = 0;
  double sum_sq = 0;
  out.cause_names.reserve(model.causes.size() + 1);
  for (const FailureCause& c : model.causes) out.cause_names.emplace_back(c.name);
  out.cause_names.emplace_back("straggler");
  out.interruptions_by_cause_mean.assign(out.cause_names.size(), 0);
  int64_t trained = 0;
  for (const TrialResult& r : out.trials) {
    const double e = r.ettr();
    sum += e;
    sum_sq += e * e;
    out.interruptions_mean += static_cast<double>(r.interruptions) / count;
    out.goodput_tokens_per_s += (r.wall_s > 0 ? r.tokens / r.wall_s : 0) / count;
    out.time_to_train_days += r.wall_s / 86400.0 / count;
    trained += r.trained ? 1 : 0;
    for (int a = 0; a < kCampaignAccounts; ++a) {
      out.seconds_mean[static_cast<size_t>(a)] += r.seconds[static_cast<size_t>(a)] / count;
    }
    for (size_t c = 0; c < r.interruptions_by_cause.size(); ++c) {
      out.interruptions_by_cause_mean[c] +=
          static_cast<double>(r.interruptions_by_cause[c]) / count;
    }
  }
  out.ettr_mean = sum / count;
  const double var =
      n > 1 ? std::max(0.0, (sum_sq - count * out.ettr_mean * out.ettr_mean) / (count - 1)) : 0.0;
  const double half = 1.96 * std::sqrt(var / count);
  out.ettr_ci95_low = out.ettr_mean - half;
  out.ettr_ci95_high = out.ettr_mean + half;
  out.trained_fraction = static_cast<double>(trained) / count;
  return out;
}

}  // namespace clustersim::failures
