"""Optimizers and optimizer geometry: sections ftip-00AV, ftip-00B6, ftip-00BK and ftip-00BS.

Every update rule is written once (:mod:`~ftipbook.optim.functional`) and used two ways: as a
pure map ``(params, state, grads, config) -> (params, state)`` that chapters reason about, and
as a ``torch.optim.Optimizer`` (:mod:`~ftipbook.optim.torch_optim`) for real training loops.

Where each item's check lives (``g`` = :mod:`~ftipbook.optim.gauge`, ``fa`` =
:mod:`~ftipbook.optim.factored`, ``fl`` = :mod:`~ftipbook.optim.flows`, ``fn`` =
:mod:`~ftipbook.optim.functional`, ``hp`` = :mod:`~ftipbook.optim.hyperparams`, ``ms`` =
:mod:`~ftipbook.optim.msign`, ``sc`` = :mod:`~ftipbook.optim.schedules`, ``to`` =
:mod:`~ftipbook.optim.torch_optim`, ``vo`` = :mod:`ftipbook.viz.optim`)::

    ftip-00AW  fa.FactoredProblem (.represented .loss .grads), fa.quadratic_problem,
               fa.matrix_sensing_problem, g.represented
    ftip-00AX  g.gl_action, g.orth_action, g.random_gl, g.random_orthogonal
    ftip-00AY  g.gl_action, g.represented, FactoredProblem.loss
    ftip-00AZ  g.random_orthogonal, g.orth_action, g.orbit_invariants, g.gl_action (fibre > orbit)
    ftip-00B0  g.gl_action, g.random_gl(cond=...), g.is_orthogonal
    ftip-00B1  FactoredProblem.grads (vs autograd), g.orth_action, g.gl_action
    ftip-00B2  g.state_action, g.missing_actions, g.buffer_collision, fn.OPTIMIZERS[name].actions
    ftip-00B3  g.TrainingIntervention, g.check_gauge_equivariance -> g.GaugeReport, fn.OPTIMIZERS,
               vo.plot_gauge_reports
    ftip-00B4  g.check_gauge_equivariance (report.factors[1]), vo.draw_commuting_square
    ftip-00B5  g.gl_action + fa.run_factored("sgd") (GD is not GL-equivariant); "scaledgd" is
    ftip-00B7  g.is_right_equivariant, g.equivariance_pair, ms.msign_svd, ms.psd_power
    ftip-00B8  fn.sgd / fn.momentum / fn.nesterov, sc.Cosine, g.check_gauge_equivariance
    ftip-00B9  fn.scalar_adam, g.check_gauge_equivariance, g.state_action
    ftip-00BA  fn.muon (hp.MuonConfig momentum_form="sum", orthogonalizer="svd" or NS), fn.shampoo,
               ms.msign_svd, ms.newton_schulz_iterates, g.check_gauge_equivariance
    ftip-00BB  g.equivariance_pair, g.plane_rotation, g.is_right_equivariant
    ftip-00BC  g.first_step_map("adam" | "rmsprop" | "signsgd" | "lion" | "adafactor"),
               g.is_right_equivariant
    ftip-00BD  g.adam_direction, g.adam_gauge_defect, g.signed_permutation, fn.adam
    ftip-00BE  g.represented_defect, fa.run_factored("adam", steps=1)
    ftip-00BF  g.adam_witness, g.witness_products, g.witness_crossing, vo.plot_witness_products
    ftip-00BG  g.equivariance_pair(torch.sign, G, g.witness_rotation()), fn.signsgd
    ftip-00BH  g.gram_factor, g.is_right_equivariant
    ftip-00BI  g.square_gram_function, ms.psd_power, ms.msign_svd
    ftip-00BJ  g.is_right_equivariant(rank=...), ms.msign_svd, FactoredProblem.grads
    ftip-00BL  fl.common_scalar_flow, g.orth_action
    ftip-00BM  fl.effective_clock, fl.invert_clock
    ftip-00BN  fl.reparameterization_gap, vo.plot_reparameterization
    ftip-00BO  fl.gradient_flow, fl.common_scalar_flow, fl.effective_clock
    ftip-00BP  fl.effective_clock, fl.invert_clock, fl.common_scalar_flow
    ftip-00BQ  fn.scalar_adam via fa.run_factored, fl.gradient_flow, fl.distance_to_path
    ftip-00BR  fa.matrix_sensing_problem, fa.run_factored("sgd" | "scaledgd" | "signsgd"),
               sc.LongAnneal, g.check_gauge_equivariance, vo.draw_quadrant
    ftip-00BT  g.gl_action, g.orbit_invariants, g.represented
    ftip-00BU  g.TrainingIntervention, g.is_parameterization_stable (coupled=False breaks it)
    ftip-00BV  g.is_parameterization_stable, g.signed_permutation
    ftip-00BW  g.adam_witness, fa.run_factored("adam", steps=1)
    ftip-00BX  g.attention_gauge, g.random_orthogonal, g.random_gl; ftipbook.viz.plot_attention
    ftip-00BY  g.attention_gauge, to.Adam / to.SGD on a DecoderLM
    ftip-00BZ  g.adam_witness, fa.run_factored("adam" | "sgd"), vo.draw_loss_quotient
    ftip-00C0  g.gl_action, g.attention_gauge, g.square_gram_function
    ftip-00C1  fl.gradient_flow, fl.distance_to_path, fa.run_factored("sgd" | "adam")

Training a ``DecoderLM`` with Muon on hidden matrices and AdamW elsewhere::

    from ftipbook.optim import GroupedOptimizer, muon_adamw_param_groups
    opt = GroupedOptimizer(muon_adamw_param_groups(model))
"""
from ftipbook.optim.factored import (
    FactoredProblem,
    Trajectory,
    matrix_sensing_problem,
    quadratic_problem,
    run_factored,
)
from ftipbook.optim.functional import OPTIMIZERS, OptimizerSpec, OptimizerState
from ftipbook.optim.gauge import (
    GaugeReport,
    TrainingIntervention,
    check_gauge_equivariance,
    gl_action,
    is_parameterization_stable,
    is_right_equivariant,
    orth_action,
    random_gl,
    random_orthogonal,
    represented,
)
from ftipbook.optim.hyperparams import (
    AdafactorConfig,
    AdamConfig,
    AdamWConfig,
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
from ftipbook.optim.msign import msign_svd, newton_schulz
from ftipbook.optim.torch_optim import (
    SGD,
    Adafactor,
    Adam,
    AdamW,
    FunctionalOptimizer,
    GroupedOptimizer,
    Lion,
    Muon,
    RMSprop,
    ScaledGD,
    ScalarAdam,
    Shampoo,
    SignSGD,
    muon_adamw_param_groups,
)

__all__ = [
    "FactoredProblem", "Trajectory", "matrix_sensing_problem", "quadratic_problem", "run_factored",
    "OPTIMIZERS", "OptimizerSpec", "OptimizerState",
    "GaugeReport", "TrainingIntervention", "check_gauge_equivariance", "gl_action", "is_parameterization_stable",
    "is_right_equivariant", "orth_action", "random_gl", "random_orthogonal", "represented",
    "AdafactorConfig", "AdamConfig", "AdamWConfig", "LionConfig", "MomentumConfig", "MuonConfig", "NesterovConfig",
    "RMSpropConfig", "ScaledGDConfig", "ScalarAdamConfig", "SGDConfig", "ShampooConfig", "SignSGDConfig",
    "msign_svd", "newton_schulz",
    "SGD", "Adafactor", "Adam", "AdamW", "FunctionalOptimizer", "GroupedOptimizer", "Lion", "Muon", "RMSprop",
    "ScaledGD", "ScalarAdam", "Shampoo", "SignSGD", "muon_adamw_param_groups",
]
