"""The hand-set recall probe: exact below the state width, rank-limited above it, attention exact throughout."""
import pytest
import torch

from ftipbook.eval.recall_probe import probe_keys, recall_probe


@pytest.mark.parametrize("d_k", [4, 8])
def test_delta_rule_exact_up_to_d_k_and_linear_states_fail_beyond(d_k):
    for n in range(1, 3 * d_k + 1):
        r = recall_probe(n, d_k, seed=n)
        assert r.attention < 1e-4  # exact up to the residual weight exp(-sharpness * (1 - cos)) of near-duplicate keys
        if n <= d_k:
            assert r.delta_rule < 1e-20 and r.best_linear_state < 1e-20
        else:
            # no d_k x d_k state can recall more than d_k generic pairs; the delta rule is no better than the best one
            assert r.best_linear_state > 1e-3 and r.delta_rule >= r.best_linear_state - 1e-12


def test_keys_are_unit_and_orthonormal_while_they_fit():
    g = torch.Generator().manual_seed(0)
    k = probe_keys(5, 8, g)
    assert torch.allclose(k @ k.T, torch.eye(5, dtype=torch.float64), atol=1e-12)
    k = probe_keys(12, 8, g)
    assert torch.allclose(k.norm(dim=-1), torch.ones(12, dtype=torch.float64), atol=1e-12)


def test_a_blunt_softmax_blurs_recall_and_bad_input_is_refused():
    assert recall_probe(16, 8, sharpness=1.0).attention > 0.1
    with pytest.raises(ValueError):
        recall_probe(0, 8)
    with pytest.raises(ValueError):
        recall_probe(4, 8, sharpness=0.0)


def test_exact_match_ties_up_to_d_k_and_separates_beyond():
    from ftipbook.eval.recall_probe import recall_exact_match

    for n in (3, 8):
        r = recall_exact_match(n, 8, n_labels=16, seed=n)
        assert r.correct == {"delta_rule": n, "attention": n} and r.delta_rule == r.labels
    long = [recall_exact_match(24, 8, n_labels=16, seed=s) for s in range(3)]
    assert all(r.correct["attention"] == 24 for r in long)
    assert sum(r.correct["delta_rule"] for r in long) < 3 * 24


def test_exact_match_refuses_bad_sizes():
    from ftipbook.eval.recall_probe import recall_exact_match

    for kwargs, match in (({"n_labels": 1}, "n_labels"), ({"n_labels": 4, "sharpness": 0.0}, "sharpness")):
        with pytest.raises(ValueError, match=match):
            recall_exact_match(4, 8, **kwargs)
    with pytest.raises(ValueError, match="n_pairs"):
        recall_exact_match(0, 8, n_labels=4)
