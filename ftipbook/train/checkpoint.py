"""Training checkpoints: a base-model artifact plus everything the next update depends on.

A checkpoint directory holds the artifact of :mod:`ftipbook.artifact` (``weights.safetensors``,
``artifact.json``), ``optimizer.safetensors`` (the optimizer state ``s_k`` of ftip-001H, written
by :func:`ftipbook.optim.checkpoint.save_optimizer`), ``rng.safetensors`` (the torch generator
states) and ``trainer.json`` (step, logs, configuration, seeds, the batch iterator's position,
Python and NumPy generator states).
Restoring all of it into freshly built objects continues a run with exactly the losses of an
uninterrupted one. Nothing is pickled.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from ftipbook.artifact import ModelArtifact, Provenance, load_artifact, save_artifact, versions
from ftipbook.optim.checkpoint import load_optimizer, save_optimizer
from ftipbook.train.loop import TrainRun

if TYPE_CHECKING:
    from ftipbook.train.loop import Trainer

FORMAT = "ftipbook.train-checkpoint/1"
OPTIMIZER_FILE = "optimizer.safetensors"
RNG_FILE = "rng.safetensors"
TRAINER_FILE = "trainer.json"


def _jsonable(value):
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value if isinstance(value, (bool, int, float, str, type(None))) else repr(value)


def _rng_state() -> tuple[dict[str, torch.Tensor], dict]:
    tensors = {"rng/torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng/cuda/{i}"] = s
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return tensors, {"python": [version, list(internal), gauss],
                     "numpy": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)]}


def _set_rng_state(tensors: dict[str, torch.Tensor], meta: dict) -> None:
    torch.set_rng_state(tensors["rng/torch"])
    cuda = sorted((k for k in tensors if k.startswith("rng/cuda/")), key=lambda k: int(k.rsplit("/", 1)[1]))
    if cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([tensors[k] for k in cuda])
    version, internal, gauss = meta["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = meta["numpy"]
    np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))


def trainer_provenance(trainer: Trainer) -> Provenance:
    """The provenance record of a trainer's run so far (optimizer, data, seeds, steps, versions, losses)."""
    groups = [{**{k: _jsonable(v) for k, v in g.items() if k != "params"},
               "n_params": sum(p.numel() for p in g["params"])} for g in trainer.optimizer.param_groups]
    return Provenance(
        optimizer={"class": type(trainer.optimizer).__name__, "param_groups": groups,
                   "schedule": repr(trainer.schedule), "grad_clip": trainer.cfg.grad_clip},
        data=dict(trainer.data),
        seeds=trainer.randomness.to_dict(),
        steps=trainer.step,
        train_config=trainer.cfg.to_dict(),
        versions=versions(),
        log={"losses": list(trainer.log.losses), "evals": [list(e) for e in trainer.log.evals]},
    )


def save_training_checkpoint(trainer: Trainer, path: str | Path) -> Path:
    """Write ``trainer``'s full state into the directory ``path``."""
    state_dict = getattr(trainer.batches, "state_dict", None)
    if state_dict is None:
        raise TypeError(
            f"the batch iterator {type(trainer.batches).__name__} has no state_dict(); a checkpoint must record "
            f"the data position to resume exactly"
        )
    path = Path(path)
    artifact = ModelArtifact.from_model(trainer.model, trainer.tokenizer, provenance=trainer_provenance(trainer))
    save_artifact(artifact, path)
    save_optimizer(trainer.optimizer, path / OPTIMIZER_FILE)
    rng_tensors, rng_meta = _rng_state()
    save_file(rng_tensors, str(path / RNG_FILE), metadata={"format": FORMAT})
    meta = {
        "format": FORMAT,
        "step": trainer.step,
        "log": trainer.log.to_dict(),
        "train_config": trainer.cfg.to_dict(),
        "randomness": trainer.randomness.to_dict(),
        "data_state": state_dict(),
        "optimizer_class": type(trainer.optimizer).__name__,
        "rng": rng_meta,
        "runtime_hash": artifact.runtime_hash(),
    }
    (path / TRAINER_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True, allow_nan=False) + "\n")
    return path


def restore_training_checkpoint(trainer: Trainer, path: str | Path) -> None:
    """Load the checkpoint at ``path`` into ``trainer``'s model, optimizer, batch iterator and RNGs.

    The trainer must have been built like the one that wrote it: same model configuration, same
    optimizer class and groups, same ``TrainConfig`` and seeds (a mismatch raises ``ValueError``).
    """
    path = Path(path)
    if not (path / TRAINER_FILE).is_file():
        raise FileNotFoundError(f"{path} is not a training checkpoint: {TRAINER_FILE} is missing")
    meta = json.loads((path / TRAINER_FILE).read_text())
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path / TRAINER_FILE} has format {meta.get('format')!r}; expected {FORMAT!r}")
    for name, saved, live in (("train_config", meta["train_config"], trainer.cfg.to_dict()),
                              ("randomness", meta["randomness"], trainer.randomness.to_dict())):
        if saved != live:
            diff = sorted(k for k in saved if saved.get(k) != live.get(k))
            raise ValueError(f"the checkpoint's {name} differs from this trainer's in {diff}")
    artifact = load_artifact(path)
    if artifact.cfg != trainer.model.cfg:
        raise ValueError("the checkpoint's model configuration differs from this trainer's model")
    if artifact.runtime_hash() != meta["runtime_hash"]:
        raise ValueError(f"{path}: the weights do not match the checkpoint's recorded runtime hash")
    loader = getattr(trainer.batches, "load_state_dict", None)
    if loader is None:
        raise TypeError(f"the batch iterator {type(trainer.batches).__name__} has no load_state_dict()")
    with torch.no_grad():
        for name, tensor in trainer.model.state_dict().items():
            tensor.copy_(artifact.state_dict[name])
    if meta["optimizer_class"] != type(trainer.optimizer).__name__:
        raise ValueError(f"the checkpoint holds {meta['optimizer_class']} state; "
                         f"this optimizer is {type(trainer.optimizer).__name__}")
    load_optimizer(trainer.optimizer, path / OPTIMIZER_FILE)
    loader(meta["data_state"])
    _set_rng_state(load_file(str(path / RNG_FILE)), meta["rng"])
    trainer.step = meta["step"]
    trainer.log = TrainRun.from_dict(meta["log"])
