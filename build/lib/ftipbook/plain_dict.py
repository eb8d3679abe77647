"""The plain-dict (JSON-ready) form of a flat dataclass record, and back.

Used by the records that travel inside checkpoints and artifact manifests:
:class:`ftipbook.train.config.TrainConfig` (ftip-001I) and :class:`ftipbook.artifact.Provenance`
(ftip-006M). Tuple fields become lists on the way out (JSON has no tuples) and tuples again on
the way in; a key that names no field is refused, so a misspelt or foreign record fails loudly
instead of being half-read.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any


def _tuple_fields(cls: type) -> set[str]:
    return {f.name for f in fields(cls) if str(f.type).startswith("tuple")}


def to_plain_dict(record: Any) -> dict[str, Any]:
    """The fields of the dataclass instance ``record`` by name, its tuple fields as lists."""
    d = asdict(record)
    for name in _tuple_fields(type(record)):
        d[name] = list(d[name])
    return d


def from_plain_dict(cls: type, d: Mapping[str, Any]) -> Any:
    """Inverse of :func:`to_plain_dict`: ``cls(**d)`` with tuple fields made tuples again.

    Keys that are not fields of ``cls`` raise ``ValueError`` naming them; missing keys take the
    field defaults, and the class validates the values as it always does.
    """
    unknown = sorted(set(d) - {f.name for f in fields(cls)})
    if unknown:
        raise ValueError(f"unknown {cls.__name__} field(s) {unknown}")
    d = dict(d)
    for name in _tuple_fields(cls) & set(d):
        d[name] = tuple(d[name])
    return cls(**d)


__all__ = ["to_plain_dict", "from_plain_dict"]
