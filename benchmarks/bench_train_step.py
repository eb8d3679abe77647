"""Training-step throughput of DecoderLM vs transformers' LlamaForCausalLM (same config and weights).

Run:  python benchmarks/bench_train_step.py [--preset small] [--batch 8] [--seq 256] [--compile]

One step = forward, next-token cross-entropy, backward, AdamW update, on the same batch. Every
model comes from one random Llama checkpoint (``DecoderLM`` loaded through ``ftipbook.model.hf``)
and all are timed in the same process, one step of each in turn. Two loss paths are measured,
each against transformers on the same path:

* ``own loss``: each library's training API, ``LlamaForCausalLM(x, labels=..., shift_labels=y).loss``
  and ``DecoderLM.loss(x, y)`` (the headline row);
* ``logits + F.cross_entropy``: both return full logits and the script computes the loss.

``--compile`` adds the own-loss path under ``torch.compile`` for both models (opt-in; compile
time is excluded by the warm-up rounds). The table reports the median step time, tokens/s, and
the speed ratio to transformers on the same path as the median (and quartiles) of the ratios
taken round by round.

``--floor`` then profiles a few own-loss steps of each library and sums the time spent inside
the matrix-product and attention kernels (``KERNELS``), which any implementation of the same
model on PyTorch's CPU kernels must run. ``transformers' step / ftipbook's kernel time`` bounds
the speed ratio that removing every other operation (norms, RoPE, SwiGLU, the optimizer,
Python) could reach.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from _bench import PRESETS, add_runtime_args, apply_runtime, interleaved_samples, llama_twins, print_table, ratio_spread
from torch.nn import functional as F
from torch.profiler import ProfilerActivity, profile

from ftipbook.model import compile_model


def step(loss_fn, optimizer, x, y):
    loss = loss_fn(x, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss


#: Profiler names of the kernels every implementation runs: dense products and fused attention.
KERNELS = ("aten::mm", "aten::addmm", "aten::addmm_", "aten::bmm", "aten::_scaled_dot_product")


def kernel_seconds(step_fn, steps: int = 3) -> tuple[float, float]:
    """``(wall, kernels)``: seconds per step of ``step_fn`` under the profiler, and the part of it
    spent in :data:`KERNELS` (self time, summed over both threads' calls)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        for _ in range(steps):
            step_fn()
        wall = time.perf_counter() - start
    inside = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key.startswith(KERNELS))
    return wall / steps, inside / 1e6 / steps


def logits_loss(forward):
    return lambda x, y: F.cross_entropy(forward(x).flatten(0, 1).float(), y.flatten())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--compile", action="store_true", help="also time both models under torch.compile")
    parser.add_argument("--floor", action="store_true",
                        help="profile own-loss steps: kernel time and the ratio bound it implies")
    add_runtime_args(parser)
    args = parser.parse_args(argv)
    device, dtype = apply_runtime(args)
    config = PRESETS[args.preset]
    tokens = torch.randint(0, config["vocab_size"], (args.batch, args.seq + 1), device=device)
    x, y = tokens[:, :-1], tokens[:, 1:].contiguous()

    paths = ["own loss", "logits + F.cross_entropy"] + (["own loss, torch.compile"] if args.compile else [])
    losses = {}  # (path, library) -> (loss function, module)
    for path in paths:
        hf, ours = llama_twins(config, device, dtype)  # fresh twins per path: the steps update the weights
        if path.startswith("own loss"):
            hf_loss = lambda x, y, m=hf: m(x, labels=x, shift_labels=y).loss  # noqa: E731
            ours_loss = ours.loss
        else:
            hf_loss, ours_loss = logits_loss(lambda x, m=hf: m(x).logits), logits_loss(ours)
        if path.endswith("torch.compile"):
            hf.compile()  # in place, as for ours: both modules keep their loss APIs
            ours_loss = compile_model(ours).loss
        losses[path, "transformers"] = (hf_loss, hf)
        losses[path, "ftipbook"] = (ours_loss, ours)
    steps = {}
    for key, (loss_fn, module) in losses.items():
        opt = torch.optim.AdamW(module.parameters(), lr=1e-4)
        steps[key] = lambda f=loss_fn, o=opt: step(f, o, x, y)
    samples = interleaved_samples(steps, device, args.repeats, warmup=3 if args.compile else 2)
    n_tokens = args.batch * args.seq
    print(f"train step, preset {args.preset}, B={args.batch} T={args.seq}, {device} {args.dtype}, "
          f"threads={torch.get_num_threads()}, {args.repeats} interleaved rounds")
    rows = []
    for (path, lib), times in samples.items():
        q1, ratio, q3 = ratio_spread(samples[path, "transformers"], times)
        s = statistics.median(times)
        rows.append([path, lib, s, n_tokens / s, ratio, f"{q1:.3f}-{q3:.3f}"])
    print_table(["loss path", "library", "s/step", "tokens/s", "speed vs transformers", "quartiles"], rows)
    if args.floor:
        floor = {lib: kernel_seconds(steps["own loss", lib]) for lib in ("transformers", "ftipbook")}
        rows = [[lib, wall, kernels, kernels / wall] for lib, (wall, kernels) in floor.items()]
        print("\nown loss under the profiler: time inside products and attention kernels")
        print_table(["library", "s/step (profiled)", "kernel s/step", "kernel share"], rows)
        bound = floor["transformers"][0] / floor["ftipbook"][1]
        print(f"speed-ratio bound if ftipbook ran only its kernels: {bound:.3f}")

if __name__ == "__main__":
    main()
