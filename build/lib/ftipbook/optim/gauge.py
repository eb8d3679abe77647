"""Gauge symmetry of factored objectives and the tools that test optimizers against it.

Actions on factor pairs (ftip-00AX, 00AZ), the represented matrix (ftip-00AW), state actions
(ftip-00B2), a checker that runs a declared training intervention from two gauge-related
starts (ftip-00B3, 00BU, 00BV), tests of memoryless maps (ftip-00B7, 00BB, 00BH, 00BI), Adam's
first-step direction, gauge defect and exact one-step represented defect (ftip-00BD, 00BE),
the two-coordinate witness of ftip-00BF, and the per-head gauge of an attention layer
(ftip-00BX). Every check returns numbers; the chapters and tests decide what to assert.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import torch

from ftipbook.optim.factored import FactoredProblem, TorchFactory, Trajectory, run_factored
from ftipbook.optim.functional import OptimizerSpec, OptimizerState, get
from ftipbook.optim.hyperparams import Hyperparameters, _nonneg, _positive
from ftipbook.optim.msign import psd_power

Tensor = torch.Tensor
#: A memoryless factor-update map ``Phi: R^{n x k} -> R^{n x k}`` (ftip-00B7).
MatrixMap = Callable[[Tensor], Tensor]


# ----------------------------------------------------------------------------------------------
# Group elements
# ----------------------------------------------------------------------------------------------
def random_orthogonal(k: int, *, seed: int = 0, dtype: torch.dtype = torch.float64,
                      device: torch.device | str | None = None) -> Tensor:
    """A Haar-distributed element of ``O(k)``: QR of a Gaussian matrix with the sign of ``diag(R)`` fixed."""
    _size("k", k)
    gen = torch.Generator().manual_seed(seed)
    q, r = torch.linalg.qr(torch.randn(k, k, generator=gen, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))
    return q.to(dtype=dtype, device=device)


def random_gl(k: int, *, seed: int = 0, cond: float | None = None, dtype: torch.dtype = torch.float64,
              device: torch.device | str | None = None) -> Tensor:
    """A random element of ``GL(k)``: Gaussian, or ``Q1 diag(s) Q2`` with condition number ``cond``.

    With ``cond`` the singular values are log-spaced in ``[cond^{-1/2}, cond^{1/2}]``, so the
    matrix is as far from orthogonal as asked (``cond = 1`` gives an orthogonal matrix).
    """
    _size("k", k)
    if cond is None:
        gen = torch.Generator().manual_seed(seed)
        a = torch.randn(k, k, generator=gen, dtype=torch.float64) / math.sqrt(k)
        return a.to(dtype=dtype, device=device)
    if not cond >= 1:
        raise ValueError(f"cond must be >= 1, got {cond!r}")
    s = torch.logspace(0.5 * math.log10(cond), -0.5 * math.log10(cond), k, dtype=torch.float64)
    a = random_orthogonal(k, seed=seed) @ torch.diag(s) @ random_orthogonal(k, seed=seed + 1)
    return a.to(dtype=dtype, device=device)


def witness_rotation(dtype: torch.dtype = torch.float64) -> Tensor:
    """``Q = 2^{-1/2} [[1, 1], [-1, 1]]``, the 45-degree rotation of ftip-00BF and ftip-00BG."""
    return torch.tensor([[1.0, 1.0], [-1.0, 1.0]], dtype=torch.float64).div(math.sqrt(2)).to(dtype)


def plane_rotation(k: int, cos: float, i: int = 0, j: int = 1, dtype: torch.dtype = torch.float64) -> Tensor:
    """The rotation of ``O(k)`` acting on coordinates ``(i, j)`` with cosine ``cos`` (ftip-00BB).

    A row ``(x, 0)`` times it is ``(cos x, sin x)`` with ``sin = sqrt(1 - cos^2) >= 0``.
    """
    _size("k", k)
    if not -1.0 <= cos <= 1.0:
        raise ValueError(f"cos must lie in [-1, 1], got {cos!r}")
    if not (0 <= i < k and 0 <= j < k and i != j):
        raise ValueError(f"i and j must be distinct coordinates in [0, {k}), got {i}, {j}")
    sin = math.sqrt(1.0 - cos * cos)
    q = torch.eye(k, dtype=torch.float64)
    q[i, i], q[i, j], q[j, i], q[j, j] = cos, sin, -sin, cos
    return q.to(dtype)


def signed_permutation(perm: Iterable[int], signs: Iterable[int], dtype: torch.dtype = torch.float64) -> Tensor:
    """The orthogonal matrix sending coordinate ``i`` to ``perm[i]`` with sign ``signs[i]``.

    Entrywise maps commute with these (ftip-00BD: Adam's defect vanishes on this finite subgroup).
    """
    perm, signs = list(perm), list(signs)
    if sorted(perm) != list(range(len(perm))) or len(signs) != len(perm) or any(s not in (1, -1) for s in signs):
        raise ValueError(f"perm must be a permutation of 0..k-1 and signs k values in {{1, -1}}, got {perm}, {signs}")
    q = torch.zeros(len(perm), len(perm), dtype=dtype)
    for i, (p, s) in enumerate(zip(perm, signs)):
        q[i, p] = s
    return q


def is_orthogonal(a: Tensor, tol: float = 1e-10) -> bool:
    """Whether ``||A^T A - I||_max <= tol``."""
    _square(a)
    return bool((a.T @ a - torch.eye(a.shape[0], dtype=a.dtype, device=a.device)).abs().max() <= tol)


# ----------------------------------------------------------------------------------------------
# Actions on factor pairs
# ----------------------------------------------------------------------------------------------
def represented(u: Tensor, v: Tensor) -> Tensor:
    """The represented matrix ``W(U, V) = U V^T`` (ftip-00AW)."""
    _pair(u, v)
    return u @ v.T


def gl_action(u: Tensor, v: Tensor, a: Tensor) -> tuple[Tensor, Tensor]:
    """``gamma_A(U, V) = (U A, V A^{-T})`` for ``A`` in ``GL(k)`` (ftip-00AX); preserves ``U V^T`` (ftip-00AY).

    ``A`` must be finite, of the factors' dtype, and invertible to working precision (rank ``k``
    by ``torch.linalg.matrix_rank``'s tolerance); otherwise ``ValueError`` or ``TypeError``.
    """
    _pair(u, v)
    _square(a, u.shape[1])
    _same_dtype(u, v, a, "A")
    if not bool(torch.isfinite(a).all()):
        raise ValueError("A has non-finite entries (NaN or inf); the general linear gauge needs a finite invertible A")
    if int(torch.linalg.matrix_rank(a)) < a.shape[0]:
        raise ValueError("A is singular; the general linear gauge needs an invertible A")
    return u @ a, torch.linalg.solve(a, v.T).T  # A^{-1} V^T, so V A^{-T} is its transpose


def orth_action(u: Tensor, v: Tensor, q: Tensor, tol: float | None = None) -> tuple[Tensor, Tensor]:
    """``(U Q, V Q)`` for ``Q`` in ``O(k)`` (ftip-00AZ), where ``Q^{-T} = Q``; refuses a non-orthogonal ``Q``.

    ``tol`` bounds ``||Q^T Q - I||_max`` (default: a thousand machine epsilons of ``Q``'s dtype).
    """
    _pair(u, v)
    _square(q, u.shape[1])
    _same_dtype(u, v, q, "Q")
    if not is_orthogonal(q, 1e3 * torch.finfo(q.dtype).eps if tol is None else tol):
        raise ValueError("Q is not orthogonal (||Q^T Q - I|| > tol); use gl_action for a general invertible A")
    return u @ q, v @ q


@dataclass(frozen=True)
class OrbitInvariants:
    """Quantities constant on an orthogonal orbit (ftip-00AZ, 00BT); ``GL(k)`` changes all but ``W``."""

    norm_u: float
    norm_v: float
    gram_u_eigenvalues: tuple[float, ...]
    gram_v_eigenvalues: tuple[float, ...]


def orbit_invariants(u: Tensor, v: Tensor) -> OrbitInvariants:
    """``||U||_F``, ``||V||_F`` and the spectra of ``U^T U`` and ``V^T V`` (ascending)."""
    _pair(u, v)
    return OrbitInvariants(
        float(torch.linalg.matrix_norm(u)), float(torch.linalg.matrix_norm(v)),
        tuple(torch.linalg.eigvalsh(u.T @ u).tolist()), tuple(torch.linalg.eigvalsh(v.T @ v).tolist()),
    )


# ----------------------------------------------------------------------------------------------
# State actions and the equivariance checker
# ----------------------------------------------------------------------------------------------
class NoStateAction(ValueError):
    """Raised when an optimizer declares no state action for a buffer its state holds (ftip-00B2)."""


def _act(kind: str | None, name: str, x: object, q: Tensor) -> object:
    if kind is None:
        raise NoStateAction(f"buffer {name!r} has no state action compatible with every orthogonal Q")
    if kind == "invariant" or not isinstance(x, Tensor):
        return x
    if kind == "right":
        return x @ q.to(x)
    return q.T.to(x) @ x @ q.to(x)


def missing_actions(optimizer: str | OptimizerSpec, state: OptimizerState) -> tuple[str, ...]:
    """Names of the buffers in ``state`` for which ``optimizer`` has no state action (ftip-00B2)."""
    spec = get(optimizer)
    names = {k for s in state.per_param for k in s if spec.actions.get(k) is None}
    names |= {f"block.{k}" for k in state.block if spec.block_actions.get(k) is None}
    return tuple(sorted(names))


def state_action(optimizer: str | OptimizerSpec, state: OptimizerState, q: Tensor, *,
                 partial: bool = False) -> OptimizerState:
    """``sigma_Q(state)`` (ftip-00B2): each buffer transformed by its declared kind.

    Momentum-like buffers go to ``B Q``, Shampoo's right accumulator to ``Q^T R Q``, scalars and
    left accumulators stay fixed. A buffer without an action, such as Adam's entrywise second
    moment, raises :class:`NoStateAction`, or is left out when ``partial``.
    """
    spec = get(optimizer)

    def act(d: dict, actions: Mapping[str, str | None], prefix: str) -> dict:
        return {k: _act(actions.get(k), prefix + k, x, q) for k, x in d.items()
                if not (partial and actions.get(k) is None)}

    return OptimizerState(tuple(act(s, spec.actions, "") for s in state.per_param),
                          act(state.block, spec.block_actions, "block."))


def _rel(a: Tensor, b: Tensor) -> float:
    scale = float(torch.linalg.vector_norm(b))
    diff = float(torch.linalg.vector_norm(a - b))
    return diff / scale if scale > 0 else diff


def _state_distance(spec: OptimizerSpec, got: OptimizerState, expected: OptimizerState) -> float:
    dist = 0.0
    pairs = [(a, b, spec.actions) for a, b in zip(got.per_param, expected.per_param)]
    pairs.append((got.block, expected.block, spec.block_actions))
    for a, b, actions in pairs:
        for k, x in a.items():
            if actions.get(k) is None:
                continue
            if k not in b:
                return math.inf
            dist = max(dist, _rel(x, b[k]) if isinstance(x, Tensor) else (0.0 if x == b[k] else math.inf))
    return dist


@dataclass(frozen=True)
class TrainingIntervention:
    """A fully declared training intervention on a factored objective (ftip-00BU).

    The objective, the update rule (registered name/spec with ``config``, or a ``torch.optim``
    factory), the learning-rate ``schedule``, the randomness coupling (``seed`` of the minibatch
    stream), the stopping rule (a fixed number of ``steps``) and the declared initial state
    (zero buffers) are all fixed; only the initial factors vary.
    """

    problem: FactoredProblem
    optimizer: str | OptimizerSpec | TorchFactory
    steps: int = 20
    config: Hyperparameters | None = None
    schedule: Callable[[int], float] | None = None
    seed: int = 0

    def run(self, u0: Tensor, v0: Tensor, *, seed: int | None = None) -> Trajectory:
        """The trajectory from ``(u0, v0)``; ``seed`` overrides the coupling (to break it on purpose)."""
        return run_factored(self.problem, self.optimizer, u0, v0, self.steps, config=self.config,
                            schedule=self.schedule, seed=self.seed if seed is None else seed)

    @property
    def name(self) -> str:
        """The rule's registered name, or the factory's name."""
        if isinstance(self.optimizer, (str, OptimizerSpec)):
            return get(self.optimizer).name
        return getattr(self.optimizer, "__name__", type(self.optimizer).__name__)


@dataclass(frozen=True)
class GaugeReport:
    """What :func:`check_gauge_equivariance` measured, step by step (``t = 0, ..., T``).

    ``represented[t] = ||W~_t - W_t||_F / ||W_t||_F`` (ftip-00BU); ``factors[t]`` the larger of
    the relative distances ``||U~_t - U_t Q||`` and ``||V~_t - V_t Q||`` (ftip-00B3); ``states[t]``
    the relative distance from ``s~_t`` to ``sigma_Q(s_t)`` over the buffers that have an action
    (``None`` when the states are not visible, e.g. a foreign ``torch.optim`` optimizer).
    ``state_action_exists`` is ``False`` when some buffer has no action (``missing`` names them).
    """

    optimizer: str
    represented: tuple[float, ...]
    factors: tuple[float, ...]
    states: tuple[float, ...] | None
    state_action_exists: bool | None
    missing: tuple[str, ...] = ()

    @property
    def first_step_defect(self) -> float:
        """``represented[1]``: the relative represented defect after one step."""
        return self.represented[1]

    @property
    def max_represented(self) -> float:
        """The largest relative represented distance over the run."""
        return max(self.represented)

    def equivariant(self, tol: float = 1e-10) -> bool:
        """Whether factors (and, where visible, states) followed ``(U_t Q, V_t Q, sigma_Q(s_t))`` to ``tol``."""
        states_ok = self.states is None or (self.state_action_exists is not False and max(self.states) <= tol)
        return max(self.factors) <= tol and states_ok


def check_gauge_equivariance(intervention: TrainingIntervention, u0: Tensor, v0: Tensor, q: Tensor, *,
                             coupled: bool = True) -> GaugeReport:
    """Run ``intervention`` from ``(u0, v0)`` and from ``(u0 Q, v0 Q)`` and compare (ftip-00B3, 00B4).

    ``coupled=False`` gives the twin a different minibatch stream (seed + 1), breaking the
    randomness coupling that Definition ftip-00BU requires.
    """
    base = intervention.run(u0, v0)
    twin = intervention.run(*orth_action(u0, v0, q), seed=None if coupled else intervention.seed + 1)
    rep = tuple(_rel(a, b) for a, b in zip(twin.represented(), base.represented()))
    fac = tuple(max(_rel(ut, u @ q), _rel(vt, v @ q)) for (ut, vt), (u, v) in zip(twin.factors, base.factors))
    states, exists, missing = None, None, ()
    if base.algorithm is not None:
        spec = get(base.algorithm)
        missing = missing_actions(spec, base.states[-1])
        exists = not missing
        states = tuple(_state_distance(spec, t, state_action(spec, s, q, partial=True))
                       for t, s in zip(twin.states, base.states))
    return GaugeReport(intervention.name, rep, fac, states, exists, missing)


def is_parameterization_stable(intervention: TrainingIntervention, u0: Tensor, v0: Tensor,
                               rotations: Iterable[Tensor], tol: float = 1e-10, *, coupled: bool = True) -> bool:
    """Whether every gauge twin ``(u0 Q, v0 Q)`` has the same represented trajectory to ``tol`` (ftip-00BU)."""
    return all(check_gauge_equivariance(intervention, u0, v0, q, coupled=coupled).max_represented <= tol
               for q in rotations)


# ----------------------------------------------------------------------------------------------
# Memoryless maps
# ----------------------------------------------------------------------------------------------
def equivariance_pair(phi: MatrixMap, g: Tensor, q: Tensor) -> tuple[Tensor, Tensor]:
    """``(Phi(G Q), Phi(G) Q)``: the two sides of the commuting equation of ftip-00B7."""
    _square(q, g.shape[-1])
    return phi(g @ q), phi(g) @ q


@dataclass(frozen=True)
class EquivarianceCheck:
    """Result of :func:`is_right_equivariant`: the verdict, the worst relative defect and its witness."""

    holds: bool
    max_defect: float
    witness: tuple[Tensor, Tensor, Tensor, Tensor] | None  # (G, Q, Phi(GQ), Phi(G) Q) at the worst trial


def is_right_equivariant(phi: MatrixMap, n: int, k: int, *, trials: int = 16, seed: int = 0, tol: float = 1e-10,
                         rank: int | None = None, dtype: torch.dtype = torch.float64) -> EquivarianceCheck:
    """Test ``Phi(G Q) = Phi(G) Q`` on random ``n x k`` matrices and Haar rotations (ftip-00B7).

    The defect of a trial is ``||Phi(GQ) - Phi(G) Q||_F / max(||Phi(G)||_F, ||Phi(GQ)||_F)``.
    ``rank`` draws ``G`` of that rank (default: full rank). A pass is evidence on the sampled
    matrices, not a proof; a failure comes with its witness.
    """
    _size("n", n)
    _size("k", k)
    gen = torch.Generator().manual_seed(seed)
    worst, witness = -1.0, None
    for t in range(trials):
        if rank is None:
            g = torch.randn(n, k, generator=gen, dtype=dtype)
        else:
            g = torch.randn(n, rank, generator=gen, dtype=dtype) @ torch.randn(rank, k, generator=gen, dtype=dtype)
        q = random_orthogonal(k, seed=seed * 100_003 + t, dtype=dtype)
        lhs, rhs = equivariance_pair(phi, g, q)
        scale = max(float(torch.linalg.vector_norm(lhs)), float(torch.linalg.vector_norm(rhs)))
        defect = float(torch.linalg.vector_norm(lhs - rhs)) / scale if scale > 0 else 0.0
        if defect > worst:
            worst, witness = defect, (g, q, lhs, rhs)
    return EquivarianceCheck(worst <= tol, worst, witness)


def first_step_map(optimizer: str | OptimizerSpec, config: Hyperparameters | None = None) -> MatrixMap:
    """The memoryless map ``G -> (theta_0 - theta_1) / lr`` of one step from zero state at ``theta_0 = 0``.

    For Adam this is ``D_eps`` (ftip-00BD); for signSGD and Lion ``sign``; for Muon ``msign`` up
    to its shape factor; for Adafactor a positive multiple of its factored step (ftip-00BC).
    """
    spec = get(optimizer)
    if spec.name == "scaledgd":
        raise ValueError("scaledgd acts on a factor pair, not on one gradient matrix")
    config = spec.config() if config is None else config
    if not config.lr > 0:
        raise ValueError(f"the first-step map divides by lr, which must be > 0, got {config.lr!r}")

    def phi(g: Tensor) -> Tensor:
        (p,), _ = spec([torch.zeros_like(g)], None, [g], config)
        return -p / config.lr

    return phi


def gram_factor(phi: MatrixMap, g: Tensor) -> Tensor:
    """``X(G) = Phi(G) G^+`` (ftip-00BH).

    For an equivariant ``Phi`` and full-column-rank ``G`` it depends only on ``G G^T``.
    """
    return phi(g) @ torch.linalg.pinv(g)


def square_gram_function(phi: MatrixMap, p: Tensor) -> Tensor:
    """``H(P) = Phi(P^{1/2}) P^{-1/2}`` for ``P > 0`` (ftip-00BI), the canonical Gram representative."""
    return phi(psd_power(p, 0.5)) @ psd_power(p, -0.5)


@dataclass(frozen=True)
class BufferCollision:
    """Two gradients with the same buffer value whose rotated gradients give different values.

    No map of that buffer alone can then be ``sigma_Q`` on it (ftip-00B2). This concerns a
    buffer-wise action; non-equivariance of the whole optimizer is shown by its factor trajectories.
    """

    buffer: str
    value: Tensor
    rotated_a: Tensor
    rotated_b: Tensor


def buffer_collision(optimizer: str | OptimizerSpec, buffer: str, g_a: Tensor, g_b: Tensor, q: Tensor,
                     config: Hyperparameters | None = None) -> BufferCollision | None:
    """One zero-state step with ``g_a``, ``g_b``, ``g_a Q`` and ``g_b Q``; a collision on ``buffer`` if there is one."""
    spec = get(optimizer)

    def buf(g: Tensor) -> Tensor:
        _, s = spec([torch.zeros_like(g)], None, [g], config)
        if buffer not in s.per_param[0]:
            raise ValueError(f"{spec.name} has no buffer {buffer!r}; it keeps {sorted(s.per_param[0])}")
        return s.per_param[0][buffer]

    a, b, ra, rb = buf(g_a), buf(g_b), buf(g_a @ q), buf(g_b @ q)
    if torch.equal(a, b) and not torch.allclose(ra, rb):
        return BufferCollision(buffer, a, ra, rb)
    return None


# ----------------------------------------------------------------------------------------------
# Adam's first step (ftip-00BD, 00BE, 00BF)
# ----------------------------------------------------------------------------------------------
def adam_direction(g: Tensor, eps: float) -> Tensor:
    """``D_eps(G) = G / (|G| + eps)`` entrywise: zero-state bias-corrected Adam's first direction (ftip-00BD)."""
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps!r}")
    return g / (g.abs() + eps)


def adam_gauge_defect(g: Tensor, q: Tensor, eps: float) -> Tensor:
    """``E_Q(G) = D_eps(G Q) Q^T - D_eps(G)`` (ftip-00BD)."""
    _square(q, g.shape[-1])
    return adam_direction(g @ q, eps) @ q.T - adam_direction(g, eps)


def represented_defect(u0: Tensor, v0: Tensor, g_u: Tensor, g_v: Tensor, q: Tensor, lr: float,
                       eps: float) -> Tensor:
    """The exact ``W~_1 - W_1`` after one zero-state Adam step from ``(U0, V0)`` and ``(U0 Q, V0 Q)`` (ftip-00BE).

    ``-lr (E_U V0^T + U0 E_V^T) + lr^2 (E_U D_V^T + D_U E_V^T + E_U E_V^T)`` with
    ``E = E_Q(G)`` and ``D = D_eps(G)`` of the two factor gradients at ``(U0, V0)``.
    """
    _pair(u0, v0)
    e_u, e_v = adam_gauge_defect(g_u, q, eps), adam_gauge_defect(g_v, q, eps)
    d_u, d_v = adam_direction(g_u, eps), adam_direction(g_v, eps)
    return -lr * (e_u @ v0.T + u0 @ e_v.T) + lr**2 * (e_u @ d_v.T + d_u @ e_v.T + e_u @ e_v.T)


@dataclass(frozen=True)
class AdamWitness:
    """The setting of ftip-00BF: ``d1 = d2 = 1``, ``k = 2``, ``f(w) = w^2/2``, ``U0 = V0 = (1, 0)``, 45-degree ``Q``."""

    problem: FactoredProblem
    u0: Tensor
    v0: Tensor
    q: Tensor


def adam_witness(dtype: torch.dtype = torch.float64) -> AdamWitness:
    """Build the two-coordinate Adam witness of ftip-00BF."""
    from ftipbook.optim.factored import quadratic_problem

    e1 = torch.tensor([[1.0, 0.0]], dtype=dtype)
    return AdamWitness(quadratic_problem(torch.zeros(1, 1, dtype=dtype), k=2, name="w^2/2"), e1, e1.clone(),
                       witness_rotation(dtype))


#: Why :func:`witness_products` and :func:`witness_crossing` need ``eps > 0``.
_WITNESS_EPS = " (Adam's stabiliser; the ftip-00BF witness is stated for eps > 0)"


def witness_products(lr: float, eps: float) -> tuple[float, float]:
    """The note's closed forms ``W1 = (1 - lr/(1+eps))^2`` and ``W~1 = (1 - lr/(2^{-1/2}+eps))^2`` (ftip-00BF).

    They describe one zero-state Adam step, so ``lr`` must be a finite number ``>= 0`` and ``eps``
    (Adam's stabiliser) a finite number ``> 0``; anything else raises ``ValueError`` (``TypeError``
    for a non-number).
    """
    _nonneg("lr", lr)
    _positive("eps", eps, _WITNESS_EPS)
    return (1 - lr / (1 + eps)) ** 2, (1 - lr / (2 ** -0.5 + eps)) ** 2


def witness_crossing(eps: float) -> float:
    """The positive learning rate where the two ftip-00BF products meet again: ``2 / (1/(1+eps) + 1/(2^{-1/2}+eps))``.

    There ``1 - lr/(1+eps) = -(1 - lr/(2^{-1/2}+eps))``, so the squares agree although the
    factors differ; the note's range ``0 < lr < 2^{-1/2} + eps`` is sufficient, not necessary.
    ``eps`` must be a finite number ``> 0``, as in :func:`witness_products`.
    """
    _positive("eps", eps, _WITNESS_EPS)
    return 2 / (1 / (1 + eps) + 1 / (2 ** -0.5 + eps))


# ----------------------------------------------------------------------------------------------
# Attention heads (ftip-00BX)
# ----------------------------------------------------------------------------------------------
def attention_gauge(attention: torch.nn.Module, a: Tensor, *, keys: str = "inverse_transpose") -> torch.nn.Module:
    """A copy of a ``MultiHeadAttention`` with ``(W^Q, W^K) -> (W^Q A, W^K A^{-T})`` per head (ftip-00BX).

    ``a`` is one ``d_h x d_h`` matrix for every head or a stack ``[n_kv_heads, d_h, d_h]``; a
    query head uses the matrix of the key/value head it reads. ``keys="same"`` applies
    ``W^K A`` instead, which preserves the logits only for orthogonal ``A``. With RoPE only
    matrices commuting with the rotary 2x2 blocks preserve the logits; this function does not check.
    """
    from ftipbook.model.attention import MultiHeadAttention

    if not isinstance(attention, MultiHeadAttention):
        raise TypeError(f"attention_gauge acts on ftipbook.model.MultiHeadAttention, got {type(attention).__name__}")
    if keys not in ("inverse_transpose", "same"):
        raise ValueError(f"keys must be 'inverse_transpose' or 'same', got {keys!r}")
    h, g, dh = attention.n_heads, attention.n_kv_heads, attention.head_dim
    if tuple(a.shape) not in ((dh, dh), (g, dh, dh)):
        raise ValueError(f"a must be ({dh}, {dh}) or ({g}, {dh}, {dh}), got {tuple(a.shape)}")
    mats = a.expand(g, dh, dh)
    out = copy.deepcopy(attention)
    with torch.no_grad():
        for tensor in (out.qkv.weight, out.qkv.bias):
            if tensor is None:
                continue
            rows = tensor.view(h + 2 * g, dh, -1) if tensor.ndim == 2 else tensor.view(h + 2 * g, dh, 1)
            m = mats.to(rows)
            for head in range(h):
                rows[head] = m[head // (h // g)].T @ rows[head]
            key_map = torch.linalg.inv(m) if keys == "inverse_transpose" else m.transpose(-1, -2)
            rows[h:h + g] = key_map @ rows[h:h + g]
    return out


# ----------------------------------------------------------------------------------------------
def _size(name: str, v: object) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be an int >= 1, got {v!r}")


def _square(a: object, k: int | None = None) -> None:
    if not isinstance(a, Tensor) or a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"expected a square matrix, got {getattr(a, 'shape', a)!r}")
    if k is not None and a.shape[0] != k:
        raise ValueError(f"the group element must be {k} x {k} to act on k={k} factor columns, got {tuple(a.shape)}")


def _same_dtype(u: Tensor, v: Tensor, g: Tensor, name: str) -> None:
    if not g.is_floating_point() or not u.dtype == v.dtype == g.dtype:
        raise TypeError(f"{name} has dtype {g.dtype} but the factors U and V have {u.dtype} and {v.dtype}; "
                        f"give all three one floating dtype (e.g. {name}.to(U.dtype))")


def _pair(u: object, v: object) -> None:
    if not isinstance(u, Tensor) or not isinstance(v, Tensor) or u.ndim != 2 or v.ndim != 2:
        raise ValueError("U and V must be 2-D tensors")
    if u.shape[1] != v.shape[1]:
        raise ValueError(f"U and V must share their column count k, got {tuple(u.shape)} and {tuple(v.shape)}")


__all__ = [
    "random_orthogonal", "random_gl", "witness_rotation", "plane_rotation", "signed_permutation", "is_orthogonal",
    "represented", "gl_action", "orth_action", "OrbitInvariants", "orbit_invariants",
    "NoStateAction", "missing_actions", "state_action", "TrainingIntervention", "GaugeReport",
    "check_gauge_equivariance", "is_parameterization_stable",
    "equivariance_pair", "EquivarianceCheck", "is_right_equivariant", "first_step_map", "gram_factor",
    "square_gram_function", "BufferCollision", "buffer_collision",
    "adam_direction", "adam_gauge_defect", "represented_defect", "AdamWitness", "adam_witness",
    "witness_products", "witness_crossing", "attention_gauge", "MatrixMap",
]
