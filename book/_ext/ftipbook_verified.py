"""Each chapter page ends with one line saying what its checks were last verified with.

``python3 tools/task.py test`` writes ``.ftipbook-verified.json`` at the project root once both
chapter passes (this CPU's kernels and the forced other ones) have passed: Python, torch and numpy
versions, the CPU's model name and kernel capability, the date and the commit. This extension
reads that record at build time; a build with no record (``task.py book`` on a machine that never
ran the tests) says so instead of claiming a verification that did not happen here.
"""
from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes

RECORD = ".ftipbook-verified.json"


def verification_text(record: dict | None) -> str:
    """The sentence printed under every chapter."""
    if record is None:
        return ("Not verified on the machine that built this page: run python3 tools/task.py test "
                "to execute every chapter's checks.")
    commit = f" at commit {record['commit']}" if record.get("commit") else ""
    return (f"Checks last verified on {record['date']}{commit}: Python {record['python']}, "
            f"torch {record['torch']}, numpy {record['numpy']}, on {record['cpu']} "
            f"({record['capability']} kernels, and again with {record['other_kernels']}).")


def _read(srcdir: str) -> dict | None:
    path = Path(srcdir) / RECORD
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def add_line(app, doctree: nodes.document) -> None:
    if not app.env.docname.startswith("chapters/"):
        return
    para = nodes.paragraph(text=verification_text(_read(app.srcdir)), classes=["ftipbook-verified"])
    doctree.append(para)


def setup(app):
    app.connect("doctree-read", add_line)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
