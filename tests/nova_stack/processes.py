"""Child processes of the Nova stack, each logging to its own file.

Every process the harness starts is a Proc: started in a session of its
own (so that a stop reaches the workers a service forks, and nothing
else), with stdout and stderr in ``<logs>/<name>.log``, stopped with
SIGTERM and, past a bound, SIGKILL. Should the harness itself die
without stopping them (killed by a CI time limit, say), the kernel
sends each of them SIGTERM (Linux's parent-death signal), so no Nova
service outlives its test.
"""

import ctypes
import os
import pathlib
import signal
import socket
import subprocess
import time

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """In the child, before exec: SIGTERM when the parent exits."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: stop() still does the job in normal runs


def free_port():
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tail(path, lines=40):
    """The last ``lines`` lines of a log file, or a note that it is empty."""
    path = pathlib.Path(path)
    if not path.exists():
        return f"(no {path.name})"
    text = path.read_text(errors="replace").splitlines()[-lines:]
    return "\n".join(text) or f"({path.name} is empty)"


class Proc:
    """One service process and its log file."""

    def __init__(self, name, argv, log_dir, env=None, cwd=None):
        self.name = name
        self.argv = [str(arg) for arg in argv]
        self.log = pathlib.Path(log_dir) / f"{name}.log"
        self.env = env
        self.cwd = cwd
        self.popen = None

    def start(self):
        with open(self.log, "ab") as out:
            out.write(f"--- start: {' '.join(self.argv)}\n".encode())
            out.flush()
            self.popen = subprocess.Popen(
                self.argv, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                start_new_session=True, preexec_fn=_die_with_parent)
        return self

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def check_alive(self):
        """Raise, with the log's tail, when the process has exited."""
        if self.popen is not None and not self.alive():
            raise RuntimeError(
                f"{self.name} exited with status {self.popen.returncode}; "
                f"{self.log}:\n{tail(self.log)}")

    def wait_success(self, timeout):
        """Wait for a one-shot command to end; raise unless it ended
        with status 0."""
        try:
            status = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{self.name} still running after "
                               f"{timeout} s; {self.log}") from None
        if status:
            raise RuntimeError(f"{self.name} failed with status {status}; "
                               f"{self.log}:\n{tail(self.log)}")

    def stop(self, timeout=20):
        """SIGTERM the process group, SIGKILL it after ``timeout``."""
        self.terminate()
        self.reap(time.monotonic() + timeout)

    def terminate(self):
        if self.alive():
            self._signal(signal.SIGTERM)

    def reap(self, deadline):
        """Wait for the end until ``deadline`` (monotonic), then kill."""
        if self.popen is None:
            return
        try:
            self.popen.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.popen.wait(10)
        self._signal(signal.SIGKILL)  # forked workers left behind

    def _signal(self, signum):
        try:
            os.killpg(self.popen.pid, signum)
        except ProcessLookupError:
            pass


def stop_all(procs, timeout=20):
    """Stop several processes at once: SIGTERM to all, then wait."""
    procs = list(procs)
    for proc in procs:
        proc.terminate()
    deadline = time.monotonic() + timeout
    for proc in procs:
        proc.reap(deadline)


def run(name, argv, log_dir, env=None, timeout=120):
    """Run a command to its end, logging like a Proc; raise on failure."""
    log = pathlib.Path(log_dir) / f"{name}.log"
    with open(log, "ab") as out:
        out.write(f"--- run: {' '.join(map(str, argv))}\n".encode())
        out.flush()
        done = subprocess.run([str(arg) for arg in argv], stdout=out,
                              stderr=subprocess.STDOUT, env=env,
                              stdin=subprocess.DEVNULL, timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"{name} failed with status {done.returncode}; "
                           f"{log}:\n{tail(log)}")


def wait_for(what, check, timeout, interval=0.5, procs=()):
    """Call ``check`` until it returns ``(True, found)``, within
    ``timeout`` seconds; raise naming ``what`` and the last ``found``
    otherwise (an exception raised by ``check`` counts as not yet: the
    service may not answer yet).

    ``procs`` are checked on every round, so a service that died is
    reported at once with its log instead of after the whole timeout.
    """
    deadline = time.monotonic() + timeout
    found = None
    while True:
        for proc in procs:
            proc.check_alive()
        try:
            done, found = check()
        except Exception as exc:
            done, found = False, exc
        if done:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout} s; last "
                               f"seen: {found!r}")
        time.sleep(interval)
