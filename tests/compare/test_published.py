"""Published values: provenance of every record and the derived checks of ftip-00KW and 00LC."""
from __future__ import annotations

import dataclasses
import re
from fractions import Fraction
from pathlib import Path

import pytest

from ftipbook.compare import published as P

BIB = Path(__file__).resolve().parents[2] / "ftipbook" / "references.bib"


def bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8"), flags=re.M))


def test_every_record_cites_a_bibliography_entry():
    keys = bib_keys()
    missing = {name: r.source_key for name, r in P.all_records().items() if r.source_key not in keys}
    assert not missing, missing


def test_records_are_unique_and_well_typed():
    total = sum(len(reg) for reg in P.REGISTRIES)
    assert total == len(P.all_records())  # no name is shared between registries
    for name, r in P.all_records().items():
        assert r.kind in P.KINDS, name
        if r.kind in P.NUMERIC_KINDS:
            assert isinstance(r.value, (int, float)) and not isinstance(r.value, bool), name
        else:
            assert isinstance(r.value, str) and r.value, name


def test_the_notes_literals_are_encoded():
    # every value the note prints, against the record (a typo in published.py fails here)
    expect = {
        "experimental_pretraining_tokens": 1.4, "experimental_total_params": 48, "experimental_active_params": 3,
        "kda_layers_per_mla_layer": 3, "released_pretraining_tokens": 5.7, "released_max_context": 1,
        "moonlight_total_params": 16, "moonlight_active_params": 3, "prefill_speedup_fig7": 2.9,
        "decode_speedup_fig7": 2.2, "decode_speedup_sec63": 2.3, "tpot_kimi_ms": 1.84, "tpot_mla_ms": 11.48,
        "tpot_speedup_reported": 6.3, "ruler_128k_kimi": 84.3, "ruler_128k_mla": 81.3,
        "ruler_decode_acceleration": 3.98, "kv_cache_reduction_max": 75, "table4_mmlu_pro_kimi": 67.4,
        "table4_mmlu_pro_mla": 65.7, "table4_livebench_kimi": 45.2, "table4_livebench_mla": 45.7,
        "table4_evalplus_kimi": 61.0, "table4_evalplus_mla": 62.6, "eval_temperature": 1.0,
        "num_layers": 43, "hidden_size": 4096, "num_attention_heads": 64, "num_kv_heads": 1,
        "num_routed_experts": 256, "experts_per_token": 6, "num_shared_experts": 1,
        "twin_logit_distance_adam": 3.6e-3, "noise_twin_logit_distance_adam": 2.9e-7,
        "final_per_head_invariant_distance": 56,
    }
    for name, value in expect.items():
        record = P.get(name)
        assert record.kind == "reported", name
        assert record.value == value, (name, record.value, value)
    assert P.get("mla_positional_encoding").value == "NoPE"
    assert P.get("recurrent_state_dtype").value == "float32"
    assert P.get("commit").value == "6b6f546f"
    assert P.KIMI_LINEAR["table4_livebench_kimi"].unit == "Pass@1"


def test_tpot_ratio_is_only_marginally_consistent_with_6_3():
    check = P.tpot_speedup_check()
    # by hand: 11.48/1.84 and the extreme ratios from the two-decimal rounding intervals
    assert check.point == pytest.approx(1148 / 184, abs=1e-15)
    assert round(check.point, 3) == 6.239 and round(check.point, 1) != 6.3
    assert round(check.compatible.lo, 4) == round(11.475 / 1.845, 4) == 6.2195
    assert round(check.compatible.hi, 4) == round(11.485 / 1.835, 4) == 6.2589
    assert (check.reported_interval.lo, check.reported_interval.hi) == (6.25, 6.35)
    assert check.overlap is not None and check.overlap.lo == 6.25
    assert check.verdict == "marginally consistent"
    assert 0.2 < check.overlap_share < 0.25
    assert P.get("tpot_speedup_derived").value == check.point
    assert P.get("tpot_speedup_derived").kind == "derived"


def test_ratio_consistency_verdicts():
    assert P.ratio_consistency(10.0, 2.0, 5.0, 1).verdict == "consistent"
    assert P.ratio_consistency(10.0, 2.0, 9.0, 1).verdict == "inconsistent"
    assert P.ratio_consistency(10.0, 2.0, 9.0, 1).overlap is None
    assert P.ratio_consistency(10.0, 2.0, 9.0, 1).overlap_share == 0.0
    # an explicit reported precision overrides the one read from the printed value
    assert P.ratio_consistency(11.48, 1.84, 6.3, 2, reported_decimals=2).verdict == "inconsistent"


def test_rounding_interval_is_exact_in_decimal():
    iv = P.rounding_interval(1.84, 2)
    assert (iv.lo, iv.hi) == (1.835, 1.845)
    assert P.rounding_interval(6.3, 1).hi == 6.35
    assert P.rounding_interval(3, 0).lo == 2.5
    assert 1.84 in iv and 1.846 not in iv


def test_decode_figure_and_prose_differ_by_a_tenth():
    d = P.decode_speedup_discrepancy()
    assert d.absolute == float(Fraction("2.3") - Fraction("2.2")) == 0.1
    assert round(d.relative, 4) == round(0.1 / 2.2, 4) == 0.0455
    # the two one-decimal rounding intervals touch only at 2.25
    assert d.common is not None and d.common.lo == d.common.hi == 2.25
    assert P.get("decode_speedup_gap").value == d.absolute
    assert P.compare_values(2.2, 2.4).common is None


def test_table4_differences_have_mixed_signs():
    diffs = P.table4_differences()
    assert diffs == {"mmlu_pro": 1.7, "livebench": -0.5, "evalplus": -1.6}
    assert diffs["mmlu_pro"] == float(Fraction("67.4") - Fraction("65.7"))
    assert {v > 0 for v in diffs.values()} == {True, False}
    for b, v in diffs.items():
        assert P.get(f"table4_{b}_difference").value == v


def test_other_derived_records():
    assert P.get("ruler_128k_gap").value == 3.0
    assert P.get("query_heads_per_kv_head").value == 64
    assert round(P.get("twin_to_noise_logit_ratio").value, -2) == 12400
    for name, r in P.all_records().items():
        if r.kind == "derived":
            assert r.note, name


def test_unknown_names_list_the_known_ones():
    with pytest.raises(KeyError, match="known names: .*tpot_kimi_ms"):
        P.get("tpot")
    with pytest.raises(KeyError, match="KIMI_LINEAR has no record 'num_layers'"):
        P.KIMI_LINEAR.get("num_layers")
    with pytest.raises(KeyError, match="num_layers"):
        P.DEEPSEEK_V4_FLASH["layers"]
    assert "num_layers" in P.DEEPSEEK_V4_FLASH and "num_layers" not in P.KIMI_LINEAR


def test_registries_and_records_are_read_only():
    with pytest.raises(TypeError):
        P.KIMI_LINEAR.records["x"] = P.get("tpot_kimi_ms")  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        P.get("tpot_kimi_ms").value = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(value=1.0, kind="guessed"), ValueError),
        (dict(value="1.0", kind="reported"), TypeError),
        (dict(value=True, kind="reported"), TypeError),
        (dict(value=float("nan"), kind="reported"), ValueError),
        (dict(value=1.0, kind="categorical"), TypeError),
        (dict(value=1.0, kind="derived"), ValueError),  # a derived value must say how
        (dict(value=1.0, kind="reported", source_key=""), ValueError),
    ],
)
def test_bad_records_are_refused(kwargs, error):
    base = dict(unit="x", source_key="kimi2025linear", locator="Figure 7")
    with pytest.raises(error):
        P.PublishedValue(**{**base, **kwargs})


@pytest.mark.parametrize(
    "call",
    [
        lambda: P.rounding_interval(1.0, -1),
        lambda: P.rounding_interval(float("inf"), 1),
        lambda: P.ratio_consistency(1.0, 0.0, 1.0, 2),
        lambda: P.ratio_consistency(1.0, 0.004, 1.0, 2),  # denominator may round to zero
        lambda: P.ratio_consistency(-1.0, 1.0, 1.0, 2),
        lambda: P.compare_values(0.0, 1.0),
        lambda: P.decimals_of(1e-7),
    ],
)
def test_bad_check_inputs_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_non_numbers_raise_type_error():
    with pytest.raises(TypeError):
        P.rounding_interval("1.84", 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        P.Registry("R", {"a": 1.0})  # type: ignore[dict-item]
