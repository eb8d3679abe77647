"""The shortcuts taken for speed compute what the plain paths compute (ftip-0012)."""
import pytest
import torch

from ftipbook.model import build_model, compile_model
from tests.model.conftest import tiny_config

PATTERNS = {"A": dict(), "M": dict(layer_pattern="M"), "KA": dict(layer_pattern="KA"), "looped": dict(n_loops=2)}


@pytest.mark.parametrize("overrides", PATTERNS.values(), ids=PATTERNS.keys())
def test_last_only_is_the_last_row_of_the_logits(overrides):
    model = build_model(tiny_config(**overrides), seed=1, dtype=torch.float64).eval()
    tokens = torch.randint(0, 61, (3, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = model(tokens)
        cache = model.new_cache(3)
        first = model(tokens[:, :5], cache=cache, last_only=True)
        second = model(tokens[:, 5:], cache=cache, last_only=True)
    assert first.shape == (3, 1, 61)
    torch.testing.assert_close(first, full[:, 4:5], rtol=0, atol=1e-12)
    torch.testing.assert_close(second, full[:, -1:], rtol=0, atol=1e-12)


def test_hidden_states_are_what_the_unembedding_reads():
    model = build_model(tiny_config(unembed_bias=True), seed=2, dtype=torch.float64)
    tokens = torch.randint(0, 61, (2, 7), generator=torch.Generator().manual_seed(1))
    read = {}
    model.unembed.register_forward_hook(lambda m, args, out: read.update(h=args[0]))
    logits = model(tokens)
    torch.testing.assert_close(model.hidden_states(tokens), read["h"], rtol=0, atol=0)
    w, b = model.unembed.weight, model.unembed.bias
    torch.testing.assert_close(model.hidden_states(tokens) @ w.T + b, logits, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="outside"):
        model.hidden_states(torch.tensor([[61]]))


def test_compile_model_keeps_names_and_function():
    cfg = tiny_config()
    eager, compiled = build_model(cfg, seed=3), build_model(cfg, seed=3)
    names = [n for n, _ in compiled.named_parameters()]
    assert compile_model(compiled, backend="eager") is compiled  # the "eager" backend needs no C++ compiler
    assert [n for n, _ in compiled.named_parameters()] == names
    tokens = torch.randint(0, 61, (2, 10), generator=torch.Generator().manual_seed(2))
    targets = torch.roll(tokens, -1, dims=1)
    torch.testing.assert_close(compiled(tokens), eager(tokens), rtol=0, atol=1e-6)
    compiled.loss(tokens, targets).backward()
    eager.loss(tokens, targets).backward()
    for a, b in zip(compiled.parameters(), eager.parameters()):
        torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=1e-6)
    with pytest.raises(TypeError, match="DecoderLM"):
        compile_model(torch.nn.Linear(2, 2))


def test_generation_returns_ordinary_tensors_and_matches_the_checked_path():
    """generate runs under inference_mode and skips the id check after the prompt; nothing of that leaks out."""
    from ftipbook.model import generate

    model = build_model(tiny_config(layer_pattern="KA"), seed=4).eval()
    prompt = torch.randint(0, 61, (2, 5), generator=torch.Generator().manual_seed(3))
    runs = generate(model, prompt, 6)
    for row, run in enumerate(runs):
        assert not run.tokens.is_inference() and not run.logprobs.is_inference()
        run.tokens.add_(0)  # in-place use of the results is allowed
        tokens = prompt[row].tolist()
        with torch.no_grad():  # greedy decoding by hand through the checked forward, no cache
            for _ in range(6):
                tokens.append(int(model(torch.tensor([tokens]))[0, -1].argmax()))
        assert run.new_tokens.tolist() == tokens[5:]


def test_short_convolution_one_token_path_equals_the_sequence_path():
    """ShortConv1d computes one decoded token as a per-channel dot product instead of conv1d; same values."""
    from ftipbook.model.kda import ShortConv1d

    conv = ShortConv1d(6, kernel_size=4, bias=True).double()
    x = torch.randn(2, 9, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    whole, final_state = conv(x)
    state, steps = None, []
    for t in range(9):
        y, state = conv(x[:, t : t + 1], conv_state=state)
        steps.append(y)
    torch.testing.assert_close(torch.cat(steps, dim=1), whole, rtol=0, atol=1e-12)
    torch.testing.assert_close(state, final_state, rtol=0, atol=0)
