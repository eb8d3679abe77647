"""Training checkpoints: a base-model artifact plus everything the next update depends on.

A checkpoint directory holds the artifact of :mod:`ftipbook.artifact` (``weights.safetensors``,
``artifact.json``), ``optimizer.safetensors`` (the optimizer state ``s_k`` of ftip-001H, written
in the bytes of :func:`ftipbook.optim.checkpoint.optimizer_bytes`), ``rng.safetensors`` (the torch generator
states) and ``trainer.json`` (step, logs, configuration, seeds, the batch iterator's position,
Python and NumPy generator states), and last ``MANIFEST.json``, the SHA-256 and size of every
other file. The files are written as one crash-safe set (:func:`ftipbook.atomic.write_file_set`),
the manifest last: a checkpoint is complete once its manifest is in place. Restoring reads every
file into memory and checks it against the manifest, refusing a damaged file by name;
:func:`latest_checkpoint` finds the newest complete checkpoint and reports incomplete ones.
Restoring all of it into freshly built objects continues a run with exactly the losses of an
uninterrupted one. Nothing is pickled. A run sharded with FSDP writes and reads the same files:
the full state is gathered on rank 0 to be written, and every rank loads its shard of it; the
``parallel`` field of the configuration is the one difference allowed between writer and reader.
"""
from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import torch
from safetensors.torch import save

from ftipbook.artifact import (META_FILE, WEIGHTS_FILE, ModelArtifact, Provenance, artifact_files,
                               artifact_from_files, versions)
from ftipbook.atomic import file_sets, read_file_set, sha256, write_file_set
from ftipbook.file_records import json_record, safetensors_record
from ftipbook.optim.checkpoint import load_optimizer_bytes, optimizer_bytes
from ftipbook.train.config import TrainConfig
from ftipbook.train.distributed import FullState, load_full_tensor
from ftipbook.train.loop import TrainRun

if TYPE_CHECKING:
    from ftipbook.train.loop import Trainer

FORMAT = "ftipbook.train-checkpoint/1"
OPTIMIZER_FILE = "optimizer.safetensors"
RNG_FILE = "rng.safetensors"
TRAINER_FILE = "trainer.json"
MANIFEST_FILE = "MANIFEST.json"
#: The files the manifest covers, in the order they are written (the manifest follows them).
FILES = (WEIGHTS_FILE, META_FILE, OPTIMIZER_FILE, RNG_FILE, TRAINER_FILE)
#: The ``path`` that :func:`restore_training_checkpoint` resolves with :func:`latest_checkpoint`.
LATEST = "latest"


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


def _json_bytes(record: dict) -> bytes:
    return (json.dumps(record, indent=1, sort_keys=True, allow_nan=False) + "\n").encode()


def save_training_checkpoint(trainer: Trainer, path: str | Path, *, full: FullState | None = None) -> Path:
    """Write ``trainer``'s full state into the directory ``path``, ``MANIFEST.json`` last.

    ``full``: the weights and optimizer state gathered from a sharded model
    (:meth:`~ftipbook.train.loop.Trainer.full_state`), written instead of the local ones."""
    state_dict = getattr(trainer.batches, "state_dict", None)
    if state_dict is None:
        raise TypeError(
            f"the batch iterator {type(trainer.batches).__name__} has no state_dict(); a checkpoint must record "
            f"the data position to resume exactly"
        )
    artifact = ModelArtifact.from_model(trainer.model, trainer.tokenizer, provenance=trainer_provenance(trainer),
                                        state_dict=None if full is None else full.model)
    rng_tensors, rng_meta = _rng_state()
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
    optimizer = optimizer_bytes(trainer.optimizer, state=None if full is None else full.optimizer)
    files = {**artifact_files(artifact), OPTIMIZER_FILE: optimizer,
             RNG_FILE: save(rng_tensors, metadata={"format": FORMAT}), TRAINER_FILE: _json_bytes(meta)}
    manifest = {"format": FORMAT, "step": trainer.step,
                "files": {name: {"sha256": sha256(data), "bytes": len(data)} for name, data in files.items()}}
    return write_file_set(path, {**files, MANIFEST_FILE: _json_bytes(manifest)})


def _verified(files: dict[str, bytes | Path], path: Path) -> dict[str, bytes]:
    """``files`` (:func:`ftipbook.atomic.file_sets`) checked against their manifest; the first missing,
    unlisted or damaged file is named in a ``FileNotFoundError`` / ``ValueError``."""
    if isinstance(files[TRAINER_FILE], Path) and isinstance(files[MANIFEST_FILE], Path):
        raise FileNotFoundError(f"{path} is not a training checkpoint: {TRAINER_FILE} is missing")
    if isinstance(files[MANIFEST_FILE], Path):
        raise FileNotFoundError(f"{path} is an incomplete training checkpoint: {MANIFEST_FILE} is missing "
                                f"(its write was interrupted, or an older ftipbook wrote it)")
    manifest = json_record(files[MANIFEST_FILE], path / MANIFEST_FILE)
    if manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
        raise ValueError(f"{path / MANIFEST_FILE} is not a {FORMAT!r} manifest; the file is damaged")
    for name in FILES:
        data, entry = files[name], manifest["files"].get(name)
        if isinstance(data, Path):
            raise FileNotFoundError(f"{data} is missing from the training checkpoint {path}")
        if not isinstance(entry, dict) or "sha256" not in entry:
            raise ValueError(f"{path / MANIFEST_FILE} does not record {name}; the manifest is damaged")
        if sha256(data) != entry["sha256"] or len(data) != entry.get("bytes"):
            raise ValueError(f"{path / name} is damaged: {len(data)} bytes with SHA-256 {sha256(data)[:16]}..., "
                             f"but {MANIFEST_FILE} records {entry.get('bytes')} bytes with "
                             f"{str(entry['sha256'])[:16]}...; refusing to resume from it")
    return files


def read_training_checkpoint(path: str | Path) -> dict[str, bytes]:
    """The bytes of every file of the checkpoint at ``path``, verified against its manifest (if a write
    into ``path`` was killed halfway, the previous checkpoint there)."""
    return read_file_set(path, (*FILES, MANIFEST_FILE), _verified)


class LatestCheckpoint(NamedTuple):
    """The result of :func:`latest_checkpoint`."""

    path: Path  # the complete checkpoint with the highest step
    skipped: list[tuple[Path, str]]  # incomplete or unreadable checkpoints, with the reason


def _manifest_step(candidate: Path) -> int:
    files = file_sets(candidate, (MANIFEST_FILE,))
    data = next((f[MANIFEST_FILE] for f in files if not isinstance(f[MANIFEST_FILE], Path)), None)
    if data is None:
        raise FileNotFoundError(f"incomplete: {MANIFEST_FILE} is missing")
    step = json_record(data, candidate / MANIFEST_FILE).get("step")
    if not isinstance(step, int):
        raise ValueError(f"{candidate / MANIFEST_FILE} records no step; the file is damaged")
    return step


def latest_checkpoint(directory: str | Path) -> LatestCheckpoint:
    """The newest (highest-step) complete checkpoint among the subdirectories of ``directory``, and the
    incomplete ones passed over. Its files are verified only when it is restored."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"checkpoint directory {directory} does not exist")
    complete, skipped = [], []
    for candidate in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            complete.append((_manifest_step(candidate), candidate))
        except (ValueError, FileNotFoundError) as err:
            skipped.append((candidate, str(err)))
    if not complete:
        raise FileNotFoundError(f"{directory} holds no complete training checkpoint"
                                + "".join(f"; skipped {p.name}: {why}" for p, why in skipped))
    return LatestCheckpoint(max(complete)[1], skipped)


def _resolve(trainer: Trainer, path: str | Path) -> Path:
    if path != LATEST:
        return Path(path)
    if trainer.checkpoint_dir is None:
        raise ValueError(f"path={LATEST!r} needs a trainer with a checkpoint_dir to search")
    latest = latest_checkpoint(trainer.checkpoint_dir)
    for skipped, why in latest.skipped:
        warnings.warn(f"skipped the checkpoint {skipped}: {why}", stacklevel=3)
    return latest.path


def restore_training_checkpoint(trainer: Trainer, path: str | Path) -> Path:
    """Load the checkpoint at ``path`` into ``trainer``'s model, optimizer, batch iterator and RNGs;
    return the checkpoint's path.

    ``path="latest"`` restores :func:`latest_checkpoint` of ``trainer.checkpoint_dir`` and warns
    about every incomplete checkpoint skipped. Every file is verified against the manifest before
    anything is loaded. The trainer must have been built like the one that wrote it: same model
    configuration, same optimizer class and groups, same ``TrainConfig`` (but for ``parallel``) and
    seeds (a mismatch raises ``ValueError``).
    """
    path = _resolve(trainer, path)
    files = read_training_checkpoint(path)
    meta = json_record(files[TRAINER_FILE], path / TRAINER_FILE)
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path / TRAINER_FILE} has format {meta.get('format')!r}; expected {FORMAT!r}")
    if json_record(files[MANIFEST_FILE], path / MANIFEST_FILE).get("step") != meta.get("step"):
        raise ValueError(f"{path / MANIFEST_FILE} records another step than {TRAINER_FILE}; the manifest is damaged")
    layout_free = [{k: v for k, v in TrainConfig.from_dict(d).to_dict().items() if k != "parallel"}
                   for d in (meta["train_config"], trainer.cfg.to_dict())]
    for name, saved, live in (("train_config", *layout_free),
                              ("randomness", meta["randomness"], trainer.randomness.to_dict())):
        if saved != live:
            diff = sorted(k for k in saved if saved.get(k) != live.get(k))
            raise ValueError(f"the checkpoint's {name} differs from this trainer's in {diff}")
    artifact = artifact_from_files(files, path)
    if artifact.cfg != trainer.model.cfg:
        raise ValueError("the checkpoint's model configuration differs from this trainer's model")
    if artifact.runtime_hash() != meta["runtime_hash"]:
        raise ValueError(f"{path}: the weights do not match the checkpoint's recorded runtime hash")
    loader = getattr(trainer.batches, "load_state_dict", None)
    if loader is None:
        raise TypeError(f"the batch iterator {type(trainer.batches).__name__} has no load_state_dict()")
    for name, tensor in trainer.model.state_dict().items():
        load_full_tensor(tensor, artifact.state_dict[name])
    if meta["optimizer_class"] != type(trainer.optimizer).__name__:
        raise ValueError(f"the checkpoint holds {meta['optimizer_class']} state; "
                         f"this optimizer is {type(trainer.optimizer).__name__}")
    load_optimizer_bytes(trainer.optimizer, files[OPTIMIZER_FILE], path / OPTIMIZER_FILE)
    loader(meta["data_state"])
    _set_rng_state(safetensors_record(files[RNG_FILE], path / RNG_FILE), meta["rng"])
    trainer.step = meta["step"]
    trainer.log = TrainRun.from_dict(meta["log"])
    return path
