"""Figures of the paired-measurement chapters draw what they are given and refuse malformed input."""
import pytest

from ftipbook.compare.frontier import NotReached, ScoredCostMeasurement
from ftipbook.eval.stats import Interval, RepeatedMeasurement
from ftipbook.viz import measurements as vizm
from tests.viz.figure_checks import ax_texts, legend_texts


def pts(system, scores):
    return [ScoredCostMeasurement(system, float(i + 1), s, "p", "FLOP") for i, s in enumerate(scores)]


def test_scored_costs_marks_the_reached_point_and_names_not_reached():
    a, b = pts("a", [0.1, 0.6, 0.9]), pts("b", [0.1, 0.2, 0.3])
    ax = vizm.plot_scored_costs({"a": a, "b": b}, 0.5, {"a": a[1], "b": NotReached(0.5, "b", 0.3, 3)})
    labels = legend_texts(ax)
    assert "b (q not reached)" in labels and "target q = 0.5" in labels
    assert any(list(line.get_xdata()) == [2.0, 2.0] for line in ax.lines)  # the vertical line at the reached cost
    with pytest.raises(ValueError):
        vizm.plot_scored_costs({}, 0.5, {})


def test_repetitions_draw_every_run_and_the_summary_lines():
    m = RepeatedMeasurement(0, 4).record([1.0, 2.0, 3.0, 10.0])
    ax = vizm.plot_repetitions({"x": m}, scale=1e3, unit="ms")
    assert len(ax.collections[0].get_offsets()) == 4
    assert [1e3 * m.mean] * 2 == list(ax.lines[0].get_xdata())
    assert ax.get_xlabel() == "measured value (ms)"


def test_intervals_fill_the_prediction_marker_only_inside():
    ci = Interval(0.0, 1.0, 0.95, "x")
    ax = vizm.plot_intervals({"in": (0.5, ci), "out": (0.5, ci)}, predicted={"in": 0.5, "out": 2.0})
    diamonds = [line for line in ax.lines if line.get_marker() == "D"]
    assert [d.get_markerfacecolor() != "white" for d in diamonds] == [True, False]


def test_frontier_steps_and_check_matrix_validate_shapes():
    vizm.plot_frontier_steps([1, 2, 3], {"V": [0.0, 0.5, 0.5]}, points={"first": (1, 0.0)})
    with pytest.raises(ValueError):
        vizm.plot_frontier_steps([1, 2, 3], {"V": [0.0, 0.5]})
    ax = vizm.plot_check_matrix({"w1": {"c1": True, "c2": False}, "w2": {"c1": True, "c2": True}})
    assert sorted(t.get_text() for t in ax.texts) == ["DISAGREE", "agree", "agree", "agree"]
    with pytest.raises(ValueError):
        vizm.plot_check_matrix({"w1": {"c1": True}, "w2": {"c2": True}})


def test_contrasts_annotate_the_signed_difference():
    from ftipbook.compare.reports import MeasuredContrast

    rows = [MeasuredContrast("A", "pts", "k", "m", 67.4, 65.7, "p"), MeasuredContrast("B", "pts", "k", "m", 45.2, 45.7, "p")]
    ax = vizm.plot_contrasts(rows)
    assert ax_texts(ax) == ["+1.7", "-0.5"]
    with pytest.raises(ValueError):
        vizm.plot_contrasts([])


def test_evidence_chain_fills_boxes_by_status():
    ax = vizm.draw_evidence_chain([("a", "1", "reported"), ("b", "2", "assumed"), ("c", "3", "derived")])
    assert [t.get_text() for t in ax.texts if t.get_text()] == ["a", "1", "b", "2", "c", "3"]  # arrows are empty texts
    assert legend_texts(ax) == list(vizm.EVIDENCE_LABEL.values())
    with pytest.raises(ValueError, match="status"):
        vizm.draw_evidence_chain([("a", "1", "guessed")])
