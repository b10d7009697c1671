"""A stand-in for nova_side/worker.py that speaks its protocol and hangs
on purpose, for the runner's own tests (test_run_harness.py): Nova's
hangs are races that no test can call up at will.

Test ids: ``passes``; ``hangs_once`` hangs the first time any worker
runs it (a marker file in $FAKE_WORKER_MARKS remembers) and passes
after; ``hangs_always`` hangs every time.
"""

import argparse
import json
import os
import pathlib
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode")
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    out = os.fdopen(args.result_fd, "w", buffering=1)
    out.write(json.dumps({"tests": args.names}) + "\n")
    marks = pathlib.Path(os.environ["FAKE_WORKER_MARKS"])
    for line in sys.stdin:
        request = json.loads(line)
        if "quit" in request:
            return 0
        test_id = request["run"]
        mark = marks / test_id
        if test_id == "hangs_always" or (test_id == "hangs_once"
                                         and not mark.exists()):
            mark.touch()
            time.sleep(3600)
        out.write(json.dumps({"result": test_id, "status": "pass",
                              "seconds": 0.0, "details": ""}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
