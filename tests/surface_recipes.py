"""Valid calls for the domain objects of the probed modules (issue 25, item 5).

Small, fast instances built the way the library's tests and chapters build them; merged into
:data:`tests.surface.RECIPES`, :data:`~tests.surface.INSTANCES` and :data:`~tests.surface.BY_ANNOTATION`
at the end of ``tests/surface.py``. Every factory is called afresh for each call.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from fractions import Fraction as F
from functools import cache
from typing import Any

import torch


def _m(name: str) -> Any:
    return __import__(name, fromlist=["x"])


# --------------------------------------------------------------------------------------------- prob
def measurable_kernel():
    return _m("ftipbook.prob").MeasurableKernel(lambda x: torch.distributions.Normal(0.0, 1.0))


def finite_kernel():
    return _m("ftipbook.prob").FiniteKernel({"a": {"x": F(1, 2), "y": F(1, 2)}, "b": {"x": F(1)}})


def table_rows():
    return {("a",): {"a": F(1, 2), "b": F(1, 4), "EOS": F(1, 4)}}


# ------------------------------------------------------------------------------------------- claims
def dev_budget():
    return _m("ftipbook.claims").DevelopmentBudget({"train_tokens": (10, "token")})


def dep_budget():
    return _m("ftipbook.claims").DeploymentBudget({"samples": (1, "sample")})


def evaluation_set():
    return _m("ftipbook.claims").EvaluationSet("E+", ids=("a", "b", "c"),
                                               contents=("100+1=101", "200+2=202", "300+3=303"))


def procedure():
    c = _m("ftipbook.claims")
    return c.Procedure("sft", feedback=(c.FeedbackSource("answers", "examples"),))


def component():
    return _m("ftipbook.claims").Component("calculator", "tool")


def starting_artifact():
    return _m("ftipbook.claims").StartingArtifact("base", artifact="weights", tools=(component(),))


def _utility(x, y):
    return int(y == "2")


def evaluation_rule():
    return _m("ftipbook.claims").EvaluationRule(["1+1", "2+0"], "final checkpoint", "greedy", utility=_utility)


def resource_bound():
    return _m("ftipbook.claims").ResourceBound(dev_budget(), dep_budget())


def capability_claim():
    c = _m("ftipbook.claims")
    return c.CapabilityClaim(starting_artifact(), procedure(), evaluation_rule(), resource_bound())


def e_measurement(k: int):
    return _m("ftipbook.claims").Measurement(k, 500, "E+", "exact", "greedy")


def claims_interval():
    return _m("ftipbook.claims").ConfidenceRule().interval(3, 8)


def witness():
    c = _m("ftipbook.claims")
    return c.acquisition_witness(e_measurement(0), e_measurement(486), eps0=0.05, eps1=0.8,
                                 transfer=evaluation_set(), procedure=procedure())


# -------------------------------------------------------------------------------------------- tasks
def documents():
    Document = _m("ftipbook.data.corpus").Document
    return [Document("1+2=3", "t", "d0", "3"), Document("2+2=4", "t", "d1", "4")]


def task():
    return _m("ftipbook.tasks").arithmetic_task("add", documents(), tools=("calculator",))


def task_law():
    return _m("ftipbook.tasks").TaskLaw.uniform(task())


def evaluation_sample():
    return _m("ftipbook.tasks").EvaluationSample.iid(task_law(), 2)


def public_instance():
    return task().instances[0].public


def resources():
    return _m("ftipbook.tasks").Resources.of(tokens=8, candidates=1)


def big_budget():
    return _m("ftipbook.tasks").budget(prompt_tokens=10_000, new_tokens=10_000, candidates=64, tool_calls=64,
                                       verifier_calls=64)


def stop_eos():
    return _m("ftipbook.model.generate").StopReason.EOS


def candidate():
    return _m("ftipbook.tasks").Candidate("3", 1, -0.5, stop_eos())


def protocol_result():
    return _m("ftipbook.tasks").ProtocolResult("3", resources(), (candidate(),), 0)


def inference_protocol():
    return _m("ftipbook.tasks").InferenceProtocol("greedy", 2)


def retry_protocol():
    t = _m("ftipbook.tasks")
    return t.RetryProtocol("retry", 2, t.CALCULATOR, 2)


def evaluator():
    t = _m("ftipbook.tasks")
    return t.Evaluator(task(), t.EXACT_MATCH)


def evaluation_record(correct: int = 1):
    return _m("ftipbook.tasks").EvaluationRecord("d0", protocol_result(), (correct,), ("correct",))


@cache
def byte_tokenizer():
    return _m("ftipbook.tokenizer").ByteLevelBPE()


@cache
def artifact_lm():
    from ftipbook.model import ModelConfig, build_model
    cfg = ModelConfig(vocab_size=byte_tokenizer().vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                      max_seq_len=32)
    return build_model(cfg, seed=0).eval()


def artifact():
    return _m("ftipbook.artifact").ModelArtifact.from_model(artifact_lm(), byte_tokenizer())


# ---------------------------------------------------------------------------------------------- env
def _env(name: str) -> Any:
    return _m(f"ftipbook.env.{name}")


def door_history():
    return _env("history").PublicHistory(("door locked",), ())


def door_environment():
    return _env("examples").door_environment(2)


def door_policy():
    return _env("policy").Policy.deterministic(lambda h: "take key")


def door_stopping():
    return _env("stopping").Stopping((_env("examples").door_terminal(),))


def door_interaction():
    return _env("interaction").Interaction(door_environment(), door_policy(), door_stopping())


def door_trajectory():
    return door_interaction().sample(random.Random(0))


def token_law():
    from tests.surface import table_lm
    return _env("tokens").token_interaction(table_lm(), [0], eos=2, max_len=2).law()


def token_trajectory():
    return next(iter(token_law().outcomes))


def stop_cause():
    h = _env("history")
    return h.StopCause(h.StopOwner.AGENT, "eos")


def door_spaces():
    return door_environment().spaces


def calculator_realization():
    return _env("calculator").calculator_realization(["1+2"], 2)


def model_policy():
    return _env("calculator").ModelPolicy(artifact_lm(), byte_tokenizer(), max_new_tokens=2)


def estimate():
    e = _env("interaction")
    return e.Estimate(3, 8, _m("ftipbook.eval.stats").clopper_pearson(3, 8))


# ------------------------------------------------------------------------------------------ compare
class fields_of(Mapping):  # noqa: N801 (used like a function in the recipe tables)
    """A recipe for a record class: each field as a real instance holds it (the instance is made by
    ``factory`` once, on first use, so that building the tables costs nothing)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._made = cache(factory)

    def _names(self) -> list[str]:
        import dataclasses
        return [f.name for f in dataclasses.fields(self._made())]

    def __getitem__(self, name: str) -> Callable[[], Any]:
        if name not in self._names():
            raise KeyError(name)
        return lambda: getattr(self._made(), name)

    def __iter__(self):
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


def _c(name: str) -> Any:
    return _m(f"ftipbook.compare.{name}")


RECIPE = {"data": "toy", "optimizer": {"name": "adamw", "lr": 0.01}, "steps": 10}
PACKAGES = {"wide": {"d_model": 8}, "deep": {"d_model": 4}}


def cost_vector(train: float = 10.0, memory: float = 5.0):
    return _c("cost").CostVector.standard(train_flops=train, inference_flops=2.0, memory=memory, context_length=64)


def accounting():
    return _c("cost").Scalarization({"train_flops": 1.0, "wall_time": 0.0}, {"train_flops": "FLOP", "wall_time": "s"})


def scalarization():
    return _c("cost").Scalarization({"train_flops": 1.0, "memory": 1.0}, {"train_flops": "FLOP", "memory": "byte"})


def analytic(name, package, recipe, seed):
    """A runner: score = d_model/10 - (log10 lr + 2)^2 + seed/100; cost = d_model * steps (tests/compare)."""
    import math
    score = package["d_model"] / 10 - (math.log10(recipe["optimizer"]["lr"]) + 2) ** 2 + seed / 100
    record = {"data": recipe["data"], "optimizer": dict(recipe["optimizer"]), "steps": recipe["steps"],
              "tuning_data": recipe.get("tuning_data"), "stopping_rule": recipe.get("stopping_rule")}
    cost = _c("cost").CostVector.standard(train_flops=float(package["d_model"] * recipe["steps"]), wall_time=0.1)
    return _c("arms").Outcome(score, cost, (score - 0.5, score, score + 0.5), record)


def outcome():
    return analytic("wide", PACKAGES["wide"], RECIPE, 0)


def common_arm():
    return _c("arms").CommonRecipeArm(RECIPE, PACKAGES)


def arm_result():
    return common_arm().run(analytic, [0, 1, 2])


def tuning_arm():
    trials = {"wide": [{**RECIPE, "optimizer": {"name": "adamw", "lr": lr}} for lr in (0.1, 0.01)],
              "deep": [{**RECIPE, "optimizer": {"name": "adamw", "lr": lr}} for lr in (0.3, 0.03)]}
    return _c("arms").EqualTuningArm(trials, "tuning split A", "max_score", "fixed horizon", accounting(),
                                     packages=PACKAGES)


def tuning_result():
    return tuning_arm().run(analytic, 0)


def comparison_arm():
    return _c("records").ComparisonArm("optimizer.lr", 0.01, 0.1, "differs")


def measurement_sc(system: str = "A", cost: float = 2.0, score: float = 0.9):
    return _c("frontier").ScoredCostMeasurement(system, cost, score, "protocol-1", "FLOP")


def interventions():
    I = _c("frontier").Intervention
    return [I("a", 1.0, 0.2), I("b", 3.0, 0.6), I("c", 2.0, 0.5)]


def declared_frontier(system: str = "A"):
    return _c("frontier").DeclaredFrontier(system, tuple(interventions()), "FLOP", "protocol-1", "common recipe")


def threshold_claim(system: str = "A", cost: float = 2.0):
    d = _c("decision")
    return d.ThresholdCostClaim(system, 0.5, d.WITNESS, measurement_sc(system, cost), "protocol-1", "bootstrap 95%",
                                "fixed budget", cost_vector())


def checkpoint_record():
    return {"model": {"vocab_size": 23, "d_model": 16, "n_layers": 1, "n_heads": 2, "d_ff": 32, "max_seq_len": 16},
            "step": 2, "train": {"batch_size": 2, "seq_len": 8}}


def cost_grid():
    return _c("grid").CostGrid((1.0, 2.0, 4.0, 8.0), "train_flops", "FLOP")


def grid_curves():
    return cost_grid().observe({"a": {1.0: 0.1, 2.0: 0.3, 4.0: 0.5, 8.0: 0.9}, "b": {1.0: 0.2, 2.0: 0.2, 4.0: 0.4,
                                                                                    8.0: 0.8}})


SAMPLES = [[0.1, 0.4, 0.2], [0.3, 0.9, 0.5], [1.0, 0.2, 0.6], [0.5, 0.5, 0.7]]
BASE = [[0.0, 0.3, 0.2], [0.2, 0.6, 0.5], [0.4, 0.2, 0.3], [0.5, 0.4, 0.6]]


def band_procedure():
    return _c("grid").BandProcedure("evaluation document", n_boot=100, level=0.9, seed=3)


def band(samples=None):
    return _c("grid").bootstrap_band(cost_grid(), samples or SAMPLES, band_procedure())


def ordering_points():
    def vec(flops, seconds):
        return _c("cost").CostVector({"train_flops": flops, "wall_time": seconds},
                                     {"train_flops": "FLOP", "wall_time": "s"})
    return {"fast": [(vec(1, 10), 0.2), (vec(2, 20), 0.5)], "lean": [(vec(2, 5), 0.4), (vec(4, 8), 0.6)]}


def by_flops():
    return _c("cost").Scalarization({"train_flops": 1.0}, {"train_flops": "FLOP"}, "FLOP")


XS, YS = [0.0, 1.0, 3.0, 4.0, 5.0, 6.0], [1, 1, 1, 0, 0, 1]


def toy_accuracy(w, b):
    return F(sum((w * x + b > 0) == bool(y) for x, y in zip(XS, YS)), len(XS))


def toy_loss(theta):
    x, y = torch.tensor(XS, dtype=torch.float64), torch.tensor(YS, dtype=torch.float64)
    return torch.nn.functional.binary_cross_entropy_with_logits(theta[0] * x + theta[1], y)


def toy_score(theta):
    return float(toy_accuracy(float(theta[0]), float(theta[1])))


def toy_sgd(params):
    return torch.optim.SGD(params, lr=0.2)


def reachable_set():
    return _c("ceilings").optimizer_reachable(toy_loss, toy_score, toy_sgd, [(0.0, 0.0)], [0, 3],
                                              cost_per_step=1.0, optimizer="SGD(lr=0.2)")


def grid_ceiling():
    return _c("ceilings").representational_ceiling(lambda w, b: float(toy_accuracy(w, b)),
                                                   {"w": [-1.0, 1.0], "b": [0.0, 4.5]})


def difference_grid():
    table = {("a", 1): 1.0, ("b", 1): 0.5, ("a", 2): 0.25, ("b", 2): 0.75}
    return _c("ceilings").difference_grid(lambda s, t: table[(s, t)], ("a", "b"), {"t": [1, 2]})


def hybrid_model_config():
    from ftipbook.model import ModelConfig
    return ModelConfig(vocab_size=50, d_model=32, n_layers=4, n_heads=2, d_ff=64, max_seq_len=64, pos="none",
                       layer_pattern="KKKM", mla_nope=True, kv_lora_rank=16)


@cache
def hybrid_lm():
    from ftipbook.model import build_model
    return build_model(hybrid_model_config(), seed=0).eval()


@cache
def hybrid_full_lm():
    from ftipbook.model import build_model
    return build_model(_c("cache_model").full_reference_config(hybrid_model_config()), seed=1).eval()


# ------------------------------------------------------------------------ compare: instance, records
def instance_config():
    from ftipbook.model import ModelConfig
    return ModelConfig(vocab_size=11, d_model=16, n_layers=2, n_heads=2, d_ff=24, max_seq_len=12)


@cache
def instance_lm():
    from ftipbook.model import build_model
    return build_model(instance_config(), seed=0).eval()


def eleven_table():
    names = tuple(f"t{i}" for i in range(11))
    return _m("ftipbook.prob").TableLM(names, {(names[0],): {names[0]: F(1, 3), names[1]: F(2, 3)}},
                                       default={n: F(1, 11) for n in names})


def next_token_interface():
    return _c("instance").NextTokenInterface(11, 12)


def model_record():
    return _c("instance").ModelRecord("net", next_token_interface(), "sha256:ab")


def architecture_record():
    return _c("instance").ArchitectureRecord.of(model_record(), instance_lm())


def adamw():
    return torch.optim.AdamW(instance_lm().parameters(), lr=1e-3)


def optimizer_record():
    return _c("instance").OptimizerRecord.capture(adamw(), instance_lm())


def instance_costs(decode: float = 2e4):
    CostVector, UNKNOWN = _c("cost").CostVector, _c("cost").UNKNOWN
    return (CostVector({"train_flops": 1e9}, {"train_flops": "FLOP"}),
            CostVector({"decode_flops": decode, "energy": UNKNOWN}, {"decode_flops": "FLOP", "energy": "J"}))


def instance_record(name: str = "a", **kw):
    train, infer = instance_costs()
    base = dict(architecture="2 layers AA: MHA (rope)", checkpoint=f"sha256:{name}", parameters=100, data="corpus",
                tokens=1000, updates=10, post_training="none", optimizer="adamw", precision="float32",
                hardware="cpu", software="torch", kernels="A: torch SDPA", cache_policy="preallocated",
                inference_budget="greedy", train_cost=train, inference_cost=infer, task_suite="suite",
                evaluation_law="nll", eval_seed=7)
    return _c("instance").ModelInstanceRecord(name, **(base | kw))


def instance_pair():
    return (instance_record("mha"), instance_record("hybrid", architecture="4 layers KKKA: KDA + MHA", parameters=90,
                                                    kernels="K: KDA; A: torch SDPA",
                                                    inference_cost=instance_costs(1e4)[1]))


def unit_weights():
    return _c("cost").Scalarization({"train_flops": 1.0, "decode_flops": 1e4},
                                    {"train_flops": "FLOP", "decode_flops": "FLOP"})


def train_config():
    return _m("ftipbook.train").TrainConfig(steps=5, batch_size=2, seq_len=8, schedule="cosine")


def run_randomness():
    return _m("ftipbook.train").RunRandomness(1, 2, 3, 4)


@cache
def systems_record():
    return _c("records").SystemsRecord.capture(instance_lm(), batch=1, cache_policy="preallocated",
                                               prompt_length=4, new_tokens=2, warmup=0)


def systems_record_b():
    import dataclasses
    return dataclasses.replace(systems_record(), cache_policy="none")


def identity(name: str = "hybrid", **kw):
    base = dict(checkpoint="sha256:aa", variant="3 KDA : 1 MLA (NoPE)", layer_pattern="KKKM", total_params=100,
                active_params=100, tokenizer="bpe-512:ff", context_limit=64)
    return _c("records").SystemIdentity(name, **(base | kw))


def identity_b():
    return identity("full-mla", checkpoint="sha256:bb", variant="full MLA (NoPE), 4 layers", layer_pattern="MMMM")


def eval_conditions(version: str = "v1"):
    return _c("records").EvaluationConditions("associative recall", "uniform keys, 8 pairs", "exact match", (0, 1, 2),
                                              "eos or 4 tokens", version)


def training_record(volume: int = 409_600):
    r = _c("records")
    tune = r.TuningProtocol("200k tokens of the toy mixture", 4, "lowest validation loss", "60 steps",
                            "4 x 60 steps", ("lr=1e-3", "lr=3e-3", "lr=1e-2", "lr=3e-2"), "lr=3e-3")
    return r.TrainingRecord("toy mixture", volume, "seed 0", "AdamW(0.9, 0.95, wd 0.1)", "warmup 20 + cosine",
                            "none", "none", 400, "last step", tune)


def field_change():
    return _c("records").diff_records(eval_conditions("v1"), eval_conditions("v2"))[0]


# --------------------------------------------------------------------------------- the three studies
@cache
def the_study():
    return _m("ftipbook.study").load()


@cache
def the_depth_study():
    return _m("ftipbook.depth_study").load()


@cache
def the_jepa_study():
    return _m("ftipbook.jepa_study").load()


def study_entry():
    s = the_study()
    return s.entry(s.architectures[0], s.budgets[0], s.seeds[0])


@cache
def study_model():
    s = the_study()
    return s.checkpoint(s.architectures[0])


def study_documents():
    return _m("ftipbook.study").evaluation_documents()[:2]


@cache
def depth_model():
    return the_depth_study().checkpoint("passes-1")


@cache
def _scratch():
    import atexit
    import shutil
    import tempfile
    root = tempfile.mkdtemp(prefix="ftipbook-surface-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def scratch_dir():
    """A fresh empty directory (under one temporary root removed at exit)."""
    import tempfile
    from pathlib import Path
    return Path(tempfile.mkdtemp(dir=_scratch()))


def manifest_dir():
    d = scratch_dir()
    (d / "STUDY.json").write_text("{}")
    return d


@cache
def _study_files():
    return _m("ftipbook.study").verified_files()


def study_files():
    return dict(_study_files())


# ------------------------------------------- compare: reduction, reports, saturation, restricted, tradeoff
V = 5


@cache
def gqa_lm():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=V, d_model=16, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=32,
                                   max_seq_len=8, init_std=0.3), seed=0).eval()


@cache
def mla_lm():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=V, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=8,
                                   init_std=0.3, layer_pattern="M", kv_lora_rank=4, rope_head_dim=4), seed=0).eval()


def declared_task():
    return _c("reduction").DeclaredTask(((1,), (2, 3)), ((3, 0), (1,)), V)


def functionals():
    return _c("reduction").standard_functionals(declared_task(), k=2, reward=lambda p, y: y / 4, reference=mla_lm())


def model_inputs():
    M = _c("reports").ModelInput
    return [M("p", 0.08, "assumed", "illustrative"), M("n", 17, "measured", "budget / cost")]


def _discovery(p, n):
    return 1 - (1 - p) ** n


def prediction():
    return _c("reports").ConditionalPrediction.derive("discovery", "1 - (1 - p)^n", _discovery, model_inputs())


def contrast(quantity: str = "accuracy", a: float = 0.75, b: float = 0.5):
    return _c("reports").MeasuredContrast(quantity, "points", "kimi", "mla", a, b, "Table 4 protocol")


def justified(v: float = 1.0):
    return _c("saturation").JustifiedBound(v, "scores are accuracies in [0, 1]")


def sat_interventions():
    I = _c("frontier").Intervention
    return [I("a", 1.0, 0.5), I("b", 2.0, 0.5625), I("c", 4.0, 0.875)]


def saturation_certificate():
    return _c("saturation").saturation_certificate(sat_interventions(), 0.8, sat_interventions()[2], justified())


def restricted_member(name):
    return {"training": name, "post_training": "none", "inference": "greedy"}


TABLE = {"a": (3.0, 0.5), "b": (5.0, 0.9), "c": (9.0, 2.0)}


def restricted_runner(arch, package, recipe, seed):
    cost, score = TABLE[recipe["training"]]
    return _c("arms").Outcome(score + 0.1 * seed, _c("cost").CostVector.standard(train_flops=cost))


def allowed_class(names=("a", "b")):
    return _c("restricted").AllowedClass("A", {}, {n: restricted_member(n) for n in names}, {"x": "not declared"},
                                         10, (0, 1))


def restricted_arm():
    return _c("restricted").RestrictedEnvelopeArm({"A": allowed_class()}, 6.0, by_flops(), "toy law")


def envelope():
    return restricted_arm().envelope(restricted_runner, "A")


def tradeoff_setting():
    from ftipbook.model import ModelConfig
    cfg = ModelConfig(vocab_size=256, d_model=64, n_layers=4, n_heads=4, layer_pattern="KKKM", mla_nope=True,
                      kv_lora_rank=32)
    return _c("tradeoff").TradeoffSetting.from_config(cfg, memory=64 * 2**20, context=4096, f=0.8, p_m=0.1,
                                                      p_k=0.08, budget=10)


def world():
    return _c("tradeoff").World.as_assumed(tradeoff_setting())


# ------------------------------- compare: interfaces, jepa_interface, kda_instance, measure, published
def counting_task(k: int = 3):
    return {(1,) * n: n for n in range(k + 1)}


def recurrence():
    return _c("interfaces").QuantizedRecurrence(3)


def state_interface():
    return recurrence().interface()


def applicability():
    return _c("interfaces").pigeonhole_applicability(state_interface(), counting_task())


@cache
def jepa_tokenizer():
    return _m("ftipbook.tokenizer").ByteLevelBPE.train(["abc abd abe", "bca cab"], 4)


def jepa_docs():
    Document = _m("ftipbook.data.corpus").Document
    return (Document("abc", "t", "d0"), Document("abd ab", "t", "d1"), Document("cab", "t", "d2"))


def jepa_iface(law: str = "L"):
    return _c("jepa_interface").JEPAInterface("p", "t", "d", "o", "i", law)


def next_token_nll():
    return _c("jepa_interface").NextTokenNLL(jepa_docs(), jepa_tokenizer(), seq_len=3, batch_size=2)


def nll_iface():
    return jepa_iface(next_token_nll().description)


def uniform_law_map(tokens):
    return torch.zeros(*tokens.shape, jepa_tokenizer().vocab_size)


def bigram_law_map(tokens):
    table = torch.linspace(-1, 1, jepa_tokenizer().vocab_size ** 2).reshape(jepa_tokenizer().vocab_size, -1)
    return table[tokens]


def timing():
    return _m("ftipbook.eval.stats").RepeatedMeasurement(warmup=0, reps=2)


@cache
def kda_hybrid():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=32, d_model=16, n_layers=4, n_heads=2, d_ff=32, max_seq_len=32,
                                   pos="none", layer_pattern="KKKM", mla_nope=True, kv_lora_rank=8), seed=0).eval()


@cache
def kda_twin():
    from ftipbook.model import build_model
    return build_model(kda_hybrid().cfg, seed=1).eval()


def packed_batch():
    docs = [list(range(1 + i, 20 + i)) for i in range(4)]
    return _m("ftipbook.data.windows").BatchIterator(docs, 8, 2, pad_id=0, seed=0).batch(0)


def table_lm_3():
    return _m("tests.surface").table_lm()


@cache
def instance_lm_32():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=32, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=16),
                       seed=0)


def reproducibility_record():
    CostVector, UNKNOWN = _c("cost").CostVector, _c("cost").UNKNOWN
    cost = CostVector({"train_flops": 1e9, "wall_time": UNKNOWN}, {"train_flops": "FLOP", "wall_time": "s"})
    return _c("reproducibility").ReproducibilityRecord("m", "ab" * 32, "seed 0, 160 documents", cost)


def published_value():
    return _c("published").PublishedValue(1.5, "x", "kimi2025", "Table 1", "reported")


# --------------------------------- compare: depth_records, study_reports, systems_variants, toy_surface
DEPTH_PROMPT = [[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]]


@cache
def depth_lm():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=61, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=32),
                       seed=0).eval()


@cache
def looped_lm():
    return _m("ftipbook.model.depth").with_passes(depth_lm(), 2)


def decode_run():
    return _c("depth_records").run_decode(depth_lm(), torch.tensor(DEPTH_PROMPT), 2)


def depth_reuse_record(model=None):
    return _c("depth_records").DepthReuseRecord.capture(model or depth_lm(), DEPTH_PROMPT, 2, eval_seeds=(0,),
                                                        repeats=1)


def separable_record(model=None):
    from ftipbook.train import RunRandomness, TrainConfig
    m = model or depth_lm()
    return _c("depth_records").SeparableRecord.capture(m, m, TrainConfig(steps=10), RunRandomness(),
                                                       data="counting stream", prompt=DEPTH_PROMPT, new_tokens=2)


class ReportEntry:
    """A ``StudyEntryLike`` (the fields build_frontier_report reads)."""

    def __init__(self, architecture, budget, seed, item_scores, cost):
        self.architecture, self.budget, self.seed, self.item_scores, self.cost = (architecture, budget, seed,
                                                                                  item_scores, cost)


def report_entries():
    import numpy as np
    rng = np.random.default_rng(0)
    out = []
    for arch, shift, mem in (("kda", 0.0, 100.0), ("mla", 0.3, 200.0)):
        for budget in (50, 100):
            for seed in (0, 1):
                scores = -3.0 + budget / 200 - shift * (budget == 100) + rng.normal(0, 0.05, 6)
                cost = _c("cost").CostVector.standard(train_flops=1e9 * budget, inference_flops=1e5,
                                                      wall_time=0.01 * budget, memory=mem, context_length=64)
                out.append(ReportEntry(arch, budget, seed, scores, cost))
    return out


def report_identities():
    SI = _c("records").SystemIdentity
    return {"kda": SI("kda", "sha256:" + "0" * 8, "kda: 4 layers", "KKKM", 1000, 1000, "tok", 64),
            "mla": SI("mla", "sha256:" + "1" * 8, "mla: 4 layers", "M", 1000, 1000, "tok", 64)}


def report_kwargs():
    return dict(protocol="toy NLL", grid_unit="steps", scalarization=by_flops(), identities=report_identities(),
                configs={"kda": {"layer_pattern": "KKKM"}, "mla": {"layer_pattern": "M"}},
                pareto_coordinates=("train_flops", "memory"), n_boot=100)


@cache
def frontier_report():
    return _c("study_reports").build_frontier_report(report_entries(), **report_kwargs())


def stats_interval():
    return _m("ftipbook.eval.stats").Interval(-0.25, 0.75, 0.95, "percentile bootstrap")


def estimand_key(arch: str = "a"):
    return _c("study_reports").EstimandKey(arch, "common recipe", "prose", "T=1", "FLOPs")


def evidence():
    return _c("study_reports").Evidence(("full-mla@400",), "NLL, 400 steps", "zoo manifest")


def transfer_matrix():
    r = _c("study_reports")
    cols = ("NLL @ 400 steps", "NLL @ 800 steps")
    cells = {("Transformer reference", cols[0]): r.Comparable(evidence(), -3.1, "nats"),
             ("Transformer reference", cols[1]): r.Comparable(evidence(), -3.0, "nats"),
             ("KDA hybrid", cols[0]): r.Comparable(evidence()),
             ("JEPA-like", cols[0]): r.Incomparable("predicts embeddings, no next-token law"),
             ("looped or depth-reused", cols[1]): r.Open("same FLOPs or same parameters?")}
    return r.TransferMatrix(cols, cells)


def run_conditions(**changes):
    import dataclasses
    r = _c("records")
    tune = r.TuningProtocol("held-out", 2, "best", "fixed", "2 runs", ("a", "b"), "a")
    base = dict(identity=r.SystemIdentity("x", "h", "MLA 4 layers", "M", 10, 10, "t", 64),
                training=r.TrainingRecord("d", 1, "o", "adamw(lr=1e-3)", "cosine", "none", "none", 10, "last", tune),
                systems=r.SystemsRecord("cpu", "torch", "sdpa", "float32", 1, "full", 64, 0, 0, 1, "greedy"),
                evaluation=r.EvaluationConditions("prose", "docs", "nll", (0,), "fixed", "v1"))
    for path, value in changes.items():
        rec, name = path.split("__")
        base[rec] = dataclasses.replace(base[rec], **{name: value})
    return _c("study_reports").RunConditions(**base)


def changes():
    return _c("study_reports").coordinate_changes(run_conditions(), run_conditions(identity__layer_pattern="KKKM"))


FACTORIAL = dict(factor_a="architecture", factor_b="precision", levels_a=("T", "K"), levels_b=("f32", "bf16"),
                 n_boot=100)


def factorial_scores():
    return {(a, b): [1.0 + i + 0.5 * (a == "K") + 0.25 * (b == "bf16") for i in range(4)] for a in ("T", "K")
            for b in ("f32", "bf16")}


def sign_test():
    return _c("study_reports").SequentialSignTest((4, 8, 12), alpha=0.2, futility=0.1)


def comparison_result():
    return _c("study_reports").ComparisonResult("K - T", 0.25, stats_interval(), False, 0.5, "nats")


@cache
def variant_lm():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=32, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32,
                                   max_seq_len=32), seed=0).eval()


TOY_P = dict(ceiling=1.0, best_log2_lr=-8, curvature=0.125, budget_scale=16, sample_gain=0.5, flops_per_step=4e9,
             flops_per_sample=8e10)


def toy_surface():
    return _c("toy_surface").ToyResponseSurface({"A": dict(TOY_P), "B": dict(TOY_P, ceiling=1.125)},
                                                item_offsets=(0.25, -0.125, -0.125))


def toy_recipe():
    return {"log2_lr": -7.0, "steps": 16, "samples": 2}


# ------------------------------------------------------------------------- model.depth, jepa, hf_hybrid
def jepa_config():
    from ftipbook.model import ModelConfig
    enc = ModelConfig(vocab_size=20, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=16, tie_embeddings=True)
    return _m("ftipbook.model.jepa").JEPAConfig(enc, predictor_hidden=8)


def jepa():
    return _m("ftipbook.model.jepa").JEPA(jepa_config(), seed=0)


def linear_readout():
    return _m("ftipbook.model.jepa").LinearReadout(torch.linspace(-1, 1, 320).reshape(20, 16),
                                                   torch.linspace(0, 1, 20))


def decoded_jepa():
    return _m("ftipbook.model.jepa").DecodedJEPA(jepa(), linear_readout())


def next_latent_lm():
    return _m("ftipbook.model.depth").NextLatentLM(_m("tests.surface").tiny_config(), 1.0).eval()


def feedback_lm():
    return _m("ftipbook.model.depth").latent_feedback_model(_m("tests.surface").tiny_config(), 2, seed=0)


@cache
def kimi_lm():
    from ftipbook.model import build_model
    from ftipbook.model.hf_hybrid import hybrid_config_from_hf
    return build_model(hybrid_config_from_hf(_m("tests.surface").hybrid_hf_config()), seed=0).eval()


@cache
def _saved_kimi():
    path = scratch_dir() / "kimi"
    _m("ftipbook.model.hf_hybrid").save_hf_hybrid(kimi_lm(), path, "kimi_linear")
    return path


def saved_kimi():
    return _saved_kimi()


RECIPES: dict[str, dict[str, Any]] = {
    # prob
    "ftipbook.prob.FiniteLaw.prob": {"event": lambda: ["a"]},
    "ftipbook.prob.FiniteLaw.condition": {"event": lambda: ["a", "b"]},
    "ftipbook.prob.FiniteLaw.conditional_prob": {"b": lambda: ["a"], "a": lambda: ["a", "b"]},
    "ftipbook.prob.FiniteLaw.expectation": {"z": lambda: {"a": 1, "b": 3}.get},
    "ftipbook.prob.FiniteLaw.pushforward": {"f": lambda: str.upper},
    "ftipbook.prob.preimage": {"f": lambda: str.upper, "a": lambda: ["A"], "domain": lambda: ["a", "b"]},
    "ftipbook.prob.expectation": {"z": lambda: {"a": 1, "b": 3}.get},
    "ftipbook.prob.is_independent": {"z": lambda: str.upper, "w": lambda: len},
    "ftipbook.prob.FiniteKernel": {"rows": lambda: {"a": {"x": F(1, 2), "y": F(1, 2)}, "b": {"x": F(1)}}},
    "ftipbook.prob.FiniteKernel.__call__": {"x": "a"},
    "ftipbook.prob.FiniteKernel.joint": {"law": lambda: _m("ftipbook.prob").FiniteLaw({"a": F(1, 4), "b": F(3, 4)})},
    "ftipbook.prob.FiniteKernel.marginal": {"law": lambda: _m("ftipbook.prob").FiniteLaw({"a": F(1, 4),
                                                                                          "b": F(3, 4)})},
    "ftipbook.prob.MeasurableKernel.prob": {"x": 0, "low": -1.0, "high": 1.0},
    "ftipbook.prob.MeasurableKernel.point_prob": {"x": 0, "y": 0.5},
    "ftipbook.prob.MeasurableKernel.expectation": {"x": 0, "f": lambda: torch.square, "low": -1.0, "high": 1.0,
                                                   "n": 201},
    "ftipbook.prob.TableLM": {"vocab": ("a", "b", "EOS"), "table": table_rows,
                              "default": lambda: {"a": F(1, 4), "b": F(1, 4), "EOS": F(1, 2)}},
    "ftipbook.prob.TableLM.id": {"name": "b"},
    "ftipbook.prob.TableLM.ids": {"names": lambda: ["a", "b"]},
    "ftipbook.prob.TableLM.names": {"ids": lambda: [0, 1]},
    "ftipbook.prob.TableLM.next_token_law": {"prefix": lambda: [0]},
    "ftipbook.prob.Continuation": {"tokens": (0, 1), "prob": F(1, 4),
                                   "stop_reason": lambda: _m("ftipbook.model.generate").StopReason.EOS},
    # claims
    "ftipbook.claims.CostModel": {"unit": "FLOP", "rates": lambda: {"token": 6, "s": 10**9}},
    "ftipbook.claims.CostModel.convert": {"quantity": lambda: _m("ftipbook.claims").Quantity(3, "token")},
    "ftipbook.claims.Budget.violations": {"bound": dep_budget},
    "ftipbook.claims.Budget.within": {"bound": dep_budget},
    "ftipbook.claims.Budget.require_within": {"bound": dep_budget},
    "ftipbook.claims.ResourceBound": {"development": dev_budget, "deployment": dep_budget},
    "ftipbook.claims.Component": {"name": "calculator", "kind": "tool"},
    "ftipbook.claims.StartingArtifact": {"name": "base", "artifact": "weights", "tools": lambda: (component(),)},
    "ftipbook.claims.FeedbackSource": {"name": "answers", "kind": "examples"},
    "ftipbook.claims.EvaluationSet": {"name": "E+", "ids": ("a", "b", "c"),
                                      "contents": ("100+1=101", "200+2=202", "300+3=303")},
    "ftipbook.claims.EvaluationSet.from_documents": {"name": "E+", "documents": documents},
    "ftipbook.claims.EvaluationSet.matching": {"contents": lambda: ["200+2=202"]},
    "ftipbook.claims.Touch": {"evaluation": "E+", "item_ids": frozenset({"a"}), "use": "reward"},
    "ftipbook.claims.Procedure": {"name": "sft", "feedback": lambda: (
        _m("ftipbook.claims").FeedbackSource("answers", "examples"),)},
    "ftipbook.claims.Procedure.touch": {"evaluation": evaluation_set, "use": "reward", "item_ids": lambda: ["b"]},
    "ftipbook.claims.Procedure.touch_by_content": {"evaluation": evaluation_set, "contents": lambda: ["200+2=202"],
                                                   "use": "training-data"},
    "ftipbook.claims.Procedure.touched": {"evaluation": evaluation_set},
    "ftipbook.claims.EvaluationRule": {"task_law": lambda: ["1+1", "2+0"], "retained_artifact": "final checkpoint",
                                       "deployment": "greedy", "utility": lambda: _utility},
    "ftipbook.claims.EvaluationRule.value": {"respond": lambda: lambda x: "2"},
    "ftipbook.claims.CapabilityClaim": {"start": starting_artifact, "procedure": procedure,
                                        "evaluation": evaluation_rule, "bound": resource_bound},
    "ftipbook.claims.CapabilityClaim.acquisition_witness": {
        "before": lambda: e_measurement(0), "after": lambda: e_measurement(486), "eps0": 0.05, "eps1": 0.8,
        "transfer": evaluation_set},
    "ftipbook.claims.acquisition_witness": {
        "before": lambda: e_measurement(0), "after": lambda: e_measurement(486), "eps0": 0.05, "eps1": 0.8,
        "transfer": evaluation_set, "procedure": procedure},
    "ftipbook.claims.ConfidenceRule.is_exact": {"successes": 3, "trials": 8, "interval": claims_interval},
    "ftipbook.claims.Measurement.from_outcomes": {"outcomes": lambda: [True, False, True], "event": "B",
                                                  "evaluator": "exact", "protocol": "greedy"},
    "ftipbook.claims.Witness": {"kind": "acquisition", "verdict": lambda: _m("ftipbook.claims").Verdict.UNDECIDED,
                                "before": claims_interval, "after": claims_interval, "thresholds": (0.05, 0.8),
                                "reasons": ("x",)},
    # tasks
    "ftipbook.tasks.PublicInstance": {"instance_id": "d0", "prompt": "1+2=", "tools": ("calculator",)},
    "ftipbook.tasks.Instance": {"public": public_instance,
                                "secret": lambda: _m("ftipbook.tasks").EvaluatorSecret("3")},
    "ftipbook.tasks.is_text": {"o": "3"},
    "ftipbook.tasks.Task": {"name": "add", "instances": lambda: task().instances},
    "ftipbook.study.StudyRunner.model_factory": "a class attribute holding ftipbook.model.build_model (probed in "
                                                "the model modules), not a method",
    "ftipbook.study.StudyRunner.__call__": "trains one model of the study (seconds to minutes); "
                                           "scripts/build_study.py --check runs it",
    "ftipbook.study.rerun_entry": "retrains one entry of the study (seconds to minutes); tests/test_study.py runs it",
    "ftipbook.compare.study_reports.TransferMatrix.impute": "refuses every call by design (ImputationRefused: a "
                                                            "blank cell is a finding); no valid call exists",
    "ftipbook.tasks.Task.admissible": {"x": public_instance, "o": "3"},
    "ftipbook.tasks.Task.is_admissible": {"x": public_instance, "o": "3"},
    "ftipbook.tasks.arithmetic_task": {"name": "add", "documents": documents},
    "ftipbook.tasks.TaskLaw": {"task": task, "law": lambda: _m("ftipbook.prob").FiniteLaw({"d0": F(1, 4),
                                                                                           "d1": F(3, 4)})},
    "ftipbook.tasks.TaskLaw.uniform": {"task": task},
    "ftipbook.tasks.TaskLaw.from_weights": {"task": task, "weights": lambda: {"d0": 1, "d1": 3}},
    "ftipbook.tasks.TaskLaw.__call__": {"instance_id": "d0"},
    "ftipbook.tasks.TaskLaw.expectation": {"f": lambda: lambda inst: len(inst.public.prompt)},
    "ftipbook.tasks.EvaluationSample": {"task_law": task_law, "joint": lambda: _m("ftipbook.prob").FiniteLaw(
        {("d0",): F(1, 2), ("d1",): F(1, 2)})},
    "ftipbook.tasks.EvaluationSample.marginal": {"i": 0},
    "ftipbook.tasks.EvaluationSample.iid": {"task_law": task_law, "n": 2},
    "ftipbook.tasks.EvaluationSample.without_replacement": {"task_law": task_law, "n": 2},
    "ftipbook.tasks.EvaluationSample.draw": {"rng": lambda: random.Random(0)},
    "ftipbook.tasks.EvaluationSample.mean_variance": {"f": lambda: lambda inst: len(inst.public.prompt)},
    "ftipbook.tasks.Resources": {"coords": (("tokens", 8), ("candidates", 1))},
    "ftipbook.tasks.Resources.of": {"**": lambda: {"tokens": 8, "candidates": 1}},
    "ftipbook.tasks.Resources.exceeded": {"budget": lambda: _m("ftipbook.tasks").Resources.of(tokens=4,
                                                                                              candidates=4)},
    "ftipbook.tasks.Candidate": {"text": "3", "new_tokens": 1, "logprob": -0.5, "stop_reason": stop_eos},
    "ftipbook.tasks.Tool": {"name": "calc", "fn": lambda: lambda x, c: True},
    "ftipbook.tasks.logprob_score": {"x": public_instance, "candidate": candidate},
    "ftipbook.tasks.ProtocolResult": {"outcome": "3", "resources": resources, "candidates": lambda: (candidate(),),
                                      "chosen": 0},
    "ftipbook.tasks.InferenceProtocol.prompt_text": {"x": public_instance},
    "ftipbook.tasks.InferenceProtocol.run": {"artifact": artifact, "x": public_instance, "budget": big_budget,
                                             "seed": 0},
    "ftipbook.tasks.RetryProtocol": {"name": "retry", "max_new_tokens": 2,
                                     "checker": lambda: _m("ftipbook.tasks").CALCULATOR, "rounds": 2},
    "ftipbook.tasks.RetryProtocol.run": {"artifact": artifact, "x": public_instance, "budget": big_budget,
                                         "seed": 0},
    "ftipbook.tasks.Utility": {"names": ("correct",), "fn": lambda: lambda inst, o, rng: (int(o == "3"),),
                               "inadmissible": (0,), "bounds": ((0, 1),)},
    "ftipbook.tasks.Evaluator": {"task": task, "utility": lambda: _m("ftipbook.tasks").EXACT_MATCH},
    "ftipbook.tasks.Evaluator.score": {"instance_id": "d0", "o": "3", "omega": 0},
    "ftipbook.tasks.EvaluationRecord": {"instance_id": "d0", "result": protocol_result, "utility": (1,),
                                        "names": ("correct",)},
    "ftipbook.tasks.evaluate": {"protocol": inference_protocol, "artifact": artifact, "evaluator": evaluator,
                                "instance_ids": lambda: ["d0"], "budget": big_budget, "inference_seed": 0,
                                "evaluator_seed": 0},
    "ftipbook.tasks.summarize": {"records": lambda: [evaluation_record(1), evaluation_record(0)]},
    "ftipbook.tasks.group_summaries": {"records": lambda: [evaluation_record(1), evaluation_record(0)],
                                       "group_of": lambda: len},
    "ftipbook.tasks.dominates": {"a": lambda: {"acc": 0.75, "cost": 2.0}, "b": lambda: {"acc": 0.5, "cost": 3.0},
                                 "senses": lambda: {"acc": "max", "cost": "min"}},
    # env
    "ftipbook.env.calculator.evaluate": {"expression": "7+5"},
    "ftipbook.env.calculator.calculator_step": {"t": 0, "state": ("1+2", None),
                                                "action": lambda: _env("calculator").Calc("1+2")},
    "ftipbook.env.calculator.calculator_initial": {"question": "1+2"},
    "ftipbook.env.calculator.final_answer": {"question": "1+2", "z": lambda: _env("history").StoppedTrajectory(
        (("1+2", None), ("1+2", None)), ("1+2", "answer 3"), (_env("calculator").Answer(3),), stop_cause())},
    "ftipbook.env.calculator.calculator_realization": {"questions": lambda: ["1+2", "2*3"], "t_max": 2},
    "ftipbook.env.calculator.question_prompt": {"history": lambda: _env("history").PublicHistory(("1+2",), ())},
    "ftipbook.env.calculator.ModelPolicy": {"model": artifact_lm, "tokenizer": byte_tokenizer,
                                            "max_new_tokens": 2},
    "ftipbook.env.calculator.ModelPolicy.text": {"history": lambda: _env("history").PublicHistory(("1+2",), ()),
                                                 "seed": 0},
    "ftipbook.env.examples.door_step": {"t": 0, "state": "locked", "action": "take key"},
    "ftipbook.env.history.StopCause": {"owner": lambda: _env("history").StopOwner.AGENT, "rule": "eos"},
    "ftipbook.env.history.PublicHistory": {"observations": ("door locked", "key held"), "actions": ("take key",)},
    "ftipbook.env.history.PublicHistory.extend": {"action": "unlock", "observation": "door open"},
    "ftipbook.env.history.PublicHistory.prefix": {"t": 0},
    "ftipbook.env.history.StoppedTrajectory": {"states": ("locked", "key in hand"),
                                               "observations": ("door locked", "key held"),
                                               "actions": ("take key",), "cause": stop_cause},
    "ftipbook.env.interaction.Estimate.contains": {"p": 0.5},
    "ftipbook.env.interaction.Interaction": {"environment": door_environment, "policy": door_policy,
                                             "stopping": door_stopping},
    "ftipbook.env.interaction.Interaction.law": {"max_trajectories": 100},
    "ftipbook.env.interaction.Interaction.prob": {"z": door_trajectory},
    "ftipbook.env.interaction.Interaction.prob_of": {"event": lambda: lambda z: len(z.actions) >= 1},
    "ftipbook.env.interaction.Interaction.sample": {"rng": lambda: random.Random(0)},
    "ftipbook.env.interaction.Interaction.samples": {"n": 3, "seed": 0},
    "ftipbook.env.interaction.Interaction.estimate": {"event": lambda: lambda z: len(z.actions) >= 1, "n": 8,
                                                      "seed": 0, "level": 0.875},
    "ftipbook.env.interaction.state_dependence": {"law": token_law},
    "ftipbook.env.kernels.InitialLaw": {"law": lambda: _m("ftipbook.prob").FiniteLaw(
        {("locked", "door locked"): F(1)})},
    "ftipbook.env.kernels.InitialLaw.rendered": {
        "state_law": lambda: _m("ftipbook.prob").FiniteLaw({"locked": F(1, 4), "unlocked": F(3, 4)}),
        "obs": lambda: str.upper},
    "ftipbook.env.kernels.InitialLaw.sample": {"rng": lambda: random.Random(0)},
    "ftipbook.env.kernels.TransitionKernel": {"law": lambda: _env("examples").counter_step_law(F(2, 3))},
    "ftipbook.env.kernels.TransitionKernel.tool": {"update": lambda: _env("examples").door_step},
    "ftipbook.env.kernels.TransitionKernel.factored": {
        "transition": lambda: lambda t, s, a: _m("ftipbook.prob").FiniteLaw({s + 1: F(1, 2), s: F(1, 2)}),
        "observe": lambda: lambda t, s, a: _m("ftipbook.prob").FiniteLaw({"hi": F(1, 3), "lo": F(2, 3)})},
    "ftipbook.env.kernels.TransitionKernel.next_law": {"t": 0, "state": 0, "action": "push"},
    "ftipbook.env.kernels.TransitionKernel.sample": {"t": 0, "state": 0, "action": "push",
                                                     "rng": lambda: random.Random(0)},
    "ftipbook.env.kernels.Environment": {"spaces": door_spaces, "initial": lambda: door_environment().initial,
                                         "kernel": lambda: door_environment().kernel},
    "ftipbook.env.policy.check_history": {"history": door_history},
    "ftipbook.env.policy.Policy": {"law": lambda: lambda h: _m("ftipbook.prob").FiniteLaw(
        {"take key": F(1, 2), "unlock": F(1, 2)})},
    "ftipbook.env.policy.Policy.deterministic": {"choose": lambda: lambda h: "take key"},
    "ftipbook.env.policy.Policy.action_law": {"history": door_history},
    "ftipbook.env.policy.Policy.sample": {"history": door_history, "rng": lambda: random.Random(0)},
    "ftipbook.env.realization.InteractiveRealization": {
        "instances": ("1+2",), "spaces": lambda: _env("spaces").Spaces(None, None, None, 2),
        "initial": lambda: _env("calculator").calculator_initial,
        "kernel": lambda: lambda x: _env("calculator").calculator_kernel(),
        "outcome": lambda: _env("calculator").final_answer, "admissible": lambda: lambda x, y: True},
    "ftipbook.env.realization.InteractiveRealization.environment": {"x": "1+2"},
    "ftipbook.env.realization.InteractiveRealization.interaction": {"x": "1+2", "policy": lambda: _env(
        "policy").Policy.deterministic(lambda h: _env("calculator").Answer(3))},
    "ftipbook.env.realization.InteractiveRealization.out": {"x": "1+2", "z": lambda: _env(
        "history").StoppedTrajectory((("1+2", None), ("1+2", None)), ("1+2", "answer 3"),
                                     (_env("calculator").Answer(3),), stop_cause())},
    "ftipbook.env.realization.InteractiveRealization.outcome_law": {"x": "1+2", "policy": lambda: _env(
        "policy").Policy.deterministic(lambda h: _env("calculator").Answer(3)),
        "stopping": lambda: _env("calculator").answer_stopping()},
    "ftipbook.env.spaces.check_int": {"name": "n", "value": 3},
    "ftipbook.env.spaces.check_callable": {"name": "f", "value": lambda: len},
    "ftipbook.env.spaces.Spaces": {"states": frozenset({"a", "b"}), "observations": frozenset({"o"}),
                                   "actions": frozenset({"x"}), "t_max": 2},
    "ftipbook.env.spaces.Spaces.check": {"kind": "actions", "value": "take key"},
    "ftipbook.env.stopping.StoppingRule": {"name": "eos", "owner": lambda: _env("history").StopOwner.AGENT,
                                           "decide": lambda: lambda h: h.t >= 1},
    "ftipbook.env.stopping.StoppingRule.stop_prob": {"history": door_history},
    "ftipbook.env.stopping.StoppingRule.on_action": {"name": "eos", "actions": lambda: {"unlock"}},
    "ftipbook.env.stopping.StoppingRule.on_observation": {"name": "end", "terminal": lambda: lambda o: o == "end"},
    "ftipbook.env.stopping.StoppingRule.budget": {"name": "calls", "cost": lambda: lambda h: h.t, "limit": 2},
    "ftipbook.env.stopping.Stopping.split": {"history": door_history, "t_max": 2},
    "ftipbook.env.stopping.Stopping.sample": {"history": door_history, "t_max": 2, "rng": lambda: random.Random(0)},
    "ftipbook.env.tokens.serialize": {"history": lambda: _env("history").PublicHistory(((0,), 1), (1,))},
    "ftipbook.env.tokens.stop_reason": {"z": token_trajectory},
    "ftipbook.env.tokens.continuations": {"law": token_law},
    # compare: arms, cost, frontier, decision
    "ftipbook.compare.arms.plain": {"value": lambda: {"a": (1, 2), "b": {"c": 3}}},
    "ftipbook.compare.arms.recipe_label": {"recipe": lambda: dict(RECIPE)},
    "ftipbook.compare.arms.Outcome": {"score": 1.5, "cost": cost_vector, "item_scores": (1.0, 2.0),
                                      "record": lambda: {"a": 1}},
    "ftipbook.compare.arms.Outcome.from_dict": {"d": lambda: outcome().to_dict()},
    "ftipbook.compare.arms.Deviation": {"package": "wide", "seed": 0, "arm": comparison_arm},
    "ftipbook.compare.arms.ArmResult": fields_of(arm_result),
    "ftipbook.compare.arms.ArmResult.outcome": {"package": "wide", "seed": 0},
    "ftipbook.compare.arms.ArmResult.scores": {"package": "wide"},
    "ftipbook.compare.arms.ArmResult.difference": {"a": "wide", "b": "deep", "n_boot": 200},
    "ftipbook.compare.arms.CommonRecipeArm": {"recipe": lambda: dict(RECIPE), "packages": lambda: dict(PACKAGES)},
    "ftipbook.compare.arms.CommonRecipeArm.run": {"runner": lambda: analytic, "seeds": lambda: [0, 1]},
    "ftipbook.compare.arms.TuningResult": fields_of(tuning_result),
    "ftipbook.compare.arms.TuningResult.selected_recipe": {"package": "wide"},
    "ftipbook.compare.arms.TuningResult.selected_outcome": {"package": "wide"},
    "ftipbook.compare.arms.TuningResult.from_dict": {"d": lambda: tuning_result().to_dict()},
    "ftipbook.compare.arms.EqualTuningArm": {k: (lambda k=k: getattr(tuning_arm(), k)) for k in (
        "trials", "tuning_data", "selection_rule", "stopping_rule", "accounting", "packages")},
    "ftipbook.compare.arms.EqualTuningArm.run": {"runner": lambda: analytic, "seed": 0},
    "ftipbook.compare.cost.training_flops": {"cfg": lambda: _m("tests.surface").tiny_config(), "tokens": 1000,
                                             "context": 8},
    "ftipbook.compare.cost.checkpoint_cost_vector": {"record": checkpoint_record, "context": 8},
    "ftipbook.compare.cost.Scalarization": {"weights": lambda: {"train_flops": 1.0, "memory": 1.0},
                                            "units": lambda: {"train_flops": "FLOP", "memory": "byte"}},
    "ftipbook.compare.cost.Scalarization.__call__": {"cost": cost_vector},
    "ftipbook.compare.cost.OrderFlip": fields_of(lambda: _c("cost").order_flip_weights(
        cost_vector(10.0, 5.0), cost_vector(4.0, 9.0), scalarization())),
    "ftipbook.compare.cost.OrderFlip.with_weight": {"coordinate": "memory", "weight": 2.0},
    "ftipbook.compare.cost.order_flip_weights": {"a": lambda: cost_vector(10.0, 5.0),
                                                 "b": lambda: cost_vector(4.0, 9.0),
                                                 "reference": scalarization},
    "ftipbook.compare.cost.pareto_dominates": {"a": lambda: cost_vector(4.0, 5.0), "b": lambda: cost_vector(10.0, 9.0)},
    "ftipbook.compare.frontier.smallest_cost_reaching": {"q": 0.5, "measurements": lambda: [
        measurement_sc("A", 2.0, 0.4), measurement_sc("A", 3.0, 0.6)]},
    "ftipbook.compare.frontier.CostRatio": {"value": 0.5, "numerator": 1.0, "denominator": 2.0},
    "ftipbook.compare.frontier.measured_cost_ratio": {"c_k": 3.0, "c_t": 4.0},
    "ftipbook.compare.frontier.inverse_cost": {"interventions": interventions, "q": 0.5},
    "ftipbook.compare.frontier.DeclaredFrontier": {"system": "A", "interventions": lambda: tuple(interventions()),
                                                   "cost_unit": "FLOP", "interface": "protocol-1",
                                                   "arm": "common recipe"},
    "ftipbook.compare.frontier.DeclaredFrontier.value": {"budget": 2.5},
    "ftipbook.compare.frontier.DeclaredFrontier.inverse_cost": {"q": 0.5},
    "ftipbook.compare.frontier.IsoQualityRatio": fields_of(lambda: _c("frontier").iso_quality_ratio(
        declared_frontier("A"), declared_frontier("B"), 0.5)),
    "ftipbook.compare.frontier.iso_quality_ratio": {"a": lambda: declared_frontier("A"),
                                                    "b": lambda: declared_frontier("B"), "q": 0.5},
    "ftipbook.compare.decision.ThresholdCostClaim": fields_of(threshold_claim),
    "ftipbook.compare.decision.Decision": fields_of(lambda: _c("decision").decision_rule(
        threshold_claim("A", 2.0), threshold_claim("B", 8.0), ["train_flops"])),
    "ftipbook.compare.decision.decision_rule": {"a": lambda: threshold_claim("A", 2.0),
                                                "b": lambda: threshold_claim("B", 8.0),
                                                "needs": lambda: ["train_flops"]},
    # compare: grid, ceilings, checks, cache_model
    "ftipbook.compare.grid.CostGrid.observe": {"observations": lambda: {"a": {1.0: 0.1, 2.0: 0.3, 4.0: 0.5, 8.0: 0.9}}},
    "ftipbook.compare.grid.CostGrid.index": {"cost": 4.0},
    "ftipbook.compare.grid.GridCurves": fields_of(grid_curves),
    "ftipbook.compare.grid.GridCurves.curve": {"architecture": "a"},
    "ftipbook.compare.grid.GridCurves.at": {"architecture": "a", "cost": 4.0},
    "ftipbook.compare.grid.Band": fields_of(band),
    "ftipbook.compare.grid.bootstrap_band": {"grid": cost_grid, "samples": lambda: [list(x) for x in SAMPLES],
                                             "procedure": band_procedure},
    "ftipbook.compare.grid.paired_difference_band": {"grid": cost_grid, "a": lambda: [list(x) for x in SAMPLES],
                                                     "b": lambda: [list(x) for x in BASE],
                                                     "procedure": band_procedure},
    "ftipbook.compare.grid.conservative_difference_band": {"a": band, "b": lambda: band(BASE)},
    "ftipbook.compare.grid.threshold_crossing": {"band": band, "q": 0.4},
    "ftipbook.compare.grid.FrontierRanking": fields_of(lambda: _c("grid").frontier_ordering(
        ordering_points(), by_flops(), [2])[0]),
    "ftipbook.compare.grid.frontier_ordering": {"points": ordering_points, "scalarization": by_flops,
                                                "budgets": lambda: [1, 2, 4]},
    "ftipbook.compare.grid.pointwise_order": {"curves": grid_curves, "a": "a", "b": "b"},
    "ftipbook.compare.grid.order_crossings": {"grid": cost_grid, "order": lambda: [-1, 1, 1, 1], "a": "a", "b": "b"},
    "ftipbook.compare.grid.crossing_points": {"curves": grid_curves, "a": "a", "b": "b"},
    "ftipbook.compare.ceilings.representational_ceiling": {
        "score": lambda: lambda w, b: float(toy_accuracy(w, b)), "grid": lambda: {"w": [-1.0, 1.0], "b": [0.0, 4.5]}},
    "ftipbook.compare.ceilings.ReachableSet": fields_of(reachable_set),
    "ftipbook.compare.ceilings.ReachableSet.feasible": {"budget": 2.0},
    "ftipbook.compare.ceilings.optimizer_reachable": {
        "loss": lambda: toy_loss, "score": lambda: toy_score, "make_optimizer": lambda: toy_sgd,
        "inits": lambda: [(0.0, 0.0)], "horizons": lambda: [0, 3], "cost_per_step": 1.0, "optimizer": "SGD"},
    "ftipbook.compare.ceilings.ceiling_layers": {"representational": grid_ceiling, "reachable": reachable_set,
                                                 "budget": 2.0},
    "ftipbook.compare.ceilings.GridCell": fields_of(lambda: difference_grid().cells[0]),
    "ftipbook.compare.ceilings.DifferenceGrid": fields_of(difference_grid),
    "ftipbook.compare.ceilings.DifferenceGrid.cell": {"**": lambda: {"t": 2}},
    "ftipbook.compare.ceilings.DifferenceGrid.varied": {"fixed": lambda: {}},
    "ftipbook.compare.ceilings.difference_grid": {
        "score": lambda: lambda s, t: {("a", 1): 1.0, ("b", 1): 0.5, ("a", 2): 0.25, ("b", 2): 0.75}[(s, t)],
        "systems": ("a", "b"), "axes": lambda: {"t": [1, 2]}},
    "ftipbook.compare.ceilings.answer_probability": {"model": artifact_lm, "tokenizer": byte_tokenizer,
                                                     "documents": documents},
    "ftipbook.compare.checks.real": {"name": "x", "value": 0.5},
    "ftipbook.compare.cache_model.state_sizes": {"cfg": hybrid_model_config},
    "ftipbook.compare.cache_model.full_reference_config": {"cfg": hybrid_model_config},
    "ftipbook.compare.cache_model.measure_cache_ratio": {"hybrid": hybrid_lm, "full": hybrid_full_lm,
                                                         "lengths": lambda: [1, 7]},
    # compare: instance, records
    "ftipbook.compare.instance.NextTokenInterface.check": {"law": eleven_table},
    "ftipbook.compare.instance.ModelRecord": {"name": "net", "interface": next_token_interface,
                                              "checkpoint": "sha256:ab"},
    "ftipbook.compare.instance.describe_map": {"law": instance_lm},
    "ftipbook.compare.instance.ArchitectureRecord": fields_of(architecture_record),
    "ftipbook.compare.instance.ArchitectureRecord.of": {"model": model_record, "law": instance_lm},
    "ftipbook.compare.instance.require_architecture": {"record": architecture_record, "claim": "cache"},
    "ftipbook.compare.instance.OptimizerRecord.capture": {"optimizer": adamw, "model": instance_lm},
    "ftipbook.compare.instance.ModelInstanceRecord.capture": {
        "name": "net", "model": instance_lm, "optimizer": adamw, "config": train_config,
        "randomness": run_randomness, "systems": systems_record, "data": "toy", "post_training": "none",
        "train_cost": lambda: instance_costs()[0], "inference_cost": lambda: instance_costs()[1],
        "task_suite": "suite", "evaluation_law": "nll", "eval_seed": 99},
    "ftipbook.compare.instance.ModelInstanceRecord.from_study": {"entry": study_entry},
    "ftipbook.compare.instance.describe_architecture": {"cfg": instance_config},
    "ftipbook.compare.instance.attribution": {"a": lambda: instance_pair()[0], "b": lambda: instance_pair()[1]},
    "ftipbook.compare.instance.Comparability": fields_of(lambda: _c("instance").comparable(
        *instance_pair(), varied=("architecture", "checkpoint", "parameters", "kernels", "inference_cost"))),
    "ftipbook.compare.instance.comparable": {"a": lambda: instance_pair()[0], "b": lambda: instance_pair()[1],
                                             "varied": lambda: ["architecture", "checkpoint", "parameters", "kernels",
                                                                "inference_cost"]},
    "ftipbook.compare.instance.ComparisonUnit": {"pair": instance_pair, "task_family": "suite", "evaluation_law": "nll",
                                                 "scalarization": unit_weights},
    "ftipbook.compare.records.missing_fields": {"record": training_record},
    "ftipbook.compare.records.diff_records": {"a": lambda: eval_conditions("v1"), "b": lambda: eval_conditions("v2")},
    "ftipbook.compare.records.check_common_conditions": {"a": lambda: eval_conditions("v1"),
                                                         "b": lambda: eval_conditions("v2")},
    "ftipbook.compare.records.describe_variant": {"cfg": hybrid_model_config},
    "ftipbook.compare.records.SystemIdentity.from_artifact": {"name": "net", "artifact": artifact},
    "ftipbook.compare.records.ComparisonPair": {"a": identity, "b": identity_b},
    "ftipbook.compare.records.TrainingRecord.from_run": {"config": train_config, "randomness": run_randomness,
                                                         "data": "toy"},
    "ftipbook.compare.records.TrainingRecord.common_recipe_arms": {"other": lambda: training_record(204_800)},
    "ftipbook.compare.records.TrainingRecord.equal_tuning_arms": {"other": lambda: training_record(204_800)},
    "ftipbook.compare.records.SystemsIntervention": fields_of(lambda: _c("records").systems_intervention(
        systems_record(), systems_record_b(), torch.zeros(1, 2), torch.tensor([[0.0, 1e-6]]))),
    "ftipbook.compare.records.systems_intervention": {"before": systems_record, "after": systems_record_b,
                                                      "out_before": lambda: torch.zeros(1, 2),
                                                      "out_after": lambda: torch.tensor([[0.0, 1e-6]])},
    # study, depth_study, jepa_study (the committed builds, loaded once)
    "ftipbook.study.common_recipe": {"budget": 50},
    "ftipbook.study.train_config": {"recipe": lambda: _m("ftipbook.study").common_recipe(50)},
    "ftipbook.study.document_scores": {"model": study_model, "documents": study_documents, "batch_size": 2},
    "ftipbook.study.StudyEntry": fields_of(study_entry),
    "ftipbook.study.Study": fields_of(the_study),
    "ftipbook.study.Study.recipe_at": {"budget": 50},
    "ftipbook.study.Study.entry": {"architecture": "full-attention", "budget": 50, "seed": 0},
    "ftipbook.study.Study.arm": {"budget": 50},
    "ftipbook.study.Study.checkpoint": {"architecture": "full-attention"},
    "ftipbook.study.write_manifest": {"directory": manifest_dir},
    "ftipbook.study.verified_artifact": {"files": study_files, "directory": lambda: _m("ftipbook.study").STUDY_DIR,
                                         "name": "full-attention"},
    "ftipbook.study.verified_json": {"files": study_files, "directory": lambda: _m("ftipbook.study").STUDY_DIR,
                                     "name": "STUDY.json", "format": lambda: _m("ftipbook.study").FORMAT},
    "ftipbook.study.checkpoint_files": {"artifacts": lambda: {"tiny": artifact()}},
    "ftipbook.study.build_files": {"data": lambda: {"a": 1}, "artifacts": lambda: {"tiny": artifact()},
                                   "data_file": "STUDY.json"},
    "ftipbook.study.write": {"directory": lambda: scratch_dir() / "study", "data": lambda: {"a": 1},
                             "artifacts": lambda: {"tiny": artifact()}},
    "ftipbook.study.rebuild_distances": {"rebuilt": lambda: _m("ftipbook.study").STUDY_DIR},
    "ftipbook.depth_study.capture_record": {"model": depth_model},
    "ftipbook.depth_study.prefill_flops": {"model": depth_model},
    "ftipbook.depth_study.depth_record": {"d": lambda: the_depth_study().run(1, 0).record.to_dict()},
    "ftipbook.depth_study.PassesRun": fields_of(lambda: the_depth_study().run(1, 0)),
    "ftipbook.depth_study.Recirculation": fields_of(lambda: the_depth_study().recirculation()),
    "ftipbook.depth_study.LatentRun": fields_of(lambda: the_depth_study().latent_run(1.0, 0)),
    "ftipbook.depth_study.DepthStudy": fields_of(the_depth_study),
    "ftipbook.depth_study.DepthStudy.run": {"passes": 1, "seed": 0},
    "ftipbook.depth_study.DepthStudy.latent_run": {"weight": 1.0, "seed": 0},
    "ftipbook.depth_study.DepthStudy.checkpoint": {"name": "passes-1"},
    "ftipbook.depth_study.SurfaceFit": fields_of(lambda: _m("ftipbook.depth_study").fit_surface(
        the_depth_study().surface(), _m("ftipbook.depth_study").SURFACE_FORMS[0])),
    "ftipbook.depth_study.SurfaceFit.covers": {"n": 64.0, "p": 1.0, "d": 1000.0},
    "ftipbook.depth_study.SurfaceFit.predict": {"n": 64.0, "p": 1.0, "d": 1000.0, "extrapolate": True},
    "ftipbook.depth_study.surface_design": {"surface": lambda: the_depth_study().surface()},
    "ftipbook.depth_study.fit_surface": {"surface": lambda: the_depth_study().surface(),
                                         "form": lambda: _m("ftipbook.depth_study").SURFACE_FORMS[0]},
    "ftipbook.depth_study.rebuild_report": {"rebuilt": lambda: _m("ftipbook.depth_study").DEPTH_DIR},
    "ftipbook.jepa_study.JEPAStudy": fields_of(the_jepa_study),
    "ftipbook.jepa_study.JEPAStudy.decoder": {"name": "readout"},
    "ftipbook.jepa_study.JEPAStudy.decoded": {"name": "readout"},
    # compare: reduction
    "ftipbook.compare.reduction.gqa_as_mha": {"model": gqa_lm},
    "ftipbook.compare.reduction.with_mla_absorb": {"model": mla_lm, "absorb": True},
    "ftipbook.compare.reduction.DeclaredTask": {"prompts": ((1,), (2, 3)), "answers": ((3, 0), (1,)), "vocab_size": V},
    "ftipbook.compare.reduction.task_prefixes": {"task": declared_task},
    "ftipbook.compare.reduction.next_law": {"lm": gqa_lm, "prefix": lambda: [0, 1], "vocab_size": V},
    "ftipbook.compare.reduction.output_law_distance": {"a": gqa_lm, "b": mla_lm, "prefixes": lambda: [[0], [1, 2]],
                                                       "vocab_size": V},
    "ftipbook.compare.reduction.answer_probabilities": {"lm": gqa_lm, "task": declared_task},
    "ftipbook.compare.reduction.expected_nll": {"lm": gqa_lm, "task": declared_task},
    "ftipbook.compare.reduction.greedy_exact_match": {"lm": gqa_lm, "task": declared_task},
    "ftipbook.compare.reduction.exact_pass_at_k": {"lm": gqa_lm, "task": declared_task, "k": 2},
    "ftipbook.compare.reduction.expected_reward": {"lm": gqa_lm, "task": declared_task,
                                                   "reward": lambda: lambda p, y: y / 4},
    "ftipbook.compare.reduction.kl_to_reference": {"lm": gqa_lm, "task": declared_task, "reference": mla_lm},
    "ftipbook.compare.reduction.standard_functionals": {"task": declared_task, "k": 2,
                                                        "reward": lambda: lambda p, y: y / 4, "reference": mla_lm},
    "ftipbook.compare.reduction.same_law_values": {"a": gqa_lm, "b": mla_lm, "functionals": functionals},
    # compare: reports
    "ftipbook.compare.reports.MeasuredContrast": {"quantity": "accuracy", "unit": "points", "system_a": "kimi",
                                                  "system_b": "mla", "value_a": 0.75, "value_b": 0.5,
                                                  "protocol": "Table 4 protocol"},
    "ftipbook.compare.reports.direction_summary": {"contrasts": lambda: [contrast(), contrast("speed", 1.0, 2.0)]},
    "ftipbook.compare.reports.ModelInput": {"name": "p", "value": 0.08, "status": "assumed", "source": "illustrative"},
    "ftipbook.compare.reports.ConditionalPrediction": fields_of(prediction),
    "ftipbook.compare.reports.ConditionalPrediction.derive": {"quantity": "discovery", "model": "1 - (1 - p)^n",
                                                              "fn": lambda: _discovery, "inputs": model_inputs},
    "ftipbook.compare.reports.ConditionalPrediction.check": {
        "test": lambda: _c("reports").ProportionTest(0.95), "data": (1460, 2000)},
    "ftipbook.compare.reports.ProportionTest.evaluate": {"prediction": prediction, "data": (1460, 2000)},
    "ftipbook.compare.reports.MeanTest.evaluate": {"prediction": prediction, "data": lambda: [0.7, 0.75, 0.8, 0.72]},
    "ftipbook.compare.reports.ToleranceTest": {"abs_tol": 0.05},
    "ftipbook.compare.reports.ToleranceTest.evaluate": {"prediction": prediction, "data": 0.75},
    "ftipbook.compare.reports.format_table": {"headers": lambda: ["a", "b"], "rows": lambda: [["x", 0.5], ["y", 2]]},
    # compare: saturation
    "ftipbook.compare.saturation.SaturationCertificate": fields_of(saturation_certificate),
    "ftipbook.compare.saturation.SaturationCertificate.at": {"budget": 4.0},
    "ftipbook.compare.saturation.saturation_certificate": {"interventions": sat_interventions, "q": 0.8,
                                                           "witness": lambda: sat_interventions()[2],
                                                           "upper": justified},
    "ftipbook.compare.saturation.declared_saturation": {"interventions": sat_interventions, "q": 0.5, "budget": 1.0,
                                                        "delta": 1.0, "eps": 0.1},
    "ftipbook.compare.saturation.ConditionalSaturation": fields_of(lambda: _c("saturation").conditional_saturation(
        budget=2.0, delta=1.0, eps=0.05, upper=justified(0.9), lower=justified(0.88))),
    "ftipbook.compare.saturation.conditional_saturation": {"budget": 2.0, "delta": 1.0, "eps": 0.05,
                                                           "upper": lambda: justified(0.9),
                                                           "lower": lambda: justified(0.88)},
    "ftipbook.compare.saturation.IndistinguishableFrontiers": fields_of(
        lambda: _c("saturation").indistinguishable_frontiers([1.0, 2.0], 3.0)),
    "ftipbook.compare.saturation.IndistinguishableFrontiers.frontier": {"theta": 1, "budget": 3.0},
    "ftipbook.compare.saturation.indistinguishable_frontiers": {"measured_costs": lambda: [1.0, 2.0], "c0": 3.0},
    # compare: restricted
    "ftipbook.compare.restricted.interventions_from_outcomes": {
        "outcomes": lambda: {"a": [restricted_runner("A", {}, restricted_member("a"), 0)]}, "accounting": by_flops},
    "ftipbook.compare.restricted.AllowedClass": {"architecture": "A", "package": lambda: {},
                                                 "members": lambda: {n: restricted_member(n) for n in ("a", "b")},
                                                 "exclusions": lambda: {"x": "not declared"}, "search_budget": 10,
                                                 "seeds": (0, 1)},
    "ftipbook.compare.restricted.AllowedClass.enlarged": {"members": lambda: {"c": restricted_member("c")}},
    "ftipbook.compare.restricted.AllowedClass.contains": {"other": lambda: allowed_class(("a",))},
    "ftipbook.compare.restricted.Envelope": fields_of(envelope),
    "ftipbook.compare.restricted.envelope_difference": {"a": envelope, "b": envelope},
    "ftipbook.compare.restricted.RestrictedEnvelopeArm": {"classes": lambda: {"A": allowed_class()}, "cap": 6.0,
                                                          "accounting": by_flops, "evaluation_law": "toy law"},
    "ftipbook.compare.restricted.RestrictedEnvelopeArm.envelope": {"runner": lambda: restricted_runner,
                                                                   "architecture": "A"},
    "ftipbook.compare.restricted.RestrictedEnvelopeArm.envelopes": {"runner": lambda: restricted_runner},
    "ftipbook.compare.restricted.RestrictedEnvelopeArm.search": {"runner": lambda: restricted_runner,
                                                                 "architecture": "A"},
    # compare: tradeoff
    "ftipbook.compare.tradeoff.TradeoffSetting": fields_of(tradeoff_setting),
    "ftipbook.compare.tradeoff.TradeoffSetting.from_config": {
        "cfg": lambda: tradeoff_setting and _m("ftipbook.model").ModelConfig(
            vocab_size=256, d_model=64, n_layers=4, n_heads=4, layer_pattern="KKKM", mla_nope=True, kv_lora_rank=32),
        "memory": 64 * 2**20, "context": 4096, "f": 0.8, "p_m": 0.1, "p_k": 0.08, "budget": 10},
    "ftipbook.compare.tradeoff.predictions": {"setting": tradeoff_setting},
    "ftipbook.compare.tradeoff.break_even": {"setting": tradeoff_setting},
    "ftipbook.compare.tradeoff.World.as_assumed": {"setting": tradeoff_setting},
    "ftipbook.compare.tradeoff.simulate_study": {"setting": tradeoff_setting, "world": world, "budgets": 50, "seed": 3},
    "ftipbook.compare.tradeoff.check_world": {"setting": tradeoff_setting, "world": world},
    # compare: interfaces
    "ftipbook.compare.interfaces.PigeonholeWitness": fields_of(lambda: _c("interfaces").pigeonhole_obstruction(
        counting_task(3), recurrence().state, recurrence().read, 3)),
    "ftipbook.compare.interfaces.pigeonhole_obstruction": {"task": counting_task,
                                                           "state_of": lambda: recurrence().state,
                                                           "readout": lambda: recurrence().read, "levels": 3},
    "ftipbook.compare.interfaces.StateInterface": fields_of(state_interface),
    "ftipbook.compare.interfaces.QuantizedRecurrence.state": {"prefix": (1, 1)},
    "ftipbook.compare.interfaces.QuantizedRecurrence.exact_state": {"prefix": (1, 1)},
    "ftipbook.compare.interfaces.QuantizedRecurrence.output": {"prefix": (1, 1)},
    "ftipbook.compare.interfaces.ApplicabilityReport": fields_of(lambda: applicability().assess()),
    "ftipbook.compare.interfaces.Applicability": fields_of(applicability),
    "ftipbook.compare.interfaces.pigeonhole_applicability": {"iface": state_interface, "task": counting_task},
    # compare: jepa_interface
    "ftipbook.compare.jepa_interface.check_comparable": {"first": jepa_iface, "second": jepa_iface},
    "ftipbook.compare.jepa_interface.NextTokenNLL": {"documents": jepa_docs, "tokenizer": jepa_tokenizer,
                                                     "seq_len": 3, "batch_size": 2},
    "ftipbook.compare.jepa_interface.NextTokenNLL.item_nlls": {"law_map": lambda: bigram_law_map},
    "ftipbook.compare.jepa_interface.NextTokenNLL.__call__": {"law_map": lambda: bigram_law_map},
    "ftipbook.compare.jepa_interface.InterfaceComparison": fields_of(
        lambda: _c("jepa_interface").compare_through_interface(
            {"a": (nll_iface(), uniform_law_map), "b": (nll_iface(), bigram_law_map)}, next_token_nll())),
    "ftipbook.compare.jepa_interface.compare_through_interface": {
        "systems": lambda: {"a": (nll_iface(), uniform_law_map), "b": (nll_iface(), bigram_law_map)},
        "law": next_token_nll},
    "ftipbook.compare.jepa_interface.interface_log_loss": {"system": table_lm_3,
                                                           "task": lambda: [([0], 1), ([0, 1], 2)]},
    # compare: kda_instance
    "ftipbook.compare.kda_instance.check_baseline": {"label": "MLA"},
    "ftipbook.compare.kda_instance.KDAInstanceRecord": fields_of(lambda: _c("kda_instance").capture(
        kda_hybrid(), name="h", baseline="MLA", prompt_length=4, new_tokens=1)),
    "ftipbook.compare.kda_instance.capture": {"model": kda_hybrid, "name": "h", "baseline": "MLA",
                                              "prompt_length": 4, "new_tokens": 1},
    "ftipbook.compare.kda_instance.match_d_ff": {"cfg": lambda: kda_hybrid().cfg,
                                                 "target": lambda: _m("ftipbook.model.accounting").param_count(
                                                     kda_hybrid().cfg)},
    "ftipbook.compare.kda_instance.parameter_matched_costs": {"models": lambda: {"a": kda_hybrid(), "b": kda_twin()},
                                                              "context": 8, "memory_budget": 2**20},
    "ftipbook.compare.kda_instance.stable_ordering": {"timing": timing, "run_a": lambda: lambda: 1,
                                                      "run_b": lambda: lambda: 2, "rounds": 1},
    # compare: measure, published, reproducibility
    "ftipbook.compare.measure.count_flops": {"fn": lambda: lambda: torch.nn.functional.linear(torch.ones(2, 3),
                                                                                             torch.ones(4, 3))},
    "ftipbook.compare.measure.timed": {"fn": lambda: lambda: 1},
    "ftipbook.compare.measure.training_step_flops": {"model": instance_lm_32, "batch": packed_batch},
    "ftipbook.compare.measure.training_step_peak_bytes": {
        "model": instance_lm_32, "batch": packed_batch,
        "make_optimizer": lambda: lambda m: torch.optim.AdamW(m.parameters())},
    "ftipbook.compare.measure.optimizer_state_rule": {"optimizer": adamw},
    "ftipbook.compare.published.PublishedValue": {"value": 1.5, "unit": "x", "source_key": "kimi2025",
                                                  "locator": "Table 1", "kind": "reported"},
    "ftipbook.compare.published.Registry": {"name": "R", "records": lambda: {"a": published_value()}},
    "ftipbook.compare.published.Registry.get": {"name": "a"},
    "ftipbook.compare.published.get": {"name": "experimental_pretraining_tokens"},
    "ftipbook.compare.reproducibility.Checklist": fields_of(lambda: _c("reproducibility").checklist(
        reproducibility_record())),
    "ftipbook.compare.reproducibility.checklist": {"record": reproducibility_record},
    # eval
    "ftipbook.eval.metrics.pass_at_k": {"item_probs": lambda: [0.25, 0.5], "k": 2},
    "ftipbook.eval.metrics.pass_at_k_unbiased": {"n": 5, "c": lambda: [1, 3], "k": 2},
    "ftipbook.eval.stats.Measurements": {"rule": timing, "values": (0.5, 0.75)},
    "ftipbook.eval.stats.RepeatedMeasurement.record": {"values": lambda: [0.5, 0.75]},
    "ftipbook.eval.stats.RepeatedMeasurement.run": {"fn": lambda: lambda: 0.5},
    "ftipbook.eval.stats.RepeatedMeasurement.time": {"fn": lambda: lambda: 1},
    # compare: depth_records, depth_sources
    "ftipbook.compare.depth_records.run_decode": {"model": depth_lm, "prompt": lambda: torch.tensor(DEPTH_PROMPT),
                                                  "new_tokens": 2},
    "ftipbook.compare.depth_records.ComputationAxisRecord.from_run": {"model": depth_lm, "run": decode_run},
    "ftipbook.compare.depth_records.depth_interventions": {"a": depth_reuse_record,
                                                           "b": lambda: depth_reuse_record(looped_lm())},
    "ftipbook.compare.depth_records.TrainingCoordinates": fields_of(lambda: separable_record().training),
    "ftipbook.compare.depth_records.SystemsCoordinates": fields_of(lambda: separable_record().systems),
    "ftipbook.compare.depth_records.SeparableRecord": fields_of(separable_record),
    "ftipbook.compare.depth_records.SeparableRecord.capture": {
        "trained": depth_lm, "deployed": depth_lm, "config": lambda: _m("ftipbook.train").TrainConfig(steps=10),
        "randomness": lambda: _m("ftipbook.train").RunRandomness(), "data": "counting stream",
        "prompt": lambda: DEPTH_PROMPT, "new_tokens": 2},
    "ftipbook.compare.depth_records.intervention_groups": {"a": separable_record,
                                                           "b": lambda: separable_record(looped_lm())},
    "ftipbook.compare.depth_sources.conditions": {"source_key": "giannou2023looped"},
    # compare: study_reports
    "ftipbook.compare.study_reports.MeasuredPoint": fields_of(lambda: frontier_report().points[0]),
    "ftipbook.compare.study_reports.PairedScore": fields_of(lambda: frontier_report().paired[0]),
    "ftipbook.compare.study_reports.IsoQualityComparison": fields_of(
        lambda: frontier_report().iso_quality(-2.8, "kda", "mla")),
    "ftipbook.compare.study_reports.FrontierReport": fields_of(frontier_report),
    "ftipbook.compare.study_reports.FrontierReport.point": {"system": "kda", "grid_cost": 50.0},
    "ftipbook.compare.study_reports.FrontierReport.scalar_cost": {"p": lambda: frontier_report().points[0]},
    "ftipbook.compare.study_reports.FrontierReport.measurements": {"system": "kda"},
    "ftipbook.compare.study_reports.FrontierReport.iso_quality": {"target": -2.8, "system_a": "kda",
                                                                  "system_b": "mla"},
    "ftipbook.compare.study_reports.FrontierReport.to_json": {"path": lambda: scratch_dir() / "report.json"},
    "ftipbook.compare.study_reports.seed_averaged_items": {"entries": lambda: report_entries()[:2]},
    "ftipbook.compare.study_reports.build_frontier_report": dict(
        {k: (lambda k=k: report_kwargs()[k]) for k in report_kwargs()}, entries=report_entries),
    "ftipbook.compare.study_reports.EstimandKey.differing": {"other": lambda: estimand_key("b")},
    "ftipbook.compare.study_reports.ordering": {"values": lambda: {estimand_key("a"): -3.0, estimand_key("b"): -2.0}},
    "ftipbook.compare.study_reports.RunConditions": fields_of(run_conditions),
    "ftipbook.compare.study_reports.classify_change": {"change": field_change},
    "ftipbook.compare.study_reports.coordinate_changes": {"a": run_conditions,
                                                          "b": lambda: run_conditions(identity__layer_pattern="KKKM")},
    "ftipbook.compare.study_reports.attribute_difference": {"changes": changes},
    "ftipbook.compare.study_reports.FactorialEstimate": fields_of(lambda: _c("study_reports").factorial_2x2(
        factorial_scores(), **FACTORIAL)),
    "ftipbook.compare.study_reports.factorial_2x2": dict({k: v for k, v in FACTORIAL.items()},
                                                         scores=factorial_scores),
    "ftipbook.compare.study_reports.Comparable": {"evidence": evidence, "value": -3.1, "unit": "nats"},
    "ftipbook.compare.study_reports.TransferMatrix": fields_of(transfer_matrix),
    "ftipbook.compare.study_reports.TransferMatrix.cell": {"row": "Transformer reference", "column": "NLL @ 400 steps"},
    "ftipbook.compare.study_reports.TransferMatrix.value": {"row": "Transformer reference",
                                                            "column": "NLL @ 400 steps"},
    "ftipbook.compare.study_reports.TransferMatrix.with_value": {"row": "KDA hybrid", "column": "NLL @ 400 steps",
                                                                 "value": -3.2, "unit": "nats"},
    "ftipbook.compare.study_reports.TransferMatrix.row_mean": {"row": "Transformer reference"},
    "ftipbook.compare.study_reports.TransferMatrix.comparable_rows": {"column": "NLL @ 400 steps"},
    "ftipbook.compare.study_reports.SequentialSignTest": {"looks": (4, 8, 12), "alpha": 0.2, "futility": 0.1},
    "ftipbook.compare.study_reports.SequentialSignTest.rejects": {"wins": 7, "n": 8},
    "ftipbook.compare.study_reports.SequentialSignTest.futile": {"wins": 3, "n": 8},
    "ftipbook.compare.study_reports.SequentialSignTest.run": {"a_better": lambda: [True, False, True, True] * 3},
    "ftipbook.compare.study_reports.SequentialSignTest.operating": {"p": F(3, 4)},
    "ftipbook.compare.study_reports.ComparisonResult": {"comparison": "K - T", "estimate": 0.25,
                                                        "interval": stats_interval, "detected": False, "margin": 0.5,
                                                        "unit": "nats"},
    "ftipbook.compare.study_reports.StoppingReport": {"tested_grid": (50.0, 100.0), "grid_unit": "steps",
                                                      "excluded": lambda: {"wide": "over budget"},
                                                      "stopping_rule": "fixed grid", "uncertainty": "bootstrap",
                                                      "results": lambda: (comparison_result(),)},
    # compare: systems_variants, throughput, toy_surface, tradeoff
    "ftipbook.compare.systems_variants.WindowKVCache.update": {"k": lambda: torch.ones(1, 1, 1, 2),
                                                               "v": lambda: torch.ones(1, 1, 1, 2)},
    "ftipbook.compare.systems_variants.decode_logits": {
        "model": variant_lm, "tokens": lambda: torch.tensor([[1, 2, 3]]),
        "cache": lambda: _c("systems_variants").variant_cache(variant_lm(), 1)},
    "ftipbook.compare.throughput.AttemptComparison": fields_of(lambda: _c("throughput").compare_attempts(
        f=0.8, s=2.2, p_m=0.1, p_k=0.08, budget=10.0)),
    "ftipbook.compare.toy_surface.ToyResponseSurface": {"packages": lambda: {"A": dict(TOY_P)},
                                                        "item_offsets": (0.25, -0.125, -0.125)},
    "ftipbook.compare.toy_surface.ToyResponseSurface.score": {"package": "A", "recipe": toy_recipe},
    "ftipbook.compare.toy_surface.ToyResponseSurface.cost": {"package": "A", "recipe": toy_recipe},
    "ftipbook.compare.toy_surface.ToyResponseSurface.runner": {"package_name": "A", "package": lambda: {},
                                                               "recipe": toy_recipe, "seed": 0},
    "ftipbook.compare.tradeoff.concurrency": {"kappa": 64, "sigma": 3200, "ell": 2, "memory": 2**20, "context": 10},
    # model.depth, model.jepa, model.hf_hybrid
    "ftipbook.model.depth.FeedbackCache": {"layers": lambda: feedback_lm().new_cache(1, 8).layers,
                                           "feedback_passes": 2},
    "ftipbook.model.depth.NextLatentHead.forward": {"h": lambda: torch.linspace(-1, 1, 24).reshape(1, 3, 8),
                                                    "e_next": lambda: torch.linspace(1, -1, 24).reshape(1, 3, 8)},
    "ftipbook.model.depth.NextLatentLM.next_latent_loss": {
        "tokens": lambda: torch.tensor([[1, 2, 3, 4]]),
        "h": lambda: next_latent_lm().hidden_states(torch.tensor([[1, 2, 3, 4]])).detach(), "seg_ids": None},
    "ftipbook.model.jepa.JEPAConfig": {"encoder": lambda: jepa_config().encoder, "predictor_hidden": 8},
    "ftipbook.model.jepa.JEPAConfig.from_dict": {"d": lambda: jepa_config().to_dict()},
    "ftipbook.model.jepa.JEPA": {"cfg": jepa_config},
    "ftipbook.model.jepa.JEPA.context_latents": {"tokens": lambda: torch.tensor([[1, 2, 3]])},
    "ftipbook.model.jepa.JEPA.predicted_latents": {"tokens": lambda: torch.tensor([[1, 2, 3]])},
    "ftipbook.model.jepa.JEPA.target_latents": {"tokens": lambda: torch.tensor([[1, 2, 3]])},
    "ftipbook.model.jepa.JEPA.loss": {"tokens": lambda: torch.tensor([[1, 2, 3]])},
    "ftipbook.model.jepa.JEPA.update_target": {"decay": 0.5},
    "ftipbook.model.jepa.LinearReadout": {"weight": lambda: torch.linspace(-1, 1, 320).reshape(20, 16),
                                          "bias": lambda: torch.linspace(0, 1, 20)},
    "ftipbook.model.jepa.LinearReadout.forward": {"latents": lambda: torch.linspace(-1, 1, 48).reshape(1, 3, 16)},
    "ftipbook.model.jepa.fit_linear_readout": {"latents": lambda: torch.linspace(-1, 1, 32).reshape(4, 8),
                                               "tokens": lambda: torch.tensor([0, 1, 2, 1]), "vocab_size": 3,
                                               "steps": 5},
    "ftipbook.model.jepa.DecodedJEPA": {"jepa": jepa, "decoder": linear_readout},
    "ftipbook.model.jepa.DecodedJEPA.forward": {"tokens": lambda: torch.tensor([[1, 2, 3]])},
    "ftipbook.model.jepa.DecodedJEPA.next_token_law": {"prefix": lambda: torch.tensor([1, 2, 3])},
    "ftipbook.model.hf_hybrid.hybrid_state_dict_from_hf": {
        "tensors": lambda: _m("ftipbook.model.hf_hybrid").hybrid_state_dict_to_hf(kimi_lm(), "kimi_linear"),
        "cfg": lambda: kimi_lm().cfg, "hf": lambda: _m("tests.surface").hybrid_hf_config()},
    "ftipbook.model.hf_hybrid.hybrid_state_dict_to_hf": {"model": kimi_lm, "model_type": "kimi_linear"},
    "ftipbook.model.hf_hybrid.save_hf_hybrid": {"model": kimi_lm, "path": lambda: scratch_dir() / "kimi",
                                                "model_type": "kimi_linear"},
    "ftipbook.model.hf_hybrid.load_hf_hybrid": {"path": saved_kimi},
}

INSTANCES: dict[str, Callable[[], Any]] = {
    "ftipbook.prob.MeasurableKernel": measurable_kernel,
    "ftipbook.prob.FiniteKernel": finite_kernel,
    "ftipbook.claims.Budget": dep_budget,
    "ftipbook.claims.CapabilityClaim": capability_claim,
    "ftipbook.claims.EvaluationSet": evaluation_set,
    "ftipbook.claims.Procedure": procedure,
    "ftipbook.claims.EvaluationRule": evaluation_rule,
    "ftipbook.tasks.TaskLaw": task_law,
    "ftipbook.tasks.EvaluationSample": evaluation_sample,
    "ftipbook.tasks.Resources": resources,
    "ftipbook.tasks.InferenceProtocol": inference_protocol,
    "ftipbook.tasks.RetryProtocol": retry_protocol,
    "ftipbook.tasks.Evaluator": evaluator,
    "ftipbook.tasks.Task": task,
    "ftipbook.env.interaction.Estimate": estimate,
    "ftipbook.env.interaction.Interaction": door_interaction,
    "ftipbook.env.kernels.InitialLaw": lambda: door_environment().initial,
    "ftipbook.env.kernels.TransitionKernel": lambda: _env("kernels").TransitionKernel(
        _env("examples").counter_step_law(F(2, 3))),
    "ftipbook.env.history.PublicHistory": door_history,
    "ftipbook.env.policy.Policy": door_policy,
    "ftipbook.env.realization.InteractiveRealization": calculator_realization,
    "ftipbook.env.spaces.Spaces": door_spaces,
    "ftipbook.env.stopping.StoppingRule": lambda: _env("stopping").StoppingRule.on_action("eos", {"unlock"}),
    "ftipbook.env.stopping.Stopping": door_stopping,
    "ftipbook.env.calculator.ModelPolicy": model_policy,
    "ftipbook.compare.arms.ArmResult": arm_result,
    "ftipbook.compare.arms.CommonRecipeArm": common_arm,
    "ftipbook.compare.arms.TuningResult": tuning_result,
    "ftipbook.compare.arms.EqualTuningArm": tuning_arm,
    "ftipbook.compare.cost.Scalarization": scalarization,
    "ftipbook.compare.cost.OrderFlip": lambda: _c("cost").order_flip_weights(cost_vector(10.0, 5.0),
                                                                              cost_vector(4.0, 9.0), scalarization()),
    "ftipbook.compare.frontier.DeclaredFrontier": declared_frontier,
    "ftipbook.compare.grid.CostGrid": cost_grid,
    "ftipbook.compare.grid.GridCurves": grid_curves,
    "ftipbook.compare.ceilings.ReachableSet": reachable_set,
    "ftipbook.compare.ceilings.DifferenceGrid": difference_grid,
    "ftipbook.compare.instance.NextTokenInterface": next_token_interface,
    "ftipbook.compare.instance.ArchitectureRecord": architecture_record,
    "ftipbook.compare.instance.OptimizerRecord": optimizer_record,
    "ftipbook.compare.records.TrainingRecord": training_record,
    "ftipbook.study.Study": the_study,
    "ftipbook.depth_study.DepthStudy": the_depth_study,
    "ftipbook.depth_study.SurfaceFit": lambda: _m("ftipbook.depth_study").fit_surface(
        the_depth_study().surface(), _m("ftipbook.depth_study").SURFACE_FORMS[0]),
    "ftipbook.jepa_study.JEPAStudy": the_jepa_study,
    "ftipbook.compare.reports.ConditionalPrediction": prediction,
    "ftipbook.compare.reports.ToleranceTest": lambda: _c("reports").ToleranceTest(abs_tol=0.05),
    "ftipbook.compare.saturation.SaturationCertificate": saturation_certificate,
    "ftipbook.compare.saturation.IndistinguishableFrontiers": lambda: _c("saturation").indistinguishable_frontiers(
        [1.0, 2.0], 3.0),
    "ftipbook.compare.restricted.AllowedClass": allowed_class,
    "ftipbook.compare.restricted.RestrictedEnvelopeArm": restricted_arm,
    "ftipbook.compare.tradeoff.TradeoffSetting": tradeoff_setting,
    "ftipbook.compare.interfaces.QuantizedRecurrence": recurrence,
    "ftipbook.compare.jepa_interface.NextTokenNLL": next_token_nll,
    "ftipbook.compare.published.Registry": lambda: _c("published").Registry("R", {"a": published_value()}),
    "ftipbook.eval.stats.RepeatedMeasurement": timing,
    "ftipbook.eval.stats.Measurements": lambda: timing().record([0.5, 0.75]),
    "ftipbook.compare.study_reports.FrontierReport": frontier_report,
    "ftipbook.compare.study_reports.EstimandKey": estimand_key,
    "ftipbook.compare.study_reports.TransferMatrix": transfer_matrix,
    "ftipbook.compare.study_reports.SequentialSignTest": sign_test,
    "ftipbook.compare.systems_variants.WindowKVCache": lambda: _c("systems_variants").WindowKVCache(1, 1, 2, window=3),
    "ftipbook.compare.toy_surface.ToyResponseSurface": toy_surface,
    "ftipbook.model.depth.NextLatentHead": lambda: _m("ftipbook.model.depth").NextLatentHead(8, 4),
    "ftipbook.model.depth.NextLatentLM": next_latent_lm,
    "ftipbook.model.jepa.JEPA": jepa,
    "ftipbook.model.jepa.LinearReadout": linear_readout,
    "ftipbook.model.jepa.DecodedJEPA": decoded_jepa,
}

BY_ANNOTATION: dict[str, Callable[[], Any]] = {
    "EvaluationSet": evaluation_set, "Procedure": procedure, "DevelopmentBudget": dev_budget,
    "DeploymentBudget": dep_budget, "StartingArtifact": starting_artifact, "EvaluationRule": evaluation_rule,
    "ResourceBound": resource_bound, "Task": task, "TaskLaw": task_law, "PublicInstance": public_instance,
    "Resources": resources, "Candidate": candidate, "ModelArtifact": artifact, "Evaluator": evaluator,
    "ProtocolResult": protocol_result, "EvaluationSample": evaluation_sample,
    "PublicHistory": door_history, "Environment": door_environment, "Policy": door_policy,
    "Stopping": door_stopping, "StoppedTrajectory": door_trajectory, "Spaces": door_spaces,
    "StopCause": stop_cause, "CostVector": cost_vector, "Scalarization": scalarization, "Outcome": outcome,
    "DeclaredFrontier": declared_frontier, "ScoredCostMeasurement": measurement_sc,
    "ThresholdCostClaim": threshold_claim, "ComparisonArm": comparison_arm, "CostGrid": cost_grid,
    "GridCurves": grid_curves, "Band": band, "BandProcedure": band_procedure, "ReachableSet": reachable_set,
    "GridCeiling": grid_ceiling, "ModelInstanceRecord": instance_record, "SystemIdentity": identity,
    "TrainingRecord": training_record, "SystemsRecord": systems_record, "EvaluationConditions": eval_conditions,
    "FieldChange": field_change, "TrainConfig": train_config, "RunRandomness": run_randomness,
    "NextTokenInterface": next_token_interface, "ModelRecord": model_record, "StudyEntry": study_entry,
    "torch.optim.Optimizer": adamw, "DeclaredTask": declared_task, "ConditionalPrediction": prediction,
    "JustifiedBound": justified, "AllowedClass": allowed_class, "Envelope": envelope,
    "TradeoffSetting": tradeoff_setting, "World": world, "MeasuredContrast": contrast,
    "JEPAConfig": jepa_config, "JEPA": jepa,
    "StateInterface": state_interface, "JEPAInterface": jepa_iface, "NextTokenNLL": next_token_nll,
    "RepeatedMeasurement": timing, "PackedBatch": packed_batch, "PublishedValue": published_value,
}
EXEMPT: dict[str, str] = {
    "ftipbook.prob.NextTokenLaw.next_token_law": "the method of a typing.Protocol: an interface with no "
                                                 "implementation (TableLM and DecoderLM implement it, probed)",
    "ftipbook.claims.Budget": "the common base refuses construction by design (TypeError naming the subclasses); "
                              "DevelopmentBudget and DeploymentBudget are probed",
    "ftipbook.study.StudyRunner.model_factory": "a class attribute holding ftipbook.model.build_model (probed in "
                                                "the model modules), not a method",
    "ftipbook.study.StudyRunner.__call__": "trains one model of the study (seconds to minutes); "
                                           "scripts/build_study.py --check runs it",
    "ftipbook.study.rerun_entry": "retrains one entry of the study (seconds to minutes); tests/test_study.py runs it",
    "ftipbook.compare.study_reports.TransferMatrix.impute": "refuses every call by design (ImputationRefused: a "
                                                            "blank cell is a finding); no valid call exists",
    "ftipbook.tasks.Task.admissible": "a dataclass field whose default is tasks.parses_as_integer (probed where "
                                      "it is defined); not a method",
}
