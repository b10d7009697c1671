"""benchmarks.scheduler.Unbuilt: the decision log's floor, every line as
long as a record's, but no record built after the first."""

from benchmarks import scheduler as bench
from scheduler import decision_log, manager


def test_unbuilt_writes_a_records_length_and_builds_one_record(
        tmp_path, monkeypatch):
    store = bench._store("sqlite:///" + str(tmp_path / "p.sqlite"))
    bench.build(store, 5)
    scheduler = manager.Scheduler(store.conf, store=store)
    built = []
    record = decision_log.record
    monkeypatch.setattr(decision_log, "record",
                        lambda *a: built.append(1) or record(*a))
    directory = tmp_path / "decisions"
    unbuilt = bench.Unbuilt(bench.default_log(str(directory)))
    scheduler.decisions = unbuilt
    try:
        bench._decide(scheduler, 3, 1)
    finally:
        scheduler.decisions = None
        unbuilt.log.close()
        scheduler.close()
        store.dispose()
    [path] = decision_log.files(str(directory))
    with open(path, "rb") as f:
        header, *lines = f.read().splitlines(keepends=True)
    assert header.startswith(decision_log.HEADER_START)
    assert built == [1]
    assert lines == [unbuilt.line] * 3
    # The line is a whole record of the first decision.
    first = decision_log.decode(lines[0])
    assert first["result"] == "placed" and first["hosts"] == 5
