"""Interactive versions of the attempt-throughput (ftip-00L3, 00LD, 00LF) and cache-ratio (ftip-00KY) models.

Three forms of each model, all computing the same numbers:

- ``*_widget``: ipywidgets sliders, a live readout and a live figure, for Jupyter and Colab
  (needs the ``widgets`` extra); the numbers come from :mod:`ftipbook.compare`. Under batch
  execution (the book's build) they return a placeholder (:func:`live_frontend`);
- ``*_html``: a self-contained HTML + JavaScript figure (no network, no kernel) that a chapter
  emits as a ``text/html`` output, so the model is live on the website. The formulas are
  written once in JavaScript (:data:`WIDGET_JS`) and checked against the Python functions by
  ``tests/test_widgets.py`` and, in a browser, ``tests/browser/test_widgets.py``;
- the static matplotlib figures of :mod:`ftipbook.viz.compare`, which render anywhere.

Readouts are keyed by name (``"S"``, ``"nK"``, ...) and formatted by :data:`ATTEMPT_FORMATS` and
:data:`CACHE_FORMATS`; the JavaScript receives the same formats, so both sides print alike.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass

from ftipbook.compare import cache_model, throughput
from ftipbook.compare.frontier import Undefined

#: Decimals shown per readout of the attempt model (``None``: an integer or a text).
ATTEMPT_FORMATS: dict[str, int | None] = {
    "ratio": 4, "S": 3, "nM": None, "nK": None, "dM": 3, "dK": 3, "pStar": 4, "verdict": None,
}
#: Decimals shown per readout of the cache model (memories in MiB).
CACHE_FORMATS: dict[str, int | None] = {"T": None, "mla": 3, "hybrid": 3, "ratio": 4, "crossover": 3, "saving": 1}
MIB = 2**20


@dataclass(frozen=True)
class Slider:
    """One slider of an HTML figure: the readout key it sets, its label and range."""

    key: str
    label: str
    lo: float
    hi: float
    step: float
    value: float


def _fmt(value: object, decimals: int | None) -> str:
    if isinstance(value, Undefined):
        return "undefined"
    return str(value) if decimals is None else f"{value:.{decimals}f}"


def _verdict(r: throughput.AttemptComparison) -> str:
    if isinstance(r.hybrid_at_least_as_good, Undefined):
        return "undefined: needs N_M >= 1 and N_K >= 1"
    return "hybrid >= baseline" if r.hybrid_at_least_as_good else "hybrid < baseline"


def attempt_readout(*, f: float, s: float, budget: float, p_m: float, p_k: float) -> dict[str, str]:
    """The attempt model's readout strings, computed by :func:`ftipbook.compare.throughput.compare_attempts`."""
    r = throughput.compare_attempts(f=f, s=s, p_m=p_m, p_k=p_k, budget=budget)
    values = {"ratio": r.cost_ratio, "S": r.throughput, "nM": r.n_m, "nK": r.n_k, "dM": r.discovery_m,
              "dK": r.discovery_k, "pStar": r.break_even, "verdict": _verdict(r)}
    return {k: _fmt(v, ATTEMPT_FORMATS[k]) for k, v in values.items()}


def cache_readout(*, ell: int, batch: int, length: int, kappa: int, sigma: int) -> dict[str, str]:
    """The cache model's readout strings (memories in MiB), from :mod:`ftipbook.compare.cache_model`."""
    m_mla, m_hyb = cache_model.stylized_state_memory(ell, batch, length, kappa, sigma)
    ratio = cache_model.cache_ratio(length, kappa, sigma)
    values = {"T": length, "mla": m_mla / MIB, "hybrid": m_hyb / MIB, "ratio": ratio,
              "crossover": cache_model.crossover_length(kappa, sigma), "saving": 100 * (1 - ratio)}
    return {k: _fmt(v, CACHE_FORMATS[k]) for k, v in values.items()}


_ATTEMPT_LABELS = {
    "ratio": "cost per attempt c<sub>K</sub>/c", "S": "throughput factor S", "nM": "baseline attempts N<sub>M</sub>",
    "nK": "hybrid attempts N<sub>K</sub>", "dM": "baseline discovery", "dK": "hybrid discovery",
    "pStar": "break-even p<sub>K</sub>*", "verdict": "comparison",
}
_CACHE_LABELS = {
    "T": "context length T", "mla": "M<sub>MLA</sub> (MiB)", "hybrid": "M<sub>hybrid</sub> (MiB)",
    "ratio": "M<sub>hybrid</sub>/M<sub>MLA</sub>", "crossover": "crossover &sigma;/&kappa;", "saving": "saving (%)",
}

#: The models, their number formats and the SVG plots, in JavaScript (written once, tested against Python).
WIDGET_JS = r"""
(function () {
  "use strict";
  var W = window.ftipbookWidgets = window.ftipbookWidgets || {};
  if (W.attempt) return;
  // "0.83" -> [83, 100]: slider values read as exact decimals, like the Python side
  W.rational = function (text) {
    var t = String(text).trim();
    if (!/^\d+(\.\d+)?$/.test(t)) throw new Error("not a plain decimal: " + t);
    var i = t.indexOf(".");
    return i < 0 ? [parseInt(t, 10), 1] : [parseInt(t.replace(".", ""), 10), Math.pow(10, t.length - i - 1)];
  };
  W.floorDiv = function (a, b) { return (a - a % b) / b; };  // nonnegative safe integers
  W.discovery = function (p, n) {
    if (n === 0 || p === 0) return 0;
    return p === 1 ? 1 : -Math.expm1(n * Math.log1p(-p));
  };
  // ftip-00L3: c_K/c = 1 - f + f/s, S = 1/(c_K/c), N = floor(B/cost), discovery, break-even
  W.attempt = function (fText, sText, bText, pM, pK) {
    var f = W.rational(fText), s = W.rational(sText), b = W.rational(bText);
    var rn = (f[1] - f[0]) * s[0] + f[0] * s[1], rd = f[1] * s[0];
    var nM = W.floorDiv(b[0], b[1]), nK = W.floorDiv(b[0] * rd, b[1] * rn);
    var dM = W.discovery(pM, nM), dK = W.discovery(pK, nK), ok = nM > 0 && nK > 0;
    return {ratio: rn / rd, S: rd / rn, nM: nM, nK: nK, dM: dM, dK: dK,
            pStar: ok ? 1 - Math.pow(1 - pM, nM / nK) : null,
            verdict: ok ? (dK >= dM ? "hybrid >= baseline" : "hybrid < baseline")
                        : "undefined: needs N_M >= 1 and N_K >= 1"};
  };
  // ftip-00KY: M_MLA = 4 b l kappa T, M_hybrid = b l (kappa T + 3 sigma), ratio, crossover
  W.cache = function (ell, b, T, kappa, sigma) {
    var ratio = (kappa * T + 3 * sigma) / (4 * kappa * T);
    return {T: T, mla: 4 * b * ell * kappa * T / 1048576, hybrid: b * ell * (kappa * T + 3 * sigma) / 1048576,
            ratio: ratio, crossover: sigma / kappa, saving: 100 * (1 - ratio)};
  };
  W.format = function (value, decimals) {
    if (value === null) return "undefined";
    return decimals === null ? String(value) : value.toFixed(decimals);
  };
  // a small SVG line plot: series [{xs, ys, color, step}], marks [{x, y, color}], guides
  W.plot = function (svg, o) {
    var w = 320, h = 200, L = 44, R = 10, T = 10, B = 34, NS = "http://www.w3.org/2000/svg";
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var tx = o.logx ? function (x) { return Math.log2(x); } : function (x) { return x; };
    var X = function (x) { return L + (tx(x) - tx(o.x0)) / (tx(o.x1) - tx(o.x0)) * (w - L - R); };
    var Y = function (y) { return h - B - (Math.min(Math.max(y, o.y0), o.y1) - o.y0) / (o.y1 - o.y0) * (h - T - B); };
    var el = function (name, attrs, text) {
      var e = document.createElementNS(NS, name);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
      return e;
    };
    el("rect", {x: L, y: T, width: w - L - R, height: h - T - B, fill: "none", stroke: "#9ca3af"});
    (o.guides || []).forEach(function (g) {
      var a = g.x !== undefined ? [X(g.x), T, X(g.x), h - B] : [L, Y(g.y), w - R, Y(g.y)];
      el("line", {x1: a[0], y1: a[1], x2: a[2], y2: a[3], stroke: g.color, "stroke-dasharray": "3 3"});
    });
    o.series.forEach(function (sr) {
      var pts = [];
      for (var i = 0; i < sr.xs.length; i++) {
        if (sr.step && i > 0) pts.push(X(sr.xs[i]) + "," + Y(sr.ys[i - 1]));
        pts.push(X(sr.xs[i]) + "," + Y(sr.ys[i]));
      }
      el("polyline", {points: pts.join(" "), fill: "none", stroke: sr.color, "stroke-width": 2});
    });
    (o.marks || []).forEach(function (m) { el("circle", {cx: X(m.x), cy: Y(m.y), r: 4, fill: m.color}); });
    (o.legend || []).forEach(function (g, i) {
      el("text", {x: w - R - 6, y: h - B - 8 - 13 * i, "text-anchor": "end", fill: g.color}, g.text);
    });
    o.xticks.forEach(function (x) {
      el("text", {x: X(x), y: h - B + 14, "text-anchor": "middle"}, o.logx && x > 1 ? "2^" + Math.log2(x) : String(x));
    });
    o.yticks.forEach(function (y) { el("text", {x: L - 4, y: Y(y) + 4, "text-anchor": "end"}, String(y)); });
    el("text", {x: (L + w - R) / 2, y: h - 4, "text-anchor": "middle"}, o.xlabel);
    el("text", {x: 12, y: (T + h - B) / 2, "text-anchor": "middle", transform: "rotate(-90 12 " + (T + h - B) / 2 + ")"}, o.ylabel);
  };
  var ACCENT = "#c2410c", INK = "#1f2937", MUTED = "#9ca3af";
  function bind(root, formats, compute, draw) {
    var inputs = root.querySelectorAll("input[data-in]");
    function update() {
      var v = {};
      inputs.forEach(function (inp) {
        v[inp.dataset.in] = inp.value;
        root.querySelector('output[data-show="' + inp.dataset.in + '"]').textContent = inp.value;
      });
      var r = compute(v);
      Object.keys(formats).forEach(function (k) {
        root.querySelector('[data-out="' + k + '"]').textContent = W.format(r[k], formats[k]);
      });
      draw(v, r);
    }
    inputs.forEach(function (inp) { inp.addEventListener("input", update); });
    update();
  }
  W.mountAttempt = function (id, formats, budgetMax) {
    var root = document.getElementById(id);
    bind(root, formats, function (v) {
      return W.attempt(v.f, v.s, v.budget, Number(v.p_m), Number(v.p_k));
    }, function (v, r) {
      var fs = [], S = [];
      for (var i = 0; i <= 100; i++) { fs.push(i / 100); S.push(W.attempt(String(i / 100), v.s, "1", 0, 0).S); }
      var smax = Math.max(2, Math.ceil(Number(v.s)));
      W.plot(root.querySelector('svg[data-plot="S"]'), {x0: 0, x1: 1, y0: 0, y1: smax, xticks: [0, 0.5, 1],
        yticks: [0, 1, smax], xlabel: "generation share f", ylabel: "S",
        series: [{xs: fs, ys: S, color: INK}], marks: [{x: Number(v.f), y: r.S, color: ACCENT}],
        guides: [{y: 1, color: MUTED}]});
      var bs = [], dm = [], dk = [];
      for (var b = 0; b <= budgetMax; b++) {
        var q = W.attempt(v.f, v.s, String(b), Number(v.p_m), Number(v.p_k));
        bs.push(b); dm.push(q.dM); dk.push(q.dK);
      }
      W.plot(root.querySelector('svg[data-plot="D"]'), {x0: 0, x1: budgetMax, y0: 0, y1: 1,
        xticks: [0, budgetMax / 2, budgetMax], yticks: [0, 0.5, 1], xlabel: "budget B/c", ylabel: "discovery",
        series: [{xs: bs, ys: dm, color: MUTED, step: true}, {xs: bs, ys: dk, color: ACCENT, step: true}],
        marks: [{x: Number(v.budget), y: r.dM, color: MUTED}, {x: Number(v.budget), y: r.dK, color: ACCENT}],
        guides: [{x: Number(v.budget), color: INK}],
        legend: [{text: "baseline", color: MUTED}, {text: "hybrid", color: ACCENT}]});
    });
  };
  W.mountCache = function (id, formats, tMax) {
    var root = document.getElementById(id);
    bind(root, formats, function (v) {
      return W.cache(Number(v.ell), Number(v.batch), Math.round(Math.pow(2, Number(v.log2T))),
                     Number(v.kappa), Number(v.sigma));
    }, function (v, r) {
      var ts = [], rs = [];
      for (var u = 0; u <= Math.log2(tMax); u += 0.1) {
        var t = Math.pow(2, u); ts.push(t); rs.push((Number(v.kappa) * t + 3 * Number(v.sigma)) / (4 * Number(v.kappa) * t));
      }
      W.plot(root.querySelector('svg[data-plot="ratio"]'), {x0: 1, x1: tMax, y0: 0, y1: 2, logx: true,
        xticks: [1, 1024, tMax], yticks: [0, 0.25, 1, 2], xlabel: "context length T (log scale)", ylabel: "ratio",
        series: [{xs: ts, ys: rs, color: INK}], marks: [{x: r.T, y: r.ratio, color: ACCENT}],
        guides: [{y: 1, color: MUTED}, {y: 0.25, color: MUTED},
                 {x: Math.min(Math.max(r.crossover, 1), tMax), color: ACCENT}]});
    });
  };
})();
"""

_CSS = """
<style>
.ftip-widget { font: 14px/1.4 system-ui, sans-serif; border: 1px solid #e5e7eb; border-radius: 6px;
  padding: 10px 12px; margin: 8px 0; max-width: 700px; }
.ftip-widget label { display: grid; grid-template-columns: 15em 1fr 5em; gap: 8px; align-items: center; }
.ftip-widget output { font-variant-numeric: tabular-nums; }
.ftip-widget table { border-collapse: collapse; margin: 8px 0; }
.ftip-widget td { padding: 1px 10px 1px 0; }
.ftip-widget td[data-out] { font-variant-numeric: tabular-nums; font-weight: 600; }
.ftip-widget svg { display: inline-block; width: 320px; height: 200px; font-size: 10px; margin-right: 8px; }
</style>
"""


def _check_id(uid: str) -> str:
    if not uid.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"uid={uid!r} must contain only letters, digits, '-' and '_'")
    return uid


def _num(x: float) -> str:
    """A slider value as a plain decimal (no exponent), as the browser will report it."""
    text = repr(float(x)).rstrip("0").rstrip(".") if isinstance(x, float) else str(x)
    if "e" in text:
        raise ValueError(f"slider value {x!r} must be a plain decimal")
    return text


def _html(uid: str, title: str, sliders: list[Slider], labels: dict[str, str], readout: dict[str, str],
          plots: list[str], mount: str) -> str:
    rows = "\n".join(
        f'<label>{html.escape(sl.label)} <input type="range" data-in="{sl.key}" min="{_num(sl.lo)}" '
        f'max="{_num(sl.hi)}" step="{_num(sl.step)}" value="{_num(sl.value)}">'
        f'<output data-show="{sl.key}">{_num(sl.value)}</output></label>'
        for sl in sliders
    )
    table = "\n".join(f'<tr><td>{labels[k]}</td><td data-out="{k}">{html.escape(v)}</td></tr>' for k, v in readout.items())
    svgs = "".join(f'<svg data-plot="{p}" viewBox="0 0 320 200" role="img" aria-label="{p} plot"></svg>' for p in plots)
    return (
        f'<div class="ftip-widget" id="{uid}">{_CSS}<strong>{html.escape(title)}</strong>\n{rows}\n'
        f"<table>\n{table}\n</table>\n<div>{svgs}</div>\n"
        "<noscript>Interactive figure: JavaScript is off, the numbers above are for the default values.</noscript>"
        f"</div>\n<script>{WIDGET_JS}\n{mount}</script>"
    )


def _in_range(sl: Slider) -> Slider:
    if not sl.lo <= sl.value <= sl.hi:
        raise ValueError(f"{sl.key}={sl.value!r} is outside the slider range [{sl.lo}, {sl.hi}]")
    return sl


def attempt_throughput_html(
    *, f: float = 0.8, s: float = 2.2, budget: int = 10, p_m: float = 0.10, p_k: float = 0.08,
    budget_max: int = 30, uid: str = "ftip-attempt",
) -> str:
    """A kernel-free interactive figure of the attempt-throughput model (ftip-00L3, 00LF).

    Sliders for ``f``, ``s``, the budget ``B/c`` and the two success probabilities; the readout
    starts at the Python values (:func:`attempt_readout`) and follows the sliders in JavaScript.
    ``uid`` is the element id (unique per page).
    """
    sliders = [_in_range(x) for x in (
        Slider("f", "generation share f", 0, 1, 0.01, f),
        Slider("s", "generation speed factor s", 0.5, 5, 0.05, s),
        Slider("budget", "budget B/c", 0, budget_max, 1, budget),
        Slider("p_m", "baseline success p_M", 0, 0.5, 0.005, p_m),
        Slider("p_k", "hybrid success p_K", 0, 0.5, 0.005, p_k),
    )]
    readout = attempt_readout(f=f, s=s, budget=budget, p_m=p_m, p_k=p_k)
    mount = f"ftipbookWidgets.mountAttempt({json.dumps(_check_id(uid))}, {json.dumps(ATTEMPT_FORMATS)}, {int(budget_max)});"
    return _html(uid, "Attempt throughput under a budget (ftip-00L3)", sliders, _ATTEMPT_LABELS, readout, ["S", "D"], mount)


def cache_ratio_html(
    *, kappa: int, sigma: int, ell: int = 1, batch: int = 1, log2_length: float = 10.0,
    kappa_max: int = 4096, sigma_max: int = 2**20, uid: str = "ftip-cache",
) -> str:
    """A kernel-free interactive figure of the cache-ratio model (ftip-00KY).

    Sliders for ``l``, ``b``, ``log2 T`` (``T = round(2^u)``, up to ``2^20``), ``kappa`` and ``sigma``
    in bytes; memories are shown in MiB.
    """
    sliders = [_in_range(x) for x in (
        Slider("ell", "l (groups of 4 layers)", 1, 16, 1, ell),
        Slider("batch", "batch b", 1, 64, 1, batch),
        Slider("log2T", "log2 of context length T", 0, 20, 0.25, log2_length),
        Slider("kappa", "kappa (bytes/token/layer)", 1, kappa_max, 1, kappa),
        Slider("sigma", "sigma (bytes per KDA state)", 1, sigma_max, 1, sigma),
    )]
    readout = cache_readout(ell=ell, batch=batch, length=round(2**log2_length), kappa=kappa, sigma=sigma)
    mount = f"ftipbookWidgets.mountCache({json.dumps(_check_id(uid))}, {json.dumps(CACHE_FORMATS)}, {2**20});"
    return _html(uid, "Active state memory, hybrid vs full MLA (ftip-00KY)", sliders, _CACHE_LABELS, readout, ["ratio"], mount)


# --- ipywidgets ---------------------------------------------------------------------------------


def live_frontend() -> bool:
    """True when code runs in an interactive Jupyter frontend (JupyterLab, Notebook, Colab, VS Code).

    Batch executors (``nbclient``, ``nbconvert --execute``, ``nbval``) send their execute requests
    with ``allow_stdin=False``; interactive frontends allow stdin. Widgets built under a batch
    executor would be stored in the notebook's metadata, and the website would then load the
    ipywidgets manager from a CDN, so under batch execution the ``*_widget`` functions return a
    :class:`WidgetPlaceholder` instead.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    kernel = getattr(get_ipython(), "kernel", None)
    return bool(getattr(kernel, "_allow_stdin", False))


@dataclass(frozen=True)
class WidgetPlaceholder:
    """Stands in for a widget outside an interactive frontend; its ``repr`` is the widget's."""

    name: str
    values: tuple[tuple[str, object], ...]

    def __repr__(self) -> str:
        return f"<{self.name} widget ({', '.join(f'{k}={v!r}' for k, v in self.values)}); live in Jupyter>"


def _ipywidgets():
    try:
        import ipywidgets
    except ImportError as err:  # pragma: no cover - the widgets extra is installed in the book's environment
        raise ImportError("the interactive widgets need ipywidgets: pip install 'ftipbook[widgets]'") from err
    return ipywidgets


def _readout_table(labels: dict[str, str], readout: dict[str, str]) -> str:
    rows = "".join(f"<tr><td>{labels[k]}</td><td><b>{html.escape(v)}</b></td></tr>" for k, v in readout.items())
    return f"<table>{rows}</table>"


def _live(ipw, name: str, sliders: dict, compute, draw):
    """A ``VBox`` of ``sliders``, an HTML readout and a figure, redrawn whenever a slider moves.

    Its ``repr`` (the ``text/plain`` a notebook stores) names the model and the slider values, so
    stored outputs stay short and deterministic. ``sliders``, ``readout`` and ``update`` are
    exposed as attributes for tests and scripts.
    """
    import matplotlib.pyplot as plt

    class ModelWidget(ipw.VBox):
        def __repr__(self) -> str:
            values = ", ".join(f"{k}={w.value!r}" for k, w in sliders.items())
            return f"<{name} widget ({values}); live in Jupyter>"

    readout, figure = ipw.HTML(), ipw.Output()

    def update(_=None):
        values = {k: w.value for k, w in sliders.items()}
        readout.value = compute(values)
        with figure:
            figure.clear_output(wait=True)
            fig = draw(values)
            plt.show()
            plt.close(fig)

    for w in sliders.values():
        w.observe(update, names="value")
    update()
    box = ModelWidget([*sliders.values(), readout, figure])
    box.sliders, box.readout, box.update = sliders, readout, update
    return box


def attempt_throughput_widget(
    *, f: float = 0.8, s: float = 2.2, budget: int = 10, p_m: float = 0.10, p_k: float = 0.08, budget_max: int = 30,
    live: bool | None = None,
):
    """ipywidgets sliders for the attempt-throughput model with a live readout and figure (ftip-00L3).

    Returns a ``VBox`` (its ``sliders`` dict and ``readout`` HTML are attributes), or a
    :class:`WidgetPlaceholder` when ``live`` is false; ``live=None`` asks :func:`live_frontend`.
    """
    from ftipbook.viz.compare import attempt_throughput_figure

    if not (live_frontend() if live is None else live):
        return WidgetPlaceholder("attempt-throughput", (("f", f), ("s", s), ("budget", budget), ("p_m", p_m), ("p_k", p_k)))
    ipw = _ipywidgets()
    style = {"description_width": "12em"}
    layout = ipw.Layout(width="34em")
    sliders = {
        "f": ipw.FloatSlider(value=f, min=0, max=1, step=0.01, description="generation share f", style=style, layout=layout),
        "s": ipw.FloatSlider(value=s, min=0.5, max=5, step=0.05, description="speed factor s", style=style, layout=layout),
        "budget": ipw.IntSlider(value=budget, min=0, max=budget_max, description="budget B/c", style=style, layout=layout),
        "p_m": ipw.FloatSlider(value=p_m, min=0, max=0.5, step=0.005, readout_format=".3f", description="baseline p_M",
                               style=style, layout=layout),
        "p_k": ipw.FloatSlider(value=p_k, min=0, max=0.5, step=0.005, readout_format=".3f", description="hybrid p_K",
                               style=style, layout=layout),
    }
    return _live(
        ipw, "attempt-throughput", sliders,
        lambda v: _readout_table(_ATTEMPT_LABELS, attempt_readout(**v)),
        lambda v: attempt_throughput_figure(**v, budget_max=budget_max),
    )


def cache_ratio_widget(
    *, kappa: int, sigma: int, ell: int = 1, batch: int = 1, length: int = 1024, live: bool | None = None
):
    """ipywidgets sliders for the cache-ratio model with a live readout and figure (ftip-00KY).

    A :class:`WidgetPlaceholder` when ``live`` is false; ``live=None`` asks :func:`live_frontend`.
    """
    from ftipbook.viz.compare import cache_ratio_figure

    if not (live_frontend() if live is None else live):
        return WidgetPlaceholder(
            "cache-ratio", (("ell", ell), ("batch", batch), ("length", length), ("kappa", kappa), ("sigma", sigma))
        )
    ipw = _ipywidgets()
    style = {"description_width": "12em"}
    layout = ipw.Layout(width="34em")
    sliders = {
        "ell": ipw.IntSlider(value=ell, min=1, max=16, description="l (groups of 4)", style=style, layout=layout),
        "batch": ipw.IntSlider(value=batch, min=1, max=64, description="batch b", style=style, layout=layout),
        "length": ipw.IntSlider(value=length, min=1, max=2**20, description="context T", style=style, layout=layout),
        "kappa": ipw.IntSlider(value=kappa, min=1, max=4096, description="kappa (B/token/layer)", style=style, layout=layout),
        "sigma": ipw.IntSlider(value=sigma, min=1, max=2**20, description="sigma (B/state)", style=style, layout=layout),
    }
    return _live(
        ipw, "cache-ratio", sliders,
        lambda v: _readout_table(_CACHE_LABELS, cache_readout(**v)),
        lambda v: cache_ratio_figure(kappa=v["kappa"], sigma=v["sigma"], length=v["length"]),
    )
