"""Every external number the note quotes, as data with its provenance.

One :class:`PublishedValue` per quoted number or fact: its value in the units the note uses,
the bibliography key of its source (a key of ``ftipbook/references.bib``, the book's bibliography, shipped with the package), the locator inside that
source exactly as the note cites it, and its kind:

- ``"reported"``: a number the source states (e.g. 1.84 ms);
- ``"derived"``: a number computed here from reported ones (never typed in), with the
  computation named in ``note``;
- ``"categorical"``: a named setting (e.g. ``"NoPE"``, ``"float32"``);
- ``"qualitative"``: an outcome or property the source states in words.

Records are grouped in read-only :class:`Registry` objects: :data:`KIMI_LINEAR` (items
ftip-00KV, 00KW, 00KY, 00LC), :data:`FLA_KDA` (the implementation facts of ftip-00KY),
:data:`DEEPSEEK_V4_FLASH` (ftip-0013, 000Z, 001L) and :data:`SINGH2026` (the optimizer-geometry
items ftip-00AW to 00C1). The checks the note invites are functions, so a chapter shows them
rather than hiding them: :func:`ratio_consistency` (is a reported speedup compatible with the
rounded times it came from?), :func:`compare_values` (figure versus prose), and
:func:`table4_differences`. Nothing here corrects a source; a disagreement is reported as found.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

KINDS = ("reported", "derived", "categorical", "qualitative")
NUMERIC_KINDS = ("reported", "derived")
VERDICTS = ("consistent", "marginally consistent", "inconsistent")


@dataclass(frozen=True)
class PublishedValue:
    """One externally sourced value with its provenance.

    ``value`` is a real number for the kinds ``"reported"`` and ``"derived"`` and a non-empty
    string for ``"categorical"`` and ``"qualitative"``; ``source_key`` names an entry of the
    book's bibliography and ``locator`` the place in that source.
    """

    value: float | int | str
    unit: str
    source_key: str
    locator: str
    kind: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind in NUMERIC_KINDS:
            if isinstance(self.value, bool) or not isinstance(self.value, (int, float)):
                raise TypeError(f"a {self.kind!r} value must be an int or float, got {type(self.value).__name__}")
            if not math.isfinite(self.value):
                raise ValueError(f"a {self.kind!r} value must be finite, got {self.value!r}")
        elif not isinstance(self.value, str) or not self.value.strip():
            raise TypeError(f"a {self.kind!r} value must be a non-empty string, got {self.value!r}")
        for field in ("unit", "source_key", "locator"):
            text = getattr(self, field)
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{field} must be a non-empty string, got {text!r}")
        if self.kind == "derived" and not self.note:
            raise ValueError("a derived value must say in `note` how it was computed")


class Registry:
    """A read-only, named group of :class:`PublishedValue` records.

    ``registry[name]`` and ``registry.get(name)`` return a record; an unknown name raises a
    ``KeyError`` that lists the known names. Iteration yields the names in definition order.
    """

    def __init__(self, name: str, records: Mapping[str, PublishedValue]) -> None:
        for key, record in records.items():
            if not isinstance(record, PublishedValue):
                raise TypeError(f"{name}[{key!r}] must be a PublishedValue, got {type(record).__name__}")
        self._name = name
        self._records = MappingProxyType(dict(records))

    @property
    def name(self) -> str:
        """The registry's name, e.g. ``"KIMI_LINEAR"``."""
        return self._name

    @property
    def records(self) -> Mapping[str, PublishedValue]:
        """A read-only view of name -> record."""
        return self._records

    def get(self, name: str) -> PublishedValue:
        """The record called ``name``; ``KeyError`` listing the known names otherwise."""
        try:
            return self._records[name]
        except KeyError:
            known = ", ".join(self._records)
            raise KeyError(f"{self._name} has no record {name!r}; known names: {known}") from None

    __getitem__ = get

    def __contains__(self, name: object) -> bool:
        return name in self._records

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"Registry({self._name!r}, {len(self)} records)"


# --- checks on reported numbers ----------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A closed real interval ``[lo, hi]``."""

    lo: float
    hi: float

    def __post_init__(self) -> None:
        if not self.lo <= self.hi:
            raise ValueError(f"an interval needs lo <= hi, got [{self.lo}, {self.hi}]")

    @property
    def width(self) -> float:
        """``hi - lo``."""
        return self.hi - self.lo

    def __contains__(self, x: float) -> bool:
        return self.lo <= x <= self.hi

    def intersect(self, other: Interval) -> Interval | None:
        """The common part of two intervals, or ``None`` when they are disjoint."""
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        return Interval(lo, hi) if lo <= hi else None


def _exact(x: float, what: str) -> Fraction:
    """``x`` as the exact decimal it prints as (``1.84`` -> 184/100), validated finite."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{what} must be a real number, got {type(x).__name__}")
    if not math.isfinite(x):
        raise ValueError(f"{what} must be finite, got {x!r}")
    return Fraction(str(x))


#: The most decimal places a reported number is taken to have; every float prints within 340
#: (``5e-324`` has 324), and the rounding arithmetic grows with ``10 ** decimals``.
MAX_DECIMALS = 400


def _check_decimals(decimals: int, what: str = "decimals") -> None:
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= MAX_DECIMALS:
        raise ValueError(f"{what}={decimals!r} must be an int in [0, {MAX_DECIMALS}]")


def decimals_of(x: float) -> int:
    """Number of decimal places in the shortest printed form of ``x`` (``6.3`` -> 1)."""
    text = repr(float(x)) if not isinstance(x, int) else str(x)
    if "e" in text or "E" in text:
        raise ValueError(f"cannot read a decimal precision from {x!r}; pass it explicitly")
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


def _rounding_fractions(value: float, decimals: int) -> tuple[Fraction, Fraction]:
    _check_decimals(decimals)
    v = _exact(value, "value")
    half = Fraction(1, 2 * 10**decimals)
    return v - half, v + half


def rounding_interval(value: float, decimals: int) -> Interval:
    """All reals that round to ``value`` at ``decimals`` places: ``[value - h, value + h]``.

    ``h = 0.5 * 10**-decimals``. The interval is closed because the tie rule the source used is
    unknown. Used by ftip-00KW to ask which unrounded numbers a printed value could stand for.
    """
    lo, hi = _rounding_fractions(value, decimals)
    return Interval(float(lo), float(hi))


@dataclass(frozen=True)
class RatioConsistency:
    """Whether a reported ratio is compatible with the rounded numbers it was computed from.

    ``point`` is ``numerator / denominator`` as printed; ``compatible`` holds every ratio that
    numbers rounding to the printed ones can produce; ``reported_interval`` the ratios that
    round to the reported value. ``verdict`` is ``"consistent"`` when ``point`` itself rounds to
    the reported value, ``"marginally consistent"`` when it does not but the two intervals
    overlap (only unrounded numbers near the ends of their rounding intervals reproduce the
    report), and ``"inconsistent"`` when no rounding can.
    """

    numerator: float
    denominator: float
    reported: float
    decimals: int
    reported_decimals: int
    point: float
    compatible: Interval
    reported_interval: Interval
    overlap: Interval | None
    verdict: str

    @property
    def overlap_share(self) -> float:
        """Share of the ``compatible`` interval whose ratios round to the reported value."""
        return 0.0 if self.overlap is None else self.overlap.width / self.compatible.width


def ratio_consistency(
    numerator: float, denominator: float, reported: float, decimals: int, reported_decimals: int | None = None
) -> RatioConsistency:
    """Check a reported ratio against its rounded inputs (ftip-00KW: 11.48 / 1.84 vs 6.3).

    ``numerator`` and ``denominator`` are positive numbers printed to ``decimals`` places; the
    reported ratio is printed to ``reported_decimals`` places (read from ``reported`` when
    omitted). The extreme ratios come from the opposite ends of the two rounding intervals.
    """
    if reported_decimals is None:
        reported_decimals = decimals_of(reported)
    _check_decimals(reported_decimals, "reported_decimals")
    n_lo, n_hi = _rounding_fractions(numerator, decimals)
    d_lo, d_hi = _rounding_fractions(denominator, decimals)
    if _exact(reported, "reported") <= 0 or n_lo <= 0 or d_lo <= 0:
        raise ValueError(
            "numerator, denominator and reported must be positive and the inputs must stay positive "
            f"over their rounding intervals; got {numerator}, {denominator}, {reported} at {decimals} decimals"
        )
    point = _exact(numerator, "numerator") / _exact(denominator, "denominator")
    compatible = Interval(float(n_lo / d_hi), float(n_hi / d_lo))
    r_lo, r_hi = _rounding_fractions(reported, reported_decimals)
    reported_interval = Interval(float(r_lo), float(r_hi))
    overlap = compatible.intersect(reported_interval)
    if r_lo <= point <= r_hi:
        verdict = "consistent"
    elif overlap is not None:
        verdict = "marginally consistent"
    else:
        verdict = "inconsistent"
    return RatioConsistency(
        numerator, denominator, reported, decimals, reported_decimals,
        float(point), compatible, reported_interval, overlap, verdict,
    )


@dataclass(frozen=True)
class Discrepancy:
    """Two printed values of one quantity (e.g. a figure label and the prose).

    ``absolute = second - first`` and ``relative = absolute / first`` are computed from the
    exact decimals; ``common`` is the overlap of the two rounding intervals (``None`` when no
    single unrounded value could print as both).
    """

    first: float
    second: float
    absolute: float
    relative: float
    common: Interval | None


def compare_values(first: float, second: float, decimals: int | None = None) -> Discrepancy:
    """Compare two printed values of one quantity (ftip-00KW: Figure 7's 2.2x vs the prose's 2.3x).

    ``decimals`` is the printed precision of both (read from the values when omitted).
    """
    a, b = _exact(first, "first"), _exact(second, "second")
    if a == 0:
        raise ValueError("first must be nonzero for a relative difference")
    if decimals is None:
        decimals = max(decimals_of(first), decimals_of(second))
    common = rounding_interval(first, decimals).intersect(rounding_interval(second, decimals))
    return Discrepancy(first, second, float(b - a), float((b - a) / a), common)


# --- the records -------------------------------------------------------------------------------

_KIMI = "kimi2025linear"
_EXPERIMENTAL = "Sections 4 and 5.4"
_TABLE4 = "Sections 4 and 5.4, Table 4"


def _r(value: float | int, unit: str, locator: str, note: str = "", source: str = _KIMI) -> PublishedValue:
    return PublishedValue(value, unit, source, locator, "reported", note)


def _c(value: str, unit: str, locator: str, note: str = "", source: str = _KIMI, kind: str = "categorical") -> PublishedValue:
    return PublishedValue(value, unit, source, locator, kind, note)


#: Benchmarks of Table 4 of the Kimi Linear report, in the note's order (ftip-00LC).
TABLE4_BENCHMARKS = ("mmlu_pro", "livebench", "evalplus")

_kimi: dict[str, PublishedValue] = {
    # ftip-00KV: the experimental models (both arms) and the released model
    "experimental_pretraining_tokens": _r(1.4, "trillion tokens", _EXPERIMENTAL, "both experimental arms"),
    "experimental_total_params": _r(48, "billion parameters", _EXPERIMENTAL, "both experimental arms"),
    "experimental_active_params": _r(3, "billion parameters", _EXPERIMENTAL, "both experimental arms"),
    "kda_layers_per_mla_layer": _r(3, "KDA layers per MLA layer", _EXPERIMENTAL, "the 3:1 hybrid pattern"),
    "mla_positional_encoding": _c("NoPE", "positional encoding", _EXPERIMENTAL, "in the hybrid's MLA layers"),
    "reference_attention": _c("full MLA", "architecture", _EXPERIMENTAL, "the reference arm"),
    "released_pretraining_tokens": _r(5.7, "trillion tokens", "Section 5.4.1 and Appendix D", "released model"),
    "released_max_context": _r(1, "million tokens", "Section 5.4.1 and Appendix D", "'up to'; released model"),
    "moonlight_total_params": _r(16, "billion parameters", "Appendix D", "Moonlight, compared with the release"),
    "moonlight_active_params": _r(3, "billion parameters", "Appendix D", "Moonlight, compared with the release"),
    # ftip-00KW: efficiency observations
    "prefill_speedup_fig7": _r(2.9, "x vs MLA", "Figure 7 and Section 5.6", "batch size 1, 10^6 tokens"),
    "decode_speedup_fig7": _r(2.2, "x vs MLA", "Figure 7 and Section 5.6", "batch size 1, 10^6 tokens; figure label"),
    "decode_speedup_sec63": _r(2.3, "x vs MLA", "Section 6.3", "the same point as decode_speedup_fig7, in the prose"),
    "tpot_kimi_ms": _r(1.84, "ms per output token", "Figure 1(b)", "larger-batch decoding, Kimi Linear"),
    "tpot_mla_ms": _r(11.48, "ms per output token", "Figure 1(b)", "larger-batch decoding, MLA"),
    "tpot_speedup_reported": _r(
        6.3, "x vs MLA", "Figure 1(b) and Section 6.3",
        "called theoretical in Sec. 6.3: saved KV-cache memory reallocated to larger batches",
    ),
    "ruler_128k_kimi": _r(84.3, "RULER score", "Figure 1(a)", "128k context"),
    "ruler_128k_mla": _r(81.3, "RULER score", "Figure 1(a)", "128k context"),
    "ruler_decode_acceleration": _r(3.98, "x vs MLA", "Figure 1(a)", "decoding acceleration at the RULER point"),
    "kv_cache_reduction_max": _r(75, "percent", "Abstract", "'up to': an upper figure, not a typical one"),
    # ftip-00LC: Table 4 after the same SFT recipe (larger is better)
    "table4_mmlu_pro_kimi": _r(67.4, "score", _TABLE4, "Kimi Linear"),
    "table4_mmlu_pro_mla": _r(65.7, "score", _TABLE4, "full MLA"),
    "table4_livebench_kimi": _r(45.2, "Pass@1", _TABLE4, "Kimi Linear"),
    "table4_livebench_mla": _r(45.7, "Pass@1", _TABLE4, "full MLA"),
    "table4_evalplus_kimi": _r(61.0, "score", _TABLE4, "Kimi Linear"),
    "table4_evalplus_mla": _r(62.6, "score", _TABLE4, "full MLA"),
    "table4_uncertainty": _c("not reported", "uncertainty", _TABLE4, "no interval or item count", kind="qualitative"),
    # ftip-00LC: the common recipe
    "recipe_pretraining_corpus": _c("K2 pretraining corpus", "data", "Section 5.4"),
    "recipe_optimizer": _c("MuonClip", "optimizer", "Section 5.4"),
    "recipe_schedule": _c("shared training schedule", "schedule", "Section 5.4"),
    "recipe_sft": _c("broad instruction data, then targeted reasoning tasks", "SFT curriculum", "Section 5.4"),
    "eval_temperature": _r(1.0, "sampling temperature", "Section 5.4"),
    "eval_framework": _c("internal framework derived from LM-Harness", "evaluation harness", "Section 5.4"),
    # ftip-00K5: where the report's claims live
    "locator_hybrid_and_fair_comparison": _c("Sections 3-5", "locator", "Sections 3-5", kind="categorical"),
    "locator_setup": _c("Section 5.4", "locator", "Section 5.4"),
    "locator_efficiency": _c("Sections 5.5-5.6", "locator", "Sections 5.5-5.6"),
}


def _kimi_value(name: str) -> float:
    return _kimi[name].value  # type: ignore[return-value]


def _difference(first: str, second: str) -> float:
    """``first - second`` of two Kimi records, exact in decimal (67.4 - 65.7 is 1.7, not 1.70000000000000284)."""
    return float(_exact(_kimi_value(first), first) - _exact(_kimi_value(second), second))


def table4_differences() -> dict[str, float]:
    """Kimi Linear minus full MLA per Table 4 benchmark (ftip-00LC, 00KZ).

    The note's differences are +1.7 (MMLU-Pro), -0.5 (LiveBench) and -1.6 (EvalPlus): mixed
    signs, so no single ordering of the two designs follows from the table.
    """
    return {b: _difference(f"table4_{b}_kimi", f"table4_{b}_mla") for b in TABLE4_BENCHMARKS}


def tpot_speedup_check() -> RatioConsistency:
    """ftip-00KW: Figure 1(b)'s 11.48 ms / 1.84 ms against its reported 6.3x."""
    return ratio_consistency(_kimi_value("tpot_mla_ms"), _kimi_value("tpot_kimi_ms"), _kimi_value("tpot_speedup_reported"), 2)


def decode_speedup_discrepancy() -> Discrepancy:
    """ftip-00KW: the batch-one decode speedup, 2.2x in Figure 7 and 2.3x in Section 6.3."""
    return compare_values(_kimi_value("decode_speedup_fig7"), _kimi_value("decode_speedup_sec63"))


_tpot = tpot_speedup_check()
_decode = decode_speedup_discrepancy()
_kimi.update({
    "tpot_speedup_derived": PublishedValue(
        _tpot.point, "x vs MLA", _KIMI, "Figure 1(b)", "derived",
        f"tpot_mla_ms / tpot_kimi_ms; against the reported 6.3: {_tpot.verdict}",
    ),
    "decode_speedup_gap": PublishedValue(
        _decode.absolute, "x", _KIMI, "Figure 7 and Section 6.3", "derived",
        "decode_speedup_sec63 - decode_speedup_fig7 (prose minus figure)",
    ),
    "ruler_128k_gap": PublishedValue(
        _difference("ruler_128k_kimi", "ruler_128k_mla"), "RULER points", _KIMI, "Figure 1(a)", "derived", "ruler_128k_kimi - ruler_128k_mla",
    ),
    **{
        f"table4_{b}_difference": PublishedValue(
            d, "points", _KIMI, _TABLE4, "derived", f"table4_{b}_kimi - table4_{b}_mla"
        )
        for b, d in table4_differences().items()
    },
})

#: Kimi Linear report records (ftip-00K5, 00KV, 00KW, 00KY, 00LC).
KIMI_LINEAR = Registry("KIMI_LINEAR", _kimi)

_FLA = "yang2024fla"
_FLA_AT = "KDA layer and kernels at commit 6b6f546f"

#: Implementation facts of flash-linear-attention's KDA used by ftip-00KY (all qualitative).
FLA_KDA = Registry("FLA_KDA", {
    "commit": _c("6b6f546f", "git commit", _FLA_AT, source=_FLA),
    "recurrent_state": _c(
        "one recurrent state per sequence, sized by value heads and key/value dims, not by context length",
        "state layout", _FLA_AT, source=_FLA, kind="qualitative",
    ),
    "recurrent_state_dtype": _c("float32", "dtype", _FLA_AT, "dtype of a newly allocated state", source=_FLA),
    "short_conv_state": _c(
        "one fixed-width kernel buffer per channel and sequence", "state layout", _FLA_AT,
        "optional short-convolution state", source=_FLA, kind="qualitative",
    ),
    "execution_paths": _c(
        "chunk kernels when gradients are enabled; fused recurrence for short inference calls",
        "kernel selection", _FLA_AT, source=_FLA, kind="qualitative",
    ),
})

_DS_CONFIG = "deepseek2026v4flash"
_DS_REPORT = "deepseek2026v4"
_PINNED = "pinned configuration of DeepSeek-V4-Flash-0731"


def _ds(value: float | int, unit: str) -> PublishedValue:
    return PublishedValue(value, unit, _DS_CONFIG, _PINNED, "reported")


_ds_records: dict[str, PublishedValue] = {
    "num_layers": _ds(43, "layers"),
    "hidden_size": _ds(4096, "width"),
    "num_attention_heads": _ds(64, "heads"),
    "num_kv_heads": _ds(1, "key-value heads"),
    "num_routed_experts": _ds(256, "experts"),
    "experts_per_token": _ds(6, "experts per token"),
    "num_shared_experts": _ds(1, "experts"),
    "report_architecture": _c("preview architecture", "locator", "Section 2", source=_DS_REPORT),
    "report_optimizer": _c("mixed Muon/AdamW optimizer allocation", "locator", "Section 2.4", source=_DS_REPORT),
    "report_data": _c("pretraining data construction", "locator", "Section 4", source=_DS_REPORT),
    "undisclosed": _c(
        "0731 data mixture, optimizer schedule, post-preview training delta", "provenance gap",
        "Sections 2, 2.4 and 4", "not disclosed by either source", source=_DS_REPORT, kind="qualitative",
    ),
}
_ds_records["query_heads_per_kv_head"] = PublishedValue(
    _ds_records["num_attention_heads"].value / _ds_records["num_kv_heads"].value,  # type: ignore[operator]
    "query heads per KV head", _DS_CONFIG, _PINNED, "derived", "num_attention_heads / num_kv_heads",
)

#: DeepSeek-V4-Flash-0731 configuration and V4 family-report records (ftip-0013, 000Z, 001L).
DEEPSEEK_V4_FLASH = Registry("DEEPSEEK_V4_FLASH", _ds_records)

_SINGH = "singh2026lossbasis"
_TWIN = "Section 6, Table 3"
_CONTROLS = "Remark 4.7 and Appendix D.10"

_singh: dict[str, PublishedValue] = {
    "twin_logit_distance_adam": _r(3.6e-3, "relative logit distance", _TWIN, "after one Adam step, gauge twin", _SINGH),
    "noise_twin_logit_distance_adam": _r(
        2.9e-7, "relative logit distance", _TWIN, "after one Adam step, same-basis noise twin", _SINGH
    ),
    "final_per_head_invariant_distance": _r(56, "percent", _TWIN, "at the end of training", _SINGH),
    "twin_setup": _c("two-layer, four-head transformer on modular addition", "setup", _TWIN, source=_SINGH),
    "scaledgd_control": _c(
        "equivariant; does not recover the planted low-rank target at the declared budget",
        "outcome", _CONTROLS, "equalizes the spectral schedule", source=_SINGH, kind="qualitative",
    ),
    "long_anneal_sign_control": _c(
        "non-equivariant; eventually reaches a low recovery error", "outcome", _CONTROLS,
        source=_SINGH, kind="qualitative",
    ),
    "scaledgd_baseline": _c(
        "no tuned reproducibility baseline reported for the ScaledGD control", "outcome", _CONTROLS,
        source=_SINGH, kind="qualitative",
    ),
    "version": _c("version 1, submitted 5 August 2026", "version", "arXiv listing", source=_SINGH),
    "locator_factored_objective": _c("Definition 3.1", "locator", "Definition 3.1", source=_SINGH),
    "locator_lemma_3_2": _c("Lemma 3.2, proof in Appendix B.1", "locator", "Appendix B.1", source=_SINGH),
    "locator_lemma_4_1": _c("Lemma 4.1, proof in Appendix B.2", "locator", "Appendix B.2", source=_SINGH),
    "locator_proposition_4_2": _c("Proposition 4.2(1)-(4), proofs in Appendix B.3", "locator", "Appendix B.3", source=_SINGH),
    "locator_proposition_4_3": _c("Proposition 4.3, proof in Appendix B.4", "locator", "Appendix B.4", source=_SINGH),
    "locator_proposition_4_4": _c("Proposition 4.4, proof in Appendix B.5", "locator", "Appendix B.5", source=_SINGH),
    "locator_theorem_4_5": _c("Theorem 4.5, proof in Appendix B.6", "locator", "Appendix B.6", source=_SINGH),
    "locator_theorem_4_6": _c("Theorem 4.6, proof in Appendix B.9", "locator", "Appendix B.9", source=_SINGH),
    "locator_remark_4_7": _c("Remark 4.7", "locator", "Remark 4.7", source=_SINGH),
    "locator_limitations": _c("Section 11", "locator", "Section 11", source=_SINGH),
}
_singh["twin_to_noise_logit_ratio"] = PublishedValue(
    _singh["twin_logit_distance_adam"].value / _singh["noise_twin_logit_distance_adam"].value,  # type: ignore[operator]
    "ratio", _SINGH, _TWIN, "derived", "twin_logit_distance_adam / noise_twin_logit_distance_adam",
)

#: singh2026lossbasis records for the optimizer-geometry items (ftip-00AW ... 00C1; 00BR, 00BY, 00C0).
SINGH2026 = Registry("SINGH2026", _singh)

#: Every registry, in the order above.
REGISTRIES: tuple[Registry, ...] = (KIMI_LINEAR, FLA_KDA, DEEPSEEK_V4_FLASH, SINGH2026)


def _index(registries: tuple[Registry, ...]) -> Mapping[str, PublishedValue]:
    index: dict[str, PublishedValue] = {}
    for registry in registries:
        for name in registry:
            if name in index:
                raise ValueError(f"record name {name!r} appears in more than one registry")
            index[name] = registry[name]
    return MappingProxyType(index)


_ALL = _index(REGISTRIES)


def get(name: str) -> PublishedValue:
    """The record ``name`` from whichever registry holds it (names are unique across registries).

    An unknown name raises a ``KeyError`` listing every known name.
    """
    try:
        return _ALL[name]
    except KeyError:
        raise KeyError(f"no published record {name!r}; known names: {', '.join(_ALL)}") from None


def all_records() -> Mapping[str, PublishedValue]:
    """A read-only view of every record, keyed by its (unique) name."""
    return _ALL


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
