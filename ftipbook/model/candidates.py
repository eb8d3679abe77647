"""Many sampled candidates per prompt from one batched, cached decode (ftip-000G, 000I; best-of-k in ftip-0004).

:func:`sample_candidates` returns, for each of ``N`` prompts, ``k`` continuations. Candidate ``j``
of prompt ``i`` is, by definition, the continuation that ::

    generate(model, prompts[i], max_new_tokens, temperature=..., top_k=..., top_p=...,
             eos_id=..., seed=candidate_seed(seed, i, j))

returns: the same sampling law (:func:`~ftipbook.model.generate.sampling_law`), the same
``torch.Generator`` seeding and the same draw (``torch.multinomial`` of one row), the same EOS
trimming and stop reasons. The work is shared instead of repeated:

* each prompt is prefilled once, by the very call ``generate`` makes (batch 1), and its cache is
  copied into ``k`` rows; the first token of every candidate is drawn from that prefill's logits;
* prompts of equal length decode together: one cached forward per step serves all of their
  ``k`` candidates (rows of unequal length never share a step, so no padding or mask is needed);
* a row that emits ``eos_id`` leaves the batch (its cache rows are dropped);
* with ``temperature = 0`` every candidate is the greedy continuation: it is computed once per
  prompt (by ``generate`` itself) and repeated ``k`` times.

Exactness. The prefill and everything after the logits (law, draw, log-probability) are computed
row by row exactly as in ``generate``. What differs is the decode step's matrix products: a
batch of ``B`` rows runs matrix-matrix kernels where ``generate`` runs matrix-vector ones, and
BLAS sums in a different order, so the logits of later steps agree with ``generate``'s only to
rounding (about ``1e-7`` relative in float32, ``1e-16`` in float64; no batched kernel reproduces
the matrix-vector sums for every shape). A token can differ only where that rounding changes
which id a draw selects or breaks an exact argmax tie. In float64
this is far below anything observable, and ``tests/model/test_candidates.py`` asserts token
equality on every architecture. In float32 it is rare but possible: on the zoo models
``base-mha``, ``hybrid-kda@400`` and ``full-mla@400`` (40 arithmetic prompts x 16 candidates, and
8 prompts x 16 candidates of 32 tokens at temperature 1.5) and a random width-256 model, none of
2368 candidates (22778 draws) differed; ``benchmarks/bench_candidates.py`` asserts equality on
its data. Greedy candidates (``temperature = 0``) are bit for bit those of ``generate``.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections.abc import Sequence

import torch

from ftipbook import _validate
from ftipbook.model.cache import HybridCache, KVCache, LayerCache
from ftipbook.model.generate import Generation, StopReason, _check_sampling, generate, sampling_law
from ftipbook.model.kda import KDAState
from ftipbook.model.mla import LatentKVCache
from ftipbook.model.transformer import DecoderLM, as_tokens

__all__ = ["MAX_CANDIDATES", "MAX_NEW_TOKENS", "MAX_SAMPLED_TOKENS", "candidate_seed", "sample_candidates"]

#: Declared upper bounds on the work of one :func:`sample_candidates` call, checked before any:
#: ``k`` candidates per prompt, ``max_new_tokens`` per candidate, and ``N * k * max_new_tokens``
#: tokens in all (each costs a cached forward step and 16 bytes of output buffers).
MAX_CANDIDATES = 2**16
MAX_NEW_TOKENS = 2**16
MAX_SAMPLED_TOKENS = 2**26


def candidate_seed(seed: int, prompt_index: int, candidate_index: int) -> int:
    """The ``generate`` seed of candidate ``candidate_index`` of prompt ``prompt_index`` under ``seed``.

    The first 63 bits of ``BLAKE2b-64("seed,i,j")``: distinct triples give unrelated generators,
    and a candidate's seed does not depend on ``k`` or ``N``, so the first ``k'`` candidates of a
    run with ``k >= k'`` are those of a run with ``k'``.
    """
    seed = _validate.integer("seed", seed)
    prompt_index = _validate.integer("prompt_index", prompt_index, low=0)
    candidate_index = _validate.integer("candidate_index", candidate_index, low=0)
    digest = hashlib.blake2b(f"{seed},{prompt_index},{candidate_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def _as_prompts(model: DecoderLM, prompts: object, max_new_tokens: int) -> list[torch.Tensor]:
    """``prompts`` as 1-D ``LongTensor`` s on the model's device, every id and length checked."""
    if isinstance(prompts, torch.Tensor):
        if prompts.dim() != 2:
            raise ValueError(f"prompts as a tensor must be a batch [N, T], got shape {tuple(prompts.shape)}")
        prompts = list(prompts)
    elif isinstance(prompts, (str, bytes)) or not isinstance(prompts, Sequence):
        raise TypeError(f"prompts must be a sequence of token sequences, got {type(prompts).__name__}")
    if len(prompts) == 0:
        raise ValueError("prompts must hold at least one prompt, got an empty sequence")
    cfg, device = model.cfg, next(model.parameters()).device
    out = []
    for i, prompt in enumerate(prompts):
        if isinstance(prompt, (int, str, bytes)):
            raise TypeError(
                f"prompts[{i}]={prompt!r} must be a token sequence (a list of ids or a 1-D tensor); "
                f"for a single prompt pass [prompt]"
            )
        try:
            tokens = as_tokens(prompt, device)
        except (TypeError, ValueError) as err:
            raise ValueError(f"prompts[{i}]: {err}") from err
        if tokens.dim() != 1 or len(tokens) == 0:
            raise ValueError(f"prompts[{i}] must be a non-empty 1-D token sequence, got shape {tuple(tokens.shape)}")
        bad = (tokens < 0) | (tokens >= cfg.vocab_size)
        if bool(bad.any()):
            t = int(bad.nonzero()[0])
            raise ValueError(
                f"prompts[{i}][{t}] = {int(tokens[t])} is outside the vocabulary [0, {cfg.vocab_size})"
            )
        longest = len(tokens) + max_new_tokens - 1
        if cfg.pos == "learned" and longest > cfg.max_seq_len:
            raise ValueError(
                f"prompts[{i}] has length {len(tokens)}; with max_new_tokens={max_new_tokens} it needs {longest} "
                f"positions, more than max_seq_len={cfg.max_seq_len} of the learned positions"
            )
        out.append(tokens)
    return out


def _check_arguments(
    model: object,
    k: object,
    max_new_tokens: object,
    temperature: object,
    top_k: object,
    top_p: object,
    seed: object,
    eos_id: object,
) -> tuple[int, int, float, int | None, float | None, int | None, int | None]:
    """The arguments in canonical Python types (numpy scalars accepted), each checked by name."""
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be a DecoderLM, got {type(model).__name__}")
    k = _validate.integer("k", k, low=1, high=MAX_CANDIDATES)
    max_new_tokens = _validate.integer("max_new_tokens", max_new_tokens, low=1, high=MAX_NEW_TOKENS)
    temperature = _validate.real("temperature", temperature, low=0.0)
    top_k = None if top_k is None else _validate.integer("top_k", top_k, low=1)
    top_p = None if top_p is None else _validate.real("top_p", top_p, low=0.0, high=1.0, low_open=True)
    _check_sampling(temperature, top_k, top_p)
    if seed is None:
        if temperature > 0:
            raise ValueError(f"sampling with temperature={temperature} needs an int seed, got seed=None")
    else:
        seed = _validate.integer("seed", seed)  # any int: candidate_seed hashes it
    if eos_id is not None:
        eos_id = _validate.integer("eos_id", eos_id, low=0, high=model.cfg.vocab_size - 1)
    return k, max_new_tokens, temperature, top_k, top_p, seed, eos_id


# cache rows ------------------------------------------------------------------------------------
def _layer_rows(layers: list[LayerCache], index: torch.Tensor) -> LayerCache:
    """One layer cache holding rows ``index`` of the concatenation of ``layers`` along the batch.

    Every state tensor of the three layer caches is batch-first: the keys and values of a
    ``KVCache`` (its preallocated room is kept), the latent and RoPE key of a ``LatentKVCache``,
    the recurrent state, convolution buffers and last segment ids of a ``KDAState``.
    """
    first = layers[0]

    def rows(name: str) -> torch.Tensor:
        parts = [getattr(layer, name) for layer in layers]
        return (parts[0] if len(parts) == 1 else torch.cat(parts)).index_select(0, index)

    if isinstance(first, KVCache):
        out = copy.copy(first)
        out.k, out.v = rows("k"), rows("v")
        return out
    if isinstance(first, (LatentKVCache, KDAState)):
        names = [f.name for f in dataclasses.fields(first) if isinstance(getattr(first, f.name), torch.Tensor)]
        return dataclasses.replace(first, **{name: rows(name) for name in names})
    raise TypeError(f"sample_candidates cannot copy rows of a {type(first).__name__} layer cache")


def _cache_rows(caches: list[HybridCache], index: torch.Tensor) -> HybridCache:
    """A ``HybridCache`` of rows ``index`` of the caches (all at the same length) stacked along the batch."""
    out = HybridCache([_layer_rows([c.layers[i] for c in caches], index) for i in range(len(caches[0]))])
    out.length = caches[0].length
    return out


# decoding ----------------------------------------------------------------------------------------
def _draw(
    logits: torch.Tensor,
    generators: list[torch.Generator],
    temperature: float,
    top_k: int | None,
    top_p: float | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(tokens [B], logprobs [B])``: row ``r`` drawn with ``generators[r]`` as ``generate`` draws one row."""
    law = sampling_law(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    token = torch.cat([torch.multinomial(law[r : r + 1], 1, generator=g) for r, g in enumerate(generators)])
    token = token.squeeze(-1)
    logprob = torch.log_softmax(logits.double(), dim=-1).gather(-1, token.unsqueeze(-1)).squeeze(-1)
    return token, logprob


def _sample_group(
    model: DecoderLM,
    prompts: list[torch.Tensor],
    generators: list[list[torch.Generator]],
    max_new_tokens: int,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    eos_id: int | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Decode ``k`` candidates of each of ``G`` prompts of one length ``n`` together.

    Row ``g k + j`` is candidate ``j`` of prompt ``g``. Returns ``(new [G k, max_new_tokens],
    logprobs [G k, max_new_tokens], steps [G k])``: the drawn tokens, their log-probabilities and
    how many of them each row made (entries past a row's ``steps`` are unused).
    """
    n, k = len(prompts[0]), len(generators[0])
    device = prompts[0].device
    flat = [g for gens in generators for g in gens]
    b = len(flat)
    new = torch.zeros(b, max_new_tokens, dtype=torch.long, device=device)
    logps = torch.zeros(b, max_new_tokens, dtype=torch.float64, device=device)
    steps = torch.full((b,), max_new_tokens, dtype=torch.long, device=device)
    positions = torch.arange(n + max_new_tokens, device=device).expand(b, -1)
    caches, logits = [], []
    with torch.inference_mode():
        for prompt in prompts:  # the prefill of generate, one prompt at a time
            cache = model.new_cache(1, max_len=n + max_new_tokens)
            logits.append(model(prompt.unsqueeze(0), cache=cache, last_only=True)[:, -1])
            caches.append(cache)
        rows = torch.arange(len(prompts), device=device).repeat_interleave(k)
        cache = _cache_rows(caches, rows)
        token, logprob = _draw(torch.cat(logits).index_select(0, rows), flat, temperature, top_k, top_p)
    alive = torch.arange(b, device=device)  # the candidate of each row still decoding
    for step in range(max_new_tokens):
        new[alive, step], logps[alive, step] = token, logprob
        if eos_id is not None:
            stop = token == eos_id
            if bool(stop.any()):
                steps[alive[stop]] = step + 1
                keep = (~stop).nonzero().squeeze(-1)
                if len(keep) == 0:
                    break
                alive, token = alive[keep], token[keep]
                flat = [flat[r] for r in keep.tolist()]
                with torch.inference_mode():
                    cache = _cache_rows([cache], keep)
        if step + 1 == max_new_tokens:
            break
        at = positions[: len(alive), n + step : n + step + 1]
        with torch.inference_mode():
            h = model._hidden(token.unsqueeze(-1), None, cache, at)
            token, logprob = _draw(model.unembed(h)[:, -1], flat, temperature, top_k, top_p)
    return new, logps, steps


def sample_candidates(
    model: DecoderLM,
    prompts: Sequence[Sequence[int] | torch.Tensor] | torch.Tensor,
    k: int,
    max_new_tokens: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    eos_id: int | None = None,
) -> list[list[Generation]]:
    """``k`` candidate continuations of each prompt: ``out[i][j]`` is candidate ``j`` of ``prompts[i]``.

    ``prompts`` is a sequence of token sequences (lists of ids or 1-D tensors, lengths may differ)
    or a 2-D tensor ``[N, T]``. Candidate ``j`` of prompt ``i`` is the :class:`Generation` of
    ``generate(model, prompts[i], max_new_tokens, temperature=temperature, top_k=top_k,
    top_p=top_p, eos_id=eos_id, seed=candidate_seed(seed, i, j))`` (see the module docstring for
    the float32 rounding caveat), computed in one batched, cached decode per prompt length.
    ``seed`` is required when ``temperature > 0``; ``temperature = 0`` makes all ``k`` candidates
    the greedy continuation.

    The work is bounded before it starts: ``k <= MAX_CANDIDATES``, ``max_new_tokens <=
    MAX_NEW_TOKENS`` and ``N * k * max_new_tokens <= MAX_SAMPLED_TOKENS``.
    """
    k, max_new_tokens, temperature, top_k, top_p, seed, eos_id = _check_arguments(
        model, k, max_new_tokens, temperature, top_k, top_p, seed, eos_id)
    tokens = _as_prompts(model, prompts, max_new_tokens)
    if len(tokens) * k * max_new_tokens > MAX_SAMPLED_TOKENS:
        raise ValueError(f"{len(tokens)} prompts x k={k} x max_new_tokens={max_new_tokens} = "
                         f"{len(tokens) * k * max_new_tokens} tokens exceeds MAX_SAMPLED_TOKENS={MAX_SAMPLED_TOKENS}; "
                         f"split the prompts into smaller calls")
    if temperature == 0:
        greedy = [generate(model, p, max_new_tokens, eos_id=eos_id) for p in tokens]
        return [[dataclasses.replace(g, tokens=g.tokens.clone(), new_tokens=g.new_tokens.clone(),
                                     logprobs=g.logprobs.clone()) for _ in range(k)] for g in greedy]
    device = tokens[0].device
    by_length: dict[int, list[int]] = {}
    for i, prompt in enumerate(tokens):
        by_length.setdefault(len(prompt), []).append(i)
    out: list[list[Generation]] = [[] for _ in tokens]
    for members in by_length.values():
        generators = [[torch.Generator(device=device).manual_seed(candidate_seed(seed, i, j)) for j in range(k)]
                      for i in members]
        new, logps, steps = _sample_group(model, [tokens[i] for i in members], generators, max_new_tokens,
                                          temperature, top_k, top_p, eos_id)
        for row, m in enumerate(steps.tolist()):
            i = members[row // k]
            ended = eos_id is not None and int(new[row, m - 1]) == eos_id
            out[i].append(Generation(torch.cat([tokens[i], new[row, :m]]), new[row, :m].clone(),
                                     logps[row, :m].clone(), StopReason.EOS if ended else StopReason.MAX_LEN))
    return out

