"""Widgets of ftip-00L3/00LD/00LF and 00KV/00KY: ipywidgets readouts, the kernel-free HTML figures, their
log sliders and out-of-domain texts, their JavaScript formulas and formats against the Python ones
(with Node.js when present), and the static figures."""
from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from ftipbook import widgets as W  # noqa: E402
from ftipbook.compare import cache_model, throughput  # noqa: E402
from ftipbook.viz import compare as vc  # noqa: E402

NODE = shutil.which("node")


def readout_cells(page: str) -> dict[str, str]:
    return {k: html.unescape(v) for k, v in re.findall(r'data-out="(\w+)">([^<]*)<', page)}


def test_attempt_widget_follows_its_sliders():
    box = W.attempt_throughput_widget(live=True)
    assert "<b>1.774</b>" in box.readout.value and "<b>17</b>" in box.readout.value
    box.sliders["f"].value = 0.5
    box.sliders["budget"].value = 20
    expect = throughput.compare_attempts(f=0.5, s=2.2, p_m=0.1, p_k=0.08, budget=20)
    assert f"<b>{expect.throughput:.3f}</b>" in box.readout.value
    assert f"<b>{expect.n_k}</b>" in box.readout.value
    assert repr(box) == "<attempt-throughput widget (f=0.5, s=2.2, budget=20, p_m=0.1, p_k=0.08); live in Jupyter>"
    box.sliders["budget"].value = 0
    assert "undefined" in box.readout.value
    plt.close("all")


def test_cache_widget_follows_its_sliders():
    box = W.cache_ratio_widget(kappa=64, sigma=3200, live=True)
    ipw = pytest.importorskip("ipywidgets")
    for key, (lo, hi) in {"length": (0, 20), "kappa": (0, 12), "sigma": (0, 20)}.items():  # log2 scales
        w = box.sliders[key]
        assert isinstance(w, ipw.FloatLogSlider) and (w.base, w.min, w.max) == (2, lo, hi), key
    assert box.sliders["sigma"].value == 3200 and box.sliders["length"].value == 1024
    box.sliders["length"].value = 50  # the crossover: equal memory
    assert "<b>1.0000</b>" in box.readout.value and "<b>50.000</b>" in box.readout.value
    assert "<b>0.0</b>" in box.readout.value  # no saving, and no "none" either, at exactly the crossover
    box.sliders["batch"].value = 4
    m_mla, _ = cache_model.stylized_state_memory(1, 4, 50, 64, 3200)
    assert f"<b>{m_mla / 2**20:.3f}</b>" in box.readout.value
    box.sliders["length"].value = 49.6  # a log slider's value is read as the nearest integer
    assert repr(box) == "<cache-ratio widget (ell=1, batch=4, length=50, kappa=64, sigma=3200); live in Jupyter>"
    box.sliders["length"].value = 1
    box.sliders["kappa"].value = 1
    box.sliders["sigma"].value = 2**20  # far below the crossover: the saving is explained, not printed
    assert "<b>none: the hybrid holds 786432.25x as much (T &lt; sigma/kappa)</b>" in box.readout.value
    plt.close("all")


def test_outside_a_frontend_widgets_are_placeholders():
    assert not W.live_frontend()  # pytest is not an interactive Jupyter frontend
    placeholder = W.attempt_throughput_widget(f=0.5)
    assert isinstance(placeholder, W.WidgetPlaceholder)
    assert repr(placeholder) == "<attempt-throughput widget (f=0.5, s=2.2, budget=10, p_m=0.1, p_k=0.08); live in Jupyter>"
    assert repr(W.cache_ratio_widget(kappa=64, sigma=3200)) == (
        "<cache-ratio widget (ell=1, batch=1, length=1024, kappa=64, sigma=3200); live in Jupyter>")


def test_readouts_use_the_library():
    r = W.attempt_readout(f=0.8, s=2.2, budget=10, p_m=0.1, p_k=0.08)
    assert r == {"ratio": "0.5636", "S": "1.774", "nM": "10", "nK": "17", "dM": "0.651", "dK": "0.758",
                 "pStar": "0.0601", "verdict": "hybrid >= baseline"}
    c = W.cache_readout(ell=2, batch=3, length=1000, kappa=64, sigma=3200)
    assert c["ratio"] == f"{cache_model.cache_ratio(1000, 64, 3200):.4f}"
    assert c["saving"] == f"{100 * (1 - cache_model.cache_ratio(1000, 64, 3200)):.1f}" == "71.2"  # 100 (1 - 0.2875)
    # out of the domain: an undefined break-even names its reason, a negative saving is explained
    r = W.attempt_readout(f=0.8, s=2.2, budget=0.5, p_m=0.1, p_k=0.08)
    assert r["pStar"] == "undefined: break-even needs N_M >= 1 and N_K >= 1 attempts, got N_M=0, N_K=0"
    assert r["nM"] == "0" and r["verdict"].startswith("undefined")
    r = W.attempt_readout(f=0.8, s=2.2, budget=1.5, p_m=0.1, p_k=0.08)  # N_M = 1, N_K = 2: defined
    assert r["pStar"] == f"{1 - 0.9 ** 0.5:.4f}"
    c = W.cache_readout(ell=1, batch=1, length=1, kappa=1, sigma=2**20)
    assert c["ratio"] == "786432.2500" and c["saving"] == "none: the hybrid holds 786432.25x as much (T < sigma/kappa)"


def test_saving_text_is_explained_only_below_the_crossover():
    assert W.saving_text(0.25) == "75.0" and W.saving_text(1.0) == "0.0"
    assert W.saving_text(cache_model.cache_ratio(49, 64, 3200)) == "none: the hybrid holds 1.02x as much (T < sigma/kappa)"
    assert W.saving_text(cache_model.cache_ratio(51, 64, 3200)) == "1.5"
    assert "-" not in "".join(W.saving_text(cache_model.cache_ratio(t, 64, 3200)) for t in range(1, 200))


def test_log_sliders_start_exactly_at_their_values():
    page = W.cache_ratio_html(kappa=1152, sigma=98765, length=77, uid="kv")
    inputs = dict(re.findall(r'<input type="range" data-in="(\w+)"([^>]*)>', page))
    assert set(inputs) == {"ell", "batch", "length", "kappa", "sigma"}
    for key, value, top in (("length", 77, 20), ("kappa", 1152, 12), ("sigma", 98765, 20)):
        attrs = dict(re.findall(r'(\w[\w-]*)="([^"]*)"', inputs[key]))
        assert attrs["data-log"] == "2" and attrs["step"] == "any"  # a stepped range would snap the start
        assert (float(attrs["min"]), float(attrs["max"])) == (0, top)
        assert float(attrs["value"]) == math.log2(value) and round(2 ** float(attrs["value"])) == value
        assert f'<output data-show="{key}">{value}</output>' in page
    assert "data-log" not in inputs["ell"] and 'step="1"' in inputs["batch"]  # short ranges stay linear
    assert readout_cells(page) == W.cache_readout(ell=1, batch=1, length=77, kappa=1152, sigma=98765)
    assert "@media (max-width: 600px)" in page  # the narrow-screen layout (tests/browser checks it at 360 px)


def test_html_is_self_contained_and_deterministic():
    for page in (W.attempt_throughput_html(), W.cache_ratio_html(kappa=64, sigma=3200)):
        assert page.count("<script>") == 1
        assert not re.search(r"\b(src|href)=|<link|import\(|fetch\(|XMLHttpRequest", page)
        assert set(re.findall(r"https?://[^\s\"']+", page)) == {"http://www.w3.org/2000/svg"}  # an XML namespace
    assert W.attempt_throughput_html() == W.attempt_throughput_html()
    page = W.attempt_throughput_html(f=0.5, budget=20, uid="a-2")
    assert readout_cells(page) == W.attempt_readout(f=0.5, s=2.2, budget=20, p_m=0.1, p_k=0.08)
    assert 'id="a-2"' in page and 'mountAttempt("a-2"' in page


def test_html_refuses_bad_arguments():
    with pytest.raises(ValueError, match="outside the slider range"):
        W.attempt_throughput_html(f=1.5)
    with pytest.raises(ValueError, match="outside the slider range"):
        W.cache_ratio_html(kappa=64, sigma=3200, length=2**21)
    with pytest.raises(ValueError, match="length=0 is outside the slider range"):
        W.cache_ratio_html(kappa=64, sigma=3200, length=0)
    with pytest.raises(ValueError, match="sigma=3200.5: a log slider takes an int"):
        W.cache_ratio_html(kappa=64, sigma=3200.5)
    with pytest.raises(ValueError, match="kappa=5000 is outside"):
        W.cache_ratio_widget(kappa=5000, sigma=3200)
    with pytest.raises(ValueError, match="uid"):
        W.attempt_throughput_html(uid="x\"><script>")
    with pytest.raises(ValueError):
        W.attempt_throughput_html(s=0.0)


ATTEMPT_POINTS = [
    ("0.8", "2.2", "10", 0.1, 0.08), ("0.5", "2", "3", 0.2, 0.15), ("0", "3.5", "7", 0.05, 0.01),
    ("1", "0.5", "30", 0.5, 0.0), ("0.37", "1.85", "0", 0.1, 0.1), ("0.99", "4.95", "1", 0.005, 0.495),
    ("0.2", "2.2", "29", 0.3, 0.2), ("0.73", "1.15", "13", 0.25, 0.3),
]
CACHE_POINTS = [(1, 1, 1, 64, 3200), (2, 3, 1024, 64, 3200), (16, 64, 2**20, 4096, 2**20), (4, 8, 50, 64, 3200),
                (1, 1, 1000, 1, 1), (3, 5, 77, 1152, 98765), (1, 1, 1, 1, 2**20), (1, 1, 24, 64, 64),
                (1, 1, 49, 64, 3200), (5, 7, 3, 3, 1)]
# values whose exact binary expansion is a tie at the shown decimals (Python rounds them to even,
# toFixed up), their negatives, and values near a tie
FORMAT_POINTS = [(0.28125, 4), (0.125, 2), (0.375, 2), (2.5, 0), (3.5, 0), (0.0625, 3), (1.5, 0), (-0.125, 2),
                 (-2.5, 0), (0.1, 1), (0.15, 1), (0.25000001, 1), (786432.25, 2), (99.95, 1), (9.5, 0), (0.0, 3),
                 (1 / 3, 4), (12345.678901, 3)]


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (the browser test covers the JavaScript too)")
def test_javascript_formulas_equal_python():
    script = (
        "var window = {};\n" + W.WIDGET_JS + "\nvar W = window.ftipbookWidgets;\n"
        f"var a = {json.dumps(ATTEMPT_POINTS)}.map(function (p) {{ return W.attempt(p[0], p[1], p[2], p[3], p[4]); }});\n"
        f"var c = {json.dumps(CACHE_POINTS)}.map(function (p) {{ return W.cache(p[0], p[1], p[2], p[3], p[4]); }});\n"
        "function shown(r, formats) { var o = {}; Object.keys(formats).forEach("
        "function (k) { o[k] = W.format(r[k], formats[k]); }); return o; }\n"
        f"var fa = a.map(function (r) {{ return shown(r, {json.dumps(W.ATTEMPT_FORMATS)}); }});\n"
        f"var fc = c.map(function (r) {{ return shown(r, {json.dumps(W.CACHE_FORMATS)}); }});\n"
        f"var ff = {json.dumps(FORMAT_POINTS)}.map(function (p) {{ return W.format(p[0], p[1]); }});\n"
        "console.log(JSON.stringify({a: a, c: c, fa: fa, fc: fc, ff: ff}));\n"
    )
    out = json.loads(subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True, timeout=60).stdout)
    for (f, s, b, p_m, p_k), js, shown in zip(ATTEMPT_POINTS, out["a"], out["fa"]):
        py = throughput.compare_attempts(f=float(f), s=float(s), budget=float(b), p_m=p_m, p_k=p_k)
        assert (js["nM"], js["nK"]) == (py.n_m, py.n_k)
        assert js["S"] == py.throughput and js["ratio"] == py.cost_ratio  # both correctly rounded
        assert js["dM"] == pytest.approx(py.discovery_m, abs=1e-14)
        assert js["dK"] == pytest.approx(py.discovery_k, abs=1e-14)
        if isinstance(js["pStar"], dict):
            assert js["pStar"] == {"reason": py.break_even.reason}  # the same reason on both sides
        else:
            assert js["pStar"] == pytest.approx(py.break_even, abs=1e-14)
        assert shown == W.attempt_readout(f=float(f), s=float(s), budget=float(b), p_m=p_m, p_k=p_k)
    for (ell, b, t, k, sg), js, shown in zip(CACHE_POINTS, out["c"], out["fc"]):
        m_mla, m_hyb = cache_model.stylized_state_memory(ell, b, t, k, sg)
        assert js["ratio"] == cache_model.cache_ratio(t, k, sg)
        assert (js["mla"], js["hybrid"]) == (m_mla / 2**20, m_hyb / 2**20)
        assert js["crossover"] == cache_model.crossover_length(k, sg)
        assert shown == W.cache_readout(ell=ell, batch=b, length=t, kappa=k, sigma=sg)  # every text, exactly
    assert any(x["saving"].startswith("none") for x in out["fc"]) and any("." in x["saving"] for x in out["fc"])
    assert out["ff"] == [f"{x:.{d}f}" for x, d in FORMAT_POINTS]
    assert out["ff"][:4] == ["0.2812", "0.12", "0.38", "2"]  # ties to even, not up


def test_static_figures_plot_the_library_values():
    ax = vc.plot_throughput_curve(2.2, marks=[0.2, 0.5, 0.8, 1.0], s_band=(2.2, 2.3))
    x, y = ax.lines[0].get_data()
    assert np.allclose(y, [throughput.throughput_factor(f, 2.2) for f in x])
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["1.122", "1.375", "1.774", "2.200"]
    ax = vc.plot_cache_ratio(64, 3200, measured=[(64, 0.8359375)])
    x, y = ax.lines[0].get_data()
    assert np.allclose(y, [cache_model.cache_ratio(int(t), 64, 3200) for t in x])
    fig = vc.attempt_throughput_figure(f=0.8, s=2.2, budget=10, p_m=0.1, p_k=0.08)
    assert len(fig.axes) == 2 and "N=17: 0.758" in [t.get_text() for t in fig.axes[1].texts]
    assert vc.cache_ratio_figure(kappa=64, sigma=3200, length=1024).axes
    ax = vc.plot_correlated_discovery(0.1, 10, [0.0, 0.3])
    assert ax.lines[1].get_data()[1][-1] == throughput.discovery_probability_correlated(0.1, 10, 0.3)
    ax = vc.plot_speedups([("prefill", 2.9, "batch 1"), ("decode", 2.2, "batch 1"), ("TPOT", 6.3, "large batch")])
    assert [p.get_width() for p in ax.patches] == [2.9, 2.2, 6.3]
    with pytest.raises(ValueError):
        vc.plot_speedups([])
    with pytest.raises(ValueError):
        vc.plot_discovery_steps(f=0.8, s=2.2, p_m=0.1, p_k=0.08, budget_max=0)
    fig = vc.operating_points_figure({"tokens": {"a": 1.4, "b": 5.7}, "params": {"a": 48, "c": 16},
                                      "active": {"a": 3, "c": 3}})
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert [[p.get_width() for p in ax.patches] for ax in shown] == [[1.4, 5.7], [48, 16], [3, 3]]
    assert [[t.get_text() for t in ax.get_yticklabels()] for ax in shown] == [["a", "b"], ["a", "c"], ["a", "c"]]
    assert shown[1].patches[0].get_facecolor() == shown[0].patches[0].get_facecolor()  # one colour a model
    assert shown[1].patches[1].get_facecolor() != shown[0].patches[1].get_facecolor()
    for bad in ({}, {"tokens": {}}):
        with pytest.raises(ValueError):
            vc.operating_points_figure(bad)
    plt.close("all")
