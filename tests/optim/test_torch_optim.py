"""The torch.optim classes: state_dict round trips, checkpoints, Muon routing, devices."""
from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from ftipbook.model import ModelConfig, build_model
from ftipbook.optim import torch_optim as ours
from ftipbook.optim.checkpoint import load_optimizer, save_optimizer
from ftipbook.optim.functional import OPTIMIZERS
from ftipbook.optim.hyperparams import AdamWConfig, MuonConfig

SHAPES = [(5, 3), (4, 3)]


def _grads(steps, seed=0, shapes=SHAPES):
    gen = torch.Generator().manual_seed(seed)
    return [[torch.randn(*s, generator=gen, dtype=torch.float64) for s in shapes] for _ in range(steps)]


def _start(seed=7, shapes=SHAPES):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=gen, dtype=torch.float64) for s in shapes]


def _apply(opt, params, grads):
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = g.clone()
        opt.step()


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_state_dict_round_trip_resumes_exactly(name, tmp_path):
    """Stop after 6 steps, restore state into a fresh optimizer (in memory and from safetensors), continue:
    the result equals an uninterrupted 12-step run bit for bit."""
    grads = _grads(12)
    full = [p.clone().requires_grad_() for p in _start()]
    _apply(ours.FunctionalOptimizer(full, algorithm=name, lr=0.01), full, grads)

    first = [p.clone().requires_grad_() for p in _start()]
    opt = ours.FunctionalOptimizer(first, algorithm=name, lr=0.01)
    _apply(opt, first, grads[:6])
    saved = opt.state_dict()
    save_optimizer(opt, tmp_path / "opt.safetensors")
    for source in ("memory", "file"):
        resumed = [p.detach().clone().requires_grad_() for p in first]
        fresh = ours.FunctionalOptimizer(resumed, algorithm=name, lr=0.5)  # lr restored from the state
        if source == "memory":
            fresh.load_state_dict(saved)
        else:
            load_optimizer(fresh, tmp_path / "opt.safetensors")
        assert fresh.param_groups[0]["lr"] == 0.01
        _apply(fresh, resumed, grads[6:])
        for a, b in zip(resumed, full):
            assert torch.equal(a.detach(), b.detach()), name


def test_checkpoint_holds_no_pickle_and_works_for_torch_optimizers(tmp_path):
    params = [p.clone().requires_grad_() for p in _start()]
    opt = torch.optim.Adam(params, lr=0.01)
    _apply(opt, params, _grads(3))
    save_optimizer(opt, tmp_path / "adam.safetensors")
    raw = (tmp_path / "adam.safetensors").read_bytes()
    assert b"\x80\x04" not in raw[:64] and raw[8:9] == b"{"  # a safetensors JSON header, not a pickle stream
    other = torch.optim.Adam([p.detach().clone().requires_grad_() for p in params], lr=0.3)
    load_optimizer(other, tmp_path / "adam.safetensors")
    st_a, st_b = opt.state_dict(), other.state_dict()
    assert st_b["param_groups"][0]["lr"] == 0.01
    for k in st_a["state"]:
        for key, value in st_a["state"][k].items():
            assert torch.equal(value, st_b["state"][k][key])
    with pytest.raises(ValueError, match="not an ftipbook optimizer checkpoint"):
        from safetensors.torch import save_file

        save_file({"x": torch.zeros(1)}, str(tmp_path / "plain.safetensors"))
        load_optimizer(other, tmp_path / "plain.safetensors")


def test_muon_refuses_non_matrices_and_names_the_helper():
    with pytest.raises(ValueError, match="muon_adamw_param_groups"):
        ours.Muon([torch.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="2-D matrices only"):
        ours.Muon([torch.zeros(2, 3, 4, requires_grad=True)])
    with pytest.raises(ValueError, match="muon_adamw_param_groups"):
        OPTIMIZERS["muon"]([torch.zeros(4)], None, [torch.ones(4)])
    with pytest.raises(ValueError, match="2-D matrices only"):
        ours.Shampoo([torch.zeros(3, requires_grad=True)])


def _tiny_lm(**overrides):
    cfg = ModelConfig(**{**dict(vocab_size=53, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64,
                                max_seq_len=32, pos="learned"), **overrides})
    return build_model(cfg, seed=0)


@pytest.mark.parametrize("tie", [False, True])
def test_muon_adamw_groups_cover_the_decoder_once(tie):
    model = _tiny_lm(tie_embeddings=tie)
    groups = ours.muon_adamw_param_groups(model, muon=MuonConfig(lr=0.02), adamw=AdamWConfig(lr=3e-3))
    by_id = {id(p): g["algorithm"] for g in groups for p in g["params"]}
    names = dict(model.named_parameters())
    assert len(by_id) == sum(len(g["params"]) for g in groups) == len(names)  # every parameter exactly once
    for name, p in names.items():
        expected = "muon" if p.ndim == 2 and not name.startswith(("embed.", "positions.", "unembed.")) else "adamw"
        assert by_id[id(p)] == expected, name
    assert by_id[id(model.embed.weight)] == by_id[id(model.unembed.weight)] == "adamw"
    assert {g["algorithm"]: g["lr"] for g in groups} == {"muon": 0.02, "adamw": 3e-3}


def test_muon_adamw_needs_names_for_other_models():
    with pytest.raises(TypeError, match="give adamw_names"):
        ours.muon_adamw_param_groups(torch.nn.Linear(3, 3))
    groups = ours.muon_adamw_param_groups(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)),
                                          adamw_names=("1.",))
    assert [len(g["params"]) for g in groups] == [1, 3]


def test_grouped_muon_adamw_trains_a_decoder():
    """One GroupedOptimizer drives both groups; the loss on a fixed batch falls, and Muon's state sits only
    on matrices while AdamW's sits on the rest."""
    torch.manual_seed(0)
    model = _tiny_lm()
    tokens = torch.randint(0, 53, (4, 17), generator=torch.Generator().manual_seed(1))
    opt = ours.GroupedOptimizer(ours.muon_adamw_param_groups(model, muon=MuonConfig(lr=0.02),
                                                             adamw=AdamWConfig(lr=3e-3)))
    losses = []
    for _ in range(15):
        loss = F.cross_entropy(model(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.8 * losses[0]
    for group in opt.param_groups:
        for p in group["params"]:
            keys = set(opt.state[p]) - {"step"}
            assert keys == ({"momentum_buffer"} if group["algorithm"] == "muon" else {"exp_avg", "exp_avg_sq"})


def test_pure_maps_do_not_touch_their_inputs():
    params, grads = _start(), _grads(1)[0]
    kept = [p.clone() for p in params]
    for name, spec in OPTIMIZERS.items():
        new, state = spec(params, None, grads)
        again, _ = spec(new, state, grads)
        assert all(torch.equal(a, b) for a, b in zip(params, kept)), name
        assert not any(torch.equal(a, b) for a, b in zip(new, params)), name
        assert all(x.data_ptr() != y.data_ptr() for x, y in zip(new, again))


def test_pure_map_input_errors():
    spec = OPTIMIZERS["adam"]
    p = [torch.zeros(2, 2, dtype=torch.float64)]
    with pytest.raises(ValueError, match="got 1 parameters but 2 gradients"):
        spec(p, None, p + p)
    with pytest.raises(ValueError, match="has shape"):
        spec(p, None, [torch.zeros(2, 3, dtype=torch.float64)])
    with pytest.raises(TypeError, match="one floating dtype"):
        spec(p, None, [torch.zeros(2, 2, dtype=torch.float32)])
    with pytest.raises(ValueError, match="non-finite"):
        spec(p, None, [torch.full((2, 2), float("nan"), dtype=torch.float64)])
    with pytest.raises(TypeError, match="adam needs a AdamConfig config, got SGDConfig"):
        from ftipbook.optim.hyperparams import SGDConfig

        spec(p, None, p, SGDConfig())
    with pytest.raises(ValueError, match="ScaledGD updates one factor pair"):
        OPTIMIZERS["scaledgd"](p, None, p)
    with pytest.raises(ValueError, match="rank-deficient"):
        OPTIMIZERS["scaledgd"]([torch.zeros(3, 2, dtype=torch.float64)] * 2, None,
                               [torch.ones(3, 2, dtype=torch.float64)] * 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_cuda_run_matches_cpu(name):
    """Nothing is hard-wired to the CPU: a CUDA run follows the CPU trajectory to float64 round-off."""
    grads = _grads(8)
    runs = {}
    for device in ("cpu", "cuda"):
        params = [p.to(device).requires_grad_() for p in _start()]
        opt = ours.FunctionalOptimizer(params, algorithm=name, lr=0.01)
        _apply(opt, params, [[g.to(device) for g in gs] for gs in grads])
        runs[device] = [p.detach().cpu() for p in params]
        assert all(s.device.type == device for st in opt.state.values() for s in st.values()
                   if isinstance(s, torch.Tensor))
    for a, b in zip(runs["cpu"], runs["cuda"]):
        assert torch.allclose(a, b, rtol=1e-9, atol=1e-10), (name, float((a - b).abs().max()))
