"""The pretraining loss: masked token NLL, empirical and population objectives, minibatch gradients
(ftip-001B, ftip-001C, ftip-001E, ftip-006L, ftip-001G).

The book's normalization (ftip-006L) is **per predicted token**: total masked NLL divided by the
number of predicted tokens, over a batch (``minibatch_loss``), a finite sample of records
(``empirical_objective``) or, as a ratio of expectations, a finite law of records
(``population_objective``). Other conventions exist (:data:`NORMALIZATIONS`) and give other
numbers and gradients; they are provided only to be compared with it.

Inputs follow the :class:`~ftipbook.data.windows.PackedBatch` contract: the logit at position
``t`` predicts ``targets[:, t]`` and counts where ``loss_mask[:, t]``.
"""
from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import torch
import torch.nn.functional as F
from torch import nn

from ftipbook.data.windows import PackedBatch, PackedRecord

#: Ways to reduce token losses to one number. ``"token"`` is the book's (sum / number of
#: predicted tokens); ``"record"`` is the mean over records of each record's per-token mean;
#: ``"sum"`` is the plain sum, which weights records by their length.
NORMALIZATIONS = ("token", "record", "sum")


def _as_batch(data: PackedBatch | PackedRecord | Sequence[PackedRecord], pad_id: int = 0) -> PackedBatch:
    if isinstance(data, PackedBatch):
        return data
    if isinstance(data, PackedRecord):
        data = [data]
    return PackedBatch.from_records(list(data), pad_id=pad_id)


def masked_token_nll(logits: torch.Tensor, batch: PackedBatch) -> torch.Tensor:
    """``l_t = -m log pi(target | prefix)`` per position, ``[B, T]`` (ftip-001B); exactly 0 where masked.

    Computed in float32, or float64 for float64 logits.
    """
    if logits.dim() != 3 or logits.shape[:2] != batch.tokens.shape:
        raise ValueError(f"logits must be [B, T, V] with [B, T] = {tuple(batch.tokens.shape)}, got {tuple(logits.shape)}")
    logits = logits if logits.dtype == torch.float64 else logits.float()
    nll = F.cross_entropy(logits.transpose(1, 2), batch.targets, reduction="none")
    return torch.where(batch.loss_mask, nll, torch.zeros_like(nll))


def token_losses(model: nn.Module, batch: PackedBatch, *, doc_mask: bool = True) -> torch.Tensor:
    """Masked token NLL of ``model`` on ``batch``, ``[B, T]``.

    With ``doc_mask=True`` the model attends under the record's document mask (``seg_ids``);
    ``False`` runs it with the plain causal mask, letting packed documents see each other.
    """
    logits = model(batch.tokens, seg_ids=batch.seg_ids) if doc_mask else model(batch.tokens)
    return masked_token_nll(logits, batch)


def reduce_token_losses(losses: torch.Tensor, mask: torch.Tensor, convention: str = "token") -> torch.Tensor:
    """Reduce ``[B, T]`` token losses with one of :data:`NORMALIZATIONS` (``"token"`` is the book's)."""
    if convention not in NORMALIZATIONS:
        raise ValueError(f"convention must be one of {NORMALIZATIONS}, got {convention!r}")
    counts = mask.sum(dim=-1)
    if int(counts.sum()) == 0:
        raise ValueError("no predicted token: the objective is undefined (needs sum of m > 0)")
    losses = torch.where(mask, losses, torch.zeros_like(losses))
    if convention == "sum":
        return losses.sum()
    if convention == "token":
        return losses.sum() / counts.sum()
    scored = counts > 0
    return (losses.sum(dim=-1)[scored] / counts[scored]).mean()


def minibatch_loss(model: nn.Module, batch: PackedBatch, *, num_predicted: int | None = None) -> torch.Tensor:
    """``(1 / N_k) sum_t l_t`` over a batch: the per-predicted-token loss whose gradient is ``g_k`` (ftip-001G).

    ``num_predicted`` overrides ``N_k`` (the batch's own count by default): a data-parallel
    worker holding one shard passes the global batch's count, so the workers' gradients add up
    to the single-process gradient.
    """
    n = batch.num_predicted if num_predicted is None else num_predicted
    if not isinstance(n, int) or n <= 0:
        raise ValueError(f"the number of predicted tokens must be a positive int, got {n!r}")
    return token_losses(model, batch).sum() / n


def empirical_objective(model: nn.Module, data: PackedBatch | Sequence[PackedRecord] | Sequence[PackedBatch],
                        *, pad_id: int = 0) -> torch.Tensor:
    """``L_N``: total masked NLL over a finite sample of records / their number of predicted tokens (ftip-001E).

    ``data`` is one batch, a list of records, or a list of batches (their sums and counts are added).
    """
    batches = data if isinstance(data, Sequence) and data and isinstance(data[0], PackedBatch) else [_as_batch(data, pad_id)]
    total = sum(token_losses(model, b).sum() for b in batches)
    count = sum(b.num_predicted for b in batches)
    if count == 0:
        raise ValueError("L_N is undefined: the sample has no unmasked target token")
    return total / count


def population_objective(model: nn.Module, law: Sequence[tuple[PackedRecord, float | Fraction]], *,
                         pad_id: int = 0) -> torch.Tensor:
    """``L_pop = E[sum_t l_t] / E[sum_t m_t]`` for a finite law ``[(record, probability), ...]`` (ftip-001C).

    A ratio of expectations, not the expectation of per-record ratios.
    """
    if not law:
        raise ValueError("the law of records is empty")
    probs = [p for _, p in law]
    if any(p < 0 for p in probs) or abs(float(sum(probs)) - 1) > 1e-9:
        raise ValueError(f"record probabilities must be >= 0 and sum to 1, got sum {sum(probs)}")
    expected_loss = sum(float(p) * token_losses(model, _as_batch(r, pad_id)).sum() for r, p in law)
    expected_count = sum(float(p) * r.num_predicted for r, p in law)
    if expected_count <= 0:
        raise ValueError("L_pop needs a positive expected number of predicted tokens")
    return expected_loss / expected_count


def flat_grad(loss: torch.Tensor, params: Sequence[torch.Tensor]) -> torch.Tensor:
    """``grad(loss)`` with respect to ``params``, flattened into one vector (zeros for unused parameters)."""
    params = list(params)
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    return torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1) for p, g in zip(params, grads)])


def minibatch_gradient(model: nn.Module, batch: PackedBatch, *, num_predicted: int | None = None) -> torch.Tensor:
    """``g_k = (1 / N_k) sum grad l_t`` as one flat vector (ftip-001G)."""
    params = [p for p in model.parameters() if p.requires_grad]
    return flat_grad(minibatch_loss(model, batch, num_predicted=num_predicted), params)
