"""The kernel-free interactive figures of ftip-00L3/00LD/00LF and 00KV/00KY, driven in headless Chromium.

Chromium is controlled through the DevTools protocol over ``--remote-debugging-pipe`` (two file
descriptors, JSON messages ending in a NUL byte): the standard library is enough, nothing is
downloaded and no port is opened. The test moves the sliders (and presses arrow keys on one) and
checks every shown number against :mod:`ftipbook.compare` at five points or more: the readouts at
the start exactly as Python prints them, the cache model's exactly at every point (its arithmetic
is exact or correctly rounded on both sides), the attempt model's to 3 decimals. Log sliders
(``T``, ``kappa``, ``sigma``) are set in ``log2`` units and must show ``round(2^u)``. At a 360 px
wide viewport every slider, value and readout must lie inside the viewport.
Standalone pages from :mod:`ftipbook.widgets` are always checked; the built chapter pages when
``_build/html`` holds them (``tools/task.py test`` builds the book first).
"""
from __future__ import annotations

import json

import pytest

import layout
from ftipbook import items, widgets
from ftipbook.compare import cache_model, throughput
from ftipbook.compare.frontier import Undefined

from .devtools import CHROMIUM, Browser

HTML = layout.ROOT / "_build" / "html"
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

# five slider settings per model (strings, as a browser reports slider values)
ATTEMPT_MOVES = [
    {"f": "0.8", "s": "2.2", "budget": "10", "p_m": "0.1", "p_k": "0.08"},
    {"f": "0.5", "s": "2", "budget": "3", "p_m": "0.2", "p_k": "0.15"},
    {"f": "0.2", "s": "2.2", "budget": "29", "p_m": "0.3", "p_k": "0.2"},
    {"f": "1", "s": "4.35", "budget": "0", "p_m": "0.05", "p_k": "0.01"},
    {"f": "0.93", "s": "1.15", "budget": "13", "p_m": "0.25", "p_k": "0.3"},
]
# the cache model's T, kappa and sigma sliders move in log2 units
CACHE_MOVES = [
    {"ell": "1", "batch": "1", "length": "10", "kappa": "6", "sigma": "11.643856189774725"},
    {"ell": "2", "batch": "3", "length": "0", "kappa": "6", "sigma": "11.65"},
    {"ell": "16", "batch": "64", "length": "20", "kappa": "12", "sigma": "20"},
    {"ell": "4", "batch": "8", "length": "5.75", "kappa": "6.5", "sigma": "11.6"},
    {"ell": "3", "batch": "5", "length": "13.25", "kappa": "10.17", "sigma": "16.59"},
    {"ell": "1", "batch": "1", "length": "0", "kappa": "0", "sigma": "20"},  # far below the crossover
]
LOG_KEYS = {"length", "kappa", "sigma"}


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def move(browser: Browser, root: str, settings: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Set each slider of widget ``root`` as a drag would (value, then an ``input`` event); return
    the sliders' positions and the values and readouts the page then shows."""
    return browser.js(f"""(function () {{
        var root = document.getElementById({json.dumps(root)}), s = {json.dumps(settings)};
        Object.keys(s).forEach(function (k) {{
            var inp = root.querySelector('input[data-in="' + k + '"]');
            inp.value = s[k];
            inp.dispatchEvent(new Event("input", {{bubbles: true}}));
        }});
        var at = {{}}, out = {{}};
        root.querySelectorAll("input[data-in]").forEach(function (e) {{ at[e.dataset.in] = e.value; }});
        root.querySelectorAll("output[data-show], [data-out]").forEach(function (e) {{
            out[e.dataset.show || e.dataset.out] = e.textContent;
        }});
        return [at, out];
    }})()""")


def close_to(shown: str, value: float) -> bool:
    return abs(float(shown) - value) <= 5e-4 + 1e-12  # equal to 3 decimals


def check_attempt(shown: dict[str, str]) -> None:
    r = throughput.compare_attempts(f=float(shown["f"]), s=float(shown["s"]), budget=float(shown["budget"]),
                                    p_m=float(shown["p_m"]), p_k=float(shown["p_k"]))
    assert (int(shown["nM"]), int(shown["nK"])) == (r.n_m, r.n_k), shown
    for key, value in (("S", r.throughput), ("ratio", r.cost_ratio), ("dM", r.discovery_m), ("dK", r.discovery_k)):
        assert close_to(shown[key], value), (key, shown[key], value)
    if isinstance(r.break_even, Undefined):  # named with its reason, as in Python
        assert shown["pStar"] == f"undefined: {r.break_even.reason}" and shown["verdict"].startswith("undefined"), shown
    else:
        assert close_to(shown["pStar"], r.break_even), shown
        assert shown["verdict"] == ("hybrid >= baseline" if r.hybrid_at_least_as_good else "hybrid < baseline")


def check_cache(shown: dict[str, str]) -> None:
    ell, b, t, k, s = (int(shown[x]) for x in ("ell", "batch", "length", "kappa", "sigma"))
    m_mla, m_hyb = cache_model.stylized_state_memory(ell, b, t, k, s)
    assert close_to(shown["mla"], m_mla / 2**20) and close_to(shown["hybrid"], m_hyb / 2**20), shown
    assert close_to(shown["ratio"], cache_model.cache_ratio(t, k, s)), shown
    assert close_to(shown["crossover"], cache_model.crossover_length(k, s)), shown
    readout = widgets.cache_readout(ell=ell, batch=b, length=t, kappa=k, sigma=s)
    assert {key: shown[key] for key in readout} == readout  # every text, the saving's included


def readout_of(shown: dict[str, str], model: str) -> dict[str, str]:
    """What Python prints for the slider values ``shown``."""
    if model == "attempt":
        return widgets.attempt_readout(**{k: float(shown[k]) for k in ("f", "s", "budget", "p_m", "p_k")})
    return widgets.cache_readout(**{k: int(shown[k]) for k in ("ell", "batch", "length", "kappa", "sigma")})


def drive(browser: Browser, root: str, moves: list[dict[str, str]], check, model: str) -> None:
    assert browser.js(f"document.getElementById({json.dumps(root)}) !== null"), f"no widget #{root} on the page"
    _, start = move(browser, root, {})  # as loaded: JavaScript prints what Python printed
    assert {k: start[k] for k in readout_of(start, model)} == readout_of(start, model), start
    logs = set(browser.js(f"Array.from(document.getElementById({json.dumps(root)})"
                          ".querySelectorAll('input[data-log]')).map(function (e) {{ return e.dataset.in; }})"))
    assert logs == (LOG_KEYS if model == "cache" else set())
    for settings in moves:
        at, shown = move(browser, root, settings)
        for k, u in settings.items():  # Chromium keeps 15 significant digits of a position
            assert float(at[k]) == pytest.approx(float(u), rel=1e-14), ("the slider did not take the value", k, u)
        for k, u in settings.items():  # a log slider shows the rounded power of its position
            assert shown[k] == (str(round(2 ** float(u))) if k in logs else u), (k, u, shown[k])
        check(shown)
    # a keyboard move: focus the first slider and press the right arrow twice
    first = browser.js(f"document.getElementById({json.dumps(root)}).querySelector('input[data-in]').dataset.in")
    _, before = move(browser, root, moves[1])
    browser.js(f"document.getElementById({json.dumps(root)}).querySelector('input[data-in]').focus()")
    browser.key("ArrowRight", 39)
    browser.key("ArrowRight", 39)
    _, after = move(browser, root, {})
    assert float(after[first]) > float(before[first]), (before[first], after[first])
    check(after)


def outside_viewport(browser: Browser, root: str) -> list[str]:
    """The parts of widget ``root`` (slider, value, readout cell, plot) that stick out of the viewport."""
    return browser.js(f"""(function () {{
        var root = document.getElementById({json.dumps(root)}), width = document.documentElement.clientWidth, bad = [];
        root.querySelectorAll("input, output, td, svg").forEach(function (e) {{
            var r = e.getBoundingClientRect();
            if (r.left < 0 || r.right > width + 0.5) {{
                bad.push(e.tagName + " " + (e.dataset.in || e.dataset.show || e.dataset.out || e.textContent)
                         + " spans " + r.left.toFixed(1) + ".." + r.right.toFixed(1) + " of " + width);
            }}
        }});
        return bad;
    }})()""")


def narrow(browser: Browser, width: int = 360):
    """Emulate a ``width`` px wide screen (as ``--window-size=360,800``) until the ``with`` block ends."""
    class Narrow:
        def __enter__(self):
            browser.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=800,
                         deviceScaleFactor=1, mobile=False)
            return self

        def __exit__(self, *exc):
            browser.send("Emulation.clearDeviceMetricsOverride", session=True)

    return Narrow()


def test_standalone_figures(browser, tmp_path):
    page = tmp_path / "widgets.html"
    page.write_text("<!doctype html><meta charset='utf-8'><body>"
                    + widgets.attempt_throughput_html(uid="att") + widgets.cache_ratio_html(kappa=64, sigma=3200, uid="kv")
                    + "</body>", encoding="utf-8")
    browser.open(page)
    drive(browser, "att", ATTEMPT_MOVES, check_attempt, "attempt")
    drive(browser, "kv", CACHE_MOVES, check_cache, "cache")
    assert browser.js("document.querySelectorAll('svg polyline').length") >= 4  # the plots were drawn


def test_standalone_figures_fit_360_px(browser, tmp_path):
    page = tmp_path / "narrow.html"
    page.write_text("<!doctype html><meta charset='utf-8'><meta name='viewport' content='width=device-width'><body>"
                    + widgets.attempt_throughput_html(uid="att") + widgets.cache_ratio_html(kappa=64, sigma=3200, uid="kv")
                    + "</body>", encoding="utf-8")
    with narrow(browser):
        browser.open(page)
        assert browser.js("window.innerWidth") == 360
        for root, settings in (("att", ATTEMPT_MOVES[4]), ("kv", CACHE_MOVES[-1])):  # the longest texts
            _, shown = move(browser, root, settings)
            assert outside_viewport(browser, root) == [], shown
        assert browser.js("document.documentElement.scrollWidth") <= 360  # no sideways scrolling
        # negative control: without the narrow-screen rules the value column sticks out at 360 px
        browser.js("Array.from(document.styleSheets).forEach(function (sheet) {"
                   " for (var i = sheet.cssRules.length - 1; i >= 0; i--)"
                   "  if (sheet.cssRules[i] instanceof CSSMediaRule) sheet.deleteRule(i); })")
        assert any(x.startswith("OUTPUT") for x in outside_viewport(browser, "kv"))


CHAPTERS = {"ftip-00L3": ("ftip-attempt", ATTEMPT_MOVES, check_attempt, "attempt"),
            "ftip-00LD": ("ftip-attempt", ATTEMPT_MOVES, check_attempt, "attempt"),
            "ftip-00LF": ("ftip-attempt", ATTEMPT_MOVES, check_attempt, "attempt"),
            "ftip-00KW": ("ftip-attempt", ATTEMPT_MOVES, check_attempt, "attempt"),
            "ftip-00KV": ("ftip-cache", CACHE_MOVES, check_cache, "cache"),
            "ftip-00KY": ("ftip-cache", CACHE_MOVES, check_cache, "cache")}


def stored_figure(item_id: str) -> str:
    """The live figure a chapter's committed notebook stores (the ``text/html`` output the site shows)."""
    notebook = json.loads((layout.ROOT / layout.present_chapters()[item_id].with_suffix(".ipynb")).read_text("utf-8"))
    figures = ["".join(out["data"]["text/html"]) for cell in notebook["cells"] for out in cell.get("outputs", [])
               if "ftip-widget" in "".join(out.get("data", {}).get("text/html", ""))]
    assert len(figures) == 1, f"{item_id}: {len(figures)} live figures stored"
    return figures[0]


@pytest.mark.parametrize("item_id", sorted(CHAPTERS))
def test_chapter_notebook_figure_is_live(browser, item_id, tmp_path):
    """The figure as the chapter's notebook stores it, in a page of its own (no book build needed)."""
    root, moves, check, model = CHAPTERS[item_id]
    page = tmp_path / "figure.html"
    page.write_text(f"<!doctype html><meta charset='utf-8'><body>{stored_figure(item_id)}</body>", encoding="utf-8")
    browser.open(page)
    drive(browser, root, moves, check, model)
    with narrow(browser):
        browser.open(page)
        move(browser, root, moves[-1])
        assert outside_viewport(browser, root) == []


@pytest.mark.parametrize("item_id", sorted(CHAPTERS))
def test_chapter_page_figure_is_live(browser, item_id):
    path = layout.present_chapters().get(item_id)
    if path is None or not (HTML / path.with_suffix(".html")).exists():
        pytest.skip(f"{item_id}: chapter not built (run the book build first)")
    root, moves, check, model = CHAPTERS[item_id]
    browser.open(HTML / path.with_suffix(".html"))
    assert items.get(item_id).label in browser.js("document.body.innerHTML")
    drive(browser, root, moves, check, model)
    with narrow(browser):
        browser.open(HTML / path.with_suffix(".html"))
        move(browser, root, moves[-1])
        assert outside_viewport(browser, root) == []
