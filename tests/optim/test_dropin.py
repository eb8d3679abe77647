"""ftipbook's optimizers as drop-ins for torch.optim (issue 11, point 4).

``amsgrad`` and ``maximize`` match ``torch.optim`` bit for bit on the CPU (the kernels follow its
single-tensor order; negation and the running maximum are exact), over several steps, with
weight decay on and off, in float32 and float64. The execution flags are accepted where they
cannot change the result and refused by name otherwise. A ``torch.optim`` state dict loads into
the same-named ftipbook optimizer and the two continue identically; a state dict of another
algorithm is refused with a message naming both.
"""
from __future__ import annotations

import pytest
import torch

from ftipbook.optim import torch_optim as ours
from ftipbook.optim.functional import adam
from ftipbook.optim.hyperparams import AdamConfig, AdamWConfig, SGDConfig

SHAPES = [(6, 4), (7,), (3, 9)]
MATRIX_SHAPES = [(6, 4), (3, 9)]
STEPS = 12
DTYPES = [torch.float32, torch.float64]

#: (id, ftipbook class, torch class, keyword arguments, shapes); each runs with weight decay on and off.
DROPIN = [
    ("SGD", ours.SGD, torch.optim.SGD, dict(lr=0.05, maximize=True), SHAPES),
    ("SGD+momentum", ours.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.1, maximize=True), SHAPES),
    ("SGD+nesterov", ours.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True), SHAPES),
    ("Adam+amsgrad", ours.Adam, torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.95), amsgrad=True), SHAPES),
    ("Adam+maximize", ours.Adam, torch.optim.Adam, dict(lr=0.01, maximize=True), SHAPES),
    ("Adam+both", ours.Adam, torch.optim.Adam, dict(lr=0.01, amsgrad=True, maximize=True), SHAPES),
    ("AdamW+amsgrad", ours.AdamW, torch.optim.AdamW, dict(lr=0.01, betas=(0.9, 0.99), amsgrad=True), SHAPES),
    ("AdamW+both", ours.AdamW, torch.optim.AdamW, dict(lr=0.01, amsgrad=True, maximize=True), SHAPES),
    ("RMSprop+maximize", ours.RMSprop, torch.optim.RMSprop, dict(lr=0.01, alpha=0.9, maximize=True), SHAPES),
    ("RMSprop+all", ours.RMSprop, torch.optim.RMSprop,
     dict(lr=0.01, momentum=0.5, centered=True, maximize=True), SHAPES),
    ("Adafactor+maximize", ours.Adafactor, torch.optim.Adafactor, dict(lr=0.02, maximize=True), SHAPES),
]
IDS = [c[0] for c in DROPIN]


def _problem(shapes, dtype, steps=STEPS, seed=0):
    gen = torch.Generator().manual_seed(seed)
    params = [torch.randn(*s, generator=gen, dtype=torch.float64).to(dtype) for s in shapes]
    grads = [[torch.randn(*s, generator=gen, dtype=torch.float64).to(dtype) for s in shapes] for _ in range(steps)]
    # shrink some gradients late on, so amsgrad's running maximum differs from the moment itself
    for t in range(steps // 2, steps):
        grads[t] = [g * 0.05 for g in grads[t]]
    return params, grads


def _run(opt, params, grads):
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = g.clone()
        opt.step()


def _leaves(params):
    return [p.clone().requires_grad_() for p in params]


def _assert_identical(a, b):
    for x, y in zip(a, b):
        assert torch.equal(x.detach(), y.detach()), float((x.detach() - y.detach()).abs().max())


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("decay", [0.0, 0.05], ids=["nodecay", "decay"])
@pytest.mark.parametrize("name,cls,ref,kw,shapes", DROPIN, ids=IDS)
def test_torch_keywords_give_torch_trajectory(name, cls, ref, kw, shapes, decay, dtype):
    params, grads = _problem(shapes, dtype)
    mine, theirs = _leaves(params), _leaves(params)
    kw = {**kw, "weight_decay": decay}
    _run(cls(mine, **kw), mine, grads)
    _run(ref(theirs, **kw), theirs, grads)
    _assert_identical(mine, theirs)


def test_amsgrad_and_maximize_change_the_trajectory():
    params, grads = _problem(SHAPES, torch.float64)
    runs = {}
    for kw in ({}, {"amsgrad": True}, {"maximize": True}):
        ps = _leaves(params)
        _run(ours.Adam(ps, lr=0.01, **kw), ps, grads)
        runs[tuple(kw)] = ps
    for key in (("amsgrad",), ("maximize",)):
        assert not all(torch.equal(a, b) for a, b in zip(runs[()], runs[key])), key


def test_amsgrad_keeps_the_running_maximum_in_state():
    params, grads = _problem([(5,)], torch.float64)
    ps = _leaves(params)
    opt = ours.Adam(ps, amsgrad=True)
    _run(opt, ps, grads)
    state = opt.state[ps[0]]
    assert torch.all(state["max_exp_avg_sq"] >= state["exp_avg_sq"])
    assert not torch.equal(state["max_exp_avg_sq"], state["exp_avg_sq"])


def test_functional_map_honours_amsgrad_and_maximize():
    params, grads = _problem([(4, 3)], torch.float64, steps=3)
    ref = _leaves(params)
    torch_opt = torch.optim.Adam(ref, lr=0.01, amsgrad=True, maximize=True)
    state, current = None, params
    for gs in grads:
        current, state = adam(current, state, gs, AdamConfig(lr=0.01, amsgrad=True, maximize=True))
        ref[0].grad = gs[0].clone()
        torch_opt.step()
    _assert_identical(current, ref)


def test_new_flags_stay_out_of_the_repr_until_set():
    assert repr(AdamWConfig(lr=0.01)) == ("AdamWConfig(lr=0.01, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01, "
                                          "decoupled_weight_decay=True)")
    assert repr(SGDConfig(maximize=True)).endswith("weight_decay=0.0, maximize=True)")
    assert "amsgrad=True" in repr(AdamConfig(amsgrad=True))


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_flags_must_be_booleans(value):
    with pytest.raises(TypeError, match="maximize"):
        ours.Adam([torch.zeros(2, requires_grad=True)], maximize=value)
    with pytest.raises(TypeError, match="amsgrad"):
        ours.AdamW([torch.zeros(2, requires_grad=True)], amsgrad=value)


# ---------------------------------------------------------------------------------------------
# Execution flags
# ---------------------------------------------------------------------------------------------
ACCEPTED = [
    (ours.SGD, dict(foreach=None)), (ours.SGD, dict(foreach=True, fused=False, differentiable=False)),
    (ours.SGD, dict(foreach=False, fused=None)),
    (ours.Adam, dict(foreach=True, fused=None, capturable=False, differentiable=False)),
    (ours.AdamW, dict(foreach=False, fused=False, capturable=False, differentiable=False)),
    (ours.RMSprop, dict(foreach=True, capturable=False, differentiable=False)),
    (ours.Adafactor, dict(foreach=True)),
]


@pytest.mark.parametrize("cls,flags", ACCEPTED, ids=[f"{c.__name__}-{sorted(f)}" for c, f in ACCEPTED])
def test_execution_flags_that_cannot_change_the_result_are_accepted(cls, flags):
    params, grads = _problem(SHAPES, torch.float64, steps=4)
    plain, flagged = _leaves(params), _leaves(params)
    _run(cls(plain, lr=0.01), plain, grads)
    opt = cls(flagged, lr=0.01, **flags)
    _run(opt, flagged, grads)
    _assert_identical(plain, flagged)
    assert not set(flags) & set(opt.param_groups[0])


REFUSED = [
    (ours.SGD, "fused"), (ours.SGD, "differentiable"),
    (ours.Adam, "fused"), (ours.Adam, "capturable"), (ours.Adam, "differentiable"),
    (ours.AdamW, "fused"), (ours.AdamW, "capturable"), (ours.AdamW, "differentiable"),
    (ours.RMSprop, "capturable"), (ours.RMSprop, "differentiable"),
]


@pytest.mark.parametrize("cls,flag", REFUSED, ids=[f"{c.__name__}-{f}" for c, f in REFUSED])
def test_execution_flags_that_would_change_the_result_are_refused_by_name(cls, flag):
    with pytest.raises(ValueError, match=rf"{flag}=True is not supported .*use {flag}=False"):
        cls([torch.zeros(3, requires_grad=True)], **{flag: True})
    with pytest.raises(ValueError, match=rf"{flag}=True"):
        cls([{"params": [torch.zeros(3, requires_grad=True)], flag: True}])


@pytest.mark.parametrize("cls,flag", [(ours.Adafactor, "fused"), (ours.Muon, "foreach"), (ours.RMSprop, "fused"),
                                      (ours.Lion, "foreach")])
def test_flags_the_torch_namesake_does_not_take_stay_unknown(cls, flag):
    with pytest.raises(TypeError, match=flag):
        cls([torch.zeros(3, 3, requires_grad=True)], **{flag: False})


def test_execution_flag_values_are_checked():
    with pytest.raises(TypeError, match="foreach must be None, True or False"):
        ours.Adam([torch.zeros(3, requires_grad=True)], foreach="yes")


# ---------------------------------------------------------------------------------------------
# State dicts
# ---------------------------------------------------------------------------------------------
RESUME = [
    ("SGD", ours.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, weight_decay=0.01), SHAPES),
    ("SGD-plain", ours.SGD, torch.optim.SGD, dict(lr=0.05, maximize=True), SHAPES),
    ("Adam", ours.Adam, torch.optim.Adam, dict(lr=0.01, weight_decay=0.1), SHAPES),
    ("Adam+amsgrad", ours.Adam, torch.optim.Adam, dict(lr=0.01, amsgrad=True, maximize=True), SHAPES),
    ("AdamW", ours.AdamW, torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1, amsgrad=True), SHAPES),
    ("RMSprop", ours.RMSprop, torch.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True), SHAPES),
    ("Adafactor", ours.Adafactor, torch.optim.Adafactor, dict(lr=0.02, weight_decay=0.1), SHAPES),
    ("Muon", ours.Muon, torch.optim.Muon, dict(lr=0.02, weight_decay=0.1), MATRIX_SHAPES),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name,cls,ref,kw,shapes", RESUME, ids=[c[0] for c in RESUME])
def test_torch_state_dict_loads_and_continues_identically(name, cls, ref, kw, shapes, dtype):
    params, grads = _problem(shapes, dtype, steps=10)
    theirs = _leaves(params)
    torch_opt = ref(theirs, **kw)
    _run(torch_opt, theirs, grads[:5])
    mine = [p.detach().clone().requires_grad_() for p in theirs]
    # ftipbook's defaults differ (Muon's ns_dtype); the loaded hyperparameters must win
    my_opt = cls(mine) if name != "Muon" else cls(mine, lr=0.5)
    my_opt.load_state_dict(torch_opt.state_dict())
    _run(torch_opt, theirs, grads[5:])
    _run(my_opt, mine, grads[5:])
    _assert_identical(mine, theirs)
    assert all(isinstance(s["step"], int) for s in my_opt.state.values() if "step" in s)


def test_own_state_dict_round_trips():
    params, grads = _problem(SHAPES, torch.float64, steps=8)
    a = _leaves(params)
    opt_a = ours.Adam(a, lr=0.01, amsgrad=True)
    _run(opt_a, a, grads[:4])
    b = [p.detach().clone().requires_grad_() for p in a]
    opt_b = ours.Adam(b)
    opt_b.load_state_dict(opt_a.state_dict())
    assert opt_b.param_groups[0]["amsgrad"] is True
    _run(opt_a, a, grads[4:])
    _run(opt_b, b, grads[4:])
    _assert_identical(a, b)


def _sd(cls, shape=(3, 3), **kw):
    p = torch.zeros(*shape, requires_grad=True)
    opt = cls([p], **kw)
    p.grad = torch.ones(*shape)
    opt.step()
    return opt.state_dict()


OTHER = [
    (ours.Adam, _sd(torch.optim.SGD, lr=0.1, momentum=0.9), "torch.optim.SGD", "'adam'"),
    (ours.Adam, _sd(ours.SGD, lr=0.1, momentum=0.9), "ftipbook's 'sgd'", "'adam'"),
    (ours.SGD, _sd(ours.Adam), "ftipbook's 'adam'", "'sgd'"),
    (ours.SGD, _sd(torch.optim.Adam), "torch.optim.Adam/AdamW", "'sgd'"),
    (ours.AdamW, _sd(ours.Adam), "ftipbook's 'adam'", "'adamw'"),
    (ours.RMSprop, _sd(torch.optim.Adafactor), "torch.optim.Adafactor", "'rmsprop'"),
    (ours.Muon, _sd(torch.optim.AdamW), "torch.optim.Adam/AdamW", "'muon'"),
    (ours.Adafactor, _sd(ours.Lion), "ftipbook's 'lion'", "'adafactor'"),
]


@pytest.mark.parametrize("cls,state_dict,saved,runs", OTHER, ids=[f"{c.__name__}<-{s}" for c, _, s, _ in OTHER])
def test_state_dict_of_another_algorithm_is_refused_naming_both(cls, state_dict, saved, runs):
    p = torch.zeros(3, 3, requires_grad=True)
    opt = cls([p])
    before = opt.state_dict()
    with pytest.raises(ValueError, match="another algorithm") as err:
        opt.load_state_dict(state_dict)
    assert saved in str(err.value) and f"runs {runs}" in str(err.value)
    assert opt.state_dict() == before


def test_grouped_optimizer_checks_each_group():
    a, b = torch.zeros(3, 3, requires_grad=True), torch.zeros(3, requires_grad=True)
    opt = ours.GroupedOptimizer([{"params": [a], "algorithm": "muon"}, {"params": [b], "algorithm": "adamw"}])
    swapped = ours.GroupedOptimizer([{"params": [a], "algorithm": "adamw"}, {"params": [b], "algorithm": "adamw"}])
    with pytest.raises(ValueError, match="group 0 was saved by ftipbook's 'adamw'.*runs 'muon'"):
        opt.load_state_dict(swapped.state_dict())
    opt.load_state_dict(opt.state_dict())


def test_torch_state_dict_with_a_refused_flag_is_refused():
    p = torch.zeros(3, requires_grad=True)
    state_dict = torch.optim.Adam([p], fused=True).state_dict()
    with pytest.raises(ValueError, match="fused=True is not supported"):
        ours.Adam([p]).load_state_dict(state_dict)


@pytest.mark.parametrize("bad,match", [
    ([], "state_dict must be a mapping"),
    ({"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]}, "2 param group"),
    ({"state": {}, "param_groups": [{"params": [0], "lr": 0.1}]}, "names no 'algorithm'"),
    ({"state": {}, "param_groups": [{"params": [0], "algorithm": "adam", "lr": 0.1, "betas": (0.9, 0.9),
                                     "bogus": 1}]}, r"\['bogus'\]"),
    ({"state": {}, "param_groups": [{"params": [0], "algorithm": "adam", "lr": -1.0}]}, "lr must be >= 0"),
])
def test_malformed_state_dicts_get_clear_errors(bad, match):
    with pytest.raises((TypeError, ValueError), match=match):
        ours.Adam([torch.zeros(3, requires_grad=True)]).load_state_dict(bad)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_adam_state_dict_loaded_into_adamw_stays_adamw_as_torch_does(dtype):
    """torch.optim.AdamW forces decoupled decay on every loaded group (issue 25): an Adam state dict
    with L2 decay continues as AdamW in torch, so it must in ftipbook too."""
    params, grads = _problem(SHAPES, dtype, steps=8)
    source = _leaves(params)
    adam = torch.optim.Adam(source, lr=0.01, weight_decay=0.1)
    _run(adam, source, grads[:4])
    theirs = [p.detach().clone().requires_grad_() for p in source]
    mine = [p.detach().clone().requires_grad_() for p in source]
    torch_opt, my_opt = torch.optim.AdamW(theirs), ours.AdamW(mine)
    torch_opt.load_state_dict(adam.state_dict())
    my_opt.load_state_dict(adam.state_dict())
    assert torch_opt.param_groups[0]["decoupled_weight_decay"] is True
    assert my_opt.param_groups[0]["decoupled_weight_decay"] is True
    _run(torch_opt, theirs, grads[4:])
    _run(my_opt, mine, grads[4:])
    _assert_identical(mine, theirs)


@pytest.mark.parametrize("value", [False, True])
def test_adamw_takes_no_decoupled_weight_decay_argument_as_torch(value):
    p = [torch.zeros(2, requires_grad=True)]
    with pytest.raises(TypeError, match="decoupled_weight_decay"):
        torch.optim.AdamW(p, decoupled_weight_decay=value)
    with pytest.raises(TypeError, match="decoupled_weight_decay"):
        ours.AdamW(p, decoupled_weight_decay=value)
    with pytest.raises(ValueError, match="decoupled_weight_decay=False"):
        AdamWConfig(decoupled_weight_decay=False)
    with pytest.raises(ValueError, match="decoupled_weight_decay=False"):
        ours.GroupedOptimizer([{"params": p, "algorithm": "adamw", "decoupled_weight_decay": False}])
