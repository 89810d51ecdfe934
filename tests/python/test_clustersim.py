"""The Python package against the CLI: the same figures, the same bytes, the
same errors as data. Run by ctest (python_tests) with PYTHONPATH=build/python
and CLUSTERSIM_BIN the binary of the same build."""

import json
import os
import subprocess
import tempfile
import threading
import time

import pytest

import clustersim

SOURCE = os.environ.get("CLUSTERSIM_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
BIN = os.environ.get("CLUSTERSIM_BIN", os.path.join(SOURCE, "build", "bin", "clustersim"))
DEFAULT = os.path.join(SOURCE, "scenarios", "llama3_8b_fsdp_8xh100.yaml")

# A small step: Llama-3-8B, FSDP over one HGX H100 node, sequence 1024.
SMALL = {
    "name": "small",
    "hardware": "h100.yaml",
    "cluster": {"nodes": 1, "node": "hgx_h100"},
    "workload": {"model": "llama3-8b", "seq_len": 1024, "local_batch": 1},
}
HARDWARE_DIR = os.path.join(SOURCE, "scenarios", "hardware")
GRID_64 = {"workload.seq_len": [256, 512, 768, 1024, 1280, 1536, 1792, 2048],
           "workload.local_batch": [1, 2, 3, 4, 5, 6, 7, 8]}


def cli_json(*args):
    """`clustersim ARGS --json F` through the binary; the JSON it wrote."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        subprocess.run([BIN, *args, "--json", out], check=True, capture_output=True)
        with open(out) as f:
            return json.load(f)


def pandas_installed():
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


def without_wall_time(result, *, file=True):
    """The result without what differs between identical runs: the wall
    time and, for scenarios given as dicts (written to a temporary file),
    the scenario's file name."""
    kept = {k: v for k, v in result.items() if k != "wall_s"}
    if not file and "scenario" in kept:
        kept["scenario"] = {k: v for k, v in kept["scenario"].items() if k != "file"}
    return kept


def test_run_gives_the_cli_figures():
    step = clustersim.run(DEFAULT)
    assert step["tokens_per_s_per_gpu"] > 0
    assert without_wall_time(step) == without_wall_time(cli_json("run", DEFAULT))
    assert "tokens/s" in step.report


def test_engine_stats_come_with_the_flag_and_add_up_to_the_events():
    step = clustersim.run(SMALL, directory=HARDWARE_DIR, engine_stats=True)
    stats = step["engine_stats"]
    kinds = ("segment_ends", "relooks", "group_starts", "transfer_begins", "transfer_ends",
             "latency_ends", "flow_solves", "local_ends")
    assert sum(stats[k] for k in kinds) == step["events"]
    assert "engine events by kind" in step.report
    assert "engine_stats" not in clustersim.run(SMALL, directory=HARDWARE_DIR)


def test_a_dict_scenario_runs_as_the_same_file(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(json.dumps(dict(SMALL, hardware=os.path.join(HARDWARE_DIR, "h100.yaml"))))
    from_dict = clustersim.run(SMALL, directory=HARDWARE_DIR)
    from_file = clustersim.run(str(path))
    assert without_wall_time(from_dict, file=False) == without_wall_time(from_file, file=False)


def test_overrides_as_keywords_and_as_a_dict_agree_and_change_the_step():
    base = clustersim.run(SMALL, directory=HARDWARE_DIR)
    by_keyword = clustersim.run(SMALL, directory=HARDWARE_DIR, workload__seq_len=2048)
    by_dict = clustersim.run(SMALL, {"workload.seq_len": 2048}, directory=HARDWARE_DIR)
    assert without_wall_time(by_keyword, file=False) == without_wall_time(by_dict, file=False)
    # Twice the tokens per step: a longer step.
    assert by_keyword["step_time_s"] > 1.5 * base["step_time_s"]


def test_a_bad_override_raises_a_config_error_with_its_parts():
    with pytest.raises(clustersim.ConfigError) as caught:
        clustersim.run(SMALL, directory=HARDWARE_DIR, workload__seq_len=-1)
    e = caught.value
    assert e.code == 1
    assert e.file == "--set workload.seq_len=-1"
    assert (e.line, e.column) == (0, 0)
    assert e.key == "workload.seq_len"
    assert e.expected.startswith("a positive")
    assert e.found == "'-1'"
    assert isinstance(e, ValueError)


def test_a_misspelt_key_of_a_dict_is_located_in_the_written_file():
    with pytest.raises(clustersim.ConfigError) as caught:
        clustersim.run(dict(SMALL, seeed=3), directory=HARDWARE_DIR)
    e = caught.value
    assert e.key == "seeed"
    # json.dump(indent=2) writes one top-level key per line, in dict order:
    # "{" then name, hardware, cluster (4 lines), workload (5 lines), seeed.
    assert e.line == 13
    assert e.column == 3
    assert "did you mean 'seed'" in e.diagnostics[0].message
    assert not e.diagnostics[0].defaulted
    assert str(e).startswith(e.file + ":13:3: error: seeed: unknown key")


def test_a_check_that_fails_on_a_default_points_at_the_section_and_says_so():
    # zbv needs 2 virtual stages; the scenario leaves the key at its default 1.
    bad = dict(SMALL, workload=dict(SMALL["workload"], parallelism={"pp": 2},
                                    pipeline={"schedule": "zbv"}))
    with pytest.raises(clustersim.ConfigError) as caught:
        clustersim.run(bad, directory=HARDWARE_DIR)
    d = next(d for d in caught.value.diagnostics if d.key == "workload.pipeline.virtual_stages")
    assert d.defaulted
    assert d.file.endswith(".yaml") and d.line > 0
    assert d.found == "1"
    assert str(d) == (f"{d.file}:{d.line}:{d.column}: error: workload.pipeline.virtual_stages "
                      "(not set: its default): expected 2 with schedule zbv, found 1")


def test_every_diagnostic_of_a_file_is_kept():
    bad = dict(SMALL, seeed=3, workload=dict(SMALL["workload"], seq_len="long"))
    with pytest.raises(clustersim.ConfigError) as caught:
        clustersim.run(bad, directory=HARDWARE_DIR)
    keys = [d.key for d in caught.value.diagnostics]
    assert "seeed" in keys and "workload.seq_len" in keys


def test_a_bad_option_raises_a_usage_error():
    with pytest.raises(clustersim.UsageError) as caught:
        clustersim.sweep(SMALL, "workload.local_batch=1,2", directory=HARDWARE_DIR, threads=0)
    assert caught.value.code == 2
    assert "option '--threads'" in str(caught.value)


def test_a_step_over_memory_raises_a_simulation_error():
    with pytest.raises(clustersim.SimulationError) as caught:
        clustersim.run(SMALL, directory=HARDWARE_DIR, workload__local_batch=64)
    assert "does not fit" in caught.value.stderr or "memory" in caught.value.stderr


def test_a_64_point_sweep_gives_the_cli_csv_and_its_data_frame(tmp_path):
    pandas = pytest.importorskip("pandas")
    table = clustersim.sweep(SMALL, GRID_64, directory=HARDWARE_DIR, threads=2)
    assert len(table) == 64
    scenario = tmp_path / "small.yaml"
    scenario.write_text(json.dumps(dict(SMALL, hardware=os.path.join(HARDWARE_DIR, "h100.yaml"))))
    csv_path = tmp_path / "sweep.csv"
    subprocess.run([BIN, "sweep", str(scenario), "-o", str(csv_path), "--threads", "1",
                    "--grid", "workload.seq_len=256,512,768,1024,1280,1536,1792,2048",
                    "--grid", "workload.local_batch=1,2,3,4,5,6,7,8"],
                   check=True, capture_output=True)
    # Same bytes whatever the thread count, from Python as from the CLI.
    assert table.csv == csv_path.read_text()
    frame = table.frame()
    assert frame.equals(pandas.read_csv(csv_path))
    assert list(frame.columns) == table.columns
    first = table[0]
    assert (first["workload.seq_len"], first["workload.local_batch"]) == (256, 1)
    assert first["tokens_per_s_per_gpu"] == pytest.approx(frame["tokens_per_s_per_gpu"][0])


def test_sweep_fitting_only_skips_what_does_not_fit_with_its_peak():
    grid = {"workload.local_batch": [1, 64]}
    every = clustersim.sweep(SMALL, grid, directory=HARDWARE_DIR, threads=1)
    fitting = clustersim.sweep(SMALL, grid, directory=HARDWARE_DIR, threads=1, fitting_only=True)
    assert [r["status"] for r in every] == ["ok", "out_of_memory"]
    assert [r["status"] for r in fitting] == ["ok", "skipped"]
    assert fitting[0] == every[0]
    assert fitting[1]["peak_memory_bytes"] == every[1]["peak_memory_bytes"]
    assert fitting[1]["reason"].startswith("does not fit in GPU memory (--fitting-only")


def test_the_gil_is_released_while_a_command_runs():
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    thread = threading.Thread(target=tick)
    thread.start()
    try:
        # 64 steps on one thread, twice: about 0.15 s on a 2-core VM.
        started = time.monotonic()
        for _ in range(2):
            clustersim.sweep(SMALL, GRID_64, directory=HARDWARE_DIR, threads=1)
        ended = time.monotonic()
    finally:
        stop.set()
        thread.join()
    # The other thread can only record a tick while it holds the GIL: ticks
    # strictly inside the call mean the call let go of it.
    inside = [t for t in ticks if started + 0.005 < t < ended - 0.005]
    assert ended - started > 0.03
    assert len(inside) >= 10


def test_campaign_gives_the_json_and_one_row_per_trial():
    scenario = os.path.join(SOURCE, "tests", "golden", "campaign_small", "scenario.yaml")
    result = clustersim.campaign(scenario, campaign__trials=3)
    assert len(result.trials) == 3
    expected = without_wall_time(cli_json("campaign", scenario, "--set", "campaign.trials=3"))
    assert without_wall_time(result) == expected


def test_collective_gives_one_row_per_size():
    table = clustersim.collective(SMALL, directory=HARDWARE_DIR, op="all_gather",
                                  min_bytes="1MiB", max_bytes="8MiB")
    sizes = [row[table.columns[0]] for row in table]
    assert len(table) == 4  # 1, 2, 4 and 8 MiB, a factor of 2 apart
    assert sizes == sorted(sizes)


def test_validate_of_a_training_run_compares_with_run(tmp_path):
    runs = tmp_path / "runs.csv"
    runs.write_text("id,scenario,overrides,tokens_per_s_per_gpu,memory_gib,source\n"
                    f"default,{DEFAULT},,5762,,torchtitan\n")
    table = clustersim.validate(str(runs))
    assert len(table) == 1
    row = table[0]
    predicted = clustersim.run(DEFAULT)["tokens_per_s_per_gpu"]
    predicted_column = next(c for c in table.columns if c.startswith("predicted"))
    assert row[predicted_column] == pytest.approx(predicted, rel=1e-3)
    # Overrides apply to every run's scenario, as the CLI's --set does.
    compiled = clustersim.validate(str(runs), overrides={"workload.torch_compile": True})
    expected = clustersim.run(DEFAULT, {"workload.torch_compile": True})["tokens_per_s_per_gpu"]
    assert expected > predicted * 1.05
    assert compiled[0][predicted_column] == pytest.approx(expected, rel=1e-3)


def test_replay_of_an_exported_step_gives_the_cli_figures(tmp_path):
    scenario = tmp_path / "small.yaml"
    scenario.write_text(json.dumps(dict(SMALL, hardware=os.path.join(HARDWARE_DIR, "h100.yaml"))))
    clustersim.cli("export-chakra", str(scenario), "-o", str(tmp_path / "et"))
    prefix = str(tmp_path / "et" / "small")
    assert os.path.exists(prefix + ".0.et")
    replayed = clustersim.replay(str(scenario), prefix)
    assert replayed["step_time_s"] > 0
    expected = cli_json("replay", str(scenario), "--trace", prefix)
    assert without_wall_time(replayed) == without_wall_time(expected)
    # The replay of run's own step comes back close to run's step time.
    step = clustersim.run(str(scenario))
    assert replayed["step_time_s"] == pytest.approx(step["step_time_s"], rel=0.05)


def test_calibrate_writes_the_profile_the_cli_writes(tmp_path):
    measurements = os.path.join(SOURCE, "scenarios", "measurements", "dgx_h100_all_reduce_8gpu.csv")
    base = os.path.join(SOURCE, "scenarios", "dgx_h100.yaml")  # the cluster the rows ran on
    fitted = clustersim.calibrate(measurements, base=base)
    out = tmp_path / "profile.yaml"
    subprocess.run([BIN, "calibrate", measurements, "--base", base, "-o", str(out)],
                   check=True, capture_output=True)
    assert fitted["profile"] == out.read_text()
    assert fitted.report


def test_validate_of_collective_measurements_keeps_the_report():
    scenario = os.path.join(SOURCE, "scenarios", "dgx_h100.yaml")
    measured = os.path.join(SOURCE, "scenarios", "measurements", "dgx_h100_all_reduce_8gpu.csv")
    cases = clustersim.validate(scenario, [measured])
    assert len(cases) == 0 and cases.columns == []
    if pandas_installed():
        assert cases.frame().empty
    done = clustersim.cli("validate", scenario, measured)
    assert cases.report == done.stdout
    assert "median_abs_error=" in cases.report


def test_a_dict_scenario_names_a_shipped_profile_by_its_bare_name():
    bare = clustersim.run(dict(SMALL, hardware="h100"))
    by_path = clustersim.run(dict(SMALL, hardware=os.path.join(HARDWARE_DIR, "h100.yaml")))
    assert bare["step_time_s"] == by_path["step_time_s"]
    assert bare["cluster"]["hardware_profile"] == "h100"


def test_hardware_profile_names_the_shipped_ones():
    assert clustersim.hardware_profile("h100").endswith("scenarios/hardware/h100.yaml")
    with pytest.raises(ValueError, match="expected one of: .*h100"):
        clustersim.hardware_profile("h1000")


def test_import_writes_a_scenario_and_reports_the_configs_lines(tmp_path):
    config = os.path.join(SOURCE, "scenarios", "published", "configs", "tt_8b_h100.toml")
    done = clustersim.cli("import", "torchtitan", config, "--gpus", "8",
                          "--hardware", "h100_96gb_500w")
    assert "  local_batch: 2  # [training] batch_size\n" in done.stdout
    scenario = tmp_path / "tt8b.yaml"
    scenario.write_text(done.stdout)
    # The hardware path is relative to the folder the command ran in, not tmp_path's.
    result = clustersim.run(str(scenario), {"hardware": clustersim.hardware_profile(
        "h100_96gb_500w")})
    assert result["workload"]["global_batch"] == 16
    bad = tmp_path / "bad.toml"
    bad.write_text('[model]\nname = "llama3"\nflavor = "1B"\n')
    with pytest.raises(clustersim.ConfigError) as caught:
        clustersim.cli("import", "torchtitan", str(bad), "--gpus", "8", "--hardware", "h100")
    e = caught.value
    assert (e.file, e.line, e.column, e.key) == (str(bad), 3, 10, "model.flavor")
    assert e.found == "'1B'"
