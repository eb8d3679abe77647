"""KDA chunked vs recurrent form, forward + backward (item ftip-00K3; the execution-path split of ftip-00KY).

Run:  python benchmarks/bench_kda.py [--T 1024] [--B 1] [--H 4] [--K 64] [--chunk 64] [--threads 2]

Times the pure functions :func:`ftipbook.model.kda.kda_recurrent` (a token loop) and
:func:`ftipbook.model.kda.kda_chunked` (WY/UT chunked form) on the same float32 CPU inputs,
forward + backward of ``sum(o**2) + sum(S_T)``, called in turn (interleaved rounds); reports the
minimum and median times, the ratio as the median (and quartiles) of the round-by-round
ratios, and the largest output difference between the two forms.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _bench import interleaved_samples, ratio_spread  # noqa: E402

from ftipbook.model.kda import kda_chunked, kda_recurrent, l2_normalize  # noqa: E402


def make_inputs(b: int, t: int, h: int, k: int, v: int, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    q = l2_normalize(torch.randn(b, t, h, k, generator=g))
    kk = l2_normalize(torch.randn(b, t, h, k, generator=g))
    vv = torch.randn(b, t, h, v, generator=g)
    log_alpha = -0.5 * torch.rand(b, t, h, k, generator=g)
    beta = torch.rand(b, t, h, generator=g)
    return [x.requires_grad_() for x in (q, kk, vv, log_alpha, beta)]


def fwd_bwd(fn, args, **kw) -> torch.Tensor:
    for x in args:
        x.grad = None
    o, s = fn(*args, **kw)
    (o.square().sum() + s.sum()).backward()
    return o.detach()


def main(argv: list[str] | None = None) -> float:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--T", type=int, default=1024)
    p.add_argument("--B", type=int, default=1)
    p.add_argument("--H", type=int, default=4)
    p.add_argument("--K", type=int, default=64)
    p.add_argument("--V", type=int, default=None, help="value width (default K)")
    p.add_argument("--chunk", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    v = a.K if a.V is None else a.V
    args = make_inputs(a.B, a.T, a.H, a.K, v)

    fns = {"recurrent": lambda: fwd_bwd(kda_recurrent, args), "chunked": lambda: fwd_bwd(kda_chunked, args, chunk_size=a.chunk)}
    samples = interleaved_samples(fns, torch.device("cpu"), a.repeats, warmup=1)
    diff = (fwd_bwd(kda_recurrent, args) - fwd_bwd(kda_chunked, args, chunk_size=a.chunk)).abs().max().item()

    print(f"KDA fwd+bwd, CPU float32, torch {torch.__version__}, {a.threads} threads: "
          f"B={a.B} T={a.T} H={a.H} K={a.K} V={v} chunk={a.chunk}, {a.repeats} interleaved rounds")
    print(f"{'form':<10}{'min ms':>10}{'median ms':>12}")
    for name, times in samples.items():
        print(f"{name:<10}{min(times) * 1e3:>10.1f}{statistics.median(times) * 1e3:>12.1f}")
    q1, ratio, q3 = ratio_spread(samples["recurrent"], samples["chunked"])
    print(f"speed-up recurrent/chunked: {ratio:.1f}x (median of rounds, quartiles {q1:.1f}-{q3:.1f}); "
          f"max |o_rec - o_chunk| = {diff:.2e}")
    return ratio


if __name__ == "__main__":
    main()
