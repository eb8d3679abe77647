"""Gradient flow, common-scalar preconditioned flow and the effective clock (ftip-00BL to 00BP).

``theta'(t) = -grad L(theta) / a(t, theta)`` is integrated by an adaptive Dormand–Prince 5(4)
Runge–Kutta method with declared relative and absolute tolerances, stepping exactly onto the
requested output times. The clock ``tau(t) = int_0^t du / a(u)`` (ftip-00BM) is integrated along
with the flow, so a state-dependent (e.g. gauge-invariant) ``a`` is allowed. Its inverse solves
``dt/dtau = a(t)``. :func:`reparameterization_gap` checks Theorem ftip-00BN on a given problem.
Everything runs in the dtype of the initial point (use float64).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ftipbook.optim.factored import FactoredProblem

Tensor = torch.Tensor
Theta = tuple[Tensor, ...]
#: ``a(t, theta) > 0``: the common scalar dividing every gradient coordinate (ftip-00BL).
Scalar = Callable[[float, Theta], float]
Gradient = Callable[[Theta], Theta]

# Dormand–Prince 5(4) tableau: nodes, stages, 5th-order weights and the 5th-minus-4th error weights.
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_E = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)


@dataclass(frozen=True)
class Tolerance:
    """Declared error tolerances of the integrator: per-step error ``<= atol + rtol |y|`` (RMS norm)."""

    rtol: float = 1e-10
    atol: float = 1e-12
    max_steps: int = 200_000

    def __post_init__(self) -> None:
        if not (self.rtol > 0 and self.atol > 0):
            raise ValueError(f"rtol and atol must be > 0, got {self.rtol!r}, {self.atol!r}")
        if not (isinstance(self.max_steps, int) and self.max_steps >= 1):
            raise ValueError(f"max_steps must be an int >= 1, got {self.max_steps!r}")


def integrate(rhs: Callable[[float, Tensor], Tensor], y0: Tensor, t_eval: Sequence[float], *,
              tol: Tolerance = Tolerance(), t0: float = 0.0, limit: float = math.inf) -> tuple[list[Tensor], int]:
    """Solve ``y' = rhs(t, y)`` for a flat tensor ``y`` from ``(t0, y0)``; return ``y`` at ``t_eval``, step count.

    Adaptive Dormand–Prince 5(4) with first-same-as-last stages; steps are shortened to land on
    every output time. A ``ValueError`` is raised if the solution leaves ``|y| <= limit``, stops
    being finite, or needs more than ``tol.max_steps`` steps.
    """
    times = [float(t) for t in t_eval]
    if any(b <= a for a, b in zip(times, times[1:])) or (times and times[0] < t0):
        raise ValueError(f"t_eval must be strictly increasing and >= t0={t0}, got {times}")
    t, y = t0, y0.clone()
    out: list[Tensor] = []
    k1 = rhs(t, y)
    h = max(times[-1] - t0, 1e-3) * 1e-3 if times else 0.0
    steps = 0
    for target in times:
        while t < target:
            if steps >= tol.max_steps:
                raise ValueError(f"integration needed more than {tol.max_steps} steps before t={target}")
            step = min(h, target - t)
            ks = [k1]
            for i in range(1, 7):
                yi = y + step * sum(a * k for a, k in zip(_A[i], ks))
                ks.append(rhs(t + _C[i] * step, yi))
            y_new = yi  # the seventh stage point is the 5th-order solution
            err = step * sum(e * k for e, k in zip(_E, ks))
            scale = tol.atol + tol.rtol * torch.maximum(y.abs(), y_new.abs())
            ratio = float(torch.sqrt(torch.mean((err / scale) ** 2)))
            if not math.isfinite(ratio):
                raise ValueError(f"the flow stopped being finite near t={t:.6g}")
            if ratio <= 1.0:
                t, y, k1 = (target if step == target - t else t + step), y_new, ks[-1]
                steps += 1
                if float(y.abs().max()) > limit:
                    raise ValueError(f"the solution left |y| <= {limit:g} at t={t:.6g}")
            h = step * min(5.0, max(0.2, 0.9 * (ratio if ratio > 0 else 1e-10) ** -0.2))
        out.append(y.clone())
    return out, steps


def _flat(theta: Theta) -> Tensor:
    return torch.cat([p.reshape(-1) for p in theta])


def _unflat(y: Tensor, like: Theta) -> Theta:
    parts, i = [], 0
    for p in like:
        parts.append(y[i:i + p.numel()].view_as(p))
        i += p.numel()
    return tuple(parts)


def _gradient(grad: Gradient | FactoredProblem) -> Gradient:
    if isinstance(grad, FactoredProblem):
        return lambda theta: grad.grads(*theta)
    if not callable(grad):
        raise TypeError(f"grad must be a FactoredProblem or a callable theta -> grads, got {type(grad).__name__}")
    return grad


@dataclass(frozen=True)
class FlowSolution:
    """A flow sampled at times ``t``: the points ``theta`` and the clock ``tau(t)`` (ftip-00BM)."""

    t: tuple[float, ...]
    theta: list[Theta]
    clock: tuple[float, ...]
    steps: int


def common_scalar_flow(grad: Gradient | FactoredProblem, theta0: Sequence[Tensor], a: Scalar,
                       t_eval: Sequence[float], *, tol: Tolerance = Tolerance()) -> FlowSolution:
    """Integrate ``theta' = -grad L(theta) / a(t, theta)`` and ``tau' = 1 / a(t, theta)`` (ftip-00BL, 00BM).

    ``grad`` is a :class:`~ftipbook.optim.factored.FactoredProblem` (``theta = (U, V)``) or a
    callable returning the gradient tuple. ``a`` must stay positive and finite along the path.
    """
    theta0 = tuple(torch.as_tensor(p) for p in theta0)
    g = _gradient(grad)

    def rhs(t: float, y: Tensor) -> Tensor:
        theta = _unflat(y[:-1], theta0)
        s = float(a(t, theta))
        if not (math.isfinite(s) and s > 0):
            raise ValueError(f"a(t, theta) must be positive and finite, got {s!r} at t={t:.6g}")
        dy = -_flat(g(theta)) / s
        return torch.cat([dy, dy.new_tensor([1.0 / s])])

    y0 = torch.cat([_flat(theta0), _flat(theta0).new_zeros(1)])
    ys, steps = integrate(rhs, y0, t_eval, tol=tol)
    return FlowSolution(tuple(float(t) for t in t_eval), [_unflat(y[:-1].clone(), theta0) for y in ys],
                        tuple(float(y[-1]) for y in ys), steps)


def gradient_flow(grad: Gradient | FactoredProblem, theta0: Sequence[Tensor], t_eval: Sequence[float], *,
                  tol: Tolerance = Tolerance()) -> FlowSolution:
    """Plain gradient flow ``theta' = -grad L(theta)`` (the case ``a = 1``; its clock is ``t``)."""
    return common_scalar_flow(grad, theta0, lambda t, theta: 1.0, t_eval, tol=tol)


def effective_clock(a: Callable[[float], float], t_eval: Sequence[float], *,
                    tol: Tolerance = Tolerance()) -> tuple[float, ...]:
    """``tau(t) = int_0^t du / a(u)`` at each time of ``t_eval`` for a time-only scalar ``a`` (ftip-00BM)."""
    def rhs(t: float, y: Tensor) -> Tensor:
        s = float(a(t))
        if not (math.isfinite(s) and s > 0):
            raise ValueError(f"a(t) must be positive and finite, got {s!r} at t={t:.6g}")
        return y.new_tensor([1.0 / s])

    ys, _ = integrate(rhs, torch.zeros(1, dtype=torch.float64), t_eval, tol=tol)
    return tuple(float(y) for y in ys)


def invert_clock(a: Callable[[float], float], tau_eval: Sequence[float], *, tol: Tolerance = Tolerance(),
                 t_limit: float = 1e12) -> tuple[float, ...]:
    """``t(tau)``, the inverse of the clock, by integrating ``dt/dtau = a(t)`` (ftip-00BN).

    A ``tau`` at or beyond ``tau_max`` has no preimage (ftip-00BM): the solution then passes
    ``t_limit`` and a ``ValueError`` says so.
    """
    def rhs(tau: float, y: Tensor) -> Tensor:
        s = float(a(float(y)))
        if not (math.isfinite(s) and s > 0):
            raise ValueError(f"a(t) must be positive and finite, got {s!r} at t={float(y):.6g}")
        return y.new_tensor([s])

    try:
        ys, _ = integrate(rhs, torch.zeros(1, dtype=torch.float64), tau_eval, tol=tol, limit=t_limit)
    except ValueError as err:
        raise ValueError(f"cannot invert the clock at tau={max(tau_eval)}: it is not below tau_max ({err})") from err
    return tuple(float(y) for y in ys)


@dataclass(frozen=True)
class ReparameterizationCheck:
    """Theorem ftip-00BN on one problem: the common-scalar flow and gradient flow at the matching clock."""

    scalar_flow: FlowSolution
    gradient_flow: FlowSolution
    gap: float  # max over samples of ||theta(t_i) - theta_GF(tau(t_i))|| / ||theta_GF(tau(t_i))||


def reparameterization_gap(grad: Gradient | FactoredProblem, theta0: Sequence[Tensor], a: Scalar,
                           t_eval: Sequence[float], *, tol: Tolerance = Tolerance()) -> ReparameterizationCheck:
    """Integrate the common-scalar flow, read its clock ``tau(t_i)``, run gradient flow to those ``tau``, compare."""
    csf = common_scalar_flow(grad, theta0, a, t_eval, tol=tol)
    gf = gradient_flow(grad, theta0, csf.clock, tol=tol)
    gap = max(float(torch.linalg.vector_norm(_flat(x) - _flat(y)) / torch.linalg.vector_norm(_flat(y)))
              for x, y in zip(csf.theta, gf.theta))
    return ReparameterizationCheck(csf, gf, gap)


def distance_to_path(points: Sequence[Tensor], path: Sequence[Tensor]) -> list[float]:
    """Euclidean distance from each point to the polygonal curve through ``path`` (ftip-00BQ, 00C1).

    Compares trajectories as curves, whatever their clocks: a discrete run can sit on the
    gradient-flow path while moving along it at another speed.
    """
    if len(path) < 2:
        raise ValueError(f"path needs at least two points, got {len(path)}")
    nodes = torch.stack([p.reshape(-1) for p in path])
    starts, seg = nodes[:-1], nodes[1:] - nodes[:-1]
    length2 = (seg * seg).sum(dim=1).clamp(min=torch.finfo(nodes.dtype).tiny)
    out = []
    for x in points:
        x = x.reshape(-1).to(nodes)
        s = (((x - starts) * seg).sum(dim=1) / length2).clamp(0, 1)
        out.append(float(torch.linalg.vector_norm(starts + s[:, None] * seg - x, dim=1).min()))
    return out


def hitting_time(grad: Gradient | FactoredProblem, objective: Callable[[Theta], float], theta0: Sequence[Tensor],
                 level: float, t_max: float, *, grid: int = 64, tol: Tolerance = Tolerance()) -> float | None:
    """The first gradient-flow time ``tau`` with ``objective(theta(tau)) <= level``, or ``None`` before ``t_max``.

    Gradient flow is sampled at ``grid`` equal steps up to ``t_max``; the first sample interval
    where the objective reaches ``level`` is then bisected to round-off. A crossing that starts
    and ends inside one sample interval can be missed (raise ``grid``). With the clock of a
    common-scalar flow, ``invert_clock(a, [tau])`` turns this into that flow's physical hitting
    time (ftip-00BP).
    """
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 1:
        raise ValueError(f"grid must be an int >= 1, got {grid!r}")
    if not (math.isfinite(t_max) and t_max > 0):
        raise ValueError(f"t_max must be a finite number > 0, got {t_max!r}")
    theta0 = tuple(torch.as_tensor(p) for p in theta0)
    g = _gradient(grad)
    if float(objective(theta0)) <= level:
        return 0.0

    def rhs(t: float, y: Tensor) -> Tensor:
        return -_flat(g(_unflat(y, theta0)))

    times = [t_max * (i + 1) / grid for i in range(grid)]
    ys, _ = integrate(rhs, _flat(theta0), times, tol=tol)
    below = [i for i, y in enumerate(ys) if float(objective(_unflat(y, theta0))) <= level]
    if not below:
        return None
    first = below[0]
    t_lo, y_lo = (times[first - 1], ys[first - 1]) if first else (0.0, _flat(theta0))
    hi = times[first]
    for _ in range(60):
        mid = 0.5 * (t_lo + hi)
        if not t_lo < mid < hi:
            break
        (y_mid,), _ = integrate(rhs, y_lo, [mid], tol=tol, t0=t_lo)
        if float(objective(_unflat(y_mid, theta0))) <= level:
            hi = mid
        else:
            t_lo, y_lo = mid, y_mid
    return 0.5 * (t_lo + hi)


__all__ = ["Tolerance", "integrate", "FlowSolution", "common_scalar_flow", "gradient_flow", "effective_clock",
           "invert_clock", "ReparameterizationCheck", "reparameterization_gap", "distance_to_path",
           "hitting_time"]
