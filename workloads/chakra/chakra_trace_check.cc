// Checking Chakra graphs before replay (workloads/chakra/chakra_trace.h).
//
// Every problem of every rank is collected into one ConfigError, each line
// naming the file (or "rank R" for a trace built in memory) and the node id:
//   t.1.et: error: node 17: data dependency on node 99, which is not in the graph
// Problems are listed per rank in file order, cycles last. A file with more
// than kMaxProblemsPerFile problems gets that many and a line counting the
// rest (a file that is wrong everywhere would otherwise print millions).
//
// Cycles: Tarjan's strongly connected components, iterative (a chain of a
// million dependencies must not overflow the stack). Each component with
// more than one node, or a node depending on itself, is one cycle report,
// naming the component's node of smallest id and one cycle through it.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config_error.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {

namespace {

constexpr int kMaxProblemsPerFile = 100;
// Files whose problems are listed; the others are counted in one line.
constexpr size_t kMaxFilesListed = 4;
// Cycles longer than this are shown with their middle left out.
constexpr size_t kMaxCycleShown = 10;
// Ranks of a group listed in a message.
constexpr size_t kMaxRanksShown = 16;

constexpr size_t kNone = std::numeric_limits<size_t>::max();

class RankProblems {
 public:
  RankProblems(std::string file, sim::DiagnosticSink& sink) : file_(std::move(file)), sink_(sink) {}
  ~RankProblems() = default;
  RankProblems(const RankProblems&) = delete;
  RankProblems& operator=(const RankProblems&) = delete;

  void add(uint64_t node, const std::string& message) {
    ++count_;
    if (count_ <= kMaxProblemsPerFile) {
      sink_.add({file_, 0, 0}, "", "node " + std::to_string(node) + ": " + message);
    }
  }
  int count() const { return count_; }
  // The line counting what was left out, if anything was.
  void finish() {
    if (count_ > kMaxProblemsPerFile) {
      sink_.add({file_, 0, 0}, "",
                std::to_string(count_ - kMaxProblemsPerFile) + " more problems in this file");
    }
  }

 private:
  std::string file_;
  sim::DiagnosticSink& sink_;
  int count_ = 0;
};

std::string rank_list_text(const std::vector<int64_t>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size() && i < kMaxRanksShown; ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(ranks[i]);
  }
  if (ranks.size() > kMaxRanksShown) {
    text += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  }
  return text;
}

// Dependency edges node -> the nodes it waits for, by position in
// trace.nodes (compressed rows); dependencies on unknown ids are left out.
struct DependencyGraph {
  std::vector<size_t> offsets;  // edges of node v: targets[offsets[v] .. offsets[v + 1])
  std::vector<size_t> targets;
};

DependencyGraph build_graph(const Trace& trace,
                            const std::unordered_map<uint64_t, size_t>& position) {
  DependencyGraph g;
  g.offsets.reserve(trace.nodes.size() + 1);
  g.offsets.push_back(0);
  for (const Node& node : trace.nodes) {
    for (const auto* deps : {&node.ctrl_deps, &node.data_deps}) {
      for (uint64_t dep : *deps) {
        auto it = position.find(dep);
        if (it != position.end()) g.targets.push_back(it->second);
      }
    }
    g.offsets.push_back(g.targets.size());
  }
  return g;
}

// Strongly connected components that hold a cycle, each as its node
// positions.
std::vector<std::vector<size_t>> cyclic_components(const DependencyGraph& g) {
  const size_t n = g.offsets.size() - 1;
  std::vector<size_t> index(n, kNone);
  std::vector<size_t> low(n, 0);
  std::vector<bool> on_stack(n, false);
  std::vector<size_t> stack;
  struct Frame {
    size_t node;
    size_t next_edge;
  };
  std::vector<Frame> calls;
  std::vector<std::vector<size_t>> cycles;
  size_t next_index = 0;

  for (size_t root = 0; root < n; ++root) {
    if (index[root] != kNone) continue;
    calls.push_back({root, g.offsets[root]});
    index[root] = low[root] = next_index++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!calls.empty()) {
      Frame& frame = calls.back();
      const size_t v = frame.node;
      if (frame.next_edge < g.offsets[v + 1]) {
        const size_t w = g.targets[frame.next_edge++];
        if (index[w] == kNone) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          on_stack[w] = true;
          calls.push_back({w, g.offsets[w]});  // invalidates `frame`
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      // All of v's edges done: close its component if v is its root.
      if (low[v] == index[v]) {
        std::vector<size_t> component;
        size_t w = kNone;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component.push_back(w);
        } while (w != v);
        bool self_loop = false;
        for (size_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
          self_loop = self_loop || g.targets[e] == v;
        }
        if (component.size() > 1 || self_loop) cycles.push_back(std::move(component));
      }
      calls.pop_back();
      if (!calls.empty()) {
        const size_t parent = calls.back().node;
        low[parent] = std::min(low[parent], low[v]);
      }
    }
  }
  return cycles;
}

// A shortest cycle from `start` back to itself inside `component` (breadth
// first), as node positions, start first.
std::vector<size_t> cycle_through(const DependencyGraph& g, const std::vector<size_t>& component,
                                  size_t start) {
  std::unordered_map<size_t, size_t> came_from;  // node -> predecessor on the path
  std::vector<bool> in_component(g.offsets.size() - 1, false);
  for (size_t v : component) in_component[v] = true;
  std::deque<size_t> queue{start};
  size_t last = kNone;
  while (!queue.empty() && last == kNone) {
    const size_t v = queue.front();
    queue.pop_front();
    for (size_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
      const size_t w = g.targets[e];
      if (w == start) {
        last = v;
        break;
      }
      if (in_component[w] && came_from.emplace(w, v).second) queue.push_back(w);
    }
  }
  std::vector<size_t> path;
  for (size_t v = last; v != start && v != kNone; v = came_from.at(v)) path.push_back(v);
  path.push_back(start);
  std::reverse(path.begin(), path.end());
  return path;
}

std::string cycle_text(const Trace& trace, const std::vector<size_t>& path) {
  auto id = [&](size_t position) { return std::to_string(trace.nodes[position].id); };
  std::string text;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path.size() > kMaxCycleShown && i == kMaxCycleShown / 2) {
      text += "... -> ";
      i = path.size() - kMaxCycleShown / 2;
    }
    text += id(path[i]) + " -> ";
  }
  text += id(path.front());
  if (path.size() > kMaxCycleShown) text += " (" + std::to_string(path.size()) + " nodes)";
  return text;
}

std::string membership_problem(const std::string& pg_name, size_t rank,
                               const std::vector<int64_t>& members) {
  return "pg_name \"" + pg_name + "\" names a group without rank " + std::to_string(rank) +
         " (its ranks: " + rank_list_text(members) + ")";
}

// Only the checks that depend on the rank, for a rank whose graph passed
// every other check as another rank's: the problems check_rank would find.
void check_membership(const Trace& trace, size_t rank, std::string where, const CommGroups& groups,
                      sim::DiagnosticSink& sink) {
  if (groups.empty()) return;
  RankProblems problems(std::move(where), sink);
  const auto own_rank = static_cast<int64_t>(rank);
  for (const Node& node : trace.nodes) {
    if (node.type != static_cast<int32_t>(NodeType::kCommColl) || !node.pg_name) continue;
    const auto group = groups.find(*node.pg_name);
    if (group != groups.end() &&
        std::find(group->second.begin(), group->second.end(), own_rank) == group->second.end()) {
      problems.add(node.id, membership_problem(*node.pg_name, rank, group->second));
    }
  }
  problems.finish();
}

// Returns true when every problem found (if any) depends on the rank.
bool check_rank(const Trace& trace, size_t rank, size_t world, std::string where,
                const CommGroups& groups, sim::DiagnosticSink& sink) {
  RankProblems problems(std::move(where), sink);
  int membership = 0;
  const auto own_rank = static_cast<int64_t>(rank);
  const auto world_size = static_cast<int64_t>(world);

  // Message k of the file is node k-1 (message 0 is the GlobalMetadata), as
  // chakra_trace_io.cc counts.
  std::unordered_map<uint64_t, size_t> position;
  position.reserve(trace.nodes.size());
  for (size_t i = 0; i < trace.nodes.size(); ++i) {
    auto [it, inserted] = position.emplace(trace.nodes[i].id, i);
    if (!inserted) {
      problems.add(trace.nodes[i].id, "id used by more than one node (messages " +
                                          std::to_string(it->second + 1) + " and " +
                                          std::to_string(i + 1) + ")");
    }
  }

  for (const Node& node : trace.nodes) {
    const uint64_t id = node.id;
    const auto type = static_cast<NodeType>(node.type);
    if (node.type < 0 || node.type > static_cast<int32_t>(NodeType::kCheckpoint)) {
      problems.add(
          id, "node type " + std::to_string(node.type) + " is not a Chakra NodeType (0 to 10)");
    } else if (type == NodeType::kInvalid || type == NodeType::kStorage ||
               type == NodeType::kBatch || type == NodeType::kCheckpoint) {
      problems.add(id, std::string(node_type_name(node.type)) +
                           " cannot be replayed (expected COMP_NODE, COMM_COLL_NODE, "
                           "COMM_SEND_NODE, COMM_RECV_NODE, MEM_LOAD_NODE, MEM_STORE_NODE or "
                           "METADATA_NODE)");
    }

    for (uint64_t dep : node.ctrl_deps) {
      if (!position.contains(dep)) {
        problems.add(id, "control dependency on node " + std::to_string(dep) +
                             ", which is not in the graph");
      }
    }
    for (uint64_t dep : node.data_deps) {
      if (!position.contains(dep)) {
        problems.add(
            id, "data dependency on node " + std::to_string(dep) + ", which is not in the graph");
      }
    }

    if (type == NodeType::kCommColl) {
      if (!node.comm_type) {
        problems.add(id, "collective without comm_type");
      } else if (*node.comm_type < 0 ||
                 *node.comm_type > static_cast<int64_t>(CommType::kBarrier)) {
        problems.add(id, "comm_type " + std::to_string(*node.comm_type) +
                             " is not a Chakra CollectiveCommType (0 to 9)");
      }
      if (!node.comm_size) {
        problems.add(id, "collective without comm_size");
      } else if (*node.comm_size < 0) {
        problems.add(id, "comm_size " + std::to_string(*node.comm_size) + " is negative");
      }
      if (node.pg_name && !groups.empty()) {
        auto group = groups.find(*node.pg_name);
        if (group == groups.end()) {
          problems.add(id, "pg_name \"" + *node.pg_name + "\" is not one of the " +
                               std::to_string(groups.size()) + " communicator groups");
        } else if (std::find(group->second.begin(), group->second.end(), own_rank) ==
                   group->second.end()) {
          problems.add(id, membership_problem(*node.pg_name, rank, group->second));
          ++membership;
        }
      }
    }

    if (type == NodeType::kCommSend || type == NodeType::kCommRecv) {
      const bool send = type == NodeType::kCommSend;
      const char* kind = send ? "send" : "recv";
      // The peer the replay needs: a send's destination, a recv's source.
      const std::optional<int64_t>& peer = send ? node.comm_dst : node.comm_src;
      if (!peer) {
        problems.add(id, std::string(kind) + " without " + (send ? "comm_dst" : "comm_src"));
      }
      for (const auto& [field, value] :
           {std::pair{"comm_src", node.comm_src}, std::pair{"comm_dst", node.comm_dst}}) {
        if (value && (*value < 0 || *value >= world_size)) {
          problems.add(id, std::string(field) + " " + std::to_string(*value) +
                               " is not a rank (expected 0 to " + std::to_string(world - 1) + ")");
        }
      }
      if (!node.comm_size) {
        problems.add(id, std::string(kind) + " without comm_size");
      } else if (*node.comm_size < 0) {
        problems.add(id, "comm_size " + std::to_string(*node.comm_size) + " is negative");
      }
    }
  }

  const DependencyGraph graph = build_graph(trace, position);
  std::vector<std::vector<size_t>> cycles = cyclic_components(graph);
  std::vector<std::pair<size_t, const std::vector<size_t>*>> reported;  // (start, component)
  for (const std::vector<size_t>& component : cycles) {
    size_t start = component.front();
    for (size_t v : component) {
      if (trace.nodes[v].id < trace.nodes[start].id) start = v;
    }
    reported.emplace_back(start, &component);
  }
  std::sort(reported.begin(), reported.end());  // file order
  for (const auto& [start, component] : reported) {
    const std::vector<size_t> path = cycle_through(graph, *component, start);
    problems.add(trace.nodes[start].id,
                 "dependency cycle " + cycle_text(trace, path) + " (each node waits for the next)");
  }
  problems.finish();
  return problems.count() == membership;
}

}  // namespace

void check_traces(const std::vector<Trace>& ranks, const CommGroups& groups) {
  check_traces(JobTraces{ranks, {}, {}}, groups);
}

void check_traces(const JobTraces& ranks, const CommGroups& groups) {
  sim::DiagnosticSink sink;
  const auto world = static_cast<size_t>(ranks.ranks());
  // By graph: whether its first rank found no problem but membership ones.
  std::vector<char> clean;
  // Files with problems beyond the first kMaxFilesListed are counted, not
  // listed (a stale groups file can fault every node of thousands of files).
  size_t files_with_problems = 0;
  std::string first_unlisted;
  for (size_t r = 0; r < world; ++r) {
    const auto rank = static_cast<int64_t>(r);
    const auto g = static_cast<size_t>(ranks.graph_index(rank));
    sim::DiagnosticSink file;
    if (g == clean.size()) {
      clean.push_back(check_rank(ranks.of(rank), r, world, ranks.location(rank), groups, file));
    } else if (clean[g] != 0) {
      check_membership(ranks.of(rank), r, ranks.location(rank), groups, file);
    } else {
      check_rank(ranks.of(rank), r, world, ranks.location(rank), groups, file);
    }
    if (file.empty()) continue;
    if (++files_with_problems <= kMaxFilesListed) {
      sink.append(std::move(file));
    } else if (first_unlisted.empty()) {
      first_unlisted = ranks.location(rank);
    }
  }
  if (files_with_problems > kMaxFilesListed) {
    sink.add({first_unlisted, 0, 0}, "",
             "and problems in " + std::to_string(files_with_problems - kMaxFilesListed) +
                 " more trace files from this one on (those of the first " +
                 std::to_string(kMaxFilesListed) + " are listed above)");
  }
  sink.throw_if_any();
}

}  // namespace clustersim::workloads::chakra
