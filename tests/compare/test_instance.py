"""Model-instance records (ftip-00JH, 00JI, 00JY, 00LT, 00LU): interface checks, architecture refinement,
optimizer records, the (A, O, S) triplet, instance records, attribution, comparability, comparison units."""
import dataclasses
import math
from fractions import Fraction
from types import SimpleNamespace

import pytest
import torch

from ftipbook.compare.cost import UNKNOWN, CostVector, Scalarization, Unknown
from ftipbook.compare.instance import (
    ArchitectureRecord,
    ComparisonUnit,
    InterfaceMismatch,
    MissingField,
    ModelInstanceRecord,
    ModelRecord,
    NextTokenInterface,
    OptimizerRecord,
    RefinedRecord,
    attribution,
    comparable,
    describe_architecture,
    describe_map,
    require_architecture,
)
from ftipbook.compare.records import SystemsRecord, diff_records, missing_fields
from ftipbook.model import ModelConfig, build_model
from ftipbook.model.accounting import param_count
from ftipbook.prob import TableLM
from ftipbook.train import RunRandomness, TrainConfig

CFG = ModelConfig(vocab_size=11, d_model=16, n_layers=2, n_heads=2, d_ff=24, max_seq_len=12)


@pytest.fixture(scope="module")
def model():
    return build_model(CFG, seed=0).eval()


def table(vocab=11, default=True):
    names = tuple(f"t{i}" for i in range(vocab))
    uniform = {n: Fraction(1, vocab) for n in names}
    row = {names[0]: Fraction(1, 3), names[1]: Fraction(2, 3)}
    return TableLM(names, {(names[0],): row}, default=uniform if default else None)


class Fn:
    def __init__(self, fn):
        self.fn = fn

    def next_token_law(self, prefix):
        return self.fn(prefix)


# ---- ftip-00JH: interface and architecture refinement ------------------------------------------
def test_interface_spaces_and_probes():
    i = NextTokenInterface(11, 12)
    probes = i.probes(n=3, seed=5)
    assert [len(p) for p in probes[:2]] == [1, 12] and len(probes) == 5
    assert probes[0][-1] == 0 and probes[1][-1] == 10
    assert all(1 <= len(p) <= 12 and all(0 <= t < 11 for t in p) for p in probes)
    assert probes == i.probes(n=3, seed=5) and probes != i.probes(n=3, seed=6)
    assert "length 1..12" in i.input_space and "length 11" in i.output_space


@pytest.mark.parametrize("kw", [dict(vocab_size=0, context=3), dict(vocab_size=3, context=0),
                                dict(vocab_size=True, context=3), dict(vocab_size=3, context=2.0),
                                dict(vocab_size=UNKNOWN, context=3),
                                dict(vocab_size=3, context=3, output="logits")])
def test_interface_refuses_bad_declarations(kw):
    with pytest.raises(ValueError):
        NextTokenInterface(**kw)


def test_check_accepts_a_network_and_an_exact_table(model):
    i = NextTokenInterface(11, 12)
    assert i.check(model) == 6
    assert i.check(table()) == 6
    assert i.check(table(), [(0,), (1, 2)]) == 2


@pytest.mark.parametrize("fn, match", [
    (lambda p: [0.5] * 11, "do not sum to 1"),
    (lambda p: [1.0] + [0.0] * 9, "10 values"),
    (lambda p: [2.0, -1.0] + [0.0] * 9, "negative"),
    (lambda p: [math.nan] * 11, "non-finite"),
    (lambda p: [Fraction(1, 11)] * 10 + [Fraction(1, 12)], "do not sum to 1"),
])
def test_check_refuses_maps_that_are_not_distributions(fn, match):
    with pytest.raises(InterfaceMismatch, match=match):
        NextTokenInterface(11, 12).check(Fn(fn))


def test_check_tolerance_for_floats_only():
    almost = Fn(lambda p: [1 / 11 + 1e-12] * 11)
    assert NextTokenInterface(11, 4).check(almost) == 6
    with pytest.raises(InterfaceMismatch):
        NextTokenInterface(11, 4).check(almost, atol=1e-14)


def test_check_wraps_a_refusal_of_the_map_and_rejects_prefixes_outside_x(model):
    with pytest.raises(InterfaceMismatch, match="refused the length-1 prefix"):
        NextTokenInterface(11, 4).check(table(default=False), [(3,)])
    with pytest.raises(ValueError, match="not in X"):
        NextTokenInterface(11, 4).check(model, [(1, 2, 3, 4, 5)])
    with pytest.raises(ValueError, match="not in X"):
        NextTokenInterface(11, 4).check(model, [(11,)])
    with pytest.raises(TypeError, match="next_token_law"):
        NextTokenInterface(11, 4).check(object())


def test_architecture_record_refines_and_forgets(model):
    M = ModelRecord("net", NextTokenInterface(11, 12), "sha256:ab")
    A = ArchitectureRecord.of(M, model)
    assert A.forget() is M and A.input_space.startswith("int64 token ids")
    assert A.to_dict()["map"] == "<live DecoderLM>" and dict(A.rows())["map"] == "<live DecoderLM>"
    B = ArchitectureRecord.of(ModelRecord("table", NextTokenInterface(11, 12)), table())
    assert B.description.startswith("TableLM: 2 table rows")
    assert [c.path for c in diff_records(A, B)] == ["model.name", "model.checkpoint", "input_space",
                                                    "output_space", "description", "map"]
    assert A == ArchitectureRecord.of(M, build_model(CFG, seed=0))  # equality ignores the map object


def test_architecture_record_refuses_a_map_of_another_interface(model):
    with pytest.raises(InterfaceMismatch, match="vocab_size=12"):
        ArchitectureRecord.of(ModelRecord("x", NextTokenInterface(12, 12)), model)
    with pytest.raises(ValueError, match="family label"):
        ArchitectureRecord(ModelRecord("x", NextTokenInterface(11, 12)), "ids", "laws", "Transformer", model)
    with pytest.raises(ValueError, match="input_space=UNKNOWN must be a string"):
        ArchitectureRecord(ModelRecord("x", NextTokenInterface(11, 12)), UNKNOWN, "laws", "net", model)
    with pytest.raises(TypeError, match="ModelRecord"):
        ArchitectureRecord("x", "ids", "laws", "net", model)
    with pytest.raises(TypeError, match="describe_map"):
        describe_map(Fn(lambda p: p))
    with pytest.raises(TypeError, match="NextTokenInterface"):
        ModelRecord("x", (11, 12))
    with pytest.raises(ValueError, match="ModelRecord.name=UNKNOWN must be a string"):
        ModelRecord(UNKNOWN, NextTokenInterface(11, 12))
    looped = build_model(dataclasses.replace(CFG, n_layers=1, n_loops=2), seed=0)
    assert describe_map(looped)[2].endswith("block stack applied 2 times")


def test_require_architecture(model):
    M = ModelRecord("net", NextTokenInterface(11, 12))
    A = ArchitectureRecord.of(M, model)
    assert require_architecture(A, "cache") is A
    assert require_architecture(RefinedRecord(architecture=A), "cache") is A
    for record in (M, RefinedRecord(), SystemsRecord()):
        with pytest.raises(MissingField) as err:
            require_architecture(record, "cache bytes")
        assert err.value.field == "architecture" and err.value.claim == "cache bytes"
    assert issubclass(MissingField, ValueError)
    with pytest.raises(TypeError):
        require_architecture("A", "cache")


# ---- ftip-00JI: optimizer records and the triplet ---------------------------------------------
def steps(model, opt, n):
    for k in range(n):
        x = torch.arange(k, k + 8)[None] % CFG.vocab_size
        loss = torch.nn.functional.cross_entropy(model(x[:, :-1])[0], x[0, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad()


def test_adam_state_bytes_by_hand():
    m = build_model(CFG, seed=1).train()
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    steps(m, opt, 2)
    O = OptimizerRecord.capture(opt, m)
    n = len(list(m.parameters()))
    assert O.state_bytes == 2 * param_count(CFG) * 4 + 4 * n
    assert O.algorithm == "torch.optim.Adam" and O.steps == 2 and missing_fields(O) == ()
    assert O.update_rule == "group 0: adam (exp_avg, exp_avg_sq, step)"
    names = {e.parameter for e in O.state}
    assert names == {k for k, _ in m.named_parameters()}
    assert ("exp_avg", n, param_count(CFG), "float32", 4 * param_count(CFG)) in O.state_summary()
    assert "lr=0.001" in O.hyperparameters[0] and "betas=(0.9, 0.999)" in O.hyperparameters[0]
    assert "exp_avg x" in dict(O.rows())["state"]


def test_capture_without_model_names_and_float64_and_groups():
    m = build_model(CFG, seed=1).double().train()
    params = list(m.parameters())
    opt = torch.optim.SGD([{"params": params[:3]}, {"params": params[3:], "lr": 0.5}], lr=0.1, momentum=0.9)
    steps(m, opt, 1)
    O = OptimizerRecord.capture(opt)
    assert O.state_bytes == 8 * param_count(CFG) and {e.dtype for e in O.state} == {"float64"}
    assert O.state[0].parameter == "group0.param0" and O.state[-1].parameter.startswith("group1.")
    assert len(O.hyperparameters) == 2 and "lr=0.5" in O.hyperparameters[1]
    assert isinstance(O.steps, Unknown) and missing_fields(O) == ("steps",)


def test_capture_before_any_step_and_ftipbook_optimizers():
    from ftipbook.optim.torch_optim import Adam

    m = build_model(CFG, seed=1).train()
    opt = Adam(m.parameters(), lr=1e-3)
    O0 = OptimizerRecord.capture(opt, m)
    assert O0.state == () and isinstance(O0.steps, Unknown) and "no state yet" in O0.update_rule
    steps(m, opt, 3)
    O = OptimizerRecord.capture(opt, m)
    assert O.steps == 3 and O.algorithm == "ftipbook.optim.torch_optim.Adam"
    assert {e.dtype for e in O.state if e.name == "step"} == {"int"}
    assert O.state_bytes == 2 * 4 * param_count(CFG)
    assert O.setting.startswith("ftipbook.optim.torch_optim.Adam: group 0: algorithm=adam")


def test_optimizer_record_validation():
    with pytest.raises(TypeError, match="torch.optim.Optimizer"):
        OptimizerRecord.capture("adam")
    with pytest.raises(ValueError, match="steps"):
        OptimizerRecord(steps=-1)
    with pytest.raises(TypeError, match="StateEntry"):
        OptimizerRecord(state=("exp_avg",))


def test_triplet_is_descriptive(model):
    A = ArchitectureRecord.of(ModelRecord("net", NextTokenInterface(11, 12)), model)
    S = SystemsRecord.capture(model, batch=1, cache_policy="none", prompt_length=4, new_tokens=0, warmup=0)
    t, u = RefinedRecord(A, UNKNOWN, S), RefinedRecord(A)
    for attempt in (lambda: t < u, lambda: t <= u, lambda: t > u, lambda: t >= u, lambda: t > 0.5,
                    lambda: 1 <= t, lambda: sorted([t, u]), lambda: float(t), lambda: int(t)):
        with pytest.raises(TypeError):
            attempt()
    assert t == RefinedRecord(A, UNKNOWN, S) and t != u
    assert missing_fields(u) == ("architecture.model.checkpoint", "optimizer", "systems")
    with pytest.raises(TypeError, match="OptimizerRecord"):
        RefinedRecord(A, "adamw")


# ---- ftip-00JY, 00LT: instance records --------------------------------------------------------
def costs(train=1e9, decode=2e4):
    return (CostVector({"train_flops": train}, {"train_flops": "FLOP"}),
            CostVector({"decode_flops": decode, "energy": UNKNOWN}, {"decode_flops": "FLOP", "energy": "J"}))


def record(name="a", **kw):
    train, infer = costs()
    base = dict(architecture="2 layers AA: MHA (rope)", checkpoint=f"sha256:{name}", parameters=100, data="corpus",
                tokens=1000, updates=10, post_training="none", optimizer="adamw", precision="float32",
                hardware="cpu", software="torch", kernels="A: torch SDPA", cache_policy="preallocated",
                inference_budget="greedy", train_cost=train, inference_cost=infer, task_suite="suite",
                evaluation_law="nll", eval_seed=7)
    return ModelInstanceRecord(name, **(base | kw))


def test_instance_record_validation():
    with pytest.raises(ValueError, match="family label"):
        record(architecture="Transformer")
    with pytest.raises(ValueError, match="parameters"):
        record(parameters=0)
    with pytest.raises(ValueError, match="eval_seed"):
        record(eval_seed=-1)
    with pytest.raises(TypeError, match="CostVector"):
        record(train_cost=3.0)
    with pytest.raises(ValueError, match="one name"):
        record(inference_cost=CostVector({"train_flops": 1.0}, {"train_flops": "FLOP"}))
    with pytest.raises(ValueError, match="ModelInstanceRecord.name=UNKNOWN must be a string"):
        ModelInstanceRecord(UNKNOWN)
    with pytest.raises(ValueError, match="optimizer"):
        record(optimizer="")


def test_cost_joins_both_vectors():
    r = record()
    assert r.cost.names == ("train_flops", "decode_flops", "energy") and r.cost["train_flops"] == 1e9
    assert isinstance(dataclasses.replace(r, train_cost=UNKNOWN).cost, Unknown)


def test_capture_from_live_objects(model):
    cfg = TrainConfig(steps=5, batch_size=2, seq_len=8, schedule="cosine")
    randomness = RunRandomness(1, 2, 3, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    systems = SystemsRecord.capture(model, batch=1, cache_policy="preallocated", prompt_length=4, new_tokens=4,
                                    warmup=0)
    train, infer = costs()
    kw = dict(data="toy", post_training="none", train_cost=train, inference_cost=infer, task_suite="suite",
              evaluation_law="nll")
    r = ModelInstanceRecord.capture("net", model, opt, cfg, randomness, systems, eval_seed=99, **kw)
    assert missing_fields(r) == () and r.parameters == param_count(CFG)
    assert r.tokens == 5 * 2 * 8 and r.updates == 5 and r.precision == "float32"
    assert "data-order seed 2" in r.data and "Cosine(total_steps=5" in r.optimizer
    assert r.architecture == "2 layers AA: MHA (rope), d=16, 2 heads" and r.checkpoint.startswith("sha256:")
    assert "batch 1, prompt 4 + 4 new tokens, greedy" in r.inference_budget
    with pytest.raises(ValueError, match="training seed 'window_offset'"):
        ModelInstanceRecord.capture("net", model, opt, cfg, randomness, systems, eval_seed=3, **kw)
    with pytest.raises(TypeError, match="SystemsRecord"):
        ModelInstanceRecord.capture("net", model, opt, cfg, randomness, "cpu", eval_seed=99, **kw)


def test_describe_architecture_names_depth_reuse():
    looped = dataclasses.replace(CFG, n_layers=1, n_loops=3)
    assert describe_architecture(looped).endswith("block stack applied 3 times")
    assert describe_architecture(CFG) == "2 layers AA: MHA (rope), d=16, 2 heads"


def test_attribution_statuses():
    a, b = record("a"), record("b", architecture="4 layers KKKM", parameters=90, kernels="K: KDA")
    assert attribution(a, b).status == "architecture"
    for f in ("cache_policy", "eval_seed", "train_cost"):
        out = attribution(a, dataclasses.replace(b, **{f: UNKNOWN}))
        assert (out.status, out.missing) == ("unknown", (f"b.{f}",))
    both = attribution(dataclasses.replace(a, data=UNKNOWN), dataclasses.replace(b, hardware=UNKNOWN))
    assert both.missing == ("a.data", "b.hardware")
    out = attribution(a, dataclasses.replace(b, eval_seed=8, precision="bfloat16"))
    assert (out.status, out.confounders) == ("confounded", ("precision", "eval_seed"))
    with pytest.raises(TypeError):
        attribution(a, "b")


def test_comparable_passes_only_declared_differences():
    a, b = record("a"), record("b", architecture="4 layers KKKM", parameters=90)
    varied = ("architecture", "checkpoint", "parameters")
    ok = comparable(a, b, varied=varied)
    assert ok and ok.arms == () and "data" in ok.fixed
    bad = comparable(a, dataclasses.replace(b, updates=20), varied=varied)
    assert not bad and [(x.coordinate, x.status) for x in bad.arms] == [("updates", "differs")]
    unknown = comparable(a, dataclasses.replace(b, parameters=UNKNOWN), varied=varied)
    assert [(x.coordinate, x.status) for x in unknown.arms] == [("parameters", "unrecorded")]
    fixed_unknown = comparable(a, dataclasses.replace(b, cache_policy=UNKNOWN), varied=varied)
    assert [(x.coordinate, x.status) for x in fixed_unknown.arms] == [("cache_policy", "unrecorded")]
    # a varied field may stay equal
    assert comparable(a, record("b"), varied=varied + ("precision",))


def test_comparable_declarations_are_checked():
    a, b = record("a"), record("b")
    with pytest.raises(ValueError, match="not fields"):
        comparable(a, b, varied=("layers",))
    with pytest.raises(ValueError, match="both fixed and varied"):
        comparable(a, b, varied=("checkpoint",), fixed=("checkpoint",))
    with pytest.raises(ValueError, match="neither fixed nor varied"):
        comparable(a, b, varied=("checkpoint",), fixed=("data",))
    with pytest.raises(TypeError, match="varied=.checkpoint. must be a sequence"):
        comparable(a, b, varied="checkpoint")
    with pytest.raises(TypeError):
        comparable(a, SimpleNamespace(), varied=())


# ---- ftip-00LU: comparison units --------------------------------------------------------------
W = Scalarization({"train_flops": 1.0, "decode_flops": 1e4}, {"train_flops": "FLOP", "decode_flops": "FLOP"})


def pair():
    return record("mha"), record("hybrid", architecture="4 layers KKKA: KDA + MHA", parameters=90,
                                 kernels="K: KDA; A: torch SDPA",
                                 inference_cost=costs(decode=1e4)[1])


def test_comparison_unit_prices_a_documented_pair():
    unit = ComparisonUnit(pair(), "suite", "nll", W)
    assert unit.costs == (1e9 + 1e4 * 2e4, 1e9 + 1e4 * 1e4)
    assert unit.differences == ("architecture", "checkpoint", "parameters", "kernels", "inference_cost")


def test_comparison_unit_refusals():
    a, b = pair()
    cases = [
        ((a, dataclasses.replace(b, cache_policy=UNKNOWN)), "suite", "nll", W, "undocumented coordinate"),
        ((a, b), "other suite", "nll", W, "not on the unit's"),
        ((a, b), "suite", "other law", W, "not on the unit's"),
        ((a, dataclasses.replace(b, name="mha")), "suite", "nll", W, "both have name"),
        ((a, dataclasses.replace(b, checkpoint=a.checkpoint)), "suite", "nll", W, "both are checkpoint"),
        ((a, dataclasses.replace(b, updates=20)), "suite", "nll", W, "breaks its declaration: separate arm: updates"),
        ((a, b), "suite", "nll", Scalarization({"energy": 1.0}, {"energy": "J"}), "scalar cost of mha is unknown"),
        ((a, b), "suite", "nll", Scalarization({"train_flops": 1.0}, {"train_flops": "GFLOP"}), "unit mismatch"),
        ((a, b), UNKNOWN, "nll", W, "task_family=UNKNOWN must be a string"),
    ]
    for p, task, law, w, match in cases:
        with pytest.raises(ValueError, match=match):
            ComparisonUnit(p, task, law, w)
    with pytest.raises(TypeError, match="two ModelInstanceRecords"):
        ComparisonUnit((a,), "suite", "nll", W)
    with pytest.raises(TypeError, match="Scalarization"):
        ComparisonUnit((a, b), "suite", "nll", {"train_flops": 1.0})
    with pytest.raises(ValueError, match="neither fixed nor varied|not fields"):
        ComparisonUnit((a, b), "suite", "nll", W, varied=("layers",))


# ---- from_study -------------------------------------------------------------------------------
def fake_entry(arch="full-attention", seed=0):
    cost = CostVector.standard(train_flops=1e12, inference_flops=2e6, wall_time=3.0, memory=4e6, context_length=64)
    records = {
        "architecture": {"parameters": 1234},
        "training": {"stream_sha256": "ab" * 32, "tokens": 25600, "schedule": "WarmupCosine(...)",
                     "seeds": {"init": 1, "data_order": 2, "window_offset": 3, "optimizer": 4}},
        "systems": {"dtype": "float32", "device": "cpu", "cpu": "x86", "threads": 1, "versions": {"torch": "2"},
                    "kernels": "A: torch SDPA"},
        "optimizer": {"name": "adamw", "hyperparameters": {"lr": 0.003, "betas": [0.9, 0.95]}},
    }
    run = {"data": {"corpus": "zoo.pretraining_documents", "sha256": "cd" * 32}, "budget_steps": 50,
           "post_training": "none", "inference": "teacher-forced scoring, no generation", "seq_len": 64,
           "evaluation": {"split": "evaluation", "documents": 160, "sha256": "ef" * 32, "rule": "minus NLL"}}
    return SimpleNamespace(architecture=arch, budget=50, seed=seed, config=CFG, cost=cost, records=records,
                           outcome=SimpleNamespace(record=run))


def test_from_study_reads_the_captured_records():
    from ftipbook import zoo

    r = ModelInstanceRecord.from_study(fake_entry())
    assert missing_fields(r) == () and r.name == "full-attention@50/seed0"
    assert r.train_cost.names == ("train_flops", "wall_time", "memory", "energy")
    assert r.inference_cost.names == ("inference_flops", "context_length")
    assert r.optimizer == "adamw: lr=0.003, betas=(0.9, 0.95); schedule WarmupCosine(...)"
    assert r.eval_seed == zoo.VALID_SEED and r.parameters == 1234 and r.updates == 50
    other = ModelInstanceRecord.from_study(fake_entry(seed=1))
    assert [c.path for c in diff_records(r, other) if c.path != "name"] == ["checkpoint"]
    with pytest.raises(TypeError, match="study entry"):
        ModelInstanceRecord.from_study(SimpleNamespace(records={}))


def test_from_study_on_the_committed_study():
    from ftipbook import study

    S = study.load()
    budget = S.budgets[-1]
    a, b = (ModelInstanceRecord.from_study(S.entry(arch, budget, 0)) for arch in ("full-attention", "hybrid-kkka"))
    assert missing_fields(a) == missing_fields(b) == ()
    assert a.parameters == param_count(S.entry("full-attention", budget, 0).config)
    assert a.updates == budget and f"total_steps={budget}" in a.optimizer
    assert comparable(a, b, varied=("architecture", "checkpoint", "parameters", "kernels", "train_cost",
                                    "inference_cost"))
    assert attribution(a, b).status == "architecture"
    later_seed = ModelInstanceRecord.from_study(S.entry("full-attention", budget, 1))
    assert "data" in attribution(a, later_seed).confounders
