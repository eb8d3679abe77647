"""The reproducibility checklist (ftip-00KF)."""
import pytest

from ftipbook.compare.cost import UNKNOWN, CostVector
from ftipbook.compare.reproducibility import CEILING_STATUS, ITEMS, ReproducibilityRecord, checklist

SHA = "ab" * 32
COST = CostVector({"train_flops": 1e9, "wall_time": UNKNOWN}, {"train_flops": "FLOP", "wall_time": "s"})


def test_complete_record_is_reproducible():
    c = checklist(ReproducibilityRecord("m", SHA, "seed 0, 160 documents", COST))
    assert c.reproducible and c.open_items == ()
    assert [r.item for r in c.results] == list(ITEMS)
    assert "train_flops" in c.results[2].reason and "wall_time" not in c.results[2].reason
    assert c.ceiling == CEILING_STATUS


def test_unknown_and_failed_items():
    c = checklist(ReproducibilityRecord("published"))
    assert not c.reproducible and c.open_items == ITEMS
    assert {r.status for r in c.results} == {"unknown"}
    c = checklist(ReproducibilityRecord("m", "not-a-hash", " ", COST))
    assert [r.status for r in c.results] == ["failed", "failed", "verified"]
    assert checklist(ReproducibilityRecord("m", SHA.upper(), "s", COST)).results[0].status == "failed"
    assert checklist(ReproducibilityRecord("m", SHA[:40], "s", COST)).results[0].status == "failed"
    blank = CostVector({"energy": UNKNOWN}, {"energy": "J"})
    assert checklist(ReproducibilityRecord("m", SHA, "s", blank)).results[2].status == "unknown"
    assert checklist(ReproducibilityRecord("m", SHA, "s", blank)).ceiling == CEILING_STATUS


def test_bad_input():
    with pytest.raises(ValueError, match="system"):
        ReproducibilityRecord("")
    with pytest.raises(TypeError, match="published ratio"):
        ReproducibilityRecord("m", cost=6.3)
    with pytest.raises(TypeError, match="checkpoint_sha256"):
        ReproducibilityRecord("m", checkpoint_sha256=123)
    with pytest.raises(TypeError, match="ReproducibilityRecord"):
        checklist({"system": "m"})
