"""The committed architecture study: three packages under one recipe, four budgets, three seeds (ftip-00JV to 00K0).

A tiny, fully recorded instance of the comparison protocol of the note's matched-compute section.
``python scripts/build_study.py`` trains it deterministically on one CPU thread and commits the
results under ``ftipbook/_study/``; :func:`load` reads them back after checking every file against
``MANIFEST.json``.

* **Packages** (declared before any run, :data:`PACKAGES`): ``full-attention`` (four softmax
  attention layers, RoPE), ``full-mla`` (four MLA layers, decoupled RoPE) and ``hybrid-kkka``
  (three Kimi Delta Attention layers per full-attention layer, NoPE), all of width 64, depth 4,
  4 heads, feed-forward width 176.
* **Common recipe** (:func:`common_recipe`): the zoo's pretraining corpus and tokenizer, AdamW with
  the zoo's common settings, a warmup-cosine schedule whose horizon is the budget, batches of
  8 x 64 tokens, no post-training, teacher-forced scoring. Each budget in ``BUDGETS`` (training
  steps) is a separate run at each seed in ``SEEDS``; seed ``s`` fixes the data order, window
  offsets and initialization, the same for every package (so runs pair across packages).
* **Evaluation**: :func:`evaluation_documents`, a fixed draw of validation documents; an entry's
  ``item_scores`` are minus each document's mean per-token NLL (its first ``SEQ_LEN`` predicted
  tokens) and ``score`` their mean (documents weighted equally).
* **Equal-tuning arm** (ftip-00JW): every package tries the learning rates :data:`TUNING_LRS` at
  ``TUNING_BUDGET`` steps, selected on :func:`tuning_documents`, a split disjoint from the
  evaluation documents; tuning cost is counted with one declared accounting.
* **Costs**: declared training FLOPs (:func:`ftipbook.compare.cost.training_flops`) and decode
  FLOPs per token at context 64, measured training wall time and peak live tensor bytes
  (:mod:`ftipbook.compare.measure`); the flop-counter count of the same training is kept as a
  cross-check (``measured_train_flops``).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ftipbook import _validate
from ftipbook import zoo
from ftipbook.artifact import (META_FILE, WEIGHTS_FILE, ModelArtifact, artifact_files, artifact_from_files,
                               save_artifact, versions)
from ftipbook.atomic import read_bounded, sha256
from ftipbook.compare.arms import ArmResult, CommonRecipeArm, EqualTuningArm, Outcome, TuningResult
from ftipbook.compare.cache_model import measure_state_bytes
from ftipbook.compare.cost import CostVector, Scalarization, training_flops
from ftipbook.compare.measure import (decode_flops_per_token, optimizer_state_rule, training_step_flops,
                                      training_step_peak_bytes)
from ftipbook.compare.records import describe_kernels, describe_variant
from ftipbook.data.corpus import Document
from ftipbook.file_records import json_record
from ftipbook.manifest_set import built_files, read_manifest_set, write_manifest_set
from ftipbook.data.windows import tokenize_documents
from ftipbook.model.accounting import flops_per_token, measured_param_count, param_count
from ftipbook.model.config import ModelConfig
from ftipbook.model.transformer import DecoderLM, build_model
from ftipbook.runtime import cpu_kind
from ftipbook.train import RunRandomness, TrainConfig, Trainer, batch_stream, build_optimizer, trainer_provenance

STUDY_DIR = Path(__file__).resolve().parent / "_study"
MANIFEST_FILE = "MANIFEST.json"
DATA_FILE = "STUDY.json"
FORMAT = "ftipbook.study/1"

ARCHITECTURES = ("full-attention", "full-mla", "hybrid-kkka")
BUDGETS = (50, 100, 200, 400)
SEEDS = (0, 1, 2)
SEQ_LEN = zoo.SEQ_LEN
BATCH_SIZE = 8
#: Sizes of the evaluation draw and of the disjoint tuning split, in documents.
EVAL_DOCS, TUNING_DOCS = 160, 160
#: The equal-tuning arm's predeclared trial set (peak learning rates), budget and seed.
TUNING_LRS = (3e-3, 1e-2, 3e-2)
TUNING_BUDGET, TUNING_SEED = 200, 0
#: The entries whose checkpoints are committed: seed 0 at the largest budget, one per package.
CHECKPOINT_BUDGET, CHECKPOINT_SEED = 400, 0
#: The declared accounting of the tuning cost, training FLOPs as the library counts them.
TUNING_ACCOUNTING = Scalarization({"train_flops": 1.0}, {"train_flops": "FLOP"}, "FLOP")

_WIDTH = dict(d_model=64, n_layers=4, n_heads=4, d_ff=176, max_seq_len=SEQ_LEN)
#: The declared architecture packages (ModelConfig fields besides ``vocab_size``).
PACKAGES: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "full-attention": MappingProxyType({**_WIDTH, "layer_pattern": "A", "pos": "rope"}),
    "full-mla": MappingProxyType({**_WIDTH, "layer_pattern": "M", "pos": "none", "kv_lora_rank": 32,
                                  "mla_nope": False, "rope_head_dim": 8}),
    "hybrid-kkka": MappingProxyType({**_WIDTH, "layer_pattern": "KKKA", "pos": "none"}),
})
_OPTIMIZER = dict(name="adamw", lr=3e-3, weight_decay=0.1, betas=[0.9, 0.95], eps=1e-8, grad_clip=1.0)
_SCHEDULE = dict(name="warmup_cosine", warmup_steps=20, min_lr_ratio=0.1)
_EVAL_RULE = (f"minus each document's mean per-token NLL (nats) over its first {SEQ_LEN} predicted tokens, "
              "scored alone from its start; score = mean over documents")


# --- the declared data ---------------------------------------------------------------------------
def _texts_sha256(docs: Sequence[Document]) -> str:
    h = hashlib.sha256()
    for d in docs:
        h.update(d.text.encode())
        h.update(b"\x00")
    return h.hexdigest()


@cache
def _splits() -> tuple[tuple[Document, ...], tuple[Document, ...]]:
    seen: set[str] = set()
    unique = []
    for d in zoo.validation_documents():
        if d.text not in seen:
            seen.add(d.text)
            unique.append(d)
    if len(unique) < EVAL_DOCS + TUNING_DOCS:
        raise RuntimeError(f"the validation draw has only {len(unique)} distinct documents")
    return tuple(unique[:EVAL_DOCS]), tuple(unique[EVAL_DOCS:EVAL_DOCS + TUNING_DOCS])


def evaluation_documents() -> tuple[Document, ...]:
    """The fixed evaluation draw: the first ``EVAL_DOCS`` distinct documents of ``zoo.validation_documents()``."""
    return _splits()[0]


def tuning_documents() -> tuple[Document, ...]:
    """The tuning split: the next ``TUNING_DOCS`` distinct documents, none with an evaluation document's text."""
    return _splits()[1]


def declared_packages() -> dict[str, dict[str, Any]]:
    """:data:`PACKAGES` with the tokenizer's ``vocab_size``, as plain dicts."""
    return {name: {**fields, "vocab_size": zoo.tokenizer().vocab_size} for name, fields in PACKAGES.items()}


def common_recipe(budget: int, *, lr: float = _OPTIMIZER["lr"], split: str = "evaluation") -> dict[str, Any]:
    """The recipe coordinates of one budget (ftip-00JV): data, optimizer, schedule (horizon = budget),
    batch, precision, post-training, inference, and the evaluation protocol and draw (``split``:
    ``"evaluation"`` or ``"tuning"``)."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= _SCHEDULE["warmup_steps"]:
        raise ValueError(f"budget={budget!r} must be an int of training steps above the warmup "
                         f"({_SCHEDULE['warmup_steps']})")
    if split not in ("evaluation", "tuning"):
        raise ValueError(f"split={split!r} must be 'evaluation' or 'tuning'")
    lr = _validate.real("lr", lr, low=0.0, low_open=True)
    docs = evaluation_documents() if split == "evaluation" else tuning_documents()
    corpus = zoo.pretraining_documents()
    return {
        "data": {"corpus": "zoo.pretraining_documents", "documents": len(corpus), "sha256": _texts_sha256(corpus),
                 "tokenizer_sha256": zoo.tokenizer().sha256()},
        "optimizer": {**_OPTIMIZER, "lr": lr},
        "schedule": {**_SCHEDULE, "horizon": budget},
        "budget_steps": budget, "batch_size": BATCH_SIZE, "seq_len": SEQ_LEN, "precision": "fp32",
        "post_training": "none", "inference": "teacher-forced scoring, no generation",
        "evaluation": {"split": split, "documents": len(docs), "sha256": _texts_sha256(docs), "rule": _EVAL_RULE},
    }


def _stopping_rule(steps: int) -> str:
    return f"fixed horizon: every trial trains its full {steps} steps, no early stopping"


def train_config(recipe: Mapping[str, Any]) -> TrainConfig:
    """The :class:`~ftipbook.train.config.TrainConfig` a recipe of :func:`common_recipe` declares."""
    opt, sched = recipe["optimizer"], recipe["schedule"]
    return TrainConfig(steps=recipe["budget_steps"], batch_size=recipe["batch_size"], seq_len=recipe["seq_len"],
                       optimizer=opt["name"], lr=opt["lr"], weight_decay=opt["weight_decay"],
                       betas=tuple(opt["betas"]), eps=opt["eps"], grad_clip=opt["grad_clip"], schedule=sched["name"],
                       warmup_steps=sched["warmup_steps"], min_lr_ratio=sched["min_lr_ratio"],
                       precision=recipe["precision"], progress=False)


# --- scoring -------------------------------------------------------------------------------------
@torch.no_grad()
def document_scores(model: DecoderLM, documents: Sequence[Document], *, seq_len: int = SEQ_LEN,
                    batch_size: int = 16) -> np.ndarray:
    """Minus each document's mean per-token NLL (nats), float64: the document is scored alone from its
    start (``eos`` appended), over its first ``seq_len`` predicted tokens."""
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be a DecoderLM, got {type(model).__name__}")
    seq_len, batch_size = _validate.integer("seq_len", seq_len, low=1), _validate.integer("batch_size", batch_size, low=1)
    tok = zoo.tokenizer()
    ids = [list(d.ids[:seq_len + 1]) for d in tokenize_documents(documents, tok)]
    if any(len(x) < 2 for x in ids):
        raise ValueError("every document needs at least one predicted token")
    was_training = model.training
    model.eval()
    out = []
    for start in range(0, len(ids), batch_size):
        rows = ids[start:start + batch_size]
        width = max(len(r) for r in rows) - 1
        tokens = torch.full((len(rows), width), tok.pad_id, dtype=torch.long)
        targets = torch.full((len(rows), width), -100, dtype=torch.long)
        for i, r in enumerate(rows):
            tokens[i, :len(r) - 1] = torch.tensor(r[:-1])
            targets[i, :len(r) - 1] = torch.tensor(r[1:])
        logits = model(tokens.to(next(model.parameters()).device)).double().cpu()
        nll = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100, reduction="none")
        nll = nll.view(len(rows), width)
        counts = (targets != -100).sum(dim=1)
        out.extend((-(nll.sum(dim=1) / counts)).tolist())
    model.train(was_training)
    return np.asarray(out, dtype=np.float64)


# --- the runner ----------------------------------------------------------------------------------
class _HashedStream:
    """The trainer's batch iterator, hashing every batch it hands out (tokens and loss mask)."""

    def __init__(self, stream) -> None:
        self.stream, self.sha = stream, hashlib.sha256()

    def __iter__(self) -> "_HashedStream":
        return self

    def __next__(self):
        batch = next(self.stream)
        self.sha.update(batch.tokens.numpy().tobytes())
        self.sha.update(batch.loss_mask.numpy().tobytes())
        return batch


@dataclass
class StudyRunner:
    """The study's runner for :mod:`ftipbook.compare.arms`: trains one package under one recipe with the
    project's :class:`~ftipbook.train.loop.Trainer`, scores it on the recipe's split, measures its costs.

    ``captured[(name, budget, seed, lr, split)]`` keeps, per run, the records, measured FLOPs and
    the evaluation-split scores; ``save`` names runs ``(name, budget, seed)`` whose trained model
    is kept in ``artifacts[name]`` (its inference weights, ``model.decoder_state_dict()``) and, when
    ``checkpoint_dir`` is set, saved under it; ``model_factory(cfg, seed=...)`` builds the model a run trains
    (default :func:`~ftipbook.model.transformer.build_model`).
    """

    checkpoint_dir: Path | None = None
    save: tuple[tuple[str, int, int], ...] = ()
    log: Callable[[str], None] = print
    captured: dict = dataclasses.field(default_factory=dict)
    model_factory: Callable[..., DecoderLM] = build_model
    artifacts: dict[str, ModelArtifact] = dataclasses.field(default_factory=dict)

    def __call__(self, name: str, package: Mapping[str, Any], recipe: Mapping[str, Any], seed: int) -> Outcome:
        cfg = ModelConfig(**package)
        tcfg = train_config(recipe)
        randomness = RunRandomness.from_seed(seed)
        tok = zoo.tokenizer()
        model = self.model_factory(cfg, seed=randomness.init)
        stream = batch_stream(zoo.pretraining_documents(), tok, tcfg, randomness)
        first = stream.batch(0)
        counted = training_step_flops(model, first)
        peak = training_step_peak_bytes(model, first, lambda m: build_optimizer(m, tcfg))
        hashed = _HashedStream(stream)
        trainer = Trainer(model, build_optimizer(model, tcfg), hashed, tcfg, randomness=randomness, tokenizer=tok,
                          data={"recipe": "pretrain", "tokenizer_sha256": tok.sha256()})
        wall, cpu = time.perf_counter(), time.process_time()
        trainer.run()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        split = recipe["evaluation"]["split"]
        docs = evaluation_documents() if split == "evaluation" else tuning_documents()
        items = document_scores(model, docs)
        eval_items = items if split == "evaluation" else document_scores(model, evaluation_documents())
        tokens = tcfg.steps * tcfg.batch_size * tcfg.seq_len
        cost = CostVector.standard(train_flops=training_flops(cfg, tokens, tcfg.seq_len),
                                   inference_flops=flops_per_token(cfg, SEQ_LEN, "decode"), wall_time=wall,
                                   memory=float(peak), context_length=SEQ_LEN)
        group = trainer.optimizer.param_groups[0]
        record = {
            "data": {"corpus": recipe["data"]["corpus"], "documents": len(zoo.pretraining_documents()),
                     "sha256": _texts_sha256(zoo.pretraining_documents()), "tokenizer_sha256": tok.sha256()},
            "optimizer": {"name": type(trainer.optimizer).__name__.lower(), "lr": group["initial_lr"],
                          "weight_decay": max(g["weight_decay"] for g in trainer.optimizer.param_groups),
                          "betas": list(group["betas"]), "eps": group["eps"], "grad_clip": trainer.cfg.grad_clip},
            "schedule": {"name": tcfg.schedule, "warmup_steps": trainer.schedule.warmup_steps,
                         "min_lr_ratio": trainer.schedule.final, "horizon": trainer.schedule.total_steps},
            "budget_steps": trainer.step, "batch_size": first.tokens.shape[0], "seq_len": first.tokens.shape[1],
            "precision": "fp32" if next(model.parameters()).dtype == torch.float32 else "other",
            "post_training": "none", "inference": recipe["inference"],
            "evaluation": {"split": split, "documents": len(docs), "sha256": _texts_sha256(docs), "rule": _EVAL_RULE},
            "package": dataclasses.asdict(model.cfg),
        }
        if "tuning_data" in recipe and split == "tuning":
            record["tuning_data"] = recipe["tuning_data"]
        if "stopping_rule" in recipe:
            record["stopping_rule"] = _stopping_rule(trainer.step)
        records = {
            "architecture": {"config": dataclasses.asdict(model.cfg), "variant": describe_variant(model.cfg),
                             "parameters": measured_param_count(model), "declared_parameters": param_count(cfg)},
            "optimizer": {"name": tcfg.optimizer,
                          "hyperparameters": {k: record["optimizer"][k]
                                              for k in ("lr", "weight_decay", "betas", "eps", "grad_clip")},
                          "state_rule": optimizer_state_rule(trainer.optimizer)},
            "systems": {"device": str(next(model.parameters()).device), "dtype": "float32",
                        "threads": torch.get_num_threads(),
                        "deterministic": torch.are_deterministic_algorithms_enabled(),
                        "versions": versions(), "cpu": cpu_kind(), "kernels": describe_kernels(model),
                        "cache_bytes_at_context": measure_state_bytes(model, SEQ_LEN),
                        "memory_method": "peak live tensor storages over one full training step (first batch, "
                                         "fresh optimizer), ftipbook.compare.measure.LiveTensorBytes"},
            "training": {"stream_sha256": hashed.sha.hexdigest(), "tokens": trainer.log.tokens,
                         "train_config": tcfg.to_dict(), "schedule": repr(trainer.schedule),
                         "horizon": trainer.schedule.total_steps, "seed": seed, "seeds": randomness.to_dict(),
                         "losses": [round(x, 6) for x in trainer.log.losses], "cpu_seconds": cpu},
        }
        budget, lr = recipe["budget_steps"], recipe["optimizer"]["lr"]
        self.captured[name, budget, seed, lr, split] = {
            "records": records, "measured_train_flops": counted.total * tcfg.steps,
            "measured_step_flops_by_op": dict(counted.by_op),
            "measured_decode_flops": decode_flops_per_token(model, SEQ_LEN).total,
            "evaluation_item_scores": eval_items.tolist(),
        }
        if (name, budget, seed) in self.save:
            artifact = ModelArtifact.from_model(model, tok, provenance=trainer_provenance(trainer),
                                                state_dict=model.decoder_state_dict())
            self.artifacts[name] = artifact
            if self.checkpoint_dir is not None:
                save_artifact(artifact, self.checkpoint_dir / name)
        self.log(f"{name:15s} budget {budget:3d} seed {seed} lr {lr:g} {split:10s}: score {items.mean():+.4f}, "
                 f"{wall:.1f} s")
        return Outcome(float(items.mean()), cost, tuple(items.tolist()), record)


# --- the committed study -------------------------------------------------------------------------
@dataclass(frozen=True)
class StudyEntry:
    """One run of the common-recipe arm: ``architecture`` at ``budget`` training steps and ``seed``.

    ``score`` and ``item_scores`` as in the module docstring; ``cost`` the standard cost vector
    (declared training and decode FLOPs, measured wall time and peak bytes, context 64, energy
    unknown); ``measured_train_flops`` the flop-counter count of one real training step times the
    steps (every step has the same shapes), with that step's count per operator in
    ``measured_step_flops_by_op``; ``measured_decode_flops`` the counted FLOPs of decoding token 64;
    ``records`` the captured ``architecture``, ``optimizer``, ``systems`` and ``training`` records;
    ``outcome`` the :class:`~ftipbook.compare.arms.Outcome` the arm received.
    """

    architecture: str
    budget: int
    seed: int
    config: ModelConfig
    score: float
    item_scores: np.ndarray
    cost: CostVector
    measured_train_flops: int
    measured_decode_flops: int
    measured_step_flops_by_op: Mapping[str, int]
    records: Mapping[str, Any]
    outcome: Outcome


def verified_files(directory: str | Path = STUDY_DIR, *, format: str = FORMAT,
                   build_command: str = "python scripts/build_study.py") -> dict[str, bytes]:
    """The bytes of every file of the study, each read once and checked against ``MANIFEST.json``
    (``ftipbook.manifest_set.read_manifest_set``; ValueError naming a changed, missing, unlisted or
    escaping file). ``format`` and ``build_command`` let another committed file set with the same
    layout (e.g. :mod:`ftipbook.depth_study`) be read the same way. Parse these buffers, not the files."""
    return read_manifest_set(directory, format, build_command)


def verify(directory: str | Path = STUDY_DIR, *, format: str = FORMAT,
           build_command: str = "python scripts/build_study.py") -> dict[str, str]:
    """Check every file of the study against ``MANIFEST.json`` (see :func:`verified_files`); return
    the manifest's file hashes."""
    return {name: sha256(data)
            for name, data in verified_files(directory, format=format, build_command=build_command).items()}


def verified_artifact(files: Mapping[str, bytes], directory: Path, name: str) -> ModelArtifact:
    """The artifact ``name`` (``checkpoints/<name>/``) in the verified buffers ``files`` of a build."""
    prefix = f"checkpoints/{name}/"
    return artifact_from_files({f: files[prefix + f] for f in (WEIGHTS_FILE, META_FILE)}, directory / prefix)


def verified_json(files: Mapping[str, bytes], directory: Path, name: str, format: str) -> dict:
    """The JSON object of the verified buffer ``files[name]``, refused unless its format is ``format``."""
    data = json_record(files[name], directory / name)
    if data.get("format") != format:
        raise ValueError(f"{directory / name} has format {data.get('format')!r}; expected {format!r}")
    return data


def _entry(d: Mapping[str, Any]) -> StudyEntry:
    outcome = Outcome.from_dict(d["outcome"])
    return StudyEntry(d["architecture"], d["budget"], d["seed"], ModelConfig(**d["records"]["architecture"]["config"]),
                      outcome.score, np.asarray(outcome.item_scores, dtype=np.float64), outcome.cost,
                      d["measured_train_flops"], d["measured_decode_flops"],
                      MappingProxyType(d["measured_step_flops_by_op"]), MappingProxyType(d["records"]), outcome)


@dataclass(frozen=True)
class Study:
    """The loaded study (see the module docstring); build it with ``python scripts/build_study.py``."""

    directory: Path
    data: Mapping[str, Any]

    @property
    def architectures(self) -> tuple[str, ...]:
        return tuple(self.data["architectures"])

    @property
    def budgets(self) -> tuple[int, ...]:
        return tuple(self.data["budgets"])

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(self.data["seeds"])

    @property
    def packages(self) -> Mapping[str, Mapping[str, Any]]:
        """Declared ModelConfig fields of each package."""
        return MappingProxyType(self.data["packages"])

    @property
    def recipe(self) -> Mapping[str, Any]:
        """The common recipe at the largest budget; :meth:`recipe_at` gives each budget's recipe."""
        return self.recipe_at(max(self.budgets))

    def recipe_at(self, budget: int) -> Mapping[str, Any]:
        """The common recipe of ``budget`` training steps (its schedule's horizon is the budget)."""
        if budget not in self.budgets:
            raise ValueError(f"budget={budget!r} is not one of the study's budgets {list(self.budgets)}")
        return MappingProxyType(self.data["recipes"][str(budget)])

    @property
    def item_sources(self) -> tuple[str, ...]:
        """The source (toy-mixture component) of each evaluation document, in item order."""
        return tuple(self.data["evaluation"]["sources"])

    @property
    def item_ids(self) -> tuple[str, ...]:
        """The ``doc_id`` of each evaluation document, in item order."""
        return tuple(self.data["evaluation"]["doc_ids"])

    @property
    def tuning_item_ids(self) -> tuple[str, ...]:
        """The ``doc_id`` of each tuning-split document."""
        return tuple(self.data["tuning_split"]["doc_ids"])

    @property
    def build(self) -> Mapping[str, Any]:
        """Build facts (seconds, CPU seconds, CPU kind, threads, versions)."""
        return MappingProxyType(self.data["build"])

    @property
    def tuning(self) -> TuningResult:
        """The equal-tuning arm's result (ftip-00JW), with trials, selected learning rate and tuning cost per package."""
        return TuningResult.from_dict(self.data["tuning"]["result"])

    @property
    def tuning_evaluation(self) -> Mapping[str, tuple[float, ...]]:
        """Each tuning trial's score on the *evaluation* documents, per package in trial order."""
        return MappingProxyType({p: tuple(v) for p, v in self.data["tuning"]["evaluation_scores"].items()})

    def entry(self, architecture: str, budget: int, seed: int) -> StudyEntry:
        """The run of ``architecture`` at ``budget`` steps and ``seed``."""
        key = f"{architecture}|{budget}|{seed}"
        if key not in self.data["entries"]:
            raise ValueError(f"no study entry ({architecture!r}, {budget!r}, {seed!r}); architectures "
                             f"{list(self.architectures)}, budgets {list(self.budgets)}, seeds {list(self.seeds)}")
        return _entry(self.data["entries"][key])

    def entries(self) -> list[StudyEntry]:
        """Every entry in (architecture, budget, seed) order."""
        return [self.entry(a, b, s) for a in self.architectures for b in self.budgets for s in self.seeds]

    def arm(self, budget: int) -> ArmResult:
        """The common-recipe arm of ``budget`` replayed from the committed outcomes (no training):
        :class:`~ftipbook.compare.arms.CommonRecipeArm` checks each stored record against the recipe."""
        recipe = self.recipe_at(budget)
        return CommonRecipeArm(recipe, self.packages).run(
            lambda name, package, _recipe, seed: self.entry(name, budget, seed).outcome, self.seeds)

    def tuning_arm(self) -> TuningResult:
        """The equal-tuning arm replayed from the committed trial outcomes (no training): the declared
        :class:`~ftipbook.compare.arms.EqualTuningArm` selects and tallies the tuning cost again."""
        t = self.tuning
        lrs = list(self.data["tuning"]["learning_rates"])

        def replay(name: str, _package: Mapping[str, Any], recipe: Mapping[str, Any], _seed: int) -> Outcome:
            return t.outcomes[name][lrs.index(recipe["optimizer"]["lr"])]

        arm = EqualTuningArm(t.trials, t.tuning_data, t.selection_rule, t.stopping_rule, t.accounting,
                             packages=self.packages)
        return arm.run(replay, t.seed)

    def checkpoint(self, architecture: str, device: torch.device | str | None = None) -> DecoderLM:
        """The trained seed-0, budget-400 model of ``architecture`` (files verified against the manifest)."""
        if architecture not in self.architectures:
            raise ValueError(f"architecture={architecture!r} is not one of {list(self.architectures)}")
        return verified_artifact(verified_files(self.directory), self.directory, architecture).model(device)


def load(directory: str | Path = STUDY_DIR) -> Study:
    """The committed study, after checking every file against ``MANIFEST.json``."""
    directory = Path(directory)
    return Study(directory, verified_json(verified_files(directory), directory, DATA_FILE, FORMAT))


# --- building ------------------------------------------------------------------------------------
def rerun_entry(architecture: str, budget: int, seed: int) -> Outcome:
    """Train and score one common-recipe entry again (one CPU thread), without writing anything."""
    if architecture not in PACKAGES or budget not in BUDGETS or seed not in SEEDS:
        raise ValueError(f"({architecture!r}, {budget!r}, {seed!r}) is not a study entry; architectures "
                         f"{list(PACKAGES)}, budgets {list(BUDGETS)}, seeds {list(SEEDS)}")
    with zoo.deterministic_cpu():
        return StudyRunner(log=lambda _: None)(architecture, declared_packages()[architecture],
                                               common_recipe(budget), seed)


def write_manifest(directory: str | Path, format: str = FORMAT) -> None:
    """Rewrite every file under ``directory`` with its ``MANIFEST.json`` (the SHA-256 of each) as one
    crash-safe set (``ftipbook.manifest_set.write_manifest_set``)."""
    directory = Path(directory)
    write_manifest_set(directory, {name: read_bounded(directory / name) for name in built_files(directory)}, format)


def checkpoint_files(artifacts: Mapping[str, ModelArtifact]) -> dict[str, bytes]:
    """The files of each artifact of a build, under ``checkpoints/<name>/``."""
    return {f"checkpoints/{name}/{f}": b for name, artifact in artifacts.items()
            for f, b in artifact_files(artifact).items()}


def build_files(data: Mapping[str, Any], artifacts: Mapping[str, ModelArtifact], data_file: str) -> dict[str, bytes]:
    """The files of a build: ``data_file`` (``data`` as sorted JSON) and :func:`checkpoint_files`."""
    return {data_file: (json.dumps(data, indent=1, sort_keys=True) + "\n").encode(), **checkpoint_files(artifacts)}


def write(directory: str | Path, data: Mapping[str, Any], artifacts: Mapping[str, ModelArtifact]) -> Path:
    """Write ``STUDY.json``, the checkpoints and ``MANIFEST.json`` as one crash-safe set (a kill at any
    moment leaves the old study or the new one)."""
    return write_manifest_set(directory, build_files(data, artifacts, DATA_FILE), FORMAT)


def build(directory: str | Path = STUDY_DIR, log: Callable[[str], None] = print) -> dict:
    """Run the whole study into ``directory`` (deterministic, one CPU thread) and write it with its manifest."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    wall, cpu = time.perf_counter(), time.process_time()
    with zoo.deterministic_cpu():
        evaluation, tuning = evaluation_documents(), tuning_documents()
        overlap = {d.text for d in evaluation} & {d.text for d in tuning}
        assert not overlap, f"the tuning split shares {len(overlap)} documents with the evaluation draw"
        packages = declared_packages()
        runner = StudyRunner(None,
                             tuple((a, CHECKPOINT_BUDGET, CHECKPOINT_SEED) for a in ARCHITECTURES), log)
        entries, recipes = {}, {}
        for budget in BUDGETS:
            recipes[str(budget)] = common_recipe(budget)
            result = CommonRecipeArm(recipes[str(budget)], packages).run(runner, SEEDS)
            assert result.common, f"runs deviate from the common recipe: {[d.name for d in result.deviations]}"
            for seed in SEEDS:
                streams = {runner.captured[a, budget, seed, _OPTIMIZER["lr"], "evaluation"]["records"]["training"]
                           ["stream_sha256"] for a in ARCHITECTURES}
                assert len(streams) == 1, f"budget {budget}, seed {seed}: packages saw different token streams"
            for (name, seed), outcome in result.outcomes.items():
                captured = runner.captured[name, budget, seed, _OPTIMIZER["lr"], "evaluation"]
                entries[f"{name}|{budget}|{seed}"] = {
                    "architecture": name, "budget": budget, "seed": seed, "outcome": outcome.to_dict(),
                    **{k: captured[k] for k in ("records", "measured_train_flops", "measured_step_flops_by_op",
                                                "measured_decode_flops")}}
        arm = EqualTuningArm({a: [common_recipe(TUNING_BUDGET, lr=lr, split="tuning") for lr in TUNING_LRS]
                              for a in ARCHITECTURES},
                             f"tuning split: {TUNING_DOCS} validation documents disjoint from the evaluation draw "
                             f"(sha256 {_texts_sha256(tuning)[:16]})",
                             "max_score", _stopping_rule(TUNING_BUDGET), TUNING_ACCOUNTING, packages=packages)
        tuned = arm.run(runner, TUNING_SEED)
        assert not tuned.deviations, [d.name for d in tuned.deviations]
        eval_scores = {a: [float(np.mean(runner.captured[a, TUNING_BUDGET, TUNING_SEED, lr, "tuning"]
                                         ["evaluation_item_scores"])) for lr in TUNING_LRS] for a in ARCHITECTURES}
    data = {
        "format": FORMAT, "architectures": list(ARCHITECTURES), "budgets": list(BUDGETS), "seeds": list(SEEDS),
        "packages": packages, "recipes": recipes, "entries": entries,
        "evaluation": {"doc_ids": [d.doc_id for d in evaluation], "sources": [d.source for d in evaluation],
                       "sha256": _texts_sha256(evaluation)},
        "tuning_split": {"doc_ids": [d.doc_id for d in tuning], "sources": [d.source for d in tuning],
                         "sha256": _texts_sha256(tuning)},
        "tuning": {"result": tuned.to_dict(), "learning_rates": list(TUNING_LRS), "budget": TUNING_BUDGET,
                   "evaluation_scores": eval_scores},
        "build": {"seconds": round(time.perf_counter() - wall, 1), "cpu_seconds": round(time.process_time() - cpu, 1),
                  "threads": 1, "deterministic": True, "dtype": "float32", "device": "cpu", "cpu": cpu_kind(),
                  "versions": versions(), "logical_cores": os.cpu_count()},
    }
    write(directory, data, runner.artifacts)
    return data


@dataclass(frozen=True)
class RebuildDistance:
    """How far a rebuilt entry is from the committed one: ``identical`` when its score and every item
    score are bit-for-bit equal; ``score_diff`` rebuilt minus committed; ``max_item_diff`` the
    largest absolute item-score difference."""

    key: str
    identical: bool
    score_diff: float
    max_item_diff: float


def rebuild_distances(rebuilt: str | Path, committed: str | Path = STUDY_DIR) -> list[RebuildDistance]:
    """Compare every entry of the study in ``rebuilt`` with the one in ``committed``."""
    old, new = load(committed).data["entries"], load(rebuilt).data["entries"]
    if set(old) != set(new):
        raise ValueError(f"the rebuilt study has other entries: {sorted(set(old) ^ set(new))}")
    out = []
    for key in old:
        a, b = old[key]["outcome"], new[key]["outcome"]
        diffs = [abs(x - y) for x, y in zip(b["item_scores"], a["item_scores"])]
        out.append(RebuildDistance(key, a["score"] == b["score"] and a["item_scores"] == b["item_scores"],
                                   b["score"] - a["score"], max(diffs)))
    return out


__all__ = ["STUDY_DIR", "ARCHITECTURES", "BUDGETS", "SEEDS", "EVAL_DOCS", "TUNING_DOCS", "TUNING_LRS",
           "TUNING_BUDGET", "TUNING_SEED", "TUNING_ACCOUNTING", "PACKAGES", "evaluation_documents",
           "tuning_documents", "declared_packages", "common_recipe", "train_config", "document_scores", "StudyRunner",
           "StudyEntry", "Study", "verified_files", "verify", "verified_artifact", "verified_json", "write_manifest",
           "checkpoint_files", "build_files", "write", "load", "rerun_entry", "build", "RebuildDistance", "rebuild_distances"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
