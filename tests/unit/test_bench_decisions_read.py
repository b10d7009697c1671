"""benchmarks.decisions_read, short: a log of 2,000 real records, each
command run as its own process, what each printed counted."""

import json
import subprocess
import sys

from tests.unit.test_bench_start import REPO


def test_short_run_reads_the_log_it_wrote(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.decisions_read", "--records",
         "2000", "--dir", str(tmp_path / "log")],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["records"] == 2000 and out["files"] == 9
    commands = out["commands"]
    # A header line and the records listed.
    assert commands["list --limit 5"]["lines"] == 6
    # 2,000 records a second apart, the newest now: all in the hour.
    assert commands["list --since 1h"]["lines"] == 2001
    [host] = [c for c in commands if c.startswith("list --host")]
    assert commands[host]["lines"] == 4
    assert commands["show UUID"]["lines"] > 10
    for figures in commands.values():
        assert figures["wall_s"] > 0 and figures["peak_rss_mb"] > 0
    assert not (tmp_path / "log").exists()


def test_a_directory_given_keeps_what_else_it_holds(tmp_path):
    (tmp_path / "mine.txt").write_text("kept")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.decisions_read", "--records",
         "100", "--dir", str(tmp_path)], cwd=REPO, capture_output=True,
        text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_a_directory_with_a_log_is_refused(tmp_path):
    (tmp_path / "decisions.1.jsonl").write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.decisions_read", "--dir",
         str(tmp_path)], cwd=REPO, capture_output=True, text=True,
        timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(
        f"--dir: {tmp_path} holds a decision log already")
    assert (tmp_path / "decisions.1.jsonl").exists()
