"""The pigeonhole obstruction, the quantized recurrence and the applicability checklist (ftip-00JR, 00K1, 00M0)."""
import dataclasses
import itertools

import pytest
import torch

from ftipbook.compare.interfaces import (
    CONDITIONS,
    Applicability,
    QuantizedRecurrence,
    StateInterface,
    kda_state_interface,
    pigeonhole_applicability,
    pigeonhole_obstruction,
)
from ftipbook.model.kda import KimiDeltaAttention


def counting_task(k):
    return {(1,) * n: n for n in range(k + 1)}


@pytest.mark.parametrize("k", [1, 2, 3])
def test_every_assignment_and_readout_misses_a_label(k):
    prefixes = [(i,) for i in range(k + 1)]
    task = {p: f"y{p[0]}" for p in prefixes}
    labels = list(task.values())
    for states in itertools.product(range(k), repeat=k + 1):
        assign = dict(zip(prefixes, states))
        for table in itertools.product(labels, repeat=k):
            w = pigeonhole_obstruction(task, assign.__getitem__, lambda s: table[s], k)
            assert assign[w.first] == assign[w.second] == w.state and w.first != w.second
            assert w.output == table[w.state] and w.wrong_label != w.output
            assert task[w.wrong] == w.wrong_label and w.wrong in (w.first, w.second)
            wrong = sum(table[assign[p]] != task[p] for p in prefixes)
            assert w.n_wrong == wrong >= k + 1 - len(set(states)) >= 1


def test_first_collision_in_task_order():
    task = {(0,): "a", (1,): "b", (2,): "c"}
    states = {(0,): 0, (1,): 1, (2,): 0}
    w = pigeonhole_obstruction(task, states.__getitem__, {0: "c", 1: "b"}.__getitem__, 2)
    assert (w.first, w.second, w.output, w.wrong, w.wrong_label) == ((0,), (2,), "c", (0,), "a")


def test_saturating_counter_fails_at_the_top():
    for k in range(1, 6):
        m = QuantizedRecurrence(k)
        w = pigeonhole_obstruction(counting_task(k), m.state, m.read, k)
        assert (w.first, w.second) == ((1,) * (k - 1), (1,) * k) and w.wrong_label == k and w.n_wrong == 1


def test_bad_inputs_are_refused_by_name():
    m = QuantizedRecurrence(2)
    with pytest.raises(ValueError, match="levels \\+ 1 = 3"):
        pigeonhole_obstruction({(): 0, (1,): 1}, m.state, m.read, 2)
    with pytest.raises(ValueError, match="pairwise distinct"):
        pigeonhole_obstruction({(): 0, (1,): 0, (1, 1): 2}, m.state, m.read, 2)
    with pytest.raises(ValueError, match="3 distinct states"):
        pigeonhole_obstruction(counting_task(2), QuantizedRecurrence(3).state, m.read, 2)
    with pytest.raises(TypeError, match="levels"):
        pigeonhole_obstruction(counting_task(2), m.state, m.read, 2.0)
    with pytest.raises(TypeError, match="tuples"):
        pigeonhole_obstruction({"ab": 0, (1,): 1, (1, 1): 2}, m.state, m.read, 2)
    with pytest.raises(TypeError, match="readout"):
        pigeonhole_obstruction(counting_task(2), m.state, None, 2)
    with pytest.raises(ValueError, match="alphabet"):
        m.state((2,))
    with pytest.raises(ValueError, match="init"):
        QuantizedRecurrence(2, init=2)
    with pytest.raises(ValueError, match="readout"):
        QuantizedRecurrence(2, readout=("a",))


def test_recurrence_steps_by_hand():
    m = QuantizedRecurrence(5, a=0.5, b=2.0, c=0.25)
    h = 0
    for x in (1, 1, 0, 1):
        h = min(max(int(0.5 * h + 2 * x + 0.25 + 0.5), 0), 4)
    assert m.state((1, 1, 0, 1)) == m.exact_state((1, 1, 0, 1)) == h
    assert sorted(QuantizedRecurrence(4).reachable()) == [0, 1, 2, 3]
    assert QuantizedRecurrence(4).reachable()[3] == (1, 1, 1)


def test_quantized_model_passes_all_five_checks():
    m = QuantizedRecurrence(3)
    report = pigeonhole_applicability(m.interface(), counting_task(3)).assess()
    assert report.status == "applies" and report.failing == ()
    assert [r.condition for r in report.results] == list(CONDITIONS)


def test_checks_that_fail():
    m = QuantizedRecurrence(3)
    too_few = pigeonhole_applicability(m.interface(levels=2), counting_task(2)).assess()
    assert too_few.failing == ("interface map",)
    growing = dataclasses.replace(m.interface(), state_size=lambda p: 4 * len(p))
    assert pigeonhole_applicability(growing, counting_task(3)).assess().failing == ("cost accounting",)
    off = dataclasses.replace(m.interface(), reference_state=lambda p: m.state(p) + (len(p) == 2))
    assert pigeonhole_applicability(off, counting_task(3)).assess().failing == ("numerical regime",)
    draws = iter(range(1000))
    noisy = dataclasses.replace(m.interface(), output=lambda p: next(draws))
    failing = pigeonhole_applicability(noisy, counting_task(3)).assess().failing
    assert "evaluation protocol" in failing
    merged = dataclasses.replace(m.interface(), reduction=lambda h: min(h, 1))
    assert pigeonhole_applicability(merged, counting_task(3)).assess().failing == ("interface map",)


def test_float32_kda_is_unestablished():
    torch.manual_seed(0)
    layer = KimiDeltaAttention.from_dims(d_model=8, n_heads=2, head_dim=4)
    iface = kda_state_interface(layer, torch.randn(3, 8), torch.randn(4, 8))
    task = {(1,) * n: n - 1 for n in range(1, 5)}
    report = pigeonhole_applicability(iface, task).assess()
    status = {r.condition: r.status for r in report.results}
    assert status == {"interface map": "unknown", "task": "unknown", "cost accounting": "verified",
                      "numerical regime": "failed", "evaluation protocol": "verified"}
    assert report.status == "unestablished"
    with pytest.raises(ValueError, match="readout"):
        kda_state_interface(layer, torch.randn(3, 8), torch.randn(4, 5))


def test_applicability_refuses_flags_and_unknown_conditions():
    with pytest.raises(TypeError, match="not a flag"):
        Applicability("toy", "model", {"task": True})
    with pytest.raises(ValueError, match="unknown condition"):
        Applicability("toy", "model", {"vibes": lambda: (True, "")})
    with pytest.raises(TypeError, match="must return"):
        Applicability("toy", "model", {"task": lambda: True}).assess()
    report = Applicability("toy", "model", {c: (lambda: (True, "ran")) for c in CONDITIONS[:4]}).assess()
    assert report.failing == ("evaluation protocol",) and report.results[-1].detail == "no check declared"
    with pytest.raises(ValueError, match="reduction and levels"):
        StateInterface("x", len, len, len, levels=2)


def test_more_bad_inputs():
    with pytest.raises(ValueError, match="a="):
        QuantizedRecurrence(2, a=float("inf"))
    with pytest.raises(ValueError, match="alphabet"):
        QuantizedRecurrence(2, alphabet=())
    with pytest.raises(TypeError, match="prefix"):
        QuantizedRecurrence(2).state([1])
    with pytest.raises(TypeError, match="state_size"):
        StateInterface("x", len, len, None)
    with pytest.raises(TypeError, match="probes"):
        StateInterface("x", len, len, len, probes=[[1]])
    with pytest.raises(TypeError, match="StateInterface"):
        pigeonhole_applicability(QuantizedRecurrence(2), {(): 0})
    with pytest.raises(ValueError, match="embedding"):
        kda_state_interface(KimiDeltaAttention.from_dims(d_model=8, n_heads=2, head_dim=4), torch.randn(8),
                            torch.randn(4, 8))
    with pytest.raises(TypeError, match="unhashable"):
        pigeonhole_obstruction(counting_task(1), lambda p: [len(p)], len, 1)
