"""Active attention-state memory of a 3:1 KDA hybrid against full attention (ftip-00KY).

The note's stylized comparison: ``4 l`` layers, batch ``b``, context ``T``; each full-attention
(MLA) layer stores ``kappa T`` bytes per sequence, each KDA layer one fixed state of ``sigma``
bytes. Then

    M_MLA = 4 b l kappa T,    M_hybrid = b l (kappa T + 3 sigma),
    M_hybrid / M_MLA = 1/4 + 3 sigma / (4 kappa T),

so the hybrid holds less state exactly when ``T > sigma / kappa`` and the ratio falls to ``1/4``
(a 75 % saving) as ``T`` grows (:func:`stylized_state_memory`, :func:`cache_ratio`,
:func:`crossover_length`). :func:`state_sizes` reads ``kappa`` and ``sigma`` off a real
``ModelConfig`` through :mod:`ftipbook.model.accounting`, and :func:`measure_cache_ratio` prefills a
real hybrid and its full-attention reference and measures their live cache tensors, which must
equal the formula at every length.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction

import torch

from ftipbook.model.accounting import cache_bytes
from ftipbook.model.config import ModelConfig
from ftipbook.model.transformer import DecoderLM

#: The limit of ``M_hybrid / M_MLA`` as ``T -> infinity``: three of every four growing caches are gone.
RATIO_LIMIT = 0.25
#: Layer letters whose cache grows with the context (softmax attention, MLA).
GROWING = ("A", "M")


def _positive_int(name: str, x: object) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < 1:
        raise ValueError(f"{name}={x!r} must be an int >= 1")
    return x


def _positive(name: str, x: object) -> Fraction:
    if isinstance(x, bool) or not isinstance(x, (int, float, Fraction)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name}={x!r} must be a finite number > 0")
    return Fraction(x)


def _as_number(q: Fraction) -> int | float:
    return q.numerator if q.denominator == 1 else float(q)


def stylized_state_memory(ell: int, batch: int, length: int, kappa: float, sigma: float) -> tuple[int | float, int | float]:
    """``(M_MLA, M_hybrid) = (4 b l kappa T, b l (kappa T + 3 sigma))`` in bytes (ftip-00KY).

    Integers when ``kappa`` and ``sigma`` are (byte counts of a real model), floats otherwise.
    """
    ell, batch, length = _positive_int("ell", ell), _positive_int("batch", batch), _positive_int("length", length)
    k, s = _positive("kappa", kappa), _positive("sigma", sigma)
    return _as_number(4 * batch * ell * k * length), _as_number(batch * ell * (k * length + 3 * s))


def cache_ratio(length: int, kappa: float, sigma: float) -> float:
    """``M_hybrid / M_MLA = 1/4 + 3 sigma / (4 kappa T)``, correctly rounded (ftip-00KY).

    Independent of ``b`` and ``l``; decreases in ``T`` towards :data:`RATIO_LIMIT`.
    """
    length = _positive_int("length", length)
    return float(Fraction(1, 4) + 3 * _positive("sigma", sigma) / (4 * _positive("kappa", kappa) * length))


def crossover_length(kappa: float, sigma: float) -> float:
    """``sigma / kappa``: the hybrid holds strictly less state exactly when ``T`` exceeds it (ftip-00KY)."""
    return float(_positive("sigma", sigma) / _positive("kappa", kappa))


@dataclass(frozen=True)
class StateSizes:
    """``kappa``, ``sigma`` and ``l`` of a 3:1 hybrid configuration, in bytes per sequence.

    ``growing`` is the letter of its context-growing layers (``"M"`` for MLA, ``"A"`` for softmax
    attention); ``dtype`` the cache dtype the sizes hold for.
    """

    kappa: int
    sigma: int
    ell: int
    growing: str
    dtype: torch.dtype

    @property
    def crossover(self) -> float:
        """``sigma / kappa`` (:func:`crossover_length`)."""
        return crossover_length(self.kappa, self.sigma)

    def memory(self, length: int, batch: int = 1) -> tuple[int, int]:
        """``(M_MLA, M_hybrid)`` of :func:`stylized_state_memory` for these sizes."""
        return stylized_state_memory(self.ell, batch, length, self.kappa, self.sigma)  # type: ignore[return-value]

    def ratio(self, length: int) -> float:
        """:func:`cache_ratio` for these sizes."""
        return cache_ratio(length, self.kappa, self.sigma)


def _one_layer(cfg: ModelConfig, letter: str) -> ModelConfig:
    return replace(cfg, layer_pattern=letter, n_layers=1, n_loops=1)


def state_sizes(cfg: ModelConfig, dtype: torch.dtype = torch.float32) -> StateSizes:
    """Read ``kappa`` and ``sigma`` of a 3:1 hybrid ``cfg`` from :func:`ftipbook.model.accounting.cache_bytes`.

    ``cfg`` must apply ``3 l`` KDA layers and ``l`` layers of one growing kind (``"M"`` or ``"A"``),
    in any order, once (``n_loops = 1``). ``kappa`` is one growing layer's cache bytes per token
    (checked to be exactly proportional to ``T``, the note's assumption) and ``sigma`` one KDA
    layer's fixed state (recurrent state plus short-convolution buffers).
    """
    if not isinstance(cfg, ModelConfig):
        raise TypeError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    counts = Counter(cfg.layer_kinds)
    growing = [g for g in GROWING if counts[g]]
    if cfg.n_loops != 1 or set(counts) - {"K", *GROWING} or len(growing) != 1 or counts["K"] != 3 * counts[growing[0]]:
        raise ValueError(
            "the ftip-00KY model needs 3 l KDA layers ('K') and l layers of one growing kind ('M' or 'A'), "
            f"applied once; got layer_kinds={cfg.layer_kinds!r}, n_loops={cfg.n_loops}"
        )
    letter = growing[0]
    grow, kda = _one_layer(cfg, letter), _one_layer(cfg, "K")
    kappa = cache_bytes(grow, 1, dtype=dtype)
    if any(cache_bytes(grow, t, dtype=dtype) != kappa * t for t in (2, 3, 64)):
        raise ValueError(f"layer {letter!r} of this config does not store exactly kappa * T bytes")
    sigma = cache_bytes(kda, 1, dtype=dtype)
    return StateSizes(kappa, sigma, counts[letter], letter, dtype)


def full_reference_config(cfg: ModelConfig) -> ModelConfig:
    """The full-attention reference of a 3:1 hybrid: every layer of its growing kind, same widths.

    Same ``n_layers`` (``4 l``) and the same per-layer ``kappa``, as the note's comparison assumes.
    """
    return replace(cfg, layer_pattern=state_sizes(cfg).growing)


@torch.no_grad()
def measure_state_bytes(model: DecoderLM, length: int, *, batch: int = 1, seed: int = 0) -> int:
    """Bytes of ``model``'s live decoding cache after prefilling ``length`` random tokens per sequence.

    One forward pass with a fresh cache (no gradients); the tokens are drawn from ``seed``.
    """
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be a DecoderLM, got {type(model).__name__}")
    length, batch = _positive_int("length", length), _positive_int("batch", batch)
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, model.cfg.vocab_size, (batch, length), generator=gen).to(device)
    cache = model.new_cache(batch)
    model(tokens, cache=cache)
    return cache.nbytes()


@dataclass(frozen=True)
class CacheMeasurement:
    """Measured and predicted state bytes of a hybrid and its full reference at one ``length``."""

    length: int
    batch: int
    hybrid_bytes: int
    full_bytes: int
    predicted_hybrid: int
    predicted_full: int

    @property
    def ratio(self) -> float:
        """Measured ``M_hybrid / M_MLA``, correctly rounded."""
        return float(Fraction(self.hybrid_bytes, self.full_bytes))

    @property
    def matches(self) -> bool:
        """Both byte counts equal the formula exactly."""
        return (self.hybrid_bytes, self.full_bytes) == (self.predicted_hybrid, self.predicted_full)


def measure_cache_ratio(
    hybrid: DecoderLM, full: DecoderLM, lengths: Iterable[int], *, batch: int = 1, seed: int = 0
) -> list[CacheMeasurement]:
    """Prefill ``hybrid`` and ``full`` to each length and compare their caches with the formula (ftip-00KY).

    ``full`` must be the reference of ``hybrid`` (:func:`full_reference_config`); the prediction
    uses :func:`state_sizes` of the hybrid in the dtype of its parameters.
    """
    if not isinstance(hybrid, DecoderLM) or not isinstance(full, DecoderLM):
        raise TypeError("hybrid and full must be DecoderLM models")
    if full.cfg != full_reference_config(hybrid.cfg):
        raise ValueError("full must be built from full_reference_config(hybrid.cfg)")
    sizes = state_sizes(hybrid.cfg, next(hybrid.parameters()).dtype)
    out = []
    for t in lengths:
        pred_full, pred_hybrid = sizes.memory(t, batch)
        out.append(CacheMeasurement(
            t, batch,
            measure_state_bytes(hybrid, t, batch=batch, seed=seed),
            measure_state_bytes(full, t, batch=batch, seed=seed),
            pred_hybrid, pred_full,
        ))
    return out


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
