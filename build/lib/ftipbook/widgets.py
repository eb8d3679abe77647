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
:data:`CACHE_FORMATS`; the JavaScript receives the same formats, so both sides print alike (ties
rounded to even on both sides). A value outside the model's domain is explained, not printed: an
undefined break-even names its reason, a negative saving says how many times more state the hybrid
holds. Quantities that span decades (``T``, ``kappa``, ``sigma``) have sliders that move in ``log2``
space and show the rounded power; one slider specification (:class:`Slider`) builds both the HTML
and the ipywidgets slider.
"""
from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass

from ftipbook.compare import cache_model, throughput
from ftipbook.compare.frontier import Undefined

#: Decimals shown per readout of the attempt model (``None``: an integer or a text).
ATTEMPT_FORMATS: dict[str, int | None] = {
    "ratio": 4, "S": 3, "nM": None, "nK": None, "dM": 3, "dK": 3, "pStar": 4, "verdict": None,
}
#: Decimals shown per readout of the cache model (memories in MiB).
CACHE_FORMATS: dict[str, int | None] = {"mla": 3, "hybrid": 3, "ratio": 4, "crossover": 3, "saving": None}
MIB = 2**20
#: The longest context the cache figures offer.
LENGTH_MAX = 2**20


@dataclass(frozen=True)
class Slider:
    """One slider of a figure: the argument ``key`` it sets, its label, range and start ``value``.

    ``log``: the quantity is a positive integer spanning decades; the slider moves ``u`` over
    ``[log2 lo, log2 hi]`` and the quantity is ``round(2^u)``. An integer ``step`` (on a linear
    slider) makes an integer slider.
    """

    key: str
    label: str
    lo: float
    hi: float
    step: float
    value: float
    log: bool = False

    def __post_init__(self) -> None:
        if not self.lo <= self.value <= self.hi:
            raise ValueError(f"{self.key}={self.value!r} is outside the slider range [{self.lo}, {self.hi}]")
        if self.log and not (isinstance(self.value, int) and self.lo >= 1):
            raise ValueError(f"{self.key}={self.value!r}: a log slider takes an int >= 1 (range from {self.lo})")


def _fmt(value: object, decimals: int | None) -> str:
    if isinstance(value, Undefined):
        return f"undefined: {value.reason}"
    return str(value) if decimals is None else f"{value:.{decimals}f}"


def saving_text(ratio: float) -> str:
    """The cache saving ``100 (1 - ratio)`` in percent, or, where the hybrid holds more (ftip-00KY).

    ``ratio`` is ``M_hybrid / M_MLA``; above 1 (``T`` below the crossover ``sigma / kappa``) there
    is no saving, and the text says how many times as much state the hybrid holds.
    """
    if ratio <= 1:
        return _fmt(100 * (1 - ratio), 1)
    return f"none: the hybrid holds {ratio:.2f}x as much (T < sigma/kappa)"


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
    """The cache model's readout strings (memories in MiB), from :mod:`ftipbook.compare.cache_model`.

    The saving is :func:`saving_text` of the ratio.
    """
    m_mla, m_hyb = cache_model.stylized_state_memory(ell, batch, length, kappa, sigma)
    ratio = cache_model.cache_ratio(length, kappa, sigma)
    values = {"mla": m_mla / MIB, "hybrid": m_hyb / MIB, "ratio": ratio,
              "crossover": cache_model.crossover_length(kappa, sigma), "saving": saving_text(ratio)}
    return {k: _fmt(v, CACHE_FORMATS[k]) for k, v in values.items()}


_ATTEMPT_LABELS = {
    "ratio": "cost per attempt c<sub>K</sub>/c", "S": "throughput factor S", "nM": "baseline attempts N<sub>M</sub>",
    "nK": "hybrid attempts N<sub>K</sub>", "dM": "baseline discovery", "dK": "hybrid discovery",
    "pStar": "break-even p<sub>K</sub>*", "verdict": "comparison",
}
_CACHE_LABELS = {
    "mla": "M<sub>MLA</sub> (MiB)", "hybrid": "M<sub>hybrid</sub> (MiB)",
    "ratio": "M<sub>hybrid</sub>/M<sub>MLA</sub>", "crossover": "crossover &sigma;/&kappa;", "saving": "saving (%)",
}

#: The models, their number formats and the SVG plots, in JavaScript (written once, tested against Python).
#:
#: :meta hide-value:
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
  // an undefined value: {reason: text}, shown as "undefined: <reason>" (frontier.Undefined in Python)
  W.undefined = function (reason) { return {reason: reason}; };
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
            pStar: ok ? 1 - Math.pow(1 - pM, nM / nK)
                      : W.undefined("break-even needs N_M >= 1 and N_K >= 1 attempts, got N_M=" + nM + ", N_K=" + nK),
            verdict: ok ? (dK >= dM ? "hybrid >= baseline" : "hybrid < baseline")
                        : "undefined: needs N_M >= 1 and N_K >= 1"};
  };
  // ftip-00KY: M_MLA = 4 b l kappa T, M_hybrid = b l (kappa T + 3 sigma), ratio, crossover
  W.cache = function (ell, b, T, kappa, sigma) {
    var ratio = (kappa * T + 3 * sigma) / (4 * kappa * T);
    return {mla: 4 * b * ell * kappa * T / 1048576, hybrid: b * ell * (kappa * T + 3 * sigma) / 1048576,
            ratio: ratio, crossover: sigma / kappa, saving: W.savingText(ratio)};
  };
  W.savingText = function (ratio) {
    if (ratio <= 1) return W.format(100 * (1 - ratio), 1);
    return "none: the hybrid holds " + W.format(ratio, 2) + "x as much (T < sigma/kappa)";
  };
  // fixed decimals, an exact tie rounded to even as Python's format does (toFixed rounds it up)
  W.format = function (value, decimals) {
    if (value !== null && typeof value === "object") return "undefined: " + value.reason;
    if (decimals === null) return String(value);
    var text = value.toFixed(decimals), exact = Math.abs(value).toFixed(100);
    var cut = exact.indexOf(".") + decimals + 1;
    if (/^50*$/.test(exact.slice(cut)) && /[13579]$/.test(text)) {
      text = (value < 0 ? "-" : "") + exact.slice(0, decimals ? cut : cut - 1);
    }
    return text;
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
      inputs.forEach(function (inp) {  // a log slider holds u; its quantity is round(2^u)
        var x = inp.dataset.log ? Math.round(Math.pow(2, Number(inp.value))) : inp.value;
        v[inp.dataset.in] = x;
        root.querySelector('output[data-show="' + inp.dataset.in + '"]').textContent = String(x);
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
      return W.cache(Number(v.ell), Number(v.batch), v.length, v.kappa, v.sigma);
    }, function (v, r) {
      var ts = [], rs = [];
      for (var u = 0; u <= Math.log2(tMax); u += 0.1) {
        var t = Math.pow(2, u); ts.push(t); rs.push((v.kappa * t + 3 * v.sigma) / (4 * v.kappa * t));
      }
      W.plot(root.querySelector('svg[data-plot="ratio"]'), {x0: 1, x1: tMax, y0: 0, y1: 2, logx: true,
        xticks: [1, 1024, tMax], yticks: [0, 0.25, 1, 2], xlabel: "context length T (log scale)", ylabel: "ratio",
        series: [{xs: ts, ys: rs, color: INK}], marks: [{x: v.length, y: r.ratio, color: ACCENT}],
        guides: [{y: 1, color: MUTED}, {y: 0.25, color: MUTED},
                 {x: Math.min(Math.max(r.crossover, 1), tMax), color: ACCENT}]});
    });
  };
})();
"""

_CSS = """
<style>
.ftip-widget { font: 14px/1.4 system-ui, sans-serif; border: 1px solid #e5e7eb; border-radius: 6px;
  padding: 10px 12px; margin: 8px 0; max-width: 700px; box-sizing: border-box; }
.ftip-widget label { display: grid; grid-template-columns: 15em minmax(6em, 1fr) 5.5em; gap: 8px;
  align-items: center; }
.ftip-widget input { min-width: 0; width: 100%; margin: 0; }
.ftip-widget output { font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.ftip-widget table { border-collapse: collapse; margin: 8px 0; }
.ftip-widget td { padding: 1px 10px 1px 0; overflow-wrap: break-word; }
.ftip-widget td[data-out] { font-variant-numeric: tabular-nums; font-weight: 600; }
.ftip-widget svg { display: inline-block; width: 100%; max-width: 320px; height: auto; font-size: 10px;
  margin-right: 8px; }
@media (max-width: 600px) {
  .ftip-widget { padding: 8px; }
  .ftip-widget label { grid-template-columns: minmax(0, 1fr) 5.5em; gap: 0 8px; margin-bottom: 4px; }
  .ftip-widget label > span { grid-column: 1 / -1; }
  .ftip-widget table { width: 100%; }
  .ftip-widget td { padding-right: 6px; }
}
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


def _range_input(sl: Slider) -> str:
    """The ``<input type="range">`` of ``sl``; a log slider runs over ``log2`` of its range with any step,
    so its start ``log2(value)`` is kept exactly (a stepped range would snap it)."""
    if sl.log:
        lo, hi, step, value = _num(math.log2(sl.lo)), _num(math.log2(sl.hi)), "any", _num(math.log2(sl.value))
        return (f'<input type="range" data-in="{sl.key}" data-log="2" min="{lo}" max="{hi}" step="{step}" '
                f'value="{value}">')
    return (f'<input type="range" data-in="{sl.key}" min="{_num(sl.lo)}" max="{_num(sl.hi)}" '
            f'step="{_num(sl.step)}" value="{_num(sl.value)}">')


def _html(uid: str, title: str, sliders: list[Slider], labels: dict[str, str], readout: dict[str, str],
          plots: list[str], mount: str) -> str:
    rows = "\n".join(
        f'<label><span>{html.escape(sl.label)}</span> {_range_input(sl)}'
        f'<output data-show="{sl.key}">{_num(sl.value)}</output></label>'
        for sl in sliders
    )
    table = "\n".join(f'<tr><td>{labels[k]}</td><td data-out="{k}">{html.escape(v)}</td></tr>'
                      for k, v in readout.items())
    svgs = "".join(f'<svg data-plot="{p}" viewBox="0 0 320 200" role="img" aria-label="{p} plot"></svg>' for p in plots)
    return (
        f'<div class="ftip-widget" id="{uid}">{_CSS}<strong>{html.escape(title)}</strong>\n{rows}\n'
        f"<table>\n{table}\n</table>\n<div>{svgs}</div>\n"
        "<noscript>Interactive figure: JavaScript is off, the numbers above are for the default values.</noscript>"
        f"</div>\n<script>{WIDGET_JS}\n{mount}</script>"
    )


def _attempt_sliders(*, f: float, s: float, budget: int, p_m: float, p_k: float, budget_max: int) -> list[Slider]:
    return [
        Slider("f", "generation share f", 0, 1, 0.01, f),
        Slider("s", "generation speed factor s", 0.5, 5, 0.05, s),
        Slider("budget", "budget B/c", 0, budget_max, 1, budget),
        Slider("p_m", "baseline success p_M", 0, 0.5, 0.005, p_m),
        Slider("p_k", "hybrid success p_K", 0, 0.5, 0.005, p_k),
    ]


def _cache_sliders(*, ell: int, batch: int, length: int, kappa: int, sigma: int, kappa_max: int, sigma_max: int,
                   length_max: int) -> list[Slider]:
    return [
        Slider("ell", "l (groups of 4 layers)", 1, 16, 1, ell),
        Slider("batch", "batch b", 1, 64, 1, batch),
        Slider("length", "context length T", 1, length_max, 1, length, log=True),
        Slider("kappa", "kappa (bytes/token/layer)", 1, kappa_max, 1, kappa, log=True),
        Slider("sigma", "sigma (bytes per KDA state)", 1, sigma_max, 1, sigma, log=True),
    ]


def attempt_throughput_html(
    *, f: float = 0.8, s: float = 2.2, budget: int = 10, p_m: float = 0.10, p_k: float = 0.08,
    budget_max: int = 30, uid: str = "ftip-attempt",
) -> str:
    """A kernel-free interactive figure of the attempt-throughput model (ftip-00L3, 00LD, 00LF).

    Sliders for ``f``, ``s``, the budget ``B/c`` and the two success probabilities; the readout
    starts at the Python values (:func:`attempt_readout`) and follows the sliders in JavaScript.
    ``uid`` is the element id (unique per page).
    """
    sliders = _attempt_sliders(f=f, s=s, budget=budget, p_m=p_m, p_k=p_k, budget_max=budget_max)
    readout = attempt_readout(f=f, s=s, budget=budget, p_m=p_m, p_k=p_k)
    mount = (f"ftipbookWidgets.mountAttempt({json.dumps(_check_id(uid))}, {json.dumps(ATTEMPT_FORMATS)}, "
             f"{int(budget_max)});")
    return _html(uid, "Attempt throughput under a budget (ftip-00L3)", sliders, _ATTEMPT_LABELS, readout, ["S", "D"],
                 mount)


def cache_ratio_html(
    *, kappa: int, sigma: int, ell: int = 1, batch: int = 1, length: int = 1024,
    kappa_max: int = 4096, sigma_max: int = 2**20, uid: str = "ftip-cache",
) -> str:
    """A kernel-free interactive figure of the cache-ratio model (ftip-00KV, 00KY).

    Sliders for ``l``, ``b`` and, on a log scale (the slider moves ``u``, the value is ``round(2^u)``),
    the context length ``T`` up to ``2^20``, ``kappa`` and ``sigma`` in bytes; memories are shown in MiB.
    """
    sliders = _cache_sliders(ell=ell, batch=batch, length=length, kappa=kappa, sigma=sigma, kappa_max=kappa_max,
                             sigma_max=sigma_max, length_max=LENGTH_MAX)
    readout = cache_readout(ell=ell, batch=batch, length=length, kappa=kappa, sigma=sigma)
    mount = f"ftipbookWidgets.mountCache({json.dumps(_check_id(uid))}, {json.dumps(CACHE_FORMATS)}, {LENGTH_MAX});"
    return _html(uid, "Active state memory, hybrid vs full MLA (ftip-00KY)", sliders, _CACHE_LABELS, readout,
                 ["ratio"], mount)


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


def _ipw_slider(ipw, sl: Slider):
    """The ipywidgets slider of ``sl``: ``FloatLogSlider`` (base 2, integer readout) for a log slider,
    ``IntSlider`` for an integer step, ``FloatSlider`` otherwise."""
    common = {"description": sl.label, "style": {"description_width": "14em"},
              "layout": ipw.Layout(width="100%", max_width="36em")}
    if sl.log:
        return ipw.FloatLogSlider(value=sl.value, base=2, min=math.log2(sl.lo), max=math.log2(sl.hi), step=1 / 64,
                                  readout_format="d", **common)
    if isinstance(sl.step, int):
        return ipw.IntSlider(value=sl.value, min=sl.lo, max=sl.hi, step=sl.step, **common)
    decimals = max(0, -math.floor(math.log10(sl.step) + 1e-9))
    return ipw.FloatSlider(value=sl.value, min=sl.lo, max=sl.hi, step=sl.step, readout_format=f".{decimals}f", **common)


def _live(ipw, name: str, specs: list[Slider], compute, draw):
    """A ``VBox`` of the sliders of ``specs``, an HTML readout and a figure, redrawn whenever a slider moves.

    A log slider's value is read as ``round(value)``. Its ``repr`` (the ``text/plain`` a notebook
    stores) names the model and the slider values, so stored outputs stay short and deterministic.
    ``sliders`` (a dict by key), ``readout`` and ``update`` are exposed as attributes for tests and scripts.
    """
    import matplotlib.pyplot as plt

    sliders = {sl.key: _ipw_slider(ipw, sl) for sl in specs}
    logs = {sl.key for sl in specs if sl.log}

    def values() -> dict[str, object]:
        return {k: round(w.value) if k in logs else w.value for k, w in sliders.items()}

    class ModelWidget(ipw.VBox):
        def __repr__(self) -> str:
            shown = ", ".join(f"{k}={v!r}" for k, v in values().items())
            return f"<{name} widget ({shown}); live in Jupyter>"

    readout, figure = ipw.HTML(), ipw.Output()

    def update(_=None):
        v = values()
        readout.value = compute(v)
        with figure:
            figure.clear_output(wait=True)
            fig = draw(v)
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

    specs = _attempt_sliders(f=f, s=s, budget=budget, p_m=p_m, p_k=p_k, budget_max=budget_max)
    if not (live_frontend() if live is None else live):
        return WidgetPlaceholder("attempt-throughput", tuple((sl.key, sl.value) for sl in specs))
    return _live(
        _ipywidgets(), "attempt-throughput", specs,
        lambda v: _readout_table(_ATTEMPT_LABELS, attempt_readout(**v)),
        lambda v: attempt_throughput_figure(**v, budget_max=budget_max),
    )


def cache_ratio_widget(
    *, kappa: int, sigma: int, ell: int = 1, batch: int = 1, length: int = 1024, kappa_max: int = 4096,
    sigma_max: int = 2**20, live: bool | None = None,
):
    """ipywidgets sliders for the cache-ratio model with a live readout and figure (ftip-00KV, 00KY).

    ``T``, ``kappa`` and ``sigma`` have base-2 ``FloatLogSlider`` sliders, read as integers. A
    :class:`WidgetPlaceholder` when ``live`` is false; ``live=None`` asks :func:`live_frontend`.
    """
    from ftipbook.viz.compare import cache_ratio_figure

    specs = _cache_sliders(ell=ell, batch=batch, length=length, kappa=kappa, sigma=sigma, kappa_max=kappa_max,
                           sigma_max=sigma_max, length_max=LENGTH_MAX)
    if not (live_frontend() if live is None else live):
        return WidgetPlaceholder("cache-ratio", tuple((sl.key, sl.value) for sl in specs))
    return _live(
        _ipywidgets(), "cache-ratio", specs,
        lambda v: _readout_table(_CACHE_LABELS, cache_readout(**v)),
        lambda v: cache_ratio_figure(kappa=v["kappa"], sigma=v["sigma"], length=v["length"], t_max=LENGTH_MAX),
    )
