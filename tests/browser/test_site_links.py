"""The built site's cross-links (issue 15, part 1): item and section ids written as text link to
their pages, and the bibliography lists entries under the author-year labels the text cites.

Reads ``_build/html`` (``tools/task.py test`` builds the book first); no browser needed.
"""
from __future__ import annotations

import re

import pytest

import layout

HTML = layout.ROOT / "_build" / "html"
pytestmark = pytest.mark.skipif(not (HTML / "index.html").exists(), reason="the book is not built")
LINKED_ID = re.compile(r'<a class="reference internal" href="([^"#]*)#(ftip-\w{4})">(?:<code[^>]*><span class="pre">)?'
                       r'(ftip-\w{4})')


def _unlinked_ids(html: str) -> list[str]:
    """Ids in the page's visible text that are not inside a link (code blocks and math skipped)."""
    html = re.sub(r"<(script|style|pre|title|head)\b.*?</\1>", "", html, flags=re.S)
    html = re.sub(r"<a\b.*?</a>", "", html, flags=re.S)
    html = re.sub(r'<span class="math[^"]*">.*?</span>', "", html, flags=re.S)
    html = re.sub(r'<h[1-6]\b.*?</h[1-6]>', "", html, flags=re.S)  # headings carry ids of their own
    html = re.sub(r'<div class="(sd-|bd-sidebar|toc)[^"]*".*?</div>', "", html, flags=re.S)
    return re.findall(r"ftip-\w{4}", re.sub(r"<[^>]+>", " ", html))


def test_outline_pages_link_every_item_id_that_has_a_chapter():
    chapters = layout.present_chapters()  # "ftip-0003" -> chapters/.../0003-...
    linked = 0
    for page in sorted((HTML / "book" / "outline").glob("*.html")):
        html = page.read_text()
        for href, label, shown in LINKED_ID.findall(html):
            assert label == shown.lower(), f"{page.name}: {shown} links to #{label}"
            if shown in chapters:
                assert href.endswith(chapters[shown].name + ".html"), (page.name, shown, href)
                linked += 1
        left = [i for i in _unlinked_ids(html) if i in chapters]
        assert not left, f"{page.name}: ids of chapters shown without a link: {left[:5]}"
    assert linked >= len(chapters)


def test_api_docstrings_link_their_items():
    html = (HTML / "book" / "api" / "compare.html").read_text()
    linked = {shown for _, _, shown in LINKED_ID.findall(html)}
    assert {"ftip-00JP", "ftip-00JY", "ftip-00L8"} <= linked
    chapters = layout.present_chapters()
    left = [i for i in _unlinked_ids(html) if i in chapters]
    assert not left, f"compare API: ids of chapters shown without a link: {left[:5]}"


def test_bibliography_labels_are_the_cited_author_year_strings():
    bib = (HTML / "book" / "bibliography.html").read_text()
    labels = set(re.findall(r'<span class="label"><span class="fn-bracket">\[</span>([^<]+)<span', bib))
    labels |= set(re.findall(r'<span class="label">\[([^\]<]+)\]</span>', bib))
    assert labels and not any(label.isdigit() for label in labels), sorted(labels)[:5]
    cited = set()
    for page in HTML.glob("chapters/**/*.html"):
        cited |= set(re.findall(r'href="[^"]*bibliography.html#[^"]*"[^>]*>([^<]+)</a>', page.read_text()))
    cited = {c for c in cited if re.search(r"[A-Za-z].*\d{4}[a-z]?$", c)}  # "Ba et al., 2016" (not "2016" of cite:t)
    assert cited, "no author-year citations found in the chapters"
    assert cited <= labels, f"cited strings without a matching bibliography label: {sorted(cited - labels)[:5]}"


def test_every_chapter_figure_is_numbered_with_a_caption_and_alt_text():
    """Each plot is a figure whose caption is the paragraph after it; its alt text is that caption."""
    missing = []
    for page in sorted(HTML.glob("chapters/**/*.html")):
        html = page.read_text()
        body = html[html.find('<article'):]
        for img in re.findall(r"<img\b[^>]*>", body):
            if "_images/" not in img:
                continue
            alt = re.search(r'alt="([^"]*)"', img)
            if alt is None or "_images/" in alt.group(1) or len(alt.group(1).split()) < 4:
                missing.append(f"{page.name}: alt {alt.group(1)[:40] if alt else None!r}")
        figures = body.count('<figure class="cell-figure')
        captions = len(re.findall(r'<figcaption>\s*<p><span class="caption-number">Fig\. \d+ </span>', body))
        if figures != captions:
            missing.append(f"{page.name}: {figures} figures, {captions} numbered captions")
    assert not missing, missing[:10]
