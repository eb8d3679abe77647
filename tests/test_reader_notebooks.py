"""Reader notebooks (tools/reader_notebooks.py): what Colab and plain Jupyter open from the website."""
from __future__ import annotations

import re

import nbformat
import pytest

import layout
import reader_notebooks as rn

CHAPTERS = sorted(layout.present_chapters().items())


def test_reader_notebooks_are_up_to_date():
    stale = [p for p, text in rn.texts().items() if not p.exists() or p.read_text() != text]
    assert not stale, f"run python tools/reader_notebooks.py: {[p.name for p in stale[:5]]}"
    extra = set(rn.READER_DIR.rglob("*.ipynb")) - set(rn.texts())
    assert not extra, sorted(extra)[:5]


@pytest.mark.parametrize("item_id,path", CHAPTERS, ids=[c[0] for c in CHAPTERS])
def test_reader_notebook_keeps_the_tested_code_and_drops_the_markup(item_id, path):
    tested = nbformat.read(layout.ROOT / path.with_suffix(".ipynb"), as_version=4)
    reader = nbformat.read(rn.reader_path(path.with_suffix(".md")), as_version=4)
    assert [c.cell_type for c in reader.cells] == [c.cell_type for c in tested.cells]
    for a, b in zip(tested.cells, reader.cells):
        if a.cell_type == "code":
            assert a.source == b.source and not b.outputs
    markdown = "\n".join(c.source for c in reader.cells if c.cell_type == "markdown")
    assert not re.search(r"\{[a-z:]+\}`|^:::|```\{", markdown, re.M), f"{item_id}: MyST markup left"
    kind, number, _ = rn.statements()[item_id.lower()]
    assert f"> **{kind} {number}**" in markdown


def test_statement_numbers_follow_the_book_order_and_links_point_to_the_site():
    numbers = [n for _, n, _ in rn.statements().values()]
    assert numbers == list(range(1, len(CHAPTERS) + 1))
    text = rn.convert_markdown("see {prf:ref}`ftip-0005` and {cite:p}`ba2016layer,kingma2015adam`, "
                               "{cite:t}`ba2016layer`, {func}`~ftipbook.claims.elicitation_witness`")
    kind, number, page = rn.statements()["ftip-0005"]
    assert f"[{kind} {number}]({rn.SITE_URL}/{page}.html#ftip-0005)" in text
    assert f"([Ba et al., 2016]({rn.SITE_URL}/book/bibliography.html); [Kingma and Ba, 2015](" in text
    assert "[Ba et al. (2016)](" in text
    assert f"[`elicitation_witness`]({rn.SITE_URL}/book/api/claims.html#ftipbook.claims.elicitation_witness)" in text


def test_unknown_api_names_are_refused():
    with pytest.raises(ValueError, match="not documented"):
        rn.convert_markdown("{func}`ftipbook.nowhere.thing`")
