"""Measured attempt throughput of a KDA hybrid against full attention, versus the ftip-00L3 model.

Run:  python benchmarks/bench_attempt_throughput.py [--prompt 4096] [--answer 128] [--budget 15] [--threads 1]

An *attempt* is: prefill a long prompt, generate an answer greedily with the cache (together:
*generation*), then *verify* it. The declared verifier is the same in both arms: a fixed
2-layer full-attention model scores the answer given the last ``--window`` prompt tokens (one
uncached forward pass) and accepts when the answer's mean log-probability exceeds a threshold.

Two tiny ``ftipbook`` decoders of equal widths are compared: the full reference (``--full``, all
MLA layers by default) and the 3:1 hybrid (``--hybrid``, ``KKKM``: MLA with NoPE, as in Kimi
Linear). The script measures, with interleaved medians,

- the baseline's generation and verification times, hence the generation share ``f``;
- the generation speed factor ``s = gen_full / gen_hybrid`` and the decode-only factor
  ``s_decode`` (the proxy the note uses: a decoding speedup applied to the whole generation stage);
- whole attempts of each arm, end to end, hence the measured attempts per unit time ratio;
- completed attempts of each arm within a budget of ``--budget`` seconds of its own run time
  (the arms take turns, so both see the same machine conditions).

It prints the predicted factor ``S = 1 / (1 - f + f / s)`` from the component times, the
prediction from ``s_decode``, the measured ratios, and measured over predicted. Timings on a
shared CPU are noisy; the medians and the interleaving reduce, not remove, that noise.
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import torch
from _bench import add_runtime_args, apply_runtime, interleaved_results, print_table, sync

from ftipbook.compare.throughput import attempts_under_budget, throughput_factor
from ftipbook.model import ModelConfig, build_model


def make_config(pattern: str, args: argparse.Namespace) -> ModelConfig:
    return ModelConfig(vocab_size=512, d_model=args.width, n_layers=args.layers, n_heads=4, d_ff=2 * args.width,
                       max_seq_len=args.prompt + args.answer, pos="none", mla_nope=True, kv_lora_rank=args.width // 2,
                       layer_pattern=pattern)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", default="M", help="layer pattern of the full-attention reference")
    parser.add_argument("--hybrid", default="KKKM", help="layer pattern of the 3:1 hybrid")
    parser.add_argument("--prompt", type=int, default=4096, help="prompt tokens per attempt")
    parser.add_argument("--answer", type=int, default=128, help="generated tokens per attempt")
    parser.add_argument("--window", type=int, default=1024, help="prompt tokens the verifier reads")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--budget", type=float, default=15.0, help="seconds of run time per arm for the budgeted count")
    add_runtime_args(parser)
    parser.set_defaults(repeats=7)
    args = parser.parse_args(argv)
    device, dtype = apply_runtime(args)

    arms = {name: build_model(make_config(p, args), seed=0, device=device, dtype=dtype).eval()
            for name, p in (("full", args.full), ("hybrid", args.hybrid))}
    verifier = build_model(ModelConfig(vocab_size=512, d_model=args.width, n_layers=2, n_heads=4, d_ff=2 * args.width,
                                       max_seq_len=args.window + args.answer, pos="rope", layer_pattern="A"),
                           seed=1, device=device, dtype=dtype).eval()
    prompt = torch.randint(0, 512, (args.prompt,), generator=torch.Generator().manual_seed(0)).to(device)

    @torch.no_grad()
    def verify(answer: torch.Tensor) -> bool:
        ctx = torch.cat([prompt[-args.window:], answer]).unsqueeze(0)
        logp = torch.log_softmax(verifier(ctx)[0, args.window - 1:-1].float(), -1)
        return bool(logp.gather(-1, answer.unsqueeze(-1)).mean() > -math.log(512) - 1.0)

    @torch.no_grad()
    def attempt(model) -> dict[str, float]:
        """One attempt; returns the wall time of each stage and of the whole."""
        clock = {}
        t0 = time.perf_counter()
        cache = model.new_cache(1)
        token = model(prompt.unsqueeze(0), cache=cache)[:, -1:].argmax(-1)
        sync(device)
        t1 = time.perf_counter()
        answer = [token]
        for _ in range(args.answer - 1):
            answer.append(model(answer[-1], cache=cache)[:, -1:].argmax(-1))
        answer = torch.cat(answer, dim=1)[0]
        sync(device)
        t2 = time.perf_counter()
        verify(answer)
        sync(device)
        t3 = time.perf_counter()
        clock.update(prefill=t1 - t0, decode=t2 - t1, verify=t3 - t2, attempt=t3 - t0)
        return clock

    runs = interleaved_results({name: (lambda m=model: attempt(m)) for name, model in arms.items()}, args.repeats,
                               warmup=1)
    t = {f"{stage} {name}": statistics.median(c[stage] for c in runs[name])
         for name in arms for stage in ("prefill", "decode", "verify", "attempt")}
    for name in arms:
        t[f"generate {name}"] = statistics.median(c["prefill"] + c["decode"] for c in runs[name])

    gen_m, gen_k = t["generate full"], t["generate hybrid"]
    ver_m = t["verify full"]
    f = gen_m / (gen_m + ver_m)
    s = gen_m / gen_k
    s_decode = t["decode full"] / t["decode hybrid"]
    predicted, proxy = throughput_factor(f, s), throughput_factor(f, s_decode)
    measured = t["attempt full"] / t["attempt hybrid"]

    # attempts completed within a budget of compute time per arm, the arms taking turns
    spent, counts = {name: 0.0 for name in arms}, {name: 0 for name in arms}
    while any(spent[name] < args.budget for name in arms):
        for name, model in arms.items():
            if spent[name] < args.budget:
                spent[name] += attempt(model)["attempt"]
                counts[name] += spent[name] <= args.budget
    n_m = attempts_under_budget(args.budget, gen_m + ver_m)
    n_k = attempts_under_budget(args.budget, gen_k + t["verify hybrid"])

    print(f"attempt = prefill {args.prompt} + generate {args.answer} + verify (window {args.window}); "
          f"{args.full}x{args.layers // len(args.full)} vs {args.hybrid}x{args.layers // len(args.hybrid)}, "
          f"d={args.width}, {device} {args.dtype}, threads={torch.get_num_threads()}, {args.repeats} repeats")
    print_table(["component", "full (s)", "hybrid (s)", "full / hybrid"], [
        [name, t[f"{name} full"], t[f"{name} hybrid"], t[f"{name} full"] / t[f"{name} hybrid"]]
        for name in ("prefill", "decode", "generate", "verify", "attempt")
    ])
    print()
    print(f"generation share f = {f:.3f}; s = {s:.3f}; decode-only s_decode = {s_decode:.3f}")
    print_table(["quantity", "predicted", "measured", "measured / predicted"], [
        ["S from (f, s)", predicted, measured, measured / predicted],
        ["S from (f, s_decode), the note's proxy", proxy, measured, measured / proxy],
        [f"attempts in {args.budget:g} s, full", n_m, counts["full"], counts["full"] / max(n_m, 1)],
        [f"attempts in {args.budget:g} s, hybrid", n_k, counts["hybrid"], counts["hybrid"] / max(n_k, 1)],
    ])


if __name__ == "__main__":
    main()
