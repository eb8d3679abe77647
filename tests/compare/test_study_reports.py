"""Study reports: frontier, estimands, coordinate changes, transfer matrix, stopping (ftip-00LQ to 00M2)."""
import dataclasses
import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from ftipbook.compare.cost import UNKNOWN, CostVector, Scalarization
from ftipbook.compare.frontier import NotReached, Undefined
from ftipbook.compare.records import (EvaluationConditions, Record, SystemIdentity, SystemsRecord, TrainingRecord,
                                     TuningProtocol)
from ftipbook.compare.study_reports import (
    Blank,
    Comparable,
    ComparisonResult,
    EstimandKey,
    EstimandMismatch,
    Evidence,
    FactorialEstimate,
    FrontierReport,
    ImputationRefused,
    IncomparableCell,
    Incomparable,
    IncompleteReport,
    MeasuredPoint,
    MissingEvidence,
    Open,
    PairedScore,
    SequentialSignTest,
    StoppingReport,
    TransferMatrix,
    attribute_difference,
    build_frontier_report,
    coordinate_changes,
    factorial_2x2,
    ordering,
    sign_test_pvalue,
)
from ftipbook.eval.stats import Interval


@dataclasses.dataclass
class Entry:
    architecture: str
    budget: int
    seed: int
    item_scores: np.ndarray
    cost: CostVector


def cost(steps, mem, energy=UNKNOWN):
    return CostVector.standard(train_flops=1e9 * steps, inference_flops=1e5, wall_time=0.01 * steps, memory=mem,
                               context_length=64, energy=energy)


FLOPS = Scalarization({"train_flops": 1.0}, {"train_flops": "FLOP"}, "FLOP")


def entries():
    rng = np.random.default_rng(0)
    out = []
    for arch, shift, mem in (("kda", 0.0, 100.0), ("mla", 0.3, 200.0)):
        for budget in (50, 100, 200):
            for seed in (0, 1):
                scores = -3.0 + budget / 200 - shift * (budget == 200) + rng.normal(0, 0.05, 12)
                out.append(Entry(arch, budget, seed, scores, cost(budget, mem)))
    return out


def identity(name, checkpoint="sha256:" + "0" * 8):
    return SystemIdentity(name, checkpoint, f"{name}: 4 layers", "KKKM" if name == "kda" else "M", 1000, 1000,
                          "tok", 64)


def report(**kw):
    args = dict(protocol="toy NLL", grid_unit="steps", scalarization=FLOPS,
                identities={"kda": identity("kda"), "mla": identity("mla", "sha256:" + "1" * 8)},
                configs={"kda": {"layer_pattern": "KKKM"}, "mla": {"layer_pattern": "M"}},
                pareto_coordinates=("train_flops", "memory"), n_boot=200) | kw
    return build_frontier_report(entries(), **args)


def test_build_frontier_report_by_hand():
    r = report().validate()
    assert r.grid == (50.0, 100.0, 200.0) and r.systems == ("kda", "mla")
    es = entries()
    for a in ("kda", "mla"):
        for b in (50, 100, 200):
            runs = [e for e in es if e.architecture == a and e.budget == b]
            items = (runs[0].item_scores + runs[1].item_scores) / 2
            p = r.point(a, b)
            assert math.isclose(p.score, items.mean(), rel_tol=1e-12)
            assert p.interval.low <= p.score <= p.interval.high
            assert p.cost["train_flops"] == 1e9 * b and p.cost.unknown() == ("energy",)
    q = [q for q in r.paired if q.grid_cost == 200][0]
    assert math.isclose(q.difference, r.point("kda", 200).score - r.point("mla", 200).score, abs_tol=1e-12)
    assert q.n_pairs == 12 and not q.interval.contains(0.0)


def test_missing_parts_are_named():
    r = report()
    cases = {
        "scalarization weights": dataclasses.replace(r, scalarization=None),
        "identity of mla: checkpoint": dataclasses.replace(
            r, identities={"kda": identity("kda"), "mla": SystemIdentity("mla", UNKNOWN, "x", "M", 1, 1, "t", 64)}),
        "configuration of kda": dataclasses.replace(r, configs={"mla": {"a": 1}}),
        "identity of mla": dataclasses.replace(r, identities={"kda": identity("kda")}),
        "score of kda at 100 steps": dataclasses.replace(r, points=tuple(p for p in r.points
                                                                          if p.label[:7] != "kda@100")),
        "uncertainty interval of mla at 50 steps": dataclasses.replace(r, points=tuple(
            dataclasses.replace(p, interval=None) if p.label.startswith("mla@50 ") else p for p in r.points)),
        "paired score kda vs mla at 200 steps": dataclasses.replace(r, paired=r.paired[:2]),
        "Pareto coordinates": dataclasses.replace(r, pareto_coordinates=()),
        "scalar cost of kda@50 (seeds 0, 1) (positive weight on unknown coordinate(s) energy)": dataclasses.replace(
            r, scalarization=Scalarization({"energy": 1.0}, {"energy": "J"})),
    }
    for part, bad in cases.items():
        with pytest.raises(IncompleteReport) as err:
            bad.validate()
        assert part in err.value.missing, (part, err.value.missing)
        for method in (bad.to_markdown, bad.pareto_comparisons, bad.to_dict):
            with pytest.raises(IncompleteReport):
                method()


def test_export_json_atomic_and_markdown(tmp_path):
    r = report()
    path = r.to_json(tmp_path / "report.json")
    data = json.loads(path.read_text())
    assert data["scalarization"]["weights"] == {"train_flops": 1.0}
    assert data["systems"]["mla"]["identity"]["checkpoint"] == "sha256:11111111"
    assert len(data["points"]) == 6 and data["points"][0]["cost"]["energy"]["value"] == "UNKNOWN"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no partial file left
    md = r.to_markdown()
    assert md.count("\n| kda | 50 |") == 1 and md.count("\n| kda | mla |") == 3 and "| kda | mla | 200 |" in md
    assert "| mla | sha256:11111111 | mla: 4 layers |" in md
    with pytest.raises(IncompleteReport):
        dataclasses.replace(r, scalarization=None).to_json(tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()


def point(system, c, score, flops, mem, energy=1.0):
    return MeasuredPoint(system, c, score, Interval(score - 0.1, score + 0.1, 0.95, "x"),
                         CostVector.standard(train_flops=flops, memory=mem, energy=energy), f"{system}@{c:g}")


def small_report(points, coordinates=("train_flops", "memory"), grid=(1.0, 2.0)):
    names = sorted({p.system for p in points})
    paired = [PairedScore(names[0], names[1], c, 0.0, Interval(-1, 1, 0.95, "x"), 3) for c in grid]
    return FrontierReport("p", grid, "steps", tuple(points), tuple(paired), FLOPS,
                          {n: identity(n, f"sha256:{n}") for n in names}, {n: {"d": 1} for n in names}, coordinates)


def test_pareto_verdicts_by_hand():
    pts = [point("a", 1, -3.0, 10, 5), point("a", 2, -2.0, 20, 5),
           point("b", 1, -3.0, 10, 5), point("b", 2, -2.5, 20, 8)]
    got = {(c.a, c.b): c.verdict for c in small_report(pts).pareto_comparisons()}
    assert got == {("a@1", "b@1"): "equal", ("a@1", "b@2"): "tradeoff", ("a@2", "b@1"): "tradeoff",
                   ("a@2", "b@2"): "a dominates"}
    # b dominates when it is cheaper at an equal score
    pts2 = [point("a", 1, -3.0, 10, 6), point("a", 2, -1.0, 30, 6), point("b", 1, -3.0, 10, 5),
            point("b", 2, -3.5, 40, 9)]
    got = {(c.a, c.b): c.verdict for c in small_report(pts2).pareto_comparisons()}
    assert got[("a@1", "b@1")] == "b dominates" and got[("a@2", "b@2")] == "a dominates"
    # an unknown coordinate leaves a cost-ordering undetermined
    pts3 = [point("a", 1, -3.0, 10, 5, UNKNOWN), point("a", 2, -2.0, 20, 5), point("b", 1, -3.5, 10, 5),
            point("b", 2, -2.0, 20, 5)]
    got = {(c.a, c.b): c.verdict for c in small_report(pts3, ("train_flops", "energy")).pareto_comparisons()}
    assert got[("a@1", "b@1")] == "undetermined" and got[("a@2", "b@2")] == "equal"


def test_iso_quality_by_hand():
    pts = [point("a", 1, -3.0, 10, 5), point("a", 2, -2.0, 20, 5),
           point("b", 1, -2.5, 15, 5), point("b", 2, -2.4, 30, 8)]
    r = small_report(pts)
    iq = r.iso_quality(-2.5, "a", "b")
    assert iq.reached_a.label == "a@2" and iq.reached_b.label == "b@1" and iq.ratio.value == 20 / 15
    miss = r.iso_quality(-2.2, "a", "b")
    assert isinstance(miss.reached_b, NotReached) and isinstance(miss.ratio, Undefined)
    with pytest.raises(ValueError, match="'c'"):
        r.iso_quality(-2.5, "a", "c")


def test_report_construction_errors():
    p = point("a", 1, -3.0, 10, 5)
    with pytest.raises(ValueError, match="off the declared grid"):
        small_report([p, point("b", 3, -3, 1, 1)])
    with pytest.raises(ValueError, match="increasing"):
        small_report([p, point("b", 1, -3, 1, 1)], grid=(2.0, 1.0))
    with pytest.raises(ValueError, match="two points"):
        small_report([p, p, point("b", 1, -3, 1, 1)])
    with pytest.raises(TypeError, match="CostVector"):
        MeasuredPoint("a", 1, 0.0, None, {"x": 1}, "a")
    with pytest.raises(ValueError, match="score"):
        MeasuredPoint("a", 1, math.nan, None, p.cost, "a")
    with pytest.raises(ValueError, match="not paired"):
        build_frontier_report(entries()[:-1], protocol="p", grid_unit="steps", scalarization=FLOPS, identities={},
                              configs={}, pareto_coordinates=("memory",))


def key(arch, task="prose", law="T=1", scal="FLOPs"):
    return EstimandKey(arch, "common recipe", task, law, scal)


def test_ordering_within_one_estimand_only():
    assert ordering({key("a"): -3.0, key("b"): -2.0, key("c"): -2.5}) == ("b", "c", "a")
    assert ordering({key("a"): 3.0, key("b"): 2.0}, higher_is_better=False) == ("b", "a")
    assert ordering({key("a"): 1.0, key("b"): 1.0}) == ("a", "b")
    with pytest.raises(EstimandMismatch) as err:
        ordering({key("a"): 1.0, key("b", task="arithmetic"): 2.0})
    assert err.value.coordinates == ("task",)
    with pytest.raises(EstimandMismatch, match="evaluation_law, scalarization"):
        ordering({key("a"): 1.0, key("b", law="T=2", scal="memory"): 2.0})
    with pytest.raises(ValueError, match="at least two"):
        ordering({key("a"): 1.0})
    with pytest.raises(ValueError, match="task"):
        EstimandKey("a", "c", "", "l", "s")
    assert key("a").differing(key("b", law="x")) == ("architecture", "evaluation_law")


@dataclasses.dataclass(frozen=True)
class Run(Record):
    identity: SystemIdentity
    training: TrainingRecord
    systems: SystemsRecord
    evaluation: EvaluationConditions


TUNING = TuningProtocol("held-out", 2, "best", "fixed", "2 runs", ("a", "b"), "a")


def run(**kw):
    base = dict(identity=SystemIdentity("x", "h", "MLA 4 layers", "M", 10, 10, "t", 64),
                training=TrainingRecord("d", 1, "o", "adamw(lr=1e-3)", "cosine", "none", "none", 10, "last", TUNING),
                systems=SystemsRecord("cpu", "torch", "sdpa", "float32", 1, "full", 64, 0, 0, 1, "greedy"),
                evaluation=EvaluationConditions("prose", "docs", "nll", (0,), "fixed", "v1"))
    for path, value in kw.items():
        rec, name = path.split("__")
        base[rec] = dataclasses.replace(base[rec], **{name: value})
    return Run(**base)


def test_coordinate_changes_and_attribution():
    cases = {
        "training__optimizer": "optimizer", "training__schedule": "optimizer", "training__sft": "post-training",
        "training__feedback": "post-training", "systems__hardware": "hardware or kernel",
        "systems__kernel": "hardware or kernel", "systems__precision": "precision",
        "systems__prompt_length": "context policy", "identity__context_limit": "context policy",
        "evaluation__task_family": "evaluation law", "systems__decoding": "evaluation law",
        "identity__layer_pattern": "architecture", "training__data": "other: training.data",
    }
    values = {"prompt_length": 32, "context_limit": 32, "layer_pattern": "KKKM"}
    for path, coordinate in cases.items():
        changes = coordinate_changes(run(), run(**{path: values.get(path.split("__")[1], "changed")}))
        assert [c.coordinate for c in changes] == [coordinate], path
    changes = coordinate_changes(run(), run(identity__layer_pattern="KKKM", systems__precision="bfloat16"))
    assert [c.coordinate for c in changes] == ["architecture", "precision"]
    plain = attribute_difference(changes)
    assert not plain.architecture_effect
    assert plain.label == "new intervention (architecture + precision), interaction not estimated"
    assert attribute_difference(changes[:1]).architecture_effect
    est = factorial_2x2({(a, b): [1.0, 2.0, 3.0] for a in "xy" for b in "uv"}, factor_a="architecture",
                        factor_b="precision", levels_a=("x", "y"), levels_b=("u", "v"), n_boot=100)
    assert attribute_difference(changes, interaction=est).architecture_effect
    other = dataclasses.replace(est, factor_b="optimizer")
    assert not attribute_difference(changes, interaction=other).architecture_effect
    unrecorded = coordinate_changes(run(), run(systems__precision=UNKNOWN))
    assert unrecorded[0].status == "unrecorded" and unrecorded[0].coordinate == "precision"
    assert attribute_difference(()).label.startswith("no coordinate")


def test_factorial_by_hand():
    rng = np.random.default_rng(1)
    y = {(a, b): rng.normal(size=8) for a in ("T", "K") for b in ("f32", "bf16")}
    y["K", "bf16"] = y["K", "bf16"] + 0.5  # an interaction
    est = factorial_2x2(y, factor_a="architecture", factor_b="precision", levels_a=("T", "K"),
                        levels_b=("f32", "bf16"), n_boot=500)
    m = {c: math.fsum(v) / 8 for c, v in y.items()}
    assert isinstance(est, FactorialEstimate) and est.n_items == 8
    assert math.isclose(est.interaction.estimate, (m["K", "bf16"] - m["T", "bf16"]) - (m["K", "f32"] - m["T", "f32"]),
                        abs_tol=1e-12)
    assert math.isclose(est.simple_a["bf16"].estimate, m["K", "bf16"] - m["T", "bf16"], abs_tol=1e-12)
    assert math.isclose(est.main_b.estimate, (m["T", "bf16"] - m["T", "f32"] + m["K", "bf16"] - m["K", "f32"]) / 2,
                        abs_tol=1e-12)
    assert math.isclose(est.main_a.estimate, (est.simple_a["f32"].estimate + est.simple_a["bf16"].estimate) / 2,
                        abs_tol=1e-12)
    with pytest.raises(ValueError, match="lacks cell"):
        factorial_2x2({k: v for k, v in y.items() if k != ("K", "f32")}, factor_a="a", factor_b="b",
                      levels_a=("T", "K"), levels_b=("f32", "bf16"))
    with pytest.raises(ValueError, match="same >= 2 items"):
        factorial_2x2(y | {("K", "f32"): np.zeros(7)}, factor_a="a", factor_b="b", levels_a=("T", "K"),
                      levels_b=("f32", "bf16"))
    with pytest.raises(ValueError, match="must differ"):
        factorial_2x2(y, factor_a="a", factor_b="a", levels_a=("T", "K"), levels_b=("f32", "bf16"))
    with pytest.raises(ValueError, match="non-finite"):
        factorial_2x2(y | {("K", "f32"): np.full(8, np.nan)}, factor_a="a", factor_b="b", levels_a=("T", "K"),
                      levels_b=("f32", "bf16"))


EV = Evidence(("full-mla@400",), "NLL, 400 steps", "zoo manifest")


def matrix():
    cols = ("NLL @ 400 steps", "NLL @ 800 steps")
    cells = {("Transformer reference", cols[0]): Comparable(EV, -3.1, "nats"),
             ("Transformer reference", cols[1]): Comparable(EV, -3.0, "nats"),
             ("KDA hybrid", cols[0]): Comparable(EV),
             ("JEPA-like", cols[0]): Incomparable("predicts embeddings, no next-token law"),
             ("looped or depth-reused", cols[1]): Open("same FLOPs or same parameters?")}
    return TransferMatrix(cols, cells)


def test_transfer_matrix_refuses_values_on_findings():
    m = matrix()
    c0, c1 = m.columns
    assert m.value("Transformer reference", c0) == -3.1
    assert m.row_mean("Transformer reference") == pytest.approx(-3.05)
    assert isinstance(m.cell("KDA hybrid", c1), Blank)
    for row, col in (("KDA hybrid", c1), ("JEPA-like", c0), ("looped or depth-reused", c1), ("KDA hybrid", c0)):
        with pytest.raises(IncomparableCell, match=repr(row)):
            m.value(row, col)
    for row in ("KDA hybrid", "JEPA-like", "looped or depth-reused"):
        with pytest.raises(ImputationRefused, match=repr(row)):
            m.row_mean(row)
    with pytest.raises(ImputationRefused, match="4 cell"):
        m.impute(0.0)
    assert [f[:2] for f in m.findings()] == [("KDA hybrid", c1), ("looped or depth-reused", c0),
                                             ("JEPA-like", c0), ("JEPA-like", c1)]
    assert [q[:2] for q in m.open_questions()] == [("looped or depth-reused", c1)]
    assert m.comparable_rows(c0) == ("Transformer reference", "KDA hybrid")
    filled = m.with_value("KDA hybrid", c0, -3.2, "nats")
    assert filled.value("KDA hybrid", c0) == -3.2 and filled.cells["KDA hybrid", c0].evidence == EV
    with pytest.raises(MissingEvidence):
        m.with_value("KDA hybrid", c1, -3.2, "nats")
    assert m.with_value("KDA hybrid", c1, -3.2, "nats", EV).value("KDA hybrid", c1) == -3.2
    for row, col in (("JEPA-like", c0), ("looped or depth-reused", c1)):
        with pytest.raises(IncomparableCell):
            m.with_value(row, col, 1.0, "nats", EV)
    md = m.to_markdown()
    assert "| JEPA-like | incomparable | blank |" in md and "comparable: -3.1 nats" in md
    mixed = m.with_value("Transformer reference", c1, 1.0, "bits")
    with pytest.raises(EstimandMismatch):
        mixed.row_mean("Transformer reference")


def test_transfer_matrix_validation():
    with pytest.raises(MissingEvidence):
        Comparable(None, 1.0, "nats")
    with pytest.raises(MissingEvidence):
        Evidence((), "p", "s")
    with pytest.raises(ValueError, match="unit"):
        Comparable(EV, 1.0)
    with pytest.raises(ValueError, match="row 'RNN'"):
        TransferMatrix(("c",), {("RNN", "c"): Comparable(EV)})
    with pytest.raises(ValueError, match="column 'd'"):
        TransferMatrix(("c",), {("KDA hybrid", "d"): Comparable(EV)})
    with pytest.raises(TypeError, match="Comparable, Incomparable or Open"):
        TransferMatrix(("c",), {("KDA hybrid", "c"): 3.0})
    with pytest.raises(ValueError, match="distinct"):
        TransferMatrix(("c", "c"), {})
    with pytest.raises(ValueError, match="reason"):
        Incomparable("")
    with pytest.raises(KeyError):
        matrix().cell("RNN", "NLL @ 400 steps")


def brute_force(rule, p, n_max):
    """Exact operating characteristics by enumerating every win/loss sequence."""
    detect = futile = expected = Fraction(0)
    for seq in itertools.product((0, 1), repeat=n_max):
        prob = Fraction(1)
        for s in seq:
            prob *= p if s else 1 - p
        out = rule.run([bool(s) for s in seq])
        detect += prob * out.detected
        futile += prob * (out.decision == "stopped for futility")
        expected += prob * out.n
    return detect, futile, expected


def test_sequential_sign_test_exact_operating_characteristics():
    rule = SequentialSignTest((4, 8, 12), alpha=0.2, futility=0.1)
    for p in (Fraction(1, 2), Fraction(3, 4), Fraction(1, 5)):
        oc = rule.operating(p)
        assert (oc.detect, oc.futility, oc.expected_n) == brute_force(rule, p, 12)
        f = rule.operating(float(p))
        assert math.isclose(f.detect, float(oc.detect), rel_tol=1e-12)
    assert rule.operating(Fraction(1, 2)).detect <= Fraction(1, 5)


def test_sign_test_pvalue_by_hand():
    assert sign_test_pvalue(0, 5) == Fraction(2, 32)
    assert sign_test_pvalue(1, 5) == Fraction(12, 32)
    assert sign_test_pvalue(5, 10) == 1
    assert sign_test_pvalue(9, 10) == Fraction(2 * 11, 1024)
    with pytest.raises(ValueError, match="wins"):
        sign_test_pvalue(6, 5)
    with pytest.raises(ValueError, match="n="):
        sign_test_pvalue(0, 0)


def test_sequential_run_and_errors():
    rule = SequentialSignTest((10, 20))
    out = rule.run([True, False] * 10)
    assert out.decision == "stopped for futility" and out.n == 10 and out.interval.contains(0.75)
    assert rule.run([True] * 20).detected and rule.run([True] * 20).n == 10
    assert rule.run([True] * 7 + [False] * 3 + [True] * 7 + [False] * 3).decision.startswith("no difference")
    with pytest.raises(TypeError, match="bool"):
        rule.run([1] * 20)
    with pytest.raises(ValueError, match="looks at up to 20"):
        rule.run([True] * 19)
    for bad in (dict(looks=(5, 5)), dict(looks=()), dict(looks=(0, 3)), dict(looks=(3,), alpha=1.0),
                dict(looks=(3,), futility=0.5)):
        with pytest.raises(ValueError):
            SequentialSignTest(**bad)
    with pytest.raises(ValueError, match="p="):
        rule.operating(1.5)


def result(detected, low, high, **kw):
    return ComparisonResult("a vs b", (low + high) / 2, Interval(low, high, 0.95, "x"), detected, 0.1, "nats", **kw)


def test_stopping_report():
    results = (result(True, 0.2, 0.4), result(False, -0.15, 0.05, power_at_margin=0.3), result(False, -0.05, 0.05))
    rep = StoppingReport((50.0, 100.0), "steps", {}, SequentialSignTest((10, 20)), "Clopper-Pearson", results)
    assert rep.validate().negative_results() == results[1:]
    assert "not evidence of equal potential" in results[1].verdict and "0.30" in results[1].verdict
    assert results[1].contains_practical_difference and not results[2].contains_practical_difference
    assert "equivalent at that margin" in results[2].verdict and results[0].verdict.startswith("difference")
    md = rep.to_markdown()
    assert "negative results: 2 of 3" in md and "excluded configurations: none" in md
    for part, bad in (("tested cost grid", dict(tested_grid=None)), ("excluded configurations", dict(excluded=None)),
                      ("stopping rule", dict(stopping_rule=None)), ("uncertainty procedure", dict(uncertainty=" ")),
                      ("results", dict(results=()))):
        with pytest.raises(IncompleteReport, match=part):
            dataclasses.replace(rep, **bad).validate()
    with pytest.raises(ValueError, match="margin"):
        dataclasses.replace(results[0], margin=0.0)
    with pytest.raises(TypeError, match="stopping_rule"):
        dataclasses.replace(rep, stopping_rule=3)
    with pytest.raises(ValueError, match="reason for excluding"):
        dataclasses.replace(rep, excluded={"lr=1": ""})


def test_run_conditions_and_instance_records():
    from ftipbook.compare.instance import ModelInstanceRecord
    from ftipbook.compare.study_reports import RunConditions

    base = run()
    rc = RunConditions(base.identity, base.training, base.systems, base.evaluation)
    other = dataclasses.replace(rc, systems=dataclasses.replace(rc.systems, precision="bfloat16"))
    assert [(c.coordinate, c.path) for c in coordinate_changes(rc, other)] == [("precision", "systems.precision")]
    with pytest.raises(TypeError, match="RunConditions.training must be a TrainingRecord"):
        RunConditions(base.identity, None, base.systems, base.evaluation)
    a = ModelInstanceRecord("a", "MLA 4 layers", "sha256:1", 10, "d", 1, 1, "none", "adamw", "float32", "cpu", "t",
                            "sdpa", "full", "b1", UNKNOWN, UNKNOWN, "prose", "nll", 7)
    b = dataclasses.replace(a, name="b", precision="bfloat16", post_training="sft", evaluation_law="T=2")
    got = {c.coordinate for c in coordinate_changes(a, b) if c.status == "differs"}
    assert got == {"precision", "post-training", "evaluation law"}


def test_report_inputs_are_checked():
    rep = StoppingReport((50.0,), "steps", {}, "fixed", "t", (result(True, 0.2, 0.4),))
    with pytest.raises(TypeError, match="uncertainty"):
        dataclasses.replace(rep, uncertainty=0.95)
    with pytest.raises(TypeError, match="ComparisonResult"):
        dataclasses.replace(rep, results=("a vs b",))
    for bad in ("0.3", 1.5, True):
        with pytest.raises(ValueError, match="power_at_margin"):
            result(False, -0.2, 0.2, power_at_margin=bad)
    with pytest.raises(TypeError, match="detected"):
        ComparisonResult("a vs b", 0.0, Interval(-1, 1, 0.95, "x"), 1, 0.1, "nats")
    with pytest.raises(ValueError, match="entries is empty"):
        build_frontier_report([], protocol="p", grid_unit="steps", scalarization=FLOPS, identities={}, configs={},
                              pareto_coordinates=("memory",))
    with pytest.raises(TypeError, match="SystemIdentity"):
        report(identities={"kda": "sha256:0", "mla": identity("mla")})
    with pytest.raises(TypeError, match="Scalarization"):
        report(scalarization={"train_flops": 1.0})


def test_a_report_needs_two_systems_and_a_positive_grid():
    one = small_report([point("a", 1, -3.0, 10, 5), point("b", 1, -3.0, 10, 5)])
    alone = dataclasses.replace(one, points=tuple(p for p in one.points if p.system == "a"), paired=(),
                                identities={"a": one.identities["a"]}, configs={"a": {"d": 1}})
    with pytest.raises(IncompleteReport, match="compared models"):
        alone.validate()
    with pytest.raises(ValueError, match="increasing positive"):
        dataclasses.replace(one, grid=(0.0, 1.0, 2.0))
    with pytest.raises(KeyError, match="'a' at grid cost 3"):
        one.point("a", 3.0)
