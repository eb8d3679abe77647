"""Exact-answer scoring of verifiable tasks: does the model produce the reference answer, then stop?

The behaviour event of the elicitation and acquisition chapters (ftip-0005, ftip-0007): after
``tokenizer.encode(doc.prompt)`` the model generates until ``eos`` or a length cap; the answer
is correct when the generation stops with ``eos`` and the text before it equals ``doc.answer``.
Greedy decoding (``temperature=0``) makes the event a deterministic function of the model;
sampling makes it a Bernoulli draw whose probability the chapters estimate.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from ftipbook.data.corpus import Document
from ftipbook.model.generate import StopReason, generate
from ftipbook.model.transformer import DecoderLM


def answer_hits(
    model: DecoderLM,
    tokenizer,
    documents: Sequence[Document],
    *,
    temperature: float = 0.0,
    seed: int = 0,
    max_new_tokens: int | None = None,
) -> list[bool]:
    """One bool per document: the generation after its prompt is exactly its answer, then ``eos``.

    Prompts of equal token length are decoded together. ``max_new_tokens`` defaults to the
    longest answer's token count plus one (for ``eos``). Sampling draws with ``seed + i`` for the
    ``i``-th group of prompts, so the result is a function of the arguments.
    """
    if tokenizer.eos_id is None:
        raise ValueError("exact-answer scoring needs a tokenizer with an eos token")
    missing = [d.doc_id for d in documents if d.answer is None]
    if missing:
        raise ValueError(f"documents without a reference answer cannot be scored: {missing[:3]}")
    prompts = [tokenizer.encode(d.prompt) for d in documents]
    if max_new_tokens is None:
        max_new_tokens = max((len(tokenizer.encode(d.answer)) for d in documents), default=0) + 1
    groups: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        groups.setdefault(len(p), []).append(i)
    hits = [False] * len(documents)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    for g, (_, members) in enumerate(sorted(groups.items())):
        batch = torch.tensor([prompts[i] for i in members], device=device)
        outs = generate(model, batch, max_new_tokens, temperature=temperature, seed=seed + g, eos_id=tokenizer.eos_id)
        for i, out in zip(members, outs):
            text = tokenizer.decode(out.new_tokens[:-1].tolist()) if out.stop_reason is StopReason.EOS else None
            hits[i] = text == documents[i].answer
    model.train(was_training)
    return hits


def answer_accuracy(model: DecoderLM, tokenizer, documents: Sequence[Document], **kwargs) -> float:
    """The fraction of :func:`answer_hits` that are ``True``."""
    if not documents:
        raise ValueError("answer_accuracy needs at least one document")
    hits = answer_hits(model, tokenizer, documents, **kwargs)
    return sum(hits) / len(hits)
