"""The depth-reuse source records (ftip-00KI, 00KJ, 00KK)."""
import re
from pathlib import Path

import pytest

from ftipbook.compare import depth_sources as D

BIB = Path(__file__).resolve().parents[2] / "ftipbook" / "references.bib"


def test_every_record_cites_a_bibliography_entry_and_states_no_number():
    keys = set(re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8"), flags=re.M))
    assert set(D.SOURCES) <= keys
    for name, r in D.DEPTH_REUSE.records.items():
        assert r.source_key in D.SOURCES, name
        assert r.kind in ("qualitative", "categorical") and isinstance(r.value, str), name
        assert (r.unit == "claim") == (r.kind == "qualitative"), name


def test_each_source_has_one_claim_and_its_conditions():
    for key in D.SOURCES:
        claims = [r for r in D.DEPTH_REUSE.records.values() if r.source_key == key and r.unit == "claim"]
        assert len(claims) == 1
        conds = D.conditions(key)
        assert conds and all(r.unit.startswith("assumption: ") and r.source_key == key for r in conds.values())
    assert {r.unit for r in D.conditions(D.LOOPED).values()} == {
        "assumption: program", "assumption: state", "assumption: precision"}


@pytest.mark.parametrize("bad", ["mozer2026recirculation", "", None, 3])
def test_conditions_refuses_an_unknown_source(bad):
    with pytest.raises(ValueError, match="source_key"):
        D.conditions(bad)
