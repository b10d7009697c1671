"""Headless chromium for the report tests, driven over the DevTools
protocol: open a page, gather its console errors, evaluate JavaScript.

Debian's chromium is installed when missing (CI runs as root); a
machine where it cannot be is a failure under CI and a skip elsewhere.
"""

import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest
import websocket

_NAMES = ("chromium", "chromium-browser")


def _found():
    return next((p for p in map(shutil.which, _NAMES) if p), None)


def _apt(*words):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(
        ["apt-get", *words, "-o", "DPkg::Lock::Timeout=300"],
        env=env, capture_output=True, text=True, check=False)


def chromium():
    """The chromium binary, installed with apt-get if need be."""
    path = _found()
    if path:
        return path
    if os.geteuid() != 0:
        why = "chromium is not installed and only root can apt-get it"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    done = _apt("install", "-y", "chromium")
    if done.returncode != 0:
        # A fresh machine may have no package lists yet.
        _apt("update")
        done = _apt("install", "-y", "chromium")
    path = _found()
    if not path:
        pytest.fail(f"apt-get install chromium failed:\n{done.stderr}")
    return path


class Browser:
    """One headless chromium; page() opens a tab on a URL."""

    def __init__(self, binary, timeout=30):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="gantt-chromium-")
        # Port 0: chromium picks a free one and writes it to
        # DevToolsActivePort in the profile, so tests never collide.
        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--no-first-run",
             "--remote-debugging-port=0", "--remote-allow-origins=*",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.ws = None
        try:
            port, path = self._endpoint()
            self.ws = websocket.create_connection(
                f"ws://127.0.0.1:{port}{path}", timeout=timeout,
                suppress_origin=True)
        except BaseException:
            self.close()     # no chromium left behind by a failed start
            raise
        self.ids = itertools.count(1)
        self.events = []

    def _endpoint(self):
        marker = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("chromium exited with "
                                   f"{self.process.returncode}")
            try:
                with open(marker) as f:
                    port, path = f.read().split()[:2]
                return int(port), path
            except (OSError, ValueError):
                time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    def send(self, method, session=None, **params):
        """Send one command and return its result; events that arrive
        meanwhile are kept in self.events."""
        ident = next(self.ids)
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, session):
        """The first event ``method`` of ``session``, kept or new."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for event in self.events:
                if (event.get("method") == method
                        and event.get("sessionId") == session):
                    return event
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(f"no {method}")

    def page(self, url):
        """A Page on url, loaded."""
        target = self.send("Target.createTarget", url="about:blank")
        session = self.send("Target.attachToTarget", flatten=True,
                            targetId=target["targetId"])["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session)
        self.send("Page.navigate", session, url=url)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, session)

    def close(self):
        try:
            if self.ws is not None:
                self.ws.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser, session):
        self.browser = browser
        self.session = session

    def evaluate(self, expression):
        """The value of a JavaScript expression (a promise is awaited),
        as JSON; a thrown exception fails."""
        result = self.browser.send(
            "Runtime.evaluate", self.session, expression=expression,
            awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise AssertionError(
                f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self):
        """Console errors, uncaught exceptions and error log entries
        of this page so far."""
        self.evaluate("0")      # lets pending events arrive
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append((details.get("exception") or {}).get(
                    "description") or details.get("text"))
            elif (method == "Runtime.consoleAPICalled"
                  and params.get("type") in ("error", "assert")):
                found.append(" ".join(str(a.get("value", a.get(
                    "description"))) for a in params.get("args", [])))
            elif (method == "Log.entryAdded"
                  and params["entry"].get("level") == "error"):
                found.append(params["entry"].get("text"))
        return found
