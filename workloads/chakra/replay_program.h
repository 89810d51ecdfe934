// A compiled Chakra graph (replay_template.h) as the engine's program
// (exec/program.h; internal to chakra/, chakra_replay.h states the
// semantics). Every resource gets a static order: the graph's nodes are
// list-scheduled once on one rank with their own durations (collectives
// and send/recv taking none), each resource running the node that became
// ready first, ties to the lower id, as the replay's rule on an idle
// cluster; a resource's nodes keep that order at run time. Collectives of
// a process group and sends/receives of one (peer, tag) keep ascending id
// (their matching order).
//
// The host thread (host nodes without a stream) becomes the program's host:
// its nodes in order as prefix sums of their durations, a node with
// dependencies on other nodes a gate; a node on the GPU side is issued at
// the last host node it depends on (through metadata nodes), and can start
// once that node ended. The main compute stream (stream 0 or no stream, else
// the lowest) is the program's compute stream: runs of back-to-back kernels
// -- each depending only on the previous one and its own launch, launched
// with nothing else issued and no host wait between -- become one segment
// with its launch-bound tail. Kernels of other streams, copies and host work
// with a stream run as local operations of fixed duration; each process
// group of the graph is a channel of its own (slot k: the rank's k-th group,
// ReplayJob), each (send/recv, peer, tag) a stream.
//
// Units: nanoseconds. Ownership: labels point into the template's trace.
// Thread safety: compile_program is pure.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/program.h"
#include "workloads/chakra/replay_template.h"

namespace clustersim::workloads::chakra::replay {

struct CompiledGraph {
  Program program;
  // By node: its op (-1: metadata or host-thread nodes) and host position
  // (host-thread nodes: their index in host order; -1 otherwise).
  std::vector<int32_t> op_of;
  std::vector<int32_t> host_index;
  std::vector<int32_t> gate_host;   // by gate: the host index of its node
  std::vector<int32_t> node_of_op;  // by op: its first node (-1: a host marker)
  std::vector<int32_t> order;       // the nodes in their static order
  std::vector<int32_t> pred_begin;  // by node, + 1: its dependencies in preds
  std::vector<int32_t> preds;
};

CompiledGraph compile_program(const Template& t);

}  // namespace clustersim::workloads::chakra::replay
