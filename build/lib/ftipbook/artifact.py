"""The base-model artifact ``M_0 = (tau, delta, cfg, theta_K, num)`` (ftip-001K, ftip-006M, ftip-001L).

A weight file alone does not determine a next-token law: the law also needs the tokenizer and
detokenizer, the architecture configuration and the numerical and output conventions.
:class:`ModelArtifact` holds exactly these runtime ingredients, plus a :class:`Provenance`
record (optimizer, data, seeds, steps, versions) that travels with it but is not a runtime input.
:func:`runtime_hash` therefore covers tokenizer, configuration, weights and numerics and
excludes provenance: two artifacts with equal runtime hashes evaluate the same law.

On disk an artifact is a directory with ``weights.safetensors`` (the tensors ``theta_K``) and
``artifact.json`` (everything else, and the runtime hash, which loading verifies). Nothing is
pickled. Saving replaces both files as one crash-safe set (:func:`ftipbook.atomic.write_file_set`):
a process killed at any moment leaves a directory that loads, as the old artifact or the new one.
Loading reads both files into memory, so nothing later done to them reaches a loaded artifact.
"""
from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save

from ftipbook.atomic import read_file_set, write_file_set
from ftipbook.file_records import json_record, safetensors_metadata, safetensors_record
from ftipbook.model.config import ModelConfig
from ftipbook.model.transformer import DecoderLM
from ftipbook.plain_dict import from_plain_dict, to_plain_dict

#: Format tag written into ``artifact.json``; loading refuses other values.
FORMAT = "ftipbook.artifact/1"
WEIGHTS_FILE = "weights.safetensors"
META_FILE = "artifact.json"
#: Parameter dtypes an artifact may declare (``NumericsSpec.dtype``).
DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}
#: Modules whose tokenizer classes an artifact may name (``from_dict`` is called on them; nothing else is imported).
TOKENIZER_MODULES = ("ftipbook.tokenizer",)


@dataclass(frozen=True)
class NumericsSpec:
    """``num`` of ftip-001K: the numerical and inference conventions that evaluate the law.

    ``dtype`` is the dtype the parameters are cast to and the forward runs in; ``law`` says how
    logits become the next-token law (``"softmax"``: ``pi = softmax(z)`` at temperature 1 over the
    whole vocabulary, computed in float64); ``eos_id`` is the stop token of the EOS convention
    (ftip-000G; ``None``: stopping only by the length cap); ``max_context`` is the longest prefix
    the law is declared for. Norm epsilon and RoPE base are fields of the configuration.
    """

    dtype: str = "float32"
    law: str = "softmax"
    eos_id: int | None = None
    max_context: int | None = None

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype={self.dtype!r} is not supported; allowed: {sorted(DTYPES)}")
        if self.law != "softmax":
            raise ValueError(f"law={self.law!r} is not supported; allowed: 'softmax'")
        for name in ("eos_id", "max_context"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise ValueError(f"{name}={value!r} must be a non-negative int or None")

    @property
    def torch_dtype(self) -> torch.dtype:
        """``dtype`` as a ``torch.dtype``."""
        return DTYPES[self.dtype]

    def check(self, cfg: ModelConfig) -> None:
        """Refuse conventions that the configuration cannot honour (``ValueError``)."""
        if self.eos_id is not None and self.eos_id >= cfg.vocab_size:
            raise ValueError(f"numerics.eos_id={self.eos_id} is outside the vocabulary [0, {cfg.vocab_size})")
        if self.max_context is not None and cfg.pos == "learned" and self.max_context > cfg.max_seq_len:
            raise ValueError(
                f"numerics.max_context={self.max_context} exceeds max_seq_len={cfg.max_seq_len} of learned positions"
            )


@dataclass(frozen=True)
class Provenance:
    """How the weights were produced (ftip-006M): evidence that accompanies, but does not run, the artifact.

    ``undisclosed`` names fields the producer did not disclose (Example ftip-001L), so that an
    unknown is recorded as unknown rather than left out.
    """

    optimizer: dict = field(default_factory=dict)  # name, hyperparameters, parameter-group allocation
    data: dict = field(default_factory=dict)  # sources, mixture, pipeline, tokenizer corpus
    seeds: dict = field(default_factory=dict)  # RunRandomness by name
    steps: int | None = None  # updates made (K)
    train_config: dict = field(default_factory=dict)  # TrainConfig by name
    parent: str | None = None  # runtime hash of the artifact this one was trained from
    versions: dict = field(default_factory=dict)  # ftipbook, torch, python
    undisclosed: tuple[str, ...] = ()  # fields known to exist but not disclosed
    log: dict = field(default_factory=dict)  # e.g. losses per step

    def to_dict(self) -> dict:
        """JSON-ready form (:func:`~ftipbook.plain_dict.to_plain_dict`)."""
        return to_plain_dict(self)

    @classmethod
    def from_dict(cls, d: Mapping) -> Provenance:
        """Inverse of :meth:`to_dict`; unknown keys raise ``ValueError``."""
        return from_plain_dict(cls, d)


def versions() -> dict[str, str]:
    """Versions of ftipbook, torch and Python (for ``Provenance.versions``)."""
    import platform

    from ftipbook import __version__

    return {"ftipbook": __version__, "torch": torch.__version__.split("+")[0], "python": platform.python_version()}


# ---------------------------------------------------------------------------------------------
def tokenizer_to_dict(tokenizer) -> dict:
    """``{"class": name, "module": module, "state": tokenizer.to_dict()}`` for an ftipbook tokenizer."""
    cls = type(tokenizer)
    if cls.__module__ not in TOKENIZER_MODULES or not hasattr(tokenizer, "to_dict"):
        raise TypeError(
            f"an artifact stores tokenizers from {TOKENIZER_MODULES} that have to_dict()/from_dict(); "
            f"got {cls.__module__}.{cls.__name__}"
        )
    return {"class": cls.__name__, "module": cls.__module__, "state": tokenizer.to_dict()}


def tokenizer_from_dict(d: Mapping):
    """Inverse of :func:`tokenizer_to_dict` (only classes of :data:`TOKENIZER_MODULES` are accepted)."""
    if d.get("module") not in TOKENIZER_MODULES:
        raise ValueError(f"tokenizer module {d.get('module')!r} is not allowed; allowed: {TOKENIZER_MODULES}")
    cls = getattr(importlib.import_module(d["module"]), str(d.get("class")), None)
    if not isinstance(cls, type) or not hasattr(cls, "from_dict"):
        raise ValueError(f"{d['module']} has no tokenizer class {d.get('class')!r} with from_dict()")
    return cls.from_dict(d["state"])


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def _tensor_bytes(t: torch.Tensor) -> bytes:
    return t.detach().contiguous().cpu().reshape(-1).view(torch.uint8).numpy().tobytes()


def _declared(obj) -> dict:
    """The fields of a dataclass instance that differ from their defaults (all fields here have one).

    Hashing only these keeps a hash stable when a later version adds a field whose default
    reproduces the old behaviour; a value that stops being the default changes the hash.
    """
    return {f.name: getattr(obj, f.name) for f in fields(obj) if getattr(obj, f.name) != f.default}


def runtime_hash(
    cfg: ModelConfig, state_dict: Mapping[str, torch.Tensor], numerics: NumericsSpec, tokenizer=None
) -> str:
    """SHA-256 of the runtime ingredients: tokenizer, configuration and numerics (fields that differ
    from their defaults), and weights (names, dtypes, shapes, bytes). Provenance is not an
    argument, so it cannot change the hash (ftip-006M)."""
    h = hashlib.sha256()
    tok = None if tokenizer is None else tokenizer_to_dict(tokenizer)
    h.update(_canonical({"format": FORMAT, "cfg": _declared(cfg), "numerics": _declared(numerics), "tokenizer": tok}))
    _update_weights(h, state_dict)
    return h.hexdigest()


def _update_weights(h: "hashlib._Hash", state_dict: Mapping[str, torch.Tensor]) -> None:
    for name in sorted(state_dict):
        t = state_dict[name]
        h.update(_canonical([name, str(t.dtype), list(t.shape)]))
        h.update(_tensor_bytes(t))


def weights_sha256(state_dict: Mapping[str, torch.Tensor]) -> str:
    """SHA-256 of the weights alone (names, dtypes, shapes, bytes): equal exactly when every tensor is."""
    h = hashlib.sha256()
    _update_weights(h, state_dict)
    return h.hexdigest()


@dataclass
class ModelArtifact:
    """``M_0 = (tau, delta, cfg, theta_K, num)`` of ftip-001K with its provenance.

    ``tokenizer`` supplies both ``tau`` (``encode``) and ``delta`` (``decode``); it may be
    ``None`` to show what is lost without it: text-level calls then raise ``ValueError``.
    """

    cfg: ModelConfig
    state_dict: dict[str, torch.Tensor]
    numerics: NumericsSpec = field(default_factory=NumericsSpec)
    tokenizer: Any = None
    provenance: Provenance = field(default_factory=Provenance)

    def __post_init__(self) -> None:
        if not isinstance(self.cfg, ModelConfig):
            raise TypeError(f"cfg must be a ModelConfig, got {type(self.cfg).__name__}")
        self.numerics.check(self.cfg)
        if self.tokenizer is not None and self.tokenizer.vocab_size != self.cfg.vocab_size:
            raise ValueError(
                f"tokenizer has {self.tokenizer.vocab_size} ids but cfg.vocab_size={self.cfg.vocab_size}"
            )

    @classmethod
    def from_model(
        cls,
        model: DecoderLM,
        tokenizer=None,
        *,
        numerics: NumericsSpec | None = None,
        provenance: Provenance | None = None,
        state_dict: Mapping[str, torch.Tensor] | None = None,
    ) -> ModelArtifact:
        """Snapshot a ``DecoderLM`` (weights copied to the CPU). Default numerics: the parameters'
        dtype, softmax law, the tokenizer's ``eos_id`` and ``cfg.max_seq_len``. ``state_dict``: the
        weights to snapshot instead of ``model.state_dict()`` (e.g. the full weights gathered from a
        model sharded with FSDP, :func:`ftipbook.train.distributed.gather_full_state`)."""
        if not isinstance(model, DecoderLM):
            raise TypeError(f"model must be a DecoderLM, got {type(model).__name__}")
        source = model.state_dict() if state_dict is None else state_dict
        state = {k: v.detach().to("cpu", copy=True) for k, v in source.items()}
        if numerics is None:
            dtype = next(name for name, d in DTYPES.items() if d == next(model.parameters()).dtype)
            eos = None if tokenizer is None else tokenizer.eos_id
            numerics = NumericsSpec(dtype=dtype, eos_id=eos, max_context=model.cfg.max_seq_len)
        return cls(model.cfg, state, numerics, tokenizer, provenance or Provenance())

    # runtime ---------------------------------------------------------------------------------
    def runtime_hash(self) -> str:
        """:func:`runtime_hash` of this artifact (provenance excluded)."""
        return runtime_hash(self.cfg, self.state_dict, self.numerics, self.tokenizer)

    def model(self, device: torch.device | str | None = None) -> DecoderLM:
        """The executable model: ``DecoderLM(cfg)`` with ``theta_K``, in ``numerics.dtype``, in eval mode."""
        model = DecoderLM(self.cfg)
        model.load_state_dict(self.state_dict)
        return model.to(device=device, dtype=self.numerics.torch_dtype).eval()

    def _require_tokenizer(self, what: str):
        if self.tokenizer is None:
            raise ValueError(
                f"{what} needs the tokenizer, which this artifact lacks: without tau and delta the weights "
                f"define a law over token ids only (ftip-001K)"
            )
        return self.tokenizer

    def encode(self, text: str) -> list[int]:
        """``tau(text)``: token ids."""
        return list(self._require_tokenizer("encode").encode(text))

    def decode(self, ids: Sequence[int]) -> str:
        """``delta(ids)``: text."""
        return self._require_tokenizer("decode").decode(list(ids))

    def next_token_law(self, text: str, model: DecoderLM | None = None) -> torch.Tensor:
        """``pi(. | tau(text))`` as a float64 vector over the vocabulary (pass ``model`` to reuse one)."""
        ids = self.encode(text)
        if not ids:
            raise ValueError(f"text {text!r} encodes to no tokens; the law needs a non-empty prefix")
        if self.numerics.max_context is not None and len(ids) > self.numerics.max_context:
            raise ValueError(f"the prefix has {len(ids)} tokens, more than max_context={self.numerics.max_context}")
        return (model or self.model()).next_token_law(ids)

    def with_provenance(self, **changes) -> ModelArtifact:
        """A copy whose provenance has ``changes`` applied (the runtime ingredients are shared)."""
        return replace(self, provenance=replace(self.provenance, **changes))

    def to_json(self) -> dict:
        """The ``artifact.json`` content: everything but the tensors, plus the runtime hash."""
        return {
            "format": FORMAT,
            "runtime_hash": self.runtime_hash(),
            "runtime": {
                "tokenizer": None if self.tokenizer is None else tokenizer_to_dict(self.tokenizer),
                "cfg": asdict(self.cfg),
                "numerics": asdict(self.numerics),
                "weights": {"file": WEIGHTS_FILE, "tensors": len(self.state_dict),
                            "parameters": sum(t.numel() for t in self.state_dict.values())},
            },
            "provenance": self.provenance.to_dict(),
        }


def _weights_metadata(runtime_hash: str) -> dict[str, str]:
    """The safetensors metadata of ``weights.safetensors``, which ties it to its ``artifact.json``."""
    # one metadata key: safetensors writes its metadata map in an arbitrary order, and a file whose
    # bytes vary from run to run could not be pinned by the zoo's sha256
    return {"ftipbook": json.dumps({"format": FORMAT, "runtime_hash": runtime_hash}, sort_keys=True)}


def artifact_files(artifact: ModelArtifact) -> dict[str, bytes]:
    """The bytes of ``weights.safetensors`` and ``artifact.json``, in that order (``artifact.json``,
    which records the runtime hash, is the commit record of the set)."""
    meta = artifact.to_json()
    tensors = {k: v.detach().to("cpu").contiguous().clone() for k, v in artifact.state_dict.items()}
    return {WEIGHTS_FILE: save(tensors, metadata=_weights_metadata(meta["runtime_hash"])),
            META_FILE: (json.dumps(meta, indent=1, sort_keys=True, allow_nan=False) + "\n").encode()}


def save_artifact(artifact: ModelArtifact, directory: str | Path) -> Path:
    """Write ``weights.safetensors`` and ``artifact.json`` into ``directory`` (created if needed) as one
    crash-safe set; other entries of ``directory`` are left alone."""
    return write_file_set(directory, artifact_files(artifact))


def artifact_from_files(files: Mapping[str, bytes | Path], directory: Path) -> ModelArtifact:
    """The artifact in the bytes ``files`` of ``directory`` (:func:`ftipbook.atomic.file_sets`), verified
    against its runtime hash."""
    for name in (META_FILE, WEIGHTS_FILE):
        if isinstance(files[name], Path):
            raise FileNotFoundError(f"{directory} is not an artifact directory: {name} is missing")
    meta_path = directory / META_FILE
    meta = json_record(files[META_FILE], meta_path)
    if meta.get("format") != FORMAT:
        raise ValueError(f"{meta_path} has format {meta.get('format')!r}; expected {FORMAT!r}")
    state_dict = safetensors_record(files[WEIGHTS_FILE], directory / WEIGHTS_FILE)
    try:
        runtime = meta["runtime"]
        tok = runtime["tokenizer"]
        artifact = ModelArtifact(
            cfg=ModelConfig(**runtime["cfg"]),
            state_dict=state_dict,
            numerics=NumericsSpec(**runtime["numerics"]),
            tokenizer=None if tok is None else tokenizer_from_dict(tok),
            provenance=Provenance.from_dict(meta["provenance"]),
        )
        recorded = meta["runtime_hash"]
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{meta_path}: {type(err).__name__}: {err}") from None
    actual = artifact.runtime_hash()
    if actual != recorded:
        raise ValueError(
            f"runtime hash mismatch in {directory}: artifact.json records {str(recorded)[:16]}..., "
            f"the files give {actual[:16]}...; the weights, tokenizer, cfg or numerics were changed"
        )
    if safetensors_metadata(files[WEIGHTS_FILE], directory / WEIGHTS_FILE) != _weights_metadata(recorded):
        raise ValueError(f"{directory / WEIGHTS_FILE} was not saved with this {META_FILE}: its header metadata "
                         f"differs; the file is damaged or comes from another artifact")
    return artifact


def load_artifact(directory: str | Path) -> ModelArtifact:
    """Read an artifact written by :func:`save_artifact`; refuse a runtime-hash mismatch.

    If a save into ``directory`` was killed halfway, the previous artifact is loaded.
    """
    return read_file_set(directory, (WEIGHTS_FILE, META_FILE), artifact_from_files)
