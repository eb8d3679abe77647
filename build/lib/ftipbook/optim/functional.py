"""Pure update maps ``(params, state, grads, hyperparameters) -> (params, state)`` (ftip-001I).

Each rule is written once, as an in-place kernel over lists of tensors (``<name>_``) that the
``torch.optim`` classes of :mod:`ftipbook.optim.torch_optim` call directly. The public maps
(``sgd``, ``adam``, ...) clone their inputs and run the same kernel, so a chapter can reason
about ``(theta_{k+1}, s_{k+1}) = U(theta_k, s_k, g_k, eta)`` without side effects, and the
optimizer a training loop uses is, by construction, the map the chapter checked.

State (Definition ftip-001H) is an :class:`OptimizerState`: one dict of buffers per parameter
plus one dict for the whole block (scalar-Adam's shared second moment). ``None`` is the
declared initial state ``s_0``: every buffer zero (created lazily), step 0. The registry
:data:`OPTIMIZERS` records, per rule, how each buffer transforms under a right orthogonal
change of factor basis (the state action of ftip-00B2), or that none exists.

Kernels mirror ``torch.optim``'s single-tensor code path operation by operation where PyTorch
ships the rule, so trajectories agree to the last bit on the CPU (tests/optim/test_parity.py).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ftipbook.optim.hyperparams import (
    AdafactorConfig,
    AdamConfig,
    AdamWConfig,
    Hyperparameters,
    LionConfig,
    MomentumConfig,
    MuonConfig,
    NesterovConfig,
    RMSpropConfig,
    ScaledGDConfig,
    ScalarAdamConfig,
    SGDConfig,
    ShampooConfig,
    SignSGDConfig,
)
from ftipbook.optim.msign import msign_svd, newton_schulz, psd_power

Tensor = torch.Tensor
#: The state-action kinds, i.e. how a buffer transforms when every factor gradient ``G`` becomes
#: ``G Q``. ``"right"`` sends ``B`` to ``B Q``, ``"conjugate"`` sends ``R`` to ``Q^T R Q``, and
#: ``"invariant"`` leaves the buffer unchanged.
ACTION_KINDS = ("right", "conjugate", "invariant")


@dataclass(frozen=True)
class OptimizerState:
    """Persistent optimizer variables (ftip-001H): per-parameter buffers and block-level ones.

    ``per_param[i]`` holds parameter ``i``'s buffers (and its ``"step"`` count); ``block``
    holds variables shared by the whole block. An empty state is the declared ``s_0``.
    """

    per_param: tuple[dict[str, Any], ...] = ()
    block: dict[str, Any] = field(default_factory=dict)

    def clone(self) -> OptimizerState:
        """A deep copy (tensors cloned), so a pure update never aliases its input state."""
        return OptimizerState(tuple(_clone_dict(s) for s in self.per_param), _clone_dict(self.block))


def _clone_dict(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.clone() if isinstance(v, Tensor) else _clone_dict(v) if isinstance(v, Mapping) else v)
            for k, v in d.items()}


def _next_step(states: Sequence[dict[str, Any]]) -> list[int]:
    for s in states:
        s["step"] = s.get("step", 0) + 1
    return [s["step"] for s in states]


# ----------------------------------------------------------------------------------------------
# In-place kernels: (params, grads, per-parameter states, block state, config) -> None
# ----------------------------------------------------------------------------------------------
#: On the CPU, entrywise kernels run over chunks of at most this many elements, so each chunk's
#: parameters, gradients and buffers stay in cache across the kernel's several passes (measured
#: ~0.75x torch.optim.AdamW's time, against ~1.25x for one sweep over all tensors per operation).
CPU_CHUNK_ELEMENTS = 1 << 18


def _chunks(params: Sequence[Tensor]) -> list[list[int]]:
    if not params or params[0].device.type != "cpu":
        return [list(range(len(params)))]  # accelerators: one multi-tensor launch per operation
    groups: list[list[int]] = [[]]
    total = 0
    for i, p in enumerate(params):
        if groups[-1] and total + p.numel() > CPU_CHUNK_ELEMENTS:
            groups.append([])
            total = 0
        groups[-1].append(i)
        total += p.numel()
    return groups


def _entrywise(kernel):
    """Run an entrywise kernel (each parameter independent of the others) chunk by chunk."""

    @functools.wraps(kernel)
    def run(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: Any) -> None:
        for idx in _chunks(params):
            kernel([params[i] for i in idx], [grads[i] for i in idx], [states[i] for i in idx], block, cfg)

    return run


def _ascent(grads: list[Tensor], cfg: Any) -> list[Tensor]:
    """The gradients, negated when ``cfg.maximize`` (``torch.optim``'s first operation; exact)."""
    return torch._foreach_neg(grads) if cfg.maximize else grads


@_entrywise
def sgd_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: SGDConfig) -> None:
    """In place: gradient descent with Polyak/Nesterov momentum and coupled L2 decay (``torch.optim.SGD``)."""
    _next_step(states)
    grads = _ascent(grads, cfg)
    if cfg.weight_decay != 0:
        grads = torch._foreach_add(grads, params, alpha=cfg.weight_decay)
    if cfg.momentum != 0:
        fresh = [i for i, s in enumerate(states) if "momentum_buffer" not in s]
        old = [i for i, s in enumerate(states) if "momentum_buffer" in s]
        for i in fresh:
            states[i]["momentum_buffer"] = grads[i].detach().clone()
        if old:
            bufs = [states[i]["momentum_buffer"] for i in old]
            torch._foreach_mul_(bufs, cfg.momentum)
            torch._foreach_add_(bufs, [grads[i] for i in old], alpha=1 - cfg.dampening)
        bufs = [s["momentum_buffer"] for s in states]
        grads = torch._foreach_add(grads, bufs, alpha=cfg.momentum) if cfg.nesterov else bufs
    torch._foreach_add_(params, grads, alpha=-cfg.lr)


@_entrywise
def adam_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: AdamConfig) -> None:
    """In place: bias-corrected Adam / AdamW, optionally AMSGrad (``torch.optim.Adam`` and ``AdamW``, single-tensor
    order)."""
    steps = _next_step(states)
    beta1, beta2 = cfg.betas
    grads = _ascent(grads, cfg)
    if cfg.weight_decay != 0:
        if cfg.decoupled_weight_decay:
            torch._foreach_mul_(params, 1 - cfg.lr * cfg.weight_decay)
        else:
            grads = torch._foreach_add(grads, params, alpha=cfg.weight_decay)
    for s, p in zip(states, params):
        if "exp_avg" not in s:
            s["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            s["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        if cfg.amsgrad and "max_exp_avg_sq" not in s:
            s["max_exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
    exp_avgs = [s["exp_avg"] for s in states]
    exp_avg_sqs = [s["exp_avg_sq"] for s in states]
    torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
    torch._foreach_mul_(exp_avg_sqs, beta2)
    torch._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
    step_sizes = [-(cfg.lr / (1 - beta1**t)) for t in steps]
    seconds = exp_avg_sqs
    if cfg.amsgrad:
        seconds = [s["max_exp_avg_sq"] for s in states]
        torch._foreach_maximum_(seconds, exp_avg_sqs)
    denom = torch._foreach_sqrt(seconds)
    torch._foreach_div_(denom, [(1 - beta2**t) ** 0.5 for t in steps])
    torch._foreach_add_(denom, cfg.eps)
    torch._foreach_addcdiv_(params, exp_avgs, denom, step_sizes)


def scalar_adam_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict,
                 cfg: ScalarAdamConfig) -> None:
    """In place: scalar-Adam (ftip-00B9): per-parameter first moments, one pooled second-moment scalar."""
    _next_step(states)
    block["step"] = block.get("step", 0) + 1
    t = block["step"]
    beta1, beta2 = cfg.betas
    for s, p in zip(states, params):
        if "exp_avg" not in s:
            s["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
    exp_avgs = [s["exp_avg"] for s in states]
    torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
    squares = torch.stack([torch.linalg.vector_norm(g).square() for g in grads]).sum()
    pooled = squares / sum(g.numel() for g in grads)
    if "exp_avg_sq" not in block:
        block["exp_avg_sq"] = torch.zeros((), dtype=params[0].dtype, device=params[0].device)
    v = block["exp_avg_sq"]
    v.mul_(beta2).add_(pooled, alpha=1 - beta2)
    denom = v.sqrt() / (1 - beta2**t) ** 0.5 + cfg.eps
    torch._foreach_add_(params, torch._foreach_div(exp_avgs, denom), alpha=-cfg.lr / (1 - beta1**t))


@_entrywise
def rmsprop_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: RMSpropConfig) -> None:
    """In place: RMSProp, optionally centred and with momentum (``torch.optim.RMSprop``)."""
    _next_step(states)
    grads = _ascent(grads, cfg)
    if cfg.weight_decay != 0:
        grads = torch._foreach_add(grads, params, alpha=cfg.weight_decay)
    needed = ["square_avg"] + ["momentum_buffer"] * (cfg.momentum > 0) + ["grad_avg"] * cfg.centered
    for s, p in zip(states, params):
        for name in needed:
            if name not in s:
                s[name] = torch.zeros_like(p, memory_format=torch.preserve_format)
    square_avgs = [s["square_avg"] for s in states]
    torch._foreach_mul_(square_avgs, cfg.alpha)
    torch._foreach_addcmul_(square_avgs, grads, grads, 1 - cfg.alpha)
    if cfg.centered:
        grad_avgs = [s["grad_avg"] for s in states]
        torch._foreach_lerp_(grad_avgs, grads, 1 - cfg.alpha)
        avg = torch._foreach_addcmul(square_avgs, grad_avgs, grad_avgs, -1)
        torch._foreach_sqrt_(avg)
    else:
        avg = torch._foreach_sqrt(square_avgs)
    torch._foreach_add_(avg, cfg.eps)
    if cfg.momentum > 0:
        bufs = [s["momentum_buffer"] for s in states]
        torch._foreach_mul_(bufs, cfg.momentum)
        torch._foreach_addcdiv_(bufs, grads, avg)
        torch._foreach_add_(params, bufs, alpha=-cfg.lr)
    else:
        torch._foreach_addcdiv_(params, grads, avg, -cfg.lr)


@_entrywise
def signsgd_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: SignSGDConfig) -> None:
    """In place: ``theta <- theta - lr sign(g)`` (ftip-00BG; ``sign(0) = 0``)."""
    _next_step(states)
    torch._foreach_add_(params, torch._foreach_sign(grads), alpha=-cfg.lr)


@_entrywise
def lion_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: LionConfig) -> None:
    """In place: Lion (sign of an interpolated momentum; decoupled weight decay)."""
    _next_step(states)
    beta1, beta2 = cfg.betas
    for s, p in zip(states, params):
        if "exp_avg" not in s:
            s["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
    exp_avgs = [s["exp_avg"] for s in states]
    if cfg.weight_decay != 0:
        torch._foreach_mul_(params, 1 - cfg.lr * cfg.weight_decay)
    direction = torch._foreach_lerp(exp_avgs, grads, 1 - beta1)
    torch._foreach_sign_(direction)
    torch._foreach_add_(params, direction, alpha=-cfg.lr)
    torch._foreach_lerp_(exp_avgs, grads, 1 - beta2)


def adafactor_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict,
               cfg: AdafactorConfig) -> None:
    """In place: Adafactor exactly as ``torch.optim.Adafactor``'s single-tensor path computes it.

    Matrices (and stacks of matrices) keep factored row/column statistics over the last two
    dimensions; vectors keep a full second moment.
    """
    steps = _next_step(states)
    grads = _ascent(grads, cfg)
    eps1, eps2 = cfg.eps
    for p, g, s, t in zip(params, grads, states, steps):
        if eps1 is None:
            eps1 = torch.finfo(p.dtype).eps
        if "row_var" not in s and "variance" not in s:
            if g.dim() > 1:
                s["row_var"] = g.new_zeros(g.shape[:-1] + (1,))
                s["col_var"] = g.new_zeros(g.shape[:-2] + (1, g.shape[-1]))
            else:
                s["variance"] = torch.zeros_like(g, memory_format=torch.preserve_format)
        one_minus_beta2 = t**cfg.beta2_decay
        rho = min(cfg.lr, 1 / (t**0.5))
        alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
        if cfg.weight_decay != 0:
            p.mul_(1 - cfg.lr * cfg.weight_decay)
        if g.dim() > 1:
            row_var, col_var = s["row_var"], s["col_var"]
            row_var.lerp_(torch.norm(g, dim=-1, keepdim=True).square_().div_(g.size(-1)), one_minus_beta2)
            col_var.lerp_(torch.norm(g, dim=-2, keepdim=True).square_().div_(g.size(-2)), one_minus_beta2)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            s["variance"].lerp_(g * g, one_minus_beta2)
            var_estimate = s["variance"].clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(g)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * cfg.d))
        p.add_(update, alpha=-alpha / denom)


NOT_A_MATRIX = (
    "{rule} updates 2-D matrices only, but parameter {index} has shape {shape}; route vectors, "
    "embeddings and other non-matrix parameters to AdamW, e.g. with "
    "ftipbook.optim.muon_adamw_param_groups(model)"
)


def muon_direction(update: Tensor, cfg: MuonConfig) -> Tensor:
    """Muon's orthogonalised direction for one matrix: Newton–Schulz or exact ``msign`` (ftip-00BA)."""
    if cfg.orthogonalizer == "svd":
        return msign_svd(update)
    return newton_schulz(update, cfg.ns_steps, cfg.ns_coefficients, cfg.eps, cfg.ns_dtype)


def muon_lr(cfg: MuonConfig, shape: Sequence[int]) -> float:
    """The learning rate after ``torch.optim.Muon``'s shape adjustment (``adjust_lr_fn``)."""
    rows, cols = shape[:2]
    if cfg.adjust_lr_fn == "match_rms_adamw":
        return cfg.lr * 0.2 * math.sqrt(max(rows, cols))
    return cfg.lr * math.sqrt(max(1, rows / cols))


def muon_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: MuonConfig) -> None:
    """In place: Muon on each matrix (``torch.optim.Muon``'s order of operations)."""
    for i, p in enumerate(params):
        if p.ndim != 2:
            raise ValueError(NOT_A_MATRIX.format(rule="Muon", index=i, shape=tuple(p.shape)))
    _next_step(states)
    for p, g, s in zip(params, grads, states):
        if "momentum_buffer" not in s:
            s["momentum_buffer"] = torch.zeros_like(g, memory_format=torch.preserve_format)
        buf = s["momentum_buffer"]
        if cfg.momentum_form == "ema":
            buf.lerp_(g, 1 - cfg.momentum)
            update = g.lerp(buf, cfg.momentum) if cfg.nesterov else buf
        else:
            buf.mul_(cfg.momentum).add_(g)
            update = g.add(buf, alpha=cfg.momentum) if cfg.nesterov else buf
        direction = muon_direction(update, cfg)
        p.mul_(1 - cfg.lr * cfg.weight_decay)
        p.add_(direction, alpha=-muon_lr(cfg, p.shape))


def shampoo_direction(g: Tensor, left: Tensor, right: Tensor, damping: float) -> Tensor:
    """``(L + damping I)^{-1/4} G (R + damping I)^{-1/4}``: Shampoo's preconditioned direction (ftip-00BA)."""
    return psd_power(left, -0.25, damping) @ g @ psd_power(right, -0.25, damping)


def shampoo_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: ShampooConfig) -> None:
    """In place: full-matrix Shampoo with left and right accumulators and damped inverse fourth roots."""
    for i, p in enumerate(params):
        if p.ndim != 2:
            raise ValueError(NOT_A_MATRIX.format(rule="Shampoo", index=i, shape=tuple(p.shape)))
    _next_step(states)
    for p, g, s in zip(params, grads, states):
        if "left" not in s:
            s["left"] = g.new_zeros(g.shape[0], g.shape[0])
            s["right"] = g.new_zeros(g.shape[1], g.shape[1])
        s["left"].mul_(cfg.beta2).add_(g @ g.T)
        s["right"].mul_(cfg.beta2).add_(g.T @ g)
        p.add_(shampoo_direction(g, s["left"], s["right"], cfg.damping), alpha=-cfg.lr)


def _right_solve(g: Tensor, factor: Tensor, damping: float, name: str) -> Tensor:
    gram = factor.T @ factor
    if damping:
        gram = gram + damping * torch.eye(gram.shape[0], dtype=gram.dtype, device=gram.device)
    solved, info = torch.linalg.solve_ex(gram, g.T)
    if int(info) != 0 or not bool(torch.isfinite(solved).all()):
        raise ValueError(f"ScaledGD: {name}^T {name} + damping I is singular ({name} is rank-deficient); "
                         "use damping > 0")
    return solved.T


def scaledgd_(params: list[Tensor], grads: list[Tensor], states: list[dict], block: dict, cfg: ScaledGDConfig) -> None:
    """In place: ScaledGD on one factor pair ``[U, V]``: ``U -= lr G_U (V^T V + damping I)^{-1}``, and symmetrically."""
    if len(params) != 2 or any(p.ndim != 2 for p in params) or params[0].shape[1] != params[1].shape[1]:
        raise ValueError(
            "ScaledGD updates one factor pair [U, V] with U of shape (d1, k) and V of shape (d2, k); got shapes "
            + str([tuple(p.shape) for p in params])
        )
    _next_step(states)
    u, v = params
    step_u = _right_solve(grads[0], v, cfg.damping, "V")
    step_v = _right_solve(grads[1], u, cfg.damping, "U")
    u.add_(step_u, alpha=-cfg.lr)
    v.add_(step_v, alpha=-cfg.lr)


# ----------------------------------------------------------------------------------------------
# The registry and the pure maps
# ----------------------------------------------------------------------------------------------
Kernel = Callable[[list[Tensor], list[Tensor], list[dict], dict, Any], None]


@dataclass(frozen=True)
class OptimizerSpec:
    """One update rule: its kernel, hyperparameter class, state actions and gauge status.

    ``actions`` maps each per-parameter buffer (and ``block_actions`` each block variable) to
    its state-action kind (:data:`ACTION_KINDS`) or to ``None`` when no action compatible with
    every orthogonal ``Q`` exists (ftip-00B2). ``equivariant`` records what the note claims
    (ftip-00B8, 00B9, 00BA, 00BC); the test suite checks it numerically.
    """

    name: str
    kernel: Kernel
    config: type
    actions: Mapping[str, str | None]
    block_actions: Mapping[str, str | None] = field(default_factory=dict)
    equivariant: bool = False
    matrices_only: bool = False
    items: tuple[str, ...] = ()

    def __call__(self, params: Sequence[Tensor], state: OptimizerState | None, grads: Sequence[Tensor],
                 config: Hyperparameters | None = None) -> tuple[list[Tensor], OptimizerState]:
        """The pure map ``(params, state, grads, config) -> (new params, new state)``; inputs are untouched."""
        config = self.config() if config is None else config
        if not isinstance(config, self.config):
            raise TypeError(f"{self.name} needs a {self.config.__name__} config, got {type(config).__name__}")
        params, grads = _check_tensors(params, grads)
        state = OptimizerState() if state is None else state
        if not isinstance(state, OptimizerState):
            raise TypeError(f"state must be an OptimizerState or None, got {type(state).__name__}")
        if state.per_param and len(state.per_param) != len(params):
            raise ValueError(f"state holds {len(state.per_param)} parameters' buffers but {len(params)} were given")
        new = state.clone()
        per_param = list(new.per_param) or [{} for _ in params]
        out = [p.detach().clone() for p in params]
        with torch.no_grad():
            self.kernel(out, [g.detach() for g in grads], per_param, new.block, config)
        return out, OptimizerState(tuple(per_param), new.block)


def _check_tensors(params: Sequence[Tensor], grads: Sequence[Tensor]) -> tuple[list[Tensor], list[Tensor]]:
    params, grads = list(params), list(grads)
    if not params:
        raise ValueError("params must hold at least one tensor")
    if len(params) != len(grads):
        raise ValueError(f"got {len(params)} parameters but {len(grads)} gradients")
    for i, (p, g) in enumerate(zip(params, grads)):
        if not isinstance(p, Tensor) or not isinstance(g, Tensor):
            raise TypeError(f"params[{i}] and grads[{i}] must be torch.Tensors")
        if p.shape != g.shape:
            raise ValueError(f"params[{i}] has shape {tuple(p.shape)} but grads[{i}] has shape {tuple(g.shape)}")
        if not p.is_floating_point() or p.dtype != g.dtype:
            raise TypeError(f"params[{i}] and grads[{i}] need one floating dtype, got {p.dtype} and {g.dtype}")
        if not bool(torch.isfinite(g).all()):
            raise ValueError(f"grads[{i}] has non-finite entries")
    return params, grads


#: The registry of update rules by name, each an :class:`OptimizerSpec` (callable as its pure map).
#:
#: :meta hide-value:
OPTIMIZERS: dict[str, OptimizerSpec] = {
    spec.name: spec
    for spec in (
        OptimizerSpec("sgd", sgd_, SGDConfig, {"step": "invariant", "momentum_buffer": "right"},
                      equivariant=True, items=("ftip-00B8",)),
        OptimizerSpec("momentum", sgd_, MomentumConfig, {"step": "invariant", "momentum_buffer": "right"},
                      equivariant=True, items=("ftip-00B8",)),
        OptimizerSpec("nesterov", sgd_, NesterovConfig, {"step": "invariant", "momentum_buffer": "right"},
                      equivariant=True, items=("ftip-00B8",)),
        OptimizerSpec("adam", adam_, AdamConfig, {"step": "invariant", "exp_avg": "right", "exp_avg_sq": None},
                      items=("ftip-00BC", "ftip-00BD", "ftip-00BE")),
        OptimizerSpec("adamw", adam_, AdamWConfig, {"step": "invariant", "exp_avg": "right", "exp_avg_sq": None},
                      items=("ftip-00BC",)),
        OptimizerSpec("scalar_adam", scalar_adam_, ScalarAdamConfig, {"step": "invariant", "exp_avg": "right"},
                      {"step": "invariant", "exp_avg_sq": "invariant"}, equivariant=True, items=("ftip-00B9",)),
        OptimizerSpec("rmsprop", rmsprop_, RMSpropConfig,
                      {"step": "invariant", "square_avg": None, "momentum_buffer": None, "grad_avg": "right"},
                      items=("ftip-00BC",)),
        OptimizerSpec("signsgd", signsgd_, SignSGDConfig, {"step": "invariant"}, items=("ftip-00BC", "ftip-00BG")),
        OptimizerSpec("lion", lion_, LionConfig, {"step": "invariant", "exp_avg": "right"}, items=("ftip-00BC",)),
        OptimizerSpec("adafactor", adafactor_, AdafactorConfig,
                      {"step": "invariant", "row_var": "invariant", "col_var": None, "variance": None},
                      items=("ftip-00BC",)),
        OptimizerSpec("muon", muon_, MuonConfig, {"step": "invariant", "momentum_buffer": "right"},
                      equivariant=True, matrices_only=True, items=("ftip-00BA",)),
        OptimizerSpec("shampoo", shampoo_, ShampooConfig, {"step": "invariant", "left": "invariant",
                                                           "right": "conjugate"},
                      equivariant=True, matrices_only=True, items=("ftip-00BA",)),
        OptimizerSpec("scaledgd", scaledgd_, ScaledGDConfig, {"step": "invariant"},
                      equivariant=True, matrices_only=True, items=("ftip-00BR",)),
    )
}

def get(name: str | OptimizerSpec) -> OptimizerSpec:
    """The registered :class:`OptimizerSpec` called ``name`` (a spec passes through)."""
    if isinstance(name, OptimizerSpec):
        return name
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r}; registered: {', '.join(OPTIMIZERS)}")
    return OPTIMIZERS[name]


Params = Sequence[Tensor]
Update = tuple[list[Tensor], OptimizerState]


def sgd(params: Params, state: OptimizerState | None, grads: Params, config: SGDConfig | None = None) -> Update:
    """Gradient descent (ftip-00B8): ``theta - lr g``, momentum and decay as configured.

    The hyperparameters are a :class:`~ftipbook.optim.hyperparams.SGDConfig`.
    """
    return OPTIMIZERS["sgd"](params, state, grads, config)


def momentum(params: Params, state: OptimizerState | None, grads: Params,
             config: MomentumConfig | None = None) -> Update:
    """Polyak heavy-ball momentum (ftip-00B8): :func:`sgd` with momentum 0.9 by default.

    The hyperparameters are a :class:`~ftipbook.optim.hyperparams.MomentumConfig`.
    """
    return OPTIMIZERS["momentum"](params, state, grads, config)


def nesterov(params: Params, state: OptimizerState | None, grads: Params,
             config: NesterovConfig | None = None) -> Update:
    """Nesterov momentum (ftip-00B8): :func:`sgd` with momentum 0.9 and the look-ahead step.

    The hyperparameters are a :class:`~ftipbook.optim.hyperparams.NesterovConfig`.
    """
    return OPTIMIZERS["nesterov"](params, state, grads, config)


def adam(params: Params, state: OptimizerState | None, grads: Params, config: AdamConfig | None = None) -> Update:
    """Adam (ftip-00BD): bias-corrected entrywise moments; first step ``-lr g / (|g| + eps)``."""
    return OPTIMIZERS["adam"](params, state, grads, config)


def adamw(params: Params, state: OptimizerState | None, grads: Params, config: AdamWConfig | None = None) -> Update:
    """AdamW: Adam with decoupled weight decay."""
    return OPTIMIZERS["adamw"](params, state, grads, config)


def scalar_adam(params: Params, state: OptimizerState | None, grads: Params,
                config: ScalarAdamConfig | None = None) -> Update:
    """Scalar-Adam (ftip-00B9): one second-moment scalar pooled over every tensor in ``params``."""
    return OPTIMIZERS["scalar_adam"](params, state, grads, config)


def rmsprop(params: Params, state: OptimizerState | None, grads: Params,
            config: RMSpropConfig | None = None) -> Update:
    """RMSProp (ftip-00BC): entrywise ``g / (sqrt(v) + eps)``."""
    return OPTIMIZERS["rmsprop"](params, state, grads, config)


def signsgd(params: Params, state: OptimizerState | None, grads: Params,
            config: SignSGDConfig | None = None) -> Update:
    """signSGD (ftip-00BC, ftip-00BG): ``theta - lr sign(g)``."""
    return OPTIMIZERS["signsgd"](params, state, grads, config)


def lion(params: Params, state: OptimizerState | None, grads: Params, config: LionConfig | None = None) -> Update:
    """Lion (ftip-00BC): sign of an interpolated momentum."""
    return OPTIMIZERS["lion"](params, state, grads, config)


def adafactor(params: Params, state: OptimizerState | None, grads: Params,
              config: AdafactorConfig | None = None) -> Update:
    """Adafactor (ftip-00BC): factored row/column second moments, relative step size."""
    return OPTIMIZERS["adafactor"](params, state, grads, config)


def muon(params: Params, state: OptimizerState | None, grads: Params, config: MuonConfig | None = None) -> Update:
    """Muon (ftip-00BA): ``msign`` of a momentum buffer, per matrix."""
    return OPTIMIZERS["muon"](params, state, grads, config)


def shampoo(params: Params, state: OptimizerState | None, grads: Params,
            config: ShampooConfig | None = None) -> Update:
    """Full-matrix Shampoo (ftip-00BA): ``(L + dI)^{-1/4} G (R + dI)^{-1/4}``."""
    return OPTIMIZERS["shampoo"](params, state, grads, config)


def scaledgd(params: Params, state: OptimizerState | None, grads: Params,
             config: ScaledGDConfig | None = None) -> Update:
    """ScaledGD (ftip-00BR) on one factor pair ``[U, V]``."""
    return OPTIMIZERS["scaledgd"](params, state, grads, config)


__all__ = [
    "ACTION_KINDS", "OptimizerState", "OptimizerSpec", "OPTIMIZERS", "get", "NOT_A_MATRIX",
    "sgd", "momentum", "nesterov", "adam", "adamw", "scalar_adam", "rmsprop", "signsgd", "lion",
    "adafactor", "muon", "shampoo", "scaledgd",
    "sgd_", "adam_", "scalar_adam_", "rmsprop_", "signsgd_", "lion_", "adafactor_", "muon_", "shampoo_",
    "scaledgd_", "muon_direction", "muon_lr", "shampoo_direction", "CPU_CHUNK_ELEMENTS",
]
