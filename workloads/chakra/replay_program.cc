#include "workloads/chakra/replay_program.h"

#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <utility>

#include "config/config_error.h"
#include "sim/check.h"

namespace clustersim::workloads::chakra::replay {

namespace {

using step_accounts::exposed_account;

constexpr int32_t kNever = std::numeric_limits<int32_t>::max();  // a position no stream reaches
constexpr int kMaxStreams = 255;

// What a node hands on to the nodes depending on it: GPU-side positions
// (one per stream, the latest) and the last host node.
struct Reach {
  std::vector<Dep> deps;
  int32_t host = -1;
  void add(uint8_t stream, int32_t pos) {
    for (Dep& d : deps) {
      if (d.stream == stream) {
        d.pos = std::max(d.pos, pos);
        return;
      }
    }
    deps.push_back(Dep{stream, pos});
  }
};

class ProgramCompiler {
 public:
  explicit ProgramCompiler(const Template& t) : t_(t), n_(t.nodes.size()) {}

  CompiledGraph build() {
    preds();
    order();
    streams();
    positions();
    reaches();
    segments();
    ops();
    out_.order = order_;
    out_.pred_begin = pred_begin_;
    out_.preds = preds_;
    return std::move(out_);
  }

 private:
  const Node& node(size_t i) const { return t_.trace->nodes[i]; }
  const TNode& tn(size_t i) const { return t_.nodes[i]; }
  bool host_thread(size_t i) const { return tn(i).kind == Kind::kHost && tn(i).host_thread; }
  bool on_host(size_t i) const { return host_thread(i) || tn(i).kind == Kind::kMeta; }

  void preds() {
    pred_begin_.assign(n_ + 1, 0);
    for (const int32_t s : t_.succs) ++pred_begin_[static_cast<size_t>(s) + 1];
    for (size_t i = 0; i < n_; ++i) pred_begin_[i + 1] += pred_begin_[i];
    preds_.resize(t_.succs.size());
    std::vector<int32_t> fill(pred_begin_.begin(), pred_begin_.end() - 1);
    for (size_t i = 0; i < n_; ++i) {
      for (int32_t e = tn(i).succ_begin; e < tn(i).succ_end; ++e) {
        const auto s = static_cast<size_t>(t_.succs[static_cast<size_t>(e)]);
        preds_[static_cast<size_t>(fill[s]++)] = static_cast<int32_t>(i);
      }
    }
    // Matching order: each collective after the previous one of its group,
    // each send/recv after the previous one of its (kind, peer, tag).
    chain_prev_.assign(n_, -1);
    chain_next_.assign(n_, -1);
    std::vector<int32_t> by_id(n_);
    for (size_t i = 0; i < n_; ++i) by_id[i] = static_cast<int32_t>(i);
    std::sort(by_id.begin(), by_id.end(),
              [&](int32_t a, int32_t b) { return tn(a).id < tn(b).id; });
    std::map<std::tuple<int, int64_t, int64_t>, int32_t> last;
    for (const int32_t i : by_id) {
      const TNode& x = tn(static_cast<size_t>(i));
      std::tuple<int, int64_t, int64_t> key;
      if (x.kind == Kind::kColl) {
        key = {0, x.resource, 0};
      } else if (x.kind == Kind::kSend || x.kind == Kind::kRecv) {
        key = {x.kind == Kind::kSend ? 1 : 2, x.peer, x.tag};
      } else {
        continue;
      }
      const auto [it, fresh] = last.emplace(key, i);
      if (!fresh) {
        chain_prev_[static_cast<size_t>(i)] = it->second;
        chain_next_[static_cast<size_t>(it->second)] = i;
        it->second = i;
      }
      if (x.kind == Kind::kColl) continue;
      // A send or receive runs on its trace stream when the trace names one
      // (async TP's copies to every peer share one each way), else on a
      // stream of its own (kind, peer, tag).
      if (x.stream >= 0) key = {x.kind == Kind::kSend ? 3 : 4, x.stream, 0};
      const auto c = p2p_channels_.emplace(key, static_cast<int32_t>(p2p_channels_.size()));
      channel_of_[i] = c.first->second;
    }
  }

  // The list schedule on one idle rank: pops in readiness order.
  void order() {
    std::vector<int32_t> left(n_);
    std::vector<int64_t> ready(n_, 0);
    std::map<int32_t, int64_t> free_at;  // resource -> when it is free
    using Entry = std::tuple<int64_t, uint64_t, int32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    for (size_t i = 0; i < n_; ++i) {
      left[i] = pred_begin_[i + 1] - pred_begin_[i] + (chain_prev_[i] >= 0 ? 1 : 0);
      if (left[i] == 0) heap.emplace(0, tn(i).id, static_cast<int32_t>(i));
    }
    std::vector<uint8_t> placed(n_, 0);
    const auto release = [&](int32_t s, int64_t end) {
      const auto k = static_cast<size_t>(s);
      ready[k] = std::max(ready[k], end);
      if (--left[k] == 0) heap.emplace(ready[k], tn(k).id, s);
    };
    while (!heap.empty()) {
      const auto [at, id, i] = heap.top();
      heap.pop();
      const TNode& x = tn(static_cast<size_t>(i));
      int64_t end = at;
      if (x.kind == Kind::kCompute || x.kind == Kind::kHost || x.kind == Kind::kCopy) {
        int64_t& free = free_at[x.resource];
        end = std::max(at, free) + x.duration_ns;
        free = end;
      }
      order_.push_back(i);
      placed[static_cast<size_t>(i)] = 1;
      for (int32_t e = x.succ_begin; e < x.succ_end; ++e)
        release(t_.succs[static_cast<size_t>(e)], end);
      if (chain_next_[static_cast<size_t>(i)] >= 0)
        release(chain_next_[static_cast<size_t>(i)], end);
    }
    // Nodes of a cycle never run; they keep ascending id behind the others.
    std::vector<int32_t> stuck;
    for (size_t i = 0; i < n_; ++i) {
      if (!placed[i]) stuck.push_back(static_cast<int32_t>(i));
    }
    std::sort(stuck.begin(), stuck.end(),
              [&](int32_t a, int32_t b) { return tn(a).id < tn(b).id; });
    order_.insert(order_.end(), stuck.begin(), stuck.end());
  }

  int add_stream(std::string_view name) {
    CLUSTERSIM_CHECK(static_cast<int>(names_.size()) < kMaxStreams,
                     "a graph with fewer than 255 resources");
    names_.push_back(name);
    return static_cast<int>(names_.size() - 1);
  }

  void streams() {
    // Stream 0: the main compute resource.
    int32_t main = -1;
    const auto key = [&](int32_t r) {
      const int64_t s = t_.resources[static_cast<size_t>(r)].stream;
      return std::make_pair(s != 0, s);
    };
    for (const int32_t r : t_.compute_resources) {
      if (main < 0 || key(r) < key(main)) main = r;
    }
    main_ = main;
    add_stream("compute");
    resource_stream_.assign(t_.resources.size(), -1);
    if (main >= 0) resource_stream_[static_cast<size_t>(main)] = 0;
    for (size_t r = 0; r < t_.resources.size(); ++r) {
      const TResource& res = t_.resources[r];
      if (static_cast<int32_t>(r) == main || (res.kind == Kind::kHost && res.track == "host"))
        continue;
      resource_stream_[r] = add_stream(res.track);
    }
    slot_stream_.resize(t_.slot_names.size());
    for (size_t s = 0; s < t_.slot_names.size(); ++s) {
      slot_stream_[s] = add_stream("collectives");
      out_.program.channels.push_back(Program::Channel{
          GroupRole::kNone, static_cast<uint8_t>(slot_stream_[s]), static_cast<int32_t>(s)});
    }
    p2p_stream_.resize(p2p_channels_.size());
    for (auto& s : p2p_stream_) s = add_stream("send/recv");
  }

  int stream_of(size_t i) const {
    const TNode& x = tn(i);
    switch (x.kind) {
      case Kind::kCompute:
      case Kind::kHost:
      case Kind::kCopy:
        return resource_stream_[static_cast<size_t>(x.resource)];
      case Kind::kColl:
        return slot_stream_[static_cast<size_t>(x.resource)];
      case Kind::kSend:
      case Kind::kRecv:
        return p2p_stream_[static_cast<size_t>(channel_of_.at(static_cast<int32_t>(i)))];
      case Kind::kMeta:
        break;
    }
    return -1;
  }

  void positions() {
    stream_.assign(n_, -1);
    npos_.assign(n_, -1);
    out_.host_index.assign(n_, -1);
    node_lists_.resize(names_.size());
    for (const int32_t i : order_) {
      const auto k = static_cast<size_t>(i);
      if (host_thread(k)) {
        out_.host_index[k] = static_cast<int32_t>(host_.size());
        host_.push_back(i);
      } else if (tn(k).kind != Kind::kMeta) {
        stream_[k] = stream_of(k);
        npos_[k] = static_cast<int32_t>(node_lists_[static_cast<size_t>(stream_[k])].size());
        node_lists_[static_cast<size_t>(stream_[k])].push_back(i);
      }
    }
    host_start_.assign(host_.size() + 1, 0);
    for (size_t h = 0; h < host_.size(); ++h) {
      host_start_[h + 1] = host_start_[h] + tn(static_cast<size_t>(host_[h])).duration_ns;
    }
  }

  // What every node waits for, in node positions; metadata nodes resolved.
  void reaches() {
    reach_.resize(n_);
    std::vector<uint8_t> done(n_, 0);
    for (const int32_t i : order_) {
      const auto k = static_cast<size_t>(i);
      Reach& r = reach_[k];
      for (int32_t e = pred_begin_[k]; e < pred_begin_[k + 1]; ++e) {
        const auto p = static_cast<size_t>(preds_[static_cast<size_t>(e)]);
        if (host_thread(p)) {
          r.host = std::max(r.host, out_.host_index[p]);
        } else if (tn(p).kind == Kind::kMeta) {
          if (!done[p]) {
            r.add(0, kNever);  // a metadata node of a cycle
            continue;
          }
          r.host = std::max(r.host, reach_[p].host);
          for (const Dep& d : reach_[p].deps) r.add(d.stream, d.pos);
        } else {
          r.add(static_cast<uint8_t>(stream_[p]), npos_[p]);
        }
      }
      if (chain_prev_[k] >= 0) {
        const auto p = static_cast<size_t>(chain_prev_[k]);
        r.add(static_cast<uint8_t>(stream_[p]), npos_[p]);
      }
      done[k] = 1;
      if (host_thread(k) && !r.deps.empty()) gated_.push_back(out_.host_index[k]);
    }
    std::sort(gated_.begin(), gated_.end());
  }

  bool gate_between(int32_t a, int32_t b) const {  // a gate at host index in (a, b]
    const auto it = std::upper_bound(gated_.begin(), gated_.end(), a);
    return it != gated_.end() && *it <= b;
  }

  // Runs of kernels on stream 0 that become one segment each.
  void segments() {
    const std::vector<int32_t>& list = node_lists_[0];
    std::vector<uint8_t> targeted(list.size(), 0);
    for (size_t i = 0; i < n_; ++i) {
      const bool kernel0 = stream_[i] == 0;
      for (const Dep& d : reach_[i].deps) {
        if (d.stream != 0 || d.pos == kNever || d.pos >= static_cast<int32_t>(list.size()))
          continue;
        if (kernel0 && d.pos < npos_[i]) continue;  // stream order
        targeted[static_cast<size_t>(d.pos)] = 1;
      }
    }
    // Other GPU-side nodes by host index, to see what is issued between.
    std::vector<int32_t> issued(host_.size() + 1, 0);
    for (size_t i = 0; i < n_; ++i) {
      if (stream_[i] > 0 && reach_[i].host >= 0) ++issued[static_cast<size_t>(reach_[i].host) + 1];
    }
    for (size_t h = 0; h < host_.size(); ++h) issued[h + 1] += issued[h];
    seg_of_.assign(list.size(), -1);
    int32_t last_host = -1;
    for (size_t k = 0; k < list.size(); ++k) {
      const auto i = static_cast<size_t>(list[k]);
      bool extend = k > 0 && !targeted[k - 1];
      for (const Dep& d : reach_[i].deps) {
        if (d.stream != 0 || d.pos >= static_cast<int32_t>(k)) extend = false;
      }
      const int32_t h = reach_[i].host;
      if (extend && h >= 0) {
        extend = h >= last_host && !gate_between(last_host, h) &&
                 (last_host < 0 ||
                  issued[static_cast<size_t>(h)] - issued[static_cast<size_t>(last_host) + 1] <= 0);
      }
      if (!extend) {
        seg_first_.push_back(static_cast<int32_t>(k));
        last_host = h;
      } else if (h >= 0) {
        last_host = h;
      }
      seg_of_[k] = static_cast<int32_t>(seg_first_.size() - 1);
    }
    seg_first_.push_back(static_cast<int32_t>(list.size()));
  }

  // An op's position from a node position.
  int32_t op_pos(uint8_t stream, int32_t pos) const {
    if (stream != 0 || pos == kNever || pos >= static_cast<int32_t>(seg_of_.size())) return pos;
    return seg_of_[static_cast<size_t>(pos)];
  }

  int64_t host_duration(int32_t h) const {
    return tn(static_cast<size_t>(host_[static_cast<size_t>(h)])).duration_ns;
  }

  struct Pending {
    int32_t host;  // issue index (-1: none)
    size_t rank;   // order index of its first node
    Op op;
    int32_t first_node;  // -1: a host marker
  };

  void ops();
  Op segment_op(int32_t seg, int32_t* first_node);
  Op node_op(size_t i);
  void set_deps(Op& op, const Reach& reach, int own_stream, int32_t own_pos);

  const Template& t_;
  size_t n_;
  CompiledGraph out_;
  std::vector<int32_t> pred_begin_, preds_, chain_prev_, chain_next_, order_;
  std::map<std::tuple<int, int64_t, int64_t>, int32_t> p2p_channels_;
  std::map<int32_t, int32_t> channel_of_;  // send/recv node -> its p2p channel
  std::vector<std::string_view> names_;
  int32_t main_ = -1;
  std::vector<int> resource_stream_, slot_stream_, p2p_stream_, stream_;
  std::vector<int32_t> npos_, host_;
  std::vector<std::vector<int32_t>> node_lists_;
  std::vector<int64_t> host_start_;
  std::vector<Reach> reach_;
  std::vector<int32_t> gated_;
  std::vector<int32_t> seg_of_, seg_first_;
  std::vector<int32_t> order_rank_;
  std::vector<Pending> pending_;
};

void ProgramCompiler::set_deps(Op& op, const Reach& reach, int own_stream, int32_t own_pos) {
  Program& p = out_.program;
  op.dep_begin = static_cast<int32_t>(p.deps.size());
  for (const Dep& d : reach.deps) {
    const int32_t pos = op_pos(d.stream, d.pos);
    if (d.stream == own_stream && pos < own_pos) continue;  // stream order
    p.deps.push_back(Dep{d.stream, pos});
  }
  op.dep_end = static_cast<int32_t>(p.deps.size());
}

Op ProgramCompiler::segment_op(int32_t seg, int32_t* first_node) {
  const std::vector<int32_t>& list = node_lists_[0];
  const auto begin = static_cast<size_t>(seg_first_[static_cast<size_t>(seg)]);
  const auto end = static_cast<size_t>(seg_first_[static_cast<size_t>(seg) + 1]);
  const auto i0 = static_cast<size_t>(list[begin]);
  *first_node = static_cast<int32_t>(i0);
  Op op;
  op.kind = OpKind::kSegment;
  op.stream = 0;
  op.pos = seg;
  op.task_count = static_cast<int32_t>(end - begin);
  op.label = static_cast<int32_t>(out_.program.kernels.size());
  const int32_t h0 = reach_[i0].host;
  op.host_start_ns = h0 >= 0 ? host_start_[static_cast<size_t>(h0)] : 0;
  op.first_launch_ns = h0 >= 0 ? host_duration(h0) : 0;
  op.host_cost_ns = op.first_launch_ns;
  const std::string_view track = t_.resources[static_cast<size_t>(main_)].track;
  for (size_t k = begin; k < end; ++k) {
    const auto i = static_cast<size_t>(list[k]);
    op.work_ns += tn(i).duration_ns;
    const Node& n = node(i);
    out_.program.kernels.push_back(
        OpLabel{track, n.name, n.kernel_class ? std::string_view(*n.kernel_class) : "compute",
                TaskTag{}, 0, tn(i).duration_ns});
  }
  // Launch-bound end: kernel k ends no earlier than its launch plus the kernels from k on.
  int64_t suffix = 0;
  for (size_t k = end; k-- > begin;) {
    const auto i = static_cast<size_t>(list[k]);
    suffix += tn(i).duration_ns;
    const int32_t h = reach_[i].host;
    if (h >= 0) {
      op.tail_ns = std::max(op.tail_ns, host_start_[static_cast<size_t>(h)] + host_duration(h) -
                                            op.host_start_ns + suffix);
    }
  }
  set_deps(op, reach_[i0], 0, seg);
  return op;
}

Op ProgramCompiler::node_op(size_t i) {
  const TNode& x = tn(i);
  const Node& n = node(i);
  Op op;
  op.stream = static_cast<uint8_t>(stream_[i]);
  op.pos = npos_[i];
  const int32_t h = reach_[i].host;
  op.host_start_ns = h >= 0 ? host_start_[static_cast<size_t>(h)] : 0;
  op.host_cost_ns = h >= 0 ? host_duration(h) : 0;
  OpLabel label{names_[static_cast<size_t>(stream_[i])], n.name, "host", TaskTag{}, 0, 0};
  switch (x.kind) {
    case Kind::kCompute:
      op.kind = OpKind::kLocal;
      op.duration_ns = x.duration_ns;
      op.exposed = step_accounts::kCompute;
      label.category = n.kernel_class ? std::string_view(*n.kernel_class) : "compute";
      break;
    case Kind::kHost:
      op.kind = OpKind::kLocal;
      op.duration_ns = x.duration_ns;
      op.exposed = step_accounts::kExposedPcie;
      break;
    case Kind::kCopy:
      op.kind = OpKind::kLocal;
      op.duration_ns = x.duration_ns;
      op.exposed = step_accounts::kExposedPcie;
      label.category = "pcie";
      label.bytes = x.bytes;
      break;
    case Kind::kColl:
      op.kind = OpKind::kCollective;
      op.op = x.op;
      op.bytes = x.bytes;
      op.exposed = exposed_account(x.op);
      op.channel = x.resource;
      label.track = x.track;
      label.category = collectives::to_string(x.op);
      break;
    case Kind::kSend:
    case Kind::kRecv: {
      const bool send = x.kind == Kind::kSend;
      op.kind = send ? OpKind::kSend : OpKind::kRecv;
      op.peer = x.peer;
      op.tag = x.tag;
      op.seq = x.seq;
      op.bytes = x.bytes;
      op.copy_engine = x.copy_engine;
      op.exposed = step_accounts::kExposedAllReduce;
      label.track = send ? "send" : "recv";
      label.category = label.track;
      break;
    }
    case Kind::kMeta:
      break;
  }
  op.label = static_cast<int32_t>(out_.program.labels.size());
  out_.program.labels.push_back(label);
  set_deps(op, reach_[i], op.stream, op.pos);
  return op;
}

void ProgramCompiler::ops() {
  Program& p = out_.program;
  std::vector<size_t> rank(n_, 0);
  for (size_t k = 0; k < order_.size(); ++k) rank[static_cast<size_t>(order_[k])] = k;
  std::vector<uint8_t> issues(host_.size(), 0);  // some op is issued at this host index
  for (size_t s = 0; s + 1 < seg_first_.size(); ++s) {
    Pending e;
    e.op = segment_op(static_cast<int32_t>(s), &e.first_node);
    e.host = reach_[static_cast<size_t>(e.first_node)].host;
    e.rank = rank[static_cast<size_t>(e.first_node)];
    pending_.push_back(e);
  }
  for (size_t s = 1; s < node_lists_.size(); ++s) {
    for (const int32_t i : node_lists_[s]) {
      Pending e;
      e.op = node_op(static_cast<size_t>(i));
      e.host = reach_[static_cast<size_t>(i)].host;
      e.rank = rank[static_cast<size_t>(i)];
      e.first_node = i;
      pending_.push_back(e);
    }
  }
  for (const Pending& e : pending_) {
    if (e.host >= 0) issues[static_cast<size_t>(e.host)] = 1;
  }
  // Host markers: the host's own end, and its last node before a wait, when
  // no op is issued there.
  int marker = -1;
  for (size_t h = 0; h < host_.size(); ++h) {
    const bool before_wait =
        h + 1 == host_.size() || std::binary_search(gated_.begin(), gated_.end(), h + 1);
    if (!before_wait || issues[h]) continue;
    if (marker < 0) marker = add_stream("host");
    Pending e;
    e.host = static_cast<int32_t>(h);
    e.rank = rank[static_cast<size_t>(host_[h])];
    e.first_node = -1;
    e.op.kind = OpKind::kLocal;
    e.op.stream = static_cast<uint8_t>(marker);
    e.op.exposed = step_accounts::kLaunchBound;
    e.op.label = -1;
    e.op.host_start_ns = host_start_[h];
    e.op.host_cost_ns = host_duration(static_cast<int32_t>(h));
    e.op.pos = 0;
    for (const Pending& q : pending_) e.op.pos += q.op.stream == marker ? 1 : 0;
    pending_.push_back(e);
  }
  std::stable_sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.host, a.rank) < std::tie(b.host, b.rank);
  });
  p.stream_names = names_;
  p.stream_ops.assign(names_.size(), {});
  for (size_t s = 0; s < names_.size(); ++s) {
    p.stream_ops[s].resize(s == 0                   ? seg_first_.size() - 1
                           : node_lists_.size() > s ? node_lists_[s].size()
                                                    : 0);
  }
  if (marker >= 0) p.stream_ops[static_cast<size_t>(marker)].clear();
  out_.op_of.assign(n_, -1);
  int32_t prev_host = -1;
  size_t gate = 0;
  for (Pending& e : pending_) {
    const auto id = static_cast<int32_t>(p.ops.size());
    Op& op = e.op;
    if (static_cast<int>(op.stream) == marker) {
      p.stream_ops[op.stream].push_back(id);
    } else {
      p.stream_ops[op.stream][static_cast<size_t>(op.pos)] = id;
    }
    op.host_span_begin = static_cast<int32_t>(p.host_spans.size());
    for (int32_t h = prev_host + 1; h <= e.host; ++h) {
      const Node& n = node(static_cast<size_t>(host_[static_cast<size_t>(h)]));
      p.host_spans.push_back(HostSpan{host_start_[static_cast<size_t>(h)] - op.host_start_ns,
                                      host_duration(h),
                                      OpLabel{"host", n.name, "host", TaskTag{}, 0, 0}});
    }
    op.host_span_end = static_cast<int32_t>(p.host_spans.size());
    prev_host = std::max(prev_host, e.host);
    for (; gate < gated_.size() && gated_[gate] <= e.host; ++gate) {
      const int32_t h = gated_[gate];
      Gate g;
      g.op = id;
      g.host_ns = host_start_[static_cast<size_t>(h)];
      Op scratch;
      set_deps(scratch, reach_[static_cast<size_t>(host_[static_cast<size_t>(h)])], -1, 0);
      g.dep_begin = scratch.dep_begin;
      g.dep_end = scratch.dep_end;
      p.gates.push_back(g);
      out_.gate_host.push_back(h);
    }
    out_.node_of_op.push_back(e.first_node);
    if (e.first_node >= 0) {
      if (op.kind == OpKind::kSegment) {
        for (int32_t k = 0; k < op.task_count; ++k) {
          out_.op_of[static_cast<size_t>(
              node_lists_[0][static_cast<size_t>(seg_first_[static_cast<size_t>(op.pos)] + k)])] =
              id;
        }
      } else {
        out_.op_of[static_cast<size_t>(e.first_node)] = id;
      }
    }
    p.ops.push_back(op);
  }
  for (size_t s = 0; s < p.stream_ops.size(); ++s) {
    if (!p.stream_ops[s].empty()) p.used_streams.push_back(static_cast<int>(s));
  }
}

}  // namespace

CompiledGraph compile_program(const Template& t) { return ProgramCompiler(t).build(); }

}  // namespace clustersim::workloads::chakra::replay
