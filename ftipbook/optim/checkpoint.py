"""Optimizer checkpoints as one safetensors file: tensors as tensors, everything else as JSON.

``save_optimizer(opt, path)`` writes ``opt.state_dict()``; ``load_optimizer(opt, path)`` reads it
back into an optimizer built over the same parameters. No pickle is involved. Works for the
classes of :mod:`ftipbook.optim.torch_optim` and for ``torch.optim`` optimizers whose state
holds tensors, numbers, strings, booleans, ``None`` and (nested) lists, tuples and dicts.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

_META_KEY = "ftipbook.optimizer_state"


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


def save_optimizer(optimizer: torch.optim.Optimizer, path: str | Path) -> None:
    """Write ``optimizer.state_dict()`` to ``path`` (safetensors; non-tensor parts in its JSON metadata)."""
    tensors: dict[str, torch.Tensor] = {}
    structure = _encode(optimizer.state_dict(), "s", tensors)
    save_file(tensors, str(path), metadata={_META_KEY: json.dumps(structure)})


def load_optimizer(optimizer: torch.optim.Optimizer, path: str | Path) -> None:
    """Load a file written by :func:`save_optimizer` into ``optimizer`` (built over the same parameters)."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
    if _META_KEY not in meta:
        raise ValueError(f"{path} is not an ftipbook optimizer checkpoint (no {_META_KEY!r} metadata)")
    optimizer.load_state_dict(_decode(json.loads(meta[_META_KEY]), load_file(str(path))))


__all__ = ["save_optimizer", "load_optimizer"]
