"""The reproducibility checklist of a model-instance comparison (ftip-00KF).

Which of KDA, full attention and a JEPA-like model is more capable or cheaper is an empirical
question, answered only by comparisons that can be repeated. A :class:`ReproducibilityRecord`
holds, for one system, the three things such a comparison needs: an identified checkpoint (the
SHA-256 of its weights, checked against the file) or a reproducible training run, the fixed
evaluation seeds or draw, and a measured cost vector. :func:`checklist` evaluates each item
against the record and answers ``"verified"``, ``"unknown"`` (not recorded) or ``"failed"``
(recorded but not usable); :attr:`Checklist.reproducible` holds only when all three are verified.

An architecture's *ceiling* (the best score it could reach at any cost) is never an item of the
checklist: :data:`CEILING_STATUS` is what every record reports for it, because a finite set of
measurements gives attained points (lower bounds), not the supremum.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from ftipbook.compare.cost import UNKNOWN, CostVector, Unknown
from ftipbook.compare.records import Record

#: The checklist items, in the order they are evaluated and printed.
ITEMS = ("identified checkpoint", "fixed evaluation seeds", "measured cost vector")
#: What a record establishes about an architecture's ceiling, always an estimand.
CEILING_STATUS = "estimand (a hypothesis; measured scores are attained lower bounds)"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class ReproducibilityRecord(Record):
    """One system's reproducibility coordinates (ftip-00KF); unrecorded ones are ``UNKNOWN``.

    ``checkpoint_sha256``: the hex SHA-256 of the weights, as a loader recomputed it from the
    file; ``evaluation_seeds``: a description of the fixed evaluation seeds or draw (e.g. the
    seed and size, or the document ids' digest); ``cost``: a
    :class:`~ftipbook.compare.cost.CostVector` measured for this system.
    """

    KIND: ClassVar[str] = "reproducibility"

    system: str
    checkpoint_sha256: str | Unknown = UNKNOWN
    evaluation_seeds: str | Unknown = UNKNOWN
    cost: CostVector | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        if not isinstance(self.system, str) or not self.system.strip():
            raise ValueError(f"ReproducibilityRecord.system must be a non-empty string, got {self.system!r}")
        for name in ("checkpoint_sha256", "evaluation_seeds"):
            value = getattr(self, name)
            if not isinstance(value, (str, Unknown)):
                raise TypeError(f"ReproducibilityRecord.{name} must be a string or UNKNOWN, got {type(value).__name__}")
        if not isinstance(self.cost, (CostVector, Unknown)):
            raise TypeError(f"ReproducibilityRecord.cost must be a CostVector or UNKNOWN, got "
                            f"{type(self.cost).__name__} (a published ratio or speedup is not a measured cost)")


@dataclass(frozen=True)
class ItemResult:
    """One checklist item: ``status`` is ``"verified"``, ``"unknown"`` or ``"failed"``, ``reason`` says why."""

    item: str
    status: str
    reason: str


@dataclass(frozen=True)
class Checklist:
    """The three item results of one record (ftip-00KF)."""

    system: str
    results: tuple[ItemResult, ...]

    @property
    def reproducible(self) -> bool:
        """True when every item is verified."""
        return all(r.status == "verified" for r in self.results)

    @property
    def open_items(self) -> tuple[str, ...]:
        """The items that are not verified, in checklist order."""
        return tuple(r.item for r in self.results if r.status != "verified")

    @property
    def ceiling(self) -> str:
        """:data:`CEILING_STATUS`, whatever the record: no checklist establishes a ceiling."""
        return CEILING_STATUS


def _checkpoint(value: str | Unknown) -> ItemResult:
    item = ITEMS[0]
    if isinstance(value, Unknown):
        return ItemResult(item, "unknown", "no checkpoint hash recorded")
    if not _SHA256.match(value):
        return ItemResult(item, "failed", f"{value[:20]!r} is not a hex SHA-256 digest")
    return ItemResult(item, "verified", f"sha256 {value[:12]}...")


def _seeds(value: str | Unknown) -> ItemResult:
    item = ITEMS[1]
    if isinstance(value, Unknown):
        return ItemResult(item, "unknown", "no evaluation seeds or draw recorded")
    if not value.strip():
        return ItemResult(item, "failed", "an empty description fixes no seed")
    return ItemResult(item, "verified", value)


def _cost(value: CostVector | Unknown) -> ItemResult:
    item = ITEMS[2]
    if isinstance(value, Unknown):
        return ItemResult(item, "unknown", "no cost vector recorded")
    measured = [n for n in value.names if n not in value.unknown()]
    if not measured:
        return ItemResult(item, "unknown", f"every coordinate is unknown ({', '.join(value.names)})")
    return ItemResult(item, "verified", f"measured: {', '.join(measured)}")


def checklist(record: ReproducibilityRecord) -> Checklist:
    """Evaluate the three items of ftip-00KF against ``record``."""
    if not isinstance(record, ReproducibilityRecord):
        raise TypeError(f"checklist takes a ReproducibilityRecord, got {type(record).__name__}")
    return Checklist(record.system, (_checkpoint(record.checkpoint_sha256), _seeds(record.evaluation_seeds),
                                     _cost(record.cost)))


__all__ = ["ITEMS", "CEILING_STATUS", "ReproducibilityRecord", "ItemResult", "Checklist", "checklist"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
