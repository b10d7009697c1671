"""placement.rotating_file's queued lines (add): written a batch at a
time, in order with write()'s, and none lost to a close."""

import logging
import threading

from placement import rotating_file

LOG = logging.getLogger(__name__)
MESSAGES = ("cannot write %s: %s", "writing %s again")


def _file(tmp_path, **kw):
    return rotating_file.RotatingFile(
        tmp_path / "out.jsonl", b'{"header":1}', LOG, MESSAGES,
        flush_interval=3600, **kw)


def _lines(tmp_path):
    return (tmp_path / "out.jsonl").read_bytes().splitlines()[1:]


def test_a_batch_is_written_once_enough_lines_wait(tmp_path):
    out = _file(tmp_path)
    # The first line opens the file at once (it is there from then on).
    out.add(b"first\n")
    out._file.flush()
    assert _lines(tmp_path) == [b"first"]
    for n in range(rotating_file.QUEUED_LINES - 1):
        out.add(b"%d\n" % n)
    # Queued: not in the file, nor in its buffer, yet.
    out._file.flush()
    assert _lines(tmp_path) == [b"first"]
    out.add(b"last\n")
    out._file.flush()
    assert len(_lines(tmp_path)) == 1 + rotating_file.QUEUED_LINES
    out.close()


def test_added_and_written_lines_keep_their_order(tmp_path):
    out = _file(tmp_path)
    out.add(b"1\n")
    out.write(b"2\n")
    out.add(b"3\n")
    out.close()
    assert _lines(tmp_path) == [b"1", b"2", b"3"]


def test_lines_added_from_several_threads_are_all_written(tmp_path):
    out = _file(tmp_path, max_bytes=4000, backup_count=100)
    per_thread = 5 * rotating_file.QUEUED_LINES

    def add(name):
        for n in range(per_thread):
            out.add(b"%s-%d\n" % (name, n))

    threads = [threading.Thread(target=add, args=(b"t%d" % k,))
               for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.close()
    found = []
    # The oldest backup first, the current file last.
    for path in sorted(tmp_path.iterdir(), key=_age, reverse=True):
        assert path.stat().st_size <= 4000
        found += path.read_bytes().splitlines()[1:]
    assert len(found) == 4 * per_thread
    for k in range(4):
        mine = [line for line in found if line.startswith(b"t%d-" % k)]
        assert mine == [b"t%d-%d" % (k, n) for n in range(per_thread)]


def _age(path):
    # out.jsonl.N: the Nth newest backup; out.jsonl: 0, the newest.
    suffix = path.suffix[1:]
    return int(suffix) if suffix.isdigit() else 0


def test_a_lines_age_counts_from_the_time_its_caller_gives(tmp_path):
    # The writer's clock stands still; the caller's reads move on: the
    # file is rotated by the times given, before the line past half of
    # max_age.
    out = _file(tmp_path, max_age=10, backup_count=1, wall=lambda: 0.0)
    out.add(b"at 0\n", 0.0)
    out.add(b"at 4\n", 4.0)
    out.add(b"at 6\n", 6.0)
    out.close()
    backup = (tmp_path / "out.jsonl.1").read_bytes().splitlines()[1:]
    assert backup == [b"at 0", b"at 4"]
    assert _lines(tmp_path) == [b"at 6"]
