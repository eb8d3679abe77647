"""The book's structure follows the note: item list, table of contents, chapter files, settings."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pybtex.database
import pytest
import yaml

import layout
import toc
from ftipbook import REPOSITORY_URL, items
from ftipbook.runtime import SITE_URL

ROOT = layout.ROOT
CHAPTERS = sorted((ROOT / "chapters").rglob("*.md"))
PRF_KIND = {"Definition": "definition", "Theorem": "theorem", "Lemma": "lemma", "Proposition": "proposition",
            "Corollary": "corollary", "Example": "example", "Remark": "remark", "Notation": "notation"}


def test_item_list_is_complete_and_ordered():
    all_items = items.items()
    assert len(all_items) == 209
    assert [i.order for i in all_items] == list(range(1, 210))
    assert len({i.id for i in all_items}) == 209
    assert {i.type for i in all_items} <= set(items.KINDS)
    sections = {s.id for p in items.parts() for c in p.children for s in c.children}
    assert {i.section for i in all_items} == sections
    with pytest.raises(KeyError, match="no item"):
        items.get("ftip-XXXX")


def test_every_chapter_names_one_known_item_at_its_expected_path():
    found = layout.present_chapters()  # raises on unknown ids and duplicates
    assert found, "no chapters found"
    for item_id, path in found.items():
        assert path == layout.chapter_path(items.get(item_id)), f"{path} should be {layout.chapter_path(items.get(item_id))}"


def test_present_chapters_rejects_unknown_and_duplicate_items(tmp_path):
    (tmp_path / "chapters/x").mkdir(parents=True)
    (tmp_path / "chapters/x/ZZZZ-nothing.md").write_text("")
    with pytest.raises(ValueError, match="known item id"):
        layout.present_chapters(tmp_path)
    (tmp_path / "chapters/x/ZZZZ-nothing.md").unlink()
    (tmp_path / "chapters/x/000Q-one.md").write_text("")
    (tmp_path / "chapters/x/000Q-two.md").write_text("")
    with pytest.raises(ValueError, match="two chapters"):
        layout.present_chapters(tmp_path)


def test_toc_and_listings_are_up_to_date():
    assert toc.main.__module__ == "toc"
    for path, text in toc.outline_texts().items():
        assert path.read_text() == text, f"{path} is stale: run python tools/toc.py"
    assert (ROOT / "_toc.yml").read_text() == toc.render(toc.toc_tree()), "_toc.yml is stale: run python tools/toc.py"


def _toc_files(node) -> list[str]:
    out = []
    if isinstance(node, dict):
        if "file" in node:
            out.append(node["file"])
        for value in node.values():
            out += _toc_files(value)
    elif isinstance(node, list):
        for value in node:
            out += _toc_files(value)
    return out


def test_toc_order_equals_note_order_and_every_page_exists():
    tree = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [tree["root"]] + _toc_files(tree["parts"])
    for f in files:
        assert (ROOT / f).with_suffix(".md").exists() or (ROOT / f).with_suffix(".ipynb").exists(), f
    chapter_ids = [items.get(Path(f).name[:4]).id for f in files if f.startswith("chapters/")]
    assert chapter_ids == sorted(chapter_ids, key=lambda i: items.get(i).order)
    assert set(chapter_ids) == set(layout.present_chapters())
    containers = [c.id for c in toc.containers()]
    assert all(layout.outline_page(c).as_posix() in files for c in containers)


#: A reader scrolls sideways past this many characters of code.
MAX_CODE_LINE = 88
#: The website shows stored outputs in a box this many characters wide; longer lines scroll sideways.
MAX_OUTPUT_LINE = 100
#: ``{prf:ref}`` prints the statement's kind itself ("Example 131"); a kind word before it doubles it.
DOUBLED_KIND = re.compile(r"\b(Definition|Theorem|Lemma|Example|Remark|Proposition|Corollary|Notation|Convention)s? "
                          r"\{prf:ref\}")


def _output_text(output) -> str:
    """The text a reader sees of one stored output: stream text, an error, or a result's text/plain."""
    if output.get("output_type") == "error":
        return f"{output.get('ename')}: {output.get('evalue')}"
    text = output.get("text") or output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_template(md):
    """Colab cell first, the statement in a labelled prf directive of the item's kind, asserts, scope."""
    item = items.get(md.stem[:4])
    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "code" and "remove-cell" in first.metadata.get("tags", [])
    assert "google.colab" in first.source and f"git+{REPOSITORY_URL}" in first.source
    text = md.read_text()
    kind = PRF_KIND.get(item.type, "definition")
    assert re.search(rf":::\{{prf:{kind}\}} {re.escape(item.title)}\n:label: {item.label}\n", text), \
        f"{md.name}: statement must be a prf:{kind} titled {item.title!r} labelled {item.label}"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert re.search(r"^\s*assert ", code, re.M), f"{md.name} asserts nothing"
    assert "## What this shows, and what it does not" in text or "\n## Scope\n" in text  # page form (issue 27)
    wide = [line for c in nb.cells if c.cell_type == "code" for line in c.source.splitlines()
            if len(line) > MAX_CODE_LINE]
    assert not wide, f"{md.name}: code lines over {MAX_CODE_LINE} characters: {wide[:3]}"
    printed = [line for c in nb.cells if c.cell_type == "code" for o in c.outputs
               for line in _output_text(o).splitlines() if len(line) > MAX_OUTPUT_LINE]
    assert not printed, f"{md.name}: output lines over {MAX_OUTPUT_LINE} characters: {[p[:60] for p in printed[:3]]}"
    doubled = DOUBLED_KIND.findall(text)
    assert not doubled, f"{md.name}: a kind word before {{prf:ref}} is printed twice: {doubled[:3]}"


def test_front_matter_does_not_double_kind_words():
    doubled = {p.name: DOUBLED_KIND.findall(p.read_text()) for p in (ROOT / "book").rglob("*.md")}
    assert not {k: v for k, v in doubled.items() if v}


def _depth(entry: dict) -> int:
    return 1 + max((_depth(e) for e in entry.get("sections", [])), default=0)


def test_navigation_shows_each_part_once_three_levels_deep_with_one_search_box():
    """Each numbered part is its caption, led by an overview page that nests nothing; below it,
    chapter, section and item pages: numbers such as 9.1.1 at most (issue 15, part 6)."""
    tree = yaml.safe_load((ROOT / "_toc.yml").read_text())
    numbered = [part for part in tree["parts"] if part.get("numbered")]
    assert len(numbered) == 2
    for part in numbered:
        overview, *chapters = part["chapters"]
        assert "sections" not in overview and overview["file"].startswith("book/outline/")
        assert max(_depth(c) for c in chapters) <= 3
        title = (ROOT / f"{overview['file']}.md").read_text().splitlines()[1]
        assert title.startswith("# Overview of") and part["caption"] not in title
    sidebar = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["html_sidebars"]["**"]
    assert not any("search" in name for name in sidebar)
    assert "```{tableofcontents}" in (ROOT / "book/intro.md").read_text()


def test_repository_url_is_one_setting():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["repository"]["url"] == REPOSITORY_URL
    assert config["html"]["baseurl"].rstrip("/") == SITE_URL
    assert config["execute"]["execute_notebooks"] == "off"
    assert "chapters/**/*.md" in config["exclude_patterns"]


def test_bibliography_renders_no_editorial_notes_and_labels_author_year():
    """Provenance notes stay in the .bib as comments; the page lists entries as "Surname et al., year",
    the label the chapters' author-year citations print."""
    sys.path.insert(0, str(ROOT / "book/_ext"))
    from ftipbook_bib import author_year_label
    bib = pybtex.database.parse_file(ROOT / "book/references.bib")
    editorial = ("verif", "source note", "parse", "partial entry", "not confirmed", "found by search")
    notes = {k: e.fields["note"] for k, e in bib.entries.items() if "note" in e.fields}
    assert not {k: n for k, n in notes.items() if any(w in n.lower() for w in editorial)}
    labels = {k: author_year_label(e) for k, e in bib.entries.items()}
    assert labels["phuong2022formal"] == "Phuong and Hutter, 2022"
    assert labels["ba2016layer"] == "Ba et al., 2016"
    assert labels["mozer2026recirculation"] == "Mozer and others, 2026"
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    assert config["config"]["bibtex_default_style"] == "ftipbook_author_year"
    assert set(config["local_extensions"]) == {"ftipbook_bib", "ftipbook_links", "ftipbook_figures",
                                               "ftipbook_site"}


def test_every_citation_has_a_bibliography_entry():
    bib = pybtex.database.parse_file(ROOT / "book/references.bib")
    pages = list((ROOT / "book").rglob("*.md")) + CHAPTERS
    cited = {key for p in pages for key in re.findall(r"\{cite:[pt]\}`(?:\{[^}]*\}){0,2}([\w:-]+)`", p.read_text())}
    assert cited, "no citations found"
    assert cited <= set(bib.entries), f"cited but not in references.bib: {sorted(cited - set(bib.entries))}"
