"""Cached greedy generation throughput of DecoderLM vs transformers' ``generate`` (same weights).

Run:  python benchmarks/bench_generate.py [--preset small] [--batch 1] [--prompt 32] [--new 128]

Both models come from one random Llama checkpoint; each generates ``--new`` tokens greedily after
the same prompt with its own KV cache (no early stop). The script checks that both produce the
same tokens and reports the median time, new tokens/s, and the speed ratio as the median (and
quartiles) of the ratios taken round by round, all measured in one process.
"""
from __future__ import annotations

import argparse
import statistics

import torch
from _bench import PRESETS, add_runtime_args, apply_runtime, interleaved_samples, llama_twins, print_table, ratio_spread

from ftipbook.model import generate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--new", type=int, default=128)
    add_runtime_args(parser)
    args = parser.parse_args(argv)
    device, dtype = apply_runtime(args)
    hf, ours = llama_twins(PRESETS[args.preset], device, dtype)
    hf.eval(), ours.eval()
    prompt = torch.randint(0, PRESETS[args.preset]["vocab_size"], (args.batch, args.prompt), device=device)

    def run_hf():
        return hf.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=args.new,
                           min_new_tokens=args.new, do_sample=False, pad_token_id=0)[:, args.prompt:]

    def run_ours():
        return torch.stack([g.new_tokens for g in generate(ours, prompt, args.new)])

    with torch.no_grad():
        same = torch.equal(run_hf().cpu(), run_ours().cpu())
        samples = interleaved_samples({"transformers generate": run_hf, "ftipbook generate": run_ours},
                                      device, args.repeats, warmup=1)
    n_new = args.batch * args.new
    print(f"greedy generation, preset {args.preset}, B={args.batch} prompt={args.prompt} new={args.new}, "
          f"{device} {args.dtype}, threads={torch.get_num_threads()}, {args.repeats} interleaved rounds, "
          f"identical tokens: {same}")
    rows = []
    for name, times in samples.items():
        q1, ratio, q3 = ratio_spread(samples["transformers generate"], times)
        s = statistics.median(times)
        rows.append([name, s, n_new / s, ratio, f"{q1:.3f}-{q3:.3f}"])
    print_table(["implementation", "s/run", "new tokens/s", "speed vs transformers", "quartiles"], rows)

if __name__ == "__main__":
    main()
