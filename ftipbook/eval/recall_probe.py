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
relative mean squared errors ``mean ||v_hat - v||^2 / mean ||v||^2`` in float64. For Example ftip-00KD,
:func:`recall_exact_match` scores the same readers by exact match of a label read off a codebook.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ftipbook import checks
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
    n_pairs, d_k = checks.integer("n_pairs", n_pairs, 1, MAX_PAIRS), checks.integer("d_k", d_k, 1, MAX_WIDTH)
    checks.instance("generator", generator, torch.Generator)
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
    n_pairs, d_k, sharpness = _check_sizes(n_pairs, d_k, sharpness)
    gen = torch.Generator().manual_seed(checks.seed("seed", seed))
    keys = probe_keys(n_pairs, d_k, gen)
    values = torch.randn(n_pairs, d_k, dtype=torch.float64, generator=gen)
    delta, attended = _delta_rule_read(keys, values), _attention_read(keys, values, sharpness)

    # the best any linear state can do when read by S^T k: least squares over S
    best = keys @ torch.linalg.lstsq(keys, values).solution
    return RecallResult(n_pairs, d_k, _relative_error(delta, values), _relative_error(best, values),
                        _relative_error(attended, values))


#: The most pairs and the widest key space a probe builds (``n_pairs * d_k`` float64 values).
MAX_PAIRS, MAX_WIDTH = 10**5, 4096


def _check_sizes(n_pairs: object, d_k: object, sharpness: object) -> tuple[int, int, float]:
    return (checks.integer("n_pairs", n_pairs, 1, MAX_PAIRS), checks.integer("d_k", d_k, 1, MAX_WIDTH),
            float(checks.real("sharpness", sharpness, 0, low_open=True)))


def _delta_rule_read(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Write every pair with the delta rule (no decay, ``beta = 1``: :func:`~ftipbook.model.kda.kda_recurrent`,
    one head), then read ``S^T k`` for every key."""
    n, d_k = keys.shape
    shape = (1, n, 1, d_k)
    _, state = kda_recurrent(keys.view(shape), keys.view(shape), values.view(1, n, 1, -1),
                             torch.zeros(shape, dtype=torch.float64), torch.ones(1, n, 1, dtype=torch.float64))
    return keys @ state[0, 0]


def _attention_read(keys: torch.Tensor, values: torch.Tensor, sharpness: float) -> torch.Tensor:
    """Query every cached key with softmax attention at inverse temperature ``sharpness``."""
    attended, _ = sdpa_reference(keys, keys, values, scale=sharpness)
    return attended


@dataclass(frozen=True)
class RecallMatch:
    """Exact-match recall of ``n_pairs`` labelled keys in a width-``d_k`` key space (ftip-00KD).

    ``labels`` are the stored labels in writing order; ``delta_rule`` and ``attention`` the labels
    each reader answers when queried with each key (the codebook label nearest to what it reads).
    """

    n_pairs: int
    d_k: int
    labels: tuple[int, ...]
    delta_rule: tuple[int, ...]
    attention: tuple[int, ...]

    @property
    def correct(self) -> dict[str, int]:
        """Queries answered with the stored label, per reader."""
        return {reader: sum(a == b for a, b in zip(getattr(self, reader), self.labels))
                for reader in ("delta_rule", "attention")}


def recall_exact_match(n_pairs: int, d_k: int, *, n_labels: int, seed: int = 0,
                       sharpness: float = 200.0) -> RecallMatch:
    """One context of an exact-match recall benchmark (ftip-00KD).

    ``n_pairs`` keys from :func:`probe_keys` carry labels drawn uniformly from ``n_labels``; each
    label is a random unit codeword of width ``d_k`` and the stored value is its codeword. Both
    readers (delta-rule state, attention over the cache) are queried with every key and answer the
    label whose codeword has the largest inner product with what they read.
    """
    n_pairs, d_k, sharpness = _check_sizes(n_pairs, d_k, sharpness)
    n_labels = checks.integer("n_labels", n_labels, 2, MAX_PAIRS)
    gen = torch.Generator().manual_seed(checks.seed("seed", seed))
    keys = probe_keys(n_pairs, d_k, gen)
    codebook = torch.randn(n_labels, d_k, dtype=torch.float64, generator=gen)
    codebook = codebook / codebook.norm(dim=-1, keepdim=True)
    labels = torch.randint(n_labels, (n_pairs,), generator=gen)
    values = codebook[labels]

    def answers(read: torch.Tensor) -> tuple[int, ...]:
        return tuple(int(i) for i in (read @ codebook.T).argmax(dim=-1))

    return RecallMatch(n_pairs, d_k, tuple(int(i) for i in labels), answers(_delta_rule_read(keys, values)),
                       answers(_attention_read(keys, values, sharpness)))
