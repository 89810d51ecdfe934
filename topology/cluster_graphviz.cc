#include "topology/cluster_graphviz.h"

#include <boost/graph/graphviz.hpp>
#include <ostream>
#include <sstream>

#include "config/units.h"
#include "sim/check.h"

namespace clustersim::topology {

namespace {

// One edge per link, carrying the link's up-edge id for the label.
using DotGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, EdgeId>;

class VertexWriter {
 public:
  explicit VertexWriter(const Cluster& c) : c_(&c) {}
  void operator()(std::ostream& os, size_t v) const {
    const auto id = static_cast<VertexId>(v);
    const VertexKind kind = c_->kind(id);
    const bool is_switch = kind == VertexKind::kLeaf || kind == VertexKind::kSpine ||
                           kind == VertexKind::kCore || kind == VertexKind::kNvSwitch;
    os << "[label=\"" << vertex_kind_name(kind) << " " << c_->index_in_kind(id) << "\""
       << (is_switch ? ",shape=box" : "") << "]";
  }

 private:
  const Cluster* c_;
};

class EdgeWriter {
 public:
  EdgeWriter(const Cluster& c, const DotGraph& g) : c_(&c), g_(&g) {}
  template <class Edge>
  void operator()(std::ostream& os, const Edge& e) const {
    const EdgeId id = (*g_)[e];
    os << "[label=\"" << sim::format_bandwidth(c_->bandwidth_Bps(id)) << " "
       << sim::format_duration(c_->latency(id)) << "\"]";
  }

 private:
  const Cluster* c_;
  const DotGraph* g_;
};

}  // namespace

std::string cluster_to_dot(const Cluster& c) {
  CLUSTERSIM_CHECK(c.vertex_count() <= kMaxDotVertices,
                   "dot export of " + std::to_string(c.vertex_count()) + " vertices");
  DotGraph g(c.vertex_count());
  for (size_t link = 0; link < c.link_count(); ++link) {
    const auto up = static_cast<EdgeId>(2 * link);
    boost::add_edge(c.source(up), c.target(up), up, g);
  }
  std::ostringstream os;
  boost::write_graphviz(os, g, VertexWriter(c), EdgeWriter(c, g));
  return os.str();
}

}  // namespace clustersim::topology
