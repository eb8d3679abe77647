"""Optimizer checkpoints as one safetensors file: tensors as tensors, everything else as JSON.

``save_optimizer(opt, path)`` writes ``opt.state_dict()`` atomically (:func:`ftipbook.atomic.write_bytes`);
``load_optimizer(opt, path)`` reads it back, into memory, into an optimizer built over the same
parameters. :func:`optimizer_bytes` and :func:`load_optimizer_bytes` are the same two steps on bytes,
for callers that write the file as part of a larger set (the training checkpoints of
:mod:`ftipbook.train.checkpoint`). No pickle is involved. Works for the
classes of :mod:`ftipbook.optim.torch_optim` and for ``torch.optim`` optimizers whose state
holds tensors, numbers, strings, booleans, ``None`` and (nested) lists, tuples and dicts.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save

from ftipbook.file_records import json_value, safetensors_metadata, safetensors_record, tensors_digest
from ftipbook.atomic import read_bounded, write_bytes

_META_KEY = "ftipbook.optimizer_state"
_DIGEST_KEY = "ftipbook.sha256"  # of the state's structure and tensors, checked on load


def _encode(value: Any, key: str, tensors: dict[str, torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        tensors[key] = value.detach().cpu().contiguous()
        return {"__tensor__": key, "device": str(value.device)}
    if isinstance(value, dict):
        return {"__dict__": [[_encode(k, f"{key}.k{i}", tensors), _encode(v, f"{key}.{i}", tensors)]
                             for i, (k, v) in enumerate(value.items())]}
    if isinstance(value, (list, tuple)):
        items = [_encode(v, f"{key}.{i}", tensors) for i, v in enumerate(value)]
        return {"__tuple__": items} if isinstance(value, tuple) else items
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot checkpoint optimizer state entry {key!r} of type {type(value).__name__}")


def _decode(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    if isinstance(value, dict):
        if "__tensor__" in value:
            return tensors[value["__tensor__"]].to(value["device"])
        if "__tuple__" in value:
            return tuple(_decode(v, tensors) for v in value["__tuple__"])
        return {_decode(k, tensors): _decode(v, tensors) for k, v in value["__dict__"]}
    if isinstance(value, list):
        return [_decode(v, tensors) for v in value]
    return value


def optimizer_bytes(optimizer: torch.optim.Optimizer, state: dict | None = None) -> bytes:
    """``optimizer.state_dict()`` as safetensors bytes (non-tensor parts in the JSON metadata).

    ``state``: a state dict to write instead, e.g. the full state gathered from a model sharded
    with FSDP (:func:`ftipbook.train.distributed.gather_full_state`)."""
    tensors: dict[str, torch.Tensor] = {}
    structure = json.dumps(_encode(optimizer.state_dict() if state is None else state, "s", tensors))
    return save(tensors, metadata={_META_KEY: structure, _DIGEST_KEY: tensors_digest(tensors, structure)})


def load_optimizer_bytes(optimizer: torch.optim.Optimizer, data: bytes, path: str | Path) -> None:
    """Load the bytes ``data`` of :func:`optimizer_bytes` (read from ``path``, which errors name)."""
    path = Path(path)
    meta = safetensors_metadata(data, path)
    if _META_KEY not in meta:
        raise ValueError(f"{path} is not an ftipbook optimizer checkpoint (no {_META_KEY!r} metadata)")
    tensors = safetensors_record(data, path)
    if _DIGEST_KEY not in meta:
        raise ValueError(f"{path} has no {_DIGEST_KEY!r} record (every optimizer file ftipbook writes has one); "
                         "the file was changed or damaged")
    if meta[_DIGEST_KEY] != tensors_digest(tensors, meta[_META_KEY]):
        raise ValueError(f"{path} differs from what was saved (SHA-256 mismatch); the file is damaged")
    structure = json_value(meta[_META_KEY].encode(), path)
    optimizer.load_state_dict(_decode(structure, tensors))


def save_optimizer(optimizer: torch.optim.Optimizer, path: str | Path) -> None:
    """Write :func:`optimizer_bytes` to ``path``: the old file or the new one, never a mix."""
    write_bytes(path, optimizer_bytes(optimizer))


def load_optimizer(optimizer: torch.optim.Optimizer, path: str | Path) -> None:
    """Load a file written by :func:`save_optimizer` into ``optimizer`` (built over the same parameters)."""
    load_optimizer_bytes(optimizer, read_bounded(path), path)


__all__ = ["optimizer_bytes", "load_optimizer_bytes", "save_optimizer", "load_optimizer"]
