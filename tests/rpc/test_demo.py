"""make demo's scheduler part (python -m rpc.demo) on the example cloud:
the service starts in the background on the in-process transport,
answers through the conductor client with alternates, claims, and stops
cleanly."""

import json
import pathlib
import subprocess
import sys

from gantt.cmd import manage

REPO = pathlib.Path(__file__).parents[2]
EXAMPLE = REPO / "etc/examples/cluster.yaml"


def test_demo_schedules_the_example_cloud(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OS_DEFAULT__STATE_PATH", raising=False)
    config = tmp_path / "gantt.conf"
    config.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n")
    args = ["--config-file", str(config)]
    assert manage.main(args + ["cloud", "load", str(EXAMPLE)]) == 0
    capsys.readouterr()
    assert manage.main(args + ["cloud", "show", "--format", "json"]) == 0
    before = json.loads(capsys.readouterr().out)["totals"]["VCPU"]["used"]

    done = subprocess.run([sys.executable, "-m", "rpc.demo", *args],
                          cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.count("select_destinations:") == 5
    # Five instances placed with VCPU (the PCPU one takes none), each
    # chosen host listed with an alternate from its cell but the zone
    # east one (compute-1 is the only VCPU host there).
    assert out.count("  chosen ") == 6
    assert out.count("  alternate ") == 4
    assert "NoValidHost: No valid host was found." in out
    assert out.rstrip().endswith("gantt-scheduler stopped cleanly")

    assert manage.main(args + ["cloud", "show", "--format", "json"]) == 0
    after = json.loads(capsys.readouterr().out)["totals"]["VCPU"]["used"]
    assert after == before + 5
