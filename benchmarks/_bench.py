"""Shared helpers of the benchmark scripts: timing, an HF twin with identical weights, a table."""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ftipbook.model import DecoderLM, load_hf  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
T = TypeVar("T")

#: Llama configurations: "tiny" is the scale of the book's zoo models, "small" a 4-layer, width-256 GQA model.
PRESETS = {
    "tiny": dict(vocab_size=512, hidden_size=64, intermediate_size=172, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096),
    "small": dict(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                  num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=4096),
}


def add_repeats_arg(parser: argparse.ArgumentParser, default: int = 15) -> None:
    parser.add_argument("--repeats", type=int, default=default, help="timed calls per implementation")


def add_runtime_args(parser: argparse.ArgumentParser) -> None:
    default_device = "cuda" if torch.cuda.is_available() else "cpu"
    parser.add_argument("--device", default=default_device)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bfloat16" if default_device == "cuda" else "float32")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    add_repeats_arg(parser)


def apply_runtime(args: argparse.Namespace) -> tuple[torch.device, torch.dtype]:
    if args.threads:
        torch.set_num_threads(args.threads)
    return torch.device(args.device), DTYPES[args.dtype]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def interleaved_results(fns: dict[str, Callable[[], T]], repeats: int, warmup: int = 2) -> dict[str, list[T]]:
    """What each ``fn()`` returns, calling the functions in turn ``repeats`` times after ``warmup`` rounds.

    Interleaving gives every implementation the same machine conditions (other load, clocks);
    entry ``i`` of each list comes from round ``i``, so ratios can be taken round by round.
    """
    results: dict[str, list[T]] = {name: [] for name in fns}
    for i in range(warmup + repeats):
        for name, fn in fns.items():
            out = fn()
            if i >= warmup:
                results[name].append(out)
    return results


def interleaved_samples(fns: dict[str, Callable[[], object]], device: torch.device, repeats: int,
                        warmup: int = 2) -> dict[str, list[float]]:
    """Wall time of every timed ``fn()`` call, rounds interleaved as in :func:`interleaved_results`."""

    def timed(fn: Callable[[], object]) -> Callable[[], float]:
        def call() -> float:
            sync(device)
            start = time.perf_counter()
            fn()
            sync(device)
            return time.perf_counter() - start

        return call

    return interleaved_results({name: timed(fn) for name, fn in fns.items()}, repeats, warmup)


def interleaved_seconds(fns: dict[str, Callable[[], object]], device: torch.device, repeats: int,
                        warmup: int = 2) -> dict[str, float]:
    """Median wall time of each ``fn()`` over the rounds of :func:`interleaved_samples`."""
    return {name: statistics.median(ts) for name, ts in interleaved_samples(fns, device, repeats, warmup).items()}


def ratio_spread(base: list[float], other: list[float]) -> tuple[float, float, float]:
    """``(q1, median, q3)`` of the round-by-round speed ratios ``base[i] / other[i]``.

    Both calls of a round ran back to back, so a load spike on the shared machine slows both and
    mostly cancels in their ratio; the quartiles show what it did not cancel.
    """
    ratios = [b / o for b, o in zip(base, other, strict=True)]
    if len(ratios) < 2:
        return ratios[0], ratios[0], ratios[0]
    q1, median, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    return q1, median, q3


def llama_twins(hf_config: dict, device: torch.device, dtype: torch.dtype, seed: int = 0):
    """A random ``LlamaForCausalLM`` and the ``DecoderLM`` loaded from its safetensors checkpoint."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    hf = LlamaForCausalLM(LlamaConfig(**hf_config))
    with tempfile.TemporaryDirectory() as tmp:
        hf.save_pretrained(tmp, safe_serialization=True)
        ours: DecoderLM = load_hf(tmp)
    return hf.to(device=device, dtype=dtype), ours.to(device=device, dtype=dtype)


def print_table(headers: list[str], rows: list[list[object]]) -> None:
    cells = [headers] + [[f"{c:.4g}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for j, row in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
        if j == 0:
            print("  ".join("-" * w for w in widths))
