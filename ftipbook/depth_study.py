"""The committed depth-reuse experiments (ftip-00KO, 00KQ, 00KR, 00KL, 00KN).

``python scripts/build_depth.py`` trains them deterministically on one CPU thread, in float32, under
the common recipe of :mod:`ftipbook.study` (its corpus, tokenizer, AdamW, warmup-cosine schedule,
8 x 64-token batches, evaluation documents and scoring, run by :class:`ftipbook.study.StudyRunner`),
and commits the results under ``ftipbook/_depth/``; :func:`load` reads them back after checking
every file against ``MANIFEST.json``.

* **A. Equal parameters, 1, 2, 3 passes** (ftip-00KO, 00KQ): the stack :data:`STACK` (two
  softmax-attention blocks of width 64) trained with ``n_loops`` in :data:`PASSES` at the seeds
  :data:`SEEDS`, :data:`BUDGET` steps each, as a :class:`~ftipbook.compare.arms.CommonRecipeArm`
  whose packages differ only in ``n_loops``. Each trained model's
  :class:`~ftipbook.compare.depth_records.DepthReuseRecord` (with its computation-axis record) is
  captured on a greedy cached decode of :data:`NEW_TOKENS` tokens after the first :data:`PROMPT_LEN`
  tokens of the first evaluation document; its latencies are machine-specific.
* **B. Surface** (ftip-00KR): widths :data:`SURFACE_WIDTHS` x passes :data:`PASSES` x budgets
  :data:`SURFACE_BUDGETS` at seed :data:`SURFACE_SEED`: score, parameters and counted training FLOPs
  per point. The width-64, budget-:data:`BUDGET` points are runs of A.
* **C. Recirculation** (ftip-00KL): every model of A scored with
  :func:`~ftipbook.model.depth.with_passes` at the inference pass counts :data:`INFERENCE_PASSES`,
  nothing retrained; the counted FLOPs of a :data:`PROMPT_LEN`-token prefill at each pass count, and
  the records of the seed-0 models at each pass count.
* **D. Latent prediction on and off** (ftip-00KN): :func:`~ftipbook.model.depth.next_latent_model`
  of the one-pass stack with the latent weights :data:`LATENT_WEIGHTS`, same recipe and seeds; next-token
  scores, the latent-loss trajectory of every step, the decoder's weights hash at initialization and
  after training, and the records.

Scores are minus each evaluation document's mean per-token NLL (nats), as
:func:`ftipbook.study.document_scores` computes them; higher is better.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import torch
from safetensors.torch import save

from ftipbook import study, zoo
from ftipbook.artifact import versions, weights_sha256
from ftipbook.compare.arms import ArmResult, CommonRecipeArm, Outcome
from ftipbook.compare.depth_records import ComputationAxisRecord, DepthReuseRecord
from ftipbook.compare.measure import count_flops
from ftipbook.data.windows import tokenize_documents
from ftipbook.file_records import safetensors_record
from ftipbook.manifest_set import write_manifest_set
from ftipbook.model.config import ModelConfig
from ftipbook.model.depth import NextLatentLM, next_latent_model, with_passes
from ftipbook.model.transformer import DecoderLM, build_model
from ftipbook.runtime import cpu_kind

DEPTH_DIR = Path(__file__).resolve().parent / "_depth"
DATA_FILE = "DEPTH.json"
FORMAT = "ftipbook.depth/1"
BUILD_COMMAND = "python scripts/build_depth.py"

#: The shared stack of experiments A, C and D (ModelConfig fields besides ``vocab_size`` and ``n_loops``).
STACK: Mapping[str, Any] = MappingProxyType({**study.PACKAGES["full-attention"], "n_layers": 2})
#: The pass counts (``n_loops``) of experiment A, also the pass axis of the surface.
PASSES = (1, 2, 3)
#: The seeds of experiments A, C and D (each fixes data order, window offsets and initialization).
SEEDS = (0, 1, 2)
#: The training steps of every run of A, C and D.
BUDGET = 400
#: The widths of the surface (experiment B).
SURFACE_WIDTHS = (32, 48, 64)
#: The training budgets of the surface, in steps.
SURFACE_BUDGETS = (50, 100, 200, 400)
#: The one seed of the surface.
SURFACE_SEED = 0
#: The pass counts each model of A is run with in experiment C.
INFERENCE_PASSES = (1, 2, 3, 4, 5)
#: The next-latent weights of experiment D (0 is the plain objective).
LATENT_WEIGHTS = (0.0, 1.0)
#: Prompt tokens of the decode every record is captured on.
PROMPT_LEN = 16
#: Greedy tokens decoded after the prompt when a record is captured.
NEW_TOKENS = 8
#: Decodes per record capture (latencies are their medians).
RECORD_REPEATS = 3
#: The committed checkpoints, the seed-0 models of A and of D (D's with their next-latent heads).
CHECKPOINTS = tuple(f"passes-{p}" for p in PASSES) + tuple(f"latent-w{w:g}" for w in LATENT_WEIGHTS)


def _member(name: str, value: object, allowed: tuple) -> Any:
    if isinstance(value, bool) or value not in allowed:
        raise ValueError(f"{name}={value!r} is not one of {list(allowed)}")
    return value


def package(width: int = 64, passes: int = 1) -> dict[str, Any]:
    """The ModelConfig fields of the stack at ``width`` (4 heads, feed-forward width ``2.75 x width``)
    applied ``passes`` times, with the zoo tokenizer's ``vocab_size``."""
    _member("width", width, SURFACE_WIDTHS)
    if isinstance(passes, bool) or not isinstance(passes, int) or passes < 1:
        raise ValueError(f"passes={passes!r} must be an int >= 1")
    return {**STACK, "d_model": width, "d_ff": STACK["d_ff"] * width // STACK["d_model"], "n_loops": passes,
            "vocab_size": zoo.tokenizer().vocab_size}


def record_prompt() -> torch.Tensor:
    """The ``[1, PROMPT_LEN]`` prompt of every record: the first tokens of the first evaluation document."""
    ids = tokenize_documents(study.evaluation_documents()[:1], zoo.tokenizer())[0].ids
    return torch.tensor([list(ids[:PROMPT_LEN])])


def capture_record(model: DecoderLM) -> DepthReuseRecord:
    """The :class:`~ftipbook.compare.depth_records.DepthReuseRecord` of ``model`` on the declared decode
    (evaluation seed: the seed of the zoo's validation draw)."""
    return DepthReuseRecord.capture(model, record_prompt(), NEW_TOKENS, eval_seeds=(zoo.VALID_SEED,),
                                    repeats=RECORD_REPEATS)


@torch.no_grad()
def prefill_flops(model: DecoderLM) -> int:
    """Counted FLOPs of one uncached forward of :func:`record_prompt` (a prefill without a cache)."""
    was_training = model.training
    model.eval()
    try:
        return count_flops(lambda: model(record_prompt()))[1].total
    finally:
        model.train(was_training)


def depth_record(d: Mapping[str, Any]) -> DepthReuseRecord:
    """Inverse of ``DepthReuseRecord.to_dict`` for a fully recorded record."""
    return DepthReuseRecord(**{**d, "eval_seeds": tuple(d["eval_seeds"]),
                               "computation": ComputationAxisRecord(**d["computation"])})


# --- loading -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PassesRun:
    """One run of experiment A: the stack trained with ``passes`` passes at ``seed`` (:data:`BUDGET` steps).

    ``parameters`` are counted from the trained model's tensors; ``measured_train_flops`` the
    flop-counter count of one training step times the steps; ``losses`` the training loss of every
    step; ``record`` the captured depth-reuse record; ``records`` the records the study runner captured
    (``architecture``, ``optimizer``, ``systems``, ``training``: its data-stream hash, seeds, losses).
    """

    passes: int
    seed: int
    config: ModelConfig
    score: float
    item_scores: np.ndarray
    parameters: int
    measured_train_flops: int
    losses: tuple[float, ...]
    record: DepthReuseRecord
    outcome: Outcome
    records: Mapping[str, Any]


@dataclass(frozen=True)
class Surface:
    """Experiment B at seed :data:`SURFACE_SEED`: ``scores[i, j, k]`` of width ``widths[i]``, ``passes[j]``
    and budget ``budgets[k]`` (steps; ``tokens[k]`` training tokens); ``parameters[i, j]`` counted from
    the trained tensors; ``train_flops[i, j, k]`` counted (one step's count times the steps)."""

    widths: tuple[int, ...]
    passes: tuple[int, ...]
    budgets: tuple[int, ...]
    tokens: tuple[int, ...]
    scores: np.ndarray
    parameters: np.ndarray
    train_flops: np.ndarray


@dataclass(frozen=True)
class Recirculation:
    """Experiment C: ``scores[i, s, k]`` of the model trained with ``trained_passes[i]`` passes at seed
    ``seeds[s]``, run with ``inference_passes[k]`` passes; ``item_scores[i, s, k]`` its per-document
    scores; ``prefill_flops[i, k]`` the counted FLOPs of a :data:`PROMPT_LEN`-token prefill of the seed-0
    model at each pass count; ``records[(r, p)]`` the seed-0 records."""

    trained_passes: tuple[int, ...]
    seeds: tuple[int, ...]
    inference_passes: tuple[int, ...]
    scores: np.ndarray
    item_scores: np.ndarray
    prefill_flops: np.ndarray
    records: Mapping[tuple[int, int], DepthReuseRecord]


@dataclass(frozen=True)
class LatentRun:
    """One run of experiment D: the one-pass stack trained with next-latent weight ``weight`` at ``seed``.

    ``latent_losses`` is the next-latent loss (before weighting) at every step (empty when the
    weight is 0: it is not computed); ``token_losses`` the next-token loss of every step;
    ``init_sha256`` / ``weights_sha256`` the hash of the inference weights
    (``decoder_state_dict``) before and after training; ``records`` the study runner's records.
    """

    weight: float
    seed: int
    objective: str
    score: float
    item_scores: np.ndarray
    latent_losses: tuple[float, ...]
    token_losses: tuple[float, ...]
    init_sha256: str
    weights_sha256: str
    record: DepthReuseRecord
    outcome: Outcome
    records: Mapping[str, Any]


@dataclass(frozen=True)
class DepthStudy:
    """The loaded experiments (see the module docstring); build them with ``python scripts/build_depth.py``."""

    directory: Path
    data: Mapping[str, Any]

    @property
    def passes(self) -> tuple[int, ...]:
        return tuple(self.data["passes"])

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(self.data["seeds"])

    @property
    def budget(self) -> int:
        return self.data["budget"]

    @property
    def packages(self) -> Mapping[str, Mapping[str, Any]]:
        """The declared packages of A, ``"passes-r"`` -> ModelConfig fields."""
        return MappingProxyType(self.data["packages"])

    @property
    def recipe(self) -> Mapping[str, Any]:
        """The common recipe of A, C and D (:func:`ftipbook.study.common_recipe` at :data:`BUDGET`)."""
        return MappingProxyType(self.data["recipe"])

    @property
    def item_ids(self) -> tuple[str, ...]:
        """The ``doc_id`` of each evaluation document, in item order."""
        return tuple(self.data["evaluation"]["doc_ids"])

    @property
    def build(self) -> Mapping[str, Any]:
        """Build facts (seconds, CPU seconds, CPU kind, threads, versions); times are machine-specific."""
        return MappingProxyType(self.data["build"])

    def run(self, passes: int, seed: int) -> PassesRun:
        """The run of A with ``passes`` passes at ``seed``."""
        _member("passes", passes, self.passes)
        _member("seed", seed, self.seeds)
        d = self.data["equal_parameters"][f"{passes}|{seed}"]
        outcome = Outcome.from_dict(d["outcome"])
        arch = d["records"]["architecture"]
        return PassesRun(passes, seed, ModelConfig(**arch["config"]), outcome.score,
                         np.asarray(outcome.item_scores, dtype=np.float64), arch["parameters"],
                         d["measured_train_flops"], tuple(d["records"]["training"]["losses"]),
                         depth_record(d["depth_record"]), outcome, MappingProxyType(d["records"]))

    def arm(self) -> ArmResult:
        """A replayed from the committed outcomes (no training): the
        :class:`~ftipbook.compare.arms.CommonRecipeArm` checks each stored record against the recipe."""
        return CommonRecipeArm(self.recipe, self.packages).run(
            lambda name, _package, _recipe, seed: self.run(int(name.split("-")[1]), seed).outcome, self.seeds)

    def surface(self) -> Surface:
        """Experiment B as arrays."""
        d = self.data["surface"]
        w, p, b = d["widths"], d["passes"], d["budgets"]
        point = d["points"]
        scores = np.array([[[point[f"{i}|{j}|{k}"]["score"] for k in b] for j in p] for i in w])
        params = np.array([[point[f"{i}|{j}|{b[0]}"]["parameters"] for j in p] for i in w], dtype=np.int64)
        flops = np.array([[[point[f"{i}|{j}|{k}"]["train_flops"] for k in b] for j in p] for i in w], dtype=np.int64)
        return Surface(tuple(w), tuple(p), tuple(b), tuple(d["tokens"]), scores, params, flops)

    def recirculation(self) -> Recirculation:
        """Experiment C as arrays."""
        d = self.data["recirculation"]
        r, s, p = self.passes, self.seeds, tuple(d["inference_passes"])
        items = np.array([[[d["item_scores"][f"{i}|{j}|{k}"] for k in p] for j in s] for i in r])
        flops = np.array([[d["prefill_flops"][f"{i}|{k}"] for k in p] for i in r], dtype=np.int64)
        records = {(i, k): depth_record(d["records"][f"{i}|{k}"]) for i in r for k in p}
        return Recirculation(r, s, p, items.mean(axis=-1), items, flops, MappingProxyType(records))

    @property
    def latent_weights(self) -> tuple[float, ...]:
        return tuple(self.data["latent"]["weights"])

    def latent_run(self, weight: float, seed: int) -> LatentRun:
        """The run of D with next-latent weight ``weight`` at ``seed``."""
        _member("weight", weight, self.latent_weights)
        _member("seed", seed, self.seeds)
        d = self.data["latent"]["runs"][f"{weight:g}|{seed}"]
        outcome = Outcome.from_dict(d["outcome"])
        return LatentRun(weight, seed, d["objective"], outcome.score, np.asarray(outcome.item_scores, dtype=np.float64),
                         tuple(d["latent_losses"]), tuple(d["records"]["training"]["losses"]), d["init_sha256"],
                         d["weights_sha256"], depth_record(d["depth_record"]), outcome, MappingProxyType(d["records"]))

    def checkpoint(self, name: str, *, interface_only: bool = False) -> DecoderLM:
        """A committed seed-0 model (files verified against the manifest), one of :data:`CHECKPOINTS`.

        ``"passes-r"``: the stack trained with ``r`` passes. ``"latent-w..."``: the
        :class:`~ftipbook.model.depth.NextLatentLM` trained with that latent weight, its head read
        from ``<name>.head.safetensors``; with ``interface_only=True`` the plain
        :class:`~ftipbook.model.transformer.DecoderLM` its artifact holds (the inference weights only).
        """
        _member("name", name, CHECKPOINTS)
        files = study.verified_files(self.directory, format=FORMAT, build_command=BUILD_COMMAND)
        artifact = study.verified_artifact(files, self.directory, name)
        if interface_only or not name.startswith("latent-"):
            return artifact.model()
        weight = float(name.removeprefix("latent-w"))
        model = NextLatentLM(artifact.cfg, weight)
        model.load_state_dict(artifact.state_dict, strict=False)
        head_name = f"checkpoints/{name}.head.safetensors"
        head = safetensors_record(files[head_name], self.directory / head_name)
        model.latent_head.load_state_dict(head)
        return model.eval()


def verify(directory: str | Path = DEPTH_DIR) -> dict[str, str]:
    """Check every file against ``MANIFEST.json`` (:func:`ftipbook.study.verify`); return the hashes."""
    return study.verify(directory, format=FORMAT, build_command=BUILD_COMMAND)


def load(directory: str | Path = DEPTH_DIR) -> DepthStudy:
    """The committed experiments, after checking every file against ``MANIFEST.json``."""
    directory = Path(directory)
    files = study.verified_files(directory, format=FORMAT, build_command=BUILD_COMMAND)
    return DepthStudy(directory, study.verified_json(files, directory, DATA_FILE, FORMAT))


# --- fitted summaries of the surface (ftip-00KR) -------------------------------------------------
#: The forms :func:`fit_surface` fits to the loss ``L = -score`` over parameters ``N``, passes ``P``, tokens ``D``.
SURFACE_FORMS = ("power", "log-linear")


@dataclass(frozen=True)
class SurfaceFit:
    """A fitted summary of a measured loss surface (ftip-00KR), valid over the range it was fitted on.

    ``form`` ``"power"``: ``L = exp(a) N^b P^c D^e`` (least squares on ``log L``); ``"log-linear"``:
    ``L = a + b log N + c log P + e log D`` (least squares on ``L``). ``coefficients`` are
    ``(a, b, c, e)``; ``residuals`` measured minus fitted loss at each grid point (nats, in the
    grid's ``(width, passes, budget)`` order), ``rms`` their root mean square; ``low`` / ``high``
    the measured range of ``(N, P, D)``. :meth:`predict` refuses a point outside that range
    unless asked to extrapolate.
    """

    form: str
    coefficients: tuple[float, float, float, float]
    residuals: np.ndarray
    rms: float
    low: tuple[float, float, float]
    high: tuple[float, float, float]

    def covers(self, n: float, p: float, d: float) -> bool:
        """Whether ``(N, P, D)`` lies inside the measured range, coordinate by coordinate."""
        return all(lo <= x <= hi for x, lo, hi in zip((n, p, d), self.low, self.high))

    def predict(self, n: float, p: float, d: float, *, extrapolate: bool = False) -> float:
        """The fitted loss at ``(N, P, D)``; outside the measured range only with ``extrapolate=True``,
        and then it is the form's value, not a measurement."""
        for name, x in (("n", n), ("p", p), ("d", d)):
            if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) or not 0 < x < np.inf:
                raise ValueError(f"{name}={x!r} must be a finite number > 0")
        if not extrapolate and not self.covers(n, p, d):
            raise ValueError(f"(n, p, d)=({n:g}, {p:g}, {d:g}) is outside the measured range {self.low} to "
                             f"{self.high}; pass extrapolate=True to evaluate the form there (a summary, not a law)")
        a, b, c, e = self.coefficients
        linear = a + b * np.log(n) + c * np.log(p) + e * np.log(d)
        return float(np.exp(linear) if self.form == "power" else linear)


def surface_design(surface: Surface) -> tuple[np.ndarray, np.ndarray]:
    """The design ``[N, P, D]`` (one row per grid point, ``(width, passes, budget)`` order) and the losses."""
    rows = [(float(surface.parameters[i, j]), float(p), float(surface.tokens[k]))
            for i in range(len(surface.widths)) for j, p in enumerate(surface.passes)
            for k in range(len(surface.budgets))]
    return np.array(rows), -surface.scores.reshape(-1)


def fit_surface(surface: Surface, form: str) -> SurfaceFit:
    """Fit ``form`` (one of :data:`SURFACE_FORMS`) to the losses of ``surface`` by least squares (ftip-00KR)."""
    if not isinstance(surface, Surface):
        raise TypeError(f"surface must be a depth_study.Surface, got {type(surface).__name__}")
    if form not in SURFACE_FORMS:
        raise ValueError(f"form={form!r} is not one of {SURFACE_FORMS}")
    x, y = surface_design(surface)
    if not (y > 0).all():
        raise ValueError("every loss must be > 0 (a mean negative log-likelihood)")
    design = np.column_stack([np.ones(len(x)), np.log(x[:, 0]), np.log(x[:, 1]), np.log(x[:, 2])])
    target = np.log(y) if form == "power" else y
    coef = np.linalg.lstsq(design, target, rcond=None)[0]
    fitted = np.exp(design @ coef) if form == "power" else design @ coef
    residuals = y - fitted
    return SurfaceFit(form, tuple(float(v) for v in coef), residuals, float(np.sqrt(np.mean(residuals ** 2))),
                      tuple(float(v) for v in x.min(axis=0)), tuple(float(v) for v in x.max(axis=0)))


# --- building ------------------------------------------------------------------------------------
@dataclass
class _Trained:
    outcome: Outcome
    captured: Mapping[str, Any]
    model: DecoderLM


class _Builder:
    """Trains each (width, passes, budget, seed) once with one :class:`ftipbook.study.StudyRunner`."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.models: list[DecoderLM] = []
        save = tuple((f"passes-{p}", BUDGET, 0) for p in PASSES)
        self.runner = study.StudyRunner(None, save, log, model_factory=self._factory)
        self.trained: dict[tuple[int, int, int, int], _Trained] = {}

    def _factory(self, cfg: ModelConfig, *, seed: int) -> DecoderLM:
        model = build_model(cfg, seed=seed)
        self.models.append(model)
        return model

    def __call__(self, name: str, pkg: Mapping[str, Any], recipe: Mapping[str, Any], seed: int) -> Outcome:
        budget = recipe["budget_steps"]
        key = (pkg["d_model"], pkg["n_loops"], budget, seed)
        if key not in self.trained:
            outcome = self.runner(name, pkg, recipe, seed)
            captured = self.runner.captured[name, budget, seed, recipe["optimizer"]["lr"], "evaluation"]
            self.trained[key] = _Trained(outcome, captured, self.models.pop())
        return self.trained[key].outcome


def _latent_run(files: dict[str, bytes], weight: float, seed: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Train and record one run of D; the seed-0 run's checkpoint and head go into ``files``."""
    name = f"latent-w{weight:g}"
    latent: list[float] = []
    built: list[tuple[NextLatentLM, str]] = []

    def factory(cfg: ModelConfig, *, seed: int) -> NextLatentLM:
        model = next_latent_model(cfg, weight, seed=seed)

        def keep(module: torch.nn.Module, _args, _out) -> None:
            # the trained model only: the cost measurements run on deep copies of it
            if module is model and module.latent_loss is not None:
                latent.append(round(float(module.latent_loss), 6))

        model.register_forward_hook(keep)
        built.append((model, weights_sha256(model.decoder_state_dict())))
        return model

    recipe = study.common_recipe(BUDGET)
    runner = study.StudyRunner(None, ((name, BUDGET, 0),), log, model_factory=factory)
    outcome = runner(name, package(), recipe, seed)
    (model, init), = built
    if len(latent) != (BUDGET if weight > 0 else 0):
        raise RuntimeError(f"{name} seed {seed}: {len(latent)} latent losses logged for {BUDGET} steps")
    if seed == 0:
        head = {k: v.detach().contiguous() for k, v in model.latent_head.state_dict().items()}
        files.update(study.checkpoint_files(runner.artifacts))
        files[f"checkpoints/{name}.head.safetensors"] = save(head)
    captured = runner.captured[name, BUDGET, seed, recipe["optimizer"]["lr"], "evaluation"]
    return {"weight": weight, "seed": seed, "objective": model.objective, "outcome": outcome.to_dict(),
            "records": captured["records"], "latent_losses": latent, "init_sha256": init,
            "weights_sha256": weights_sha256(model.decoder_state_dict()),
            "depth_record": capture_record(model).to_dict()}


def build(directory: str | Path = DEPTH_DIR, log: Callable[[str], None] = print) -> dict:
    """Run every experiment into ``directory`` (deterministic, one CPU thread) and write it with its manifest."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    wall, cpu = time.perf_counter(), time.process_time()
    with zoo.deterministic_cpu():
        recipe = study.common_recipe(BUDGET)
        builder = _Builder(log)
        packages = {f"passes-{p}": package(64, p) for p in PASSES}
        arm = CommonRecipeArm(recipe, packages).run(builder, SEEDS)
        if not arm.common:
            raise RuntimeError(f"runs deviate from the common recipe: {[d.name for d in arm.deviations]}")
        equal = {}
        for p in PASSES:
            for s in SEEDS:
                t = builder.trained[64, p, BUDGET, s]
                equal[f"{p}|{s}"] = {"outcome": t.outcome.to_dict(), "records": t.captured["records"],
                                     "measured_train_flops": t.captured["measured_train_flops"],
                                     "measured_decode_flops": t.captured["measured_decode_flops"],
                                     "depth_record": capture_record(t.model).to_dict()}
        points = {}
        for budget in SURFACE_BUDGETS:
            grid = {f"w{w}-passes-{p}": package(w, p) for w in SURFACE_WIDTHS for p in PASSES}
            result = CommonRecipeArm(study.common_recipe(budget), grid).run(builder, (SURFACE_SEED,))
            if not result.common:
                raise RuntimeError(f"surface runs deviate from the recipe: {[d.name for d in result.deviations]}")
            for w in SURFACE_WIDTHS:
                for p in PASSES:
                    t = builder.trained[w, p, budget, SURFACE_SEED]
                    points[f"{w}|{p}|{budget}"] = {
                        "score": t.outcome.score, "parameters": t.captured["records"]["architecture"]["parameters"],
                        "train_flops": t.captured["measured_train_flops"],
                        "declared_train_flops": t.outcome.cost.values["train_flops"]}
        tokens = [b * recipe["batch_size"] * recipe["seq_len"] for b in SURFACE_BUDGETS]
        items, flops, records = {}, {}, {}
        for r in PASSES:
            for s in SEEDS:
                model = builder.trained[64, r, BUDGET, s].model
                for p in INFERENCE_PASSES:
                    view = with_passes(model, p)
                    items[f"{r}|{s}|{p}"] = study.document_scores(view, study.evaluation_documents()).tolist()
                    if s == 0:
                        flops[f"{r}|{p}"] = prefill_flops(view)
                        records[f"{r}|{p}"] = capture_record(view).to_dict()
            log(f"recirculation of passes-{r}: scored at {list(INFERENCE_PASSES)} passes")
        files: dict[str, bytes] = {}
        latent = {f"{w:g}|{s}": _latent_run(files, w, s, log) for w in LATENT_WEIGHTS for s in SEEDS}
    evaluation = study.evaluation_documents()
    data = {
        "format": FORMAT, "passes": list(PASSES), "seeds": list(SEEDS), "budget": BUDGET, "stack": dict(STACK),
        "packages": packages, "recipe": recipe, "equal_parameters": equal,
        "surface": {"widths": list(SURFACE_WIDTHS), "passes": list(PASSES), "budgets": list(SURFACE_BUDGETS),
                    "seed": SURFACE_SEED, "tokens": tokens, "points": points},
        "recirculation": {"inference_passes": list(INFERENCE_PASSES), "item_scores": items, "prefill_flops": flops,
                          "prompt_len": PROMPT_LEN, "records": records},
        "latent": {"weights": list(LATENT_WEIGHTS), "runs": latent},
        "record_decode": {"prompt_len": PROMPT_LEN, "new_tokens": NEW_TOKENS, "repeats": RECORD_REPEATS,
                          "machine_fields": list(DepthReuseRecord.MACHINE_FIELDS)},
        "evaluation": {"doc_ids": [d.doc_id for d in evaluation], "sources": [d.source for d in evaluation]},
        "build": {"seconds": round(time.perf_counter() - wall, 1), "cpu_seconds": round(time.process_time() - cpu, 1),
                  "threads": 1, "deterministic": True, "dtype": "float32", "device": "cpu", "cpu": cpu_kind(),
                  "versions": versions(), "logical_cores": os.cpu_count()},
    }
    files.update(study.build_files(data, builder.runner.artifacts, DATA_FILE))
    write_manifest_set(directory, files, FORMAT)  # one crash-safe set, MANIFEST.json last
    return data


# --- checking a rebuild --------------------------------------------------------------------------
@dataclass(frozen=True)
class RebuildReport:
    """How a rebuild compares with the committed experiments: ``count_mismatches`` names every count,
    configuration or initial hash that differs (these must agree on any CPU); ``score_diffs`` maps each
    score's key to rebuilt minus committed; ``identical`` whether every score and trained-weights hash
    is bit-for-bit equal (expected on the CPU kind of the committed build only)."""

    count_mismatches: tuple[str, ...]
    score_diffs: Mapping[str, float]
    identical: bool

    @property
    def max_score_diff(self) -> float:
        return max(abs(v) for v in self.score_diffs.values())


def _scores(s: DepthStudy) -> dict[str, float]:
    out = {f"A passes-{p} seed {k}": s.run(p, k).score for p in s.passes for k in s.seeds}
    surf = s.surface()
    out.update({f"B w{w} passes-{p} budget {b}": float(surf.scores[i, j, k]) for i, w in enumerate(surf.widths)
                for j, p in enumerate(surf.passes) for k, b in enumerate(surf.budgets)})
    rec = s.recirculation()
    out.update({f"C passes-{r} seed {k} at {p}": float(rec.scores[i, j, m]) for i, r in enumerate(rec.trained_passes)
                for j, k in enumerate(rec.seeds) for m, p in enumerate(rec.inference_passes)})
    out.update({f"D w{w:g} seed {k}": s.latent_run(w, k).score for w in s.latent_weights for k in s.seeds})
    return out


def _counts(s: DepthStudy) -> dict[str, Any]:
    hidden = set(DepthReuseRecord.MACHINE_FIELDS) | {"weights_sha256"}

    def rec(r: DepthReuseRecord) -> dict[str, Any]:
        return {k: v for k, v in r.to_dict().items() if k not in hidden}

    out: dict[str, Any] = {"packages": dict(s.packages), "recipe": dict(s.recipe), "items": s.item_ids}
    for p in s.passes:
        for k in s.seeds:
            run = s.run(p, k)
            out[f"A {p}|{k}"] = (run.parameters, run.measured_train_flops, rec(run.record))
    surf = s.surface()
    out["B"] = (surf.parameters.tolist(), surf.train_flops.tolist(), surf.tokens)
    rc = s.recirculation()
    out["C"] = (rc.prefill_flops.tolist(), {f"{i}|{j}": rec(r) for (i, j), r in rc.records.items()})
    for w in s.latent_weights:
        for k in s.seeds:
            run = s.latent_run(w, k)
            out[f"D {w:g}|{k}"] = (run.objective, run.init_sha256, len(run.latent_losses), rec(run.record))
    return out


def rebuild_report(rebuilt: str | Path, committed: str | Path = DEPTH_DIR) -> RebuildReport:
    """Compare the experiments in ``rebuilt`` with those in ``committed`` (both verified first)."""
    old, new = load(committed), load(rebuilt)
    a, b = _counts(old), _counts(new)
    mismatches = tuple(k for k in a if json.dumps(a[k], sort_keys=True, default=str)
                       != json.dumps(b.get(k), sort_keys=True, default=str))
    sa, sb = _scores(old), _scores(new)
    diffs = MappingProxyType({k: sb[k] - sa[k] for k in sa})
    hashes = all(old.run(p, k).record.weights_sha256 == new.run(p, k).record.weights_sha256
                 for p in old.passes for k in old.seeds) and all(
        old.latent_run(w, k).weights_sha256 == new.latent_run(w, k).weights_sha256
        for w in old.latent_weights for k in old.seeds)
    return RebuildReport(mismatches, diffs, hashes and all(v == 0 for v in diffs.values()))


__all__ = ["DEPTH_DIR", "FORMAT", "STACK", "PASSES", "SEEDS", "BUDGET", "SURFACE_WIDTHS", "SURFACE_BUDGETS",
           "SURFACE_SEED", "INFERENCE_PASSES", "LATENT_WEIGHTS", "PROMPT_LEN", "NEW_TOKENS", "CHECKPOINTS",
           "package", "record_prompt", "capture_record", "prefill_flops", "depth_record", "PassesRun", "Surface",
           "Recirculation", "LatentRun", "DepthStudy", "SURFACE_FORMS", "SurfaceFit",
           "surface_design", "fit_surface", "verify", "load", "build", "RebuildReport", "rebuild_report"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
