"""Autoregressive generation with a cache, and continuation log-probabilities (ftip-000G, 000I).

Sampling draws each new token from the model's next-token law after three declared transforms,
applied in this order: temperature (``0`` means greedy argmax, ties to the lower id), top-k
(keep the ``k`` most probable ids, ties to the lower id), top-p (keep the smallest most-probable
set whose mass reaches ``p``). Every random draw comes from a ``torch.Generator`` seeded by
``seed``, so a run is a function of its arguments. Recorded log-probabilities are those of the
model's unmodified law ``log pi_theta(y_t | x y_<t)``, the factors of ftip-000I.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

import torch

from ftipbook.model.transformer import DecoderLM, as_tokens


class StopReason(str, Enum):
    """Which stopping convention of ftip-000G ended a generation."""

    EOS = "eos"  # the last new token is eos_id
    MAX_LEN = "max_len"  # max_new_tokens were generated without eos


@dataclass(frozen=True)
class Generation:
    """One generated continuation."""

    tokens: torch.Tensor  # prompt followed by the new tokens, LongTensor [n + m]
    new_tokens: torch.Tensor  # the m new tokens; ends with eos_id when stop_reason is EOS
    logprobs: torch.Tensor  # float64 [m]: log pi_theta(new_tokens[t] | prompt, new_tokens[:t])
    stop_reason: StopReason


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_sampling(temperature: float, top_k: int | None, top_p: float | None) -> None:
    """Refuse sampling arguments outside their domain, naming the argument and what is allowed."""
    if not (_is_real(temperature) and math.isfinite(temperature) and temperature >= 0):
        raise ValueError(f"temperature={temperature!r} must be a finite number >= 0 (0 = greedy)")
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1):
        raise ValueError(f"top_k={top_k!r} must be an int >= 1 or None")
    if top_p is not None and not (_is_real(top_p) and 0 < top_p <= 1):
        raise ValueError(f"top_p={top_p!r} must lie in (0, 1] or be None")


def _check_logits(logits: torch.Tensor) -> None:
    """Refuse logits that define no law: not a real tensor, no vocabulary axis, NaN or ``+inf``
    entries, or a row that is ``-inf`` everywhere (``-inf`` entries alone are masked tokens)."""
    if not isinstance(logits, torch.Tensor) or logits.is_complex() or logits.dtype == torch.bool:
        raise TypeError(f"logits must be a real tensor [..., V], got {type(logits).__name__}"
                        + (f" of dtype {logits.dtype}" if isinstance(logits, torch.Tensor) else ""))
    if logits.dim() == 0 or logits.shape[-1] == 0:
        raise ValueError(f"logits must have a non-empty vocabulary axis [..., V], got shape {tuple(logits.shape)}")
    if logits.is_floating_point():
        if bool(torch.isnan(logits).any()) or bool((logits == math.inf).any()):
            raise ValueError("logits hold NaN or +inf entries, which define no law (-inf masks a token)")
        if bool((logits == -math.inf).all(dim=-1).any()):
            raise ValueError("logits have a row that is -inf everywhere: no token is left to draw")


def sampling_law(
    logits: torch.Tensor, *, temperature: float, top_k: int | None = None, top_p: float | None = None
) -> torch.Tensor:
    """The law a new token is drawn from, given next-token ``logits [..., V]`` (float32 output).

    ``temperature = 0`` gives the point mass on the argmax (lowest id among ties).
    """
    _check_sampling(temperature, top_k, top_p)
    _check_logits(logits)
    logits = logits.float()
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.shape[-1]).float()
    scaled = logits / temperature
    # A tiny temperature overflows logits / temperature to inf, or rounds to 0 in float32 (0 / 0):
    # a NaN law. Rows where that happens are scaled in float64 after subtracting their maximum, so
    # they tend to the uniform law on their argmax set; the other rows stay bit-identical.
    broken = (~torch.isfinite(scaled) & torch.isfinite(logits)).any(dim=-1, keepdim=True)
    if bool(broken.any()):
        shifted = ((logits.double() - logits.amax(dim=-1, keepdim=True).double()) / temperature).float()
        scaled = torch.where(broken, shifted, scaled)
    probs = torch.softmax(scaled, dim=-1)
    if top_k is None and top_p is None:  # nothing is cut: the ranking below would keep every id
        return probs / probs.sum(dim=-1, keepdim=True)
    order = torch.sort(probs, dim=-1, descending=True, stable=True).indices
    ranked = probs.gather(-1, order)
    keep = torch.ones_like(ranked, dtype=torch.bool)
    if top_k is not None:
        keep[..., top_k:] = False
    if top_p is not None:
        ranked = ranked * keep
        ranked = ranked / ranked.sum(dim=-1, keepdim=True)
        keep &= ranked.cumsum(dim=-1) - ranked < top_p  # mass strictly before each id, in rank order
        # The most likely id has no mass before it, so it is kept for every top_p > 0, also for one
        # that rounds to 0 when compared with the float32 masses (which used to leave no id: NaN).
        keep[..., 0] = True
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    probs = probs * kept
    return probs / probs.sum(dim=-1, keepdim=True)


def _decode(
    model: DecoderLM,
    prompt: torch.Tensor,
    max_new_tokens: int,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    seed: int | None,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Yield ``(tokens [B], logprobs [B])`` for each new position; one cached forward per step.

    The model runs under ``torch.inference_mode`` (no autograd bookkeeping at all), in blocks
    that never span a ``yield``, on a cache preallocated for the whole run. The prompt goes
    through the checked ``forward``; each later step feeds the model's own token through
    ``DecoderLM._hidden``, skipping the id check (a device-to-host sync) that an argmax or a
    draw from the law cannot fail, and unembeds only the last position. The positions of every
    step are one tensor made up front, outside inference mode, so the RoPE angles are still
    computed once per step and shared by the layers.
    """
    b, n = prompt.shape
    cache = model.new_cache(b, max_len=n + max_new_tokens)
    positions = torch.arange(n + max_new_tokens, device=prompt.device).expand(b, -1)
    generator = None
    if temperature > 0:
        generator = torch.Generator(device=prompt.device).manual_seed(seed)

    def choose(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if generator is None:
            token = logits.argmax(dim=-1)
        else:
            law = sampling_law(logits, temperature=temperature, top_k=top_k, top_p=top_p)
            token = torch.multinomial(law, 1, generator=generator).squeeze(-1)
        logprob = torch.log_softmax(logits.double(), dim=-1).gather(-1, token.unsqueeze(-1)).squeeze(-1)
        return token, logprob

    with torch.inference_mode():
        token, logprob = choose(model(prompt, cache=cache, last_only=True)[:, -1])
    for step in range(n, n + max_new_tokens):
        yield token, logprob
        if step + 1 < n + max_new_tokens:
            at = positions[:, step : step + 1]
            with torch.inference_mode():
                h = model._hidden(token.unsqueeze(-1), None, cache, at)
                token, logprob = choose(model.unembed(h)[:, -1])


def _prepare(
    model: DecoderLM,
    prompt: torch.Tensor | Sequence[int],
    max_new_tokens: int,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    seed: int | None,
    eos_id: int | None,
) -> torch.Tensor:
    _check_sampling(temperature, top_k, top_p)
    tokens = as_tokens(prompt, next(model.parameters()).device, name="prompt")
    if tokens.dim() not in (1, 2) or tokens.shape[-1] == 0:
        raise ValueError(
            f"prompt must be a non-empty token sequence [T] or batch [B, T], got shape {tuple(tokens.shape)}"
        )
    if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens={max_new_tokens!r} must be an int >= 1")
    if temperature > 0 and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ValueError(f"sampling with temperature={temperature} needs an int seed, got seed={seed!r}")
    if seed is not None and not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**63):
        raise ValueError(f"seed={seed!r} must be an int in [0, 2**63) or None")
    vocab = model.cfg.vocab_size
    if eos_id is not None and not (isinstance(eos_id, int) and not isinstance(eos_id, bool) and 0 <= eos_id < vocab):
        raise ValueError(f"eos_id={eos_id!r} must be an int token id in [0, {vocab}) or None")
    model.check_tokens(tokens, name="prompt")
    longest = tokens.shape[-1] + max_new_tokens - 1
    if model.cfg.pos == "learned" and longest > model.cfg.max_seq_len:
        raise ValueError(
            f"prompt length {tokens.shape[-1]} + max_new_tokens {max_new_tokens} needs {longest} positions, "
            f"more than max_seq_len={model.cfg.max_seq_len} of the learned positions"
        )
    return tokens


def generate(
    model: DecoderLM,
    prompt: torch.Tensor | Sequence[int],
    max_new_tokens: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    eos_id: int | None = None,
) -> Generation | list[Generation]:
    """Generate up to ``max_new_tokens`` after ``prompt`` with cached decoding.

    A 1-D prompt returns one :class:`Generation`; a batch ``[B, T]`` of equal-length prompts
    returns a list, decoded together (each row stops at its own ``eos_id``). ``seed`` is required
    when ``temperature > 0``.
    """
    tokens = _prepare(model, prompt, max_new_tokens, temperature, top_k, top_p, seed, eos_id)
    batch = tokens.reshape(-1, tokens.shape[-1])
    new, logps = [], []
    done = torch.zeros(batch.shape[0], dtype=torch.bool, device=batch.device)
    for token, logprob in _decode(model, batch, max_new_tokens, temperature, top_k, top_p, seed):
        new.append(token)
        logps.append(logprob)
        if eos_id is not None:
            done |= token == eos_id
            if bool(done.all()):
                break
    new_t, logp_t = torch.stack(new, dim=1), torch.stack(logps, dim=1)
    out = []
    for row, prompt_row in enumerate(batch):
        hits = (new_t[row] == eos_id).nonzero() if eos_id is not None else new_t[row][:0]
        m = int(hits[0]) + 1 if len(hits) else new_t.shape[1]
        reason = StopReason.EOS if len(hits) else StopReason.MAX_LEN
        out.append(Generation(torch.cat([prompt_row, new_t[row, :m]]), new_t[row, :m], logp_t[row, :m], reason))
    return out[0] if tokens.dim() == 1 else out


def stream_generate(
    model: DecoderLM,
    prompt: torch.Tensor | Sequence[int],
    max_new_tokens: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    eos_id: int | None = None,
) -> Iterator[int]:
    """Yield the new token ids of :func:`generate` for a 1-D prompt one at a time, as they are made."""
    tokens = _prepare(model, prompt, max_new_tokens, temperature, top_k, top_p, seed, eos_id)
    if tokens.dim() != 1:
        raise ValueError(f"stream_generate takes one prompt [T], got shape {tuple(tokens.shape)}")
    for token, _ in _decode(model, tokens.unsqueeze(0), max_new_tokens, temperature, top_k, top_p, seed):
        yield int(token)
        if int(token) == eos_id:
            return


@torch.no_grad()
def continuation_logprobs(
    model: DecoderLM, prompt: torch.Tensor | Sequence[int], continuation: torch.Tensor | Sequence[int]
) -> torch.Tensor:
    """``[log pi_theta(y_t | x y_<t)]_t`` for ``t = 1..m`` (float64), from one forward of ``x y``."""
    device = next(model.parameters()).device
    x, y = as_tokens(prompt, device), as_tokens(continuation, device)
    if x.dim() != 1 or y.dim() != 1 or len(x) == 0:
        raise ValueError(
            f"prompt must be a non-empty 1-D sequence and continuation 1-D; got {tuple(x.shape)} and {tuple(y.shape)}"
        )
    logits = model(torch.cat([x, y]).unsqueeze(0))[0, len(x) - 1 : len(x) + len(y) - 1]
    return torch.log_softmax(logits.double(), dim=-1).gather(-1, y.unsqueeze(-1)).squeeze(-1)


def sequence_logprob(
    model: DecoderLM, prompt: torch.Tensor | Sequence[int], continuation: torch.Tensor | Sequence[int]
) -> float:
    """``log P_theta(y_{1:m} | x) = sum_t log pi_theta(y_t | x y_<t)`` of ftip-000I."""
    return float(continuation_logprobs(model, prompt, continuation).sum())
