"""KDA model-instance records and the costs that parameter matching leaves unmatched (ftip-00K3, ftip-00K6).

Definition ftip-00K3 asks a KDA-versus-full-attention study to record the exact checkpoint, the
layer mix, the context length, the hardware, the kernel, the precision, the batch and the decoding
workload, and to name the baseline: "Transformer" alone does not say whether it is the paper's MLA
or another full-attention implementation. :func:`capture` fills a :class:`KDAInstanceRecord` from a
live ``DecoderLM`` *and* a greedy cached decode it runs: the checkpoint is the SHA-256 of the state
dict (:func:`ftipbook.artifact.weights_sha256`), the layer mix is read off the model's blocks, the
KDA kernels are the ones the layers actually called during that decode (:func:`kda_kernels_used`),
and the cache bytes are those of the live cache after it.

Example ftip-00K6 says equal parameter counts do not make equal costs. :func:`match_d_ff` finds, by
integer search, the feed-forward width that gives a configuration exactly a target parameter
count (or says that none exists). :func:`cost_facts` measures, for one live model, what the count
does not fix: counted decode FLOPs at a context ``T``, the bytes of a real cache after a prefill of
``T`` tokens, the wall time of a decoding step, and the longest context whose cache fits a declared
memory budget; :func:`parameter_matched_costs` does so for several models after checking that
their counts are equal.
"""
from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

import torch

from ftipbook.artifact import weights_sha256
from ftipbook.compare.cache_model import measure_state_bytes
from ftipbook.compare.cost import UNKNOWN, Unknown
from ftipbook.compare.measure import decode_flops_per_token
from ftipbook.compare.records import GENERIC_LABELS, Record, SystemsRecord, describe_kernels
from ftipbook.eval.stats import RepeatedMeasurement
from ftipbook.model import kda as _kda
from ftipbook.model.accounting import param_count
from ftipbook.model.attention import MultiHeadAttention
from ftipbook.model.config import MIXERS, ModelConfig
from ftipbook.model.kda import KimiDeltaAttention
from ftipbook.model.mla import MultiHeadLatentAttention
from ftipbook.model.transformer import DecoderLM

#: Declared baseline kinds and the one mixer letter each allows (ftip-00K3).
BASELINE_KINDS = {
    "MLA": "M",
    "softmax attention (MHA)": "A",
    "softmax attention (GQA)": "A",
    "softmax attention (MQA)": "A",
}
#: The two roles a record can play in a KDA-versus-baseline study.
ROLES = ("KDA", "baseline")
#: What each mixer kind keeps while decoding, for a record's cache policy.
CACHE_POLICIES = {"A": "growing KV cache", "M": "growing latent cache", "K": "fixed KDA state"}
#: The kernel functions of :mod:`ftipbook.model.kda` a KDA layer may call, by the name a record uses.
KDA_KERNELS = {"kda_step": "recurrent step", "kda_recurrent": "recurrent", "kda_chunked": "chunked",
               "_fla_chunk_kda": "FLA chunk_kda"}


def check_baseline(label: object) -> str:
    """``label`` if it names a declared baseline kind (:data:`BASELINE_KINDS`); a bare family label is refused."""
    if not isinstance(label, str):
        raise TypeError(f"baseline must be a string naming the baseline's attention, got {type(label).__name__}")
    if label.strip().lower() in GENERIC_LABELS:
        raise ValueError(f"baseline={label!r} does not identify the baseline: say whether it is the paper's MLA or "
                         f"another full-attention implementation, one of {list(BASELINE_KINDS)} (ftip-00K3)")
    if label not in BASELINE_KINDS:
        raise ValueError(f"baseline={label!r} is not a declared baseline kind; allowed: {list(BASELINE_KINDS)}")
    return label


def _mixer_letter(block: torch.nn.Module) -> str:
    fn = block.mixer.fn
    for cls, letter in ((KimiDeltaAttention, "K"), (MultiHeadLatentAttention, "M"), (MultiHeadAttention, "A")):
        if isinstance(fn, cls):
            return letter
    raise TypeError(f"block mixer {type(fn).__name__} is none of attention, MLA, KDA")


def layer_mix(model: DecoderLM) -> str:
    """The mixer letter of every block of a live ``DecoderLM``, read off the modules (e.g. ``"KKKA"``)."""
    _decoder(model)
    return "".join(_mixer_letter(block) for block in model.blocks)


def layer_counts(pattern: str) -> str:
    """Layers per mixer kind of a pattern, letters in sorted order: ``"KKKA"`` -> ``"A:1, K:3"``."""
    counts = Counter(pattern)
    return ", ".join(f"{k}:{counts[k]}" for k in sorted(counts))


def baseline_kind(model: DecoderLM) -> str:
    """The :data:`BASELINE_KINDS` entry a live full-attention model is, read off its blocks and heads."""
    letters = set(layer_mix(model))
    if letters == {"M"}:
        return "MLA"
    if letters == {"A"}:
        kv, heads = model.cfg.kv_heads, model.cfg.n_heads
        return f"softmax attention ({'MHA' if kv == heads else 'MQA' if kv == 1 else 'GQA'})"
    raise ValueError(f"a model with layers {layer_mix(model)!r} is not a full-attention baseline of one kind")


@contextmanager
def kda_kernels_used() -> Iterator[list[tuple[str, int]]]:
    """Record the KDA kernel functions actually called while active, as ``(kernel, tokens)`` pairs.

    The functions of :data:`KDA_KERNELS` are looked up in :mod:`ftipbook.model.kda` at call time;
    they are wrapped for the duration of the block (outermost calls only: the recurrence calls the
    step function inside) and restored afterwards.
    """
    calls: list[tuple[str, int]] = []
    depth = [0]
    originals = {name: getattr(_kda, name) for name in KDA_KERNELS}

    def spy(name: str, fn):
        def wrapper(q, *args, **kwargs):
            if depth[0] == 0:
                calls.append((KDA_KERNELS[name], 1 if name == "kda_step" else q.shape[1]))
            depth[0] += 1
            try:
                return fn(q, *args, **kwargs)
            finally:
                depth[0] -= 1
        return wrapper

    for name, fn in originals.items():
        setattr(_kda, name, spy(name, fn))
    try:
        yield calls
    finally:
        for name, fn in originals.items():
            setattr(_kda, name, fn)


def _decoder(model: object) -> DecoderLM:
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be an ftipbook DecoderLM, got {type(model).__name__}")
    return model


def _positive_int(name: str, value: object, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name}={value!r} must be an int >= {low}")
    return value


@dataclass(frozen=True)
class KDAInstanceRecord(Record):
    """One model instance of a KDA-versus-baseline study (ftip-00K3).

    ``role`` is ``"KDA"`` (the model has KDA layers) or ``"baseline"`` (it is the full-attention
    baseline); ``baseline`` the declared baseline kind, one of :data:`BASELINE_KINDS`;
    ``checkpoint`` ``"sha256:<hex>"`` of the state dict (:func:`ftipbook.artifact.weights_sha256`);
    ``source`` where the weights come from; ``layer_mix`` a mixer letter per layer (or per repeating
    unit for a published model) and ``layer_counts`` its :func:`layer_counts`; ``parameters``
    counted from the tensors; ``context_length`` the model's context limit; ``systems`` the
    hardware, software, kernel actually used, precision, batch and decoding workload of the measured
    run; ``cache_bytes`` the live cache after it. Print with
    ``rows(redact=KDAInstanceRecord.MACHINE_FIELDS)``.
    """

    KIND: ClassVar[str] = "kda instance"
    MACHINE_FIELDS: ClassVar[tuple[str, ...]] = ("systems",)

    name: str
    role: str
    baseline: str
    checkpoint: str | Unknown = UNKNOWN
    source: str | Unknown = UNKNOWN
    layer_mix: str | Unknown = UNKNOWN
    layer_counts: str | Unknown = UNKNOWN
    parameters: int | Unknown = UNKNOWN
    context_length: int | Unknown = UNKNOWN
    systems: SystemsRecord | Unknown = UNKNOWN
    cache_bytes: int | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"KDAInstanceRecord.name must be a non-empty string, got {self.name!r}")
        if self.role not in ROLES:
            raise ValueError(f"KDAInstanceRecord.role={self.role!r} must be one of {ROLES}")
        check_baseline(self.baseline)
        for name in ("checkpoint", "source", "layer_counts"):
            value = getattr(self, name)
            if not isinstance(value, Unknown) and (not isinstance(value, str) or not value.strip()):
                raise ValueError(f"KDAInstanceRecord.{name} must be a non-empty string or UNKNOWN, got {value!r}")
        for name in ("parameters", "context_length", "cache_bytes"):
            value = getattr(self, name)
            if not isinstance(value, Unknown):
                _positive_int(f"KDAInstanceRecord.{name}", value)
        if not isinstance(self.systems, (SystemsRecord, Unknown)):
            raise TypeError(f"KDAInstanceRecord.systems must be a SystemsRecord or UNKNOWN, "
                            f"got {type(self.systems).__name__}")
        mix = self.layer_mix
        if isinstance(mix, Unknown):
            return
        if not isinstance(mix, str) or not mix or set(mix) - set(MIXERS):
            raise ValueError(f"layer_mix={mix!r} must be a non-empty string of the letters {sorted(MIXERS)}")
        if not isinstance(self.layer_counts, Unknown) and self.layer_counts != layer_counts(mix):
            raise ValueError(f"layer_counts={self.layer_counts!r} does not count layer_mix={mix!r} "
                             f"({layer_counts(mix)!r})")
        if self.role == "KDA" and "K" not in mix:
            raise ValueError(f"role 'KDA' needs at least one KDA layer; layer_mix={mix!r} has none")
        if self.role == "baseline" and set(mix) != {BASELINE_KINDS[self.baseline]}:
            raise ValueError(f"a {self.baseline!r} baseline has only {BASELINE_KINDS[self.baseline]!r} layers; "
                             f"layer_mix={mix!r}")


@torch.no_grad()
def capture(model: DecoderLM, *, name: str, baseline: str, source: str | Unknown = UNKNOWN, batch: int = 1,
            prompt_length: int = 16, new_tokens: int = 8, seed: int = 0) -> KDAInstanceRecord:
    """Run a greedy cached decode on ``model`` and record it (ftip-00K3).

    The run: ``batch`` prompts of ``prompt_length`` token ids drawn from ``seed``, one prefill,
    then ``new_tokens`` greedy steps, each fed back through the cache (``prompt_length +
    new_tokens <= max_seq_len``). The record's kernel is what the KDA layers called during the
    run (prefill and decode separately) and what the attention layers run; ``cache_bytes`` is the
    cache after the run. ``baseline`` must be a declared kind; a model without KDA layers is
    recorded as the baseline and must be of that kind.
    """
    model = _decoder(model)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    check_baseline(baseline)
    batch, prompt_length = _positive_int("batch", batch), _positive_int("prompt_length", prompt_length)
    new_tokens = _positive_int("new_tokens", new_tokens)
    if prompt_length + new_tokens > model.cfg.max_seq_len:
        raise ValueError(f"prompt_length + new_tokens = {prompt_length + new_tokens} exceeds the model's "
                         f"max_seq_len={model.cfg.max_seq_len}")
    mix = layer_mix(model)
    role = "KDA" if "K" in mix else "baseline"
    if role == "baseline" and baseline_kind(model) != baseline:
        raise ValueError(f"the model is a {baseline_kind(model)!r} baseline, not the declared {baseline!r}")
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    prompt = torch.randint(0, model.cfg.vocab_size, (batch, prompt_length), generator=gen).to(device)
    was_training = model.training
    model.eval()
    try:
        cache = model.new_cache(batch)
        with kda_kernels_used() as prefill_calls:
            logits = model(prompt, cache=cache)
        with kda_kernels_used() as decode_calls:
            for _ in range(new_tokens):
                logits = model(logits[:, -1:].argmax(-1), cache=cache)
    finally:
        model.train(was_training)
    kernel = describe_kernels(model)
    if role == "KDA":
        phases = {"prefill": {k for k, _ in prefill_calls}, "decode": {k for k, _ in decode_calls}}
        used = "; ".join(f"{p}: {'/'.join(sorted(ks))}" for p, ks in phases.items() if ks)
        kernel = "; ".join(f"K: KDA {used}" if part.startswith("K:") else part for part in kernel.split("; "))
    policy = " + ".join(CACHE_POLICIES[k] for k in sorted(set(mix)))
    systems = dataclasses.replace(
        SystemsRecord.capture(model, batch=batch, cache_policy=policy, warmup=0,
                              prompt_length=prompt_length, new_tokens=new_tokens, decoding="greedy"),
        kernel=kernel, precision="/".join(sorted({str(p.dtype).removeprefix("torch.") for p in model.parameters()})))
    checkpoint = f"sha256:{weights_sha256(model.state_dict())}"
    return KDAInstanceRecord(name, role, baseline, checkpoint, source, mix, layer_counts(mix),
                             sum(p.numel() for p in model.parameters()), model.cfg.max_seq_len, systems,
                             cache.nbytes())


# ----------------------------------------------------------------------------------------------
# ftip-00K6: parameter matching is not cost matching
# ----------------------------------------------------------------------------------------------
class NoExactMatch(ValueError):
    """No integer ``d_ff`` in the searched range gives the target parameter count (ftip-00K6).

    ``below`` and ``above`` are the nearest ``(d_ff, parameters)`` on either side, or ``None``.
    """

    def __init__(self, target: int, below: tuple[int, int] | None, above: tuple[int, int] | None) -> None:
        self.target, self.below, self.above = target, below, above
        super().__init__(f"no d_ff gives exactly {target} parameters; nearest below {below}, above {above} "
                         f"(as (d_ff, parameters))")


def match_d_ff(cfg: ModelConfig, target: int, *, low: int = 1, high: int | None = None) -> ModelConfig:
    """``cfg`` with the ``d_ff`` in ``[low, high]`` for which ``param_count`` equals ``target`` exactly (ftip-00K6).

    An integer search over every ``d_ff`` in the range (default ``high``: ``16 d_model``); the count
    is :func:`ftipbook.model.accounting.param_count`. Raises :class:`NoExactMatch` when no width
    hits ``target``.
    """
    if not isinstance(cfg, ModelConfig):
        raise TypeError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    if cfg.ffn == "moe":
        raise ValueError("cfg.ffn='moe': the routed experts' width is d_expert, not d_ff; match a dense model")
    target = _positive_int("target", target)
    high = 16 * cfg.d_model if high is None else high
    low, high = _positive_int("low", low), _positive_int("high", high)
    if high < low:
        raise ValueError(f"high={high} < low={low}: the search range is empty")
    below = above = None
    for d_ff in range(low, high + 1):
        candidate = dataclasses.replace(cfg, d_ff=d_ff)
        count = param_count(candidate)
        if count == target:
            return candidate
        if count < target:
            below = (d_ff, count)
        elif above is None:
            above = (d_ff, count)
    raise NoExactMatch(target, below, above)


@dataclass(frozen=True)
class CostFacts:
    """What one live model costs beyond its parameter count (ftip-00K6).

    ``parameters`` counted from the tensors; ``decode_flops`` counted by PyTorch's flop counter for
    decoding token ``context``; ``cache_bytes`` the live cache after a prefill of ``context`` tokens;
    ``cache_fixed`` and ``cache_per_token`` the measured affine law ``bytes(T) = fixed + per_token T``;
    ``attainable_context`` the largest ``T <= max_seq_len`` whose cache fits ``memory_budget`` (0 when
    none does) and ``context_limit`` what binds it (``"memory budget"`` or ``"max_seq_len"``);
    ``decode_seconds`` the median wall time of one decoding step near ``context`` (machine-dependent:
    compare orderings or coarse ratios, never print it).
    """

    name: str
    parameters: int
    context: int
    decode_flops: int
    cache_bytes: int
    cache_fixed: int
    cache_per_token: int
    memory_budget: int
    attainable_context: int
    context_limit: str
    decode_seconds: float


def _attainable(model: DecoderLM, fixed: int, per_token: int, budget: int) -> tuple[int, str]:
    limit = model.cfg.max_seq_len
    if fixed + per_token > budget:
        return 0, "memory budget"
    if per_token == 0:
        return limit, "max_seq_len"
    longest = (budget - fixed) // per_token
    return (limit, "max_seq_len") if longest >= limit else (longest, "memory budget")


@torch.no_grad()
def cost_facts(model: DecoderLM, *, name: str, context: int, memory_budget: int,
               timing: RepeatedMeasurement | None = None, seed: int = 0) -> CostFacts:
    """Measure the ftip-00K6 costs of a live model at ``context`` and under ``memory_budget`` bytes.

    Cache bytes come from real prefills (:func:`ftipbook.compare.cache_model.measure_state_bytes`)
    at 1 and 2 tokens (the affine law), checked at ``context`` (``ValueError`` if the cache is not
    affine in ``T``); the attainable context is read off that law. ``timing`` (default: 2 warm-up
    and 5 recorded steps, median) times decoding steps after a prefill of ``context - 1`` tokens;
    ``context + warmup + reps`` must not exceed ``max_seq_len``.
    """
    model = _decoder(model)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    context = _positive_int("context", context, 2)
    memory_budget = _positive_int("memory_budget", memory_budget)
    timing = RepeatedMeasurement(warmup=2, reps=5, aggregation="median") if timing is None else timing
    if not isinstance(timing, RepeatedMeasurement) or timing.seeds is not None:
        raise TypeError("timing must be a RepeatedMeasurement without seeds")
    if context + timing.warmup + timing.reps > model.cfg.max_seq_len:
        raise ValueError(f"context + warmup + reps = {context + timing.warmup + timing.reps} exceeds "
                         f"max_seq_len={model.cfg.max_seq_len}")
    model.eval()
    one, two = measure_state_bytes(model, 1, seed=seed), measure_state_bytes(model, 2, seed=seed)
    per_token, fixed = two - one, 2 * one - two
    at_context = measure_state_bytes(model, context, seed=seed)
    if at_context != fixed + per_token * context:
        raise ValueError(f"{name}: cache bytes {at_context} at T={context} are not the affine law "
                         f"{fixed} + {per_token} T measured at T = 1, 2")
    attainable, limit = _attainable(model, fixed, per_token, memory_budget)
    flops = decode_flops_per_token(model, context, seed=seed).total

    gen = torch.Generator().manual_seed(seed)
    prompt = torch.randint(0, model.cfg.vocab_size, (1, context - 1), generator=gen).to(next(model.parameters()).device)
    cache = model.new_cache(1)
    model(prompt, cache=cache)
    token = prompt[:, -1:]
    seconds = timing.time(lambda: model(token, cache=cache)).aggregate
    return CostFacts(name, sum(p.numel() for p in model.parameters()), context, flops, at_context, fixed, per_token,
                     memory_budget, attainable, limit, seconds)


def parameter_matched_costs(models: Mapping[str, DecoderLM], *, context: int, memory_budget: int,
                            timing: RepeatedMeasurement | None = None, seed: int = 0) -> dict[str, CostFacts]:
    """:func:`cost_facts` of two or more live models whose parameter counts are exactly equal (ftip-00K6).

    ``models`` maps names to models; the counts are taken from the tensors before anything is
    measured, and unequal counts are refused (``ValueError``): this is the parameter-matched
    comparison whose other costs the example says stay unmatched.
    """
    if not isinstance(models, Mapping) or len(models) < 2:
        raise ValueError(f"models must map at least two names to models, got {models!r}")
    counts = {name: sum(p.numel() for p in _decoder(m).parameters()) for name, m in models.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"the parameter counts differ ({counts}); match them first, e.g. with match_d_ff")
    return {name: cost_facts(m, name=name, context=context, memory_budget=memory_budget, timing=timing, seed=seed)
            for name, m in models.items()}


def stable_ordering(timing: RepeatedMeasurement, run_a: Callable[[], object], run_b: Callable[[], object], *,
                    rounds: int = 3) -> str | None:
    """``"a"`` or ``"b"`` (the faster) when every one of ``rounds`` interleaved timings agrees, else ``None``.

    ``run_a`` and ``run_b`` are called through ``timing.time`` in alternation; the medians (or means)
    decide each round. A wall-time ordering is reported only when it survives every round (ftip-00K6).
    """
    rounds = _positive_int("rounds", rounds)
    if not isinstance(timing, RepeatedMeasurement):
        raise TypeError(f"timing must be a RepeatedMeasurement, got {type(timing).__name__}")
    winners = set()
    for _ in range(rounds):
        ta, tb = timing.time(run_a).aggregate, timing.time(run_b).aggregate
        if not (math.isfinite(ta) and math.isfinite(tb)) or ta == tb:
            return None
        winners.add("a" if ta < tb else "b")
    return winners.pop() if len(winners) == 1 else None


__all__ = ["BASELINE_KINDS", "ROLES", "CACHE_POLICIES", "KDA_KERNELS", "check_baseline", "layer_mix", "layer_counts",
           "baseline_kind", "kda_kernels_used", "KDAInstanceRecord", "capture", "NoExactMatch", "match_d_ff",
           "CostFacts", "cost_facts", "parameter_matched_costs", "stable_ordering"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
