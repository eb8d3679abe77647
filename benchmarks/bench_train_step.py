"""Training-step throughput of DecoderLM vs transformers' LlamaForCausalLM (same config and weights).

Run:  python benchmarks/bench_train_step.py [--batch 8] [--seq 256] [--device cpu] [--dtype float32]

One step = forward, next-token cross-entropy, backward, AdamW update. Both models come from one
random Llama checkpoint (``DecoderLM`` loaded through ``ftipbook.model.hf``) and are timed in the
same process, one step of each in turn, on the same batch; the table reports the median step
time, tokens/s and the ratio.
"""
from __future__ import annotations

import argparse

import torch
from _bench import PRESETS, add_runtime_args, apply_runtime, interleaved_seconds, llama_twins, print_table
from torch.nn import functional as F


def train_step(forward, optimizer, tokens):
    logits = forward(tokens[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=256)
    add_runtime_args(parser)
    args = parser.parse_args(argv)
    device, dtype = apply_runtime(args)
    config = PRESETS[args.preset]
    hf, ours = llama_twins(config, device, dtype)
    tokens = torch.randint(0, config["vocab_size"], (args.batch, args.seq + 1), device=device)
    runs = {
        "transformers LlamaForCausalLM": (lambda x: hf(x).logits, hf),
        "ftipbook DecoderLM": (ours, ours),
    }
    steps = {}
    for name, (forward, module) in runs.items():
        opt = torch.optim.AdamW(module.parameters(), lr=1e-4)
        steps[name] = lambda f=forward, o=opt: train_step(f, o, tokens)
    seconds = interleaved_seconds(steps, device, args.repeats)
    base = seconds["transformers LlamaForCausalLM"]
    n_tokens = args.batch * args.seq
    print(f"train step, preset {args.preset}, B={args.batch} T={args.seq}, {device} {args.dtype}, threads={torch.get_num_threads()}")
    print_table(["model", "s/step", "tokens/s", "speed vs transformers"],
                [[name, s, n_tokens / s, base / s] for name, s in seconds.items()])


if __name__ == "__main__":
    main()
