"""The page form (issue 27) on every converted chapter, and the checker itself on bad pages.

``CONVERTED_SECTIONS`` lists the section folders whose chapters follow the form of
``book/contributing.md``; add a section here once all of its chapters are converted. The rules
live in ``tools/page_form.py``; the unit tests below make each of them fail on a small page.
"""
from __future__ import annotations

import copy

import pytest

import page_form
from page_form import ROOT

CONVERTED_SECTIONS = (
    "chapters/part-2/decoder-only-transformer-architecture",
    "chapters/part-2/factored-objectives-and-gauge-symmetry",
    "chapters/part-2/published-hybrid-attention-comparison",
)
FIGURE_SHARE = 0.9  # of each converted section's pages show a figure; the rest declare why
KEYS = page_form.bibliography_keys()
PAGES = [page for section in CONVERTED_SECTIONS for page in page_form.chapter_pages(ROOT / section)]


def test_converted_sections_exist():
    for section in CONVERTED_SECTIONS:
        assert page_form.chapter_pages(ROOT / section), f"{section}: no chapter notebooks"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem[:4] for p in PAGES])
def test_converted_chapter_is_in_page_form(page):
    found = page_form.page_problems(page, KEYS)
    assert not found, f"{page.relative_to(ROOT)}:\n  " + "\n  ".join(found)


@pytest.mark.parametrize("section", CONVERTED_SECTIONS)
def test_most_pages_of_a_converted_section_show_a_figure(section):
    import json

    pages = page_form.chapter_pages(ROOT / section)
    shown = [p for p in pages if page_form.has_figure(json.loads(p.read_text(encoding="utf-8")))]
    assert len(shown) >= FIGURE_SHARE * len(pages), (
        f"{section}: {len(shown)}/{len(pages)} pages show a figure (at least {FIGURE_SHARE:.0%})")


# --- the checker on synthetic pages -------------------------------------------------------------

BOX = ":::{prf:definition} A thing\n:label: ftip-xxxx\n\nHypotheses, then the object {cite:p}`ba2016layer`.\n:::\n"
MARKDOWN = "# A thing\n\n" + BOX


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(source: str, *, tags=(), text: str = "", data: dict | None = None) -> dict:
    outputs = []
    if text:
        outputs.append({"output_type": "stream", "name": "stdout", "text": text})
    if data:
        outputs.append({"output_type": "display_data", "metadata": {}, "data": data})
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": source,
            "outputs": outputs, "execution_count": 1}


def good_page() -> dict:
    """A small page in form: every rule holds."""
    return {"cells": [
        _code("import sys", tags=["remove-cell"]),
        _md(MARKDOWN),
        _md("## The idea\n\nWhy a reader cares."),
        _md("## A worked instance\n\nThe formula $x+1$."),
        _code("x = 1\nprint(x + 1)", text="2\n"),
        _code("plot()", data={"image/png": "iVBOR", "text/plain": "<Figure size 640x480>"}),
        _md("Caption of the figure."),
        _md("## What it shows\n\nIt shows 2."),
        _md("## Checks\n\nBy hand: 1 + 1."),
        _code("assert 1 + 1 == 2\nprint('ok 123456789/2')", tags=["hide-input"],
              text="ok 123456789/2\n"),
        _md("## Scope\n\nOnly one instance."),
    ]}


def test_a_page_in_form_has_no_problems():
    assert page_form.problems(good_page(), MARKDOWN, KEYS) == []


def _bad(change) -> list[str]:
    page, markdown = copy.deepcopy(good_page()), MARKDOWN
    markdown = change(page) or markdown
    return page_form.problems(page, markdown, KEYS)


def _cell(page: dict, text: str) -> dict:
    return next(c for c in page["cells"] if text in "".join(c["source"]))


@pytest.mark.parametrize("heading", page_form.SECTIONS)
def test_a_missing_section_is_found(heading):
    def drop(page):
        cell = _cell(page, f"## {heading}")
        cell["source"] = cell["source"].replace(f"## {heading}", "Plain text.")
    assert any(f"'## {heading}' appears 0 times" in p for p in _bad(drop))


def test_sections_out_of_order_are_found():
    def swap(page):
        idea, instance = _cell(page, "## The idea"), _cell(page, "## A worked instance")
        idea["source"], instance["source"] = instance["source"], idea["source"]
    assert any("out of order" in p for p in _bad(swap))


def test_a_section_twice_is_found():
    def twice(page):
        page["cells"].append(_md("## Checks: more"))
    assert any("'## Checks' appears 2 times" in p for p in _bad(twice))


def test_a_heading_inside_a_fenced_block_is_not_a_section():
    assert page_form.headings("```\n## The idea\n```\n## Scope") == ["Scope"]


@pytest.mark.parametrize("tags", [[], ["remove-input"], ["hide-output"]])
def test_an_uncollapsed_check_is_found(tags):
    def show(page):
        _cell(page, "assert 1 + 1")["metadata"]["tags"] = tags
    assert any("not tagged hide-input" in p for p in _bad(show))


def test_hide_cell_collapses_a_check_too():
    def hide(page):
        _cell(page, "assert 1 + 1")["metadata"]["tags"] = ["hide-cell"]
    assert _bad(hide) == []


def test_a_long_visible_cell_is_found_and_blank_lines_do_not_count():
    def grow(lines):
        def change(page):
            _cell(page, "x = 1")["source"] = "\n\n".join(["x = 1"] * lines)
        return change
    assert _bad(grow(25)) == []
    assert any("26 non-blank lines" in p for p in _bad(grow(26)))


def test_a_long_code_line_is_found_in_any_cell():
    for target in ("x = 1", "assert 1 + 1"):
        def widen(page):
            cell = _cell(page, target)
            cell["source"] += "\ny = " + "1 + " * 21 + "1"  # 4 + 84 + 1 = 89 characters
        assert any("a code line of 89 characters" in p for p in _bad(widen))


def test_a_page_without_a_figure_must_declare_why():
    def drop(page):
        page["cells"] = [c for c in page["cells"] if "plot()" not in c["source"]]
    assert any("no figure" in p for p in _bad(drop))

    def declare(page):
        drop(page)
        return MARKDOWN + "\n<!-- figure: none -- the item is a single yes/no refusal -->\n"
    assert _bad(declare) == []

    def empty_reason(page):
        drop(page)
        return MARKDOWN + "\n<!-- figure: none -- -->\n"
    assert any("no figure" in p for p in _bad(empty_reason))


def test_an_svg_output_is_a_figure():
    def svg(page):
        _cell(page, "plot()")["outputs"][0]["data"] = {"image/svg+xml": "<svg/>"}
    assert _bad(svg) == []


@pytest.mark.parametrize("shown,what", [
    ("[np.float64(-1.0), np.float64(2.0)]", "numpy scalar"),
    ("(np.int64(3), 4)", "numpy scalar"),
    ("Fraction(1, 1)", "Fraction repr"),
    ("tensor([1., 2.])", "tensor repr"),
    ("source: [kimi2025linear]", "raw citation key"),
    ("cites ba2016layer here", "raw citation key"),
    ("the exact ratio 1234567/3", "fraction 1234567/3"),
    ("the exact ratio 3/10000000", "fraction 3/10000000"),
])
def test_output_hygiene(shown, what):
    for kind in ("stream", "plain"):
        def dirty(page):
            cell = _cell(page, "x = 1")
            if kind == "stream":
                cell["outputs"][0]["text"] = shown + "\n"
            else:
                cell["outputs"] = [{"output_type": "execute_result", "metadata": {},
                                    "execution_count": 1, "data": {"text/plain": shown}}]
        assert any(what in p for p in _bad(dirty)), (kind, shown)


def test_readable_outputs_pass():
    def fine(page):
        _cell(page, "x = 1")["outputs"][0]["text"] = (
            "1/16 = 6.25%, 57/14 = 4.07; ratio 123456/7 of float64 values in a tensor\n")
    assert _bad(fine) == []


def test_a_raw_citation_key_in_the_box_is_found_but_a_role_is_not():
    assert _bad(lambda page: MARKDOWN.replace("{cite:p}`ba2016layer`", "[ba2016layer]"))
    assert _bad(lambda page: MARKDOWN.replace("{cite:p}`ba2016layer`", "ba2016layer"))
    assert _bad(lambda page: MARKDOWN.replace("{cite:p}`ba2016layer`", "{cite:t}`ba2016layer`")) == []
