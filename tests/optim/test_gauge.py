"""The claims of sections ftip-00AV, 00B6 and 00BS, checked in float64.

Equivariant rules (GD, Polyak, Nesterov, scalar-Adam, Muon, Shampoo, ScaledGD) must follow
``(U_t Q, V_t Q, sigma_Q(s_t))`` to round-off; the entrywise and factored-statistic rules (Adam,
RMSProp, signSGD, Lion, Adafactor) must show a first-step defect far above round-off for k >= 2.
"""
from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.optim import functional as fn
from ftipbook.optim import gauge as g
from ftipbook.optim import hyperparams as hp
from ftipbook.optim import torch_optim
from ftipbook.optim.factored import matrix_sensing_problem, quadratic_problem, run_factored
from ftipbook.optim.msign import msign_svd, newton_schulz, psd_power
from ftipbook.optim.schedules import Cosine

D = torch.float64
ROUND_OFF = 1e-10
VISIBLE = 1e-4

EQUIVARIANT = {
    "sgd": hp.SGDConfig(lr=0.05),
    "momentum": hp.MomentumConfig(lr=0.05),
    "nesterov": hp.NesterovConfig(lr=0.05),
    "scalar_adam": hp.ScalarAdamConfig(lr=0.01),
    "muon": hp.MuonConfig(lr=0.02),
    "muon-svd-sum": hp.MuonConfig(lr=0.02, nesterov=False, momentum_form="sum", orthogonalizer="svd",
                                  weight_decay=0.0),
    "shampoo": hp.ShampooConfig(lr=0.01),
    "scaledgd": hp.ScaledGDConfig(lr=0.1, damping=1e-3),
}
NOT_EQUIVARIANT = {
    "adam": hp.AdamConfig(lr=0.01),
    "adamw": hp.AdamWConfig(lr=0.01),
    "rmsprop": hp.RMSpropConfig(lr=0.01),
    "signsgd": hp.SignSGDConfig(lr=0.01),
    "lion": hp.LionConfig(lr=0.01),
    "adafactor": hp.AdafactorConfig(lr=0.01),
}


def _setting(k=3, seed=0):
    problem = matrix_sensing_problem(6, 5, 2, k, 60, seed=seed)
    u0, v0 = problem.init(scale=0.5, seed=seed + 1)
    return problem, u0, v0, g.random_orthogonal(k, seed=seed + 2)


def _intervention(problem, key, cfg, steps=20, schedule=None):
    return g.TrainingIntervention(problem, key.split("-")[0], steps=steps, config=cfg, schedule=schedule)


@pytest.mark.parametrize("key", list(EQUIVARIANT))
def test_equivariant_rules_follow_the_rotated_run(key):
    """ftip-00B8, 00B9, 00BA: factors, represented matrices and states agree to round-off for 20 steps."""
    problem, u0, v0, q = _setting()
    report = g.check_gauge_equivariance(_intervention(problem, key, EQUIVARIANT[key]), u0, v0, q)
    assert fn.get(key.split("-")[0]).equivariant
    assert report.state_action_exists is True and report.missing == ()
    assert report.equivariant(ROUND_OFF), (max(report.factors), max(report.states))
    assert report.max_represented < ROUND_OFF


@pytest.mark.parametrize("key", list(NOT_EQUIVARIANT))
def test_basis_sensitive_rules_split_at_the_first_step(key):
    """ftip-00BC: for k >= 2 the represented defect after one step is far above round-off."""
    problem, u0, v0, q = _setting()
    report = g.check_gauge_equivariance(_intervention(problem, key, NOT_EQUIVARIANT[key]), u0, v0, q)
    assert not fn.get(key).equivariant
    assert report.represented[0] < ROUND_OFF  # same represented start (ftip-00AY)
    assert report.first_step_defect > VISIBLE
    assert not report.equivariant(ROUND_OFF)


@given(seed=st.integers(0, 500), k=st.integers(2, 4))
@settings(max_examples=12, deadline=None)
def test_equivariance_verdicts_hold_for_random_problems(seed, k):
    problem, u0, v0, q = _setting(k=k, seed=seed)
    for key in ("momentum", "muon", "shampoo", "scalar_adam"):
        assert g.check_gauge_equivariance(_intervention(problem, key, EQUIVARIANT[key], steps=5), u0, v0,
                                          q).equivariant(ROUND_OFF)
    for key in ("adam", "signsgd"):
        report = g.check_gauge_equivariance(_intervention(problem, key, NOT_EQUIVARIANT[key], steps=1), u0, v0, q)
        assert report.first_step_defect > 1e-6


def test_k_equal_one_leaves_only_sign_flips():
    """O(1) = {+1, -1} and the entrywise maps are odd, so Adam is equivariant when k = 1 (why k >= 2 matters)."""
    problem, u0, v0, _ = _setting(k=1)
    report = g.check_gauge_equivariance(_intervention(problem, "adam", NOT_EQUIVARIANT["adam"]), u0, v0,
                                        -torch.eye(1, dtype=D))
    assert report.max_represented < ROUND_OFF


def test_float32_round_off_drift_is_outside_the_real_arithmetic_claim():
    """ftip-00B8 is about real arithmetic: in float32 the twins drift at single-precision round-off only."""
    problem, u0, v0, q = _setting()
    report = g.check_gauge_equivariance(_intervention(problem, "momentum", EQUIVARIANT["momentum"], steps=50,
                                                      schedule=Cosine(50)),
                                        u0.float(), v0.float(), q.float())
    assert 1e-9 < report.max_represented < 1e-4


def test_torch_optimizers_are_checked_the_same_way():
    problem, u0, v0, q = _setting()
    muon = g.check_gauge_equivariance(
        g.TrainingIntervention(problem, lambda ps: torch_optim.Muon(ps, lr=0.02), steps=10), u0, v0, q)
    assert muon.equivariant(ROUND_OFF) and muon.state_action_exists
    adam = g.check_gauge_equivariance(
        g.TrainingIntervention(problem, lambda ps: torch.optim.Adam(ps, lr=0.01), steps=10), u0, v0, q)
    assert adam.states is None and adam.state_action_exists is None  # PyTorch's own state is not inspected
    assert adam.first_step_defect > VISIBLE


def test_minibatch_noise_must_be_coupled():
    """ftip-00BU: minibatch SGD is parameterization-stable only when both twins see the same minibatches."""
    problem = matrix_sensing_problem(6, 5, 2, 3, 60, seed=0, batch_size=10)
    u0, v0 = problem.init(scale=0.5, seed=1)
    qs = [g.random_orthogonal(3, seed=s) for s in range(3)]
    sgd = g.TrainingIntervention(problem, "sgd", steps=15, config=hp.SGDConfig(lr=0.05))
    assert g.is_parameterization_stable(sgd, u0, v0, qs)
    assert not g.is_parameterization_stable(sgd, u0, v0, qs, coupled=False)


def test_equivariance_is_sufficient_not_necessary():
    """ftip-00BV: Adam is not equivariant, yet stable on an orbit pair related by a signed permutation."""
    problem, u0, v0, _ = _setting()
    adam = g.TrainingIntervention(problem, "adam", steps=30, config=hp.AdamConfig(lr=0.01))
    assert g.is_parameterization_stable(adam, u0, v0, [g.signed_permutation([2, 0, 1], [1, -1, 1])])
    assert not g.is_parameterization_stable(adam, u0, v0, [g.random_orthogonal(3, seed=4)])


# ------------------------------------------------------------------------------------------ 00AV
@given(seed=st.integers(0, 1000), k=st.integers(1, 5))
@settings(max_examples=25, deadline=None)
def test_general_linear_action_preserves_product_and_loss(seed, k):
    """ftip-00AY, with the right-action law gamma_B(gamma_A(x)) = gamma_{AB}(x) (ftip-00AX)."""
    problem = quadratic_problem(torch.randn(4, 3, dtype=D, generator=torch.Generator().manual_seed(seed)), k)
    u, v = problem.init(seed=seed)
    a, b = g.random_gl(k, seed=seed, cond=10.0), g.random_gl(k, seed=seed + 7)
    ua, va = g.gl_action(u, v, a)
    assert torch.allclose(g.represented(ua, va), g.represented(u, v), atol=1e-11)
    assert math.isclose(float(problem.loss(ua, va)), float(problem.loss(u, v)), rel_tol=1e-11)
    twice, once = g.gl_action(*g.gl_action(u, v, a), b), g.gl_action(u, v, a @ b)
    assert all(torch.allclose(x, y, atol=1e-10) for x, y in zip(twice, once))
    q = g.random_orthogonal(k, seed=seed)
    assert all(torch.allclose(x, y, atol=1e-13) for x, y in zip(g.gl_action(u, v, q), g.orth_action(u, v, q)))


def test_naive_action_and_fibre_larger_than_orbit():
    """(UA, VA) changes W for non-orthogonal A (ftip-00AX); diag(2, 1/2) keeps W but not the orbit invariants
    (ftip-00AZ, 00BT)."""
    u, v = torch.tensor([[1.0, 2.0]], dtype=D), torch.tensor([[3.0, 1.0]], dtype=D)
    a = torch.diag(torch.tensor([2.0, 0.5], dtype=D))
    assert not torch.allclose(g.represented(u @ a, v @ a), g.represented(u, v))
    inv_before, inv_after = g.orbit_invariants(u, v), g.orbit_invariants(*g.gl_action(u, v, a))
    assert torch.allclose(g.represented(*g.gl_action(u, v, a)), g.represented(u, v))
    assert inv_before != inv_after
    rotated = g.orbit_invariants(*g.orth_action(u, v, g.random_orthogonal(2, seed=3)))
    assert all(math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12) for x, y in
               zip([inv_before.norm_u, inv_before.norm_v, *inv_before.gram_u_eigenvalues],
                   [rotated.norm_u, rotated.norm_v, *rotated.gram_u_eigenvalues]))
    with pytest.raises(ValueError, match="use gl_action"):
        g.orth_action(u, v, a)


@pytest.mark.parametrize("seed", range(5))
def test_isometry_iff_orthogonal(seed):
    """ftip-00B0: the witness V = 0, one row of U = e_1 detects any non-orthogonal A (even det 1)."""
    k = 3
    shear = torch.eye(k, dtype=D)
    shear[0, 1] = 0.5
    for a in (g.random_gl(k, seed=seed, cond=4.0), shear):
        assert not g.is_orthogonal(a)
        u, v = torch.zeros(1, k, dtype=D), torch.zeros(2, k, dtype=D)
        hit = None
        for i in range(k):
            u.zero_()
            u[0, i] = 1.0
            ua, va = g.gl_action(u, v, a)
            if abs(float(ua.square().sum() + va.square().sum()) - 1.0) > 1e-9:
                hit = i
                break
        assert hit is not None
    q = g.random_orthogonal(k, seed=seed)
    u, v = torch.randn(4, k, dtype=D), torch.randn(5, k, dtype=D)
    uq, vq = g.orth_action(u, v, q)
    assert math.isclose(float(uq.square().sum() + vq.square().sum()), float(u.square().sum() + v.square().sum()),
                        rel_tol=1e-12)


def test_gradients_are_covariant_for_orthogonal_and_contravariant_for_gl():
    """ftip-00B1 (checked against autograd on L(U, V) itself) and its GL counterpart."""
    problem, u, v, q = _setting()

    def autograd(u_, v_):
        u_, v_ = u_.clone().requires_grad_(), v_.clone().requires_grad_()
        return torch.autograd.grad(problem.loss(u_, v_), (u_, v_))

    gu, gv = autograd(u, v)
    assert all(torch.allclose(x, y, atol=1e-13) for x, y in zip(problem.grads(u, v), (gu, gv)))
    gu_q, gv_q = autograd(*g.orth_action(u, v, q))
    assert torch.allclose(gu_q, gu @ q, atol=1e-12) and torch.allclose(gv_q, gv @ q, atol=1e-12)
    a = g.random_gl(3, seed=9, cond=5.0)
    gu_a, _ = autograd(*g.gl_action(u, v, a))
    assert torch.allclose(gu_a, gu @ torch.linalg.inv(a).T, atol=1e-11)
    assert not torch.allclose(gu_a, gu @ a, atol=1e-3)


def test_gd_is_not_gl_equivariant_but_scaledgd_is():
    """ftip-00B5: one GD step from (UA, VA^{-T}) gives another W_1; ScaledGD (undamped) commutes with all of GL(k)."""
    problem, u, v, _ = _setting()
    a = g.random_gl(3, seed=11, cond=5.0)
    ua, va = g.gl_action(u, v, a)
    w = lambda name, cfg, x, y: run_factored(problem, name, x, y, 1, config=cfg).represented()[1]  # noqa: E731
    gd = hp.SGDConfig(lr=0.05)
    assert float((w("sgd", gd, ua, va) - w("sgd", gd, u, v)).abs().max()) > VISIBLE
    sgd_cfg = hp.ScaledGDConfig(lr=0.1)
    assert torch.allclose(w("scaledgd", sgd_cfg, ua, va), w("scaledgd", sgd_cfg, u, v), atol=1e-11)


# ------------------------------------------------------------------------------------------ 00B2
def test_state_actions():
    """Momentum buffers go to B Q, Shampoo's right accumulator to Q^T R Q, the scalar second moment is fixed;
    Adam's entrywise second moment has no action (ftip-00B2)."""
    problem, u, v, q = _setting()
    grads = problem.grads(u, v)
    _, st_mom = fn.momentum([u, v], None, grads)
    moved = g.state_action("momentum", st_mom, q)
    assert torch.equal(moved.per_param[0]["momentum_buffer"], st_mom.per_param[0]["momentum_buffer"] @ q)
    _, st_sh = fn.shampoo([u, v], None, grads)
    r = st_sh.per_param[1]["right"]
    assert torch.allclose(g.state_action("shampoo", st_sh, q).per_param[1]["right"], q.T @ r @ q)
    _, st_sc = fn.scalar_adam([u, v], None, grads)
    assert g.state_action("scalar_adam", st_sc, q).block["exp_avg_sq"] is st_sc.block["exp_avg_sq"]
    _, st_adam = fn.adam([u, v], None, grads)
    assert g.missing_actions("adam", st_adam) == ("exp_avg_sq",)
    with pytest.raises(g.NoStateAction, match="'exp_avg_sq' has no state action"):
        g.state_action("adam", st_adam, q)
    assert g.state_action("adam", fn.OptimizerState(), q) == fn.OptimizerState()  # sigma_Q(s_0) = s_0


def test_adam_second_moment_collision():
    """G = (1, 1) and G' = (1, -1) share v = (1, 1) (up to 1 - beta2), but G Q = (0, sqrt 2) and
    G' Q = (sqrt 2, 0) give v's in swapped coordinates: no map of v alone can be sigma_Q (ftip-00B2)."""
    q = g.witness_rotation()
    hit = g.buffer_collision("adam", "exp_avg_sq", torch.tensor([[1.0, 1.0]], dtype=D),
                             torch.tensor([[1.0, -1.0]], dtype=D), q)
    assert hit is not None
    scale = 1 - hp.AdamConfig().betas[1]
    assert torch.allclose(hit.value, scale * torch.tensor([[1.0, 1.0]], dtype=D))
    assert torch.allclose(hit.rotated_a, scale * torch.tensor([[0.0, 2.0]], dtype=D), atol=1e-15)
    assert torch.allclose(hit.rotated_b, scale * torch.tensor([[2.0, 0.0]], dtype=D), atol=1e-15)
    assert g.buffer_collision("momentum", "momentum_buffer", torch.tensor([[1.0, 1.0]], dtype=D),
                              torch.tensor([[1.0, -1.0]], dtype=D), q) is None


# ------------------------------------------------------------------------------------------ 00B6
def test_memoryless_equivariant_maps_pass_and_entrywise_maps_fail():
    """ftip-00B7: c G, msign, Newton-Schulz and (G G^T + eps I)^{-1/2} G commute; sign, D_eps, tanh do not."""
    good = {
        "2.5 G": lambda x: 2.5 * x,
        "msign": msign_svd,
        "newton-schulz": newton_schulz,
        "gram-preconditioned": lambda x: psd_power(x @ x.T, -0.5, damping=0.1) @ x,
    }
    for name, phi in good.items():
        assert g.is_right_equivariant(phi, 6, 3).holds, name
    for name, phi in {"sign": torch.sign, "adam": lambda x: g.adam_direction(x, 1e-8), "tanh": torch.tanh}.items():
        check = g.is_right_equivariant(phi, 6, 3)
        assert not check.holds and check.max_defect > 0.01, name
        gmat, q, lhs, rhs = check.witness
        assert torch.allclose(lhs, phi(gmat @ q)) and torch.allclose(rhs, phi(gmat) @ q)


CANDIDATES = {
    "tanh": torch.tanh,
    "sign": torch.sign,
    "x/(|x|+eps)": lambda x: x / (x.abs() + 1e-8),
    "x^3": lambda x: x**3,
    "clip": lambda x: x.clamp(-0.5, 0.5),
    "relu": torch.relu,
}


@pytest.mark.parametrize("name", list(CANDIDATES))
def test_coordinatewise_equivariance_forces_linearity(name):
    """ftip-00BB: every nonlinear entrywise map fails on one row rotated in a coordinate plane; the proof's
    step phi(a x) = a phi(x) is what breaks."""
    phi = CANDIDATES[name]
    assert not g.is_right_equivariant(phi, 1, 2, trials=32).holds
    x, a = 1.3, -0.6
    lhs, rhs = g.equivariance_pair(phi, torch.tensor([[x, 0.0]], dtype=D), g.plane_rotation(2, a))
    assert not torch.allclose(lhs, rhs)
    if float(phi(torch.zeros(1, dtype=D))) == 0.0:
        assert not math.isclose(float(lhs[0, 0]), a * float(phi(torch.tensor(x, dtype=D))), abs_tol=1e-12)


@given(c=st.floats(-5, 5), x=st.floats(-10, 10), a=st.floats(-1, 1))
@settings(max_examples=50, deadline=None)
def test_linear_entrywise_maps_pass(c, x, a):
    phi = lambda t: c * t  # noqa: E731
    assert g.is_right_equivariant(phi, 3, 2, trials=4).holds
    lhs, rhs = g.equivariance_pair(phi, torch.tensor([[x, 0.0]], dtype=D), g.plane_rotation(2, a))
    assert torch.allclose(lhs, rhs, atol=1e-12)


@pytest.mark.parametrize("name", ["adam", "rmsprop", "signsgd", "lion", "adafactor"])
def test_first_step_maps_break_the_gauge(name):
    """ftip-00BC: the zero-state first-step maps of the basis-sensitive optimizers fail the commuting equation."""
    phi = g.first_step_map(name)
    check = g.is_right_equivariant(phi, 5, 3)
    assert not check.holds and check.max_defect > 0.01
    assert g.is_right_equivariant(g.first_step_map("muon", hp.MuonConfig(orthogonalizer="svd")), 5, 3).holds


def test_first_step_map_of_adam_is_d_eps():
    gm = torch.randn(4, 3, dtype=D, generator=torch.Generator().manual_seed(0))
    cfg = hp.AdamConfig(lr=0.3, eps=1e-3)
    assert torch.allclose(g.first_step_map("adam", cfg)(gm), g.adam_direction(gm, 1e-3), atol=1e-14)
    assert torch.equal(g.first_step_map("signsgd", hp.SignSGDConfig(lr=0.5))(gm), torch.sign(gm))
    with pytest.raises(ValueError, match="must be > 0"):
        g.first_step_map("adam", hp.AdamConfig(lr=0.0))
    with pytest.raises(ValueError, match="factor pair"):
        g.first_step_map("scaledgd")


def test_adam_defect_vanishes_on_signed_permutations_only():
    """ftip-00BD: E_Q = 0 for signed permutations (a finite subgroup Adam respects), not for rotations."""
    gm = torch.randn(6, 3, dtype=D, generator=torch.Generator().manual_seed(1))
    p = g.signed_permutation([1, 2, 0], [-1, 1, -1])
    assert torch.equal(g.adam_gauge_defect(gm, p, 1e-8), torch.zeros_like(gm))
    assert float(g.adam_gauge_defect(gm, g.random_orthogonal(3, seed=2), 1e-8).abs().max()) > 0.01


@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), lr=st.floats(1e-3, 1.0), eps=st.floats(1e-9, 1e-2))
@settings(max_examples=30, deadline=None)
def test_exact_one_step_represented_defect(seed, k, lr, eps):
    """ftip-00BE: the closed form equals the difference of two direct Adam runs to round-off."""
    problem = matrix_sensing_problem(4, 3, 2, k, 30, seed=seed % 97)
    u0, v0 = problem.init(seed=seed)
    q = g.random_orthogonal(k, seed=seed)
    cfg = hp.AdamConfig(lr=lr, eps=eps)
    w1 = run_factored(problem, "adam", u0, v0, 1, config=cfg).represented()[1]
    w1t = run_factored(problem, "adam", *g.orth_action(u0, v0, q), 1, config=cfg).represented()[1]
    closed = g.represented_defect(u0, v0, *problem.grads(u0, v0), q, lr, eps)
    assert torch.allclose(w1t - w1, closed, rtol=1e-9, atol=1e-12)


def test_represented_defect_is_exactly_quadratic_in_lr():
    problem, u0, v0, q = _setting()
    gu, gv = problem.grads(u0, v0)
    lrs = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=D)
    values = torch.stack([g.represented_defect(u0, v0, gu, gv, q, float(lr), 0.1).reshape(-1) for lr in lrs])
    vander = torch.stack([lrs**j for j in range(4)], dim=1)
    coeffs = torch.linalg.solve(vander, values)
    assert float(coeffs[0].abs().max()) < 1e-12 and float(coeffs[3].abs().max()) < 1e-10
    assert float(coeffs[2].abs().max()) > 1e-3


def test_two_coordinate_witness_reproduces_the_note():
    """ftip-00BF: running Adam gives W1 = (1 - eta/(1+eps))^2 and W~1 = (1 - eta/(2^{-1/2}+eps))^2; at
    eta = 0.1, eps = 1e-8 these are 0.810000 and 0.737157; the products meet again at eta ~ 0.8284, outside the
    stated range, so that range is sufficient, not necessary."""
    w = g.adam_witness()
    eps = 1e-8
    for lr in (0.05, 0.1, 0.3, 0.6, 1.2):
        cfg = hp.AdamConfig(lr=lr, eps=eps)
        w1 = float(run_factored(w.problem, "adam", w.u0, w.v0, 1, config=cfg).represented()[1])
        w1t = float(run_factored(w.problem, "adam", *g.orth_action(w.u0, w.v0, w.q), 1, config=cfg).represented()[1])
        closed, closed_t = g.witness_products(lr, eps)
        assert math.isclose(w1, closed, rel_tol=1e-12) and math.isclose(w1t, closed_t, rel_tol=1e-12)
        assert math.isclose(w1t - w1, float(g.represented_defect(w.u0, w.v0, *w.problem.grads(w.u0, w.v0), w.q,
                                                                 lr, eps)), rel_tol=1e-9, abs_tol=1e-15)
    w1, w1t = g.witness_products(0.1, eps)
    assert (round(w1, 6), round(w1t, 6)) == (0.81, 0.737157)
    crossing = g.witness_crossing(eps)
    assert round(crossing, 4) == 0.8284 and crossing > 2**-0.5 + eps
    a, b = g.witness_products(crossing, eps)
    assert math.isclose(a, b, rel_tol=1e-12)
    grid = [i / 1000 for i in range(1, 1500)]
    assert all(g.witness_products(lr, eps)[0] != g.witness_products(lr, eps)[1] for lr in grid if lr < 2**-0.5)
    for pair in ((w.u0, w.v0), g.orth_action(w.u0, w.v0, w.q)):  # same W0 = 1 and L0 = 1/2 (ftip-00BW)
        assert math.isclose(float(g.represented(*pair)), 1.0, rel_tol=1e-15)
        assert math.isclose(float(w.problem.loss(*pair)), 0.5, rel_tol=1e-15)


def test_rotated_sign_update_fails_to_commute():
    """ftip-00BG: G = (1, 1), 45-degree Q: sign(GQ) = (0, 1) while sign(G) Q = (0, sqrt 2)."""
    lhs, rhs = g.equivariance_pair(torch.sign, torch.tensor([[1.0, 1.0]], dtype=D), g.witness_rotation())
    assert torch.equal(lhs, torch.tensor([[0.0, 1.0]], dtype=D))
    assert torch.allclose(rhs, torch.tensor([[0.0, math.sqrt(2)]], dtype=D), atol=1e-15)
    step = g.first_step_map("signsgd", hp.SignSGDConfig(lr=1.0))
    assert torch.equal(step(torch.tensor([[1.0, 1.0]], dtype=D) @ g.witness_rotation()), lhs.round(decimals=12))


# -------------------------------------------------------------------------------- 00BH, 00BI, 00BJ
@pytest.mark.parametrize("name", ["msign", "newton-schulz", "gram"])
def test_equivariant_maps_are_gram_determined(name):
    """ftip-00BH (=>): X(G) = Phi(G) G^+ satisfies X(G) G = Phi(G) and takes one value on every G with the
    same left Gram matrix (G Q for any orthogonal Q)."""
    phi = {"msign": msign_svd, "newton-schulz": newton_schulz,
           "gram": lambda x: psd_power(x @ x.T, -0.5, damping=0.1) @ x}[name]
    gen = torch.Generator().manual_seed(3)
    for n, k in ((5, 3), (4, 4)):
        gm = torch.randn(n, k, generator=gen, dtype=D)
        x = g.gram_factor(phi, gm)
        assert torch.allclose(x @ gm, phi(gm), atol=1e-11)
        for s in range(3):
            assert torch.allclose(g.gram_factor(phi, gm @ g.random_orthogonal(k, seed=s)), x, atol=1e-10)


def test_gram_functions_give_equivariant_maps():
    """ftip-00BH (<=): Phi(G) = H(G G^T) G is equivariant for any H, e.g. (P + I)^{-1/2} and P^2 - 3P."""
    for h in (lambda p: psd_power(p, -0.5, damping=1.0), lambda p: p @ p - 3 * p):
        assert g.is_right_equivariant(lambda x, h=h: h(x @ x.T) @ x, 5, 3).holds


def test_square_invertible_representative():
    """ftip-00BI: H(P) = Phi(P^{1/2}) P^{-1/2} reproduces Phi(G) = H(GG^T) G; for msign, H = P^{-1/2}; in the
    rectangular case another H that differs off the range of G represents the same Phi."""
    gm = torch.randn(4, 4, dtype=D, generator=torch.Generator().manual_seed(5))
    p = gm @ gm.T
    h = g.square_gram_function(msign_svd, p)
    assert torch.allclose(h, psd_power(p, -0.5), atol=1e-10)
    assert torch.allclose(h @ gm, msign_svd(gm), atol=1e-10)
    tall = torch.randn(5, 2, dtype=D, generator=torch.Generator().manual_seed(6))
    x1 = g.gram_factor(msign_svd, tall)
    off_range = torch.eye(5, dtype=D) - tall @ torch.linalg.pinv(tall)
    x2 = x1 + torch.randn(5, 5, dtype=D, generator=torch.Generator().manual_seed(7)) @ off_range
    assert not torch.allclose(x1, x2) and torch.allclose(x2 @ tall, msign_svd(tall), atol=1e-10)


def test_rank_deficiency_is_not_generic_for_factored_gradients():
    """ftip-00BJ: Gaussian matrices are full rank, but G_U = grad f(W) V has rank <= d2 < k; msign jumps at
    rank drops and Phi(0) = 0 is forced."""
    gen = torch.Generator().manual_seed(8)
    assert all(int(torch.linalg.matrix_rank(torch.randn(6, 3, generator=gen, dtype=D))) == 3 for _ in range(200))
    problem = matrix_sensing_problem(6, 2, 1, 3, 40, seed=1)
    u, v = problem.init(seed=2)
    gu, _ = problem.grads(u, v)
    assert int(torch.linalg.matrix_rank(gu)) <= 2 < 3
    base = torch.diag(torch.tensor([1.0, 1e-9], dtype=D))
    assert float((msign_svd(base) - msign_svd(torch.diag(torch.tensor([1.0, 0.0], dtype=D)))).abs().max()) == 1.0
    assert torch.equal(newton_schulz(torch.zeros(3, 2, dtype=D)), torch.zeros(3, 2, dtype=D))


# ------------------------------------------------------------------------------------------ 00BX
def test_attention_head_gauge():
    """ftip-00BX: per-head (W^Q A, W^K A) with A orthogonal, or (W^Q A, W^K A^{-T}) with A in GL, keeps the
    logits and outputs; (W^Q A, W^K A) with a non-orthogonal A does not."""
    from ftipbook.model import ModelConfig, MultiHeadAttention

    cfg = ModelConfig(vocab_size=11, d_model=16, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=32, max_seq_len=8,
                      pos="learned", qkv_bias=True)
    torch.manual_seed(0)
    attn = MultiHeadAttention(cfg).double()
    x = torch.randn(2, 5, 16, dtype=D)
    pos = torch.arange(5).expand(2, 5)
    out = attn(x, positions=pos)
    orth = torch.stack([g.random_orthogonal(4, seed=s) for s in range(2)])
    gl = g.random_gl(4, seed=3, cond=6.0)
    assert torch.allclose(g.attention_gauge(attn, orth)(x, positions=pos), out, atol=1e-12)
    assert torch.allclose(g.attention_gauge(attn, orth, keys="same")(x, positions=pos), out, atol=1e-12)
    assert torch.allclose(g.attention_gauge(attn, gl)(x, positions=pos), out, atol=1e-10)
    assert not torch.allclose(g.attention_gauge(attn, gl, keys="same")(x, positions=pos), out, atol=1e-4)
    with pytest.raises(ValueError, match=r"a must be \(4, 4\) or \(2, 4, 4\)"):
        g.attention_gauge(attn, torch.eye(3, dtype=D))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_gl_action_refuses_a_non_finite_group_element(bad):
    u, v = torch.ones(2, 2, dtype=D), torch.ones(3, 2, dtype=D)
    a = torch.eye(2, dtype=D)
    a[0, 1] = bad
    with pytest.raises(ValueError, match="non-finite entries"):
        g.gl_action(u, v, a)


def test_gl_action_refuses_a_numerically_singular_group_element():
    """A rank-one A whose LU pivots are round-off, not exact zeros, is still refused (no 1e16-sized output)."""
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(3, 1, dtype=D, generator=gen), torch.randn(1, 3, dtype=D, generator=gen)
    rank_one = x @ y + x @ (y * 1e-17)  # singular in exact arithmetic; not an exact zero pivot in float64
    u, v = torch.randn(4, 3, dtype=D, generator=gen), torch.randn(5, 3, dtype=D, generator=gen)
    with pytest.raises(ValueError, match="A is singular"):
        g.gl_action(u, v, rank_one)
    ua, va = g.gl_action(u, v, g.random_gl(3, seed=1, cond=1e8))  # badly conditioned but invertible: accepted
    assert torch.allclose(ua @ va.T, u @ v.T, rtol=1e-6, atol=1e-6)


def test_gauge_actions_name_mismatched_dtypes():
    u32, v32 = torch.ones(2, 2), torch.ones(3, 2)
    with pytest.raises(TypeError, match="A has dtype torch.float64 but the factors U and V have torch.float32"):
        g.gl_action(u32, v32, torch.eye(2, dtype=D))
    with pytest.raises(TypeError, match="Q has dtype torch.float32 but the factors U and V have torch.float64"):
        g.orth_action(u32.double(), v32.double(), torch.eye(2))
    with pytest.raises(TypeError, match="one floating dtype"):
        g.gl_action(u32.double(), v32.double(), torch.eye(2, dtype=torch.int64))


@pytest.mark.parametrize("lr, eps, err", [
    (0.1, -0.5, ValueError), (0.1, -1.0, ValueError), (0.1, 0.0, ValueError), (math.nan, 1e-8, ValueError),
    (0.1, math.nan, ValueError), (math.inf, 1e-8, ValueError), (-0.1, 1e-8, ValueError), ("0.1", 1e-8, TypeError),
])
def test_witness_products_refuse_values_outside_the_stated_ranges(lr, eps, err):
    with pytest.raises(err, match="lr|eps"):
        g.witness_products(lr, eps)


@pytest.mark.parametrize("eps", [-0.5, 0.0, math.nan, math.inf])
def test_witness_crossing_refuses_a_bad_eps(eps):
    with pytest.raises(ValueError, match="eps must be"):
        g.witness_crossing(eps)


def test_witness_products_at_zero_lr_is_the_start():
    assert g.witness_products(0.0, 1e-8) == (1.0, 1.0)  # no step: both products stay at W0 = 1


def test_group_element_inputs():
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        g.random_orthogonal(0)
    with pytest.raises(ValueError, match="cond must be >= 1"):
        g.random_gl(3, cond=0.5)
    with pytest.raises(ValueError, match="singular"):
        g.gl_action(torch.ones(2, 2, dtype=D), torch.ones(3, 2, dtype=D), torch.zeros(2, 2, dtype=D))
    with pytest.raises(ValueError, match="must be 3 x 3"):
        g.orth_action(torch.ones(2, 3, dtype=D), torch.ones(2, 3, dtype=D), torch.eye(2, dtype=D))
    with pytest.raises(ValueError, match="share their column count"):
        g.represented(torch.ones(2, 3), torch.ones(2, 2))
    with pytest.raises(ValueError, match="permutation"):
        g.signed_permutation([0, 0], [1, 1])
    with pytest.raises(ValueError, match=r"cos must lie in \[-1, 1\]"):
        g.plane_rotation(2, 1.5)
    assert g.is_orthogonal(g.random_gl(4, cond=1.0), tol=1e-12)
