"""Per-token decode time and cache size at a short and a long context, for layer patterns.

Run:  python benchmarks/bench_decode_growth.py [--patterns A KKKA] [--contexts 128 2048] [--steps 32]

For each layer pattern (``A`` full softmax attention, ``K`` KDA, ``M`` MLA; repeated to
``--layers``) a model of the same widths is prefilled to each context length, then timed over
``--steps`` one-token cached decoding steps under ``torch.inference_mode`` (as ``generate`` runs
them). All (pattern, context) pairs are timed in one interleaved loop, so they share the
machine's conditions; the growth ``time at context / time at the first context`` is the median
(and quartiles) of the round-by-round ratios. Full attention reads a cache that grows with the
context; KDA layers carry a fixed-size state, so a hybrid grows only through its attention layers.
"""
from __future__ import annotations

import argparse
import statistics

import torch
from _bench import add_runtime_args, apply_runtime, interleaved_samples, print_table, ratio_spread

from ftipbook.model import ModelConfig, build_model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patterns", nargs="+", default=["A", "KKKA"])
    parser.add_argument("--contexts", nargs="+", type=int, default=[128, 2048])
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=1)
    add_runtime_args(parser)
    args = parser.parse_args(argv)
    device, dtype = apply_runtime(args)
    decoders, cache_bytes = {}, {}
    for pattern in args.patterns:
        cfg = ModelConfig(vocab_size=4096, d_model=256, n_layers=args.layers, n_heads=8, n_kv_heads=4, d_ff=688,
                          max_seq_len=max(args.contexts) + args.steps, layer_pattern=pattern)
        model = build_model(cfg, device=device, dtype=dtype).eval()
        step = torch.zeros(args.batch, 1, dtype=torch.long, device=device)
        for context in args.contexts:
            cache = model.new_cache(args.batch, max_len=context + args.steps * (args.repeats + 2))
            with torch.inference_mode():
                model(torch.randint(0, cfg.vocab_size, (args.batch, context), device=device), cache=cache)
            cache_bytes[pattern, context] = cache.nbytes()

            def decode(model=model, step=step, cache=cache):
                with torch.inference_mode():
                    for _ in range(args.steps):
                        model(step, cache=cache, last_only=True)

            decoders[pattern, context] = decode
    samples = interleaved_samples(decoders, device, args.repeats, warmup=1)
    rows = []
    first = args.contexts[0]
    for pattern, context in decoders:
        q1, growth, q3 = ratio_spread(samples[pattern, context], samples[pattern, first])  # time ratio
        rows.append([pattern * (args.layers // len(pattern)), context,
                     statistics.median(samples[pattern, context]) / args.steps * 1e3,
                     growth, f"{q1:.3f}-{q3:.3f}", cache_bytes[pattern, context] / 2**20])
    print(f"cached decoding, B={args.batch}, d=256, L={args.layers}, {device} {args.dtype}, "
          f"threads={torch.get_num_threads()}, {args.steps} steps x {args.repeats} interleaved rounds")
    print_table(["layers", "context", "ms/token", f"time vs context {first}", "quartiles", "cache MiB after prefill"],
                rows)


if __name__ == "__main__":
    main()
