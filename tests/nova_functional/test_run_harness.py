"""The runner's handling of a worker that hangs: the test runs once
more in a new worker, and the report says it hung."""

import os
import pathlib
import sys

from tests.nova_functional import run, workers

FAKE_WORKER = (pathlib.Path(__file__).resolve().parent / "fake_side"
               / "hanging_worker.py")


def _run(tmp_path, monkeypatch, names):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    os.symlink(sys.executable, venv / "bin" / "python")
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("FAKE_WORKER_MARKS", str(marks))
    monkeypatch.setattr(workers, "WORKER", FAKE_WORKER)
    monkeypatch.setattr(run, "TEST_DEADLINE_S", 1)
    one = run.Run(venv, "upstream", names, 1, tmp_path / "logs")
    return one, one.execute()


def test_a_test_that_hung_once_is_run_again_and_named(tmp_path, monkeypatch):
    one, results = _run(tmp_path, monkeypatch, ["passes", "hangs_once"])

    assert results["hangs_once"]["status"] == "pass"
    assert results["hangs_once"]["hung_before"] == 1
    assert "hung_before" not in results["passes"]
    hang, = one.hangs["hangs_once"]
    assert "said nothing in 1 s" in pathlib.Path(hang["kept"]).read_text()
    lines = run.report_lines(results, [], 1.0)
    assert "HUNG 1x, then pass when run again: hangs_once" in lines
    assert lines[-1] == "2 passed, 0 failed"


def test_a_test_that_hangs_again_fails(tmp_path, monkeypatch):
    one, results = _run(tmp_path, monkeypatch, ["hangs_always", "passes"])

    assert results["hangs_always"]["status"] == "error"
    assert results["hangs_always"]["hung_before"] == run.HANG_RERUNS
    assert "said nothing in 1 s" in results["hangs_always"]["details"]
    assert results["passes"]["status"] == "pass"
    assert run.report_lines(results, [], 1.0)[-1] == "1 passed, 1 failed"
