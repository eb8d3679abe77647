"""ByteLevelBPE encode throughput against Hugging Face ``tokenizers`` and ``tiktoken`` with the same merges (ftip-000E).

Run:  python benchmarks/bench_tokenizer.py [--docs 20000] [--merges 1000] [--repeats 3]

Builds a raw corpus from the book's toy mixture (offline), trains ``ByteLevelBPE`` on its first
quarter, and converts it with ``to_hf()`` into a ``tokenizers.Tokenizer`` holding the same
vocabulary, merges, normalizer and pre-tokenization regex, and with ``to_tiktoken()`` into a
``tiktoken.Encoding`` with the same merges (tiktoken has no normalizer; the toy corpus is ASCII,
which NFKC leaves alone, so the ids still agree). Then it times, interleaved:

* ``text``: encoding the whole corpus as one string (ours with an empty chunk cache each call,
  and with the cache warm from the previous call; Hugging Face ``encode``; tiktoken ``encode``);
* ``docs``: encoding document by document (ours in a loop; Hugging Face ``encode_batch`` and
  tiktoken ``encode_batch``, which use all CPU threads they are allowed).

It checks that all three give the same ids and prints MB/s and each peer's time over ours
(above 1: ours is faster).
"""
from __future__ import annotations

import argparse

from _bench import add_repeats_arg, interleaved_seconds, print_table

from ftipbook.data.mixture import toy_mixture
from ftipbook.tokenizer import ByteLevelBPE, Normalizer


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=20000)
    p.add_argument("--merges", type=int, default=1000)
    add_repeats_arg(p, 3)
    args = p.parse_args(argv)
    import os

    import torch

    texts = [d.text for d in toy_mixture().documents(args.docs, seed=0)]
    corpus = "\n".join(texts)
    mb = len(corpus.encode()) / 1e6
    ours = ByteLevelBPE.train(texts[: len(texts) // 4], args.merges, normalizer=Normalizer(nfkc=True))
    hf = ours.to_hf()
    tk = ByteLevelBPE.from_dict({**ours.to_dict(), "normalizer": Normalizer().to_dict()}).to_tiktoken()

    ids = ours.encode(corpus)
    doc_ids = [ours.encode(t) for t in texts]
    same_text = ids == hf.encode(corpus).ids == tk.encode(corpus)
    same_docs = doc_ids == [e.ids for e in hf.encode_batch(texts)] == tk.encode_batch(texts)

    def ours_cold_text():
        ours._cache.clear()
        return ours.encode(corpus)

    def ours_cold_docs():
        ours._cache.clear()
        return [ours.encode(t) for t in texts]

    fns = {
        "text ours (cold cache)": ours_cold_text,
        "text ours (warm cache)": lambda: ours.encode(corpus),
        "text HF encode": lambda: hf.encode(corpus),
        "text tiktoken encode": lambda: tk.encode(corpus),
        "docs ours (cold cache)": ours_cold_docs,
        "docs HF encode_batch": lambda: hf.encode_batch(texts),
        "docs tiktoken encode_batch": lambda: tk.encode_batch(texts),
    }
    seconds = interleaved_seconds(fns, torch.device("cpu"), args.repeats, warmup=1)
    hf_time = {"text": seconds["text HF encode"], "docs": seconds["docs HF encode_batch"]}
    tk_time = {"text": seconds["text tiktoken encode"], "docs": seconds["docs tiktoken encode_batch"]}
    rows = [[name, round(s, 4), round(mb / s, 2), round(hf_time[name.split()[0]] / s, 3),
             round(tk_time[name.split()[0]] / s, 3)] for name, s in seconds.items()]
    print(f"corpus: {args.docs} toy-mixture documents, {mb:.2f} MB, {len(ids)} tokens; "
          f"{len(ours.merges)} merges, vocab {ours.vocab_size}")
    print(f"same ids in all three: whole text {same_text}, per document {same_docs}; "
          f"{os.cpu_count()} CPUs, RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS', 'unset')}")
    print_table(["run", "seconds", "MB/s", "HF time / this", "tiktoken time / this"], rows)


if __name__ == "__main__":
    main()
