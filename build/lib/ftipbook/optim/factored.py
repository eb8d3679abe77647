"""Factored objectives ``L(U, V) = f(U V^T)`` (ftip-00AW) and runs of optimizers on them.

A :class:`FactoredProblem` holds ``f`` and the shapes; its gradients use the chain rule of
Lemma ftip-00B1, ``grad_U L = G V`` and ``grad_V L = G^T U`` with ``G = grad f(W)`` (autograd
on ``f`` alone). :func:`quadratic_problem` and :func:`matrix_sensing_problem` build the two
families the chapters use (seeded); :func:`run_factored` runs any registered update rule, or
any ``torch.optim`` optimizer, and records the trajectory.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from ftipbook.optim.functional import OptimizerSpec, OptimizerState, get
from ftipbook.optim.hyperparams import Hyperparameters

Tensor = torch.Tensor
#: A minibatch sampler, which maps a generator to the objective of one freshly drawn minibatch.
Sampler = Callable[[torch.Generator], Callable[[Tensor], Tensor]]


@dataclass(frozen=True)
class FactoredProblem:
    """A factored objective ``L(U, V) = f(W(U, V))`` with ``W = U V^T`` (ftip-00AW).

    ``f`` maps a ``d1 x d2`` matrix to a scalar tensor. ``target`` is a known minimiser (e.g.
    the planted matrix of a sensing problem), used by :meth:`recovery_error`. ``sampler``, when
    given, draws minibatch objectives for stochastic runs (the full ``f`` stays the objective).
    """

    f: Callable[[Tensor], Tensor]
    d1: int
    d2: int
    k: int
    name: str = "f"
    target: Tensor | None = None
    sampler: Sampler | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for n in ("d1", "d2", "k"):
            v = getattr(self, n)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{n} must be an int >= 1, got {v!r}")
        if self.target is not None and tuple(self.target.shape) != (self.d1, self.d2):
            raise ValueError(f"target must have shape ({self.d1}, {self.d2}), got {tuple(self.target.shape)}")

    def check_factors(self, u: Tensor, v: Tensor) -> None:
        """Raise unless ``u`` is ``d1 x k`` and ``v`` is ``d2 x k`` with one floating dtype."""
        if not isinstance(u, Tensor) or not isinstance(v, Tensor):
            raise TypeError("U and V must be torch.Tensors")
        if tuple(u.shape) != (self.d1, self.k) or tuple(v.shape) != (self.d2, self.k):
            raise ValueError(f"{self.name}: U must be ({self.d1}, {self.k}) and V ({self.d2}, {self.k}); "
                             f"got {tuple(u.shape)} and {tuple(v.shape)}")
        if not u.is_floating_point() or u.dtype != v.dtype:
            raise TypeError(f"U and V need one floating dtype, got {u.dtype} and {v.dtype}")

    def represented(self, u: Tensor, v: Tensor) -> Tensor:
        """The represented matrix ``W = U V^T``."""
        self.check_factors(u, v)
        return u @ v.T

    def loss(self, u: Tensor, v: Tensor) -> Tensor:
        """``L(U, V) = f(U V^T)``."""
        return self.f(self.represented(u, v))

    def grad_f(self, w: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """``G = grad f(W)`` by autograd (of a sampled minibatch objective when ``generator`` is given)."""
        objective = self.f if generator is None or self.sampler is None else self.sampler(generator)
        with torch.enable_grad():
            w = w.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(objective(w), w)
        return g

    def grads(self, u: Tensor, v: Tensor, generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        """``(grad_U L, grad_V L) = (G V, G^T U)`` with ``G = grad f(U V^T)`` (ftip-00B1)."""
        g = self.grad_f(self.represented(u, v), generator)
        return g @ v, g.T @ u

    def init(self, scale: float = 1.0, seed: int = 0, dtype: torch.dtype = torch.float64,
             device: torch.device | str | None = None) -> tuple[Tensor, Tensor]:
        """Seeded Gaussian factors with entries ``N(0, scale^2 / k)``."""
        gen = torch.Generator().manual_seed(seed)
        u = torch.randn(self.d1, self.k, generator=gen, dtype=dtype) * (scale / math.sqrt(self.k))
        v = torch.randn(self.d2, self.k, generator=gen, dtype=dtype) * (scale / math.sqrt(self.k))
        return u.to(device), v.to(device)

    def recovery_error(self, w: Tensor) -> float:
        """``||W - target||_F / ||target||_F`` (needs a ``target``)."""
        if self.target is None:
            raise ValueError(f"{self.name} has no target to measure recovery against")
        t = self.target.to(w)
        return float(torch.linalg.matrix_norm(w - t) / torch.linalg.matrix_norm(t))


def quadratic_problem(target: Tensor, k: int, name: str = "quadratic") -> FactoredProblem:
    """``f(W) = ||W - target||_F^2 / 2``; ``target = 0`` of shape ``1 x 1`` gives ftip-00BF's ``w^2/2``."""
    if not isinstance(target, Tensor) or target.ndim != 2 or not target.is_floating_point():
        raise TypeError(f"target must be a floating 2-D tensor, got {target!r}")
    t = target.detach().clone()

    def f(w: Tensor) -> Tensor:
        return 0.5 * (w - t.to(w)).square().sum()

    return FactoredProblem(f, t.shape[0], t.shape[1], k, name=name, target=t if t.any() else None)


def matrix_sensing_problem(
    d1: int,
    d2: int,
    rank: int,
    k: int,
    m: int,
    *,
    seed: int = 0,
    noise: float = 0.0,
    batch_size: int | None = None,
    dtype: torch.dtype = torch.float64,
) -> FactoredProblem:
    """Planted low-rank matrix sensing (ftip-00BR): ``f(W) = (1/2m) sum_i (<A_i, W> - y_i)^2``.

    ``A_i`` has i.i.d. ``N(0, 1)`` entries, the planted ``W* = X Y^T`` has ``X`` with i.i.d.
    ``N(0, 1/rank)`` and ``Y`` with i.i.d. ``N(0, 1)`` entries (so each entry of ``W*`` has
    variance 1 and ``E ||W*||_F^2 = d1 d2``), and ``y_i = <A_i, W*> + noise * N(0, 1)``.
    ``batch_size`` adds a sampler that draws that many measurements without replacement per step.
    """
    for n, v in (("d1", d1), ("d2", d2), ("rank", rank), ("k", k), ("m", m)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{n} must be an int >= 1, got {v!r}")
    if rank > min(d1, d2):
        raise ValueError(f"rank={rank} exceeds min(d1, d2)={min(d1, d2)}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise!r}")
    if batch_size is not None and not 1 <= batch_size <= m:
        raise ValueError(f"batch_size must be in [1, m={m}] or None, got {batch_size!r}")
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(d1, rank, generator=gen, dtype=dtype) / math.sqrt(rank)
    y = torch.randn(d2, rank, generator=gen, dtype=dtype)
    planted = x @ y.T
    a = torch.randn(m, d1, d2, generator=gen, dtype=dtype)
    obs = torch.einsum("mij,ij->m", a, planted) + noise * torch.randn(m, generator=gen, dtype=dtype)

    def objective(rows: Tensor | None) -> Callable[[Tensor], Tensor]:
        a_b, y_b = (a, obs) if rows is None else (a[rows], obs[rows])

        def f(w: Tensor) -> Tensor:
            return 0.5 * (torch.einsum("mij,ij->m", a_b.to(w), w) - y_b.to(w)).square().mean()

        return f

    sampler = None
    if batch_size is not None:
        def sampler(g: torch.Generator) -> Callable[[Tensor], Tensor]:
            return objective(torch.randperm(m, generator=g)[:batch_size])

    return FactoredProblem(objective(None), d1, d2, k, name=f"sensing(d={d1}x{d2}, r={rank}, k={k}, m={m})",
                           target=planted, sampler=sampler)


@dataclass(frozen=True)
class Trajectory:
    """A run's factors, optimizer states and losses at steps ``0, 1, ..., T``.

    ``algorithm`` names the registered rule that produced the states (``None`` with the states
    when a foreign ``torch.optim`` optimizer ran).
    """

    factors: list[tuple[Tensor, Tensor]]
    states: list[OptimizerState | None]
    losses: list[float]
    algorithm: str | None = None

    def represented(self) -> list[Tensor]:
        """``W_t = U_t V_t^T`` for every recorded step."""
        return [u @ v.T for u, v in self.factors]


#: A factory for a ``torch.optim`` optimizer over ``[U, V]`` (``lambda ps: torch.optim.Adam(ps, lr=0.1)``).
TorchFactory = Callable[[list[Tensor]], torch.optim.Optimizer]


def run_factored(
    problem: FactoredProblem,
    optimizer: str | OptimizerSpec | TorchFactory,
    u0: Tensor,
    v0: Tensor,
    steps: int,
    *,
    config: Hyperparameters | None = None,
    schedule: Callable[[int], float] | None = None,
    seed: int = 0,
) -> Trajectory:
    """Run ``steps`` updates from ``(u0, v0)`` and record factors, states and full-objective losses.

    ``optimizer`` is a registered rule (name or spec, with ``config``) run through its pure map,
    or a factory of a ``torch.optim`` optimizer over ``[U, V]`` (states are then recorded for
    ftipbook's own optimizers, ``None`` for others). ``schedule(t)`` multiplies the learning rate
    at step ``t``. Stochastic problems draw minibatches from one generator seeded with ``seed``,
    so two runs with the same seed see the same minibatches (the coupling of ftip-00BU).
    """
    problem.check_factors(u0, v0)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an int >= 0, got {steps!r}")
    gen = torch.Generator().manual_seed(seed) if problem.sampler is not None else None
    factors = [(u0.detach().clone(), v0.detach().clone())]
    losses = [float(problem.loss(*factors[0]))]
    if isinstance(optimizer, (str, OptimizerSpec)):
        spec = get(optimizer)
        config = spec.config() if config is None else config
        state: OptimizerState | None = None
        states: list[OptimizerState | None] = [OptimizerState()]
        for t in range(steps):
            step_cfg = config if schedule is None else dataclasses.replace(config, lr=config.lr * schedule(t))
            params, state = spec(list(factors[-1]), state, problem.grads(*factors[-1], gen), step_cfg)
            factors.append((params[0], params[1]))
            states.append(state)
            losses.append(float(problem.loss(*factors[-1])))
        return Trajectory(factors, states, losses, spec.name)
    if config is not None:
        raise TypeError("config applies to registered rules; a torch optimizer factory carries its own")
    params = [u0.detach().clone().requires_grad_(True), v0.detach().clone().requires_grad_(True)]
    opt = optimizer(params)
    base_lrs = [g["lr"] for g in opt.param_groups]
    snapshot = getattr(opt, "functional_state", None)
    algorithms = {g.get("algorithm") for g in opt.param_groups}
    if snapshot is None or len(algorithms) != 1:
        snapshot = None
    states = [snapshot(params) if snapshot else None]
    for t in range(steps):
        if schedule is not None:
            for g, lr in zip(opt.param_groups, base_lrs):
                g["lr"] = lr * schedule(t)
        gu, gv = problem.grads(params[0].detach(), params[1].detach(), gen)
        params[0].grad, params[1].grad = gu, gv
        opt.step()
        factors.append((params[0].detach().clone(), params[1].detach().clone()))
        states.append(snapshot(params).clone() if snapshot else None)
        losses.append(float(problem.loss(*factors[-1])))
    return Trajectory(factors, states, losses, algorithms.pop() if snapshot else None)


__all__ = ["FactoredProblem", "quadratic_problem", "matrix_sensing_problem", "Trajectory", "run_factored",
           "Sampler", "TorchFactory"]
