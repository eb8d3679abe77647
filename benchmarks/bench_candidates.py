"""k sampled candidates per prompt: one ``sample_candidates`` call vs k sequential ``generate`` calls.

Run:  python benchmarks/bench_candidates.py [--k 16] [--zoo base-mha] [--threads 2] [--repeats 7]

Two workloads, each on one model with the same seeds in both arms:

- ``zoo``: the zoo model ``--zoo`` on ``--prompts`` arithmetic prompts (2- and 3-digit additions
  from the protected evaluation sets, so two prompt lengths), temperature 1, stop at ``eos``,
  at most ``--zoo-new`` new tokens;
- ``wide``: a random 4-layer, width-256 GQA decoder (vocabulary 4096) on two random prompts of
  lengths 24 and 32, temperature 1 (and top-p ``--wide-top-p`` if given), ``--wide-new`` new
  tokens (no early stop). Top-p sorts every row's law at every step, a per-row cost that
  batching does not share, so it lowers the ratio.

The sequential arm is ``generate(model, prompts[i], ..., seed=candidate_seed(seed, i, j))`` for
every prompt ``i`` and candidate ``j``, which is by definition what ``sample_candidates`` returns.
The script counts the candidates whose tokens differ between the arms (the float32 rounding
caveat of ``ftipbook.model.candidates``), asserts there are none, and reports the median time of
each arm and the speed ratio as the median (and quartiles) of the ratios taken round by round,
all in one process with the arms interleaved.
"""
from __future__ import annotations

import argparse
import statistics

import torch
from _bench import add_runtime_args, apply_runtime, interleaved_samples, print_table, ratio_spread

from ftipbook import zoo
from ftipbook.model import ModelConfig, build_model, candidate_seed, generate, sample_candidates

SEED = 0


def zoo_workload(args: argparse.Namespace, device: torch.device, dtype: torch.dtype) -> tuple:
    model = zoo.load_model(args.zoo, device=device).to(dtype).eval()
    tok = zoo.tokenizer()
    half = args.prompts // 2
    docs = zoo.benchmark("add2-eval").items[:half] + zoo.benchmark("add3-heldout").items[: args.prompts - half]
    prompts = [tok.encode(doc.prompt) for doc in docs]
    return model, prompts, args.zoo_new, dict(temperature=1.0, eos_id=tok.eos_id)


def wide_workload(args: argparse.Namespace, device: torch.device, dtype: torch.dtype) -> tuple:
    cfg = ModelConfig(vocab_size=4096, d_model=256, n_layers=4, n_heads=8, n_kv_heads=4, d_ff=688, max_seq_len=128)
    model = build_model(cfg, seed=0, device=device, dtype=dtype).eval()
    rng = torch.Generator().manual_seed(0)
    prompts = [torch.randint(0, cfg.vocab_size, (n,), generator=rng).tolist() for n in (24, 32)]
    return model, prompts, args.wide_new, dict(temperature=1.0, top_p=args.wide_top_p)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=16, help="candidates per prompt")
    parser.add_argument("--zoo", default="base-mha", help="zoo model of the zoo workload")
    parser.add_argument("--prompts", type=int, default=4, help="arithmetic prompts of the zoo workload")
    parser.add_argument("--zoo-new", type=int, default=16, help="max new tokens of the zoo workload")
    parser.add_argument("--wide-new", type=int, default=32, help="new tokens of the wide workload")
    parser.add_argument("--wide-top-p", type=float, default=None, help="top-p of the wide workload (default: none)")
    add_runtime_args(parser)
    parser.set_defaults(repeats=7)
    args = parser.parse_args(argv)
    device, dtype = apply_runtime(args)

    rows = []
    wide = "wide GQA" + ("" if args.wide_top_p is None else f" top-p {args.wide_top_p:g}")
    for name, workload in (("zoo " + args.zoo, zoo_workload), (wide, wide_workload)):
        model, prompts, new, kwargs = workload(args, device, dtype)

        def sequential():
            return [[generate(model, p, new, seed=candidate_seed(SEED, i, j), **kwargs) for j in range(args.k)]
                    for i, p in enumerate(prompts)]

        def batched():
            return sample_candidates(model, prompts, args.k, new, seed=SEED, **kwargs)

        pairs = [(a, b) for ra, rb in zip(sequential(), batched()) for a, b in zip(ra, rb)]
        differ = sum(not torch.equal(a.tokens, b.tokens) or a.stop_reason != b.stop_reason for a, b in pairs)
        assert differ == 0, f"{name}: {differ} of {len(pairs)} candidates differ from sequential generate"
        n_new = sum(len(b.new_tokens) for _, b in pairs)
        samples = interleaved_samples({"sequential": sequential, "batched": batched}, device, args.repeats,
                                      warmup=1)
        q1, ratio, q3 = ratio_spread(samples["sequential"], samples["batched"])
        lengths = sorted({len(p) for p in prompts})
        rows.append([name, f"{len(prompts)} x {args.k}", ",".join(map(str, lengths)), n_new,
                     f"{differ}/{len(pairs)}", statistics.median(samples["sequential"]),
                     statistics.median(samples["batched"]), ratio, f"{q1:.2f}-{q3:.2f}"])
    print(f"k={args.k} candidates per prompt, temperature 1, {device} {args.dtype}, "
          f"threads={torch.get_num_threads()}, {args.repeats} interleaved rounds")
    print_table(["workload", "N x k", "prompt lengths", "new tokens", "differ", "sequential s", "batched s",
                 "speed ratio", "quartiles"], rows)


if __name__ == "__main__":
    main()
