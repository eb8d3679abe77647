"""The note's item list: ids, kinds, titles and placement of all 209 numbered items.

``items.json`` holds facts only (no prose): the order of the note, each item's kind
(Definition, Theorem, ...), title, part, chapter and section, and whether its figure was lost.
The book's table of contents, coverage tests and chapter headers are derived from it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

KINDS = ("Definition", "Theorem", "Lemma", "Proposition", "Corollary", "Example", "Remark", "Notation", "Convention")


@dataclass(frozen=True)
class Item:
    """One numbered statement of the note."""

    order: int
    id: str
    type: str
    title: str
    part: str
    chapter: str
    section: str
    lost_figure: bool

    @property
    def short_id(self) -> str:
        """The id without its ``ftip-`` prefix, e.g. ``000Q``."""
        return self.id.removeprefix("ftip-")

    @property
    def label(self) -> str:
        """The Sphinx label of the item's statement (the id in lower case)."""
        return self.id.lower()


@dataclass(frozen=True)
class Container:
    """A part, chapter or section of the note."""

    level: str  # "part" | "chapter" | "section"
    id: str
    title: str
    children: tuple["Container", ...] = ()


@lru_cache(maxsize=1)
def _raw() -> dict:
    return json.loads(resources.files("ftipbook").joinpath("items.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def items() -> tuple[Item, ...]:
    """All items in the note's order."""
    return tuple(Item(**row) for row in sorted(_raw()["items"], key=lambda r: r["order"]))


def get(item_id: str) -> Item:
    """The item with this id (``ftip-000Q`` or ``000Q``, any case)."""
    key = item_id.upper().removeprefix("FTIP-")
    for item in items():
        if item.short_id.upper() == key:
            return item
    raise KeyError(f"no item {item_id!r} in the note; ids look like 'ftip-000Q'")


@lru_cache(maxsize=1)
def parts() -> tuple[Container, ...]:
    """Parts, each holding its chapters, each holding its sections, in the note's order."""
    return tuple(
        Container(
            "part",
            p["id"],
            f"Part {p['part']}: {p['title']}",
            tuple(
                Container("chapter", c["id"], c["title"], tuple(Container("section", s["id"], s["title"]) for s in c["sections"]))
                for c in p["chapters"]
            ),
        )
        for p in _raw()["parts"]
    )


def section_items(section_id: str) -> tuple[Item, ...]:
    """The items of one section, in order."""
    return tuple(item for item in items() if item.section == section_id)
