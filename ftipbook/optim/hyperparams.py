"""Hyperparameters of every update rule: one frozen dataclass each, validated on construction.

A parameter update rule (Definition ftip-001I) is only declared once its learning rate,
momentum coefficients, stabilisers and weight decay are fixed; these classes hold exactly
those coordinates. Building one with a bad value raises a ``ValueError`` (or ``TypeError``)
that names the field, the value and what is allowed, so no update ever runs with a negative
learning rate, a ``beta`` outside ``[0, 1)`` or a non-positive damping.

Defaults follow ``torch.optim`` where PyTorch ships the algorithm (``SGD``, ``Adam``,
``AdamW``, ``RMSprop``, ``Adafactor``, ``Muon``), so equal arguments mean equal updates.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

#: Newton–Schulz quintic coefficients of Keller Jordan's Muon, also ``torch.optim.Muon``'s default.
MUON_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
#: The classical cubic Newton–Schulz iteration ``X <- 1.5 X - 0.5 X X^T X``; converges to ``msign``.
CUBIC_NS_COEFFICIENTS = (1.5, -0.5, 0.0)
#: Compute dtypes Muon's orthogonalisation may run in (``None``: the parameter's own dtype).
NS_DTYPES = (None, "float64", "float32", "bfloat16", "float16")


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def _nonneg(name: str, value: object) -> None:
    if _real(name, value) < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")


def _positive(name: str, value: object, why: str = "") -> None:
    if _real(name, value) <= 0:
        raise ValueError(f"{name} must be > 0{why}, got {value!r}")


def _unit_interval(name: str, value: object, *, closed: bool = False) -> None:
    v = _real(name, value)
    if not (0.0 <= v <= 1.0 if closed else 0.0 <= v < 1.0):
        raise ValueError(f"{name} must lie in [0, 1{']' if closed else ')'}, got {value!r}")


def _flag(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")


def _betas(value: object) -> None:
    if not isinstance(value, tuple) or len(value) != 2:
        raise TypeError(f"betas must be a tuple (beta1, beta2), got {value!r}")
    _unit_interval("betas[0]", value[0])
    _unit_interval("betas[1]", value[1])


def _choice(name: str, value: object, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not supported; allowed: {', '.join(map(repr, allowed))}")


def _torch_flag() -> Any:
    """A ``torch.optim`` keyword (``maximize``, ``amsgrad``) as a field: ``False`` by default and,
    while ``False``, left out of the ``repr`` (a config reads as it did before the field existed)."""
    return field(default=False, repr=False)


class Hyperparameters:
    """Shared behaviour: a dict view (for ``torch.optim`` param groups), a field list and a ``repr``.

    The ``repr`` is the dataclass one, except that fields declared with ``repr=False`` (the
    ``torch.optim`` flags, declared with ``_torch_flag``) are shown only when they differ from their default.
    """

    def __repr__(self) -> str:
        shown = (f for f in fields(self) if f.repr or getattr(self, f.name) != f.default)  # type: ignore[arg-type]
        return f"{type(self).__name__}({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in shown)})"

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The names of the declared hyperparameters, in declaration order."""
        return tuple(f.name for f in fields(cls))  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        """The hyperparameters as a plain dict (tuples stay tuples)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, values: dict[str, Any]):
        """Build from a dict (e.g. a param group), ignoring keys that are not hyperparameters."""
        names = cls.field_names()
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in values.items() if k in names})


@dataclass(frozen=True, repr=False)
class SGDConfig(Hyperparameters):
    """Gradient descent with optional Polyak or Nesterov momentum (ftip-00B8), ``torch.optim.SGD``'s rule.

    ``weight_decay`` is the coupled L2 form ``g <- g + weight_decay * theta``. With momentum the
    buffer starts as the first gradient, then ``b <- momentum b + (1 - dampening) g``; the step
    uses ``b`` (Polyak) or ``g + momentum b`` (Nesterov). ``maximize`` ascends: the gradient is
    negated before everything else, as in ``torch.optim.SGD``.
    """

    lr: float = 1e-3
    momentum: float = 0.0
    dampening: float = 0.0
    nesterov: bool = False
    weight_decay: float = 0.0
    maximize: bool = _torch_flag()

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        _unit_interval("momentum", self.momentum)
        _unit_interval("dampening", self.dampening, closed=True)
        _flag("nesterov", self.nesterov)
        _nonneg("weight_decay", self.weight_decay)
        _flag("maximize", self.maximize)
        if self.nesterov and (self.momentum == 0 or self.dampening != 0):
            raise ValueError(
                f"nesterov=True needs momentum > 0 and dampening = 0, got momentum={self.momentum!r}, "
                f"dampening={self.dampening!r}"
            )


@dataclass(frozen=True, repr=False)
class MomentumConfig(SGDConfig):
    """Polyak heavy-ball momentum (ftip-00B8): :class:`SGDConfig` with ``momentum=0.9`` by default."""

    momentum: float = 0.9

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.momentum == 0 or self.nesterov:
            raise ValueError(f"Polyak momentum needs momentum > 0 and nesterov=False, got momentum="
                             f"{self.momentum!r}, nesterov={self.nesterov!r}; use SGDConfig or NesterovConfig")


@dataclass(frozen=True, repr=False)
class NesterovConfig(SGDConfig):
    """Nesterov momentum (ftip-00B8): :class:`SGDConfig` with ``momentum=0.9, nesterov=True`` by default."""

    momentum: float = 0.9
    nesterov: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.nesterov:
            raise ValueError("NesterovConfig needs nesterov=True; use MomentumConfig for Polyak momentum")


@dataclass(frozen=True, repr=False)
class AdamConfig(Hyperparameters):
    """Adam with bias correction (Kingma and Ba; ftip-00BD), ``torch.optim.Adam``'s rule.

    ``weight_decay`` is coupled L2 (added to the gradient) unless ``decoupled_weight_decay``,
    which multiplies the parameters by ``1 - lr * weight_decay`` before the step (AdamW).
    ``amsgrad`` divides by the running maximum of the second moment (state ``max_exp_avg_sq``)
    instead of the moment itself (Reddi, Kale and Kumar); ``maximize`` negates the gradient
    first. Both follow ``torch.optim.Adam``.
    """

    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0
    decoupled_weight_decay: bool = False
    amsgrad: bool = _torch_flag()
    maximize: bool = _torch_flag()

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        _betas(self.betas)
        _positive("eps", self.eps, " (it keeps the denominator sqrt(v) + eps away from zero)")
        _nonneg("weight_decay", self.weight_decay)
        _flag("decoupled_weight_decay", self.decoupled_weight_decay)
        _flag("amsgrad", self.amsgrad)
        _flag("maximize", self.maximize)


@dataclass(frozen=True, repr=False)
class AdamWConfig(AdamConfig):
    """AdamW: Adam with decoupled weight decay, ``torch.optim.AdamW``'s rule and defaults.

    ``decoupled_weight_decay`` is always ``True`` (it is what makes AdamW AdamW); coupled L2 decay
    is ``AdamConfig(decoupled_weight_decay=False)``.
    """

    weight_decay: float = 1e-2
    decoupled_weight_decay: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.decoupled_weight_decay:
            raise ValueError("decoupled_weight_decay=False is not AdamW: AdamW always decouples its weight decay "
                             "(as torch.optim.AdamW does); for coupled L2 decay use Adam / AdamConfig("
                             "decoupled_weight_decay=False)")


@dataclass(frozen=True)
class ScalarAdamConfig(Hyperparameters):
    """Scalar-Adam (ftip-00B9): Adam's first moment per parameter, one shared second-moment scalar.

    The scalar is an exponential average of the pooled mean of squared gradient entries over the
    whole declared block (every parameter passed to one call, or one param group).
    """

    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        _betas(self.betas)
        _positive("eps", self.eps, " (it keeps the denominator sqrt(v) + eps away from zero)")


@dataclass(frozen=True, repr=False)
class RMSpropConfig(Hyperparameters):
    """RMSProp, ``torch.optim.RMSprop``'s rule: ``v <- alpha v + (1 - alpha) g^2``, step ``g / (sqrt(v) + eps)``.

    ``maximize`` negates the gradient before everything else, as ``torch.optim.RMSprop`` does.
    """

    lr: float = 1e-2
    alpha: float = 0.99
    eps: float = 1e-8
    weight_decay: float = 0.0
    momentum: float = 0.0
    centered: bool = False
    maximize: bool = _torch_flag()

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        _unit_interval("alpha", self.alpha)
        _positive("eps", self.eps, " (it keeps the denominator sqrt(v) + eps away from zero)")
        _nonneg("weight_decay", self.weight_decay)
        _unit_interval("momentum", self.momentum)
        _flag("centered", self.centered)
        _flag("maximize", self.maximize)


@dataclass(frozen=True)
class SignSGDConfig(Hyperparameters):
    """signSGD: ``theta <- theta - lr * sign(g)``, with ``sign(0) = 0`` (ftip-00BG)."""

    lr: float = 1e-3

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)


@dataclass(frozen=True)
class LionConfig(Hyperparameters):
    """Lion: step ``sign(beta1 m + (1 - beta1) g)``, then ``m <- beta2 m + (1 - beta2) g``; decoupled decay."""

    lr: float = 1e-4
    betas: tuple[float, float] = (0.9, 0.99)
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        _betas(self.betas)
        _nonneg("weight_decay", self.weight_decay)


@dataclass(frozen=True, repr=False)
class AdafactorConfig(Hyperparameters):
    """Adafactor as ``torch.optim.Adafactor`` implements it (no first moment).

    Matrices keep row and column means of squared gradients, ``beta2_t = 1 - t^beta2_decay``;
    the step size is ``max(eps[1], RMS(theta)) * min(lr, 1/sqrt(t))`` and the update is divided
    by ``max(1, RMS(update) / d)``. ``eps[0]`` floors the variance estimate (``None``: the
    dtype's machine epsilon). ``maximize`` negates the gradient first, as ``torch.optim.Adafactor`` does.
    """

    lr: float = 1e-2
    beta2_decay: float = -0.8
    eps: tuple[float | None, float] = (None, 1e-3)
    d: float = 1.0
    weight_decay: float = 0.0
    maximize: bool = _torch_flag()

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        if _real("beta2_decay", self.beta2_decay) > 0:
            raise ValueError(f"beta2_decay must be <= 0, got {self.beta2_decay!r}")
        if not isinstance(self.eps, tuple) or len(self.eps) != 2:
            raise TypeError(f"eps must be a tuple (eps1 or None, eps2), got {self.eps!r}")
        if self.eps[0] is not None:
            _positive("eps[0]", self.eps[0])
        _nonneg("eps[1]", self.eps[1])
        if _real("d", self.d) < 1:
            raise ValueError(f"d (the update clipping threshold) must be >= 1, got {self.d!r}")
        _nonneg("weight_decay", self.weight_decay)
        _flag("maximize", self.maximize)


def _ns_coefficients(value: object) -> None:
    if not isinstance(value, tuple) or len(value) != 3:
        raise TypeError(f"ns_coefficients must be a tuple of three numbers (a, b, c), got {value!r}")
    for i, c in enumerate(value):
        _real(f"ns_coefficients[{i}]", c)


def _ns_steps(value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 100:
        raise ValueError(f"ns_steps must be an int in [1, 99], got {value!r}")


@dataclass(frozen=True)
class MuonConfig(Hyperparameters):
    """Muon (ftip-00BA): momentum, then an orthogonalised step ``msign(M)`` on each matrix.

    Defaults are ``torch.optim.Muon``'s: the buffer is an exponential average
    (``momentum_form="ema"``, ``M <- momentum M + (1 - momentum) G``); ``"sum"`` is the note's
    ``M <- momentum M + G``. The two buffers differ by the factor ``1 - momentum`` and ``msign``
    ignores positive scale, so the directions agree up to the ``eps`` floor. ``orthogonalizer``
    is ``"newton_schulz"`` (``ns_steps`` iterations of the odd polynomial with
    ``ns_coefficients``, after dividing by ``max(||M||_F, eps)``) or ``"svd"`` (exact ``msign``).
    ``ns_dtype=None`` runs the iteration in the parameter's dtype; ``torch.optim.Muon`` always
    uses ``"bfloat16"``. ``adjust_lr_fn`` scales the step by ``sqrt(max(1, rows/cols))``
    (``None`` or ``"original"``) or ``0.2 sqrt(max(rows, cols))`` (``"match_rms_adamw"``).
    Weight decay is decoupled: ``theta <- (1 - lr weight_decay) theta``.
    """

    lr: float = 1e-3
    weight_decay: float = 0.1
    momentum: float = 0.95
    nesterov: bool = True
    ns_coefficients: tuple[float, float, float] = MUON_NS_COEFFICIENTS
    eps: float = 1e-7
    ns_steps: int = 5
    adjust_lr_fn: str | None = None
    momentum_form: str = "ema"
    orthogonalizer: str = "newton_schulz"
    ns_dtype: str | None = None

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        _nonneg("weight_decay", self.weight_decay)
        _unit_interval("momentum", self.momentum)
        _flag("nesterov", self.nesterov)
        _ns_coefficients(self.ns_coefficients)
        _positive("eps", self.eps, " (it keeps the Newton–Schulz normalisation away from 0/0)")
        _ns_steps(self.ns_steps)
        _choice("adjust_lr_fn", self.adjust_lr_fn, (None, "original", "match_rms_adamw"))
        _choice("momentum_form", self.momentum_form, ("ema", "sum"))
        _choice("orthogonalizer", self.orthogonalizer, ("newton_schulz", "svd"))
        _choice("ns_dtype", self.ns_dtype, NS_DTYPES)


@dataclass(frozen=True)
class ShampooConfig(Hyperparameters):
    """Full-matrix Shampoo (ftip-00BA) for a matrix ``G`` (``n x k``).

    ``L <- beta2 L + G G^T`` and ``R <- beta2 R + G^T G`` (``beta2 = 1``: plain sums), then
    ``theta <- theta - lr (L + damping I)^{-1/4} G (R + damping I)^{-1/4}``. ``damping`` must be
    positive: it makes both matrices positive definite, so the inverse roots exist.
    """

    lr: float = 1e-3
    beta2: float = 1.0
    damping: float = 1e-6

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        b = _real("beta2", self.beta2)
        if not 0.0 < b <= 1.0:
            raise ValueError(f"beta2 must lie in (0, 1] (1 means plain sums), got {self.beta2!r}")
        _positive("damping", self.damping, " (the inverse fourth roots need (L + damping I) > 0)")


@dataclass(frozen=True)
class ScaledGDConfig(Hyperparameters):
    """ScaledGD for one factor pair ``(U, V)`` (ftip-00BR), after Tong, Ma and Chi.

    ``U <- U - lr grad_U (V^T V + damping I)^{-1}`` and ``V <- V - lr grad_V (U^T U + damping I)^{-1}``,
    both from the old pair. ``damping = 0`` is plain ScaledGD and needs full-column-rank factors.
    """

    lr: float = 1e-2
    damping: float = 0.0

    def __post_init__(self) -> None:
        _nonneg("lr", self.lr)
        _nonneg("damping", self.damping)


__all__ = [
    "Hyperparameters", "SGDConfig", "MomentumConfig", "NesterovConfig", "AdamConfig", "AdamWConfig",
    "ScalarAdamConfig", "RMSpropConfig",
    "SignSGDConfig", "LionConfig", "AdafactorConfig", "MuonConfig", "ShampooConfig", "ScaledGDConfig",
    "MUON_NS_COEFFICIENTS", "CUBIC_NS_COEFFICIENTS", "NS_DTYPES",
]
