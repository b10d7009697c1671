"""The Nova-side worker processes (nova_side/worker.py), seen from the
runner: start one, hand it tests, read what it says.

A worker's stdout and stderr go to its log file; its messages come on a
pipe of their own, read by a thread into a queue so that every wait can
have a deadline.
"""

import json
import os
import pathlib
import queue
import signal
import subprocess
import threading
import time

NOVA_SIDE = pathlib.Path(__file__).resolve().parent / "nova_side"
WORKER = NOVA_SIDE / "worker.py"

# What tox's functional environment of Nova 34 sets, and runs them with.
NOVA_TEST_ENV = {
    "OS_STDOUT_CAPTURE": "1",
    "OS_STDERR_CAPTURE": "1",
    "OS_TEST_TIMEOUT": "160",
    "NOVA_RAISE_ON_GREENLET_LEAK": "True",
    "OS_NOVA_DISABLE_EVENTLET_PATCHING": "False",
    "LC_ALL": "C.UTF-8",
    # One hash seed for every run: set iteration orders, and so the order
    # of Nova's requests, repeat, and two runs' traffic can be compared.
    "PYTHONHASHSEED": "0",
}
# Variables of gantt's interpreter that must not reach Nova's.
DROPPED_ENV = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")


class WorkerGone(Exception):
    """The worker exited, or said nothing within the deadline."""


class WorkerHung(WorkerGone):
    """The worker is alive but said nothing within the deadline."""


class Worker:
    def __init__(self, venv, mode, names, log_path, record=None):
        self.log_path = pathlib.Path(log_path)
        read_end, write_end = os.pipe()
        argv = [str(pathlib.Path(venv) / "bin" / "python"), str(WORKER),
                "--mode", mode, "--result-fd", str(write_end)]
        if record:
            argv += ["--record", str(record)]
        env = {key: value for key, value in os.environ.items()
               if key not in DROPPED_ENV}
        env.update(NOVA_TEST_ENV)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [*argv, *names], stdin=subprocess.PIPE, stdout=log,
                stderr=subprocess.STDOUT, pass_fds=(write_end,), env=env,
                # Whatever a test leaves in its working directory stays
                # with the logs, out of the repository.
                cwd=self.log_path.parent, text=True)
        os.close(write_end)
        self._messages = queue.Queue()
        reader = threading.Thread(target=self._read, args=(read_end,),
                                  daemon=True)
        reader.start()

    def _read(self, fd):
        with os.fdopen(fd) as lines:
            for line in lines:
                self._messages.put(json.loads(line))
        self._messages.put(None)  # the worker closed its end: it is gone

    def send(self, message):
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise WorkerGone("the worker exited") from None

    def receive(self, timeout):
        try:
            message = self._messages.get(timeout=timeout)
        except queue.Empty:
            raise WorkerHung(f"the worker said nothing in {timeout} s") \
                from None
        if message is None:
            self._messages.put(None)
            raise WorkerGone(f"the worker exited ({self.proc.wait()})")
        return message

    def dump_stacks(self, settle=3.0):
        """Have a hung worker write its threads' and greenlets' stacks
        to its log (nova_side/worker.py), before it is killed."""
        if self.proc.poll() is not None:
            return
        for number in (signal.SIGUSR1, signal.SIGUSR2):
            try:
                self.proc.send_signal(number)
            except OSError:
                return
        time.sleep(settle)

    def log_tail(self, chars=6000):
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return text[-chars:]

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.send({"quit": True})
                self.proc.stdin.close()
                self.proc.wait(10)
            except (WorkerGone, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()

    def kill(self):
        self.proc.kill()
        self.proc.wait()
