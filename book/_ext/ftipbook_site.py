"""After an HTML build: point the notebook buttons at the reader notebooks, drop what no page loads.

A chapter's Colab button opens its reader notebook (``notebooks/...``, written by
``tools/reader_notebooks.py``: statements and references readable outside the book) instead of
the tested notebook, and the download button serves the same file. Scripts added twice to a page
are kept once.

The offline MathJax copy holds every MathJax bundle; the pages load ``tex-chtml.js`` only, which
fetches TeX extensions from ``input/tex/extensions``, fonts from ``output/chtml`` and, when a reader
turns them on in the math menu, the accessibility components (``a11y``, ``sre``, ``ui``). Every
other bundle and component goes, and so do the JavaScript and CSS source maps of the theme.
"""
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


def _reader_notebooks(app, out: Path) -> None:
    reader = Path(app.srcdir) / "notebooks"
    for page in (out / "chapters").rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        if COLAB_CHAPTERS in html:
            page.write_text(html.replace(COLAB_CHAPTERS, COLAB_READER), encoding="utf-8")
    for served in (out / "_sources" / "chapters").rglob("*.ipynb"):
        source = reader / served.relative_to(out / "_sources" / "chapters")
        if source.exists():
            shutil.copyfile(source, served)


def finish(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    _reader_notebooks(app, out)
    static = out / "_static"
    if (static / "mathjax" / "tex-chtml.js").exists():
        _mathjax_prune(static / "mathjax")
    for source_map in static.rglob("*.map"):
        source_map.unlink()


def unique_scripts(app, pagename, templatename, context, doctree) -> None:
    """Each script once per page: sphinx-thebe's configuration script is added twice (its
    ``const THEBE_JS_URL`` then raises a SyntaxError in every page's console)."""
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = str(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("html-page-context", unique_scripts)
    app.connect("build-finished", finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
