"""A headless Chromium page driven over the DevTools protocol, for the browser tests.

Chromium is controlled through ``--remote-debugging-pipe`` (two file descriptors, JSON messages
ending in a NUL byte): the standard library is enough, nothing is downloaded and no port is opened.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


class Browser:
    """A headless Chromium page driven over the DevTools pipe."""

    def __init__(self) -> None:
        self._profile = tempfile.TemporaryDirectory()
        cmd_r, self._w = os.pipe()
        self._r, res_w = os.pipe()

        def to_fds_3_and_4() -> None:  # Chromium reads commands on fd 3 and writes replies on fd 4
            os.dup2(cmd_r, 3)
            os.dup2(res_w, 4)

        self._proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self._profile.name}", "about:blank"],
            pass_fds=(3, 4, cmd_r, res_w), preexec_fn=to_fds_3_and_4,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(res_w)
        self._buf, self._id, self._events = b"", 0, []
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Page.enable", session=True)

    def send(self, method: str, session: bool = False, **params) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self._session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self._events.append(reply)

    def _read(self, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            ready, _, _ = select.select([self._r], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def open(self, path: Path) -> None:
        self._events.clear()
        self.send("Page.navigate", session=True, url=path.as_uri())
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            self._events.append(self._read())

    def js(self, expression: str):
        result = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def key(self, key: str, code: int) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=key, windowsVirtualKeyCode=code)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._w)
        os.close(self._r)
        self._profile.cleanup()

    def viewport(self, width: int, height: int) -> None:
        """Emulate a ``width`` x ``height`` px screen (as ``--window-size``) from now on."""
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
