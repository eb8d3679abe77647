"""Masked token NLL and the objectives (ftip-001B, 001C, 001E, 006L, 001G, 001F)."""
import itertools
import math
from fractions import Fraction

import pytest
import torch
import torch.nn.functional as F

from ftipbook.data.objective import (
    empirical_objective,
    flat_grad,
    masked_token_nll,
    minibatch_gradient,
    minibatch_loss,
    population_objective,
    reduce_token_losses,
    token_losses,
)
from ftipbook.data.windows import PackedBatch, pack_documents


def records(lengths, t, vocab=40, seed=0, split=False):
    g = torch.Generator().manual_seed(seed)
    docs = [torch.randint(1, vocab, (n,), generator=g).tolist() for n in lengths]
    return pack_documents(docs, t, pad_id=0, split=split)


def test_masked_nll_matches_manual_log_softmax(tiny_lm):
    model = tiny_lm(dtype=torch.float64)
    batch = PackedBatch.from_records(records([3, 4, 2, 6], 8), pad_id=0)
    logits = model(batch.tokens, seg_ids=batch.seg_ids)
    nll = masked_token_nll(logits, batch)
    for b in range(batch.tokens.shape[0]):
        for t in range(8):
            if batch.loss_mask[b, t]:
                manual = -torch.log_softmax(logits[b, t], -1)[batch.targets[b, t]]
                assert torch.allclose(nll[b, t], manual)
            else:
                assert nll[b, t].item() == 0.0
    # per-predicted-token average = cross-entropy with ignore_index over the unmasked targets
    ignored = torch.where(batch.loss_mask, batch.targets, torch.full_like(batch.targets, -100))
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ignored.reshape(-1), ignore_index=-100)
    assert torch.allclose(minibatch_loss(model, batch), ce)
    assert torch.allclose(empirical_objective(model, batch), ce)
    with pytest.raises(ValueError, match="logits must be"):
        masked_token_nll(logits[:, :4], batch)


def test_document_mask_matters_only_after_the_first_segment(tiny_lm):
    model = tiny_lm(dtype=torch.float64, pos="rope")
    batch = PackedBatch.from_records(pack_documents([[3, 4, 5, 6], [7, 8, 9]], 7, pad_id=0), pad_id=0)
    with torch.no_grad():
        isolated = token_losses(model, batch)
        leaky = token_losses(model, batch, doc_mask=False)
    assert torch.allclose(isolated[0, :3], leaky[0, :3])  # segment 1: same prefix either way
    assert not torch.allclose(isolated[0, 4:6], leaky[0, 4:6])  # segment 2 sees segment 1 without the mask


def test_empirical_objective_weights_and_order(tiny_lm):
    model = tiny_lm(dtype=torch.float64)
    recs = records([5, 3, 7, 2, 6, 4, 8, 3], 8)
    with torch.no_grad():
        base = empirical_objective(model, recs)
        shuffled = empirical_objective(model, recs[::-1])
        duplicated = empirical_objective(model, recs + recs[:1])
        per_batch = empirical_objective(model, [PackedBatch.from_records(recs[:3], pad_id=0),
                                                 PackedBatch.from_records(recs[3:], pad_id=0)])
    assert torch.allclose(base, shuffled) and torch.allclose(base, per_batch)
    assert not torch.allclose(base, duplicated)
    with pytest.raises(ValueError, match="no unmasked target"):
        empirical_objective(model, pack_documents([[1], [2]], 4, pad_id=0, split=False))


def test_three_normalizations_differ_on_unequal_lengths():
    losses = torch.tensor([[0.0, 1.0, 2.0, 3.0], [0.0, 5.0, 0.0, 0.0]])
    mask = torch.tensor([[False, True, True, True], [False, True, False, False]])
    assert reduce_token_losses(losses, mask, "token").item() == pytest.approx(11 / 4)
    assert reduce_token_losses(losses, mask, "record").item() == pytest.approx((2 + 5) / 2)
    assert reduce_token_losses(losses, mask, "sum").item() == pytest.approx(11)
    with pytest.raises(ValueError, match="convention"):
        reduce_token_losses(losses, mask, "mean")
    with pytest.raises(ValueError, match="no predicted token"):
        reduce_token_losses(losses, torch.zeros_like(mask))


def test_population_objective_is_a_ratio_of_expectations(tiny_lm):
    model = tiny_lm(dtype=torch.float64)
    recs = [records([n], 8, seed=n)[0] for n in (2, 5, 8)]
    law = list(zip(recs, (Fraction(1, 2), Fraction(3, 10), Fraction(1, 5))))
    with torch.no_grad():
        sums = [token_losses(model, PackedBatch.from_records([r], pad_id=0)).sum().item() for r in recs]
        pop = population_objective(model, law).item()
    counts = [r.num_predicted for r in recs]
    assert counts == [1, 4, 7]
    ratio = sum(float(p) * s for (_, p), s in zip(law, sums)) / sum(float(p) * c for (_, p), c in zip(law, counts))
    mean_of_ratios = sum(float(p) * s / c for (_, p), s, c in zip(law, sums, counts))
    assert pop == pytest.approx(ratio, rel=1e-12) and abs(pop - mean_of_ratios) > 1e-3
    with pytest.raises(ValueError, match="sum to 1"):
        population_objective(model, [(recs[0], 0.5)])


def test_minibatch_gradient_matches_finite_differences(tiny_lm):
    model = tiny_lm(dtype=torch.float64)
    batch = PackedBatch.from_records(records([4, 6], 8), pad_id=0)
    g = minibatch_gradient(model, batch)
    params = [p for p in model.parameters()]
    assert g.shape == (sum(p.numel() for p in params),)
    flat_index = 0
    for p in params[:3]:
        for i in (0, p.numel() // 2):
            eps = 1e-6
            with torch.no_grad():
                old = p.view(-1)[i].item()
                p.view(-1)[i] = old + eps
                up = minibatch_loss(model, batch).item()
                p.view(-1)[i] = old - eps
                down = minibatch_loss(model, batch).item()
                p.view(-1)[i] = old
            assert g[flat_index + i].item() == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-8)
        flat_index += p.numel()


def test_minibatch_estimator_bias_depends_on_counts(tiny_lm):
    model = tiny_lm(dtype=torch.float64)
    equal = records([5, 5, 5, 5], 5)
    unequal = records([2, 5, 3, 5], 5)
    for recs, unbiased in ((equal, True), (unequal, False)):
        full = minibatch_gradient(model, PackedBatch.from_records(recs, pad_id=0))
        pairs = [minibatch_gradient(model, PackedBatch.from_records([recs[i], recs[j]], pad_id=0))
                 for i, j in itertools.combinations(range(4), 2)]
        bias = torch.stack(pairs).mean(0) - full
        assert (bias.norm().item() < 1e-10) == unbiased


def test_shards_with_the_global_count_add_up(tiny_lm):
    model = tiny_lm(dtype=torch.float64)
    batch = PackedBatch.from_records(records([3, 7, 2, 8], 6, split=True), pad_id=0)
    full = minibatch_gradient(model, batch)
    parts = [minibatch_gradient(model, batch.shard(r, 2), num_predicted=batch.num_predicted) for r in range(2)]
    assert torch.allclose(parts[0] + parts[1], full)
    with pytest.raises(ValueError, match="positive int"):
        minibatch_loss(model, batch, num_predicted=0)


def test_flat_grad_zeros_for_unused_parameters():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    assert flat_grad((a**2).sum(), [a, b]).tolist() == [2.0, 4.0, 0.0]


def test_two_record_example_of_001F():
    """Declared illustrative token losses: (1, 2, 3) and (4, 5, 6); then record 2 truncated to (4,)."""
    losses = torch.tensor([[0.0, 1, 2, 3], [0.0, 4, 5, 6]])
    mask = torch.tensor([[False, True, True, True]] * 2)
    full = reduce_token_losses(losses, mask).item()
    one_record = [reduce_token_losses(losses[i:i + 1], mask[i:i + 1]).item() for i in range(2)]
    assert (full, one_record, sum(one_record) / 2) == (3.5, [2.0, 5.0], 3.5)
    cut = mask.clone()
    cut[1, 2:] = False
    full_cut = reduce_token_losses(losses, cut).item()
    est = sum(reduce_token_losses(losses[i:i + 1], cut[i:i + 1]).item() for i in range(2)) / 2
    assert (full_cut, est) == (2.5, 3.0) and math.isclose(est - full_cut, 0.5)


def test_three_data_interfaces_give_three_losses(tiny_lm):
    """ftip-006K: pad per document, concatenate under the causal mask, pack under the document mask."""
    model = tiny_lm(dtype=torch.float64)
    docs = [[3, 4, 5, 6], [7, 8, 9], [10, 11, 12, 13, 14]]
    padded = PackedBatch.from_records([pack_documents([d], 5, pad_id=0)[0] for d in docs], pad_id=0)
    packed = PackedBatch.from_records(pack_documents(docs, 12, pad_id=0), pad_id=0)
    concatenated = PackedBatch(packed.tokens, packed.targets, packed.tokens.new_ones(packed.tokens.shape, dtype=torch.bool)
                               .index_fill(1, torch.tensor([11]), False), torch.ones_like(packed.seg_ids))
    with torch.no_grad():
        losses = [empirical_objective(model, b).item() for b in (padded, concatenated, packed)]
    assert padded.num_predicted == packed.num_predicted == 9 and concatenated.num_predicted == 11
    assert torch.allclose(empirical_objective(model, padded), empirical_objective(model, packed))  # same predictions, isolated
    assert abs(losses[1] - losses[2]) > 1e-4  # cross-document attention and boundary targets change it


def test_normalizations_give_different_gradients(tiny_lm):
    """ftip-006L: the same token losses, three reductions, three gradient directions."""
    model = tiny_lm(dtype=torch.float64)
    batch = PackedBatch.from_records(records([2, 5, 8], 8), pad_id=0)
    params = list(model.parameters())
    grads = {}
    for convention in ("token", "record", "sum"):
        losses = token_losses(model, batch)
        grads[convention] = flat_grad(reduce_token_losses(losses, batch.loss_mask, convention), params)
    assert torch.allclose(grads["token"], minibatch_gradient(model, batch))
    cos = torch.nn.functional.cosine_similarity
    assert cos(grads["token"], grads["sum"], dim=0) > 1 - 1e-12  # the sum is the token mean times N
    assert cos(grads["token"], grads["record"], dim=0) < 1 - 1e-6
