"""Where every page of the book lives, derived from the item list (single source of truth).

Chapter notebooks: ``chapters/part-<n>/<section-slug>/<SHORTID>-<title-slug>.md`` (+ ``.ipynb``).
Part, chapter and section index pages: ``book/outline/<id>.md``.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ftipbook import items as note  # noqa: E402

PART_NUMBER = {"I": 1, "II": 2, "III": 3}
CHAPTER_FILE = re.compile(r"^(?P<short>[0-9A-Z]{4})-[a-z0-9-]+$")


def slug(text: str, limit: int = 60) -> str:
    """Lower-case ASCII slug of a title, cut at a word boundary."""
    words = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    out = ""
    for word in words:
        if len(out) + len(word) + 1 > limit:
            break
        out = f"{out}-{word}" if out else word
    return out


def section_title(section_id: str) -> str:
    for part in note.parts():
        for chapter in part.children:
            for section in chapter.children:
                if section.id == section_id:
                    return section.title
    raise KeyError(section_id)


def chapter_path(item: note.Item) -> Path:
    """Path (relative to the root, no suffix) of the item's chapter notebook."""
    part = f"part-{PART_NUMBER[item.part]}"
    return Path("chapters") / part / slug(section_title(item.section)) / f"{item.short_id}-{slug(item.title)}"


def outline_page(container_id: str) -> Path:
    """Path (relative to the root, no suffix) of a part/chapter/section index page."""
    return Path("book") / "outline" / container_id


def present_chapters(root: Path = ROOT) -> dict[str, Path]:
    """Item id -> chapter path (relative, no suffix) for every ``chapters/**/*.md`` present.

    Raises ValueError for a file whose name names no known item, or an item with two files.
    """
    known = {item.short_id: item for item in note.items()}
    found: dict[str, Path] = {}
    for md in sorted((root / "chapters").rglob("*.md")):
        match = CHAPTER_FILE.match(md.stem)
        if not match or match["short"] not in known:
            raise ValueError(f"{md.relative_to(root)}: file name does not start with a known item id like '000Q-'")
        item = known[match["short"]]
        if item.id in found:
            raise ValueError(f"item {item.id} has two chapters: {found[item.id]} and {md.relative_to(root)}")
        found[item.id] = md.relative_to(root).with_suffix("")
    return found
