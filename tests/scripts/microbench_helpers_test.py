#!/usr/bin/env python3
"""ctest microbench_helpers: the parts of scripts/microbench/ that need no GPU
and no PyTorch: the hardware-name rule, size lists, busbw factors, group
layouts, reading `clustersim kernels --csv`, the shape plans, FLOP counts, and
the CSV writer producing files the clustersim readers accept (the collective
CSV through `clustersim validate`; the GEMM and attention CSVs against the
rules of calibration/measurement_csv.cc for_each_csv_row).

    python3 tests/scripts/microbench_helpers_test.py path/to/clustersim
"""

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MICROBENCH = os.path.join(REPO, "scripts", "microbench")
sys.path.insert(0, MICROBENCH)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import attention  # noqa: E402
import collectives  # noqa: E402
import comm_overlap  # noqa: E402
import common  # noqa: E402
import gemm  # noqa: E402
import memory_kernels  # noqa: E402
import profile_step  # noqa: E402
import sm_occupancy  # noqa: E402
import sustained_clock  # noqa: E402

CLUSTERSIM = os.environ.get("CLUSTERSIM", os.path.join(REPO, "build", "bin", "clustersim"))
LLAMA_8B = os.path.join(REPO, "scenarios", "llama3_8b_fsdp_8xh100.yaml")


def kernels_csv():
    return common.run_clustersim_kernels(CLUSTERSIM, LLAMA_8B)


def parse_like_compute_model(text, required):
    """The rules of calibration/measurement_csv.cc for_each_csv_row: '#' lines and blank
    lines skipped, the first other line the header holding `required`, every
    row with as many fields as the header. Returns dicts of the rows."""
    header = None
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.strip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if header is None:
            header = fields
            missing = [c for c in required if c not in header]
            assert not missing, f"header {header} lacks {missing}"
            continue
        assert len(fields) == len(header), f"{line!r}: {len(fields)} fields, header {len(header)}"
        rows.append(dict(zip(header, fields)))
    assert header is not None
    return rows


class HardwareName(unittest.TestCase):
    def test_rule(self):
        cases = {
            "NVIDIA H100 80GB HBM3": "H100-SXM",
            "NVIDIA H100 PCIe": "H100-PCIe",
            "NVIDIA H100 NVL": "H100-NVL",
            "NVIDIA H200": "H200-SXM",
            "NVIDIA H200 NVL": "H200-NVL",
            "NVIDIA A100-SXM4-80GB": "A100-SXM",
            "NVIDIA A100-SXM4-40GB": "A100-SXM",
            "NVIDIA A100-PCIE-40GB": "A100-PCIe",
            "NVIDIA A100 80GB PCIe": "A100-PCIe",
            "Tesla V100-SXM2-32GB": "V100-SXM",
            "Tesla V100S-PCIE-32GB": "V100S-PCIe",
            "NVIDIA B200": "B200-SXM",
            "NVIDIA GH200 480GB": "GH200",
            "NVIDIA L40S": "L40S",
            "NVIDIA A10G": "A10G",
            "NVIDIA GeForce RTX 4090": "RTX4090",
            "": "unknown-gpu",
        }
        for name, expected in cases.items():
            self.assertEqual(common.hardware_from_gpu_name(name), expected, name)

    def test_nvml_handle_without_nvml(self):
        # No GPU driver here (or no pynvml): no module, and the reason instead of a handle.
        with unittest.mock.patch.dict(sys.modules, {"pynvml": None}):
            nvml, why = common.nvml_handle(0)
            with common.ClockSampler(0) as clock:
                pass
        self.assertIsNone(nvml)
        self.assertIsInstance(why, ImportError)
        self.assertIsNone(clock.median())  # the sm_clock_mhz column stays empty

    def test_hardware_and_output(self):
        import argparse
        with tempfile.TemporaryDirectory() as tmp:
            given = os.path.join(tmp, "sub", "out.csv")
            args = argparse.Namespace(hardware=None, output=given)
            self.assertEqual(common.hardware_and_output(args, "gemm.csv", "NVIDIA H200"),
                             ("H200-SXM", given))
            self.assertTrue(os.path.isdir(os.path.join(tmp, "sub")))  # made before measuring
            args = argparse.Namespace(hardware="MI300X", output=given)
            self.assertEqual(common.hardware_and_output(args, "gemm.csv", "NVIDIA H200")[0],
                             "MI300X")
            args = argparse.Namespace(hardware=None, output=given)
            self.assertEqual(common.hardware_and_output(args, "gemm.csv")[0], "cpu")
        # Without --output: the dated folder of the label, lower case.
        self.assertTrue(common.default_output_path("H200-SXM", "gemm.csv").endswith(
            "_h200-sxm" + os.sep + "gemm.csv"))
        args = argparse.Namespace(hardware=None, output=None)
        with unittest.mock.patch.object(common, "check_writable") as checked:
            _, output = common.hardware_and_output(args, "gemm.csv", "NVIDIA H200")
        self.assertEqual(output, common.default_output_path("H200-SXM", "gemm.csv"))
        checked.assert_called_once_with(output)


class Sizes(unittest.TestCase):
    def test_int_lists(self):
        self.assertEqual(common.parse_int_list("1024..16384", "--square"),
                         [1024, 2048, 4096, 8192, 16384])
        self.assertEqual(common.parse_int_list("1000..5000", "--square"), [1024, 2048, 4096])
        self.assertEqual(common.parse_int_list("64,128", "--head-dim"), [64, 128])
        self.assertEqual(common.parse_int_list("512", "--seq"), [512])
        for bad in ("0..8", "16..8", "abc", "", "64,-1", "3..3"):
            with self.assertRaises(common.InputError) as e:
                common.parse_int_list(bad, "--square")
            self.assertIn("--square", str(e.exception))

    def test_bytes(self):
        self.assertEqual(common.parse_bytes("8", "--min-bytes"), 8)
        self.assertEqual(common.parse_bytes("64K", "--min-bytes"), 65536)
        self.assertEqual(common.parse_bytes("1M", "--min-bytes"), 1 << 20)
        self.assertEqual(common.parse_bytes("8G", "--max-bytes"), 8 << 30)
        self.assertEqual(common.parse_bytes("1GiB", "--max-bytes"), 1 << 30)
        self.assertEqual(common.parse_bytes("2gb", "--max-bytes"), 2 << 30)
        for bad in ("0", "-1", "x", "", "1X", "K"):
            with self.assertRaises(common.InputError):
                common.parse_bytes(bad, "--max-bytes")

    def test_powers_of_two(self):
        self.assertEqual(common.powers_of_two_between(8, 64), [8, 16, 32, 64])
        self.assertEqual(common.powers_of_two_between(9, 15), [])


class Collectives(unittest.TestCase):
    def test_busbw_factors(self):
        self.assertAlmostEqual(collectives.busbw_factor("all_reduce", 8), 1.75)
        self.assertAlmostEqual(collectives.busbw_factor("all_gather", 8), 0.875)
        self.assertAlmostEqual(collectives.busbw_factor("reduce_scatter", 16), 15 / 16)
        self.assertEqual(collectives.busbw_factor("all_reduce", 1), 0)
        with self.assertRaises(ValueError):
            collectives.busbw_factor("broadcast", 8)

    def test_effective_bytes(self):
        self.assertEqual(collectives.effective_bytes("all_gather", 8, 8, 2), 0)
        self.assertEqual(collectives.effective_bytes("all_gather", 1024, 8, 2), 1024)
        self.assertEqual(collectives.effective_bytes("reduce_scatter", 1000, 3, 2), 996)
        self.assertEqual(collectives.effective_bytes("all_reduce", 9, 8, 2), 8)

    def test_layouts(self):
        self.assertEqual(collectives.group_layout(4, 4, "world"), [[0, 1, 2, 3]])
        self.assertEqual(collectives.group_layout(16, 8, "consecutive"),
                         [list(range(8)), list(range(8, 16))])
        strided = collectives.group_layout(16, 2, "strided")
        self.assertEqual(len(strided), 8)
        self.assertEqual(strided[0], [0, 8])
        self.assertEqual(strided[7], [7, 15])
        self.assertEqual(collectives.members_per_node([0, 8], 8), 1)
        self.assertEqual(collectives.members_per_node(list(range(16)), 8), 8)
        self.assertEqual(collectives.members_per_node([0, 1, 2, 3], 8), 4)
        with self.assertRaises(common.InputError):
            collectives.members_per_node(list(range(12)), 8)
        with self.assertRaises(common.InputError):
            collectives.group_layout(16, 3, "consecutive")

    def test_args(self):
        args = collectives.parse_args(["--group-size", "8", "--max-bytes", "1M"])
        self.assertEqual(args.layout, "consecutive")
        self.assertEqual(args.max_bytes, 1 << 20)
        self.assertEqual(args.ops, list(collectives.OPS))
        self.assertEqual(collectives.parse_args(["--ops", "all_reduce,all_gather"]).ops,
                         ["all_gather", "all_reduce"])

    def test_csv_is_read_by_clustersim_validate(self):
        rows = [collectives.result_row("all_reduce", 8, 8, 1 << 20, 30.5, "", "world in-place"),
                collectives.result_row("all_gather", 8, 8, 1 << 20, 25.0, "", "world"),
                collectives.result_row("reduce_scatter", 16, 8, 1 << 24, 150.25, "Ring", "x")]
        self.assertEqual(rows[0][4:7], ("30.50", "34.38", "60.16"))
        self.assertEqual(rows[2][4], "150.2")
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "sub", "collectives.csv")
            common.write_csv_atomically(path, ["# a test file, not a measurement"],
                                        collectives.HEADER, rows)
            self.assertEqual(os.listdir(os.path.dirname(path)), ["collectives.csv"])
            done = subprocess.run(
                [CLUSTERSIM, "validate", os.path.join(REPO, "scenarios", "dgx_h100.yaml"), path],
                capture_output=True, text=True, check=False)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("cases=3 ", done.stdout)


class KernelShapes(unittest.TestCase):
    def test_reads_clustersim_kernels_csv(self):
        gemms, attn = common.read_kernel_shapes(kernels_csv(), "kernels")
        self.assertEqual(len(gemms), 15)
        self.assertEqual(gemms[0], common.GemmShape("qkv_proj", "bf16", 16384, 6144, 4096, 32))
        self.assertEqual(len(attn), 1)
        self.assertEqual(attn[0], common.AttentionConfig(
            "attention+attention.bwd", "bf16", 2, 8192, 32, 8, 128, True, ("fwd", "bwd"), 64))

    def test_bad_files(self):
        with self.assertRaises(common.InputError) as e:
            common.read_kernel_shapes("# c\nhardware,dtype,m,n,k,tflops\n", "bad.csv")
        self.assertIn("bad.csv:2: expected the header of 'clustersim kernels", str(e.exception))
        text = kernels_csv().splitlines()
        text[2] = text[2].replace(",16384,", ",-3,", 1)
        text[3] = text[3].replace(",true,", ",yes,", 1)
        with self.assertRaises(common.InputError) as e:
            common.read_kernel_shapes("\n".join(text), "k.csv")
        self.assertIn("k.csv:3: m: expected a positive integer, found '-3'", str(e.exception))
        self.assertIn("k.csv:4: causal: expected true or false, found 'yes'", str(e.exception))
        with self.assertRaises(common.InputError):
            common.read_kernel_shapes("", "empty.csv")
        with self.assertRaises(common.InputError):
            common.read_kernel_shapes_file("/nonexistent/kernels.csv")

    def test_missing_binary(self):
        with self.assertRaises(common.InputError) as e:
            common.run_clustersim_kernels("/nonexistent/clustersim", LLAMA_8B)
        self.assertIn("--clustersim", str(e.exception))
        with self.assertRaises(common.InputError) as e:
            common.run_clustersim_kernels(CLUSTERSIM, "/nonexistent.yaml")
        self.assertIn("failed", str(e.exception))


class Plans(unittest.TestCase):
    def test_gemm_plan_merges_scenario_and_square_shapes(self):
        with tempfile.TemporaryDirectory() as folder:
            shapes = os.path.join(folder, "kernels.csv")
            with open(shapes, "w", encoding="utf-8") as f:
                f.write(kernels_csv())
            args = gemm.parse_args(["--shapes", shapes, "--square", "1024..4096"])
            planned, dtype, _ = gemm.plan(args)
        self.assertEqual(dtype, "bf16")
        self.assertEqual(len(planned), 15 + 3)
        self.assertEqual(planned[0], (16384, 6144, 4096, 32, "qkv_proj"))
        self.assertEqual(planned[-1], (4096, 4096, 4096, None, "square_4096"))

    def test_gemm_plan_from_scenario(self):
        args = gemm.parse_args(["--scenario", LLAMA_8B, "--clustersim", CLUSTERSIM,
                                "--set", "workload.parallelism.tp=2", "--dtype", "fp16"])
        warning = io.StringIO()
        with contextlib.redirect_stderr(warning):
            planned, dtype, what = gemm.plan(args)
        self.assertIn("warning: measuring in fp16, the shapes are bf16", warning.getvalue())
        self.assertEqual(dtype, "fp16")
        self.assertEqual(planned[0], (16384, 3072, 4096, 32, "qkv_proj"))
        self.assertIn("clustersim kernels", what)

    def test_attention_sweep_and_flops(self):
        configs, _ = attention.plan(attention.parse_args([]))
        self.assertEqual(len(configs), 6 * 2 * 2)  # seq 512..16384, head_dim 64 and 128, causal
        first = configs[0]
        self.assertEqual((first.batch, first.seq, first.heads, first.head_dim, first.causal),
                         (32, 512, 32, 64, False))
        self.assertEqual(attention.attention_flops(2, 32, 8192, 128, True, "fwd"), 2.0**40)
        self.assertEqual(attention.attention_flops(2, 32, 8192, 128, True, "fwd_bwd"),
                         3.5 * 2.0**40)
        self.assertEqual(attention.attention_flops(1, 1, 4, 8, False, "fwd"), 4 * 16 * 8)

    def test_attention_plan_from_scenario(self):
        args = attention.parse_args(["--scenario", LLAMA_8B, "--clustersim", CLUSTERSIM])
        configs, _ = attention.plan(args)
        self.assertEqual(len(configs), 1)
        self.assertEqual(configs[0][:6], (2, 8192, 32, 8, 128, True))

    def test_profile_step_helpers(self):
        self.assertEqual(profile_step.llama_ffn(4096), 11008)  # Llama 2 7B
        self.assertEqual(profile_step.parse_rank_list("all", 3), [0, 1, 2])
        self.assertEqual(profile_step.parse_rank_list("8,0", 16), [0, 8])
        for bad in ("16", "x", ""):
            with self.assertRaises(common.InputError):
                profile_step.parse_rank_list(bad, 16)
        args = profile_step.parse_args(["--hidden", "1024", "--heads", "8"])
        self.assertEqual((args.kv_heads, args.ffn), (8, 2816))


class ProfileWorkload(unittest.TestCase):
    def test_workload_yaml_is_a_valid_scenario_section(self):
        for argv in ([], ["--fsdp", "1", "--checkpointing", "full", "--compile", "--layers", "2"],
                     ["--checkpointing", "selective", "--optimizer", "fused"]):
            args = profile_step.parse_args(argv)
            scenario = ("name: profiled\ndescription: profile_step.py\n"
                        f"hardware: {os.path.join(REPO, 'scenarios', 'hardware', 'h100.yaml')}\n"
                        "cluster:\n  nodes: 1\n  node: hgx_h100\n"
                        + profile_step.workload_yaml(args, 8))
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "scenario.yaml")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(scenario)
                done = subprocess.run([CLUSTERSIM, "kernels", path, "--csv"],
                                      capture_output=True, text=True, check=False)
            self.assertEqual(done.returncode, 0, done.stderr)
            gemms, attn = common.read_kernel_shapes(done.stdout, "profiled")
            # q, k, v fused: n = (16 + 2 * 8) * 128 for hidden 2048, 16 heads, 8 KV heads.
            self.assertEqual(gemms[0][2:5], (4096, 4096, 2048))
            self.assertEqual(attn[0].heads, 16)
            self.assertEqual(attn[0].kv_heads, 8)


class MemoryKernels(unittest.TestCase):
    def test_optimizer_rows_step_over_whole_llama_blocks(self):
        # Llama-3-8B's block: wq, wo 4096^2; wk, wv 1024 x 4096; w1, w3, w2
        # 14336 x 4096; two norms of 4096: 218,112,000 parameters.
        block = memory_kernels.llama_block_shapes(4096, 14336)
        self.assertEqual(sum(memory_kernels._numel(s) for s in block), 218_112_000)
        shapes = memory_kernels.parameter_shapes(436_000_000, 4096, 14336)
        self.assertEqual(sum(memory_kernels._numel(s) for s in shapes), 436_224_000)
        self.assertEqual(len(memory_kernels.parameter_shapes(1, 4096, 14336)), len(block))

    @unittest.skipIf(importlib.util.find_spec("torch") is None, "no torch here")
    def test_bytes_are_counted_as_the_model_counts_them(self):
        import torch
        args = memory_kernels.parse_args(["--tokens", "8", "--hidden", "16", "--ffn", "32",
                                          "--vocab", "40", "--optimizer-params", "1",
                                          "--device", "cpu"])
        cases = {c[0]: c for c in memory_kernels.kernel_cases(torch, args, torch.device("cpu"))}
        E, R, Ef, L = 8 * 16, 8, 8 * 32, 8 * 40
        self.assertEqual(cases["rmsnorm.to_fp32"][4], 6 * E)            # bf16 read, fp32 written
        self.assertEqual(cases["rmsnorm.mean"][4], 4 * E + 4 * R)
        self.assertEqual(cases["rmsnorm.mul_weight"][4], 4 * E + 2 * 16)
        self.assertEqual(cases["swiglu.mul"][4], 6 * Ef)
        self.assertEqual(cases["cross_entropy.log_softmax.bwd"][4], 12 * L)
        params = sum(memory_kernels._numel(s)
                     for s in memory_kernels.parameter_shapes(1, 16, 32))
        self.assertEqual(cases["adamw_fused"][4], 28 * params)


class SustainedClock(unittest.TestCase):
    def test_summary_compares_the_last_half_with_the_first_window(self):
        rows = [("1.0", "680.0", "1515", "3201", "690", "52", "0x4"),
                ("2.0", "676.0", "1500", "3201", "691", "55", "0x4"),
                ("3.0", "672.0", "1485", "3201", "691", "58", "0x4"),
                ("4.0", "674.0", "1470", "3201", "689", "59", "0x4")]
        lines = sustained_clock.summary(rows, [("max_sm_clock_mhz", "1980")])
        self.assertEqual(lines[0], "first window 680.0 TFLOP/s; median of the last 2 windows "
                         "673.0 TFLOP/s (0.990 of the first)")
        self.assertEqual(lines[1], "median SM clock of the last 2 windows 1478 MHz "
                         "(0.746 of the maximum 1980 MHz)")
        self.assertEqual(lines[2], "median power of the last 2 windows 690 W")

    def test_without_sensors_the_rates_alone(self):
        rows = [("1.0", "500.0", "", "", "", "", ""), ("2.0", "400.0", "", "", "", "", "")]
        self.assertEqual(sustained_clock.summary(rows, []),
                         ["first window 500.0 TFLOP/s; median of the last 1 windows 400.0 "
                          "TFLOP/s (0.800 of the first)"])


class SmOccupancy(unittest.TestCase):
    def test_every_run_has_its_baseline(self):
        args = sm_occupancy.parse_args(["--held", "16,8"])
        self.assertEqual(args.held, [0, 8, 16])
        self.assertEqual(sm_occupancy.parse_args(["--gemm", "64X32x16"]).gemm, [(64, 32, 16)])
        self.assertIsNone(sm_occupancy.parse_args(["--attention", "none"]).attention)

    def test_bad_arguments_name_the_flag(self):
        for argv, flag in ((["--held", "8,-1"], "--held"), (["--gemm", "64x32"], "--gemm"),
                           (["--holders", "sm,warp"], "--holders"),
                           (["--attention", "1,32,0,128"], "--attention"),
                           (["--iters", "0"], "--iters")):
            with self.assertRaisesRegex(common.InputError, flag):
                sm_occupancy.parse_args(argv)

    def test_a_holder_covers_the_region_only_if_every_cta_does(self):
        holders = [(100, 900, 3), (90, 950, 7), (100, 900, 3)]
        self.assertEqual(sm_occupancy.coverage((100, 900), holders), (2, True))
        self.assertEqual(sm_occupancy.coverage((99, 900), holders), (2, False))
        self.assertEqual(sm_occupancy.coverage((100, 901), holders), (2, False))

    def test_the_holder_kernel_compiles_where_nvrtc_is(self):
        try:
            nvrtc = sm_occupancy.nvrtc_library()
        except common.InputError:
            self.skipTest("no NVRTC on this machine")
        ptx = sm_occupancy.compile_ptx(sm_occupancy.KERNELS_CU, 90, nvrtc).decode()
        self.assertIn(".entry hold(", ptx)
        self.assertIn(".entry stamp(", ptx)
        self.assertIn("%globaltimer", ptx)
        self.assertIn("%smid", ptx)


class CommOverlap(unittest.TestCase):
    def test_arguments(self):
        args = comm_overlap.parse_args(["--ctas", "16,0,4,16", "--bytes", "1M"])
        self.assertEqual(args.ctas, [0, 4, 16])
        self.assertEqual(args.bytes, 2**20)
        self.assertEqual(args.ops, ["all_gather", "reduce_scatter"])
        for argv, flag in ((["--ctas", "8,-2"], "--ctas"), (["--ops", "all_reduce"], "--ops"),
                           (["--gemm", "1x2x0"], "--gemm"), (["--warmup", "-1"], "--warmup")):
            with self.assertRaisesRegex(common.InputError, flag):
                comm_overlap.parse_args(argv)

    def test_element_count_is_whole_per_rank(self):
        # 1,000,000 bytes of bf16 over 6 ranks: 500,000 elements, 83,333 each.
        self.assertEqual(comm_overlap.element_count(1_000_000, 6), 499_998)
        with self.assertRaisesRegex(common.InputError, "--bytes"):
            comm_overlap.element_count(10, 8)

    def test_collectives_outlast_the_region(self):
        # 5 ms pause + 2 x 1.5 ms x 20 calls = 65 ms, half again: 97.5 ms of 4 ms calls.
        self.assertEqual(comm_overlap.calls_to_cover(1.5, 20, 4.0), 25)
        self.assertEqual(comm_overlap.calls_to_cover(0.001, 1, 1000.0), 2)

    def test_summary_is_the_mean_over_ranks(self):
        # Two ranks: kernels 1.0 and 1.2 ms alone, 1.3 and 1.5 beside; collectives
        # 2.0 and 2.2 alone, 2.4 and 2.6 beside; every rank covered.
        row = comm_overlap.summary([2.2, 2.8, 4.2, 5.0, 1], 2)
        self.assertEqual(row["kernel_alone_us"], "1100")
        self.assertEqual(row["kernel_beside_us"], "1400")
        self.assertEqual(row["slowdown"], "1.2727")
        self.assertEqual(row["comm_slowdown"], "1.1905")
        self.assertEqual(row["valid"], "yes")
        self.assertEqual(comm_overlap.summary([2.2, 2.8, 4.2, 5.0, 0], 2)["valid"], "no")


class Writer(unittest.TestCase):
    def test_significant(self):
        self.assertEqual(common.significant(794.51), "794.5")
        self.assertEqual(common.significant(0.012345), "0.01235")
        self.assertEqual(common.significant(12345.6), "12346")
        self.assertEqual(common.significant(30.5), "30.50")
        with self.assertRaises(ValueError):
            common.significant(0)

    def test_rejects_commas_and_bad_rows(self):
        with self.assertRaises(ValueError):
            common.csv_text([], ("a", "b"), [("x,y", 1)])
        with self.assertRaises(ValueError):
            common.csv_text([], ("a", "b"), [(1,)])

    def test_gemm_and_attention_layouts_match_the_readers(self):
        comments = common.comment_lines("test", [("gpu", "none, a test")], ["not a measurement"])
        gemm_text = common.csv_text(comments, gemm.HEADER, [
            ("H100-SXM", "bf16", 16384, 6144, 4096, "700.1", "torch-matmul", "1177.88", 32,
             "qkv_proj", "1485"),
            ("H100-SXM", "bf16", 1024, 1024, 1024, "300.0", "torch-matmul", "7.16", None,
             "square_1024", None)])
        self.assertTrue(gemm_text.startswith("# test\n# gpu: none, a test\n# not a measurement\n"))
        rows = parse_like_compute_model(
            gemm_text, ("hardware", "dtype", "m", "n", "k", "tflops", "source"))
        self.assertEqual(list(gemm.HEADER[:7]),
                         ["hardware", "dtype", "m", "n", "k", "tflops", "source"])
        self.assertEqual(rows[1]["count_per_step"], "")
        for row in rows:
            self.assertGreater(float(row["tflops"]), 0)
            self.assertGreater(int(row["m"]), 0)
        attention_text = common.csv_text(comments, attention.HEADER, [
            ("H100-SXM", "FA2", "fwd_bwd", 128, "true", 8192, "300.0", 2, 32, 8, "bf16", "1.00",
             32, "attention", "1965")])
        rows = parse_like_compute_model(
            attention_text, ("hardware", "kernel", "pass", "head_dim", "causal", "seq", "tflops"))
        self.assertIn(rows[0]["pass"], ("fwd", "fwd_bwd"))
        self.assertIn(rows[0]["causal"], ("true", "false"))


class ProcessGroup(unittest.TestCase):
    """common.nccl_process_group: the bracket of every torchrun script."""

    class FakeDist:
        def __init__(self):
            self.calls = []

        def init_process_group(self, backend):
            self.calls.append(("init", backend))

        def barrier(self, device_ids):
            self.calls.append(("barrier", device_ids))

        def destroy_process_group(self):
            self.calls.append(("destroy",))

    def test_a_body_that_ends_waits_for_every_rank_then_destroys_the_group(self):
        dist = self.FakeDist()
        with common.nccl_process_group(dist, 3):
            dist.calls.append(("body",))
        self.assertEqual(dist.calls,
                         [("init", "nccl"), ("body",), ("barrier", [3]), ("destroy",)])

    def test_a_body_that_raises_destroys_the_group_without_waiting(self):
        dist = self.FakeDist()
        with self.assertRaises(ValueError):
            with common.nccl_process_group(dist, 0):
                raise ValueError("bad")
        self.assertEqual(dist.calls, [("init", "nccl"), ("destroy",)])


class ReadByCalibrate(unittest.TestCase):
    """The reference measurements (scenarios/measurements/compute/) written
    again through the scripts' writer and layouts, with their extra columns,
    are what `clustersim calibrate` fits."""

    @staticmethod
    def reference_rows(name):
        path = os.path.join(REPO, "scenarios", "measurements", "compute", name)
        with open(path, encoding="utf-8") as f:
            rows = common._csv_lines(f.read())
            header = next(rows)[1]
            return [dict(zip(header, fields)) for _, fields in rows]

    def test_gemm_and_attention_csvs(self):
        gemm_rows = [
            (r["hardware"], r["dtype"], r["m"], r["n"], r["k"], r["tflops"], "torch-matmul",
             common.significant(2 * int(r["m"]) * int(r["n"]) * int(r["k"])
                                / float(r["tflops"]) / 1e6), None, "square", None)
            for r in self.reference_rows("gemm.csv") if r["hardware"] == "H100-SXM"]
        attention_rows = [
            (r["hardware"], r["kernel"], r["pass"], r["head_dim"], r["causal"], r["seq"],
             r["tflops"], 16384 // int(r["seq"]), 2048 // int(r["head_dim"]),
             2048 // int(r["head_dim"]), "bf16", "1.0", None, "sweep", None)
            for r in self.reference_rows("attention.csv") if r["hardware"] == "H100-SXM"]
        self.assertGreater(len(gemm_rows), 3)
        self.assertGreater(len(attention_rows), 10)
        with tempfile.TemporaryDirectory() as folder:
            comments = ["# reference data rewritten by microbench_helpers_test.py"]
            common.write_csv_atomically(os.path.join(folder, "gemm.csv"), comments, gemm.HEADER,
                                        gemm_rows)
            common.write_csv_atomically(os.path.join(folder, "attention.csv"), comments,
                                        attention.HEADER, attention_rows)
            done = subprocess.run(
                [CLUSTERSIM, "calibrate", os.path.join(folder, "gemm.csv"),
                 os.path.join(folder, "attention.csv"), "--base",
                 os.path.join(REPO, "scenarios", "hardware", "h100.yaml"),
                 "-o", os.path.join(folder, "profile.yaml")],
                capture_output=True, text=True, check=False)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertTrue(os.path.isfile(os.path.join(folder, "profile.yaml")))
        cases = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()
                 if line.startswith(("gemm ", "attention "))}
        self.assertEqual(cases, {"gemm": str(len(gemm_rows)),
                                 "attention": str(len([r for r in attention_rows
                                                       if r[1] == "FA2"]))})


class CommandLines(unittest.TestCase):
    """The scripts as a user runs them, without torch where possible."""

    def run_script(self, name, *args):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
            env.pop(key, None)
        return subprocess.run([sys.executable, os.path.join(MICROBENCH, name), *args],
                              capture_output=True, text=True, env=env, check=False)

    def test_bad_shapes_file_exits_1(self):
        with tempfile.TemporaryDirectory() as folder:
            bad = os.path.join(folder, "bad.csv")
            with open(bad, "w", encoding="utf-8") as f:
                f.write("a,b\n1,2\n")
            for script in ("gemm.py", "attention.py"):
                done = self.run_script(script, "--shapes", bad)
                self.assertEqual(done.returncode, 1, done.stderr)
                self.assertIn(f"{script}: error: {bad}:1: expected the header", done.stderr)

    def test_usage_errors_exit_2(self):
        self.assertEqual(self.run_script("gemm.py").returncode, 2)
        self.assertEqual(self.run_script("gemm.py", "--square", "8", "--iters", "0").returncode, 2)
        self.assertEqual(self.run_script("collectives.py", "--ops", "alltoall").returncode, 2)
        self.assertEqual(self.run_script("attention.py", "--passes", "bwd").returncode, 2)
        self.assertEqual(self.run_script("profile_step.py", "--heads", "7").returncode, 2)
        self.assertEqual(self.run_script("memory_kernels.py", "--tokens", "0").returncode, 2)
        self.assertEqual(
            self.run_script("sustained_clock.py", "--seconds", "1", "--window", "5").returncode, 2)
        self.assertEqual(self.run_script("gemm.py", "--square", "8", "--dtype", "fp4").returncode,
                         2)

    def test_distributed_scripts_need_torchrun(self):
        for script in ("collectives.py", "profile_step.py", "comm_overlap.py"):
            done = self.run_script(script)
            self.assertEqual(done.returncode, 1, done.stderr)
            self.assertIn("torchrun", done.stderr)

    @unittest.skipIf(importlib.util.find_spec("torch") is not None,
                     "torch is installed here")
    def test_without_torch_says_so(self):
        done = self.run_script("gemm.py", "--square", "1024")
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("gemm.py: error: gemm.py needs PyTorch", done.stderr)
        for script in ("memory_kernels.py", "sustained_clock.py"):
            done = self.run_script(script)
            self.assertEqual(done.returncode, 1, done.stderr)
            self.assertIn(f"{script}: error: {script} needs PyTorch", done.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        CLUSTERSIM = sys.argv.pop(1)
    unittest.main(verbosity=1)
