"""The standard data helpers and exact-answer scoring, end to end with the trainer on real batches."""
import pytest
import torch

from ftipbook.data.corpus import ArithmeticSource, Document
from ftipbook.data.mixture import toy_mixture
from ftipbook.model import ModelConfig, build_model, generate
from ftipbook.tokenizer import PRETOKENIZE_PATTERN, ByteLevelBPE
from ftipbook.train import (DIGIT_PATTERN, RunRandomness, TrainConfig, Trainer, answer_accuracy, answer_hits,
                            batch_stream, build_optimizer, fixed_batches, train_tokenizer)


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(toy_mixture().documents(300, seed=0), vocab_size=300)


def test_digit_pattern_reads_numbers_digit_by_digit(tokenizer):
    assert tokenizer.vocab_size == 300
    assert tokenizer.tokenize("1234+56=1290") == list("1234+56=1290")
    plain = ByteLevelBPE.train(["1234 1234 1234 99 99"], 5, pattern=PRETOKENIZE_PATTERN)
    assert any(len(p) > 1 and p.isdigit() for p in plain.tokenize("1234"))  # the default merges digits
    assert DIGIT_PATTERN != PRETOKENIZE_PATTERN
    with pytest.raises(ValueError, match="vocab_size"):
        train_tokenizer([Document("a", "s", "s:1")], vocab_size=100)


def test_batch_stream_seeds(tokenizer):
    docs = toy_mixture().documents(200, seed=1)
    cfg = TrainConfig(steps=5, batch_size=4, seq_len=32)
    a = batch_stream(docs, tokenizer, cfg, RunRandomness(data_order=1, window_offset=2))
    b = batch_stream(docs, tokenizer, cfg, RunRandomness(data_order=1, window_offset=2))
    c = batch_stream(docs, tokenizer, cfg, RunRandomness(data_order=1, window_offset=3))
    d = batch_stream(docs, tokenizer, cfg, RunRandomness(data_order=9, window_offset=2))
    first = next(a)
    assert first.tokens.shape == (4, 32) and torch.equal(first.tokens, next(b).tokens)
    assert not torch.equal(first.tokens, next(c).tokens) and not torch.equal(first.tokens, next(d).tokens)
    sft = next(batch_stream(ArithmeticSource(2).documents(50, seed=0), tokenizer, cfg, RunRandomness(),
                            answers_only=True, split=False))
    eq = tokenizer.encode("=")[0]
    scored_inputs = sft.tokens[sft.loss_mask]
    # every scored position predicts an answer digit or eos: the token read there is "=" or an answer token
    assert sft.targets[sft.loss_mask].tolist().count(tokenizer.eos_id) == int((sft.seg_ids.amax(1)).sum())
    assert eq in scored_inputs.tolist() and not (sft.targets[sft.loss_mask] == eq).any()
    fixed = fixed_batches(docs, tokenizer, 32, 4, 2)
    assert len(fixed) == 2 and torch.equal(fixed[0].tokens, fixed_batches(docs, tokenizer, 32, 4, 1)[0].tokens)


def test_memorized_answers_are_hits(tokenizer):
    docs = ArithmeticSource(2).documents(4, seed=3)
    cfg = TrainConfig(steps=150, batch_size=8, seq_len=16, lr=1e-2, progress=False)
    model = build_model(ModelConfig(vocab_size=tokenizer.vocab_size, d_model=32, n_layers=1, n_heads=2, d_ff=64,
                                    max_seq_len=16), seed=0)
    assert answer_accuracy(model, tokenizer, docs) == 0.0
    stream = batch_stream(docs, tokenizer, cfg, RunRandomness(), answers_only=True, split=False)
    Trainer(model, build_optimizer(model, cfg), stream, cfg).run()
    hits = answer_hits(model, tokenizer, docs)
    assert hits == [True] * 4
    for doc in docs:  # the same verdict by hand, one unbatched greedy generation per document
        out = generate(model, tokenizer.encode(doc.prompt), 5, eos_id=tokenizer.eos_id)
        assert tokenizer.decode(out.new_tokens.tolist()) == doc.answer + "<|eos|>"
    other = ArithmeticSource(2).documents(20, seed=4)
    assert answer_accuracy(model, tokenizer, other) < 0.5  # memorized, not learned
    assert answer_hits(model, tokenizer, docs, temperature=1.0, seed=0) == answer_hits(
        model, tokenizer, docs, temperature=1.0, seed=0)
    with pytest.raises(ValueError, match="reference answer"):
        answer_hits(model, tokenizer, [Document("text", "s", "s:0")])
