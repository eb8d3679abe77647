"""A catalog of bad values for the public entry points (issue 11), shared by the hypothesis test
``tests/test_bad_inputs.py`` and the probe ``tools/probe_inputs.py``.

Each :class:`Entry` is one callable with valid keyword arguments and, per argument, the bad values
to try. A bad value must raise ``ValueError`` or ``TypeError`` whose message names the argument;
:func:`classify` sorts every other outcome into *unnamed* (the right exception type, but the message
does not say which argument), *silent* (no error: a result came back, possibly with NaNs) and
*internal* (any other exception, from deep inside).

Dataclass configurations get their bad values from their annotations: wrong kinds for every field,
non-finite floats and ``-1`` for every number (no size, rate or coefficient of the library is
negative).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import torch

NAN, INF = float("nan"), float("inf")


@dataclass(frozen=True)
class Entry:
    """``call(**{**valid, name: bad})`` for each ``name, bads`` in ``bad``."""

    name: str
    call: Callable[..., Any]
    valid: dict[str, Any]
    bad: dict[str, tuple[Any, ...]] = field(default_factory=dict)


def bad_values_for(annotation: str) -> tuple[Any, ...]:
    """Values no field annotated ``annotation`` accepts."""
    optional = "None" in annotation
    base = annotation.replace(" | None", "")
    values: tuple[Any, ...]
    if base == "int":
        values = ("3", 2.5, NAN, -1, True, [1])
    elif base == "float":
        values = (NAN, INF, -INF, -1.0, "1e-3", complex(1, 1), True, [0.1])
    elif base == "bool":
        values = ("yes", 2, 0.0)
    elif base == "str":
        values = (5, "no-such-choice", b"x")
    elif base.startswith("tuple[float"):
        n = base.count("float")
        values = ((NAN,) * n, (0.5,) * (n + 1), "0.9", (-1.0,) * n)
    else:
        raise ValueError(f"no bad values declared for annotation {annotation!r}")
    return values if optional else (*values, None)


def config_entry(cls: type, skip: tuple[str, ...] = ()) -> Entry:
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    return Entry(cls.__name__, cls, {}, {n: bad_values_for(t) for n, t in hints.items() if n not in skip})


def _finite(result: Any) -> bool:
    tensors = [result] if isinstance(result, torch.Tensor) else [
        v for v in getattr(result, "__dict__", {}).values() if isinstance(v, torch.Tensor)]
    return all(bool(torch.isfinite(t.float()).all()) for t in tensors if t.is_floating_point())


def classify(entry: Entry, name: str, value: Any) -> tuple[str, str]:
    """``(outcome, detail)`` of calling ``entry`` with ``name=value``: outcome is one of ``clear``,
    ``unnamed``, ``silent`` or ``internal``."""
    try:
        result = entry.call(**{**entry.valid, name: value})
    except (ValueError, TypeError) as err:
        return ("clear" if name in str(err) else "unnamed"), f"{type(err).__name__}: {err}"
    except Exception as err:  # noqa: BLE001 (the point is to catch what should not happen)
        return "internal", f"{type(err).__name__}: {err}"
    return "silent", "returned" + ("" if _finite(result) else " non-finite values")


@cache
def tiny_model():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=23, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=12,
                                   pos="learned"), seed=0).eval()


@cache
def tiny_tokenizer():
    from ftipbook.tokenizer import ByteLevelBPE
    return ByteLevelBPE.train(["Mixed Case text with 12 digits", "the cat sat on the mat"], 8)


def _forward(tokens):
    with torch.no_grad():
        return tiny_model()(tokens)


def _generate(**kwargs):
    from ftipbook.model import generate
    return generate(tiny_model(), **kwargs)


def _sampling_law(**kwargs):
    from ftipbook.model import sampling_law
    return sampling_law(**kwargs)


#: Hyperparameters whose negative values are legitimate: Adafactor's decay exponent is <= 0 and
#: Newton-Schulz polynomials have coefficients of both signs.
SIGNED = ("beta2_decay", "ns_coefficients")


def _optimizer(cls: type, config: type) -> Entry:
    def build(**hyper):
        return cls([torch.nn.Parameter(torch.ones(3, 3))], **hyper)
    bad = {}
    for f in dataclasses.fields(config):
        values = bad_values_for(f.type)
        bad[f.name] = tuple(v for v in values if f.name not in SIGNED or not _negative(v))
    return Entry(f"{cls.__name__}(params, ...)", build, {}, bad)


def _negative(value: Any) -> bool:
    items = value if isinstance(value, tuple) else (value,)
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and v < 0 for v in items)


def _encode(text):
    return tiny_tokenizer().encode(text)


def _decode(ids):
    return tiny_tokenizer().decode(ids)


def _train_tokenizer(texts, num_merges):
    from ftipbook.tokenizer import ByteLevelBPE
    return ByteLevelBPE.train(texts, num_merges)


def _finite_law(probs):
    from ftipbook.prob import FiniteLaw
    return FiniteLaw(probs)


@cache
def entries() -> tuple[Entry, ...]:
    """Every entry point of the catalog."""
    import ftipbook.optim as optim
    from ftipbook.model import ModelConfig
    from ftipbook.train import TrainConfig

    logits = torch.tensor([[2.0, -1.0, 0.5, 0.5]])
    out = [
        config_entry(ModelConfig),
        config_entry(TrainConfig, skip=("progress",)),  # progress: True, False or None (auto)
        Entry("generate", _generate, dict(prompt=[1, 2, 3], max_new_tokens=3, temperature=1.0, seed=0), {
            "prompt": ([], [23], [-1], [1.5], "abc", [[1, 2], [3]], torch.zeros(1, 2), [1] * 13, None),
            "max_new_tokens": (-1, 2.5, "3", None, NAN),
            "temperature": (NAN, INF, -1.0, "1", None),
            "top_k": (0, -1, 2.5, "3", 24.5),
            "top_p": (0.0, 1.5, NAN, "0.9", -0.1),
            "seed": ("x", 2.5, -1, NAN),
            "eos_id": (23, -1, 2.5, "eos"),
        }),
        Entry("sampling_law", _sampling_law, dict(logits=logits, temperature=0.7), {
            "logits": (torch.tensor([[NAN, 0.0]]), torch.tensor([[INF, 0.0]]), torch.zeros(1, 0),
                       torch.full((1, 3), -INF), torch.tensor([[1j, 0]]), [[1.0, 2.0]], None),
            "temperature": (NAN, INF, -0.5, "0.7", None),
            "top_k": (0, -2, 1.5, "2"),
            "top_p": (0.0, 1.01, NAN, "1"),
        }),
        Entry("DecoderLM.__call__", _forward, dict(tokens=torch.tensor([[1, 2, 3]])), {
            "tokens": (torch.tensor([[23]]), torch.tensor([[-1]]), torch.tensor([[1.0, 2.0]]),
                       torch.ones(1, 2, 2, dtype=torch.long), torch.ones(1, 13, dtype=torch.long),
                       [[1, 2]], torch.tensor([[True, False]])),
        }),
        Entry("ByteLevelBPE.encode", _encode, dict(text="The Cat"), {"text": (5, None, b"bytes", ["a"])}),
        Entry("ByteLevelBPE.decode", _decode, dict(ids=[1, 2]), {
            "ids": ([65.9], [-1], [10**6], "abc", [True], None, [NAN]),
        }),
        Entry("ByteLevelBPE.train", _train_tokenizer, dict(texts=["ab ab", "Cd cd"], num_merges=3), {
            "texts": ("one string", [5], None, [b"x"]),
            "num_merges": (-1, 2.5, "3", None),
        }),
        Entry("FiniteLaw", _finite_law, dict(probs={"a": 0.25, "b": 0.75}), {
            "probs": ({"a": -0.5, "b": 1.5}, {"a": NAN, "b": 1.0}, {"a": 0.5}, {}, {"a": "1"}, [0.5, 0.5],
                      {"a": INF}),
        }),
    ]
    for cls, config in [(optim.SGD, optim.SGDConfig), (optim.Adam, optim.AdamConfig),
                        (optim.AdamW, optim.AdamWConfig), (optim.RMSprop, optim.RMSpropConfig),
                        (optim.Adafactor, optim.AdafactorConfig), (optim.Muon, optim.MuonConfig),
                        (optim.Lion, optim.LionConfig)]:
        out.append(_optimizer(cls, config))
    return tuple(out)


def cases() -> Iterator[tuple[Entry, str, Any]]:
    """Every ``(entry, argument, bad value)`` of the catalog."""
    for entry in entries():
        for name, values in entry.bad.items():
            for value in values:
                yield entry, name, value


__all__ = ["Entry", "bad_values_for", "cases", "classify", "entries"]
