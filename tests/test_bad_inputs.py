"""Bad input to the public entry points gets a ``ValueError`` or ``TypeError`` naming the argument,
never a silent wrong answer, a NaN or an exception from deep inside (issue 11).

The catalog of ``tests/bad_inputs.py`` is run in full; hypothesis then draws values well beyond it
(any float including NaN and infinities, any small int, strings, mixed lists) and requires of each
call one of two outcomes: a clear error naming the argument, or a result that is valid on its face
(a configuration that builds a model with finite logits, a law that is a law, tokens in the
vocabulary, a finite optimizer step).
"""
import math
import uuid

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ftipbook.optim as optim
from ftipbook import cli
from ftipbook.model import ModelConfig, build_model, generate, sampling_law
from tests.bad_inputs import cases, classify, tiny_model, tiny_tokenizer
from tests.test_cli_errors import TINY, no_work  # noqa: F401 (no_work: fixture)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
ANY_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-3, 70), st.floats(allow_nan=True, allow_infinity=True),
                      st.text(max_size=4), st.lists(st.integers(0, 3), max_size=2), st.complex_numbers(max_magnitude=2))


def clear(err: Exception, *names: str) -> bool:
    return isinstance(err, (ValueError, TypeError)) and any(n in str(err) for n in names)


def test_every_catalogued_bad_value_gets_a_clear_error():
    outcomes = [(entry.name, name, repr(value)[:60], *classify(entry, name, value)) for entry, name, value in cases()]
    assert len(outcomes) > 700
    wrong = [o for o in outcomes if o[3] != "clear"]
    assert not wrong, "\n".join(map(str, wrong))


# a small model's worth of sizes, so that an accepted configuration can be built and run
CONFIG_FIELDS = ["d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "norm_eps", "rope_theta", "init_std",
                 "n_experts", "top_k", "n_shared_experts", "kv_lora_rank", "rope_head_dim", "conv_kernel",
                 "kda_chunk_size", "pos", "norm", "ffn", "layer_pattern", "tie_embeddings", "moe_aux_loss_coef"]


@SETTINGS
@given(name=st.sampled_from(CONFIG_FIELDS), value=ANY_VALUE,
       base=st.sampled_from([dict(), dict(ffn="moe"), dict(layer_pattern="M"), dict(layer_pattern="K")]))
def test_a_config_value_is_refused_by_name_or_gives_a_working_model(name, value, base):
    kwargs = dict(vocab_size=11, d_model=16, n_layers=1, n_heads=2, d_ff=16, max_seq_len=8, **base)
    try:
        cfg = ModelConfig(**{**kwargs, name: value})
    except Exception as err:  # noqa: BLE001
        assert clear(err, name, "d_model", "n_heads", "head_dim", "top_k", "layer_pattern"), repr(err)
        return
    assert value == getattr(cfg, name)
    if cfg.d_head * max(cfg.n_heads, cfg.kv_heads) > 512 or cfg.d_ff > 512:
        return  # accepted and too large to run in a test
    with torch.no_grad():
        logits = build_model(cfg, seed=0)(torch.tensor([[1, 5, 2, 7]]))
    assert bool(torch.isfinite(logits).all())


@SETTINGS
@given(prompt=st.lists(st.one_of(st.integers(-2, 25), st.floats(allow_nan=True)), max_size=13),
       max_new_tokens=st.one_of(st.integers(-1, 4), st.floats(allow_nan=True)),
       temperature=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(0.0)),
       top_k=st.one_of(st.none(), st.integers(-1, 30)), top_p=st.one_of(st.none(), st.floats(allow_nan=True)),
       seed=st.one_of(st.none(), st.integers(-1, 5)))
def test_generate_refuses_by_name_or_returns_tokens_of_the_vocabulary(prompt, max_new_tokens, temperature, top_k,
                                                                      top_p, seed):
    model = tiny_model()
    try:
        out = generate(model, prompt, max_new_tokens, temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)
    except Exception as err:  # noqa: BLE001
        assert clear(err, "prompt", "max_new_tokens", "temperature", "top_k", "top_p", "seed"), repr(err)
        return
    assert out.tokens[: len(prompt)].tolist() == prompt
    assert 1 <= len(out.new_tokens) <= max_new_tokens
    assert all(0 <= t < model.cfg.vocab_size for t in out.new_tokens.tolist())
    assert bool(torch.isfinite(out.logprobs).all()) and bool((out.logprobs <= 0).all())


@SETTINGS
@given(logits=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=0, max_size=6),
       temperature=st.floats(allow_nan=True, allow_infinity=True), top_k=st.one_of(st.none(), st.integers(-1, 8)),
       top_p=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)))
def test_sampling_law_refuses_by_name_or_returns_a_law(logits, temperature, top_k, top_p):
    try:
        law = sampling_law(torch.tensor([logits]), temperature=temperature, top_k=top_k, top_p=top_p)
    except Exception as err:  # noqa: BLE001
        assert clear(err, "logits", "temperature", "top_k", "top_p"), repr(err)
        return
    assert bool(torch.isfinite(law).all()) and bool((law >= 0).all())
    assert math.isclose(float(law.sum()), 1.0, abs_tol=1e-5)
    masked = [i for i, v in enumerate(logits) if v == -math.inf]
    assert all(float(law[0, i]) == 0.0 for i in masked)  # a masked token is never drawn


@SETTINGS
@given(ids=st.lists(st.one_of(st.integers(-3, 300), st.floats(allow_nan=True), st.booleans(), st.text(max_size=1)),
                    max_size=6))
def test_decode_refuses_by_name_or_decodes_ids_of_the_vocabulary(ids):
    tok = tiny_tokenizer()
    try:
        text = tok.decode(ids)
    except Exception as err:  # noqa: BLE001
        assert clear(err, "ids"), repr(err)
        return
    assert all(type(i) is int and 0 <= i < tok.vocab_size for i in ids)
    assert isinstance(text, str)


OPTIMIZERS = [(optim.SGD, {}), (optim.Adam, {}), (optim.AdamW, {}), (optim.RMSprop, {}), (optim.Lion, {}),
              (optim.Muon, {}), (optim.Adafactor, {})]


@SETTINGS
@given(which=st.integers(0, len(OPTIMIZERS) - 1), name=st.sampled_from(["lr", "weight_decay", "eps", "momentum"]),
       value=ANY_VALUE)
def test_an_optimizer_value_is_refused_by_name_or_takes_a_finite_step(which, name, value):
    cls, _ = OPTIMIZERS[which]
    param = torch.nn.Parameter(torch.linspace(-1, 1, 12).reshape(3, 4))
    try:
        opt = cls([param], **{name: value})
    except Exception as err:  # noqa: BLE001
        assert clear(err, name), repr(err)
        return
    (param ** 2).sum().backward()
    opt.step()
    assert bool(torch.isfinite(param).all())


TRAIN_OPTIONS = ["--steps", "--lr", "--batch-size", "--seq-len", "--docs", "--seed", "--warmup-steps",
                 "--eval-every", "--d-model", "--n-heads", "--weight-decay", "--grad-clip", "--vocab-size"]


@SETTINGS
@given(option=st.sampled_from(TRAIN_OPTIONS),
       value=st.one_of(st.text(alphabet="0123456789.-+eEinfa x", max_size=6), st.floats().map(repr),
                       st.integers(-5, 10**6).map(str)))
def test_a_train_option_is_refused_in_one_line_naming_it_or_work_starts(tmp_path, capsys, no_work, option, value):
    out = tmp_path / uuid.uuid4().hex
    try:
        status = cli.main(["train", "--out", str(out), *TINY, "--steps", "1000000", option, value])
    except SystemExit as stop:  # argparse's own usage errors
        status = stop.code
    _, err = capsys.readouterr()
    lines = err.splitlines()
    if status == 1:  # accepted: the trap fired when training was about to start
        assert "started work" in err and len(lines) == 1, err
        return
    assert status == 2 and len(lines) == 1 and lines[0].startswith("ftipbook: error: "), err
    assert option in lines[0] or option[2:].replace("-", "_") in lines[0], (option, value, err)
    assert not out.exists()

