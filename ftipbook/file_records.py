"""Reading a saved file into memory with an error that names it: JSON objects and safetensors.

Every loader of the library reads a file's bytes once (:func:`ftipbook.atomic.read_bounded`, which
refuses a file above its declared size before reading it) and parses them with these functions, so
a damaged file is refused as ``ValueError`` naming the file, never as a decoder's own exception from
deep inside, and nothing stays memory-mapped after loading. :func:`json_value` is the package's one
JSON loader: nesting deeper than :data:`MAX_JSON_DEPTH` is refused before parsing (never a
``RecursionError``), and so are the non-standard constants ``NaN`` and ``Infinity``.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load

from ftipbook.atomic import read_bounded

#: The deepest nesting of arrays and objects a loaded JSON file may have (the committed files reach 10).
MAX_JSON_DEPTH = 64
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _json_depth(data: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in the JSON text ``data`` (strings skipped), without recursion."""
    depth = deepest = 0
    for ch in _STRINGS.sub(b"", data).translate(None, delete=bytes(set(range(256)) - set(b"[]{}"))):
        depth += 1 if ch in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _no_constant(name: str) -> None:
    raise ValueError(f"the non-standard JSON constant {name} is not allowed")


def json_value(data: bytes, path: Path) -> object:
    """The JSON value in ``data`` (the bytes of ``path``); ``ValueError`` naming ``path`` when it is not
    valid JSON or nests deeper than :data:`MAX_JSON_DEPTH`."""
    depth = _json_depth(data)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"{path} nests JSON arrays/objects {depth} deep, more than the {MAX_JSON_DEPTH} a loader "
                         f"accepts (ftipbook.file_records.MAX_JSON_DEPTH); the file is damaged or not ours")
    try:
        return json.loads(data, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ValueError(f"{path} is not valid JSON ({err}); the file is damaged") from None


def json_record(data: bytes, path: Path) -> dict:
    """The JSON object in ``data`` (the bytes of ``path``); ``ValueError`` naming ``path`` otherwise."""
    record = json_value(data, path)
    if not isinstance(record, dict):
        raise ValueError(f"{path} holds a JSON {type(record).__name__}, not an object; the file is damaged")
    return record


def safetensors_record(data: bytes, path: Path) -> dict[str, torch.Tensor]:
    """The tensors in ``data`` (the bytes of ``path``), in memory; ``ValueError`` naming ``path`` otherwise."""
    try:
        return load(data)
    except SafetensorError as err:
        raise ValueError(f"{path} is not a readable safetensors file ({err}); the file is damaged") from None


def safetensors_metadata(data: bytes, path: Path) -> dict[str, str]:
    """The ``__metadata__`` map of the safetensors bytes ``data`` (of ``path``, which errors name)."""
    size = int.from_bytes(data[:8], "little")
    header = json_record(data[8:8 + size], path) if 8 + size <= len(data) else None
    if header is None or not isinstance(header.get("__metadata__", {}), dict):
        raise ValueError(f"{path} is not a readable safetensors file (bad header); the file is damaged")
    return header.get("__metadata__") or {}


def tensors_digest(tensors: Mapping[str, torch.Tensor], text: str = "") -> str:
    """SHA-256 of ``text`` and of every tensor's name, dtype, shape and bytes, in name order: what a
    saved file records about itself, so that a flipped byte anywhere in its data is found on load."""
    h = hashlib.sha256(text.encode())
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        h.update(json.dumps([name, str(t.dtype), list(t.shape)]).encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def read_json(path: str | Path) -> dict:
    """The JSON object in the file ``path``; ``ValueError`` naming ``path`` when it is not one."""
    return json_record(read_bounded(path), Path(path))


def read_safetensors(path: str | Path) -> dict[str, torch.Tensor]:
    """The tensors of the safetensors file ``path``, in memory; ``ValueError`` naming ``path``."""
    return safetensors_record(read_bounded(path), Path(path))


__all__ = ["MAX_JSON_DEPTH", "json_value", "json_record", "safetensors_record", "safetensors_metadata", "tensors_digest", "read_json",
           "read_safetensors"]
