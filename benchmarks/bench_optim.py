"""Optimizer step time: ftipbook.optim against torch.optim on a ~10M-parameter DecoderLM.

Run:  python benchmarks/bench_optim.py [--device cpu] [--dtype float32] [--repeats 15]

Two copies of one model get the same gradients; each timed call is one ``optimizer.step()``,
ftipbook's and PyTorch's in turn (``_bench.interleaved_seconds``). Table 1 pairs each ftipbook
optimizer with its PyTorch counterpart (Adam, AdamW, Adafactor on every parameter; Muon on the
hidden matrices, PyTorch's bfloat16 orthogonalisation matched by ``ns_dtype="bfloat16"`` and
ftipbook's default of the parameter dtype shown as well); the goal is a ratio <= 1.2. Table 2
gives the cost of Muon and full-matrix Shampoo relative to Adam on the same hidden matrices.
"""
from __future__ import annotations

import argparse

import torch
from _bench import add_runtime_args, apply_runtime, interleaved_seconds, print_table

from ftipbook.model import ModelConfig, build_model
from ftipbook.optim import torch_optim as ours

#: About 10.6M parameters: 4096-token vocabulary, width 320, 6 layers, SwiGLU width 864.
CONFIG = dict(vocab_size=4096, d_model=320, n_layers=6, n_heads=5, d_ff=864, max_seq_len=256, ffn="swiglu")


def hidden_matrices(params: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    return [p for n, p in params.items() if p.ndim == 2 and not n.startswith(("embed.", "unembed.", "positions."))]


def model_copy(device: torch.device, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    model = build_model(ModelConfig(**CONFIG), seed=0).to(device=device, dtype=dtype)
    return {n: p.detach().clone().requires_grad_() for n, p in model.named_parameters()}


def stepper(opt: torch.optim.Optimizer, params: list[torch.Tensor], grads: list[torch.Tensor]):
    for p, g in zip(params, grads):
        p.grad = g
    return opt.step


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shampoo-repeats", type=int, default=3, help="timed calls for table 2 (Shampoo is slow)")
    add_runtime_args(parser)
    args = parser.parse_args(argv)
    device, dtype = apply_runtime(args)
    names = list(model_copy(device, dtype))
    gen = torch.Generator(device="cpu").manual_seed(0)
    shapes = {n: p.shape for n, p in model_copy(device, dtype).items()}
    grads = {n: (1e-3 * torch.randn(shapes[n], generator=gen)).to(device=device, dtype=dtype) for n in names}
    n_params = sum(g.numel() for g in grads.values())
    n_hidden = sum(p.numel() for p in hidden_matrices(grads))
    print(f"optimizer step, DecoderLM {n_params / 1e6:.2f}M parameters ({n_hidden / 1e6:.2f}M in hidden matrices), "
          f"{device} {args.dtype}, threads={torch.get_num_threads()}")

    pairs = {
        "Adam": (lambda ps: ours.Adam(ps, lr=1e-3), lambda ps: torch.optim.Adam(ps, lr=1e-3), False),
        "AdamW": (lambda ps: ours.AdamW(ps, lr=1e-3), lambda ps: torch.optim.AdamW(ps, lr=1e-3), False),
        "Adafactor": (lambda ps: ours.Adafactor(ps), lambda ps: torch.optim.Adafactor(ps), False),
        "Muon (bf16 NS)": (lambda ps: ours.Muon(ps, lr=0.02, ns_dtype="bfloat16"),
                           lambda ps: torch.optim.Muon(ps, lr=0.02), True),
        "Muon (param-dtype NS)": (lambda ps: ours.Muon(ps, lr=0.02), lambda ps: torch.optim.Muon(ps, lr=0.02), True),
    }
    rows = []
    for label, (make_ours, make_torch, matrices_only) in pairs.items():
        fns = {}
        for who, make in (("ftipbook", make_ours), ("torch", make_torch)):
            params = model_copy(device, dtype)
            chosen = hidden_matrices(params) if matrices_only else list(params.values())
            chosen_grads = hidden_matrices(grads) if matrices_only else list(grads.values())
            fns[who] = stepper(make(chosen), chosen, chosen_grads)
        seconds = interleaved_seconds(fns, device, args.repeats, warmup=5)  # let the allocator settle
        rows.append([label, seconds["ftipbook"] * 1e3, seconds["torch"] * 1e3, seconds["ftipbook"] / seconds["torch"]])
    print("\nTable 1: ftipbook against torch.optim (same algorithm, same gradients)")
    print_table(["optimizer", "ftipbook ms/step", "torch ms/step", "ratio (goal <= 1.2)"], rows)

    rules = {
        "Adam": lambda ps: ours.Adam(ps, lr=1e-3),
        "Muon (param-dtype NS)": lambda ps: ours.Muon(ps, lr=0.02),
        "Shampoo (full matrix)": lambda ps: ours.Shampoo(ps, lr=1e-3),
    }
    fns = {}
    for label, make in rules.items():
        params = hidden_matrices(model_copy(device, dtype))
        fns[label] = stepper(make(params), params, hidden_matrices(grads))
    seconds = interleaved_seconds(fns, device, args.shampoo_repeats, warmup=1)
    print(f"\nTable 2: cost on the {n_hidden / 1e6:.2f}M hidden-matrix parameters, relative to Adam")
    print_table(["optimizer", "ms/step", "x Adam"],
                [[label, s * 1e3, s / seconds["Adam"]] for label, s in seconds.items()])


if __name__ == "__main__":
    main()
