"""Each chapter's .ipynb is the executed image of its .md: same cells, every code cell run."""
from __future__ import annotations

import shutil

import nbformat
import pytest

import layout
import notebooks

CHAPTERS = sorted((layout.ROOT / "chapters").rglob("*.md"))


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_pairs_with_its_notebook(md):
    assert notebooks.pairs(md), f"{md.name}: regenerate with python tools/notebooks.py {md.relative_to(layout.ROOT)}"
    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    nbformat.validate(nb)
    assert [c.id for c in nb.cells] == [f"cell-{i:03d}" for i in range(len(nb.cells))]
    assert all("execution" not in c.metadata for c in nb.cells), "timing metadata must not be stored"
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


def test_pairing_detects_an_edit_made_only_in_the_source(tmp_path):
    md = CHAPTERS[0]
    copy = tmp_path / md.name
    shutil.copy(md, copy)
    shutil.copy(md.with_suffix(".ipynb"), copy.with_suffix(".ipynb"))
    assert notebooks.pairs(copy)
    copy.write_text(copy.read_text().replace("seed_everything(0)", "seed_everything(1)", 1))
    assert not notebooks.pairs(copy)


def test_pairing_detects_an_unexecuted_cell(tmp_path):
    md = CHAPTERS[0]
    copy = tmp_path / md.name
    shutil.copy(md, copy)
    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    code = next(c for c in nb.cells[1:] if c.cell_type == "code")
    code.execution_count = None
    nbformat.write(nb, copy.with_suffix(".ipynb"))
    assert not notebooks.pairs(copy)


def test_a_declared_output_tolerance_travels_into_the_notebook(tmp_path):
    head = "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n"
    plain = head + "```{code-cell} ipython3\nprint(1.5)\n```\n"
    declared = head + ("```{code-cell} ipython3\n---\noutput_tolerance: {rtol: 0.01, reason: "
                       "\"a test of the metadata\"}\n---\nprint(1.5)\n```\n")
    md = tmp_path / "0000-toy.md"
    md.write_text(plain)
    stored = notebooks.source_cells(md)
    stored.cells[0].execution_count = 1
    nbformat.write(stored, md.with_suffix(".ipynb"))
    assert notebooks.pairs(md)
    md.write_text(declared)
    assert not notebooks.pairs(md)  # the stored notebook lacks the declaration
    cell = notebooks.source_cells(md).cells[0]
    assert cell.metadata == {"output_tolerance": {"rtol": 0.01, "reason": "a test of the metadata"}}


def test_markdown_only_refresh_keeps_outputs_and_refuses_code_changes(tmp_path):
    md = CHAPTERS[0]
    copy = tmp_path / md.name
    shutil.copy(md, copy)
    shutil.copy(md.with_suffix(".ipynb"), copy.with_suffix(".ipynb"))
    before = nbformat.read(copy.with_suffix(".ipynb"), as_version=4)
    text = copy.read_text()
    cut = text.index("\n## ")
    copy.write_text(text[:cut] + "\n\nA new paragraph added in the source only.\n" + text[cut:])
    assert not notebooks.pairs(copy)
    notebooks.refresh_markdown(copy)
    after = nbformat.read(copy.with_suffix(".ipynb"), as_version=4)
    assert notebooks.pairs(copy)
    assert [c.outputs for c in after.cells if c.cell_type == "code"] == \
        [c.outputs for c in before.cells if c.cell_type == "code"]
    copy.write_text(copy.read_text().replace("seed_everything(0)", "seed_everything(1)", 1))
    with pytest.raises(ValueError, match="code cells changed"):
        notebooks.refresh_markdown(copy)
