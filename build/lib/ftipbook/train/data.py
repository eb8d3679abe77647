"""The data side of a standard run: a tokenizer for the toy corpus, batch streams, fixed eval batches.

These helpers only connect pieces that live elsewhere: documents come from
:mod:`ftipbook.data.corpus` / :mod:`ftipbook.data.mixture`, tokenization from
:mod:`ftipbook.tokenizer`, packing and the resumable stream from :mod:`ftipbook.data.windows`.
The seeds of :class:`~ftipbook.train.config.RunRandomness` enter here: ``data_order`` permutes
the documents each epoch and ``window_offset`` shifts where the windows cut the token stream.
"""
from __future__ import annotations

from collections.abc import Sequence

from ftipbook.data.corpus import Document
from ftipbook.data.windows import BatchIterator, PackedBatch, tokenize_documents
from ftipbook.tokenizer import DEFAULT_SPECIALS, ByteLevelBPE
from ftipbook.train.config import RunRandomness, TrainConfig

#: The pre-tokenization rule of the book's trained models. It is
#: :data:`ftipbook.tokenizer.PRETOKENIZE_PATTERN` except that every decimal digit is its own
#: chunk (`` ?\d`` instead of `` ?\d+``), so no merge spans two digits and numbers are read
#: digit by digit, as in LLaMA's tokenizer.
DIGIT_PATTERN = r" ?[^\W\d_]+| ?\d| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"


def train_tokenizer(documents: Sequence[Document], vocab_size: int = 512) -> ByteLevelBPE:
    """A byte-level BPE with :data:`~ftipbook.train.data.DIGIT_PATTERN`, trained on ``documents`` up to ``vocab_size`` ids.

    The vocabulary holds 256 bytes, the merges and the default control tokens; training stops
    early (a smaller vocabulary) when no pair occurs twice.
    """
    merges = vocab_size - 256 - len(DEFAULT_SPECIALS)
    if not isinstance(vocab_size, int) or merges < 0:
        raise ValueError(f"vocab_size={vocab_size!r} must be an int >= {256 + len(DEFAULT_SPECIALS)} (bytes + control tokens)")
    if not documents:
        raise ValueError("train_tokenizer needs at least one document")
    return ByteLevelBPE.train([d.text for d in documents], merges, pattern=DIGIT_PATTERN)


def batch_stream(
    documents: Sequence[Document],
    tokenizer: ByteLevelBPE,
    cfg: TrainConfig,
    randomness: RunRandomness,
    *,
    answers_only: bool = False,
    split: bool = True,
) -> BatchIterator:
    """The endless, resumable stream of ``[cfg.batch_size, cfg.seq_len]`` batches over ``documents``.

    Every document ends with ``eos``. ``answers_only`` scores only answer tokens and ``eos``
    (supervised fine-tuning on prompt/answer pairs); ``split=False`` keeps each document that
    fits whole in one row (and then ``window_offset`` is not used).
    """
    docs = tokenize_documents(documents, tokenizer, answers_only=answers_only)
    return BatchIterator(docs, cfg.seq_len, cfg.batch_size, pad_id=tokenizer.pad_id, seed=randomness.data_order,
                         split=split, offset_seed=randomness.window_offset if split else None)


def fixed_batches(
    documents: Sequence[Document], tokenizer: ByteLevelBPE, seq_len: int, batch_size: int, n_batches: int
) -> list[PackedBatch]:
    """The first ``n_batches`` batches of ``documents`` packed in their given order (for evaluation)."""
    if not isinstance(n_batches, int) or n_batches < 1:
        raise ValueError(f"n_batches={n_batches!r} must be an int >= 1")
    stream = BatchIterator(tokenize_documents(documents, tokenizer), seq_len, batch_size,
                           pad_id=tokenizer.pad_id, seed=None)
    return [stream.batch(k) for k in range(n_batches)]
