"""The whole book as one PDF: a single-page HTML build printed by headless Chromium (issue 15).

    .venv/bin/python tools/pdf.py                 # after the website build: _build/html/ftipbook.pdf
    .venv/bin/python tools/pdf.py --toc T.yml --path-output DIR --pdf DIR/book.pdf   # a part of the book

Sphinx's ``singlehtml`` builder writes every page of the table of contents into one HTML file. Run
with the website's output folder (the default), it reuses the pages that build parsed
(``_build/.doctrees``) and only writes. The builder names the file after the root page
(``book/intro.html``) but writes its links relative to the top of the build, so this script saves
the page at the top (``_build/singlehtml/ftipbook.html``), points links into the page at the page
itself (they become links inside the PDF), adds a print stylesheet (no sidebars, header, buttons
or footers; every page of the book on a new sheet; code and outputs wrapped to the sheet's width)
and prints it with Debian's ``chromium`` after MathJax has typeset every formula. The PDF's
outline (bookmarks) follows the headings. The creation date written into the PDF is replaced by
the date of the last git commit, so two builds of one commit differ only in the numbering of the
tagged structure's elements; the dictionaries are then packed into compressed object streams
(Chromium writes them as plain text, which makes the file about 2.5 times as large).
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
SINGLE = "singlehtml"
PAGE = "ftipbook.html"
PDF = ROOT / "_build" / "html" / "ftipbook.pdf"
#: Virtual time (ms) the page gets before printing: MathJax typesets the whole book in chunks.
BUDGET_MS = 120_000
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--run-all-compositor-stages-before-draw"]

PRINT_CSS = """
@page { size: A4; margin: 15mm 14mm 16mm 14mm; }
@media print {
  .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article, .prev-next-footer,
  .prev-next-area, .bd-footer, .bd-footer-article, .bd-footer-content, #pst-back-to-top,
  .skip-link, .search-button__wrapper, .headerlink, button.copybtn, .toggle-details__summary-text,
  .dropdown-launch-buttons, .dropdown-download-buttons, .pst-async-banner-revealer,
  .ftipbook-pdf-link { display: none !important; }
  html, body { font-size: 10.5pt; }
  .bd-container, .bd-container__inner, .bd-page-width, .bd-main, .bd-content, .bd-article-container,
  .bd-article { max-width: none !important; width: auto !important; margin: 0 !important;
                padding: 0 !important; display: block !important; }
  span[id^="document-"] + section { break-before: page; }
  h1, h2, h3, h4, h5, h6 { break-after: avoid; }
  div.cell, div.cell_input, div.cell_output, div.highlight, div[class*=highlight-], pre, table {
    break-inside: auto !important; }
  div.highlight, div[class*=highlight-] { display: block !important; }
  pre, .highlight pre, .output pre { white-space: pre-wrap !important; overflow-wrap: anywhere;
                                     overflow: visible !important; font-size: 8pt; }
  div.cell_output, div.output, .highlight, .table-wrapper, .pst-scrollable-table-container {
    overflow: visible !important; max-width: 100% !important; }
  img { max-width: 100% !important; height: auto !important; break-inside: avoid; }
  figure, .figure { break-inside: avoid; }
  table { font-size: 8.5pt; }
  mjx-container[display="true"] { overflow: visible !important; max-width: 100%; }
}
"""


def build_single_page(toc: Path | None, path_output: Path) -> Path:
    """Run the ``singlehtml`` build and return the printable page written beside its output."""
    cmd = [str(BIN / "jupyter-book"), "build", str(ROOT), "--builder", SINGLE, "--path-output", str(path_output)]
    if toc is not None:
        cmd += ["--toc", str(toc)]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    out = path_output / "_build" / SINGLE
    redirect = (out / "index.html").read_text(encoding="utf-8")
    root = re.search(r'url=([^"]+\.html)', redirect)
    if root is None:
        raise RuntimeError(f"{out / 'index.html'} does not name the single page: {redirect[:200]!r}")
    html = (out / root.group(1)).read_text(encoding="utf-8")
    html = re.sub(r'href="' + re.escape(root.group(1)) + r'(?=["#])', 'href="', html)
    html = html.replace("</head>", f'<style media="print">{PRINT_CSS}</style>\n</head>', 1)
    page = out / PAGE
    page.write_text(html, encoding="utf-8")
    return page


def print_pdf(page: Path, pdf: Path, chromium: str) -> None:
    """Print ``page`` to ``pdf`` after ``BUDGET_MS`` of virtual time (scripts, fonts and MathJax)."""
    pdf.parent.mkdir(parents=True, exist_ok=True)
    pdf.unlink(missing_ok=True)  # a PDF left from an earlier build must not pass for this one
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={BUDGET_MS}",
                        "--no-pdf-header-footer", "--generate-pdf-document-outline", f"--print-to-pdf={pdf}",
                        page.as_uri()], check=True, capture_output=True, timeout=1800)
    if not pdf.exists() or pdf.stat().st_size == 0:
        raise RuntimeError(f"chromium wrote no PDF to {pdf}")


def fix_dates(pdf: Path) -> None:
    """Replace the PDF's creation and modification dates by the last commit's (same length, so the
    cross-reference offsets stay valid)."""
    try:
        stamp = subprocess.run(["git", "log", "-1", "--format=%cd", "--date=format-local:%Y%m%d%H%M%S"], cwd=ROOT,
                               env={"TZ": "UTC", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return
    data = pdf.read_bytes()
    fixed = re.sub(rb"\(D:\d{14}", b"(D:" + stamp.encode(), data)
    if len(fixed) == len(data) and fixed != data:
        pdf.write_bytes(fixed)


def compact(pdf: Path, per_stream: int = 500) -> None:
    """Pack the PDF's dictionary objects into compressed object streams (PDF 1.5), with a compressed
    cross-reference stream. Chromium writes the tagged structure (one object per element, which the
    outline needs) and the links as plain text: about half the file, and a tenth of it compressed.
    Objects are read at the offsets of the file's own cross-reference table; streams stay as they are."""
    data = pdf.read_bytes()
    start = int(re.search(rb"startxref\s+(\d+)\s+%%EOF\s*$", data).group(1))
    table = re.match(rb"xref\s+0 (\d+)\s+(.*?)trailer\s*(<<.*?>>)\s*startxref", data[start:], re.S)
    if table is None:  # not the classic table Chromium writes: leave the file alone
        return
    size, trailer = int(table.group(1)), table.group(3)
    entries = table.group(2).split()
    offsets = {i: int(entries[3 * i]) for i in range(size) if entries[3 * i + 2] == b"n"}
    ends = sorted(offsets.values()) + [start]
    bounds = {o: ends[k + 1] for k, o in enumerate(ends[:-1])}
    plain, streams = {}, {}
    for num, off in offsets.items():
        body = re.match(rb"\d+ 0 obj\s*(.*)\bendobj\s*$", data[off:bounds[off]], re.S)
        if body is None:
            raise RuntimeError(f"{pdf}: object {num} is not where the cross-reference table says")
        (streams if re.search(rb">>\s*stream\r?\n", body.group(1)) else plain)[num] = body.group(1).rstrip()
    out = bytearray(data[:data.index(b"\n") + 1].replace(b"%PDF-1.4", b"%PDF-1.5") + b"%\xe2\xe3\xcf\xd3\n")
    where: dict[int, tuple[int, int, int]] = {}  # object -> (type, field 2, field 3) of its xref entry
    for num, body in sorted(streams.items()):
        where[num] = (1, len(out), 0)
        out += b"%d 0 obj\n%s\nendobj\n" % (num, body)
    next_num = size
    packed = sorted(plain.items())
    for first in range(0, len(packed), per_stream):
        chunk = packed[first:first + per_stream]
        head, tail = [], bytearray()
        for k, (num, body) in enumerate(chunk):
            head.append(b"%d %d" % (num, len(tail)))
            tail += body + b"\n"
            where[num] = (2, next_num, k)
        header = b" ".join(head) + b"\n"
        raw = zlib.compress(header + bytes(tail), 9)
        where[next_num] = (1, len(out), 0)
        out += b"%d 0 obj\n<</Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d>>\nstream\n" % (
            next_num, len(chunk), len(header), len(raw)) + raw + b"\nendstream\nendobj\n"
        next_num += 1
    xref_num, xref_at = next_num, len(out)
    where[xref_num] = (1, xref_at, 0)
    rows = b"".join(bytes([t]) + a.to_bytes(4, "big") + b.to_bytes(2, "big")
                    for t, a, b in (where.get(i, (0, 0, 0xFFFF if i == 0 else 0)) for i in range(xref_num + 1)))
    raw = zlib.compress(rows, 9)
    keep = b"".join(re.findall(rb"/(?:Root|Info|ID)\s*(?:\d+ \d+ R|\[[^\]]*\])", trailer))
    out += b"%d 0 obj\n<</Type /XRef /Size %d /W [1 4 2] %s /Filter /FlateDecode /Length %d>>\nstream\n" % (
        xref_num, xref_num + 1, keep, len(raw)) + raw + b"\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n" % xref_at
    pdf.write_bytes(bytes(out))


# --- reading the PDF back (standard library only; used by this script and tests/browser/test_pdf.py) ---------

def _objects(data: bytes) -> dict[int, bytes]:
    """Every ``N 0 obj ... endobj`` body, including those packed in object streams."""
    objects = {int(m.group(1)): m.group(2) for m in re.finditer(rb"(\d+) 0 obj\s*(.*?)\s*endobj", data, re.S)}
    for body in list(objects.values()):
        if b"/Type /ObjStm" not in body:
            continue
        head = re.search(rb"/N (\d+).*?/First (\d+)", body, re.S)
        stream = re.search(rb"stream\r?\n(.*)endstream", body, re.S)
        if not (head and stream):
            continue
        raw = zlib.decompress(stream.group(1)) if b"/FlateDecode" in body else stream.group(1)
        n, first = int(head.group(1)), int(head.group(2))
        pairs = list(map(int, raw[:first].split()))[: 2 * n]
        offsets = [(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)]
        for k, (num, off) in enumerate(offsets):
            end = offsets[k + 1][1] if k + 1 < len(offsets) else len(raw) - first
            objects[num] = raw[first + off:first + end].strip()
    return objects


def checked_objects(data: bytes) -> dict[int, bytes]:
    """The objects of a complete PDF; refuses a file without the header, the end-of-file marker or a catalog."""
    if not data.startswith(b"%PDF-1."):
        raise ValueError(f"not a PDF: it starts with {data[:8]!r}")
    if b"%%EOF" not in data[-64:]:
        raise ValueError("the PDF is truncated: no %%EOF at its end")
    objects = _objects(data)
    if not any(re.search(rb"/Type\s*/Catalog\b", body) for body in objects.values()):
        raise ValueError("the PDF has no document catalog")
    return objects


def page_count(data: bytes) -> int:
    """Pages in the page tree: the ``/Count`` of the root ``/Pages`` node (the one with no parent),
    cross-checked against the number of ``/Page`` leaves."""
    objects = checked_objects(data)
    roots = [b for b in objects.values() if re.search(rb"/Type\s*/Pages\b", b) and b"/Parent" not in b]
    leaves = sum(1 for b in objects.values() if re.search(rb"/Type\s*/Page(?![s\w])", b))
    if len(roots) != 1:
        raise ValueError(f"the PDF has {len(roots)} root page-tree nodes, not 1")
    count = int(re.search(rb"/Count\s+(\d+)", roots[0]).group(1))
    if count != leaves:
        raise ValueError(f"the page tree counts {count} pages but holds {leaves} page objects")
    return count


def _pdf_string(token: bytes) -> str:
    """Decode a PDF text string: ``(literal)`` with escapes, or ``<hex>`` (UTF-16BE with a byte-order mark)."""
    if token.startswith(b"<"):
        raw = bytes.fromhex(token[1:-1].decode("ascii"))
    else:
        body, raw, i = token[1:-1], bytearray(), 0
        escapes = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("f"): 12}
        while i < len(body):
            c = body[i]
            if c == 0x5C and i + 1 < len(body):
                nxt = body[i + 1]
                octal = re.match(rb"[0-7]{1,3}", body[i + 1:i + 4])
                if octal:
                    raw.append(int(octal.group(), 8) & 0xFF)
                    i += 1 + len(octal.group())
                    continue
                raw.append(escapes.get(nxt, nxt))
                i += 2
                continue
            raw.append(c)
            i += 1
        raw = bytes(raw)
    if raw.startswith(b"\xfe\xff"):
        return raw[2:].decode("utf-16-be")
    return raw.decode("latin-1")


def outline_titles(data: bytes) -> list[str]:
    """The titles of the PDF's outline (bookmark) entries, in file order."""
    titles = []
    for body in checked_objects(data).values():
        if b"/Title" in body and (b"/Parent" in body) and b"/Type /Catalog" not in body:
            m = re.search(rb"/Title\s*(\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]*>)", body, re.S)
            if m:
                titles.append(" ".join(_pdf_string(m.group(1)).split()))
    return titles


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--toc", type=Path, help="a table of contents of its own (default: the book's _toc.yml)")
    parser.add_argument("--path-output", type=Path, default=ROOT,
                        help="folder whose _build/ receives the single page (default: the website's)")
    parser.add_argument("--pdf", type=Path, default=PDF, help=f"where the PDF goes (default: {PDF.relative_to(ROOT)})")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("pdf: skipped, Debian's 'chromium' is not on PATH (apt-get install chromium)", file=sys.stderr)
        return 0
    start = time.perf_counter()
    page = build_single_page(args.toc, args.path_output.resolve())
    built = time.perf_counter()
    print_pdf(page, args.pdf, chromium)
    fix_dates(args.pdf)
    compact(args.pdf)
    done = time.perf_counter()
    pages = page_count(args.pdf.read_bytes())
    print(f"pdf: {args.pdf} has {pages} pages, {args.pdf.stat().st_size / 2**20:.1f} MiB; single-page build "
          f"{built - start:.0f} s, printing {done - built:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
