#!/usr/bin/env python3
"""Time compute kernels alone and beside NCCL collectives, by NCCL's CTA count.

    torchrun --standalone --nproc-per-node 8 scripts/microbench/comm_overlap.py
    torchrun --standalone --nproc-per-node 8 scripts/microbench/comm_overlap.py \\
        --ctas 0,8,32 --ops all_gather --bytes 512M

What it tests: the compute slowdown that `gpu.comm_overlap_slowdown` (1.10
in the shipped profiles, a placeholder) stands for, where it happens. FSDP
runs its all-gathers and reduce-scatters on a stream of their own while the
compute stream runs GEMMs; NCCL runs a collective as one CTA per channel,
and each CTA keeps an SM and draws memory bandwidth. For every collective
of --ops and every CTA count of --ctas (NCCL's minCTAs = maxCTAs = that
count, set through the process group's options; 0 leaves NCCL's own
choice), each rank times each kernel alone, the collective alone, and both
at once: the collective back to back on a side stream through the whole
timed region of the kernel, which runs --iters times on the compute stream
after a 5 ms pause. A row is valid only if, on every rank, the
collectives' span (CUDA events on the side stream) covered the kernel's
region. The collective's own slowdown, which the compute inflicts on it,
comes with it. scripts/microbench/sm_occupancy.py measures the SM part
alone on one GPU.

Kernels: those of sm_occupancy.py (bf16 GEMMs of --gemm, causal flash
attention of --attention, a copy and SiLU of --elements values).

Output (rank 0; -o FILE, default scenarios/measurements/<date>_<hardware>/
comm_overlap.csv), written atomically: '#' lines (GPU, driver, versions,
host, date, command, world and NCCL_* settings), then
    hardware,op,bytes,gpus,ctas,kernel,shape,kernel_alone_us,kernel_beside_us,
    slowdown,comm_alone_us,comm_beside_us,comm_slowdown,valid,source
(one line). bytes as nccl-tests counts them (all_gather: the output,
reduce_scatter: the input), bf16; ctas is `default` for NCCL's choice; a
kernel time is the mean over ranks of each rank's median call, a
collective's the mean over ranks of its mean call (beside: the span of the
back-to-back calls over their count). Exit codes: 0 ok, 1 bad input, 2
usage.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import sm_occupancy  # noqa: E402

PROG = "comm_overlap.py"
OPS = ("all_gather", "reduce_scatter")
HEADER = ("hardware", "op", "bytes", "gpus", "ctas", "kernel", "shape", "kernel_alone_us",
          "kernel_beside_us", "slowdown", "comm_alone_us", "comm_beside_us", "comm_slowdown",
          "valid", "source")
EXAMPLE = "torchrun --standalone --nproc-per-node 8 scripts/microbench/comm_overlap.py"
# The compute stream's pause before the timed region, so that every rank's
# collectives are running when it starts: about 5 ms of GPU cycles.
LEAD_CYCLES = 10_000_000
LEAD_MS = 5.0


def parse_args(argv):
    parser = common.argument_parser(
        PROG, __doc__, needs="PyTorch with CUDA and NCCL, launched by torchrun on 2 or more GPUs")
    parser.add_argument("--ops", default=",".join(OPS),
                        help="collectives beside the compute (default %(default)s)")
    parser.add_argument("--bytes", default="256M",
                        help="size of each collective, nccl-tests' count (default %(default)s)")
    parser.add_argument("--ctas", default="0,4,8,16,32",
                        help="NCCL CTA counts, one group each; 0: NCCL's choice "
                             "(default %(default)s)")
    sm_occupancy.add_kernel_arguments(parser)
    parser.add_argument("-o", "--output", help="output CSV written by rank 0")
    args = parser.parse_args(argv)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    if not ops or any(o not in OPS for o in ops):
        raise common.InputError(f"--ops: expected some of {','.join(OPS)}, found {args.ops!r}")
    args.ops = [o for o in OPS if o in ops]
    args.bytes = common.parse_bytes(args.bytes, "--bytes")
    args.ctas = common.parse_count_set(args.ctas, "--ctas", "CTA counts (0: NCCL's choice)")
    sm_occupancy.check_kernel_arguments(args)
    return args


def element_count(nbytes, world):
    """bf16 elements of the collective's full buffer: `nbytes` rounded down
    to a whole number of elements per rank (as nccl-tests does)."""
    count = nbytes // 2 // world * world
    if count == 0:
        raise common.InputError(f"--bytes: {nbytes} bytes give no bf16 element per rank of "
                                f"{world}")
    return count


def calls_to_cover(kernel_ms, iters, comm_ms):
    """Back-to-back collectives that outlast the pause and the kernel's
    region by half again, even if the kernel runs twice as slow beside them."""
    span = LEAD_MS + 2.0 * kernel_ms * iters
    return max(2, math.ceil(1.5 * span / comm_ms))


def summary(sums, world):
    """The row's figures from the sums over ranks of (kernel alone, kernel
    beside, collective alone, collective beside) in ms and the smallest of
    the ranks' coverage flags."""
    kernel_alone, kernel_beside, comm_alone, comm_beside = (s / world for s in sums[:4])
    return {
        "kernel_alone_us": common.significant(kernel_alone * 1e3),
        "kernel_beside_us": common.significant(kernel_beside * 1e3),
        "slowdown": f"{kernel_beside / kernel_alone:.4f}",
        "comm_alone_us": common.significant(comm_alone * 1e3),
        "comm_beside_us": common.significant(comm_beside * 1e3),
        "comm_slowdown": f"{comm_beside / comm_alone:.4f}",
        "valid": "yes" if sums[4] >= 1 else "no",
    }


# ---- Measuring (needs torch) ----


def cta_group(dist, world, ctas):
    """The process group whose collectives run `ctas` CTAs (None: the
    default group, NCCL's choice). Every rank creates the groups in the
    same order."""
    if ctas == 0:
        return None
    options = dist.ProcessGroupNCCL.Options()
    if not hasattr(options, "config") or not hasattr(options.config, "max_ctas"):
        raise common.InputError("this PyTorch cannot set NCCL's CTA count per process group "
                                "(ProcessGroupNCCL.Options().config.max_ctas); run with --ctas 0 "
                                "and NCCL_MIN_CTAS / NCCL_MAX_CTAS in the environment instead")
    options.config.min_ctas = ctas
    options.config.max_ctas = ctas
    return dist.new_group(list(range(world)), pg_options=options)


def collective(torch, dist, op, count, world, group, device):
    if op == "all_gather":
        source = torch.zeros(count // world, dtype=torch.bfloat16, device=device)
        target = torch.empty(count, dtype=torch.bfloat16, device=device)
        return lambda: dist.all_gather_into_tensor(target, source, group=group)
    source = torch.zeros(count, dtype=torch.bfloat16, device=device)
    target = torch.empty(count // world, dtype=torch.bfloat16, device=device)
    return lambda: dist.reduce_scatter_tensor(target, source, op=dist.ReduceOp.SUM, group=group)


def median_call_ms(torch, fn, args, stream):
    with torch.cuda.stream(stream):  # cuda_times_ms records on the current stream
        return common.median(common.cuda_times_ms(torch, fn, args.warmup, args.iters))


def beside(torch, kernel, comm, calls, args, compute, side):
    """(kernel's median call ms, the collectives' mean call ms, whether
    they covered the kernel's region) with both running at once."""
    comm_start = torch.cuda.Event(enable_timing=True)
    comm_end = torch.cuda.Event(enable_timing=True)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
    with torch.cuda.stream(side):
        comm_start.record(side)
        for _ in range(calls):
            comm()
        comm_end.record(side)
    with torch.cuda.stream(compute):
        torch.cuda._sleep(LEAD_CYCLES)
        for start, end in zip(starts, ends):
            start.record(compute)
            kernel()
            end.record(compute)
    torch.cuda.synchronize()
    covered = comm_start.elapsed_time(starts[0]) >= 0 and ends[-1].elapsed_time(comm_end) >= 0
    return (common.median([s.elapsed_time(e) for s, e in zip(starts, ends)]),
            comm_start.elapsed_time(comm_end) / calls, covered)


def measure(torch, dist, args, device, rank, world, hardware):
    compute = torch.cuda.current_stream(device)
    side = torch.cuda.Stream(device)
    count = element_count(args.bytes, world)
    cases = sm_occupancy.kernel_cases(torch, args, device)
    rows = []
    for ctas in args.ctas:
        group = cta_group(dist, world, ctas)
        for op in args.ops:
            comm = collective(torch, dist, op, count, world, group, device)
            comm_alone = median_call_ms(torch, comm, args, side)
            for name, shape, kernel in cases:
                dist.barrier(device_ids=[device.index])
                kernel_alone = median_call_ms(torch, kernel, args, compute)
                calls = torch.tensor([calls_to_cover(kernel_alone, args.iters, comm_alone)],
                                     dtype=torch.int64, device=device)
                dist.all_reduce(calls, op=dist.ReduceOp.MAX)  # every rank runs as many
                dist.barrier(device_ids=[device.index])
                kernel_beside, comm_beside, covered = beside(
                    torch, kernel, comm, int(calls.item()), args, compute, side)
                sums = torch.tensor([kernel_alone, kernel_beside, comm_alone, comm_beside],
                                    dtype=torch.float64, device=device)
                dist.all_reduce(sums)
                flag = torch.tensor([1 if covered else 0], dtype=torch.int64, device=device)
                dist.all_reduce(flag, op=dist.ReduceOp.MIN)
                if rank != 0:
                    continue
                row = summary(sums.tolist() + [flag.item()], world)
                rows.append((hardware, op, count * 2, world, ctas or "default", name, shape,
                             row["kernel_alone_us"], row["kernel_beside_us"], row["slowdown"],
                             row["comm_alone_us"], row["comm_beside_us"], row["comm_slowdown"],
                             row["valid"], args.source))
                print(f"{op} ctas {ctas or 'default'} {name} {shape}: x{row['slowdown']} "
                      f"(collective x{row['comm_slowdown']}, valid {row['valid']})", flush=True)
    return rows


def main(argv=None):
    args = parse_args(argv)
    rank, world, local_rank, local_world = common.torchrun_environment(EXAMPLE)
    if world < 2:
        raise common.InputError(f"expected at least 2 ranks (torchrun --nproc-per-node), "
                                f"found {world}")
    torch = common.import_torch(PROG)
    common.require_cuda(torch)
    import torch.distributed as dist

    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    hardware = args.hardware or common.hardware_from_gpu_name(torch.cuda.get_device_name(device))
    output = None
    if rank == 0:  # a bad output folder fails before measuring (torchrun then stops every rank)
        output = args.output or common.default_output_path(hardware, "comm_overlap.csv")
        common.check_writable(output)
    with common.nccl_process_group(dist, local_rank):
        rows = measure(torch, dist, args, device, rank, world, hardware)
        if rank == 0:
            comments = common.comment_lines(
                "clustersim scripts/microbench/comm_overlap.py: compute kernels alone and "
                "beside back-to-back NCCL collectives on a side stream; slowdown = beside / "
                "alone", common.environment(torch, local_rank),
                [f"world {world} ranks, {local_world} per node; one group of every rank per "
                 f"CTA count; median of {args.iters} calls after {args.warmup} warm-up calls",
                 common.nccl_settings()])
            common.write_measurements(output, comments, HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(common.run_main(PROG, main))
