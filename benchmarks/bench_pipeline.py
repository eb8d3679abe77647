"""Data pipeline throughput: tokenize, clean, pack into PackedBatch (ftip-0017, 001A; tokens/s packed).

Run:  python benchmarks/bench_pipeline.py [--docs 20000] [--T 256] [--B 16] [--repeats 3]

Draws a raw corpus from the book's toy mixture, then times each stage, interleaved:

* ``clean``: ``OrderedPipeline`` (length filter, exact dedup, 13-char decontamination against a
  200-item arithmetic benchmark), documents per second;
* ``tokenize``: ``tokenize_documents`` with a 1000-merge ``ByteLevelBPE`` (cold chunk cache);
* ``pack``: one epoch of ``BatchIterator`` batches (shuffled order, segment ids, masks, targets)
  against the peer "concatenate and reshape" (``torch.cat`` of the epoch's documents cut into
  ``[-1, T]`` rows, no segment ids or masks): the cheapest possible packing.

Prints tokens (or documents) per second and, for packing, the ratio peer time / ours.
"""
from __future__ import annotations

import argparse
import random

import torch

from _bench import add_repeats_arg, interleaved_seconds, print_table

from ftipbook.data.cleaning import Decontaminator, Deduplicator, DocumentFilter, OrderedPipeline
from ftipbook.data.corpus import ArithmeticSource, BenchmarkSource
from ftipbook.data.mixture import toy_mixture
from ftipbook.data.windows import BatchIterator, tokenize_documents
from ftipbook.tokenizer import ByteLevelBPE


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=20000)
    p.add_argument("--T", type=int, default=256)
    p.add_argument("--B", type=int, default=16)
    add_repeats_arg(p, 3)
    args = p.parse_args(argv)

    raw = toy_mixture().documents(args.docs, seed=0)
    bench = BenchmarkSource.from_source("add3-eval", ArithmeticSource(3), 200, seed=1)
    pipeline = OrderedPipeline((DocumentFilter.min_length(8), Deduplicator("exact"),
                                Decontaminator(bench, n=13, unit="char")))
    clean = pipeline(raw)
    tok = ByteLevelBPE.train([d.text for d in clean[: len(clean) // 4]], 1000)
    docs = tokenize_documents(clean, tok)
    n_tokens = sum(len(d) for d in docs)

    def tokenize():
        tok._cache.clear()
        return tokenize_documents(clean, tok)

    def pack_epoch():
        it = BatchIterator(docs, args.T, args.B, pad_id=tok.pad_id, seed=0)
        taken = 0
        while taken < n_tokens:
            batch = next(it)
            taken += int((batch.seg_ids != 0).sum())
        return taken

    def peer_epoch():
        order = list(range(len(docs)))
        random.Random(0).shuffle(order)
        stream = torch.cat([torch.tensor(docs[i].ids) for i in order])
        usable = stream.shape[0] // args.T * args.T
        return stream[:usable].view(-1, args.T)

    seconds = interleaved_seconds({"clean": lambda: pipeline(raw), "tokenize": tokenize, "pack (ours)": pack_epoch,
                                   "pack (peer: cat + view)": peer_epoch}, torch.device("cpu"), args.repeats, warmup=1)
    print(f"raw {len(raw)} docs -> clean {len(clean)} docs -> {n_tokens} tokens; T={args.T}, B={args.B}")
    print_table(["stage", "seconds", "per second", "peer time / ours"], [
        ["clean", round(seconds["clean"], 4), f"{len(raw) / seconds['clean']:.0f} docs", "-"],
        ["tokenize", round(seconds["tokenize"], 4), f"{n_tokens / seconds['tokenize']:.0f} tokens", "-"],
        ["pack (ours)", round(seconds["pack (ours)"], 4), f"{n_tokens / seconds['pack (ours)']:.0f} tokens",
         round(seconds["pack (peer: cat + view)"] / seconds["pack (ours)"], 3)],
        ["pack (peer: cat + view)", round(seconds["pack (peer: cat + view)"], 4),
         f"{n_tokens / seconds['pack (peer: cat + view)']:.0f} tokens", 1.0],
    ])


if __name__ == "__main__":
    main()
