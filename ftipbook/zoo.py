"""The checkpoint zoo: the small trained models that later chapters load instead of training.

Every model is a base-model artifact (:mod:`ftipbook.artifact`, ftip-001K) built by one
deterministic script, ``python scripts/build_zoo.py``, from the specifications in :data:`~ftipbook.zoo.RUNS`
and committed under ``ftipbook/_zoo/<name>/``. ``_zoo/MANIFEST.json`` records, for every entry,
the SHA-256 of its files, its runtime hash, configuration, seeds, training configuration, the
per-step training losses and the evaluations made when it was saved. :func:`load` verifies the
files against the manifest and refuses a mismatch.

The runs (one run may save several entries, ``name@step``):

* ``base-mha``: 2-layer, width-64 MHA decoder (RoPE, pre-RMSNorm, SwiGLU) pretrained on the
  toy mixture with Muon on hidden matrices and AdamW elsewhere;
* ``sft-elicit``, ``sft-acquire``, ``sft-memorize``: answer-only fine-tunes of ``base-mha`` on
  2-digit additions, on fresh 3-digit additions, and on the protected 3-digit items themselves;
* ``hybrid-kda@{50,100,200,400}`` (layers ``KKKM``: three KDA layers per MLA layer, MLA with
  NoPE, as in Kimi Linear) and ``full-mla@{...}`` (four MLA layers with decoupled RoPE), one
  common recipe: same data, order, seeds, optimizer and schedule;
* ``looped-r1``, ``looped-r2``, ``looped-r3``: one shared block applied ``r`` times;
* ``modadd-twin`` and ``modadd-twin-rotated``: a 2-layer, 4-head decoder with learned positions
  on addition modulo 23, and its function-equivalent twin (every attention head's ``W^Q, W^K``
  rotated by an orthogonal matrix) trained with the same Adam run; the manifest logs the
  per-head invariant ``W^Q_h^T W^K_h`` distance between the two along training.

Evaluation sets are protected collections (:class:`~ftipbook.data.corpus.BenchmarkSource`,
:func:`benchmark`): ``add2-eval`` (2-digit additions), ``add3-heldout`` (3-digit additions, the
transfer set ``E+``) and ``add3-fresh`` (further 3-digit additions disjoint from ``add3-heldout``).
No training corpus contains their texts, except ``sft-memorize``, which is trained on
``add3-heldout`` on purpose.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import torch

from ftipbook.artifact import WEIGHTS_FILE, ModelArtifact, artifact_files, artifact_from_files, versions
from ftipbook.atomic import FileSet, read_file_set, sha256, write_file_set
from ftipbook.data.corpus import ArithmeticSource, BenchmarkSource, Document, Excluding, ModularAdditionSource
from ftipbook.data.mixture import toy_mixture
from ftipbook.file_records import json_record, read_safetensors
from ftipbook.model.config import ModelConfig
from ftipbook.model.transformer import DecoderLM, build_model
from ftipbook.optim.gauge import attention_gauge, random_orthogonal
from ftipbook.runtime import cpu_kind
from ftipbook.tokenizer import ByteLevelBPE
from ftipbook.train import (RunRandomness, TrainConfig, Trainer, answer_accuracy, batch_stream, build_optimizer,
                            evaluate, fixed_batches, train_tokenizer, trainer_provenance)

ZOO_DIR = Path(__file__).resolve().parent / "_zoo"
MANIFEST_FILE = "MANIFEST.json"
FORMAT = "ftipbook.zoo/1"
FILES = ("artifact.json", "weights.safetensors")

# --- the declared data ---------------------------------------------------------------------------
#: Documents of the pretraining corpus (drawn from the toy mixture, benchmark texts removed).
PRETRAIN_DOCS = 24_000
#: The first this many pretraining documents train the tokenizer.
TOKENIZER_DOCS = 4_000
VOCAB_SIZE = 512
SEQ_LEN = 64
#: Documents of the validation draw, and the batches of 16 x SEQ_LEN tokens they are packed into.
VALID_DOCS, VALID_BATCHES = 800, 8
#: Seeds of the document draws (data content; the order of use is ``RunRandomness.data_order``).
CORPUS_SEED, VALID_SEED, SFT_SEED = 1, 2, 3
#: The size of each fine-tuning corpus, in documents.
SFT_DOCS = 20_000
MODADD_MODULUS, MODADD_TRAIN_FRACTION = 23, 0.8

#: The protected evaluation collections, ``name -> (source, items, seed)``; built by :func:`benchmark`.
BENCHMARKS: dict[str, tuple[Callable[[], object], int, int]] = {
    "add2-eval": (lambda: ArithmeticSource(digits=2), 500, 11),
    "add3-heldout": (lambda: ArithmeticSource(digits=3), 500, 12),
    "add3-fresh": (lambda: Excluding(ArithmeticSource(digits=3), benchmark("add3-heldout")), 500, 13),
}


@cache
def benchmark(name: str) -> BenchmarkSource:
    """The protected evaluation collection ``name`` (one of :data:`BENCHMARKS`)."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; available: {sorted(BENCHMARKS)}")
    source, n, seed = BENCHMARKS[name]
    return BenchmarkSource.from_source(name, source(), n, seed)


def _protected(doc: Document) -> bool:
    return any(doc in benchmark(name) for name in BENCHMARKS)


@cache
def pretraining_documents() -> tuple[Document, ...]:
    """The pretraining corpus: ``PRETRAIN_DOCS`` toy-mixture draws, without any benchmark text."""
    return tuple(d for d in toy_mixture().documents(PRETRAIN_DOCS, CORPUS_SEED) if not _protected(d))


@cache
def validation_documents() -> tuple[Document, ...]:
    """An independent draw of ``VALID_DOCS`` toy-mixture documents for the validation NLL.

    Benchmark texts are removed. The prose source is finite (one document per dictionary
    entry), so its entries recur between this draw and the corpus; generated documents rarely do.
    """
    return tuple(d for d in toy_mixture().documents(VALID_DOCS, VALID_SEED) if not _protected(d))


@cache
def tokenizer() -> ByteLevelBPE:
    """The zoo tokenizer: digit-split byte-level BPE with ``VOCAB_SIZE`` ids, trained on the corpus head."""
    return train_tokenizer(pretraining_documents()[:TOKENIZER_DOCS], VOCAB_SIZE)


def _modadd_split() -> tuple[list[Document], list[Document]]:
    docs = [d for d, _ in ModularAdditionSource(MODADD_MODULUS).support()]
    random.Random(SFT_SEED).shuffle(docs)
    cut = round(MODADD_TRAIN_FRACTION * len(docs))
    return docs[:cut], docs[cut:]


def sft_documents(recipe: str) -> list[Document]:
    """The fine-tuning documents of the data recipe ``recipe`` (``sft-elicit``, ``sft-acquire``,
    ``sft-memorize`` or ``modadd``), exactly as the zoo's runs train on them: what a procedure
    touched, for the transfer checks of ftip-0007 and ftip-0008."""
    if recipe == "sft-elicit":
        return Excluding(ArithmeticSource(digits=2), benchmark("add2-eval")).documents(SFT_DOCS, SFT_SEED)
    if recipe == "sft-acquire":
        fresh3 = Excluding(Excluding(ArithmeticSource(digits=3), benchmark("add3-heldout")), benchmark("add3-fresh"))
        return fresh3.documents(SFT_DOCS, SFT_SEED)
    if recipe == "sft-memorize":
        return list(benchmark("add3-heldout").items)
    if recipe == "modadd":
        return _modadd_split()[0]
    raise ValueError(f"recipe={recipe!r} is not a data recipe; allowed: sft-elicit, sft-acquire, sft-memorize, modadd")


# --- the runs --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ZooRun:
    """One training run of the zoo and the entries it saves.

    ``model`` holds :class:`~ftipbook.model.config.ModelConfig` fields (``vocab_size`` comes from
    the tokenizer); ``data`` names the recipe (``"pretrain"``, ``"sft-elicit"``, ``"sft-acquire"``,
    ``"sft-memorize"`` or ``"modadd"``); ``parent`` is the entry a fine-tune starts from;
    ``save_at`` lists the steps saved as ``name@step`` (empty: only the end, as ``name``).
    """

    name: str
    data: str
    model: dict = field(default_factory=dict)
    train: TrainConfig = TrainConfig()
    randomness: RunRandomness = RunRandomness()
    parent: str | None = None
    save_at: tuple[int, ...] = ()
    description: str = ""

    def entries(self) -> list[tuple[str, int]]:
        """``(entry name, step)`` pairs this run saves."""
        if self.data == "modadd":
            return [(self.name, self.train.steps), (f"{self.name}-rotated", self.train.steps)]
        if not self.save_at:
            return [(self.name, self.train.steps)]
        return [(f"{self.name}@{s}", s) for s in self.save_at]


_BASE = dict(d_model=64, n_layers=2, n_heads=4, d_ff=176, max_seq_len=SEQ_LEN, pos="rope", norm="rmsnorm",
             ffn="swiglu")
_PRETRAIN = TrainConfig(steps=1500, batch_size=16, seq_len=SEQ_LEN, optimizer="muon_adamw", lr=3e-3,
                        weight_decay=0.1, schedule="warmup_cosine", warmup_steps=50, min_lr_ratio=0.1)
_SFT = TrainConfig(steps=1000, batch_size=16, seq_len=SEQ_LEN, optimizer="adamw", lr=1e-3, weight_decay=0.0,
                   schedule="warmup_cosine", warmup_steps=20, min_lr_ratio=0.1)
_COMMON = TrainConfig(steps=400, batch_size=8, seq_len=SEQ_LEN, optimizer="adamw", lr=3e-3, weight_decay=0.1,
                      schedule="warmup_cosine", warmup_steps=20, min_lr_ratio=0.1)
_LOOPED = dataclasses.replace(_COMMON, batch_size=16)
_MLA = dict(d_model=64, n_layers=4, n_heads=4, d_ff=176, max_seq_len=SEQ_LEN, pos="none", kv_lora_rank=32)

#: The runs of the zoo, in build order (parents first).
#:
#: :meta hide-value:
RUNS: tuple[ZooRun, ...] = (
    ZooRun("base-mha", "pretrain", _BASE, _PRETRAIN, RunRandomness.from_seed(0),
           description="2-layer MHA base model pretrained on the toy mixture (Muon hidden matrices, AdamW rest)"),
    ZooRun("sft-elicit", "sft-elicit", {}, dataclasses.replace(_SFT, steps=300), RunRandomness.from_seed(1),
           parent="base-mha", description="answer-only fine-tune on 2-digit additions (add2-eval excluded)"),
    ZooRun("sft-acquire", "sft-acquire", {}, _SFT, RunRandomness.from_seed(2), parent="base-mha",
           description="answer-only fine-tune on fresh 3-digit additions (add3-heldout and add3-fresh excluded)"),
    ZooRun("sft-memorize", "sft-memorize", {}, _SFT, RunRandomness.from_seed(2), parent="base-mha",
           description="answer-only fine-tune on the add3-heldout items themselves (a contaminated control)"),
    ZooRun("hybrid-kda", "pretrain", {**_MLA, "layer_pattern": "KKKM", "mla_nope": True}, _COMMON,
           RunRandomness.from_seed(3), save_at=(50, 100, 200, 400),
           description="KKKM hybrid: 3 KDA layers per NoPE MLA layer (Kimi Linear's pattern), common recipe"),
    ZooRun("full-mla", "pretrain", {**_MLA, "layer_pattern": "M", "mla_nope": False, "rope_head_dim": 8}, _COMMON,
           RunRandomness.from_seed(3), save_at=(50, 100, 200, 400),
           description="4 MLA layers with decoupled RoPE, the hybrid's common recipe, data order and seeds"),
    *(ZooRun(f"looped-r{r}", "pretrain", {**_BASE, "n_layers": 1, "n_loops": r}, _LOOPED, RunRandomness.from_seed(4),
             description=f"one shared MHA block applied {r} time(s), common recipe") for r in (1, 2, 3)),
    ZooRun("modadd-twin", "modadd",
           dict(d_model=64, n_layers=2, n_heads=4, d_ff=176, max_seq_len=16, pos="learned"),
           TrainConfig(steps=300, batch_size=32, seq_len=16, optimizer="adam", lr=1e-3, schedule="constant",
                       grad_clip=None),
           RunRandomness.from_seed(5),
           description=f"addition mod {MODADD_MODULUS}, 2 layers, 4 heads, learned positions; "
                       f"the -rotated twin starts from per-head orthogonally rotated W^Q, W^K"),
)


def runs() -> dict[str, ZooRun]:
    """The runs by name, in build order (parents first)."""
    return {r.name: r for r in RUNS}


def names() -> list[str]:
    """Every entry name, in build order."""
    return [name for run in RUNS for name, _ in run.entries()]


def _run_of(name: str) -> tuple[ZooRun, int]:
    for run in RUNS:
        for entry, step in run.entries():
            if entry == name:
                return run, step
    raise ValueError(f"unknown zoo entry {name!r}; entries: {names()}")


# --- loading ---------------------------------------------------------------------------------------
def _manifest_of(files: FileSet, directory: Path) -> dict:
    path = directory / MANIFEST_FILE
    if isinstance(files[MANIFEST_FILE], Path):
        raise FileNotFoundError(f"{path} is missing: build the zoo with `python scripts/build_zoo.py`")
    data = json_record(files[MANIFEST_FILE], path)
    if data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        raise ValueError(f"{path} has format {data.get('format')!r}; expected {FORMAT!r} with an 'entries' map")
    return data


def manifest(directory: str | Path = ZOO_DIR) -> dict:
    """The parsed ``MANIFEST.json`` of ``directory`` (after an interrupted build, the previous one)."""
    return read_file_set(directory, (MANIFEST_FILE,), _manifest_of)


def _entry_of(name: str, files: FileSet, directory: Path) -> tuple[dict, dict[str, bytes]]:
    """The manifest record of entry ``name`` and the bytes of its files, each read once and checked
    against the record's SHA-256."""
    record = _manifest_of(files, directory)["entries"].get(name)
    if record is None:
        if (directory / name).is_dir():
            raise ValueError(f"{directory / name} exists but {directory / MANIFEST_FILE} does not list it (the manifest "
                             "is damaged, or a build was interrupted): rebuild with `python scripts/build_zoo.py`")
        raise FileNotFoundError(f"zoo entry {name!r} is not built in {directory}: run `python scripts/build_zoo.py`")
    listed = record.get("files") if isinstance(record, dict) else None
    if not isinstance(listed, dict) or set(listed) != set(FILES) or not all(isinstance(v, str) for v in listed.values()) \
            or not isinstance(record.get("runtime_hash"), str):
        raise ValueError(f"{directory / MANIFEST_FILE}: the record of {name!r} does not hold the SHA-256 of {FILES} "
                         "and a runtime hash; the manifest is damaged")
    out = {}
    for fname, expected in listed.items():
        data = files[f"{name}/{fname}"]  # checks that the name stays inside the zoo
        path = directory / name / fname
        if isinstance(data, Path):
            raise FileNotFoundError(f"{path} is missing: rebuild with `python scripts/build_zoo.py`")
        if sha256(data) != expected:
            raise ValueError(
                f"{path} has SHA-256 {sha256(data)[:16]}..., but MANIFEST.json records {expected[:16]}...: the file "
                f"was changed or damaged; rebuild with `python scripts/build_zoo.py`"
            )
        out[fname] = data
    return record, out


def _verified_entry(name: str, directory: str | Path) -> tuple[dict, dict[str, bytes]]:
    _run_of(name)
    return read_file_set(directory, (MANIFEST_FILE,), lambda files, d: _entry_of(name, files, d))


def verify(name: str, directory: str | Path = ZOO_DIR) -> dict:
    """Check the files of entry ``name`` against the manifest; return its manifest record."""
    return _verified_entry(name, directory)[0]


def _load_verified(name: str, files: FileSet, directory: Path) -> ModelArtifact:
    record, data = _entry_of(name, files, directory)
    artifact = artifact_from_files(data, directory / name)
    if artifact.runtime_hash() != record["runtime_hash"]:
        raise ValueError(f"zoo entry {name!r}: runtime hash differs from MANIFEST.json")
    return artifact


def load(name: str, directory: str | Path = ZOO_DIR) -> ModelArtifact:
    """The artifact of zoo entry ``name``, parsed from the very bytes verified against the manifest."""
    _run_of(name)
    return read_file_set(directory, (MANIFEST_FILE,), lambda files, d: _load_verified(name, files, d))


def load_model(name: str, directory: str | Path = ZOO_DIR, device: torch.device | str | None = None) -> DecoderLM:
    """``load(name).model(device)``: the verified entry as an eval-mode ``DecoderLM``."""
    return load(name, directory).model(device)


# --- building --------------------------------------------------------------------------------------
@contextlib.contextmanager
def deterministic_cpu() -> Iterator[None]:
    """One thread and deterministic kernels while building (restored afterwards)."""
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(det)
        torch.set_num_threads(threads)


def _data_record(run: ZooRun, tok: ByteLevelBPE) -> dict:
    record = {"recipe": run.data, "tokenizer_sha256": tok.sha256(), "excluded_benchmarks": sorted(BENCHMARKS)}
    if run.data == "pretrain":
        record.update(mixture=toy_mixture().to_dict(), documents=len(pretraining_documents()),
                      draws=PRETRAIN_DOCS, corpus_seed=CORPUS_SEED)
    elif run.data == "modadd":
        record.update(modulus=MODADD_MODULUS, train_fraction=MODADD_TRAIN_FRACTION, split_seed=SFT_SEED)
    else:
        record.update(documents=len(sft_documents(run.data)), seed=SFT_SEED, answers_only=True)
        if run.data == "sft-memorize":
            record["excluded_benchmarks"] = ["add2-eval", "add3-fresh"]
            record["trained_on_benchmark"] = "add3-heldout"
    return record


def _start_model(run: ZooRun, tok: ByteLevelBPE, directory: Path) -> tuple[DecoderLM, str | None]:
    if run.parent is not None:
        parent = load(run.parent, directory)
        return parent.model().train(), parent.runtime_hash()
    cfg = ModelConfig(vocab_size=tok.vocab_size, **run.model)
    return build_model(cfg, seed=run.randomness.init), None


def _trainer(run: ZooRun, model: DecoderLM, tok: ByteLevelBPE) -> Trainer:
    if run.data == "pretrain":
        stream = batch_stream(pretraining_documents(), tok, run.train, run.randomness)
    else:
        stream = batch_stream(sft_documents(run.data), tok, run.train, run.randomness, answers_only=True, split=False)
    return Trainer(model, build_optimizer(model, run.train), stream, run.train, randomness=run.randomness,
                   tokenizer=tok, data=_data_record(run, tok))


def rotated_twin(model: DecoderLM, seed: int) -> DecoderLM:
    """A copy of ``model`` whose every attention head has ``(W^Q_h, W^K_h) -> (A^T W^Q_h, A^T W^K_h)``
    for a Haar-random orthogonal ``A`` per head and layer (ftip-00BX); the function is unchanged."""
    twin = build_model(model.cfg)
    twin.load_state_dict(model.state_dict())
    for i, block in enumerate(twin.blocks):
        attn = block.mixer.fn
        mats = torch.stack([random_orthogonal(attn.head_dim, seed=seed + 100 * i + h) for h in range(attn.n_kv_heads)])
        block.mixer.fn = attention_gauge(attn, mats.to(attn.qkv.weight.dtype))
    return twin


def head_invariants(model: DecoderLM) -> torch.Tensor:
    """``M_h = W^Q_h^T W^K_h [d, d]`` for every layer and head, stacked ``[L, H, d, d]`` (float64)."""
    out = []
    for block in model.blocks:
        attn = block.mixer.fn
        w = attn.qkv.weight.detach().double().view(attn.n_heads + 2 * attn.n_kv_heads, attn.head_dim, -1)
        group = attn.n_heads // attn.n_kv_heads
        out.append(torch.stack([w[h].T @ w[attn.n_heads + h // group] for h in range(attn.n_heads)]))
    return torch.stack(out)


def invariant_distance(a: DecoderLM, b: DecoderLM) -> float:
    """Mean over layers and heads of ``||M_h(a) - M_h(b)||_F / ||M_h(a)||_F``."""
    ma, mb = head_invariants(a), head_invariants(b)
    return float(((ma - mb).flatten(2).norm(dim=-1) / ma.flatten(2).norm(dim=-1)).mean())


def _evaluate(run: ZooRun, model: DecoderLM, tok: ByteLevelBPE) -> dict:
    if run.data == "modadd":
        train, held = _modadd_split()
        return {"accuracy_train_pairs": answer_accuracy(model, tok, train),
                "accuracy_heldout_pairs": answer_accuracy(model, tok, held)}
    valid = fixed_batches(list(validation_documents()), tok, SEQ_LEN, 16, VALID_BATCHES)
    out = {"valid_nll": evaluate(model, valid, precision="fp32")}
    if run.data.startswith("sft") or run.name == "base-mha":
        for name in BENCHMARKS:
            out[f"accuracy_{name}"] = answer_accuracy(model, tok, benchmark(name).items)
    return out


def _save(run: ZooRun, entry: str, step: int, trainer: Trainer, parent_hash: str | None, evals: dict,
          files: dict[str, bytes], extra_log: dict | None = None) -> dict:
    """The manifest record of ``entry``; its artifact's files go into ``files`` (``entry/name -> bytes``)."""
    provenance = trainer_provenance(trainer)
    artifact = ModelArtifact.from_model(trainer.model, trainer.tokenizer, provenance=provenance)
    artifact = artifact.with_provenance(parent=parent_hash)
    data = artifact_files(artifact)
    files.update({f"{entry}/{f}": b for f, b in data.items()})
    return {
        "run": run.name, "step": step, "parent": run.parent, "description": run.description,
        "files": {f: sha256(data[f]) for f in FILES}, "bytes": sum(len(data[f]) for f in FILES),
        "runtime_hash": artifact.runtime_hash(), "model": dataclasses.asdict(trainer.model.cfg),
        "train": run.train.to_dict(), "seeds": run.randomness.to_dict(), "optimizer": provenance.optimizer["class"],
        "losses": [round(x, 6) for x in trainer.log.losses], "evals": {k: round(v, 6) for k, v in evals.items()},
        **({"log": extra_log} if extra_log else {}),
    }


def _build_run(run: ZooRun, tok: ByteLevelBPE, directory: Path, files: dict[str, bytes]) -> dict[str, dict]:
    """Train ``run`` (its parent loaded from ``directory``); the records of its entries, their files
    put into ``files``."""
    model, parent_hash = _start_model(run, tok, directory)
    trainer = _trainer(run, model, tok)
    if run.data == "modadd":
        twin = _trainer(run, rotated_twin(model, seed=run.randomness.optimizer % 2**31), tok)
        steps, distances = [0], [round(invariant_distance(model, twin.model), 12)]
        for until in range(10, run.train.steps + 1, 10):
            trainer.run(until)
            twin.run(until)
            steps.append(until)
            distances.append(round(invariant_distance(trainer.model, twin.model), 6))
        log = {"steps": steps, "head_invariant_distance": distances,
               "twin_losses": [round(x, 6) for x in twin.log.losses]}
        (a, step), (b, _) = run.entries()
        return {a: _save(run, a, step, trainer, parent_hash, _evaluate(run, trainer.model, tok), files, log),
                b: _save(run, b, step, twin, parent_hash, _evaluate(run, twin.model, tok), files, log)}
    out = {}
    for entry, step in run.entries():
        trainer.run(step)
        out[entry] = _save(run, entry, step, trainer, parent_hash, _evaluate(run, trainer.model, tok), files)
    return out


def build(directory: str | Path = ZOO_DIR, only: list[str] | None = None,
          log: Callable[[str], None] = print) -> dict:
    """Build the runs named in ``only`` (default: all) into ``directory`` and update its manifest.

    Deterministic on one CPU thread in float32; a run's parent must be built first (in this
    call or already in ``directory``). Returns the manifest.
    """
    directory = Path(directory)
    table = runs()
    selected = list(table) if only is None else list(only)
    unknown = [n for n in selected if n not in table]
    if unknown:
        raise ValueError(f"unknown zoo run(s) {unknown}; runs: {list(table)}")
    directory.mkdir(parents=True, exist_ok=True)
    data = manifest(directory) if (directory / MANIFEST_FILE).is_file() else {"format": FORMAT, "entries": {}}
    with deterministic_cpu():
        tok = tokenizer()
        data.update(versions=versions(), tokenizer_sha256=tok.sha256(),
                    build={"threads": 1, "deterministic": True, "dtype": "float32", "device": "cpu",
                           "cpu": cpu_kind()},
                    benchmarks={n: {"items": len(benchmark(n)), "seed": BENCHMARKS[n][2],
                                    "sha256": hashlib.sha256("\n".join(d.text for d in benchmark(n).items).encode())
                                    .hexdigest()} for n in BENCHMARKS})
        for name in table:
            if name not in selected:
                continue
            start = time.perf_counter()
            files: dict[str, bytes] = {}
            data["entries"].update(_build_run(table[name], tok, directory, files))
            log(f"{name}: {time.perf_counter() - start:.1f} s")
            write_entries(directory, files, data)
    return data


def write_entries(directory: str | Path, files: Mapping[str, bytes], data: Mapping) -> Path:
    """Write entry files (``entry/name -> bytes``) and the manifest ``data`` that records them as one
    crash-safe set (:func:`ftipbook.atomic.write_file_set`, ``MANIFEST.json`` last): a kill at any
    moment leaves the old zoo or the new one."""
    return write_file_set(directory, {**files, MANIFEST_FILE: (json.dumps(data, indent=1, sort_keys=True) + "\n")
                                      .encode()})


@dataclass(frozen=True)
class RebuildDistance:
    """How far a rebuilt zoo entry is from the committed one.

    A rebuild on the CPU kind the zoo was built on is byte-identical; on another kind (other
    vector width, other BLAS kernels) float32 training differs in the last bits and the
    difference grows over the run, so the weights and evaluations differ by a small amount.
    """

    entry: str
    identical: bool  # every file has the committed SHA-256
    max_weight_diff: float  # largest absolute weight difference over all tensors
    eval_diffs: dict[str, float]  # rebuilt minus committed, per recorded evaluation

    @property
    def valid_nll_diff(self) -> float | None:
        """Rebuilt minus committed validation NLL (nats per token), if the entry records one."""
        return self.eval_diffs.get("valid_nll")

    @property
    def max_accuracy_diff(self) -> float | None:
        """Largest absolute accuracy difference over the entry's recorded accuracies."""
        gaps = [abs(v) for k, v in self.eval_diffs.items() if k.startswith("accuracy")]
        return max(gaps) if gaps else None


def rebuild_distance(name: str, rebuilt: str | Path, committed: str | Path = ZOO_DIR) -> RebuildDistance:
    """Compare entry ``name`` as built in ``rebuilt`` with the one in ``committed``."""
    _run_of(name)
    old, new = manifest(committed)["entries"].get(name), manifest(rebuilt)["entries"].get(name)
    if old is None or new is None:
        raise FileNotFoundError(f"zoo entry {name!r} is missing from {committed if old is None else rebuilt}")
    if old["evals"].keys() != new["evals"].keys():
        raise ValueError(f"zoo entry {name!r}: the rebuild records other evaluations than the committed one")
    weights = [read_safetensors(Path(d) / name / WEIGHTS_FILE) for d in (committed, rebuilt)]
    if weights[0].keys() != weights[1].keys():
        raise ValueError(f"zoo entry {name!r}: the rebuilt weights hold other tensors than the committed ones")
    gap = max(float((weights[1][k].double() - weights[0][k].double()).abs().max()) for k in weights[0])
    diffs = {k: new["evals"][k] - old["evals"][k] for k in sorted(old["evals"])}
    return RebuildDistance(name, old["files"] == new["files"], gap, diffs)


def replay(name: str, steps: int, directory: str | Path = ZOO_DIR) -> list[float]:
    """Retrain the first ``steps`` updates of entry ``name``'s run from scratch (its parent from
    ``directory``) and return their losses, to compare with the manifest's logged ones."""
    run, _ = _run_of(name)
    if not isinstance(steps, int) or not 1 <= steps <= run.train.steps:
        raise ValueError(f"steps={steps!r} must be an int in [1, {run.train.steps}]")
    with deterministic_cpu():
        tok = tokenizer()
        model, _ = _start_model(run, tok, Path(directory))
        if name.endswith("-rotated"):
            model = rotated_twin(model, seed=run.randomness.optimizer % 2**31)
        return _trainer(run, model, tok).run(steps).losses
