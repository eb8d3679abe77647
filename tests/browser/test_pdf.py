"""The whole book as one PDF (issue 15): it opens, every page of the book starts a sheet and has a
bookmark, math is typeset and every figure is there, and the front page links to it.

Runs after ``tools/task.py book`` (or ``test``), which builds the single-page site
(``_build/singlehtml/ftipbook.html``) and prints it to ``_build/html/ftipbook.pdf`` with
``tools/pdf.py``; skipped when the PDF or Debian's ``chromium`` is missing. The PDF is read with the
standard library (``tools/pdf.py``'s reader; ``pypdf`` is not a dependency).
"""
from __future__ import annotations

import html as htmllib
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

import layout
import pdf
from tests.browser.test_pages import _Text

ROOT = layout.ROOT
PDF = pdf.PDF
PAGE = ROOT / "_build" / pdf.SINGLE / pdf.PAGE
CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
    pytest.mark.skipif(not (PDF.exists() and PAGE.exists()), reason="the PDF is not built (tools/task.py book)"),
]
DOCUMENT = re.compile(r'<span id="document-([^"]+)"></span>')
HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1>", re.S)
IMAGE_MIME = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")


def _toc_documents() -> list[str]:
    """Every file the table of contents lists, root first, in reading order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]]

    def walk(entries):
        for entry in entries or ():
            if "file" in entry:
                docs.append(entry["file"])
            walk(entry.get("chapters"))
            walk(entry.get("sections"))

    for part in toc.get("parts", ()):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return docs


def _heading_text(fragment: str) -> str:
    """A heading as the PDF outline shows it: formulas (typeset into glyphs) and the link sign dropped."""
    fragment = re.sub(r'<span class="math[^"]*">.*?</span>', "", fragment, flags=re.S)
    fragment = re.sub(r'<a class="headerlink".*?</a>', "", fragment, flags=re.S)
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


@pytest.fixture(scope="module")
def single_page() -> str:
    return PAGE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def pdf_bytes() -> bytes:
    return PDF.read_bytes()


@pytest.fixture(scope="module")
def headings(single_page) -> dict[str, str]:
    """Each document of the single page and the text of its first heading."""
    found = {}
    for match in DOCUMENT.finditer(single_page):
        heading = HEADING.search(single_page, match.end())
        assert heading is not None, f"{match.group(1)}: no heading after the document's start"
        found[match.group(1)] = _heading_text(heading.group(2))
    return found


def test_single_page_holds_every_document_of_the_table_of_contents(headings):
    root, *rest = _toc_documents()
    assert root == "book/intro"
    assert list(headings) == rest, "the single page's documents differ from _toc.yml's, or their order does"
    assert sum(doc.startswith("chapters/") for doc in rest) > 100


def test_pdf_opens_with_a_sheet_and_a_bookmark_per_document(pdf_bytes, headings):
    pages = pdf.page_count(pdf_bytes)
    # every document starts on a new sheet, after the front page's own sheet
    assert pages >= len(headings) + 1, f"{pages} pages for {len(headings)} documents"
    # Chromium drops the space where a long heading wraps onto a second line: compare without spaces
    titles = {"".join(title.split()) for title in pdf.outline_titles(pdf_bytes)}
    missing = [f"{doc}: {text!r}" for doc, text in headings.items() if "".join(text.split()) not in titles]
    assert not missing, f"{len(missing)} documents have no bookmark, e.g. {missing[:3]}"
    chapters = [doc for doc in headings if doc.startswith("chapters/")]
    assert len({headings[doc] for doc in chapters}) == len(chapters), "two chapters print the same heading"


def _tiny_pdf(count: int, leaves: int) -> bytes:
    """A hand-written PDF whose page tree claims ``count`` pages and holds ``leaves``."""
    kids = " ".join(f"{3 + i} 0 R" for i in range(leaves))
    objects = [b"<</Type /Catalog /Pages 2 0 R>>", f"<</Type /Pages /Kids [{kids}] /Count {count}>>".encode()]
    objects += [b"<</Type /Page /Parent 2 0 R /MediaBox [0 0 10 10]>>"] * leaves
    body = b"".join(b"%d 0 obj\n%s\nendobj\n" % (i + 1, obj) for i, obj in enumerate(objects))
    return b"%PDF-1.4\n" + body + b"trailer\n<</Root 1 0 R>>\n%%EOF\n"


def test_pdf_reader_counts_pages_and_refuses_a_damaged_file(pdf_bytes):
    assert pdf.page_count(_tiny_pdf(3, 3)) == 3
    with pytest.raises(ValueError, match="counts 3 pages but holds 2 page objects"):
        pdf.page_count(_tiny_pdf(3, 2))
    with pytest.raises(ValueError, match="no document catalog"):
        pdf.page_count(_tiny_pdf(1, 1).replace(b"/Catalog", b"/Katalog"))
    with pytest.raises(ValueError, match="truncated"):
        pdf.page_count(pdf_bytes[: len(pdf_bytes) // 2])
    with pytest.raises(ValueError, match="not a PDF"):
        pdf.page_count(b"<html>" + pdf_bytes)


def test_math_is_typeset_in_the_printed_page(single_page, pdf_bytes):
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([CHROMIUM, *pdf.FLAGS, f"--user-data-dir={profile}",
                              f"--virtual-time-budget={pdf.BUDGET_MS}", "--dump-dom", PAGE.as_uri()],
                             capture_output=True, text=True, timeout=1800, check=True).stdout
    formulas = single_page.count('class="math')
    assert formulas > 100
    assert dom.count("<mjx-container") >= formulas, "MathJax left formulas untypeset"
    parsed = _Text()
    parsed.feed(dom)
    visible = "".join(parsed.text)
    for raw in ("\\frac", "\\operatorname", "$$", "\\begin{pmatrix}", "\\tfrac", "\\("):
        assert raw not in visible, f"raw TeX {raw!r} is visible in the single page"
    # the PDF embeds MathJax's own fonts: formulas were typeset when it was printed
    fonts = {name for body in pdf.checked_objects(pdf_bytes).values()
             for name in re.findall(rb"/FontName /[A-Z]{6}\+([\w-]+)", body)}
    assert {b"MathJax_Main-Regular", b"MathJax_Math-Italic"} <= fonts, sorted(fonts)


def _notebook_figures(notebook: Path) -> int:
    """Pictures a notebook shows: image outputs, plus each paste of a glued image
    (``glue(name, fig, display=False)`` stores it, ``{glue:figure} name`` shows it)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    markdown = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    count = 0
    for cell in cells:
        for output in cell.get("outputs", ()):
            data = output.get("data", {})
            count += any(mime in data for mime in IMAGE_MIME)
            glued = output.get("metadata", {}).get("scrapbook", {})
            if any(glued.get("mime_prefix", "\0") + mime in data for mime in IMAGE_MIME):
                count += len(re.findall(r"\{glue(?::figure)?\}`?\s*" + re.escape(glued["name"]) + r"\b", markdown))
    return count


def test_every_figure_of_the_chapters_is_in_the_page_and_the_pdf(single_page, pdf_bytes):
    images = sum(_notebook_figures(ROOT / f"{doc}.ipynb") for doc in _toc_documents()
                 if (ROOT / f"{doc}.ipynb").exists())
    sources = re.findall(r'<img\b[^>]*\bsrc="([^"]+)"', single_page)
    assert images > 0 and len(sources) == images, f"{len(sources)} images on the page, {images} in the notebooks"
    missing = [src for src in sources if not (PAGE.parent / src).is_file()]
    assert not missing, f"image files missing: {missing[:3]}"
    # each distinct picture is one image object of the PDF at least (pictures with transparency add a mask)
    pictures = sum(1 for body in pdf.checked_objects(pdf_bytes).values() if re.search(rb"/Subtype /Image\b", body))
    assert pictures >= len(set(sources)), f"{pictures} image objects in the PDF for {len(set(sources))} pictures"


def test_front_page_links_to_the_pdf():
    front = ROOT / "_build" / "html" / "book" / "intro.html"
    links = re.findall(r'href="([^"]*ftipbook\.pdf)"', front.read_text(encoding="utf-8"))
    assert links, "the front page has no link to the PDF"
    assert all((front.parent / link).resolve() == PDF.resolve() for link in links), links
