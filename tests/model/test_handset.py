"""The hand-set looped shift program (ftip-00KI)."""
import pytest
import torch

from ftipbook.model.depth import with_passes
from ftipbook.model.handset import shift_register_config, shift_register_model


def program(tokens: list[int], passes: int) -> list[int]:
    s = list(tokens)
    for _ in range(passes):
        s = [s[t - 1] if t >= 1 else s[t] for t in range(len(s))]
    return s


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_each_pass_is_one_program_step_exactly(dtype):
    g = torch.Generator().manual_seed(0)
    model = shift_register_model(5, 12, dtype=dtype)
    tokens = torch.randint(0, 5, (3, 12), generator=g)
    for r in range(1, 5):
        h = with_passes(model, r).hidden_states(tokens)
        want = torch.tensor([program(row, r) for row in tokens.tolist()])
        assert torch.equal(h[..., :5], torch.nn.functional.one_hot(want, 5).to(dtype))
        assert torch.equal(h[..., 5:].abs().sum(-1), torch.ones(3, 12, dtype=dtype))  # positions untouched
        assert torch.equal(with_passes(model, r)(tokens).argmax(-1), want)


def test_small_gap_leaks_and_breaks_the_program():
    model = shift_register_model(5, 12, gap=1.0, passes=3)
    tokens = torch.tensor([[0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]])
    assert not torch.equal(model(tokens).argmax(-1), torch.tensor([program(tokens[0].tolist(), 3)]))


def test_width_is_padded_to_an_exact_norm():
    assert shift_register_config(5, 12).d_model == 32
    assert shift_register_config(3, 4).d_model == 8
    assert shift_register_config(60, 60).d_model == 128


@pytest.mark.parametrize("kwargs, match", [
    (dict(vocab_size=1, max_len=4), "vocab_size"), (dict(vocab_size=3, max_len=1), "max_len"),
    (dict(vocab_size=3, max_len=4, passes=0), "passes"), (dict(vocab_size=3, max_len=4, gap=0.0), "gap"),
    (dict(vocab_size=3, max_len=4, gap=float("inf")), "gap"), (dict(vocab_size=3, max_len=4, gap=True), "gap"),
    (dict(vocab_size=3, max_len=4, dtype=torch.float16), "dtype"),
])
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        shift_register_model(**kwargs)
