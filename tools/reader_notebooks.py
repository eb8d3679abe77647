"""Write the reader notebooks: each chapter's notebook as plain Jupyter and Colab show it well.

A chapter's tested notebook keeps the book's MyST markup (statement directives, ``{prf:ref}`` and
``{cite:p}`` roles), which plain Jupyter and Colab print as raw text. The reader notebook
``notebooks/<part>/<section>/<chapter>.ipynb`` has the same cells in the same order, with

* every code cell's source identical to the tested notebook's (outputs left out: a reader runs it),
* the statement box as a quoted block headed by its bold kind, number and title, numbered as the
  website numbers it (one statement per chapter, numbered in the book's order),
* cross-references, citations and API roles as links to the website.

The website's Colab and download buttons open these notebooks. Run ``python tools/reader_notebooks.py``
after regenerating chapters; ``--check`` exits 1 when any reader notebook is out of date.
"""
from __future__ import annotations

import argparse
import re
import sys
from functools import cache
from pathlib import Path

import nbformat
import pybtex.database

from layout import ROOT, note, present_chapters

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from ftipbook_bib import author_year_label  # noqa: E402

from ftipbook.runtime import SITE_URL  # noqa: E402

READER_DIR = ROOT / "notebooks"
STATEMENT = re.compile(r"^:::\{prf:(\w+)\}[ \t]*(.*?)\n:label: (\S+)\n(.*?)\n:::[ \t]*$", re.M | re.S)
GLUE_FIGURE = re.compile(r"^```\{glue:figure\}[^\n]*\n(?::[^\n]*\n)*\n?(.*?)\n```[ \t]*$", re.M | re.S)
ROLE = re.compile(r"\{(prf:ref|cite:p|cite:t|cite|func|meth|mod|class|doc)\}`([^`]*)`")


def reader_path(chapter: Path) -> Path:
    """``chapters/part-2/x/00JS-....md`` -> ``notebooks/part-2/x/00JS-....ipynb`` (absolute)."""
    return READER_DIR / chapter.relative_to("chapters").with_suffix(".ipynb")


@cache
def statements() -> dict[str, tuple[str, int, str]]:
    """Statement label -> (kind, number, page path without suffix), in the book's order."""
    chapters = present_chapters()
    out = {}
    for number, item in enumerate((i for i in note.items() if i.id in chapters), start=1):
        kind = re.search(r":::\{prf:(\w+)\}", (ROOT / chapters[item.id]).with_suffix(".md").read_text())
        out[item.id.lower()] = (kind.group(1).title() if kind else item.type, number, chapters[item.id].as_posix())
    return out


@cache
def citation_labels() -> dict[str, str]:
    bib = pybtex.database.parse_file(ROOT / "ftipbook" / "references.bib")
    return {key: author_year_label(entry) for key, entry in bib.entries.items()}


@cache
def api_pages() -> dict[str, str]:
    """Documented module -> its API page (path without suffix)."""
    out = {}
    for page in (ROOT / "book" / "api").glob("*.md"):
        for module in re.findall(r"\.\. automodule:: (\S+)", page.read_text()):
            out[module] = page.relative_to(ROOT).with_suffix("").as_posix()
    return out


def _site(page: str, anchor: str = "") -> str:
    return f"{SITE_URL}/{page}.html" + (f"#{anchor}" if anchor else "")


def _api_link(target: str) -> str:
    short = target.startswith("~")
    name = target.lstrip("~")
    modules = [m for m in api_pages() if name == m or name.startswith(m + ".")]
    if not modules:
        raise ValueError(f"{name!r} is not documented on an API page under book/api")
    shown = name.rsplit(".", 1)[-1] if short else name
    return f"[`{shown}`]({_site(api_pages()[max(modules, key=len)], name)})"


def _cite(keys: str, textual: bool) -> str:
    links = []
    for key in (k.strip() for k in keys.split(",")):
        label = citation_labels()[key]
        who, year = label.rsplit(", ", 1)
        links.append(f"[{who} ({year})]" if textual else f"[{label}]")
        links[-1] += f"({_site('book/bibliography')})"
    return "; ".join(links) if textual else "(" + "; ".join(links) + ")"


def _role(match: re.Match) -> str:
    role, target = match.groups()
    if role == "prf:ref":
        if target.lower() not in statements():
            raise ValueError(f"{{prf:ref}}`{target}` names no statement of a present chapter")
        kind, number, page = statements()[target.lower()]
        return f"[{kind} {number}]({_site(page, target.lower())})"
    if role.startswith("cite"):
        return _cite(target, textual=role == "cite:t")
    if role == "doc":
        text, _, path = target.rpartition(" <")
        return f"[{text or path}]({_site(path.rstrip('>').lstrip('/'))})"
    return _api_link(target)


def _statement(match: re.Match) -> str:
    kind, title, label, body = match.groups()
    number = statements()[label.lower()][1]
    head = f"**{kind.title()} {number}** ({title})." if title else f"**{kind.title()} {number}.**"
    lines = f"{head} {body.strip()}".splitlines()
    return "\n".join(f"> {line}" if line.strip() else ">" for line in lines)


def convert_markdown(text: str) -> str:
    """One markdown cell in reader form: statements quoted and numbered, roles as website links."""
    text = STATEMENT.sub(_statement, text)
    text = GLUE_FIGURE.sub(lambda m: f"*Figure: {m.group(1).strip()}*", text)
    return ROLE.sub(_role, text)


def reader_notebook(chapter: Path) -> nbformat.NotebookNode:
    """The reader notebook of ``chapter`` (a ``chapters/...md`` path relative to the root)."""
    nb = nbformat.read(ROOT / chapter.with_suffix(".ipynb"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = convert_markdown(cell.source)
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def texts() -> dict[Path, str]:
    """Reader notebook path -> its text, for every chapter."""
    return {reader_path(p.with_suffix(".md")): nbformat.writes(reader_notebook(p.with_suffix(".md"))) + "\n"
            for p in present_chapters().values()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a reader notebook is out of date")
    args = parser.parse_args()
    want = texts()
    stale = [p for p, text in want.items() if not p.exists() or p.read_text() != text]
    extra = [p for p in READER_DIR.rglob("*.ipynb") if p not in want] if READER_DIR.exists() else []
    if args.check:
        for p in stale + extra:
            print(f"{p.relative_to(ROOT)} is out of date: run python tools/reader_notebooks.py", file=sys.stderr)
        return 1 if stale or extra else 0
    for p in extra:
        p.unlink()
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(want[p])
    print(f"{len(stale)} reader notebooks written, {len(extra)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
