"""A hand-set associative-recall probe: a fixed-size delta-rule state against attention over a cache.

Remark ftip-00L1 (and ftip-00K7, 00KD) contrasts a recurrent layer, whose memory is one
``d_k x d_v`` state, with softmax attention, whose cache keeps every key and value. The probe
writes ``n`` key/value pairs and then queries with each key:

* the **delta rule** (the update of :func:`ftipbook.model.kda.kda_recurrent` with no decay and
  ``beta = 1``) stores orthonormal keys exactly, so recall is exact for ``n <= d_k``;
* **any** linear state ``S`` read as ``S^T k`` is limited by rank: for ``n > d_k`` generic values
  cannot all be recalled, and the least-squares state gives the smallest possible error;
* **attention** with a sharp softmax over the cached keys returns the matching value for every
  ``n``, because each key is most similar to itself.

Weights are set by hand (keys, values, inverse temperature), nothing is trained; errors are
relative mean squared errors ``mean ||v_hat - v||^2 / mean ||v||^2`` in float64.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ftipbook.model.attention import sdpa_reference
from ftipbook.model.kda import kda_recurrent


@dataclass(frozen=True)
class RecallResult:
    """Relative recall errors of the three readers for ``n_pairs`` pairs in a width-``d_k`` key space."""

    n_pairs: int
    d_k: int
    delta_rule: float
    best_linear_state: float
    attention: float


def probe_keys(n_pairs: int, d_k: int, generator: torch.Generator) -> torch.Tensor:
    """``[n, d_k]`` unit keys: orthonormal rows while ``n <= d_k``; beyond, ``d_k`` orthonormal rows
    followed by random unit vectors (float64)."""
    basis, _ = torch.linalg.qr(torch.randn(d_k, d_k, dtype=torch.float64, generator=generator))
    keys = basis.T[: min(n_pairs, d_k)]
    if n_pairs > d_k:
        extra = torch.randn(n_pairs - d_k, d_k, dtype=torch.float64, generator=generator)
        keys = torch.cat([keys, extra / extra.norm(dim=-1, keepdim=True)])
    return keys


def _relative_error(estimate: torch.Tensor, values: torch.Tensor) -> float:
    return float((estimate - values).pow(2).sum(-1).mean() / values.pow(2).sum(-1).mean())


def recall_probe(n_pairs: int, d_k: int, *, seed: int = 0, sharpness: float = 200.0) -> RecallResult:
    """Write ``n_pairs`` random key/value pairs (values of width ``d_k``), query every key, and
    return the three readers' relative errors. ``sharpness`` is the attention's inverse temperature."""
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1:
        raise ValueError(f"n_pairs={n_pairs!r} must be an int >= 1")
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"d_k={d_k!r} must be an int >= 1")
    if not sharpness > 0:
        raise ValueError(f"sharpness={sharpness!r} must be > 0")
    gen = torch.Generator().manual_seed(seed)
    keys = probe_keys(n_pairs, d_k, gen)
    values = torch.randn(n_pairs, d_k, dtype=torch.float64, generator=gen)

    # delta rule: no decay (log alpha = 0), full write strength (beta = 1), one head, batch 1
    shape = (1, n_pairs, 1, d_k)
    _, state = kda_recurrent(keys.view(shape), keys.view(shape), values.view(shape),
                             torch.zeros(shape, dtype=torch.float64), torch.ones(1, n_pairs, 1, dtype=torch.float64))
    delta = keys @ state[0, 0]

    # the best any linear state can do when read by S^T k: least squares over S
    best = keys @ torch.linalg.lstsq(keys, values).solution

    attended, _ = sdpa_reference(keys, keys, values, scale=sharpness)
    return RecallResult(n_pairs, d_k, _relative_error(delta, values), _relative_error(best, values),
                        _relative_error(attended, values))
