"""After an HTML build: point the notebook buttons at the reader notebooks, drop what no page loads.

A chapter's Colab button opens its reader notebook (``notebooks/...``, written by
``tools/reader_notebooks.py``: statements and references readable outside the book) instead of
the tested notebook, and the download button serves the same file. A script that the page head
carries twice is kept once, and only the search page loads the search index.

The offline MathJax copy holds every MathJax bundle; the pages load ``tex-chtml.js`` only, which
fetches TeX extensions from ``input/tex/extensions``, fonts from ``output/chtml`` and, when a reader
turns them on in the math menu, the accessibility components (``a11y``, ``sre``, ``ui``). Every
other bundle and component goes, and so do the JavaScript and CSS source maps of the theme.
"""
import re
import shutil
from pathlib import Path

COLAB_CHAPTERS = "/blob/main/chapters/"
COLAB_READER = "/blob/main/notebooks/"

#: MathJax files and folders the pages can load (relative to ``_static/mathjax``).
MATHJAX_KEEP = {"tex-chtml.js", "input/tex", "output/chtml", "a11y", "sre", "ui"}


def _mathjax_prune(root: Path) -> None:
    for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        rel = path.relative_to(root).as_posix()
        if any(rel == keep or rel.startswith(keep + "/") or keep.startswith(rel + "/") for keep in MATHJAX_KEEP):
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists():
            path.unlink()


SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>\n?", re.S)


def _unique_scripts(html: str) -> str:
    """Each ``<script>`` of the page head once: extensions set up before reading add theirs twice,
    and a repeated ``const THEBE_JS_URL`` is a SyntaxError in every page's console."""
    end = html.find("</head>")
    seen: set[str] = set()

    def once(match: re.Match) -> str:
        if match.group() in seen:
            return ""
        seen.add(match.group())
        return match.group()

    return SCRIPT.sub(once, html[:end]) + html[end:] if end > 0 else html


SEARCH_INDEX = re.compile(r'\s*<script src="[^"]*searchindex\.js"></script>')


def _pages(app, out: Path) -> None:
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        fixed = _unique_scripts(html).replace(COLAB_CHAPTERS, COLAB_READER)
        if page.name != "search.html":  # the index (0.9 MB) is loaded by the search page only
            fixed = SEARCH_INDEX.sub("", fixed)
        if fixed != html:
            page.write_text(fixed, encoding="utf-8")


def _reader_notebooks(app, out: Path) -> None:
    reader = Path(app.srcdir) / "notebooks"
    for served in (out / "_sources" / "chapters").rglob("*.ipynb"):
        source = reader / served.relative_to(out / "_sources" / "chapters")
        if source.exists():
            shutil.copyfile(source, served)


def finish(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    _pages(app, out)
    _reader_notebooks(app, out)
    static = out / "_static"
    if (static / "mathjax" / "tex-chtml.js").exists():
        _mathjax_prune(static / "mathjax")
    for source_map in static.rglob("*.map"):
        source_map.unlink()


def setup(app):
    app.connect("build-finished", finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
