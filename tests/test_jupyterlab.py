"""The README's way to open a chapter locally works on a fresh setup: ``.venv/bin/jupyter lab chapters/``
starts JupyterLab (in the lock, with MyST rendering), which serves a chapter notebook."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import layout

JUPYTER = Path(sys.executable).parent / "jupyter"
TOKEN = "ftipbook-test"
pytestmark = pytest.mark.skipif(not (JUPYTER.parent / "jupyter-lab").exists(),
                                reason="JupyterLab comes with the book's environment (.venv), not with the package")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read()


def test_readme_command_serves_a_chapter_with_myst_rendering(tmp_path):
    readme = (layout.ROOT / "README.md").read_text()
    assert ".venv/bin/jupyter lab chapters/" in readme
    port = _free_port()
    chapter = sorted((layout.ROOT / "chapters").rglob("*.ipynb"))[0].relative_to(layout.ROOT / "chapters")
    server = subprocess.Popen(
        [str(JUPYTER), "lab", "chapters/", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={TOKEN}", *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=layout.ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={"HOME": str(tmp_path), "PATH": f"{JUPYTER.parent}:/usr/bin:/bin", "JUPYTER_CONFIG_DIR": str(tmp_path),
             "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_DATA_DIR": str(tmp_path / "data")},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                _get(f"{base}/api/status?token={TOKEN}")
                break
            except OSError:
                if server.poll() is not None:
                    raise AssertionError(f"jupyter lab exited: {server.stderr.read()[-2000:]}")
                time.sleep(0.5)
        notebook = json.loads(_get(f"{base}/api/contents/{chapter.as_posix()}?token={TOKEN}"))
        assert notebook["type"] == "notebook" and notebook["content"]["cells"]
        assert b"JupyterLab" in _get(f"{base}/lab/tree/{chapter.as_posix()}?token={TOKEN}")
        extensions = json.loads(_get(f"{base}/lab/api/extensions?token={TOKEN}"))
        names = {e["name"]: e for e in extensions}
        assert "jupyterlab-myst" in names and names["jupyterlab-myst"]["enabled"]
    finally:
        server.terminate()
        server.wait(timeout=30)
