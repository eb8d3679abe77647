"""The page form of a chapter (issue 27), checked on its stored notebook and its MyST source.

A converted chapter has, in this order, the sections ``## The idea``, ``## A worked instance``,
``## What it shows``, ``## Checks`` and ``## Scope``; every code cell under ``## Checks`` is
collapsed on the site (tagged ``hide-input`` or ``hide-cell``); no visible code cell is longer
than 25 non-blank lines; no code line is longer than 88 characters; the stored outputs hold a
figure (``image/png`` or ``image/svg+xml``) or the source declares why not with a line
``figure: none -- <reason>``; outputs carry no raw reprs (``np.float64(``, ``Fraction(``,
``tensor(``), no raw citation keys, and, outside Checks, no fraction with more than 6 digits
in its numerator or denominator; the statement box cites with roles, never with raw keys.
The contributor guide (``book/contributing.md``) explains each rule.

``python tools/page_form.py chapters/part-2/<section>`` prints the problems of every chapter
under the folders given (exit status 1 when there are any).
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

SECTIONS = ("The idea", "A worked instance", "What it shows", "Checks", "Scope")
MAX_CELL_LINES = 25
MAX_LINE_CHARACTERS = 88
MAX_FRACTION_DIGITS = 6
HIDDEN = {"hide-input", "hide-cell"}
FIGURE_TYPES = ("image/png", "image/svg+xml")
FIGURE_NONE = re.compile(r"figure:\s*none\s*--\s*(?P<reason>\S.*)", re.I)
RAW_REPRS = (
    (re.compile(r"\bnp\.(?:float|int|uint|bool)\d*\("), "a numpy scalar repr"),
    (re.compile(r"\bFraction\("), "a Fraction repr"),
    (re.compile(r"\btensor\("), "a tensor repr"),
)
#: a citation key in brackets as the note writes them (``[kimi2025linear]``); any bibliography
#: key of ``book/references.bib`` counts too, bracketed or not
CITATION_KEY = re.compile(r"\[([a-z]+\d{4}[a-z]+)\]")
CITE_ROLE = re.compile(r"\{cite(?::[a-z]+)?\}`[^`]*`")
LONG_FRACTION = re.compile(rf"\b(?:\d{{{MAX_FRACTION_DIGITS + 1},}}/\d+|\d+/\d{{{MAX_FRACTION_DIGITS + 1},}})\b")
BOX = re.compile(r"^:::\{prf:[a-z]+\}.*?^:::\s*$", re.M | re.S)


@dataclass(frozen=True)
class Cell:
    """A notebook cell as the page form sees it: kind, source, tags, outputs, its ``##`` section."""

    kind: str
    source: str
    tags: frozenset[str]
    outputs: tuple[dict, ...]
    section: str | None

    @property
    def hidden(self) -> bool:
        return bool(HIDDEN & self.tags)

    @property
    def removed(self) -> bool:
        return "remove-cell" in self.tags

    def output_text(self) -> str:
        """Every text the cell's outputs show: streams, plain text and HTML."""
        parts = []
        for out in self.outputs:
            parts.append(_text(out.get("text", "")))
            data = out.get("data", {})
            parts += [_text(data.get(kind, "")) for kind in ("text/plain", "text/html", "text/markdown")]
            if out.get("output_type") == "error":
                parts.append(f"{out.get('ename')}: {out.get('evalue')}")
        return "\n".join(p for p in parts if p)


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def headings(markdown: str) -> list[str]:
    """The ``##`` headings of a markdown cell (outside fenced blocks), without the hashes."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(r"^## (?!#)", line):
            found.append(line[3:].strip())
    return found


def cells(notebook: dict) -> list[Cell]:
    """The notebook's cells, each with the title of the ``##`` section it sits in."""
    section, out = None, []
    for cell in notebook["cells"]:
        source = _text(cell.get("source", ""))
        if cell["cell_type"] == "markdown":
            found = headings(source)
            out.append(Cell("markdown", source, frozenset(), (), section))
            section = found[-1] if found else section
            continue
        tags = frozenset(cell.get("metadata", {}).get("tags", []))
        out.append(Cell(cell["cell_type"], source, tags, tuple(cell.get("outputs", [])), section))
    return out


def _section_of(title: str | None) -> str | None:
    """The page-form section a heading belongs to (``Checks: refusals`` counts as ``Checks``)."""
    if title is None:
        return None
    return next((s for s in SECTIONS if title == s or title.startswith(s + ":")), None)


def bibliography_keys(config: Path = ROOT / "_config.yml") -> frozenset[str]:
    """The keys of the book's bibliography: every file ``bibtex_bibfiles`` of ``_config.yml`` names."""
    files = yaml.safe_load(config.read_text(encoding="utf-8"))["bibtex_bibfiles"]
    text = "".join((config.parent / f).read_text(encoding="utf-8") for f in files)
    return frozenset(re.findall(r"^@\w+\{\s*([^,\s]+)\s*,", text, re.M))


def _raw_keys(text: str, keys: frozenset[str]) -> set[str]:
    words = set(re.findall(r"[A-Za-z0-9_:-]+", text))
    return set(CITATION_KEY.findall(text)) | (words & keys)


def has_figure(notebook: dict) -> bool:
    """Whether a stored output holds an image."""
    return any(kind in out.get("data", {}) for cell in notebook["cells"]
               for out in cell.get("outputs", []) for kind in FIGURE_TYPES)


def declared_no_figure(markdown: str) -> str | None:
    """The reason a page declares for having no figure (``figure: none -- <reason>``), if any."""
    match = FIGURE_NONE.search(markdown)
    return match["reason"].strip().removesuffix("-->").strip() or None if match else None


def problems(notebook: dict, markdown: str, keys: frozenset[str] = frozenset()) -> list[str]:
    """Everything on one page that breaks the page form (an empty list for a page in form).

    ``notebook`` is the stored ``.ipynb`` as a dict, ``markdown`` its MyST source, ``keys`` the
    bibliography's citation keys (raw keys of the note's ``name2025word`` shape are found anyway).
    """
    found: list[str] = []
    page = cells(notebook)
    titles = [t for c in page if c.kind == "markdown" for t in headings(c.source)]
    order = [s for s in (_section_of(t) for t in titles) if s is not None]
    for name in SECTIONS:
        if order.count(name) != 1:
            found.append(f"section '## {name}' appears {order.count(name)} times (once is the form)")
    if order != [s for s in SECTIONS if s in order]:
        found.append(f"sections out of order: {order} (the form is {list(SECTIONS)})")
    for number, cell in enumerate(page, start=1):
        if cell.kind != "code" or cell.removed:
            continue
        where = f"cell {number}"
        section = _section_of(cell.section)
        if section == "Checks" and not cell.hidden:
            found.append(f"{where}: a code cell under '## Checks' is not tagged hide-input or hide-cell")
        lines = [line for line in cell.source.splitlines() if line.strip()]
        if not cell.hidden and len(lines) > MAX_CELL_LINES:
            found.append(f"{where}: a visible code cell of {len(lines)} non-blank lines "
                         f"(at most {MAX_CELL_LINES})")
        for line in cell.source.splitlines():
            if len(line) > MAX_LINE_CHARACTERS:
                found.append(f"{where}: a code line of {len(line)} characters "
                             f"(at most {MAX_LINE_CHARACTERS}): {line[:40]}...")
        shown = cell.output_text()
        for pattern, what in RAW_REPRS:
            if pattern.search(shown):
                found.append(f"{where}: the output shows {what} ({pattern.search(shown)[0]}...)")
        for key in sorted(_raw_keys(shown, keys)):
            found.append(f"{where}: the output shows the raw citation key {key!r}")
        if section != "Checks":
            for fraction in LONG_FRACTION.findall(shown):
                found.append(f"{where}: the output shows the fraction {fraction}, over "
                             f"{MAX_FRACTION_DIGITS} digits (print a decimal; exact value in Checks)")
    if not has_figure(notebook) and declared_no_figure(markdown) is None:
        found.append("no figure in the stored outputs and no 'figure: none -- <reason>' line")
    for box in BOX.findall(markdown):
        for key in sorted(_raw_keys(CITE_ROLE.sub("", box), keys)):
            found.append(f"the statement box names the raw citation key {key!r} (cite with a role)")
    return found


def chapter_pages(folder: Path) -> list[Path]:
    """The chapter notebooks of a section folder, in file-name order."""
    return sorted(folder.glob("[0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z]-*.ipynb"))


def page_problems(notebook: Path, keys: frozenset[str] | None = None) -> list[str]:
    """:func:`problems` of a chapter notebook on disk, read with its ``.md`` source."""
    keys = bibliography_keys() if keys is None else keys
    markdown = notebook.with_suffix(".md").read_text(encoding="utf-8")
    return problems(json.loads(notebook.read_text(encoding="utf-8")), markdown, keys)


def main(folders: list[str]) -> int:
    keys, bad = bibliography_keys(), 0
    for folder in folders:
        for page in chapter_pages(ROOT / folder):
            for problem in page_problems(page, keys):
                bad += 1
                print(f"{page.relative_to(ROOT)}: {problem}")
    print(f"{bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
