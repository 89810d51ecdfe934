#!/usr/bin/env python3
"""Time NCCL collectives through torch.distributed for clustersim (nccl-tests style).

    # one node of 8 GPUs, the whole world as one group:
    torchrun --standalone --nproc-per-node 8 scripts/microbench/collectives.py
    # 4 nodes (run on every node; HOST is node 0), FSDP-like groups of 8 per node:
    torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
        scripts/microbench/collectives.py --group-size 8
    # the same nodes, HSDP replica-like groups: one GPU per node, same local rank:
    torchrun ... scripts/microbench/collectives.py --group-size 4 --layout strided

Collectives (--ops): all_gather (dist.all_gather_into_tensor), reduce_scatter
(dist.reduce_scatter_tensor, sum) and all_reduce (dist.all_reduce, sum; in
place: torch.distributed has no out-of-place all_reduce, and NCCL's in-place
and out-of-place times agree within noise in nccl-tests).

Sizes: powers of two from --min-bytes to --max-bytes (8, 64K, 1M, 8G: binary
units), in the nccl-tests convention: all_gather counts the total OUTPUT
bytes, reduce_scatter the total INPUT bytes, all_reduce the buffer. A size is
rounded down to a whole number of elements per rank (as nccl-tests does); one
that rounds to zero is skipped. Elements are --dtype (default bf16, what FSDP
moves).

Groups (--layout):
  world        one group of every rank (default without --group-size);
  consecutive  groups of --group-size consecutive ranks, all running at once
               (FSDP shard groups inside a node, or over whole nodes);
  strided      --group-size ranks spaced world/group-size apart (rank j, j+s,
               j+2s, ...), all running at once (HSDP replica groups: one GPU
               per node when s is the GPUs per node).
The groups of rank 0's layout must have the same number of members on each of
their nodes (ranks are on nodes in torchrun's order: rank // LOCAL_WORLD_SIZE).

Timing: per size, --warmup calls, then --repeats batches of --iters calls
between two CUDA events on every rank; a rank's time is the median batch's
mean per call, and the reported time is the mean over all ranks (nccl-tests
averages over ranks too). algbw = bytes / time; busbw = algbw x factor:
all_reduce 2(n-1)/n, all_gather and reduce_scatter (n-1)/n (n = group size).

Output (rank 0, -o FILE, default scenarios/measurements/<date>_<hardware>/
collectives_<layout>_<n>.csv), written atomically: '#' lines (GPU, driver,
versions, host, date, command, world and NCCL_* settings), then the layout
calibration/collective_measurements.h reads:
    op,gpus,gpus_per_node,bytes,time_us,algbw_GBps,busbw_GBps,algo,note
gpus = group size, gpus_per_node = its members per node, algo = $NCCL_ALGO
when set. Exit codes: 0 ok, 1 bad input, 2 usage.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "collectives.py"
OPS = ("all_gather", "reduce_scatter", "all_reduce")
LAYOUTS = ("world", "consecutive", "strided")
HEADER = ("op", "gpus", "gpus_per_node", "bytes", "time_us", "algbw_GBps", "busbw_GBps", "algo",
          "note")
ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}


def busbw_factor(op, n):
    """nccl-tests' bus bandwidth factor for a group of n ranks."""
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) / n
    raise ValueError(f"unknown collective {op!r}")


def effective_bytes(op, size, n, element_bytes):
    """`size` rounded down to what the collective can move: whole elements,
    and for all_gather / reduce_scatter the same number on each of n ranks."""
    if op == "all_reduce":
        return size // element_bytes * element_bytes
    return size // (n * element_bytes) * n * element_bytes


def group_layout(world, group_size, layout):
    """The rank lists of every group (every rank in exactly one)."""
    if layout == "world":
        return [list(range(world))]
    if group_size < 2 or world % group_size:
        raise common.InputError(
            f"--group-size {group_size}: expected a divisor of the world size {world}, at least 2")
    if layout == "consecutive":
        return [list(range(start, start + group_size)) for start in range(0, world, group_size)]
    stride = world // group_size
    return [[j + i * stride for i in range(group_size)] for j in range(stride)]


def members_per_node(group, local_world):
    """How many of `group` share each of its nodes (the same on every node)."""
    per_node = {}
    for rank in group:
        per_node[rank // local_world] = per_node.get(rank // local_world, 0) + 1
    counts = set(per_node.values())
    if len(counts) != 1:
        raise common.InputError(
            f"the group {group} has {sorted(counts)} members on its nodes of {local_world} GPUs; "
            "expected the same number on each node (choose --group-size to divide the GPUs per "
            "node or be a multiple of it)")
    return counts.pop()


def result_row(op, n, per_node, nbytes, time_us, algo="", note=""):
    """One CSV row (HEADER order) from a measured time."""
    algbw = nbytes / (time_us * 1e-6) / 1e9
    busbw = algbw * busbw_factor(op, n)
    return (op, n, per_node, nbytes, common.significant(time_us), f"{algbw:.2f}", f"{busbw:.2f}",
            algo, note)


def parse_args(argv):
    parser = common.argument_parser(PROG, __doc__, needs="PyTorch with CUDA and NCCL")
    parser.add_argument("--ops", default=",".join(OPS),
                        help="comma-separated collectives (default %(default)s)")
    parser.add_argument("--min-bytes", default="8", help="smallest size (default %(default)s)")
    parser.add_argument("--max-bytes", default="4G", help="largest size (default %(default)s)")
    parser.add_argument("--group-size", type=int,
                        help="ranks per group (default: the whole world)")
    parser.add_argument("--layout", choices=LAYOUTS,
                        help="how groups are formed (default: world, or consecutive with "
                        "--group-size)")
    parser.add_argument("--dtype", choices=sorted(ELEMENT_BYTES), default="bf16",
                        help="element type (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls per size (default 5)")
    parser.add_argument("--iters", type=int, default=20, help="calls per timed batch (default 20)")
    parser.add_argument("--repeats", type=int, default=5, help="timed batches per size (default 5)")
    parser.add_argument("--hardware", help="the hardware part of the default output folder "
                        "(default: from the GPU name)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="output CSV written by rank 0 (default: scenarios/measurements/"
                        "<date>_<hardware>/collectives_<layout>_<n>.csv)")
    args = parser.parse_args(argv)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    unknown = [o for o in ops if o not in OPS]
    if not ops or unknown:
        parser.error(f"--ops: expected some of {','.join(OPS)}, found '{args.ops}'")
    args.ops = [o for o in OPS if o in ops]
    try:
        args.min_bytes = common.parse_bytes(args.min_bytes, "--min-bytes")
        args.max_bytes = common.parse_bytes(args.max_bytes, "--max-bytes")
    except common.InputError as e:
        parser.error(str(e))
    if args.max_bytes < args.min_bytes:
        parser.error("expected --max-bytes >= --min-bytes")
    if args.layout is None:
        args.layout = "world" if args.group_size is None else "consecutive"
    if args.layout != "world" and args.group_size is None:
        parser.error(f"--layout {args.layout} needs --group-size")
    if args.layout == "world" and args.group_size is not None:
        parser.error("--group-size needs --layout consecutive or strided")
    if args.warmup < 0 or args.iters < 1 or args.repeats < 1:
        parser.error("expected --warmup >= 0, --iters >= 1 and --repeats >= 1")
    if args.hardware is not None and ("," in args.hardware or "/" in args.hardware
                                      or not args.hardware.strip()):
        parser.error(f"--hardware: expected a label without commas or slashes, found "
                     f"'{args.hardware}'")
    return args


def measure(torch, dist, args, layout, device, rank, world):
    """Rank 0: the CSV rows (HEADER order) of its group; other ranks: []."""
    group, n, per_node, algo, note = layout
    dtype = common.torch_dtype(torch, args.dtype)
    element = ELEMENT_BYTES[args.dtype]
    rows = []
    for op in args.ops:
        for size in common.powers_of_two_between(args.min_bytes, args.max_bytes):
            nbytes = effective_bytes(op, size, n, element)
            if nbytes == 0:
                continue
            count = nbytes // element
            if op == "all_gather":
                source = torch.zeros(count // n, dtype=dtype, device=device)
                target = torch.empty(count, dtype=dtype, device=device)

                def call():
                    dist.all_gather_into_tensor(target, source, group=group)
            elif op == "reduce_scatter":
                source = torch.zeros(count, dtype=dtype, device=device)
                target = torch.empty(count // n, dtype=dtype, device=device)

                def call():
                    dist.reduce_scatter_tensor(target, source, op=dist.ReduceOp.SUM, group=group)
            else:
                source = torch.zeros(count, dtype=dtype, device=device)
                target = source

                def call():
                    dist.all_reduce(source, op=dist.ReduceOp.SUM, group=group)

            for _ in range(args.warmup):
                call()
            torch.cuda.synchronize()
            dist.barrier(device_ids=[device.index])
            batches = []
            for _ in range(args.repeats):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(args.iters):
                    call()
                end.record()
                torch.cuda.synchronize()
                batches.append(start.elapsed_time(end) / args.iters)
            mean = torch.tensor([common.median(batches)], dtype=torch.float64, device=device)
            dist.all_reduce(mean)  # summed over every rank of the world
            time_us = mean.item() / world * 1e3
            source = target = None
            if rank == 0:
                row = result_row(op, n, per_node, nbytes, time_us, algo,
                                 note + (" in-place" if op == "all_reduce" else ""))
                print(f"{op:>15} {n:>5} {nbytes:>13} {row[4]:>12} {row[5]:>10} {row[6]:>10}",
                      flush=True)
                rows.append(row)
    return rows


def main(argv=None):
    args = parse_args(argv)
    rank, world, local_rank, local_world = common.torchrun_environment(
        "torchrun --standalone --nproc-per-node 8 scripts/microbench/collectives.py")
    if world < 2:
        raise common.InputError(f"expected at least 2 ranks (torchrun --nproc-per-node), found {world}")
    groups = group_layout(world, args.group_size or world, args.layout)
    mine = next(g for g in groups if 0 in g)
    n = len(mine)
    per_node = members_per_node(mine, local_world)
    for g in groups:
        members_per_node(g, local_world)
    torch = common.import_torch(PROG)
    common.require_cuda(torch)
    import torch.distributed as dist

    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    output = None
    if rank == 0:  # a bad output folder fails before measuring (torchrun then stops every rank)
        hardware = args.hardware or common.hardware_from_gpu_name(
            torch.cuda.get_device_name(local_rank))
        name = f"collectives_{args.layout}_{n}.csv"
        output = args.output or common.default_output_path(hardware, name)
        common.check_writable(output)
    with common.nccl_process_group(dist, local_rank):
        group = None
        if args.layout != "world":
            for g in groups:  # every rank creates every group, in the same order
                pg = dist.new_group(g)
                if rank in g:
                    group = pg
        if rank == 0:
            print(f"{'op':>15} {'gpus':>5} {'bytes':>13} {'time_us':>12} {'algbw':>10} "
                  f"{'busbw':>10}  ({len(groups)} group(s) of {n}, {per_node} per node, "
                  f"{args.layout})", flush=True)
        algo = os.environ.get("NCCL_ALGO", "").replace(",", ";")
        note = f"{args.layout} groups={len(groups)} dtype={args.dtype}"
        rows = measure(torch, dist, args, (group, n, per_node, algo, note), device, rank, world)
        if rank == 0:
            env = common.environment(torch, local_rank)
            comments = common.comment_lines(
                "clustersim scripts/microbench/collectives.py: torch.distributed NCCL; bytes as "
                "nccl-tests (all_gather output, reduce_scatter input); time_us = mean over ranks "
                "of the median batch's mean per call", env,
                [f"world {world} ranks, {local_world} per node, {len(groups)} {args.layout} "
                 f"group(s) of {n} ({per_node} per node), all running at once; dtype "
                 f"{args.dtype}; {args.warmup} warm-up calls, {args.repeats} batches of "
                 f"{args.iters} calls per size",
                 common.nccl_settings()])
            common.write_measurements(output, comments, HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(common.run_main(PROG, main))
