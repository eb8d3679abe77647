"""The committed JEPA-like model, its decoders and an autoregressive baseline (ftip-00KA, 00KB).

``python scripts/build_jepa.py`` trains, on one CPU thread and deterministically, two systems of
one encoder size on the zoo's pretraining corpus and tokenizer, with the same batches, steps,
optimizer and schedule (:data:`RECIPE`):

* ``jepa``: a :class:`~ftipbook.model.jepa.JEPA` (2-layer causal encoder of width 64, MLP
  predictor, EMA target encoder) trained on its latent objective only;
* ``ar``: a :class:`~ftipbook.model.transformer.DecoderLM` with the encoder's configuration,
  trained on next-token cross-entropy.

After training, the JEPA's declared decoders are built: ``readout``, a
:class:`~ftipbook.model.jepa.LinearReadout` fitted on the frozen predicted latents of the first
``READOUT_BATCHES`` training batches (tokens the encoder already saw), and ``tied-embedding``,
a :class:`~ftipbook.model.jepa.TiedEmbeddingReadout` of the encoder's own token embedding (the
AR convention). A unigram law of those batches' tokens is kept as the representation-free
reference. Every system is scored by one :class:`~ftipbook.compare.jepa_interface.NextTokenNLL`
on :func:`ftipbook.study.evaluation_documents`.

The results go to ``ftipbook/_jepa/``: ``jepa.safetensors``, ``readout.safetensors``,
``ar.safetensors``, ``JEPA.json`` (configs, recipe, losses, scores, parameter counts, build
facts) and ``MANIFEST.json`` (SHA-256 of every other file). :func:`load` refuses any file whose
hash differs.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import torch
from safetensors.torch import save

from ftipbook import study, zoo
from ftipbook.artifact import versions
from ftipbook.atomic import sha256
from ftipbook.compare.cost import CostVector
from ftipbook.compare.jepa_interface import NextTokenNLL
from ftipbook.compare.measure import count_flops
from ftipbook.file_records import safetensors_record
from ftipbook.manifest_set import write_manifest_set
from ftipbook.model.config import ModelConfig
from ftipbook.model.jepa import JEPA, DecodedJEPA, JEPAConfig, LinearReadout, TiedEmbeddingReadout, fit_linear_readout
from ftipbook.model.transformer import DecoderLM, build_model
from ftipbook.runtime import cpu_kind
from ftipbook.train import RunRandomness, TrainConfig, batch_stream, build_optimizer, build_schedule

JEPA_DIR = Path(__file__).resolve().parent / "_jepa"
MANIFEST_FILE = "MANIFEST.json"
BUILD_COMMAND = "python scripts/build_jepa.py"
DATA_FILE = "JEPA.json"
FORMAT = "ftipbook.jepa/1"
WEIGHT_FILES = ("jepa.safetensors", "readout.safetensors", "ar.safetensors")

#: The encoder of the JEPA and the AR baseline's configuration (besides ``vocab_size``).
ENCODER: Mapping[str, Any] = MappingProxyType(dict(d_model=64, n_layers=2, n_heads=4, d_ff=176,
                                                   max_seq_len=zoo.SEQ_LEN, pos="rope", norm="rmsnorm",
                                                   ffn="swiglu", tie_embeddings=True))
PREDICTOR_HIDDEN, EMA_DECAY, LATENT_LOSS = 128, 0.99, "cosine"
#: The common recipe of both systems (one stream of batches, same steps, optimizer and schedule).
RECIPE = TrainConfig(steps=300, batch_size=16, seq_len=zoo.SEQ_LEN, optimizer="adamw", lr=3e-3, weight_decay=0.1,
                     schedule="warmup_cosine", warmup_steps=20, min_lr_ratio=0.1, grad_clip=1.0, progress=False)
SEED = 0
#: The readout is fitted on the first ``READOUT_BATCHES`` batches of the training stream.
READOUT_BATCHES, READOUT_STEPS, READOUT_LR = 20, 300, 0.05
DECODERS = ("readout", "tied-embedding")


def encoder_config() -> ModelConfig:
    """The encoder's :class:`~ftipbook.model.config.ModelConfig` with the zoo tokenizer's vocabulary."""
    return ModelConfig(vocab_size=zoo.tokenizer().vocab_size, **ENCODER)


def jepa_config() -> JEPAConfig:
    """The committed model's :class:`~ftipbook.model.jepa.JEPAConfig`."""
    return JEPAConfig(encoder_config(), PREDICTOR_HIDDEN, EMA_DECAY, LATENT_LOSS)


@cache
def evaluation_law() -> NextTokenNLL:
    """The declared evaluation law: :class:`~ftipbook.compare.jepa_interface.NextTokenNLL` on
    :func:`ftipbook.study.evaluation_documents` with the zoo tokenizer, ``seq_len`` 64."""
    return NextTokenNLL(study.evaluation_documents(), zoo.tokenizer(), seq_len=zoo.SEQ_LEN)


def _untied(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state dict without the tied unembeddings (safetensors stores no shared tensor twice)."""
    return {k: v.contiguous() for k, v in model.state_dict().items() if not k.endswith("unembed.weight")}


def _tied(tensors: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Inverse of :func:`_untied`: each ``embed.weight`` also fills its tied ``unembed.weight``."""
    out = dict(tensors)
    out.update({k[:-len("embed.weight")] + "unembed.weight": v for k, v in tensors.items()
                if k.endswith("embed.weight") and not k.endswith("unembed.weight")})
    return out


# --- verification and loading ---------------------------------------------------------------------
def verify(directory: str | Path = JEPA_DIR) -> dict[str, str]:
    """Check every file against ``MANIFEST.json`` (:func:`ftipbook.study.verify` with this set's
    format); ``ValueError`` naming a changed, missing or unlisted file, or a manifest that lists
    other files than the build writes. Returns the manifest's hashes."""
    return {name: sha256(data) for name, data in _verified_files(directory).items()}


def _verified_files(directory: str | Path) -> dict[str, bytes]:
    """The verified bytes of every file of the build (:func:`ftipbook.study.verified_files`), refused
    unless the manifest lists exactly the files the build writes."""
    files = study.verified_files(directory, format=FORMAT, build_command=BUILD_COMMAND)
    if set(files) != {DATA_FILE, *WEIGHT_FILES}:
        raise ValueError(f"{Path(directory) / MANIFEST_FILE} lists {sorted(files)}; expected "
                         f"{sorted({DATA_FILE, *WEIGHT_FILES})}")
    return files


@dataclass(frozen=True)
class JEPAStudy:
    """The loaded build (see the module docstring): ``data`` is ``JEPA.json``; the methods rebuild the
    models from the verified weights."""

    directory: Path
    data: Mapping[str, Any]
    tensors: Mapping[str, Mapping[str, torch.Tensor]]

    @property
    def config(self) -> JEPAConfig:
        return JEPAConfig.from_dict(self.data["jepa_config"])

    @property
    def costs(self) -> Mapping[str, CostVector]:
        """The measured training cost of ``"jepa"`` and ``"ar"``: counted FLOPs and wall time."""
        units = self.data["cost"]["units"]
        return MappingProxyType({k: CostVector(self.data["cost"][k], units) for k in ("jepa", "ar")})

    @property
    def scores(self) -> Mapping[str, float]:
        """Mean next-token NLL (nats) of each scored system on the evaluation law, lower is better."""
        return MappingProxyType(self.data["scores"])

    @property
    def item_scores(self) -> Mapping[str, np.ndarray]:
        """Per-document NLLs of each scored system, in evaluation-document order."""
        return MappingProxyType({k: np.asarray(v, dtype=np.float64) for k, v in self.data["item_scores"].items()})

    def jepa(self) -> JEPA:
        """The trained JEPA (context encoder, predictor, EMA target encoder)."""
        model = JEPA(self.config, seed=SEED)
        model.load_state_dict(_tied(self.tensors["jepa.safetensors"]))
        return model.eval()

    def decoder(self, name: str) -> torch.nn.Module:
        """The declared decoder ``name``: ``"readout"`` or ``"tied-embedding"``."""
        if name == "readout":
            t = self.tensors["readout.safetensors"]
            return LinearReadout(t["weight"], t["bias"])
        if name == "tied-embedding":
            return TiedEmbeddingReadout(self.tensors["jepa.safetensors"]["context.embed.weight"])
        raise ValueError(f"decoder={name!r} is not one of {list(DECODERS)}")

    def decoded(self, name: str) -> DecodedJEPA:
        """The JEPA composed with decoder ``name``: token ids to next-token logits."""
        return DecodedJEPA(self.jepa(), self.decoder(name)).eval()

    def ar_model(self) -> DecoderLM:
        """The AR baseline trained under the same recipe."""
        model = build_model(ModelConfig(**self.data["ar_config"]))
        model.load_state_dict(_tied(self.tensors["ar.safetensors"]))
        return model.eval()

    def unigram_logits(self) -> torch.Tensor:
        """Log-probabilities ``[V]`` of the unigram reference law (add-one counts of the readout batches)."""
        counts = torch.tensor(self.data["unigram_counts"], dtype=torch.float64)
        return torch.log(counts / counts.sum())


def load(directory: str | Path = JEPA_DIR) -> JEPAStudy:
    """The committed build, after checking every file against ``MANIFEST.json``."""
    directory = Path(directory)
    files = _verified_files(directory)
    data = study.verified_json(files, directory, DATA_FILE, FORMAT)
    tensors = {name: MappingProxyType(safetensors_record(files[name], directory / name)) for name in WEIGHT_FILES}
    return JEPAStudy(directory, MappingProxyType(data), MappingProxyType(tensors))


# --- building -------------------------------------------------------------------------------------
def _train(module: torch.nn.Module, loss_of: Callable[[Any], torch.Tensor], after_step: Callable[[], None],
           randomness: RunRandomness) -> tuple[list[float], dict[str, float]]:
    """The common loop: ``RECIPE.steps`` updates on the recipe's stream, schedule and clipping.

    Returns the losses and the measured cost: the flop-counter count of the first step's loss and
    backward pass times the steps (every step has the same shapes), and the loop's wall time."""
    start = time.perf_counter()
    stream = batch_stream(zoo.pretraining_documents(), zoo.tokenizer(), RECIPE, randomness)
    optimizer, schedule = build_optimizer(module, RECIPE), build_schedule(RECIPE)
    for group in optimizer.param_groups:
        group["initial_lr"] = group["lr"]
    losses = []
    module.train()
    for step in range(RECIPE.steps):
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"] * schedule(step)
        batch = next(stream)
        if step == 0:
            loss, counted = count_flops(lambda: _backward(loss_of(batch)))
        else:
            loss = _backward(loss_of(batch))
        torch.nn.utils.clip_grad_norm_([p for p in module.parameters() if p.requires_grad], RECIPE.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        after_step()
        losses.append(float(loss.detach()))
        if not math.isfinite(losses[-1]):
            raise FloatingPointError(f"non-finite loss at step {step}")
    module.eval()
    return losses, {"train_flops": counted.total * RECIPE.steps, "wall_time": time.perf_counter() - start}


def _backward(loss: torch.Tensor) -> torch.Tensor:
    loss.backward()
    return loss


def _ar_loss(model: DecoderLM, batch) -> torch.Tensor:
    targets = batch.targets.masked_fill(~batch.loss_mask, -100)
    return model.loss(batch.tokens, targets, seg_ids=batch.seg_ids)


@torch.no_grad()
def _readout_data(model: JEPA, randomness: RunRandomness) -> tuple[torch.Tensor, torch.Tensor]:
    """Frozen predicted latents and their next tokens on the first ``READOUT_BATCHES`` training batches."""
    stream = batch_stream(zoo.pretraining_documents(), zoo.tokenizer(), RECIPE, randomness)
    xs, ys = [], []
    for _ in range(READOUT_BATCHES):
        batch = next(stream)
        latents = model.predicted_latents(batch.tokens, batch.seg_ids)
        xs.append(latents[batch.loss_mask])
        ys.append(batch.targets[batch.loss_mask])
    return torch.cat(xs), torch.cat(ys)


def build(directory: str | Path = JEPA_DIR, log: Callable[[str], None] = print) -> dict:
    """Train both systems and the decoders (one CPU thread, deterministic) and write them with a manifest."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    wall, cpu = time.perf_counter(), time.process_time()
    randomness = RunRandomness.from_seed(SEED)
    with zoo.deterministic_cpu():
        cfg = jepa_config()
        jepa = JEPA(cfg, seed=SEED)
        jepa_losses, jepa_cost = _train(jepa, lambda b: jepa.loss(b.tokens, b.seg_ids), jepa.update_target, randomness)
        log(f"jepa: latent loss {jepa_losses[0]:.4f} -> {jepa_losses[-1]:.4f}")
        ar = build_model(cfg.encoder, seed=SEED)
        ar_losses, ar_cost = _train(ar, lambda b: _ar_loss(ar, b), lambda: None, randomness)
        log(f"ar:   next-token NLL {ar_losses[0]:.4f} -> {ar_losses[-1]:.4f}")
        x, y = _readout_data(jepa, randomness)
        readout, readout_losses = fit_linear_readout(x, y, cfg.encoder.vocab_size, steps=READOUT_STEPS,
                                                     lr=READOUT_LR, seed=SEED)
        counts = torch.bincount(y, minlength=cfg.encoder.vocab_size).double() + 1.0
        law = evaluation_law()
        unigram = torch.log(counts / counts.sum()).float()
        maps = {"ar": ar, "jepa+readout": DecodedJEPA(jepa, readout),
                "jepa+tied-embedding": DecodedJEPA(jepa, TiedEmbeddingReadout(jepa.context.embed.weight)),
                "unigram": lambda tokens: unigram.expand(*tokens.shape, -1)}
        items = {name: law.item_nlls(m).tolist() for name, m in maps.items()}
    for name, v in items.items():
        log(f"{name:20s} mean NLL {np.mean(v):.4f}")
    weights = {"jepa.safetensors": save(_untied(jepa)),
               "readout.safetensors": save({"weight": readout.weight.data, "bias": readout.bias.data}),
               "ar.safetensors": save(_untied(ar))}
    data = {
        "format": FORMAT, "jepa_config": cfg.to_dict(), "ar_config": dataclasses.asdict(cfg.encoder),
        "recipe": {**dataclasses.asdict(RECIPE), "betas": list(RECIPE.betas), "seed": SEED,
                   "randomness": randomness.to_dict(), "corpus": "zoo.pretraining_documents",
                   "tokenizer_sha256": zoo.tokenizer().sha256()},
        "readout": {"batches": READOUT_BATCHES, "steps": READOUT_STEPS, "lr": READOUT_LR, "rows": int(y.numel())},
        "evaluation_law": law.description,
        "losses": {"jepa": jepa_losses, "ar": ar_losses, "readout": readout_losses},
        "cost": {"jepa": jepa_cost, "ar": ar_cost, "units": {"train_flops": "FLOP", "wall_time": "s"}},
        "evaluation": {"doc_ids": [d.doc_id for d in law.documents], "seq_len": law.seq_len},
        "scores": {k: float(np.mean(v)) for k, v in items.items()}, "item_scores": items,
        "unigram_counts": counts.tolist(),
        "parameters": {"jepa_trained": jepa.trained_parameters(), "jepa_target": sum(p.numel() for p in
                                                                                     jepa.target.parameters()),
                       "readout": readout.weight.numel() + readout.bias.numel(),
                       "ar": sum(p.numel() for p in ar.parameters())},
        "build": {"seconds": round(time.perf_counter() - wall, 1), "cpu_seconds": round(time.process_time() - cpu, 1),
                  "threads": 1, "deterministic": True, "dtype": "float32", "device": "cpu", "cpu": cpu_kind(),
                  "versions": versions(), "logical_cores": os.cpu_count()},
    }
    # one crash-safe set, MANIFEST.json last: a kill at any moment leaves the old build or the new one
    write_manifest_set(directory, {DATA_FILE: (json.dumps(data, indent=1, sort_keys=True) + "\n").encode(),
                                   **weights}, FORMAT)
    return data


__all__ = ["JEPA_DIR", "ENCODER", "RECIPE", "SEED", "READOUT_BATCHES", "DECODERS", "encoder_config", "jepa_config",
           "evaluation_law", "verify", "JEPAStudy", "load", "build"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
