"""Windows, packing and the PackedBatch contract (ftip-0019, 001A, 001D, 006K)."""
from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.data.corpus import ArithmeticSource, TemplateSource
from ftipbook.data.windows import (
    BatchIterator,
    PackedBatch,
    TokenizedDocument,
    WindowSampler,
    pack_documents,
    tokenize_documents,
)
from ftipbook.tokenizer import ByteLevelBPE

NEG_INF = float("-inf")


def corpus(lengths, start=1):
    docs, k = [], start
    for n in lengths:
        docs.append(list(range(k, k + n)))
        k += n
    return docs


def check_record_rules(rec, predict=None):
    """Entrywise check of m, c and M_doc against the definitions of ftip-001A."""
    x, m, c = rec.tokens.tolist(), rec.mask.tolist(), rec.seg_ids.tolist()
    t = len(x)
    flags = predict if predict is not None else [True] * t
    for i in range(t):
        expected = i > 0 and c[i] != 0 and c[i] == c[i - 1] and flags[i]
        assert m[i] == expected
    M = rec.doc_mask()
    for i in range(t):
        for j in range(t):
            assert (M[i, j] == 0) == (c[i] == c[j] != 0 and j <= i)
            assert M[i, j] in (0.0, NEG_INF)
    ids = [s for s in c if s]
    assert ids == sorted(ids) and (not ids or set(ids) == set(range(1, max(ids) + 1)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=8), st.integers(2, 9), st.booleans())
def test_packing_keeps_every_token_once_in_order(lengths, t, split):
    docs = corpus(lengths)
    recs = pack_documents(docs, t, pad_id=0, split=split)
    rebuilt = [[] for _ in docs]
    for rec in recs:
        assert rec.length == t
        check_record_rules(rec)
        x = rec.tokens.tolist()
        for seg in rec.segments:
            piece = x[seg.at: seg.at + seg.length]
            assert piece == docs[seg.doc][seg.start: seg.start + seg.length]
            rebuilt[seg.doc] += piece
        pad = [i for i, c in enumerate(rec.seg_ids.tolist()) if c == 0]
        assert all(x[i] == 0 for i in pad) and (not pad or pad == list(range(pad[0], t)))
    assert rebuilt == docs
    if split:
        assert len(recs) == -(-sum(lengths) // t)  # only the last row is padded
    else:
        for d, n in enumerate(lengths):  # a document that fits in a row is never cut
            if n <= t:
                assert sum(seg.doc == d for rec in recs for seg in rec.segments) == 1


def test_packing_example_of_001D():
    rec = pack_documents([[5, 6, 7], [8, 9]], 5, pad_id=0)[0]
    assert rec.seg_ids.tolist() == [1, 1, 1, 2, 2] and rec.mask.tolist() == [False, True, True, False, True]
    expected = torch.full((5, 5), NEG_INF)
    for i, j in [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2), (3, 3), (4, 3), (4, 4)]:
        expected[i, j] = 0.0
    assert torch.equal(rec.doc_mask(), expected)


def test_predict_flags_and_tokenize_documents():
    tok = ByteLevelBPE()
    docs = ArithmeticSource(2).documents(3, seed=0)
    full = tokenize_documents(docs, tok)
    answers = tokenize_documents(docs, tok, answers_only=True)
    for d, f, a in zip(docs, full, answers):
        assert f.ids[-1] == tok.eos_id and tok.decode(f.ids[:-1]) == d.text
        n_answer = len(tok.encode(d.answer))
        assert a.predict == (False,) * (len(a) - n_answer - 1) + (True,) * (n_answer + 1)
    t = len(answers[0]) + len(answers[1])  # the first row holds exactly two documents
    recs = pack_documents(answers, t, pad_id=tok.pad_id)
    flags = [f for d in answers for f in d.predict]
    check_record_rules(recs[0], flags[:t])
    assert recs[0].num_predicted == sum(len(tok.encode(d.answer)) + 1 for d in docs[:2])
    with pytest.raises(ValueError, match="has no answer"):
        tokenize_documents(TemplateSource().documents(1, seed=0), tok, answers_only=True)
    with pytest.raises(ValueError, match="predict flags"):
        TokenizedDocument((1, 2), (True,))
    with pytest.raises(ValueError, match="no tokens"):
        TokenizedDocument((), ())


def test_batch_contract():
    recs = pack_documents(corpus([3, 4, 6, 2]), 5, pad_id=99)
    b = PackedBatch.from_records(recs, pad_id=99)
    assert b.tokens.shape == b.targets.shape == b.loss_mask.shape == b.seg_ids.shape == (len(recs), 5)
    assert b.tokens.dtype == b.targets.dtype == b.seg_ids.dtype == torch.long and b.loss_mask.dtype == torch.bool
    assert torch.equal(b.targets[:, :-1], b.tokens[:, 1:]) and (b.targets[:, -1] == 99).all()
    assert torch.equal(b.loss_mask[:, :-1], torch.stack([r.mask for r in recs])[:, 1:]) and not b.loss_mask[:, -1].any()
    crossing = b.seg_ids[:, :-1] != b.seg_ids[:, 1:]
    assert not (b.loss_mask[:, :-1] & crossing).any()  # no target crosses a document boundary
    assert not (b.loss_mask & (b.seg_ids == 0)).any()
    assert b.num_predicted == sum(r.num_predicted for r in recs) == sum(n - 1 for n in [3, 4, 6, 2]) - 2  # two are cut
    shards = [b.shard(r, 2) for r in range(2)] if len(recs) % 2 == 0 else [b.shard(0, 1)]
    assert torch.equal(torch.cat([s.tokens for s in shards]), b.tokens)
    with pytest.raises(ValueError, match="loss_mask must be"):
        PackedBatch(b.tokens, b.targets, b.loss_mask.long(), b.seg_ids)
    with pytest.raises(ValueError, match="divisible"):
        PackedBatch.from_records(recs[:3], pad_id=99).shard(0, 2)
    with pytest.raises(ValueError, match="different lengths"):
        PackedBatch.from_records(recs[:1] + pack_documents([[1, 2]], 4, pad_id=0), pad_id=0)


def test_window_sampler_remainder_policies():
    docs = corpus([3, 5, 9, 14, 20])
    t = 8
    stats = {}
    for remainder in ("pad", "drop", "join"):
        for offset in ("doc_start", "uniform"):
            sampler = WindowSampler(docs, t, pad_id=0, offset=offset, remainder=remainder)
            wins = sampler.samples(400, seed=0)
            assert wins == sampler.samples(400, seed=0) and wins != sampler.samples(400, seed=1)
            for w in wins:
                check_record_rules(w)
                first = w.segments[0]
                assert (first.start == 0) if offset == "doc_start" else first.start < len(docs[first.doc])
                if remainder in ("drop", "join"):
                    assert (w.seg_ids != 0).all()
                if remainder == "drop":
                    assert len(w.segments) == 1 and len(docs[first.doc]) - first.start >= t
                if remainder == "pad":
                    assert len(w.segments) == 1
            stats[remainder, offset] = (sum(w.num_predicted for w in wins) / len(wins),
                                        Counter(len(w.segments) for w in wins))
    # the policies give different context compositions and prediction-mask sums
    assert stats["pad", "doc_start"][0] < stats["drop", "doc_start"][0] == t - 1
    assert stats["join", "doc_start"][1][1] < 400 and stats["pad", "doc_start"][1] == Counter({1: 400})
    assert any(w.segments[0].start > 0 for w in WindowSampler(docs, t, pad_id=0, offset="uniform").samples(50, 1))
    with pytest.raises(ValueError, match="remainder must be"):
        WindowSampler(docs, t, pad_id=0, remainder="wrap")
    with pytest.raises(ValueError, match="at least T=30"):
        WindowSampler(docs, 30, pad_id=0, remainder="drop")


def batches(it, n):
    return [next(it) for _ in range(n)]


def same(a, b):
    return all(torch.equal(getattr(a, f), getattr(b, f)) for f in ("tokens", "targets", "loss_mask", "seg_ids"))


def test_batch_iterator_is_deterministic_and_resumable():
    docs = corpus([3, 7, 2, 9, 5, 4, 11, 6])
    kw = dict(pad_id=0, seed=4, offset_seed=2, order_seed=7)
    straight = batches(BatchIterator(docs, 6, 3, **kw), 12)
    first = BatchIterator(docs, 6, 3, **kw)
    batches(first, 5)
    state = first.state_dict()
    resumed = BatchIterator(docs, 6, 3, **kw)
    resumed.load_state_dict(state)
    assert all(same(a, b) for a, b in zip(batches(resumed, 7), straight[5:]))
    assert all(same(a, b) for a, b in zip(batches(BatchIterator(docs, 6, 3, **kw), 12), straight))
    with pytest.raises(ValueError, match="belongs to an iterator"):
        BatchIterator(docs, 6, 3, pad_id=0, seed=5).load_state_dict(state)


def test_each_epoch_is_a_permutation_of_the_corpus():
    docs = corpus([3, 7, 2, 9, 5, 4, 11, 6])
    for kw in (dict(seed=1), dict(seed=1, offset_seed=3), dict(seed=None, split=False), dict(seed=2, order_seed=1)):
        it = BatchIterator(docs, 5, 2, pad_id=0, **kw)
        epochs = [it.epoch_rows(e) for e in range(3)]
        for rows in epochs:
            tokens = Counter(x for r in rows for x, c in zip(r.tokens.tolist(), r.seg_ids.tolist()) if c)
            assert tokens == Counter(x for d in docs for x in d)
        if "seed" in kw and kw["seed"] is not None:
            assert [r.tokens.tolist() for r in epochs[0]] != [r.tokens.tolist() for r in epochs[1]]
    # batch k of the stream is rows kB..kB+B-1 of the concatenated epochs, straddling epoch ends
    it = BatchIterator(docs, 5, 4, pad_id=0, seed=1)
    stream = it.epoch_rows(0) + it.epoch_rows(1)
    for k in range(len(stream) // 4):
        assert torch.equal(it.batch(k).tokens, torch.stack([r.tokens for r in stream[4 * k: 4 * k + 4]]))


def test_each_seed_changes_only_its_own_part():
    docs = corpus([3, 7, 2, 9, 5, 4, 11, 6])
    base = BatchIterator(docs, 6, 2, pad_id=0, seed=0).batch(0)
    assert not same(base, BatchIterator(docs, 6, 2, pad_id=0, seed=1).batch(0))
    assert not same(base, BatchIterator(docs, 6, 2, pad_id=0, seed=0, offset_seed=1).batch(0))
    assert not same(base, BatchIterator(docs, 6, 2, pad_id=0, seed=0, order_seed=1).batch(0))
    with pytest.raises(ValueError, match="needs split=True"):
        BatchIterator(docs, 6, 2, pad_id=0, split=False, offset_seed=1)
    with pytest.raises(ValueError, match="batch_size"):
        BatchIterator(docs, 6, 0, pad_id=0)
    with pytest.raises(ValueError, match="context length"):
        BatchIterator(docs, 1, 2, pad_id=0)


def test_packed_row_matches_documents_alone(tiny_lm):
    """The contract with DecoderLM: with seg_ids, each packed document sees only itself (RoPE)."""
    model = tiny_lm(pos="rope")
    a, b = [3, 4, 5], [6, 7, 8, 9]
    batch = PackedBatch.from_records(pack_documents([a, b], 8, pad_id=0), pad_id=0)
    with torch.no_grad():
        packed = model(batch.tokens, seg_ids=batch.seg_ids)[0]
        alone_a = model(torch.tensor([a]))[0]
        alone_b = model(torch.tensor([b]))[0]
    torch.testing.assert_close(packed[:3], alone_a, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(packed[3:7], alone_b, rtol=1e-5, atol=1e-6)


def test_absolute_positions_need_the_reset(tiny_lm):
    """With learned absolute positions, B inside the row equals B alone only if positions restart (001A)."""
    model = tiny_lm(pos="learned")
    a, b = [3, 4, 5], [6, 7, 8, 9]
    batch = PackedBatch.from_records(pack_documents([a, b], 7, pad_id=0), pad_id=0)
    with torch.no_grad():
        alone_b = model(torch.tensor([b]))[0]
        reset = model(batch.tokens, seg_ids=batch.seg_ids)[0, 3:]
        no_reset = model(batch.tokens, seg_ids=batch.seg_ids, positions=torch.arange(7).unsqueeze(0))[0, 3:]
    torch.testing.assert_close(reset, alone_b, rtol=1e-5, atol=1e-6)
    assert (no_reset - alone_b).abs().max() > 1e-3


def test_changing_document_a_leaves_b_bitwise_unchanged(tiny_lm):
    """ftip-001D: under the document mask, B's outputs do not depend on A's tokens."""
    model = tiny_lm()
    rows = [PackedBatch.from_records(pack_documents([a, [6, 7]], 5, pad_id=0), pad_id=0) for a in ([3, 4, 5], [9, 1, 2])]
    with torch.no_grad():
        out = [model(r.tokens, seg_ids=r.seg_ids)[0] for r in rows]
    assert torch.equal(out[0][3:], out[1][3:]) and not torch.equal(out[0][:3], out[1][:3])
