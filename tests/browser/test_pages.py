"""Built pages in headless Chromium: math is typeset offline, the Colab link opens the reader notebook.

Runs after ``jupyter-book build`` (``tools/task.py test`` orders it so); needs Debian's ``chromium``.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

import layout
import reader_notebooks
from ftipbook import items

HTML = layout.ROOT / "_build" / "html"
VERIFIED = layout.ROOT / ".ftipbook-verified.json"  # written by the test command's chapter passes
CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=15000"]
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
    pytest.mark.skipif(not (HTML / "index.html").exists(), reason="the book is not built"),
]
PAGES = sorted(layout.present_chapters().items(), key=lambda kv: items.get(kv[0]).order)


class _Text(HTMLParser):
    """Visible text of a page (script and style contents dropped) and its links."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.links: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "mjx-assistive-mml"):
            self._skip += 1
        if tag == "a":
            self.links += [v for k, v in attrs if k == "href" and v]

    def handle_endtag(self, tag):
        if tag in ("script", "style", "mjx-assistive-mml"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def rendered_dom(page: Path) -> str:
    """The DOM after scripts ran, from a browser with no network access to anything but files."""
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                                capture_output=True, text=True, timeout=120, check=True)
    return result.stdout


@pytest.mark.parametrize("item_id,path", PAGES, ids=[p[0] for p in PAGES])
def test_chapter_typesets_math_and_links_to_colab(item_id, path):
    page = HTML / path.with_suffix(".html")
    dom = rendered_dom(page)
    # Sphinx marks every formula with a "math" class; a few statements (ftip-00L6, for one) have none
    if 'class="math' in page.read_text(encoding="utf-8"):
        assert "<mjx-container" in dom, f"{item_id}: MathJax produced no output"
    # a TeX error typesets as <mjx-merror>, an undefined macro as red text (noundefined)
    for error in ("<mjx-merror", '<mjx-mtext class="mjx-n" style="color: red;">'):
        assert error not in dom, f"{item_id}: MathJax reports a TeX error ({error})"
    parsed = _Text()
    parsed.feed(dom)
    visible = "".join(parsed.text)
    for raw in ("\\frac", "\\operatorname", "$$", "\\begin{pmatrix}", "\\tfrac", "\\("):
        assert raw not in visible, f"{item_id}: raw TeX {raw!r} is visible on the page"
    colab = [link for link in parsed.links if "colab.research.google.com" in link]
    assert colab, f"{item_id}: no Colab launch link"
    reader = reader_notebooks.reader_path(path.with_suffix(".md"))
    assert reader.exists(), f"{item_id}: no reader notebook {reader}"
    assert all(link.endswith(reader.relative_to(layout.ROOT).as_posix()) for link in colab), colab
    kind, number, _ = reader_notebooks.statements()[items.get(item_id).label]
    assert f"{kind} {number}" in visible, f"{item_id}: the page does not number its statement {kind} {number}"
    assert f'id="{items.get(item_id).label}"' in dom, f"{item_id}: the statement's anchor is missing"
    record = json.loads(VERIFIED.read_text()) if VERIFIED.exists() else None
    words = " ".join(visible.split())
    if record is None:
        assert "Not verified on the machine that built this page" in words, f"{item_id}: no verification line"
    else:
        line = f"Python {record['python']}, torch {record['torch']}, numpy {record['numpy']}, on {record['cpu']}"
        assert line in words, f"{item_id}: the page does not say what verified it ({line})"
