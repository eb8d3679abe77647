"""Chapter pages at 1280x800, a common laptop screen, in headless Chromium: code fits, checks fold.

No code block or output of any chapter page scrolls sideways: an 88-character code line (the
longest ``tests/test_page_form.py`` allows) fits the article column (``book/_static/ftipbook.css``
sizes the column and the code font). On the chapters of ``CONVERTED_SECTIONS`` the Checks cells
are collapsed behind a "show code" toggle that opens on a click. Reads ``_build/html``
(``tools/task.py test`` builds the book first).
"""
from __future__ import annotations

import json

import pytest

import layout
import page_form
from ftipbook import items

from ..test_page_form import CONVERTED_SECTIONS
from .devtools import CHROMIUM, Browser

HTML = layout.ROOT / "_build" / "html"
WIDTH, HEIGHT = 1280, 800
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
    pytest.mark.skipif(not (HTML / "index.html").exists(), reason="the book is not built"),
]
PAGES = sorted(layout.present_chapters().items(), key=lambda kv: items.get(kv[0]).order)
CONVERTED = [(i, p) for i, p in PAGES if any(p.as_posix().startswith(s + "/") for s in CONVERTED_SECTIONS)]
#: every box that shows code or an output; collapsed cells are opened first, so they must fit too
BOXES = "article pre, article .cell_output, article .output, article div.highlight"
SIDEWAYS = f"""(function () {{
    document.querySelectorAll("article details").forEach(function (d) {{ d.open = true; }});
    var bad = [];
    document.querySelectorAll({json.dumps(BOXES)}).forEach(function (e) {{
        if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) {{
            bad.push(e.tagName.toLowerCase() + "." + e.className.split(" ")[0] + " " + e.scrollWidth
                     + " > " + e.clientWidth + ": " + e.textContent.trim().slice(0, 60));
        }}
    }});
    return bad;
}})()"""
CODE_LINE = """(function () {
    var pre = document.querySelector("article div.cell_input pre");
    var probe = document.createElement("span");
    probe.textContent = "x".repeat(88);
    probe.style.whiteSpace = "pre";  // its natural width, even where long lines wrap
    pre.appendChild(probe);
    var style = getComputedStyle(pre);
    var room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    var fits = probe.getBoundingClientRect().width <= room;
    var size = parseFloat(style.fontSize);
    probe.remove();
    return [fits, size];
})()"""


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    b.viewport(WIDTH, HEIGHT)
    yield b
    b.close()


def sideways(browser: Browser, item_id: str, path) -> list[str]:
    """The code blocks and outputs of a chapter page that scroll sideways at 1280x800."""
    browser.open(HTML / path.with_suffix(".html"))
    assert browser.js("window.innerWidth") == WIDTH
    return browser.js(SIDEWAYS)


@pytest.mark.parametrize("item_id,path", PAGES, ids=[p[0] for p in PAGES])
def test_no_code_or_output_scrolls_sideways(browser, item_id, path):
    assert sideways(browser, item_id, path) == []


def test_an_88_character_code_line_fits_in_a_readable_font(browser):
    item_id, path = PAGES[0]
    browser.open(HTML / path.with_suffix(".html"))
    fits, size = browser.js(CODE_LINE)
    assert fits, f"an 88-character code line is wider than the code block on {item_id}"
    assert size >= 12, f"code font of {size}px is too small to read"


def test_without_the_book_stylesheet_code_scrolls_sideways(browser):
    """Negative control: the theme's own layout makes the first chapter's code scroll."""
    item_id, path = PAGES[0]
    browser.open(HTML / path.with_suffix(".html"))
    assert browser.js("document.querySelectorAll('link[href*=\"ftipbook.css\"]').length") == 1
    browser.js("document.querySelector('link[href*=\"ftipbook.css\"]').disabled = true")
    assert browser.js(SIDEWAYS), f"{item_id} fits without book/_static/ftipbook.css"
    fits, size = browser.js(CODE_LINE)
    assert not fits and size == 14


def _hidden_checks(path) -> int:
    notebook = json.loads((layout.ROOT / path.with_suffix(".ipynb")).read_text(encoding="utf-8"))
    return sum(c.kind == "code" and c.hidden and not c.removed for c in page_form.cells(notebook))


@pytest.mark.parametrize("item_id,path", CONVERTED, ids=[p[0] for p in CONVERTED])
def test_checks_toggles_exist_and_open(browser, item_id, path):
    browser.open(HTML / path.with_suffix(".html"))
    toggles = browser.js("document.querySelectorAll('article details.above-input').length")
    assert toggles == _hidden_checks(path) > 0, f"{item_id}: {toggles} show-code toggles"
    closed, opened = browser.js("""(function () {
        var d = document.querySelector("article details.above-input");
        var code = d.parentElement.querySelector(".cell_input");
        // a closed <details> keeps its content laid out but not rendered: ask what is visible
        var before = [d.open, code.checkVisibility()];
        d.querySelector("summary").click();
        return [before, [d.open, code.checkVisibility() && code.offsetHeight > 0]];
    })()""")
    assert closed == [False, False], f"{item_id}: the check's code shows before a click"
    assert opened == [True, True], f"{item_id}: the toggle does not open on a click"
    # every result a collapsed check prints stays visible (some checks are bare asserts and print
    # nothing yet: a result line for each is a remaining task of the page form, issue 27)
    shown = browser.js("Array.from(document.querySelectorAll('article details.above-input'))"
                       ".map(function (d) { var o = d.parentElement.querySelector('.cell_output');"
                       " return o === null || (o.checkVisibility() && o.offsetHeight > 0); })")
    assert all(shown), f"{item_id}: a collapsed check's result is hidden: {shown}"
