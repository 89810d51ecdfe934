// Jobs for chakra replay (chakra_replay.h): the traces of k ranks replayed
// as captured, or mapped onto N ranks (`clustersim replay --scale-to N`), so
// that a trace from 8 or 16 GPUs predicts the step of a data-parallel job on
// thousands.
//
// Scaling model (k traced ranks -> N ranks, N a multiple of k). The traced
// job is read as a device mesh whose outermost dimension is data parallel
// (torchtitan's [replica, shard, tp], the step simulator's layout): the
// scaled job repeats that dimension N / k times as often.
//  * Rank r' = c * k + r (c = 0 .. N/k - 1) replays the graph of traced rank
//    r = r' mod k. The graphs are shared: a rank holds only the index of its
//    template, so N may be large (16,384 ranks cost a few MiB).
//  * A process group that spans the traced job -- its members, sorted, are
//    l, l + q, l + 2q, ... covering every q-th rank (q * size = k; the world
//    is q = 1) -- is a data-parallel group: it widens to every q-th rank of
//    the scaled job, N / q members {l + j q} (FSDP's world group becomes all
//    N ranks; HSDP's replica groups grow to N / g members for shard groups
//    of g).
//  * Every other group (HSDP shard groups, TP groups, any group that does
//    not span the job) keeps its size and members: it is repeated in each
//    copy c as the group of ranks {m + c k}. The shard and TP groups thus
//    keep their place inside nodes, and their count grows N / k times.
//  * Without communicator groups every process group is the whole world and
//    widens to N ranks.
//  * Sizes: every collective keeps its nccl-tests size. For a fixed model
//    the nccl-tests size of a sharded collective (all_gather's total output,
//    reduce_scatter's total input) is the unit's whole tensor whatever the
//    group size -- each rank's shard shrinks as the group grows -- and an
//    all_reduce or broadcast moves the same buffer: widening a group changes
//    the collective's time only through its geometry and contention. In the
//    named form that size is comm_size; in the standard form (chakra_trace.h
//    TraceForm) an all_gather's comm_size is a traced rank's shard, and its
//    output is comm_size x the traced group's size (ReplayJob::gather_members)
//    for the widened group too.
//  * Compute is kept: each rank keeps its micro-batch (weak scaling of the
//    global batch). Kernels whose work shrinks with the shard (the optimizer
//    step and gradient scaling on a 1 / N shard, when the widened group is
//    the FSDP shard group) keep their traced time: an overestimate, small
//    next to the forward and backward.
//  * send/recv stay inside their copy: a traced peer p of rank c k + r is
//    rank c k + p (pipeline stages are not widened).
// Memory per rank (the shard shrinking) is not modelled by a replay.
//
// The job's form is decided by detect_trace_form (chakra_trace.h) on the k
// traces and their groups. Groups are shown in messages by pg_name, with the
// clustersim_pg_desc of their collectives when the traces give one
// ("3 (shard_0)", "3 (shard_0, copy 2)").
//
// Errors (sim::ConfigError): N not a positive multiple of k, a group naming
// a rank outside the traces or a rank twice, a collective whose pg_name is
// not in the groups or names a group without the rank, a bad or
// inconsistent clustersim_trace_form.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>

#include "workloads/chakra/chakra_replay.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {

// The job replaying `traces` (k ranks) on `ranks` ranks (k: as captured,
// every group as given, in its order; a multiple of k: scaled as above,
// widened groups in ascending rank order). The job refers to `traces`,
// which must outlive it.
ReplayJob build_replay_job(std::span<const Trace> traces, const CommGroups& groups, int64_t ranks);
// The same for k traced ranks sharing graphs (chakra_trace.h JobTraces):
// each distinct graph becomes one template. The job refers to what
// `traces` views, which must outlive it.
ReplayJob build_replay_job(const JobTraces& traces, const CommGroups& groups, int64_t ranks);

}  // namespace clustersim::workloads::chakra
