"""gantt-simulate from the command line: run, compare, capacity, the
example files, and malformed inputs (exit 2, file and field named)."""

import argparse
import json
import os

import pytest
import yaml

from simulation import cli, config, runner
from simulation import cloud as cloud_mod
from simulation import workload as workload_mod

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                        "etc", "examples", "simulation")
CLOUD = {"providers": [
    {"name": f"h{i}", "compute": {"cell": "cell1"},
     "inventories": {"VCPU": 16, "MEMORY_MB": 32768, "DISK_GB": 400}}
    for i in range(4)]}
WORKLOAD = {
    "flavors": {"small": {"vcpus": 2, "memory_mb": 4096, "root_gb": 20}},
    "synthetic": {"seed": 5, "creates": 40,
                  "arrival": {"process": "fixed", "interval_s": 1},
                  "lifetime": {"distribution": "forever"}}}


def _write(tmp_path, name, data):
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.fixture
def files(tmp_path):
    return {"cloud": _write(tmp_path, "cloud.yaml", CLOUD),
            "workload": _write(tmp_path, "workload.yaml", WORKLOAD),
            "spread": _write(tmp_path, "spread.conf", "[filter_scheduler]\n"
                             "ram_weight_multiplier = 1.0\n"),
            "pack": _write(tmp_path, "pack.conf", "[filter_scheduler]\n"
                           "ram_weight_multiplier = -1.0\n"
                           "cpu_weight_multiplier = -1.0\n"
                           "disk_weight_multiplier = -1.0\n")}


def test_run_writes_the_report_and_prints_its_summary(files, tmp_path,
                                                      capsys):
    out = tmp_path / "report"
    code = cli.main(["run", "--cloud", files["cloud"], "--workload",
                     files["workload"], "--config-file", files["spread"],
                     "--out", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "report.html" in printed
    report = json.loads((out / "report.json").read_text())
    # 4 hosts of 16 vCPUs hold 32 smalls: 8 of the 40 are refused.
    assert report["figures"]["placed"] == 32
    assert report["figures"]["no_valid_host"] == 8
    assert report["inputs"]["config"] == files["spread"]
    for stem in ("utilisation", "failures", "host_fill", "stranded",
                 "latency"):
        assert (out / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
    assert "32" in printed


def test_compare_spread_against_pack(files, tmp_path, capsys):
    wl = dict(WORKLOAD, synthetic=dict(WORKLOAD["synthetic"], creates=6))
    workload = _write(tmp_path, "few.yaml", wl)
    out = tmp_path / "cmp"
    code = cli.main(["compare", files["spread"], files["pack"], "--cloud",
                     files["cloud"], "--workload", workload, "--out",
                     str(out), "--no-progress"])
    assert code == 0
    assert (out / "compare.html").exists()
    spread = json.loads((out / "a" / "report.json").read_text())
    pack = json.loads((out / "b" / "report.json").read_text())
    # Spreading puts the 6 smalls on all 4 hosts; packing fills one
    # host (8 fit) and leaves the other 3 empty.
    empty = [r["host_fill"]["VCPU"]["counts"][0] for r in (spread, pack)]
    assert empty == [0, 3]
    printed = capsys.readouterr().out
    # Both place all 6: the verdict says so before the table.
    assert "  Placed: same. Both placed 6 of 6 creates." in printed
    page = (out / "compare.html").read_text()
    assert '<a href="a/report.html">spread.conf</a>' in page
    assert '<a href="b/report.html">pack.conf</a>' in page


def test_capacity_from_a_cloud_file(files, capsys):
    code = cli.main(["capacity", "--cloud", files["cloud"], "--flavor",
                     "vcpus=4,memory_mb=4096,root_gb=100", "--format",
                     "json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    every = result["groups"][0]
    # Per host: 4 by vCPUs and disk, 8 by memory.
    assert every["group"] == "all hosts"
    assert every["fits"] == 16
    assert every["fits_by_class"] == {"VCPU": 16, "MEMORY_MB": 32,
                                      "DISK_GB": 16}
    assert every["runs_out_first"] == "DISK_GB"


def test_capacity_names_a_flavor_of_a_workload_file(files, capsys):
    code = cli.main(["capacity", "--cloud", files["cloud"], "--flavor",
                     "small", "--flavors", files["workload"]])
    assert code == 0
    text = capsys.readouterr().out
    assert "flavor small" in text
    assert "all hosts" in text


def test_capacity_reads_the_configured_database(tmp_path, capsys):
    db = tmp_path / "placement.sqlite"
    conf_path = _write(tmp_path, "gantt.conf",
                       f"[placement_database]\nconnection = sqlite:///{db}"
                       "\nsync_on_startup = true\n")
    conf = config.load(conf_path)
    from placement.db import store as store_mod
    store = store_mod.Store.open(conf)
    from cloudfile import loader
    loader.load(store, loader.parse(CLOUD, "cloud"))
    store.dispose()
    code = cli.main(["capacity", "--config-file", conf_path, "--flavor",
                     "vcpus=16,memory_mb=1024", "--format", "json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["groups"][0]["fits"] == 4


def test_the_examples_load():
    cloud = cloud_mod.read(os.path.join(EXAMPLES, "cloud.yaml"))
    assert len(cloud.hosts) == 160
    wl = workload_mod.read(os.path.join(EXAMPLES, "workload.yaml"))
    assert wl.describe()["creates"] == 6000
    for name in ("spread.conf", "pack.conf"):
        conf = config.load(os.path.join(EXAMPLES, name))
        assert conf.filter_scheduler.ram_weight_multiplier in (1.0, -1.0)


def _bad(tmp_path, files, which, content):
    paths = dict(files)
    paths[which] = _write(tmp_path, f"bad-{which}", content)
    return paths


@pytest.mark.parametrize("which, content, words", [
    ("cloud", {"providers": [{"name": "h", "inventories": {
        "VCPU": {"total": 0}}}]},
     "bad-cloud: providers[0].inventories.VCPU"),
    ("cloud", "providers: [unclosed\n", "bad-cloud: not valid YAML"),
    ("workload", dict(WORKLOAD, synthetic=dict(
        WORKLOAD["synthetic"], arrival={"process": "poisson",
                                        "rate_per_s": -1})),
     "bad-workload: synthetic.arrival.rate_per_s"),
    ("workload", {"flavors": WORKLOAD["flavors"], "events": [
        {"time": 0, "action": "delete", "instance": "x"}]},
     "bad-workload: events[0]"),
    ("spread", "[filter_scheduler]\nram_weight_multipler = 2\n",
     "bad-spread: [filter_scheduler] ram_weight_multipler: unknown "
     "option"),
    ("spread", "[filter_scheduler]\nhost_subset_size = many\n",
     "bad-spread: [filter_scheduler] host_subset_size"),
    ("spread", "[filter_scheduler]\nenabled_filters = NoSuchFilter\n",
     "bad-spread: [filter_scheduler] enabled_filters"),
    ("spread", "not an ini file\n", "bad-spread: cannot parse"),
], ids=["cloud-bad-total", "cloud-bad-yaml", "workload-bad-rate",
        "workload-delete-first", "config-unknown-option",
        "config-bad-value", "config-unknown-filter", "config-not-ini"])
def test_malformed_inputs_exit_2_naming_file_and_field(
        files, tmp_path, capsys, which, content, words):
    paths = _bad(tmp_path, files, which, content)
    code = cli.main(["run", "--cloud", paths["cloud"], "--workload",
                     paths["workload"], "--config-file", paths["spread"],
                     "--strict", "--out", str(tmp_path / "out"),
                     "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert words in err
    assert not (tmp_path / "out").exists()


def test_unknown_option_warns_and_runs_without_strict(files, tmp_path,
                                                     capsys):
    paths = _bad(tmp_path, files, "spread",
                 "[filter_scheduler]\nram_weight_multipler = 2\n")
    code = cli.main(["run", "--cloud", paths["cloud"], "--workload",
                     paths["workload"], "--config-file", paths["spread"],
                     "--out", str(tmp_path / "out"), "--no-progress"])
    assert code == 0
    err = capsys.readouterr().err
    assert ("gantt-simulate: warning: " + paths["spread"] +
            ": [filter_scheduler] ram_weight_multipler: unknown option "
            "(did you mean ram_weight_multiplier?)") in err
    assert (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize("argv, words", [
    (["run", "--cloud", "/nonexistent.yaml", "--workload", "W"],
     "/nonexistent.yaml"),
    (["capacity", "--cloud", "C", "--flavor", "vcpus=two"],
     "--flavor: vcpus: not a whole number"),
    (["capacity", "--cloud", "C", "--flavor", "m1.tiny"],
     "--flavors FILE"),
], ids=["missing-cloud", "flavor-not-a-number", "flavor-without-file"])
def test_bad_arguments_exit_2(files, capsys, argv, words):
    argv = [files.get(a.lower(), a) if a in ("C", "W") else a
            for a in argv]
    argv = [files["cloud"] if a == "C" else files["workload"] if a == "W"
            else a for a in argv]
    assert cli.main(argv) == 2
    assert words in capsys.readouterr().err


def test_schedulers_out_of_range(files, tmp_path, capsys):
    code = cli.main(["run", "--cloud", files["cloud"], "--workload",
                     files["workload"], "--schedulers", "0", "--out",
                     str(tmp_path / "o")])
    assert code == 2
    assert "--schedulers" in capsys.readouterr().err


def test_outcome_ignores_only_timing(files):
    conf = config.load(None)
    cloud = cloud_mod.read(files["cloud"])
    wl = workload_mod.read(files["workload"])
    report = runner.Simulation(conf, cloud, wl).run()
    assert set(report) - set(runner.outcome(report)) == {"timing",
                                                         "latency_ms"}


def test_same_seed_same_report_across_processes(files, tmp_path):
    # Separate interpreters with different hash seeds: nothing in a
    # decision may depend on set or dict iteration order.
    import subprocess
    import sys
    churn = dict(WORKLOAD, synthetic=dict(
        WORKLOAD["synthetic"], creates=60,
        lifetime={"distribution": "exponential", "mean_s": 20},
        server_groups={"fraction": 0.3, "size": 2,
                       "policies": {"anti-affinity": 1,
                                    "soft-affinity": 1}}))
    workload = _write(tmp_path, "churn.yaml", churn)
    outs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"r{hash_seed}"
        subprocess.run(
            [sys.executable, "-m", "simulation.cli", "run",
             "--cloud", files["cloud"], "--workload", workload,
             "--schedulers", "2", "--out", str(out), "--no-progress"],
            check=True, capture_output=True,
            env=dict(os.environ, PYTHONHASHSEED=hash_seed))
        outs.append(json.loads((out / "report.json").read_text()))
    assert runner.outcome(outs[0]) == runner.outcome(outs[1])
    assert outs[0]["figures"]["placed"] > 0


def test_an_unwritable_report_directory_is_an_error_not_a_trace(
        files, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = cli.main(["run", "--cloud", files["cloud"], "--workload",
                     files["workload"], "--out", str(blocker / "sub"),
                     "--no-progress"])
    assert code == 2
    assert capsys.readouterr().err == (
        f"gantt-simulate: --out {blocker / 'sub'}: {blocker} is a file, "
        "not a directory\n")
    assert sorted(os.listdir(tmp_path)) == ["cloud.yaml", "file", "pack.conf",
                                            "spread.conf", "workload.yaml"]


def test_an_out_in_proc_stops_before_the_simulation():
    # The example workload takes minutes to simulate: an answer within
    # the timeout can only come from the check made before it starts.
    import subprocess
    import sys
    done = subprocess.run(
        [sys.executable, "-m", "simulation.cli", "run",
         "--cloud", os.path.join(EXAMPLES, "cloud.yaml"),
         "--workload", os.path.join(EXAMPLES, "workload.yaml"),
         "--out", "/proc/x", "--no-progress"],
        capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr == ("gantt-simulate: --out /proc/x: cannot create "
                           "the report directory in /proc (No such file "
                           "or directory)\n")
    assert done.stdout == ""
    assert not os.path.exists("/proc/x")


def test_the_out_check_leaves_nothing_behind(tmp_path):
    # The check tries a directory where the report would go and takes
    # it away again; the report directory itself is not made yet.
    args = argparse.Namespace(out=str(tmp_path / "new" / "report"))
    cli._check_out_dir(args)
    assert os.listdir(tmp_path) == []
    (tmp_path / "old").mkdir()
    cli._check_out_dir(argparse.Namespace(out=str(tmp_path / "old")))
    assert os.listdir(tmp_path / "old") == []


def test_make_run_the_example_simulation(tmp_path, capsys):
    # What `make run` does, with the figures README.md quotes: the same
    # files and seed give them on any machine.
    out = tmp_path / "report"
    code = cli.main([
        "run", "--cloud", os.path.join(EXAMPLES, "cloud.yaml"),
        "--workload", os.path.join(EXAMPLES, "workload.yaml"),
        "--config-file", os.path.join(EXAMPLES, "spread.conf"),
        "--out", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Placed 5831 of 6000 creates (729 deletes); NoValidHost 169" \
        in printed
    assert "First NoValidHost at event 4320" in printed
    report = json.loads((out / "report.json").read_text())
    figures = report["figures"]
    assert figures["live_instances_end"] == 5111
    assert round(figures["first_failure"]["utilisation"]["MEMORY_MB"],
                 3) == 0.620
    assert round(figures["stranded"]["MEMORY_MB"]["fraction_of_capacity"],
                 3) == 0.235
    assert (out / "report.html").stat().st_size > 10000
