"""Context windows, sequence packing and the training-batch contract (ftip-0019, ftip-001A, ftip-006K).

Conventions (one row of length ``T``):

* A *tokenized document* is a :class:`TokenizedDocument`: its ids and, per token, whether it
  may be a prediction target (``predict``; ``False`` for prompt tokens of a task one trains
  only on answers, or for an excluded control token). A plain list of ids means every token
  may be predicted.
* A *packed record* ``zeta = (x, m, c, M_doc)`` (:class:`PackedRecord`, ftip-001A) holds tokens
  ``x``, segment ids ``c`` (``0`` = padding, ``1..r`` for the segments in row order), and the
  prediction mask ``m``: ``m_t = 1`` iff token ``t`` may be predicted, is not padding, and its
  predecessor ``t - 1`` lies in the same segment. So ``m = 0`` at the row's first position, on
  padding and on every segment's first token. ``M_doc`` is the block-causal mask of ``c``
  (:func:`ftipbook.model.masks.document_mask`); the ftipbook ``DecoderLM`` builds it itself
  from ``seg_ids`` and restarts positions at each segment.

**The batch contract** consumed by the trainer is :class:`PackedBatch`, ``B`` records stacked:

=============  ===================  ==========================================================
field          shape, dtype         meaning
=============  ===================  ==========================================================
``tokens``     ``[B, T]`` long      ``x``: the model input
``targets``    ``[B, T]`` long      next token: ``targets[:, t] = tokens[:, t + 1]``; the last
                                    column holds ``pad_id`` (never scored)
``loss_mask``  ``[B, T]`` bool      ``m`` shifted to the predicting position:
                                    ``loss_mask[:, t] = m_{t+1}``; ``False`` on padding, in the
                                    last column, and wherever the target starts a new segment
``seg_ids``    ``[B, T]`` long      ``c``: pass as ``model(tokens, seg_ids=seg_ids)``
=============  ===================  ==========================================================

so the per-predicted-token loss of ftip-001E over a batch is ``sum(nll[loss_mask]) /
loss_mask.sum()`` (:func:`ftipbook.data.objective.minibatch_loss`).

:class:`WindowSampler` draws single windows with a declared offset and remainder policy
(``pad``, ``drop`` or ``join``); :func:`pack_documents` packs a list of documents in order;
:class:`BatchIterator` turns a tokenized corpus into an endless, deterministic, resumable
stream of batches (epoch ``e`` permutes the documents with a seed derived from ``(seed, e)``).
"""
from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ftipbook.data.corpus import Document
from ftipbook.model.masks import document_mask
from ftipbook.tokenizer import TokenizerLike

REMAINDERS = ("pad", "drop", "join")
OFFSETS = ("doc_start", "uniform")


@dataclass(frozen=True)
class TokenizedDocument:
    """Token ids of one document and, per token, whether it may be a prediction target."""

    ids: tuple[int, ...]
    predict: tuple[bool, ...]
    doc_id: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", tuple(int(i) for i in self.ids))
        object.__setattr__(self, "predict", tuple(bool(p) for p in self.predict))
        if len(self.ids) != len(self.predict):
            raise ValueError(f"{len(self.ids)} ids but {len(self.predict)} predict flags")
        if not self.ids:
            raise ValueError(f"document {self.doc_id!r} has no tokens")
        if min(self.ids) < 0:
            raise ValueError(f"document {self.doc_id!r} has a negative token id")

    def __len__(self) -> int:
        return len(self.ids)


def as_tokenized(doc: TokenizedDocument | Sequence[int]) -> TokenizedDocument:
    """A :class:`TokenizedDocument`; a plain id sequence gets ``predict`` all ``True``."""
    if isinstance(doc, TokenizedDocument):
        return doc
    if isinstance(doc, (str, bytes)) or not isinstance(doc, Sequence):
        raise TypeError(f"a tokenized document is a TokenizedDocument or a sequence of ids, got {type(doc).__name__}")
    return TokenizedDocument(tuple(doc), (True,) * len(doc))


def tokenize_documents(
    documents: Sequence[Document], tokenizer: TokenizerLike, *, add_eos: bool = True, answers_only: bool = False
) -> list[TokenizedDocument]:
    """Tokenize documents; ``eos`` closes each one when ``add_eos``.

    A document with an answer is tokenized as ``encode(prompt) + encode(answer)`` so the answer
    tokens are known; with ``answers_only`` only those (and the ``eos``) may be predicted.
    """
    eos = tokenizer.eos_id if add_eos else None
    if add_eos and eos is None:
        raise ValueError("add_eos=True but the tokenizer has no eos token")
    out = []
    for d in documents:
        if not isinstance(d, Document):
            raise TypeError(f"tokenize_documents takes Documents, got {type(d).__name__}")
        if d.answer is None:
            if answers_only:
                raise ValueError(f"answers_only=True but document {d.doc_id!r} has no answer")
            prompt, answer = tokenizer.encode(d.text), []
        else:
            prompt, answer = tokenizer.encode(d.prompt), tokenizer.encode(d.answer)
        ids = prompt + answer + ([eos] if add_eos else [])
        predict = [not answers_only] * len(prompt) + [True] * (len(ids) - len(prompt))
        out.append(TokenizedDocument(tuple(ids), tuple(predict), d.doc_id))
    return out


@dataclass(frozen=True)
class Segment:
    """Where a piece of a document sits in a row: ``doc`` (index in the corpus), its first token
    ``start`` in that document, its ``length`` and the row position ``at`` where it begins."""

    doc: int
    start: int
    length: int
    at: int


@dataclass(frozen=True, eq=False)
class PackedRecord:
    """A packed training record ``zeta = (x, m, c, M_doc)`` of ftip-001A (rules in the module docstring)."""

    tokens: torch.Tensor  # x, long [T]
    mask: torch.Tensor  # m, bool [T]
    seg_ids: torch.Tensor  # c, long [T]; 0 = padding
    segments: tuple[Segment, ...] = field(default=())

    @property
    def length(self) -> int:
        return self.tokens.shape[0]

    @property
    def num_predicted(self) -> int:
        """``sum_t m_t``."""
        return int(self.mask.sum())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PackedRecord):
            return NotImplemented
        return self.segments == other.segments and all(
            torch.equal(getattr(self, f), getattr(other, f)) for f in ("tokens", "mask", "seg_ids"))

    def doc_mask(self, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """``M_doc [T, T]``: ``0`` where ``c_t = c_s != 0`` and ``s <= t``, ``-inf`` elsewhere."""
        return document_mask(self.seg_ids.unsqueeze(0), dtype=dtype)[0]


def _row_mask(seg: torch.Tensor, predict: torch.Tensor) -> torch.Tensor:
    """``m`` for rows ``[..., T]`` of segment ids and predict flags."""
    m = predict & (seg != 0)
    m[..., 0] = False
    m[..., 1:] &= seg[..., 1:] == seg[..., :-1]
    return m


@dataclass
class _Row:
    """A row under construction (plain lists: packing is list work, tensors are made once)."""

    tokens: list[int] = field(default_factory=list)
    seg: list[int] = field(default_factory=list)
    predict: list[bool] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)

    def add(self, doc: TokenizedDocument, index: int, start: int, length: int) -> None:
        self.segments.append(Segment(index, start, length, len(self.tokens)))
        self.tokens += doc.ids[start:start + length]
        self.predict += doc.predict[start:start + length]
        self.seg += [len(self.segments)] * length

    def padded(self, t: int, pad_id: int) -> _Row:
        n = t - len(self.tokens)
        self.tokens += [pad_id] * n
        self.seg += [0] * n
        self.predict += [False] * n
        return self

    def record(self) -> PackedRecord:
        seg, predict = torch.tensor(self.seg), torch.tensor(self.predict)
        return PackedRecord(torch.tensor(self.tokens), _row_mask(seg, predict), seg, tuple(self.segments))


def _check_common(t: int, pad_id: int) -> None:
    if not isinstance(t, int) or isinstance(t, bool) or t < 2:
        raise ValueError(f"the context length T must be an int >= 2, got {t!r}")
    if not isinstance(pad_id, int) or isinstance(pad_id, bool) or pad_id < 0:
        raise ValueError(f"pad_id must be an int >= 0, got {pad_id!r}")


def _pack_rows(docs: Sequence[TokenizedDocument], order: Sequence[int], t: int, pad_id: int, split: bool,
               rotate: int = 0) -> list[_Row]:
    """Rows of length ``t`` from the documents in ``order`` (see :func:`pack_documents`)."""
    rows, row = [], _Row()
    pieces: list[tuple[int, int, int]] = [(i, 0, len(docs[i])) for i in order]
    if rotate:
        pieces = _rotate(pieces, rotate)
    for index, start, length in pieces:
        doc = docs[index]
        while length:
            room = t - len(row.tokens)
            if not split and length > room and row.tokens and length <= t:
                rows.append(row.padded(t, pad_id))  # start the document in a fresh row
                row, room = _Row(), t
            take = min(room, length)
            row.add(doc, index, start, take)
            start, length = start + take, length - take
            if len(row.tokens) == t:
                rows.append(row)
                row = _Row()
    if row.tokens:
        rows.append(row.padded(t, pad_id))
    return rows


def _rotate(pieces: list[tuple[int, int, int]], k: int) -> list[tuple[int, int, int]]:
    """Rotate the concatenated token stream left by ``k``: its first ``k`` tokens move to the end."""
    head, tail, seen = [], [], 0
    for index, start, length in pieces:
        if seen + length <= k:
            tail.append((index, start, length))
        elif seen >= k:
            head.append((index, start, length))
        else:
            cut = k - seen
            tail.append((index, start, cut))
            head.append((index, start + cut, length - cut))
        seen += length
    return head + tail


def pack_documents(docs: Sequence[TokenizedDocument | Sequence[int]], t: int, *, pad_id: int, split: bool = True) -> list[PackedRecord]:
    """Pack documents, in the given order, into records of length ``t`` (ftip-001A).

    ``split=True`` concatenates the documents and cuts the stream every ``t`` tokens; a document
    cut at a row end continues in the next row as a new segment (whose first token is not
    predicted). ``split=False`` never cuts a document that fits in a row: one that does not fit
    in the current row's remaining room starts a new row, and the room left is padded; a
    document longer than ``t`` is cut as with ``split=True``. The last row is padded.
    """
    _check_common(t, pad_id)
    tokenized = [as_tokenized(d) for d in docs]
    if not tokenized:
        raise ValueError("pack_documents needs at least one document")
    return [row.record() for row in _pack_rows(tokenized, range(len(tokenized)), t, pad_id, split)]


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WindowSampler:
    """Context-window sampler of ftip-0019 over a tokenized corpus (documents drawn uniformly).

    A draw picks a document and an offset (``"doc_start"``: 0; ``"uniform"``: uniform over the
    document's positions) and reads ``T`` tokens from there. When fewer than ``T`` remain, the
    ``remainder`` policy decides: ``"pad"`` pads the row; ``"drop"`` rejects the draw and draws
    again; ``"join"`` appends further documents (drawn the same way, read from their start) as
    new segments until the row is full. Window tokens before the offset are not in the row, so
    the row's first token is not predicted.
    """

    docs: tuple[TokenizedDocument, ...]
    t: int
    pad_id: int
    offset: str = "doc_start"
    remainder: str = "pad"

    def __post_init__(self) -> None:
        _check_common(self.t, self.pad_id)
        object.__setattr__(self, "docs", tuple(as_tokenized(d) for d in self.docs))
        if not self.docs:
            raise ValueError("a window sampler needs at least one document")
        if self.offset not in OFFSETS:
            raise ValueError(f"offset must be one of {OFFSETS}, got {self.offset!r}")
        if self.remainder not in REMAINDERS:
            raise ValueError(f"remainder must be one of {REMAINDERS}, got {self.remainder!r}")
        if self.remainder == "drop":
            longest = max(len(d) for d in self.docs)
            if longest < self.t:
                raise ValueError(f"remainder='drop' needs a document of at least T={self.t} tokens; the longest has {longest}")

    def _start(self, rng: random.Random) -> tuple[int, int]:
        index = rng.randrange(len(self.docs))
        start = 0 if self.offset == "doc_start" else rng.randrange(len(self.docs[index]))
        return index, start

    def sample(self, rng: random.Random) -> PackedRecord:
        """One window, as a :class:`PackedRecord` whose ``segments`` name the documents it holds."""
        if not isinstance(rng, random.Random):
            raise TypeError(f"the sampler draws from a random.Random, got {type(rng).__name__}")
        for _ in range(10_000):
            index, start = self._start(rng)
            left = len(self.docs[index]) - start
            if left >= self.t or self.remainder != "drop":
                break
        else:
            raise ValueError(f"remainder='drop' rejected 10000 draws in a row: too few windows of T={self.t} tokens")
        row = _Row()
        row.add(self.docs[index], index, start, min(left, self.t))
        while self.remainder == "join" and len(row.tokens) < self.t:
            index = rng.randrange(len(self.docs))
            row.add(self.docs[index], index, 0, min(len(self.docs[index]), self.t - len(row.tokens)))
        return row.padded(self.t, self.pad_id).record()

    def samples(self, n: int, seed: int) -> list[PackedRecord]:
        """``n`` windows drawn with ``random.Random(seed)``."""
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an int >= 0, got {n!r}")
        rng = random.Random(seed)
        return [self.sample(rng) for _ in range(n)]


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PackedBatch:
    """The batch contract between the data pipeline and the trainer (table in the module docstring)."""

    tokens: torch.Tensor  # [B, T] long
    targets: torch.Tensor  # [B, T] long
    loss_mask: torch.Tensor  # [B, T] bool
    seg_ids: torch.Tensor  # [B, T] long, 0 = padding

    def __post_init__(self) -> None:
        shape = self.tokens.shape
        if self.tokens.dim() != 2:
            raise ValueError(f"tokens must be [B, T], got shape {tuple(shape)}")
        for name, dtype in (("tokens", torch.long), ("targets", torch.long), ("loss_mask", torch.bool), ("seg_ids", torch.long)):
            value = getattr(self, name)
            if value.shape != shape or value.dtype != dtype:
                raise ValueError(f"{name} must be {dtype} of shape {tuple(shape)}, got {value.dtype} {tuple(value.shape)}")

    @classmethod
    def from_records(cls, records: Sequence[PackedRecord], *, pad_id: int) -> PackedBatch:
        """Stack records; targets and loss mask are the records' ``x`` and ``m`` shifted left by one."""
        if not records:
            raise ValueError("a batch needs at least one record")
        if len({r.length for r in records}) != 1:
            raise ValueError(f"records of different lengths {sorted({r.length for r in records})} cannot be stacked")
        tokens = torch.stack([r.tokens for r in records])
        return cls._shifted(tokens, torch.stack([r.seg_ids for r in records]), torch.stack([r.mask for r in records]), pad_id)

    @classmethod
    def _shifted(cls, tokens: torch.Tensor, seg: torch.Tensor, mask: torch.Tensor, pad_id: int) -> PackedBatch:
        targets = torch.full_like(tokens, pad_id)
        targets[:, :-1] = tokens[:, 1:]
        loss_mask = torch.zeros_like(mask)
        loss_mask[:, :-1] = mask[:, 1:]
        return cls(tokens, targets, loss_mask, seg)

    @property
    def num_predicted(self) -> int:
        """``N_k``: the number of predicted tokens in the batch."""
        return int(self.loss_mask.sum())

    def to(self, device: torch.device | str) -> PackedBatch:
        return PackedBatch(*(getattr(self, f).to(device) for f in ("tokens", "targets", "loss_mask", "seg_ids")))

    def shard(self, rank: int, world_size: int) -> PackedBatch:
        """Rows ``[rank * B / world_size, (rank + 1) * B / world_size)``: one data-parallel worker's part.

        For a loss equal to the single-process one, normalize each worker's summed NLL by the
        *global* ``num_predicted`` (see :func:`ftipbook.data.objective.minibatch_loss`).
        """
        b = self.tokens.shape[0]
        if not (isinstance(world_size, int) and world_size >= 1 and b % world_size == 0):
            raise ValueError(f"batch size {b} must be divisible by world_size={world_size!r}")
        if not (isinstance(rank, int) and 0 <= rank < world_size):
            raise ValueError(f"rank must be in [0, {world_size}), got {rank!r}")
        rows = slice(rank * b // world_size, (rank + 1) * b // world_size)
        return PackedBatch(self.tokens[rows], self.targets[rows], self.loss_mask[rows], self.seg_ids[rows])


class BatchIterator:
    """An endless, deterministic stream of :class:`PackedBatch` over a tokenized corpus.

    Epoch ``e`` permutes the documents with ``random.Random(f"{seed}/{e}")`` (``seed=None``: keep
    the corpus order), optionally rotates the concatenated token stream left by an offset drawn
    from ``random.Random(f"{offset_seed}/{e}")`` in ``[0, T)``, packs it with
    :func:`pack_documents`' rules, and optionally shuffles the packed rows with
    ``random.Random(f"{order_seed}/{e}")``. The epochs' rows form one stream; batch ``k`` is rows
    ``k B .. k B + B - 1`` of it, so batches may straddle epochs.

    ``state_dict()`` records how many batches were taken; a new iterator with the same
    arguments and ``load_state_dict(state)`` yields exactly the batches the first would have
    yielded next.
    """

    def __init__(
        self,
        docs: Sequence[TokenizedDocument | Sequence[int]],
        t: int,
        batch_size: int,
        *,
        pad_id: int,
        seed: int | None = 0,
        split: bool = True,
        offset_seed: int | None = None,
        order_seed: int | None = None,
    ) -> None:
        _check_common(t, pad_id)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        for name, value in (("seed", seed), ("offset_seed", offset_seed), ("order_seed", order_seed)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(f"{name} must be an int or None, got {value!r}")
        if offset_seed is not None and not split:
            raise ValueError("offset_seed rotates the concatenated stream, so it needs split=True")
        self.docs = tuple(as_tokenized(d) for d in docs)
        if not self.docs:
            raise ValueError("a batch iterator needs at least one document")
        self.t, self.batch_size, self.pad_id = t, batch_size, pad_id
        self.seed, self.split, self.offset_seed, self.order_seed = seed, split, offset_seed, order_seed
        self.position = 0  # batches taken so far
        self._epoch, self._rows, self._row_base = -1, [], 0  # rows of the cached epoch and its first stream index

    def config(self) -> dict[str, Any]:
        """What determines the stream (the corpus enters through its size and token count)."""
        return {"t": self.t, "batch_size": self.batch_size, "pad_id": self.pad_id, "seed": self.seed,
                "split": self.split, "offset_seed": self.offset_seed, "order_seed": self.order_seed,
                "num_docs": len(self.docs), "num_tokens": sum(len(d) for d in self.docs)}

    def epoch_rows(self, epoch: int) -> list[PackedRecord]:
        """The packed records of epoch ``epoch``, in stream order."""
        return [row.record() for row in self._pack_epoch(epoch)]

    def _pack_epoch(self, epoch: int) -> list[_Row]:
        order = list(range(len(self.docs)))
        if self.seed is not None:
            random.Random(f"{self.seed}/{epoch}").shuffle(order)
        rotate = 0 if self.offset_seed is None else random.Random(f"{self.offset_seed}/{epoch}").randrange(self.t)
        rows = _pack_rows(self.docs, order, self.t, self.pad_id, self.split, rotate)
        if self.order_seed is not None:
            random.Random(f"{self.order_seed}/{epoch}").shuffle(rows)
        return rows

    def _row(self, index: int) -> _Row:
        if index < self._row_base or self._epoch < 0:
            self._epoch, self._row_base, self._rows = 0, 0, self._pack_epoch(0)
        while index >= self._row_base + len(self._rows):
            self._row_base += len(self._rows)
            self._epoch += 1
            self._rows = self._pack_epoch(self._epoch)
        return self._rows[index - self._row_base]

    def batch(self, k: int) -> PackedBatch:
        """Batch ``k`` of the stream (does not move the position)."""
        if not isinstance(k, int) or k < 0:
            raise ValueError(f"batch index must be an int >= 0, got {k!r}")
        rows = [self._row(k * self.batch_size + j) for j in range(self.batch_size)]
        tokens = torch.tensor([r.tokens for r in rows])
        seg = torch.tensor([r.seg for r in rows])
        mask = _row_mask(seg, torch.tensor([r.predict for r in rows]))
        return PackedBatch._shifted(tokens, seg, mask, self.pad_id)

    def __iter__(self) -> Iterator[PackedBatch]:
        return self

    def __next__(self) -> PackedBatch:
        out = self.batch(self.position)
        self.position += 1
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"position": self.position, "config": self.config()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state``; refuses a state written by an iterator with other arguments."""
        if state.get("config") != self.config():
            raise ValueError(f"this state belongs to an iterator with config {state.get('config')}, not {self.config()}")
        position = state.get("position")
        if not isinstance(position, int) or position < 0:
            raise ValueError(f"state position must be an int >= 0, got {position!r}")
        self.position = position
